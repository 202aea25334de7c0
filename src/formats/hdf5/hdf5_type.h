/* hdf5_type.h - HDF5 datatypes as the HDF5 reader serves them: the memory
 * type of a dataset's bytes, its NumPy dtype text and attribute values as
 * text. */
#ifndef HDF5_TYPE_H
#define HDF5_TYPE_H

#include <glib.h>
#include <hdf5.h>
#include <stdint.h>

/* Types nested deeper than this (compounds, arrays, enums) are refused. */
#define HPC_H5T_MAX_DEPTH 32

/* Attributes of more elements are not shown (their text would not fit an xattr). */
#define HPC_H5T_MAX_ATTR_ELEMS (1u << 20)

/**
 * The memory type in which a dataset of file type t is served: the type
 * h5py reads it into, in little-endian order, built recursively for
 * compound, array and enum types.  Returns a new type id (close with
 * H5Tclose), or a negative id when t has no byte image (variable-length
 * data, references) or h5py has no NumPy type for it (hpc_h5t_refusal).
 */
hid_t hpc_h5t_mem_type(hid_t t);

/** hpc_h5t_mem_type without the refusal check (for types already checked). */
hid_t hpc_h5t_mem_type_of(hid_t t);

/**
 * Why h5py has no NumPy image of file type t (hdf5_npmap.c): an integer of
 * 3 bytes, a bit field with padding, a float no NumPy float holds, a time
 * type, a compound whose member h5py serves in more bytes than the file
 * has for it.  Returns HPC_OK (*why NULL) or HPC_E_UNSUPPORTED with *why
 * a new string (g_free it).  Variable-length data and references are not
 * refused here: they have no byte image at all.
 */
int hpc_h5t_refusal(hid_t t, char **why);

/** The size of the NumPy float h5py reads float type t into (2, 4, 8 or
 * 16) in *size: HPC_OK, or HPC_E_UNSUPPORTED when none holds it. */
int hpc_h5t_np_float(hid_t t, size_t *size);

/** When t is an opaque type h5py tagged with a big-endian NumPy number
 * ("NUMPY:>f8", "NUMPY:>c16"), the bytes of the units swapped to serve it
 * little-endian (the element, or each part of a complex); else 0. */
size_t hpc_h5t_opaque_swap(hid_t t);

/** 1 when h5py reads enum t as NumPy's bool (members FALSE = 0, TRUE = 1). */
int hpc_h5t_is_bool(hid_t t);

/** Does type t hold variable-length data (sequences, variable strings) or
 *  references, at any depth? */
int hpc_h5t_has_var(hid_t t);

/** 1 when h5py reads compound t as a complex number: members "r", "i" of
 * one NumPy float (of *part bytes) and byte order. */
int hpc_h5t_is_complex(hid_t t, size_t *part);

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
 * Append NumPy's name of the type h5py gives file type t, whose memory
 * type is m, to o, e.g. "<f8", "|S10" or a structured description.
 */
void hpc_h5t_np_dtype(hid_t t, hid_t m, GString *o);

/**
 * Append the value of attribute aid to o as text: numbers joined by ',',
 * strings one per line (each ended with NUL where one holds a newline),
 * enum members by name.  Values that have no such text get, in dtype,
 * their NumPy dtype (empty for text): fixed-length strings holding NUL and
 * a newline are their elements' bytes as h5py holds them (|S<n>,
 * NUL-padded) with *esize = n (else 0); other types with a byte image
 * (compound, array, opaque, complex) are hex of those bytes (each element
 * "0x" and its bytes, joined by ','), dtype as user.dtype gives it for a
 * dataset of the type.  limit is the file size, which the attribute's raw
 * data must fit in.  Returns HPC_OK or HPC_E_IO (the libhdf5 error stack
 * tells why).
 */
int hpc_h5t_attr_text(hid_t aid, uint64_t limit, GString *o, GString *dtype, size_t *esize);

/** n values of es bytes each at v as the hex text of an attribute of a
 *  type without another text: "0x" and each value's bytes, joined by ','. */
void hpc_h5t_hex_text(GString *o, const unsigned char *v, size_t n, size_t es);

/**
 * Text t of strings or references, every element ended with NUL (which
 * no HDF5 string or name holds): when no element holds a newline either,
 * its NULs become newlines (docs/hdf5.md, "user.h5eol").  Returns 1 when
 * they stay.
 */
int hpc_h5t_text_eol(GString *t);

#endif
