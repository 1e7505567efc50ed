/* The filtered block-sparse product C = A B (ovl_bsmat_multiply,
 * ovl/bsmat.h) over a p x q grid: SUMMA over the block columns of A.
 *
 * Steps. Block column K of A lives in process column pcol(K) and block
 * row K of B in process row prow(K) (ovl_i_sparse_pcol, ovl_i_sparse_prow).
 * Step s = prow(K) + p pcol(K) (0 <= s < L = p q) takes the inner blocks K
 * of one such pair: A's block columns of the step all live in process
 * column s / p and B's block rows in process row s mod p, so one broadcast
 * along each process row (A's panel: the blocks (I, K) of that row's block
 * rows) and one along each process column (B's panel: the block rows K)
 * carry the step. Grouping all the K of a pair into one step keeps the
 * messages few: p q steps of about nblk / (p q) block columns each.
 *
 * Panels are sparse and of any size: each is packed into one contiguous
 * double buffer (src/sparse/bsmul_impl.h); a panel no broadcast carries
 * (A's on a grid of one process column, B's on one of one process row) is
 * used in place, without a copy of its values. Before any panel moves, the
 * sizes of all of them are summed over the rows and columns (two
 * allreduces), so every rank allocates its buffers and the ranks agree on
 * the outcome (OVL_ERR_NOMEM everywhere) before the data are sent; the
 * panel of step s then travels whole on lane s mod N_DUP.
 *
 * Arrival order: W = min(L, max(2, N_DUP)) steps are in flight, each in its
 * own slot; the rank multiplies whichever step has arrived (both panels),
 * progressing the others between chunks of its block rows, and posts step
 * s + W into the slot it frees. Every rank posts the steps in increasing s,
 * so the broadcasts start in the same order on every lane. */
#include <math.h>
#include <string.h>

#include "ovl/node.h"
#include "ovl/schema.h"
#include "ovl/trace.h"
#include "sparse/bsmul_impl.h"
#include "sparse/sparse_impl.h"

enum { BSMUL_WMAX = OVL_LANES_MAX };

typedef struct bsmul_slot {
  int step;            /* -1: free */
  double *abuf, *bbuf; /* packed panels */
  ovl_i_bspanel pa, pb;
} bsmul_slot;

typedef struct bsmul_ws {
  ovl_bsmat A, B;
  int p, q, myrow, mycol, L, ndup, W;
  int nloc;   /* the steps this rank runs (all L, or a layer's share: ovl_i_sparse_multiply_part) */
  int *steps; /* nloc: their numbers, increasing */
  int *kstep, *kpos;
  int64_t *asz, *bsz;    /* L each: doubles of each step's packed panels */
  double *thr;           /* per local row: the skipping threshold */
  const int64_t *rowcnt; /* per local row: the blocks of A's row here (NULL: A's stored ones) */
  double eps;
  ovl_lanes row, col;
  ovl_coll_cfg cfg;
  bsmul_slot slot[BSMUL_WMAX];
  ovl_req rq[2 * BSMUL_WMAX]; /* slot w: A's broadcast at 2 w, B's at 2 w + 1 */
  ovl_i_bsacc acc;
  ovl_bsmul_stats st;
  MPI_Comm comm;
} bsmul_ws;

static void progress_all(void *ctx) {
  bsmul_ws *w = ctx;
  if (ovl_req_progress(2 * w->W, w->rq, NULL) != OVL_OK)
    ovl_fatal(w->comm, OVL_ERR_MPI, "ovl_bsmat_multiply: a panel broadcast failed: %s", ovl_errmsg());
}

/* Start step s in slot k: pack this rank's panels of the step, if it owns
 * them, and broadcast them (a process row or column of one rank keeps its
 * panel local). */
static void post_step(bsmul_ws *w, int k, int s) {
  bsmul_slot *sl = &w->slot[k];
  ovl_bsmat A = w->A, B = w->B;
  sl->step = s;
  w->rq[2 * k] = w->rq[2 * k + 1] = OVL_REQ_NULL;
  int64_t la = w->asz[s], lb = w->bsz[s];
  int lane = s % w->ndup;
  if (la > 0) {
    int root = s / w->p;
    if (w->q > 1 && w->mycol == root &&
        ovl_i_sparse_panel_pack(&A->loc, A->nrows, A->rows, A->bs, w->kstep, s, 1, sl->abuf, &la) != OVL_OK)
      ovl_fatal(w->comm, OVL_ERR_INTERNAL, "ovl_bsmat_multiply: %s", ovl_errmsg());
    if (w->q > 1) {
      if (ovl_ibcast(sl->abuf, la, root, ovl_lanes_comm(w->row, lane), &w->cfg, &w->rq[2 * k]) != OVL_OK)
        ovl_fatal(w->comm, OVL_ERR_MPI, "ovl_bsmat_multiply: broadcast of an A panel failed: %s", ovl_errmsg());
      if (w->mycol == root) w->st.bytes_sent += 8 * la;
    }
  }
  if (lb > 0) {
    int root = s % w->p;
    if (w->p > 1 && w->myrow == root &&
        ovl_i_sparse_panel_pack(&B->loc, B->nrows, B->rows, B->bs, w->kstep, s, 0, sl->bbuf, &lb) != OVL_OK)
      ovl_fatal(w->comm, OVL_ERR_INTERNAL, "ovl_bsmat_multiply: %s", ovl_errmsg());
    if (w->p > 1) {
      if (ovl_ibcast(sl->bbuf, lb, root, ovl_lanes_comm(w->col, lane), &w->cfg, &w->rq[2 * k + 1]) != OVL_OK)
        ovl_fatal(w->comm, OVL_ERR_MPI, "ovl_bsmat_multiply: broadcast of a B panel failed: %s", ovl_errmsg());
      if (w->myrow == root) w->st.bytes_sent += 8 * lb;
    }
  }
}

/* Multiply the panels of slot k (both here). */
static void compute_slot(bsmul_ws *w, int k) {
  bsmul_slot *sl = &w->slot[k];
  int s = sl->step;
  const int *bs = w->A->bs;
  int nblk = w->A->nblk;
  ovl_bsmat A = w->A, B = w->B;
  ovl_err rc = w->q > 1 ? ovl_i_sparse_panel_unpack(sl->abuf, w->asz[s], bs, nblk, &sl->pa)
                        : ovl_i_sparse_panel_view(&A->loc, A->nrows, A->rows, w->kstep, s, 1, &sl->pa);
  if (rc == OVL_OK)
    rc = w->p > 1 ? ovl_i_sparse_panel_unpack(sl->bbuf, w->bsz[s], bs, nblk, &sl->pb)
                  : ovl_i_sparse_panel_view(&B->loc, B->nrows, B->rows, w->kstep, s, 0, &sl->pb);
  /* with a threshold, B's rows by decreasing norm: the products of a block of A stop at the first skipped one */
  if (rc == OVL_OK && w->eps > 0) rc = ovl_i_sparse_panel_order(&sl->pb);
  if (rc != OVL_OK) ovl_fatal(w->comm, OVL_ERR_NOMEM, "ovl_bsmat_multiply: %s", ovl_errmsg());
  for (int64_t t = 0; t < sl->pb.nr; t++) w->kpos[sl->pb.rowid[t]] = (int)t;
  if (ovl_i_sparse_acc_multiply(&w->acc, &sl->pa, &sl->pb, w->kpos, w->A->lrow, w->thr, progress_all, w) != OVL_OK)
    ovl_fatal(w->comm, OVL_ERR_NOMEM, "ovl_bsmat_multiply: %s", ovl_errmsg());
  sl->step = -1;
}

/* The local checks of the arguments (the same verdict on every rank when
 * the ranks pass the same handles and values). */
ovl_err ovl_i_sparse_multiply_check(ovl_bsmat A, ovl_bsmat B, double eps, int ndup, ovl_bsmat C, const char *fn) {
  if (C == A || C == B)
    return ovl_err_set(OVL_ERR_ARG, "%s: C must be a matrix of its own, not %s", fn, C == A ? "A" : "B");
  if (!(eps >= 0) || isinf(eps))
    return ovl_err_set(OVL_ERR_ARG, "%s: eps must be a finite number >= 0, got %g", fn, eps);
  if (ndup < 0 || ndup > OVL_LANES_MAX)
    return ovl_err_set(OVL_ERR_ARG, "%s: ndup must be in 0..%d (0: the default), got %d", fn, OVL_LANES_MAX, ndup);
  ovl_bsmat M[2] = {B, C};
  const char *nm[2] = {"B", "C"};
  for (int x = 0; x < 2; x++) {
    if (M[x]->p != A->p || M[x]->q != A->q)
      return ovl_err_set(OVL_ERR_ARG, "%s: A is on a %d x %d grid but %s on a %d x %d grid (the same grid is needed)",
                         fn, A->p, A->q, nm[x], M[x]->p, M[x]->q);
    if (M[x]->nblk != A->nblk)
      return ovl_err_set(OVL_ERR_ARG, "%s: A has %d blocks per dimension but %s has %d", fn, A->nblk, nm[x],
                         M[x]->nblk);
    for (int b = 0; b < A->nblk; b++)
      if (M[x]->bs[b] != A->bs[b])
        return ovl_err_set(OVL_ERR_ARG, "%s: block %d is %d wide in A but %d in %s (the blocks must be the same)", fn,
                           b, A->bs[b], M[x]->bs[b], nm[x]);
    if (M[x]->seed != A->seed)
      return ovl_err_set(OVL_ERR_ARG,
                         "%s: A and %s have different block permutations (seeds %llu and %llu): create them alike", fn,
                         nm[x], (unsigned long long)A->seed, (unsigned long long)M[x]->seed);
    if (!ovl_i_sparse_same_layout(A, M[x]))
      return ovl_err_set(OVL_ERR_ARG, "%s: A and %s are on different grids (grids over different ranks)", fn, nm[x]);
  }
  return OVL_OK;
}

static void ws_free(bsmul_ws *w) {
  for (int k = 0; k < BSMUL_WMAX; k++) {
    ovl_free(&w->slot[k].abuf), ovl_free(&w->slot[k].bbuf);
    ovl_i_sparse_panel_free(&w->slot[k].pa), ovl_i_sparse_panel_free(&w->slot[k].pb);
  }
  ovl_free(&w->steps), ovl_free(&w->kstep), ovl_free(&w->kpos), ovl_free(&w->asz), ovl_free(&w->bsz), ovl_free(&w->thr);
  ovl_i_sparse_acc_free(&w->acc);
}

/* The sizes of the panels of every step and the skipping thresholds: one
 * allreduce over the process row (A's panel sizes and the blocks stored in
 * each of A's block rows: n_I) and one over the column (B's panel sizes).
 * rv holds L + nrows values. */
static ovl_err panel_sizes(bsmul_ws *w, int64_t *rv, double eps) {
  ovl_bsmat A = w->A, B = w->B;
  int64_t nr = A->nrows, L = w->L;
  ovl_err rc = OVL_OK;
  for (int s = 0; s < L && rc == OVL_OK; s++) {
    if (s / w->p == w->mycol)
      rc = ovl_i_sparse_panel_pack(&A->loc, A->nrows, A->rows, A->bs, w->kstep, s, 1, NULL, &rv[s]);
    if (rc == OVL_OK && s % w->p == w->myrow)
      rc = ovl_i_sparse_panel_pack(&B->loc, B->nrows, B->rows, B->bs, w->kstep, s, 0, NULL, &w->bsz[s]);
  }
  for (int64_t r = 0; r < nr; r++) rv[L + r] = w->rowcnt ? w->rowcnt[r] : A->loc.rowptr[r + 1] - A->loc.rowptr[r];
  int e1 = MPI_Allreduce(MPI_IN_PLACE, rv, (int)(L + nr), MPI_INT64_T, MPI_SUM, ovl_grid2d_row_comm(A->g));
  int e2 = MPI_Allreduce(MPI_IN_PLACE, w->bsz, (int)L, MPI_INT64_T, MPI_SUM, ovl_grid2d_col_comm(A->g));
  if (rc == OVL_OK && e1 != MPI_SUCCESS) rc = ovl_err_mpi(e1, "MPI_Allreduce");
  if (rc == OVL_OK && e2 != MPI_SUCCESS) rc = ovl_err_mpi(e2, "MPI_Allreduce");
  memcpy(w->asz, rv, sizeof(int64_t) * (size_t)L);
  for (int64_t r = 0; r < nr; r++) w->thr[r] = rv[L + r] > 0 ? eps / (double)rv[L + r] : 0;
  return rc;
}

/* The run of the steps in arrival order (every allocation made). */
static void run_steps(bsmul_ws *w) {
  int next = 0, done = 0;
  for (int k = 0; k < w->W; k++) w->slot[k].step = -1;
  for (int k = 0; k < w->W && next < w->nloc; k++) {
    double t0 = ovl_time();
    post_step(w, k, w->steps[next++]);
    w->st.t_comm += ovl_time() - t0;
  }
  while (done < w->nloc) {
    int k = -1;
    for (int x = 0; x < w->W && k < 0; x++)
      if (w->slot[x].step >= 0 && w->rq[2 * x] == OVL_REQ_NULL && w->rq[2 * x + 1] == OVL_REQ_NULL) k = x;
    if (k < 0) { /* nothing here yet: wait for the next broadcast to complete */
      double t0 = ovl_time();
      int any = -1;
      OVL_TRACE_BEGIN("bsmul.wait");
      ovl_err wrc = ovl_req_waitany(2 * w->W, w->rq, &any);
      OVL_TRACE_END("bsmul.wait", 0);
      if (wrc != OVL_OK || any < 0)
        ovl_fatal(w->comm, OVL_ERR_MPI, "ovl_bsmat_multiply: a panel broadcast failed: %s",
                  any < 0 ? "no broadcast in flight" : ovl_errmsg());
      w->st.t_comm += ovl_time() - t0;
      continue;
    }
    double t0 = ovl_time();
    OVL_TRACE_BEGIN("bsmul.multiply");
    compute_slot(w, k);
    OVL_TRACE_END("bsmul.multiply", 0);
    done++;
    double t1 = ovl_time();
    w->st.t_comp += t1 - t0;
    if (next < w->nloc) post_step(w, k, w->steps[next++]), w->st.t_comm += ovl_time() - t1;
  }
}

/* C's local blocks from the accumulator: each row sorted by column, the
 * blocks kept by the threshold eps. */
static ovl_err build_c(bsmul_ws *w, double eps, ovl_bsmat C) {
  ovl_i_bsacc *acc = &w->acc;
  const int *bs = C->bs;
  ovl_i_sparse_clear(C);
  for (int64_t r = 0; r < acc->nrows; r++) {
    ovl_i_sparse_acc_sort_row(acc, r);
    int bi = C->rows[r];
    for (int64_t e = 0; e < acc->len[r]; e++) {
      int bj = acc->col[r][e];
      const double *x = acc->pool + acc->off[r][e];
      double nrm = ovl_i_sparse_norm(x, (int64_t)bs[bi] * bs[bj]);
      if (ovl_i_sparse_keep(nrm, eps)) OVL_TRY(ovl_i_sparse_append_block(C, r, bj, x, nrm, NULL));
    }
  }
  ovl_i_sparse_finish(C);
  return OVL_OK;
}

ovl_err ovl_bsmat_multiply(ovl_bsmat A, ovl_bsmat B, double eps, int ndup, ovl_bsmat C, ovl_bsmul_stats *stats) {
  const char *fn = "ovl_bsmat_multiply";
  OVL_TRY(ovl_check_handle(A, fn, "A"));
  OVL_TRY(ovl_check_handle(B, fn, "B"));
  OVL_TRY(ovl_check_handle(C, fn, "C"));
  if (stats) memset(stats, 0, sizeof *stats);
  MPI_Comm parent = ovl_grid2d_parent(C->g);
  ovl_err rc = ovl_i_sparse_multiply_check(A, B, eps, ndup, C, fn);
  /* eps and ndup the same on every rank (eps by its bits) */
  int64_t v[4] = {0, ndup, C->arith, C->sym};
  memcpy(&v[0], &eps, sizeof eps);
  const char *names[4] = {"the bits of eps", "ndup", "C's arithmetic", "C's symmetry setting"};
  rc = ovl_err_agree_same(parent, rc, v, names, 4);
  if (rc != OVL_OK || !ovl_grid2d_active(C->g)) return rc;
  return ovl_i_sparse_multiply_part(A, B, eps, ndup, 0, 1, NULL, eps, ovl_grid2d_comm(C->g), C, stats);
}

void ovl_i_sparse_layers(ovl_bsmat A, int c, int *kl) {
  const int L = A->p * A->q, m = (c + L - 1) / L; /* m: the parts of a step */
  for (int b = 0; b < A->nblk; b++) {
    int t = ovl_i_sparse_prow(A, b) + A->p * ovl_i_sparse_pcol(A, b);
    kl[b] = (t + L * ((A->perm[b] / L) % m)) % c;
  }
}

/* The float arrays of a float32 product (the panels' values, the sums) moved
 * from C's spares into the accumulator (to_acc), or back into the spares C
 * does not hold yet, so that C's next float32 product finds them mapped.
 * LOCAL. */
static void float_arrays(ovl_i_bsacc *acc, ovl_bsmat C, int to_acc) {
  float **f[3] = {&acc->fa, &acc->fb, &acc->fpool};
  int64_t *cap[3] = {&acc->cap_fa, &acc->cap_fb, &acc->cap_fpool};
  for (int k = 0; k < 3; k++)
    if (to_acc) *f[k] = C->fspare[k], *cap[k] = C->fspare_cap[k], C->fspare[k] = NULL, C->fspare_cap[k] = 0;
    else if (!C->fspare[k]) C->fspare[k] = *f[k], C->fspare_cap[k] = *cap[k], *f[k] = NULL, *cap[k] = 0;
}

ovl_err ovl_i_sparse_multiply_part(ovl_bsmat A, ovl_bsmat B, double eps, int ndup, int layer, int c,
                                   const int64_t *rowcnt, double eps_keep, MPI_Comm agree, ovl_bsmat C,
                                   ovl_bsmul_stats *stats) {
  bsmul_ws w;
  memset(&w, 0, sizeof w);
  if (stats) memset(stats, 0, sizeof *stats);
  ovl_err rc = OVL_OK;
  w.A = A, w.B = B, w.eps = eps, w.comm = ovl_grid2d_comm(C->g), w.rowcnt = rowcnt;
  w.p = C->p, w.q = C->q, w.myrow = C->myrow, w.mycol = C->mycol;
  w.L = w.p * w.q;
  w.ndup = ndup > 0 ? ndup : ovl_knob_default_int(OVL_KNOB_NDUP, OVL_FAMILY_BSMUL); /* the family's default */
  w.cfg = ovl_coll_cfg_default();
  int nblk = A->nblk;
  int64_t nr = A->nrows, L = w.L, *rv = NULL;
  /* the small arrays, then the sizes of every panel */
  rc = ovl_malloc(sizeof(int) * (size_t)nblk, &w.kstep);
  if (rc == OVL_OK) rc = ovl_malloc(sizeof(int) * (size_t)nblk, &w.kpos);
  if (rc == OVL_OK) rc = ovl_malloc(sizeof(int) * (size_t)L, &w.steps);
  if (rc == OVL_OK) rc = ovl_calloc(sizeof(int64_t) * (size_t)L, &w.asz);
  if (rc == OVL_OK) rc = ovl_calloc(sizeof(int64_t) * (size_t)L, &w.bsz);
  if (rc == OVL_OK) rc = ovl_calloc(sizeof(double) * (size_t)(nr + 1), &w.thr);
  if (rc == OVL_OK) rc = ovl_calloc(sizeof(int64_t) * (size_t)(L + nr + 1), &rv);
  rc = ovl_err_agree(agree, rc);
  if (rc == OVL_OK) {
    for (int b = 0; b < nblk; b++) w.kstep[b] = ovl_i_sparse_prow(A, b) + w.p * ovl_i_sparse_pcol(A, b), w.kpos[b] = -1;
    if (c == 1) /* every step, in order (the empty ones too) */
      for (int s = 0; s < w.L; s++) w.steps[w.nloc++] = s;
    else { /* the layer's inner blocks only (the others: no step), and the steps that hold one of them */
      ovl_i_sparse_layers(A, c, w.kpos); /* (kpos as scratch: reset below) */
      for (int b = 0; b < nblk; b++) w.kstep[b] = w.kpos[b] == layer ? w.kstep[b] : -1, w.kpos[b] = -1;
      for (int b = 0; b < nblk; b++)
        if (w.kstep[b] >= 0) rv[w.kstep[b]] = 1;
      for (int s = 0; s < w.L; s++)
        if (rv[s]) w.steps[w.nloc++] = s, rv[s] = 0;
    }
    rc = ovl_err_agree(agree, panel_sizes(&w, rv, eps));
  }
  ovl_free(&rv);
  int want = w.ndup > 2 ? w.ndup : 2;
  w.W = w.nloc < want ? w.nloc : want;
  /* the buffers of the slots and the accumulator, agreed before data move */
  int64_t amax = 0, bmax = 0;
  for (int s = 0; s < L && rc == OVL_OK; s++) { /* (a panel no broadcast carries is used in place) */
    if (w.q > 1 && w.asz[s] > amax) amax = w.asz[s];
    if (w.p > 1 && w.bsz[s] > bmax) bmax = w.bsz[s];
  }
  /* checked against the node's memory first (agreed); the accumulator of C
   * grows as the products are summed: its size is not known before */
  if (rc == OVL_OK) rc = ovl_check_memory(agree, (int64_t)sizeof(double) * w.W * (amax + bmax + 2), 0);
  for (int k = 0; k < w.W && rc == OVL_OK; k++) {
    rc = ovl_malloc(sizeof(double) * (size_t)(amax + 1), &w.slot[k].abuf);
    if (rc == OVL_OK) rc = ovl_malloc(sizeof(double) * (size_t)(bmax + 1), &w.slot[k].bbuf);
  }
  if (rc == OVL_OK) rc = ovl_i_sparse_acc_init(&w.acc, nblk, A->bs, nr);
  w.acc.single = C->arith == OVL_BSMAT_FLOAT32;
  w.acc.sym = C->sym && c == 1; /* (a layer's share of a 2.5D product: every block, summed later) */
  if (rc == OVL_OK && w.acc.single) float_arrays(&w.acc, C, 1); /* C's previous float32 product's */
  if (rc == OVL_OK) /* the accumulator of C's previous product, already mapped */
    w.acc.pool = C->pool_spare, w.acc.cap_pool = C->pool_spare_cap, C->pool_spare = NULL, C->pool_spare_cap = 0;
  rc = ovl_err_agree(agree, rc);
  if (rc == OVL_OK) rc = ovl_grid2d_lanes(C->g, OVL_DIR_ROW, w.ndup, &w.row);
  if (rc == OVL_OK) rc = ovl_grid2d_lanes(C->g, OVL_DIR_COL, w.ndup, &w.col);
  if (rc == OVL_OK) {
    run_steps(&w);
    double t0 = ovl_time();
    ovl_i_sparse_acc_fold(&w.acc);
    rc = ovl_err_agree(agree, build_c(&w, eps_keep, C));
    if (rc == OVL_OK && w.acc.sym) rc = ovl_i_sparse_mirror(C, ovl_grid2d_comm(C->g));
    w.st.t_comp += ovl_time() - t0;
  }
  if (C->pool_spare == NULL) /* kept for C's next product */
    C->pool_spare = w.acc.pool, C->pool_spare_cap = w.acc.cap_pool, w.acc.pool = NULL, w.acc.cap_pool = 0;
  if (w.acc.single) float_arrays(&w.acc, C, 0); /* kept for C's next one */
  w.st.products = w.acc.products, w.st.skipped = w.acc.skipped;
  if (stats) *stats = w.st;
  ws_free(&w);
  return rc;
}
