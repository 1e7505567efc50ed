/* ovl kernels: distributed matrix multiplication and its verification. */
#ifndef OVL_KERNELS_H
#define OVL_KERNELS_H

#include <stdint.h>
#include <stdio.h>

#include "ovl/algo.h"
#include "ovl/comm.h"
#include "ovl/core.h"
#include "ovl/dmat.h"
#include "ovl/node.h" /* the node probes were declared here before */
#include "ovl/schema.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Per-call phase accounting filled by the kernels (this rank's view). */
typedef struct ovl_kstats {
  double t_total; /* seconds inside the kernel */
  double t_comm;  /* seconds waiting in communication calls */
  double t_comp;  /* seconds in local dgemm */
  int64_t bytes;  /* bytes this rank sent or received */
  int64_t steps;  /* panels / shift steps executed */
  int64_t ncoll;  /* collective operations this rank took part in (a lane-split one counts once) */
} ovl_kstats;

/* The plan (ovl_plan), its defaults (ovl_plan_default, ovl_plan_gemm) and
 * its printer are in the plan schema, ovl/schema.h. */

/* C = alpha * A * B + beta * C with SUMMA on the 2D grid shared by A (m x k),
 * B (k x n) and C (m x n). Any grid shape, any sizes (uneven blocks); panels
 * are clipped at block boundaries of A's columns and B's rows. With
 * lookahead, the next panel's broadcasts are posted before the current
 * panel's dgemm, which runs in column chunks with progress calls between
 * them. With plan->arrival, lane c carries whole columns of A's panel
 * and the matching rows of B's, and their product starts as soon as they
 * have arrived (arrival order; the sum over the panel in that order, equal
 * up to rounding). stats may be NULL. COLLECTIVE over the grid's parent.
 * Errors (agreed): OVL_ERR_ARG (plan), OVL_ERR_SIZE (shapes or grids). */
ovl_err ovl_summa(double alpha, ovl_dmat A, ovl_dmat B, double beta, ovl_dmat C, const ovl_plan *plan,
                  ovl_kstats *stats);

/* Hierarchical SUMMA (Quintin, Hasanov, Lastovetsky): the grid of A, B, C is
 * split into plan->groups_i x plan->groups_j groups. Panels of width
 * plan->outer travel between groups (outer row/column communicators), then
 * sub-panels of width plan->b inside each group; at each level A's and B's
 * broadcasts are posted together, split over N_DUP lanes. With lookahead the
 * next outer panel travels during the current one and step t+1's inner
 * broadcasts during step t's dgemm (two buffer pairs). G = 1 and G = P
 * communicate as SUMMA does with panel b and M. With plan->arrival the
 * inner broadcasts carry whole columns of A's sub-panel and the matching
 * rows of B's per lane, multiplied in the order the lanes complete (equal up
 * to rounding); outer panels stay in order (a group's inner broadcasts must
 * be posted in one order by all its members). stats may be NULL.
 * COLLECTIVE over the grid's parent. Errors (agreed): OVL_ERR_ARG (plan: b,
 * N_DUP, M < b, groups that do not tile the grid, arrival order with G = P
 * on more than one process: no inner broadcasts), OVL_ERR_SIZE (shapes). */
ovl_err ovl_hsumma(double alpha, ovl_dmat A, ovl_dmat B, double beta, ovl_dmat C, const ovl_plan *plan,
                   ovl_kstats *stats);

/* Cannon's algorithm on a square s x s grid: skew, then s shift-multiply
 * steps, each step's shifts in flight during its dgemm. COLLECTIVE over the
 * grid's parent. Errors: OVL_ERR_GRID (grid not square). */
ovl_err ovl_cannon(double alpha, ovl_dmat A, ovl_dmat B, double beta, ovl_dmat C, const ovl_plan *plan,
                   ovl_kstats *stats);

/* 3D multiplication on an s x s x s grid g (Huang-Chow notation): A, B, C are
 * matrices on ovl_grid3d_plane(g) of every rank; the operands and the result
 * are those of plane k = 0, and on planes k > 0 the same handles are
 * workspace (overwritten). P(i,j,0) broadcasts A_ij along grd_comm; B_jk
 * goes from P(j,k,0) to P(j,j,k) and is broadcast along row_comm P(:,j,k);
 * P(i,j,k) computes A_ij B_jk; the sums over j reduce along col_comm to
 * P(i,k,k), which sends C_ik to P(i,k,0). Every phase is split over
 * plan->ndup lanes; reduce(c) -> send(c) is pipelined in arrival order.
 * COLLECTIVE over the 3D grid's parent. */
ovl_err ovl_mm3d(ovl_grid3d g, double alpha, ovl_dmat A, ovl_dmat B, double beta, ovl_dmat C, const ovl_plan *plan,
                 ovl_kstats *stats);

/* 2.5D multiplication (Solomonik & Demmel) on an s x s x c grid (c | s):
 * A and B are broadcast from plane 0 along grd_comm, each layer k performs
 * s/c Cannon steps starting at step k*s/c, and the partial products are
 * reduced along grd_comm to plane 0. Operands as for ovl_mm3d. Each
 * collective is split over plan->ndup lanes. COLLECTIVE over the 3D grid's
 * parent. Errors: OVL_ERR_GRID (c does not divide s). */
ovl_err ovl_mm25d(ovl_grid3d g, double alpha, ovl_dmat A, ovl_dmat B, double beta, ovl_dmat C, const ovl_plan *plan,
                  ovl_kstats *stats);

/* C = alpha * op(A) * op(B) + beta * C with the algorithm of plan->algo.
 * transa/transb: 'N' or 'T' (op(X) = X or X^T; a transposed operand is
 * transposed into a temporary on the same grid first). For OVL_ALGO_3D and
 * OVL_ALGO_25D, g3 is the 3D grid and the matrices live on its planes (see
 * ovl_mm3d); otherwise g3 is ignored (may be NULL). COLLECTIVE over the
 * grid's parent (the 3D grid's parent for 3D/2.5D). */
ovl_err ovl_gemm(char transa, char transb, double alpha, ovl_dmat A, ovl_dmat B, double beta, ovl_dmat C,
                 const ovl_plan *plan, ovl_grid3d g3, ovl_kstats *stats);

/* Memory query: the bytes the most loaded rank holds for a multiplication
 * C (m x n) = op(A) (m x k) op(B) (k x n) with `plan` on a grid of p x q
 * processes (3D/2.5D: p = q = s and `repl` = c): its blocks of A, B and C,
 * the temporaries of transposed operands, and the algorithm's workspace
 * (panels, shift buffers, partial products). Scratch inside the MPI library
 * is not counted. Returns -1 for invalid arguments or a footprint of 2^62
 * bytes or more (no overflow for any int64 sizes). LOCAL; pure function. */
int64_t ovl_mm_memory(const ovl_plan *plan, char transa, char transb, int64_t m, int64_t n, int64_t k, int p, int q,
                      int repl);

/* Parallel matrix-vector product y = A x of the Huang-Chow paper (Section
 * III-A) on a square p x p grid. x and y are distributed "as x": every rank of
 * grid column j holds block j (ovl_block_len(n, p, j) elements, the columns
 * of its A block). Each rank computes A_ij x_j, the rows reduce to the
 * diagonal P(i,i), which broadcasts y_i down grid column i.
 *  OVL_MATVEC_ALG1: blocking reduce, then blocking broadcast (Algorithm 1);
 *  OVL_MATVEC_ALG2: the vector is split into ndup parts on ndup lanes and the
 *    reduce(c) -> bcast(c) chains run through the pipeline engine, each
 *    broadcast posted as soon as its part's reduction arrives (Algorithm 2).
 * events (ndup*2 entries, may be NULL) receives the pipeline's timeline.
 * COLLECTIVE over the grid's parent. Errors (agreed): OVL_ERR_GRID (grid not
 * square), OVL_ERR_SIZE (A not square), OVL_ERR_ARG (ndup, alg). */
typedef enum { OVL_MATVEC_ALG1 = 1, OVL_MATVEC_ALG2 = 2 } ovl_matvec_alg;
ovl_err ovl_matvec(ovl_dmat A, const double *x, double *y, ovl_matvec_alg alg, int ndup, const ovl_coll_cfg *cfg,
                   ovl_pipe_event *events);

/* Verification of C = alpha A B + beta C0.
 *  OVL_VERIFY_EXACT: gather all operands to rank 0 and compare with one
 *    serial dgemm; result is max |C - C_ref| / (|alpha| ||A|| ||B|| + ...)
 *    computed entry-wise (for small sizes).
 *  OVL_VERIFY_PROBABILISTIC: compare C x with alpha A (B x) + beta C0 x for
 *    `trials` random vectors x (cheap, any size).
 * C0 may be NULL when beta == 0. `relerr` receives the relative error on
 * every rank; OVL_ERR_NUMERIC is returned when it exceeds tol.
 * COLLECTIVE over the grid's parent. */
typedef enum { OVL_VERIFY_AUTO, OVL_VERIFY_EXACT, OVL_VERIFY_PROBABILISTIC } ovl_verify_mode;
ovl_err ovl_verify_gemm(double alpha, ovl_dmat A, ovl_dmat B, double beta, ovl_dmat C0, ovl_dmat C,
                        ovl_verify_mode mode, double tol, double *relerr);

#ifdef __cplusplus
}
#endif
#endif
