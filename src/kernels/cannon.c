/* Cannon's algorithm on a square s x s grid, and 2.5D multiplication
 * (Solomonik & Demmel) on s x s x c, whose layers each run s/c Cannon steps.
 *
 * At Cannon step t process (i, j) multiplies A(i, l) B(l, j) with
 * l = (i + j + t) mod s. The skew brings A(i, l0) along the process row and
 * B(l0, j) along the process column; after each step A moves one process to
 * the left and B one process up. The next step's shifts are in flight while
 * the current step's dgemm runs (double buffers), split over N_DUP lanes.
 * Blocks may be uneven: the inner length of step t is the length of block l
 * of the inner dimension. */
#include <string.h>

#include "kernels/kimpl.h"

static int64_t klen(const cannon_layer *L, int l) { return ovl_block_len(L->K, L->s, l); }

/* Move this rank's block (nout elements of esz bytes) to `to` and receive
 * block `l` (nin elements) from `from` over lanes, as whole doubles. */
static void shift(MPI_Comm parent, ovl_lanes lanes, size_t esz, int to, const void *out, int64_t nout, int from,
                  void *in, int64_t nin, int self, ovl_req *reqs) {
  for (int c = 0; c < 2 * OVL_LANES_MAX; c++) reqs[c] = OVL_REQ_NULL;
  if (to == self && from == self) {
    if (in != out) memcpy(in, out, esz * (size_t)nin);
    return;
  }
  if (ovl_lanes_irecv(lanes, in, kern_dbl_count(nin, esz), from, reqs) != OVL_OK ||
      ovl_lanes_isend(lanes, out, kern_dbl_count(nout, esz), to, reqs + OVL_LANES_MAX) != OVL_OK)
    ovl_fatal(parent, OVL_ERR_MPI, "Cannon: shift failed: %s", ovl_errmsg());
}

/* Run nsteps Cannon steps starting at step t0: c += alpha * sum A(i,l) B(l,j). */
ovl_err ovl_i_kern_cannon_steps(MPI_Comm parent, cannon_layer *L, int t0, int nsteps, double alpha, ovl_kstats *st) {
  int s = L->s, i = L->i, j = L->j;
  int64_t kmax = ovl_block_len(L->K, s, 0);
  size_t esz = L->esz ? L->esz : sizeof(double);
  char *ab[2] = {NULL, NULL}, *bb[2] = {NULL, NULL};
  ovl_err rc = OVL_OK;
  for (int x = 0; x < (nsteps > 1 ? 2 : 1) && rc == OVL_OK; x++) { /* one spare double: floats pad to doubles */
    rc = ovl_malloc(esz * (size_t)(L->mi * kmax) + sizeof(double), &ab[x]);
    if (rc == OVL_OK) rc = ovl_malloc(esz * (size_t)(kmax * L->nj) + sizeof(double), &bb[x]);
  }
  rc = ovl_err_agree(parent, rc);
  if (rc != OVL_OK) goto done;
  ovl_req ra[2 * OVL_LANES_MAX], rb[2 * OVL_LANES_MAX];
  /* skew: A(i, j) goes to (i, j - i - t0), A(i, l0) comes from (i, l0) */
  int l0 = (i + j + t0) % s;
  double tc = ovl_time();
  OVL_TRACE_BEGIN("cannon.skew");
  shift(parent, L->shA, esz, ((j - i - t0) % s + 2 * s) % s, L->a0, L->mi * klen(L, j), l0, ab[0], L->mi * klen(L, l0),
        j, ra);
  shift(parent, L->shB, esz, ((i - j - t0) % s + 2 * s) % s, L->b0, klen(L, i) * L->nj, l0, bb[0], klen(L, l0) * L->nj,
        i, rb);
  if (ovl_req_waitall(2 * OVL_LANES_MAX, ra) || ovl_req_waitall(2 * OVL_LANES_MAX, rb))
    ovl_fatal(parent, OVL_ERR_MPI, "Cannon: skew failed: %s", ovl_errmsg());
  OVL_TRACE_END("cannon.skew", 0);
  st->t_comm += ovl_time() - tc;
  st->bytes += (int64_t)esz * (L->mi * klen(L, l0) + klen(L, l0) * L->nj);
  for (int t = 0; t < nsteps; t++) {
    int cur = t % 2, l = (i + j + t0 + t) % s, ln = (l + 1) % s;
    int more = t + 1 < nsteps;
    if (more) { /* A to the left, B up; the next blocks arrive from the right and from below */
      shift(parent, L->shA, esz, (j - 1 + s) % s, ab[cur], L->mi * klen(L, l), (j + 1) % s, ab[1 - cur],
            L->mi * klen(L, ln), j, ra);
      shift(parent, L->shB, esz, (i - 1 + s) % s, bb[cur], klen(L, l) * L->nj, (i + 1) % s, bb[1 - cur],
            klen(L, ln) * L->nj, i, rb);
      st->bytes += (int64_t)esz * (L->mi * klen(L, ln) + klen(L, ln) * L->nj);
    }
    double tm = ovl_time();
    OVL_TRACE_BEGIN("cannon.dgemm");
    if (L->mult) L->mult(L->mctx, ab[cur], bb[cur], klen(L, l), more ? 2 * OVL_LANES_MAX : 0, ra);
    else
      ovl_i_kern_dgemm(L->mi, L->nj, klen(L, l), alpha, (const double *)(void *)ab[cur], L->mi > 0 ? L->mi : 1,
                       (const double *)(void *)bb[cur], klen(L, l) > 0 ? klen(L, l) : 1, L->c, L->mi > 0 ? L->mi : 1,
                       more ? 2 * OVL_LANES_MAX : 0, ra);
    OVL_TRACE_END("cannon.dgemm", 0);
    double tw = ovl_time();
    st->t_comp += tw - tm;
    OVL_TRACE_BEGIN("cannon.shift");
    if (more && (ovl_req_waitall(2 * OVL_LANES_MAX, ra) || ovl_req_waitall(2 * OVL_LANES_MAX, rb)))
      ovl_fatal(parent, OVL_ERR_MPI, "Cannon: shift failed: %s", ovl_errmsg());
    OVL_TRACE_END("cannon.shift", 0);
    st->t_comm += ovl_time() - tw;
    st->steps++;
  }
done:
  for (int x = 0; x < 2; x++) ovl_free(&ab[x]), ovl_free(&bb[x]);
  return rc;
}

ovl_err ovl_cannon(double alpha, ovl_dmat A, ovl_dmat B, double beta, ovl_dmat C, const ovl_plan *plan,
                   ovl_kstats *stats) {
  OVL_TRY(ovl_check_handle(A, "ovl_cannon", "A"));
  OVL_TRY(ovl_check_handle(B, "ovl_cannon", "B"));
  OVL_TRY(ovl_check_handle(C, "ovl_cannon", "C"));
  OVL_TRY(ovl_check_ptr(plan, "ovl_cannon", "plan"));
  MPI_Comm parent = ovl_grid2d_parent(ovl_dmat_grid(C));
  ovl_kstats st;
  memset(&st, 0, sizeof st);
  double t0 = ovl_time();
  int p, q, i, j;
  ovl_grid2d_dims(ovl_dmat_grid(C), &p, &q);
  ovl_grid2d_coords(ovl_dmat_grid(C), &i, &j);
  ovl_err rc = ovl_kernel_check_gemm_shapes(A, B, C);
  if (rc == OVL_OK) rc = ovl_i_kern_check_plan(plan, "Cannon");
  if (rc == OVL_OK && p != q) rc = ovl_err_set(OVL_ERR_GRID, "Cannon needs a square grid, got %d x %d", p, q);
  rc = ovl_err_agree(parent, rc);
  cannon_layer L;
  memset(&L, 0, sizeof L);
  if (rc == OVL_OK && ovl_grid2d_active(ovl_dmat_grid(C))) {
    /* the 2D grid's row communicator varies j: A shifts along it */
    rc = ovl_grid2d_lanes(ovl_dmat_grid(C), OVL_DIR_ROW, plan->ndup, &L.shA);
    if (rc == OVL_OK) rc = ovl_grid2d_lanes(ovl_dmat_grid(C), OVL_DIR_COL, plan->ndup, &L.shB);
  }
  if (rc != OVL_OK || !ovl_grid2d_active(ovl_dmat_grid(C))) {
    if (stats) *stats = st;
    return rc;
  }
  L.s = p, L.i = i, L.j = j, L.mi = ovl_dmat_local_rows(C), L.nj = ovl_dmat_local_cols(C), L.K = ovl_dmat_cols(A),
  L.a0 = ovl_dmat_data(A), L.b0 = ovl_dmat_data(B), L.c = ovl_dmat_data(C);
  L.ndup = plan->ndup;
  ovl_i_kern_scale(C, beta);
  rc = ovl_i_kern_cannon_steps(ovl_grid2d_comm(ovl_dmat_grid(C)), &L, 0, p, alpha, &st);
  st.t_total = ovl_time() - t0;
  if (stats) *stats = st;
  return rc;
}

ovl_err ovl_mm25d(ovl_grid3d g, double alpha, ovl_dmat A, ovl_dmat B, double beta, ovl_dmat C, const ovl_plan *plan,
                  ovl_kstats *stats) {
  OVL_TRY(ovl_check_handle(g, "ovl_mm25d", "the 3D grid"));
  OVL_TRY(ovl_check_handle(A, "ovl_mm25d", "A"));
  OVL_TRY(ovl_check_handle(B, "ovl_mm25d", "B"));
  OVL_TRY(ovl_check_handle(C, "ovl_mm25d", "C"));
  OVL_TRY(ovl_check_ptr(plan, "ovl_mm25d", "plan"));
  MPI_Comm parent = ovl_grid3d_parent(g);
  ovl_kstats st;
  memset(&st, 0, sizeof st);
  double t0 = ovl_time();
  int s, c, i, j, k;
  ovl_grid3d_dims(g, &s, &c);
  ovl_grid3d_coords(g, &i, &j, &k);
  int active = ovl_grid3d_active(g);
  ovl_err rc = OVL_OK;
  if (active) rc = ovl_kernel_check_gemm_shapes(A, B, C);
  if (rc == OVL_OK && active && ovl_dmat_grid(A) != ovl_grid3d_plane(g))
    rc = ovl_err_set(OVL_ERR_ARG, "2.5D: the operands must live on the 3D grid's plane (ovl_grid3d_plane)");
  if (rc == OVL_OK) rc = ovl_i_kern_check_plan(plan, "2.5D");
  if (rc == OVL_OK && s % c)
    rc = ovl_err_set(OVL_ERR_GRID, "2.5D needs the replication c = %d to divide the plane side s = %d", c, s);
  double *cw = NULL;
  if (rc == OVL_OK && active && k > 0)
    rc = ovl_calloc(sizeof(double) * (size_t)(ovl_dmat_local_rows(C) * ovl_dmat_local_cols(C) + 1), &cw);
  rc = ovl_err_agree(parent, rc);
  cannon_layer L;
  memset(&L, 0, sizeof L);
  ovl_lanes grd = NULL;
  if (rc == OVL_OK && active) {
    /* col_comm P(i,:,k) varies j: A shifts along it; B along row_comm */
    rc = ovl_grid3d_lanes3(g, plan->ndup, &L.shB, &L.shA, &grd);
  }
  if (rc != OVL_OK || !active) {
    ovl_free(&cw);
    if (stats) *stats = st;
    return rc;
  }
  MPI_Comm comm = ovl_grid3d_comm(g);
  /* 1: replicate A and B from plane 0 along grd_comm */
  double tc = ovl_time();
  if (c > 1) {
    if (ovl_lanes_bcast(grd, ovl_dmat_data(A), ovl_dmat_local_rows(A) * ovl_dmat_local_cols(A), 0, &plan->coll) ||
        ovl_lanes_bcast(grd, ovl_dmat_data(B), ovl_dmat_local_rows(B) * ovl_dmat_local_cols(B), 0, &plan->coll))
      ovl_fatal(comm, OVL_ERR_MPI, "2.5D: replication failed: %s", ovl_errmsg());
    st.bytes += 8 * (ovl_dmat_local_rows(A) * ovl_dmat_local_cols(A) + ovl_dmat_local_rows(B) * ovl_dmat_local_cols(B));
    st.ncoll += 2;
  }
  st.t_comm += ovl_time() - tc;
  /* 2: s/c Cannon steps per layer, starting at step k*s/c */
  if (k == 0) ovl_i_kern_scale(C, beta);
  L.s = s, L.i = i, L.j = j, L.mi = ovl_dmat_local_rows(C), L.nj = ovl_dmat_local_cols(C), L.K = ovl_dmat_cols(A),
  L.a0 = ovl_dmat_data(A), L.b0 = ovl_dmat_data(B);
  L.c = k == 0 ? ovl_dmat_data(C) : cw;
  L.ndup = plan->ndup;
  rc = ovl_i_kern_cannon_steps(comm, &L, k * (s / c), s / c, alpha, &st);
  /* 3: sum the layers into plane 0 */
  tc = ovl_time();
  if (rc == OVL_OK && c > 1) {
    double *src = k == 0 ? ovl_dmat_data(C) : cw;
    if (ovl_lanes_reduce(grd, src, k == 0 ? ovl_dmat_data(C) : NULL, ovl_dmat_local_rows(C) * ovl_dmat_local_cols(C), 0,
                         &plan->coll))
      ovl_fatal(comm, OVL_ERR_MPI, "2.5D: reduction failed: %s", ovl_errmsg());
    st.bytes += 8 * ovl_dmat_local_rows(C) * ovl_dmat_local_cols(C);
    st.ncoll++;
  }
  st.t_comm += ovl_time() - tc;
  ovl_free(&cw);
  st.t_total = ovl_time() - t0;
  if (stats) *stats = st;
  return rc;
}
