#!/usr/bin/python3
"""fault_reader.py - verified readers of a mount whose source is being damaged.

usage: fault_reader.py MNT REFDIR STOPFILE THREADS READYFILE [DAMAGED AFTERFILE]

Every regular file under REFDIR holds the bytes the same path under MNT had
before any fault.  THREADS threads read random ranges (4 KiB to 256 KiB at
random offsets, page cache dropped first so the daemon answers) of random
files until STOPFILE exists, and classify each read:
  ok      the bytes equal the reference
  error   the read failed (EIO, ENOENT after the file vanished, ...)
  short   fewer bytes than the reference holds there, all of them right,
          and the file ends there (a short read followed by an error is an
          error: the kernel returns what came before a failed page)
  wrong   any byte different from the reference
Prints one line "ok=N error=N short=N wrong=N" and, for each short or wrong
read, a line naming file, offset and lengths (at most 20).  READYFILE is
created once 20 reads came back right, so the caller damages the source
only after good reads were seen.  AFTERFILE is created once 40 reads that
started after DAMAGED existed have come back, so the caller waits for
reads of the damaged source, not for a time.
"""
import os
import random
import sys
import threading

mnt, ref, stop, nthreads, ready = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
damaged, after = (sys.argv[6], sys.argv[7]) if len(sys.argv) > 7 else (None, None)
AFTER_READS = 40

files = []
for root, _, names in os.walk(ref):
    for n in names:
        p = os.path.join(root, n)
        if os.path.islink(p):
            continue
        rel = os.path.relpath(p, ref)
        with open(p, "rb") as f:
            files.append((rel, f.read()))
files = [f for f in files if f[1]]
if not files:
    print("ok=0 error=0 short=0 wrong=0 (no files)")
    sys.exit(1)

lock = threading.Lock()
counts = {"ok": 0, "error": 0, "short": 0, "wrong": 0}
reads_after = [0]
notes = []


def one_read(rng):
    rel, data = rng.choice(files)
    size = len(data)
    n = rng.choice([4096, 65536, 131072, 262144])
    off = rng.randrange(0, size) & ~4095 if size > 4096 else 0
    try:
        fd = os.open(os.path.join(mnt, rel), os.O_RDONLY)
    except OSError:
        return "error", None
    want = data[off:off + n]
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        got = os.pread(fd, n, off)
        if len(got) < len(want) and want.startswith(got):
            # a read that failed part-way returns the bytes before the
            # failure; only a silent end of file (0 bytes next) is short
            if os.pread(fd, n, off + len(got)) == b"":
                return "short", "%s at %d: %d of %d bytes" % (rel, off, len(got), len(want))
    except OSError:
        return "error", None
    finally:
        os.close(fd)
    if got == want:
        return "ok", None
    if len(got) < len(want) and want.startswith(got):
        return "error", None     # the rest failed
    return "wrong", "%s at %d: %d bytes differ from the original" % (rel, off, len(got))


def worker(seed):
    rng = random.Random(seed)
    while not os.path.exists(stop):
        late = damaged is not None and os.path.exists(damaged)
        kind, note = one_read(rng)
        with lock:
            counts[kind] += 1
            if late:
                reads_after[0] += 1
                if reads_after[0] == AFTER_READS:
                    open(after, "w").close()
            if kind == "ok" and counts["ok"] == 20:
                open(ready, "w").close()
            if note and len(notes) < 20:
                notes.append(kind + ": " + note)


threads = [threading.Thread(target=worker, args=(i,)) for i in range(nthreads)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(" ".join("%s=%d" % (k, counts[k]) for k in ("ok", "error", "short", "wrong")))
for n in notes:
    print(n)
