! The handle API (ovl/dm.h) from Fortran (module ovl_mod): a Hueckel chain
! of n = 10 sites, F = -(adjacency), eigenvalues e_k = -2 cos(k pi / 11), in
! the basis with S = 2 I (generalized eigenvalues e_k / 2), 10 electrons,
! spin-restricted (occupation 2), on a 1 x P BLACS grid with 3 x 2 blocks.
! Checked against the closed form: the band energy sum(e_1..e_5), mu = 0,
! HOMO = e_5 / 2, tr(D S) = 10, W's trace; S factorised once over two
! solves; an unknown option and a fractional count fail with OVL_ERR_ARG;
! destroy nulls the handle.
program test_dm_f
  use, intrinsic :: iso_c_binding
  use ovl_mod
  implicit none
  integer, parameter :: n = 10
  integer :: iam, nprocs, ctxt, pr, pc, mr, mc, ierr, nerr, i, j, c, r, mloc, nloc, lld
  integer(c_int) :: descf(9), descs(9)
  real(c_double), allocatable :: f(:,:), s(:,:), d(:,:), w(:,:)
  real(c_double) :: e_ref, homo_ref, pi, tr(2)
  type(ovl_dm) :: h, bad
  type(ovl_dm_results) :: res
  character(len=512) :: val
  integer, external :: numroc

  call blacs_pinfo(iam, nprocs)
  call blacs_get(-1, 0, ctxt)
  call blacs_gridinit(ctxt, 'R', 1, nprocs)
  call blacs_gridinfo(ctxt, pr, pc, mr, mc)
  nerr = 0
  pi = acos(-1.0d0)
  e_ref = 0
  do i = 1, 5
    e_ref = e_ref - 2 * cos(i * pi / 11)
  end do
  homo_ref = -cos(5 * pi / 11)
  mloc = numroc(n, 3, mr, 0, pr)
  nloc = numroc(n, 2, mc, 0, pc)
  lld = max(1, mloc)
  call descinit(descf, n, n, 3, 2, 0, 0, ctxt, lld, ierr)
  descs = descf
  allocate (f(lld, max(1, nloc)), s(lld, max(1, nloc)), d(lld, max(1, nloc)), w(lld, max(1, nloc)))
  f = 0
  s = 0
  do c = 1, nloc
    do r = 1, mloc
      i = l2g(r, 3, mr, pr)
      j = l2g(c, 2, mc, pc)
      if (abs(i - j) == 1) f(r, c) = -1
      if (i == j) s(r, c) = 2
    end do
  end do

  call ovl_dm_create(ctxt, n, 10.0d0, 1, h, ierr)
  call expect(ierr == OVL_OK, 'ovl_dm_create')
  call ovl_dm_set(h, 'method', 'trs4', ierr)
  call expect(ierr == OVL_OK, 'set method')
  call ovl_dm_get(h, 'method', val, ierr)
  call expect(ierr == OVL_OK .and. trim(val) == 'trs4', 'get method: ' // trim(val))
  call ovl_dm_set_overlap(h, ierr, s=s, descs=descs)
  call expect(ierr == OVL_OK, 'ovl_dm_set_overlap')
  do i = 1, 2
    call ovl_dm_solve(h, 1, f, descf, d, descf, ierr, w=w, descw=descf)
    call expect(ierr == OVL_OK, 'ovl_dm_solve')
  end do
  call ovl_dm_get_results(h, 1, res, ierr)
  call expect(ierr == OVL_OK, 'ovl_dm_get_results')
  call expect(abs(res%energy - e_ref) < 1d-10, 'energy')
  call expect(abs(res%mu) < 1d-10, 'mu')
  call expect(abs(res%homo - homo_ref) < 1d-10, 'homo')
  call expect(abs(res%occupation - 2) < 1d-14 .and. res%factorizations == 1 .and. res%solves == 2, 'occupation, factorisations')
  ! tr(D S) = 2 tr(D) = 10; tr(W S) = tr(D F) = energy (S = 2 I, W = D F D / 2)
  tr = 0
  do c = 1, nloc
    do r = 1, mloc
      if (l2g(r, 3, mr, pr) == l2g(c, 2, mc, pc)) tr = tr + 2 * [d(r, c), w(r, c)]
    end do
  end do
  call dgsum2d(ctxt, 'A', ' ', 2, 1, tr, 2, -1, -1)
  call expect(abs(tr(1) - 10) < 1d-9, 'tr(D S)')
  call expect(abs(tr(2) - e_ref) < 1d-9, 'tr(W S)')
  if (iam == 0) print '(a,a,a,i0,a)', 'plan ', trim(ovl_c_string(res%plan)), ', ', res%iterations, ' iterations'
  call ovl_dm_set(h, 'no-such-option', '1', ierr)
  val = ovl_errmsg_f()
  call expect(ierr == OVL_ERR_ARG .and. index(val, 'no-such-option') > 0, 'unknown option')
  call ovl_dm_solve(h, 2, f, descf, d, descf, ierr)
  call expect(ierr == OVL_ERR_ARG, 'ispin 2 with nspin 1')
  call ovl_dm_destroy(h, ierr)
  call expect(ierr == OVL_OK .and. .not. c_associated(h%p), 'ovl_dm_destroy')
  call ovl_dm_create(ctxt, n, 9.5d0, 2, bad, ierr)
  call expect(ierr == OVL_ERR_ARG .and. .not. c_associated(bad%p), 'a fractional count')
  call ovl_dm_set(bad, 'method', 'sp2', ierr)
  call expect(ierr == OVL_ERR_ARG, 'a NULL handle')

  call igsum2d(ctxt, 'A', ' ', 1, 1, nerr, 1, -1, -1)
  if (iam == 0) then
    if (nerr == 0) then
      print '(a,i0,a)', 'test_dm_f: ', nprocs, ' ranks: PASS'
    else
      print '(a,i0,a,i0,a)', 'test_dm_f: ', nprocs, ' ranks, ', nerr, ' errors: FAIL'
    end if
  end if
  call blacs_gridexit(ctxt)
  call blacs_exit(0)
  if (nerr /= 0) stop 1

contains

  subroutine expect(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (.not. ok) then
      nerr = nerr + 1
      print '(a,i0,a,a,a,a)', '[rank ', iam, '] FAIL ', what, ': ', trim(ovl_errmsg_f())
    end if
  end subroutine

  integer function l2g(l, nb, ip, np) ! 1-based, source 0
    integer, intent(in) :: l, nb, ip, np
    l2g = (((l - 1) / nb) * np + ip) * nb + mod(l - 1, nb) + 1
  end function

end program test_dm_f
