#!/bin/bash
# gsd_damage.sh - damaged GSD files: where the GSD library refuses the whole
# file (one bad index entry, data past the end of the file, a truncated
# index), the frames before the first bad entry are served byte-exact and
# .info says what was skipped; a damaged header fails the mount with a
# one-line message naming the field; killed writers mount normally; random
# corruption never crashes the mount or hpcdump.
. "$(dirname "$0")/../lib/lib.sh"
need_fuse
G="$DATA/gsd"
T="$G/gsdtest.py"

# make VARIANT: writes $TMP/VARIANT.gsd and prints the number of frames that
# must be served (the frames before the first bad entry's frame, from the
# manifest written by the real library)
make_variant() {
    $PY - "$G" "$TMP" "$1" <<'EOF'
import os, shutil, struct, sys
G, T, v = sys.argv[1:]
def rows(name):
    out, on = [], False
    for line in open(os.path.join(G, "MANIFEST.txt")):
        if line.startswith("## "):
            on = line.split()[1] == name
        w = line.rstrip("\n").split("\t")
        if on and len(w) == 10 and w[0].isdigit():
            out.append((int(w[0]), int(w[1]), int(w[7]), int(w[8])))
    return out   # slot, frame, location, nbytes
src = "sparse_chunks.gsd" if v.startswith("sparse") else "hoomd_traj.gsd"
R = rows(src)
data = bytearray(open(os.path.join(G, src), "rb").read())
index = struct.unpack_from("<Q", data, 8)[0]
def put(slot, off, fmt, val):
    struct.pack_into(fmt, data, index + 32 * slot + off, val)
bad = None
if v == "badtype":   put(10, 30, "B", 99); bad = 10
if v == "flags":     put(23, 31, "B", 1); bad = 23
if v == "pasteof":   put(50, 16, "<q", len(data) + 1000); bad = 50
if v == "badid":     put(60, 28, "<H", 500); bad = 60
if v == "backwards": put(70, 0, "<Q", 0); bad = 70
if v == "trunc":     # cuts the moved index: entries up to slot 101 remain
    cut = index + 32 * 102 + 7
    data = data[:cut]
    last = R[101][1]
    print(last)      # its last frame may be cut: frames before it
if v == "sparse_trunc":   # data of late chunks beyond the end
    cut = 5800
    data = data[:cut]
    bad = min(r[0] for r in R if r[2] + r[3] > cut)
if bad is not None:
    print(R[bad][1])
open(os.path.join(T, v + ".gsd"), "wb").write(data)
EOF
}

for v in badtype flags pasteof badid backwards trunc sparse_trunc; do
    nf=$(make_variant "$v")
    f="$TMP/$v.gsd"; mnt="$TMP/m-$v"
    mount_container "$f" "$mnt" || { fail "$v: mount"; continue; }
    orig=hoomd_traj.gsd; [ "${v#sparse}" != "$v" ] && orig=sparse_chunks.gsd
    $PY "$T" manifest "$G/$orig" | awk -v nf="$nf" '{ split($1, p, "/"); if (p[2] + 0 < nf) print }' > "$TMP/$v.exp"
    check "$v: the $(wc -l < "$TMP/$v.exp") chunks of frames 0..$((nf - 1)) byte-exact" \
        $PY "$top_srcdir/tests/lib/chunk_sums.py" "$mnt" "$f" "$HPCDUMP" "$TMP/$v.exp"
    expect_eq "$v: no other files" "$(cut -d' ' -f1 "$TMP/$v.exp" | sort)" \
        "$(cd "$mnt" && find frames -type f | sort)"
    check "$v: .info says what was skipped" grep -q '^skipped: ' "$mnt/.info"
    if ! $PY -c "import gsd.fl, sys; f = gsd.fl.open(sys.argv[1], 'rb'); [f.read_chunk(i, n) for i in range(f.nframes) for n in f.find_matching_chunk_names('') if f.chunk_exists(i, n)]" "$f" 2>/dev/null; then
        echo "   (gsd.fl refuses $v.gsd)"
    fi
done
expect_eq "badtype: frame 0 only (frame 1 lost a chunk)" "000000" "$(ls "$TMP/m-badtype/frames" | tr '\n' ' ' | sed 's/ $//')"
expect_eq "trunc: .info says the index is cut" "index: only 102 of 256 allocated entries lie inside the file" \
    "$(grep '^index: only' "$TMP/m-trunc/.info")"

# --- damaged headers: the mount fails with one line naming the field --------
hdr() {   # hdr NAME OFFSET FORMAT VALUE [TRUNCATE]
    $PY - "$G/hoomd_traj.gsd" "$TMP/$1.gsd" "$2" "$3" "$4" "${5:-0}" <<'EOF'
import struct, sys
src, dst, off, fmt, val, cut = sys.argv[1:]
d = bytearray(open(src, "rb").read())
struct.pack_into(fmt, d, int(off), int(val))
if int(cut):
    d = d[:int(cut)]
open(dst, "wb").write(d)
EOF
}
hdr badmagic 0 "<Q" 1
hdr short 0 "<Q" 7307199536658146783 100
hdr farindex 8 "<Q" 1000000000000
hdr farnames 24 "<Q" 1000000000000
hdr version 44 "<I" 327680
for case in "badmagic:field magic at offset 0" "short:field header at offset 0" \
            "farindex:field index_location at offset 8" "farnames:field namelist_location at offset 24" \
            "version:field gsd_version at offset 44"; do
    n=${case%%:*}; want=${case#*:}
    mkdir -p "$TMP/m-$n"
    out=$("$HPCMOUNT" -o format=gsd "$TMP/$n.gsd" "$TMP/m-$n" 2>&1); rc=$?
    [ $rc = 0 ] && MOUNTS="$MOUNTS $TMP/m-$n"
    check "$n: mount fails" [ $rc != 0 ]
    check "$n: one line naming the field ($(echo "$out" | head -1))" \
        sh -c "[ $(echo "$out" | wc -l) = 1 ] && echo '$out' | grep -qF '$want'"
    check "$n: nothing left mounted" sh -c "! grep -q ' $TMP/m-$n fuse' /proc/self/mounts"
done

# --- a killed writer: orphan bytes after the last frame, names without entries
$PY "$T" write "$TMP/killed.gsd" 40 5
$PY - "$TMP/killed.gsd" <<'EOF'
import struct, sys
p = sys.argv[1]
d = bytearray(open(p, "rb").read())
nl, = struct.unpack_from("<Q", d, 24)
used = d.index(b"\0\0", nl) + 1           # a name whose frame never finished
d[used:used + 12] = b"never/ended\0"
open(p, "wb").write(bytes(d) + bytes(range(256)) * 20)   # orphan chunk data
EOF
mount_container "$TMP/killed.gsd" "$TMP/m-killed" || fail "killed: mount"
check "killed: every frame as gsd.fl reads it" $PY "$T" verify "$TMP/m-killed" "$TMP/killed.gsd"
check "killed: no damage reported" grep -q '^damage: none' "$TMP/m-killed/.info"
check "killed: the name without entries is listed in .info" grep -q 'never/ended' "$TMP/m-killed/.info"

# --- random corruption: never a crash -------------------------------------------
crashes=0
for i in $(seq 1 30); do
    $PY - "$G/hoomd_traj.gsd" "$TMP/r.gsd" "$i" <<'EOF'
import random, sys
src, dst, seed = sys.argv[1:]
r = random.Random(int(seed))
d = bytearray(open(src, "rb").read())
# index, header and name list are where the reader decides things
for _ in range(r.randint(1, 8)):
    region = r.choice([(0, 256), (4352, 5376), (8728, 8728 + 32 * 140)])
    d[r.randrange(*region)] = r.randrange(256)
if r.random() < 0.3:
    d = d[:r.randrange(len(d))]
open(dst, "wb").write(d)
EOF
    "$HPCDUMP" -o format=gsd extract "$TMP/r.gsd" "$TMP/rx$i" >/dev/null 2>"$TMP/r.err"; rc=$?
    if [ $rc -ge 128 ] || grep -q Sanitizer "$TMP/r.err"; then
        crashes=$((crashes + 1)); cp "$TMP/r.gsd" "$TMP/crash$i.gsd"; echo "  crash on seed $i (rc $rc)"
    fi
    rm -rf "$TMP/rx$i"
    if [ $((i % 10)) = 0 ] && mount_container "$TMP/r.gsd" "$TMP/mr$i" -o format=gsd 2>/dev/null; then
        find "$TMP/mr$i" -type f -exec cat {} + >/dev/null 2>&1
        is_mounted "$TMP/mr$i" || crashes=$((crashes + 1))
    fi
done
expect_eq "30 randomly corrupted files: no crash" 0 "$crashes"

finish
