/* ovl bench ssc: SymmSquareCube (D -> D^2, D^3) GFLOP/s per algorithm and N_DUP.
 *
 * Every configuration (algorithm, N_DUP) gets its own plan and matrices up
 * front; the repetitions then run in rounds, each round timing every
 * configuration once, so that slow drifts of a shared machine fall on all
 * configurations alike and the ratios stay fair. Time per repetition is the
 * MAX over ranks; GFLOP/s counts the two multiplications, 4 n^3 flops. After
 * the timed rounds each result is checked with a random vector:
 * D^2 x against D (D x) and D^3 x against D (D (D x)). The measurement is
 * ovl_bench_ssc (ovl/bench.h); this file parses the options and prints. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"

int cmd_bench_ssc(int argc, char **argv) {
  int help = 0, iters = 5, warmup = 1, json = 0, quiet = 0, allow_idle = 0;
  int64_t n = 1000, mem_limit = 0;
  const char *algs_s = "alg3,alg4,alg5,alg6", *ndup_s = "1,2,4", *backend = "mpi", *grid25 = NULL;
  static const char *const backends[] = {"mpi", "own", NULL};
  ovl_opt opts[] = {
      {"size", 'n', OVL_OPT_I64, &n, "N", "matrix size n (D is n x n)", NULL, 1, (int64_t)1 << 20},
      {"algo", 'a', OVL_OPT_STRING, &algs_s, "LIST", "algorithms, comma-separated {alg3,alg4,alg5,alg6}", NULL, 0, -1},
      {"algos", 0, OVL_OPT_STRING, &algs_s, "LIST", NULL, NULL, 0, -1},
      {"ndup", 'd', OVL_OPT_STRING, &ndup_s, "LIST", "N_DUP values for alg5 and alg6 (e.g. 1,2,4 or 1-6)", NULL, 0, -1},
      {"grid", 'g', OVL_OPT_STRING, &grid25, "SxSxC", "alg6 grid (default: the largest c with c | s, s*s*c = P)", NULL,
       0, -1},
      {"grid25", 0, OVL_OPT_STRING, &grid25, "SxSxC", NULL, NULL, 0, -1},
      {"allow-idle", 0, OVL_OPT_FLAG, &allow_idle, NULL, "let ranks that do not fit a grid stay idle", NULL, 0, -1},
      {"backend", 0, OVL_OPT_CHOICE, &backend, "B", "collectives: the MPI library's or ovl's own", backends, 0, -1},
      {"iterations", 'i', OVL_OPT_INT, &iters, "I", "timed rounds (each times every configuration once)", NULL, 1,
       100000},
      {"warmup", 'x', OVL_OPT_INT, &warmup, "X", "untimed warm-up rounds", NULL, 0, 1000},
      BENCH_OPT_MEM_LIMIT(&mem_limit),
      {"json", 'j', OVL_OPT_FLAG, &json, NULL, "one JSON object per configuration", NULL, 0, -1},
      {"quiet", 'q', OVL_OPT_FLAG, &quiet, NULL, "no progress lines", NULL, 0, -1},
      {"help", 'h', OVL_OPT_FLAG, &help, NULL, "show this help", NULL, 0, -1},
  };
  int prc = cli_parse("usage: mpiexec -n P ovl bench ssc [options]\n\n"
                      "Times SymmSquareCube (D -> D^2, D^3; Huang-Chow Algorithms 3-6) for each algorithm and, for\n"
                      "alg5 and alg6, each N_DUP, on a random symmetric D. alg3-alg5 use a p x p x p grid, alg6 a\n"
                      "2.5D s x s x c grid. Rounds interleave the configurations; time = MAX over ranks, min/median\n"
                      "over rounds; GFLOP/s = 4 n^3 / t_median; speedup = alg4's median / this median. Every result\n"
                      "is checked against repeated matrix-vector products (relerr).",
                      opts, (int)(sizeof opts / sizeof opts[0]), argc, argv, 3, &help, NULL);
  if (prc >= 0) return prc;
  int P = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  ovl_err rc = OVL_OK;
  int nd[16], nnd = 0, na = 0;
  ovl_algo al[4];
  int g25[3] = {0, 0, 0}, ngd = 0;
  { /* parse the lists (every rank: same verdict) */
    char buf[128];
    snprintf(buf, sizeof buf, "%s", algs_s);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok && !rc; tok = strtok_r(NULL, ",", &save)) {
      if (na == 4) rc = ovl_err_set(OVL_ERR_ARG, "--algo: at most 4 algorithms, got '%s'", algs_s);
      else rc = ovl_algo_parse(tok, &al[na++]);
    }
    if (!rc && na == 0) rc = ovl_err_set(OVL_ERR_ARG, "--algo: empty list");
    if (!rc) rc = bench_int_list("--ndup", ndup_s, 1, OVL_LANES_MAX, nd, 16, &nnd);
    if (!rc && grid25) {
      rc = ovl_parse_dims(grid25, g25, &ngd);
      if (!rc && (ngd != 3 || g25[0] != g25[1])) rc = ovl_err_set(OVL_ERR_ARG, "--grid is SxSxC, got '%s'", grid25);
    }
  }
  if ((rc = ovl_err_agree(MPI_COMM_WORLD, rc)) != OVL_OK) return cli_usage_fail("bench ssc", rc);

  ovl_bench_ssc_params p = ovl_bench_ssc_default();
  p.cfg.backend = strcmp(backend, "own") == 0 ? OVL_BACKEND_OWN : OVL_BACKEND_MPI;
  p.n = n, p.nalgs = na, p.nndups = nnd, p.allow_idle = allow_idle, p.iters = iters, p.warmup = warmup;
  p.mem_limit = mem_limit;
  for (int a = 0; a < na; a++) p.algs[a] = al[a];
  for (int k = 0; k < nnd; k++) p.ndups[k] = nd[k];
  if (grid25) p.s25 = g25[0], p.c25 = g25[2];
  ovl_bench_reporter prog;
  ovl_bench_reporter_start(&prog, "ssc", 0, !quiet && !json);
  p.progress = ovl_bench_reporter_fn, p.progress_ctx = &prog;
  ovl_bench_ssc_result res;
  if ((rc = ovl_bench_ssc(&p, &res)) != OVL_OK) return cli_fail("bench ssc", rc);
  char cube_s[32] = "-", g25_s[32] = "-";
  if (res.cube_s) snprintf(cube_s, sizeof cube_s, "%dx%dx%d", res.cube_s, res.cube_s, res.cube_s);
  if (res.s25) snprintf(g25_s, sizeof g25_s, "%dx%dx%d", res.s25, res.s25, res.c25);
  if (!json)
    ovl_log(OVL_LOG_INFO,
            "# ovl bench ssc: n=%" PRId64 ", %d ranks, grids %s (alg3-5) and %s (alg6), backend %s\n# MPI: %s\n"
            "# time per repetition = MAX over ranks; %d warm-up + %d timed rounds, configurations interleaved\n",
            n, P, cube_s, g25_s, backend, cli_mpi_library(), warmup, iters);
  double base = 0;
  for (int k = 0; k < res.nrows && base == 0; k++)
    if (res.rows[k].alg == OVL_ALGO_SSC4) base = res.rows[k].st.median;
  int bad = 0;
  if (!json)
    ovl_log(OVL_LOG_QUIET, "# %-5s %4s %8s %11s %11s %11s %10s %10s %8s %9s %s\n", "algo", "ndup", "grid", "t_min(s)",
            "t_med(s)", "t_max(s)", "GFLOP/s", "comm_med", "speedup", "relerr", "check");
  for (int k = 0; k < res.nrows; k++) {
    const ovl_bench_ssc_row *x = &res.rows[k];
    int ok = x->relerr <= 1e-10;
    bad |= !ok;
    const char *gs = x->alg == OVL_ALGO_SSC6 ? g25_s : cube_s;
    double sp = base > 0 ? base / x->st.median : 0;
    if (json) {
      ovl_record *rec = NULL;
      rc = ovl_record_create("ssc", &rec);
      if (!rc) rc = ovl_record_set_str(rec, "algo", ovl_algo_name(x->alg));
      if (!rc) rc = ovl_record_set_int(rec, "ndup", x->ndup);
      if (!rc) rc = ovl_record_set_int(rec, "n", n);
      if (!rc) rc = ovl_record_set_int(rec, "ranks", P);
      if (!rc) rc = ovl_record_set_str(rec, "grid", gs);
      if (!rc) rc = ovl_record_set_str(rec, "backend", backend);
      if (!rc) rc = ovl_record_set_num(rec, "t_min", x->st.min);
      if (!rc) rc = ovl_record_set_num(rec, "t_median", x->st.median);
      if (!rc) rc = ovl_record_set_num(rec, "t_max", x->st.max);
      if (!rc) rc = ovl_record_set_num(rec, "t_comm_median", x->st_comm.median);
      if (!rc) rc = ovl_record_set_num(rec, "gflops", x->gflops);
      /* null when alg4, the reference, was not run */
      if (!rc) rc = ovl_record_set_num(rec, "speedup_vs_alg4", base > 0 && x->st.median > 0 ? sp : NAN);
      if (!rc) rc = ovl_record_set_num(rec, "relerr", x->relerr >= 0 ? x->relerr : NAN);
      if (!rc) rc = ovl_record_set_str(rec, "check", ok ? "PASS" : "FAIL");
      if (!rc) rc = ovl_record_set_int(rec, "iterations", iters);
      if (!rc) rc = ovl_record_set_str(rec, "mpi", cli_mpi_library());
      if (!rc) rc = cli_emit(&rec);
      ovl_record_destroy(&rec);
      if (rc) {
        ovl_bench_ssc_free(&res);
        return cli_fail("bench ssc", rc);
      }
    } else
      ovl_log(OVL_LOG_QUIET, "  %-5s %4d %8s %11.4e %11.4e %11.4e %10.2f %10.3e %8.3f %9.2e %s\n",
              ovl_algo_name(x->alg), x->ndup, gs, x->st.min, x->st.median, x->st.max, x->gflops, x->st_comm.median, sp,
              x->relerr, ok ? "PASS" : "FAIL");
  }
  ovl_bench_ssc_free(&res);
  if (bad) {
    ovl_log(OVL_LOG_QUIET, "ovl bench ssc: error: a result failed its check (relerr > 1e-10)\n");
    return CLI_FAILED;
  }
  return CLI_OK;
}
