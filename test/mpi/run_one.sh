#!/bin/bash
# run_one.sh MPIRUN NPROCS TIMEOUT PROGRAM [expect_fail REGEX]
#
# Runs one MPI test program and decides pass/fail:
#   MPIRUN   launcher command; may hold options ("mpirun.openmpi --oversubscribe"),
#            it is split on spaces and given "-n NPROCS PROGRAM". The word "none"
#            runs PROGRAM directly (singleton start; NPROCS must be 1).
#   TIMEOUT  seconds; the launcher gets SIGTERM then, SIGKILL 10 s later.
#   normal test:      passes iff exit status 0 and stdout is exactly " No Errors"
#                     (trailing newlines allowed).
#   expect_fail REGEX passes iff exit status non-zero (not a timeout) and stderr
#                     matches the extended regex REGEX (grep -E over the whole
#                     stderr, so "." also matches newlines).
# Afterwards, in both cases:
#   - no process started by this run may remain (every process whose environment
#     carries this run's DCFA_TEST_TAG); leftovers are listed, killed, and fail;
#   - no new /dev/shm/dcfa-* file may remain; leftovers are listed and fail.
#     A file counts as leaked when it appeared during the run and no live
#     process maps it or holds it open (so live jobs of other tests running at
#     the same time are not blamed; a job of another test that leaks while this
#     one runs still can be: serialise with a CTest RESOURCE_LOCK if needed).
# Environment variables of the caller (DCFA_EAGER_LIMIT, ...) pass through.
# DCFA_TEST_LAST_RANK_ENV="VAR=VAL ...": the last rank gets these on top, as a
# program of its own (MPMD: -n N-1 PROGRAM : -n 1 -env VAR VAL ... PROGRAM).
# DCFA_TEST_NEEDS=FEAT[,FEAT...]: the test's needs= list (testlist.txt; set by
# CMake and check_ref.sh). With "dpm" in it the test is skipped (exit 77,
# nothing run) when DCFA_TEST_DPM=0: for reference MPIs that cannot spawn.
# Exit status: 0 pass, 1 fail, 2 usage error, 77 skipped.

set -u

if [ $# -lt 4 ]; then
    echo "usage: $0 MPIRUN NPROCS TIMEOUT PROGRAM [expect_fail REGEX]" >&2
    exit 2
fi
mpirun=$1
nprocs=$2
tmo=$3
prog=$4
shift 4
expect_fail=0
regex=
if [ $# -gt 0 ]; then
    if [ "$1" != expect_fail ] || [ $# -ne 2 ]; then
        echo "$0: trailing arguments must be: expect_fail REGEX" >&2
        exit 2
    fi
    expect_fail=1
    regex=$2
fi
case ",${DCFA_TEST_NEEDS:-}," in
    *,dpm,*)
        if [ "${DCFA_TEST_DPM:-1}" = 0 ]; then
            echo "run_one: SKIP: needs=dpm (DCFA_TEST_DPM=0)"
            exit 77
        fi
        ;;
esac
case $prog in
    */*) prog=$(readlink -f "$prog") ;;
    *) prog=$(command -v "$prog" || echo "$prog") ;;
esac
if [ ! -x "$prog" ]; then
    echo "$0: $prog is not an executable" >&2
    exit 2
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/run_one.XXXXXX") || exit 2
trap 'rm -rf "$work"' EXIT
tag="run_one-$$-$RANDOM$RANDOM"

list_shm() {
    find /dev/shm -maxdepth 1 -name 'dcfa-*' -printf '%f\n' 2>/dev/null | sort
}

# True if some live process maps /dev/shm/$1 or has it open.
shm_in_use() {
    grep -qsF "/dev/shm/$1" /proc/[0-9]*/maps && return 0
    [ -n "$(find /proc/[0-9]*/fd -lname "/dev/shm/$1" -print -quit 2>/dev/null)" ]
}

# Processes (other than ourselves) whose environment has our tag.
list_tagged() {
    local d pid
    for d in /proc/[0-9]*; do
        pid=${d#/proc/}
        [ "$pid" = $$ ] && continue
        if grep -qzx "DCFA_TEST_TAG=$tag" "$d/environ" 2>/dev/null; then
            echo "$pid"
        fi
    done
}

list_shm >"$work/shm.before"

if [ "$mpirun" = none ]; then
    cmd=("$prog")
else
    read -r -a launcher <<<"$mpirun"
    cmd=("${launcher[@]}" -n "$nprocs" "$prog")
    if [ -n "${DCFA_TEST_LAST_RANK_ENV:-}" ] && [ "$nprocs" -ge 2 ]; then
        last=()
        for kv in $DCFA_TEST_LAST_RANK_ENV; do
            last+=(-env "${kv%%=*}" "${kv#*=}")
        done
        cmd=("${launcher[@]}" -n $((nprocs - 1)) "$prog" : -n 1 "${last[@]}" "$prog")
    fi
fi

start=$(date +%s.%N)
env DCFA_TEST_TAG="$tag" timeout --kill-after=10 "$tmo" "${cmd[@]}" \
    </dev/null >"$work/stdout" 2>"$work/stderr"
rc=$?
end=$(date +%s.%N)

ok=1
reason=
if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
    ok=0
    reason="timed out after $tmo s (status $rc)"
elif [ $expect_fail -eq 1 ]; then
    if [ $rc -eq 0 ]; then
        ok=0
        reason="expected the job to fail, but it exited 0"
    elif ! grep -Ezq -- "$regex" "$work/stderr"; then
        ok=0
        reason="job failed (status $rc) but stderr does not match /$regex/"
    fi
else
    out=$(cat "$work/stdout")
    if [ $rc -ne 0 ]; then
        ok=0
        reason="exit status $rc"
    elif [ "$out" != " No Errors" ]; then
        ok=0
        reason="stdout is not exactly ' No Errors'"
    fi
fi

# Leftover processes: give a dying job a few seconds, then report and kill.
leaked=
for _ in 1 2 3 4 5 6 7 8 9 10; do
    leaked=$(list_tagged)
    [ -z "$leaked" ] && break
    sleep 0.5
done
if [ -n "$leaked" ]; then
    ok=0
    reason="$reason${reason:+; }processes left behind"
    for pid in $leaked; do
        echo "run_one: leaked process $pid: $(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)"
    done
    for pid in $leaked; do
        kill -KILL "$pid" 2>/dev/null
    done
fi

# Leftover shared-memory files.
newshm=
for _ in 1 2 3 4 5 6 7 8 9 10; do
    list_shm >"$work/shm.after"
    newshm=
    for f in $(comm -13 "$work/shm.before" "$work/shm.after"); do
        shm_in_use "$f" || newshm="$newshm $f"
    done
    [ -z "$newshm" ] && break
    sleep 0.5
done
if [ -n "$newshm" ]; then
    ok=0
    reason="$reason${reason:+; }/dev/shm files left behind"
    for f in $newshm; do
        echo "run_one: leaked /dev/shm/$f"
    done
fi

elapsed=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f", b - a }')
echo "run_one: ${cmd[*]} (timeout $tmo s${regex:+, expect_fail /$regex/}) status $rc in $elapsed s"
echo "---- stdout ----"
head -c 20000 "$work/stdout"
echo "---- stderr ----"
head -c 20000 "$work/stderr"
echo "----------------"
if [ $ok -eq 1 ]; then
    echo "run_one: PASS"
    exit 0
fi
echo "run_one: FAIL: $reason"
exit 1
