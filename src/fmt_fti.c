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
 * Reed-Solomon group (fti_rs.c) through the block cache.  Chunk MD5s are
 * checked once per variable; a mismatch makes that variable fail with
 * HPC_E_CHECKSUM unless -o nocheck.
 *
 * See shared/spec/fti.md for the on-disk facts.
 */
#include "hpc_formats.h"
#include "fti_rs.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define FTI_MAX_META 110          /* largest file meta of all layouts */
#define FTI_MAX_RANK 100000000    /* ranks beyond this are not FTI ranks */
#define FTI_WALK_DEPTH 12
#define FTI_WALK_MAX 200000       /* directory entries looked at */
#define FTI_PROBE_MAX 4000
#define FTI_RS_SLICE (1u << 20)
/* Below this many variable bytes, every MD5 is checked at mount so that
 * .info can list damaged variables before anything is read. */
#define FTI_VERIFY_AT_OPEN (64ull << 20)

/* ---- layouts ---------------------------------------------------------- */

typedef struct fti_layout {
    const char *name;
    uint32_t meta;        /* bytes of the file meta */
    uint32_t w;           /* width of size fields: 8 or 4 */
    uint32_t tsw;         /* width of the timestamp */
    uint32_t hdr;         /* block header */
    uint32_t rec;         /* chunk record */
    uint32_t idx;         /* record has an i32 idx after id (v1.3) */
} fti_layout;

static const fti_layout fti_layouts[] = {
    { "i64 (FTI master)", 106, 8, 4, 12, 58, 0 },
    { "i32 (FTI v1.5-v1.6)", 82, 4, 4, 8, 50, 0 },
    { "v1.4", 110, 8, 8, 12, 58, 0 },
    { "v1.3", 110, 8, 8, 12, 62, 1 },
};

typedef struct fti_meta {
    const fti_layout *lay;
    char checksum[33];
    int hash_ok;              /* myHash verified */
    int32_t ckpt_id;
    int64_t ckpt_size, meta_size, data_size, fs, max_fs, pt_fs;
    uint64_t timestamp;
} fti_meta;

/* ---- state ------------------------------------------------------------ */

enum { K_RANK, K_PCOF, K_RSED, K_DCP };

enum { O_FILE, O_PARTNER, O_RS, O_DCP };
static const char *const origin_names[] = { "file", "partner-copy", "rs-rebuild", "dcp" };

enum { V_UNKNOWN = 0, V_OK = 1, V_BAD = 2 };

typedef struct fti_chunk {
    uint64_t fptr, dptr, len;
    uint8_t md5[16];
    uint64_t rec_off;         /* where its record lies, for messages */
} fti_chunk;

typedef struct fti_var {
    int32_t id;
    uint32_t rank;            /* index into ranks */
    uint64_t size;
    uint32_t first, n;        /* chunks[first .. first+n), sorted by dptr */
    gint state;               /* V_*, set once by the first verification */
    uint64_t bad_fptr;        /* file offset of the first bad chunk */
} fti_var;

typedef struct fti_piece {
    const hpc_source *src;
    uint64_t fs;              /* data piece: real size; parity: maxFs */
    int parity;
    uint16_t coef;
} fti_piece;

/* How to rebuild one rank's Rank file from its group. */
typedef struct fti_rsjob {
    uint64_t max_fs;
    uint64_t fs;              /* rebuilt file's size (from its last 8 bytes) */
    uint64_t space;           /* block cache space of the rebuilt bytes */
    unsigned npieces;
    fti_piece pieces[2 * FTI_RS_MAX_GROUP];
} fti_rsjob;

typedef struct fti_rank {
    int32_t ckpt, rank;
    int origin;
    const hpc_source *src;    /* NULL when rebuilt */
    fti_rsjob *rs;
    uint64_t size;
    fti_meta meta;
    const char *sum_rule;     /* which file-checksum rule matched, or NULL */
    uint32_t nblocks;
    uint32_t first_var, nvars;
    char *path;               /* the file the bytes come from */
    char *note;               /* how it was found */
} fti_rank;

typedef struct fti_ckpt {
    int32_t id;
    char level[8];
    uint32_t nranks_seen;     /* highest rank number seen + 1 */
    uint32_t group;           /* L2/L3 group size used, 0 if none */
    const char *group_from;
} fti_ckpt;

typedef struct fti {
    int single;
    GArray *ranks;            /* fti_rank */
    GArray *vars;             /* fti_var */
    GArray *chunks;           /* fti_chunk */
    GArray *ckpts;            /* fti_ckpt */
    GPtrArray *warnings;      /* char * */
    GHashTable *srcs;         /* path -> hpc_source *, each file opened once */
    char *config, *topology;  /* files found, or NULL */
    int cfg_group, cfg_node;  /* from config.fti, 0 if unknown */
    uint64_t total_bytes;
} fti;

/* ---- little helpers --------------------------------------------------- */

static uint64_t le(const unsigned char *p, unsigned w)
{
    uint64_t v = 0;
    for (unsigned i = w; i-- > 0;)
        v = (v << 8) | p[i];
    return v;
}

/* Sign-extend a w-byte field. */
static int64_t les(const unsigned char *p, unsigned w)
{
    uint64_t v = le(p, w);
    if (w == 4)
        return (int32_t)(uint32_t)v;
    return (int64_t)v;
}

static void warn(fti *f, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static void warn(fti *f, const char *fmt, ...)
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
    out->ckpt_id = (int32_t)les(m + 49, 4);
    out->ckpt_size = les(s, w);
    out->meta_size = les(s + w, w);
    out->data_size = les(s + 2 * w, w);
    out->fs = les(s + 3 * w, w);
    out->max_fs = les(s + 4 * w, w);
    out->pt_fs = les(s + 5 * w, w);
    out->timestamp = le(s + 6 * w, lay->tsw);

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

/* Reads of a file being parsed: a source, or a rank rebuilt from its group. */
typedef struct fti_reader {
    const hpc_source *src;
    fti_rsjob *rs;
    uint64_t size;
    const char *path;
} fti_reader;

static int rs_decode(fti_rsjob *job, void *out, size_t len, uint64_t off);

static int reader_pread(const fti_reader *r, void *buf, size_t len, uint64_t off)
{
    uint64_t end;
    if (__builtin_add_overflow(off, (uint64_t)len, &end) || end > r->size)
        return HPC_E_CORRUPT;
    if (r->src)
        return hpc_source_pread(r->src, buf, len, off);
    return rs_decode(r->rs, buf, len, off);
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
        if (end - p < L->hdr || reader_pread(r, h, 4, p) != HPC_OK)
            return 0;
        int32_t nv = (int32_t)les(h, 4);
        if (nv < 0 || (uint64_t)nv > (end - p - L->hdr) / L->rec)
            return 0;
        p += L->hdr + (uint64_t)nv * L->rec;
    }
    return p == end;
}

/* Find the layout whose myHash verifies; with nocheck fall back to the
 * first whose sizes agree with the file. */
static int meta_detect(const fti_reader *r, int nocheck, fti_meta *out, GError **err)
{
    unsigned char tail[FTI_MAX_META];
    if (r->size < fti_layouts[1].meta)
        return hpc_fail(err, HPC_E_CORRUPT, r->path, "file meta", 0,
                        "%" PRIu64 " bytes cannot hold an FTI-FF file meta (82 bytes at least)",
                        r->size);
    size_t have = (size_t)MIN((uint64_t)sizeof tail, r->size);
    int rc = reader_pread(r, tail, have, r->size - have);
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
        if (fallback < 0 && m.fs == (int64_t)r->size && m.data_size >= 0 &&
            m.data_size + m.meta_size == m.fs)
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

/* Parse file r as rank rk (meta already known): blocks, records, variables. */
static int parse_rank(hpc_container *c, fti *f, const fti_reader *r, fti_rank *rk, GError **err)
{
    const fti_meta *m = &rk->meta;
    const fti_layout *L = m->lay;
    const char *path = r->path;
    uint64_t meta_at = r->size - L->meta;
    unsigned char *buf = NULL;
    GArray *recs = g_array_new(FALSE, FALSE, sizeof(rec_tmp));
    GChecksum *all = g_checksum_new(G_CHECKSUM_MD5), *hc = g_checksum_new(G_CHECKSUM_MD5);
    int rc = HPC_OK;

    if (m->fs != (int64_t)r->size) {
        rc = hpc_fail(err, HPC_E_CORRUPT, path, "fs", meta_at + 53 + 3 * L->w,
                      "the file meta says %" PRId64 " bytes but the file has %" PRIu64
                      " (truncated or extended)", m->fs, r->size);
        goto out;
    }
    if (m->data_size < 0 || (uint64_t)m->data_size > meta_at) {
        rc = hpc_fail(err, HPC_E_CORRUPT, path, "dataSize", meta_at + 53 + 2 * L->w,
                      "%" PRId64 " is not inside the file (metadata end at %" PRIu64 ")",
                      m->data_size, meta_at);
        goto out;
    }
    if (m->meta_size != (int64_t)(r->size - (uint64_t)m->data_size) && !c->opts.nocheck) {
        rc = hpc_fail(err, HPC_E_CORRUPT, path, "metaSize", meta_at + 53 + L->w,
                      "%" PRId64 ", but dataSize %" PRId64 " leaves %" PRIu64 " bytes",
                      m->meta_size, m->data_size, r->size - (uint64_t)m->data_size);
        goto out;
    }
    uint64_t ds = (uint64_t)m->data_size, mlen = meta_at - ds;
    buf = g_malloc(mlen ? mlen : 1);
    rc = reader_pread(r, buf, (size_t)mlen, ds);
    if (rc != HPC_OK) {
        rc = hpc_fail(err, rc, path, "block header", ds, "cannot read the metadata: %s",
                      hpc_strerror(rc));
        goto out;
    }
    for (uint64_t p = 0; p < mlen;) {
        if (mlen - p < L->hdr) {
            rc = hpc_fail(err, HPC_E_CORRUPT, path, "block header", ds + p,
                          "%" PRIu64 " bytes left before the file meta, a header needs %u",
                          mlen - p, L->hdr);
            goto out;
        }
        int32_t nv = (int32_t)les(buf + p, 4);
        int64_t dbsize = les(buf + p + 4, L->w);
        if (nv < 0 || (uint64_t)nv > (mlen - p - L->hdr) / L->rec) {
            rc = hpc_fail(err, HPC_E_CORRUPT, path, "numvars", ds + p,
                          "%d chunk records of %u bytes do not fit in the %" PRIu64
                          " bytes before the file meta", nv, L->rec, mlen - p - L->hdr);
            goto out;
        }
        uint64_t bsum = 0, at = p + L->hdr;
        for (int32_t k = 0; k < nv; k++, at += L->rec) {
            const unsigned char *q = buf + at;
            unsigned o = 4 + (L->idx ? 4 : 0);
            rec_tmp t = { 0 };
            t.id = (int32_t)les(q, 4);
            t.has = q[o + 4];
            t.ch.dptr = le(q + o + 6, 8);
            t.ch.fptr = le(q + o + 14, 8);
            int64_t cs = les(q + o + 22, L->w), cts = les(q + o + 22 + L->w, L->w);
            memcpy(t.ch.md5, q + o + 22 + 2 * L->w, 16);
            t.ch.rec_off = ds + at;
            g_checksum_update(all, t.ch.md5, 16);
            if (t.has)
                g_checksum_update(hc, t.ch.md5, 16);
            if (cs < 0 || cts < cs) {
                rc = hpc_fail(err, HPC_E_CORRUPT, path, "chunksize", ds + at + o + 22,
                              "variable %d: chunk of %" PRId64 " bytes in a container of %"
                              PRId64, t.id, cs, cts);
                goto out;
            }
            bsum += (uint64_t)cts;
            if (!t.has || cs == 0) {
                /* empty container: dptr and fptr are stale; it only says
                 * that the id exists */
                t.has = 0;
                g_array_append_val(recs, t);
                continue;
            }
            t.ch.len = (uint64_t)cs;
            if (t.ch.fptr > ds || t.ch.len > ds - t.ch.fptr) {
                rc = hpc_fail(err, HPC_E_CORRUPT, path, "fptr", ds + at + o + 14,
                              "variable %d: chunk [%" PRIu64 ", +%" PRIu64 ") is not inside "
                              "the data area of %" PRIu64 " bytes", t.id, t.ch.fptr, t.ch.len, ds);
                goto out;
            }
            g_array_append_val(recs, t);
        }
        if (dbsize < 0 || (uint64_t)dbsize != bsum)
            warn(f, "%s: block at %" PRIu64 ": dbsize %" PRId64 " differs from its containers' "
                 "%" PRIu64 " bytes", path, ds + p, dbsize, bsum);
        rk->nblocks++;
        p = at;
    }

    /* the file checksum: FTI writes one rule and verifies another */
    char hex_all[33], hex_hc[33];
    md5_hex(all, hex_all);
    md5_hex(hc, hex_hc);
    if (strcmp(hex_all, m->checksum) == 0)
        rk->sum_rule = "ok (all records)";
    else if (strcmp(hex_hc, m->checksum) == 0)
        rk->sum_rule = "ok (records with content)";
    else
        warn(f, "%s: file checksum %s matches neither rule (%s / %s): chunk records altered?",
             path, m->checksum, hex_all, hex_hc);

    /* variables: each id's chunks must tile [0, size) exactly */
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
            if (t->ch.dptr != v.size) {
                rc = hpc_fail(err, HPC_E_CORRUPT, path, "dptr", t->ch.rec_off,
                              "variable %d: chunk at variable offset %" PRIu64 " where %" PRIu64
                              " was expected (chunks overlap or leave a hole)",
                              t->id, t->ch.dptr, v.size);
                goto out;
            }
            v.size += t->ch.len;
            g_array_append_val(f->chunks, t->ch);
            v.n++;
        }
        g_array_append_val(f->vars, v);
        f->total_bytes += v.size;
        i = j;
    }
    rk->nvars = f->vars->len - rk->first_var;
out:
    g_free(buf);
    g_array_free(recs, TRUE);
    g_checksum_free(all);
    g_checksum_free(hc);
    return rc;
}

/* The container's source of path, opened on first use (recovery may try
 * a file more than once). */
static const hpc_source *fti_source(hpc_container *c, fti *f, const char *path, GError **err)
{
    hpc_source *s = g_hash_table_lookup(f->srcs, path);
    if (!s) {
        s = hpc_container_add_source(c, path, err);
        if (s)
            g_hash_table_insert(f->srcs, g_strdup(path), s);
    }
    return s;
}

/* Open path, read its meta and parse it into a new rank; on failure the
 * ranks, vars and chunks arrays are left as they were. */
static int add_file(hpc_container *c, fti *f, const char *path, int32_t ckpt, int32_t rank,
                    int origin, const char *note, GError **err)
{
    guint nv = f->vars->len, nc = f->chunks->len;
    uint64_t tb = f->total_bytes;
    const hpc_source *src = fti_source(c, f, path, err);
    if (!src)
        return HPC_E_IO;
    fti_reader r = { src, NULL, src->size, src->path };
    fti_rank rk = { .ckpt = ckpt, .rank = rank, .origin = origin, .src = src,
                    .size = src->size };
    int rc = meta_detect(&r, c->opts.nocheck, &rk.meta, err);
    if (rc == HPC_OK && ckpt >= 0 && rk.meta.ckpt_id != ckpt && origin != O_DCP)
        rc = hpc_fail(err, HPC_E_CORRUPT, path, "ckptId", src->size - rk.meta.lay->meta + 49,
                      "%d, but the file name says checkpoint %d", rk.meta.ckpt_id, ckpt);
    if (rc == HPC_OK && rk.meta.data_size == 0 && rk.meta.meta_size == 0 && rk.meta.max_fs > 0)
        rc = hpc_fail(err, HPC_E_UNSUPPORTED, path, NULL, 0,
                      "an L3 Reed-Solomon parity (RSed) file holds no variables; "
                      "mount the checkpoint directory instead");
    if (rc == HPC_OK)
        rc = parse_rank(c, f, &r, &rk, err);
    if (rc != HPC_OK) {
        g_array_set_size(f->vars, nv);
        g_array_set_size(f->chunks, nc);
        f->total_bytes = tb;
        return rc;
    }
    if (rk.ckpt < 0)
        rk.ckpt = rk.meta.ckpt_id;
    rk.path = g_strdup(path);
    rk.note = g_strdup(note);
    g_array_append_val(f->ranks, rk);
    return HPC_OK;
}

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
static int rs_decode(fti_rsjob *job, void *out, size_t len, uint64_t off)
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
    return rs_decode(x->job, buf, *len, off);
}

/* ---- reading variables ------------------------------------------------ */

static int rank_read(hpc_container *c, const fti_rank *rk, void *buf, size_t len, uint64_t off)
{
    hpc_cache *cache = hpc_container_cache(c);
    if (!cache)
        return HPC_E_NOMEM;
    if (rk->src)
        return hpc_cache_read_source(cache, rk->src, buf, len, off);
    rs_fill_ctx x = { rk->rs, hpc_cache_block_size(cache) };
    return hpc_cache_read(cache, rk->rs->space, buf, len, off, rs_fill, &x);
}

/* Check every chunk MD5 of v once; returns V_OK, V_BAD or an hpc_err. */
static int var_verify(hpc_container *c, fti_var *v)
{
    int st = g_atomic_int_get(&v->state);
    if (st != V_UNKNOWN)
        return st;
    fti *f = c->priv;
    const fti_rank *rk = &g_array_index(f->ranks, fti_rank, v->rank);
    const fti_chunk *ch = &g_array_index(f->chunks, fti_chunk, v->first);
    size_t blen = (size_t)MIN((uint64_t)FTI_RS_SLICE, MAX(v->size, 1));
    char *buf = g_malloc(blen);
    GChecksum *h = g_checksum_new(G_CHECKSUM_MD5);
    int rc = HPC_OK;
    uint64_t bad = UINT64_MAX;
    for (uint32_t i = 0; i < v->n && rc == HPC_OK && bad == UINT64_MAX; i++) {
        g_checksum_reset(h);
        for (uint64_t done = 0; done < ch[i].len && rc == HPC_OK;) {
            size_t n = (size_t)MIN((uint64_t)blen, ch[i].len - done);
            /* own files: straight from the file, as zero-copy reads bypass
             * the cache anyway; rebuilt ranks: decoded once into the cache */
            rc = rk->src ? hpc_source_pread(rk->src, buf, n, ch[i].fptr + done)
                         : rank_read(c, rk, buf, n, ch[i].fptr + done);
            g_checksum_update(h, (const guchar *)buf, n);
            done += n;
        }
        uint8_t dig[16];
        gsize dl = sizeof dig;
        g_checksum_get_digest(h, dig, &dl);
        if (rc == HPC_OK && memcmp(dig, ch[i].md5, 16) != 0)
            bad = ch[i].fptr;
    }
    g_checksum_free(h);
    g_free(buf);
    if (rc != HPC_OK)
        return rc;           /* I/O trouble: try again next time */
    v->bad_fptr = bad;
    st = bad == UINT64_MAX ? V_OK : V_BAD;
    if (g_atomic_int_compare_and_exchange(&v->state, V_UNKNOWN, st) && st == V_BAD) {
        hpc_log("%s: checkpoint %d rank %d variable %d: MD5 of the chunk at offset %" PRIu64
                " does not match its record: reads fail with EIO (-o nocheck serves them)",
                rk->path, rk->ckpt, rk->rank, v->id, bad);
        hpc_container_info_changed(c);
    }
    return st;
}

/* The variable of node ino, its MD5s checked first unless nocheck. */
static int checked_var(hpc_container *c, hpc_ino ino, fti_var **out)
{
    fti *f = c->priv;
    uint64_t data;
    if (hpc_tree_data(c->tree, ino, &data) != HPC_OK)
        return HPC_E_NOENT;
    if (data == 0)
        return HPC_E_ISDIR;
    fti_var *v = &g_array_index(f->vars, fti_var, data - 1);
    if (!c->opts.nocheck) {
        int st = var_verify(c, v);
        if (st < 0)
            return st;
        if (st == V_BAD)
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
        rc = rank_read(c, rk, p + done, take, ch[i].fptr + in);
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
        ext[(*n)++] = (hpc_extent){ rk->src, ch[i].fptr + in, take };
        off += take;
        len -= take;
    }
    return HPC_OK;
}

/* ---- discovery -------------------------------------------------------- */

typedef struct fti_found {
    int kind;
    int32_t ckpt, rank;
    char *path;
} fti_found;

/* Parse a decimal number at *p (no sign, at most 9 digits). */
static int eat_num(const char **p, int32_t *v)
{
    const char *s = *p;
    int32_t n = 0;
    int digits = 0;
    while (g_ascii_isdigit(*s) && digits < 10) {
        n = n * 10 + (*s - '0');
        s++;
        digits++;
    }
    if (digits == 0 || digits > 9 || g_ascii_isdigit(*s))
        return 0;
    *p = s;
    *v = n;
    return 1;
}

/* Recognise FTI-FF file names; returns 1 and fills kind/ckpt/rank. */
static int parse_name(const char *name, int *kind, int32_t *ckpt, int32_t *rank)
{
    const char *p = name;
    *ckpt = -1;
    if (g_str_has_prefix(p, "dCPFile-Rank")) {
        p += 12;
        *kind = K_DCP;
    } else {
        if (!g_str_has_prefix(p, "Ckpt"))
            return 0;
        p += 4;
        if (!eat_num(&p, ckpt) || *p++ != '-')
            return 0;
        if (g_str_has_prefix(p, "Rank"))
            *kind = K_RANK;
        else if (g_str_has_prefix(p, "Pcof"))
            *kind = K_PCOF;
        else if (g_str_has_prefix(p, "RSed"))
            *kind = K_RSED;
        else
            return 0;
        p += 4;
    }
    return eat_num(&p, rank) && strcmp(p, ".fti") == 0;
}

typedef struct walk_ctx {
    GArray *found;
    char *config, *topology;
    unsigned seen;
    int stop_at_first;      /* probe */
} walk_ctx;

static void walk(walk_ctx *w, const char *dir, int depth)
{
    GDir *d = g_dir_open(dir, 0, NULL);
    if (!d)
        return;
    const char *name;
    unsigned limit = w->stop_at_first ? FTI_PROBE_MAX : FTI_WALK_MAX;
    while ((name = g_dir_read_name(d)) && w->seen < limit) {
        w->seen++;
        char *p = g_build_filename(dir, name, NULL);
        struct stat st;
        int kind;
        int32_t ck, rk;
        if (lstat(p, &st) != 0) {
            g_free(p);
            continue;
        }
        if (S_ISDIR(st.st_mode)) {
            if (depth < FTI_WALK_DEPTH && !(w->stop_at_first && w->found->len))
                walk(w, p, depth + 1);
        } else if (S_ISREG(st.st_mode) && parse_name(name, &kind, &ck, &rk)) {
            if (rk <= FTI_MAX_RANK) {
                fti_found x = { kind, ck, rk, p };
                g_array_append_val(w->found, x);
                p = NULL;
            }
        } else if (S_ISREG(st.st_mode) && strcmp(name, "config.fti") == 0 && !w->config) {
            w->config = p;
            p = NULL;
        } else if (S_ISREG(st.st_mode) && strcmp(name, "Topology.fti") == 0 && !w->topology) {
            w->topology = p;
            p = NULL;
        }
        g_free(p);
        if (w->stop_at_first && w->found->len)
            break;
    }
    g_dir_close(d);
}

static int cmp_found(const void *a, const void *b)
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

static int fti_probe(const char *path, const unsigned char *head, size_t len)
{
    (void)head;
    (void)len;
    struct stat st;
    if (stat(path, &st) != 0)
        return 0;
    if (S_ISDIR(st.st_mode)) {
        walk_ctx w = { .found = g_array_new(FALSE, FALSE, sizeof(fti_found)),
                       .stop_at_first = 1 };
        walk(&w, path, 0);
        int score = w.found->len ? 80 : 0;
        for (guint i = 0; i < w.found->len; i++)
            g_free(g_array_index(w.found, fti_found, i).path);
        g_array_free(w.found, TRUE);
        g_free(w.config);
        g_free(w.topology);
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
    int score = meta_detect(&r, 0, &m, NULL) == HPC_OK ? 90 : g_str_has_suffix(path, ".fti") ? 5 : 0;
    hpc_source_close(&s);
    return score;
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

/* Per-checkpoint view of the files found. */
typedef struct ck_files {
    uint32_t nranks;
    const fti_found **rank, **pcof, **rsed;   /* by rank number */
    int32_t *have;                            /* index into f->ranks, -1 if none */
} ck_files;

static const fti_rank *ck_rank(const fti *f, const ck_files *cf, int32_t r)
{
    if (r < 0 || (uint32_t)r >= cf->nranks || cf->have[r] < 0)
        return NULL;
    return &g_array_index(f->ranks, fti_rank, cf->have[r]);
}

/* Read the meta of a file that is only looked at (Pcof, RSed). */
static int peek_meta(const char *path, fti_meta *m, uint64_t *size)
{
    hpc_source s;
    if (hpc_source_open(path, &s, NULL) != HPC_OK)
        return HPC_E_IO;
    fti_reader r = { &s, NULL, s.size, s.path };
    int rc = meta_detect(&r, 0, m, NULL);
    *size = s.size;
    hpc_source_close(&s);
    return rc;
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
            if (own && peek_meta(cf->pcof[q]->path, &m, &size) == HPC_OK) {
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
                    if (peek_meta(cf->rsed[q]->path, &m, &size) == HPC_OK) {
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
    int rc = add_file(c, f, path, ckpt, r, O_PARTNER, note, &e);
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
        if (o && o->origin == O_FILE && o->meta.max_fs > 0) {
            if (max_fs < 0)
                max_fs = o->meta.max_fs;
            have_d[j] = o->meta.max_fs == max_fs;
        }
    }
    for (uint32_t j = 0; j < g; j++) {
        const fti_found *x = cf->rsed[mem[j]];
        fti_meta m;
        uint64_t size;
        if (!x || peek_meta(x->path, &m, &size) != HPC_OK)
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
    int rc = rs_decode(job, sz, 8, job->max_fs - 8);
    uint64_t fs = le(sz, 8);
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
    fti_rank rk = { .ckpt = ckpt, .rank = r, .origin = O_RS, .rs = job, .size = fs };
    GError *e = NULL;
    guint nv = f->vars->len, nc = f->chunks->len;
    uint64_t tb = f->total_bytes;
    rc = meta_detect(&rd, 0, &rk.meta, &e);
    if (rc == HPC_OK)
        rc = parse_rank(c, f, &rd, &rk, &e);
    if (rc != HPC_OK) {
        g_string_append_printf(why, "; RS rebuild: %s", e ? e->message : hpc_strerror(rc));
        g_array_set_size(f->vars, nv);
        g_array_set_size(f->chunks, nc);
        f->total_bytes = tb;
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

/* Load config.fti: group_size and node_size. */
static void load_config(fti *f)
{
    GKeyFile *k = g_key_file_new();
    if (f->config && g_key_file_load_from_file(k, f->config, G_KEY_FILE_NONE, NULL)) {
        f->cfg_group = g_key_file_get_integer(k, "basic", "group_size", NULL);
        f->cfg_node = g_key_file_get_integer(k, "basic", "node_size", NULL);
    }
    g_key_file_free(k);
}

/* What open_ckpt may undo when a group size turns out wrong. */
typedef struct fti_snap {
    guint ranks, vars, chunks, warnings;
    uint64_t total_bytes;
} fti_snap;

static void snap_take(const fti *f, fti_snap *s)
{
    *s = (fti_snap){ f->ranks->len, f->vars->len, f->chunks->len, f->warnings->len,
                     f->total_bytes };
}

static void snap_restore(fti *f, const fti_snap *s, ck_files *cf)
{
    for (guint i = s->ranks; i < f->ranks->len; i++) {
        fti_rank *rk = &g_array_index(f->ranks, fti_rank, i);
        if (rk->rank >= 0 && (uint32_t)rk->rank < cf->nranks && cf->have[rk->rank] == (int32_t)i)
            cf->have[rk->rank] = -1;
        g_free(rk->rs);
        g_free(rk->path);
        g_free(rk->note);
    }
    g_array_set_size(f->ranks, s->ranks);
    g_array_set_size(f->vars, s->vars);
    g_array_set_size(f->chunks, s->chunks);
    g_ptr_array_set_size(f->warnings, s->warnings);
    f->total_bytes = s->total_bytes;
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
        if (strcmp(ck->level, "L2") == 0)
            rc = recover_l2(c, f, cf, t, g, ck->id, (int32_t)r, why);
        else if (strcmp(ck->level, "L3") == 0)
            rc = recover_l3(c, f, cf, t, g, ck->id, (int32_t)r, why);
        if (rc == HPC_OK) {
            cf->have[r] = (int32_t)f->ranks->len - 1;
            const fti_rank *rk = ck_rank(f, cf, (int32_t)r);
            warn(f, "checkpoint %d rank %u: Rank file %s; served from %s", ck->id, r,
                 cf->rank[r] ? "unusable" : "missing", rk->path);
            got++;
        } else {
            warn(f, "checkpoint %d rank %u: Rank file %s and not recoverable%s", ck->id, r,
                 cf->rank[r] ? "unusable" : "missing", why->str);
        }
        g_string_free(why, TRUE);
    }
    return got;
}

/* Every rank of checkpoint `ck` from the files found[lo..hi). */
static int open_ckpt(hpc_container *c, fti *f, fti_found *found, guint lo, guint hi, GError **err)
{
    fti_ckpt ck = { .id = found[lo].ckpt };
    ck_files cf = { 0 };
    int rc = HPC_OK, recoverable = 0;
    /* rank numbers far beyond the files found are not a checkpoint's ranks
     * (and would size the per-rank tables) */
    uint64_t rank_limit = MAX(4 * (uint64_t)(hi - lo) + 64, (uint64_t)1 << 20);
    for (guint i = lo; i < hi; i++)
        if ((uint64_t)found[i].rank < rank_limit)
            cf.nranks = MAX(cf.nranks, (uint32_t)found[i].rank + 1);
    cf.rank = g_new0(const fti_found *, cf.nranks);
    cf.pcof = g_new0(const fti_found *, cf.nranks);
    cf.rsed = g_new0(const fti_found *, cf.nranks);
    cf.have = g_new(int32_t, cf.nranks);
    for (uint32_t r = 0; r < cf.nranks; r++)
        cf.have[r] = -1;
    for (guint i = lo; i < hi; i++) {
        const fti_found *x = &found[i];
        if ((uint64_t)x->rank >= rank_limit) {
            warn(f, "%s: rank %d is far beyond the %u files of checkpoint %d; ignored",
                 x->path, x->rank, hi - lo, ck.id);
            continue;
        }
        const fti_found **slot = x->kind == K_PCOF ? cf.pcof : x->kind == K_RSED ? cf.rsed : cf.rank;
        if (slot[x->rank]) {
            warn(f, "%s: checkpoint %d rank %d already comes from %s; ignored", x->path,
                 ck.id, x->rank, slot[x->rank]->path);
            continue;
        }
        slot[x->rank] = x;
        recoverable |= x->kind == K_PCOF || x->kind == K_RSED;
    }
    g_strlcpy(ck.level, "L1", sizeof ck.level);
    for (uint32_t r = 0; r < cf.nranks; r++) {
        if (cf.rsed[r])
            g_strlcpy(ck.level, "L3", sizeof ck.level);
        else if (cf.pcof[r] && strcmp(ck.level, "L3") != 0)
            g_strlcpy(ck.level, "L2", sizeof ck.level);
        else if (cf.rank[r] && strcmp(ck.level, "L1") == 0) {
            if (cf.rank[r]->kind == K_DCP)
                g_strlcpy(ck.level, "dCP", sizeof ck.level);
            else if (strstr(cf.rank[r]->path, "/l4/"))
                g_strlcpy(ck.level, "L4", sizeof ck.level);
        }
    }
    /* the ranks' own files */
    for (uint32_t r = 0; r < cf.nranks; r++) {
        if (!cf.rank[r])
            continue;
        GError *e = NULL;
        int origin = cf.rank[r]->kind == K_DCP ? O_DCP : O_FILE;
        rc = add_file(c, f, cf.rank[r]->path, ck.id, (int32_t)r, origin, "own file", &e);
        if (rc == HPC_OK) {
            cf.have[r] = (int32_t)f->ranks->len - 1;
        } else if (recoverable) {
            warn(f, "%s; trying to recover rank %u from its group",
                 e ? e->message : hpc_strerror(rc), r);
            rc = HPC_OK;
        } else {
            g_propagate_error(err, e);
            e = NULL;
        }
        g_clear_error(&e);
        if (rc != HPC_OK)
            goto out;
    }
    /* lost ranks: a rebuild proves itself (myHash of the rebuilt file, ptFs
     * of the holder), so each candidate group size is tried in turn */
    uint32_t nlost = 0;
    for (uint32_t r = 0; r < cf.nranks; r++)
        nlost += cf.have[r] < 0;
    if (nlost && !recoverable) {
        GString *list = g_string_new(NULL);
        for (uint32_t r = 0, shown = 0; r < cf.nranks; r++)
            if (cf.have[r] < 0 && shown++ < 16)
                g_string_append_printf(list, "%s%u", list->len ? " " : "", r);
        warn(f, "checkpoint %d: no usable file of %u of ranks 0-%u (%s%s) below SOURCE, and "
             "no L2/L3 files to recover them", ck.id, nlost, cf.nranks - 1, list->str,
             nlost > 16 ? " ..." : "");
        g_string_free(list, TRUE);
    } else if (nlost) {
        fti_topo t;
        uint32_t cand[FTI_RS_MAX_GROUP + 1];
        topo_build(f, cf.nranks, &t);
        unsigned ncand = group_candidates(f, &cf, &t, cand);
        fti_snap snap;
        snap_take(f, &snap);
        int best = -1, last = -1;
        uint32_t best_got = 0;
        for (unsigned ci = 0; ci < ncand; ci++) {
            snap_restore(f, &snap, &cf);
            uint32_t got = recover_all(c, f, &cf, &t, &ck, cand[ci]);
            last = (int)ci;
            if (best < 0 || got > best_got) {
                best = (int)ci;
                best_got = got;
            }
            if (got == nlost)
                break;
        }
        if (best >= 0 && last != best) {
            snap_restore(f, &snap, &cf);
            recover_all(c, f, &cf, &t, &ck, cand[best]);
        }
        if (ncand == 0)
            warn(f, "checkpoint %d: %u nodes form no group of 2 to %d members", ck.id,
                 t.nnodes, FTI_RS_MAX_GROUP);
        else
            ck.group_from = f->cfg_group >= 2 ? "config.fti"
                            : "inferred: the size under which the rebuild verifies";
        topo_free(&t);
    }
    ck.nranks_seen = cf.nranks;
    g_array_append_val(f->ckpts, ck);
out:
    g_free(cf.rank);
    g_free(cf.pcof);
    g_free(cf.rsed);
    g_free(cf.have);
    return rc;
}

/* config.fti and Topology.fti may sit above SOURCE (SOURCE = an l2 dir). */
static void find_above(fti *f, const char *dir)
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
        if (!f->topology) {
            /* <meta_dir>/<execId>/Topology.fti next to the Local/Global dirs */
            char *meta = g_build_filename(parent, "Meta", NULL);
            GDir *md = g_dir_open(meta, 0, NULL);
            const char *n;
            while (md && !f->topology && (n = g_dir_read_name(md))) {
                char *p = g_build_filename(meta, n, "Topology.fti", NULL);
                if (g_file_test(p, G_FILE_TEST_IS_REGULAR))
                    f->topology = p;
                else
                    g_free(p);
            }
            if (md)
                g_dir_close(md);
            g_free(meta);
        }
        int top = strcmp(parent, d) == 0;
        g_free(d);
        d = parent;
        if (top)
            break;
    }
    g_free(d);
}

/* ---- open / close ----------------------------------------------------- */

static void fti_free(fti *f)
{
    if (!f)
        return;
    for (guint i = 0; f->ranks && i < f->ranks->len; i++) {
        fti_rank *rk = &g_array_index(f->ranks, fti_rank, i);
        g_free(rk->rs);
        g_free(rk->path);
        g_free(rk->note);
    }
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

static int build_tree(hpc_container *c, fti *f, GError **err)
{
    char name[HPC_RANKNAME_MAX * 2 + 64];
    c->tree = hpc_tree_new();
    for (guint i = 0; i < f->ranks->len; i++) {
        fti_rank *rk = &g_array_index(f->ranks, fti_rank, i);
        hpc_ino dir = HPC_INO_ROOT, ino;
        int rc;
        if (!f->single) {
            char ckname[32];
            g_snprintf(ckname, sizeof ckname, "ckpt-%d", rk->ckpt);
            hpc_stat st = { 0 };
            if (hpc_tree_lookup(c->tree, HPC_INO_ROOT, ckname, &st) == HPC_OK)
                dir = st.ino;
            else if ((rc = hpc_tree_add(c->tree, HPC_INO_ROOT, ckname, HPC_MODE_DIR, 0, 0,
                                        &dir)) != HPC_OK)
                return hpc_fail(err, rc, c->path, NULL, 0, "cannot add %s", ckname);
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
    return HPC_OK;
}

static int fti_open(hpc_container *c, GError **err)
{
    fti *f = g_new0(fti, 1);
    int rc = HPC_OK;
    struct stat st;
    walk_ctx w = { 0 };
    f->ranks = g_array_new(FALSE, FALSE, sizeof(fti_rank));
    f->vars = g_array_new(FALSE, FALSE, sizeof(fti_var));
    f->chunks = g_array_new(FALSE, FALSE, sizeof(fti_chunk));
    f->ckpts = g_array_new(FALSE, FALSE, sizeof(fti_ckpt));
    f->warnings = g_ptr_array_new_with_free_func(g_free);
    f->srcs = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    if (stat(c->path, &st) != 0) {
        rc = hpc_fail(err, HPC_E_NOENT, c->path, NULL, 0, "cannot stat");
        goto out;
    }
    if (!S_ISDIR(st.st_mode)) {
        /* the rank is known only from a Rank file's name (a Pcof file
         * holds another rank's bytes) */
        char *base = g_path_get_basename(c->path);
        int kind;
        int32_t nck, nrank;
        if (!parse_name(base, &kind, &nck, &nrank) || (kind != K_RANK && kind != K_DCP))
            nrank = -1;
        g_free(base);
        f->single = 1;
        rc = add_file(c, f, c->path, -1, nrank, O_FILE, "the file given", err);
        if (rc != HPC_OK)
            goto out;
        fti_ckpt ck = { .id = g_array_index(f->ranks, fti_rank, 0).ckpt, .nranks_seen = 1 };
        g_strlcpy(ck.level, "file", sizeof ck.level);
        g_array_append_val(f->ckpts, ck);
    } else {
        w.found = g_array_new(FALSE, FALSE, sizeof(fti_found));
        walk(&w, c->path, 0);
        f->config = w.config;
        f->topology = w.topology;
        w.config = w.topology = NULL;
        find_above(f, c->path);
        load_config(f);
        if (w.found->len == 0) {
            rc = hpc_fail(err, HPC_E_UNSUPPORTED, c->path, NULL, 0,
                          "no Ckpt<N>-Rank<R>.fti, Pcof, RSed or dCPFile file below it");
            goto out;
        }
        /* dCP files name no checkpoint: take it from their meta */
        for (guint i = 0; i < w.found->len; i++) {
            fti_found *x = &g_array_index(w.found, fti_found, i);
            fti_meta m;
            uint64_t size;
            if (x->kind == K_DCP)
                x->ckpt = peek_meta(x->path, &m, &size) == HPC_OK ? m.ckpt_id : 0;
        }
        qsort(w.found->data, w.found->len, sizeof(fti_found), cmp_found);
        fti_found *found = (fti_found *)(void *)w.found->data;
        for (guint lo = 0; lo < w.found->len;) {
            guint hi = lo;
            while (hi < w.found->len && found[hi].ckpt == found[lo].ckpt)
                hi++;
            rc = open_ckpt(c, f, found, lo, hi, err);
            if (rc != HPC_OK)
                goto out;
            lo = hi;
        }
        if (f->ranks->len == 0) {
            rc = hpc_fail(err, HPC_E_CORRUPT, c->path, NULL, 0,
                          "no rank of any checkpoint could be read: %s",
                          f->warnings->len ? (char *)g_ptr_array_index(f->warnings, 0) : "?");
            goto out;
        }
    }
    /* ranks in (ckpt, rank) order; each var's rank index is fixed below */
    {
        guint n = f->ranks->len;
        fti_rank *rk = (fti_rank *)(void *)f->ranks->data;
        qsort(rk, n, sizeof(fti_rank), cmp_rank);
    }
    rc = build_tree(c, f, err);
    if (rc != HPC_OK)
        goto out;
    c->priv = f;
    f = NULL;
    if (((fti *)c->priv)->total_bytes <= FTI_VERIFY_AT_OPEN) {
        fti *p = c->priv;
        for (guint i = 0; i < p->vars->len; i++)
            var_verify(c, &g_array_index(p->vars, fti_var, i));
    }
out:
    if (w.found) {
        for (guint i = 0; i < w.found->len; i++)
            g_free(g_array_index(w.found, fti_found, i).path);
        g_array_free(w.found, TRUE);
    }
    g_free(w.config);
    g_free(w.topology);
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
        bad += st == V_BAD;
        unchecked += st == V_UNKNOWN;
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
        g_string_append_printf(o, "checkpoint %d: level %s, ranks seen %u", ck->id, ck->level,
                               ck->nranks_seen);
        if (ck->group)
            g_string_append_printf(o, ", group size %u (%s)", ck->group, ck->group_from);
        g_string_append_c(o, '\n');
    }
    for (guint i = 0; i < f->warnings->len; i++)
        g_string_append_printf(o, "warning: %s\n", (char *)g_ptr_array_index(f->warnings, i));
    for (guint i = 0; i < f->vars->len; i++) {
        const fti_var *v = &g_array_index(f->vars, fti_var, i);
        if (g_atomic_int_get(&v->state) == V_BAD) {
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
            b += st == V_BAD;
            u += st == V_UNKNOWN;
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
    .read = fti_read,
    .map = fti_map,
    .info = fti_info,
};
