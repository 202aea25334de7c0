#!/bin/sh
# hdf5_scale.sh - the lazy HDF5 tree and its bounds, through real mounts:
# a file of many groups and datasets (with hard links to datasets, soft
# links, a group with two names and chunked datasets of every decoded
# pipeline: none, deflate, shuffle+deflate, fletcher32, edge chunks,
# unwritten chunks, a user block) mounted with tiny handle bounds
# (-o h5handles=4,h5cache=1M): every byte equals h5py's (tests/mount/hdf5_verify.py),
# inode numbers stay the same after the kernel forgot them and the handles
# were closed, `ls -l` sizes are right although listings open no dataset,
# bad option values are refused.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib/lib.sh"
need_fuse
"$PY" -c 'import h5py' 2>/dev/null || { echo "SKIP: python3-h5py missing"; exit 77; }

F="$TMP/scale.h5"
check "h5py generator" "$PY" - "$F" <<'PY'
import sys, h5py, numpy as np
rng = np.random.default_rng(5)
with h5py.File(sys.argv[1], "w", userblock_size=1024) as f:
    for g in range(4):
        grp = f.create_group("g%d" % g)
        grp.attrs["index"] = g
        for i in range(8):
            grp.create_dataset("d%02d" % i, data=np.arange(i + 1, dtype="<i4") * (g + 1),
                               chunks=(4,) if i % 3 == 0 and i else None)
    c = f.create_group("chunked")
    a = rng.normal(size=(37, 29, 11))
    c.create_dataset("plain", data=a, chunks=(8, 7, 4))
    c.create_dataset("deflate", data=a, chunks=(8, 29, 11), compression="gzip")
    c.create_dataset("shuffle_deflate", data=a.astype("<f4"), chunks=(5, 6, 11),
                     compression="gzip", shuffle=True)
    c.create_dataset("fletcher", data=(a * 100).astype("<i2"), chunks=(16, 16, 3), fletcher32=True)
    c.create_dataset("all", data=(a * 1000).astype("<i8"), chunks=(10, 29, 2), shuffle=True,
                     compression="gzip", compression_opts=9, fletcher32=True)
    p = c.create_dataset("unwritten", (1000,), "<u2", chunks=(64,), fillvalue=7, compression="gzip")
    p[100:300] = np.arange(200)
    c.create_dataset("row", data=np.arange(100000, dtype="<f8").reshape(100, 1000),
                     chunks=(3, 1000), compression="gzip", shuffle=True)
    f["g1/hard_to_g0_d05"] = f["g0/d05"]
    f["g3/soft"] = h5py.SoftLink("/chunked/all")
    f["g3/again"] = f["g2"]          # a group with two names
PY

M="$TMP/mnt"
mount_container "$F" "$M" -o h5handles=4,h5cache=1M -o log="$TMP/log" || fail "mount"
want=$("$PY" -c '
import sys, h5py
n = [1]
h5py.File(sys.argv[1]).visit(lambda name: n.append(1))
print(len(n) - 1)' "$F")
# find sees every object once, plus the second names (hard link, soft
# link, group symlink) h5py's visit skips, plus .info
expect_eq "find lists every name" "$((want + 4))" "$(find "$M" -mindepth 1 | wc -l)"
expect_eq "ls -l sizes without opening at listing time" \
    "$("$PY" -c 'import sys, h5py; g = h5py.File(sys.argv[1])["g0"]; print(" ".join(str(g[k].nbytes) for k in sorted(g)))' "$F")" \
    "$(ls -l "$M/g0" | awk 'NR > 1 { printf "%s%s", s, $5; s = " " }')"
ino=$(stat -c %i "$M/chunked/all")
"$PY" "$top_srcdir/tests/mount/hdf5_verify.py" "$F" "$M" "$HPCDUMP" --odd 4 > "$TMP/verify.log" 2>&1
rc=$?
n=0
while IFS= read -r line; do
    case $line in
        ok:*) n=$((n + 1)) ;;
        FAIL:*) fail "${line#FAIL: }" ;;
        *) echo "$line" ;;
    esac
done < "$TMP/verify.log"
check "verifier: $n checks passed, exit $rc" test "$rc" -eq 0 -a "$n" -gt 200
grep -q "^/chunked/all	.*	decode	" "$M/.info" || fail ".info: shuffle+deflate+fletcher32 decoded by the reader"
grep -q "^/chunked/unwritten	.*	decode	" "$M/.info" || fail ".info: a dataset with unwritten chunks decoded"
check ".info: the handle bounds" grep -q "^handles: at most 4 datasets open (h5handles), .* at most 1048576 bytes (h5cache)" "$M/.info"
# the kernel forgets the inode; the handle was closed long ago (4 handles)
sync; echo 2 > /proc/sys/vm/drop_caches 2>/dev/null || true
expect_eq "inode numbers stable for the mount's life" "$ino" "$(stat -c %i "$M/chunked/all")"
expect_eq "hard link to a dataset: one inode" "$(stat -c %i "$M/g0/d05")" "$(stat -c %i "$M/g1/hard_to_g0_d05")"
expect_eq "hard link to a dataset: link count 2" 2 "$(stat -c %h "$M/g0/d05")"
expect_eq "second name of a group: symlink" "../g2" "$(readlink "$M/g3/again")"
# 4 concurrent readers of decoded chunks, 2 of the same dataset
for d in row row all shuffle_deflate; do
    (dd if="$M/chunked/$d" bs=12345 status=none | sha256sum | cut -d' ' -f1 > "$TMP/c.$d.$$") &
done
wait
for d in row all shuffle_deflate; do
    expect_eq "concurrent reader of chunked/$d" \
        "$("$PY" "$top_srcdir/tests/mount/hdf5_verify.py" --expect "$F" "chunked/$d")" "$(cat "$TMP/c.$d.$$")"
done
check "no read errors logged" sh -c "! grep -q 'failed' '$TMP/log'"
unmount_container "$M"

for bad in h5handles=0 h5handles=x h5cache=1000; do
    "$HPCMOUNT" -o "$bad" "$F" "$TMP/mnt" > "$TMP/out" 2>&1; rc=$?
    check "-o $bad refused (rc $rc)" test "$rc" -ge 1 -a "$rc" -lt 128
    check "-o $bad: one line naming the option" sh -c "test \$(wc -l < '$TMP/out') -eq 1 && grep -q '${bad%%=*}' '$TMP/out'"
done
finish
