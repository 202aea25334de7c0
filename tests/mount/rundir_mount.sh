#!/bin/sh
# rundir_mount.sh - a run directory mounted whole: every fixture format side
# by side, nested two levels deep, plus plain files, a set member, a
# damaged container and symlinks.  Every container's tree is byte-exact as
# when mounted alone (names, sizes, bytes, xattrs), plain files are the
# real files, the damaged one is an empty directory whose .info says why;
# 8 concurrent readers across containers; a small LRU (max_containers=2)
# serves the same bytes, and a file kept open while the LRU closes its
# container reads on from the container it opened; containers added and
# removed while mounted appear and vanish; hpcdump shows the same tree.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib/lib.sh"
need_fuse

R="$TMP/run"
mkdir -p "$R/sim/traj" "$R/input" "$R/checkpoints" "$R/sion"
cp "$DATA/a_4tasks.sion" "$DATA/c1_multifile.sion" "$DATA/c1_multifile.sion.000001" "$R/sion/"
cp "$DATA/gsd/hoomd_traj.gsd" "$R/sim/traj/"
cp "$DATA/gsd/sparse_chunks.gsd" "$R/"
cp -r "$DATA/fti/master-i64/ckpt1-L1" "$R/checkpoints/ckpt1"
echo "temperature = 1.5" > "$R/input/params.in"
head -c 100000 /dev/urandom > "$R/log.bin"
head -c 3000 "$DATA/a_4tasks.sion" > "$R/bad.sion"        # cut: META1 promises more
ln -s sion/a_4tasks.sion "$R/latest"
containers="sion/a_4tasks.sion sion/c1_multifile.sion sim/traj/hoomd_traj.gsd sparse_chunks.gsd checkpoints/ckpt1"
if grep -q "HAVE_HDF4 1" "$top_builddir/config.h"; then
    mkdir -p "$R/dhdf" && cp "$DATA"/dhdf/*.hdf "$R/dhdf/"
    containers="$containers dhdf/mhf.hdf"
fi
if grep -q "HAVE_HDF5 1" "$top_builddir/config.h" && "$PY" -c 'import h5py' 2>/dev/null; then
    "$PY" -c "
import h5py, numpy as np, sys
with h5py.File(sys.argv[1], 'w') as f:
    f['grid/t'] = np.arange(5000, dtype='<f8').reshape(50, 100)
    f['grid/t'].attrs['units'] = 'K'
    f.create_dataset('z', data=np.arange(20000, dtype='<i4'), chunks=(1000,), compression='gzip')
" "$R/sim/out.h5"
    containers="$containers sim/out.h5"
fi

# tree_of DIR [nogsdinfo]: every path below DIR with type, size, sha256
# and user.* xattrs, in byte order; one interpreter for the whole walk (a
# stat, a sha256sum, a getfattr and their pipes per node cost more)
tree_of() {
    "$PY" - "$1" "${2:-}" <<'EOF'
import hashlib, os, sys
top, skip = sys.argv[1:]
paths = []
for d, dirs, names in os.walk(top):
    paths += [os.path.join(d, n) for n in dirs + names]
for p in sorted(os.fsencode("./" + os.path.relpath(p, top)) for p in paths):
    full, rel = os.path.join(os.fsencode(top), p), os.fsdecode(p)
    if os.path.islink(full):
        print(rel, "link", os.fsdecode(os.readlink(full)))
    elif os.path.isdir(full):
        print(rel, "dir")
    elif rel == "./.info" and skip == "nogsdinfo":
        pass            # GSD's .info says how far series went
    else:
        try:
            with open(full, "rb") as fh:
                data = fh.read()
            what = "%d %s" % (os.stat(full).st_size, hashlib.sha256(data).hexdigest())
        except OSError as e:
            what = "error %s" % e.strerror
        try:
            xattrs = sorted((n, os.getxattr(full, n)) for n in os.listxattr(full) if n.startswith("user."))
        except OSError as e:
            xattrs = [("error", e.strerror)]
        print(rel, what, " ".join("%s=%r" % x for x in xattrs))
EOF
}

M="$TMP/m"
check "mount the run directory" mount_container "$R" "$M"
check "a container file is a directory" test -d "$M/sion/a_4tasks.sion"
check "a nested container is a directory" test -d "$M/sim/traj/hoomd_traj.gsd"
check "an FTI tree is a directory" test -d "$M/checkpoints/ckpt1/ckpt-1"
check "a set member stays a plain file" test -f "$M/sion/c1_multifile.sion.000001"
check "plain file byte-exact" cmp -s "$R/log.bin" "$M/log.bin"
check "plain text file" cmp -s "$R/input/params.in" "$M/input/params.in"
expect_eq "symlink kept" "sion/a_4tasks.sion" "$(readlink "$M/latest")"
check "root .info says directory" grep -q "^format: directory" "$M/.info"
# given a symbolic link to the directory: the same run directory
ln -s "$R" "$TMP/run-link"
S="$TMP/via-link"
if mount_container "$TMP/run-link" "$S"; then
    expect_eq "a link to the run directory: the same listing" "$(ls -a "$M")" "$(ls -a "$S")"
    check "a link to the run directory: the same bytes" cmp -s "$M/sion/a_4tasks.sion/rank-000001" \
        "$S/sion/a_4tasks.sion/rank-000001"
    unmount_container "$S"
else
    fail "mount a symbolic link to the run directory"
fi

# every container as when mounted alone
for c in $containers; do
    A="$TMP/alone-$(echo "$c" | tr / _)"
    mount_container "$R/$c" "$A" || { fail "mount $c alone"; continue; }
    skip=; case $c in *.gsd) skip=nogsdinfo ;; esac
    tree_of "$A" $skip > "$TMP/alone.txt"
    tree_of "$M/$c" $skip > "$TMP/in-run.txt"
    if [ -s "$TMP/alone.txt" ] && cmp -s "$TMP/alone.txt" "$TMP/in-run.txt"; then
        pass "$c: same tree and bytes as mounted alone ($(wc -l < "$TMP/alone.txt") nodes)"
    else
        fail "$c differs from the container mounted alone"; diff "$TMP/alone.txt" "$TMP/in-run.txt" | head -5
    fi
    unmount_container "$A"
done

# the damaged container: an empty directory whose .info holds the reason
check "damaged container: a directory" test -d "$M/bad.sion"
check "damaged container: .info names the file" grep -q "^error: .*bad.sion" "$M/bad.sion/.info"
expect_eq "damaged container: nothing else inside" ".info" "$(ls -A "$M/bad.sion")"
check "damaged container listed in the root .info" grep -q "^bad.sion	failed	" "$M/.info"
check "the rest keeps working" cmp -s "$R/log.bin" "$M/log.bin"
# a failed container is not opened again on every access, but once its
# file changed (here: repaired) it is
cp "$DATA/a_4tasks.sion" "$R/bad.sion.new" && mv "$R/bad.sion.new" "$R/bad.sion"
i=0
while [ ! -e "$M/bad.sion/rank-000001" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
check "the repaired container opens" cmp -s "$M/bad.sion/rank-000001" "$M/sion/a_4tasks.sion/rank-000001"

# 8 concurrent readers across containers
pids=""
i=0
for f in sion/a_4tasks.sion/rank-000001 sim/traj/hoomd_traj.gsd/frames/000003/particles/position \
         checkpoints/ckpt1/ckpt-1/rank-000002/var-0 log.bin sion/c1_multifile.sion/rank-000004 \
         sparse_chunks.gsd/frames/000000/types/uint8 sion/a_4tasks.sion/rank-000003 log.bin; do
    i=$((i + 1))
    ( for _ in 1 2 3 4 5; do sha "$M/$f"; done | sort -u > "$TMP/conc.$i"; echo "$f" >> "$TMP/conc.$i" ) &
    pids="$pids $!"
done
wait $pids
bad=0
for j in $(seq 1 $i); do
    f=$(tail -1 "$TMP/conc.$j")
    [ "$(wc -l < "$TMP/conc.$j")" -eq 2 ] || { bad=1; echo "  $f: reads differ"; }
    [ "$(head -1 "$TMP/conc.$j")" = "$(sha "$M/$f")" ] || { bad=1; echo "  $f: differs from a read alone"; }
done
expect_eq "8 concurrent readers see the same bytes" 0 "$bad"

# live: a container added and one removed while mounted
cp "$DATA/gsd/v1_format.gsd" "$R/new.gsd"
check "added container appears" test -d "$M/new.gsd/frames"
rm "$R/sparse_chunks.gsd"
check "removed container vanishes" sh -c "! ls '$M' | grep -qx sparse_chunks.gsd"
unmount_container "$M"

# a tiny LRU serves the same trees; at most 2 containers stay open
L="$TMP/lru"
check "mount with max_containers=2" mount_container "$R" "$L" -o max_containers=2
tree_of "$L" > "$TMP/lru.txt"
check "tree through a 2-container LRU" grep -q "rank-000003" "$TMP/lru.txt"
open=$(sed -n 's/^containers_open: //p' "$L/.info")
check "at most 2 containers open (saw $open)" test "$open" -le 2
tree_of "$L" > "$TMP/lru2.txt"
check "a second walk (containers reopened) gives the same bytes" cmp -s "$TMP/lru.txt" "$TMP/lru2.txt"
# an open file outlives its slot: two other containers opened close the
# slot of the file's (.info says so), and the file, its pages dropped from
# the kernel's cache, reads the same bytes again from the one it holds
"$HPCDUMP" cat "$DATA/a_4tasks.sion" rank-000003 > "$TMP/rank3.alone"
"$PY" - "$L" "$TMP/rank3.alone" > "$TMP/held.txt" <<'EOF'
import os, sys
top, alone = sys.argv[1:]
want = open(alone, "rb").read()
fd = os.open(os.path.join(top, "sion/a_4tasks.sion/rank-000003"), os.O_RDONLY)
first = os.pread(fd, len(want) + 1, 0)
for other in ("sion/c1_multifile.sion", "sim/traj/hoomd_traj.gsd"):
    os.listdir(os.path.join(top, other))
def state():
    return [l.split("\t")[1] for l in open(os.path.join(top, ".info")).read().splitlines()
            if l.startswith("sion/a_4tasks.sion\t")]
before = state()
os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
again = os.pread(fd, len(want) + 1, 0)
print("slot", before, state())     # the read did not open the slot again
os.close(fd)
print("first", first == want, "again", again == want, len(want))
EOF
check "the LRU closed the open file's slot, and it stays closed" \
    grep -qx "slot \['closed'\] \['closed'\]" "$TMP/held.txt"
check "the open file reads the same bytes after (its container held)" \
    grep -qx "first True again True 5000" "$TMP/held.txt"
unmount_container "$L"

# hpcdump on the run directory
expect_eq "hpcdump ls of a container in the run directory" \
    "$("$HPCDUMP" ls "$DATA/a_4tasks.sion" | sort)" "$("$HPCDUMP" ls "$R" sion/a_4tasks.sion | sort)"
"$HPCDUMP" cat "$DATA/a_4tasks.sion" rank-000002 > "$TMP/rank2.alone"
"$HPCDUMP" cat "$R" sion/a_4tasks.sion/rank-000002 > "$TMP/rank2.run"
check "hpcdump cat through the run directory" test -s "$TMP/rank2.alone"
check "hpcdump cat: same bytes as the container alone" cmp -s "$TMP/rank2.alone" "$TMP/rank2.run"
finish
