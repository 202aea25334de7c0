#!/bin/sh
# tests/deps.sh [--bench] - install the Debian packages hpcmount needs to build
# and test (only those missing); --bench adds the benchmark tools.
set -eu
pkgs="autoconf automake libtool pkg-config make gcc libfuse3-dev fuse3 libglib2.0-dev check
  clang libclang-rt-14-dev python3 python3-gsd python3-h5py python3-numpy python3-fsspec
  libhdf5-dev libdeflate-dev liblzf-dev hdf5-tools libhdf4-dev hdf4-tools openmpi-bin libopenmpi-dev attr bc"
# FTI reader: Reed-Solomon region arithmetic, MD5 checks
pkgs="$pkgs libgf-complete-dev libssl-dev"
# the Debian packages (tests/pkg/debian.sh) and the bash completion
pkgs="$pkgs debhelper dh-python dpkg-dev fakeroot lintian devscripts equivs bash-completion man-db"
# HDF5 reader tests: memcheck run, filter plugins users meet
pkgs="$pkgs valgrind hdf5-filter-plugin hdf5-filter-plugin-blosc-serial hdf5-plugin-lzf"
# references (hpcdump refs) read by zarr, xarray and a Dask cluster
pkgs="$pkgs python3-fsspec python3-zarr python3-xarray python3-dask python3-distributed python3-numcodecs"
# netCDF-3 reader tests and the oracle of the references' xarray Datasets:
# libnetcdf (netCDF4-python, ncdump) and PnetCDF
pkgs="$pkgs python3-netcdf4 netcdf-bin libpnetcdf-dev pnetcdf-bin"
[ "${1:-}" = --bench ] && pkgs="$pkgs fio squashfuse squashfs-tools python3-mpi4py"
missing=""
for p in $pkgs; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "installing:$missing"
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
$SUDO apt-get update -qq
# shellcheck disable=SC2086
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
