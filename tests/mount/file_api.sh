#!/bin/bash
# file_api.sh - libhpcmount's open files (hpcmount_file_open/read/extents/
# close, tests/mount/file_read.c) against the mount: every file of a SION
# set, a GSD trajectory, an FTI checkpoint and an HDF5 file (chunked and
# compressed datasets: computed bytes) read in pieces below, at and above
# the verbatim threshold (128 KiB) by four threads at once (one file_read
# per container, one open of it) gives the bytes read() gives on the mount;
# the bytes at its extents too, where it has them; and opening a
# directory, a missing path or a symlink answers as the mount does.
. "$(dirname "$0")/../lib/lib.sh"
need_fuse
FR="$top_builddir/tests/mount/file_read"

# same SOURCE MNT: every regular file under MNT read every way by one
# file_read, against the bytes read() gives on the mount
same() {
    local src=$1 mnt=$2 out
    if out=$(cd "$mnt" && find . -type f ! -name '.info*' -printf '/%P\0' |
             "$FR" -m "$mnt" "$src" 4093,131071,131072,1048576 2> "$TMP/err") &&
       [ -n "$out" ] && [ "${out%% *}" -gt 0 ]; then
        pass "$(basename "$src"): $out, each read in 4 piece sizes by 4 threads: the mount's bytes"
    else
        fail "$src: $(head -c 600 "$TMP/err") ${out:-no file found on the mount}"
    fi
}

G="$TMP/h5"
mkdir -p "$G"
"$top_builddir/tests/gen/hdf5_gen" "$G" > /dev/null || fail "hdf5_gen"
i=0
for src in "$DATA/c1_multifile.sion" "$DATA/b_multichunk.sion" "$DATA/gsd/hoomd_traj.gsd" \
           "$DATA/fti/master-i64" "$G/capi.h5"; do
    i=$((i + 1))
    mount_container "$src" "$TMP/m$i" || { fail "mount $src"; continue; }
    same "$src" "$TMP/m$i"
done

# errors as on the mount: a directory, a missing path; a symlink is followed
expect_eq "a directory: HPCMOUNT_E_ISDIR" -6 "$("$FR" "$DATA/gsd/hoomd_traj.gsd" /frames error)"
expect_eq "a missing path: HPCMOUNT_E_NOENT" -4 "$("$FR" "$DATA/a_4tasks.sion" /rank-000099 error)"
# a run directory with a link to a container: followed in the middle of a
# path, as the kernel follows it on the mount
R="$TMP/run"
mkdir -p "$R"
cp "$DATA/a_4tasks.sion" "$R/" && ln -s a_4tasks.sion "$R/link.sion"
mount_container "$R" "$TMP/mrun" || fail "mount $R"
if "$FR" "$R" link.sion/rank-000001 1000 > "$TMP/got"; then
    check "a link in the middle of a path: the bytes cat gives on the mount" \
        cmp -s "$TMP/got" "$TMP/mrun/link.sion/rank-000001"
else
    fail "link.sion/rank-000001: not read through hpcmount_file_open"
fi
finish
