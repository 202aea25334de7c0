#!/usr/bin/python3
"""npy_cases.py - what numpy's np.save writes, for the NPY header tests.

Prints one line per case: the user.dtype value a reader gives (dtype.str
for plain types, repr(dtype.descr) for structured ones), the user.shape
value ("" for a scalar), and the hex of the header np.save writes.
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
]


def main():
    for dt, shape in CASES:
        d = np.dtype(dt)
        user_dtype = repr(d.descr) if d.names is not None else d.str
        buf = io.BytesIO()
        with np.testing.suppress_warnings() as sup:
            sup.filter(UserWarning)
            header = {'descr': np.lib.format.dtype_to_descr(d),
                      'fortran_order': False, 'shape': shape}
            np.lib.format._write_array_header(buf, header, None)
        print('%s\t%s\t%s' % (user_dtype, ','.join(str(n) for n in shape),
                              buf.getvalue().hex()))


main()
