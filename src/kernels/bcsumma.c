/* SUMMA on ScaLAPACK's block-cyclic layout, in place (see bcsumma.h).
 *
 * An operand is seen along two axes of its local storage: the target axis
 * (the index that runs along C's rows for A, along C's columns for B) and
 * the inner axis k. Rows are spread over the grid's rows (dimension 0, the
 * communicator along it is col_comm), columns over its columns (dimension 1,
 * row_comm). A panel's local buffer is op(A)'s rows by the panel, column-major
 * (t + kk nt), for A, and the panel by op(B)'s columns (kk + t w) for B, so
 * the product is one dgemm without transposes. */
#include <stdlib.h>
#include <string.h>

#include "kernels/bcsumma.h"
#include "kernels/kimpl.h"
#include "ovl/comm.h"

/* A global interval [x0, x0 + len) of a dimension laid out in blocks of nb,
 * the first block on process src of np. */
typedef struct {
  int64_t x0, len, nb;
  int src, np;
} axis;

static axis axis_of(const ovl_bcview *v, int rows, int p, int q, int64_t len) {
  axis a;
  a.x0 = rows ? v->i0 : v->j0;
  a.len = len;
  a.nb = rows ? v->mb : v->nb;
  a.src = rows ? v->rsrc : v->csrc;
  a.np = rows ? p : q;
  return a;
}
/* owner of sub index i, its local index there, local start of the interval
 * on process r and its local count there */
static int ax_owner(const axis *a, int64_t i) { return (int)((a->src + (a->x0 + i) / a->nb) % a->np); }
static int64_t ax_local(const axis *a, int64_t i) {
  int64_t g = a->x0 + i;
  return g / a->nb / a->np * a->nb + g % a->nb;
}
static int64_t ax_lo(const axis *a, int r) { return ovl_bcyclic_numroc(a->x0, a->nb, r, a->src, a->np); }
static int64_t ax_cnt(const axis *a, int r) {
  return ovl_bcyclic_numroc(a->x0 + a->len, a->nb, r, a->src, a->np) - ax_lo(a, r);
}
/* sub index of the local index l (counted from the interval's start) on r */
static int64_t ax_sub(const axis *a, int r, int64_t l) {
  int64_t L = ax_lo(a, r) + l;
  return (L / a->nb * a->np + (a->np + r - a->src) % a->np) * a->nb + L % a->nb - a->x0;
}
/* end (sub index, exclusive) of the block holding sub index i */
static int64_t ax_block_end(const axis *a, int64_t i) {
  int64_t e = ((a->x0 + i) / a->nb + 1) * a->nb - a->x0;
  return e < a->len ? e : a->len;
}

/* One operand: its view, its target axis t and inner axis k, whether the
 * target axis is the storage's rows (dimension 0), and how panels travel. */
typedef struct {
  const ovl_bcview *v;
  axis t, k;
  int t_rows;    /* t is the storage's rows */
  int is_b;      /* buffer layout: 0 t + kk nt (A), 1 kk + t w (B) */
  int aligned;   /* broadcast straight from the owner */
  int64_t nt;    /* entries of C's target axis on this process */
  int tdim_me;   /* my coordinate along the target axis' dimension */
  int kdim_me;   /* my coordinate along the inner axis' dimension */
  int cme;       /* my coordinate along C's target axis' dimension */
  ovl_lanes L;   /* lanes along the inner axis' dimension (aligned) */
  MPI_Comm tcom; /* along the target axis' dimension (not aligned: the gather) */
  MPI_Comm kcom; /* along the inner axis' dimension (not aligned: the broadcast) */
  double *buf[2], *full, *piece;
  const double *use[2]; /* the panel of each slot: buf[s], or the owner's own storage when it is contiguous there */
  int *counts, *displs;
  int64_t c_lo; /* C's local start along the target axis on this process */
  axis ct;      /* C's target axis */
} operand;

/* src(t, kk) of the local storage, t and kk local indices */
static double at(const operand *o, int64_t t, int64_t kk) {
  const ovl_bcview *v = o->v;
  return o->t_rows ? v->data[t + kk * v->lld] : v->data[kk + t * v->lld];
}

/* pack local t in [t0, t0 + nt), kk in [k0, k0 + w) into out, in the
 * operand's buffer layout */
static void pack(const operand *o, int64_t t0, int64_t nt, int64_t k0, int64_t w, double *out) {
  if (nt <= 0 || w <= 0) return;
  if (!o->is_b && o->t_rows) {
    ovl_i_kern_copy(out, nt, o->v->data + t0 + k0 * o->v->lld, o->v->lld, nt, w);
  } else if (o->is_b && !o->t_rows) {
    ovl_i_kern_copy(out, w, o->v->data + k0 + t0 * o->v->lld, o->v->lld, w, nt);
  } else if (!o->is_b) {
    for (int64_t kk = 0; kk < w; kk++)
      for (int64_t t = 0; t < nt; t++) out[t + kk * nt] = at(o, t0 + t, k0 + kk);
  } else {
    for (int64_t t = 0; t < nt; t++)
      for (int64_t kk = 0; kk < w; kk++) out[kk + t * w] = at(o, t0 + t, k0 + kk);
  }
}

typedef struct {
  int64_t k0, w;
} panel;

static panel next_panel(const operand *a, const operand *b, int64_t K, int64_t width, int64_t k0) {
  panel pn = {k0, 0};
  if (k0 >= K) return pn;
  int64_t k1 = k0 + width < K ? k0 + width : K, ea = ax_block_end(&a->k, k0), eb = ax_block_end(&b->k, k0);
  if (k1 > ea) k1 = ea;
  if (k1 > eb) k1 = eb;
  pn.w = k1 - k0;
  return pn;
}

/* Posts (aligned) or fetches (not aligned) the panel of operand o for slot
 * s: o->use[s] is where it will be (o->buf[s], or the owner's own storage);
 * aligned requests go to reqs[0..ndup-1]. */
static ovl_err fetch(operand *o, panel pn, int s, const ovl_plan *plan, ovl_req *reqs, ovl_kstats *st) {
  int ko = ax_owner(&o->k, pn.k0);
  int64_t lk = ax_local(&o->k, pn.k0), w = pn.w;
  double *dst = o->buf[s];
  o->use[s] = dst;
  if (o->aligned) {
    if (o->kdim_me == ko) { /* the owner sends from its own storage when the panel is contiguous there */
      int64_t t0 = ax_lo(&o->t, o->tdim_me), lld = o->v->lld;
      int contiguous = !o->is_b ? o->nt == lld || w == 1 : w == lld || o->nt == 1;
      if (contiguous) dst = o->v->data + (!o->is_b ? t0 + lk * lld : lk + t0 * lld), o->use[s] = dst;
      else pack(o, t0, o->nt, lk, w, dst);
    }
    st->bytes += 8 * o->nt * w, st->ncoll++;
    return ovl_lanes_ibcast(o->L, dst, o->nt * w, ko, &plan->coll, reqs);
  }
  /* the holders (inner coordinate ko) gather the whole panel, then it goes along the inner dimension */
  int nh = o->t.np;
  int64_t total = 0;
  for (int h = 0; h < nh; h++) {
    int64_t c = ax_cnt(&o->t, h) * w;
    o->counts[h] = (int)c, o->displs[h] = (int)total;
    total += c;
  }
  if (o->kdim_me == ko) {
    int64_t cnt = ax_cnt(&o->t, o->tdim_me);
    pack(o, ax_lo(&o->t, o->tdim_me), cnt, lk, w, o->piece);
    OVL_MPI(MPI_Allgatherv(o->piece, (int)(cnt * w), MPI_DOUBLE, o->full, o->counts, o->displs, MPI_DOUBLE, o->tcom));
  }
  OVL_MPI(MPI_Bcast(o->full, (int)total, MPI_DOUBLE, ko, o->kcom));
  st->bytes += 8 * total, st->ncoll += 2;
  /* pick the entries of this process's targets */
  for (int64_t t = 0; t < o->nt; t++) {
    int64_t i = ax_sub(&o->ct, o->cme, t);
    int h = ax_owner(&o->t, i);
    int64_t l = ax_local(&o->t, i) - ax_lo(&o->t, h), cnt = ax_cnt(&o->t, h);
    const double *pc = o->full + o->displs[h];
    if (!o->is_b)
      for (int64_t kk = 0; kk < w; kk++) dst[t + kk * o->nt] = pc[l + kk * cnt];
    else memcpy(dst + t * w, pc + l * w, (size_t)w * sizeof(double));
  }
  return OVL_OK;
}

int ovl_i_bcsumma_aligned(int which, int trans, const ovl_bcview *v, const ovl_bcview *vc, int p, int q) {
  if (trans) return 0;
  int rows = which == 0; /* A: its rows against C's rows; B: its columns against C's columns */
  axis x = axis_of(v, rows, p, q, 0), c = axis_of(vc, rows, p, q, 0);
  return x.nb == c.nb && x.x0 % x.nb == c.x0 % c.nb && ax_owner(&x, 0) == ax_owner(&c, 0);
}

double ovl_i_bcsumma_memory(int64_t M, int64_t N, int64_t K, int64_t b, int p, int q, int aligned_a, int aligned_b,
                            int lookahead) {
  if (b > K) b = K;
  double ma = (double)(M + p - 1) / p + (double)b, nb = (double)(N + q - 1) / q + (double)b; /* + a block, at most */
  double d = (lookahead ? 2.0 : 1.0) * (ma + nb) * (double)b;
  if (!aligned_a) d += (double)(M + ma) * (double)b;
  if (!aligned_b) d += (double)(N + nb) * (double)b;
  return 8.0 * d;
}

static void operand_free(operand *o) {
  free(o->buf[0]), free(o->buf[1]), free(o->full), free(o->piece), free(o->counts), free(o->displs);
  memset(o->buf, 0, sizeof o->buf);
  o->full = o->piece = NULL, o->counts = o->displs = NULL;
}

/* the operand's axes, layout, communicators and buffers; LOCAL but for the
 * lanes (COLLECTIVE over the grid, cached by it) */
static ovl_err operand_init(operand *o, ovl_grid2d g, int is_b, int trans, const ovl_bcview *v, const ovl_bcview *vc,
                            int64_t tlen, int64_t K, int64_t b, const ovl_plan *plan) {
  int p, q, myrow, mycol;
  ovl_grid2d_dims(g, &p, &q);
  ovl_grid2d_coords(g, &myrow, &mycol);
  memset(o, 0, sizeof *o);
  o->v = v, o->is_b = is_b;
  o->t_rows = is_b ? trans : !trans;
  o->t = axis_of(v, o->t_rows, p, q, tlen);
  o->k = axis_of(v, !o->t_rows, p, q, K);
  o->ct = axis_of(vc, !is_b, p, q, tlen);
  o->aligned = ovl_i_bcsumma_aligned(is_b, trans, v, vc, p, q);
  o->tdim_me = o->t_rows ? myrow : mycol;
  o->kdim_me = o->t_rows ? mycol : myrow;
  int cme = is_b ? mycol : myrow; /* my coordinate along C's target axis */
  o->cme = cme;
  o->nt = ax_cnt(&o->ct, cme);
  o->c_lo = ax_lo(&o->ct, cme);
  o->tcom = o->t_rows ? ovl_grid2d_col_comm(g) : ovl_grid2d_row_comm(g);
  o->kcom = o->t_rows ? ovl_grid2d_row_comm(g) : ovl_grid2d_col_comm(g);
  int slots = plan->lookahead && K > b ? 2 : 1; /* one panel: nothing to look ahead to */
  ovl_err rc = OVL_OK;
  size_t len = (size_t)(o->nt > 0 ? o->nt : 1) * (size_t)b;
  for (int s = 0; s < slots && rc == OVL_OK; s++)
    if (!(o->buf[s] = malloc(len * sizeof(double))))
      rc = ovl_err_set(OVL_ERR_NOMEM, "ovl_pdgemm: no memory for panels");
  if (rc == OVL_OK && !o->aligned) {
    int nh = o->t.np;
    int64_t cnt = ax_cnt(&o->t, o->tdim_me);
    o->full = malloc((size_t)(tlen > 0 ? tlen : 1) * (size_t)b * sizeof(double));
    o->piece = malloc((size_t)(cnt > 0 ? cnt : 1) * (size_t)b * sizeof(double));
    o->counts = malloc((size_t)nh * sizeof(int));
    o->displs = malloc((size_t)nh * sizeof(int));
    if (!o->full || !o->piece || !o->counts || !o->displs)
      rc = ovl_err_set(OVL_ERR_NOMEM, "ovl_pdgemm: no memory for a whole panel (%lld x %lld)", (long long)tlen,
                       (long long)b);
    if (rc == OVL_OK && (double)tlen * (double)b > 2147483647.0)
      rc = ovl_err_set(OVL_ERR_SIZE, "ovl_pdgemm: a whole panel of %lld x %lld doubles is over 2^31 - 1",
                       (long long)tlen, (long long)b);
  }
  return rc;
}

ovl_err ovl_i_bcsumma(ovl_grid2d g, int ta, int tb, int64_t M, int64_t N, int64_t K, double alpha, const ovl_bcview *va,
                      const ovl_bcview *vb, double beta, const ovl_bcview *vc, const ovl_plan *plan,
                      ovl_kstats *stats) {
  double t0 = ovl_time();
  ovl_kstats st;
  memset(&st, 0, sizeof st);
  int p, q, myrow, mycol;
  ovl_grid2d_dims(g, &p, &q);
  ovl_grid2d_coords(g, &myrow, &mycol);
  MPI_Comm comm = ovl_grid2d_comm(g);
  if (comm == MPI_COMM_NULL) return OVL_OK; /* idle */
  ovl_err rc = ovl_i_kern_check_plan(plan, "ovl_pdgemm (in layout)");
  int64_t b = plan->b > K ? K : plan->b;
  if (b < 1) b = 1;
  operand A, B;
  memset(&A, 0, sizeof A), memset(&B, 0, sizeof B);
  if (rc == OVL_OK) rc = operand_init(&A, g, 0, ta, va, vc, M, K, b, plan);
  if (rc == OVL_OK) rc = operand_init(&B, g, 1, tb, vb, vc, N, K, b, plan);
  rc = ovl_err_agree(comm, rc);
  if (rc == OVL_OK && A.aligned) rc = ovl_grid2d_lanes(g, OVL_DIR_ROW, plan->ndup, &A.L);
  if (rc == OVL_OK && B.aligned) rc = ovl_grid2d_lanes(g, OVL_DIR_COL, plan->ndup, &B.L);
  rc = ovl_err_agree(comm, rc);
  if (rc != OVL_OK) {
    operand_free(&A), operand_free(&B);
    return rc;
  }
  ovl_bcyclic_scale(vc, p, q, myrow, mycol, beta);
  double *cl = vc->data + A.c_lo + B.c_lo * vc->lld;
  ovl_req rq[2][2 * OVL_LANES_MAX];
  for (int s = 0; s < 2; s++)
    for (int r = 0; r < 2 * OVL_LANES_MAX; r++) rq[s][r] = OVL_REQ_NULL;
  int la = plan->lookahead != 0 && K > b, s = 0;
  panel cur = next_panel(&A, &B, K, b, 0);
#define FETCH(pn, slot)                                                                                                \
  do {                                                                                                                 \
    double tf = ovl_time();                                                                                            \
    if (fetch(&A, pn, slot, plan, rq[slot], &st) != OVL_OK ||                                                          \
        fetch(&B, pn, slot, plan, rq[slot] + OVL_LANES_MAX, &st) != OVL_OK)                                            \
      ovl_fatal(comm, OVL_ERR_MPI, "ovl_pdgemm (in layout): panel at k = %lld: %s", (long long)(pn).k0, ovl_errmsg()); \
    st.t_comm += ovl_time() - tf;                                                                                      \
  } while (0)
  FETCH(cur, 0);
  while (cur.w > 0) {
    panel nxt = next_panel(&A, &B, K, b, cur.k0 + cur.w);
    if (la && nxt.w > 0) FETCH(nxt, 1 - s);
    double tw = ovl_time();
    if (ovl_req_waitall(2 * OVL_LANES_MAX, rq[s]) != OVL_OK)
      ovl_fatal(comm, OVL_ERR_MPI, "ovl_pdgemm (in layout): waiting for a panel: %s", ovl_errmsg());
    double tc = ovl_time();
    st.t_comm += tc - tw;
    if (A.nt > 0 && B.nt > 0)
      ovl_i_kern_dgemm(A.nt, B.nt, cur.w, alpha, A.use[s], A.nt, B.use[s], cur.w, cl, vc->lld,
                       la && nxt.w > 0 ? 2 * OVL_LANES_MAX : 0, rq[1 - s]);
    st.t_comp += ovl_time() - tc;
    st.steps++;
    if (la) s = 1 - s;
    else if (nxt.w > 0) FETCH(nxt, 0);
    cur = nxt;
  }
#undef FETCH
  operand_free(&A), operand_free(&B);
  st.t_total = ovl_time() - t0;
  if (stats) *stats = st;
  return OVL_OK;
}
