/* Algorithms 1 and 2 of Huang & Chow: y = A x with reduce -> bcast, plain or
 * split over lanes and pipelined in arrival order. */
#include <cblas.h>

#include "dist/dmat_impl.h"
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
  MPI_Comm parent = ovl_grid2d_parent(A->grid);
  int p, q, i, j;
  ovl_grid2d_dims(A->grid, &p, &q);
  ovl_grid2d_coords(A->grid, &i, &j);
  ovl_err rc = OVL_OK;
  if (p != q) rc = ovl_err_set(OVL_ERR_GRID, "the mat-vec algorithms need a square grid, got %d x %d", p, q);
  else if (A->m != A->n)
    rc = ovl_err_set(OVL_ERR_SIZE, "A must be square, got %lld x %lld", (long long)A->m, (long long)A->n);
  else if (alg != OVL_MATVEC_ALG1 && alg != OVL_MATVEC_ALG2)
    rc = ovl_err_set(OVL_ERR_ARG, "unknown mat-vec algorithm %d", (int)alg);
  else if (ndup < 1 || ndup > OVL_LANES_MAX)
    rc = ovl_err_set(OVL_ERR_ARG, "N_DUP must be in [1, %d], got %d", OVL_LANES_MAX, ndup);
  if (alg == OVL_MATVEC_ALG1) ndup = 1;
  double *t = NULL;
  if (rc == OVL_OK) rc = ovl_malloc(sizeof(double) * (size_t)(A->lm + 1), &t);
  rc = ovl_err_agree(parent, rc);
  if (rc != OVL_OK || !ovl_grid2d_active(A->grid)) {
    ovl_free(&t);
    return rc;
  }
  mv_ctx m = {NULL, NULL, cfg, t, y, A->lm, A->ln, i, j, ndup};
  rc = ovl_grid2d_lanes(A->grid, OVL_DIR_ROW, ndup, &m.row);
  if (rc == OVL_OK) rc = ovl_grid2d_lanes(A->grid, OVL_DIR_COL, ndup, &m.col);
  if (rc != OVL_OK) {
    ovl_free(&t);
    return rc;
  }
  if (A->lm > 0) {
    if (A->ln > 0)
      cblas_dgemv(CblasColMajor, CblasNoTrans, (int)A->lm, (int)A->ln, 1.0, A->data, (int)A->ld, x, 1, 0.0, t, 1);
    else
      for (int64_t r = 0; r < A->lm; r++) t[r] = 0.0;
  }
  if (alg == OVL_MATVEC_ALG1) {
    rc = ovl_lanes_reduce(m.row, t, i == j ? y : NULL, A->lm, i, cfg);
    if (rc == OVL_OK) rc = ovl_lanes_bcast(m.col, y, A->ln, j, cfg);
  } else {
    static const char *const names[] = {"matvec.reduce", "matvec.bcast"};
    rc = ovl_pipeline_run_named(ndup, 2, mv_post, &m, events, names);
  }
  ovl_free(&t);
  if (rc != OVL_OK) ovl_fatal(parent, rc, "mat-vec communication failed: %s", ovl_errmsg());
  return OVL_OK;
}
