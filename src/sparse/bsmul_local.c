/* The local kernel of the filtered block-sparse product: packed panels, the
 * accumulator of C's block rows and the block products as small dgemms
 * grouped by size (src/sparse/bsmul_impl.h). */
#include <cblas.h>
#include <stdlib.h>
#include <string.h>

#include "sparse/bsmul_impl.h"
#include "sparse/sparse_impl.h"

/* Products between two calls of the progress callback (at the end of a
 * block row); the tasks collected by then run first. */
enum { BSMUL_CHUNK = 4096 };
/* Products with m n k at most this run in a plain loop: below it a call to
 * cblas_dgemm costs more than the arithmetic. */
enum { BSMUL_SMALL = 512 };

static ovl_err grow(void **p, int64_t *cap, int64_t need, size_t elem, const char *what) {
  if (need <= *cap) return OVL_OK;
  int64_t nc = *cap > 0 ? *cap : 16;
  while (nc < need) nc *= 2;
  void *q = realloc(*p, (size_t)nc * elem);
  if (!q)
    return ovl_err_set(OVL_ERR_NOMEM, "block-sparse product: %s: %lld bytes could not be allocated", what,
                       (long long)((size_t)nc * elem));
  *p = q, *cap = nc;
  return OVL_OK;
}

int64_t ovl_i_sparse_panel_len(int64_t nr, int64_t nnzb, int64_t nval) {
  return nnzb > 0 ? 3 + nr + (nr + 1) + 2 * nnzb + nval : 0;
}

ovl_err ovl_i_sparse_panel_unpack(const double *buf, int64_t len, const int *bs, int nblk, ovl_i_bspanel *P) {
  P->nr = P->nnzb = P->nval = P->span = 0;
  P->ordered = 0;
  P->nrm = P->val = NULL;
  if (len == 0) return OVL_OK;
  int64_t nr = (int64_t)buf[0], nnzb = (int64_t)buf[1], nval = (int64_t)buf[2];
  if (nr < 1 || nnzb < 1 || nval < 1 || ovl_i_sparse_panel_len(nr, nnzb, nval) != len)
    return ovl_err_set(OVL_ERR_INTERNAL,
                       "block-sparse product: a panel's header (%lld rows, %lld blocks, %lld values)"
                       " does not match its length %lld",
                       (long long)nr, (long long)nnzb, (long long)nval, (long long)len);
  int64_t cr = P->cap_r, cb = P->cap_b;
  OVL_TRY(grow((void **)&P->rowid, &cr, nr + 1, sizeof(int), "panel rows"));
  cr = P->cap_r;
  OVL_TRY(grow((void **)&P->rowptr, &cr, nr + 1, sizeof(int64_t), "panel rows"));
  P->cap_r = cr;
  OVL_TRY(grow((void **)&P->colidx, &cb, nnzb, sizeof(int), "panel blocks"));
  cb = P->cap_b;
  OVL_TRY(grow((void **)&P->valoff, &cb, nnzb, sizeof(int64_t), "panel blocks"));
  P->cap_b = cb;
  const double *rid = buf + 3, *rp = rid + nr, *ci = rp + nr + 1;
  P->nrm = ci + nnzb;
  P->val = P->nrm + nnzb;
  int64_t off = 0;
  for (int64_t t = 0; t < nr; t++) {
    int row = (int)rid[t];
    P->rowid[t] = row;
    P->rowptr[t] = (int64_t)rp[t];
    if (row < 0 || row >= nblk) return ovl_err_set(OVL_ERR_INTERNAL, "block-sparse product: panel row %d", row);
    for (int64_t k = (int64_t)rp[t]; k < (int64_t)rp[t + 1]; k++) {
      int c = (int)ci[k];
      if (c < 0 || c >= nblk) return ovl_err_set(OVL_ERR_INTERNAL, "block-sparse product: panel column %d", c);
      P->colidx[k] = c;
      P->valoff[k] = off;
      off += (int64_t)bs[row] * bs[c];
    }
  }
  P->rowptr[nr] = (int64_t)rp[nr];
  if (P->rowptr[nr] != nnzb || off != nval)
    return ovl_err_set(OVL_ERR_INTERNAL,
                       "block-sparse product: a panel's rows hold %lld blocks and %lld values,"
                       " its header says %lld and %lld",
                       (long long)P->rowptr[nr], (long long)off, (long long)nnzb, (long long)nval);
  P->nr = nr, P->nnzb = nnzb, P->nval = nval, P->span = nval;
  return OVL_OK;
}

ovl_err ovl_i_sparse_panel_pack(const ovl_i_bsr *L, int64_t nrows, const int *rows, const int *bs, const int *kstep,
                                int s, int by_col, double *buf, int64_t *len) {
  int64_t nr = 0, nnzb = 0, nval = 0;
  for (int64_t r = 0; r < nrows; r++) {
    int64_t nb = 0;
    if (!by_col && kstep[rows[r]] != s) continue;
    for (int64_t k = L->rowptr[r]; k < L->rowptr[r + 1]; k++)
      if (!by_col || kstep[L->colidx[k]] == s) nb++, nval += (int64_t)bs[rows[r]] * bs[L->colidx[k]];
    if (nb > 0) nr++, nnzb += nb;
  }
  int64_t need = ovl_i_sparse_panel_len(nr, nnzb, nval);
  if (!buf) {
    *len = need;
    return OVL_OK;
  }
  if (*len != need)
    return ovl_err_set(OVL_ERR_INTERNAL, "block-sparse product: a panel needs %lld doubles, its buffer has %lld",
                       (long long)need, (long long)*len);
  if (need == 0) return OVL_OK;
  buf[0] = (double)nr, buf[1] = (double)nnzb, buf[2] = (double)nval;
  double *rid = buf + 3, *rp = rid + nr, *ci = rp + nr + 1, *nm = ci + nnzb, *v = nm + nnzb;
  int64_t t = 0, b = 0;
  rp[0] = 0;
  for (int64_t r = 0; r < nrows; r++) {
    if (!by_col && kstep[rows[r]] != s) continue;
    int64_t b0 = b;
    for (int64_t k = L->rowptr[r]; k < L->rowptr[r + 1]; k++) {
      int c = L->colidx[k];
      if (by_col && kstep[c] != s) continue;
      int64_t len1 = (int64_t)bs[rows[r]] * bs[c];
      ci[b] = (double)c, nm[b] = L->nrm[k];
      memcpy(v, L->val + L->valoff[k], sizeof(double) * (size_t)len1);
      v += len1, b++;
    }
    if (b > b0) rid[t] = (double)rows[r], rp[t + 1] = (double)b, t++;
  }
  return OVL_OK;
}

ovl_err ovl_i_sparse_panel_view(const ovl_i_bsr *L, int64_t nrows, const int *rows, const int *kstep, int s, int by_col,
                                ovl_i_bspanel *P) {
  int64_t nr = 0, nnzb = 0;
  P->nr = P->nnzb = P->nval = 0;
  P->ordered = 0;
  for (int64_t r = 0; r < nrows; r++) {
    if (!by_col && kstep[rows[r]] != s) continue;
    int64_t nb = 0;
    for (int64_t k = L->rowptr[r]; k < L->rowptr[r + 1]; k++) nb += !by_col || kstep[L->colidx[k]] == s;
    if (nb > 0) nr++, nnzb += nb;
  }
  int64_t c1 = P->cap_r, c2 = P->cap_r, c3 = P->cap_b, c4 = P->cap_b;
  OVL_TRY(grow((void **)&P->rowid, &c1, nr + 1, sizeof(int), "panel rows"));
  OVL_TRY(grow((void **)&P->rowptr, &c2, nr + 1, sizeof(int64_t), "panel rows"));
  P->cap_r = c1 < c2 ? c1 : c2;
  OVL_TRY(grow((void **)&P->colidx, &c3, nnzb, sizeof(int), "panel blocks"));
  OVL_TRY(grow((void **)&P->valoff, &c4, nnzb, sizeof(int64_t), "panel blocks"));
  P->cap_b = c3 < c4 ? c3 : c4;
  OVL_TRY(grow((void **)&P->nrm_own, &P->cap_n, nnzb, sizeof(double), "panel norms"));
  int64_t t = 0, b = 0;
  P->rowptr[0] = 0;
  for (int64_t r = 0; r < nrows; r++) {
    if (!by_col && kstep[rows[r]] != s) continue;
    int64_t b0 = b;
    for (int64_t k = L->rowptr[r]; k < L->rowptr[r + 1]; k++) {
      if (by_col && kstep[L->colidx[k]] != s) continue;
      P->colidx[b] = L->colidx[k], P->valoff[b] = L->valoff[k], P->nrm_own[b] = L->nrm[k];
      b++;
    }
    if (b > b0) P->rowid[t] = rows[r], P->rowptr[++t] = b;
  }
  P->nr = nr, P->nnzb = nnzb, P->nval = 0; /* values not counted: they stay in L */
  P->span = L->nval;
  P->nrm = P->nrm_own, P->val = L->val;
  return OVL_OK;
}

typedef struct normpos {
  double nrm;
  int64_t k;
} normpos;

static int normpos_cmp(const void *x, const void *y) { /* decreasing norm, NaN first, then by index */
  const normpos *a = x, *b = y;
  int an = a->nrm != a->nrm, bn = b->nrm != b->nrm;
  if (an != bn) return an ? -1 : 1;
  if (!an && a->nrm != b->nrm) return a->nrm > b->nrm ? -1 : 1;
  return (a->k > b->k) - (a->k < b->k);
}

ovl_err ovl_i_sparse_panel_order(ovl_i_bspanel *P) {
  OVL_TRY(grow((void **)&P->ord, &P->cap_o, P->nnzb + 1, sizeof(int64_t), "panel order"));
  int64_t longest = 0;
  for (int64_t t = 0; t < P->nr; t++)
    if (P->rowptr[t + 1] - P->rowptr[t] > longest) longest = P->rowptr[t + 1] - P->rowptr[t];
  normpos *np = malloc(sizeof(normpos) * (size_t)(longest + 1));
  if (!np)
    return ovl_err_set(OVL_ERR_NOMEM, "block-sparse product: panel order: %lld bytes could not be allocated",
                       (long long)(sizeof(normpos) * (size_t)(longest + 1)));
  for (int64_t t = 0; t < P->nr; t++) {
    int64_t k0 = P->rowptr[t], len = P->rowptr[t + 1] - k0;
    for (int64_t x = 0; x < len; x++) np[x].nrm = P->nrm[k0 + x], np[x].k = k0 + x;
    qsort(np, (size_t)len, sizeof(normpos), normpos_cmp);
    for (int64_t x = 0; x < len; x++) P->ord[k0 + x] = np[x].k;
  }
  free(np);
  P->ordered = 1;
  return OVL_OK;
}

void ovl_i_sparse_panel_free(ovl_i_bspanel *P) {
  free(P->rowid), free(P->rowptr), free(P->colidx), free(P->valoff), free(P->nrm_own), free(P->ord);
  memset(P, 0, sizeof *P);
}

ovl_err ovl_i_sparse_acc_init(ovl_i_bsacc *acc, int nblk, const int *bs, int64_t nrows) {
  memset(acc, 0, sizeof *acc);
  acc->nblk = nblk, acc->bs = bs, acc->nrows = nrows;
  size_t nr = (size_t)(nrows > 0 ? nrows : 1);
  acc->len = calloc(nr, sizeof(int64_t));
  acc->cap = calloc(nr, sizeof(int64_t));
  acc->col = calloc(nr, sizeof(int *));
  acc->off = calloc(nr, sizeof(int64_t *));
  acc->mark = malloc(sizeof(int) * (size_t)(nblk > 0 ? nblk : 1));
  if (!acc->len || !acc->cap || !acc->col || !acc->off || !acc->mark) {
    ovl_i_sparse_acc_free(acc);
    return ovl_err_set(OVL_ERR_NOMEM, "block-sparse product: the accumulator of %lld block rows could not be allocated",
                       (long long)nrows);
  }
  for (int b = 0; b < nblk; b++) acc->mark[b] = -1;
  return OVL_OK;
}

void ovl_i_sparse_acc_free(ovl_i_bsacc *acc) {
  if (acc->col)
    for (int64_t r = 0; r < acc->nrows; r++) free(acc->col[r]);
  if (acc->off)
    for (int64_t r = 0; r < acc->nrows; r++) free(acc->off[r]);
  free(acc->len), free(acc->cap), free(acc->col), free(acc->off), free(acc->mark), free(acc->pool), free(acc->task);
  free(acc->fa), free(acc->fb), free(acc->fpool);
  memset(acc, 0, sizeof *acc);
}

/* A new zero block of m x n in row r for column bj; returns its place. */
static ovl_err acc_new_block(ovl_i_bsacc *acc, int64_t r, int bj, int64_t mn, int64_t *pos) {
  int64_t e = acc->len[r];
  if (e == acc->cap[r]) {
    int64_t c1 = acc->cap[r], c2 = acc->cap[r];
    OVL_TRY(grow((void **)&acc->col[r], &c1, e + 1, sizeof(int), "C's block row"));
    OVL_TRY(grow((void **)&acc->off[r], &c2, e + 1, sizeof(int64_t), "C's block row"));
    acc->cap[r] = c1 < c2 ? c1 : c2;
  }
  OVL_TRY(grow((void **)&acc->pool, &acc->cap_pool, acc->npool + mn, sizeof(double), "C's blocks"));
  memset(acc->pool + acc->npool, 0, sizeof(double) * (size_t)mn);
  if (acc->single) {
    OVL_TRY(grow((void **)&acc->fpool, &acc->cap_fpool, acc->npool + mn, sizeof(float), "C's blocks in float32"));
    memset(acc->fpool + acc->npool, 0, sizeof(float) * (size_t)mn);
  }
  acc->col[r][e] = bj;
  acc->off[r][e] = acc->npool;
  acc->npool += mn;
  acc->len[r] = e + 1;
  *pos = e;
  return OVL_OK;
}

static int task_cmp(const void *x, const void *y) {
  const ovl_i_bstask *a = x, *b = y;
  if (a->m != b->m) return a->m < b->m ? -1 : 1;
  if (a->n != b->n) return a->n < b->n ? -1 : 1;
  if (a->k != b->k) return a->k < b->k ? -1 : 1;
  /* then by C block and A block: a deterministic order of the sums */
  if (a->coff != b->coff) return a->coff < b->coff ? -1 : 1;
  return a->a < b->a ? -1 : (a->a > b->a);
}

/* C += A B for m x k times k x n, column-major, tight leading dimensions.
 * Short columns (m <= 4, atoms' s and p blocks) sum each entry in a
 * register; longer ones add columns of A (vectorised over i). */
static void small_gemm(int m, int n, int k, const double *restrict a, const double *restrict b, double *restrict c) {
  if (m <= 4) {
    for (int j = 0; j < n; j++) {
      const double *bj = b + (int64_t)j * k;
      for (int i = 0; i < m; i++) {
        double s = 0;
        for (int l = 0; l < k; l++) s += a[i + (int64_t)l * m] * bj[l];
        c[i + (int64_t)j * m] += s;
      }
    }
    return;
  }
  for (int j = 0; j < n; j++) {
    double *cj = c + (int64_t)j * m;
    for (int l = 0; l < k; l++) {
      double blj = b[l + (int64_t)j * k];
      const double *al = a + (int64_t)l * m;
      for (int i = 0; i < m; i++) cj[i] += al[i] * blj;
    }
  }
}

/* Run the collected tasks, grouped by size (m, n, k). In float32 (acc->single)
 * a task's operands are the floats at its values' offsets from the panels'
 * bases, and its C block is fpool's (the small ones stay in float64). */
static void flush_tasks(ovl_i_bsacc *acc, const double *abase, const double *bbase) {
  if (acc->ntask == 0) return;
  qsort(acc->task, (size_t)acc->ntask, sizeof(ovl_i_bstask), task_cmp);
  double *pool = acc->pool;
  for (int64_t t = 0; t < acc->ntask; t++) {
    const ovl_i_bstask *x = &acc->task[t];
    if ((int64_t)x->m * x->n * x->k <= BSMUL_SMALL) small_gemm(x->m, x->n, x->k, x->a, x->b, pool + x->coff);
    else if (!acc->single)
      cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, x->m, x->n, x->k, 1.0, x->a, x->m, x->b, x->k, 1.0,
                  pool + x->coff, x->m);
    else
      cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, x->m, x->n, x->k, 1.0f, acc->fa + (x->a - abase), x->m,
                  acc->fb + (x->b - bbase), x->k, 1.0f, acc->fpool + x->coff, x->m);
  }
  acc->products += acc->ntask;
  acc->ntask = 0;
}

void ovl_i_sparse_acc_fold(ovl_i_bsacc *acc) {
  if (!acc->single || !acc->fpool) return;
  double *restrict c = acc->pool;
  const float *restrict f = acc->fpool;
  for (int64_t i = 0; i < acc->npool; i++) c[i] += (double)f[i];
}

/* fl[0..span) := the panel's values as floats (a view's once per product: its matrix does not change during
 * one). LOCAL. */
static ovl_err panel_floats(const ovl_i_bspanel *P, float **fl, int64_t *cap, const double **src, int64_t *len) {
  const int view = P->nval == 0;
  if (view && *src == P->val && *len == P->span) return OVL_OK;
  OVL_TRY(grow((void **)fl, cap, P->span + 1, sizeof(float), "the panels' float32 values"));
  float *f = *fl;
  const double *v = P->val;
  for (int64_t i = 0; i < P->span; i++) f[i] = (float)v[i];
  *src = view ? P->val : NULL, *len = view ? P->span : -1;
  return OVL_OK;
}

ovl_err ovl_i_sparse_acc_multiply(ovl_i_bsacc *acc, const ovl_i_bspanel *Apan, const ovl_i_bspanel *Bpan,
                                  const int *kpos, const int *lrow, const double *thr, void (*progress)(void *),
                                  void *ctx) {
  if (Apan->nnzb == 0 || Bpan->nnzb == 0) return OVL_OK;
  const int *bs = acc->bs;
  int *mark = acc->mark;
  int64_t since = 0, nsmall = 0; /* products since the last call of progress; products run inline */
  ovl_err rc = OVL_OK;
  if (acc->single) {
    OVL_TRY(panel_floats(Apan, &acc->fa, &acc->cap_fa, &acc->fa_src, &acc->fa_len));
    OVL_TRY(panel_floats(Bpan, &acc->fb, &acc->cap_fb, &acc->fb_src, &acc->fb_len));
  }
  for (int64_t t = 0; t < Apan->nr && rc == OVL_OK; t++) {
    int bi = Apan->rowid[t];
    int64_t r = lrow[bi];
    if (r < 0 || r >= acc->nrows)
      return ovl_err_set(OVL_ERR_INTERNAL, "block-sparse product: block row %d is not held here", bi);
    double th = thr[r];
    for (int64_t e = 0; e < acc->len[r]; e++) mark[acc->col[r][e]] = (int)e;
    for (int64_t ka = Apan->rowptr[t]; ka < Apan->rowptr[t + 1] && rc == OVL_OK; ka++) {
      int bk = Apan->colidx[ka], kr = kpos[bk];
      if (kr < 0) continue;
      double na = Apan->nrm[ka];
      const double *a = Apan->val + Apan->valoff[ka];
      int64_t kend = Bpan->rowptr[kr + 1];
      for (int64_t x = Bpan->rowptr[kr]; x < kend; x++) {
        int64_t kb = Bpan->ordered ? Bpan->ord[x] : x;
        if (na * Bpan->nrm[kb] < th) { /* ordered by norm: so are the rest */
          if (Bpan->ordered) {
            acc->skipped += kend - x;
            break;
          }
          acc->skipped++;
          continue;
        }
        int bj = Bpan->colidx[kb];
        if (bj < bi && acc->sym) continue; /* below the diagonal: mirrored */
        int64_t e = mark[bj];
        if (e < 0) {
          rc = acc_new_block(acc, r, bj, (int64_t)bs[bi] * bs[bj], &e);
          if (rc != OVL_OK) break;
          mark[bj] = (int)e;
        }
        int m = bs[bi], nn = bs[bj], kk = bs[bk];
        if ((int64_t)m * nn * kk <= BSMUL_SMALL) { /* at once: a task would cost more than the product */
          small_gemm(m, nn, kk, a, Bpan->val + Bpan->valoff[kb], acc->pool + acc->off[r][e]);
          nsmall++, since++;
          continue;
        }
        rc = grow((void **)&acc->task, &acc->cap_task, acc->ntask + 1, sizeof(ovl_i_bstask), "block products");
        if (rc != OVL_OK) break;
        ovl_i_bstask *tk = &acc->task[acc->ntask++];
        tk->a = a, tk->b = Bpan->val + Bpan->valoff[kb], tk->coff = acc->off[r][e];
        tk->m = m, tk->n = nn, tk->k = kk;
        since++;
      }
    }
    for (int64_t e = 0; e < acc->len[r]; e++) mark[acc->col[r][e]] = -1;
    if (since >= BSMUL_CHUNK) {
      flush_tasks(acc, Apan->val, Bpan->val);
      if (progress) progress(ctx);
      since = 0;
    }
  }
  if (rc == OVL_OK) flush_tasks(acc, Apan->val, Bpan->val);
  acc->ntask = 0;
  acc->products += nsmall;
  return rc;
}

typedef struct colpos {
  int col;
  int64_t off;
} colpos;

static int colpos_cmp(const void *x, const void *y) {
  const colpos *a = x, *b = y;
  return (a->col > b->col) - (a->col < b->col);
}

void ovl_i_sparse_acc_sort_row(ovl_i_bsacc *acc, int64_t r) {
  int64_t len = acc->len[r];
  if (len < 2) return;
  colpos *cp = malloc(sizeof(colpos) * (size_t)len);
  if (!cp) { /* insertion sort in place: slow but needs no memory */
    for (int64_t e = 1; e < len; e++) {
      int c = acc->col[r][e];
      int64_t o = acc->off[r][e], f = e;
      for (; f > 0 && acc->col[r][f - 1] > c; f--)
        acc->col[r][f] = acc->col[r][f - 1], acc->off[r][f] = acc->off[r][f - 1];
      acc->col[r][f] = c, acc->off[r][f] = o;
    }
    return;
  }
  for (int64_t e = 0; e < len; e++) cp[e].col = acc->col[r][e], cp[e].off = acc->off[r][e];
  qsort(cp, (size_t)len, sizeof(colpos), colpos_cmp);
  for (int64_t e = 0; e < len; e++) acc->col[r][e] = cp[e].col, acc->off[r][e] = cp[e].off;
  free(cp);
}
