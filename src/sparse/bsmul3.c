/* The 2.5D filtered block-sparse product (ovl_bsmat_multiply3, ovl/bsmat.h)
 * on an s x s x c grid: the matrices live on plane k = 0, planes k > 0 hold
 * workspace matrices of the same layout.
 *
 * 1. Distribution: the inner blocks K are dealt to the layers
 *    (ovl_i_sparse_layers: whole SUMMA steps t mod c while the plane has
 *    at least c steps); plane 0 sends layer k > 0 the blocks of A whose
 *    column is one of its K and the rows K of B (packed as panels,
 *    src/sparse/bsmul_impl.h, on the grd lanes), and the counts of A's
 *    block rows, so that every layer skips by the whole product's
 *    thresholds. Together the layers receive (c - 1) / c of A and of B.
 * 2. Layer k runs the SUMMA of src/sparse/bsmul.c on its plane for its K
 *    (ovl_i_sparse_multiply_part), so that exactly the 2D product's block
 *    products are computed, each on one layer. Its partial C keeps every
 *    block that is not exactly zero.
 * 3. Sum: the partial C's meet on plane 0 by a binomial tree over grd_comm
 *    (round d = 1, 2, 4, ...: layer k with k mod 2d = d sends its packed
 *    blocks to layer k - d, which adds them). The size of every message is
 *    exchanged first and the receivers' memory checked and agreed over the
 *    grid before the blocks move.
 * 4. Filter: plane 0 drops the blocks of norm < eps of the sum.
 * c = 1 runs the 2D product on the plane itself. */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "ovl/node.h"
#include "ovl/schema.h"
#include "sparse/bsmul3.h"
#include "sparse/bsmul_impl.h"
#include "sparse/sparse_impl.h"

/* The packed form of all of M's local blocks (a panel of every row): *len
 * doubles; buf NULL asks for the length. kzero: nblk zeros. LOCAL. */
static ovl_err pack_all(ovl_bsmat M, const int *kzero, double *buf, int64_t *len) {
  return ovl_i_sparse_panel_pack(&M->loc, M->nrows, M->rows, M->bs, kzero, 0, 0, buf, len);
}

/* M's local blocks := the packed blocks in buf (len doubles), of M's layout.
 * LOCAL. */
static ovl_err unpack_into(ovl_bsmat M, const double *buf, int64_t len, ovl_i_bspanel *P) {
  OVL_TRY(ovl_i_sparse_panel_unpack(buf, len, M->bs, M->nblk, P));
  ovl_i_sparse_clear(M);
  OVL_TRY(ovl_i_sparse_reserve(M, P->nnzb, P->nval));
  for (int64_t t = 0; t < P->nr; t++) {
    int64_t lr = M->lrow[P->rowid[t]];
    for (int64_t k = P->rowptr[t]; k < P->rowptr[t + 1]; k++)
      OVL_TRY(ovl_i_sparse_append_block(M, lr, P->colidx[k], P->val + P->valoff[k], P->nrm[k], NULL));
  }
  ovl_i_sparse_finish(M);
  return OVL_OK;
}

/* *out := a buffer of n doubles kept in C for its next products (grown
 * when short: a fresh multi-megabyte buffer costs a page fault every 4
 * KiB). LOCAL. */
static ovl_err msg_buf(ovl_bsmat C, int64_t n, double **out) {
  if (C->msg_spare_cap < n + 1) {
    ovl_free(&C->msg_spare);
    C->msg_spare_cap = 0;
    OVL_TRY(ovl_malloc(sizeof(double) * (size_t)(n + 1), &C->msg_spare));
    C->msg_spare_cap = n + 1;
  }
  *out = C->msg_spare;
  return OVL_OK;
}

/* Step 1: layer k > 0 receives from plane 0 the blocks of A whose column
 * is one of its inner blocks K (kl[K] == k) into A, the rows K of B into
 * Bk, and the counts of A's block rows (rowcnt, every layer: the skipping
 * thresholds are the whole product's). Errors agreed over comm (the 3D
 * grid's). */
static ovl_err distribute(ovl_grid3d g, ovl_bsmat A, ovl_bsmat B, ovl_bsmat Bk, ovl_bsmat C, int k, int c, int nd,
                          const int *kl, int64_t *rowcnt, MPI_Comm comm, ovl_bsmul_stats *st) {
  MPI_Comm grd = ovl_grid3d_grd_comm(g);
  ovl_bsmat M[2] = {A, B};
  int64_t *len = NULL, my[2] = {0, 0}, tot = 0;
  ovl_err rc = ovl_err_agree(comm, ovl_calloc(sizeof(int64_t) * (size_t)(2 * c + 1), &len));
  if (rc != OVL_OK) return rc;
  double t0 = ovl_time();
  /* the slices' sizes (root: every layer's, from 1), A's row counts */
  for (int kk = 1; kk < c && k == 0 && rc == OVL_OK; kk++)
    for (int x = 0; x < 2 && rc == OVL_OK; x++)
      rc = ovl_i_sparse_panel_pack(&M[x]->loc, M[x]->nrows, M[x]->rows, M[x]->bs, kl, kk, x == 0, NULL,
                                   &len[2 * kk + x]);
  for (int64_t r = 0; r < A->nrows && k == 0; r++) rowcnt[r] = A->loc.rowptr[r + 1] - A->loc.rowptr[r];
  int e = MPI_Scatter(len, 2, MPI_INT64_T, my, 2, MPI_INT64_T, 0, grd);
  if (e == MPI_SUCCESS) e = MPI_Bcast(rowcnt, (int)A->nrows, MPI_INT64_T, 0, grd);
  if (rc == OVL_OK && e != MPI_SUCCESS) rc = ovl_err_mpi(e, "MPI_Scatter/MPI_Bcast");
  for (int x = 0; x < 2 * c && rc == OVL_OK; x++) {
    if (len[x] > INT32_MAX || my[x % 2] > INT32_MAX)
      rc = ovl_err_set(OVL_ERR_SIZE, "ovl_bsmat_multiply3: a slice of %" PRId64 " doubles exceeds MPI's int counts",
                       len[x] > my[x % 2] ? len[x] : my[x % 2]);
    tot += len[x];
  }
  rc = ovl_err_agree(comm, rc);
  /* the root's buffers, or the receiver's and its matrices' values (about as many) */
  int64_t need = k == 0 ? tot : 2 * (my[0] + my[1]);
  double *buf = NULL;
  if (rc == OVL_OK) rc = ovl_check_memory(comm, (int64_t)sizeof(double) * need, 0);
  if (rc == OVL_OK) rc = msg_buf(C, k == 0 ? tot : my[0] + my[1], &buf);
  int64_t at = 0;
  for (int kk = 1; kk < c && k == 0 && rc == OVL_OK; kk++)
    for (int x = 0; x < 2 && rc == OVL_OK; x++) {
      rc = ovl_i_sparse_panel_pack(&M[x]->loc, M[x]->nrows, M[x]->rows, M[x]->bs, kl, kk, x == 0, buf + at,
                                   &len[2 * kk + x]);
      at += len[2 * kk + x];
    }
  rc = ovl_err_agree(comm, rc);
  MPI_Request *rq = NULL;
  ovl_lanes lanes = NULL; /* the message of layer kk and matrix x on lane (2 kk + x) mod N_DUP */
  if (rc == OVL_OK) rc = ovl_grid3d_lanes(g, OVL_DIR_GRD, nd, &lanes); /* (collective: every rank, rc agreed) */
  if (rc == OVL_OK) rc = ovl_malloc(sizeof(MPI_Request) * (size_t)(2 * c), &rq);
  rc = ovl_err_agree(comm, rc);
  if (rc == OVL_OK) {
    int nrq = 0;
    e = MPI_SUCCESS;
    at = 0;
    for (int kk = 1; kk < c && k == 0; kk++) /* the root: one message per layer and matrix, the empty ones skipped */
      for (int x = 0; x < 2; x++) {
        int64_t l = len[2 * kk + x];
        double *src = buf + at;
        at += l;
        if (l > 0 && e == MPI_SUCCESS)
          e = MPI_Isend(src, (int)l, MPI_DOUBLE, kk, 10 + x, ovl_lanes_comm(lanes, (2 * kk + x) % nd), &rq[nrq++]);
        st->bytes_sent += 8 * l;
      }
    for (int x = 0; x < 2 && k > 0; x++)
      if (my[x] > 0 && e == MPI_SUCCESS)
        e = MPI_Irecv(buf + (x ? my[0] : 0), (int)my[x], MPI_DOUBLE, 0, 10 + x, ovl_lanes_comm(lanes, (2 * k + x) % nd),
                      &rq[nrq++]);
    if (e == MPI_SUCCESS) e = MPI_Waitall(nrq, rq, MPI_STATUSES_IGNORE);
    if (e != MPI_SUCCESS) ovl_fatal(comm, OVL_ERR_MPI, "ovl_bsmat_multiply3: the slices of A and B failed to move");
    ovl_i_bspanel P;
    memset(&P, 0, sizeof P);
    if (k > 0) rc = unpack_into(A, buf, my[0], &P);
    if (k > 0 && rc == OVL_OK) rc = unpack_into(Bk, buf + my[0], my[1], &P);
    ovl_i_sparse_panel_free(&P);
    rc = ovl_err_agree(comm, rc);
  }
  ovl_free(&rq);
  ovl_free(&len);
  st->t_comm += ovl_time() - t0;
  return rc;
}

/* Step 3: C of every layer summed onto layer 0 (binomial tree over
 * grd_comm); T: scratch of C's layout. Errors agreed over comm. */
static ovl_err sum_layers(ovl_grid3d g, ovl_bsmat C, ovl_bsmat T, int k, int c, const int *kzero, MPI_Comm comm,
                          ovl_bsmul_stats *st) {
  MPI_Comm grd = ovl_grid3d_grd_comm(g);
  ovl_err rc = OVL_OK;
  ovl_i_bspanel P;
  memset(&P, 0, sizeof P);
  for (int d = 1; d < c && rc == OVL_OK; d *= 2) {
    const int sender = k % (2 * d) == d, receiver = k % (2 * d) == 0 && k + d < c;
    double t0 = ovl_time();
    int64_t len = 0;
    int e = MPI_SUCCESS;
    if (sender) {
      rc = pack_all(C, kzero, NULL, &len);
      e = MPI_Send(&len, 1, MPI_INT64_T, k - d, 0, grd);
    } else if (receiver) e = MPI_Recv(&len, 1, MPI_INT64_T, k + d, 0, grd, MPI_STATUS_IGNORE);
    if (rc == OVL_OK && e != MPI_SUCCESS) rc = ovl_err_mpi(e, "MPI_Send/MPI_Recv");
    if (rc == OVL_OK && len > INT32_MAX)
      rc = ovl_err_set(OVL_ERR_SIZE, "ovl_bsmat_multiply3: %" PRId64 " doubles of a partial C exceed MPI's int counts",
                       len);
    /* the receiver: the message, its blocks in T and the sum (C's and T's values) */
    int64_t need = (sender || receiver) ? (int64_t)sizeof(double) * (len * (receiver ? 3 : 1) + C->loc.nval) : 0;
    rc = ovl_err_agree(comm, rc);
    if (rc == OVL_OK) rc = ovl_check_memory(comm, need, 0);
    double *buf = NULL;
    if (rc == OVL_OK && (sender || receiver)) rc = msg_buf(C, len, &buf);
    if (rc == OVL_OK && sender) rc = pack_all(C, kzero, buf, &len);
    rc = ovl_err_agree(comm, rc);
    if (rc == OVL_OK && len > 0) {
      if (sender) e = MPI_Send(buf, (int)len, MPI_DOUBLE, k - d, 1, grd), st->bytes_sent += 8 * len;
      else if (receiver) e = MPI_Recv(buf, (int)len, MPI_DOUBLE, k + d, 1, grd, MPI_STATUS_IGNORE);
      if (e != MPI_SUCCESS) ovl_fatal(comm, OVL_ERR_MPI, "ovl_bsmat_multiply3: a partial C's message failed");
    }
    st->t_comm += ovl_time() - t0;
    t0 = ovl_time();
    if (rc == OVL_OK && receiver && len > 0) {
      rc = unpack_into(T, buf, len, &P);
      if (rc == OVL_OK) rc = ovl_bsmat_axpby(1.0, C, 1.0, T, 0.0, C);
    }
    rc = ovl_err_agree(comm, rc);
    st->t_comp += ovl_time() - t0;
  }
  ovl_i_sparse_panel_free(&P);
  return rc;
}

/* A 64-bit FNV-1a hash of the block sizes (compared between planes). */
static int64_t hash_sizes(ovl_bsmat A) {
  uint64_t h = 1469598103934665603ULL;
  for (int b = 0; b < A->nblk; b++) h = (h ^ (uint64_t)(unsigned)A->bs[b]) * 1099511628211ULL;
  return (int64_t)(h >> 1);
}

/* The product, its errors agreed over `parent` (the grid's parent, or its
 * active ranks' communicator when only they call). */
static ovl_err multiply3(ovl_grid3d g, ovl_bsmat A, ovl_bsmat B, double eps, int ndup, ovl_bsmat C,
                         ovl_bsmul_stats *stats, MPI_Comm parent) {
  const char *fn = "ovl_bsmat_multiply3";
  OVL_TRY(ovl_check_handle(g, fn, "g"));
  OVL_TRY(ovl_check_handle(A, fn, "A"));
  OVL_TRY(ovl_check_handle(B, fn, "B"));
  OVL_TRY(ovl_check_handle(C, fn, "C"));
  if (stats) memset(stats, 0, sizeof *stats);
  ovl_grid2d plane = ovl_grid3d_plane(g);
  ovl_err rc = OVL_OK;
  if (A->g != plane || B->g != plane || C->g != plane)
    rc = ovl_err_set(OVL_ERR_ARG, "%s: %s is not on the 3D grid's plane (create A, B and C on ovl_grid3d_plane(g))", fn,
                     A->g != plane   ? "A"
                     : B->g != plane ? "B"
                                     : "C");
  if (rc == OVL_OK) rc = ovl_i_sparse_multiply_check(A, B, eps, ndup, C, fn);
  /* the same values on every rank, and the same layout on every plane */
  int64_t v[8] = {0, ndup, A->nblk, 0, hash_sizes(A), A == B, C->arith, C->sym};
  memcpy(&v[0], &eps, sizeof eps);
  memcpy(&v[3], &A->seed, sizeof A->seed);
  const char *names[8] = {
      "the bits of eps",         "ndup",           "the block count",     "the permutation seed", "=the block sizes",
      "A = B (the same handle)", "C's arithmetic", "C's symmetry setting"};
  rc = ovl_err_agree_same(parent, rc, v, names, 8);
  if (rc != OVL_OK || !ovl_grid3d_active(g)) return rc;
  MPI_Comm comm = ovl_grid3d_comm(g);
  int s = 0, c = 0, i = 0, j = 0, k = 0;
  ovl_grid3d_dims(g, &s, &c);
  ovl_grid3d_coords(g, &i, &j, &k);
  if (c == 1) return ovl_i_sparse_multiply_part(A, B, eps, ndup, 0, 1, NULL, eps, comm, C, stats);

  ovl_bsmul_stats st, sp;
  memset(&st, 0, sizeof st), memset(&sp, 0, sizeof sp);
  int *kzero = NULL, *kl = NULL;
  int64_t *rowcnt = NULL;
  ovl_bsmat T = NULL, Bk = NULL;
  rc = ovl_calloc(sizeof(int) * (size_t)A->nblk, &kzero);
  if (rc == OVL_OK) rc = ovl_malloc(sizeof(int) * (size_t)A->nblk, &kl);
  if (rc == OVL_OK) rc = ovl_calloc(sizeof(int64_t) * (size_t)(A->nrows + 1), &rowcnt);
  ovl_err rt = C->sum_spare ? OVL_OK : ovl_bsmat_create_like(C, &C->sum_spare); /* collective over the plane */
  T = C->sum_spare;
  /* A = B: layer k > 0 needs A's columns K and B's rows K of its own, two different slices, in two matrices */
  ovl_err rb = A == B && k > 0 && !C->slice_spare ? ovl_bsmat_create_like(C, &C->slice_spare) : OVL_OK;
  if (A == B && k > 0) Bk = C->slice_spare; /* (a plane's ranks all, or none) */
  rc = ovl_err_agree(comm, rc != OVL_OK ? rc : rt != OVL_OK ? rt : rb);
  if (rc == OVL_OK) {
    ovl_i_sparse_layers(A, c, kl);
    if (Bk == NULL) Bk = B;
    const int nd = ndup > 0 ? ndup : ovl_knob_default_int(OVL_KNOB_NDUP, OVL_FAMILY_BSMUL);
    rc = distribute(g, A, B, Bk, C, k, c, nd, kl, rowcnt, comm, &st);
  }
  if (rc == OVL_OK) rc = ovl_i_sparse_multiply_part(A, Bk, eps, ndup, k, c, rowcnt, 0.0, comm, C, &sp);
  if (rc == OVL_OK) rc = sum_layers(g, C, T, k, c, kzero, comm, &st);
  if (rc == OVL_OK) {
    double t0 = ovl_time();
    if (k == 0) rc = ovl_bsmat_filter(C, eps);
    else ovl_i_sparse_clear(C), ovl_i_sparse_finish(C); /* workspace: left empty */
    rc = ovl_err_agree(comm, rc);
    st.t_comp += ovl_time() - t0;
  }
  ovl_free(&kzero), ovl_free(&kl), ovl_free(&rowcnt);
  st.products = sp.products, st.skipped = sp.skipped;
  st.bytes_sent += sp.bytes_sent, st.t_comm += sp.t_comm, st.t_comp += sp.t_comp;
  if (stats) *stats = st;
  return rc;
}

ovl_err ovl_bsmat_multiply3(ovl_grid3d g, ovl_bsmat A, ovl_bsmat B, double eps, int ndup, ovl_bsmat C,
                            ovl_bsmul_stats *stats) {
  return multiply3(g, A, B, eps, ndup, C, stats, ovl_grid3d_parent(g));
}

ovl_err ovl_i_bsmat_multiply3_active(ovl_grid3d g, ovl_bsmat A, ovl_bsmat B, double eps, int ndup, ovl_bsmat C,
                                     ovl_bsmul_stats *stats) {
  return multiply3(g, A, B, eps, ndup, C, stats, ovl_grid3d_comm(g));
}
