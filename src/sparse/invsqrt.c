/* S^(-1/2) of a symmetric positive definite block-sparse S by the coupled
 * Newton-Schulz iteration (Higham, "Functions of Matrices", 6.3; the route
 * NTPoly takes), with every product filtered: products only, so its cost
 * follows the nonzero blocks as the purification's does. */
#include <math.h>

#include "ovl/bsmat.h"
#include "sparse_impl.h"

/* The arithmetic of the products after an error err of ||I - Z Y||_F: float32 (when Z's is) while err is above
 * 1e-2, then float64 (the iteration corrects its own rounding: float64's last products give float64's Z). */
static int ns_arith(int single, double err) { return single && !(err <= 1e-2) ? OVL_BSMAT_FLOAT32 : OVL_BSMAT_FLOAT64; }

ovl_err ovl_bsmat_invsqrt(ovl_bsmat S, double eps, int ndup, int max_iter, ovl_bsmat Z, ovl_bsmat_invsqrt_info *info) {
  OVL_TRY(ovl_check_handle(S, "ovl_bsmat_invsqrt", "S"));
  OVL_TRY(ovl_check_handle(Z, "ovl_bsmat_invsqrt", "Z"));
  MPI_Comm parent = ovl_grid2d_parent(S->g);
  ovl_err rc = OVL_OK;
  if (!ovl_i_sparse_same_layout(S, Z) || S == Z)
    rc = ovl_err_set(OVL_ERR_ARG, "ovl_bsmat_invsqrt: Z must be another matrix of S's layout (ovl_bsmat_create_like)");
  else if (!(eps >= 0.0 && eps < 1.0))
    rc = ovl_err_set(OVL_ERR_ARG, "ovl_bsmat_invsqrt: the threshold must be in [0, 1), got %g", eps);
  else if (max_iter < 1 || max_iter > 1000)
    rc = ovl_err_set(OVL_ERR_ARG, "ovl_bsmat_invsqrt: the iteration cap must be in [1, 1000], got %d", max_iter);
  OVL_TRY(ovl_err_agree(parent, rc));
  ovl_bsmat_invsqrt_info st = {0, 0.0, 0.0, 0.0, 0};
  double t0 = ovl_time(), lo = 0.0, hi = 0.0;
  OVL_TRY(ovl_bsmat_gershgorin(S, &lo, &hi));
  if (!(hi > 0.0) || !isfinite(hi))
    return ovl_err_agree(parent, ovl_err_set(OVL_ERR_NUMERIC,
                                             "ovl_bsmat_invsqrt: S is not positive definite (its spectrum's "
                                             "Gershgorin bound above is %g)",
                                             hi));
  /* Y0 = S / c, Z0 = I with c >= the largest eigenvalue: the spectrum of Y0 in (0, 1], where the iteration
   * T = (3 I - Z Y) / 2, Y <- Y T, Z <- T Z converges, Y to (S / c)^(1/2) and Z to (S / c)^(-1/2) */
  ovl_bsmat Y = NULL, T = NULL, W = NULL;
  rc = ovl_bsmat_create_like(S, &Y);
  if (rc == OVL_OK) rc = ovl_bsmat_create_like(S, &T);
  if (rc == OVL_OK) rc = ovl_bsmat_create_like(S, &W);
  rc = ovl_err_agree(parent, rc);
  if (rc == OVL_OK) rc = ovl_bsmat_copy(Y, S);
  if (rc == OVL_OK) rc = ovl_bsmat_scale(Y, 1.0 / hi);
  if (rc == OVL_OK) { /* Z0 = I */
    ovl_i_sparse_clear(Z);
    ovl_i_sparse_finish(Z);
    rc = ovl_bsmat_shift(Z, 1.0, 1.0);
  }
  rc = ovl_err_agree(parent, rc);
  const int single = Z->arith == OVL_BSMAT_FLOAT32;
  /* (Z Y, Y T and T Z are polynomials in S only up to the filtering: their products are computed whole, for
   * the iteration corrects the asymmetry that forcing symmetry would fix in place: 10x D's error at 1e-7) */
  const double n = (double)S->n;
  double err = INFINITY, prev = INFINITY, floor = 1e-3;
  int64_t blocks = 0;
  while (rc == OVL_OK) {
    T->arith = W->arith = ns_arith(single, err); /* (the last iteration's error) */
    /* T = Z Y (the first iteration's Z = I: T = Y, no product) */
    rc =
        st.iterations == 0 ? ovl_err_agree(parent, ovl_bsmat_copy(T, Y)) : ovl_bsmat_multiply(Z, Y, eps, ndup, T, NULL);
    if (rc == OVL_OK) rc = ovl_err_agree(parent, ovl_bsmat_shift(T, -1.0, 1.0)); /* I - Z Y */
    if (rc == OVL_OK) rc = ovl_bsmat_norm_fro(T, &err);
    if (rc == OVL_OK) rc = ovl_bsmat_count(T, &blocks, NULL, NULL);
    if (rc != OVL_OK) break;
    st.products += st.iterations > 0;
    st.iterations++;
    /* the floor the filtering leaves: each product drops up to 2 eps sqrt(blocks) of Frobenius norm */
    floor = fmax(1e-3, 10.0 * eps * sqrt((double)(blocks > 0 ? blocks : 1)));
    /* converged: below the rounding of n unit eigenvalues, or at that floor (stopped halving) */
    if (err <= 1e-14 * sqrt(n) || (err < floor && err > 0.5 * prev) || st.iterations >= max_iter) break;
    prev = err;
    /* T = (3 I - Z Y) / 2 = I + (I - Z Y) / 2 */
    T->arith = W->arith = ns_arith(single, err);
    rc = ovl_bsmat_shift(T, 0.5, 1.0);
    if (rc == OVL_OK) rc = ovl_bsmat_filter(T, eps);
    rc = ovl_err_agree(parent, rc);
    if (rc == OVL_OK) rc = ovl_bsmat_multiply(Y, T, eps, ndup, W, NULL); /* Y T */
    if (rc == OVL_OK) ovl_i_sparse_swap(Y, W);
    if (st.iterations == 1) { /* T Z = T (Z = I) */
      if (rc == OVL_OK) rc = ovl_err_agree(parent, ovl_bsmat_copy(Z, T));
      st.products += 1;
    } else {
      if (rc == OVL_OK) rc = ovl_bsmat_multiply(T, Z, eps, ndup, W, NULL); /* T Z */
      if (rc == OVL_OK) ovl_i_sparse_swap(Z, W);
      st.products += 2;
    }
  }
  if (rc == OVL_OK && !(err < floor))
    rc = ovl_err_set(OVL_ERR_NUMERIC,
                     "ovl_bsmat_invsqrt: no convergence after %d iterations (||I - Z Y||_F = %.3e): S may be "
                     "singular or not positive definite, or the threshold too coarse",
                     st.iterations, err);
  rc = ovl_err_agree(parent, rc);
  if (rc == OVL_OK) rc = ovl_bsmat_scale(Z, 1.0 / sqrt(hi)); /* (S / c)^(-1/2) / sqrt(c) */
  ovl_bsmat_destroy(&Y);
  ovl_bsmat_destroy(&T);
  ovl_bsmat_destroy(&W);
  st.residual = err, st.scale = hi, st.t_total = ovl_time() - t0;
  if (info) *info = st;
  return rc;
}
