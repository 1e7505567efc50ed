/* ovl bench progress: does a nonblocking broadcast advance while ranks compute?
 *
 * For each back end it measures, per repetition (MAX over ranks):
 *   comm     : post the broadcast, wait;
 *   comp     : the computation alone (dgemm chunks);
 *   overlap  : post, compute every chunk, wait (no progress calls);
 *   progress : post, compute, calling ovl_req_progress after every k chunks,
 *              wait.
 * overlap and progress are compared with comm + comp (no overlap at all) and
 * max(comm, comp) (perfect overlap). The measurement is ovl_bench_progress
 * (ovl/bench.h), the table or records ovl_bench_progress_print; this file
 * parses the options. */
#include <stdio.h>

#include "bench_util.h"

int cmd_bench_progress(int argc, char **argv) {
  int help = 0, iters = 5, warmup = 1, chunks = 64, every = 1, nb = 192, json = 0;
  int64_t size = (int64_t)32 << 20, segment = 0, mem_limit = 0;
  const char *alg = "auto", *alg_old = NULL;
  const char *const *algs = ovl_alg_choices("bcast");
  ovl_opt opts[] = {
      {"size", 'n', OVL_OPT_SIZE, &size, "BYTES", "broadcast size in bytes", NULL, 8, (int64_t)1 << 34},
      {"chunks", 0, OVL_OPT_INT, &chunks, "K", "computation chunks (one dgemm each)", NULL, 1, 1000000},
      {"chunk-size", 0, OVL_OPT_INT, &nb, "NB", "dgemm size of a chunk (NB x NB x NB)", NULL, 1, 8192},
      {"every", 0, OVL_OPT_INT, &every, "E", "call the progress hook after every E chunks", NULL, 1, 1000000},
      {"bcast-alg", 0, OVL_OPT_CHOICE, &alg, "A", "broadcast schedule of the own back end", algs, 0, -1},
      {"algo", 'a', OVL_OPT_CHOICE, &alg_old, "A", NULL, algs, 0, -1}, /* deprecated spelling */
      {"segment", 0, OVL_OPT_SIZE, &segment, "BYTES", "chain segment (default: 128 KiB)", NULL, 0, (int64_t)1 << 34},
      {"iterations", 'i', OVL_OPT_INT, &iters, "I", "timed repetitions", NULL, 1, 10000},
      {"warmup", 'x', OVL_OPT_INT, &warmup, "X", "untimed warm-up repetitions", NULL, 0, 10000},
      BENCH_OPT_MEM_LIMIT(&mem_limit),
      {"json", 'j', OVL_OPT_FLAG, &json, NULL, "one JSON object per back end", NULL, 0, -1},
      {"help", 'h', OVL_OPT_FLAG, &help, NULL, "show this help", NULL, 0, -1},
  };
  int prc = cli_parse("usage: mpiexec -n P ovl bench progress [options]\n\n"
                      "Measures whether a nonblocking broadcast from rank 0 advances while every rank computes,\n"
                      "without and with the progress hook (ovl_req_progress), for the MPI library's MPI_Ibcast and\n"
                      "ovl's own schedule. Times are per repetition, MAX over ranks; median over repetitions.",
                      opts, (int)(sizeof opts / sizeof opts[0]), argc, argv, 3, &help, NULL);
  if (prc >= 0) return prc;
  if (alg_old) { /* the spelling of older releases */
    if (ovl_world_rank() == 0)
      fprintf(stderr, "ovl: note: --algo/-a is deprecated here, use --bcast-alg (accepted for one release)\n");
    alg = alg_old;
  }
  ovl_bench_progress_params p = ovl_bench_progress_default();
  p.bytes = size, p.chunks = chunks, p.nb = nb, p.every = every, p.segment = segment, p.iters = iters;
  p.warmup = warmup, p.mem_limit = mem_limit;
  ovl_alg_parse("bcast", alg, &p.alg);
  ovl_err rc = OVL_OK;
  if (segment > 0 && p.alg != OVL_BCAST_CHAIN && p.alg != OVL_ALG_AUTO)
    rc = ovl_err_set(OVL_ERR_ARG,
                     "--segment applies to --algo chain (or auto) only, not %s: refused rather than ignored", alg);
  if ((rc = ovl_err_agree(MPI_COMM_WORLD, rc)) != OVL_OK) return cli_usage_fail("bench progress", rc);
  ovl_bench_progress_result res;
  rc = ovl_bench_progress(&p, &res);
  if (rc) return cli_fail("bench progress", rc);
  const ovl_bench_print_opts po = {.json = json, .header = 1};
  if (ovl_world_rank() == 0) rc = ovl_bench_progress_print(stdout, &p, &res, &po);
  return rc ? cli_fail("bench progress", rc) : CLI_OK;
}
