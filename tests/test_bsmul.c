/* The filtered block-sparse product (ovl_bsmat_multiply) against a dense
 * product: random banded matrices with uneven blocks (1 to 9 wide) on every
 * grid shape of the ranks (1x1 with the others idle too), N_DUP 1 to 3,
 * seeds 0 and not 0; eps = 0 must give the dense product within 1e-12, eps >
 * 0 every kept block within eps of the exact one and every dropped block
 * below 2 eps (the rule of docs/guides/sparse.md); the counts of products
 * and skipped products against an independent count; empty matrices, a
 * block row and a block column with no blocks, a C that held blocks before,
 * and bad arguments with the same error and message on every rank.
 *
 * Timing mode (not run by ctest): test_bsmul --time n band [eps] builds a
 * banded n x n matrix of atom-like blocks (4, 1, 1, ...) with `band` blocks
 * each side of the diagonal, decaying by 10^-|I-J|/4, and times one product
 * A A on the grid of the ranks (the best of 3: the slowest rank's wall
 * time and CPU time). It builds the blocks in place (the room's
 * internal helpers), since a dense n x n would not fit. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bstest.h"
#include "ovl/ovl.h"
#include "ovltest.h"
#include "sparse/sparse_impl.h"

static int g_rank, g_size;

static double block_norm(const double *a, int64_t n, const tmat *t, int bi, int bj) {
  double s = 0;
  for (int64_t j = t->boff[bj]; j < t->boff[bj + 1]; j++)
    for (int64_t i = t->boff[bi]; i < t->boff[bi + 1]; i++) s += a[i + j * n] * a[i + j * n];
  return sqrt(s);
}

static double block_diff(const double *a, const double *b, int64_t n, const tmat *t, int bi, int bj) {
  double s = 0;
  for (int64_t j = t->boff[bj]; j < t->boff[bj + 1]; j++)
    for (int64_t i = t->boff[bi]; i < t->boff[bi + 1]; i++)
      s += (a[i + j * n] - b[i + j * n]) * (a[i + j * n] - b[i + j * n]);
  return sqrt(s);
}

/* The block products a product of A and B has: (I, K, J) with A_IK and B_KJ
 * not zero. */
static int64_t count_products(const tmat *A, const tmat *B) {
  int nb = A->nblk;
  char *za = calloc((size_t)nb * nb, 1), *zb = calloc((size_t)nb * nb, 1);
  for (int bi = 0; bi < nb; bi++)
    for (int bj = 0; bj < nb; bj++)
      za[bi * nb + bj] = block_norm(A->a, A->n, A, bi, bj) > 0,
                   zb[bi * nb + bj] = block_norm(B->a, B->n, B, bi, bj) > 0;
  int64_t c = 0;
  for (int bi = 0; bi < nb; bi++)
    for (int bk = 0; bk < nb; bk++)
      if (za[bi * nb + bk])
        for (int bj = 0; bj < nb; bj++) c += zb[bk * nb + bj];
  free(za), free(zb);
  return c;
}

/* C = A B on grid g for the given N_DUP and eps, checked against E = A B. */
static int64_t check_product(ovl_grid2d g, const char *what, ovl_bsmat bA, ovl_bsmat bB, ovl_bsmat bC, const tmat *tA,
                             const double *E, int64_t nprod, int ndup, double eps) {
  int64_t n = tA->n;
  ovl_bsmul_stats st;
  memset(&st, 0xff, sizeof st);
  T_OK(ovl_bsmat_multiply(bA, bB, eps, ndup, bC, &st));
  int64_t cnt[2] = {st.products, st.skipped};
  MPI_Allreduce(MPI_IN_PLACE, cnt, 2, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  T_CHECK(cnt[0] + cnt[1] == nprod, "%s ndup %d eps %g: %lld products + %lld skipped, expected %lld in all", what, ndup,
          eps, (long long)cnt[0], (long long)cnt[1], (long long)nprod);
  if (eps == 0) T_CHECK(cnt[1] == 0, "%s ndup %d eps 0: %lld products skipped", what, ndup, (long long)cnt[1]);
  T_CHECK(st.t_comm >= 0 && st.t_comp >= 0 && st.bytes_sent >= 0, "%s: stats not filled", what);
  ovl_dmat D = NULL;
  T_OK(ovl_dmat_create(g, n, n, &D));
  T_OK(ovl_bsmat_to_dense(bC, D));
  double *c = g_rank == 0 ? calloc((size_t)(n * n + 1), sizeof(double)) : NULL;
  T_OK(ovl_dmat_gather(D, c));
  ovl_dmat_destroy(&D);
  if (g_rank != 0) return cnt[1];
  double en = 0, dn = 0;
  for (int64_t x = 0; x < n * n; x++) en += E[x] * E[x], dn += (c[x] - E[x]) * (c[x] - E[x]);
  en = sqrt(en), dn = sqrt(dn);
  if (eps == 0) {
    T_CHECK(dn <= 1e-12 * en, "%s ndup %d eps 0: ||C - AB|| / ||AB|| = %.3e", what, ndup, en > 0 ? dn / en : dn);
  } else {
    double worst_kept = 0, worst_drop = 0, small_kept = INFINITY, tol = 1e-13 * en;
    int64_t kept = 0, blocks = 0;
    for (int bi = 0; bi < tA->nblk; bi++)
      for (int bj = 0; bj < tA->nblk; bj++) {
        double cn = block_norm(c, n, tA, bi, bj), d = block_diff(c, E, n, tA, bi, bj);
        blocks++;
        if (cn > 0) {
          kept++;
          if (d > worst_kept) worst_kept = d;
          if (cn < small_kept) small_kept = cn;
        } else if (d > worst_drop) worst_drop = d;
      }
    T_CHECK(worst_kept <= eps + tol, "%s ndup %d eps %g: a kept block is off by %.3e (> eps)", what, ndup, eps,
            worst_kept);
    T_CHECK(worst_drop < 2 * eps + tol, "%s ndup %d eps %g: a dropped block has norm %.3e (>= 2 eps)", what, ndup, eps,
            worst_drop);
    T_CHECK(kept == 0 || small_kept >= eps, "%s ndup %d eps %g: a kept block has norm %.3e < eps", what, ndup, eps,
            small_kept);
    T_CHECK(dn <= 2 * eps * sqrt((double)blocks) + tol, "%s ndup %d eps %g: ||C - AB|| = %.3e over the bound", what,
            ndup, eps, dn);
  }
  free(c);
  return cnt[1];
}

/* The grid shapes of the ranks: 1x1 (others idle), then every p x q with p q = P among 2x1, 1x2, 2x2, 4x1, 1x4,
 * 2x4, 4x2, 8x1, 1x8 */
static int grid_shapes(int P, int shapes[][2]) {
  int k = 0;
  shapes[k][0] = 1, shapes[k][1] = 1, k++;
  for (int p = 1; p <= P; p++)
    if (P % p == 0 && P > 1) shapes[k][0] = p, shapes[k][1] = P / p, k++;
  return k;
}

static void test_products(void) {
  enum { NB = 41 };
  int bs[NB];
  for (int b = 0; b < NB; b++) bs[b] = b % 13 == 5 ? 9 : 1 + (int)(t_mix((uint64_t)b) % 5);
  tmat tA, tB;
  tmat_make(&tA, NB, bs, 4, 0.3, 7, -1, 1);   /* block row 7 of A empty */
  tmat_make(&tB, NB, bs, 3, 0.25, -1, 11, 2); /* block column 11 of B empty */
  int64_t n = tA.n, nprod = count_products(&tA, &tB);
  double *E = malloc(sizeof(double) * (size_t)(n * n));
  for (int64_t j = 0; j < n; j++) /* the reference: a plain triple loop */
    for (int64_t i = 0; i < n; i++) {
      double s = 0;
      for (int64_t l = 0; l < n; l++) s += tA.a[i + l * n] * tB.a[l + j * n];
      E[i + j * n] = s;
    }
  double emax = 0;
  for (int64_t x = 0; x < n * n; x++) emax = fmax(emax, fabs(E[x]));
  int shapes[16][2], ns = grid_shapes(g_size, shapes);
  for (int sh = 0; sh < ns; sh++) {
    int p = shapes[sh][0], q = shapes[sh][1];
    if (p * q == 8 && (p == 1 || q == 1)) continue; /* 1 x 8 and 8 x 1: in test_empty only (the suite's time) */
    ovl_grid2d g = NULL;
    T_OK(ovl_grid2d_create(MPI_COMM_WORLD, p, q, OVL_GRID_ALLOW_IDLE, &g));
    for (uint64_t seed = 0; seed < 2; seed++) {
      if (seed == 1 && p * q == 1) continue;
      ovl_bsmat bA = NULL, bB = NULL, bC = NULL;
      T_OK(to_bsmat(g, &tA, seed * 77, &bA));
      T_OK(to_bsmat(g, &tB, seed * 77, &bB));
      T_OK(ovl_bsmat_create_like(bA, &bC));
      char what[64];
      snprintf(what, sizeof what, "grid %dx%d seed %llu", p, q, (unsigned long long)seed);
      for (int ndup = seed ? 2 : 1; ndup <= (seed ? 2 : 3); ndup++) { /* the permuted layout: N_DUP 2 only */
        check_product(g, what, bA, bB, bC, &tA, E, nprod, ndup, 0);
        /* eps around the size of the small blocks of C */
        check_product(g, what, bA, bB, bC, &tA, E, nprod, ndup, 1e-3 * emax);
        if (ndup == 2) {
          int64_t skipped = check_product(g, what, bA, bB, bC, &tA, E, nprod, ndup, 0.05 * emax);
          T_CHECK(skipped > 0, "%s: eps = 0.05 max |AB| skipped no product (the test does not reach the rule)", what);
        }
      }
      ovl_bsmat_destroy(&bA), ovl_bsmat_destroy(&bB), ovl_bsmat_destroy(&bC);
    }
    ovl_grid2d_destroy(&g);
  }
  free(E);
  tmat_free(&tA), tmat_free(&tB);
}

/* On a p x q grid of all ranks (idle ones allowed): A from t (permutation
 * seed) and two matrices of its layout for results. */
static void on_grid(int p, int q, const tmat *t, uint64_t seed, ovl_grid2d *g, ovl_bsmat *A, ovl_bsmat *C1,
                    ovl_bsmat *C2) {
  *g = NULL, *A = *C1 = *C2 = NULL;
  T_OK(ovl_grid2d_create(MPI_COMM_WORLD, p, q, OVL_GRID_ALLOW_IDLE, g));
  T_OK(to_bsmat(*g, t, seed, A));
  T_OK(ovl_bsmat_create_like(*A, C1));
  T_OK(ovl_bsmat_create_like(*A, C2));
}

/* Symmetric results (ovl_bsmat_set_symmetric): A A for a symmetric A, with
 * and without a threshold, against the full product; C exactly symmetric,
 * with about half the block products; the setting agreed between ranks. */
static void test_symmetric(void) {
  enum { NB = 23 };
  int bs[NB];
  for (int b = 0; b < NB; b++) bs[b] = 1 + (int)(t_mix((uint64_t)b + 11) % 9);
  tmat tA;
  tmat_make(&tA, NB, bs, 6, 0.5, -1, -1, 13);
  const int64_t n = tA.n;
  for (int64_t j = 0; j < n; j++) /* A := (A + A^T) / 2 */
    for (int64_t i = j + 1; i < n; i++) tA.a[i + j * n] = tA.a[j + i * n] = 0.5 * (tA.a[i + j * n] + tA.a[j + i * n]);
  int shapes[16][2], ns = grid_shapes(g_size, shapes);
  for (int sh = 0; sh < ns; sh++) {
    int p = shapes[sh][0], q = shapes[sh][1];
    ovl_grid2d g = NULL;
    ovl_bsmat A = NULL, Cf = NULL, Cs = NULL;
    on_grid(p, q, &tA, 5, &g, &A, &Cf, &Cs);
    T_CHECK(ovl_bsmat_get_symmetric(Cs) == 0, "a new matrix is set symmetric");
    T_OK(ovl_bsmat_set_symmetric(Cs, 1));
    T_CHECK(ovl_bsmat_get_symmetric(Cs) == 1, "the symmetry was not set");
    double nf = 0;
    T_OK(ovl_bsmat_multiply(A, A, 0.0, 2, Cf, NULL));
    T_OK(ovl_bsmat_norm_fro(Cf, &nf));
    for (int e = 0; e < 3; e++) {
      const double eps = e == 0 ? 0.0 : e == 1 ? 1e-6 * nf : 1e-3 * nf;
      ovl_bsmul_stats sf, ss;
      T_OK(ovl_bsmat_multiply(A, A, eps, 2, Cf, &sf));
      T_OK(ovl_bsmat_multiply(A, A, eps, 2, Cs, &ss));
      int64_t cnt[2] = {sf.products, ss.products};
      MPI_Allreduce(MPI_IN_PLACE, cnt, 2, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
      double d = 0;
      T_OK(ovl_bsmat_dist_fro(Cs, Cf, &d));
      /* eps: every block within the skipping's bound (2 eps at most per dropped block) of the full product's */
      T_CHECK(d <= (eps > 0 ? 4.0 * eps * NB : 1e-13 * nf), "grid %dx%d eps %g: symmetric product %.3e off", p, q, eps,
              d);
      T_CHECK(cnt[1] < cnt[0] && 2 * cnt[1] >= cnt[0] - NB * 6, "grid %dx%d eps %g: %lld block products, full %lld", p,
              q, eps, (long long)cnt[1], (long long)cnt[0]);
      ovl_dmat D = NULL;
      T_OK(ovl_dmat_create(g, n, n, &D));
      T_OK(ovl_bsmat_to_dense(Cs, D));
      double *c = g_rank == 0 ? calloc((size_t)(n * n + 1), sizeof(double)) : NULL;
      T_OK(ovl_dmat_gather(D, c));
      ovl_dmat_destroy(&D);
      if (g_rank == 0) {
        double asym = 0;
        for (int64_t j = 0; j < n; j++)
          for (int64_t i = 0; i < n; i++) asym = fmax(asym, fabs(c[i + j * n] - c[j + i * n]));
        T_CHECK(asym == 0.0, "grid %dx%d eps %g: C not symmetric (%.3e)", p, q, eps, asym);
      }
      free(c);
    }
    if (g_size > 1) {
      T_OK(ovl_bsmat_set_symmetric(Cs, g_rank == 0));
      T_ERR_SAME(ovl_bsmat_multiply(A, A, 0.0, 2, Cs, NULL), OVL_ERR_ARG);
    }
    T_ERR(ovl_bsmat_set_symmetric(Cs, 2), OVL_ERR_ARG);
    T_ERR(ovl_bsmat_set_symmetric(NULL, 1), OVL_ERR_ARG);
    ovl_bsmat_destroy(&A), ovl_bsmat_destroy(&Cf), ovl_bsmat_destroy(&Cs);
    ovl_grid2d_destroy(&g);
  }
  tmat_free(&tA);
}

/* Float32 arithmetic (ovl_bsmat_set_arith on C): blocks of 8 to 20 rows, so
 * that the block products run as sgemm; the result within float32's
 * rounding of the float64 product's, and not equal to it (the float32 path
 * ran); a mixed setting between ranks refused alike; float64 again the
 * float64 product (to the rounding of the panels' arrival order). */
static void test_float32(void) {
  enum { NB = 14 };
  int bs[NB];
  for (int b = 0; b < NB; b++) bs[b] = 8 + (int)(t_mix((uint64_t)b + 3) % 13);
  tmat tA;
  tmat_make(&tA, NB, bs, 5, 0.4, -1, -1, 5);
  int shapes[16][2], ns = grid_shapes(g_size, shapes);
  for (int sh = 0; sh < ns; sh++) {
    int p = shapes[sh][0], q = shapes[sh][1];
    ovl_grid2d g = NULL;
    ovl_bsmat A = NULL, C64 = NULL, C32 = NULL;
    on_grid(p, q, &tA, 9, &g, &A, &C64, &C32);
    T_CHECK(ovl_bsmat_get_arith(C32) == OVL_BSMAT_FLOAT64, "a new matrix's arithmetic is not float64");
    T_OK(ovl_bsmat_set_arith(C32, OVL_BSMAT_FLOAT32));
    T_CHECK(ovl_bsmat_get_arith(C32) == OVL_BSMAT_FLOAT32, "the arithmetic was not set");
    for (int rep = 0; rep < 2; rep++) { /* the second product reuses the kept float arrays */
      T_OK(ovl_bsmat_multiply(A, A, 0.0, 2, C64, NULL));
      T_OK(ovl_bsmat_multiply(A, A, 0.0, 2, C32, NULL));
      double d = 0, n64 = 0;
      T_OK(ovl_bsmat_dist_fro(C32, C64, &d));
      T_OK(ovl_bsmat_norm_fro(C64, &n64));
      T_CHECK(d <= 1e-5 * n64 && d > 0.0, "grid %dx%d: float32 product %.3e from float64's (norm %.3e)", p, q, d, n64);
    }
    if (g_size > 1) {
      T_OK(ovl_bsmat_set_arith(C32, g_rank == 0 ? OVL_BSMAT_FLOAT32 : OVL_BSMAT_FLOAT64));
      T_ERR_SAME(ovl_bsmat_multiply(A, A, 0.0, 2, C32, NULL), OVL_ERR_ARG);
    }
    T_OK(ovl_bsmat_set_arith(C32, OVL_BSMAT_FLOAT64));
    T_OK(ovl_bsmat_multiply(A, A, 0.0, 2, C32, NULL));
    double d = 1, n64 = 0;
    T_OK(ovl_bsmat_norm_fro(C64, &n64));
    T_OK(ovl_bsmat_dist_fro(C32, C64, &d));
    T_CHECK(d <= 1e-13 * n64, "grid %dx%d: float64 products differ by %.3e", p, q, d);
    T_ERR(ovl_bsmat_set_arith(C32, (ovl_bsmat_arith)7), OVL_ERR_ARG);
    T_ERR(ovl_bsmat_set_arith(NULL, OVL_BSMAT_FLOAT32), OVL_ERR_ARG);
    ovl_bsmat_destroy(&A), ovl_bsmat_destroy(&C64), ovl_bsmat_destroy(&C32);
    ovl_grid2d_destroy(&g);
  }
  tmat_free(&tA);
}

/* Empty operands: C (which held blocks) ends empty. */
static void test_empty(void) {
  enum { NB = 9 };
  int bs[NB] = {3, 1, 2, 5, 1, 1, 4, 2, 3};
  tmat tA, tZ;
  tmat_make(&tA, NB, bs, 2, 0.5, -1, -1, 3);
  tmat_make(&tZ, NB, bs, -1, 0.5, -1, -1, 4); /* band -1: no blocks */
  int shapes[16][2], ns = grid_shapes(g_size, shapes);
  for (int sh = 0; sh < ns; sh++) {
    ovl_grid2d g = NULL;
    T_OK(ovl_grid2d_create(MPI_COMM_WORLD, shapes[sh][0], shapes[sh][1], OVL_GRID_ALLOW_IDLE, &g));
    ovl_bsmat bA = NULL, bZ = NULL, bC = NULL;
    T_OK(to_bsmat(g, &tA, 5, &bA));
    T_OK(to_bsmat(g, &tZ, 5, &bZ));
    T_OK(ovl_bsmat_create_like(bA, &bC));
    for (int ndup = 1; ndup <= 2; ndup++) {
      int64_t blocks = -1, values = -1;
      double fill = -1;
      T_OK(ovl_bsmat_multiply(bA, bA, 0, ndup, bC, NULL));
      T_OK(ovl_bsmat_count(bC, &blocks, &values, &fill));
      T_CHECK(blocks > 0, "grid %dx%d: A A has no blocks", shapes[sh][0], shapes[sh][1]);
      T_OK(ovl_bsmat_multiply(bA, bZ, 0, ndup, bC, NULL));
      T_OK(ovl_bsmat_count(bC, &blocks, &values, &fill));
      T_CHECK(blocks == 0 && values == 0, "grid %dx%d: A 0 has %lld blocks", shapes[sh][0], shapes[sh][1],
              (long long)blocks);
      T_OK(ovl_bsmat_multiply(bZ, bA, 1e-3, ndup, bC, NULL));
      T_OK(ovl_bsmat_count(bC, &blocks, &values, &fill));
      T_CHECK(blocks == 0, "grid %dx%d: 0 A has %lld blocks", shapes[sh][0], shapes[sh][1], (long long)blocks);
    }
    ovl_bsmat_destroy(&bA), ovl_bsmat_destroy(&bZ), ovl_bsmat_destroy(&bC);
    ovl_grid2d_destroy(&g);
  }
  tmat_free(&tA), tmat_free(&tZ);
}

/* Bad arguments: the same error and message on every rank, and nothing
 * hangs. */
static void test_bad(void) {
  enum { NB = 6 };
  int bs[NB] = {2, 3, 1, 4, 2, 2}, bs2[NB] = {2, 3, 2, 3, 2, 2};
  int p = 1, q = 1;
  ovl_grid2d_auto_dims(g_size, &p, &q);
  ovl_grid2d g = NULL, g2 = NULL;
  T_OK(ovl_grid2d_create(MPI_COMM_WORLD, p, q, 0, &g));
  T_OK(ovl_grid2d_create(MPI_COMM_WORLD, q, p, 0, &g2));
  ovl_bsmat A = NULL, B = NULL, C = NULL, Bs = NULL, Bb = NULL, Bg = NULL;
  T_OK(ovl_bsmat_create(g, NB, bs, 3, &A));
  T_OK(ovl_bsmat_create(g, NB, bs, 3, &B));
  T_OK(ovl_bsmat_create(g, NB, bs, 3, &C));
  T_OK(ovl_bsmat_create(g, NB, bs, 4, &Bs));  /* another permutation */
  T_OK(ovl_bsmat_create(g, NB, bs2, 3, &Bb)); /* other blocks, the same n */
  T_OK(ovl_bsmat_create(g2, NB, bs, 3, &Bg)); /* the transposed grid */
  T_OK(ovl_bsmat_multiply(A, B, 0, 1, C, NULL));
  T_ERR_SAME(ovl_bsmat_multiply(A, Bs, 0, 1, C, NULL), OVL_ERR_ARG);
  T_ERR_SAME(ovl_bsmat_multiply(A, Bb, 0, 1, C, NULL), OVL_ERR_ARG);
  T_ERR_SAME(ovl_bsmat_multiply(A, B, 0, 1, Bb, NULL), OVL_ERR_ARG);
  if (p != q) T_ERR_SAME(ovl_bsmat_multiply(A, Bg, 0, 1, C, NULL), OVL_ERR_ARG);
  T_ERR_SAME(ovl_bsmat_multiply(A, B, -1e-6, 1, C, NULL), OVL_ERR_ARG);
  T_ERR_SAME(ovl_bsmat_multiply(A, B, NAN, 1, C, NULL), OVL_ERR_ARG);
  T_ERR_SAME(ovl_bsmat_multiply(A, B, INFINITY, 1, C, NULL), OVL_ERR_ARG);
  T_ERR_SAME(ovl_bsmat_multiply(A, B, 0, -1, C, NULL), OVL_ERR_ARG);
  T_ERR_SAME(ovl_bsmat_multiply(A, B, 0, OVL_LANES_MAX + 1, C, NULL), OVL_ERR_ARG);
  T_ERR_SAME(ovl_bsmat_multiply(A, B, 0, 1, A, NULL), OVL_ERR_ARG);
  T_ERR_SAME(ovl_bsmat_multiply(A, B, 0, 1, B, NULL), OVL_ERR_ARG);
  if (g_size > 1) { /* eps or ndup that differ between ranks */
    T_ERR_SAME(ovl_bsmat_multiply(A, B, g_rank == 0 ? 1e-6 : 2e-6, 1, C, NULL), OVL_ERR_ARG);
    T_ERR_SAME(ovl_bsmat_multiply(A, B, 0, g_rank == 0 ? 1 : 2, C, NULL), OVL_ERR_ARG);
    /* a bad argument on one rank only */
    T_ERR_SAME(ovl_bsmat_multiply(A, B, g_rank == g_size - 1 ? -1.0 : 0.0, 1, C, NULL), OVL_ERR_ARG);
  }
  T_ERR(ovl_bsmat_multiply(NULL, B, 0, 1, C, NULL), OVL_ERR_ARG);
  T_ERR(ovl_bsmat_multiply(A, NULL, 0, 1, C, NULL), OVL_ERR_ARG);
  T_ERR(ovl_bsmat_multiply(A, B, 0, 1, NULL, NULL), OVL_ERR_ARG);
  /* still usable after the errors */
  T_OK(ovl_bsmat_multiply(A, B, 0, 2, C, NULL));
  ovl_bsmat_destroy(&A), ovl_bsmat_destroy(&B), ovl_bsmat_destroy(&C);
  ovl_bsmat_destroy(&Bs), ovl_bsmat_destroy(&Bb), ovl_bsmat_destroy(&Bg);
  ovl_grid2d_destroy(&g), ovl_grid2d_destroy(&g2);
}

/* ---- timing mode ---- */

static ovl_err banded_in_place(ovl_bsmat A, int band) {
  int nblk = A->nblk;
  double *blk = malloc(sizeof(double) * 16 * 16);
  ovl_i_sparse_clear(A);
  ovl_err rc = OVL_OK;
  for (int64_t r = 0; r < A->nrows && rc == OVL_OK; r++) {
    int bi = A->rows[r];
    /* the first of the columns held here within the band (cols increasing) */
    int64_t lo = 0, hi = A->ncols;
    while (lo < hi) {
      int64_t mid = (lo + hi) / 2;
      if (A->cols[mid] < bi - band) lo = mid + 1;
      else hi = mid;
    }
    for (int64_t k = lo; k < A->ncols && A->cols[k] <= bi + band && rc == OVL_OK; k++) {
      int bj = A->cols[k];
      double sc = pow(10.0, -abs(bi - bj) / 4.0);
      for (int x = 0; x < A->bs[bi] * A->bs[bj]; x++)
        blk[x] = sc * t_urand((uint64_t)(bi < bj ? bi : bj) * 1315423911ULL + (uint64_t)(bi < bj ? bj : bi) * 31 + x);
      rc = ovl_i_sparse_append_block(A, r, bj, blk, -1, NULL);
    }
  }
  ovl_i_sparse_finish(A);
  free(blk);
  (void)nblk;
  return rc;
}

static int time_mode(int64_t n, int band, double eps) {
  int nblk = 0;
  int64_t sum = 0;
  int pattern[3] = {4, 1, 1};
  int *bs = malloc(sizeof(int) * (size_t)(n + 1));
  while (sum < n) {
    int b = pattern[nblk % 3];
    if (sum + b > n) b = (int)(n - sum);
    bs[nblk++] = b, sum += b;
  }
  ovl_grid2d g = NULL;
  ovl_bsmat A = NULL, C = NULL;
  T_OK(ovl_grid2d_create(MPI_COMM_WORLD, 0, 0, 0, &g));
  T_OK(ovl_bsmat_create(g, nblk, bs, 12345, &A));
  T_OK(ovl_bsmat_create_like(A, &C));
  T_OK(banded_in_place(A, band));
  int64_t blocks = 0, values = 0, cb = 0, cv = 0;
  double fill = 0, cfill = 0;
  T_OK(ovl_bsmat_count(A, &blocks, &values, &fill));
  double best = INFINITY, bestcpu = INFINITY;
  ovl_bsmul_stats st;
  for (int rep = 0; rep < 3; rep++) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime(), c0 = (double)clock() / CLOCKS_PER_SEC;
    T_OK(ovl_bsmat_multiply(A, A, eps, 2, C, &st));
    double t[2] = {MPI_Wtime() - t0, (double)clock() / CLOCKS_PER_SEC - c0};
    MPI_Allreduce(MPI_IN_PLACE, t, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (t[0] < best) best = t[0];
    if (t[1] < bestcpu) bestcpu = t[1];
  }
  T_OK(ovl_bsmat_count(C, &cb, &cv, &cfill));
  int64_t cnt[2] = {st.products, st.skipped}, nprod = 0;
  MPI_Allreduce(MPI_IN_PLACE, cnt, 2, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  for (int bk = 0; bk < nblk; bk++) { /* (I, K, J) within the band: (blocks of column K) x (blocks of row K) */
    int64_t w = (bk + band < nblk ? bk + band : nblk - 1) - (bk - band > 0 ? bk - band : 0) + 1;
    nprod += w * w;
  }
  T_CHECK(cnt[0] + cnt[1] == nprod, "%lld products + %lld skipped, expected %lld", (long long)cnt[0], (long long)cnt[1],
          (long long)nprod);
  if (g_rank == 0)
    printf("# bsmul n %lld nblk %d band %d eps %g ranks %d: A %lld blocks (fill %.4f), C %lld blocks (fill %.4f);"
           " %lld products, %lld skipped; best of 3: %.3f s, CPU time %.3f s (rank 0: comm %.3f s, comp %.3f s)\n",
           (long long)n, nblk, band, eps, g_size, (long long)blocks, fill, (long long)cb, cfill, (long long)cnt[0],
           (long long)cnt[1], best, bestcpu, st.t_comm, st.t_comp);
  ovl_bsmat_destroy(&A), ovl_bsmat_destroy(&C);
  ovl_grid2d_destroy(&g);
  free(bs);
  return 0;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  if (argc >= 4 && strcmp(argv[1], "--time") == 0) {
    time_mode(atoll(argv[2]), atoi(argv[3]), argc >= 5 ? atof(argv[4]) : 1e-7);
  } else {
    test_float32();
    test_symmetric();
    test_products();
    test_empty();
    test_bad();
  }
  int rc = t_finish("test_bsmul");
  MPI_Finalize();
  return rc;
}
