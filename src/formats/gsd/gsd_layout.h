/* gsd_layout.h - on-disk constants of GSD files (layers 0.3, 1.0 and 2.x),
 * shared by the reader (src/formats/gsd/) and the MPI writer
 * (mpi/gsd_write.c), so that both agree on one definition.
 *
 * Header, at offset 0, 256 bytes, integers little-endian:
 *
 *   off  size  field
 *     0     8  magic 0x65DF65DF65DF65DF
 *     8     8  index_location           16  8  index_allocated_entries
 *    24     8  namelist_location        32  8  namelist_allocated_entries
 *    40     4  schema_version           44  4  gsd_version (major << 16 | minor)
 *    48    64  application (NUL-padded)
 *   112    64  schema (NUL-padded)      176  80  reserved
 *
 * Index entry, 32 bytes: frame (8), N (8), location (8), M (4), id (2),
 * type (1), flags (1).  The index is sorted by frame; in layer 2 an entry
 * whose location is 0 ends it.  Name list: layer 1.0 has 64-byte slots;
 * layer 2 NUL-separated names whose allocation is counted in 64-byte units.
 */
#ifndef GSD_LAYOUT_H
#define GSD_LAYOUT_H

#include <stdint.h>

#define GSD_MAGIC UINT64_C(0x65DF65DF65DF65DF)
#define GSD_HEADER_SIZE 256
#define GSD_ENTRY_SIZE 32
#define GSD_NAME_UNIT 64              /* layer 1.0 name slot; layer 2 allocation unit */
#define GSD_NAME_FIELD 64             /* application and schema text fields */
#define GSD_MAX_IDS 65536             /* name ids are 16 bits */

/* offsets of the header fields */
#define GSD_OFF_INDEX_LOC 8
#define GSD_OFF_INDEX_ALLOC 16
#define GSD_OFF_NAMES_LOC 24
#define GSD_OFF_NAMES_ALLOC 32
#define GSD_OFF_SCHEMA_VERSION 40
#define GSD_OFF_GSD_VERSION 44
#define GSD_OFF_APPLICATION 48
#define GSD_OFF_SCHEMA 112

/* offsets inside an index entry */
#define GSD_ENT_FRAME 0
#define GSD_ENT_N 8
#define GSD_ENT_LOCATION 16
#define GSD_ENT_M 24
#define GSD_ENT_ID 28
#define GSD_ENT_TYPE 30
#define GSD_ENT_FLAGS 31

/* element types: 1 uint8 .. 4 uint64, 5 int8 .. 8 int64, 9 float,
 * 10 double, 11 character (layer 2.1) */
#define GSD_TYPE_MAX 11

/** Bytes of one element of a GSD type, 0 for an unknown type. */
static inline unsigned gsd_type_size(unsigned type)
{
    static const uint8_t size[GSD_TYPE_MAX + 1] = { 0, 1, 2, 4, 8, 1, 2, 4, 8, 4, 8, 1 };
    return type <= GSD_TYPE_MAX ? size[type] : 0;
}

#endif
