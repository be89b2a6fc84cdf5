#!/bin/bash
# Launcher tests of dynamic processes (spawn, name service):
#   dpm_test.sh CASE MPIRUN PMI_SPAWN ASSIST_DPM
# PMI_SPAWN speaks raw PMI-1 (the daemon on its own), ASSIST_DPM goes through
# the client API of src/assist. Exit 0 = pass, 77 = skipped, else fail.
set -u
# Runs with -hosts of this machine open ofi too (DCFA_UNIVERSE_HOSTS): keep it on loopback
# (docs/fabric.md, the network rule for tests)
export DCFA_OFI_IFACE=${DCFA_OFI_IFACE:-lo} FI_TCP_IFACE=${FI_TCP_IFACE:-lo} FI_SOCKETS_IFACE=${FI_SOCKETS_IFACE:-lo}
CASE=$1 MPIRUN=$2 P=$3 D=$4
TMP=$(mktemp -d /tmp/dcfa-dpm-test.XXXXXX)
MARK="dpm-mark-$$-$RANDOM" # a word given to the children: finds leftovers
NSPID=
cleanup() {
    [ -n "$NSPID" ] && kill -TERM "$NSPID" 2>/dev/null
    rm -rf "$TMP"
}
trap cleanup EXIT

fail() { echo "FAIL [$CASE]: $*" >&2; exit 1; }

# run EXPECTED_STATUS mpirun-args...: stdout/stderr to $TMP/out, $TMP/err
run() {
    local want=$1; shift
    "$MPIRUN" "$@" >"$TMP/out" 2>"$TMP/err" </dev/null
    local got=$?
    if [ "$got" != "$want" ]; then
        echo "--- stdout"; head -c 3000 "$TMP/out"; echo "--- stderr"; head -c 3000 "$TMP/err"
        fail "mpirun $* exited $got, expected $want"
    fi
}
has() { grep -qFx -- "$1" "$TMP/out" || { cat "$TMP/out" "$TMP/err"; fail "no line '$1'"; }; }
has_re() { grep -Eq -- "$1" "$TMP/out" || { cat "$TMP/out" "$TMP/err"; fail "no line like '$1'"; }; }
count() { grep -Ec -- "$1" "$TMP/out"; }
no_stderr() { [ -s "$TMP/err" ] && fail "unexpected stderr: $(head -c 2000 "$TMP/err")"; return 0; }
err_is() {
    [ "$(wc -l <"$TMP/err")" = 1 ] || { cat "$TMP/err"; fail "expected one line on stderr"; }
    grep -Eq -- "$1" "$TMP/err" || fail "stderr '$(cat "$TMP/err")' does not match '$1'"
}
# singleton ENV...: "$D singleton" without a launcher (stdout/stderr to
# $TMP/out, $TMP/err); returns its status once the daemon it started on
# demand, if any, is gone (its children's output comes through it)
singleton() {
    env -u PMI_FD -u PMI_PORT "$@" "$D" singleton >"$TMP/out" 2>"$TMP/err" </dev/null &
    local pid=$! st
    wait $pid
    st=$?
    for _ in $(seq 150); do
        pgrep -f -- "--dcfa-singleton [0-9]+ s$pid\$" >/dev/null || return $st
        sleep 0.1
    done
    fail "the daemon of singleton $pid did not end"
}
# no_leftovers: every process of the test gone within 10 s (a loaded machine: 0.3 s idle)
no_leftovers() {
    for _ in $(seq 100); do
        pgrep -f "$MARK" >/dev/null || return 0
        sleep 0.1
    done
    if pgrep -f "$MARK" >/dev/null; then
        pgrep -af "$MARK"; pkill -KILL -f "$MARK"; fail "processes left behind"
    fi
}

case $CASE in
spawn)
    # 3 children of 2 parents' rank 0: sizes, ranks, the preput pair, their
    # own fence, arguments, PMI_SPAWNED, the node's process count of both jobs
    # (DCFA_NODE_NPROCS: 2 parents + 3 children); nothing on stderr
    run 0 -n 2 "$P" spawn 3 a1 "$MARK"
    has "spawn rc=0"
    [ "$(count '^child ')" = 3 ] || fail "3 children expected: $(cat "$TMP/out")"
    for r in 0 1 2; do
        has_re "^child rank $r size 3 appnum 0 preput hello-from-kvs_[A-Za-z0-9_]+ spawned 1 node 5 args a1 $MARK cwd "
    done
    no_stderr
    # -l: job 0 keeps "[rank] ", spawned job 1 gets "[1,rank] "
    run 0 -l -n 1 "$P" spawn 2 "$MARK"
    has "[0] spawn rc=0"
    has_re "^\[1,0\] child rank 0 size 2 "
    has_re "^\[1,1\] child rank 1 size 2 "
    # info wdir and path; stdin only reaches job 0's rank 0
    run 0 -n 1 "$P" wdir /tmp
    has "wdir rc=0"
    has_re "^child rank 0 size 1 .* cwd /tmp$"
    run 0 -n 1 "$P" path
    has "path rc=0"
    has_re "^child rank 0 size 1 .* args via-path "
    echo "to rank 0" | "$MPIRUN" -n 1 "$P" spawn 1 stdin >"$TMP/out" 2>"$TMP/err" || fail "stdin run"
    has_re "^child rank 0 .* stdin 0 bytes "
    no_leftovers
    ;;
spawn_multiple)
    # two commands: appnum 0 for the first one's process, 1 for the second's two
    run 0 -n 1 "$P" multi
    has "multi rc=0"
    has_re "^child rank 0 size 3 appnum 0 preput multi spawned 1 node 4 args first "
    has_re "^child rank 1 size 3 appnum 1 preput multi spawned 1 node 4 args second "
    has_re "^child rank 2 size 3 appnum 1 preput multi spawned 1 node 4 args second "
    no_stderr
    ;;
spawn_fail)
    # each refused at once with rc != 0 and a message naming the cause; nothing starts
    start=$(date +%s)
    run 0 -n 1 "$P" fail
    # 8 refusals: well under a second idle; 30 s catches one that waits for a deadline
    [ $(($(date +%s) - start)) -lt 30 ] || fail "failing spawns took too long"
    grep -q " took " "$TMP/out" && fail "a failing spawn was slow: $(grep took "$TMP/out")"
    has "fail missing rc=-1 errno=2 errcmd=0 msg=spawn: cannot execute '/nonexistent/dir/prog': No such file or directory"
    has_re "^fail notexec rc=-1 errno=13 errcmd=0 msg=spawn: cannot execute '/tmp/pmi_spawn_notexec_[0-9]+': Permission denied$"
    has "fail pathsearch rc=-1 errno=2 errcmd=0 msg=spawn: cannot execute 'no-such-program-xyz': No such file or directory"
    has "fail wdir rc=-1 errno=2 errcmd=0 msg=spawn: cannot use working directory '/nonexistent/dir': No such file or directory"
    has_re "^fail host rc=-1 errno=113 errcmd=0 msg=spawn: info host 'some-other-host' is not this host \('.*'\), and mpirun runs on this host only \(-hosts/-hostfile name more\)$"
    has_re "^fail file rc=-1 errno=22 errcmd=0 msg=spawn: info 'file': host file '/etc/hosts' line [0-9]+: bad entry"
    has "fail second rc=-1 errno=2 errcmd=1 msg=spawn: cannot execute '/nonexistent/second': No such file or directory"
    has "fail badpreput rc=-1 errno=22 errcmd=-1 msg=spawn: bad preput pair 'PARENT_TEST'"
    [ "$(count '^child ')" = 0 ] || fail "a child ran"
    no_stderr
    # across hosts (the tree of daemons): mpirun places, the host's daemon checks
    run 0 -hosts "localhost,$(hostname)" -ppn 1 -n 1 "$P" fail
    has_re "^fail missing rc=-1 errno=2 errcmd=0 msg=spawn: cannot execute '/nonexistent/dir/prog' on host '[^']+': No such file or directory$"
    has_re "^fail wdir rc=-1 errno=2 errcmd=0 msg=spawn: cannot use working directory '/nonexistent/dir' on host '[^']+': No such file or directory$"
    has "fail host rc=-1 errno=113 errcmd=0 msg=spawn: info host 'some-other-host' is not one of mpirun's hosts (localhost,$(hostname))"
    has_re "^fail file rc=-1 errno=22 errcmd=0 msg=spawn: info 'file': host file '/etc/hosts' line [0-9]+: bad entry"
    has_re "^fail second rc=-1 errno=2 errcmd=1 msg=spawn: cannot execute '/nonexistent/second' on host '[^']+': No such file or directory$"
    has "fail badpreput rc=-1 errno=22 errcmd=-1 msg=spawn: bad preput pair 'PARENT_TEST'"
    [ "$(count '^child ')" = 0 ] || fail "a child ran across hosts"
    no_stderr
    # the client API: errno, message and errcodes
    run 0 -n 1 "$D" fail
    has " No Errors"
    ;;
spawn_exit)
    # a spawned process's failure ends the run with a message naming its job
    run 3 -n 2 "$P" spawn 2 exit=3 "$MARK"
    err_is '^mpirun: spawned job 1 rank [01] \(pid [0-9]+\) exited with status 3$'
    # abort in a spawned job ends everything (the parent sleeps 30 s)
    start=$(date +%s)
    run 5 -n 1 "$P" spawn 1 abort parent-hang "$MARK"
    err_is '^mpirun: spawned job 1 rank 0 \(pid [0-9]+\) aborted the job with exit code 5: child abort$'
    [ $(($(date +%s) - start)) -lt 10 ] || fail "abort in a spawned job took too long"
    # the timeout's hang report (SIGUSR1) reaches spawned processes too
    start=$(date +%s)
    run 124 --timeout 2 -n 1 "$P" spawn 2 hang "$MARK"
    [ $(($(date +%s) - start)) -lt 10 ] || fail "timeout took too long"
    [ "$(grep -c '^child got SIGUSR1$' "$TMP/err")" = 2 ] || fail "no hang report: $(cat "$TMP/err")"
    [ "$(tail -n 1 "$TMP/err")" = "mpirun: job timed out after 2 s" ] || fail "timeout message"
    no_leftovers
    # a spawned job's /dev/shm entries go when it ends (the run goes on), and
    # at the end of the run for one still running then
    run 0 -n 1 "$P" shmcheck
    has "shmcheck removed"
    run 0 -n 1 "$P" spawn 1 shm "$MARK"
    f=$(sed -n 's/^child .* shm \(\/dev\/shm\/dcfa-[A-Za-z0-9_]*-spawntest\) .*/\1/p' "$TMP/out")
    [ -n "$f" ] || fail "no shm file name: $(cat "$TMP/out")"
    [ -e "$f" ] && fail "$f left behind"
    no_leftovers
    ;;
spawn_oversubscribe)
    # --no-oversubscribe: running + new > universe size is refused
    run 0 --no-oversubscribe -usize 2 -n 1 "$P" oversub 2
    has "oversub rc=-1 msg=spawn: 3 processes would run (1 running, 2 new), more than the universe size 2, and mpirun has --no-oversubscribe"
    [ "$(count '^child ')" = 0 ] || fail "a child ran"
    run 0 --no-oversubscribe --universe-size 3 -n 1 "$P" oversub 2
    has "oversub rc=0 msg="
    [ "$(count '^child ')" = 2 ] || fail "2 children expected"
    # across hosts mpirun counts for every host: the universe is the hosts' slots
    run 0 --no-oversubscribe -hosts "localhost:1,$(hostname):1" -n 1 "$P" oversub 2
    has "oversub rc=-1 msg=spawn: 3 processes would run (1 running, 2 new), more than the universe size 2, and mpirun has --no-oversubscribe"
    run 0 --no-oversubscribe -hosts "localhost:1,$(hostname):1" -n 1 "$P" oversub 1
    has "oversub rc=0 msg="
    DCFA_OVERSUBSCRIBE=0 DCFA_UNIVERSE_SIZE=2 run 0 -n 2 "$P" oversub 1
    has_re "^oversub rc=-1 msg=spawn: 3 processes would run"
    # --oversubscribe wins over the environment; the default allows it
    DCFA_OVERSUBSCRIBE=0 run 0 --oversubscribe -usize 1 -n 1 "$P" oversub 2
    has "oversub rc=0 msg="
    run 0 --universe-size=1 -n 1 "$P" oversub 3
    has "oversub rc=0 msg="
    # the universe size: option, environment, default max(job size, CPUs), hosts' slots
    run 0 -usize 7 -n 2 "$P" usize
    has "usize 7"
    DCFA_UNIVERSE_SIZE=5 run 0 -n 1 "$P" usize
    has "usize 5"
    DCFA_UNIVERSE_SIZE=5 run 0 --universe-size 6 -n 1 "$P" usize
    has "usize 6"
    cpus=$(getconf _NPROCESSORS_ONLN)
    run 0 -n 1 "$P" usize
    has "usize $cpus"
    run 0 -n $((cpus + 2)) "$P" usize
    has "usize $((cpus + 2))"
    run 0 -hosts "localhost:3,$(hostname):2" -n 2 "$P" usize
    has "usize 5"
    DCFA_PMI_VERSION=2 run 0 -usize 4 -n 1 "$D" usize # PMI-2's universeSize, through the client
    has "usize 4"
    run 2 -usize 0 -n 1 true
    run 2 --universe-size x -n 1 true
    DCFA_UNIVERSE_SIZE=abc run 2 -n 1 true
    grep -q "^mpirun: bad DCFA_UNIVERSE_SIZE 'abc'" "$TMP/err" || fail "bad DCFA_UNIVERSE_SIZE: $(cat "$TMP/err")"
    DCFA_OVERSUBSCRIBE=2 run 2 -n 1 true
    ;;
spawn_repeat)
    # 100 spawns one after the other, each child ending: the daemon frees the
    # ended jobs, so its fds and memory do not grow
    run 0 -n 1 "$P" repeat 100
    read -r _ n _ fds10 fds100 _ rss10 rss100 < <(grep '^repeat ' "$TMP/out")
    [ "$n" = 100 ] || fail "repeat: $(cat "$TMP/out" "$TMP/err")"
    [ "$fds100" -le "$((fds10 + 2))" ] || fail "mpirun's fds grew from $fds10 to $fds100"
    # (not under AddressSanitizer: its quarantine keeps freed memory on purpose)
    if ! ldd "$MPIRUN" 2> /dev/null | grep -q libasan; then
        [ "$rss100" -le "$((rss10 + 200))" ] || fail "mpirun's RSS grew from $rss10 to $rss100 kB"
    fi
    no_stderr
    ;;
spawn_client)
    # assist_spawn and the name functions over PMI-1 and PMI-2
    for v in 1 2; do
        for m in spawn fail names; do
            DCFA_PMI_VERSION=$v run 0 -n 2 "$D" $m
            has " No Errors"
            grep -q FAILED "$TMP/out" && fail "PMI-$v $m: $(cat "$TMP/out" "$TMP/err")"
            no_stderr
        done
    done
    DCFA_PMI_VERSION=2 run 0 -n 1 "$D" spawn
    [ "$(count '^dpm child rank [0-2] appnum [01] ok$')" = 3 ] || fail "children: $(cat "$TMP/out")"
    # a singleton: spawn and names start a daemon on demand (DCFA_MPIRUN);
    # without an mpirun to start, spawn gives ENOENT, names ENOSYS
    singleton -u DCFA_NAMESERVER DCFA_MPIRUN="$MPIRUN" || fail "singleton: $(cat "$TMP/out" "$TMP/err")"
    has " No Errors"
    [ "$(count '^dpm child rank [0-2] appnum [01] ok$')" = 3 ] || fail "children: $(cat "$TMP/out")"
    no_stderr
    singleton -u DCFA_NAMESERVER DCFA_MPIRUN=/nonexistent || fail "singleton: $(cat "$TMP/out" "$TMP/err")"
    has " No Errors"
    ;;
names)
    # the name service of one mpirun: one table for every rank and job
    run 0 -n 2 "$P" names
    has "publish dpm-shared rc=0 msg=success"
    has "publish dpm-shared rc=1 msg=key_already_present"
    [ "$(count '^lookup dpm-shared rc=0 port=port-of-rank-0 msg=success$')" = 2 ] ||
        fail "lookups of dpm-shared: $(cat "$TMP/out")"
    has "lookup dpm-missing rc=1 msg=service_not_found"
    has_re "^unpublish dpm-[0-9]+ rc=0 msg=success$"
    has_re "^unpublish dpm-[0-9]+ rc=1 msg=service_not_found$"
    has_re "^lookup dpm-[0-9]+ rc=1 msg=service_not_found$"
    has "publish bad;name rc=-1 msg=bad_request"
    has "names spawn rc=0"
    has_re "^child rank 0 size 1 .* lookup:cmd=lookup_result rc=0 port=port-of-rank-0 msg=success "
    no_stderr
    # across hosts the daemons pass the requests up to mpirun's table
    run 0 -hosts "localhost,$(hostname)" -ppn 1 "$P" names
    has "publish dpm-shared rc=1 msg=key_already_present"
    [ "$(count '^lookup dpm-shared rc=0 port=port-of-rank-0 msg=success$')" = 2 ] ||
        fail "lookups across daemons: $(cat "$TMP/out")"
    has "names spawn rc=0"
    has_re "^child rank 0 size 1 .* lookup:cmd=lookup_result rc=0 port=port-of-rank-0 msg=success "
    ;;
nameserver)
    # one name server shared by two separate mpirun runs and a singleton
    ( exec "$MPIRUN" --nameserver --port 0 >"$TMP/ns.out" 2>"$TMP/ns.err" ) &
    NSPID=$!
    for _ in $(seq 300); do [ -s "$TMP/ns.out" ] && break; sleep 0.1; done
    addr=$(head -n 1 "$TMP/ns.out")
    [[ $addr =~ ^[A-Za-z0-9._-]+:[0-9]+$ ]] || fail "name server printed '$addr'"
    export DCFA_NAMESERVER=$addr
    run 0 -n 1 "$P" pub dpm-ns-svc port-from-run-1
    has "publish dpm-ns-svc rc=0 msg=success"
    run 0 -n 1 "$P" lookup dpm-ns-svc
    has "lookup dpm-ns-svc rc=0 port=port-from-run-1 msg=success"
    run 0 -n 1 "$P" pub dpm-ns-svc another
    has "publish dpm-ns-svc rc=1 msg=key_already_present"
    DCFA_PMI_VERSION=2 run 0 -n 1 "$D" lookup dpm-ns-svc
    has "lookup dpm-ns-svc rc=0 port=port-from-run-1"
    env -u PMI_FD "$D" lookup dpm-ns-svc >"$TMP/out" 2>&1
    has "lookup dpm-ns-svc rc=0 port=port-from-run-1"
    singleton DCFA_MPIRUN=/nonexistent || fail "singleton: $(cat "$TMP/out" "$TMP/err")"
    has " No Errors"
    singleton DCFA_MPIRUN="$MPIRUN" || fail "singleton with a daemon: $(cat "$TMP/out" "$TMP/err")"
    has " No Errors"
    run 0 -n 2 "$D" names
    has " No Errors"
    run 0 -n 1 "$P" unpub dpm-ns-svc
    has "unpublish dpm-ns-svc rc=0 msg=success"
    run 0 -n 1 "$P" lookup dpm-ns-svc
    has "lookup dpm-ns-svc rc=1 msg=service_not_found"
    # malformed requests get an error reply; the server stays up
    port=${addr##*:}
    exec 3<>"/dev/tcp/127.0.0.1/$port" || fail "cannot connect to the name server"
    printf 'GARBAGE x\nLOOKUP\nPUBLISH a b c\n\nLOOKUP dpm-ns-svc\n' >&3
    for want in "ERR EINVAL" "ERR EINVAL" "ERR EINVAL" "ERR EINVAL" "ERR ENOENT"; do
        read -r -t 20 line <&3 || fail "no reply from the name server"
        [[ $line == "$want"* ]] || fail "reply '$line', expected '$want ...'"
    done
    exec 3>&-
    exec 3<>"/dev/tcp/127.0.0.1/$port"
    head -c 5000 /dev/zero | tr '\0' a >&3
    read -r -t 20 line <&3
    [ "$line" = "ERR EINVAL line too long" ] || fail "long line: '$line'"
    exec 3>&-
    run 0 -n 1 "$P" pub dpm-ns-after after
    has "publish dpm-ns-after rc=0 msg=success"
    # a server that is gone: a clear failure, not a hang
    kill -TERM $NSPID
    wait $NSPID
    st=$?
    NSPID=
    [ $st = 0 ] || fail "name server exit status $st after SIGTERM: $(cat "$TMP/ns.err")"
    [ -s "$TMP/ns.err" ] && fail "name server stderr: $(cat "$TMP/ns.err")"
    run 0 -n 1 "$P" lookup dpm-ns-after
    has "lookup dpm-ns-after rc=-1 msg=name_server_failed"
    "$MPIRUN" --nameserver --port x >/dev/null 2>&1
    [ $? = 2 ] || fail "bad port accepted"
    # reached at another address than loopback, the server wants its secret: the daemon's
    # and the singleton's client send it (AUTH) when DCFA_NAMESERVER_SECRET is set
    ip=$(hostname -I 2>/dev/null | tr ' ' '\n' | grep -E '^[0-9.]+$' | grep -v '^127\.' | head -n 1)
    if [ -n "$ip" ]; then
        export DCFA_NAMESERVER_SECRET=dpm-test-secret-$$-$RANDOM$RANDOM
        ( exec "$MPIRUN" --nameserver --bind 0.0.0.0 >"$TMP/ns.out" 2>"$TMP/ns.err" ) &
        NSPID=$!
        for _ in $(seq 300); do [ -s "$TMP/ns.out" ] && break; sleep 0.1; done
        export DCFA_NAMESERVER=$ip:$(sed -n '1s/.*://p' "$TMP/ns.out")
        run 0 -n 1 "$P" pub dpm-ns-secret port-s
        has "publish dpm-ns-secret rc=0 msg=success"
        env -u PMI_FD "$D" lookup dpm-ns-secret >"$TMP/out" 2>&1
        has "lookup dpm-ns-secret rc=0 port=port-s"
        DCFA_NAMESERVER_SECRET=not-the-secret-but-long-enough run 0 -n 1 "$P" lookup dpm-ns-secret
        has "lookup dpm-ns-secret rc=-1 msg=name_server_failed"
        grep -q "mpirun: the name server $DCFA_NAMESERVER refused this request: wrong secret" "$TMP/err" ||
            fail "no line about the refusal: $(cat "$TMP/err")"
        env -u DCFA_NAMESERVER_SECRET "$MPIRUN" -n 1 "$P" lookup dpm-ns-secret >"$TMP/out" 2>"$TMP/err"
        has "lookup dpm-ns-secret rc=-1 msg=name_server_failed"
        kill -TERM $NSPID
        wait $NSPID
        NSPID=
        unset DCFA_NAMESERVER_SECRET
    fi
    ;;
mpich_names)
    # an MPICH-built program's MPI_Publish_name/Lookup_name/Unpublish_name
    # under our mpirun: MPICH's own PMI-1 client against our daemon
    command -v mpicc.mpich >/dev/null || exit 77
    printf '%s\n' '#include <mpi.h>' '#include <stdio.h>' \
        'int main(int c, char **v) { char p[MPI_MAX_PORT_NAME] = "fake-port-1", n[MPI_MAX_PORT_NAME];' \
        'int r, rc; MPI_Init(&c, &v); MPI_Comm_rank(MPI_COMM_WORLD, &r);' \
        'MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);' \
        'if (r == 0) printf("publish %d\n", MPI_Publish_name("dpm-mpich", MPI_INFO_NULL, p));' \
        'if (r == 0) printf("again %s\n", MPI_Publish_name("dpm-mpich", MPI_INFO_NULL, p) ? "refused" : "accepted");' \
        'MPI_Barrier(MPI_COMM_WORLD); rc = MPI_Lookup_name("dpm-mpich", MPI_INFO_NULL, n);' \
        'printf("rank %d lookup %d %s\n", r, rc, rc ? "" : n); MPI_Barrier(MPI_COMM_WORLD);' \
        'if (r == 0) { printf("unpublish %d\n", MPI_Unpublish_name("dpm-mpich", MPI_INFO_NULL, p));' \
        'printf("lookup after %s\n", MPI_Lookup_name("dpm-mpich", MPI_INFO_NULL, n) ? "not found" : "found"); }' \
        'MPI_Finalize(); return 0; }' >"$TMP/pub.c"
    mpicc.mpich "$TMP/pub.c" -o "$TMP/pub" 2>/dev/null || exit 77
    run 0 -n 2 "$TMP/pub"
    has "publish 0"
    has "again refused"
    has "rank 0 lookup 0 fake-port-1"
    has "rank 1 lookup 0 fake-port-1"
    has "unpublish 0"
    has "lookup after not found"
    ;;
hydra_spawn)
    # the client's spawn and names under MPICH's Hydra (PMI-1 and PMI-2)
    command -v mpiexec.hydra >/dev/null || exit 77
    for v in 1 2; do
        for m in spawn names; do
            DCFA_PMI_VERSION=$v timeout 60 mpiexec.hydra -n 2 "$D" $m >"$TMP/out" 2>&1 </dev/null ||
                fail "Hydra PMI-$v $m: $(cat "$TMP/out")"
            has " No Errors"
            grep -q FAILED "$TMP/out" && fail "Hydra PMI-$v $m: $(cat "$TMP/out")"
        done
    done
    ;;
*)
    fail "unknown case"
    ;;
esac
exit 0
