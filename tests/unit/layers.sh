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

# rank of a folder; the readers' folders share one rank
rank() {
    case $1 in
    src/core) echo 0 ;;
    src/formats/*) echo 1 ;;
    src/container) echo 2 ;;
    src/view) echo 3 ;;
    src/mount) echo 4 ;;
    src/refs) echo 5 ;;
    src/api) echo 6 ;;
    fuse | dump | helper) echo 7 ;;
    *) echo 99 ;;
    esac
}

# the one folder holding header $1 (sources name headers without a folder)
files=$(find src fuse dump helper mpi -name '*.[ch]' -type f | sort)
where() {
    printf '%s\n' "$files" | grep -m 1 "/$1\$" || true
}

# may $1 (a file in folder $2) include $3 (a header in folder $4)?
allowed() {
    case $2:$4:$3 in
    src/formats/*:src/formats/*:*) return 1 ;;   # one reader never includes another
    # the writers: byte helpers, the readers' on-disk layouts, the public codes
    mpi:src/core:hpc_bytes.h | mpi:src/formats/*:*_layout.h | mpi:src/api:hpcmount.h) return 0 ;;
    mpi:*) return 1 ;;
    esac
    [ "$(rank "$4")" -lt "$(rank "$2")" ]
}

bad=0 checked=0
for f in $files; do
    dir=$(dirname "$f")
    for h in $(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f"); do
        [ "$h" = config.h ] && continue
        hp=$(where "$h")
        [ -n "$hp" ] || { echo "$f: includes $h, which no source folder holds"; bad=$((bad + 1)); continue; }
        hdir=$(dirname "$hp")
        [ "$hdir" = "$dir" ] && continue
        checked=$((checked + 1))
        allowed "$f" "$dir" "$h" "$hdir" || { echo "$f: includes $hp: against the layers"; bad=$((bad + 1)); }
    done
done

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
