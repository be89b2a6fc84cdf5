#!/bin/bash
# Isolation bench, one host or two (docs/bench.md "Isolation"): latency (pingpong), bandwidth
# (bw) at 8 B-4 MiB and the time to the first message to a new peer (firstmsg), 2 ranks, for
#   shm        the normal path between ranks of one node (one host)
#   ofi        the normal path between hosts, libfabric tcp;ofi_rxm (HOSTS)
#   sock_self  sock, each process makes its own connections (127.0.0.1; one host)
#   sock_daemon  sock, the daemon hands the socket pairs over, no confinement
#   iso_net    mpirun --isolate net: the same handed-over sockets, ranks confined (direct)
#   iso_sec    mpirun --isolate seccomp: the same, under the filter
#   relay      mpirun --isolate net --relay: the daemon forwards the bytes
# ROUNDS rounds (default 3), the configurations interleaved in each; the table gives each
# figure's median over the rounds and each ratio's median over the rounds of the ratio within
# a round (with its range). Usage: bench/tools/isolation.sh BUILD_DIR [OUT_DIR]
# With HOSTS=dcfa-h1,dcfa-h2 (the test hosts, brought up by test/hosts/hosts.sh up 2, as root)
# one rank runs on each host, started through test/hosts/rsh: the handed-over sockets are
# then TCP connections the two daemons made, and the relay passes through both daemons.
set -eu
build=$(cd "${1:?usage: isolation.sh BUILD_DIR [OUT_DIR]}" && pwd)
out=${2:-bench/out/isolation}
rounds=${ROUNDS:-3}
sizes=${SIZES:-8,64,1024,8192,65536,524288,4194304}
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
where=(-n 2)
cfgs="shm sock_self sock_daemon iso_net iso_sec relay"
if [ -n "${HOSTS:-}" ]; then
    where=(-hosts "$HOSTS" -ppn 1 -n 2 --bind-to none)
    cfgs="ofi sock_daemon iso_net iso_sec relay" # sock_self: 127.0.0.1, one node only
    export DCFA_RSH="$here/../../test/hosts/rsh" FI_PROVIDER="tcp;ofi_rxm" FI_TCP_IFACE=eth0
fi
for p in pingpong bw firstmsg; do
    "$build/bin/mpicc" -O2 -o "$out/$p" "$here/../src/$p.c"
done
run() { # config program args...
    local cfg=$1
    shift
    local env=() opt=()
    case $cfg in
    shm) ;;
    ofi) env=(DCFA_FABRICS=ofi) ;;
    sock_self) env=(DCFA_FABRICS=sock DCFA_SOCK_CONNECT=self) ;;
    sock_daemon) env=(DCFA_FABRICS=sock DCFA_SOCK_CONNECT=daemon) ;;
    iso_net) env=(DCFA_FABRICS=sock) opt=(--isolate net) ;;
    iso_sec) env=(DCFA_FABRICS=sock) opt=(--isolate seccomp) ;;
    relay) env=(DCFA_FABRICS=sock) opt=(--isolate net --relay) ;;
    esac
    env "${env[@]}" timeout 600 "$build/mpirun" "${opt[@]}" "${where[@]}" "$@" |
        sed "s/^{/{\"config\":\"$cfg\",\"round\":$round,/"
}
: >"$out/results.jsonl"
for round in $(seq 1 "$rounds"); do
    for cfg in $cfgs; do
        run $cfg "$out/pingpong" --sizes "$sizes" --max-ms 300 >>"$out/results.jsonl"
        run $cfg "$out/bw" --mode uni --sizes "$sizes" --max-ms 300 >>"$out/results.jsonl"
        run $cfg "$out/firstmsg" --reps 50 >>"$out/results.jsonl"
    done
done
python3 - "$out/results.jsonl" "$cfgs" <<'PY' | tee "$out/table.md"
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith('{')]
cfgs = sys.argv[2].split()
def med(cfg, bench, key, size=None):
    v = [r[key] for r in rows if r['config'] == cfg and r['bench'] == bench
         and (size is None or r.get('bytes') == size)]
    return statistics.median(v) if v else float('nan')
sizes = sorted({r['bytes'] for r in rows if r['bench'] == 'pingpong'})
def name(b):
    return f'{b >> 20} MiB' if b >= 1 << 20 else f'{b >> 10} KiB' if b >= 1024 else f'{b} B'
print('| figure | ' + ' | '.join(cfgs) + ' | iso_net / sock_daemon | relay / iso_net |')
print('|---' * (len(cfgs) + 3) + '|')
def ratio(num, den, bench, key, size):
    """the median over rounds of num/den within each round (the two ran minutes apart at
    most), with its range"""
    def at(cfg, rnd):
        v = [r[key] for r in rows if r['config'] == cfg and r['bench'] == bench and
             r['round'] == rnd and (size is None or r.get('bytes') == size)]
        return v[0] if v else None
    q = [at(num, k) / at(den, k) for k in sorted({r['round'] for r in rows})
         if at(num, k) and at(den, k)]
    return f'{statistics.median(q):.2f} ({min(q):.2f}-{max(q):.2f})' if q else '-'
def line(label, bench, key, size=None):
    vals = [med(c, bench, key, size) for c in cfgs]
    print(f'| {label} | ' + ' | '.join(f'{v:.3g}' for v in vals) +
          f" | {ratio('iso_net', 'sock_daemon', bench, key, size)} | {ratio('relay', 'iso_net', bench, key, size)} |")
for s in sizes:
    line(f'latency {name(s)} (us)', 'pingpong', 'lat_us_med', s)
for s in sizes:
    line(f'bandwidth {name(s)} (MB/s)', 'bw', 'mbps_med', s)
line('first message, round trip (us)', 'firstmsg', 'first_us')
PY
