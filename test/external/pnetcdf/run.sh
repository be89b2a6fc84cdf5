#!/usr/bin/env bash
# A real MPI-IO application on DCFA-MPI, in Fortran and C, checked against
# Debian's MPICH: PnetCDF 1.12.3 (Debian's source package pnetcdf) with its
# Fortran 77/90 bindings, its FLASH-IO benchmark (the I/O kernel of the FLASH
# astrophysics code, Fortran 90: collective MPI-IO of 80 blocks x 24 variables
# per rank) and every example of its C, Fortran 77 and Fortran 90 folders (53
# programs: blocking, nonblocking, buffered, flexible-API and vard writes,
# block-cyclic, column-wise and transposed layouts, ...). The library and
# programs are built once with each MPI's mpicc/mpifort; every program runs on
# N ranks with each MPI, and the netCDF files both write must hold the same
# data (PnetCDF's ncmpidiff). docs/testing.md, "A Fortran application: PnetCDF".
#
#   test/external/pnetcdf/run.sh --with-mpi PREFIX [--np N] [--cache DIR]
# Needs autoconf automake libtool (the Debian source has no configure), dpkg-dev,
# and Debian's mpich (mpicc.mpich, mpifort.mpich, mpiexec.mpich).
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
VER=1.12.3
CACHE=${DCFA_PNETCDF_CACHE:-${HOME:-/root}/.cache/dcfa-mpi/pnetcdf}
PREFIX=""
NP=4
REF_CC=${DCFA_REF_CC:-mpicc.mpich}
REF_FC=${DCFA_REF_FC:-mpifort.mpich}
REF_RUN=${DCFA_REF_RUN:-mpiexec.mpich}
while [ $# -gt 0 ]; do
    case "$1" in
        --with-mpi) PREFIX=$2; shift 2 ;;
        --np) NP=$2; shift 2 ;;
        --cache) CACHE=$2; shift 2 ;;
        *) echo "usage: $0 --with-mpi PREFIX [--np N] [--cache DIR]" >&2; exit 2 ;;
    esac
done
[ -n "$PREFIX" ] && [ -x "$PREFIX/bin/mpifort" ] ||
    { echo "error: no PREFIX/bin/mpifort (--with-mpi PREFIX, built with gfortran)" >&2; exit 2; }
PREFIX=$(cd "$PREFIX" && pwd)
for t in "$REF_CC" "$REF_FC" "$REF_RUN" autoreconf; do
    command -v "$t" > /dev/null || { echo "error: $t not found" >&2; exit 2; }
done

# ---- 1. the source, once ----------------------------------------------------------
SRC=$CACHE/src/pnetcdf-$VER
if [ ! -x "$SRC/configure" ]; then
    # shellcheck source=../apt_source.sh
    . "$HERE/../apt_source.sh"
    echo "fetching PnetCDF $VER (Debian source package) into $CACHE/src"
    apt_source "$CACHE/apt" "$CACHE/src" "$CACHE/fetch.log" "pnetcdf=$VER-*" pnetcdf || exit 2
    (cd "$SRC" && autoreconf -fi) > "$CACHE/autoreconf.log" 2>&1 ||
        { tail -20 "$CACHE/autoreconf.log" >&2; exit 2; }
fi

# ---- 2. build with each MPI, once per wrapper ------------------------------------
# Only what the programs need: the library with its bindings and utilities
# (src: ncmpidiff), FLASH-IO and the examples; not the manual pages, the other
# benchmarks or the test folder. All at -O0: gfortran takes minutes over
# PnetCDF's F90 module at -O2, and the MPI-IO underneath, not the compiled
# code, is under test. Our library is a shared object found through the
# wrapper's rpath, so a rebuild of ours needs no rebuild here (the cache key is
# what the wrappers say: paths and flags).
LANGS="C F77 F90"
build() { # build NAME MPICC MPIFORT: sets BDIR
    local name=$1 cc=$2 fc=$3 key
    key=$( ("$cc" -show; "$fc" -show) 2> /dev/null | cksum | cut -d' ' -f1)
    BDIR=$CACHE/build-$name-$key
    [ -f "$BDIR/built" ] && return 0
    rm -rf "$BDIR"
    mkdir -p "$BDIR"
    echo "building PnetCDF and its programs with $cc and $fc in $BDIR"
    (
        cd "$BDIR"
        "$SRC/configure" --disable-cxx --disable-shared MPICC="$cc" MPIF77="$fc" MPIF90="$fc" \
            CFLAGS="-g -O0" FFLAGS="-g -O0" FCFLAGS="-g -O0"
        make -j"$(nproc)" -C src
        make -j"$(nproc)" -C benchmarks/FLASH-IO
        for l in $LANGS; do
            make -j"$(nproc)" -C "examples/$l" tests-local
        done
    ) > "$BDIR/build.log" 2>&1 || { tail -30 "$BDIR/build.log" >&2; return 1; }
    touch "$BDIR/built"
}
build dcfa "$PREFIX/bin/mpicc" "$PREFIX/bin/mpifort"
OURS=$BDIR
build mpich "$REF_CC" "$REF_FC"
REF=$BDIR

# the check programs of examples/LANG, as its Makefile lists them
programs() {
    printf 'print-programs:\n\t@echo $(check_PROGRAMS)\n' |
        make -s -C "$OURS/examples/$1" -f Makefile -f - print-programs
}

# ---- 3. run with each, compare the files -------------------------------------------
WORK=$(mktemp -d "${TMPDIR:-/tmp}/dcfa-pnetcdf.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/dcfa" "$WORK/mpich"
pass=0
fail=0
# run PROG FILE-ARG OUTPUT-FILES...: PROG (its path in the build trees) with both
# MPIs, then ncmpidiff of each output
run() {
    local prog=$1 arg=$2 name f ok=1 why=""
    shift 2
    name=${prog//\//_}
    if ! (cd "$WORK/dcfa" && timeout 300 "$PREFIX/bin/mpirun" -n "$NP" "$OURS/$prog" -q "$arg") \
        > "$WORK/$name.dcfa.out" 2>&1; then
        ok=0; why="fails with DCFA-MPI"
    fi
    if ! (cd "$WORK/mpich" && timeout 300 "$REF_RUN" -n "$NP" "$REF/$prog" -q "$arg") \
        > "$WORK/$name.mpich.out" 2>&1; then
        ok=0; why="${why:+$why, }fails with MPICH"
    fi
    for f in "$@"; do
        [ "$ok" = 1 ] || break
        if ! timeout 300 "$PREFIX/bin/mpirun" -n 1 "$OURS/src/utils/ncmpidiff/ncmpidiff" -q \
            "$WORK/dcfa/$f" "$WORK/mpich/$f" > "$WORK/$name.diff" 2>&1; then
            ok=0; why="$f differs from MPICH's"
        fi
    done
    if [ "$ok" = 1 ]; then
        pass=$((pass + 1))
        if [ $# -gt 0 ]; then
            echo "PASS  $prog ($*: the same as with MPICH)"
        else
            echo "PASS  $prog (runs with both)"
        fi
    else
        fail=$((fail + 1)); echo "FAIL  $prog: $why"
        cat "$WORK/$name".*.out "$WORK/$name.diff" 2> /dev/null | tail -20
    fi
    # put_vara's file stays for get_vara, which reads it
    [ "${prog##*/}" = put_vara ] || rm -f "$WORK"/dcfa/* "$WORK"/mpich/*
}
run benchmarks/FLASH-IO/flash_benchmark_io flash_ flash_ncmpi_chk_0000.nc \
    flash_ncmpi_plt_cnt_0000.nc flash_ncmpi_plt_crn_0000.nc
for l in $LANGS; do
    for e in $(programs "$l"); do
        if [ "$e" = get_vara ]; then
            run "examples/$l/$e" put_vara.nc
        else
            run "examples/$l/$e" "$e.nc" "$e.nc"
        fi
    done
done
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
