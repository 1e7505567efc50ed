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

/* A plan: everything that says how a kernel runs, for both families (the
 * multiplication and SymmSquareCube; purification carries one too). The
 * cost model predicts plans (ovl/model.h), the tune database stores them
 * and the planner (ovl/plan.h) completes one from constraints; the kernels
 * execute them. Prints as one line (ovl_plan_str). Fields an algorithm does
 * not use are ignored. */
typedef struct ovl_plan {
  ovl_algo algo;
  int64_t n;     /* the matrix size it is for (the largest of m, n, k for a multiplication) */
  int P;         /* ranks taking part (nodes x ppn) */
  int p, q;      /* 2D grid (SUMMA, HSUMMA, Cannon); 0: derived from P */
  int s, c;      /* 3D, 2.5D and SymmSquareCube grid s x s x c; 0: derived from P */
  int64_t b;     /* panel width (SUMMA, HSUMMA inner block), > 0 */
  int64_t outer; /* HSUMMA outer block M >= b (0: M = b) */
  int G;         /* HSUMMA group count (a square g x g on a square grid) */
  int groups_i;  /* HSUMMA groups I x J as executed (G = I*J) */
  int groups_j;
  int ndup;          /* lanes (N_DUP) per communication phase, >= 1 */
  int lookahead;     /* SUMMA/HSUMMA: next panel's broadcasts in flight during the current dgemm */
  int arrival;       /* SUMMA, Alg. 5: 1 = each lane carries a self-contained part of a panel and its product
                        starts as it arrives (arrival order); 0 (default) = the product waits for all lanes */
  int ppn;           /* ranks per node sharing a link (1) */
  ovl_coll_cfg coll; /* collective back end and algorithms */
} ovl_plan;

/* The documented defaults of an algorithm for size n on P ranks: b = 256,
 * G = 1 (groups 1 x 1), N_DUP 1, no lookahead, ppn 1, grids derived from P,
 * default collectives. LOCAL. */
ovl_plan ovl_plan_default(ovl_algo algo, int64_t n, int P);
/* The same with panel width b, for a multiplication whose size and ranks
 * follow from its matrices. LOCAL. */
ovl_plan ovl_plan_gemm(ovl_algo algo, int64_t b);

/* Write the plan as one line, e.g. "summa b=256 ndup=1 lookahead=0
 * backend=mpi bcast=auto". LOCAL. */
int ovl_plan_str(const ovl_plan *plan, char *buf, size_t n);

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
 * communicate as SUMMA does with panel b and M. stats may be NULL.
 * COLLECTIVE over the grid's parent. Errors (agreed): OVL_ERR_ARG (plan: b,
 * N_DUP, M < b, groups that do not tile the grid), OVL_ERR_SIZE (shapes). */
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
