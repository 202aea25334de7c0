/* nc3_int.h - what the files of the netCDF-3 reader share
 * (src/formats/netcdf3/): the parsed header, the snapshot of a live file
 * and the calls one file makes into another.  Not installed; only the
 * reader's own files (and its unit test) include it. */
#ifndef NC3_INT_H
#define NC3_INT_H

#include "hpc_bytes.h"
#include "hpc_format.h"

#include <inttypes.h>
#include <string.h>

#define NC3_NTYPES 12                 /* nc_type 1..11 (0 unused) */
enum { NC_BYTE = 1, NC_CHAR, NC_SHORT, NC_INT, NC_FLOAT, NC_DOUBLE, NC_UBYTE, NC_USHORT,
       NC_UINT, NC_INT64, NC_UINT64 };
#define NC3_INO_VAR HPC_INO_FIRST     /* + variable index */
#define NC3_HEAD_READ 65536           /* bytes read first for the header */
#define NC3_XATTR_NAME_MAX 255
#define NC3_XATTR_VALUE_MAX 65536     /* Linux XATTR_SIZE_MAX */

/* The numrecs value of a file still being streamed (all bits set). */
#define NC3_STREAMING32 UINT32_C(0xffffffff)
#define NC3_STREAMING64 UINT64_MAX

typedef struct nc3_att {
    const char *name;
    uint32_t type;
    uint64_t nelems;
    const unsigned char *values;      /* nelems big-endian values, in the header copy */
} nc3_att;

typedef struct nc3_var {
    const char *name;
    uint32_t ndims, natts, type;
    uint32_t *dimids;
    nc3_att *atts;
    uint64_t begin;                   /* of its data (of record 0 for record variables) */
    uint64_t slab;                    /* bytes of one record, or of all of it */
    uint64_t entry;                   /* offset of its header entry (messages) */
    int is_rec;
    const char *hidden;               /* why it has no file (static text), or NULL */
} nc3_var;

typedef struct nc3_dim {
    const char *name;
    uint64_t len;                     /* 0: the record dimension */
} nc3_dim;

/* A parsed header; every pointer lies in its own allocations. */
typedef struct nc3_hdr {
    int version;                      /* 1, 2 or 5 */
    int streaming;                    /* numrecs was STREAMING */
    uint64_t numrecs;                 /* as stored, or computed for STREAMING */
    uint64_t header_len;              /* bytes the header occupies */
    uint32_t ndims, ngatts, nvars;
    int32_t recdim;                   /* -1: none */
    nc3_dim *dims;
    nc3_att *gatts;
    nc3_var *vars;
    uint64_t recsize, begin_rec;      /* bytes of one record, where records start */
    uint32_t nrecvars;
    unsigned char *raw;               /* the header's bytes (attribute values) */
    GStringChunk *names;
    GPtrArray *allocs;                /* arrays to free */
} nc3_hdr;

/* One consistent view of a (live) file. */
typedef struct nc3_state {
    nc3_hdr *h;
    hpc_cache *cache;
    uint64_t space;                   /* cache space of this snapshot's bytes */
    uint64_t size;                    /* the file size it was built from */
} nc3_state;

typedef struct nc3 {
    hpc_source *src;
    GMutex lock;                      /* guards cur */
    nc3_state *cur;                   /* g_atomic_rc_box */
    hpc_refresh refresh;              /* when to parse the header again */
} nc3;

/* ---- types (nc3_header.c) */
unsigned nc3_type_size(uint32_t type);
const char *nc3_type_dtype(uint32_t type);
const char *nc3_type_name(uint32_t type);

/* ---- the header (nc3_header.c) */
/** Parse the header in buf (the file's first len bytes; size: the file's
 *  real size).  HPC_E_RANGE when the header goes on past len but not past
 *  size (read more and call again); else HPC_OK with *out, or an error
 *  with the one line *err naming path, field and offset. */
int nc3_parse(const unsigned char *buf, size_t len, uint64_t size, const char *path,
              nc3_hdr **out, GError **err);
void nc3_hdr_free(nc3_hdr *h);
/** Bytes the mount serves for variable v. */
uint64_t nc3_var_bytes(const nc3_hdr *h, const nc3_var *v);

/* ---- snapshots (fmt_nc3.c) */
nc3_state *nc3_state_get(nc3 *n);
void nc3_state_unref(nc3_state *s);
void nc3_maybe_refresh(hpc_container *c);
/* Parse the header as it is now into a new snapshot. */
int nc3_state_build(hpc_container *c, nc3 *n, nc3_state **out, GError **err);

/* ---- the tree, data and xattrs (nc3_data.c) */
int nc3_lookup(hpc_container *c, hpc_ino parent, const char *name, hpc_stat *st);
int nc3_getattr(hpc_container *c, hpc_ino ino, hpc_stat *st);
int nc3_readdir(hpc_container *c, hpc_ino dir, uint64_t cookie, hpc_dirent_fn fn, void *ctx);
int nc3_map(hpc_container *c, hpc_ino ino, uint64_t off, uint64_t len, hpc_extent *ext,
            unsigned max, unsigned *n);
int nc3_read(hpc_container *c, hpc_ino ino, void *buf, size_t len, uint64_t off,
             size_t *nread);
int nc3_xattrs(hpc_container *c, hpc_ino ino, hpc_xattr_fn fn, void *ctx);
/** The text user.attr.<name> shows for a. */
void nc3_append_number(GString *o, uint32_t type, const unsigned char *p, uint64_t i,
                       void (*real)(GString *o, double x, int single));
void nc3_att_text(const nc3_att *a, GString *o);

/* ---- references (nc3_refs.c) */
int nc3_chunks(hpc_container *c, hpc_ino ino, GString *out);

#endif
