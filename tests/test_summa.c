/* SUMMA against a serial dgemm: grids of every shape the rank count allows,
 * odd sizes (1, primes, n < P), rectangular shapes, panel widths that do not
 * divide the blocks, beta != 0, and bad input. */
#include <stdio.h>

#include "ovl/ovl.h"
#include "ovltest.h"

static int g_ndup = 1;
static ovl_backend g_backend = OVL_BACKEND_MPI;
static int g_lookahead = 0;
static int g_whole = 0;

static void run_case(ovl_grid2d g, int64_t m, int64_t n, int64_t k, int64_t b, double alpha, double beta) {
  ovl_dmat A = NULL, B = NULL, C = NULL, C0 = NULL;
  T_OK(ovl_dmat_create(g, m, k, &A));
  T_OK(ovl_dmat_create(g, k, n, &B));
  T_OK(ovl_dmat_create(g, m, n, &C));
  T_OK(ovl_dmat_create(g, m, n, &C0));
  ovl_dmat_fill(A, OVL_FILL_RANDOM, 1);
  ovl_dmat_fill(B, OVL_FILL_RANDOM, 2);
  ovl_dmat_fill(C0, OVL_FILL_RANDOM, 3);
  ovl_dmat_copy(C, C0);
  ovl_plan plan = ovl_plan_gemm(OVL_ALGO_SUMMA, b);
  plan.ndup = g_ndup;
  plan.coll.backend = g_backend;
  plan.lookahead = g_lookahead;
  plan.arrival = !g_whole;
  ovl_kstats st;
  T_OK(ovl_summa(alpha, A, B, beta, C, &plan, &st));
  double e = -1;
  ovl_err rc = ovl_verify_gemm(alpha, A, B, beta, C0, C, OVL_VERIFY_EXACT, 1e-13, &e);
  int p, q;
  ovl_grid2d_dims(g, &p, &q);
  T_CHECK(rc == OVL_OK,
          "lookahead %d whole panel %d ndup %d backend %s grid %dx%d m=%lld n=%lld k=%lld b=%lld beta=%g: relerr %.3e",
          g_lookahead, g_whole, g_ndup, ovl_backend_name(g_backend), p, q, (long long)m, (long long)n, (long long)k,
          (long long)b, beta, e);
  if (m > 2 && n > 2 && k > 2) {
    double ep = -1;
    T_OK(ovl_verify_gemm(alpha, A, B, beta, C0, C, OVL_VERIFY_PROBABILISTIC, 1e-13, &ep));
    /* the probabilistic check must catch a wrong result */
    double *c = ovl_dmat_data(C);
    if (ovl_dmat_local_rows(C) * ovl_dmat_local_cols(C) > 0) c[0] += 1.0;
    T_ERR(ovl_verify_gemm(alpha, A, B, beta, C0, C, OVL_VERIFY_PROBABILISTIC, 1e-13, &ep), OVL_ERR_NUMERIC);
  }
  ovl_dmat_destroy(&A);
  ovl_dmat_destroy(&B);
  ovl_dmat_destroy(&C);
  ovl_dmat_destroy(&C0);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int P;
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  /* every p x q with p*q == P; N_DUP 1 to 4; both back ends; lookahead off/on;
   * products in arrival order of the lanes (plan.arrival) and after the whole
   * panel (the default) */
  int ndups[] = {1, 3, 1, 4, 1, 4, 2, 3, 3, 4, 2};
  int looks[] = {0, 0, 0, 0, 1, 1, 1, 1, 0, 1, 1};
  int wholes[] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1};
  ovl_backend bes[] = {OVL_BACKEND_MPI, OVL_BACKEND_MPI, OVL_BACKEND_OWN, OVL_BACKEND_OWN,
                       OVL_BACKEND_MPI, OVL_BACKEND_OWN, OVL_BACKEND_MPI, OVL_BACKEND_OWN,
                       OVL_BACKEND_MPI, OVL_BACKEND_OWN, OVL_BACKEND_MPI};
  for (int v = 0; v < (int)(sizeof ndups / sizeof ndups[0]); v++)
    for (int p = 1; p <= P; p++) {
      g_ndup = ndups[v];
      g_backend = bes[v];
      g_lookahead = looks[v];
      g_whole = wholes[v];
      if (P % p) continue;
      ovl_grid2d g = NULL;
      T_OK(ovl_grid2d_create(MPI_COMM_WORLD, p, P / p, 0, &g));
      int64_t cases[][4] = {{1, 1, 1, 1},    {2, 3, 1, 1},    {13, 13, 13, 4}, {17, 5, 11, 3},
                            {5, 17, 29, 64}, {64, 64, 64, 8}, {31, 37, 41, 7}, {3, 3, 3, 2}};
      for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        run_case(g, cases[c][0], cases[c][1], cases[c][2], cases[c][3], 1.0, 0.0);
      run_case(g, 19, 23, 29, 5, -0.5, 2.0);
      run_case(g, 8, 8, 0, 4, 1.0, 0.5); /* k = 0: C = beta C */
      ovl_grid2d_destroy(&g);
    }
  /* a grid with idle ranks */
  if (P >= 3) {
    ovl_grid2d g = NULL;
    T_OK(ovl_grid2d_create(MPI_COMM_WORLD, 1, 2, OVL_GRID_ALLOW_IDLE, &g));
    run_case(g, 11, 9, 7, 3, 1.0, 1.0);
    ovl_grid2d_destroy(&g);
  }
  /* bad input: the same error on every rank */
  ovl_grid2d g = NULL;
  T_OK(ovl_grid2d_create(MPI_COMM_WORLD, 0, 0, 0, &g));
  ovl_dmat A = NULL, B = NULL, C = NULL;
  T_OK(ovl_dmat_create(g, 8, 6, &A));
  T_OK(ovl_dmat_create(g, 5, 8, &B));
  T_OK(ovl_dmat_create(g, 8, 8, &C));
  ovl_plan plan = ovl_plan_gemm(OVL_ALGO_SUMMA, 4), bad = ovl_plan_gemm(OVL_ALGO_SUMMA, 0),
           badd = ovl_plan_gemm(OVL_ALGO_SUMMA, 4);
  badd.ndup = 0;
  T_ERR(ovl_summa(1.0, A, B, 0.0, C, &plan, NULL), OVL_ERR_SIZE);
  ovl_dmat_destroy(&B);
  T_OK(ovl_dmat_create(g, 6, 8, &B));
  T_ERR(ovl_summa(1.0, A, B, 0.0, C, &bad, NULL), OVL_ERR_ARG);
  T_ERR(ovl_summa(1.0, A, B, 0.0, C, NULL, NULL), OVL_ERR_ARG);
  T_ERR(ovl_summa(1.0, A, B, 0.0, C, &badd, NULL), OVL_ERR_ARG);
  T_OK(ovl_summa(1.0, A, B, 0.0, C, &plan, NULL));
  ovl_dmat_destroy(&A);
  ovl_dmat_destroy(&B);
  ovl_dmat_destroy(&C);
  ovl_grid2d_destroy(&g);
  int rc = t_finish("test_summa");
  MPI_Finalize();
  return rc;
}
