/* ovl_pdgemm against ScaLAPACK's own pdgemm_ on the same random block-cyclic
 * operands, and the block-cyclic <-> ovl_dmat exchanges underneath it.
 *
 * Part 1 (exchanges, no BLACS): every grid p x q with p*q in {P, P - 1},
 * and 1 x 1 (idle ranks included), random layouts (MB != NB, RSRC/CSRC != 0, LLD > local rows,
 * submatrix offsets), both directions, with and without transposition; the
 * values are checked by global index, and entries outside the submatrix and
 * the LLD padding must be untouched.
 * Part 2 (ovl_pdgemm vs pdgemm_): BLACS grids 1x1, 1x2, 2x1, 2x2, 2x3, 3x2
 * (as the rank count allows; row- and column-major BLACS orders), processes
 * outside the grid, MB/NB in {1, 3, 8, 64} chosen per matrix, sizes in
 * {1, 7, 33, 100}, all four trans combinations, IA/JA offsets, alpha/beta
 * values (beta == 0 with NaNs in C), quick returns, a non-default config,
 * and bad input (same code and message on every process of the grid).
 * test_pdgemm layout | convert: part 2 alone with OVL_OPTIONS="--dropin-route
 * ROUTE", every product by that route (SUMMA on ScaLAPACK's layout, or the
 * conversion to ovl's layout and back). */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dmat/bcyclic.h"
#include "ovl/ovl.h"
#include "ovl/pdgemm.h"
#include "ovltest.h"

#ifdef OVL_TEST_HAVE_SCALAPACK
#include "scalapack.h"
#endif

/* Same sequence on every rank, so every rank picks the same cases. */
static uint64_t g_rng = 0x9e3779b97f4a7c15ULL;
static int rnd(int n) {
  g_rng = g_rng * 6364136223846793005ULL + 1442695040888963407ULL;
  return (int)((g_rng >> 33) % (uint64_t)n);
}
static int pick(const int *v, int n) { return v[rnd(n)]; }
/* 0: ovl_pdgemm's own route; 2 layout, 3 convert: forced by OVL_OPTIONS (argument "layout" or "convert") */
static int g_route;

/* The test's own block-cyclic arithmetic (ScaLAPACK's NUMROC and INDXL2G),
 * independent of src/dmat/bcyclic.c. */
static int64_t t_numroc(int64_t n, int64_t nb, int ip, int isrc, int np) {
  int64_t mydist = (np + ip - isrc) % np, nblocks = n / nb, num = nblocks / np * nb, extra = nblocks % np;
  if (mydist < extra) num += nb;
  else if (mydist == extra) num += n % nb;
  return num;
}
static int64_t t_l2g(int64_t l, int64_t nb, int ip, int isrc, int np) {
  return (l / nb * np + (np + ip - isrc) % np) * nb + l % nb;
}

#define SENTINEL 7777.0

/* A block-cyclic matrix held by this process (data NULL outside the grid). */
typedef struct tmat {
  int desc[9];
  int64_t mp, nq, lld, len;
  double *data, *init; /* contents, and a copy of the initial contents */
  int nprow, npcol, myrow, mycol;
} tmat;

static void tmat_make(tmat *X, int ctxt, int M, int N, int mb, int nb, int rsrc, int csrc, int pad, int nprow,
                      int npcol, int myrow, int mycol, uint64_t seed) {
  memset(X, 0, sizeof *X);
  X->nprow = nprow, X->npcol = npcol, X->myrow = myrow, X->mycol = mycol;
  int in = myrow >= 0;
  X->mp = in ? t_numroc(M, mb, myrow, rsrc, nprow) : 0;
  X->nq = in ? t_numroc(N, nb, mycol, csrc, npcol) : 0;
  X->lld = (X->mp > 1 ? X->mp : 1) + pad;
  int desc[9] = {1, ctxt, M, N, mb, nb, rsrc, csrc, (int)X->lld};
  memcpy(X->desc, desc, sizeof desc);
  if (!in) return;
  X->len = X->lld * (X->nq > 0 ? X->nq : 1);
  X->data = malloc(sizeof(double) * (size_t)X->len);
  X->init = malloc(sizeof(double) * (size_t)X->len);
  for (int64_t i = 0; i < X->len; i++) X->data[i] = SENTINEL;
  for (int64_t c = 0; c < X->nq; c++)
    for (int64_t r = 0; r < X->mp; r++)
      X->data[r + c * X->lld] =
          ovl_fill_value(seed, t_l2g(r, mb, myrow, rsrc, nprow), t_l2g(c, nb, mycol, csrc, npcol));
  memcpy(X->init, X->data, sizeof(double) * (size_t)X->len);
}

static void tmat_free(tmat *X) {
  free(X->data);
  free(X->init);
  X->data = X->init = NULL;
}

/* Global (row, col) of local entry (r, c); returns 0 for LLD padding. */
static int tmat_global(const tmat *X, int64_t r, int64_t c, int64_t *gi, int64_t *gj) {
  if (r >= X->mp || c >= X->nq) return 0;
  *gi = t_l2g(r, X->desc[4], X->myrow, X->desc[6], X->nprow);
  *gj = t_l2g(c, X->desc[5], X->mycol, X->desc[7], X->npcol);
  return 1;
}

static int same_bits(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }

/* ---- part 1: the exchanges ----------------------------------------------------- */

static void exchange_case(ovl_grid2d g, ovl_bcyclic_ws *ws) {
  static const int sizes[] = {0, 1, 2, 5, 7, 13, 33}, blocks[] = {1, 2, 3, 8, 64};
  int p, q, gi = -1, gj = -1;
  ovl_grid2d_dims(g, &p, &q);
  ovl_grid2d_coords(g, &gi, &gj);
  int sm = pick(sizes, 7), sn = pick(sizes, 7), i0 = rnd(4), j0 = rnd(4), trans = rnd(2);
  int M = i0 + sm + rnd(3), N = j0 + sn + rnd(3), mb = pick(blocks, 5), nb = pick(blocks, 5);
  int rsrc = rnd(p), csrc = rnd(q), pad = rnd(2) * 3;
  uint64_t s1 = 11 + (uint64_t)rnd(1000), s2 = 5000 + (uint64_t)rnd(1000);
  tmat X;
  tmat_make(&X, 0, M, N, mb, nb, rsrc, csrc, pad, p, q, gi, gj, s1);
  ovl_bcview v = ovl_bcyclic_view(X.desc, i0 + 1, j0 + 1, sm, sn, X.data);
  ovl_dmat D = NULL;
  T_OK(ovl_dmat_create(g, trans ? sn : sm, trans ? sm : sn, &D));
  T_OK(ovl_bcyclic_to_dmat(&v, trans, D, ws));
  int bad = 0;
  double *d = ovl_dmat_data(D);
  int64_t ld = ovl_dmat_ld(D), ro = ovl_dmat_row_off(D), co = ovl_dmat_col_off(D);
  for (int64_t c = 0; c < ovl_dmat_local_cols(D); c++)
    for (int64_t r = 0; r < ovl_dmat_local_rows(D); r++) {
      int64_t si = trans ? co + c : ro + r, sj = trans ? ro + r : co + c; /* submatrix index */
      if (d[r + c * ld] != ovl_fill_value(s1, i0 + si, j0 + sj)) bad++;
    }
  T_CHECK(bad == 0, "to_dmat grid %dx%d %dx%d mb=%d nb=%d src=(%d,%d) sub %dx%d at (%d,%d) trans %d: %d wrong", p, q, M,
          N, mb, nb, rsrc, csrc, sm, sn, i0, j0, trans, bad);
  ovl_dmat_fill(D, OVL_FILL_RANDOM, s2);
  T_OK(ovl_bcyclic_from_dmat(D, trans, &v, ws));
  bad = 0;
  for (int64_t c = 0; c < (X.data ? X.nq : 0); c++)
    for (int64_t r = 0; r < X.lld; r++) {
      int64_t a, b;
      double got = X.data[r + c * X.lld], want = X.init[r + c * X.lld];
      if (tmat_global(&X, r, c, &a, &b) && a >= i0 && a < i0 + sm && b >= j0 && b < j0 + sn)
        want = trans ? ovl_fill_value(s2, b - j0, a - i0) : ovl_fill_value(s2, a - i0, b - j0);
      if (!same_bits(got, want)) bad++;
    }
  T_CHECK(bad == 0, "from_dmat grid %dx%d %dx%d mb=%d nb=%d src=(%d,%d) sub %dx%d at (%d,%d) trans %d: %d wrong", p, q,
          M, N, mb, nb, rsrc, csrc, sm, sn, i0, j0, trans, bad);
  /* wrong shape: the same error everywhere */
  ovl_dmat W = NULL;
  T_OK(ovl_dmat_create(g, (trans ? sn : sm) + 1, trans ? sm : sn, &W));
  T_ERR(ovl_bcyclic_to_dmat(&v, trans, W, ws), OVL_ERR_SIZE);
  ovl_dmat_destroy(&W);
  ovl_dmat_destroy(&D);
  tmat_free(&X);
}

static void part1(int P) {
  ovl_bcyclic_ws ws = {NULL, 0};
  /* every shape with P or P - 1 processes (one idle), and 1 x 1 (P - 1 idle) */
  for (int p = 1; p <= P; p++)
    for (int q = 1; p * q <= P; q++) {
      if (p * q < P - 1 && p * q > 1) continue;
      ovl_grid2d g = NULL;
      T_OK(ovl_grid2d_create(MPI_COMM_WORLD, p, q, OVL_GRID_ALLOW_IDLE, &g));
      for (int t = 0; t < 24; t++) exchange_case(g, t % 3 ? &ws : NULL);
      ovl_grid2d_destroy(&g);
    }
  ovl_bcyclic_ws_free(&ws);
  /* numroc against the test's own */
  int bad = 0;
  for (int n = 0; n < 40; n++)
    for (int nb = 1; nb < 6; nb++)
      for (int np = 1; np < 5; np++)
        for (int src = 0; src < np; src++)
          for (int ip = 0; ip < np; ip++)
            if (ovl_bcyclic_numroc(n, nb, ip, src, np) != t_numroc(n, nb, ip, src, np)) bad++;
  T_CHECK(bad == 0, "ovl_bcyclic_numroc disagrees with NUMROC %d times", bad);
}

#ifdef OVL_TEST_HAVE_SCALAPACK

/* ---- part 2: ovl_pdgemm vs pdgemm_ ----------------------------------------------- */

typedef struct grid_ctx {
  int ctxt, nprow, npcol, myrow, mycol, in;
  MPI_Comm comm; /* the grid's processes (for comparing messages) */
} grid_ctx;

typedef struct layout {
  int mb, nb, rsrc, csrc, pad, off_i, off_j, extra_i, extra_j;
} layout;

static layout random_layout(const grid_ctx *G) {
  static const int blocks[] = {1, 3, 8, 64};
  layout L = {pick(blocks, 4), pick(blocks, 4), rnd(G->nprow), rnd(G->npcol), rnd(2) * 3,
              rnd(3) * 2,      rnd(3) * 3,      rnd(2) * 2,    rnd(2)};
  return L;
}

/* The operand X holding an r x c submatrix with layout L. */
static void make_operand(tmat *X, const grid_ctx *G, const layout *L, int r, int c, uint64_t seed) {
  tmat_make(X, G->ctxt, L->off_i + r + L->extra_i, L->off_j + c + L->extra_j, L->mb, L->nb, L->rsrc, L->csrc, L->pad,
            G->nprow, G->npcol, G->myrow, G->mycol, seed);
}

static int g_cases = 0;

static void gemm_case(const grid_ctx *G, const char *ta, const char *tb, int m, int n, int k, double alpha, double beta,
                      const layout *La, const layout *Lb, const layout *Lc) {
  int at = ta[0] != 'N' && ta[0] != 'n', bt = tb[0] != 'N' && tb[0] != 'n';
  tmat A, B, C, R;
  make_operand(&A, G, La, at ? k : m, at ? m : k, 101);
  make_operand(&B, G, Lb, bt ? n : k, bt ? k : n, 202);
  make_operand(&C, G, Lc, m, n, 303);
  make_operand(&R, G, Lc, m, n, 303);
  int ia = La->off_i + 1, ja = La->off_j + 1, ib = Lb->off_i + 1, jb = Lb->off_j + 1, ic = Lc->off_i + 1,
      jc = Lc->off_j + 1;
  int bad = 0;
  double maxdiff = 0.0;
  if (G->in) {
    /* beta == 0: C must not be read, so fill ovl's sub(C) with NaN */
    for (int64_t c = 0; beta == 0.0 && c < C.nq; c++)
      for (int64_t r = 0; r < C.mp; r++) {
        int64_t a, b;
        if (tmat_global(&C, r, c, &a, &b) && a >= ic - 1 && a < ic - 1 + m && b >= jc - 1 && b < jc - 1 + n)
          C.data[r + c * C.lld] = NAN;
      }
    pdgemm_(ta, tb, &m, &n, &k, &alpha, A.data, &ia, &ja, A.desc, B.data, &ib, &jb, B.desc, &beta, R.data, &ic, &jc,
            R.desc);
  }
  ovl_err rc = ovl_pdgemm(ta, tb, &m, &n, &k, &alpha, A.data, &ia, &ja, A.desc, B.data, &ib, &jb, B.desc, &beta, C.data,
                          &ic, &jc, C.desc);
  T_CHECK(rc == OVL_OK, "ovl_pdgemm returned %s: %s", ovl_err_name(rc), ovl_errmsg());
  double tol = 1e-12 * (fabs(alpha) * (k > 0 ? k : 1) + fabs(beta) + 1.0);
  for (int64_t c = 0; G->in && c < C.nq; c++)
    for (int64_t r = 0; r < C.lld; r++) {
      int64_t a, b, i = r + c * C.lld;
      if (tmat_global(&C, r, c, &a, &b) && a >= ic - 1 && a < ic - 1 + m && b >= jc - 1 && b < jc - 1 + n) {
        double d = fabs(C.data[i] - R.data[i]);
        if (!(d <= tol)) bad++;
        if (d > maxdiff || d != d) maxdiff = d;
      } else if (!same_bits(C.data[i], C.init[i]) || !same_bits(R.data[i], R.init[i])) {
        bad++; /* outside sub(C), or LLD padding: must be untouched */
      }
    }
  T_CHECK(bad == 0,
          "grid %dx%d %s%s m=%d n=%d k=%d alpha=%g beta=%g A(mb=%d nb=%d src=%d,%d ia=%d ja=%d) B(mb=%d nb=%d "
          "src=%d,%d) C(mb=%d nb=%d src=%d,%d ic=%d jc=%d lld=%lld): %d bad entries, max diff %.3e (tol %.1e)",
          G->nprow, G->npcol, ta, tb, m, n, k, alpha, beta, La->mb, La->nb, La->rsrc, La->csrc, ia, ja, Lb->mb, Lb->nb,
          Lb->rsrc, Lb->csrc, Lc->mb, Lc->nb, Lc->rsrc, Lc->csrc, ic, jc, (long long)C.lld, bad, maxdiff, tol);
  if (G->in && m > 0 && n > 0 && k > 0 && alpha != 0.0) {
    ovl_pdgemm_info info;
    T_OK(ovl_pdgemm_last_info(&info));
    T_CHECK(info.p == G->nprow && info.q == G->npcol && info.b > 0 && info.summa.steps > 0 && info.t_total > 0,
            "last info: grid %dx%d b=%lld steps=%lld t=%g", info.p, info.q, (long long)info.b,
            (long long)info.summa.steps, info.t_total);
    if (g_route) /* the forced route ran: no conversion in layout, C converted back otherwise */
      T_CHECK(g_route == 2 ? info.t_in == 0.0 && info.t_out == 0.0 : info.t_out > 0.0,
              "--dropin-route %s: t_in=%g t_out=%g", g_route == 2 ? "layout" : "convert", info.t_in, info.t_out);
  }
  g_cases++;
  tmat_free(&A);
  tmat_free(&B);
  tmat_free(&C);
  tmat_free(&R);
}

static unsigned long hash_str(const char *s) {
  unsigned long h = 5381;
  while (*s) h = h * 33 + (unsigned char)*s++;
  return h;
}

/* Bad input: in-grid processes get `want` with the same message; the others OVL_OK. */
static void expect_error(const grid_ctx *G, ovl_err got, ovl_err want, const char *what) {
  if (!G->in) {
    T_CHECK(got == OVL_OK, "%s: a process outside the grid got %s", what, ovl_err_name(got));
    return;
  }
  T_CHECK(got == want, "%s: got %s, expected %s (%s)", what, ovl_err_name(got), ovl_err_name(want), ovl_errmsg());
  unsigned long h = hash_str(ovl_errmsg()), hmin = 0, hmax = 0;
  MPI_Allreduce(&h, &hmin, 1, MPI_UNSIGNED_LONG, MPI_MIN, G->comm);
  MPI_Allreduce(&h, &hmax, 1, MPI_UNSIGNED_LONG, MPI_MAX, G->comm);
  T_CHECK(hmin == hmax, "%s: processes of the grid hold different messages (this one: %s)", what, ovl_errmsg());
}

static void bad_input(const grid_ctx *G) {
  layout L = {3, 2, 0, G->npcol - 1, 1, 1, 2, 0, 0};
  int m = 7, n = 5, k = 6, ia = 2, ja = 3, ic = 2, jc = 3;
  double alpha = 1.0, beta = 0.5;
  tmat A, B, C;
  make_operand(&A, G, &L, m, k, 1);
  make_operand(&B, G, &L, k, n, 2);
  make_operand(&C, G, &L, m, n, 3);
  int ib = 2, jb = 3;
  ovl_err rc;
  rc = ovl_pdgemm("X", "N", &m, &n, &k, &alpha, A.data, &ia, &ja, A.desc, B.data, &ib, &jb, B.desc, &beta, C.data, &ic,
                  &jc, C.desc);
  expect_error(G, rc, OVL_ERR_ARG, "transa 'X'");
  rc = ovl_pdgemm("N", "q", &m, &n, &k, &alpha, A.data, &ia, &ja, A.desc, B.data, &ib, &jb, B.desc, &beta, C.data, &ic,
                  &jc, C.desc);
  expect_error(G, rc, OVL_ERR_ARG, "transb 'q'");
  int mneg = -1;
  rc = ovl_pdgemm("N", "N", &mneg, &n, &k, &alpha, A.data, &ia, &ja, A.desc, B.data, &ib, &jb, B.desc, &beta, C.data,
                  &ic, &jc, C.desc);
  expect_error(G, rc, OVL_ERR_ARG, "m = -1");
  int ia_far = 4; /* rows 4..10 of an 8 x 8 A */
  rc = ovl_pdgemm("N", "N", &m, &n, &k, &alpha, A.data, &ia_far, &ja, A.desc, B.data, &ib, &jb, B.desc, &beta, C.data,
                  &ic, &jc, C.desc);
  expect_error(G, rc, OVL_ERR_SIZE, "sub(A) out of range");
  int jc_far = 5;
  rc = ovl_pdgemm("N", "N", &m, &n, &k, &alpha, A.data, &ia, &ja, A.desc, B.data, &ib, &jb, B.desc, &beta, C.data, &ic,
                  &jc_far, C.desc);
  expect_error(G, rc, OVL_ERR_SIZE, "sub(C) out of range");
  /* A^T is k x m = 6 x 7 at (2, 3): columns 3..9 of an 8 x 8 A */
  rc = ovl_pdgemm("T", "N", &m, &n, &k, &alpha, A.data, &ia, &ja, A.desc, B.data, &ib, &jb, B.desc, &beta, C.data, &ic,
                  &jc, C.desc);
  expect_error(G, rc, OVL_ERR_SIZE, "sub(A^T) out of range");
  int zero = 0;
  rc = ovl_pdgemm("N", "N", &m, &n, &k, &alpha, A.data, &zero, &ja, A.desc, B.data, &ib, &jb, B.desc, &beta, C.data,
                  &ic, &jc, C.desc);
  expect_error(G, rc, OVL_ERR_ARG, "IA = 0");
  int saved = B.desc[1];
  B.desc[1] = G->ctxt + 100;
  rc = ovl_pdgemm("N", "N", &m, &n, &k, &alpha, A.data, &ia, &ja, A.desc, B.data, &ib, &jb, B.desc, &beta, C.data, &ic,
                  &jc, C.desc);
  expect_error(G, rc, OVL_ERR_ARG, "B in another context");
  B.desc[1] = saved;
  saved = A.desc[6];
  A.desc[6] = G->nprow;
  rc = ovl_pdgemm("N", "N", &m, &n, &k, &alpha, A.data, &ia, &ja, A.desc, B.data, &ib, &jb, B.desc, &beta, C.data, &ic,
                  &jc, C.desc);
  expect_error(G, rc, OVL_ERR_ARG, "RSRC out of range");
  A.desc[6] = saved;
  A.desc[6] = -1;
  rc = ovl_pdgemm("N", "N", &m, &n, &k, &alpha, A.data, &ia, &ja, A.desc, B.data, &ib, &jb, B.desc, &beta, C.data, &ic,
                  &jc, C.desc);
  expect_error(G, rc, OVL_ERR_UNSUPPORTED, "RSRC -1 (replicated A)");
  A.desc[6] = saved;
  saved = A.desc[0];
  A.desc[0] = 502;
  rc = ovl_pdgemm("N", "N", &m, &n, &k, &alpha, A.data, &ia, &ja, A.desc, B.data, &ib, &jb, B.desc, &beta, C.data, &ic,
                  &jc, C.desc);
  expect_error(G, rc, OVL_ERR_ARG, "DTYPE 502");
  A.desc[0] = saved;
  /* LLD_ = 1 for a 4 x 7 C with MB = 3: too small where a process owns 3 rows
   * (grid row RSRC_), fine where it owns 1 row or none: only some processes
   * see the error, all must return it */
  tmat C2;
  tmat_make(&C2, G->ctxt, 4, 7, 3, 2, 0, L.csrc, 0, G->nprow, G->npcol, G->myrow, G->mycol, 4);
  C2.desc[8] = 1;
  int m2 = 3;
  rc = ovl_pdgemm("N", "N", &m2, &n, &k, &alpha, A.data, &ia, &ja, A.desc, B.data, &ib, &jb, B.desc, &beta, C2.data,
                  &ic, &jc, C2.desc);
  expect_error(G, rc, OVL_ERR_ARG, "LLD_ of C = 1");
  tmat_free(&C2);
  /* an empty sub(A) (k = 0) is not checked against LLD_, as in PBLAS; C = beta C */
  saved = A.desc[8];
  A.desc[8] = 1;
  int k0 = 0;
  double one = 1.0;
  rc = ovl_pdgemm("N", "N", &m, &n, &k0, &alpha, A.data, &ia, &ja, A.desc, B.data, &ib, &jb, B.desc, &one, C.data, &ic,
                  &jc, C.desc);
  T_CHECK(rc == OVL_OK, "k = 0 with LLD_ of A = 1: %s: %s", ovl_err_name(rc), ovl_errmsg());
  A.desc[8] = saved;
  /* after all that, C is untouched and a good call works */
  int bad = 0;
  for (int64_t i = 0; G->in && i < C.len; i++) bad += !same_bits(C.data[i], C.init[i]);
  T_CHECK(bad == 0, "failed calls modified C (%d entries)", bad);
  rc = ovl_pdgemm("N", "N", &m, &n, &k, &alpha, A.data, &ia, &ja, A.desc, B.data, &ib, &jb, B.desc, &beta, C.data, &ic,
                  &jc, C.desc);
  T_CHECK(rc == OVL_OK, "good call after bad ones: %s: %s", ovl_err_name(rc), ovl_errmsg());
  tmat_free(&A);
  tmat_free(&B);
  tmat_free(&C);
}

static void grid_cases(int p, int q, const char *order, int ncases) {
  grid_ctx G;
  memset(&G, 0, sizeof G);
  Cblacs_get(-1, 0, &G.ctxt);
  Cblacs_gridinit(&G.ctxt, order, p, q);
  G.nprow = G.npcol = G.myrow = G.mycol = -1;
  Cblacs_gridinfo(G.ctxt, &G.nprow, &G.npcol, &G.myrow, &G.mycol);
  G.in = G.nprow > 0 && G.myrow >= 0;
  int wrank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
  MPI_Comm_split(MPI_COMM_WORLD, G.in ? 0 : MPI_UNDEFINED, wrank, &G.comm);
  /* processes outside the grid still draw the same cases: their nprow is -1,
   * so the layouts use the grid's shape */
  grid_ctx S = G;
  S.nprow = p, S.npcol = q;
  static const int sizes[] = {1, 7, 33, 100};
  static const double alphas[] = {1.0, -0.5, 2.5}, betas[] = {0.0, 1.0, -1.5};
  static const char *const trans[] = {"N", "T", "C", "n", "t"};
  for (int t = 0; t < ncases; t++) {
    const char *ta = t % 4 < 2 ? "N" : trans[1 + rnd(2)], *tb = t % 2 == 0 ? trans[3 * rnd(2)] : trans[1 + rnd(2)];
    int m = pick(sizes, 4), n = pick(sizes, 4), k = pick(sizes, 4);
    if (m == 100 && n == 100 && k == 100) k = 33; /* keep the oversubscribed runs short */
    double alpha = alphas[rnd(3)], beta = betas[rnd(3)];
    layout La = random_layout(&S), Lb = random_layout(&S), Lc = random_layout(&S);
    gemm_case(&G, ta, tb, m, n, k, alpha, beta, &La, &Lb, &Lc);
  }
  /* quick returns and a full-size case with default layouts */
  layout L0 = {8, 8, 0, 0, 0, 0, 0, 0, 0}, L1 = {3, 64, S.nprow - 1, S.npcol - 1, 2, 1, 2, 1, 1};
  gemm_case(&G, "N", "N", 0, 7, 5, 1.0, 2.0, &L0, &L0, &L1);  /* m = 0 */
  gemm_case(&G, "N", "T", 7, 0, 5, 1.0, 2.0, &L1, &L0, &L1);  /* n = 0 */
  gemm_case(&G, "T", "N", 7, 5, 0, 1.0, -2.0, &L0, &L1, &L1); /* k = 0: C = beta C */
  gemm_case(&G, "N", "N", 7, 5, 9, 0.0, 0.0, &L1, &L1, &L1);  /* alpha = 0, beta = 0 (NaN in C) */
  gemm_case(&G, "T", "T", 7, 5, 9, 0.0, 3.0, &L1, &L0, &L1);  /* alpha = 0 */
  gemm_case(&G, "N", "N", 100, 100, 100, 1.0, 1.0, &L0, &L0, &L0);
  /* a non-default configuration: 3 lanes, own collectives, panel 5 */
  T_OK(ovl_pdgemm_config(3, OVL_BACKEND_OWN, 5));
  gemm_case(&G, "N", "T", 33, 7, 100, -0.5, 1.0, &L1, &L0, &L1);
  gemm_case(&G, "T", "N", 100, 33, 7, 1.0, 0.0, &L0, &L1, &L0);
  T_OK(ovl_pdgemm_config(1, OVL_BACKEND_MPI, 0));
  /* the workspace can be released on one process alone */
  if (wrank == 0) T_OK(ovl_pdgemm_release());
  gemm_case(&G, "C", "C", 33, 33, 33, 1.0, 1.0, &L1, &L1, &L1);
  bad_input(&G);
  if (G.in) {
    MPI_Comm_free(&G.comm);
    Cblacs_gridexit(G.ctxt);
  }
}

static void part2(int P) {
  /* configuration errors are LOCAL and leave the defaults alone */
  T_ERR(ovl_pdgemm_config(0, OVL_BACKEND_MPI, 0), OVL_ERR_ARG);
  T_ERR(ovl_pdgemm_config(OVL_LANES_MAX + 1, OVL_BACKEND_MPI, 0), OVL_ERR_ARG);
  T_ERR(ovl_pdgemm_config(1, (ovl_backend)7, 0), OVL_ERR_ARG);
  T_ERR(ovl_pdgemm_config(1, OVL_BACKEND_MPI, -1), OVL_ERR_ARG);
  T_ERR(ovl_pdgemm_last_info(NULL), OVL_ERR_ARG);
  int nd = 0;
  ovl_backend be = OVL_BACKEND_OWN;
  int64_t pw = -1;
  T_OK(ovl_pdgemm_get_config(&nd, &be, &pw));
  T_CHECK(nd == 1 && be == OVL_BACKEND_MPI && pw == 0, "defaults changed: ndup %d backend %d panel %lld", nd, (int)be,
          (long long)pw);
  static const int shapes[][2] = {{1, 1}, {1, 2}, {2, 1}, {2, 2}, {2, 3}, {3, 2}};
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
    int p = shapes[s][0], q = shapes[s][1];
    if (p * q > P) continue;
    grid_cases(p, q, "Row", p * q <= 2 ? 40 : 28);
    if (p > 1 && q > 1) grid_cases(p, q, "Col", 8);
  }
}
#endif

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int P = 1, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (argc > 1) { /* part 2 alone, every call in the route named: SUMMA on ScaLAPACK's layout, or converted */
    g_route = strcmp(argv[1], "layout") == 0 ? 2 : strcmp(argv[1], "convert") == 0 ? 3 : -1;
    if (g_route < 0) {
      if (rank == 0) fprintf(stderr, "usage: test_pdgemm [layout|convert]\n");
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    setenv("OVL_OPTIONS", g_route == 2 ? "--dropin-route layout" : "--dropin-route convert", 1);
  }
  if (!g_route) part1(P);
#ifdef OVL_TEST_HAVE_SCALAPACK
  part2(P);
  if (rank == 0) printf("test_pdgemm: %d ovl_pdgemm cases compared with pdgemm_\n", g_cases);
  T_OK(ovl_pdgemm_release());
  Cblacs_exit(1);
#else
  /* without ScaLAPACK, ovl_pdgemm says so on every rank */
  int one = 1, desc[9] = {1, 0, 1, 1, 1, 1, 0, 0, 1};
  double x = 1.0, y = 0.0;
  T_ERR(
      ovl_pdgemm("N", "N", &one, &one, &one, &x, &x, &one, &one, desc, &x, &one, &one, desc, &x, &y, &one, &one, desc),
      OVL_ERR_UNSUPPORTED);
  if (rank == 0) printf("test_pdgemm: built without ScaLAPACK: exchanges tested, no comparison with pdgemm_\n");
#endif
  int rc = t_finish("test_pdgemm");
  MPI_Finalize();
  return rc;
}
