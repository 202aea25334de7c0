#!/bin/bash
# tests/pkg/debian.sh - the Debian packages from a clean clone of HEAD:
# build dependencies from debian/control (mk-build-deps, as root), then
# dpkg-buildpackage -us -uc -b, lintian without errors, and each package's
# contents.  As root, also the installed packages from the system paths:
# hpcmount --version, mount -t fuse.hpcmount, import hpcmount from
# /usr/bin/python3, pkg-config hpcmount and hpcwrite (a program built
# against both), the bash completion; then dpkg -r leaves nothing behind.
#
# A full build of the sources (about 2 minutes on 2 cores), so CI runs it
# once, from tests/run-all.sh, not from make check.  Exit 77 where
# dpkg-buildpackage or git is missing.
. "$(dirname "$0")/../lib/lib.sh"
top=$(cd "$(dirname "$0")/../.." && pwd)
for t in git dpkg-buildpackage dpkg-deb lintian; do
    command -v $t > /dev/null || { echo "SKIP: $t missing (tests/deps.sh installs it)"; exit 77; }
done
ARCH=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
root=0; [ "$(id -u)" = 0 ] && root=1

# HPC_PKG_DEBS=DIR: the packages dpkg-buildpackage already wrote to DIR
# (from a clean clone of this revision); the build is not repeated
out=${HPC_PKG_DEBS:-$TMP}
if [ -z "${HPC_PKG_DEBS:-}" ]; then
    git clone -q "$top" "$TMP/src" || { fail "git clone"; finish; }
    cd "$TMP/src"
    if [ $root = 1 ] && command -v mk-build-deps > /dev/null; then
        check "mk-build-deps: the build dependencies of debian/control install" \
            sh -c "mk-build-deps -i -r -t 'apt-get -y -qq --no-install-recommends' debian/control > '$TMP/deps.log' 2>&1"
    fi
    check "dpkg-checkbuilddeps: every build dependency is there" dpkg-checkbuilddeps
    # -J: as many jobs as CPUs, where debian/rules's tools take them
    # (DEB_BUILD_OPTIONS=parallel=N)
    if ! dpkg-buildpackage -us -uc -b -J"$(nproc)" > "$TMP/build.log" 2>&1; then
        fail "dpkg-buildpackage -us -uc -b"; tail -40 "$TMP/build.log"; finish
    fi
    pass "dpkg-buildpackage -us -uc -b"
fi
cd "$TMP"
ver=$(dpkg-parsechangelog -l "$top/debian/changelog" -S Version)
debs=""
for p in hpcmount libhpcmount0 libhpcmount-dev python3-hpcmount hpcwrite libhpcwrite-dev; do
    f=$(ls "$out"/${p}_${ver}_*.deb 2>/dev/null | head -1)
    check "$p: built" [ -n "$f" ]
    [ -n "$f" ] && debs="$debs $f" && dpkg-deb -c "$f" | awk '{ print $6 }' | sed 's|^\./|/|' > "$TMP/$p.list"
done

# contains LIST PATH...: each path is in the package
contains() { local l=$1 p; shift; for p; do grep -qx -- "$p" "$TMP/$l.list" || { echo "missing: $p"; return 1; }; done; }
check "hpcmount: the daemon, hpcdump, their man pages, the bash completion" contains hpcmount \
    /usr/bin/hpcmount /usr/bin/hpcdump /usr/share/man/man1/hpcmount.1.gz /usr/share/man/man1/hpcdump.1.gz \
    /usr/share/bash-completion/completions/hpcmount /usr/share/bash-completion/completions/hpcdump
check "libhpcmount0: the versioned shared library and the helper" contains libhpcmount0 \
    /usr/lib/$ARCH/libhpcmount.so.0 /usr/libexec/hpcmount/hpcmount-helper
check "libhpcmount0: the soname is libhpcmount.so.0" \
    sh -c "dpkg-deb -x $(ls "$out"/libhpcmount0_${ver}_*.deb) '$TMP/x0' && objdump -p '$TMP'/x0/usr/lib/$ARCH/libhpcmount.so.0.* | grep -q 'SONAME *libhpcmount.so.0\$'"
check "libhpcmount-dev: header, .so link, pkg-config file, man page" contains libhpcmount-dev \
    /usr/include/hpcmount.h /usr/lib/$ARCH/libhpcmount.so /usr/lib/$ARCH/pkgconfig/hpcmount.pc \
    /usr/share/man/man3/libhpcmount.3.gz
check "python3-hpcmount: the package in Debian's python3 dist-packages" contains python3-hpcmount \
    /usr/lib/python3/dist-packages/hpcmount/__init__.py /usr/lib/python3/dist-packages/hpcmount/_libpath.py
check "hpcwrite: the tool and its man page" contains hpcwrite /usr/bin/hpcwrite /usr/share/man/man1/hpcwrite.1.gz
check "libhpcwrite-dev: library, header, pkg-config file" contains libhpcwrite-dev \
    /usr/lib/$ARCH/libhpcwrite.a /usr/include/hpc_write.h /usr/lib/$ARCH/pkgconfig/hpcwrite.pc
check "no libtool .la file in any package" sh -c "! cat '$TMP'/*.list | grep -q '\\.la\$'"

lintian --tag-display-limit 0 $debs > "$TMP/lintian.log" 2>&1
sed 's/^/lintian: /' "$TMP/lintian.log"
check "lintian: no errors" sh -c "! grep -q '^E:' '$TMP/lintian.log'"

if [ $root = 0 ]; then
    echo "note: not root: the packages are not installed"
    finish
fi
# ---- installed from the packages --------------------------------------
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $debs > "$TMP/install.log" 2>&1 ||
    fail "apt-get install of the built packages: $(tail -3 "$TMP/install.log")"
check "dpkg -i: all six installed" sh -c "dpkg-query -W hpcmount libhpcmount0 libhpcmount-dev python3-hpcmount hpcwrite libhpcwrite-dev > /dev/null"
cd /
unset top_builddir
check "hpcmount --version from /usr/bin" sh -c "/usr/bin/hpcmount --version | grep -q '^hpcmount $ver'"
check "hpcdump info --json from /usr/bin (the installed helper runs HDF4)" \
    sh -c "/usr/bin/hpcdump info --json '$top/tests/data/dhdf/mhf.hdf' | /usr/bin/python3 -c 'import json,sys; sys.exit(json.load(sys.stdin)[\"format\"] != \"dhdf\")'"
check "man hpcmount finds the page" sh -c "man -w hpcmount | grep -q /usr/share/man/man1/hpcmount.1"
check "bash completion loads on demand from bash-completion's directory" \
    bash -c ". /usr/share/bash-completion/bash_completion; __load_completion hpcdump && complete -p hpcdump | grep -q _hpcdump"
check "pkg-config hpcmount: the installed library" sh -c "pkg-config --libs hpcmount | grep -q -- -lhpcmount"
cat > "$TMP/t.c" <<'C'
#include <hpcmount.h>
#include <stdio.h>
int main(int argc, char **argv)
{
    hpcmount *m;
    if (argc < 2 || hpcmount_open(argv[1], NULL, &m) != HPCMOUNT_OK)
        return 1;
    hpcmount_stat st;
    int rc = hpcmount_resolve(m, "/rank-000001", &st);
    printf("%llu\n", (unsigned long long)st.size);
    hpcmount_close(m);
    return rc != HPCMOUNT_OK;
}
C
check "a program built with pkg-config hpcmount reads a container" \
    sh -c "cc -o '$TMP/t' '$TMP/t.c' \$(pkg-config --cflags --libs hpcmount) && test \"\$('$TMP/t' '$top/tests/data/a_4tasks.sion')\" = 1234"
check "pkg-config hpcwrite: an MPI program builds against libhpcwrite" \
    sh -c "printf '#include <hpc_write.h>\nint main(void) { return 0; }\n' > '$TMP/w.c' && cc -o '$TMP/w' '$TMP/w.c' \$(pkg-config --cflags --libs hpcwrite)"
check "hpcwrite --version from /usr/bin" sh -c "/usr/bin/hpcwrite --version | grep -q hpcwrite"
check "import hpcmount from /usr/bin/python3 reads a container" \
    sh -c "cd / && /usr/bin/python3 -c 'import hpcmount,sys; c=hpcmount.open(sys.argv[1]); sys.exit(len(c.read(\"/rank-000001\")) != 1234)' '$top/tests/data/a_4tasks.sion'"
if [ -c /dev/fuse ]; then
    mkdir -p "$TMP/mnt"
    if mount -t fuse.hpcmount "$top/tests/data/a_4tasks.sion" "$TMP/mnt"; then
        MOUNTS="$MOUNTS $TMP/mnt"
        check "mount -t fuse.hpcmount: the installed daemon serves the container" \
            cmp "$TMP/mnt/rank-000001" <(/usr/bin/hpcdump cat "$top/tests/data/a_4tasks.sion" /rank-000001)
        check "mount -t fuse.hpcmount: /.info.json" grep -q '"format":"sion"' "$TMP/mnt/.info.json"
        umount "$TMP/mnt"; MOUNTS=""
    else
        fail "mount -t fuse.hpcmount"
    fi
fi
# ---- removed ------------------------------------------------------------
dpkg -r hpcmount python3-hpcmount libhpcmount-dev libhpcmount0 libhpcwrite-dev hpcwrite > "$TMP/remove.log" 2>&1 ||
    fail "dpkg -r: $(tail -3 "$TMP/remove.log")"
left=""
for p in hpcmount libhpcmount0 libhpcmount-dev python3-hpcmount hpcwrite libhpcwrite-dev; do
    while read -r f; do
        [ -f "$f" ] || [ -L "$f" ] && left="$left $f"
    done < "$TMP/$p.list"
done
expect_eq "dpkg -r: no file of the packages is left" "" "$left"
check "dpkg -r: the python package's folder is gone" [ ! -e /usr/lib/python3/dist-packages/hpcmount ]
finish
