#!/bin/bash
# Fuzz the packet decoder and the PMI wire parser for a bounded time.
#
#   test/fuzz/run.sh [SECONDS]     (default 60 per target; CI: 60)
#
# Builds fuzz_packet and fuzz_pmi with clang (libFuzzer + ASan + UBSan) into
# ${FUZZ_OUT:-build-fuzz}/ and runs each for SECONDS, starting from the
# regression inputs in test/fuzz/corpus-<target>/ (new inputs go to
# build-fuzz/corpus-<target>/, never into the source tree). A crash is
# written to build-fuzz/crash-<target>-*: fix it, then add the input to
# test/fuzz/corpus-<target>/ so ctest (fuzz.regress.*) replays it for good.
# The last line is "N passed, N failed" (one test per target); the exit
# status is non-zero iff a target failed to build or found a crash.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SECONDS_EACH=${1:-60}
OUT=${FUZZ_OUT:-$ROOT/build-fuzz}
CC=${FUZZ_CC:-clang}
mkdir -p "$OUT"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:halt_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
FLAGS=(-g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
       -fno-omit-frame-pointer -D_GNU_SOURCE -DFUZZ_LIBFUZZER -I"$ROOT/src" -I"$ROOT/include")
pass=0
fail=0

build() { # build TARGET SOURCES...
    local t=$1
    shift
    echo "== build fuzz_$t"
    if ! "$CC" "${FLAGS[@]}" -o "$OUT/fuzz_$t" "$@" -lrt -lpthread; then
        echo "fuzz_$t: build failed"
        return 1
    fi
}

run() { # run TARGET
    local t=$1
    local log=$OUT/fuzz_$t.log
    mkdir -p "$OUT/corpus-$t"
    rm -f "$OUT"/crash-"$t"-*
    echo "== fuzz_$t for $SECONDS_EACH s"
    "$OUT/fuzz_$t" -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=2048 \
        -print_final_stats=1 -artifact_prefix="$OUT/crash-$t-" \
        "$OUT/corpus-$t" "$ROOT/test/fuzz/corpus-$t" > "$log" 2>&1
    local rc=$?
    grep -E '^(#[0-9]+ +DONE|stat::number_of_executed_units|stat::peak_rss_mb)' "$log"
    if [ $rc -ne 0 ] || ls "$OUT"/crash-"$t"-* > /dev/null 2>&1; then
        tail -40 "$log"
        echo "fuzz_$t: FAILED (status $rc); inputs: $(ls "$OUT"/crash-"$t"-* 2> /dev/null | tr '\n' ' ')"
        return 1
    fi
    echo "fuzz_$t: no crash"
}

# the library's core and every fabric but ofi (built only with libfabric)
if build packet "$ROOT/test/fuzz/fuzz_packet.c" "$ROOT"/src/util/*.c "$ROOT"/src/fabric/*.c \
    "$ROOT"/src/fabric/shm/*.c "$ROOT"/src/fabric/sock/*.c "$ROOT"/src/fabric/gw/*.c \
    "$ROOT"/src/core/*.c && run packet; then
    pass=$((pass + 1))
else
    fail=$((fail + 1))
fi
# the daemon's sources, all but mpirun's main(), and the library files mpirun links (the
# same lists as test/fuzz/CMakeLists.txt and CMakeLists.txt's mpirun, so a new daemon file
# needs no edit here)
daemon_sources=()
for f in "$ROOT"/tools/mpirun/*.c; do
    [ "$(basename "$f")" = main.c ] || daemon_sources+=("$f")
done
daemon_sources+=("$ROOT/src/util/net.c" "$ROOT/src/util/siphash.c" "$ROOT/src/fabric/gw/gw_route.c")
if build pmi -I"$ROOT/tools/mpirun" "$ROOT/test/fuzz/fuzz_pmi.c" "${daemon_sources[@]}" -lhwloc &&
    run pmi; then
    pass=$((pass + 1))
else
    fail=$((fail + 1))
fi
# the job ids of the packet target ("fz<pid>") name its shared memory
rm -f /dev/shm/dcfa-fz[0-9]*-* 2> /dev/null
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
