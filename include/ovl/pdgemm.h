/* ovl_pdgemm: a ScaLAPACK-compatible entry point for distributed dgemm.
 *
 * ovl_pdgemm takes exactly the arguments of ScaLAPACK's PDGEMM in its Fortran
 * calling convention (every argument a pointer, 1-based IA/JA, 9-integer
 * array descriptors), so a ScaLAPACK program switches by renaming the call:
 *
 *   pdgemm_("N", "T", &m, &n, &k, &alpha, a, &ia, &ja, desca, b, &ib, &jb, descb, &beta, c, &ic, &jc, descc);
 *   ovl_pdgemm("N", "T", &m, &n, &k, &alpha, a, &ia, &ja, desca, b, &ib, &jb, descb, &beta, c, &ic, &jc, descc);
 *
 * It computes sub(C) := alpha op(sub(A)) op(sub(B)) + beta sub(C), with
 * sub(A) = A(IA:IA+rows-1, JA:JA+cols-1) and op(X) = X ('N') or X^T ('T',
 * 'C': conjugation is the identity for real data).
 *
 * How: the process grid is the BLACS grid of DESCC's context (nprow x npcol;
 * the grid's MPI communicator is obtained with Cblacs_get(ctxt, 10, &h) and
 * Cblacs2sys_handle(h)). On the first call with a context, an ovl_grid2d of
 * the same shape over the same ranks is created and cached on that
 * communicator as an MPI attribute; it is destroyed when the BLACS context is
 * (Cblacs_gridexit/blacs_gridexit, Cblacs_exit/blacs_exit). Each call takes
 * one of two routes, the faster by the cost model among those whose
 * workspace fits the cap (ovl_pdgemm_route; OVL_OPTIONS --dropin-route
 * layout|convert forces one):
 *  - in ScaLAPACK's layout: SUMMA on the caller's arrays (panels of op(A)
 *    broadcast along the grid rows, of op(B) along the columns, N_DUP lanes,
 *    the next panel in flight during the current dgemm with lookahead; an
 *    operand whose layout does not match C's, a transposed one for
 *    instance, has each panel gathered whole and picked from); workspace:
 *    the panels only, freed after the call;
 *  - converted: sub(A), sub(B) and (when beta != 0) sub(C) are redistributed
 *    from the block-cyclic layout into ovl_dmat blocks with one
 *    MPI_Alltoallv each (transposition, when op is 'T'/'C', is fused into
 *    that exchange), ovl_summa runs, and C goes back with one MPI_Alltoallv.
 * Only sub(C) is written; the rest of C's local array (including rows past
 * the local rows when LLD is larger) is untouched.
 *
 * The plan. SUMMA runs on the context's nprow x npcol grid; its N_DUP,
 * panel width, lookahead and collectives come from the planner
 * (ovl_plan_resolve, family OVL_FAMILY_GEMM) with the constraints of
 * $OVL_OPTIONS, read with the parser of every entry (ovl_options_runtime:
 * rank 0's value, the command line's names, other commands' options
 * skipped) when a context is first used, e.g.
 *   OVL_OPTIONS="--algo summa --ndup 2 --block 512 --print-plan"
 * tunes an unchanged ScaLAPACK program (through the drop-in
 * libovl_scalapack.so as well). Not given: N_DUP and lookahead are the
 * planner's, the panel width max(256, the block size of op(A) along k),
 * capped by k. --print-plan prints each plan resolved (ovl_plan_describe)
 * on rank 0's stderr: "ovl_pdgemm: plan: summa grid=2x2 b=256 ndup=2 ...".
 * --algo other than summa and --grid are OVL_ERR_UNSUPPORTED (the grid is
 * the BLACS context's). A plan is resolved once per distinct (m, n, k,
 * panel default) and kept with the context (no process-wide plan).
 *
 * The memory of the converted route's ovl_dmat operands and of the exchange
 * buffers is one process-wide workspace that only grows, so repeated calls do not allocate
 * (and fault in) fresh memory each time; ovl_pdgemm_release() frees it. It
 * takes about as much as the operands themselves (A, B and C in ovl's
 * layout) plus the exchange buffers; ovl_pdgemm_pays tells a caller (the
 * drop-in) when that passes a cap or does not pay.
 *
 * Processes that are not part of DESCC's context return OVL_OK at once, as
 * PDGEMM returns at once on processes outside the grid.
 *
 * Not thread-safe: one ovl_pdgemm call at a time per process (the
 * workspace, the defaults and the record of the last call are process-wide).
 *
 * Requires ScaLAPACK/BLACS at build time (OVL_HAVE_SCALAPACK, set by the
 * build when the library is found); otherwise ovl_pdgemm returns
 * OVL_ERR_UNSUPPORTED. Descriptor integers are C int (ScaLAPACK's default
 * 32-bit integer interface).
 */
#ifndef OVL_PDGEMM_H
#define OVL_PDGEMM_H

#include <stdint.h>

#include "ovl/comm.h"
#include "ovl/core.h"
#include "ovl/kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Positions in a ScaLAPACK array descriptor (DTYPE_ = 1: dense matrix). */
enum {
  OVL_DESC_DTYPE = 0,
  OVL_DESC_CTXT = 1,
  OVL_DESC_M = 2,
  OVL_DESC_N = 3,
  OVL_DESC_MB = 4,
  OVL_DESC_NB = 5,
  OVL_DESC_RSRC = 6,
  OVL_DESC_CSRC = 7,
  OVL_DESC_LLD = 8
};

/* sub(C) := alpha op(sub(A)) op(sub(B)) + beta sub(C), PDGEMM's arguments and
 * semantics (see above). op(sub(A)) is m x k, op(sub(B)) is k x n, sub(C) is
 * m x n. A, B and C must share one BLACS context (DESCx[CTXT_]).
 * COLLECTIVE over the processes of DESCC's BLACS context (in the same order
 * as their other ovl_pdgemm calls on that context).
 * Quick returns: m == 0 or n == 0 does nothing; alpha == 0 or k == 0 computes
 * sub(C) := beta sub(C) locally (beta == 0 stores zeros, so NaNs in C do not
 * propagate, as in PDGEMM); beta == 0 never reads C.
 * Errors (agreed: every process of the grid returns the same code and
 * ovl_errmsg() text):
 *  - OVL_ERR_ARG: transa/transb not one of N, T, C (either case); m, n or k
 *    negative; a NULL argument; IA, JA, IB, JB, IC or JC < 1; a descriptor
 *    that is not DTYPE_ 1, has another context than DESCC's, MB_ or NB_ < 1,
 *    RSRC_/CSRC_ outside the grid, M_ or N_ < 0, LLD_ < 1, or (for a
 *    non-empty submatrix) LLD_ < the local rows on a process that owns
 *    columns (PBLAS's checks);
 *  - OVL_ERR_SIZE: a non-empty submatrix that does not fit inside its global
 *    matrix;
 *  - OVL_ERR_UNSUPPORTED: built without ScaLAPACK; RSRC_ or CSRC_ = -1
 *    (PBLAS's replicated operands); a BLACS whose grid communicator is not
 *    ordered row by row;
 *  - OVL_ERR_NOMEM, OVL_ERR_MPI.
 * After data has started moving, failures are fatal (ovl_fatal), as
 * everywhere in ovl. */
ovl_err ovl_pdgemm(const char *transa, const char *transb, const int *m, const int *n, const int *k,
                   const double *alpha, const double *a, const int *ia, const int *ja, const int *desca,
                   const double *b, const int *ib, const int *jb, const int *descb, const double *beta, double *c,
                   const int *ic, const int *jc, const int *descc);

/* Whether this call pays on ovl (the drop-in libovl_scalapack.so asks
 * before each PDGEMM it intercepts). *verdict:
 *  OVL_PDGEMM_RUN     ovl_pdgemm is expected to beat ScaLAPACK's PDGEMM;
 *  OVL_PDGEMM_SMALL   it is not (the cost model: ScaLAPACK's SUMMA with
 *                     PBLAS's 32-wide panels against ovl's two routes,
 *                     SUMMA on ScaLAPACK's layout and SUMMA after the
 *                     conversion block-cyclic -> ovl layout and back;
 *                     mat-vec and small sizes fall here), or
 *                     min(m, n, k) < --dropin-min N when OVL_OPTIONS gives it;
 *  OVL_PDGEMM_MEMORY  the workspace of every route that would pay passes
 *                     the cap per rank (the converted route: copies of the
 *                     three operands and the exchange buffers; the layout
 *                     route: two buffers of each operand's panel, narrowed
 *                     down to 32 wide first): OVL_OPTIONS --dropin-mem
 *                     BYTES, else 0.3 x the bytes per rank of the three
 *                     matrices the descriptors name (so peak memory stays
 *                     within about 1.3x ScaLAPACK's);
 *  OVL_PDGEMM_ROUTE   OVL_OPTIONS --dropin-route scalapack.
 * The verdict follows from arguments every process of the grid shares, rank
 * 0's OVL_OPTIONS and rank 0's measure of the dgemm rate (made once per
 * BLACS context, as the context itself; $OVL_MACHINE's gamma instead when
 * set), so every process gets the same. Arguments ovl_pdgemm would reject,
 * m, n or k <= 0, and processes outside the grid get OVL_PDGEMM_RUN (ovl_pdgemm
 * then reports, or returns at once). COLLECTIVE over the processes of
 * DESCC's context (the first call with a context creates ovl's context, as
 * ovl_pdgemm does). Errors (agreed): those of that creation (OVL_ERR_UNSUPPORTED,
 * OVL_ERR_ARG from $OVL_OPTIONS, OVL_ERR_MPI); OVL_ERR_ARG (verdict NULL). */
enum { OVL_PDGEMM_RUN = 0, OVL_PDGEMM_SMALL = 1, OVL_PDGEMM_MEMORY = 2, OVL_PDGEMM_ROUTE = 3 };
ovl_err ovl_pdgemm_pays(const char *transa, const char *transb, const int *m, const int *n, const int *k,
                        const double *beta, const int *desca, const int *descb, const int *descc, int *verdict);

/* The same verdict with the sub-matrices' offsets (any of ia ... jc may be
 * NULL: 1), which decide whether an operand's panels can travel straight in
 * ScaLAPACK's layout, and the route ovl_pdgemm takes for this call
 * (*route, may be NULL: OVL_ROUTE_LAYOUT, SUMMA on the caller's arrays with
 * only the panels as workspace, or OVL_ROUTE_CONVERT, the operands converted
 * to ovl's layout and C back; the faster by the cost model of those whose
 * workspace is under the cap, the layout when neither is). OVL_OPTIONS
 * --dropin-route forces it: scalapack gives OVL_PDGEMM_ROUTE (forward every
 * call), layout or convert that route (OVL_PDGEMM_MEMORY when its workspace
 * passes the cap).
 * COLLECTIVE and errors as ovl_pdgemm_pays. */
ovl_err ovl_pdgemm_route(const char *transa, const char *transb, const int *m, const int *n, const int *k,
                         const double *beta, const int *ia, const int *ja, const int *desca, const int *ib,
                         const int *jb, const int *descb, const int *ic, const int *jc, const int *descc, int *verdict,
                         int *route);

/* Deprecated (kept for one release; use $OVL_OPTIONS): caller defaults,
 * constraints of every later call's plan under $OVL_OPTIONS' (an option
 * given there wins):
 *   ndup    : lanes (N_DUP) per SUMMA panel broadcast, 1..OVL_LANES_MAX
 *             (before any call: the planner's; get_config then says 1);
 *   backend : collective back end of the broadcasts (default
 *             OVL_BACKEND_MPI);
 *   panel   : SUMMA panel width; 0 = automatic (default): max(256, the block
 *             size of op(A) along k), capped by k.
 * Every process of a grid must use the same values (set them the same way on
 * every rank before calling ovl_pdgemm). LOCAL. Errors: OVL_ERR_ARG (ndup out
 * of range, unknown backend, panel < 0); the defaults are then unchanged. */
ovl_err ovl_pdgemm_config(int ndup, ovl_backend backend, int64_t panel);

/* Current defaults (any pointer may be NULL). Deprecated. LOCAL. */
ovl_err ovl_pdgemm_get_config(int *ndup, ovl_backend *backend, int64_t *panel);

/* Where the time of the last ovl_pdgemm call on this process went (this
 * process's view; take the MAX over ranks for a parallel picture). */
typedef struct ovl_pdgemm_info {
  double t_total;   /* seconds inside ovl_pdgemm */
  double t_setup;   /* grid lookup or creation, validation, workspace */
  double t_in;      /* block-cyclic -> ovl_dmat exchanges (A, B, and C when beta != 0); 0 in ScaLAPACK's layout */
  double t_out;     /* ovl_dmat -> block-cyclic exchange of C; 0 in ScaLAPACK's layout */
  ovl_kstats summa; /* the SUMMA call: t_total, t_comm (broadcasts), t_comp (local dgemm), bytes, steps */
  int64_t b;        /* SUMMA panel width used (0 for quick returns) */
  int p, q;         /* grid shape (0 x 0 outside the grid) */
  char plan[192];   /* the plan that ran, as the planner prints it (ovl_plan_describe; "" for quick returns) */
} ovl_pdgemm_info;

/* Copy the record of this process's last ovl_pdgemm call into *out (zeros
 * before the first call). LOCAL. Errors: OVL_ERR_ARG (out NULL). */
ovl_err ovl_pdgemm_last_info(ovl_pdgemm_info *out);

/* Free this process's workspace (operands and exchange buffers; the cached
 * grids stay: they go with their BLACS context). The next ovl_pdgemm call
 * allocates again. LOCAL (frees memory only; ranks need not agree). */
ovl_err ovl_pdgemm_release(void);

#ifdef __cplusplus
}
#endif
#endif
