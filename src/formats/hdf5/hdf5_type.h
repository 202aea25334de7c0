/* hdf5_type.h - HDF5 datatypes as the HDF5 reader serves them: the memory
 * type of a dataset's bytes, its NumPy dtype text and attribute values as
 * text. */
#ifndef HDF5_TYPE_H
#define HDF5_TYPE_H

#include <glib.h>
#include <hdf5.h>
#include <stdint.h>

/**
 * The memory type in which a dataset of file type t is served: the same
 * layout in little-endian order, built recursively for compound, array
 * and enum types.  Returns a new type id (close with H5Tclose), or a
 * negative id when t has no byte image (variable-length data, references).
 */
hid_t hpc_h5t_mem_type(hid_t t);

/** A run of padding bytes inside one element. */
typedef struct hpc_h5t_pad {
    size_t off, len;
} hpc_h5t_pad;

/**
 * The padding of memory type m (esize bytes): the bytes of an element no
 * member value covers (compounds with gaps, at any depth), as a GArray of
 * hpc_h5t_pad (g_array_unref it), or NULL when there are none.  Where
 * h5py converts (bit-field members), its values have zeros there; the file
 * may hold anything.
 */
GArray *hpc_h5t_padding(hid_t m, size_t esize);

/**
 * Append NumPy's name of memory type m to o, e.g. "<f8", "|S10" or a
 * structured description.
 */
void hpc_h5t_np_dtype(hid_t m, GString *o);

/**
 * Append the value of attribute aid to o as text: numbers joined by ',',
 * strings one per line, enum members by name, other types as hex.  limit
 * is the file size, which the attribute's raw data must fit in.  Returns
 * HPC_OK or HPC_E_IO (the libhdf5 error stack tells why).
 */
int hpc_h5t_attr_text(hid_t aid, uint64_t limit, GString *o);

#endif
