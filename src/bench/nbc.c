/* Overlap of a nonblocking collective with computation: the OSU and IMB
 * measures and NBC-Eff (ovl/bench.h). The formulas are the pure functions of
 * ovl/model.h. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_impl.h"

typedef struct nbc_ctx {
  ovl_bench_op op;
  ovl_coll_cfg cfg;
  MPI_Comm comm;
  int P, rank, ntests;
  brot sb, rb;
} nbc_ctx;

/* Compute `calls` kernel calls in ntests parts, each followed by one test;
 * *t_test receives the time inside the tests. */
static ovl_err compute_calls_testing(const nbc_ctx *x, int64_t calls, ovl_req *req, double *t_test) {
  *t_test = 0;
  if (x->ntests == 0) {
    ovl_i_bkernel(calls);
    return OVL_OK;
  }
  for (int j = 0; j < x->ntests; j++) {
    ovl_i_bkernel(ovl_block_len(calls, x->ntests, j));
    int done = 0;
    double t1 = ovl_time();
    OVL_TRY(ovl_req_test(req, &done));
    *t_test += ovl_time() - t1;
  }
  return OVL_OK;
}

/* OSU's do_compute_and_probe: `seconds` of computation in ntests parts, each
 * followed by one (timed) test. */
static ovl_err compute_for_testing(const nbc_ctx *x, double seconds, ovl_req *req, double *t_test) {
  *t_test = 0;
  if (x->ntests == 0) {
    ovl_i_bkernel_for(seconds);
    return OVL_OK;
  }
  for (int j = 0; j < x->ntests; j++) {
    ovl_i_bkernel_for(seconds / x->ntests);
    int done = 0;
    double t1 = ovl_time();
    OVL_TRY(ovl_req_test(req, &done));
    *t_test += ovl_time() - t1;
  }
  return OVL_OK;
}

static ovl_err post(nbc_ctx *x, int64_t e, ovl_req *req) {
  return ovl_i_bop_post(x->op, ovl_i_brot_next(&x->sb), ovl_i_brot_next(&x->rb), e, x->comm, &x->cfg, req);
}

/* One size: every selected mode. Runs on every rank. */
static ovl_err nbc_size(nbc_ctx *x, int64_t e, int warm, int nit, int modes, double spc, int64_t eff_calls, double *t,
                        ovl_bench_nbc_row *res) {
  double sum_pure = 0;
  /* pure: post + wait */
  for (int it = 0; it < warm + nit; it++) {
    ovl_req req = OVL_REQ_NULL;
    MPI_Barrier(x->comm);
    double t0 = ovl_time();
    OVL_TRY(post(x, e, &req));
    OVL_TRY(ovl_req_wait(&req));
    double dt = ovl_time() - t0;
    if (it >= warm) t[it - warm] = dt, sum_pure += dt;
  }
  double pure_local = sum_pure / nit; /* this rank's mean: the target of its computation */
  ovl_stats st_pure;
  OVL_TRY(ovl_stats_max_over_ranks(x->comm, t, nit, &st_pure));

  if (modes & OVL_BENCH_OSU) {
    double acc[6] = {0}; /* overall, compute, test, init, wait, pure */
    for (int it = 0; it < warm + nit; it++) {
      ovl_req req = OVL_REQ_NULL;
      MPI_Barrier(x->comm);
      double t0 = ovl_time();
      OVL_TRY(post(x, e, &req));
      double t1 = ovl_time(), tt = 0;
      OVL_TRY(compute_for_testing(x, pure_local, &req, &tt));
      double t2 = ovl_time();
      OVL_TRY(ovl_req_wait(&req));
      double t3 = ovl_time();
      if (it >= warm) acc[0] += t3 - t0, acc[1] += t2 - t1, acc[2] += tt, acc[3] += t1 - t0, acc[4] += t3 - t2;
    }
    for (int i = 0; i < 5; i++) acc[i] /= nit;
    acc[5] = pure_local;
    OVL_MPI(MPI_Allreduce(MPI_IN_PLACE, acc, 6, MPI_DOUBLE, MPI_SUM, x->comm));
    for (int i = 0; i < 6; i++) acc[i] /= x->P;
    res->osu_pure = acc[5], res->osu_overall = acc[0], res->osu_compute = acc[1], res->osu_test = acc[2];
    res->osu_init = acc[3], res->osu_wait = acc[4];
    res->osu_overlap_pct = ovl_overlap_osu(acc[5], acc[0], acc[1], acc[2]);
  }

  if (modes & OVL_BENCH_IMB) {
    int64_t calls = spc > 0 ? (int64_t)(pure_local / spc + 0.5) : 0;
    double t_ovrl = 0, t_comp = 0;
    for (int it = 0; it < warm + nit; it++) {
      ovl_req req = OVL_REQ_NULL;
      MPI_Barrier(x->comm);
      double t0 = ovl_time();
      OVL_TRY(post(x, e, &req));
      double t1 = ovl_time();
      ovl_i_bkernel(calls);
      double t2 = ovl_time();
      OVL_TRY(ovl_req_wait(&req));
      double t3 = ovl_time();
      if (it >= warm) t_ovrl += t3 - t0, t_comp += t2 - t1;
    }
    struct {
      double v;
      int r;
    } mine = {t_ovrl / nit, x->rank}, worst;
    OVL_MPI(MPI_Allreduce(&mine, &worst, 1, MPI_DOUBLE_INT, MPI_MAXLOC, x->comm));
    double v[3] = {pure_local, t_comp / nit, t_ovrl / nit};
    OVL_MPI(MPI_Bcast(v, 3, MPI_DOUBLE, worst.r, x->comm));
    int64_t c = calls;
    OVL_MPI(MPI_Bcast(&c, 1, MPI_INT64_T, worst.r, x->comm));
    res->imb_pure = v[0], res->imb_cpu = v[1], res->imb_ovrl = v[2];
    res->imb_overlap_pct = ovl_overlap_imb(v[0], v[1], v[2]);
    res->imb_calls = c;
  }

  if (modes & OVL_BENCH_EFF) {
    double med[3];
    for (int mode = 0; mode < 3; mode++) { /* 0: compute alone, 1: seq, 2: overlapped */
      for (int it = 0; it < warm + nit; it++) {
        ovl_req req = OVL_REQ_NULL;
        double tt = 0;
        MPI_Barrier(x->comm);
        double t0 = ovl_time();
        if (mode == 0) {
          ovl_i_bkernel(eff_calls);
        } else if (mode == 1) {
          OVL_TRY(post(x, e, &req));
          OVL_TRY(ovl_req_wait(&req));
          ovl_i_bkernel(eff_calls);
        } else {
          OVL_TRY(post(x, e, &req));
          OVL_TRY(compute_calls_testing(x, eff_calls, &req, &tt));
          OVL_TRY(ovl_req_wait(&req));
        }
        double dt = ovl_time() - t0;
        if (it >= warm) t[it - warm] = dt;
      }
      ovl_stats st;
      OVL_TRY(ovl_stats_max_over_ranks(x->comm, t, nit, &st));
      med[mode] = st.median;
    }
    double ideal = st_pure.median > med[0] ? st_pure.median : med[0];
    res->eff_comm = st_pure.median, res->eff_comp = med[0], res->eff_seq = med[1], res->eff_ovl = med[2];
    res->eff_speedup = ovl_nbc_eff_speedup(med[1], med[2]);
    res->eff_ideal = ovl_nbc_eff_speedup(med[1], ideal);
  }
  return OVL_OK;
}

ovl_bench_nbc_params ovl_bench_nbc_default(void) {
  ovl_bench_nbc_params p;
  memset(&p, 0, sizeof p);
  p.comm = MPI_COMM_WORLD;
  p.op = OVL_BENCH_ALLREDUCE;
  p.cfg = ovl_coll_cfg_default();
  p.min_bytes = 8, p.max_bytes = (int64_t)1 << 20;
  p.modes = OVL_BENCH_OSU | OVL_BENCH_IMB | OVL_BENCH_EFF;
  p.ntests = 10, p.compute_us = 1000.0, p.iters = 20, p.warmup = 3;
  return p;
}

ovl_err ovl_bench_nbc_free(ovl_bench_nbc_result *res) {
  if (!res) return OVL_OK;
  free(res->rows);
  memset(res, 0, sizeof *res);
  return OVL_OK;
}

static ovl_err nbc_check(const ovl_bench_nbc_params *p) {
  OVL_CHECK(p->op >= OVL_BENCH_BCAST && p->op <= OVL_BENCH_ALLTOALL, OVL_ERR_ARG, "bench nbc: unknown collective %d",
            (int)p->op);
  OVL_CHECK(p->compute_us >= 0 && p->compute_us <= 1e9, OVL_ERR_ARG, "--compute-us must be in [0, 1e9], got %g",
            p->compute_us);
  OVL_CHECK(p->modes > 0 && (p->modes & ~(OVL_BENCH_OSU | OVL_BENCH_IMB | OVL_BENCH_EFF)) == 0, OVL_ERR_ARG,
            "bench nbc: modes must be a non-empty set of OVL_BENCH_OSU, _IMB, _EFF, got %d", p->modes);
  OVL_CHECK(p->iters >= 1 && p->warmup >= 0 && p->ntests >= 0, OVL_ERR_ARG,
            "bench nbc: iterations must be >= 1, warm-ups and tests >= 0");
  OVL_CHECK(p->max_bytes >= 1 && p->min_bytes <= p->max_bytes, OVL_ERR_ARG,
            "bench nbc: sizes %" PRId64 ":%" PRId64 " are empty", p->min_bytes, p->max_bytes);
  OVL_CHECK(p->cache_bytes >= 0, OVL_ERR_ARG, "bench nbc: cache_bytes must be >= 0");
  return OVL_OK;
}

ovl_err ovl_bench_nbc(const ovl_bench_nbc_params *p, ovl_bench_nbc_result *res) {
  OVL_TRY(ovl_check_ptr(p, "ovl_bench_nbc", "p"));
  OVL_TRY(ovl_check_ptr(res, "ovl_bench_nbc", "res"));
  OVL_TRY(ovl_check_comm(p->comm, "ovl_bench_nbc"));
  memset(res, 0, sizeof *res);
  OVL_TRY(ovl_err_agree(p->comm, nbc_check(p)));
  nbc_ctx x;
  memset(&x, 0, sizeof x);
  OVL_MPI(MPI_Comm_size(p->comm, &x.P));
  OVL_MPI(MPI_Comm_rank(p->comm, &x.rank));
  x.op = p->op, x.cfg = p->cfg, x.ntests = p->ntests;
  OVL_MPI(MPI_Comm_dup(p->comm, &x.comm));

  /* sizes (bytes that really move, no repeats), buffers */
  int nreq = 0, nsz = 0;
  ovl_bench_sizes(p->min_bytes, p->max_bytes, NULL, 0, &nreq);
  int64_t *sizes = calloc((size_t)nreq, sizeof(int64_t));
  ovl_bench_nbc_row *rows = calloc((size_t)nreq, sizeof *rows);
  double *t = calloc((size_t)p->iters, sizeof(double));
  ovl_err rc = OVL_OK;
  if (!sizes || !rows || !t) rc = ovl_err_set(OVL_ERR_NOMEM, "cannot allocate the result arrays");
  if (!rc) {
    ovl_bench_sizes(p->min_bytes, p->max_bytes, sizes, nreq, &nreq);
    for (int i = 0; i < nreq; i++) {
      int64_t e = sizes[i] / 8 > 0 ? sizes[i] / 8 : 1;
      if (ovl_i_bop_blocked(x.op)) e = (e / x.P > 0 ? e / x.P : 1) * x.P;
      if (nsz == 0 || sizes[nsz - 1] != 8 * e) sizes[nsz++] = 8 * e;
    }
  }
  rc = ovl_err_agree(p->comm, rc);
  if (!rc) rc = ovl_bench_check_memory(p->comm, 2.0 * ovl_i_brot_bytes(p->cache_bytes, sizes[nsz - 1]), p->mem_limit);
  if (!rc) rc = ovl_i_brot_create(p->cache_bytes, sizes[nsz - 1], &x.sb);
  if (!rc) rc = ovl_i_brot_create(p->cache_bytes, sizes[nsz - 1], &x.rb);
  rc = ovl_err_agree(p->comm, rc);
  if (!rc) {
    /* the kernel's undisturbed speed, measured with every rank computing; eff converts compute_us with the
     * fastest rank's, so every rank does the same work and eff_comp above compute_us shows a disturbance */
    MPI_Barrier(x.comm);
    double spc = ovl_i_bkernel_seconds_per_call(), spc_min = spc, spc0 = spc;
    MPI_Allreduce(MPI_IN_PLACE, &spc_min, 1, MPI_DOUBLE, MPI_MIN, x.comm);
    MPI_Bcast(&spc0, 1, MPI_DOUBLE, 0, x.comm);
    int64_t eff_calls = (int64_t)(p->compute_us * 1e-6 / spc_min + 0.5);
    res->kernel_s = spc0, res->kernel_s_min = spc_min, res->eff_calls = eff_calls;
    res->arena_bytes = p->cache_bytes > 0 ? x.sb.bytes : 0;
    for (int si = 0; si < nsz && rc == OVL_OK; si++) {
      int64_t bytes = sizes[si], e = bytes / 8;
      if (ovl_i_bop_blocked(x.op)) e /= x.P;
      ovl_i_brot_size(&x.sb, bytes);
      ovl_i_brot_size(&x.rb, bytes);
      ovl_bench_nbc_row *r = &rows[si];
      r->bytes = bytes;
      rc = nbc_size(&x, e, p->warmup, p->iters, p->modes, spc, eff_calls, t, r);
      if (rc != OVL_OK) ovl_fatal(p->comm, rc, "bench nbc at %" PRId64 " bytes: %s", bytes, ovl_errmsg());
      /* the osu means and imb values are on every rank; the eff medians too */
      char note[160] = "";
      size_t nl = 0;
      if (p->modes & OVL_BENCH_OSU)
        nl += (size_t)snprintf(note + nl, sizeof note - nl, ", osu %.1f%%", r->osu_overlap_pct);
      if (p->modes & OVL_BENCH_IMB)
        nl += (size_t)snprintf(note + nl, sizeof note - nl, ", imb %.1f%%", r->imb_overlap_pct);
      if (p->modes & OVL_BENCH_EFF) snprintf(note + nl, sizeof note - nl, ", eff speedup %.3f", r->eff_speedup);
      ovl_i_bprogress(p->progress, p->progress_ctx, si + 1, nsz, "%" PRId64 " B%s", bytes, note);
    }
  }
  free(sizes);
  free(t);
  ovl_i_brot_destroy(&x.sb);
  ovl_i_brot_destroy(&x.rb);
  MPI_Comm_free(&x.comm);
  if (rc) {
    free(rows);
    return rc;
  }
  res->ranks = x.P, res->nrows = nsz, res->rows = rows;
  return OVL_OK;
}
