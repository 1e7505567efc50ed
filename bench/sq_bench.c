/* Symmetric square against the general kernels, interleaved in one program:
 *   sq-double, sq-single  ovl_sq_run (X^2, n^3 flops)
 *   mm25d                 ovl_mm25d(D, D) (D^2 as a general product, 2 n^3 flops)
 *   ssc                   ovl_ssc_run (D^2 and D^3, two products, 4 n^3 flops)
 * on the same s x s x c grid. Each repetition runs the kernels once in that
 * order; the time of a run is the slowest rank's. Prints min and median,
 * and for the last repetition the slowest rank's compute and communication
 * seconds (ovl_kstats) and the bytes counted by all ranks.
 *
 *   mpiexec -n 8 bench/sq_bench -n 2000 -r 5 [-c 2] [-d 4] [-a alg6]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ovl/ovl.h"

enum { K_SQD, K_SQS, K_MM, K_SSC, K_COUNT };

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static void die(ovl_err rc, const char *what) {
  if (rc == OVL_OK) return;
  fprintf(stderr, "sq_bench: %s: %s\n", what, ovl_errmsg());
  MPI_Abort(MPI_COMM_WORLD, 1);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, P;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  int64_t n = 1000;
  int reps = 5, c = 0, ndup = ovl_knob_default_int(OVL_KNOB_NDUP, OVL_FAMILY_SQ), opt;
  ovl_algo alg = OVL_ALGO_SSC6;
  while ((opt = getopt(argc, argv, "n:r:c:d:a:")) != -1) {
    if (opt == 'n') n = atoll(optarg);
    else if (opt == 'r') reps = atoi(optarg);
    else if (opt == 'c') c = atoi(optarg);
    else if (opt == 'd') ndup = atoi(optarg);
    else if (opt == 'a') die(ovl_algo_parse(optarg, &alg), "-a");
    else {
      if (rank == 0) fprintf(stderr, "usage: sq_bench [-n N] [-r reps] [-c c] [-d ndup] [-a alg5|alg6]\n");
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
  }
  if (reps < 1 || reps > 1000) reps = 5;
  ovl_grid3d g = NULL;
  int s = 0;
  if (c > 0) s = ovl_isqrt(P / c); /* s from P and c: the largest s with s^2 c <= P */
  die(ovl_grid3d_create(MPI_COMM_WORLD, s, c, OVL_GRID_ALLOW_IDLE, &g), "grid");
  ovl_grid3d_dims(g, &s, &c);
  ovl_grid2d pl = ovl_grid3d_plane(g);
  ovl_dmat D, D2, D3, C;
  die(ovl_dmat_create(pl, n, n, &D), "matrix");
  die(ovl_dmat_create(pl, n, n, &D2), "matrix");
  die(ovl_dmat_create(pl, n, n, &D3), "matrix");
  die(ovl_dmat_create(pl, n, n, &C), "matrix");
  ovl_dmat_fill(D, OVL_FILL_SYMMETRIC, 42);
  ovl_sq sq = NULL;
  ovl_ssc ssc = NULL;
  die(ovl_sq_create(g, n, ndup, NULL, &sq), "sq");
  ovl_plan sp = ovl_plan_default(alg, n, 0);
  sp.ndup = ndup;
  die(ovl_ssc_create(g, &sp, &ssc), "ssc");
  ovl_plan plan = ovl_plan_gemm(OVL_ALGO_25D, ovl_knob_default(OVL_KNOB_BLOCK, OVL_FAMILY_GEMM));
  plan.ndup = ndup;
  double *t = calloc((size_t)(K_COUNT * reps), sizeof(double));
  double tr[K_COUNT] = {0};
  ovl_kstats st[K_COUNT];
  memset(st, 0, sizeof st);
  for (int r = 0; r < reps; r++)
    for (int k = 0; k < K_COUNT; k++) {
      MPI_Barrier(MPI_COMM_WORLD);
      double t0 = MPI_Wtime();
      if (k == K_SQD) die(ovl_sq_run(sq, D, D2, OVL_PREC_DOUBLE, &tr[k], &st[k]), "sq double");
      else if (k == K_SQS) die(ovl_sq_run(sq, D, D2, OVL_PREC_SINGLE, &tr[k], &st[k]), "sq single");
      else if (k == K_MM) die(ovl_mm25d(g, 1.0, D, D, 0.0, C, &plan, &st[k]), "mm25d");
      else die(ovl_ssc_run(ssc, D, D2, D3, &st[k]), "ssc");
      double dt = MPI_Wtime() - t0;
      MPI_Allreduce(MPI_IN_PLACE, &dt, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      t[k * reps + r] = dt;
    }
  /* last repetition: slowest rank's compute and communication times, bytes of all ranks */
  double tcomp[K_COUNT], tcomm[K_COUNT];
  long long bytes[K_COUNT];
  for (int k = 0; k < K_COUNT; k++) tcomp[k] = st[k].t_comp, tcomm[k] = st[k].t_comm, bytes[k] = st[k].bytes;
  MPI_Allreduce(MPI_IN_PLACE, tcomp, K_COUNT, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, tcomm, K_COUNT, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, bytes, K_COUNT, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  double trc = 0;
  int ii, jj, kk;
  ovl_grid3d_coords(g, &ii, &jj, &kk);
  if (ovl_grid3d_active(g) && kk == 0) ovl_dmat_trace(C, &trc);
  if (rank == 0) {
    static const char *const names[] = {"sq-double", "sq-single", "mm25d(D,D)", NULL};
    double flops[K_COUNT] = {1, 1, 2, 4}; /* times n^3 */
    char ssc_name[32];
    snprintf(ssc_name, sizeof ssc_name, "ssc-%s(D2,D3)", ovl_algo_name(alg));
    printf("# n=%lld grid=%dx%dx%d ranks=%d ndup=%d reps=%d; GFLOP/s with n^3 per symmetric square, 2n^3 per "
           "product\n",
           (long long)n, s, s, c, P, ndup, reps);
    printf("%-18s %10s %10s %10s %10s %10s %10s %12s\n", "kernel", "min_s", "median_s", "GF/s(min)", "GF/s(med)",
           "comp_s", "comm_s", "bytes");
    for (int k = 0; k < K_COUNT; k++) {
      double *v = t + k * reps;
      qsort(v, (size_t)reps, sizeof(double), cmp_double);
      double med = reps % 2 ? v[reps / 2] : 0.5 * (v[reps / 2 - 1] + v[reps / 2]);
      double f = flops[k] * (double)n * (double)n * (double)n * 1e-9;
      printf("%-18s %10.4f %10.4f %10.2f %10.2f %10.4f %10.4f %12lld\n", names[k] ? names[k] : ssc_name, v[0], med,
             f / v[0], f / med, tcomp[k], tcomm[k], bytes[k]);
    }
    printf("# tr(D^2): sq-double %.15g, sq-single %.9g, mm25d %.15g\n", tr[K_SQD], tr[K_SQS], trc);
  }
  free(t);
  ovl_sq_destroy(&sq);
  ovl_ssc_destroy(&ssc);
  ovl_dmat_destroy(&D), ovl_dmat_destroy(&D2), ovl_dmat_destroy(&D3), ovl_dmat_destroy(&C);
  ovl_grid3d_destroy(&g);
  MPI_Finalize();
  return 0;
}
