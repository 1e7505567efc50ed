/* Distributed dense matrices: life cycle, fill, scatter/gather, remapping
 * (redistribution and transposition), checks and small reductions. */
#include <cblas.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dmat/dmat_impl.h"

int64_t ovl_dmat_memory(int64_t m, int64_t n, int p, int q) {
  if (m < 0 || n < 0 || p < 1 || q < 1) return -1;
  double b = ceil((double)ovl_block_len(m, p, 0) * (double)ovl_block_len(n, q, 0) * 8.0 / 64.0) * 64.0;
  return b < 4611686018427387904.0 ? (int64_t)b : -1; /* 2^62 */
}

/* A's grid, sizes and this rank's block of the 2D block layout. */
static void dmat_layout(ovl_dmat A, ovl_grid2d g, int64_t m, int64_t n) {
  A->grid = g, A->m = m, A->n = n;
  if (ovl_grid2d_active(g)) {
    int p, q, i, j;
    ovl_grid2d_dims(g, &p, &q);
    ovl_grid2d_coords(g, &i, &j);
    ovl_dmat_block_of(A, p, q, i, j, &A->roff, &A->lm, &A->coff, &A->ln);
  }
  A->ld = A->lm > 0 ? A->lm : 1;
}

ovl_err ovl_dmat_create(ovl_grid2d g, int64_t m, int64_t n, ovl_dmat *out) {
  OVL_TRY(ovl_check_ptr(out, "ovl_dmat_create", "out"));
  *out = NULL;
  OVL_TRY(ovl_check_handle(g, "ovl_dmat_create", "the grid"));
  MPI_Comm parent = ovl_grid2d_parent(g);
  ovl_err rc = OVL_OK;
  ovl_dmat A = NULL;
  const int64_t key[] = {m, n};
  static const char *const names[] = {"the matrix's rows m", "the matrix's columns n"};
  if (m < 0 || n < 0) rc = ovl_err_set(OVL_ERR_ARG, "matrix sizes must be >= 0, got %" PRId64 " x %" PRId64, m, n);
  if (rc == OVL_OK) {
    A = calloc(1, sizeof *A);
    if (A == NULL) rc = ovl_err_set(OVL_ERR_NOMEM, "cannot allocate a matrix handle");
  }
  if (rc == OVL_OK) {
    dmat_layout(A, g, m, n);
    if (A->ln > 0 && (uint64_t)A->ld > (uint64_t)(INT64_MAX / 8) / (uint64_t)A->ln)
      rc = OVL_ERR_NOMEM; /* byte count overflows: reported below */
    else rc = ovl_calloc(sizeof(double) * (size_t)A->ld * (size_t)A->ln, &A->data);
    if (rc != OVL_OK) {
      rc = ovl_err_set(OVL_ERR_NOMEM,
                       "cannot allocate the %" PRId64 " x %" PRId64 " local block of a %" PRId64 " x %" PRId64
                       " matrix (%.1f MiB)",
                       A->lm, A->ln, m, n, 8.0 * (double)A->lm * (double)A->ln / 1048576.0);
    }
  }
  rc = ovl_err_agree_same(parent, rc, key, names, 2);
  if (rc != OVL_OK) {
    if (A) ovl_free(&A->data);
    free(A);
    return rc;
  }
  *out = A;
  return OVL_OK;
}

ovl_err ovl_dmat_wrap(ovl_grid2d g, int64_t m, int64_t n, double *data, ovl_dmat *out) {
  OVL_TRY(ovl_check_ptr(out, "ovl_dmat_wrap", "out"));
  *out = NULL;
  OVL_TRY(ovl_check_handle(g, "ovl_dmat_wrap", "the grid"));
  OVL_CHECK(m >= 0 && n >= 0, OVL_ERR_ARG, "matrix sizes must be >= 0, got %" PRId64 " x %" PRId64, m, n);
  ovl_dmat A = calloc(1, sizeof *A);
  OVL_CHECK(A != NULL, OVL_ERR_NOMEM, "cannot allocate a matrix handle");
  dmat_layout(A, g, m, n);
  A->data = data;
  A->borrowed = 1;
  if (A->lm > 0 && A->ln > 0 && data == NULL) {
    int64_t lm = A->lm, ln = A->ln;
    free(A);
    return ovl_err_set(OVL_ERR_ARG, "ovl_dmat_wrap: data is NULL for a %" PRId64 " x %" PRId64 " local block", lm, ln);
  }
  *out = A;
  return OVL_OK;
}

int64_t ovl_dmat_local_len(ovl_grid2d g, int64_t m, int64_t n) {
  if (g == NULL || m < 0 || n < 0 || !ovl_grid2d_active(g)) return 0;
  int p, q, i, j;
  ovl_grid2d_dims(g, &p, &q);
  ovl_grid2d_coords(g, &i, &j);
  int64_t lm = ovl_block_len(m, p, i), ln = ovl_block_len(n, q, j);
  int64_t len = 0;
  return ovl_mul_i64(lm > 0 ? lm : 1, ln, &len) ? len : INT64_MAX; /* a count no buffer holds */
}

ovl_err ovl_dmat_destroy(ovl_dmat *Ap) {
  if (Ap == NULL || *Ap == NULL) return OVL_OK;
  if (!(*Ap)->borrowed) ovl_free(&(*Ap)->data);
  free(*Ap);
  *Ap = NULL;
  return OVL_OK;
}

/* The accessors answer NULL or -1 for a NULL handle (dist.h). */
ovl_grid2d ovl_dmat_grid(ovl_dmat A) { return A ? A->grid : NULL; }
int64_t ovl_dmat_rows(ovl_dmat A) { return A ? A->m : -1; }
int64_t ovl_dmat_cols(ovl_dmat A) { return A ? A->n : -1; }
double *ovl_dmat_data(ovl_dmat A) { return A ? A->data : NULL; }
int64_t ovl_dmat_local_rows(ovl_dmat A) { return A ? A->lm : -1; }
int64_t ovl_dmat_local_cols(ovl_dmat A) { return A ? A->ln : -1; }
int64_t ovl_dmat_ld(ovl_dmat A) { return A ? A->ld : -1; }
int64_t ovl_dmat_row_off(ovl_dmat A) { return A ? A->roff : -1; }
int64_t ovl_dmat_col_off(ovl_dmat A) { return A ? A->coff : -1; }

/* ---- fill ---------------------------------------------------------------- */

static uint64_t mix64(uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

double ovl_fill_value(uint64_t seed, int64_t i, int64_t j) {
  uint64_t h = mix64(mix64(mix64(seed) ^ (uint64_t)i) ^ ((uint64_t)j * 0x632be59bd9b4e019ULL));
  return (double)(h >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}

ovl_err ovl_dmat_fill(ovl_dmat A, ovl_fill_kind kind, uint64_t seed) {
  OVL_TRY(ovl_check_handle(A, "ovl_dmat_fill", "A"));
  if ((unsigned)kind > (unsigned)OVL_FILL_IDENTITY) return ovl_err_set(OVL_ERR_ARG, "unknown fill kind %d", (int)kind);
  for (int64_t c = 0; c < A->ln; c++) {
    double *col = A->data + c * A->ld;
    int64_t gj = A->coff + c;
    for (int64_t r = 0; r < A->lm; r++) {
      int64_t gi = A->roff + r;
      switch (kind) {
      case OVL_FILL_ZERO: col[r] = 0.0; break;
      case OVL_FILL_RANDOM: col[r] = ovl_fill_value(seed, gi, gj); break;
      case OVL_FILL_SYMMETRIC: col[r] = gi <= gj ? ovl_fill_value(seed, gi, gj) : ovl_fill_value(seed, gj, gi); break;
      case OVL_FILL_IDENTITY: col[r] = gi == gj ? 1.0 : 0.0; break;
      default: return ovl_err_set(OVL_ERR_ARG, "unknown fill kind %d", (int)kind);
      }
    }
  }
  return OVL_OK;
}

ovl_err ovl_dmat_copy(ovl_dmat dst, ovl_dmat src) {
  OVL_TRY(ovl_check_handle(dst, "ovl_dmat_copy", "dst"));
  OVL_TRY(ovl_check_handle(src, "ovl_dmat_copy", "src"));
  OVL_CHECK(dst->m == src->m && dst->n == src->n && dst->grid == src->grid, OVL_ERR_SIZE,
            "copy needs matrices of the same size on the same grid");
  for (int64_t c = 0; c < src->ln; c++)
    memcpy(dst->data + c * dst->ld, src->data + c * src->ld, sizeof(double) * (size_t)src->lm);
  return OVL_OK;
}

/* ---- scatter / gather ------------------------------------------------------ */

/* Copy an lm x ln block between a column-major array (ld a) and another. */
static void copy_block(double *dst, int64_t ldd, const double *src, int64_t lds, int64_t lm, int64_t ln) {
  if (lm <= 0 || ln <= 0) return; /* an empty block may have no storage at all */
  for (int64_t c = 0; c < ln; c++) memcpy(dst + c * ldd, src + c * lds, sizeof(double) * (size_t)lm);
}

static ovl_err scatter_gather(ovl_dmat A, double *global, int gather) {
  MPI_Comm parent = ovl_grid2d_parent(A->grid);
  int rank = 0, p, q;
  OVL_MPI(MPI_Comm_rank(parent, &rank));
  ovl_grid2d_dims(A->grid, &p, &q);
  double *buf = NULL;
  ovl_err rc = OVL_OK;
  int64_t maxblk = ovl_block_len(A->m, p, 0) * ovl_block_len(A->n, q, 0);
  if (maxblk > INT32_MAX)
    rc = ovl_err_set(OVL_ERR_SIZE, "a local block of %" PRId64 " entries is too large for one message", maxblk);
  if (rc == OVL_OK && rank == 0) {
    if (global == NULL && A->m * A->n > 0) rc = ovl_err_set(OVL_ERR_ARG, "the global array on rank 0 is NULL");
    else rc = ovl_malloc(sizeof(double) * (size_t)maxblk, &buf);
  }
  rc = ovl_err_agree(parent, rc);
  if (rc != OVL_OK) {
    ovl_free(&buf);
    return rc;
  }
  const int tag = 7301;
  if (rank == 0) {
    for (int r = 0; r < p * q; r++) {
      int64_t ro, lm, co, ln;
      ovl_dmat_block_of(A, p, q, r / q, r % q, &ro, &lm, &co, &ln);
      double *g0 = global + ro + co * A->m;
      if (r == 0) {
        if (gather) copy_block(g0, A->m, A->data, A->ld, lm, ln);
        else copy_block(A->data, A->ld, g0, A->m, lm, ln);
        continue;
      }
      if (lm * ln == 0) continue;
      if (gather) {
        OVL_MPI(MPI_Recv(buf, (int)(lm * ln), MPI_DOUBLE, r, tag, parent, MPI_STATUS_IGNORE));
        copy_block(g0, A->m, buf, lm, lm, ln);
      } else {
        copy_block(buf, lm, g0, A->m, lm, ln);
        OVL_MPI(MPI_Send(buf, (int)(lm * ln), MPI_DOUBLE, r, tag, parent));
      }
    }
  } else if (ovl_grid2d_active(A->grid) && A->lm * A->ln > 0) {
    /* the local block is contiguous because ld == lm when lm > 0 */
    if (gather) OVL_MPI(MPI_Send(A->data, (int)(A->lm * A->ln), MPI_DOUBLE, 0, tag, parent));
    else OVL_MPI(MPI_Recv(A->data, (int)(A->lm * A->ln), MPI_DOUBLE, 0, tag, parent, MPI_STATUS_IGNORE));
  }
  ovl_free(&buf);
  return OVL_OK;
}

ovl_err ovl_dmat_scatter(ovl_dmat A, const double *global) {
  OVL_TRY(ovl_check_handle(A, "ovl_dmat_scatter", "A"));
  return scatter_gather(A, (double *)global, 0);
}
ovl_err ovl_dmat_gather(ovl_dmat A, double *global) {
  OVL_TRY(ovl_check_handle(A, "ovl_dmat_gather", "A"));
  return scatter_gather(A, global, 1);
}

/* ---- remap: redistribution and transposition ------------------------------- */

static void isect(int64_t a0, int64_t a1, int64_t b0, int64_t b1, int64_t *lo, int64_t *len) {
  int64_t l = a0 > b0 ? a0 : b0, h = a1 < b1 ? a1 : b1;
  *lo = l;
  *len = h > l ? h - l : 0;
}

/* Region of src (global rows/cols) that maps into dst block (dro, dlm, dco,
 * dln): the block itself, or its transpose. */
static void needed_region(int transpose, int64_t dro, int64_t dlm, int64_t dco, int64_t dln, int64_t *sro, int64_t *slm,
                          int64_t *sco, int64_t *sln) {
  if (transpose) {
    *sro = dco, *slm = dln, *sco = dro, *sln = dlm;
  } else {
    *sro = dro, *slm = dlm, *sco = dco, *sln = dln;
  }
}

/* dst := src (transpose = 0) or dst := src^T (transpose = 1). */
static ovl_err remap(ovl_dmat src, ovl_dmat dst, int transpose) {
  MPI_Comm parent = ovl_grid2d_parent(src->grid);
  int P = 0, cmp = MPI_UNEQUAL;
  ovl_err rc = OVL_OK;
  OVL_MPI(MPI_Comm_size(parent, &P));
  OVL_MPI(MPI_Comm_compare(parent, ovl_grid2d_parent(dst->grid), &cmp));
  int64_t em = transpose ? src->n : src->m, en = transpose ? src->m : src->n;
  if (cmp != MPI_IDENT && cmp != MPI_CONGRUENT)
    rc = ovl_err_set(OVL_ERR_ARG, "source and destination grids are not over the same ranks");
  else if (dst->m != em || dst->n != en)
    rc = ovl_err_set(OVL_ERR_SIZE, "destination is %" PRId64 " x %" PRId64 ", expected %" PRId64 " x %" PRId64, dst->m,
                     dst->n, em, en);
  int ps, qs, pd, qd;
  ovl_grid2d_dims(src->grid, &ps, &qs);
  ovl_grid2d_dims(dst->grid, &pd, &qd);
  int *cnt = NULL;
  double *sbuf = NULL, *rbuf = NULL;
  int64_t stot = 0, rtot = 0;
  if (rc == OVL_OK) rc = ovl_calloc(sizeof(int) * 4 * (size_t)P, &cnt);
  int *scnt = cnt, *sdsp = cnt + P, *rcnt = cnt + 2 * P, *rdsp = cnt + 3 * P;
  if (rc == OVL_OK) {
    /* what I send: my src block intersected with each dst block's need */
    for (int r = 0; r < P && ovl_grid2d_active(src->grid); r++) {
      if (r >= pd * qd) break;
      int64_t dro, dlm, dco, dln, sro, slm, sco, sln, a, la, b, lb;
      ovl_dmat_block_of(dst, pd, qd, r / qd, r % qd, &dro, &dlm, &dco, &dln);
      needed_region(transpose, dro, dlm, dco, dln, &sro, &slm, &sco, &sln);
      isect(src->roff, src->roff + src->lm, sro, sro + slm, &a, &la);
      isect(src->coff, src->coff + src->ln, sco, sco + sln, &b, &lb);
      (void)a, (void)b;
      if (la * lb > INT32_MAX - stot) rc = ovl_err_set(OVL_ERR_SIZE, "redistribution message too large");
      scnt[r] = (int)(la * lb);
      sdsp[r] = (int)stot;
      stot += la * lb;
    }
    for (int r = 0; r < P && ovl_grid2d_active(dst->grid); r++) {
      if (r >= ps * qs) break;
      int64_t sro, slm, sco, sln, nro, nlm, nco, nln, la, lb, a, b;
      ovl_dmat_block_of(src, ps, qs, r / qs, r % qs, &sro, &slm, &sco, &sln);
      needed_region(transpose, dst->roff, dst->lm, dst->coff, dst->ln, &nro, &nlm, &nco, &nln);
      isect(sro, sro + slm, nro, nro + nlm, &a, &la);
      isect(sco, sco + sln, nco, nco + nln, &b, &lb);
      if (la * lb > INT32_MAX - rtot) rc = ovl_err_set(OVL_ERR_SIZE, "redistribution message too large");
      rcnt[r] = (int)(la * lb);
      rdsp[r] = (int)rtot;
      rtot += la * lb;
    }
  }
  if (rc == OVL_OK) rc = ovl_malloc(sizeof(double) * (size_t)stot, &sbuf);
  if (rc == OVL_OK) rc = ovl_malloc(sizeof(double) * (size_t)rtot, &rbuf);
  rc = ovl_err_agree(parent, rc);
  if (rc != OVL_OK) goto done;
  /* pack: column-major over the src intersection */
  for (int r = 0; r < P && r < pd * qd && ovl_grid2d_active(src->grid); r++) {
    if (scnt[r] == 0) continue;
    int64_t dro, dlm, dco, dln, sro, slm, sco, sln, a, la, b, lb;
    ovl_dmat_block_of(dst, pd, qd, r / qd, r % qd, &dro, &dlm, &dco, &dln);
    needed_region(transpose, dro, dlm, dco, dln, &sro, &slm, &sco, &sln);
    isect(src->roff, src->roff + src->lm, sro, sro + slm, &a, &la);
    isect(src->coff, src->coff + src->ln, sco, sco + sln, &b, &lb);
    copy_block(sbuf + sdsp[r], la, src->data + (a - src->roff) + (b - src->coff) * src->ld, src->ld, la, lb);
  }
  rc = MPI_Alltoallv(sbuf, scnt, sdsp, MPI_DOUBLE, rbuf, rcnt, rdsp, MPI_DOUBLE, parent) == MPI_SUCCESS ? OVL_OK
                                                                                                        : OVL_ERR_MPI;
  if (rc != OVL_OK) ovl_fatal(parent, rc, "MPI_Alltoallv failed during redistribution");
  for (int r = 0; r < P && r < ps * qs && ovl_grid2d_active(dst->grid); r++) {
    if (rcnt[r] == 0) continue;
    int64_t sro, slm, sco, sln, nro, nlm, nco, nln, la, lb, a, b;
    ovl_dmat_block_of(src, ps, qs, r / qs, r % qs, &sro, &slm, &sco, &sln);
    needed_region(transpose, dst->roff, dst->lm, dst->coff, dst->ln, &nro, &nlm, &nco, &nln);
    isect(sro, sro + slm, nro, nro + nlm, &a, &la);
    isect(sco, sco + sln, nco, nco + nln, &b, &lb);
    const double *in = rbuf + rdsp[r];
    if (!transpose) {
      copy_block(dst->data + (a - dst->roff) + (b - dst->coff) * dst->ld, dst->ld, in, la, la, lb);
    } else {
      /* src element (a+x, b+y) lands at dst (b+y, a+x) */
      for (int64_t y = 0; y < lb; y++)
        for (int64_t x = 0; x < la; x++)
          dst->data[(b + y - dst->roff) + (a + x - dst->coff) * dst->ld] = in[x + y * la];
    }
  }
done:
  ovl_free(&sbuf);
  ovl_free(&rbuf);
  ovl_free(&cnt);
  return rc;
}

ovl_err ovl_dmat_redistribute(ovl_dmat src, ovl_dmat dst) {
  OVL_TRY(ovl_check_handle(src, "ovl_dmat_redistribute", "src"));
  OVL_TRY(ovl_check_handle(dst, "ovl_dmat_redistribute", "dst"));
  return remap(src, dst, 0);
}
ovl_err ovl_dmat_transpose(ovl_dmat src, ovl_dmat dst) {
  OVL_TRY(ovl_check_handle(src, "ovl_dmat_transpose", "src"));
  OVL_TRY(ovl_check_handle(dst, "ovl_dmat_transpose", "dst"));
  return remap(src, dst, 1);
}

/* ---- checks and reductions -------------------------------------------------- */

ovl_err ovl_dmat_check_finite(ovl_dmat A) {
  OVL_TRY(ovl_check_handle(A, "ovl_dmat_check_finite", "A"));
  ovl_err rc = OVL_OK;
  for (int64_t c = 0; c < A->ln && rc == OVL_OK; c++)
    for (int64_t r = 0; r < A->lm; r++) {
      double v = A->data[r + c * A->ld];
      if (!isfinite(v)) {
        rc = ovl_err_set(OVL_ERR_NUMERIC, "matrix has a non-finite value (%s) at row %" PRId64 ", column %" PRId64,
                         isnan(v) ? "NaN" : "Inf", A->roff + r, A->coff + c);
        break;
      }
    }
  return ovl_err_agree(ovl_grid2d_parent(A->grid), rc);
}

ovl_err ovl_dmat_check_symmetric(ovl_dmat A, double tol) {
  OVL_TRY(ovl_check_handle(A, "ovl_dmat_check_symmetric", "A"));
  MPI_Comm parent = ovl_grid2d_parent(A->grid);
  OVL_TRY(ovl_err_agree(
      parent, A->m == A->n ? OVL_OK
                           : ovl_err_set(OVL_ERR_SIZE, "a symmetric matrix must be square, got %" PRId64 " x %" PRId64,
                                         A->m, A->n)));
  ovl_dmat T = NULL;
  OVL_TRY(ovl_dmat_create(A->grid, A->n, A->m, &T));
  ovl_err rc = ovl_dmat_transpose(A, T);
  double loc[2] = {0, 0}, glob[2] = {0, 0}; /* max |A - A^T|, max |A| */
  int64_t wr = -1, wc = -1;
  for (int64_t c = 0; rc == OVL_OK && c < A->ln; c++)
    for (int64_t r = 0; r < A->lm; r++) {
      double a = A->data[r + c * A->ld], d = fabs(a - T->data[r + c * T->ld]);
      if (d > loc[0]) loc[0] = d, wr = A->roff + r, wc = A->coff + c;
      if (fabs(a) > loc[1]) loc[1] = fabs(a);
    }
  ovl_dmat_destroy(&T);
  OVL_TRY(ovl_err_agree(parent, rc));
  OVL_MPI(MPI_Allreduce(loc, glob, 2, MPI_DOUBLE, MPI_MAX, parent));
  double lim = tol * (glob[1] > 1.0 ? glob[1] : 1.0);
  rc = OVL_OK;
  if (loc[0] > lim && loc[0] == glob[0])
    rc = ovl_err_set(OVL_ERR_NUMERIC,
                     "matrix is not symmetric: |A(%" PRId64 ",%" PRId64 ") - A(%" PRId64 ",%" PRId64 ")| = %.3g > %.3g",
                     wr, wc, wc, wr, loc[0], lim);
  return ovl_err_agree(parent, rc);
}

ovl_err ovl_dmat_norm_fro(ovl_dmat A, double *out) {
  OVL_TRY(ovl_check_handle(A, "ovl_dmat_norm_fro", "A"));
  OVL_TRY(ovl_check_ptr(out, "ovl_dmat_norm_fro", "out"));
  double s = 0.0;
  for (int64_t c = 0; c < A->ln; c++)
    for (int64_t r = 0; r < A->lm; r++) s += A->data[r + c * A->ld] * A->data[r + c * A->ld];
  OVL_MPI(MPI_Allreduce(MPI_IN_PLACE, &s, 1, MPI_DOUBLE, MPI_SUM, ovl_grid2d_parent(A->grid)));
  *out = sqrt(s);
  return OVL_OK;
}

ovl_err ovl_dmat_trace(ovl_dmat A, double *out) {
  OVL_TRY(ovl_check_handle(A, "ovl_dmat_trace", "A"));
  OVL_TRY(ovl_check_ptr(out, "ovl_dmat_trace", "out"));
  double s = 0.0;
  for (int64_t c = 0; c < A->ln; c++) {
    int64_t r = A->coff + c - A->roff;
    if (r >= 0 && r < A->lm) s += A->data[r + c * A->ld];
  }
  OVL_MPI(MPI_Allreduce(MPI_IN_PLACE, &s, 1, MPI_DOUBLE, MPI_SUM, ovl_grid2d_parent(A->grid)));
  *out = s;
  return OVL_OK;
}

ovl_err ovl_dmat_matvec(ovl_dmat A, const double *x, double *y) {
  OVL_TRY(ovl_check_handle(A, "ovl_dmat_matvec", "A"));
  MPI_Comm parent = ovl_grid2d_parent(A->grid);
  double *part = NULL;
  ovl_err rc = A->m > 0 && A->n > 0 ? ovl_check_ptr(x, "ovl_dmat_matvec", "x") : OVL_OK;
  if (rc == OVL_OK && A->m > 0) rc = ovl_check_ptr(y, "ovl_dmat_matvec", "y");
  if (rc == OVL_OK) rc = ovl_calloc(sizeof(double) * (size_t)(A->m > 0 ? A->m : 1), &part);
  rc = ovl_err_agree(parent, rc);
  if (rc != OVL_OK) {
    ovl_free(&part); /* another rank's argument was refused */
    return rc;
  }
  if (A->lm > 0 && A->ln > 0)
    cblas_dgemv(CblasColMajor, CblasNoTrans, (int)A->lm, (int)A->ln, 1.0, A->data, (int)A->ld, x + A->coff, 1, 0.0,
                part + A->roff, 1);
  int mrc = A->m > 0 ? MPI_Allreduce(part, y, (int)A->m, MPI_DOUBLE, MPI_SUM, parent) : MPI_SUCCESS;
  ovl_free(&part);
  if (mrc != MPI_SUCCESS) return ovl_err_mpi(mrc, "MPI_Allreduce (matvec)");
  return OVL_OK;
}

/* ---- symmetrization ------------------------------------------------------------ */

/* dst(r, c) := (dst(r, c) + t(c, r)) / 2 for the lm x ln block dst (leading
 * dimension ld) and the ln x lm column-major block t (leading dimension lt),
 * in tiles so that the transposed reads stay in cache. */
static void average_transposed(double *dst, int64_t ld, const double *t, int64_t lt, int64_t lm, int64_t ln) {
  enum { TILE = 64 };
  for (int64_t c0 = 0; c0 < ln; c0 += TILE)
    for (int64_t r0 = 0; r0 < lm; r0 += TILE) {
      int64_t c1 = c0 + TILE < ln ? c0 + TILE : ln, r1 = r0 + TILE < lm ? r0 + TILE : lm;
      for (int64_t c = c0; c < c1; c++)
        for (int64_t r = r0; r < r1; r++) dst[r + c * ld] = 0.5 * (dst[r + c * ld] + t[c + r * lt]);
    }
}

ovl_err ovl_dmat_symmetrize(ovl_dmat A, ovl_dmat W) {
  OVL_CHECK(A != NULL, OVL_ERR_ARG, "ovl_dmat_symmetrize: no matrix given");
  MPI_Comm parent = ovl_grid2d_parent(A->grid);
  int p = 0, q = 0, i = -1, j = -1;
  ovl_grid2d_dims(A->grid, &p, &q);
  ovl_grid2d_coords(A->grid, &i, &j);
  ovl_err rc = OVL_OK;
  if (A->m != A->n)
    rc = ovl_err_set(OVL_ERR_SIZE, "only a square matrix can be symmetrized, got %" PRId64 " x %" PRId64, A->m, A->n);
  else if (W && (W == A || W->grid != A->grid || W->m != A->m || W->n != A->n))
    rc = ovl_err_set(OVL_ERR_ARG,
                     "ovl_dmat_symmetrize: the workspace must be another %" PRId64 " x %" PRId64
                     " matrix on the grid of A",
                     A->m, A->n);
  if (p != q) { /* any grid: through the general transpose */
    ovl_dmat T = W;
    OVL_TRY(ovl_err_agree(parent, rc));
    if (!T) OVL_TRY(ovl_dmat_create(A->grid, A->n, A->m, &T));
    rc = ovl_dmat_transpose(A, T);
    for (int64_t c = 0; rc == OVL_OK && c < A->ln; c++) /* T has A's layout: T(r, c) = A(c, r) */
      for (int64_t r = 0; r < A->lm; r++)
        A->data[r + c * A->ld] = 0.5 * (A->data[r + c * A->ld] + T->data[r + c * T->ld]);
    if (T != W) ovl_dmat_destroy(&T);
    return rc;
  }
  /* a p x p grid: the blocks (i, j) and (j, i) are each other's transpose in
   * shape; the pair swaps them and both average, the same sums in both */
  int64_t cnt = A->lm * A->ln;
  double *buf = NULL;
  if (rc == OVL_OK && i != j && cnt > 0)
    rc = W ? (buf = W->data, OVL_OK) : ovl_malloc(sizeof(double) * (size_t)cnt, &buf);
  rc = ovl_err_agree(parent, rc);
  if (rc != OVL_OK) {
    if (!W) ovl_free(&buf);
    return rc;
  }
  if (i == j) { /* a diagonal block: both halves here, in tiles of the lower triangle */
    enum { TILE = 64 };
    double *a = A->data;
    int64_t ld = A->ld, nb = A->lm;
    for (int64_t c0 = 0; c0 < nb; c0 += TILE)
      for (int64_t r0 = c0; r0 < nb; r0 += TILE) {
        int64_t c1 = c0 + TILE < nb ? c0 + TILE : nb, r1 = r0 + TILE < nb ? r0 + TILE : nb;
        for (int64_t c = c0; c < c1; c++)
          for (int64_t r = r0 > c + 1 ? r0 : c + 1; r < r1; r++) {
            double v = 0.5 * (a[r + c * ld] + a[c + r * ld]);
            a[r + c * ld] = a[c + r * ld] = v;
          }
      }
  } else if (cnt > 0) {
    MPI_Comm comm = ovl_grid2d_comm(A->grid);
    const int64_t chunk = (int64_t)1 << 30;
    for (int64_t off = 0; off < cnt; off += chunk) { /* the block is contiguous: ld == lm */
      int len = (int)(cnt - off < chunk ? cnt - off : chunk);
      int mrc = MPI_Sendrecv(A->data + off, len, MPI_DOUBLE, j * q + i, 7302, buf + off, len, MPI_DOUBLE, j * q + i,
                             7302, comm, MPI_STATUS_IGNORE);
      if (mrc != MPI_SUCCESS) ovl_fatal(parent, OVL_ERR_MPI, "ovl_dmat_symmetrize: MPI_Sendrecv failed");
    }
    average_transposed(A->data, A->ld, buf, A->ln, A->lm, A->ln);
  }
  if (!W) ovl_free(&buf);
  return OVL_OK;
}
