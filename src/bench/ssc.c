/* SymmSquareCube timing (ovl/bench.h): D -> D^2, D^3 per algorithm and
 * N_DUP, configurations interleaved in rounds, each result checked with a
 * random vector. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_impl.h"
#include "ovl/dmat.h"
#include "ovl/grid.h"
#include "ovl/kernels.h"

typedef struct ssc_cfg {
  ovl_algo alg;
  int ndup;
  ovl_grid3d g; /* owned by the caller */
  ovl_ssc s;
  ovl_dmat D, D2, D3;
  double *t, *tc, *tp;     /* total, communication and computation time per timed repetition */
  double relerr, trace[2]; /* the check's relative error; traces of D^2 and D^3 */
} ssc_cfg;

struct ovl_bench_ssc_one {
  MPI_Comm comm;
  ovl_grid3d g;
  ssc_cfg c;
};

/* relerr of D^2 x against D (D x) and of D^3 x against D (D (D x)), the
 * worse; the traces of D^2 and D^3 (valid on plane 0). */
static ovl_err ssc_check(ssc_cfg *c, int64_t n, double *relerr) {
  *relerr = 0;
  if (!ovl_grid3d_active(c->g)) return OVL_OK; /* idle ranks hold no part of the plane */
  OVL_TRY(ovl_dmat_trace(c->D2, &c->trace[0]));
  OVL_TRY(ovl_dmat_trace(c->D3, &c->trace[1]));
  double *x = NULL, *y = NULL, *z = NULL, *w = NULL;
  size_t b = sizeof(double) * (size_t)(n > 0 ? n : 1);
  ovl_err rc = ovl_malloc(b, &x);
  if (!rc) rc = ovl_malloc(b, &y);
  if (!rc) rc = ovl_malloc(b, &z);
  if (!rc) rc = ovl_malloc(b, &w);
  double worst = 0;
  if (!rc) {
    uint64_t st = 0x9e3779b97f4a7c15ULL;
    for (int64_t i = 0; i < n; i++) {
      st = st * 6364136223846793005ULL + 1442695040888963407ULL;
      x[i] = (double)(st >> 11) / 9007199254740992.0 - 0.5;
    }
    /* z = D x, w = D z = D^2 x; y = D2 x */
    rc = ovl_dmat_matvec(c->D, x, z);
    if (!rc) rc = ovl_dmat_matvec(c->D, z, w);
    if (!rc) rc = ovl_dmat_matvec(c->D2, x, y);
    for (int pass = 0; pass < 2 && !rc; pass++) {
      double num = 0, den = 0;
      for (int64_t i = 0; i < n; i++) num += (y[i] - w[i]) * (y[i] - w[i]), den += w[i] * w[i];
      double e = den > 0 ? sqrt(num / den) : sqrt(num);
      if (e > worst || isnan(e)) worst = e;
      if (pass == 0) { /* then z = D w = D^3 x, y = D3 x */
        rc = ovl_dmat_matvec(c->D, w, z);
        if (!rc) rc = ovl_dmat_matvec(c->D3, x, y);
        if (!rc) memcpy(w, z, b);
      }
    }
  }
  ovl_free(&x), ovl_free(&y), ovl_free(&z), ovl_free(&w);
  *relerr = worst;
  return rc;
}

static void cfg_free(ssc_cfg *c) {
  ovl_ssc_destroy(&c->s);
  ovl_dmat_destroy(&c->D), ovl_dmat_destroy(&c->D2), ovl_dmat_destroy(&c->D3);
  free(c->t), free(c->tc), free(c->tp);
  c->t = c->tc = c->tp = NULL;
}

/* Plan, D (the same symmetric matrix for every configuration, scaled so that
 * D^3 stays O(1)), D^2, D^3 and reps timing slots. COLLECTIVE over the
 * grid's parent. */
static ovl_err cfg_setup(ssc_cfg *c, int64_t n, int reps, const ovl_coll_cfg *cc, int arrival, uint64_t seed) {
  ovl_grid2d pl = ovl_grid3d_plane(c->g);
  MPI_Comm parent = ovl_grid3d_parent(c->g);
  ovl_err rc = OVL_OK;
  c->t = calloc((size_t)reps, sizeof(double));
  c->tc = calloc((size_t)reps, sizeof(double));
  c->tp = calloc((size_t)reps, sizeof(double));
  if (!c->t || !c->tc || !c->tp) rc = ovl_err_set(OVL_ERR_NOMEM, "cannot allocate timing arrays");
  OVL_TRY(ovl_err_agree(parent, rc));
  ovl_plan sp = ovl_plan_default(c->alg, n, 0);
  sp.ndup = c->ndup;
  sp.arrival = arrival;
  if (cc) sp.coll = *cc;
  OVL_TRY(ovl_ssc_create(c->g, &sp, &c->s));
  OVL_TRY(ovl_dmat_create(pl, n, n, &c->D));
  OVL_TRY(ovl_dmat_create(pl, n, n, &c->D2));
  OVL_TRY(ovl_dmat_create(pl, n, n, &c->D3));
  OVL_TRY(ovl_dmat_fill(c->D, OVL_FILL_SYMMETRIC, seed));
  double *d = ovl_dmat_data(c->D);
  int64_t lm = ovl_dmat_local_rows(c->D), ln = ovl_dmat_local_cols(c->D), ld = ovl_dmat_ld(c->D);
  double sc = 1.0 / sqrt((double)(n > 0 ? n : 1));
  for (int64_t j = 0; j < ln; j++)
    for (int64_t i = 0; i < lm; i++) d[i + j * ld] *= sc;
  return OVL_OK;
}

/* ---- one configuration, for callers that interleave it with their own ------------------ */

ovl_err ovl_bench_ssc_open(MPI_Comm comm, ovl_algo alg, int ndup, int s, int c, int64_t n, const ovl_coll_cfg *cc,
                           ovl_bench_ssc_h *h) {
  *h = NULL;
  struct ovl_bench_ssc_one *B = calloc(1, sizeof *B);
  OVL_TRY(ovl_err_agree(comm, B ? OVL_OK : ovl_err_set(OVL_ERR_NOMEM, "cannot allocate a benchmark")));
  B->comm = comm;
  ovl_err rc = ovl_grid3d_create(comm, s, c, OVL_GRID_ALLOW_IDLE, &B->g);
  if (!rc) {
    B->c.alg = alg, B->c.ndup = ndup, B->c.g = B->g;
    rc = cfg_setup(&B->c, n, 1, cc, 0, 42);
  }
  if (rc) {
    ovl_bench_ssc_close(&B);
    return rc;
  }
  *h = B;
  return OVL_OK;
}

ovl_err ovl_bench_ssc_once(ovl_bench_ssc_h h, double *t) {
  OVL_TRY(ovl_check_handle(h, "ovl_bench_ssc_once", "the benchmark handle"));
  OVL_TRY(ovl_check_ptr(t, "ovl_bench_ssc_once", "t"));
  OVL_CHECK(h != NULL, OVL_ERR_ARG, "ovl_bench_ssc_once: NULL handle");
  MPI_Barrier(h->comm);
  double t0 = ovl_time();
  ovl_err rc = ovl_ssc_run(h->c.s, h->c.D, h->c.D2, h->c.D3, NULL);
  *t = ovl_time() - t0;
  return rc;
}

ovl_err ovl_bench_ssc_close(ovl_bench_ssc_h *h) {
  if (!h || !*h) return OVL_OK;
  cfg_free(&(*h)->c);
  ovl_grid3d_destroy(&(*h)->g);
  free(*h);
  *h = NULL;
  return OVL_OK;
}

/* ---- the benchmark ----------------------------------------------------------------------- */

ovl_bench_ssc_params ovl_bench_ssc_default(void) {
  ovl_bench_ssc_params p;
  memset(&p, 0, sizeof p);
  p.comm = MPI_COMM_WORLD;
  p.n = 1000;
  p.algs[0] = OVL_ALGO_SSC3, p.algs[1] = OVL_ALGO_SSC4, p.algs[2] = OVL_ALGO_SSC5, p.algs[3] = OVL_ALGO_SSC6;
  p.nalgs = 4;
  const ovl_knob *kd = &ovl_knobs[OVL_KNOB_NDUP]; /* the N_DUP list: the knob's candidates (the table's) */
  for (int k = 0; k < kd->ncand && k < (int)(sizeof p.ndups / sizeof p.ndups[0]); k++)
    p.ndups[p.nndups++] = (int)kd->cand[k];
  p.cfg = ovl_coll_cfg_default();
  p.iters = 5, p.warmup = 1, p.check = 1, p.seed = 42;
  return p;
}

ovl_err ovl_bench_ssc_free(ovl_bench_ssc_result *res) {
  if (!res) return OVL_OK;
  free(res->rows);
  memset(res, 0, sizeof *res);
  return OVL_OK;
}

static int multi(ovl_algo a) { return a == OVL_ALGO_SSC5 || a == OVL_ALGO_SSC6; }

static ovl_err ssc_check_params(const ovl_bench_ssc_params *p) {
  OVL_CHECK(p->n >= 1, OVL_ERR_ARG, "bench ssc: n must be >= 1, got %" PRId64, p->n);
  OVL_CHECK(p->nalgs >= 1 && p->nalgs <= 4, OVL_ERR_ARG, "bench ssc: 1 to 4 algorithms, got %d", p->nalgs);
  OVL_CHECK(p->nndups >= 1 && p->nndups <= 16, OVL_ERR_ARG, "bench ssc: 1 to 16 N_DUP values, got %d", p->nndups);
  int ncfg = 0;
  for (int a = 0; a < p->nalgs; a++) {
    OVL_CHECK(p->algs[a] >= OVL_ALGO_SSC3 && p->algs[a] <= OVL_ALGO_SSC6, OVL_ERR_ARG,
              "bench ssc: %s is not a SymmSquareCube algorithm (alg3 to alg6)", ovl_algo_name(p->algs[a]));
    ncfg += multi(p->algs[a]) ? p->nndups : 1;
  }
  for (int k = 0; k < p->nndups; k++)
    OVL_CHECK(p->ndups[k] >= 1 && p->ndups[k] <= OVL_LANES_MAX, OVL_ERR_ARG,
              "--ndup: values must lie in [1, %d], got %d", OVL_LANES_MAX, p->ndups[k]);
  OVL_CHECK(ncfg <= OVL_BENCH_SSC_MAXCFG, OVL_ERR_ARG, "at most %d configurations", OVL_BENCH_SSC_MAXCFG);
  OVL_CHECK(p->iters >= 1 && p->warmup >= 0, OVL_ERR_ARG, "bench ssc: iterations must be >= 1 and warm-ups >= 0");
  OVL_CHECK(p->cube_s >= 0 && p->s25 >= 0 && p->c25 >= 0, OVL_ERR_ARG, "bench ssc: grid sizes must be >= 0");
  return OVL_OK;
}

ovl_err ovl_bench_ssc(const ovl_bench_ssc_params *p, ovl_bench_ssc_result *res) {
  OVL_TRY(ovl_check_ptr(p, "ovl_bench_ssc", "p"));
  OVL_TRY(ovl_check_ptr(res, "ovl_bench_ssc", "res"));
  OVL_TRY(ovl_check_comm(p->comm, "ovl_bench_ssc"));
  memset(res, 0, sizeof *res);
  MPI_Comm comm = p->comm;
  int P = 0;
  OVL_MPI(MPI_Comm_size(comm, &P));
  OVL_TRY(ovl_err_agree(comm, ssc_check_params(p)));
  int64_t n = p->n;
  ovl_grid3d cube = NULL, g25 = NULL;
  ssc_cfg cfg[OVL_BENCH_SSC_MAXCFG];
  memset(cfg, 0, sizeof cfg);
  int ncfg = 0, flags = p->allow_idle ? OVL_GRID_ALLOW_IDLE : 0, need_cube = 0, need25 = 0;
  for (int a = 0; a < p->nalgs; a++) need_cube |= p->algs[a] != OVL_ALGO_SSC6, need25 |= p->algs[a] == OVL_ALGO_SSC6;
  ovl_err rc = OVL_OK;
  if (need_cube) rc = ovl_grid3d_create(comm, p->cube_s, p->cube_s, flags, &cube);
  if (!rc && need25) {
    int s = p->s25, c = p->c25;
    if (s == 0) ovl_grid25d_dims(P, &s, &c);
    if (s == 0) rc = ovl_err_set(OVL_ERR_GRID, "no 2.5D grid s x s x c with c | s has %d ranks: give --grid25", P);
    else rc = ovl_grid3d_create(comm, s, c, flags, &g25);
  }
  rc = ovl_err_agree(comm, rc);
  if (!rc) { /* every configuration stays allocated (interleaved rounds): their sum must fit */
    double mem = 4.0 * 8.0 * (double)n; /* the check's vectors */
    for (int a = 0; a < p->nalgs; a++) {
      int gs = 0, gc = 0;
      ovl_grid3d_dims(p->algs[a] == OVL_ALGO_SSC6 ? g25 : cube, &gs, &gc);
      double w = (double)ovl_ssc_memory(n, gs, gc, p->algs[a]), blk = (double)ovl_dmat_memory(n, n, gs, gs);
      int cfgs = multi(p->algs[a]) ? p->nndups : 1;
      mem += w < 0 || blk < 0 ? INFINITY : cfgs * (w + 3.0 * blk); /* workspace + D, D^2, D^3 */
    }
    rc = ovl_bench_check_memory(comm, mem, p->mem_limit);
  }
  for (int a = 0; a < p->nalgs && !rc; a++) {
    for (int k = 0; k < (multi(p->algs[a]) ? p->nndups : 1) && !rc; k++) {
      ssc_cfg *c = &cfg[ncfg++];
      c->alg = p->algs[a], c->ndup = multi(p->algs[a]) ? p->ndups[k] : 1;
      c->g = p->algs[a] == OVL_ALGO_SSC6 ? g25 : cube;
      rc = cfg_setup(c, n, p->iters, &p->cfg, p->arrival, p->seed);
    }
  }
  rc = ovl_err_agree(comm, rc);
  for (int r = 0; r < p->warmup + p->iters && !rc; r++) {
    for (int k = 0; k < ncfg && !rc; k++) {
      ssc_cfg *x = &cfg[k];
      ovl_kstats st;
      memset(&st, 0, sizeof st);
      MPI_Barrier(comm);
      double t0 = ovl_time();
      rc = ovl_ssc_run(x->s, x->D, x->D2, x->D3, &st);
      double t = ovl_time() - t0;
      if (r >= p->warmup) x->t[r - p->warmup] = t, x->tc[r - p->warmup] = st.t_comm, x->tp[r - p->warmup] = st.t_comp;
    }
    if (rc) ovl_fatal(comm, rc, "bench ssc: %s", ovl_errmsg());
    ovl_i_bprogress(p->progress, p->progress_ctx, r + 1, p->warmup + p->iters, "round %d%s", r + 1,
                    r < p->warmup ? " (warm-up)" : "");
  }
  for (int k = 0; k < ncfg && !rc; k++) {
    cfg[k].relerr = -1;
    if (p->check) rc = ssc_check(&cfg[k], n, &cfg[k].relerr);
  }
  rc = ovl_err_agree(comm, rc);
  ovl_bench_ssc_row *rows = NULL;
  if (!rc) {
    rows = calloc((size_t)ncfg, sizeof *rows);
    rc = ovl_err_agree(comm, rows ? OVL_OK : ovl_err_set(OVL_ERR_NOMEM, "cannot allocate the result rows"));
  }
  double flops = 4.0 * (double)n * (double)n * (double)n;
  for (int k = 0; k < ncfg && !rc; k++) {
    ssc_cfg *x = &cfg[k];
    ovl_bench_ssc_row *r = &rows[k];
    r->alg = x->alg, r->ndup = x->ndup;
    ovl_grid3d_dims(x->g, &r->s, &r->c);
    rc = ovl_stats_max_over_ranks(comm, x->t, p->iters, &r->st);
    if (!rc) rc = ovl_stats_max_over_ranks(comm, x->tc, p->iters, &r->st_comm);
    if (!rc) rc = ovl_stats_max_over_ranks(comm, x->tp, p->iters, &r->st_comp);
    double v[3] = {x->relerr, x->trace[0], x->trace[1]}; /* rank 0 is on plane 0 */
    if (!rc) rc = MPI_Bcast(v, 3, MPI_DOUBLE, 0, comm) == MPI_SUCCESS ? OVL_OK : OVL_ERR_MPI;
    r->relerr = v[0], r->trace2 = v[1], r->trace3 = v[2];
    r->gflops = r->st.median > 0 ? flops / r->st.median * 1e-9 : 0;
    res->nfailed += !(r->relerr <= OVL_BENCH_SSC_TOL); /* -1: not checked */
  }
  if (!rc) {
    res->ranks = P, res->nrows = ncfg, res->rows = rows;
    int c = 0;
    if (cube) ovl_grid3d_dims(cube, &res->cube_s, &c);
    if (g25) ovl_grid3d_dims(g25, &res->s25, &res->c25);
  }
  for (int k = 0; k < ncfg; k++) cfg_free(&cfg[k]);
  ovl_grid3d_destroy(&cube);
  ovl_grid3d_destroy(&g25);
  if (rc) free(rows);
  return rc;
}
