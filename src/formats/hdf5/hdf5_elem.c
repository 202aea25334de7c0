/* hdf5_elem.c - one slot per mount for the last large element read. */
#include "hdf5_elem.h"
#include "hpc_error.h"

#include <glib.h>
#include <string.h>

struct hpc_h5elem {
    GMutex lock;
    uint64_t key, elem;
    int valid;
    size_t esize;
    void *buf;
};

hpc_h5elem *hpc_h5elem_new(void)
{
    hpc_h5elem *s = g_new0(hpc_h5elem, 1);
    g_mutex_init(&s->lock);
    return s;
}

void hpc_h5elem_free(hpc_h5elem *s)
{
    if (!s)
        return;
    g_free(s->buf);
    g_mutex_clear(&s->lock);
    g_free(s);
}

/* Copy [skip, skip+n) of element elem into out through the slot.  Lock
 * held. */
static int slot_copy(hpc_h5elem *s, uint64_t key, size_t esize, uint64_t elem, size_t skip,
                     size_t n, char *out, hpc_h5elem_fill_fn fill, void *ctx)
{
    if (!(s->valid && s->key == key && s->elem == elem && s->esize == esize)) {
        s->valid = 0;
        if (s->esize != esize) {
            g_free(s->buf);
            s->esize = 0;
            s->buf = g_try_malloc(esize);
            if (!s->buf)
                return HPC_E_NOMEM;
            s->esize = esize;
        }
        int rc = fill(ctx, elem, s->buf);
        if (rc != HPC_OK)
            return rc;
        s->key = key;
        s->elem = elem;
        s->valid = 1;
    }
    memcpy(out, (char *)s->buf + skip, n);
    return HPC_OK;
}

int hpc_h5elem_read(hpc_h5elem *s, uint64_t key, size_t esize, uint64_t off, size_t len,
                    void *buf, hpc_h5elem_fill_fn fill, void *ctx)
{
    char *out = buf;
    int rc = HPC_OK;
    while (len > 0 && rc == HPC_OK) {
        uint64_t elem = off / esize;
        size_t skip = (size_t)(off % esize), n = MIN(len, esize - skip);
        if (n == esize) {
            rc = fill(ctx, elem, out);
        } else {
            g_mutex_lock(&s->lock);
            rc = slot_copy(s, key, esize, elem, skip, n, out, fill, ctx);
            g_mutex_unlock(&s->lock);
        }
        out += n;
        off += n;
        len -= n;
    }
    return rc;
}

uint64_t hpc_h5elem_bytes(hpc_h5elem *s)
{
    g_mutex_lock(&s->lock);
    uint64_t n = s->esize;
    g_mutex_unlock(&s->lock);
    return n;
}
