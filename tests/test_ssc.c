/* SymmSquareCube: Algorithms 3, 4, 5 (p x p x p grids) and 6 (s x s x c)
 * against serial products, N_DUP in {1, 2, 3, 4, 7}, both back ends, uneven
 * blocks, repeated runs and two instances of different sizes at once; Alg. 5
 * with its products in arrival order of the lanes (plan.arrival) and after
 * whole phases (the default), and the two against each other. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ovl/ovl.h"
#include "ovltest.h"

/* Check D2 = D D and D3 = D D2 on plane 0 (exact check on gathered data). */
static void check(ovl_grid3d g, ovl_dmat D, ovl_dmat D2, ovl_dmat D3, const char *what) {
  int i, j, k;
  ovl_grid3d_coords(g, &i, &j, &k);
  if (!ovl_grid3d_active(g) || k != 0) return;
  double e2 = -1, e3 = -1;
  ovl_err r2 = ovl_verify_gemm(1.0, D, D, 0.0, NULL, D2, OVL_VERIFY_EXACT, 1e-13, &e2);
  ovl_err r3 = ovl_verify_gemm(1.0, D, D2, 0.0, NULL, D3, OVL_VERIFY_EXACT, 1e-13, &e3);
  T_CHECK(r2 == OVL_OK && r3 == OVL_OK, "%s: relerr D^2 %.3e, D^3 %.3e", what, e2, e3);
}

/* ovl_ssc_create with a plan of (n, alg, ndup). */
static ovl_err ssc_create_n(ovl_grid3d g, int64_t n, ovl_algo alg, int ndup, ovl_ssc *s) {
  ovl_plan plan = ovl_plan_default(alg, n, 0);
  plan.ndup = ndup;
  return ovl_ssc_create(g, &plan, s);
}

static void run(ovl_grid3d g, int64_t n, ovl_algo alg, int ndup, ovl_backend be, int whole) {
  ovl_grid2d pl = ovl_grid3d_plane(g);
  ovl_dmat D = NULL, D2 = NULL, D3 = NULL;
  T_OK(ovl_dmat_create(pl, n, n, &D));
  T_OK(ovl_dmat_create(pl, n, n, &D2));
  T_OK(ovl_dmat_create(pl, n, n, &D3));
  ovl_dmat_fill(D, OVL_FILL_SYMMETRIC, 5 + (uint64_t)n);
  ovl_plan plan = ovl_plan_default(alg, n, 0);
  plan.ndup = ndup, plan.coll.backend = be, plan.arrival = !whole;
  ovl_ssc s = NULL;
  T_OK(ovl_ssc_create(g, &plan, &s));
  char what[128];
  if (s) ovl_ssc_str(s, what, (sizeof what) - 16);
  if (whole) snprintf(what + strlen(what), 16, " whole panel");
  for (int rep = 0; rep < 2 && s; rep++) { /* repeatable */
    ovl_dmat_fill(D2, OVL_FILL_ZERO, 0);
    ovl_dmat_fill(D3, OVL_FILL_ZERO, 0);
    T_OK(ovl_ssc_run(s, D, D2, D3, NULL));
    check(g, D, D2, D3, what);
  }
  ovl_ssc_destroy(&s);
  T_CHECK(s == NULL, "destroy nulls");
  ovl_dmat_destroy(&D);
  ovl_dmat_destroy(&D2);
  ovl_dmat_destroy(&D3);
}

/* Alg. 5 in arrival order (phase 1's sum, phase 2's products and phase 3's
 * reductions by lane as they complete) against the same plan in order, on
 * plane 0: bit for bit with one lane, equal up to rounding with several;
 * the same bytes moved. */
static void arrival_vs_order(ovl_grid3d g, int64_t n, int ndup, ovl_backend be) {
  ovl_grid2d pl = ovl_grid3d_plane(g);
  ovl_dmat D = NULL, D2[2] = {NULL, NULL}, D3[2] = {NULL, NULL};
  T_OK(ovl_dmat_create(pl, n, n, &D));
  ovl_dmat_fill(D, OVL_FILL_SYMMETRIC, 77 + (uint64_t)n);
  ovl_kstats st[2];
  for (int a = 0; a < 2; a++) {
    T_OK(ovl_dmat_create(pl, n, n, &D2[a]));
    T_OK(ovl_dmat_create(pl, n, n, &D3[a]));
    ovl_plan plan = ovl_plan_default(OVL_ALGO_SSC5, n, 0);
    plan.ndup = ndup, plan.coll.backend = be, plan.arrival = a;
    ovl_ssc s = NULL;
    T_OK(ovl_ssc_create(g, &plan, &s));
    if (s) T_OK(ovl_ssc_run(s, D, D2[a], D3[a], &st[a]));
    else memset(&st[a], 0, sizeof st[a]);
    ovl_ssc_destroy(&s);
  }
  int i, j, k;
  ovl_grid3d_coords(g, &i, &j, &k);
  double d[4] = {0, 0, 0, 0}; /* the largest difference and element of D^2, then of D^3 */
  if (ovl_grid3d_active(g) && k == 0) {
    int64_t nloc = ovl_dmat_local_rows(D) * ovl_dmat_local_cols(D);
    for (int m = 0; m < 2; m++) {
      const double *x = ovl_dmat_data(m ? D3[1] : D2[1]), *r = ovl_dmat_data(m ? D3[0] : D2[0]);
      for (int64_t e = 0; e < nloc; e++) {
        d[2 * m] = fmax(d[2 * m], fabs(x[e] - r[e]));
        d[2 * m + 1] = fmax(d[2 * m + 1], fabs(r[e]));
      }
    }
  }
  MPI_Allreduce(MPI_IN_PLACE, d, 4, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  for (int m = 0; m < 2; m++) {
    if (ndup == 1)
      T_CHECK(d[2 * m] == 0, "alg5 n=%lld one lane: D^%d in arrival order differs from in order by %.3e", (long long)n,
              m + 2, d[2 * m]);
    else
      T_CHECK(d[2 * m] <= 1e-13 * fmax(1, d[2 * m + 1]),
              "alg5 n=%lld ndup=%d: D^%d in arrival order differs from in order by %.3e (largest %.3e)", (long long)n,
              ndup, m + 2, d[2 * m], d[2 * m + 1]);
  }
  T_CHECK(st[0].bytes == st[1].bytes, "alg5 n=%lld ndup=%d: %lld bytes in arrival order, %lld in order", (long long)n,
          ndup, (long long)st[1].bytes, (long long)st[0].bytes);
  for (int a = 0; a < 2; a++) ovl_dmat_destroy(&D2[a]), ovl_dmat_destroy(&D3[a]);
  ovl_dmat_destroy(&D);
}

/* Two instances of different sizes, interleaved. */
static void two_instances(ovl_grid3d g, ovl_algo alg) {
  ovl_grid2d pl = ovl_grid3d_plane(g);
  int64_t ns[2] = {9, 23};
  ovl_dmat D[2], D2[2], D3[2];
  ovl_ssc s[2];
  for (int x = 0; x < 2; x++) {
    ovl_dmat_create(pl, ns[x], ns[x], &D[x]);
    ovl_dmat_create(pl, ns[x], ns[x], &D2[x]);
    ovl_dmat_create(pl, ns[x], ns[x], &D3[x]);
    ovl_dmat_fill(D[x], OVL_FILL_SYMMETRIC, 100 + (uint64_t)x);
    ovl_plan plan = ovl_plan_default(alg, ns[x], 0);
    plan.ndup = 2;
    T_OK(ovl_ssc_create(g, &plan, &s[x]));
  }
  for (int rep = 0; rep < 2; rep++)
    for (int x = 1; x >= 0; x--) {
      T_OK(ovl_ssc_run(s[x], D[x], D2[x], D3[x], NULL));
      check(g, D[x], D2[x], D3[x], "two instances");
    }
  for (int x = 0; x < 2; x++) {
    ovl_ssc_destroy(&s[x]);
    ovl_dmat_destroy(&D[x]), ovl_dmat_destroy(&D2[x]), ovl_dmat_destroy(&D3[x]);
  }
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int P;
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  /* 61: uneven blocks large enough for rendezvous transfers (which ASan sees) */
  int64_t ns[] = {1, 2, 7, 30, 61};
  int ndups[] = {1, 2, 3, 4, 7};
  ovl_grid3d g = NULL;
  T_OK(ovl_grid3d_create(MPI_COMM_WORLD, 0, 0, OVL_GRID_ALLOW_IDLE, &g));
  for (int alg = 3; alg <= 6; alg++)
    for (int b = 0; b < 2; b++)
      for (int d = 0; d < 5; d++)
        for (size_t x = 0; x < sizeof ns / sizeof ns[0]; x++) {
          if (alg != 5 && d > 0 && ndups[d] != 4) continue; /* Alg 3/4/6: N_DUP 1 and 4 */
          run(g, ns[x], (ovl_algo)(OVL_ALGO_SSC3 + alg - 3), ndups[d], b ? OVL_BACKEND_OWN : OVL_BACKEND_MPI, 0);
        }
  for (int b = 0; b < 2; b++) /* Alg. 5 waiting for whole phases */
    for (size_t x = 0; x < sizeof ns / sizeof ns[0]; x++)
      run(g, ns[x], OVL_ALGO_SSC5, 3, b ? OVL_BACKEND_OWN : OVL_BACKEND_MPI, 1);
  for (int d = 0; d < 5; d++) /* arrival order against in order */
    for (size_t x = 0; x < sizeof ns / sizeof ns[0]; x++)
      arrival_vs_order(g, ns[x], ndups[d], d % 2 ? OVL_BACKEND_OWN : OVL_BACKEND_MPI);
  two_instances(g, OVL_ALGO_SSC5);
  ovl_grid3d_destroy(&g);
  /* 2.5D grids that fit: 2x2x1 (4 ranks), 2x2x2 (8), and a refusal */
  if (P >= 4) {
    T_OK(ovl_grid3d_create(MPI_COMM_WORLD, 2, 1, OVL_GRID_ALLOW_IDLE, &g));
    for (int d = 0; d < 2; d++)
      for (size_t x = 0; x < sizeof ns / sizeof ns[0]; x++) run(g, ns[x], OVL_ALGO_SSC6, d ? 4 : 1, OVL_BACKEND_OWN, 0);
    ovl_ssc s = NULL;
    T_ERR(ssc_create_n(g, 10, OVL_ALGO_SSC5, 1, &s), OVL_ERR_GRID);
    ovl_grid3d_destroy(&g);
  }
  T_OK(ovl_grid3d_create(MPI_COMM_WORLD, 1, 1, OVL_GRID_ALLOW_IDLE, &g));
  ovl_ssc s = NULL;
  T_ERR(ssc_create_n(g, 10, OVL_ALGO_SSC5, 0, &s), OVL_ERR_ARG);
  T_ERR(ssc_create_n(g, 10, OVL_ALGO_SUMMA, 1, &s), OVL_ERR_ARG);
  T_ERR(ssc_create_n(g, 10, OVL_ALGO_N, 1, &s), OVL_ERR_ARG);
  T_ERR(ssc_create_n(g, -1, OVL_ALGO_SSC4, 1, &s), OVL_ERR_ARG);
  ovl_grid3d_destroy(&g);
  T_CHECK(ovl_req_live() == 0, "leaked %lld requests", (long long)ovl_req_live());
  int rc = t_finish("test_ssc");
  MPI_Finalize();
  return rc;
}
