/* ovl_pdpurify: purification on the caller's block-cyclic matrices (see
 * ovl/pdpurify.h).
 *
 * Layouts. The caller's matrices are block-cyclic on the BLACS grid of
 * DESCF's context (nprow x npcol, process (r, c) = rank r*npcol + c of the
 * context's communicator). The kernel works on an s x s x c grid over the
 * same communicator; its plane 0 is ranks 0 .. s*s-1 (ovl_grid3d_create's
 * order), which is also the active part of an s x s ovl_grid2d over the
 * communicator (g0 below). The matrices live on g0 as ovl_dmat blocks; plane
 * 0 of the kernel grid wraps the same memory. One MPI_Alltoallv (exchange:
 * ovl_dmat_import / ovl_dmat_export) moves a matrix between a block-cyclic
 * array and a g0 block. */
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ovl/kernels.h"
#include "ovl/pdpurify.h"
#include "ovl/plan.h"

ovl_pdpurify_params ovl_pdpurify_params_default(void) {
  ovl_pdpurify_params p;
  memset(&p, 0, sizeof p);
  p.method = OVL_PURIFY_SP2ACC; /* SP2 step for step until homo and lumo are given */
  p.algo = OVL_ALGO_AUTO;       /* open: the planner's */
  p.ndup = OVL_AUTO;            /* open: the planner's */
  p.prec = OVL_PURIFY_PREC_DOUBLE;
  p.tol = 0.0;
  p.max_iter = 200;
  p.c = 0;
  p.verbose = 0;
  p.homo = p.lumo = NAN; /* sp2acc: no gap estimates */
  return p;
}

void ovl_errmsg_copy_f(char *buf, const int *len) {
  if (!buf || !len || *len <= 0) return;
  const char *m = ovl_errmsg();
  size_t n = strlen(m), cap = (size_t)*len;
  if (n > cap) n = cap;
  memcpy(buf, m, n);
  memset(buf + n, ' ', cap - n);
}

/* The constraints of params as a plan: what they leave open (0, OVL_AUTO,
 * OVL_ALGO_AUTO) is the planner's. LOCAL. */
static ovl_plan params_plan(const ovl_pdpurify_params *p, int64_t n) {
  ovl_plan c = ovl_plan_auto(OVL_FAMILY_SSC, n > 0 ? n : 1);
  c.algo = p->algo, c.ndup = p->ndup > 0 ? p->ndup : OVL_AUTO, c.c = p->c > 0 ? p->c : OVL_AUTO;
  return c;
}

/* The plan of constraints c for method m on P ranks (P <= 0: comm's),
 * resolved in the method's family. COLLECTIVE over comm. */
static ovl_err resolve_plan(MPI_Comm comm, int P, ovl_purify_method m, ovl_plan c, ovl_plan *plan, char *why,
                            size_t nwhy) {
  c.P = P > 0 ? P : 0;
  ovl_family f = ovl_purify_plan_family(m, &c);
  OVL_TRY(ovl_plan_resolve(comm, f, &c, NULL, why, nwhy));
  *plan = c;
  return OVL_OK;
}

ovl_err ovl_pdpurify_plan(MPI_Comm comm, int P, int64_t n, const ovl_pdpurify_params *params, ovl_plan *plan, char *why,
                          size_t nwhy) {
  OVL_TRY(ovl_check_ptr(plan, "ovl_pdpurify_plan", "plan"));
  ovl_pdpurify_params d = ovl_pdpurify_params_default();
  const ovl_pdpurify_params *p = params ? params : &d;
  return resolve_plan(comm, P, p->method, params_plan(p, n), plan, why, nwhy);
}

#ifndef OVL_HAVE_SCALAPACK

ovl_err ovl_pdpurify(const double *f, const int *descf, const double *s, const int *descs, int64_t nocc, double *d,
                     const int *descd, double *w, const int *descw, const ovl_pdpurify_params *params, double *mu,
                     double *energy, ovl_pdpurify_info *info) {
  (void)f, (void)descf, (void)s, (void)descs, (void)nocc, (void)d, (void)descd, (void)w, (void)descw, (void)params;
  (void)mu, (void)energy, (void)info;
  return ovl_err_set(OVL_ERR_UNSUPPORTED,
                     "ovl_pdpurify: this ovl was built without ScaLAPACK/BLACS, which it needs for the process grid "
                     "of a BLACS context and the overlap matrix (install libscalapack-openmpi-dev or "
                     "libscalapack-mpich-dev, to match the MPI library, and configure again)");
}

#else

/* BLACS and ScaLAPACK (no C header ships with them). */
void Cblacs_gridinfo(int ctxt, int *nprow, int *npcol, int *myrow, int *mycol);
void Cblacs_get(int ctxt, int what, int *val);
MPI_Comm Cblacs2sys_handle(int sysctxt);
void pdpotrf_(const char *uplo, const int *n, double *a, const int *ia, const int *ja, const int *desca, int *info);
void pdtrsm_(const char *side, const char *uplo, const char *transa, const char *diag, const int *m, const int *n,
             const double *alpha, const double *a, const int *ia, const int *ja, const int *desca, double *b,
             const int *ib, const int *jb, const int *descb);

enum { BLACS_GET_CONTEXT_COMM = 10 };
enum { D_DTYPE = 0, D_CTXT, D_M, D_N, D_MB, D_NB, D_RSRC, D_CSRC, D_LLD };

typedef struct bgrid {
  int ctxt, nprow, npcol, myrow, mycol;
  MPI_Comm comm;
} bgrid;

/* One block-cyclic n x n array on this process. */
typedef struct bcarr {
  int64_t n, mb, nb, lld;
  int rsrc, csrc;
  double *a;
} bcarr;

static int64_t numroc(int64_t n, int64_t nb, int iproc, int isrc, int np) {
  ovl_axis a = {np, nb, isrc, NULL};
  return ovl_axis_len(&a, n, iproc);
}

static bcarr bc_of(const int *desc, const double *a) {
  bcarr b = {desc[D_M], desc[D_MB], desc[D_NB], desc[D_LLD], desc[D_RSRC], desc[D_CSRC], (double *)a};
  return b;
}

/* Local checks of one descriptor (name "DESCF" ...). */
static ovl_err check_desc(const int *desc, const char *name, const bgrid *G, int64_t n) {
  OVL_CHECK(desc[D_DTYPE] == 1, OVL_ERR_ARG, "ovl_pdpurify: %s: DTYPE_ must be 1 (a dense matrix), got %d", name,
            desc[D_DTYPE]);
  OVL_CHECK(desc[D_CTXT] == G->ctxt, OVL_ERR_ARG,
            "ovl_pdpurify: %s: context %d differs from DESCF's context %d (all matrices must share one)", name,
            desc[D_CTXT], G->ctxt);
  OVL_CHECK(desc[D_M] == n && desc[D_N] == n, OVL_ERR_ARG,
            "ovl_pdpurify: %s: the matrix must be %" PRId64 " x %" PRId64 " (DESCF's M_), got %d x %d", name, n, n,
            desc[D_M], desc[D_N]);
  OVL_CHECK(desc[D_MB] >= 1 && desc[D_NB] >= 1, OVL_ERR_ARG,
            "ovl_pdpurify: %s: MB_ and NB_ must be >= 1, got %d and %d", name, desc[D_MB], desc[D_NB]);
  if (desc[D_RSRC] == -1 || desc[D_CSRC] == -1)
    return ovl_err_set(OVL_ERR_UNSUPPORTED,
                       "ovl_pdpurify: %s: replicated operands (RSRC_ or CSRC_ = -1) are not "
                       "supported",
                       name);
  OVL_CHECK(desc[D_RSRC] >= 0 && desc[D_RSRC] < G->nprow && desc[D_CSRC] >= 0 && desc[D_CSRC] < G->npcol, OVL_ERR_ARG,
            "ovl_pdpurify: %s: RSRC_ = %d, CSRC_ = %d lie outside the %d x %d grid", name, desc[D_RSRC], desc[D_CSRC],
            G->nprow, G->npcol);
  int64_t mloc = numroc(n, desc[D_MB], G->myrow, desc[D_RSRC], G->nprow);
  int64_t nloc = numroc(n, desc[D_NB], G->mycol, desc[D_CSRC], G->npcol);
  int64_t need = nloc > 0 && mloc > 1 ? mloc : 1;
  OVL_CHECK(desc[D_LLD] >= need, OVL_ERR_ARG,
            "ovl_pdpurify: %s: LLD_ = %d is less than %" PRId64 " (the local rows of process (%d, %d))", name,
            desc[D_LLD], need, G->myrow, G->mycol);
  return OVL_OK;
}

/* dir 0: X := the block-cyclic array b; dir 1: b := X (ovl_dmat_import and
 * ovl_dmat_export with the descriptor's axes). X is n x n on a grid over
 * G->comm. COLLECTIVE over G->comm. Errors (agreed): OVL_ERR_SIZE,
 * OVL_ERR_NOMEM. */
static ovl_err exchange(const bcarr *b, ovl_dmat X, int dir, const bgrid *G) {
  ovl_axis r = {G->nprow, b->mb, b->rsrc, NULL}, c = {G->npcol, b->nb, b->csrc, NULL};
  return dir == 0 ? ovl_dmat_import(X, &r, &c, b->a, b->lld) : ovl_dmat_export(X, &r, &c, b->a, b->lld);
}

/* ---- HOMO and LUMO by Lanczos ------------------------------------------- */

/* Eigenvalues of the k x k symmetric tridiagonal (a, b) below x (Sturm). */
static int sturm_below(const double *a, const double *b, int k, double x) {
  int cnt = 0;
  double q = 1.0;
  for (int i = 0; i < k; i++) {
    q = a[i] - x - (i ? b[i - 1] * b[i - 1] / q : 0.0);
    if (q == 0.0) q = -DBL_MIN;
    if (q < 0) cnt++;
  }
  return cnt;
}

static double tri_max_eig(const double *a, const double *b, int k) {
  double lo = a[0], hi = a[0];
  for (int i = 0; i < k; i++) {
    double r = (i ? fabs(b[i - 1]) : 0.0) + (i + 1 < k ? fabs(b[i]) : 0.0);
    lo = fmin(lo, a[i] - r), hi = fmax(hi, a[i] + r);
  }
  for (int it = 0; it < 200 && hi - lo > 1e-15 * fmax(fabs(lo), fabs(hi)) + DBL_MIN; it++) {
    double mid = 0.5 * (lo + hi);
    if (mid <= lo || mid >= hi) break;
    if (sturm_below(a, b, k, mid) == k) hi = mid;
    else lo = mid;
  }
  return 0.5 * (lo + hi);
}

typedef struct lop {
  ovl_dmat F, D;
  double shift; /* occ: y = D (F - shift) D x; vir: y = (I-D)(shift - F)(I-D) x */
  int vir;
  double *t, *u; /* n each */
} lop;

static ovl_err lop_apply(lop *o, int64_t n, const double *x, double *y) {
  OVL_TRY(ovl_dmat_matvec(o->D, x, o->t));
  if (o->vir)
    for (int64_t i = 0; i < n; i++) o->t[i] = x[i] - o->t[i];
  OVL_TRY(ovl_dmat_matvec(o->F, o->t, o->u));
  for (int64_t i = 0; i < n; i++) o->u[i] = o->vir ? o->shift * o->t[i] - o->u[i] : o->u[i] - o->shift * o->t[i];
  OVL_TRY(ovl_dmat_matvec(o->D, o->u, y));
  if (o->vir)
    for (int64_t i = 0; i < n; i++) y[i] = o->u[i] - y[i];
  return OVL_OK;
}

/* The largest eigenvalue of the operator (>= 0); 0 when its range is empty. */
static ovl_err lanczos_max(lop *o, int64_t n, double width, MPI_Comm comm, double *out) {
  int m = n < 300 ? (int)n : 300;
  double *V = NULL, *a = NULL, *bb = NULL, *wv = NULL;
  ovl_err rc = ovl_malloc(sizeof(double) * (size_t)n * (size_t)(m + 1), &V);
  if (rc == OVL_OK) rc = ovl_malloc(sizeof(double) * (size_t)(2 * m + 2), &a);
  if (rc == OVL_OK) rc = ovl_malloc(sizeof(double) * (size_t)n, &wv);
  rc = ovl_err_agree(comm, rc);
  if (rc != OVL_OK) goto done;
  bb = a + m + 1;
  /* start: the operator applied to a fixed vector (it lies in the range) */
  for (int64_t i = 0; i < n; i++) wv[i] = 1.0 + 0.5 * sin(0.7 * (double)i + 0.3);
  rc = lop_apply(o, n, wv, V);
  if (rc != OVL_OK) goto done;
  double nrm = 0, theta = 0, prev = -1;
  for (int64_t i = 0; i < n; i++) nrm += V[i] * V[i];
  nrm = sqrt(nrm);
  *out = 0;
  if (nrm <= 1e-10 * (width > 0 ? width : 1.0)) goto done; /* empty range */
  for (int64_t i = 0; i < n; i++) V[i] /= nrm;
  int stable = 0;
  for (int k = 0; k < m; k++) {
    double *v = V + (size_t)k * (size_t)n, *vn = V + (size_t)(k + 1) * (size_t)n;
    rc = lop_apply(o, n, v, wv);
    if (rc != OVL_OK) goto done;
    double al = 0;
    for (int64_t i = 0; i < n; i++) al += v[i] * wv[i];
    a[k] = al;
    /* full reorthogonalisation, twice */
    for (int pass = 0; pass < 2; pass++)
      for (int j = 0; j <= k; j++) {
        const double *vj = V + (size_t)j * (size_t)n;
        double h = 0;
        for (int64_t i = 0; i < n; i++) h += vj[i] * wv[i];
        for (int64_t i = 0; i < n; i++) wv[i] -= h * vj[i];
      }
    double be = 0;
    for (int64_t i = 0; i < n; i++) be += wv[i] * wv[i];
    be = sqrt(be);
    theta = tri_max_eig(a, bb, k + 1);
    if (fabs(theta - prev) <= 1e-13 * width) stable++;
    else stable = 0;
    prev = theta;
    if (stable >= 3 || be <= 1e-12 * width || k + 1 == m) break;
    bb[k] = be;
    for (int64_t i = 0; i < n; i++) vn[i] = wv[i] / be;
  }
  *out = theta;
done:
  ovl_free(&V);
  ovl_free(&a);
  ovl_free(&wv);
  return rc;
}

/* Gershgorin bounds of the symmetric F (COLLECTIVE over its parent). */
static ovl_err gershgorin(ovl_dmat F, MPI_Comm comm, double *lo, double *hi) {
  int64_t n = ovl_dmat_rows(F);
  double *v = NULL;
  OVL_TRY(ovl_err_agree(comm, ovl_calloc(sizeof(double) * (size_t)(2 * n), &v)));
  if (ovl_grid2d_active(ovl_dmat_grid(F))) {
    const double *a = ovl_dmat_data(F);
    int64_t ld = ovl_dmat_ld(F), ro = ovl_dmat_row_off(F), co = ovl_dmat_col_off(F);
    for (int64_t c = 0; c < ovl_dmat_local_cols(F); c++)
      for (int64_t r = 0; r < ovl_dmat_local_rows(F); r++) {
        double x = a[r + c * ld];
        if (ro + r == co + c) v[n + ro + r] = x;
        else v[ro + r] += fabs(x);
      }
  }
  int mrc = MPI_Allreduce(MPI_IN_PLACE, v, (int)(2 * n), MPI_DOUBLE, MPI_SUM, comm);
  if (mrc != MPI_SUCCESS) {
    ovl_free(&v);
    return ovl_err_mpi(mrc, "MPI_Allreduce");
  }
  *lo = n ? v[n] - v[0] : 0, *hi = n ? v[n] + v[0] : 0;
  for (int64_t i = 0; i < n; i++) *lo = fmin(*lo, v[n + i] - v[i]), *hi = fmax(*hi, v[n + i] + v[i]);
  ovl_free(&v);
  return OVL_OK;
}

static ovl_err homo_lumo(ovl_dmat F, ovl_dmat D, MPI_Comm comm, double *homo, double *lumo) {
  int64_t n = ovl_dmat_rows(F);
  double lo = 0, hi = 0;
  OVL_TRY(gershgorin(F, comm, &lo, &hi));
  double width = hi - lo > 0 ? hi - lo : 1.0;
  lop o = {F, D, lo, 0, NULL, NULL};
  OVL_TRY(ovl_err_agree(comm, ovl_malloc(sizeof(double) * (size_t)(2 * n), &o.t)));
  o.u = o.t + n;
  double x = 0;
  ovl_err rc = lanczos_max(&o, n, width, comm, &x);
  *homo = lo + x;
  if (rc == OVL_OK) {
    o.vir = 1, o.shift = hi;
    rc = lanczos_max(&o, n, width, comm, &x);
    *lumo = hi - x;
  }
  ovl_free(&o.t);
  return rc;
}

/* ---- the entry ------------------------------------------------------------ */

static ovl_err check_params(const ovl_pdpurify_params *p, int P) {
  (void)P;
  OVL_CHECK(p->method == OVL_PURIFY_SP2 || p->method == OVL_PURIFY_TRS4 || p->method == OVL_PURIFY_CANONICAL ||
                p->method == OVL_PURIFY_SP2ACC,
            OVL_ERR_ARG,
            "ovl_pdpurify: method must be sp2, sp2acc, trs4 or canonical (mcweeny needs mu, not n_occ), got %d",
            (int)p->method);
  OVL_CHECK((isnan(p->homo) && isnan(p->lumo)) || (isfinite(p->homo) && isfinite(p->lumo) && p->homo < p->lumo),
            OVL_ERR_ARG, "ovl_pdpurify: homo and lumo must be both NAN or both finite with homo < lumo, got %g and %g",
            p->homo, p->lumo);
  OVL_CHECK(p->algo == OVL_ALGO_AUTO || (p->algo >= OVL_ALGO_SSC3 && p->algo <= OVL_ALGO_SSC6), OVL_ERR_ARG,
            "ovl_pdpurify: algo must be OVL_ALGO_AUTO or a SymmSquareCube algorithm (alg3 .. alg6), got %d",
            (int)p->algo);
  OVL_CHECK(p->ndup >= OVL_AUTO && p->ndup <= OVL_LANES_MAX, OVL_ERR_ARG,
            "ovl_pdpurify: ndup must be OVL_AUTO (the planner's) or in [1, %d], got %d", OVL_LANES_MAX, p->ndup);
  OVL_CHECK(p->prec == OVL_PURIFY_PREC_DOUBLE || p->prec == OVL_PURIFY_PREC_MIXED, OVL_ERR_ARG,
            "ovl_pdpurify: prec must be double (0) or mixed (1), got %d", (int)p->prec);
  OVL_CHECK(p->tol == 0.0 || (p->tol >= OVL_PURIFY_TOL_MIN && p->tol <= OVL_PURIFY_TOL_MAX), OVL_ERR_ARG,
            "ovl_pdpurify: tol must be 0 or in [%g, %g], got %g", OVL_PURIFY_TOL_MIN, OVL_PURIFY_TOL_MAX, p->tol);
  OVL_CHECK(p->max_iter >= 1, OVL_ERR_ARG, "ovl_pdpurify: max_iter must be >= 1, got %d", p->max_iter);
  OVL_CHECK(p->c >= 0, OVL_ERR_ARG, "ovl_pdpurify: c must be >= 0 (0: automatic), got %d", p->c);
  return OVL_OK;
}

typedef struct mats {
  ovl_grid3d g3;
  ovl_grid2d g0;
  ovl_dmat F0, D0, Fo, T0, W0, Fp, Dp;
  double *sw, *fw; /* the square-block copies of S and F (overlap path) */
} mats;

static void mats_free(mats *m) {
  ovl_dmat *all[] = {&m->F0, &m->D0, &m->Fo, &m->T0, &m->W0, &m->Fp, &m->Dp};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) ovl_dmat_destroy(all[i]);
  ovl_free(&m->sw);
  ovl_free(&m->fw);
  ovl_grid2d_destroy(&m->g0);
  ovl_grid3d_destroy(&m->g3);
}

static ovl_err run(const bgrid *G, const double *f, const int *descf, const double *s, const int *descs, int64_t nocc,
                   double *d, const int *descd, double *w, const int *descw, const ovl_pdpurify_params *prm,
                   const ovl_plan *want, int print_plan, double out[8], ovl_pdpurify_info *info) {
  MPI_Comm comm = G->comm;
  int P = G->nprow * G->npcol;
  int64_t n = descf[D_M];
  ovl_plan plan;
  char why[OVL_PLAN_WHY] = "";
  OVL_TRY(resolve_plan(comm, P, prm->method, *want, &plan, why, sizeof why));
  int ks = plan.s, kc = plan.c;
  if ((int64_t)ks * ks * kc > P) /* the same verdict everywhere: the plan is */
    return ovl_err_set(OVL_ERR_GRID, "ovl_pdpurify: the %d x %d x %d kernel grid (c = %d) does not fit in %d ranks", ks,
                       ks, kc, prm->c, P);
  info->s = ks, info->c = kc;
  ovl_plan_describe(&plan, info->plan, sizeof info->plan);
  if (print_plan && G->myrow == 0 && G->mycol == 0)
    fprintf(stderr, "ovl_pdpurify: plan: %s (n=%" PRId64 ", method %s; %s)\n", info->plan, n,
            ovl_purify_method_name(prm->method), why);
  mats m;
  memset(&m, 0, sizeof m);
  ovl_err rc = ovl_grid3d_create(comm, ks, kc, OVL_GRID_ALLOW_IDLE, &m.g3);
  if (rc != OVL_OK) return rc;
  rc = ovl_grid2d_create(comm, ks, ks, OVL_GRID_ALLOW_IDLE, &m.g0);
  if (rc == OVL_OK) rc = ovl_dmat_create(m.g0, n, n, &m.F0);
  if (rc == OVL_OK) rc = ovl_dmat_create(m.g0, n, n, &m.D0);
  if (rc != OVL_OK) {
    mats_free(&m);
    return rc;
  }
  double t0 = ovl_time();
  bcarr bf = bc_of(descf, f);
  rc = exchange(&bf, m.F0, 0, G);
  info->t_redist += ovl_time() - t0;

  /* overlap: F0 := U^-T F U^-1 on a square-block copy */
  int nb = descf[D_MB] > descf[D_NB] ? descf[D_MB] : descf[D_NB];
  int64_t wm = numroc(n, nb, G->myrow, 0, G->nprow), wn = numroc(n, nb, G->mycol, 0, G->npcol);
  int wlld = wm > 1 ? (int)wm : 1, ni = (int)n, one = 1;
  int descw_[9] = {1, G->ctxt, (int)n, (int)n, nb, nb, 0, 0, wlld};
  bcarr bw = bc_of(descw_, NULL);
  if (s && rc == OVL_OK) {
    double t1 = ovl_time();
    size_t len = (size_t)wlld * (size_t)(wn > 0 ? wn : 1);
    rc = ovl_malloc(sizeof(double) * len, &m.sw);
    if (rc == OVL_OK) rc = ovl_malloc(sizeof(double) * len, &m.fw);
    if (rc == OVL_OK && w) rc = ovl_dmat_create(m.g0, n, n, &m.Fo);
    rc = ovl_err_agree(comm, rc);
    if (rc == OVL_OK && w) rc = ovl_dmat_copy(m.Fo, m.F0); /* F in the caller's basis, for W */
    /* S to the square-block layout through g0 (D0 is free until the purification) */
    bcarr bs = bc_of(descs, s);
    if (rc == OVL_OK) rc = exchange(&bs, m.D0, 0, G);
    if (rc == OVL_OK) rc = ovl_dmat_check_finite(m.D0);
    if (rc == OVL_OK) rc = ovl_dmat_check_symmetric(m.D0, 1e-12);
    bw.a = m.sw;
    if (rc == OVL_OK) rc = exchange(&bw, m.D0, 1, G);
    bw.a = m.fw;
    if (rc == OVL_OK) rc = exchange(&bw, m.F0, 1, G);
    if (rc == OVL_OK) {
      int inf = 0;
      pdpotrf_("U", &ni, m.sw, &one, &one, descw_, &inf);
      MPI_Allreduce(MPI_IN_PLACE, &inf, 1, MPI_INT, MPI_MAX, comm);
      if (inf > 0)
        rc = ovl_err_set(OVL_ERR_NUMERIC,
                         "ovl_pdpurify: S is not positive definite (PDPOTRF: the leading minor of order %d is not)",
                         inf);
      else if (inf < 0) rc = ovl_err_set(OVL_ERR_INTERNAL, "ovl_pdpurify: PDPOTRF rejected argument %d", -inf);
    }
    if (rc == OVL_OK) {
      double alpha = 1.0;
      pdtrsm_("L", "U", "T", "N", &ni, &ni, &alpha, m.sw, &one, &one, descw_, m.fw, &one, &one, descw_);
      pdtrsm_("R", "U", "N", "N", &ni, &ni, &alpha, m.sw, &one, &one, descw_, m.fw, &one, &one, descw_);
      rc = exchange(&bw, m.F0, 0, G);
    }
    if (rc == OVL_OK) rc = ovl_dmat_symmetrize(m.F0, m.D0); /* D0 is free until the purification */
    info->t_overlap += ovl_time() - t1;
  }
  if (rc != OVL_OK) {
    mats_free(&m);
    return rc;
  }

  /* purification on plane 0 of the kernel grid, over F0's and D0's memory */
  int gi = -1, gj = -1, gk = -1;
  ovl_grid3d_coords(m.g3, &gi, &gj, &gk);
  ovl_grid2d pl = ovl_grid3d_plane(m.g3);
  if (ovl_grid3d_active(m.g3) && gk == 0) {
    rc = ovl_dmat_wrap(pl, n, n, ovl_dmat_data(m.F0), &m.Fp);
    if (rc == OVL_OK) rc = ovl_dmat_wrap(pl, n, n, ovl_dmat_data(m.D0), &m.Dp);
  } else {
    rc = ovl_dmat_create(pl, n, n, &m.Fp);
    if (rc == OVL_OK) rc = ovl_dmat_create(pl, n, n, &m.Dp);
  }
  rc = ovl_err_agree(comm, rc);
  ovl_purify_opts po = ovl_purify_opts_default();
  po.method = prm->method;
  po.nocc = nocc;
  po.max_iter = prm->max_iter;
  po.tol = prm->tol;
  po.prec = prm->prec;
  po.plan = plan;
  po.verbose = prm->verbose;
  if (prm->method == OVL_PURIFY_SP2ACC) po.homo = prm->homo, po.lumo = prm->lumo;
  ovl_purify_result res;
  memset(&res, 0, sizeof res);
  double t2 = ovl_time();
  if (rc == OVL_OK) rc = ovl_purify(m.g3, m.Fp, m.Dp, &po, &res);
  info->t_purify = ovl_time() - t2;
  if (rc != OVL_OK) {
    mats_free(&m);
    return rc;
  }
  double homo = 0, lumo = 0, t3 = ovl_time();
  rc = homo_lumo(m.F0, m.D0, comm, &homo, &lumo);
  info->t_mu = ovl_time() - t3;

  /* back to the caller's basis: D := U^-1 D' U^-T */
  if (s && rc == OVL_OK) {
    double t4 = ovl_time(), alpha = 1.0;
    bw.a = m.fw;
    rc = exchange(&bw, m.D0, 1, G);
    if (rc == OVL_OK) {
      pdtrsm_("L", "U", "N", "N", &ni, &ni, &alpha, m.sw, &one, &one, descw_, m.fw, &one, &one, descw_);
      pdtrsm_("R", "U", "T", "N", &ni, &ni, &alpha, m.sw, &one, &one, descw_, m.fw, &one, &one, descw_);
      rc = exchange(&bw, m.D0, 0, G);
    }
    if (rc == OVL_OK) rc = ovl_dmat_symmetrize(m.D0, m.F0); /* F0 (F') is no longer needed */
    info->t_overlap += ovl_time() - t4;
  }
  double t5 = ovl_time();
  bcarr bd = bc_of(descd, d);
  if (rc == OVL_OK) rc = exchange(&bd, m.D0, 1, G);
  info->t_redist += ovl_time() - t5;
  if (rc == OVL_OK && w) {         /* W = D (F D) */
    ovl_dmat Fc = s ? m.Fo : m.F0; /* with S, F0 holds F' and D0 the caller's D */
    rc = ovl_dmat_create(m.g0, n, n, &m.T0);
    if (rc == OVL_OK) rc = ovl_dmat_create(m.g0, n, n, &m.W0);
    rc = ovl_err_agree(comm, rc);
    /* W = D F D: two SUMMA products on the kernel's plane, with the multiplication family's defaults */
    const int64_t wb = ovl_knob_default(OVL_KNOB_BLOCK, OVL_FAMILY_GEMM);
    ovl_plan wplan = ovl_plan_gemm(OVL_ALGO_SUMMA, n < wb ? (n > 0 ? n : 1) : wb);
    wplan.ndup = ovl_knob_default_int(OVL_KNOB_NDUP, OVL_FAMILY_GEMM);
    if (rc == OVL_OK && n > 0) rc = ovl_summa(1.0, Fc, m.D0, 0.0, m.T0, &wplan, NULL);
    if (rc == OVL_OK && n > 0) rc = ovl_summa(1.0, m.D0, m.T0, 0.0, m.W0, &wplan, NULL);
    if (rc == OVL_OK) rc = ovl_dmat_symmetrize(m.W0, m.T0);
    double t6 = ovl_time();
    bcarr bww = bc_of(descw, w);
    if (rc == OVL_OK) rc = exchange(&bww, m.W0, 1, G);
    info->t_redist += ovl_time() - t6;
  }
  mats_free(&m);
  if (rc != OVL_OK) return rc;
  out[0] = 0.5 * (homo + lumo), out[1] = res.energy, out[2] = homo, out[3] = lumo;
  out[4] = res.idem_err, out[5] = res.trace_err, out[6] = res.iterations;
  info->stop_reason = res.stop_reason;
  return OVL_OK;
}

/* $OVL_OPTIONS and params->options over the parameters (ovl_options_runtime):
 * the plan's knobs (want: the constraints of params, then every knob the
 * options give), --method, --precision, --nocc, --tol, --max-iter, and
 * --print-plan. COLLECTIVE over comm; errors agreed. */
static ovl_err runtime_options(MPI_Comm comm, int64_t n, int64_t *nocc, ovl_pdpurify_params *p, ovl_plan *want,
                               int *print_plan) {
  *want = params_plan(p, n);
  ovl_purify_opts po = ovl_purify_opts_default();
  po.method = p->method, po.prec = p->prec, po.tol = p->tol, po.max_iter = p->max_iter, po.nocc = *nocc;
  if (p->method == OVL_PURIFY_SP2ACC) po.homo = p->homo, po.lumo = p->lumo; /* the other methods refuse them */
  OVL_TRY(ovl_options_runtime_print(comm, p->options, OVL_FAMILY_SSC, want, &po, print_plan));
  if (po.method == OVL_PURIFY_SP2ACC) p->homo = po.homo, p->lumo = po.lumo;
  p->algo = want->algo, p->ndup = want->ndup > 0 ? want->ndup : OVL_AUTO, p->c = want->c > 0 ? want->c : 0;
  p->method = po.method, p->prec = po.prec, p->tol = po.tol, p->max_iter = po.max_iter, *nocc = po.nocc;
  return OVL_OK;
}

ovl_err ovl_pdpurify(const double *f, const int *descf, const double *s, const int *descs, int64_t nocc, double *d,
                     const int *descd, double *w, const int *descw, const ovl_pdpurify_params *params, double *mu,
                     double *energy, ovl_pdpurify_info *info) {
  double t0 = ovl_time();
  ovl_pdpurify_info inf;
  memset(&inf, 0, sizeof inf);
  inf.stop_reason = "";
  OVL_CHECK(f && descf && d && descd, OVL_ERR_ARG, "ovl_pdpurify: f, descf, d and descd must not be NULL");
  bgrid G = {descf[D_CTXT], -1, -1, -1, -1, MPI_COMM_NULL};
  Cblacs_gridinfo(G.ctxt, &G.nprow, &G.npcol, &G.myrow, &G.mycol);
  OVL_CHECK(G.nprow >= 1 && G.npcol >= 1 && G.myrow >= 0 && G.mycol >= 0, OVL_ERR_ARG,
            "ovl_pdpurify: this process is not in the BLACS grid of DESCF's context %d (an invalid context, or a "
            "process outside the grid: call ovl_pdpurify on the grid's processes only)",
            G.ctxt);
  int h = -1, size = 0, rank = -1;
  Cblacs_get(G.ctxt, BLACS_GET_CONTEXT_COMM, &h);
  G.comm = Cblacs2sys_handle(h);
  OVL_MPI(MPI_Comm_size(G.comm, &size));
  OVL_MPI(MPI_Comm_rank(G.comm, &rank));
  ovl_err rc = OVL_OK;
  if (size != G.nprow * G.npcol || rank != G.myrow * G.npcol + G.mycol)
    rc = ovl_err_set(OVL_ERR_UNSUPPORTED,
                     "ovl_pdpurify: BLACS context %d is a %d x %d grid, but its communicator has %d ranks and "
                     "process (%d, %d) is rank %d there, not %d (ovl needs the row-major order of the reference BLACS)",
                     G.ctxt, G.nprow, G.npcol, size, G.myrow, G.mycol, rank, G.myrow * G.npcol + G.mycol);
  OVL_TRY(ovl_err_agree(G.comm, rc));
  ovl_pdpurify_params prm = params ? *params : ovl_pdpurify_params_default();
  int64_t n = descf[D_M];
  if ((s == NULL) != (descs == NULL))
    rc = ovl_err_set(OVL_ERR_ARG, "ovl_pdpurify: s and descs must both be given or both be NULL");
  else if ((w == NULL) != (descw == NULL))
    rc = ovl_err_set(OVL_ERR_ARG, "ovl_pdpurify: w and descw must both be given or both be NULL");
  if (rc == OVL_OK && n < 0) rc = ovl_err_set(OVL_ERR_ARG, "ovl_pdpurify: DESCF: M_ = %" PRId64 " is negative", n);
  if (rc == OVL_OK) rc = check_desc(descf, "DESCF", &G, n);
  if (rc == OVL_OK && descs) rc = check_desc(descs, "DESCS", &G, n);
  if (rc == OVL_OK) rc = check_desc(descd, "DESCD", &G, n);
  if (rc == OVL_OK && descw) rc = check_desc(descw, "DESCW", &G, n);
  if (rc == OVL_OK) rc = check_params(&prm, G.nprow * G.npcol);
  OVL_TRY(ovl_err_agree(G.comm, rc));
  ovl_plan want;
  int print_plan = 0;
  OVL_TRY(runtime_options(G.comm, n, &nocc, &prm, &want, &print_plan));
  if (nocc < 0 || nocc > n)
    rc = ovl_err_set(OVL_ERR_ARG, "ovl_pdpurify: nocc must lie in [0, %" PRId64 "], got %" PRId64, n, nocc);
  if (rc == OVL_OK) rc = check_params(&prm, G.nprow * G.npcol);
  OVL_TRY(ovl_err_agree(G.comm, rc));
  double out[8] = {0};
  if (n > 0) rc = run(&G, f, descf, s, descs, nocc, d, descd, w, descw, &prm, &want, print_plan, out, &inf);
  if (rc != OVL_OK) return rc;
  /* one view of the scalars: rank 0's */
  OVL_MPI(MPI_Bcast(out, 8, MPI_DOUBLE, 0, G.comm));
  inf.homo = out[2], inf.lumo = out[3], inf.idem_err = out[4], inf.trace_err = out[5], inf.iterations = (int)out[6];
  inf.t_total = ovl_time() - t0;
  if (mu) *mu = out[0];
  if (energy) *energy = out[1];
  if (info) *info = inf;
  return OVL_OK;
}

#endif
