#!/bin/bash
# Launcher tests: launcher_test.sh CASE MPIRUN LT_PROG PMI_BASIC PMI_ABORT [SPLIT_TYPE]
# Exit 0 = pass, 77 = skipped, anything else = fail.
set -u
# Runs with -hosts of this machine open ofi too (DCFA_UNIVERSE_HOSTS): keep it on loopback
# (docs/fabric.md, the network rule for tests)
export DCFA_OFI_IFACE=${DCFA_OFI_IFACE:-lo} FI_TCP_IFACE=${FI_TCP_IFACE:-lo} FI_SOCKETS_IFACE=${FI_SOCKETS_IFACE:-lo}
CASE=$1 MPIRUN=$2 LT=$3 PMI_BASIC=$4 PMI_ABORT=$5 SPLIT=${6:-}
TMP=$(mktemp -d /tmp/dcfa-launcher-test.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

fail() { echo "FAIL [$CASE]: $*" >&2; exit 1; }

# run EXPECTED_STATUS mpirun-args... : runs mpirun, stdout/stderr to $TMP/out, $TMP/err
run() {
    local want=$1; shift
    "$MPIRUN" "$@" >"$TMP/out" 2>"$TMP/err" </dev/null
    local got=$?
    if [ "$got" != "$want" ]; then
        echo "--- stdout"; head -c 2000 "$TMP/out"; echo "--- stderr"; head -c 2000 "$TMP/err"
        fail "mpirun $* exited $got, expected $want"
    fi
}

# The stderr of mpirun must be exactly one line matching the pattern.
err_is() {
    [ "$(wc -l <"$TMP/err")" = 1 ] || { cat "$TMP/err"; fail "expected one line on stderr"; }
    grep -Eq "$1" "$TMP/err" || fail "stderr '$(cat "$TMP/err")' does not match '$1'"
}

AD_DAEMON=--dcfa-daemon
no_leftovers() { # MARKER: every process of it gone within 10 s (0.3 s on an idle machine)
    for _ in $(seq 100); do
        pgrep -f "$1" >/dev/null || return 0
        sleep 0.1
    done
    if pgrep -f "$1" >/dev/null; then
        pgrep -af "$1"; pkill -KILL -f "$1"; fail "processes left behind"
    fi
}

case $CASE in
singleton)
    "$PMI_BASIC" >"$TMP/out" 2>&1 || fail "singleton run failed: $(cat "$TMP/out")"
    grep -q "No Errors" "$TMP/out" || fail "no 'No Errors'"
    ;;
pmi)
    for n in 1 4 16; do
        run 0 -n $n "$PMI_BASIC"
        grep -q "No Errors" "$TMP/out" || fail "no 'No Errors' at -n $n"
        [ -s "$TMP/err" ] && fail "unexpected stderr: $(cat "$TMP/err")"
    done
    ;;
hydra)
    command -v mpiexec.mpich >/dev/null || exit 77
    for mode in "" "-pmi-port"; do
        timeout 60 mpiexec.mpich $mode -n 3 "$PMI_BASIC" >"$TMP/out" 2>&1 </dev/null ||
            fail "mpiexec.mpich $mode failed: $(cat "$TMP/out")"
        grep -q "No Errors" "$TMP/out" || fail "no 'No Errors' under Hydra $mode"
    done
    ;;
mpich_client)
    # An MPICH-built MPI program under our mpirun: checks our PMI server
    # against MPICH's own PMI-1 client.
    command -v mpicc.mpich >/dev/null || exit 77
    printf '%s\n' '#include <mpi.h>' '#include <stdio.h>' \
        'int main(int c, char **v) { int r, s, x, t; MPI_Init(&c, &v);' \
        'MPI_Comm_rank(MPI_COMM_WORLD, &r); MPI_Comm_size(MPI_COMM_WORLD, &s); x = r;' \
        'MPI_Allreduce(&x, &t, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);' \
        'if (r == 0) printf("sum %d\n", t); MPI_Finalize(); return 0; }' >"$TMP/h.c"
    mpicc.mpich "$TMP/h.c" -o "$TMP/h" 2>/dev/null || exit 77
    run 0 -n 4 "$TMP/h"
    grep -qx "sum 6" "$TMP/out" || fail "MPICH program output: $(cat "$TMP/out")"
    ;;
exit_code)
    run 0 -n 3 "$LT" mpi
    [ -s "$TMP/out" ] || [ -s "$TMP/err" ] && fail "output on success: $(cat "$TMP/err")"
    run 3 -n 4 "$LT" exit 3 2
    err_is '^mpirun: rank 2 \(pid [0-9]+\) exited with status 3$'
    run 42 -n 1 "$LT" exit 42 0
    err_is '^mpirun: rank 0 \(pid [0-9]+\) exited with status 42$'
    ;;
signal)
    run 139 -n 3 "$LT" signal 11 1
    err_is '^mpirun: rank 1 \(pid [0-9]+\) killed by signal 11 \(Segmentation fault\)$'
    run 134 -n 2 "$LT" signal 6 0
    err_is '^mpirun: rank 0 \(pid [0-9]+\) killed by signal 6 \(Aborted\)$'
    ;;
abort)
    start=$(date +%s)
    run 7 -n 3 "$PMI_ABORT"
    err_is '^mpirun: rank 1 \(pid [0-9]+\) aborted the job with exit code 7: test abort: giving up$'
    [ $(( $(date +%s) - start )) -lt 10 ] || fail "abort took too long"
    ;;
nofinalize)
    run 1 -n 3 "$LT" nofinalize 2
    err_is '^mpirun: rank 2 \(pid [0-9]+\) exited with status 0 without calling MPI_Finalize$'
    run 0 -n 3 "$LT" mpi
    ;;
timeout)
    start=$(date +%s)
    run 124 --timeout 2 -n 2 "$LT" hang
    elapsed=$(( $(date +%s) - start ))
    [ $elapsed -lt 8 ] || fail "timeout took ${elapsed}s"
    grep -q '^rank 0: waiting in hang$' "$TMP/err" || fail "rank 0 did not dump on SIGUSR1"
    grep -q '^rank 1: waiting in hang$' "$TMP/err" || fail "rank 1 did not dump on SIGUSR1"
    [ "$(tail -n 1 "$TMP/err")" = "mpirun: job timed out after 2 s" ] || fail "bad timeout message"
    MPIEXEC_TIMEOUT=1 "$MPIRUN" -n 1 sleep 20 >/dev/null 2>&1 </dev/null
    [ $? = 124 ] || fail "MPIEXEC_TIMEOUT ignored"
    ;;
exec_fail)
    run 127 -n 2 ./no-such-program-xyz
    err_is "^mpirun: cannot execute './no-such-program-xyz': No such file or directory$"
    run 127 -n 2 no-such-program-xyz
    err_is "^mpirun: cannot execute 'no-such-program-xyz': No such file or directory$"
    echo data >"$TMP/notexec"; chmod 644 "$TMP/notexec"
    run 126 -n 1 "$TMP/notexec"
    err_is "^mpirun: cannot execute '$TMP/notexec': Permission denied$"
    ;;
output_1mb)
    "$LT" bytes 1048576 5 >"$TMP/want" 2>/dev/null   # singleton = rank 0
    run 0 -n 1 "$LT" bytes 1048576 5
    cmp "$TMP/out" "$TMP/want" || fail "1 MB stdout differs"
    [ -s "$TMP/err" ] && fail "unexpected stderr"
    run 0 -n 2 "$LT" fill 1048576
    [ "$(tr -d A <"$TMP/out" | tr -d B | wc -c)" = 0 ] || fail "foreign bytes on stdout"
    [ "$(tr -cd A <"$TMP/out" | wc -c)" = 1048576 ] || fail "rank 0 stdout count"
    [ "$(tr -cd B <"$TMP/out" | wc -c)" = 1048576 ] || fail "rank 1 stdout count"
    [ "$(tr -cd a <"$TMP/err" | wc -c)" = 1048576 ] || fail "rank 0 stderr count"
    [ "$(tr -cd b <"$TMP/err" | wc -c)" = 1048576 ] || fail "rank 1 stderr count"
    [ "$(wc -c <"$TMP/err")" = 2097152 ] || fail "stderr size"
    ;;
output_many)
    for n in 8 16; do
        run 0 -n $n "$LT" fill 100000
        [ "$(wc -c <"$TMP/out")" = $((n * 100000)) ] || fail "stdout size at -n $n"
        [ "$(wc -c <"$TMP/err")" = $((n * 100000)) ] || fail "stderr size at -n $n"
        for r in $(seq 0 $((n - 1))); do
            up=$(printf "\\$(printf %o $((65 + r)))") lo=$(printf "\\$(printf %o $((97 + r)))")
            [ "$(tr -cd "$up" <"$TMP/out" | wc -c)" = 100000 ] || fail "rank $r stdout at -n $n"
            [ "$(tr -cd "$lo" <"$TMP/err" | wc -c)" = 100000 ] || fail "rank $r stderr at -n $n"
        done
        # -l keeps lines whole and tags them
        run 0 -l -n $n "$LT" lines 2000
        for r in $(seq 0 $((n - 1))); do
            grep "^\[$r\] " "$TMP/out" | sed "s/^\[$r\] //" >"$TMP/got"
            seq 0 1999 | sed "s/^/rank $r line /" >"$TMP/want"
            cmp -s "$TMP/got" "$TMP/want" || fail "-l lines of rank $r at -n $n"
        done
        [ "$(wc -l <"$TMP/out")" = $((n * 2000)) ] || fail "-l line count at -n $n"
    done
    ;;
prefix)
    run 0 -l -n 2 sh -c 'printf "a\nb"; echo c >&2'
    [ "$(wc -l <"$TMP/out")" = 4 ] || fail "prefix line count: $(cat "$TMP/out")"
    grep -qx '\[0\] a' "$TMP/out" && grep -qx '\[0\] b' "$TMP/out" &&
        grep -qx '\[1\] a' "$TMP/out" && grep -qx '\[1\] c' "$TMP/err" || fail "prefix: $(cat "$TMP/out" "$TMP/err")"
    run 0 -n 1 sh -c 'printf "no newline"'
    [ "$(cat "$TMP/out")" = "no newline" ] || fail "partial line not forwarded"
    ;;
stdin)
    head -c 300000 /dev/urandom >"$TMP/in"
    "$MPIRUN" -n 3 "$LT" cat <"$TMP/in" >"$TMP/out" 2>"$TMP/err" || fail "stdin run failed"
    cmp "$TMP/in" "$TMP/out" || fail "stdin not delivered byte-exact to rank 0 only"
    echo hello | "$MPIRUN" -n 2 "$LT" cat >"$TMP/out" 2>&1 || fail "pipe stdin run failed"
    [ "$(cat "$TMP/out")" = hello ] || fail "pipe stdin: $(cat "$TMP/out")"
    # rank 0 not reading stdin must not hang the job
    head -c 1000000 /dev/zero | "$MPIRUN" -n 2 true || fail "unread stdin"
    ;;
env)
    export LT_FROM_ENV=inherited
    run 0 -n 2 -x LT_X1=one -x LT_FROM_ENV -genv LT_G 'two words' -env LT_E e1 "$LT" env \
        LT_X1 LT_FROM_ENV LT_G LT_E LT_NOPE PMI_SIZE
    [ "$(grep -c '^LT_X1=one$' "$TMP/out")" = 2 ] || fail "-x NAME=VALUE"
    [ "$(grep -c '^LT_FROM_ENV=inherited$' "$TMP/out")" = 2 ] || fail "-x NAME"
    [ "$(grep -c '^LT_G=two words$' "$TMP/out")" = 2 ] || fail "-genv"
    [ "$(grep -c '^LT_E=e1$' "$TMP/out")" = 2 ] || fail "-env"
    [ "$(grep -c '^LT_NOPE unset$' "$TMP/out")" = 2 ] || fail "unset variable"
    [ "$(grep -c '^PMI_SIZE=2$' "$TMP/out")" = 2 ] || fail "PMI_SIZE"
    run 0 -n 1 "$LT" env DCFA_JOBID
    grep -Eq '^DCFA_JOBID=[A-Za-z0-9_]+$' "$TMP/out" || fail "DCFA_JOBID: $(cat "$TMP/out")"
    ;;
mpmd)
    run 0 -n 2 -env LT_APP first "$LT" env LT_APP : -n 1 -env LT_APP second "$LT" env LT_APP PMI_RANK
    [ "$(grep -c '^LT_APP=first$' "$TMP/out")" = 2 ] || fail "first context"
    grep -qx 'LT_APP=second' "$TMP/out" && grep -qx 'PMI_RANK=2' "$TMP/out" || fail "second context"
    run 0 -n 2 "$PMI_BASIC" : -n 2 "$PMI_BASIC"
    ;;
noinit)
    # a rank that exits 0 without MPI_Init while the others wait in MPI_Init's fence
    start=$(date +%s)
    run 1 --timeout 20 -n 2 "$LT" mpi : -n 1 true
    err_is '^mpirun: rank 2 \(pid [0-9]+\) exited with status 0 without calling MPI_Init while rank [01] \(pid [0-9]+\) is in MPI: ending the job$'
    [ $(( $(date +%s) - start )) -lt 10 ] || fail "took $(( $(date +%s) - start )) s"
    # it exits before the others reach MPI_Init (they are slow to start)
    run 1 --timeout 20 -n 1 true : -n 2 sh -c "sleep 1; exec $LT mpi"
    err_is '^mpirun: rank 0 \(pid [0-9]+\) exited with status 0 without calling MPI_Init while rank [12] \(pid [0-9]+\) is in MPI: ending the job$'
    # the grace time is a tunable
    start=$(date +%s.%N)
    DCFA_NOINIT_GRACE=3 run 1 --timeout 20 -n 1 "$LT" mpi : -n 1 true
    awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { exit !(b - a >= 3) }' || fail "DCFA_NOINIT_GRACE=3 not waited"
    DCFA_NOINIT_GRACE=soon run 2 -n 1 true
    grep -q "^mpirun: bad DCFA_NOINIT_GRACE 'soon' (seconds, 0 to 86400)$" "$TMP/err" || fail "bad grace: $(cat "$TMP/err")"
    # nobody in MPI: no failure
    run 0 -n 3 true
    run 0 --timeout 20 -n 2 "$LT" mpi : -n 1 -env PMI_RANK 2 "$LT" mpi
    # across daemons: rank 1's daemon tells mpirun, mpirun tells rank 0's
    me=$(hostname)
    DCFA_RSH=/nonexistent-rsh run 1 --timeout 20 -hosts "localhost,$me" -ppn 1 "$LT" mpi : -n 1 true
    err_is "^mpirun: rank 1 \(pid [0-9]+ on $me\) exited with status 0 without calling MPI_Init while rank 0 \(pid [0-9]+ on localhost\) is in MPI: ending the job$"
    ;;
foreign)
    # a program of ours under a launcher whose process manager we do not speak: one
    # line, status 1, instead of a singleton per rank; $SPLIT is an MPI program
    line='^\[dcfa-mpi\] pid [0-9]+: started by .* whose .* this library does not speak: it would run alone, not as one of [0-9a-z]+ processes; use'
    for vars in "OMPI_COMM_WORLD_RANK=1 OMPI_COMM_WORLD_SIZE=3" "PMIX_RANK=2" \
        "PMIX_RANK=0 SLURM_STEP_NUM_TASKS=4" "SLURM_PROCID=1 SLURM_STEP_NUM_TASKS=2" \
        "PMI_RANK=0 PMI_SIZE=2"; do
        env $vars "$SPLIT" >"$TMP/out" 2>"$TMP/err" </dev/null
        st=$?
        [ $st = 1 ] || fail "$vars: exit status $st, expected 1: $(cat "$TMP/err")"
        err_is "$line"
        grep -q "(${vars// /, })" "$TMP/err" || fail "$vars not named: $(cat "$TMP/err")"
    done
    # a job of one is a singleton indeed; DCFA_SINGLETON=1 forces one
    for vars in "OMPI_COMM_WORLD_RANK=0 OMPI_COMM_WORLD_SIZE=1" "PMIX_RANK=0" \
        "SLURM_PROCID=0 SLURM_STEP_NUM_TASKS=1" "DCFA_SINGLETON=1 PMI_RANK=1 PMI_SIZE=2"; do
        env $vars "$SPLIT" >"$TMP/out" 2>"$TMP/err" </dev/null || fail "$vars: $(cat "$TMP/err")"
        grep -q "No Errors" "$TMP/out" || fail "$vars: no 'No Errors'"
    done
    # the real launchers: Open MPI's is refused, Hydra's PMI still spoken
    if command -v mpirun.openmpi >/dev/null; then
        timeout 60 mpirun.openmpi --allow-run-as-root --oversubscribe -n 2 "$SPLIT" \
            >"$TMP/out" 2>"$TMP/err" </dev/null
        st=$?
        [ $st != 0 ] && [ $st != 124 ] || fail "under mpirun.openmpi: status $st"
        grep -Eq "${line#^}" "$TMP/err" || fail "under mpirun.openmpi: $(head -c 1500 "$TMP/err")"
        grep -q "No Errors" "$TMP/out" && fail "under mpirun.openmpi: ran as singletons"
    fi
    if command -v mpiexec.mpich >/dev/null; then
        timeout 60 mpiexec.mpich -n 2 "$SPLIT" >"$TMP/out" 2>"$TMP/err" </dev/null ||
            fail "under mpiexec.mpich: $(cat "$TMP/err")"
        grep -q "No Errors" "$TMP/out" || fail "under mpiexec.mpich: no 'No Errors'"
    fi
    ;;
cleanup)
    # no_shm JOBID: no /dev/shm/dcfa-JOBID-* file is left
    no_shm() {
        [ -n "$1" ] || fail "no job id captured"
        ls /dev/shm | grep -q "^dcfa-$1-" && fail "leftover /dev/shm files: $(ls /dev/shm | grep "^dcfa-$1-")"
    }
    marker="lt-marker-$$-$RANDOM"
    run 139 -n 3 "$LT" shmcrash "$marker"
    err_is '^mpirun: rank 1 \(pid [0-9]+\) killed by signal 11'
    no_leftovers "$marker"
    no_shm "$(sed -n 's/^jobid //p' "$TMP/out")"
    # the same after a successful job and after a timeout
    "$MPIRUN" -n 2 sh -c "touch /dev/shm/dcfa-\$DCFA_JOBID-ok; (setsid $LT linger $marker &); echo \$DCFA_JOBID" \
        >"$TMP/out" </dev/null || fail "success run"
    no_leftovers "$marker"
    no_shm "$(head -n 1 "$TMP/out")"
    "$MPIRUN" --timeout 1 -n 2 sh -c "touch /dev/shm/dcfa-\$DCFA_JOBID-to; echo \$DCFA_JOBID; $LT linger $marker" \
        >"$TMP/out" 2>/dev/null </dev/null
    no_leftovers "$marker"
    no_shm "$(head -n 1 "$TMP/out")"
    ;;
sigterm)
    # mpirun killed by SIGTERM/SIGINT forwards termination and cleans up
    for sig in TERM INT; do
        marker="lt-sig-$$-$RANDOM"
        "$MPIRUN" -n 3 sh -c "touch /dev/shm/dcfa-\$DCFA_JOBID-s; echo \$DCFA_JOBID; trap '' TERM INT; exec $LT linger $marker" \
            >"$TMP/out" 2>"$TMP/err" </dev/null &
        pid=$!
        sleep 0.5
        kill -$sig $pid
        wait $pid
        st=$?
        [ $st -gt 128 ] || fail "mpirun exit status $st after SIG$sig"
        grep -q "^mpirun: received signal" "$TMP/err" || fail "no message: $(cat "$TMP/err")"
        no_leftovers "$marker"
        jobid=$(head -n 1 "$TMP/out")
        [ -n "$jobid" ] && ! ls /dev/shm | grep -q "^dcfa-$jobid-" || fail "leftover /dev/shm files"
    done
    ;;
usage)
    "$MPIRUN" --help | grep -q -- '--timeout' || fail "--help"
    "$MPIRUN" --version | grep -q 'DCFA-MPI' || fail "--version"
    "$MPIRUN" --bogus-option true >/dev/null 2>"$TMP/err"; [ $? = 2 ] || fail "bad option status"
    grep -q "unknown option '--bogus-option'" "$TMP/err" || fail "bad option message"
    "$MPIRUN" -n 0 true 2>/dev/null; [ $? = 2 ] || fail "-n 0 accepted"
    "$MPIRUN" -n 2 2>/dev/null; [ $? = 2 ] || fail "missing program accepted"
    run 0 --oversubscribe --allow-run-as-root -np 2 true
    [ -s "$TMP/out" ] || [ -s "$TMP/err" ] && fail "output from a quiet job"
    ;;
pmi2)
    # PMI-2 wire protocol between our client and our daemon
    export DCFA_PMI_VERSION=2
    for n in 1 4; do
        run 0 -n $n "$PMI_BASIC"
        grep -q "No Errors" "$TMP/out" || fail "no 'No Errors' at -n $n with PMI-2"
        [ -s "$TMP/err" ] && fail "unexpected stderr: $(cat "$TMP/err")"
    done
    run 7 -n 3 "$PMI_ABORT"
    err_is '^mpirun: rank 1 \(pid [0-9]+\) aborted the job with exit code 7: test abort: giving up$'
    run 1 -n 3 "$LT" nofinalize 2
    err_is '^mpirun: rank 2 \(pid [0-9]+\) exited with status 0 without calling MPI_Finalize$'
    # a bad version is refused by the client with a message, not a hang
    DCFA_PMI_VERSION=7 run 0 -n 2 "$PMI_BASIC"
    grep -q "bad DCFA_PMI_VERSION" "$TMP/err" || fail "bad DCFA_PMI_VERSION not reported"
    ;;
hydra_pmi2)
    command -v mpiexec.hydra >/dev/null || exit 77
    DCFA_PMI_VERSION=2 timeout 60 mpiexec.hydra -n 4 "$PMI_BASIC" >"$TMP/out" 2>&1 </dev/null ||
        fail "mpiexec.hydra with PMI-2 failed: $(cat "$TMP/out")"
    grep -q "No Errors" "$TMP/out" || fail "no 'No Errors' under Hydra with PMI-2"
    ;;
node_key)
    # DCFA_NODE_KEY per program makes two "nodes" of one machine: the
    # process mapping, MPI_LOCALRANKID/NRANKS and MPI_Comm_split_type agree
    [ -n "$SPLIT" ] || exit 77
    run 0 -n 2 -env DCFA_NODE_KEY a sh -c 'echo "$PMI_RANK $MPI_LOCALRANKID/$MPI_LOCALNRANKS"' : \
        -n 3 -env DCFA_NODE_KEY b sh -c 'echo "$PMI_RANK $MPI_LOCALRANKID/$MPI_LOCALNRANKS"'
    [ "$(sort "$TMP/out" | tr '\n' ' ')" = "0 0/2 1 1/2 2 0/3 3 1/3 4 2/3 " ] ||
        fail "local ranks: $(sort "$TMP/out" | tr '\n' ' ')"
    run 0 -n 2 -env DCFA_NODE_KEY a "$SPLIT" : -n 3 -env DCFA_NODE_KEY b "$SPLIT"
    grep -q "No Errors" "$TMP/out" || fail "split_type over two node keys: $(cat "$TMP/out" "$TMP/err")"
    run 0 -n 4 "$SPLIT"
    grep -q "No Errors" "$TMP/out" || fail "split_type on one node"
    ;;
hostfile)
    # bad host lists and files: one line naming the item, status 2, nothing started
    printf 'hostA\n# comment\nhostB:2   # two slots\n\nhostC slots=3\nbad host line\n' >"$TMP/hf"
    run 2 -hostfile "$TMP/hf" true
    err_is "^mpirun: host file '$TMP/hf' line 6: bad entry 'bad host line'"
    run 2 -hostfile "$TMP/nonexistent" true
    err_is "^mpirun: cannot read host file '$TMP/nonexistent': No such file or directory$"
    printf '# nothing\n\n' >"$TMP/hf0"
    run 2 -hostfile "$TMP/hf0" true
    err_is "^mpirun: host file '$TMP/hf0' names no host$"
    printf 'h:0\n' >"$TMP/hf1"
    run 2 -f "$TMP/hf1" true
    err_is "^mpirun: host file '$TMP/hf1' line 1: bad entry 'h:0'"
    run 2 -hosts 'a,,b' true
    err_is "^mpirun: bad host list 'a,,b' \(an empty entry\)$"
    run 2 -hosts 'a,b:x' true
    err_is "^mpirun: bad host 'b:x' in host list 'a,b:x'"
    run 2 -hosts 'a,-b' true
    err_is "^mpirun: bad host '-b' in host list"
    run 2 -hosts a -ppn 0 true
    grep -q "^mpirun: -ppn needs a number of ranks per host between 1 and 4096$" "$TMP/err" ||
        fail "-ppn 0: $(cat "$TMP/err")"
    ;;
hosts_mpmd)
    # per-program host lists (-hosts/-hostfile after a ':'): each program's ranks on its own
    # hosts, the others on the global list. DCFA_RSH is a local_rsh that puts the host name
    # in the daemon's environment (a rank reads it from its parent, the daemon) and fails
    # for hosts named bad*.
    sed 's/^shift$/h=$1; shift\ncase $h in bad*) echo "ssh: connect to host $h: No route to host" >\&2; exit 255 ;; esac\nexport LT_HOST=$h/' \
        "$(dirname "$0")/local_rsh" >"$TMP/rsh"
    chmod +x "$TMP/rsh"
    grep -q 'export LT_HOST' "$TMP/rsh" || fail "cannot make the tagging rsh"
    export DCFA_RSH=$TMP/rsh
    P='echo "$PMI_RANK $(tr "\0" "\n" </proc/$PPID/environ | sed -n "s/^LT_HOST=//p")"'
    where() { sort -n "$TMP/out" | tr '\n' ' '; }
    # the issue's line (docs/gateway.md): 4 ranks on c1,c2, then 8 on b1,b2
    run 0 -hosts c1,c2 -n 4 sh -c "$P" : -hosts b1,b2 -n 8 sh -c "$P"
    [ "$(where)" = "0 c1 1 c2 2 c1 3 c2 4 b1 5 b2 6 b1 7 b2 8 b1 9 b2 10 b1 11 b2 " ] ||
        fail "per-program placement: $(where) $(cat "$TMP/err")"
    # a program without its own list continues the global one; slots of its own list; -hostfile
    printf 'b1 slots=2\nb2\n' >"$TMP/hf"
    run 0 -hosts c1,c2 -n 3 sh -c "$P" : -n 2 sh -c "$P" : -hostfile "$TMP/hf" -n 3 sh -c "$P"
    [ "$(where)" = "0 c1 1 c2 2 c1 3 c2 4 c1 5 b1 6 b1 7 b2 " ] ||
        fail "global list continued, host file of program 3: $(where) $(cat "$TMP/err")"
    # without -n a program with its own list gets its slots; -ppn is global
    run 0 -hosts c1 -n 1 sh -c "$P" : -hosts b1:3,b2 sh -c "$P"
    [ "$(where)" = "0 c1 1 b1 2 b1 3 b1 4 b2 " ] || fail "default -n: $(where)"
    run 0 -ppn 2 -hosts c1 -n 2 sh -c "$P" : -hosts b1,b2 -n 4 sh -c "$P"
    [ "$(where)" = "0 c1 1 c1 2 b1 3 b1 4 b2 5 b2 " ] || fail "-ppn: $(where)"
    # one PMI job over both lists (KVS, fences, the process mapping)
    run 0 -hosts c1 -n 2 "$PMI_BASIC" : -hosts b1,b2 -n 2 "$PMI_BASIC"
    grep -q "No Errors" "$TMP/out" || fail "PMI across per-program hosts: $(cat "$TMP/err")"
    # an MPI program (test/mpi/mpmd_hosts, beside SPLIT) over both lists: one world, world
    # ranks in program order, an allreduce, a ring and 256 KiB across the programs
    if [ -n "$SPLIT" ]; then
        mh=$(dirname "$SPLIT")/mpmd_hosts
        [ -x "$mh" ] || fail "$mh is not built"
        run 0 -hosts c1 -n 2 "$mh" --print : -hosts b1,b2 -n 3 "$mh" --print
        [ "$(sed -n 's/^mpmd_hosts rank \([0-9]*\) appnum \([0-9]*\) .*/\1 \2/p' "$TMP/out" | sort -n | tr '\n' ' ')" = "0 0 1 0 2 1 3 1 4 1 " ] &&
            grep -qx " No Errors" "$TMP/out" || fail "MPI over per-program hosts: $(cat "$TMP/out" "$TMP/err")"
    fi
    # bad lists: one line naming the option, the program and the entry, status 2
    run 2 -hosts c1 true : -hosts b1,,b2 true
    err_is "^mpirun: -hosts of program 2: bad host list 'b1,,b2' \(an empty entry\)$"
    run 2 -hosts c1 true : true : -host 'b1:2,b2:x' true
    err_is "^mpirun: -host of program 3: bad host 'b2:x' in host list 'b1:2,b2:x'"
    run 2 -hosts c1 true : -machinefile "$TMP/nonexistent" true
    err_is "^mpirun: -machinefile of program 2: cannot read host file '$TMP/nonexistent': No such file"
    run 2 -hosts c1 true : -hosts b1:2,b2:2 -n 5 true
    err_is "^mpirun: -hosts of program 2: -n 5 does not fit on 'b1:2,b2:2' \(4 slots"
    run 2 -n 1 true : -hosts b1 true
    err_is "^mpirun: -hosts of program 2: program 1 has no hosts"
    # --gateways as the last words of the line (the issue's form) is mpirun's, global: here a
    # ranks' host of program 2, refused before anything starts
    run 2 -hosts c1,c2 -n 4 true : -hosts b1,b2 -n 8 true --gateways b2
    err_is "^mpirun: gateway 'b2' is also a host for ranks$"
    run 0 -hosts c1 -n 1 echo --gateways
    [ "$(cat "$TMP/out")" = "--gateways" ] || fail "a lone last --gateways is the program's"
    # a host of program 2 that cannot be reached: its daemon's line, then the option,
    # program and host; status 2, no rank started
    run 2 -hosts c1 -n 1 touch "$TMP/started" : -hosts b1,bad9 -n 2 true
    grep -q "^mpirun: cannot start the assist daemon on host 'bad9': ssh: connect to host bad9: No route to host$" "$TMP/err" ||
        fail "unreachable host: $(cat "$TMP/err")"
    [ "$(tail -n 1 "$TMP/err")" = "mpirun: -hosts of program 2: host 'bad9' cannot be reached" ] ||
        fail "unreachable host not named: $(cat "$TMP/err")"
    [ -e "$TMP/started" ] && fail "a rank started although a host could not be reached"
    # the global list's hosts: as before (status 1, no program named)
    run 1 -hosts c1,bad8 -n 1 true : -hosts b1 true
    err_is "^mpirun: cannot start the assist daemon on host 'bad8'"
    no_leftovers "$MPIRUN $AD_DAEMON"
    ;;
gateway_routes)
    # mpirun --gateway-routes (docs/gateway.md): a bad route file is one line naming the file
    # and line, status 2, before any daemon starts (the hosts a, b, g need not exist)
    bad_routes() { # FILE-TEXT STDERR-REGEX-AFTER-THE-FILE-NAME
        printf "$1" >"$TMP/r"
        run 2 -hosts c1,b1 --gateways g1 --gateway-routes "$TMP/r" true
        err_is "^mpirun: --gateway-routes $TMP/r, $2"
    }
    bad_routes '# routes\n\nc1 b1 g1 # fine\nc1 b1\n' \
        "line 4: expected 'SIDE SIDE GATEWAY' \(a side: a host or a network a.b.c.d/n\), got 2 words$"
    bad_routes 'c1 b1 g1\nc1 x9 g1\n' "line 2: unknown host 'x9' \(not a host of -hosts/-hostfile\)$"
    bad_routes '10.77.1.0/24 10.77.2.0/24 g2\n' "line 1: 'g2' is not a gateway of --gateways$"
    bad_routes 'c1 10.77.2.0/40 g1\n' "line 1: '10.77.2.0/40' is not a side"
    bad_routes 'c1 b1 g1\nb1 c1 c1\n' "line 2: 'c1' is not a gateway of --gateways$"
    run 2 -hosts c1,b1 --gateways g1 --gateway-routes "$TMP/nonexistent" true
    err_is "^mpirun: --gateway-routes $TMP/nonexistent: No such file or directory$"
    run 2 -hosts c1,b1 --gateway-routes "$TMP/r" true
    err_is "^mpirun: --gateway-routes needs --gateways$"
    ;;
hosts_local)
    # the tree of daemons without a remote shell: localhost and this
    # machine's name are started directly (two daemons, one node)
    me=$(hostname)
    export DCFA_RSH=/nonexistent-rsh   # must not be used for local names
    run 0 -hosts "localhost,$me" -ppn 2 sh -c 'echo "$PMI_RANK $MPI_LOCALRANKID/$MPI_LOCALNRANKS"'
    [ "$(sort "$TMP/out" | tr '\n' ' ')" = "0 0/4 1 1/4 2 2/4 3 3/4 " ] ||
        fail "placement/local ranks: $(sort "$TMP/out" | tr '\n' ' ') $(cat "$TMP/err")"
    run 0 -hosts "localhost:3,$me" -n 5 "$PMI_BASIC"
    grep -q "No Errors" "$TMP/out" || fail "PMI across two daemons: $(cat "$TMP/err")"
    printf 'localhost slots=2\n%s:1\n' "$me" >"$TMP/hf"
    run 0 -hostfile "$TMP/hf" "$PMI_BASIC"
    grep -q "No Errors" "$TMP/out" || fail "PMI with a host file"
    run 3 -hosts "localhost,$me" -ppn 2 "$LT" exit 3 2
    err_is "^mpirun: rank 2 \(pid [0-9]+ on $me\) exited with status 3$"
    run 7 -hosts "localhost,$me" -ppn 2 "$PMI_ABORT"
    err_is "^mpirun: rank 1 \(pid [0-9]+ on localhost\) aborted the job with exit code 7: test abort: giving up$"
    run 0 -l -hosts "localhost,$me" -ppn 1 sh -c 'echo "from $PMI_RANK"'
    grep -qx '\[0\] from 0' "$TMP/out" && grep -qx '\[1\] from 1' "$TMP/out" || fail "-l across daemons"
    head -c 200000 /dev/urandom >"$TMP/in"
    "$MPIRUN" -hosts "localhost,$me" -ppn 2 "$LT" cat <"$TMP/in" >"$TMP/out" 2>"$TMP/err" ||
        fail "stdin run: $(cat "$TMP/err")"
    cmp -s "$TMP/in" "$TMP/out" || fail "stdin across daemons not byte-exact"
    start=$(date +%s)
    run 124 --timeout 2 -hosts "localhost,$me" -ppn 1 "$LT" hang
    [ $(( $(date +%s) - start )) -lt 8 ] || fail "timeout too slow"
    grep -q '^rank 1: waiting in hang$' "$TMP/err" || fail "rank 1 did not dump"
    [ "$(tail -n 1 "$TMP/err")" = "mpirun: job timed out after 2 s" ] || fail "timeout message"
    marker="lt-hl-$$-$RANDOM"
    "$MPIRUN" -hosts "localhost,$me" -ppn 1 sh -c "touch /dev/shm/dcfa-\$DCFA_JOBID-h; echo \$DCFA_JOBID; $LT linger $marker" \
        >"$TMP/out" 2>/dev/null </dev/null &
    pid=$!
    sleep 1
    kill -TERM $pid
    wait $pid
    [ $? -gt 128 ] || fail "SIGTERM: exit status"
    no_leftovers "$marker"
    no_leftovers "$MPIRUN $AD_DAEMON"
    jobid=$(head -n 1 "$TMP/out")
    [ -n "$jobid" ] && ! ls /dev/shm | grep -q "^dcfa-$jobid-" || fail "leftover /dev/shm files"
    ;;
rsh_fail)
    # a remote-start command that fails: one line naming the host, status 1
    DCFA_RSH=/nonexistent-rsh run 1 -hosts some-remote-host true
    err_is "^mpirun: cannot start the assist daemon on host 'some-remote-host': cannot run the remote-start command '/nonexistent-rsh': No such file or directory$"
    DCFA_RSH=false run 1 -hosts some-remote-host,other-host true
    err_is "^mpirun: cannot start the assist daemon on host '(some-remote-host|other-host)': 'false' exited with status 1$"
    printf '#!/bin/sh\necho "ssh: Could not resolve hostname $1: Name or service not known" >&2\nexit 255\n' >"$TMP/fakessh"
    chmod +x "$TMP/fakessh"
    DCFA_RSH="$TMP/fakessh" run 1 -hosts no-such-host true
    err_is "^mpirun: cannot start the assist daemon on host 'no-such-host': ssh: Could not resolve hostname no-such-host: Name or service not known$"
    # a remote-start command that never answers: the launch timeout names the host
    nap="29.$$$RANDOM"   # a unique sleep, found again below
    printf '#!/bin/sh\nexec sleep %s\n' "$nap" >"$TMP/hangssh"
    chmod +x "$TMP/hangssh"
    start=$(date +%s)
    DCFA_LAUNCH_TIMEOUT=2 DCFA_RSH="$TMP/hangssh" run 1 -hosts silent-host true
    err_is "^mpirun: no answer from the assist daemon on host 'silent-host' after 2 s \(remote-start command '$TMP/hangssh'\)$"
    [ $(( $(date +%s) - start )) -lt 8 ] || fail "launch timeout too slow"
    no_leftovers "sleep $nap"
    ;;
*)
    fail "unknown case"
    ;;
esac
exit 0
