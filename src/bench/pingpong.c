/* Ping-pong and window bandwidth between pairs of ranks, and the Hockney fit
 * of its rows (ovl/bench.h). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "bench_impl.h"

enum { PP_MAX_WINDOW = 1024 };

typedef struct pp_ctx {
  int window, sender, partner;
  MPI_Comm comm; /* the 2k ranks of the pairs (MPI_COMM_NULL on sleepers) */
} pp_ctx;

/* One repetition on this rank; *t = one-way time (ping-pong) or window time
 * (window), measured on senders, 0 on receivers. */
static ovl_err pp_rep(const pp_ctx *c, int64_t s, int wnd, brot *sb, brot *rb, double *t) {
  const int tag = 11, ack_tag = 12;
  char ack = 0;
  *t = 0;
  if (c->window == 0) {
    void *out = ovl_i_brot_next(sb), *in = ovl_i_brot_next(rb);
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
  MPI_Request req[PP_MAX_WINDOW];
  double t0 = ovl_time();
  for (int w = 0; w < wnd; w++) {
    if (c->sender) OVL_MPI(MPI_Isend(ovl_i_brot_next(sb), (int)s, MPI_BYTE, c->partner, tag, c->comm, &req[w]));
    else OVL_MPI(MPI_Irecv(ovl_i_brot_next(rb), (int)s, MPI_BYTE, c->partner, tag, c->comm, &req[w]));
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

ovl_bench_pingpong_params ovl_bench_pingpong_default(void) {
  ovl_bench_pingpong_params p;
  memset(&p, 0, sizeof p);
  p.comm = MPI_COMM_WORLD;
  p.min_bytes = 1, p.max_bytes = (int64_t)64 << 20;
  p.iters = 1000, p.warmup = 100, p.iters_large = 100, p.warmup_large = 10, p.large = 65536;
  p.pairs = 1;
  return p;
}

ovl_err ovl_bench_pingpong_free(ovl_bench_pingpong_result *res) {
  if (!res) return OVL_OK;
  free(res->rows);
  memset(res, 0, sizeof *res);
  return OVL_OK;
}

static ovl_err pp_check(const ovl_bench_pingpong_params *p, int P, int half) {
  OVL_CHECK(P >= 2, OVL_ERR_ARG, "pingpong needs at least 2 ranks, got %d", P);
  OVL_CHECK(p->pairs >= 1, OVL_ERR_ARG, "pingpong: pairs must be >= 1, got %d", p->pairs);
  if (p->half > 0)
    OVL_CHECK(p->pairs <= p->half && p->half + p->pairs <= P, OVL_ERR_ARG,
              "pingpong: %d pair(s) with the second half at rank %d need %d ranks and pairs <= %d, got %d ranks",
              p->pairs, p->half, p->half + p->pairs, p->half, P);
  else
    OVL_CHECK(p->pairs <= half, OVL_ERR_ARG, "--pairs %d needs %d ranks (two halves of %d), got %d", p->pairs,
              2 * p->pairs, p->pairs, P);
  OVL_CHECK(p->max_bytes <= INT32_MAX, OVL_ERR_ARG, "message size %" PRId64 " exceeds 2^31-1", p->max_bytes);
  OVL_CHECK(p->min_bytes >= 0 && p->max_bytes >= 1, OVL_ERR_ARG, "pingpong: sizes %" PRId64 ":%" PRId64 " are empty",
            p->min_bytes, p->max_bytes);
  OVL_CHECK(p->iters >= 1 && p->iters_large >= 1 && p->warmup >= 0 && p->warmup_large >= 0, OVL_ERR_ARG,
            "pingpong: iterations must be >= 1 and warm-ups >= 0");
  OVL_CHECK(p->window >= 0 && p->window <= PP_MAX_WINDOW, OVL_ERR_ARG, "pingpong: window must be in [0, %d], got %d",
            PP_MAX_WINDOW, p->window);
  OVL_CHECK(p->cache_bytes >= 0, OVL_ERR_ARG, "pingpong: cache_bytes must be >= 0");
  return OVL_OK;
}

ovl_err ovl_bench_pingpong(const ovl_bench_pingpong_params *p, ovl_bench_pingpong_result *res) {
  OVL_TRY(ovl_check_ptr(p, "ovl_bench_pingpong", "p"));
  OVL_TRY(ovl_check_ptr(res, "ovl_bench_pingpong", "res"));
  OVL_TRY(ovl_check_comm(p->comm, "ovl_bench_pingpong"));
  memset(res, 0, sizeof *res);
  MPI_Comm comm = p->comm;
  int P, rank;
  OVL_MPI(MPI_Comm_size(comm, &P));
  OVL_MPI(MPI_Comm_rank(comm, &rank));
  int half = p->half > 0 ? p->half : P / 2, pairs = p->pairs;
  OVL_TRY(ovl_err_agree(comm, pp_check(p, P, half)));
  pp_ctx c = {p->window, rank < pairs, -1, MPI_COMM_NULL};
  int receiver = rank >= half && rank < half + pairs, active = c.sender || receiver;
  OVL_MPI(MPI_Comm_split(comm, active ? 0 : MPI_UNDEFINED, rank, &c.comm));
  /* in c.comm, ranks keep their order: senders 0..k-1, receivers k..2k-1 */
  if (active) c.partner = c.sender ? rank + pairs : rank - half;

  int nsz = 0;
  ovl_bench_sizes(p->min_bytes, p->max_bytes, NULL, 0, &nsz);
  int maxit = p->iters > p->iters_large ? p->iters : p->iters_large;
  int64_t *sizes = calloc((size_t)nsz, sizeof *sizes);
  ovl_bench_pingpong_row *rows = calloc((size_t)nsz, sizeof *rows);
  double *t = calloc((size_t)maxit, sizeof *t);
  brot sb = {0}, rb = {0};
  ovl_err rc = OVL_OK;
  if (!sizes || !rows || !t) rc = ovl_err_set(OVL_ERR_NOMEM, "cannot allocate the result arrays");
  if (!rc) ovl_bench_sizes(p->min_bytes, p->max_bytes, sizes, nsz, &nsz);
  rc = ovl_err_agree(comm, rc);
  if (!rc) rc = ovl_bench_check_memory(comm, 2.0 * ovl_i_brot_bytes(p->cache_bytes, p->max_bytes), p->mem_limit);
  if (!rc && active) rc = ovl_i_brot_create(p->cache_bytes, p->max_bytes, &sb);
  if (!rc && active) rc = ovl_i_brot_create(p->cache_bytes, p->max_bytes, &rb);
  rc = ovl_err_agree(comm, rc);
  for (int si = 0; si < nsz && rc == OVL_OK && active; si++) {
    int64_t s = sizes[si];
    int big = s > p->large, nit = big ? p->iters_large : p->iters, nwu = big ? p->warmup_large : p->warmup;
    ovl_i_brot_size(&sb, s);
    ovl_i_brot_size(&rb, s);
    int wnd = p->window;
    if (p->window && p->cache_bytes > 0) { /* every pending receive needs its own slot */
      int64_t slots = rb.nslots < sb.nslots ? rb.nslots : sb.nslots;
      if (slots < wnd) wnd = (int)(slots > 0 ? slots : 1);
    } /* cache_bytes == 0: OSU's way, every message of a window uses the same buffer */
    MPI_Barrier(c.comm);
    for (int it = 0; it < nwu + nit && rc == OVL_OK; it++) {
      double x = 0;
      if (p->barrier) MPI_Barrier(c.comm);
      rc = pp_rep(&c, s, wnd, &sb, &rb, &x);
      if (it >= nwu) t[it - nwu] = p->window ? x / wnd : x;
    }
    if (rc != OVL_OK) ovl_fatal(comm, rc, "pingpong at %" PRId64 " bytes: %s", s, ovl_errmsg());
    rows[si].bytes = s, rows[si].iters = nit, rows[si].window = p->window ? wnd : 0;
    ovl_stats_max_over_ranks(c.comm, t, nit, &rows[si].st); /* receivers contribute 0 */
    ovl_i_bprogress(p->progress, p->progress_ctx, si + 1, nsz, "%" PRId64 " B: t_med %.3f us", s,
                    rows[si].st.median * 1e6);
  }
  ovl_i_bsleep_barrier(comm, 2000); /* sleepers wait here the whole time */
  /* rank 0 is a sender: every rank gets its rows */
  if (rc == OVL_OK && nsz > 0) OVL_MPI(MPI_Bcast(rows, (int)(nsz * sizeof *rows), MPI_BYTE, 0, comm));
  free(sizes);
  free(t);
  ovl_i_brot_destroy(&sb);
  ovl_i_brot_destroy(&rb);
  if (c.comm != MPI_COMM_NULL) MPI_Comm_free(&c.comm);
  if (rc) {
    free(rows);
    return rc;
  }
  res->ranks = P, res->pairs = pairs, res->half = half, res->nrows = nsz, res->rows = rows;
  return OVL_OK;
}

ovl_err ovl_bench_pingpong_fit(const ovl_bench_pingpong_row *rows, int nrows, int64_t lo, int64_t hi, int absolute,
                               ovl_bench_fit *fit) {
  memset(fit, 0, sizeof *fit);
  fit->status = 1, fit->absolute = absolute != 0;
  double *fs = calloc((size_t)(nrows > 0 ? nrows : 1), sizeof *fs),
         *ft = calloc((size_t)(nrows > 0 ? nrows : 1), sizeof *ft);
  int n = 0;
  for (int i = 0; fs && ft && i < nrows; i++) {
    if (hi > 0 && (rows[i].bytes < lo || rows[i].bytes > hi)) continue;
    fs[n] = (double)rows[i].bytes, ft[n] = rows[i].st.median, n++;
  }
  fit->nfit = n;
  double a = 0, b = 0;
  ovl_err frc = OVL_ERR_ARG;
  if (n >= 2) frc = absolute ? ovl_hockney_fit(fs, ft, n, &a, &b) : ovl_hockney_fit_weighted(fs, ft, NULL, n, &a, &b);
  free(fs);
  free(ft);
  if (frc != OVL_OK) {
    ovl_err_clear();
    return OVL_OK;
  }
  if (!(b > 0)) {
    fit->status = 2;
    return OVL_OK;
  }
  fit->alpha = a, fit->beta = b, fit->n_half = ovl_hockney_nhalf(a, b), fit->status = 0;
  return OVL_OK;
}
