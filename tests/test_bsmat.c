/* bsmat: block-sparse distributed matrices (ovl/bsmat.h): conversion to and
 * from the dense matrix on every grid shape of the ranks (idle ranks, n < P,
 * nblk < P, uneven blocks), filtering, the operations against dense
 * references, both file formats, bad files and memory bombs, and the
 * balance of the seeded permutation on a banded pattern. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <lapacke.h>

#include "ovl/ovl.h"
#include "ovltest.h"

static int g_rank, g_size;
static ovl_grid2d g_auto; /* the automatic grid of the ranks: the dense matrices' */

/* A test matrix: blocks of sizes bs, entry (i, j) in blocks (bi, bj) a
 * random value times 10^-|bi - bj|, zero beyond `band` blocks from the
 * diagonal; symmetric when sym. */
typedef struct tcase {
  int nblk;
  int *bs;
  int64_t n;
  int64_t *boff;
  int *blkof;
  int band;
  int sym;
  uint64_t seed;
} tcase;

static tcase tcase_make(int nblk, const int *bs, int band, int sym, uint64_t seed) {
  tcase c = {nblk, malloc(sizeof(int) * (size_t)nblk), 0, malloc(sizeof(int64_t) * (size_t)(nblk + 1)), NULL, band, sym,
             seed};
  c.boff[0] = 0;
  for (int b = 0; b < nblk; b++) c.bs[b] = bs[b], c.boff[b + 1] = c.boff[b] + bs[b];
  c.n = c.boff[nblk];
  c.blkof = malloc(sizeof(int) * (size_t)c.n);
  for (int b = 0; b < nblk; b++)
    for (int64_t i = c.boff[b]; i < c.boff[b + 1]; i++) c.blkof[i] = b;
  return c;
}

static void tcase_free(tcase *c) {
  free(c->bs);
  free(c->boff);
  free(c->blkof);
}

static double tval(const tcase *c, int64_t i, int64_t j) {
  int bi = c->blkof[i], bj = c->blkof[j], d = abs(bi - bj);
  if (d > c->band) return 0.0;
  if (c->sym && i > j) {
    int64_t t = i;
    i = j, j = t;
  }
  return ovl_fill_value(c->seed, i, j) * pow(10.0, -d);
}

static void fill_dense(ovl_dmat D, const tcase *c) {
  double *a = ovl_dmat_data(D);
  for (int64_t y = 0; y < ovl_dmat_local_cols(D); y++)
    for (int64_t x = 0; x < ovl_dmat_local_rows(D); x++)
      a[x + y * ovl_dmat_ld(D)] = tval(c, ovl_dmat_row_off(D) + x, ovl_dmat_col_off(D) + y);
}

/* Frobenius norm of block (bi, bj) of the test matrix, computed directly. */
static double tnorm(const tcase *c, int bi, int bj) {
  double s = 0;
  for (int64_t j = c->boff[bj]; j < c->boff[bj + 1]; j++)
    for (int64_t i = c->boff[bi]; i < c->boff[bi + 1]; i++) s += tval(c, i, j) * tval(c, i, j);
  return sqrt(s);
}

/* Entries of D that differ from want(i, j) (kept blocks) or from 0 (dropped). */
static int64_t dense_diff(ovl_dmat D, const tcase *c, double eps) {
  int64_t bad = 0;
  double *a = ovl_dmat_data(D);
  for (int64_t y = 0; y < ovl_dmat_local_cols(D); y++)
    for (int64_t x = 0; x < ovl_dmat_local_rows(D); x++) {
      int64_t i = ovl_dmat_row_off(D) + x, j = ovl_dmat_col_off(D) + y;
      double nrm = tnorm(c, c->blkof[i], c->blkof[j]);
      double want = (eps > 0 ? nrm >= eps : nrm > 0) ? tval(c, i, j) : 0.0;
      if (a[x + y * ovl_dmat_ld(D)] != want) bad++;
    }
  MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  return bad;
}

/* ---- conversion on every grid ------------------------------------------------------------- */

/* On the p x q grid g; the dense matrices on gd (the automatic grid) and g. */
static void test_roundtrip(ovl_grid2d g, ovl_grid2d gd, const tcase *c, uint64_t pseed, double eps) {
  int p = 0, q = 0;
  if (!g || !gd) return;
  ovl_grid2d_dims(g, &p, &q);
  ovl_dmat D = NULL, D2 = NULL;
  ovl_bsmat B = NULL;
  T_OK(ovl_dmat_create(gd, c->n, c->n, &D));
  T_OK(ovl_dmat_create(g, c->n, c->n, &D2));
  T_OK(ovl_bsmat_create(g, c->nblk, c->bs, pseed, &B));
  if (D && D2 && B) {
    fill_dense(D, c);
    T_OK(ovl_bsmat_from_dense(D, eps, B));
    T_OK(ovl_dmat_fill(D2, OVL_FILL_RANDOM, 3)); /* to_dense must overwrite everything */
    T_OK(ovl_bsmat_to_dense(B, D2));
    int64_t bad = dense_diff(D2, c, eps);
    T_CHECK(bad == 0, "%dx%d grid, n %lld, nblk %d, seed %llu, eps %g: %lld entries differ after the round trip", p, q,
            (long long)c->n, c->nblk, (unsigned long long)pseed, eps, (long long)bad);
    /* the stored blocks are exactly those the reference keeps */
    int64_t want_blocks = 0, want_vals = 0, blocks = -1, vals = -1;
    for (int bi = 0; bi < c->nblk; bi++)
      for (int bj = 0; bj < c->nblk; bj++) {
        double nrm = tnorm(c, bi, bj);
        if (eps > 0 ? nrm >= eps : nrm > 0) want_blocks++, want_vals += (int64_t)c->bs[bi] * c->bs[bj];
      }
    double fill = -1;
    T_OK(ovl_bsmat_count(B, &blocks, &vals, &fill));
    T_CHECK(blocks == want_blocks && vals == want_vals, "eps %g: %lld blocks (%lld values), expected %lld (%lld)", eps,
            (long long)blocks, (long long)vals, (long long)want_blocks, (long long)want_vals);
    T_CHECK(fabs(fill - (double)want_vals / ((double)c->n * (double)c->n)) < 1e-15, "fill %g", fill);
    /* and back onto the dense grid */
    ovl_dmat D3 = NULL;
    T_OK(ovl_dmat_create(gd, c->n, c->n, &D3));
    if (D3) {
      T_OK(ovl_bsmat_to_dense(B, D3));
      T_CHECK(dense_diff(D3, c, eps) == 0, "to_dense onto another grid");
    }
    ovl_dmat_destroy(&D3);
  }
  ovl_bsmat_destroy(&B);
  T_CHECK(B == NULL, "destroy nulls the handle");
  ovl_dmat_destroy(&D);
  ovl_dmat_destroy(&D2);
}

/* The grid shapes of the ranks: 1x1 (others idle), 2x1, 1x2, 2x2, 2x4, 4x2, Px1, 1xP. */
static int shapes(int P, int (*pq)[2]) {
  static const int cand[][2] = {{1, 1}, {2, 1}, {1, 2}, {2, 2}, {2, 4}, {4, 2}, {3, 1}};
  int k = 0;
  for (size_t s = 0; s < sizeof cand / sizeof cand[0]; s++)
    if (cand[s][0] * cand[s][1] <= P) pq[k][0] = cand[s][0], pq[k][1] = cand[s][1], k++;
  if (P > 4) pq[k][0] = P, pq[k][1] = 1, k++, pq[k][0] = 1, pq[k][1] = P, k++;
  return k;
}

static void test_conversion(void) {
  int pq[16][2], ns = shapes(g_size, pq);
  int uneven[] = {3, 1, 4, 1, 5, 2, 6, 2, 3, 1, 2};
  int tiny[] = {2, 1, 1};
  int ones[] = {1, 1, 1, 1, 1};
  tcase cu = tcase_make(11, uneven, 3, 0, 5);
  tcase ct = tcase_make(3, tiny, 1, 1, 6); /* n = 4, nblk = 3: fewer blocks than ranks */
  tcase co = tcase_make(5, ones, 2, 0, 7); /* 1 x 1 blocks */
  ovl_grid2d gd = g_auto;
  for (int s = 0; s < ns; s++) {
    ovl_grid2d g = NULL;
    T_OK(ovl_grid2d_create(MPI_COMM_WORLD, pq[s][0], pq[s][1], OVL_GRID_ALLOW_IDLE, &g));
    test_roundtrip(g, gd, &cu, 12345, 0.0);
    test_roundtrip(g, gd, &cu, 99, 0.05); /* drops the blocks two and three off the diagonal */
    test_roundtrip(g, gd, &ct, 4, 0.0);
    test_roundtrip(g, gd, &cu, 0, 0.0);
    test_roundtrip(g, gd, &co, 8, 0.0);
    ovl_grid2d_destroy(&g);
  }
  tcase_free(&cu);
  tcase_free(&ct);
  tcase_free(&co);
}

/* ---- regrouping into coarser blocks ------------------------------------------------------------ */

static void test_regroup(void) {
  int uneven[] = {3, 1, 4, 1, 5, 2, 6, 2, 3, 1, 2};
  int want4[] = {4, 4, 1, 5, 2, 6, 2, 4, 2}, ng = 0, gs[11];
  T_OK(ovl_bsmat_group_sizes(11, uneven, 4, &ng, gs));
  T_CHECK(ng == 9 && memcmp(gs, want4, sizeof want4) == 0, "group sizes at 4: %d groups", ng);
  T_OK(ovl_bsmat_group_sizes(11, uneven, 1000, &ng, gs));
  T_CHECK(ng == 1 && gs[0] == 30, "group sizes at 1000: %d groups, the first %d", ng, gs[0]);
  T_OK(ovl_bsmat_group_sizes(11, uneven, 1, &ng, gs));
  T_CHECK(ng == 11 && memcmp(gs, uneven, sizeof uneven) == 0, "group sizes at 1: %d groups", ng);
  T_CHECK(ovl_bsmat_group_sizes(11, uneven, 0, &ng, gs) == OVL_ERR_ARG, "target 0 accepted");
  tcase cu = tcase_make(11, uneven, 3, 0, 5);
  int pq[16][2], ns = shapes(g_size, pq);
  for (int s = 0; s < ns; s++) {
    ovl_grid2d g = NULL;
    T_OK(ovl_grid2d_create(MPI_COMM_WORLD, pq[s][0], pq[s][1], OVL_GRID_ALLOW_IDLE, &g));
    if (!g) continue;
    ovl_dmat D = NULL;
    T_OK(ovl_dmat_create(g_auto, cu.n, cu.n, &D));
    fill_dense(D, &cu);
    for (int e = 0; e < 2; e++) {
      double eps = e ? 0.05 : 0.0;
      ovl_bsmat B = NULL, C = NULL;
      T_OK(ovl_bsmat_create(g, cu.nblk, cu.bs, 77, &B));
      T_OK(ovl_bsmat_from_dense(D, eps, B));
      const int targets[] = {1, 4, 7, 1000};
      for (int t = 0; t < 4; t++) {
        T_OK(ovl_bsmat_regroup(B, targets[t], &C));
        if (!C) continue;
        T_OK(ovl_bsmat_group_sizes(11, uneven, targets[t], &ng, gs));
        T_CHECK(ovl_bsmat_nblk(C) == ng && memcmp(ovl_bsmat_block_sizes(C), gs, sizeof(int) * (size_t)ng) == 0 &&
                    ovl_bsmat_n(C) == cu.n,
                "%dx%d, target %d: %d blocks, expected %d", pq[s][0], pq[s][1], targets[t], ovl_bsmat_nblk(C), ng);
        ovl_dmat E = NULL;
        T_OK(ovl_dmat_create(g_auto, cu.n, cu.n, &E));
        T_OK(ovl_dmat_fill(E, OVL_FILL_RANDOM, 3));
        T_OK(ovl_bsmat_to_dense(C, E));
        int64_t bad = dense_diff(E, &cu, eps);
        T_CHECK(bad == 0, "%dx%d, eps %g, target %d: %lld entries differ after regrouping", pq[s][0], pq[s][1], eps,
                targets[t], (long long)bad);
        double n0 = 0, n1 = 0;
        T_OK(ovl_bsmat_norm_fro(B, &n0));
        T_OK(ovl_bsmat_norm_fro(C, &n1));
        T_CHECK(fabs(n0 - n1) <= 1e-14 * n0, "%dx%d, target %d: norm %.17g, was %.17g", pq[s][0], pq[s][1], targets[t],
                n1, n0);
        ovl_dmat_destroy(&E);
        ovl_bsmat_destroy(&C);
      }
      ovl_err rc = ovl_bsmat_regroup(B, g_rank == 0 ? 4 : 5, &C);
      T_CHECK(g_size == 1 ? rc == OVL_OK : rc == OVL_ERR_ARG, "targets that differ between ranks: %s",
              ovl_err_name(rc));
      ovl_bsmat_destroy(&C);
      T_CHECK(ovl_bsmat_regroup(B, 0, &C) == OVL_ERR_ARG && C == NULL, "target 0 accepted");
      ovl_bsmat_destroy(&B);
    }
    ovl_dmat_destroy(&D);
    ovl_grid2d_destroy(&g);
  }
  tcase_free(&cu);
}

/* ---- operations against dense references ---------------------------------------------------- */

/* Entries of D (on any grid) that differ from f(i, j) by more than tol |f|. */
typedef double (*ref_fn)(const void *ctx, int64_t i, int64_t j);

static int64_t diff_ref(ovl_dmat D, ref_fn f, const void *ctx, double tol) {
  int64_t bad = 0;
  double *a = ovl_dmat_data(D);
  for (int64_t y = 0; y < ovl_dmat_local_cols(D); y++)
    for (int64_t x = 0; x < ovl_dmat_local_rows(D); x++) {
      double want = f(ctx, ovl_dmat_row_off(D) + x, ovl_dmat_col_off(D) + y), got = a[x + y * ovl_dmat_ld(D)];
      if (!(fabs(got - want) <= tol * fabs(want))) bad++;
    }
  MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  return bad;
}

typedef struct pair_ctx {
  const tcase *a, *b;
  double alpha, beta, shift;
} pair_ctx;

static double ref_comb(const void *c, int64_t i, int64_t j) {
  const pair_ctx *p = c;
  double v = p->alpha * tval(p->a, i, j) + (p->b ? p->beta * tval(p->b, i, j) : 0.0);
  return i == j ? v + p->shift : v;
}

static ovl_bsmat make_sparse(ovl_grid2d g, const tcase *c, uint64_t pseed, double eps) {
  ovl_dmat D = NULL;
  ovl_bsmat B = NULL;
  T_OK(ovl_dmat_create(g_auto, c->n, c->n, &D));
  T_OK(ovl_bsmat_create(g, c->nblk, c->bs, pseed, &B));
  if (D && B) {
    fill_dense(D, c);
    T_OK(ovl_bsmat_from_dense(D, eps, B));
  }
  ovl_dmat_destroy(&D);
  return B;
}

/* B's entries against f (converted on B's grid). */
static int64_t check_sparse(ovl_bsmat B, ref_fn f, const void *ctx, double tol) {
  ovl_dmat D = NULL;
  int64_t bad = -1;
  T_OK(ovl_dmat_create(ovl_bsmat_grid(B), ovl_bsmat_n(B), ovl_bsmat_n(B), &D));
  if (D) {
    T_OK(ovl_bsmat_to_dense(B, D));
    bad = diff_ref(D, f, ctx, tol);
  }
  ovl_dmat_destroy(&D);
  return bad;
}

static void test_ops(int p, int q) {
  int bs[] = {2, 3, 1, 4, 2, 2, 5, 1, 3};
  tcase ca = tcase_make(9, bs, 3, 1, 21), cb = tcase_make(9, bs, 1, 1, 22);
  ovl_grid2d g = NULL;
  T_OK(ovl_grid2d_create(MPI_COMM_WORLD, p, q, OVL_GRID_ALLOW_IDLE, &g));
  ovl_bsmat A = make_sparse(g, &ca, 77, 0.0), B = make_sparse(g, &cb, 77, 0.0), C = NULL, E = NULL;
  T_OK(ovl_bsmat_create_like(A, &C));
  T_OK(ovl_bsmat_create_like(A, &E));
  if (!A || !B || !C || !E) return;
  int64_t n = ca.n;
  /* trace, Frobenius norm, dot, Gershgorin against sums over the generator */
  double tr = 0, nf = 0, dt = 0, lo = 0, hi = 0, rtr = 0, rnf = 0, rdt = 0, rlo = INFINITY, rhi = -INFINITY;
  for (int64_t i = 0; i < n; i++) {
    double rad = 0;
    for (int64_t j = 0; j < n; j++) {
      double a = tval(&ca, i, j);
      rnf += a * a, rdt += a * tval(&cb, i, j);
      if (i != j) rad += fabs(a);
    }
    rtr += tval(&ca, i, i);
    rlo = fmin(rlo, tval(&ca, i, i) - rad), rhi = fmax(rhi, tval(&ca, i, i) + rad);
  }
  T_OK(ovl_bsmat_trace(A, &tr));
  T_OK(ovl_bsmat_norm_fro(A, &nf));
  T_OK(ovl_bsmat_dot(A, B, &dt));
  T_OK(ovl_bsmat_gershgorin(A, &lo, &hi));
  T_CHECK(fabs(tr - rtr) <= 1e-13 * (1 + fabs(rtr)), "%dx%d: trace %.17g, expected %.17g", p, q, tr, rtr);
  T_CHECK(fabs(nf - sqrt(rnf)) <= 1e-13 * sqrt(rnf), "%dx%d: norm %.17g, expected %.17g", p, q, nf, sqrt(rnf));
  T_CHECK(fabs(dt - rdt) <= 1e-13 * (1 + fabs(rdt)), "%dx%d: dot %.17g, expected %.17g", p, q, dt, rdt);
  T_CHECK(fabs(lo - rlo) <= 1e-13 * (1 + fabs(rlo)) && fabs(hi - rhi) <= 1e-13 * (1 + fabs(rhi)),
          "%dx%d: Gershgorin [%g, %g], expected [%g, %g]", p, q, lo, hi, rlo, rhi);
  /* y = A x against the generator's sums; the spectrum's bounds against LAPACK's eigenvalues */
  double *x = malloc(sizeof(double) * (size_t)n), *y = malloc(sizeof(double) * (size_t)n),
         *ad = malloc(sizeof(double) * (size_t)(n * n)), *ev = malloc(sizeof(double) * (size_t)n);
  if (!x || !y || !ad || !ev) exit(2);
  for (int64_t i = 0; i < n; i++) x[i] = sin(1.0 + (double)i);
  T_OK(ovl_bsmat_matvec(A, x, y));
  double mverr = 0;
  for (int64_t i = 0; i < n; i++) {
    double r = 0;
    for (int64_t j = 0; j < n; j++) r += tval(&ca, i, j) * x[j], ad[i + j * n] = tval(&ca, i, j);
    mverr = fmax(mverr, fabs(y[i] - r) / (1 + fabs(r)));
  }
  T_CHECK(mverr <= 1e-13, "%dx%d: matvec off by %g", p, q, mverr);
  T_CHECK(LAPACKE_dsyev(LAPACK_COL_MAJOR, 'N', 'L', (lapack_int)n, ad, (lapack_int)n, ev) == 0, "dsyev");
  double blo = 0, bhi = 0, wid = ev[n - 1] - ev[0];
  T_OK(ovl_bsmat_bounds(A, &blo, &bhi));
  T_CHECK(blo <= ev[0] && bhi >= ev[n - 1] && blo >= ev[0] - 0.05 * wid && bhi <= ev[n - 1] + 0.05 * wid && blo >= lo &&
              bhi <= hi,
          "%dx%d: bounds [%g, %g], spectrum [%g, %g], Gershgorin [%g, %g]", p, q, blo, bhi, ev[0], ev[n - 1], lo, hi);
  T_ERR(ovl_bsmat_matvec(A, g_rank == 0 ? NULL : x, y), OVL_ERR_ARG); /* a NULL vector on one rank: agreed */
  T_ERR(ovl_bsmat_bounds(A, &blo, NULL), OVL_ERR_ARG);
  T_ERR(ovl_bsmat_matvec(NULL, x, y), OVL_ERR_ARG);
  free(x), free(y), free(ad), free(ev);
  /* copy, scale, shift, axpby (into a third matrix and onto an operand) */
  pair_ctx id = {&ca, NULL, 1.0, 0.0, 0.0};
  T_OK(ovl_bsmat_copy(C, A));
  T_CHECK(check_sparse(C, ref_comb, &id, 0.0) == 0, "%dx%d: copy", p, q);
  T_OK(ovl_bsmat_scale(C, -0.5));
  pair_ctx sc = {&ca, NULL, -0.5, 0.0, 0.0};
  T_CHECK(check_sparse(C, ref_comb, &sc, 0.0) == 0, "%dx%d: scale", p, q);
  T_OK(ovl_bsmat_copy(C, A));
  T_OK(ovl_bsmat_shift(C, 2.0, 0.25));
  pair_ctx sh = {&ca, NULL, 2.0, 0.0, 0.25};
  T_CHECK(check_sparse(C, ref_comb, &sh, 1e-15) == 0, "%dx%d: shift", p, q);
  T_OK(ovl_bsmat_shift(E, 1.0, 3.0)); /* every diagonal block absent: inserted */
  tcase zero = ca;
  zero.band = -1;
  pair_ctx e3 = {&zero, NULL, 1.0, 0.0, 3.0};
  T_CHECK(check_sparse(E, ref_comb, &e3, 0.0) == 0, "%dx%d: shift of an empty matrix", p, q);
  int64_t eb = 0;
  T_OK(ovl_bsmat_count(E, &eb, NULL, NULL));
  T_CHECK(eb == ca.nblk, "%dx%d: the shifted empty matrix holds %lld blocks, expected %d", p, q, (long long)eb,
          ca.nblk);
  T_OK(ovl_bsmat_axpby(0.5, A, -2.0, B, 0.0, C));
  pair_ctx ab = {&ca, &cb, 0.5, -2.0, 0.0};
  T_CHECK(check_sparse(C, ref_comb, &ab, 1e-15) == 0, "%dx%d: axpby", p, q);
  /* ||A - B|| without forming it, against the norm of axpby's A - B; swap exchanges the blocks */
  double dab = -1, nab = -2;
  T_OK(ovl_bsmat_dist_fro(A, B, &dab));
  T_OK(ovl_bsmat_axpby(1.0, A, -1.0, B, 0.0, E));
  T_OK(ovl_bsmat_norm_fro(E, &nab));
  T_CHECK(fabs(dab - nab) <= 1e-14 * nab && nab > 0, "%dx%d: dist_fro %.17g, ||A - B|| %.17g", p, q, dab, nab);
  T_OK(ovl_bsmat_dist_fro(A, A, &dab));
  T_CHECK(dab == 0.0, "%dx%d: dist_fro(A, A) = %g", p, q, dab);
  T_OK(ovl_bsmat_swap(C, E)); /* E: 0.5 A - 2 B, C: A - B */
  T_CHECK(check_sparse(E, ref_comb, &ab, 1e-15) == 0, "%dx%d: swap", p, q);
  T_OK(ovl_bsmat_swap(C, E));
  /* the work arrays go, the blocks stay, and the next rebuild of C needs none of them */
  T_OK(ovl_bsmat_release_work(C));
  T_CHECK(check_sparse(C, ref_comb, &ab, 1e-15) == 0, "%dx%d: blocks after release_work", p, q);
  pair_ctx amb = {&ca, &cb, 1.0, -1.0, 0.0};
  T_OK(ovl_bsmat_axpby(1.0, A, -1.0, B, 0.0, C));
  T_CHECK(check_sparse(C, ref_comb, &amb, 1e-15) == 0, "%dx%d: axpby after release_work", p, q);
  T_ERR(ovl_bsmat_release_work(NULL), OVL_ERR_ARG);
  T_OK(ovl_bsmat_copy(C, B));
  T_OK(ovl_bsmat_axpby(0.5, A, -2.0, C, 0.0, C)); /* C := 0.5 A - 2 C */
  T_CHECK(check_sparse(C, ref_comb, &ab, 1e-15) == 0, "%dx%d: axpby onto an operand", p, q);
  /* axpby that cancels: A - A drops every block at eps = 0 */
  int64_t nbk = -1;
  T_OK(ovl_bsmat_axpby(1.0, A, -1.0, A, 0.0, C));
  T_OK(ovl_bsmat_count(C, &nbk, NULL, NULL));
  T_CHECK(nbk == 0, "%dx%d: A - A holds %lld blocks", p, q, (long long)nbk);
  /* filter drops exactly the blocks under eps */
  double eps = 0.05;
  int64_t want = 0;
  for (int bi = 0; bi < ca.nblk; bi++)
    for (int bj = 0; bj < ca.nblk; bj++) want += tnorm(&ca, bi, bj) >= eps;
  T_OK(ovl_bsmat_copy(C, A));
  T_OK(ovl_bsmat_filter(C, eps));
  T_OK(ovl_bsmat_count(C, &nbk, NULL, NULL));
  T_CHECK(nbk == want, "%dx%d: filter kept %lld blocks, expected %lld", p, q, (long long)nbk, (long long)want);
  ovl_dmat Dc = NULL;
  T_OK(ovl_dmat_create(g, n, n, &Dc));
  if (Dc) {
    T_OK(ovl_bsmat_to_dense(C, Dc));
    T_CHECK(dense_diff(Dc, &ca, eps) == 0, "%dx%d: filtered values", p, q);
  }
  ovl_dmat_destroy(&Dc);
  /* refused: other layouts, bad thresholds */
  ovl_bsmat F = NULL;
  T_OK(ovl_bsmat_create(g, ca.nblk, ca.bs, 78, &F));
  T_ERR(ovl_bsmat_axpby(1.0, A, 1.0, F, 0.0, C), OVL_ERR_ARG);
  T_ERR(ovl_bsmat_dot(A, F, &dt), OVL_ERR_ARG);
  T_ERR(ovl_bsmat_copy(F, A), OVL_ERR_ARG);
  T_ERR(ovl_bsmat_filter(C, -1.0), OVL_ERR_ARG);
  T_ERR(ovl_bsmat_filter(C, NAN), OVL_ERR_ARG);
  T_ERR(ovl_bsmat_axpby(1.0, A, 1.0, B, NAN, C), OVL_ERR_ARG);
  T_ERR(ovl_bsmat_trace(NULL, &tr), OVL_ERR_ARG);
  T_ERR(ovl_bsmat_scale(A, NAN), OVL_ERR_ARG);
  ovl_dmat Dw = NULL;
  T_OK(ovl_dmat_create(g, n + 1, n + 1, &Dw));
  T_ERR(ovl_bsmat_to_dense(A, Dw), OVL_ERR_SIZE);
  T_ERR(ovl_bsmat_from_dense(Dw, 0.0, A), OVL_ERR_SIZE);
  ovl_dmat_destroy(&Dw);
  int bad_bs[] = {2, 0, 3};
  ovl_bsmat X = NULL;
  T_ERR(ovl_bsmat_create(g, 3, bad_bs, 0, &X), OVL_ERR_ARG);
  T_ERR(ovl_bsmat_create(g, 0, bad_bs, 0, &X), OVL_ERR_ARG);
  int diff_bs[] = {2, 1 + (g_rank > 0), 3};
  if (g_size > 1) T_ERR(ovl_bsmat_create(g, 3, diff_bs, 0, &X), OVL_ERR_ARG);
  T_ERR(ovl_bsmat_create(g, 3, diff_bs, (uint64_t)g_rank, &X), g_size > 1 ? OVL_ERR_ARG : OVL_OK);
  ovl_bsmat_destroy(&X);
  /* NULL handles and outputs: OVL_ERR_ARG, never a crash; accessors answer as an idle rank */
  T_ERR(ovl_bsmat_create(NULL, 3, bs, 0, &X), OVL_ERR_ARG);
  T_ERR(ovl_bsmat_create(g, 3, bs, 0, NULL), OVL_ERR_ARG);
  T_ERR(ovl_bsmat_create(g, 3, NULL, 0, &X), OVL_ERR_ARG);
  T_ERR(ovl_bsmat_create_like(NULL, &X), OVL_ERR_ARG);
  T_ERR(ovl_bsmat_count(NULL, NULL, NULL, NULL), OVL_ERR_ARG);
  T_ERR(ovl_bsmat_norm_fro(A, NULL), OVL_ERR_ARG);
  T_ERR(ovl_bsmat_gershgorin(A, &lo, NULL), OVL_ERR_ARG);
  T_ERR(ovl_bsmat_from_dense(NULL, 0.0, A), OVL_ERR_ARG);
  T_ERR(ovl_bsmat_to_dense(A, NULL), OVL_ERR_ARG);
  T_ERR(ovl_bsmat_read(g, NULL, 0, NULL, 0, 0.0, &X), OVL_ERR_ARG);
  T_ERR(ovl_bsmat_read(g, "x.bsr", 0, NULL, 0, -1.0, &X), OVL_ERR_ARG);
  T_ERR(ovl_bsmat_read(g, "x.mtx", 2, NULL, 0, 0.0, &X), OVL_ERR_ARG);
  T_ERR(ovl_bsmat_write(NULL, "x.bsr", 0), OVL_ERR_ARG);
  T_ERR(ovl_bsmat_write(A, "", 0), OVL_ERR_ARG);
  T_ERR(ovl_bsmat_destroy(NULL), OVL_OK);
  T_CHECK(ovl_bsmat_n(NULL) == -1 && ovl_bsmat_nblk(NULL) == -1 && ovl_bsmat_grid(NULL) == NULL &&
              ovl_bsmat_block_sizes(NULL) == NULL && ovl_bsmat_local_blocks(NULL) == -1 &&
              ovl_bsmat_local_values(NULL) == -1,
          "accessors of a NULL handle");
  T_CHECK(ovl_bsmat_n(A) == n && ovl_bsmat_nblk(A) == ca.nblk && ovl_bsmat_grid(A) == g &&
              memcmp(ovl_bsmat_block_sizes(A), bs, sizeof bs) == 0,
          "accessors");
  ovl_bsmat_destroy(&X);
  ovl_bsmat_destroy(&F);
  ovl_bsmat_destroy(&A);
  ovl_bsmat_destroy(&B);
  ovl_bsmat_destroy(&C);
  ovl_bsmat_destroy(&E);
  ovl_grid2d_destroy(&g);
  tcase_free(&ca);
  tcase_free(&cb);
}

/* ---- files ----------------------------------------------------------------------------------- */

static char g_dir[256];

static void path_of(char *buf, size_t n, const char *name) { snprintf(buf, n, "%s/%s", g_dir, name); }

/* Rank 0 writes text to dir/name; everyone waits. */
static void put(const char *name, const char *text) {
  char path[512];
  path_of(path, sizeof path, name);
  if (g_rank == 0) {
    FILE *f = fopen(path, "wb");
    if (f) fputs(text, f), fclose(f);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

static void put_bytes(const char *name, const void *data, size_t len) {
  char path[512];
  path_of(path, sizeof path, name);
  if (g_rank == 0) {
    FILE *f = fopen(path, "wb");
    if (f) fwrite(data, 1, len, f), fclose(f);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

/* Read dir/name and expect code, a message holding sub, the same on every rank. */
static void expect_read(ovl_grid2d g, const char *name, int nblk, const int *bs, ovl_err code, const char *sub) {
  char path[512];
  path_of(path, sizeof path, name);
  ovl_bsmat B = NULL;
  ovl_err rc = ovl_bsmat_read(g, path, nblk, bs, 5, 0.0, &B);
  const char *msg = ovl_errmsg();
  T_CHECK(rc == code, "%s: %s, expected %s (%s)", name, ovl_err_name(rc), ovl_err_name(code), msg);
  T_CHECK(code == OVL_OK || B == NULL, "%s: a handle on failure", name);
  if (code != OVL_OK) T_CHECK(strstr(msg, sub) != NULL, "%s: the message '%s' does not say '%s'", name, msg, sub);
  char m0[1024];
  snprintf(m0, sizeof m0, "%s", msg);
  MPI_Bcast(m0, sizeof m0, MPI_CHAR, 0, MPI_COMM_WORLD);
  T_CHECK(strcmp(m0, msg) == 0, "%s: rank %d says '%s', rank 0 '%s'", name, g_rank, msg, m0);
  if (getenv("OVL_TEST_BSMAT_VERBOSE") && g_rank == 0) printf("%s: %s: %s\n", name, ovl_err_name(rc), msg);
  ovl_bsmat_destroy(&B);
}

static long file_size(const char *name) {
  char path[512];
  struct stat st;
  path_of(path, sizeof path, name);
  return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

static void test_files_roundtrip(int p, int q) {
  int bs[] = {3, 1, 4, 1, 5, 2, 6};
  tcase cs = tcase_make(7, bs, 2, 1, 31), cg = tcase_make(7, bs, 3, 0, 32);
  ovl_grid2d g = NULL, g2 = NULL;
  T_OK(ovl_grid2d_create(MPI_COMM_WORLD, p, q, OVL_GRID_ALLOW_IDLE, &g));
  T_OK(ovl_grid2d_create(MPI_COMM_WORLD, 0, 0, 0, &g2));
  ovl_bsmat S = make_sparse(g, &cs, 3, 0.0), G = make_sparse(g, &cg, 4, 0.0);
  const char *names[] = {"g.mtx", "g.bsr", "s.mtx", "s.bsr", "sg.mtx", "sg.bsr"};
  for (int k = 0; k < 6; k++) {
    char path[512];
    path_of(path, sizeof path, names[k]);
    int sym = k == 2 || k == 3;
    const tcase *c = k < 2 ? &cg : &cs;
    T_OK(ovl_bsmat_write(k < 2 ? G : S, path, sym));
    /* read back on another grid with another permutation: the same matrix */
    ovl_bsmat R = NULL;
    T_OK(ovl_bsmat_read(g2, path, 0, NULL, 11, 0.0, &R));
    if (R) {
      ovl_dmat D = NULL;
      T_OK(ovl_dmat_create(g2, c->n, c->n, &D));
      T_OK(ovl_bsmat_to_dense(R, D));
      T_CHECK(dense_diff(D, c, 0.0) == 0, "%dx%d: %s read back differs", p, q, names[k]);
      int64_t b0 = 0, b1 = 0;
      T_OK(ovl_bsmat_count(R, &b1, NULL, NULL));
      T_OK(ovl_bsmat_count(k < 2 ? G : S, &b0, NULL, NULL));
      T_CHECK(b0 == b1, "%s: %lld blocks read, %lld written", names[k], (long long)b1, (long long)b0);
      ovl_dmat_destroy(&D);
    }
    ovl_bsmat_destroy(&R);
    /* with a threshold: the blocks >= eps */
    if (k >= 2) continue;
    T_OK(ovl_bsmat_read(g, path, 0, NULL, 0, 0.05, &R));
    if (R) {
      ovl_dmat D = NULL;
      T_OK(ovl_dmat_create(g2, c->n, c->n, &D));
      T_OK(ovl_bsmat_to_dense(R, D));
      T_CHECK(dense_diff(D, c, 0.05) == 0, "%dx%d: %s read with eps", p, q, names[k]);
      ovl_dmat_destroy(&D);
    }
    ovl_bsmat_destroy(&R);
  }
  /* the symmetric files hold about half */
  T_CHECK(file_size("s.bsr") < file_size("sg.bsr") && file_size("s.mtx") < file_size("sg.mtx"),
          "symmetric files are not smaller: %ld vs %ld, %ld vs %ld", file_size("s.bsr"), file_size("sg.bsr"),
          file_size("s.mtx"), file_size("sg.mtx"));
  /* the same matrix gives the same .bsr whatever the grid and permutation: its checksum */
  char pa[512], pb[512];
  path_of(pa, sizeof pa, "g.bsr.json");
  path_of(pb, sizeof pb, "g2.bsr");
  ovl_bsmat G2 = make_sparse(g2, &cg, 99, 0.0);
  T_OK(ovl_bsmat_write(G2, pb, 0));
  strcat(pb, ".json");
  if (g_rank == 0) {
    char ta[4096] = "", tb[4096] = "";
    FILE *fa = fopen(pa, "r"), *fb = fopen(pb, "r");
    if (fa) ta[fread(ta, 1, sizeof ta - 1, fa)] = 0, fclose(fa);
    if (fb) tb[fread(tb, 1, sizeof tb - 1, fb)] = 0, fclose(fb);
    T_CHECK(ta[0] && strcmp(ta, tb) == 0, "sidecars differ: %s vs %s", ta, tb);
  }
  ovl_bsmat_destroy(&G2);
  /* a non-symmetric matrix is not written as symmetric, and nothing is left behind */
  char pn[512];
  path_of(pn, sizeof pn, "ns.bsr");
  T_ERR(ovl_bsmat_write(G, pn, 1), OVL_ERR_NUMERIC);
  T_CHECK(file_size("ns.bsr") < 0 && file_size("ns.bsr.json") < 0, "files left after a refused write");
  path_of(pn, sizeof pn, "x.txt");
  T_ERR(ovl_bsmat_write(G, pn, 0), OVL_ERR_ARG);
  /* a .mtx without a sidecar: the caller's block sizes, or an error */
  if (g_rank == 0) {
    char a[512], b[512];
    path_of(a, sizeof a, "g.mtx");
    path_of(b, sizeof b, "nos.mtx");
    FILE *fi = fopen(a, "r"), *fo = fopen(b, "w");
    int ch;
    while (fi && fo && (ch = fgetc(fi)) != EOF) fputc(ch, fo);
    if (fi) fclose(fi);
    if (fo) fclose(fo);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  expect_read(g, "nos.mtx", 7, bs, OVL_OK, "");
  expect_read(g, "nos.mtx", 0, NULL, OVL_ERR_IO, "no sidecar");
  int wrong[] = {3, 3};
  expect_read(g, "nos.mtx", 2, wrong, OVL_ERR_FORMAT, "block sizes sum to 6");
  ovl_bsmat_destroy(&S);
  ovl_bsmat_destroy(&G);
  ovl_grid2d_destroy(&g);
  ovl_grid2d_destroy(&g2);
  tcase_free(&cs);
  tcase_free(&cg);
}

/* One .bsr record (little-endian host assumed by the test's writer). */
static size_t rec(unsigned char *buf, int64_t bi, int64_t bj, const double *v, int len) {
  memcpy(buf, &bi, 8);
  memcpy(buf + 8, &bj, 8);
  memcpy(buf + 16, v, sizeof(double) * (size_t)len);
  return 16 + 8 * (size_t)len;
}

static void test_bad_files(void) {
  ovl_grid2d g = NULL;
  T_OK(ovl_grid2d_create(MPI_COMM_WORLD, 0, 0, 0, &g));
  const char *ok_side = "{\"rows\": 4, \"cols\": 4, \"block_sizes\": [1, 2, 1]}";
  const char *ok_mtx = "%%MatrixMarket matrix coordinate real general\n4 4 2\n1 1 1.5\n3 2 -2\n";
  put("ok.mtx", ok_mtx);
  put("ok.mtx.json", ok_side);
  expect_read(g, "ok.mtx", 0, NULL, OVL_OK, "");
  /* sidecars */
  put("sum.mtx", ok_mtx);
  put("sum.mtx.json", "{\"rows\": 4, \"cols\": 4, \"block_sizes\": [1, 2, 2]}");
  expect_read(g, "sum.mtx", 0, NULL, OVL_ERR_FORMAT, "sum to 5");
  put("neg.mtx", ok_mtx);
  put("neg.mtx.json", "{\"rows\": 4, \"cols\": 4, \"block_sizes\": [3, -1, 2]}");
  expect_read(g, "neg.mtx", 0, NULL, OVL_ERR_FORMAT, "\"block_sizes\"[1] is -1");
  put("frac.mtx", ok_mtx);
  put("frac.mtx.json", "{\"rows\": 4, \"cols\": 4, \"block_sizes\": [1.5, 2.5]}");
  expect_read(g, "frac.mtx", 0, NULL, OVL_ERR_FORMAT, "\"block_sizes\"[0] is 1.5");
  put("miss.mtx", ok_mtx);
  put("miss.mtx.json", "{\"rows\": 4, \"cols\": 4}");
  expect_read(g, "miss.mtx", 0, NULL, OVL_ERR_FORMAT, "block_sizes");
  put("rect.mtx", ok_mtx);
  put("rect.mtx.json", "{\"rows\": 4, \"cols\": 5, \"block_sizes\": [4]}");
  expect_read(g, "rect.mtx", 0, NULL, OVL_ERR_FORMAT, "square");
  put("key.mtx", ok_mtx);
  put("key.mtx.json", "{\"rows\": 4, \"cols\": 4, \"block_sizes\": [4], \"bs\": 1}");
  expect_read(g, "key.mtx", 0, NULL, OVL_ERR_FORMAT, "unknown key \"bs\"");
  put("json.mtx", ok_mtx);
  put("json.mtx.json", "{\"rows\": 4, \"cols\": 4, \"block_sizes\": [4]");
  expect_read(g, "json.mtx", 0, NULL, OVL_ERR_FORMAT, "not valid JSON");
  /* Matrix Market entries */
  const char *bodies[][3] = {
      {"range.mtx", "%%MatrixMarket matrix coordinate real general\n4 4 2\n1 1 1.5\n5 2 -2\n", "outside"},
      {"zero.mtx", "%%MatrixMarket matrix coordinate real general\n4 4 1\n0 1 1.5\n", "outside"},
      {"rep.mtx", "%%MatrixMarket matrix coordinate real general\n4 4 3\n1 1 1.5\n3 2 -2\n1 1 7\n", "repeats line 3"},
      {"nan.mtx", "%%MatrixMarket matrix coordinate real general\n4 4 2\n1 1 nan\n3 2 -2\n", "line 3"},
      {"inf.mtx", "%%MatrixMarket matrix coordinate real general\n4 4 1\n1 1 -inf\n", "is -inf"},
      {"short.mtx", "%%MatrixMarket matrix coordinate real general\n4 4 3\n1 1 1.5\n3 2 -2\n", "ends after 2"},
      {"long.mtx", "%%MatrixMarket matrix coordinate real general\n4 4 1\n1 1 1.5\n3 2 -2\n", "more entries"},
      {"size.mtx", "%%MatrixMarket matrix coordinate real general\n5 5 1\n1 1 1.5\n", "sum to 4"},
      {"upper.mtx", "%%MatrixMarket matrix coordinate real symmetric\n4 4 1\n1 2 1.5\n", "above the diagonal"},
      {"symrep.mtx", "%%MatrixMarket matrix coordinate real symmetric\n4 4 2\n2 1 1.5\n2 1 1.5\n", "repeats line"},
      {"word.mtx", "%%MatrixMarket matrix coordinate real general\n4 4 1\n1 1 x\n", "not a number"},
      {"head.mtx", "%%MatrixMarket matrix\n4 4 1\n1 1 1\n", "not a Matrix Market header"},
  };
  for (size_t k = 0; k < sizeof bodies / sizeof bodies[0]; k++) {
    char side[64];
    put(bodies[k][0], bodies[k][1]);
    snprintf(side, sizeof side, "%s.json", bodies[k][0]);
    put(side, ok_side);
    expect_read(g, bodies[k][0], 0, NULL, OVL_ERR_FORMAT, bodies[k][2]);
  }
  put("arr.mtx", "%%MatrixMarket matrix array real general\n4 4\n1\n");
  put("arr.mtx.json", ok_side);
  expect_read(g, "arr.mtx", 0, NULL, OVL_ERR_UNSUPPORTED, "coordinate");
  expect_read(g, "absent.mtx", 3, (int[]){1, 2, 1}, OVL_ERR_IO, "absent.mtx");
  expect_read(g, "ok.txt", 0, NULL, OVL_ERR_ARG, ".mtx");
  /* raw blocks */
  unsigned char buf[1024];
  double v1[1] = {2.0}, v4[4] = {1, 2, 3, 4}, vn[1] = {NAN};
  size_t len = rec(buf, 0, 0, v1, 1);
  len += rec(buf + len, 1, 1, v4, 4);
  const char *bside = "{\"format\": \"ovl-bsr\", \"rows\": 4, \"cols\": 4, \"block_sizes\": [1, 2, 1], \"blocks\": 2, "
                      "\"symmetric\": false}";
  put_bytes("ok.bsr", buf, len);
  put("ok.bsr.json", bside);
  expect_read(g, "ok.bsr", 0, NULL, OVL_OK, "");
  put_bytes("trunc.bsr", buf, len - 8);
  put("trunc.bsr.json", bside);
  expect_read(g, "trunc.bsr", 0, NULL, OVL_ERR_FORMAT, "truncated");
  put_bytes("trail.bsr", buf, len + 8);
  put("trail.bsr.json", bside);
  expect_read(g, "trail.bsr", 0, NULL, OVL_ERR_FORMAT, "trailing");
  put_bytes("sum.bsr", buf, len);
  put("sum.bsr.json", "{\"format\": \"ovl-bsr\", \"rows\": 4, \"cols\": 4, \"block_sizes\": [1, 2, 1], \"blocks\": 2, "
                      "\"symmetric\": false, \"checksum\": \"0123456789abcdef\"}");
  expect_read(g, "sum.bsr", 0, NULL, OVL_ERR_FORMAT, "checksum");
  put_bytes("fmt.bsr", buf, len);
  put("fmt.bsr.json", "{\"format\": \"csr\", \"rows\": 4, \"cols\": 4, \"block_sizes\": [1, 2, 1], \"blocks\": 2, "
                      "\"symmetric\": false}");
  expect_read(g, "fmt.bsr", 0, NULL, OVL_ERR_FORMAT, "\"ovl-bsr\"");
  put_bytes("nokey.bsr", buf, len);
  put("nokey.bsr.json", "{\"format\": \"ovl-bsr\", \"rows\": 4, \"cols\": 4, \"block_sizes\": [1, 2, 1], "
                        "\"symmetric\": false}");
  expect_read(g, "nokey.bsr", 0, NULL, OVL_ERR_FORMAT, "blocks");
  size_t l2 = rec(buf, 1, 1, v4, 4);
  l2 += rec(buf + l2, 0, 0, v1, 1);
  put_bytes("order.bsr", buf, l2);
  put("order.bsr.json", bside);
  expect_read(g, "order.bsr", 0, NULL, OVL_ERR_FORMAT, "comes after");
  l2 = rec(buf, 0, 0, v1, 1);
  l2 += rec(buf + l2, 0, 0, v1, 1);
  put_bytes("rep.bsr", buf, l2);
  put("rep.bsr.json", bside);
  expect_read(g, "rep.bsr", 0, NULL, OVL_ERR_FORMAT, "repeats");
  l2 = rec(buf, 0, 0, v1, 1);
  l2 += rec(buf + l2, 0, 3, v1, 1);
  put_bytes("range.bsr", buf, l2);
  put("range.bsr.json", bside);
  expect_read(g, "range.bsr", 0, NULL, OVL_ERR_FORMAT, "outside");
  l2 = rec(buf, 0, 0, v1, 1);
  l2 += rec(buf + l2, 2, 2, vn, 1);
  put_bytes("nan.bsr", buf, l2);
  put("nan.bsr.json", bside);
  expect_read(g, "nan.bsr", 0, NULL, OVL_ERR_FORMAT, "nan");
  l2 = rec(buf, 0, 2, v1, 1);
  put_bytes("upper.bsr", buf, l2);
  put("upper.bsr.json", "{\"format\": \"ovl-bsr\", \"rows\": 4, \"cols\": 4, \"block_sizes\": [1, 2, 1], \"blocks\": "
                        "1, \"symmetric\": true}");
  expect_read(g, "upper.bsr", 0, NULL, OVL_ERR_FORMAT, "above the diagonal");
  /* memory bombs: refused before anything of the claimed size is allocated */
  put("bomb.mtx", "%%MatrixMarket matrix coordinate real general\n2000000000 2000000000 1\n1 1 1.0\n");
  put("bomb.mtx.json", "{\"rows\": 2000000000, \"cols\": 2000000000, \"block_sizes\": [1000000000, 1000000000]}");
  expect_read(g, "bomb.mtx", 0, NULL, OVL_ERR_NOMEM, "bomb.mtx");
  put("many.mtx", "%%MatrixMarket matrix coordinate real general\n4 4 1000000000000000\n1 1 1.0\n");
  put("many.mtx.json", ok_side);
  expect_read(g, "many.mtx", 0, NULL, OVL_ERR_NOMEM, "many.mtx");
  put_bytes("bomb.bsr", buf, rec(buf, 0, 0, v1, 1));
  put("bomb.bsr.json", "{\"format\": \"ovl-bsr\", \"rows\": 2000000000, \"cols\": 2000000000, \"block_sizes\": "
                       "[1000000000, 1000000000], \"blocks\": 1000000000000, \"symmetric\": false}");
  expect_read(g, "bomb.bsr", 0, NULL, OVL_ERR_FORMAT, "too few");
  ovl_grid2d_destroy(&g);
}

/* ---- the permutation balances a banded pattern ----------------------------------------------- */

static void test_balance(int p, int q) {
  /* water-like blocks: one of 4 functions, two of 1, in file order; a band of 3 blocks */
  enum { NB = 360 };
  int bs[NB];
  for (int b = 0; b < NB; b++) bs[b] = b % 3 == 0 ? 4 : 1;
  tcase c = tcase_make(NB, bs, 3, 1, 41);
  ovl_grid2d g = NULL;
  T_OK(ovl_grid2d_create(MPI_COMM_WORLD, p, q, OVL_GRID_ALLOW_IDLE, &g));
  double rb[2] = {0, 0}, rv[2] = {0, 0}; /* largest share / mean: blocks, values; file order, permuted */
  for (int s = 0; s < 2; s++) {
    ovl_bsmat B = make_sparse(g, &c, s ? 2024 : 0, 0.0);
    if (!B) continue;
    int64_t tot[2] = {0, 0}, mine[2] = {0, 0}, mx[2] = {0, 0};
    if (ovl_grid2d_active(g)) mine[0] = ovl_bsmat_local_blocks(B), mine[1] = ovl_bsmat_local_values(B);
    T_OK(ovl_bsmat_count(B, &tot[0], &tot[1], NULL));
    MPI_Allreduce(mine, mx, 2, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
    rb[s] = (double)mx[0] / ((double)tot[0] / (p * q));
    rv[s] = (double)mx[1] / ((double)tot[1] / (p * q));
    T_CHECK(tot[0] == NB + 2 * (NB - 1) + 2 * (NB - 2) + 2 * (NB - 3), "banded pattern: %lld blocks",
            (long long)tot[0]);
    ovl_bsmat_destroy(&B);
  }
  /* blocks within 10 % of the mean; values (blocks of 16, 4 and 1 values) within 30 % */
  T_CHECK(rb[1] <= 1.1 && rv[1] <= 1.3,
          "%dx%d: the seeded permutation's largest share is %.3f of the mean blocks, %.3f of the mean values", p, q,
          rb[1], rv[1]);
  if (p == 3 || q == 3) /* file order puts every 4-function block row on one process row */
    T_CHECK(rv[0] >= 1.5 && rv[1] < rv[0], "%dx%d: file order's largest share of values is only %.3f", p, q, rv[0]);
  if (g_rank == 0 && getenv("OVL_TEST_BSMAT_VERBOSE"))
    printf("balance %dx%d: largest share / mean: blocks %.3f in file order, %.3f permuted; values %.3f, %.3f\n", p, q,
           rb[0], rb[1], rv[0], rv[1]);
  ovl_grid2d_destroy(&g);
  tcase_free(&c);
}

static void rm_dir(void) {
  if (g_rank != 0) return;
  char cmd[512];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
  if (system(cmd) != 0) fprintf(stderr, "cannot remove %s\n", g_dir);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  long pid = (long)getpid();
  MPI_Bcast(&pid, 1, MPI_LONG, 0, MPI_COMM_WORLD);
  snprintf(g_dir, sizeof g_dir, "/tmp/ovl_test_bsmat_%ld", pid);
  if (g_rank == 0) mkdir(g_dir, 0700);
  MPI_Barrier(MPI_COMM_WORLD);
  T_OK(ovl_grid2d_create(MPI_COMM_WORLD, 0, 0, 0, &g_auto));
  double t[6] = {MPI_Wtime(), 0, 0, 0, 0, 0};
  test_conversion();
  test_regroup();
  t[1] = MPI_Wtime();
  int pq[16][2], ns = shapes(g_size, pq);
  for (int s = 0; s < ns; s++) test_ops(pq[s][0], pq[s][1]);
  t[2] = MPI_Wtime();
  /* the files (each write syncs to disk) on the last shape: 1 x 1, 1 x 2, 3 x 1 (an idle rank), 1 x 8 */
  for (int s = 0; s < ns; s++)
    if (s == ns - 1) test_files_roundtrip(pq[s][0], pq[s][1]);
  t[3] = MPI_Wtime();
  for (int s = 0; s < ns; s++) /* the grids of 4 processes or more, and 3 x 1 */
    if (pq[s][0] * pq[s][1] >= 3) test_balance(pq[s][0], pq[s][1]);
  t[4] = MPI_Wtime();
  test_bad_files();
  t[5] = MPI_Wtime();
  if (g_rank == 0 && getenv("OVL_TEST_BSMAT_VERBOSE"))
    printf("seconds: conversion %.2f, operations %.2f, files %.2f, balance %.2f, bad files %.2f\n", t[1] - t[0],
           t[2] - t[1], t[3] - t[2], t[4] - t[3], t[5] - t[4]);
  MPI_Barrier(MPI_COMM_WORLD);
  ovl_grid2d_destroy(&g_auto);
  rm_dir();
  int rc = t_finish("test_bsmat");
  MPI_Finalize();
  return rc;
}
