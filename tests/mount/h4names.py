"""h4names.py - the file names hpcmount serves the SDSs of a plain HDF4
file under (docs/dhdf.md, "Names"), written apart from the C code so that
the tests check the mount against the rule as documented.

served_names([(index, name as bytes), ...]) takes the SDSs in the order
tests/gen/hdf4_oracle lists them (every SDS, then every coordinate
variable, each in index order) and gives {index: file name}.
"""
import os

FILE_NAME_MAX = 255


def own_name_ok(name):
    """Whether a name can be a file of the mount's root as it is."""
    return (0 < len(name) <= FILE_NAME_MAX and b"/" not in name and b"\0" not in name
            and name not in (b".", b"..", b".info"))


def alias(index, name, taken):
    """The first of NAME~INDEX, NAME~INDEX_2, ... no name in taken has
    ('/' and NUL as '_', NAME cut to fit 255 bytes, not inside a UTF-8
    character)."""
    k = 1
    while True:
        suffix = b"~%d" % index if k == 1 else b"~%d_%d" % (index, k)
        keep = min(len(name), FILE_NAME_MAX - len(suffix))
        while 0 < keep < len(name) and name[keep] & 0xc0 == 0x80:
            keep -= 1
        cand = name[:keep].replace(b"/", b"_").replace(b"\0", b"_") + suffix
        if cand not in taken:
            return cand
        k += 1


def served_names(sdss):
    """{index: file name (str, os.fsdecode)}: an SDS keeps its name when it
    can be a file and no SDS listed before has it; the others get an
    alias once every name kept is known."""
    taken, out, rest = set(), {}, []
    for index, name in sdss:
        if own_name_ok(name) and name not in taken:
            taken.add(name)
            out[index] = name
        else:
            rest.append((index, name))
    for index, name in rest:
        out[index] = alias(index, name, taken)
        taken.add(out[index])
    return {i: os.fsdecode(n) for i, n in out.items()}
