!> ntpoly_purify: the NTPoly peer of ovl's purification (docs/lab/peers.md, "NTPoly").
!> Reads H (and S) from Matrix Market files, computes the density matrix with NTPoly's
!> purification routines at a threshold and a convergence tolerance, with S through
!> NTPoly's inverse square root (Newton-Schulz) or an inverse Cholesky factor, and
!> prints one line per run. Built against NTPoly 3.1.1 by bench/peers/build_ntpoly.sh.
!>
!> usage: mpiexec -n P ntpoly_purify --hamiltonian H.mtx --nocc N [options]
!>   --overlap S.mtx        non-orthogonal basis (default: S = I)
!>   --factor isqrt|chol    how S enters: S^(-1/2) by NTPoly's InverseSquareRoot
!>                          (default) or L^(-1) of S = L L^T (CholeskyDecomposition, Invert)
!>   --method LIST          comma list of trs2 (= sp2), trs4, pm, hpcp (default trs2,trs4)
!>   --threshold EPS        NTPoly's drop threshold for products and sums (default 1e-5)
!>   --converge TOL         NTPoly's converge_diff for the density (default 1e-8)
!>   --converge-s TOL       the same for the factor of S (default 1e-8)
!>   --max-iter N           at most N iterations (default 200)
!>   --grid RxCxS           the process grid (default: NTPoly's choice for the ranks)
!>   --no-balance           no random permutation for load balance (default: one, from
!>                          gfortran's default random sequence on rank 0, broadcast)
!>   --repeat R             run each method R times (default 1)
!>   --density PREFIX       write D (occupation 2) to PREFIX<method>.mtx after the last run
!>   --log FILE             keep NTPoly's YAML log of the last solve in FILE (default:
!>                          ntpoly_purify.<pid>.log in the current directory, removed)
!> The line: method, n, ranks, grid, threshold, converge, iterations of the purification,
!> converged (no: NTPoly stopped at --max-iter; its solvers do not say so themselves),
!> iterations of the factor of S, t_purify (the purification call alone), t_total (the
!> factor of S plus the purification; both MPI_Wtime, max over ranks), cpu_purify and
!> cpu_total (the same spans in CPU_TIME of the process, max over ranks: what a loaded
!> machine inflates less), energy = 2 tr(K H), trace = 2 tr(K S) (or 2 tr K), mu (NTPoly's
!> chemical potential estimate), nnz of D.
!> K is NTPoly's density (occupation 1, tr(K S) = nocc); D = 2 K.
!> The iteration counts are read from NTPoly's log ("Total Iterations"), the only place
!> NTPoly reports them: the solvers run verbose with the log written by rank 0.
PROGRAM NTPolyPurify
  USE DataTypesModule, ONLY : NTREAL, NTLONG
  USE DensityMatrixSolversModule, ONLY : TRS2, TRS4, PM, HPCP
  USE InverseSolversModule, ONLY : Invert
  USE LinearSolversModule, ONLY : CholeskyDecomposition
  USE LoggingModule, ONLY : ActivateLogger, DeactivateLogger
  USE PermutationModule, ONLY : Permutation_t, ConstructRandomPermutation, &
       & DestructPermutation
  USE ProcessGridModule, ONLY : ConstructProcessGrid, DestructProcessGrid, &
       & IsRoot, global_grid
  USE PSMatrixAlgebraModule, ONLY : DotMatrix, MatrixTrace, ScaleMatrix
  USE PSMatrixModule, ONLY : Matrix_ps, ConstructMatrixFromMatrixMarket, &
       & WriteMatrixToMatrixMarket, DestructMatrix, ConstructEmptyMatrix, &
       & FillMatrixIdentity, CopyMatrix, GetMatrixSize, TransposeMatrix
  USE SolverParametersModule, ONLY : SolverParameters_t, &
       & ConstructSolverParameters, DestructSolverParameters
  USE SquareRootSolversModule, ONLY : InverseSquareRoot
  USE MPI
  IMPLICIT NONE
  CHARACTER(LEN=1024) :: hfile = '', sfile = '', dprefix = '', logfile = ''
  CHARACTER(LEN=256) :: methods = 'trs2,trs4', factor = 'isqrt', gridarg = ''
  CHARACTER(LEN=1024) :: arg, val
  CHARACTER(LEN=32) :: method
  REAL(NTREAL) :: threshold = 1.0E-5_NTREAL, converge = 1.0E-8_NTREAL
  REAL(NTREAL) :: converge_s = 1.0E-8_NTREAL, nocc = -1.0_NTREAL
  INTEGER :: max_iter = 200, repeats = 1, prow = 0, pcol = 0, pslice = 0
  LOGICAL :: balance = .TRUE., have_s = .FALSE., keep_log = .FALSE.
  TYPE(Matrix_ps) :: H, S, ISQ, K, L, D
  TYPE(SolverParameters_t) :: params
  TYPE(Permutation_t) :: perm
  INTEGER :: provided, ierr, rank, nranks, II, rep, nargs, pos, iters, iters_s
  INTEGER :: stat
  REAL(NTREAL) :: t0, t1, t_fac, t_pur, mu, energy, trace
  REAL :: c0, c1, c_fac, c_pur
  REAL(NTREAL) :: cpu(2)
  INTEGER(NTLONG) :: nnz
  CHARACTER(LEN=32) :: grid_str, nnz_str
  CHARACTER(LEN=1024) :: line

  CALL MPI_Init_thread(MPI_THREAD_SERIALIZED, provided, ierr)
  CALL MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  CALL MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)

  !! Arguments: the same on every rank, so every rank fails alike.
  nargs = COMMAND_ARGUMENT_COUNT()
  II = 1
  DO WHILE (II .LE. nargs)
     CALL GET_COMMAND_ARGUMENT(II, arg)
     IF (TRIM(arg) .EQ. '--no-balance') THEN
        balance = .FALSE.
        II = II + 1
        CYCLE
     ELSE IF (TRIM(arg) .EQ. '--help' .OR. TRIM(arg) .EQ. '-h') THEN
        CALL Usage('')
     END IF
     IF (II + 1 .GT. nargs) CALL Usage('option ' // TRIM(arg) // ' needs a value')
     CALL GET_COMMAND_ARGUMENT(II + 1, val)
     stat = 0
     SELECT CASE (TRIM(arg))
     CASE ('--hamiltonian')
        hfile = val
     CASE ('--overlap')
        sfile = val
        have_s = .TRUE.
     CASE ('--factor')
        factor = val
        IF (factor .NE. 'isqrt' .AND. factor .NE. 'chol') &
             & CALL Usage('--factor takes isqrt or chol')
     CASE ('--nocc')
        READ (val, *, IOSTAT=stat) nocc
     CASE ('--method')
        methods = val
     CASE ('--threshold')
        READ (val, *, IOSTAT=stat) threshold
     CASE ('--converge')
        READ (val, *, IOSTAT=stat) converge
     CASE ('--converge-s')
        READ (val, *, IOSTAT=stat) converge_s
     CASE ('--max-iter')
        READ (val, *, IOSTAT=stat) max_iter
     CASE ('--repeat')
        READ (val, *, IOSTAT=stat) repeats
     CASE ('--grid')
        gridarg = val
        DO pos = 1, LEN_TRIM(gridarg)
           IF (gridarg(pos:pos) .EQ. 'x') gridarg(pos:pos) = ' '
        END DO
        READ (gridarg, *, IOSTAT=stat) prow, pcol, pslice
        IF (stat .EQ. 0 .AND. prow * pcol * pslice .NE. nranks) &
             & CALL Usage('--grid ' // TRIM(val) // ' does not multiply to the number of ranks')
     CASE ('--density')
        dprefix = val
     CASE ('--log')
        logfile = val
        keep_log = .TRUE.
     CASE DEFAULT
        CALL Usage('unknown option ' // TRIM(arg))
     END SELECT
     IF (stat .NE. 0) CALL Usage('bad value ' // TRIM(val) // ' for ' // TRIM(arg))
     II = II + 2
  END DO
  IF (LEN_TRIM(hfile) .EQ. 0) CALL Usage('--hamiltonian is required')
  IF (nocc .LE. 0) CALL Usage('--nocc N (occupied orbitals, > 0) is required')
  IF (threshold .LT. 0 .OR. converge .LE. 0 .OR. converge_s .LE. 0 .OR. &
       & max_iter .LT. 1 .OR. repeats .LT. 1) &
       & CALL Usage('threshold >= 0, converge > 0, max-iter >= 1, repeat >= 1 expected')
  CALL CheckReadable(hfile)
  IF (have_s) CALL CheckReadable(sfile)
  IF (LEN_TRIM(logfile) .EQ. 0) THEN
     WRITE (logfile, '(A,I0,A)') 'ntpoly_purify.', GetPid(), '.log'
  END IF

  !! The process grid.
  IF (prow .GT. 0) THEN
     CALL ConstructProcessGrid(MPI_COMM_WORLD, prow, pcol, pslice)
  ELSE
     CALL ConstructProcessGrid(MPI_COMM_WORLD)
  END IF
  WRITE (grid_str, '(I0,"x",I0,"x",I0)') global_grid%num_process_rows, &
       & global_grid%num_process_columns, global_grid%num_process_slices

  !! The matrices.
  CALL ConstructMatrixFromMatrixMarket(H, TRIM(hfile))
  IF (have_s) THEN
     CALL ConstructMatrixFromMatrixMarket(S, TRIM(sfile))
     IF (S%actual_matrix_dimension .NE. H%actual_matrix_dimension) &
          & CALL Usage('H and S differ in size')
  END IF
  IF (nocc .GE. H%actual_matrix_dimension) CALL Usage('--nocc must be below n')
  !! Without the grid argument every rank would draw its own permutation.
  IF (balance) CALL ConstructRandomPermutation(perm, H%logical_matrix_dimension, global_grid)

  method_loop: DO pos = 1, 64
     CALL NextMethod(methods, method)
     IF (LEN_TRIM(method) .EQ. 0) EXIT method_loop
     SELECT CASE (TRIM(method))
     CASE ('trs2', 'sp2', 'trs4', 'pm', 'hpcp')
     CASE DEFAULT
        CALL Usage('unknown method ' // TRIM(method) // ' (trs2, sp2, trs4, pm, hpcp)')
     END SELECT
     DO rep = 1, repeats
        !! The factor of S (or the identity).
        CALL SetParams(converge_s)
        CALL MPI_Barrier(MPI_COMM_WORLD, ierr)
        t0 = MPI_Wtime()
        CALL CPU_TIME(c0)
        IF (IsRoot()) CALL ActivateLogger(.TRUE., TRIM(logfile))
        iters_s = 0
        IF (have_s .AND. factor .EQ. 'isqrt') THEN
           CALL InverseSquareRoot(S, ISQ, params)
        ELSE IF (have_s) THEN
           CALL CholeskyDecomposition(S, L, params)
           CALL Invert(L, ISQ, params)
        ELSE
           CALL ConstructEmptyMatrix(ISQ, H)
           CALL FillMatrixIdentity(ISQ)
        END IF
        IF (IsRoot()) CALL DeactivateLogger
        CALL CPU_TIME(c1)
        t1 = MPI_Wtime()
        t_fac = t1 - t0
        c_fac = c1 - c0
        IF (have_s) iters_s = LoggedIterations(logfile)
        !! The purification.
        CALL SetParams(converge)
        CALL MPI_Barrier(MPI_COMM_WORLD, ierr)
        IF (IsRoot()) CALL ActivateLogger(.TRUE., TRIM(logfile))
        t0 = MPI_Wtime()
        CALL CPU_TIME(c0)
        SELECT CASE (TRIM(method))
        CASE ('trs2', 'sp2')
           CALL TRS2(H, ISQ, nocc, K, chemical_potential_out=mu, solver_parameters_in=params)
        CASE ('trs4')
           CALL TRS4(H, ISQ, nocc, K, chemical_potential_out=mu, solver_parameters_in=params)
        CASE ('pm')
           CALL PM(H, ISQ, nocc, K, chemical_potential_out=mu, solver_parameters_in=params)
        CASE ('hpcp')
           CALL HPCP(H, ISQ, nocc, K, chemical_potential_out=mu, solver_parameters_in=params)
        END SELECT
        CALL CPU_TIME(c1)
        t1 = MPI_Wtime()
        IF (IsRoot()) CALL DeactivateLogger
        t_pur = t1 - t0
        c_pur = c1 - c0
        cpu(1) = c_pur
        cpu(2) = c_fac + c_pur
        CALL MPI_Allreduce(MPI_IN_PLACE, cpu, 2, MPI_DOUBLE_PRECISION, MPI_MAX, &
             & MPI_COMM_WORLD, ierr)
        iters = LoggedIterations(logfile)
        CALL MPI_Allreduce(MPI_IN_PLACE, t_fac, 1, MPI_DOUBLE_PRECISION, MPI_MAX, &
             & MPI_COMM_WORLD, ierr)
        CALL MPI_Allreduce(MPI_IN_PLACE, t_pur, 1, MPI_DOUBLE_PRECISION, MPI_MAX, &
             & MPI_COMM_WORLD, ierr)
        !! Checks, outside the timing.
        CALL DotMatrix(K, H, energy)
        IF (have_s) THEN
           CALL DotMatrix(K, S, trace)
        ELSE
           CALL MatrixTrace(K, trace)
        END IF
        nnz = GetMatrixSize(K)
        IF (IsRoot()) THEN
           WRITE (nnz_str, '(I0)') nnz
           WRITE (line, '(*(A))') 'ntpoly method=', TRIM(UpperName(method)), &
                & ' n=', I2S(H%actual_matrix_dimension), ' ranks=', I2S(nranks), &
                & ' grid=', TRIM(grid_str), ' threshold=', R2S(threshold, '(ES9.2)'), &
                & ' converge=', R2S(converge, '(ES9.2)'), ' iters=', I2S(MIN(iters, max_iter)), &
                & ' converged=', TRIM(MERGE('yes', 'no ', iters .GE. 0 .AND. iters .LE. max_iter)), &
                & ' iters_s=', I2S(iters_s), ' t_purify=', R2S(t_pur, '(F12.6)'), &
                & ' t_total=', R2S(t_fac + t_pur, '(F12.6)'), &
                & ' cpu_purify=', R2S(cpu(1), '(F12.6)'), ' cpu_total=', R2S(cpu(2), '(F12.6)'), &
                & ' energy=', &
                & R2S(2.0_NTREAL * energy, '(ES23.15)'), ' trace=', R2S(2.0_NTREAL * trace, '(ES23.15)'), &
                & ' mu=', R2S(mu, '(ES23.15)'), ' nnz_D=', TRIM(nnz_str), ' rep=', I2S(rep)
           WRITE (*, '(A)') TRIM(line)
           FLUSH (6)
        END IF
        IF (rep .EQ. repeats .AND. LEN_TRIM(dprefix) .GT. 0) THEN
           CALL CopyMatrix(K, D)
           CALL ScaleMatrix(D, 2.0_NTREAL)
           CALL WriteMatrixToMatrixMarket(D, TRIM(dprefix) // TRIM(method) // '.mtx')
           CALL DestructMatrix(D)
        END IF
        CALL DestructMatrix(K)
        CALL DestructMatrix(ISQ)
        CALL DestructMatrix(L)
     END DO
  END DO method_loop

  IF (IsRoot() .AND. .NOT. keep_log) THEN
     OPEN (NEWUNIT=II, FILE=TRIM(logfile), STATUS='OLD', IOSTAT=stat)
     IF (stat .EQ. 0) CLOSE (II, STATUS='DELETE')
  END IF
  CALL DestructSolverParameters(params)
  IF (balance) CALL DestructPermutation(perm)
  CALL DestructMatrix(H)
  CALL DestructMatrix(S)
  CALL DestructProcessGrid
  CALL MPI_Finalize(ierr)

CONTAINS

  !> The solver parameters: threshold, tolerance, iterations, the balance permutation.
  SUBROUTINE SetParams(tol)
    REAL(NTREAL), INTENT(IN) :: tol
    IF (balance) THEN
       CALL ConstructSolverParameters(params, converge_diff_in=tol, &
            & threshold_in=threshold, max_iterations_in=max_iter, be_verbose_in=.TRUE., &
            & BalancePermutation_in=perm)
    ELSE
       CALL ConstructSolverParameters(params, converge_diff_in=tol, &
            & threshold_in=threshold, max_iterations_in=max_iter, be_verbose_in=.TRUE.)
    END IF
  END SUBROUTINE SetParams

  !> The last "Total Iterations" of the log (rank 0 reads it; broadcast); -1 if none,
  !> max_iter + 1 when the solver stopped at max_iter without converging.
  INTEGER FUNCTION LoggedIterations(fname) RESULT(it)
    CHARACTER(LEN=*), INTENT(IN) :: fname
    CHARACTER(LEN=512) :: line
    INTEGER :: u, st, p, v
    it = -1
    IF (IsRoot()) THEN
       OPEN (NEWUNIT=u, FILE=TRIM(fname), STATUS='OLD', ACTION='READ', IOSTAT=st)
       IF (st .EQ. 0) THEN
          DO
             READ (u, '(A)', IOSTAT=st) line
             IF (st .NE. 0) EXIT
             p = INDEX(line, 'Total Iterations:')
             IF (p .GT. 0) THEN
                READ (line(p + 17:), *, IOSTAT=st) v
                IF (st .EQ. 0) it = v
             END IF
          END DO
          CLOSE (u)
       END IF
    END IF
    CALL MPI_Bcast(it, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  END FUNCTION LoggedIterations

  FUNCTION I2S(i) RESULT(str)
    INTEGER, INTENT(IN) :: i
    CHARACTER(LEN=:), ALLOCATABLE :: str
    CHARACTER(LEN=32) :: buf
    WRITE (buf, '(I0)') i
    str = TRIM(buf)
  END FUNCTION I2S

  FUNCTION R2S(x, f) RESULT(str)
    REAL(NTREAL), INTENT(IN) :: x
    CHARACTER(LEN=*), INTENT(IN) :: f
    CHARACTER(LEN=:), ALLOCATABLE :: str
    CHARACTER(LEN=40) :: buf
    WRITE (buf, f) x
    str = TRIM(ADJUSTL(buf))
  END FUNCTION R2S

  !> Pops the next name off a comma list.
  SUBROUTINE NextMethod(list, name)
    CHARACTER(LEN=*), INTENT(INOUT) :: list
    CHARACTER(LEN=*), INTENT(OUT) :: name
    INTEGER :: c
    c = INDEX(list, ',')
    IF (c .EQ. 0) THEN
       name = ADJUSTL(list)
       list = ''
    ELSE
       name = ADJUSTL(list(1:c - 1))
       list = list(c + 1:)
    END IF
  END SUBROUTINE NextMethod

  FUNCTION UpperName(m) RESULT(u)
    CHARACTER(LEN=*), INTENT(IN) :: m
    CHARACTER(LEN=32) :: u
    SELECT CASE (TRIM(m))
    CASE ('trs2', 'sp2')
       u = 'TRS2(SP2)'
    CASE ('trs4')
       u = 'TRS4'
    CASE ('pm')
       u = 'PM'
    CASE ('hpcp')
       u = 'HPCP'
    CASE DEFAULT
       u = m
    END SELECT
  END FUNCTION UpperName

  SUBROUTINE CheckReadable(fname)
    CHARACTER(LEN=*), INTENT(IN) :: fname
    LOGICAL :: there
    INQUIRE (FILE=TRIM(fname), EXIST=there)
    IF (.NOT. there) CALL Usage('no such file: ' // TRIM(fname))
  END SUBROUTINE CheckReadable

  INTEGER FUNCTION GetPid() RESULT(p)
    INTERFACE
       INTEGER(C_INT) FUNCTION getpid_c() BIND(C, NAME='getpid')
         USE ISO_C_BINDING, ONLY : C_INT
       END FUNCTION getpid_c
    END INTERFACE
    p = getpid_c()
    CALL MPI_Bcast(p, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  END FUNCTION GetPid

  !> A message on rank 0 and a clean stop of every rank (all ranks reach it alike).
  SUBROUTINE Usage(msg)
    CHARACTER(LEN=*), INTENT(IN) :: msg
    INTEGER :: e
    IF (rank .EQ. 0) THEN
       IF (LEN(msg) .GT. 0) WRITE (0, '(A,A)') 'ntpoly_purify: ', msg
       WRITE (0, '(A)') 'usage: ntpoly_purify --hamiltonian H.mtx --nocc N [--overlap S.mtx]'
       WRITE (0, '(A)') '  [--factor isqrt|chol] [--method trs2,trs4,pm,hpcp] [--threshold EPS]'
       WRITE (0, '(A)') '  [--converge TOL] [--converge-s TOL] [--max-iter N] [--grid RxCxS]'
       WRITE (0, '(A)') '  [--no-balance] [--repeat R] [--density PREFIX] [--log FILE]'
    END IF
    CALL MPI_Finalize(e)
    IF (LEN(msg) .GT. 0) STOP 2
    STOP 0
  END SUBROUTINE Usage
END PROGRAM NTPolyPurify
