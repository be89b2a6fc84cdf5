#!/bin/bash
# port_two_jobs.sh [MPIRUN [PROGRAM [TIMEOUT]]]
#
# Two separately started jobs connect through a port (dynamic processes,
# needs=dpm): a server job (MPIRUN -n 2 PROGRAM server FILE) opens a port and
# writes its name to FILE; once FILE is there, a client job (MPIRUN -n 2
# PROGRAM client FILE) reads it and connects; they exchange data over the
# inter-communicator (port_two_jobs.c). Passes iff both jobs exit 0 and print
# exactly " No Errors", within TIMEOUT seconds (default 60; each job gets
# SIGTERM then, SIGKILL 10 s later), and no process of either job remains.
#   MPIRUN   launcher command, may hold options (split on blanks, like
#            run_one.sh); default: this tree's build/mpirun, by absolute path.
#            For Open MPI, two jobs need a common ompi-server:
#              ompi-server --no-daemonize --report-uri /tmp/uri &
#              port_two_jobs.sh "mpirun.openmpi --allow-run-as-root --ompi-server file:/tmp/uri" PROG
#   PROGRAM  default: this tree's build/test/mpi/port_two_jobs.
# PORT_SERVER_MPIRUN, PORT_CLIENT_MPIRUN: the launcher command of one of the two jobs
# (split on blanks; default MPIRUN), e.g. "MPIRUN -hosts dcfa-h1" and "MPIRUN -hosts
# dcfa-h2", or "test/hosts/rsh dcfa-h1 MPIRUN": two mpiruns whose jobs run on different
# hosts (test/hosts/run_multihost.sh).
# Skipped (exit 77) with DCFA_TEST_DPM=0, like the needs=dpm entries of
# testlist.txt. The temporary directory (FILE, outputs) is removed on exit.
# Exit status: 0 pass, 1 fail, 2 usage error, 77 skipped.

set -u

here=$(cd "$(dirname "$0")" && pwd)
if [ "${DCFA_TEST_DPM:-1}" = 0 ]; then
    echo "port_two_jobs: SKIP: needs=dpm (DCFA_TEST_DPM=0)"
    exit 77
fi
if [ $# -gt 3 ]; then
    echo "usage: $0 [MPIRUN [PROGRAM [TIMEOUT]]]" >&2
    exit 2
fi
mpirun=${1:-$(readlink -f "$here/../../build/mpirun")}
prog=${2:-$here/../../build/test/mpi/port_two_jobs}
tmo=${3:-60}
prog=$(readlink -f "$prog")
if [ ! -x "$prog" ]; then
    echo "$0: $prog is not an executable" >&2
    exit 2
fi
case $tmo in
    '' | *[!0-9]*)
        echo "$0: bad timeout '$tmo'" >&2
        exit 2
        ;;
esac
read -r -a slauncher <<<"${PORT_SERVER_MPIRUN:-$mpirun}"
read -r -a clauncher <<<"${PORT_CLIENT_MPIRUN:-$mpirun}"

work=$(mktemp -d "${TMPDIR:-/tmp}/port_two_jobs.XXXXXX") || exit 2
tag="port_two_jobs-$$-$RANDOM$RANDOM"
spid=
cleanup() {
    [ -n "$spid" ] && kill -TERM "$spid" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT

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

start=$(date +%s)
env DCFA_TEST_TAG="$tag" timeout --kill-after=10 "$tmo" \
    "${slauncher[@]}" -n 2 "$prog" server "$work/port" \
    </dev/null >"$work/server.out" 2>"$work/server.err" &
spid=$!

ok=1
reason=
# Wait for the port name (bounded by TIMEOUT, and by the server's life).
while [ ! -s "$work/port" ]; do
    if ! kill -0 "$spid" 2>/dev/null; then
        ok=0
        reason="the server job ended before writing the port name"
        break
    fi
    if [ $(($(date +%s) - start)) -ge "$tmo" ]; then
        ok=0
        reason="no port name after $tmo s"
        break
    fi
    sleep 0.1
done

crc=-
if [ $ok -eq 1 ]; then
    left=$((tmo - ($(date +%s) - start)))
    [ $left -lt 1 ] && left=1
    env DCFA_TEST_TAG="$tag" timeout --kill-after=10 "$left" \
        "${clauncher[@]}" -n 2 "$prog" client "$work/port" \
        </dev/null >"$work/client.out" 2>"$work/client.err"
    crc=$?
fi
wait "$spid"
src=$?
spid=
end=$(date +%s)

check_job() { # NAME STATUS
    local out
    if [ "$2" = - ]; then
        return
    fi
    if [ "$2" -eq 124 ] || [ "$2" -eq 137 ]; then
        ok=0
        reason="$reason${reason:+; }$1 timed out (status $2)"
        return
    fi
    if [ "$2" -ne 0 ]; then
        ok=0
        reason="$reason${reason:+; }$1 exit status $2"
    fi
    out=$(cat "$work/$1.out" 2>/dev/null)
    if [ "$out" != " No Errors" ]; then
        ok=0
        reason="$reason${reason:+; }$1 stdout is not exactly ' No Errors'"
    fi
}
check_job server "$src"
check_job client "$crc"

# Leftover processes: give dying jobs a few seconds, then report and kill.
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
        echo "port_two_jobs: leaked process $pid: $(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)"
    done
    for pid in $leaked; do
        kill -KILL "$pid" 2>/dev/null
    done
fi

echo "port_two_jobs: ${slauncher[*]} -n 2 $prog server FILE, ${clauncher[*]} -n 2 $prog client FILE (timeout $tmo s):" \
    "server status $src, client status $crc, $((end - start)) s"
for f in server.out server.err client.out client.err; do
    [ -f "$work/$f" ] || continue
    echo "---- $f ----"
    head -c 20000 "$work/$f"
done
echo "----------------"
if [ $ok -eq 1 ]; then
    echo "port_two_jobs: PASS"
    exit 0
fi
echo "port_two_jobs: FAIL: $reason"
exit 1
