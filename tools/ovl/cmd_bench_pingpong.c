/* ovl bench pingpong: point-to-point latency and bandwidth, k pairs at once,
 * and the Hockney (alpha-beta) fit.
 *
 * The ranks are split in two halves, [0, h) and [h, 2h) with h = P/2 (a
 * "node" each); pair i is rank i and rank h + i, for i < k = --pairs. All k
 * pairs run at once; the other ranks sleep. Two methods:
 *  - ping-pong (--window 0, default): the low rank sends s bytes, the high
 *    rank sends them back; one-way time = round trip / 2 (osu_latency);
 *  - window (--window W): the low rank posts W MPI_Isend of s bytes, the high
 *    rank W MPI_Irecv, then a 1-byte acknowledgement comes back (osu_bw);
 *    time per message = window time / W. Data flow one way only: with k
 *    pairs this is the unidirectional bandwidth of Huang & Chow, Fig. 3.
 * Messages are bytes (MPI_BYTE, point-to-point, as osu_latency/osu_bw do),
 * sent from and received into buffers that rotate through an arena of
 * --cache-bytes per rank and role. Each repetition is timed on the sending
 * rank; the time of a repetition is the MAX over the k senders, then
 * min/median/max over the timed repetitions. Bandwidths use the median:
 * per pair s / t, aggregate k s / t. The measurement is ovl_bench_pingpong
 * (ovl/bench.h); this file parses the options and prints the rows. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench_util.h"

int cmd_bench_pingpong(int argc, char **argv) {
  int help = 0, iters = 1000, iters_large = 100, warmup = 100, warmup_large = 10, window = 0, pairs = 1;
  int full = 0, json = 0, quiet = 0;
  int64_t range[2] = {1, (int64_t)64 << 20}, fit_range[2] = {0, 0}, large = 65536, cache = 0, mem_limit = 0;
  const char *fit = "rel";
  static const char *const fits[] = {"rel", "abs", NULL};
  int capped = 0;
  if (ovl_bench_default_cache_bytes(MPI_COMM_WORLD, 2, &cache, &capped) != OVL_OK)
    return cli_fail("bench pingpong", OVL_ERR_MPI);
  ovl_opt opts[] = {
      {"message-size", 'm', OVL_OPT_RANGE, range, "MIN:MAX", "message sizes in bytes: MIN, 2 MIN, 4 MIN, ... and MAX",
       NULL, 1, (int64_t)1 << 30},
      {"iterations", 'i', OVL_OPT_INT, &iters, "I", "timed repetitions per size up to --large", NULL, 1, 10000000},
      {"iterations-large", 0, OVL_OPT_INT, &iters_large, "I", "timed repetitions per size above --large", NULL, 1,
       10000000},
      {"warmup", 'x', OVL_OPT_INT, &warmup, "X", "untimed warm-up repetitions per size up to --large", NULL, 0,
       10000000},
      {"warmup-large", 0, OVL_OPT_INT, &warmup_large, "X", "untimed warm-up repetitions per size above --large", NULL,
       0, 10000000},
      {"large", 0, OVL_OPT_SIZE, &large, "BYTES", "sizes above this use the -large counts", NULL, 0, INT64_MAX},
      {"pairs", 0, OVL_OPT_INT, &pairs, "K", "pairs at once: rank i with rank P/2 + i, i < K (K per \"node\")", NULL, 1,
       1 << 20},
      {"window", 'W', OVL_OPT_INT, &window, "W",
       "0: ping-pong (one-way = round trip / 2); W > 0: windows of W sends one way + ack (osu_bw), W lowered to "
       "the messages that fit in --cache-bytes",
       NULL, 0, 1024},
      {"fit", 0, OVL_OPT_CHOICE, &fit, "F", "Hockney fit: rel (least relative squares) or abs (ordinary least squares)",
       fits, 0, -1},
      {"fit-range", 0, OVL_OPT_RANGE, fit_range, "MIN:MAX", "sizes used by the fit (default: all measured)", NULL, 0,
       (int64_t)1 << 30},
      {"cache-bytes", 0, OVL_OPT_SIZE, &cache, "BYTES",
       "rotate each rank's send and receive buffers through this many bytes (0: one buffer, warm in cache; default: "
       "2x the last-level cache, lowered when the node's ranks would not fit in half of MemAvailable)",
       NULL, 0, (int64_t)1 << 40},
      BENCH_OPT_MEM_LIMIT(&mem_limit),
      {"full", 'f', OVL_OPT_FLAG, &full, NULL, "also print min/max times and repetition counts", NULL, 0, -1},
      {"json", 'j', OVL_OPT_FLAG, &json, NULL, "one JSON object per size instead of the table", NULL, 0, -1},
      {"quiet", 'q', OVL_OPT_FLAG, &quiet, NULL, "results only: no header lines, no progress on stderr", NULL, 0, -1},
      {"help", 'h', OVL_OPT_FLAG, &help, NULL, "show this help", NULL, 0, -1},
  };
  int prc = cli_parse("usage: mpiexec -n P ovl bench pingpong [options]        (P >= 2)\n\n"
                      "Point-to-point latency and bandwidth between the two halves of the ranks: pair i is rank i and\n"
                      "rank P/2 + i, K pairs at once (K processes per \"node\" when each half is a node). Ping-pong\n"
                      "gives the one-way time (round trip / 2); --window W streams W messages one way per repetition\n"
                      "(osu_bw), the unidirectional bandwidth of Huang & Chow Fig. 3. Time per repetition = MAX over\n"
                      "the K senders; min/median/max over repetitions; bandwidth = bytes / median time (MB = 1e6 B).\n"
                      "A Hockney fit t = alpha + beta*s over the sizes gives L = alpha, B = 1/beta, N_half = B*L, and\n"
                      "the model bandwidth s/(L + s/B) is printed next to each measurement (per pair). Rank 0 prints\n"
                      "one progress line per size on stderr.",
                      opts, (int)(sizeof opts / sizeof opts[0]), argc, argv, 3, &help, NULL);
  if (prc >= 0) return prc;
  ovl_bench_pingpong_params p = ovl_bench_pingpong_default();
  p.min_bytes = range[0], p.max_bytes = range[1], p.iters = iters, p.iters_large = iters_large, p.warmup = warmup;
  p.warmup_large = warmup_large, p.large = large, p.pairs = pairs, p.window = window, p.cache_bytes = cache;
  p.mem_limit = mem_limit;
  int P = 0, nsz = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  ovl_bench_sizes(range[0], range[1], NULL, 0, &nsz);
  ovl_bench_reporter prog;
  ovl_bench_reporter_start(&prog, "pingpong", nsz, !quiet);
  p.progress = ovl_bench_reporter_fn, p.progress_ctx = &prog;
  if (quiet) ovl_log_set_level(OVL_LOG_QUIET);
  ovl_bench_pingpong_result res;
  ovl_err rc = ovl_bench_pingpong(&p, &res);
  if (rc) return cli_fail("bench pingpong", rc);
  int half = res.half;
  if (!json) {
    int64_t llc = 0;
    ovl_bench_llc_bytes(&llc);
    const char *meth = window ? "window" : "ping-pong";
    ovl_log(OVL_LOG_INFO, "# ovl bench pingpong: %d ranks, %d pair%s (rank i <-> rank %d + i, i < %d), %s", P, pairs,
            pairs > 1 ? "s" : "", half, pairs, meth);
    if (window) ovl_log(OVL_LOG_INFO, " (windows of up to %d messages one way + 1-byte ack)\n", window);
    else ovl_log(OVL_LOG_INFO, " (one-way time = round trip / 2)\n");
    ovl_log(OVL_LOG_INFO, "# MPI: %s\n", cli_mpi_library());
    if (cache > 0) {
      ovl_log(OVL_LOG_INFO, "# buffers: send and receive each rotate through %s per rank",
              bench_bytes_str((double)cache));
      ovl_log(OVL_LOG_INFO, " (last-level cache %s%s)\n", bench_bytes_str((double)llc),
              capped ? "; default lowered to fit half of the available memory" : "");
    } else {
      ovl_log(OVL_LOG_INFO, "# buffers: one send and one receive buffer, reused (warm in cache)\n");
    }
    ovl_log(OVL_LOG_INFO,
            "# time per repetition = MAX over the %d sender%s; %d warm-up + %d timed repetitions (sizes > %" PRId64
            ": %d + %d)\n",
            pairs, pairs > 1 ? "s" : "", warmup, iters, large, warmup_large, iters_large);
  }
  ovl_bench_fit f;
  ovl_bench_pingpong_fit(res.rows, res.nrows, fit_range[0], fit_range[1], strcmp(fit, "abs") == 0, &f);
  double alpha = f.alpha, beta = f.beta, nhalf = f.n_half;
  if (!json) {
    const char *how = strcmp(fit, "abs") == 0 ? "ordinary" : "relative";
    if (f.status == 0)
      ovl_log(OVL_LOG_INFO,
              "# Hockney fit (%s least squares over %d sizes): L = alpha = %.3f us, B = 1/beta = %.1f MB/s, "
              "N_half = B*L = %.0f B%s\n",
              how, f.nfit, alpha * 1e6, 1e-6 / beta, nhalf,
              alpha < 0 ? " (alpha < 0: the sizes do not follow one line; try --fit-range)" : "");
    else if (f.status == 2)
      ovl_log(OVL_LOG_INFO,
              "# Hockney fit (%s least squares over %d sizes): beta <= 0, the sizes do not follow one line; try "
              "--fit-range\n",
              how, f.nfit);
    else ovl_log(OVL_LOG_INFO, "# Hockney fit: not enough sizes (%d)\n", f.nfit);
    if (window) ovl_log(OVL_LOG_INFO, "# window method: alpha is the time per message of a stream, not a latency\n");
    ovl_log(OVL_LOG_QUIET, "# %10s %12s %12s %12s %14s", "size(B)", window ? "t_msg(us)" : "lat(us)", "bw(MB/s)",
            "model(MB/s)", "agg_bw(MB/s)");
    if (full) ovl_log(OVL_LOG_QUIET, " %12s %12s %8s %6s", "t_min(us)", "t_max(us)", "iters", "window");
    ovl_log(OVL_LOG_QUIET, "\n");
  }
  for (int si = 0; si < res.nrows; si++) {
    const ovl_bench_pingpong_row *r = &res.rows[si];
    double s = (double)r->bytes, tm = r->st.median;
    double bw = tm > 0 ? s / tm * 1e-6 : 0, agg = bw * pairs, model = ovl_hockney_bw(alpha, beta, s) * 1e-6;
    if (json) {
      ovl_record *rec = NULL;
      const int fitted = f.status == 0;
      rc = ovl_record_create("pingpong", &rec);
      if (!rc) rc = ovl_record_set_str(rec, "method", window ? "window" : "pingpong");
      if (!rc) rc = ovl_record_set_int(rec, "ranks", P);
      if (!rc) rc = ovl_record_set_int(rec, "pairs", pairs);
      if (!rc) rc = ovl_record_set_int(rec, "window", r->window);
      if (!rc) rc = ovl_record_set_int(rec, "bytes", r->bytes);
      if (!rc) rc = ovl_record_set_int(rec, "iterations", r->iters);
      if (!rc) rc = ovl_record_set_num(rec, "t_min", r->st.min);
      if (!rc) rc = ovl_record_set_num(rec, "t_median", tm);
      if (!rc) rc = ovl_record_set_num(rec, "t_max", r->st.max);
      if (!rc) rc = ovl_record_set_num(rec, "bw_MBps", tm > 0 ? bw : NAN);
      if (!rc) rc = ovl_record_set_num(rec, "agg_bw_MBps", tm > 0 ? agg : NAN);
      /* the fit's values are null when it failed (too few sizes, beta <= 0) */
      if (!rc) rc = ovl_record_set_num(rec, "model_bw_MBps", fitted ? model : NAN);
      if (!rc) rc = ovl_record_set_num(rec, "alpha", fitted ? alpha : NAN);
      if (!rc) rc = ovl_record_set_num(rec, "beta", fitted ? beta : NAN);
      if (!rc) rc = ovl_record_set_num(rec, "n_half", fitted ? nhalf : NAN);
      if (!rc) rc = ovl_record_set_str(rec, "fit", fit);
      if (!rc) rc = ovl_record_set_int(rec, "cache_bytes", cache);
      if (!rc) rc = ovl_record_set_str(rec, "mpi", cli_mpi_library());
      if (!rc) rc = cli_emit(&rec);
      ovl_record_destroy(&rec);
      if (rc) {
        ovl_bench_pingpong_free(&res);
        return cli_fail("bench pingpong", rc);
      }
    } else {
      ovl_log(OVL_LOG_QUIET, "  %10" PRId64 " %12.3f %12.2f %12.2f %14.2f", r->bytes, tm * 1e6, bw, model, agg);
      if (full) ovl_log(OVL_LOG_QUIET, " %12.3f %12.3f %8d %6d", r->st.min * 1e6, r->st.max * 1e6, r->iters, r->window);
      ovl_log(OVL_LOG_QUIET, "\n");
    }
  }
  ovl_bench_pingpong_free(&res);
  return CLI_OK;
}
