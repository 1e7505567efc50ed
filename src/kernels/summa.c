/* SUMMA (van de Geijn & Watts): C = alpha A B + beta C on a p x q grid.
 *
 * Step t covers global inner indices [k0, k1): the panel is clipped so that
 * A's columns [k0, k1) live in one process column (jA) and B's rows in one
 * process row (iB). Process (i, jA) broadcasts its A panel along row_comm;
 * process (iB, j) broadcasts its B panel along col_comm; everyone updates
 * C_ij += alpha * Apanel * Bpanel. */
#include <cblas.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "dist/dmat_impl.h"
#include "kernels/kimpl.h"

ovl_summa_plan ovl_summa_plan_default(int64_t b) {
  ovl_summa_plan p = {b, 1, ovl_coll_cfg_default()};
  return p;
}

int ovl_summa_plan_str(const ovl_summa_plan *plan, char *buf, size_t n) {
  return snprintf(buf, n, "summa b=%" PRId64 " ndup=%d backend=%s bcast=%s", plan->b, plan->ndup,
                  ovl_backend_name(plan->coll.backend), ovl_alg_name(plan->coll.bcast));
}

/* Checks shared by the 2D kernels: same grid, conforming shapes. */
ovl_err ovl_kernel_check_gemm_shapes(ovl_dmat A, ovl_dmat B, ovl_dmat C) {
  if (A->grid != B->grid || A->grid != C->grid)
    return ovl_err_set(OVL_ERR_SIZE, "A, B and C must be distributed on the same grid");
  if (A->n != B->m || A->m != C->m || B->n != C->n)
    return ovl_err_set(OVL_ERR_SIZE,
                       "shapes do not conform: A is %" PRId64 " x %" PRId64 ", B is %" PRId64 " x %" PRId64
                       ", C is %" PRId64 " x %" PRId64,
                       A->m, A->n, B->m, B->n, C->m, C->n);
  return OVL_OK;
}

static void scale_local(ovl_dmat C, double beta) {
  if (beta == 1.0) return;
  for (int64_t c = 0; c < C->ln; c++) {
    double *col = C->data + c * C->ld;
    if (beta == 0.0)
      memset(col, 0, sizeof(double) * (size_t)C->lm);
    else
      for (int64_t r = 0; r < C->lm; r++) col[r] *= beta;
  }
}

ovl_err ovl_summa(double alpha, ovl_dmat A, ovl_dmat B, double beta, ovl_dmat C, const ovl_summa_plan *plan,
                  ovl_kstats *stats) {
  MPI_Comm parent = ovl_grid2d_parent(C->grid);
  ovl_kstats st = {0};
  double t0 = ovl_time();
  ovl_err rc = ovl_kernel_check_gemm_shapes(A, B, C);
  if (rc == OVL_OK && (plan == NULL || plan->b <= 0))
    rc = ovl_err_set(OVL_ERR_ARG, "SUMMA panel width b must be > 0, got %" PRId64, plan ? plan->b : 0);
  if (rc == OVL_OK && (plan->ndup < 1 || plan->ndup > OVL_LANES_MAX))
    rc = ovl_err_set(OVL_ERR_ARG, "SUMMA N_DUP must be in [1, %d], got %d", OVL_LANES_MAX, plan->ndup);
  int p = 1, q = 1, gi = 0, gj = 0;
  ovl_grid2d_dims(C->grid, &p, &q);
  ovl_grid2d_coords(C->grid, &gi, &gj);
  int64_t K = A->n, b = plan ? plan->b : 1;
  if (rc == OVL_OK && b > K && K > 0) b = K; /* a panel never needs to exceed K */
  double *apan = NULL, *bpan = NULL;
  if (rc == OVL_OK) rc = ovl_malloc(sizeof(double) * (size_t)(A->lm * b + 1), &apan);
  if (rc == OVL_OK) rc = ovl_malloc(sizeof(double) * (size_t)(B->ln * b + 1), &bpan);
  rc = ovl_err_agree(parent, rc);
  if (rc != OVL_OK || !ovl_grid2d_active(C->grid)) {
    ovl_free(&apan);
    ovl_free(&bpan);
    if (stats) *stats = st;
    return rc;
  }
  ovl_lanes row = NULL, col = NULL;
  rc = ovl_grid2d_lanes(C->grid, OVL_DIR_ROW, plan->ndup, &row);
  if (rc == OVL_OK) rc = ovl_grid2d_lanes(C->grid, OVL_DIR_COL, plan->ndup, &col);
  if (rc != OVL_OK) {
    ovl_free(&apan);
    ovl_free(&bpan);
    return rc;
  }
  ovl_req ra[OVL_LANES_MAX], rb[OVL_LANES_MAX];
  scale_local(C, beta);
  for (int64_t k0 = 0; k0 < K;) {
    int jA = ovl_block_owner(K, q, k0), iB = ovl_block_owner(K, p, k0);
    int64_t aend = ovl_block_off(K, q, jA) + ovl_block_len(K, q, jA);
    int64_t bend = ovl_block_off(K, p, iB) + ovl_block_len(K, p, iB);
    int64_t k1 = k0 + b;
    if (k1 > aend) k1 = aend;
    if (k1 > bend) k1 = bend;
    int64_t w = k1 - k0;
    double tc = ovl_time();
    /* A panel: A(:, k0:k1) is contiguous in the owner's column-major block */
    double *ap = gj == jA ? A->data + (k0 - A->coff) * A->ld : apan;
    int64_t acount = A->lm * w;
    if (acount > 0 && q > 1) {
      if (ovl_lanes_ibcast(row, ap, acount, jA, &plan->coll, ra) != OVL_OK)
        ovl_fatal(parent, OVL_ERR_MPI, "SUMMA: broadcast of the A panel failed: %s", ovl_errmsg());
      st.bytes += 8 * acount;
    }
    /* B panel: rows k0:k1 of the owner's block, packed w x ln */
    int64_t bcount = w * B->ln;
    if (gi == iB)
      for (int64_t c = 0; c < B->ln; c++)
        memcpy(bpan + c * w, B->data + (k0 - B->roff) + c * B->ld, sizeof(double) * (size_t)w);
    if (bcount > 0 && p > 1) {
      if (ovl_lanes_ibcast(col, bpan, bcount, iB, &plan->coll, rb) != OVL_OK)
        ovl_fatal(parent, OVL_ERR_MPI, "SUMMA: broadcast of the B panel failed: %s", ovl_errmsg());
      st.bytes += 8 * bcount;
    }
    if ((acount > 0 && q > 1 && ovl_req_waitall(plan->ndup, ra) != OVL_OK) ||
        (bcount > 0 && p > 1 && ovl_req_waitall(plan->ndup, rb) != OVL_OK))
      ovl_fatal(parent, OVL_ERR_MPI, "SUMMA: panel broadcast failed: %s", ovl_errmsg());
    double tm = ovl_time();
    st.t_comm += tm - tc;
    if (C->lm > 0 && C->ln > 0 && w > 0)
      cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, (int)C->lm, (int)C->ln, (int)w, alpha, ap,
                  (int)(A->lm > 0 ? A->lm : 1), bpan, (int)w, 1.0, C->data, (int)C->ld);
    st.t_comp += ovl_time() - tm;
    st.steps++;
    k0 = k1;
  }
  ovl_free(&apan);
  ovl_free(&bpan);
  st.t_total = ovl_time() - t0;
  if (stats) *stats = st;
  return OVL_OK;
}
