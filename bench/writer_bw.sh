#!/bin/sh
# bench/writer_bw.sh - write bandwidth of hpcwrite: N ranks x S bytes into one
# shared SION file versus one POSIX file per rank (same data pattern, same
# write size), best and median of R runs, printed as a Markdown table.
#
#   bench/writer_bw.sh [BUILDDIR] [DIR]
#   env: NPS="1 2 4" SIZES="16M 64M" REPS=3 WSIZE=1M SYNC=0|1 NFILES=1
#
# DIR (default $TMPDIR or /tmp) holds the files; they are removed after each
# run.  SYNC=1 adds --sync (fsync before the close), so the figures include
# writing back to the disk instead of stopping at the page cache.
set -eu
build=${1:-$(cd "$(dirname "$0")/.." && pwd)}
dir=${2:-${TMPDIR:-/tmp}}/writer_bw.$$
W="$build/mpi/hpcwrite"
NPS=${NPS:-"1 2 4"}; SIZES=${SIZES:-"16M 64M"}; REPS=${REPS:-3}
WSIZE=${WSIZE:-1M}; SYNC=${SYNC:-0}; NFILES=${NFILES:-1}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
mkdir -p "$dir"
trap 'rm -rf "$dir"' EXIT
sync_arg=""; [ "$SYNC" = 1 ] && sync_arg=--sync

# "best (median)" MiB/s of REPS runs: run FORMAT NP SIZE
run() {
    all=""
    i=0
    while [ "$i" -lt "$REPS" ]; do
        if [ "$1" = sion ]; then extra="--nfiles $NFILES"; else extra=""; fi
        # shellcheck disable=SC2086
        bw=$(mpirun --oversubscribe -np "$2" "$W" --format "$1" --bytes-per-rank "$3" \
             --write-size "$WSIZE" $extra $sync_arg "$dir/out" | awk '{ print $(NF - 1) }')
        all="$all $bw"
        rm -f "$dir"/out*
        i=$((i + 1))
    done
    echo $all | tr ' ' '\n' | sort -g |
        awk '{ v[NR] = $1 } END { printf "%.0f (%.0f)", v[NR], (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

echo "| ranks | bytes/rank | SION shared file MiB/s best (median) | POSIX file per rank MiB/s best (median) | SION/POSIX of medians |"
echo "|---:|---:|---:|---:|---:|"
for s in $SIZES; do
    for np in $NPS; do
        a=$(run sion "$np" "$s")
        b=$(run posix "$np" "$s")
        r=$(echo "$a $b" | tr -d '()' | awk '{ printf "%.2f", ($4 > 0) ? $2 / $4 : 0 }')
        echo "| $np | $s | $a | $b | $r |"
    done
done
