/* fuzz_common.h - what every format's libFuzzer harness shares.
 *
 * hpc_fuzz_container() writes the input to an in-memory file, opens it as a
 * container of the given format and, if that succeeds, walks the whole tree:
 * every directory listed, every file read in full (bounded), every xattr and
 * the .info text fetched.  A harness is then one line:
 *
 *   int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
 *   { return hpc_fuzz_container("sion", d, n); }
 */
#ifndef HPC_FUZZ_COMMON_H
#define HPC_FUZZ_COMMON_H

#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "hpc_container.h"

#define FUZZ_MAX_NODES 4096
#define FUZZ_MAX_READ (1u << 20)

typedef struct fuzz_walk {
    hpc_container *c;
    unsigned nodes;
    hpc_ino stack[256];
    unsigned depth;
} fuzz_walk;

static int fuzz_visit(void *p, const char *name, const hpc_stat *st, uint64_t next)
{
    (void)next;
    fuzz_walk *w = p;
    if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0 || ++w->nodes > FUZZ_MAX_NODES)
        return w->nodes > FUZZ_MAX_NODES;
    hpc_stat again;
    hpc_container_lookup(w->c, w->stack[w->depth], name, &again);
    GString *names = g_string_new(NULL);
    hpc_container_listxattr(w->c, st->ino, names);
    for (const char *x = names->str; x < names->str + names->len; x += strlen(x) + 1) {
        void *v = NULL;
        size_t len;
        if (hpc_container_getxattr(w->c, st->ino, x, &v, &len) == HPC_OK)
            g_free(v);
    }
    g_string_free(names, TRUE);
    if (S_ISDIR(st->mode) && w->depth + 1 < G_N_ELEMENTS(w->stack)) {
        w->stack[++w->depth] = st->ino;
        hpc_container_readdir(w->c, st->ino, 0, fuzz_visit, w);
        w->depth--;
    } else if (S_ISREG(st->mode)) {
        static char buf[65536];
        size_t got;
        for (uint64_t off = 0; off < st->size && off < FUZZ_MAX_READ; off += sizeof buf)
            if (hpc_container_read(w->c, st->ino, buf, sizeof buf, off, &got) != HPC_OK)
                break;
        hpc_container_read(w->c, st->ino, buf, 7, st->size > 3 ? st->size - 3 : 0, &got);
    } else if (S_ISLNK(st->mode)) {
        char *t = NULL;
        hpc_container_readlink(w->c, st->ino, &t);
        g_free(t);
    }
    return 0;
}

/** Open data as a container of `format` (through /proc/self/fd of a memfd,
 *  so readers that derive member names see a plain path) with the
 *  comma-separated hpcmount options `options` (NULL: none), walk it, close
 *  it.  Always returns 0, as libFuzzer wants. */
static inline int hpc_fuzz_container_with(const char *format, const char *options,
                                          const uint8_t *data, size_t size)
{
    int fd = memfd_create("fuzz", MFD_CLOEXEC);
    if (fd < 0 || (size && write(fd, data, size) != (ssize_t)size)) {
        if (fd >= 0)
            close(fd);
        return 0;
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    hpc_options opts;
    hpc_options_init(&opts);
    gchar **set = g_strsplit(options ? options : "", ",", -1);
    for (gchar **o = set; *o; o++)
        if (**o)
            hpc_formats_option_set(&opts, *o, NULL);
    g_strfreev(set);
    opts.format = g_strdup(format);
    opts.cache_size = 1 << 20;
    opts.inproc = 1;       /* fuzz the readers in this process, no helper */
    hpc_container *c = NULL;
    GError *err = NULL;
    if (hpc_container_open(path, &opts, &c, &err) == HPC_OK) {
        fuzz_walk w = { .c = c };
        w.stack[0] = HPC_INO_ROOT;
        hpc_container_readdir(c, HPC_INO_ROOT, 0, fuzz_visit, &w);
        hpc_container_close(c);
    }
    g_clear_error(&err);
    hpc_options_clear(&opts);
    close(fd);
    return 0;
}

/** hpc_fuzz_container_with, no options. */
static inline int hpc_fuzz_container(const char *format, const uint8_t *data, size_t size)
{
    return hpc_fuzz_container_with(format, NULL, data, size);
}

#endif
