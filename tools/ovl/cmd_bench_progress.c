/* ovl bench progress: does a nonblocking broadcast advance while ranks compute?
 *
 * For each back end it measures, per repetition (MAX over ranks):
 *   comm     : post the broadcast, wait;
 *   comp     : the computation alone (dgemm chunks);
 *   overlap  : post, compute every chunk, wait (no progress calls);
 *   progress : post, compute, calling ovl_req_progress after every k chunks,
 *              wait.
 * overlap and progress are compared with comm + comp (no overlap at all) and
 * max(comm, comp) (perfect overlap). */
#include <cblas.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "bench_util.h"
#include "cli.h"

typedef struct prog_bufs {
  double *msg, *a, *b, *c;
  int nb; /* dgemm size per chunk */
} prog_bufs;

static void chunk(prog_bufs *w) {
  cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, w->nb, w->nb, w->nb, 1.0, w->a, w->nb, w->b, w->nb, 0.0, w->c,
              w->nb);
}

/* mode: 0 comm, 1 comp, 2 overlap without progress, 3 overlap with progress */
static ovl_err one(int mode, MPI_Comm comm, int64_t n, int chunks, int every, const ovl_coll_cfg *cfg, prog_bufs *w,
                   double *t) {
  ovl_req r = NULL;
  MPI_Barrier(comm);
  double t0 = ovl_time();
  if (mode != 1) OVL_TRY(ovl_ibcast(w->msg, n, 0, comm, cfg, &r));
  if (mode != 0)
    for (int k = 0; k < chunks; k++) {
      chunk(w);
      if (mode == 3 && (k + 1) % every == 0) OVL_TRY(ovl_req_progress(1, &r, NULL));
    }
  OVL_TRY(ovl_req_wait(&r));
  *t = ovl_time() - t0;
  return OVL_OK;
}

int cmd_bench_progress(int argc, char **argv) {
  int help = 0, iters = 5, warmup = 1, chunks = 64, every = 1, nb = 192, json = 0;
  int64_t size = (int64_t)32 << 20, segment = 0, mem_limit = 0;
  const char *alg = "auto";
  static const char *const algs[] = {"auto", "binomial", "scatter-allgather", "chain", "hier", NULL};
  ovl_opt opts[] = {
      {"size", 'n', OVL_OPT_SIZE, &size, "BYTES", "broadcast size in bytes", NULL, 8, (int64_t)1 << 34},
      {"chunks", 'k', OVL_OPT_INT, &chunks, "K", "computation chunks (one dgemm each)", NULL, 1, 1000000},
      {"chunk-size", 0, OVL_OPT_INT, &nb, "NB", "dgemm size of a chunk (NB x NB x NB)", NULL, 1, 8192},
      {"every", 'e', OVL_OPT_INT, &every, "E", "call the progress hook after every E chunks", NULL, 1, 1000000},
      {"bcast-alg", 'a', OVL_OPT_CHOICE, &alg, "A", "broadcast algorithm of the own back end", algs, 0, -1},
      {"segment", 0, OVL_OPT_SIZE, &segment, "BYTES", "chain segment (0: 128 KiB)", NULL, 0, (int64_t)1 << 34},
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
  int64_t n = size / 8;
  prog_bufs w = {NULL, NULL, NULL, NULL, nb};
  size_t mat = sizeof(double) * (size_t)nb * (size_t)nb;
  ovl_err rc = bench_check_memory(8.0 * (double)n + 3.0 * (double)mat, mem_limit);
  if (rc) return cli_fail("bench progress", rc);
  rc = ovl_calloc(sizeof(double) * (size_t)n, &w.msg);
  if (!rc) rc = ovl_calloc(mat, &w.a);
  if (!rc) rc = ovl_calloc(mat, &w.b);
  if (!rc) rc = ovl_calloc(mat, &w.c);
  MPI_Comm comm = MPI_COMM_NULL;
  if (!rc && MPI_Comm_dup(MPI_COMM_WORLD, &comm) != MPI_SUCCESS) rc = ovl_err_set(OVL_ERR_MPI, "MPI_Comm_dup failed");
  if ((rc = ovl_err_agree(MPI_COMM_WORLD, rc)) != OVL_OK) return cli_fail("bench progress", rc);
  int P;
  MPI_Comm_size(comm, &P);
  if (!json)
    ovl_log(OVL_LOG_INFO,
            "# ovl bench progress: %d ranks, bcast %" PRId64 " bytes from rank 0 (own: %s), %d dgemm chunks of %d^3, "
            "progress every %d chunks\n# MPI: %s\n# %-8s %11s %11s %11s %11s %11s %9s %9s\n",
            P, size, alg, chunks, nb, every, cli_mpi_library(), "backend", "comm(s)", "comp(s)", "no_prog(s)",
            "prog(s)", "serial(s)", "ovl_noprog", "ovl_prog");
  for (int be = 0; be < 2 && rc == OVL_OK; be++) {
    ovl_coll_cfg cfg = ovl_coll_cfg_default();
    cfg.backend = be ? OVL_BACKEND_OWN : OVL_BACKEND_MPI;
    ovl_alg_parse("bcast", alg, &cfg.bcast);
    cfg.segment = segment / 8;
    double med[4];
    for (int mode = 0; mode < 4 && rc == OVL_OK; mode++) {
      double t[10000];
      for (int it = 0; it < warmup + iters && rc == OVL_OK; it++) {
        double x = 0;
        rc = one(mode, comm, n, chunks, every, &cfg, &w, &x);
        if (it >= warmup) t[it - warmup] = x;
      }
      ovl_stats s;
      ovl_stats_max_over_ranks(comm, t, iters, &s);
      med[mode] = s.median;
    }
    if (rc != OVL_OK) break;
    double serial = med[0] + med[1], ideal = med[0] > med[1] ? med[0] : med[1];
    /* overlap achieved: 0 = none (comm + comp), 1 = perfect (max of both) */
    double o2 = serial > ideal ? (serial - med[2]) / (serial - ideal) : 0,
           o3 = serial > ideal ? (serial - med[3]) / (serial - ideal) : 0;
    if (json)
      ovl_log(OVL_LOG_QUIET,
              "{\"bench\":\"progress\",\"backend\":\"%s\",\"ranks\":%d,\"bytes\":%" PRId64 ",\"chunks\":%d,"
              "\"every\":%d,\"t_comm\":%.6e,\"t_comp\":%.6e,\"t_noprog\":%.6e,\"t_prog\":%.6e,\"overlap_noprog\":%.3f,"
              "\"overlap_prog\":%.3f,\"mpi\":\"%s\"}\n",
              ovl_backend_name(cfg.backend), P, size, chunks, every, med[0], med[1], med[2], med[3], o2, o3,
              cli_mpi_library());
    else
      ovl_log(OVL_LOG_QUIET, "  %-8s %11.4e %11.4e %11.4e %11.4e %11.4e %9.2f %9.2f\n", ovl_backend_name(cfg.backend),
              med[0], med[1], med[2], med[3], serial, o2, o3);
  }
  if (!json && rc == OVL_OK)
    ovl_log(OVL_LOG_INFO, "# ovl_*: fraction of the communication hidden, (serial - t) / (serial - max(comm, comp))\n");
  ovl_free(&w.msg);
  ovl_free(&w.a);
  ovl_free(&w.b);
  ovl_free(&w.c);
  if (comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
  return rc ? cli_fail("bench progress", rc) : CLI_OK;
}
