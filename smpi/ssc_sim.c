/* ssc_sim: time SymmSquareCube (D -> D^2, D^3) for a random symmetric D, per
 * algorithm and N_DUP, as Huang & Chow's Tables I, II, III and V report it:
 * TFLOP/s = 2 products x 2 n^3 flop / time. Built in SMPI builds (smpi/, see
 * docs/smpi.md); it is an ordinary MPI program and runs under mpiexec too.
 *
 * usage: ssc_sim -n N [--algo alg3,alg4,alg5] [--ndup 1,2,4] [--grid SxSxC]
 *                [--backend own|mpi] [--reps R] [--warmup W] [--check]
 * Prints one line per (algorithm, N_DUP):
 *   alg ndup n grid ranks t_med(s) tflops t_comm(s) t_comp(s) check
 * The time of one run is the MAX over ranks; t_med is the median over runs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ovl/ovl.h"

#define MAXL 16

static int parse_list(const char *s, int *out, int max, int alg) {
  int n = 0;
  const char *p = s;
  while (*p && n < max) {
    if (alg && strncmp(p, "alg", 3) == 0) p += 3;
    char *end = NULL;
    long v = strtol(p, &end, 10);
    if (end == p) return -1;
    out[n++] = (int)v;
    p = *end == ',' ? end + 1 : end;
  }
  return n;
}

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* One (algorithm, N_DUP) on grid g: time it, check it, print a line on rank 0. */
static int run_one(ovl_grid3d g, int64_t n, ovl_algo alg, int ndup, ovl_backend be, int warm, int reps, int check,
                   int gs, int gc) {
  int rank, fails = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  ovl_grid2d pl = ovl_grid3d_plane(g);
  ovl_dmat D = NULL, D2 = NULL, D3 = NULL;
  ovl_dmat_create(pl, n, n, &D);
  ovl_dmat_create(pl, n, n, &D2);
  ovl_dmat_create(pl, n, n, &D3);
  ovl_dmat_fill(D, OVL_FILL_SYMMETRIC, 7);
  ovl_plan plan = ovl_plan_default(alg, n, 0);
  plan.ndup = ndup, plan.coll.backend = be;
  ovl_ssc sc = NULL;
  if (ovl_ssc_create(g, &plan, &sc) != OVL_OK) {
    if (rank == 0) fprintf(stderr, "ssc_sim: %s\n", ovl_errmsg());
    fails = 1;
  } else {
    double t[64], tc[64], tp[64];
    for (int r = 0; r < warm + reps; r++) {
      ovl_kstats st;
      memset(&st, 0, sizeof st);
      MPI_Barrier(MPI_COMM_WORLD);
      double t0 = MPI_Wtime();
      if (sc) ovl_ssc_run(sc, D, D2, D3, &st);
      double v[3] = {MPI_Wtime() - t0, st.t_comm, st.t_comp};
      MPI_Allreduce(MPI_IN_PLACE, v, 3, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      if (r >= warm) t[r - warm] = v[0], tc[r - warm] = v[1], tp[r - warm] = v[2];
    }
    qsort(t, (size_t)reps, sizeof(double), cmp_d);
    qsort(tc, (size_t)reps, sizeof(double), cmp_d);
    qsort(tp, (size_t)reps, sizeof(double), cmp_d);
    const char *verdict = "-";
    if (check) {
      int ok = 1, i, j, k;
      ovl_grid3d_coords(g, &i, &j, &k);
      if (ovl_grid3d_active(g) && k == 0) {
        double e2 = -1, e3 = -1, tol = 64.0 * (double)n * 2.2e-16;
        ovl_err r2 = ovl_verify_gemm(1.0, D, D, 0.0, NULL, D2, OVL_VERIFY_AUTO, tol, &e2);
        ovl_err r3 = ovl_verify_gemm(1.0, D, D2, 0.0, NULL, D3, OVL_VERIFY_AUTO, tol, &e3);
        ok = r2 == OVL_OK && r3 == OVL_OK;
        if (!ok && rank == 0) fprintf(stderr, "ssc_sim: check: relerr D^2 %.3e, D^3 %.3e: %s\n", e2, e3, ovl_errmsg());
      }
      MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
      verdict = ok ? "PASS" : "FAIL";
      fails += !ok;
    }
    if (rank == 0) {
      char grid[32];
      snprintf(grid, sizeof grid, "%dx%dx%d", gs, gs, gc);
      double tm = t[reps / 2];
      printf("  %s %4d %5lld %-10s %5d %12.6e %8.3f %11.4e %11.4e %s\n", ovl_algo_name(alg), ndup, (long long)n, grid,
             gs * gs * gc, tm, 4.0 * (double)n * (double)n * (double)n / tm / 1e12, tc[reps / 2], tp[reps / 2],
             verdict);
      fflush(stdout);
    }
  }
  ovl_ssc_destroy(&sc);
  ovl_dmat_destroy(&D);
  ovl_dmat_destroy(&D2);
  ovl_dmat_destroy(&D3);
  return fails;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, P;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  int64_t n = 1000;
  int algs[MAXL] = {5}, nalg = 1, ndups[MAXL] = {4}, nnd = 1, reps = 2, warm = 1, check = 0, s = 0, c = 0;
  ovl_backend be = OVL_BACKEND_OWN;
  for (int a = 1; a < argc; a++) {
    const char *v = a + 1 < argc ? argv[a + 1] : "";
    int bad = 0;
    if (!strcmp(argv[a], "-n")) n = atoll(v), a++;
    else if (!strcmp(argv[a], "--algo")) bad = (nalg = parse_list(v, algs, MAXL, 1)) <= 0, a++;
    else if (!strcmp(argv[a], "--ndup")) bad = (nnd = parse_list(v, ndups, MAXL, 0)) <= 0, a++;
    else if (!strcmp(argv[a], "--grid")) bad = sscanf(v, "%dx%dx%d", &s, &s, &c) != 3, a++;
    else if (!strcmp(argv[a], "--backend")) bad = ovl_backend_parse(v, &be) != OVL_OK, a++;
    else if (!strcmp(argv[a], "--reps")) reps = atoi(v), a++;
    else if (!strcmp(argv[a], "--warmup")) warm = atoi(v), a++;
    else if (!strcmp(argv[a], "--check")) check = 1;
    else bad = 1;
    if (bad || n < 1 || reps < 1 || reps > 64 || warm < 0) {
      if (rank == 0)
        fprintf(stderr,
                "ssc_sim: bad argument '%s'\nusage: ssc_sim -n N [--algo alg3,alg4,alg5,alg6] [--ndup 1,2,4] "
                "[--grid SxSxC] [--backend own|mpi] [--reps R] [--warmup W] [--check]\n",
                argv[a < argc ? a : argc - 1]);
      MPI_Finalize();
      return 2;
    }
  }
  int fails = 0;
  if (rank == 0) printf("# ssc_sim: %d ranks, n=%lld, backend %s\n", P, (long long)n, ovl_backend_name(be));
  if (rank == 0) printf("# alg ndup     n grid       ranks     t_med(s)   tflops   t_comm(s)   t_comp(s) check\n");
  for (int ia = 0; ia < nalg; ia++)
    for (int id = 0; id < nnd; id++) { /* a fresh grid each time: a grid caches a bounded number of lane sets */
      ovl_algo alg = (ovl_algo)(OVL_ALGO_SSC3 + algs[ia] - 3); /* --algo alg3..alg6 */
      int gs = s, gc = c;
      if (alg == OVL_ALGO_SSC6 && gs == 0) ovl_grid25d_dims(P, &gs, &gc);
      if (alg != OVL_ALGO_SSC6 && gc != gs) gs = gc = 0; /* Algorithms 3-5: the p^3 grid */
      ovl_grid3d g = NULL;
      ovl_err rc = ovl_grid3d_create(MPI_COMM_WORLD, gs, gc, OVL_GRID_ALLOW_IDLE, &g);
      if (rc != OVL_OK) {
        if (rank == 0) fprintf(stderr, "ssc_sim: grid: %s\n", ovl_errmsg());
        fails++;
        continue;
      }
      ovl_grid3d_dims(g, &gs, &gc);
      fails += run_one(g, n, alg, ndups[id], be, warm, reps, check, gs, gc);
      ovl_grid3d_destroy(&g);
    }
  MPI_Finalize();
  return fails ? 1 : 0;
}
