#!/usr/bin/env python3
"""sion_gen.py - write SIONlib container files from the format description
(docs/formats/sion.md), for tests and benchmarks of layouts the fixtures do not
cover: file formats 2 to 5, any fsblksize (1 too), both byte orders, several
blocks per task, collective-mode chunk sizes, multi-file sets with mapping,
key-value streams, repeated global ranks, 10^6 tasks (sparse files).

Data follow the fixtures' pattern: byte k of stream s is "\\n" when k % 64 == 63,
else ALPH[(7s + 3(k // 64) + k % 64) % 62]; s is the global task index
(key-value: task * 16 + key, k the offset inside that key's data).

Prints one line per expected file: NAME LENGTH SHA256, computed here from the
pattern, independently of hpcmount's reader.

usage: sion_gen.py OUT --lengths 100,2000,0 [--format 5] [--fsblksize 512]
         [--chunksize 1024 | --chunksizes 1024,0,512] [--big] [--nfiles 2]
         [--ranks 5,5,7] [--collective 2] [--kv 1:100,2:50/3:10] [--serial]
         [--v2-start header|library] [--start-of-data N]
         [--ntasks N --length L]   (N tasks of L bytes each, for large files)
"""
import argparse, hashlib, struct, sys

ALPH = b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def period(s):
    """The 62-line period of stream s (the pattern repeats every 62*64 bytes)."""
    out = bytearray()
    for line in range(62):
        for i in range(64):
            out.append(10 if i == 63 else ALPH[(7 * s + 3 * line + i) % 62])
    return bytes(out)


_periods = {}


def stream(s, n):
    p = _periods.get(s % 62)
    if p is None:
        p = _periods[s % 62] = period(s % 62)
    reps = n // len(p) + 1
    return (p * reps)[:n]


def roundup(v, a):
    return (v + a - 1) // a * a


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--lengths", default="")
    ap.add_argument("--ntasks", type=int)
    ap.add_argument("--length", type=int, default=0)
    ap.add_argument("--format", type=int, default=5)
    ap.add_argument("--fsblksize", type=int, default=512)
    ap.add_argument("--chunksize", type=int, default=1024)
    ap.add_argument("--chunksizes", default="")
    ap.add_argument("--big", action="store_true")
    ap.add_argument("--nfiles", type=int, default=1)
    ap.add_argument("--ranks", default="")
    ap.add_argument("--collective", type=int, default=0,
                    help="group size: chunks aligned only at group ends")
    ap.add_argument("--kv", default="",
                    help="per task '/'-separated, records key:len comma-separated")
    ap.add_argument("--serial", action="store_true", help="serial writer: mapping i32 0, filenumber 1")
    ap.add_argument("--nodata", action="store_true", help="large files: write metadata only (holes)")
    ap.add_argument("--v2-start", choices=("header", "library"), default="header",
                    help="format 2: data after the header's own end (1068 + 16n) or where "
                    "SIONlib's reader puts them (1088 + 16n), both rounded to fsblksize")
    ap.add_argument("--start-of-data", type=int, default=0,
                    help="place the data here instead (a writer with another rule, e.g. "
                    "SIONlib built with a 4 MiB first block)")
    a = ap.parse_args()

    E = ">" if a.big else "<"
    fs = a.fsblksize
    kvrecs = None
    if a.kv:
        kvrecs = [[tuple(int(x) for x in r.split(":")) for r in t.split(",") if r]
                  for t in a.kv.split("/")]
        streams = []
        for ti, recs in enumerate(kvrecs):
            pos = {}
            b = bytearray()
            for key, ln in recs:
                o = pos.get(key, 0)
                b += struct.pack(E + "qq", key, ln) + stream(ti * 16 + key, o + ln)[o:]
                pos[key] = o + ln
            streams.append(bytes(b))
        lengths = [len(s) for s in streams]
    elif a.ntasks is not None:
        lengths = [a.length] * a.ntasks
        streams = None
    else:
        lengths = [int(x) for x in a.lengths.split(",")]
        streams = None
    n = len(lengths)
    ranks = [int(x) for x in a.ranks.split(",")] if a.ranks else list(range(n))
    req = [int(x) for x in a.chunksizes.split(",")] if a.chunksizes else [a.chunksize] * n

    # stored chunk sizes and per-task space (lsize)
    if a.format >= 4:
        if a.collective:
            stored = []
            for g in range(0, n, a.collective):
                grp = req[g:g + a.collective]
                stored += grp[:-1] + [roundup(sum(grp), fs) - sum(grp[:-1])]
        else:
            stored = [roundup(c, fs) for c in req]
        lsize = stored
    else:
        stored = req
        lsize = [roundup(c, fs) for c in req]

    # tasks per physical file: contiguous slices, mapping global -> (file, local)
    per = [n // a.nfiles + (1 if i < n % a.nfiles else 0) for i in range(a.nfiles)]
    first = [sum(per[:i]) for i in range(a.nfiles)]
    expected = []
    for fi in range(a.nfiles):
        tasks = list(range(first[fi], first[fi] + per[fi]))
        nl = len(tasks)
        blocks = [max(1, -(-lengths[t] // lsize[t])) if lsize[t] else 1 for t in tasks]
        for t in tasks:
            if lsize[t] == 0 and lengths[t]:
                sys.exit("a task with chunksize 0 cannot hold data")
        maxchunks = max(blocks)
        ranks_off = 1076 if a.format >= 3 else 1056
        eoh = ranks_off + 16 * nl + 12
        if a.v2_start == "library":
            eoh = 1076 + 16 * nl + 12
        sod = a.start_of_data or roundup(eoh, fs)
        starts, p = [], sod
        for t in tasks:
            starts.append(p)
            p += lsize[t]
        skip = p - sod
        sov = sod + maxchunks * skip
        name = a.out if fi == 0 else "%s.%06d" % (a.out, fi)
        hdr = bytearray(b"sion" + (b"\x01\x01\x01\x01" if a.big else b"\x00\x00\x00\x00"))
        filenumber = 1 if (a.serial and a.nfiles == 1) else fi
        hdr += struct.pack(E + "iiiiii", 1007, 6, a.format, fs, nl, a.nfiles)
        if a.format >= 3:
            flag1 = (51 if kvrecs else 50) << 32 if a.format >= 5 else 0
            hdr += struct.pack(E + "iqq", filenumber, flag1, 0)
        hdr += name.split("/")[-1].encode()[:1023].ljust(1024, b"\0")
        assert len(hdr) == ranks_off
        hdr += struct.pack(E + "%dq" % nl, *[ranks[t] for t in tasks])
        hdr += struct.pack(E + "%dq" % nl, *[stored[t] for t in tasks])
        hdr += struct.pack(E + "iq", maxchunks, sov)
        meta2 = bytearray(struct.pack(E + "%dq" % nl, *blocks))
        bsz = [[0] * nl for _ in range(maxchunks)]
        with open(name, "wb") as f:
            f.write(hdr)
            for li, t in enumerate(tasks):
                data = streams[t] if streams else None
                left, off = lengths[t], 0
                for j in range(blocks[li]):
                    take = min(left, lsize[t])
                    bsz[j][li] = take
                    if take and not a.nodata:
                        f.seek(starts[li] + j * skip)
                        f.write(data[off:off + take] if data is not None else stream(t, lengths[t])[off:off + take])
                    left -= take
                    off += take
            for j in range(maxchunks):
                meta2 += struct.pack(E + "%dq" % nl, *bsz[j])
            if fi == 0 and a.nfiles > 1:
                meta2 += struct.pack(E + "i", n)
                for t in range(n):
                    f_ = max(i for i in range(a.nfiles) if first[i] <= t)
                    meta2 += struct.pack(E + "ii", f_, t - first[f_])
            elif a.serial:
                meta2 += struct.pack(E + "i", 0)
            f.seek(sov)
            f.write(meta2)
    repeated = len(set(ranks)) != len(ranks)
    for t in range(n):
        tname = "task-%06d" % t if repeated else "rank-%06d" % ranks[t]
        if kvrecs:
            keys = {}
            for key, ln in kvrecs[t]:
                keys[key] = keys.get(key, 0) + ln
            for key in sorted(keys):
                d = stream(t * 16 + key, keys[key])
                print("%s/key-%d %d %s" % (tname, key, len(d), hashlib.sha256(d).hexdigest()))
        elif not a.nodata and n <= 100000:
            d = stream(t, lengths[t])
            print("%s %d %s" % (tname, len(d), hashlib.sha256(d).hexdigest()))


if __name__ == "__main__":
    main()
