! ovl_mod: the Fortran interface of ovl's descriptor API (ISO_C_BINDING).
!
! ovl_pdpurify computes the density matrix D (and on request the
! energy-weighted density matrix W = D F D, the chemical potential and the
! band energy tr(D F)) of a Fock matrix F held as a ScaLAPACK block-cyclic
! array, optionally with the overlap matrix S of a non-orthogonal basis.
! The arguments are those of a ScaLAPACK program: local arrays and 9-integer
! descriptors (DESCINIT) on a BLACS context; see include/ovl/pdpurify.h for
! the semantics, the errors and how mu is estimated.
!
!   use ovl_mod
!   type(ovl_pdpurify_params) :: prm
!   prm = ovl_pdpurify_params_default()
!   call ovl_pdpurify(f, descf, nocc, d, descd, ierr, s=s, descs=descs, w=w, descw=descw, &
!                     params=prm, mu=mu, energy=energy, info=info)
!   if (ierr /= OVL_OK) print *, trim(ovl_errmsg_f())
!
! COLLECTIVE over the processes of DESCF's BLACS context.
module ovl_mod
  use, intrinsic :: iso_c_binding
  implicit none
  private

  ! Copies of the C headers' constants and structs (ovl/core.h, ovl/purify.h, ovl/algo.h,
  ! ovl/pdpurify.h): the layout test (tests/layout_check.py) compares them with the C compiler's.
  integer(c_int), parameter, public :: OVL_OK = 0, OVL_ERR_ARG = 1, OVL_ERR_SIZE = 2, OVL_ERR_GRID = 3, &
                                       OVL_ERR_IO = 4, OVL_ERR_FORMAT = 5, OVL_ERR_NUMERIC = 6, OVL_ERR_NOMEM = 7, &
                                       OVL_ERR_UNSUPPORTED = 8, OVL_ERR_MPI = 9, OVL_ERR_INTERNAL = 10
  integer(c_int), parameter, public :: OVL_PURIFY_CANONICAL = 0, OVL_PURIFY_SP2 = 2, OVL_PURIFY_TRS4 = 3, &
                                       OVL_PURIFY_SP2ACC = 4
  integer(c_int), parameter, public :: OVL_PURIFY_PREC_DOUBLE = 0, OVL_PURIFY_PREC_MIXED = 1
  integer(c_int), parameter, public :: OVL_ALGO_AUTO = -1, OVL_ALGO_SSC3 = 5, OVL_ALGO_SSC4 = 6, &
                                       OVL_ALGO_SSC5 = 7, OVL_ALGO_SSC6 = 8

  ! struct ovl_pdpurify_params
  type, bind(C), public :: ovl_pdpurify_params
    integer(c_int) :: method    ! OVL_PURIFY_SP2ACC (default), OVL_PURIFY_SP2, OVL_PURIFY_TRS4 or OVL_PURIFY_CANONICAL
    integer(c_int) :: algo      ! SymmSquareCube algorithm of canonical purification (OVL_ALGO_AUTO)
    integer(c_int) :: ndup      ! lanes per communication phase (0: the planner's)
    integer(c_int) :: prec      ! OVL_PURIFY_PREC_DOUBLE (default) or OVL_PURIFY_PREC_MIXED
    real(c_double) :: tol       ! 0: the method's own stopping rule
    integer(c_int) :: max_iter  ! 200
    integer(c_int) :: c         ! replication of the s x s x c kernel grid (0: the planner's)
    integer(c_int) :: verbose   ! 1: one line per iteration
    type(c_ptr) :: options      ! C string of run-time options (c_null_ptr); Fortran: the options argument
    real(c_double) :: homo, lumo  ! sp2acc's HOMO/LUMO estimates (NaN: none), e.g. the previous call's info%homo, info%lumo
    real(c_double) :: sparse    ! the block-sparse route's threshold in [0, 1) (NaN: dense)
    integer(c_int) :: sparse_block  ! its block size (default 32)
  end type

  ! struct ovl_pdpurify_info
  type, bind(C), public :: ovl_pdpurify_info
    integer(c_int) :: iterations
    real(c_double) :: idem_err, trace_err, homo, lumo
    integer(c_int) :: s, c
    real(c_double) :: t_total, t_purify, t_redist, t_overlap, t_mu
    type(c_ptr) :: stop_reason
    character(kind=c_char) :: plan(192)  ! the plan that ran (ovl_plan_describe), NUL-terminated: ovl_plan_string
  end type

  ! struct ovl_dm_results (ovl/dm.h): what the last solve of a spin channel did
  type, bind(C), public :: ovl_dm_results
    real(c_double) :: mu, energy, homo, lumo, idem_err, trace_err, n_occ, occupation
    integer(c_int) :: iterations, warm, solves, factorizations
    real(c_double) :: t_solve, t_purify, t_redist, t_overlap, t_mu, t_factor
    character(kind=c_char) :: stop_reason(48)
    character(kind=c_char) :: plan(192)  ! NUL-terminated: ovl_c_string
  end type

  ! The density-matrix handle (ovl/dm.h; an opaque C pointer, c_null_ptr when there is none).
  type, public :: ovl_dm
    type(c_ptr) :: p = c_null_ptr
  end type

  public :: ovl_pdpurify_params_default, ovl_pdpurify, ovl_errmsg_f, ovl_plan_string
  public :: ovl_dm_create, ovl_dm_set, ovl_dm_get, ovl_dm_set_overlap, ovl_dm_solve, ovl_dm_get_results, &
            ovl_dm_destroy, ovl_c_string

  interface
    function ovl_pdpurify_params_default() bind(C, name='ovl_pdpurify_params_default') result(p)
      import :: ovl_pdpurify_params
      type(ovl_pdpurify_params) :: p
    end function

    function c_pdpurify(f, descf, s, descs, nocc, d, descd, w, descw, params, mu, energy, info) &
        bind(C, name='ovl_pdpurify') result(rc)
      import :: c_double, c_int, c_int64_t, ovl_pdpurify_params, ovl_pdpurify_info
      real(c_double), intent(in) :: f(*)
      integer(c_int), intent(in) :: descf(9)
      real(c_double), intent(in), optional :: s(*)
      integer(c_int), intent(in), optional :: descs(9)
      integer(c_int64_t), value :: nocc
      real(c_double), intent(inout) :: d(*)
      integer(c_int), intent(in) :: descd(9)
      real(c_double), intent(inout), optional :: w(*)
      integer(c_int), intent(in), optional :: descw(9)
      type(ovl_pdpurify_params), intent(in), optional :: params
      real(c_double), intent(out), optional :: mu, energy
      type(ovl_pdpurify_info), intent(out), optional :: info
      integer(c_int) :: rc
    end function

    function c_dm_create(ctxt, n, nel, nspin, h) bind(C, name='ovl_dm_create') result(rc)
      import :: c_int, c_double, c_ptr
      integer(c_int), value :: ctxt, n, nspin
      real(c_double), value :: nel
      type(c_ptr), intent(out) :: h
      integer(c_int) :: rc
    end function

    function c_dm_set(h, name, value) bind(C, name='ovl_dm_set') result(rc)
      import :: c_int, c_char, c_ptr
      type(c_ptr), value :: h
      character(kind=c_char), intent(in) :: name(*), value(*)
      integer(c_int) :: rc
    end function

    function c_dm_get(h, name, buf, len) bind(C, name='ovl_dm_get') result(rc)
      import :: c_int, c_char, c_ptr, c_size_t
      type(c_ptr), value :: h
      character(kind=c_char), intent(in) :: name(*)
      character(kind=c_char), intent(out) :: buf(*)
      integer(c_size_t), value :: len
      integer(c_int) :: rc
    end function

    function c_dm_set_overlap(h, s, descs) bind(C, name='ovl_dm_set_overlap') result(rc)
      import :: c_int, c_double, c_ptr
      type(c_ptr), value :: h
      real(c_double), intent(in), optional :: s(*)
      integer(c_int), intent(in), optional :: descs(9)
      integer(c_int) :: rc
    end function

    function c_dm_solve(h, ispin, f, descf, d, descd, w, descw) bind(C, name='ovl_dm_solve') result(rc)
      import :: c_int, c_double, c_ptr
      type(c_ptr), value :: h
      integer(c_int), value :: ispin
      real(c_double), intent(in) :: f(*)
      integer(c_int), intent(in) :: descf(9), descd(9)
      real(c_double), intent(inout) :: d(*)
      real(c_double), intent(inout), optional :: w(*)
      integer(c_int), intent(in), optional :: descw(9)
      integer(c_int) :: rc
    end function

    function c_dm_get_results(h, ispin, r) bind(C, name='ovl_dm_get_results') result(rc)
      import :: c_int, c_ptr, ovl_dm_results
      type(c_ptr), value :: h
      integer(c_int), value :: ispin
      type(ovl_dm_results), intent(out) :: r
      integer(c_int) :: rc
    end function

    function c_dm_destroy(h) bind(C, name='ovl_dm_destroy') result(rc)
      import :: c_int, c_ptr
      type(c_ptr), intent(inout) :: h
      integer(c_int) :: rc
    end function

    subroutine c_errmsg_copy(buf, len) bind(C, name='ovl_errmsg_copy_f')
      import :: c_char, c_int
      character(kind=c_char), intent(out) :: buf(*)
      integer(c_int), intent(in) :: len
    end subroutine
  end interface

contains

  ! D (and W) from F (and S); ierr = OVL_OK or an ovl error code, the same on
  ! every process of the grid (the message: ovl_errmsg_f()).
  ! options: run-time options with the command line's names (ovl_pdpurify_params's
  ! options in C), e.g. options='--method trs4 --ndup 2'; they override params.
  subroutine ovl_pdpurify(f, descf, nocc, d, descd, ierr, s, descs, w, descw, params, mu, energy, info, options)
    real(c_double), intent(in) :: f(*)
    integer(c_int), intent(in) :: descf(9), descd(9)
    integer, intent(in) :: nocc
    real(c_double), intent(inout) :: d(*)
    integer, intent(out) :: ierr
    real(c_double), intent(in), optional :: s(*)
    integer(c_int), intent(in), optional :: descs(9), descw(9)
    real(c_double), intent(inout), optional :: w(*)
    type(ovl_pdpurify_params), intent(in), optional :: params
    real(c_double), intent(out), optional :: mu, energy
    type(ovl_pdpurify_info), intent(out), optional :: info
    character(len=*), intent(in), optional :: options
    type(ovl_pdpurify_params) :: prm
    character(kind=c_char, len=:), allocatable, target :: copt
    if (.not. present(options)) then
      ierr = int(c_pdpurify(f, descf, s, descs, int(nocc, c_int64_t), d, descd, w, descw, params, mu, energy, info))
      return
    end if
    if (present(params)) then
      prm = params
    else
      prm = ovl_pdpurify_params_default()
    end if
    copt = trim(options) // c_null_char
    prm%options = c_loc(copt)
    ierr = int(c_pdpurify(f, descf, s, descs, int(nocc, c_int64_t), d, descd, w, descw, prm, mu, energy, info))
  end subroutine

  ! The message of this process's last error.
  function ovl_errmsg_f() result(msg)
    character(len=512) :: msg
    call c_errmsg_copy(msg, int(len(msg), c_int))
  end function

  ! info%plan as a Fortran string (the characters before the NUL), e.g.
  ! 'sq grid=2x2x1 ndup=4 backend=mpi'.
  function ovl_plan_string(info) result(str)
    type(ovl_pdpurify_info), intent(in) :: info
    character(len=192) :: str
    integer :: k
    str = ' '
    do k = 1, size(info%plan)
      if (info%plan(k) == c_null_char) exit
      str(k:k) = info%plan(k)
    end do
  end function

  ! ---- the density-matrix handle (ovl/dm.h) --------------------------------
  ! As in C, with ierr last; ispin counts from 1 (1 .. nspin) as Fortran
  ! arrays do (C's ispin = Fortran's - 1). COLLECTIVE: create, set_overlap,
  ! solve, destroy (over the BLACS context's processes); LOCAL: set, get,
  ! get_results.

  subroutine ovl_dm_create(ctxt, n, n_electrons, nspin, h, ierr)
    integer, intent(in) :: ctxt, n, nspin
    real(c_double), intent(in) :: n_electrons
    type(ovl_dm), intent(out) :: h
    integer, intent(out) :: ierr
    ierr = int(c_dm_create(int(ctxt, c_int), int(n, c_int), n_electrons, int(nspin, c_int), h%p))
  end subroutine

  ! An option by the command line's name, e.g. call ovl_dm_set(h, 'method', 'sp2acc', ierr).
  subroutine ovl_dm_set(h, name, value, ierr)
    type(ovl_dm), intent(in) :: h
    character(len=*), intent(in) :: name, value
    integer, intent(out) :: ierr
    ierr = int(c_dm_set(h%p, trim(name) // c_null_char, trim(value) // c_null_char))
  end subroutine

  ! The option's value as ovl_dm_set takes it, blank-padded into value.
  subroutine ovl_dm_get(h, name, value, ierr)
    type(ovl_dm), intent(in) :: h
    character(len=*), intent(in) :: name
    character(len=*), intent(out) :: value
    integer, intent(out) :: ierr
    character(kind=c_char) :: buf(256)
    integer :: k
    ierr = int(c_dm_get(h%p, trim(name) // c_null_char, buf, int(size(buf), c_size_t)))
    value = ' '
    if (ierr /= OVL_OK) return
    do k = 1, min(size(buf), len(value))
      if (buf(k) == c_null_char) exit
      value(k:k) = buf(k)
    end do
  end subroutine

  ! S factorised once; without s and descs the basis is orthonormal again.
  subroutine ovl_dm_set_overlap(h, ierr, s, descs)
    type(ovl_dm), intent(in) :: h
    integer, intent(out) :: ierr
    real(c_double), intent(in), optional :: s(*)
    integer(c_int), intent(in), optional :: descs(9)
    ierr = int(c_dm_set_overlap(h%p, s, descs))
  end subroutine

  subroutine ovl_dm_solve(h, ispin, f, descf, d, descd, ierr, w, descw)
    type(ovl_dm), intent(in) :: h
    integer, intent(in) :: ispin
    real(c_double), intent(in) :: f(*)
    integer(c_int), intent(in) :: descf(9), descd(9)
    real(c_double), intent(inout) :: d(*)
    integer, intent(out) :: ierr
    real(c_double), intent(inout), optional :: w(*)
    integer(c_int), intent(in), optional :: descw(9)
    ierr = int(c_dm_solve(h%p, int(ispin - 1, c_int), f, descf, d, descd, w, descw))
  end subroutine

  subroutine ovl_dm_get_results(h, ispin, r, ierr)
    type(ovl_dm), intent(in) :: h
    integer, intent(in) :: ispin
    type(ovl_dm_results), intent(out) :: r
    integer, intent(out) :: ierr
    ierr = int(c_dm_get_results(h%p, int(ispin - 1, c_int), r))
  end subroutine

  subroutine ovl_dm_destroy(h, ierr)
    type(ovl_dm), intent(inout) :: h
    integer, intent(out) :: ierr
    ierr = int(c_dm_destroy(h%p))
  end subroutine

  ! The characters of a NUL-terminated C string (r%plan, r%stop_reason).
  function ovl_c_string(c) result(str)
    character(kind=c_char), intent(in) :: c(:)
    character(len=size(c)) :: str
    integer :: k
    str = ' '
    do k = 1, size(c)
      if (c(k) == c_null_char) exit
      str(k:k) = c(k)
    end do
  end function

end module ovl_mod
