#!/bin/bash
# Test hosts on one machine: each is a network namespace with its own address,
# its own hostname (UTS namespace) and its own /dev/shm (a private tmpfs in a
# mount namespace), so the library cannot use shared memory between them
# (util_node_key() differs: hostname and /dev/shm device).
#
#   test/hosts/hosts.sh up N     make N (1-4) hosts: dcfa-h1 .. dcfa-hN
#   test/hosts/hosts.sh up2 C B G  two networks that cannot reach each other (below):
#                                C (1-4) cluster hosts dcfa-c1.., B (1-4) booster hosts
#                                dcfa-b1.., G (0-2) gateway hosts dcfa-g1.. on both
#   test/hosts/hosts.sh down     remove everything this script made
#   test/hosts/hosts.sh down2    remove the two-network hosts only (up2's)
#   test/hosts/hosts.sh mgmt     give every up2 host an interface eth9 on a third network
#                                M (10.77.9.0/24, bridge dcfa-brM, the root namespace at
#                                10.77.9.254): the management network a Slurm needs
#                                (slurmctld here, a slurmd in each host); MPI must leave
#                                it out (DCFA_NET_EXCLUDE=eth9), the kernel would route
#                                cluster to booster over it
#   test/hosts/hosts.sh list     print the host names that are up
#   test/hosts/hosts.sh addr H [A|B|M]  print host H's address (on network A, B or M)
#
# Network: a bridge dcfa-br0 in the root namespace (10.77.0.254/24); host i
# has eth0 = 10.77.0.i/24 on a veth whose other end (dcfa-v<i>) is on the
# bridge. No default route: a host reaches only the other hosts, the root
# namespace's 10.77.0.254 and its own loopback.
#
# Two networks (up2, the cluster-booster topology of docs/gateway.md): bridge
# dcfa-brA carries network A (10.77.1.0/24), dcfa-brB network B (10.77.2.0/24),
# neither with an address in the root namespace. Cluster host ci has eth0 =
# 10.77.1.i on A, booster host bi eth0 = 10.77.2.i on B, gateway host gi eth0 =
# 10.77.1.(100+i) on A and eth1 = 10.77.2.(100+i) on B. IP forwarding is off
# in every namespace (net.ipv4.ip_forward=0, checked), so no kernel routes a
# packet from A to B, not even a gateway's: MPI data crosses only through a
# gateway daemon. up2 checks that a cluster host cannot reach a booster host,
# also with a route through a gateway. The launcher's tree does not use
# these networks: test/hosts/rsh enters a namespace (the management path).
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
NETA=10.77.1
NETB=10.77.2
NETM=10.77.9
STATE=${DCFA_HOSTS_STATE:-/run/dcfa-hosts}
TTL=${DCFA_HOSTS_TTL:-3600}

# a failed 'up' removes what it made before it says why
die() {
    echo "hosts.sh: $*" >&2
    ${DOWN:-down} >/dev/null 2>&1
    exit 1
}

host_down() { # NAME (dcfa-h1, dcfa-c2, ...)
    local h=$1 pid
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
    local v
    for v in "dcfa-v${h#dcfa-}" "dcfa-v${h#dcfa-}a" "dcfa-v${h#dcfa-}b" "dcfa-v${h#dcfa-}m"; do ip link del "$v" 2>/dev/null; done
    return 0
}

down() {
    local h
    for h in "$PREFIX"{1,2,3,4}; do host_down "$h"; done
    ip link del "$BRIDGE" 2>/dev/null
    down2
}

down2() {
    local h
    for h in dcfa-c{1,2,3,4} dcfa-b{1,2,3,4} dcfa-g{1,2}; do host_down "$h"; done
    ip link del dcfa-brA 2>/dev/null
    ip link del dcfa-brB 2>/dev/null
    ip link del dcfa-brM 2>/dev/null
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
    bridge_make "$BRIDGE" "$NET.254/24"
    for i in $(seq 1 "$n"); do
        host_make "$PREFIX$i" && host_link "$PREFIX$i" "dcfa-vh$i" eth0 "$BRIDGE" "$NET.$i"
    done
    host_check $(seq -f "$PREFIX%g" 1 "$n")
    return 0
}

# host_make NAME: the network namespace and its holder (own hostname and /dev/shm)
host_make() {
    local h=$1
    ip netns add "$h" || die "up: cannot create network namespace $h"
    ip -n "$h" link set lo up || die "up: cannot configure the loopback of $h"
    ip netns exec "$h" sysctl -q -w net.ipv4.ip_forward=0 >/dev/null || die "up: cannot turn IP forwarding off in $h"
    ip netns exec "$h" setsid unshare --uts --mount --propagation private sh -c \
        "hostname $h && mount -t tmpfs -o size=512m,mode=1777 tmpfs /dev/shm && echo \$\$ >'$STATE/$h.pid.new' && exec sleep $TTL" \
        </dev/null >/dev/null 2>"$STATE/$h.err" &
    local t=0
    while [ ! -s "$STATE/$h.pid.new" ] && [ $t -lt 100 ]; do sleep 0.05; t=$((t + 1)); done
    [ -s "$STATE/$h.pid.new" ] || die "up: the namespace holder of $h did not start: $(cat "$STATE/$h.err" 2>/dev/null)"
    mv "$STATE/$h.pid.new" "$STATE/$h.pid"
    rm -f "$STATE/$h.err"
}

# host_link NAME VETH IFNAME BRIDGE ADDRESS: an interface of host NAME on BRIDGE (/24)
host_link() {
    local h=$1 v=$2 ifname=$3 br=$4 addr=$5
    ip link add "$v" type veth peer name "${v}p" || die "up: cannot create veth $v"
    ip link set "${v}p" netns "$h" &&
        ip link set "$v" master "$br" &&
        ip link set "$v" up &&
        ip -n "$h" link set "${v}p" name "$ifname" &&
        ip -n "$h" addr add "$addr/24" dev "$ifname" &&
        ip -n "$h" link set "$ifname" up || die "up: cannot configure $ifname of $h"
}

# host_check NAME...: each has its own hostname and /dev/shm
host_check() {
    local h got
    for h in "$@"; do
        got=$("$(dirname "$0")/rsh" "$h" 'hostname; stat -c %d /dev/shm') || die "up: cannot enter $h"
        [ "$(echo "$got" | head -n 1)" = "$h" ] || die "up: $h has hostname '$(echo "$got" | head -n 1)'"
        [ "$(echo "$got" | tail -n 1)" != "$(stat -c %d /dev/shm)" ] || die "up: $h shares /dev/shm with the root namespace"
    done
}

bridge_make() { # NAME [ADDRESS/PREFIX]
    ip link add "$1" type bridge 2>/dev/null || die "up: cannot create bridge $1 (no CAP_NET_ADMIN?)"
    if [ -n "${2:-}" ]; then ip addr add "$2" dev "$1" || die "up: cannot configure $1"; fi
    ip link set "$1" up || die "up: cannot configure $1"
}

# can HOST ADDRESS: a TCP connection from HOST to ADDRESS:9 gets an answer (accepted or
# refused) within 2 s; "unreachable" or no answer (dropped) is not reaching it
can() {
    local out rc
    out=$("$(dirname "$0")/rsh" "$1" "timeout 2 bash -c 'exec 3<>/dev/tcp/$2/9' 2>&1")
    rc=$?
    [ $rc = 0 ] && return 0
    case $out in *"Connection refused"*) return 0 ;; esac
    return 1
}

up2() {
    local nc=$1 nb=$2 ng=$3 i h all=""
    case $nc in 1|2|3|4) ;; *) die "up2: C must be 1 to 4, not '$nc'" ;; esac
    case $nb in 1|2|3|4) ;; *) die "up2: B must be 1 to 4, not '$nb'" ;; esac
    case $ng in 0|1|2) ;; *) die "up2: G must be 0 to 2, not '$ng'" ;; esac
    [ "$(id -u)" = 0 ] || die "up2: must run as root (namespaces, veth)"
    down2
    mkdir -p "$STATE" || die "up2: cannot create $STATE"
    bridge_make dcfa-brA
    bridge_make dcfa-brB
    for i in $(seq 1 "$nc"); do
        host_make "dcfa-c$i" && host_link "dcfa-c$i" "dcfa-vc$i" eth0 dcfa-brA "$NETA.$i"
        all+=" dcfa-c$i"
    done
    for i in $(seq 1 "$nb"); do
        host_make "dcfa-b$i" && host_link "dcfa-b$i" "dcfa-vb$i" eth0 dcfa-brB "$NETB.$i"
        all+=" dcfa-b$i"
    done
    for i in $(seq 1 "$ng"); do
        host_make "dcfa-g$i" && host_link "dcfa-g$i" "dcfa-vg${i}a" eth0 dcfa-brA "$NETA.$((100 + i))" &&
            host_link "dcfa-g$i" "dcfa-vg${i}b" eth1 dcfa-brB "$NETB.$((100 + i))"
        all+=" dcfa-g$i"
    done
    # shellcheck disable=SC2086 # the list of names
    host_check $all
    for h in $all; do
        [ "$(ip netns exec "$h" cat /proc/sys/net/ipv4/ip_forward)" = 0 ] || die "up2: IP forwarding is on in $h"
    done
    can dcfa-c1 "$NETA.$nc" || die "up2: dcfa-c1 cannot reach dcfa-c$nc ($NETA.$nc) on network A"
    can dcfa-b1 "$NETB.$nb" || die "up2: dcfa-b1 cannot reach dcfa-b$nb ($NETB.$nb) on network B"
    ! can dcfa-c1 "$NETB.1" || die "up2: dcfa-c1 reaches booster dcfa-b1 ($NETB.1): the networks are not apart"
    if [ "$ng" -ge 1 ]; then
        can dcfa-c1 "$NETA.101" && can dcfa-b1 "$NETB.101" || die "up2: dcfa-g1 is not on both networks"
        # the kernel of the gateway must not forward either, even when asked to
        ip -n dcfa-c1 route add "$NETB.0/24" via "$NETA.101" && ip -n dcfa-b1 route add "$NETA.0/24" via "$NETB.101" ||
            die "up2: cannot add the test routes through dcfa-g1"
        ! can dcfa-c1 "$NETB.1" || die "up2: dcfa-c1 reaches dcfa-b1 through dcfa-g1's kernel (IP forwarding)"
        ip -n dcfa-c1 route del "$NETB.0/24" && ip -n dcfa-b1 route del "$NETA.0/24" || die "up2: cannot remove the test routes"
    fi
    return 0
}

# mgmt: the management network M for the up2 hosts that are up
mgmt() {
    local h n=0
    ip link show dcfa-brM >/dev/null 2>&1 || DOWN=down2 bridge_make dcfa-brM "$NETM.254/24"
    for h in dcfa-c{1,2,3,4} dcfa-b{1,2,3,4} dcfa-g{1,2}; do
        [ -f "$STATE/$h.pid" ] || continue
        ip -n "$h" link show eth9 >/dev/null 2>&1 && continue
        DOWN=down2 host_link "$h" "dcfa-v${h#dcfa-}m" eth9 dcfa-brM "$(addr "$h" M)"
        n=$((n + 1))
    done
    [ $n -gt 0 ] || ip -n dcfa-c1 link show eth9 >/dev/null 2>&1 || DOWN=down2 die "mgmt: no up2 host is up"
    return 0
}

# addr HOST [A|B|M]: the host's address (a gateway's on the network named, A by default;
# M: the management network of mgmt)
addr() {
    if [ "${2:-A}" = M ]; then
        case $1 in
        dcfa-c[1-4]) echo "$NETM.$((10 + ${1#dcfa-c}))" ;;
        dcfa-b[1-4]) echo "$NETM.$((20 + ${1#dcfa-b}))" ;;
        dcfa-g[1-2]) echo "$NETM.$((30 + ${1#dcfa-g}))" ;;
        *) echo "hosts.sh: addr: host '$1' has no management address" >&2; return 1 ;;
        esac
        return 0
    fi
    case $1 in
    dcfa-h[1-4]) echo "$NET.${1#dcfa-h}" ;;
    dcfa-c[1-4]) echo "$NETA.${1#dcfa-c}" ;;
    dcfa-b[1-4]) echo "$NETB.${1#dcfa-b}" ;;
    dcfa-g[1-2]) if [ "${2:-A}" = B ]; then echo "$NETB.$((100 + ${1#dcfa-g}))"; else echo "$NETA.$((100 + ${1#dcfa-g}))"; fi ;;
    *) echo "hosts.sh: addr: unknown host '$1'" >&2; return 1 ;;
    esac
}
case ${1:-} in
up) up "${2:-2}" ;;
up2) DOWN=down2 up2 "${2:-2}" "${3:-2}" "${4:-1}" ;;
down) down ;;
down2) down2 ;;
mgmt) mgmt ;;
addr) addr "${2:-}" "${3:-A}" ;;
list) for f in "$STATE"/*.pid; do [ -f "$f" ] && basename "$f" .pid; done; exit 0 ;;
*) echo "usage: $0 up N | up2 C B G | mgmt | down | down2 | list | addr HOST [A|B|M]" >&2; exit 2 ;;
esac
