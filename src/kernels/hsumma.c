/* Hierarchical SUMMA (Quintin, Hasanov & Lastovetsky).
 *
 * The p x q grid is split into I x J groups of bi x bj = (p/I) x (q/J)
 * processes. An outer panel [k0, k0 + M) of A's columns (owned by process
 * column jA = gjA*bj + ljA) first travels between groups: along outer_row
 * (same i, same lj, across group columns) among the processes with
 * lj == ljA. Then, inside every group, sub-panels of width b travel along
 * inner_row from the group's column ljA. B's panels move the same way along
 * the columns. The A and B broadcasts of a level are posted together, each
 * split over N_DUP lanes, as SUMMA's are.
 *
 * Both levels work in place in one buffer pair per outer panel: A's outer
 * panel is ma x w (sub-panel kk at column kk), B's is packed by sub-panels
 * (sub-panel kk, ww x nb, at element kk * nb), so the inner broadcasts send
 * and receive parts of the outer buffers.
 *
 * With lookahead (two buffer pairs): outer panel o+1's broadcasts are posted
 * when outer panel o starts and progressed during its dgemms; the inner
 * broadcasts of step t+1 are posted before step t's dgemm. When step t+1
 * opens outer panel o+1, its inner broadcasts can start only once panel o+1
 * has arrived: they are posted during step t's dgemm as soon as it has (or
 * after the dgemm, waiting for it).
 *
 * G = 1 has one-process outer communicators and G = P one-process inner
 * ones: HSUMMA then does what SUMMA does with panel b (G = 1) or M (G = P),
 * with and without lookahead.
 *
 * Arrival order (plan->arrival = 1) acts on the inner broadcasts, as
 * SUMMA's does on its panels: inner lane c carries sub-panel columns
 * ovl_lanes_part(ww, N_DUP, c) of A and the matching rows of B (the owner of
 * B's rows packs each sub-panel by lane: part c, kl x nb, at element
 * kk * nb + ko * nb), and C += A(:, part) B(part, :) runs for each lane as
 * soon as both halves are here, in the order the lanes complete (a sum in
 * another order: equal to the in-order result up to rounding). The outer
 * level keeps its order: every member of a group must post the group's inner
 * broadcasts in the same order, so a rank cannot reorder sub-panels by what
 * reached it first. With G = P (groups of one process, P > 1) there are no
 * inner broadcasts to take in arrival order and the option is refused. With
 * lookahead the next step's inner broadcasts are posted once all of this
 * step's lanes have arrived (as SUMMA posts its next panel). */
#include <string.h>

#include "kernels/kimpl.h"

/* One step: sub-panel [kk, kk + ww) of outer panel o, held in buffer slot s. */
typedef struct hs_step {
  kern_panel o;
  int slot;
  int64_t kk, ww;
} hs_step;

typedef struct hs_ws {
  MPI_Comm parent;
  ovl_dmat A, B;
  const ovl_plan *plan;
  ovl_kstats *st;
  ovl_lanes orow, ocol, irow, icol;
  int64_t K, M, b, ma, nb; /* ma: A's local rows, nb: B's local columns */
  int p, q, gi, gj, bi, bj, li, lj, la, arr;
  double *abuf[2], *bbuf[2];
  const double *ap[2];               /* A's outer panel of each slot (in place at its owner) */
  ovl_req orq[2 * OVL_LANES_MAX];    /* the outer broadcasts in flight: A's lanes, then B's */
  ovl_req irq[2][2 * OVL_LANES_MAX]; /* inner broadcasts, by step parity */
  int defer, dslot;                  /* the next step's inner broadcasts wait for its outer panel */
  hs_step dstep;
} hs_ws;

/* Post a broadcast of n elements over lanes L into reqs (nothing when L has
 * one process or n = 0). */
static void hs_ibcast(hs_ws *w, ovl_lanes L, double *buf, int64_t n, int root, ovl_req *reqs, const char *what) {
  if (n == 0 || L == NULL || ovl_lanes_size(L) <= 1) return;
  if (ovl_lanes_ibcast(L, buf, n, root, &w->plan->coll, reqs) != OVL_OK)
    ovl_fatal(w->parent, OVL_ERR_MPI, "HSUMMA: %s broadcast failed: %s", what, ovl_errmsg());
  w->st->bytes += 8 * n;
  w->st->ncoll++;
}

static void hs_progress_reqs(hs_ws *w, int n, ovl_req *reqs) {
  if (ovl_req_progress(n, reqs, NULL) != OVL_OK)
    ovl_fatal(w->parent, OVL_ERR_MPI, "HSUMMA: panel broadcast failed: %s", ovl_errmsg());
}

static void hs_wait(hs_ws *w, int n, ovl_req *reqs) {
  if (ovl_req_waitall(n, reqs) != OVL_OK)
    ovl_fatal(w->parent, OVL_ERR_MPI, "HSUMMA: panel broadcast failed: %s", ovl_errmsg());
}

/* Whether every outer broadcast has completed here. */
static int hs_outer_arrived(const hs_ws *w) {
  for (int c = 0; c < 2 * OVL_LANES_MAX; c++)
    if (w->orq[c] != OVL_REQ_NULL) return 0;
  return 1;
}

/* Post outer panel o's broadcasts between groups into slot s; the owner of
 * B's rows packs them by sub-panels first. */
static void post_outer(hs_ws *w, const kern_panel *o, int s) {
  ovl_dmat A = w->A, B = w->B;
  for (int c = 0; c < 2 * OVL_LANES_MAX; c++) w->orq[c] = OVL_REQ_NULL;
  w->ap[s] = w->gj == o->jA ? ovl_dmat_data(A) + (o->k0 - ovl_dmat_col_off(A)) * ovl_dmat_ld(A) : w->abuf[s];
  if (w->gi == o->iB)
    for (int64_t kk = 0; kk < o->w; kk += w->b) {
      int64_t ww = o->w - kk < w->b ? o->w - kk : w->b;
      const double *src = ovl_dmat_data(B) + (o->k0 - ovl_dmat_row_off(B) + kk);
      if (!w->arr) {
        ovl_i_kern_copy(w->bbuf[s] + kk * w->nb, ww, src, ovl_dmat_ld(B), ww, w->nb);
        continue;
      }
      for (int c = 0; c < w->plan->ndup; c++) { /* by lane: rows ko..ko+kl as kl x nb at (kk + ko) * nb */
        int64_t ko, kl;
        ovl_lanes_part(ww, w->plan->ndup, c, &ko, &kl);
        if (kl > 0) ovl_i_kern_copy(w->bbuf[s] + (kk + ko) * w->nb, kl, src + ko, ovl_dmat_ld(B), kl, w->nb);
      }
    }
  if (w->lj == o->jA % w->bj) hs_ibcast(w, w->orow, (double *)w->ap[s], w->ma * o->w, o->jA / w->bj, w->orq, "outer A");
  if (w->li == o->iB % w->bi)
    hs_ibcast(w, w->ocol, w->bbuf[s], o->w * w->nb, o->iB / w->bi, w->orq + OVL_LANES_MAX, "outer B");
}

/* Post a broadcast of nblk blocks of blk elements over lanes L, lane c
 * carrying the whole blocks ovl_lanes_part(nblk, N_DUP, c) (arrival order). */
static void hs_ibcast_blocks(hs_ws *w, ovl_lanes L, double *buf, int64_t nblk, int64_t blk, int root, ovl_req *reqs,
                             const char *what) {
  if (nblk * blk == 0 || L == NULL || ovl_lanes_size(L) <= 1) return;
  if (ovl_lanes_ibcast_blocks(L, buf, nblk, blk, root, &w->plan->coll, reqs) != OVL_OK)
    ovl_fatal(w->parent, OVL_ERR_MPI, "HSUMMA: %s broadcast failed: %s", what, ovl_errmsg());
  w->st->bytes += 8 * nblk * blk;
  w->st->ncoll++;
}

/* Post step x's broadcasts inside the groups into request slot r. */
static void post_inner(hs_ws *w, const hs_step *x, int r) {
  for (int c = 0; c < 2 * OVL_LANES_MAX; c++) w->irq[r][c] = OVL_REQ_NULL;
  if (w->arr) { /* A's sub-panel by columns, B's (packed by lane) by rows */
    hs_ibcast_blocks(w, w->irow, (double *)w->ap[x->slot] + x->kk * w->ma, x->ww, w->ma, x->o.jA % w->bj, w->irq[r],
                     "inner A");
    hs_ibcast_blocks(w, w->icol, w->bbuf[x->slot] + x->kk * w->nb, x->ww, w->nb, x->o.iB % w->bi,
                     w->irq[r] + OVL_LANES_MAX, "inner B");
    return;
  }
  hs_ibcast(w, w->irow, (double *)w->ap[x->slot] + x->kk * w->ma, w->ma * x->ww, x->o.jA % w->bj, w->irq[r], "inner A");
  hs_ibcast(w, w->icol, w->bbuf[x->slot] + x->kk * w->nb, x->ww * w->nb, x->o.iB % w->bi, w->irq[r] + OVL_LANES_MAX,
            "inner B");
}

/* The step after x (returns 0 after the last one). */
static int next_step(const hs_ws *w, const hs_step *x, hs_step *nx) {
  *nx = *x;
  if (x->kk + x->ww < x->o.w) {
    nx->kk = x->kk + x->ww;
  } else {
    if (x->o.k0 + x->o.w >= w->K) return 0;
    nx->o = kern_panel_at(w->K, w->p, w->q, w->M, x->o.k0 + x->o.w);
    nx->slot = w->la ? 1 - x->slot : 0;
    nx->kk = 0;
  }
  nx->ww = nx->o.w - nx->kk < w->b ? nx->o.w - nx->kk : w->b;
  return 1;
}

/* Called between the column chunks of a lookahead step's dgemm: the outer
 * panel in flight, and the next step's inner broadcasts, posted here once
 * that panel has arrived. */
static void hs_progress(void *ctx) {
  hs_ws *w = ctx;
  hs_progress_reqs(w, 2 * OVL_LANES_MAX, w->orq);
  if (w->defer && hs_outer_arrived(w)) post_inner(w, &w->dstep, w->dslot), w->defer = 0;
  if (!w->defer) hs_progress_reqs(w, 2 * OVL_LANES_MAX, w->irq[w->dslot]);
}

/* Arrival order: the step whose lanes are being multiplied (request slot r)
 * and, with lookahead, the next step, whose inner broadcasts are posted once
 * all of this step's lanes (and, when it opens the next outer panel, that
 * panel) have arrived. */
/* Without lookahead: the next step's outer panel (when it opens one) is
 * broadcast and waited for, then its inner panels posted. */
static void post_next_plain(hs_ws *w, const hs_step *nxt) {
  if (nxt->kk == 0) {
    post_outer(w, &nxt->o, 0);
    hs_wait(w, 2 * OVL_LANES_MAX, w->orq);
  }
  post_inner(w, nxt, 0);
}

typedef struct hs_arr {
  hs_ws *w;
  int r;
  const hs_step *nxt; /* still to post, or NULL */
  int next_live;      /* the next step's inner broadcasts are in flight */
} hs_arr;

static int hs_reqs_done(const ovl_req *reqs) {
  for (int c = 0; c < 2 * OVL_LANES_MAX; c++)
    if (reqs[c] != OVL_REQ_NULL) return 0;
  return 1;
}

static void hs_arr_try_next(hs_arr *a) {
  hs_ws *w = a->w;
  if (!a->nxt || !hs_reqs_done(w->irq[a->r]) || (a->nxt->kk == 0 && !hs_outer_arrived(w))) return;
  post_inner(w, a->nxt, 1 - a->r);
  a->nxt = NULL, a->next_live = 1;
}

/* Between the column chunks of a lane's product: this step's lanes, the
 * outer panel in flight and the next step's inner broadcasts. */
static void hs_arr_progress(void *ctx) {
  hs_arr *a = ctx;
  hs_ws *w = a->w;
  hs_progress_reqs(w, 2 * OVL_LANES_MAX, w->irq[a->r]);
  hs_progress_reqs(w, 2 * OVL_LANES_MAX, w->orq);
  if (a->next_live) hs_progress_reqs(w, 2 * OVL_LANES_MAX, w->irq[1 - a->r]);
  hs_arr_try_next(a);
}

/* Step x (request slot r) in arrival order: each lane's product as soon as
 * its A and B parts are both here, in the order the lanes complete; nxt
 * (lookahead; NULL without) is posted on the way when it can be. Returns the
 * time spent waiting; *posted tells whether nxt was posted. */
static double step_by_arrival(hs_ws *w, const hs_step *x, int r, const hs_step *nxt, double alpha, ovl_dmat C,
                              int *posted) {
  int nd = w->plan->ndup, done[OVL_LANES_MAX] = {0}, left = nd;
  hs_arr a = {w, r, nxt, 0};
  const double *ap = w->ap[x->slot] + x->kk * w->ma, *bp = w->bbuf[x->slot] + x->kk * w->nb;
  double waited = 0;
  while (left > 0) {
    hs_arr_try_next(&a);
    int c = -1;
    for (int y = 0; y < nd && c < 0; y++)
      if (!done[y] && w->irq[r][y] == OVL_REQ_NULL && w->irq[r][OVL_LANES_MAX + y] == OVL_REQ_NULL) c = y;
    if (c < 0) { /* nothing new here: wait for the next lane to complete */
      double tw = ovl_time();
      OVL_TRACE_BEGIN("hsumma.wait");
      int any = -1;
      if (ovl_req_waitany(2 * OVL_LANES_MAX, w->irq[r], &any) != OVL_OK || any < 0)
        ovl_fatal(w->parent, OVL_ERR_MPI, "HSUMMA: panel broadcast failed: %s",
                  any < 0 ? "no lane in flight" : ovl_errmsg());
      OVL_TRACE_END("hsumma.wait", 0);
      waited += ovl_time() - tw;
      continue;
    }
    int64_t ko, kl;
    ovl_lanes_part(x->ww, nd, c, &ko, &kl);
    done[c] = 1, left--;
    OVL_TRACE_BEGIN("hsumma.lane_dgemm");
    ovl_i_kern_dgemm_fn(ovl_dmat_local_rows(C), ovl_dmat_local_cols(C), kl, alpha, ap + ko * w->ma,
                        w->ma > 0 ? w->ma : 1, bp + ko * w->nb, kl > 0 ? kl : 1, ovl_dmat_data(C), ovl_dmat_ld(C),
                        left > 0 || w->la ? hs_arr_progress : NULL, &a);
    OVL_TRACE_END("hsumma.lane_dgemm", 0);
  }
  hs_arr_try_next(&a);
  *posted = a.next_live;
  return waited;
}

ovl_err ovl_hsumma(double alpha, ovl_dmat A, ovl_dmat B, double beta, ovl_dmat C, const ovl_plan *plan,
                   ovl_kstats *stats) {
  OVL_TRY(ovl_check_handle(A, "ovl_hsumma", "A"));
  OVL_TRY(ovl_check_handle(B, "ovl_hsumma", "B"));
  OVL_TRY(ovl_check_handle(C, "ovl_hsumma", "C"));
  OVL_TRY(ovl_check_ptr(plan, "ovl_hsumma", "plan"));
  MPI_Comm parent = ovl_grid2d_parent(ovl_dmat_grid(C));
  ovl_kstats st;
  memset(&st, 0, sizeof st);
  double t0 = ovl_time();
  hs_ws w;
  memset(&w, 0, sizeof w);
  w.parent = parent, w.A = A, w.B = B, w.plan = plan, w.st = &st;
  ovl_grid2d_dims(ovl_dmat_grid(C), &w.p, &w.q);
  ovl_grid2d_coords(ovl_dmat_grid(C), &w.gi, &w.gj);
  ovl_err rc = ovl_kernel_check_gemm_shapes(A, B, C);
  if (rc == OVL_OK) rc = ovl_i_kern_check_plan(plan, "HSUMMA");
  int64_t b = rc == OVL_OK ? plan->b : 1, M = rc == OVL_OK && plan->outer > 0 ? plan->outer : b;
  if (rc == OVL_OK && M < b)
    rc = ovl_err_set(OVL_ERR_ARG, "HSUMMA: the outer block M = %lld must be >= the inner block b = %lld", (long long)M,
                     (long long)b);
  int gI = rc == OVL_OK ? plan->groups_i : 1, gJ = rc == OVL_OK ? plan->groups_j : 1;
  if (rc == OVL_OK && (gI < 1 || gJ < 1 || w.p % gI || w.q % gJ))
    rc = ovl_err_set(OVL_ERR_ARG, "HSUMMA: %d x %d groups do not tile the %d x %d grid", gI, gJ, w.p, w.q);
  if (rc == OVL_OK && plan->arrival && gI == w.p && gJ == w.q && w.p * w.q > 1)
    rc = ovl_err_set(OVL_ERR_ARG,
                     "HSUMMA: --arrival-order acts on the broadcasts inside the groups, and %d x %d groups of one "
                     "process (G = P) have none: use fewer groups, or --algo summa with -b M; refused rather than "
                     "ignored",
                     gI, gJ);
  int64_t K = ovl_dmat_cols(A);
  if (M > K && K > 0) M = K;
  if (b > M) b = M;
  w.K = K, w.M = M, w.b = b, w.ma = ovl_dmat_local_rows(A), w.nb = ovl_dmat_local_cols(B);
  w.la = rc == OVL_OK && plan->lookahead != 0, w.arr = rc == OVL_OK && plan->arrival != 0;
  for (int s = 0; s < (w.la ? 2 : 1) && rc == OVL_OK; s++) {
    rc = ovl_malloc(sizeof(double) * (size_t)(w.ma * M + 1), &w.abuf[s]);
    if (rc == OVL_OK) rc = ovl_malloc(sizeof(double) * (size_t)(M * w.nb + 1), &w.bbuf[s]);
  }
  rc = ovl_err_agree(parent, rc);
  ovl_hgroups hg = NULL;
  if (rc == OVL_OK) rc = ovl_grid2d_hgroups(ovl_dmat_grid(C), gI, gJ, &hg);
  if (rc == OVL_OK && ovl_grid2d_active(ovl_dmat_grid(C))) {
    rc = ovl_hgroups_lanes(hg, OVL_DIR_OUTER_ROW, plan->ndup, &w.orow);
    if (rc == OVL_OK) rc = ovl_hgroups_lanes(hg, OVL_DIR_OUTER_COL, plan->ndup, &w.ocol);
    if (rc == OVL_OK) rc = ovl_hgroups_lanes(hg, OVL_DIR_INNER_ROW, plan->ndup, &w.irow);
    if (rc == OVL_OK) rc = ovl_hgroups_lanes(hg, OVL_DIR_INNER_COL, plan->ndup, &w.icol);
  }
  if (rc != OVL_OK || !ovl_grid2d_active(ovl_dmat_grid(C))) {
    for (int s = 0; s < 2; s++) ovl_free(&w.abuf[s]), ovl_free(&w.bbuf[s]);
    if (stats) *stats = st;
    return rc;
  }
  w.bi = w.p / gI, w.bj = w.q / gJ, w.li = w.gi % w.bi, w.lj = w.gj % w.bj;
  for (int c = 0; c < 2 * OVL_LANES_MAX; c++) w.orq[c] = w.irq[0][c] = w.irq[1][c] = OVL_REQ_NULL;
  ovl_i_kern_scale(C, beta);
  hs_step cur;
  memset(&cur, 0, sizeof cur);
  if (K > 0) {
    double tc = ovl_time();
    cur.o = kern_panel_at(K, w.p, w.q, M, 0);
    cur.ww = cur.o.w < b ? cur.o.w : b;
    post_outer(&w, &cur.o, 0);
    hs_wait(&w, 2 * OVL_LANES_MAX, w.orq);
    post_inner(&w, &cur, 0);
    st.t_comm += ovl_time() - tc;
  }
  for (int64_t t = 0; K > 0; t++) {
    int r = w.la ? (int)(t % 2) : 0;
    double tc = ovl_time();
    OVL_TRACE_BEGIN("hsumma.wait");
    /* with lookahead, an outer panel's first step sends the next outer panel on its way */
    if (w.la && cur.kk == 0 && cur.o.k0 + cur.o.w < K) {
      kern_panel on = kern_panel_at(K, w.p, w.q, M, cur.o.k0 + cur.o.w);
      post_outer(&w, &on, 1 - cur.slot);
    }
    hs_step nxt;
    int more = next_step(&w, &cur, &nxt);
    if (w.arr) {
      OVL_TRACE_END("hsumma.wait", 0);
      int posted = 0;
      double ts = ovl_time();
      double waited = step_by_arrival(&w, &cur, r, more && w.la ? &nxt : NULL, alpha, C, &posted);
      double tg = ovl_time();
      st.t_comm += ts - tc + waited;
      st.t_comp += tg - ts - waited;
      st.steps++;
      if (!more) break;
      OVL_TRACE_BEGIN("hsumma.wait");
      if (w.la && !posted) { /* this step's lanes are all here: the outer panel nxt opens may not be */
        if (nxt.kk == 0) hs_wait(&w, 2 * OVL_LANES_MAX, w.orq);
        post_inner(&w, &nxt, 1 - r);
      } else if (!w.la) post_next_plain(&w, &nxt);
      OVL_TRACE_END("hsumma.wait", 0);
      st.t_comm += ovl_time() - tg;
      cur = nxt;
      continue;
    }
    hs_wait(&w, 2 * OVL_LANES_MAX, w.irq[r]);
    w.defer = 0, w.dslot = 1 - r;
    if (more && w.la) {
      if (nxt.kk == 0) hs_progress_reqs(&w, 2 * OVL_LANES_MAX, w.orq); /* it opens the next outer panel */
      if (nxt.kk > 0 || hs_outer_arrived(&w)) post_inner(&w, &nxt, 1 - r);
      else w.defer = 1, w.dstep = nxt;
    }
    OVL_TRACE_END("hsumma.wait", 0);
    double tm = ovl_time();
    st.t_comm += tm - tc;
    OVL_TRACE_BEGIN("hsumma.dgemm");
    ovl_i_kern_dgemm_fn(ovl_dmat_local_rows(C), ovl_dmat_local_cols(C), cur.ww, alpha, w.ap[cur.slot] + cur.kk * w.ma,
                        w.ma > 0 ? w.ma : 1, w.bbuf[cur.slot] + cur.kk * w.nb, cur.ww, ovl_dmat_data(C), ovl_dmat_ld(C),
                        more && w.la ? hs_progress : NULL, &w);
    OVL_TRACE_END("hsumma.dgemm", 0);
    double tg = ovl_time();
    st.t_comp += tg - tm;
    st.steps++;
    if (!more) break;
    OVL_TRACE_BEGIN("hsumma.wait");
    if (w.la && w.defer) { /* the next outer panel had not arrived during the dgemm */
      hs_wait(&w, 2 * OVL_LANES_MAX, w.orq);
      post_inner(&w, &nxt, 1 - r);
      w.defer = 0;
    } else if (!w.la) post_next_plain(&w, &nxt);
    OVL_TRACE_END("hsumma.wait", 0);
    st.t_comm += ovl_time() - tg;
    cur = nxt;
  }
  for (int s = 0; s < 2; s++) ovl_free(&w.abuf[s]), ovl_free(&w.bbuf[s]);
  st.t_total = ovl_time() - t0;
  if (stats) *stats = st;
  return OVL_OK;
}
