/* ovl bench nbc: how much of a nonblocking collective hides behind
 * computation, three ways.
 *
 *  osu  (osu_iallreduce and friends): t_pure = post + wait alone; then post,
 *       compute for t_pure seconds (this rank's mean t_pure) split into T
 *       equal parts each followed by one ovl_req_test (MPI_Test on the MPI
 *       back end; T = --num-tests), wait. t_compute includes the tests, t_test
 *       is the time inside them. Each time is the mean over repetitions, then
 *       the mean over ranks (as OSU reports), and
 *         overlap = max(0, 100 - 100 (t_overall - (t_compute - t_test)) / t_pure).
 *  imb  (IMB-NBC): the computation is a fixed amount of work calibrated to
 *       this rank's t_pure, with no MPI calls inside (MPI_I<op> /
 *       IMB_cpu_exploit / MPI_Wait); t_CPU is its time while the operation is
 *       in flight, t_ovrl the time of post + computation + wait; the values
 *       are those of the rank with the largest t_ovrl (as IMB does), and
 *         overlap = 100 max(0, min(1, (t_pure + t_CPU - t_ovrl) / min(t_pure, t_CPU))).
 *  eff  (NBC-Eff, Nanri et al.): a fixed amount of computation chosen by the
 *       user (--compute-us, converted once into kernel calls at the fastest
 *       rank's undisturbed speed, the same count on every rank) and the operation, one after the other (seq: post,
 *       wait, compute) and overlapped (ovl: post, compute with T tests,
 *       wait). Per repetition MAX over ranks, median over repetitions;
 *       speedup = t_seq / t_ovl: above 1 overlapping pays, below 1 it costs.
 * The formulas are pure functions in include/ovl/model.h; the measurement is
 * ovl_bench_nbc (ovl/bench.h), the table or records ovl_bench_nbc_print; this
 * file parses the options. */
#include <stdio.h>
#include <string.h>

#include "bench_util.h"

int cmd_bench_nbc(int argc, char **argv) {
  int help = 0, iters = 20, warmup = 3, ntests = 10, full = 0, json = 0, quiet = 0;
  int64_t range[2] = {8, (int64_t)1 << 20}, cache = 0, mem_limit = 0;
  double compute_us = 1000.0;
  const char *op = "allreduce", *backend = "mpi", *alg = "auto", *mode = "all";
  static const char *const modes[] = {"all", "osu", "imb", "eff", NULL};
  int capped = 0;
  if (ovl_bench_default_cache_bytes(MPI_COMM_WORLD, 2, &cache, &capped) != OVL_OK)
    return cli_fail("bench nbc", OVL_ERR_MPI);
  ovl_opt opts[] = {
      {"op", 0, OVL_OPT_CHOICE, &op, "OP", "the nonblocking collective (sum for reductions; root 0)",
       ovl_bench_op_names, 0, -1},
      {"message-size", 'm', OVL_OPT_RANGE, range, "MIN:MAX",
       "message sizes in bytes, rounded to whole doubles (allgather: the gathered result, alltoall: the send buffer, "
       "both P equal blocks)",
       NULL, 1, (int64_t)1 << 34},
      {"mode", 0, OVL_OPT_CHOICE, &mode, "MODE", "which measures: osu, imb, eff (NBC-Eff) or all", modes, 0, -1},
      {"num-tests", 0, OVL_OPT_INT, &ntests, "T",
       "osu and eff: the computation is cut into T equal parts, each followed by one ovl_req_test (0: none)", NULL, 0,
       1000000},
      {"compute-us", 0, OVL_OPT_DOUBLE, &compute_us, "US",
       "eff: the fixed computation, in microseconds of this machine's kernel (converted once into a number of "
       "kernel calls, the same on every rank)",
       NULL, 0, -1},
      {"backend", 0, OVL_OPT_CHOICE, &backend, "B", "collectives: the MPI library's or ovl's own", ovl_backend_names, 0,
       -1},
      {"coll-alg", 0, OVL_OPT_STRING, &alg, "NAME",
       "schedule of the collective on the own back end (see `ovl bench coll --help`)", NULL, 0, -1},
      {"algo", 'a', OVL_OPT_STRING, &alg, "NAME", NULL, NULL, 0, -1}, /* deprecated spellings */
      {"alg", 0, OVL_OPT_STRING, &alg, "NAME", NULL, NULL, 0, -1},
      {"iterations", 'i', OVL_OPT_INT, &iters, "I", "timed repetitions per size and measurement", NULL, 1, 1000000},
      {"warmup", 'x', OVL_OPT_INT, &warmup, "X", "untimed warm-up repetitions per size and measurement", NULL, 0,
       1000000},
      BENCH_OPT_CACHE_BYTES(&cache),
      BENCH_OPT_MEM_LIMIT(&mem_limit),
      {"full", 'f', OVL_OPT_FLAG, &full, NULL, "osu: also print the post (init) and wait times", NULL, 0, -1},
      {"json", 'j', OVL_OPT_FLAG, &json, NULL, "one JSON object per size instead of the table", NULL, 0, -1},
      {"quiet", 'q', OVL_OPT_FLAG, &quiet, NULL, "results only: no header lines, no progress on stderr", NULL, 0, -1},
      {"help", 'h', OVL_OPT_FLAG, &help, NULL, "show this help", NULL, 0, -1},
  };
  enum { NOPTS = sizeof opts / sizeof opts[0] };
  unsigned char given[NOPTS];
  int prc = cli_parse("usage: mpiexec -n P ovl bench nbc [options]\n\n"
                      "Overlap of one nonblocking collective (over all ranks) with computation, three ways:\n"
                      "  osu  overlap% as the OSU micro-benchmarks define it:\n"
                      "       max(0, 100 - 100 (t_overall - (t_compute - t_test)) / t_pure), computation ~ t_pure\n"
                      "       with T tests inside; means over repetitions and ranks\n"
                      "  imb  overlap% as IMB-NBC defines it:\n"
                      "       100 max(0, min(1, (t_pure + t_CPU - t_ovrl) / min(t_pure, t_CPU))), computation\n"
                      "       calibrated to t_pure without MPI calls; values of the rank with the largest t_ovrl\n"
                      "  eff  NBC-Eff: a fixed computation (--compute-us) after the collective (seq) and overlapped\n"
                      "       with it (ovl); speedup = t_seq / t_ovl: above 1 overlapping pays, below 1 it costs.\n"
                      "       Per repetition MAX over ranks, median over repetitions.\n"
                      "Rank 0 prints one progress line per size on stderr.",
                      opts, NOPTS, argc, argv, 3, &help, given);
  if (prc >= 0) return prc;
  cli_note_deprecated(opts, NOPTS, given, (const char *const[]){"--algo", "-a", "--alg", NULL}, "--coll-alg");
  ovl_bench_nbc_params p = ovl_bench_nbc_default();
  ovl_alg a = OVL_ALG_AUTO;
  ovl_err rc = ovl_bench_op_parse(op, &p.op);
  if (!rc) rc = ovl_backend_parse(backend, &p.cfg.backend);
  if (!rc) rc = ovl_alg_parse(op, alg, &a);
  if (!rc && a != OVL_ALG_AUTO && p.cfg.backend != OVL_BACKEND_OWN)
    rc = ovl_err_set(OVL_ERR_ARG, "--algo %s needs --backend own (the MPI library picks its own algorithms)", alg);
  if (!rc && !(compute_us >= 0 && compute_us <= 1e9))
    rc = ovl_err_set(OVL_ERR_ARG, "--compute-us must be in [0, 1e9], got %g", compute_us);
  if (!rc) rc = ovl_bench_op_set_alg(p.op, a, &p.cfg);
  int do_osu = !strcmp(mode, "all") || !strcmp(mode, "osu"), do_imb = !strcmp(mode, "all") || !strcmp(mode, "imb");
  int do_eff = !strcmp(mode, "all") || !strcmp(mode, "eff");
  for (int o = 0; o < NOPTS && !rc; o++) { /* the options of one measure need it */
    if (!given[o]) continue;
    const char *only = opts[o].dest == &ntests && !do_osu && !do_eff ? "osu and eff"
                       : opts[o].dest == &compute_us && !do_eff      ? "eff"
                       : opts[o].dest == &full && !do_osu            ? "osu"
                                                                     : NULL;
    if (only)
      rc = ovl_err_set(OVL_ERR_ARG, "--%s applies to --mode %s (or all) only, not %s: refused rather than ignored",
                       opts[o].lname, only, mode);
  }
  if ((rc = ovl_err_agree(MPI_COMM_WORLD, rc)) != OVL_OK) return cli_usage_fail("bench nbc", rc);
  if (quiet) ovl_log_set_level(OVL_LOG_QUIET);
  p.modes = (do_osu ? OVL_BENCH_OSU : 0) | (do_imb ? OVL_BENCH_IMB : 0) | (do_eff ? OVL_BENCH_EFF : 0);
  p.min_bytes = range[0], p.max_bytes = range[1], p.ntests = ntests, p.compute_us = compute_us, p.iters = iters;
  p.warmup = warmup, p.cache_bytes = cache, p.mem_limit = mem_limit;
  ovl_bench_reporter prog;
  ovl_bench_reporter_start(&prog, "nbc", 0, !quiet);
  p.progress = ovl_bench_reporter_fn, p.progress_ctx = &prog;
  ovl_bench_nbc_result res;
  if ((rc = ovl_bench_nbc(&p, &res)) != OVL_OK) return cli_fail("bench nbc", rc);
  const ovl_bench_print_opts po = {.json = json, .header = !quiet, .full = full, .alg = alg};
  if (ovl_world_rank() == 0) rc = ovl_bench_nbc_print(stdout, &p, &res, &po);
  ovl_bench_nbc_free(&res);
  return rc ? cli_fail("bench nbc", rc) : CLI_OK;
}
