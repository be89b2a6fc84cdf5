#!/usr/bin/env bash
# The main demo: build and install DCFA-MPI, then run the short benchmark
# (bench/run --quick) against MPICH and Open MPI built from the same sources,
# print the summary table and say where the plots are. Run as root on Debian
# 12: missing packages are installed with apt-get (without their recommended
# packages). Duration: see docs/bench.md (measured, not guessed); the last line
# says how long this run took.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
export DEBIAN_FRONTEND=noninteractive
t0=$SECONDS

need=()
for p in build-essential cmake pkg-config python3 python3-matplotlib mpich libmpich-dev \
         openmpi-bin libopenmpi-dev; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
    echo "installing: ${need[*]}"
    apt-get update -q && apt-get install -y -q --no-install-recommends "${need[@]}" < /dev/null
fi

PREFIX="$ROOT/build/prefix"
echo "building DCFA-MPI (cmake, $(nproc) jobs)"
cmake -S "$ROOT" -B "$ROOT/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo > /dev/null
cmake --build "$ROOT/build" -j"$(nproc)" > /dev/null
cmake --install "$ROOT/build" --prefix "$PREFIX" > /dev/null
echo "DCFA-MPI installed in $PREFIX ($((SECONDS - t0)) s so far); running bench/run --quick"

rc=0
/usr/bin/python3 "$ROOT/bench/run" --quick --ours "$PREFIX" --out "$ROOT/bench/out" "$@" || rc=$?
el=$((SECONDS - t0))
echo "demo.sh: done in $((el / 60)) min $((el % 60)) s (packages, build and benchmark)"
exit $rc
