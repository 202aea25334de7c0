#!/bin/bash
# bench/cache_bench.sh [BUILDDIR] - the block cache's design choices, measured
# through real mounts of one SION file (generated like bench/sion_bench.sh):
#   - sequential 1 MiB reads (mounted file's page cache dropped): large reads
#     spliced from the source around the cache (default) vs all through it;
#   - random 4 KiB reads, QD1, O_DIRECT: cache block size 4 KiB (= fsblksize),
#     64 KiB (default) and 1 MiB, with and without the cache warm.
# Needs root and fio.
set -eu
here=$(cd "$(dirname "$0")" && pwd); top=$(cd "$here/.." && pwd)
build=${1:-$top}; HPCMOUNT=$build/fuse/hpcmount
RUNS=${RUNS:-3}
WORK=${WORK:-$(mktemp -d /var/tmp/hpcbench.XXXXXX)}
f=$WORK/cache.sion; M=$WORK/m; mkdir -p "$M"
trap 'fusermount3 -u "$M" 2>/dev/null || true' EXIT
[ -s "$f" ] || /usr/bin/python3 "$top/tests/gen/sion_gen.py" "$f" --ntasks 4 --length $((256 << 20)) \
    --chunksize $((16 << 20)) --fsblksize 4096 > /dev/null
p=$M/rank-000001; bytes=$((256 << 20))
cat "$f" > /dev/null
read_secs() { local t0 t1; t0=$(date +%s.%N); dd if="$1" of=/dev/null bs=1M 2>/dev/null; t1=$(date +%s.%N); echo "$t1 - $t0" | bc -l; }
mbs() { echo "scale=0; $bytes / $1 / 1048576" | bc -l; }
fio_iops() {  # FILE SECONDS REGION-BYTES
    fio --name=r --filename="$1" --rw=randread --bs=4k --iodepth=1 --ioengine=psync --direct=1 \
        --runtime="$2" --time_based --size="$3" --output-format=terse 2>/dev/null | awk -F';' '{print int($8)}'
}
printf "%-58s %10s\n" "measure (SION, 4 x 256 MiB, fsblksize 4 KiB, $(nproc) cores)" "result"
for zc in 128 0; do
    "$HPCMOUNT" -o zerocopy_min_kb=$zc "$f" "$M"
    s=$(for i in $(seq "$RUNS"); do dd if="$p" iflag=nocache count=0 2>/dev/null; read_secs "$p"; done | sort -g | head -1)
    fusermount3 -u "$M"
    printf "%-58s %10s\n" "seq read MB/s, zerocopy_min_kb=$zc$([ $zc = 0 ] && echo ' (all via cache)')" "$(mbs "$s")"
done
for bs in 4K 64K 1M; do
    "$HPCMOUNT" -o blocksize=$bs,cache_size=64M "$f" "$M"
    cold=$(fio_iops "$p" 5 $bytes)
    # a 32 MiB region fits the 64 MiB cache: after a warm-up, reads hit it
    warm=$(fio_iops "$M/rank-000002" 3 $((32 << 20)); fio_iops "$M/rank-000002" 5 $((32 << 20)))
    fusermount3 -u "$M"
    printf "%-58s %10s\n" "random 4K IOPS, blocksize=$bs, 256 MiB region (mostly misses)" "$cold"
    printf "%-58s %10s\n" "random 4K IOPS, blocksize=$bs, 32 MiB region, cache warm" "$(echo "$warm" | tail -1)"
done
