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
 * ovl_bench_nbc (ovl/bench.h); this file parses the options and prints. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "bench_util.h"

int cmd_bench_nbc(int argc, char **argv) {
  int help = 0, iters = 20, warmup = 3, ntests = 10, full = 0, json = 0, quiet = 0;
  int64_t range[2] = {8, (int64_t)1 << 20}, cache = 0, mem_limit = 0;
  double compute_us = 1000.0;
  const char *op = "allreduce", *backend = "mpi", *alg = "auto", *mode = "all";
  static const char *const backends[] = {"mpi", "own", NULL};
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
      {"backend", 0, OVL_OPT_CHOICE, &backend, "B", "collectives: the MPI library's or ovl's own", backends, 0, -1},
      {"algo", 'a', OVL_OPT_STRING, &alg, "NAME", "algorithm of the own back end (see `ovl bench coll --help`)", NULL,
       0, -1},
      {"alg", 0, OVL_OPT_STRING, &alg, "NAME", NULL, NULL, 0, -1},
      {"iterations", 'i', OVL_OPT_INT, &iters, "I", "timed repetitions per size and measurement", NULL, 1, 1000000},
      {"warmup", 'x', OVL_OPT_INT, &warmup, "X", "untimed warm-up repetitions per size and measurement", NULL, 0,
       1000000},
      {"cache-bytes", 0, OVL_OPT_SIZE, &cache, "BYTES",
       "rotate each rank's send and receive buffers through this many bytes (0: one buffer each, warm in cache; "
       "default: 2x the last-level cache, lowered when the node's ranks would not fit in half of MemAvailable)",
       NULL, 0, (int64_t)1 << 40},
      BENCH_OPT_MEM_LIMIT(&mem_limit),
      {"full", 'f', OVL_OPT_FLAG, &full, NULL, "osu: also print the post (init) and wait times", NULL, 0, -1},
      {"json", 'j', OVL_OPT_FLAG, &json, NULL, "one JSON object per size instead of the table", NULL, 0, -1},
      {"quiet", 'q', OVL_OPT_FLAG, &quiet, NULL, "results only: no header lines, no progress on stderr", NULL, 0, -1},
      {"help", 'h', OVL_OPT_FLAG, &help, NULL, "show this help", NULL, 0, -1},
  };
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
                      opts, (int)(sizeof opts / sizeof opts[0]), argc, argv, 3, &help, NULL);
  if (prc >= 0) return prc;
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
  if ((rc = ovl_err_agree(MPI_COMM_WORLD, rc)) != OVL_OK) return cli_fail("bench nbc", rc);
  if (quiet) ovl_log_set_level(OVL_LOG_QUIET);
  int do_osu = !strcmp(mode, "all") || !strcmp(mode, "osu"), do_imb = !strcmp(mode, "all") || !strcmp(mode, "imb");
  int do_eff = !strcmp(mode, "all") || !strcmp(mode, "eff");
  p.modes = (do_osu ? OVL_BENCH_OSU : 0) | (do_imb ? OVL_BENCH_IMB : 0) | (do_eff ? OVL_BENCH_EFF : 0);
  p.min_bytes = range[0], p.max_bytes = range[1], p.ntests = ntests, p.compute_us = compute_us, p.iters = iters;
  p.warmup = warmup, p.cache_bytes = cache, p.mem_limit = mem_limit;
  ovl_bench_reporter prog;
  ovl_bench_reporter_start(&prog, "nbc", 0, !quiet);
  p.progress = ovl_bench_reporter_fn, p.progress_ctx = &prog;
  ovl_bench_nbc_result res;
  if ((rc = ovl_bench_nbc(&p, &res)) != OVL_OK) return cli_fail("bench nbc", rc);
  int P = res.ranks;
  if (!json) {
    ovl_log(OVL_LOG_INFO,
            "# ovl bench nbc: %s, %d ranks, backend %s (alg %s), %d ovl_req_test calls in the computation\n", op, P,
            backend, alg, ntests);
    ovl_log(OVL_LOG_INFO, "# MPI: %s\n", cli_mpi_library());
    if (cache > 0)
      ovl_log(OVL_LOG_INFO, "# buffers: send and receive each rotate through %s per rank\n",
              bench_bytes_str((double)res.arena_bytes));
    else ovl_log(OVL_LOG_INFO, "# buffers: one send and one receive buffer, reused (warm in cache)\n");
    ovl_log(OVL_LOG_INFO,
            "# kernel: %.3f us per call on rank 0, %.3f us on the fastest rank (best of 20 trials); %d warm-up + %d "
            "timed repetitions\n",
            res.kernel_s * 1e6, res.kernel_s_min * 1e6, warmup, iters);
    if (do_osu)
      ovl_log(OVL_LOG_INFO, "# osu: means over repetitions and ranks; ovl%% = max(0, 100 - 100 (overall - (compute - "
                            "test)) / pure)\n");
    if (do_imb)
      ovl_log(OVL_LOG_INFO, "# imb: means over repetitions, rank with the largest t_ovrl; ovl%% = 100 max(0, min(1, "
                            "(pure + cpu - ovrl) / min(pure, cpu)))\n");
    if (do_eff)
      ovl_log(OVL_LOG_INFO,
              "# eff: fixed computation %.1f us = %" PRId64
              " kernel calls; per repetition MAX over ranks, median; seq = post+wait+compute, ovl = "
              "post+compute+wait; speedup = seq/ovl (> 1: overlap pays); ideal = seq/max(comm, comp)\n",
              compute_us, res.eff_calls);
    ovl_log(OVL_LOG_QUIET, "# %10s", "size(B)");
    if (do_osu) {
      ovl_log(OVL_LOG_QUIET, " %10s %10s %10s %10s %8s", "osu_pure", "osu_all", "osu_comp", "osu_test", "osu_ovl%");
      if (full) ovl_log(OVL_LOG_QUIET, " %10s %10s", "osu_init", "osu_wait");
    }
    if (do_imb) ovl_log(OVL_LOG_QUIET, " %10s %10s %10s %8s", "imb_pure", "imb_cpu", "imb_ovrl", "imb_ovl%");
    if (do_eff)
      ovl_log(OVL_LOG_QUIET, " %10s %10s %10s %10s %8s %8s", "eff_comm", "eff_comp", "eff_seq", "eff_ovl", "speedup",
              "ideal");
    ovl_log(OVL_LOG_QUIET, "   (times in us)\n");
  }
  for (int si = 0; si < res.nrows; si++) {
    const ovl_bench_nbc_row *r = &res.rows[si];
    if (json) {
      ovl_record *rec = NULL, *sub = NULL;
      rc = ovl_record_create("nbc", &rec);
      if (!rc) rc = ovl_record_set_str(rec, "op", op);
      if (!rc) rc = ovl_record_set_int(rec, "ranks", P);
      if (!rc) rc = ovl_record_set_str(rec, "backend", backend);
      if (!rc) rc = ovl_record_set_str(rec, "alg", alg);
      if (!rc) rc = ovl_record_set_int(rec, "bytes", r->bytes);
      if (!rc) rc = ovl_record_set_int(rec, "iterations", iters);
      if (!rc) rc = ovl_record_set_int(rec, "num_tests", ntests);
      if (!rc && do_osu) {
        rc = ovl_record_create(NULL, &sub);
        if (!rc) rc = ovl_record_set_num(sub, "t_pure", r->osu_pure);
        if (!rc) rc = ovl_record_set_num(sub, "t_overall", r->osu_overall);
        if (!rc) rc = ovl_record_set_num(sub, "t_compute", r->osu_compute);
        if (!rc) rc = ovl_record_set_num(sub, "t_test", r->osu_test);
        if (!rc) rc = ovl_record_set_num(sub, "t_init", r->osu_init);
        if (!rc) rc = ovl_record_set_num(sub, "t_wait", r->osu_wait);
        if (!rc) rc = ovl_record_set_num(sub, "overlap_pct", r->osu_overlap_pct);
        if (!rc) rc = ovl_record_set_record(rec, "osu", &sub);
      }
      if (!rc && do_imb) {
        rc = ovl_record_create(NULL, &sub);
        if (!rc) rc = ovl_record_set_num(sub, "t_pure", r->imb_pure);
        if (!rc) rc = ovl_record_set_num(sub, "t_cpu", r->imb_cpu);
        if (!rc) rc = ovl_record_set_num(sub, "t_ovrl", r->imb_ovrl);
        if (!rc) rc = ovl_record_set_num(sub, "overlap_pct", r->imb_overlap_pct);
        if (!rc) rc = ovl_record_set_int(sub, "cpu_calls", r->imb_calls);
        if (!rc) rc = ovl_record_set_record(rec, "imb", &sub);
      }
      if (!rc && do_eff) {
        rc = ovl_record_create(NULL, &sub);
        if (!rc) rc = ovl_record_set_num(sub, "compute_us", compute_us);
        if (!rc) rc = ovl_record_set_int(sub, "calls", res.eff_calls);
        if (!rc) rc = ovl_record_set_num(sub, "t_comm", r->eff_comm);
        if (!rc) rc = ovl_record_set_num(sub, "t_comp", r->eff_comp);
        if (!rc) rc = ovl_record_set_num(sub, "t_seq", r->eff_seq);
        if (!rc) rc = ovl_record_set_num(sub, "t_ovl", r->eff_ovl);
        if (!rc) rc = ovl_record_set_num(sub, "speedup", r->eff_speedup);
        if (!rc) rc = ovl_record_set_num(sub, "ideal_speedup", r->eff_ideal);
        if (!rc) rc = ovl_record_set_record(rec, "eff", &sub);
      }
      ovl_record_destroy(&sub);
      if (!rc) rc = ovl_record_set_str(rec, "mpi", cli_mpi_library());
      if (!rc) rc = cli_emit(&rec);
      ovl_record_destroy(&rec);
      if (rc) {
        ovl_bench_nbc_free(&res);
        return cli_fail("bench nbc", rc);
      }
    } else {
      ovl_log(OVL_LOG_QUIET, "  %10" PRId64, r->bytes);
      if (do_osu) {
        ovl_log(OVL_LOG_QUIET, " %10.2f %10.2f %10.2f %10.2f %8.1f", r->osu_pure * 1e6, r->osu_overall * 1e6,
                r->osu_compute * 1e6, r->osu_test * 1e6, r->osu_overlap_pct);
        if (full) ovl_log(OVL_LOG_QUIET, " %10.2f %10.2f", r->osu_init * 1e6, r->osu_wait * 1e6);
      }
      if (do_imb)
        ovl_log(OVL_LOG_QUIET, " %10.2f %10.2f %10.2f %8.1f", r->imb_pure * 1e6, r->imb_cpu * 1e6, r->imb_ovrl * 1e6,
                r->imb_overlap_pct);
      if (do_eff)
        ovl_log(OVL_LOG_QUIET, " %10.2f %10.2f %10.2f %10.2f %8.3f %8.3f", r->eff_comm * 1e6, r->eff_comp * 1e6,
                r->eff_seq * 1e6, r->eff_ovl * 1e6, r->eff_speedup, r->eff_ideal);
      ovl_log(OVL_LOG_QUIET, "\n");
    }
  }
  ovl_bench_nbc_free(&res);
  return CLI_OK;
}
