/* ovl through the library alone: measure the network, tune, and multiply
 * with the plan `auto` chooses.
 *
 *   mpiexec -n 4 ./plan_auto [n] [tune-file]
 *
 * 1. A ping-pong benchmark (ovl/bench.h) between rank 0 and rank P/2 and its
 *    Hockney fit: the latency and bandwidth the cost model works with.
 * 2. The tuner (ovl_tune, ovl/bench.h) times the cost model's best
 *    multiplication configurations for n on these ranks and stores the
 *    fastest in the tune file.
 * 3. A plan with everything left open (ovl_plan_auto) is resolved: the
 *    planner finds the tuner's entry; the plan names its grid, the program
 *    creates it, multiplies random matrices with ovl_gemm and verifies the
 *    product.
 * Every call is collective over MPI_COMM_WORLD and returns an ovl_err that
 * all ranks agree on. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ovl/ovl.h>

#define TRY(call)                                                                                                      \
  do {                                                                                                                 \
    ovl_err e_ = (call);                                                                                               \
    if (e_ != OVL_OK) {                                                                                                \
      if (rank == 0) fprintf(stderr, "plan_auto: %s failed: %s\n", #call, ovl_errmsg());                               \
      MPI_Finalize();                                                                                                  \
      return 1;                                                                                                        \
    }                                                                                                                  \
  } while (0)

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, P = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  int64_t n = argc > 1 ? atoll(argv[1]) : 256;
  const char *tune_file = argc > 2 ? argv[2] : "plan_auto.tune.json";

  /* 1. the network: ping-pong from 8 B to 64 KiB, and the Hockney fit */
  if (P >= 2) {
    ovl_bench_pingpong_params pp = ovl_bench_pingpong_default();
    pp.min_bytes = 8, pp.max_bytes = 65536, pp.iters = 50, pp.warmup = 5;
    ovl_bench_pingpong_result pr;
    TRY(ovl_bench_pingpong(&pp, &pr));
    ovl_bench_fit fit;
    ovl_bench_pingpong_fit(pr.rows, pr.nrows, 0, 0, 0, &fit);
    if (rank == 0) {
      printf("pingpong: %d sizes, 8 B in %.2f us, 64 KiB in %.2f us", pr.nrows, pr.rows[0].st.median * 1e6,
             pr.rows[pr.nrows - 1].st.median * 1e6);
      if (fit.status == 0)
        printf("; Hockney fit: latency %.2f us, bandwidth %.0f MB/s", fit.alpha * 1e6, 1e-6 / fit.beta);
      printf("\n");
    }
    ovl_bench_pingpong_free(&pr);
  }

  /* 2. the tuner: the model's best 3 configurations, timed, the fastest stored */
  ovl_tune_params tp = ovl_tune_default(OVL_FAMILY_GEMM, n);
  tp.rounds = 2, tp.src.tune_file = tune_file;
  ovl_tune_result tr;
  TRY(ovl_tune(MPI_COMM_WORLD, &tp, &tr));
  char best[128];
  ovl_plan_short(&tr.rows[tr.choice].plan, best, sizeof best);
  if (rank == 0)
    printf("tune: %d configurations, %d timed, fastest %s (%.3e s), stored in %s\n", tr.nrows, tr.ntuned, best,
           tr.rows[tr.choice].t_median_tuner, tr.stored);
  ovl_tune_result_free(&tr);

  /* 3. auto: the planner completes an open plan from the tune file */
  ovl_plan plan = ovl_plan_auto(OVL_FAMILY_GEMM, n);
  ovl_plan_src src = {NULL, tune_file};
  char why[OVL_PLAN_WHY], desc[256];
  TRY(ovl_plan_resolve(MPI_COMM_WORLD, OVL_FAMILY_GEMM, &plan, &src, why, sizeof why));
  ovl_plan_describe(&plan, desc, sizeof desc);
  if (rank == 0) printf("plan: %s (%s)\n", desc, why);
  ovl_grid2d g = NULL;
  ovl_grid3d g3 = NULL;
  TRY(ovl_plan_grids(MPI_COMM_WORLD, &plan, OVL_GRID_ALLOW_IDLE, &g, &g3));
  ovl_dmat A = NULL, B = NULL, C = NULL;
  TRY(ovl_dmat_create(g, n, n, &A));
  TRY(ovl_dmat_create(g, n, n, &B));
  TRY(ovl_dmat_create(g, n, n, &C));
  TRY(ovl_dmat_fill(A, OVL_FILL_RANDOM, 1));
  TRY(ovl_dmat_fill(B, OVL_FILL_RANDOM, 2));
  TRY(ovl_gemm('N', 'N', 1.0, A, B, 0.0, C, &plan, g3, NULL));
  /* verification on the plane that holds the operands (3D and 2.5D: plane k = 0) */
  double relerr = 0;
  int i = 0, j = 0, k = 0, on0 = ovl_grid2d_active(g);
  if (g3) ovl_grid3d_coords(g3, &i, &j, &k), on0 = ovl_grid3d_active(g3) && k == 0;
  ovl_err vrc = on0 ? ovl_verify_gemm(1.0, A, B, 0.0, NULL, C, OVL_VERIFY_AUTO, 1e-12, &relerr) : OVL_OK;
  MPI_Allreduce(MPI_IN_PLACE, &relerr, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  vrc = ovl_err_agree(MPI_COMM_WORLD, vrc);
  if (rank == 0)
    printf("gemm: n=%lld, relative error %.2e: %s\n", (long long)n, relerr, vrc == OVL_OK ? "PASS" : "FAIL");
  ovl_dmat_destroy(&A), ovl_dmat_destroy(&B), ovl_dmat_destroy(&C);
  if (g3) ovl_grid3d_destroy(&g3);
  else ovl_grid2d_destroy(&g);
  MPI_Finalize();
  return vrc == OVL_OK ? 0 : 1;
}
