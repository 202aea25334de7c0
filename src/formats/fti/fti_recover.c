/* fti_recover.c - lost ranks: which L2 partner copy or L3 Reed-Solomon
 * group stands in for each, and the groups they come from (the bytes of a
 * rebuilt rank are decoded by fti_rebuild.c).  See docs/fti.md, "Recovery
 * of lost ranks". */
#include "fti.h"
#include "hpc_bytes.h"

#include <inttypes.h>
#include <string.h>
#include <sys/stat.h>

/* ---- groups: who holds whose partner copy, who is in an RS group ------- */

static const fti_rank *ck_rank(const fti *f, const fti_ck_files *cf, int32_t r)
{
    if (r < 0 || (uint32_t)r >= cf->nranks || cf->have[r] < 0)
        return NULL;
    return &g_array_index(f->ranks, fti_rank, cf->have[r]);
}

/* Serve lost rank r from the partner copy its right partner holds. */
static int recover_l2(hpc_container *c, fti *f, const fti_ck_files *cf, const fti_topo *t,
                      int32_t ckpt, int32_t r, GString *why)
{
    int32_t mem[FTI_RS_MAX_GROUP];
    uint32_t pos, g = t->group;
    if (!fti_topo_group(t, r, mem, &pos)) {
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

/* The pieces of a Reed-Solomon group that are there and agree in size. */
typedef struct rs_group {
    int32_t mem[FTI_RS_MAX_GROUP];
    uint32_t pos, g;
    int have_d[FTI_RS_MAX_GROUP], have_p[FTI_RS_MAX_GROUP];
    const hpc_source *psrc[FTI_RS_MAX_GROUP];
    int64_t max_fs;
} rs_group;

/* Find the data files and the encoded (RSed) files of rank r's group. */
static void rs_find(hpc_container *c, fti *f, const fti_ck_files *cf, rs_group *rg)
{
    rg->max_fs = -1;
    for (uint32_t j = 0; j < rg->g; j++) {
        const fti_rank *o = ck_rank(f, cf, rg->mem[j]);
        if (o && o->origin == FTI_O_FILE && o->meta.max_fs > 0) {
            if (rg->max_fs < 0)
                rg->max_fs = o->meta.max_fs;
            rg->have_d[j] = o->meta.max_fs == rg->max_fs;
        }
    }
    for (uint32_t j = 0; j < rg->g; j++) {
        const fti_found *x = cf->rsed[rg->mem[j]];
        fti_meta m;
        uint64_t size;
        if (!x || fti_peek_meta(x->path, &m, &size) != HPC_OK)
            continue;
        if (rg->max_fs < 0)
            rg->max_fs = m.max_fs;
        if (m.max_fs != rg->max_fs || m.fs != rg->max_fs ||
            size != (uint64_t)rg->max_fs + m.lay->meta)
            continue;
        rg->psrc[j] = fti_source(c, f, x->path, NULL);
        rg->have_p[j] = rg->psrc[j] != NULL;
    }
}

/* The decoding job of the pieces with a coefficient; *used names them. */
static fti_rsjob *rs_job(fti *f, const fti_ck_files *cf, const rs_group *rg, const uint16_t *cd,
                         const uint16_t *cp, GString *used)
{
    fti_rsjob *job = g_new0(fti_rsjob, 1);
    job->max_fs = (uint64_t)rg->max_fs;
    job->fs = job->max_fs;
    for (uint32_t j = 0; j < rg->g; j++) {
        if (cd[j]) {
            const fti_rank *o = ck_rank(f, cf, rg->mem[j]);
            job->pieces[job->npieces++] = (fti_piece){ o->src, o->size, 0, cd[j] };
            g_string_append_printf(used, "%sRank%d", used->len ? "," : "", rg->mem[j]);
        }
        if (cp[j]) {
            job->pieces[job->npieces++] = (fti_piece){ rg->psrc[j], job->max_fs, 1, cp[j] };
            g_string_append_printf(used, "%sRSed%d", used->len ? "," : "", rg->mem[j]);
        }
    }
    return job;
}

/* Parse the rebuilt file of job as rank r; on success the rank (owning
 * job) joins f->ranks, else job is freed. */
static int rs_adopt(hpc_container *c, fti *f, fti_rsjob *job, int32_t ckpt, int32_t r,
                    uint32_t g, const char *used, GString *why)
{
    /* the real size sits in the last 8 bytes of the encoded piece */
    unsigned char sz[8];
    int rc = fti_rs_decode(job, sz, 8, job->max_fs - 8);
    uint64_t fs = hpc_le64(sz);
    if (rc == HPC_OK && (fs < 82 || fs > job->max_fs - 8)) {
        g_string_append_printf(why, "; RS rebuild gives a size of %" PRIu64 " bytes, not a "
                               "file of at most %" PRIu64, fs, job->max_fs - 8);
        rc = HPC_E_CORRUPT;
    }
    if (rc != HPC_OK) {
        g_free(job);
        return rc;
    }
    job->fs = fs;
    char *vpath = g_strdup_printf("(Ckpt%d-Rank%d.fti rebuilt from %s)", ckpt, r, used);
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
                                  g, used);
        g_array_append_val(f->ranks, rk);
    }
    g_clear_error(&e);
    return rc;
}

/* Rebuild lost rank r from its Reed-Solomon group. */
static int recover_l3(hpc_container *c, fti *f, const fti_ck_files *cf, const fti_topo *t,
                      int32_t ckpt, int32_t r, GString *why)
{
    rs_group rg = { .g = t->group };
    if (!fti_topo_group(t, r, rg.mem, &rg.pos)) {
        g_string_append(why, "; not in a complete RS group");
        return HPC_E_NOENT;
    }
    rs_find(c, f, cf, &rg);
    uint16_t cd[FTI_RS_MAX_GROUP], cp[FTI_RS_MAX_GROUP];
    if (rg.max_fs < 16 || fti_rs_coeffs(rg.g, rg.have_d, rg.have_p, rg.pos, cd, cp) != 0) {
        int nd = 0, np = 0;
        for (uint32_t j = 0; j < rg.g; j++) {
            nd += rg.have_d[j];
            np += rg.have_p[j];
        }
        g_string_append_printf(why, "; RS group of %u has %d data and %d parity pieces, %u needed",
                               rg.g, nd, np, rg.g);
        return HPC_E_NOENT;
    }
    GString *used = g_string_new(NULL);
    fti_rsjob *job = rs_job(f, cf, &rg, cd, cp, used);
    int rc = rs_adopt(c, f, job, ckpt, r, rg.g, used->str, why);
    g_string_free(used, TRUE);
    return rc;
}

/* Remember rank r of checkpoint ck as lost, for the tree. */
static void add_lost(fti *f, int32_t ckpt, uint32_t r, const char *fmt, ...) G_GNUC_PRINTF(4, 5);
static void add_lost(fti *f, int32_t ckpt, uint32_t r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fti_lost l = { ckpt, (int32_t)r, g_strdup_vprintf(fmt, ap) };
    va_end(ap);
    fti_warn(f, "checkpoint %d rank %u: %s", ckpt, r, l.why);
    g_array_append_val(f->lost, l);
}

/* Serve every lost rank of ck from its group. */
static void recover_all(hpc_container *c, fti *f, fti_ck_files *cf, const fti_topo *t,
                        const fti_ckpt *ck)
{
    for (uint32_t r = 0; r < cf->nranks; r++) {
        if (cf->have[r] >= 0 || fti_topo_is_head(t, r))
            continue;
        GString *why = g_string_new(NULL);
        const char *state = cf->rank[r] ? "unusable" : "missing";
        int rc = ck->level == FTI_L3 ? recover_l3(c, f, cf, t, ck->id, (int32_t)r, why)
                                     : recover_l2(c, f, cf, t, ck->id, (int32_t)r, why);
        if (rc == HPC_OK) {
            cf->have[r] = (int32_t)f->ranks->len - 1;
            const fti_rank *rk = ck_rank(f, cf, (int32_t)r);
            fti_warn(f, "checkpoint %d rank %u: Rank file %s; served from %s", ck->id, r,
                     state, rk->path);
        } else {
            add_lost(f, ck->id, r, "Rank file %s and not recoverable%s", state, why->str);
        }
        g_string_free(why, TRUE);
    }
}

/* Make room for ranks [cf->nranks, n): none of them has a file. */
static void cf_grow(fti_ck_files *cf, uint32_t n)
{
    if (n <= cf->nranks)
        return;
    cf->rank = g_renew(const fti_found *, cf->rank, n);
    cf->pcof = g_renew(const fti_found *, cf->pcof, n);
    cf->rsed = g_renew(const fti_found *, cf->rsed, n);
    cf->have = g_renew(int32_t, cf->have, n);
    for (uint32_t r = cf->nranks; r < n; r++) {
        cf->rank[r] = cf->pcof[r] = cf->rsed[r] = NULL;
        cf->have[r] = -1;
    }
    cf->nranks = n;
}

int fti_recover_ckpt(hpc_container *c, fti *f, fti_ck_files *cf, fti_ckpt *ck, GError **err)
{
    fti_topo t;
    int rc = fti_topo_build(f, cf, &t, err);
    if (rc == HPC_OK && t.why) {
        ck->topo = g_strdup_printf("groups unknown: %s", t.why);
        for (uint32_t r = 0; r < cf->nranks; r++)
            if (cf->have[r] < 0)
                add_lost(f, ck->id, r, "Rank file %s and not recovered: the L2/L3 groups are "
                         "unknown: %s", cf->rank[r] ? "unusable" : "missing", t.why);
        fti_topo_free(&t);
        return HPC_OK;
    }
    if (rc != HPC_OK) {
        fti_topo_free(&t);
        return rc;
    }
    cf_grow(cf, t.nranks);
    ck->group = t.group;
    ck->topo = g_strdup(t.how);
    recover_all(c, f, cf, &t, ck);
    fti_topo_free(&t);
    return HPC_OK;
}
