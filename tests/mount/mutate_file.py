#!/usr/bin/python3
"""mutate_file.py FILE SEED - damage FILE in place, reproducibly from SEED.

One of: flip 1-8 random bytes of the first 4 KiB (where headers live), flip
1-8 random bytes anywhere, overwrite a random run of up to 64 bytes with
0x00 or 0xff, or cut the file at a random length.  Prints what it did.
"""
import random
import sys

path, seed = sys.argv[1], int(sys.argv[2])
rng = random.Random(seed)
with open(path, "rb") as f:
    data = bytearray(f.read())
size = len(data)
kind = rng.choice(["head", "any", "run", "cut"]) if size else "cut"
if kind in ("head", "any") and size:
    span = min(size, 4096) if kind == "head" else size
    for _ in range(rng.randint(1, 8)):
        data[rng.randrange(span)] ^= 1 << rng.randrange(8)
elif kind == "run" and size:
    at = rng.randrange(size)
    n = min(rng.randint(1, 64), size - at)
    data[at:at + n] = bytes([rng.choice([0, 0xff])]) * n
else:
    data = data[:rng.randrange(size)] if size else data
with open(path, "wb") as f:
    f.write(data)
print("%s: %s (seed %d, %d -> %d bytes)" % (path, kind, seed, size, len(data)))
