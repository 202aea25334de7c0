#!/usr/bin/python3
"""netcdf3_gen.py DIR - netCDF-3 files written by libnetcdf (through
netCDF4-python) for tests/mount/netcdf3_mount.sh, in each of the three
formats (NETCDF3_CLASSIC, NETCDF3_64BIT_OFFSET, NETCDF3_64BIT_DATA):

  types_<fmt>.nc    every type of the format (CDF-5's unsigned and 64-bit
                    integers too) as fixed, scalar and record variables,
                    several record variables, attributes of every type
  onerec_<fmt>.nc   one record variable (records not padded to 4 bytes)
  zerorec_<fmt>.nc  record variables with no record yet
  fill_<fmt>.nc     variables never written (fill values, custom and
                    default), a record written past the first ones
  bighdr_<fmt>.nc   a header of some hundred KiB (400 variables)

Values come from a seeded generator, so every run writes the same files.
"""
import os
import sys

import netCDF4
import numpy as np

FORMATS = {"classic": "NETCDF3_CLASSIC", "offset": "NETCDF3_64BIT_OFFSET",
           "data": "NETCDF3_64BIT_DATA"}
CLASSIC_TYPES = ["i1", "S1", "i2", "i4", "f4", "f8"]
CDF5_TYPES = ["u1", "u2", "u4", "i8", "u8"]


def values(rng, dt, shape):
    dt = np.dtype(dt)
    if dt.kind == "S":
        return rng.choice(list(b"abcdefgh\0xyz"), size=shape).astype("u1").view("S1")
    if dt.kind == "f":
        v = rng.standard_normal(shape).astype(dt) * 1000
        if v.size > 3:
            v.flat[1], v.flat[2] = np.inf, -np.inf
        return v
    info = np.iinfo(dt)
    return rng.integers(info.min, info.max, size=shape, dtype=dt, endpoint=True)


def types_of(fmt):
    return CLASSIC_TYPES + (CDF5_TYPES if fmt == "data" else [])


def attrs(obj, rng, fmt):
    obj.setncattr("title", "written by libnetcdf for hpcmount's tests")
    obj.setncattr("empty", "")
    for t in types_of(fmt):
        if t == "S1":
            continue
        obj.setncattr("a_" + t, values(rng, t, 3))
        obj.setncattr("one_" + t, values(rng, t, 1)[0])
    obj.setncattr("nan_f4", np.array([np.nan, 1.5, -0.1], "f4"))
    obj.setncattr("tiny_f8", np.array([5e-324, 1e308, 0.1], "f8"))


def types_file(path, fmt, rng):
    d = netCDF4.Dataset(path, "w", format=FORMATS[fmt])
    d.createDimension("t", None)
    d.createDimension("x", 3)
    d.createDimension("y", 5)
    d.createDimension("z", 7)
    attrs(d, rng, fmt)
    for t in types_of(fmt):
        v = d.createVariable("fix1_" + t, t, ("z",))
        v[:] = values(rng, t, (7,))
        attrs(v, rng, fmt)
        v = d.createVariable("fix3_" + t, t, ("x", "y", "z"))
        v[:] = values(rng, t, (3, 5, 7))
        v = d.createVariable("scalar_" + t, t, ())
        v.assignValue(values(rng, t, (1,))[0])
        v = d.createVariable("rec1_" + t, t, ("t",))
        v[0:6] = values(rng, t, (6,))
        v = d.createVariable("rec3_" + t, t, ("t", "x", "y"))
        v[0:6] = values(rng, t, (6, 3, 5))
    d.close()


def onerec_file(path, fmt, rng):
    d = netCDF4.Dataset(path, "w", format=FORMATS[fmt])
    d.createDimension("time", None)
    d.createDimension("x", 3)
    f = d.createVariable("grid", "f8", ("x",))
    f[:] = values(rng, "f8", (3,))
    v = d.createVariable("trace", "i2", ("time", "x"))     # 6 bytes a record
    v[0:9] = values(rng, "i2", (9, 3))
    d.close()


def zerorec_file(path, fmt, rng):
    d = netCDF4.Dataset(path, "w", format=FORMATS[fmt])
    d.createDimension("t", None)
    d.createDimension("x", 4)
    d.createVariable("a", "f4", ("t", "x"))
    d.createVariable("b", "S1", ("t",))
    f = d.createVariable("c", "i4", ("x",))
    f[:] = values(rng, "i4", (4,))
    d.close()


def fill_file(path, fmt, rng):
    d = netCDF4.Dataset(path, "w", format=FORMATS[fmt])
    d.createDimension("t", None)
    d.createDimension("x", 5)
    for t in types_of(fmt):
        d.createVariable("default_" + t, t, ("x",))
        fv = values(rng, t, (1,))[0]
        d.createVariable("custom_" + t, t, ("x",), fill_value=fv)
        r = d.createVariable("rec_" + t, t, ("t", "x"))
        r[4] = values(rng, t, (5,))          # records 0 to 3: fill values
    d.close()


def bighdr_file(path, fmt, rng):
    d = netCDF4.Dataset(path, "w", format=FORMATS[fmt])
    d.createDimension("t", None)
    d.createDimension("n", 2)
    vs = []
    for i in range(400):           # netCDF4-python rewrites the header per definition
        rec = i % 3 == 0
        v = d.createVariable("variable_with_a_long_name_%05d" % i, "f4",
                             ("t", "n") if rec else ("n",))
        v.setncatts({"long_name": "variable %d of a header of some hundred KiB: " % i + "x" * 256,
                     "index": np.int32(i)})
        vs.append((v, rec))
    for v, rec in vs:
        v[:] = values(rng, "f4", (2, 2) if rec else (2,))
    d.close()


def main(argv):
    out = argv[1]
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(38)
    for fmt in FORMATS:
        for name, fn in (("types", types_file), ("onerec", onerec_file), ("zerorec", zerorec_file),
                         ("fill", fill_file), ("bighdr", bighdr_file)):
            fn(os.path.join(out, "%s_%s.nc" % (name, fmt)), fmt, rng)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
