#!/bin/bash
# Fault tests driven from the shell (docs/faults.md): fault_test.sh CASE ARGS...
# Exit 0 = pass, 77 = skipped, anything else = fail.
#   mismatch_hydra PROG   a must-agree setting on one rank under MPICH's Hydra:
#                         the job fails and stderr has exactly one line naming it
set -u
CASE=$1
shift
TMP=$(mktemp -d /tmp/dcfa-fault-test.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL [$CASE]: $*" >&2; exit 1; }

case $CASE in
mismatch_hydra)
    PROG=$1
    command -v mpiexec.mpich > /dev/null || exit 77
    timeout 60 mpiexec.mpich -n 2 "$PROG" : -n 1 -env DCFA_MAX_CREDIT 8 "$PROG" \
        > "$TMP/out" 2> "$TMP/err" < /dev/null
    rc=$?
    cat "$TMP/out" "$TMP/err"
    [ $rc -ne 0 ] && [ $rc -ne 124 ] || fail "status $rc, expected a failure (not a timeout)"
    n=$(grep -c 'DCFA_MAX_CREDIT is 8 on rank 2 but 64 on rank 0' "$TMP/err")
    [ "$n" = 1 ] || fail "expected one line naming DCFA_MAX_CREDIT on stderr, got $n"
    ;;
*)
    fail "unknown case"
    ;;
esac
echo "PASS [$CASE]"
