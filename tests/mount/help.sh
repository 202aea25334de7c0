#!/bin/bash
# help.sh - the short --help and the full --help-all of hpcmount and
# hpcdump: every row of the options tables (src/core/hpc_options.c and the
# readers' hpc_format.options) and every daemon option (fuse/hm_cmdline.c)
# is in --help-all and in the man page; --help leaves out exactly the rows
# marked HPC_OPT_TUNING.
. "$(dirname "$0")/../lib/lib.sh"

# "name level" for each row of the container options: the core's table and
# the readers' own (hpc_format.options)
tables=$(grep -l hpc_option_def "$top_srcdir"/src/formats/*/*.c)
rows() {
    awk '/^    (\[[A-Z0-9_]+\] = )?\{ "[a-z_0-9]+",/ { split($0, q, "\""); name = q[2] }
         name && /HPC_OPT_(BASIC|TUNING) \},/ { print name, ($0 ~ /TUNING/ ? "tuning" : "basic"); name = "" }' "$@"
}
rows "$top_srcdir/src/core/hpc_options.c" > "$TMP/rows"
rows $tables > "$TMP/reader_rows"
check "the readers' tables have rows" [ -s "$TMP/reader_rows" ]
cat "$TMP/reader_rows" >> "$TMP/rows"
# the daemon's own -o options ("log=%s" ...)
sed -n 's/^    { "\([a-z_]*\)=%[su]".*/\1/p' "$top_srcdir/fuse/hm_cmdline.c" > "$TMP/own"
check "the options table has rows of both levels" \
    sh -c "grep -q ' basic\$' '$TMP/rows' && grep -q ' tuning\$' '$TMP/rows'"
check "the daemon's own options were found" grep -qx log "$TMP/own"

"$HPCMOUNT" --help > "$TMP/mhelp"
"$HPCMOUNT" --help-all > "$TMP/mall"
"$HPCDUMP" --help > "$TMP/dhelp"
"$HPCDUMP" --help-all > "$TMP/dall"
MAN1="$top_srcdir/docs/hpcmount.1"

# has FILE NAME: an "-o NAME" (with or without =VALUE) line in FILE
has() { grep -Eq -- "-o $2([= ]|\$)" "$1"; }
# in_man NAME: the man page documents -o NAME (as ".BI \-o\ NAME=" or ".B \-o NAME")
in_man() { grep -Eq -- "^\.BI? \\\\-o(\\\\ | )$1(=| |\$)" "$MAN1"; }

while read -r name level; do
    check "$name: in hpcmount --help-all" has "$TMP/mall" "$name"
    check "$name: in hpcdump --help-all" has "$TMP/dall" "$name"
    check "$name: in hpcmount(1)" in_man "$name"
    if [ "$level" = tuning ]; then
        check "$name (tuning): not in hpcmount --help" sh -c "! grep -Eq -- '-o $name([= ]|\$)' '$TMP/mhelp'"
        check "$name (tuning): not in hpcdump --help" sh -c "! grep -Eq -- '-o $name([= ]|\$)' '$TMP/dhelp'"
    else
        check "$name: in hpcmount --help" has "$TMP/mhelp" "$name"
        check "$name: in hpcdump --help" has "$TMP/dhelp" "$name"
    fi
done < "$TMP/rows"
while read -r name; do
    check "daemon option $name: in hpcmount --help-all" has "$TMP/mall" "$name"
    check "daemon option $name: in hpcmount(1)" in_man "$name"
done < "$TMP/own"
check "hpcmount --help: log, the daemon option a first mount may need" has "$TMP/mhelp" log
check "hpcmount --help: no tuning knob of the daemon" sh -c "! grep -q -e spin_us -e ra_threads -e zerocopy_min_kb '$TMP/mhelp'"
check "hpcmount --help: shorter than --help-all" [ "$(wc -l < "$TMP/mhelp")" -lt "$(wc -l < "$TMP/mall")" ]
check "hpcmount --help: points to --help-all" grep -q -- --help-all "$TMP/mhelp"
check "hpcdump --help: points to --help-all" grep -q -- --help-all "$TMP/dhelp"
check "--help-all in both man pages" sh -c "grep -q 'help\\\\-all' '$MAN1' && grep -q 'help\\\\-all' '$top_srcdir/docs/hpcdump.1'"
finish
