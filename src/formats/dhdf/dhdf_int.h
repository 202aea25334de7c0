/* dhdf_int.h - what the files of the distributed HDF reader share: its
 * state (a set's files, arrays and pieces), the HDF4 helpers of
 * dhdf_h4.c and the open of dhdf_set.c.  Only those files and
 * fmt_dhdf.c include it.
 *
 * libhdf4 is not thread-safe: every HDF4 call runs under dhdf_hdf_lock
 * (the functions below say "hdf_lock held").
 */
#ifndef DHDF_INT_H
#define DHDF_INT_H

#include "hpc_format.h"
#include "hpc_tree.h"
#include "fmt_dhdf.h"
#include "dhdf_layout.h"

/* the raw data-info calls give byte offsets for messages */
#define DATAINFO_MASTER 1
#include <mfhdf.h>
#include <hdatainfo.h>
#include <mfdatainfo.h>

#define CLASS_FILEINFO DHDF_CLASS_FILEINFO
#define CLASS_CHUNKS DHDF_CLASS_CHUNKS
#define VD_FILEINFO DHDF_VD_FILEINFO

extern GMutex dhdf_hdf_lock;

enum { ROLE_PLAIN, ROLE_MAIN, ROLE_ASSOC };

typedef struct dhdf_file {
    int32_t id;                  /* DHDF_FileId */
    char *name, *host;           /* as stored in File_Info */
    char *path;                  /* resolved */
    uint64_t size;
    int32 sd;                    /* SD id while open, else -1 */
    uint64_t last_use;
    uint64_t reads;              /* SDreaddata calls (tests) */
    GPtrArray *selected;         /* dhdf_piece * whose SDS id is open in sd */
} dhdf_file;

typedef struct dhdf_piece {
    uint32_t file;               /* index into files */
    int32 sds_index;             /* in that file */
    char *name;
    uint64_t rec_off;            /* its ChunkName in the MHF, for messages */
    int stream;                  /* compressed, not chunked: decoded whole */
    unsigned char fill[8];       /* one element of fill value, native order */
    char *why;                   /* reads fail (EIO) because of this, or NULL */
    char *ext_dir;               /* data in an external file found here (HXsetdir) */
    uint64_t nbytes;
    GBytes *whole;               /* the decoded piece (stream pieces), or NULL */
    uint64_t whole_use;
    int32 sds;                   /* SDS id while selected, else FAIL */
    hpc_ino ino;                 /* its node (pieces of distributed arrays) */
    char **dimnames;             /* its SDS's dimension names, or NULL */
} dhdf_piece;

typedef struct dhdf_array {
    char *name;                  /* its file's name */
    char *h4name;                /* the SDS's own name when the file has another, else NULL */
    uint16 h4namelen;            /* its bytes (it may hold NULs) */
    int distributed;
    int scalar;                  /* a plain SDS of rank 0: read as rank 1, size 1 */
    int coord;                   /* a coordinate variable (a dimension's scale) */
    int32 sds_index;             /* of its SDS in the main (or plain) file */
    int32 nt;                    /* base number type */
    uint32_t esize;
    unsigned rank;
    uint64_t dims[HPC_DHDF_MAX_RANK];
    uint64_t nbytes;
    size_t npieces;
    hpc_dhdf_box *boxes;         /* npieces boxes */
    dhdf_piece *pieces;
    uint64_t holes;              /* elements no piece covers */
    hpc_dhdf_layout layout;      /* of its chunk table */
    uint64_t space;              /* cache space of the whole array */
    uint64_t *piece_space;       /* cache spaces of the pieces */
    char **dimnames;             /* its SDS's dimension names, or NULL */
} dhdf_array;

typedef struct dhdf {
    int role;                    /* ROLE_* */
    char *setid;
    int32_t fileid;
    char *libversion;
    dhdf_file *files;            /* [0] is the MHF */
    uint32_t nfiles;
    dhdf_array *arrays;
    uint32_t narrays;
    GPtrArray *warnings;
    GPtrArray *notes;            /* SDSs served under another name, and why */
    uint64_t clock;              /* for the open-file and decoded-piece LRUs */
    uint32_t nopen;
    uint64_t whole_bytes, whole_max;   /* decoded stream pieces held, limit */
} dhdf;

/* One vdata loaded: the requested fields of every record, packed. */
typedef struct dhdf_vtable {
    char name[VSNAMELENMAX + 1];
    int32 nrec;
    unsigned char *buf;
    size_t recsize;
    uint32_t order[4];
    uint32_t disk_off[4];        /* of each requested field in a stored record */
    uint64_t data_off;           /* of the first record, 0 if unknown */
    uint32_t disk_recsize;
} dhdf_vtable;

typedef struct dhdf_finfo {
    int32_t id;
    char *name, *host;
    uint64_t off;                /* of the record's FileName, for messages */
} dhdf_finfo;

/* A raw chunk table of the MHF, decoded once the SDS is known. */
typedef struct dhdf_ctable {
    dhdf_vtable t;
    int used;
} dhdf_ctable;

typedef struct dhdf_sds_info {
    int32 index;
    char *name;                  /* all of its bytes, NUL-terminated (it may hold NULs) */
    uint16 namelen;
    int32 rank, dims[H4_MAX_VAR_DIMS], nt, nattrs;
    int coord;
} dhdf_sds_info;

/* Element size and NumPy dtype of an HDF4 base number type; 0 if unknown. */
uint32_t dhdf_nt_info(int32 nt, const char **dtype);

/* HDF4 returns native order; hpcmount serves little-endian. */
void dhdf_native_to_le(void *buf, size_t n, uint32_t esize);

/* The file's DHDF_SetId (NULL if absent) and DHDF_FileId. */
int dhdf_read_set_attrs(int32 sd, const char *path, uint64_t fsize, char **setid,
                          int32_t *fileid, uint64_t *offs, GError **err);

/* Where record i, field f lies in the file (for messages). */
uint64_t dhdf_vt_off(const dhdf_vtable *t, int32 i, unsigned f);

void dhdf_finfo_free(GArray *a);

extern const char *const dhdf_chunk_fields[];

/* Read the vdatas of file `path`: its File_Info (exactly one), and, if
 * tables is not NULL, every chunk table. */
int dhdf_read_vdatas(const char *path, uint64_t fsize, GArray **finfo, GPtrArray *tables,
                       GError **err);

void dhdf_ctable_free(gpointer p);

/* Attributes of SD object id as user.attr.* xattrs of node ino. */
void dhdf_attrs_to_xattrs(hpc_tree *tree, hpc_ino ino, int32 id, int32 nattrs, uint64_t fsize);

/* The typed attributes of SD object id as the references' "attr" lines;
 * 1 when a _FillValue of type nt and one value was copied to fill (8
 * bytes; not looked for when NULL).  hdf_lock held. */
int dhdf_attr_lines(int32 id, int32 nattrs, uint64_t fsize, int32 nt, unsigned char *fill,
                    GString *out);

char *dhdf_shape_text(unsigned rank, const uint64_t *dims);

/* The names libhdf4 (and libnetcdf's HDF4 layer) gives SDS id's axes, or
 * NULL (g_strfreev it).  hdf_lock held. */
char **dhdf_dim_names(int32 id, int32 rank);
/* user.dims of node ino from names (nothing for NULL). */
void dhdf_dims_xattr(hpc_tree *tree, hpc_ino ino, char **names);

void dhdf_array_xattrs(hpc_tree *tree, hpc_ino ino, unsigned rank, const uint64_t *dims, int32 nt);

/* Sizes of an SDS: checked rank, dims, type; total bytes.  empty_ok: a
 * dimension may have size 0 (an unlimited dimension with no record yet;
 * SDgetinfo gives 0 and the SDS holds no element: an empty file). */
int dhdf_sds_shape(const char *path, const char *name, int32 rank, const int32 *d32, int32 nt,
                     int empty_ok, unsigned *rank_out, uint64_t *dims, uint32_t *esize,
                     uint64_t *nbytes, GError **err);

/* The name of SDS (dim 0) or dimension (dim 1) id, all of its bytes
 * (SDgetnamelen's length, which H4_MAX_NC_NAME does not bound), or NULL;
 * *len its length.  hdf_lock held. */
char *dhdf_obj_name(int32 id, int dim, uint16 *len);

/* Every SDS of an open SD file (an array of dhdf_sds_info that frees
 * their names). */
int dhdf_list_sds(int32 sd, const char *path, GArray **out, GError **err);

/* HDF4's own fill value for an SDS without _FillValue (what SDreaddata
 * returns for elements never written), native order. */
void dhdf_default_fill(int32 nt, unsigned char *out);

/* How piece p (SDS p->sds_index of file sd, at path) is stored, as its
 * reads need it: size, fill value, one compressed stream or not, and why
 * its reads must fail (p->why, also a line of warnings).  hdf_lock held. */
void dhdf_piece_storage(int32 sd, const char *path, uint64_t fsize, dhdf_piece *p, int32 nt,
                        uint32_t esize, unsigned rank, const uint64_t *size, GPtrArray *warnings);

/* Open the file as HDF4 and read the set's description.  hdf_lock held. */
int dhdf_open_set(hpc_container *c, dhdf *d, const hpc_source *src, GError **err);

#endif
