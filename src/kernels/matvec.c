/* Algorithms 1 and 2 of Huang & Chow: y = A x with reduce -> bcast, plain or
 * split over lanes and pipelined in arrival order. */
#include <cblas.h>

#include "kernels/kimpl.h"

typedef struct mv_ctx {
  ovl_lanes row, col;
  const ovl_coll_cfg *cfg;
  double *t, *y;
  int64_t ni, nj; /* lengths of row block i (reduced) and column block j (broadcast) */
  int i, j, ndup;
} mv_ctx;

/* Stage 0: reduce part c of the row's partial products to P(i,i);
 * stage 1: broadcast part c of y_j from P(j,j) down column j. */
static ovl_err mv_post(void *vctx, int c, int stage, ovl_req *req) {
  mv_ctx *m = vctx;
  int64_t off, len;
  *req = OVL_REQ_NULL;
  if (stage == 0) {
    ovl_lanes_part(m->ni, m->ndup, c, &off, &len);
    if (len == 0) return OVL_OK;
    /* the diagonal rank reduces straight into y (there y_i is y_j) */
    return ovl_ireduce(m->t + off, m->i == m->j ? m->y + off : NULL, len, m->i, ovl_lanes_comm(m->row, c), m->cfg, req);
  }
  ovl_lanes_part(m->nj, m->ndup, c, &off, &len);
  if (len == 0) return OVL_OK;
  return ovl_ibcast(m->y + off, len, m->j, ovl_lanes_comm(m->col, c), m->cfg, req);
}

ovl_err ovl_matvec(ovl_dmat A, const double *x, double *y, ovl_matvec_alg alg, int ndup, const ovl_coll_cfg *cfg,
                   ovl_pipe_event *events) {
  OVL_TRY(ovl_check_handle(A, "ovl_matvec", "A"));
  MPI_Comm parent = ovl_grid2d_parent(ovl_dmat_grid(A));
  int p, q, i, j;
  ovl_grid2d_dims(ovl_dmat_grid(A), &p, &q);
  ovl_grid2d_coords(ovl_dmat_grid(A), &i, &j);
  ovl_err rc = OVL_OK;
  if (p != q) rc = ovl_err_set(OVL_ERR_GRID, "the mat-vec algorithms need a square grid, got %d x %d", p, q);
  else if (ovl_dmat_rows(A) != ovl_dmat_cols(A))
    rc = ovl_err_set(OVL_ERR_SIZE, "A must be square, got %lld x %lld", (long long)ovl_dmat_rows(A),
                     (long long)ovl_dmat_cols(A));
  else if (alg != OVL_MATVEC_ALG1 && alg != OVL_MATVEC_ALG2)
    rc = ovl_err_set(OVL_ERR_ARG, "unknown mat-vec algorithm %d", (int)alg);
  else rc = ovl_knob_check(OVL_KNOB_NDUP, ndup, "ovl_matvec");
  if (alg == OVL_MATVEC_ALG1) ndup = 1;
  double *t = NULL;
  if (rc == OVL_OK) rc = ovl_malloc(sizeof(double) * (size_t)(ovl_dmat_local_rows(A) + 1), &t);
  rc = ovl_err_agree(parent, rc);
  if (rc != OVL_OK || !ovl_grid2d_active(ovl_dmat_grid(A))) {
    ovl_free(&t);
    return rc;
  }
  mv_ctx m = {NULL, NULL, cfg, t, y, ovl_dmat_local_rows(A), ovl_dmat_local_cols(A), i, j, ndup};
  rc = ovl_grid2d_lanes(ovl_dmat_grid(A), OVL_DIR_ROW, ndup, &m.row);
  if (rc == OVL_OK) rc = ovl_grid2d_lanes(ovl_dmat_grid(A), OVL_DIR_COL, ndup, &m.col);
  if (rc != OVL_OK) {
    ovl_free(&t);
    return rc;
  }
  if (ovl_dmat_local_rows(A) > 0) {
    if (ovl_dmat_local_cols(A) > 0)
      cblas_dgemv(CblasColMajor, CblasNoTrans, (int)ovl_dmat_local_rows(A), (int)ovl_dmat_local_cols(A), 1.0,
                  ovl_dmat_data(A), (int)ovl_dmat_ld(A), x, 1, 0.0, t, 1);
    else
      for (int64_t r = 0; r < ovl_dmat_local_rows(A); r++) t[r] = 0.0;
  }
  if (alg == OVL_MATVEC_ALG1) {
    rc = ovl_lanes_reduce(m.row, t, i == j ? y : NULL, ovl_dmat_local_rows(A), i, cfg);
    if (rc == OVL_OK) rc = ovl_lanes_bcast(m.col, y, ovl_dmat_local_cols(A), j, cfg);
  } else {
    static const char *const names[] = {"matvec.reduce", "matvec.bcast"};
    rc = ovl_pipeline_run_named(ndup, 2, mv_post, &m, events, names);
  }
  ovl_free(&t);
  if (rc != OVL_OK) ovl_fatal(parent, rc, "mat-vec communication failed: %s", ovl_errmsg());
  return OVL_OK;
}
