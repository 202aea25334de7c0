#!/usr/bin/python3
"""dhdf_diff.py - checker of tests/mount/dhdf_diff.sh: a distributed HDF set
written by tests/gen/dhdf_diffgen against libhdf4's SDreaddata bytes.

  check ROOT SETDIR [noxattr]  every array and piece of ROOT (a mount of
                            SETDIR/main.hdf, or an extracted tree) equals
                            SETDIR's .expect files; with xattrs also
                            user.shape / user.dtype / user.origin; on a mount
                            reads at odd offsets and of odd sizes that start
                            one element before and end one after the edges
                            of pieces, and random ones
  hpcdump HPCDUMP SETDIR    every array and piece through `hpcdump cat`
"""
import os
import random
import sys

# tests/lib's dump_cat
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import dump_cat  # noqa: E402


def layout(setdir):
    arrays, pieces = {}, []
    for line in open(os.path.join(setdir, "layout.txt")):
        w = line.split()
        if w[0] == "array":
            arrays[w[1]] = (w[2], [int(x) for x in w[3].split(",")])
        else:
            pieces.append((w[1], w[2], [int(x) for x in w[3].split(",")],
                           [int(x) for x in w[4].split(",")]))
    return arrays, pieces


def itemsize(dtype):
    return int(dtype[2:])


def linear(idx, dims):
    lin = 0
    for i, d in zip(idx, dims):
        lin = lin * d + i
    return lin


def edges(name, arrays, pieces):
    """Byte offsets where the assembled array goes from one piece to the
    next: each piece row's first and one past its last element."""
    dtype, dims = arrays[name]
    es = itemsize(dtype)
    out = set()
    for a, _, org, size in pieces:
        if a != name:
            continue
        last = [o + s - 1 for o, s in zip(org, size)]
        row_end = list(org[:-1]) + [last[-1]]
        for idx in (org, row_end, last):
            out.add(linear(idx, dims) * es)
        out.add((linear(row_end, dims) + 1) * es)
    return sorted(out)


def odd_reads(path, want, spots, rng, es):
    fd = os.open(path, os.O_RDONLY)
    bad = None
    try:
        reads = []
        for e in spots[:60]:
            reads += [(max(e - 1, 0), 3), (max(e - es - 1, 0), 2 * es + 3), (max(e - 3, 0), 4099)]
        for _ in range(10):
            reads.append((rng.randrange(len(want) + 1) | 1, rng.choice([1, 7, 4097, 65539, 131073, 300001])))
        reads.append((1, max(len(want) - 2, 0)))
        for off, n in reads:
            if os.pread(fd, n, off) != want[off:off + n]:
                bad = "read of %d bytes at %d differs" % (n, off)
                break
    finally:
        os.close(fd)
    return bad


def check(root, setdir, xattrs=True):
    arrays, pieces = layout(setdir)
    rng = random.Random(11)
    bad, checked = [], 0
    for name, (dtype, dims) in arrays.items():
        want = open(os.path.join(setdir, name + ".expect"), "rb").read()
        p = os.path.join(root, name)
        got = open(p, "rb").read() if os.path.isfile(p) else None
        checked += 1
        if got != want:
            bad.append("%s: assembled array differs from SDreaddata's pieces (%s bytes, want %d)"
                       % (name, None if got is None else len(got), len(want)))
            continue
        if xattrs:
            shape = os.getxattr(p, "user.shape").decode()
            dt = os.getxattr(p, "user.dtype").decode()
            if shape != ",".join(map(str, dims)) or dt != dtype:
                bad.append("%s: xattrs %s %s, want %s %s" % (name, shape, dt, dims, dtype))
            why = odd_reads(p, want, edges(name, arrays, pieces), rng, itemsize(dtype))
            if why:
                bad.append("%s: %s" % (name, why))
    for name, chunk, org, size in pieces:
        want = open(os.path.join(setdir, name + ".pieces", chunk + ".expect"), "rb").read()
        p = os.path.join(root, name + ".pieces", chunk)
        got = open(p, "rb").read() if os.path.isfile(p) else None
        checked += 1
        if got != want:
            bad.append("%s: piece differs from SDreaddata's" % chunk)
        elif xattrs and (os.getxattr(p, "user.origin").decode() != ",".join(map(str, org)) or
                         os.getxattr(p, "user.shape").decode() != ",".join(map(str, size))):
            bad.append("%s: user.origin / user.shape wrong" % chunk)
        elif xattrs and len(want) > 2:
            why = odd_reads(p, want, [len(want) // 2], rng, itemsize(arrays[name][0]))
            if why:
                bad.append("%s: %s" % (chunk, why))
    for b in bad[:10]:
        print(b)
    print("%s: checked %d arrays and pieces, %d bad" % (os.path.basename(setdir), checked, len(bad)))
    return 1 if bad or not checked else 0


def via_hpcdump(hpcdump, setdir):
    """Every array and piece through one `hpcdump cat` of them all (each
    in turn): the output must be their SDreaddata bytes, one after the
    other."""
    arrays, pieces = layout(setdir)
    main = os.path.join(setdir, "main.hdf")
    paths = [(n, n + ".expect") for n in arrays]
    paths += [("%s.pieces/%s" % (a, c), "%s.pieces/%s.expect" % (a, c)) for a, c, _, _ in pieces]
    exp = [os.path.join(setdir, e) for _, e in paths]
    got, rc, rest, err = dump_cat.cat_each(hpcdump, main, [("/" + node, os.path.getsize(e))
                                                           for (node, _), e in zip(paths, exp)])
    bad = 0 if rc == 0 else 1
    if bad:
        print("hpcdump cat: exit %d: %s" % (rc, err[:300]))
    for (node, _), e, g in zip(paths, exp, got):
        if g != open(e, "rb").read():
            print("hpcdump cat %s differs from SDreaddata's" % node)
            bad += 1
    if rest:
        print("hpcdump cat: %d bytes after SDreaddata's" % rest)
        bad += 1
    print("hpcdump cat: %d arrays and pieces, %d bad" % (len(paths), bad))
    return 1 if bad or not paths else 0


def main():
    if sys.argv[1] == "check":
        sys.exit(check(sys.argv[2], sys.argv[3], len(sys.argv) <= 4 or sys.argv[4] != "noxattr"))
    if sys.argv[1] == "hpcdump":
        sys.exit(via_hpcdump(sys.argv[2], sys.argv[3]))
    sys.exit("unknown command " + sys.argv[1])


if __name__ == "__main__":
    main()
