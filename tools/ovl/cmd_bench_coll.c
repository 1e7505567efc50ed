/* ovl bench coll: bandwidth of one collective vs message size in the three
 * cases of Huang & Chow, Section V-B (Fig. 4-6).
 *
 * Ranks are numbered consecutively per "node" of K = --ppn ranks: node
 * j = rank / K, local index c = rank % K. Communicator c holds the c-th rank
 * of every node (p = P / K ranks, ordered by node). For a message of n bytes:
 *  - blocking: one collective of n bytes on communicator 0 (one rank per
 *    node), posted and waited at once (ovl_i<op> + ovl_req_wait);
 *  - ndup: the same ranks, the message split over N_DUP lanes
 *    (ovl_lanes_i<op> + waitall): nonblocking overlap;
 *  - ppn: all K communicators at once, each moving 1/K of the message:
 *    multiple-PPN overlap.
 * In the first two cases the other ranks sleep (MPI_Ibarrier + MPI_Test +
 * sleep). Effective bandwidth = 2(p - 1) n / p / t. Time per repetition is
 * the MAX over the ranks taking part; min/median/max over the timed
 * repetitions. Buffers rotate through --cache-bytes per rank and role, so
 * caches cannot flatter repeated repetitions. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "ovl/model.h"

enum { CASE_BLOCKING = 0, CASE_NDUP = 1, CASE_PPN = 2, NCASES = 3 };
static const char *const k_case_names[NCASES] = {"blocking", "ndup", "ppn"};                /* trace phases, columns */
static const char *const k_case_keys[NCASES] = {"blocking", "ndup_overlap", "ppn_overlap"}; /* JSON */

typedef struct coll_ctx {
  bench_op op;
  ovl_coll_cfg cfg;
  int P, rank, k, p, local, ndup;
  MPI_Comm cc; /* communicator of this rank's local index */
  ovl_lanes L; /* N_DUP lanes over communicator 0 (leaders only) */
  bench_rot sb, rb;
} coll_ctx;

/* Elements of the message (bcast/reduce/allreduce) or of the block per rank
 * (allgather/alltoall) for n bytes over p ranks, and the bytes that really
 * move (a whole number of doubles, p blocks for blocked ops). */
static int64_t coll_elems(bench_op op, int64_t bytes, int p, int64_t *actual) {
  int64_t e = bytes / 8 > 0 ? bytes / 8 : 1;
  if (bench_op_blocked(op)) {
    e = e / p > 0 ? e / p : 1;
    *actual = 8 * e * p;
  } else {
    *actual = 8 * e;
  }
  return e;
}

/* One case: warm-up + timed repetitions on the ranks that take part; t[r]
 * receives this rank's time of timed repetition r (0 if it sleeps). trace:
 * record phases and posts for the timeline. */
static ovl_err coll_case(coll_ctx *x, int which, int64_t e, int warm, int nit, double *t, int trace) {
  int part_of = which == CASE_PPN || x->local == 0;
  for (int r = 0; r < nit; r++) t[r] = 0;
  if (!part_of) return OVL_OK;
  MPI_Comm bc = which == CASE_PPN ? MPI_COMM_WORLD : x->cc;
  int64_t ec = e;
  if (which == CASE_PPN) ec = ovl_block_len(e, x->k, x->local);
  const char *tn = bench_trace_name(which == CASE_PPN ? "ppn" : "blocking", x->op);
  for (int it = 0; it < warm + nit; it++) {
    double *s = bench_rot_next(&x->sb), *rv = bench_rot_next(&x->rb);
    ovl_req req = OVL_REQ_NULL, reqs[OVL_LANES_MAX];
    MPI_Barrier(bc);
    double t0 = ovl_time();
    if (trace) OVL_TRACE_BEGIN(k_case_names[which]);
    if (which == CASE_NDUP) {
      OVL_TRY(bench_op_post_lanes(x->op, x->L, s, rv, ec, &x->cfg, reqs));
      OVL_TRY(bench_lanes_wait(x->op, x->ndup, reqs));
    } else {
      OVL_TRY(bench_op_post(x->op, s, rv, ec, x->cc, &x->cfg, &req));
      if (trace) OVL_TRACE_POST(tn, which == CASE_PPN ? x->local : 0, 8 * ec);
      OVL_TRY(ovl_req_wait(&req));
      if (trace) OVL_TRACE_COMPLETE(tn, which == CASE_PPN ? x->local : 0);
    }
    double dt = ovl_time() - t0;
    if (trace) OVL_TRACE_END(k_case_names[which], 8 * ec);
    if (it >= warm) t[it - warm] = dt;
  }
  return OVL_OK;
}

/* Run a case and reduce its times; the sleepers meet the others afterwards. */
static ovl_err coll_measure(coll_ctx *x, int which, int64_t e, int warm, int nit, double *t, ovl_stats *st) {
  ovl_err rc = coll_case(x, which, e, warm, nit, t, 0);
  if (rc != OVL_OK) ovl_fatal(MPI_COMM_WORLD, rc, "bench coll, case %s: %s", k_case_names[which], ovl_errmsg());
  memset(st, 0, sizeof *st);
  if (which == CASE_PPN) OVL_TRY(ovl_stats_max_over_ranks(MPI_COMM_WORLD, t, nit, st));
  else if (x->local == 0) OVL_TRY(ovl_stats_max_over_ranks(x->cc, t, nit, st));
  if (x->k > 1 && which != CASE_PPN) OVL_TRY(bench_sleep_barrier(MPI_COMM_WORLD, 1000));
  return OVL_OK;
}

/* The Fig. 6 timeline: every case at one size under the tracer. */
static ovl_err coll_timeline(coll_ctx *x, int64_t e, int warm, int reps, const char *file) {
  char prefix[4096];
  snprintf(prefix, sizeof prefix, "%s", file);
  size_t len = strlen(prefix);
  if (len > 5 && strcmp(prefix + len - 5, ".json") == 0) prefix[len - 5] = '\0';
  double *t = calloc((size_t)(reps > 0 ? reps : 1), sizeof *t);
  ovl_err rc = t ? OVL_OK : ovl_err_set(OVL_ERR_NOMEM, "cannot allocate the timeline arrays");
  OVL_TRY(ovl_err_agree(MPI_COMM_WORLD, rc));
  for (int which = 0; which < NCASES; which++) { /* warm-up, untraced */
    OVL_TRY(coll_case(x, which, e, warm, 0, t, 0));
    if (x->k > 1) OVL_TRY(bench_sleep_barrier(MPI_COMM_WORLD, 1000));
  }
  OVL_TRY(ovl_trace_start(MPI_COMM_WORLD, (int64_t)1 << 16));
  for (int which = 0; which < NCASES && rc == OVL_OK; which++) {
    rc = coll_case(x, which, e, 0, reps, t, 1);
    if (rc != OVL_OK) ovl_fatal(MPI_COMM_WORLD, rc, "bench coll --timeline: %s", ovl_errmsg());
    if (x->k > 1) OVL_TRY(bench_sleep_barrier(MPI_COMM_WORLD, 1000));
  }
  free(t);
  return ovl_trace_write(prefix);
}

int cmd_bench_coll(int argc, char **argv) {
  int help = 0, iters = 20, warmup = 2, ndup = 4, ppn = 1, full = 0, json = 0, quiet = 0, tl_reps = 3;
  int64_t range[2] = {8, (int64_t)16 << 20}, cache = 0, tl_size = 0, mem_limit = 0;
  const char *op = "bcast", *backend = "mpi", *alg = "auto", *timeline = NULL;
  static const char *const backends[] = {"mpi", "own", NULL};
  int capped = 0, knode = 1, nodes = 1, consec = 0;
  if (bench_default_cache_bytes(MPI_COMM_WORLD, 2, &cache, &capped) != OVL_OK ||
      bench_node_info(MPI_COMM_WORLD, &knode, &nodes, &consec) != OVL_OK)
    return cli_fail("bench coll", OVL_ERR_MPI);
  ppn = nodes >= 2 && consec ? knode : 1;
  const char *ppn_from = nodes >= 2 && consec ? "MPI_Comm_split_type"
                         : nodes >= 2         ? "default 1: ranks are not consecutive per node"
                                              : "default 1: one node";
  ovl_opt opts[] = {
      {"op", 'o', OVL_OPT_CHOICE, &op, "OP", "the collective (sum for reductions; root 0)", bench_op_names, 0, -1},
      {"message-size", 'm', OVL_OPT_RANGE, range, "MIN:MAX",
       "message sizes n in bytes, rounded to whole doubles (allgather: the gathered result, alltoall: the send buffer, "
       "both p equal blocks)",
       NULL, 1, (int64_t)1 << 34},
      {"ndup", 'd', OVL_OPT_INT, &ndup, "N", "lanes (N_DUP) of the nonblocking-overlap case", NULL, 1, OVL_LANES_MAX},
      {"ppn", 'k', OVL_OPT_INT, &ppn, "K",
       "ranks per \"node\" (consecutive ranks); collectives run over p = P/K ranks (default: ranks per node from "
       "MPI_Comm_split_type on several nodes, else 1)",
       NULL, 1, 1 << 20},
      {"backend", 'b', OVL_OPT_CHOICE, &backend, "B", "collectives: the MPI library's or ovl's own", backends, 0, -1},
      {"alg", 'a', OVL_OPT_STRING, &alg, "NAME",
       "algorithm of the own back end (bcast: binomial, scatter-allgather, chain, hier; reduce: binomial, "
       "rabenseifner; allreduce: rabenseifner, ring; allgather: ring, recdbl; alltoall: ring, pairwise)",
       NULL, 0, -1},
      {"iterations", 'i', OVL_OPT_INT, &iters, "I", "timed repetitions per size and case", NULL, 1, 1000000},
      {"warmup", 'x', OVL_OPT_INT, &warmup, "X", "untimed warm-up repetitions per size and case", NULL, 0, 1000000},
      {"cache-bytes", 0, OVL_OPT_SIZE, &cache, "BYTES",
       "rotate each rank's send and receive buffers through this many bytes (0: one buffer each, warm in cache; "
       "default: 2x the last-level cache, lowered when the node's ranks would not fit in half of MemAvailable)",
       NULL, 0, (int64_t)1 << 40},
      {"timeline", 't', OVL_OPT_STRING, &timeline, "FILE.json",
       "also trace every case at one size: post/completion per rank and lane (writes FILE.json and FILE.csv)", NULL, 0,
       -1},
      {"timeline-size", 0, OVL_OPT_SIZE, &tl_size, "BYTES", "message size of the timeline (0: the largest size)", NULL,
       0, (int64_t)1 << 34},
      {"timeline-reps", 0, OVL_OPT_INT, &tl_reps, "R", "traced repetitions of each case", NULL, 1, 1000},
      BENCH_OPT_MEM_LIMIT(&mem_limit),
      {"full", 'f', OVL_OPT_FLAG, &full, NULL, "also print min and max times of each case", NULL, 0, -1},
      {"json", 'j', OVL_OPT_FLAG, &json, NULL, "one JSON object per size instead of the table", NULL, 0, -1},
      {"quiet", 'q', OVL_OPT_FLAG, &quiet, NULL, "results only: no header lines, no progress on stderr", NULL, 0, -1},
      {"help", 'h', OVL_OPT_FLAG, &help, NULL, "show this help", NULL, 0, -1},
  };
  const int nopts = (int)(sizeof opts / sizeof opts[0]);
  unsigned char given[32] = {0};
  int prc = cli_parse("usage: mpiexec -n P ovl bench coll [options]\n\n"
                      "Bandwidth of one collective vs message size n in three cases (Huang & Chow, Fig. 4-6). Ranks\n"
                      "form nodes of K consecutive ranks; communicator c holds the c-th rank of every node (p = P/K).\n"
                      "  blocking  one collective of n bytes on communicator 0 (one rank per node; the others sleep)\n"
                      "  ndup      the same ranks, n split over N_DUP lanes, posted together, then waitall\n"
                      "  ppn       all K communicators at once, each moving n/K\n"
                      "Effective bandwidth = 2(p-1)n/p / t (MB = 1e6 B). Time per repetition = MAX over the ranks\n"
                      "taking part; min/median/max over repetitions; warm-up excluded. All traffic goes through ovl's\n"
                      "comm layer. Rank 0 prints one progress line per size on stderr.",
                      opts, nopts, argc, argv, 3, &help, given);
  if (prc >= 0) return prc;
  for (int o = 0; o < nopts; o++)
    if (given[o] && opts[o].dest == &ppn) ppn_from = "explicit";

  coll_ctx x;
  memset(&x, 0, sizeof x);
  MPI_Comm_size(MPI_COMM_WORLD, &x.P);
  MPI_Comm_rank(MPI_COMM_WORLD, &x.rank);
  x.op = bench_op_parse(op);
  x.cfg = ovl_coll_cfg_default();
  x.k = ppn, x.ndup = ndup, x.cc = MPI_COMM_NULL;
  ovl_err rc = ovl_backend_parse(backend, &x.cfg.backend);
  ovl_alg a = OVL_ALG_AUTO;
  if (!rc) rc = ovl_alg_parse(op, alg, &a);
  if (!rc && a != OVL_ALG_AUTO && x.cfg.backend != OVL_BACKEND_OWN)
    rc = ovl_err_set(OVL_ERR_ARG, "--alg %s needs --backend own (the MPI library picks its own algorithms)", alg);
  if (!rc && x.P % ppn != 0) rc = ovl_err_set(OVL_ERR_ARG, "--ppn %d does not divide the %d ranks", ppn, x.P);
  if (!rc && x.P / ppn < 2)
    rc = ovl_err_set(OVL_ERR_ARG, "--ppn %d leaves %d rank per collective; the bandwidth needs p >= 2 (%d ranks)", ppn,
                     x.P / ppn, x.P);
  if ((rc = ovl_err_agree(MPI_COMM_WORLD, rc)) != OVL_OK) return cli_fail("bench coll", rc);
  if (timeline) { /* the timeline's files, PREFIX.json and PREFIX.csv, before anything is measured */
    char pre[4096], tj[4200], tc[4200];
    snprintf(pre, sizeof pre, "%s", timeline);
    size_t tl = strlen(pre);
    if (tl > 5 && strcmp(pre + tl - 5, ".json") == 0) pre[tl - 5] = '\0';
    const cli_out outs[] = {{cli_join(tj, sizeof tj, pre, ".json"), "timeline"},
                            {cli_join(tc, sizeof tc, pre, ".csv"), "timeline"}};
    int orc = cli_check_outputs("bench coll", outs, 2, NULL, 0);
    if (orc >= 0) return orc;
  }
  switch (x.op) {
  case BENCH_BCAST: x.cfg.bcast = a; break;
  case BENCH_REDUCE: x.cfg.reduce = a; break;
  case BENCH_ALLREDUCE: x.cfg.allreduce = a; break;
  case BENCH_ALLGATHER: x.cfg.allgather = a; break;
  case BENCH_ALLTOALL: x.cfg.alltoall = a; break;
  }
  if (quiet) ovl_log_set_level(OVL_LOG_QUIET);
  x.p = x.P / x.k;
  x.local = x.rank % x.k;
  MPI_Comm_split(MPI_COMM_WORLD, x.local, x.rank / x.k, &x.cc);
  if (x.local == 0) rc = ovl_lanes_create(x.cc, ndup, &x.L);
  rc = ovl_err_agree(MPI_COMM_WORLD, rc);

  /* sizes: the bytes that really move, without repeats */
  int nreq = bench_sizes(range[0], range[1], NULL, 0), nsz = 0;
  int64_t *req_sizes = calloc((size_t)nreq, sizeof(int64_t)), *sizes = calloc((size_t)nreq, sizeof(int64_t));
  double *t = calloc((size_t)iters, sizeof(double));
  if (!req_sizes || !sizes || !t) rc = ovl_err_set(OVL_ERR_NOMEM, "cannot allocate the result arrays");
  int64_t maxb = 8;
  if (!rc) {
    bench_sizes(range[0], range[1], req_sizes, nreq);
    for (int i = 0; i < nreq; i++) {
      int64_t actual;
      coll_elems(x.op, req_sizes[i], x.p, &actual);
      if (nsz == 0 || sizes[nsz - 1] != actual) sizes[nsz++] = actual;
    }
    maxb = sizes[nsz - 1];
    if (timeline && tl_size > 0) {
      int64_t actual;
      coll_elems(x.op, tl_size, x.p, &actual);
      if (actual > maxb) maxb = actual;
    }
  }
  /* the send and receive arenas: checked against the node before allocating */
  rc = ovl_err_agree(MPI_COMM_WORLD, rc);
  if (!rc) rc = bench_check_memory(2.0 * bench_rot_bytes(cache, maxb), mem_limit);
  if (!rc) rc = bench_rot_create(cache, maxb, &x.sb);
  if (!rc) rc = bench_rot_create(cache, maxb, &x.rb);
  rc = ovl_err_agree(MPI_COMM_WORLD, rc);
  if (rc == OVL_OK && !json) {
    const char *on = bench_op_names[x.op];
    ovl_log(OVL_LOG_INFO,
            "# ovl bench coll: %s, %d ranks = %d nodes x %d ppn (ppn: %s), p = %d ranks per collective, N_DUP = %d, "
            "backend %s (alg %s)\n",
            on, x.P, x.p, x.k, ppn_from, x.p, ndup, backend, alg);
    ovl_log(OVL_LOG_INFO,
            "# blocking: ovl_i%s + wait on rank 0 of every node; ndup: ovl_%s%s over %d lanes + waitall, same ranks; "
            "ppn: %d communicators (rank c of every node) at once, n/%d each\n",
            on, x.op == BENCH_ALLTOALL ? "ialltoall per lane" : "lanes_i", x.op == BENCH_ALLTOALL ? "" : on, ndup, x.k,
            x.k);
    if (x.k == 1)
      ovl_log(OVL_LOG_INFO, "# K = 1: the ppn case repeats the blocking case on all ranks; --ppn K > 1 emulates nodes "
                            "of K ranks\n");
    ovl_log(OVL_LOG_INFO, "# MPI: %s\n", cli_mpi_library());
    if (cache > 0) {
      ovl_log(OVL_LOG_INFO, "# buffers: send and receive each rotate through %s per rank",
              bench_bytes_str((double)x.sb.bytes));
      ovl_log(OVL_LOG_INFO, " (last-level cache %s)%s\n", bench_bytes_str((double)bench_llc_bytes()),
              capped ? "; default lowered to fit half of the available memory" : "");
    } else {
      ovl_log(OVL_LOG_INFO, "# buffers: one send and one receive buffer, reused (warm in cache)\n");
    }
    ovl_log(OVL_LOG_INFO,
            "# time per repetition = MAX over ranks; median (min/max with -f) over %d timed repetitions after %d "
            "warm-up; bw = 2(p-1)n/p / t_med, MB = 1e6 B\n",
            iters, warmup);
    ovl_log(OVL_LOG_QUIET, "# %10s %11s %12s %11s %12s %11s %12s", "size(B)", "blk_t(us)", "blk_bw(MB/s)", "ndup_t(us)",
            "ndup_bw(MB/s)", "ppn_t(us)", "ppn_bw(MB/s)");
    if (full)
      ovl_log(OVL_LOG_QUIET, " %11s %11s %11s %11s %11s %11s", "blk_min", "blk_max", "ndup_min", "ndup_max", "ppn_min",
              "ppn_max");
    ovl_log(OVL_LOG_QUIET, "\n");
  }
  bench_progress prog;
  bench_progress_start(&prog, "coll", nsz, !quiet);
  for (int si = 0; si < nsz && rc == OVL_OK; si++) {
    int64_t actual = 0, e = coll_elems(x.op, sizes[si], x.p, &actual);
    bench_rot_size(&x.sb, actual);
    bench_rot_size(&x.rb, actual);
    ovl_stats st[NCASES];
    for (int which = 0; which < NCASES && rc == OVL_OK; which++)
      rc = coll_measure(&x, which, e, warmup, iters, t, &st[which]);
    if (rc != OVL_OK) break;
    double bw[NCASES];
    for (int w = 0; w < NCASES; w++) bw[w] = ovl_coll_eff_bw((double)actual, x.p, st[w].median) * 1e-6;
    if (json) {
      ovl_log(OVL_LOG_QUIET,
              "{\"bench\":\"coll\",\"op\":\"%s\",\"ranks\":%d,\"ppn\":%d,\"p\":%d,\"ndup\":%d,\"backend\":\"%s\","
              "\"alg\":\"%s\",\"bytes\":%" PRId64 ",\"iterations\":%d",
              bench_op_names[x.op], x.P, x.k, x.p, ndup, backend, alg, actual, iters);
      for (int w = 0; w < NCASES; w++)
        ovl_log(OVL_LOG_QUIET, ",\"%s\":{\"t_min\":%.6e,\"t_median\":%.6e,\"t_max\":%.6e,\"bw_MBps\":%.4f}",
                k_case_keys[w], st[w].min, st[w].median, st[w].max, bw[w]);
      ovl_log(OVL_LOG_QUIET, ",\"cache_bytes\":%" PRId64 ",\"mpi\":\"%s\"}\n", cache > 0 ? x.sb.bytes : 0,
              cli_mpi_library());
    } else {
      ovl_log(OVL_LOG_QUIET, "  %10" PRId64 " %11.2f %12.2f %11.2f %12.2f %11.2f %12.2f", actual, st[0].median * 1e6,
              bw[0], st[1].median * 1e6, bw[1], st[2].median * 1e6, bw[2]);
      if (full)
        for (int w = 0; w < NCASES; w++) ovl_log(OVL_LOG_QUIET, " %11.2f %11.2f", st[w].min * 1e6, st[w].max * 1e6);
      ovl_log(OVL_LOG_QUIET, "\n");
    }
    bench_progress_step(&prog, "%" PRId64 " B: bw %.1f / %.1f / %.1f MB/s (blocking / ndup / ppn)", actual, bw[0],
                        bw[1], bw[2]);
  }
  if (rc == OVL_OK && timeline) {
    int64_t actual = 0, e = coll_elems(x.op, tl_size > 0 ? tl_size : sizes[nsz - 1], x.p, &actual);
    bench_rot_size(&x.sb, actual);
    bench_rot_size(&x.rb, actual);
    rc = coll_timeline(&x, e, warmup, tl_reps, timeline);
    if (rc == OVL_OK && !json)
      ovl_log(OVL_LOG_INFO, "# timeline: %d repetitions of each case at %" PRId64 " B written to %s (and .csv)\n",
              tl_reps, actual, timeline);
  }
  free(req_sizes);
  free(sizes);
  free(t);
  bench_rot_destroy(&x.sb);
  bench_rot_destroy(&x.rb);
  ovl_lanes_destroy(&x.L);
  if (x.cc != MPI_COMM_NULL) MPI_Comm_free(&x.cc);
  return rc ? cli_fail("bench coll", rc) : CLI_OK;
}
