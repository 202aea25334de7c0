#!/bin/bash
# mutate.sh - mutated copies of files written by the real libraries (SIONlib
# and GSD fixtures, FTI checkpoints, HDF5 files from libhdf5, HDF4 files from
# libhdf4), each mounted, walked and read completely under time limits:
# the mount either succeeds or is refused with one line; nothing hangs
# (timeout), the daemon never dies (the mount still answers after the walk),
# and a sanitizer build reports nothing (lib.sh's finish).
# MUTATE_N copies per format (default 6), seeds fixed: reproducible.
. "$(dirname "$0")/../lib/lib.sh"
need_fuse
N=${MUTATE_N:-6}
MF="$top_srcdir/tests/mount/mutate_file.py"
LIMIT=300                    # seconds for a mount, and for a walk

# one_copy LABEL SRCDIR MOUNTARG SEED FILE...: copy SRCDIR, damage one of
# the FILEs (chosen by SEED), mount MOUNTARG, walk and read, unmount
one_copy() {
    local label=$1 srcdir=$2 arg=$3 seed=$4; shift 4
    local files=("$@") d="$TMP/$label-$seed" rc
    local victim=${files[$((seed % ${#files[@]}))]}
    mkdir -p "$d"
    cp -r "$srcdir" "$d/src"
    "$PY" "$MF" "$d/src/$victim" "$seed" > "$d/what"
    mkdir -p "$d/m"
    timeout $LIMIT "$HPCMOUNT" "$d/src/$arg" "$d/m" 2> "$d/err"; rc=$?
    {
        if [ $rc = 124 ]; then
            echo "FAIL: $label $seed: mount hangs ($(cat "$d/what"))"
        elif [ $rc != 0 ]; then
            [ "$(wc -l < "$d/err")" -le 1 ] ||
                echo "FAIL: $label $seed: refusal is not one line ($(cat "$d/what")): $(head -3 "$d/err")"
            echo "refused"
        else
            timeout $LIMIT find "$d/m" -type f -exec cat {} + > /dev/null 2>&1
            [ $? = 124 ] && echo "FAIL: $label $seed: walk hangs ($(cat "$d/what"))"
            timeout $LIMIT ls -laR "$d/m" > /dev/null 2>&1
            stat "$d/m/.info" > /dev/null 2>&1 ||
                echo "FAIL: $label $seed: daemon gone after the walk ($(cat "$d/what"))"
            fusermount3 -u "$d/m" 2>/dev/null || umount -l "$d/m" 2>/dev/null
            echo "mounted"
        fi
    } > "$d/result"
}

# run LABEL SRCDIR MOUNTARG FILE...: N copies, 8 at a time
run() {
    local label=$1 srcdir=$2 arg=$3; shift 3
    local s mounted=0 refused=0 bad=0
    for s in $(seq 1 "$N"); do
        one_copy "$label" "$srcdir" "$arg" "$s" "$@" &
        [ $((s % 8)) = 0 ] && wait
    done
    wait
    for s in $(seq 1 "$N"); do
        local r="$TMP/$label-$s/result"
        if grep -q '^FAIL' "$r" 2>/dev/null; then bad=1; grep '^FAIL' "$r"; fi
        grep -q '^mounted' "$r" 2>/dev/null && mounted=$((mounted + 1))
        grep -q '^refused' "$r" 2>/dev/null && refused=$((refused + 1))
    done
    if [ $bad = 0 ] && [ $((mounted + refused)) = "$N" ]; then
        pass "$label: $N mutated copies, $mounted mounted and read, $refused refused with one line"
    else
        fail "$label: $N mutated copies ($mounted mounted, $refused refused)"
    fi
}

t0=$(date +%s)
for f in a_4tasks b_multichunk e_keyval f_bigendian; do
    mkdir -p "$TMP/sion-$f"; cp "$DATA/$f.sion" "$TMP/sion-$f/"
done
run sion-a "$TMP/sion-a_4tasks" a_4tasks.sion a_4tasks.sion
run sion-kv "$TMP/sion-e_keyval" e_keyval.sion e_keyval.sion
mkdir -p "$TMP/sion-multi"; cp "$DATA"/c1_multifile.sion* "$TMP/sion-multi/"
run sion-multi "$TMP/sion-multi" c1_multifile.sion c1_multifile.sion c1_multifile.sion.000001

mkdir -p "$TMP/gsd"; cp "$DATA/gsd/hoomd_traj.gsd" "$TMP/gsd/"
run gsd "$TMP/gsd" hoomd_traj.gsd hoomd_traj.gsd

fti_files=$(cd "$DATA/fti/master-i64" && find ckpt2-L1 ckpt4-L3 -type f | sort)
# shellcheck disable=SC2086
run fti "$DATA/fti/master-i64" . $fti_files

if [ -x "$top_builddir/tests/gen/hdf5_gen" ]; then
    mkdir -p "$TMP/h5"
    "$top_builddir/tests/gen/hdf5_gen" "$TMP/h5" > /dev/null 2>&1
    [ -f "$TMP/h5/capi.h5" ] && run hdf5 "$TMP/h5" capi.h5 capi.h5
    [ -f "$TMP/h5/sb1.h5" ] && run hdf5-sb1 "$TMP/h5" sb1.h5 sb1.h5
fi

[ -f "$DATA/dhdf/mhf.hdf" ] && run dhdf "$DATA/dhdf" mhf.hdf mhf.hdf ahf1.hdf ahf2.hdf
echo "mutation run took $(( $(date +%s) - t0 )) s"
finish
