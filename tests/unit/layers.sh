#!/bin/sh
# tests/unit/layers.sh - every #include between source folders goes down the
# layers docs/design.md draws (core < formats < container < view < mount <
# refs < api < front ends), so no include cycle between folders comes back
# unseen, no reader calls a function of the layers above it, the
# references name no format's filter, and no layer above the readers
# names a reader's -o option.  Prints each include, call or name
# that breaks a rule and fails if there is one.
set -eu
top=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$top"

# every include between folders, in one awk over all sources (a shell
# function per include cost seconds): the one folder holding a header
# (sources name headers without a folder; the first in sorted order), the
# rank of each folder, and whether the include goes down
files=$(find src fuse dump helper mpi -name '*.[ch]' -type f | sort)
export files
# shellcheck disable=SC2086
incl=$(awk '
# rank of a folder; the folders of the readers share one rank
function rank(d) {
    if (d == "src/core") return 0
    if (d ~ /^src\/formats\//) return 1
    if (d == "src/container") return 2
    if (d == "src/view") return 3
    if (d == "src/mount") return 4
    if (d == "src/refs") return 5
    if (d == "src/api") return 6
    if (d == "fuse" || d == "dump" || d == "helper") return 7
    return 99
}
function dirname(p) { sub(/\/[^\/]*$/, "", p); return p }
# may a file in folder d include header h of folder hd?
function allowed(d, hd, h) {
    if (d ~ /^src\/formats\// && hd ~ /^src\/formats\//) return 0   # one reader never includes another
    # the writers: byte helpers, on-disk layouts of readers, the public codes
    if (d == "mpi")
        return (hd == "src/core" && h == "hpc_bytes.h") || (hd ~ /^src\/formats\// && h ~ /_layout\.h$/) ||
            (hd == "src/api" && h == "hpcmount.h")
    return rank(hd) < rank(d)
}
BEGIN {
    n = split(ENVIRON["files"], F, "\n")
    for (i = 1; i <= n; i++) { b = F[i]; sub(/.*\//, "", b); if (!(b in where)) where[b] = F[i] }
}
match($0, /^#include "[^"]*"/) {
    h = substr($0, 11, RLENGTH - 11)
    if (h == "config.h") next
    if (!(h in where)) { print FILENAME ": includes " h ", which no source folder holds"; bad++; next }
    d = dirname(FILENAME); hd = dirname(where[h])
    if (hd == d) next
    checked++
    if (!allowed(d, hd, h)) { print FILENAME ": includes " where[h] ": against the layers"; bad++ }
}
END { print "counts", checked + 0, bad + 0 }' $files)
printf '%s\n' "$incl" | grep -v '^counts ' || true
read -r checked bad <<EOF
$(printf '%s\n' "$incl" | sed -n 's/^counts //p')
EOF

# readers call nothing above them: what they need of the container comes
# through the table it hands down (hpc_host in hpc_format.h), so no reader
# names a container function, nor the helper's sandbox
up=$(grep -rnE '\<hpc_(container|sandbox|remote|mount)_[a-z_]+ *\(' src/formats || true)
[ -z "$up" ] || { printf '%s\n' "$up" | sed 's/$/: a reader calls up/'; bad=$((bad + 1)); }

# the references write the codecs a reader names (hpc_format.chunks): no
# format's filter is known in src/refs, where it would take a format's id
flt=$(grep -rniE 'H5Z|fletcher|szip|lzf|n-bit|scale.offset' src/refs || true)
[ -z "$flt" ] || { printf '%s\n' "$flt" | sed 's/$/: a filter named in the references/'; bad=$((bad + 1)); }

# a reader's -o options are its own (hpc_format.options): no layer above
# the readers, nor a front end, names one, as a field or in a text
opts=$(grep -l hpc_option_def src/formats/*/*.c |
    xargs sed -nE 's/.*\{ "([a-z_0-9]+)", ("[A-Z]+"|NULL),.*/\1/p' | sort -u)
[ "$(printf '%s\n' $opts | wc -l)" -ge 3 ] || { echo "layers: too few reader options found"; bad=$((bad + 1)); }
for o in $opts; do
    named=$(grep -rnw -e "$o" src/core src/container src/view src/mount src/refs src/api \
        fuse dump helper || true)
    [ -z "$named" ] || { printf '%s\n' "$named" | sed "s/\$/: names the reader's option $o/"; bad=$((bad + 1)); }
done

echo "layers: $checked includes between folders checked, $bad against the rules"
# a rule that checks nothing would pass for the wrong reason
[ "$checked" -gt 50 ] || { echo "layers: too few includes found under $top"; exit 1; }
[ "$bad" -eq 0 ]
