#!/usr/bin/env bash
# The mpi_f08 binding's cost (issue 36, docs/fortran.md "Speed"): the same
# ping-pong and MPI_Allreduce loops from Fortran (use mpi_f08) and from C, two
# ranks, at 8 B and 1 MiB, the two programs interleaved round by round; prints
# each round and then the medians and the ratio Fortran / C per measurement.
#   bench/fortran/run.sh [PREFIX_OR_BUILD_DIR] [ROUNDS]
# PREFIX_OR_BUILD_DIR holds bin/mpicc, bin/mpifort and bin/mpirun (default:
# <repo>/build). A quiet machine gives figures worth quoting.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
P=${1:-$ROOT/build}
ROUNDS=${2:-7}
MPIRUN=$P/bin/mpirun
[ -x "$MPIRUN" ] || MPIRUN=$P/mpirun   # a build tree: mpirun at the top
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
"$P/bin/mpifort" -O2 -o "$W/f08" "$ROOT/bench/fortran/f08_speed.f90"
"$P/bin/mpicc" -O2 -o "$W/c" "$ROOT/bench/fortran/f08_speed.c"
# SIZE ITERS: enough iterations that one measurement takes about a second
cases=("8 100000" "1048576 1000")
for r in $(seq "$ROUNDS"); do
    for c in "${cases[@]}"; do
        for prog in f08 c; do
            # shellcheck disable=SC2086
            timeout 120 "$MPIRUN" -n 2 "$W/$prog" $c | sed "s/^/$prog /" >> "$W/out"
        done
    done
    echo "round $r of $ROUNDS done" >&2
done
python3 - "$W/out" <<'EOF'
import statistics, sys
vals = {}
for line in open(sys.argv[1]):
    lang, what, size, us = line.split()
    vals.setdefault((what, int(size), lang), []).append(float(us))
print("%-10s %8s %12s %12s %8s" % ("call", "bytes", "f08 us", "C us", "f08/C"))
for (what, size) in sorted({(w, s) for (w, s, _) in vals}):
    f = statistics.median(vals[(what, size, "f08")])
    c = statistics.median(vals[(what, size, "c")])
    print("%-10s %8d %12.3f %12.3f %8.3f" % (what, size, f, c, f / c))
EOF
