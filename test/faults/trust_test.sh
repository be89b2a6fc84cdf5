#!/bin/bash
# Another local user against a job and against the name server (docs/faults.md,
# docs/launcher.md "Name service"): trust_test.sh CASE MPIRUN [PROG]
# Exit 0 = pass, 77 = skipped (not root: a second user cannot be made), else fail.
#
#   segments PROG   a throwaway user (useradd, removed at the end) watches
#                   /dev/shm while a job of PROG (test/faults/trust_prog) runs and
#                   plants, mode 0666, every segment name it can derive from what
#                   the job shows: its job id and ranks, and the tokens of the
#                   names it sees (doors, pools, rings, the collectives' and
#                   windows' segments, as named before and after the names took
#                   random tokens); only then does the job communicate. It must
#                   run as if nothing were there, and the planted files stay empty.
#   nameserver      mpirun --nameserver as this user: the other user is refused
#                   (ERR EACCES, connection closed) for LOOKUP, UNPUBLISH and
#                   PUBLISH and this user's names stay as they were; with
#                   DCFA_NAMESERVER_SECRET, a client that sends AUTH with it is
#                   served, a wrong one refused; bound to another address the
#                   server needs the secret to start, and a client reaching it
#                   there is refused without it.
set -u
CASE=$1 MPIRUN=$2 PROG=${3:-}
fail() { echo "FAIL [$CASE]: $*" >&2; exit 1; }
if [ "$(id -u)" != 0 ]; then
    echo "SKIP [$CASE]: playing another user needs root (useradd, runuser)"
    exit 77
fi
command -v useradd >/dev/null && command -v runuser >/dev/null || fail "useradd/runuser missing"
TMP=$(mktemp -d /tmp/dcfa-trust-test.XXXXXX)
U=dcfatrust$$
NSPID= JOBPID=
cleanup() {
    [ -n "$NSPID" ] && kill -TERM "$NSPID" 2>/dev/null
    [ -n "$JOBPID" ] && kill -TERM "$JOBPID" 2>/dev/null
    pkill -KILL -u "$U" 2>/dev/null
    find /dev/shm -maxdepth 1 -user "$U" -delete 2>/dev/null
    userdel "$U" 2>/dev/null
    rm -rf "$TMP"
}
trap cleanup EXIT
useradd --system --no-create-home --shell /usr/sbin/nologin "$U" || fail "useradd $U failed"
chmod 755 "$TMP"
mkdir "$TMP/other" && chown "$U" "$TMP/other"
as_other() { runuser -u "$U" -- "$@"; }

case $CASE in
segments)
    [ -x "$PROG" ] || fail "no program '$PROG'"
    # the other user: given the job id, plants the names it can derive, again
    # whenever new names of the job appear, until told to stop
    cat >"$TMP/squat.sh" <<'EOF'
job=$1 n=$2 out=$3
umask 0
plant() { [ -e "/dev/shm/$1" ] || { : >"/dev/shm/$1" && echo "$1" >>"$out/planted"; }; }
while [ ! -e "$out/stop" ]; do
    for p in $(seq 0 $((n - 1))); do
        plant "dcfa-$job-$p"; plant "dcfa-$job-$p-s"
        for q in $(seq 0 $((n - 1))); do plant "dcfa-$job-$p-$q"; done
        for k in $(seq 1 8); do plant "dcfa-$job-coll-$p-$k"; plant "dcfa-$job-win-$p-$k"; done
    done
    # tokens it sees in names: tried in every place a token goes
    for f in /dev/shm/dcfa-"$job"-*; do
        t=${f##*-}; t=${t#[dsg]}
        [[ $t =~ ^[0-9a-f]{16}$ ]] || continue
        for p in $(seq 0 $((n - 1))); do
            plant "dcfa-$job-$p-d$t"; plant "dcfa-$job-$p-s$t"
            for q in $(seq 0 $((n - 1))); do plant "dcfa-$job-$p-$q-$t"; done
        done
    done
    sleep 0.05
done
EOF
    chmod 644 "$TMP/squat.sh"
    n=3
    TRUST_DIR=$TMP "$MPIRUN" --timeout 90 -n $n "$PROG" >"$TMP/out" 2>"$TMP/err" </dev/null &
    JOBPID=$!
    for _ in $(seq 300); do [ -s "$TMP/job" ] && break; sleep 0.1; done
    job=$(cat "$TMP/job" 2>/dev/null)
    [ -n "$job" ] || fail "the job did not start: $(cat "$TMP/err")"
    as_other bash "$TMP/squat.sh" "$job" $n "$TMP/other" &
    SQ=$!
    sleep 1.5 # it saw the doors; it keeps planting while the job runs
    touch "$TMP/go"
    wait $JOBPID
    st=$?
    JOBPID=
    touch "$TMP/other/stop"
    wait $SQ
    planted=$(wc -l <"$TMP/other/planted" 2>/dev/null || echo 0)
    if [ $st != 0 ] || ! grep -qx ' No Errors' "$TMP/out"; then
        cat "$TMP/out" "$TMP/err" >&2
        fail "the job did not run with $planted names planted by uid $(id -u "$U") (status $st)"
    fi
    [ "$planted" -ge $((n * (n + 2) + 16 * n)) ] || fail "the other user planted only $planted names"
    used=$(find /dev/shm -maxdepth 1 -user "$U" -size +0c)
    [ -z "$used" ] || fail "planted segments were written: $used"
    grep -q 'someone else' "$TMP/err" && fail "a segment was refused: $(cat "$TMP/err")"
    echo "the job ran with $planted names planted by uid $(id -u "$U")"
    ;;
nameserver)
    # start_ns [mpirun --nameserver options]: its address in $addr, its pid in NSPID
    start_ns() {
        rm -f "$TMP/ns.out"
        ("$MPIRUN" --nameserver "$@" >"$TMP/ns.out" 2>"$TMP/ns.err") &
        NSPID=$!
        for _ in $(seq 50); do [ -s "$TMP/ns.out" ] && break; sleep 0.1; done
        addr=$(head -n 1 "$TMP/ns.out")
        [[ $addr =~ :[0-9]+$ ]] || fail "name server printed '$addr': $(cat "$TMP/ns.err")"
    }
    stop_ns() { kill -TERM "$NSPID"; wait "$NSPID"; NSPID=; }
    # ask HOST PORT LINES...: sends the lines, prints the replies (as whoever calls it)
    cat >"$TMP/ask.sh" <<'EOF'
host=$1 port=$2
shift 2
exec 3<>"/dev/tcp/$host/$port" || exit 3
for l in "$@"; do printf '%s\n' "$l" >&3; done
for l in "$@"; do read -r -t 5 line <&3 || break; echo "$line"; done
EOF
    chmod 644 "$TMP/ask.sh"
    start_ns
    [[ $addr == 127.0.0.1:* ]] || fail "not bound to loopback by default: '$addr'"
    port=${addr##*:}
    ss -ltn | grep -q "127.0.0.1:$port " || fail "not listening on 127.0.0.1:$port: $(ss -ltn)"
    bash "$TMP/ask.sh" 127.0.0.1 "$port" "PUBLISH trust-svc port-of-root" "LOOKUP trust-svc" >"$TMP/r"
    [ "$(tr '\n' '|' <"$TMP/r")" = "OK|OK port-of-root|" ] || fail "own user: $(cat "$TMP/r")"
    for req in "LOOKUP trust-svc" "UNPUBLISH trust-svc" "PUBLISH trust-other x"; do
        as_other bash "$TMP/ask.sh" 127.0.0.1 "$port" "$req" "LOOKUP trust-svc" >"$TMP/r"
        [ "$(wc -l <"$TMP/r")" = 1 ] && grep -q '^ERR EACCES ' "$TMP/r" ||
            fail "the other user's '$req': $(cat "$TMP/r")"
    done
    bash "$TMP/ask.sh" 127.0.0.1 "$port" "LOOKUP trust-svc" "LOOKUP trust-other" >"$TMP/r"
    [ "$(head -n 1 "$TMP/r")" = "OK port-of-root" ] || fail "the name changed: $(cat "$TMP/r")"
    grep -q '^ERR ENOENT' <(tail -n 1 "$TMP/r") || fail "the other user published: $(cat "$TMP/r")"
    stop_ns
    # a shared secret admits whoever has it
    export DCFA_NAMESERVER_SECRET=trust-test-secret-$$-$RANDOM$RANDOM
    start_ns
    port=${addr##*:}
    bash "$TMP/ask.sh" 127.0.0.1 "$port" "PUBLISH trust-svc port-of-root" >/dev/null
    as_other bash "$TMP/ask.sh" 127.0.0.1 "$port" "AUTH $DCFA_NAMESERVER_SECRET" "LOOKUP trust-svc" >"$TMP/r"
    [ "$(tr '\n' '|' <"$TMP/r")" = "OK|OK port-of-root|" ] || fail "the secret: $(cat "$TMP/r")"
    as_other bash "$TMP/ask.sh" 127.0.0.1 "$port" "AUTH wrong-secret-of-some-length" "LOOKUP trust-svc" >"$TMP/r"
    [ "$(tr '\n' '|' <"$TMP/r")" = "ERR EACCES wrong secret|" ] || fail "a wrong secret: $(cat "$TMP/r")"
    stop_ns
    # another address: the secret is needed to start, and from there to be served
    if ip=$(hostname -I 2>/dev/null | tr ' ' '\n' | grep -E '^[0-9.]+$' | grep -v '^127\.' | head -n 1) &&
        [ -n "$ip" ]; then
        env -u DCFA_NAMESERVER_SECRET "$MPIRUN" --nameserver --bind 0.0.0.0 >/dev/null 2>"$TMP/e"
        [ $? = 2 ] && grep -q 'DCFA_NAMESERVER_SECRET' "$TMP/e" ||
            fail "--bind 0.0.0.0 without a secret started: $(cat "$TMP/e")"
        start_ns --bind 0.0.0.0
        port=${addr##*:}
        bash "$TMP/ask.sh" "$ip" "$port" "LOOKUP x" >"$TMP/r"
        grep -q '^ERR EACCES' "$TMP/r" || fail "over $ip without the secret: $(cat "$TMP/r")"
        bash "$TMP/ask.sh" "$ip" "$port" "AUTH $DCFA_NAMESERVER_SECRET" "PUBLISH trust-ip p" >"$TMP/r"
        [ "$(tr '\n' '|' <"$TMP/r")" = "OK|OK|" ] || fail "over $ip with the secret: $(cat "$TMP/r")"
        stop_ns
    fi
    DCFA_NAMESERVER_SECRET=short "$MPIRUN" --nameserver >/dev/null 2>&1
    [ $? = 2 ] || fail "a secret of 5 characters accepted"
    ;;
*)
    fail "unknown case"
    ;;
esac
exit 0
