#!/usr/bin/python3
"""refs_damage.py DIR - an HDF5 file written by h5py (ok.h5) and copies of it
each damaged in one dataset only, for tests/mount/refs_damaged.sh:

  header.h5   /b's object header overwritten (libhdf5 cannot open /b)
  index.h5    /b's chunk B-tree signature broken (its chunks cannot be listed)
  beyond.h5   one chunk address of /b moved past the end of the file
  contig.h5   /a's contiguous data address moved past the end of the file
  checksum.h5 a byte of /e's third chunk flipped (its fletcher32 checksum
              fails; the reader finds it after listing two chunks)
  super.h5    the superblock broken (the whole container is damaged)

Prints one line per damaged copy: FILE DATASET.  The offsets come from
h5py (object header and chunk addresses), never from constants; the file
is written with libver="earliest" so that chunks are indexed by a v1
B-tree ("TREE" nodes).
"""
import os
import struct
import sys

import h5py
import numpy


def write(path):
    with h5py.File(path, "w", libver="earliest") as f:
        f["a"] = numpy.arange(100, dtype="<i4")
        f.create_dataset("b", data=numpy.arange(1000, dtype="<f8"), chunks=(100,),
                         compression="gzip")
        f.create_dataset("c", data=numpy.arange(50, dtype="<i2") * 3, chunks=(10,),
                         compression="gzip", shuffle=True)
        f.create_group("g")["d"] = numpy.arange(6, dtype="<f4").reshape(2, 3)
        f.create_dataset("e", data=numpy.arange(40, dtype="<i4"), chunks=(10,),
                         fletcher32=True)


def where(path):
    """The offsets the damage needs: /b's object header, /b's chunk
    addresses, /a's object header and data address, /e's third chunk."""
    with h5py.File(path, "r") as f:
        b, a = f["b"], f["a"]
        chunks = [b.id.get_chunk_info(i).byte_offset for i in range(b.id.get_num_chunks())]
        e2 = f["e"].id.get_chunk_info_by_coord((20,)).byte_offset
        return (h5py.h5o.get_info(b.id).addr, chunks,
                h5py.h5o.get_info(a.id).addr, a.id.get_offset(), e2)


def btree_of(data, chunks):
    """Offset of the v1 B-tree node (raw data chunks, rank 1) listing chunks,
    and the offset of the child address of its entry 3."""
    i = -1
    while True:
        i = data.find(b"TREE", i + 1)
        if i < 0:
            raise SystemExit("refs_damage.py: no chunk B-tree found")
        if data[i + 4] != 1:
            continue
        first = i + 8 + 16                   # signature, type, level, entries, siblings
        key = 4 + 4 + 2 * 8                  # chunk size, filter mask, 2 offsets
        kids = [struct.unpack_from("<Q", data, first + e * (key + 8) + key)[0]
                for e in range(len(chunks))]
        if kids == chunks:
            return i, first + 3 * (key + 8) + key


def save(d, name, data, dataset):
    with open(os.path.join(d, name), "wb") as fh:
        fh.write(data)
    print(name, dataset)


def main():
    d = sys.argv[1]
    ok = os.path.join(d, "ok.h5")
    write(ok)
    bhdr, chunks, ahdr, aaddr, e2 = where(ok)
    data = bytes(open(ok, "rb").read())
    tree, kid3 = btree_of(data, chunks)
    v = bytearray(data)
    v[bhdr + 16:bhdr + 56] = b"\xff" * 40
    save(d, "header.h5", v, "b")
    v = bytearray(data)
    v[tree:tree + 4] = b"XXXX"
    save(d, "index.h5", v, "b")
    v = bytearray(data)
    struct.pack_into("<Q", v, kid3, len(data) + 100000)
    save(d, "beyond.h5", v, "b")
    v = bytearray(data)
    k = v.find(struct.pack("<Q", aaddr), ahdr, ahdr + 1024)
    if k < 0:
        raise SystemExit("refs_damage.py: /a's data address not in its object header")
    struct.pack_into("<Q", v, k, len(data) + 4096)
    save(d, "contig.h5", v, "a")
    v = bytearray(data)
    v[e2 + 5] ^= 0xff
    save(d, "checksum.h5", v, "e")
    v = bytearray(data)
    v[0:8] = b"\x89HDX\r\n\x1a\n"
    with open(os.path.join(d, "super.h5"), "wb") as fh:
        fh.write(v)


if __name__ == "__main__":
    main()
