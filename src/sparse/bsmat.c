/* Block-sparse distributed matrices: life cycle, the permutation, the local
 * blocked CSR's building helpers, and the conversion to and from the dense
 * ovl_dmat (one MPI_Alltoallv each way). */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sparse/sparse_impl.h"

/* ---- the permutation --------------------------------------------------------- */

static uint64_t splitmix64(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/* perm := a permutation of 0..nblk-1 drawn from seed (Fisher-Yates over
 * splitmix64; the same on every rank); seed 0: the identity. */
static void make_perm(int *perm, int nblk, uint64_t seed) {
  for (int b = 0; b < nblk; b++) perm[b] = b;
  if (seed == 0) return;
  uint64_t s = seed;
  for (int b = nblk - 1; b > 0; b--) {
    int k = (int)(splitmix64(&s) % (uint64_t)(b + 1));
    int t = perm[b];
    perm[b] = perm[k], perm[k] = t;
  }
}

/* ---- life cycle ---------------------------------------------------------------- */

static void bsmat_free(ovl_bsmat A) {
  if (A == NULL) return;
  ovl_free(&A->bs);
  ovl_free(&A->boff);
  ovl_free(&A->perm);
  ovl_free(&A->rows);
  ovl_free(&A->cols);
  ovl_free(&A->lrow);
  ovl_free(&A->lcol);
  ovl_i_sparse_free(&A->loc);
  free(A->pool_spare);
  for (int k = 0; k < 3; k++) free(A->fspare[k]);
  ovl_free(&A->val_spare);
  ovl_free(&A->msg_spare);
  bsmat_free(A->sum_spare);
  bsmat_free(A->slice_spare);
  free(A);
}

/* A's grid, blocks, permutation and the block rows / columns this process
 * holds; no blocks stored. bs is valid (nblk >= 1, every size >= 1). */
static ovl_err bsmat_layout(ovl_bsmat A, ovl_grid2d g, int nblk, const int *bs, uint64_t seed) {
  A->g = g, A->nblk = nblk, A->seed = seed;
  ovl_grid2d_dims(g, &A->p, &A->q);
  A->myrow = A->mycol = -1;
  if (ovl_grid2d_active(g)) ovl_grid2d_coords(g, &A->myrow, &A->mycol);
  size_t nb = (size_t)nblk;
  OVL_TRY(ovl_malloc(sizeof(int) * nb, &A->bs));
  OVL_TRY(ovl_malloc(sizeof(int64_t) * (nb + 1), &A->boff));
  OVL_TRY(ovl_malloc(sizeof(int) * nb, &A->perm));
  OVL_TRY(ovl_malloc(sizeof(int) * nb, &A->lrow));
  OVL_TRY(ovl_malloc(sizeof(int) * nb, &A->lcol));
  memcpy(A->bs, bs, sizeof(int) * nb);
  A->boff[0] = 0;
  for (int b = 0; b < nblk; b++) A->boff[b + 1] = A->boff[b] + bs[b];
  A->n = A->boff[nblk];
  make_perm(A->perm, nblk, seed);
  A->nrows = A->ncols = 0;
  for (int b = 0; b < nblk; b++) {
    A->lrow[b] = A->myrow >= 0 && ovl_i_sparse_prow(A, b) == A->myrow ? (int)A->nrows++ : -1;
    A->lcol[b] = A->mycol >= 0 && ovl_i_sparse_pcol(A, b) == A->mycol ? (int)A->ncols++ : -1;
  }
  OVL_TRY(ovl_malloc(sizeof(int) * (size_t)(A->nrows + 1), &A->rows));
  OVL_TRY(ovl_malloc(sizeof(int) * (size_t)(A->ncols + 1), &A->cols));
  for (int b = 0; b < nblk; b++) {
    if (A->lrow[b] >= 0) A->rows[A->lrow[b]] = b;
    if (A->lcol[b] >= 0) A->cols[A->lcol[b]] = b;
  }
  OVL_TRY(ovl_calloc(sizeof(int64_t) * (size_t)(A->nrows + 1), &A->loc.rowptr));
  A->loc.last_row = -1;
  return OVL_OK;
}

ovl_err ovl_bsmat_create(ovl_grid2d g, int nblk, const int *bs, uint64_t seed, ovl_bsmat *out) {
  OVL_TRY(ovl_check_ptr(out, "ovl_bsmat_create", "out"));
  *out = NULL;
  OVL_TRY(ovl_check_handle(g, "ovl_bsmat_create", "the grid"));
  MPI_Comm parent = ovl_grid2d_parent(g);
  ovl_err rc = OVL_OK;
  uint64_t h = 14695981039346656037ULL; /* FNV-1a over the sizes */
  if (nblk < 1) rc = ovl_err_set(OVL_ERR_ARG, "ovl_bsmat_create: the block count must be >= 1, got %d", nblk);
  else if (bs == NULL) rc = ovl_err_set(OVL_ERR_ARG, "ovl_bsmat_create: the block sizes bs are NULL");
  else {
    for (int b = 0; b < nblk && rc == OVL_OK; b++) {
      if (bs[b] < 1) rc = ovl_err_set(OVL_ERR_ARG, "ovl_bsmat_create: block %d has size %d, expected >= 1", b, bs[b]);
      h = (h ^ (uint64_t)(uint32_t)bs[b]) * 1099511628211ULL;
    }
  }
  ovl_bsmat A = NULL;
  if (rc == OVL_OK) {
    A = calloc(1, sizeof *A);
    if (A == NULL) rc = ovl_err_set(OVL_ERR_NOMEM, "cannot allocate a block-sparse matrix handle");
  }
  if (rc == OVL_OK) rc = bsmat_layout(A, g, nblk, bs, seed);
  const int64_t key[] = {nblk, (int64_t)seed, (int64_t)h};
  static const char *const names[] = {"the block count nblk", "the permutation seed", "=the block sizes bs"};
  rc = ovl_err_agree_same(parent, rc, key, names, 3);
  if (rc != OVL_OK) {
    bsmat_free(A);
    return rc;
  }
  *out = A;
  return OVL_OK;
}

ovl_err ovl_bsmat_create_like(ovl_bsmat A, ovl_bsmat *out) {
  OVL_TRY(ovl_check_ptr(out, "ovl_bsmat_create_like", "out"));
  *out = NULL;
  OVL_TRY(ovl_check_handle(A, "ovl_bsmat_create_like", "A"));
  return ovl_bsmat_create(A->g, A->nblk, A->bs, A->seed, out);
}

ovl_err ovl_bsmat_destroy(ovl_bsmat *A) {
  if (A == NULL || *A == NULL) return OVL_OK;
  bsmat_free(*A);
  *A = NULL;
  return OVL_OK;
}

ovl_err ovl_bsmat_release_work(ovl_bsmat A) {
  OVL_TRY(ovl_check_handle(A, "ovl_bsmat_release_work", "A"));
  free(A->pool_spare);
  ovl_free(&A->val_spare);
  A->pool_spare = NULL, A->pool_spare_cap = 0, A->val_spare_cap = 0;
  for (int k = 0; k < 3; k++) free(A->fspare[k]), A->fspare[k] = NULL, A->fspare_cap[k] = 0;
  return OVL_OK;
}

ovl_grid2d ovl_bsmat_grid(ovl_bsmat A) { return A ? A->g : NULL; }
int64_t ovl_bsmat_n(ovl_bsmat A) { return A ? A->n : -1; }
int ovl_bsmat_nblk(ovl_bsmat A) { return A ? A->nblk : -1; }
const int *ovl_bsmat_block_sizes(ovl_bsmat A) { return A ? A->bs : NULL; }
int64_t ovl_bsmat_local_blocks(ovl_bsmat A) { return A ? A->loc.nnzb : -1; }
int64_t ovl_bsmat_local_values(ovl_bsmat A) { return A ? A->loc.nval : -1; }

ovl_err ovl_bsmat_count(ovl_bsmat A, int64_t *blocks, int64_t *values, double *fill) {
  OVL_TRY(ovl_check_handle(A, "ovl_bsmat_count", "A"));
  int64_t loc[2] = {A->loc.nnzb, A->loc.nval}, tot[2] = {0, 0};
  OVL_MPI(MPI_Allreduce(loc, tot, 2, MPI_INT64_T, MPI_SUM, ovl_grid2d_parent(A->g)));
  if (blocks) *blocks = tot[0];
  if (values) *values = tot[1];
  if (fill) *fill = A->n > 0 ? (double)tot[1] / ((double)A->n * (double)A->n) : 0.0;
  return OVL_OK;
}

/* ---- building the local blocks ------------------------------------------------ */

void ovl_i_sparse_free(ovl_i_bsr *L) {
  ovl_free(&L->rowptr);
  ovl_free(&L->colidx);
  ovl_free(&L->valoff);
  ovl_free(&L->nrm);
  ovl_free(&L->val);
  L->nnzb = L->nval = L->cap_blocks = L->cap_val = 0;
}

/* *p (len doubles' or ints' worth of elem bytes) grown to cap elements. */
static ovl_err grow(void *pp, size_t elem, int64_t len, int64_t cap) {
  void **p = (void **)pp;
  void *q = NULL;
  OVL_TRY(ovl_malloc(elem * (size_t)cap, &q));
  if (len > 0) memcpy(q, *p, elem * (size_t)len);
  ovl_free(p);
  *p = q;
  return OVL_OK;
}

ovl_err ovl_i_sparse_reserve(ovl_bsmat A, int64_t blocks, int64_t vals) {
  ovl_i_bsr *L = &A->loc;
  if (L->nnzb + blocks > L->cap_blocks) {
    int64_t cap = L->cap_blocks * 2 > 16 ? L->cap_blocks * 2 : 16;
    if (cap < L->nnzb + blocks) cap = L->nnzb + blocks;
    ovl_err rc = grow(&L->colidx, sizeof(int), L->nnzb, cap);
    if (rc == OVL_OK) rc = grow(&L->valoff, sizeof(int64_t), L->nnzb, cap);
    if (rc == OVL_OK) rc = grow(&L->nrm, sizeof(double), L->nnzb, cap);
    if (rc != OVL_OK)
      return ovl_err_set(OVL_ERR_NOMEM, "cannot grow the index of a block-sparse matrix to %" PRId64 " blocks", cap);
    L->cap_blocks = cap;
  }
  if (L->nval + vals > L->cap_val) {
    int64_t cap = L->cap_val * 2 > 1024 ? L->cap_val * 2 : 1024;
    if (cap < L->nval + vals) cap = L->nval + vals;
    if (grow(&L->val, sizeof(double), L->nval, cap) != OVL_OK)
      return ovl_err_set(OVL_ERR_NOMEM,
                         "cannot grow the blocks of a block-sparse matrix to %" PRId64 " doubles (%.1f MiB)", cap,
                         (double)cap * 8.0 / 1048576.0);
    L->cap_val = cap;
  }
  return OVL_OK;
}

void ovl_i_sparse_clear(ovl_bsmat A) {
  A->loc.nnzb = A->loc.nval = 0;
  A->loc.last_row = -1;
  memset(A->loc.rowptr, 0, sizeof(int64_t) * (size_t)(A->nrows + 1));
}

double ovl_i_sparse_norm(const double *x, int64_t len) {
  double s0 = 0.0; /* one pass when the sum of squares neither overflows nor underflows */
  for (int64_t k = 0; k < len; k++) s0 += x[k] * x[k];
  if (s0 == 0.0) return 0.0;
  if (s0 > 1e-280 && s0 < 1e280) return sqrt(s0);
  double amax = 0.0;
  for (int64_t k = 0; k < len; k++) {
    double a = fabs(x[k]);
    if (a > amax) amax = a;
  }
  double s = 0.0;
  if (amax == 0.0 || isinf(amax)) { /* all zero (or NaN: the sum says so), or infinite */
    for (int64_t k = 0; k < len; k++) s += x[k] * x[k];
    return sqrt(s);
  }
  for (int64_t k = 0; k < len; k++) {
    double t = x[k] / amax;
    s += t * t;
  }
  return amax * sqrt(s);
}

ovl_err ovl_i_sparse_append_block(ovl_bsmat A, int64_t lr, int gj, const double *blk, double nrm, double **dst) {
  ovl_i_bsr *L = &A->loc;
  if (lr < 0 || lr >= A->nrows || gj < 0 || gj >= A->nblk || A->lcol[gj] < 0 || lr < L->last_row ||
      (lr == L->last_row && L->nnzb > 0 && L->colidx[L->nnzb - 1] >= gj))
    return ovl_err_set(OVL_ERR_INTERNAL,
                       "block (local row %" PRId64 ", column %d) appended out of order or not held here", lr, gj);
  int64_t len = (int64_t)A->bs[A->rows[lr]] * A->bs[gj];
  OVL_TRY(ovl_i_sparse_reserve(A, 1, len));
  for (int64_t r = L->last_row + 1; r <= lr; r++) L->rowptr[r] = L->nnzb;
  double *v = L->val + L->nval;
  if (!blk) memset(v, 0, sizeof(double) * (size_t)len);
  else if (blk != v) memcpy(v, blk, sizeof(double) * (size_t)len); /* blk == v: built in place */
  L->colidx[L->nnzb] = gj;
  L->valoff[L->nnzb] = L->nval;
  L->nrm[L->nnzb] = nrm >= 0 ? nrm : ovl_i_sparse_norm(v, len);
  L->nnzb++;
  L->nval += len;
  L->rowptr[lr + 1] = L->nnzb;
  L->last_row = lr;
  if (dst) *dst = v;
  return OVL_OK;
}

void ovl_i_sparse_finish(ovl_bsmat A) {
  ovl_i_bsr *L = &A->loc;
  for (int64_t r = L->last_row + 1; r <= A->nrows; r++) L->rowptr[r] = L->nnzb;
}

int64_t ovl_i_sparse_find(ovl_bsmat A, int64_t lr, int gj) {
  const ovl_i_bsr *L = &A->loc;
  int64_t lo = L->rowptr[lr], hi = L->rowptr[lr + 1] - 1;
  while (lo <= hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (L->colidx[mid] == gj) return mid;
    if (L->colidx[mid] < gj) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

void ovl_i_sparse_swap(ovl_bsmat A, ovl_bsmat B) {
  ovl_i_bsr t = A->loc;
  A->loc = B->loc;
  B->loc = t;
}

int ovl_i_sparse_same_layout(ovl_bsmat A, ovl_bsmat B) {
  if (A == B) return 1;
  if (A->nblk != B->nblk || A->seed != B->seed || A->p != B->p || A->q != B->q || A->myrow != B->myrow ||
      A->mycol != B->mycol || memcmp(A->bs, B->bs, sizeof(int) * (size_t)A->nblk) != 0)
    return 0;
  if (A->g == B->g) return 1;
  int cmp = MPI_UNEQUAL;
  if (MPI_Comm_compare(ovl_grid2d_parent(A->g), ovl_grid2d_parent(B->g), &cmp) != MPI_SUCCESS) return 0;
  return cmp == MPI_IDENT || cmp == MPI_CONGRUENT;
}

/* ---- conversion ------------------------------------------------------------------
 * One MPI_Alltoallv over B's parent between D's blocks and B's local dense
 * view W (the block rows this process holds, stacked in increasing global I,
 * by the block columns it holds: column-major, ld = max(1, rows)). Both sides
 * walk the entries a pair exchanges in the same order (global column, then
 * global row, increasing), so no index travels. */

typedef struct conv_ctx {
  int P;
  int64_t *rect;  /* 4 P: every rank's D block (row offset, rows, column offset, columns) */
  int *blkof;     /* n: the block of each index */
  int64_t *rpos;  /* n: W's row of a global row, or -1 */
  int64_t *cpos;  /* n: W's column of a global column, or -1 */
  int64_t wm, wn; /* W's size */
  double *W;
  int *cnt;    /* 4 P: dense side's counts and displacements, B side's */
  int64_t *at; /* p q + D's local rows: the dense side's cursors and process rows */
  double *dbuf, *bbuf;
} conv_ctx;

static void conv_free(conv_ctx *c) {
  ovl_free(&c->rect);
  ovl_free(&c->blkof);
  ovl_free(&c->rpos);
  ovl_free(&c->cpos);
  ovl_free(&c->W);
  ovl_free(&c->cnt);
  ovl_free(&c->at);
  ovl_free(&c->dbuf);
  ovl_free(&c->bbuf);
}

/* After the local checks' verdict rc (agreed here): every rank's D block. */
static ovl_err conv_gather(ovl_bsmat B, ovl_dmat D, conv_ctx *c, ovl_err rc) {
  MPI_Comm parent = ovl_grid2d_parent(B->g);
  if (rc == OVL_OK) rc = ovl_malloc(sizeof(int64_t) * 4 * (size_t)c->P, &c->rect);
  OVL_TRY(ovl_err_agree(parent, rc));
  int64_t mine[4] = {ovl_dmat_row_off(D), ovl_dmat_local_rows(D), ovl_dmat_col_off(D), ovl_dmat_local_cols(D)};
  if (mine[1] <= 0 || mine[3] <= 0) mine[0] = mine[1] = mine[2] = mine[3] = 0;
  OVL_MPI(MPI_Allgather(mine, 4, MPI_INT64_T, c->rect, 4, MPI_INT64_T, parent));
  return OVL_OK;
}

/* Everything else but the exchange itself. LOCAL. */
static ovl_err conv_setup(ovl_bsmat B, ovl_dmat D, conv_ctx *c) {
  int P = c->P;
  int64_t n = B->n;
  int64_t mine[4] = {ovl_dmat_row_off(D), ovl_dmat_local_rows(D), ovl_dmat_col_off(D), ovl_dmat_local_cols(D)};
  if (mine[1] <= 0 || mine[3] <= 0) mine[0] = mine[1] = mine[2] = mine[3] = 0;
  OVL_TRY(ovl_malloc(sizeof(int) * (size_t)(n + 1), &c->blkof));
  OVL_TRY(ovl_malloc(sizeof(int64_t) * (size_t)(n + 1), &c->rpos));
  OVL_TRY(ovl_malloc(sizeof(int64_t) * (size_t)(n + 1), &c->cpos));
  c->wm = c->wn = 0;
  for (int b = 0; b < B->nblk; b++) {
    for (int64_t i = B->boff[b]; i < B->boff[b + 1]; i++) {
      c->blkof[i] = b;
      c->rpos[i] = B->lrow[b] >= 0 ? c->wm + (i - B->boff[b]) : -1;
      c->cpos[i] = B->lcol[b] >= 0 ? c->wn + (i - B->boff[b]) : -1;
    }
    if (B->lrow[b] >= 0) c->wm += B->bs[b];
    if (B->lcol[b] >= 0) c->wn += B->bs[b];
  }
  int64_t ldw = c->wm > 0 ? c->wm : 1, wlen = 0;
  if (!ovl_mul_i64(ldw, c->wn, &wlen) || wlen > INT64_MAX / 8)
    return ovl_err_set(OVL_ERR_NOMEM, "the local part of a %" PRId64 " x %" PRId64 " matrix is too large", n, n);
  OVL_TRY(ovl_calloc(sizeof(double) * (size_t)wlen, &c->W));
  OVL_TRY(ovl_calloc(sizeof(int) * 4 * (size_t)P, &c->cnt));
  int *dcnt = c->cnt, *ddsp = c->cnt + P, *bcnt = c->cnt + 2 * P, *bdsp = c->cnt + 3 * P;
  /* the dense side: my D block's entries by the B process that holds them */
  int64_t *rowsin = NULL, *colsin = NULL, tot = 0;
  OVL_TRY(ovl_calloc(sizeof(int64_t) * (size_t)(B->p + B->q), &rowsin));
  colsin = rowsin + B->p;
  for (int64_t i = mine[0]; i < mine[0] + mine[1]; i++) rowsin[ovl_i_sparse_prow(B, c->blkof[i])]++;
  for (int64_t j = mine[2]; j < mine[2] + mine[3]; j++) colsin[ovl_i_sparse_pcol(B, c->blkof[j])]++;
  ovl_err rc = OVL_OK;
  for (int d = 0; d < P; d++) {
    int64_t k = d < B->p * B->q ? rowsin[d / B->q] * colsin[d % B->q] : 0;
    if (k > INT32_MAX - tot) rc = ovl_err_set(OVL_ERR_SIZE, "a conversion message of over 2^31 doubles");
    dcnt[d] = (int)k, ddsp[d] = (int)tot;
    if (rc == OVL_OK) tot += k;
  }
  ovl_free(&rowsin);
  OVL_TRY(rc);
  OVL_TRY(ovl_malloc(sizeof(int64_t) * (size_t)(B->p * B->q + mine[1] + 1), &c->at));
  OVL_TRY(ovl_malloc(sizeof(double) * (size_t)tot, &c->dbuf));
  /* the B side: the entries of W each rank's D block holds */
  tot = 0;
  for (int s = 0; s < P; s++) {
    const int64_t *R = c->rect + 4 * s;
    int64_t a = 0, b = 0;
    for (int64_t i = R[0]; i < R[0] + R[1] && c->wm > 0; i++) a += c->rpos[i] >= 0;
    for (int64_t j = R[2]; j < R[2] + R[3] && c->wn > 0; j++) b += c->cpos[j] >= 0;
    if (a * b > INT32_MAX - tot) return ovl_err_set(OVL_ERR_SIZE, "a conversion message of over 2^31 doubles");
    bcnt[s] = (int)(a * b), bdsp[s] = (int)tot;
    tot += a * b;
  }
  return ovl_malloc(sizeof(double) * (size_t)tot, &c->bbuf);
}

/* The dense side: D's entries to (from_dense) or from (to_dense) dbuf. */
static void conv_dense(ovl_bsmat B, ovl_dmat D, conv_ctx *c, int to_dense) {
  int P = c->P, *ddsp = c->cnt + P;
  int64_t ro = ovl_dmat_row_off(D), lm = ovl_dmat_local_rows(D), co = ovl_dmat_col_off(D), ln = ovl_dmat_local_cols(D);
  int64_t ld = ovl_dmat_ld(D);
  double *Dd = ovl_dmat_data(D);
  if (lm <= 0 || ln <= 0) return;
  int64_t *at = c->at, *prow = at + B->p * B->q;
  for (int d = 0; d < B->p * B->q; d++) at[d] = ddsp[d];
  for (int64_t ii = 0; ii < lm; ii++) prow[ii] = (int64_t)ovl_i_sparse_prow(B, c->blkof[ro + ii]) * B->q;
  for (int64_t jj = 0; jj < ln; jj++) {
    int pc = ovl_i_sparse_pcol(B, c->blkof[co + jj]);
    double *col = Dd + jj * ld;
    if (to_dense)
      for (int64_t ii = 0; ii < lm; ii++) col[ii] = c->dbuf[at[prow[ii] + pc]++];
    else
      for (int64_t ii = 0; ii < lm; ii++) c->dbuf[at[prow[ii] + pc]++] = col[ii];
  }
}

/* The B side: W's entries to (to_dense) or from (from_dense) bbuf. */
static void conv_sparse(conv_ctx *c, int to_dense) {
  int P = c->P, *bdsp = c->cnt + 3 * P;
  int64_t ldw = c->wm > 0 ? c->wm : 1;
  if (c->wm == 0 || c->wn == 0) return;
  for (int s = 0; s < P; s++) {
    const int64_t *R = c->rect + 4 * s;
    int64_t k = bdsp[s];
    for (int64_t j = R[2]; j < R[2] + R[3]; j++) {
      if (c->cpos[j] < 0) continue;
      double *col = c->W + c->cpos[j] * ldw;
      for (int64_t i = R[0]; i < R[0] + R[1]; i++) {
        if (c->rpos[i] < 0) continue;
        if (to_dense) c->bbuf[k++] = col[c->rpos[i]];
        else col[c->rpos[i]] = c->bbuf[k++];
      }
    }
  }
}

static ovl_err conv_check(ovl_bsmat B, ovl_dmat D, const char *fn, conv_ctx *c) {
  OVL_TRY(ovl_check_handle(B, fn, "B"));
  OVL_TRY(ovl_check_handle(D, fn, "D"));
  MPI_Comm parent = ovl_grid2d_parent(B->g);
  int cmp = MPI_UNEQUAL;
  OVL_MPI(MPI_Comm_size(parent, &c->P));
  OVL_MPI(MPI_Comm_compare(parent, ovl_grid2d_parent(ovl_dmat_grid(D)), &cmp));
  if (cmp != MPI_IDENT && cmp != MPI_CONGRUENT)
    return ovl_err_set(OVL_ERR_ARG, "%s: the dense and the block-sparse matrix are not over the same ranks", fn);
  if (ovl_dmat_rows(D) != B->n || ovl_dmat_cols(D) != B->n)
    return ovl_err_set(OVL_ERR_SIZE,
                       "%s: the dense matrix is %" PRId64 " x %" PRId64 ", the block-sparse one %" PRId64 " x %" PRId64,
                       fn, ovl_dmat_rows(D), ovl_dmat_cols(D), B->n, B->n);
  return OVL_OK;
}

static ovl_err exchange(ovl_bsmat B, conv_ctx *c, int to_dense) {
  int P = c->P, *dcnt = c->cnt, *ddsp = c->cnt + P, *bcnt = c->cnt + 2 * P, *bdsp = c->cnt + 3 * P;
  int rc =
      to_dense
          ? MPI_Alltoallv(c->bbuf, bcnt, bdsp, MPI_DOUBLE, c->dbuf, dcnt, ddsp, MPI_DOUBLE, ovl_grid2d_parent(B->g))
          : MPI_Alltoallv(c->dbuf, dcnt, ddsp, MPI_DOUBLE, c->bbuf, bcnt, bdsp, MPI_DOUBLE, ovl_grid2d_parent(B->g));
  if (rc != MPI_SUCCESS)
    ovl_fatal(ovl_grid2d_parent(B->g), OVL_ERR_MPI, "MPI_Alltoallv failed in a block-sparse conversion");
  return OVL_OK;
}

ovl_err ovl_bsmat_from_dense(ovl_dmat D, double eps, ovl_bsmat B) {
  const char *fn = "ovl_bsmat_from_dense";
  conv_ctx c = {0};
  OVL_TRY(ovl_check_handle(B, fn, "B"));
  ovl_err rc = conv_check(B, D, fn, &c);
  if (rc == OVL_OK && !(eps >= 0 && eps < INFINITY))
    rc = ovl_err_set(OVL_ERR_ARG, "%s: the threshold eps must be finite and >= 0, got %g", fn, eps);
  double *tmp = NULL;
  int64_t mr = 0, mc = 0;
  for (int64_t r = 0; r < B->nrows; r++) mr = B->bs[B->rows[r]] > mr ? B->bs[B->rows[r]] : mr;
  for (int64_t k = 0; k < B->ncols; k++) mc = B->bs[B->cols[k]] > mc ? B->bs[B->cols[k]] : mc;
  rc = conv_gather(B, D, &c, rc);
  if (rc != OVL_OK) {
    conv_free(&c);
    return rc;
  }
  rc = conv_setup(B, D, &c);
  if (rc == OVL_OK) rc = ovl_malloc(sizeof(double) * (size_t)(mr * mc), &tmp);
  rc = ovl_err_agree(ovl_grid2d_parent(B->g), rc);
  if (rc == OVL_OK) {
    conv_dense(B, D, &c, 0);
    exchange(B, &c, 0);
    conv_sparse(&c, 0);
    ovl_i_sparse_clear(B);
    int64_t ldw = c.wm > 0 ? c.wm : 1, r0 = 0;
    for (int64_t r = 0; r < B->nrows && rc == OVL_OK; r++) {
      int m = B->bs[B->rows[r]];
      int64_t c0 = 0;
      for (int64_t k = 0; k < B->ncols && rc == OVL_OK; k++) {
        int nb = B->bs[B->cols[k]];
        for (int y = 0; y < nb; y++)
          memcpy(tmp + (int64_t)y * m, c.W + r0 + (c0 + y) * ldw, sizeof(double) * (size_t)m);
        double nrm = ovl_i_sparse_norm(tmp, (int64_t)m * nb);
        if (ovl_i_sparse_keep(nrm, eps)) rc = ovl_i_sparse_append_block(B, r, B->cols[k], tmp, nrm, NULL);
        c0 += nb;
      }
      r0 += m;
    }
    ovl_i_sparse_finish(B);
    if (rc != OVL_OK) ovl_i_sparse_clear(B);
    rc = ovl_err_agree(ovl_grid2d_parent(B->g), rc);
  }
  ovl_free(&tmp);
  conv_free(&c);
  return rc;
}

ovl_err ovl_bsmat_to_dense(ovl_bsmat B, ovl_dmat D) {
  const char *fn = "ovl_bsmat_to_dense";
  conv_ctx c = {0};
  OVL_TRY(ovl_check_handle(B, fn, "B"));
  ovl_err rc = conv_gather(B, D, &c, conv_check(B, D, fn, &c));
  if (rc != OVL_OK) {
    conv_free(&c);
    return rc;
  }
  rc = conv_setup(B, D, &c);
  rc = ovl_err_agree(ovl_grid2d_parent(B->g), rc);
  if (rc == OVL_OK) {
    int64_t ldw = c.wm > 0 ? c.wm : 1, r0 = 0;
    for (int64_t r = 0; r < B->nrows; r++) {
      int m = B->bs[B->rows[r]];
      for (int64_t k = B->loc.rowptr[r]; k < B->loc.rowptr[r + 1]; k++) {
        int J = B->loc.colidx[k], nb = B->bs[J];
        int64_t c0 = c.cpos[B->boff[J]];
        const double *v = B->loc.val + B->loc.valoff[k];
        for (int y = 0; y < nb; y++) memcpy(c.W + r0 + (c0 + y) * ldw, v + (int64_t)y * m, sizeof(double) * (size_t)m);
      }
      r0 += m;
    }
    conv_sparse(&c, 1);
    exchange(B, &c, 1);
    conv_dense(B, D, &c, 1);
  }
  conv_free(&c);
  return rc;
}

ovl_err ovl_bsmat_set_arith(ovl_bsmat C, ovl_bsmat_arith arith) {
  OVL_TRY(ovl_check_handle(C, "ovl_bsmat_set_arith", "C"));
  if (arith != OVL_BSMAT_FLOAT64 && arith != OVL_BSMAT_FLOAT32)
    return ovl_err_set(OVL_ERR_ARG, "ovl_bsmat_set_arith: arith must be OVL_BSMAT_FLOAT64 or OVL_BSMAT_FLOAT32, got %d",
                       (int)arith);
  C->arith = (int)arith;
  return OVL_OK;
}

ovl_bsmat_arith ovl_bsmat_get_arith(ovl_bsmat C) { return C ? (ovl_bsmat_arith)C->arith : OVL_BSMAT_FLOAT64; }

ovl_err ovl_bsmat_set_symmetric(ovl_bsmat C, int symmetric) {
  OVL_TRY(ovl_check_handle(C, "ovl_bsmat_set_symmetric", "C"));
  if (symmetric != 0 && symmetric != 1)
    return ovl_err_set(OVL_ERR_ARG, "ovl_bsmat_set_symmetric: symmetric must be 0 or 1, got %d", symmetric);
  C->sym = symmetric;
  return OVL_OK;
}

int ovl_bsmat_get_symmetric(ovl_bsmat C) { return C ? C->sym : 0; }
