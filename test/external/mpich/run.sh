#!/usr/bin/env bash
# Run (part of) the MPICH test suite against an installed MPI as an external
# conformance judge.  See docs/testing.md, "The MPICH test suite".
#
#   test/external/mpich/run.sh --with-mpi PREFIX [options] [folder ...]
#
# The suite comes from Debian's source package of MPICH 4.0.2 (bookworm),
# fetched once with a private apt configuration and cached.  It is configured
# standalone (--enable-strictmpi) against PREFIX/bin/mpicc, only the requested
# folders are built, and every test-list entry with at most --max-np ranks is
# run with PREFIX/bin/mpirun (or mpiexec) under a timeout.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
MPICH_VERSION=${DCFA_MPICH_VERSION:-4.0.2}
CACHE=${DCFA_MPICH_CACHE:-${HOME:-/root}/.cache/dcfa-mpi/mpich-testsuite}
PREFIX=""
MPIRUN=""
MAX_NP=4
JOBS=1
SLOTS=$(nproc 2> /dev/null || echo 2)
REPORT_ONLY=0
FRESH=0
LISTS="testlist,testlist.dtp"
XFAIL_FILE="$HERE/xfail.txt"
SKIP_FILE=""
LOG=""
DEFAULT_TIMEOUT=60
TIME_BUDGET=0
FOLDERS=()
MPIRUN_ARGS=()

usage() {
    cat <<EOF
usage: $0 --with-mpi PREFIX [options] [folder ...]
  --with-mpi PREFIX   MPI installation to test (PREFIX/bin/mpicc is used)
  --mpirun CMD        launcher (default PREFIX/bin/mpirun, else PREFIX/bin/mpiexec)
  --mpirun-args ARGS  options put before every entry's own, split at blanks, e.g.
                      "-hosts h1,h2" (with DCFA_RSH in the environment)
  --max-np N          run only entries with at most N ranks (default $MAX_NP);
                      a folder written FOLDER@np=N,nonstrict,retry=R has its own limit,
                      also runs the entries MPICH marks strict=false, and runs a
                      failed entry again up to R times (timing tests)
  --jobs N            run up to N tests at a time (default $JOBS) ...
  --slots N           ... as long as their ranks fit in N cores (default: nproc = $SLOTS)
  --lists L           comma-separated test-list files per folder (default $LISTS)
  --xfail FILE        expected-failure list (default $XFAIL_FILE)
  --skip FILE         entries not to run ("folder/prog np  # reason" per line),
                      reported as skipped with their reason
  --log FILE          log with the output of failures (default BUILD/results.log)
  --timeout SEC       timeout of entries without timeLimit= (default $DEFAULT_TIMEOUT)
  --time-budget SEC   stop starting tests after SEC seconds; the rest count as failed
  --cache DIR         where the suite is cached (default $CACHE)
  --fresh             reconfigure and rebuild the suite from scratch
  --report-only       always exit 0 (after configure/build succeeded)
folders default to: init pt2pt group comm attr errhan info
EOF
}

while [ $# -gt 0 ]; do
    case "$1" in
        --with-mpi) PREFIX=$2; shift 2 ;;
        --with-mpi=*) PREFIX=${1#*=}; shift ;;
        --mpirun) MPIRUN=$2; shift 2 ;;
        --mpirun-args) read -r -a MPIRUN_ARGS <<< "$2"; shift 2 ;;
        --max-np) MAX_NP=$2; shift 2 ;;
        --jobs|-j) JOBS=$2; shift 2 ;;
        --slots) SLOTS=$2; shift 2 ;;
        --lists) LISTS=$2; shift 2 ;;
        --xfail) XFAIL_FILE=$2; shift 2 ;;
        --skip) SKIP_FILE=$2; shift 2 ;;
        --log) LOG=$2; shift 2 ;;
        --timeout) DEFAULT_TIMEOUT=$2; shift 2 ;;
        --time-budget) TIME_BUDGET=$2; shift 2 ;;
        --cache) CACHE=$2; shift 2 ;;
        --fresh) FRESH=1; shift ;;
        --report-only) REPORT_ONLY=1; shift ;;
        -h|--help) usage; exit 0 ;;
        -*) echo "unknown option $1" >&2; usage >&2; exit 2 ;;
        *) FOLDERS+=("$1"); shift ;;
    esac
done
[ -n "$PREFIX" ] || { usage >&2; exit 2; }
PREFIX=$(cd "$PREFIX" && pwd)
[ -x "$PREFIX/bin/mpicc" ] || { echo "error: $PREFIX/bin/mpicc not found" >&2; exit 2; }
if [ -z "$MPIRUN" ]; then
    if [ -x "$PREFIX/bin/mpirun" ]; then MPIRUN=$PREFIX/bin/mpirun
    elif [ -x "$PREFIX/bin/mpiexec" ]; then MPIRUN=$PREFIX/bin/mpiexec
    else echo "error: no mpirun/mpiexec in $PREFIX/bin" >&2; exit 2
    fi
fi
[ ${#FOLDERS[@]} -gt 0 ] || FOLDERS=(init pt2pt group comm attr errhan info)

# ---- 1. fetch the suite (private apt configuration, system apt untouched) ----
SRC=$CACHE/src/mpich-$MPICH_VERSION
# shellcheck source=../apt_source.sh
. "$HERE/../apt_source.sh"
fetch_suite() {
    echo "fetching MPICH $MPICH_VERSION sources into $CACHE/src (private apt config in $CACHE/apt)"
    apt_source "$CACHE/apt" "$CACHE/src" "$CACHE/fetch.log" "mpich=$MPICH_VERSION-*" mpich || exit 2
    [ -x "$SRC/test/mpi/configure" ] ||
        { echo "error: $SRC/test/mpi/configure missing after apt-get source" >&2; exit 2; }
    rm -f "$CACHE"/src/mpich_*.tar.* "$CACHE"/src/mpich_*.dsc
}
mkdir -p "$CACHE"
if [ ! -x "$SRC/test/mpi/configure" ]; then fetch_suite; fi

# ---- 2. configure (once per MPI prefix) and build the requested folders -------
# The Fortran folders (f77, f90, f08) are configured when PREFIX has mpifort.
FORTRAN=(--disable-fortran)
if [ -x "$PREFIX/bin/mpifort" ]; then
    FORTRAN=(--enable-fortran=all F77="$PREFIX/bin/mpifort" FC="$PREFIX/bin/mpifort"
             MPIF77="$PREFIX/bin/mpifort" MPIFC="$PREFIX/bin/mpifort")
fi
KEY=$( (echo "$PREFIX"; "$PREFIX/bin/mpicc" -show 2>/dev/null || true; echo "${FORTRAN[*]}") |
       cksum | cut -d' ' -f1)
BUILD=$CACHE/build-$KEY
[ "$FRESH" = 0 ] || rm -rf "$BUILD"
mkdir -p "$BUILD"
[ -n "$LOG" ] || LOG=$BUILD/results.log
if [ ! -f "$BUILD/config.status" ]; then
    echo "configuring the suite against $PREFIX in $BUILD"
    if ! (cd "$BUILD" && "$SRC/test/mpi/configure" --with-mpi="$PREFIX" --enable-strictmpi \
            "${FORTRAN[@]}" --disable-cxx MPICC="$PREFIX/bin/mpicc" CC="$PREFIX/bin/mpicc") \
            > "$BUILD/configure.log" 2>&1; then
        tail -30 "$BUILD/configure.log" >&2
        rm -f "$BUILD/config.status"
        echo "error: configure failed, see $BUILD/configure.log" >&2
        exit 2
    fi
fi
BUILD_JOBS=$(nproc 2> /dev/null || echo 2)
: > "$BUILD/build.log"
# Configured on its own (not from MPICH's tree), the suite leaves its mpi_f08
# helpers (util/mtest_f08.f90) out of util/libmtest_f08 although it builds the
# f08 folder: the f08 tests would not link. Made here with the object named.
if [ -x "$PREFIX/bin/mpifort" ] && grep -q '^#am_libmtest_f08_la_OBJECTS' "$BUILD/util/Makefile" &&
   ! [ -s "$BUILD/util/mtest_f08.lo" ]; then
    rm -f "$BUILD/util/libmtest_f08.la"
    make -C "$BUILD/util" libmtest_f08.la am_libmtest_f08_la_OBJECTS=mtest_f08.lo \
        >> "$BUILD/build.log" 2>&1 || true
fi
for f in "${FOLDERS[@]}"; do
    f=${f%%@*}
    [ -d "$BUILD/$f" ] || { echo "error: no folder $f in the suite" >&2; exit 2; }
    echo "building $f"
    # -k: a test that fails to compile is just a failed test.
    make -C "$BUILD/$f" -k -j"$BUILD_JOBS" >> "$BUILD/build.log" 2>&1 || true
    # Programs of the test list that strict mode leaves out of the build but
    # that the Makefile can make (io's i_* tests of the standard nonblocking
    # collective I/O calls and rma's aint_collattach sit behind MPICH's
    # non-strict switch): made too.
    # (in the folder and its subfolders: the Fortran folders keep their tests in
    # f77/io, f77/ext ...)
    while IFS= read -r list; do
        d=$(dirname "$list")
        rel=${d#"$BUILD"/}
        missing=()
        while read -r prog _; do
            case "$prog" in ''|\#*|!*) continue ;; esac
            [ -e "$d/$prog" ] && continue
            [ -d "$d/$prog" ] && continue
            # its own source, or a rule of the Makefile (rma's aint_collattach is aint.c
            # built another way)
            if [ -f "$SRC/test/mpi/$rel/$prog.c" ] || make -C "$d" -n "$prog" > /dev/null 2>&1; then
                missing+=("$prog")
            fi
        done < "$list"
        [ ${#missing[@]} -eq 0 ] ||
            make -C "$d" -k -j"$BUILD_JOBS" "${missing[@]}" >> "$BUILD/build.log" 2>&1 || true
    done < <(find "$BUILD/$f" -name testlist -type f)
done

# ---- 3. collect the entries --------------------------------------------------
# MPICH test-list lines: "program [np [key=value ...]]", '#' comments; a program
# that is a directory is recursed into.  One entry per line written to $ENTRIES,
# fields separated by \x1e: id dir prog np timeout result envs args launcher-args
# (the last three are lists separated by \x1f).
WORK=$(mktemp -d "${TMPDIR:-/tmp}/dcfa-mpich.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
ENTRIES=$WORK/entries
SKIPPED=$WORK/skipped
: > "$ENTRIES"; : > "$SKIPPED"
MEM_GB=$(awk '/^MemTotal:/ { printf "%.1f", $2 / 1048576 }' /proc/meminfo)
MPI_VER=""    # MPI_VERSION.MPI_SUBVERSION of PREFIX/include/mpi.h; unknown: nothing skipped
if [ -f "$PREFIX/include/mpi.h" ]; then
    MPI_VER=$(awk '/#define[ \t]+MPI_VERSION[ \t]/ { v = $3 } /#define[ \t]+MPI_SUBVERSION[ \t]/ { s = $3 }
                   END { if (v != "") printf "%d.%d", v, s }' "$PREFIX/include/mpi.h")
fi
US=$'\x1f'
RS=$'\x1e'

skip() { printf '%s %s  # %s\n' "$1" "$2" "$3" >> "$SKIPPED"; }

# --skip FILE: "folder/prog np  # reason" lines
declare -A SKIP_WHY=()
if [ -n "$SKIP_FILE" ]; then
    [ -f "$SKIP_FILE" ] || { echo "error: no skip file $SKIP_FILE" >&2; exit 2; }
    while IFS= read -r line || [ -n "$line" ]; do
        entry=${line%%#*}
        read -r -a f <<< "$entry" || true
        [ ${#f[@]} -ge 2 ] || continue
        reason=${line#*#}
        [ "$reason" != "$line" ] || reason="listed in $(basename "$SKIP_FILE")"
        SKIP_WHY["${f[0]} ${f[1]}"]="$(basename "$SKIP_FILE"):${reason}"
    done < "$SKIP_FILE"
fi

version_ge() { # $1 >= $2 (dotted versions)
    [ "$(printf '%s\n%s\n' "$1" "$2" | sort -V | head -1)" = "$2" ]
}

scan_dir() { # $1 = folder relative to $BUILD
    local dir=$1 list file line prog np key val i
    local -a f
    IFS=',' read -r -a list <<< "$LISTS"
    for file in "${list[@]}"; do
        if [ -f "$BUILD/$dir/$file" ]; then file=$BUILD/$dir/$file
        elif [ -f "$SRC/test/mpi/$dir/$file" ]; then file=$SRC/test/mpi/$dir/$file
        else continue
        fi
        while IFS= read -r line || [ -n "$line" ]; do
            line=${line%%#*}
            read -r -a f <<< "$line" || true
            [ ${#f[@]} -gt 0 ] || continue
            prog=${f[0]}
            case "$prog" in !*) continue ;; esac      # "!dir:target" build hints
            if [ -d "$BUILD/$dir/$prog" ] && [ ! -f "$BUILD/$dir/$prog.c" ]; then
                scan_dir "$dir/$prog"
                continue
            fi
            np=${f[1]:-1}
            case "$np" in ''|*[!0-9]*) echo "warning: bad np '$np' in $file" >&2; continue ;; esac
            local tmo=$DEFAULT_TIMEOUT result="" envs="" args="" largs="" why=""
            for ((i = 2; i < ${#f[@]}; i++)); do
                key=${f[i]%%=*}; val=${f[i]#*=}
                [ "$key" != "${f[i]}" ] || continue   # not key=value: ignored, as runtests does
                case "$key" in
                    timeLimit) case "$val" in ''|*[!0-9]*) ;; *) tmo=$val ;; esac ;;
                    env) envs+="$val$US" ;;
                    arg) args+="$val$US" ;;
                    mpiexecarg) largs+="$val$US" ;;
                    resultTest) result=$val ;;
                    strict) [ "${val,,}" != false ] || [ "$DIR_NONSTRICT" = 1 ] ||
                            why="non-strict test (strict=false)" ;;
                    mpix) [ "${val,,}" != true ] || why="needs MPIX extensions" ;;
                    mpiversion) [ -z "$MPI_VER" ] || version_ge "$MPI_VER" "$val" ||
                            why="needs MPI $val (have $MPI_VER)" ;;
                    mem) awk -v a="$val" -v b="$MEM_GB" 'BEGIN { exit !(a > b) }' &&
                            why="needs ${val} GB of memory" ;;
                    xfail|lock|init) ;;   # MPICH's own xfail marks MPICH bugs: ignored in strict mode
                    *) echo "warning: unknown key $key in $file" >&2 ;;
                esac
            done
            if [ -z "$why" ] && [ "$np" -gt "$DIR_MAX_NP" ]; then why="needs $np ranks (max np $DIR_MAX_NP)"; fi
            if [ -z "$why" ] && [ -n "${SKIP_WHY["$dir/$prog $np"]+x}" ]; then why=${SKIP_WHY["$dir/$prog $np"]}; fi
            if [ -n "$why" ]; then skip "$dir/$prog" "$np" "$why"; continue; fi
            printf "%s$RS%s$RS%s$RS%s$RS%s$RS%s$RS%s$RS%s$RS%s\n" "$dir/$prog" "$(dirname "$dir/$prog")" \
                "$(basename "$prog")" "$np" "$tmo" "$result" "$envs" "$args" "$largs" >> "$ENTRIES"
        done < "$file"
    done
}
# A folder argument may carry options: FOLDER@np=N,nonstrict,retry=R,ref (at most
# N ranks for this folder; also run the entries MPICH marks strict=false; run a
# failed entry again up to R times: for timing tests on a shared machine, the
# last run decides and the line says so; ref: an entry that still fails is built
# with the reference MPI, Debian's MPICH (mpicc.mpich, mpiexec.mpich), and run
# the same way, as often: when it fails there too, even once, the test's premise
# does not hold on this machine and the entry counts as expected to fail, the
# line saying why).
declare -A DIR_RETRY=() DIR_REF=()
for f in "${FOLDERS[@]}"; do
    DIR_MAX_NP=$MAX_NP
    DIR_NONSTRICT=0
    if [ "$f" != "${f#*@}" ]; then
        IFS=',' read -r -a opts <<< "${f#*@}"
        for o in "${opts[@]}"; do
            case "$o" in
                np=*) DIR_MAX_NP=${o#np=} ;;
                nonstrict) DIR_NONSTRICT=1 ;;
                retry=*) DIR_RETRY["${f%%@*}"]=${o#retry=} ;;
                ref) DIR_REF["${f%%@*}"]=1 ;;
                *) echo "error: unknown folder option '$o' in $f" >&2; exit 2 ;;
            esac
        done
    fi
    scan_dir "${f%%@*}"
done

# ---- 4. run ------------------------------------------------------------------
declare -A XFAIL=()
if [ -f "$XFAIL_FILE" ]; then
    while IFS= read -r line || [ -n "$line" ]; do
        line=${line%%#*}
        read -r -a f <<< "$line" || true
        [ ${#f[@]} -ge 2 ] || continue
        XFAIL["${f[0]} ${f[1]}"]=1
    done < "$XFAIL_FILE"
fi

# Pass criteria (as MPICH's runtests): by default exit status 0 and the only
# non-blank output line is " No Errors"; resultTest=TestStatus / TestErrFatal
# need a non-zero exit status (not our timeout); TestStatusNoErrors needs both.
judge() { # $1 = result kind, $2 = exit status, $3 = output file, $4 = 1 if `timeout` fired
    local kind=$1 rc=$2 out=$3 outer=${4:-1} noerr=0
    # 124 from the launcher itself (MPIEXEC_TIMEOUT) is a job it ended, which
    # TestErrFatal entries expect; only the outer `timeout` firing is our timeout
    if [ "$rc" -eq 137 ] || { [ "$rc" -eq 124 ] && [ "$outer" = 1 ]; }; then
        echo "timeout"; return 1
    fi
    if [ "$(grep -cv '^[[:space:]]*$' "$out")" = 1 ] && grep -qE '^[[:space:]]*No [Ee]rrors[[:space:]]*$' "$out"; then
        noerr=1
    fi
    case "$kind" in
        TestStatus|TestErrFatal) [ "$rc" -ne 0 ] || { echo "exit status 0, expected non-zero"; return 1; } ;;
        TestStatusNoErrors)
            [ "$rc" -ne 0 ] || { echo "exit status 0, expected non-zero"; return 1; }
            [ "$noerr" = 1 ] || { echo "output is not ' No Errors'"; return 1; } ;;
        *)
            [ "$rc" -eq 0 ] || { echo "exit status $rc"; return 1; }
            [ "$noerr" = 1 ] || { echo "output is not ' No Errors'"; return 1; } ;;
    esac
    return 0
}

# ref_fails DIR PROG NP TMO RETRIES ARGS...: 0 if the entry, built with the reference
# MPI, fails as well in one of 1 + RETRIES runs (a timing test the reference does not pass
# reliably on this machine proves nothing about us); 1 if it passes every time, or there
# is no reference (not installed, or the program does not build with it)
REF_CC=${DCFA_MPICH_REF_CC:-mpicc.mpich}
REF_RUN=${DCFA_MPICH_REF_RUN:-mpiexec.mpich}
ref_fails() {
    local dir=$1 prog=$2 np=$3 tmo=$4 retries=$5 rc i
    shift 5
    command -v "$REF_CC" > /dev/null && command -v "$REF_RUN" > /dev/null || return 1
    local rdir=$BUILD/ref/$dir t=$SRC/test/mpi
    mkdir -p "$rdir"
    if [ ! -x "$rdir/$prog" ]; then
        "$REF_CC" -o "$rdir/$prog" -I"$t/include" -I"$BUILD/include" "$t/$dir/$prog.c" \
            "$t/util/mtest.c" "$t/util/mtest_common.c" "$t/util/mtest_single.c" "$t/util/dtypes.c" -lm \
            > "$rdir/$prog.log" 2>&1 || return 1
    fi
    for ((i = 0; i <= retries; i++)); do
        rc=0
        (cd "$rdir" && timeout -k 10 $((tmo + 15)) "$REF_RUN" -n "$np" "./$prog" "$@") \
            > "$rdir/$prog.out" 2>&1 < /dev/null || rc=$?
        [ "$rc" = 0 ] && grep -qx ' No Errors' "$rdir/$prog.out" || return 0
    done
    return 1
}

run_entry() { # $1 = index, rest = entry fields
    local idx=$1 id=$2 dir=$3 prog=$4 np=$5 tmo=$6 kind=$7 envs=$8 args=$9 largs=${10}
    local out=$WORK/out.$idx rc=0 verdict why="" t0 t1 expect="" tries=0
    local retries=${DIR_RETRY["${id%%/*}"]:-0}
    local -a a=() l=() e=()
    IFS=$US read -r -a a <<< "$args" || true
    IFS=$US read -r -a l <<< "$largs" || true
    IFS=$US read -r -a e <<< "$envs" || true
    [ -z "${XFAIL["$id $np"]:-}" ] || expect=x
    t0=$(date +%s%N)
    if [ "$TIME_BUDGET" -gt 0 ] && [ $(( $(date +%s) - START )) -ge "$TIME_BUDGET" ]; then
        echo "not run: time budget of $TIME_BUDGET s used up" > "$out"
        why="not run (--time-budget)"; verdict=FAIL
    elif [ -x "$BUILD/$dir/$prog" ]; then
        while :; do
            local t2 outer=0
            t2=$(date +%s%N)
            rc=0
            # MPIEXEC_TIMEOUT asks the launcher to end the job itself; `timeout`
            # (which signals its whole process group) is the last resort.
            (cd "$BUILD/$dir" && env ${e[@]+"${e[@]}"} MPIEXEC_TIMEOUT="$tmo" \
                timeout -k 10 $((tmo + 15)) "$MPIRUN" ${MPIRUN_ARGS[@]+"${MPIRUN_ARGS[@]}"} \
                    ${l[@]+"${l[@]}"} -n "$np" "./$prog" ${a[@]+"${a[@]}"}) \
                > "$out" 2>&1 < /dev/null || rc=$?
            [ $(( ($(date +%s%N) - t2) / 1000000000 )) -lt $((tmo + 14)) ] || outer=1
            why=$(judge "$kind" "$rc" "$out" "$outer") && verdict=PASS || verdict=FAIL
            if [ $verdict = FAIL ] && [ $(( ($(date +%s%N) - t2) / 1000000000 )) -ge "$tmo" ]; then
                why="timed out after $tmo s ($why)"
            fi
            [ $verdict = FAIL ] && [ "$tries" -lt "$retries" ] || break
            tries=$((tries + 1))
        done
        [ "$tries" = 0 ] || why="${why:+$why; }run $((tries + 1)) times (retry=$retries)"
        if [ $verdict = FAIL ] && [ -z "$expect" ] && [ -n "${DIR_REF["${id%%/*}"]:-}" ] &&
            ref_fails "$dir" "$prog" "$np" "$tmo" "$retries" ${a[@]+"${a[@]}"}; then
            expect=x
            why="$why; fails with the reference MPI ($REF_CC, $REF_RUN) on this machine too: $(head -c 200 "$BUILD/ref/$dir/$prog.out" | tr '\n' ' ')"
        fi
    else
        echo "program $prog was not built (see $BUILD/build.log)" > "$out"
        why="not built"; verdict=FAIL
    fi
    t1=$(date +%s%N)
    if [ -n "$expect" ]; then
        if [ $verdict = PASS ]; then verdict=XPASS; else verdict=XFAIL; fi
    fi
    local shown="$id $np"
    [ -z "$envs$args" ] || shown+=" ${envs//$US/ }${args//$US/ }"
    t1=$(( (t1 - t0) / 100000000 ))
    printf '%-5s %s (%d.%ds)%s\n' "$verdict" "$shown" $((t1 / 10)) $((t1 % 10)) "${why:+: $why}"
    {
        printf '%s\t%s\n' "$verdict" "$shown"
        if [ $verdict = FAIL ] || [ $verdict = XFAIL ]; then
            echo "==== $verdict $shown: $why"
            echo "     cd $BUILD/$dir && ${envs//$US/ }$MPIRUN ${MPIRUN_ARGS[*]+${MPIRUN_ARGS[*]} }${largs//$US/ }-n $np ./$prog ${args//$US/ }"
            head -c 20000 "$out"
            echo
        fi
    } > "$WORK/res.$idx"
    rm -f "$out"
}

echo "running $(wc -l < "$ENTRIES") entries of: ${FOLDERS[*]} (max $MAX_NP ranks, $JOBS at a time) with $MPIRUN"
START=$(date +%s)
idx=0
# Parallel runs: at most $JOBS entries at once, and only while their ranks fit
# in $SLOTS cores (an entry needs min(np, SLOTS) of them), so ranks that poll
# are not oversubscribed by the runner itself.
running=0
free=$SLOTS
declare -A SLOTS_OF=()
while IFS=$RS read -r id dir prog np tmo kind envs args largs; do
    idx=$((idx + 1))
    if [ "$JOBS" -le 1 ]; then
        run_entry "$idx" "$id" "$dir" "$prog" "$np" "$tmo" "$kind" "$envs" "$args" "$largs"
        continue
    fi
    need=$(( np < SLOTS ? np : SLOTS ))
    [ "$need" -ge 1 ] || need=1
    while [ "$running" -gt 0 ] && { [ "$running" -ge "$JOBS" ] || [ "$free" -lt "$need" ]; }; do
        # `wait -p` unsets done_pid first and leaves it unset when it returns with no
        # job: on a signal (try again) or with no job to wait for (127:
        # none left that bash will report, so every slot is free)
        wrc=0
        wait -n -p done_pid || wrc=$?
        if [ -z "${done_pid:-}" ]; then
            if [ "$wrc" -eq 127 ]; then
                running=0; free=$SLOTS; SLOTS_OF=()
            fi
            continue
        fi
        free=$((free + ${SLOTS_OF[$done_pid]:-0})); unset "SLOTS_OF[$done_pid]"
        running=$((running - 1))
    done
    run_entry "$idx" "$id" "$dir" "$prog" "$np" "$tmo" "$kind" "$envs" "$args" "$largs" < /dev/null &
    SLOTS_OF[$!]=$need
    free=$((free - need))
    running=$((running + 1))
done < "$ENTRIES"
wait

# ---- 5. report -----------------------------------------------------------------
pass=0; fail=0; xfail=0; xpass=0
{
    echo "MPICH $MPICH_VERSION test suite against $PREFIX ($(date -u +%FT%TZ))"
    echo "folders: ${FOLDERS[*]}; launcher: $MPIRUN ${MPIRUN_ARGS[*]+${MPIRUN_ARGS[*]}}; max np: $MAX_NP"
} > "$LOG"
for ((i = 1; i <= idx; i++)); do
    [ -f "$WORK/res.$i" ] || { fail=$((fail + 1)); continue; }
    case "$(head -1 "$WORK/res.$i" | cut -f1)" in
        PASS) pass=$((pass + 1)) ;;
        XPASS) xpass=$((xpass + 1)) ;;
        XFAIL) xfail=$((xfail + 1)) ;;
        *) fail=$((fail + 1)) ;;
    esac
    tail -n +2 "$WORK/res.$i" >> "$LOG"
done
nskip=$(wc -l < "$SKIPPED")
{ echo "==== skipped entries"; cat "$SKIPPED"; } >> "$LOG"
total=$((pass + xpass + fail + xfail + nskip))
if [ "$xpass" -gt 0 ]; then
    echo "unexpectedly passed (remove from $(basename "$XFAIL_FILE")):"
    cat "$WORK"/res.* | grep '^XPASS' | cut -f2 | sed 's/^/  /'
fi
echo "log: $LOG"
echo "$((pass + xpass)) passed, $fail failed"
awk -v p=$((pass + xpass)) -v t=$total -v xf=$xfail -v xp=$xpass -v s=$nskip 'BEGIN {
    printf "%d xfail, %d unexpectedly passed, %d skipped; %.1f%% of %d entries passed\n",
           xf, xp, s, t ? 100 * p / t : 0, t }'
if [ "$fail" -gt 0 ] && [ "$REPORT_ONLY" = 0 ]; then exit 1; fi
exit 0
