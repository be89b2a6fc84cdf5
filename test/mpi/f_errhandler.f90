! Fortran procedures as callbacks, called with Fortran handles: an error
! handler (module mpi and mpi_f08), a user reduction, attribute copy and
! delete functions of a keyval, and a generalized request. Runs on 2 ranks.
module f_errhandler_cb
  use mpi_f08, only: MPI_Comm, MPI_Datatype, MPI_Status, MPI_ADDRESS_KIND, MPI_SUCCESS
  implicit none
  private
  public :: calls, last_code, last_comm, copies, deletes, f08_calls, f08_comm
  public :: handler, handler08, imax, copy_fn, delete_fn, query_fn, free_fn, cancel_fn
  integer :: calls = 0, last_code = 0, last_comm = 0, copies = 0, deletes = 0
  integer :: f08_calls = 0
  type(MPI_Comm) :: f08_comm
contains
  subroutine handler(comm, code)       ! the mpi / mpif.h shape: INTEGER handles
    integer :: comm, code
    calls = calls + 1
    last_code = code
    last_comm = comm
  end subroutine

  subroutine handler08(comm, code)     ! the mpi_f08 shape
    type(MPI_Comm) :: comm
    integer :: code
    f08_calls = f08_calls + 1
    f08_comm = comm
  end subroutine

  subroutine imax(invec, inoutvec, len, datatype)   ! a user op, mpif.h style
    integer :: len, datatype
    integer :: invec(len), inoutvec(len)
    integer :: i
    do i = 1, len
      inoutvec(i) = max(invec(i), inoutvec(i)) + 1000
    end do
  end subroutine

  subroutine copy_fn(oldcomm, keyval, extra, valin, valout, flag, ierr)
    integer :: oldcomm, keyval, ierr
    integer(kind=MPI_ADDRESS_KIND) :: extra, valin, valout
    logical :: flag
    copies = copies + 1
    valout = valin + extra
    flag = .true.
    ierr = MPI_SUCCESS
  end subroutine

  subroutine delete_fn(comm, keyval, val, extra, ierr)
    integer :: comm, keyval, ierr
    integer(kind=MPI_ADDRESS_KIND) :: val, extra
    deletes = deletes + 1
    ierr = MPI_SUCCESS
  end subroutine

  subroutine query_fn(extra, status, ierr)
    integer(kind=MPI_ADDRESS_KIND) :: extra
    type(MPI_Status) :: status
    integer :: ierr
    status%MPI_SOURCE = int(extra)
    status%MPI_TAG = 42
    status%MPI_ERROR = MPI_SUCCESS
    ierr = MPI_SUCCESS
  end subroutine

  subroutine free_fn(extra, ierr)
    integer(kind=MPI_ADDRESS_KIND) :: extra
    integer :: ierr
    ierr = MPI_SUCCESS
  end subroutine

  subroutine cancel_fn(extra, complete, ierr)
    integer(kind=MPI_ADDRESS_KIND) :: extra
    logical :: complete
    integer :: ierr
    ierr = MPI_SUCCESS
  end subroutine
end module

program f_errhandler
  use f_errhandler_cb
  use mpi
  implicit none
  integer :: rank, nprocs, errs, ierr, dup, eh, op, keyval, dup2, i
  integer :: v(3), st(MPI_STATUS_SIZE), greq
  integer(kind=MPI_ADDRESS_KIND) :: val, extra
  logical :: flag

  errs = 0
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)

  ! an error handler written in Fortran gets the Fortran handle and the code
  call MPI_Comm_dup(MPI_COMM_WORLD, dup, ierr)
  call MPI_Comm_create_errhandler(handler, eh, ierr)
  call MPI_Comm_set_errhandler(dup, eh, ierr)
  call MPI_Send(v, 1, MPI_INTEGER, nprocs + 5, 0, dup, ierr)
  call check(ierr == last_code .and. ierr /= MPI_SUCCESS, 'ierror is the handler''s code', ierr)
  call check(calls == 1, 'handler not called once', calls)
  call check(last_comm == dup, 'handler got another comm', last_comm)
  call MPI_Error_class(last_code, i, ierr)
  call check(i == MPI_ERR_RANK, 'handler got class', i)
  call MPI_Comm_call_errhandler(dup, MPI_ERR_OTHER, ierr)
  call check(calls == 2 .and. last_code == MPI_ERR_OTHER, 'call_errhandler', last_code)
  call MPI_Errhandler_free(eh, ierr)
  call errh08(errs)

  ! a user reduction in Fortran
  call MPI_Op_create(imax, .true., op, ierr)
  v = [rank, 10 * rank, -rank]
  call MPI_Allreduce(MPI_IN_PLACE, v, 3, MPI_INTEGER, op, MPI_COMM_WORLD, ierr)
  call check(v(2) == 10 * (nprocs - 1) + 1000 * (nprocs - 1), 'user op', v(2))
  call MPI_Op_free(op, ierr)

  ! keyval with Fortran copy/delete callbacks, and the predefined ones
  extra = 7
  call MPI_Comm_create_keyval(copy_fn, delete_fn, keyval, extra, ierr)
  val = 100
  call MPI_Comm_set_attr(dup, keyval, val, ierr)
  call MPI_Comm_dup(dup, dup2, ierr)
  call MPI_Comm_get_attr(dup2, keyval, val, flag, ierr)
  call check(flag .and. val == 107 .and. copies == 1, 'copied attribute', int(val))
  call MPI_Comm_free(dup2, ierr)
  call check(deletes == 1, 'delete callback', deletes)
  call MPI_Comm_free_keyval(keyval, ierr)
  call MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, keyval, extra, ierr)
  val = 55
  call MPI_Comm_set_attr(dup, keyval, val, ierr)
  call MPI_Comm_dup(dup, dup2, ierr)
  val = 0
  call MPI_Comm_get_attr(dup2, keyval, val, flag, ierr)
  call check(flag .and. val == 55, 'MPI_COMM_DUP_FN', int(val))
  call MPI_Comm_free(dup2, ierr)
  call MPI_Comm_free_keyval(keyval, ierr)

  ! a generalized request whose query function is Fortran
  extra = 3
  call MPI_Grequest_start(query_fn, free_fn, cancel_fn, extra, greq, ierr)
  call MPI_Grequest_complete(greq, ierr)
  call MPI_Wait(greq, st, ierr)
  call check(st(MPI_SOURCE) == 3 .and. st(MPI_TAG) == 42, 'grequest status', st(MPI_TAG))

  call MPI_Comm_free(dup, ierr)
  call MPI_Allreduce(MPI_IN_PLACE, errs, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    if (errs == 0) then
      print '(A)', ' No Errors'
    else
      print '(A,I0,A)', ' Found ', errs, ' errors'
    end if
  end if
  call MPI_Finalize(ierr)

contains

  subroutine check(ok, what, v)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    integer, intent(in) :: v
    if (.not. ok) then
      errs = errs + 1
      print '(A,I0,A,A,A,I0)', 'rank ', rank, ': ', what, ': ', v
    end if
  end subroutine
end program

! the same with mpi_f08: TYPE(MPI_Comm) handles, ierror left out
subroutine errh08(errs)
  use f_errhandler_cb
  use mpi_f08
  implicit none
  integer, intent(inout) :: errs
  type(MPI_Comm) :: dup
  type(MPI_Errhandler) :: eh
  integer :: v(1), rc, cls
  call MPI_Comm_dup(MPI_COMM_WORLD, dup)
  call MPI_Comm_create_errhandler(handler08, eh)
  call MPI_Comm_set_errhandler(dup, eh)
  call MPI_Send(v, 1, MPI_INTEGER, -7, 0, dup, rc)
  call MPI_Error_class(rc, cls)
  if (f08_calls /= 1 .or. f08_comm /= dup .or. cls /= MPI_ERR_RANK) then
    errs = errs + 1
    print '(A,I0,A,I0)', 'mpi_f08 error handler: calls ', f08_calls, ' class ', cls
  end if
  call MPI_Send(v, 1, MPI_INTEGER, -7, 0, dup)
  if (f08_calls /= 2) errs = errs + 1
  call MPI_Errhandler_free(eh)
  call MPI_Comm_free(dup)
end subroutine
