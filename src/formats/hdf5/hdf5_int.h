/* hdf5_int.h - what the files of the HDF5 reader share (src/formats/hdf5/):
 * limits, the dataset description, the lazy tree's nodes and listings,
 * the handle LRU, and the calls one file makes into another.  Only the
 * reader's own files include it; fmt_hdf5.h is the daemon's view. */
#ifndef HDF5_INT_H
#define HDF5_INT_H

#include "hpc_bytes.h"
#include "hpc_format.h"
#include "hpc_perm.h"
#include "hpc_tree.h"
#include "fmt_hdf5.h"
#include "hdf5_refs.h"
#include "hdf5_remote.h"
#include "hdf5_chunk.h"
#include "hdf5_elem.h"
#include "hdf5_options.h"
#include "hdf5_ohdr.h"
#include "hdf5_type.h"

#include <hdf5.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define H5_SIG "\211HDF\r\n\032\n"
#define MAX_TEXT_ELEMS (1u << 24)  /* variable-length strings rendered at open */
#define MAX_TEXT_BYTES (256u << 20)
#define MAX_ATTR_PARTS (4u << 20)     /* an attribute's rendered parts (hdf5_attrvar.c) */
#define MAX_ELEM_SIZE (64u << 20)   /* larger elements: only up to h5cache */
#define ELEM_SLOT_MIN (1u << 20)    /* larger elements: parts read through the slot */
#define XATTR_VALUE_MAX 65536      /* Linux XATTR_SIZE_MAX */
#define XATTR_NAME_MAX_LEN 255
#define NAME_MAX_LEN 255           /* a file name (Linux NAME_MAX) */
#define CHUNK_CACHE_DEFAULT (1ull << 20)   /* libhdf5's */
#define CHUNK_CACHE_MIN (4ull << 20)
#define CHUNK_CACHE_MAX (512ull << 20)
#define INFO_MAX_OBJECTS 200000u               /* entries the .info walk visits */

typedef enum {
    DS_NONE,    /* no byte image (variable-length sequences, references) */
    DS_DATA,    /* H5Dread of hyperslabs */
    DS_FAST,    /* pread at H5Dget_offset */
    DS_TEXT,    /* variable-length strings rendered as lines at open */
    DS_REFUSED, /* no NumPy image in h5py (hpc_h5t_refusal): reads fail with EIO */
    DS_SEQ,     /* sequences, compounds with variable members: a directory of parts */
} ds_kind;

/* DS_SEQ: a dataset served as a directory of parts rendered at open
 * (hdf5_vlen.c): part 0 is the dataset itself, every directory part's
 * entries are the parts first .. first + n - 1, in the order listed
 * (sequences: offsets, values; compounds: the members). */
typedef struct h5_part {
    char *name;                    /* its entry's name (part 0: none) */
    int dir;
    uint32_t first, n;             /* a directory: its entries */
    uint8_t *bytes;                /* a file: its size bytes */
    uint64_t size;
    char *dtype, *shape;           /* user.dtype, user.shape */
    const char *extra_name;        /* "user.vlen", "user.h5ref" or NULL */
    char *extra;
    int eol_nul;                   /* text: elements end with NUL (user.h5eol) */
} h5_part;

typedef struct h5_dset {
    hid_t id;
    hid_t mtype;                   /* little-endian twin of the file type */
    hid_t rtype;                   /* big-endian numbers: read as h5py does (below), or -1 */
    size_t swap;                   /* with rtype: bytes of each unit swapped (esize or less) */
    GArray *pad;                   /* hpc_h5t_pad: compound padding zeroed after reads, or NULL */
    char *path;                    /* first path it was found under */
    ds_kind kind;
    int rank;
    int null_space;                /* a null dataspace (h5py.Empty): user.h5space null */
    uint64_t dims[HPC_HDF5_MAX_RANK];
    uint64_t nelem;
    size_t esize;                  /* bytes per element in memory */
    uint64_t size;                 /* bytes of the file */
    uint64_t addr;                 /* DS_FAST: file offset of the raw data */
    char *text;                    /* DS_TEXT */
    int eol_nul;                   /* ... its elements end with NUL (user.h5eol) */
    GArray *parts;                 /* DS_SEQ: h5_part */
    uint64_t parts_bytes;          /* what they hold */
    hid_t dxpl;                    /* transfer list of reads; 0: H5P_DEFAULT */
    char *ref;                     /* references: "object" or "region" (user.h5ref) */
    char *shape, *dtype, *layout, *filters, *chunks, *note;
    uint64_t cache_bytes;          /* chunk cache of the handle, 0: default */
    int external;                  /* raw data in external files (H5Pset_external) */
    uint32_t perm;                 /* read bits the files its bytes come from allow */
} h5_dset;

/* One object or link met in the file (see "the lazy tree"): 32 bytes. */
typedef struct h5_node {
    uint64_t addr;                 /* object header (0 for links) */
    uint64_t size;                 /* dataset: bytes once described; link: target length */
    uint32_t parent;               /* the group it was first found in (NO_PARENT: root) */
    uint32_t idx;                  /* its entry there (name order); ANON_IDX: "@ADDR" */
    uint32_t nlink;                /* datasets: hard links to it */
    uint8_t kind;                  /* K_* */
    uint8_t state;                 /* S_*: described, damaged */
    uint8_t reported;              /* damage noted in .info */
    uint8_t noted;                 /* attribute warnings noted in .info */
} h5_node;

/* A listed group: its entries in name order. */
typedef struct h5_list {
    uint32_t n;
    uint32_t *child;               /* node ids; 0: left out */
    uint32_t *name_at;             /* offsets of the names in names */
    char *names;
    GString *notes;                /* .info lines of left-out links */
    unsigned ntypes;
    int unsorted;                  /* names not in strcmp order: search linearly */
} h5_list;

/* An open dataset in the handle LRU. */
typedef struct h5_handle {
    uint32_t node;
    int refs;                      /* readers using it now: not closed */
    GList link;                    /* in h->lru */
    uint64_t bytes;                /* chunk cache and rendered text */
    h5_dset *d;
    hpc_h5chunk_plan *plan;        /* chunks decoded by hdf5_chunk.c, or NULL */
    gint placed;                   /* chunk addresses: 0 unproven, 1 right, -1 wrong */
} h5_handle;

typedef struct h5 {
    hid_t file;
    hid_t dapl;                    /* default dataset access: external prefixes */
    hpc_source *src;
    hpc_h5ohdr_file ohdr;          /* object headers the listing reads itself */
    int ohdr_libhdf5;              /* ... or not: through libhdf5 only (hdf5_tree.c) */
    GMutex lock;                   /* all below; taken before libhdf5's lock */
    uint8_t *win;                  /* the listing's window of the file */
    uint64_t win_off;
    size_t win_len;
    GArray *nodes;                 /* h5_node; index = node id, 0 the root */
    GHashTable *by_addr;           /* object header address -> node id */
    GHashTable *anon;              /* address of an object "@ADDR" names -> node id, 0: none */
    GHashTable *anon_names;        /* node id of an "@ADDR" -> that name */
    GHashTable *lists;             /* group node id -> h5_list */
    GHashTable *targets;           /* symlink node id -> target */
    GHashTable *reasons;           /* damaged node id -> why */
    GHashTable *handles;           /* dataset node id -> h5_handle */
    GHashTable *narrowed;          /* dataset node id -> its read bits | NARROWED */
    GQueue lru;                    /* h5_handle, most recently used first */
    unsigned nhandles, max_handles;
    uint64_t handle_bytes, max_handle_bytes;
    hpc_h5chunk_cache *chunks;     /* decoded chunks */
    hpc_h5elem *elems;             /* the last large element read */
    GString *warnings;             /* one "warning: ..." line each (may repeat) */
    GString *damaged;              /* one "damaged: ..." line per damaged object */
    unsigned super_version;
    uint64_t userblock;
    uint32_t uid, gid;             /* the container's owner */
    GHashTable *ncdims;            /* dataset address -> h5_ncdims, made on first use */
    char *ncext;                   /* with it: the "xfile" and "xdim" lines, or NULL */
    GArray *nctypes;               /* hid_t: native types of the committed types, with it */
    gboolean walking;              /* the helper's walk at mount: no user.dims yet */
    GHashTable *ref_names;         /* attributes' references: object address -> path */
} h5;

#define NARROWED 0x10000u          /* in h->narrowed: a value, never NULL */

/* the lazy tree (hdf5_tree.c) */
/* K_VLEN: a dataset served as a directory (DS_SEQ) whose entries are
 * K_PART nodes (files) and K_PDIR nodes (directories): addr is the index
 * of their part, idx of their entry */
/* K_ELINK: an external link, a symlink (hdf5_tree.c elink_target) */
enum { K_GROUP = 1, K_DATASET, K_SOFT, K_GLINK, K_DAMAGED, K_VLEN, K_PART, K_ELINK, K_PDIR };
enum { S_NEW = 0, S_OK, S_BAD };

#define NODE(h, i) (&g_array_index((h)->nodes, h5_node, (i)))
#define NO_PARENT UINT32_MAX
#define ANON_IDX UINT32_MAX        /* idx of a root's "@ADDR" (hdf5_anon.c) */

/* hdf5_lib.c */
/** Silence libhdf5's error printing in this thread (the setting is per
 *  thread in the thread-safe build): first thing at every entry point. */
void h5_quiet(void);
/** This thread's error stack as one line (g_free it). */
char *h5_errtext(void);
void h5_swap_elements(void *buf, uint64_t count, size_t n);
/** Elements [e0, e1) of d into buf, by H5Dread, as h5py gives them. */
int h5_read_elements(const h5_dset *d, uint64_t e0, uint64_t e1, void *buf);

/* hdf5_dset.c and hdf5_vlen.c leave datasets out: inline here, so that the
 * renderer needs nothing of the file that describes. */
/** Leave d out (DS_NONE) with note (taken), and a warning in .info when
 *  warn. */
static inline void h5_dset_leave_out(h5 *h, h5_dset *d, int warn, char *note)
{
    d->kind = DS_NONE;
    d->note = note;
    if (warn)
        g_string_append_printf(h->warnings, "warning: %s: %s\n", d->path, note);
}

/* hdf5_dset.c */
void h5_dset_free(gpointer p);
hid_t h5_dset_access(uint64_t cache_bytes, uint64_t chunk_bytes, uint64_t nchunks);
/* the access list that finds external raw data files next to the .h5 */
hid_t h5_dset_access_external(void);
int h5_dset_reopen_external(h5 *h, uint32_t id, h5_dset *d, hid_t g, const char *name);
int h5_dset_describe(h5 *h, h5_dset *d, uint64_t *chunk_band, uint64_t *chunk_bytes,
                     uint64_t *nchunks);
char *h5_dset_external_note(const h5 *h, const h5_dset *d);
/* hdf5_node.c */
uint32_t h5_ino_to_id(hpc_ino ino, const h5 *h);
uint32_t h5_node_new(h5 *h, uint8_t kind, uint64_t addr, uint32_t parent, uint32_t idx);
const char *h5_node_name(h5 *h, uint32_t id);
char *h5_node_path(h5 *h, uint32_t id);
void h5_note_damaged(h5 *h, uint32_t id, const char *what, const char *why);
int h5_damaged_read(h5 *h, uint32_t id);
hid_t h5_group_open(h5 *h, uint32_t id);
/** Open dataset node id, of group g named name, with access list dapl
 *  (an "@ADDR" by its address). */
hid_t h5_dset_open(h5 *h, uint32_t id, hid_t g, const char *name, hid_t dapl);

/* hdf5_anon.c: objects no path names, "@ADDR" of the root.  Lock held. */
/** The node of root name "@ADDR": HPC_OK, or HPC_E_NOENT where there is
 *  no group or dataset header at ADDR. */
int h5_anon_lookup(h5 *h, const char *name, uint32_t *out);
/** The root's link `name` hides an unnamed object: a line in l->notes. */
void h5_anon_hidden(h5 *h, h5_list *l, const char *name);
/** Whether the len bytes at name can be a file name: not empty, ".",
 *  "..", longer than NAME_MAX_LEN or holding '/'.  Inline: the listing
 *  (hdf5_tree.c) and the "@ADDR" names (hdf5_anon.c), which call each
 *  other's files the other way, both ask. */
static inline int h5_file_name_ok(const char *name, size_t len)
{
    return len > 0 && len <= NAME_MAX_LEN && memchr(name, '/', len) == NULL &&
           !(len == 1 && name[0] == '.') && !(len == 2 && name[0] == '.' && name[1] == '.');
}

/* hdf5_object.c */
void h5_headers_init(h5 *h);
/** The object header at addr read without libhdf5 (lock held): HPC_OK,
 *  else libhdf5 must be asked.  o->attrs is not 0 when the header holds
 *  CLASS, _Netcdf4Coordinates or DIMENSION_LIST (hdf5_ncdims.c). */
int h5_header_read(h5 *h, uint64_t addr, hpc_h5ohdr *o);
int h5_dset_is_dir(hid_t d);
int h5_dset_too_large(h5 *h, hid_t d, uint32_t dir, const char *name);

/* hdf5_tree.c */
int h5_list_group(h5 *h, uint32_t dir, h5_list **out);
int h5_lookup(hpc_container *c, hpc_ino parent, const char *name, hpc_stat *st);
int h5_getattr(hpc_container *c, hpc_ino ino, hpc_stat *st);
int h5_readdir(hpc_container *c, hpc_ino dir, uint64_t cookie, hpc_dirent_fn fn, void *ctx);
int h5_readlink(hpc_container *c, hpc_ino ino, char **target);
uint32_t h5_part_dataset(h5 *h, uint32_t id);

/* hdf5_handle.c */
void h5_handle_close(h5 *h, h5_handle *hd);
int h5_handle_get(h5 *h, uint32_t id, h5_handle **out);
void h5_handle_put(h5 *h, h5_handle *hd);

/* hdf5_attr.c */
typedef struct attr_ctx {
    h5 *h;
    GPtrArray *names, *values;     /* char *, GString * */
    GString *notes;                /* over-long names, cut values */
    char *failed;                  /* message of the first attribute that failed */
    const char *path;
} attr_ctx;

void h5_attrs_read(h5 *h, uint32_t id, hid_t oid, attr_ctx *a);

/* hdf5_attrvar.c: attributes of references, sequences, and compounds or
 * arrays holding them */
/** Is an attribute of file type t one of them (variable-length strings
 *  alone are not)? */
int h5_attrvar_is(hid_t t);
/** Attribute aid (named name, of type t) of object loc as xattrs in a;
 *  its raw data must fit in the file. */
void h5_attrvar_add(attr_ctx *a, hid_t loc, hid_t aid, const char *name, hid_t t);
void h5_attrs_clear(attr_ctx *a);
int h5_xattrs(hpc_container *c, hpc_ino ino, hpc_xattr_fn fn, void *ctx);

/* hdf5_ncdims.c: a dataset's dimensions as netCDF-4 names them */
typedef struct h5_ncdims {
    int rank;
    int dimonly;                   /* a netCDF dimension, not a variable */
    int novar;                     /* of a type netCDF has none for: no variable */
    char **names;                  /* rank of them, NULL-terminated; NULL: none */
    uint64_t *len;                 /* each dimension's length in netCDF */
    GString *links;                /* several links: each one's "ldim" lines, or NULL */
} h5_ncdims;

/** What netCDF-4 makes of the dataset whose object header is at addr, or
 *  NULL (a scalar, one libnetcdf cannot name).  The whole file is read at
 *  the first call.  Lock held. */
const h5_ncdims *h5_ncdims_of(h5 *h, uint64_t addr);
/** The native types of the file's committed types libnetcdf reads (an
 *  attribute of a type equal to one is an attribute of that netCDF type),
 *  made with the above.  Lock held; alive until h5_ncdims_free. */
const GArray *h5_nctypes(h5 *h);
/** The lines of what external links lead to, as libnetcdf reads them:
 *  "xfile PATH FILE OBJECT" per link followed (the file libhdf5 opened),
 *  "xdim PATH LEN NAME" per axis of each variable there (paths in hex,
 *  from the root), or NULL.  Made with the above. */
const char *h5_ncext(h5 *h);
void h5_ncdims_free(h5 *h);

/* hdf5_vlen.c: variable-length data and references */
/** Is a dataset of file type t a directory of parts (docs/hdf5.md)? */
int h5_type_is_dir(hid_t t);
/** Render dataset d of a type holding variable-length data or references
 *  in a sequence, compound or array: DS_SEQ (or DS_TEXT for an array of
 *  strings or references). */
int h5_parts_render(h5 *h, h5_dset *d, hid_t ftype);
void h5_parts_free(GArray *parts);
/** Part i of d, or NULL. */
const h5_part *h5_part_of(const h5_dset *d, uint64_t i);
/** Attribute aid's n elements (of file type ftype, dims of rank: its
 *  dataspace) rendered as parts, as a dataset of that type is, references
 *  followed from object loc (at path: log lines; names caches the paths of
 *  objects, as h5_ref_text's), in *parts (h5_parts_free):
 *  HPC_OK; HPC_E_IO where libhdf5 cannot read it; else *why (g_free) says
 *  why it is not rendered: a type without a memory type, a reference that
 *  cannot be followed, more than MAX_ATTR_PARTS bytes. */
int h5_attr_parts(hid_t aid, hid_t loc, const char *path, GHashTable *names, hid_t ftype,
                  uint64_t n, const uint64_t *dims, int rank, GArray **parts, char **why);
int h5_refs_render(h5 *h, h5_dset *d, hid_t ftype);
/** Reference ref (an object one, or a region one when region) followed
 *  from object loc (at path, for log lines), appended to t, ended with NUL
 *  (hpc_h5t_text_eol); names caches the paths of objects. */
int h5_ref_text(hid_t loc, const char *path, GHashTable *names, int region, const void *ref,
                GString *t);

/* hdf5_data.c */
int h5_read(hpc_container *c, hpc_ino ino, void *buf, size_t len, uint64_t off,
            size_t *nread);
int h5_map(hpc_container *c, hpc_ino ino, uint64_t off, uint64_t len,
           hpc_extent *ext, unsigned max, unsigned *n);
int h5_chunks(hpc_container *c, hpc_ino ino, GString *out);

/* In the helper process (hpc_format_hdf5.request and .after_walk): the
 * daemon decodes the chunks of datasets whose chunks hdf5_chunk.c
 * decodes, from the file's bytes. */

/** The chunk plan of dataset ino (an hpc_h5chunk_wire_plan) and its size
 *  in bytes (u64) appended to out; HPC_E_NOTSUP when its chunks go
 *  through H5Dread. */
int hpc_hdf5_chunk_plan(hpc_container *c, hpc_ino ino, GByteArray *out);

/** Where chunks first.. of dataset ino are stored: at most n
 *  hpc_h5chunk_where entries appended to out (size 0: a chunk to leave to
 *  libhdf5: never written, or its place not proven). */
int hpc_hdf5_chunk_where(hpc_container *c, hpc_ino ino, uint64_t first, uint64_t n,
                         GByteArray *out);

/** Close the datasets the reader holds open but nobody uses: after the
 *  helper's walk at open (open datasets slow down every later
 *  open in libhdf5). */
void hpc_hdf5_walk_begins(hpc_container *c);
void hpc_hdf5_walk_ends(hpc_container *c);

#endif
