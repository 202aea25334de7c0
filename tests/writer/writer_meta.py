#!/usr/bin/python3
"""writer_meta.py - independent checks of files written by hpcwrite.

  writer_meta.py manifest FILE0      print FILE0's set in the fixtures'
                                     manifest format (from "physical_files" on),
                                     parsed here with struct, not by hpcmount
  writer_meta.py compare MANIFEST FILE0
                                     exit 1 unless those lines equal the
                                     manifest's (real SIONlib's) lines
  writer_meta.py pattern S LEN [SKIP]  sha256 of bytes [SKIP, LEN) of pattern
                                     stream S (the fixtures' data pattern)
  writer_meta.py kill FILE0 OUT0     copy a closed set as a job killed just
                                     before the close leaves it: META2 and
                                     mapping cut off, maxchunks and
                                     start_of_varheader 0 (holes kept)
  writer_meta.py sha MANIFEST TASK [KEY]  length and sha256 the manifest
                                     gives (real SIONlib's read-back)
  writer_meta.py dhdf DTYPE BYTES COLS NP  "PATH SIZE SHA256" of every file
                                     the mount of an hpcwrite --format dhdf
                                     set must show (computed with numpy)
"""
import os
import shutil
import hashlib
import struct
import sys

ALPH = b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def pattern(s, length, skip=0):
    out = bytearray()
    for k in range(skip, length):
        out.append(10 if k % 64 == 63 else ALPH[(s * 7 + (k // 64) * 3 + (k % 64)) % 62])
    return bytes(out)


def read_file(path):
    with open(path, "rb") as f:
        d = f.read()
    big = d[4] != 0 and d[7] != 0
    e = ">" if big else "<"
    i32 = lambda o: struct.unpack_from(e + "i", d, o)[0]
    i64 = lambda o: struct.unpack_from(e + "q", d, o)[0]
    h = dict(size=len(d), byteorder="big" if big else "little", word=d[4:8].hex(),
             version=i32(8), patchlevel=i32(12), fileformat=i32(16), fsblksize=i32(20),
             ntasks=i32(24), nfiles=i32(28), filenumber=i32(32), flag1=i64(36),
             flag2=i64(44), prefix=d[52:1076].split(b"\0")[0].decode())
    n = h["ntasks"]
    h["globalranks"] = [i64(1076 + 8 * i) for i in range(n)]
    h["chunksizes"] = [i64(1076 + 8 * n + 8 * i) for i in range(n)]
    h["maxchunks"] = i32(1076 + 16 * n)
    h["sov"] = i64(1080 + 16 * n)
    h["eoh"] = 1088 + 16 * n
    bs = h["fsblksize"]
    h["sod"] = (h["eoh"] + bs - 1) // bs * bs
    ptr, sp = h["sod"], []
    for c in h["chunksizes"]:
        sp.append(ptr)
        ptr += c
    h["startptr"] = sp
    h["globalskip"] = ptr - h["sod"]
    sov, m = h["sov"], h["maxchunks"]
    h["blockcount"] = [i64(sov + 8 * i) for i in range(n)]
    h["blocksizes"] = [i64(sov + 8 * n + 8 * k) for k in range(n * m)]
    at = sov + 8 * n + 8 * n * m
    h["mapping_size"] = None
    h["mapping"] = None
    if at + 4 <= len(d):
        ms = i32(at)
        h["mapping_size"] = ms
        h["mapping"] = [(i32(at + 4 + 8 * g), i32(at + 8 + 8 * g)) for g in range(ms)]
    h["data"] = d
    h["e"] = e
    return h


def manifest(path0):
    f0 = read_file(path0)
    files = [f0]
    names = [path0]
    if f0["nfiles"] > 1:
        for k in range(1, f0["nfiles"]):
            names.append("%s.%06d" % (path0, k))
            files.append(read_file(names[-1]))
    base = lambda p: p.rsplit("/", 1)[-1]
    out = ["physical_files %d : %s" % (len(files), " ".join(base(p) for p in names))]
    for k, (h, p) in enumerate(zip(files, names)):
        out.append("[file %d %s] size %d byteorder %s endianness_word %s fileformat %d "
                   "version %d patchlevel %d" % (k, base(p), h["size"], h["byteorder"], h["word"],
                                                 h["fileformat"], h["version"], h["patchlevel"]))
        out.append('  fsblksize %d ntasks %d nfiles %d filenumber %d flag1 0x%016x (keyvalmode %d) '
                   'flag2 %d prefix "%s"' % (h["fsblksize"], h["ntasks"], h["nfiles"],
                                             h["filenumber"], h["flag1"], h["flag1"] >> 32,
                                             h["flag2"], h["prefix"]))
        out.append("  end_of_header %d start_of_data %d globalskip %d maxchunks %d "
                   "start_of_varheader %d mapping_size %s" % (h["eoh"], h["sod"], h["globalskip"],
                                                              h["maxchunks"], h["sov"],
                                                              h["mapping_size"]))
        out.append("  globalranks %s" % h["globalranks"])
        out.append("  chunksizes  %s" % h["chunksizes"])
        out.append("  startpointers %s" % h["startptr"])
        out.append("  blockcount  %s" % h["blockcount"])
        out.append("  META2 blocksizes (block-major, ntasks per row) %s" % h["blocksizes"])
        if h["mapping"] is not None:
            out.append("  mapping (global task -> (filenumber, localrank)) %s" % h["mapping"])
    if len(files) > 1:
        tasks = f0["mapping"]
    else:
        tasks = [(0, i) for i in range(f0["ntasks"])]
    out.append("ntasks_total %d" % len(tasks))
    kv = (f0["flag1"] >> 32) == 51
    for t, (fn, lr) in enumerate(tasks):
        h = files[fn]
        n = h["ntasks"]
        chunks, stream = [], b""
        for j in range(h["blockcount"][lr]):
            pos = h["startptr"][lr] + j * h["globalskip"]
            ln = h["blocksizes"][j * n + lr]
            chunks.append("%d+%d" % (pos, ln))
            stream += h["data"][pos:pos + ln]
        head = "task %d file %d localrank %d globalrank %d" % (t, fn, lr, h["globalranks"][lr])
        if not kv:
            out.append("%s length %d sha256 %s chunks(pos+len) %s" % (
                head, len(stream), hashlib.sha256(stream).hexdigest(), " ".join(chunks)))
            continue
        out.append("%s raw_length %d raw_sha256 %s chunks(pos+len) %s" % (
            head, len(stream), hashlib.sha256(stream).hexdigest(), " ".join(chunks)))
        recs, keys, p = [], {}, 0
        while p + 16 <= len(stream):
            key, ln = struct.unpack_from(h["e"] + "qq", stream, p)
            recs.append("(%d,%d)" % (key, ln))
            keys[key] = keys.get(key, b"") + stream[p + 16:p + 16 + ln]
            p += 16 + ln
        out.append("  kv_records(key,len) %s" % " ".join(recs))
        for key in sorted(keys):
            out.append("  key %d length %d sha256 %s" % (key, len(keys[key]),
                                                        hashlib.sha256(keys[key]).hexdigest()))
    return out


def dhdf(dtype, byteslist, cols, np_):
    import numpy as np
    size = {"f8": 8, "f4": 4, "i4": 4, "i2": 2, "u1": 1}[dtype]
    b = [int(x) for x in byteslist.split(",")]
    b = b * np_ if len(b) == 1 else b
    rows = [x // (cols * size) for x in b]
    idx = np.arange(sum(rows) * cols, dtype=np.uint64)
    conv = {"f8": lambda v: v.astype("<f8"), "f4": lambda v: v.astype("<f4"),
            "i4": lambda v: v.astype(np.uint32).astype("<u4").view("<i4"),
            "i2": lambda v: v.astype(np.uint16).astype("<u2").view("<i2"),
            "u1": lambda v: v.astype(np.uint8)}[dtype]
    whole = conv(idx).reshape(sum(rows), cols)
    out = lambda p, arr: print(p, arr.nbytes, hashlib.sha256(arr.tobytes()).hexdigest())
    out("rows", whole)
    k, org = 0, 0
    for r in rows:
        if r:
            out("rows.pieces/rows_chunk%d" % k, np.ascontiguousarray(whole[org:org + r]))
            k += 1
        org += r
    cube = np.arange(4 * 6 * 2 * np_, dtype=np.int64).astype("<i2").reshape(4, 6, 2 * np_)
    out("cube", cube)
    for r in range(np_):
        out("cube.pieces/cube_chunk%d" % r, np.ascontiguousarray(cube[:, :, 2 * r:2 * r + 2]))


def main():
    a = sys.argv[1:]
    if a[0] == "manifest":
        print("\n".join(manifest(a[1])))
    elif a[0] == "compare":
        want = []
        on = False
        for line in open(a[1]):
            line = line.rstrip("\n")
            on = on or line.startswith("physical_files")
            if on:
                want.append(line)
        got = manifest(a[2])
        bad = 0
        for i in range(max(len(want), len(got))):
            w = want[i] if i < len(want) else "<none>"
            g = got[i] if i < len(got) else "<none>"
            if w != g:
                print("- " + w + "\n+ " + g)
                bad = 1
        sys.exit(bad)
    elif a[0] == "pattern":
        skip = int(a[3]) if len(a) > 3 else 0
        print(hashlib.sha256(pattern(int(a[1]), int(a[2]), skip)).hexdigest())
    elif a[0] == "kvlen":
        print(100 + 13 * int(a[1]) + 37 * int(a[2]))
    elif a[0] == "kill":
        f0 = read_file(a[1])
        for k in range(max(f0["nfiles"], 1) if f0["filenumber"] == 0 else 1):
            src = a[1] if k == 0 else "%s.%06d" % (a[1], k)
            dst = a[2] if k == 0 else "%s.%06d" % (a[2], k)
            h = read_file(src)
            shutil.copyfile(src, dst)
            n = h["ntasks"]
            with open(dst, "r+b") as f:
                f.truncate(h["sov"])
                f.seek(1076 + 16 * n)
                f.write(struct.pack(h["e"] + "iq", 0, 0))
    elif a[0] == "dhdf":
        dhdf(a[1], a[2], int(a[3]), int(a[4]))
    elif a[0] == "sha":
        for line in open(a[1]):
            w = line.split()
            if len(a) == 3 and w[:2] == ["task", a[2]]:
                i = w.index("length") if "length" in w else w.index("raw_length")
                print(w[i + 1], w[i + 3])
            if len(a) == 4 and w[:1] == ["task"]:
                cur = w[1]
            if len(a) == 4 and w[:2] == ["key", a[3]] and cur == a[2]:
                print(w[3], w[5])


if __name__ == "__main__":
    main()
