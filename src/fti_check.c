/* fti_check.c - chunk MD5 checks: every chunk of a variable against its
 * record, once per variable (the result is kept in the variable's state).
 * See docs/fti.md, "Integrity". */
#include "fti.h"

#include <inttypes.h>
#include <string.h>

int fti_var_verify(hpc_container *c, fti_var *v)
{
    int st = g_atomic_int_get(&v->state);
    if (st != FTI_V_UNKNOWN)
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
                         : fti_rank_read(c, rk, buf, n, ch[i].fptr + done);
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
    st = bad == UINT64_MAX ? FTI_V_OK : FTI_V_BAD;
    if (g_atomic_int_compare_and_exchange(&v->state, FTI_V_UNKNOWN, st) && st == FTI_V_BAD) {
        hpc_log("%s: checkpoint %d rank %d variable %d: MD5 of the chunk at offset %" PRIu64
                " does not match its record: reads fail with EIO (-o nocheck serves them)",
                rk->path, rk->ckpt, rk->rank, v->id, bad);
        hpc_container_info_changed(c);
    }
    return st;
}

