/* dist: distributed matrices on 2D grids: layout, fill, scatter/gather,
 * redistribution and transposition between grids, checks, reductions. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ovl/ovl.h"
#include "ovltest.h"

/* Check every local entry equals f(global i, j). */
static int check_local(ovl_dmat A, uint64_t seed, int transposed) {
  int bad = 0;
  double *a = ovl_dmat_data(A);
  for (int64_t c = 0; c < ovl_dmat_local_cols(A); c++)
    for (int64_t r = 0; r < ovl_dmat_local_rows(A); r++) {
      int64_t gi = ovl_dmat_row_off(A) + r, gj = ovl_dmat_col_off(A) + c;
      double want = transposed ? ovl_fill_value(seed, gj, gi) : ovl_fill_value(seed, gi, gj);
      if (a[r + c * ovl_dmat_ld(A)] != want) bad++;
    }
  return bad;
}

static void test_layout_and_scatter(ovl_grid2d g, int64_t m, int64_t n) {
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  ovl_dmat A = NULL;
  T_OK(ovl_dmat_create(g, m, n, &A));
  if (!A) return;
  /* local sizes add up to the global ones */
  int64_t cnt = ovl_dmat_local_rows(A) * ovl_dmat_local_cols(A);
  MPI_Allreduce(MPI_IN_PLACE, &cnt, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  T_CHECK(cnt == m * n, "%lldx%lld: local blocks hold %lld entries", (long long)m, (long long)n, (long long)cnt);
  T_OK(ovl_dmat_fill(A, OVL_FILL_RANDOM, 11));
  T_CHECK(check_local(A, 11, 0) == 0, "fill by global index");
  /* gather -> global array on rank 0 matches; scatter back into B matches */
  double *glob = rank == 0 ? malloc(sizeof(double) * (size_t)(m * n + 1)) : NULL;
  T_OK(ovl_dmat_gather(A, glob));
  if (rank == 0)
    for (int64_t j = 0; j < n; j++)
      for (int64_t i = 0; i < m; i++)
        if (glob[i + j * m] != ovl_fill_value(11, i, j)) {
          T_CHECK(0, "gather wrong at (%lld,%lld)", (long long)i, (long long)j);
          i = m, j = n;
        }
  ovl_dmat B = NULL;
  T_OK(ovl_dmat_create(g, m, n, &B));
  T_OK(ovl_dmat_scatter(B, glob));
  T_CHECK(check_local(B, 11, 0) == 0, "scatter");
  /* norms and trace against serial values on rank 0 */
  double nf = 0, tr = 0;
  T_OK(ovl_dmat_norm_fro(A, &nf));
  if (m == n) T_OK(ovl_dmat_trace(A, &tr));
  if (rank == 0) {
    double s = 0, t = 0;
    for (int64_t i = 0; i < m * n; i++) s += glob[i] * glob[i];
    for (int64_t i = 0; i < m && m == n; i++) t += glob[i + i * m];
    T_CHECK(fabs(sqrt(s) - nf) <= 1e-12 * (1 + nf), "norm %g vs %g", nf, sqrt(s));
    T_CHECK(fabs(t - tr) <= 1e-12 * (1 + fabs(t)), "trace %g vs %g", tr, t);
  }
  /* matvec against serial */
  double *x = malloc(sizeof(double) * (size_t)(n + 1)), *y = malloc(sizeof(double) * (size_t)(m + 1));
  for (int64_t j = 0; j < n; j++) x[j] = 1.0 + (double)j / 7.0;
  T_OK(ovl_dmat_matvec(A, x, y));
  if (rank == 0)
    for (int64_t i = 0; i < m; i++) {
      double s = 0;
      for (int64_t j = 0; j < n; j++) s += glob[i + j * m] * x[j];
      T_CHECK(fabs(s - y[i]) <= 1e-12 * (1 + fabs(s)) * (double)n, "matvec row %lld", (long long)i);
    }
  free(x);
  free(y);
  free(glob);
  ovl_dmat_destroy(&A);
  ovl_dmat_destroy(&B);
  T_CHECK(A == NULL, "destroy nulls");
}

static void test_redistribute(MPI_Comm world, int P, int64_t m, int64_t n) {
  /* source: auto grid; destinations: 1 x P, P x 1, and a 1 x 1 grid with idle
   * ranks; then back, and a transpose */
  ovl_grid2d gs = NULL, gd[3] = {NULL, NULL, NULL};
  T_OK(ovl_grid2d_create(world, 0, 0, 0, &gs));
  T_OK(ovl_grid2d_create(world, 1, P, 0, &gd[0]));
  T_OK(ovl_grid2d_create(world, P, 1, 0, &gd[1]));
  T_OK(ovl_grid2d_create(world, 1, 1, OVL_GRID_ALLOW_IDLE, &gd[2]));
  ovl_dmat S = NULL, back = NULL;
  T_OK(ovl_dmat_create(gs, m, n, &S));
  T_OK(ovl_dmat_create(gs, m, n, &back));
  ovl_dmat_fill(S, OVL_FILL_RANDOM, 5);
  for (int d = 0; d < 3; d++) {
    ovl_dmat D = NULL, Tr = NULL;
    T_OK(ovl_dmat_create(gd[d], m, n, &D));
    T_OK(ovl_dmat_redistribute(S, D));
    T_CHECK(check_local(D, 5, 0) == 0, "redistribute to grid %d", d);
    ovl_dmat_fill(back, OVL_FILL_ZERO, 0);
    T_OK(ovl_dmat_redistribute(D, back));
    T_CHECK(check_local(back, 5, 0) == 0, "redistribute back from grid %d", d);
    T_OK(ovl_dmat_create(gd[d], n, m, &Tr));
    T_OK(ovl_dmat_transpose(S, Tr));
    T_CHECK(check_local(Tr, 5, 1) == 0, "transpose onto grid %d", d);
    /* wrong shape: same error everywhere */
    T_ERR(ovl_dmat_redistribute(S, Tr), m == n ? OVL_OK : OVL_ERR_SIZE);
    ovl_dmat_destroy(&D);
    ovl_dmat_destroy(&Tr);
  }
  ovl_dmat_destroy(&S);
  ovl_dmat_destroy(&back);
  ovl_grid2d_destroy(&gs);
  for (int d = 0; d < 3; d++) ovl_grid2d_destroy(&gd[d]);
}

static void test_checks(ovl_grid2d g) {
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  ovl_dmat A = NULL;
  T_OK(ovl_dmat_create(g, 9, 9, &A));
  T_OK(ovl_dmat_fill(A, OVL_FILL_SYMMETRIC, 3));
  T_OK(ovl_dmat_check_symmetric(A, 0.0));
  T_OK(ovl_dmat_check_finite(A));
  /* perturb one entry on the last rank that owns data: asymmetric everywhere */
  int owner = ovl_dmat_local_rows(A) * ovl_dmat_local_cols(A) > 0 ? rank : -1;
  MPI_Allreduce(MPI_IN_PLACE, &owner, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  double *a = ovl_dmat_data(A);
  int64_t lm = ovl_dmat_local_rows(A), ln = ovl_dmat_local_cols(A);
  if (rank == owner) a[(lm - 1) + (ln - 1) * ovl_dmat_ld(A)] = NAN;
  T_ERR(ovl_dmat_check_finite(A), OVL_ERR_NUMERIC);
  T_CHECK(strstr(ovl_errmsg(), "NaN") != NULL, "message names NaN: %s", ovl_errmsg());
  ovl_dmat_destroy(&A);
  /* an off-diagonal asymmetry, set on whichever rank owns (0, 8) */
  T_OK(ovl_dmat_create(g, 9, 9, &A));
  ovl_dmat_fill(A, OVL_FILL_IDENTITY, 0);
  int64_t r0 = ovl_dmat_row_off(A), c0 = ovl_dmat_col_off(A);
  if (0 >= r0 && 0 < r0 + ovl_dmat_local_rows(A) && 8 >= c0 && 8 < c0 + ovl_dmat_local_cols(A))
    ovl_dmat_data(A)[(0 - r0) + (8 - c0) * ovl_dmat_ld(A)] = 0.5;
  T_ERR(ovl_dmat_check_symmetric(A, 1e-12), OVL_ERR_NUMERIC);
  double tr = 0;
  T_OK(ovl_dmat_trace(A, &tr));
  T_CHECK(tr == 9.0, "identity trace %g", tr);
  ovl_dmat_destroy(&A);
  T_OK(ovl_dmat_create(g, 3, 4, &A));
  T_ERR(ovl_dmat_check_symmetric(A, 0), OVL_ERR_SIZE);
  ovl_dmat_destroy(&A);
  T_ERR(ovl_dmat_create(g, -1, 4, &A), OVL_ERR_ARG);
  T_ERR(ovl_dmat_create(g, (int64_t)1 << 40, (int64_t)1 << 40, &A), OVL_ERR_NOMEM);
  (void)size;
}

/* ovl_dmat_symmetrize on the most square grid, on an s x s grid (idle ranks
 * beyond s^2) and on 1 x P: every entry is exactly (A(i,j) + A(j,i)) / 2,
 * with and without the workspace; misuse refused. */
static void test_symmetrize(MPI_Comm world, int P) {
  int s = 1;
  while ((s + 1) * (s + 1) <= P) s++;
  ovl_grid2d gs[3] = {NULL, NULL, NULL};
  T_OK(ovl_grid2d_create(world, 0, 0, 0, &gs[0]));
  T_OK(ovl_grid2d_create(world, s, s, OVL_GRID_ALLOW_IDLE, &gs[1]));
  T_OK(ovl_grid2d_create(world, 1, P, 0, &gs[2]));
  const int64_t ns[] = {1, 13, 31, 64};
  for (int k = 0; k < 3; k++)
    for (size_t x = 0; x < sizeof ns / sizeof ns[0]; x++)
      for (int withw = 0; withw < 2; withw++) {
        int64_t n = ns[x];
        ovl_dmat A = NULL, W = NULL;
        T_OK(ovl_dmat_create(gs[k], n, n, &A));
        if (withw) T_OK(ovl_dmat_create(gs[k], n, n, &W));
        T_OK(ovl_dmat_fill(A, OVL_FILL_RANDOM, 5));
        T_OK(ovl_dmat_symmetrize(A, W));
        int bad = 0;
        for (int64_t c = 0; c < ovl_dmat_local_cols(A); c++)
          for (int64_t r = 0; r < ovl_dmat_local_rows(A); r++) {
            int64_t i = ovl_dmat_row_off(A) + r, j = ovl_dmat_col_off(A) + c;
            double want = 0.5 * (ovl_fill_value(5, i, j) + ovl_fill_value(5, j, i));
            bad += ovl_dmat_data(A)[r + c * ovl_dmat_ld(A)] != want;
          }
        MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_SUM, world);
        T_CHECK(bad == 0, "symmetrize grid %d n=%lld W=%d: %d entries are not (A + A^T)/2", k, (long long)n, withw,
                bad);
        T_OK(ovl_dmat_check_symmetric(A, 0.0));
        ovl_dmat_destroy(&A);
        ovl_dmat_destroy(&W);
      }
  ovl_dmat A = NULL, W = NULL;
  T_OK(ovl_dmat_create(gs[0], 5, 6, &A));
  T_ERR(ovl_dmat_symmetrize(A, NULL), OVL_ERR_SIZE);
  ovl_dmat_destroy(&A);
  T_OK(ovl_dmat_create(gs[0], 6, 6, &A));
  T_OK(ovl_dmat_create(gs[0], 5, 5, &W));
  T_ERR(ovl_dmat_symmetrize(A, W), OVL_ERR_ARG);
  T_ERR(ovl_dmat_symmetrize(A, A), OVL_ERR_ARG);
  T_ERR(ovl_dmat_symmetrize(NULL, NULL), OVL_ERR_ARG);
  ovl_dmat_destroy(&A);
  ovl_dmat_destroy(&W);
  for (int k = 0; k < 3; k++) ovl_grid2d_destroy(&gs[k]);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int P;
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  ovl_grid2d g = NULL, g1 = NULL;
  T_OK(ovl_grid2d_create(MPI_COMM_WORLD, 0, 0, 0, &g));
  T_OK(ovl_grid2d_create(MPI_COMM_WORLD, 1, P, 0, &g1));
  int64_t sizes[][2] = {{1, 1}, {7, 5}, {13, 13}, {2, 9}, {31, 17}, {64, 64}};
  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
    test_layout_and_scatter(g, sizes[s][0], sizes[s][1]);
    test_layout_and_scatter(g1, sizes[s][0], sizes[s][1]);
    test_redistribute(MPI_COMM_WORLD, P, sizes[s][0], sizes[s][1]);
  }
  test_checks(g);
  test_symmetrize(MPI_COMM_WORLD, P);
  ovl_grid2d_destroy(&g);
  ovl_grid2d_destroy(&g1);
  int rc = t_finish("test_dmat");
  MPI_Finalize();
  return rc;
}
