"""hdf5_extlink.py - external links and names that are not UTF-8
(docs/hdf5.md), written by h5py and checked against h5py's own reading.

  gen DIR            write DIR/run/{a.h5,b.h5,sub/c.h5}
  tree ROOT RUN      ROOT is RUN mounted (or extracted): every external
                     link of RUN's files is a symlink FILE//OBJECT; where
                     h5py follows it, reading through it gives h5py's value
  names ROOT FILE    ROOT is FILE's tree: every name, UTF-8 or not, is
                     there as its bytes, each dataset with h5py's bytes
  pkg RUN            the same through the Python package, on the run
                     directory and on each file alone
  refs JSON FILE     `hpcdump refs FILE`: every dataset's key is its name
                     with surrogate escapes, hpcmount_path likewise
"""
import json
import os
import posixpath
import sys

import h5py
import numpy as np

LATIN1 = b"temp \xb0C"          # HDFView writes names like this one


def gen(top):
    run = os.path.join(top, "run")
    os.makedirs(os.path.join(run, "sub"), exist_ok=True)
    with h5py.File(os.path.join(run, "b.h5"), "w") as f:
        f["x"] = np.arange(12, dtype="<i4").reshape(3, 4)
        g = f.create_group("grp")
        g["y"] = np.linspace(0, 1, 5)
        g["z"] = np.arange(3, dtype=">u2")
        f["soft"] = h5py.SoftLink("/grp/y")
        # the same character twice: Latin-1 and UTF-8 names never collide
        h5py.h5d.create(f.id, LATIN1, h5py.h5t.STD_I16LE, h5py.h5s.create_simple((3,)))
        f[LATIN1][...] = [-1, 2, -3]
        f["temp \u00b0C"] = np.array([7.5, 8.5])
        g.id.links.create_hard(b"\xe9t\xe9", f.id, b"x")
    with h5py.File(os.path.join(run, "a.h5"), "w") as f:
        f["own"] = np.arange(4, dtype="<f4")
        # what a target climbing out of a.h5's tree would wrongly meet,
        # were it taken from a.h5's root
        f["b.h5/x"] = np.arange(2, dtype="<i1")
        f["to_x"] = h5py.ExternalLink("b.h5", "/x")
        f["to_grp"] = h5py.ExternalLink("b.h5", "grp")          # relative object name
        f["to_root"] = h5py.ExternalLink("b.h5", "/")
        f["to_soft"] = h5py.ExternalLink("b.h5", "/soft")
        f["to_c"] = h5py.ExternalLink("sub/c.h5", "/w")
        f["to_self"] = h5py.ExternalLink("a.h5", "/own")
        f["to_latin1"] = h5py.ExternalLink("b.h5", LATIN1)
        f["no_obj"] = h5py.ExternalLink("b.h5", "/nothing")
        f["no_file"] = h5py.ExternalLink("missing.h5", "/x")
        deep = f.create_group("d1/d2")
        deep["up"] = h5py.ExternalLink("b.h5", "/grp/z")
    with h5py.File(os.path.join(run, "sub", "c.h5"), "w") as f:
        f["w"] = np.arange(6, dtype="<i8")
        f["back"] = h5py.ExternalLink("../b.h5", "/grp/y")   # from c.h5's directory


def ext_links(path):
    """(link path, file, object) of every external link of file path."""
    out = []
    with h5py.File(path, "r") as f:
        todo, seen = [(b"/", f)], set()
        while todo:
            p, g = todo.pop()
            addr = h5py.h5o.get_info(g.id).addr
            if addr in seen:              # a group hard-linked into itself
                continue
            seen.add(addr)
            for name in g.id:
                q = p.rstrip(b"/") + b"/" + name
                info = g.id.links.get_info(name)
                if info.type == h5py.h5l.TYPE_EXTERNAL:
                    fn, obj = g.id.links.get_val(name)
                    out.append((q, fn, obj))
                elif info.type == h5py.h5l.TYPE_HARD and isinstance(g[name], h5py.Group):
                    todo.append((q, g[name]))
    return out


def want_target(link, fn, obj):
    """The documented target: up out of the tree to the file's directory,
    the file as stored, '//', the object's path."""
    depth = link.count(b"/")
    return b"../" * depth + fn + b"//" + obj.lstrip(b"/")


def le_bytes(a):
    """The mount's bytes of h5py's array a: C order, little-endian."""
    a = np.ascontiguousarray(a)
    return a.astype(a.dtype.newbyteorder("<")).tobytes()


def listing(path):
    """Names in directory path but the root's .info."""
    return sorted(n for n in os.listdir(path) if n != b".info")


def h5py_value(path, link):
    """What h5py reaches through link: ("dataset", bytes), ("group",
    sorted names as bytes) or (None, None) where it cannot follow it."""
    with h5py.File(path, "r") as f:
        try:
            o = f[link]
        except Exception:                     # noqa: BLE001 - missing file or object, loops
            return None, None
        if isinstance(o, h5py.Datatype):      # committed types are left out
            return None, None
        if isinstance(o, h5py.Group):
            return "group", sorted(n if isinstance(n, bytes) else n.encode() for n in o.keys())
        return "dataset", le_bytes(o[()])


def run_files(run):
    for d, _, files in os.walk(run):
        for fn in sorted(files):
            if fn.endswith(".h5"):
                yield os.path.relpath(os.path.join(d, fn), run)


def check(ok, what, errors):
    if not ok:
        errors.append(what)


def tree(root, run):
    errors, n = [], 0
    for rel in run_files(run):
        for link, fn, obj in ext_links(os.path.join(run, rel)):
            p = os.fsencode(root) + b"/" + os.fsencode(rel) + link
            n += 1
            check(os.readlink(p) == want_target(link, fn, obj), "%r: target %r" % (p, os.readlink(p)), errors)
            kind, val = h5py_value(os.path.join(run, rel), link)
            if kind == "dataset":
                with open(p, "rb") as fh:
                    check(fh.read() == val, "%r: bytes differ from h5py's" % p, errors)
            elif kind == "group":
                check(listing(p) == val, "%r: listing %r, h5py %r" % (p, listing(p), val), errors)
            else:
                check(not os.path.exists(p), "%r: h5py cannot follow it, the mount can" % p, errors)
    check(n == 11, "%d external links seen, not 11" % n, errors)
    return errors


def names(root, path):
    errors = []
    with h5py.File(path, "r") as f:
        todo = [(b"", f)]
        while todo:
            p, g = todo.pop()
            listed = listing(os.fsencode(root) + p)
            want = sorted(n if isinstance(n, bytes) else n.encode() for n in g.keys())
            check(listed == want, "%r: %r, h5py %r" % (p, listed, want), errors)
            for name in want:
                if g.id.links.get_info(name).type != h5py.h5l.TYPE_HARD:
                    continue
                o = g[name]
                q = p + b"/" + name
                if isinstance(o, h5py.Group):
                    todo.append((q, o))
                    continue
                with open(os.fsencode(root) + q, "rb") as fh:
                    check(fh.read() == le_bytes(o[()]), "%r: bytes" % q, errors)
    return errors


def pkg(run):
    import hpcmount
    errors = []
    with hpcmount.open(run) as c:
        for rel in run_files(run):
            for link, fn, obj in ext_links(os.path.join(run, rel)):
                p = rel + os.fsdecode(link)
                check(c.readlink(p) == os.fsdecode(want_target(link, fn, obj)), "%s: readlink" % p, errors)
                kind, val = h5py_value(os.path.join(run, rel), link)
                if kind == "dataset":
                    check(c.read(p) == val, "%s: read" % p, errors)
                    with h5py.File(os.path.join(run, rel), "r") as f:
                        check(np.array_equal(c.array(p), f[link][()]), "%s: array" % p, errors)
                elif kind == "group":
                    got = sorted(os.fsencode(x) for x in c.listdir(p) if x != ".info")
                    check(got == val, "%s: listdir %r" % (p, got), errors)
        want = "temp \udcb0C"
        check(want in c.listdir("b.h5"), "b.h5: no %r in %r" % (want, c.listdir("b.h5")), errors)
        with h5py.File(os.path.join(run, "b.h5"), "r") as f:
            check(np.array_equal(c.array("b.h5/" + want), f[LATIN1][()]), "array of a Latin-1 name", errors)
            check(np.array_equal(c.array("b.h5/grp/\udce9t\udce9"), f["x"][()]), "Latin-1 hard link", errors)
            check(np.array_equal(c.array("b.h5/temp \u00b0C"), f["temp \u00b0C"][()]), "UTF-8 twin", errors)
    # a file alone: the link names the other file, but leads out of the
    # tree: following it is an error, never an object of this file
    with hpcmount.open(os.path.join(run, "a.h5")) as c:
        check(c.readlink("to_x") == "../b.h5//x", "a.h5 alone: readlink", errors)
        try:
            c.read("to_x")
            errors.append("a.h5 alone: to_x read")
        except OSError:
            pass
    return errors


def refs(path_json, path):
    errors = []
    with open(path_json, "rb") as fh:
        r = json.loads(fh.read().decode("utf-8"))["refs"]
    with h5py.File(path, "r") as f:
        for name in (LATIN1, "temp \u00b0C".encode()):
            key = os.fsdecode(name)
            z = json.loads(r.get(key + "/.zattrs", "{}"))
            check(z.get("hpcmount_path") == "/" + key, "refs: %r: %r" % (key, z), errors)
            a = json.loads(r.get(key + "/.zarray", "{}"))
            check(a.get("shape") == list(f[name].shape), "refs: %r shape" % key, errors)
    return errors


def main():
    cmd = sys.argv[1]
    if cmd == "gen":
        gen(sys.argv[2])
        return 0
    errors = {"tree": tree, "names": names, "pkg": pkg, "refs": refs}[cmd](*sys.argv[2:])
    for e in errors[:20]:
        print(e, file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
