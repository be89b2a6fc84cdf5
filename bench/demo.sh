#!/usr/bin/env bash
# The main demo: build and install DCFA-MPI, then run the short benchmark
# (bench/run --quick) against MPICH and Open MPI built from the same sources,
# print the summary table and say where the plots are. Run as root on Debian
# 12: missing packages are installed with apt-get. About 2-4 minutes.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
export DEBIAN_FRONTEND=noninteractive

need=()
for p in build-essential cmake pkg-config python3 python3-matplotlib mpich libmpich-dev \
         openmpi-bin libopenmpi-dev; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
    echo "installing: ${need[*]}"
    apt-get update -q && apt-get install -y -q "${need[@]}" < /dev/null
fi

PREFIX="$ROOT/build/prefix"
cmake -S "$ROOT" -B "$ROOT/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo > /dev/null
cmake --build "$ROOT/build" -j2 > /dev/null
cmake --install "$ROOT/build" --prefix "$PREFIX" > /dev/null
echo "DCFA-MPI installed in $PREFIX"

exec /usr/bin/python3 "$ROOT/bench/run" --quick --ours "$PREFIX" --out "$ROOT/bench/out" "$@"
