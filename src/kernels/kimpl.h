/* Internal helpers shared by the kernels. */
#ifndef OVL_KIMPL_H
#define OVL_KIMPL_H

#include "ovl/kernels.h"
#include "ovl/trace.h"

/* A (m x k), B (k x n), C (m x n) on the same grid. LOCAL. */
ovl_err ovl_kernel_check_gemm_shapes(ovl_dmat A, ovl_dmat B, ovl_dmat C);

/* Validate the plan fields every algorithm uses (b, ndup). LOCAL. */
ovl_err ovl_i_kern_check_plan(const ovl_plan *plan, const char *who);

/* C := beta * C on the local block. LOCAL. */
void ovl_i_kern_scale(ovl_dmat C, double beta);

/* C(m x n, ldc) += alpha * A(m x k, lda) * B(k x n, ldb), column-major; when
 * reqs is given, the product runs in column chunks and the requests are
 * progressed between chunks. LOCAL. */
void ovl_i_kern_dgemm(int64_t m, int64_t n, int64_t k, double alpha, const double *a, int64_t lda, const double *b,
                      int64_t ldb, double *c, int64_t ldc, int nreq, ovl_req *reqs);
/* The same product; when progress is given it runs in the same column chunks
 * and progress(ctx) is called between them (for progress that does more than
 * test requests: HSUMMA posts a broadcast once another one has arrived).
 * LOCAL. */
void ovl_i_kern_dgemm_fn(int64_t m, int64_t n, int64_t k, double alpha, const double *a, int64_t lda, const double *b,
                         int64_t ldb, double *c, int64_t ldc, void (*progress)(void *ctx), void *ctx);

/* One panel of SUMMA and HSUMMA (HSUMMA's outer panel): global inner indices
 * [k0, k0 + w), w <= width, inside one block of A's columns (process column
 * jA of q) and one block of B's rows (process row iB of p). LOCAL. */
typedef struct kern_panel {
  int64_t k0, w;
  int jA, iB;
} kern_panel;
static inline kern_panel kern_panel_at(int64_t K, int p, int q, int64_t width, int64_t k0) {
  kern_panel pn;
  pn.k0 = k0;
  pn.jA = ovl_block_owner(K, q, k0);
  pn.iB = ovl_block_owner(K, p, k0);
  int64_t k1 = k0 + width, aend = ovl_block_off(K, q, pn.jA) + ovl_block_len(K, q, pn.jA);
  int64_t bend = ovl_block_off(K, p, pn.iB) + ovl_block_len(K, p, pn.iB);
  if (k1 > aend) k1 = aend;
  if (k1 > bend) k1 = bend;
  pn.w = k1 - k0;
  return pn;
}

/* C(m x n, ldc) = alpha * A(m x k, lda) * op(B) + beta * C, op(B) = B^T when
 * transb, in one call. Under SMPI both products inject 2mnk flops instead
 * (docs/guides/smpi.md). LOCAL. */
void ovl_i_kern_dgemm_tb(int transb, int64_t m, int64_t n, int64_t k, double alpha, const double *a, int64_t lda,
                         const double *b, int64_t ldb, double beta, double *c, int64_t ldc);

/* The same products for elements of esz bytes: 8 (dgemm) or 4 (sgemm, alpha
 * and beta rounded to float). ovl_i_kern_gemm is ovl_i_kern_dgemm, ovl_i_kern_gemm_one one
 * call of ovl_i_kern_dgemm_tb. LOCAL. */
void ovl_i_kern_gemm(size_t esz, int64_t m, int64_t n, int64_t k, double alpha, const void *a, int64_t lda,
                     const void *b, int64_t ldb, void *c, int64_t ldc, int nreq, ovl_req *reqs);
void ovl_i_kern_gemm_one(size_t esz, int transb, int64_t m, int64_t n, int64_t k, double alpha, const void *a,
                         int64_t lda, const void *b, int64_t ldb, double beta, void *c, int64_t ldc);

/* Lower triangle of c (n x n) += a a^T, a n x k, for elements of esz bytes
 * (ssyrk or dsyrk). Under SMPI it injects n^2 k flops (the product's count,
 * as ovl_i_kern_gemm_one's 2mnk for the full square) and computes only with
 * OVL_SMPI_FLOPS=real. LOCAL. */
void ovl_i_kern_syrk_lower(size_t esz, int64_t n, int64_t k, const void *a, int64_t lda, void *c, int64_t ldc);

/* Copy an m x n column-major block. LOCAL. */
void ovl_i_kern_copy(double *dst, int64_t ldd, const double *src, int64_t lds, int64_t m, int64_t n);

/* The local product of one Cannon step: a is mi x kl (ld max(1, mi)), b is
 * kl x nj (ld max(1, kl)), both of the layer's element type; nreq/reqs are
 * the next shifts, to progress between chunks of the product. */
typedef void (*cannon_mult_fn)(void *ctx, const void *a, const void *b, int64_t kl, int nreq, ovl_req *reqs);

/* One layer of Cannon's algorithm (see cannon.c). */
typedef struct cannon_layer {
  int s, i, j;
  int64_t mi, nj, K; /* rows of A/C block i, columns of B/C block j, inner size */
  ovl_lanes shA;     /* varies j, rank j: A moves along it */
  ovl_lanes shB;     /* varies i, rank i: B moves along it */
  const void *a0;    /* A(i, j) and B(i, j) as held before the skew, padded to whole doubles */
  const void *b0;
  double *c; /* mi x nj accumulator, ld = max(1, mi) (default product) */
  int ndup;
  size_t esz;          /* element size: 0 or 8 (double), 4 (float: blocks move as bytes in whole doubles) */
  cannon_mult_fn mult; /* the local product; NULL: c += alpha A B with dgemm */
  void *mctx;
} cannon_layer;

/* Doubles that carry n elements of esz bytes (rounded up). LOCAL. */
static inline int64_t kern_dbl_count(int64_t n, size_t esz) { return (n * (int64_t)esz + 7) / 8; }

/* Run nsteps Cannon steps starting at step t0: c += alpha * sum A(i,l) B(l,j).
 * COLLECTIVE over parent (the ranks running the layers). */
ovl_err ovl_i_kern_cannon_steps(MPI_Comm parent, cannon_layer *L, int t0, int nsteps, double alpha, ovl_kstats *st);

#endif
