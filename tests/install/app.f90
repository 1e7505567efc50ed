! A Fortran program of ovl_mod, as a ScaLAPACK user writes it: MPI (use mpi),
! a BLACS grid of all ranks, a Hueckel chain F (-1 beside the diagonal) in
! 2 x 2 blocks, ovl_pdpurify, and D checked against its closed form (sines).
! Built by tests/install_test.sh with find_package(ovl) in a project(... Fortran)
! (ovl::fortran) and with the README's gfortran line (pkg-config ovl-fortran).
program app
  use mpi
  use ovl_mod
  use, intrinsic :: iso_c_binding, only: c_double
  implicit none
  integer, parameter :: n = 10, nocc = 5, nb = 2
  integer :: ierr, rc, rank, nprocs, ctxt, nprow, npcol, myrow, mycol, mloc, nloc, info, i, j, gi, gj, k
  integer :: desc(9)
  real(c_double), allocatable :: f(:, :), d(:, :)
  real(c_double) :: err, x, pi, mu, energy
  integer, external :: numroc, indxl2g

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  nprow = 1
  npcol = nprocs
  call blacs_get(-1, 0, ctxt)
  call blacs_gridinit(ctxt, 'R', nprow, npcol)
  call blacs_gridinfo(ctxt, nprow, npcol, myrow, mycol)
  mloc = numroc(n, nb, myrow, 0, nprow)
  nloc = numroc(n, nb, mycol, 0, npcol)
  call descinit(desc, n, n, nb, nb, 0, 0, ctxt, max(1, mloc), info)
  allocate(f(max(1, mloc), max(1, nloc)), d(max(1, mloc), max(1, nloc)))
  do j = 1, nloc
    gj = indxl2g(j, nb, mycol, 0, npcol)
    do i = 1, mloc
      gi = indxl2g(i, nb, myrow, 0, nprow)
      f(i, j) = merge(-1.0_c_double, 0.0_c_double, abs(gi - gj) == 1)
    end do
  end do

  call ovl_pdpurify(f, desc, nocc, d, desc, rc, mu=mu, energy=energy)
  if (rc /= OVL_OK) print *, 'ovl_pdpurify: ', trim(ovl_errmsg_f())

  pi = acos(-1.0_c_double)
  err = 0
  do j = 1, nloc
    gj = indxl2g(j, nb, mycol, 0, npcol)
    do i = 1, mloc
      gi = indxl2g(i, nb, myrow, 0, nprow)
      x = 0
      do k = 1, nocc
        x = x + 2.0_c_double / (n + 1) * sin(k * gi * pi / (n + 1)) * sin(k * gj * pi / (n + 1))
      end do
      err = max(err, abs(d(i, j) - x))
    end do
  end do
  call MPI_Allreduce(MPI_IN_PLACE, err, 1, MPI_DOUBLE_PRECISION, MPI_MAX, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    if (rc == OVL_OK .and. err <= 1e-10_c_double .and. abs(mu) < 1e-8_c_double) then
      write (*, '(a, i0, a, es8.1, a)') 'downstream Fortran: ', nprocs, ' ranks, |D - D_exact| ', err, ': OK'
    else
      write (*, '(a, i0, a, es8.1, a, es9.2)') 'downstream Fortran: ', nprocs, ' ranks, |D - D_exact| ', err, &
        ': FAIL, mu ', mu
    end if
  end if
  call blacs_gridexit(ctxt)
  call MPI_Finalize(ierr)
end program
