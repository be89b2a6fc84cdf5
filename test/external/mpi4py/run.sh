#!/usr/bin/env bash
# Run mpi4py's test suite against an installed MPI.  See docs/testing.md,
# "The mpi4py test suite".
#
#   test/external/mpi4py/run.sh --with-mpi PREFIX [options]
#
# mpi4py 4.1.x is built from its PyPI source distribution with PREFIX/bin/mpicc
# into a virtual environment (cached under ~/.cache/dcfa-mpi/mpi4py, one per
# MPI prefix and mpi.h), and the sdist's test/main.py runs under
# PREFIX/bin/mpirun (or mpiexec) at each rank count, one test module per
# launch, each under a timeout.  Each rank writes its own verbose unittest
# report; parse.py sums them, applies the expected-failure list (xfail.txt)
# and prints per rank count the tests run, failures, errors, skips, then one
# line "N passed, N failed".
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
MPI4PY_SPEC=${DCFA_MPI4PY_SPEC:-mpi4py==4.1.*}
CACHE=${DCFA_MPI4PY_CACHE:-${HOME:-/root}/.cache/dcfa-mpi/mpi4py}
PYTHON=${DCFA_PYTHON:-}
PREFIX=""
MPIRUN=""
NPS="1 2 3"
TIMEOUT=300
TIME_BUDGET=0
XFAIL_FILE="$HERE/xfail.txt"
OUT=""
REPORT_ONLY=0
EXTRA=()

usage() {
    cat <<EOF
usage: $0 --with-mpi PREFIX [options] [-- main.py options]
  --with-mpi PREFIX   MPI installation to test (PREFIX/bin/mpicc builds mpi4py)
  --mpirun CMD        launcher (default PREFIX/bin/mpirun, else PREFIX/bin/mpiexec)
  --np "N ..."        rank counts to run (default "$NPS"; more ranks than cores
                      is oversubscription)
  --timeout SEC       timeout of one test module at one rank count (default $TIMEOUT)
  --time-budget SEC   start no further rank count after SEC seconds (they count as failed)
  --xfail FILE        expected failures (default $XFAIL_FILE)
  --out DIR           per-rank reports (default CACHE/out-<tag>)
  --cache DIR         sdist and virtual environments (default $CACHE)
  --python PY         the Python used for the venv (default /usr/bin/python3)
  --report-only       always exit 0 once the suite could run
Options after -- go to mpi4py's test/main.py (e.g. -- -i test_comm).
EOF
}

while [ $# -gt 0 ]; do
    case "$1" in
        --with-mpi) PREFIX=$2; shift 2 ;;
        --with-mpi=*) PREFIX=${1#*=}; shift ;;
        --mpirun) MPIRUN=$2; shift 2 ;;
        --np) NPS=$2; shift 2 ;;
        --timeout) TIMEOUT=$2; shift 2 ;;
        --time-budget) TIME_BUDGET=$2; shift 2 ;;
        --xfail) XFAIL_FILE=$2; shift 2 ;;
        --out) OUT=$2; shift 2 ;;
        --cache) CACHE=$2; shift 2 ;;
        --python) PYTHON=$2; shift 2 ;;
        --report-only) REPORT_ONLY=1; shift ;;
        -h|--help) usage; exit 0 ;;
        --) shift; EXTRA=("$@"); break ;;
        *) echo "unknown argument: $1" >&2; usage >&2; exit 2 ;;
    esac
done
[ -n "$PREFIX" ] || { usage >&2; exit 2; }
PREFIX=$(cd "$PREFIX" && pwd)
[ -x "$PREFIX/bin/mpicc" ] || { echo "no $PREFIX/bin/mpicc" >&2; exit 2; }
if [ -z "$MPIRUN" ]; then
    if [ -x "$PREFIX/bin/mpirun" ]; then MPIRUN=$PREFIX/bin/mpirun; else MPIRUN=$PREFIX/bin/mpiexec; fi
fi
# Debian's Python: python3-venv makes the environment, python3-dev has the
# headers mpi4py's extension module needs.
if [ -z "$PYTHON" ]; then
    if [ -x /usr/bin/python3 ]; then PYTHON=/usr/bin/python3; else PYTHON=$(command -v python3); fi
fi
mkdir -p "$CACHE"
T0=$(date +%s)
elapsed() { echo $(($(date +%s) - T0)); }

# ---- 1. the source distribution (once) ----------------------------------------
sdist=$(ls "$CACHE"/mpi4py-4.1.*.tar.gz 2> /dev/null | sort -V | tail -1 || true)
if [ -z "$sdist" ]; then
    echo "fetching the $MPI4PY_SPEC source distribution"
    # --no-binary mpi4py: its sdist (the build tools pip needs to read its
    # metadata may come as wheels)
    if ! "$PYTHON" -m pip download --no-binary mpi4py --no-deps "$MPI4PY_SPEC" -d "$CACHE" \
        > "$CACHE/download.log" 2>&1; then
        tail -20 "$CACHE/download.log" >&2
        echo "could not download $MPI4PY_SPEC (see $CACHE/download.log)" >&2
        exit 2
    fi
    sdist=$(ls "$CACHE"/mpi4py-4.1.*.tar.gz | sort -V | tail -1)
fi
version=$(basename "$sdist" .tar.gz)
src=$CACHE/$version
if [ ! -f "$src/test/main.py" ]; then
    rm -rf "$src"
    tar -xzf "$sdist" -C "$CACHE"
fi

# ---- 2. a virtual environment with mpi4py built by this MPI's mpicc ----------------
hdr=$(ls "$PREFIX"/include/mpi.h 2> /dev/null || "$PREFIX/bin/mpicc" -show 2> /dev/null |
    tr ' ' '\n' | sed -n 's/^-I//p' | while read -r d; do [ -f "$d/mpi.h" ] && echo "$d/mpi.h"; done | head -1)
tag=$( { echo "$PREFIX $version $("$PYTHON" -V 2>&1)"; cat "$hdr" 2> /dev/null || true; } |
    sha1sum | cut -c1-12)
venv=$CACHE/venv-$tag
if [ ! -f "$venv/.built" ]; then
    echo "building $version with $PREFIX/bin/mpicc into $venv"
    rm -rf "$venv"
    # -O0 (DCFA_MPI4PY_CFLAGS): the generated MPI.c is huge and its speed does
    # not matter to the tests; optimized, it takes minutes more to compile
    if ! "$PYTHON" -m venv "$venv" > "$CACHE/venv-$tag.log" 2>&1 ||
        ! MPICC=$PREFIX/bin/mpicc CFLAGS=${DCFA_MPI4PY_CFLAGS:--O0} "$venv/bin/python" -m pip \
            install --no-binary mpi4py --no-deps "$sdist" >> "$CACHE/venv-$tag.log" 2>&1; then
        tail -30 "$CACHE/venv-$tag.log" >&2
        echo "could not build mpi4py (see $CACHE/venv-$tag.log; needs python3-venv python3-dev)" >&2
        exit 2
    fi
    # mpi4py probes every MPI function with a link test when it does not know the
    # MPI; a probe that fails (seen on a machine under heavy load) silently turns
    # the function into a NotImplementedError stub. A complete build references
    # at least as many MPI functions as one against MPICH 4.0 (395): check it.
    so=$(ls "$venv"/lib/python3*/site-packages/mpi4py/MPI.*.so 2> /dev/null | head -1)
    nsym=$(nm -D "$so" 2> /dev/null | grep -c ' U MPI_' || true)
    if [ "$nsym" -lt "${DCFA_MPI4PY_MIN_SYMBOLS:-390}" ]; then
        echo "mpi4py was built with only $nsym MPI functions (its configure probes failed);" \
            "remove $venv and run again" >&2
        exit 2
    fi
    touch "$venv/.built"
fi
echo "mpi4py: $version in $venv ($(elapsed) s)"

# ---- 3. the suite at each rank count, one module at a time ------------------------
# One launch per test module, each under its own timeout: a module that hangs
# or crashes costs its own results only (and counts as a failure). Modules
# listed as "skip-module NAME # reason" in the xfail file are not run.
OUT=${OUT:-$CACHE/out-$tag}
rm -rf "$OUT"
mkdir -p "$OUT"
skip=$(sed -n 's/^skip-module[[:space:]]\{1,\}\([A-Za-z0-9_]*\).*/\1/p' "$XFAIL_FILE" 2> /dev/null || true)
modules=()
for f in "$src"/test/test_*.py; do
    m=$(basename "$f" .py)
    grep -qx "$m" <<< "$skip" || modules+=("$m")
done
runs=()
for np in $NPS; do
    dir=$OUT/np$np
    mkdir -p "$dir"
    if [ "$TIME_BUDGET" -gt 0 ] && [ "$(elapsed)" -ge "$TIME_BUDGET" ]; then
        echo "np=$np: not started (time budget of $TIME_BUDGET s used)" | tee "$dir/notrun"
        runs+=("$np")
        continue
    fi
    t=$(date +%s)
    for m in "${modules[@]}"; do
        mdir=$dir/$m
        mkdir -p "$mdir"
        # every rank writes its verbose report to its own file (PMI_RANK is set by
        # our mpirun and by MPICH's hydra)
        set +e
        (cd "$src/test" && MPIEXEC_TIMEOUT=$TIMEOUT timeout -k 10 $((TIMEOUT + 20)) \
            "$MPIRUN" -n "$np" /bin/sh -c 'd=$1; shift; exec "$0" main.py -v --no-builddir "$@" > "$d/out.$PMI_RANK" 2> "$d/rank.$PMI_RANK"' \
            "$venv/bin/python" "$mdir" -i "^$m\\.py\$" ${EXTRA[@]+"${EXTRA[@]}"} > "$mdir/mpirun.out" 2>&1)
        echo $? > "$mdir/status"
        set -e
    done
    echo $(($(date +%s) - t)) > "$dir/seconds"
    runs+=("$np")
done

set +e
"$PYTHON" "$HERE/parse.py" --xfail "$XFAIL_FILE" "$OUT" "${runs[@]}"
rc=$?
set -e
echo "mpi4py suite: $(elapsed) s in all; reports in $OUT"
[ "$REPORT_ONLY" = 1 ] && exit 0
exit "$rc"
