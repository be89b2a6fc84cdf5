#!/bin/bash
# MPI_Comm_spawn in mpirun's tree of daemons, without network namespaces:
#   spawn_tree_test.sh MPIRUN SPAWN_HOSTS SPAWN_BASIC [SPAWN_MULTIPLE]
# DCFA_RSH is local_rsh (next to this script), which runs the daemon of any
# "host" on this machine, so `-hosts hA,hB` makes a real tree (mpirun + two
# daemons started through the remote-start command) whose ranks are all on one
# node (equal node keys: they talk over shm). The host names are fake, so the
# children's hostnames cannot tell where they were placed (the namespace hosts
# of test/hosts/run_multihost.sh, stage spawn, check that); this checks that
# spawn works in the tree, by name, by default placement, nested, with a
# name that is not one of mpirun's hosts, and with the spawn test programs.
# After every run: no process of the run left (found by a tag in their
# environment) and no new /dev/shm/dcfa-* entry that nothing uses.
# Exit 0 = pass, else fail.
set -u
# Runs with -hosts of this machine open ofi too (DCFA_UNIVERSE_HOSTS): keep it on loopback
# (docs/fabric.md, the network rule for tests)
export DCFA_OFI_IFACE=${DCFA_OFI_IFACE:-lo} FI_TCP_IFACE=${FI_TCP_IFACE:-lo} FI_SOCKETS_IFACE=${FI_SOCKETS_IFACE:-lo}
if [ $# -lt 3 ]; then
    echo "usage: $0 MPIRUN SPAWN_HOSTS SPAWN_BASIC [SPAWN_MULTIPLE]" >&2
    exit 2
fi
MPIRUN=$1 SPH=$2 BASIC=$3 MULTI=${4:-}
HERE=$(cd "$(dirname "$0")" && pwd)
export DCFA_RSH=$HERE/local_rsh
TMP=$(mktemp -d /tmp/dcfa-spawn-tree.XXXXXX)
TAG="spawn-tree-$$-$RANDOM$RANDOM"
CASE=start
# These select what spawn_hosts does: none may come from the caller.
unset SPAWN_HOSTS_INFO SPAWN_HOSTS_KEY SPAWN_HOSTS_N SPAWN_HOSTS_EXPECT SPAWN_HOSTS_NESTED \
    SPAWN_HOSTS_NESTED_EXPECT SPAWN_HOSTS_BAD SPAWN_HOSTS_NAMES SPAWN_HOSTS_VERBOSE

# Processes (other than this script) whose environment has our tag: mpirun,
# the daemons (local_rsh passes mpirun's environment on), ranks, children.
list_tagged() {
    local d pid
    for d in /proc/[0-9]*; do
        pid=${d#/proc/}
        [ "$pid" = $$ ] && continue
        grep -qzx "SPAWN_TREE_TAG=$TAG" "$d/environ" 2>/dev/null && echo "$pid"
    done
}
list_shm() { find /dev/shm -maxdepth 1 -name 'dcfa-*' -printf '%f\n' 2>/dev/null | sort; }
shm_in_use() {
    grep -qsF "/dev/shm/$1" /proc/[0-9]*/maps && return 0
    [ -n "$(find /proc/[0-9]*/fd -lname "/dev/shm/$1" -print -quit 2>/dev/null)" ]
}
cleanup() {
    local p
    for p in $(list_tagged); do kill -KILL "$p" 2>/dev/null; done
    rm -rf "$TMP"
}
trap cleanup EXIT

fail() { echo "FAIL [$CASE]: $*" >&2; exit 1; }

show() {
    echo "--- stdout"; head -c 3000 "$TMP/out"; echo "--- stderr"; head -c 3000 "$TMP/err"
}

# No process of the run within 5 s; no new /dev/shm entry that nothing uses.
no_leftovers() {
    local left="" f new i
    for i in $(seq 20); do
        left=$(list_tagged)
        [ -z "$left" ] && break
        sleep 0.25
    done
    if [ -n "$left" ]; then
        for p in $left; do echo "left: $p $(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null)"; done
        for p in $left; do kill -KILL "$p" 2>/dev/null; done
        fail "processes left behind"
    fi
    for i in $(seq 10); do
        list_shm >"$TMP/shm.after"
        new=""
        for f in $(comm -13 "$TMP/shm.before" "$TMP/shm.after"); do
            shm_in_use "$f" || new="$new $f"
        done
        [ -z "$new" ] && return 0
        sleep 0.3
    done
    fail "/dev/shm entries left behind:$new"
}

# run NAME mpirun-args...: passes iff status 0 and stdout is exactly " No Errors";
# stdout/stderr stay in $TMP/out, $TMP/err. The caller's VAR=VAL prefixes reach
# mpirun (and through it every rank).
run() {
    CASE=$1
    shift
    list_shm >"$TMP/shm.before"
    SPAWN_TREE_TAG=$TAG timeout -k 5 60 "$MPIRUN" --timeout 45 "$@" >"$TMP/out" 2>"$TMP/err" </dev/null
    local st=$?
    if [ $st != 0 ] || [ "$(cat "$TMP/out")" != " No Errors" ]; then
        show
        fail "mpirun $* exited $st (expected 0 and ' No Errors')"
    fi
    no_leftovers
    echo "ok   $CASE"
}

T="-hosts hA,hB -ppn 1"

# spawn_hosts: by name (both keys, with slots), by default placement (the next
# slots after job 0's: hB, then hA again), from a parent of 2 ranks on both
# daemons, nested (the children spawn again), a name that is not mpirun's
SPAWN_HOSTS_INFO=hB run "info host=hB, 2 children" $T -n 1 "$SPH"
SPAWN_HOSTS_INFO=hB:2 SPAWN_HOSTS_KEY=hosts SPAWN_HOSTS_N=3 run "info hosts=hB:2, 3 children" $T -n 1 "$SPH"
SPAWN_HOSTS_INFO=hA,hB SPAWN_HOSTS_N=4 run "info host=hA,hB, 4 children" $T -n 1 "$SPH"
run "default placement, 2 children" $T -n 1 "$SPH"
SPAWN_HOSTS_N=3 run "default placement, 3 children (wraps)" $T -n 1 "$SPH"
SPAWN_HOSTS_INFO=hB:2 run "parent of 2 ranks on hA and hB, info host=hB:2" $T -n 2 "$SPH"
run "parent of 2 ranks, default placement" $T -n 2 "$SPH"
SPAWN_HOSTS_INFO=hB SPAWN_HOSTS_NESTED=hA run "nested: children on hB, grandchild on hA" $T -n 1 "$SPH"
SPAWN_HOSTS_NESTED=hB run "nested, default placement" $T -n 1 "$SPH"
# the daemons' real hostname (both are this machine's) names a host too
SPAWN_HOSTS_INFO=$(hostname) SPAWN_HOSTS_N=1 run "info host=\$(hostname)" $T -n 1 "$SPH"
SPAWN_HOSTS_BAD=no-such-host SPAWN_HOSTS_INFO=hB run "a host that is not mpirun's, then a spawn" $T -n 2 "$SPH"
grep -q "is not one of mpirun's hosts" "$TMP/err" ||
    { show; fail "no message 'is not one of mpirun's hosts' on stderr"; }
grep -q "no-such-host" "$TMP/err" || { show; fail "the message does not name no-such-host"; }
# one host mode is unchanged: spawn with -n, info host=localhost
SPAWN_HOSTS_INFO=localhost SPAWN_HOSTS_NESTED=localhost run "one host mode, info host=localhost" -n 2 "$SPH"

# the spawn test programs, children placed by default (on hB)
run "spawn_basic" $T -n 1 "$BASIC"
run "spawn_basic, parent of 2 ranks" $T -n 2 "$BASIC"
[ -z "$MULTI" ] || run "spawn_multiple" $T -n 1 "$MULTI"
exit 0
