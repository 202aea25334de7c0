/* sion_layout.h - on-disk constants of SIONlib files (file formats 2 to 5),
 * shared by the reader (src/formats/sion/fmt_sion.c) and the MPI writer
 * (mpi/sion_write.c), so that both agree on one definition.
 *
 * META1, at offset 0 of every physical file (format >= 3):
 *
 *   off  size  field
 *     0     4  magic "sion"
 *     4     4  byte order: bytes 0 and 3 = metadata, 1 and 2 = user data
 *               (0 little-endian, 1 big-endian)
 *     8     4  version          12  4  patchlevel     16  4  fileformat
 *    20     4  fsblksize        24  4  ntasks         28  4  nfiles
 *    32     4  filenumber       36  8  flag1 (key-value mode << 32)
 *    44     8  flag2            52  1024  prefix (the name given at open)
 *  1076  8*n  globalrank[ntasks], then 8*n chunksize[ntasks]
 *        then 4  maxchunks, 8  start_of_varheader (META2's offset)
 *
 * Format 2 lacks filenumber, flag1 and flag2: its arrays start at 1056.
 * A writer killed before its close leaves maxchunks 0 and
 * start_of_varheader 0.  Integers are in the writer's byte order.
 */
#ifndef SION_LAYOUT_H
#define SION_LAYOUT_H

#define SION_MAGIC "sion"
#define SION_MAGIC_LEN 4

/* offsets of the META1 fields */
#define SION_OFF_ENDIAN 4
#define SION_OFF_VERSION 8
#define SION_OFF_PATCHLEVEL 12
#define SION_OFF_FILEFORMAT 16
#define SION_OFF_FSBLKSIZE 20
#define SION_OFF_NTASKS 24
#define SION_OFF_NFILES 28
#define SION_OFF_FILENUMBER 32
#define SION_OFF_FLAG1 36
#define SION_OFF_FLAG2 44
#define SION_OFF_PREFIX 52

#define SION_PREFIX_LEN 1024       /* bytes of the prefix field, NUL padded */
#define SION_META1_FIXED 1076      /* bytes before globalrank[] (format >= 3) */
#define SION_META1_FIXED_V2 1056   /* format 2: no filenumber, flag1, flag2 */
#define SION_META1_TAIL 12         /* maxchunks (4) + start_of_varheader (8) */
/* META1 of n tasks in format >= 3.  SIONlib places the data at this size
 * rounded up to fsblksize for every format, format 2 too (its header is
 * 20 bytes shorter), and META2 right after the last block:
 * start_of_varheader = start_of_data + maxchunks * globalskip. */
#define SION_META1_SIZE(n) (SION_META1_FIXED + 16 * (uint64_t)(n) + SION_META1_TAIL)

/* key-value mode: the upper 32 bits of flag1 (format 5) */
#define SION_KV_SHIFT 32
#define SION_KV_NONE 50
#define SION_KV_INLINE 51

_Static_assert(SION_OFF_PREFIX + SION_PREFIX_LEN == SION_META1_FIXED,
               "the prefix is the last fixed META1 field");

#endif
