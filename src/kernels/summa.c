/* SUMMA (van de Geijn & Watts): C = alpha A B + beta C on a p x q grid.
 *
 * Step t covers global inner indices [k0, k1): the panel is clipped so that
 * A's columns [k0, k1) live in one process column (jA) and B's rows in one
 * process row (iB). Process (i, jA) broadcasts its A panel along the row;
 * process (iB, j) broadcasts its B panel along the column; everyone updates
 * C_ij += alpha * Apanel * Bpanel. Broadcasts are split over N_DUP lanes.
 * With lookahead, panel t+1's broadcasts are posted before panel t's dgemm
 * (double buffers) and progressed between its column chunks.
 *
 * Arrival order (plan->arrival = 1): lane c carries the
 * panel's inner indices ovl_lanes_part(w, N_DUP, c), i.e. whole columns of
 * A's panel and the matching rows of B's panel, which its owner packs by
 * lane (part c is a kl x nb block at element ko * nb). Once both halves of
 * a lane have arrived, C += A(:, part) B(part, :) runs while the other
 * lanes are still in flight, in the order the lanes complete. Without
 * it (the default) the lanes split the packed panels into contiguous parts
 * and the panel's dgemm waits for all of them. */
#include <string.h>

#include "kernels/kimpl.h"

typedef struct summa_ws {
  ovl_dmat A, B;
  ovl_lanes row, col;
  const ovl_plan *plan;
  int p, q, gi, gj, arrival;
  double *apan[2], *bpan[2];
  const double *ap[2];              /* the A panel of each slot (in place at its owner) */
  ovl_req rq[2][2 * OVL_LANES_MAX]; /* per slot: A's lanes, then B's */
  ovl_kstats *st;
} summa_ws;

/* Post the broadcasts of panel pn into buffer slot s. */
static void post_panel(summa_ws *w, const kern_panel *pn, int s) {
  ovl_dmat A = w->A, B = w->B;
  MPI_Comm parent = ovl_grid2d_parent(ovl_dmat_grid(A));
  for (int c = 0; c < 2 * OVL_LANES_MAX; c++) w->rq[s][c] = OVL_REQ_NULL;
  w->ap[s] = w->gj == pn->jA ? ovl_dmat_data(A) + (pn->k0 - ovl_dmat_col_off(A)) * ovl_dmat_ld(A) : w->apan[s];
  int64_t acount = ovl_dmat_local_rows(A) * pn->w, bcount = pn->w * ovl_dmat_local_cols(B);
  int64_t ma = ovl_dmat_local_rows(A), nb = ovl_dmat_local_cols(B);
  if (!w->arrival && acount > 0 && w->q > 1) {
    if (ovl_lanes_ibcast(w->row, (double *)w->ap[s], acount, pn->jA, &w->plan->coll, w->rq[s]) != OVL_OK)
      ovl_fatal(parent, OVL_ERR_MPI, "SUMMA: broadcast of the A panel failed: %s", ovl_errmsg());
  } else if (acount > 0 && w->q > 1) {
    if (ovl_lanes_ibcast_blocks(w->row, (double *)w->ap[s], pn->w, ma, pn->jA, &w->plan->coll, w->rq[s]) != OVL_OK)
      ovl_fatal(parent, OVL_ERR_MPI, "SUMMA: broadcast of the A panel failed: %s", ovl_errmsg());
  }
  if (acount > 0 && w->q > 1) w->st->bytes += 8 * acount, w->st->ncoll++;
  if (w->gi == pn->iB && !w->arrival)
    ovl_i_kern_copy(w->bpan[s], pn->w, ovl_dmat_data(B) + (pn->k0 - ovl_dmat_row_off(B)), ovl_dmat_ld(B), pn->w, nb);
  else if (w->gi == pn->iB) /* packed by lane: part c (rows ko..ko+kl) is kl x nb at element ko * nb */
    for (int c = 0; c < w->plan->ndup; c++) {
      int64_t ko, kl;
      ovl_lanes_part(pn->w, w->plan->ndup, c, &ko, &kl);
      if (kl > 0)
        ovl_i_kern_copy(w->bpan[s] + ko * nb, kl, ovl_dmat_data(B) + (pn->k0 - ovl_dmat_row_off(B) + ko),
                        ovl_dmat_ld(B), kl, nb);
    }
  if (bcount > 0 && w->p > 1 && w->arrival) {
    if (ovl_lanes_ibcast_blocks(w->col, w->bpan[s], pn->w, nb, pn->iB, &w->plan->coll, w->rq[s] + OVL_LANES_MAX) !=
        OVL_OK)
      ovl_fatal(parent, OVL_ERR_MPI, "SUMMA: broadcast of the B panel failed: %s", ovl_errmsg());
    w->st->bytes += 8 * bcount;
    w->st->ncoll++;
  } else if (bcount > 0 && w->p > 1) {
    if (ovl_lanes_ibcast(w->col, w->bpan[s], bcount, pn->iB, &w->plan->coll, w->rq[s] + OVL_LANES_MAX) != OVL_OK)
      ovl_fatal(parent, OVL_ERR_MPI, "SUMMA: broadcast of the B panel failed: %s", ovl_errmsg());
    w->st->bytes += 8 * bcount;
    w->st->ncoll++;
  }
}

/* Post a panel into slot 0 (the first one, and every one without
 * lookahead), counted as communication time, as HSUMMA counts it. */
static void summa_post_timed(summa_ws *w, const kern_panel *pn, ovl_kstats *st) {
  double tp = ovl_time();
  post_panel(w, pn, 0);
  st->t_comm += ovl_time() - tp;
}

static void wait_panel(summa_ws *w, int s) {
  if (ovl_req_waitall(2 * OVL_LANES_MAX, w->rq[s]) != OVL_OK)
    ovl_fatal(ovl_grid2d_parent(ovl_dmat_grid(w->A)), OVL_ERR_MPI, "SUMMA: panel broadcast failed: %s", ovl_errmsg());
}

/* The panel being multiplied in arrival order (slot s) and, with lookahead,
 * the next one (slot 1 - s), posted once all of this one has arrived (as
 * without arrival order, so that it does not share the links with the
 * current panel's lanes). */
typedef struct summa_arr {
  summa_ws *w;
  int s;
  const kern_panel *nxt; /* still to post, or NULL */
  int next_live;         /* the next panel's broadcasts are in flight */
} summa_arr;

static int slot_arrived(const summa_ws *w, int s) {
  for (int c = 0; c < 2 * OVL_LANES_MAX; c++)
    if (w->rq[s][c] != OVL_REQ_NULL) return 0;
  return 1;
}

static void summa_progress(void *ctx) {
  summa_arr *a = ctx;
  summa_ws *w = a->w;
  if (ovl_req_progress(2 * OVL_LANES_MAX, w->rq[a->s], NULL) != OVL_OK ||
      (a->next_live && ovl_req_progress(2 * OVL_LANES_MAX, w->rq[1 - a->s], NULL) != OVL_OK))
    ovl_fatal(ovl_grid2d_parent(ovl_dmat_grid(w->A)), OVL_ERR_MPI, "SUMMA: panel broadcast failed: %s", ovl_errmsg());
  if (a->nxt && slot_arrived(w, a->s)) post_panel(w, a->nxt, 1 - a->s), a->nxt = NULL, a->next_live = 1;
}

/* Panel pn in slot s in arrival order: each lane's product as soon as its A
 * and B parts are both here, in the order the lanes complete; between the
 * column chunks of every product the lanes in flight are progressed and
 * nxt (lookahead; NULL without) is posted once the whole panel is here.
 * Returns the time spent waiting. */
static double panel_by_arrival(summa_ws *w, const kern_panel *pn, int s, const kern_panel *nxt, double alpha,
                               ovl_dmat C) {
  int nd = w->plan->ndup, done[OVL_LANES_MAX] = {0}, left = nd;
  int64_t ma = ovl_dmat_local_rows(w->A), nb = ovl_dmat_local_cols(w->B);
  summa_arr a = {w, s, nxt, 0};
  double waited = 0;
  while (left > 0) {
    if (a.nxt && slot_arrived(w, s)) post_panel(w, a.nxt, 1 - s), a.nxt = NULL, a.next_live = 1;
    int c = -1;
    for (int x = 0; x < nd && c < 0; x++)
      if (!done[x] && w->rq[s][x] == OVL_REQ_NULL && w->rq[s][OVL_LANES_MAX + x] == OVL_REQ_NULL) c = x;
    if (c < 0) { /* nothing new here: wait for the next lane to complete */
      double tw = ovl_time();
      OVL_TRACE_BEGIN("summa.wait");
      int any = -1;
      if (ovl_req_waitany(2 * OVL_LANES_MAX, w->rq[s], &any) != OVL_OK || any < 0)
        ovl_fatal(ovl_grid2d_parent(ovl_dmat_grid(C)), OVL_ERR_MPI, "SUMMA: panel broadcast failed: %s",
                  any < 0 ? "no lane in flight" : ovl_errmsg());
      OVL_TRACE_END("summa.wait", 0);
      waited += ovl_time() - tw;
      continue;
    }
    int64_t ko, kl;
    ovl_lanes_part(pn->w, nd, c, &ko, &kl);
    done[c] = 1, left--;
    OVL_TRACE_BEGIN("summa.dgemm");
    ovl_i_kern_dgemm_fn(ovl_dmat_local_rows(C), ovl_dmat_local_cols(C), kl, alpha, w->ap[s] + ko * ma, ma > 0 ? ma : 1,
                        w->bpan[s] + ko * nb, kl > 0 ? kl : 1, ovl_dmat_data(C), ovl_dmat_ld(C),
                        left > 0 || a.nxt || a.next_live ? summa_progress : NULL, &a);
    OVL_TRACE_END("summa.dgemm", 0);
  }
  return waited;
}

ovl_err ovl_summa(double alpha, ovl_dmat A, ovl_dmat B, double beta, ovl_dmat C, const ovl_plan *plan,
                  ovl_kstats *stats) {
  OVL_TRY(ovl_check_handle(A, "ovl_summa", "A"));
  OVL_TRY(ovl_check_handle(B, "ovl_summa", "B"));
  OVL_TRY(ovl_check_handle(C, "ovl_summa", "C"));
  OVL_TRY(ovl_check_ptr(plan, "ovl_summa", "plan"));
  MPI_Comm parent = ovl_grid2d_parent(ovl_dmat_grid(C));
  ovl_kstats st;
  memset(&st, 0, sizeof st);
  double t0 = ovl_time();
  ovl_err rc = ovl_kernel_check_gemm_shapes(A, B, C);
  if (rc == OVL_OK) rc = ovl_i_kern_check_plan(plan, "SUMMA");
  summa_ws w;
  memset(&w, 0, sizeof w);
  w.A = A, w.B = B, w.plan = plan, w.st = &st, w.arrival = plan && plan->arrival;
  ovl_grid2d_dims(ovl_dmat_grid(C), &w.p, &w.q);
  ovl_grid2d_coords(ovl_dmat_grid(C), &w.gi, &w.gj);
  int64_t K = ovl_dmat_cols(A), b = rc == OVL_OK ? plan->b : 1;
  if (b > K && K > 0) b = K; /* a panel never needs to exceed K */
  int nbuf = rc == OVL_OK && plan->lookahead ? 2 : 1;
  for (int s = 0; s < nbuf && rc == OVL_OK; s++) {
    rc = ovl_malloc(sizeof(double) * (size_t)(ovl_dmat_local_rows(A) * b + 1), &w.apan[s]);
    if (rc == OVL_OK) rc = ovl_malloc(sizeof(double) * (size_t)(ovl_dmat_local_cols(B) * b + 1), &w.bpan[s]);
  }
  rc = ovl_err_agree(parent, rc);
  if (rc == OVL_OK && ovl_grid2d_active(ovl_dmat_grid(C))) {
    rc = ovl_grid2d_lanes(ovl_dmat_grid(C), OVL_DIR_ROW, plan->ndup, &w.row);
    if (rc == OVL_OK) rc = ovl_grid2d_lanes(ovl_dmat_grid(C), OVL_DIR_COL, plan->ndup, &w.col);
  }
  if (rc != OVL_OK || !ovl_grid2d_active(ovl_dmat_grid(C))) {
    for (int s = 0; s < 2; s++) ovl_free(&w.apan[s]), ovl_free(&w.bpan[s]);
    if (stats) *stats = st;
    return rc;
  }
  ovl_i_kern_scale(C, beta);
  int la = plan->lookahead != 0;
  kern_panel cur = {0, 0, 0, 0};
  if (K > 0) cur = kern_panel_at(K, w.p, w.q, b, 0), summa_post_timed(&w, &cur, &st);
  for (int64_t t = 0; K > 0; t++) {
    int s = la ? (int)(t % 2) : 0;
    double tc = ovl_time();
    kern_panel nxt = {K, 0, 0, 0};
    int more = cur.k0 + cur.w < K;
    if (more) nxt = kern_panel_at(K, w.p, w.q, b, cur.k0 + cur.w);
    if (w.arrival) {
      double waited = panel_by_arrival(&w, &cur, s, more && la ? &nxt : NULL, alpha, C);
      st.t_comm += waited;
      st.t_comp += ovl_time() - tc - waited;
      st.steps++;
      if (!more) break;
      if (!la) summa_post_timed(&w, &nxt, &st);
      cur = nxt;
      continue;
    }
    OVL_TRACE_BEGIN("summa.wait");
    wait_panel(&w, s);
    if (more && la) post_panel(&w, &nxt, 1 - s);
    OVL_TRACE_END("summa.wait", 0);
    double tm = ovl_time();
    st.t_comm += tm - tc;
    OVL_TRACE_BEGIN("summa.dgemm");
    ovl_req *pend = la && more ? w.rq[1 - s] : NULL;
    ovl_i_kern_dgemm(ovl_dmat_local_rows(C), ovl_dmat_local_cols(C), cur.w, alpha, w.ap[s],
                     ovl_dmat_local_rows(A) > 0 ? ovl_dmat_local_rows(A) : 1, w.bpan[s], cur.w, ovl_dmat_data(C),
                     ovl_dmat_ld(C), pend ? 2 * OVL_LANES_MAX : 0, pend);
    OVL_TRACE_END("summa.dgemm", 0);
    st.t_comp += ovl_time() - tm;
    st.steps++;
    if (!more) break;
    if (!la) summa_post_timed(&w, &nxt, &st);
    cur = nxt;
  }
  for (int s = 0; s < 2; s++) ovl_free(&w.apan[s]), ovl_free(&w.bpan[s]);
  st.t_total = ovl_time() - t0;
  if (stats) *stats = st;
  return OVL_OK;
}
