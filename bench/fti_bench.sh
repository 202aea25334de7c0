#!/bin/bash
# bench/fti_bench.sh [BUILDDIR] - FTI-FF read performance of hpcmount.
#
# Generates a checkpoint with bench/fti_gen (RANKS x VARS variables of
# VAR_MIB MiB, L3 parity for group 0), then, each on a fresh mount, with
# the source files warm in the page cache:
#   (a) plain: cat of every Rank file (the same bytes without FUSE), and
#       md5sum of them (what MD5 alone costs)
#   (b) every variable through the mount, MD5 verified (the default)
#   (c) the same with -o nocheck (no MD5): (b) - (c) is the cost of MD5
#   (d) one rank's variables rebuilt from the Reed-Solomon group (its Rank
#       file moved away), with and without MD5, against the same rank read
#       from its own file through the mount
#   (e) mount time of the whole checkpoint
#   (f) CPU seconds (user + system, all threads) that the daemon spends on
#       (b), (c), (d1) and (d2), against md5sum's for the same files: on a
#       machine loaded by other work, wall times mostly measure the load
# and the ratios (b) / md5sum and (d1) / (d2), with the load average.
#
# Environment: RANKS (64), VARS (4), VAR_MIB (16), GROUP (4), RUNS (3),
# WORK (a temp dir under /var/tmp, removed at the end unless KEEP=1).
set -eu
here=$(cd "$(dirname "$0")" && pwd); top=$(cd "$here/.." && pwd)
build=${1:-$top}
HPCMOUNT=$build/fuse/hpcmount
GEN=$build/bench/fti_gen
RANKS=${RANKS:-64}; VARS=${VARS:-4}; VAR_MIB=${VAR_MIB:-16}; GROUP=${GROUP:-4}; RUNS=${RUNS:-3}
WORK=${WORK:-$(mktemp -d /var/tmp/ftibench.XXXXXX)}
[ -x "$GEN" ] || make -C "$build" bench/fti_gen >/dev/null
M=$WORK/mnt
mkdir -p "$M"
cleanup() {
    fusermount3 -u "$M" 2>/dev/null || true
    [ "${KEEP:-0}" = 1 ] || rm -rf "$WORK"
}
trap cleanup EXIT

ck=$WORK/ckpt
t0=$(date +%s.%N)
[ -d "$ck" ] || "$GEN" "$ck" "$RANKS" "$VARS" "$VAR_MIB" "$GROUP"
t1=$(date +%s.%N)
rank1=$(find "$ck" -name Ckpt1-Rank1.fti)
total=$(cat $(find "$ck" -name 'Ckpt1-Rank*.fti') | wc -c)
vbytes=$((RANKS * VARS * VAR_MIB << 20))
rbytes=$((VARS * VAR_MIB << 20))
load() { cut -d' ' -f1-3 /proc/loadavg; }
echo "# $RANKS ranks x $VARS vars x $VAR_MIB MiB = $((vbytes >> 20)) MiB of variables" \
     "(generated in $(echo "$t1 - $t0" | bc -l | cut -c1-5) s), RUNS=$RUNS, warm page cache;" \
     "$(nproc) CPUs, load: $(load)"

secs() { local a b; a=$(date +%s.%N); "$@" > /dev/null; b=$(date +%s.%N); echo "$b - $a" | bc -l; }
best() { sort -g | head -1; }
mbs() { echo "scale=0; $1 / $2 / 1048576" | bc -l; }
readall() { find "$1" -name 'var-*' -type f -print0 | sort -z | xargs -0 cat; }
row() { printf "%-58s %9s s %8s MiB/s\n" "$1" "$(echo "$2" | cut -c1-6)" "$3"; }

# mount_run OPTS PATH: seconds to read PATH's variables on a fresh mount
mount_run() {
    "$HPCMOUNT" $1 "$ck" "$M"
    local s; s=$(secs readall "$2")
    fusermount3 -u "$M"
    echo "$s"
}

cat $(find "$ck" -name '*.fti') > /dev/null         # warm the sources
a=$(for i in $(seq "$RUNS"); do secs cat $(find "$ck" -name 'Ckpt1-Rank*.fti'); done | best)
row "(a) plain cat of all Rank files" "$a" "$(mbs "$total" "$a")"
a2=$(for i in $(seq "$RUNS"); do secs md5sum $(find "$ck" -name 'Ckpt1-Rank*.fti'); done | best)
row "(a2) md5sum of all Rank files (MD5 alone, coreutils)" "$a2" "$(mbs "$total" "$a2")"
b=$(for i in $(seq "$RUNS"); do mount_run "" "$M"; done | best)
row "(b) all variables through the mount, MD5 checked" "$b" "$(mbs "$vbytes" "$b")"
c=$(for i in $(seq "$RUNS"); do mount_run "-o nocheck" "$M"; done | best)
row "(c) all variables through the mount, -o nocheck" "$c" "$(mbs "$vbytes" "$c")"
r0=$(for i in $(seq "$RUNS"); do mount_run "" "$M/ckpt-1/rank-000001"; done | best)
row "(d0) rank 1 from its own file, MD5 checked" "$r0" "$(mbs "$rbytes" "$r0")"
mv "$rank1" "$WORK/Rank1.away"
d=$(for i in $(seq "$RUNS"); do mount_run "" "$M/ckpt-1/rank-000001"; done | best)
row "(d1) rank 1 rebuilt from its RS group (G=$GROUP), MD5 checked" "$d" "$(mbs "$rbytes" "$d")"
e=$(for i in $(seq "$RUNS"); do mount_run "-o nocheck" "$M/ckpt-1/rank-000001"; done | best)
row "(d2) rank 1 rebuilt from its RS group, -o nocheck" "$e" "$(mbs "$rbytes" "$e")"
# cpu_run OPTS PATH: CPU seconds of a foreground daemon reading PATH
cpu_run() {
    "$HPCMOUNT" -f $1 "$ck" "$M" & local pid=$! i=0
    while ! grep -q " $M fuse" /proc/self/mounts && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
    readall "$2" > /dev/null
    local t; t=$(awk -v hz="$(getconf CLK_TCK)" '{ print ($14 + $15) / hz }' /proc/$pid/stat)
    fusermount3 -u "$M"; wait $pid
    echo "$t"
}
cpurow() { printf "%-58s %9s s %8s MiB/cpu-s\n" "$1" "$(echo "$2" | cut -c1-6)" "$(mbs "$3" "$2")"; }
f1=$(for i in $(seq "$RUNS"); do cpu_run "-o nocheck" "$M/ckpt-1/rank-000001"; done | best)
cpurow "(f d2) CPU: rank 1 rebuilt, -o nocheck" "$f1" "$rbytes"
f2=$(for i in $(seq "$RUNS"); do cpu_run "" "$M/ckpt-1/rank-000001"; done | best)
cpurow "(f d1) CPU: rank 1 rebuilt, MD5 checked" "$f2" "$rbytes"
mv "$WORK/Rank1.away" "$rank1"
f3=$(for i in $(seq "$RUNS"); do cpu_run "" "$M"; done | best)
cpurow "(f b) CPU: all variables, MD5 checked" "$f3" "$vbytes"
f4=$(for i in $(seq "$RUNS"); do cpu_run "-o nocheck" "$M"; done | best)
cpurow "(f c) CPU: all variables, -o nocheck" "$f4" "$vbytes"
f5=$(for i in $(seq "$RUNS"); do /usr/bin/time -f "%U %S" md5sum $(find "$ck" -name 'Ckpt1-Rank*.fti') 2>&1 >/dev/null | awk '{ print $1 + $2 }'; done | best)
cpurow "(f a2) CPU: md5sum of all Rank files" "$f5" "$total"
mt=$(for i in $(seq "$RUNS"); do a0=$(date +%s.%N); "$HPCMOUNT" "$ck" "$M"; a1=$(date +%s.%N); fusermount3 -u "$M"; echo "$a1 - $a0" | bc -l; done | best)
row "(e) mount time, $RANKS ranks" "$mt" "-"
ratio() { echo "scale=2; ($1) / ($2)" | bc -l; }
echo "# (b) checked read against md5sum of the same files, MiB/s: wall" \
     "$(ratio "$a2 * $vbytes" "$b * $total")x, per CPU second $(ratio "$f5 * $vbytes" "$f3 * $total")x"
echo "# (d1) checked rebuild against the unchecked one (d2): wall $(ratio "$e" "$d")x; load at the end: $(load)"
echo "# pipe ping-pong round trip between two processes: $(/usr/bin/python3 "$here/pingpong.py") us"
