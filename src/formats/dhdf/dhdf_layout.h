/* dhdf_layout.h - the on-disk names and sizes of distributed HDF sets,
 * shared by the reader (src/formats/dhdf/fmt_dhdf.c) and the MPI writer
 * (mpi/dhdf_write.c) so that both spell them the same way.  The
 * convention itself is docs/dhdf-format.md.
 */
#ifndef DHDF_LAYOUT_H
#define DHDF_LAYOUT_H

/* SD file attributes of every file of a set (section 2) */
#define DHDF_ATTR_SETID "DHDF_SetId"      /* char8, 1..255 bytes */
#define DHDF_ATTR_FILEID "DHDF_FileId"    /* int32: 0 the main file, >= 1 the others */
#define DHDF_SETID_MAX 255

/* the table of files (section 3): vdata name and class */
#define DHDF_VD_FILEINFO "File_Info"
#define DHDF_CLASS_FILEINFO "DHDF_FileInfo"

/* a distributed array's chunk table (section 4): vdata named like the
 * array, of this class */
#define DHDF_CLASS_CHUNKS "Distributed_SDS_Chunk_Table"

/* field names of both tables (looked up by name) */
#define DHDF_FIELD_FILEID "DHDF_FileId"
#define DHDF_FIELD_FILENAME "FileName"
#define DHDF_FIELD_HOSTNAME "HostName"
#define DHDF_FIELD_CHUNKNAME "ChunkName"
#define DHDF_FIELD_DIMSIZES "DimSizes"
#define DHDF_FIELD_ORIGINS "Origins"

/* widths writers use: string fields of 255 bytes, 32 dimensions */
#define DHDF_STR_WIDTH 255
#define DHDF_MAX_RANK 32

/* the directory of an array's pieces in the mounted tree: <array>.pieces */
#define DHDF_PIECES_SUFFIX ".pieces"

#endif
