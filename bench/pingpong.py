#!/usr/bin/python3
"""Print the round trip of a one-byte pipe ping-pong between two processes,
in microseconds.  Every FUSE request costs two such cross-CPU wake-ups, and
on a virtual machine they vary by 10x with the host's load: the benches
print it so that noisy runs can be told apart."""
import os
import time

N = 20000
r, w = os.pipe()
r2, w2 = os.pipe()
if os.fork() == 0:
    for _ in range(N):
        os.read(r, 1)
        os.write(w2, b"x")
    os._exit(0)
t = time.time()
for _ in range(N):
    os.write(w, b"x")
    os.read(r2, 1)
print("%.1f" % ((time.time() - t) / N * 1e6))
os.wait()
