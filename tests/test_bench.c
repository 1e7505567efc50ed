/* The instruments of ovl/bench.h: sizes, the ping-pong rows and their fit,
 * collective bandwidth, NBC overlap and NBC-Eff, progress, SymmSquareCube
 * (against a run of ovl_ssc_run of our own) and the machine measurement
 * (accepted by ovl_model_predict); bad parameters give the same error on
 * every rank; the printers' tables and records of hand-made results. Small
 * sizes and few repetitions: this checks the records, not the machine. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ovl/ovl.h"
#include "ovltest.h"

static int g_rank, g_P;

/* The same value on every rank of MPI_COMM_WORLD (bitwise). */
static int same_everywhere(double v) {
  double lo = v, hi = v;
  MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return lo == hi;
}

static int stats_ok(const ovl_stats *s) {
  return s->min > 0 && s->min <= s->median && s->median <= s->max && isfinite(s->max);
}

static void test_sizes(void) {
  int64_t out[16];
  int n = 0;
  T_OK(ovl_bench_sizes(1, 100, out, 16, &n));
  T_CHECK(n == 8 && out[0] == 1 && out[6] == 64 && out[7] == 100, "sizes 1..100: n %d, last %lld", n,
          (long long)out[n > 0 ? n - 1 : 0]);
  T_OK(ovl_bench_sizes(8, 64, NULL, 0, &n));
  T_CHECK(n == 4, "sizes 8..64 (a power of two at the end): n %d", n);
  T_OK(ovl_bench_sizes(0, 1, out, 16, &n));
  T_CHECK(n == 1 && out[0] == 1, "sizes 0..1: n %d", n);
  T_ERR(ovl_bench_sizes(1, 8, out, -1, &n), OVL_ERR_ARG);
  ovl_bench_op op = OVL_BENCH_BCAST;
  T_OK(ovl_bench_op_parse("alltoall", &op));
  T_CHECK(op == OVL_BENCH_ALLTOALL, "op_parse alltoall gave %d", (int)op);
  T_ERR(ovl_bench_op_parse("gather", &op), OVL_ERR_ARG);
  int64_t llc = 0, avail = 0, cache = 0;
  int capped = -1;
  T_OK(ovl_node_llc_bytes(&llc));
  int64_t llc_old = 0;
  T_OK(ovl_bench_llc_bytes(&llc_old));
  T_CHECK(llc_old == llc, "the deprecated ovl_bench_llc_bytes gave %lld, not %lld", (long long)llc_old, (long long)llc);
  T_CHECK(llc > 0, "llc %lld", (long long)llc);
  T_OK(ovl_mem_available(&avail));
  T_CHECK(avail == -1 || avail > 0, "MemAvailable %lld", (long long)avail);
  T_OK(ovl_bench_default_cache_bytes(MPI_COMM_WORLD, 2, &cache, &capped));
  T_CHECK(cache > 0 && cache <= 2 * llc && (capped == 0 || capped == 1) && same_everywhere((double)cache),
          "default cache %lld (llc %lld, capped %d)", (long long)cache, (long long)llc, capped);
  T_ERR(ovl_bench_check_memory(MPI_COMM_WORLD, 1e30, 0), OVL_ERR_NOMEM);
  T_ERR(ovl_bench_check_memory(MPI_COMM_WORLD, 4096.0, 1024), OVL_ERR_NOMEM);
  T_OK(ovl_bench_check_memory(MPI_COMM_WORLD, 4096.0, 0));
  T_OK(ovl_bench_check_memory(MPI_COMM_WORLD, 1e30, -1)); /* no gate */
  int k = 0, nodes = 0, cons = -1;
  T_OK(ovl_node_ranks(MPI_COMM_WORLD, &k, &nodes, &cons));
  T_CHECK(k >= 1 && nodes >= 1 && k * nodes <= g_P * g_P && (cons == 0 || cons == 1), "node info k %d nodes %d", k,
          nodes);
}

/* The fit on rows made up for it: a line, a falling line, too few sizes. */
static void test_fit(void) {
  ovl_bench_pingpong_row rows[12];
  memset(rows, 0, sizeof rows);
  const double a = 2e-6, b = 1e-9; /* 2 us + 1 GB/s */
  for (int i = 0; i < 12; i++) {
    rows[i].bytes = (int64_t)1 << (2 * i);
    rows[i].st.median = a + b * (double)rows[i].bytes;
  }
  ovl_bench_fit f;
  T_OK(ovl_bench_pingpong_fit(rows, 12, 0, 0, 0, &f));
  T_CHECK(f.status == 0 && f.nfit == 12 && fabs(f.alpha - a) < 1e-9 * a * 1e3 && fabs(f.beta - b) < 1e-9 * b,
          "relative fit of a line: status %d, alpha %g, beta %g", f.status, f.alpha, f.beta);
  T_CHECK(fabs(f.n_half - a / b) < 1e-6 * (a / b), "N_half %g, want %g", f.n_half, a / b);
  T_OK(ovl_bench_pingpong_fit(rows, 12, 16, 4096, 1, &f));
  T_CHECK(f.status == 0 && f.nfit == 5 && fabs(f.beta - b) < 1e-6 * b, "ordinary fit over 16..4096: nfit %d beta %g",
          f.nfit, f.beta);
  for (int i = 0; i < 12; i++) rows[i].st.median = 1e-3 - 1e-12 * (double)rows[i].bytes; /* faster when larger */
  T_OK(ovl_bench_pingpong_fit(rows, 12, 0, 0, 0, &f));
  T_CHECK(f.status == 2 && f.beta == 0 && f.alpha == 0,
          "falling times: status %d beta %g (a fit never reports "
          "beta <= 0)",
          f.status, f.beta);
  T_OK(ovl_bench_pingpong_fit(rows, 12, 4, 4, 0, &f));
  T_CHECK(f.status == 1 && f.nfit == 1 && f.beta == 0, "one size: status %d nfit %d", f.status, f.nfit);
}

static void test_pingpong(void) {
  ovl_bench_pingpong_params p = ovl_bench_pingpong_default();
  p.min_bytes = 8, p.max_bytes = (int64_t)1 << 20, p.iters = 20, p.warmup = 2, p.large = 65536;
  p.iters_large = 5, p.warmup_large = 1, p.cache_bytes = (int64_t)1 << 20, p.pairs = g_P / 2;
  ovl_bench_pingpong_result r;
  T_OK(ovl_bench_pingpong(&p, &r));
  T_CHECK(r.nrows == 18 && r.pairs == g_P / 2 && r.half == g_P / 2, "pingpong: %d rows, %d pairs", r.nrows, r.pairs);
  for (int i = 0; i < r.nrows; i++) {
    T_CHECK(stats_ok(&r.rows[i].st), "pingpong row %d: t %g %g %g", i, r.rows[i].st.min, r.rows[i].st.median,
            r.rows[i].st.max);
    T_CHECK(r.rows[i].iters == (r.rows[i].bytes > 65536 ? 5 : 20), "row %d iters %d", i, r.rows[i].iters);
    if (i > 0) T_CHECK(r.rows[i].bytes > r.rows[i - 1].bytes, "sizes not increasing at row %d", i);
  }
  if (r.nrows == 18) { T_CHECK(same_everywhere(r.rows[17].st.median), "rows differ between ranks"); }
  ovl_bench_fit f;
  T_OK(ovl_bench_pingpong_fit(r.rows, r.nrows, 0, 0, 0, &f));
  T_CHECK(f.status != 0 || (f.beta > 0 && f.nfit == r.nrows), "fit: status %d beta %g", f.status, f.beta);
  T_CHECK(f.status == 0 || f.beta == 0, "a fit that failed reports beta %g", f.beta);
  ovl_bench_pingpong_free(&r);
  T_CHECK(r.rows == NULL && r.nrows == 0, "free leaves rows");

  /* window method, one pair: per-message times, the window kept (one buffer) */
  p = ovl_bench_pingpong_default();
  p.min_bytes = 1024, p.max_bytes = 8192, p.iters = 5, p.warmup = 1, p.window = 4, p.cache_bytes = 0;
  T_OK(ovl_bench_pingpong(&p, &r));
  T_CHECK(r.nrows == 4, "window rows %d", r.nrows);
  for (int i = 0; i < r.nrows; i++)
    T_CHECK(r.rows[i].window == 4 && stats_ok(&r.rows[i].st), "window row %d: window %d", i, r.rows[i].window);
  ovl_bench_pingpong_free(&r);

  /* bad input: the same error on every rank */
  p = ovl_bench_pingpong_default();
  p.pairs = g_P;
  T_ERR(ovl_bench_pingpong(&p, &r), OVL_ERR_ARG);
  p = ovl_bench_pingpong_default();
  p.max_bytes = (int64_t)1 << 32;
  T_ERR(ovl_bench_pingpong(&p, &r), OVL_ERR_ARG);
  p = ovl_bench_pingpong_default();
  p.max_bytes = 1 << 20, p.mem_limit = 1024;
  T_ERR(ovl_bench_pingpong(&p, &r), OVL_ERR_NOMEM);
}

static void test_coll(void) {
  for (int op = OVL_BENCH_BCAST; op <= OVL_BENCH_ALLTOALL; op++) {
    ovl_bench_coll_params p = ovl_bench_coll_default();
    p.op = (ovl_bench_op)op, p.min_bytes = 8, p.max_bytes = 16384, p.ndup = 3, p.iters = 3, p.warmup = 1;
    if (op == OVL_BENCH_ALLTOALL) p.cfg.backend = OVL_BACKEND_OWN; /* and the own back end */
    p.cache_bytes = (int64_t)1 << 18;
    ovl_bench_coll_result r;
    T_OK(ovl_bench_coll(&p, &r));
    T_CHECK(r.nrows >= 2 && r.p == g_P && r.ppn == 1 && r.ndup == 3 && r.arena_bytes >= (int64_t)1 << 18,
            "coll %d: %d rows, p %d, arena %lld", op, r.nrows, r.p, (long long)r.arena_bytes);
    for (int i = 0; i < r.nrows; i++) {
      const ovl_bench_coll_row *w = &r.rows[i];
      int blocked = op == OVL_BENCH_ALLGATHER || op == OVL_BENCH_ALLTOALL;
      T_CHECK(w->bytes % 8 == 0 && (!blocked || w->bytes % (8 * g_P) == 0), "coll bytes %lld", (long long)w->bytes);
      if (i > 0) T_CHECK(w->bytes > r.rows[i - 1].bytes, "coll sizes not increasing at %d", i);
      for (int c = 0; c < OVL_BENCH_NCASES; c++) {
        T_CHECK(stats_ok(&w->st[c]), "coll row %d case %d: t %g %g %g", i, c, w->st[c].min, w->st[c].median,
                w->st[c].max);
        double want = 2.0 * (g_P - 1) * (double)w->bytes / g_P / w->st[c].median;
        T_CHECK(w->bw[c] > 0 && fabs(w->bw[c] - want) <= 1e-9 * want, "coll bw %g, want %g", w->bw[c], want);
      }
      T_CHECK(same_everywhere(w->st[OVL_BENCH_NDUP].median), "coll row %d differs between ranks", i);
    }
    ovl_bench_coll_free(&r);
  }
  ovl_bench_coll_params p = ovl_bench_coll_default();
  ovl_bench_coll_result r;
  p.ppn = g_P; /* one rank per collective */
  T_ERR(ovl_bench_coll(&p, &r), OVL_ERR_ARG);
  p = ovl_bench_coll_default();
  p.ndup = 0;
  T_ERR(ovl_bench_coll(&p, &r), OVL_ERR_ARG);
}

static void test_nbc(void) {
  ovl_bench_nbc_params p = ovl_bench_nbc_default();
  p.min_bytes = 1024, p.max_bytes = 16384, p.iters = 4, p.warmup = 1, p.compute_us = 300, p.ntests = 4;
  p.cache_bytes = 0;
  ovl_bench_nbc_result r;
  T_OK(ovl_bench_nbc(&p, &r));
  T_CHECK(r.nrows == 5 && r.kernel_s > 0 && r.kernel_s_min > 0 && r.kernel_s_min <= r.kernel_s * 1.0000001,
          "nbc: %d rows, kernel %g / %g s", r.nrows, r.kernel_s, r.kernel_s_min);
  T_CHECK(r.eff_calls == (int64_t)(300e-6 / r.kernel_s_min + 0.5), "eff calls %lld", (long long)r.eff_calls);
  for (int i = 0; i < r.nrows; i++) {
    const ovl_bench_nbc_row *w = &r.rows[i];
    T_CHECK(w->osu_overlap_pct >= 0 && w->osu_overlap_pct <= 100, "osu overlap %g", w->osu_overlap_pct);
    T_CHECK(w->imb_overlap_pct >= 0 && w->imb_overlap_pct <= 100, "imb overlap %g", w->imb_overlap_pct);
    T_CHECK(w->osu_pure > 0 && w->osu_overall > 0 && w->osu_test >= 0 && w->osu_test <= w->osu_compute,
            "osu times pure %g overall %g test %g compute %g", w->osu_pure, w->osu_overall, w->osu_test,
            w->osu_compute);
    T_CHECK(w->osu_overlap_pct == ovl_overlap_osu(w->osu_pure, w->osu_overall, w->osu_compute, w->osu_test),
            "osu overlap is not the formula's");
    T_CHECK(w->imb_overlap_pct == ovl_overlap_imb(w->imb_pure, w->imb_cpu, w->imb_ovrl), "imb overlap");
    /* the eff computation is calibrated at the fastest rank's undisturbed speed: it takes at least most of 300 us */
    T_CHECK(w->eff_comp >= 0.5 * 300e-6, "eff_comp %g s for 300 us of work", w->eff_comp);
    T_CHECK(w->eff_comm > 0 && w->eff_seq > 0 && w->eff_ovl > 0, "eff times");
    T_CHECK(w->eff_speedup > 0 && fabs(w->eff_speedup - w->eff_seq / w->eff_ovl) <= 1e-12 * w->eff_speedup,
            "eff speedup %g", w->eff_speedup);
    double ideal = w->eff_seq / fmax(w->eff_comm, w->eff_comp);
    T_CHECK(fabs(w->eff_ideal - ideal) <= 1e-12 * ideal && w->eff_ideal > 0, "eff ideal %g, want %g", w->eff_ideal,
            ideal);
    T_CHECK(same_everywhere(w->eff_seq) && same_everywhere(w->osu_overall) && same_everywhere(w->imb_ovrl),
            "nbc row %d differs between ranks", i);
  }
  ovl_bench_nbc_free(&r);
  /* one mode only: the others stay zero */
  p.modes = OVL_BENCH_EFF, p.max_bytes = 1024;
  T_OK(ovl_bench_nbc(&p, &r));
  T_CHECK(r.nrows == 1 && r.rows[0].osu_overall == 0 && r.rows[0].imb_ovrl == 0 && r.rows[0].eff_seq > 0,
          "eff only: osu %g imb %g eff %g", r.nrows ? r.rows[0].osu_overall : -1, r.nrows ? r.rows[0].imb_ovrl : -1,
          r.nrows ? r.rows[0].eff_seq : -1);
  ovl_bench_nbc_free(&r);
  p = ovl_bench_nbc_default();
  p.compute_us = -1;
  T_ERR(ovl_bench_nbc(&p, &r), OVL_ERR_ARG);
  p = ovl_bench_nbc_default();
  p.modes = 0;
  T_ERR(ovl_bench_nbc(&p, &r), OVL_ERR_ARG);
}

static void test_progress(void) {
  ovl_bench_progress_params p = ovl_bench_progress_default();
  p.bytes = 65536, p.chunks = 4, p.nb = 32, p.iters = 3, p.warmup = 1;
  ovl_bench_progress_result r;
  T_OK(ovl_bench_progress(&p, &r));
  T_CHECK(r.ranks == g_P, "progress ranks %d", r.ranks);
  for (int be = 0; be < 2; be++) {
    const ovl_bench_progress_row *w = &r.rows[be];
    T_CHECK(w->backend == (be ? OVL_BACKEND_OWN : OVL_BACKEND_MPI), "progress row %d backend", be);
    T_CHECK(w->t_comm > 0 && w->t_comp > 0 && w->t_noprog > 0 && w->t_prog > 0, "progress times");
    T_CHECK(w->serial == w->t_comm + w->t_comp && isfinite(w->overlap_noprog) && isfinite(w->overlap_prog),
            "progress serial %g", w->serial);
    T_CHECK(same_everywhere(w->t_prog), "progress differs between ranks");
  }
  p.iters = 0;
  T_ERR(ovl_bench_progress(&p, &r), OVL_ERR_ARG);
}

/* D as the benchmark makes it: symmetric (seed 42), scaled by 1/sqrt(n). */
static void make_d(ovl_dmat D, int64_t n) {
  T_OK(ovl_dmat_fill(D, OVL_FILL_SYMMETRIC, 42));
  double *d = ovl_dmat_data(D), sc = 1.0 / sqrt((double)n);
  int64_t lm = ovl_dmat_local_rows(D), ln = ovl_dmat_local_cols(D), ld = ovl_dmat_ld(D);
  for (int64_t j = 0; j < ln; j++)
    for (int64_t i = 0; i < lm; i++) d[i + j * ld] *= sc;
}

static void test_ssc(void) {
  const int64_t n = 37;
  ovl_bench_ssc_params p = ovl_bench_ssc_default();
  p.n = n, p.algs[0] = OVL_ALGO_SSC4, p.algs[1] = OVL_ALGO_SSC5, p.algs[2] = OVL_ALGO_SSC6, p.nalgs = 3;
  p.ndups[0] = 1, p.ndups[1] = 3, p.nndups = 2, p.allow_idle = 1, p.iters = 3, p.warmup = 1;
  if (g_P < 4) p.s25 = p.c25 = 1; /* no 2.5D grid has 2 or 3 ranks */
  ovl_bench_ssc_result r;
  T_OK(ovl_bench_ssc(&p, &r));
  T_CHECK(r.nrows == 5 && r.ranks == g_P && r.cube_s >= 1 && r.s25 >= 1, "ssc: %d rows, cube %d, 2.5D %dx%dx%d",
          r.nrows, r.cube_s, r.s25, r.s25, r.c25);
  for (int k = 0; k < r.nrows; k++) {
    const ovl_bench_ssc_row *w = &r.rows[k];
    T_CHECK(stats_ok(&w->st) && w->st_comm.median <= w->st.median, "ssc row %d: t %g comm %g", k, w->st.median,
            w->st_comm.median);
    T_CHECK(fabs(w->gflops - 4.0 * n * n * n / w->st.median * 1e-9) <= 1e-12 * w->gflops, "ssc gflops %g", w->gflops);
    T_CHECK(w->relerr >= 0 && w->relerr <= 1e-10, "ssc row %d relerr %g", k, w->relerr);
    T_CHECK(same_everywhere(w->trace3) && same_everywhere(w->st.median), "ssc row %d differs between ranks", k);
  }
  if (r.nrows == 5)
    T_CHECK(r.rows[0].alg == OVL_ALGO_SSC4 && r.rows[0].ndup == 1 && r.rows[2].alg == OVL_ALGO_SSC5 &&
                r.rows[2].ndup == 3 && r.rows[4].alg == OVL_ALGO_SSC6 && r.rows[4].s == r.s25,
            "ssc row order");

  /* a second run of ovl_ssc_run of our own on the same D: the same D^2 and D^3 (their traces); and
   * trace(D^2) = ||D||_F^2 for a symmetric D */
  ovl_grid3d g = NULL;
  T_OK(ovl_grid3d_create(MPI_COMM_WORLD, 0, 0, OVL_GRID_ALLOW_IDLE, &g));
  ovl_ssc s = NULL;
  ovl_dmat D = NULL, D2 = NULL, D3 = NULL;
  ovl_grid2d pl = ovl_grid3d_plane(g);
  ovl_plan sp = ovl_plan_default(OVL_ALGO_SSC5, n, 0);
  sp.ndup = 3;
  T_OK(ovl_ssc_create(g, &sp, &s));
  T_OK(ovl_dmat_create(pl, n, n, &D));
  T_OK(ovl_dmat_create(pl, n, n, &D2));
  T_OK(ovl_dmat_create(pl, n, n, &D3));
  make_d(D, n);
  T_OK(ovl_ssc_run(s, D, D2, D3, NULL));
  double v[3] = {0, 0, 0};
  if (ovl_grid3d_active(g)) {
    T_OK(ovl_dmat_trace(D2, &v[0]));
    T_OK(ovl_dmat_trace(D3, &v[1]));
    T_OK(ovl_dmat_norm_fro(D, &v[2]));
  }
  MPI_Bcast(v, 3, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  for (int k = 0; k < r.nrows; k++) {
    T_CHECK(fabs(r.rows[k].trace2 - v[0]) <= 1e-12 * fabs(v[0]), "row %d: trace D^2 %.15g, own run %.15g", k,
            r.rows[k].trace2, v[0]);
    T_CHECK(fabs(r.rows[k].trace3 - v[1]) <= 1e-11 * fmax(1.0, fabs(v[1])), "row %d: trace D^3 %.15g, own run %.15g", k,
            r.rows[k].trace3, v[1]);
  }
  T_CHECK(fabs(v[0] - v[2] * v[2]) <= 1e-12 * v[0] && v[0] > 0, "trace D^2 %.15g vs ||D||_F^2 %.15g", v[0],
          v[2] * v[2]);
  ovl_ssc_destroy(&s);
  ovl_dmat_destroy(&D), ovl_dmat_destroy(&D2), ovl_dmat_destroy(&D3);
  ovl_grid3d_destroy(&g);
  ovl_bench_ssc_free(&r);

  /* one configuration, timed by the caller */
  ovl_bench_ssc_h h = NULL;
  T_OK(ovl_bench_ssc_open(MPI_COMM_WORLD, OVL_ALGO_SSC4, 1, 0, 0, n, NULL, &h));
  double t = -1;
  T_OK(ovl_bench_ssc_once(h, &t));
  T_CHECK(t > 0, "ssc once: %g s", t);
  T_OK(ovl_bench_ssc_close(&h));
  T_CHECK(h == NULL, "close leaves the handle");
  T_OK(ovl_bench_ssc_close(&h));

  /* bad input */
  p = ovl_bench_ssc_default();
  p.algs[0] = OVL_ALGO_N, p.nalgs = 1;
  T_ERR(ovl_bench_ssc(&p, &r), OVL_ERR_ARG);
  p = ovl_bench_ssc_default();
  p.ndups[0] = 0;
  T_ERR(ovl_bench_ssc(&p, &r), OVL_ERR_ARG);
  p = ovl_bench_ssc_default();
  p.algs[0] = OVL_ALGO_SSC4, p.nalgs = 1, p.allow_idle = 0; /* 2 and 4 ranks are no cube */
  if (g_P == 2 || g_P == 4) T_ERR(ovl_bench_ssc(&p, &r), OVL_ERR_GRID);
}

static void test_machine(void) {
  ovl_bench_machine_params p = ovl_bench_machine_default();
  p.max_bytes = (int64_t)1 << 18, p.eager = 8192, p.iters = 2, p.window = 4, p.name = "unit-test";
  ovl_machine m;
  double gf = 0;
  T_OK(ovl_bench_machine(&p, &m, &gf));
  T_CHECK(strcmp(m.name, "unit-test") == 0 && m.eager == 8192, "machine name '%s' eager %g", m.name, m.eager);
  T_CHECK(m.alpha >= 0 && m.beta > 0 && m.alpha_r >= 0 && m.beta_r > 0, "machine alpha %g beta %g alpha_r %g beta_r %g",
          m.alpha, m.beta, m.alpha_r, m.beta_r);
  T_CHECK(m.peak_bw > 0 && m.gamma > 0 && gf > 0 && fabs(m.gamma - 1e-9 / gf) <= 1e-12 * m.gamma,
          "machine peak %g gamma %g gflops %g", m.peak_bw, m.gamma, gf);
  /* 3 collectives over p = 2, 4, ... P */
  int nps = 0;
  for (int q = 2; q <= g_P; q *= 2) nps++;
  T_CHECK(m.nfbw == 3 * nps, "machine f_BW tables %d, want %d", m.nfbw, 3 * nps);
  T_CHECK(same_everywhere(m.beta) && same_everywhere(m.peak_bw) && same_everywhere(m.gamma), "machine differs");
  for (int k = OVL_ALGO_SUMMA; k < OVL_ALGO_N; k++) {
    ovl_plan cfg = ovl_plan_default((ovl_algo)k, 512, 8);
    ovl_model_cost c;
    ovl_err rc;
    if (ovl_algo_family((ovl_algo)k) == OVL_FAMILY_BSMUL) { /* the block-sparse product: a shape of fill 0.1 */
      ovl_bsmul_shape sh;
      rc = ovl_bsmul_shape_estimate(512, 64, 0.1, &sh);
      if (rc == OVL_OK) rc = ovl_model_bsmul(&m, &cfg, &sh, &c, NULL);
    } else rc = ovl_model_predict(&m, &cfg, &c);
    T_CHECK(rc == OVL_OK || rc == OVL_ERR_GRID || (k == OVL_ALGO_SQ && rc == OVL_ERR_UNSUPPORTED),
            "predict %s on the measured machine: %s", ovl_algo_name((ovl_algo)k), ovl_errmsg());
    if (rc == OVL_OK)
      T_CHECK(c.total > 0 && isfinite(c.total) && c.latency >= 0 && c.bandwidth > 0 && c.compute > 0,
              "predict %s: total %g", ovl_algo_name((ovl_algo)k), c.total);
    else ovl_err_clear();
  }
  p.iters = 0;
  T_ERR(ovl_bench_machine(&p, &m, NULL), OVL_ERR_ARG);
}

/* The progress callback and the reporter: steps counted, totals passed. */
typedef struct seen {
  int calls, last_done, last_total;
} seen;
static void count_steps(void *ctx, int done, int total, const char *text) {
  seen *s = ctx;
  s->calls++, s->last_done = done, s->last_total = total;
  (void)text;
}

static void test_progress_callback(void) {
  ovl_bench_pingpong_params p = ovl_bench_pingpong_default();
  p.min_bytes = 1, p.max_bytes = 64, p.iters = 3, p.warmup = 0;
  seen s = {0, 0, 0};
  p.progress = count_steps, p.progress_ctx = &s;
  ovl_bench_pingpong_result r;
  T_OK(ovl_bench_pingpong(&p, &r));
  int active = g_rank == 0 || g_rank == g_P / 2; /* one pair: the sleepers report nothing */
  T_CHECK(active ? s.calls == 7 && s.last_done == 7 && s.last_total == 7 : s.calls == 0,
          "pingpong progress: %d calls, last %d/%d", s.calls, s.last_done, s.last_total);
  ovl_bench_pingpong_free(&r);
  ovl_bench_reporter rep;
  T_OK(ovl_bench_reporter_start(&rep, "unit", 0, 0));
  ovl_bench_reporter_fn(&rep, 1, 5, "x");
  T_OK(ovl_bench_reporter_step(&rep, "step %d", 2));
  T_CHECK(rep.done == 2 && rep.on == 0, "reporter done %d", rep.done);
}

/* ---- the printers: hand-made results, the tables' lines and the records' keys ---- */

/* What a printer wrote, read back from a temporary file (static buffer). */
static char g_text[16384];
static const char *printed(FILE *f) {
  rewind(f);
  size_t len = fread(g_text, 1, sizeof g_text - 1, f);
  g_text[len] = '\0';
  fclose(f);
  return g_text;
}

/* Lines that start with `prefix`. */
static int count_lines(const char *text, const char *prefix) {
  int n = 0;
  for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
    n += strncmp(l, prefix, strlen(prefix)) == 0;
  return n;
}

/* Line k (from 0) of text parsed as JSON into doc. */
static ovl_err json_line(const char *text, int k, ovl_json *doc) {
  const char *l = text;
  for (int i = 0; i < k && l; i++) l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL;
  if (!l || !*l) return ovl_err_set(OVL_ERR_ARG, "no line %d", k);
  const char *e = strchr(l, '\n');
  return ovl_json_parse(l, e ? (size_t)(e - l) : strlen(l), "record", "printed", doc);
}

static ovl_stats mkstats(double t) { return (ovl_stats){.min = t, .median = 2 * t, .max = 3 * t, .count = 3}; }

static void test_print(void) {
  const ovl_bench_print_opts table = {.header = 1}, quiet = {.header = 0}, json = {.json = 1};
  ovl_json d;
  double v;
  char str[64];
  /* ping-pong: rows on a line t = 1e-6 + 1e-9 s, so the fit is exact */
  ovl_bench_pingpong_params pp = ovl_bench_pingpong_default();
  ovl_bench_pingpong_row prow[3];
  for (int k = 0; k < 3; k++) {
    prow[k].bytes = (int64_t)1024 << (2 * k), prow[k].iters = 10, prow[k].window = 0;
    double t = 1e-6 + 1e-9 * (double)prow[k].bytes;
    prow[k].st = (ovl_stats){.min = t, .median = t, .max = t, .count = 10};
  }
  ovl_bench_pingpong_result pr = {.ranks = 2, .pairs = 1, .half = 1, .nrows = 3, .rows = prow};
  ovl_bench_fit f;
  T_OK(ovl_bench_pingpong_fit(prow, 3, 0, 0, 1, &f));
  T_CHECK(f.status == 0 && f.absolute == 1 && fabs(f.beta - 1e-9) < 1e-12, "exact fit: %d %g", f.status, f.beta);
  FILE *o = tmpfile();
  ovl_bench_print_opts full = table;
  full.full = 1;
  T_OK(ovl_bench_pingpong_print(o, &pp, &pr, &f, &full));
  const char *t = printed(o);
  T_CHECK(count_lines(t, "# ovl bench pingpong: 2 ranks, 1 pair ") == 1 && count_lines(t, "# MPI: ") == 1 &&
              count_lines(t, "# Hockney fit (ordinary least squares over 3 sizes)") == 1 && count_lines(t, "  ") == 3 &&
              strstr(t, "t_min(us)") != NULL,
          "pingpong table:\n%s", t);
  o = tmpfile();
  T_OK(ovl_bench_pingpong_print(o, &pp, &pr, &f, &quiet));
  t = printed(o);
  T_CHECK(count_lines(t, "# ") == 1 && count_lines(t, "  ") == 3 && !strstr(t, "t_min(us)"), "quiet:\n%s", t);
  o = tmpfile();
  f.status = 2; /* a failed fit: its values are null */
  T_OK(ovl_bench_pingpong_print(o, &pp, &pr, &f, &json));
  t = printed(o);
  T_CHECK(count_lines(t, "{\"type\":\"pingpong\"") == 3, "pingpong records:\n%s", t);
  if (json_line(t, 2, &d) == OVL_OK) {
    T_OK(ovl_json_num(&d, d.root, "bytes", &v));
    T_CHECK(v == 16384, "last row's bytes %g", v);
    T_CHECK(strstr(t, "\"alpha\":null,\"beta\":null") != NULL, "the values of a failed fit are null");
    T_OK(ovl_json_str(&d, d.root, "fit", str, sizeof str));
    T_CHECK(strcmp(str, "abs") == 0, "fit '%s'", str);
    ovl_json_free(&d);
  } else T_CHECK(0, "pingpong record does not parse: %s", ovl_errmsg());
  T_ERR(ovl_bench_pingpong_print(NULL, &pp, &pr, &f, &json), OVL_ERR_ARG);
  FILE *dev_full = fopen("/dev/full", "w");
  if (dev_full) {
    setvbuf(dev_full, NULL, _IONBF, 0);
    T_ERR(ovl_bench_pingpong_print(dev_full, &pp, &pr, &f, &json), OVL_ERR_IO);
    fclose(dev_full);
  }

  /* collectives: a case's times under its key; the timeline named at the end */
  ovl_bench_coll_params cp = ovl_bench_coll_default();
  cp.timeline = "tl", cp.cache_bytes = 0;
  ovl_bench_coll_row crow[2];
  for (int k = 0; k < 2; k++) {
    crow[k].bytes = 64 << k;
    for (int c = 0; c < OVL_BENCH_NCASES; c++) crow[k].st[c] = mkstats(1e-6 * (c + 1)), crow[k].bw[c] = 1e6 * (c + 1);
  }
  ovl_bench_coll_result cr = {.ranks = 4, .ppn = 2, .p = 2, .ndup = 4, .nrows = 2, .timeline_bytes = 128, .rows = crow};
  o = tmpfile();
  T_OK(ovl_bench_coll_print(o, &cp, &cr, &table));
  t = printed(o);
  T_CHECK(count_lines(t, "# ovl bench coll: bcast, 4 ranks = 2 nodes x 2 ppn (ppn: explicit)") == 1 &&
              count_lines(t, "  ") == 2 && count_lines(t, "# timeline: 3 repetitions of each case at 128 B") == 1 &&
              count_lines(t, "# buffers: one send and one receive buffer") == 1,
          "coll table:\n%s", t);
  o = tmpfile();
  T_OK(ovl_bench_coll_print(o, &cp, &cr, &json));
  t = printed(o);
  T_CHECK(count_lines(t, "{\"type\":\"coll\"") == 2 && !strstr(t, "timeline"), "coll records:\n%s", t);
  if (json_line(t, 1, &d) == OVL_OK) {
    const cJSON *ppn = ovl_json_find(d.root, "ppn_overlap", NULL);
    T_CHECK(ppn != NULL, "ppn_overlap");
    T_OK(ovl_json_num(&d, ppn, "t_median", &v));
    T_CHECK(v == 6e-6, "ppn t_median %g", v);
    T_OK(ovl_json_num(&d, ppn, "bw_MBps", &v));
    T_CHECK(fabs(v - 3) < 1e-12, "ppn bw %g MB/s", v);
    T_OK(ovl_json_str(&d, d.root, "alg", str, sizeof str));
    T_CHECK(strcmp(str, "auto") == 0, "alg '%s'", str);
    ovl_json_free(&d);
  } else T_CHECK(0, "coll record does not parse: %s", ovl_errmsg());

  /* nbc: only the measures asked for */
  ovl_bench_nbc_params np = ovl_bench_nbc_default();
  np.modes = OVL_BENCH_OSU | OVL_BENCH_EFF;
  ovl_bench_nbc_row nrow = {.bytes = 8, .osu_pure = 1e-6, .eff_speedup = 1.5};
  ovl_bench_nbc_result nr = {.ranks = 2, .nrows = 1, .eff_calls = 7, .rows = &nrow};
  o = tmpfile();
  T_OK(ovl_bench_nbc_print(o, &np, &nr, &table));
  t = printed(o);
  T_CHECK(strstr(t, "osu_pure") && strstr(t, "eff_comm") && !strstr(t, "imb_pure") &&
              count_lines(t, "# eff: fixed computation 1000.0 us = 7 kernel calls") == 1,
          "nbc table:\n%s", t);
  o = tmpfile();
  T_OK(ovl_bench_nbc_print(o, &np, &nr, &json));
  t = printed(o);
  if (json_line(t, 0, &d) == OVL_OK) {
    const cJSON *eff = ovl_json_find(d.root, "eff", NULL);
    T_CHECK(ovl_json_find(d.root, "osu", NULL) && eff && !ovl_json_find(d.root, "imb", NULL), "nbc parts:\n%s", t);
    T_OK(ovl_json_num(&d, eff, "speedup", &v));
    T_CHECK(v == 1.5, "eff speedup %g", v);
    ovl_json_free(&d);
  } else T_CHECK(0, "nbc record does not parse: %s", ovl_errmsg());

  /* progress: a row per back end */
  ovl_bench_progress_params gp = ovl_bench_progress_default();
  ovl_bench_progress_result gr = {.ranks = 2};
  gr.rows[0].backend = OVL_BACKEND_MPI, gr.rows[1].backend = OVL_BACKEND_OWN;
  o = tmpfile();
  T_OK(ovl_bench_progress_print(o, &gp, &gr, &table));
  t = printed(o);
  T_CHECK(count_lines(t, "  mpi ") == 1 && count_lines(t, "  own ") == 1 && strstr(t, "(own: auto)"),
          "progress table:\n%s", t);
  o = tmpfile();
  T_OK(ovl_bench_progress_print(o, &gp, &gr, &json));
  t = printed(o);
  T_CHECK(count_lines(t, "{\"type\":\"progress\",\"schema\":1,\"backend\":\"own\"") == 1, "progress records:\n%s", t);

  /* SymmSquareCube: checks and the speedup over alg4 */
  ovl_bench_ssc_params sp = ovl_bench_ssc_default();
  ovl_bench_ssc_row srow[2] = {{.alg = OVL_ALGO_SSC4, .ndup = 1, .st = mkstats(2), .relerr = 1e-14},
                               {.alg = OVL_ALGO_SSC5, .ndup = 2, .st = mkstats(1), .relerr = 1e-3}};
  ovl_bench_ssc_result sr = {.ranks = 8, .nrows = 2, .nfailed = 1, .cube_s = 2, .rows = srow};
  o = tmpfile();
  T_OK(ovl_bench_ssc_print(o, &sp, &sr, &table));
  t = printed(o);
  T_CHECK(count_lines(t, "  alg4 ") == 1 && count_lines(t, "  alg5 ") == 1 && strstr(t, " 2.000 ") &&
              strstr(t, "FAIL") && strstr(t, "PASS") && strstr(t, "grids 2x2x2 (alg3-5) and - (alg6)"),
          "ssc table:\n%s", t);
  o = tmpfile();
  T_OK(ovl_bench_ssc_print(o, &sp, &sr, &json));
  t = printed(o);
  if (json_line(t, 1, &d) == OVL_OK) {
    T_OK(ovl_json_num(&d, d.root, "speedup_vs_alg4", &v));
    T_CHECK(v == 2, "speedup %g", v);
    T_OK(ovl_json_str(&d, d.root, "check", str, sizeof str));
    T_CHECK(strcmp(str, "FAIL") == 0, "check '%s'", str);
    ovl_json_free(&d);
  } else T_CHECK(0, "ssc record does not parse: %s", ovl_errmsg());
  sr.rows = srow + 1, sr.nrows = 1; /* no alg4: no speedup */
  o = tmpfile();
  T_OK(ovl_bench_ssc_print(o, &sp, &sr, &json));
  t = printed(o);
  T_CHECK(strstr(t, "\"speedup_vs_alg4\":null") != NULL, "ssc without alg4:\n%s", t);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_P);
  test_sizes();
  test_fit();
  test_print();
  if (g_P >= 2) {
    test_pingpong();
    test_coll();
    test_progress_callback();
    test_machine();
  }
  test_nbc();
  test_progress();
  test_ssc();
  int rc = t_finish("test_bench");
  MPI_Finalize();
  return rc;
}
