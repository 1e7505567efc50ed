/* Does a nonblocking broadcast advance while ranks compute? (ovl/bench.h) */
#include <cblas.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "bench_impl.h"

enum { PROG_MAX_ITERS = 10000 };

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

ovl_bench_progress_params ovl_bench_progress_default(void) {
  ovl_bench_progress_params p;
  memset(&p, 0, sizeof p);
  p.comm = MPI_COMM_WORLD;
  p.bytes = (int64_t)32 << 20;
  p.chunks = 64, p.nb = 192, p.every = 1, p.alg = OVL_ALG_AUTO, p.iters = 5, p.warmup = 1;
  return p;
}

static ovl_err prog_check(const ovl_bench_progress_params *p) {
  OVL_CHECK(p->bytes >= 8, OVL_ERR_ARG, "bench progress: the broadcast needs at least 8 bytes, got %" PRId64, p->bytes);
  OVL_CHECK(p->chunks >= 1 && p->nb >= 1 && p->every >= 1, OVL_ERR_ARG,
            "bench progress: chunks, chunk size and every must be >= 1");
  OVL_CHECK(p->iters >= 1 && p->iters <= PROG_MAX_ITERS && p->warmup >= 0, OVL_ERR_ARG,
            "bench progress: iterations must be in [1, %d] and warm-ups >= 0", PROG_MAX_ITERS);
  OVL_CHECK(p->segment >= 0, OVL_ERR_ARG, "bench progress: segment must be >= 0");
  return OVL_OK;
}

ovl_err ovl_bench_progress(const ovl_bench_progress_params *p, ovl_bench_progress_result *res) {
  OVL_TRY(ovl_check_ptr(p, "ovl_bench_progress", "p"));
  OVL_TRY(ovl_check_ptr(res, "ovl_bench_progress", "res"));
  OVL_TRY(ovl_check_comm(p->comm, "ovl_bench_progress"));
  memset(res, 0, sizeof *res);
  OVL_TRY(ovl_err_agree(p->comm, prog_check(p)));
  int64_t n = p->bytes / 8;
  prog_bufs w = {NULL, NULL, NULL, NULL, p->nb};
  size_t mat = sizeof(double) * (size_t)p->nb * (size_t)p->nb;
  OVL_TRY(ovl_bench_check_memory(p->comm, 8.0 * (double)n + 3.0 * (double)mat, p->mem_limit));
  ovl_err rc = ovl_calloc(sizeof(double) * (size_t)n, &w.msg);
  if (!rc) rc = ovl_calloc(mat, &w.a);
  if (!rc) rc = ovl_calloc(mat, &w.b);
  if (!rc) rc = ovl_calloc(mat, &w.c);
  MPI_Comm comm = MPI_COMM_NULL;
  if (!rc && MPI_Comm_dup(p->comm, &comm) != MPI_SUCCESS) rc = ovl_err_set(OVL_ERR_MPI, "MPI_Comm_dup failed");
  double *t = NULL;
  if (!rc) rc = ovl_calloc(sizeof(double) * (size_t)p->iters, &t);
  rc = ovl_err_agree(p->comm, rc);
  if (!rc) MPI_Comm_size(comm, &res->ranks);
  for (int be = 0; be < 2 && rc == OVL_OK; be++) {
    ovl_coll_cfg cfg = ovl_coll_cfg_default();
    cfg.backend = be ? OVL_BACKEND_OWN : OVL_BACKEND_MPI;
    cfg.bcast = p->alg;
    cfg.segment = p->segment / 8;
    double med[4];
    for (int mode = 0; mode < 4 && rc == OVL_OK; mode++) {
      for (int it = 0; it < p->warmup + p->iters && rc == OVL_OK; it++) {
        double x = 0;
        rc = one(mode, comm, n, p->chunks, p->every, &cfg, &w, &x);
        if (it >= p->warmup) t[it - p->warmup] = x;
      }
      if (rc != OVL_OK) ovl_fatal(p->comm, rc, "bench progress: %s", ovl_errmsg());
      ovl_stats s;
      ovl_stats_max_over_ranks(comm, t, p->iters, &s);
      med[mode] = s.median;
    }
    ovl_bench_progress_row *r = &res->rows[be];
    double serial = med[0] + med[1], ideal = med[0] > med[1] ? med[0] : med[1];
    r->backend = cfg.backend;
    r->t_comm = med[0], r->t_comp = med[1], r->t_noprog = med[2], r->t_prog = med[3], r->serial = serial;
    /* overlap achieved: 0 = none (comm + comp), 1 = perfect (max of both) */
    r->overlap_noprog = serial > ideal ? (serial - med[2]) / (serial - ideal) : 0;
    r->overlap_prog = serial > ideal ? (serial - med[3]) / (serial - ideal) : 0;
  }
  ovl_free(&t);
  ovl_free(&w.msg);
  ovl_free(&w.a);
  ovl_free(&w.b);
  ovl_free(&w.c);
  if (comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
  return rc;
}
