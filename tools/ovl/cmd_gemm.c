/* ovl gemm: distributed matrix multiplication with verification and timings. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const char *const k_checks[] = {"auto", "exact", "prob", NULL};
static const char *const k_trans[] = {"N", "T", NULL};

int cmd_gemm(int argc, char **argv) {
  int help = 0, check = 0, json = 0, quiet = 0, allow_idle = 0, iters = 5, warmup = 1, no_blas_check = 0;
  int64_t n = 1024, m = -1, k = -1, seed = 42, mem_limit = 0;
  double alpha = 1.0, beta = 0.0, tol = -1.0;
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
  int nopts = ovl_plan_opts(OVL_FAMILY_GEMM, &pv, opts, 64);
  for (size_t o = 0; o < sizeof own / sizeof own[0]; o++) opts[nopts++] = own[o];
  int prc = cli_parse("usage: mpiexec -n P ovl gemm [options]\n\n"
                      "Computes C = alpha*op(A)*op(B) + beta*C for random A, B, C with the chosen algorithm and\n"
                      "reports the time per repetition (MAX over ranks; min/median/max over repetitions), GFLOP/s,\n"
                      "and the seconds spent communicating and in local dgemm.",
                      opts, nopts, argc, argv, 2, &help, NULL);
  if (prc >= 0) return prc;
  if (m < 0) m = n;
  if (k < 0) k = n;
  if (tol < 0) tol = 16.0 * (double)(k > 1 ? k : 1) * 2.220446049250313e-16;
  int P = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &P);

  /* ---- the plan: the options are constraints, the planner completes them ---- */
  int64_t big = m > n ? (m > k ? m : k) : (n > k ? n : k);
  ovl_plan plan = ovl_plan_auto(OVL_FAMILY_GEMM, big);
  ovl_err rc = ovl_err_agree(MPI_COMM_WORLD, ovl_plan_opts_apply(OVL_FAMILY_GEMM, &pv, &plan));
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
  /* an operand of more than 2^60 bytes (1 EiB) cannot be held anywhere, and
   * the memory estimate (up to 7 such blocks) must not overflow int64 */
  {
    const int64_t dim[3][2] = {{m, k}, {k, n}, {m, n}};
    for (int x = 0; x < 3 && rc == OVL_OK; x++)
      if (dim[x][1] > 0 && dim[x][0] > ((int64_t)1 << 57) / dim[x][1])
        rc = ovl_err_set(OVL_ERR_NOMEM, "a %" PRId64 " x %" PRId64 " matrix of doubles would take more than 2^60 bytes",
                         dim[x][0], dim[x][1]);
    if ((rc = ovl_err_agree(MPI_COMM_WORLD, rc)) != OVL_OK) return cli_fail("gemm", rc);
  }
  if (quiet) ovl_log_set_level(OVL_LOG_QUIET);

  double blas = no_blas_check ? 0.0 : ovl_check_local_blas(MPI_COMM_WORLD, 0);

  /* ---- grids ---- */
  ovl_grid2d g = NULL;
  ovl_grid3d g3 = NULL;
  rc = ovl_plan_grids(MPI_COMM_WORLD, &plan, allow_idle ? OVL_GRID_ALLOW_IDLE : 0, &g, &g3);
  if (rc) return cli_fail("gemm", rc);
  int plane0 = 1;
  char gridstr[64];
  if (g3) {
    int s, c, gi, gj, gk;
    ovl_grid3d_dims(g3, &s, &c);
    ovl_grid3d_coords(g3, &gi, &gj, &gk);
    plane0 = gk == 0;
    snprintf(gridstr, sizeof gridstr, "%dx%dx%d", s, s, c);
  } else {
    int p, q;
    ovl_grid2d_dims(g, &p, &q);
    snprintf(gridstr, sizeof gridstr, "%dx%d", p, q);
  }
  int active = ovl_grid2d_active(g) && (!g3 || ovl_grid3d_active(g3)), nactive = active;
  MPI_Allreduce(MPI_IN_PLACE, &nactive, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);

  /* ---- memory: ask before allocating ---- */
  int gp = 1, gq = 1, gc = 1;
  if (g3) ovl_grid3d_dims(g3, &gp, &gc), gq = gp;
  else ovl_grid2d_dims(g, &gp, &gq);
  int64_t mem = ovl_mm_memory(&plan, ta[0], tb[0], m, n, k, gp, gq, gc);
  if (beta != 0.0) mem += ovl_dmat_memory(m, n, gp, gq); /* C0 */
  if ((rc = ovl_check_memory(MPI_COMM_WORLD, mem, mem_limit)) != OVL_OK) {
    if (g3) ovl_grid3d_destroy(&g3);
    else ovl_grid2d_destroy(&g);
    return cli_fail("gemm", rc);
  }

  /* ---- operands (on every plane for 3D/2.5D: planes k > 0 are workspace) ---- */
  int tA = ta[0] == 'T', tB = tb[0] == 'T';
  ovl_dmat A = NULL, B = NULL, C = NULL, C0 = NULL;
  rc = ovl_dmat_create(g, tA ? k : m, tA ? m : k, &A);
  if (!rc) rc = ovl_dmat_create(g, tB ? n : k, tB ? k : n, &B);
  if (!rc) rc = ovl_dmat_create(g, m, n, &C);
  if (!rc && beta != 0.0) rc = ovl_dmat_create(g, m, n, &C0);
  if ((rc = ovl_err_agree(MPI_COMM_WORLD, rc)) == OVL_OK) {
    ovl_dmat_fill(A, OVL_FILL_RANDOM, (uint64_t)seed);
    ovl_dmat_fill(B, OVL_FILL_RANDOM, (uint64_t)seed + 1);
    if (C0) ovl_dmat_fill(C0, OVL_FILL_RANDOM, (uint64_t)seed + 2);
  }
  char planstr[192];
  ovl_plan_str(&plan, planstr, sizeof planstr);
  if (!rc && !json)
    ovl_log(OVL_LOG_INFO,
            "# ovl gemm: m=%" PRId64 " n=%" PRId64 " k=%" PRId64 " op=%s%s, grid %s (%d of %d ranks active)\n"
            "# plan: %s\n# memory: %.1f MiB per rank (estimate)\n# MPI: %s; local dgemm %.1f GFLOP/s per rank\n"
            "# time per repetition = MAX over ranks; %d warm-up + %d timed repetitions\n",
            m, n, k, ta, tb, gridstr, nactive, P, planstr, (double)mem / 1048576.0, cli_mpi_library(), blas, warmup,
            iters);
  double times[1000] = {0};
  int nt = iters;
  if (!rc && trace) rc = ovl_trace_start(MPI_COMM_WORLD, (int64_t)1 << 20);
  ovl_kstats ks, kacc;
  memset(&kacc, 0, sizeof kacc);
  for (int it = 0; !rc && it < warmup + nt; it++) {
    /* planes k > 0 hold workspace: refill the operands each time (untimed) */
    if (g3 && !plane0) {
      ovl_dmat_fill(A, OVL_FILL_RANDOM, (uint64_t)seed);
      ovl_dmat_fill(B, OVL_FILL_RANDOM, (uint64_t)seed + 1);
    }
    if (C0) ovl_dmat_copy(C, C0);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = ovl_time();
    memset(&ks, 0, sizeof ks);
    rc = ovl_gemm(ta[0], tb[0], alpha, A, B, beta, C, &plan, g3, &ks);
    double t = ovl_time() - t0;
    if (trace && it + 1 == warmup) ovl_trace_write(NULL), ovl_trace_start(MPI_COMM_WORLD, (int64_t)1 << 20);
    if (it >= warmup) {
      times[it - warmup] = t;
      kacc.t_comm += ks.t_comm;
      kacc.t_comp += ks.t_comp;
      kacc.bytes += ks.bytes;
    }
  }
  if (trace && ovl_trace_active()) { /* a failed run writes no trace */
    ovl_err trc = ovl_trace_write(rc == OVL_OK ? trace : NULL);
    if (!rc) rc = trc;
  }
  double relerr = NAN; /* not measured unless checked */
  ovl_err vrc = OVL_OK;
  if (!rc && check) {
    ovl_verify_mode mode = strcmp(check_mode, "exact") == 0  ? OVL_VERIFY_EXACT
                           : strcmp(check_mode, "prob") == 0 ? OVL_VERIFY_PROBABILISTIC
                                                             : OVL_VERIFY_AUTO;
    /* the reference uses op(A) and op(B) explicitly */
    if (!g3 || (plane0 && active)) { /* collective over the (plane 0) grid's parent */
      ovl_dmat Ar = A, Br = B;
      if (tA) ovl_dmat_create(g, m, k, &Ar), ovl_dmat_transpose(A, Ar);
      if (tB) ovl_dmat_create(g, k, n, &Br), ovl_dmat_transpose(B, Br);
      vrc = ovl_verify_gemm(alpha, Ar, Br, beta, C0, C, mode, tol, &relerr);
      if (tA) ovl_dmat_destroy(&Ar);
      if (tB) ovl_dmat_destroy(&Br);
    }
    if (g3) { /* plane 0 found the verdict; everyone learns it */
      vrc = ovl_err_agree(MPI_COMM_WORLD, vrc);
      MPI_Allreduce(MPI_IN_PLACE, &relerr, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    }
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
    double gmed = s.median > 0 ? flops / s.median * 1e-9 : 0, gbest = s.min > 0 ? flops / s.min * 1e-9 : 0;
    const char *verdict = !check ? "not checked" : (vrc == OVL_OK ? "PASS" : "FAIL");
    const char *an = ovl_algo_name(plan.algo);
    if (json) {
      ovl_record *r = NULL;
      rc = ovl_record_create("gemm", &r);
      if (!rc) rc = ovl_record_set_str(r, "algo", an);
      if (!rc) rc = ovl_record_set_int(r, "m", m);
      if (!rc) rc = ovl_record_set_int(r, "n", n);
      if (!rc) rc = ovl_record_set_int(r, "k", k);
      if (!rc) rc = ovl_record_set_str(r, "transa", ta);
      if (!rc) rc = ovl_record_set_str(r, "transb", tb);
      if (!rc) rc = ovl_record_set_int(r, "ranks", P);
      if (!rc) rc = ovl_record_set_int(r, "active", nactive);
      if (!rc) rc = ovl_record_set_str(r, "grid", gridstr);
      if (!rc) rc = ovl_record_set_str(r, "plan", planstr);
      if (!rc) rc = ovl_record_set_int(r, "iterations", nt);
      if (!rc) rc = ovl_record_set_num(r, "t_min", s.min);
      if (!rc) rc = ovl_record_set_num(r, "t_median", s.median);
      if (!rc) rc = ovl_record_set_num(r, "t_max", s.max);
      if (!rc) rc = ovl_record_set_num(r, "gflops_median", s.median > 0 ? gmed : NAN);
      if (!rc) rc = ovl_record_set_num(r, "gflops_best", s.min > 0 ? gbest : NAN);
      if (!rc) rc = ovl_record_set_num(r, "t_comm", comm[0]);
      if (!rc) rc = ovl_record_set_num(r, "t_comp", comm[1]);
      if (!rc) rc = ovl_record_set_num(r, "local_dgemm_gflops", no_blas_check ? NAN : blas);
      if (!rc) rc = ovl_record_set_str(r, "check", verdict);
      if (!rc) rc = ovl_record_set_num(r, "relerr", relerr);
      if (!rc) rc = ovl_record_set_int(r, "mem_estimate", mem);
      if (!rc) rc = ovl_record_set_str(r, "mpi", cli_mpi_library());
      if (!rc) rc = cli_emit(&r);
      ovl_record_destroy(&r);
      if (rc) exitc = cli_fail("gemm", rc);
    } else {
      ovl_log(OVL_LOG_QUIET, "# %-8s %10s %10s %10s %12s %12s %10s %10s %s\n", "algo", "t_min(s)", "t_med(s)",
              "t_max(s)", "GFLOP/s_med", "GFLOP/s_best", "comm(s)", "comp(s)", "check");
      ovl_log(OVL_LOG_QUIET, "  %-8s %10.4e %10.4e %10.4e %12.2f %12.2f %10.3e %10.3e %s", an, s.min, s.median, s.max,
              gmed, gbest, comm[0], comm[1], verdict);
      if (check) ovl_log(OVL_LOG_QUIET, " (relerr %.2e, tol %.2e)", relerr, tol);
      ovl_log(OVL_LOG_QUIET, "\n");
    }
    if (vrc != OVL_OK) exitc = cli_fail("gemm", vrc);
  }
  ovl_dmat_destroy(&A);
  ovl_dmat_destroy(&B);
  ovl_dmat_destroy(&C);
  ovl_dmat_destroy(&C0);
  if (g3) ovl_grid3d_destroy(&g3);
  else ovl_grid2d_destroy(&g);
  return exitc;
}
