/* hpc_refs_int.h - what the parts of the reference writer share
 * (hpc_refs.c: the walk; hpc_refs_chunks.c: arrays described by a
 * reader's chunk table; hpc_refs_array.c, below both: the references'
 * text, a node's description, verbatim and inline arrays). */
#ifndef HPC_REFS_INT_H
#define HPC_REFS_INT_H

#include "hpc_json.h"
#include "hpc_refs.h"

#define HPC_REFS_MAX_DIMS 32

typedef struct hpc_refs {
    hpc_mount *m;
    hpc_refs_opts o;
    const char *source, *root_path;
    GString *refs;             /* the members of "refs", comma-separated */
    unsigned nrefs;
    GHashTable *tmpl;          /* file path -> template name */
    GPtrArray *tmpl_paths;     /* in order of first use */
    char *failed_at;           /* path of the node that failed the walk */
    GStringChunk *texts;       /* reasons a reader gave, alive until the end */
    char *info;                /* the root's .info, read at the first damaged node */
    GHashTable *gdims;         /* the current group's dimension names (JSON) -> length */
    GHashTable *walking;       /* inodes of the directories being walked */
    uint64_t linked;           /* nodes walked through symbolic links to directories */
    unsigned narrays, nranges, ninline, nnotes;
    uint64_t nodes;            /* nodes walked, for o.progress */
    /* HDF5 external links the reader followed (hpc_refs_ext_load) */
    GHashTable *xlinks;        /* path from the root -> hpc_refs_xlink */
    GHashTable *xdims;         /* path of an array reached so -> GArray of hpc_refs_dim */
    GHashTable *xmounts;       /* file -> the hpc_mount opened of it */
    GHashTable *xwalking;      /* "FILE//OBJECT" of the external objects being walked */
    char *xdir;                /* the directory the references may name files in */
    int xdepth;                /* external links the walk is inside of */
} hpc_refs;

/** An HDF5 external link: the file libhdf5 opened for it, the object. */
typedef struct hpc_refs_xlink {
    char *file, *obj;
} hpc_refs_xlink;

/** A dimension name a reader gives an axis: its length there, the name
 *  as a JSON string. */
typedef struct hpc_refs_dim {
    uint64_t len;
    char *name;
} hpc_refs_dim;

/** An array as user.dtype and user.shape describe it. */
typedef struct hpc_refs_array {
    char *dtype;
    int nd;
    uint64_t shape[HPC_REFS_MAX_DIMS];
    uint64_t itemsize, row, nbytes;   /* row: bytes of one index of the first axis */
    int raw;                   /* the file's bytes, not the mount's: never inline */
    int structured;            /* user.dtype is a structured literal: the reader's
                                  chunk table must give the zarr dtype (JSON list) */
    /* what the reader's description adds (hpc_refs_chunked), or NULL */
    GArray *dims;              /* hpc_refs_dim per axis */
    GString *attrs;            /* its typed attributes, JSON members ", NAME: VALUE" */
    char *fillattr;            /* the value of its _FillValue attribute (JSON) */
    char *fill;                /* zarr's fill_value (JSON) for the .zarray */
    int novar;                 /* netCDF shows no variable for it (HDF5) */
    int object;                /* user.dtype "O": the reader's "vs" lines give its
                                  elements (variable-length strings, references) */
} hpc_refs_array;

/** One extent, by path (hpc_extent's source may close with its container). */
typedef struct hpc_refs_ext {
    const char *path;
    uint64_t off, len, size;   /* size: of the file, for full-size last chunks */
} hpc_refs_ext;

void hpc_refs_text(hpc_refs *r, const char *prefix, const char *name, const char *text);
void hpc_refs_range(hpc_refs *r, const char *prefix, const char *name, const char *path,
                    uint64_t off, uint64_t len);
void hpc_refs_inline(hpc_refs *r, const char *prefix, const char *name, const void *buf,
                     size_t len);
void hpc_refs_note(hpc_refs *r, GString *notes, const char *name, const char *why);
/** Give a the zarr dtype (a typestr, or a JSON list of fields) of
 *  itemsize bytes; FALSE when its bytes then differ from a's. */
gboolean hpc_refs_retype(hpc_refs_array *a, const char *dtype, uint64_t itemsize);
void hpc_refs_zarray(const hpc_refs_array *a, const uint64_t *chunks, const char *compressor,
                     const char *filters, GString *o);
void hpc_refs_array_clear(hpc_refs_array *a);
int hpc_refs_zattrs(hpc_refs *r, hpc_ino ino, const char *key, const char *name,
                    const hpc_refs_array *a, const char *extra);

/** The user.attr.* attributes of ino that are valid UTF-8 holding no NUL,
 *  as JSON members appended to o. */
int hpc_refs_attrs_json(hpc_mount *m, hpc_ino ino, GString *o);
/** Describe node st into a: its dtype and shape, or a byte stream.  Returns
 *  a reason (static text) when it cannot be an array. */
const char *hpc_refs_array_of(hpc_mount *m, const hpc_stat *st, hpc_refs_array *a);
/** A verbatim array: its extents on a regular grid, else per block; the
 *  bytes the reader computes inline when small. */
int hpc_refs_mapped_array(hpc_refs *r, hpc_ino ino, const char *key, const char *name,
                          const hpc_refs_array *a, const char **why);

/** The whole array as one inline chunk of the mount's bytes. */
int hpc_refs_inline_array(hpc_refs *r, hpc_ino ino, const char *key, const hpc_refs_array *a);
/** An array over extents ex: a regular grid, else one array per extent
 *  (then 1), or *why. */
int hpc_refs_extents(hpc_refs *r, hpc_ino ino, const char *key, const char *name,
                     const hpc_refs_array *a, const GArray *ex, const char **why);

/** When the reader has a chunk table for ino (HDF5 chunked, contiguous in
 *  the file's byte order, compact): write the array's .zarray and chunks,
 *  *done = 1 (a's shape gains an array type's axes); or set *why when it
 *  cannot be referenced.  The reader's dimension names, typed attributes
 *  and _FillValue go into a either way.  *done = 0 and
 *  HPC_OK when the reader has no table (then the extents are used). */
int hpc_refs_chunked(hpc_refs *r, hpc_ino ino, const char *key, const char *name,
                     hpc_refs_array *a, const char **why, int *done);

/** Read the root's "xfile" and "xdim" lines (an HDF5 file's external
 *  links as libnetcdf follows them) into r->xlinks and r->xdims. */
void hpc_refs_ext_load(hpc_refs *r);

/** The typed attributes the reader gives of directory ino, appended to o
 *  as JSON members; 0 when it gives none (then the xattrs' text is used). */
int hpc_refs_dir_attrs(hpc_refs *r, hpc_ino ino, GString *o);

#endif
