/* ovl gemm: distributed matrix multiplication with verification and timings. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const char *const k_checks[] = {"auto", "exact", "prob", NULL};
static const char *const k_trans[] = {"N", "T", NULL};

int cmd_gemm(int argc, char **argv) {
  int help = 0, check = 0, json = 0, quiet = 0, allow_idle = 0, iters = 5, warmup = 1, no_blas_check = 0;
  int64_t n = 1024, m = -1, k = -1, seed = 42, mem_limit = 0;
  double alpha = 1.0, beta = 0.0, tol = NAN;
  const char *check_mode = "auto", *ta = "N", *tb = "N", *trace = NULL;
  ovl_plan_optvals pv = {.algo = "summa", .backend = "mpi", .bcast = "auto"};
  const ovl_opt own[] = {
      {"size", 'n', OVL_OPT_SIZE, &n, "N", "matrix size (C is m x n, op(A) m x k, op(B) k x n; m = k = n unless given)",
       NULL, 0, (int64_t)1 << 40},
      {"n", 0, OVL_OPT_SIZE, &n, "N", NULL, NULL, 0, (int64_t)1 << 40},
      {"m", 0, OVL_OPT_SIZE, &m, "M", "rows of op(A) and C (default: n)", NULL, 0, (int64_t)1 << 40},
      {"k", 0, OVL_OPT_SIZE, &k, "K", "inner dimension (default: n)", NULL, 0, (int64_t)1 << 40},
      {"transa", 0, OVL_OPT_CHOICE, &ta, "T", "op(A)", k_trans, 0, -1},
      {"transb", 0, OVL_OPT_CHOICE, &tb, "T", "op(B)", k_trans, 0, -1},
      {"allow-idle", 0, OVL_OPT_FLAG, &allow_idle, NULL, "let ranks that do not fit the grid stay idle", NULL, 0, -1},
      {"mem-limit", 'M', OVL_OPT_SIZE, &mem_limit, "BYTES",
       "refuse to run above this many bytes per rank (default: the node's available memory)", NULL, 0, INT64_MAX},
      {"iterations", 'i', OVL_OPT_INT, &iters, "I", "timed repetitions", NULL, 1, 1000},
      {"warmup", 'x', OVL_OPT_INT, &warmup, "X", "untimed warm-up repetitions", NULL, 0, 1000000},
      {"alpha", 0, OVL_OPT_DOUBLE, &alpha, "A", "alpha", NULL, 0, -1},
      {"beta", 0, OVL_OPT_DOUBLE, &beta, "B", "beta", NULL, 0, -1},
      {"seed", 's', OVL_OPT_I64, &seed, "S", "seed of the random operands", NULL, 0, INT64_MAX},
      {"check", 'c', OVL_OPT_FLAG, &check, NULL, "verify the result", NULL, 0, -1},
      {"check-mode", 0, OVL_OPT_CHOICE, &check_mode, "MODE",
       "exact: serial dgemm on gathered data; prob: C x vs A (B x); auto: exact when small", k_checks, 0, -1},
      {"tol", 0, OVL_OPT_DOUBLE, &tol, "T", "verification tolerance (default: 16 k eps)", NULL, 0, -1},
      {"trace", 't', OVL_OPT_STRING, &trace, "PREFIX",
       "trace the timed repetitions: PREFIX.json (Chrome trace / Perfetto) and PREFIX.csv", NULL, 0, -1},
      {"json", 'j', OVL_OPT_FLAG, &json, NULL, "print one JSON object instead of the table", NULL, 0, -1},
      {"no-blas-check", 0, OVL_OPT_FLAG, &no_blas_check, NULL, "skip the local dgemm rate check", NULL, 0, -1},
      {"quiet", 'q', OVL_OPT_FLAG, &quiet, NULL, "print only the result line", NULL, 0, -1},
      {"help", 'h', OVL_OPT_FLAG, &help, NULL, "show this help", NULL, 0, -1},
  };
  ovl_opt opts[64];
  unsigned char given[64];
  int nopts = ovl_plan_opts(OVL_FAMILY_GEMM, &pv, opts, 64);
  for (size_t o = 0; o < sizeof own / sizeof own[0]; o++) opts[nopts++] = own[o];
  int prc = cli_parse("usage: mpiexec -n P ovl gemm [options]\n\n"
                      "Computes C = alpha*op(A)*op(B) + beta*C for random A, B, C with the chosen algorithm and\n"
                      "reports the time per repetition (MAX over ranks; min/median/max over repetitions), GFLOP/s,\n"
                      "and the seconds spent communicating and in local dgemm.",
                      opts, nopts, argc, argv, 2, &help, given);
  if (prc >= 0) return prc;
  ovl_err rc = OVL_OK;
  for (int o = 0; o < nopts && !rc; o++) /* the verification's options need it */
    if (given[o] && !check && (opts[o].dest == &tol || opts[o].dest == &check_mode))
      rc = ovl_err_set(OVL_ERR_ARG, "--%s applies to --check only: refused rather than ignored", opts[o].lname);
  for (int o = 0; o < nopts && !rc;
       o++) /* the drop-in's policy: a ScaLAPACK program's OVL_OPTIONS, not a benchmark's */
    if (given[o] && (opts[o].dest == (void *)&pv.dropin_min || opts[o].dest == (void *)&pv.dropin_mem ||
                     opts[o].dest == (void *)&pv.dropin_route))
      rc = ovl_err_set(OVL_ERR_ARG,
                       "--%s applies to ovl_pdgemm and the ScaLAPACK drop-in only (in their OVL_OPTIONS): refused "
                       "rather than ignored",
                       opts[o].lname);
  if (!rc && !isnan(tol) && !(tol > 0))
    rc = ovl_err_set(OVL_ERR_ARG, "--tol must be > 0, got %g (leave it out for the default, 16 k eps)", tol);
  if ((rc = ovl_err_agree(MPI_COMM_WORLD, rc)) != OVL_OK) return cli_usage_fail("gemm", rc);
  if (m < 0) m = n;
  if (k < 0) k = n;
  int P = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &P);

  /* ---- the plan: the options are constraints, the planner completes them ---- */
  int64_t big = m > n ? (m > k ? m : k) : (n > k ? n : k);
  ovl_plan plan = ovl_plan_auto(OVL_FAMILY_GEMM, big);
  rc = ovl_err_agree(MPI_COMM_WORLD, ovl_plan_opts_apply(OVL_FAMILY_GEMM, &pv, &plan));
  if (rc != OVL_OK) return cli_usage_fail("gemm", rc);
  int was_auto = plan.algo == OVL_ALGO_AUTO;
  {
    char tj[4200], tc[4200];
    const char *inputs[] = {pv.machine, pv.tune_file};
    const cli_out outs[] = {{cli_join(tj, sizeof tj, trace, ".json"), "trace"},
                            {cli_join(tc, sizeof tc, trace, ".csv"), "trace"}};
    int orc = cli_check_outputs("gemm", outs, 2, inputs, 2);
    if (orc >= 0) return orc;
  }
  char why[OVL_PLAN_WHY] = "";
  ovl_plan_src psrc = {pv.machine, pv.tune_file};
  rc = ovl_plan_resolve(MPI_COMM_WORLD, OVL_FAMILY_GEMM, &plan, &psrc, why, sizeof why);
  if (rc != OVL_OK) return cli_fail("gemm", rc);
  if (was_auto && !json && !quiet) {
    char cs[96];
    ovl_plan_short(&plan, cs, sizeof cs);
    ovl_log(OVL_LOG_INFO, "# auto: %s (%s)\n", cs, why);
  }
  if (quiet) ovl_log_set_level(OVL_LOG_QUIET);
  double blas = no_blas_check ? NAN : ovl_check_local_blas(MPI_COMM_WORLD, 0);
  ovl_plan_bench_params bp = ovl_plan_bench_default(&plan, m, n, k);
  bp.transa = ta[0], bp.transb = tb[0], bp.alpha = alpha, bp.beta = beta, bp.seed = (uint64_t)seed;
  bp.iters = iters, bp.warmup = warmup, bp.allow_idle = allow_idle, bp.mem_limit = mem_limit, bp.check = check;
  bp.check_mode = !strcmp(check_mode, "exact")  ? OVL_VERIFY_EXACT
                  : !strcmp(check_mode, "prob") ? OVL_VERIFY_PROBABILISTIC
                                                : OVL_VERIFY_AUTO;
  bp.tol = isnan(tol) ? -1.0 : tol, bp.trace = trace;
  ovl_plan_bench_result r;
  if ((rc = ovl_plan_bench(&bp, &r)) != OVL_OK) return cli_fail("gemm", rc);
  const ovl_bench_print_opts po = {.json = json, .header = !quiet};
  if (ovl_world_rank() == 0 && (rc = ovl_plan_bench_print(stdout, &bp, &r, blas, &po)) != OVL_OK)
    return cli_fail("gemm", rc);
  if (check && !r.passed) {
    ovl_err_set(OVL_ERR_NUMERIC, "the product differs from the reference by %.2e (tolerance %.2e)", r.relerr, r.tol);
    return cli_fail("gemm", OVL_ERR_NUMERIC);
  }
  return CLI_OK;
}
