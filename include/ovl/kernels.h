/* ovl kernels: distributed matrix multiplication and its verification. */
#ifndef OVL_KERNELS_H
#define OVL_KERNELS_H

#include <stdint.h>
#include <stdio.h>

#include "ovl/comm.h"
#include "ovl/core.h"
#include "ovl/dist.h"

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
} ovl_kstats;

/* SUMMA plan: what the executor will do. Prints as one line. */
typedef struct ovl_summa_plan {
  int64_t b;         /* panel width (columns of A / rows of B per step), > 0 */
  int ndup;          /* lanes per panel broadcast (N_DUP), >= 1 */
  ovl_coll_cfg coll; /* collective back end and algorithms */
} ovl_summa_plan;

/* Plan with panel width b, N_DUP = 1 and the default collectives. LOCAL. */
ovl_summa_plan ovl_summa_plan_default(int64_t b);

/* Write the plan as one line, e.g. "summa b=256 ndup=1 backend=mpi
 * bcast=auto". LOCAL. */
int ovl_summa_plan_str(const ovl_summa_plan *plan, char *buf, size_t n);

/* C = alpha * A * B + beta * C with blocking SUMMA on the 2D grid shared by
 * A (m x k), B (k x n) and C (m x n). Any grid shape, any sizes (uneven
 * blocks); panels are clipped at block boundaries of A's columns and B's
 * rows. stats may be NULL. COLLECTIVE over the grid's parent.
 * Errors (agreed): OVL_ERR_ARG (plan), OVL_ERR_SIZE (shapes or grids). */
ovl_err ovl_summa(double alpha, ovl_dmat A, ovl_dmat B, double beta, ovl_dmat C, const ovl_summa_plan *plan,
                  ovl_kstats *stats);

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

/* Local dgemm rate in GFLOP/s on this rank for an n x n x n product
 * (best of `reps`). LOCAL. */
double ovl_local_dgemm_gflops(int n, int reps);

/* Double-precision GFLOP/s per core that the CPU's vector unit promises:
 * flops/cycle (32 with AVX-512 FMA, 16 with AVX2 FMA, 4 otherwise, from
 * /proc/cpuinfo flags) times the reported clock; 0 when unknown. LOCAL. */
double ovl_cpu_peak_gflops(void);

/* Measure the local dgemm rate and, when it is below 1/3 of
 * ovl_cpu_peak_gflops(), print a warning on rank 0 that names the likely
 * cause (a generic OpenBLAS kernel; OPENBLAS_CORETYPE). Returns the
 * measured rate. COLLECTIVE over comm (the rate is the minimum over ranks).*/
double ovl_check_local_blas(MPI_Comm comm, int quiet);

#ifdef __cplusplus
}
#endif
#endif
