/* ovl_gemm: transposes, then the chosen multiplication algorithm. */
#include "kernels/kimpl.h"

static ovl_err transposed(ovl_dmat X, char trans, ovl_dmat *out, int *made) {
  *out = X;
  *made = 0;
  if (trans == 'N' || trans == 'n' || ovl_grid2d_parent(ovl_dmat_grid(X)) == MPI_COMM_NULL) return OVL_OK;
  OVL_TRY(ovl_dmat_create(ovl_dmat_grid(X), ovl_dmat_cols(X), ovl_dmat_rows(X), out));
  *made = 1;
  return ovl_dmat_transpose(X, *out);
}

ovl_err ovl_gemm(char transa, char transb, double alpha, ovl_dmat A, ovl_dmat B, double beta, ovl_dmat C,
                 const ovl_plan *plan, ovl_grid3d g3, ovl_kstats *stats) {
  OVL_TRY(ovl_check_handle(A, "ovl_gemm", "A"));
  OVL_TRY(ovl_check_handle(B, "ovl_gemm", "B"));
  OVL_TRY(ovl_check_handle(C, "ovl_gemm", "C"));
  int is3 = plan && (plan->algo == OVL_ALGO_3D || plan->algo == OVL_ALGO_25D);
  MPI_Comm parent = is3 && g3 ? ovl_grid3d_parent(g3) : ovl_grid2d_parent(ovl_dmat_grid(C));
  ovl_err rc = OVL_OK;
  if (plan == NULL) rc = ovl_err_set(OVL_ERR_ARG, "ovl_gemm: no plan given");
  else if (is3 && g3 == NULL) rc = ovl_err_set(OVL_ERR_ARG, "ovl_gemm: %s needs a 3D grid", ovl_algo_name(plan->algo));
  else if ((transa != 'N' && transa != 'n' && transa != 'T' && transa != 't') ||
           (transb != 'N' && transb != 'n' && transb != 'T' && transb != 't'))
    rc = ovl_err_set(OVL_ERR_ARG, "ovl_gemm: trans must be 'N' or 'T', got '%c' and '%c'", transa, transb);
  OVL_TRY(ovl_err_agree(parent, rc));
  /* Transposition runs inside each plane (the matrices of a 3D grid are
   * plane-local), so only plane 0's data matters there. */
  ovl_dmat a = A, b = B;
  int ma = 0, mb = 0;
  rc = transposed(A, transa, &a, &ma);
  if (rc == OVL_OK) rc = transposed(B, transb, &b, &mb);
  if (rc == OVL_OK) {
    switch (plan->algo) {
    case OVL_ALGO_SUMMA: rc = ovl_summa(alpha, a, b, beta, C, plan, stats); break;
    case OVL_ALGO_HSUMMA: rc = ovl_hsumma(alpha, a, b, beta, C, plan, stats); break;
    case OVL_ALGO_CANNON: rc = ovl_cannon(alpha, a, b, beta, C, plan, stats); break;
    case OVL_ALGO_3D: rc = ovl_mm3d(g3, alpha, a, b, beta, C, plan, stats); break;
    case OVL_ALGO_25D: rc = ovl_mm25d(g3, alpha, a, b, beta, C, plan, stats); break;
    default: rc = ovl_err_agree(parent, ovl_err_set(OVL_ERR_ARG, "unknown algorithm %d", (int)plan->algo));
    }
  }
  if (ma) ovl_dmat_destroy(&a);
  if (mb) ovl_dmat_destroy(&b);
  return rc;
}
