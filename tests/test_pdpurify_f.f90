! ovl_pdpurify from Fortran (module ovl_mod) against ScaLAPACK's eigensolver.
! usage: test_pdpurify_f FOCK.raw N NOCC [CASEDIR...]
! On every BLACS grid shape p x q of the rank count (p = 1, the most square,
! q = 1) and two block sizes: D, the energy and W = D F D against PDSYEVD's
! C_occ C_occ^T, sum(eps_occ) and C_occ diag(eps_occ) C_occ^T, without and
! with an overlap matrix S = U^T U (U = I + a small upper triangle, F_S =
! U^T F U; reference by PDPOTRF + PDSYGST + PDSYEVD + PDTRSM); then the
! README's example (pdpurify_readme_fortran.inc, extracted from README.md).
! Then, for each CASEDIR (a shipped case with its AO matrices), PySCF's AO
! Fock matrix and overlap S (fock_ao.raw, overlap.raw) on every grid shape
! (a case with n > 150 on the first only):
! D, W, energy and mu against the same generalized eigensolver, tr(D S) =
! n_occ, and the energy against meta.json's e_trace (the same spectrum).
program test_pdpurify_f
  use, intrinsic :: iso_c_binding
  use ovl_mod
  implicit none
  integer :: iam, nprocs, n, nocc, nerr, p, k, ios, u, icase
  character(len=4096) :: path, arg
  real(c_double), allocatable :: f0(:,:), fs(:,:), s0(:,:), um(:,:)
  real(c_double) :: e_meta
  logical :: pyscf
  integer :: i, j

  call blacs_pinfo(iam, nprocs)
  call get_command_argument(1, path)
  call get_command_argument(2, arg)
  read (arg, *) n
  call get_command_argument(3, arg)
  read (arg, *) nocc
  allocate (f0(n, n), fs(n, n), s0(n, n), um(n, n))
  open (newunit=u, file=trim(path), access='stream', form='unformatted', status='old', iostat=ios)
  if (ios /= 0) then
    print *, 'cannot open ', trim(path)
    deallocate (f0, fs, s0, um)
    call blacs_exit(0)
    stop 1
  end if
  read (u) f0
  close (u)
  f0 = 0.5d0 * (f0 + transpose(f0))
  um = 0
  do j = 1, n
    do i = 1, j
      if (i == j) then
        um(i, j) = 1.0d0 + 0.1d0 * sin(dble(j))
      else
        um(i, j) = 0.3d0 / sqrt(dble(n)) * sin(0.37d0 * (i - 1) + 1.3d0 * (j - 1))
      end if
    end do
  end do
  s0 = matmul(transpose(um), um)
  fs = matmul(transpose(um), matmul(f0, um))
  fs = 0.5d0 * (fs + transpose(fs))
  s0 = 0.5d0 * (s0 + transpose(s0))

  nerr = 0
  pyscf = .false.
  call all_grids()
  call readme_example()
  ! the shipped cases with PySCF's AO Fock and overlap matrices
  pyscf = .true.
  do icase = 4, command_argument_count()
    call get_command_argument(icase, path)
    deallocate (f0, fs, s0, um)
    if (.not. read_case(trim(path))) then
      nerr = nerr + 1
      if (allocated(f0)) deallocate (f0, fs, s0, um)
      allocate (f0(1, 1), fs(1, 1), s0(1, 1), um(1, 1))
      cycle
    end if
    if (iam == 0) print '(a,a,a,i0,a,i0)', 'PySCF F and S of ', trim(path), ': n = ', n, ', n_occ = ', nocc
    call all_grids()
  end do
  call igsum_all(nerr)
  if (iam == 0) then
    if (nerr == 0) then
      print '(a,i0,a)', 'test_pdpurify_f: ', nprocs, ' ranks: PASS'
    else
      print '(a,i0,a,i0,a)', 'test_pdpurify_f: ', nprocs, ' ranks, ', nerr, ' errors: FAIL'
    end if
  end if
  deallocate (f0, fs, s0, um)
  call blacs_exit(0)
  if (nerr /= 0) stop 1

contains

  ! one_grid on every grid shape p x q = nprocs (p = 1, the most square, q = 1)
  subroutine all_grids()
    k = 0
    do p = 1, nprocs
      if (mod(nprocs, p) /= 0) cycle
      if (p /= 1 .and. p /= nprocs .and. p * p < nprocs / 2) cycle
      k = k + 1
      if (pyscf .and. n > 150 .and. k > 1) exit ! the larger cases on one grid shape (test time)
      call one_grid(p, nprocs / p, merge(4, 3, mod(k, 2) == 1), merge(4, 5, mod(k, 2) == 1))
    end do
  end subroutine

  ! n, n_occ and e_trace from dir/meta.json; fs = F (fock_ao.raw), s0 = S (overlap.raw)
  logical function read_case(dir)
    character(len=*), intent(in) :: dir
    character(len=:), allocatable :: buf
    integer :: sz
    read_case = .false.
    open (newunit=u, file=dir//'/meta.json', access='stream', form='unformatted', status='old', iostat=ios)
    if (ios /= 0) then
      if (iam == 0) print *, 'cannot open ', dir//'/meta.json'
      return
    end if
    inquire (unit=u, size=sz)
    allocate (character(len=sz) :: buf)
    read (u) buf
    close (u)
    n = int(meta_num(buf, 'n'))
    nocc = int(meta_num(buf, 'n_occ'))
    e_meta = meta_num(buf, 'e_trace')
    allocate (f0(n, n), fs(n, n), s0(n, n), um(1, 1))
    if (.not. read_raw(dir//'/fock_ao.raw', fs)) return
    if (.not. read_raw(dir//'/overlap.raw', s0)) return
    f0 = 0
    read_case = n > 0 .and. nocc > 0 .and. nocc < n
  end function

  ! the number after "key": in a meta.json text
  real(c_double) function meta_num(buf, key)
    character(len=*), intent(in) :: buf, key
    integer :: at
    meta_num = -1
    at = index(buf, '"'//key//'":')
    if (at > 0) read (buf(at + len(key) + 3:), *) meta_num
  end function

  ! a symmetric n x n raw matrix (row-major = column-major)
  logical function read_raw(file, a)
    character(len=*), intent(in) :: file
    real(c_double), intent(out) :: a(:,:)
    read_raw = .false.
    open (newunit=u, file=file, access='stream', form='unformatted', status='old', iostat=ios)
    if (ios /= 0) then
      if (iam == 0) print *, 'cannot open ', file
      return
    end if
    read (u, iostat=ios) a
    close (u)
    read_raw = ios == 0
  end function

  subroutine igsum_all(x)
    integer, intent(inout) :: x
    integer :: ctxt, pr, pc, mr, mc
    call blacs_get(-1, 0, ctxt)
    call blacs_gridinit(ctxt, 'R', 1, nprocs)
    call blacs_gridinfo(ctxt, pr, pc, mr, mc)
    call igsum2d(ctxt, 'A', ' ', 1, 1, x, 1, -1, -1)
    call blacs_gridexit(ctxt)
  end subroutine

  integer function numroc_(nn, nb, ip, isrc, np)
    integer, intent(in) :: nn, nb, ip, isrc, np
    integer :: off, nblocks, extra
    off = mod(ip - isrc + np, np)
    nblocks = nn / nb
    numroc_ = nblocks / np * nb
    extra = mod(nblocks, np)
    if (off < extra) then
      numroc_ = numroc_ + nb
    else if (off == extra) then
      numroc_ = numroc_ + mod(nn, nb)
    end if
  end function

  integer function l2g(l, nb, ip, isrc, np) ! 1-based
    integer, intent(in) :: l, nb, ip, isrc, np
    l2g = (((l - 1) / nb) * np + mod(ip - isrc + np, np)) * nb + mod(l - 1, nb) + 1
  end function

  ! a(local) := g(global), for descriptor desc on grid (pr, pc, mr, mc)
  subroutine scatter(g, a, desc, pr, pc, mr, mc)
    real(c_double), intent(in) :: g(:,:)
    real(c_double), intent(out) :: a(:,:)
    integer, intent(in) :: desc(9), pr, pc, mr, mc
    integer :: r, c
    do c = 1, numroc_(n, desc(6), mc, desc(8), pc)
      do r = 1, numroc_(n, desc(5), mr, desc(7), pr)
        a(r, c) = g(l2g(r, desc(5), mr, desc(7), pr), l2g(c, desc(6), mc, desc(8), pc))
      end do
    end do
  end subroutine

  ! ||A - B||_F^2 and ||B||_F^2 summed over the grid (same layout)
  subroutine diff2(a, b, desc, pr, pc, mr, mc, ctxt, num, den)
    real(c_double), intent(in) :: a(:,:), b(:,:)
    integer, intent(in) :: desc(9), pr, pc, mr, mc, ctxt
    real(c_double), intent(out) :: num, den
    real(c_double) :: v(2)
    integer :: r, c
    v = 0
    do c = 1, numroc_(n, desc(6), mc, desc(8), pc)
      do r = 1, numroc_(n, desc(5), mr, desc(7), pr)
        v(1) = v(1) + (a(r, c) - b(r, c))**2
        v(2) = v(2) + b(r, c)**2
      end do
    end do
    call dgsum2d(ctxt, 'A', ' ', 2, 1, v, 2, -1, -1)
    num = v(1)
    den = v(2)
  end subroutine

  subroutine one_grid(pr0, pc0, mb, nb)
    integer, intent(in) :: pr0, pc0, mb, nb
    integer :: ctxt, pr, pc, mr, mc, lld, nl, info, descf(9), descr(9), withs, ierr, lwork, liwork, c, r
    real(c_double), allocatable :: fa(:,:), sa(:,:), da(:,:), wa(:,:), ra(:,:), za(:,:), ba(:,:), eps(:), work(:)
    integer, allocatable :: iwork(:)
    real(c_double) :: mu, energy, eref, num, den, scale, wq(1), errd, errw, trds(1)
    integer :: iwq(1)
    type(ovl_pdpurify_info) :: info_
    call blacs_get(-1, 0, ctxt)
    call blacs_gridinit(ctxt, 'R', pr0, pc0)
    call blacs_gridinfo(ctxt, pr, pc, mr, mc)
    ! caller's layout: MB x NB blocks; reference layout: 8 x 8 blocks
    lld = max(1, numroc_(n, mb, mr, 0, pr))
    nl = max(1, numroc_(n, nb, mc, 0, pc))
    call descinit(descf, n, n, mb, nb, 0, 0, ctxt, lld, info)
    allocate (fa(lld, nl), sa(lld, nl), da(lld, nl), wa(lld, nl))
    lld = max(1, numroc_(n, 8, mr, 0, pr))
    nl = max(1, numroc_(n, 8, mc, 0, pc))
    call descinit(descr, n, n, 8, 8, 0, 0, ctxt, lld, info)
    allocate (ra(lld, nl), za(lld, nl), ba(lld, nl), eps(n))
    do withs = merge(1, 0, pyscf), 1
      ! the eigensolver's D and W, brought to the caller's layout through a global copy
      if (withs == 0) then
        call scatter(f0, ra, descr, pr, pc, mr, mc)
      else
        call scatter(fs, ra, descr, pr, pc, mr, mc)
        call scatter(s0, ba, descr, pr, pc, mr, mc)
        call pdpotrf('U', n, ba, 1, 1, descr, info)
        call pdsygst(1, 'U', n, ra, 1, 1, descr, ba, 1, 1, descr, scale, info)
      end if
      call pdsyevd('V', 'U', n, ra, 1, 1, descr, eps, za, 1, 1, descr, wq, -1, iwq, -1, info)
      lwork = 2 * int(wq(1)) + n * 8 + 10000
      liwork = max(1, iwq(1)) + 1000
      allocate (work(lwork), iwork(liwork))
      call pdsyevd('V', 'U', n, ra, 1, 1, descr, eps, za, 1, 1, descr, work, lwork, iwork, liwork, info)
      deallocate (work, iwork)
      if (info /= 0) nerr = nerr + 1
      if (withs == 1) call pdtrsm('L', 'U', 'N', 'N', n, n, 1.0d0, ba, 1, 1, descr, za, 1, 1, descr)
      eref = sum(eps(1:nocc))
      ! ovl
      if (withs == 0) then
        call scatter(f0, fa, descf, pr, pc, mr, mc)
        call ovl_pdpurify(fa, descf, nocc, da, descf, ierr, w=wa, descw=descf, mu=mu, energy=energy, info=info_)
      else
        call scatter(fs, fa, descf, pr, pc, mr, mc)
        call scatter(s0, sa, descf, pr, pc, mr, mc)
        call ovl_pdpurify(fa, descf, nocc, da, descf, ierr, s=sa, descs=descf, w=wa, descw=descf, mu=mu, &
                          energy=energy, info=info_)
      end if
      if (ierr /= OVL_OK) then
        nerr = nerr + 1
        if (iam == 0) print *, 'ovl_pdpurify failed: ', trim(ovl_errmsg_f())
        cycle
      end if
      ! compare: D_eig = Z_occ Z_occ^T on the reference layout, then D moved there with PDGEMR2D
      call pdgemm('N', 'T', n, n, nocc, 1.0d0, za, 1, 1, descr, za, 1, 1, descr, 0.0d0, ra, 1, 1, descr)
      call pdgemr2d(n, n, da, 1, 1, descf, ba, 1, 1, descr, ctxt)
      call diff2(ba, ra, descr, pr, pc, mr, mc, ctxt, num, den)
      errd = sqrt(num / den)
      do c = 1, numroc_(n, 8, mc, 0, pc)
        do r = 1, numroc_(n, 8, mr, 0, pr)
          ba(r, c) = za(r, c) * eps(l2g(c, 8, mc, 0, pc))
        end do
      end do
      call pdgemm('N', 'T', n, n, nocc, 1.0d0, ba, 1, 1, descr, za, 1, 1, descr, 0.0d0, ra, 1, 1, descr)
      call pdgemr2d(n, n, wa, 1, 1, descf, ba, 1, 1, descr, ctxt)
      call diff2(ba, ra, descr, pr, pc, mr, mc, ctxt, num, den)
      errw = sqrt(num / den)
      ! tr(D S) (tr D without S), D and S in the same layout
      trds = 0
      do c = 1, numroc_(n, nb, mc, 0, pc)
        do r = 1, numroc_(n, mb, mr, 0, pr)
          if (withs == 1) then
            trds(1) = trds(1) + da(r, c) * sa(r, c)
          else if (l2g(r, mb, mr, 0, pr) == l2g(c, nb, mc, 0, pc)) then
            trds(1) = trds(1) + da(r, c)
          end if
        end do
      end do
      call dgsum2d(ctxt, 'A', ' ', 1, 1, trds, 1, -1, -1)
      if (errd > 1d-8 .or. errw > 1d-8 .or. abs(energy - eref) > 1d-8 * abs(eref) .or. &
          abs(mu - 0.5d0 * (eps(nocc) + eps(nocc + 1))) > 1d-6 .or. abs(trds(1) - nocc) > 1d-8) nerr = nerr + 1
      if (pyscf .and. abs(energy - e_meta) > 1d-8 * abs(e_meta)) nerr = nerr + 1
      if (iam == 0) print '(a,i0,a,i0,a,i0,a,i0,a,a,a,es9.2,a,es9.2,a,es9.2,a,es9.2,a,es9.2)', 'grid ', pr, 'x', pc, &
        ' MB=', mb, ' NB=', nb, ' S=', trim(merge('pyscf', merge('built', 'none ', withs == 1), pyscf)), &
        ': |D-D_eig| ', errd, ' |W-W_eig| ', errw, ' |E-E_eig| ', abs(energy - eref), ' |mu-mu_eig| ', &
        abs(mu - 0.5d0 * (eps(nocc) + eps(nocc + 1))), ' |tr(DS)-nocc| ', abs(trds(1) - nocc)
      if (pyscf .and. iam == 0) print '(a,es9.2)', '  |E-e_trace(meta.json)|/|e_trace| ', &
        abs(energy - e_meta) / abs(e_meta)
      if (withs == 1) then ! restore the caller's S factor area for the next round
        call scatter(s0, ba, descr, pr, pc, mr, mc)
      end if
    end do
    deallocate (fa, sa, da, wa, ra, za, ba, eps)
    call blacs_gridexit(ctxt)
  end subroutine

  ! The README's example, on a 1 x P grid with NB = 4: F and S = I, energy
  ! against the eigenvalue sum of the no-S run (S = I changes nothing).
  subroutine readme_example()
    integer :: ctxt, pr, pc, mr, mc, lld, nl, info, descf(9), descd(9), descs(9), ierr
    real(c_double), allocatable :: f(:,:), d(:,:), s(:,:), eye(:,:), ev(:)
    real(c_double) :: mu, energy
    type(ovl_pdpurify_params) :: prm
    character(len=512) :: msg
    call blacs_get(-1, 0, ctxt)
    call blacs_gridinit(ctxt, 'R', 1, nprocs)
    call blacs_gridinfo(ctxt, pr, pc, mr, mc)
    lld = max(1, numroc_(n, 4, mr, 0, pr))
    nl = max(1, numroc_(n, 4, mc, 0, pc))
    call descinit(descf, n, n, 4, 4, 0, 0, ctxt, lld, info)
    descd = descf
    descs = descf
    allocate (f(lld, nl), d(lld, nl), s(lld, nl), eye(n, n), ev(n))
    eye = 0
    do info = 1, n
      eye(info, info) = 1
    end do
    call scatter(f0, f, descf, pr, pc, mr, mc)
    call scatter(eye, s, descf, pr, pc, mr, mc)
    include 'pdpurify_readme_fortran.inc'
    ev = 0
    call dsyev_eigs(ev)
    if (ierr /= OVL_OK .or. abs(energy - sum(ev(1:nocc))) > 1d-8 * abs(sum(ev(1:nocc))) .or. &
        mu < ev(nocc) .or. mu > ev(nocc + 1)) nerr = nerr + 1
    if (iam == 0) print '(a,i0,a,es22.15,a,f12.6)', 'README example: ierr ', ierr, ' energy ', energy, ' mu ', mu
    ! a bad descriptor: OVL_ERR_ARG on every rank, with a message naming it
    descd(1) = 2
    call ovl_pdpurify(f, descf, nocc, d, descd, ierr)
    msg = ovl_errmsg_f()
    if (ierr /= OVL_ERR_ARG .or. index(msg, 'DESCD') == 0) nerr = nerr + 1
    if (iam == 0) print '(a,i0,a,a)', 'bad DESCD: ierr ', ierr, ': ', trim(msg)
    ! run-time options: the string's method and cap; an unknown option is OVL_ERR_ARG naming it
    descd = descf
    call ovl_pdpurify(f, descf, nocc, d, descd, ierr, energy=energy, options='--method trs4 --max-iter 1')
    if (ierr /= OVL_ERR_NUMERIC) nerr = nerr + 1
    prm = ovl_pdpurify_params_default()
    prm%max_iter = 1
    call ovl_pdpurify(f, descf, nocc, d, descd, ierr, params=prm, energy=energy, options='--method trs4 --max-iter 80')
    if (ierr /= OVL_OK .or. abs(energy - sum(ev(1:nocc))) > 1d-8 * abs(sum(ev(1:nocc)))) nerr = nerr + 1
    call ovl_pdpurify(f, descf, nocc, d, descd, ierr, options='--ndup 2 --bogus')
    msg = ovl_errmsg_f()
    if (ierr /= OVL_ERR_ARG .or. index(msg, "unknown option '--bogus'") == 0) nerr = nerr + 1
    if (iam == 0) print '(a,i0,a,a)', 'options: ierr ', ierr, ': ', trim(msg)
    ! the block-sparse route: a threshold in the parameters (S = I through S^(-1/2)), and as an option
    descd = descf
    prm = ovl_pdpurify_params_default()
    prm%method = OVL_PURIFY_TRS4
    prm%sparse = 0
    prm%sparse_block = 7
    call ovl_pdpurify(f, descf, nocc, d, descd, ierr, s=s, descs=descs, params=prm, energy=energy)
    if (ierr /= OVL_OK .or. abs(energy - sum(ev(1:nocc))) > 1d-10 * abs(sum(ev(1:nocc)))) nerr = nerr + 1
    if (iam == 0) print '(a,i0,a,es22.15)', 'sparse 0, trs4, blocks of 7: ierr ', ierr, ' energy ', energy
    call ovl_pdpurify(f, descf, nocc, d, descd, ierr, energy=energy, options='--method sp2 --sparse 1e-9')
    if (ierr /= OVL_OK .or. abs(energy - sum(ev(1:nocc))) > 1d-6 * abs(sum(ev(1:nocc)))) nerr = nerr + 1
    if (iam == 0) print '(a,i0,a,es22.15)', 'sparse 1e-9 as an option: ierr ', ierr, ' energy ', energy
    prm%method = OVL_PURIFY_CANONICAL
    call ovl_pdpurify(f, descf, nocc, d, descd, ierr, params=prm)
    if (ierr /= OVL_ERR_ARG) nerr = nerr + 1
    ! S not positive definite: OVL_ERR_NUMERIC
    descd = descf
    s = -s
    call ovl_pdpurify(f, descf, nocc, d, descd, ierr, s=s, descs=descs)
    msg = ovl_errmsg_f()
    if (ierr /= OVL_ERR_NUMERIC) nerr = nerr + 1
    if (iam == 0) print '(a,i0,a,a)', 'S = -I: ierr ', ierr, ': ', trim(msg)
    deallocate (f, d, s, eye, ev)
    call blacs_gridexit(ctxt)
  end subroutine

  ! eigenvalues of f0 (LAPACK DSYEV, every rank)
  subroutine dsyev_eigs(ev)
    real(c_double), intent(out) :: ev(:)
    real(c_double), allocatable :: a(:,:), work(:)
    integer :: info
    allocate (a(n, n), work(3 * n + 64))
    a = f0
    call dsyev('N', 'U', n, a, n, ev, work, size(work), info)
    if (info /= 0) nerr = nerr + 1
    deallocate (a, work)
  end subroutine

end program test_pdpurify_f
