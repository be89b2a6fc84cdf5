#!/bin/bash
# bench/tools/path_count.sh BUILD [ITER]
#
# Instructions per call on the point-to-point paths of the library built in
# BUILD (a CMake build tree: libdcfampi.so and mpirun), counted with callgrind
# on both ranks of bench/tools/path_count.c (docs/bench.md, "Counting
# instructions"). Deterministic: run it on two builds to compare them, however
# loaded the machine is. ITER (default 200) rounds of each phase; prints one
# line per measured call: rank, phase, call, instructions per call.
set -eu
if [ $# -lt 1 ]; then
    echo "usage: $0 BUILD [ITER]" >&2
    exit 2
fi
build=$(cd "$1" && pwd)
iter=${2:-200}
src=$(cd "$(dirname "$0")/../.." && pwd)
out=$(mktemp -d "${TMPDIR:-/tmp}/path_count.XXXXXX")
trap 'rm -rf "$out"' EXIT
gcc -O2 -g -I"$src/include" -o "$out/path_count" "$src/bench/tools/path_count.c" \
    -L"$build" -ldcfampi -Wl,-rpath,"$build"

# phase, then the environment of its run
run() {
    local phase=$1
    shift
    env DCFA_SPIN_US=0 "$@" "$build/mpirun" -n 2 valgrind --tool=callgrind \
        --callgrind-out-file="$out/cg.$phase.%q{PMI_RANK}" "$out/path_count" "$phase" "$iter" \
        2> "$out/log.$phase" || { cat "$out/log.$phase" >&2; exit 1; }
}
run eager
run read DCFA_RNDV_MODE=read DCFA_CMA_MIN=0
run write DCFA_CMA_MIN=0

# calls of each wrapper per round of its phase
declare -A per=([m_isend8]=64 [m_irecv8]=64 [m_waitall_send]=64 [m_waitall_recv]=64)
for phase in eager read write; do
    for rank in 0 1; do
        callgrind_annotate --inclusive=yes --threshold=100 "$out/cg.$phase.$rank" 2> /dev/null |
            awk -v phase="$phase" -v rank="$rank" -v iter="$iter" \
                -v per="$(for k in "${!per[@]}"; do printf '%s=%s,' "$k" "${per[$k]}"; done)" '
                BEGIN { n = split(per, kv, ","); for (i = 1; i <= n; i++) { split(kv[i], p, "="); m[p[1]] = p[2] } }
                match($0, /:m_[a-z0-9_]+ \[/) {
                    fn = substr($0, RSTART + 1, RLENGTH - 3)
                    ir = $1; gsub(",", "", ir)
                    k = (fn in m) ? m[fn] : 1
                    printf "rank %s %-6s %-16s %8.1f\n", rank, phase, fn, ir / (iter * k)
                }'
    done
done
