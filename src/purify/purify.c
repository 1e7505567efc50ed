/* Density-matrix purification: canonical (Palser-Manolopoulos) and McWeeny
 * on SymmSquareCube; SP2 and TRS4 (Niklasson) on the symmetric square, in
 * float64 or float32-then-float64: one loop, one step function per method;
 * checkpoints and restart in checkpoint.c. */
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lapacke.h>

#include "ovl/purify.h"
#include "ovl/trace.h"
#include "purify/purify_impl.h"

ovl_purify_opts ovl_purify_opts_default(void) {
  ovl_purify_opts o;
  memset(&o, 0, sizeof o);
  o.method = OVL_PURIFY_CANONICAL;
  o.max_iter = 200;
  o.tol = 0.0;
  o.prec = OVL_PURIFY_PREC_DOUBLE;
  o.plan = ovl_plan_default(OVL_ALGO_SSC5, 0, 0); /* N_DUP: the family's default (the knob table) */
  o.homo = o.lumo = NAN;                          /* SP2-ACC: no gap estimates */
  o.sparse = NAN;                                 /* dense */
  o.sparse_block = OVL_PURIFY_SPARSE_BLOCK;
  return o;
}

static const char *const k_methods[] = {"canonical", "mcweeny", "sp2", "trs4", "sp2acc"};
enum { NMETHODS = 5 };

const char *ovl_purify_method_name(ovl_purify_method m) {
  return (int)m >= 0 && (int)m < NMETHODS ? k_methods[m] : "unknown";
}

ovl_err ovl_purify_method_parse(const char *name, ovl_purify_method *out) {
  OVL_TRY(ovl_check_ptr(out, "ovl_purify_method_parse", "out"));
  for (int m = 0; name && m < NMETHODS; m++)
    if (strcmp(name, k_methods[m]) == 0) {
      *out = (ovl_purify_method)m;
      return OVL_OK;
    }
  if (name && strcmp(name, "trs2") == 0) {
    *out = OVL_PURIFY_SP2;
    return OVL_OK;
  }
  return ovl_err_set(OVL_ERR_ARG, "'%s' is not a purification method (canonical, mcweeny, sp2 (or trs2), trs4, sp2acc)",
                     name ? name : "(null)");
}

static const char *const k_precs[] = {"double", "mixed"};

const char *ovl_purify_prec_name(ovl_purify_prec p) { return (int)p >= 0 && (int)p < 2 ? k_precs[p] : "unknown"; }

ovl_err ovl_purify_prec_parse(const char *name, ovl_purify_prec *out) {
  OVL_TRY(ovl_check_ptr(out, "ovl_purify_prec_parse", "out"));
  for (int p = 0; name && p < 2; p++)
    if (strcmp(name, k_precs[p]) == 0) {
      *out = (ovl_purify_prec)p;
      return OVL_OK;
    }
  return ovl_err_set(OVL_ERR_ARG, "'%s' is not a precision (double, mixed)", name ? name : "(null)");
}

int ovl_purify_uses_sq(ovl_purify_method m) {
  return m == OVL_PURIFY_SP2 || m == OVL_PURIFY_TRS4 || m == OVL_PURIFY_SP2ACC;
}

ovl_family ovl_purify_family(ovl_purify_method m) { return ovl_purify_uses_sq(m) ? OVL_FAMILY_SQ : OVL_FAMILY_SSC; }

ovl_family ovl_purify_plan_family(ovl_purify_method m, ovl_plan *plan) {
  ovl_family f = ovl_purify_family(m);
  if (plan && plan->algo != OVL_ALGO_AUTO && ovl_algo_family(plan->algo) != f)
    plan->algo = f == OVL_FAMILY_SQ ? OVL_ALGO_SQ : OVL_ALGO_AUTO;
  return f;
}

/* ---- plane-0 helpers (LOCAL arithmetic + reductions over the plane) -------- */

/* The local block of a matrix, read once through the public accessors (all
 * zero for a NULL handle). */
typedef struct lblock {
  int64_t m, n, lm, ln, ld, roff, coff;
  double *data;
} lblock;
static lblock lblock_of(ovl_dmat A) {
  lblock b = {0, 0, 0, 0, 1, 0, 0, NULL};
  if (A == NULL) return b;
  b.m = ovl_dmat_rows(A), b.n = ovl_dmat_cols(A), b.lm = ovl_dmat_local_rows(A), b.ln = ovl_dmat_local_cols(A);
  b.ld = ovl_dmat_ld(A), b.roff = ovl_dmat_row_off(A), b.coff = ovl_dmat_col_off(A), b.data = ovl_dmat_data(A);
  return b;
}

/* X = a F + b I */
static void affine(ovl_dmat X, ovl_dmat F, double a, double b) {
  lblock bx = lblock_of(X), bf = lblock_of(F);
  for (int64_t c = 0; c < bx.ln; c++)
    for (int64_t r = 0; r < bx.lm; r++)
      bx.data[r + c * bx.ld] = a * bf.data[r + c * bf.ld] + (bx.roff + r == bx.coff + c ? b : 0.0);
}

/* D = x D + y D2 + z D3 */
static void combine(ovl_dmat D, double x, ovl_dmat D2, double y, ovl_dmat D3, double z) {
  lblock bd = lblock_of(D), bd2 = lblock_of(D2), bd3 = lblock_of(D3);
  for (int64_t c = 0; c < bd.ln; c++)
    for (int64_t r = 0; r < bd.lm; r++) {
      int64_t q = r + c * bd.ld;
      bd.data[q] = x * bd.data[q] + y * bd2.data[q] + (D3 ? z * bd3.data[q] : 0.0);
    }
}

/* sums[0] = ||A - B||_F^2, sums[1] = <A, C> (elementwise), reduced over the plane */
static ovl_err plane_sums(ovl_dmat A, ovl_dmat B, ovl_dmat C, double out[2]) {
  lblock ba = lblock_of(A), bb = lblock_of(B), bc = lblock_of(C);
  double s[2] = {0, 0};
  for (int64_t c = 0; c < ba.ln; c++)
    for (int64_t r = 0; r < ba.lm; r++) {
      int64_t q = r + c * ba.ld;
      double d = ba.data[q] - bb.data[q];
      s[0] += d * d;
      if (C) s[1] += ba.data[q] * bc.data[q];
    }
  OVL_MPI(MPI_Allreduce(s, out, 2, MPI_DOUBLE, MPI_SUM, ovl_grid2d_parent(ovl_dmat_grid(A))));
  return OVL_OK;
}

/* What an iteration needs from D, D^2 (and D^3), in one pass and one
 * reduction over the plane: out = {tr D, tr D^2, ||D^2 - D||_F^2, tr D^3,
 * tr D^4}; tr D^3 = <D, D^2> and tr D^4 = ||D^2||_F^2 for symmetric D (or
 * the trace of D3 when given). */
static ovl_err plane_stats(ovl_dmat D, ovl_dmat D2, ovl_dmat D3, double out[5]) {
  lblock bd = lblock_of(D), bd2 = lblock_of(D2), bd3 = lblock_of(D3);
  double s[5] = {0, 0, 0, 0, 0};
  for (int64_t c = 0; c < bd.ln; c++) {
    const double *d = bd.data + c * bd.ld, *d2 = bd2.data + c * bd2.ld;
    double e = 0, t3 = 0, t4 = 0;
    for (int64_t r = 0; r < bd.lm; r++) {
      double x = d2[r] - d[r];
      e += x * x, t3 += d[r] * d2[r], t4 += d2[r] * d2[r];
    }
    s[2] += e, s[3] += t3, s[4] += t4;
    int64_t r = bd.coff + c - bd.roff; /* the diagonal element of this column, if local */
    if (r >= 0 && r < bd.lm) s[0] += d[r], s[1] += d2[r];
  }
  if (D3) { /* tr D^3 from D3's diagonal only */
    double t3 = 0;
    for (int64_t c = 0; c < bd.ln; c++) {
      int64_t r = bd.coff + c - bd.roff;
      if (r >= 0 && r < bd.lm) t3 += bd3.data[r + c * bd3.ld];
    }
    s[3] = t3;
  }
  OVL_MPI(MPI_Allreduce(MPI_IN_PLACE, s, 5, MPI_DOUBLE, MPI_SUM, ovl_grid2d_parent(ovl_dmat_grid(D))));
  memcpy(out, s, sizeof s);
  return OVL_OK;
}

/* Gershgorin bounds of F: [hmin, hmax] holds the spectrum. */
static ovl_err gershgorin(ovl_dmat F, double *hmin, double *hmax) {
  lblock bf = lblock_of(F);
  ovl_grid2d pl = ovl_dmat_grid(F);
  double *row = NULL; /* row[2r] = diagonal, row[2r+1] = sum of |off-diagonal| */
  OVL_TRY(ovl_calloc(sizeof(double) * (size_t)(2 * bf.lm + 2), &row));
  for (int64_t c = 0; c < bf.ln; c++)
    for (int64_t r = 0; r < bf.lm; r++) {
      double v = bf.data[r + c * bf.ld];
      if (bf.roff + r == bf.coff + c) row[2 * r] += v;
      else row[2 * r + 1] += fabs(v);
    }
  int rc = bf.lm > 0 ? MPI_Allreduce(MPI_IN_PLACE, row, (int)(2 * bf.lm), MPI_DOUBLE, MPI_SUM, ovl_grid2d_row_comm(pl))
                     : MPI_SUCCESS;
  double lo = INFINITY, hi = -INFINITY;
  for (int64_t r = 0; r < bf.lm; r++) {
    lo = fmin(lo, row[2 * r] - row[2 * r + 1]);
    hi = fmax(hi, row[2 * r] + row[2 * r + 1]);
  }
  ovl_free(&row);
  if (rc != MPI_SUCCESS) return ovl_err_mpi(rc, "MPI_Allreduce (Gershgorin)");
  OVL_MPI(MPI_Allreduce(&lo, hmin, 1, MPI_DOUBLE, MPI_MIN, ovl_grid2d_parent(pl)));
  OVL_MPI(MPI_Allreduce(&hi, hmax, 1, MPI_DOUBLE, MPI_MAX, ovl_grid2d_parent(pl)));
  return OVL_OK;
}

/* Tighter bounds of F's spectrum than Gershgorin's, from 40 Lanczos steps
 * (ovl_lanczos_bounds). Every method starts from the interval, so a tighter one
 * saves iterations (SP2 about 2 log2 of the ratio of widths); Gershgorin's
 * can be several times the spectrum on dense matrices. Plane 0
 * (ovl_dmat_matvec reduces over it). A replayed schedule (SMPI, nothing
 * computed) takes every step, so that its messages are a computed run's. */
static ovl_err dmat_mv(void *ctx, const double *x, double *y) { return ovl_dmat_matvec((ovl_dmat)ctx, x, y); }

static ovl_err lanczos_bounds(ovl_dmat F, double *hmin, double *hmax, int replay) {
  return ovl_lanczos_bounds(ovl_dmat_rows(F), 40, replay ? OVL_LANCZOS_EVERY_STEP : 0, dmat_mv, F,
                            ovl_grid2d_parent(ovl_dmat_grid(F)), hmin, hmax);
}

/* ---- memory query ---------------------------------------------------------- */

/* ---- the eigensolver's density, for comparison ---------------------------------- */

ovl_err ovl_purify_reference(ovl_dmat F, ovl_dmat D, const ovl_purify_opts *o, ovl_purify_ref *res) {
  OVL_TRY(ovl_check_handle(F, "ovl_purify_reference", "F"));
  OVL_TRY(ovl_check_handle(D, "ovl_purify_reference", "D"));
  OVL_TRY(ovl_check_ptr(o, "ovl_purify_reference", "opts"));
  OVL_TRY(ovl_check_ptr(res, "ovl_purify_reference", "res"));
  MPI_Comm pc = ovl_grid2d_parent(ovl_dmat_grid(F));
  int rank = 0;
  MPI_Comm_rank(pc, &rank);
  int64_t n = ovl_dmat_rows(F);
  double *f = NULL, *d = NULL, *w = NULL;
  ovl_err rc = OVL_OK;
  if (rank == 0) {
    rc = ovl_malloc(sizeof(double) * (size_t)(n * n + 1), &f);
    if (!rc) rc = ovl_malloc(sizeof(double) * (size_t)(n * n + 1), &d);
    if (!rc) rc = ovl_malloc(sizeof(double) * (size_t)(n + 1), &w);
  }
  rc = ovl_err_agree(pc, rc);
  if (!rc) rc = ovl_dmat_gather(F, f);
  if (!rc) rc = ovl_dmat_gather(D, d);
  double out[4] = {0, 0, 0, 0};
  if (!rc && rank == 0) {
    double t0 = ovl_time();
    lapack_int info = n > 0 ? LAPACKE_dsyevd(LAPACK_COL_MAJOR, 'V', 'L', (lapack_int)n, f, (lapack_int)n, w) : 0;
    out[2] = ovl_time() - t0;
    if (info != 0) rc = ovl_err_set(OVL_ERR_NUMERIC, "LAPACK dsyevd failed (info %d)", (int)info);
    double num = 0, den = 0, tr = 0, eref = 0;
    int64_t k = o->method == OVL_PURIFY_MCWEENY ? 0 : o->nocc;
    if (o->method == OVL_PURIFY_MCWEENY)
      for (int64_t x = 0; x < n; x++) k += w[x] < o->mu;
    for (int64_t c = 0; c < n && !rc; c++)
      for (int64_t r = 0; r < n; r++) {
        double s = 0;
        for (int64_t e = 0; e < k; e++) s += f[r + e * n] * f[c + e * n];
        double diff = d[r + c * n] - s;
        num += diff * diff;
        den += s * s;
        if (r == c) tr += d[r + c * n];
      }
    for (int64_t e = 0; e < k; e++) eref += w[e];
    out[0] = den > 0 ? sqrt(num / den) : sqrt(num);
    out[1] = fabs(tr - (double)k);
    out[3] = eref; /* tr(D_ref F) = sum of the occupied eigenvalues */
  }
  ovl_free(&f), ovl_free(&d), ovl_free(&w);
  OVL_TRY(ovl_err_agree(pc, rc));
  OVL_MPI(MPI_Bcast(out, 4, MPI_DOUBLE, 0, pc));
  res->relerr = out[0], res->trace_err = out[1], res->t_eig = out[2], res->energy = out[3];
  return OVL_OK;
}

int64_t ovl_purify_memory(int64_t n, int s, int c, const ovl_purify_opts *opts) {
  if (!opts) return -1;
  int sq = ovl_purify_uses_sq(opts->method);
  int64_t work = sq ? ovl_sq_memory(n, s, c) : ovl_ssc_memory(n, s, c, opts->plan.algo),
          blk64 = ovl_dmat_memory(n, n, s, s);
  if (work < 0 || blk64 < 0) return -1;
  double blk = (double)blk64; /* P(0,0,0)'s block of an n x n matrix, the largest */
  /* what the kernel object keeps between runs */
  double held = sq ? (double)work : (opts->plan.algo == OVL_ALGO_SSC6 ? 3 : 6) * blk;
  /* F, D and the iteration's matrices: D^2, D^3 (SymmSquareCube); D^2 (SP2);
   * D^2, a scratch square and D^4 (TRS4) */
  double mats = 2 + (opts->method == OVL_PURIFY_TRS4 ? 3 : sq ? 1 : 2);
  double peak = 5 * blk; /* F, D and the symmetry check's T, send and receive */
  /* F, D and the spectral bounds' Lanczos vectors and tridiagonal eigenproblem (40 steps) */
  peak = fmax(peak, 2 * blk + 8.0 * (3.0 * (double)n + 2 * 40 + 40 * 40 + 4) + 64);
  peak = fmax(peak, mats * blk + (double)work); /* the iteration and a run's workspace */
  if (opts->checkpoint_every > 0) peak = fmax(peak, (mats + 1) * blk + held);
  if (opts->restart) peak = fmax(peak, (mats + 2) * blk + held);
  return peak < 4611686018427387904.0 ? (int64_t)peak : -1;
}

/* ---- the iteration ------------------------------------------------------------ */

/* The state plane 0 measures after the kernel and every rank learns (rank 0 of
 * the parent is P(0,0,0) on plane 0). */
enum { V_TRD, V_TRD2, V_ERR, V_TRD3, V_TRD4, V_TERR, V_STOP, V_N };

/* ---- SimGrid SMPI: the iteration schedule, recorded or replayed --------------
 * A run's schedule is what its cost depends on besides n and the grid: per
 * iteration, the precision of each product ('s' float32, 'd' float64; the
 * first is the square of D, the others the step's, TRS4's 0-2), 'F' when
 * SP2-ACC fell back to SP2 from D0 after it; iterations end with '|':
 * "s|s|...|d|d". Under SMPI (OVL_SMPI builds) OVL_SMPI_SCHEDULE_OUT=FILE
 * makes rank 0 write the schedule of each ovl_purify to FILE, and
 * OVL_SMPI_SCHEDULE=SCHEDULE (or @FILE) replays one: the products, the
 * traces' reductions and broadcasts, the steps' communication and the
 * spectral bounds' 40 Lanczos steps are done as the schedule says, whatever
 * the matrices hold, and nothing is checked (the result is meaningless and
 * its stop reason says so). That lets a simulation skip computing the
 * products (OVL_SMPI_FLOPS=skip) and share the matrices' memory among the
 * ranks (OVL_SMPI_SHARED_MALLOC), with the iterations of a run that
 * computed (docs/guides/smpi.md, "The crossover"). */
enum { SCHED_MAX = 4096 };
typedef struct sched {
  int replay;          /* 1: the iterations follow it */
  int n;               /* iterations */
  char it[512][8];     /* per iteration: the products' precisions, then 'F' for a fallback */
  char rec[SCHED_MAX]; /* the one being recorded */
  int len;
} sched;

static void sched_put(sched *s, char c) {
  if (s->len + 1 < SCHED_MAX) s->rec[s->len++] = c, s->rec[s->len] = 0;
}

#ifdef OVL_SMPI
/* OVL_SMPI_SCHEDULE parsed into s (agreed: every rank reads the same
 * environment); OVL_ERR_ARG naming what is wrong. LOCAL. */
static ovl_err sched_load(sched *s, int sqm) {
  const char *e = getenv("OVL_SMPI_SCHEDULE");
  if (!e || !*e) return OVL_OK;
  char buf[SCHED_MAX];
  if (e[0] == '@') {
    FILE *f = fopen(e + 1, "r");
    if (!f) return ovl_err_set(OVL_ERR_ARG, "OVL_SMPI_SCHEDULE: cannot open %s", e + 1);
    size_t k = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[k] = 0;
  } else {
    snprintf(buf, sizeof buf, "%s", e);
  }
  int n = 0, k = 0;
  for (const char *c = buf;; c++) {
    if (*c == '|' || *c == 0 || *c == '\n') {
      if (k > 0) {
        s->it[n][k] = 0;
        if (s->it[n][0] != 's' && s->it[n][0] != 'd')
          return ovl_err_set(OVL_ERR_ARG, "OVL_SMPI_SCHEDULE: iteration %d does not start with a product", n + 1);
        n++, k = 0;
      }
      if (*c == 0) break;
      continue;
    }
    if (*c != 's' && *c != 'd' && *c != 'F')
      return ovl_err_set(OVL_ERR_ARG, "OVL_SMPI_SCHEDULE: '%c' is not s, d, F or |", *c);
    if (n >= 512 || k >= 6) return ovl_err_set(OVL_ERR_ARG, "OVL_SMPI_SCHEDULE: too long");
    if (*c == 's' && !sqm)
      return ovl_err_set(OVL_ERR_ARG, "OVL_SMPI_SCHEDULE: float32 products need sp2, sp2acc or trs4");
    s->it[n][k++] = *c;
  }
  if (n == 0) return ovl_err_set(OVL_ERR_ARG, "OVL_SMPI_SCHEDULE: no iteration");
  s->n = n, s->replay = 1;
  return OVL_OK;
}
#endif

/* D := (D + D^T) / 2 on plane 0 (W: scratch of D's layout), timed into *t;
 * the verdict agreed over the parent. Every D that leaves an iteration (and
 * so every checkpoint and the result) is exactly symmetric: SymmSquareCube's
 * D^2 and D^3 come from general products, whose rounding differs between
 * (i, j) and (j, i), and the step combines them; the symmetric square
 * computes each pair once, so SP2 and TRS4 need this for D0 only. */
static ovl_err symmetrize_d(ovl_dmat D, ovl_dmat W, int on0, MPI_Comm parent, double *t) {
  double t0 = ovl_time();
  OVL_TRACE_BEGIN("purify.symmetrize");
  ovl_err rc = on0 ? ovl_dmat_symmetrize(D, W) : OVL_OK;
  OVL_TRACE_END("purify.symmetrize", 0);
  *t += ovl_time() - t0;
  return ovl_err_agree(parent, rc);
}

/* What a step works on: the iterate and its powers (plane 0), the kernel
 * of the symmetric square, the precision of its products, the result's
 * counters. */
typedef struct pstep {
  ovl_dmat D, D2, D3, T;
  ovl_sq sq;
  ovl_prec prec;
  int on0;
  double N, Ne; /* n, n_occ */
  ovl_purify_result *R;
  ovl_kstats ks;
  ovl_i_acc acc; /* SP2-ACC's estimates (rules.c) */
  sched *sc;
  int force; /* a replayed TRS4 step: its products (0-2), else -1 */
} pstep;

/* X2 = X^2 by the symmetric square on every rank (COLLECTIVE), timed as the kernel. */
static ovl_err square(pstep *x, ovl_dmat X, ovl_dmat X2) {
  double ts = ovl_time();
  OVL_TRACE_BEGIN("purify.square");
  ovl_err rc = ovl_sq_run(x->sq, X, X2, x->prec, NULL, &x->ks);
  OVL_TRACE_END("purify.square", 0);
  x->R->t_ssc += ovl_time() - ts;
  x->R->products++;
  x->R->flops += x->N * x->N * x->N;
  sched_put(x->sc, x->prec == OVL_PREC_SINGLE ? 's' : 'd');
  return rc;
}

/* The steps: the next iterate D from D, its powers and the measures v that
 * every rank holds alike. *branch: SP2's branch (0: D^2, 1: 2D - D^2; -1 for
 * the others); *end: 1 when the step finds the run converged, 2 when it
 * broke down (the iterate is then left as it is). COLLECTIVE over the
 * grid's parent. */
typedef ovl_err (*step_fn)(pstep *x, const double *v, int *branch, int *end);

static ovl_err step_canonical(pstep *x, const double *v, int *branch, int *end) {
  (void)branch;
  double trD = v[V_TRD], trD2 = v[V_TRD2];
  double den = trD - trD2, cn = den != 0.0 ? (trD2 - v[V_TRD3]) / den : 0.5;
  if (!(cn >= 0.0 && cn <= 1.0)) { /* c leaves [0, 1] only at convergence */
    *end = v[V_ERR] < 1e-5 ? 1 : 2;
    return OVL_OK;
  }
  if (x->on0) {
    if (cn >= 0.5) combine(x->D, 0.0, x->D2, (1.0 + cn) / cn, x->D3, -1.0 / cn);
    else combine(x->D, (1.0 - 2.0 * cn) / (1.0 - cn), x->D2, (1.0 + cn) / (1.0 - cn), x->D3, -1.0 / (1.0 - cn));
  }
  return OVL_OK;
}

static ovl_err step_mcweeny(pstep *x, const double *v, int *branch, int *end) {
  (void)v, (void)branch, (void)end;
  if (x->on0) combine(x->D, 0.0, x->D2, 3.0, x->D3, -2.0);
  return OVL_OK;
}

/* SP2 and SP2-ACC (rules.c: plain SP2 when acc holds no estimates): D <-
 * c0 I + c1 D + c2 D^2; *end = 3 when the estimates missed the gap. */
static ovl_err step_sp2(pstep *x, const double *v, int *branch, int *end) {
  double c[3];
  *end = ovl_i_sp2_step(&x->acc, x->N, x->Ne, v[V_TRD], v[V_TRD2], x->prec == OVL_PREC_SINGLE, c, branch);
  if (*end) return OVL_OK;
  if (x->on0) {
    combine(x->D, c[1], x->D2, c[2], NULL, 0.0);
    if (c[0] != 0.0) affine(x->D, x->D, 1.0, c[0]);
  }
  if (*branch >= 2) x->R->accelerated++;
  return OVL_OK;
}

static ovl_err step_trs4(pstep *x, const double *v, int *branch, int *end) {
  (void)branch, (void)end;
  ovl_dmat D = x->D, D2 = x->D2, D3 = x->D3, T = x->T;
  const int on0 = x->on0;
  /* tr G = sum x^2 (1-x)^2 is a difference of traces of size n_occ: once it
   * is within their rounding, gamma is noise, and a noisy gamma outside
   * [0, 6] would take a first-order step that spoils the trace; there the
   * iteration is McWeeny's (gamma = 3), which keeps it */
  double gamma = ovl_i_trs4_gamma(x->Ne, v[V_TRD2], v[V_TRD3], v[V_TRD4]);
  if (x->force >= 0) gamma = x->force == 0 ? 7.0 : x->force == 1 ? 1.0 : 3.0; /* a replayed schedule */
  if (gamma > 6.0) {
    if (on0) combine(D, 2.0, D2, -1.0, NULL, 0.0);
  } else if (gamma < 0.0) {
    if (on0) combine(D, 0.0, D2, 1.0, NULL, 0.0);
  } else if (fabs(gamma - 3.0) >= 0.5) {
    /* (g-3) D^4 + (4-2g) D^3 + g D^2 = c (D^2 + a D)^2 + (g - c a^2) D^2 */
    double c = gamma - 3.0, a = (2.0 - gamma) / (gamma - 3.0);
    if (on0) ovl_dmat_copy(T, D2), combine(T, 1.0, D, a, NULL, 0.0); /* T = D^2 + a D */
    OVL_TRY(square(x, T, D3));
    if (on0) combine(D, 0.0, D3, c, D2, gamma - c * a * a);
  } else {
    /* near g = 3: D^3 = ((D + D^2)^2 - D^2 - D^4) / 2 */
    OVL_TRY(square(x, D2, T));                    /* D^4 */
    if (on0) combine(D, 1.0, D2, 1.0, NULL, 0.0); /* D <- D + D^2 */
    OVL_TRY(square(x, D, D3));                    /* (D + D^2)^2 */
    if (on0) {                                    /* D^3 into D3, then the polynomial into D */
      combine(D3, 0.5, D2, -0.5, T, -0.5);
      combine(D, 0.0, T, gamma - 3.0, D3, 4.0 - 2.0 * gamma);
      combine(D, 1.0, D2, gamma, NULL, 0.0);
    }
  }
  return OVL_OK;
}

/* One step per method, in the order of ovl_purify_method. */
static const step_fn k_steps[NMETHODS] = {step_canonical, step_mcweeny, step_sp2, step_trs4, step_sp2};

ovl_err ovl_purify(ovl_grid3d g, ovl_dmat F, ovl_dmat D, const ovl_purify_opts *opts, ovl_purify_result *res) {
  OVL_TRY(ovl_check_handle(g, "ovl_purify", "the 3D grid"));
  MPI_Comm parent = ovl_grid3d_parent(g);
  ovl_purify_result R;
  memset(&R, 0, sizeof R);
  R.stop_reason = "";
  double t_start = ovl_time();
  int gi = -1, gj = -1, gk = -1, active = ovl_grid3d_active(g);
  ovl_grid3d_coords(g, &gi, &gj, &gk);
  int on0 = active && gk == 0;
  ovl_err rc = OVL_OK;
  int64_t n = active ? ovl_dmat_rows(F) : 0;
  MPI_Allreduce(MPI_IN_PLACE, &n, 1, MPI_INT64_T, MPI_MAX, parent);
  int sqm = opts ? ovl_purify_uses_sq(opts->method) : 0;
  if (!opts) rc = ovl_err_set(OVL_ERR_ARG, "ovl_purify: no options");
  else if (active && (!F || !D)) rc = ovl_check_handle(NULL, "ovl_purify", F ? "D" : "F");
  else if (active && (ovl_dmat_rows(F) != ovl_dmat_cols(F) || ovl_dmat_rows(D) != ovl_dmat_rows(F) ||
                      ovl_dmat_cols(D) != ovl_dmat_cols(F)))
    rc =
        ovl_err_set(OVL_ERR_SIZE, "F and D must be n x n, got F %" PRId64 " x %" PRId64 " and D %" PRId64 " x %" PRId64,
                    ovl_dmat_rows(F), ovl_dmat_cols(F), ovl_dmat_rows(D), ovl_dmat_cols(D));
  else if ((int)opts->method < 0 || (int)opts->method >= NMETHODS)
    rc = ovl_err_set(OVL_ERR_ARG, "unknown purification method %d", (int)opts->method);
  else rc = ovl_i_purify_check_common(opts, n);
  if (rc == OVL_OK) {
    if (opts->prec != OVL_PURIFY_PREC_DOUBLE && opts->prec != OVL_PURIFY_PREC_MIXED)
      rc = ovl_err_set(OVL_ERR_ARG, "unknown precision %d", (int)opts->prec);
    else if (opts->prec == OVL_PURIFY_PREC_MIXED && !sqm)
      rc = ovl_err_set(OVL_ERR_ARG, "mixed precision needs the sp2, sp2acc or trs4 method, got %s",
                       ovl_purify_method_name(opts->method));
    else if (opts->sparse > 0)
      rc = ovl_err_set(OVL_ERR_ARG,
                       "a filtering threshold (sparse %g) applies to block-sparse matrices (ovl_purify_sparse, ovl "
                       "purify --sparse with a block-sparse file), not to the dense purification",
                       opts->sparse);
    else if (opts->checkpoint_every < 0 || ((opts->checkpoint_every > 0 || opts->restart) && !opts->checkpoint))
      rc = ovl_err_set(OVL_ERR_ARG, "checkpoints need a path and a positive interval");
  }
  OVL_TRY(ovl_err_agree(parent, rc));
  sched sc; /* on the stack: SMPI's simulated ranks share the process's static storage */
  memset(&sc, 0, sizeof sc);
#ifdef OVL_SMPI
  rc = sched_load(&sc, sqm);
  if (rc == OVL_OK && sc.replay && opts->restart)
    rc = ovl_err_set(OVL_ERR_ARG, "OVL_SMPI_SCHEDULE: a replayed schedule starts from D0, not from a checkpoint");
  OVL_TRY(ovl_err_agree(parent, rc));
  int prank = 0;
  MPI_Comm_rank(parent, &prank);
  if (sc.replay && prank == 0)
    fprintf(stderr,
            "ovl_purify: SMPI: the iteration schedule is fixed (OVL_SMPI_SCHEDULE, %d iterations): traces and "
            "stopping are not used, the result is meaningless\n",
            sc.n);
#endif
  /* F must be symmetric and finite (plane 0 checks, everyone learns; a replayed schedule does the checks'
   * communication and ignores their verdict) */
  if (on0) {
    rc = ovl_dmat_check_finite(F);
    if (rc == OVL_OK || sc.replay) rc = ovl_dmat_check_symmetric(F, 1e-12);
    if (sc.replay) rc = OVL_OK;
  }
  OVL_TRY(ovl_err_agree(parent, rc));

  const ovl_purify_method method = opts->method;
  const double tol = opts->tol > 0 ? opts->tol : method == OVL_PURIFY_CANONICAL ? 1e-11 : 0.0;
  ovl_grid2d pl = ovl_grid3d_plane(g);
  ovl_dmat D2 = NULL, D3 = NULL, T = NULL;
  ovl_ssc ssc = NULL;
  ovl_sq sq = NULL;
  /* planes k > 0: workspace-free handles of the same layout */
  OVL_TRY(ovl_dmat_create(pl, n, n, &D2));
  if (method != OVL_PURIFY_SP2 && method != OVL_PURIFY_SP2ACC) rc = ovl_dmat_create(pl, n, n, &D3);
  if (rc == OVL_OK && method == OVL_PURIFY_TRS4) rc = ovl_dmat_create(pl, n, n, &T);
  if (rc == OVL_OK && sqm) rc = ovl_sq_create(g, n, opts->plan.ndup, &opts->plan.coll, &sq);
  else if (rc == OVL_OK) {
    ovl_plan sp = opts->plan;
    sp.n = n;
    rc = ovl_ssc_create(g, &sp, &ssc);
  }
  rc = ovl_err_agree(parent, rc);
  const double N = (double)n, Ne = (double)opts->nocc;
  int it = 0, prev_ckpt = -1;
  double est[2] = {0.0, 0.0};    /* SP2-ACC: the estimates' images in D0, xo and yo (0: no acceleration) */
  double sp2map[2] = {0.0, 1.0}; /* SP2's D0 = (hmax I - F) / w: hmax and w (plane 0), for SP2-ACC's fallback */
  uint64_t fsum = 0;             /* F's checksum, recorded in checkpoints */
  if (rc == OVL_OK && on0 && (opts->restart || opts->checkpoint_every > 0)) rc = ovl_dmat_checksum(F, &fsum);
  rc = ovl_err_agree(parent, rc);
  /* ---- D0 ---- */
  if (rc == OVL_OK && opts->restart) {
    if (on0) rc = ovl_i_ckpt_read(D, opts->checkpoint, opts, fsum, &it);
    rc = ovl_err_agree(parent, rc);
    MPI_Bcast(&it, 1, MPI_INT, 0, parent);
    prev_ckpt = it;
  } else if (rc == OVL_OK && on0) {
    double hmin = 0, hmax = 0, trF = 0;
    rc = gershgorin(F, &hmin, &hmax);
    if (rc == OVL_OK) rc = lanczos_bounds(F, &hmin, &hmax, sc.replay);
    if (rc == OVL_OK) rc = ovl_dmat_trace(F, &trF);
    double mu = n > 0 ? trF / N : 0.0;
    if (rc == OVL_OK && method == OVL_PURIFY_CANONICAL) {
      double l1 = hmax > mu ? Ne / (hmax - mu) : INFINITY, l2 = mu > hmin ? (N - Ne) / (mu - hmin) : INFINITY;
      double lambda = fmin(l1, l2);
      if (!isfinite(lambda)) lambda = 0.0; /* F = c I: D0 = (n_occ/n) I, already a fixed point of the trace */
      affine(D, F, -lambda / N, lambda * mu / N + Ne / N);
    } else if (rc == OVL_OK && method == OVL_PURIFY_MCWEENY) {
      mu = opts->mu;
      if (!(mu > hmin && mu < hmax))
        rc = ovl_err_set(OVL_ERR_ARG, "the chemical potential %g is outside the spectrum bounds [%g, %g]", mu, hmin,
                         hmax);
      double lambda = fmin(1.0 / (hmax - mu), 1.0 / (mu - hmin));
      affine(D, F, -0.5 * lambda, 0.5 + 0.5 * lambda * mu);
    } else if (rc == OVL_OK) { /* SP2, SP2-ACC, TRS4: the spectrum mapped onto [0, 1], reversed */
      double w = hmax - hmin > 0 ? hmax - hmin : 1.0;
      affine(D, F, -1.0 / w, hmax / w);
      sp2map[0] = hmax, sp2map[1] = w;
      if (method == OVL_PURIFY_SP2ACC) {
        ovl_i_acc a0 = ovl_i_acc_start(opts->homo, opts->lumo, hmin, hmax);
        est[0] = a0.xo, est[1] = a0.yo;
      }
    }
  }
  rc = ovl_err_agree(parent, rc);
  if (rc == OVL_OK && MPI_Bcast(est, 2, MPI_DOUBLE, 0, parent) != MPI_SUCCESS)
    rc = ovl_err_set(OVL_ERR_MPI, "purification: broadcast of the gap estimates failed");
  /* F (and so D0) or a checkpoint may be symmetric only to 1e-12 */
  if (rc == OVL_OK) rc = symmetrize_d(D, D2, on0, parent, &R.t_symm);
  /* ---- iterate ---- */
  pstep x;
  memset(&x, 0, sizeof x);
  x.D = D, x.D2 = D2, x.D3 = D3, x.T = T, x.sq = sq, x.prec = OVL_PREC_DOUBLE, x.on0 = on0, x.N = N, x.Ne = Ne;
  x.R = &R, x.acc = ovl_i_acc_resume(est[0], est[1]), x.sc = &sc, x.force = -1;
  if (sqm && opts->prec == OVL_PURIFY_PREC_MIXED && !opts->restart) x.prec = OVL_PREC_SINGLE;
  double v[V_N] = {0}, best = INFINITY, e_hist[3] = {INFINITY, INFINITY, INFINITY};
  int branch_hist[2] = {-1, -1}; /* SP2: the branches of the last two iterations (0: D^2, 1: 2D - D^2) */
  int converged = 0, stalled = 0, failed = 0;
  /* the errors of this run's last ERR_WINDOW iterations, for the message
   * of a run that reaches the iteration cap: still falling, or stuck */
  enum { ERR_WINDOW = 10 };
  double e_win[ERR_WINDOW] = {0}, e_back = NAN;
  const int it0 = it;
  /* a converged D is a projector: its trace is an integer, n_occ unless the
   * problem is not the one stated (n_occ, or a restart of another problem) */
  const double trace_tol = fmax(1e-6, sqrt(tol > 0 ? tol : 1e-12));
  if (rc == OVL_OK && opts->started) *opts->started = 1;
  while (rc == OVL_OK) {
    double ts = ovl_time();
    if (it > it0) sched_put(&sc, '|');
    if (sc.replay) x.prec = sc.it[it - it0][0] == 's' ? OVL_PREC_SINGLE : OVL_PREC_DOUBLE;
    if (sqm) {
      rc = square(&x, D, D2);
    } else {
      OVL_TRACE_BEGIN("purify.ssc");
      rc = ovl_ssc_run(ssc, D, D2, D3, &x.ks);
      OVL_TRACE_END("purify.ssc", 0);
      R.t_ssc += ovl_time() - ts;
      R.products++;
      R.flops += 4.0 * N * N * N;
      sched_put(&sc, 'd');
    }
    if (rc != OVL_OK) break;
    /* plane 0 measures: traces, the idempotency error, tr(D^3), tr(D^4) */
    if (on0) {
      double st[5] = {0, 0, 0, 0, 0};
      plane_stats(D, D2, sqm ? NULL : D3, st);
      v[V_TRD] = st[0], v[V_TRD2] = st[1], v[V_ERR] = sqrt(st[2]), v[V_TRD3] = st[3], v[V_TRD4] = st[4];
      v[V_TERR] = method == OVL_PURIFY_MCWEENY ? fabs(v[V_TRD] - round(v[V_TRD])) : fabs(v[V_TRD] - Ne);
    }
    if (MPI_Bcast(v, V_N, MPI_DOUBLE, 0, parent) != MPI_SUCCESS)
      ovl_fatal(parent, OVL_ERR_MPI, "purification: broadcast of the iteration state failed");
    /* every rank decides alike from the same numbers */
    const double err = v[V_ERR];
    it++;
    if (opts->verbose)
      ovl_log(OVL_LOG_INFO, "# iter %3d  ||D^2-D||_F %.3e  %s %.3e  (%s %.3f s%s)\n", it, err,
              method == OVL_PURIFY_MCWEENY ? "|tr D - round(tr D)|" : "|tr D - n_occ|", v[V_TERR],
              sqm ? "square" : "ssc", x.ks.t_total, x.prec == OVL_PREC_SINGLE ? ", float32" : "");
    if (sc.replay) { /* the schedule decides: the end, the step's products and precision, a fallback */
      const char *si = sc.it[it - it0 - 1];
      if (x.prec == OVL_PREC_SINGLE) R.iter_single = it;
      if (it - it0 >= sc.n) {
        converged = 1, R.stop_reason = "fixed schedule (OVL_SMPI_SCHEDULE; not computed)";
        break;
      }
      int k = 0;
      while (si[1 + k] == 's' || si[1 + k] == 'd') k++;
      if (k > 0) x.prec = si[1] == 's' ? OVL_PREC_SINGLE : OVL_PREC_DOUBLE;
      x.force = k;
      int branch = -1, end = 0;
      rc = k_steps[method](&x, v, &branch, &end);
      if (rc == OVL_OK && strchr(si, 'F')) {
        if (on0) affine(D, F, -1.0 / sp2map[1], sp2map[0] / sp2map[1]);
        rc = symmetrize_d(D, D2, on0, parent, &R.t_symm);
        ovl_i_acc_stop(&x.acc), R.fallback = it;
        sched_put(&sc, 'F');
      } else if (rc == OVL_OK && !sqm) {
        rc = symmetrize_d(D, D2, on0, parent, &R.t_symm);
      }
      if (rc == OVL_OK && opts->stop) { /* the stop request's reduction, as below */
        int stop = ovl_i_stop_requested(opts->stop, parent);
        if (stop) {
          R.stopped = stop, R.stop_reason = "signal";
          break;
        }
      }
      continue;
    }
    /* stopping */
    int floor_hit = 0;
    if (sqm || method == OVL_PURIFY_MCWEENY) {
      if (method == OVL_PURIFY_SP2 || method == OVL_PURIFY_SP2ACC)
        floor_hit = ovl_i_sp2_floor(err, e_hist, branch_hist, x.prec == OVL_PREC_SINGLE ? 1e-2 : 1e-6);
      else
        floor_hit = ovl_i_quadratic_bound_broken(err, e_hist[0], method == OVL_PURIFY_TRS4 ? 6.0 : 4.0,
                                                 x.prec == OVL_PREC_SINGLE ? 1e-2 : 1e-6);
    } else { /* canonical: three iterations without halving the error below sqrt(tol) */
      stalled = err < sqrt(tol) && err >= 0.5 * best ? stalled + 1 : 0;
      floor_hit = stalled >= 3;
    }
    /* an exactly idempotent iterate (a diagonal F, for example) is a fixed point of every map: no bound can
     * break any more */
    if (err == 0.0) floor_hit = 1;
    e_back = it - it0 > ERR_WINDOW ? e_win[(it - it0) % ERR_WINDOW] : NAN; /* ERR_WINDOW iterations ago */
    e_win[(it - it0) % ERR_WINDOW] = err;
    e_hist[2] = e_hist[1], e_hist[1] = e_hist[0], e_hist[0] = err;
    if (err < best) best = err;
    if (x.prec == OVL_PREC_SINGLE && (floor_hit || (tol > 0 && err <= tol))) {
      /* float32's floor: continue in float64 from this iterate (D itself is float64) */
      x.prec = OVL_PREC_DOUBLE;
      R.iter_single = it;
      e_hist[0] = e_hist[1] = e_hist[2] = INFINITY, branch_hist[0] = branch_hist[1] = -1, best = INFINITY;
      floor_hit = 0;
    } else if (tol > 0 && err <= tol) {
      converged = 1, R.stop_reason = "tolerance";
    } else if (floor_hit) {
      converged = 1, R.stop_reason = "rounding floor";
    }
    if (converged) break;
    if (it >= opts->max_iter) {
      failed = 1;
      R.stop_reason = "iteration cap";
      break;
    }
    /* the next iterate: the method's step */
    int branch = -1, end = 0;
    rc = k_steps[method](&x, v, &branch, &end);
    if (end == 1) converged = 1, R.stop_reason = "rounding floor";
    else if (end == 2) failed = 2, R.stop_reason = "breakdown";
    if (end == 3 && rc == OVL_OK) { /* SP2-ACC's estimates missed the gap: SP2 again from D0, the products counted */
      sched_put(&sc, 'F');
      if (on0) affine(D, F, -1.0 / sp2map[1], sp2map[0] / sp2map[1]);
      rc = symmetrize_d(D, D2, on0, parent, &R.t_symm);
      ovl_i_acc_stop(&x.acc), R.fallback = it;
      if (sqm && opts->prec == OVL_PURIFY_PREC_MIXED) x.prec = OVL_PREC_SINGLE;
      e_hist[0] = e_hist[1] = e_hist[2] = INFINITY, branch_hist[0] = branch_hist[1] = -1, best = INFINITY;
      if (opts->verbose) ovl_log(OVL_LOG_INFO, "# iter %3d  the HOMO/LUMO estimates missed the gap: SP2 from D0\n", it);
      if (rc != OVL_OK) break;
      continue;
    }
    if (end || rc != OVL_OK) break;
    branch_hist[1] = branch_hist[0], branch_hist[0] = branch;
    if (!sqm) { /* D^2 and D^3 are symmetric only to rounding: D (D^2 is free now) made exactly so */
      rc = symmetrize_d(D, D2, on0, parent, &R.t_symm);
      if (rc != OVL_OK) break;
    }
    if (opts->checkpoint_every > 0 && it % opts->checkpoint_every == 0) {
      if (on0) rc = ovl_i_ckpt_write(D, opts->checkpoint, it, opts, fsum);
      rc = ovl_err_agree(parent, rc);
      if (rc == OVL_OK) prev_ckpt = it;
    }
    if (rc == OVL_OK && opts->stop) { /* a stop request: every rank learns of it at the same iteration */
      int stop = ovl_i_stop_requested(opts->stop, parent);
      if (stop) {
        if (opts->checkpoint && prev_ckpt != it) {
          if (on0) rc = ovl_i_ckpt_write(D, opts->checkpoint, it, opts, fsum);
          rc = ovl_err_agree(parent, rc);
          if (rc == OVL_OK) prev_ckpt = it;
        }
        R.stopped = stop;
        R.stop_reason = "signal";
        break;
      }
    }
  }
  if (opts->started && *opts->started) *opts->started = 2; /* the iterations are over */
  R.checkpoint = prev_ckpt;
  R.iterations = it;
  R.idem_err = v[V_ERR];
  R.trace_err = v[V_TERR];
#ifdef OVL_SMPI
  const char *sout = getenv("OVL_SMPI_SCHEDULE_OUT");
  if (sout && *sout && prank == 0) {
    FILE *f = fopen(sout, "w");
    if (f) fprintf(f, "%s\n", sc.rec), fclose(f);
  }
#endif
  if (rc == OVL_OK && converged && method != OVL_PURIFY_MCWEENY && v[V_TERR] > trace_tol && !sc.replay)
    rc = ovl_err_set(OVL_ERR_NUMERIC,
                     "purification reached ||D^2 - D||_F = %.3e after %d iterations, but |tr D - n_occ| = %.3e is "
                     "above %.1e: D is a projector of another trace, not the density for n_occ = %" PRId64,
                     v[V_ERR], it, v[V_TERR], trace_tol, opts->nocc);
  else if (rc == OVL_OK && failed == 2)
    rc = ovl_err_set(OVL_ERR_NUMERIC,
                     "purification broke down after %d iterations (||D^2 - D||_F = %.3e): the canonical step left "
                     "its range, which happens when F is not what it should be (values, byte order) or n_occ "
                     "splits a degenerate level",
                     it, v[V_ERR]);
  else if (rc == OVL_OK && failed && (isnan(e_back) || v[V_ERR] < 0.9 * e_back)) /* falling, or too early to tell */
    rc = ovl_err_set(OVL_ERR_NUMERIC,
                     "purification did not converge: the iteration limit was reached (--max-iter %d) with "
                     "||D^2 - D||_F = %.3e%s; raise --max-iter",
                     opts->max_iter, v[V_ERR], isnan(e_back) ? "" : ", still falling");
  else if (rc == OVL_OK && failed)
    rc = ovl_err_set(OVL_ERR_NUMERIC,
                     "purification did not converge: the iteration limit was reached (--max-iter %d) with "
                     "||D^2 - D||_F = %.3e, which had not fallen by 10%% over the last %d iterations: the HOMO-LUMO "
                     "gap may be too small relative to the spectral width, or F is not what it should be (n_occ, "
                     "values, byte order); check the input, or raise --max-iter",
                     opts->max_iter, v[V_ERR], (int)ERR_WINDOW);
  rc = ovl_err_agree(parent, rc);
  if (rc == OVL_OK && converged) {
    double s[2] = {0, 0};
    if (on0) plane_sums(D, D, F, s);
    MPI_Bcast(s, 2, MPI_DOUBLE, 0, parent);
    R.energy = s[1];
  }
  ovl_ssc_destroy(&ssc);
  ovl_sq_destroy(&sq);
  ovl_dmat_destroy(&D2);
  ovl_dmat_destroy(&D3);
  ovl_dmat_destroy(&T);
  R.t_total = ovl_time() - t_start;
  R.ssc_gflops = R.t_ssc > 0 ? R.flops / R.t_ssc * 1e-9 : 0.0;
  if (res) *res = R;
  return rc;
}
