/* hm_cmdline.c - hpcmount's command line (the -o options of the daemon
 * and of the container), --help, the log, and what /proc/self/mountinfo
 * says of the mount point (its check, and the backing device whose
 * read-ahead is raised).
 */
#define _GNU_SOURCE       /* splice, pipe2, F_SETPIPE_SZ */
#define FUSE_USE_VERSION 312
#include "config.h"

#include <fuse_lowlevel.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "hpc_mount.h"
#include "hpc_readahead.h"
#include "hm.h"

enum { KEY_HPC, KEY_HELP, KEY_HELP_ALL, KEY_VERSION };


/* The daemon's own options; the container's are the rows of
 * hpc_formats_options_each (the core's and the readers'). */
static const struct fuse_opt hm_own_opts[] = {
    { "log=%s", offsetof(hm_args, log), 0 },
    { "max_read=%u", offsetof(hm_args, max_read), 0 },
    { "read_ahead_kb=%u", offsetof(hm_args, read_ahead_kb), 0 },
    { "zerocopy_min_kb=%u", offsetof(hm_args, zerocopy_min_kb), 0 },
    { "ra_min_kb=%u", offsetof(hm_args, ra_min_kb), 0 },
    { "ra_max_kb=%u", offsetof(hm_args, ra_max_kb), 0 },
    { "ra_threads=%u", offsetof(hm_args, ra_threads), 0 },
    { "spin_us=%u", offsetof(hm_args, spin_us), 0 },
    FUSE_OPT_KEY("-h", KEY_HELP),
    FUSE_OPT_KEY("--help", KEY_HELP),
    FUSE_OPT_KEY("--help-all", KEY_HELP_ALL),
    FUSE_OPT_KEY("-V", KEY_VERSION),
    FUSE_OPT_KEY("--version", KEY_VERSION),
    FUSE_OPT_END
};

typedef struct {
    GArray *spec;         /* struct fuse_opt */
    GPtrArray *names;     /* the strings they point to */
} hm_spec_ctx;

/* One KEY_HPC entry of fuse_opt's list per option row ("name=" for
 * options with a value). */
static int spec_row(const hpc_option_def *d, void *ctx)
{
    hm_spec_ctx *s = ctx;
    char *t = g_strconcat(d->name, d->value ? "=" : "", NULL);
    g_ptr_array_add(s->names, t);
    struct fuse_opt o = FUSE_OPT_KEY(t, KEY_HPC);
    g_array_append_val(s->spec, o);
    return 0;
}

/* fuse_opt's list: the container's options, then hm_own_opts.  names
 * keeps the strings. */
struct fuse_opt *hm_build_opt_spec(GPtrArray *names)
{
    hm_spec_ctx s = { g_array_new(FALSE, TRUE, sizeof(struct fuse_opt)), names };
    hpc_formats_options_each(spec_row, &s);
    g_array_append_vals(s.spec, hm_own_opts, G_N_ELEMENTS(hm_own_opts));
    return (struct fuse_opt *)g_array_free(s.spec, FALSE);
}

int hm_opt_proc(void *data, const char *arg, int key, struct fuse_args *outargs)
{
    (void)outargs;
    hm_args *a = data;
    switch (key) {
    case KEY_HPC:
        if (!a->error && hpc_formats_option_set(&a->opts, arg, &a->error) != HPC_OK && !a->error)
            g_set_error(&a->error, HPC_ERROR, EINVAL, "bad option '%s'", arg);
        return 0;
    case KEY_HELP:
        a->help = MAX(a->help, 1);
        return 0;
    case KEY_HELP_ALL:
        a->help = 2;
        return 0;
    case KEY_VERSION:
        a->version = 1;
        return 0;
    case FUSE_OPT_KEY_NONOPT:
        if (!a->source) {
            a->source = g_strdup(arg);
            return 0;
        }
        return 1;             /* the mount point, for fuse_parse_cmdline */
    default:
        return 1;
    }
}

/* The daemon's own tuning knobs, for --help-all. */
static void own_tuning_help(void)
{
    printf("    -o read_ahead_kb=N     kernel read-ahead of the mount (default %u)\n"
           "    -o max_read=N          largest read request in bytes (default: the largest\n"
           "                           a pipe carries, 524288 with a 1 MiB pipe-max-size)\n"
           "    -o zerocopy_min_kb=N   reads of N KiB or more that map to the source\n"
           "                           are spliced around the cache (default %u, 0: never)\n"
           "    -o ra_max_kb=N         read-ahead of the sources behind a sequential\n"
           "                           stream: largest window (default %u, 0: none)\n"
           "    -o ra_min_kb=N         its first window (default %u)\n"
           "    -o ra_threads=N        threads advising the sources (default %u)\n"
           "    -o spin_us=N           poll for the next request N us before sleeping\n"
           "                           (default 0; costs CPU, saves a wake-up per request)\n",
           READ_AHEAD_KB, HPC_FILE_VERBATIM_MIN >> 10, HPC_RA_MAX_DEFAULT >> 10, HPC_RA_MIN_DEFAULT >> 10,
           HPC_RA_THREADS_DEFAULT);
}

/* --help: the options a first mount may need; --help-all (all set) adds
 * the tuning knobs of the container and of the daemon. */
void hm_usage(const char *prog, int all)
{
    GString *opts = g_string_new(NULL);
    hpc_formats_options_help(opts, all);
    printf("usage: %s [options] SOURCE MOUNTPOINT\n\n"
           "Mount an HPC container (SIONlib, FTI, GSD, HDF5, distributed HDF, netCDF-3) read-only.\n\n"
           "hpcmount options:\n%s"
           "    -o log=FILE            append read errors to FILE\n", prog, opts->str);
    if (all)
        own_tuning_help();
    printf("\n");
    g_string_free(opts, TRUE);
}

/* The generic options that apply: libfuse's own help also lists clone_fd
 * and max_idle_threads, which hpcmount's worker loop does not use. */
void hm_fuse_options_help(int all)
{
    printf("FUSE options:\n"
           "    -f                     stay in the foreground\n"
           "    -d   -o debug          print every request (implies -f)\n"
           "    -o allow_other         allow access by all users\n"
           "    -o auto_unmount        unmount when hpcmount exits\n");
    if (all)
        printf("    -s                     one thread\n"
               "    -o max_threads=N       most worker threads (default 10)\n"
               "    -o allow_root          allow access by root\n");
    printf("    -h   --help            this help%s\n"
           "    -V   --version         the version and the formats built in\n\n"
           "Exit status: 0 mounted, 1 the container cannot be read or mounted,\n"
           "2 bad command line.\n", all ? "" : "; --help-all: every option");
}

void hm_log_line(void *ctx, const char *line)
{
    const hm_daemon *d = ctx;
    if (d->log_file) {
        time_t now = time(NULL);
        char ts[32];
        strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%S", localtime(&now));
        fprintf(d->log_file, "%s hpcmount[%d]: %s\n", ts, (int)getpid(), line);
        fflush(d->log_file);
    } else if (d->log_syslog) {
        syslog(LOG_ERR, "%s", line);
    } else {
        fprintf(stderr, "hpcmount: %s\n", line);
    }
}

/* Undo mountinfo's octal escapes (\040 for a space) in place. */
static void unescape_mountinfo(char *s)
{
    char *w = s;
    for (char *r = s; *r; r++) {
        if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' && r[2] <= '7' &&
            r[3] >= '0' && r[3] <= '7') {
            *w++ = (char)((r[1] - '0') * 64 + (r[2] - '0') * 8 + (r[3] - '0'));
            r += 3;
        } else {
            *w++ = *r;
        }
    }
    *w = '\0';
}

/* The newest mount on the canonical path real: its device numbers and
 * file system type (fstype, size n).  0 if found, -1 if not. */
static int find_mount(const char *real, unsigned *maj, unsigned *min, char *fstype, size_t n)
{
    FILE *f = fopen("/proc/self/mountinfo", "r");
    char line[8192];
    int found = -1;
    while (f && fgets(line, sizeof line, f)) {
        unsigned a, b;
        char mnt[4096], type[256];
        const char *dash = strstr(line, " - ");
        if (!dash || sscanf(line, "%*d %*d %u:%u %*s %4095s", &a, &b, mnt) != 3 ||
            sscanf(dash + 3, "%255s", type) != 1)
            continue;
        unescape_mountinfo(mnt);
        if (strcmp(mnt, real) != 0)
            continue;
        *maj = a;
        *min = b;
        g_strlcpy(fstype, type, n);
        found = 0;             /* the last match is the newest mount */
    }
    if (f)
        fclose(f);
    return found;
}

/* Refuse a mount point that is not a directory, or that already carries an
 * hpcmount mount (a second one would silently hide the first).  One line. */
int hm_check_mountpoint(const char *mountpoint)
{
    struct stat st;
    char fstype[256];
    unsigned maj, min;
    char *real = realpath(mountpoint, NULL);
    if (!real) {
        fprintf(stderr, "hpcmount: %s: bad mount point: %s\n", mountpoint, strerror(errno));
        return -1;
    }
    int bad = find_mount(real, &maj, &min, fstype, sizeof fstype) == 0 &&
              strcmp(fstype, "fuse.hpcmount") == 0;
    free(real);
    if (bad) {
        fprintf(stderr, "hpcmount: %s: already an hpcmount mount (unmount it first)\n", mountpoint);
        return -1;
    }
    int e = stat(mountpoint, &st) != 0 ? errno : 0;
    if (e || !S_ISDIR(st.st_mode)) {
        fprintf(stderr, "hpcmount: %s: bad mount point: %s\n", mountpoint,
                e ? strerror(e) : "not a directory");
        return -1;
    }
    return 0;
}

/* READs up to this size get zero-copy replies: the reply, its header and a
 * page per extent must fit into one pipe twice (ours, then libfuse's), and
 * without CAP_SYS_RESOURCE no pipe grows past fs.pipe-max-size (1 MiB by
 * default).  A 1 MiB READ needed a 2 MiB pipe, so every one of them was
 * copied through the block cache instead.  The largest power of two that
 * fits, at most libfuse's 1 MiB buffer, at least 128 KiB. */
unsigned hm_default_max_read(void)
{
    unsigned long pipe_max = 1u << 20;
    FILE *f = fopen("/proc/sys/fs/pipe-max-size", "r");
    if (f) {
        if (fscanf(f, "%lu", &pipe_max) != 1)
            pipe_max = 1u << 20;
        fclose(f);
    }
    unsigned size = 1u << 20;
    while (size > (128u << 10) && size + 4 * ZC_PAGE > pipe_max)
        size >>= 1;
    return size;
}

/* Where the read-ahead of the mount's backing device will be raised: the
 * kernel's default (128 KiB) caps sequential reads of large files far below
 * what the source can deliver.  Found through mountinfo, not stat(), which
 * would wait on this very daemon. */
void hm_find_read_ahead(const char *mountpoint, unsigned kb, hm_bdi_ra *ra)
{
    char *real = realpath(mountpoint, NULL);
    char fstype[256];
    unsigned maj = 0, min = 0;
    int found = real && find_mount(real, &maj, &min, fstype, sizeof fstype) == 0;
    free(real);
    if (!found)
        return;
    g_snprintf(ra->path, sizeof ra->path, "/sys/class/bdi/%u:%u/read_ahead_kb", maj, min);
    ra->kb = kb;
}
