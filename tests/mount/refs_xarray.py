#!/usr/bin/python3
"""refs_xarray.py - xarray through the references sees a file as xarray
on the file itself does: the oracle is xr.open_dataset(FILE,
engine="netcdf4") (libnetcdf through netCDF4-python), the candidate
hpcmount.open(FILE).dataset(group).

  refs_xarray.py gen DIR           write the test files into DIR (netCDF-4
                                   files by netCDF4-python, HDF5 files by
                                   h5py with and without dimension scales)
  refs_xarray.py compare FILE...   every group of every FILE: the same
                                   variables, dims, coordinates, attributes
                                   and CF-decoded values; prints each
                                   difference, exit 1 on any
  refs_xarray.py dims MOUNT FILE   the mount of FILE: user.dims of every
                                   variable netCDF4-python lists equals its
                                   dimensions; scalars have none
  refs_xarray.py json REFS         the JSON of `hpcdump refs` of gen's
                                   cf.nc (REFS), scales_plain.h5 and
                                   scales.h5 (REFS with _plain, _scales
                                   before .json): typed values,
                                   libnetcdf's attributes hidden, NaN as
                                   zarr writes it, fill_value
  refs_xarray.py h4dims ORACLE FILE REFS [DIR]
                                   an HDF4 file: user.dims of every SDS
                                   served and _ARRAY_DIMENSIONS in its
                                   references (REFS) are the names
                                   libhdf4 gives its dimensions (ORACLE:
                                   tests/gen/hdf4_oracle -d output), as
                                   libnetcdf's HDF4 layer does; with DIR
                                   (directories, comma-separated) those of
                                   the SDSs ORACLE lists in them (the
                                   pieces of a distributed set, ORACLE of
                                   their associated file)
  refs_xarray.py h4attrs ORACLE FILE REFS [DIR]
                                   the same for the attributes (ORACLE:
                                   hdf4_oracle -a output): every
                                   attribute of every SDS served, and
                                   without DIR the file's, is in .zattrs
                                   as the typed value netCDF4-python
                                   gives (numbers, one as a scalar,
                                   several as a list, char8 as text); a
                                   _FillValue of the SDS's type and one
                                   value is .zarray's fill_value,
                                   SDgetfillvalue's
  refs_xarray.py batch LIST        the h4dims and h4attrs calls listed
                                   in LIST (one a line: OUTFILE, then the
                                   command and its arguments, separated
                                   by tabs) in this one interpreter, each
                                   one's output into its OUTFILE, ended
                                   by "status: N" (its exit status)

The corpus' HDF5 files are compared in tests/mount/refs_corpus.sh
(refs_verify.py --nc: oracle(), groups_of(), compare_group()).

The references' own attributes (hpcmount_*) are in .encoding, not .attrs
(dataset() puts them there), so the attributes compared are the file's.
"""
import os
import sys
import warnings

import numpy as np

import hpcmount

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import h4names  # noqa: E402 - beside this file

# xarray (pandas) is imported by the functions that use it: its import
# costs more CPU than h4dims' whole work, run once per HDF4 file

warnings.simplefilter("ignore")


# ---- the files -------------------------------------------------------------

def gen_netcdf(path):
    """A CF file as netCDF4-python writes it: coordinate variables, a
    dimension without one, an unlimited time, packed data with _FillValue,
    typed attributes of every kind, a group."""
    import netCDF4
    nc = netCDF4.Dataset(path, "w")
    nc.createDimension("time", None)
    nc.createDimension("lat", 4)
    nc.createDimension("lon", 5)
    nc.createDimension("nv", 2)
    t = nc.createVariable("time", "f8", ("time",))
    t.units, t.calendar = "hours since 2000-01-01 00:00", "standard"
    t[:] = [0, 6, 12]
    lat = nc.createVariable("lat", "f4", ("lat",))
    lat.units, lat.bounds = "degrees_north", "lat_bnds"
    lat[:] = [10, 20, 30, 40]
    nc.createVariable("lat_bnds", "f4", ("lat", "nv"))[:] = np.arange(8).reshape(4, 2)
    lon = nc.createVariable("lon", "f8", ("lon",), zlib=True)
    lon[:] = np.linspace(0, 20, 5)
    air = nc.createVariable("air", "i2", ("time", "lat", "lon"), zlib=True, shuffle=True,
                            chunksizes=(1, 2, 5), fill_value=np.int16(-9999))
    air.scale_factor, air.add_offset = np.float32(0.01), np.float32(250.0)
    air.units, air.long_name = "K", "air temperature \u00b0"
    air.valid_range = np.array([-5000, 5000], "i2")
    data = np.ma.masked_array(np.arange(60, dtype="i2").reshape(3, 4, 5), mask=False)
    data[1, 2, 3] = np.ma.masked
    air[:] = data
    sst = nc.createVariable("sst", "f4", ("lat", "lon"), fill_value=np.float32(np.nan))
    sst.missing_value = np.float32(-1.0)
    sst.coordinates = "height"
    sst[:] = np.ma.masked_array(np.arange(20, dtype="f4").reshape(4, 5), mask=[False] * 19 + [True])
    sst[0, 0] = -1.0
    nc.createVariable("height", "f4", ())[...] = 2.0
    nc.createVariable("count", "u8", ("time",))[:] = [1, 2, 2**63]
    nc.createVariable("flag", "i1", ("lon",), fill_value=False)[:] = [0, 1, -1, 2, 3]
    names = nc.createVariable("station", str, ("lat",))      # netCDF-4 strings: VLenUTF8
    names[:] = np.array(["Bergen", "Z\u00fcrich", "two\nlines", ""], dtype=object)
    nc.createVariable("label", str, ())[...] = np.array("scalar \u00b0", dtype=object)
    nc.title = "refs_xarray test file"
    nc.version = np.int32(3)
    nc.ratio = np.float64(0.1)
    nc.nums = np.array([1, 2, 3], "i8")
    nc.reals = np.array([0.5, np.inf, -np.inf, np.nan], "f4")
    nc.empty = ""
    nc.strings = ["one", "two"]
    g = nc.createGroup("grp")
    g.createDimension("k", 3)
    gv = g.createVariable("a", "f8", ("k", "lat"))
    gv[:] = np.arange(12.0).reshape(3, 4)
    gv.note = "uses the root's lat"
    g.createVariable("k", "i4", ("k",))[:] = [7, 8, 9]
    g.origin = np.uint16(7)
    nc.close()
    nc = netCDF4.Dataset(path.replace(".nc", "_classic.nc"), "w", format="NETCDF4_CLASSIC")
    nc.createDimension("x", 3)
    nc.createVariable("x", "f8", ("x",))[:] = [1, 2, 3]
    v = nc.createVariable("v", "f4", ("x",))
    v[:] = [4, 5, 6]
    v.units = "m"
    nc.history = "classic model: _nc3_strict hidden"
    nc.close()


def gen_h5py(path):
    """HDF5 as h5py writes it: dimension scales (named, unlimited, shared
    by two datasets), datasets without scales that netCDF gives phony
    dimensions (shared by length in a group, two of one length in one
    dataset, reusing a scale's dimension of that length), groups (phony
    dimensions numbered children first), attributes of every type netCDF
    reads and some it hides (bools, complex numbers, enums of no committed
    type; those of a committed one are integers), datasets of types
    netCDF has none for (a compound, bools), a dataset linked from two
    groups (netCDF-4 names each link in its group)."""
    import h5py
    with h5py.File(path, "w") as f:
        f["x"] = np.arange(3.0)
        f["x"].make_scale("the x axis")
        f.create_dataset("t", data=np.arange(2.0), maxshape=(None,), chunks=(4,))
        f["t"].make_scale()
        f["t"].attrs["units"] = "s"
        f["v"] = np.arange(6.0).reshape(2, 3)
        f["v"].dims[0].attach_scale(f["t"])
        f["v"].dims[1].attach_scale(f["x"])
        f.create_dataset("r", data=np.ones((2, 3), "f4"), maxshape=(None, 3), chunks=(1, 3),
                         compression="gzip")
        f["w"] = np.arange(20, dtype="<i4").reshape(4, 5)
        f["u"] = np.arange(20, dtype=">i4").reshape(5, 4)
        f["q"] = np.zeros((3, 3), "u1")
        f["s"] = np.float32(3.5)
        a = f["w"].attrs
        a["f32"], a["f16"], a["i8"], a["u64"] = np.float32(0.1), np.float16(1.5), np.int8(-3), np.uint64(2**63)
        a["one"], a["many"] = np.array([1.5]), np.array([1, 2], "u1")
        a["vlen"], a["vlens"] = "h\u00e9", ["a", "b"]
        a["fixed"], a["fixeds"] = np.bytes_(b"ab\0cd"), np.array([b"a", b"bcd"])
        a["badutf8"] = np.bytes_(b"\xff\xfeab")
        a["nan"], a["empty"] = np.nan, h5py.Empty("f4")
        a["bool"], a["complex"] = True, 1 + 2j
        a["NAME"], a["CLASS"] = "hidden", "hidden too"
        f["state_t"] = h5py.enum_dtype({"OFF": 0, "ON": 1, "LOST": -7}, basetype="i1")
        a.create("state", -7, dtype=f["state_t"])           # of a committed enum type:
        a.create("states", [0, -7, 1], dtype=f["state_t"])  # netCDF's enum, its integers
        a.create("loose", 300, dtype=h5py.enum_dtype({"A": 300}, basetype="<u2"))   # hidden
        f["masked"] = np.array([1.0, -1.0, 3.0])
        f["masked"].attrs["_FillValue"] = -1.0
        f["rec"] = np.array([(1, 2.5)], [("a", "<i4"), ("b", "<f8")])    # netCDF: no variable
        f.create_dataset("objref", (3,), dtype=h5py.ref_dtype)              # nor this
        f["objref"][0], f["objref"][1] = f["t"].ref, f["x"].ref
        f["flags"] = np.array([True, False])
        g = f.create_group("g")
        g["y"] = np.zeros(4)
        g["z"] = np.ones((4, 6), ">f8")
        g.attrs["about"] = np.array([1.5, 2.5], "f4")
        g.create_group("deep")["m"] = np.arange(9, dtype="i2")
        h = f.create_group("h")                 # a second hard link of g/y, named by
        h["first"] = np.zeros(5)                # netCDF-4 in h's own phony dimensions
        h["y"] = g["y"]
    with h5py.File(path.replace(".h5", "_plain.h5"), "w") as f:
        f["a"] = np.arange(12.0).reshape(3, 4)
        f["b"] = np.arange(4, dtype="i8")
        f.create_dataset("c", data=np.arange(12, dtype="f4").reshape(4, 3), chunks=(2, 3),
                         compression="gzip", shuffle=True)
        f.attrs["title"] = "no dimension scales"
        f["empty"] = np.zeros((0, 3))         # an axis of length 0: netCDF's own
        f["empty2"] = np.zeros((0, 3), "i2")  # unlimited dimension each


def gen_userblock(path):
    """Chunks after a user block, in a v1 B-tree and a fixed array:
    libhdf5 1.10 gives chunk addresses without the user block."""
    import h5py
    for lv, name in (("earliest", "ub_btree.h5"), ("latest", "ub_farray.h5")):
        with h5py.File(os.path.join(os.path.dirname(path), name), "w", libver=lv,
                       userblock_size=1024) as f:
            f.create_dataset("c", data=np.arange(60, dtype="i4").reshape(12, 5),
                             chunks=(2, 5))
            f.create_dataset("z", data=np.arange(60.0).reshape(6, 10), chunks=(3, 3),
                             compression="gzip")
            f["contig"] = np.arange(7, dtype="i2")


def gen_links(path):
    """Links to groups as h5py writes them, which libnetcdf shows as
    groups of their own (each with its own phony dimensions): soft links
    before and after their target in name order, to a group with scales
    and subgroups, a soft link to a soft link, a group's second hard
    link; beside it cycle.hdf5, a soft link to a group it is in (libnetcdf
    loops on it) and one to nothing (libnetcdf fails on it): no oracle,
    the references note them."""
    import h5py
    with h5py.File(path, "w") as f:
        g = f.create_group("g")
        g["d"] = np.arange(6.0).reshape(2, 3)
        g["e"] = np.arange(5, dtype="i2")
        g.create_group("sub")["s"] = np.arange(7)
        f["a_link"] = h5py.SoftLink("/g")
        f["z_link"] = h5py.SoftLink("g")
        f["zz_link"] = h5py.SoftLink("/z_link")
        f["x"] = np.arange(4)
        h = f.create_group("h")
        h["x"] = np.arange(3.0)
        h["x"].make_scale()
        h["v"] = np.arange(3.0)
        h["v"].dims[0].attach_scale(h["x"])
        h["v"].attrs["units"] = "m"
        f["h_link"] = h5py.SoftLink("/h")
        f["k"] = f["g/sub"]                     # a second hard link to a group
    with h5py.File(os.path.join(os.path.dirname(path), "cycle.hdf5"), "w") as f:
        g = f.create_group("g")
        g["d"] = np.arange(6.0).reshape(2, 3)
        g["up"] = h5py.SoftLink("/g")
        f["lg"] = h5py.SoftLink("/g")
        f["dangling"] = h5py.SoftLink("/nowhere")   # libnetcdf fails on it


def gen_extlinks(path):
    """External links as h5py writes them, which libnetcdf follows into
    the other file (ext_data.hdf5): to a group holding a chunked,
    compressed dataset with a dimension scale, and to a dataset without
    scales, whose phony dimensions are the linking group's; the file's own
    dataset without scales is numbered after the other file's ones.
    Beside it ext_guards.hdf5 (no oracle: the references note them): a
    link to a missing file, one to the file itself (a cycle), one to a
    file out of the directory."""
    import h5py
    d = os.path.dirname(path)
    with h5py.File(os.path.join(d, "ext_data.hdf5"), "w") as f:
        g = f.create_group("grid")
        g["x"] = np.linspace(0.5, 2.0, 4)
        g["x"].make_scale("x")
        t = g.create_dataset("temp", data=np.arange(24.0).reshape(4, 6), chunks=(2, 3),
                             compression="gzip")
        g["y"] = np.arange(6, dtype="i4")
        g["y"].make_scale("y")
        t.dims[0].attach_scale(g["x"])
        t.dims[1].attach_scale(g["y"])
        t.attrs["units"] = "K"
        f.create_group("deep").create_group("inner")["w"] = np.arange(15, dtype="i4").reshape(3, 5)
    with h5py.File(path, "w") as f:
        f["to_grid"] = h5py.ExternalLink("ext_data.hdf5", "/grid")
        f["to_w"] = h5py.ExternalLink("ext_data.hdf5", "deep/inner/w")
        f.create_group("sub")["local"] = np.arange(7, dtype="i2")
    os.makedirs(os.path.join(d, "up"), exist_ok=True)
    with h5py.File(os.path.join(d, "outside.hdf5"), "w") as f:
        f["y"] = np.arange(3)
    with h5py.File(os.path.join(d, "up", "ext_guards.hdf5"), "w") as f:
        f["ok"] = np.arange(2)
        f["missing"] = h5py.ExternalLink("no_such_file.h5", "/x")
        f["loop"] = h5py.ExternalLink("ext_guards.hdf5", "/")
        f["out"] = h5py.ExternalLink("../outside.hdf5", "/y")


def gen(d):
    os.makedirs(d, exist_ok=True)
    gen_netcdf(os.path.join(d, "cf.nc"))
    gen_h5py(os.path.join(d, "scales.h5"))
    gen_links(os.path.join(d, "links.h5"))
    gen_extlinks(os.path.join(d, "extlink.h5"))
    gen_userblock(os.path.join(d, "ub.h5"))


# ---- comparing -------------------------------------------------------------

def same_value(a, b):
    """Attribute values as xarray.testing compares them."""
    from xarray.core import utils
    try:
        return bool(utils.equivalent(a, b))
    except Exception:          # shapes numpy refuses to compare
        return False


def var_diffs(name, got, want):
    out = []
    if got.dims != want.dims:
        out.append("dims: %s %s, want %s" % (name, got.dims, want.dims))
        return out
    for k in sorted(set(got.attrs) | set(want.attrs)):
        if k not in got.attrs:
            out.append("attrs: %s: %s missing (want %r)" % (name, k, want.attrs[k]))
        elif k not in want.attrs:
            out.append("attrs: %s: %s=%r, not in the file's" % (name, k, got.attrs[k]))
        elif not same_value(got.attrs[k], want.attrs[k]):
            out.append("attrs: %s: %s=%r, want %r" % (name, k, got.attrs[k], want.attrs[k]))
    try:
        if not getattr(got, "variable", got).equals(getattr(want, "variable", want)):
            out.append("values: %s: %r, want %r" % (name, got.values.ravel()[:6],
                                                    want.values.ravel()[:6]))
    except Exception as e:      # noqa: BLE001 - one variable's failure, reported
        out.append("values: %s: %s: %s" % (name, type(e).__name__, e))
    return out


def diffs(got, want, not_covered=()):
    """The differences of Dataset got from want, each "KIND: text"; the
    variables of want missing from got but named in not_covered are
    "uncovered: ..." only, and want's dimensions and coordinates are
    those of what got covers."""
    import xarray as xr
    out = []
    gone = [n for n in want.variables if n not in got.variables and n in not_covered]
    for n in gone:
        out.append("uncovered: %s missing (%s)" % (n, not_covered[n]))
    want = want.drop_vars(gone)
    for n in sorted(set(got.variables) | set(want.variables)):
        if n not in got.variables:
            out.append("variables: %s missing (%s)" % (n, want[n].dims))
        elif n not in want.variables:
            out.append("variables: %s %s, not in the file's" % (n, got[n].dims))
        else:
            out += var_diffs(n, got[n], want[n])
    if set(got.coords) != set(want.coords):
        out.append("coords: %s, want %s" % (sorted(got.coords), sorted(want.coords)))
    if dict(got.dims) != dict(want.dims):
        out.append("dims: %s, want %s" % (dict(got.dims), dict(want.dims)))
    out += [d.replace(": <dataset>: ", ": ") for d in var_diffs("<dataset>", xr.Variable((), 0, got.attrs),
                                                              xr.Variable((), 0, want.attrs))]
    return out


def groups_of(path):
    """The groups netCDF sees, "/" first."""
    import netCDF4
    out = []

    def walk(g, prefix):
        out.append(prefix or "/")
        for name, sub in g.groups.items():
            walk(sub, prefix + "/" + name)
    with netCDF4.Dataset(path) as nc:
        walk(nc, "")
    return out


def compare_group(path, group, got_of, want=None):
    """The differences for one group, or raises when xarray cannot open
    the file itself; got_of(group) opens the group through the
    references (a Container's dataset, or hpcmount.refs_dataset); want:
    the group as xarray on the file opened it already, if it did."""
    import xarray as xr
    if want is None:
        want = xr.open_dataset(path, engine="netcdf4", group=group).load()
    try:
        got = got_of(group).load()
    except Exception as e:      # noqa: BLE001 - reported as a difference
        return ["error: %s: %s" % (type(e).__name__, str(e).split("\n")[0])]
    nc = got.encoding.get("hpcmount_not_covered", {})
    out = diffs(got, want, nc)
    try:
        if not out:
            xr.testing.assert_identical(got, want)      # the whole of it, as xarray sees it
    except AssertionError as e:
        out.append("identical: %s" % " ".join(str(e).split())[:200])
    return out


def compare(files):
    bad = 0
    for f in files:
        with hpcmount.open(f) as c:
            for g in groups_of(f):
                d = compare_group(f, g, c.dataset)
                print("%s %s: %s" % ("FAIL" if d else "ok", f, g) + "".join("\n  " + x for x in d))
                bad += bool(d)
    return 1 if bad else 0


# ---- the mount's user.dims, the references' JSON ---------------------------

def dims(mnt, path):
    """user.dims of every variable of every group equals netCDF4-python's
    dimensions; a scalar has none."""
    import h5py
    import netCDF4
    bad = []

    def walk(g, prefix):
        for v in g.variables.values():
            node = os.path.join(mnt, prefix.lstrip("/"), v.name)
            if not os.path.exists(node):        # an external link of a file alone
                continue                        # dangles (hdf5.md): the references follow it
            if os.stat(node).st_nlink > 1:      # one file, the first link's names
                continue
            if os.path.realpath(node) != os.path.join(os.path.realpath(mnt), prefix.lstrip("/"), v.name):
                continue                        # through a link: the target's names
            if prefix in shared:                # a group of several links: one directory,
                continue                        # the first link's names (as above)
            try:
                got = tuple(os.getxattr(node, "user.dims").decode().split(","))
            except OSError:
                got = ()
            if got != v.dimensions:
                bad.append("%s/%s: user.dims %s, want %s" % (prefix, v.name, got, v.dimensions))
        for name, sub in g.groups.items():
            walk(sub, prefix + "/" + name)
    shared = set()
    with h5py.File(path, "r") as f:                     # in groups of several hard links
        def links(g, prefix, under):
            for n, o in g.items():
                if isinstance(o, h5py.Group) and g.get(n, getlink=True).__class__ is h5py.HardLink:
                    sub = under or h5py.h5o.get_info(o.id).rc > 1
                    if sub:
                        shared.add(prefix + "/" + n)
                    if prefix.count("/") < 8:
                        links(o, prefix + "/" + n, sub)
        links(f, "", False)
    with netCDF4.Dataset(path) as nc:
        walk(nc, "")
    for b in bad:
        print("FAIL: " + b)
    return 1 if bad else 0


def refs_json(path):
    """The references of cf.nc (and scales_plain.h5 beside it) as JSON."""
    import json

    def strict(text):
        return json.loads(text, parse_constant=lambda c: (_ for _ in ()).throw(ValueError(c)))
    bad = []

    def want(ok, what):
        if not ok:
            bad.append(what)
    doc = strict(open(path).read())           # the document: strict JSON
    r = doc["refs"]
    za = {k[:-len("/.zattrs")]: json.loads(v) for k, v in r.items() if k.endswith("/.zattrs")}
    za[""] = json.loads(r[".zattrs"])
    hidden = {"CLASS", "NAME", "DIMENSION_LIST", "REFERENCE_LIST", "_Netcdf4Dimid",
              "_Netcdf4Coordinates", "_nc3_strict", "_NCProperties"}
    for k, a in za.items():
        want(not hidden & set(a), "%s: netCDF's own attributes shown: %s" % (k, hidden & set(a)))
    air, root = za["air"], za[""]
    want(air["_ARRAY_DIMENSIONS"] == ["time", "lat", "lon"], "air's dims %s" % air["_ARRAY_DIMENSIONS"])
    want(isinstance(air["scale_factor"], float) and air["scale_factor"] == float(np.float32(0.01)),
         "scale_factor %r, want float32(0.01) as a float" % air["scale_factor"])
    want(air["valid_range"] == [-5000, 5000], "valid_range %r" % air.get("valid_range"))
    want("_FillValue" not in air and json.loads(r["air/.zarray"])["fill_value"] == -9999,
         "air's _FillValue: in .zarray's fill_value only")
    want(json.loads(r["sst/.zarray"])["fill_value"] == "NaN", "sst's fill_value: zarr's \"NaN\"")
    want("Infinity, -Infinity, NaN]" in r[".zattrs"], "reals: NaN and infinities as zarr-python writes them")
    want(root["nums"] == [1, 2, 3] and root["version"] == 3 and root["empty"] == "" and
         root["strings"] == ["one", "two"], "root attributes %r" % root)
    want("nv" in root.get("hpcmount_not_covered", {}) and "nv/.zarray" not in r,
         "nv, a dimension without a variable: a note, no array")
    plain = json.loads(strict(open(path.replace(".json", "_plain.json")).read())["refs"]["a/.zarray"])
    want(plain["fill_value"] is None, "a dataset without _FillValue: fill_value %r" % plain["fill_value"])
    r = strict(open(path.replace(".json", "_scales.json")).read())["refs"]
    w = json.loads(r["w/.zattrs"])
    want(w.get("state") == -7 and w.get("states") == [0, -7, 1] and "loose" not in w,
         "enum attributes: of a committed type its integers, else hidden: %r" % w)
    import fsspec
    import zarr
    z = zarr.open(fsspec.filesystem("reference", fo=path.replace(".json", "_scales.json"),
                                    remote_protocol="file").get_mapper(""), mode="r")
    want(list(z["objref"][:]) == ["/t", "/x", ""], "object references as target paths (VLenUTF8): %r"
         % list(z["objref"][:]))
    rec = json.loads(r["rec/.zattrs"])
    want("rec/0" in r and "hpcmount_not_netcdf" in rec and rec["_ARRAY_DIMENSIONS"] == ["rec_dim0"],
         "a compound: an array for zarr, marked as no netCDF variable, its own dimension names")
    for b in bad:
        print("FAIL: " + b)
    return 1 if bad else 0


def h4dims(oracle_out, path, refs, top=""):
    """user.dims and _ARRAY_DIMENSIONS of an HDF4 file's SDSs, each under
    the name the mount gives it (h4names.py), equal what libhdf4 names
    their dimensions.  Where another array of the directory has that
    name at another length, the references give zarr's generated name
    (a group's dimension has one length).  Exit 1 on
    any difference or when none is checked."""
    import json
    r = json.load(open(refs))["refs"]
    bad, todo = [], {}
    with hpcmount.open(path) as c:
        served = {}
        for d in reversed(top.split(",")):      # the first directory that has it
            served.update({n: d for n in c.listdir("/" + d)})
        lines = [line.split() for line in open(oracle_out)]
        names = h4names.served_names([(int(w[1]), bytes.fromhex(w[2]) if w[2] != "-" else b"")
                                      for w in lines])
        for _, idx, _, hdims in lines:
            name = names[int(idx)]
            if name not in served:
                continue
            want = [] if hdims == "-" else [os.fsdecode(bytes.fromhex(h)) for h in hdims.split(",")]
            node = "/".join(x for x in (served[name], name) if x)
            try:
                got = os.fsdecode(c.getxattr("/" + node, "user.dims")).split(",")
            except OSError:
                got = []
            if got != want:
                bad.append("%s: user.dims %s, want %s" % (node, got, want))
            shape = os.fsdecode(c.getxattr("/" + node, "user.shape"))
            todo[name] = (node, want, [int(x) for x in shape.split(",")] if shape else [])
    lens = {}           # (group, name) -> lengths in the references
    for k, v in r.items():
        d, _, last = k.rpartition("/")
        if last == ".zattrs" and d + "/.zarray" in r:
            shape = json.loads(r[d + "/.zarray"])["shape"]
            for n, ln in zip(json.loads(v)["_ARRAY_DIMENSIONS"], shape):
                lens.setdefault((d.rpartition("/")[0], n), set()).add(ln)
    for name, (node, want, shape) in todo.items():
        za = r.get(node + "/.zattrs")
        got = json.loads(za)["_ARRAY_DIMENSIONS"] if za else want
        group = node.rpartition("/")[0]
        for k, (g, w) in enumerate(zip(got, want)):
            taken = lens.get((group, w), set()) - {shape[k]}
            if g != w and not (taken and g == "%s_dim%d" % (name, k)):
                bad.append("%s: _ARRAY_DIMENSIONS %s, want %s" % (node, got, want))
    for b in bad:
        print("FAIL: " + b)
    print("SDSs checked: %d" % len(todo))
    return 1 if bad or not todo else 0


H4_DTYPES = {3: "u1", 20: "i1", 21: "u1", 22: "i2", 23: "u2", 24: "i4", 25: "u4",
             5: "f4", 6: "f8"}


def h4value(nt, count, data):
    """An attribute's bytes (native order) as netCDF4-python gives it."""
    import numpy as np
    base = nt & 0xfff
    if base == 4:
        return data.replace(b"\0", b"").decode("utf-8", "replace")
    v = np.frombuffer(data, "=" + H4_DTYPES[base])[:count].tolist()
    return v[0] if count == 1 else v


def h4_same_value(a, b):
    """Equal JSON values of the same types; NaN equals NaN."""
    import math
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(h4_same_value(x, y) for x, y in zip(a, b))
    if type(a) is not type(b):
        return False
    return a == b or (isinstance(a, float) and math.isnan(a) and math.isnan(b))


def h4fill(nt, data):
    """zarr's fill_value of SDgetfillvalue's bytes of type nt."""
    import base64
    if nt & 0xfff == 4:
        return base64.b64encode(data).decode()
    v = h4value(nt, 1, data)
    return "NaN" if isinstance(v, float) and v != v else v


def h4attrs_want(oracle_out):
    """{index: [SDS name (bytes), {attr: (nt, count, value)}, fill]} of
    every SDS, in the oracle's order, and the file's attributes."""
    sds, gattrs = {}, {}
    for line in open(oracle_out):
        w = line.split()
        if w[0] == "gattr":
            gattrs[os.fsdecode(bytes.fromhex(w[1]))] = (int(w[2]), int(w[3]),
                                                    h4value(int(w[2]), int(w[3]), bytes.fromhex(w[4])))
            continue
        name = bytes.fromhex(w[2]) if w[2] != "-" else b""
        e = sds.setdefault(int(w[1]), [name, {}, None])
        if w[0] == "sds":
            continue
        if w[0] == "attr":
            nt, n = int(w[4]), int(w[5])
            e[1][os.fsdecode(bytes.fromhex(w[3]))] = (nt, n, h4value(nt, n, bytes.fromhex(w[6])))
        else:
            e[2] = (int(w[3]), bytes.fromhex(w[4]))
    return sds, gattrs


def h4attrs_check(name, za, zarray, attrs, fill):
    """What differs between one node's references and libhdf4."""
    bad = []
    fa = attrs.get("_FillValue")
    to_fill = fa and fill and fa[0] & 0xfff == fill[0] & 0xfff and fa[1] == 1
    if to_fill:
        if zarray is None or not h4_same_value(zarray["fill_value"], h4fill(*fill)) \
                or "_FillValue" in za:
            bad.append("%s: fill_value %r, _FillValue %r; SDgetfillvalue %r" % (
                name, zarray and zarray["fill_value"], za.get("_FillValue"), h4fill(*fill)))
    for k, (nt, n, v) in attrs.items():
        if not (to_fill and k == "_FillValue") and not h4_same_value(za.get(k), v):
            bad.append("%s: attribute %s %r, libhdf4 %r (type %d, %d values)" % (
                name, k, za.get(k), v, nt, n))
    extra = [k for k in za if k not in attrs and k != "_ARRAY_DIMENSIONS"
             and not k.startswith("hpcmount_")]
    if extra:
        bad.append("%s: attributes libhdf4 has not: %s" % (name, extra))
    return bad


def h4attrs(oracle_out, path, refs, top=""):
    """The references' attributes of an HDF4 file's SDSs (each under the
    name the mount gives it, h4names.py) and, without top, of its root are libhdf4's,
    typed.  Exit 1 on any difference."""
    import json
    r = json.load(open(refs))["refs"]
    sds, gattrs = h4attrs_want(oracle_out)
    with hpcmount.open(path) as c:
        served = {}
        for d in reversed(top.split(",")):
            served.update({n: d for n in c.listdir("/" + d)})
    bad, n = [], 0
    if not top:
        bad += h4attrs_check("/", json.loads(r[".zattrs"]), None, gattrs, None)
        n += len(gattrs)
    names = h4names.served_names([(i, e[0]) for i, e in sds.items()])
    for index, (_, attrs, fill) in sds.items():
        name = names[index]
        if name not in served:
            continue
        node = "/".join(x for x in (served[name], name) if x)
        za = r.get(node + "/.zattrs")
        if za is None:          # left out of the references (a note says why)
            continue
        zarray = json.loads(r[node + "/.zarray"]) if node + "/.zarray" in r else None
        bad += h4attrs_check(node, json.loads(za), zarray, attrs, fill)
        n += len(attrs)
    for b in bad:
        print("FAIL: " + b)
    print("attributes checked: %d" % n)
    return 1 if bad else 0


# ---- the corpus --------------------------------------------------------------

def oracle(path, opened=lambda: None):
    """(the file's root group as xarray opens and loads it, None), or
    (None, why) when it cannot; opened() is called between the two."""
    import xarray as xr
    try:
        ds = xr.open_dataset(path, engine="netcdf4")
        opened()
        return ds.load(), None
    except Exception as e:      # noqa: BLE001 - counted, not compared
        return None, "%s: %s" % (type(e).__name__, str(e).split("\n")[0][:100])


def batch(listfile):
    """Each call listed in listfile (see the docstring), its output into
    its own file: one interpreter for many files (its start and imports,
    under ASan above all, cost more than most files' checks)."""
    import contextlib
    import traceback
    calls = {"h4dims": h4dims, "h4attrs": h4attrs}
    for line in open(listfile):
        out, cmd, *args = line.rstrip("\n").split("\t")
        with open(out, "w") as fh, contextlib.redirect_stdout(fh):
            try:
                rc = calls[cmd](*args)
            except Exception:       # noqa: BLE001 - that call's failure only
                traceback.print_exc(file=fh)
                print("FAIL: exception")
                rc = 1
            print("status: %d" % rc, flush=True)
    return 0


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "gen":
        gen(sys.argv[2])
        return 0
    if len(sys.argv) >= 3 and sys.argv[1] == "compare":
        return compare(sys.argv[2:])
    if len(sys.argv) == 4 and sys.argv[1] == "dims":
        return dims(sys.argv[2], sys.argv[3])
    if len(sys.argv) == 3 and sys.argv[1] == "json":
        return refs_json(sys.argv[2])
    if len(sys.argv) in (5, 6) and sys.argv[1] == "h4dims":
        return h4dims(*sys.argv[2:])
    if len(sys.argv) in (5, 6) and sys.argv[1] == "h4attrs":
        return h4attrs(*sys.argv[2:])
    if len(sys.argv) == 3 and sys.argv[1] == "batch":
        return batch(sys.argv[2])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
