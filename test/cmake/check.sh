#!/bin/sh
# Install a DCFA-MPI build into a temporary prefix and use it as a user would:
# find_package(MPI) with MPI_HOME=PREFIX (C and C++; the MPIEXEC_EXECUTABLE it
# finds must be ours, not another MPI's /usr/bin/mpiexec, and runs the
# programs), mpicc directly, and pkg-config under each name (mpi, and Debian's
# mpi-c and mpi-cxx, which must not resolve to the system MPI).  The other
# programs are run with PREFIX/bin/mpirun.
#   check.sh CMAKE BUILD_DIR THIS_DIR WORK_DIR
set -eu
CMAKE=$1 BUILD=$2 HERE=$3 WORK=$4
P=$WORK/prefix
STEP=
trap 'rc=$?; [ $rc -eq 0 ] || echo "check.sh: FAILED at: $STEP" >&2' EXIT

step() { STEP=$*; echo "-- $*"; }
LAUNCH=$P/bin/mpirun
run2() { # run2 EXE: run EXE on 2 ranks with $LAUNCH; it must print " No Errors"
    out=$(timeout -k 5 60 "$LAUNCH" -n 2 "$@" 2 2>&1) || { echo "$out"; return 1; }
    echo "$out"
    printf '%s\n' "$out" | grep -qx ' No Errors'
}

rm -rf "$WORK"
mkdir -p "$WORK"

step "cmake --install $BUILD --prefix $P"
"$CMAKE" --install "$BUILD" --prefix "$P" > "$WORK/install.log"
for f in bin/mpicc bin/mpicxx bin/mpirun bin/mpiexec include/mpi.h; do
    [ -e "$P/$f" ] || { echo "missing $P/$f"; exit 1; }
done
ls "$P"/lib*/libmpi.so "$P"/lib*/pkgconfig/mpi.pc "$P"/lib*/pkgconfig/mpi-c.pc \
    "$P"/lib*/pkgconfig/mpi-cxx.pc > /dev/null

step "mpicc -show names the prefix"
show=$("$P/bin/mpicc" -show)
echo "$show"
case "$show" in *"$P/"*) ;; *) echo "mpicc -show does not mention $P"; exit 1 ;; esac

# A sanitizer build of libmpi needs the sanitizer runtimes in the program too.
# mpicc adds them; FindMPI drops them and a .pc file cannot say "only when
# linking an executable", so those two builds add them here, as a user would.
san=$("$P/bin/mpicc" -showme:link | grep -o -- '-fsanitize=[^ ]*' || true)

step "find_package(MPI) project with -DMPI_HOME"
"$CMAKE" -S "$HERE" -B "$WORK/proj" -DMPI_HOME="$P" \
    -DCMAKE_EXE_LINKER_FLAGS="$san" > "$WORK/proj.log" 2>&1 ||
    { cat "$WORK/proj.log"; exit 1; }
grep 'MPI_C_\|MPI_CXX_\|MPIEXEC_' "$WORK/proj.log"
for lang in C CXX; do
    lib=$(sed -n "s/^MPI_${lang}_LIB_NAMES:STRING=//p" "$WORK/proj/CMakeCache.txt")
    path=$(sed -n "s/^MPI_${lib%%;*}_LIBRARY:FILEPATH=//p" "$WORK/proj/CMakeCache.txt")
    case "$path" in "$P"/*) ;; *) echo "FindMPI's $lang library is '$path', not in $P"; exit 1 ;; esac
done
# with only MPI_C_COMPILER FindMPI takes the first mpiexec on PATH (/usr/bin/mpiexec,
# another MPI's when one is installed): ctest would start our programs with it
mpiexec=$(sed -n 's/^MPIEXEC_EXECUTABLE:FILEPATH=//p' "$WORK/proj/CMakeCache.txt")
case "$mpiexec" in
    "$P"/bin/mpiexec | "$P"/bin/mpirun) ;;
    *) echo "FindMPI's MPIEXEC_EXECUTABLE is '$mpiexec', not $P/bin/mpiexec"; exit 1 ;;
esac
"$CMAKE" --build "$WORK/proj" > "$WORK/proj-build.log" 2>&1 || { cat "$WORK/proj-build.log"; exit 1; }
step "$mpiexec -n 2 (find_package builds, C and C++)"
LAUNCH=$mpiexec
run2 "$WORK/proj/hello"
run2 "$WORK/proj/hello_cxx"
LAUNCH=$P/bin/mpirun

step "mpicc build"
"$P/bin/mpicc" -O2 "$HERE/hello.c" -o "$WORK/hello-mpicc"
step "mpirun -n 2 (mpicc build)"
run2 "$WORK/hello-mpicc"
step "soname of the installed library and of the mpicc build"
sh "$HERE/soname.sh" "$(ls "$P"/lib*/libdcfampi.so | head -1)" "$WORK/hello-mpicc"

# A -L of the user's that holds another libmpi.so (as /usr/lib/<triplet> does
# when a system MPI is installed, and as Python's distutils pass it) must not
# make mpicc link that one: here a decoy libmpi.so without any MPI function.
step "mpicc build with -L to another libmpi.so"
mkdir -p "$WORK/decoy"
echo 'int dcfa_decoy;' > "$WORK/decoy/decoy.c"
${CC:-cc} -shared -fPIC "$WORK/decoy/decoy.c" -o "$WORK/decoy/libmpi.so"
"$P/bin/mpicc" -O2 "$HERE/hello.c" -L"$WORK/decoy" -o "$WORK/hello-decoy"
run2 "$WORK/hello-decoy"

PKG_CONFIG_PATH=$(dirname "$(ls "$P"/lib*/pkgconfig/mpi.pc | head -1)")
export PKG_CONFIG_PATH
for pc in mpi mpi-c mpi-cxx; do
    step "pkg-config $pc build"
    cflags=$(pkg-config --cflags $pc)
    libs=$(pkg-config --libs $pc)
    echo "cflags: $cflags"
    echo "libs:   $libs"
    inc=$(pkg-config --variable=includedir $pc)
    [ -f "$inc/mpi.h" ] || { echo "pkg-config $pc: includedir $inc has no mpi.h"; exit 1; }
    # the same directory as PREFIX (pkg-config keeps the path through pcfiledir: compare inodes)
    [ "$inc/mpi.h" -ef "$P/include/mpi.h" ] || { echo "pkg-config $pc: $inc is not $P/include"; exit 1; }
    if [ $pc = mpi-cxx ]; then
        # shellcheck disable=SC2086
        ${CXX:-c++} $cflags "$HERE/hello_cxx.cc" -o "$WORK/hello-$pc" $san $libs
    else
        # shellcheck disable=SC2086
        ${CC:-cc} $cflags "$HERE/hello.c" -o "$WORK/hello-$pc" $san $libs
    fi
    step "mpirun -n 2 (pkg-config $pc build)"
    run2 "$WORK/hello-$pc"
done

# The Fortran bindings, when this build has them (gfortran found at configure time)
if [ -x "$P/bin/mpifort" ]; then
    for f in bin/mpif77 bin/mpif90 include/mpif.h include/mpi.mod include/mpi_f08.mod; do
        [ -e "$P/$f" ] || { echo "missing $P/$f"; exit 1; }
    done
    step "mpifort -show names the prefix"
    show=$("$P/bin/mpifort" -show)
    echo "$show"
    case "$show" in *"$P/"*-lmpifort*) ;; *) echo "mpifort -show: no $P or -lmpifort"; exit 1 ;; esac

    step "find_package(MPI COMPONENTS Fortran) project"
    "$CMAKE" -S "$HERE/fortran" -B "$WORK/fproj" -DMPI_Fortran_COMPILER="$P/bin/mpifort" \
        -DCMAKE_EXE_LINKER_FLAGS="$san" > "$WORK/fproj.log" 2>&1 ||
        { cat "$WORK/fproj.log"; exit 1; }
    grep 'MPI_Fortran_' "$WORK/fproj.log"
    "$CMAKE" --build "$WORK/fproj" > "$WORK/fproj-build.log" 2>&1 ||
        { cat "$WORK/fproj-build.log"; exit 1; }
    step "mpirun -n 2 (find_package Fortran build)"
    run2 "$WORK/fproj/hello_f08"

    step "mpif77 build (mpif.h)"
    "$P/bin/mpif77" -O2 "$HERE/fortran/hello_f77.f" -o "$WORK/hello-f77"
    run2 "$WORK/hello-f77"

    step "pkg-config mpi-fort build"
    fflags=$(pkg-config --cflags mpi-fort)
    flibs=$(pkg-config --libs mpi-fort)
    echo "cflags: $fflags"
    echo "libs:   $flibs"
    # shellcheck disable=SC2086
    (cd "$WORK" && gfortran $fflags "$HERE/fortran/hello_f08.f90" -o "$WORK/hello-fpc" $san $flibs)
    run2 "$WORK/hello-fpc"
fi

STEP=
rm -rf "$WORK"
echo "install check passed"
