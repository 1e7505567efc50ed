/* SymmSquareCube: Algorithms 3, 4, 5 (3D) and 6 (2.5D) of Huang & Chow.
 *
 * Notation of the paper: P(i,j,k); row_comm = P(:,j,k) (rank i), col_comm =
 * P(i,:,k) (rank j), grd_comm = P(i,j,:) (rank k). Block sizes n_x =
 * ovl_block_len(n, s, x). Workspace of P(i,j,k) (3D):
 *   A   ni x nj   D_ij                      (grd bcast from P(i,j,0))
 *   Bt  nk x nj   D_kj = B_jk^T             (row bcast from P(k,j,k))
 *   C   ni x nk   A Bt^T, then A B2
 *   D2r ni x nk   D^2_ik at the reduce root
 *   B2  nj x nk   D^2_jk                    (row bcast from P(j,j,k))
 *   D3r ni x nk   D^3_ik at the reduce root
 * Results land on P(i,k,0): D^2_ik from P(i,i,k) (Alg 4/5) or P(i,k,k)
 * (Alg 3), D^3_ik from P(i,k,k). */
#include <cblas.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "kernels/kimpl.h"
#include "ovl/ssc.h"

enum { TAG_D2 = 3200, TAG_T = 3300, TAG_D3 = 3400 };

struct ovl_ssc_s {
  ovl_grid3d g;
  int64_t n;
  ovl_algo alg;
  int ndup, arrival; /* arrival: Alg. 5's products start on each lane's part as it arrives */
  ovl_coll_cfg cfg;
  int s, c, i, j, k, active;
  int64_t ni, nj, nk;
  double *A, *Bt, *C, *D2r, *B2, *D3r;
  int64_t ws;
  ovl_lanes row, col, grd;
  MPI_Comm comm;
  /* per run */
  ovl_dmat D, D2, D3;
  double *a; /* A, or D's data on plane 0 */
  ovl_kstats *st;
  ovl_req p2p[2 * OVL_LANES_MAX];
};

int ovl_ssc_str(ovl_ssc s, char *buf, size_t n) {
  if (s == NULL) return snprintf(buf, n, "ssc (none)");
  return snprintf(buf, n, "%s ndup=%d grid=%dx%dx%d n=%" PRId64 " backend=%s", ovl_algo_name(s->alg), s->ndup, s->s,
                  s->s, s->c, s->n, ovl_backend_name(s->cfg.backend));
}

int64_t ovl_ssc_workspace(ovl_ssc s) { return s ? s->ws : 0; }

ovl_err ovl_ssc_destroy(ovl_ssc *sp) {
  if (!sp || !*sp) return OVL_OK;
  ovl_ssc s = *sp;
  ovl_free(&s->A), ovl_free(&s->Bt), ovl_free(&s->C), ovl_free(&s->D2r), ovl_free(&s->B2), ovl_free(&s->D3r);
  ovl_free(sp);
  return OVL_OK;
}

static ovl_err ws_alloc(ovl_ssc s, double **p, int64_t elems) {
  s->ws += ((elems * 8 + 63) / 64) * 64;
  return ovl_calloc(sizeof(double) * (size_t)(elems + 1), p);
}

ovl_err ovl_ssc_create(ovl_grid3d g, const ovl_plan *plan, ovl_ssc *out) {
  OVL_TRY(ovl_check_ptr(out, "ovl_ssc_create", "out"));
  *out = NULL;
  OVL_TRY(ovl_check_handle(g, "ovl_ssc_create", "the 3D grid"));
  MPI_Comm parent = ovl_grid3d_parent(g);
  if (!plan) return ovl_err_agree(parent, ovl_err_set(OVL_ERR_ARG, "ovl_ssc_create: no plan given"));
  int64_t n = plan->n;
  ovl_algo alg = plan->algo;
  int ndup = plan->ndup;
  const ovl_coll_cfg *cfg = &plan->coll;
  const int64_t key[] = {n, alg, ndup};
  static const char *const names[] = {"n", "the algorithm", "N_DUP"};
  ovl_ssc s = NULL;
  ovl_err rc = ovl_calloc(sizeof *s, &s);
  int sd = 0, cd = 0;
  ovl_grid3d_dims(g, &sd, &cd);
  if (rc == OVL_OK && (alg < OVL_ALGO_SSC3 || alg > OVL_ALGO_SSC6))
    rc = ovl_err_set(OVL_ERR_ARG, "%s is not a SymmSquareCube algorithm (alg3, alg4, alg5, alg6)", ovl_algo_name(alg));
  if (rc == OVL_OK) rc = ovl_knob_check(OVL_KNOB_NDUP, ndup, ovl_algo_name(alg));
  if (rc == OVL_OK && n < 0) rc = ovl_err_set(OVL_ERR_ARG, "matrix size must be >= 0, got %" PRId64, n);
  else if (rc == OVL_OK && alg != OVL_ALGO_SSC6 && cd != sd)
    rc = ovl_err_set(OVL_ERR_GRID, "%s needs a p x p x p grid, got %d x %d x %d", ovl_algo_name(alg), sd, sd, cd);
  else if (rc == OVL_OK && alg == OVL_ALGO_SSC6 && sd % cd)
    rc = ovl_err_set(OVL_ERR_GRID, "alg6 needs the replication c = %d to divide the plane side s = %d", cd, sd);
  if (rc == OVL_OK) {
    s->g = g, s->n = n, s->alg = alg, s->ndup = ndup, s->cfg = cfg ? *cfg : ovl_coll_cfg_default();
    s->arrival = plan->arrival != 0;
    s->s = sd, s->c = cd, s->active = ovl_grid3d_active(g);
    ovl_grid3d_coords(g, &s->i, &s->j, &s->k);
  }
  if (rc == OVL_OK && s->active) {
    s->ni = ovl_block_len(n, sd, s->i), s->nj = ovl_block_len(n, sd, s->j);
    s->nk = alg == OVL_ALGO_SSC6 ? s->nj : ovl_block_len(n, sd, s->k);
    rc = ws_alloc(s, &s->A, s->ni * s->nj);
    if (rc == OVL_OK) rc = ws_alloc(s, &s->C, s->ni * s->nk);
    /* Alg. 6 receives its own ni x nj block of D^2 here (layers k > 0) */
    if (rc == OVL_OK) rc = ws_alloc(s, &s->B2, alg == OVL_ALGO_SSC6 ? s->ni * s->nj : s->nj * s->nk);
    if (alg != OVL_ALGO_SSC6) {
      if (rc == OVL_OK) rc = ws_alloc(s, &s->Bt, s->nk * s->nj);
      if (rc == OVL_OK) rc = ws_alloc(s, &s->D2r, s->ni * s->nk);
      if (rc == OVL_OK) rc = ws_alloc(s, &s->D3r, s->ni * s->nk);
    }
  }
  rc = ovl_err_agree_same(parent, rc, key, names, 3);
  if (rc == OVL_OK && s->active) {
    s->comm = ovl_grid3d_comm(g);
    rc = ovl_grid3d_lanes3(g, ndup, &s->row, &s->col, &s->grd);
  }
  if (rc != OVL_OK) {
    ovl_ssc_destroy(&s);
    return rc;
  }
  *out = s;
  return OVL_OK;
}

/* ---- helpers ------------------------------------------------------------------ */

#define FAIL(s, what)                                                                                                  \
  ovl_fatal(ovl_grid3d_parent((s)->g), OVL_ERR_MPI, "SymmSquareCube (%s): %s failed: %s", ovl_algo_name((s)->alg),     \
            (what), ovl_errmsg())

static void lanes_op(ovl_ssc s, ovl_err rc, const char *what) {
  if (rc != OVL_OK) FAIL(s, what);
}

/* C = A * B^T (transb) or A * B, ni x nk. */
static void local_mult(ovl_ssc s, const double *b, int transb) {
  double t = ovl_time();
  OVL_TRACE_BEGIN("ssc.dgemm");
  if (s->ni > 0 && s->nk > 0) {
    if (s->nj > 0)
      ovl_i_kern_dgemm_tb(transb, s->ni, s->nk, s->nj, 1.0, s->a, s->ni, b, transb ? s->nk : s->nj, 0.0, s->C, s->ni);
    else memset(s->C, 0, sizeof(double) * (size_t)(s->ni * s->nk));
  }
  OVL_TRACE_END("ssc.dgemm", 0);
  s->st->t_comp += ovl_time() - t;
}

/* Point-to-point elements [off, off + len) of buf as part c (0 <= c <
 * ndup, tag + c) between two ranks of comm; self messages are copies. */
static void p2p_range(ovl_ssc s, int send, double *buf, int64_t off, int64_t len, int peer, int self, int tag,
                      MPI_Comm comm, int c, ovl_req *req, double *copy_to) {
  if (len == 0) return;
  if (peer == self) {
    if (send && copy_to && copy_to != buf) memcpy(copy_to + off, buf + off, sizeof(double) * (size_t)len);
    return;
  }
  ovl_err rc =
      send ? ovl_isend(buf + off, len, peer, tag + c, comm, req) : ovl_irecv(buf + off, len, peer, tag + c, comm, req);
  if (rc != OVL_OK) FAIL(s, "point-to-point message");
  if (send) s->st->bytes += 8 * len;
}

/* Point-to-point part c of n elements (ovl_lanes_part). */
static void p2p_part(ovl_ssc s, int send, double *buf, int64_t n, int peer, int self, int tag, MPI_Comm comm, int c,
                     ovl_req *req, double *copy_to) {
  int64_t off, len;
  ovl_lanes_part(n, s->ndup, c, &off, &len);
  p2p_range(s, send, buf, off, len, peer, self, tag, comm, c, req, copy_to);
}

static void alg5_part(ovl_ssc s, int64_t rows, int64_t cols, int c, int64_t *off, int64_t *len);

static void wait_all(ovl_ssc s, ovl_req *r, int n, const char *what) {
  if (ovl_req_waitall(n, r) != OVL_OK) FAIL(s, what);
}

static void clear(ovl_req *r, int n) {
  for (int x = 0; x < n; x++) r[x] = OVL_REQ_NULL;
}

/* D^2_ik: P(i,i,k) -> P(i,k,0) over the grid communicator (Alg 4/5), in
 * the parts alg5_part gives. The receives (into D2's block on plane 0) of
 * every part: */
static void post_d2_recvs(ovl_ssc s) {
  clear(s->p2p, 2 * OVL_LANES_MAX);
  if (s->k != 0) return;
  int self = ovl_grid3d_rank_of(s->g, s->i, s->j, s->k);
  for (int c = 0; c < s->ndup; c++) { /* P(i,j,0) receives D^2_ij from P(i,i,j) */
    int64_t off, len;
    alg5_part(s, s->ni, s->nj, c, &off, &len);
    p2p_range(s, 0, ovl_dmat_data(s->D2), off, len, ovl_grid3d_rank_of(s->g, s->i, s->i, s->j), self, TAG_D2, s->comm,
              c, &s->p2p[c], NULL);
  }
}

/* The send of part c (once it is final in D2r). */
static void post_d2_send(ovl_ssc s, int c) {
  if (s->i != s->j) return;
  int self = ovl_grid3d_rank_of(s->g, s->i, s->j, s->k);
  int64_t off, len;
  alg5_part(s, s->ni, s->nk, c, &off, &len); /* P(i,i,k) sends D^2_ik to P(i,k,0) */
  p2p_range(s, 1, s->D2r, off, len, ovl_grid3d_rank_of(s->g, s->i, s->k, 0), self, TAG_D2, s->comm, c,
            &s->p2p[OVL_LANES_MAX + c], s->k == 0 ? ovl_dmat_data(s->D2) : NULL);
}

/* All parts posted. */
static void post_d2_moves(ovl_ssc s) {
  post_d2_recvs(s);
  for (int c = 0; c < s->ndup; c++) post_d2_send(s, c);
}

/* D^3_ik (or Alg 3's D^2_ik): P(i,k,k) -> P(i,k,0) along grd_comm, blocking. */
static void move_to_plane0(ovl_ssc s, double *src, double *dst_plane0) {
  ovl_req r[2 * OVL_LANES_MAX];
  clear(r, 2 * OVL_LANES_MAX);
  for (int c = 0; c < s->ndup; c++) {
    MPI_Comm gl = ovl_lanes_comm(s->grd, c);
    if (s->k == 0) p2p_part(s, 0, dst_plane0, s->ni * s->nj, s->j, 0, TAG_D3, gl, c, &r[c], NULL);
    if (s->j == s->k) p2p_part(s, 1, src, s->ni * s->nk, 0, s->k, TAG_D3, gl, c, &r[OVL_LANES_MAX + c], dst_plane0);
  }
  wait_all(s, r, 2 * OVL_LANES_MAX, "move to plane 0");
}

/* ---- Algorithms 3 and 4: blocking phases ---------------------------------------- */

static void run_alg34(ovl_ssc s) {
  ovl_kstats *st = s->st;
  double t = ovl_time();
  /* 1: A_ij = D_ij along grd_comm; 2: D_kj from P(k,j,k) along row_comm */
  OVL_TRACE_BEGIN("ssc.phase1");
  if (s->s > 1) lanes_op(s, ovl_lanes_bcast(s->grd, s->a, s->ni * s->nj, 0, &s->cfg), "grd broadcast of D");
  double *bt = s->i == s->k ? s->a : s->Bt;
  if (s->s > 1) lanes_op(s, ovl_lanes_bcast(s->row, bt, s->nk * s->nj, s->k, &s->cfg), "row broadcast of D");
  st->bytes += 8 * (s->ni * s->nj + s->nk * s->nj);
  OVL_TRACE_END("ssc.phase1", 0);
  st->t_comm += ovl_time() - t;
  /* 3: C = A_ij B_jk = D_ij D_kj^T */
  local_mult(s, bt, 1);
  t = ovl_time();
  OVL_TRACE_BEGIN("ssc.phase2");
  double *b2;
  if (s->alg == OVL_ALGO_SSC4) {
    /* 4: reduce to D^2_ik on P(i,i,k); 5: P(j,j,k) broadcasts D^2_jk along row_comm */
    lanes_op(s, ovl_lanes_reduce(s->col, s->C, s->i == s->j ? s->D2r : NULL, s->ni * s->nk, s->i, &s->cfg),
             "reduction of D^2");
    b2 = s->i == s->j ? s->D2r : s->B2;
    if (s->s > 1) lanes_op(s, ovl_lanes_bcast(s->row, b2, s->nj * s->nk, s->j, &s->cfg), "broadcast of D^2");
  } else {
    /* 4: reduce to D^2_ik on P(i,k,k); 5: send it to P(i,k,0); 6: transpose so
     * that P(k,j,k) holds D^2_jk; 7: broadcast it along row_comm */
    lanes_op(s, ovl_lanes_reduce(s->col, s->C, s->j == s->k ? s->D2r : NULL, s->ni * s->nk, s->k, &s->cfg),
             "reduction of D^2");
    move_to_plane0(s, s->D2r, s->k == 0 ? ovl_dmat_data(s->D2) : NULL);
    ovl_req r[2 * OVL_LANES_MAX];
    clear(r, 2 * OVL_LANES_MAX);
    int self = ovl_grid3d_rank_of(s->g, s->i, s->j, s->k);
    for (int c = 0; c < s->ndup; c++) {
      if (s->i == s->k) /* P(k,j,k) receives D^2_jk from P(j,k,k) */
        p2p_part(s, 0, s->B2, s->nj * s->nk, ovl_grid3d_rank_of(s->g, s->j, s->k, s->k), self, TAG_T, s->comm, c, &r[c],
                 NULL);
      if (s->j == s->k) /* P(i,k,k) sends D^2_ik to P(k,i,k) */
        p2p_part(s, 1, s->D2r, s->ni * s->nk, ovl_grid3d_rank_of(s->g, s->k, s->i, s->k), self, TAG_T, s->comm, c,
                 &r[OVL_LANES_MAX + c], s->B2);
    }
    wait_all(s, r, 2 * OVL_LANES_MAX, "transpose of D^2");
    b2 = s->B2;
    if (s->s > 1) lanes_op(s, ovl_lanes_bcast(s->row, b2, s->nj * s->nk, s->k, &s->cfg), "broadcast of D^2");
  }
  st->bytes += 8 * (s->ni * s->nk + s->nj * s->nk);
  OVL_TRACE_END("ssc.phase2", 0);
  st->t_comm += ovl_time() - t;
  /* 6: C = A_ij D^2_jk */
  local_mult(s, b2, 0);
  t = ovl_time();
  OVL_TRACE_BEGIN("ssc.phase3");
  /* 7: reduce to D^3_ik on P(i,k,k) */
  lanes_op(s, ovl_lanes_reduce(s->col, s->C, s->j == s->k ? s->D3r : NULL, s->ni * s->nk, s->k, &s->cfg),
           "reduction of D^3");
  if (s->alg == OVL_ALGO_SSC4) { /* 8: D^2 to plane 0 */
    post_d2_moves(s);
    wait_all(s, s->p2p, 2 * OVL_LANES_MAX, "move of D^2");
  }
  /* 9 (Alg 3: 10): D^3 to plane 0 */
  move_to_plane0(s, s->D3r, s->k == 0 ? ovl_dmat_data(s->D3) : NULL);
  st->bytes += 8 * 2 * s->ni * s->nk;
  OVL_TRACE_END("ssc.phase3", 0);
  st->t_comm += ovl_time() - t;
}

/* ---- Algorithm 5: the three phases pipelined over lanes ---------------------------- */

/* Part c of a block of `cols` columns of `rows` elements: in arrival order
 * whole columns (so that each lane's part is a self-contained piece of the
 * product that follows), else contiguous elements. */
static void alg5_part(ovl_ssc s, int64_t rows, int64_t cols, int c, int64_t *off, int64_t *len) {
  if (s->arrival) ovl_lanes_part_blocks(cols, rows, s->ndup, c, off, len);
  else ovl_lanes_part(rows * cols, s->ndup, c, off, len);
}

/* Phase 1, part c: grd bcast of D_ij -> row bcast of D_kj (root P(k,j,k)).
 * In arrival order part c is columns [jo, jo + jl) of both (the root's D_kj
 * is its D_ij: ni = nk there). */
static ovl_err post_p1(void *vs, int c, int stage, ovl_req *req) {
  ovl_ssc s = vs;
  int64_t off, len;
  *req = OVL_REQ_NULL;
  if (s->s == 1) return OVL_OK;
  if (stage == 0) {
    alg5_part(s, s->ni, s->nj, c, &off, &len);
    return len ? ovl_ibcast(s->a + off, len, 0, ovl_lanes_comm(s->grd, c), &s->cfg, req) : OVL_OK;
  }
  alg5_part(s, s->nk, s->nj, c, &off, &len);
  double *bt = s->i == s->k ? s->a : s->Bt;
  return len ? ovl_ibcast(bt + off, len, s->k, ovl_lanes_comm(s->row, c), &s->cfg, req) : OVL_OK;
}

/* Phase 2, part c: reduce to D^2_ik on P(i,i,k) -> row bcast of D^2_jk from
 * P(j,j,k). In arrival order part c is columns [ko, ko + kl) of both. */
static ovl_err post_p2(void *vs, int c, int stage, ovl_req *req) {
  ovl_ssc s = vs;
  int64_t off, len;
  *req = OVL_REQ_NULL;
  if (stage == 0) {
    alg5_part(s, s->ni, s->nk, c, &off, &len);
    return len ? ovl_ireduce(s->C + off, s->i == s->j ? s->D2r + off : NULL, len, s->i, ovl_lanes_comm(s->col, c),
                             &s->cfg, req)
               : OVL_OK;
  }
  if (s->s == 1) return OVL_OK;
  alg5_part(s, s->nj, s->nk, c, &off, &len);
  double *b2 = s->i == s->j ? s->D2r : s->B2;
  return len ? ovl_ibcast(b2 + off, len, s->j, ovl_lanes_comm(s->row, c), &s->cfg, req) : OVL_OK;
}

/* Phase 1's product by parts, as each arrives: C += A(:, part) Bt(:, part)^T
 * over the inner columns [jo, jo + jl) (C was zeroed). */
static void p1_done(void *vs, int c) {
  ovl_ssc s = vs;
  int64_t jo, jl;
  ovl_lanes_part(s->nj, s->ndup, c, &jo, &jl);
  if (jl == 0 || s->ni == 0 || s->nk == 0) return;
  double t = ovl_time();
  OVL_TRACE_BEGIN("ssc.dgemm");
  const double *bt = s->i == s->k ? s->a : s->Bt;
  ovl_i_kern_dgemm_tb(1, s->ni, s->nk, jl, 1.0, s->a + jo * s->ni, s->ni, bt + jo * s->nk, s->nk, 1.0, s->C, s->ni);
  OVL_TRACE_END("ssc.dgemm", 0);
  s->st->t_comp += ovl_time() - t;
}

/* Phase 2's product by parts: C(:, part) = A D^2(:, part) over the output
 * columns [ko, ko + kl), whose reduction (stage 0) has completed here. */
static void p2_done(void *vs, int c) {
  ovl_ssc s = vs;
  int64_t ko, kl;
  ovl_lanes_part(s->nk, s->ndup, c, &ko, &kl);
  if (kl == 0 || s->ni == 0) return;
  double t = ovl_time();
  OVL_TRACE_BEGIN("ssc.dgemm");
  const double *b2 = s->i == s->j ? s->D2r : s->B2;
  if (s->nj > 0)
    ovl_i_kern_dgemm_tb(0, s->ni, kl, s->nj, 1.0, s->a, s->ni, b2 + ko * s->nj, s->nj, 0.0, s->C + ko * s->ni, s->ni);
  else memset(s->C + ko * s->ni, 0, sizeof(double) * (size_t)(kl * s->ni));
  OVL_TRACE_END("ssc.dgemm", 0);
  s->st->t_comp += ovl_time() - t;
}

/* Phase 3, part c: reduce to D^3_ik on P(i,k,k) -> send to P(i,k,0). */
static ovl_err post_p3(void *vs, int c, int stage, ovl_req *req) {
  ovl_ssc s = vs;
  int64_t off, len;
  *req = OVL_REQ_NULL;
  double *out = s->k == 0 ? ovl_dmat_data(s->D3) : NULL;
  if (stage == 0) {
    alg5_part(s, s->ni, s->nk, c, &off, &len);
    /* on P(i,0,0) the reduction lands in D^3's block directly */
    double *root = s->j == s->k ? (s->k == 0 ? out : s->D3r) : NULL;
    return len ? ovl_ireduce(s->C + off, root ? root + off : NULL, len, s->k, ovl_lanes_comm(s->col, c), &s->cfg, req)
               : OVL_OK;
  }
  if (s->j == s->k && s->k != 0) { /* P(i,k,k) sends D^3_ik (ni x nk) */
    alg5_part(s, s->ni, s->nk, c, &off, &len);
    if (len == 0) return OVL_OK;
    s->st->bytes += 8 * len;
    return ovl_isend(s->D3r + off, len, 0, TAG_D3 + c, ovl_lanes_comm(s->grd, c), req);
  }
  if (s->k == 0 && s->j != 0) { /* P(i,j,0) receives D^3_ij (ni x nj) from P(i,j,j) */
    alg5_part(s, s->ni, s->nj, c, &off, &len);
    return len ? ovl_irecv(out + off, len, s->j, TAG_D3 + c, ovl_lanes_comm(s->grd, c), req) : OVL_OK;
  }
  return OVL_OK;
}

/* Arrival order: phases 2 and 3 as one chain per part. Stages 0-1 are
 * phase 2's (reduce, broadcast); stage 2 computes the product of part c
 * (output columns [ko, ko + kl)), sends part c of D^2 (final since stage 0)
 * and posts the D^3 reduction of exactly those columns; stage 3 sends them
 * to plane 0. Phase 3 thus takes the parts in the order phase 2's arrived,
 * each as soon as its product is done, instead of after the last one. */
static ovl_err post_p23(void *vs, int c, int stage, ovl_req *req) {
  ovl_ssc s = vs;
  if (stage < 2) return post_p2(vs, c, stage, req);
  if (stage == 2) {
    p2_done(s, c);
    post_d2_send(s, c);
  }
  return post_p3(vs, c, stage - 2, req);
}

static void run_alg5(ovl_ssc s) {
  static const char *const n1[] = {"ssc.D.grd", "ssc.D.row"}, *const n2[] = {"ssc.D2.reduce", "ssc.D2.row"},
                           *const n3[] = {"ssc.D3.reduce", "ssc.D3.send"};
  ovl_kstats *st = s->st;
  int arr = s->arrival;
  if (arr) memset(s->C, 0, sizeof(double) * (size_t)(s->ni * s->nk));
  double t = ovl_time(), comp = st->t_comp;
  OVL_TRACE_BEGIN("ssc.phase1");
  if (ovl_pipeline_run_each(s->ndup, 2, post_p1, s, NULL, n1, arr ? p1_done : NULL)) FAIL(s, "phase 1");
  st->bytes += 8 * (s->ni * s->nj + s->nk * s->nj);
  OVL_TRACE_END("ssc.phase1", 0);
  st->t_comm += ovl_time() - t - (st->t_comp - comp);
  if (!arr) local_mult(s, s->i == s->k ? s->a : s->Bt, 1);
  t = ovl_time(), comp = st->t_comp;
  if (arr) { /* phases 2 and 3 by part */
    static const char *const n23[] = {"ssc.D2.reduce", "ssc.D2.row", "ssc.D3.reduce", "ssc.D3.send"};
    OVL_TRACE_BEGIN("ssc.phase23");
    post_d2_recvs(s);
    if (ovl_pipeline_run_named(s->ndup, 4, post_p23, s, NULL, n23)) FAIL(s, "phases 2 and 3");
    wait_all(s, s->p2p, 2 * OVL_LANES_MAX, "move of D^2");
    st->bytes += 8 * (s->ni * s->nk + s->nj * s->nk) + 8 * 2 * s->ni * s->nk;
    OVL_TRACE_END("ssc.phase23", 0);
    st->t_comm += ovl_time() - t - (st->t_comp - comp);
    return;
  }
  OVL_TRACE_BEGIN("ssc.phase2");
  if (ovl_pipeline_run_each(s->ndup, 2, post_p2, s, NULL, n2, NULL)) FAIL(s, "phase 2");
  st->bytes += 8 * (s->ni * s->nk + s->nj * s->nk);
  OVL_TRACE_END("ssc.phase2", 0);
  st->t_comm += ovl_time() - t - (st->t_comp - comp);
  local_mult(s, s->i == s->j ? s->D2r : s->B2, 0);
  t = ovl_time();
  OVL_TRACE_BEGIN("ssc.phase3");
  post_d2_moves(s); /* the D^2 sends overlap the D^3 reduction */
  if (ovl_pipeline_run_named(s->ndup, 2, post_p3, s, NULL, n3)) FAIL(s, "phase 3");
  wait_all(s, s->p2p, 2 * OVL_LANES_MAX, "move of D^2");
  st->bytes += 8 * 2 * s->ni * s->nk;
  OVL_TRACE_END("ssc.phase3", 0);
  st->t_comm += ovl_time() - t;
}

/* ---- Algorithm 6: 2.5D with Cannon steps ------------------------------------------------ */

static void run_alg6(ovl_ssc s) {
  ovl_kstats *st = s->st;
  int steps = s->s / s->c, t0 = s->k * steps;
  int64_t nb = s->ni * s->nj;
  double t = ovl_time();
  /* 1: D_ij to every layer (as A and as B) */
  OVL_TRACE_BEGIN("ssc.bcast");
  if (s->c > 1) lanes_op(s, ovl_lanes_bcast(s->grd, s->a, nb, 0, &s->cfg), "grd broadcast of D"), st->bytes += 8 * nb;
  OVL_TRACE_END("ssc.bcast", 0);
  st->t_comm += ovl_time() - t;
  /* 2: s/c Cannon steps: C = sum over this layer's steps of D D */
  cannon_layer L;
  memset(&L, 0, sizeof L);
  L.s = s->s, L.i = s->i, L.j = s->j, L.mi = s->ni, L.nj = s->nj, L.K = s->n, L.a0 = s->a, L.b0 = s->a, L.c = s->C;
  L.shA = s->col, L.shB = s->row, L.ndup = s->ndup;
  memset(s->C, 0, sizeof(double) * (size_t)nb);
  if (ovl_i_kern_cannon_steps(s->comm, &L, t0, steps, 1.0, st) != OVL_OK) FAIL(s, "Cannon steps");
  /* 3: D^2_ij on every layer (plane 0 straight into D2) */
  t = ovl_time();
  OVL_TRACE_BEGIN("ssc.allreduce");
  double *d2 = s->k == 0 ? ovl_dmat_data(s->D2) : s->B2;
  if (s->c > 1)
    lanes_op(s, ovl_lanes_allreduce(s->grd, s->C, d2, nb, &s->cfg), "allreduce of D^2"), st->bytes += 8 * nb;
  else memcpy(d2, s->C, sizeof(double) * (size_t)nb);
  OVL_TRACE_END("ssc.allreduce", 0);
  st->t_comm += ovl_time() - t;
  /* 4: Cannon steps with B = D^2 */
  L.b0 = d2;
  memset(s->C, 0, sizeof(double) * (size_t)nb);
  if (ovl_i_kern_cannon_steps(s->comm, &L, t0, steps, 1.0, st) != OVL_OK) FAIL(s, "Cannon steps");
  /* 5: D^3 on plane 0 */
  t = ovl_time();
  OVL_TRACE_BEGIN("ssc.reduce");
  double *d3 = s->k == 0 ? ovl_dmat_data(s->D3) : NULL;
  if (s->c > 1)
    lanes_op(s, ovl_lanes_reduce(s->grd, s->C, d3, nb, 0, &s->cfg), "reduction of D^3"), st->bytes += 8 * nb;
  else memcpy(d3, s->C, sizeof(double) * (size_t)nb);
  OVL_TRACE_END("ssc.reduce", 0);
  st->t_comm += ovl_time() - t;
}

ovl_err ovl_ssc_run(ovl_ssc s, ovl_dmat D, ovl_dmat D2, ovl_dmat D3, ovl_kstats *stats) {
  ovl_kstats st;
  memset(&st, 0, sizeof st);
  double t0 = ovl_time();
  MPI_Comm parent = s ? ovl_grid3d_parent(s->g) : MPI_COMM_NULL;
  ovl_err rc = OVL_OK;
  if (!s) return ovl_err_set(OVL_ERR_ARG, "ovl_ssc_run: no SymmSquareCube object");
  if (s->active) {
    ovl_grid2d pl = ovl_grid3d_plane(s->g);
    if (ovl_dmat_grid(D) != pl || ovl_dmat_grid(D2) != pl || ovl_dmat_grid(D3) != pl)
      rc = ovl_err_set(OVL_ERR_ARG, "D, D^2 and D^3 must live on the 3D grid's plane (ovl_grid3d_plane)");
    else if (ovl_dmat_rows(D) != s->n || ovl_dmat_cols(D) != s->n || ovl_dmat_rows(D2) != s->n ||
             ovl_dmat_cols(D2) != s->n || ovl_dmat_rows(D3) != s->n || ovl_dmat_cols(D3) != s->n)
      rc = ovl_err_set(OVL_ERR_SIZE, "D, D^2 and D^3 must be %" PRId64 " x %" PRId64 " (the size of the plan)", s->n,
                       s->n);
  }
  OVL_TRY(ovl_err_agree(parent, rc));
  if (s->active && s->n > 0) {
    s->D = D, s->D2 = D2, s->D3 = D3, s->st = &st;
    s->a = s->k == 0 ? ovl_dmat_data(D) : s->A; /* plane 0 broadcasts D's block in place */
    if (s->alg == OVL_ALGO_SSC5) run_alg5(s);
    else if (s->alg == OVL_ALGO_SSC6) run_alg6(s);
    else run_alg34(s);
    st.steps = 1;
    st.ncoll = 1;
  }
  st.t_total = ovl_time() - t0;
  if (stats) *stats = st;
  return OVL_OK;
}
