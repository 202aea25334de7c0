#!/usr/bin/python3
"""page_folios.py FILE... - how the kernel's page cache holds each FILE:
the pages it has cached, how many are in large folios (compound pages) and
how many large folios there are.  Maps FILE shared and read-only, so the
mapped pages are the page cache's own; their frame numbers come
from /proc/self/pagemap and their flags from /proc/kpageflags (root).
Read the file first (cat FILE > /dev/null) to fill the cache.
"""
import ctypes
import mmap
import os
import struct
import sys

PAGE = os.sysconf('SC_PAGE_SIZE')
PRESENT, PFN_MASK = 1 << 63, (1 << 55) - 1
KPF_COMPOUND_HEAD, KPF_COMPOUND_TAIL = 1 << 15, 1 << 16
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                      ctypes.c_long)
libc.munmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t)


def folios(path):
    with open(path, 'rb') as f:
        size = os.fstat(f.fileno()).st_size
        base = libc.mmap(None, size, mmap.PROT_READ, mmap.MAP_SHARED, f.fileno(), 0)
    if base in (None, ctypes.c_void_p(-1).value):
        raise OSError(ctypes.get_errno(), 'mmap ' + path)
    # every page faulted in first: read between faults, pagemap missed
    # some of the pages mapped by the fault before
    for i in range(0, size, PAGE):
        ctypes.string_at(base + i, 1)
    pages = heads = tails = 0
    with open('/proc/self/pagemap', 'rb') as pm, open('/proc/kpageflags', 'rb') as kf:
        for i in range(0, size, PAGE):
            pm.seek((base + i) // PAGE * 8)
            entry = struct.unpack('<Q', pm.read(8))[0]
            if not entry & PRESENT:
                continue
            kf.seek((entry & PFN_MASK) * 8)
            flags = struct.unpack('<Q', kf.read(8))[0]
            pages += 1
            heads += bool(flags & KPF_COMPOUND_HEAD)
            tails += bool(flags & KPF_COMPOUND_TAIL)
    libc.munmap(ctypes.c_void_p(base), size)
    return pages, heads, tails


def main():
    print('%-40s %8s %12s %12s' % ('file', 'pages', 'in folios', 'large folios'))
    for path in sys.argv[1:]:
        pages, heads, tails = folios(path)
        print('%-40s %8d %12d %12d' % (path, pages, heads + tails, heads))


if __name__ == '__main__':
    main()
