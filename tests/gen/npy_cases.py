#!/usr/bin/python3
"""npy_cases.py - what numpy's np.save writes, for the NPY header tests.

Prints one line per case: a user.dtype value a reader gives (dtype.str for
plain types; for structured ones both repr(dtype.descr) and the literal
numpy.dtype() takes: a list of fields when packed, else a dict of names,
formats, offsets and itemsize), the user.shape value ("" for a scalar),
and the hex of the header np.save writes.
"""
import io
import numpy as np

CASES = [
    ('<f8', (3, 4)), ('|u1', ()), ('<i2', (0,)), ('|S10', (5,)), ('<c16', (2, 2, 2)),
    ('|b1', (7,)), ('<f16', (1,)), ('<u8', (123456789012,)), ('>i4', (1, 0, 3)),
    ([('a', '<i4'), ('b', '<f8', (3,))], (2,)),
    ([('x', [('p', '<f4'), ('q', '|S3')]), ('y', '<i8', (2, 2))], ()),
    ({'names': ['a', 'b'], 'formats': ['<i2', '<f8'], 'offsets': [0, 8], 'itemsize': 24}, (4,)),
    ([('caf\u00e9', '<i4')], (1,)),
    ([('\u20ac', '<i4')], (1,)),
    ([('f%05d' % i, '<f8') for i in range(3000)], (2,)),
    ({'names': ['x', 'y'], 'formats': [[('p', '<f4'), ('q', '|S3')], '<i8'],
      'offsets': [4, 16], 'itemsize': 40}, (3,)),
    ([('outer', {'names': ['a'], 'formats': ['<u2'], 'offsets': [2], 'itemsize': 8}),
      ('arr', ({'names': ['b'], 'formats': ['<f4'], 'offsets': [0], 'itemsize': 8}, (2,)))], (1,)),
    ([("it's", '<i4')], (1,)),
]


def literal(d):
    """The literal a reader writes for dtype d (see the module doc)."""
    if d.subdtype is not None:
        return "(%s, %r)" % (literal(d.subdtype[0]), d.subdtype[1])
    if d.names is None:
        return repr(d.str)
    fields = [(n, d.fields[n][0], d.fields[n][1]) for n in d.names]
    packed = all(off == sum(f[1].itemsize for f in fields[:i])
                 for i, (_, _, off) in enumerate(fields)) and \
        d.itemsize == sum(f[1].itemsize for f in fields)
    if packed:
        return "[%s]" % ", ".join(
            "(%r, %s, %r)" % (n, literal(t.subdtype[0]), t.subdtype[1]) if t.subdtype
            else "(%r, %s)" % (n, literal(t)) for n, t, _ in fields)
    return "{'names': [%s], 'formats': [%s], 'offsets': [%s], 'itemsize': %d}" % (
        ", ".join(repr(n) for n, _, _ in fields), ", ".join(literal(t) for _, t, _ in fields),
        ", ".join(str(o) for _, _, o in fields), d.itemsize)


def main():
    for dt, shape in CASES:
        d = np.dtype(dt)
        forms = [repr(d.descr), literal(d)] if d.names is not None else [d.str]
        buf = io.BytesIO()
        with np.testing.suppress_warnings() as sup:
            sup.filter(UserWarning)
            header = {'descr': np.lib.format.dtype_to_descr(d),
                      'fortran_order': False, 'shape': shape}
            np.lib.format._write_array_header(buf, header, None)
        for user_dtype in forms:
            print('%s\t%s\t%s' % (user_dtype, ','.join(str(n) for n in shape),
                                  buf.getvalue().hex()))


main()
