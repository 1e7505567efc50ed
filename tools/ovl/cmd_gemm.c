/* ovl gemm: distributed matrix multiplication with verification and timings. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const char *const k_algos[] = {"summa", "hsumma", "cannon", "3d", "2.5d", "auto", NULL};
static const char *const k_checks[] = {"auto", "exact", "prob", NULL};
static const char *const k_backends[] = {"mpi", "own", NULL};
static const char *const k_bcasts[] = {"auto", "binomial", "scatter-allgather", "chain", "hier", NULL};
static const char *const k_trans[] = {"N", "T", NULL};

/* Whether the option called `name` was on the command line. */
static int was_given(const ovl_opt *opts, int nopts, const unsigned char *given, const char *name) {
  for (int o = 0; o < nopts; o++)
    if (!strcmp(opts[o].lname, name)) return given[o];
  return 0;
}

int cmd_gemm(int argc, char **argv) {
  int help = 0, check = 0, json = 0, quiet = 0, allow_idle = 0, iters = 5, warmup = 1, no_blas_check = 0;
  int ndup = 1, lookahead = 0, repl = 0;
  int64_t n = 1024, m = -1, k = -1, b = 256, outer = 0, seed = 42, mem_limit = 0;
  double alpha = 1.0, beta = 0.0, tol = -1.0;
  const char *algo = "summa", *grid = NULL, *groups = NULL, *check_mode = "auto", *backend = "mpi", *bcast = "auto";
  const char *ta = "N", *tb = "N", *trace = NULL, *machine = NULL, *tune_file = NULL;
  ovl_opt opts[] = {
      {"algo", 'a', OVL_OPT_CHOICE, &algo, "NAME",
       "algorithm (auto: the tune file's choice, else the cost model's; explicit options win)", k_algos, 0, -1},
      {"machine", 0, OVL_OPT_STRING, &machine, "FILE", "machine file for auto (default: $OVL_MACHINE)", NULL, 0, -1},
      {"tune-file", 0, OVL_OPT_STRING, &tune_file, "FILE", "tune file for auto (default: $OVL_TUNE_FILE)", NULL, 0, -1},
      {"n", 'n', OVL_OPT_SIZE, &n, "N", "matrix size (C is m x n, op(A) m x k, op(B) k x n; m = k = n unless given)",
       NULL, 0, (int64_t)1 << 40},
      {"m", 0, OVL_OPT_SIZE, &m, "M", "rows of op(A) and C (default: n)", NULL, 0, (int64_t)1 << 40},
      {"k", 0, OVL_OPT_SIZE, &k, "K", "inner dimension (default: n)", NULL, 0, (int64_t)1 << 40},
      {"transa", 0, OVL_OPT_CHOICE, &ta, "T", "op(A)", k_trans, 0, -1},
      {"transb", 0, OVL_OPT_CHOICE, &tb, "T", "op(B)", k_trans, 0, -1},
      {"block", 'b', OVL_OPT_SIZE, &b, "B", "panel width (SUMMA; HSUMMA inner block)", NULL, 1, (int64_t)1 << 40},
      {"outer", 0, OVL_OPT_SIZE, &outer, "M", "HSUMMA outer block (default: b)", NULL, 0, (int64_t)1 << 40},
      {"groups", 'G', OVL_OPT_STRING, &groups, "IxJ|G", "HSUMMA groups: IxJ, or a count G (default: ~sqrt(P))", NULL, 0,
       -1},
      {"grid", 'g', OVL_OPT_STRING, &grid, "PxQ|SxSxC",
       "process grid: PxQ for summa/hsumma/cannon, SxSxC for 3d (C = S) and 2.5d (default: from the rank count)", NULL,
       0, -1},
      {"repl", 'c', OVL_OPT_INT, &repl, "C", "2.5d replication c (default: the largest that fits)", NULL, 0, 4096},
      {"allow-idle", 0, OVL_OPT_FLAG, &allow_idle, NULL, "let ranks that do not fit the grid stay idle", NULL, 0, -1},
      {"ndup", 'd', OVL_OPT_INT, &ndup, "N", "lanes (N_DUP) per communication phase", NULL, 1, OVL_LANES_MAX},
      {"lookahead", 'l', OVL_OPT_FLAG, &lookahead, NULL, "SUMMA: next panel's broadcasts during this panel's dgemm",
       NULL, 0, -1},
      {"backend", 0, OVL_OPT_CHOICE, &backend, "B", "collectives: the MPI library's or ovl's own", k_backends, 0, -1},
      {"bcast-alg", 0, OVL_OPT_CHOICE, &bcast, "A", "broadcast algorithm of the own back end", k_bcasts, 0, -1},
      {"mem-limit", 0, OVL_OPT_SIZE, &mem_limit, "BYTES",
       "refuse to run above this many bytes per rank (0: the node's "
       "available memory)",
       NULL, 0, INT64_MAX},
      {"iterations", 'i', OVL_OPT_INT, &iters, "I", "timed repetitions", NULL, 1, 1000},
      {"warmup", 'x', OVL_OPT_INT, &warmup, "X", "untimed warm-up repetitions", NULL, 0, 1000000},
      {"alpha", 0, OVL_OPT_DOUBLE, &alpha, "A", "alpha", NULL, 0, -1},
      {"beta", 0, OVL_OPT_DOUBLE, &beta, "B", "beta", NULL, 0, -1},
      {"seed", 's', OVL_OPT_I64, &seed, "S", "seed of the random operands", NULL, 0, INT64_MAX},
      {"check", 0, OVL_OPT_FLAG, &check, NULL, "verify the result", NULL, 0, -1},
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
  const int nopts = (int)(sizeof opts / sizeof opts[0]);
  unsigned char given[sizeof opts / sizeof opts[0]];
  memset(given, 0, sizeof given);
  int prc = cli_parse("usage: mpiexec -n P ovl gemm [options]\n\n"
                      "Computes C = alpha*op(A)*op(B) + beta*C for random A, B, C with the chosen algorithm and\n"
                      "reports the time per repetition (MAX over ranks; min/median/max over repetitions), GFLOP/s,\n"
                      "and the seconds spent communicating and in local dgemm.",
                      opts, nopts, argc, argv, 2, &help, given);
  if (prc >= 0) return prc;
  if (m < 0) m = n;
  if (k < 0) k = n;
  if (tol < 0) tol = 16.0 * (double)(k > 1 ? k : 1) * 2.220446049250313e-16;
  int P = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &P);

  /* ---- the plan ---- */
  ovl_plan plan = ovl_plan_gemm(OVL_ALGO_SUMMA, b);
  ovl_err rc = OVL_OK;
  int auto_G = 0;
  char auto_why[600] = "";
  if (strcmp(algo, "auto") == 0) {
    ovl_plan ac;
    int64_t big = m > n ? (m > k ? m : k) : (n > k ? n : k);
    rc = cli_auto(OVL_FAMILY_GEMM, big, P, machine, tune_file, &ac, auto_why, sizeof auto_why);
    if (rc) return cli_fail("gemm", rc);
    plan.algo = ac.algo == OVL_ALGO_HSUMMA   ? OVL_ALGO_HSUMMA
                : ac.algo == OVL_ALGO_CANNON ? OVL_ALGO_CANNON
                : ac.algo == OVL_ALGO_3D     ? OVL_ALGO_3D
                : ac.algo == OVL_ALGO_25D    ? OVL_ALGO_25D
                                             : OVL_ALGO_SUMMA;
    if (!was_given(opts, nopts, given, "block")) plan.b = b = ac.b;
    if (!was_given(opts, nopts, given, "ndup")) ndup = ac.ndup;
    if (!was_given(opts, nopts, given, "lookahead")) lookahead = ac.lookahead;
    if (!was_given(opts, nopts, given, "repl") && plan.algo == OVL_ALGO_25D) repl = ac.c;
    auto_G = ac.G;
    char cs[96];
    cli_cfg_str(&ac, cs, sizeof cs);
    if (!json && !quiet) ovl_log(OVL_LOG_INFO, "# auto: %s (%s)\n", cs, auto_why);
  } else {
    ovl_algo_parse(algo, &plan.algo);
  }
  plan.ndup = ndup;
  plan.outer = outer;
  plan.lookahead |= lookahead;
  ovl_backend_parse(backend, &plan.coll.backend);
  ovl_alg_parse("bcast", bcast, &plan.coll.bcast);
  int is3 = plan.algo == OVL_ALGO_3D || plan.algo == OVL_ALGO_25D;
  int dims[3] = {0, 0, 0}, nd = 0;
  if (grid) {
    rc = ovl_parse_dims(grid, dims, &nd);
    if (rc == OVL_OK && is3 && (nd != 3 || dims[0] != dims[1]))
      rc = ovl_err_set(OVL_ERR_ARG, "--grid for %s is SxSxC, got '%s'", ovl_algo_name(plan.algo), grid);
    if (rc == OVL_OK && !is3 && nd != 2)
      rc = ovl_err_set(OVL_ERR_ARG, "--grid for %s is PxQ, got '%s'", ovl_algo_name(plan.algo), grid);
  }
  if (rc == OVL_OK && repl > 0 && plan.algo != OVL_ALGO_25D)
    rc = ovl_err_set(OVL_ERR_ARG, "--repl applies to --algo 2.5d only");
  if (rc == OVL_OK && repl > 0 && grid && dims[2] != repl)
    rc = ovl_err_set(OVL_ERR_ARG, "--repl %d conflicts with --grid %s", repl, grid);
  if (rc == OVL_OK && groups && plan.algo != OVL_ALGO_HSUMMA)
    rc = ovl_err_set(OVL_ERR_ARG, "--groups applies to --algo hsumma only");
  if (rc == OVL_OK && outer > 0 && outer < b)
    rc = ovl_err_set(OVL_ERR_ARG, "--outer %" PRId64 " must be >= --block %" PRId64, outer, b);
  if ((rc = ovl_err_agree(MPI_COMM_WORLD, rc)) != OVL_OK) return cli_usage_fail("gemm", rc);
  {
    char tj[4200], tc[4200];
    const char *inputs[] = {machine, tune_file};
    const cli_out outs[] = {{cli_join(tj, sizeof tj, trace, ".json"), "trace"},
                            {cli_join(tc, sizeof tc, trace, ".csv"), "trace"}};
    int orc = cli_check_outputs("gemm", outs, 2, inputs, 2);
    if (orc >= 0) return orc;
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
  int flags = allow_idle ? OVL_GRID_ALLOW_IDLE : 0;
  ovl_grid2d g = NULL;
  ovl_grid3d g3 = NULL;
  int plane0 = 1;
  char gridstr[64];
  if (is3) {
    int s = grid ? dims[0] : 0, c = grid ? dims[2] : (plan.algo == OVL_ALGO_3D ? 0 : repl);
    if (plan.algo == OVL_ALGO_25D && c == 0) { /* the largest c with c | s and s*s*c == P, else 1 */
      int ss = 0, cc = 0;
      ovl_grid25d_dims(P, &ss, &cc);
      c = cc > 0 ? cc : 1;
    }
    rc = ovl_grid3d_create(MPI_COMM_WORLD, s, c, flags, &g3);
    if (rc) return cli_fail("gemm", rc);
    ovl_grid3d_dims(g3, &s, &c);
    g = ovl_grid3d_plane(g3);
    int gi, gj, gk;
    ovl_grid3d_coords(g3, &gi, &gj, &gk);
    plane0 = gk == 0;
    snprintf(gridstr, sizeof gridstr, "%dx%dx%d", s, s, c);
  } else {
    if (!grid && plan.algo == OVL_ALGO_CANNON) { /* the largest square grid */
      int sq = 1;
      while ((sq + 1) * (sq + 1) <= P) sq++;
      dims[0] = dims[1] = sq;
    }
    rc = ovl_grid2d_create(MPI_COMM_WORLD, dims[0], dims[1], flags, &g);
    if (rc) return cli_fail("gemm", rc);
    int p, q;
    ovl_grid2d_dims(g, &p, &q);
    snprintf(gridstr, sizeof gridstr, "%dx%d", p, q);
    if (plan.algo == OVL_ALGO_HSUMMA) {
      int gI = 0, gJ = 0, gd[3], gn = 0;
      if (groups) {
        rc = ovl_parse_dims(groups, gd, &gn);
        if (rc == OVL_OK && gn == 2) gI = gd[0], gJ = gd[1];
        else if (rc == OVL_OK && gn == 1) rc = ovl_hgroups_auto_dims(p, q, gd[0], &gI, &gJ);
        else if (rc == OVL_OK) rc = ovl_err_set(OVL_ERR_ARG, "--groups is IxJ or a count, got '%s'", groups);
      } else if (auto_G > 0) {
        rc = ovl_hgroups_auto_dims(p, q, auto_G, &gI, &gJ);
      } else {
        int G = 1;
        while ((G + 1) * (G + 1) <= p * q) G++;
        while (ovl_hgroups_auto_dims(p, q, G, &gI, &gJ) != OVL_OK) G--; /* G = 1 always tiles */
      }
      plan.groups_i = gI, plan.groups_j = gJ;
      if ((rc = ovl_err_agree(MPI_COMM_WORLD, rc)) != OVL_OK) {
        ovl_grid2d_destroy(&g);
        return cli_fail("gemm", rc);
      }
    }
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
  double relerr = -1.0;
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
      ovl_log(OVL_LOG_QUIET,
              "{\"bench\":\"gemm\",\"algo\":\"%s\",\"m\":%" PRId64 ",\"n\":%" PRId64 ",\"k\":%" PRId64
              ",\"transa\":\"%s\",\"transb\":\"%s\",\"ranks\":%d,\"active\":%d,\"grid\":\"%s\",\"plan\":\"%s\","
              "\"iterations\":%d,\"t_min\":%.6e,\"t_median\":%.6e,\"t_max\":%.6e,\"gflops_median\":%.4f,"
              "\"gflops_best\":%.4f,\"t_comm\":%.6e,\"t_comp\":%.6e,\"local_dgemm_gflops\":%.3f,\"check\":\"%s\","
              "\"relerr\":%.3e,\"mem_estimate\":%" PRId64 ",\"mpi\":\"%s\"}\n",
              an, m, n, k, ta, tb, P, nactive, gridstr, planstr, nt, s.min, s.median, s.max, gmed, gbest, comm[0],
              comm[1], blas, verdict, relerr, mem, cli_mpi_library());
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
