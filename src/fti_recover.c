/* fti_recover.c - lost ranks: L2 partner copies and L3 Reed-Solomon
 * rebuilds (decoded on demand into the block cache), and the groups they
 * come from.  See docs/fti.md, "Recovery of lost ranks". */
#include "fti.h"

#include <inttypes.h>
#include <string.h>
#include <sys/stat.h>

/* ---- Reed-Solomon rebuild --------------------------------------------- */

/* Bytes [a, b) of piece p as it was encoded: a data piece zero-extended to
 * maxFs with its real size in the last 8 bytes. */
static int piece_read(const fti_rsjob *job, const fti_piece *p, uint8_t *buf, uint64_t a, uint64_t b)
{
    if (p->parity)
        return hpc_source_pread(p->src, buf, (size_t)(b - a), a);
    memset(buf, 0, (size_t)(b - a));
    if (a < p->fs) {
        int rc = hpc_source_pread(p->src, buf, (size_t)(MIN(b, p->fs) - a), a);
        if (rc != HPC_OK)
            return rc;
    }
    uint64_t tail = job->max_fs - 8;
    for (uint64_t x = MAX(a, tail); x < b; x++)
        buf[x - a] = (uint8_t)(p->fs >> (8 * (x - tail)));
    return HPC_OK;
}

/* Rebuild bytes [off, off+len) of the lost file (off+len <= maxFs). */
int fti_rs_decode(fti_rsjob *job, void *out, size_t len, uint64_t off)
{
    uint8_t *o = out;
    size_t slice = (size_t)MIN((uint64_t)FTI_RS_SLICE, (uint64_t)len + 2) & ~(size_t)1;
    uint16_t *acc = g_malloc(slice + 2);
    uint8_t *tmp = g_malloc(slice + 2);
    int rc = HPC_OK;
    while (len > 0 && rc == HPC_OK) {
        uint64_t a = off & ~(uint64_t)1;
        uint64_t b = MIN(job->max_fs, a + slice);
        if (b <= off) {
            rc = HPC_E_CORRUPT;
            break;
        }
        size_t nb = (size_t)(b - a);
        memset(acc, 0, (nb + 1) / 2 * sizeof *acc);
        for (unsigned k = 0; k < job->npieces && rc == HPC_OK; k++) {
            rc = piece_read(job, &job->pieces[k], tmp, a, b);
            if (rc == HPC_OK)
                fti_gf_mul_acc(acc, tmp, nb, job->pieces[k].coef);
        }
        size_t take = (size_t)MIN((uint64_t)len, b - off);
        for (size_t i = 0; i < take; i++) {
            uint64_t x = off + i - a;
            o[i] = (uint8_t)(acc[x / 2] >> (8 * (x & 1)));
        }
        o += take;
        off += take;
        len -= take;
    }
    g_free(acc);
    g_free(tmp);
    return rc;
}

typedef struct rs_fill_ctx {
    fti_rsjob *job;
    uint32_t bs;
} rs_fill_ctx;

static int rs_fill(void *p, uint64_t block, void *buf, size_t *len)
{
    rs_fill_ctx *x = p;
    uint64_t off = block * x->bs;
    if (off >= x->job->fs)
        return HPC_E_CORRUPT;
    *len = (size_t)MIN((uint64_t)x->bs, x->job->fs - off);
    return fti_rs_decode(x->job, buf, *len, off);
}


int fti_rank_read(hpc_container *c, const fti_rank *rk, void *buf, size_t len, uint64_t off)
{
    hpc_cache *cache = hpc_container_cache(c);
    if (!cache)
        return HPC_E_NOMEM;
    if (rk->src)
        return hpc_cache_read_source(cache, rk->src, buf, len, off);
    rs_fill_ctx x = { rk->rs, hpc_cache_block_size(cache) };
    return hpc_cache_read(cache, rk->rs->space, buf, len, off, rs_fill, &x);
}


/* ---- groups: who holds whose partner copy, who is in an RS group ------- */

typedef struct fti_topo {
    uint32_t nranks;
    int32_t *node;            /* node index of each rank */
    int32_t *local;           /* index of the rank on its node */
    uint32_t nnodes, per_node;
    int32_t *rank_at;         /* [node * per_node + local] -> rank or -1 */
} fti_topo;

static void topo_free(fti_topo *t)
{
    g_free(t->node);
    g_free(t->local);
    g_free(t->rank_at);
}

/* Node of every rank from Topology.fti ([topology] rank = node name); one
 * rank per node when the file is absent or does not cover the ranks. */
static void topo_build(const fti *f, uint32_t nranks, fti_topo *t)
{
    memset(t, 0, sizeof *t);
    t->nranks = nranks;
    t->node = g_new(int32_t, nranks);
    t->local = g_new0(int32_t, nranks);
    for (uint32_t r = 0; r < nranks; r++)
        t->node[r] = (int32_t)r;
    t->nnodes = nranks;
    t->per_node = 1;
    GKeyFile *k = g_key_file_new();
    if (f->topology && g_key_file_load_from_file(k, f->topology, G_KEY_FILE_NONE, NULL)) {
        GHashTable *idx = g_hash_table_new(g_str_hash, g_str_equal);
        char **names = g_new0(char *, nranks);
        int ok = 1;
        for (uint32_t r = 0; r < nranks && ok; r++) {
            char key[16];
            g_snprintf(key, sizeof key, "%u", r);
            names[r] = g_key_file_get_value(k, "topology", key, NULL);
            ok = names[r] != NULL;
        }
        uint32_t nn = 0, per = 1;
        uint32_t *count = g_new0(uint32_t, nranks);
        for (uint32_t r = 0; r < nranks && ok; r++) {
            gpointer v;
            if (!g_hash_table_lookup_extended(idx, names[r], NULL, &v)) {
                v = GUINT_TO_POINTER(nn++);
                g_hash_table_insert(idx, names[r], v);
            }
            uint32_t n = GPOINTER_TO_UINT(v);
            t->node[r] = (int32_t)n;
            t->local[r] = (int32_t)count[n]++;
            per = MAX(per, count[n]);
        }
        if (ok) {
            t->nnodes = nn;
            t->per_node = per;
        } else {
            for (uint32_t r = 0; r < nranks; r++) {
                t->node[r] = (int32_t)r;
                t->local[r] = 0;
            }
        }
        g_free(count);
        for (uint32_t r = 0; r < nranks; r++)
            g_free(names[r]);
        g_free(names);
        g_hash_table_destroy(idx);
    }
    g_key_file_free(k);
    t->rank_at = g_new(int32_t, (gsize)t->nnodes * t->per_node);
    for (uint64_t i = 0; i < (uint64_t)t->nnodes * t->per_node; i++)
        t->rank_at[i] = -1;
    for (uint32_t r = 0; r < nranks; r++)
        t->rank_at[(uint64_t)t->node[r] * t->per_node + (uint64_t)t->local[r]] = (int32_t)r;
}

/* The g members of rank r's group, in group order, and r's position. */
static int group_of(const fti_topo *t, uint32_t g, int32_t r, int32_t *mem, uint32_t *pos)
{
    if (g < 2 || g > FTI_RS_MAX_GROUP || r < 0 || (uint32_t)r >= t->nranks)
        return 0;
    uint32_t n = (uint32_t)t->node[r], first = n / g * g;
    if (first + g > t->nnodes)
        return 0;
    for (uint32_t j = 0; j < g; j++) {
        mem[j] = t->rank_at[(uint64_t)(first + j) * t->per_node + (uint64_t)t->local[r]];
        if (mem[j] < 0)
            return 0;
    }
    *pos = n - first;
    return 1;
}

static const fti_rank *ck_rank(const fti *f, const ck_files *cf, int32_t r)
{
    if (r < 0 || (uint32_t)r >= cf->nranks || cf->have[r] < 0)
        return NULL;
    return &g_array_index(f->ranks, fti_rank, cf->have[r]);
}

/* Does group size g explain the L2/L3 files of this checkpoint? */
static int group_consistent(const fti *f, const ck_files *cf, const fti_topo *t, uint32_t g)
{
    int32_t mem[FTI_RS_MAX_GROUP];
    uint32_t pos;
    int checked = 0;
    for (uint32_t q = 0; q < cf->nranks; q++) {
        if (!group_of(t, g, (int32_t)q, mem, &pos))
            return 0;
        if (cf->pcof[q]) {      /* q holds the copy of its left partner */
            const fti_rank *own = ck_rank(f, cf, mem[(pos + g - 1) % g]);
            fti_meta m;
            uint64_t size;
            if (own && fti_peek_meta(cf->pcof[q]->path, &m, &size) == HPC_OK) {
                if (size != own->size || strcmp(m.checksum, own->meta.checksum) != 0)
                    return 0;
                checked++;
            }
        }
        if (cf->rsed[q] && pos == 0) {
            /* maxFs is the group's largest fs + 8: exactly so when every
             * member's file is here, an upper bound otherwise */
            int64_t big = -1, mfs = -1;
            int all = 1;
            for (uint32_t j = 0; j < g; j++) {
                const fti_rank *o = ck_rank(f, cf, mem[j]);
                if (!o) {
                    all = 0;
                    continue;
                }
                if (o->meta.max_fs <= 0 || (mfs >= 0 && o->meta.max_fs != mfs))
                    return 0;
                mfs = o->meta.max_fs;
                big = MAX(big, (int64_t)o->size);
            }
            if (mfs >= 0 && (big + 8 > mfs || (all && big + 8 != mfs)))
                return 0;
        }
        if (cf->rsed[q]) {      /* one maxFs per group */
            for (uint32_t j = 0; j < g; j++) {
                const fti_rank *o = ck_rank(f, cf, mem[j]);
                if (o && o->meta.max_fs > 0) {
                    fti_meta m;
                    uint64_t size;
                    if (fti_peek_meta(cf->rsed[q]->path, &m, &size) == HPC_OK) {
                        if (m.max_fs != o->meta.max_fs)
                            return 0;
                        checked++;
                    }
                    break;
                }
            }
        }
    }
    return checked > 0;
}

/* Group sizes to try, best first: config.fti's; else every size that
 * explains the files, then one group of every node.  Returns how many. */
static unsigned group_candidates(fti *f, const ck_files *cf, const fti_topo *t, uint32_t *out)
{
    unsigned n = 0;
    if (f->cfg_group >= 2) {
        out[n++] = (uint32_t)f->cfg_group;
        return n;
    }
    for (uint32_t g = 2; g <= MIN(t->nnodes, (uint32_t)FTI_RS_MAX_GROUP); g++)
        if (t->nnodes % g == 0 && (group_consistent(f, cf, t, g) || g == t->nnodes))
            out[n++] = g;
    return n;
}

/* Serve lost rank r from the partner copy its right partner holds. */
static int recover_l2(hpc_container *c, fti *f, const ck_files *cf, const fti_topo *t,
                      uint32_t g, int32_t ckpt, int32_t r, GString *why)
{
    int32_t mem[FTI_RS_MAX_GROUP];
    uint32_t pos;
    if (!group_of(t, g, r, mem, &pos)) {
        g_string_append(why, "; not in a complete partner group");
        return HPC_E_NOENT;
    }
    int32_t q = mem[(pos + 1) % g];
    if (!cf->pcof[q]) {
        g_string_append_printf(why, "; no partner copy Ckpt%d-Pcof%d.fti", ckpt, q);
        return HPC_E_NOENT;
    }
    const char *path = cf->pcof[q]->path;
    const fti_rank *holder = ck_rank(f, cf, q);
    if (holder && holder->meta.pt_fs >= 0) {
        struct stat st;
        if (stat(path, &st) == 0 && (int64_t)st.st_size != holder->meta.pt_fs) {
            g_string_append_printf(why, "; %s has %lld bytes but rank %d's ptFs says %" PRId64,
                                   path, (long long)st.st_size, q, holder->meta.pt_fs);
            return HPC_E_CORRUPT;
        }
    }
    char *note = g_strdup_printf("partner copy held by rank %d%s", q,
                                 holder ? " (size matches its ptFs)" : " (ptFs not checked: holder's file missing)");
    GError *e = NULL;
    int rc = fti_add_file(c, f, path, ckpt, r, FTI_O_PARTNER, note, &e);
    if (rc != HPC_OK)
        g_string_append_printf(why, "; partner copy: %s", e ? e->message : hpc_strerror(rc));
    g_clear_error(&e);
    g_free(note);
    return rc;
}

/* Rebuild lost rank r from its Reed-Solomon group. */
static int recover_l3(hpc_container *c, fti *f, const ck_files *cf, const fti_topo *t,
                      uint32_t g, int32_t ckpt, int32_t r, GString *why)
{
    int32_t mem[FTI_RS_MAX_GROUP];
    uint32_t pos;
    int have_d[FTI_RS_MAX_GROUP] = { 0 }, have_p[FTI_RS_MAX_GROUP] = { 0 };
    const hpc_source *psrc[FTI_RS_MAX_GROUP] = { 0 };
    int64_t max_fs = -1;
    if (!group_of(t, g, r, mem, &pos)) {
        g_string_append(why, "; not in a complete RS group");
        return HPC_E_NOENT;
    }
    for (uint32_t j = 0; j < g; j++) {
        const fti_rank *o = ck_rank(f, cf, mem[j]);
        if (o && o->origin == FTI_O_FILE && o->meta.max_fs > 0) {
            if (max_fs < 0)
                max_fs = o->meta.max_fs;
            have_d[j] = o->meta.max_fs == max_fs;
        }
    }
    for (uint32_t j = 0; j < g; j++) {
        const fti_found *x = cf->rsed[mem[j]];
        fti_meta m;
        uint64_t size;
        if (!x || fti_peek_meta(x->path, &m, &size) != HPC_OK)
            continue;
        if (max_fs < 0)
            max_fs = m.max_fs;
        if (m.max_fs != max_fs || m.fs != max_fs || size != (uint64_t)max_fs + m.lay->meta)
            continue;
        psrc[j] = fti_source(c, f, x->path, NULL);
        have_p[j] = psrc[j] != NULL;
    }
    uint16_t cd[FTI_RS_MAX_GROUP], cp[FTI_RS_MAX_GROUP];
    if (max_fs < 16 || fti_rs_coeffs(g, have_d, have_p, pos, cd, cp) != 0) {
        int nd = 0, np = 0;
        for (uint32_t j = 0; j < g; j++) {
            nd += have_d[j];
            np += have_p[j];
        }
        g_string_append_printf(why, "; RS group of %u has %d data and %d parity pieces, %u needed",
                               g, nd, np, g);
        return HPC_E_NOENT;
    }
    fti_rsjob *job = g_new0(fti_rsjob, 1);
    job->max_fs = (uint64_t)max_fs;
    job->fs = job->max_fs;
    GString *used = g_string_new(NULL);
    for (uint32_t j = 0; j < g; j++) {
        if (cd[j]) {
            const fti_rank *o = ck_rank(f, cf, mem[j]);
            job->pieces[job->npieces++] = (fti_piece){ o->src, o->size, 0, cd[j] };
            g_string_append_printf(used, "%sRank%d", used->len ? "," : "", mem[j]);
        }
        if (cp[j]) {
            job->pieces[job->npieces++] = (fti_piece){ psrc[j], job->max_fs, 1, cp[j] };
            g_string_append_printf(used, "%sRSed%d", used->len ? "," : "", mem[j]);
        }
    }
    /* the real size sits in the last 8 bytes of the encoded piece */
    unsigned char sz[8];
    int rc = fti_rs_decode(job, sz, 8, job->max_fs - 8);
    uint64_t fs = fti_le(sz, 8);
    if (rc == HPC_OK && (fs < 82 || fs > job->max_fs - 8)) {
        g_string_append_printf(why, "; RS rebuild gives a size of %" PRIu64 " bytes, not a "
                               "file of at most %" PRIu64, fs, job->max_fs - 8);
        rc = HPC_E_CORRUPT;
    }
    if (rc != HPC_OK) {
        g_free(job);
        g_string_free(used, TRUE);
        return rc;
    }
    job->fs = fs;
    job->space = hpc_cache_space_new();
    char *vpath = g_strdup_printf("(Ckpt%d-Rank%d.fti rebuilt from %s)", ckpt, r, used->str);
    fti_reader rd = { NULL, job, fs, vpath };
    fti_rank rk = { .ckpt = ckpt, .rank = r, .origin = FTI_O_RS, .rs = job, .size = fs };
    GError *e = NULL;
    fti_snap snap;
    fti_snap_take(f, &snap);
    rc = fti_meta_detect(&rd, 0, &rk.meta, &e);
    if (rc == HPC_OK)
        rc = fti_parse_rank(c, f, &rd, &rk, &e);
    if (rc != HPC_OK) {
        g_string_append_printf(why, "; RS rebuild: %s", e ? e->message : hpc_strerror(rc));
        fti_snap_restore(f, &snap, NULL);
        g_free(job);
        g_free(vpath);
    } else {
        rk.path = vpath;
        rk.note = g_strdup_printf("rebuilt from RS group %u (pieces %s, myHash verified)",
                                  g, used->str);
        g_array_append_val(f->ranks, rk);
    }
    g_clear_error(&e);
    g_string_free(used, TRUE);
    return rc;
}

/* Try to recover every lost rank with group size g; returns how many. */
static uint32_t recover_all(hpc_container *c, fti *f, ck_files *cf, const fti_topo *t,
                            fti_ckpt *ck, uint32_t g)
{
    uint32_t got = 0;
    ck->group = g;
    for (uint32_t r = 0; r < cf->nranks; r++) {
        if (cf->have[r] >= 0)
            continue;
        GString *why = g_string_new(NULL);
        int rc = HPC_E_NOENT;
        if (ck->level == FTI_L2)
            rc = recover_l2(c, f, cf, t, g, ck->id, (int32_t)r, why);
        else if (ck->level == FTI_L3)
            rc = recover_l3(c, f, cf, t, g, ck->id, (int32_t)r, why);
        if (rc == HPC_OK) {
            cf->have[r] = (int32_t)f->ranks->len - 1;
            const fti_rank *rk = ck_rank(f, cf, (int32_t)r);
            fti_warn(f, "checkpoint %d rank %u: Rank file %s; served from %s", ck->id, r,
                     cf->rank[r] ? "unusable" : "missing", rk->path);
            got++;
        } else {
            fti_warn(f, "checkpoint %d rank %u: Rank file %s and not recoverable%s", ck->id, r,
                     cf->rank[r] ? "unusable" : "missing", why->str);
        }
        g_string_free(why, TRUE);
    }
    return got;
}

void fti_recover_ckpt(hpc_container *c, fti *f, ck_files *cf, fti_ckpt *ck)
{
    uint32_t nlost = 0;
    for (uint32_t r = 0; r < cf->nranks; r++)
        nlost += cf->have[r] < 0;
    fti_topo t;
    uint32_t cand[FTI_RS_MAX_GROUP + 1];
    topo_build(f, cf->nranks, &t);
    unsigned ncand = group_candidates(f, cf, &t, cand);
    fti_snap snap;
    fti_snap_take(f, &snap);
    int best = -1, last = -1;
    uint32_t best_got = 0;
    for (unsigned ci = 0; ci < ncand; ci++) {
        fti_snap_restore(f, &snap, cf);
        uint32_t got = recover_all(c, f, cf, &t, ck, cand[ci]);
        last = (int)ci;
        if (best < 0 || got > best_got) {
            best = (int)ci;
            best_got = got;
        }
        if (got == nlost)
            break;
    }
    if (best >= 0 && last != best) {
        fti_snap_restore(f, &snap, cf);
        recover_all(c, f, cf, &t, ck, cand[best]);
    }
    if (ncand == 0)
        fti_warn(f, "checkpoint %d: %u nodes form no group of 2 to %d members", ck->id,
                 t.nnodes, FTI_RS_MAX_GROUP);
    else
        ck->group_from = f->cfg_group >= 2 ? "config.fti"
                        : "inferred: the size under which the rebuild verifies";
    topo_free(&t);
}
