! mpif.h from fixed-form Fortran: MPI_IN_PLACE in collectives, MPI_BOTTOM
! with absolute addresses, MPI_STATUS(ES)_IGNORE, status fields, strings
! (blank padding both ways), LOGICAL arguments, reductions on the Fortran
! types (MPI_SUM on COMPLEX, MPI_LAND on LOGICAL, MPI_MAXLOC on
! MPI_2DOUBLE_PRECISION), and a predefined attribute. Any number of ranks.
      program f_mpif
      implicit none
      include 'mpif.h'
      integer rank, nprocs, errs, ierr, i, n, req(2)
      integer st(MPI_STATUS_SIZE)
      integer iv(4), jv(8), newt, blens(2), types(2), rl, info, nk
      integer(kind=MPI_ADDRESS_KIND) disps(2), tagub
      double precision d(4), dl(2,2)
      complex c(2)
      logical l(2), flag, periods(2)
      integer dims(2), cart, coords(2)
      character*(MPI_MAX_OBJECT_NAME) cname
      character*(MPI_MAX_ERROR_STRING) estr
      character*20 val
      character*10 shortv
      errs = 0
      call MPI_INIT(ierr)
      call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
      call MPI_COMM_SIZE(MPI_COMM_WORLD, nprocs, ierr)

!     MPI_IN_PLACE
      do i = 1, 4
         iv(i) = rank + i
      end do
      call MPI_ALLREDUCE(MPI_IN_PLACE, iv, 4, MPI_INTEGER, MPI_SUM,
     &     MPI_COMM_WORLD, ierr)
      if (iv(2) .ne. nprocs * 2 + nprocs * (nprocs - 1) / 2)
     &     call fail(errs, 'allreduce in place', iv(2))
      iv(1) = rank
      call MPI_SCAN(MPI_IN_PLACE, iv, 1, MPI_INTEGER, MPI_SUM,
     &     MPI_COMM_WORLD, ierr)
      if (iv(1) .ne. rank * (rank + 1) / 2)
     &     call fail(errs, 'scan in place', iv(1))
      if (nprocs .le. 8) then
         jv(rank + 1) = 10 * rank
         call MPI_ALLGATHER(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, jv, 1,
     &        MPI_INTEGER, MPI_COMM_WORLD, ierr)
         do i = 1, nprocs
            if (jv(i) .ne. 10 * (i - 1))
     &           call fail(errs, 'allgather in place', i)
         end do
      end if
      iv(1) = 1
      if (rank .eq. 0) then
         call MPI_REDUCE(MPI_IN_PLACE, iv, 1, MPI_INTEGER, MPI_SUM, 0,
     &        MPI_COMM_WORLD, ierr)
         if (iv(1) .ne. nprocs)
     &        call fail(errs, 'reduce in place', iv(1))
      else
         call MPI_REDUCE(iv, iv, 1, MPI_INTEGER, MPI_SUM, 0,
     &        MPI_COMM_WORLD, ierr)
      end if

!     MPI_BOTTOM: a struct of absolute addresses, to myself
      call MPI_GET_ADDRESS(iv(1), disps(1), ierr)
      call MPI_GET_ADDRESS(d(1), disps(2), ierr)
      blens(1) = 2
      blens(2) = 1
      types(1) = MPI_INTEGER
      types(2) = MPI_DOUBLE_PRECISION
      call MPI_TYPE_CREATE_STRUCT(2, blens, disps, types, newt, ierr)
      call MPI_TYPE_COMMIT(newt, ierr)
      iv(1) = 7
      iv(2) = 8
      d(1) = 2.5d0
      call MPI_IRECV(jv, 4, MPI_INTEGER, rank, 5, MPI_COMM_WORLD,
     &     req(1), ierr)
      call MPI_IRECV(dl, 1, MPI_DOUBLE_PRECISION, rank, 6,
     &     MPI_COMM_WORLD, req(2), ierr)
      call MPI_SEND(MPI_BOTTOM, 1, newt, rank, 5, MPI_COMM_WORLD, ierr)
      call MPI_WAIT(req(1), st, ierr)
      if (st(MPI_SOURCE) .ne. rank .or. st(MPI_TAG) .ne. 5)
     &     call fail(errs, 'status fields', st(MPI_TAG))
      call MPI_GET_COUNT(st, MPI_INTEGER, n, ierr)
      if (n .ne. 4) call fail(errs, 'get_count', n)
      call MPI_SEND(d, 1, MPI_DOUBLE_PRECISION, rank, 6,
     &     MPI_COMM_WORLD, ierr)
      call MPI_WAITALL(1, req(2), MPI_STATUSES_IGNORE, ierr)
      if (jv(1) .ne. 7 .or. jv(2) .ne. 8 .or. dl(1,1) .ne. 2.5d0)
     &     call fail(errs, 'MPI_BOTTOM send', jv(1))
      if (transfer(jv(3:4), 1d0) .ne. 2.5d0)
     &     call fail(errs, 'MPI_BOTTOM send, the double', jv(3))
      call MPI_TYPE_FREE(newt, ierr)
      call MPI_SENDRECV(iv, 1, MPI_INTEGER, rank, 7, jv, 1,
     &     MPI_INTEGER, rank, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE,
     &     ierr)
      call MPI_IPROBE(rank, 7, MPI_COMM_WORLD, flag, MPI_STATUS_IGNORE,
     &     ierr)
      if (flag) call fail(errs, 'iprobe flag', 1)

!     request indices are 1-based in Fortran
      call MPI_IRECV(jv, 1, MPI_INTEGER, rank, 9, MPI_COMM_WORLD,
     &     req(2), ierr)
      req(1) = MPI_REQUEST_NULL
      call MPI_SEND(iv, 1, MPI_INTEGER, rank, 9, MPI_COMM_WORLD, ierr)
      call MPI_WAITANY(2, req, n, st, ierr)
      if (n .ne. 2) call fail(errs, 'waitany index', n)
      call MPI_IRECV(jv, 1, MPI_INTEGER, rank, 9, MPI_COMM_WORLD,
     &     req(2), ierr)
      call MPI_SEND(iv, 1, MPI_INTEGER, rank, 9, MPI_COMM_WORLD, ierr)
      n = 0
      do while (n .eq. 0)
         call MPI_TESTSOME(2, req, n, jv(3), MPI_STATUSES_IGNORE, ierr)
      end do
      if (n .ne. 1 .or. jv(3) .ne. 2)
     &     call fail(errs, 'testsome indices', jv(3))

!     strings
      call MPI_COMM_SET_NAME(MPI_COMM_WORLD, 'world of f77   ', ierr)
      cname = 'x'
      call MPI_COMM_GET_NAME(MPI_COMM_WORLD, cname, rl, ierr)
      if (cname .ne. 'world of f77' .or. rl .ne. 12)
     &     call fail(errs, 'comm name', rl)
      if (cname(13:MPI_MAX_OBJECT_NAME) .ne. ' ')
     &     call fail(errs, 'comm name not blank padded', rl)
      call MPI_ERROR_STRING(MPI_ERR_RANK, estr, rl, ierr)
      if (rl .le. 0 .or. rl .ge. MPI_MAX_ERROR_STRING .or.
     &     estr(rl+1:) .ne. ' ') call fail(errs, 'error string', rl)
      call MPI_INFO_CREATE(info, ierr)
      call MPI_INFO_SET(info, '  color ', ' blue  ', ierr)
      call MPI_INFO_GET(info, 'color', 20, val, flag, ierr)
      if (.not. flag .or. val .ne. 'blue')
     &     call fail(errs, 'info value', 0)
      call MPI_INFO_GET_NKEYS(info, nk, ierr)
      call MPI_INFO_GET_NTHKEY(info, 0, val, ierr)
      if (nk .ne. 1 .or. val .ne. 'color')
     &     call fail(errs, 'info key', nk)
      call MPI_INFO_GET(info, 'shade', 20, val, flag, ierr)
      if (flag) call fail(errs, 'info missing key', 0)
      call MPI_INFO_SET(info, 'long', 'abcdefghijklmnopqrstuvw', ierr)
      n = 0
      shortv = 'unchanged'
      call MPI_INFO_GET_STRING(info, 'long', n, shortv, flag, ierr)
      if (.not. flag .or. shortv .ne. 'unchanged' .or. n .ne. 23)
     &     call fail(errs, 'info_get_string, buflen 0', n)
      n = 10
      call MPI_INFO_GET_STRING(info, 'long', n, shortv, flag, ierr)
      if (.not. flag .or. shortv .ne. 'abcdefghij' .or. n .ne. 23)
     &     call fail(errs, 'info_get_string cut', n)
      call MPI_INFO_FREE(info, ierr)

!     LOGICAL arguments
      call MPI_COMM_TEST_INTER(MPI_COMM_WORLD, flag, ierr)
      if (flag) call fail(errs, 'test_inter', 1)
      dims(1) = nprocs
      dims(2) = 1
      periods(1) = .true.
      periods(2) = .false.
      call MPI_CART_CREATE(MPI_COMM_WORLD, 2, dims, periods, .false.,
     &     cart, ierr)
      periods(1) = .false.
      periods(2) = .true.
      call MPI_CART_GET(cart, 2, dims, periods, coords, ierr)
      if (.not. periods(1) .or. periods(2) .or. coords(1) .ne. rank)
     &     call fail(errs, 'cart periods', coords(1))
      call MPI_COMM_FREE(cart, ierr)

!     reductions on Fortran types
      c(1) = cmplx(1.0, real(rank))
      c(2) = cmplx(real(rank), 2.0)
      call MPI_ALLREDUCE(MPI_IN_PLACE, c, 2, MPI_COMPLEX, MPI_SUM,
     &     MPI_COMM_WORLD, ierr)
      if (c(1) .ne. cmplx(real(nprocs), real(nprocs*(nprocs-1)/2)))
     &     call fail(errs, 'complex sum', 1)
      l(1) = .true.
      l(2) = rank .ne. 0
      call MPI_ALLREDUCE(MPI_IN_PLACE, l, 2, MPI_LOGICAL, MPI_LAND,
     &     MPI_COMM_WORLD, ierr)
      if (.not. l(1) .or. l(2)) call fail(errs, 'logical land', 2)
      dl(1,1) = dble(mod(rank, 3))
      dl(2,1) = dble(rank)
      call MPI_ALLREDUCE(MPI_IN_PLACE, dl, 1, MPI_2DOUBLE_PRECISION,
     &     MPI_MAXLOC, MPI_COMM_WORLD, ierr)
      if (nprocs .ge. 3 .and. (dl(1,1) .ne. 2d0 .or. dl(2,1) .ne. 2d0))
     &     call fail(errs, 'maxloc', int(dl(2,1)))

!     a handle of the wrong kind (a communicator as the datatype)
      call MPI_COMM_DUP(MPI_COMM_WORLD, cart, ierr)
      call MPI_COMM_SET_ERRHANDLER(cart, MPI_ERRORS_RETURN, ierr)
      call MPI_SEND(iv, 1, MPI_COMM_WORLD, rank, 0, cart, ierr)
      call MPI_ERROR_CLASS(ierr, n, i)
      if (n .ne. MPI_ERR_TYPE) call fail(errs, 'wrong-kind handle', n)
      call MPI_COMM_FREE(cart, ierr)

!     a predefined attribute: the value, not its address
      call MPI_COMM_GET_ATTR(MPI_COMM_WORLD, MPI_TAG_UB, tagub, flag,
     &     ierr)
      if (.not. flag .or. tagub .lt. 32767)
     &     call fail(errs, 'MPI_TAG_UB', int(tagub))

      call MPI_ALLREDUCE(MPI_IN_PLACE, errs, 1, MPI_INTEGER, MPI_SUM,
     &     MPI_COMM_WORLD, ierr)
      if (rank .eq. 0) then
         if (errs .eq. 0) then
            print '(A)', ' No Errors'
         else
            print '(A,I0,A)', ' Found ', errs, ' errors'
         end if
      end if
      call MPI_FINALIZE(ierr)
      end

      subroutine fail(errs, what, v)
      integer errs, v
      character*(*) what
      errs = errs + 1
      print '(A,A,I0)', what, ': ', v
      end
