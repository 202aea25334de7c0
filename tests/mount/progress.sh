#!/bin/bash
# progress.sh - the progress of hpcdump extract and refs on stderr, through
# a pseudo-terminal (progress.py): --progress shows "done of total
# (percent), rate, time left" and ends at 100% with a newline; nothing with
# --no-progress, nothing on a pipe unless --progress asks.  The totals are
# checked against the tree (ls --json -R); nothing depends on how long the
# work takes (--progress forces the line that a terminal would get after a
# second).
. "$(dirname "$0")/../lib/lib.sh"
RUN="$PY $top_srcdir/tests/mount/progress.py"
FTI="$DATA/fti/master-i64"
GSD="$DATA/gsd/hoomd_traj.gsd"
$PY -c 'import pty' || { echo "SKIP: python3 has no pty module"; exit 77; }

# the last progress line (after the last \r) of stderr file $1
last() { tr '\r' '\n' < "$1" | grep -v '^$' | tail -1; }

$RUN TTY "$TMP/out" -- "$HPCDUMP" extract --progress "$FTI" "$TMP/x1" > "$TMP/e1"; rc=$?
expect_eq "extract --progress on a terminal: exit 0" 0 "$rc"
line=$(last "$TMP/e1" | sed 's/\x1b\[K//')
bytes=$(find "$TMP/x1" -type f -printf '%s\n' | awk '{ s += $1 } END { print s }')
total=$($PY -c "
import sys
v, u = float(sys.argv[1]), 0
while v >= 1024 and u < 4: v /= 1024; u += 1
print(('%.1f %s' if u else '%.0f %s') % (v, ['B', 'KiB', 'MiB', 'GiB', 'TiB'][u]))" "$bytes")
check "extract: the last line is done of total, 100%, a rate and the time left ($line)" \
    sh -c "printf '%s\n' \"\$1\" | grep -Eq '^extract: $total of $total \(100%\), [0-9.]+ [KMGT]?i?B/s, [0-9]+:[0-9]{2} left\$'" sh "$line"
check "extract: every line rewrites the one before (\\r) and the last ends the line" \
    $PY -c "import sys; d = open(sys.argv[1], 'rb').read(); sys.exit(not (d[:1] == b'\\r' and d[-1:] == b'\\n'))" "$TMP/e1"
check "extract: done never exceeds total" \
    sh -c "tr '\r' '\n' < '$TMP/e1' | sed -n 's/.*(\([0-9]*\)%).*/\1/p' | awk '\$1 > 100 { exit 1 }'"

$RUN TTY "$TMP/out" -- "$HPCDUMP" extract --no-progress "$FTI" "$TMP/x2" > "$TMP/e2"
expect_eq "extract --no-progress on a terminal: nothing on stderr" "" "$(cat "$TMP/e2")"
$RUN PIPE "$TMP/out" -- "$HPCDUMP" extract "$FTI" "$TMP/x3" > "$TMP/e3"
expect_eq "extract on a pipe: nothing on stderr" "" "$(cat "$TMP/e3")"
check "extract on a pipe: the same tree" diff -r "$TMP/x1" "$TMP/x3"
$RUN PIPE "$TMP/out" -- "$HPCDUMP" extract --progress "$FTI" "$TMP/x4" > "$TMP/e4"
check "extract --progress on a pipe: shown" grep -q '(100%)' "$TMP/e4"

# refs: nodes, their total the nodes of the tree
nodes=$("$HPCDUMP" ls --json -R "$GSD" | $PY -c "
import json, sys
def n(e): return sum(1 + n(c) for c in e.get('entries', []))
print(n(json.load(sys.stdin)['node']))")
$RUN TTY "$TMP/refs.json" -- "$HPCDUMP" refs --progress "$GSD" > "$TMP/r1"; rc=$?
expect_eq "refs --progress on a terminal: exit 0" 0 "$rc"
line=$(last "$TMP/r1" | sed 's/\x1b\[K//')
check "refs: the last line counts every node of the tree ($nodes): $line" \
    sh -c "printf '%s\n' \"\$1\" | grep -Eq '^refs: $nodes of $nodes nodes \(100%\), [0-9]+ nodes/s, [0-9]+:[0-9]{2} left\$'" sh "$line"
"$HPCDUMP" refs "$GSD" > "$TMP/refs2.json"
check "refs: the document is the same with progress" cmp -s "$TMP/refs.json" "$TMP/refs2.json"
$RUN TTY "$TMP/out" -- "$HPCDUMP" refs --no-progress "$GSD" > "$TMP/r2"
expect_eq "refs --no-progress on a terminal: nothing on stderr" "" "$(cat "$TMP/r2")"
$RUN PIPE "$TMP/out" -- "$HPCDUMP" refs "$GSD" > "$TMP/r3"
expect_eq "refs on a pipe: nothing on stderr" "" "$(cat "$TMP/r3")"
finish
