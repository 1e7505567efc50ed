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
 * caches cannot flatter repeated repetitions. The measurement is
 * ovl_bench_coll (ovl/bench.h), the table or records ovl_bench_coll_print;
 * this file parses the options. */
#include <stdio.h>
#include <string.h>

#include "bench_util.h"

int cmd_bench_coll(int argc, char **argv) {
  int help = 0, iters = 20, warmup = 2, ndup = ovl_knob_default_int(OVL_KNOB_NDUP, OVL_FAMILY_SSC), ppn = 1, full = 0,
      json = 0, quiet = 0, tl_reps = 3;
  int64_t range[2] = {8, (int64_t)16 << 20}, cache = 0, tl_size = 0, mem_limit = 0;
  const char *op = "bcast", *backend = "mpi", *alg = "auto", *timeline = NULL;
  int capped = 0, knode = 1, nodes = 1, consec = 0;
  if (ovl_bench_default_cache_bytes(MPI_COMM_WORLD, 2, &cache, &capped) != OVL_OK ||
      ovl_node_ranks(MPI_COMM_WORLD, &knode, &nodes, &consec) != OVL_OK)
    return cli_fail("bench coll", OVL_ERR_MPI);
  ppn = nodes >= 2 && consec ? knode : 1;
  const char *ppn_from = nodes >= 2 && consec ? "MPI_Comm_split_type"
                         : nodes >= 2         ? "default 1: ranks are not consecutive per node"
                                              : "default 1: one node";
  ovl_opt opts[] = {
      {"op", 0, OVL_OPT_CHOICE, &op, "OP", "the collective (sum for reductions; root 0)", ovl_bench_op_names, 0, -1},
      {"message-size", 'm', OVL_OPT_RANGE, range, "MIN:MAX",
       "message sizes n in bytes, rounded to whole doubles (allgather: the gathered result, alltoall: the send buffer, "
       "both p equal blocks)",
       NULL, 1, (int64_t)1 << 34},
      {"ndup", 'd', OVL_OPT_INT, &ndup, "N", "lanes (N_DUP) of the nonblocking-overlap case", NULL, 1, OVL_LANES_MAX},
      {"ppn", 0, OVL_OPT_INT, &ppn, "K",
       "ranks per \"node\" (consecutive ranks); collectives run over p = P/K ranks (default: ranks per node from "
       "MPI_Comm_split_type on several nodes, else 1)",
       NULL, 1, 1 << 20},
      {"backend", 0, OVL_OPT_CHOICE, &backend, "B", "collectives: the MPI library's or ovl's own", ovl_backend_names, 0,
       -1},
      {"coll-alg", 0, OVL_OPT_STRING, &alg, "NAME",
       "schedule of the collective on the own back end (bcast: binomial, scatter-allgather, chain, hier; reduce: "
       "binomial, "
       "rabenseifner; allreduce: rabenseifner, ring; allgather: ring, recdbl; alltoall: ring, pairwise)",
       NULL, 0, -1},
      {"algo", 'a', OVL_OPT_STRING, &alg, "NAME", NULL, NULL, 0, -1}, /* deprecated spellings */
      {"alg", 0, OVL_OPT_STRING, &alg, "NAME", NULL, NULL, 0, -1},
      {"iterations", 'i', OVL_OPT_INT, &iters, "I", "timed repetitions per size and case", NULL, 1, 1000000},
      {"warmup", 'x', OVL_OPT_INT, &warmup, "X", "untimed warm-up repetitions per size and case", NULL, 0, 1000000},
      BENCH_OPT_CACHE_BYTES(&cache),
      {"timeline", 0, OVL_OPT_STRING, &timeline, "FILE.json",
       "also trace every case at one size: post/completion per rank and lane (writes FILE.json and FILE.csv)", NULL, 0,
       -1},
      {"timeline-size", 0, OVL_OPT_SIZE, &tl_size, "BYTES", "message size of the timeline (default: the largest size)",
       NULL, 0, (int64_t)1 << 34},
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
  cli_note_deprecated(opts, nopts, given, (const char *const[]){"--algo", "-a", "--alg", NULL}, "--coll-alg");
  ovl_err rc = OVL_OK;
  for (int o = 0; o < nopts; o++) {
    if (given[o] && opts[o].dest == &ppn) ppn_from = "explicit";
    if (!rc && given[o] && !timeline && (opts[o].dest == &tl_size || opts[o].dest == &tl_reps))
      rc = ovl_err_set(OVL_ERR_ARG, "--%s applies to --timeline only: refused rather than ignored", opts[o].lname);
  }

  ovl_bench_coll_params p = ovl_bench_coll_default();
  int P = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  ovl_alg a = OVL_ALG_AUTO;
  if (!rc) rc = ovl_bench_op_parse(op, &p.op);
  if (!rc) rc = ovl_backend_parse(backend, &p.cfg.backend);
  if (!rc) rc = ovl_alg_parse(op, alg, &a);
  if (!rc && a != OVL_ALG_AUTO && p.cfg.backend != OVL_BACKEND_OWN)
    rc = ovl_err_set(OVL_ERR_ARG, "--algo %s needs --backend own (the MPI library picks its own algorithms)", alg);
  if (!rc) rc = ovl_bench_op_set_alg(p.op, a, &p.cfg);
  /* a --ppn that does not fit the ranks of this launch is a run-time error (exit 1), as a --grid is */
  if (!rc && P % ppn != 0) rc = ovl_err_set(OVL_ERR_GRID, "--ppn %d does not divide the %d ranks", ppn, P);
  if (!rc && P / ppn < 2)
    rc = ovl_err_set(OVL_ERR_GRID, "--ppn %d leaves %d rank per collective; the bandwidth needs p >= 2 (%d ranks)", ppn,
                     P / ppn, P);
  if ((rc = ovl_err_agree(MPI_COMM_WORLD, rc)) != OVL_OK)
    return rc == OVL_ERR_ARG ? cli_usage_fail("bench coll", rc) : cli_fail("bench coll", rc);
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
  if (quiet) ovl_log_set_level(OVL_LOG_QUIET);
  p.min_bytes = range[0], p.max_bytes = range[1], p.ndup = ndup, p.ppn = ppn, p.iters = iters, p.warmup = warmup;
  p.cache_bytes = cache, p.mem_limit = mem_limit, p.timeline = timeline, p.timeline_bytes = tl_size;
  p.timeline_reps = tl_reps;
  ovl_bench_reporter prog;
  ovl_bench_reporter_start(&prog, "coll", 0, !quiet);
  p.progress = ovl_bench_reporter_fn, p.progress_ctx = &prog;
  ovl_bench_coll_result res;
  if ((rc = ovl_bench_coll(&p, &res)) != OVL_OK) return cli_fail("bench coll", rc);
  const ovl_bench_print_opts po = {
      .json = json, .header = !quiet, .full = full, .cache_capped = capped, .alg = alg, .ppn_from = ppn_from};
  if (ovl_world_rank() == 0) rc = ovl_bench_coll_print(stdout, &p, &res, &po);
  ovl_bench_coll_free(&res);
  return rc ? cli_fail("bench coll", rc) : CLI_OK;
}
