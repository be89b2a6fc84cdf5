#!/bin/bash
# ThreadSanitizer run of the threaded tests (docs/threads.md).
#
#   test/tsan/run.sh [BUILD_DIR]        default: build-tsan next to build/
#
# Configures BUILD_DIR with -DDCFA_SANITIZE_THREAD=ON (library, mpirun and
# tests compiled with -fsanitize=thread), builds what the tests need and runs
# each test below under the tsan mpirun. A test passes when its job exits 0,
# rank 0 prints " No Errors" and no rank printed a ThreadSanitizer report.
# The last line is "N passed, N failed"; the exit status is non-zero iff one
# failed (2 if the build failed).
#
# TSan needs its fixed memory layout; on kernels with high address-space
# randomisation (vm.mmap_rnd_bits > 28) its runtime stops with "unexpected
# memory mapping". The script then runs everything under `setarch -R`
# (randomisation off for mpirun, the daemon and the ranks, which inherit it).
set -u
src=$(cd "$(dirname "$0")/../.." && pwd)
bld=${1:-$src/build-tsan}
jobs=${DCFA_TSAN_JOBS:-2}

# name  nprocs  timeout  [VAR=VALUE ...]
tests=(
    "thread_multiple 2 120"
    "thread_multiple 4 120"
    "thr_session 2 120"
    "thr_bsend 2 180"
    "mprobe_corners 2 120"
    "thr_stress 2 300"
    "thr_stress 3 300"
    "thr_stress 3 300 DCFA_EAGER_LIMIT=512"
    "async_progress 2 120 DCFA_ASYNC_PROGRESS=1"
)

cmake -S "$src" -B "$bld" -DDCFA_SANITIZE_THREAD=ON -DDCFA_WERROR=ON >"$bld.configure.log" 2>&1 ||
    { echo "tsan: configure failed, see $bld.configure.log"; exit 2; }
targets="mpi mpirun"
for t in "${tests[@]}"; do
    set -- $t
    case " $targets " in *" mpitest_$1 "*) ;; *) targets="$targets mpitest_$1" ;; esac
done
nice cmake --build "$bld" -j"$jobs" --target $targets >"$bld/build.log" 2>&1 ||
    { echo "tsan: build failed, see $bld/build.log"; exit 2; }

export TSAN_OPTIONS="exitcode=66 second_deadlock_stack=1 report_signal_unsafe=0 ${TSAN_OPTIONS:-}"
wrap=()
probe_out=$("$bld/mpirun" -n 1 "$bld/test/mpi/thread_multiple" 2>&1)
if printf '%s' "$probe_out" | grep -q "unexpected memory mapping\|FATAL: ThreadSanitizer"; then
    wrap=(setarch "$(uname -m)" -R)
    echo "tsan: address randomisation too high for TSan here; running under setarch -R"
fi

pass=0
fail=0
logdir="$bld/tsan-logs"
mkdir -p "$logdir"
for t in "${tests[@]}"; do
    set -- $t
    name=$1 np=$2 tmo=$3
    shift 3
    label="$name.np$np${1:+.$1}"
    out="$logdir/$label.out" err="$logdir/$label.err"
    env "$@" "${wrap[@]}" timeout -k 10 "$tmo" "$bld/mpirun" -n "$np" "$bld/test/mpi/$name" >"$out" 2>"$err"
    rc=$?
    reports=$(grep -c "WARNING: ThreadSanitizer" "$err")
    if [ $rc -eq 0 ] && [ "$(tr -d '\n' <"$out")" = " No Errors" ] && [ "$reports" -eq 0 ]; then
        echo "PASS  $label"
        pass=$((pass + 1))
    else
        echo "FAIL  $label (exit $rc, $reports ThreadSanitizer reports; see $err)"
        grep -A12 "WARNING: ThreadSanitizer" "$err" | head -40
        fail=$((fail + 1))
    fi
done
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
