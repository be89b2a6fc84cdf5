#!/bin/bash
# Mapping, binding and -wdir of mpirun (docs/launcher.md, "Mapping and binding"):
#   bind_test.sh CASE MPIRUN BIND_CHECK LOCAL_RSH
# BIND_CHECK is test/mpi/bind_check.c: each rank compares its CPU mask with the
# one expected from /sys. Exit 0 = pass, 77 = skipped, anything else = fail.
set -u
export DCFA_OFI_IFACE=${DCFA_OFI_IFACE:-lo} FI_TCP_IFACE=${FI_TCP_IFACE:-lo} FI_SOCKETS_IFACE=${FI_SOCKETS_IFACE:-lo}
CASE=$1 MPIRUN=$2 CHECK=$3 RSH=$4
TMP=$(mktemp -d /tmp/dcfa-bind-test.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

fail() { echo "FAIL [$CASE]: $*" >&2; exit 1; }

# run EXPECTED_STATUS mpirun-args...: stdout/stderr to $TMP/out, $TMP/err
run() {
    local want=$1; shift
    timeout 60 "$MPIRUN" "$@" >"$TMP/out" 2>"$TMP/err" </dev/null
    local got=$?
    if [ "$got" != "$want" ]; then
        echo "--- stdout"; head -c 3000 "$TMP/out"; echo "--- stderr"; head -c 3000 "$TMP/err"
        fail "mpirun $* exited $got, expected $want"
    fi
}

# The stderr of mpirun is exactly one line matching the pattern.
err_is() {
    [ "$(wc -l <"$TMP/err")" = 1 ] || { cat "$TMP/err"; fail "expected one line on stderr"; }
    grep -Eq "$1" "$TMP/err" || fail "stderr '$(cat "$TMP/err")' does not match '$1'"
}

# check N MODE INDEX mpirun-args...: N ranks of bind_check, all masks as expected
check() {
    local n=$1 mode=$2 idx=$3; shift 3
    run 0 -n "$n" -x BIND_ALLOWED="$ALLOWED" "$@" "$CHECK" "$mode" "$idx"
    grep -q "No Errors" "$TMP/out" || fail "no 'No Errors' with $*: $(cat "$TMP/out" "$TMP/err")"
    [ "$(grep -c '^rank [0-9]* cpus ' "$TMP/out")" = "$n" ] || fail "not $n ranks reported their cpus"
}

# The CPUs this script (hence mpirun) may use, and their cores.
ALLOWED=$(awk '/^Cpus_allowed_list:/ {print $2}' /proc/self/status)
cores_of() { # the number of cores among the CPUs of list $1
    local list=$1 c
    for c in $(echo "$list" | tr ',' '\n' | awk -F- '{e = NF > 1 ? $2 : $1; for (i = $1; i <= e; i++) print i}'); do
        cat "/sys/devices/system/cpu/cpu$c/topology/thread_siblings_list" 2>/dev/null || echo "$c"
    done | sort -u | wc -l
}
NCORES=$(cores_of "$ALLOWED")
[ "$NCORES" -ge 1 ] || exit 77
MORE=$((NCORES + 1))
FIRST=$(echo "$ALLOWED" | cut -d, -f1 | cut -d- -f1)

case $CASE in
default)
    # as many ranks as cores: each on its own core; one more: not bound;
    # fewer: the cores shared out, a block each (one rank: all of them)
    check "$NCORES" core local
    check 1 share local
    [ "$(sed -n 's/^rank 0 cpus //p' "$TMP/out")" = "$ALLOWED" ] || fail "one rank not bound to all cpus: $(cat "$TMP/out")"
    [ "$NCORES" -ge 3 ] && check $((NCORES - 1)) share local
    check 1 share local --map-by core
    check 1 core local --bind-to core
    check "$MORE" none local
    check "$NCORES" core local --map-by core
    check "$NCORES" none local --bind-to none
    # DCFA_BIND_TO: the default's replacement; an option on the command line wins
    DCFA_BIND_TO=none check "$NCORES" none local
    DCFA_BIND_TO=none check "$NCORES" core local --bind-to core
    # a host with one CPU for mpirun (taskset): one rank is bound to it
    taskset -c "$FIRST" "$MPIRUN" -n 1 -x BIND_ALLOWED="$FIRST" "$CHECK" core local >"$TMP/out" 2>"$TMP/err" ||
        fail "under taskset -c $FIRST: $(cat "$TMP/out" "$TMP/err")"
    grep -qx "rank 0 cpus $FIRST" "$TMP/out" || fail "under taskset: $(cat "$TMP/out")"
    # the topology without hwloc's plugins (PCI, OpenCL, GL with X11, libxml2:
    # 3 ms of a launch), and the ranks' environment as it was; a user's choice
    # of plugins is left alone
    probe='cat /proc/$PPID/maps; echo "blacklist=${HWLOC_PLUGINS_BLACKLIST-unset}"'
    run 0 -n 1 sh -c "$probe"
    grep -q 'libhwloc' "$TMP/out" || fail "mpirun did not load hwloc to bind the rank"
    ! grep -Eq 'hwloc_(pci|opencl|gl|xml_libxml)\.so' "$TMP/out" ||
        fail "mpirun loaded hwloc plugins: $(grep -Eo 'hwloc_[a-z_]*\.so' "$TMP/out" | sort -u | tr '\n' ' ')"
    grep -qx 'blacklist=unset' "$TMP/out" || fail "the rank saw $(grep '^blacklist=' "$TMP/out")"
    HWLOC_PLUGINS_BLACKLIST=hwloc_opencl run 0 -n 1 sh -c "$probe"
    grep -qx 'blacklist=hwloc_opencl' "$TMP/out" || fail "the user's HWLOC_PLUGINS_BLACKLIST: $(grep '^blacklist=' "$TMP/out")"
    ;;
options)
    check "$NCORES" core local --bind-to core
    check "$NCORES" core local -bind-to core -map-by core # Hydra's spellings
    check "$NCORES" core local --bind-to=core --map-by=core
    check "$NCORES" core local --map-by ppr:1:core
    check "$NCORES" core local --map-by ppr:1:core --bind-to core
    check "$MORE" core local --bind-to core --oversubscribe # wraps around the cores
    check $((2 * NCORES)) ppr:2:core local --map-by ppr:2:core --bind-to core --oversubscribe
    check "$NCORES" hwthread local --map-by hwthread
    check "$NCORES" socket local --map-by socket
    check "$NCORES" socket local --map-by socket --bind-to socket
    check "$MORE" none local --bind-to none --report-bindings
    check "$NCORES" core local --map-by node # one host: one core after the other
    # ppr without -n: N on each resource of this host
    run 0 -x BIND_ALLOWED="$ALLOWED" --map-by ppr:1:core "$CHECK" core local
    [ "$(grep -c '^rank [0-9]* cpus ' "$TMP/out")" = "$NCORES" ] || fail "ppr:1:core without -n: $(cat "$TMP/out")"
    run 0 --map-by ppr:3:node sh -c 'echo $PMI_SIZE'
    [ "$(sort -u "$TMP/out")" = 3 ] || fail "ppr:3:node without -n: $(cat "$TMP/out")"
    # MPMD: the options hold for the whole job, ranks numbered across programs
    run 0 -n 1 -x BIND_ALLOWED="$ALLOWED" --bind-to core "$CHECK" core local : -n 1 "$CHECK" core local
    grep -q "No Errors" "$TMP/out" || fail "MPMD: $(cat "$TMP/out" "$TMP/err")"
    ;;
report)
    check "$NCORES" core local --report-bindings
    [ "$(wc -l <"$TMP/err")" = "$NCORES" ] || fail "not one report line per rank: $(cat "$TMP/err")"
    host=$(hostname)
    for r in $(seq 0 $((NCORES - 1))); do
        cpus=$(sed -n "s/^rank $r cpus //p" "$TMP/out")
        grep -Eq "^\[$host:[0-9]+\] rank $r bound to core [0-9]+ \(cpus $cpus\): (\[[B./]+\])+$" "$TMP/err" ||
            fail "report of rank $r (cpus $cpus): $(cat "$TMP/err")"
        # the diagram marks the rank's cpus: as many B as cpus in its core
        line=$(grep "rank $r bound" "$TMP/err")
        nb=$(echo "${line##*: }" | tr -cd B | wc -c)
        [ "$nb" -ge 1 ] || fail "no B in '$line'"
    done
    check "$MORE" none local --report-bindings
    for r in $(seq 0 $NCORES); do
        grep -Eq "^\[$host:[0-9]+\] rank $r not bound: cpus $ALLOWED$" "$TMP/err" ||
            fail "report of unbound rank $r: $(cat "$TMP/err")"
    done
    # fewer ranks than cores: a block of cores each
    check 1 share local --report-bindings
    if [ "$NCORES" -ge 2 ]; then
        grep -Eq "^\[$host:[0-9]+\] rank 0 bound to cores 0-$((NCORES - 1)) \(cpus $ALLOWED\): (\[[B/]+\])+$" "$TMP/err" ||
            fail "report of a rank on all cores: $(cat "$TMP/err")"
    fi
    # no report without the option
    check "$NCORES" core local
    [ -s "$TMP/err" ] && fail "output on stderr without --report-bindings: $(cat "$TMP/err")"
    ;;
bad)
    # a binding that cannot be met: one line, status 2, no rank started
    prog=(sh -c "touch $TMP/started")
    run 2 -n "$MORE" --bind-to core "${prog[@]}"
    err_is "^mpirun: --bind-to core on host '[^']+': $MORE ranks but $NCORES cores?, so 2 would share core 0; add --oversubscribe to allow it, or --bind-to none$"
    run 2 -n "$MORE" --map-by ppr:1:core "${prog[@]}"
    err_is "^mpirun: --map-by ppr:1:core on host '[^']+': $MORE ranks but room for $NCORES \(1 per core, $NCORES cores?\); add --oversubscribe to place more$"
    run 2 -n 1 --map-by ppr:1:cpu "${prog[@]}"
    err_is "^mpirun: --map-by ppr:1:cpu: unknown resource 'cpu' \(core, hwthread, socket, numa or node\)$"
    run 2 -n 1 --map-by ppr:0:core "${prog[@]}"
    err_is "^mpirun: --map-by ppr:0:core: N ranks per resource must be 1 to 4096$"
    run 2 -n 1 -map-by ppr:x:core "${prog[@]}"
    err_is "^mpirun: --map-by ppr:x:core: expected ppr:N:resource, e.g. ppr:2:socket$"
    run 2 -n 1 --map-by diagonal "${prog[@]}"
    err_is "^mpirun: --map-by diagonal: not a way to map"
    run 2 -n 1 --bind-to board "${prog[@]}"
    err_is "^mpirun: --bind-to board: not a level to bind to \(core, hwthread, socket, numa or none\)$"
    run 2 -n 1 --bind-to
    err_is "^mpirun: --bind-to needs core, hwthread, socket, numa or none$"
    DCFA_BIND_TO=board run 2 -n 1 "${prog[@]}"
    err_is "^mpirun: DCFA_BIND_TO board: not a level to bind to \(core, hwthread, socket, numa or none\)$"
    [ -e "$TMP/started" ] && fail "a rank started after a bad binding"
    # mpirun restricted to one CPU: two ranks cannot each have a core
    taskset -c "$FIRST" "$MPIRUN" -n 2 --bind-to core "${prog[@]}" >"$TMP/out" 2>"$TMP/err"
    [ $? = 2 ] || fail "taskset -c $FIRST, 2 ranks bound to cores: not status 2: $(cat "$TMP/err")"
    err_is "^mpirun: --bind-to core on host '[^']+': 2 ranks but 1 core, so 2 would share core 0"
    [ -e "$TMP/started" ] && fail "a rank started after a bad binding"
    ;;
hosts)
    # each host's daemon places its own ranks (local_rsh: every "host" is this machine)
    export DCFA_RSH=$RSH
    check $((2 * NCORES)) core "block:$NCORES" -hosts hA,hB -ppn "$NCORES" --report-bindings
    for h in hA hB; do
        [ "$(grep -c "^\[$h:[0-9]*\] rank [0-9]* bound to core" "$TMP/err")" = "$NCORES" ] ||
            fail "report lines of $h: $(cat "$TMP/err")"
    done
    check $((2 * NCORES)) core cyclic:2 -hosts hA,hB --map-by node
    check "$((2 * MORE))" none local -hosts hA,hB -ppn "$MORE"
    prog=(sh -c "touch $TMP/started")
    run 2 -hosts hA,hB -ppn "$MORE" --bind-to core "${prog[@]}"
    err_is "^mpirun: --bind-to core on host 'h[AB]': $MORE ranks but $NCORES cores?"
    [ -e "$TMP/started" ] && fail "a rank started after a bad binding"
    ;;
wdir)
    mkdir -p "$TMP/w d"
    run 0 -n 2 -wdir "$TMP/w d" pwd
    [ "$(sort -u "$TMP/out")" = "$TMP/w d" ] || fail "-wdir: $(cat "$TMP/out")"
    run 0 -n 1 --wdir="$TMP" pwd
    [ "$(cat "$TMP/out")" = "$TMP" ] || fail "--wdir=: $(cat "$TMP/out")"
    (cd "$TMP" && run 0 -n 1 -wd "w d" pwd) || exit 1
    [ "$(cat "$TMP/out")" = "$TMP/w d" ] || fail "-wd relative: $(cat "$TMP/out")"
    run 0 -n 1 --wdir "$TMP/w d" --bind-to none true : -n 1 -wdir / pwd # the last one wins
    [ "$(cat "$TMP/out")" = "/" ] || fail "MPMD -wdir: $(cat "$TMP/out")"
    run 2 -n 2 -wdir "$TMP/none" pwd
    err_is "^mpirun: -wdir $TMP/none: cannot start the ranks there: No such file or directory$"
    touch "$TMP/file"
    run 2 -n 1 -wdir "$TMP/file" pwd
    err_is "^mpirun: -wdir $TMP/file: cannot start the ranks there: Not a directory$"
    run 2 -n 1 -wdir
    grep -q "^mpirun: -wdir needs a directory$" "$TMP/err" || fail "-wdir without a directory: $(cat "$TMP/err")"
    export DCFA_RSH=$RSH
    run 0 -hosts hA,hB -ppn 1 -wdir "$TMP/w d" pwd
    [ "$(sort -u "$TMP/out")" = "$TMP/w d" ] || fail "-wdir across hosts: $(cat "$TMP/out")"
    run 1 -hosts hA,hB -ppn 1 -wdir "$TMP/none" pwd
    grep -q "cannot change to directory '$TMP/none': No such file or directory" "$TMP/err" ||
        fail "-wdir missing across hosts: $(cat "$TMP/err")"
    ;;
*)
    fail "unknown case"
    ;;
esac
exit 0
