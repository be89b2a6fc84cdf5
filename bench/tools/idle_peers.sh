#!/bin/bash
# The cost of idle network peers on an 8-byte ping-pong between two test hosts
# (docs/fabric.md, "Waking connections"): bench/src/idle_peers.c with N ranks
# (N - 2 idle peers of the two timing ranks, half the ranks on each host), all over
# ofi (tcp;ofi_rxm on eth0), DCFA_OFI_WAKE=1 (progress polls woken connections) and 0
# (every connection every pass) alternated, ROUNDS times each.
#
#   bench/tools/idle_peers.sh [--build DIR] [--ranks "3 66"] [--rounds 3] [--reps 2000]
#
# Needs root (namespaces); takes the test hosts' lock (/tmp/dcfa-hosts.lock) for its run.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
BUILD=$REPO/build RANKS="3 66" ROUNDS=3 REPS=2000
while [ $# -gt 0 ]; do
    case $1 in
    --build) BUILD=$(cd "$2" && pwd); shift 2 ;;
    --ranks) RANKS=$2; shift 2 ;;
    --rounds) ROUNDS=$2; shift 2 ;;
    --reps) REPS=$2; shift 2 ;;
    *) echo "idle_peers.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done
if [ -z "${DCFA_HOSTS_LOCKED:-}" ]; then
    DCFA_HOSTS_LOCKED=1 exec flock "${DCFA_HOSTS_LOCK:-/tmp/dcfa-hosts.lock}" bash "$0" "$@"
fi
PREFIX=$BUILD/prefix
[ -x "$PREFIX/bin/mpicc" ] || { echo "idle_peers.sh: no $PREFIX/bin/mpicc (cmake --install)" >&2; exit 2; }
TMP=$(mktemp -d /tmp/dcfa-idle.XXXXXX)
trap '"$REPO/test/hosts/hosts.sh" down >/dev/null 2>&1; rm -rf "$TMP"' EXIT
"$PREFIX/bin/mpicc" -O2 -o "$TMP/idle_peers" "$REPO/bench/src/idle_peers.c" || exit 1
"$REPO/test/hosts/hosts.sh" up 2 >/dev/null || exit 1
export DCFA_RSH=$REPO/test/hosts/rsh DCFA_BIND_TO=none DCFA_FABRICS=ofi FI_PROVIDER="tcp;ofi_rxm" FI_TCP_IFACE=eth0
for r in $(seq "$ROUNDS"); do
    for n in $RANKS; do
        for wake in 1 0; do
            echo -n "round $r wake=$wake load=$(cut -d' ' -f1 /proc/loadavg) "
            timeout 600 "$PREFIX/bin/mpirun" -genv DCFA_OFI_WAKE $wake -hosts dcfa-h1,dcfa-h2 \
                -ppn $(((n + 1) / 2)) -n "$n" "$TMP/idle_peers" --reps "$REPS" </dev/null 2>&1 | tail -1
        done
    done
done
