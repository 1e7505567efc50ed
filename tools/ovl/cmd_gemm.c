/* ovl gemm: distributed matrix multiplication with verification and timings. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const char *const k_algos[] = {"summa", NULL};
static const char *const k_checks[] = {"auto", "exact", "prob", NULL};
static const char *const k_backends[] = {"mpi", "own", NULL};
static const char *const k_bcasts[] = {"auto", "binomial", "scatter-allgather", "chain", "hier", NULL};

int cmd_gemm(int argc, char **argv) {
  int help = 0, check = 0, json = 0, quiet = 0, allow_idle = 0, iters = 5, warmup = 1, no_blas_check = 0;
  int64_t n = 1024, m = -1, k = -1, b = 256, seed = 42;
  double alpha = 1.0, beta = 0.0, tol = -1.0;
  const char *algo = "summa", *grid = NULL, *check_mode = "auto", *backend = "mpi", *bcast = "auto";
  int ndup = 1;
  ovl_opt opts[] = {
      {"algo", 'a', OVL_OPT_CHOICE, &algo, "NAME", "algorithm", k_algos, 0, -1},
      {"n", 'n', OVL_OPT_SIZE, &n, "N", "matrix size (C is m x n, A m x k, B k x n; m = k = n unless given)", NULL,
       0, (int64_t)1 << 40},
      {"m", 0, OVL_OPT_SIZE, &m, "M", "rows of A and C (default: n)", NULL, 0, (int64_t)1 << 40},
      {"k", 0, OVL_OPT_SIZE, &k, "K", "inner dimension (default: n)", NULL, 0, (int64_t)1 << 40},
      {"block", 'b', OVL_OPT_SIZE, &b, "B", "panel width (SUMMA)", NULL, 1, (int64_t)1 << 40},
      {"grid", 'g', OVL_OPT_STRING, &grid, "PxQ", "process grid (default: most square for the rank count)", NULL, 0,
       -1},
      {"ndup", 'd', OVL_OPT_INT, &ndup, "N", "lanes (N_DUP) per panel broadcast", NULL, 1, OVL_LANES_MAX},
      {"backend", 0, OVL_OPT_CHOICE, &backend, "B", "collectives: the MPI library's or ovl's own", k_backends, 0, -1},
      {"bcast-alg", 0, OVL_OPT_CHOICE, &bcast, "A", "broadcast algorithm of the own back end", k_bcasts, 0, -1},
      {"allow-idle", 0, OVL_OPT_FLAG, &allow_idle, NULL, "let ranks that do not fit the grid stay idle", NULL, 0, -1},
      {"iterations", 'i', OVL_OPT_INT, &iters, "I", "timed repetitions", NULL, 1, 1000000},
      {"warmup", 'x', OVL_OPT_INT, &warmup, "X", "untimed warm-up repetitions", NULL, 0, 1000000},
      {"alpha", 0, OVL_OPT_DOUBLE, &alpha, "A", "alpha", NULL, 0, -1},
      {"beta", 0, OVL_OPT_DOUBLE, &beta, "B", "beta", NULL, 0, -1},
      {"seed", 's', OVL_OPT_I64, &seed, "S", "seed of the random operands", NULL, 0, INT64_MAX},
      {"check", 'c', OVL_OPT_FLAG, &check, NULL, "verify the result", NULL, 0, -1},
      {"check-mode", 0, OVL_OPT_CHOICE, &check_mode, "MODE",
       "exact: serial dgemm on gathered data; prob: C x vs A (B x); auto: exact when small", k_checks, 0, -1},
      {"tol", 0, OVL_OPT_DOUBLE, &tol, "T", "verification tolerance (default: 16 k eps)", NULL, 0, -1},
      {"json", 'j', OVL_OPT_FLAG, &json, NULL, "print one JSON object per run instead of the table", NULL, 0, -1},
      {"no-blas-check", 0, OVL_OPT_FLAG, &no_blas_check, NULL, "skip the local dgemm rate check", NULL, 0, -1},
      {"quiet", 'q', OVL_OPT_FLAG, &quiet, NULL, "print only the result line", NULL, 0, -1},
      {"help", 'h', OVL_OPT_FLAG, &help, NULL, "show this help", NULL, 0, -1},
  };
  const int nopts = (int)(sizeof opts / sizeof opts[0]);
  int prc = cli_parse("usage: mpiexec -n P ovl gemm [options]\n\n"
                      "Computes C = alpha*A*B + beta*C for random A, B, C on a p x q process grid and reports the\n"
                      "time per repetition (MAX over ranks; min/median/max over repetitions) and GFLOP/s.",
                      opts, nopts, argc, argv, 2, &help, NULL);
  if (prc >= 0) return prc;
  if (m < 0) m = n;
  if (k < 0) k = n;
  if (tol < 0) tol = 16.0 * (double)(k > 1 ? k : 1) * 2.220446049250313e-16;

  int dims[3] = {0, 0, 0}, nd = 2;
  ovl_err rc = OVL_OK;
  if (grid) {
    rc = ovl_parse_dims(grid, dims, &nd);
    if (rc == OVL_OK && nd != 2) rc = ovl_err_set(OVL_ERR_ARG, "--grid for gemm is PxQ, got '%s'", grid);
  }
  if ((rc = ovl_err_agree(MPI_COMM_WORLD, rc)) != OVL_OK) return cli_fail("gemm", rc);
  if (quiet) ovl_log_set_level(OVL_LOG_QUIET);

  double blas = no_blas_check ? 0.0 : ovl_check_local_blas(MPI_COMM_WORLD, 0);
  ovl_grid2d g = NULL;
  ovl_dmat A = NULL, B = NULL, C = NULL, C0 = NULL;
  if ((rc = ovl_grid2d_create(MPI_COMM_WORLD, dims[0], dims[1], allow_idle ? OVL_GRID_ALLOW_IDLE : 0, &g)))
    return cli_fail("gemm", rc);
  int p, q, P = 0;
  ovl_grid2d_dims(g, &p, &q);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  rc = ovl_dmat_create(g, m, k, &A);
  if (!rc) rc = ovl_dmat_create(g, k, n, &B);
  if (!rc) rc = ovl_dmat_create(g, m, n, &C);
  if (!rc && beta != 0.0) rc = ovl_dmat_create(g, m, n, &C0);
  if (!rc) {
    ovl_dmat_fill(A, OVL_FILL_RANDOM, (uint64_t)seed);
    ovl_dmat_fill(B, OVL_FILL_RANDOM, (uint64_t)seed + 1);
    if (C0) ovl_dmat_fill(C0, OVL_FILL_RANDOM, (uint64_t)seed + 2);
  }
  ovl_summa_plan plan = ovl_summa_plan_default(b);
  plan.ndup = ndup;
  ovl_backend_parse(backend, &plan.coll.backend);
  ovl_alg_parse("bcast", bcast, &plan.coll.bcast);
  char planstr[128];
  ovl_summa_plan_str(&plan, planstr, sizeof planstr);
  if (!rc && !json)
    ovl_log(OVL_LOG_INFO,
            "# ovl gemm: %s, m=%" PRId64 " n=%" PRId64 " k=%" PRId64 ", grid %dx%d (%d of %d ranks active), %s\n"
            "# MPI: %s; local dgemm %.1f GFLOP/s per rank\n"
            "# time per repetition = MAX over ranks; %d warm-up + %d timed repetitions\n",
            algo, m, n, k, p, q, p * q, P, planstr, cli_mpi_library(), blas, warmup, iters);
  double times[1000] = {0};
  int nt = iters < 1000 ? iters : 1000;
  ovl_kstats ks = {0}, kacc = {0};
  for (int it = 0; !rc && it < warmup + nt; it++) {
    if (C0) ovl_dmat_copy(C, C0);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = ovl_time();
    rc = ovl_summa(alpha, A, B, beta, C, &plan, &ks);
    double t = ovl_time() - t0;
    if (it >= warmup) {
      times[it - warmup] = t;
      kacc.t_comm += ks.t_comm;
      kacc.t_comp += ks.t_comp;
      kacc.bytes += ks.bytes;
    }
  }
  double relerr = -1.0;
  ovl_err vrc = OVL_OK;
  if (!rc && check) {
    ovl_verify_mode mode = strcmp(check_mode, "exact") == 0   ? OVL_VERIFY_EXACT
                           : strcmp(check_mode, "prob") == 0 ? OVL_VERIFY_PROBABILISTIC
                                                             : OVL_VERIFY_AUTO;
    vrc = ovl_verify_gemm(alpha, A, B, beta, C0, C, mode, tol, &relerr);
    if (vrc != OVL_OK && vrc != OVL_ERR_NUMERIC) rc = vrc;
  }
  int exitc = CLI_OK;
  if (rc) {
    exitc = cli_fail("gemm", rc);
  } else {
    ovl_stats s;
    ovl_stats_max_over_ranks(MPI_COMM_WORLD, times, nt, &s);
    double comm[2] = {kacc.t_comm / nt, kacc.t_comp / nt};
    MPI_Allreduce(MPI_IN_PLACE, comm, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    double flops = 2.0 * (double)m * (double)n * (double)k;
    const char *verdict = !check ? "not checked" : (vrc == OVL_OK ? "PASS" : "FAIL");
    if (json) {
      ovl_log(OVL_LOG_QUIET,
              "{\"bench\":\"gemm\",\"algo\":\"%s\",\"m\":%" PRId64 ",\"n\":%" PRId64 ",\"k\":%" PRId64
              ",\"ranks\":%d,\"grid\":\"%dx%d\",\"plan\":\"%s\",\"iterations\":%d,\"t_min\":%.6e,\"t_median\":%.6e,"
              "\"t_max\":%.6e,\"gflops_median\":%.4f,\"gflops_best\":%.4f,\"t_comm\":%.6e,\"t_comp\":%.6e,"
              "\"local_dgemm_gflops\":%.3f,\"check\":\"%s\",\"relerr\":%.3e,\"mpi\":\"%s\"}\n",
              algo, m, n, k, P, p, q, planstr, nt, s.min, s.median, s.max, s.median > 0 ? flops / s.median * 1e-9 : 0,
              s.min > 0 ? flops / s.min * 1e-9 : 0, comm[0], comm[1], blas, verdict, relerr, cli_mpi_library());
    } else {
      ovl_log(OVL_LOG_QUIET, "# %-8s %10s %10s %10s %12s %12s %10s %10s %s\n", "algo", "t_min(s)", "t_med(s)",
              "t_max(s)", "GFLOP/s_med", "GFLOP/s_best", "comm(s)", "comp(s)", "check");
      ovl_log(OVL_LOG_QUIET, "  %-8s %10.4e %10.4e %10.4e %12.2f %12.2f %10.3e %10.3e %s", algo, s.min, s.median,
              s.max, s.median > 0 ? flops / s.median * 1e-9 : 0, s.min > 0 ? flops / s.min * 1e-9 : 0, comm[0],
              comm[1], verdict);
      if (check) ovl_log(OVL_LOG_QUIET, " (relerr %.2e, tol %.2e)", relerr, tol);
      ovl_log(OVL_LOG_QUIET, "\n");
    }
    if (vrc != OVL_OK) exitc = cli_fail("gemm", vrc);
  }
  ovl_dmat_destroy(&A);
  ovl_dmat_destroy(&B);
  ovl_dmat_destroy(&C);
  ovl_dmat_destroy(&C0);
  ovl_grid2d_destroy(&g);
  return exitc;
}
