#!/bin/bash
# netcdf3_pnetcdf.sh - a CDF-5 file written by PnetCDF from 3 MPI ranks
# (tests/gen/pnetcdf_gen.c, built here with mpicc: each rank writes its
# columns of every variable collectively, record by record) mounted and
# compared with netCDF4-python (libnetcdf reads it) through the mount,
# hpcdump extract and c.array(), and with the values the writer put.
# Skipped (77) without PnetCDF, mpicc/mpirun or python3-netcdf4.
. "$(dirname "$0")/../lib/lib.sh"
need_fuse
command -v mpicc >/dev/null && command -v mpirun >/dev/null || { echo "SKIP: mpicc/mpirun missing"; exit 77; }
[ -f /usr/include/pnetcdf.h ] || { echo "SKIP: PnetCDF (libpnetcdf-dev) missing"; exit 77; }
"$PY" -c 'import netCDF4' 2>/dev/null || { echo "SKIP: python3-netcdf4 missing"; exit 77; }
. "$top_srcdir/tests/lib/python_env.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
gen="$TMP/pnetcdf_gen"
check "pnetcdf_gen builds" mpicc -Wall -Wextra -Werror -o "$gen" "$top_srcdir/tests/gen/pnetcdf_gen.c" -lpnetcdf
f="$TMP/p.nc"
# timeout: a safety net against a hung MPI job, as the writer tests have
check "3 ranks write the CDF-5 file" timeout 600 mpirun --oversubscribe -np 3 "$gen" "$f"
expect_eq "a CDF-5 file" "CDF5" "$(head -c 4 "$f" | od -An -c | tr -d ' \\' | sed 's/005$/5/')"
mnt="$TMP/m"
mount_container "$f" "$mnt" || { fail "mount"; finish; }
"$HPCDUMP" extract "$f" "$TMP/x" > /dev/null || fail "hpcdump extract"
check "mount, hpcdump and c.array() equal netCDF4-python" \
    pypkg "$top_srcdir/tests/mount/netcdf3_verify.py" "$f" "$mnt" "$TMP/x"
check "the values every rank wrote" "$PY" - "$mnt" <<'PYEOF'
import sys, numpy as np
m = sys.argv[1]
r, c = np.meshgrid(np.arange(5), np.arange(12), indexing="ij")
want = {"fixed_i64": np.arange(12, dtype="<i8"), "rec_u16": (1000 + 100 * r + c).astype("<u2"),
        "rec_f8": (2000.5 + 100 * r + c).astype("<f8"), "rec_u8": ((100 * r + c) % 256).astype("u1")}
bad = [n for n, w in want.items() if np.fromfile("%s/%s" % (m, n), w.dtype).tobytes() != w.tobytes()]
print("differ:", bad)
sys.exit(1 if bad else 0)
PYEOF
expect_eq ".info: CDF-5, 5 records" "version: CDF-5 (64-bit data) numrecs: 5" \
    "$(grep -E '^(version|numrecs):' "$mnt/.info" | tr '\n' ' ' | sed 's/ $//')"
finish
