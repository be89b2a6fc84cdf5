#!/bin/bash
# Launcher tests of singletons that need a process manager: the library
# starts "mpirun --dcfa-singleton FD JOBID" on demand (docs/launcher.md,
# "Singletons").
#   singleton_test.sh CASE MPIRUN SINGLETON_DPM
# SINGLETON_DPM is test/launcher/singleton_dpm.c (linked with the library).
# Every case checks that the daemon is gone afterwards (no process in the
# hidden mode for this singleton) and that no /dev/shm/dcfa-s<pid>* or
# ${TMPDIR:-/tmp}/dcfa-s<pid>* entry of the singleton or of the jobs it
# spawned is left.
# Exit 0 = pass, 77 = skipped, else fail.
set -u
CASE=$1 MPIRUN=$2 PROG=$3
TMP=$(mktemp -d /tmp/dcfa-singleton-test.XXXXXX)
SPID= NSPID= JOB= # the singleton and the name server running now, killed at exit
ZPID=             # a parent that does not reap the singleton (case after), killed at exit
# At exit, also after a failed check: the singleton, the name server, and the
# daemon of the last singleton (it ends the jobs it started on SIGTERM; a
# spawned child waiting for a singleton that is gone would keep it for ever),
# then whatever /dev/shm entries they left.
cleanup() {
    local d i
    [ -n "$SPID" ] && kill -KILL "$SPID" 2>/dev/null
    [ -n "$ZPID" ] && kill -KILL "$ZPID" 2>/dev/null
    [ -n "$NSPID" ] && kill -TERM "$NSPID" 2>/dev/null
    if [ -n "$JOB" ] && d=$(daemon_pids) && [ -n "$d" ]; then
        kill -TERM $d 2>/dev/null
        for i in $(seq 30); do kill -0 $d 2>/dev/null || break; sleep 0.1; done
        kill -KILL $d 2>/dev/null
    fi
    [ -n "$JOB" ] && find /dev/shm "${TMPDIR:-/tmp}" -maxdepth 1 -name "dcfa-s${JOB}[-_]*" \
        -delete 2>/dev/null
    rm -rf "$TMP"
}
trap cleanup EXIT

fail() { echo "FAIL [$CASE]: $*" >&2; exit 1; }
show() { echo "--- stdout"; head -c 3000 "$TMP/out"; echo "--- stderr"; head -c 3000 "$TMP/err"; }

# No launcher in sight: a singleton.
unset PMI_FD PMI_PORT PMI_ID PMI_RANK PMI_SIZE PMI_SPAWNED DCFA_JOBID DCFA_NAMESERVER

# A wrapper that notes each start of the daemon, then runs the real one.
cat >"$TMP/mpirun-wrap" <<EOF
#!/bin/sh
echo "\$*" >>"$TMP/starts"
exec "$MPIRUN" "\$@"
EOF
chmod +x "$TMP/mpirun-wrap"
export DCFA_MPIRUN=$TMP/mpirun-wrap
starts() { [ -f "$TMP/starts" ] && wc -l <"$TMP/starts" || echo 0; }

# start "MODE [ARG]" [ENV...]: the singleton in the background, its pid in SPID
start() {
    local mode=$1; shift
    rm -f "$TMP/starts"
    # shellcheck disable=SC2086 # MODE is split: the mode and its argument
    env "$@" "$PROG" $mode >"$TMP/out" 2>"$TMP/err" </dev/null &
    SPID=$!
    JOB=$SPID
}
# finish EXPECTED_STATUS: waits for it (at most 60 s)
finish() {
    local want=$1 got
    wait "$SPID"
    got=$?
    SPID=
    [ "$got" = "$want" ] || { show; fail "the singleton exited $got, expected $want"; }
}
# its daemon: the process of the hidden mode for job "s<pid>"
daemon_pids() { pgrep -f -- "--dcfa-singleton [0-9]+ s$JOB\$"; }
# gone: within 15 s (a loaded machine; it takes 1-2 s when idle), the daemon, the pids given and every /dev/shm entry of
# the singleton's jobs are gone
gone() {
    local i p left
    for i in $(seq 150); do
        left=$(daemon_pids)
        for p in "$@"; do kill -0 "$p" 2>/dev/null && left="$left $p"; done
        [ -z "$left" ] && break
        sleep 0.1
    done
    if [ -n "$left" ]; then
        ps -o pid,ppid,stat,args -p "$(echo $left | tr ' ' ,)"
        kill -KILL $left 2>/dev/null
        fail "processes left behind: $left"
    fi
    left=$(find /dev/shm -maxdepth 1 -name "dcfa-s${JOB}[-_]*" 2>/dev/null)
    [ -z "$left" ] || fail "/dev/shm entries left behind: $left"
    left=$(find "${TMPDIR:-/tmp}" -maxdepth 1 -name "dcfa-s${JOB}[-_]*" 2>/dev/null)
    [ -z "$left" ] || fail "${TMPDIR:-/tmp} entries left behind: $left"
    # no zombie of ours either: the daemon is not the singleton's child
    return 0
}
has() { grep -qFx -- "$1" "$TMP/out" || { show; fail "no line '$1'"; }; }
# await N REGEX: within 30 s, N lines of the singleton's stdout match
await() {
    for _ in $(seq 300); do
        [ "$(grep -Ec -- "$2" "$TMP/out")" -ge "$1" ] && return 0
        sleep 0.1
    done
    show
    fail "no $1 lines /$2/"
}
# the pids of the spawned children that wait forever
children() { sed -n 's/^child rank [01] pid \([0-9]*\) waiting$/\1/p' "$TMP/out"; }
no_stderr() { [ -s "$TMP/err" ] && { show; fail "unexpected stderr"; }; return 0; }

case $CASE in
spawn)
    # spawns 2 children, talks to them; its own fork()ed child is the only one
    # wait() sees; names through the same daemon; one daemon start
    start spawn
    finish 0
    gone
    has " No Errors"
    for r in 0 1; do has "child rank $r of 2 got 42 sum 5"; done
    no_stderr
    [ "$(starts)" = 1 ] || fail "the daemon was started $(starts) times: $(cat "$TMP/starts")"
    grep -Eq -- "^--dcfa-singleton [0-9]+ s$JOB\$" "$TMP/starts" || fail "started as '$(cat "$TMP/starts")'"
    # MPI_UNIVERSE_SIZE: the same default as mpirun (DCFA_UNIVERSE_SIZE here)
    start spawn DCFA_UNIVERSE_SIZE=3
    finish 0
    gone
    has " No Errors"
    # no daemon unless it is needed: MPI_Init + MPI_Finalize start none
    start plain
    finish 0
    gone
    has " No Errors"
    no_stderr
    [ "$(starts)" = 0 ] || fail "a plain singleton started a daemon"
    # 5 in a row: nothing accumulates
    for _ in 1 2 3 4 5; do
        start spawn
        finish 0
        gone
        has " No Errors"
    done
    ;;
names)
    start names
    finish 0
    gone
    has " No Errors"
    no_stderr
    [ "$(starts)" = 1 ] || fail "the daemon was started $(starts) times"
    # with DCFA_NAMESERVER the names go there: no daemon
    ( exec "$MPIRUN" --nameserver --port 0 >"$TMP/ns.out" 2>"$TMP/ns.err" ) &
    NSPID=$!
    for _ in $(seq 300); do [ -s "$TMP/ns.out" ] && break; sleep 0.1; done
    start names DCFA_NAMESERVER="$(head -n 1 "$TMP/ns.out")"
    finish 0
    gone
    has " No Errors"
    [ "$(starts)" = 0 ] || fail "a daemon was started although DCFA_NAMESERVER is set"
    kill -TERM "$NSPID"
    wait "$NSPID"
    NSPID=
    ;;
lifetime)
    # the singleton finalizes while its children still run: it is not held
    # back, the daemon forwards their output and ends after them
    start early
    finish 0
    grep -q late "$TMP/out" && fail "the children's late lines came before the singleton ended"
    [ -n "$(daemon_pids)" ] || fail "the daemon did not wait for the children"
    gone
    has " No Errors"
    for r in 0 1; do has "child rank $r of 2 got 42 sum 5 late"; done
    no_stderr
    # the singleton is killed: its children and the daemon end
    start hang
    for _ in $(seq 100); do [ "$(grep -c waiting "$TMP/out")" = 2 ] && break; sleep 0.1; done
    kids=$(sed -n 's/^child rank [01] pid \([0-9]*\) waiting$/\1/p' "$TMP/out")
    [ "$(echo $kids | wc -w)" = 2 ] || { show; fail "children did not start"; }
    kill -KILL "$SPID"
    finish 137
    gone $kids
    grep -Eq "^mpirun: the singleton \(pid $JOB\) ended without calling MPI_Finalize: ending the processes it spawned\$" "$TMP/err" ||
        { show; fail "no message for the singleton's end"; }
    # MPI_Abort in the singleton: its status, one message, the children end
    start abort
    finish 7
    gone
    [ "$(grep -c 'MPI_Abort(errorcode=7)' "$TMP/err")" = 1 ] || { show; fail "the abort message"; }
    # a spawned process fails: the run ends as under mpirun (the singleton too)
    start childfail
    finish 143
    gone
    grep -Eq '^mpirun: spawned job 1 rank 0 \(pid [0-9]+\) exited with status 3$' "$TMP/err" ||
        { show; fail "no message for the failed child"; }
    ;;
after)
    # The singleton's exit after MPI_Finalize, its children still running (they
    # wait for it forever): the daemon is not its parent and reads its status
    # from its pidfd or /proc. A non-zero status ends them and the daemon,
    # as mpirun ends a job whose rank exits so; the old daemon waited for them
    # for ever.
    after_msg() {
        grep -Eq "^mpirun: the singleton \(pid $JOB\) $1 after MPI_Finalize: ending the processes it spawned\$" \
            "$TMP/err" || { show; fail "no message '$1'"; }
    }
    start "after 3"
    await 2 '^child rank [01] pid [0-9]+ waiting$'
    kids=$(children)
    finish 3
    gone $kids
    has finalized
    after_msg "exited with status 3"
    # killed by a signal after MPI_Finalize
    start "after pause"
    await 1 '^finalized$'
    kids=$(children)
    [ "$(echo $kids | wc -w)" = 2 ] || { show; fail "children did not start"; }
    kill -KILL "$SPID"
    finish 137
    gone $kids
    after_msg "was killed by signal 9 \(Killed\)"
    # its parent does not reap it: the status comes from the zombie's /proc entry
    rm -f "$TMP/starts"
    bash -c '"$1" after 5 >"$2/out" 2>"$2/err" </dev/null & echo $! >"$2/spid"; exec sleep 60' \
        zombie-parent "$PROG" "$TMP" &
    ZPID=$!
    for _ in $(seq 300); do [ -s "$TMP/spid" ] && break; sleep 0.1; done
    JOB=$(cat "$TMP/spid")
    await 1 '^finalized$'
    kids=$(children)
    gone $kids
    grep -q '^State:.Z' "/proc/$JOB/status" || fail "the singleton is not a zombie"
    after_msg "exited with status 5"
    kill -KILL "$ZPID"
    wait "$ZPID" 2>/dev/null
    ZPID=
    # status 0: its children may go on, and the daemon waits for them; once
    # they are gone (here: killed, a failure the daemon reports) it ends
    start "after 0"
    await 2 '^child rank [01] pid [0-9]+ waiting$'
    kids=$(children)
    finish 0
    sleep 1
    [ -n "$(daemon_pids)" ] || fail "the daemon ended although the children run"
    for p in $kids; do kill -0 "$p" 2>/dev/null || fail "child $p ended"; done
    kill -KILL $kids
    gone $kids
    has finalized
    grep -q "after MPI_Finalize" "$TMP/err" && { show; fail "status 0 was taken for a failure"; }
    ;;
find)
    # how the library finds mpirun: DCFA_MPIRUN that is wrong is an error
    # (spawn fails, names fail), naming it
    start nompirun DCFA_MPIRUN=/nonexistent/mpirun
    finish 0
    gone
    has " No Errors"
    grep -q "DCFA_MPIRUN='/nonexistent/mpirun'" "$TMP/err" || { show; fail "no message naming DCFA_MPIRUN"; }
    # without DCFA_MPIRUN: next to the library, <libdir>/../bin/mpirun (an
    # installed tree); a copy of the library elsewhere finds none and says where
    # it looked (LD_LIBRARY_PATH wins over the program's RUNPATH)
    lib=$(ldd "$PROG" | sed -n 's/.*libdcfampi\.so[^ ]* => \(.*\) (0x.*/\1/p')
    [ -f "$lib" ] || exit 77
    readelf -d "$PROG" | grep -q RUNPATH || [ -z "$(readelf -d "$PROG" | grep RPATH)" ] || exit 77
    mkdir -p "$TMP/inst/lib" "$TMP/inst/bin"
    cp "$lib" "$TMP/inst/lib/$(basename "$lib")"
    # (the library's last resort is its install prefix: once this build was
    # installed there, e.g. by the MPICH stage of run_all.sh, it finds that one)
    if [ ! -x "$(dirname "$MPIRUN")/prefix/bin/mpirun" ]; then
        start nompirun -u DCFA_MPIRUN LD_LIBRARY_PATH="$TMP/inst/lib"
        finish 0
        gone
        has " No Errors"
        grep -q "no mpirun found (looked for $TMP/inst/lib/../bin/mpirun, $TMP/inst/lib/mpirun" "$TMP/err" ||
            { show; fail "no message naming where it looked"; }
    fi
    ln -s "$TMP/mpirun-wrap" "$TMP/inst/bin/mpirun"
    start spawn -u DCFA_MPIRUN LD_LIBRARY_PATH="$TMP/inst/lib"
    finish 0
    gone
    has " No Errors"
    [ "$(starts)" = 1 ] || fail "<libdir>/../bin/mpirun was not used"
    ;;
*)
    fail "unknown case"
    ;;
esac
exit 0
