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
 * (ovl/bench.h), the rows printed by ovl_bench_pingpong_print; this file
 * parses the options. */
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
      BENCH_OPT_CACHE_BYTES(&cache),
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
  int nsz = 0;
  ovl_bench_sizes(range[0], range[1], NULL, 0, &nsz);
  ovl_bench_reporter prog;
  ovl_bench_reporter_start(&prog, "pingpong", nsz, !quiet);
  p.progress = ovl_bench_reporter_fn, p.progress_ctx = &prog;
  if (quiet) ovl_log_set_level(OVL_LOG_QUIET);
  ovl_bench_pingpong_result res;
  ovl_err rc = ovl_bench_pingpong(&p, &res);
  if (rc) return cli_fail("bench pingpong", rc);
  ovl_bench_fit f;
  ovl_bench_pingpong_fit(res.rows, res.nrows, fit_range[0], fit_range[1], strcmp(fit, "abs") == 0, &f);
  const ovl_bench_print_opts po = {.json = json, .header = !quiet, .full = full, .cache_capped = capped};
  if (ovl_world_rank() == 0) rc = ovl_bench_pingpong_print(stdout, &p, &res, &f, &po);
  ovl_bench_pingpong_free(&res);
  return rc ? cli_fail("bench pingpong", rc) : CLI_OK;
}
