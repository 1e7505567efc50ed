/* Verification of distributed products. */
#include <cblas.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernels/kimpl.h"

static double nrm2(const double *x, int64_t n) {
  double s = 0;
  for (int64_t i = 0; i < n; i++) s += x[i] * x[i];
  return sqrt(s);
}

static ovl_err verify_exact(double alpha, ovl_dmat A, ovl_dmat B, double beta, ovl_dmat C0, ovl_dmat C,
                            double *relerr) {
  MPI_Comm parent = ovl_grid2d_parent(ovl_dmat_grid(C));
  int rank = 0;
  MPI_Comm_rank(parent, &rank);
  int64_t m = ovl_dmat_rows(C), n = ovl_dmat_cols(C), k = ovl_dmat_cols(A);
  double *ga = NULL, *gb = NULL, *gc = NULL, *gr = NULL;
  ovl_err rc = OVL_OK;
  if (rank == 0) {
    rc = ovl_malloc(sizeof(double) * (size_t)(m * k + 1), &ga);
    if (rc == OVL_OK) rc = ovl_malloc(sizeof(double) * (size_t)(k * n + 1), &gb);
    if (rc == OVL_OK) rc = ovl_malloc(sizeof(double) * (size_t)(m * n + 1), &gc);
    if (rc == OVL_OK) rc = ovl_calloc(sizeof(double) * (size_t)(m * n + 1), &gr);
  }
  rc = ovl_err_agree(parent, rc);
  if (rc == OVL_OK) rc = ovl_dmat_gather(A, ga);
  if (rc == OVL_OK) rc = ovl_dmat_gather(B, gb);
  if (rc == OVL_OK && C0 != NULL) rc = ovl_dmat_gather(C0, gr);
  if (rc == OVL_OK) rc = ovl_dmat_gather(C, gc);
  double err = 0.0;
  if (rc == OVL_OK && rank == 0) {
    double na = nrm2(ga, m * k), nb = nrm2(gb, k * n), nc0 = C0 ? nrm2(gr, m * n) : 0.0;
    if (C0 == NULL) beta = 0.0;
    if (m > 0 && n > 0)
      cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)n, (int)k, alpha, ga, (int)(m ? m : 1), gb,
                  (int)(k ? k : 1), beta, gr, (int)(m ? m : 1));
    double d = 0.0;
    for (int64_t i = 0; i < m * n; i++) d += (gc[i] - gr[i]) * (gc[i] - gr[i]);
    double scale = fabs(alpha) * na * nb + fabs(beta) * nc0;
    err = sqrt(d) / (scale > DBL_MIN ? scale : 1.0);
    if (isnan(d)) err = INFINITY;
  }
  ovl_free(&ga);
  ovl_free(&gb);
  ovl_free(&gc);
  ovl_free(&gr);
  OVL_TRY(rc);
  OVL_MPI(MPI_Bcast(&err, 1, MPI_DOUBLE, 0, parent));
  *relerr = err;
  return OVL_OK;
}

static ovl_err verify_prob(double alpha, ovl_dmat A, ovl_dmat B, double beta, ovl_dmat C0, ovl_dmat C, double *relerr) {
  MPI_Comm parent = ovl_grid2d_parent(ovl_dmat_grid(C));
  int64_t m = ovl_dmat_rows(C), n = ovl_dmat_cols(C), k = ovl_dmat_cols(A);
  double *x = NULL, *t = NULL, *y1 = NULL, *y2 = NULL, *y3 = NULL;
  ovl_err rc = ovl_malloc(sizeof(double) * (size_t)(n + 1), &x);
  if (rc == OVL_OK) rc = ovl_malloc(sizeof(double) * (size_t)(k + 1), &t);
  if (rc == OVL_OK) rc = ovl_malloc(sizeof(double) * (size_t)(m + 1), &y1);
  if (rc == OVL_OK) rc = ovl_malloc(sizeof(double) * (size_t)(m + 1), &y2);
  if (rc == OVL_OK) rc = ovl_calloc(sizeof(double) * (size_t)(m + 1), &y3);
  rc = ovl_err_agree(parent, rc);
  double na = 0, nb = 0, nc0 = 0, worst = 0;
  if (rc == OVL_OK) rc = ovl_dmat_norm_fro(A, &na);
  if (rc == OVL_OK) rc = ovl_dmat_norm_fro(B, &nb);
  if (rc == OVL_OK && C0) rc = ovl_dmat_norm_fro(C0, &nc0);
  if (C0 == NULL) beta = 0.0;
  for (int trial = 0; trial < 2 && rc == OVL_OK; trial++) {
    for (int64_t i = 0; i < n; i++) x[i] = ovl_fill_value(0x5eed + (uint64_t)trial, i, -1);
    rc = ovl_dmat_matvec(C, x, y1);
    if (rc == OVL_OK) rc = ovl_dmat_matvec(B, x, t);
    if (rc == OVL_OK) rc = ovl_dmat_matvec(A, t, y2);
    if (rc == OVL_OK && C0) rc = ovl_dmat_matvec(C0, x, y3);
    if (rc != OVL_OK) break;
    double d = 0;
    for (int64_t i = 0; i < m; i++) {
      double r = y1[i] - (alpha * y2[i] + beta * y3[i]);
      d += r * r;
    }
    double scale = (fabs(alpha) * na * nb + fabs(beta) * nc0) * nrm2(x, n);
    double e = sqrt(d) / (scale > DBL_MIN ? scale : 1.0);
    if (isnan(d)) e = INFINITY;
    if (e > worst) worst = e;
  }
  ovl_free(&x);
  ovl_free(&t);
  ovl_free(&y1);
  ovl_free(&y2);
  ovl_free(&y3);
  OVL_TRY(rc);
  *relerr = worst;
  return OVL_OK;
}

ovl_err ovl_verify_gemm(double alpha, ovl_dmat A, ovl_dmat B, double beta, ovl_dmat C0, ovl_dmat C,
                        ovl_verify_mode mode, double tol, double *relerr) {
  OVL_TRY(ovl_check_handle(A, "ovl_verify_gemm", "A"));
  OVL_TRY(ovl_check_handle(B, "ovl_verify_gemm", "B"));
  OVL_TRY(ovl_check_handle(C, "ovl_verify_gemm", "C"));
  OVL_TRY(ovl_check_ptr(relerr, "ovl_verify_gemm", "relerr"));
  MPI_Comm parent = ovl_grid2d_parent(ovl_dmat_grid(C));
  OVL_TRY(ovl_err_agree(parent, ovl_kernel_check_gemm_shapes(A, B, C)));
  if (mode == OVL_VERIFY_AUTO)
    mode = (double)ovl_dmat_rows(C) * (double)ovl_dmat_cols(C) + (double)ovl_dmat_rows(A) * ovl_dmat_cols(A) +
                       (double)ovl_dmat_rows(B) * ovl_dmat_cols(B) <=
                   3.0 * 1024 * 1024
               ? OVL_VERIFY_EXACT
               : OVL_VERIFY_PROBABILISTIC;
  double e = 0;
  if (mode == OVL_VERIFY_EXACT) OVL_TRY(verify_exact(alpha, A, B, beta, C0, C, &e));
  else OVL_TRY(verify_prob(alpha, A, B, beta, C0, C, &e));
  if (relerr) *relerr = e;
  if (!(e <= tol))
    return ovl_err_set(OVL_ERR_NUMERIC, "verification failed (%s): relative error %.3e > tolerance %.3e",
                       mode == OVL_VERIFY_EXACT ? "exact" : "probabilistic", e, tol);
  return OVL_OK;
}
