/* Plans and small helpers shared by the multiplication kernels. */
#include <cblas.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "kernels/kimpl.h"

ovl_err ovl_kernel_check_gemm_shapes(ovl_dmat A, ovl_dmat B, ovl_dmat C) {
  OVL_TRY(ovl_check_handle(A, "ovl_kernel_check_gemm_shapes", "A"));
  OVL_TRY(ovl_check_handle(B, "ovl_kernel_check_gemm_shapes", "B"));
  OVL_TRY(ovl_check_handle(C, "ovl_kernel_check_gemm_shapes", "C"));
  if (ovl_dmat_grid(A) != ovl_dmat_grid(B) || ovl_dmat_grid(A) != ovl_dmat_grid(C))
    return ovl_err_set(OVL_ERR_SIZE, "A, B and C must be distributed on the same grid");
  if (ovl_dmat_cols(A) != ovl_dmat_rows(B) || ovl_dmat_rows(A) != ovl_dmat_rows(C) ||
      ovl_dmat_cols(B) != ovl_dmat_cols(C))
    return ovl_err_set(OVL_ERR_SIZE,
                       "shapes do not conform: A is %" PRId64 " x %" PRId64 ", B is %" PRId64 " x %" PRId64
                       ", C is %" PRId64 " x %" PRId64,
                       ovl_dmat_rows(A), ovl_dmat_cols(A), ovl_dmat_rows(B), ovl_dmat_cols(B), ovl_dmat_rows(C),
                       ovl_dmat_cols(C));
  return OVL_OK;
}

ovl_err ovl_i_kern_check_plan(const ovl_plan *plan, const char *who) {
  OVL_CHECK(plan != NULL, OVL_ERR_ARG, "%s: no plan given", who);
  OVL_TRY(ovl_knob_check(OVL_KNOB_BLOCK, plan->b, who)); /* the kernels size their panels by b, used or not */
  OVL_TRY(ovl_knob_check(OVL_KNOB_NDUP, plan->ndup, who));
  return OVL_OK;
}

void ovl_i_kern_scale(ovl_dmat C, double beta) {
  if (beta == 1.0) return;
  int64_t lm = ovl_dmat_local_rows(C), ln = ovl_dmat_local_cols(C), ld = ovl_dmat_ld(C);
  double *data = ovl_dmat_data(C);
  for (int64_t c = 0; c < ln; c++) {
    double *col = data + c * ld;
    if (beta == 0.0) memset(col, 0, sizeof(double) * (size_t)lm);
    else
      for (int64_t r = 0; r < lm; r++) col[r] *= beta;
  }
}

void ovl_i_kern_copy(double *dst, int64_t ldd, const double *src, int64_t lds, int64_t m, int64_t n) {
  for (int64_t c = 0; c < n; c++) memcpy(dst + c * ldd, src + c * lds, sizeof(double) * (size_t)m);
}

/* Column chunk of the progress-interleaved product: wide enough that dgemm
 * stays efficient, narrow enough that requests are tested often. */
#define KERN_CHUNK 256

#ifdef OVL_SMPI
/* SimGrid SMPI (docs/guides/smpi.md): a local product costs 2mnk flops at the
 * simulated host's speed, so simulated time does not depend on the machine
 * running the simulation. By default (OVL_SMPI_FLOPS=real) it is computed as
 * well; OVL_SMPI_FLOPS=skip only injects the flops (results meaningless). */
#include <stdlib.h>
static int kern_smpi_real(void) {
  static int real = -1;
  if (real < 0) {
    const char *e = getenv("OVL_SMPI_FLOPS");
    real = e == NULL || strcmp(e, "skip") != 0;
  }
  return real;
}
#endif

void ovl_i_kern_gemm_one(size_t esz, int transb, int64_t m, int64_t n, int64_t k, double alpha, const void *a,
                         int64_t lda, const void *b, int64_t ldb, double beta, void *c, int64_t ldc) {
  if (m <= 0 || n <= 0 || k <= 0) return;
#ifdef OVL_SMPI
  smpi_execute_flops(2.0 * (double)m * (double)n * (double)k);
  if (!kern_smpi_real()) return;
#endif
  enum CBLAS_TRANSPOSE tb = transb ? CblasTrans : CblasNoTrans;
  if (esz == sizeof(float))
    cblas_sgemm(CblasColMajor, CblasNoTrans, tb, (int)m, (int)n, (int)k, (float)alpha, a, (int)lda, b, (int)ldb,
                (float)beta, c, (int)ldc);
  else
    cblas_dgemm(CblasColMajor, CblasNoTrans, tb, (int)m, (int)n, (int)k, alpha, a, (int)lda, b, (int)ldb, beta, c,
                (int)ldc);
}

void ovl_i_kern_syrk_lower(size_t esz, int64_t n, int64_t k, const void *a, int64_t lda, void *c, int64_t ldc) {
  if (n <= 0 || k <= 0) return;
#ifdef OVL_SMPI
  smpi_execute_flops((double)n * (double)n * (double)k);
  if (!kern_smpi_real()) return;
#endif
  if (esz == sizeof(float))
    cblas_ssyrk(CblasColMajor, CblasLower, CblasNoTrans, (int)n, (int)k, 1.0f, a, (int)lda, 1.0f, c, (int)ldc);
  else cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, (int)n, (int)k, 1.0, a, (int)lda, 1.0, c, (int)ldc);
}

void ovl_i_kern_gemm(size_t esz, int64_t m, int64_t n, int64_t k, double alpha, const void *a, int64_t lda,
                     const void *b, int64_t ldb, void *c, int64_t ldc, int nreq, ovl_req *reqs) {
  if (m <= 0 || n <= 0 || k <= 0) return;
  int64_t step = nreq > 0 ? KERN_CHUNK : n;
  for (int64_t j = 0; j < n; j += step) {
    int64_t w = n - j < step ? n - j : step;
    ovl_i_kern_gemm_one(esz, 0, m, w, k, alpha, a, lda, (const char *)b + esz * (size_t)(j * ldb), ldb, 1.0,
                        (char *)c + esz * (size_t)(j * ldc), ldc);
    if (nreq > 0 && j + w < n) ovl_req_progress(nreq, reqs, NULL);
  }
}

void ovl_i_kern_dgemm(int64_t m, int64_t n, int64_t k, double alpha, const double *a, int64_t lda, const double *b,
                      int64_t ldb, double *c, int64_t ldc, int nreq, ovl_req *reqs) {
  ovl_i_kern_gemm(sizeof(double), m, n, k, alpha, a, lda, b, ldb, c, ldc, nreq, reqs);
}

void ovl_i_kern_dgemm_fn(int64_t m, int64_t n, int64_t k, double alpha, const double *a, int64_t lda, const double *b,
                         int64_t ldb, double *c, int64_t ldc, void (*progress)(void *ctx), void *ctx) {
  if (m <= 0 || n <= 0 || k <= 0) return;
  int64_t step = progress ? KERN_CHUNK : n;
  for (int64_t j = 0; j < n; j += step) {
    int64_t w = n - j < step ? n - j : step;
    ovl_i_kern_gemm_one(sizeof(double), 0, m, w, k, alpha, a, lda, b + j * ldb, ldb, 1.0, c + j * ldc, ldc);
    if (progress && j + w < n) progress(ctx);
  }
}

void ovl_i_kern_dgemm_tb(int transb, int64_t m, int64_t n, int64_t k, double alpha, const double *a, int64_t lda,
                         const double *b, int64_t ldb, double beta, double *c, int64_t ldc) {
  ovl_i_kern_gemm_one(sizeof(double), transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
