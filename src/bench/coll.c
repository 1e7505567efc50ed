/* Collective bandwidth: blocking, N_DUP lanes and multiple PPN
 * (ovl/bench.h; Huang & Chow, Section V-B). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_impl.h"
#include "ovl/trace.h"

static const char *const k_case_names[OVL_BENCH_NCASES] = {"blocking", "ndup", "ppn"}; /* trace phases */

typedef struct coll_ctx {
  ovl_bench_op op;
  ovl_coll_cfg cfg;
  MPI_Comm world; /* the benchmark's communicator */
  int P, rank, k, p, local, ndup;
  MPI_Comm cc; /* communicator of this rank's local index */
  ovl_lanes L; /* N_DUP lanes over communicator 0 (leaders only) */
  brot sb, rb;
} coll_ctx;

/* Elements of the message (bcast/reduce/allreduce) or of the block per rank
 * (allgather/alltoall) for n bytes over p ranks, and the bytes that really
 * move (a whole number of doubles, p blocks for blocked ops). */
static int64_t coll_elems(ovl_bench_op op, int64_t bytes, int p, int64_t *actual) {
  int64_t e = bytes / 8 > 0 ? bytes / 8 : 1;
  if (ovl_i_bop_blocked(op)) {
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
  int part_of = which == OVL_BENCH_PPN || x->local == 0;
  for (int r = 0; r < nit; r++) t[r] = 0;
  if (!part_of) return OVL_OK;
  MPI_Comm bc = which == OVL_BENCH_PPN ? x->world : x->cc;
  int64_t ec = e;
  if (which == OVL_BENCH_PPN) ec = ovl_block_len(e, x->k, x->local);
  const char *tn = ovl_i_bop_trace_name(which == OVL_BENCH_PPN ? "ppn" : "blocking", x->op);
  for (int it = 0; it < warm + nit; it++) {
    double *s = ovl_i_brot_next(&x->sb), *rv = ovl_i_brot_next(&x->rb);
    ovl_req req = OVL_REQ_NULL, reqs[OVL_LANES_MAX];
    MPI_Barrier(bc);
    double t0 = ovl_time();
    if (trace) OVL_TRACE_BEGIN(k_case_names[which]);
    if (which == OVL_BENCH_NDUP) {
      OVL_TRY(ovl_i_bop_post_lanes(x->op, x->L, s, rv, ec, &x->cfg, reqs));
      OVL_TRY(ovl_i_bop_lanes_wait(x->op, x->ndup, reqs));
    } else {
      OVL_TRY(ovl_i_bop_post(x->op, s, rv, ec, x->cc, &x->cfg, &req));
      if (trace) OVL_TRACE_POST(tn, which == OVL_BENCH_PPN ? x->local : 0, 8 * ec);
      OVL_TRY(ovl_req_wait(&req));
      if (trace) OVL_TRACE_COMPLETE(tn, which == OVL_BENCH_PPN ? x->local : 0);
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
  if (rc != OVL_OK) ovl_fatal(x->world, rc, "bench coll, case %s: %s", k_case_names[which], ovl_errmsg());
  memset(st, 0, sizeof *st);
  if (which == OVL_BENCH_PPN) OVL_TRY(ovl_stats_max_over_ranks(x->world, t, nit, st));
  else if (x->local == 0) OVL_TRY(ovl_stats_max_over_ranks(x->cc, t, nit, st));
  if (x->k > 1 && which != OVL_BENCH_PPN) OVL_TRY(ovl_i_bsleep_barrier(x->world, 1000));
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
  OVL_TRY(ovl_err_agree(x->world, rc));
  for (int which = 0; which < OVL_BENCH_NCASES && rc == OVL_OK; which++) { /* warm-up, untraced */
    rc = coll_case(x, which, e, warm, 0, t, 0);
    if (!rc && x->k > 1) rc = ovl_i_bsleep_barrier(x->world, 1000);
  }
  if (!rc) rc = ovl_trace_start(x->world, (int64_t)1 << 16);
  for (int which = 0; which < OVL_BENCH_NCASES && rc == OVL_OK; which++) {
    rc = coll_case(x, which, e, 0, reps, t, 1);
    if (rc != OVL_OK) ovl_fatal(x->world, rc, "bench coll --timeline: %s", ovl_errmsg());
    if (x->k > 1) rc = ovl_i_bsleep_barrier(x->world, 1000);
  }
  free(t);
  OVL_TRY(rc);
  return ovl_trace_write(prefix);
}

ovl_bench_coll_params ovl_bench_coll_default(void) {
  ovl_bench_coll_params p;
  memset(&p, 0, sizeof p);
  p.comm = MPI_COMM_WORLD;
  p.op = OVL_BENCH_BCAST;
  p.cfg = ovl_coll_cfg_default();
  p.min_bytes = 8, p.max_bytes = (int64_t)16 << 20;
  p.ndup = ovl_knob_default_int(OVL_KNOB_NDUP, OVL_FAMILY_SSC), p.ppn = 1, p.iters = 20, p.warmup = 2,
  p.timeline_reps = 3;
  return p;
}

ovl_err ovl_bench_coll_free(ovl_bench_coll_result *res) {
  if (!res) return OVL_OK;
  free(res->rows);
  memset(res, 0, sizeof *res);
  return OVL_OK;
}

static ovl_err coll_check(const ovl_bench_coll_params *p, int P) {
  OVL_CHECK(p->op >= OVL_BENCH_BCAST && p->op <= OVL_BENCH_ALLTOALL, OVL_ERR_ARG, "bench coll: unknown collective %d",
            (int)p->op);
  OVL_CHECK(p->ppn >= 1, OVL_ERR_ARG, "--ppn must be >= 1, got %d", p->ppn);
  OVL_CHECK(P % p->ppn == 0, OVL_ERR_ARG, "--ppn %d does not divide the %d ranks", p->ppn, P);
  OVL_CHECK(P / p->ppn >= 2, OVL_ERR_ARG,
            "--ppn %d leaves %d rank per collective; the bandwidth needs p >= 2 (%d ranks)", p->ppn, P / p->ppn, P);
  OVL_CHECK(p->ndup >= 1 && p->ndup <= OVL_LANES_MAX, OVL_ERR_ARG, "--ndup must be in [1, %d], got %d", OVL_LANES_MAX,
            p->ndup);
  OVL_CHECK(p->iters >= 1 && p->warmup >= 0, OVL_ERR_ARG, "bench coll: iterations must be >= 1 and warm-ups >= 0");
  OVL_CHECK(p->max_bytes >= 1 && p->min_bytes <= p->max_bytes, OVL_ERR_ARG,
            "bench coll: sizes %" PRId64 ":%" PRId64 " are empty", p->min_bytes, p->max_bytes);
  OVL_CHECK(p->cache_bytes >= 0, OVL_ERR_ARG, "bench coll: cache_bytes must be >= 0");
  OVL_CHECK(!p->timeline || p->timeline_reps >= 1, OVL_ERR_ARG, "--timeline-reps must be >= 1");
  return OVL_OK;
}

ovl_err ovl_bench_coll(const ovl_bench_coll_params *p, ovl_bench_coll_result *res) {
  OVL_TRY(ovl_check_ptr(p, "ovl_bench_coll", "p"));
  OVL_TRY(ovl_check_ptr(res, "ovl_bench_coll", "res"));
  OVL_TRY(ovl_check_comm(p->comm, "ovl_bench_coll"));
  memset(res, 0, sizeof *res);
  coll_ctx x;
  memset(&x, 0, sizeof x);
  x.world = p->comm;
  OVL_MPI(MPI_Comm_size(p->comm, &x.P));
  OVL_MPI(MPI_Comm_rank(p->comm, &x.rank));
  OVL_TRY(ovl_err_agree(p->comm, coll_check(p, x.P)));
  x.op = p->op, x.cfg = p->cfg, x.k = p->ppn, x.ndup = p->ndup, x.cc = MPI_COMM_NULL;
  x.p = x.P / x.k;
  x.local = x.rank % x.k;
  ovl_err rc = OVL_OK;
  OVL_MPI(MPI_Comm_split(p->comm, x.local, x.rank / x.k, &x.cc));
  if (x.local == 0) rc = ovl_lanes_create(x.cc, x.ndup, &x.L);
  rc = ovl_err_agree(p->comm, rc);

  /* sizes: the bytes that really move, without repeats */
  int nreq = 0, nsz = 0;
  ovl_bench_sizes(p->min_bytes, p->max_bytes, NULL, 0, &nreq);
  int64_t *req_sizes = calloc((size_t)nreq, sizeof(int64_t));
  ovl_bench_coll_row *rows = calloc((size_t)nreq, sizeof *rows);
  double *t = calloc((size_t)p->iters, sizeof(double));
  if (!rc && (!req_sizes || !rows || !t)) rc = ovl_err_set(OVL_ERR_NOMEM, "cannot allocate the result arrays");
  int64_t maxb = 8;
  if (!rc) {
    ovl_bench_sizes(p->min_bytes, p->max_bytes, req_sizes, nreq, &nreq);
    for (int i = 0; i < nreq; i++) {
      int64_t actual;
      coll_elems(x.op, req_sizes[i], x.p, &actual);
      if (nsz == 0 || rows[nsz - 1].bytes != actual) rows[nsz++].bytes = actual;
    }
    maxb = rows[nsz - 1].bytes;
    if (p->timeline && p->timeline_bytes > 0) {
      int64_t actual;
      coll_elems(x.op, p->timeline_bytes, x.p, &actual);
      if (actual > maxb) maxb = actual;
    }
  }
  /* the send and receive arenas: checked against the node before allocating */
  rc = ovl_err_agree(p->comm, rc);
  if (!rc) rc = ovl_bench_check_memory(p->comm, 2.0 * ovl_i_brot_bytes(p->cache_bytes, maxb), p->mem_limit);
  if (!rc) rc = ovl_i_brot_create(p->cache_bytes, maxb, &x.sb);
  if (!rc) rc = ovl_i_brot_create(p->cache_bytes, maxb, &x.rb);
  rc = ovl_err_agree(p->comm, rc);
  for (int si = 0; si < nsz && rc == OVL_OK; si++) {
    ovl_bench_coll_row *r = &rows[si];
    int64_t actual = 0, e = coll_elems(x.op, r->bytes, x.p, &actual);
    ovl_i_brot_size(&x.sb, actual);
    ovl_i_brot_size(&x.rb, actual);
    for (int which = 0; which < OVL_BENCH_NCASES && rc == OVL_OK; which++)
      rc = coll_measure(&x, which, e, p->warmup, p->iters, t, &r->st[which]);
    if (rc != OVL_OK) break;
    /* the blocking and ndup statistics live on the leaders: rank 0 has them all */
    OVL_MPI(MPI_Bcast(r->st, (int)sizeof r->st, MPI_BYTE, 0, p->comm));
    for (int w = 0; w < OVL_BENCH_NCASES; w++) r->bw[w] = ovl_coll_eff_bw((double)actual, x.p, r->st[w].median);
    ovl_i_bprogress(p->progress, p->progress_ctx, si + 1, nsz,
                    "%" PRId64 " B: bw %.1f / %.1f / %.1f MB/s (blocking / ndup / ppn)", actual, r->bw[0] * 1e-6,
                    r->bw[1] * 1e-6, r->bw[2] * 1e-6);
  }
  int64_t tl_actual = 0;
  if (rc == OVL_OK && p->timeline) {
    int64_t e = coll_elems(x.op, p->timeline_bytes > 0 ? p->timeline_bytes : rows[nsz - 1].bytes, x.p, &tl_actual);
    ovl_i_brot_size(&x.sb, tl_actual);
    ovl_i_brot_size(&x.rb, tl_actual);
    rc = coll_timeline(&x, e, p->warmup, p->timeline_reps, p->timeline);
  }
  int64_t arena = p->cache_bytes > 0 ? x.sb.bytes : 0;
  free(req_sizes);
  free(t);
  ovl_i_brot_destroy(&x.sb);
  ovl_i_brot_destroy(&x.rb);
  ovl_lanes_destroy(&x.L);
  if (x.cc != MPI_COMM_NULL) MPI_Comm_free(&x.cc);
  if (rc) {
    free(rows);
    return rc;
  }
  res->ranks = x.P, res->ppn = x.k, res->p = x.p, res->ndup = x.ndup, res->nrows = nsz, res->rows = rows;
  res->arena_bytes = arena, res->timeline_bytes = tl_actual;
  return OVL_OK;
}
