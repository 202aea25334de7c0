"""dump_cat.py - one `hpcdump cat SOURCE PATH...` of many files, split by
the sizes the caller expects (tests/lib; the differential tests import it).

A process, and for HDF5 its helper, per file cost more CPU than most of
the reads they check: one call writes every file in turn, and each file's
bytes are its expected size's worth of the output, read one file at a time
so that only one is in memory.
"""
import subprocess
import tempfile


def cat_each(hpcdump, source, items, digest=bytes):
    """items: (PATH, SIZE) in order.  Returns (got, rc, rest, err): each
    file's SIZE bytes passed through digest, the call's exit code, how many
    bytes followed the last file, and its stderr."""
    with tempfile.TemporaryFile() as errf:
        p = subprocess.Popen([hpcdump, "cat", source] + [path for path, _ in items],
                             stdout=subprocess.PIPE, stderr=errf)
        got = [digest(p.stdout.read(size)) for _, size in items]
        rest = len(p.stdout.read())
        rc = p.wait()
        errf.seek(0)
        err = errf.read().decode(errors="replace").strip()
    return got, rc, rest, err
