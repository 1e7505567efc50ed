/* The tuner: the model's best configurations timed in interleaved rounds, the
 * fastest stored in the tune database. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ovl/bench.h"
#include "ovl/record.h"
#include "ovl/tunedb.h"

enum { TUNE_MAXCAND = 128 };

ovl_tune_params ovl_tune_default(ovl_family f, int64_t n) {
  ovl_tune_params p;
  memset(&p, 0, sizeof p);
  p.family = f, p.n = n, p.top = 3, p.band = 0.10, p.rounds = 3, p.warmup = 1, p.sweep_rounds = 9;
  return p;
}

void ovl_tune_result_free(ovl_tune_result *r) {
  if (!r) return;
  free(r->rows);
  r->rows = NULL, r->nrows = 0;
}

/* One configuration ready to time: its grid, plan and operands. */
typedef struct tune_run {
  ovl_family f;
  ovl_plan plan;
  ovl_grid2d g;
  ovl_grid3d g3;
  ovl_dmat A, B, C;
  ovl_bench_ssc_h ssc;
  int64_t mem;
} tune_run;

static void run_close(tune_run *r) {
  ovl_dmat_destroy(&r->A), ovl_dmat_destroy(&r->B), ovl_dmat_destroy(&r->C);
  if (r->g3) ovl_grid3d_destroy(&r->g3), r->g = NULL;
  else if (r->g) ovl_grid2d_destroy(&r->g);
  ovl_bench_ssc_close(&r->ssc);
}

/* Set up one configuration if what is open already (*used bytes per rank)
 * and its own footprint fit the node. COLLECTIVE over comm. */
static ovl_err run_open(MPI_Comm comm, ovl_family f, const ovl_plan *c, int64_t *used, tune_run *r) {
  memset(r, 0, sizeof *r);
  r->f = f, r->plan = *c;
  if (f == OVL_FAMILY_SSC) {
    int64_t w = ovl_ssc_memory(c->n, c->s, c->c, c->algo), blk = ovl_dmat_memory(c->n, c->n, c->s, c->s);
    r->mem = w < 0 || blk < 0 ? INT64_MAX / 2 : w + 3 * blk; /* workspace + D, D^2, D^3 */
    OVL_TRY(ovl_check_memory(comm, *used + r->mem, 0));
    OVL_TRY(ovl_bench_ssc_open(comm, c->algo, c->ndup, c->algo == OVL_ALGO_SSC6 ? c->s : 0,
                               c->algo == OVL_ALGO_SSC6 ? c->c : 0, c->n, &c->coll, &r->ssc));
    *used += r->mem;
    return OVL_OK;
  }
  ovl_err rc = ovl_plan_grids(comm, c, OVL_GRID_ALLOW_IDLE, &r->g, &r->g3);
  if (!rc) {
    int p = c->p, q = c->q, rep = 1;
    if (r->g3) p = q = c->s, rep = c->c;
    r->mem = ovl_mm_memory(c, 'N', 'N', c->n, c->n, c->n, p, q, rep);
    rc = ovl_check_memory(comm, *used + (r->mem < 0 ? INT64_MAX / 2 : r->mem), 0);
  }
  if (!rc) rc = ovl_dmat_create(r->g, c->n, c->n, &r->A);
  if (!rc) rc = ovl_dmat_create(r->g, c->n, c->n, &r->B);
  if (!rc) rc = ovl_dmat_create(r->g, c->n, c->n, &r->C);
  rc = ovl_err_agree(comm, rc);
  if (!rc) rc = ovl_dmat_fill(r->A, OVL_FILL_RANDOM, 1);
  if (!rc) rc = ovl_dmat_fill(r->B, OVL_FILL_RANDOM, 2);
  if (rc) {
    run_close(r);
    return rc;
  }
  *used += r->mem;
  return OVL_OK;
}

/* One repetition (this rank's seconds). COLLECTIVE over comm. */
static ovl_err run_once(MPI_Comm comm, tune_run *r, double *t) {
  if (r->f == OVL_FAMILY_SSC) return ovl_bench_ssc_once(r->ssc, t);
  MPI_Barrier(comm);
  double t0 = ovl_time();
  ovl_err rc = ovl_gemm('N', 'N', 1.0, r->A, r->B, 0.0, r->C, &r->plan, r->g3, NULL);
  *t = ovl_time() - t0;
  return rc;
}

/* Time runs[idx[0..m-1]] in warmup + rounds interleaved rounds: tmin/tmed
 * over the timed rounds, indexed by idx. COLLECTIVE over comm. */
static ovl_err interleave(MPI_Comm comm, tune_run *runs, const int *idx, int m, int rounds, int warmup, double *tmin,
                          double *tmed, const ovl_tune_params *p, int *step, int steps, const char *what) {
  double *t = calloc((size_t)m * (size_t)rounds + 1, sizeof *t);
  ovl_err rc = ovl_err_agree(comm, t ? OVL_OK : ovl_err_set(OVL_ERR_NOMEM, "cannot allocate timings"));
  for (int r = 0; r < warmup + rounds && !rc; r++) {
    for (int k = 0; k < m && !rc; k++) {
      double x = 0;
      rc = run_once(comm, &runs[idx[k]], &x);
      if (r >= warmup) t[(size_t)k * (size_t)rounds + (size_t)(r - warmup)] = x;
    }
    if (p->progress) {
      char text[64];
      snprintf(text, sizeof text, "%s round %d%s", what, r + 1, r < warmup ? " (warm-up)" : "");
      p->progress(p->progress_ctx, ++*step, steps, text);
    }
  }
  for (int k = 0; k < m && !rc; k++) {
    ovl_stats st;
    rc = ovl_stats_max_over_ranks(comm, t + (size_t)k * (size_t)rounds, rounds, &st);
    tmin[idx[k]] = st.min, tmed[idx[k]] = st.median;
  }
  free(t);
  return rc;
}

/* Rank 0's ranked candidates, complete (grids and groups filled). */
static ovl_err candidates(const ovl_tune_params *p, int P, ovl_plan *cand, ovl_model_cost *pred, int *nc,
                          ovl_machine *m, char *src, size_t nsrc) {
  OVL_TRY(ovl_plan_machine(p->src.machine, m, src, nsrc));
  int k = ovl_model_candidates(p->family, p->n, P, cand, TUNE_MAXCAND);
  ovl_model_rank(m, cand, k, pred);
  while (k > 0 && isinf(pred[k - 1].total)) k--;
  if (k == 0) return ovl_err_set(OVL_ERR_GRID, "no %s configuration fits %d ranks", ovl_family_name(p->family), P);
  for (int i = 0; i < k; i++) { /* the shape rules complete each one */
    ovl_plan c = cand[i];
    c.P = P;
    int gp, gq, gs, gc;
    ovl_grid_shape(c.algo, P, &gp, &gq, &gs, &gc);
    if (c.algo == OVL_ALGO_SUMMA || c.algo == OVL_ALGO_HSUMMA || c.algo == OVL_ALGO_CANNON) c.p = gp, c.q = gq;
    else if (c.s <= 0) c.s = gs, c.c = gc;
    if (c.algo == OVL_ALGO_HSUMMA) OVL_TRY(ovl_hgroups_auto_dims(c.p, c.q, c.G, &c.groups_i, &c.groups_j));
    cand[i] = c;
  }
  *nc = k;
  return OVL_OK;
}

ovl_err ovl_tune_check(const ovl_tune_params *p) {
  if (!p) return ovl_err_set(OVL_ERR_ARG, "tune: NULL parameters");
  if ((int)p->family < 0 || p->family >= OVL_FAMILY_N)
    return ovl_err_set(OVL_ERR_ARG, "tune: no family %d (--family)", (int)p->family);
  /* the symmetric square has one algorithm and its grid follows from the
   * ranks: N_DUP is its only knob, and auto takes the table's default for
   * it (no tune entry is looked up), so a tuned choice would never be used */
  if (p->family == OVL_FAMILY_SQ)
    return ovl_err_set(OVL_ERR_ARG,
                       "tune: --family sq has nothing to tune: one algorithm, the grid from the ranks, and N_DUP, "
                       "which auto takes from the knob table (ndup=%d) without asking a tune file; give --ndup N (or "
                       "ndup=N in OVL_OPTIONS) to the sp2/trs4 run instead",
                       ovl_knob_default_int(OVL_KNOB_NDUP, OVL_FAMILY_SQ));
  /* the block-sparse product's time depends on its matrices' sparsity, which a tune entry (family, n, P)
   * does not record: its planner asks the cost model alone */
  if (p->family == OVL_FAMILY_BSMUL)
    return ovl_err_set(OVL_ERR_ARG, "tune: --family bsmul is planned by the cost model alone, from its matrices' shape "
                                    "(ovl_plan_resolve_bsmul; ovl model --algo bsumma --fill F predicts it): a tune "
                                    "entry keyed by n and P cannot tell its sparsity");
  if (p->n < 1) return ovl_err_set(OVL_ERR_ARG, "tune: n must be >= 1, got %lld", (long long)p->n);
  if (p->top < 1) return ovl_err_set(OVL_ERR_ARG, "tune: top (--top) must be >= 1, got %d", p->top);
  if (p->rounds < 1) return ovl_err_set(OVL_ERR_ARG, "tune: rounds (--iterations) must be >= 1, got %d", p->rounds);
  if (p->sweep_rounds < 1)
    return ovl_err_set(OVL_ERR_ARG, "tune: sweep rounds (--rounds) must be >= 1, got %d", p->sweep_rounds);
  if (p->warmup < 0) return ovl_err_set(OVL_ERR_ARG, "tune: warm-up (--warmup) must be >= 0, got %d", p->warmup);
  if (!(p->band >= 0) || !isfinite(p->band))
    return ovl_err_set(OVL_ERR_ARG, "tune: band (--band) must be a finite number >= 0, got %g", p->band);
  return OVL_OK;
}

ovl_err ovl_tune(MPI_Comm comm, const ovl_tune_params *p, ovl_tune_result *r) {
  OVL_TRY(ovl_check_comm(comm, "ovl_tune"));
  OVL_TRY(ovl_check_ptr(p, "ovl_tune", "p"));
  OVL_TRY(ovl_check_ptr(r, "ovl_tune", "r"));
  memset(r, 0, sizeof *r);
  r->auto_row = -1;
  int rank = 0, P = 1;
  OVL_MPI(MPI_Comm_rank(comm, &rank));
  OVL_MPI(MPI_Comm_size(comm, &P));
  r->ranks = P;
  OVL_TRY(ovl_err_agree(comm, ovl_tune_check(p)));
  ovl_err rc = OVL_OK;
  ovl_plan *cand = calloc(TUNE_MAXCAND, sizeof *cand);
  ovl_model_cost *pred = calloc(TUNE_MAXCAND, sizeof *pred);
  r->rows = calloc(TUNE_MAXCAND, sizeof *r->rows);
  tune_run *runs = calloc(TUNE_MAXCAND, sizeof *runs);
  double *tm1 = calloc(4 * TUNE_MAXCAND, sizeof *tm1);
  int nc = 0;
  ovl_machine m;
  memset(&m, 0, sizeof m);
  if (!cand || !pred || !r->rows || !runs || !tm1) rc = ovl_err_set(OVL_ERR_NOMEM, "tune: cannot allocate");
  else if (rank == 0) rc = candidates(p, P, cand, pred, &nc, &m, r->machine, sizeof r->machine);
  rc = ovl_err_agree(comm, rc);
  if (rc) {
    free(cand), free(pred), free(runs), free(tm1), ovl_tune_result_free(r);
    return rc;
  }
  MPI_Bcast(&nc, 1, MPI_INT, 0, comm);
  MPI_Bcast(cand, (int)(sizeof *cand * (size_t)nc), MPI_BYTE, 0, comm);
  MPI_Bcast(pred, (int)(sizeof *pred * (size_t)nc), MPI_BYTE, 0, comm);
  MPI_Bcast(r->machine, (int)sizeof r->machine, MPI_CHAR, 0, comm);
  MPI_Bcast(m.name, (int)sizeof m.name, MPI_CHAR, 0, comm);
  snprintf(r->machine_name, sizeof r->machine_name, "%s", m.name);
  /* the tuner's set: the model's top K and every candidate inside the band */
  int nt = p->top < nc ? p->top : nc;
  while (nt < nc && pred[nt].total <= (1.0 + p->band) * pred[0].total) nt++;
  int nm = p->exhaustive ? nc : nt, idx[TUNE_MAXCAND], nopen = 0, step = 0;
  int steps = p->warmup + p->rounds + (p->exhaustive ? p->warmup + p->sweep_rounds : 0);
  int64_t used = 0;
  double *tmin1 = tm1, *tmed1 = tm1 + TUNE_MAXCAND, *tmin = tm1 + 2 * TUNE_MAXCAND, *tmed = tm1 + 3 * TUNE_MAXCAND;
  for (int k = 0; k < 4 * TUNE_MAXCAND; k++) tm1[k] = NAN;
  for (int k = 0; k < nm && !rc; k++) { /* every configuration to time gets its operands up front */
    rc = run_open(comm, p->family, &cand[k], &used, &runs[k]);
    if (!rc) idx[nopen++] = k;
  }
  if (!rc) rc = interleave(comm, runs, idx, nt, p->rounds, p->warmup, tmin1, tmed1, p, &step, steps, "tuner");
  int tbest = 0, best = 0;
  for (int k = 1; k < nt && !rc; k++)
    if (tmed1[k] < tmed1[tbest]) tbest = k;
  if (!rc && p->exhaustive)
    rc = interleave(comm, runs, idx, nc, p->sweep_rounds, p->warmup, tmin, tmed, p, &step, steps, "sweep");
  for (int k = 0; k < nopen; k++) run_close(&runs[k]);
  free(runs);
  if (!rc && !p->exhaustive)
    for (int k = 0; k < nt; k++) tmin[k] = tmin1[k], tmed[k] = tmed1[k];
  for (int k = 1; k < nm; k++)
    if (tmed[k] < tmed[best]) best = k;
  for (int k = 0; k < nc && !rc; k++) {
    ovl_tune_row *w = &r->rows[k];
    w->plan = cand[k], w->predicted = pred[k].total, w->tuned = k < nt;
    w->t_median_tuner = tmed1[k], w->t_min = tmin[k], w->t_median = tmed[k];
  }
  r->nrows = nc, r->ntuned = nt, r->choice = tbest, r->best = best, r->timed = nm;
  /* the choice stored is the tuner's */
  const char *env = getenv("OVL_TUNE_FILE");
  const char *out = p->src.tune_file ? p->src.tune_file : (env && *env ? env : NULL);
  if (!rc && out) {
    ovl_plan st = cand[tbest];
    st.n = p->n;
    if (rank == 0) rc = ovl_tunedb_store(out, p->family, &st, tmed1[tbest], m.name);
    rc = ovl_err_agree(comm, rc);
    if (!rc) snprintf(r->stored, sizeof r->stored, "%s", out);
  }
  if (!rc && p->exhaustive) { /* what auto resolves to now (the tune file just written, else the model) */
    ovl_plan ap = ovl_plan_auto(p->family, p->n);
    ovl_plan_src src = {p->src.machine, out};
    rc = ovl_plan_resolve(comm, p->family, &ap, &src, r->auto_why, sizeof r->auto_why);
    r->auto_plan = ap;
    for (int k = 0; k < nc && r->auto_row < 0 && !rc; k++)
      if (ovl_plan_same(&cand[k], &ap)) r->auto_row = k;
  }
  free(cand), free(pred), free(tm1);
  if (rc) ovl_tune_result_free(r);
  return rc;
}

/* The timed candidates, in the model's order. */
static ovl_err print_rows(FILE *out, const ovl_tune_params *p, const ovl_tune_result *r, int json) {
  const char *family = ovl_family_name(p->family);
  ovl_err rc = OVL_OK;
  for (int k = 0; k < r->timed && !rc; k++) {
    const ovl_tune_row *w = &r->rows[k];
    char cs[96], tt[32] = "           -";
    ovl_plan_short(&w->plan, cs, sizeof cs);
    if (json) {
      ovl_record *o = NULL;
      OVL_TRY(ovl_record_create("tune-candidate", &o));
      ovl_record_set_str(o, "family", family), ovl_record_set_int(o, "n", p->n), ovl_record_set_int(o, "P", r->ranks);
      ovl_record_set_int(o, "rank", k + 1), ovl_record_set_str(o, "config", cs);
      ovl_record_set_num(o, "predicted", w->predicted), ovl_record_set_bool(o, "tuner", w->tuned);
      ovl_record_set_num(o, "t_median_tuner", w->t_median_tuner); /* null when the tuner did not time it */
      ovl_record_set_num(o, "t_min", w->t_min), ovl_record_set_num(o, "t_median", w->t_median);
      rc = ovl_record_print(o, out);
      ovl_record_destroy(&o);
      continue;
    }
    if (k == 0)
      fprintf(out, "# %4s  %-34s %12s %12s %12s %12s %8s\n", "rank", "configuration", "predicted(s)", "tuner_med(s)",
              p->exhaustive ? "sweep_min(s)" : "t_min(s)", p->exhaustive ? "sweep_med(s)" : "t_med(s)", "pred/med");
    if (w->tuned) snprintf(tt, sizeof tt, "%12.4e", w->t_median_tuner);
    fprintf(out, "  %4d  %-34s %12.4e %12s %12.4e %12.4e %8.2f\n", k + 1, cs, w->predicted, tt, w->t_min, w->t_median,
            w->predicted / w->t_median);
  }
  return rc;
}

/* The exhaustive sweep's verdict on the model's, the tuner's and auto's choices. */
static ovl_err print_sweep(FILE *out, const ovl_tune_params *p, const ovl_tune_result *r, int json) {
  const ovl_tune_row *b = &r->rows[r->best], *c = &r->rows[r->choice];
  char as[96], be[96], bs[96];
  ovl_plan_short(&r->auto_plan, as, sizeof as);
  ovl_plan_short(&b->plan, be, sizeof be);
  ovl_plan_short(&c->plan, bs, sizeof bs);
  double ar = r->auto_row >= 0 ? r->rows[r->auto_row].t_median / b->t_median : NAN;
  if (!json) {
    ovl_fprintf(out,
                "# sweep: best %s %.4e s; the model's first choice %.3fx the best; the tuner's %.3fx; auto (%s): %s "
                "%s%.3fx the best\n",
                be, b->t_median, r->rows[0].t_median / b->t_median, c->t_median / b->t_median, r->auto_why, as,
                r->auto_row < 0 ? "(not a candidate) " : "", ar);
    return OVL_OK;
  }
  ovl_record *o = NULL;
  OVL_TRY(ovl_record_create("tune-sweep", &o));
  ovl_record_set_str(o, "family", ovl_family_name(p->family)), ovl_record_set_int(o, "n", p->n);
  ovl_record_set_int(o, "P", r->ranks), ovl_record_set_int(o, "configurations", r->nrows);
  ovl_record_set_int(o, "rounds", p->sweep_rounds), ovl_record_set_str(o, "best", be);
  ovl_record_set_num(o, "t_best", b->t_median);
  ovl_record_set_num(o, "model_ratio", r->rows[0].t_median / b->t_median), ovl_record_set_str(o, "tuner", bs);
  ovl_record_set_num(o, "tuner_ratio", c->t_median / b->t_median), ovl_record_set_str(o, "auto", as);
  ovl_record_set_str(o, "auto_from", r->auto_why);
  ovl_record_set_num(o, "auto_ratio", ar); /* null: auto's choice is not a candidate */
  ovl_err rc = ovl_record_print(o, out);
  ovl_record_destroy(&o);
  return rc;
}

ovl_err ovl_tune_print(FILE *out, const ovl_tune_params *p, const ovl_tune_result *r, int json) {
  OVL_TRY(ovl_check_ptr(out, "ovl_tune_print", "out"));
  OVL_TRY(ovl_check_ptr(p, "ovl_tune_print", "p"));
  OVL_TRY(ovl_check_ptr(r, "ovl_tune_print", "r"));
  if (!out || !p || !r || !r->rows) return ovl_err_set(OVL_ERR_ARG, "ovl_tune_print: a NULL argument or no rows");
  const ovl_tune_row *c = &r->rows[r->choice];
  if (!json) {
    ovl_fprintf(
        out,
        "# %d configurations; machine %s\n# tuner: the top %d and those predicted within %.0f%% of the best (%d), "
        "%d rounds (+%d warm-up)%s\n",
        r->nrows, r->machine, p->top, 100 * p->band, r->ntuned, p->rounds, p->warmup,
        p->exhaustive ? "; then every configuration" : "");
    if (p->exhaustive)
      fprintf(out, "# exhaustive sweep: all %d, %d rounds (+%d warm-up)\n", r->nrows, p->sweep_rounds, p->warmup);
  }
  ovl_err rc = print_rows(out, p, r, json);
  char bs[96];
  ovl_plan_short(&c->plan, bs, sizeof bs);
  if (!rc && !json) fprintf(out, "# choice: %s (%.4e s in the tuner's rounds)\n", bs, c->t_median_tuner);
  if (!rc && !json && r->stored[0]) ovl_fprintf(out, "# stored in %s\n", r->stored);
  if (!rc && p->exhaustive) rc = print_sweep(out, p, r, json);
  fflush(out);
  return rc;
}
