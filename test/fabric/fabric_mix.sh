#!/bin/sh
# fabric_mix.sh MPIRUN TESTBIN
# One job, two fabrics: test/mpi/fabric_mix gives even and odd ranks
# different node keys, so with DCFA_FABRICS=shm,ofi a connection between
# ranks of one parity must take shm ("highest priority") and one across
# parities ofi ("shm cannot reach the peer"). The job must pass and
# DCFA_STATS' dcfa-conn lines must show exactly that. Loopback only.
mpirun=$1
bin=$2
out=$(mktemp)
err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
DCFA_FABRICS=shm,ofi DCFA_OFI_IFACE=lo FI_TCP_IFACE=lo FI_SOCKETS_IFACE=lo DCFA_STATS=1 \
    timeout 120 "$mpirun" -n 4 "$bin/fabric_mix" >"$out" 2>"$err"
rc=$?
fails=0
if [ $rc -ne 0 ] || [ "$(cat "$out")" != " No Errors" ]; then
    echo "FAIL: the job (status $rc) printed:"
    cat "$out" "$err"
    exit 1
fi
for r in 0 1 2 3; do
    for p in 0 1 2 3; do
        [ $r -eq $p ] && continue
        line=$(grep "^dcfa-conn rank=$r peer=$p " "$err")
        if [ $(( (r + p) % 2 )) -eq 0 ]; then
            want='fabric=shm provider=cma .*why="shm: '
        else
            want='fabric=ofi provider=[^ ]+ .*why=".*shm cannot reach the peer; ofi reaches it|why="ofi: the peer connected with it"'
        fi
        if ! echo "$line" | grep -Eq "$want"; then
            echo "FAIL: rank $r to $p: '$line' does not match /$want/"
            fails=$((fails + 1))
        fi
    done
done
if ! grep -Eq "^dcfa-stats rank=0 .* shm_conns=1 .* ofi_conns=2 " "$err"; then
    echo "FAIL: rank 0's counters do not show 1 shm and 2 ofi connections:"
    grep "^dcfa-stats rank=0" "$err"
    fails=$((fails + 1))
fi
[ $fails -eq 0 ] && echo "ok: 4 ranks, shm within a parity, ofi across" 
exit $((fails != 0))
