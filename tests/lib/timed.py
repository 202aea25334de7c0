#!/usr/bin/python3
"""timed.py [-o FILE] COMMAND... - run one test of make check and record what
it cost.

make check runs every test through this (LOG_COMPILER, SH_LOG_COMPILER):
it runs COMMAND, passes its output and exit status through unchanged, and
writes NAME.time beside the test's NAME.log in the build tree:

    wall W cpu C user U sys S

W is the test's wall seconds, C = U + S the CPU seconds of its whole
process tree.  The daemons a test starts detach from it (hpcmount forks
into the background), so this process makes itself their subreaper
(PR_SET_CHILD_SUBREAPER): orphans are re-parented to it, reaped as they
exit and their CPU counted.  A daemon still running when the test has
exited is not waited for (it is the test's to stop) and not counted.
tests/run-all.sh prints the slowest tests from these files, and times its
own phases (configure, make, ...) with -o FILE: the same line into FILE.
"""
import ctypes
import os
import resource
import signal
import sys
import time

PR_SET_CHILD_SUBREAPER = 36


def time_file(test):
    """NAME.time in the build tree: the test's path below the build tree
    (programs), else below the source tree (scripts, which VPATH builds
    name ../tests/...), else as given."""
    build = os.environ.get("top_builddir", ".")
    real = os.path.realpath(test)
    rel = test
    for top in (build, os.environ.get("top_srcdir", ".")):
        top = os.path.realpath(top)
        if real.startswith(top + os.sep):
            rel = os.path.relpath(real, top)
            break
    return os.path.join(build, rel + ".time")


def run(argv):
    """Run argv as a subreaper; the exit status of argv."""
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    pid = os.fork()
    if pid == 0:
        # Python ignores SIGPIPE and SIGXFSZ, and exec keeps an ignored
        # signal ignored: without this every test would run with them
        # ignored, and a pipeline's writer would see EPIPE errors instead
        # of ending quietly as it does under make alone
        for s in (signal.SIGPIPE, signal.SIGXFSZ):
            signal.signal(s, signal.SIG_DFL)
        try:
            os.execvp(argv[0], argv)
        finally:
            os._exit(127)
    # make's harness stops a test with a signal: hand it to the test
    for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(s, lambda n, _f: os.kill(pid, n))
    status = None
    while status is None:
        try:
            p, st = os.waitpid(-1, 0)
        except ChildProcessError:
            break
        except InterruptedError:
            continue
        if p == pid:
            status = st
    # orphans that have exited by now; live ones are left alone
    while True:
        try:
            if os.waitpid(-1, os.WNOHANG)[0] == 0:
                break
        except ChildProcessError:
            break
    return os.waitstatus_to_exitcode(status) if status is not None else 127


def main(argv):
    out = None
    if len(argv) > 2 and argv[1] == "-o":
        out, argv = argv[2], argv[2:]
    if len(argv) < 2:
        sys.stderr.write("usage: timed.py [-o FILE] COMMAND...\n")
        return 2
    t0 = time.monotonic()
    rc = run(argv[1:])
    wall = time.monotonic() - t0
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    test = argv[-1]
    try:
        with open(out or time_file(test), "w") as fh:
            fh.write("wall %.1f cpu %.1f user %.1f sys %.1f\n"
                     % (wall, ru.ru_utime + ru.ru_stime, ru.ru_utime, ru.ru_stime))
    except OSError as e:
        sys.stderr.write("timed.py: %s: %s\n" % (test, e))
    # a signal's death becomes the shell's 128 + N, which make reads the same
    return rc if rc >= 0 else 128 - rc


if __name__ == "__main__":
    sys.exit(main(sys.argv))
