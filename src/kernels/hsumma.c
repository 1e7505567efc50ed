/* Hierarchical SUMMA (Quintin, Hasanov & Lastovetsky).
 *
 * The p x q grid is split into I x J groups of bi x bj = (p/I) x (q/J)
 * processes. An outer panel [k0, k0 + M) of A's columns (owned by process
 * column jA = gjA*bj + ljA) first travels between groups: along outer_row
 * (same i, same lj, across group columns) among the processes with
 * lj == ljA. Then, inside every group, sub-panels of width b travel along
 * inner_row from the group's column ljA. B's panels move the same way along
 * the columns. G = 1 has one-process outer communicators (plain SUMMA with
 * panel b); G = P has one-process inner communicators (SUMMA with panel M).
 * Every broadcast is split over N_DUP lanes. */
#include <string.h>

#include "kernels/kimpl.h"

typedef struct hs_ctx {
  MPI_Comm parent;
  const ovl_plan *plan;
  ovl_kstats *st;
} hs_ctx;

/* Broadcast n elements over lanes L (skipped when L has one process or n = 0). */
static void hs_bcast(hs_ctx *h, ovl_lanes L, double *buf, int64_t n, int root) {
  if (n == 0 || L == NULL || ovl_lanes_size(L) <= 1) return;
  if (ovl_lanes_bcast(L, buf, n, root, &h->plan->coll) != OVL_OK)
    ovl_fatal(h->parent, OVL_ERR_MPI, "HSUMMA: broadcast failed: %s", ovl_errmsg());
  h->st->bytes += 8 * n;
  h->st->ncoll++;
}

ovl_err ovl_hsumma(double alpha, ovl_dmat A, ovl_dmat B, double beta, ovl_dmat C, const ovl_plan *plan,
                   ovl_kstats *stats) {
  MPI_Comm parent = ovl_grid2d_parent(ovl_dmat_grid(C));
  ovl_kstats st;
  memset(&st, 0, sizeof st);
  double t0 = ovl_time();
  int p, q, gi, gj;
  ovl_grid2d_dims(ovl_dmat_grid(C), &p, &q);
  ovl_grid2d_coords(ovl_dmat_grid(C), &gi, &gj);
  ovl_err rc = ovl_kernel_check_gemm_shapes(A, B, C);
  if (rc == OVL_OK) rc = ovl_i_kern_check_plan(plan, "HSUMMA");
  int64_t b = rc == OVL_OK ? plan->b : 1, M = rc == OVL_OK && plan->outer > 0 ? plan->outer : b;
  if (rc == OVL_OK && M < b)
    rc = ovl_err_set(OVL_ERR_ARG, "HSUMMA: the outer block M = %lld must be >= the inner block b = %lld", (long long)M,
                     (long long)b);
  int gI = rc == OVL_OK ? plan->groups_i : 1, gJ = rc == OVL_OK ? plan->groups_j : 1;
  if (rc == OVL_OK && (gI < 1 || gJ < 1 || p % gI || q % gJ))
    rc = ovl_err_set(OVL_ERR_ARG, "HSUMMA: %d x %d groups do not tile the %d x %d grid", gI, gJ, p, q);
  int64_t K = ovl_dmat_cols(A);
  if (M > K && K > 0) M = K;
  if (b > M) b = M;
  double *aout = NULL, *bout = NULL, *bin = NULL;
  if (rc == OVL_OK) rc = ovl_malloc(sizeof(double) * (size_t)(ovl_dmat_local_rows(A) * M + 1), &aout);
  if (rc == OVL_OK) rc = ovl_malloc(sizeof(double) * (size_t)(M * ovl_dmat_local_cols(B) + 1), &bout);
  if (rc == OVL_OK) rc = ovl_malloc(sizeof(double) * (size_t)(b * ovl_dmat_local_cols(B) + 1), &bin);
  rc = ovl_err_agree(parent, rc);
  ovl_hgroups hg = NULL;
  if (rc == OVL_OK) rc = ovl_grid2d_hgroups(ovl_dmat_grid(C), gI, gJ, &hg);
  ovl_lanes orow = NULL, ocol = NULL, irow = NULL, icol = NULL;
  if (rc == OVL_OK && ovl_grid2d_active(ovl_dmat_grid(C))) {
    rc = ovl_hgroups_lanes(hg, OVL_DIR_OUTER_ROW, plan->ndup, &orow);
    if (rc == OVL_OK) rc = ovl_hgroups_lanes(hg, OVL_DIR_OUTER_COL, plan->ndup, &ocol);
    if (rc == OVL_OK) rc = ovl_hgroups_lanes(hg, OVL_DIR_INNER_ROW, plan->ndup, &irow);
    if (rc == OVL_OK) rc = ovl_hgroups_lanes(hg, OVL_DIR_INNER_COL, plan->ndup, &icol);
  }
  if (rc != OVL_OK || !ovl_grid2d_active(ovl_dmat_grid(C))) {
    ovl_free(&aout), ovl_free(&bout), ovl_free(&bin);
    if (stats) *stats = st;
    return rc;
  }
  hs_ctx h = {parent, plan, &st};
  int bi = p / gI, bj = q / gJ, li = gi % bi, lj = gj % bj;
  ovl_i_kern_scale(C, beta);
  for (int64_t k0 = 0; k0 < K;) {
    /* outer panel: width <= M inside one block of A's columns and B's rows */
    int jA = ovl_block_owner(K, q, k0), iB = ovl_block_owner(K, p, k0);
    int64_t k1 = k0 + M, aend = ovl_block_off(K, q, jA) + ovl_block_len(K, q, jA);
    int64_t bend = ovl_block_off(K, p, iB) + ovl_block_len(K, p, iB);
    if (k1 > aend) k1 = aend;
    if (k1 > bend) k1 = bend;
    int64_t w = k1 - k0;
    int ljA = jA % bj, liB = iB % bi;
    double tc = ovl_time();
    OVL_TRACE_BEGIN("hsumma.outer");
    /* between groups: the processes in A's local column (B's local row) */
    const double *ao = aout, *bo = bout;
    if (gj == jA) ao = ovl_dmat_data(A) + (k0 - ovl_dmat_col_off(A)) * ovl_dmat_ld(A); /* in place at the owner */
    if (gi == iB)
      ovl_i_kern_copy(bout, w, ovl_dmat_data(B) + (k0 - ovl_dmat_row_off(B)), ovl_dmat_ld(B), w,
                      ovl_dmat_local_cols(B));
    if (lj == ljA) hs_bcast(&h, orow, (double *)ao, ovl_dmat_local_rows(A) * w, jA / bj);
    if (li == liB) hs_bcast(&h, ocol, bout, w * ovl_dmat_local_cols(B), iB / bi);
    OVL_TRACE_END("hsumma.outer", 0);
    st.t_comm += ovl_time() - tc;
    /* inside groups: sub-panels of width b */
    for (int64_t kk = 0; kk < w; kk += b) {
      int64_t ww = w - kk < b ? w - kk : b;
      double tm = ovl_time();
      OVL_TRACE_BEGIN("hsumma.inner");
      /* A's sub-panel is contiguous in the outer panel; B's rows are packed */
      double *asub = (double *)ao + kk * ovl_dmat_local_rows(A);
      if (li == liB) ovl_i_kern_copy(bin, ww, bo + kk, w, ww, ovl_dmat_local_cols(B));
      hs_bcast(&h, irow, asub, ovl_dmat_local_rows(A) * ww, ljA);
      hs_bcast(&h, icol, bin, ww * ovl_dmat_local_cols(B), liB);
      OVL_TRACE_END("hsumma.inner", 0);
      double tg = ovl_time();
      st.t_comm += tg - tm;
      OVL_TRACE_BEGIN("hsumma.dgemm");
      ovl_i_kern_dgemm(ovl_dmat_local_rows(C), ovl_dmat_local_cols(C), ww, alpha, asub,
                       ovl_dmat_local_rows(A) > 0 ? ovl_dmat_local_rows(A) : 1, bin, ww, ovl_dmat_data(C),
                       ovl_dmat_ld(C), 0, NULL);
      OVL_TRACE_END("hsumma.dgemm", 0);
      st.t_comp += ovl_time() - tg;
      st.steps++;
    }
    k0 = k1;
  }
  ovl_free(&aout), ovl_free(&bout), ovl_free(&bin);
  st.t_total = ovl_time() - t0;
  if (stats) *stats = st;
  return OVL_OK;
}
