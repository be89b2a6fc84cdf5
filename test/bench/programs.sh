#!/usr/bin/env bash
# The benchmark programs bench/run measures with, built with our mpicc and run
# with our mpirun at small sizes: bw in both buffer modes with a window of 64
# at every size, coll timed call by call (the small-collective series: six
# collectives, MPI_CHAR) and back to back, and the token ring; checks the
# JSON lines each prints (docs/bench.md); then bench/run runs one measurement.
#   test/bench/programs.sh MPICC MPIRUN WORKDIR
set -euo pipefail
mpicc=$1 mpirun=$2 work=$3
src=$(cd "$(dirname "$0")/../../bench/src" && pwd)
rm -rf "$work"
mkdir -p "$work"
for p in bw coll ring; do
    "$mpicc" -std=gnu11 -O2 -o "$work/$p" "$src/$p.c" -lm
done
run() { # run N PROG ARGS...: the JSON lines of rank 0, under a timeout
    local n=$1
    shift
    timeout -k 5 120 "$mpirun" -n "$n" "$@" | grep '^{'
}
run 2 "$work/bw" --sizes 1,65536 --buffers both --reps 2 --warmup 1 --iters 4 > "$work/bw.json"
run 2 "$work/bw" --sizes 4096 --cap 8192 --mode uni --reps 2 --warmup 0 --iters 2 > "$work/bw_cap.json"
run 2 "$work/coll" --timing call --dtype char --colls barrier,bcast,reduce,allreduce,allgather,alltoall \
    --sizes 4,1024 --reps 3 --warmup 1 --rep-ms 2 > "$work/small.json"
run 3 "$work/coll" --colls barrier,bcast,reduce,allreduce,allgather,alltoall --sizes 8,4096 --reps 3 \
    --warmup 1 --rep-ms 2 > "$work/run.json"
run 4 "$work/ring" --steps 50 > "$work/ring.json"
# bench/run itself, one measurement and its variant, one round, on this tree
prefix=$(dirname "$(dirname "$mpicc")")
timeout -k 5 300 /usr/bin/python3 "$src/../run" --libs ours --ours "$prefix" --only "coll small n=2" \
    --rounds 1 --no-sweeps --out "$work/run" > "$work/run.out" 2>&1 || { cat "$work/run.out"; exit 1; }
grep -q "^2 runs: 2 ok, 0 failed" "$work/run.out" || { cat "$work/run.out"; exit 1; }
exec python3 - "$work" <<'PY'
import json, sys
w = sys.argv[1]
def lines(name):
    return [json.loads(l) for l in open(f"{w}/{name}.json")]
bad = []
def expect(cond, what):
    if not cond:
        bad.append(what)

bw = lines("bw")
got = sorted((r["bench"], r["bytes"], r["buffers"]) for r in bw)
want = sorted((b, s, m) for b in ("bw", "bibw") for s in (1, 65536) for m in ("single", "multiple"))
expect(got == want, f"bw lines {got}, expected {want}")
expect(all(r["window"] == 64 and r["mbps_med"] > 0 for r in bw), "bw: a window other than 64 or no bandwidth")
cap = lines("bw_cap")
expect(len(cap) == 1 and cap[0]["window"] == 2 and cap[0]["buffers"] == "single", f"bw --cap 8192: {cap}")

small = lines("small")
colls = ["barrier"] + [c for c in ("bcast", "reduce", "allreduce", "allgather", "alltoall") for _ in (4, 1024)]
expect(sorted(r["coll"] for r in small) == sorted(colls), f"small series: {[r['coll'] for r in small]}")
for r in small:
    expect(r["timing"] == "call" and r["us_med"] > 0 and r["avg_us_med"] <= r["us_med"] * 1.0001,
           f"small series line {r}")
    if r["coll"] in ("reduce", "allreduce"):
        # MPI_CHAR, or MPI_INT8_T with the library's refusal quoted
        expect(r["dtype"] == "char" or (r["dtype"] == "int8" and "MPI_CHAR" in r.get("refused", "")),
               f"reduction type {r}")
    if r["coll"] != "barrier":
        expect(r["bytes"] in (4, 1024), f"size {r}")
run = lines("run")
expect(len(run) == 11 and all(r["timing"] == "run" and r["ranks"] == 3 for r in run), f"run timing: {run}")
expect(all(r["bytes"] % 8 == 0 for r in run if r["coll"] in ("reduce", "allreduce")), "double reductions")
ring = lines("ring")
expect(len(ring) == 1 and ring[0]["steps"] == 50 and ring[0]["ranks"] == 4 and ring[0]["step_us"] > 0,
       f"ring: {ring}")
for b in bad:
    print("programs.sh:", b)
print("programs.sh:", "FAILED" if bad else "bw, coll (call and run timing) and ring print what bench/run reads")
sys.exit(1 if bad else 0)
PY
