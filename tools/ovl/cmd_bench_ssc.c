/* ovl bench ssc: SymmSquareCube (D -> D^2, D^3) GFLOP/s per algorithm and N_DUP.
 *
 * Every configuration (algorithm, N_DUP) gets its own plan and matrices up
 * front; the repetitions then run in rounds, each round timing every
 * configuration once, so that slow drifts of a shared machine fall on all
 * configurations alike and the ratios stay fair. Time per repetition is the
 * MAX over ranks; GFLOP/s counts the two multiplications, 4 n^3 flops. After
 * the timed rounds each result is checked with a random vector:
 * D^2 x against D (D x) and D^3 x against D (D (D x)). The measurement is
 * ovl_bench_ssc (ovl/bench.h), the table or records ovl_bench_ssc_print;
 * this file parses the options. */
#include <stdio.h>
#include <string.h>

#include "bench_util.h"

int cmd_bench_ssc(int argc, char **argv) {
  int help = 0, iters = 5, warmup = 1, json = 0, quiet = 0, allow_idle = 0;
  int64_t n = 1000, mem_limit = 0;
  const char *algs_s = "alg3,alg4,alg5,alg6", *backend = "mpi", *grid25 = NULL, *arrival = "off", *plan_s = NULL;
  int64_t nd[16] = {1, 2, 4};
  ovl_opt_list ndups = {nd, 16, 3};
  static const char *const *backends = ovl_backend_names, *const onoff[] = {"on", "off", NULL};
  ovl_opt opts[] = {
      {"size", 'n', OVL_OPT_I64, &n, "N", "matrix size n (D is n x n)", NULL, 1, (int64_t)1 << 20},
      {"algo", 'a', OVL_OPT_STRING, &algs_s, "LIST", "algorithms, comma-separated {alg3,alg4,alg5,alg6}", NULL, 0, -1},
      {"algos", 0, OVL_OPT_STRING, &algs_s, "LIST", NULL, NULL, 0, -1},
      {"ndup", 'd', OVL_OPT_LIST, &ndups, "LIST", "N_DUP values for alg5 and alg6", NULL, 1, OVL_LANES_MAX},
      {"grid", 'g', OVL_OPT_STRING, &grid25, "SxSxC", "alg6 grid (default: the largest c with c | s, s*s*c = P)", NULL,
       0, -1},
      {"grid25", 0, OVL_OPT_STRING, &grid25, "SxSxC", NULL, NULL, 0, -1},
      {"plan", 0, OVL_OPT_STRING, &plan_s, "TEXT",
       "one configuration as a run prints its plan (\"alg5 grid=2x2x2 ndup=4 backend=mpi\", ovl_plan_describe); "
       "instead of --algo, --ndup, --grid, --backend, --arrival-order",
       NULL, 0, -1},
      {"allow-idle", 0, OVL_OPT_FLAG, &allow_idle, NULL, "let ranks that do not fit a grid stay idle", NULL, 0, -1},
      {"backend", 0, OVL_OPT_CHOICE, &backend, "B", "collectives: the MPI library's or ovl's own", backends, 0, -1},
      {"arrival-order", 0, OVL_OPT_CHOICE, &arrival, "on|off",
       "alg5: multiply each lane's part of a phase as it arrives (on) or after the whole phase (off, default)", onoff,
       0, -1},
      {"iterations", 'i', OVL_OPT_INT, &iters, "I", "timed rounds (each times every configuration once)", NULL, 1,
       100000},
      {"warmup", 'x', OVL_OPT_INT, &warmup, "X", "untimed warm-up rounds", NULL, 0, 1000},
      BENCH_OPT_MEM_LIMIT(&mem_limit),
      {"json", 'j', OVL_OPT_FLAG, &json, NULL, "one JSON object per configuration", NULL, 0, -1},
      {"quiet", 'q', OVL_OPT_FLAG, &quiet, NULL, "no progress lines", NULL, 0, -1},
      {"help", 'h', OVL_OPT_FLAG, &help, NULL, "show this help", NULL, 0, -1},
  };
  enum { NOPTS = sizeof opts / sizeof opts[0] };
  const int nopts = NOPTS;
  unsigned char given[NOPTS];
  int prc = cli_parse("usage: mpiexec -n P ovl bench ssc [options]\n\n"
                      "Times SymmSquareCube (D -> D^2, D^3; Huang-Chow Algorithms 3-6) for each algorithm and, for\n"
                      "alg5 and alg6, each N_DUP, on a random symmetric D. alg3-alg5 use a p x p x p grid, alg6 a\n"
                      "2.5D s x s x c grid. Rounds interleave the configurations; time = MAX over ranks, min/median\n"
                      "over rounds; GFLOP/s = 4 n^3 / t_median; speedup = alg4's median / this median. Every result\n"
                      "is checked against repeated matrix-vector products (relerr).",
                      opts, nopts, argc, argv, 3, &help, given);
  if (prc >= 0) return prc;
  ovl_bench_ssc_params p = ovl_bench_ssc_default();
  int g25[3] = {0, 0, 0}, ngd = 0;
  ovl_err rc = ovl_algo_parse_list(algs_s, p.algs, 4, &p.nalgs);
  /* an option that none of the algorithms uses is refused (--arrival-order: ovl_plan_option_applies) */
  int uses_ndup = 0, uses_grid = 0, uses_arrival = 0;
  for (int k = 0; k < p.nalgs && !rc; k++) {
    uses_ndup |= p.algs[k] == OVL_ALGO_SSC5 || p.algs[k] == OVL_ALGO_SSC6;
    uses_grid |= p.algs[k] == OVL_ALGO_SSC6;
    uses_arrival |= ovl_plan_option_applies("--arrival-order", p.algs[k]) == OVL_OK;
  }
  for (int o = 0; o < nopts && !rc; o++) {
    if (!given[o]) continue;
    const char *why = opts[o].dest == (void *)&ndups && !uses_ndup ? "alg5 and alg6"
                      : opts[o].dest == &grid25 && !uses_grid      ? "alg6"
                      : opts[o].dest == &arrival && !uses_arrival  ? "alg5"
                                                                   : NULL;
    if (why)
      rc = ovl_err_set(OVL_ERR_ARG, "--%s applies to %s only, none of --algo %s: refused rather than ignored",
                       opts[o].lname, why, algs_s);
  }
  if (!rc && grid25) {
    rc = ovl_parse_dims(grid25, g25, &ngd);
    if (!rc && (ngd != 3 || g25[0] != g25[1])) rc = ovl_err_set(OVL_ERR_ARG, "--grid is SxSxC, got '%s'", grid25);
  }
  ovl_plan pl = ovl_plan_auto(OVL_FAMILY_SSC, n);
  for (int o = 0; o < nopts && !rc && plan_s; o++) /* --plan is the whole configuration */
    if (given[o] && (opts[o].dest == &algs_s || opts[o].dest == (void *)&ndups || opts[o].dest == &grid25 ||
                     opts[o].dest == &backend || opts[o].dest == &arrival))
      rc = ovl_err_set(OVL_ERR_ARG, "--plan gives the whole configuration: --%s beside it is refused", opts[o].lname);
  if (!rc && plan_s) rc = ovl_plan_parse(plan_s, OVL_FAMILY_SSC, &pl);
  if (!rc && plan_s && pl.algo == OVL_ALGO_AUTO)
    rc = ovl_err_set(OVL_ERR_ARG, "--plan '%s' names no algorithm (a printed plan starts with one)", plan_s);
  if (!rc && plan_s) {
    p.algs[0] = pl.algo, p.nalgs = 1, ndups.n = 1, nd[0] = pl.ndup > 0 ? pl.ndup : 1;
    if (pl.algo == OVL_ALGO_SSC6) g25[0] = pl.s > 0 ? pl.s : 0, g25[2] = pl.c > 0 ? pl.c : 0;
    else if (pl.s > 0) p.cube_s = pl.s;
    backend = ovl_backend_name(pl.coll.backend), arrival = pl.arrival ? "on" : "off";
  }
  if ((rc = ovl_err_agree(MPI_COMM_WORLD, rc)) != OVL_OK) return cli_usage_fail("bench ssc", rc);
  if (plan_s) p.cfg = pl.coll; /* the printed plan's collectives */
  p.cfg.backend = strcmp(backend, "own") == 0 ? OVL_BACKEND_OWN : OVL_BACKEND_MPI;
  p.n = n, p.nndups = ndups.n, p.allow_idle = allow_idle, p.iters = iters, p.warmup = warmup;
  p.mem_limit = mem_limit, p.s25 = g25[0], p.c25 = g25[2], p.arrival = strcmp(arrival, "on") == 0;
  for (int k = 0; k < ndups.n; k++) p.ndups[k] = (int)nd[k];
  ovl_bench_reporter prog;
  ovl_bench_reporter_start(&prog, "ssc", 0, !quiet && !json);
  p.progress = ovl_bench_reporter_fn, p.progress_ctx = &prog;
  ovl_bench_ssc_result res;
  if ((rc = ovl_bench_ssc(&p, &res)) != OVL_OK) return cli_fail("bench ssc", rc);
  const ovl_bench_print_opts po = {.json = json, .header = 1}; /* -q: no progress lines only */
  if (ovl_world_rank() == 0) rc = ovl_bench_ssc_print(stdout, &p, &res, &po);
  int bad = res.nfailed;
  ovl_bench_ssc_free(&res);
  if (rc) return cli_fail("bench ssc", rc);
  if (bad) {
    ovl_log(OVL_LOG_QUIET, "ovl bench ssc: error: a result failed its check (relerr > 1e-10)\n");
    return CLI_FAILED;
  }
  return CLI_OK;
}
