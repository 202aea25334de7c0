#!/usr/bin/python3
"""chunk_sums.py MNT SRC HPCDUMP EXPECT [xattrs] - the chunks a test expects,
through a mount and through hpcdump cat.

EXPECT has a line "PATH SHA256 SHAPE DTYPE NBYTES" per chunk (the
manifest lines of tests/data/gsd/gsdtest.py): MNT/PATH must have that
sha256 (with "xattrs" also that size, user.shape and user.dtype), and one
`HPCDUMP cat SRC /PATH...` of every chunk must exit 0 and print each
chunk's bytes in turn, NBYTES each, and nothing more.  Prints a line per
difference and "checked: N"; exit 1 on any difference or when EXPECT is
empty.  One interpreter and one hpcdump for every chunk: a sha256sum, a
cut, a getfattr, their subshells and an hpcdump per chunk cost more CPU
than the reads themselves.
"""
import hashlib
import os
import sys

import dump_cat


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


def dump_diffs(dump, src, want):
    """What differs in one `hpcdump cat` of every chunk of want (PATH,
    SHA256, NBYTES): a line each."""
    sums, rc, rest, err = dump_cat.cat_each(
        dump, src, [("/" + p, n) for p, _, n in want],
        lambda b: hashlib.sha256(b).hexdigest())
    out = ["hpcdump cat: exit %d: %s" % (rc, err[:300])] if rc != 0 else []
    out += ["hpcdump bytes of %s" % path for (path, sha, _), got in zip(want, sums) if got != sha]
    if rest:
        out.append("hpcdump cat: %d bytes after the chunks" % rest)
    return out


def main(argv):
    mnt, src, dump, expect = argv[1:5]
    xattrs = argv[5:] == ["xattrs"]
    bad = 0
    want = []
    with open(expect) as fh:
        for line in fh:
            w = line.split()
            path = w[0]
            want.append((path, w[1], int(w[4])))
            for what in mount_diffs(os.path.join(mnt, path), w[1:], xattrs):
                print("  %s of %s" % (what, path))
                bad = 1
    for what in dump_diffs(dump, src, want) if want else []:
        print("  " + what)
        bad = 1
    print("checked: %d" % len(want))
    return 1 if bad or not want else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
