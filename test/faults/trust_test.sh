#!/bin/bash
# Another local user against the name server (docs/faults.md,
# docs/launcher.md "Name service"): trust_test.sh CASE MPIRUN
# Exit 0 = pass, 77 = skipped (not root: a second user cannot be made), else fail.
#
#   nameserver      mpirun --nameserver as this user: the other user is refused
#                   (ERR EACCES, connection closed) for LOOKUP, UNPUBLISH and
#                   PUBLISH and this user's names stay as they were; with
#                   DCFA_NAMESERVER_SECRET, a client that sends AUTH with it is
#                   served, a wrong one refused; bound to another address the
#                   server needs the secret to start, and a client reaching it
#                   there is refused without it.
set -u
CASE=$1 MPIRUN=$2
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
