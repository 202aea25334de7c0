#!/usr/bin/python3
"""chunk_sums.py MNT SRC HPCDUMP EXPECT [xattrs] - the chunks a test expects,
through a mount and through hpcdump cat.

EXPECT has a line "PATH SHA256 [SHAPE DTYPE NBYTES]" per chunk (the
manifest lines of tests/data/gsd/gsdtest.py): MNT/PATH must have that
sha256 (with "xattrs" also that size, user.shape and user.dtype) and
`HPCDUMP cat SRC /PATH` must print the same bytes.  Prints a line per
difference and "checked: N"; exit 1 on any difference or when EXPECT is
empty.  One interpreter for every chunk: a sha256sum, a cut, a getfattr
and their subshells per chunk cost more CPU than the reads themselves.
"""
import hashlib
import os
import subprocess
import sys


def mount_diffs(full, want, xattrs):
    """What differs at the mount: [] when nothing does."""
    out = []
    try:
        with open(full, "rb") as fh:
            if hashlib.sha256(fh.read()).hexdigest() != want[0]:
                out.append("sha256")
    except OSError:
        out.append("sha256")
    if not xattrs:
        return out
    shape, dtype, nbytes = want[1:4]
    try:
        if str(os.stat(full).st_size) != nbytes:
            out.append("size")
    except OSError:
        out.append("size")
    for name, value in (("user.shape", shape), ("user.dtype", dtype)):
        try:
            ok = os.fsdecode(os.getxattr(full, name)) == value
        except OSError:
            ok = False
        if not ok:
            out.append(name)
    return out


def main(argv):
    mnt, src, dump, expect = argv[1:5]
    xattrs = argv[5:] == ["xattrs"]
    bad = n = 0
    with open(expect) as fh:
        for line in fh:
            w = line.split()
            path, want = w[0], w[1:]
            n += 1
            for what in mount_diffs(os.path.join(mnt, path), want, xattrs):
                print("  %s of %s" % (what, path))
                bad = 1
            got = subprocess.run([dump, "cat", src, "/" + path], stdout=subprocess.PIPE,
                                 stderr=subprocess.DEVNULL).stdout
            if hashlib.sha256(got).hexdigest() != want[0]:
                print("  hpcdump bytes of %s" % path)
                bad = 1
    print("checked: %d" % n)
    return 1 if bad or n == 0 else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
