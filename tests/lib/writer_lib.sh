# tests/lib/writer_lib.sh - helpers of the writer tests (sourced after lib.sh).
HPCWRITE="$top_builddir/mpi/hpcwrite"
META="$top_srcdir/tests/writer/writer_meta.py"
WDATA="$DATA"    # the SIONlib fixtures the writer must reproduce, byte for byte
[ -x "$HPCWRITE" ] || { echo "SKIP: hpcwrite not built (no MPI)"; exit 77; }
command -v mpirun >/dev/null || { echo "SKIP: mpirun missing"; exit 77; }
# OpenMPI refuses root and more ranks than cores unless told
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
# ranks of one machine: the ob1 messaging layer, which OpenMPI picks here
# anyway; naming it skips the probe of the others' network libraries, 0.2
# of the 0.3 s of every mpirun
export OMPI_MCA_pml=ob1
# sanitizer builds: OpenMPI's own allocations at exit are not ours
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"

# mpi NP ARGS...: hpcwrite on NP ranks; a hang counts as a failure (124)
mpi() {
    local np=$1; shift
    timeout 120 mpirun --oversubscribe -np "$np" "$HPCWRITE" "$@"
}

# nth LIST I: element I of a comma list, or its only element
nth() {
    echo "$1" | awk -F, -v i="$2" '{ print (NF == 1) ? $1 : $(i + 1) }'
}

# check_ranks MNT NP LENGTHS [SKIP_KV]: every rank-N file of the mount has
# the pattern's sha256 (computed in python, not by hpcmount) and length
check_ranks() {
    local mnt=$1 np=$2 lens=$3 r=0 len f
    expect_eq "$mnt: $np ranks listed" "$np" "$(ls "$mnt" | grep -c '^rank-')"
    while [ "$r" -lt "$np" ]; do
        len=$(nth "$lens" "$r")
        f=$(printf '%s/rank-%06d' "$mnt" "$r")
        expect_eq "$f: size" "$len" "$(stat -c %s "$f")"
        expect_eq "$f: sha256 of the pattern" "$($PY "$META" pattern "$r" "$len")" "$(sha "$f")"
        r=$((r + 1))
    done
}

# info_col MNT TASK COLUMN: a column of the .info task table
info_col() {
    awk -F'\t' -v t="$2" -v c="$3" 'tab && $1 == t { print $c } /^task\t/ { tab = 1 }' "$1/.info"
}

# fails NAME NP PATTERN ARGS...: hpcwrite exits non-zero (not by timeout) and
# every one of the NP ranks printed an error
fails() {
    local name=$1 np=$2 pat=$3; shift 3
    mpi "$np" "$@" > "$name.out" 2>&1
    local rc=$?
    check "$name: exits non-zero, no hang (rc $rc)" test "$rc" -ne 0 -a "$rc" -ne 124
    expect_eq "$name: an error on each of the $np ranks" "$np" \
        "$(grep -c '^hpcwrite: rank [0-9]*: ' "$name.out")"
    check "$name: says why ($pat)" grep -q -- "$pat" "$name.out"
}

# fails_once NAME NP PATTERN ARGS...: a bad command line: hpcwrite exits 2
# (not by timeout) and one rank, not every one, printed the error
fails_once() {
    local name=$1 np=$2 pat=$3; shift 3
    mpi "$np" "$@" > "$name.out" 2>&1
    local rc=$?
    check "$name: exits 2, no hang (rc $rc)" test "$rc" -eq 2
    expect_eq "$name: one error line for the $np ranks" 1 \
        "$(grep -c '^hpcwrite: rank [0-9]*: ' "$name.out")"
    check "$name: says why ($pat)" grep -q -- "$pat" "$name.out"
}
