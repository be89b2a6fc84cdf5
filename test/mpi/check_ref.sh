#!/bin/bash
# check_ref.sh MPICC MPIRUN [OUTDIR] [NAME...]
#
# Builds every program of testlist.txt with MPICC and runs each listed test
# through run_one.sh with the launcher MPIRUN; a reference for how the list is
# read, and the way the programs are validated against other MPIs:
#   test/mpi/check_ref.sh mpicc.mpich mpiexec.mpich
#   test/mpi/check_ref.sh mpicc.openmpi "mpirun.openmpi --allow-run-as-root --oversubscribe"
# variant= lines are skipped (their DCFA_* settings mean nothing to other
# MPIs) unless CHECK_VARIANTS=1. With NAMEs, only those programs run.
# needs=dpm tests are skipped with DCFA_TEST_DPM=0 (run_one.sh decides,
# through DCFA_TEST_NEEDS): MPICH from Debian cannot spawn here.
# Prints one line per test and a summary; exit status 0 iff none failed.

set -u
if [ $# -lt 2 ]; then
    echo "usage: $0 MPICC MPIRUN [OUTDIR] [NAME...]" >&2
    exit 2
fi
mpicc=$1
mpirun=$2
outdir=${3:-$(mktemp -d "${TMPDIR:-/tmp}/check_ref.XXXXXX")}
shift $(($# < 3 ? $# : 3))
only=" $* "
here=$(cd "$(dirname "$0")" && pwd)
cflags="-std=gnu11 -O1 -g -Wall -Wextra -Werror -Wno-unused-parameter -Wno-missing-field-initializers"
# MPICH's mpi.h declares status arrays with a size that gcc checks against
# MPI_STATUSES_IGNORE; that warning is about the header, not the tests.
cflags="$cflags -Wno-stringop-overflow"
mkdir -p "$outdir"

pass=0
fail=0
skip=0
failed=
while read -r line; do
    line=${line%%#*}
    read -r -a f <<<"$line"
    [ ${#f[@]} -eq 0 ] && continue
    name=${f[0]}
    nps=${f[1]}
    if [ "$only" != "  " ] && [[ "$only" != *" $name "* ]]; then
        continue
    fi
    tmo=60
    variant=
    envs=()
    xfail=()
    needs=
    for w in "${f[@]:2}"; do
        case $w in
            timeout=*) tmo=${w#timeout=} ;;
            variant=*) variant=${w#variant=} ;;
            env=*) envs+=("${w#env=}") ;;
            expect_fail) xfail=(expect_fail) ;;
            stderr_regex=*) xfail+=("${w#stderr_regex=}") ;;
            needs=*) needs=${w#needs=} ;;
            *) echo "check_ref: bad word '$w' in: $line" >&2; exit 2 ;;
        esac
    done
    if [ -n "$variant" ] && [ "${CHECK_VARIANTS:-0}" != 1 ]; then
        continue
    fi
    exe="$outdir/$name"
    if [ ! -x "$exe" ] || [ "$here/$name.c" -nt "$exe" ] || [ "$here/mtest.h" -nt "$exe" ]; then
        if ! $mpicc $cflags "$here/$name.c" -o "$exe" 2>"$outdir/$name.build.log"; then
            echo "BUILD-FAIL $name (see $outdir/$name.build.log)"
            fail=$((fail + 1))
            failed="$failed $name(build)"
            continue
        fi
    fi
    launcher=$mpirun
    [[ ",$needs," == *,singleton,* ]] && launcher=none
    for np in ${nps//,/ }; do
        tname="$name${variant:+_$variant}_np$np"
        log="$outdir/$tname.log"
        env "${envs[@]}" DCFA_TEST_NEEDS="$needs" \
            "$here/run_one.sh" "$launcher" "$np" "$tmo" "$exe" "${xfail[@]}" >"$log" 2>&1
        rc=$?
        if [ $rc -eq 0 ]; then
            echo "pass $tname"
            pass=$((pass + 1))
        elif [ $rc -eq 77 ]; then
            echo "skip $tname ($(tail -1 "$log"))"
            skip=$((skip + 1))
        else
            echo "FAIL $tname ($(tail -1 "$log"); log $log)"
            fail=$((fail + 1))
            failed="$failed $tname"
        fi
    done
done <"$here/testlist.txt"
skipped=
[ $skip -gt 0 ] && skipped=", $skip skipped"
echo "check_ref: $pass passed, $fail failed${failed:+:$failed}$skipped"
[ $fail -eq 0 ]
