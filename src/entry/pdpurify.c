/* ovl_pdpurify and the SCF handle ovl_dm: purification on the caller's
 * block-cyclic matrices (see ovl/pdpurify.h, ovl/dm.h).
 *
 * Steps. The handle (struct ovl_dm_s) holds the BLACS grid, the kernel grids
 * of the last plan (dm_prepare), the Cholesky factor of S (dm_factor) and
 * the options set; dm_run is one solve. ovl_dm_solve runs them with the
 * handle's state; ovl_pdpurify makes a handle for one call (dm_alloc,
 * dm_prepare, dm_factor, dm_run, dm_free) after its own checks, so both
 * forms share one path and ovl_pdpurify's behaviour is the handle's.
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
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ovl/bsmat.h"
#include "ovl/dm.h"
#include "ovl/entry.h"
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
  p.sparse = NAN;        /* dense */
  p.sparse_block = ovl_purify_opts_default().sparse_block;
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

static ovl_err no_scalapack(const char *who) {
  return ovl_err_set(OVL_ERR_UNSUPPORTED, "%s: this ovl was built without ScaLAPACK/BLACS (see ovl_pdpurify)", who);
}
ovl_err ovl_dm_create(int ctxt, int n, double n_electrons, int nspin, ovl_dm *h) {
  (void)ctxt, (void)n, (void)n_electrons, (void)nspin;
  OVL_CHECK(h != NULL, OVL_ERR_ARG, "ovl_dm_create: h must not be NULL");
  *h = NULL;
  return no_scalapack("ovl_dm_create");
}
ovl_err ovl_dm_set(ovl_dm h, const char *name, const char *value) {
  (void)name, (void)value;
  OVL_CHECK(h != NULL, OVL_ERR_ARG, "ovl_dm_set: h must not be NULL");
  return no_scalapack("ovl_dm_set");
}
ovl_err ovl_dm_get(ovl_dm h, const char *name, char *buf, size_t len) {
  (void)name, (void)buf, (void)len;
  OVL_CHECK(h != NULL, OVL_ERR_ARG, "ovl_dm_get: h must not be NULL");
  return no_scalapack("ovl_dm_get");
}
ovl_err ovl_dm_set_overlap(ovl_dm h, const double *s, const int descs[9]) {
  (void)s, (void)descs;
  OVL_CHECK(h != NULL, OVL_ERR_ARG, "ovl_dm_set_overlap: h must not be NULL");
  return no_scalapack("ovl_dm_set_overlap");
}
ovl_err ovl_dm_solve(ovl_dm h, int ispin, const double *f, const int descf[9], double *d, const int descd[9], double *w,
                     const int descw[9]) {
  (void)ispin, (void)f, (void)descf, (void)d, (void)descd, (void)w, (void)descw;
  OVL_CHECK(h != NULL, OVL_ERR_ARG, "ovl_dm_solve: h must not be NULL");
  return no_scalapack("ovl_dm_solve");
}
ovl_err ovl_dm_get_results(ovl_dm h, int ispin, ovl_dm_results *r) {
  (void)ispin, (void)r;
  OVL_CHECK(h != NULL, OVL_ERR_ARG, "ovl_dm_get_results: h must not be NULL");
  return no_scalapack("ovl_dm_get_results");
}
ovl_err ovl_dm_destroy(ovl_dm *h) {
  OVL_CHECK(h != NULL, OVL_ERR_ARG, "ovl_dm_destroy: h must not be NULL");
  *h = NULL;
  return OVL_OK;
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
  const char *who;            /* the entry, in messages: "ovl_pdpurify", "ovl_dm_solve" */
  const char *ctxt_of, *n_of; /* whose context and n: "DESCF's", "DESCF's M_"; "the handle's" */
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
  const char *who = G->who;
  OVL_CHECK(desc[D_DTYPE] == 1, OVL_ERR_ARG, "%s: %s: DTYPE_ must be 1 (a dense matrix), got %d", who, name,
            desc[D_DTYPE]);
  OVL_CHECK(desc[D_CTXT] == G->ctxt, OVL_ERR_ARG,
            "%s: %s: context %d differs from %s context %d (all matrices must share one)", who, name, desc[D_CTXT],
            G->ctxt_of, G->ctxt);
  OVL_CHECK(desc[D_M] == n && desc[D_N] == n, OVL_ERR_ARG,
            "%s: %s: the matrix must be %" PRId64 " x %" PRId64 " (%s), got %d x %d", who, name, n, n, G->n_of,
            desc[D_M], desc[D_N]);
  OVL_CHECK(desc[D_MB] >= 1 && desc[D_NB] >= 1, OVL_ERR_ARG, "%s: %s: MB_ and NB_ must be >= 1, got %d and %d", who,
            name, desc[D_MB], desc[D_NB]);
  if (desc[D_RSRC] == -1 || desc[D_CSRC] == -1)
    return ovl_err_set(OVL_ERR_UNSUPPORTED, "%s: %s: replicated operands (RSRC_ or CSRC_ = -1) are not supported", who,
                       name);
  OVL_CHECK(desc[D_RSRC] >= 0 && desc[D_RSRC] < G->nprow && desc[D_CSRC] >= 0 && desc[D_CSRC] < G->npcol, OVL_ERR_ARG,
            "%s: %s: RSRC_ = %d, CSRC_ = %d lie outside the %d x %d grid", who, name, desc[D_RSRC], desc[D_CSRC],
            G->nprow, G->npcol);
  int64_t mloc = numroc(n, desc[D_MB], G->myrow, desc[D_RSRC], G->nprow);
  int64_t nloc = numroc(n, desc[D_NB], G->mycol, desc[D_CSRC], G->npcol);
  int64_t need = nloc > 0 && mloc > 1 ? mloc : 1;
  OVL_CHECK(desc[D_LLD] >= need, OVL_ERR_ARG,
            "%s: %s: LLD_ = %d is less than %" PRId64 " (the local rows of process (%d, %d))", who, name, desc[D_LLD],
            need, G->myrow, G->mycol);
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

/* ---- the parameters ------------------------------------------------------- */

static ovl_err check_params(const ovl_pdpurify_params *p, const char *who) {
  OVL_CHECK(p->method == OVL_PURIFY_SP2 || p->method == OVL_PURIFY_TRS4 || p->method == OVL_PURIFY_CANONICAL ||
                p->method == OVL_PURIFY_SP2ACC,
            OVL_ERR_ARG, "%s: method must be sp2, sp2acc, trs4 or canonical (mcweeny needs mu, not n_occ), got %d", who,
            (int)p->method);
  OVL_CHECK((isnan(p->homo) && isnan(p->lumo)) || (isfinite(p->homo) && isfinite(p->lumo) && p->homo < p->lumo),
            OVL_ERR_ARG, "%s: homo and lumo must be both NAN or both finite with homo < lumo, got %g and %g", who,
            p->homo, p->lumo);
  OVL_CHECK(p->algo == OVL_ALGO_AUTO || (p->algo >= OVL_ALGO_SSC3 && p->algo <= OVL_ALGO_SSC6), OVL_ERR_ARG,
            "%s: algo must be OVL_ALGO_AUTO or a SymmSquareCube algorithm (alg3 .. alg6), got %d", who, (int)p->algo);
  OVL_CHECK(p->ndup >= OVL_AUTO && p->ndup <= OVL_LANES_MAX, OVL_ERR_ARG,
            "%s: ndup must be OVL_AUTO (the planner's) or in [1, %d], got %d", who, OVL_LANES_MAX, p->ndup);
  OVL_CHECK(p->prec == OVL_PURIFY_PREC_DOUBLE || p->prec == OVL_PURIFY_PREC_MIXED, OVL_ERR_ARG,
            "%s: prec must be double (0) or mixed (1), got %d", who, (int)p->prec);
  OVL_CHECK(p->tol == 0.0 || (p->tol >= OVL_PURIFY_TOL_MIN && p->tol <= OVL_PURIFY_TOL_MAX), OVL_ERR_ARG,
            "%s: tol must be 0 or in [%g, %g], got %g", who, OVL_PURIFY_TOL_MIN, OVL_PURIFY_TOL_MAX, p->tol);
  OVL_CHECK(p->max_iter >= 1, OVL_ERR_ARG, "%s: max_iter must be >= 1, got %d", who, p->max_iter);
  OVL_CHECK(p->c >= 0, OVL_ERR_ARG, "%s: c must be >= 0 (0: automatic), got %d", who, p->c);
  OVL_CHECK(isnan(p->sparse) || (p->sparse >= 0.0 && p->sparse < 1.0), OVL_ERR_ARG,
            "%s: sparse must be NAN (dense) or a threshold in [0, 1), got %g", who, p->sparse);
  OVL_CHECK(isnan(p->sparse) || ovl_purify_uses_sq(p->method), OVL_ERR_ARG,
            "%s: the block-sparse route (sparse %g) runs sp2, sp2acc or trs4, not %s", who, p->sparse,
            ovl_purify_method_name(p->method));
  OVL_CHECK(p->sparse_block >= 1, OVL_ERR_ARG, "%s: sparse_block must be >= 1, got %d", who, p->sparse_block);
  return OVL_OK;
}

/* $OVL_OPTIONS and p->options over the parameters (ovl_options_runtime):
 * the plan's knobs (want: the constraints of params, then every knob the
 * options give), --method, --precision, --nocc, --tol, --max-iter, and
 * --print-plan. COLLECTIVE over comm; errors agreed. */

static ovl_err runtime_options(MPI_Comm comm, int64_t n, int64_t *nocc, ovl_pdpurify_params *p, ovl_plan *want,
                               int *print_plan) {
  *want = params_plan(p, n);
  ovl_purify_opts po = ovl_purify_opts_default();
  po.method = p->method, po.prec = p->prec, po.tol = p->tol, po.max_iter = p->max_iter, po.nocc = *nocc;
  if (p->method == OVL_PURIFY_SP2ACC) po.homo = p->homo, po.lumo = p->lumo; /* the other methods refuse them */
  po.sparse = p->sparse, po.sparse_block = p->sparse_block;
  OVL_TRY(ovl_options_runtime_print(comm, p->options, OVL_FAMILY_SSC, want, &po, print_plan));
  p->sparse = po.sparse, p->sparse_block = po.sparse_block;
  if (po.method == OVL_PURIFY_SP2ACC) p->homo = po.homo, p->lumo = po.lumo;
  p->algo = want->algo, p->ndup = want->ndup > 0 ? want->ndup : OVL_AUTO, p->c = want->c > 0 ? want->c : 0;
  p->method = po.method, p->prec = po.prec, p->tol = po.tol, p->max_iter = po.max_iter, *nocc = po.nocc;
  return OVL_OK;
}

/* ---- the handle ----------------------------------------------------------- */

enum { DM_MAX_SET = 32, DM_NAME = 32, DM_VALUE = 128 };

struct ovl_dm_s {
  bgrid G;
  int64_t n;
  int nspin;
  double occ;              /* 2 (nspin 1) or 1 */
  double nel, nel_spin[2]; /* electrons; per channel with nspin 2 (NAN: not known yet) */
  int verbose;
  ovl_pdpurify_params base; /* the parameters under the options set (ovl_pdpurify: the caller's) */
  struct {
    char name[DM_NAME], value[DM_VALUE];
  } set[DM_MAX_SET]; /* the options set, in order, one per name */
  int nset;
  double homo_set, lumo_set; /* the caller's sp2acc estimates (NAN: none) */
  double last_homo[2], last_lumo[2];
  ovl_grid3d g3; /* the kernel grid s x s x c and its plane 0 as an s x s grid (cached) */
  ovl_grid2d g0;
  int gs, gc;
  double *sw; /* the Cholesky factor U of S (S = U^T U), square blocks nb (NULL: no S) */
  int descw[9];
  int64_t wlld, wn;
  int factorizations;
  double t_factor;
  /* the block-sparse route: a grid over every rank, and S^(-1/2) in blocks of zs_block rows at threshold
   * zs_eps (NULL: none; with S set, h->sw or h->zs holds it, as the route at ovl_dm_set_overlap was) */
  ovl_grid2d gb;
  ovl_bsmat zs;
  double zs_eps;
  int zs_block;
  ovl_dm_results res[2];
};

static ovl_err dm_alloc(const bgrid *G, int64_t n, ovl_dm *out) {
  *out = NULL;
  ovl_dm h = NULL;
  OVL_TRY(ovl_err_agree(G->comm, ovl_calloc(sizeof *h, &h)));
  h->G = *G;
  h->n = n;
  h->nspin = 1, h->occ = 1;
  h->nel = h->nel_spin[0] = h->nel_spin[1] = NAN;
  h->base = ovl_pdpurify_params_default();
  h->homo_set = h->lumo_set = NAN;
  h->last_homo[0] = h->last_homo[1] = h->last_lumo[0] = h->last_lumo[1] = NAN;
  *out = h;
  return OVL_OK;
}

static void dm_free(ovl_dm h) {
  ovl_free(&h->sw);
  ovl_bsmat_destroy(&h->zs);
  ovl_grid2d_destroy(&h->gb);
  ovl_grid2d_destroy(&h->g0);
  ovl_grid3d_destroy(&h->g3);
  free(h);
}

/* The plan of the parameters (after the run-time options), and the kernel
 * grids it needs (made again when its s or c differ from the cached ones).
 * COLLECTIVE; errors agreed. */
static ovl_err dm_prepare(ovl_dm h, const ovl_pdpurify_params *prm, const ovl_plan *want, int print_plan,
                          ovl_plan *plan, char desc[192]) {
  const bgrid *G = &h->G;
  int P = G->nprow * G->npcol;
  char why[OVL_PLAN_WHY] = "";
  OVL_TRY(resolve_plan(G->comm, P, prm->method, *want, plan, why, sizeof why));
  int ks = plan->s, kc = plan->c;
  if ((int64_t)ks * ks * kc > P) /* the same verdict everywhere: the plan is */
    return ovl_err_set(OVL_ERR_GRID, "%s: the %d x %d x %d kernel grid (c = %d) does not fit in %d ranks", G->who, ks,
                       ks, kc, prm->c, P);
  ovl_plan_describe(plan, desc, 192);
  if (print_plan && G->myrow == 0 && G->mycol == 0)
    fprintf(stderr, "%s: plan: %s (n=%" PRId64 ", method %s; %s)\n", G->who, desc, h->n,
            ovl_purify_method_name(prm->method), why);
  if (h->g3 && h->gs == ks && h->gc == kc) return OVL_OK;
  ovl_grid2d_destroy(&h->g0);
  ovl_grid3d_destroy(&h->g3);
  ovl_err rc = ovl_grid3d_create(G->comm, ks, kc, OVL_GRID_ALLOW_IDLE, &h->g3);
  if (rc == OVL_OK) rc = ovl_grid2d_create(G->comm, ks, ks, OVL_GRID_ALLOW_IDLE, &h->g0);
  if (rc != OVL_OK) {
    ovl_grid2d_destroy(&h->g0);
    ovl_grid3d_destroy(&h->g3);
    return rc;
  }
  h->gs = ks, h->gc = kc;
  return OVL_OK;
}

/* S (descs) -> the square-block copy h->sw (blocks nb) -> its Cholesky
 * factor. Needs the grids (dm_prepare). COLLECTIVE; errors agreed; on error
 * the handle has no S. */
/* A new block-sparse matrix of n rows in blocks of b on the route's grid
 * (made once: every rank of the context). COLLECTIVE; errors agreed. */
static ovl_err sparse_new(ovl_dm h, int b, ovl_bsmat *out) {
  *out = NULL;
  ovl_err rc = h->gb ? OVL_OK : ovl_grid2d_create(h->G.comm, 0, 0, 0, &h->gb);
  if (rc != OVL_OK) return rc;
  int64_t nblk = (h->n + b - 1) / b;
  int *bs = NULL;
  if (nblk > INT32_MAX)
    rc = ovl_err_set(OVL_ERR_SIZE, "%s: %" PRId64 " blocks of %d rows exceed an int: raise sparse_block", h->G.who,
                     nblk, b);
  if (rc == OVL_OK) rc = ovl_malloc(sizeof(int) * (size_t)nblk, &bs);
  rc = ovl_err_agree(h->G.comm, rc);
  if (rc != OVL_OK) return rc;
  for (int64_t k = 0; k < nblk; k++) bs[k] = (int)(k + 1 < nblk ? b : h->n - (nblk - 1) * b);
  rc = ovl_bsmat_create(h->gb, (int)nblk, bs, 2024, out);
  ovl_free(&bs);
  return rc;
}

/* The block-sparse route's S^(-1/2) from S in ovl's layout (T). COLLECTIVE;
 * errors agreed. */
static ovl_err sparse_factor(ovl_dm h, ovl_dmat T, const ovl_pdpurify_params *prm) {
  ovl_bsmat S = NULL, Z = NULL;
  const int ndup = prm->ndup > 0 ? prm->ndup : 0;
  ovl_err rc = sparse_new(h, prm->sparse_block, &S);
  if (rc == OVL_OK) rc = ovl_bsmat_create_like(S, &Z);
  rc = ovl_err_agree(h->G.comm, rc);
  if (rc == OVL_OK && prm->prec == OVL_PURIFY_PREC_MIXED) ovl_bsmat_set_arith(Z, OVL_BSMAT_FLOAT32);
  if (rc == OVL_OK) rc = ovl_bsmat_from_dense(T, prm->sparse, S);
  if (rc == OVL_OK) rc = ovl_bsmat_invsqrt(S, prm->sparse, ndup, 200, Z, NULL);
  ovl_bsmat_destroy(&S);
  if (rc != OVL_OK) {
    ovl_bsmat_destroy(&Z);
    return rc;
  }
  h->zs = Z, h->zs_eps = prm->sparse, h->zs_block = prm->sparse_block;
  return OVL_OK;
}

static ovl_err dm_factor(ovl_dm h, const double *s, const int *descs, int nb, const ovl_pdpurify_params *prm) {
  const bgrid *G = &h->G;
  double t0 = ovl_time();
  ovl_free(&h->sw);
  ovl_bsmat_destroy(&h->zs);
  int64_t n = h->n;
  const int sparse = !isnan(prm->sparse); /* S^(-1/2), filtered: no Cholesky factor (cubic) */
  ovl_dmat T = NULL;                      /* S in ovl's layout, checked */
  ovl_err rc = ovl_err_agree(G->comm, ovl_dmat_create(h->g0, n, n, &T));
  bcarr bs = bc_of(descs, s);
  if (rc == OVL_OK) rc = exchange(&bs, T, 0, G);
  if (rc == OVL_OK) rc = ovl_dmat_check_finite(T);
  if (rc == OVL_OK) rc = ovl_dmat_check_symmetric(T, 1e-12);
  if (rc == OVL_OK && sparse) rc = sparse_factor(h, T, prm);
  else if (rc == OVL_OK) {
    int64_t wm = numroc(n, nb, G->myrow, 0, G->nprow), wn = numroc(n, nb, G->mycol, 0, G->npcol);
    int wlld = wm > 1 ? (int)wm : 1, ni = (int)n, one = 1;
    int dw[9] = {1, G->ctxt, (int)n, (int)n, nb, nb, 0, 0, wlld};
    memcpy(h->descw, dw, sizeof dw);
    h->wlld = wlld, h->wn = wn;
    rc = ovl_err_agree(G->comm, ovl_malloc(sizeof(double) * (size_t)wlld * (size_t)(wn > 0 ? wn : 1), &h->sw));
    bcarr bw = bc_of(h->descw, h->sw);
    if (rc == OVL_OK) rc = exchange(&bw, T, 1, G);
    if (rc == OVL_OK) {
      int inf = 0;
      pdpotrf_("U", &ni, h->sw, &one, &one, h->descw, &inf);
      MPI_Allreduce(MPI_IN_PLACE, &inf, 1, MPI_INT, MPI_MAX, G->comm);
      if (inf > 0)
        rc = ovl_err_set(OVL_ERR_NUMERIC,
                         "%s: S is not positive definite (PDPOTRF: the leading minor of order %d is not)", G->who, inf);
      else if (inf < 0) rc = ovl_err_set(OVL_ERR_INTERNAL, "%s: PDPOTRF rejected argument %d", G->who, -inf);
    }
  }
  ovl_dmat_destroy(&T);
  if (rc != OVL_OK) ovl_free(&h->sw);
  else h->factorizations++;
  h->t_factor = ovl_time() - t0;
  return rc;
}

typedef struct mats {
  ovl_dmat F0, D0, Fo, T0, W0, Fp, Dp;
  double *fw; /* the square-block copy of F (overlap path) */
} mats;

static void mats_free(mats *m) {
  ovl_dmat *all[] = {&m->F0, &m->D0, &m->Fo, &m->T0, &m->W0, &m->Fp, &m->Dp};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) ovl_dmat_destroy(all[i]);
  ovl_free(&m->fw);
}

/* dm_run's scalars: mu, energy, HOMO, LUMO, errors, iterations, and the stop reason. LOCAL. */
static void run_outputs(double homo, double lumo, const ovl_purify_result *res, double out[8], ovl_dm_results *info,
                        const char **stop_reason) {
  out[0] = 0.5 * (homo + lumo), out[1] = res->energy, out[2] = homo, out[3] = lumo;
  out[4] = res->idem_err, out[5] = res->trace_err, out[6] = res->iterations;
  snprintf(info->stop_reason, sizeof info->stop_reason, "%s", res->stop_reason ? res->stop_reason : "");
  *stop_reason = res->stop_reason ? res->stop_reason : "";
}

/* The block-sparse route of dm_run (prm->sparse not NAN): F in blocks of
 * sparse_block rows, F' = Z F Z with Z = S^(-1/2) (h->zs), ovl_purify_sparse,
 * HOMO and LUMO from the dense F' and D' (Lanczos: n^2 a step), D = Z D' Z
 * and W = D (F D) as filtered products; D and W symmetrized in the dense
 * layout. Nothing is cubic in n. COLLECTIVE; errors agreed. */
static ovl_err dm_run_sparse(ovl_dm h, const double *f, const int *descf, double *d, const int *descd, double *w,
                             const int *descw, const ovl_pdpurify_params *prm, int64_t nocc, double out[8],
                             ovl_dm_results *info, const char **stop_reason) {
  const bgrid *G = &h->G;
  MPI_Comm comm = G->comm;
  const int64_t n = h->n;
  const double eps = prm->sparse;
  const int ndup = prm->ndup > 0 ? prm->ndup : 0;
  ovl_err rc = OVL_OK;
  if (h->sw || (h->zs && (h->zs_eps != eps || h->zs_block != prm->sparse_block)))
    rc = ovl_err_set(OVL_ERR_ARG,
                     "%s: the overlap was prepared for %s (ovl_dm_set_overlap before sparse or sparse_block changed): "
                     "set it again",
                     G->who, h->sw ? "the dense route" : "another threshold or block size");
  OVL_TRY(ovl_err_agree(comm, rc));
  ovl_dmat F0 = NULL, D0 = NULL;
  ovl_bsmat Fa = NULL, Fp = NULL, Dp = NULL, T = NULL;
  rc = ovl_dmat_create(h->g0, n, n, &F0);
  if (rc == OVL_OK) rc = ovl_dmat_create(h->g0, n, n, &D0);
  rc = ovl_err_agree(comm, rc);
  if (rc == OVL_OK) rc = sparse_new(h, prm->sparse_block, &Fa);
  if (rc == OVL_OK) rc = ovl_bsmat_create_like(Fa, &Fp);
  if (rc == OVL_OK) rc = ovl_bsmat_create_like(Fa, &Dp);
  if (rc == OVL_OK) rc = ovl_bsmat_create_like(Fa, &T);
  rc = ovl_err_agree(comm, rc);
  if (rc == OVL_OK) /* Z F Z, Z D Z and D F D are symmetric: half their blocks computed */
    ovl_bsmat_set_symmetric(Fp, 1), ovl_bsmat_set_symmetric(Dp, 1);
  if (rc == OVL_OK && prm->prec == OVL_PURIFY_PREC_MIXED &&
      eps >= OVL_BSMAT_FLOAT32_EPS) { /* the transforms in float32 too */
    ovl_bsmat_set_arith(Fp, OVL_BSMAT_FLOAT32), ovl_bsmat_set_arith(Dp, OVL_BSMAT_FLOAT32);
    ovl_bsmat_set_arith(T, OVL_BSMAT_FLOAT32);
  }
  double t0 = ovl_time();
  bcarr bf = bc_of(descf, f);
  if (rc == OVL_OK) rc = exchange(&bf, F0, 0, G);
  if (rc == OVL_OK) rc = ovl_dmat_check_finite(F0);
  if (rc == OVL_OK) rc = ovl_bsmat_from_dense(F0, eps, Fa);
  info->t_redist += ovl_time() - t0;
  double t1 = ovl_time();
  if (rc == OVL_OK && h->zs) { /* F' = Z F Z */
    rc = ovl_bsmat_multiply(h->zs, Fa, eps, ndup, T, NULL);
    if (rc == OVL_OK) rc = ovl_bsmat_multiply(T, h->zs, eps, ndup, Fp, NULL);
  } else if (rc == OVL_OK) rc = ovl_bsmat_copy(Fp, Fa);
  info->t_overlap += ovl_time() - t1;
  ovl_purify_opts po = ovl_purify_opts_default();
  po.method = prm->method, po.nocc = nocc, po.max_iter = prm->max_iter, po.tol = prm->tol, po.prec = prm->prec;
  po.sparse = eps, po.sparse_block = prm->sparse_block, po.plan.ndup = ndup, po.verbose = prm->verbose;
  if (prm->method == OVL_PURIFY_SP2ACC) po.homo = prm->homo, po.lumo = prm->lumo;
  ovl_purify_result res;
  memset(&res, 0, sizeof res);
  double t2 = ovl_time();
  ovl_plan given = ovl_plan_auto(OVL_FAMILY_BSMUL, n),
           bp; /* the product's plan: ndup and c as given, else the model's */
  given.ndup = ndup, given.c = prm->c;
  if (rc == OVL_OK) rc = ovl_purify_sparse_plan(Fp, &given, NULL, &bp, NULL, 0);
  if (rc == OVL_OK) rc = ovl_purify_sparse_planned(&bp, Fp, Dp, &po, &res);
  info->t_purify = ovl_time() - t2;
  double homo = 0, lumo = 0, t3 = ovl_time();
  if (rc == OVL_OK) rc = ovl_bsmat_to_dense(Fp, F0);
  if (rc == OVL_OK) rc = ovl_bsmat_to_dense(Dp, D0);
  if (rc == OVL_OK) rc = homo_lumo(F0, D0, comm, &homo, &lumo);
  info->t_mu = ovl_time() - t3;
  double t4 = ovl_time();
  if (rc == OVL_OK && h->zs) { /* D = Z D' Z */
    rc = ovl_bsmat_multiply(h->zs, Dp, eps, ndup, T, NULL);
    if (rc == OVL_OK) rc = ovl_bsmat_multiply(T, h->zs, eps, ndup, Dp, NULL);
    if (rc == OVL_OK) rc = ovl_bsmat_to_dense(Dp, D0);
  }
  if (rc == OVL_OK) rc = ovl_dmat_symmetrize(D0, F0); /* the filtered products leave D apart by about eps */
  info->t_overlap += ovl_time() - t4;
  double t5 = ovl_time();
  bcarr bd = bc_of(descd, d);
  if (rc == OVL_OK) rc = exchange(&bd, D0, 1, G);
  info->t_redist += ovl_time() - t5;
  if (rc == OVL_OK && w) { /* W = D (F D) */
    rc = ovl_bsmat_multiply(Fa, Dp, eps, ndup, T, NULL);
    if (rc == OVL_OK) rc = ovl_bsmat_multiply(Dp, T, eps, ndup, Fp, NULL);
    if (rc == OVL_OK) rc = ovl_bsmat_to_dense(Fp, D0);
    if (rc == OVL_OK) rc = ovl_dmat_symmetrize(D0, F0);
    double t6 = ovl_time();
    bcarr bww = bc_of(descw, w);
    if (rc == OVL_OK) rc = exchange(&bww, D0, 1, G);
    info->t_redist += ovl_time() - t6;
  }
  rc = ovl_err_agree(comm, rc);
  ovl_bsmat_destroy(&Fa);
  ovl_bsmat_destroy(&Fp);
  ovl_bsmat_destroy(&Dp);
  ovl_bsmat_destroy(&T);
  ovl_dmat_destroy(&F0);
  ovl_dmat_destroy(&D0);
  if (rc != OVL_OK) return rc;
  run_outputs(homo, lumo, &res, out, info, stop_reason);
  return OVL_OK;
}

/* D' of F (F' = U^-T F U^-1 with S) with nocc occupied orbitals on the grids
 * of dm_prepare; D (and W) back in the caller's basis and layouts, with
 * occupation 1. out: homo, lumo, energy, idem_err, trace_err, iterations.
 * COLLECTIVE; errors agreed. */
static ovl_err dm_run(ovl_dm h, const double *f, const int *descf, double *d, const int *descd, double *w,
                      const int *descw, const ovl_pdpurify_params *prm, const ovl_plan *plan, int64_t nocc,
                      double out[8], ovl_dm_results *info, const char **stop_reason) {
  if (!isnan(prm->sparse)) return dm_run_sparse(h, f, descf, d, descd, w, descw, prm, nocc, out, info, stop_reason);
  const bgrid *G = &h->G;
  MPI_Comm comm = G->comm;
  int64_t n = h->n;
  if (h->zs)
    OVL_TRY(ovl_err_agree(comm, ovl_err_set(OVL_ERR_ARG,
                                            "%s: the overlap was prepared for the block-sparse route "
                                            "(ovl_dm_set_overlap with sparse set): set it again",
                                            G->who)));
  mats m;
  memset(&m, 0, sizeof m);
  ovl_err rc = ovl_dmat_create(h->g0, n, n, &m.F0);
  if (rc == OVL_OK) rc = ovl_dmat_create(h->g0, n, n, &m.D0);
  if (rc != OVL_OK) {
    mats_free(&m);
    return rc;
  }
  double t0 = ovl_time();
  bcarr bf = bc_of(descf, f);
  rc = exchange(&bf, m.F0, 0, G);
  info->t_redist += ovl_time() - t0;

  /* overlap: F0 := U^-T F U^-1 on a square-block copy */
  int ni = (int)n, one = 1;
  bcarr bw = bc_of(h->descw, NULL);
  if (h->sw && rc == OVL_OK) {
    double t1 = ovl_time();
    rc = ovl_malloc(sizeof(double) * (size_t)h->wlld * (size_t)(h->wn > 0 ? h->wn : 1), &m.fw);
    if (rc == OVL_OK && w) rc = ovl_dmat_create(h->g0, n, n, &m.Fo);
    rc = ovl_err_agree(comm, rc);
    if (rc == OVL_OK && w) rc = ovl_dmat_copy(m.Fo, m.F0); /* F in the caller's basis, for W */
    bw.a = m.fw;
    if (rc == OVL_OK) rc = exchange(&bw, m.F0, 1, G);
    if (rc == OVL_OK) {
      double alpha = 1.0;
      pdtrsm_("L", "U", "T", "N", &ni, &ni, &alpha, h->sw, &one, &one, h->descw, m.fw, &one, &one, h->descw);
      pdtrsm_("R", "U", "N", "N", &ni, &ni, &alpha, h->sw, &one, &one, h->descw, m.fw, &one, &one, h->descw);
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
  ovl_grid3d_coords(h->g3, &gi, &gj, &gk);
  ovl_grid2d pl = ovl_grid3d_plane(h->g3);
  if (ovl_grid3d_active(h->g3) && gk == 0) {
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
  po.plan = *plan;
  po.verbose = prm->verbose;
  if (prm->method == OVL_PURIFY_SP2ACC) po.homo = prm->homo, po.lumo = prm->lumo;
  ovl_purify_result res;
  memset(&res, 0, sizeof res);
  double t2 = ovl_time();
  if (rc == OVL_OK) rc = ovl_purify(h->g3, m.Fp, m.Dp, &po, &res);
  info->t_purify = ovl_time() - t2;
  if (rc != OVL_OK) {
    mats_free(&m);
    return rc;
  }
  double homo = 0, lumo = 0, t3 = ovl_time();
  rc = homo_lumo(m.F0, m.D0, comm, &homo, &lumo);
  info->t_mu = ovl_time() - t3;

  /* back to the caller's basis: D := U^-1 D' U^-T */
  if (h->sw && rc == OVL_OK) {
    double t4 = ovl_time(), alpha = 1.0;
    bw.a = m.fw;
    rc = exchange(&bw, m.D0, 1, G);
    if (rc == OVL_OK) {
      pdtrsm_("L", "U", "N", "N", &ni, &ni, &alpha, h->sw, &one, &one, h->descw, m.fw, &one, &one, h->descw);
      pdtrsm_("R", "U", "T", "N", &ni, &ni, &alpha, h->sw, &one, &one, h->descw, m.fw, &one, &one, h->descw);
      rc = exchange(&bw, m.D0, 0, G);
    }
    if (rc == OVL_OK) rc = ovl_dmat_symmetrize(m.D0, m.F0); /* F0 (F') is no longer needed */
    info->t_overlap += ovl_time() - t4;
  }
  double t5 = ovl_time();
  bcarr bd = bc_of(descd, d);
  if (rc == OVL_OK) rc = exchange(&bd, m.D0, 1, G);
  info->t_redist += ovl_time() - t5;
  if (rc == OVL_OK && w) {             /* W = D (F D) */
    ovl_dmat Fc = h->sw ? m.Fo : m.F0; /* with S, F0 holds F' and D0 the caller's D */
    rc = ovl_dmat_create(h->g0, n, n, &m.T0);
    if (rc == OVL_OK) rc = ovl_dmat_create(h->g0, n, n, &m.W0);
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
  run_outputs(homo, lumo, &res, out, info, stop_reason);
  return OVL_OK;
}

/* The grid of a BLACS context: this process's place, the communicator, and
 * the check that the communicator's ranks are the grid's, row by row. An
 * error outside the grid is this process's alone (it cannot reach the
 * others); the order check is agreed. */
static ovl_err bgrid_of(int ctxt, const char *who, bgrid *G) {
  G->ctxt = ctxt, G->nprow = G->npcol = G->myrow = G->mycol = -1, G->comm = MPI_COMM_NULL, G->who = who;
  Cblacs_gridinfo(G->ctxt, &G->nprow, &G->npcol, &G->myrow, &G->mycol);
  OVL_CHECK(G->nprow >= 1 && G->npcol >= 1 && G->myrow >= 0 && G->mycol >= 0, OVL_ERR_ARG,
            "%s: this process is not in the BLACS grid of %s context %d (an invalid context, or a "
            "process outside the grid: call %s on the grid's processes only)",
            who, G->ctxt_of, G->ctxt, who);
  int hs = -1, size = 0, rank = -1;
  Cblacs_get(G->ctxt, BLACS_GET_CONTEXT_COMM, &hs);
  G->comm = Cblacs2sys_handle(hs);
  OVL_MPI(MPI_Comm_size(G->comm, &size));
  OVL_MPI(MPI_Comm_rank(G->comm, &rank));
  ovl_err rc = OVL_OK;
  if (size != G->nprow * G->npcol || rank != G->myrow * G->npcol + G->mycol)
    rc = ovl_err_set(OVL_ERR_UNSUPPORTED,
                     "%s: BLACS context %d is a %d x %d grid, but its communicator has %d ranks and "
                     "process (%d, %d) is rank %d there, not %d (ovl needs the row-major order of the reference BLACS)",
                     who, G->ctxt, G->nprow, G->npcol, size, G->myrow, G->mycol, rank, G->myrow * G->npcol + G->mycol);
  return ovl_err_agree(G->comm, rc);
}

/* ---- ovl_pdpurify: the one-call form -------------------------------------- */

ovl_err ovl_pdpurify(const double *f, const int *descf, const double *s, const int *descs, int64_t nocc, double *d,
                     const int *descd, double *w, const int *descw, const ovl_pdpurify_params *params, double *mu,
                     double *energy, ovl_pdpurify_info *info) {
  double t0 = ovl_time();
  ovl_pdpurify_info inf;
  memset(&inf, 0, sizeof inf);
  inf.stop_reason = "";
  OVL_CHECK(f && descf && d && descd, OVL_ERR_ARG, "ovl_pdpurify: f, descf, d and descd must not be NULL");
  bgrid G;
  G.ctxt_of = "DESCF's", G.n_of = "DESCF's M_";
  OVL_TRY(bgrid_of(descf[D_CTXT], "ovl_pdpurify", &G));
  ovl_err rc = OVL_OK;
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
  if (rc == OVL_OK) rc = check_params(&prm, "ovl_pdpurify");
  OVL_TRY(ovl_err_agree(G.comm, rc));
  ovl_plan want;
  int print_plan = 0;
  OVL_TRY(runtime_options(G.comm, n, &nocc, &prm, &want, &print_plan));
  if (nocc < 0 || nocc > n)
    rc = ovl_err_set(OVL_ERR_ARG, "ovl_pdpurify: nocc must lie in [0, %" PRId64 "], got %" PRId64, n, nocc);
  if (rc == OVL_OK) rc = check_params(&prm, "ovl_pdpurify");
  OVL_TRY(ovl_err_agree(G.comm, rc));
  double out[8] = {0};
  if (n > 0) { /* the handle's steps: create, set_overlap, solve, destroy */
    ovl_dm h = NULL;
    ovl_dm_results r;
    memset(&r, 0, sizeof r);
    ovl_plan plan;
    const char *stop = "";
    OVL_TRY(dm_alloc(&G, n, &h));
    rc = dm_prepare(h, &prm, &want, print_plan, &plan, inf.plan);
    if (rc == OVL_OK && s) {
      int nb = descf[D_MB] > descf[D_NB] ? descf[D_MB] : descf[D_NB];
      rc = dm_factor(h, s, descs, nb, &prm);
      inf.t_overlap += h->t_factor;
    }
    if (rc == OVL_OK) rc = dm_run(h, f, descf, d, descd, w, descw, &prm, &plan, nocc, out, &r, &stop);
    inf.s = h->gs, inf.c = h->gc;
    dm_free(h);
    if (rc != OVL_OK) return rc;
    inf.t_purify = r.t_purify, inf.t_redist = r.t_redist, inf.t_overlap += r.t_overlap, inf.t_mu = r.t_mu;
    inf.stop_reason = stop;
  }
  /* one view of the scalars: rank 0's */
  OVL_MPI(MPI_Bcast(out, 8, MPI_DOUBLE, 0, G.comm));
  inf.homo = out[2], inf.lumo = out[3], inf.idem_err = out[4], inf.trace_err = out[5], inf.iterations = (int)out[6];
  inf.t_total = ovl_time() - t0;
  if (mu) *mu = out[0];
  if (energy) *energy = out[1];
  if (info) *info = inf;
  return OVL_OK;
}

/* ---- the handle's public functions ----------------------------------------- */

static int is_integer(double x) { return isfinite(x) && fabs(x - nearbyint(x)) <= 1e-8; }

/* The occupied orbitals of each channel from the electron counts (up, down:
 * NAN when not given). nocc[k] NAN: not known yet (nspin 2, an odd count and
 * no split given). LOCAL. */
static ovl_err occupations(const char *who, int64_t n, int nspin, double nel, double up, double down, double nocc[2]) {
  nocc[0] = nocc[1] = NAN;
  OVL_CHECK(isfinite(nel) && nel >= 0, OVL_ERR_ARG, "%s: n_electrons must be a finite number >= 0, got %g", who, nel);
  if (nspin == 1) {
    OVL_CHECK(is_integer(nel / 2), OVL_ERR_ARG,
              "%s: n_electrons = %.10g gives n_occ = %.10g orbitals of occupation 2 (nspin 1): purification needs "
              "integer occupations (an even electron count; or nspin 2)",
              who, nel, nel / 2);
    OVL_CHECK(nearbyint(nel / 2) <= (double)n, OVL_ERR_ARG,
              "%s: n_electrons = %.10g needs %.10g orbitals of occupation 2, more than n = %" PRId64, who, nel, nel / 2,
              n);
    nocc[0] = nearbyint(nel / 2);
    return OVL_OK;
  }
  OVL_CHECK(is_integer(nel), OVL_ERR_ARG,
            "%s: n_electrons = %.10g is not an integer: purification needs integer occupations (each spin channel "
            "holds a whole number of electrons)",
            who, nel);
  if (isnan(up) && isnan(down)) {
    if (is_integer(nel / 2)) up = down = nearbyint(nel / 2);
    else return OVL_OK; /* the split is the caller's to give */
  } else if (isnan(down)) down = nel - up;
  else if (isnan(up)) up = nel - down;
  double ud[2] = {up, down};
  for (int k = 0; k < 2; k++) {
    OVL_CHECK(is_integer(ud[k]), OVL_ERR_ARG,
              "%s: n_electrons_%s = %.10g is not an integer: purification needs integer occupations", who,
              k ? "down" : "up", ud[k]);
    OVL_CHECK(ud[k] >= -1e-8 && nearbyint(ud[k]) <= (double)n, OVL_ERR_ARG,
              "%s: n_electrons_%s = %.10g must lie in [0, n = %" PRId64 "] (n_electrons = %.10g)", who,
              k ? "down" : "up", ud[k], n, nel);
    nocc[k] = nearbyint(ud[k]);
  }
  OVL_CHECK(fabs(nocc[0] + nocc[1] - nel) <= 1e-8, OVL_ERR_ARG,
            "%s: n_electrons_up + n_electrons_down = %.10g differs from n_electrons = %.10g", who, nocc[0] + nocc[1],
            nel);
  return OVL_OK;
}

ovl_err ovl_dm_create(int ctxt, int n, double n_electrons, int nspin, ovl_dm *h) {
  OVL_CHECK(h != NULL, OVL_ERR_ARG, "ovl_dm_create: h (where the handle goes) must not be NULL");
  *h = NULL;
  bgrid G;
  G.ctxt_of = "the handle's", G.n_of = "the handle's n";
  OVL_TRY(bgrid_of(ctxt, "ovl_dm_create", &G));
  ovl_err rc = OVL_OK;
  double nocc[2] = {NAN, NAN};
  if (n < 1) rc = ovl_err_set(OVL_ERR_ARG, "ovl_dm_create: n must be >= 1, got %d", n);
  else if (nspin != 1 && nspin != 2)
    rc =
        ovl_err_set(OVL_ERR_ARG, "ovl_dm_create: nspin must be 1 (spin-restricted) or 2 (unrestricted), got %d", nspin);
  else rc = occupations("ovl_dm_create", n, nspin, n_electrons, NAN, NAN, nocc);
  OVL_TRY(ovl_err_agree(G.comm, rc));
  ovl_dm d = NULL;
  OVL_TRY(dm_alloc(&G, n, &d));
  d->nspin = nspin, d->occ = nspin == 1 ? 2.0 : 1.0, d->nel = n_electrons;
  d->nel_spin[0] = nocc[0], d->nel_spin[1] = nocc[1];
  *h = d;
  return OVL_OK;
}

ovl_err ovl_dm_destroy(ovl_dm *h) {
  OVL_CHECK(h != NULL, OVL_ERR_ARG, "ovl_dm_destroy: h must not be NULL (pass the address of the handle)");
  if (*h) dm_free(*h);
  *h = NULL;
  return OVL_OK;
}

/* The option table's row of name (the plan's and the purification's, as
 * ovl_options_apply composes them), or NULL. LOCAL. */
static int option_row(const char *name, ovl_opt *row) {
  ovl_opt t[48];
  ovl_plan_optvals pv;
  memset(&pv, 0, sizeof pv);
  ovl_purify_optvals uv = ovl_purify_optvals_default();
  int k = ovl_plan_opts(OVL_FAMILY_SSC, &pv, t, 48);
  if (k < 0) return 0;
  int m = ovl_purify_opts_table(&uv, t + k, 48 - k);
  if (m < 0) return 0;
  for (int i = 0; i < k + m; i++)
    if (strcmp(t[i].lname, name) == 0) {
      *row = t[i];
      return 1;
    }
  return 0;
}

/* The options set as one string ("--name=value ..."), leaving out the
 * entry skip (-1: none), with "--extra=value" (or "--extra" for a flag)
 * after them (extra NULL: none). *out: malloc'd (free). LOCAL. */
static ovl_err options_string(const ovl_dm h, int skip, const char *extra, const char *xvalue, int xflag, char **out) {
  size_t len = 1;
  for (int i = 0; i < h->nset; i++) len += strlen(h->set[i].name) + strlen(h->set[i].value) + 5;
  if (extra) len += strlen(extra) + strlen(xvalue) + 5;
  char *s = malloc(len);
  OVL_CHECK(s != NULL, OVL_ERR_NOMEM, "ovl_dm: no memory for the options");
  s[0] = 0;
  for (int i = 0; i < h->nset; i++) {
    if (i == skip) continue;
    strcat(s, " --"), strcat(s, h->set[i].name);
    if (h->set[i].value[0]) strcat(s, "="), strcat(s, h->set[i].value);
  }
  if (extra) {
    strcat(s, " --"), strcat(s, extra);
    if (!xflag) strcat(s, "="), strcat(s, xvalue);
  }
  *out = s;
  return OVL_OK;
}

/* The parameters of the options string str laid over h->base, checked as
 * on the command line, and as ovl_pdpurify checks its parameters. LOCAL. */
static ovl_err options_local(const ovl_dm h, const char *str, const char *who, ovl_pdpurify_params *p, ovl_plan *want,
                             ovl_purify_opts *po) {
  *p = h->base;
  *want = params_plan(p, h->n);
  *po = ovl_purify_opts_default();
  po->method = p->method, po->prec = p->prec, po->tol = p->tol, po->max_iter = p->max_iter, po->nocc = 0;
  po->sparse = p->sparse, po->sparse_block = p->sparse_block;
  OVL_TRY(ovl_options_apply(str, who, 0, OVL_FAMILY_SSC, want, po));
  p->algo = want->algo, p->ndup = want->ndup > 0 ? want->ndup : OVL_AUTO, p->c = want->c > 0 ? want->c : 0;
  p->method = po->method, p->prec = po->prec, p->tol = po->tol, p->max_iter = po->max_iter;
  p->sparse = po->sparse, p->sparse_block = po->sparse_block;
  return check_params(p, who);
}

static ovl_err parse_real(const char *who, const char *name, const char *value, double *out) {
  char *end = NULL;
  double x = strtod(value, &end);
  OVL_CHECK(end != value && *end == 0 && !isinf(x), OVL_ERR_ARG, "%s: %s: \"%s\" is not a number (or nan)", who, name,
            value);
  *out = x;
  return OVL_OK;
}

ovl_err ovl_dm_set(ovl_dm h, const char *name, const char *value) {
  const char *who = "ovl_dm_set";
  OVL_CHECK(h && name && value, OVL_ERR_ARG, "%s: h, name and value must not be NULL", who);
  OVL_CHECK(value[0] != 0 && strlen(value) < DM_VALUE, OVL_ERR_ARG, "%s: %s: the value must have 1 to %d characters",
            who, name, DM_VALUE - 1);
  for (const char *c = value; *c; c++)
    OVL_CHECK(*c != ' ' && *c != '\t' && *c != '\n' && *c != '\r', OVL_ERR_ARG,
              "%s: %s: the value \"%s\" must not contain white space", who, name, value);
  double x = NAN;
  if (strcmp(name, "n_electrons") == 0 || strcmp(name, "n_electrons_up") == 0 ||
      strcmp(name, "n_electrons_down") == 0) {
    OVL_TRY(parse_real(who, name, value, &x));
    double nel = h->nel, up = NAN, down = NAN, nocc[2];
    if (strcmp(name, "n_electrons") == 0) nel = x;
    else {
      OVL_CHECK(h->nspin == 2, OVL_ERR_ARG, "%s: %s applies to nspin 2 (this handle has nspin 1)", who, name);
      if (name[12] == 'u') up = x;
      else down = x;
    }
    OVL_TRY(occupations(who, h->n, h->nspin, nel, up, down, nocc));
    h->nel = nel, h->nel_spin[0] = nocc[0], h->nel_spin[1] = nocc[1];
    return OVL_OK;
  }
  if (strcmp(name, "verbose") == 0) {
    int64_t v = 0;
    OVL_CHECK(ovl_parse_int(value, &v) == OVL_OK && (v == 0 || v == 1), OVL_ERR_ARG,
              "%s: verbose must be 0 or 1, got \"%s\"", who, value);
    h->verbose = (int)v;
    return OVL_OK;
  }
  if (strcmp(name, "homo") == 0 || strcmp(name, "lumo") == 0) {
    OVL_TRY(parse_real(who, name, value, &x));
    if (name[0] == 'h') h->homo_set = x;
    else h->lumo_set = x;
    return OVL_OK;
  }
  OVL_CHECK(strcmp(name, "nocc") != 0, OVL_ERR_ARG,
            "%s: nocc: the handle's occupation follows from its electron count (set n_electrons, or "
            "n_electrons_up with nspin 2)",
            who);
  ovl_opt row;
  OVL_CHECK(option_row(name, &row), OVL_ERR_ARG,
            "%s: unknown option \"%s\" (the names of the command line without dashes: method, precision, tol, "
            "max-iter, homo, lumo, algo, ndup, grid, backend, ...; and n_electrons, n_electrons_up, "
            "n_electrons_down, verbose)",
            who, name);
  int flag = row.type == OVL_OPT_FLAG, on = 1;
  if (flag) {
    int yes = !strcmp(value, "1") || !strcmp(value, "on") || !strcmp(value, "true") || !strcmp(value, "yes");
    int no = !strcmp(value, "0") || !strcmp(value, "off") || !strcmp(value, "false") || !strcmp(value, "no");
    OVL_CHECK(yes || no, OVL_ERR_ARG, "%s: %s is a flag: 1 or 0 (on, off), got \"%s\"", who, name, value);
    on = yes;
  }
  int at = -1;
  for (int i = 0; i < h->nset; i++)
    if (strcmp(h->set[i].name, name) == 0) at = i;
  OVL_CHECK(at >= 0 || h->nset < DM_MAX_SET, OVL_ERR_ARG, "%s: more than %d options set", who, DM_MAX_SET);
  char *str = NULL;
  OVL_TRY(options_string(h, at, on ? name : NULL, value, flag, &str));
  ovl_pdpurify_params p;
  ovl_plan want;
  ovl_purify_opts po;
  ovl_err rc = options_local(h, str, who, &p, &want, &po);
  free(str);
  if (rc != OVL_OK) return rc;
  if (at < 0 && on) at = h->nset++;
  if (on) {
    snprintf(h->set[at].name, DM_NAME, "%s", name);
    snprintf(h->set[at].value, DM_VALUE, "%s", flag ? "" : value);
  } else if (at >= 0) { /* a flag turned off: as never given */
    for (int i = at; i + 1 < h->nset; i++) h->set[i] = h->set[i + 1];
    h->nset--;
  }
  return OVL_OK;
}

static ovl_err put(char *buf, size_t len, const char *who, const char *name, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int k = vsnprintf(buf, len, fmt, ap);
  va_end(ap);
  OVL_CHECK(k >= 0 && (size_t)k < len, OVL_ERR_ARG, "%s: %s: the buffer of %zu bytes is too small (%d needed)", who,
            name, len, k + 1);
  return OVL_OK;
}

static ovl_err put_real(char *buf, size_t len, const char *who, const char *name, double x) {
  return isnan(x) ? put(buf, len, who, name, "nan") : put(buf, len, who, name, "%.17g", x);
}

ovl_err ovl_dm_get(ovl_dm h, const char *name, char *buf, size_t len) {
  const char *who = "ovl_dm_get";
  OVL_CHECK(h && name && buf && len > 0, OVL_ERR_ARG, "%s: h, name and buf must not be NULL, len > 0", who);
  buf[0] = 0;
  if (strcmp(name, "n_electrons") == 0) return put_real(buf, len, who, name, h->nel);
  if (strcmp(name, "n_electrons_up") == 0 || strcmp(name, "n_electrons_down") == 0)
    return put_real(buf, len, who, name, h->nspin == 1 ? h->nel / 2 : h->nel_spin[name[12] == 'u' ? 0 : 1]);
  if (strcmp(name, "verbose") == 0) return put(buf, len, who, name, "%d", h->verbose);
  if (strcmp(name, "homo") == 0) return put_real(buf, len, who, name, h->homo_set);
  if (strcmp(name, "lumo") == 0) return put_real(buf, len, who, name, h->lumo_set);
  ovl_opt row;
  OVL_CHECK(option_row(name, &row) && strcmp(name, "nocc") != 0, OVL_ERR_ARG, "%s: unknown option \"%s\"", who, name);
  for (int i = 0; i < h->nset; i++)
    if (strcmp(h->set[i].name, name) == 0)
      return put(buf, len, who, name, "%s", h->set[i].value[0] ? h->set[i].value : "1");
  char *str = NULL;
  OVL_TRY(options_string(h, -1, NULL, NULL, 0, &str));
  ovl_pdpurify_params p;
  ovl_plan want;
  ovl_purify_opts po;
  ovl_err rc = options_local(h, str, who, &p, &want, &po);
  free(str);
  OVL_TRY(rc);
  if (strcmp(name, "method") == 0) return put(buf, len, who, name, "%s", ovl_purify_method_name(p.method));
  if (strcmp(name, "precision") == 0) return put(buf, len, who, name, "%s", ovl_purify_prec_name(p.prec));
  if (strcmp(name, "tol") == 0) return put(buf, len, who, name, "%.17g", p.tol);
  if (strcmp(name, "max-iter") == 0) return put(buf, len, who, name, "%d", p.max_iter);
  const ovl_knob *k = ovl_knob_find(name);
  if (k && strcmp(k->name, name) == 0) {
    char tmp[256];
    ovl_knob_format(&want, k->id, tmp, sizeof tmp);
    return put(buf, len, who, name, "%s", tmp);
  }
  return put(buf, len, who, name, "%s", row.type == OVL_OPT_FLAG ? "0" : "");
}

ovl_err ovl_dm_get_results(ovl_dm h, int ispin, ovl_dm_results *r) {
  OVL_CHECK(h && r, OVL_ERR_ARG, "ovl_dm_get_results: h and r must not be NULL");
  OVL_CHECK(ispin >= 0 && ispin < h->nspin, OVL_ERR_ARG, "ovl_dm_get_results: ispin must lie in [0, %d], got %d",
            h->nspin - 1, ispin);
  *r = h->res[ispin];
  r->factorizations = h->factorizations, r->t_factor = h->t_factor;
  return OVL_OK;
}

/* The run-time parameters of a collective call: rank 0's options set over
 * $OVL_OPTIONS over the base (ovl_pdpurify's precedence). COLLECTIVE;
 * errors agreed. */
static ovl_err dm_params(ovl_dm h, int64_t *nocc, ovl_pdpurify_params *p, ovl_plan *want, int *print_plan) {
  char *str = NULL;
  ovl_err rc = options_string(h, -1, NULL, NULL, 0, &str);
  OVL_TRY(ovl_err_agree(h->G.comm, rc));
  *p = h->base;
  p->options = str;
  p->verbose = h->verbose;
  rc = runtime_options(h->G.comm, h->n, nocc, p, want, print_plan);
  p->options = NULL;
  free(str);
  return rc;
}

ovl_err ovl_dm_set_overlap(ovl_dm h, const double *s, const int descs[9]) {
  OVL_CHECK(h != NULL, OVL_ERR_ARG, "ovl_dm_set_overlap: h must not be NULL");
  h->G.who = "ovl_dm_set_overlap";
  ovl_err rc = OVL_OK;
  if ((s == NULL) != (descs == NULL))
    rc = ovl_err_set(OVL_ERR_ARG, "ovl_dm_set_overlap: s and descs must both be given or both be NULL");
  if (rc == OVL_OK && descs) rc = check_desc(descs, "DESCS", &h->G, h->n);
  OVL_TRY(ovl_err_agree(h->G.comm, rc));
  ovl_free(&h->sw);
  ovl_bsmat_destroy(&h->zs);
  if (!s) return OVL_OK;
  ovl_pdpurify_params p;
  ovl_plan want, plan;
  int64_t nocc = 0;
  char desc[192];
  OVL_TRY(dm_params(h, &nocc, &p, &want, NULL));
  OVL_TRY(dm_prepare(h, &p, &want, 0, &plan, desc));
  return dm_factor(h, s, descs, descs[D_MB] > descs[D_NB] ? descs[D_MB] : descs[D_NB], &p);
}

/* a := occ a on this process's part of the block-cyclic array. */
static void scale_local(const bgrid *G, double *a, const int *desc, int64_t n, double occ) {
  int64_t mloc = numroc(n, desc[D_MB], G->myrow, desc[D_RSRC], G->nprow);
  int64_t nloc = numroc(n, desc[D_NB], G->mycol, desc[D_CSRC], G->npcol);
  for (int64_t c = 0; c < nloc; c++)
    for (int64_t r = 0; r < mloc; r++) a[r + c * (int64_t)desc[D_LLD]] *= occ;
}

ovl_err ovl_dm_solve(ovl_dm h, int ispin, const double *f, const int descf[9], double *d, const int descd[9], double *w,
                     const int descw[9]) {
  double t0 = ovl_time();
  OVL_CHECK(h != NULL, OVL_ERR_ARG, "ovl_dm_solve: h must not be NULL");
  const char *who = "ovl_dm_solve";
  h->G.who = who;
  ovl_err rc = OVL_OK;
  if (ispin < 0 || ispin >= h->nspin)
    rc = ovl_err_set(OVL_ERR_ARG, "%s: ispin must lie in [0, %d] (nspin %d), got %d", who, h->nspin - 1, h->nspin,
                     ispin);
  else if (!f || !descf || !d || !descd)
    rc = ovl_err_set(OVL_ERR_ARG, "%s: f, descf, d and descd must not be NULL", who);
  else if ((w == NULL) != (descw == NULL))
    rc = ovl_err_set(OVL_ERR_ARG, "%s: w and descw must both be given or both be NULL", who);
  else if (isnan(h->nel_spin[ispin]))
    rc = ovl_err_set(OVL_ERR_ARG,
                     "%s: n_electrons = %.10g is odd with nspin 2: set n_electrons_up (or n_electrons_down) first", who,
                     h->nel);
  else if (isnan(h->homo_set) != isnan(h->lumo_set) || (!isnan(h->homo_set) && !(h->homo_set < h->lumo_set)))
    rc = ovl_err_set(OVL_ERR_ARG,
                     "%s: homo and lumo go together, with homo < lumo (set both, or both nan), got %g and %g", who,
                     h->homo_set, h->lumo_set);
  if (rc == OVL_OK) rc = check_desc(descf, "DESCF", &h->G, h->n);
  if (rc == OVL_OK) rc = check_desc(descd, "DESCD", &h->G, h->n);
  if (rc == OVL_OK && descw) rc = check_desc(descw, "DESCW", &h->G, h->n);
  OVL_TRY(ovl_err_agree(h->G.comm, rc));
  ovl_pdpurify_params p;
  ovl_plan want, plan;
  int print_plan = 0;
  int64_t nocc = (int64_t)h->nel_spin[ispin];
  OVL_TRY(dm_params(h, &nocc, &p, &want, &print_plan));
  int warm = 0;
  if (p.method == OVL_PURIFY_SP2ACC) {
    if (!isnan(h->homo_set)) p.homo = h->homo_set, p.lumo = h->lumo_set, warm = 2;
    else if (!isnan(p.homo)) warm = 2; /* $OVL_OPTIONS */
    else if (!isnan(h->last_homo[ispin]) && h->last_homo[ispin] < h->last_lumo[ispin])
      p.homo = h->last_homo[ispin], p.lumo = h->last_lumo[ispin], warm = 1;
  }
  if (nocc < 0 || nocc > h->n)
    rc = ovl_err_set(OVL_ERR_ARG, "%s: nocc must lie in [0, %" PRId64 "], got %" PRId64, who, h->n, nocc);
  if (rc == OVL_OK) rc = check_params(&p, who);
  OVL_TRY(ovl_err_agree(h->G.comm, rc));
  ovl_dm_results r;
  memset(&r, 0, sizeof r);
  double out[8] = {0};
  const char *stop = "";
  OVL_TRY(dm_prepare(h, &p, &want, print_plan, &plan, r.plan));
  ovl_err rr = dm_run(h, f, descf, d, descd, w, descw, &p, &plan, nocc, out, &r, &stop);
  if (rr == OVL_OK) OVL_MPI(MPI_Bcast(out, 8, MPI_DOUBLE, 0, h->G.comm)); /* one view of the scalars: rank 0's */
  /* Estimates whose gap misses the true one may fold eigenvalues across it: D is then the projector onto other
   * orbitals than the lowest, and the HOMO estimated from it lies above its LUMO (or the run fails). Then the
   * solve runs again without them (warm = -1). */
  if (warm != 0 && (rr == OVL_ERR_NUMERIC || (rr == OVL_OK && !(out[2] < out[3])))) {
    p.homo = p.lumo = NAN, warm = -1;
    rr = dm_run(h, f, descf, d, descd, w, descw, &p, &plan, nocc, out, &r, &stop);
    if (rr == OVL_OK) OVL_MPI(MPI_Bcast(out, 8, MPI_DOUBLE, 0, h->G.comm));
  }
  OVL_TRY(rr);
  if (h->occ != 1.0) {
    scale_local(&h->G, d, descd, h->n, h->occ);
    if (w) scale_local(&h->G, w, descw, h->n, h->occ);
  }
  r.mu = out[0], r.energy = h->occ * out[1], r.homo = out[2], r.lumo = out[3];
  r.idem_err = out[4], r.trace_err = out[5], r.iterations = (int)out[6];
  r.n_occ = (double)nocc, r.occupation = h->occ, r.warm = warm, r.solves = h->res[ispin].solves + 1;
  r.factorizations = h->factorizations, r.t_factor = h->t_factor;
  h->last_homo[ispin] = r.homo, h->last_lumo[ispin] = r.lumo;
  r.t_solve = ovl_time() - t0;
  h->res[ispin] = r;
  return OVL_OK;
}

#endif
