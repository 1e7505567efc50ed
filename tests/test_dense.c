/* The dense entries on row blocks (ovl_purify_rows, ovl_gemm_rows) and the
 * exchange underneath them (ovl_dmat_import / ovl_dmat_export).
 *
 * Part 1 (exchange): matrices on p x q grids (P, non-square, with idle
 * ranks) against a caller's layout: rows split unevenly (empty parts
 * included), columns split, 2D block-cyclic on every npr x npc = P with
 * MB != NB and a nonzero first process, mixed axes; values checked by
 * global index, the caller's padding (lld > local rows) left untouched on
 * export; bad layouts (offsets that do not reach m, a grid of the wrong
 * size, an lld too small on one rank, layouts that differ between ranks)
 * give OVL_ERR_ARG with the same message on every rank.
 * Part 2 (purification): F = Q diag(e) Q^T with Q a Householder reflector,
 * so D = Q diag(1,..,1,0,..,0) Q^T is known exactly; ovl_purify_rows with
 * even, uneven (a rank with no rows) and all-on-one-rank splits, SP2,
 * TRS4 and canonical, against that D and against ovl_purify_dense's D.
 * Part 3 (product): ovl_gemm_rows with different row splits of A and B,
 * rectangular sizes, the planner's and named algorithms (3d on cubes),
 * against the product computed by each rank for its rows.
 * Part 4 (errors): negative counts, counts that do not sum, sizes or options
 * that differ from rank 0's, ld, NULL arrays with rows, nocc: OVL_ERR_ARG
 * with the same message on every rank, and a good call afterwards. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ovl/ovl.h"
#include "ovltest.h"

static int g_rank, g_size;
static MPI_Comm g_world; /* MPI_COMM_WORLD, set in main (not a constant in every MPI, e.g. SMPI) */

static double val(int64_t i, int64_t j) { return (double)(i * 1000 + j) + 0.25; }

#define T_ARG_EVERYWHERE(call, what)                                                                                   \
  do {                                                                                                                 \
    T_ERR(call, OVL_ERR_ARG);                                                                                          \
    T_CHECK(t_same_message(MPI_COMM_WORLD, ovl_errmsg()), "%s: the message differs between ranks (here: %s)", what,    \
            ovl_errmsg());                                                                                             \
    T_CHECK(strstr(ovl_errmsg(), what) != NULL, "expected '%s' in the message: %s", what, ovl_errmsg());               \
  } while (0)

/* Row counts of n rows over P ranks: 0 even, 1 uneven with empty parts, 2 all on the last rank. */
static void split(int kind, int64_t n, int P, int64_t *cnt) {
  int64_t left = n;
  for (int r = 0; r < P; r++) {
    int64_t c = 0;
    if (kind == 0) c = n / P + (r < n % P);
    else if (kind == 1) c = r == P - 1 ? left : ((r * 5 + 3) % 4) * n / (2 * P + 1);
    else c = r == P - 1 ? n : 0;
    if (c > left) c = left;
    cnt[r] = c, left -= c;
  }
  cnt[P - 1] += left;
}

/* ---- part 1: the exchange ------------------------------------------------ */

static void check_layout(ovl_grid2d g, int64_t m, int64_t n, const ovl_axis *ra, const ovl_axis *ca, int64_t pad,
                         const char *what) {
  int npc = ca->np, myr = g_rank / npc, myc = g_rank % npc;
  int64_t mloc = ovl_axis_len(ra, m, myr), nloc = ovl_axis_len(ca, n, myc), lld = (mloc > 1 ? mloc : 1) + pad;
  /* the caller's global indices, by the test's own walk over the axes */
  int64_t *gr = calloc((size_t)(mloc + 1), sizeof *gr), *gc = calloc((size_t)(nloc + 1), sizeof *gc);
  for (int pass = 0; pass < 2; pass++) {
    const ovl_axis *ax = pass ? ca : ra;
    int64_t len = pass ? n : m, *out = pass ? gc : gr, l = 0;
    int me = pass ? myc : myr;
    for (int64_t x = 0; x < len; x++) {
      int owner;
      if (ax->nb >= 1) owner = (int)((x / ax->nb + ax->src) % ax->np);
      else
        for (owner = 0; !(ax->off[owner] <= x && x < ax->off[owner + 1]); owner++) {}
      if (owner == me) out[l++] = x;
    }
    T_CHECK(l == (pass ? nloc : mloc), "%s: ovl_axis_len %" PRId64 ", the walk %" PRId64, what, pass ? nloc : mloc, l);
  }
  size_t len = (size_t)(lld * (nloc > 0 ? nloc : 1));
  double *a = malloc(sizeof(double) * len), *b = malloc(sizeof(double) * len);
  for (size_t t = 0; t < len; t++) a[t] = b[t] = -7777.0;
  for (int64_t j = 0; j < nloc; j++)
    for (int64_t i = 0; i < mloc; i++) a[i + j * lld] = val(gr[i], gc[j]);
  ovl_dmat X = NULL;
  T_OK(ovl_dmat_create(g, m, n, &X));
  T_OK(ovl_dmat_import(X, ra, ca, a, lld));
  int bad = 0;
  if (ovl_grid2d_active(g)) {
    const double *x = ovl_dmat_data(X);
    for (int64_t j = 0; j < ovl_dmat_local_cols(X); j++)
      for (int64_t i = 0; i < ovl_dmat_local_rows(X); i++)
        bad += x[i + j * ovl_dmat_ld(X)] != val(ovl_dmat_row_off(X) + i, ovl_dmat_col_off(X) + j);
  }
  T_CHECK(bad == 0, "%s: import: %d wrong entries", what, bad);
  T_OK(ovl_dmat_export(X, ra, ca, b, lld));
  bad = 0;
  for (size_t t = 0; t < len; t++) bad += a[t] != b[t];
  T_CHECK(bad == 0, "%s: export: %d entries differ from the original (padding included)", what, bad);
  ovl_dmat_destroy(&X);
  free(a), free(b), free(gr), free(gc);
}

static void part_exchange(void) {
  int P = g_size;
  int64_t *off = calloc((size_t)P + 1, sizeof *off), *cnt = calloc((size_t)P, sizeof *cnt);
  int64_t one[2];
  const int64_t sizes[][2] = {{13, 9}, {5, 11}, {1, 1}, {40, 3}};
  int grids[][2] = {{0, 0}, {1, P}, {P, 1}, {1, 1}, {2, 1}};
  for (size_t sz = 0; sz < sizeof sizes / sizeof sizes[0]; sz++)
    for (size_t gi = 0; gi < sizeof grids / sizeof grids[0]; gi++) {
      int64_t m = sizes[sz][0], n = sizes[sz][1];
      int p = grids[gi][0], q = grids[gi][1];
      if (p * q > P) continue;
      ovl_grid2d g = NULL;
      T_OK(ovl_grid2d_create(MPI_COMM_WORLD, p, q, OVL_GRID_ALLOW_IDLE, &g));
      ovl_grid2d_dims(g, &p, &q);
      char what[96];
      for (int kind = 0; kind < 3; kind++) { /* rows split */
        split(kind, m, P, cnt);
        for (int r = 0; r < P; r++) off[r + 1] = off[r] + cnt[r];
        one[0] = 0, one[1] = n;
        ovl_axis ra = {P, 0, 0, off}, ca = {1, 0, 0, one};
        snprintf(what, sizeof what, "%" PRId64 "x%" PRId64 " on %dx%d, rows split %d", m, n, p, q, kind);
        check_layout(g, m, n, &ra, &ca, kind, what);
        /* the same split of the columns */
        split(kind, n, P, cnt);
        for (int r = 0; r < P; r++) off[r + 1] = off[r] + cnt[r];
        one[0] = 0, one[1] = m;
        ovl_axis rb = {1, 0, 0, one}, cb = {P, 0, 0, off};
        snprintf(what, sizeof what, "%" PRId64 "x%" PRId64 " on %dx%d, columns split %d", m, n, p, q, kind);
        check_layout(g, m, n, &rb, &cb, 1, what);
      }
      for (int npr = 1; npr <= P; npr++) { /* block-cyclic on every npr x npc grid */
        if (P % npr) continue;
        int npc = P / npr;
        ovl_axis ra = {npr, 2, npr - 1, NULL}, ca = {npc, 3, npc > 1 ? 1 : 0, NULL};
        snprintf(what, sizeof what, "%" PRId64 "x%" PRId64 " on %dx%d, block-cyclic %dx%d", m, n, p, q, npr, npc);
        check_layout(g, m, n, &ra, &ca, 2, what);
        /* mixed: block-cyclic rows, contiguous columns */
        split(1, n, npc, cnt);
        for (int r = 0; r < npc; r++) off[r + 1] = off[r] + cnt[r];
        ovl_axis cc = {npc, 0, 0, off};
        snprintf(what, sizeof what, "%" PRId64 "x%" PRId64 " on %dx%d, mixed %dx%d", m, n, p, q, npr, npc);
        check_layout(g, m, n, &ra, &cc, 0, what);
      }
      ovl_grid2d_destroy(&g);
    }
  /* bad layouts */
  ovl_grid2d g = NULL;
  ovl_dmat X = NULL;
  T_OK(ovl_grid2d_create(MPI_COMM_WORLD, 0, 0, 0, &g));
  T_OK(ovl_dmat_create(g, 10, 4, &X));
  double *a = calloc(10 * 4 * 4, sizeof(double));
  split(0, 10, P, cnt);
  for (int r = 0; r < P; r++) off[r + 1] = off[r] + cnt[r];
  int64_t cols[2] = {0, 4};
  ovl_axis ra = {P, 0, 0, off}, ca = {1, 0, 0, cols};
  int64_t mine = cnt[g_rank] > 1 ? cnt[g_rank] : 1;
  off[P] = 9;
  T_ARG_EVERYWHERE(ovl_dmat_import(X, &ra, &ca, a, mine), "the offsets must run from 0 to 10");
  off[P] = 10;
  ovl_axis wrong = {P + 1, 1, 0, NULL};
  T_ARG_EVERYWHERE(ovl_dmat_export(X, &wrong, &ca, a, 40), "ranks");
  T_ARG_EVERYWHERE(ovl_dmat_import(X, &ra, &ca, a, g_rank == P - 1 ? mine - 1 : mine), "leading dimension");
  T_ARG_EVERYWHERE(ovl_dmat_import(X, &ra, &ca, g_rank == 0 ? NULL : a, mine), "is NULL");
  if (P >= 2) { /* rank 0 believes in another split */
    int64_t save = off[1];
    if (g_rank == 0) off[1] = 0;
    ovl_axis bc = {P, 0, 0, off};
    T_ARG_EVERYWHERE(ovl_dmat_import(X, &bc, &ca, a, 10), "differs between the ranks");
    off[1] = save;
  }
  T_OK(ovl_dmat_import(X, &ra, &ca, a, mine));
  ovl_dmat_destroy(&X);
  ovl_grid2d_destroy(&g);
  free(a), free(off), free(cnt);
}

/* ---- part 2: purification ------------------------------------------------- */

/* F = Q diag(e) Q^T and D = Q diag(occ) Q^T, Q = I - 2 v v^T / (v^T v). */
static void householder_pair(int64_t n, int64_t nocc, double *F, double *D) {
  double *v = malloc(sizeof(double) * (size_t)n), vv = 0;
  for (int64_t i = 0; i < n; i++) v[i] = 1.0 + 0.3 * sin(1.7 * (double)i), vv += v[i] * v[i];
  for (int64_t j = 0; j < n; j++)
    for (int64_t i = 0; i < n; i++) {
      double f = 0, d = 0;
      for (int64_t t = 0; t < n; t++) {
        double qi = (i == t) - 2 * v[i] * v[t] / vv, qj = (j == t) - 2 * v[j] * v[t] / vv;
        double e = t < nocc ? -2.0 + 0.1 * (double)t : 1.0 + 0.07 * (double)(t - nocc);
        f += qi * e * qj, d += t < nocc ? qi * qj : 0.0;
      }
      F[i + j * n] = f, D[i + j * n] = d;
    }
  free(v);
}

static void part_purify(void) {
  const int64_t n = 29, nocc = 11;
  int P = g_size;
  double *F = malloc(sizeof(double) * (size_t)(n * n)), *Dx = malloc(sizeof(double) * (size_t)(n * n));
  double *Dw = malloc(sizeof(double) * (size_t)(n * n));
  householder_pair(n, nocc, F, Dx);
  int64_t *cnt = calloc((size_t)P, sizeof *cnt);
  const char *methods[] = {"sp2", "trs4", "canonical"};
  for (int mi = 0; mi < 3; mi++) {
    ovl_dense_info wi;
    ovl_err rw = ovl_purify_dense(NULL, n, F, nocc, methods[mi], "auto", 0, "double", 0.0, 0, Dw, NULL, &wi);
    /* SymmSquareCube (canonical) has no grid for some rank counts (3): then
     * the row entry must refuse the same way */
    T_CHECK(rw == OVL_OK || (mi == 2 && rw == OVL_ERR_GRID), "%s: ovl_purify_dense: %s: %s", methods[mi],
            ovl_err_name(rw), ovl_errmsg());
    if (rw != OVL_OK) {
      char msg[512];
      snprintf(msg, sizeof msg, "%s", ovl_errmsg());
      double d1[1];
      T_ERR(ovl_purify_rows(NULL, n, g_rank == 0 ? n : 0, F, n, nocc, methods[mi], NULL, 0, NULL, 0.0, 0,
                            g_rank == 0 ? Dw : d1, n, NULL, NULL),
            rw);
      T_CHECK(strcmp(msg, ovl_errmsg()) == 0, "%s: the row entry says '%s', the whole-matrix one '%s'", methods[mi],
              ovl_errmsg(), msg);
      continue;
    }
    MPI_Bcast(Dw, (int)(n * n), MPI_DOUBLE, 0, MPI_COMM_WORLD);
    double asym = 0; /* every method's D is symmetric by construction: exactly */
    for (int64_t j = 0; j < n; j++)
      for (int64_t i = 0; i < j; i++) asym = fmax(asym, fabs(Dw[i + j * n] - Dw[j + i * n]));
    T_CHECK(asym == 0.0, "%s: ovl_purify_dense's D is not exactly symmetric: max |D - D^T| = %.3e", methods[mi], asym);
    for (int kind = 0; kind < 3; kind++) {
      split(kind, n, P, cnt);
      int64_t r0 = 0, nr = cnt[g_rank], pad = kind, ld = (nr > 1 ? nr : 1) + pad;
      for (int r = 0; r < g_rank; r++) r0 += cnt[r];
      double *Fl = calloc((size_t)(ld * n), sizeof(double)), *Dl = calloc((size_t)(ld * n), sizeof(double));
      for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < nr; i++) Fl[i + j * ld] = F[r0 + i + j * n];
      ovl_dense_info ri;
      T_OK(ovl_purify_rows(&g_world, n, nr, nr ? Fl : NULL, ld, nocc, methods[mi], NULL, 0, NULL, 0.0, 0,
                           nr ? Dl : NULL, ld, NULL, &ri));
      double ex = 0, ew = 0;
      for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < nr; i++) {
          ex = fmax(ex, fabs(Dl[i + j * ld] - Dx[r0 + i + j * n]));
          ew = fmax(ew, fabs(Dl[i + j * ld] - Dw[r0 + i + j * n]));
        }
      T_CHECK(ex <= 1e-9, "%s, split %d: rank %d's rows of D differ from the exact D by %.2e", methods[mi], kind,
              g_rank, ex);
      T_CHECK(ew <= 1e-13, "%s, split %d: rank %d's rows differ from ovl_purify_dense's D by %.2e", methods[mi], kind,
              g_rank, ew);
      T_CHECK(ri.iterations == wi.iterations && strcmp(ri.plan, wi.plan) == 0,
              "%s, split %d: %d iterations with plan '%s', the whole-matrix entry %d with '%s'", methods[mi], kind,
              ri.iterations, ri.plan, wi.iterations, wi.plan);
      T_CHECK(fabs(ri.trace_err) <= 1e-9 && ri.idem_err <= 1e-9, "%s, split %d: trace error %.2e, idempotency %.2e",
              methods[mi], kind, ri.trace_err, ri.idem_err);
      free(Fl), free(Dl);
    }
  }
  free(F), free(Dx), free(Dw), free(cnt);
}

/* ---- part 3: products --------------------------------------------------------- */

static void part_gemm(void) {
  int P = g_size, cube = 0;
  for (int c = 1; c * c * c <= P; c++) cube |= c * c * c == P;
  const int64_t shapes[][3] = {{23, 17, 19}, {8, 31, 5}, {1, 1, 1}};
  const char *algos[] = {"auto", "summa", "3d"};
  int64_t *ca = calloc((size_t)P, sizeof *ca), *cb = calloc((size_t)P, sizeof *cb);
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
    for (int ai = 0; ai < 3; ai++) {
      if (ai == 2 && !cube) continue;
      int64_t m = shapes[s][0], n = shapes[s][1], k = shapes[s][2];
      split(1, m, P, ca);
      split(2 - (int)(s % 2) * 2, k, P, cb); /* B: all on the last rank, or even */
      int64_t ar0 = 0, br0 = 0, mr = ca[g_rank], kr = cb[g_rank];
      for (int r = 0; r < g_rank; r++) ar0 += ca[r], br0 += cb[r];
      int64_t lda = (mr > 1 ? mr : 1) + 1, ldb = kr > 1 ? kr : 1, ldc = lda + 2;
      double *A = calloc((size_t)(lda * k), sizeof(double)), *B = calloc((size_t)(ldb * n), sizeof(double));
      double *C = calloc((size_t)(ldc * n), sizeof(double));
      for (int64_t j = 0; j < k; j++)
        for (int64_t i = 0; i < mr; i++) A[i + j * lda] = ovl_fill_value(1, ar0 + i, j);
      for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < kr; i++) B[i + j * ldb] = ovl_fill_value(2, br0 + i, j);
      ovl_dense_info info;
      T_OK(ovl_gemm_rows(NULL, m, n, k, mr, A, lda, kr, B, ldb, C, ldc, algos[ai], NULL, &info));
      double err = 0, scale = 0;
      for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < mr; i++) {
          double ref = 0;
          for (int64_t t = 0; t < k; t++) ref += ovl_fill_value(1, ar0 + i, t) * ovl_fill_value(2, t, j);
          err = fmax(err, fabs(C[i + j * ldc] - ref)), scale = fmax(scale, fabs(ref));
        }
      T_CHECK(err <= 1e-13 * (double)k * (scale + 1), "gemm %" PRId64 "x%" PRId64 "x%" PRId64 " %s: error %.2e", m, n,
              k, algos[ai], err);
      T_CHECK(info.products == 1 && info.plan[0], "gemm: info not filled (products %d, plan '%s')", info.products,
              info.plan);
      free(A), free(B), free(C);
    }
  free(ca), free(cb);
}

/* ---- part 4: errors ------------------------------------------------------------ */

static void part_errors(void) {
  const int64_t n = 12;
  int P = g_size, last = P - 1;
  int64_t *cnt = calloc((size_t)P, sizeof *cnt);
  split(0, n, P, cnt);
  int64_t nr = cnt[g_rank], ld = nr > 1 ? nr : 1;
  double *F = calloc((size_t)(ld * n), sizeof(double)), *D = calloc((size_t)(ld * n), sizeof(double));
  int64_t r0 = 0;
  for (int r = 0; r < g_rank; r++) r0 += cnt[r];
  for (int64_t i = 0; i < nr; i++) F[i + (r0 + i) * ld] = (double)(r0 + i) - 5.5; /* diagonal */
#define PR(N, NR, FF, LD, NOCC, METHOD)                                                                                \
  ovl_purify_rows(NULL, N, NR, FF, LD, NOCC, METHOD, NULL, 0, NULL, 0.0, 0, D, LD, NULL, NULL)
  T_ARG_EVERYWHERE(PR(n, g_rank == last ? -1 : nr, F, ld, 6, "sp2"), "a row count must be >= 0");
  T_ARG_EVERYWHERE(PR(n, g_rank == last ? nr + 1 : nr, F, ld + 1, 6, "sp2"), "sum to 13");
  T_ARG_EVERYWHERE(PR(n, nr, F, ld, 13, "sp2"), "nocc = 13 is out of range");
  T_ARG_EVERYWHERE(PR(n, nr, F, g_rank == last ? nr - 1 : ld, 6, "sp2"), "must be >= max(1, nrows)");
  if (cnt[last] > 0) T_ARG_EVERYWHERE(PR(n, nr, g_rank == last ? NULL : F, ld, 6, "sp2"), "NULL F or D");
  if (P >= 2) {
    T_ARG_EVERYWHERE(PR(g_rank == 1 ? n + 1 : n, nr, F, ld, 6, "sp2"), "n = 13 on rank 1 but 12 on rank 0");
    T_ARG_EVERYWHERE(PR(n, nr, F, ld, 6, g_rank == 1 ? "trs4" : "sp2"), "method differs between rank 1 and rank 0");
  }
  T_ARG_EVERYWHERE(PR(n, nr, F, ld, 6, "mcweeny"), "mcweeny");
  /* and a good call afterwards */
  T_OK(PR(n, nr, F, ld, 6, "sp2"));
  int bad = 0;
  for (int64_t j = 0; j < n; j++)
    for (int64_t i = 0; i < nr; i++) bad += fabs(D[i + j * ld] - (r0 + i == j && j < 6 ? 1.0 : 0.0)) > 1e-12;
  T_CHECK(bad == 0, "diagonal F: %d wrong entries of D", bad);
#undef PR
  double A[16] = {0}, C[16] = {0};
  int64_t mr = g_rank == 0 ? 3 : 0;
  T_ARG_EVERYWHERE(ovl_gemm_rows(NULL, 3, 2, 4, mr, A, 3, g_rank == 0 ? 3 : 0, A, 3, C, 3, NULL, NULL, NULL),
                   "row counts of B (krows) of the ranks sum to 3");
  if (P >= 2)
    T_ARG_EVERYWHERE(
        ovl_gemm_rows(NULL, 3, g_rank == last ? 1 : 2, 4, mr, A, 3, g_rank == 0 ? 4 : 0, A, 4, C, 3, NULL, NULL, NULL),
        "on rank 0");
  T_ARG_EVERYWHERE(ovl_gemm_rows(NULL, 3, 2, 4, mr, A, 3, g_rank == 0 ? 4 : 0, A, 4, C, 3, "cholesky", NULL, NULL),
                   "'cholesky' is not an algorithm");
  free(F), free(D), free(cnt);
}

/* ---- part 5: run-time options ---------------------------------------------------- */

/* An options string and $OVL_OPTIONS (set on rank 0 only) change the plan on
 * every rank; the string wins over the environment and the arguments; a bad
 * option is OVL_ERR_ARG with the same message everywhere. */
static void part_options(void) {
  const int64_t n = 12, nocc = 5;
  double *F = calloc((size_t)(n * n), sizeof(double)), *D = calloc((size_t)(n * n), sizeof(double));
  for (int64_t i = 0; i < n; i++) F[i + i * n] = (double)i - 5.5;
  for (int64_t i = 0; i + 1 < n; i++) F[i + (i + 1) * n] = F[i + 1 + i * n] = 0.1;
  ovl_dense_info info;
  const int cube = g_size == 1 || g_size == 8;
  /* canonical runs SymmSquareCube: the string's algorithm and N_DUP replace the arguments' */
  if (cube) {
    T_OK(
        ovl_purify_dense(NULL, n, F, nocc, "canonical", "alg3", 1, "double", 0.0, 0, D, "--algo alg5 --ndup 3", &info));
    T_CHECK(strstr(info.plan, "alg5") && strstr(info.plan, "ndup=3"), "options: the plan is '%s'", info.plan);
  }
  /* the method: trs4 instead of sp2 */
  ovl_dense_info sp2;
  T_OK(ovl_purify_dense(NULL, n, F, nocc, "sp2", NULL, 0, NULL, 0.0, 0, D, NULL, &sp2));
  T_OK(ovl_purify_dense(NULL, n, F, nocc, "sp2", NULL, 0, NULL, 0.0, 0, D, "--method trs4 --max-iter 50", &info));
  T_CHECK(info.products != sp2.products || info.iterations != sp2.iterations,
          "--method trs4: the same run as sp2 (%d iterations)", info.iterations);
  T_ERR(ovl_purify_dense(NULL, n, F, nocc, "sp2", NULL, 0, NULL, 0.0, 0, D, "--max-iter 1", &info), OVL_ERR_NUMERIC);
  /* $OVL_OPTIONS on rank 0 only: every rank plans with it; the string wins over it */
  if (g_rank == 0) setenv("OVL_OPTIONS", "--ndup 2 --iterations 5 --machine none.json", 1);
  ovl_dense_info g;
  T_OK(ovl_gemm_dense(NULL, n, n, n, F, F, D, "summa", NULL, &g));
  T_CHECK(strstr(g.plan, "ndup=2") != NULL, "$OVL_OPTIONS on rank 0: rank %d's plan is '%s'", g_rank, g.plan);
  T_OK(ovl_gemm_dense(NULL, n, n, n, F, F, D, "summa", "--ndup 3", &g));
  T_CHECK(strstr(g.plan, "ndup=3") != NULL, "options over $OVL_OPTIONS: rank %d's plan is '%s'", g_rank, g.plan);
  if (g_rank == 0) setenv("OVL_OPTIONS", "--ndup 0", 1);
  T_ARG_EVERYWHERE(ovl_gemm_dense(NULL, n, n, n, F, F, D, "summa", NULL, &g), "OVL_OPTIONS");
  if (g_rank == 0) unsetenv("OVL_OPTIONS");
  /* bad options: unknown, a bad value, options that do not fit */
  T_ARG_EVERYWHERE(ovl_gemm_dense(NULL, n, n, n, F, F, D, "summa", "--ndup 2 --iterations 5", &g),
                   "options: unknown option '--iterations'");
  T_ARG_EVERYWHERE(ovl_gemm_dense(NULL, n, n, n, F, F, D, NULL, "--algo alg5", &g),
                   "options: option -a/--algo: 'alg5'");
  T_ARG_EVERYWHERE(ovl_purify_dense(NULL, n, F, nocc, "sp2", NULL, 0, NULL, 0.0, 0, D,
                                    "--precision mixed --method "
                                    "canonical",
                                    &info),
                   "--precision mixed needs");
  T_ARG_EVERYWHERE(ovl_purify_dense(NULL, n, F, nocc, "sp2", NULL, 0, NULL, 0.0, 0, D, "--nocc 40", &info),
                   "nocc = 40 is out of range");
  /* the row entry reads rank 0's string */
  int64_t nr = g_rank == 0 ? n : 0;
  T_OK(ovl_purify_rows(NULL, n, nr, F, n, nocc, "sp2", NULL, 0, NULL, 0.0, 0, D, n,
                       g_rank == 0 ? "--method trs4 --max-iter 50" : NULL, &info));
  T_CHECK(info.products != sp2.products || info.iterations != sp2.iterations,
          "rows, --method trs4 on rank 0: the same run as sp2 (%d iterations)", info.iterations);
  free(F), free(D);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  g_world = MPI_COMM_WORLD;
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  part_exchange();
  part_purify();
  part_gemm();
  part_errors();
  part_options();
  int rc = t_finish("test_dense");
  MPI_Finalize();
  return rc;
}
