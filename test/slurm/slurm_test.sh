#!/bin/bash
# Slurm starts our ranks: a private munged, slurmctld and slurmd on this
# machine (a generated slurm.conf, one node with 4 CPUs), then
#   srun --mpi=pmi2 -n 4 PROGRAM        (our client speaks PMI-2)
#   srun --mpi=none -n 2 PROGRAM        refused in one line (no PMI we speak), and
#                                       with DCFA_SINGLETON=1 two singletons; so is
#                                       srun --mpi=pmix; in an salloc shell a singleton
#   srun --mpi=pmi2 -n 4 PROGRAM        with DCFA_PMI_VERSION=1 (Slurm's pmi2
#                                       plugin serves PMI-1 too)
#   srun --mpi=pmi1 ...                 where Slurm offers that plugin
#   salloc -n 4 srun --overlap --mpi=pmi2 -n 1|2 SPAWN_PROGRAM
#                                       MPI_Comm_spawn: Slurm's plugin runs
#                                       srun for the children, a step of the
#                                       same allocation (docs/dpm.md)
#   srun --mpi=pmi2 -n 1 SPAWN_PROGRAM  no CPU left for the children: the
#                                       spawn fails with MPI_ERR_SPAWN, soon
# and every daemon it started is stopped at the end, even on failure.
#
#   test/slurm/slurm_test.sh PMI_BASIC PMI_ABORT [MPI_PROGRAM...]
#
# With SLURM_HOSTS="H1 H2" (test hosts that test/hosts/hosts.sh up made) a slurmd runs
# in each host's namespaces instead (node H at its address, slurmctld on the bridge's
# 10.77.0.254, the backfill scheduler a heterogeneous job needs), and the cases are
# heterogeneous jobs, one component per host (docs/launcher.md, "Slurm"):
#   srun --mpi=pmi2 -w H1 -n 2 PROG : -w H2 -n 2 PROG   one MPI_COMM_WORLD over both
#                                       (MPI_PROGRAMs; mpmd_hosts: rank order, hosts)
#   the same with PMI_ABORT in one component: the whole job fails
# SLURM_NET=M: the hosts' addresses and slurmctld's (10.77.9.254) on up2's management
# network (test/hosts/hosts.sh mgmt). SLURM_GATEWAYS="G..." (hosts of SLURM_HOSTS too):
# each runs "$SLURM_MPIRUN --gateway-daemon" as a job of its own, the ranks get its
# DCFA_GATEWAYS entry and the key, and every case runs with DCFA_NET_EXCLUDE=eth9, so a
# job over H1 (one network) and H2 (the other) talks through the gateways
#
# PMI_BASIC/PMI_ABORT: test/launcher's programs; MPI_PROGRAMs: test/mpi
# programs (each must print " No Errors"); those named spawn_* are parents
# of a spawn and run as above instead of -n 4. After each run no process of
# the program may be left, nor /dev/shm entries. Needs root and Debian's slurmctld,
# slurmd, slurm-client and munge (apt-get install -y slurmctld slurmd
# slurm-client munge). If Slurm cannot be started this FAILS loudly: it is
# never skipped. Last line: "N passed, N failed".
set -u
PMI_BASIC=$1 PMI_ABORT=$2
shift 2
MPI_PROGS=("$@")
DIR=$(mktemp -d /tmp/dcfa-slurm.XXXXXX)
chmod 755 "$DIR"
PASS=0 FAILN=0
HOST=$(hostname -s)
PORT0=$((16800 + RANDOM % 100 * 2))
read -r -a NODES <<<"${SLURM_HOSTS:-}"
HOSTS_DIR=$(cd "$(dirname "$0")/../hosts" && pwd)

say() { echo "slurm_test: $*" >&2; }
ok() { PASS=$((PASS + 1)); echo "PASS: $*"; }
bad() { FAILN=$((FAILN + 1)); echo "FAIL: $*"; }

stop_all() {
    [ -n "${SLURM_CONF:-}" ] && timeout 10 scancel --quiet -u root 2>/dev/null
    for f in slurmd slurmctld munged "${NODES[@]/#/slurmd-}"; do
        if [ -f "$DIR/$f.pid" ]; then
            pid=$(cat "$DIR/$f.pid")
            [ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null
            for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
            kill -KILL "$pid" 2>/dev/null
        fi
    done
    # slurmstepd processes of our jobs, if any survived
    for p in $(pgrep -f "slurmstepd.*" 2>/dev/null); do
        grep -q "$DIR" "/proc/$p/cmdline" 2>/dev/null && kill -KILL "$p" 2>/dev/null
    done
    rm -rf "$DIR"
}
trap stop_all EXIT

fatal() {
    echo "FAIL: Slurm could not be used: $*" >&2
    for f in "$DIR"/*.log; do [ -f "$f" ] && { echo "--- $f" >&2; tail -n 20 "$f" >&2; }; done
    echo "0 passed, 1 failed"
    exit 1
}

for c in munged slurmctld slurmd srun sinfo; do
    command -v $c >/dev/null || fatal "$c is not installed (apt-get install -y slurmctld slurmd slurm-client munge)"
done
[ "$(id -u)" = 0 ] || fatal "must run as root (slurmd starts jobs as any user)"

# ---- munge --------------------------------------------------------------------
mkdir -p "$DIR/munge" "$DIR/state" "$DIR/spool"
if [ -r /etc/munge/munge.key ]; then
    cp /etc/munge/munge.key "$DIR/munge/key"
else
    dd if=/dev/urandom of="$DIR/munge/key" bs=1024 count=1 2>/dev/null
fi
chmod 700 "$DIR/munge"
chmod 400 "$DIR/munge/key"
munged --force --socket="$DIR/munge/sock" --key-file="$DIR/munge/key" \
    --pid-file="$DIR/munged.pid" --log-file="$DIR/munged.log" --seed-file="$DIR/munge/seed" \
    2>>"$DIR/munged.log" || fatal "munged did not start"

# ---- slurm.conf -------------------------------------------------------------------
export SLURM_CONF=$DIR/slurm.conf
CTLD=$HOST SCHED=sched/builtin NODESUF= NODECONF="NodeName=$HOST" NODELIST=$HOST
if [ ${#NODES[@]} -gt 0 ]; then
    # the test hosts reach the root namespace at the bridge's address only; a heterogeneous
    # job needs the backfill scheduler (sched/builtin refuses it), here every second
    CTLD_ADDR=10.77.0.254
    [ "${SLURM_NET:-A}" = M ] && CTLD_ADDR=10.77.9.254
    CTLD="$HOST($CTLD_ADDR)" SCHED="sched/backfill
SchedulerParameters=bf_interval=1" NODESUF=-%n NODECONF="" NODELIST=
    for h in "${NODES[@]}"; do
        a=$("$HOSTS_DIR/hosts.sh" addr "$h" "${SLURM_NET:-A}") || fatal "test host $h is not up"
        NODECONF+="NodeName=$h NodeAddr=$a CPUs=4 Sockets=1 CoresPerSocket=4 ThreadsPerCore=1 RealMemory=1000 State=UNKNOWN
"
        NODELIST+=${NODELIST:+,}$h
        mkdir -p "$DIR/spool-$h"
    done
else
    NODECONF+=" CPUs=4 Sockets=1 CoresPerSocket=4 ThreadsPerCore=1 RealMemory=1000 State=UNKNOWN"
fi
cat >"$SLURM_CONF" <<EOF
ClusterName=dcfatest
SlurmctldHost=$CTLD
SlurmctldPort=$PORT0
SlurmdPort=$((PORT0 + 1))
AuthType=auth/munge
AuthInfo=socket=$DIR/munge/sock
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool$NODESUF
SlurmctldPidFile=$DIR/slurmctld.pid
SlurmdPidFile=$DIR/slurmd$NODESUF.pid
SlurmctldLogFile=$DIR/slurmctld.log
SlurmdLogFile=$DIR/slurmd$NODESUF.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=$SCHED
MpiDefault=none
ReturnToService=2
SlurmdParameters=config_overrides
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
InactiveLimit=0
KillWait=5
MinJobAge=5
$NODECONF
PartitionName=dcfa Nodes=$NODELIST Default=YES MaxTime=10 State=UP OverSubscribe=YES
EOF

slurmctld -f "$SLURM_CONF" 2>>"$DIR/slurmctld.log" || fatal "slurmctld did not start"
[ ${#NODES[@]} -gt 0 ] || slurmd -f "$SLURM_CONF" 2>>"$DIR/slurmd.log" || fatal "slurmd did not start"
for h in "${NODES[@]}"; do
    # a test host's /sys is the namespace's own (ip netns exec), without the cgroup
    # hierarchies slurmd needs: mounted there again, as the machine has them (v2, or v1)
    "$HOSTS_DIR/rsh" "$h" "sh $HOSTS_DIR/../slurm/cgroup_mount.sh && SLURM_CONF='$SLURM_CONF' slurmd -f '$SLURM_CONF' -N '$h'" \
        2>>"$DIR/slurmd-$h.log" || fatal "slurmd did not start on $h"
done
up=0
for _ in $(seq 1 60); do
    # every node: none down or unknown
    if timeout 5 sinfo -h -o '%t' 2>/dev/null | grep -Eq '^(idle|mix|alloc)' &&
        ! timeout 5 sinfo -h -o '%t' 2>/dev/null | grep -Evq '^(idle|mix|alloc)'; then
        up=1
        break
    fi
    sleep 0.5
done
[ $up = 1 ] || fatal "the nodes did not come up: $(timeout 5 sinfo 2>&1 | tr '\n' ' ')"
say "Slurm $(srun --version 2>&1) is up on $NODELIST (mpi plugins: $(srun --mpi=list 2>&1 | tr -s ' \n' ' '))"

# Slurm's mpi/pmi2 writes the srun --multi-prog file of a spawn of several
# commands as /tmp/<pid>.XXXXXX and never removes it: the new ones go.
drop_multiprog() {
    local f
    for f in $(ls /tmp | grep -E '^[0-9]+\.[A-Za-z0-9]{6}$' | grep -vxF -f "$DIR/tmp.before"); do
        head -n 1 "/tmp/$f" 2>/dev/null | grep -Eq '^[0-9]+(-[0-9]+)?  ' && rm -f "/tmp/$f"
    done
}

# the processes running PROGRAM still there (two seconds to go, after a spawn)
left_procs() {
    local p left
    for _ in $(seq 1 20); do
        left=
        for p in $(pgrep -f -- "$1"); do
            [ "$(readlink "/proc/$p/exe" 2>/dev/null)" = "$1" ] && left+="$p "
        done
        [ -z "$left" ] && return 0
        sleep 0.1
    done
    echo "$left"
}

# srun_case NAME EXPECT_STATUS [env...] -- srun args...: runs, checks status and " No Errors"
# (EXPECT_STATUS "fail": any but 0 and timeout's 124); LAUNCH (default: srun) is what runs
# the args; each line of ERR_MUST must be in the stderr; CASE_PROG: the program whose
# processes must be gone after (default: the last argument)
LAUNCH=(srun --quiet)
ERR_MUST=
srun_case() {
    local name=$1 want=$2
    shift 2
    local envs=()
    while [ "$1" != "--" ]; do envs+=("$1"); shift; done
    shift
    ls /dev/shm >"$DIR/shm.before"
    ls /tmp >"$DIR/tmp.before"
    env "${envs[@]}" timeout 120 "${LAUNCH[@]}" "$@" >"$DIR/out" 2>"$DIR/err" </dev/null
    local got=$?
    sleep 0.2
    drop_multiprog
    # nobody removes a job's files under Slurm: the library must leave none
    local leaked
    leaked=$(ls /dev/shm | grep '^dcfa-k' | grep -vxF -f "$DIR/shm.before" | tr '\n' ' ')
    if [ -n "$leaked" ]; then
        bad "$name: left in /dev/shm: $leaked ($(head -c 300 "$DIR/err"))"
        return 1
    fi
    local prog=${CASE_PROG:-${*: -1}} left
    left=$(left_procs "$prog")
    if [ -n "$left" ]; then
        bad "$name: processes of $prog left: $left"
        return 1
    fi
    if [ "$want" = fail ] && [ "$got" != 0 ] && [ "$got" != 124 ]; then
        want=$got
    fi
    if [ "$got" != "$want" ]; then
        bad "$name: exit status $got, expected $want: $(head -c 600 "$DIR/err") $(head -c 300 "$DIR/out")"
        return 1
    fi
    if [ "$want" = 0 ] && ! grep -q " No Errors" "$DIR/out"; then
        bad "$name: no ' No Errors': $(head -c 600 "$DIR/out") $(head -c 600 "$DIR/err")"
        return 1
    fi
    local line
    while read -r line; do
        if [ -n "$line" ] && ! grep -qF -- "$line" "$DIR/err"; then
            bad "$name: no '$line' in the stderr: $(head -c 900 "$DIR/err")"
            return 1
        fi
    done <<<"$ERR_MUST"
    ok "$name"
}

if [ -n "${DCFA_SLURM_CMD:-}" ]; then # debugging: run this instead of the tests
    bash -c "$DCFA_SLURM_CMD"
    exit $?
fi
if [ ${#NODES[@]} -gt 0 ]; then
    # heterogeneous jobs: a component per test host, one MPI_COMM_WORLD over them
    H1=${NODES[0]} H2=${NODES[1]:-${NODES[0]}}
    GW_PIDS=()
    if [ -n "${SLURM_GATEWAYS:-}" ]; then
        # the gateway daemons: a job each, on its host, until killed (srun passes SIGTERM on)
        DCFA_GATEWAY_KEY=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
        export DCFA_GATEWAY_KEY DCFA_NET_EXCLUDE=eth9
        for g in $SLURM_GATEWAYS; do
            srun --quiet -w "$g" -n 1 "$SLURM_MPIRUN" --gateway-daemon >"$DIR/gw-$g.out" 2>"$DIR/gw-$g.err" </dev/null &
            GW_PIDS+=($!)
        done
        gws=
        for g in $SLURM_GATEWAYS; do
            for _ in $(seq 1 100); do [ -s "$DIR/gw-$g.out" ] && break; sleep 0.1; done
            line=$(head -n 1 "$DIR/gw-$g.out")
            case $line in
            "$g:"[0-9]*:*/*,*/*) ok "gateway daemon on $g under srun: $line" ;;
            *) bad "gateway daemon on $g: '$line' $(head -c 300 "$DIR/gw-$g.err")" ;;
            esac
            gws+=${gws:+;}$line
        done
        export DCFA_GATEWAYS=$gws
        # a pair across the networks goes through the gateway (the route DCFA_STATS shows)
        srun_case "heterogeneous job across networks: sendrecv, 1 rank on $H1 : 1 on $H2" 0 DCFA_STATS=1 -- \
            --mpi=pmi2 -w "$H1" -n 1 "${MPI_PROGS[-1]}" : -w "$H2" -n 1 "${MPI_PROGS[-1]}" && # (the last program)
            { grep -q "^dcfa-conn rank=0 peer=1 fabric=gw .*route=\"gateway ${SLURM_GATEWAYS%% *}" "$DIR/err" &&
                ok "heterogeneous job across networks: ranks 0 and 1 through ${SLURM_GATEWAYS%% *}" ||
                bad "across networks: no route through ${SLURM_GATEWAYS%% *}: $(grep '^dcfa-conn' "$DIR/err" | head -3)"; }
    fi
    for prog in "${MPI_PROGS[@]}"; do
        b=$(basename "$prog")
        if [ "$b" = mpmd_hosts ]; then
            # world ranks in component order, each on its component's host; MPI_APPNUM is
            # 0 for all (Slurm's PMI-2 gives none, as for MPICH under srun)
            CASE_PROG=$prog srun_case "heterogeneous job: $b, 2 ranks on $H1 : 3 on $H2" 0 DCFA_X=1 -- \
                --mpi=pmi2 -w "$H1" -n 2 "$prog" --print : -w "$H2" -n 3 "$prog" --print &&
                { got=$(sed -n 's/^mpmd_hosts rank \([0-9]*\) appnum [0-9]* host /\1 /p' "$DIR/out" | sort -n | tr '\n' ' ')
                  [ "$got" = "0 $H1 1 $H1 2 $H2 3 $H2 4 $H2 " ] && ok "heterogeneous job: ranks 0-1 on $H1, 2-4 on $H2" ||
                      bad "heterogeneous job: ranks and hosts '$got'"; }
            continue
        fi
        srun_case "heterogeneous job: $b, 2 ranks on $H1 : 2 on $H2" 0 DCFA_X=1 -- \
            --mpi=pmi2 -w "$H1" -n 2 "$prog" : -w "$H2" -n 2 "$prog"
    done
    # an abort in one component ends the whole job: failure status, nothing left
    t0=$(date +%s)
    srun_case "heterogeneous job: PMI abort" fail DCFA_X=1 -- \
        --mpi=pmi2 -w "$H1" -n 1 "$PMI_ABORT" : -w "$H2" -n 2 "$PMI_ABORT"
    t=$(($(date +%s) - t0))
    [ $t -le 30 ] && ok "heterogeneous job: the abort ended it in $t s" || bad "heterogeneous job: the abort took $t s"
    if [ ${#GW_PIDS[@]} -gt 0 ]; then
        kill -TERM "${GW_PIDS[@]}" 2>/dev/null
        for p in "${GW_PIDS[@]}"; do wait "$p"; done
        left=$(left_procs "$SLURM_MPIRUN")
        [ -z "$left" ] && ok "gateway daemons under srun: ended by SIGTERM, nothing left" ||
            bad "gateway daemons left: $left"
    fi
    # each host's own /dev/shm: nothing of the jobs (the library's segments are dcfa-*)
    for h in "${NODES[@]}"; do
        left=$("$HOSTS_DIR/rsh" "$h" 'ls /dev/shm' | grep '^dcfa-' | tr '\n' ' ')
        [ -z "$left" ] && ok "heterogeneous jobs: nothing left in /dev/shm of $h" || bad "$h: left in /dev/shm: $left"
    done
    echo "$PASS passed, $FAILN failed"
    [ $FAILN = 0 ]
    exit
fi
srun_case "pmi2 pmi_basic -n 4" 0 DCFA_X=1 -- --mpi=pmi2 -n 4 "$PMI_BASIC"
srun_case "pmi2 pmi_basic -n 1" 0 DCFA_X=1 -- --mpi=pmi2 -n 1 "$PMI_BASIC"
# Slurm's pmi2 plugin sets PMI_JOBID: that is how our client picks PMI-2
timeout 60 srun --quiet --mpi=pmi2 -n 1 sh -c 'echo "jobid=$PMI_JOBID fd=$PMI_FD"' >"$DIR/out" 2>&1 </dev/null
grep -Eq '^jobid=[^ ]+ fd=[0-9]+$' "$DIR/out" && ok "pmi2 sets PMI_JOBID and PMI_FD" || bad "pmi2 environment: $(cat "$DIR/out")"
srun_case "pmi2 plugin, PMI-1 client" 0 DCFA_PMI_VERSION=1 -- --mpi=pmi2 -n 4 "$PMI_BASIC"
# abort ends the step with a failure status
env timeout 120 srun --quiet --mpi=pmi2 -n 3 "$PMI_ABORT" >"$DIR/out" 2>"$DIR/err" </dev/null
st=$?
if [ $st != 0 ] && [ $st != 124 ]; then ok "pmi2 abort (status $st)"; else bad "pmi2 abort: status $st"; fi
SPAWN_PROGS=()
for prog in "${MPI_PROGS[@]}"; do
    case $(basename "$prog") in spawn_*) SPAWN_PROGS+=("$prog"); continue ;; esac
    srun_case "pmi2 $(basename "$prog") -n 4" 0 DCFA_X=1 -- --mpi=pmi2 -n 4 "$prog"
    srun_case "pmi2 PMI-1 $(basename "$prog") -n 4" 0 DCFA_PMI_VERSION=1 -- --mpi=pmi2 -n 4 "$prog"
done
# MPI_Comm_spawn: the plugin runs "srun --mpi=pmi2 --ntasks=N PROGRAM" (several commands:
# --multi-prog) with the environment of ours, a step of the same job: the allocation
# holds parents and children (4 CPUs), and SLURM_OVERLAP=1 lets the children's step
# share the CPUs of the parents' one (both run at once)
LAUNCH=(salloc --quiet -n 4 srun --quiet --overlap)
for prog in "${SPAWN_PROGS[@]}"; do
    b=$(basename "$prog")
    srun_case "pmi2 spawn: $b -n 1" 0 SLURM_OVERLAP=1 -- --mpi=pmi2 -n 1 "$prog"
    srun_case "pmi2 spawn: $b -n 2" 0 SLURM_OVERLAP=1 -- --mpi=pmi2 -n 2 "$prog"
    srun_case "pmi2 spawn, PMI-1 client: $b -n 1" 0 SLURM_OVERLAP=1 DCFA_PMI_VERSION=1 -- \
        --mpi=pmi2 -n 1 "$prog"
done
LAUNCH=(srun --quiet)
# no room: srun -n 1 makes a job of 1 CPU, the children's srun cannot have its step and
# exits, and Slurm's plugin never answers the spawn; it fails after DCFA_SPAWN_TIMEOUT
# with MPI_ERR_SPAWN and says why
if [ ${#SPAWN_PROGS[@]} -gt 0 ]; then
    t0=$(date +%s)
    ERR_MUST="Slurm's mpi/pmi2 gave no answer within 5 s (DCFA_SPAWN_TIMEOUT)
MPI_ERR_SPAWN"
    srun_case "pmi2 spawn without room: MPI_ERR_SPAWN" fail DCFA_SPAWN_TIMEOUT=5 -- \
        --mpi=pmi2 -n 1 "${SPAWN_PROGS[0]}"
    ERR_MUST=
    t=$(($(date +%s) - t0))
    [ $t -le 40 ] && ok "pmi2 spawn without room: failed in $t s" ||
        bad "pmi2 spawn without room: took $t s"
fi
if srun --mpi=list 2>&1 | grep -qw pmi1; then
    srun_case "pmi1 pmi_basic -n 4" 0 DCFA_PMI_VERSION=1 -- --mpi=pmi1 -n 4 "$PMI_BASIC"
else
    say "this Slurm offers no mpi/pmi1 plugin (PMI-1 is served by mpi/pmi2, tested above)"
fi
# without an mpi plugin the tasks would each be a singleton of their own: the client
# refuses (srun without --mpi=pmi2), one line per task; DCFA_SINGLETON=1 runs them so
ERR_MUST="started by srun without --mpi=pmi2 (SLURM_PROCID=
, SLURM_STEP_NUM_TASKS=2), whose process manager this library does not speak"
srun_case "none: refused" fail DCFA_X=1 -- --mpi=none -n 2 "$PMI_BASIC"
ERR_MUST=
grep -q ' No Errors' "$DIR/out" && bad "none: ran as singletons: $(cat "$DIR/out")"
srun_case "none: singletons (DCFA_SINGLETON=1)" 0 DCFA_SINGLETON=1 -- --mpi=none -n 2 "$PMI_BASIC"
[ "$(grep -c ' No Errors' "$DIR/out")" = 2 ] && ok "none: 2 singletons" || bad "none: $(cat "$DIR/out")"
if srun --mpi=list 2>&1 | grep -qw pmix; then
    ERR_MUST="started by a PMIx launcher such as prterun or srun --mpi=pmix (PMIX_RANK="
    srun_case "pmix: refused" fail DCFA_X=1 -- --mpi=pmix -n 2 "$PMI_BASIC"
    ERR_MUST=
fi
# a program run in an salloc shell (no srun step) is a singleton
LAUNCH=(salloc --quiet -n 2)
srun_case "salloc shell: a singleton" 0 DCFA_X=1 -- "$PMI_BASIC"
LAUNCH=(srun --quiet)

echo "$PASS passed, $FAILN failed"
[ $FAILN = 0 ]
