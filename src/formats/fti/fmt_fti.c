/* fmt_fti.c - FTI checkpoint files written with FTI-FF (ckpt_io = 3).
 *
 * SOURCE is a directory holding Ckpt<N>-Rank<R>.fti (and Pcof, RSed and
 * dCPFile) files anywhere below it, or one .fti file.  Every file carries
 * its metadata at its end: chunk records after the data area and a file
 * meta in the last bytes, whose layout (i64, i32, v1.4, v1.3) is told by
 * which one makes the myHash field verify.  A variable is the union of its
 * chunks; the tree is /ckpt-<N>/rank-<R>/var-<id> (single file: /var-<id>).
 *
 * A rank whose Rank file is missing or unusable is served from the L2
 * partner copy another rank holds, or rebuilt on the fly from its L3
 * Reed-Solomon group (fti_recover.c, fti_rs.c) through the block cache.  Chunk MD5s are
 * checked once per variable; a mismatch makes that variable fail with
 * HPC_E_CHECKSUM unless -o nocheck.
 *
 * The reader is split by concern: see fti.h.  docs/fti.md describes the
 * on-disk facts and the behaviour.
 */
#include "fti.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const level_names[] = { "L1", "L2", "L3", "L4", "dCP", "file" };

const char *fti_level_name(fti_level l)
{
    return (unsigned)l < G_N_ELEMENTS(level_names) ? level_names[l] : "?";
}

static const char *const origin_names[] = { "file", "partner-copy", "rs-rebuild", "dcp" };

/* L3 when RSed files exist, else L2 with Pcof files, else L4 (an l4
 * directory, or l4_archive, where FTI keeps older L4 checkpoints with
 * keep_l4_ckpt), dCP or L1 from the first rank's file. */
static fti_level ckpt_level(const fti_ck_files *cf)
{
    fti_level l = FTI_L1;
    for (uint32_t r = 0; r < cf->nranks; r++) {
        if (cf->rsed[r])
            return FTI_L3;
        if (cf->pcof[r])
            l = FTI_L2;
        else if (cf->rank[r] && l == FTI_L1) {
            if (cf->rank[r]->kind == FTI_K_DCP)
                l = FTI_LDCP;
            else if (strstr(cf->rank[r]->path, "/l4/") || strstr(cf->rank[r]->path, "/l4_archive/"))
                l = FTI_L4;
        }
    }
    return l;
}

/* The variable of node ino, its MD5s checked first unless nocheck. */
static int checked_var(hpc_container *c, hpc_ino ino, fti_var **out)
{
    fti *f = c->priv;
    uint64_t data;
    if (hpc_tree_data(c->tree, ino, &data) != HPC_OK)
        return HPC_E_NOENT;
    if (data == 0 || (data & FTI_LOST_DIR))
        return HPC_E_ISDIR;
    fti_var *v = &g_array_index(f->vars, fti_var, data - 1);
    if (!c->opts.nocheck) {
        int st = fti_var_verify(c, v);
        if (st < 0)
            return st;
        if (st == FTI_V_BAD)
            return HPC_E_CHECKSUM;
    }
    *out = v;
    return HPC_OK;
}

/* Index of the chunk holding byte off: chunks are sorted by dptr and tile
 * the variable. */
static uint32_t chunk_at(const fti_chunk *ch, uint32_t n, uint64_t off)
{
    uint32_t lo = 0, hi = n;
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (ch[mid].dptr <= off)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

static int fti_read(hpc_container *c, hpc_ino ino, void *buf, size_t len, uint64_t off,
                    size_t *nread)
{
    fti *f = c->priv;
    fti_var *v;
    *nread = 0;
    int rc = checked_var(c, ino, &v);
    if (rc != HPC_OK || off >= v->size || len == 0)
        return rc;
    const fti_rank *rk = &g_array_index(f->ranks, fti_rank, v->rank);
    const fti_chunk *ch = &g_array_index(f->chunks, fti_chunk, v->first);
    len = (size_t)MIN((uint64_t)len, v->size - off);
    char *p = buf;
    size_t done = 0;
    for (uint32_t i = chunk_at(ch, v->n, off); i < v->n && done < len; i++) {
        uint64_t in = off + done - ch[i].dptr;
        size_t take = (size_t)MIN((uint64_t)(len - done), ch[i].len - in);
        rc = fti_rank_read(c, rk, p + done, take, ch[i].fptr + in);
        if (rc != HPC_OK)
            return rc;
        done += take;
    }
    *nread = done;
    return HPC_OK;
}

/* Extents of a variable of a rank read from its own file (or a partner
 * copy), for zero-copy reads; checked first unless nocheck. */
static int fti_map(hpc_container *c, hpc_ino ino, uint64_t off, uint64_t len,
                   hpc_extent *ext, unsigned max, unsigned *n)
{
    fti *f = c->priv;
    fti_var *v;
    *n = 0;
    int rc = checked_var(c, ino, &v);
    if (rc != HPC_OK)
        return rc;
    const fti_rank *rk = &g_array_index(f->ranks, fti_rank, v->rank);
    if (!rk->src)
        return HPC_E_NOTSUP;    /* rebuilt bytes exist only in the cache */
    if (off >= v->size)
        return HPC_OK;
    const fti_chunk *ch = &g_array_index(f->chunks, fti_chunk, v->first);
    len = MIN(len, v->size - off);
    for (uint32_t i = chunk_at(ch, v->n, off); i < v->n && len > 0 && *n < max; i++) {
        uint64_t in = off - ch[i].dptr, take = MIN(len, ch[i].len - in);
        ext[(*n)++] = (hpc_extent){ .src = rk->src, .off = ch[i].fptr + in, .len = take };
        off += take;
        len -= take;
    }
    return HPC_OK;
}

/* ---- lost ranks: their directories fail with EIO ------------------- */

/* HPC_E_IO and a log line when ino is a lost rank's directory. */
static int lost_check(hpc_container *c, hpc_ino ino)
{
    fti *f = c->priv;
    uint64_t data;
    if (hpc_tree_data(c->tree, ino, &data) != HPC_OK || !(data & FTI_LOST_DIR))
        return HPC_OK;
    const fti_lost *l = &g_array_index(f->lost, fti_lost, (guint)(data & ~FTI_LOST_DIR));
    hpc_log("checkpoint %d rank %d: %s", l->ckpt, l->rank, l->why);
    return HPC_E_IO;
}

static int fti_lookup(hpc_container *c, hpc_ino parent, const char *name, hpc_stat *st)
{
    int rc = lost_check(c, parent);
    return rc != HPC_OK ? rc : hpc_tree_lookup(c->tree, parent, name, st);
}

static int fti_readdir(hpc_container *c, hpc_ino dir, uint64_t cookie, hpc_dirent_fn fn,
                       void *ctx)
{
    int rc = lost_check(c, dir);
    return rc != HPC_OK ? rc : hpc_tree_readdir(c->tree, dir, cookie, fn, ctx);
}

/* ---- one checkpoint ------------------------------------------------- */

/* Rank r is a head by config.fti (head = 1: position 0 of each node),
 * which writes no checkpoint file: not missing from an L1/L4 checkpoint. */
static int cfg_head(const fti *f, uint32_t r)
{
    return f->cfg_head == 1 && f->cfg_node >= 2 && r % (uint32_t)f->cfg_node == 0;
}

/* Index the files of one checkpoint (found[lo..hi)) by kind and rank;
 * returns whether any L2/L3 file can recover lost ranks. */
static int ck_index(fti *f, const fti_found *found, guint lo, guint hi, int32_t id,
                    fti_ck_files *cf)
{
    int recoverable = 0;
    /* rank numbers far beyond the files found are not a checkpoint's ranks
     * (and would size the per-rank tables) */
    uint64_t rank_limit = MAX(4 * (uint64_t)(hi - lo) + 64, (uint64_t)1 << 20);
    for (guint i = lo; i < hi; i++)
        if ((uint64_t)found[i].rank < rank_limit)
            cf->nranks = MAX(cf->nranks, (uint32_t)found[i].rank + 1);
    cf->rank = g_new0(const fti_found *, cf->nranks);
    cf->pcof = g_new0(const fti_found *, cf->nranks);
    cf->rsed = g_new0(const fti_found *, cf->nranks);
    cf->have = g_new(int32_t, cf->nranks);
    for (uint32_t r = 0; r < cf->nranks; r++)
        cf->have[r] = -1;
    for (guint i = lo; i < hi; i++) {
        const fti_found *x = &found[i];
        if ((uint64_t)x->rank >= rank_limit) {
            fti_warn(f, "%s: rank %d is far beyond the %u files of checkpoint %d; ignored",
                     x->path, x->rank, hi - lo, id);
            continue;
        }
        const fti_found **slot = x->kind == FTI_K_PCOF ? cf->pcof : x->kind == FTI_K_RSED ? cf->rsed : cf->rank;
        if (slot[x->rank]) {
            fti_warn(f, "%s: checkpoint %d rank %d already comes from %s; ignored", x->path,
                     id, x->rank, slot[x->rank]->path);
            continue;
        }
        slot[x->rank] = x;
        recoverable |= x->kind == FTI_K_PCOF || x->kind == FTI_K_RSED;
    }
    return recoverable;
}

/* The ranks' own files; a bad one is left to recovery when there is any. */
static int ck_own_files(hpc_container *c, fti *f, fti_ck_files *cf, int32_t id, int recoverable,
                        GError **err)
{
    for (uint32_t r = 0; r < cf->nranks; r++) {
        if (!cf->rank[r])
            continue;
        GError *e = NULL;
        int origin = cf->rank[r]->kind == FTI_K_DCP ? FTI_O_DCP : FTI_O_FILE;
        int rc = fti_add_file(c, f, cf->rank[r]->path, id, (int32_t)r, origin, "own file", &e);
        if (rc == HPC_OK) {
            cf->have[r] = (int32_t)f->ranks->len - 1;
        } else if (recoverable) {
            fti_warn(f, "%s; trying to recover rank %u from its group",
                     e ? e->message : hpc_strerror(rc), r);
            rc = HPC_OK;
        } else {
            g_propagate_error(err, e);
            e = NULL;
        }
        g_clear_error(&e);
        if (rc != HPC_OK)
            return rc;
    }
    return HPC_OK;
}

/* Ranks without a file and nothing to recover them from: a warning that
 * lists the first 16. */
static void ck_warn_lost(fti *f, const fti_ck_files *cf, int32_t id)
{
    uint32_t nlost = 0;
    for (uint32_t r = 0; r < cf->nranks; r++)
        nlost += cf->have[r] < 0 && !cfg_head(f, r);
    if (!nlost)
        return;
    GString *list = g_string_new(NULL);
    for (uint32_t r = 0, shown = 0; r < cf->nranks; r++)
        if (cf->have[r] < 0 && !cfg_head(f, r) && shown++ < 16)
            g_string_append_printf(list, "%s%u", list->len ? " " : "", r);
    fti_warn(f, "checkpoint %d: no usable file of %u of ranks 0-%u (%s%s) below SOURCE, and "
             "no L2/L3 files to recover them", id, nlost, cf->nranks - 1, list->str,
             nlost > 16 ? " ..." : "");
    g_string_free(list, TRUE);
}

static int open_ckpt(hpc_container *c, fti *f, fti_found *found, guint lo, guint hi, GError **err)
{
    fti_ckpt ck = { .id = found[lo].ckpt };
    fti_ck_files cf = { 0 };
    int recoverable = ck_index(f, found, lo, hi, ck.id, &cf);
    ck.level = ckpt_level(&cf);
    int rc = ck_own_files(c, f, &cf, ck.id, recoverable, err);
    /* lost ranks: served from their groups; the topology may also show
     * ranks above the highest one seen */
    if (rc == HPC_OK && !recoverable)
        ck_warn_lost(f, &cf, ck.id);
    else if (rc == HPC_OK)
        rc = fti_recover_ckpt(c, f, &cf, &ck, err);
    if (rc == HPC_OK) {
        ck.nranks_seen = cf.nranks;
        g_array_append_val(f->ckpts, ck);
    }
    g_free(cf.rank);
    g_free(cf.pcof);
    g_free(cf.rsed);
    g_free(cf.have);
    return rc;
}

/* ---- open / close ----------------------------------------------------- */

static void fti_free(fti *f)
{
    if (!f)
        return;
    fti_check_stop(f);
    for (guint i = 0; f->ranks && i < f->ranks->len; i++)
        fti_rank_clear(&g_array_index(f->ranks, fti_rank, i));
    for (guint i = 0; f->ckpts && i < f->ckpts->len; i++)
        g_free(g_array_index(f->ckpts, fti_ckpt, i).topo);
    for (guint i = 0; f->lost && i < f->lost->len; i++)
        g_free(g_array_index(f->lost, fti_lost, i).why);
    if (f->lost)
        g_array_free(f->lost, TRUE);
    if (f->ranks)
        g_array_free(f->ranks, TRUE);
    if (f->vars)
        g_array_free(f->vars, TRUE);
    if (f->chunks)
        g_array_free(f->chunks, TRUE);
    if (f->ckpts)
        g_array_free(f->ckpts, TRUE);
    if (f->warnings)
        g_ptr_array_free(f->warnings, TRUE);
    if (f->srcs)
        g_hash_table_destroy(f->srcs);
    g_free(f->config);
    g_free(f->topology);
    g_free(f);
}

static void fti_close(hpc_container *c)
{
    fti_free(c->priv);
    c->priv = NULL;
}

static int cmp_rank(const void *a, const void *b)
{
    const fti_rank *x = a, *y = b;
    if (x->ckpt != y->ckpt)
        return x->ckpt < y->ckpt ? -1 : 1;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

/* The directory of checkpoint ckpt, made on first use. */
static int ckpt_dir(hpc_container *c, int32_t ckpt, hpc_ino *dir, GError **err)
{
    char ckname[32];
    hpc_stat st = { 0 };
    g_snprintf(ckname, sizeof ckname, "ckpt-%d", ckpt);
    if (hpc_tree_lookup(c->tree, HPC_INO_ROOT, ckname, &st) == HPC_OK) {
        *dir = st.ino;
        return HPC_OK;
    }
    int rc = hpc_tree_add(c->tree, HPC_INO_ROOT, ckname, HPC_MODE_DIR, 0, 0, dir);
    return rc == HPC_OK ? HPC_OK : hpc_fail(err, rc, c->path, NULL, 0, "cannot add %s", ckname);
}

/* A directory for every lost rank of an L2/L3 checkpoint. */
static int add_lost_dirs(hpc_container *c, fti *f, GError **err)
{
    char name[HPC_RANKNAME_MAX * 2 + 64];
    for (guint i = 0; i < f->lost->len; i++) {
        const fti_lost *l = &g_array_index(f->lost, fti_lost, i);
        hpc_ino dir, ino;
        int rc = ckpt_dir(c, l->ckpt, &dir, err);
        if (rc != HPC_OK)
            return rc;
        if (hpc_rankname_format(&c->rankname, l->rank, name, sizeof name) != HPC_OK)
            return hpc_fail(err, HPC_E_RANGE, c->path, NULL, 0, "rank name too long");
        rc = hpc_tree_add(c->tree, dir, name, HPC_MODE_DIR, 0, FTI_LOST_DIR | i, &ino);
        if (rc != HPC_OK)
            return hpc_fail(err, rc, c->path, NULL, 0, "rank %d of checkpoint %d: cannot add "
                            "%s (-o rankname gives two ranks one name?)", l->rank, l->ckpt, name);
    }
    return HPC_OK;
}

static int build_tree(hpc_container *c, fti *f, GError **err)
{
    char name[HPC_RANKNAME_MAX * 2 + 64];
    c->tree = hpc_tree_new();
    for (guint i = 0; i < f->ranks->len; i++) {
        fti_rank *rk = &g_array_index(f->ranks, fti_rank, i);
        hpc_ino dir = HPC_INO_ROOT, ino;
        int rc;
        if (!f->single) {
            if ((rc = ckpt_dir(c, rk->ckpt, &dir, err)) != HPC_OK)
                return rc;
            if (hpc_rankname_format(&c->rankname, rk->rank, name, sizeof name) != HPC_OK)
                return hpc_fail(err, HPC_E_RANGE, c->path, NULL, 0, "rank name too long");
            rc = hpc_tree_add(c->tree, dir, name, HPC_MODE_DIR, 0, 0, &dir);
            if (rc != HPC_OK)
                return hpc_fail(err, rc, rk->path, NULL, 0,
                                "rank %d of checkpoint %d appears twice (or -o rankname "
                                "gives two ranks one name)", rk->rank, rk->ckpt);
        }
        for (uint32_t k = 0; k < rk->nvars; k++) {
            fti_var *v = &g_array_index(f->vars, fti_var, rk->first_var + k);
            v->rank = i;      /* ranks were sorted after parsing */
            g_snprintf(name, sizeof name, "var-%d", v->id);
            rc = hpc_tree_add(c->tree, dir, name, HPC_MODE_FILE, v->size,
                              (uint64_t)(rk->first_var + k) + 1, &ino);
            if (rc != HPC_OK)
                return hpc_fail(err, rc, rk->path, NULL, 0, "cannot add %s", name);
            char shape[32];
            g_snprintf(shape, sizeof shape, "%" PRIu64, v->size);
            hpc_tree_add_xattr(c->tree, ino, "user.dtype", "|u1", 3);
            hpc_tree_add_xattr(c->tree, ino, "user.shape", shape, strlen(shape));
        }
    }
    return f->single ? HPC_OK : add_lost_dirs(c, f, err);
}

/* The reader's own -o options (hpc_format.options). */
enum { FTI_OPT_CONFIG, FTI_OPT_END };
static const hpc_option_def fti_options[] = {
    [FTI_OPT_CONFIG] = { "fticonfig", "PATH", "FTI: the config.fti giving the L2/L3 groups",
      HPC_OPT_STRING, 0, 0, 0, 0, NULL, HPC_OPT_BASIC },
    [FTI_OPT_END] = { NULL, NULL, NULL, HPC_OPT_FLAG, 0, 0, 0, 0, NULL, HPC_OPT_BASIC },
};

/* config.fti: -o fticonfig=PATH, else the first found below SOURCE (or,
 * by fti_find_above, above it). */
static int config_option(hpc_container *c, fti *f, fti_walk_ctx *w, GError **err)
{
    const char *opt = hpc_options_text(&c->opts, &fti_options[FTI_OPT_CONFIG]);
    if (!opt) {
        f->config = w->config;
        w->config = NULL;
        return HPC_OK;
    }
    if (!g_file_test(opt, G_FILE_TEST_IS_REGULAR) || access(opt, R_OK) != 0)
        return hpc_fail(err, HPC_E_NOENT, opt, NULL, 0,
                        "-o fticonfig: not a readable config.fti file");
    f->config = g_strdup(opt);
    return HPC_OK;
}

/* SOURCE is one file: the rank is known only from a Rank file's name (a
 * Pcof file holds another rank's bytes). */
static int open_single(hpc_container *c, fti *f, GError **err)
{
    char *base = g_path_get_basename(c->path);
    fti_kind kind;
    int32_t nck, nrank;
    if (!fti_parse_name(base, &kind, &nck, &nrank) || (kind != FTI_K_RANK && kind != FTI_K_DCP))
        nrank = -1;
    g_free(base);
    f->single = 1;
    int rc = fti_add_file(c, f, c->path, -1, nrank, FTI_O_FILE, "the file given", err);
    if (rc != HPC_OK)
        return rc;
    fti_ckpt ck = { .id = g_array_index(f->ranks, fti_rank, 0).ckpt, .level = FTI_LFILE,
                    .nranks_seen = 1 };
    g_array_append_val(f->ckpts, ck);
    return HPC_OK;
}

/* Open the checkpoints of the files found, one run of equal ids each. */
static int open_ckpts(hpc_container *c, fti *f, GArray *found_files, GError **err)
{
    /* dCP files name no checkpoint: take it from their meta */
    for (guint i = 0; i < found_files->len; i++) {
        fti_found *x = &g_array_index(found_files, fti_found, i);
        fti_meta m;
        uint64_t size;
        if (x->kind == FTI_K_DCP)
            x->ckpt = fti_peek_meta(x->path, &m, &size) == HPC_OK ? m.ckpt_id : 0;
    }
    qsort(found_files->data, found_files->len, sizeof(fti_found), fti_cmp_found);
    fti_found *found = (fti_found *)(void *)found_files->data;
    for (guint lo = 0, hi; lo < found_files->len; lo = hi) {
        for (hi = lo; hi < found_files->len && found[hi].ckpt == found[lo].ckpt; hi++)
            ;
        int rc = open_ckpt(c, f, found, lo, hi, err);
        if (rc != HPC_OK)
            return rc;
    }
    return HPC_OK;
}

/* SOURCE is a directory: every checkpoint file below it, config.fti and
 * Topology.fti below or above it. */
static int open_tree(hpc_container *c, fti *f, fti_walk_ctx *w, GError **err)
{
    w->found = g_array_new(FALSE, FALSE, sizeof(fti_found));
    fti_walk(w, c->path, 0);
    int rc = config_option(c, f, w, err);
    if (rc != HPC_OK)
        return rc;
    f->topology = w->topology;
    w->topology = NULL;
    fti_find_above(f, c->path);
    fti_load_config(f);
    if (w->staged)
        fti_warn(f, "%u checkpoint files in FTI's staging directories (first: %s) are not "
                 "shown: FTI moves a checkpoint out of <execId>/tmp once it is complete",
                 w->staged, w->staged_dir);
    if (w->found->len == 0)
        return hpc_fail(err, HPC_E_UNSUPPORTED, c->path, NULL, 0,
                        "no Ckpt<N>-Rank<R>.fti, Pcof, RSed or dCPFile file below it");
    rc = open_ckpts(c, f, w->found, err);
    if (rc == HPC_OK && f->ranks->len == 0)
        rc = hpc_fail(err, HPC_E_CORRUPT, c->path, NULL, 0,
                      "no rank of any checkpoint could be read: %s",
                      f->warnings->len ? (char *)g_ptr_array_index(f->warnings, 0) : "?");
    return rc;
}

static fti *fti_new(void)
{
    fti *f = g_new0(fti, 1);
    f->ranks = g_array_new(FALSE, FALSE, sizeof(fti_rank));
    f->vars = g_array_new(FALSE, FALSE, sizeof(fti_var));
    f->chunks = g_array_new(FALSE, FALSE, sizeof(fti_chunk));
    f->ckpts = g_array_new(FALSE, FALSE, sizeof(fti_ckpt));
    f->lost = g_array_new(FALSE, FALSE, sizeof(fti_lost));
    f->warnings = g_ptr_array_new_with_free_func(g_free);
    f->srcs = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    return f;
}

/* The container's tree is built: start the checksum checks; rebuilt
 * ranks get a larger st_blksize, which makes readers ask for more at a
 * time, so the G pieces are read in fewer, larger reads (-o blocksize
 * overrides). */
static int open_done(hpc_container *c, fti *f)
{
    c->priv = f;
    for (guint i = 0; i < f->ranks->len; i++)
        if (g_array_index(f->ranks, fti_rank, i).origin == FTI_O_RS)
            c->fsblksize = FTI_RS_BLOCK;
    int rc = fti_check_start(c);
    if (rc != HPC_OK) {
        c->priv = NULL;
        return rc;
    }
    if (f->total_bytes <= FTI_VERIFY_AT_OPEN)
        fti_check_all(c);
    return HPC_OK;
}

static int fti_open(hpc_container *c, GError **err)
{
    fti *f = fti_new();
    struct stat st;
    fti_walk_ctx w = { 0 };
    int rc;
    if (stat(c->path, &st) != 0)
        rc = hpc_fail(err, HPC_E_NOENT, c->path, NULL, 0, "cannot stat");
    else
        rc = S_ISDIR(st.st_mode) ? open_tree(c, f, &w, err) : open_single(c, f, err);
    /* ranks in (ckpt, rank) order; each var's rank index is fixed below */
    if (rc == HPC_OK && f->ranks->len > 1)
        qsort(f->ranks->data, f->ranks->len, sizeof(fti_rank), cmp_rank);
    if (rc == HPC_OK)
        rc = build_tree(c, f, err);
    if (rc == HPC_OK && (rc = open_done(c, f)) == HPC_OK)
        f = NULL;
    fti_walk_clear(&w);
    if (rc != HPC_OK) {
        hpc_tree_free(c->tree);
        c->tree = NULL;
        c->priv = NULL;
    }
    fti_free(f);
    return rc;
}

/* ---- .info ------------------------------------------------------------ */

static int fti_info(hpc_container *c, GString *o)
{
    fti *f = c->priv;
    unsigned bad = 0, unchecked = 0;
    for (guint i = 0; i < f->vars->len; i++) {
        gint st = g_atomic_int_get(&g_array_index(f->vars, fti_var, i).state);
        bad += st == FTI_V_BAD;
        unchecked += st == FTI_V_UNKNOWN;
    }
    g_string_append_printf(o, "mode: %s\ncheckpoints: %u\nranks: %u\nvariables: %u\n"
                           "variable bytes: %" PRIu64 "\nconfig: %s\ntopology: %s\n"
                           "checksum: %s\nbad variables: %u\nunverified variables: %u\n",
                           f->single ? "single file" : "directory", f->ckpts->len,
                           f->ranks->len, f->vars->len, f->total_bytes,
                           f->config ? f->config : "(none found)",
                           f->topology ? f->topology : "(none found)",
                           c->opts.nocheck ? "not enforced (-o nocheck)" : "chunk MD5, enforced",
                           bad, unchecked);
    for (guint i = 0; i < f->ckpts->len; i++) {
        const fti_ckpt *ck = &g_array_index(f->ckpts, fti_ckpt, i);
        g_string_append_printf(o, "checkpoint %d: level %s, ranks seen %u", ck->id, fti_level_name(ck->level),
                               ck->nranks_seen);
        if (ck->group)
            g_string_append_printf(o, ", group size %u", ck->group);
        if (ck->topo)
            g_string_append_printf(o, " (%s)", ck->topo);
        g_string_append_c(o, '\n');
    }
    for (guint i = 0; i < f->warnings->len; i++)
        g_string_append_printf(o, "warning: %s\n", (char *)g_ptr_array_index(f->warnings, i));
    for (guint i = 0; i < f->vars->len; i++) {
        const fti_var *v = &g_array_index(f->vars, fti_var, i);
        if (g_atomic_int_get(&v->state) == FTI_V_BAD) {
            const fti_rank *rk = &g_array_index(f->ranks, fti_rank, v->rank);
            g_string_append_printf(o, "warning: checkpoint %d rank %d var-%d: chunk MD5 "
                                   "mismatch at file offset %" PRIu64 " (reads fail with EIO)\n",
                                   rk->ckpt, rk->rank, v->id, v->bad_fptr);
        }
    }
    g_string_append(o, "\nckpt\trank\torigin\tlayout\tsize\tblocks\tvars\tfilechecksum\tmd5\tfile\tnote\n");
    for (guint i = 0; i < f->ranks->len; i++) {
        const fti_rank *rk = &g_array_index(f->ranks, fti_rank, i);
        unsigned b = 0, u = 0;
        for (uint32_t k = 0; k < rk->nvars; k++) {
            gint st = g_atomic_int_get(&g_array_index(f->vars, fti_var, rk->first_var + k).state);
            b += st == FTI_V_BAD;
            u += st == FTI_V_UNKNOWN;
        }
        char rank[16] = "?";    /* a single file not named Ckpt<N>-Rank<R>.fti */
        if (rk->rank >= 0)
            g_snprintf(rank, sizeof rank, "%d", rk->rank);
        g_string_append_printf(o, "%d\t%s\t%s\t%s\t%" PRIu64 "\t%u\t%u\t%s\t%s\t%s\t%s\n",
                               rk->ckpt, rank, origin_names[rk->origin], rk->meta.lay->name,
                               rk->size, rk->nblocks, rk->nvars,
                               rk->sum_rule ? rk->sum_rule : "MISMATCH",
                               b ? "BAD" : u ? "unverified" : "ok", rk->path, rk->note);
    }
    return HPC_OK;
}

const hpc_format hpc_format_fti = {
    .name = "fti",
    .probe = fti_probe,
    .open = fti_open,
    .close = fti_close,
    .lookup = fti_lookup,
    .readdir = fti_readdir,
    .read = fti_read,
    .map = fti_map,
    .info = fti_info,
    .options = fti_options,
};
