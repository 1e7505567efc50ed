/* Symmetric square X -> X^2 with half the flops (ovl/sq.h), float64 or
 * float32, on the 2.5D/Cannon structure of SymmSquareCube's Algorithm 6.
 *
 * P(i,j,k) with block sizes n_i, n_j computes, summed over its layer's
 * Cannon steps (A = X_il, B = X_lj):
 *   i > j : H = X2_ij[:, 0:h]     n_i x h,        h = ceil(n_j/2)   (A B[:, 0:h])
 *   i < j : H = X2_ij[r:n_i, :]   (n_i - r) x n_j, r = ceil(n_i/2)  (A[r:, :] B)
 *   i = j : H = lower triangle of X2_ii            (syrk: B = A^T)
 * (X2_ij[r:, :])^T is X2_ji[:, r:], the right columns of X2_ji: the pair
 * P(i,j), P(j,i) computes the block once. The sum over layers moves H (on
 * diagonal ranks its lower triangle, packed), then plane 0 swaps the halves
 * of each pair (T, transposed into X2 on arrival).
 * Workspace: A (X_ij on layers k > 0; X_ij rounded to float on every layer
 * in single precision), H, T, each sized for doubles, plus the Cannon
 * buffers of each run. */
#include <cblas.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "kernels/kimpl.h"
#include "ovl/sq.h"

enum { TAG_SWAP = 3600, SQ_CHUNK = 256 /* as ovl_i_kern_gemm */ };

/* The parts of P(i,j)'s block: its own (hm x hn) and its partner's (tm x tn). */
typedef struct sq_geom {
  int64_t ni, nj, hm, hn, tm, tn;
} sq_geom;

static sq_geom geom_of(int64_t n, int s, int i, int j) {
  sq_geom g;
  g.ni = ovl_block_len(n, s, i), g.nj = ovl_block_len(n, s, j);
  if (i > j) g.hm = g.ni, g.hn = (g.nj + 1) / 2, g.tm = g.nj / 2, g.tn = g.ni;
  else if (i < j) g.hm = g.ni / 2, g.hn = g.nj, g.tm = g.nj, g.tn = (g.ni + 1) / 2;
  else g.hm = g.hn = g.ni, g.tm = g.tn = 0;
  return g;
}

/* ovl_malloc's size for `elems` doubles (64-byte granularity). */
static double alloc_bytes(double elems) { return ceil(elems * 8.0 / 64.0) * 64.0; }

/* Workspace of P(i,j,k): A, H, T (one spare double each) and the Cannon
 * buffers of a double-precision run (double buffers when a layer takes more
 * than one step; none on one rank). */
static double rank_bytes(int64_t n, int s, int c, int i, int j) {
  sq_geom g = geom_of(n, s, i, j);
  double bytes = alloc_bytes((double)g.ni * (double)g.nj + 1) + alloc_bytes((double)g.hm * (double)g.hn + 1);
  if (i != j) bytes += alloc_bytes((double)g.tm * (double)g.tn + 1);
  double kmax = (double)ovl_block_len(n, s, 0);
  if (s > 1)
    bytes += (s / c > 1 ? 2 : 1) * (alloc_bytes((double)g.ni * kmax + 1) + alloc_bytes(kmax * (double)g.nj + 1));
  return bytes;
}

void ovl_sq_grid_dims(int P, int *s, int *c) {
  int p = 0, q = 0;
  if (P < 1) { /* no ranks, no grid (the shape rules take P < 1 as 1) */
    ovl_grid25d_dims(P, s, c);
    return;
  }
  ovl_grid_shape(OVL_ALGO_SQ, P, &p, &q, s, c);
}

int64_t ovl_sq_memory(int64_t n, int s, int c) {
  if (n < 0 || s < 1 || c < 1 || (s % c && s != 1)) return -1;
  /* blocks shrink with the index: the largest workspace is that of P(0,0),
   * P(1,0) or P(0,1) */
  double m = rank_bytes(n, s, c, 0, 0);
  if (s > 1) {
    double b10 = rank_bytes(n, s, c, 1, 0), b01 = rank_bytes(n, s, c, 0, 1);
    m = m > b10 ? m : b10;
    m = m > b01 ? m : b01;
  }
  return m < 4611686018427387904.0 ? (int64_t)m : -1;
}

struct ovl_sq_s {
  ovl_grid3d g;
  int64_t n;
  int ndup;
  ovl_coll_cfg cfg;
  int s, c, i, j, k, active;
  sq_geom q;
  double *A, *H, *T; /* sized for doubles; float data use their first half */
  int64_t ws;
  ovl_lanes row, col, grd;
  MPI_Comm comm;
  /* per run */
  int single;
  ovl_kstats *st;
};

static const char *const k_prec_names[] = {"double", "single"};

const char *ovl_prec_name(ovl_prec p) {
  return p == OVL_PREC_DOUBLE || p == OVL_PREC_SINGLE ? k_prec_names[p] : "unknown";
}

ovl_err ovl_prec_parse(const char *name, ovl_prec *out) {
  OVL_TRY(ovl_check_ptr(out, "ovl_prec_parse", "out"));
  for (int p = 0; p < 2; p++)
    if (name && strcmp(name, k_prec_names[p]) == 0) {
      *out = (ovl_prec)p;
      return OVL_OK;
    }
  return ovl_err_set(OVL_ERR_ARG, "'%s' is not a precision (double, single)", name ? name : "(null)");
}

int ovl_sq_str(ovl_sq s, char *buf, size_t n) {
  if (s == NULL) return snprintf(buf, n, "sq (none)");
  return snprintf(buf, n, "sq ndup=%d grid=%dx%dx%d n=%" PRId64 " backend=%s", s->ndup, s->s, s->s, s->c, s->n,
                  ovl_backend_name(s->cfg.backend));
}

int64_t ovl_sq_workspace(ovl_sq s) { return s ? s->ws : 0; }

ovl_err ovl_sq_destroy(ovl_sq *sp) {
  if (!sp || !*sp) return OVL_OK;
  ovl_sq s = *sp;
  ovl_free(&s->A), ovl_free(&s->H), ovl_free(&s->T);
  ovl_free(sp);
  return OVL_OK;
}

ovl_err ovl_sq_create(ovl_grid3d g, int64_t n, int ndup, const ovl_coll_cfg *cfg, ovl_sq *out) {
  OVL_TRY(ovl_check_ptr(out, "ovl_sq_create", "out"));
  *out = NULL;
  OVL_TRY(ovl_check_handle(g, "ovl_sq_create", "the 3D grid"));
  MPI_Comm parent = ovl_grid3d_parent(g);
  const int64_t key[] = {n, ndup};
  static const char *const names[] = {"n", "N_DUP"};
  ovl_sq s = NULL;
  ovl_err rc = ovl_calloc(sizeof *s, &s);
  int sd = 0, cd = 0;
  ovl_grid3d_dims(g, &sd, &cd);
  if (rc == OVL_OK) rc = ovl_knob_check(OVL_KNOB_NDUP, ndup, "sq");
  if (rc == OVL_OK && n < 0) rc = ovl_err_set(OVL_ERR_ARG, "matrix size must be >= 0, got %" PRId64, n);
  else if (rc == OVL_OK && (cd < 1 || (sd % cd && sd != 1)))
    rc =
        ovl_err_set(OVL_ERR_GRID, "sq needs the replication c = %d to divide the plane side s = %d (or s = 1)", cd, sd);
  else if (rc == OVL_OK && ovl_sq_memory(n, sd, cd) < 0)
    rc = ovl_err_set(OVL_ERR_NOMEM, "sq: the workspace for n = %" PRId64 " does not fit in 2^62 bytes", n);
  if (rc == OVL_OK) {
    s->g = g, s->n = n, s->ndup = ndup, s->cfg = cfg ? *cfg : ovl_coll_cfg_default();
    s->s = sd, s->c = cd, s->active = ovl_grid3d_active(g);
    ovl_grid3d_coords(g, &s->i, &s->j, &s->k);
  }
  if (rc == OVL_OK && s->active) {
    s->q = geom_of(n, sd, s->i, s->j);
    s->ws = (int64_t)rank_bytes(n, sd, cd, s->i, s->j);
    rc = ovl_calloc(sizeof(double) * (size_t)(s->q.ni * s->q.nj + 1), &s->A);
    if (rc == OVL_OK) rc = ovl_calloc(sizeof(double) * (size_t)(s->q.hm * s->q.hn + 1), &s->H);
    if (rc == OVL_OK && s->i != s->j) rc = ovl_calloc(sizeof(double) * (size_t)(s->q.tm * s->q.tn + 1), &s->T);
  }
  rc = ovl_err_agree_same(parent, rc, key, names, 2);
  if (rc == OVL_OK && s->active) {
    s->comm = ovl_grid3d_comm(g);
    rc = ovl_grid3d_lanes3(g, ndup, &s->row, &s->col, &s->grd);
  }
  if (rc != OVL_OK) {
    ovl_sq_destroy(&s);
    return rc;
  }
  *out = s;
  return OVL_OK;
}

/* ---- local products ------------------------------------------------------------- */

#define FAIL(s, what)                                                                                                  \
  ovl_fatal(ovl_grid3d_parent((s)->g), OVL_ERR_MPI, "sq (%s): %s failed: %s", (s)->single ? "single" : "double",       \
            (what), ovl_errmsg())

static size_t esz_of(int single) { return single ? sizeof(float) : sizeof(double); }

static int64_t ld1(int64_t m) { return m > 0 ? m : 1; }

/* Lower triangle of c(n x n) += a a^T (a is n x k) in column panels: syrk on
 * the panel's diagonal block, gemm below it. */
static void syrk_chunked(int single, int64_t n, int64_t k, const char *a, int64_t lda, char *c, int64_t ldc, int nreq,
                         ovl_req *reqs) {
  if (n <= 0 || k <= 0) return;
  size_t e = esz_of(single);
  int64_t step = nreq > 0 ? SQ_CHUNK : n;
  for (int64_t x = 0; x < n; x += step) {
    int64_t w = n - x < step ? n - x : step;
    char *cx = c + e * (size_t)(x + x * ldc);
    ovl_i_kern_syrk_lower(e, w, k, a + e * (size_t)x, lda, cx, ldc);
    ovl_i_kern_gemm_one(e, 1, n - x - w, w, k, 1.0, a + e * (size_t)(x + w), lda, a + e * (size_t)x, lda, 1.0,
                        cx + e * (size_t)w, ldc);
    if (nreq > 0 && x + w < n) ovl_req_progress(nreq, reqs, NULL);
  }
}

/* One Cannon step's share of the block product (see the top of the file). */
static void sq_mult(void *ctx, const void *a, const void *b, int64_t kl, int nreq, ovl_req *reqs) {
  ovl_sq s = ctx;
  const sq_geom *q = &s->q;
  if (kl <= 0) return;
  const char *ac = a, *bc = b;
  char *h = (char *)s->H;
  size_t e = esz_of(s->single);
  if (s->i > s->j) ovl_i_kern_gemm(e, q->ni, q->hn, kl, 1.0, ac, ld1(q->ni), bc, ld1(kl), h, ld1(q->hm), nreq, reqs);
  else if (s->i < s->j)
    ovl_i_kern_gemm(e, q->hm, q->nj, kl, 1.0, ac + e * (size_t)(q->ni - q->hm), ld1(q->ni), bc, ld1(kl), h, ld1(q->hm),
                    nreq, reqs);
  else syrk_chunked(s->single, q->ni, kl, ac, ld1(q->ni), h, ld1(q->hm), nreq, reqs);
}

/* ---- data movement on plane 0 --------------------------------------------------- */

enum { PUT_PLAIN, PUT_TRANS, PUT_SYM };

/* dst(r, c) for r < m, c < n from src (float or double): src(r, c), src(c, r)
 * (PUT_TRANS), or the lower triangle of src mirrored (PUT_SYM). */
static void put(int single, const void *src, int64_t lds, int mode, double *dst, int64_t ldd, int64_t m, int64_t n) {
  const float *sf = src;
  const double *sd = src;
  /* in 64 x 64 tiles, so that the transposed reads stay in cache */
  enum { TILE = 64 };
  for (int64_t c0 = 0; c0 < n; c0 += TILE)
    for (int64_t r0 = 0; r0 < m; r0 += TILE) {
      int64_t c1 = c0 + TILE < n ? c0 + TILE : n, r1 = r0 + TILE < m ? r0 + TILE : m;
      for (int64_t c = c0; c < c1; c++)
        for (int64_t r = r0; r < r1; r++) {
          int t = mode == PUT_TRANS || (mode == PUT_SYM && r < c);
          int64_t at = t ? c + r * lds : r + c * lds;
          dst[r + c * ldd] = single ? (double)sf[at] : sd[at];
        }
    }
}

/* The lower triangle of the n x n column-major block h (elements of e bytes)
 * packed column by column at its start, in place: column c moves to
 * c n - c (c - 1) / 2 <= c n + c, its old place, so the moves go forward in
 * column order; unpacking goes backward. */
static void tri_pack(char *h, int64_t n, size_t e, int unpack) {
  for (int64_t x = 0; x < n; x++) {
    int64_t c = unpack ? n - 1 - x : x, at = c * n - c * (c - 1) / 2;
    char *full = h + e * (size_t)(c + c * n), *packed = h + e * (size_t)at;
    memmove(unpack ? full : packed, unpack ? packed : full, e * (size_t)(n - c));
  }
}

/* Sum the layers' parts onto plane 0 (in place there), over the grd lanes. */
static void reduce_layers(ovl_sq s, int64_t elems) {
  if (!s->single) {
    if (ovl_lanes_reduce(s->grd, s->H, s->k == 0 ? s->H : NULL, elems, 0, &s->cfg) != OVL_OK)
      FAIL(s, "reduction over the layers");
    return;
  }
  /* floats are summed as floats: the MPI library's reduction on each lane */
  MPI_Request r[OVL_LANES_MAX];
  float *h = (float *)(void *)s->H;
  for (int c = 0; c < s->ndup; c++) {
    int64_t off, len;
    ovl_lanes_part(elems, s->ndup, c, &off, &len);
    r[c] = MPI_REQUEST_NULL;
    if (len == 0) continue;
    if (len > INT_MAX) ovl_fatal(s->comm, OVL_ERR_SIZE, "sq: a reduction part of %" PRId64 " floats", len);
    if (MPI_Ireduce(s->k == 0 ? MPI_IN_PLACE : h + off, s->k == 0 ? h + off : NULL, (int)len, MPI_FLOAT, MPI_SUM, 0,
                    ovl_lanes_comm(s->grd, c), &r[c]) != MPI_SUCCESS)
      FAIL(s, "float reduction over the layers");
  }
  if (MPI_Waitall(s->ndup, r, MPI_STATUSES_IGNORE) != MPI_SUCCESS) FAIL(s, "float reduction over the layers");
}

/* Plane 0: swap the halves of P(i,j) and P(j,i) and fill X2_ij. */
static void assemble(ovl_sq s, ovl_dmat X2) {
  const sq_geom *q = &s->q;
  double *x2 = ovl_dmat_data(X2);
  int64_t ld = ovl_dmat_ld(X2);
  ovl_kstats *st = s->st;
  if (s->i == s->j) {
    put(s->single, s->H, ld1(q->hm), PUT_SYM, x2, ld, q->ni, q->ni);
    return;
  }
  double t = ovl_time();
  OVL_TRACE_BEGIN("sq.swap");
  ovl_req r[2 * OVL_LANES_MAX];
  for (int x = 0; x < 2 * OVL_LANES_MAX; x++) r[x] = OVL_REQ_NULL;
  int peer = ovl_grid3d_rank_of(s->g, s->j, s->i, 0);
  size_t e = esz_of(s->single);
  int64_t nout = kern_dbl_count(q->hm * q->hn, e), nin = kern_dbl_count(q->tm * q->tn, e);
  for (int c = 0; c < s->ndup; c++) {
    int64_t off, len;
    ovl_lanes_part(nin, s->ndup, c, &off, &len);
    if (len && ovl_irecv(s->T + off, len, peer, TAG_SWAP + c, s->comm, &r[c]) != OVL_OK) FAIL(s, "swap of halves");
    ovl_lanes_part(nout, s->ndup, c, &off, &len);
    if (len && ovl_isend(s->H + off, len, peer, TAG_SWAP + c, s->comm, &r[OVL_LANES_MAX + c]) != OVL_OK)
      FAIL(s, "swap of halves");
  }
  st->bytes += (int64_t)e * q->hm * q->hn;
  st->t_comm += ovl_time() - t;
  /* this rank's half while the partner's travels */
  if (s->i > s->j) put(s->single, s->H, ld1(q->hm), PUT_PLAIN, x2, ld, q->ni, q->hn);
  else put(s->single, s->H, ld1(q->hm), PUT_PLAIN, x2 + (q->ni - q->hm), ld, q->hm, q->nj);
  t = ovl_time();
  if (ovl_req_waitall(2 * OVL_LANES_MAX, r) != OVL_OK) FAIL(s, "swap of halves");
  st->t_comm += ovl_time() - t;
  OVL_TRACE_END("sq.swap", 0);
  if (s->i > s->j) put(s->single, s->T, ld1(q->tm), PUT_TRANS, x2 + q->hn * ld, ld, q->ni, q->tm);
  else put(s->single, s->T, ld1(q->tm), PUT_TRANS, x2, ld, q->tn, q->nj);
}

static void run_sq(ovl_sq s, ovl_dmat X, ovl_dmat X2) {
  ovl_kstats *st = s->st;
  const sq_geom *q = &s->q;
  size_t e = esz_of(s->single);
  int64_t nb = q->ni * q->nj, nh = q->hm * q->hn;
  void *a = s->k == 0 && !s->single ? (void *)ovl_dmat_data(X) : (void *)s->A; /* plane 0 sends X_ij in place */
  if (s->single && s->k == 0) {                                                /* round X_ij to float */
    const double *x = ovl_dmat_data(X);
    int64_t ld = ovl_dmat_ld(X);
    float *af = a;
    for (int64_t c = 0; c < q->nj; c++)
      for (int64_t r = 0; r < q->ni; r++) af[r + c * q->ni] = (float)x[r + c * ld];
  }
  /* 1: X_ij to every layer */
  double t = ovl_time();
  OVL_TRACE_BEGIN("sq.bcast");
  if (s->c > 1) {
    if (ovl_lanes_bcast(s->grd, a, kern_dbl_count(nb, e), 0, &s->cfg) != OVL_OK) FAIL(s, "grd broadcast of X");
    st->bytes += (int64_t)e * nb;
    st->ncoll++;
  }
  OVL_TRACE_END("sq.bcast", 0);
  st->t_comm += ovl_time() - t;
  /* 2: this layer's Cannon steps, each rank its share of the block product */
  memset(s->H, 0, e * (size_t)nh);
  if (s->s == 1) { /* a 1 x 1 x c grid: layer k's syrk takes the k-th slice of the inner dimension */
    int64_t off = ovl_block_off(s->n, s->c, s->k), len = ovl_block_len(s->n, s->c, s->k);
    t = ovl_time();
    OVL_TRACE_BEGIN("sq.syrk");
    sq_mult(s, (const char *)a + e * (size_t)(off * q->ni), (const char *)a + e * (size_t)(off * q->ni), len, 0, NULL);
    OVL_TRACE_END("sq.syrk", 0);
    st->t_comp += ovl_time() - t;
    st->steps++;
  } else {
    cannon_layer L;
    memset(&L, 0, sizeof L);
    L.s = s->s, L.i = s->i, L.j = s->j, L.mi = q->ni, L.nj = q->nj, L.K = s->n, L.a0 = a, L.b0 = a;
    L.shA = s->col, L.shB = s->row, L.ndup = s->ndup, L.esz = e, L.mult = sq_mult, L.mctx = s;
    int steps = s->s / s->c;
    if (ovl_i_kern_cannon_steps(s->comm, &L, s->k * steps, steps, 1.0, st) != OVL_OK) FAIL(s, "Cannon steps");
  }
  /* 3: sum the computed parts over the layers onto plane 0 */
  t = ovl_time();
  OVL_TRACE_BEGIN("sq.reduce");
  if (s->c > 1) {
    int diag = s->i == s->j; /* the lower triangle only */
    int64_t nr = diag ? q->ni * (q->ni + 1) / 2 : nh;
    if (diag) tri_pack((char *)s->H, q->ni, e, 0);
    reduce_layers(s, nr);
    if (diag && s->k == 0) tri_pack((char *)s->H, q->ni, e, 1);
    st->bytes += (int64_t)e * nr;
    st->ncoll++;
  }
  OVL_TRACE_END("sq.reduce", 0);
  st->t_comm += ovl_time() - t;
  /* 4: both halves of every block on plane 0 */
  if (s->k == 0) assemble(s, X2);
}

ovl_err ovl_sq_run(ovl_sq s, ovl_dmat X, ovl_dmat X2, ovl_prec prec, double *tr_out, ovl_kstats *stats) {
  ovl_kstats st;
  memset(&st, 0, sizeof st);
  double t0 = ovl_time();
  if (!s) return ovl_err_set(OVL_ERR_ARG, "ovl_sq_run: no sq object");
  MPI_Comm parent = ovl_grid3d_parent(s->g);
  ovl_err rc = OVL_OK;
  if (prec != OVL_PREC_DOUBLE && prec != OVL_PREC_SINGLE)
    rc = ovl_err_set(OVL_ERR_ARG, "ovl_sq_run: unknown precision %d", (int)prec);
  else if (s->active) {
    ovl_grid2d pl = ovl_grid3d_plane(s->g);
    if (!X || !X2 || ovl_dmat_grid(X) != pl || ovl_dmat_grid(X2) != pl)
      rc = ovl_err_set(OVL_ERR_ARG, "X and X^2 must live on the 3D grid's plane (ovl_grid3d_plane)");
    else if (ovl_dmat_rows(X) != s->n || ovl_dmat_cols(X) != s->n || ovl_dmat_rows(X2) != s->n ||
             ovl_dmat_cols(X2) != s->n)
      rc = ovl_err_set(OVL_ERR_SIZE, "X and X^2 must be %" PRId64 " x %" PRId64 " (the size of the plan)", s->n, s->n);
  }
  OVL_TRY(ovl_err_agree(parent, rc));
  double tr = 0;
  if (s->active && s->n > 0) {
    s->single = prec == OVL_PREC_SINGLE, s->st = &st;
    run_sq(s, X, X2);
    if (s->k == 0 && s->i == s->j) {
      const double *x2 = ovl_dmat_data(X2);
      int64_t ld = ovl_dmat_ld(X2);
      for (int64_t r = 0; r < s->q.ni; r++) tr += x2[r + r * ld];
    }
    s->st = NULL;
  }
  /* tr(X2) on every rank of the parent */
  int np = 1;
  MPI_Comm_size(parent, &np);
  if (np > 1) {
    double t = ovl_time();
    OVL_TRACE_BEGIN("sq.trace");
    if (MPI_Allreduce(MPI_IN_PLACE, &tr, 1, MPI_DOUBLE, MPI_SUM, parent) != MPI_SUCCESS)
      ovl_fatal(parent, OVL_ERR_MPI, "sq: allreduce of the trace failed");
    OVL_TRACE_END("sq.trace", 0);
    st.t_comm += ovl_time() - t;
    st.ncoll++;
  }
  if (tr_out) *tr_out = tr;
  st.t_total = ovl_time() - t0;
  if (stats) *stats = st;
  return OVL_OK;
}
