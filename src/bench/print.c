/* The benchmarks' results as tables and records (ovl/bench.h, "printing"):
 * what `ovl bench` prints, for any entry that runs a benchmark. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench_impl.h"
#include "ovl/record.h"

/* "64 KiB"-style text of a byte count into buf. */
static const char *bytes_str(char *buf, size_t n, double b) {
  const char *unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (b >= 1024.0 && u < 4) b /= 1024.0, u++;
  snprintf(buf, n, u == 0 ? "%.0f %s" : "%.1f %s", b, unit[u]);
  return buf;
}

/* The buffer line of the headers; llc_fmt (NULL: none) adds the last-level
 * cache and the note on a lowered default (two %s). */
static void buffers_line(FILE *out, int64_t cache, int64_t arena, const char *llc_fmt, int capped) {
  char a[32], l[32];
  int64_t llc = 0;
  if (cache <= 0) {
    fprintf(out, "# buffers: one send and one receive buffer, reused (warm in cache)\n");
    return;
  }
  fprintf(out, "# buffers: send and receive each rotate through %s per rank", bytes_str(a, sizeof a, (double)arena));
  if (llc_fmt) ovl_node_llc_bytes(&llc);
  if (llc_fmt)
    fprintf(out, llc_fmt, bytes_str(l, sizeof l, (double)llc),
            capped ? "; default lowered to fit half of the available memory" : "");
  else fprintf(out, "\n");
}

/* The key every benchmark's record ends with, then the record printed and
 * destroyed. */
static ovl_err finish_record(FILE *out, ovl_record **rec, ovl_err rc, const char *mpi) {
  if (!rc) rc = ovl_record_set_str(*rec, "mpi", mpi);
  if (!rc) rc = ovl_record_print(*rec, out);
  ovl_record_destroy(rec);
  return rc;
}

static ovl_err stats_record(ovl_record *parent, const char *key, const ovl_stats *st, double bw) {
  ovl_record *c = NULL;
  ovl_err rc = ovl_record_create(NULL, &c);
  if (!rc) rc = ovl_record_set_num(c, "t_min", st->min);
  if (!rc) rc = ovl_record_set_num(c, "t_median", st->median);
  if (!rc) rc = ovl_record_set_num(c, "t_max", st->max);
  if (!rc) rc = ovl_record_set_num(c, "bw_MBps", bw);
  if (!rc) rc = ovl_record_set_record(parent, key, &c);
  ovl_record_destroy(&c);
  return rc;
}

#define PRINT_ARGS_CHECK(out, p, res, po)                                                                              \
  do {                                                                                                                 \
    if (!(out) || !(p) || !(res) || !(po)) return ovl_err_set(OVL_ERR_ARG, "%s: a NULL argument", __func__);           \
  } while (0)

ovl_err ovl_bench_pingpong_print(FILE *out, const ovl_bench_pingpong_params *p, const ovl_bench_pingpong_result *res,
                                 const ovl_bench_fit *f, const ovl_bench_print_opts *po) {
  OVL_TRY(ovl_check_ptr(out, "ovl_bench_pingpong_print", "out"));
  OVL_TRY(ovl_check_ptr(p, "ovl_bench_pingpong_print", "p"));
  OVL_TRY(ovl_check_ptr(res, "ovl_bench_pingpong_print", "res"));
  PRINT_ARGS_CHECK(out, p, res, po);
  if (!f) return ovl_err_set(OVL_ERR_ARG, "ovl_bench_pingpong_print: no fit");
  char mpi[MPI_MAX_LIBRARY_VERSION_STRING];
  OVL_TRY(ovl_mpi_library(mpi, sizeof mpi));
  const int pairs = res->pairs, window = p->window, P = res->ranks, hdr = po->header && !po->json;
  const char *fit = f->absolute ? "abs" : "rel";
  if (hdr) {
    fprintf(out, "# ovl bench pingpong: %d ranks, %d pair%s (rank i <-> rank %d + i, i < %d), %s", P, pairs,
            pairs > 1 ? "s" : "", res->half, pairs, window ? "window" : "ping-pong");
    if (window) fprintf(out, " (windows of up to %d messages one way + 1-byte ack)\n", window);
    else fprintf(out, " (one-way time = round trip / 2)\n");
    fprintf(out, "# MPI: %s\n", mpi);
    buffers_line(out, p->cache_bytes, p->cache_bytes, " (last-level cache %s%s)\n", po->cache_capped);
    fprintf(out,
            "# time per repetition = MAX over the %d sender%s; %d warm-up + %d timed repetitions (sizes > %" PRId64
            ": %d + %d)\n",
            pairs, pairs > 1 ? "s" : "", p->warmup, p->iters, p->large, p->warmup_large, p->iters_large);
    const char *how = f->absolute ? "ordinary" : "relative";
    if (f->status == 0)
      fprintf(out,
              "# Hockney fit (%s least squares over %d sizes): L = alpha = %.3f us, B = 1/beta = %.1f MB/s, "
              "N_half = B*L = %.0f B%s\n",
              how, f->nfit, f->alpha * 1e6, 1e-6 / f->beta, f->n_half,
              f->alpha < 0 ? " (alpha < 0: the sizes do not follow one line; try --fit-range)" : "");
    else if (f->status == 2)
      fprintf(out,
              "# Hockney fit (%s least squares over %d sizes): beta <= 0, the sizes do not follow one line; try "
              "--fit-range\n",
              how, f->nfit);
    else fprintf(out, "# Hockney fit: not enough sizes (%d)\n", f->nfit);
    if (window) fprintf(out, "# window method: alpha is the time per message of a stream, not a latency\n");
  }
  if (!po->json) {
    fprintf(out, "# %10s %12s %12s %12s %14s", "size(B)", window ? "t_msg(us)" : "lat(us)", "bw(MB/s)", "model(MB/s)",
            "agg_bw(MB/s)");
    if (po->full) fprintf(out, " %12s %12s %8s %6s", "t_min(us)", "t_max(us)", "iters", "window");
    fprintf(out, "\n");
  }
  ovl_err rc = OVL_OK;
  for (int si = 0; si < res->nrows && !rc; si++) {
    const ovl_bench_pingpong_row *r = &res->rows[si];
    double s = (double)r->bytes, tm = r->st.median;
    double bw = tm > 0 ? s / tm * 1e-6 : 0, agg = bw * pairs, model = ovl_hockney_bw(f->alpha, f->beta, s) * 1e-6;
    if (!po->json) {
      fprintf(out, "  %10" PRId64 " %12.3f %12.2f %12.2f %14.2f", r->bytes, tm * 1e6, bw, model, agg);
      if (po->full) fprintf(out, " %12.3f %12.3f %8d %6d", r->st.min * 1e6, r->st.max * 1e6, r->iters, r->window);
      fprintf(out, "\n");
      continue;
    }
    ovl_record *rec = NULL;
    const int fitted = f->status == 0;
    rc = ovl_record_create("pingpong", &rec);
    if (!rc) rc = ovl_record_set_str(rec, "method", window ? "window" : "pingpong");
    if (!rc) rc = ovl_record_set_int(rec, "ranks", P);
    if (!rc) rc = ovl_record_set_int(rec, "pairs", pairs);
    if (!rc) rc = ovl_record_set_int(rec, "window", r->window);
    if (!rc) rc = ovl_record_set_int(rec, "bytes", r->bytes);
    if (!rc) rc = ovl_record_set_int(rec, "iterations", r->iters);
    if (!rc) rc = ovl_record_set_num(rec, "t_min", r->st.min);
    if (!rc) rc = ovl_record_set_num(rec, "t_median", tm);
    if (!rc) rc = ovl_record_set_num(rec, "t_max", r->st.max);
    if (!rc) rc = ovl_record_set_num(rec, "bw_MBps", tm > 0 ? bw : NAN);
    if (!rc) rc = ovl_record_set_num(rec, "agg_bw_MBps", tm > 0 ? agg : NAN);
    /* the fit's values are null when it failed (too few sizes, beta <= 0) */
    if (!rc) rc = ovl_record_set_num(rec, "model_bw_MBps", fitted ? model : NAN);
    if (!rc) rc = ovl_record_set_num(rec, "alpha", fitted ? f->alpha : NAN);
    if (!rc) rc = ovl_record_set_num(rec, "beta", fitted ? f->beta : NAN);
    if (!rc) rc = ovl_record_set_num(rec, "n_half", fitted ? f->n_half : NAN);
    if (!rc) rc = ovl_record_set_str(rec, "fit", fit);
    if (!rc) rc = ovl_record_set_int(rec, "cache_bytes", p->cache_bytes);
    rc = finish_record(out, &rec, rc, mpi);
  }
  fflush(out);
  return rc;
}

static const char *const k_case_keys[OVL_BENCH_NCASES] = {"blocking", "ndup_overlap", "ppn_overlap"};

ovl_err ovl_bench_coll_print(FILE *out, const ovl_bench_coll_params *p, const ovl_bench_coll_result *res,
                             const ovl_bench_print_opts *po) {
  OVL_TRY(ovl_check_ptr(out, "ovl_bench_coll_print", "out"));
  OVL_TRY(ovl_check_ptr(p, "ovl_bench_coll_print", "p"));
  OVL_TRY(ovl_check_ptr(res, "ovl_bench_coll_print", "res"));
  PRINT_ARGS_CHECK(out, p, res, po);
  char mpi[MPI_MAX_LIBRARY_VERSION_STRING];
  OVL_TRY(ovl_mpi_library(mpi, sizeof mpi));
  const char *on = ovl_bench_op_names[p->op], *backend = ovl_backend_name(p->cfg.backend);
  const char *alg = po->alg ? po->alg : "auto";
  const int P = res->ranks, ndup = p->ndup;
  if (po->header && !po->json) {
    fprintf(out,
            "# ovl bench coll: %s, %d ranks = %d nodes x %d ppn (ppn: %s), p = %d ranks per collective, N_DUP = %d, "
            "backend %s (alg %s)\n",
            on, P, res->p, res->ppn, po->ppn_from ? po->ppn_from : "explicit", res->p, ndup, backend, alg);
    fprintf(out,
            "# blocking: ovl_i%s + wait on rank 0 of every node; ndup: ovl_%s%s over %d lanes + waitall, same ranks; "
            "ppn: %d communicators (rank c of every node) at once, n/%d each\n",
            on, p->op == OVL_BENCH_ALLTOALL ? "ialltoall per lane" : "lanes_i", p->op == OVL_BENCH_ALLTOALL ? "" : on,
            ndup, res->ppn, res->ppn);
    if (res->ppn == 1)
      fprintf(out, "# K = 1: the ppn case repeats the blocking case on all ranks; --ppn K > 1 emulates nodes of K "
                   "ranks\n");
    fprintf(out, "# MPI: %s\n", mpi);
    buffers_line(out, p->cache_bytes, res->arena_bytes, " (last-level cache %s)%s\n", po->cache_capped);
    fprintf(out,
            "# time per repetition = MAX over ranks; median (min/max with -f) over %d timed repetitions after %d "
            "warm-up; bw = 2(p-1)n/p / t_med, MB = 1e6 B\n",
            p->iters, p->warmup);
  }
  if (!po->json) {
    fprintf(out, "# %10s %11s %12s %11s %12s %11s %12s", "size(B)", "blk_t(us)", "blk_bw(MB/s)", "ndup_t(us)",
            "ndup_bw(MB/s)", "ppn_t(us)", "ppn_bw(MB/s)");
    if (po->full)
      fprintf(out, " %11s %11s %11s %11s %11s %11s", "blk_min", "blk_max", "ndup_min", "ndup_max", "ppn_min",
              "ppn_max");
    fprintf(out, "\n");
  }
  ovl_err rc = OVL_OK;
  for (int si = 0; si < res->nrows && !rc; si++) {
    const ovl_bench_coll_row *r = &res->rows[si];
    double bw[OVL_BENCH_NCASES];
    for (int w = 0; w < OVL_BENCH_NCASES; w++) bw[w] = r->bw[w] * 1e-6;
    if (!po->json) {
      fprintf(out, "  %10" PRId64 " %11.2f %12.2f %11.2f %12.2f %11.2f %12.2f", r->bytes, r->st[0].median * 1e6, bw[0],
              r->st[1].median * 1e6, bw[1], r->st[2].median * 1e6, bw[2]);
      if (po->full)
        for (int w = 0; w < OVL_BENCH_NCASES; w++)
          fprintf(out, " %11.2f %11.2f", r->st[w].min * 1e6, r->st[w].max * 1e6);
      fprintf(out, "\n");
      continue;
    }
    ovl_record *rec = NULL;
    rc = ovl_record_create("coll", &rec);
    if (!rc) rc = ovl_record_set_str(rec, "op", on);
    if (!rc) rc = ovl_record_set_int(rec, "ranks", P);
    if (!rc) rc = ovl_record_set_int(rec, "ppn", res->ppn);
    if (!rc) rc = ovl_record_set_int(rec, "p", res->p);
    if (!rc) rc = ovl_record_set_int(rec, "ndup", ndup);
    if (!rc) rc = ovl_record_set_str(rec, "backend", backend);
    if (!rc) rc = ovl_record_set_str(rec, "alg", alg);
    if (!rc) rc = ovl_record_set_int(rec, "bytes", r->bytes);
    if (!rc) rc = ovl_record_set_int(rec, "iterations", p->iters);
    for (int w = 0; w < OVL_BENCH_NCASES && !rc; w++)
      rc = stats_record(rec, k_case_keys[w], &r->st[w], r->st[w].median > 0 ? bw[w] : NAN);
    if (!rc) rc = ovl_record_set_int(rec, "cache_bytes", res->arena_bytes);
    rc = finish_record(out, &rec, rc, mpi);
  }
  if (!rc && p->timeline && po->header && !po->json)
    ovl_fprintf(out, "# timeline: %d repetitions of each case at %" PRId64 " B written to %s (and .csv)\n",
                p->timeline_reps, res->timeline_bytes, p->timeline);
  fflush(out);
  return rc;
}

/* The nbc record's part of one measure. */
static ovl_err nbc_part(ovl_record *rec, const char *key, const char *const *names, const double *v, int nv) {
  ovl_record *sub = NULL;
  ovl_err rc = ovl_record_create(NULL, &sub);
  for (int k = 0; k < nv && !rc; k++) rc = ovl_record_set_num(sub, names[k], v[k]);
  if (!rc) rc = ovl_record_set_record(rec, key, &sub);
  ovl_record_destroy(&sub);
  return rc;
}

ovl_err ovl_bench_nbc_print(FILE *out, const ovl_bench_nbc_params *p, const ovl_bench_nbc_result *res,
                            const ovl_bench_print_opts *po) {
  OVL_TRY(ovl_check_ptr(out, "ovl_bench_nbc_print", "out"));
  OVL_TRY(ovl_check_ptr(p, "ovl_bench_nbc_print", "p"));
  OVL_TRY(ovl_check_ptr(res, "ovl_bench_nbc_print", "res"));
  PRINT_ARGS_CHECK(out, p, res, po);
  char mpi[MPI_MAX_LIBRARY_VERSION_STRING];
  OVL_TRY(ovl_mpi_library(mpi, sizeof mpi));
  const char *op = ovl_bench_op_names[p->op], *backend = ovl_backend_name(p->cfg.backend);
  const char *alg = po->alg ? po->alg : "auto";
  const int osu = p->modes & OVL_BENCH_OSU, imb = p->modes & OVL_BENCH_IMB, eff = p->modes & OVL_BENCH_EFF;
  if (po->header && !po->json) {
    fprintf(out, "# ovl bench nbc: %s, %d ranks, backend %s (alg %s), %d ovl_req_test calls in the computation\n", op,
            res->ranks, backend, alg, p->ntests);
    fprintf(out, "# MPI: %s\n", mpi);
    buffers_line(out, p->cache_bytes, res->arena_bytes, NULL, 0);
    fprintf(out,
            "# kernel: %.3f us per call on rank 0, %.3f us on the fastest rank (best of 20 trials); %d warm-up + %d "
            "timed repetitions\n",
            res->kernel_s * 1e6, res->kernel_s_min * 1e6, p->warmup, p->iters);
    if (osu)
      fprintf(out, "# osu: means over repetitions and ranks; ovl%% = max(0, 100 - 100 (overall - (compute - test)) / "
                   "pure)\n");
    if (imb)
      fprintf(out, "# imb: means over repetitions, rank with the largest t_ovrl; ovl%% = 100 max(0, min(1, (pure + "
                   "cpu - ovrl) / min(pure, cpu)))\n");
    if (eff)
      fprintf(out,
              "# eff: fixed computation %.1f us = %" PRId64
              " kernel calls; per repetition MAX over ranks, median; seq = post+wait+compute, ovl = "
              "post+compute+wait; speedup = seq/ovl (> 1: overlap pays); ideal = seq/max(comm, comp)\n",
              p->compute_us, res->eff_calls);
  }
  if (!po->json) {
    fprintf(out, "# %10s", "size(B)");
    if (osu) {
      fprintf(out, " %10s %10s %10s %10s %8s", "osu_pure", "osu_all", "osu_comp", "osu_test", "osu_ovl%");
      if (po->full) fprintf(out, " %10s %10s", "osu_init", "osu_wait");
    }
    if (imb) fprintf(out, " %10s %10s %10s %8s", "imb_pure", "imb_cpu", "imb_ovrl", "imb_ovl%");
    if (eff)
      fprintf(out, " %10s %10s %10s %10s %8s %8s", "eff_comm", "eff_comp", "eff_seq", "eff_ovl", "speedup", "ideal");
    fprintf(out, "   (times in us)\n");
  }
  static const char *const k_osu[] = {"t_pure", "t_overall", "t_compute", "t_test", "t_init", "t_wait", "overlap_pct"};
  static const char *const k_imb[] = {"t_pure", "t_cpu", "t_ovrl", "overlap_pct"};
  static const char *const k_eff[] = {"t_comm", "t_comp", "t_seq", "t_ovl", "speedup", "ideal_speedup"};
  ovl_err rc = OVL_OK;
  for (int si = 0; si < res->nrows && !rc; si++) {
    const ovl_bench_nbc_row *r = &res->rows[si];
    if (!po->json) {
      fprintf(out, "  %10" PRId64, r->bytes);
      if (osu) {
        fprintf(out, " %10.2f %10.2f %10.2f %10.2f %8.1f", r->osu_pure * 1e6, r->osu_overall * 1e6,
                r->osu_compute * 1e6, r->osu_test * 1e6, r->osu_overlap_pct);
        if (po->full) fprintf(out, " %10.2f %10.2f", r->osu_init * 1e6, r->osu_wait * 1e6);
      }
      if (imb)
        fprintf(out, " %10.2f %10.2f %10.2f %8.1f", r->imb_pure * 1e6, r->imb_cpu * 1e6, r->imb_ovrl * 1e6,
                r->imb_overlap_pct);
      if (eff)
        fprintf(out, " %10.2f %10.2f %10.2f %10.2f %8.3f %8.3f", r->eff_comm * 1e6, r->eff_comp * 1e6, r->eff_seq * 1e6,
                r->eff_ovl * 1e6, r->eff_speedup, r->eff_ideal);
      fprintf(out, "\n");
      continue;
    }
    ovl_record *rec = NULL, *sub = NULL;
    rc = ovl_record_create("nbc", &rec);
    if (!rc) rc = ovl_record_set_str(rec, "op", op);
    if (!rc) rc = ovl_record_set_int(rec, "ranks", res->ranks);
    if (!rc) rc = ovl_record_set_str(rec, "backend", backend);
    if (!rc) rc = ovl_record_set_str(rec, "alg", alg);
    if (!rc) rc = ovl_record_set_int(rec, "bytes", r->bytes);
    if (!rc) rc = ovl_record_set_int(rec, "iterations", p->iters);
    if (!rc) rc = ovl_record_set_int(rec, "num_tests", p->ntests);
    const double vo[] = {r->osu_pure, r->osu_overall, r->osu_compute,    r->osu_test,
                         r->osu_init, r->osu_wait,    r->osu_overlap_pct};
    const double vi[] = {r->imb_pure, r->imb_cpu, r->imb_ovrl, r->imb_overlap_pct};
    const double ve[] = {r->eff_comm, r->eff_comp, r->eff_seq, r->eff_ovl, r->eff_speedup, r->eff_ideal};
    if (!rc && osu) rc = nbc_part(rec, "osu", k_osu, vo, 7);
    if (!rc && imb) { /* the kernel calls of the computation, after the times */
      rc = ovl_record_create(NULL, &sub);
      for (int k = 0; k < 4 && !rc; k++) rc = ovl_record_set_num(sub, k_imb[k], vi[k]);
      if (!rc) rc = ovl_record_set_int(sub, "cpu_calls", r->imb_calls);
      if (!rc) rc = ovl_record_set_record(rec, "imb", &sub);
      ovl_record_destroy(&sub);
    }
    if (!rc && eff) { /* the fixed computation first */
      rc = ovl_record_create(NULL, &sub);
      if (!rc) rc = ovl_record_set_num(sub, "compute_us", p->compute_us);
      if (!rc) rc = ovl_record_set_int(sub, "calls", res->eff_calls);
      for (int k = 0; k < 6 && !rc; k++) rc = ovl_record_set_num(sub, k_eff[k], ve[k]);
      if (!rc) rc = ovl_record_set_record(rec, "eff", &sub);
      ovl_record_destroy(&sub);
    }
    rc = finish_record(out, &rec, rc, mpi);
  }
  fflush(out);
  return rc;
}

ovl_err ovl_bench_progress_print(FILE *out, const ovl_bench_progress_params *p, const ovl_bench_progress_result *res,
                                 const ovl_bench_print_opts *po) {
  OVL_TRY(ovl_check_ptr(out, "ovl_bench_progress_print", "out"));
  OVL_TRY(ovl_check_ptr(p, "ovl_bench_progress_print", "p"));
  OVL_TRY(ovl_check_ptr(res, "ovl_bench_progress_print", "res"));
  PRINT_ARGS_CHECK(out, p, res, po);
  char mpi[MPI_MAX_LIBRARY_VERSION_STRING];
  OVL_TRY(ovl_mpi_library(mpi, sizeof mpi));
  if (po->header && !po->json)
    fprintf(out,
            "# ovl bench progress: %d ranks, bcast %" PRId64 " bytes from rank 0 (own: %s), %d dgemm chunks of %d^3, "
            "progress every %d chunks\n# MPI: %s\n",
            res->ranks, p->bytes, ovl_alg_name(p->alg), p->chunks, p->nb, p->every, mpi);
  if (!po->json)
    fprintf(out, "# %-8s %11s %11s %11s %11s %11s %9s %9s\n", "backend", "comm(s)", "comp(s)", "no_prog(s)", "prog(s)",
            "serial(s)", "ovl_noprog", "ovl_prog");
  ovl_err rc = OVL_OK;
  for (int be = 0; be < 2 && !rc; be++) {
    const ovl_bench_progress_row *r = &res->rows[be];
    if (!po->json) {
      fprintf(out, "  %-8s %11.4e %11.4e %11.4e %11.4e %11.4e %9.2f %9.2f\n", ovl_backend_name(r->backend), r->t_comm,
              r->t_comp, r->t_noprog, r->t_prog, r->serial, r->overlap_noprog, r->overlap_prog);
      continue;
    }
    ovl_record *rec = NULL;
    rc = ovl_record_create("progress", &rec);
    if (!rc) rc = ovl_record_set_str(rec, "backend", ovl_backend_name(r->backend));
    if (!rc) rc = ovl_record_set_int(rec, "ranks", res->ranks);
    if (!rc) rc = ovl_record_set_int(rec, "bytes", p->bytes);
    if (!rc) rc = ovl_record_set_int(rec, "chunks", p->chunks);
    if (!rc) rc = ovl_record_set_int(rec, "every", p->every);
    if (!rc) rc = ovl_record_set_num(rec, "t_comm", r->t_comm);
    if (!rc) rc = ovl_record_set_num(rec, "t_comp", r->t_comp);
    if (!rc) rc = ovl_record_set_num(rec, "t_noprog", r->t_noprog);
    if (!rc) rc = ovl_record_set_num(rec, "t_prog", r->t_prog);
    if (!rc) rc = ovl_record_set_num(rec, "overlap_noprog", r->overlap_noprog);
    if (!rc) rc = ovl_record_set_num(rec, "overlap_prog", r->overlap_prog);
    rc = finish_record(out, &rec, rc, mpi);
  }
  if (!rc && po->header && !po->json)
    fprintf(out, "# ovl_*: fraction of the communication hidden, (serial - t) / (serial - max(comm, comp))\n");
  fflush(out);
  return rc;
}

ovl_err ovl_bench_ssc_print(FILE *out, const ovl_bench_ssc_params *p, const ovl_bench_ssc_result *res,
                            const ovl_bench_print_opts *po) {
  OVL_TRY(ovl_check_ptr(out, "ovl_bench_ssc_print", "out"));
  OVL_TRY(ovl_check_ptr(p, "ovl_bench_ssc_print", "p"));
  OVL_TRY(ovl_check_ptr(res, "ovl_bench_ssc_print", "res"));
  PRINT_ARGS_CHECK(out, p, res, po);
  char mpi[MPI_MAX_LIBRARY_VERSION_STRING], cube_s[32] = "-", g25_s[32] = "-";
  OVL_TRY(ovl_mpi_library(mpi, sizeof mpi));
  const char *backend = ovl_backend_name(p->cfg.backend);
  if (res->cube_s) snprintf(cube_s, sizeof cube_s, "%dx%dx%d", res->cube_s, res->cube_s, res->cube_s);
  if (res->s25) snprintf(g25_s, sizeof g25_s, "%dx%dx%d", res->s25, res->s25, res->c25);
  if (po->header && !po->json)
    fprintf(out,
            "# ovl bench ssc: n=%" PRId64 ", %d ranks, grids %s (alg3-5) and %s (alg6), backend %s\n# MPI: %s\n"
            "# time per repetition = MAX over ranks; %d warm-up + %d timed rounds, configurations interleaved\n",
            p->n, res->ranks, cube_s, g25_s, backend, mpi, p->warmup, p->iters);
  double base = 0;
  for (int k = 0; k < res->nrows && base == 0; k++)
    if (res->rows[k].alg == OVL_ALGO_SSC4) base = res->rows[k].st.median;
  if (!po->json)
    fprintf(out, "# %-5s %4s %8s %11s %11s %11s %10s %10s %8s %9s %s\n", "algo", "ndup", "grid", "t_min(s)", "t_med(s)",
            "t_max(s)", "GFLOP/s", "comm_med", "speedup", "relerr", "check");
  ovl_err rc = OVL_OK;
  for (int k = 0; k < res->nrows && !rc; k++) {
    const ovl_bench_ssc_row *x = &res->rows[k];
    const char *check = x->relerr <= OVL_BENCH_SSC_TOL ? "PASS" : "FAIL";
    const char *gs = x->alg == OVL_ALGO_SSC6 ? g25_s : cube_s;
    double sp = base > 0 ? base / x->st.median : 0;
    if (!po->json) {
      fprintf(out, "  %-5s %4d %8s %11.4e %11.4e %11.4e %10.2f %10.3e %8.3f %9.2e %s\n", ovl_algo_name(x->alg), x->ndup,
              gs, x->st.min, x->st.median, x->st.max, x->gflops, x->st_comm.median, sp, x->relerr, check);
      continue;
    }
    ovl_record *rec = NULL;
    rc = ovl_record_create("ssc", &rec);
    if (!rc) rc = ovl_record_set_str(rec, "algo", ovl_algo_name(x->alg));
    if (!rc) rc = ovl_record_set_int(rec, "ndup", x->ndup);
    if (!rc) rc = ovl_record_set_int(rec, "n", p->n);
    if (!rc) rc = ovl_record_set_int(rec, "ranks", res->ranks);
    if (!rc) rc = ovl_record_set_str(rec, "grid", gs);
    if (!rc) rc = ovl_record_set_str(rec, "backend", backend);
    if (!rc) rc = ovl_record_set_num(rec, "t_min", x->st.min);
    if (!rc) rc = ovl_record_set_num(rec, "t_median", x->st.median);
    if (!rc) rc = ovl_record_set_num(rec, "t_max", x->st.max);
    if (!rc) rc = ovl_record_set_num(rec, "t_comm_median", x->st_comm.median);
    if (!rc) rc = ovl_record_set_num(rec, "gflops", x->gflops);
    /* null when alg4, the reference, was not run */
    if (!rc) rc = ovl_record_set_num(rec, "speedup_vs_alg4", base > 0 && x->st.median > 0 ? sp : NAN);
    if (!rc) rc = ovl_record_set_num(rec, "relerr", x->relerr >= 0 ? x->relerr : NAN);
    if (!rc) rc = ovl_record_set_str(rec, "check", check);
    if (!rc) rc = ovl_record_set_int(rec, "iterations", p->iters);
    rc = finish_record(out, &rec, rc, mpi);
  }
  fflush(out);
  return rc;
}
