/* The engine of the benchmarks: progress reporting, sizes, the default cache
 * arena (the node and cache probes are in src/node), the memory gate,
 * rotating buffers, collectives by name, a computation kernel and a
 * sleeping barrier. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_impl.h"
#include "ovl/kernels.h"
#include "ovl/trace.h"

/* ---- progress ------------------------------------------------------------------ */

ovl_err ovl_bench_reporter_start(ovl_bench_reporter *r, const char *what, int total, int on) {
  r->what = what, r->total = total, r->done = 0, r->on = on && ovl_world_rank() == 0;
  r->t0 = ovl_time();
  return OVL_OK;
}

static void reporter_line(ovl_bench_reporter *r, int total, const char *text) {
  r->done++;
  if (!r->on) return;
  ovl_fprintf(stderr, "ovl bench %s: [%d/%d] %s (%.1f s)\n", r->what, r->done, r->total > 0 ? r->total : total, text,
              ovl_time() - r->t0);
  fflush(stderr);
}

ovl_err ovl_bench_reporter_step(ovl_bench_reporter *r, const char *fmt, ...) {
  char text[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  reporter_line(r, r->total, text);
  return OVL_OK;
}

void ovl_bench_reporter_fn(void *ctx, int done, int total, const char *text) {
  (void)done;
  if (ctx) reporter_line(ctx, total, text);
}

void ovl_i_bprogress(ovl_bench_progress_fn fn, void *ctx, int done, int total, const char *fmt, ...) {
  if (!fn) return;
  char text[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  fn(ctx, done, total, text);
}

/* ---- sizes, node, memory ------------------------------------------------------- */

ovl_err ovl_bench_sizes(int64_t lo, int64_t hi, int64_t *out, int cap, int *n) {
  OVL_TRY(ovl_check_ptr(n, "ovl_bench_sizes", "n"));
  *n = 0;
  OVL_CHECK(cap >= 0, OVL_ERR_ARG, "ovl_bench_sizes: cap must be >= 0, got %d", cap);
  int k = 0;
  int64_t s = lo > 0 ? lo : 1, last = 0;
  for (; s <= hi; last = s, s *= 2) {
    if (out && k < cap) out[k] = s;
    k++;
    if (s > INT64_MAX / 2) break;
  }
  if (last != hi && hi >= (lo > 0 ? lo : 1)) {
    if (out && k < cap) out[k] = hi;
    k++;
  }
  *n = k;
  return OVL_OK;
}

ovl_err ovl_bench_llc_bytes(int64_t *bytes) { return ovl_node_llc_bytes(bytes); }

ovl_err ovl_bench_node_info(MPI_Comm comm, int *ranks_on_node, int *nodes, int *consecutive) {
  return ovl_node_ranks(comm, ranks_on_node, nodes, consecutive);
}

ovl_err ovl_bench_default_cache_bytes(MPI_Comm comm, int roles, int64_t *bytes, int *capped) {
  OVL_TRY(ovl_check_comm(comm, "ovl_bench_default_cache_bytes"));
  OVL_TRY(ovl_check_ptr(bytes, "ovl_bench_default_cache_bytes", "bytes"));
  int k, nodes, cons;
  OVL_TRY(ovl_node_ranks(comm, &k, &nodes, &cons));
#ifdef OVL_SMPI
  /* Simulated time does not depend on caches, and every simulated rank lives
   * in the one host process: arenas of twice the host's last-level cache per
   * rank (480 MiB of L3 on some virtual machines) would exhaust its memory. */
  (void)roles;
  *bytes = 0;
  *capped = 0;
  return OVL_OK;
#endif
  int64_t llc = 0, avail = -1;
  ovl_node_llc_bytes(&llc);
  ovl_mem_available(&avail);
  int64_t want = 2 * llc;
  /* agree on the smallest so every rank uses the same arena */
  OVL_MPI(MPI_Allreduce(MPI_IN_PLACE, &avail, 1, MPI_INT64_T, MPI_MIN, comm));
  OVL_MPI(MPI_Allreduce(MPI_IN_PLACE, &want, 1, MPI_INT64_T, MPI_MIN, comm));
  int64_t limit = avail > 0 ? avail / 2 / ((int64_t)k * (roles > 0 ? roles : 1)) : want;
  limit = limit / 4096 * 4096;
  *capped = limit < want;
  *bytes = *capped ? limit : want;
  return OVL_OK;
}

ovl_err ovl_bench_check_memory(MPI_Comm comm, double bytes, int64_t limit) {
  OVL_TRY(ovl_check_comm(comm, "ovl_bench_check_memory"));
  if (limit < 0) return OVL_OK; /* the caller's choice: no gate */
  if (!(bytes < 4611686018427387904.0))
    return ovl_err_agree(comm, ovl_err_set(OVL_ERR_NOMEM, "this run needs 2^62 bytes or more per rank"));
  return ovl_check_memory(comm, (int64_t)bytes, limit);
}

/* ---- rotating buffers --------------------------------------------------------- */

double ovl_i_brot_bytes(int64_t arena, int64_t max_msg) {
  double bytes = fmax((double)arena, 2.0 * (double)max_msg);
  return fmax(64.0, ceil(bytes / 64.0) * 64.0);
}

ovl_err ovl_i_brot_create(int64_t arena, int64_t max_msg, brot *r) {
  memset(r, 0, sizeof *r);
  int64_t bytes = arena > 2 * max_msg ? arena : 2 * max_msg;
  if (bytes < 64) bytes = 64;
  bytes = (bytes + 63) / 64 * 64;
  OVL_TRY(ovl_malloc((size_t)bytes, &r->base));
  memset(r->base, 0x3f, (size_t)bytes); /* first touch; doubles of 0x3f3f... are normal numbers near 4.8e-4 */
  r->bytes = bytes;
  r->rotate = arena > 0;
  ovl_i_brot_size(r, max_msg);
  return OVL_OK;
}

void ovl_i_brot_size(brot *r, int64_t msg) {
  r->stride = msg > 0 ? (msg + 63) / 64 * 64 : 64;
  r->nslots = r->rotate ? r->bytes / r->stride : 1;
  if (r->nslots < 1) r->nslots = 1;
  r->next = 0;
}

void *ovl_i_brot_next(brot *r) {
  char *p = r->base + r->next * r->stride;
  if (++r->next >= r->nslots) r->next = 0;
  return p;
}

void ovl_i_brot_destroy(brot *r) {
  if (!r) return;
  ovl_free(&r->base);
  memset(r, 0, sizeof *r);
}

/* ---- collectives by name -------------------------------------------------------- */

const char *const ovl_bench_op_names[] = {"bcast", "reduce", "allreduce", "allgather", "alltoall", NULL};

ovl_err ovl_bench_op_parse(const char *name, ovl_bench_op *op) {
  OVL_TRY(ovl_check_ptr(op, "ovl_bench_op_parse", "op"));
  for (int i = 0; name && ovl_bench_op_names[i]; i++)
    if (strcmp(ovl_bench_op_names[i], name) == 0) {
      *op = (ovl_bench_op)i;
      return OVL_OK;
    }
  return ovl_err_set(OVL_ERR_ARG, "unknown collective '%s' (bcast, reduce, allreduce, allgather, alltoall)",
                     name ? name : "(null)");
}

ovl_err ovl_bench_op_set_alg(ovl_bench_op op, ovl_alg alg, ovl_coll_cfg *cfg) {
  OVL_TRY(ovl_check_ptr(cfg, "ovl_bench_op_set_alg", "cfg"));
  switch (op) {
  case OVL_BENCH_BCAST: cfg->bcast = alg; return OVL_OK;
  case OVL_BENCH_REDUCE: cfg->reduce = alg; return OVL_OK;
  case OVL_BENCH_ALLREDUCE: cfg->allreduce = alg; return OVL_OK;
  case OVL_BENCH_ALLGATHER: cfg->allgather = alg; return OVL_OK;
  case OVL_BENCH_ALLTOALL: cfg->alltoall = alg; return OVL_OK;
  }
  return ovl_err_set(OVL_ERR_ARG, "unknown collective %d", (int)op);
}

int ovl_i_bop_blocked(ovl_bench_op op) { return op == OVL_BENCH_ALLGATHER || op == OVL_BENCH_ALLTOALL; }

ovl_err ovl_i_bop_post(ovl_bench_op op, double *sbuf, double *rbuf, int64_t n, MPI_Comm comm, const ovl_coll_cfg *cfg,
                       ovl_req *req) {
  switch (op) {
  case OVL_BENCH_BCAST: return ovl_ibcast(sbuf, n, 0, comm, cfg, req);
  case OVL_BENCH_REDUCE: return ovl_ireduce(sbuf, rbuf, n, 0, comm, cfg, req);
  case OVL_BENCH_ALLREDUCE: return ovl_iallreduce(sbuf, rbuf, n, comm, cfg, req);
  case OVL_BENCH_ALLGATHER: return ovl_iallgather(sbuf, n, rbuf, comm, cfg, req);
  case OVL_BENCH_ALLTOALL: return ovl_ialltoall(sbuf, n, rbuf, comm, cfg, req);
  }
  return ovl_err_set(OVL_ERR_INTERNAL, "unknown collective %d", (int)op);
}

ovl_err ovl_i_bop_post_lanes(ovl_bench_op op, ovl_lanes L, double *sbuf, double *rbuf, int64_t n,
                             const ovl_coll_cfg *cfg, ovl_req *reqs) {
  switch (op) {
  case OVL_BENCH_BCAST: return ovl_lanes_ibcast(L, sbuf, n, 0, cfg, reqs);
  case OVL_BENCH_REDUCE: return ovl_lanes_ireduce(L, sbuf, rbuf, n, 0, cfg, reqs);
  case OVL_BENCH_ALLREDUCE: return ovl_lanes_iallreduce(L, sbuf, rbuf, n, cfg, reqs);
  case OVL_BENCH_ALLGATHER: return ovl_lanes_iallgather(L, sbuf, n, rbuf, cfg, reqs);
  case OVL_BENCH_ALLTOALL: break;
  }
  int nd = ovl_lanes_count(L), p = ovl_lanes_size(L);
  for (int c = 0; c < nd; c++) reqs[c] = OVL_REQ_NULL;
  for (int c = 0; c < nd; c++) {
    int64_t off, len;
    ovl_lanes_part(n, nd, c, &off, &len);
    if (len == 0) continue;
    ovl_err rc = ovl_ialltoall(sbuf + p * off, len, rbuf + p * off, ovl_lanes_comm(L, c), cfg, &reqs[c]);
    if (rc != OVL_OK) {
      ovl_req_waitall(c, reqs);
      return rc;
    }
    OVL_TRACE_POST("alltoall", c, 8 * len * p);
    if (reqs[c] == OVL_REQ_NULL) OVL_TRACE_COMPLETE("alltoall", c); /* done while posted: no wait returns it */
  }
  return OVL_OK;
}

ovl_err ovl_i_bop_lanes_wait(ovl_bench_op op, int ndup, ovl_req *reqs) {
  if (op != OVL_BENCH_ALLTOALL) return ovl_req_waitall(ndup, reqs);
  for (;;) {
    int idx = -1;
    OVL_TRY(ovl_req_waitany(ndup, reqs, &idx));
    if (idx < 0) return OVL_OK;
    OVL_TRACE_COMPLETE("alltoall", idx);
  }
}

const char *ovl_i_bop_trace_name(const char *prefix, ovl_bench_op op) {
  static const char *const blocking[] = {"blocking bcast", "blocking reduce", "blocking allreduce",
                                         "blocking allgather", "blocking alltoall"};
  static const char *const ppn[] = {"ppn bcast", "ppn reduce", "ppn allreduce", "ppn allgather", "ppn alltoall"};
  static const char *const nbc[] = {"nbc bcast", "nbc reduce", "nbc allreduce", "nbc allgather", "nbc alltoall"};
  if (strcmp(prefix, "blocking") == 0) return blocking[op];
  if (strcmp(prefix, "ppn") == 0) return ppn[op];
  return nbc[op];
}

/* ---- computation ------------------------------------------------------------------ */

#define KERNEL_N 256

/* 8 sweeps of x = 0.999 x + 0.001 y over 256 doubles (4 KiB): ~2000 FMAs. x tends to y, which is in [1, 2):
 * no value ever becomes subnormal (that would slow the kernel down as it runs). The arrays are this call's
 * own (no shared state); `volatile` keeps the work from being optimised away. */
void ovl_i_bkernel(int64_t calls) {
  double x[KERNEL_N], y[KERNEL_N];
  for (int i = 0; i < KERNEL_N; i++) x[i] = 0.5, y[i] = 1.0 + (double)i / KERNEL_N;
  for (int64_t c = 0; c < calls; c++)
    for (int r = 0; r < 8; r++)
      for (int i = 0; i < KERNEL_N; i++) x[i] = 0.999 * x[i] + 0.001 * y[i];
  volatile double sink = x[KERNEL_N / 2];
  (void)sink;
}

double ovl_i_bkernel_seconds_per_call(void) {
  ovl_i_bkernel(100); /* warm up */
  double best = 1e30;
  for (int trial = 0; trial < 20; trial++) { /* the fastest of 20 trials of ~2 ms: the kernel undisturbed */
    int64_t calls = 0, batch = 16;
    double t0 = ovl_time(), t = 0;
    do {
      ovl_i_bkernel(batch);
      calls += batch;
      t = ovl_time() - t0;
    } while (t < 0.002);
    if (t / (double)calls < best) best = t / (double)calls;
  }
  return best;
}

void ovl_i_bkernel_for(double seconds) {
  double elapsed = 0;
  while (elapsed < seconds) {
    double t1 = ovl_time();
    ovl_i_bkernel(1);
    elapsed += ovl_time() - t1;
  }
}

/* ---- synchronisation ---------------------------------------------------------------- */

ovl_err ovl_i_bsleep_barrier(MPI_Comm comm, int sleep_us) {
  MPI_Request r;
  int done = 0;
  OVL_MPI(MPI_Ibarrier(comm, &r));
  struct timespec ts = {sleep_us / 1000000, (long)(sleep_us % 1000000) * 1000};
  for (;;) {
    OVL_MPI(MPI_Test(&r, &done, MPI_STATUS_IGNORE));
    if (done) return OVL_OK;
    nanosleep(&ts, NULL);
  }
}
