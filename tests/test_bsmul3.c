/* The 2.5D filtered block-sparse product (ovl_bsmat_multiply3), the moves
 * between a 2D grid and a 3D grid's plane (ovl_bsmat_to_plane,
 * ovl_bsmat_from_plane) and the 2.5D purification (ovl_purify_sparse3) on
 * every s x s x c grid of the ranks (1x1x1; 1x1x2; 1x1x4 and 2x2x1; 2x2x2
 * and 1x1x4 with 4 idle ranks):
 *  - to_plane then from_plane gives back the matrix exactly, planes k > 0
 *    hold no blocks;
 *  - C = A B with eps = 0 equals the dense product within 1e-12
 *    (relative); with eps > 0 every kept block is within eps of the exact
 *    one, every dropped one below 2 eps, ||C - A B||_F within the bound of
 *    ovl/bsmat.h; the products computed and skipped over all layers are the
 *    2D product's (each block product on exactly one layer);
 *  - c = 1 equals ovl_bsmat_multiply on the plane;
 *  - bad input: layouts that differ within a plane and between planes,
 *    matrices off the plane, eps < 0 on one rank only: the same error and
 *    message on every rank, no hang;
 *  - ovl_purify_sparse3 (SP2, TRS4; eps 0 and 1e-8) against
 *    ovl_purify_sparse on a gapped banded chain Hamiltonian.
 *
 * Timing mode (not run by ctest): test_bsmul3 --time FILE EPS BLOCK REPS
 * reads FILE (.mtx with its sidecar), merges its blocks up to BLOCK rows
 * (ovl_bsmat_regroup) and times C = A A with threshold EPS on the 2D grid
 * of the ranks (ovl_bsmat_multiply) and on the 1 x 1 x P grid
 * (ovl_bsmat_multiply3), the best of REPS (the slowest rank's wall time),
 * and checks that the two products agree. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bstest.h"
#include "ovl/ovl.h"
#include "ovltest.h"

static int g_rank, g_size;

static double block_sq(const double *a, const double *b, const tmat *t, int bi, int bj) {
  double s = 0;
  for (int64_t j = t->boff[bj]; j < t->boff[bj + 1]; j++)
    for (int64_t i = t->boff[bi]; i < t->boff[bi + 1]; i++) {
      double d = a[i + j * t->n] - (b ? b[i + j * t->n] : 0.0);
      s += d * d;
    }
  return s;
}

/* The block products of A B: (I, K, J) with A_IK and B_KJ not zero. */
static int64_t count_products(const tmat *A, const tmat *B) {
  int nb = A->nblk;
  int64_t c = 0;
  for (int bi = 0; bi < nb; bi++)
    for (int bk = 0; bk < nb; bk++)
      if (block_sq(A->a, NULL, A, bi, bk) > 0)
        for (int bj = 0; bj < nb; bj++) c += block_sq(B->a, NULL, B, bk, bj) > 0;
  return c;
}

/* B (on the 2D grid g2) as a global array on every rank */
static double *gather_all(ovl_grid2d g2, ovl_bsmat B, int64_t n) {
  ovl_dmat D = NULL;
  double *c = calloc((size_t)(n * n + 1), sizeof(double));
  T_OK(ovl_dmat_create(g2, n, n, &D));
  T_OK(ovl_bsmat_to_dense(B, D));
  T_OK(ovl_dmat_gather(D, c));
  ovl_dmat_destroy(&D);
  MPI_Bcast(c, (int)(n * n), MPI_DOUBLE, 0, MPI_COMM_WORLD);
  return c;
}

/* The plane-0 matrix C3 checked against E = A B (within 1e-12 for eps = 0,
 * else the rule of ovl/bsmat.h). */
static void check_c(ovl_grid3d g3, ovl_grid2d g2, ovl_bsmat C3, const tmat *tA, const double *E, double eps,
                    const char *what) {
  int64_t n = tA->n;
  ovl_bsmat C2 = NULL;
  T_OK(ovl_bsmat_from_plane(C3, g3, g2, &C2));
  double *c = gather_all(g2, C2, n);
  ovl_bsmat_destroy(&C2);
  double en = 0, dn = 0;
  for (int64_t x = 0; x < n * n; x++) en += E[x] * E[x], dn += (c[x] - E[x]) * (c[x] - E[x]);
  en = sqrt(en), dn = sqrt(dn);
  if (eps == 0) {
    T_CHECK(dn <= 1e-12 * en, "%s eps 0: ||C - AB|| / ||AB|| = %.3e", what, dn / en);
  } else {
    double worst_kept = 0, worst_drop = 0, small_kept = INFINITY, tol = 1e-13 * en;
    int64_t blocks = 0, kept = 0;
    for (int bi = 0; bi < tA->nblk; bi++)
      for (int bj = 0; bj < tA->nblk; bj++) {
        double cn = sqrt(block_sq(c, NULL, tA, bi, bj)), d = sqrt(block_sq(c, E, tA, bi, bj));
        blocks++;
        if (cn > 0) kept++, worst_kept = fmax(worst_kept, d), small_kept = fmin(small_kept, cn);
        else worst_drop = fmax(worst_drop, d);
      }
    T_CHECK(kept > 0 && kept < blocks, "%s eps %g: %lld of %lld blocks kept (the case filters nothing or all)", what,
            eps, (long long)kept, (long long)blocks);
    T_CHECK(worst_kept <= eps + tol, "%s eps %g: a kept block is off by %.3e (> eps)", what, eps, worst_kept);
    T_CHECK(worst_drop < 2 * eps + tol, "%s eps %g: a dropped block has norm %.3e (>= 2 eps)", what, eps, worst_drop);
    T_CHECK(small_kept >= eps, "%s eps %g: a kept block has norm %.3e < eps", what, eps, small_kept);
    T_CHECK(dn <= 2 * eps * sqrt((double)blocks) + tol, "%s eps %g: ||C - AB|| = %.3e over the bound", what, eps, dn);
  }
  free(c);
}

static void test_grid(int s, int c, const tmat *tA, const tmat *tB, const double *E, int64_t nprod, const double *EAA) {
  char what[64];
  snprintf(what, sizeof what, "%dx%dx%d", s, s, c);
  ovl_grid2d g2 = NULL;
  ovl_grid3d g3 = NULL;
  T_OK(ovl_grid2d_create(MPI_COMM_WORLD, 0, 0, 0, &g2));
  T_OK(ovl_grid3d_create(MPI_COMM_WORLD, s, c, OVL_GRID_ALLOW_IDLE, &g3));
  int i = -1, j = -1, k = -1;
  ovl_grid3d_coords(g3, &i, &j, &k);
  ovl_bsmat A2 = NULL, B2 = NULL, A3 = NULL, B3 = NULL, C3 = NULL, R = NULL;
  T_OK(to_bsmat(g2, tA, 7, &A2));
  T_OK(to_bsmat(g2, tB, 7, &B2));

  /* the round trip: exact, plane 0 holds every block */
  T_OK(ovl_bsmat_to_plane(A2, g3, &A3));
  T_OK(ovl_bsmat_to_plane(B2, g3, &B3));
  T_OK(ovl_bsmat_create_like(A3, &C3));
  int64_t blocks2 = 0, lb[2] = {k == 0 ? ovl_bsmat_local_blocks(A3) : 0, k > 0 ? ovl_bsmat_local_blocks(A3) : 0};
  T_OK(ovl_bsmat_count(A2, &blocks2, NULL, NULL));
  MPI_Allreduce(MPI_IN_PLACE, lb, 2, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  T_CHECK(lb[0] == blocks2 && lb[1] == 0, "%s to_plane: %lld blocks on plane 0, %lld on the others, %lld in A", what,
          (long long)lb[0], (long long)lb[1], (long long)blocks2);
  T_OK(ovl_bsmat_from_plane(A3, g3, g2, &R));
  double d = -1;
  T_OK(ovl_bsmat_dist_fro(R, A2, &d));
  T_CHECK(d == 0.0, "%s: from_plane(to_plane(A)) differs from A by %.3e", what, d);
  ovl_bsmat_destroy(&R);
  /* moves refused alike everywhere: A off the plane, a 2D grid over other ranks */
  T_ERR_SAME(ovl_bsmat_from_plane(A2, g3, g2, &R), OVL_ERR_ARG);
  T_CHECK(R == NULL, "%s: from_plane failed but returned a matrix", what);
  if (g_size > 1) {
    ovl_grid2d gs = NULL;
    ovl_bsmat S = NULL;
    T_OK(ovl_grid2d_create(MPI_COMM_SELF, 1, 1, 0, &gs));
    T_OK(ovl_bsmat_create(gs, tA->nblk, tA->bs, 7, &S));
    T_ERR_SAME(ovl_bsmat_to_plane(S, g3, &R), OVL_ERR_ARG);
    T_ERR_SAME(ovl_bsmat_from_plane(A3, g3, gs, &R), OVL_ERR_ARG);
    ovl_bsmat_destroy(&S);
    ovl_grid2d_destroy(&gs);
  }

  /* the products: eps 0 and eps > 0, N_DUP 1 and 3 */
  const double epss[2] = {0.0, 1e-3};
  for (int e = 0; e < 2; e++)
    for (int nd = 1; nd <= 3; nd += 2) {
      ovl_bsmul_stats st;
      memset(&st, 0xff, sizeof st);
      T_OK(ovl_bsmat_multiply3(g3, A3, B3, epss[e], nd, C3, &st));
      int64_t cnt[2] = {st.products, st.skipped};
      if (!ovl_grid3d_active(g3)) cnt[0] = cnt[1] = 0;
      MPI_Allreduce(MPI_IN_PLACE, cnt, 2, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
      T_CHECK(cnt[0] + cnt[1] == nprod && (epss[e] > 0 || cnt[1] == 0),
              "%s eps %g ndup %d: %lld products + %lld skipped over all layers, expected %lld", what, epss[e], nd,
              (long long)cnt[0], (long long)cnt[1], (long long)nprod);
      T_CHECK(!ovl_grid3d_active(g3) || (st.t_comm >= 0 && st.t_comp >= 0 && st.bytes_sent >= 0),
              "%s: stats not filled", what);
      T_CHECK(k <= 0 || ovl_bsmat_local_blocks(C3) == 0, "%s: C holds blocks on plane %d", what, k);
      check_c(g3, g2, C3, tA, E, epss[e], what);
      if (c > 1 || !ovl_grid3d_active(g3)) continue;
      /* c = 1: the 2D product on the plane */
      ovl_bsmat C1 = NULL;
      T_OK(ovl_bsmat_create_like(A3, &C1));
      T_OK(ovl_bsmat_multiply(A3, B3, epss[e], nd, C1, NULL));
      double dd = -1, cn = 0;
      T_OK(ovl_bsmat_dist_fro(C1, C3, &dd));
      T_OK(ovl_bsmat_norm_fro(C1, &cn));
      /* the same products and sums; a sum's order follows the panels' arrival, so only one step (s = 1) is exact */
      T_CHECK(s == 1 ? dd == 0.0 : dd <= 1e-15 * cn, "%s c = 1: ||C3 - C2D|| = %.3e (||C|| %.3e)", what, dd, cn);
      ovl_bsmat_destroy(&C1);
    }

  /* bad input, the same error everywhere */
  T_ERR_SAME(ovl_bsmat_multiply3(g3, A3, B3, g_rank == g_size - 1 ? -1.0 : 0.0, 1, C3, NULL), OVL_ERR_ARG);
  T_ERR_SAME(ovl_bsmat_multiply3(g3, A3, B3, 0.0, OVL_LANES_MAX + 1, C3, NULL), OVL_ERR_ARG);
  T_ERR_SAME(ovl_bsmat_multiply3(g3, A2, B3, 0.0, 1, C3, NULL), OVL_ERR_ARG); /* A off the plane */
  T_ERR_SAME(ovl_bsmat_multiply3(g3, A3, B3, 0.0, 1, A3, NULL), OVL_ERR_ARG); /* C = A */
  ovl_bsmat X = NULL;
  T_OK(ovl_bsmat_create(ovl_grid3d_plane(g3), tA->nblk, tA->bs, 8, &X)); /* another seed */
  T_ERR_SAME(ovl_bsmat_multiply3(g3, A3, X, 0.0, 1, C3, NULL), OVL_ERR_ARG);
  ovl_bsmat_destroy(&X);
  /* another layout on the last plane only */
  int *bs2 = malloc(sizeof(int) * (size_t)tA->nblk);
  memcpy(bs2, tA->bs, sizeof(int) * (size_t)tA->nblk);
  if (k == c - 1) bs2[0]++, bs2[1]--;
  if (bs2[1] >= 1) {
    ovl_bsmat Y = NULL, Z = NULL, W = NULL;
    T_OK(ovl_bsmat_create(ovl_grid3d_plane(g3), tA->nblk, bs2, 7, &Y));
    T_OK(ovl_bsmat_create_like(Y, &Z));
    T_OK(ovl_bsmat_create_like(Y, &W));
    if (c > 1) T_ERR_SAME(ovl_bsmat_multiply3(g3, Y, Z, 0.0, 1, W, NULL), OVL_ERR_ARG);
    ovl_bsmat_destroy(&Y), ovl_bsmat_destroy(&Z), ovl_bsmat_destroy(&W);
  }
  free(bs2);
  /* a working product after the errors */
  T_OK(ovl_bsmat_multiply3(g3, A3, B3, 0.0, 2, C3, NULL));
  check_c(g3, g2, C3, tA, E, 0.0, what);
  /* A A (one handle for both operands: the layers need two different slices of it), twice in a row */
  for (int e = 0; e < 2; e++) {
    T_OK(ovl_bsmat_multiply3(g3, A3, A3, epss[e], 1, C3, NULL));
    check_c(g3, g2, C3, tA, EAA, epss[e], what);
  }

  ovl_bsmat_destroy(&A2), ovl_bsmat_destroy(&B2);
  ovl_bsmat_destroy(&A3), ovl_bsmat_destroy(&B3), ovl_bsmat_destroy(&C3);
  ovl_grid3d_destroy(&g3);
  ovl_grid2d_destroy(&g2);
}

/* ---- purification ---- */

static void test_purify(int s, int c) {
  char what[64];
  snprintf(what, sizeof what, "purify %dx%dx%d", s, s, c);
  int bs[64], nblk = 0;
  int64_t n = 0;
  while (n < 120) bs[nblk] = 1 + (int)((t_urand((uint64_t)(7 * nblk + 3)) + 1.0) * 2.5), n += bs[nblk++];
  double *fg = t_chain(n);
  tmat tF = {nblk, bs, n, NULL, fg};
  ovl_grid2d g2 = NULL;
  ovl_grid3d g3 = NULL;
  T_OK(ovl_grid2d_create(MPI_COMM_WORLD, 0, 0, 0, &g2));
  T_OK(ovl_grid3d_create(MPI_COMM_WORLD, s, c, OVL_GRID_ALLOW_IDLE, &g3));
  ovl_bsmat F2 = NULL, D2 = NULL, F3 = NULL, D3 = NULL, R = NULL;
  T_OK(to_bsmat(g2, &tF, 2024, &F2));
  T_OK(ovl_bsmat_create_like(F2, &D2));
  T_OK(ovl_bsmat_to_plane(F2, g3, &F3));
  T_OK(ovl_bsmat_create_like(F3, &D3));
  const ovl_purify_method methods[2] = {OVL_PURIFY_SP2, OVL_PURIFY_TRS4};
  const double epss[2] = {0.0, 1e-8};
  for (int m = 0; m < 2; m++)
    for (int e = 0; e < 2; e++) {
      ovl_purify_opts o = ovl_purify_opts_default();
      o.method = methods[m], o.nocc = n / 2, o.sparse = epss[e], o.plan.ndup = 2;
      ovl_purify_result r2, r3;
      memset(&r3, 0, sizeof r3);
      T_OK(ovl_purify_sparse(F2, D2, &o, &r2));
      T_OK(ovl_purify_sparse3(g3, F3, D3, &o, &r3));
      T_OK(ovl_bsmat_from_plane(D3, g3, g2, &R));
      double d = -1, dn = 0;
      T_OK(ovl_bsmat_dist_fro(R, D2, &d));
      T_OK(ovl_bsmat_norm_fro(D2, &dn));
      ovl_bsmat_destroy(&R);
      const char *mn = ovl_purify_method_name(methods[m]);
      if (epss[e] == 0) {
        T_CHECK(d <= 1e-12 * dn, "%s %s eps 0: ||D3 - D2|| / ||D2|| = %.3e", what, mn, d / dn);
        T_CHECK(fabs(r3.energy - r2.energy) <= 1e-10 * fabs(r2.energy), "%s %s: energy %.15g vs 2D %.15g", what, mn,
                r3.energy, r2.energy);
      } else { /* the filter's decisions may differ at blocks within rounding of eps */
        T_CHECK(fabs(r3.energy - r2.energy) <= 1e-6 * (double)n, "%s %s eps 1e-8: energy %.12g vs 2D %.12g", what, mn,
                r3.energy, r2.energy);
      }
      T_CHECK(abs(r3.iterations - r2.iterations) <= 1 && r3.trace_err <= 1e-6,
              "%s %s eps %g: %d iterations (2D %d), |tr D - n_occ| = %.3e", what, mn, epss[e], r3.iterations,
              r2.iterations, r3.trace_err);
      /* the same result on every rank */
      double ev[2] = {r3.energy, -r3.energy};
      MPI_Allreduce(MPI_IN_PLACE, ev, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      T_CHECK(ev[0] == -ev[1], "%s %s: the energy differs between ranks (%.17g to %.17g)", what, mn, -ev[1], ev[0]);
    }
  /* bad input: F off the plane, a threshold on one rank only */
  ovl_purify_opts o = ovl_purify_opts_default();
  o.method = OVL_PURIFY_SP2, o.nocc = n / 2, o.sparse = 0.0;
  T_ERR_SAME(ovl_purify_sparse3(g3, F2, D3, &o, NULL), OVL_ERR_ARG);
  o.sparse = g_rank == g_size - 1 ? (g_size > 1 ? 1e-6 : -1.0) : 0.0; /* one rank: a threshold < 0 */
  T_ERR_SAME(ovl_purify_sparse3(g3, F3, D3, &o, NULL), OVL_ERR_ARG);
  ovl_bsmat_destroy(&F2), ovl_bsmat_destroy(&D2), ovl_bsmat_destroy(&F3), ovl_bsmat_destroy(&D3);
  ovl_grid3d_destroy(&g3);
  ovl_grid2d_destroy(&g2);
  free(fg);
}

static double slowest(double t) {
  MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return t;
}

static void time_mode(const char *path, double eps, int block, int reps) {
  ovl_grid2d g2 = NULL;
  ovl_grid3d g3 = NULL;
  T_OK(ovl_grid2d_create(MPI_COMM_WORLD, 0, 0, 0, &g2));
  T_OK(ovl_grid3d_create(MPI_COMM_WORLD, 1, g_size, 0, &g3));
  ovl_bsmat A0 = NULL, A = NULL, C = NULL, A3 = NULL, C3 = NULL, R = NULL;
  T_OK(ovl_bsmat_read(g2, path, 0, NULL, 7, 0.0, &A0));
  T_OK(ovl_bsmat_regroup(A0, block, &A));
  ovl_bsmat_destroy(&A0);
  T_OK(ovl_bsmat_create_like(A, &C));
  T_OK(ovl_bsmat_to_plane(A, g3, &A3));
  T_OK(ovl_bsmat_create_like(A3, &C3));
  int p = 0, q = 0;
  ovl_grid2d_dims(g2, &p, &q);
  double t2 = INFINITY, t3 = INFINITY;
  ovl_bsmul_stats s2, s3;
  for (int r = 0; r < reps; r++) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    T_OK(ovl_bsmat_multiply(A, A, eps, 0, C, &s2));
    t2 = fmin(t2, slowest(MPI_Wtime() - t0));
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    T_OK(ovl_bsmat_multiply3(g3, A3, A3, eps, 0, C3, &s3));
    t3 = fmin(t3, slowest(MPI_Wtime() - t0));
  }
  T_OK(ovl_bsmat_from_plane(C3, g3, g2, &R));
  double d = 0, cn = 0;
  int64_t blocks = 0, cblocks = 0;
  T_OK(ovl_bsmat_dist_fro(R, C, &d));
  T_OK(ovl_bsmat_norm_fro(C, &cn));
  T_OK(ovl_bsmat_count(A, &blocks, NULL, NULL));
  T_OK(ovl_bsmat_count(C, &cblocks, NULL, NULL));
  T_CHECK(d <= 2 * eps * sqrt((double)cblocks) + 1e-12 * cn, "2D and 2.5D products differ by %.3e", d);
  int64_t pr[2] = {s2.products, s3.products};
  MPI_Allreduce(MPI_IN_PLACE, pr, 2, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  if (g_rank == 0)
    printf("# %s: n %lld, %d blocks of <= %d, A %lld blocks, C %lld blocks, eps %g, %d ranks\n"
           "# block products %lld (2D) %lld (2.5D); ||C_2.5D - C_2D|| / ||C|| = %.2e\n"
           "# rank 0, last run: 2D comm %.4f s comp %.4f s, %lld bytes sent; 2.5D comm %.4f s comp %.4f s, %lld bytes\n"
           "2D %d x %d: %.4f s   2.5D 1 x 1 x %d: %.4f s   (best of %d)\n",
           path, (long long)ovl_bsmat_n(A), ovl_bsmat_nblk(A), block, (long long)blocks, (long long)cblocks, eps,
           g_size, (long long)pr[0], (long long)pr[1], cn > 0 ? d / cn : d, s2.t_comm, s2.t_comp,
           (long long)s2.bytes_sent, s3.t_comm, s3.t_comp, (long long)s3.bytes_sent, p, q, t2, g_size, t3, reps);
  ovl_bsmat_destroy(&A), ovl_bsmat_destroy(&C), ovl_bsmat_destroy(&A3), ovl_bsmat_destroy(&C3), ovl_bsmat_destroy(&R);
  ovl_grid3d_destroy(&g3);
  ovl_grid2d_destroy(&g2);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  if (argc >= 6 && strcmp(argv[1], "--time") == 0) {
    time_mode(argv[2], atof(argv[3]), atoi(argv[4]), atoi(argv[5]));
    int rc = t_finish("test_bsmul3 --time");
    MPI_Finalize();
    return rc;
  }
  enum { NB = 37 };
  int bs[NB];
  for (int b = 0; b < NB; b++) bs[b] = b % 11 == 4 ? 8 : 1 + (int)(t_mix((uint64_t)b) % 4);
  tmat tA, tB;
  tmat_make(&tA, NB, bs, 4, 0.2, -1, -1, 1);
  tmat_make(&tB, NB, bs, 3, 0.25, -1, -1, 2);
  int64_t n = tA.n, nprod = count_products(&tA, &tB);
  double *E = malloc(sizeof(double) * (size_t)(n * n)), *EAA = malloc(sizeof(double) * (size_t)(n * n));
  for (int64_t j = 0; j < n; j++)
    for (int64_t i = 0; i < n; i++) {
      double s = 0, t = 0;
      for (int64_t l = 0; l < n; l++) s += tA.a[i + l * n] * tB.a[l + j * n], t += tA.a[i + l * n] * tA.a[l + j * n];
      E[i + j * n] = s, EAA[i + j * n] = t;
    }
  /* the s x s x c grids of the ranks: c > 1 where the ranks allow it, and c = 1 */
  int shapes[4][2], ns = 0;
  if (g_size == 1) shapes[ns][0] = 1, shapes[ns][1] = 1, ns++;
  if (g_size == 2) shapes[ns][0] = 1, shapes[ns][1] = 2, ns++;
  if (g_size == 4) shapes[ns][0] = 1, shapes[ns][1] = 4, ns++, shapes[ns][0] = 2, shapes[ns][1] = 1, ns++;
  if (g_size == 8) shapes[ns][0] = 2, shapes[ns][1] = 2, ns++, shapes[ns][0] = 1, shapes[ns][1] = 4, ns++;
  for (int x = 0; x < ns; x++) test_grid(shapes[x][0], shapes[x][1], &tA, &tB, E, nprod, EAA);
  for (int x = 0; x < ns; x++) test_purify(shapes[x][0], shapes[x][1]);
  free(E), free(EAA);
  tmat_free(&tA), tmat_free(&tB);
  int rc = t_finish("test_bsmul3");
  MPI_Finalize();
  return rc;
}
