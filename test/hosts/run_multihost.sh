#!/bin/bash
# Multi-host tests on one machine: test hosts made of namespaces
# (test/hosts/hosts.sh), our mpirun across them (the daemon tree), Hydra
# across them, Slurm on this machine, MPI programs and the MPICH suite.
#
#   test/hosts/run_multihost.sh [--build DIR] [--prefix DIR] [--stages LIST] [--install]
#
#   --build DIR    our build tree (default: <repo>/build): mpirun, test programs
#   --prefix DIR   an install of it, for the MPICH suite (default DIR/prefix,
#                  made with cmake --install when missing)
#   --stages LIST  comma list of: launch,hydra,slurm,mpi_remote,mpi_cross,spawn,mpich_cross,
#                  isolate,twonet (default: all)
#   --install      apt-get install what a stage needs when it is missing
#                  (mpich, slurmctld slurmd slurm-client munge)
#
# The stages mpi_cross, spawn and mpich_cross need ranks on different hosts to talk,
# i.e. the ofi fabric: without it (mpiinfo lists no ofi) they are reported as
# NOT RUN, loudly; DCFA_MULTIHOST_REQUIRE_OFI=1 makes that a failure.
# Needs root (namespaces). Every stage that brings hosts up takes them down,
# also on failure. The last line is "N passed, N failed".
set -u
# The test hosts have fixed names (hosts.sh): one holder at a time on this machine. Runs
# that would overlap (two checkouts, a developer's manual hosts.sh session) take the same
# lock, DCFA_HOSTS_LOCK (/tmp/dcfa-hosts.lock), and wait for each other.
if [ -z "${DCFA_HOSTS_LOCKED:-}" ] && command -v flock > /dev/null; then
    DCFA_HOSTS_LOCKED=1 exec flock "${DCFA_HOSTS_LOCK:-/tmp/dcfa-hosts.lock}" bash "$0" "$@"
fi
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
BUILD=$REPO/build
PREFIX=""
STAGES=launch,hydra,slurm,mpi_remote,mpi_cross,spawn,mpich_cross,isolate,twonet
INSTALL=0
while [ $# -gt 0 ]; do
    case $1 in
    --build) BUILD=$(cd "$2" && pwd); shift 2 ;;
    --prefix) PREFIX=$2; shift 2 ;;
    --stages) STAGES=$2; shift 2 ;;
    --install) INSTALL=1; shift ;;
    -h|--help) sed -n 2,22p "$0"; exit 0 ;;
    *) echo "run_multihost: unknown argument $1" >&2; exit 2 ;;
    esac
done
[ -n "$PREFIX" ] || PREFIX=$BUILD/prefix
MPIRUN=$BUILD/mpirun
LT=$BUILD/test/launcher/lt_prog
PMI_BASIC=$BUILD/test/launcher/pmi_basic
PMI_ABORT=$BUILD/test/launcher/pmi_abort
MPIT=$BUILD/test/mpi
HOSTS_SH=$HERE/hosts.sh
export DCFA_RSH=$HERE/rsh
# the test hosts share this machine's cores: mpirun's default binding (each host's cores
# shared out among its ranks) would put every host's rank 0 on core 0 when it has several
export DCFA_BIND_TO=none
TMP=$(mktemp -d /tmp/dcfa-multihost.XXXXXX)
PASS=0 FAIL=0 NOTRUN=0
SUMMARY=()

cleanup() {
    # only what this run's stages make (another run's one-network hosts may be up)
    if [ "$STAGES" = twonet ]; then "$HOSTS_SH" down2; else "$HOSTS_SH" down; fi >/dev/null 2>&1
    rm -rf "$TMP"
}
trap cleanup EXIT

ok() { PASS=$((PASS + 1)); echo "  PASS  $*"; }
bad() { FAIL=$((FAIL + 1)); echo "  FAIL  $*"; }
has() { case ",$STAGES," in *",$1,"*) return 0 ;; esac; return 1; }

# run NAME WANT_STATUS mpirun-args...: mpirun with stdout/stderr in $TMP/out, $TMP/err
run() {
    local name=$1 want=$2
    shift 2
    timeout 90 "$MPIRUN" "$@" >"$TMP/out" 2>"$TMP/err" </dev/null
    local got=$?
    if [ "$got" != "$want" ]; then
        bad "$name: exit status $got, expected $want; stderr: $(head -c 400 "$TMP/err")"
        return 1
    fi
    return 0
}
one_line() { # NAME REGEX: stderr is exactly one line matching REGEX
    if [ "$(wc -l <"$TMP/err")" = 1 ] && grep -Eq "$2" "$TMP/err"; then
        ok "$1"
    else
        bad "$1: stderr '$(head -c 400 "$TMP/err")' does not match '$2'"
    fi
}
# nothing of job JOBID on any host: no /dev/shm entry, no process with the marker
# Empties the output files before a job started in the background: its own redirections
# run only after the fork, and a poll of them must not read the previous job's lines.
fresh_out() { : >"$TMP/out"; : >"$TMP/err"; }
clean_hosts() { # NAME JOBID [MARKER]
    local name=$1 jobid=$2 marker=${3:-} left=""
    sleep 0.5
    for h in $("$HOSTS_SH" list); do
        left+=$("$DCFA_RSH" "$h" "ls /dev/shm | grep '^dcfa-$jobid-'" 2>/dev/null)
    done
    if [ -n "$marker" ] && pgrep -f "$marker" >/dev/null; then
        left+=" processes: $(pgrep -af "$marker" | head -3 | tr '\n' ' ')"
        pkill -KILL -f "$marker"
    fi
    if pgrep -f -- "$MPIRUN --dcfa-daemon" >/dev/null; then
        left+=" daemons: $(pgrep -af -- "--dcfa-daemon" | head -3 | tr '\n' ' ')"
    fi
    if [ -z "$jobid" ]; then
        bad "$name: no job id captured"
    elif [ -n "$left" ]; then
        bad "$name: left behind: $left"
    else
        ok "$name"
    fi
}
daemon_pid_on() { # HOST: the assist daemon inside that host's namespaces
    local p
    for p in $(ip netns pids "$1" 2>/dev/null); do
        tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -q -- "--dcfa-daemon" && ! tr '\0' ' ' <"/proc/$p/cmdline" | grep -q "^sh " && { echo "$p"; return; }
    done
}

stage() { # NAME FUNCTION
    local name=$1 fn=$2 t0=$SECONDS p0=$PASS f0=$FAIL
    echo "== stage $name"
    $fn
    SUMMARY+=("$(printf '%-12s %4d passed %3d failed %5d s' "$name" $((PASS - p0)) $((FAIL - f0)) $((SECONDS - t0)))")
}

have_ofi() { "$BUILD/mpiinfo" 2>/dev/null | grep -i '^Fabrics:' | grep -qw ofi; }

hosts_up() { # N
    if ! "$HOSTS_SH" up "$1" >"$TMP/hosts.log" 2>&1; then
        bad "test hosts: cannot bring $1 hosts up: $(cat "$TMP/hosts.log")"
        return 1
    fi
    return 0
}

# ---- stage launch: our mpirun across 4 hosts (a relay in the tree) -------------------
st_launch() {
    hosts_up 4 || return
    local H=dcfa-h1,dcfa-h2,dcfa-h3,dcfa-h4 jid marker
    for v in 1 2; do
        run "pmi_basic PMI-$v" 0 -genv DCFA_PMI_VERSION $v -hosts $H -ppn 2 "$PMI_BASIC" &&
            { grep -q "No Errors" "$TMP/out" && ok "KVS across 4 hosts, PMI-$v" || bad "KVS PMI-$v: $(cat "$TMP/out")"; }
    done
    for f in 1 8; do
        DCFA_TREE_FANOUT=$f run "fanout $f" 0 -hosts $H -ppn 1 "$PMI_BASIC" &&
            { grep -q "No Errors" "$TMP/out" && ok "tree fan-out $f" || bad "fan-out $f"; }
    done
    run placement 0 -hosts $H -ppn 2 sh -c 'echo "$(hostname) $PMI_RANK $MPI_LOCALRANKID/$MPI_LOCALNRANKS"' &&
        { [ "$(sort -k2 -n "$TMP/out" | tr '\n' ' ')" = "dcfa-h1 0 0/2 dcfa-h1 1 1/2 dcfa-h2 2 0/2 dcfa-h2 3 1/2 dcfa-h3 4 0/2 dcfa-h3 5 1/2 dcfa-h4 6 0/2 dcfa-h4 7 1/2 " ] &&
            ok "block placement, hostnames, local ranks" || bad "placement: $(sort -k2 -n "$TMP/out" | tr '\n' ' ')"; }
    printf '# test hosts\ndcfa-h2 slots=3\ndcfa-h1:1   # one\n' >"$TMP/hf"
    run hostfile 0 -hostfile "$TMP/hf" -n 5 sh -c 'echo "$PMI_RANK $(hostname)"' &&
        { [ "$(sort -n "$TMP/out" | tr '\n' ' ')" = "0 dcfa-h2 1 dcfa-h2 2 dcfa-h2 3 dcfa-h1 4 dcfa-h2 " ] &&
            ok "host file slots and wrap-around" || bad "hostfile: $(sort -n "$TMP/out" | tr '\n' ' ')"; }
    # host lists per program (docs/launcher.md): program 2 on its own hosts, program 3 on the
    # global list where program 1 stopped (merged lists would put rank 2 on dcfa-h3)
    local hn='echo "$PMI_RANK $(hostname)"'
    run "per-program hosts" 0 -hosts dcfa-h1,dcfa-h2 -n 3 sh -c "$hn" : -hosts dcfa-h3,dcfa-h4 -n 4 sh -c "$hn" \
        : -n 1 sh -c "$hn" &&
        { [ "$(sort -n "$TMP/out" | tr '\n' ' ')" = "0 dcfa-h1 1 dcfa-h2 2 dcfa-h1 3 dcfa-h3 4 dcfa-h4 5 dcfa-h3 6 dcfa-h4 7 dcfa-h2 " ] &&
            ok "per-program hosts: program 2 on dcfa-h3,h4, programs 1 and 3 on the global list" ||
            bad "per-program hosts: $(sort -n "$TMP/out" | tr '\n' ' ')"; }
    run "per-program hosts, PMI" 0 -hosts dcfa-h1 -n 2 "$PMI_BASIC" : -hosts dcfa-h3,dcfa-h4 -n 2 "$PMI_BASIC" &&
        { grep -q "No Errors" "$TMP/out" && ok "per-program hosts: one KVS over both programs' hosts" ||
            bad "per-program hosts PMI: $(cat "$TMP/out")"; }
    run "per-program unknown host" 2 -hosts dcfa-h1 -n 1 "$LT" exit 0 0 : -hosts dcfa-h2,no-such-host -n 2 "$LT" exit 0 0 &&
        { [ "$(tail -n 1 "$TMP/err")" = "mpirun: -hosts of program 2: host 'no-such-host' cannot be reached" ] &&
            grep -q "^mpirun: cannot start the assist daemon on host 'no-such-host'" "$TMP/err" &&
            ok "an unknown host of program 2: named with its option and program, status 2" ||
            bad "per-program unknown host: $(cat "$TMP/err")"; }
    run "process mapping" 0 -hosts dcfa-h1,dcfa-h2 -ppn 2 -n 6 "$LT" env MPI_LOCALNRANKS &&
        { [ "$(sort "$TMP/out" | uniq -c | awk '{printf "%s %s ", $1, $2}')" = "2 MPI_LOCALNRANKS=2 4 MPI_LOCALNRANKS=4 " ] &&
            ok "node sizes with wrap-around" || bad "mapping: $(sort "$TMP/out" | uniq -c | tr '\n' ' ')"; }
    run "exit code" 3 -hosts $H -ppn 2 "$LT" exit 3 7 &&
        one_line "remote exit status names rank, pid and host" '^mpirun: rank 7 \(pid [0-9]+ on dcfa-h4\) exited with status 3$'
    run signal 139 -hosts $H -ppn 2 "$LT" signal 11 5 &&
        one_line "remote signal" '^mpirun: rank 5 \(pid [0-9]+ on dcfa-h3\) killed by signal 11 \(Segmentation fault\)$'
    run abort 7 -hosts $H -ppn 1 "$PMI_ABORT" &&
        one_line "remote abort" '^mpirun: rank 1 \(pid [0-9]+ on dcfa-h2\) aborted the job with exit code 7: test abort: giving up$'
    run nofinalize 1 -hosts $H -ppn 1 "$LT" nofinalize 3 &&
        one_line "remote exit without finalize" '^mpirun: rank 3 \(pid [0-9]+ on dcfa-h4\) exited with status 0 without calling MPI_Finalize$'
    local t0=$SECONDS
    run timeout 124 --timeout 3 -hosts $H -ppn 1 "$LT" hang && {
        local dumps=0
        for r in 0 1 2 3; do grep -q "^rank $r: waiting in hang$" "$TMP/err" && dumps=$((dumps + 1)); done
        [ $dumps = 4 ] && [ "$(tail -n 1 "$TMP/err")" = "mpirun: job timed out after 3 s" ] &&
            [ $((SECONDS - t0)) -lt 10 ] && ok "timeout: every host's ranks dump, then the job ends" ||
            bad "timeout: $dumps dumps, $((SECONDS - t0)) s, stderr $(tail -n 2 "$TMP/err" | tr '\n' ' ')"
    }
    fresh_out
    "$MPIRUN" --timeout 5 -hosts $H -ppn 1 "$LT" hang >"$TMP/out" 2>"$TMP/err" </dev/null &
    local mp=$!
    sleep 2
    kill -USR1 $mp
    wait $mp
    local n1
    n1=$(grep -c "waiting in hang" "$TMP/err")
    [ "$n1" = 8 ] && ok "SIGUSR1 to mpirun: a hang report from every rank on every host (then the timeout's)" ||
        bad "SIGUSR1: $n1 reports, expected 8"
    head -c 500000 /dev/urandom >"$TMP/in"
    timeout 60 "$MPIRUN" -hosts $H -ppn 2 "$LT" cat <"$TMP/in" >"$TMP/out" 2>"$TMP/err"
    cmp -s "$TMP/in" "$TMP/out" && ok "stdin to rank 0, byte-exact" || bad "stdin: $(wc -c <"$TMP/out") bytes"
    run "output" 0 -hosts $H -ppn 2 "$LT" fill 200000 &&
        { [ "$(wc -c <"$TMP/out")" = 1600000 ] && [ "$(wc -c <"$TMP/err")" = 1600000 ] &&
            [ "$(tr -cd H <"$TMP/out" | wc -c)" = 200000 ] && ok "stdout/stderr volume from every host" ||
            bad "output: $(wc -c <"$TMP/out") / $(wc -c <"$TMP/err") bytes"; }
    run "-l" 0 -l -hosts $H -ppn 2 "$LT" lines 3000 && {
        local r good=0
        for r in 0 1 2 3 4 5 6 7; do
            grep "^\[$r\] " "$TMP/out" | sed "s/^\[$r\] //" >"$TMP/got"
            seq 0 2999 | sed "s/^/rank $r line /" | cmp -s - "$TMP/got" && good=$((good + 1))
        done
        [ $good = 8 ] && ok "-l: whole tagged lines through the relays" || bad "-l: $good of 8 ranks intact"
    }
    # crash: every host's /dev/shm is cleaned, the grandchildren killed
    marker="mh-crash-$$-$RANDOM"
    run crash 139 -hosts $H -ppn 1 "$LT" shmcrash "$marker"
    jid=$(sed -n 's/^jobid //p' "$TMP/out" | head -n 1)
    clean_hosts "cleanup on every host after a crash" "$jid" "$marker"
    # a daemon dies: named, the job ends, its host is cleaned up
    marker="mh-dead-$$-$RANDOM"
    fresh_out
    "$MPIRUN" -hosts $H -ppn 1 sh -c "touch /dev/shm/dcfa-\$DCFA_JOBID-d; echo \$DCFA_JOBID; exec $LT linger $marker" \
        >"$TMP/out" 2>"$TMP/err" </dev/null &
    mp=$!
    local dp="" i
    for i in $(seq 1 50); do dp=$(daemon_pid_on dcfa-h3); [ -n "$dp" ] && [ "$(wc -l <"$TMP/out")" -ge 4 ] && break; sleep 0.1; done
    sleep 0.3
    kill -KILL "$dp" 2>/dev/null
    wait $mp
    local st=$?
    [ $st = 1 ] && grep -q "^mpirun: lost the assist daemon on host 'dcfa-h3'" "$TMP/err" &&
        ok "a killed daemon is named (status 1)" || bad "dead daemon: status $st, $(cat "$TMP/err")"
    clean_hosts "cleanup after a lost daemon" "$(head -n 1 "$TMP/out")" "$marker"
    # mpirun gets SIGTERM: every host cleaned
    marker="mh-term-$$-$RANDOM"
    fresh_out
    "$MPIRUN" -hosts $H -ppn 1 sh -c "touch /dev/shm/dcfa-\$DCFA_JOBID-t; echo \$DCFA_JOBID; exec $LT linger $marker" \
        >"$TMP/out" 2>"$TMP/err" </dev/null &
    mp=$!
    for i in $(seq 1 50); do [ "$(wc -l <"$TMP/out")" -ge 4 ] && break; sleep 0.1; done
    kill -TERM $mp
    wait $mp
    st=$?
    [ $st = 143 ] && grep -q "^mpirun: received signal 15" "$TMP/err" && ok "SIGTERM to mpirun" ||
        bad "SIGTERM: status $st $(cat "$TMP/err")"
    clean_hosts "cleanup after SIGTERM" "$(head -n 1 "$TMP/out")" "$marker"
    # bad input
    run "unknown host" 1 -hosts dcfa-h1,no-such-host -ppn 1 "$PMI_BASIC" &&
        one_line "unknown host: one line naming it" "^mpirun: cannot start the assist daemon on host 'no-such-host': rsh: no-such-host: unknown test host"
    sleep 0.3
    pgrep -f -- "$MPIRUN --dcfa-daemon" >/dev/null && bad "daemons left after the unknown host" || ok "nothing left after the unknown host"
    "$HOSTS_SH" down
}

# ---- stage hydra: MPICH's Hydra starts our ranks on 2 test hosts --------------------
st_hydra() {
    if ! command -v mpiexec.hydra >/dev/null; then
        [ $INSTALL = 1 ] && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mpich >/dev/null 2>&1
        command -v mpiexec.hydra >/dev/null || { bad "Hydra: mpiexec.hydra is not installed (apt-get install mpich)"; return; }
    fi
    hosts_up 2 || return
    local hy=(timeout 90 mpiexec.hydra -launcher ssh -launcher-exec "$DCFA_RSH" -iface dcfa-br0 -hosts dcfa-h1,dcfa-h2)
    for v in 1 2; do
        DCFA_PMI_VERSION=$v "${hy[@]}" -n 4 -ppn 2 "$PMI_BASIC" >"$TMP/out" 2>&1 </dev/null &&
            grep -q "No Errors" "$TMP/out" && ok "Hydra across 2 hosts, PMI-$v" || bad "Hydra PMI-$v: $(head -c 400 "$TMP/out")"
    done
    "${hy[@]}" -n 4 -ppn 2 sh -c 'echo "$(hostname) $PMI_RANK"' >"$TMP/out" 2>&1 </dev/null
    [ "$(sort -k2 -n "$TMP/out" | tr '\n' ' ')" = "dcfa-h1 0 dcfa-h1 1 dcfa-h2 2 dcfa-h2 3 " ] &&
        ok "Hydra placement" || bad "Hydra placement: $(cat "$TMP/out")"
    if have_ofi; then # ranks on two hosts talk: the ofi fabric
        DCFA_FABRICS=ofi FI_PROVIDER="tcp;ofi_rxm" FI_TCP_IFACE=eth0 \
            "${hy[@]}" -n 2 -ppn 1 "$MPIT/comm_split_type" >"$TMP/out" 2>&1 </dev/null
        grep -q "No Errors" "$TMP/out" && ok "Hydra: split_type across hosts" || bad "Hydra split_type: $(head -c 300 "$TMP/out")"
    else
        not_run "Hydra: an MPI program with ranks on 2 hosts"
    fi
    "${hy[@]}" -n 1 "$MPIT/comm_split_type" >"$TMP/out" 2>&1 </dev/null
    grep -q "No Errors" "$TMP/out" && ok "Hydra: an MPI program on a test host" || bad "Hydra MPI: $(head -c 300 "$TMP/out")"
    "$HOSTS_SH" down
}

# ---- stage slurm: srun --mpi=pmi2 on this machine, then heterogeneous jobs on 2 test hosts
slurm_run() { # MPI_PROGRAM...: test/slurm/slurm_test.sh, its results counted here
    if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
        [ $INSTALL = 1 ] && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurmctld slurmd slurm-client munge >/dev/null 2>&1
    fi
    "$REPO/test/slurm/slurm_test.sh" "$PMI_BASIC" "$PMI_ABORT" "$@" >"$TMP/slurm.log" 2>&1
    grep -E "^(PASS|FAIL)" "$TMP/slurm.log" | sed 's/^/  /'
    local p f
    p=$(tail -n 1 "$TMP/slurm.log" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\1/p')
    f=$(tail -n 1 "$TMP/slurm.log" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\2/p')
    if [ -z "$p" ]; then
        bad "Slurm: no result line: $(tail -n 5 "$TMP/slurm.log")"
        return
    fi
    PASS=$((PASS + p))
    FAIL=$((FAIL + f))
    [ "$f" = 0 ] || tail -n 30 "$TMP/slurm.log" | grep -v "^PASS" | sed 's/^/    /'
}
st_slurm() {
    slurm_run "$MPIT/comm_split_type" "$MPIT/sendrecv" "$MPIT/coll_bcast" "$MPIT/spawn_basic" \
        "$MPIT/spawn_multiple"
    # heterogeneous jobs (srun ... : ...): a slurmd in each of two test hosts, a component
    # on each, one MPI_COMM_WORLD over both
    hosts_up 2 || return
    SLURM_HOSTS="dcfa-h1 dcfa-h2" slurm_run "$MPIT/mpmd_hosts" "$MPIT/sendrecv" "$MPIT/coll_bcast" \
        "$MPIT/comm_split_type" "$MPIT/coll_algos"
    "$HOSTS_SH" down
}

# MPI test programs of test/mpi (a representative set: pt2pt, protocols,
# communicators, collectives, errors) at N ranks through the given mpirun options
MPI_SET="sendrecv nonblocking wildcard order probe truncate rndv_rtr rndv_mixed pt2pt_dtype ring
comm_dup comm_split comm_split_type intercomm coll_barrier coll_bcast coll_reduce coll_forms
coll_algos err_classes attr_keyval info group_ops neighbours rma_atomic"
mpi_set() { # LABEL NP mpirun-args...
    local label=$1 np=$2 prog
    shift 2
    for prog in $MPI_SET; do
        [ -x "$MPIT/$prog" ] || { bad "$label: $prog is not built"; continue; }
        run "$label $prog" 0 "$@" -n "$np" "$MPIT/$prog" &&
            { grep -q "No Errors" "$TMP/out" && ok "$label $prog -n $np" || bad "$label $prog: no 'No Errors'"; }
    done
}

# ---- stage mpi_remote: MPI programs through a remote daemon (ranks on one host) -----
st_mpi_remote() {
    hosts_up 2 || return
    mpi_set "remote" 4 -hosts dcfa-h1
    mpi_set "remote-pmi2" 3 -genv DCFA_PMI_VERSION 2 -hosts dcfa-h2
    "$HOSTS_SH" down
}

# ---- stage mpi_cross: MPI programs with ranks on 2 hosts (needs ofi) ------------------
ofi_env() {
    export DCFA_FABRICS=ofi FI_PROVIDER="tcp;ofi_rxm" FI_TCP_IFACE=eth0
}
not_run() {
    if [ "${DCFA_MULTIHOST_REQUIRE_OFI:-0}" = 1 ]; then
        bad "$1: needs the ofi fabric, which this build does not have"
    else
        NOTRUN=$((NOTRUN + 1))
        echo "  NOT RUN  $1: needs the ofi fabric (mpiinfo lists no ofi); written, waiting for ofi"
    fi
}
st_mpi_cross() {
    have_ofi || { not_run "MPI programs across 2 hosts"; return; }
    hosts_up 2 || return
    (
        ofi_env
        mpi_set "cross" 4 -hosts dcfa-h1,dcfa-h2
        mpi_set "cross-block" 4 -hosts dcfa-h1,dcfa-h2 -ppn 2
        # a host list per program: program 1 on dcfa-h1, program 2 on dcfa-h2 (merged lists
        # would alternate), one world: allreduce, a ring and 256 KiB across the programs
        run "cross per-program hosts" 0 -hosts dcfa-h1 -n 2 "$MPIT/mpmd_hosts" --print : \
            -hosts dcfa-h2 -n 3 "$MPIT/mpmd_hosts" --print &&
            { [ "$(sed -n 's/^mpmd_hosts rank \([0-9]*\) appnum \([0-9]*\) host /\1 \2 /p' "$TMP/out" | sort -n | tr '\n' ' ')" = "0 0 dcfa-h1 1 0 dcfa-h1 2 1 dcfa-h2 3 1 dcfa-h2 4 1 dcfa-h2 " ] &&
                grep -qx " No Errors" "$TMP/out" &&
                ok "per-program hosts: ranks 0-1 on dcfa-h1, 2-4 on dcfa-h2, one world across them" ||
                bad "cross per-program hosts: $(tr '\n' ' ' <"$TMP/out") $(head -c 300 "$TMP/err")"; }
        # packets to ofi connections that idled are found (progress polls woken ones only:
        # docs/fabric.md, "Waking connections"), with lanes offered after one packet
        MPI_SET="wake_idle" mpi_set "cross-wake" 6 -genv DCFA_OFI_LANE_AFTER 1 -genv DCFA_OFI_LANES 3 -hosts dcfa-h1,dcfa-h2
        # rendezvous and RMA on bulk endpoints of their own (DCFA_OFI_SPLIT=1)
        MPI_SET="rndv_rtr rndv_mixed rma_atomic" mpi_set "cross-split" 4 -genv DCFA_OFI_SPLIT 1 -hosts dcfa-h1,dcfa-h2
        # 16 ranks on 2 hosts, each talking to its ring neighbours only: at most 2
        # connections per rank, counted after MPI_Finalize (the program checks)
        run "neighbours 16 ranks" 0 -hosts dcfa-h1,dcfa-h2 -ppn 8 -n 16 "$MPIT/neighbours" &&
            { grep -q "No Errors" "$TMP/out" && ok "16 ranks on 2 hosts, ring neighbours: at most 2 connections each" ||
                bad "neighbours 16: no 'No Errors'"; }
        # the fabrics the library picks itself: ofi opened late, off MPI_Init's path
        # (docs/fabric.md, "Opening ofi late"); ofi_late checks /proc/self/maps when
        # MPI_Init returns (the thread held back 1.5 s) and sends first messages from 4
        # threads of every rank (MPI_THREAD_MULTIPLE)
        # (the first contacts of these go over sock while ofi opens, the later ones over ofi:
        # MPI_ANY_SOURCE, ordering and probes across the two fabrics)
        (unset DCFA_FABRICS
            MPI_SET="sendrecv rndv_mixed coll_bcast rma_atomic wildcard order probe" mpi_set "cross-auto" 4 -hosts dcfa-h1,dcfa-h2
            run "cross-auto ofi_late" 0 -genv OFI_LATE_SPANS 1 -genv DCFA_OFI_LATE_DELAY 1500 \
                -hosts dcfa-h1,dcfa-h2 -n 4 "$MPIT/ofi_late" &&
                { grep -q "No Errors" "$TMP/out" &&
                    ok "auto across 2 hosts: libfabric not mapped when MPI_Init returns, first messages from 4 threads" ||
                    bad "cross-auto ofi_late: no 'No Errors'"; }
            # first contacts while ofi opens go over sock (docs/fabric.md, "First contact over
            # sock"): ofi held back 2 s, the first message across hosts within 1 s, later
            # pairs over ofi; the fabric of each pair from DCFA_STATS's dcfa-conn lines
            run "cross-auto first contact over sock" 0 -genv OFI_LATE_SPANS 1 -genv DCFA_OFI_LATE_DELAY 2000 \
                -genv OFI_LATE_FIRST_MS 1000 -genv DCFA_STATS 1 -hosts dcfa-h1,dcfa-h2 -ppn 2 -n 4 "$MPIT/ofi_late" &&
                { grep -q "No Errors" "$TMP/out" &&
                    grep -q 'dcfa-conn rank=0 peer=2 fabric=sock .*why="sock: first contact while ofi opens"' "$TMP/err" &&
                    grep -q 'dcfa-conn rank=1 peer=3 fabric=sock' "$TMP/err" &&
                    grep -q 'dcfa-conn rank=0 peer=3 fabric=ofi' "$TMP/err" &&
                    grep -q 'dcfa-conn rank=1 peer=2 fabric=ofi' "$TMP/err" &&
                    ok "auto across 2 hosts, ofi held back 2 s: $(grep -o 'first message.*' "$TMP/out") over sock, later pairs over ofi" ||
                    bad "cross-auto first contact over sock: $(head -c 300 "$TMP/out") $(grep -h 'dcfa-conn\|rank [0-9]\]' "$TMP/err" | head -c 900)"; }
            # ... and without it (DCFA_OFI_LATE_SOCK=0) the first message waits for ofi: must fail
            timeout 90 "$MPIRUN" -genv OFI_LATE_SPANS 1 -genv DCFA_OFI_LATE_DELAY 2000 -genv OFI_LATE_FIRST_MS 1000 \
                -genv DCFA_OFI_LATE_SOCK 0 -hosts dcfa-h1,dcfa-h2 -ppn 2 -n 4 "$MPIT/ofi_late" >"$TMP/out" 2>"$TMP/err" </dev/null
            [ $? != 0 ] && grep -q "the first message to rank . on the other host took" "$TMP/err" &&
                ok "ofi_late's first-message bound fails when first contacts wait for ofi (DCFA_OFI_LATE_SOCK=0)" ||
                bad "ofi_late with DCFA_OFI_LATE_SOCK=0 did not fail: $(head -c 300 "$TMP/err")"
            # the same with ofi opened inside MPI_Init: the check must fail
            timeout 90 "$MPIRUN" -genv OFI_LATE_SPANS 1 -genv DCFA_OFI_LATE 0 -hosts dcfa-h1,dcfa-h2 -n 2 \
                "$MPIT/ofi_late" >"$TMP/out" 2>"$TMP/err" </dev/null
            [ $? != 0 ] && grep -q "libfabric is mapped when MPI_Init_thread returns" "$TMP/err" &&
                ok "ofi_late fails when ofi opens in MPI_Init (DCFA_OFI_LATE=0)" ||
                bad "ofi_late with DCFA_OFI_LATE=0 did not fail: $(head -c 300 "$TMP/err")"
            # a provider that cannot open, found after MPI_Init: one clear line, the job ends
            FI_PROVIDER=no-such-provider run "cross-auto: ofi cannot open" 1 -hosts dcfa-h1,dcfa-h2 -n 2 \
                "$MPIT/sendrecv" &&
                { grep -q "cannot open the ofi fabric, needed for processes on other hosts" "$TMP/err" &&
                    ok "auto across 2 hosts: ofi that cannot open late ends the job with the reason" ||
                    bad "cross-auto ofi cannot open: $(head -c 300 "$TMP/err")"; }
            echo "PASS=$PASS FAIL=$FAIL" >"$TMP/counts")
        eval "$(cat "$TMP/counts")"
        echo "PASS=$PASS FAIL=$FAIL" >"$TMP/counts"
    )
    eval "$(cat "$TMP/counts")"
    # auto with no provider named (docs/fabric.md, "ofi or sock across hosts"): without RDMA
    # hardware libfabric is never loaded, every pair across hosts goes over the daemons'
    # connections, none as a first contact while ofi opens; DCFA_OFI_AUTO=1 opens it again,
    # late
    (
        unset DCFA_FABRICS FI_PROVIDER FI_TCP_IFACE DCFA_OFI_PROVIDER DCFA_OFI_AUTO
        if ls /sys/class/infiniband/* /sys/class/cxi/* /dev/hfi1_0 >/dev/null 2>&1; then
            NOTRUN=$((NOTRUN + 1))
            echo "  NOT RUN  auto without RDMA hardware: this machine has some"
        else
            run "auto no-hardware ofi_late" 0 -genv OFI_LATE_SPANS 0 -genv DCFA_STATS 1 \
                -hosts dcfa-h1,dcfa-h2 -ppn 2 -n 4 "$MPIT/ofi_late" &&
                { grep -q "No Errors" "$TMP/out" &&
                    [ "$(grep -c 'dcfa-conn rank=[0-3] peer=[0-3] fabric=sock ' "$TMP/err")" = 8 ] &&
                    ! grep -q 'fabric=ofi\|while ofi opens' "$TMP/err" &&
                    ok "auto across 2 hosts without RDMA hardware: libfabric never mapped, the 8 pairs across hosts over sock" ||
                    bad "auto no-hardware: $(head -c 300 "$TMP/out") $(grep -h 'dcfa-conn\|rank [0-9]\]' "$TMP/err" | head -c 900)"; }
            MPI_SET="sendrecv rndv_mixed coll_bcast rma_atomic rma_passive wildcard order probe" mpi_set "auto-sock" 4 -hosts dcfa-h1,dcfa-h2
            # one rank per host: idle waits sleep on the sockets (DCFA_SLEEP_US,
            # docs/architecture.md); at 0 every idle pass sleeps, and nothing may be lost
            run "auto-sock idle_sleep" 0 -hosts dcfa-h1,dcfa-h2 -ppn 1 -n 2 "$MPIT/idle_sleep" --expect-sleep --verbose &&
                { grep -q "No Errors" "$TMP/out" &&
                    ok "one rank per host over sock: the waiting rank slept on its socket ($(grep -o '[0-9.]* CPU s in 0.9 s' "$TMP/out"))" ||
                    bad "auto-sock idle_sleep: $(head -c 300 "$TMP/out") $(head -c 300 "$TMP/err")"; }
            MPI_SET="sendrecv rndv_mixed wildcard order probe cancel rma_atomic coll_bcast" \
                mpi_set "auto-sock-sleep0" 2 -genv DCFA_SLEEP_US 0 -hosts dcfa-h1,dcfa-h2 -ppn 1
            # DCFA_TCP_CONGESTION: every TCP connection between the hosts takes it (the program
            # reads each of its sockets' TCP_CONGESTION; docs/fabric.md)
            DCFA_TCP_CONGESTION=reno TCP_CC_EXPECT=reno \
                run "auto-sock tcp_cc" 0 -hosts dcfa-h1,dcfa-h2 -ppn 2 -n 4 "$MPIT/tcp_cc" &&
                { grep -q "No Errors" "$TMP/out" &&
                    ok "DCFA_TCP_CONGESTION=reno: the TCP connections of 4 ranks on 2 hosts use reno" ||
                    bad "auto-sock tcp_cc: $(head -c 300 "$TMP/out") $(head -c 300 "$TMP/err")"; }
            # two ranks per host share it: no rank may sleep (the program checks)
            run "auto-sock idle_sleep ppn2" 0 -hosts dcfa-h1,dcfa-h2 -ppn 2 -n 4 "$MPIT/idle_sleep" &&
                { grep -q "No Errors" "$TMP/out" && ok "two ranks per host over sock and shm: no waiting rank slept" ||
                    bad "auto-sock idle_sleep ppn2: $(head -c 300 "$TMP/err")"; }
            run "auto DCFA_OFI_AUTO=1 ofi_late" 0 -genv OFI_LATE_SPANS 1 -genv DCFA_OFI_AUTO 1 -genv DCFA_OFI_LATE_DELAY 1500 \
                -genv DCFA_STATS 1 -hosts dcfa-h1,dcfa-h2 -n 2 "$MPIT/ofi_late" &&
                { grep -q "No Errors" "$TMP/out" && grep -q 'why="sock: first contact while ofi opens"' "$TMP/err" &&
                    ok "DCFA_OFI_AUTO=1: libfabric opened late across hosts without hardware, first contacts over sock" ||
                    bad "auto DCFA_OFI_AUTO=1: $(head -c 300 "$TMP/out") $(grep -h 'dcfa-conn' "$TMP/err" | head -c 600)"; }
            # a host whose interface goes down (docs/faults.md, "A host that stops answering"):
            # a rendezvous under way (busy, h2's link) or an idle connection (idle, h1's: only
            # keepalive finds it) ends the job within DCFA_NET_TIMEOUT with a line naming the
            # peer and its host; without the bound (0) the idle pair must still wait after 15 s
            for nd in "busy dcfa-h2 4" "idle dcfa-h1 4" "idle dcfa-h1 0"; do
                set -- $nd
                fresh_out
                timeout 90 "$MPIRUN" -genv NET_DOWN_MODE "$1" -genv DCFA_NET_TIMEOUT "$3" \
                    -genv NET_DOWN_LIMIT 60 -hosts dcfa-h1,dcfa-h2 -n 2 "$MPIT/net_down" \
                    >"$TMP/out" 2>"$TMP/err" </dev/null &
                ndpid=$!
                for _ in $(seq 200); do grep -q "net_down ready" "$TMP/out" && break; sleep 0.1; done
                t0=$(date +%s)
                "$DCFA_RSH" "$2" "ip link set eth0 down"
                if [ "$3" = 0 ]; then
                    sleep 15
                    kill -0 $ndpid 2>/dev/null &&
                        ok "net_down $1, no DCFA_NET_TIMEOUT: still waiting after 15 s (the bound is what ends it)" ||
                        bad "net_down $1 without a bound ended: $(head -c 300 "$TMP/err")"
                    kill -TERM $ndpid 2>/dev/null
                    wait $ndpid
                else
                    wait $ndpid
                    rc=$?
                    took=$(($(date +%s) - t0))
                    [ $rc != 0 ] && [ $rc != 124 ] && [ $took -lt 40 ] &&
                        grep -Eq "rank [01] on host dcfa-h[12]: .*(DCFA_NET_TIMEOUT|no route)" "$TMP/err" &&
                        ok "net_down $1, $2's link down: $(grep -o 'sock: cannot [a-z]* [a-z]* rank [01] on host [a-z0-9-]*' "$TMP/err" | head -1) after ${took} s" ||
                        bad "net_down $1 ($2's link down): status $rc after ${took} s: $(head -c 400 "$TMP/err")"
                fi
                "$DCFA_RSH" "$2" "ip link set eth0 up"
            done
            sleep 0.5
            left=""
            for h in dcfa-h1 dcfa-h2; do
                left+=$("$DCFA_RSH" "$h" "ls /dev/shm | grep '^dcfa-' | sed 's/^/$h:/'" 2>/dev/null | tr '\n' ' ')
            done
            pgrep -f -- "$MPIT/net_down" >/dev/null && left+=" processes: $(pgrep -af -- "$MPIT/net_down" | head -3 | tr '\n' ' ')"
            [ -z "$left" ] && ok "net_down: no process or /dev/shm/dcfa-* left on either host" || bad "net_down: left behind: $left"
        fi
        echo "PASS=$PASS FAIL=$FAIL NOTRUN=$NOTRUN" >"$TMP/counts"
    )
    eval "$(cat "$TMP/counts")"
    "$HOSTS_SH" down
}

# ---- stage spawn: MPI_Comm_spawn across 3 hosts (the daemon tree; needs ofi) ----------
# test/mpi/spawn_hosts.c reads SPAWN_HOSTS_* from mpirun's environment (which
# every rank gets): info host, the number of children, their expected
# hostnames, a nested spawn, a host that is not mpirun's (see the program)
spawn_ok() { # NAME mpirun-args...: status 0 and stdout exactly " No Errors"
    local name=$1
    shift
    run "$name" 0 --timeout 60 "$@" || return 1
    if [ "$(cat "$TMP/out")" = " No Errors" ]; then
        ok "$name"
        return 0
    fi
    bad "$name: stdout '$(head -c 200 "$TMP/out")'; stderr: $(head -c 600 "$TMP/err" | tr '\n' ' ')"
    return 1
}
st_spawn() {
    have_ofi || { not_run "MPI_Comm_spawn across 3 hosts"; return; }
    [ -x "$MPIT/spawn_hosts" ] || { bad "spawn: $MPIT/spawn_hosts is not built"; return; }
    hosts_up 3 || return
    (
        ofi_env
        local H3="-hosts dcfa-h1,dcfa-h2,dcfa-h3 -ppn 1" H2="-hosts dcfa-h1,dcfa-h2 -ppn 1" h left prog
        # (a) by name
        SPAWN_HOSTS_INFO=dcfa-h2 SPAWN_HOSTS_N=2 SPAWN_HOSTS_EXPECT=dcfa-h2,dcfa-h2 \
            spawn_ok "spawn: info host=dcfa-h2, 2 children there" $H3 -n 1 "$MPIT/spawn_hosts"
        # slots: blocks pass after pass (h2 h2 h3, then h2), and the key "hosts"
        SPAWN_HOSTS_INFO=dcfa-h2:2,dcfa-h3 SPAWN_HOSTS_N=4 SPAWN_HOSTS_EXPECT=dcfa-h2,dcfa-h2,dcfa-h3,dcfa-h2 \
            spawn_ok "spawn: info host=dcfa-h2:2,dcfa-h3, 4 children by blocks" $H3 -n 1 "$MPIT/spawn_hosts"
        SPAWN_HOSTS_KEY=hosts SPAWN_HOSTS_INFO=dcfa-h3,dcfa-h1 SPAWN_HOSTS_N=2 SPAWN_HOSTS_EXPECT=dcfa-h3,dcfa-h1 \
            spawn_ok "spawn: info hosts=dcfa-h3,dcfa-h1" $H3 -n 1 "$MPIT/spawn_hosts"
        # info file: a host file (read by the spawner's daemon), its slots in blocks
        printf 'dcfa-h3 slots=1\ndcfa-h2:1   # second\n' >"$TMP/spawn_hf"
        SPAWN_HOSTS_KEY=file SPAWN_HOSTS_INFO="$TMP/spawn_hf" SPAWN_HOSTS_N=3 SPAWN_HOSTS_EXPECT=dcfa-h3,dcfa-h2,dcfa-h3 \
            spawn_ok "spawn: info file (dcfa-h3 slots=1, dcfa-h2:1), 3 children" $H3 -n 1 "$MPIT/spawn_hosts"
        # (b) default placement: the slots after job 0's (h1), then around again
        SPAWN_HOSTS_N=2 SPAWN_HOSTS_EXPECT=dcfa-h2,dcfa-h3 \
            spawn_ok "spawn: default placement after job 0: dcfa-h2, dcfa-h3" $H3 -n 1 "$MPIT/spawn_hosts"
        SPAWN_HOSTS_N=3 SPAWN_HOSTS_EXPECT=dcfa-h2,dcfa-h3,dcfa-h1 \
            spawn_ok "spawn: default placement wraps to dcfa-h1" $H3 -n 1 "$MPIT/spawn_hosts"
        # (c) nested: the children spawn a grandchild on a third host
        SPAWN_HOSTS_INFO=dcfa-h2 SPAWN_HOSTS_N=2 SPAWN_HOSTS_EXPECT=dcfa-h2,dcfa-h2 \
            SPAWN_HOSTS_NESTED=dcfa-h3 SPAWN_HOSTS_NESTED_EXPECT=dcfa-h3 \
            spawn_ok "spawn: nested, children on dcfa-h2, grandchild on dcfa-h3" $H3 -n 1 "$MPIT/spawn_hosts"
        # (d) a host that is not mpirun's: MPI_ERR_SPAWN and a message, then a spawn works
        SPAWN_HOSTS_BAD=no-such-host SPAWN_HOSTS_INFO=dcfa-h3 SPAWN_HOSTS_N=2 SPAWN_HOSTS_EXPECT=dcfa-h3,dcfa-h3 \
            spawn_ok "spawn: info host=no-such-host fails (MPI_ERR_SPAWN), the next spawn works" $H3 -n 1 "$MPIT/spawn_hosts" &&
            { grep -q "no-such-host.*is not one of mpirun's hosts" "$TMP/err" &&
                ok "spawn: the failure says 'no-such-host' is not one of mpirun's hosts" ||
                bad "spawn: bad host message: $(head -c 400 "$TMP/err")"; }
        # (e) a parent job on 2 hosts spawning onto the third
        SPAWN_HOSTS_INFO=dcfa-h3:2 SPAWN_HOSTS_N=2 SPAWN_HOSTS_EXPECT=dcfa-h3,dcfa-h3 \
            spawn_ok "spawn: parent of 2 ranks on dcfa-h1,h2, 2 children on dcfa-h3" $H3 -n 2 "$MPIT/spawn_hosts"
        # the fabrics the library picks itself (shm within a host, ofi across)
        (unset DCFA_FABRICS
            SPAWN_HOSTS_INFO=dcfa-h2:2,dcfa-h3 SPAWN_HOSTS_N=3 SPAWN_HOSTS_EXPECT=dcfa-h2,dcfa-h2,dcfa-h3 \
                SPAWN_HOSTS_NESTED=dcfa-h1 SPAWN_HOSTS_NESTED_EXPECT=dcfa-h1 \
                spawn_ok "spawn: DCFA_FABRICS=auto, parent of 2, children on 2 hosts, nested" $H3 -n 2 "$MPIT/spawn_hosts"
            # a child on the other host reaches its parent over sock while ofi opens (held
            # back 2 s here): the spawn and its first message well within 1 s (docs/fabric.md,
            # "First contact over sock"); the daemons hand the connection between the two jobs
            # over across hosts (docs/launcher.md, "Endpoints across hosts")
            SPAWN_HOSTS_INFO=dcfa-h2 SPAWN_HOSTS_N=1 SPAWN_HOSTS_EXPECT=dcfa-h2 SPAWN_HOSTS_FIRST_MS=1000 \
                spawn_ok "spawn: a child on dcfa-h2 reaches its parent within 1 s, ofi held back 2 s" \
                -genv DCFA_OFI_LATE_DELAY 2000 $H2 -n 1 "$MPIT/spawn_hosts" &&
                grep "first message from the children" "$TMP/err"
            SPAWN_HOSTS_INFO=dcfa-h2:2 SPAWN_HOSTS_N=2 SPAWN_HOSTS_EXPECT=dcfa-h2,dcfa-h2 SPAWN_HOSTS_FIRST_MS=1000 \
                SPAWN_HOSTS_NESTED=dcfa-h1 SPAWN_HOSTS_NESTED_EXPECT=dcfa-h1 \
                spawn_ok "spawn: 2 children on dcfa-h2 and a grandchild on dcfa-h1 within 1 s, ofi held back 2 s" \
                -genv DCFA_OFI_LATE_DELAY 2000 $H2 -n 1 "$MPIT/spawn_hosts"
            # ... and with the rule off (DCFA_OFI_LATE_SOCK=0) the first message waits for ofi
            SPAWN_HOSTS_INFO=dcfa-h2 SPAWN_HOSTS_N=1 SPAWN_HOSTS_EXPECT=dcfa-h2 SPAWN_HOSTS_FIRST_MS=1000 \
                timeout 90 "$MPIRUN" -genv DCFA_OFI_LATE_DELAY 2000 -genv DCFA_OFI_LATE_SOCK 0 $H2 -n 1 \
                "$MPIT/spawn_hosts" >"$TMP/out" 2>"$TMP/err" </dev/null
            grep -q "first message came .* not within SPAWN_HOSTS_FIRST_MS" "$TMP/out" "$TMP/err" &&
                ok "spawn: the first-message bound fails when first contacts wait for ofi (DCFA_OFI_LATE_SOCK=0)" ||
                bad "spawn: with DCFA_OFI_LATE_SOCK=0 the bound did not fail: $(head -c 300 "$TMP/err")"
            echo "PASS=$PASS FAIL=$FAIL" >"$TMP/counts.auto")
        eval "$(cat "$TMP/counts.auto")"
        # (f) the spawn test programs: the children land on the other host by default
        for prog in spawn_basic spawn_multiple spawn_nested "spawn_loop 20"; do
            [ -x "$MPIT/${prog%% *}" ] || { bad "spawn: $prog is not built"; continue; }
            # shellcheck disable=SC2086 # prog holds the program and its arguments
            spawn_ok "spawn: $prog, parent on dcfa-h1, children by default placement" $H2 -n 1 $MPIT/$prog
        done
        # (h) ends of spawned processes on another host: exit status, abort and the
        # timeout's hang report reach mpirun, each named with its host
        local PS=$BUILD/test/launcher/pmi_spawn
        run "spawn: a child on dcfa-h2 exits 3" 3 -hosts dcfa-h1:1,dcfa-h2:4 -n 1 "$PS" spawn 1 exit=3 mh-spawn-$$ &&
            one_line "spawn: a child's exit status on another host, named with it" \
                '^mpirun: spawned job 1 rank 0 \(pid [0-9]+ on dcfa-h2\) exited with status 3$'
        run "spawn: a child on dcfa-h2 aborts" 5 -hosts dcfa-h1:1,dcfa-h2:4 -n 1 "$PS" spawn 1 abort parent-hang mh-spawn-$$ &&
            one_line "spawn: a child's abort on another host ends the job at once" \
                '^mpirun: spawned job 1 rank 0 \(pid [0-9]+ on dcfa-h2\) aborted the job with exit code 5: child abort$'
        run "spawn: children on dcfa-h2 hang" 124 --timeout 3 -hosts dcfa-h1:1,dcfa-h2:4 -n 1 "$PS" spawn 2 hang mh-spawn-$$ &&
            { [ "$(grep -c '^child got SIGUSR1$' "$TMP/err")" = 2 ] &&
                [ "$(tail -n 1 "$TMP/err")" = "mpirun: job timed out after 3 s" ] &&
                ok "spawn: the timeout's hang report reaches children on another host" ||
                bad "spawn: hang report: $(head -c 400 "$TMP/err" | tr '\n' ' ')"; }
        # (g) nothing left: processes of the programs, daemons, /dev/shm on every host
        sleep 0.5
        left=""
        for h in $("$HOSTS_SH" list); do
            left+=$("$DCFA_RSH" "$h" "ls /dev/shm | grep '^dcfa-' | sed 's/^/$h:/'" 2>/dev/null | tr '\n' ' ')
        done
        pgrep -f -- "$MPIT/spawn_" >/dev/null && left+=" processes: $(pgrep -af -- "$MPIT/spawn_" | head -3 | tr '\n' ' ')"
        pgrep -f -- "mh-spawn-$$" >/dev/null && left+=" processes: $(pgrep -af -- "mh-spawn-$$" | head -3 | tr '\n' ' ')"
        pgrep -f -- "$MPIRUN --dcfa-daemon" >/dev/null && left+=" daemons: $(pgrep -af -- "--dcfa-daemon" | head -3 | tr '\n' ' ')"
        [ -z "$left" ] && ok "spawn: no process or /dev/shm/dcfa-* left on any host" || bad "spawn: left behind: $left"
        echo "PASS=$PASS FAIL=$FAIL" >"$TMP/counts"
    )
    eval "$(cat "$TMP/counts")"
    "$HOSTS_SH" down
}

mpich_result() { # LABEL LOG: add an MPICH run's "N passed, N failed" to the counts
    local line p f
    grep -E '^ *(FAIL|TIMEOUT)' "$2" | head -n 10 | sed 's/^ */    /' # which ones (results.log is the last run's)
    tail -n 5 "$2" | sed 's/^/    /'
    line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$2" | tail -n 1)
    p=$(echo "$line" | sed -n 's/^\([0-9]*\) passed.*/\1/p')
    f=$(echo "$line" | sed -n 's/^[0-9]* passed, \([0-9]*\) failed.*/\1/p')
    if [ -z "$p" ]; then bad "$1: no result line"; else PASS=$((PASS + p)); FAIL=$((FAIL + f)); fi
}

# ---- stage mpich_cross: MPICH suite folders pt2pt, coll, comm across 2 hosts ----------
st_mpich_cross() {
    have_ofi || { not_run "MPICH pt2pt, coll, comm across 2 hosts"; return; }
    [ -x "$PREFIX/bin/mpicc" ] || cmake --install "$BUILD" --prefix "$PREFIX" >/dev/null ||
        { bad "cannot install into $PREFIX"; return; }
    hosts_up 2 || return
    (ofi_env
        "$REPO/test/external/mpich/run.sh" --with-mpi "$PREFIX" --jobs "${DCFA_MULTIHOST_MPICH_JOBS:-2}" \
            --time-budget "${DCFA_MULTIHOST_MPICH_BUDGET:-900}" --lists "${DCFA_MULTIHOST_MPICH_LISTS:-testlist}" \
            --timeout 120 --skip "$HERE/mpich_cross_skip.txt" \
            --mpirun-args "-hosts dcfa-h1,dcfa-h2" pt2pt coll@np=4 comm@np=4) >"$TMP/mpich.log" 2>&1
    mpich_result "MPICH suite" "$TMP/mpich.log"
    "$HOSTS_SH" down
}

# ---- stage isolate: isolated ranks (--isolate net: network namespaces with only loopback) on
# 2 hosts; the daemons make the TCP connections between the hosts and hand them over
# (docs/launcher.md "Endpoints across hosts"); every byte then goes rank to rank -----------
no_errors() { # NAME: stdout has " No Errors"
    grep -q "No Errors" "$TMP/out" && ok "$1" || bad "$1: no 'No Errors': $(head -c 300 "$TMP/out") $(head -c 300 "$TMP/err")"
}
st_isolate() {
    hosts_up 2 || return
    (
        export DCFA_ISOLATE=net
        unset DCFA_FABRICS # auto: shm within a host, sock (handed-over sockets) across
        local H="-hosts dcfa-h1,dcfa-h2" line
        run "isolate ring" 0 $H -ppn 1 -n 2 "$MPIT/isolate_net" &&
            no_errors "isolated ranks on 2 hosts: no interface but lo, a ring of 1 B to 1 MiB over the daemons' TCP connection"
        run "isolate ring ppn 2" 0 $H -ppn 2 -n 4 "$MPIT/isolate_net" &&
            no_errors "isolated, 2 ranks per host: shm within a host, handed-over TCP across, ring 1 B to 1 MiB"
        DCFA_ISOLATE=net,shm run "isolate shm ppn 2" 0 $H -ppn 2 -n 4 "$MPIT/isolate_shm" &&
            no_errors "isolated net,shm, 2 ranks per host: no /dev/shm of their own, shm within a host on the daemon's memfds, TCP across; ring, collectives, windows"
        if "$BUILD/bin/mpicc" -O2 -o "$TMP/pingpong" "$REPO/bench/src/pingpong.c"; then
            run "isolate pingpong" 0 $H -ppn 1 -n 2 --bind-to none "$TMP/pingpong" --sizes 1,64,4096,65536,1048576,4194304 --reps 5 --iters 20 &&
                { [ "$(grep -c '"bench":"pingpong"' "$TMP/out")" = 6 ] &&
                    ok "isolated ping-pong across hosts, one-way latency: $(sed -n 's/.*"bytes":\([0-9]*\),.*"lat_us_med":\([0-9.]*\),.*/\1 B \2 us/p' "$TMP/out" | tr '\n' ' ')" ||
                    bad "isolate pingpong: $(head -c 400 "$TMP/out")"; }
        else
            bad "cannot build bench/src/pingpong.c with $BUILD/bin/mpicc"
        fi
        # the relay across hosts (--relay): each host's daemon keeps the TCP connection and
        # forwards the bytes to its rank's socket pair; each rank checks that its own daemon
        # wrote at least the 64 MiB moved, then the ring of 1 B to 1 MiB and collectives
        run "isolate relay counters" 0 $H -ppn 1 -n 2 --relay --bind-to none -genv DCFA_FABRICS sock -genv RELAY_EXPECT relay "$MPIT/relay_counter" &&
            no_errors "--relay across hosts: both daemons on the data path ($(grep -o 'daemon wchar grew by [0-9]*' "$TMP/err" | sed 's/daemon wchar grew by //' | tr '\n' ' ')bytes for 64 MiB)"
        run "isolate relay ring" 0 $H -ppn 2 -n 4 --relay "$MPIT/isolate_net" &&
            no_errors "--relay across hosts, 2 ranks per host: ring of 1 B to 1 MiB through both daemons"
        run "isolate relay coll" 0 $H -ppn 2 -n 4 --relay -genv DCFA_FABRICS sock "$MPIT/coll_ref" &&
            no_errors "--relay across hosts, every pair over sock: the collectives against their reference"
        # a malicious rank across hosts (forged tokens refused by the peer's daemon, nothing
        # reaches the peer, then the true request granted); shm only: no MPI message between
        # the two hosts, rank 1 leaves its token in $TMP
        mkdir -p "$TMP/bad"
        run "isolate malicious" 0 $H -ppn 1 -n 2 -genv DCFA_FABRICS shm -genv SOCK_BAD_DIR "$TMP/bad" "$MPIT/sock_handover_bad" &&
            no_errors "a malicious isolated rank across hosts: forged requests refused with their reason, nothing granted, then the true one granted a TCP socket"
        # two mpiruns on different hosts joined through a port, every rank isolated: the
        # client's daemon connects over TCP to the data port the server's card names and
        # proves the server rank's token by the challenge (docs/launcher.md "Endpoints between
        # two mpiruns"); each mpirun started from here with a remote daemon (tree), each run
        # on its own host (its own ranks' daemon), the same under --relay, and the malicious
        # client across the hosts (forged tokens, a rank the server lacks, a job that daemon
        # does not run, a port where nothing listens: each refused with its reason)
        local two="$REPO/test/mpi/port_two_jobs.sh" tw
        for tw in "tree:$MPIRUN -hosts dcfa-h1:$MPIRUN -hosts dcfa-h2" \
            "own host:$DCFA_RSH dcfa-h1 $MPIRUN:$DCFA_RSH dcfa-h2 $MPIRUN" \
            "own host, relay:$DCFA_RSH dcfa-h1 $MPIRUN --relay:$DCFA_RSH dcfa-h2 $MPIRUN --relay"; do
            IFS=: read -r line sl cl <<<"$tw"
            PORT_SERVER_MPIRUN="$sl" PORT_CLIENT_MPIRUN="$cl" bash "$two" "$MPIRUN" "$MPIT/port_two_jobs" 60 >"$TMP/out" 2>&1 &&
                ok "two isolated mpiruns on 2 hosts meet at a port ($line): the daemons of the two mpiruns join them over TCP" ||
                bad "two isolated mpiruns on 2 hosts ($line): $(tail -c 600 "$TMP/out")"
        done
        DCFA_FABRICS=sock PORT_BAD_CROSS=1 PORT_SERVER_MPIRUN="$DCFA_RSH dcfa-h1 $MPIRUN" PORT_CLIENT_MPIRUN="$DCFA_RSH dcfa-h2 $MPIRUN" \
            bash "$two" "$MPIRUN" "$MPIT/port_two_jobs_bad" 60 >"$TMP/out" 2>&1 &&
            ok "a malicious isolated rank against another host's mpirun: forged token, no such rank, a job it does not run, a closed port refused; the true token granted" ||
            bad "port_two_jobs_bad across hosts: $(tail -c 600 "$TMP/out")"
        # not isolated, two jobs on one host each: auto opens no fabric for other hosts; the
        # failure says so (and how to open one), not "no network in common"
        env -u DCFA_ISOLATE PORT_SERVER_MPIRUN="$DCFA_RSH dcfa-h1 $MPIRUN" PORT_CLIENT_MPIRUN="$DCFA_RSH dcfa-h2 $MPIRUN" \
            bash "$two" "$MPIRUN" "$MPIT/port_two_jobs" 30 >"$TMP/out" 2>&1
        grep -q "a job that runs on one host opens no fabric for other hosts (DCFA_FABRICS=shm,ofi" "$TMP/out" &&
            ! grep -q "no network in common" "$TMP/out" &&
            ok "two one-host jobs of different hosts, not isolated: the error names the missing fabric and DCFA_FABRICS=shm,ofi" ||
            bad "two one-host jobs across hosts: no line naming the missing fabric: $(grep -m2 'cannot reach' "$TMP/out")"
        # 1 GiB between two isolated ranks on two hosts: the daemons' CPU time and bytes
        run "daemon counters" 0 $H -ppn 1 -n 2 --bind-to none -genv DCFA_FABRICS sock "$MPIT/daemon_counters" && {
            grep "its daemon" "$TMP/err" | sed 's/^/    /'
            no_errors "1 GiB between isolated ranks on 2 hosts: each daemon's CPU time grew < 50 ms, its rchar/wchar < 1 MiB"
        }
        # a daemon killed while its isolated rank is in a ping-pong with the other host's: the
        # job ends at once (status 1, the cause named), nothing is left (checked below)
        fresh_out
        timeout 60 "$MPIRUN" $H -ppn 1 -n 2 "$TMP/pingpong" --sizes 8 --reps 100000 --iters 100000 \
            --max-ms 100000 >"$TMP/out" 2>"$TMP/err" </dev/null &
        local mp=$! dp="" i st t0
        for i in $(seq 1 100); do dp=$(daemon_pid_on dcfa-h2); [ -n "$dp" ] && break; sleep 0.1; done
        sleep 2 # the ranks are in their ping-pong over the handed-over connection
        # first, a forger on dcfa-h1 at dcfa-h2's daemon's data port: a HELLO without the job's
        # key (zeros) is answered with a refusal, and the job goes on
        local port ans
        port=$(ip netns exec dcfa-h2 ss -ltnpH 2>/dev/null | grep "pid=$dp," | awk '{print $4}' | sed 's/.*://' | head -n 1)
        ans=$("$DCFA_RSH" dcfa-h1 "timeout 5 bash -c 'exec 3<>/dev/tcp/$("$HOSTS_SH" addr dcfa-h2)/$port; head -c 32 <&3 >/dev/null; head -c 264 /dev/zero >&3; head -c 184 <&3'" 2>/dev/null | tr -d '\0')
        [ -n "$port" ] && [[ $ans == *"not from a daemon of this job (no valid MAC): refused"* ]] && kill -0 $mp 2>/dev/null &&
            ok "a HELLO without the job's key at a daemon's data port (port $port) is refused, the job goes on" ||
            bad "forged HELLO at port '$port': answer '$(echo "$ans" | head -c 200)'"
        t0=$SECONDS
        [ -n "$dp" ] && kill -KILL "$dp"
        wait $mp
        st=$?
        # (the first failure mpirun hears of is named: the lost daemon, or rank 0 whose peer's
        # connection ended when the orphaned rank 1 ended itself)
        [ -n "$dp" ] && [ $st = 1 ] && [ $((SECONDS - t0)) -lt 20 ] &&
            grep -Eq "^mpirun: lost the assist daemon on host 'dcfa-h2'|rank 1 closed its connection to this process before finalizing" "$TMP/err" &&
            ok "a daemon killed under its isolated rank: the job ends in $((SECONDS - t0)) s, status 1, the cause named" ||
            bad "isolated, daemon killed (pid '$dp'): status $st after $((SECONDS - t0)) s: $(head -c 400 "$TMP/err")"
        # spawn across hosts, isolated: the daemons hand over the connections between a parent
        # and its children on two hosts (docs/launcher.md, "Endpoints across hosts"). The
        # spawn's port is a Unix-domain socket file under isolation (docs/dpm.md): the test
        # hosts share this machine's /tmp, real hosts do not
        SPAWN_HOSTS_INFO=dcfa-h2 SPAWN_HOSTS_N=2 SPAWN_HOSTS_EXPECT=dcfa-h2,dcfa-h2 \
            SPAWN_HOSTS_NESTED=dcfa-h1 SPAWN_HOSTS_NESTED_EXPECT=dcfa-h1 \
            spawn_ok "isolated spawn: parent on dcfa-h1, 2 children on dcfa-h2, grandchild on dcfa-h1" $H -ppn 1 -n 1 "$MPIT/spawn_hosts"
        SPAWN_HOSTS_INFO=dcfa-h1,dcfa-h2 SPAWN_HOSTS_KEY=hosts SPAWN_HOSTS_N=2 SPAWN_HOSTS_EXPECT=dcfa-h1,dcfa-h2 \
            spawn_ok "isolated spawn: parent of 2 on both hosts, a child on each" $H -ppn 1 -n 2 "$MPIT/spawn_hosts"
        # a malicious spawned rank: child A on dcfa-h2 asks for its sibling B on dcfa-h1 with
        # a forged token and a rank B does not have (B's daemon refuses), with B's true token
        # (granted), its parent with a forged token, a rank its parent does not have, a made-up
        # job with B's node as hint; then A and its parent on the other host still talk over
        # the handed-over connection
        run "isolate spawn bad" 0 $H -ppn 1 -n 1 -genv DCFA_FABRICS sock "$MPIT/spawn_isolate_bad" &&
            no_errors "a malicious spawned rank across hosts: requests for its sibling on the other host with a forged token and a made-up rank, its parent with a forged token, a made-up job with a wrong node hint, each refused with its reason; its sibling with the true token granted"
        # two sibling jobs joined by their parent (on dcfa-h1): A on dcfa-h2, B on dcfa-h1,
        # 2 ranks each, an inter-communicator bridged by the parent, then a port it passes on;
        # A's and B's connections are the daemons' across hosts, granted on the true tokens
        SIBLINGS_HOST_A=dcfa-h2 SIBLINGS_HOST_B=dcfa-h1 \
            spawn_ok "isolated sibling jobs on two hosts joined by their parent (bridge, port): data and allreduce across" $H -ppn 1 -n 1 "$MPIT/spawn_siblings"
        SIBLINGS_HOST_A=dcfa-h2 SIBLINGS_HOST_B=dcfa-h1 \
            spawn_ok "isolated sibling jobs on two hosts, all over sock" $H -ppn 1 -n 1 -genv DCFA_FABRICS sock "$MPIT/spawn_siblings"
        # the MPI test programs (pt2pt, communicators, collectives, RMA), isolated on 2 hosts
        mpi_set "isolate" 4 $H -ppn 2
        MPI_SET="flood many2one head2head pt2pt_sizes coll_ref" mpi_set "isolate-1ppn" 4 $H -ppn 1 -n 4
        echo "PASS=$PASS FAIL=$FAIL" >"$TMP/counts"
    )
    eval "$(cat "$TMP/counts")"
    # the MPICH suite's pt2pt and coll folders, isolated on 2 hosts, within a time budget
    if [ -x "$PREFIX/bin/mpicc" ] || cmake --install "$BUILD" --prefix "$PREFIX" >/dev/null; then
        # the two hosts share this machine's cores: no rank binding, and a waiting rank yields at
        # once (a 2 ms spin per wait, each host thinking its cores its own, ran out the budget
        # with 49 of 127 entries not started)
        (export DCFA_ISOLATE=net DCFA_SPIN_US=${DCFA_SPIN_US:-0}
            unset DCFA_FABRICS
            "$REPO/test/external/mpich/run.sh" --with-mpi "$PREFIX" --jobs "${DCFA_MULTIHOST_MPICH_JOBS:-2}" \
                --time-budget "${DCFA_MULTIHOST_ISOLATE_BUDGET:-240}" --lists testlist \
                --timeout 120 --skip "$HERE/mpich_isolate_skip.txt" \
                --mpirun-args "--bind-to none -hosts dcfa-h1,dcfa-h2" pt2pt coll@np=4) >"$TMP/mpich.log" 2>&1
        mpich_result "MPICH suite isolated" "$TMP/mpich.log"
    else
        bad "cannot install into $PREFIX"
    fi
    sleep 0.5
    # every process in a host's UTS namespace but its holder: isolated ranks too (they have a
    # network namespace of their own, so ip netns pids does not list them)
    local left="" h p holder uts
    for h in dcfa-h1 dcfa-h2; do
        holder=$(cat "${DCFA_HOSTS_STATE:-/run/dcfa-hosts}/$h.pid" 2>/dev/null)
        uts=$(readlink "/proc/$holder/ns/uts" 2>/dev/null)
        [ -n "$uts" ] || { left+=" $h: its holder is gone"; continue; }
        for p in /proc/[0-9]*; do
            [ "${p#/proc/}" != "$holder" ] && [ "$(readlink "$p/ns/uts" 2>/dev/null)" = "$uts" ] &&
                left+=" $h: $(tr '\0' ' ' <"$p/cmdline" 2>/dev/null | head -c 80)"
        done
        left+=$("$DCFA_RSH" "$h" "ls /dev/shm | grep '^dcfa-' | sed 's/^/$h:/'" 2>/dev/null | tr '\n' ' ')
    done
    [ -z "$left" ] && ok "isolate: no process or /dev/shm entry left on either host" || bad "isolate: left behind: $left"
    "$HOSTS_SH" down
}

# ---- stage twonet: two networks that cannot reach each other (docs/gateway.md) -----------
# cluster hosts on network A, booster hosts on B, gateway hosts on both, IP forwarding off
nothing_left() { # NAME: no namespace, veth, bridge or holder of up2's hosts remains
    local left st=${DCFA_HOSTS_STATE:-/run/dcfa-hosts}
    left="$(ip netns list 2>/dev/null | grep -E '^dcfa-[cbg][0-9]' | tr '\n' ' ')$(ip -br link 2>/dev/null | grep -E '^dcfa-(v[cbg]|br[ABM])' | cut -d' ' -f1 | tr '\n' ' ')"
    left+="$(ls "$st" 2>/dev/null | grep -E '^dcfa-[cbg][0-9]' | tr '\n' ' ')"
    [ -z "$left" ] && ok "$1" || bad "$1: left behind: $left"
}
# gw_lost_run RETURN PAUSE [GATEWAY]: test/mpi/gw_lost on dcfa-c1, dcfa-b1 (GW_LOST_RETURN=RETURN);
# dcfa-g2, the pair's gateway by the rule, is stopped, rank 0 sends into it, it is killed, PAUSE s
# later rank 1 receives; with GATEWAY (dcfa-g1) that is the job's only gateway (GW_LOST_ONE=1);
# sets gp (the gateway daemon's pid), t0 (when killed) and st (mpirun's status)
gw_lost_run() {
    local mp i gws=dcfa-g1,dcfa-g2 gw=dcfa-g2
    [ -n "${3:-}" ] && gws=$3 && gw=$3
    rm -f "$TMP/lsend" "$TMP/lrecv"
    fresh_out
    GW_LOST_ONE=${3:+1} GW_LOST_RETURN=$1 GW_LOST_SEND=$TMP/lsend GW_LOST_RECV=$TMP/lrecv timeout 60 "$MPIRUN" \
        -hosts dcfa-c1,dcfa-b1 --gateways $gws -ppn 1 -n 2 "$MPIT/gw_lost" >"$TMP/out" 2>"$TMP/err" </dev/null &
    mp=$!
    gp=$(gw_daemon_pid $gw)
    sleep 2 # the pair's first exchange, through dcfa-g2
    [ -n "$gp" ] && kill -STOP "$gp"
    touch "$TMP/lsend"
    for i in $(seq 1 100); do grep -q '^gw_lost: sent' "$TMP/err" && break; sleep 0.1; done
    sleep 0.3
    t0=$SECONDS
    [ -n "$gp" ] && kill -KILL "$gp"
    sleep "$2"
    touch "$TMP/lrecv"
    wait $mp
    st=$?
}

gw_daemon_pid() { # HOST: the pid of the job's gateway daemon there (waits up to 10 s)
    local gp="" p pp i
    for i in $(seq 1 100); do
        for p in $(ip netns pids "$1"); do # the daemon's child that is not a shell
            pp=$(awk '{print $4}' "/proc/$p/stat" 2>/dev/null)
            tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -q "^$MPIRUN --dcfa-daemon" &&
                tr '\0' ' ' <"/proc/$pp/cmdline" 2>/dev/null | grep -q "^$MPIRUN --dcfa-daemon" && gp=$p
        done
        [ -n "$gp" ] && break
        sleep 0.1
    done
    echo "$gp"
}
st_twonet() {
    if ! "$HOSTS_SH" up2 2 2 2 >"$TMP/hosts.log" 2>&1; then
        bad "two networks: cannot bring them up: $(cat "$TMP/hosts.log")"
        "$HOSTS_SH" down2
        return
    fi
    # up2 checked it; the test says so: a cluster host cannot reach a booster address,
    # not even through a gateway's kernel
    ok "two networks up: dcfa-c1,c2 on A, dcfa-b1,b2 on B, dcfa-g1,g2 on both, forwarding off, A cannot reach B"
    local fw=""
    for h in dcfa-c1 dcfa-c2 dcfa-b1 dcfa-b2 dcfa-g1 dcfa-g2; do fw+=$("$DCFA_RSH" "$h" 'cat /proc/sys/net/ipv4/ip_forward'); done
    [ "$fw" = 000000 ] && ok "IP forwarding is off on every host" || bad "IP forwarding: $fw"
    # the launcher's tree reaches every host (rsh: the management path), PMI across both
    run "twonet pmi_basic" 0 -hosts dcfa-c1,dcfa-c2,dcfa-b1,dcfa-b2 -ppn 2 "$PMI_BASIC" &&
        { grep -q "No Errors" "$TMP/out" && ok "KVS across two networks through the daemon tree" ||
            bad "twonet KVS: $(cat "$TMP/out")"; }
    run "twonet placement" 0 -hosts dcfa-c1,dcfa-b1,dcfa-g1 -ppn 1 sh -c 'echo "$(hostname) $PMI_RANK"' &&
        { [ "$(sort -k2 -n "$TMP/out" | tr '\n' ' ')" = "dcfa-c1 0 dcfa-b1 1 dcfa-g1 2 " ] &&
            ok "ranks started on a cluster, a booster and a gateway host" || bad "twonet placement: $(cat "$TMP/out")"; }
    if have_ofi; then
        (
            ofi_env
            # a pair on one network talks directly
            run "twonet same network" 0 -hosts dcfa-c1,dcfa-c2 -ppn 1 -n 2 "$MPIT/sendrecv" &&
                { grep -q "No Errors" "$TMP/out" && ok "two cluster hosts talk over network A" || bad "twonet A: $(cat "$TMP/out")"; }
            # a pair without a common network and no gateway: the first message fails at once
            # with a line naming both hosts (not libfabric's connection timeout, minutes later)
            local t0=$SECONDS
            run "twonet unreachable" 15 -hosts dcfa-c1,dcfa-b1 -ppn 1 -n 2 "$MPIT/sendrecv" &&
                { [ $((SECONDS - t0)) -lt 20 ] &&
                    grep -Eq "^mpirun: rank [01] \(pid [0-9]+ on dcfa-[cb]1\) aborted the job with exit code 15: MPI_Sendrecv: operation failed: host dcfa-([cb])1 cannot reach rank [01] on host dcfa-[cb]1: no network in common and no gateway between them" "$TMP/err" &&
                    ok "no common network, no gateway: the first message fails in $((SECONDS - t0)) s naming both hosts" ||
                    bad "twonet unreachable: $((SECONDS - t0)) s, stderr $(head -c 600 "$TMP/err")"; }
            # through the gateway daemons: cluster and booster ranks in one world (pairs on
            # one network direct, the others through dcfa-g1 or dcfa-g2; forwarding is off)
            export DCFA_FABRICS=auto # shm, ofi and gw (DCFA_GATEWAYS is set by mpirun)
            # (coll_module: the collectives cross between the networks once per module and
            # direction, the modules found from the ranks' cards)
            MPI_SET="$MPI_SET coll_module" \
                mpi_set "gateway" 4 -hosts dcfa-c1,dcfa-c2,dcfa-b1,dcfa-b2 --gateways dcfa-g1,dcfa-g2 -ppn 1
            # two ranks per host (shm within a host) through one gateway
            MPI_SET="sendrecv wildcard rndv_mixed coll_algos coll_module rma_atomic" \
                mpi_set "gateway-ppn2" 4 -hosts dcfa-c1,dcfa-b1 --gateways dcfa-g1 -ppn 2
            # floods through one gateway: a receiver that starts late, head to head, many to
            # one, and with one token (every frame waits for the last one's token)
            MPI_SET="flood head2head many2one gw_stream" mpi_set "gateway-flood" 2 -hosts dcfa-c1,dcfa-b1 --gateways dcfa-g1
            # the waiting rank sleeps on its gateway's socket (DCFA_SLEEP_US)
            run "gateway idle_sleep" 0 -hosts dcfa-c1,dcfa-b1 --gateways dcfa-g1 -ppn 1 -n 2 "$MPIT/idle_sleep" --expect-sleep --verbose &&
                { grep -q "No Errors" "$TMP/out" &&
                    ok "through a gateway: the waiting rank slept on the gateway's socket ($(grep -o '[0-9.]* CPU s in 0.9 s' "$TMP/out"))" ||
                    bad "gateway idle_sleep: $(head -c 300 "$TMP/out") $(head -c 300 "$TMP/err")"; }
            # DCFA_TCP_CONGESTION through a gateway: the ranks' links (the program checks) and the
            # gateway daemon's ends of them (its host's established connections, read while the
            # job holds them)
            fresh_out
            DCFA_TCP_CONGESTION=reno TCP_CC_EXPECT=reno TCP_CC_HOLD_MS=3000 timeout 60 "$MPIRUN" \
                -hosts dcfa-c1,dcfa-b1 --gateways dcfa-g1 -ppn 1 -n 2 "$MPIT/tcp_cc" \
                >"$TMP/out" 2>"$TMP/err" </dev/null &
            ccpid=$!
            for _ in $(seq 150); do grep -q holding "$TMP/out" && break; sleep 0.1; done
            gss=$(ip netns exec dcfa-g1 ss -tin state established 2>/dev/null)
            wait $ccpid
            ccst=$?
            n_all=$(printf '%s\n' "$gss" | grep -c 'rtt:')
            n_cc=$(printf '%s\n' "$gss" | grep -c ' reno ')
            if [ "$ccst" = 0 ] && grep -q "No Errors" "$TMP/out" && [ "$n_all" -ge 2 ] && [ "$n_cc" = "$n_all" ]; then
                ok "DCFA_TCP_CONGESTION=reno through a gateway: the ranks' links and the gateway's $n_all connections use reno"
            else
                bad "gateway tcp_cc: status $ccst, $n_cc of $n_all gateway connections with reno; $(head -c 300 "$TMP/out") $(head -c 300 "$TMP/err")"
            fi
            DCFA_GW_TOKENS=1 MPI_SET="flood gw_stream" mpi_set "gateway-1-token" 2 -hosts dcfa-c1,dcfa-b1 --gateways dcfa-g1
            DCFA_STATS=1 run "gateway stats" 0 -hosts dcfa-c1,dcfa-b1 --gateways dcfa-g1 -ppn 1 -n 2 "$MPIT/sendrecv" &&
                { grep -q '^dcfa-conn rank=0 peer=1 fabric=gw provider=tcp+gateway route="gateway dcfa-g1" ' "$TMP/err" &&
                    ok "DCFA_STATS: rank 0 reaches its booster peer through the gateway on dcfa-g1" ||
                    bad "gateway stats: $(grep dcfa-conn "$TMP/err" | head -3)"; }
            # the issue's line: a host list per program, the gateways as the line's last words;
            # the cluster part on c1,c2, the booster part on b1,b2, one world talking through
            # dcfa-g1 (the ring crosses from rank 3 to 4 and from 11 to 0; 256 KiB 0 <-> 11)
            local want_mpmd="0 0 dcfa-c1 1 0 dcfa-c2 2 0 dcfa-c1 3 0 dcfa-c2 4 1 dcfa-b1 5 1 dcfa-b2 6 1 dcfa-b1 7 1 dcfa-b2 8 1 dcfa-b1 9 1 dcfa-b2 10 1 dcfa-b1 11 1 dcfa-b2 "
            DCFA_STATS=1 run "per-program hosts across the gateway" 0 \
                -hosts dcfa-c1,dcfa-c2 -n 4 "$MPIT/mpmd_hosts" --print cluster_part : \
                -hosts dcfa-b1,dcfa-b2 -n 8 "$MPIT/mpmd_hosts" --print booster_part --gateways dcfa-g1 &&
                { [ "$(sed -n 's/^mpmd_hosts rank \([0-9]*\) appnum \([0-9]*\) host /\1 \2 /p' "$TMP/out" | sort -n | tr '\n' ' ')" = "$want_mpmd" ] &&
                    grep -qx " No Errors" "$TMP/out" &&
                    grep -q '^dcfa-conn rank=0 peer=11 fabric=gw .*route="gateway dcfa-g1"' "$TMP/err" &&
                    grep -q '^dcfa-conn rank=3 peer=4 fabric=gw .*route="gateway dcfa-g1"' "$TMP/err" &&
                    ok "mpirun -hosts c1,c2 -n 4 ./cluster_part : -hosts b1,b2 -n 8 ./booster_part --gateways g1: ranks on their lists, one world through dcfa-g1" ||
                    bad "per-program hosts across the gateway: $(tr '\n' ' ' <"$TMP/out" | head -c 700) $(grep -v '^dcfa-' "$TMP/err" | head -c 300) $(grep -c '^dcfa-conn' "$TMP/err") conn lines"; }
            # the routes of a job's ranks before any message (mpiinfo --routes), and a route
            # file overriding the rule: c1-b1 through g1 where the rule takes g2 for ranks 0, 1
            local want_routes
            want_routes="Routes of this job: 4 ranks, 2 gateways (dcfa-g1, dcfa-g2), 0 route file rules
  rank 0 (dcfa-c1) - rank 1 (dcfa-c2): direct (a network in common)
  rank 0 (dcfa-c1) - rank 2 (dcfa-b1): gateway dcfa-g1
  rank 0 (dcfa-c1) - rank 3 (dcfa-b2): gateway dcfa-g2
  rank 1 (dcfa-c2) - rank 2 (dcfa-b1): gateway dcfa-g2
  rank 1 (dcfa-c2) - rank 3 (dcfa-b2): gateway dcfa-g1
  rank 2 (dcfa-b1) - rank 3 (dcfa-b2): direct (a network in common)"
            run "mpiinfo --routes" 0 -hosts dcfa-c1,dcfa-c2,dcfa-b1,dcfa-b2 --gateways dcfa-g1,dcfa-g2 -ppn 1 "$BUILD/mpiinfo" --routes &&
                { [ "$(cat "$TMP/out")" = "$want_routes" ] && ok "mpiinfo --routes: direct within a network, (a + b) % 2 across" ||
                    bad "mpiinfo --routes: $(cat "$TMP/out")"; }
            printf '# the pair c1-b1 through g1\ndcfa-c1 dcfa-b1 dcfa-g1\n10.77.1.0/24 10.77.2.0/24 dcfa-g2 # the other pairs\n' >"$TMP/routes"
            want_routes="Routes of this job: 4 ranks, 2 gateways (dcfa-g1, dcfa-g2), 2 route file rules
  rank 0 (dcfa-c1) - rank 1 (dcfa-c2): direct (a network in common)
  rank 0 (dcfa-c1) - rank 2 (dcfa-b1): gateway dcfa-g1 (route file line 2)
  rank 0 (dcfa-c1) - rank 3 (dcfa-b2): gateway dcfa-g2 (route file line 3)
  rank 1 (dcfa-c2) - rank 2 (dcfa-b1): gateway dcfa-g2 (route file line 3)
  rank 1 (dcfa-c2) - rank 3 (dcfa-b2): gateway dcfa-g2 (route file line 3)
  rank 2 (dcfa-b1) - rank 3 (dcfa-b2): direct (a network in common)"
            run "mpiinfo --routes with a route file" 0 -hosts dcfa-c1,dcfa-c2,dcfa-b1,dcfa-b2 --gateways dcfa-g1,dcfa-g2 \
                --gateway-routes "$TMP/routes" -ppn 1 "$BUILD/mpiinfo" --routes &&
                { [ "$(cat "$TMP/out")" = "$want_routes" ] && ok "mpiinfo --routes: the route file's rules by host and by network" ||
                    bad "mpiinfo --routes with a route file: $(cat "$TMP/out")"; }
            DCFA_STATS=1 run "route file" 0 -hosts dcfa-c1,dcfa-b1 --gateways dcfa-g1,dcfa-g2 --gateway-routes "$TMP/routes" \
                -ppn 1 -n 2 "$MPIT/sendrecv" &&
                { grep -q "No Errors" "$TMP/out" &&
                    grep -q '^dcfa-conn rank=0 peer=1 fabric=gw .*route="gateway dcfa-g1 (route file line 2)"' "$TMP/err" &&
                    grep -q '^dcfa-conn rank=1 peer=0 fabric=gw .*route="gateway dcfa-g1 (route file line 2)"' "$TMP/err" &&
                    ok "a route file: the pair c1-b1 goes through dcfa-g1 (the rule: dcfa-g2), both ends" ||
                    bad "route file: $(grep dcfa-conn "$TMP/err" | head -3) $(head -c 300 "$TMP/out")"; }
            # the module communicator: the cluster's ranks and the booster's (one and two per host)
            MTEST_MODULES=0,0,1,1 run "module split" 0 -hosts dcfa-c1,dcfa-c2,dcfa-b1,dcfa-b2 --gateways dcfa-g1,dcfa-g2 \
                -ppn 1 "$MPIT/module_split" &&
                { grep -q "No Errors" "$TMP/out" && ok "MPIX_COMM_TYPE_MODULE: {c1, c2} and {b1, b2}, one rank per host" ||
                    bad "module split: $(head -c 400 "$TMP/out")"; }
            MTEST_MODULES=0,0,0,0,1,1,1,1 run "module split ppn2" 0 -hosts dcfa-c1,dcfa-c2,dcfa-b1,dcfa-b2 \
                --gateways dcfa-g1 -ppn 2 "$MPIT/module_split" &&
                { grep -q "No Errors" "$TMP/out" && ok "MPIX_COMM_TYPE_MODULE: two ranks per host, 4 and 4" ||
                    bad "module split ppn2: $(head -c 400 "$TMP/out")"; }
            # spawn across the gateways: a parent on a cluster host, children on booster hosts
            # (the port's connection through a gateway, PROXY; then the gw fabric), and the
            # other way round
            SPAWN_HOSTS_INFO=dcfa-b1:1,dcfa-b2 SPAWN_HOSTS_N=2 SPAWN_HOSTS_EXPECT=dcfa-b1,dcfa-b2 \
                run "gateway spawn c->b" 0 -hosts dcfa-c1,dcfa-b1,dcfa-b2 --gateways dcfa-g1 -ppn 1 -n 1 \
                "$MPIT/spawn_hosts" &&
                { grep -q "No Errors" "$TMP/out" &&
                    ok "spawn through a gateway: a parent on dcfa-c1, children on dcfa-b1, dcfa-b2" ||
                    bad "gateway spawn c->b: $(head -c 600 "$TMP/out") $(head -c 600 "$TMP/err")"; }
            SPAWN_HOSTS_INFO=dcfa-c2 SPAWN_HOSTS_N=1 SPAWN_HOSTS_EXPECT=dcfa-c2 \
                run "gateway spawn b->c" 0 -hosts dcfa-b1,dcfa-c2 --gateways dcfa-g2 -ppn 1 -n 1 \
                "$MPIT/spawn_hosts" &&
                { grep -q "No Errors" "$TMP/out" &&
                    ok "spawn through a gateway: a parent on dcfa-b1, a child on dcfa-c2" ||
                    bad "gateway spawn b->c: $(head -c 600 "$TMP/out") $(head -c 600 "$TMP/err")"; }
            # strangers at the gateway daemons: a HELLO without the job's key, a frame without
            # HELLO, a PROXY without the key, a connection that says nothing (closed after
            # DCFA_GW_HELLO_TIMEOUT); all closed, the job's traffic through the gateways goes on
            DCFA_GW_HELLO_TIMEOUT=2 run "gateway strangers" 0 -hosts dcfa-c1,dcfa-c2,dcfa-b1,dcfa-b2 \
                --gateways dcfa-g1,dcfa-g2 -ppn 1 -n 4 "$MPIT/gw_stranger" &&
                { grep -q "No Errors" "$TMP/out" &&
                    [ "$(grep -c "^gateway: a HELLO without the job's key" "$TMP/err")" = 2 ] &&
                    [ "$(grep -c "^gateway: a PROXY without the job's key" "$TMP/err")" = 2 ] &&
                    [ "$(grep -c "^gateway: a connection said no HELLO within 2 s" "$TMP/err")" = 2 ] &&
                    ok "gateway daemons refuse a HELLO or PROXY without the job's key, a frame without HELLO and a silent connection" ||
                    bad "gateway strangers: $(head -c 600 "$TMP/out") $(head -c 600 "$TMP/err")"; }
            # the MPICH suite across the two networks: pt2pt and rma between a cluster and a
            # booster host through one gateway (every message through it), coll on 4 ranks over
            # both gateways (pairs within a network direct, the others through g1 or g2)
            if [ -x "$PREFIX/bin/mpicc" ] || cmake --install "$BUILD" --prefix "$PREFIX" >/dev/null; then
                local gwrun=("$REPO/test/external/mpich/run.sh" --with-mpi "$PREFIX" --jobs "${DCFA_MULTIHOST_MPICH_JOBS:-2}"
                    --time-budget "${DCFA_TWONET_MPICH_BUDGET:-420}" --lists testlist --timeout 120
                    --skip "$HERE/mpich_cross_skip.txt")
                DCFA_SPIN_US=${DCFA_SPIN_US:-0} "${gwrun[@]}" \
                    --mpirun-args "--bind-to none -hosts dcfa-c1,dcfa-b1 --gateways dcfa-g1 -ppn 1" \
                    pt2pt@np=2 rma@np=2 >"$TMP/mpich.log" 2>&1
                mpich_result "MPICH pt2pt, rma through one gateway" "$TMP/mpich.log"
                DCFA_SPIN_US=${DCFA_SPIN_US:-0} "${gwrun[@]}" \
                    --mpirun-args "--bind-to none -hosts dcfa-c1,dcfa-c2,dcfa-b1,dcfa-b2 --gateways dcfa-g1,dcfa-g2 -ppn 1" \
                    coll@np=4 >"$TMP/mpich.log" 2>&1
                mpich_result "MPICH coll over two gateways" "$TMP/mpich.log"
            else
                bad "cannot install into $PREFIX"
            fi
            # a gateway daemon killed during the job, under MPI_ERRORS_ARE_FATAL: the job ends,
            # the error names its host and the peer
            "$BUILD/bin/mpicc" -O2 -o "$TMP/pingpong" "$REPO/bench/src/pingpong.c" ||
                bad "cannot build bench/src/pingpong.c with $BUILD/bin/mpicc"
            fresh_out
            timeout 60 "$MPIRUN" -hosts dcfa-c1,dcfa-b1 --gateways dcfa-g1 -ppn 1 -n 2 "$TMP/pingpong" --sizes 8 \
                --reps 100000 --iters 100000 --max-ms 100000 >"$TMP/out" 2>"$TMP/err" </dev/null &
            local mp=$! gp t0
            gp=$(gw_daemon_pid dcfa-g1)
            sleep 2 # the ranks are in their ping-pong through it
            # first the hang report (SIGUSR1) of the rank on dcfa-c1: it names the gateway
            local rp=""
            for p in $(ip netns pids dcfa-c1); do
                tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -q "^$TMP/pingpong" && rp=$p
            done
            [ -n "$rp" ] && kill -USR1 "$rp"
            sleep 1
            grep -q "connection to .* over gw (tcp+gateway, gateway dcfa-g1; " "$TMP/err" &&
                ok "the hang report names the gateway of the connection (dcfa-g1)" ||
                bad "hang report (rank pid '$rp'): $(grep -i connection "$TMP/err" | head -3)"
            t0=$SECONDS
            [ -n "$gp" ] && kill -KILL "$gp"
            wait $mp
            local st=$?
            [ -n "$gp" ] && [ $st != 0 ] && [ $st != 124 ] && [ $((SECONDS - t0)) -lt 20 ] &&
                grep -Eq "aborted the job .*the connection to rank [01] through the gateway daemon on host dcfa-g1 was lost" "$TMP/err" &&
                ok "a gateway daemon killed (errors fatal): the job ends in $((SECONDS - t0)) s, status $st, the error names dcfa-g1 and the peer" ||
                bad "gateway killed (pid '$gp'): status $st after $((SECONDS - t0)) s: $(head -c 400 "$TMP/err")"
            # a gateway daemon killed during a pair's ping-pong through it, under MPI_ERRORS_RETURN:
            # each rank's exchange fails with an error naming the gateway's host and the peer,
            # then the pair exchanges again through the other gateway (ranks 0, 1: dcfa-g2)
            fresh_out
            DCFA_STATS=1 MTEST_FAILOVER=1 timeout 90 "$MPIRUN" -hosts dcfa-c1,dcfa-b1 --gateways dcfa-g1,dcfa-g2 \
                -ppn 1 -n 2 "$MPIT/gw_failover" >"$TMP/out" 2>"$TMP/err" </dev/null &
            mp=$!
            gp=$(gw_daemon_pid dcfa-g2)
            for i in $(seq 1 100); do
                [ "$(grep -c '^gw_failover: rank [01] in the ping-pong' "$TMP/err")" = 2 ] && break
                sleep 0.1
            done
            sleep 0.5
            [ -n "$gp" ] && kill -KILL "$gp"
            wait $mp
            st=$?
            [ -n "$gp" ] && [ $st = 0 ] && grep -q "No Errors" "$TMP/out" &&
                grep -q "^gw_failover: rank 0: round [0-9]*: .*the connection to rank 1 through the gateway daemon on host dcfa-g2 was lost" "$TMP/err" &&
                grep -q "^gw_failover: rank 1: round [0-9]*: .*the connection to rank 0 through the gateway daemon on host dcfa-g2 was lost" "$TMP/err" &&
                grep -q '^dcfa-conn rank=0 peer=1 fabric=gw .*route="gateway dcfa-g1' "$TMP/err" &&
                grep -q '^dcfa-conn rank=1 peer=0 fabric=gw .*route="gateway dcfa-g1' "$TMP/err" &&
                ok "a gateway daemon killed during a ping-pong (errors return): both ranks get an error naming dcfa-g2 and the peer, then exchange through dcfa-g1" ||
                bad "failover during a ping-pong (gateway pid '$gp'): status $st: $(grep -v '^dcfa-stats' "$TMP/err" | head -c 900) $(head -c 200 "$TMP/out")"
            # a gateway daemon killed before a pair's first message: the pair (ranks 0, 1: the
            # rule takes dcfa-g2) goes through dcfa-g1, the job ends well
            rm -f "$TMP/go"
            fresh_out
            DCFA_STATS=1 MTEST_GO_FILE=$TMP/go timeout 60 "$MPIRUN" -hosts dcfa-c1,dcfa-b1 --gateways dcfa-g1,dcfa-g2 \
                -ppn 1 -n 2 "$MPIT/late_start" >"$TMP/out" 2>"$TMP/err" </dev/null &
            mp=$!
            gp=$(gw_daemon_pid dcfa-g2)
            for i in $(seq 1 100); do
                [ "$(grep -c '^late_start: rank [01] waits' "$TMP/err")" = 2 ] && break
                sleep 0.1
            done
            [ -n "$gp" ] && kill -KILL "$gp"
            sleep 0.5
            touch "$TMP/go"
            wait $mp
            st=$?
            [ -n "$gp" ] && [ $st = 0 ] && grep -q "No Errors" "$TMP/out" &&
                grep -q '^dcfa-conn rank=0 peer=1 fabric=gw .*route="gateway dcfa-g1' "$TMP/err" &&
                grep -q '^dcfa-conn rank=1 peer=0 fabric=gw .*route="gateway dcfa-g1' "$TMP/err" &&
                grep -q "gw: the gateway daemon on host dcfa-g2 closed its connection; no connection of this process went through it" "$TMP/err" &&
                ok "a gateway daemon killed before the pair's first message: the pair takes the other gateway" ||
                bad "failover (gateway pid '$gp'): status $st: $(grep -v '^dcfa-stats' "$TMP/err" | head -c 600) $(head -c 200 "$TMP/out")"
            # a gateway daemon that dies holding a message whose send completed, while nothing of
            # its sender waits for the peer (a receive from MPI_ANY_SOURCE stays posted): the
            # receive posted later would wait for ever; under the default handler the job ends
            # with a line naming the gateway and the loss (docs/faults.md)
            gw_lost_run 0 0
            [ -n "$gp" ] && [ $st != 0 ] && [ $st != 124 ] && [ $((SECONDS - t0)) -lt 20 ] &&
                grep -Eq "aborted the job .*the connection to rank [01] through the gateway daemon on host dcfa-g2 was lost .*what this process sent to rank [01] that its end had not reported received may be lost" "$TMP/err" &&
                ok "a gateway daemon killed holding a completed send: the job ends in $((SECONDS - t0)) s, status $st, naming dcfa-g2 and the loss" ||
                bad "gateway killed holding a message (pid '$gp'): status $st after $((SECONDS - t0)) s: $(grep -v '^dcfa-stats' "$TMP/err" | head -c 600)"
            # the same under MPI_ERRORS_RETURN: the pair's new connection (through dcfa-g1)
            # carries what the dead gateway held (WIRE_LOST), the receive of the lost message
            # fails with an error naming dcfa-g2 instead of waiting for ever, then the pair
            # exchanges through dcfa-g1 and the job ends well
            gw_lost_run 1 0.5 # (0.5 s: rank 1 sees the loss in its MPI_Iprobe loop, before its receive)
            [ -n "$gp" ] && [ $st = 0 ] && grep -q "No Errors" "$TMP/out" &&
                grep -q "^gw_lost: rank 1: .*the message from rank 0 (tag 1) was lost with its connection: the connection to rank 0 through the gateway daemon on host dcfa-g2 was lost" "$TMP/err" &&
                ok "a gateway daemon killed holding a completed send (errors return): the receive fails in $((SECONDS - t0)) s naming rank 0, the tag and dcfa-g2, then the pair exchanges through dcfa-g1" ||
                bad "gateway killed holding a message, errors return (pid '$gp'): status $st after $((SECONDS - t0)) s: $(grep -v '^dcfa-stats' "$TMP/err" | head -c 800) $(head -c 200 "$TMP/out")"
            # the same with dcfa-g1 the only gateway: no report can come, and rank 0's receive
            # from MPI_ANY_SOURCE posted before the loss fails naming the loss and that no way is
            # left (it waited for ever), as rank 1's receive from rank 0 does
            gw_lost_run 1 0.5 dcfa-g1
            [ -n "$gp" ] && [ $st = 0 ] && grep -q "No Errors" "$TMP/out" &&
                grep -q "^gw_lost: rank 0: .*a receive from MPI_ANY_SOURCE may wait for a message that was lost: the connection to rank 1 through the gateway daemon on host dcfa-g1 was lost.*, but none reaches it" "$TMP/err" &&
                grep -q "^gw_lost: rank 1: .*the connection to rank 0 through the gateway daemon on host dcfa-g1 was lost.*, but none reaches it" "$TMP/err" &&
                ok "the only gateway killed holding a completed send (errors return): the receive from MPI_ANY_SOURCE posted before fails in $((SECONDS - t0)) s naming rank 1 and dcfa-g1, as rank 1's receive does" ||
                bad "the only gateway killed holding a message, errors return (pid '$gp'): status $st after $((SECONDS - t0)) s: $(grep -v '^dcfa-stats' "$TMP/err" | head -c 900) $(head -c 200 "$TMP/out")"
            # bad input: a gateway with one network, a gateway that is also a ranks' host
            run "gateway with one network" 1 -hosts dcfa-c1,dcfa-b1 --gateways dcfa-c2 -ppn 1 -n 2 "$MPIT/sendrecv" &&
                one_line "a gateway with one network: one line naming it" \
                    "^mpirun: gateway host 'dcfa-c2' has one network \(10.77.1.2/24\): a gateway needs an interface on each of two networks$"
            printf 'dcfa-c1 dcfa-b1 dcfa-g1\ndcfa-c1 dcfa-b9 dcfa-g1\n' >"$TMP/routes-bad"
            run "route file with an unknown host" 2 -hosts dcfa-c1,dcfa-b1 --gateways dcfa-g1 --gateway-routes "$TMP/routes-bad" \
                -ppn 1 -n 2 "$MPIT/sendrecv" &&
                one_line "a route file with an unknown host: one line naming it and the line" \
                    "^mpirun: --gateway-routes $TMP/routes-bad, line 2: unknown host 'dcfa-b9' \(not a host of -hosts/-hostfile\)$"
            run "gateway also a ranks' host" 2 -hosts dcfa-c1,dcfa-b1 --gateways dcfa-c1 -ppn 1 -n 2 "$MPIT/sendrecv" &&
                one_line "a gateway that is also a ranks' host: one line" "^mpirun: gateway 'dcfa-c1' is also a host for ranks$"
            # last (the management network joins the two networks for the kernel): a Slurm
            # over it, a slurmd on c1, b1 and g1, the gateway daemon a job of its own on g1
            # (mpirun --gateway-daemon) and heterogeneous jobs c1 : b1 through it, the ranks
            # and the gateway leaving eth9 out (DCFA_NET_EXCLUDE)
            if "$HOSTS_SH" mgmt >"$TMP/hosts.log" 2>&1; then
                SLURM_HOSTS="dcfa-c1 dcfa-b1 dcfa-g1" SLURM_NET=M SLURM_GATEWAYS=dcfa-g1 SLURM_MPIRUN=$MPIRUN \
                    slurm_run "$MPIT/mpmd_hosts" "$MPIT/coll_bcast" "$MPIT/comm_split_type" "$MPIT/sendrecv"
            else
                bad "management network: $(cat "$TMP/hosts.log")"
            fi
            sleep 0.5
            local left=""
            for h in dcfa-c1 dcfa-c2 dcfa-b1 dcfa-b2 dcfa-g1 dcfa-g2; do
                [ "$(ip netns pids "$h" | wc -l)" = 1 ] || left+=" $h: $(ip netns pids "$h" | tr '\n' ' ')"
                left+=$("$DCFA_RSH" "$h" "ls /dev/shm | grep '^dcfa-' | sed 's/^/$h:/'" 2>/dev/null | tr '\n' ' ')
            done
            [ -z "$left" ] && ok "gateways: no process (gateway daemon, rank) or /dev/shm entry left on any host" ||
                bad "gateways: left behind: $left"
            echo "PASS=$PASS FAIL=$FAIL" >"$TMP/counts"
        )
        eval "$(cat "$TMP/counts")"
    else
        not_run "MPI programs across two networks"
    fi
    "$HOSTS_SH" down2
    nothing_left "two networks down: no namespace, veth or bridge left"
}

for need in "$MPIRUN" "$LT" "$PMI_BASIC" "$PMI_ABORT"; do
    [ -x "$need" ] || { echo "run_multihost: $need is missing: build first (cmake --build $BUILD)" >&2; echo "0 passed, 1 failed"; exit 1; }
done
[ "$(id -u)" = 0 ] || { echo "run_multihost: needs root for the test hosts" >&2; echo "0 passed, 1 failed"; exit 1; }
T0=$SECONDS
has launch && stage launch st_launch
has hydra && stage hydra st_hydra
has slurm && stage slurm st_slurm
has mpi_remote && stage mpi_remote st_mpi_remote
has mpi_cross && stage mpi_cross st_mpi_cross
has spawn && stage spawn st_spawn
has mpich_cross && stage mpich_cross st_mpich_cross
has isolate && stage isolate st_isolate
has twonet && stage twonet st_twonet
echo "== summary ($((SECONDS - T0)) s)"
for s in "${SUMMARY[@]}"; do echo "  $s"; done
[ $NOTRUN = 0 ] || echo "  $NOTRUN stage(s) NOT RUN: waiting for the ofi fabric"
echo "$PASS passed, $FAIL failed"
[ $FAIL = 0 ]
