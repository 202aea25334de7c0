/* fti_discover.c - finding an FTI tree's files: checkpoint file names,
 * the directory walk (also the format probe), config.fti and Topology.fti
 * below or above SOURCE.  See docs/fti.md. */
#include "fti.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Parse a decimal number at *p (no sign, at most 9 digits). */
static int eat_num(const char **p, int32_t *v)
{
    const char *s = *p;
    int32_t n = 0;
    int digits = 0;
    /* at most 9 digits are added up: a 10th would overflow int32_t */
    while (g_ascii_isdigit(*s) && digits < 9) {
        n = n * 10 + (*s - '0');
        s++;
        digits++;
    }
    if (digits == 0 || g_ascii_isdigit(*s))
        return 0;
    *p = s;
    *v = n;
    return 1;
}

int fti_parse_name(const char *name, fti_kind *kind, int32_t *ckpt, int32_t *rank)
{
    const char *p = name;
    *ckpt = -1;
    if (g_str_has_prefix(p, "dCPFile-Rank")) {
        p += 12;
        *kind = FTI_K_DCP;
    } else {
        if (!g_str_has_prefix(p, "Ckpt"))
            return 0;
        p += 4;
        if (!eat_num(&p, ckpt) || *p++ != '-')
            return 0;
        if (g_str_has_prefix(p, "Rank"))
            *kind = FTI_K_RANK;
        else if (g_str_has_prefix(p, "Pcof"))
            *kind = FTI_K_PCOF;
        else if (g_str_has_prefix(p, "RSed"))
            *kind = FTI_K_RSED;
        else
            return 0;
        p += 4;
    }
    return eat_num(&p, rank) && strcmp(p, ".fti") == 0;
}

/* Files below dir whose names are FTI checkpoint files (not recursive). */
static unsigned count_ckpt_files(const char *dir)
{
    GDir *d = g_dir_open(dir, 0, NULL);
    const char *name;
    unsigned n = 0;
    fti_kind kind;
    int32_t ck, rk;
    while (d && (name = g_dir_read_name(d)) && n < FTI_PROBE_MAX)
        n += fti_parse_name(name, &kind, &ck, &rk);
    if (d)
        g_dir_close(d);
    return n;
}

/* FTI writes a checkpoint into <execId>/tmp (local or global) and renames
 * it to l1..l4 once it is complete: a "tmp" beside those directories holds
 * a checkpoint being written, or abandoned by a crash, never a committed
 * one. */
static int staging_dir(const char *parent, const char *name)
{
    static const char *const done[] = { "l1", "l2", "l3", "l4", "dCP" };
    if (strcmp(name, "tmp") != 0)
        return 0;
    for (unsigned i = 0; i < G_N_ELEMENTS(done); i++) {
        char *p = g_build_filename(parent, done[i], NULL);
        int is = g_file_test(p, G_FILE_TEST_IS_DIR);
        g_free(p);
        if (is)
            return 1;
    }
    return 0;
}

/* A staging directory met by the walk: counted, not entered. */
static void skip_staging(fti_walk_ctx *w, const char *path)
{
    unsigned n = count_ckpt_files(path);
    w->staged += n;
    if (n && !w->staged_dir)
        w->staged_dir = g_strdup(path);
}

/* walk_entry: one entry NAME of DIR: a checkpoint file, config.fti or
 * Topology.fti kept, a directory walked, a staging directory counted */
static void walk_entry(fti_walk_ctx *w, const char *dir, const char *name, int depth)
{
    char *p = g_build_filename(dir, name, NULL);
    struct stat st;
    fti_kind kind;
    int32_t ck, rk;
    if (lstat(p, &st) != 0)
        goto out;
    if (S_ISDIR(st.st_mode) && staging_dir(dir, name)) {
        skip_staging(w, p);
    } else if (S_ISDIR(st.st_mode)) {
        if (depth < FTI_WALK_DEPTH && !(w->stop_at_first && w->found->len))
            fti_walk(w, p, depth + 1);
    } else if (!S_ISREG(st.st_mode)) {
        goto out;
    } else if (fti_parse_name(name, &kind, &ck, &rk)) {
        if (rk <= FTI_MAX_RANK) {
            fti_found x = { kind, ck, rk, p };
            g_array_append_val(w->found, x);
            p = NULL;
        }
    } else if (strcmp(name, "config.fti") == 0 && !w->config) {
        w->config = p;
        p = NULL;
    } else if (strcmp(name, "Topology.fti") == 0 && !w->topology) {
        w->topology = p;
        p = NULL;
    }
out:
    g_free(p);
}

void fti_walk(fti_walk_ctx *w, const char *dir, int depth)
{
    GDir *d = g_dir_open(dir, 0, NULL);
    if (!d)
        return;
    const char *name;
    unsigned limit = w->stop_at_first ? FTI_PROBE_MAX : FTI_WALK_MAX;
    while ((name = g_dir_read_name(d)) && w->seen < limit) {
        w->seen++;
        walk_entry(w, dir, name, depth);
        if (w->stop_at_first && w->found->len)
            break;
    }
    g_dir_close(d);
}

void fti_walk_clear(fti_walk_ctx *w)
{
    for (guint i = 0; w->found && i < w->found->len; i++)
        g_free(g_array_index(w->found, fti_found, i).path);
    if (w->found)
        g_array_free(w->found, TRUE);
    g_free(w->config);
    g_free(w->topology);
    g_free(w->staged_dir);
    memset(w, 0, sizeof *w);
}

int fti_cmp_found(const void *a, const void *b)
{
    const fti_found *x = a, *y = b;
    if (x->ckpt != y->ckpt)
        return x->ckpt < y->ckpt ? -1 : 1;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    if (x->kind != y->kind)
        return x->kind < y->kind ? -1 : 1;
    return strcmp(x->path, y->path);
}

int fti_probe(const char *path, const unsigned char *head, size_t len)
{
    (void)head;
    (void)len;
    struct stat st;
    if (stat(path, &st) != 0)
        return 0;
    if (S_ISDIR(st.st_mode)) {
        fti_walk_ctx w = { .found = g_array_new(FALSE, FALSE, sizeof(fti_found)),
                           .stop_at_first = 1 };
        fti_walk(&w, path, 0);
        int score = w.found->len ? 80 : 0;
        fti_walk_clear(&w);
        return score;
    }
    /* a single file: its trailing meta must verify in some layout; a
     * damaged one still named *.fti gets a low score, so that open() can
     * say what is wrong with it */
    hpc_source s;
    if (!S_ISREG(st.st_mode) || hpc_source_open(path, &s, NULL) != HPC_OK)
        return 0;
    fti_reader r = { &s, NULL, s.size, s.path };
    fti_meta m;
    int score = fti_meta_detect(&r, 0, &m, NULL) == HPC_OK ? 90 : g_str_has_suffix(path, ".fti") ? 5 : 0;
    hpc_source_close(&s);
    return score;
}

/* config.fti and Topology.fti may sit above SOURCE (SOURCE = an l2 dir). */
/* <meta_dir>/<execId>/Topology.fti next to the Local/Global dirs in
 * parent, or NULL. */
static char *topology_in(const char *parent)
{
    char *meta = g_build_filename(parent, "Meta", NULL), *found = NULL;
    GDir *md = g_dir_open(meta, 0, NULL);
    const char *n;
    while (md && !found && (n = g_dir_read_name(md))) {
        char *p = g_build_filename(meta, n, "Topology.fti", NULL);
        if (g_file_test(p, G_FILE_TEST_IS_REGULAR))
            found = p;
        else
            g_free(p);
    }
    if (md)
        g_dir_close(md);
    g_free(meta);
    return found;
}

void fti_find_above(fti *f, const char *dir)
{
    char *d = g_canonicalize_filename(dir, NULL);
    for (int up = 0; up < 6 && (!f->config || !f->topology); up++) {
        char *parent = g_path_get_dirname(d);
        if (!f->config) {
            char *p = g_build_filename(parent, "config.fti", NULL);
            if (g_file_test(p, G_FILE_TEST_IS_REGULAR))
                f->config = p;
            else
                g_free(p);
        }
        if (!f->topology)
            f->topology = topology_in(parent);
        int top = strcmp(parent, d) == 0;
        g_free(d);
        d = parent;
        if (top)
            break;
    }
    g_free(d);
}

/* An integer of [basic], -1 when absent or not a number. */
static int cfg_int(GKeyFile *k, const char *key)
{
    GError *e = NULL;
    int v = g_key_file_get_integer(k, "basic", key, &e);
    if (e) {
        g_error_free(e);
        return -1;
    }
    return v;
}

void fti_load_config(fti *f)
{
    GKeyFile *k = g_key_file_new();
    f->cfg_group = f->cfg_node = f->cfg_head = -1;
    if (f->config && g_key_file_load_from_file(k, f->config, G_KEY_FILE_NONE, NULL)) {
        f->cfg_group = cfg_int(k, "group_size");
        f->cfg_node = cfg_int(k, "node_size");
        f->cfg_head = cfg_int(k, "head");
    }
    g_key_file_free(k);
}
