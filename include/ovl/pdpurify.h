/* ovl_pdpurify: density-matrix purification on the caller's ScaLAPACK
 * block-cyclic matrices, with an optional overlap matrix.
 *
 * The caller holds the Fock (Kohn-Sham) matrix F, n x n, as a 2D
 * block-cyclic array with a ScaLAPACK array descriptor (any MB_ and NB_, any
 * BLACS grid shape, "Row" or "Col" order, RSRC_/CSRC_ anywhere in the
 * grid), as for PDSYEVD or ELPA. ovl_pdpurify returns the density matrix D
 * (occupation-1 convention: D = C_occ C_occ^T, tr(D S) = n_occ), the
 * chemical potential, the band energy tr(D F) and, on request, the
 * energy-weighted density matrix W = D F D (= C_occ diag(eps_occ) C_occ^T,
 * the matrix ELSI returns for forces), all in the caller's basis and layout.
 *
 * Communicator. As in ScaLAPACK and ovl_pdgemm, the process grid is the
 * BLACS grid of DESCF's context: its MPI communicator comes from
 * Cblacs_get(ctxt, 10, &h) and Cblacs2sys_handle(h), so C and Fortran
 * callers pass nothing but the descriptors they already have (ELPA and ELSI
 * take a communicator besides the descriptor; a BLACS context already names
 * one, and the Fortran and C contexts of the reference BLACS are the same
 * integers). Every descriptor must carry that context.
 *
 * Non-orthogonal basis. When S (the overlap matrix, symmetric positive
 * definite, same descriptor rules) is given, F C = S C eps is solved:
 * S = U^T U (ScaLAPACK PDPOTRF), F' = U^-T F U^-1 (two PDTRSM), D' is
 * purified from F', and D = U^-1 D' U^-T (two PDTRSM). These steps run on a
 * private copy of F and S in square blocks (NB = max(MB_, NB_) of DESCF) on
 * the same context; the caller's S is not modified.
 *
 * How. F (or F') moves with one MPI_Alltoallv from the block-cyclic layout
 * to ovl's block layout on plane 0 of an s x s x c kernel grid over the same
 * ranks (ovl/grid.h; ranks beyond s*s*c are idle during the kernel),
 * ovl_purify runs there (ovl/purify.h, with params.method, precision,
 * tolerance and iteration cap), and D (and W, computed as D (F D) with
 * SUMMA) move back with one MPI_Alltoallv each. The kernel's plan (its
 * algorithm, N_DUP and the grid s x s x c) is the planner's, as for every
 * entry: ovl_pdpurify_plan, with params as constraints; info.plan prints it.
 *
 * Chemical potential. The purification converges to the projector onto the
 * n_occ lowest eigenvectors of F' but does not name the HOMO and LUMO; they
 * are estimated from its result: HOMO = the largest eigenvalue of F' on the
 * range of D', LUMO = the smallest on the range of I - D', each by Lanczos
 * (full reorthogonalisation, at most min(n, 300) steps, stopped when the
 * extreme Ritz value moves by less than 1e-13 of the spectral width) on
 * D'(F' - lo I)D' and (I - D')(hi I - F')(I - D') with Gershgorin bounds
 * lo, hi. mu = (HOMO + LUMO) / 2. The estimates converge from inside the
 * spectrum (HOMO from below, LUMO from above); with a converged D' they agree
 * with the eigensolver's to about 1e-10 relative. n_occ = 0 gives HOMO = lo,
 * n_occ = n gives LUMO = hi.
 *
 * Block-sparse route. With params.sparse set (a threshold, not NAN), F and S
 * are cut into blocks of params.sparse_block rows, blocks below the
 * threshold dropped; S^(-1/2) (filtered Newton-Schulz, ovl_bsmat_invsqrt)
 * replaces the Cholesky factor, and F' = Z F Z, the purification
 * (ovl_purify_sparse: sp2, sp2acc, trs4; float64 or mixed), D = Z D' Z and W are
 * filtered block-sparse products on a 2D grid over every rank; D and W are
 * symmetrized. The purification's product is planned by its cost model
 * (ovl_purify_sparse_plan: bsumma on that grid, or bs2.5d on c layers),
 * with params.ndup and params.c (> 1: the 2.5D product on c layers, 1:
 * SUMMA) as constraints. HOMO/LUMO as above. Nothing is cubic in n; the
 * caller's arrays are dense (docs/guides/sparse.md).
 *
 * One call, one problem: S is factorised on every call. An SCF code that
 * calls once per cycle keeps a handle instead (ovl/dm.h: S factorised once,
 * a real electron count with occupation 2 or spin, options by name, the
 * previous cycle's HOMO/LUMO for sp2acc); ovl_pdpurify runs the same steps.
 *
 * Requires ScaLAPACK/BLACS at build time (OVL_HAVE_SCALAPACK, as
 * ovl_pdgemm); otherwise ovl_pdpurify returns OVL_ERR_UNSUPPORTED.
 * Descriptor integers are C int (ScaLAPACK's default integers). Not
 * thread-safe (one call at a time per process).
 */
#ifndef OVL_PDPURIFY_H
#define OVL_PDPURIFY_H

#include <stdint.h>

#include "ovl/algo.h"
#include "ovl/core.h"
#include "ovl/entry.h"
#include "ovl/plan.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ovl_pdpurify_params {
  ovl_purify_method method; /* default OVL_PURIFY_SP2ACC (SP2's steps while homo and lumo are NAN); or
                               OVL_PURIFY_SP2, OVL_PURIFY_TRS4,
                               OVL_PURIFY_CANONICAL (McWeeny is not accepted: it needs mu, not n_occ) */
  ovl_algo algo;            /* SymmSquareCube algorithm of canonical purification (OVL_ALGO_SSC3..6), or
                               OVL_ALGO_AUTO (default): the planner's (ovl_plan_resolve, family
                               OVL_FAMILY_SSC); SP2 and TRS4 use the symmetric square (family OVL_FAMILY_SQ)
                               and ignore it */
  int ndup;                 /* lanes (N_DUP) per communication phase, 1..OVL_LANES_MAX, or OVL_AUTO (default): the
                               planner's (4 for the symmetric square); 0, the older spelling of open, is read
                               as OVL_AUTO for one more release */
  ovl_purify_prec prec;     /* OVL_PURIFY_PREC_DOUBLE (default) or OVL_PURIFY_PREC_MIXED (SP2, TRS4; sparse too) */
  double tol;               /* ||D'^2 - D'||_F tolerance: 0 (default: the method's own stopping rule) or in
                               [OVL_PURIFY_TOL_MIN, OVL_PURIFY_TOL_MAX] */
  int max_iter;             /* iteration cap (default 200) */
  int c;                    /* replication c of the s x s x c kernel grid; 0 (default): the planner's (its
                               shape rules, ovl_grid_shape: SP2, TRS4: the 2.5D grid of P ranks, or 1 x 1 x P;
                               canonical: the algorithm's grid); else s = the largest with s*s*c <= P and
                               c | s (the symmetric square also takes 1 x 1 x c) */
  int verbose;              /* one line per iteration on rank 0 of the context */
  /* Run-time options (NULL, the default: none), e.g. "--method trs4 --ndup 2":
   * the names of the command line (docs/guides/cli.md), read after $OVL_OPTIONS
   * (ovl/entry.h: ovl_options_runtime): --algo, --ndup (auto: the planner's), --grid
   * SxSxC (sets c; s follows), --method, --precision, --nocc, --tol,
   * --max-iter. Precedence: the defaults < these fields (and nocc) <
   * $OVL_OPTIONS < options; rank 0's environment and string decide for every
   * process, and an unknown option in options is OVL_ERR_ARG naming it. */
  const char *options;
  /* sp2acc: estimates of the HOMO and LUMO eigenvalues of F' (NAN, the
   * default: none, the steps are SP2's; both finite with homo < lumo
   * otherwise; ignored by the other methods). The previous call's
   * info.homo and info.lumo are the natural choice in an SCF loop: the
   * estimated gap must only overlap the true one (ovl/purify.h). Also
   * --homo, --lumo in options. */
  double homo, lumo;
  /* The block-sparse route (NAN, the default: dense): the threshold eps in
   * [0, 1) of ovl_purify_sparse (sp2, sp2acc, trs4; float64 or mixed). F (and S)
   * are cut into blocks of sparse_block rows (default
   * OVL_PURIFY_SPARSE_BLOCK) with the blocks under eps dropped; with S, its
   * inverse square root (ovl_bsmat_invsqrt) replaces the Cholesky factor,
   * so that no step is cubic in n (see "Block-sparse route" above). Also
   * --sparse EPS and --sparse-block B in options. */
  double sparse;
  int sparse_block;
} ovl_pdpurify_params;

/* The defaults above. LOCAL. */
ovl_pdpurify_params ovl_pdpurify_params_default(void);

/* What a call did (the numbers the same on every process of the context;
 * the times this process's). */
typedef struct ovl_pdpurify_info {
  int iterations;          /* purification iterations */
  double idem_err;         /* ||D'^2 - D'||_F of the orthogonal-basis density */
  double trace_err;        /* |tr D' - n_occ| */
  double homo, lumo;       /* the estimates (see above); mu = (homo + lumo) / 2 */
  int s, c;                /* the kernel grid s x s x c */
  double t_total;          /* seconds in ovl_pdpurify */
  double t_purify;         /* seconds in ovl_purify */
  double t_redist;         /* seconds in the block-cyclic <-> block exchanges */
  double t_overlap;        /* seconds in the Cholesky factor and the four triangular solves (0 without S) */
  double t_mu;             /* seconds estimating HOMO and LUMO */
  const char *stop_reason; /* ovl_purify's (a static string) */
  char plan[192];          /* the plan that ran, as the planner prints it (ovl_plan_describe): "sq grid=2x2x1
                              ndup=4 backend=mpi", "alg5 grid=2x2x2 ndup=2 backend=mpi" */
} ovl_pdpurify_info;

/* Compute D (and W) from F (and S) with n_occ occupied orbitals.
 *  f, descf : F (n x n, with n = DESCF's M_ = N_; symmetric, both triangles
 *             stored); read only.
 *  s, descs : S, or both NULL for an orthonormal basis; read only.
 *  nocc     : 0 <= nocc <= n.
 *  d, descd : receives D (all of its n x n entries on this process's part).
 *  w, descw : receives W = D F D, or both NULL when it is not wanted.
 *  params   : NULL for the defaults.
 *  mu, energy, info : outputs, each may be NULL.
 * The global matrices are the whole arrays (IA = JA = 1). The descriptors of
 * F, S, D and W may differ (block sizes, sources, LLD_) but must share
 * DESCF's context.
 * COLLECTIVE over the processes of DESCF's BLACS context.
 * Errors, the same code and ovl_errmsg() text on every process of the grid:
 *  - OVL_ERR_ARG: a NULL f/descf/d/descd (returned at once, without
 *    agreement, on the process that passed it), s without descs or w without
 *    descw, a process outside DESCF's grid or an invalid context (returned
 *    at once on that process); a descriptor that is not DTYPE_ 1, has another
 *    context, MB_/NB_ < 1, RSRC_/CSRC_ outside the grid, M_ != N_ or != n,
 *    LLD_ too small; nocc out of range; params out of range;
 *  - OVL_ERR_NUMERIC: F or S not finite or not symmetric, S not positive
 *    definite, no convergence (ovl_purify's errors);
 *  - OVL_ERR_UNSUPPORTED: built without ScaLAPACK, RSRC_/CSRC_ = -1, a
 *    BLACS grid not ordered row by row in its communicator;
 *  - OVL_ERR_NOMEM, OVL_ERR_MPI, OVL_ERR_GRID. */
ovl_err ovl_pdpurify(const double *f, const int *descf, const double *s, const int *descs, int64_t nocc, double *d,
                     const int *descd, double *w, const int *descw, const ovl_pdpurify_params *params, double *mu,
                     double *energy, ovl_pdpurify_info *info);

/* The plan ovl_pdpurify runs for P ranks (P <= 0: the ranks of comm; the
 * planner does not need that many, see ovl_plan_resolve) and an n x n F:
 * params (NULL: the defaults) are the constraints, and ovl_plan_resolve of
 * the method's family (ovl_purify_plan_family: OVL_FAMILY_SQ for SP2 and
 * TRS4, OVL_FAMILY_SSC for canonical) completes them. The run-time options
 * (params->options, $OVL_OPTIONS) are not read here: ovl_pdpurify lays them
 * over params first. why as ovl_plan_resolve's. COLLECTIVE over comm.
 * Errors (agreed): those of ovl_plan_resolve; OVL_ERR_ARG (plan NULL,
 * local). */
ovl_err ovl_pdpurify_plan(MPI_Comm comm, int P, int64_t n, const ovl_pdpurify_params *params, ovl_plan *plan, char *why,
                          size_t nwhy);

/* Copy ovl_errmsg() into buf (len bytes, blank-padded, not NUL-terminated:
 * a Fortran CHARACTER(len)). LOCAL. */
void ovl_errmsg_copy_f(char *buf, const int *len);

#ifdef __cplusplus
}
#endif
#endif
