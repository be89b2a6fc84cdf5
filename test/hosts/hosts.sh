#!/bin/bash
# Test hosts on one machine: each is a network namespace with its own address,
# its own hostname (UTS namespace) and its own /dev/shm (a private tmpfs in a
# mount namespace), so the library cannot use shared memory between them
# (util_node_key() differs: hostname and /dev/shm device).
#
#   test/hosts/hosts.sh up N     make N (1-4) hosts: dcfa-h1 .. dcfa-hN
#   test/hosts/hosts.sh down     remove everything this script made
#   test/hosts/hosts.sh list     print the host names that are up
#
# Network: a bridge dcfa-br0 in the root namespace (10.77.0.254/24); host i
# has eth0 = 10.77.0.i/24 on a veth whose other end (dcfa-v<i>) is on the
# bridge. No default route: a host reaches only the other hosts, the root
# namespace's 10.77.0.254 and its own loopback.
#
# Namespaces are held open by one sleeping process per host (a UTS + mount
# namespace made inside the network namespace); test/hosts/rsh enters them.
# The holder sleeps at most DCFA_HOSTS_TTL seconds (default 3600), so hosts a
# crashed test forgot to take down go away by themselves (the netns and the
# veth stay until the next 'down'). /tmp and the rest of the file system are
# shared, like a cluster's shared home.
#
# Needs root (CAP_NET_ADMIN, CAP_SYS_ADMIN). Exit status 0 on success; 'up'
# prints a reason and exits 1 when the machine cannot make namespaces (the
# caller must then fail loudly, not skip).
set -u
PREFIX=dcfa-h
BRIDGE=dcfa-br0
NET=10.77.0
STATE=${DCFA_HOSTS_STATE:-/run/dcfa-hosts}
TTL=${DCFA_HOSTS_TTL:-3600}

# a failed 'up' removes what it made before it says why
die() {
    echo "hosts.sh: $*" >&2
    down >/dev/null 2>&1
    exit 1
}

host_down() { # INDEX
    local h=$PREFIX$1 pid
    if [ -f "$STATE/$h.pid" ]; then
        pid=$(cat "$STATE/$h.pid")
        # processes still inside the host (left by a broken test): kill them
        if [ -n "$pid" ] && [ -e "/proc/$pid" ]; then
            for p in $(ip netns pids "$h" 2>/dev/null); do
                [ "$p" != "$pid" ] && kill -KILL "$p" 2>/dev/null
            done
            kill -KILL "$pid" 2>/dev/null
        fi
        rm -f "$STATE/$h.pid"
    fi
    if ip netns list 2>/dev/null | grep -qw "^$h"; then
        for p in $(ip netns pids "$h" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done
        ip netns del "$h" 2>/dev/null
    fi
    ip link del "dcfa-v$1" 2>/dev/null
    return 0
}

down() {
    for i in 1 2 3 4; do host_down "$i"; done
    ip link del "$BRIDGE" 2>/dev/null
    rmdir "$STATE" 2>/dev/null
    return 0
}

up() {
    local n=$1
    case $n in 1|2|3|4) ;; *) die "up: N must be 1 to 4, not '$n'" ;; esac
    [ "$(id -u)" = 0 ] || die "up: must run as root (namespaces, veth)"
    command -v ip >/dev/null && command -v nsenter >/dev/null && command -v unshare >/dev/null ||
        die "up: needs ip (iproute2), nsenter and unshare (util-linux)"
    down
    mkdir -p "$STATE" || die "up: cannot create $STATE"
    ip link add "$BRIDGE" type bridge 2>/dev/null || die "up: cannot create bridge $BRIDGE (no CAP_NET_ADMIN?)"
    ip addr add "$NET.254/24" dev "$BRIDGE" && ip link set "$BRIDGE" up || die "up: cannot configure $BRIDGE"
    for i in $(seq 1 "$n"); do
        local h=$PREFIX$i
        ip netns add "$h" || die "up: cannot create network namespace $h"
        ip link add "dcfa-v$i" type veth peer name "dcfa-p$i" || die "up: cannot create veth dcfa-v$i"
        ip link set "dcfa-p$i" netns "$h" &&
            ip link set "dcfa-v$i" master "$BRIDGE" &&
            ip link set "dcfa-v$i" up &&
            ip -n "$h" link set "dcfa-p$i" name eth0 &&
            ip -n "$h" addr add "$NET.$i/24" dev eth0 &&
            ip -n "$h" link set eth0 up &&
            ip -n "$h" link set lo up || die "up: cannot configure the network of $h"
        # the holder: own hostname and /dev/shm, inside the network namespace
        ip netns exec "$h" setsid unshare --uts --mount --propagation private sh -c \
            "hostname $h && mount -t tmpfs -o size=512m,mode=1777 tmpfs /dev/shm && echo \$\$ >'$STATE/$h.pid.new' && exec sleep $TTL" \
            </dev/null >/dev/null 2>"$STATE/$h.err" &
        local t=0
        while [ ! -s "$STATE/$h.pid.new" ] && [ $t -lt 100 ]; do sleep 0.05; t=$((t + 1)); done
        [ -s "$STATE/$h.pid.new" ] || die "up: the namespace holder of $h did not start: $(cat "$STATE/$h.err" 2>/dev/null)"
        mv "$STATE/$h.pid.new" "$STATE/$h.pid"
        rm -f "$STATE/$h.err"
    done
    # check: each host has its own hostname and /dev/shm, and sees the others
    for i in $(seq 1 "$n"); do
        local h=$PREFIX$i got
        got=$("$(dirname "$0")/rsh" "$h" 'hostname; stat -c %d /dev/shm') || die "up: cannot enter $h"
        [ "$(echo "$got" | head -n 1)" = "$h" ] || die "up: $h has hostname '$(echo "$got" | head -n 1)'"
        [ "$(echo "$got" | tail -n 1)" != "$(stat -c %d /dev/shm)" ] || die "up: $h shares /dev/shm with the root namespace"
    done
    return 0
}

case ${1:-} in
up) up "${2:-2}" ;;
down) down ;;
list) for f in "$STATE"/*.pid; do [ -f "$f" ] && basename "$f" .pid; done; exit 0 ;;
*) echo "usage: $0 up N | down | list" >&2; exit 2 ;;
esac
