#!/usr/bin/python3
"""progress.py TTY|PIPE OUT -- COMMAND...: run COMMAND with its stderr on a
new pseudo-terminal (TTY) or a pipe (PIPE), its stdout to file OUT, and
print what it wrote to stderr; exits with COMMAND's status."""
import os
import pty
import subprocess
import sys

mode, out = sys.argv[1], sys.argv[2]
cmd = sys.argv[4:]
with open(out, "wb") as o:
    if mode == "PIPE":
        p = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=o, stderr=subprocess.PIPE)
        sys.stdout.write(p.stderr.decode("utf-8", "replace"))
        sys.exit(p.returncode)
    master, slave = pty.openpty()
    p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=o, stderr=slave)
    os.close(slave)
    data = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:          # EIO: every writer closed the terminal
            break
        if not chunk:
            break
        data += chunk
    os.close(master)
    # the terminal turns "\n" into "\r\n"
    sys.stdout.write(data.decode("utf-8", "replace").replace("\r\n", "\n"))
    sys.exit(p.wait())
