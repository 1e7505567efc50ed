/* Density-matrix purification on top of SymmSquareCube.
 *
 * Given a symmetric Fock (Kohn-Sham) matrix F in an orthonormal basis, the
 * density matrix D is the spectral projector onto the n_occ lowest
 * eigenvectors (occupation-1 convention: D^2 = D, tr D = n_occ). Purification
 * computes it with matrix products only:
 *  - OVL_PURIFY_CANONICAL (Palser & Manolopoulos 1998): D0 = lambda/n (mu I -
 *    F) + n_occ/n I with mu = tr(F)/n and lambda from Gershgorin bounds; then
 *    c = tr(D^2 - D^3) / tr(D - D^2) and D <- ((1+c) D^2 - D^3)/c when
 *    c >= 1/2, else ((1-2c) D + (1+c) D^2 - D^3)/(1-c). Trace-conserving.
 *  - OVL_PURIFY_MCWEENY: for a given chemical potential mu between the HOMO
 *    and the LUMO: D0 = (I + lambda (mu I - F))/2, D <- 3 D^2 - 2 D^3.
 *  - OVL_PURIFY_SP2 (Niklasson 2002, trace-correcting second-order spectral
 *    projection; "trs2" is the same method): D0 = (Hmax I - F)/(Hmax - Hmin);
 *    D <- D^2 or 2D - D^2, whichever trace is closer to n_occ. One symmetric
 *    square per iteration (ovl/sq.h: n^3 flops instead of SymmSquareCube's 4 n^3).
 *  - OVL_PURIFY_TRS4 (Niklasson, Tymczak & Challacombe 2003, trace-resetting
 *    fourth order): D <- F(D) + gamma G(D), F(x) = x^2 (4x - 3x^2), G(x) =
 *    x^2 (1 - x)^2, gamma = (n_occ - tr F(D)) / tr G(D) when it lies in [0, 6],
 *    else D^2 (gamma < 0) or 2D - D^2 (gamma > 6). Each iteration takes D^2
 *    and one more symmetric square (D^2 + a D)^2 (two more near gamma = 3,
 *    where that form cancels: D^4 and (D + D^2)^2 give D^3); tr(D^3) = <D, D^2>
 *    and tr(D^4) = ||D^2||_F^2 come free.
 *  - OVL_PURIFY_SP2ACC (Rubensson 2011, SP2 accelerated by scale-and-fold;
 *    Ergo's purification_sp2acc): SP2's two branches with a scaled argument,
 *    D <- (1 - a + a D)^2 or 2 b D - b^2 D^2 (one symmetric square each), where
 *    a = 2 / (2 - x), b = 2 / (2 - y) fold the interval between 0 and an
 *    estimate x of the LUMO's image (between the estimate y of the HOMO's
 *    image and 1) onto itself, so that its ends meet, instead of only
 *    squeezing it. x and y start from the caller's HOMO and LUMO estimates
 *    (opts.homo, opts.lumo, mapped like F's spectrum onto [0, 1]) and follow
 *    each step's polynomial; the branch squeezes the side whose estimate is
 *    farther from its end (x >= y: the first).
 *    The fold keeps the eigenvalues' order, so the result is exact, whenever
 *    the estimated gap [homo, lumo] overlaps the true one (lumo above the
 *    true HOMO and homo below the true LUMO): estimates off by 2x cost a
 *    few steps, never the answer. Once x and y are below 0.01 every step
 *    checks the traces: tr D - n_occ outside [-n_occ y, (n - n_occ) x]
 *    (the estimates did not bound the gap) turns the steps into SP2's with
 *    its trace rule; then |tr D - n_occ| > 2 tr(D - D^2) (an eigenvalue on
 *    the wrong side of 1/2: an estimated gap beside the true one folded it
 *    there) starts again from D0 with SP2's steps (result.fallback; the
 *    products are counted): wrong estimates cost products, not the answer,
 *    in every case tried (a check, not a proof). Below 1e-8 the fold is below rounding and the steps and the
 *    stopping rule are SP2's. Without estimates (NAN) the method is SP2.
 *    A restart continues without the acceleration.
 * Stopping. Canonical purification stops when ||D^2 - D||_F <= tol (default
 * 1e-11), or when the error stops decreasing once below sqrt(tol) (three
 * iterations without halving it: the rounding floor). SP2, TRS4 and McWeeny
 * stop without a tolerance (Kruchinina, Rudberg & Rubensson 2016): in exact
 * arithmetic their error e = ||D^2 - D||_F obeys e_new <= K e_old^2 near
 * convergence (over the two iterations after a change of branch for SP2,
 * K = 4; K = 4 for McWeeny, 6 for TRS4), so the first iteration whose error
 * breaks that bound (with e below 1e-6, the asymptotic regime) is dominated by
 * rounding and ends the run; a tol > 0 given by the caller stops it earlier.
 * result.stop_reason names the criterion. A run whose D is then idempotent
 * but whose trace is not n_occ (|tr D - n_occ| > max(1e-6, sqrt(tol)); all
 * methods but McWeeny) fails: it is not the density asked for. A run that
 * reaches max_iter fails with a message that says so first ("the iteration
 * limit was reached (--max-iter N)"), then whether the error was still
 * falling or too few iterations ran to tell (raise the limit), or it had not
 * fallen by 10% over the last 10 iterations (a small HOMO-LUMO gap, or an
 * input that is not what it should be).
 *
 * Checkpoints record what defines the problem: a checksum of F, n, n_occ,
 * the method, mu and the precision; a restart refuses a state that differs
 * in any of them or lacks one. A restart continues in float64.
 * Precision (SP2, SP2-ACC and TRS4). OVL_PURIFY_PREC_MIXED iterates with float32
 * products and messages (half the bytes on the wire, twice the flop rate)
 * until the same criterion finds the float32 rounding floor (e below 1e-2),
 * then continues in float64 to the float64 floor. Idempotency and the trace
 * then meet float64 accuracy, but the occupied subspace keeps the float32
 * iterations' rounding: ||D - D_exact||_F / ||D_exact||_F is about 1e-6, not
 * 1e-12 (docs/guides/purification.md explains why no function of the iterate alone
 * can remove it). OVL_PURIFY_PREC_DOUBLE (the default) is float64 throughout.
 *
 * F and D live on plane k = 0 of a 3D grid (see ovl/ssc.h); every rank of the
 * grid takes part.
 */
#ifndef OVL_PURIFY_H
#define OVL_PURIFY_H

#include <signal.h>
#include <stdio.h>

#include "ovl/bsmat.h"
#include "ovl/opts.h"
#include "ovl/sq.h"
#include "ovl/ssc.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum ovl_purify_method {
  OVL_PURIFY_CANONICAL = 0,
  OVL_PURIFY_MCWEENY,
  OVL_PURIFY_SP2,
  OVL_PURIFY_TRS4,
  OVL_PURIFY_SP2ACC,
  OVL_PURIFY_TRS2 = OVL_PURIFY_SP2 /* the same method under its other name */
} ovl_purify_method;

typedef enum ovl_purify_prec { OVL_PURIFY_PREC_DOUBLE = 0, OVL_PURIFY_PREC_MIXED = 1 } ovl_purify_prec;

typedef struct ovl_purify_opts {
  ovl_purify_method method;
  int64_t nocc;         /* occupied orbitals (canonical, TRS2); 0 <= nocc <= n */
  double mu;            /* chemical potential (McWeeny) */
  int max_iter;         /* iteration cap (default 200) */
  double tol;           /* tolerance on ||D^2 - D||_F: 0 (the method's default, see above) or in
                           [OVL_PURIFY_TOL_MIN, OVL_PURIFY_TOL_MAX] */
  ovl_purify_prec prec; /* SP2, SP2-ACC and TRS4: float64 throughout, or float32 first (default: double) */
  /* The kernel's plan: algo (the SymmSquareCube algorithm of canonical and
   * McWeeny, default Alg. 5; SP2 and TRS4 use the symmetric square), ndup
   * (default 4) and coll; the grid is the one passed to ovl_purify. */
  ovl_plan plan;
  int checkpoint_every;   /* write D every K iterations (0: never) */
  const char *checkpoint; /* checkpoint path prefix (PREFIX.state.json + PREFIX.itK.raw) */
  int restart;            /* start from the checkpoint instead of D0 */
  int verbose;            /* one line per iteration on rank 0 */
  /* Stop request, e.g. set by a signal handler (NULL: none). Checked at every
   * iteration boundary: the ranks agree (MPI_Allreduce, MAX) on the largest
   * value any of them sees; when it is non-zero, D is checkpointed (when
   * checkpoint is set) and ovl_purify returns OVL_OK with result.stopped set
   * to that value. D is then an unconverged iterate. */
  const volatile sig_atomic_t *stop;
  /* Set to 1 when the iterations start and to 2 when they are over (NULL:
   * not reported): before the start nothing has been written, so a caller
   * may end the process at once on a signal; during the iterations, stop
   * above ends the run cleanly at the next boundary; after them only the
   * outputs remain to be written, which a caller may abandon at once (the
   * writers' temporaries are tracked for that: ovl_tmp_exit). */
  volatile sig_atomic_t *started;
  /* SP2-ACC: estimates of F's HOMO and LUMO eigenvalues (NAN, the default:
   * none; both finite with homo < lumo, or both NAN). Estimates, not bounds:
   * the estimated gap must overlap the true one (see above); the previous
   * SCF cycle's values, or ovl_pdpurify's info.homo and info.lumo, serve.
   * The other methods ignore them. */
  double homo, lumo;
  /* The filtering threshold of the block-sparse purification
   * (ovl_purify_sparse, `ovl purify --sparse EPS`): blocks and block products
   * below it are dropped (0: only exact zeros). NAN, the default: not
   * block-sparse. The dense ovl_purify refuses a threshold > 0. */
  double sparse;
  /* The block-sparse job's block size (`--sparse-block B`, ovl_pdpurify with
   * a threshold): consecutive blocks of the file (atoms) merged up to B rows
   * (ovl_bsmat_regroup), or the dense F cut into blocks of B; 1: the file's
   * blocks as they are. Default OVL_PURIFY_SPARSE_BLOCK (docs/guides/sparse.md,
   * "Block size"). ovl_purify_sparse itself takes its matrices' blocks. */
  int sparse_block;
} ovl_purify_opts;

/* The default of ovl_purify_opts.sparse_block. */
#define OVL_PURIFY_SPARSE_BLOCK 32

/* The accepted range of tol: below the minimum the rounding floor of double
 * precision is reached long before (the iteration stops at the floor
 * anyway), above the maximum D is not a density matrix in any useful sense. */
#define OVL_PURIFY_TOL_MIN 1e-14
#define OVL_PURIFY_TOL_MAX 1e-2

/* Defaults as documented above. LOCAL. */
ovl_purify_opts ovl_purify_opts_default(void);
/* Names: "canonical", "mcweeny", "sp2" (also parsed: "trs2"), "trs4", "sp2acc";
 * "double", "mixed". LOCAL. */
const char *ovl_purify_method_name(ovl_purify_method m);
ovl_err ovl_purify_method_parse(const char *name, ovl_purify_method *out);
const char *ovl_purify_prec_name(ovl_purify_prec p);
ovl_err ovl_purify_prec_parse(const char *name, ovl_purify_prec *out);
/* 1 when the method iterates on the symmetric square (ovl/sq.h: SP2, SP2-ACC, TRS4),
 * 0 when on SymmSquareCube (canonical, McWeeny). LOCAL. */
int ovl_purify_uses_sq(ovl_purify_method m);
/* The plan family of a method's kernel: OVL_FAMILY_SQ (sp2, sp2acc, trs4) or
 * OVL_FAMILY_SSC (canonical, mcweeny). LOCAL. */
ovl_family ovl_purify_family(ovl_purify_method m);
/* ovl_purify_family, and *plan (may be NULL) made a constraint of that
 * family: an algorithm of the other family (the options' default alg5 under
 * sp2, say) becomes the family's own (sq) or open (auto); the rest (N_DUP,
 * the grid, the collectives) stays. Every entry then resolves the plan of
 * the returned family with one ovl_plan_resolve. LOCAL. */
ovl_family ovl_purify_plan_family(ovl_purify_method m, ovl_plan *plan);

typedef struct ovl_purify_result {
  int iterations;          /* iterations done (including those before a restart) */
  double idem_err;         /* ||D^2 - D||_F at the end */
  double trace_err;        /* |tr D - n_occ|, or |tr D - round(tr D)| (McWeeny: n_occ is not used) */
  double energy;           /* tr(D F) */
  double t_total;          /* seconds */
  double t_ssc;            /* seconds in the kernel (SymmSquareCube or the symmetric square) */
  double ssc_gflops;       /* flops the kernel needs (4 n^3 per SymmSquareCube, n^3 per symmetric square) / t_ssc */
  double flops;            /* flops the kernel calls needed */
  int products;            /* kernel calls (SymmSquareCube runs or symmetric squares) */
  int iter_single;         /* iterations done in float32 (mixed precision) */
  const char *stop_reason; /* "tolerance", "rounding floor" (stall or the quadratic bound broken), "signal",
                              "iteration cap" (a static string) */
  int stopped;             /* the agreed *opts.stop that ended the run early, else 0 */
  int checkpoint;          /* iteration of the last checkpoint written or read, else -1 */
  double t_symm;           /* seconds in making D exactly symmetric, (D + D^T) / 2 (ovl_dmat_symmetrize): D0, and
                              after every step of canonical and mcweeny, whose D^2 and D^3 are rounded apart */
  int accelerated;         /* SP2-ACC: the steps that used a scaled argument (a or b > 1) */
  int fallback;            /* SP2-ACC: the iteration after which the estimates were found to miss the gap and the
                              run started again from D0 with SP2's steps (its products counted), else 0 */
} ovl_purify_result;

/* Compute D from F. F is checked (finite, symmetric); D receives the
 * density matrix (plane 0). COLLECTIVE over the 3D grid's parent. Errors
 * (agreed): OVL_ERR_ARG (options; a checkpoint of another problem),
 * OVL_ERR_NUMERIC (F not symmetric/finite; no convergence within max_iter;
 * a converged D of the wrong trace), OVL_ERR_IO (checkpoints),
 * OVL_ERR_FORMAT (a checkpoint state that is malformed or lacks a field),
 * OVL_ERR_GRID. */
ovl_err ovl_purify(ovl_grid3d g, ovl_dmat F, ovl_dmat D, const ovl_purify_opts *opts, ovl_purify_result *res);

/* Compute D from a block-sparse F (ovl/bsmat.h; an orthonormal basis) by
 * SP2, SP2-ACC or TRS4, every product (ovl_bsmat_multiply) and every step's sum
 * filtered by the threshold eps = opts.sparse >= 0 (0 or NAN: nothing
 * dropped but exact zeros; the result is the dense iteration's to rounding). D0 comes from
 * F's Gershgorin bounds. opts: method (sp2, sp2acc with homo/lumo as
 * above, or trs4: two products a step, D^2 then D^2 M), nocc, max_iter, tol, verbose, stop, started, and plan.ndup (the
 * product's lanes, 0: its default), prec (mixed: float32 block products
 * until float32's floor, docs/guides/sparse.md); no checkpoints. Stopping:
 * the rounding-floor tests of the dense iteration, applied below the error
 * floor the filtering leaves (4 eps sqrt(blocks of D^2), between 1e-6 and
 * 1e-2: stop_reason "filtering floor"), and the trace test accepts
 * |tr D - n_occ| up to that floor. D must be made like F
 * (ovl_bsmat_create_like); F must be symmetric (not checked here: the
 * symmetric Matrix Market reader makes it so). The result's flops and
 * ssc_gflops are 0 (block products are counted in products' statistics, not
 * as flops); t_ssc is the time in the products. COLLECTIVE over F's grid's
 * parent. Errors (agreed): OVL_ERR_ARG, OVL_ERR_UNSUPPORTED (another method,
 * checkpoints), OVL_ERR_NUMERIC (F not finite; no
 * convergence; a converged D of the wrong trace), OVL_ERR_NOMEM. */
ovl_err ovl_purify_sparse(ovl_bsmat F, ovl_bsmat D, const ovl_purify_opts *opts, ovl_purify_result *res);

/* ovl_purify_sparse on an s x s x c grid g: F and D created on
 * ovl_grid3d_plane(g) on every rank with the same blocks and seed, F given
 * and D returned on plane 0 (the matrices of planes k > 0 are workspace, as
 * for ovl_bsmat_multiply3); the same iteration (one code path with
 * ovl_purify_sparse), its products by ovl_bsmat_multiply3 with
 * plan.ndup's lanes. The bounds, traces, norms and block counts that
 * decide each step are computed on plane 0 and broadcast along grd_comm, so
 * every rank takes the same decisions; the result (on every rank, the
 * grid's idle ones too) is plane 0's. Plane 0's D equals ovl_purify_sparse's on the same F within
 * rounding (the products' sums run in another order). c = 1 is
 * ovl_purify_sparse on the plane. COLLECTIVE over g's parent. Errors
 * (agreed over it): those of ovl_purify_sparse, and OVL_ERR_ARG for F or D
 * not on g's plane, or planes with matrices of other sizes or blocks. */
ovl_err ovl_purify_sparse3(ovl_grid3d g, ovl_bsmat F, ovl_bsmat D, const ovl_purify_opts *opts, ovl_purify_result *res);

/* The plan of the block-sparse purification's product (family bsmul,
 * ovl_plan_resolve_bsmul) for F on a 2D grid of every rank of its parent:
 * the cost model on the shape of F F (ovl_bsmat_shape: the first square's)
 * chooses bsumma on F's grid or bs2.5d with its s x s x c grid, and N_DUP.
 * Constraints from given (may be NULL): ndup > 0 kept; c = 1 bsumma, c > 1
 * bs2.5d on c layers. machine: the cost model's machine file (NULL:
 * $OVL_MACHINE, else the built-in). why (may be NULL) receives the reason.
 * Every entry of the block-sparse route asks here (`ovl purify --sparse`,
 * ovl_pdpurify, ovl_dm). COLLECTIVE over F's grid's parent. Errors
 * (agreed): those of ovl_bsmat_shape and ovl_plan_resolve_bsmul. */
ovl_err ovl_purify_sparse_plan(ovl_bsmat F, const ovl_plan *given, const char *machine, ovl_plan *plan, char *why,
                               size_t nwhy);
/* D from F on the plan ovl_purify_sparse_plan made: bsumma, ovl_purify_sparse
 * with the plan's N_DUP; bs2.5d, F moved onto plane 0 of the plan's s x s x c
 * grid (ovl_bsmat_to_plane), ovl_purify_sparse3, D moved back (F's grid,
 * blocks and seed; D created like F). opts->plan is not read. COLLECTIVE over
 * F's grid's parent. Errors (agreed): OVL_ERR_ARG (a plan of another family),
 * those of the steps. */
ovl_err ovl_purify_sparse_planned(const ovl_plan *plan, ovl_bsmat F, ovl_bsmat D, const ovl_purify_opts *opts,
                                  ovl_purify_result *res);

/* The eigensolver's density for comparison: F and D are gathered to rank 0
 * of their plane, LAPACK dsyevd gives F's eigenvectors C, and D_eig = C_occ
 * C_occ^T (the n_occ lowest; McWeeny: those below mu). Memory on rank 0:
 * 2 n^2 doubles plus dsyevd's workspace, so meant for n up to a few
 * thousand. COLLECTIVE over the plane's parent (the ranks of plane k = 0). */
typedef struct ovl_purify_ref {
  double relerr;    /* ||D - D_eig||_F / ||D_eig||_F */
  double trace_err; /* |tr D - k|, k the occupied count of D_eig */
  double energy;    /* tr(D_eig F), the sum of the occupied eigenvalues */
  double t_eig;     /* seconds in dsyevd on rank 0 */
} ovl_purify_ref;
ovl_err ovl_purify_reference(ovl_dmat F, ovl_dmat D, const ovl_purify_opts *opts, ovl_purify_ref *out);

/* The purification options of the entries (ovl_purify_opts_table, the
 * option strings ovl_options_runtime), the Fock-file job of `ovl purify`
 * (ovl_purify_job_run) are the entry room's: ovl/entry.h (ovl/ovl.h
 * includes it). */

/* Memory query before allocating: the most bytes any rank of an s x s x c
 * grid holds during ovl_purify for an n x n F with these options (alg,
 * checkpoint_every, restart), counting its blocks of F and D (which the
 * caller allocates), D^2, D^3, SymmSquareCube's workspace (ovl_ssc_memory)
 * and the transients: the transpose that checks F's symmetry (3 blocks while
 * F and D exist), a checkpoint's write buffer (1), a restart's read (2).
 * The peak is over phases, not their sum. Scratch inside the MPI library is
 * not counted. -1 for invalid arguments or 2^62 bytes or more. LOCAL; pure
 * function. */
int64_t ovl_purify_memory(int64_t n, int s, int c, const ovl_purify_opts *opts);

#ifdef __cplusplus
}
#endif
#endif
