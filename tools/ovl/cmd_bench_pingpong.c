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
 * per pair s / t, aggregate k s / t. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "ovl/model.h"

typedef struct pp_cfg {
  int window, pairs, half, rank, sender, receiver, partner;
  MPI_Comm comm; /* the 2k ranks of the pairs (NULL on sleepers) */
} pp_cfg;

/* One repetition on this rank; *t = one-way time (ping-pong) or window time
 * (window), measured on senders, 0 on receivers. */
static ovl_err pp_rep(const pp_cfg *c, int64_t s, int wnd, bench_rot *sb, bench_rot *rb, double *t) {
  const int tag = 11, ack_tag = 12;
  char ack = 0;
  *t = 0;
  if (c->window == 0) {
    void *out = bench_rot_next(sb), *in = bench_rot_next(rb);
    if (c->sender) {
      double t0 = ovl_time();
      OVL_MPI(MPI_Send(out, (int)s, MPI_BYTE, c->partner, tag, c->comm));
      OVL_MPI(MPI_Recv(in, (int)s, MPI_BYTE, c->partner, tag, c->comm, MPI_STATUS_IGNORE));
      *t = (ovl_time() - t0) / 2;
    } else {
      OVL_MPI(MPI_Recv(in, (int)s, MPI_BYTE, c->partner, tag, c->comm, MPI_STATUS_IGNORE));
      OVL_MPI(MPI_Send(out, (int)s, MPI_BYTE, c->partner, tag, c->comm));
    }
    return OVL_OK;
  }
  MPI_Request req[1024];
  double t0 = ovl_time();
  for (int w = 0; w < wnd; w++) {
    if (c->sender) OVL_MPI(MPI_Isend(bench_rot_next(sb), (int)s, MPI_BYTE, c->partner, tag, c->comm, &req[w]));
    else OVL_MPI(MPI_Irecv(bench_rot_next(rb), (int)s, MPI_BYTE, c->partner, tag, c->comm, &req[w]));
  }
  OVL_MPI(MPI_Waitall(wnd, req, MPI_STATUSES_IGNORE));
  if (c->sender) {
    OVL_MPI(MPI_Recv(&ack, 1, MPI_BYTE, c->partner, ack_tag, c->comm, MPI_STATUS_IGNORE));
    *t = ovl_time() - t0;
  } else {
    OVL_MPI(MPI_Send(&ack, 1, MPI_BYTE, c->partner, ack_tag, c->comm));
  }
  return OVL_OK;
}

typedef struct pp_row {
  int64_t bytes;
  int iters, window;
  ovl_stats st; /* one-way time (ping-pong) or time per message (window), seconds */
} pp_row;

int cmd_bench_pingpong(int argc, char **argv) {
  int help = 0, iters = 1000, iters_large = 100, warmup = 100, warmup_large = 10, window = 0, pairs = 1;
  int full = 0, json = 0, quiet = 0;
  int64_t range[2] = {1, (int64_t)64 << 20}, fit_range[2] = {0, 0}, large = 65536, cache = 0, mem_limit = 0;
  const char *fit = "rel";
  static const char *const fits[] = {"rel", "abs", NULL};
  int capped = 0;
  if (bench_default_cache_bytes(MPI_COMM_WORLD, 2, &cache, &capped) != OVL_OK)
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
      {"pairs", 'k', OVL_OPT_INT, &pairs, "K", "pairs at once: rank i with rank P/2 + i, i < K (K per \"node\")", NULL,
       1, 1 << 20},
      {"window", 'w', OVL_OPT_INT, &window, "W",
       "0: ping-pong (one-way = round trip / 2); W > 0: windows of W sends one way + ack (osu_bw), W lowered to "
       "the messages that fit in --cache-bytes",
       NULL, 0, 1024},
      {"fit", 0, OVL_OPT_CHOICE, &fit, "F", "Hockney fit: rel (least relative squares) or abs (ordinary least squares)",
       fits, 0, -1},
      {"fit-range", 0, OVL_OPT_RANGE, fit_range, "MIN:MAX", "sizes used by the fit (0:0 = all measured)", NULL, 0,
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
  int P, rank;
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  pp_cfg c = {window, pairs, P / 2, rank, 0, 0, -1, MPI_COMM_NULL};
  ovl_err rc = OVL_OK;
  if (P < 2) rc = ovl_err_set(OVL_ERR_ARG, "pingpong needs at least 2 ranks, got %d", P);
  else if (pairs > P / 2)
    rc = ovl_err_set(OVL_ERR_ARG, "--pairs %d needs %d ranks (two halves of %d), got %d", pairs, 2 * pairs, pairs, P);
  else if (range[1] > INT32_MAX) rc = ovl_err_set(OVL_ERR_ARG, "message size %" PRId64 " exceeds 2^31-1", range[1]);
  if ((rc = ovl_err_agree(MPI_COMM_WORLD, rc)) != OVL_OK) return cli_fail("bench pingpong", rc);
  if (quiet) ovl_log_set_level(OVL_LOG_QUIET);
  c.sender = rank < pairs;
  c.receiver = rank >= c.half && rank < c.half + pairs;
  int active = c.sender || c.receiver;
  MPI_Comm acomm = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, active ? 0 : MPI_UNDEFINED, rank, &acomm);
  /* in acomm, ranks keep their order: senders 0..k-1, receivers k..2k-1 */
  c.comm = acomm;
  if (active) c.partner = c.sender ? rank + pairs : rank - c.half; /* ranks in acomm */

  int nsz = bench_sizes(range[0], range[1], NULL, 0);
  int64_t *sizes = calloc((size_t)nsz, sizeof *sizes);
  pp_row *rows = calloc((size_t)nsz, sizeof *rows);
  int maxit = iters > iters_large ? iters : iters_large;
  double *t = calloc((size_t)maxit, sizeof *t);
  bench_rot sb = {0}, rb = {0};
  if (!sizes || !rows || !t) rc = ovl_err_set(OVL_ERR_NOMEM, "cannot allocate the result arrays");
  if (!rc) bench_sizes(range[0], range[1], sizes, nsz);
  rc = ovl_err_agree(MPI_COMM_WORLD, rc);
  if (!rc) rc = bench_check_memory(2.0 * bench_rot_bytes(cache, range[1]), mem_limit);
  if (!rc && active) rc = bench_rot_create(cache, range[1], &sb);
  if (!rc && active) rc = bench_rot_create(cache, range[1], &rb);
  if ((rc = ovl_err_agree(MPI_COMM_WORLD, rc)) == OVL_OK) {
    double llc = (double)bench_llc_bytes();
    const char *meth = window ? "window" : "ping-pong";
    if (!json) {
      ovl_log(OVL_LOG_INFO, "# ovl bench pingpong: %d ranks, %d pair%s (rank i <-> rank %d + i, i < %d), %s", P, pairs,
              pairs > 1 ? "s" : "", c.half, pairs, meth);
      if (window) ovl_log(OVL_LOG_INFO, " (windows of up to %d messages one way + 1-byte ack)\n", window);
      else ovl_log(OVL_LOG_INFO, " (one-way time = round trip / 2)\n");
      ovl_log(OVL_LOG_INFO, "# MPI: %s\n", cli_mpi_library());
      if (cache > 0) {
        ovl_log(OVL_LOG_INFO, "# buffers: send and receive each rotate through %s per rank",
                bench_bytes_str((double)cache));
        ovl_log(OVL_LOG_INFO, " (last-level cache %s%s)\n", bench_bytes_str(llc),
                capped ? "; default lowered to fit half of the available memory" : "");
      } else {
        ovl_log(OVL_LOG_INFO, "# buffers: one send and one receive buffer, reused (warm in cache)\n");
      }
      ovl_log(OVL_LOG_INFO,
              "# time per repetition = MAX over the %d sender%s; %d warm-up + %d timed repetitions (sizes > %" PRId64
              ": %d + %d)\n",
              pairs, pairs > 1 ? "s" : "", warmup, iters, large, warmup_large, iters_large);
    }
  }
  bench_progress prog;
  bench_progress_start(&prog, "pingpong", nsz, !quiet);
  for (int si = 0; si < nsz && rc == OVL_OK && active; si++) {
    int64_t s = sizes[si];
    int big = s > large, nit = big ? iters_large : iters, nwu = big ? warmup_large : warmup;
    bench_rot_size(&sb, s);
    bench_rot_size(&rb, s);
    int wnd = window;
    if (window) { /* every pending receive needs its own slot */
      int64_t slots = bench_rot_slots(&rb) < bench_rot_slots(&sb) ? bench_rot_slots(&rb) : bench_rot_slots(&sb);
      if (slots < wnd) wnd = (int)(slots > 0 ? slots : 1);
      if (cache == 0) wnd = window; /* OSU's way: every message of a window uses the same buffer */
    }
    MPI_Barrier(acomm);
    for (int it = 0; it < nwu + nit && rc == OVL_OK; it++) {
      double x = 0;
      rc = pp_rep(&c, s, wnd, &sb, &rb, &x);
      if (it >= nwu) t[it - nwu] = window ? x / wnd : x;
    }
    if (rc != OVL_OK) ovl_fatal(MPI_COMM_WORLD, rc, "pingpong at %" PRId64 " bytes: %s", s, ovl_errmsg());
    rows[si].bytes = s, rows[si].iters = nit, rows[si].window = wnd;
    ovl_stats_max_over_ranks(acomm, t, nit, &rows[si].st); /* receivers contribute 0 */
    bench_progress_step(&prog, "%" PRId64 " B: t_med %.3f us", s, rows[si].st.median * 1e6);
  }
  bench_sleep_barrier(MPI_COMM_WORLD, 2000); /* sleepers wait here the whole time */

  /* Hockney fit over the chosen sizes (rank 0 is a sender and has the rows) */
  double alpha = 0, beta = 0, *fs = NULL, *ft = NULL;
  int nfit = 0;
  if (rc == OVL_OK) {
    fs = calloc((size_t)nsz, sizeof *fs);
    ft = calloc((size_t)nsz, sizeof *ft);
    for (int si = 0; fs && ft && si < nsz; si++) {
      int64_t s = rows[si].bytes;
      if (fit_range[1] > 0 && (s < fit_range[0] || s > fit_range[1])) continue;
      fs[nfit] = (double)s, ft[nfit] = rows[si].st.median, nfit++;
    }
  }
  ovl_err frc = OVL_ERR_ARG;
  if (rc == OVL_OK && rank == 0 && nfit >= 2)
    frc = strcmp(fit, "abs") == 0 ? ovl_hockney_fit(fs, ft, nfit, &alpha, &beta)
                                  : ovl_hockney_fit_weighted(fs, ft, NULL, nfit, &alpha, &beta);
  if (frc != OVL_OK) alpha = beta = 0;
  double nhalf = ovl_hockney_nhalf(alpha, beta);
  if (rc == OVL_OK && !json) {
    if (frc == OVL_OK)
      ovl_log(OVL_LOG_INFO,
              "# Hockney fit (%s least squares over %d sizes): L = alpha = %.3f us, B = 1/beta = %.1f MB/s, "
              "N_half = B*L = %.0f B%s\n",
              strcmp(fit, "abs") == 0 ? "ordinary" : "relative", nfit, alpha * 1e6, beta > 0 ? 1e-6 / beta : 0.0, nhalf,
              alpha < 0 ? " (alpha < 0: the sizes do not follow one line; try --fit-range)" : "");
    else ovl_log(OVL_LOG_INFO, "# Hockney fit: not enough sizes (%d)\n", nfit);
    if (window) ovl_log(OVL_LOG_INFO, "# window method: alpha is the time per message of a stream, not a latency\n");
    ovl_log(OVL_LOG_QUIET, "# %10s %12s %12s %12s %14s", "size(B)", window ? "t_msg(us)" : "lat(us)", "bw(MB/s)",
            "model(MB/s)", "agg_bw(MB/s)");
    if (full) ovl_log(OVL_LOG_QUIET, " %12s %12s %8s %6s", "t_min(us)", "t_max(us)", "iters", "window");
    ovl_log(OVL_LOG_QUIET, "\n");
  }
  for (int si = 0; si < nsz && rc == OVL_OK; si++) {
    pp_row *r = &rows[si];
    double s = (double)r->bytes, tm = r->st.median;
    double bw = tm > 0 ? s / tm * 1e-6 : 0, agg = bw * pairs, model = ovl_hockney_bw(alpha, beta, s) * 1e-6;
    if (json)
      ovl_log(OVL_LOG_QUIET,
              "{\"bench\":\"pingpong\",\"method\":\"%s\",\"ranks\":%d,\"pairs\":%d,\"window\":%d,\"bytes\":%" PRId64
              ",\"iterations\":%d,\"t_min\":%.6e,\"t_median\":%.6e,\"t_max\":%.6e,\"bw_MBps\":%.4f,"
              "\"agg_bw_MBps\":%.4f,\"model_bw_MBps\":%.4f,\"alpha\":%.6e,\"beta\":%.6e,\"n_half\":%.1f,\"fit\":\"%s\","
              "\"cache_bytes\":%" PRId64 ",\"mpi\":\"%s\"}\n",
              window ? "window" : "pingpong", P, pairs, r->window, r->bytes, r->iters, r->st.min, tm, r->st.max, bw,
              agg, model, alpha, beta, nhalf, fit, cache, cli_mpi_library());
    else {
      ovl_log(OVL_LOG_QUIET, "  %10" PRId64 " %12.3f %12.2f %12.2f %14.2f", r->bytes, tm * 1e6, bw, model, agg);
      if (full) ovl_log(OVL_LOG_QUIET, " %12.3f %12.3f %8d %6d", r->st.min * 1e6, r->st.max * 1e6, r->iters, r->window);
      ovl_log(OVL_LOG_QUIET, "\n");
    }
  }
  free(fs);
  free(ft);
  free(sizes);
  free(rows);
  free(t);
  bench_rot_destroy(&sb);
  bench_rot_destroy(&rb);
  if (acomm != MPI_COMM_NULL) MPI_Comm_free(&acomm);
  return rc ? cli_fail("bench pingpong", rc) : CLI_OK;
}
