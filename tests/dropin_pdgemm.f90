! An unchanged ScaLAPACK program in Fortran: BLACS set-up and PDGEMM only
! (Fortran passes hidden string lengths after the arguments; the drop-in
! must take the call as ScaLAPACK does). C := 2 A^T B + 0.5 C, n = 37, NB = 4
! (not dividing n), on a 2 x (P/2) grid (1 x 1 on one rank); every process
! checks its entries of C against the exact product. Prints
! "fortran pdgemm: max error E" on process (0,0); tests/dropin_test.sh runs it.
program dropin_pdgemm_f
  implicit none
  integer :: ictxt, nprow, npcol, myrow, mycol, info, me, np, n, nb, mloc, nloc, i, j, li, lj, gi, gj
  integer :: desca(9), descb(9), descc(9)
  integer, external :: numroc
  double precision, allocatable :: a(:,:), b(:,:), c(:,:)
  double precision :: err, ref, gerr
  n = 37; nb = 4
  call blacs_pinfo(me, np)
  nprow = 2; npcol = np / 2
  if (np == 1) then
    nprow = 1; npcol = 1
  end if
  call blacs_get(-1, 0, ictxt)
  call blacs_gridinit(ictxt, 'R', nprow, npcol)
  call blacs_gridinfo(ictxt, nprow, npcol, myrow, mycol)
  mloc = numroc(n, nb, myrow, 0, nprow); nloc = numroc(n, nb, mycol, 0, npcol)
  call descinit(desca, n, n, nb, nb, 0, 0, ictxt, max(1, mloc), info)
  call descinit(descb, n, n, nb, nb, 0, 0, ictxt, max(1, mloc), info)
  call descinit(descc, n, n, nb, nb, 0, 0, ictxt, max(1, mloc), info)
  allocate(a(max(1,mloc), max(1,nloc)), b(max(1,mloc), max(1,nloc)), c(max(1,mloc), max(1,nloc)))
  do lj = 1, nloc
    gj = ((lj-1)/nb*npcol + mycol)*nb + mod(lj-1, nb) + 1
    do li = 1, mloc
      gi = ((li-1)/nb*nprow + myrow)*nb + mod(li-1, nb) + 1
      a(li, lj) = dble(gi + 2*gj) / n
      b(li, lj) = dble(gi - gj) / n
      c(li, lj) = 1.0d0
    end do
  end do
  call pdgemm('T', 'N', n, n, n, 2.0d0, a, 1, 1, desca, b, 1, 1, descb, 0.5d0, c, 1, 1, descc)
  err = 0
  do lj = 1, nloc
    gj = ((lj-1)/nb*npcol + mycol)*nb + mod(lj-1, nb) + 1
    do li = 1, mloc
      gi = ((li-1)/nb*nprow + myrow)*nb + mod(li-1, nb) + 1
      ref = 0.5d0
      do j = 1, n
        ref = ref + 2.0d0 * (dble(j + 2*gi) / n) * (dble(j - gj) / n)
      end do
      err = max(err, abs(c(li, lj) - ref))
    end do
  end do
  call dgamx2d(ictxt, 'A', ' ', 1, 1, err, 1, i, i, -1, -1, -1)
  if (myrow == 0 .and. mycol == 0) print '(a,es10.3)', 'fortran pdgemm: max error ', err
  call blacs_gridexit(ictxt)
  call blacs_exit(0)
end program dropin_pdgemm_f
