#!/bin/sh
# Bad input the Fortran modules turn into compile-time errors naming the call
# (docs/fortran.md): with `use mpi` a status array smaller than
# MPI_STATUS_SIZE, with `use mpi_f08` a handle of the wrong kind. Each program
# must fail to compile with gfortran's message; a correct one must compile.
#   f_compile_errors.sh MPIFORT WORKDIR
set -u
FC=$1 W=$2
mkdir -p "$W"
fails=0
# expect NAME REGEX: W/NAME.f90 must not compile and its errors must match REGEX
expect() {
    if "$FC" -c "$W/$1.f90" -o "$W/$1.o" > "$W/$1.log" 2>&1; then
        echo "$1: compiled, but must not"
        fails=$((fails + 1))
    elif ! grep -Eq "$2" "$W/$1.log"; then
        echo "$1: no error matching /$2/:"
        cat "$W/$1.log"
        fails=$((fails + 1))
    else
        echo "$1: $(grep -E "$2" "$W/$1.log" | head -1)"
    fi
}
cat > "$W/status_small.f90" << 'F'
program status_small
  use mpi
  integer :: st(2), ierr, b
  call MPI_Recv(b, 1, MPI_INTEGER, 0, 0, MPI_COMM_WORLD, st, ierr)
end program
F
expect status_small "too few elements for dummy argument .status."
cat > "$W/wrong_kind.f90" << 'F'
program wrong_kind
  use mpi_f08
  integer :: b
  call MPI_Send(b, 1, MPI_COMM_WORLD, 0, 0, MPI_COMM_WORLD)
end program
F
expect wrong_kind "no specific subroutine for the generic .mpi_send."
cat > "$W/fine.f90" << 'F'
program fine
  use mpi_f08
  integer :: b
  type(MPI_Status) :: st
  call MPI_Recv(b, 1, MPI_INTEGER, 0, 0, MPI_COMM_WORLD, st)
end program
F
if ! "$FC" -c "$W/fine.f90" -o "$W/fine.o" > "$W/fine.log" 2>&1; then
    echo "fine: a correct program does not compile:"
    cat "$W/fine.log"
    fails=$((fails + 1))
fi
[ "$fails" -eq 0 ] && echo " No Errors"
exit "$fails"
