#!/bin/sh
# shm_full.sh MPIRUN TESTBIN
# A full /dev/shm must be an error when a segment is made, naming /dev/shm
# and the size needed, never a SIGBUS in the middle of a message (issue 15
# item 10). Each job runs in a private mount namespace with a 1 MiB tmpfs
# over /dev/shm (unshare --mount, so root is needed; without it the test
# says so and is skipped): once with rings that do not fit (DCFA_MAX_CREDIT=32768
# blocks of 64 bytes: 2 MiB), once with small
# rings and a node segment for collectives that does not fit.
mpirun=$1
bin=$2
if ! unshare --mount true 2>/dev/null; then
    echo "SKIP: unshare --mount (a private /dev/shm) needs root"
    exit 77
fi
fails=0
err=$(mktemp)
trap 'rm -f "$err"' EXIT

# check WHAT REGEX ENV... PROGRAM: the job must fail (not time out, not SIGBUS) with REGEX in stderr
check() {
    what=$1 regex=$2
    shift 2
    unshare --mount sh -c 'mount -t tmpfs -o size=1m tmpfs /dev/shm || exit 99; exec "$@"' sh \
        env "$@" >/dev/null 2>"$err"
    rc=$?
    if [ $rc -eq 0 ] || [ $rc -eq 124 ] || [ $rc -eq 99 ] || grep -q "signal 7" "$err" ||
       ! grep -Eq "$regex" "$err"; then
        echo "FAIL $what: status $rc, stderr:"
        cat "$err"
        fails=$((fails + 1))
    else
        echo "ok   $what: $(grep -E "$regex" "$err" | head -1)"
    fi
}

check "rings larger than /dev/shm" "cannot reserve [0-9]+ bytes in /dev/shm" \
    DCFA_MAX_CREDIT=32768 timeout 60 "$mpirun" -n 2 "$bin/sendrecv"
check "collective segment larger than /dev/shm" "collectives: cannot reserve [0-9]+ bytes in /dev/shm" \
    DCFA_EAGER_LIMIT=1024 DCFA_BLOCK_SIZE=1024 DCFA_MAX_CREDIT=4 DCFA_COLL_SHM_SLOT=1048576 \
    timeout 60 "$mpirun" -n 2 "$bin/coll_barrier"
[ $fails -eq 0 ] && echo "2 passed, 0 failed" || echo "$((2 - fails)) passed, $fails failed"
exit $((fails != 0))
