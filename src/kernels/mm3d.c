/* 3D multiplication on a p x p x p grid, in the Huang-Chow notation:
 * P(i,j,k) computes A_ij B_jk and the sums over j land on P(i,k,0).
 *
 *   1. A_ij:  P(i,j,0) -> P(i,j,:)            broadcast along grd_comm
 *   2. B_jk:  P(j,k,0) -> P(j,j,k)            point to point
 *             P(j,j,k) -> P(:,j,k)            broadcast along row_comm
 *   3. C_ijk = alpha A_ij B_jk                local dgemm
 *   4. sum_j C_ijk -> P(i,k,k)                reduce along col_comm
 *   5. P(i,k,k) -> P(i,k,0)                   point to point along grd_comm
 *
 * Every phase is split over N_DUP lanes; step 2's chains (p2p(c) -> bcast(c))
 * and steps 4-5's chains (reduce(c) -> send(c)) run through the pipeline
 * engine, each stage posted as soon as its part's previous stage completes. */
#include <string.h>

#include "kernels/kimpl.h"

typedef struct mm3d_ctx {
  ovl_grid3d g;
  int s, i, j, k, ndup;
  ovl_lanes row, col, grd;
  const ovl_coll_cfg *cfg;
  MPI_Comm comm;
  /* phase 1 */
  const double *bmine; /* this rank's B block on plane 0 */
  int64_t nbmine;
  double *bw; /* B_jk */
  int64_t nbw;
  ovl_req sends[OVL_LANES_MAX];
  /* phase 2 */
  double *cw, *cr;
  int64_t ncw, ncr;
  ovl_kstats *st;
} mm3d_ctx;

enum { TAG_B = 3100 };
static const char *const k_names_b[] = {"mm3d.B.p2p", "mm3d.B.bcast"};
static const char *const k_names_c[] = {"mm3d.C.reduce", "mm3d.C.send"};

/* Phase 1, chain of part c: stage 0 moves B's part from plane 0 to the
 * diagonal P(j,j,k); stage 1 broadcasts it along row_comm. */
static ovl_err post_b(void *vx, int c, int stage, ovl_req *req) {
  mm3d_ctx *x = vx;
  int64_t off, len;
  *req = OVL_REQ_NULL;
  if (stage == 0) {
    int self = ovl_grid3d_rank_of(x->g, x->i, x->j, x->k);
    if (x->k == 0) { /* P(i,j,0) sends B(i,j) to P(i,i,j) */
      ovl_lanes_part(x->nbmine, x->ndup, c, &off, &len);
      int dest = ovl_grid3d_rank_of(x->g, x->i, x->i, x->j);
      if (len > 0 && dest != self) OVL_TRY(ovl_isend(x->bmine + off, len, dest, TAG_B + c, x->comm, &x->sends[c]));
      if (len > 0 && dest == self) memcpy(x->bw + off, x->bmine + off, sizeof(double) * (size_t)len);
      if (len > 0) x->st->bytes += 8 * len;
    }
    if (x->i == x->j) { /* P(j,j,k) receives B(j,k) from P(j,k,0) */
      ovl_lanes_part(x->nbw, x->ndup, c, &off, &len);
      int src = ovl_grid3d_rank_of(x->g, x->j, x->k, 0);
      if (len > 0 && src != self) OVL_TRY(ovl_irecv(x->bw + off, len, src, TAG_B + c, x->comm, req));
    }
    return OVL_OK;
  }
  ovl_lanes_part(x->nbw, x->ndup, c, &off, &len);
  if (len == 0 || x->s == 1) return OVL_OK;
  x->st->bytes += 8 * len;
  return ovl_ibcast(x->bw + off, len, x->j, ovl_lanes_comm(x->row, c), x->cfg, req);
}

/* Phase 2, chain of part c: stage 0 reduces along col_comm to P(i,k,k);
 * stage 1 moves the result along grd_comm to P(i,k,0). */
static ovl_err post_c(void *vx, int c, int stage, ovl_req *req) {
  mm3d_ctx *x = vx;
  int64_t off, len;
  *req = OVL_REQ_NULL;
  if (stage == 0) {
    ovl_lanes_part(x->ncw, x->ndup, c, &off, &len);
    if (len == 0) return OVL_OK;
    x->st->bytes += 8 * len;
    if (x->s == 1) {
      memcpy(x->cr + off, x->cw + off, sizeof(double) * (size_t)len);
      return OVL_OK;
    }
    return ovl_ireduce(x->cw + off, x->j == x->k ? x->cr + off : NULL, len, x->k, ovl_lanes_comm(x->col, c), x->cfg,
                       req);
  }
  if (x->j == x->k && x->k != 0) { /* P(i,k,k) -> P(i,k,0) */
    ovl_lanes_part(x->ncw, x->ndup, c, &off, &len);
    x->st->bytes += 8 * len;
    return len > 0 ? ovl_isend(x->cr + off, len, 0, TAG_B + c, ovl_lanes_comm(x->grd, c), req) : OVL_OK;
  }
  if (x->k == 0 && x->j != 0) { /* P(i,j,0) <- P(i,j,j) */
    ovl_lanes_part(x->ncr, x->ndup, c, &off, &len);
    return len > 0 ? ovl_irecv(x->cr + off, len, x->j, TAG_B + c, ovl_lanes_comm(x->grd, c), req) : OVL_OK;
  }
  return OVL_OK;
}

ovl_err ovl_mm3d(ovl_grid3d g, double alpha, ovl_dmat A, ovl_dmat B, double beta, ovl_dmat C, const ovl_plan *plan,
                 ovl_kstats *stats) {
  OVL_TRY(ovl_check_handle(g, "ovl_mm3d", "the 3D grid"));
  OVL_TRY(ovl_check_handle(A, "ovl_mm3d", "A"));
  OVL_TRY(ovl_check_handle(B, "ovl_mm3d", "B"));
  OVL_TRY(ovl_check_handle(C, "ovl_mm3d", "C"));
  OVL_TRY(ovl_check_ptr(plan, "ovl_mm3d", "plan"));
  MPI_Comm parent = ovl_grid3d_parent(g);
  ovl_kstats st;
  memset(&st, 0, sizeof st);
  double t0 = ovl_time();
  mm3d_ctx x;
  memset(&x, 0, sizeof x);
  x.g = g, x.st = &st;
  int c = 0;
  ovl_grid3d_dims(g, &x.s, &c);
  ovl_grid3d_coords(g, &x.i, &x.j, &x.k);
  int active = ovl_grid3d_active(g);
  ovl_err rc = OVL_OK;
  if (active) rc = ovl_kernel_check_gemm_shapes(A, B, C);
  if (rc == OVL_OK && active && ovl_dmat_grid(A) != ovl_grid3d_plane(g))
    rc = ovl_err_set(OVL_ERR_ARG, "3D: the operands must live on the 3D grid's plane (ovl_grid3d_plane)");
  if (rc == OVL_OK) rc = ovl_i_kern_check_plan(plan, "3D");
  if (rc == OVL_OK && c != x.s)
    rc = ovl_err_set(OVL_ERR_GRID, "3D needs a p x p x p grid, got %d x %d x %d", x.s, x.s, c);
  int64_t m = active ? ovl_dmat_rows(A) : 0, K = active ? ovl_dmat_cols(A) : 0, n = active ? ovl_dmat_cols(B) : 0;
  int s = x.s;
  if (rc == OVL_OK && active) {
    x.nbw = ovl_block_len(K, s, x.j) * ovl_block_len(n, s, x.k);
    x.ncw = ovl_block_len(m, s, x.i) * ovl_block_len(n, s, x.k);
    x.ncr = x.k == 0 ? ovl_dmat_local_rows(C) * ovl_dmat_local_cols(C) : x.ncw;
    rc = ovl_malloc(sizeof(double) * (size_t)(x.nbw + 1), &x.bw);
    if (rc == OVL_OK) rc = ovl_calloc(sizeof(double) * (size_t)(x.ncw + 1), &x.cw);
    if (rc == OVL_OK) rc = ovl_calloc(sizeof(double) * (size_t)((x.ncw > x.ncr ? x.ncw : x.ncr) + 1), &x.cr);
  }
  rc = ovl_err_agree(parent, rc);
  if (rc == OVL_OK && active) {
    x.ndup = plan->ndup, x.cfg = &plan->coll, x.comm = ovl_grid3d_comm(g);
    rc = ovl_grid3d_lanes3(g, plan->ndup, &x.row, &x.col, &x.grd);
  }
  if (rc != OVL_OK || !active) {
    ovl_free(&x.bw), ovl_free(&x.cw), ovl_free(&x.cr);
    if (stats) *stats = st;
    return rc;
  }
  /* 1: A along grd_comm (all parts at once), B's chains through the pipeline */
  double tc = ovl_time();
  OVL_TRACE_BEGIN("mm3d.distribute");
  ovl_req ra[OVL_LANES_MAX];
  for (int l = 0; l < OVL_LANES_MAX; l++) ra[l] = x.sends[l] = OVL_REQ_NULL;
  x.bmine = ovl_dmat_data(B), x.nbmine = ovl_dmat_local_rows(B) * ovl_dmat_local_cols(B);
  if (s > 1 &&
      ovl_lanes_ibcast(x.grd, ovl_dmat_data(A), ovl_dmat_local_rows(A) * ovl_dmat_local_cols(A), 0, &plan->coll, ra))
    ovl_fatal(parent, OVL_ERR_MPI, "3D: broadcast of A failed: %s", ovl_errmsg());
  if (s > 1) st.bytes += 8 * ovl_dmat_local_rows(A) * ovl_dmat_local_cols(A), st.ncoll++;
  if (ovl_pipeline_run_named(plan->ndup, 2, post_b, &x, NULL, k_names_b) || ovl_req_waitall(plan->ndup, ra) ||
      ovl_req_waitall(plan->ndup, x.sends))
    ovl_fatal(parent, OVL_ERR_MPI, "3D: distribution of B failed: %s", ovl_errmsg());
  st.ncoll++;
  /* 3: local product */
  OVL_TRACE_END("mm3d.distribute", 0);
  double tm = ovl_time();
  st.t_comm += tm - tc;
  OVL_TRACE_BEGIN("mm3d.dgemm");
  int64_t mi = ovl_block_len(m, s, x.i), kj = ovl_block_len(K, s, x.j), nk = ovl_block_len(n, s, x.k);
  ovl_i_kern_dgemm(mi, nk, kj, alpha, ovl_dmat_data(A), ovl_dmat_ld(A), x.bw, kj > 0 ? kj : 1, x.cw, mi > 0 ? mi : 1, 0,
                   NULL);
  OVL_TRACE_END("mm3d.dgemm", 0);
  double tr = ovl_time();
  st.t_comp += tr - tm;
  OVL_TRACE_BEGIN("mm3d.reduce");
  /* 4-5: reduce(c) -> send(c) */
  if (ovl_pipeline_run_named(plan->ndup, 2, post_c, &x, NULL, k_names_c))
    ovl_fatal(parent, OVL_ERR_MPI, "3D: reduction of C failed: %s", ovl_errmsg());
  st.ncoll++;
  if (x.k == 0) { /* C_ij = beta C_ij + sum */
    ovl_i_kern_scale(C, beta);
    int64_t lm = ovl_dmat_local_rows(C), ln = ovl_dmat_local_cols(C), ld = ovl_dmat_ld(C);
    double *cd = ovl_dmat_data(C);
    for (int64_t col = 0; col < ln; col++)
      for (int64_t r = 0; r < lm; r++) cd[r + col * ld] += x.cr[r + col * lm];
  }
  OVL_TRACE_END("mm3d.reduce", 0);
  st.t_comm += ovl_time() - tr;
  st.steps = 1;
  ovl_free(&x.bw), ovl_free(&x.cw), ovl_free(&x.cr);
  st.t_total = ovl_time() - t0;
  if (stats) *stats = st;
  return OVL_OK;
}
