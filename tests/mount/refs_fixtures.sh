#!/bin/bash
# refs_fixtures.sh - `hpcdump refs` of every fixture, opened with Debian's
# fsspec reference filesystem + zarr and with xarray: every array equals
# the mount's bytes and the format library's values (gsd.fl, h5py,
# SDreaddata); with --inline=0 (byte ranges) and the default (small chunks
# inline).  Bad input: one line, exit 1, nothing on stdout.
. "$(dirname "$0")/../lib/lib.sh"
$PY -c "import fsspec, zarr, xarray, numcodecs" 2>/dev/null ||
    { echo "SKIP: python3-fsspec/zarr/xarray/numcodecs missing (tests/deps.sh)"; exit 77; }
need_fuse
. "$top_srcdir/tests/lib/refs_lib.sh"

# refs_check NAME SOURCE MOUNT [refs_verify args...]: both inline settings,
# queued for refs_batch
refs_check() {
    local name=$1 src=$2 mnt=$3; shift 3
    for il in 0 500; do
        local out="$TMP/$name.$il.json"
        if ! "$HPCDUMP" refs --inline=$il "$src" >"$out" 2>"$TMP/err"; then
            fail "$name: hpcdump refs --inline=$il: $(cat "$TMP/err")"; continue
        fi
        refs_queue "$name (--inline=$il): zarr and xarray read the mount's and the library's values" \
            "$out" "$mnt" "$@"
    done
}

for f in "$DATA"/gsd/*.gsd; do
    b=$(basename "$f" .gsd)
    mount_container "$f" "$TMP/m-$b" || { fail "$b: mount"; continue; }
    refs_check "$b" "$f" "$TMP/m-$b" --gsd "$f"
done
for f in "$DATA"/*.sion; do
    b=$(basename "$f" .sion)
    mount_container "$f" "$TMP/m-$b" || { fail "$b: mount"; continue; }
    refs_check "$b" "$f" "$TMP/m-$b"
done
for d in "$DATA"/fti/master-i64/ckpt*; do
    b=fti-$(basename "$d")
    mount_container "$d" "$TMP/m-$b" || { fail "$b: mount"; continue; }
    refs_check "$b" "$d" "$TMP/m-$b"
done

# HDF5: every layout h5py writes, the codecs zarr decodes and those it cannot
if $PY -c "import h5py" 2>/dev/null && [ -x "$top_builddir/helper/hpcmount-helper" ]; then
    $PY "$top_srcdir/tests/gen/refs_h5gen.py" "$TMP/t.h5"
    mount_container "$TMP/t.h5" "$TMP/m-h5" || fail "hdf5: mount"
    refs_check hdf5 "$TMP/t.h5" "$TMP/m-h5" --h5 "$TMP/t.h5" --min-arrays 30
    check "hdf5: gzip+shuffle chunks as numcodecs filters, one reference per chunk" \
        $PY -c "import json,sys; r=json.load(open('$TMP/hdf5.0.json'))['refs']; \
z=json.loads(r['grp/gzip_shuffle/.zarray']); \
sys.exit(0 if [f['id'] for f in z['filters']]==['shuffle','zlib'] and r['grp/gzip_shuffle/4.2'][0]=='{{u}}' else 1)"
    check "hdf5: big-endian data referenced in the file's order" \
        $PY -c "import json,sys; r=json.load(open('$TMP/hdf5.0.json'))['refs']; \
sys.exit(0 if json.loads(r['grp/gzip_be/.zarray'])['dtype']=='>f8' else 1)"
    check "hdf5: LZF, scale-offset and shuffle after deflate listed as not covered, with why" \
        $PY -c "import json,sys; r=json.load(open('$TMP/hdf5.0.json'))['refs']; \
n=json.loads(r['grp/.zattrs'])['hpcmount_not_covered']; \
sys.exit(0 if sorted(n)==['deflate_shuffle','lzf','scaleoffset'] and 'LZF' in n['lzf'] else 1)"
    check "hdf5: variable-length strings inline through numcodecs' vlen-utf8" \
        $PY -c "import json,sys; r=json.load(open('$TMP/hdf5.0.json'))['refs']; \
z=json.loads(r['grp/vlen/.zarray']); \
sys.exit(0 if z['dtype']=='|O' and z['filters']==[{'id': 'vlen-utf8'}] and r['grp/vlen/0'].startswith('base64:') else 1)"
    check "hdf5: compounds as structured dtypes in the file's layout and byte order" \
        $PY -c "import json,sys; r=json.load(open('$TMP/hdf5.0.json'))['refs']; \
d=lambda k: json.loads(r['cmp/'+k+'/.zarray'])['dtype']; \
n=json.loads(r['cmp/.zattrs'])['hpcmount_not_covered']; \
sys.exit(0 if d('padded_be')==[['x','>i2'],['','|V6'],['y','>f8'],['s','|S5'],['','|V3']] and \
d('nested')[1]==['in',[['p','<i2'],['q','>f4',[2]]],[3]] and d('complex_be')=='>c8' and \
d('compact')==[['a','<i4'],['b','<f4']] and sorted(n)==['f_names'] and \
's' in json.loads(r['cmp/vlen_member/.zattrs'])['hpcmount_not_covered'] else 1)"
    check "hdf5: array types as trailing axes, one chunk along them" \
        $PY -c "import json,sys; r=json.load(open('$TMP/hdf5.0.json'))['refs']; \
z=json.loads(r['arr/chunked_be/.zarray']); \
sys.exit(0 if z['shape']==[20,4,5] and z['chunks']==[6,3,5] and z['dtype']=='>f8' and \
'arr/chunked_be/3.1.0' in r and len(json.loads(r['arr/contig/.zattrs'])['_ARRAY_DIMENSIONS'])==3 else 1)"
    "$HPCDUMP" -o inproc refs --inline=0 "$TMP/t.h5" >"$TMP/inproc.json"
    check "hdf5: the same references in process and through the helper" cmp -s "$TMP/inproc.json" "$TMP/hdf5.0.json"
else
    echo "note: h5py or the helper missing: HDF5 references not tested"
fi

# distributed HDF: pieces on a regular grid are the chunks of the assembled
# array (in the AHFs, big- or little-endian as stored), else separate arrays
O="$top_builddir/tests/gen/hdf4_oracle"
if [ -x "$O" ] && [ -x "$top_builddir/tests/gen/dhdf_gen" ]; then
    "$top_builddir/tests/gen/dhdf_gen" "$TMP/grid" grid >/dev/null
    for set in "$DATA/dhdf/mhf.hdf" "$TMP/grid/main.hdf"; do
        b=dhdf-$(basename "$(dirname "$set")")
        oracles=""
        for f in "$(dirname "$set")"/*.hdf; do
            "$O" "$f" >"$TMP/$b-$(basename "$f").oracle" && oracles="$oracles $TMP/$b-$(basename "$f").oracle"
        done
        mount_container "$set" "$TMP/m-$b" || { fail "$b: mount"; continue; }
        # shellcheck disable=SC2086
        refs_check "$b" "$set" "$TMP/m-$b" --hdf4 $oracles
    done
    check "dhdf grid: the assembled array's pieces are its chunks, in three files" \
        $PY -c "import json,sys; j=json.load(open('$TMP/dhdf-grid.0.json')); r=j['refs']; \
z=json.loads(r['tiles/.zarray']); \
sys.exit(0 if z['chunks']==[20,20] and z['dtype']=='>f4' and len(j['templates'])==3 and \
json.loads(r['little/.zarray'])['dtype']=='<i4' else 1)"
    check "dhdf fixture: uneven pieces: the assembled array is a note, the pieces arrays" \
        $PY -c "import json,sys; r=json.load(open('$TMP/dhdf-dhdf.0.json'))['refs']; \
n=json.loads(r['.zattrs'])['hpcmount_not_covered']; \
sys.exit(0 if 'sds1' in n and 'sds1.pieces' in n['sds1'] and 'sds1.pieces/sds1_chunk1/.zarray' in r else 1)"
fi

refs_batch

# the references point into the container's own files, once through a template
check "a SION stream is a byte range of the file, named by a template" \
    $PY -c "import json,sys; r=json.load(open('$TMP/b_multichunk.0.json')); \
sys.exit(0 if list(r['templates'].values())==['$(realpath "$DATA/b_multichunk.sion")'] and \
r['refs']['rank-000002/0'][0]=='{{u}}' else 1)"
check "a GSD series: one chunk (1,N,M) per frame" \
    $PY -c "import json,sys; r=json.load(open('$TMP/hoomd_traj.0.json'))['refs']; \
z=json.loads(r['series/particles/position/.zarray']); \
sys.exit(0 if z['chunks']==[1,4,3] and z['shape']==[20,4,3] and 'series/particles/position/19.0.0' in r else 1)"

# one array by path
"$HPCDUMP" refs "$DATA/gsd/hoomd_traj.gsd" /series/particles/position >"$TMP/one.json"
check "refs of one array path" $PY -c "import json,sys,fsspec,zarr; \
z=zarr.open(fsspec.filesystem('reference',fo='$TMP/one.json',remote_protocol='file').get_mapper(''),mode='r'); \
sys.exit(0 if z.shape==(20,4,3) else 1)"

# the package's own store over every reference file above
. "$top_srcdir/tests/lib/python_env.sh"
check "hpcmount.refs_store(): every key of every file above as fsspec's reference filesystem reads it" \
    pypkg "$REFS_VERIFY" --stores "$TMP"/*.json

# bad input: one line on stderr, exit 1, nothing on stdout
printf 'GSD\0garbage that is no GSD file at all' >"$TMP/bad.gsd"
head -c 3000 "$DATA/b_multichunk.sion" >"$TMP/cut.sion"
for bad in "$TMP/bad.gsd" "$TMP/cut.sion" "$TMP/missing"; do
    "$HPCDUMP" refs "$bad" >"$TMP/out" 2>"$TMP/err"; rc=$?
    expect_eq "refs of $(basename "$bad"): exit 1" 1 $rc
    expect_eq "refs of $(basename "$bad"): one line, nothing on stdout" "1 0" \
        "$(wc -l <"$TMP/err") $(wc -c <"$TMP/out")"
done
"$HPCDUMP" refs "$DATA/gsd/hoomd_traj.gsd" /no/such >"$TMP/out" 2>"$TMP/err"; rc=$?
expect_eq "refs of a missing path: exit 1, one line, nothing on stdout" "1 1 0" \
    "$rc $(wc -l <"$TMP/err") $(wc -c <"$TMP/out")"
finish
