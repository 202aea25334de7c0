/* fti_meta.c - the FTI-FF file meta (four layouts, told apart by myHash),
 * parsing one checkpoint file into ranks, variables and chunks, and the
 * reader's one rollback path (fti_snap).  See docs/fti.md. */
#include "fti.h"
#include "hpc_bytes.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const fti_layout fti_layouts[] = {
    { "i64 (FTI master)", 106, 8, 4, 12, 58, 0 },
    { "i32 (FTI v1.5-v1.6)", 82, 4, 4, 8, 50, 0 },
    { "v1.4", 110, 8, 8, 12, 58, 0 },
    { "v1.3", 110, 8, 8, 12, 62, 1 },
};

/* Sign-extend a w-byte field. */
int64_t fti_les(const unsigned char *p, unsigned w)
{
    uint64_t v = hpc_load_uint(p, w, FALSE);
    if (w == 4)
        return (int32_t)(uint32_t)v;
    return (int64_t)v;
}

void fti_warn(fti *f, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    g_ptr_array_add(f->warnings, g_strdup_vprintf(fmt, ap));
    va_end(ap);
}

/* ---- file meta -------------------------------------------------------- */

/* Decode the meta of layout lay from its bytes m and check myHash. */
static void meta_decode(const fti_layout *lay, const unsigned char *m, fti_meta *out)
{
    unsigned w = lay->w;
    const unsigned char *s = m + 53;
    memset(out, 0, sizeof *out);
    out->lay = lay;
    memcpy(out->checksum, m, 33);
    out->checksum[32] = '\0';
    out->ckpt_id = (int32_t)fti_les(m + 49, 4);
    out->ckpt_size = fti_les(s, w);
    out->meta_size = fti_les(s + w, w);
    out->data_size = fti_les(s + 2 * w, w);
    out->fs = fti_les(s + 3 * w, w);
    out->max_fs = fti_les(s + 4 * w, w);
    out->pt_fs = fti_les(s + 5 * w, w);
    out->timestamp = hpc_load_uint(s + 6 * w, lay->tsw, FALSE);

    /* myHash covers the fields in an order of its own */
    unsigned char dig[16];
    gsize dlen = sizeof dig;
    GChecksum *h = g_checksum_new(G_CHECKSUM_MD5);
    g_checksum_update(h, m, 33);
    g_checksum_update(h, s + 6 * w, lay->tsw);
    for (unsigned k = 0; k < 4; k++)
        g_checksum_update(h, s + k * w, w);       /* ckptSize metaSize dataSize fs */
    g_checksum_update(h, s + 5 * w, w);           /* ptFs */
    g_checksum_update(h, s + 4 * w, w);           /* maxFs */
    g_checksum_get_digest(h, dig, &dlen);
    g_checksum_free(h);
    out->hash_ok = memcmp(dig, m + 33, 16) == 0;
}

int fti_reader_pread(const fti_reader *r, void *buf, size_t len, uint64_t off)
{
    uint64_t end;
    if (!hpc_add_u64(off, len, &end) || end > r->size)
        return HPC_E_CORRUPT;
    if (r->src)
        return hpc_source_pread(r->src, buf, len, off);
    return fti_rs_decode(r->rs, buf, len, off);
}

/* Do the block headers of layout m->lay lead exactly to the file meta? */
static int blocks_fit(const fti_reader *r, const fti_meta *m)
{
    const fti_layout *L = m->lay;
    uint64_t end = r->size - L->meta, p = (uint64_t)m->data_size;
    if (m->data_size < 0 || p > end)
        return 0;
    for (unsigned n = 0; p < end && n < 1000000; n++) {
        unsigned char h[4];
        if (end - p < L->hdr || fti_reader_pread(r, h, 4, p) != HPC_OK)
            return 0;
        int32_t nv = (int32_t)fti_les(h, 4);
        if (nv < 0 || (uint64_t)nv > (end - p - L->hdr) / L->rec)
            return 0;
        p += L->hdr + (uint64_t)nv * L->rec;
    }
    return p == end;
}

/* Find the layout whose myHash verifies; with nocheck fall back to the
 * first whose sizes agree with the file. */
int fti_meta_detect(const fti_reader *r, int nocheck, fti_meta *out, GError **err)
{
    unsigned char tail[FTI_MAX_META];
    if (r->size < fti_layouts[1].meta)
        return hpc_fail(err, HPC_E_CORRUPT, r->path, "file meta", 0,
                        "%" PRIu64 " bytes cannot hold an FTI-FF file meta (82 bytes at least)",
                        r->size);
    size_t have = (size_t)MIN((uint64_t)sizeof tail, r->size);
    int rc = fti_reader_pread(r, tail, have, r->size - have);
    if (rc != HPC_OK)
        return hpc_fail(err, rc, r->path, "file meta", r->size - have, "cannot read: %s",
                        hpc_strerror(rc));
    int fallback = -1, verified = -1;
    for (unsigned i = 0; i < G_N_ELEMENTS(fti_layouts); i++) {
        const fti_layout *lay = &fti_layouts[i];
        if (lay->meta > have)
            continue;
        fti_meta m;
        meta_decode(lay, tail + have - lay->meta, &m);
        if (m.hash_ok) {
            /* v1.3 and v1.4 share the file meta: the record size decides */
            if (blocks_fit(r, &m)) {
                *out = m;
                return HPC_OK;
            }
            if (verified < 0)
                verified = (int)i;
        }
        /* fs == size and 0 <= data_size <= fs, so fs - data_size cannot overflow */
        if (fallback < 0 && m.fs == (int64_t)r->size && m.data_size >= 0 &&
            m.data_size <= m.fs && m.fs - m.data_size == m.meta_size)
            fallback = (int)i;
    }
    if (verified >= 0) {        /* parse_rank will say what is wrong */
        const fti_layout *lay = &fti_layouts[verified];
        meta_decode(lay, tail + have - lay->meta, out);
        return HPC_OK;
    }
    if (nocheck && fallback >= 0) {
        const fti_layout *lay = &fti_layouts[fallback];
        meta_decode(lay, tail + have - lay->meta, out);
        return HPC_OK;
    }
    return hpc_fail(err, HPC_E_CORRUPT, r->path, "myHash", r->size - MIN(have, 106) + 33,
                    "the file meta verifies in no FTI-FF layout (i64, i32, v1.4, v1.3): "
                    "not an FTI-FF file, or its last bytes are damaged%s",
                    fallback >= 0 ? " (-o nocheck accepts it)" : "");
}

/* ---- one checkpoint file ---------------------------------------------- */

typedef struct rec_tmp {
    int32_t id;
    fti_chunk ch;
    int has;
} rec_tmp;

static int cmp_rec(const void *a, const void *b)
{
    const rec_tmp *x = a, *y = b;
    if (x->id != y->id)
        return x->id < y->id ? -1 : 1;
    if (x->ch.dptr != y->ch.dptr)
        return x->ch.dptr < y->ch.dptr ? -1 : 1;
    return (x->ch.fptr > y->ch.fptr) - (x->ch.fptr < y->ch.fptr);
}

static void md5_hex(GChecksum *h, char *hex33)
{
    g_strlcpy(hex33, g_checksum_get_string(h), 33);
}

/* The state of parsing one rank file's chunk records. */
typedef struct rank_parse {
    const fti_layout *L;
    const char *path;
    uint64_t ds;                 /* data size: where the metadata start */
    GArray *recs;                /* rec_tmp */
    GChecksum *all, *hc;         /* the two rules of the file checksum */
} rank_parse;

/* The file meta's sizes agree with the file. */
static int check_sizes(hpc_container *c, const fti_reader *r, const fti_meta *m, GError **err)
{
    const fti_layout *L = m->lay;
    uint64_t meta_at = r->size - L->meta;
    if (m->fs != (int64_t)r->size)
        return hpc_fail(err, HPC_E_CORRUPT, r->path, "fs", meta_at + 53 + 3 * L->w,
                        "the file meta says %" PRId64 " bytes but the file has %" PRIu64
                        " (truncated or extended)", m->fs, r->size);
    if (m->data_size < 0 || (uint64_t)m->data_size > meta_at)
        return hpc_fail(err, HPC_E_CORRUPT, r->path, "dataSize", meta_at + 53 + 2 * L->w,
                        "%" PRId64 " is not inside the file (metadata end at %" PRIu64 ")",
                        m->data_size, meta_at);
    if (m->meta_size != (int64_t)(r->size - (uint64_t)m->data_size) && !c->opts.nocheck)
        return hpc_fail(err, HPC_E_CORRUPT, r->path, "metaSize", meta_at + 53 + L->w,
                        "%" PRId64 ", but dataSize %" PRId64 " leaves %" PRIu64 " bytes",
                        m->meta_size, m->data_size, r->size - (uint64_t)m->data_size);
    return HPC_OK;
}

/* One chunk record at buf + at: decoded into rp->recs after its checks;
 * *bytes gets its container size. */
static int parse_record(rank_parse *rp, const unsigned char *buf, uint64_t at, uint64_t *bytes,
                        GError **err)
{
    const fti_layout *L = rp->L;
    const unsigned char *q = buf + at;
    unsigned o = 4 + (L->idx ? 4 : 0);
    rec_tmp t = { 0 };
    t.id = (int32_t)fti_les(q, 4);
    t.has = q[o + 4];
    t.ch.dptr = hpc_le64(q + o + 6);
    t.ch.fptr = hpc_le64(q + o + 14);
    int64_t cs = fti_les(q + o + 22, L->w), cts = fti_les(q + o + 22 + L->w, L->w);
    memcpy(t.ch.md5, q + o + 22 + 2 * L->w, 16);
    t.ch.rec_off = rp->ds + at;
    g_checksum_update(rp->all, t.ch.md5, 16);
    if (t.has)
        g_checksum_update(rp->hc, t.ch.md5, 16);
    if (cs < 0 || cts < cs)
        return hpc_fail(err, HPC_E_CORRUPT, rp->path, "chunksize", rp->ds + at + o + 22,
                        "variable %d: chunk of %" PRId64 " bytes in a container of %" PRId64,
                        t.id, cs, cts);
    *bytes = (uint64_t)cts;
    /* FTI adds every record's chunksize to the variable's size but copies
     * only chunks with content: it empties a container (a shrunk variable)
     * by clearing both; a container without content that still claims
     * bytes leaves bytes of the variable that no chunk holds */
    if (!t.has && cs > 0)
        return hpc_fail(err, HPC_E_CORRUPT, rp->path, "hascontent", rp->ds + at + o + 4,
                        "variable %d: a container without content claims a chunk of %" PRId64
                        " bytes, which FTI counts in the variable but stores nowhere",
                        t.id, cs);
    if (!t.has || cs == 0) {
        /* empty container: dptr and fptr are stale; it only says that the
         * id exists */
        t.has = 0;
        g_array_append_val(rp->recs, t);
        return HPC_OK;
    }
    t.ch.len = (uint64_t)cs;
    if (t.ch.fptr > rp->ds || t.ch.len > rp->ds - t.ch.fptr)
        return hpc_fail(err, HPC_E_CORRUPT, rp->path, "fptr", rp->ds + at + o + 14,
                        "variable %d: chunk [%" PRIu64 ", +%" PRIu64 ") is not inside "
                        "the data area of %" PRIu64 " bytes", t.id, t.ch.fptr, t.ch.len, rp->ds);
    g_array_append_val(rp->recs, t);
    return HPC_OK;
}

/* The block whose header is at buf + *p: its records; *p moves past it. */
static int parse_block(rank_parse *rp, fti *f, const unsigned char *buf, uint64_t mlen,
                       uint64_t *p, GError **err)
{
    const fti_layout *L = rp->L;
    uint64_t ds = rp->ds;
    if (mlen - *p < L->hdr)
        return hpc_fail(err, HPC_E_CORRUPT, rp->path, "block header", ds + *p,
                        "%" PRIu64 " bytes left before the file meta, a header needs %u",
                        mlen - *p, L->hdr);
    int32_t nv = (int32_t)fti_les(buf + *p, 4);
    int64_t dbsize = fti_les(buf + *p + 4, L->w);
    if (nv < 0 || (uint64_t)nv > (mlen - *p - L->hdr) / L->rec)
        return hpc_fail(err, HPC_E_CORRUPT, rp->path, "numvars", ds + *p,
                        "%d chunk records of %u bytes do not fit in the %" PRIu64
                        " bytes before the file meta", nv, L->rec, mlen - *p - L->hdr);
    uint64_t bsum = 0, at = *p + L->hdr;
    for (int32_t k = 0; k < nv; k++, at += L->rec) {
        uint64_t bytes = 0;
        int rc = parse_record(rp, buf, at, &bytes, err);
        if (rc != HPC_OK)
            return rc;
        bsum += bytes;
    }
    if (dbsize < 0 || (uint64_t)dbsize != bsum)
        fti_warn(f, "%s: block at %" PRIu64 ": dbsize %" PRId64 " differs from its containers' "
                 "%" PRIu64 " bytes", rp->path, ds + *p, dbsize, bsum);
    *p = at;
    return HPC_OK;
}

/* The file checksum: FTI writes one rule and verifies another. */
static void check_file_sum(rank_parse *rp, fti *f, fti_rank *rk)
{
    char hex_all[33], hex_hc[33];
    md5_hex(rp->all, hex_all);
    md5_hex(rp->hc, hex_hc);
    if (strcmp(hex_all, rk->meta.checksum) == 0)
        rk->sum_rule = "ok (all records)";
    else if (strcmp(hex_hc, rk->meta.checksum) == 0)
        rk->sum_rule = "ok (records with content)";
    else
        fti_warn(f, "%s: file checksum %s matches neither rule (%s / %s): chunk records altered?",
                 rp->path, rk->meta.checksum, hex_all, hex_hc);
}

/* Variables: each id's chunks must tile [0, size) exactly. */
static int tile_vars(rank_parse *rp, fti *f, fti_rank *rk, GError **err)
{
    GArray *recs = rp->recs;
    if (recs->len > 1)
        qsort(recs->data, recs->len, sizeof(rec_tmp), cmp_rec);
    rk->first_var = f->vars->len;
    for (guint i = 0; i < recs->len;) {
        rec_tmp *t0 = &g_array_index(recs, rec_tmp, i);
        fti_var v = { .id = t0->id, .rank = f->ranks->len, .first = f->chunks->len };
        guint j = i;
        for (; j < recs->len && g_array_index(recs, rec_tmp, j).id == t0->id; j++) {
            rec_tmp *t = &g_array_index(recs, rec_tmp, j);
            if (!t->has)
                continue;
            if (t->ch.dptr != v.size)
                return hpc_fail(err, HPC_E_CORRUPT, rp->path, "dptr", t->ch.rec_off,
                                "variable %d: chunk at variable offset %" PRIu64 " where %"
                                PRIu64 " was expected (chunks overlap or leave a hole)",
                                t->id, t->ch.dptr, v.size);
            v.size += t->ch.len;
            g_array_append_val(f->chunks, t->ch);
            v.n++;
        }
        g_array_append_val(f->vars, v);
        f->total_bytes += v.size;
        i = j;
    }
    rk->nvars = f->vars->len - rk->first_var;
    return HPC_OK;
}

/* Parse file r as rank rk (meta already known): blocks, records, variables. */
int fti_parse_rank(hpc_container *c, fti *f, const fti_reader *r, fti_rank *rk, GError **err)
{
    const fti_meta *m = &rk->meta;
    unsigned char *buf = NULL;
    rank_parse rp = { .L = m->lay, .path = r->path, .recs = g_array_new(FALSE, FALSE, sizeof(rec_tmp)),
                      .all = g_checksum_new(G_CHECKSUM_MD5), .hc = g_checksum_new(G_CHECKSUM_MD5) };
    int rc = check_sizes(c, r, m, err);
    if (rc != HPC_OK)
        goto out;
    uint64_t ds = (uint64_t)m->data_size, mlen = r->size - m->lay->meta - ds;
    rp.ds = ds;
    buf = g_malloc(mlen ? mlen : 1);
    rc = fti_reader_pread(r, buf, (size_t)mlen, ds);
    if (rc != HPC_OK) {
        rc = hpc_fail(err, rc, r->path, "block header", ds, "cannot read the metadata: %s",
                      hpc_strerror(rc));
        goto out;
    }
    for (uint64_t p = 0; p < mlen; rk->nblocks++)
        if ((rc = parse_block(&rp, f, buf, mlen, &p, err)) != HPC_OK)
            goto out;
    check_file_sum(&rp, f, rk);
    rc = tile_vars(&rp, f, rk, err);
out:
    g_free(buf);
    g_array_free(rp.recs, TRUE);
    g_checksum_free(rp.all);
    g_checksum_free(rp.hc);
    return rc;
}

/* Recovery may try a file more than once: each is opened once. */
const hpc_source *fti_source(hpc_container *c, fti *f, const char *path, GError **err)
{
    hpc_source *s = g_hash_table_lookup(f->srcs, path);
    if (!s) {
        s = c->host->add_source(c, path, err);
        if (s)
            g_hash_table_insert(f->srcs, g_strdup(path), s);
    }
    return s;
}

int fti_add_file(hpc_container *c, fti *f, const char *path, int32_t ckpt, int32_t rank,
                 fti_origin origin, const char *note, GError **err)
{
    fti_snap snap;
    fti_snap_take(f, &snap);
    const hpc_source *src = fti_source(c, f, path, err);
    if (!src)
        return HPC_E_IO;
    fti_reader r = { src, NULL, src->size, src->path };
    fti_rank rk = { .ckpt = ckpt, .rank = rank, .origin = origin, .src = src,
                    .size = src->size };
    int rc = fti_meta_detect(&r, c->opts.nocheck, &rk.meta, err);
    if (rc == HPC_OK && ckpt >= 0 && rk.meta.ckpt_id != ckpt && origin != FTI_O_DCP)
        rc = hpc_fail(err, HPC_E_CORRUPT, path, "ckptId", src->size - rk.meta.lay->meta + 49,
                      "%d, but the file name says checkpoint %d", rk.meta.ckpt_id, ckpt);
    if (rc == HPC_OK && rk.meta.data_size == 0 && rk.meta.meta_size == 0 && rk.meta.max_fs > 0)
        rc = hpc_fail(err, HPC_E_UNSUPPORTED, path, NULL, 0,
                      "an L3 Reed-Solomon parity (RSed) file holds no variables; "
                      "mount the checkpoint directory instead");
    if (rc == HPC_OK)
        rc = fti_parse_rank(c, f, &r, &rk, err);
    if (rc != HPC_OK) {
        fti_snap_restore(f, &snap, NULL);
        return rc;
    }
    if (rk.ckpt < 0)
        rk.ckpt = rk.meta.ckpt_id;
    rk.path = g_strdup(path);
    rk.note = g_strdup(note);
    g_array_append_val(f->ranks, rk);
    return HPC_OK;
}


int fti_peek_meta(const char *path, fti_meta *m, uint64_t *size)
{
    hpc_source s;
    if (hpc_source_open(path, &s, NULL) != HPC_OK)
        return HPC_E_IO;
    fti_reader r = { &s, NULL, s.size, s.path };
    int rc = fti_meta_detect(&r, 0, m, NULL);
    *size = s.size;
    hpc_source_close(&s);
    return rc;
}

/* ---- the one rollback path ------------------------------------------- */

void fti_rank_clear(fti_rank *rk)
{
    g_free(rk->rs);
    g_free(rk->path);
    g_free(rk->note);
    rk->rs = NULL;
    rk->path = rk->note = NULL;
}

void fti_snap_take(const fti *f, fti_snap *s)
{
    *s = (fti_snap){ f->ranks->len, f->vars->len, f->chunks->len, f->warnings->len,
                     f->total_bytes };
}

void fti_snap_restore(fti *f, const fti_snap *s, fti_ck_files *cf)
{
    for (guint i = s->ranks; i < f->ranks->len; i++) {
        fti_rank *rk = &g_array_index(f->ranks, fti_rank, i);
        if (cf && rk->rank >= 0 && (uint32_t)rk->rank < cf->nranks &&
            cf->have[rk->rank] == (int32_t)i)
            cf->have[rk->rank] = -1;
        fti_rank_clear(rk);
    }
    g_array_set_size(f->ranks, s->ranks);
    g_array_set_size(f->vars, s->vars);
    g_array_set_size(f->chunks, s->chunks);
    g_ptr_array_set_size(f->warnings, s->warnings);
    f->total_bytes = s->total_bytes;
}
