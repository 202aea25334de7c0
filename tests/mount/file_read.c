/* file_read.c - a file of a container read through libhpcmount's open
 * files, for tests/mount/file_api.sh to compare with the mount.
 *
 * usage: file_read SOURCE PATH PIECE,... the bytes, read in PIECE-byte
 *                                        reads by THREADS=4 threads at once,
 *                                        once per piece size given (exit 1
 *                                        when two of them differ)
 *        file_read SOURCE PATH extents   the bytes at its extents, read
 *                                        from the source files ("computed"
 *                                        on stderr, exit 3, when none)
 *        file_read SOURCE PATH error     the HPCMOUNT_E_ code of the open
 *                                        (0 when it opens) on stdout
 * Writes the bytes to stdout; exit 1 with one line on stderr on a failure.
 *
 *        file_read -m MOUNT SOURCE PIECE,...
 *            every path of stdin (NUL-terminated, from the container's
 *            root) read in each piece size and at its extents, compared
 *            with the bytes read() gives of MOUNT/PATH: one line on stderr
 *            per file that differs (exit 1), "N files, E by extents" on
 *            stdout.  One process and one open of the container for all
 *            the files, as a program using the library would have it.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hpcmount.h"

#define THREADS 4

typedef struct job {
    hpcmount_file *f;
    unsigned char *out;
    uint64_t size, piece;
    unsigned first;
    int rc;
} job;

/* Pieces first, first + THREADS, ... of the file into out. */
static void *reader(void *p)
{
    job *j = p;
    for (uint64_t off = j->first * j->piece; off < j->size; off += THREADS * j->piece) {
        size_t want = j->size - off < j->piece ? (size_t)(j->size - off) : (size_t)j->piece;
        size_t n = 0;
        j->rc = hpcmount_file_read(j->f, j->out + off, want, off, &n);
        if (j->rc == HPCMOUNT_OK && n != want)
            j->rc = HPCMOUNT_E_IO;     /* short before the end of the file */
        if (j->rc != HPCMOUNT_OK)
            break;
    }
    return NULL;
}

static int read_pieces(hpcmount_file *f, uint64_t size, uint64_t piece, unsigned char *out)
{
    pthread_t t[THREADS];
    job j[THREADS];
    for (unsigned i = 0; i < THREADS; i++) {
        j[i] = (job){ f, out, size, piece, i, HPCMOUNT_OK };
        pthread_create(&t[i], NULL, reader, &j[i]);
    }
    int rc = HPCMOUNT_OK;
    for (unsigned i = 0; i < THREADS; i++) {
        pthread_join(t[i], NULL);
        if (j[i].rc != HPCMOUNT_OK)
            rc = j[i].rc;
    }
    /* past the end: nothing, and no error */
    size_t n = 1;
    unsigned char b;
    if (rc == HPCMOUNT_OK && (hpcmount_file_read(f, &b, 1, size, &n) != HPCMOUNT_OK || n != 0))
        rc = HPCMOUNT_E_IO;
    return rc;
}

/* The bytes at the file's extents, read from the source files. */
static int read_extents(hpcmount_file *f, uint64_t size, unsigned char *out)
{
    hpcmount_extent *ext;
    size_t n;
    uint64_t pos = 0;
    int rc = hpcmount_file_extents(f, &ext, &n);
    if (rc != HPCMOUNT_OK)
        return rc;
    for (size_t i = 0; rc == HPCMOUNT_OK && i < n; i++) {
        int fd = open(ext[i].path, O_RDONLY);
        if (fd < 0 || pos + ext[i].length > size ||
            pread(fd, out + pos, ext[i].length, (off_t)ext[i].offset) != (ssize_t)ext[i].length)
            rc = HPCMOUNT_E_IO;
        if (fd >= 0)
            close(fd);
        pos += ext[i].length;
    }
    hpcmount_extents_free(ext, n);
    return rc == HPCMOUNT_OK && pos != size ? HPCMOUNT_E_IO : rc;
}

/* read_pieces once per size of the comma-separated list; every read must
 * give the first one's bytes. */
static int read_each(hpcmount_file *f, uint64_t size, const char *list, unsigned char *out)
{
    unsigned char *again = calloc(size + 1, 1);
    char *end;
    int rc = read_pieces(f, size, strtoull(list, &end, 0), out);
    while (rc == HPCMOUNT_OK && *end == ',') {
        rc = read_pieces(f, size, strtoull(end + 1, &end, 0), again);
        if (rc == HPCMOUNT_OK && memcmp(out, again, size) != 0) {
            fprintf(stderr, "file_read: pieces of %s: other bytes\n", list);
            rc = HPCMOUNT_E_IO;
        }
    }
    free(again);
    return rc;
}

/* The whole of the file at path into a buffer of *size (+1) bytes. */
static unsigned char *slurp(const char *path, uint64_t *size)
{
    int fd = open(path, O_RDONLY);
    size_t cap = 1 << 16, n = 0;
    unsigned char *b = fd < 0 ? NULL : malloc(cap + 1);
    ssize_t r = 1;
    while (b && r > 0) {
        if (n == cap)
            b = realloc(b, (cap *= 2) + 1);
        r = b ? read(fd, b + n, cap - n) : -1;
        n += r > 0 ? (size_t)r : 0;
    }
    if (fd >= 0)
        close(fd);
    if (r < 0) {
        free(b);
        return NULL;
    }
    *size = n;
    return b;
}

/* One file of the container every way: 0 when each read gave want's
 * bytes, 1 when its extents did too, -1 (a line on stderr) when not. */
static int check_file(hpcmount *m, const char *path, const char *list,
                      const unsigned char *want, uint64_t size)
{
    hpcmount_file *f = NULL;
    hpcmount_stat st;
    int rc = hpcmount_file_open(m, path, &f);
    if (rc == HPCMOUNT_OK)
        rc = hpcmount_file_stat(f, &st);
    if (rc == HPCMOUNT_OK && st.size != size) {
        fprintf(stderr, "%s: %llu bytes, the mount's %llu\n", path,
                (unsigned long long)st.size, (unsigned long long)size);
        hpcmount_file_close(f);
        return -1;
    }
    unsigned char *got = rc == HPCMOUNT_OK ? calloc(size + 1, 1) : NULL;
    if (rc == HPCMOUNT_OK)
        rc = read_each(f, size, list, got);
    if (rc == HPCMOUNT_OK && memcmp(got, want, size) != 0)
        rc = HPCMOUNT_E_IO;
    int ext = 0;
    if (rc == HPCMOUNT_OK) {
        memset(got, 0, size);
        ext = read_extents(f, size, got);
        if (ext == HPCMOUNT_OK && memcmp(got, want, size) != 0)
            ext = HPCMOUNT_E_IO;
    }
    if (rc != HPCMOUNT_OK)
        fprintf(stderr, "%s: pieces of %s: not the mount's bytes (%s)\n", path, list,
                hpcmount_strerror(rc));
    else if (ext != HPCMOUNT_OK && ext != HPCMOUNT_E_NOTSUP)
        fprintf(stderr, "%s: extents: not the mount's bytes (%s)\n", path, hpcmount_strerror(ext));
    free(got);
    if (f)
        hpcmount_file_close(f);
    return rc != HPCMOUNT_OK || (ext != HPCMOUNT_OK && ext != HPCMOUNT_E_NOTSUP) ? -1 : ext == HPCMOUNT_OK;
}

/* -m MOUNT SOURCE PIECES: every path of stdin checked against the mount. */
static int check_all(const char *mnt, const char *source, const char *list)
{
    hpcmount *m;
    char *path = NULL;
    size_t cap = 0;
    unsigned files = 0, ext = 0, bad = 0;
    if (hpcmount_open(source, NULL, &m) != HPCMOUNT_OK) {
        fprintf(stderr, "file_read: %s\n", hpcmount_last_error());
        return 1;
    }
    while (getdelim(&path, &cap, '\0', stdin) > 0) {
        char *full = malloc(strlen(mnt) + strlen(path) + 1);
        uint64_t size = 0;
        unsigned char *want = full ? slurp(strcat(strcpy(full, mnt), path), &size) : NULL;
        int r = want ? check_file(m, path, list, want, size) : -1;
        if (!want)
            fprintf(stderr, "%s: not read on the mount\n", path);
        files++;
        ext += r == 1;
        bad += r < 0;
        free(want);
        free(full);
    }
    free(path);
    hpcmount_close(m);
    printf("%u files, %u by extents\n", files, ext);
    return bad ? 1 : 0;
}

int main(int argc, char **argv)
{
    hpcmount *m;
    hpcmount_file *f;
    hpcmount_stat st;
    if (argc == 5 && strcmp(argv[1], "-m") == 0)
        return check_all(argv[2], argv[3], argv[4]);
    if (argc != 4) {
        fprintf(stderr, "usage: file_read SOURCE PATH PIECE|extents|error\n");
        return 2;
    }
    if (hpcmount_open(argv[1], NULL, &m) != HPCMOUNT_OK) {
        fprintf(stderr, "file_read: %s\n", hpcmount_last_error());
        return 1;
    }
    int rc = hpcmount_file_open(m, argv[2], &f);
    if (strcmp(argv[3], "error") == 0) {
        printf("%d\n", rc);
        hpcmount_file_close(f);
        hpcmount_close(m);
        return 0;
    }
    if (rc == HPCMOUNT_OK)
        rc = hpcmount_file_stat(f, &st);
    unsigned char *out = rc == HPCMOUNT_OK ? calloc(st.size + 1, 1) : NULL;
    if (rc == HPCMOUNT_OK && strcmp(argv[3], "extents") == 0)
        rc = read_extents(f, st.size, out);
    else if (rc == HPCMOUNT_OK)
        rc = read_each(f, st.size, argv[3], out);
    if (rc == HPCMOUNT_OK)
        fwrite(out, 1, st.size, stdout);
    else if (rc == HPCMOUNT_E_NOTSUP)
        fprintf(stderr, "computed\n");
    else
        fprintf(stderr, "file_read: %s: %s\n", argv[2], hpcmount_last_error());
    free(out);
    hpcmount_file_close(f);
    hpcmount_close(m);
    return rc == HPCMOUNT_OK ? 0 : rc == HPCMOUNT_E_NOTSUP ? 3 : 1;
}
