/* Operations on the stored blocks of block-sparse matrices: copy, scale,
 * shift, axpby, filter (LOCAL), and the sums over the grid: trace, dot,
 * Frobenius norm, Gershgorin bounds (COLLECTIVE). */
#include <cblas.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sparse/sparse_impl.h"

/* A shallow copy of A's layout with no blocks, to build new local blocks
 * into (then ovl_i_sparse_swap them into A and free the old with
 * ovl_i_sparse_free). */
static ovl_err builder(ovl_bsmat A, struct ovl_bsmat_s *T) {
  *T = *A;
  memset(&T->loc, 0, sizeof T->loc);
  T->loc.last_row = -1;
  T->loc.val = A->val_spare, T->loc.cap_val = A->val_spare_cap; /* mapped already */
  A->val_spare = NULL, A->val_spare_cap = 0;
  return ovl_calloc(sizeof(int64_t) * (size_t)(A->nrows + 1), &T->loc.rowptr);
}

/* After ovl_i_sparse_swap(A, T): A's former blocks are in T; their value
 * array becomes A's spare, the rest is freed. */
static void builder_done(ovl_bsmat A, struct ovl_bsmat_s *T) {
  if (A->val_spare == NULL)
    A->val_spare = T->loc.val, A->val_spare_cap = T->loc.cap_val, T->loc.val = NULL, T->loc.cap_val = 0;
  ovl_i_sparse_free(&T->loc);
}

static ovl_err check_eps(double eps, const char *fn) {
  OVL_CHECK(eps >= 0 && eps < INFINITY, OVL_ERR_ARG, "%s: the threshold eps must be finite and >= 0, got %g", fn, eps);
  return OVL_OK;
}

static ovl_err check_same(ovl_bsmat A, ovl_bsmat B, const char *fn) {
  OVL_CHECK(ovl_i_sparse_same_layout(A, B), OVL_ERR_ARG,
            "%s: the matrices differ in grid, blocks or permutation (make one with ovl_bsmat_create_like)", fn);
  return OVL_OK;
}

ovl_err ovl_bsmat_copy(ovl_bsmat dst, ovl_bsmat src) {
  OVL_TRY(ovl_check_handle(dst, "ovl_bsmat_copy", "dst"));
  OVL_TRY(ovl_check_handle(src, "ovl_bsmat_copy", "src"));
  if (dst == src) return OVL_OK;
  OVL_TRY(check_same(dst, src, "ovl_bsmat_copy"));
  ovl_i_sparse_clear(dst);
  OVL_TRY(ovl_i_sparse_reserve(dst, src->loc.nnzb, src->loc.nval));
  ovl_i_bsr *D = &dst->loc;
  const ovl_i_bsr *S = &src->loc;
  size_t nb = (size_t)S->nnzb;
  memcpy(D->rowptr, S->rowptr, sizeof(int64_t) * (size_t)(src->nrows + 1));
  if (nb) {
    memcpy(D->colidx, S->colidx, sizeof(int) * nb);
    memcpy(D->valoff, S->valoff, sizeof(int64_t) * nb);
    memcpy(D->nrm, S->nrm, sizeof(double) * nb);
  }
  if (S->nval) memcpy(D->val, S->val, sizeof(double) * (size_t)S->nval);
  D->nnzb = S->nnzb, D->nval = S->nval;
  D->last_row = src->nrows - 1;
  return OVL_OK;
}

ovl_err ovl_bsmat_scale(ovl_bsmat A, double alpha) {
  OVL_TRY(ovl_check_handle(A, "ovl_bsmat_scale", "A"));
  OVL_CHECK(isfinite(alpha), OVL_ERR_ARG, "ovl_bsmat_scale: alpha must be finite, got %g", alpha);
  for (int64_t k = 0; k < A->loc.nval; k++) A->loc.val[k] *= alpha;
  for (int64_t k = 0; k < A->loc.nnzb; k++) A->loc.nrm[k] *= fabs(alpha);
  return OVL_OK;
}

ovl_err ovl_bsmat_shift(ovl_bsmat A, double alpha, double beta) {
  OVL_TRY(ovl_check_handle(A, "ovl_bsmat_shift", "A"));
  OVL_CHECK(isfinite(alpha) && isfinite(beta), OVL_ERR_ARG,
            "ovl_bsmat_shift: alpha and beta must be finite, got %g, %g", alpha, beta);
  OVL_TRY(ovl_bsmat_scale(A, alpha));
  if (beta == 0) return OVL_OK;
  ovl_i_bsr *L = &A->loc;
  int missing = 0;
  for (int64_t r = 0; r < A->nrows && !missing; r++)
    missing = A->lcol[A->rows[r]] >= 0 && ovl_i_sparse_find(A, r, A->rows[r]) < 0;
  if (missing) { /* rebuild with the absent diagonal blocks inserted as zeros */
    struct ovl_bsmat_s T;
    ovl_err rc = builder(A, &T);
    for (int64_t r = 0; r < A->nrows && rc == OVL_OK; r++) {
      int gi = A->rows[r], done = A->lcol[gi] < 0;
      for (int64_t k = L->rowptr[r]; k < L->rowptr[r + 1] && rc == OVL_OK; k++) {
        if (!done && L->colidx[k] > gi) rc = ovl_i_sparse_append_block(&T, r, gi, NULL, 0.0, NULL), done = 1;
        if (rc == OVL_OK) rc = ovl_i_sparse_append_block(&T, r, L->colidx[k], L->val + L->valoff[k], L->nrm[k], NULL);
        if (L->colidx[k] == gi) done = 1;
      }
      if (rc == OVL_OK && !done) rc = ovl_i_sparse_append_block(&T, r, gi, NULL, 0.0, NULL);
    }
    ovl_i_sparse_finish(&T);
    if (rc != OVL_OK) {
      ovl_i_sparse_free(&T.loc);
      return rc;
    }
    ovl_i_sparse_swap(A, &T);
    builder_done(A, &T);
  }
  for (int64_t r = 0; r < A->nrows; r++) {
    int gi = A->rows[r];
    int64_t k = A->lcol[gi] >= 0 ? ovl_i_sparse_find(A, r, gi) : -1;
    if (k < 0) continue;
    int m = A->bs[gi];
    double *v = L->val + L->valoff[k];
    for (int x = 0; x < m; x++) v[x + (int64_t)x * m] += beta;
    L->nrm[k] = ovl_i_sparse_norm(v, (int64_t)m * m);
  }
  return OVL_OK;
}

ovl_err ovl_bsmat_axpby(double alpha, ovl_bsmat A, double beta, ovl_bsmat B, double eps, ovl_bsmat C) {
  const char *fn = "ovl_bsmat_axpby";
  OVL_TRY(ovl_check_handle(A, fn, "A"));
  OVL_TRY(ovl_check_handle(B, fn, "B"));
  OVL_TRY(ovl_check_handle(C, fn, "C"));
  OVL_TRY(check_same(A, B, fn));
  OVL_TRY(check_same(A, C, fn));
  OVL_TRY(check_eps(eps, fn));
  OVL_CHECK(isfinite(alpha) && isfinite(beta), OVL_ERR_ARG, "%s: alpha and beta must be finite, got %g, %g", fn, alpha,
            beta);
  struct ovl_bsmat_s T;
  OVL_TRY(builder(C, &T));
  const ovl_i_bsr *a = &A->loc, *b = &B->loc;
  /* room for the union of the patterns at once: each block is summed in place, where it is appended */
  ovl_err rc = ovl_i_sparse_reserve(&T, a->nnzb + b->nnzb, a->nval + b->nval);
  for (int64_t r = 0; r < A->nrows && rc == OVL_OK; r++) {
    int64_t ka = a->rowptr[r], kb = b->rowptr[r], ea = a->rowptr[r + 1], eb = b->rowptr[r + 1];
    int m = A->bs[A->rows[r]];
    while ((ka < ea || kb < eb) && rc == OVL_OK) {
      int ja = ka < ea ? a->colidx[ka] : A->nblk, jb = kb < eb ? b->colidx[kb] : A->nblk, j = ja < jb ? ja : jb;
      int64_t len = (int64_t)m * A->bs[j];
      const double *va = ja == j ? a->val + a->valoff[ka] : NULL, *vb = jb == j ? b->val + b->valoff[kb] : NULL;
      double *tmp = T.loc.val + T.loc.nval;
      if (va && vb)
        for (int64_t x = 0; x < len; x++) tmp[x] = alpha * va[x] + beta * vb[x];
      else if (va)
        for (int64_t x = 0; x < len; x++) tmp[x] = alpha * va[x];
      else
        for (int64_t x = 0; x < len; x++) tmp[x] = beta * vb[x];
      double nrm = ovl_i_sparse_norm(tmp, len);
      if (ovl_i_sparse_keep(nrm, eps)) rc = ovl_i_sparse_append_block(&T, r, j, tmp, nrm, NULL);
      if (ja == j) ka++;
      if (jb == j) kb++;
    }
  }
  ovl_i_sparse_finish(&T);
  if (rc != OVL_OK) {
    ovl_i_sparse_free(&T.loc);
    return rc;
  }
  ovl_i_sparse_swap(C, &T);
  builder_done(C, &T);
  return OVL_OK;
}

ovl_err ovl_bsmat_filter(ovl_bsmat A, double eps) {
  OVL_TRY(ovl_check_handle(A, "ovl_bsmat_filter", "A"));
  OVL_TRY(check_eps(eps, "ovl_bsmat_filter"));
  ovl_i_bsr *L = &A->loc;
  int64_t nb = 0, nv = 0;
  for (int64_t r = 0; r < A->nrows; r++) {
    int64_t k0 = L->rowptr[r], k1 = L->rowptr[r + 1];
    L->rowptr[r] = nb;
    int m = A->bs[A->rows[r]];
    for (int64_t k = k0; k < k1; k++) {
      if (!ovl_i_sparse_keep(L->nrm[k], eps)) continue;
      int64_t len = (int64_t)m * A->bs[L->colidx[k]];
      if (L->valoff[k] != nv) memmove(L->val + nv, L->val + L->valoff[k], sizeof(double) * (size_t)len);
      L->colidx[nb] = L->colidx[k], L->nrm[nb] = L->nrm[k], L->valoff[nb] = nv;
      nb++, nv += len;
    }
  }
  L->rowptr[A->nrows] = nb;
  L->nnzb = nb, L->nval = nv;
  L->last_row = A->nrows - 1;
  return OVL_OK;
}

/* ---- sums over the grid ------------------------------------------------------------- */

static ovl_err sum_over(ovl_bsmat A, double *v, int k) {
  OVL_MPI(MPI_Allreduce(MPI_IN_PLACE, v, k, MPI_DOUBLE, MPI_SUM, ovl_grid2d_parent(A->g)));
  return OVL_OK;
}

ovl_err ovl_bsmat_trace(ovl_bsmat A, double *tr) {
  OVL_TRY(ovl_check_handle(A, "ovl_bsmat_trace", "A"));
  OVL_TRY(ovl_check_ptr(tr, "ovl_bsmat_trace", "tr"));
  double s = 0;
  for (int64_t r = 0; r < A->nrows; r++) {
    int gi = A->rows[r];
    int64_t k = A->lcol[gi] >= 0 ? ovl_i_sparse_find(A, r, gi) : -1;
    if (k < 0) continue;
    const double *v = A->loc.val + A->loc.valoff[k];
    for (int x = 0; x < A->bs[gi]; x++) s += v[x + (int64_t)x * A->bs[gi]];
  }
  OVL_TRY(sum_over(A, &s, 1));
  *tr = s;
  return OVL_OK;
}

ovl_err ovl_bsmat_dot(ovl_bsmat A, ovl_bsmat B, double *tr) {
  OVL_TRY(ovl_check_handle(A, "ovl_bsmat_dot", "A"));
  OVL_TRY(ovl_check_handle(B, "ovl_bsmat_dot", "B"));
  OVL_TRY(ovl_check_ptr(tr, "ovl_bsmat_dot", "tr"));
  ovl_err rc = check_same(A, B, "ovl_bsmat_dot");
  OVL_TRY(ovl_err_agree(ovl_grid2d_parent(A->g), rc));
  const ovl_i_bsr *a = &A->loc, *b = &B->loc;
  double s = 0;
  for (int64_t r = 0; r < A->nrows; r++) {
    int64_t ka = a->rowptr[r], kb = b->rowptr[r];
    int m = A->bs[A->rows[r]];
    while (ka < a->rowptr[r + 1] && kb < b->rowptr[r + 1]) {
      if (a->colidx[ka] < b->colidx[kb]) ka++;
      else if (a->colidx[ka] > b->colidx[kb]) kb++;
      else {
        int64_t len = (int64_t)m * A->bs[a->colidx[ka]];
        const double *va = a->val + a->valoff[ka], *vb = b->val + b->valoff[kb];
        for (int64_t x = 0; x < len; x++) s += va[x] * vb[x];
        ka++, kb++;
      }
    }
  }
  OVL_TRY(sum_over(A, &s, 1));
  *tr = s;
  return OVL_OK;
}

ovl_err ovl_bsmat_dist_fro(ovl_bsmat A, ovl_bsmat B, double *d) {
  OVL_TRY(ovl_check_handle(A, "ovl_bsmat_dist_fro", "A"));
  OVL_TRY(ovl_check_handle(B, "ovl_bsmat_dist_fro", "B"));
  OVL_TRY(ovl_check_ptr(d, "ovl_bsmat_dist_fro", "d"));
  OVL_TRY(ovl_err_agree(ovl_grid2d_parent(A->g), check_same(A, B, "ovl_bsmat_dist_fro")));
  const ovl_i_bsr *a = &A->loc, *b = &B->loc;
  double s = 0;
  for (int64_t r = 0; r < A->nrows; r++) {
    int64_t ka = a->rowptr[r], kb = b->rowptr[r], ea = a->rowptr[r + 1], eb = b->rowptr[r + 1];
    int m = A->bs[A->rows[r]];
    while (ka < ea || kb < eb) {
      int ja = ka < ea ? a->colidx[ka] : A->nblk, jb = kb < eb ? b->colidx[kb] : A->nblk;
      if (ja < jb) s += a->nrm[ka] * a->nrm[ka], ka++;
      else if (jb < ja) s += b->nrm[kb] * b->nrm[kb], kb++;
      else {
        int64_t len = (int64_t)m * A->bs[ja];
        const double *va = a->val + a->valoff[ka], *vb = b->val + b->valoff[kb];
        for (int64_t x = 0; x < len; x++) s += (va[x] - vb[x]) * (va[x] - vb[x]);
        ka++, kb++;
      }
    }
  }
  OVL_TRY(sum_over(A, &s, 1));
  *d = sqrt(s);
  return OVL_OK;
}

ovl_err ovl_bsmat_swap(ovl_bsmat A, ovl_bsmat B) {
  OVL_TRY(ovl_check_handle(A, "ovl_bsmat_swap", "A"));
  OVL_TRY(ovl_check_handle(B, "ovl_bsmat_swap", "B"));
  OVL_TRY(check_same(A, B, "ovl_bsmat_swap"));
  ovl_i_sparse_swap(A, B);
  return OVL_OK;
}

ovl_err ovl_bsmat_norm_fro(ovl_bsmat A, double *nrm) {
  OVL_TRY(ovl_check_handle(A, "ovl_bsmat_norm_fro", "A"));
  OVL_TRY(ovl_check_ptr(nrm, "ovl_bsmat_norm_fro", "nrm"));
  double s = 0;
  for (int64_t k = 0; k < A->loc.nnzb; k++) s += A->loc.nrm[k] * A->loc.nrm[k];
  OVL_TRY(sum_over(A, &s, 1));
  *nrm = sqrt(s);
  return OVL_OK;
}

ovl_err ovl_bsmat_gershgorin(ovl_bsmat A, double *lo, double *hi) {
  OVL_TRY(ovl_check_handle(A, "ovl_bsmat_gershgorin", "A"));
  OVL_TRY(ovl_check_ptr(lo, "ovl_bsmat_gershgorin", "lo"));
  OVL_TRY(ovl_check_ptr(hi, "ovl_bsmat_gershgorin", "hi"));
  MPI_Comm parent = ovl_grid2d_parent(A->g);
  int64_t len = 0;
  for (int64_t r = 0; r < A->nrows; r++) len += A->bs[A->rows[r]];
  double *w = NULL; /* per local row: the diagonal entry, then the sum of |off-diagonal| */
  ovl_err rc = 2 * len > INT32_MAX ? ovl_err_set(OVL_ERR_SIZE, "ovl_bsmat_gershgorin: %" PRId64 " local rows", len)
                                   : ovl_calloc(sizeof(double) * (size_t)(2 * len + 1), &w);
  OVL_TRY(ovl_err_agree(parent, rc));
  const ovl_i_bsr *L = &A->loc;
  int64_t r0 = 0;
  for (int64_t r = 0; r < A->nrows; r++) {
    int gi = A->rows[r], m = A->bs[gi];
    for (int64_t k = L->rowptr[r]; k < L->rowptr[r + 1]; k++) {
      int gj = L->colidx[k], nb = A->bs[gj];
      const double *v = L->val + L->valoff[k];
      for (int y = 0; y < nb; y++)
        for (int x = 0; x < m; x++) {
          double e = v[x + (int64_t)y * m];
          if (gi == gj && x == y) w[2 * (r0 + x)] += e;
          else w[2 * (r0 + x) + 1] += fabs(e);
        }
    }
    r0 += m;
  }
  double b[2] = {INFINITY, INFINITY}; /* min of c - r, min of -(c + r) */
  if (A->myrow >= 0) {
    if (len > 0 &&
        MPI_Allreduce(MPI_IN_PLACE, w, (int)(2 * len), MPI_DOUBLE, MPI_SUM, ovl_grid2d_row_comm(A->g)) != MPI_SUCCESS)
      ovl_fatal(parent, OVL_ERR_MPI, "MPI_Allreduce failed in ovl_bsmat_gershgorin");
    for (int64_t x = 0; x < len; x++) {
      double c = w[2 * x], rad = w[2 * x + 1];
      if (c - rad < b[0]) b[0] = c - rad;
      if (-(c + rad) < b[1]) b[1] = -(c + rad);
    }
  }
  ovl_free(&w);
  OVL_MPI(MPI_Allreduce(MPI_IN_PLACE, b, 2, MPI_DOUBLE, MPI_MIN, parent));
  *lo = b[0], *hi = -b[1];
  return OVL_OK;
}

ovl_err ovl_bsmat_matvec(ovl_bsmat A, const double *x, double *y) {
  OVL_TRY(ovl_check_handle(A, "ovl_bsmat_matvec", "A"));
  MPI_Comm parent = ovl_grid2d_parent(A->g);
  ovl_err rc = !x                 ? ovl_err_set(OVL_ERR_ARG, "ovl_bsmat_matvec: x is NULL")
               : !y               ? ovl_err_set(OVL_ERR_ARG, "ovl_bsmat_matvec: y is NULL")
               : A->n > INT32_MAX ? ovl_err_set(OVL_ERR_SIZE, "ovl_bsmat_matvec: n = %" PRId64, A->n)
                                  : OVL_OK;
  OVL_TRY(ovl_err_agree(parent, rc));
  for (int64_t i = 0; i < A->n; i++) y[i] = 0.0;
  const ovl_i_bsr *L = &A->loc;
  for (int64_t r = 0; r < A->nrows; r++) {
    int gi = A->rows[r], m = A->bs[gi];
    for (int64_t k = L->rowptr[r]; k < L->rowptr[r + 1]; k++) {
      int gj = L->colidx[k];
      cblas_dgemv(CblasColMajor, CblasNoTrans, m, A->bs[gj], 1.0, L->val + L->valoff[k], m, x + A->boff[gj], 1, 1.0,
                  y + A->boff[gi], 1);
    }
  }
  OVL_MPI(MPI_Allreduce(MPI_IN_PLACE, y, (int)A->n, MPI_DOUBLE, MPI_SUM, parent));
  return OVL_OK;
}

static ovl_err bsmat_mv(void *ctx, const double *x, double *y) { return ovl_bsmat_matvec((ovl_bsmat)ctx, x, y); }

ovl_err ovl_bsmat_bounds(ovl_bsmat A, double *lo, double *hi) {
  OVL_TRY(ovl_check_handle(A, "ovl_bsmat_bounds", "A"));
  OVL_TRY(ovl_check_ptr(lo, "ovl_bsmat_bounds", "lo"));
  OVL_TRY(ovl_check_ptr(hi, "ovl_bsmat_bounds", "hi"));
  OVL_TRY(ovl_bsmat_gershgorin(A, lo, hi));
  return ovl_lanczos_bounds(A->n, 40, 0, bsmat_mv, A, ovl_grid2d_parent(A->g), lo, hi);
}
