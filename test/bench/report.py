#!/usr/bin/python3
"""bench/run's report from a made-up run of three libraries and our variants
(no MPI job): the plots exist and every legend tells its lines apart, the
variant columns are explained, a library's missing feature (spawn) is one
"not supported" line and not a failure, each failure names its library and
cause, the sweep advice is a sentence; then --replot of the results gives the
same.  Skipped (77) without matplotlib.
    test/bench/report.py WORKDIR"""
import contextlib
import importlib.machinery
import importlib.util
import io
import os
import shutil
import subprocess
import sys

try:
    import matplotlib  # noqa: F401
except ImportError:
    print("report.py: SKIP, no matplotlib for", sys.executable)
    sys.exit(77)

HERE = os.path.dirname(os.path.abspath(__file__))
RUN = os.path.join(HERE, "..", "..", "bench", "run")
loader = importlib.machinery.SourceFileLoader("bench_run", RUN)
spec = importlib.util.spec_from_loader("bench_run", loader)
br = importlib.util.module_from_spec(spec)
loader.exec_module(br)

work = sys.argv[1]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
LIBS = ["ours", "mpich", "openmpi"]
SPEED = {"ours": 1.0, "mpich": 1.3, "openmpi": 1.2}
runs = []


def add(lib, mid, prog, recs, rnd, variant=None, error=None, rc=0):
    r = {"lib": lib, "id": mid, "prog": prog, "round": rnd, "nranks": 2, "env": {}, "rc": rc,
         "records": recs, "wall_s": 0.5, "ok": error is None}
    if error:
        r["error"] = error
    if variant:
        r["variant"] = variant
    unsup = br.unsupported_of(r)
    if unsup:
        r["unsupported"] = unsup
    runs.append(r)


for rnd in range(3):
    for lib in LIBS:
        k = SPEED[lib] * (1 + 0.05 * rnd)
        add(lib, "pingpong", "pingpong", [{"bench": "pingpong", "bytes": b, "lat_us_med": k * (0.2 + b / 5e3)}
                                          for b in (0, 8, 1024, 65536)], rnd)
        add(lib, "bw", "bw", [{"bench": b, "bytes": s, "buffers": m, "mbps_med": s / k / (2 if m == "multiple" else 1)}
                              for b in ("bw", "bibw") for s in (1024, 65536, 4 << 20)
                              for m in ("single", "multiple")], rnd)
        small = [{"bench": "coll", "coll": "barrier", "bytes": 0, "ranks": n, "timing": "call", "us_med": k * n}
                 for n in (2, 4, 8)]
        small += [{"bench": "coll", "coll": c, "bytes": s, "ranks": n, "timing": "call", "us_med": k * n * (1 + s / 1e3)}
                  for c in ("bcast", "reduce", "allreduce", "allgather", "alltoall") for s in (4, 8, 1024)
                  for n in (2, 4, 8)]
        add(lib, "coll small n=2", "coll", small, rnd)
        add(lib, "coll n=2", "coll", [{"bench": "coll", "coll": c, "bytes": s, "ranks": n, "timing": "run",
                                       "us_med": k * n * s / 1e3} for c in ("bcast", "allreduce", "alltoall")
                                      for s in (8192, 1 << 20) for n in (2, 4, 8)], rnd)
        add(lib, "stencil5 n=2", "stencil5", [{"bench": "stencil5", "ranks": n, "threads": t, "time_ms_med": k * 100 / n}
                                              for n in (1, 2) for t in (1, 2)], rnd)
        add(lib, "ring n=64", "ring", [{"bench": "ring", "ranks": 64, "steps": 1000, "step_us": k * 9000}], rnd)
        add(lib, "spawn pt2pt world", "spawn", [{"bench": "spawn", "mode": "world", "comm": "world", "bytes": 8,
                                                 "lat_us_med": k}], rnd)
        if lib == "mpich":  # reports it cannot spawn once; its other spawn measurements are skipped
            if rnd == 0:
                add(lib, "spawn latency n=1", "spawn", [{"bench": "spawn", "mode": "latency", "children": 1,
                                                         "unsupported": 1, "error": "MPI_Comm_spawn: Error in spawn call"}],
                    rnd, error="MPI_Comm_spawn: Error in spawn call")
        else:
            add(lib, "spawn latency n=1", "spawn", [{"bench": "spawn", "mode": "latency", "children": 1,
                                                     "spawn_ms_med": k * 5, "ready_ms_med": k * 8}], rnd)
            if lib == "openmpi" and rnd == 1:
                add(lib, "spawn latency n=8", "spawn", [], rnd, error="timeout after 30s", rc=None)
        if lib == "openmpi" and rnd < 2:  # a timeout keeps a measurement out of the later rounds
            add(lib, "halo n=2", "halo", [], rnd, rc=None,
                error="timeout after 60s" if rnd == 0 else "skipped: timed out in an earlier round")
    for v in ("noshm", "cma", "staged"):
        add("ours", f"x {v}", "coll" if v == "noshm" else "bw",
            [{"bench": "coll", "coll": "allreduce", "bytes": s, "ranks": 2, "timing": "call", "us_med": 2.0}
             for s in (4, 8, 1024)] if v == "noshm" else
            [{"bench": "bw", "bytes": s, "buffers": "single", "mbps_med": s / 0.9} for s in (1024, 65536, 4 << 20)],
            rnd, variant=v)
    add("ours", "overlap", "overlap", [{"bench": "overlap", "bytes": 65536, "ranks": 2, "tests": 0,
                                        "overlap_pct": 50, "t_comm_us": 10}], rnd, variant="async")

libs = [br.Lib(n, "/nonexistent/mpicc", ["mpirun"], n) for n in LIBS]
lacks = {"mpich": {"spawn": "MPI_Comm_spawn: Error in spawn call"}}
skipped = [{"lib": "mpich", "id": f"spawn latency n={n}", "needs": "spawn", "round": r} for n in (2, 4, 8)
           for r in range(3)]
series, base = br.aggregate(runs, libs)
br.mark_lacking(series, lacks)
sweeps = {"eager": {"8192": {"256": 0.3, "8192": 2.0}, "16384": {"256": 0.3, "8192": 0.5}},
          "credit": {"64 B x 256": {"bw 65536": 5000.0}, "64 B x 512": {"bw 65536": 6000.0}},
          "creditsync": {"2": {"us 512": 0.2}, "384": {"us 512": 0.1}}}
meta = dict(br.machine_meta(), mode="quick", rounds=3, timeout_s=60, load_start=0, load_end=0, wall_s=1.0,
            libs={n: {"mpicc": "mpicc", "launcher": "mpirun", "version": n} for n in LIBS}, base=base,
            notes=[], lacks=lacks, skipped=skipped,
            defaults={"DCFA_EAGER_LIMIT": "16384", "DCFA_MAX_CREDIT": "-1", "DCFA_BLOCK_SIZE": "64",
                      "DCFA_CREDIT_SYNC_LIMIT": "2"})

bad = []


def expect(cond, what):
    if not cond:
        bad.append(what)


def check(console, out):
    want = {"latency.png", "bandwidth.png", "ratios.png", "coll.png", "coll_ratios.png", "coll_small.png",
            "coll_small_ratios.png", "apps.png", "spawn.png", "overlap.png"}
    made = {f for f in os.listdir(out) if f.endswith(".png")}
    expect(want <= made, f"plots missing: {sorted(want - made)}")
    summary = open(os.path.join(out, "summary.md")).read()
    for text in ("look alike", "plotting failed"):
        hits = [l for l in console.splitlines() if text in l]
        expect(not hits and text not in summary, f"'{text}' in the report ({len(hits)} lines), e.g. "
               + "; ".join(hits[:2]))
    for v, env in (("ours+noshm", "DCFA_COLL_SHM=0"), ("ours+cma", "DCFA_CMA_MIN=0"),
                   ("ours+staged", "DCFA_CMA_MIN=1073741824"), ("ours+async", "DCFA_ASYNC_PROGRESS=1")):
        expect(f"- {v}: {env}" in summary, f"summary does not explain the column {v}")
    expect("  ours+noshm: DCFA_COLL_SHM=0" in console, "console does not explain the column ours+noshm")
    expect("not supported: mpich cannot spawn: MPI_Comm_spawn: Error in spawn call (skipped after the first "
           "report: spawn latency n=2, spawn latency n=4, spawn latency n=8)" in console,
           "console: no one line for MPICH's spawn")
    expect("2 failed, 1 reported a feature the library does not have; not run: 9 for that reason; 1 after a "
           "timeout in an earlier round." in console, "console: the count of failed, unsupported and skipped runs")
    expect("failed: openmpi `halo n=2` round 1: timeout after 60s; not run in round 2" in console,
           "console: a timeout and the rounds it kept the measurement out of")
    expect("failed: openmpi `spawn latency n=8` round 2: timeout after 30s; known cause: Open MPI 4.1's MPI_Comm_spawn "
           "hangs now and then" in console, "console: Open MPI's spawn timeout not attributed")
    expect("failed: mpich" not in console, "console: MPICH's spawn counted as a failure")
    expect("The tunable sweeps suggest, for 2 ranks on this machine: DCFA_EAGER_LIMIT=16384 (default 16384), "
           "a receive ring of 512 blocks of 64 bytes: DCFA_BLOCK_SIZE=64 (default 64) with DCFA_MAX_CREDIT=512 "
           "(default auto) and DCFA_CREDIT_SYNC_LIMIT=384 (default 2)." in console, "console: the sweep sentence")
    expect("{'" not in console, "console: a raw Python dict")
    for s in ("### bw/multiple", "### bibw/multiple", "### small_allreduce/n8", "### small_barrier", "### ring"):
        expect(s in summary, f"summary: no section {s}")
    row = next((l for l in summary.splitlines() if l.startswith("| MPI_Comm_spawn call") or
                l.startswith("| 1 |") and "cannot spawn" in l), "")
    expect("cannot spawn" in row, "summary: MPICH's spawn cells do not say 'cannot spawn'")


buf = io.StringIO()
with contextlib.redirect_stdout(buf):
    br.report(work, meta, series, base, LIBS, sweeps, runs)
check(buf.getvalue(), work)
replot = subprocess.run([sys.executable, RUN, "--replot", "--out", work], capture_output=True, text=True)
expect(replot.returncode == 0, f"--replot: exit {replot.returncode}: {replot.stderr[-500:]}")
check(replot.stdout, work)

# the measurements each mode runs: the ring only when named in quick mode, always in full
def listed(*args):
    r = subprocess.run([sys.executable, RUN, "--list", "--out", work] + list(args), capture_output=True, text=True)
    expect(r.returncode == 0, f"--list {args}: exit {r.returncode}: {r.stderr[-300:]}")
    return [l.split(":")[0] for l in r.stdout.splitlines()]


quick, full, ring = listed(), listed("--full"), listed("--only", "ring")
expect("coll small n=8" in quick and "bw" in quick and "ring n=64" not in quick, f"quick plan: {quick}")
expect("ring n=64" in full and "coll n=8 noshm" in full, f"full plan: {full}")
expect(ring == ["ring n=64"], f"--only ring: {ring}")
expect(any(m.startswith("footprint_curve") for m in listed("--only", "footprint_curve")), "footprint curve")

# the check itself: two lines of one colour and marker in a legend are reported
import matplotlib.pyplot as plt  # noqa: E402
fig, ax = plt.subplots()
ax.plot([1, 2], [1, 2], color="tab:blue", marker="o", ls="-", label="n2")
ax.plot([1, 2], [2, 3], color="tab:blue", marker="o", ls="--", label="n4")
ax.legend()
expect(len(br.legend_clashes(fig)) == 1, "legend_clashes misses two lines drawn alike")

for b in bad:
    print("report.py:", b)
print("report.py:", "FAILED" if bad else "plots, legends, variant columns, failures and sweep advice as documented")
sys.exit(1 if bad else 0)
