! The Fortran entry of the knob walk (tests/knob_walk_test.py): ovl_pdpurify
! (module ovl_mod) on a Fock matrix read from a raw file, once per options
! string (the options argument).
! usage: mpiexec -n P knob_walk_f FOCK.raw N NOCC OPTIONS...
! The BLACS grid is 1 x P with one N x N block (process (0, 0) holds F).
! Prints on rank 0, per string i, "walk I options ok PLAN" (info%plan) or
! "walk I options refused MESSAGE".
program knob_walk_f
  use, intrinsic :: iso_c_binding
  use ovl_mod
  implicit none
  integer :: iam, nprocs, n, nocc, ictxt, nprow, npcol, myrow, mycol, u, ios, i, ierr, ncol
  integer(c_int) :: desc(9)
  character(len=4096) :: path, arg
  real(c_double), allocatable :: f(:,:), d(:,:)
  type(ovl_pdpurify_info) :: info

  call blacs_pinfo(iam, nprocs)
  call get_command_argument(1, path)
  call get_command_argument(2, arg)
  read (arg, *) n
  call get_command_argument(3, arg)
  read (arg, *) nocc
  call blacs_get(-1, 0, ictxt)
  call blacs_gridinit(ictxt, 'Row', 1, nprocs)
  call blacs_gridinfo(ictxt, nprow, npcol, myrow, mycol)
  ncol = 1
  if (mycol == 0) ncol = n
  allocate (f(n, ncol), d(n, ncol))
  f = 0
  if (mycol == 0) then
    open (newunit=u, file=trim(path), access='stream', form='unformatted', status='old', iostat=ios)
    if (ios /= 0) then
      print *, 'knob_walk_f: cannot open ', trim(path)
      stop 1
    end if
    read (u) f
    close (u)
  end if
  desc = [1, ictxt, n, n, n, n, 0, 0, n]
  do i = 4, command_argument_count()
    call get_command_argument(i, arg)
    call ovl_pdpurify(f, desc, nocc, d, desc, ierr, info=info, options=trim(arg))
    if (iam == 0) then
      if (ierr == 0) then
        print '(a,i0,a,a)', 'walk ', i - 4, ' options ok ', trim(ovl_plan_string(info))
      else
        print '(a,i0,a,a)', 'walk ', i - 4, ' options refused ', trim(ovl_errmsg_f())
      end if
      flush (6)
    end if
  end do
  deallocate (f, d)
  call blacs_gridexit(ictxt)
  call blacs_exit(0)
end program
