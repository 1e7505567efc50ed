/* eig_peer: purification (ovl) against eigensolvers (ScaLAPACK, ELPA,
 * LAPACK) for the same density matrix, on the same ranks, in one launch.
 *
 *   mpiexec -n P eig_peer --fock F.raw [--nocc K] [--nb NB] [--grid PxQ]
 *                         [--eig LIST] [--elpa-kernel NAME] [--dprod syrk|gemm]
 *                         [--purify LIST] [--algo alg5|alg6] [--ndup N]
 *                         [-i I] [-x X] [--json]
 *
 * Eigensolver routes (--eig, comma-separated, or all; default pdsyevd, and
 * elpa2 when built with ELPA), each on F in ScaLAPACK's block-cyclic layout
 * (NB x NB blocks, BLACS p x q grid) and each followed by the density
 * D = C_occ C_occ^T from the n x n_occ occupied eigenvectors (--dprod: pdsyrk_
 * on the upper triangle, default, or pdgemm_ on the whole matrix):
 *   pdsyevd  all n eigenpairs (divide and conquer), as an SCF code calls it;
 *   pdsyevr  the n_occ lowest pairs (MRRR, RANGE = 'I', IL = 1, IU = n_occ);
 *   pdsyevx  the n_occ lowest pairs (bisection + inverse iteration, likewise);
 *   elpa1    ELPA's one-stage solver with nev = n_occ;
 *   elpa2    ELPA's two-stage solver with nev = n_occ and the real kernel of
 *            --elpa-kernel (default auto: every kernel the library was built
 *            with is timed on two solves before the rounds; the fastest runs);
 *   dsyevr   one-rank LAPACK dsyevr for the n_occ lowest pairs, then dsyrk
 *            (only on 1 rank).
 * A route that cannot run here (ELPA not built in, dsyevr on several ranks)
 * is skipped with a message.
 *
 * Purifications (--purify, comma-separated METHOD[:PRECISION][@K|/EPS], or all:
 * every method ovl names (but mcweeny, which needs mu) in float64 and, on the
 * symmetric square, mixed precision; none: no purification): ovl_purify
 * from F already distributed on plane 0. @K: the first K ranks of every node
 * purify with the node's cores shared among them as BLAS threads, the others
 * sleep (ovl_active). Canonical and McWeeny run on SymmSquareCube (alg5 on
 * p x p x p, or alg6 on the 2.5D grid), sp2 and trs4 on the symmetric square
 * (ovl_sq_grid_dims: the 2.5D grid, or 1 x 1 x P). /EPS (sp2, sp2acc, trs4):
 * the block-sparse purification (ovl_purify_sparse_planned, threshold EPS,
 * blocks of 32 rows, the product planned by its cost model) on a 2D grid of
 * all ranks, timed from the dense F to the dense D (ovl_bsmat_from_dense and
 * ovl_bsmat_to_dense included).
 *
 * Rounds: every round runs each eigensolver route once, then each
 * purification once; time per run = MAX over ranks; min/median over the timed
 * rounds; the ratios eigensolver time / purification time are of the same
 * launch. Every density is compared with the reference dref.raw beside the
 * Fock file (made by tools/make-cases or tools/make-fock), else with a
 * pdsyevd density computed before the rounds; every eigensolver density
 * must also have tr D = n_occ. The run fails when a float64 density is off by
 * more than 1e-8 (mixed precision: 1e-5) or a trace by more than 1e-8 n_occ. */
#include <cblas.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ovl/ovl.h"
#include "scalapack.h"
#ifdef OVL_HAVE_ELPA
#include <elpa/elpa.h>
#endif

enum { MAXREP = 200, MAXCFG = 24 };

/* One purification entry of --purify and its results. */
typedef struct pcfg {
  ovl_purify_opts po;
  ovl_grid3d g;
  ovl_dmat F, D;
  ovl_purify_result res;
  double t[MAXREP], err;
  char name[48], grid[32];
  int ppn, threads; /* @K: K active ranks per node (0: all), their BLAS threads */
  int kn;           /* @K: the active ranks on this node (K, or fewer on a smaller node) */
  ovl_active act;   /* the active subset of @K */
  int alg_s, alg_c; /* the grid of its ranks */
  double eps;       /* /EPS: the block-sparse route's threshold (NAN: dense) */
  ovl_grid2d g2;    /* /EPS: its 2D grid of all ranks, F and D there */
} pcfg;

/* The block-sparse route: D (dense) from F (dense) through block-sparse
 * matrices of 32-row blocks filtered by eps. COLLECTIVE. */
static ovl_err run_sparse(pcfg *x) {
  const int b = 32;
  int64_t n = ovl_dmat_rows(x->F), nblk = (n + b - 1) / b;
  int *bs = malloc(sizeof(int) * (size_t)(nblk > 0 ? nblk : 1));
  ovl_err rc = bs ? OVL_OK : ovl_err_set(OVL_ERR_NOMEM, "the block sizes");
  rc = ovl_err_agree(MPI_COMM_WORLD, rc);
  if (rc) return rc;
  for (int64_t k = 0; k < nblk; k++) bs[k] = (int)(k + 1 < nblk ? b : n - (nblk - 1) * b);
  ovl_bsmat Fs = NULL, Ds = NULL;
  rc = ovl_bsmat_create(x->g2, (int)nblk, bs, 2024, &Fs);
  free(bs);
  if (!rc) rc = ovl_bsmat_create_like(Fs, &Ds);
  if (!rc) rc = ovl_bsmat_from_dense(x->F, x->eps, Fs);
  ovl_plan given = ovl_plan_auto(OVL_FAMILY_BSMUL, n), plan;
  if (!rc) rc = ovl_purify_sparse_plan(Fs, &given, NULL, &plan, NULL, 0);
  if (!rc) rc = ovl_purify_sparse_planned(&plan, Fs, Ds, &x->po, &x->res);
  if (!rc) rc = ovl_bsmat_to_dense(Ds, x->D);
  if (!rc) snprintf(x->grid, sizeof x->grid, "%s", ovl_algo_name(plan.algo));
  ovl_bsmat_destroy(&Fs), ovl_bsmat_destroy(&Ds);
  return rc;
}

static ovl_err run_purify(void *ctx) {
  pcfg *x = ctx;
  return ovl_purify(x->g, x->F, x->D, &x->po, &x->res);
}

/* Append one entry to c. LOCAL. */
static ovl_err add_purify(pcfg *c, int *nc, ovl_purify_method m, ovl_purify_prec p, int ppn) {
  if (*nc == MAXCFG) return ovl_err_set(OVL_ERR_ARG, "--purify takes at most %d entries", MAXCFG);
  if (m == OVL_PURIFY_MCWEENY) return ovl_err_set(OVL_ERR_ARG, "--purify: mcweeny needs mu; not offered");
  if (p == OVL_PURIFY_PREC_MIXED && !ovl_purify_uses_sq(m))
    return ovl_err_set(OVL_ERR_ARG, "--purify: mixed precision needs sp2 or trs4");
  pcfg *x = &c[(*nc)++];
  memset(x, 0, sizeof *x);
  x->po = ovl_purify_opts_default();
  x->po.method = m, x->po.prec = p, x->ppn = ppn, x->eps = NAN;
  int l = snprintf(x->name, sizeof x->name, "%s:%s", ovl_purify_method_name(m), ovl_purify_prec_name(p));
  if (ppn) snprintf(x->name + l, sizeof x->name - (size_t)l, "@%d", ppn);
  return OVL_OK;
}

/* "sp2:mixed,canonical,all@1" -> entries ("all": every method x precision
 * that ovl names and offers here; "none": no entry). LOCAL. */
static ovl_err parse_purify(const char *list, pcfg *c, int *nc) {
  char buf[512];
  snprintf(buf, sizeof buf, "%s", list);
  *nc = 0;
  if (strcmp(buf, "none") == 0) return OVL_OK;
  for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    int ppn = 0;
    double eps = NAN;
    char *sl = strchr(tok, '/');
    if (sl) {
      char *end = NULL;
      eps = strtod(sl + 1, &end);
      if (end == sl + 1 || *end || !(eps >= 0.0 && eps < 1.0))
        return ovl_err_set(OVL_ERR_ARG, "--purify: '/%s' is not a threshold in [0, 1)", sl + 1);
      *sl = '\0';
    }
    char *at = strchr(tok, '@');
    if (at) {
      char *end = NULL;
      long k = strtol(at + 1, &end, 10);
      if (end == at + 1 || *end || k < 1 || k > 1 << 20)
        return ovl_err_set(OVL_ERR_ARG, "--purify: '@%s' is not a count of ranks per node >= 1", at + 1);
      ppn = (int)k, *at = '\0';
    }
    if (sl && (at || strcmp(tok, "all") == 0))
      return ovl_err_set(OVL_ERR_ARG, "--purify: /EPS takes one method, without @K");
    if (strcmp(tok, "all") == 0) { /* the enumerations, as far as ovl has names for them */
      for (int m = 0; strcmp(ovl_purify_method_name((ovl_purify_method)m), "unknown") != 0; m++)
        for (int p = 0; strcmp(ovl_purify_prec_name((ovl_purify_prec)p), "unknown") != 0; p++)
          if (m != OVL_PURIFY_MCWEENY && (p == OVL_PURIFY_PREC_DOUBLE || ovl_purify_uses_sq((ovl_purify_method)m)))
            OVL_TRY(add_purify(c, nc, (ovl_purify_method)m, (ovl_purify_prec)p, ppn));
      continue;
    }
    ovl_purify_method m = OVL_PURIFY_SP2;
    ovl_purify_prec p = OVL_PURIFY_PREC_DOUBLE;
    char *colon = strchr(tok, ':');
    if (colon) *colon = '\0';
    OVL_TRY(ovl_purify_method_parse(tok, &m));
    if (colon) OVL_TRY(ovl_purify_prec_parse(colon + 1, &p));
    OVL_TRY(add_purify(c, nc, m, p, ppn));
    if (sl) {
      if (!ovl_purify_uses_sq(m)) return ovl_err_set(OVL_ERR_ARG, "--purify: /EPS runs sp2, sp2acc or trs4");
      pcfg *x = &c[*nc - 1];
      x->eps = eps, x->po.sparse = eps;
      size_t l = strlen(x->name);
      snprintf(x->name + l, sizeof x->name - l, "/%g", eps);
    }
  }
  return *nc ? OVL_OK : ovl_err_set(OVL_ERR_ARG, "--purify needs at least one method (or none)");
}

/* ---- eigensolver routes ---- */

typedef enum { R_PDSYEVD, R_PDSYEVR, R_PDSYEVX, R_ELPA1, R_ELPA2, R_DSYEVR, NROUTES } route_id;
static const char *const k_routes[NROUTES] = {"pdsyevd", "pdsyevr", "pdsyevx", "elpa1", "elpa2", "dsyevr"};

/* The problem in ScaLAPACK's layout and the buffers every route shares. */
typedef struct eig_ctx {
  const double *F; /* the whole matrix, on every rank */
  int64_t n, nocc, nb, mp, nq, lld;
  int ni, nk, desc[9], ctxt, nprow, npcol, myrow, mycol, syrk;
  double *a, *z, *d, *w, *work;
  int *iwork, *ifail, *iclustr, lwork, liwork;
  double *gap;
} eig_ctx;

/* One eigensolver route and its results. */
typedef struct eroute {
  int on;                       /* selected and runnable here */
  double t[MAXREP], ts[MAXREP]; /* eigensolver + density; eigensolver alone */
  double err, trace_err, energy;
  char kernel[48]; /* elpa2: the real kernel that ran */
#ifdef OVL_HAVE_ELPA
  elpa_t h;
#endif
} eroute;

static int64_t g_of(int64_t l, int64_t nb, int ip, int np) { return (l / nb * np + ip) * nb + l % nb; }

/* The block-cyclic copy of F into c->a (every solver overwrites it). LOCAL. */
static void load_a(eig_ctx *c) {
  for (int64_t j = 0; j < c->nq; j++)
    for (int64_t i = 0; i < c->mp; i++)
      c->a[i + j * c->lld] = c->F[g_of(i, c->nb, c->myrow, c->nprow) + g_of(j, c->nb, c->mycol, c->npcol) * c->n];
}

/* D = Z(:, 1:n_occ) Z(:, 1:n_occ)^T into c->d: the upper triangle with
 * pdsyrk_, or all of it with pdgemm_. COLLECTIVE over the BLACS grid. */
static void density(eig_ctx *c) {
  int one = 1;
  double al = 1.0, be = 0.0;
  if (c->nk == 0) {
    memset(c->d, 0, sizeof(double) * (size_t)(c->lld * c->nq));
  } else if (c->syrk) {
    pdsyrk_("U", "N", &c->ni, &c->nk, &al, c->z, &one, &one, c->desc, &be, c->d, &one, &one, c->desc);
  } else {
    pdgemm_("N", "T", &c->ni, &c->ni, &c->nk, &al, c->z, &one, &one, c->desc, c->z, &one, &one, c->desc, &be, c->d,
            &one, &one, c->desc);
  }
}

#ifdef OVL_HAVE_ELPA
/* An ELPA handle for the block-cyclic problem of c: nev = n_occ, the given
 * solver. COLLECTIVE. */
static int elpa_make(const eig_ctx *c, int solver, elpa_t *out) {
  int err = 0;
  elpa_t h = elpa_allocate(&err);
  if (err != ELPA_OK) return err;
  elpa_set(h, "na", c->ni, &err);
  if (err == ELPA_OK) elpa_set(h, "nev", c->nk, &err);
  if (err == ELPA_OK) elpa_set(h, "local_nrows", (int)c->lld, &err);
  if (err == ELPA_OK) elpa_set(h, "local_ncols", (int)c->nq, &err);
  if (err == ELPA_OK) elpa_set(h, "nblk", (int)c->nb, &err);
  if (err == ELPA_OK) elpa_set(h, "mpi_comm_parent", (int)MPI_Comm_c2f(MPI_COMM_WORLD), &err);
  if (err == ELPA_OK) elpa_set(h, "process_row", c->myrow, &err);
  if (err == ELPA_OK) elpa_set(h, "process_col", c->mycol, &err);
  if (err == ELPA_OK) elpa_set(h, "blacs_context", c->ctxt, &err);
  if (err == ELPA_OK) err = elpa_setup(h);
  if (err == ELPA_OK) elpa_set(h, "solver", solver, &err);
  if (err != ELPA_OK) {
    int e2 = 0;
    elpa_deallocate(h, &e2);
    return err;
  }
  *out = h;
  return ELPA_OK;
}

/* ELPA's 2-stage real kernels as its header lists them: name, value, built in. */
#define OVL_ELPA_KROW(name, value, avail, ...) {#name, value, avail},
static const struct {
  const char *name;
  int value, avail;
} k_elpa_kernels[] = {ELPA_FOR_ALL_2STAGE_REAL_KERNELS(OVL_ELPA_KROW, 0)};
enum { NKERNELS = (int)(sizeof k_elpa_kernels / sizeof k_elpa_kernels[0]) };
static const char *elpa_kernel_name(int v) {
  for (int k = 0; k < NKERNELS; k++)
    if (k_elpa_kernels[k].value == v) return k_elpa_kernels[k].name + strlen("ELPA_2STAGE_REAL_");
  return "unknown";
}
#endif

/* One run of route r: the eigenpairs, then the density. *ts: the
 * eigensolver's time, *tt: with the density. Returns 0 or the solver's error
 * (info, ELPA error). COLLECTIVE. */
static int run_route(eig_ctx *c, eroute *e, route_id r, double *ts, double *tt) {
  int one = 1, info = 0, m = 0, nz = 0, il = 1, iu = c->nk;
  double vl = 0, vu = 0, abstol = 0, orfac = 1e-3;
  load_a(c);
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = ovl_time();
  switch (r) {
  case R_PDSYEVD:
    pdsyevd_("V", "U", &c->ni, c->a, &one, &one, c->desc, c->w, c->z, &one, &one, c->desc, c->work, &c->lwork, c->iwork,
             &c->liwork, &info);
    break;
  case R_PDSYEVR:
    pdsyevr_("V", "I", "U", &c->ni, c->a, &one, &one, c->desc, &vl, &vu, &il, &iu, &m, &nz, c->w, c->z, &one, &one,
             c->desc, c->work, &c->lwork, c->iwork, &c->liwork, &info);
    if (!info && (m != c->nk || nz != c->nk)) info = -1000;
    break;
  case R_PDSYEVX:
    pdsyevx_("V", "I", "U", &c->ni, c->a, &one, &one, c->desc, &vl, &vu, &il, &iu, &abstol, &m, &nz, c->w, &orfac, c->z,
             &one, &one, c->desc, c->work, &c->lwork, c->iwork, &c->liwork, c->ifail, c->iclustr, c->gap, &info);
    if (!info && (m != c->nk || nz != c->nk)) info = -1000;
    break;
  case R_ELPA1:
  case R_ELPA2:
#ifdef OVL_HAVE_ELPA
    elpa_eigenvectors(e->h, c->a, c->w, c->z, &info);
#endif
    break;
  case R_DSYEVR: { /* one rank: c->a, c->z, c->d are plain n x n, leading dimension n */
    int ld = c->ni, *isuppz = c->iwork + c->liwork - 2 * (c->nk > 0 ? c->nk : 1);
    int liw = c->liwork - 2 * (c->nk > 0 ? c->nk : 1);
    if (c->nk > 0)
      dsyevr_("V", "I", "U", &c->ni, c->a, &ld, &vl, &vu, &il, &iu, &abstol, &m, c->w, c->z, &ld, isuppz, c->work,
              &c->lwork, c->iwork, &liw, &info);
    if (!info && m != c->nk) info = -1000;
    *ts = ovl_time() - t0;
    if (c->nk > 0) cblas_dsyrk(CblasColMajor, CblasUpper, CblasNoTrans, c->ni, c->nk, 1.0, c->z, ld, 0.0, c->d, ld);
    else memset(c->d, 0, sizeof(double) * (size_t)(c->n * c->n));
    *tt = ovl_time() - t0;
    return info;
  }
  case NROUTES: break;
  }
  *ts = ovl_time() - t0;
  if (!info) density(c);
  *tt = ovl_time() - t0;
  return info;
}

/* Relative Frobenius error of the upper triangle of c->d (block-cyclic; one
 * rank: plain) against ref, and tr D - n_occ. COLLECTIVE. */
static void density_check(const eig_ctx *c, const double *ref, double *err, double *trace_err) {
  double s[3] = {0, 0, 0}; /* num, den, trace */
  for (int64_t j = 0; j < c->nq; j++)
    for (int64_t i = 0; i < c->mp; i++) {
      int64_t gi = g_of(i, c->nb, c->myrow, c->nprow), gj = g_of(j, c->nb, c->mycol, c->npcol);
      if (gi > gj) continue;
      double wgt = gi == gj ? 1.0 : 2.0, r = ref[gi + gj * c->n], x = c->d[i + j * c->lld] - r;
      s[0] += wgt * x * x, s[1] += wgt * r * r;
      if (gi == gj) s[2] += c->d[i + j * c->lld];
    }
  MPI_Allreduce(MPI_IN_PLACE, s, 3, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  *err = sqrt(s[0] / (s[1] > 0 ? s[1] : 1));
  *trace_err = s[2] - (double)c->nocc;
}

/* The whole density of c->d (upper triangle, mirrored) on every rank. COLLECTIVE. */
static void density_gather(const eig_ctx *c, double *out) {
  memset(out, 0, sizeof(double) * (size_t)(c->n * c->n));
  for (int64_t j = 0; j < c->nq; j++)
    for (int64_t i = 0; i < c->mp; i++) {
      int64_t gi = g_of(i, c->nb, c->myrow, c->nprow), gj = g_of(j, c->nb, c->mycol, c->npcol);
      if (gi <= gj) out[gi + gj * c->n] = out[gj + gi * c->n] = c->d[i + j * c->lld];
    }
  /* every entry of the upper triangle has one owner, who also writes its mirror (the diagonal once) */
  MPI_Allreduce(MPI_IN_PLACE, out, (int)(c->n * c->n), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
}

/* "pdsyevd,elpa2" or "all" -> e[r].on; routes that cannot run here are
 * skipped with a message on rank 0. LOCAL. */
static ovl_err parse_eig(const char *list, int P, int have_elpa, int rank, eroute *e) {
  char buf[256];
  snprintf(buf, sizeof buf, "%s", list);
  for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    int all = strcmp(tok, "all") == 0, found = all || strcmp(tok, "none") == 0;
    for (int r = 0; r < NROUTES; r++) {
      if (!all && strcmp(tok, k_routes[r]) != 0) continue;
      found = 1;
      const char *why = NULL;
      if ((r == R_ELPA1 || r == R_ELPA2) && !have_elpa)
        why = "this eig_peer was built without ELPA (pkg-config elpa or elpa_openmp, Open MPI)";
      if (r == R_DSYEVR && P != 1) why = "one-rank LAPACK runs on 1 rank only";
      if (why && rank == 0) fprintf(stderr, "eig_peer: %s skipped: %s\n", k_routes[r], why);
      e[r].on = why == NULL;
    }
    if (!found)
      return ovl_err_set(OVL_ERR_ARG,
                         "--eig: '%s' is not a route (pdsyevd, pdsyevr, pdsyevx, elpa1, elpa2, dsyevr, all)", tok);
  }
  return OVL_OK;
}

static ovl_err read_global(const char *path, double **out, int64_t *n) {
  ovl_grid2d g = NULL;
  ovl_dmat A = NULL;
  OVL_TRY(ovl_grid2d_create(MPI_COMM_WORLD, 0, 0, 0, &g));
  ovl_err rc = ovl_dmat_read(g, path, 1, &A);
  if (!rc) {
    *n = ovl_dmat_rows(A);
    rc = ovl_malloc(sizeof(double) * (size_t)(*n) * (size_t)(*n), out);
    rc = ovl_err_agree(MPI_COMM_WORLD, rc);
  }
  if (!rc) rc = ovl_dmat_gather(A, *out);
  if (!rc) OVL_MPI(MPI_Bcast(*out, (int)(*n * *n), MPI_DOUBLE, 0, MPI_COMM_WORLD));
  ovl_dmat_destroy(&A);
  ovl_grid2d_destroy(&g);
  return rc;
}

#ifdef OVL_HAVE_ELPA
/* The 2-stage real kernel of e->h: the one named by want, or (NULL, "auto")
 * the fastest of those the library was built with, each timed on two solves
 * (the better one, MAX over ranks) after one untimed solve. Its name goes to e->kernel, the
 * trials to trials. COLLECTIVE. */
static ovl_err elpa_pick_kernel(eig_ctx *c, eroute *e, const char *want, char *trials, size_t tlen) {
  int err = 0, best = -1, ts = 0;
  double tbest = INFINITY, dummy = 0;
  trials[0] = '\0';
  if (want && strcmp(want, "auto") != 0) {
    for (int k = 0; k < NKERNELS && best < 0; k++)
      if (strcasecmp(want, k_elpa_kernels[k].name + strlen("ELPA_2STAGE_REAL_")) == 0) best = k_elpa_kernels[k].value;
    if (best < 0) return ovl_err_set(OVL_ERR_ARG, "--elpa-kernel: '%s' is not an ELPA 2-stage real kernel", want);
    elpa_set(e->h, "real_kernel", best, &err);
    if (ovl_err_agree(MPI_COMM_WORLD, err != ELPA_OK ? OVL_ERR_ARG : OVL_OK))
      return ovl_err_set(OVL_ERR_ARG, "--elpa-kernel: ELPA refuses '%s' here (not built in, or not for this CPU)",
                         want);
  } else {
    run_route(c, e, R_ELPA2, &dummy, &dummy); /* the first call's set-up, untimed */
    for (int k = 0; k < NKERNELS; k++) {
      if (!k_elpa_kernels[k].avail || strstr(k_elpa_kernels[k].name, "GPU")) continue;
      elpa_set(e->h, "real_kernel", k_elpa_kernels[k].value, &err);
      int bad = err != ELPA_OK;
      MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
      if (bad) continue;
      double t = INFINITY;
      for (int rep = 0; rep < 2 && !bad; rep++) { /* the better of two solves, MAX over ranks */
        double tr = 0;
        bad = run_route(c, e, R_ELPA2, &tr, &dummy) != 0;
        MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        MPI_Allreduce(MPI_IN_PLACE, &tr, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        t = fmin(t, tr);
      }
      size_t l = strlen(trials);
      snprintf(trials + l, tlen - l, "%s%s %.3g s%s", l ? ", " : "", elpa_kernel_name(k_elpa_kernels[k].value), t,
               bad ? " (failed)" : "");
      if (!bad && t < tbest) tbest = t, best = k_elpa_kernels[k].value;
    }
    if (best < 0) return ovl_err_set(OVL_ERR_NUMERIC, "ELPA: no 2-stage real kernel runs here");
    elpa_set(e->h, "real_kernel", best, &err);
  }
  elpa_get(e->h, "real_kernel", &ts, &err);
  snprintf(e->kernel, sizeof e->kernel, "%s", elpa_kernel_name(err == ELPA_OK ? ts : best));
  return OVL_OK;
}
#endif

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int P = 1, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int help = 0, json = 0, iters = 3, warmup = 1, have_elpa = 0;
  int ndup = ovl_knob_default_int(OVL_KNOB_NDUP, OVL_FAMILY_SSC);
  int64_t nb = 32, nocc = -1;
  const char *fock = NULL, *grid = NULL, *algo = NULL, *plist = "canonical,sp2", *elist = NULL, *kname = NULL;
  const char *dprod = "syrk";
  static const char *const algos[] = {"alg5", "alg6", NULL};
  static const char *const dprods[] = {"syrk", "gemm", NULL};
  ovl_opt opts[] = {
      {"fock", 'F', OVL_OPT_STRING, &fock, "FILE", "Fock matrix (raw + .json, or .mtx)", NULL, 0, -1},
      {"nocc", 'k', OVL_OPT_I64, &nocc, "K", "occupied orbitals (default: meta.json beside the file)", NULL, 0, -1},
      {"nb", 0, OVL_OPT_SIZE, &nb, "NB", "ScaLAPACK block size", NULL, 1, 1 << 20},
      {"grid", 'g', OVL_OPT_STRING, &grid, "PxQ", "BLACS grid (default: the squarest)", NULL, 0, -1},
      {"eig", 'e', OVL_OPT_STRING, &elist, "LIST",
       "eigensolver routes: pdsyevd,pdsyevr,pdsyevx,elpa1,elpa2,dsyevr, all or none [default: pdsyevd, and elpa2 "
       "when built with ELPA]",
       NULL, 0, -1},
      {"elpa-kernel", 0, OVL_OPT_STRING, &kname, "NAME",
       "ELPA 2-stage real kernel (generic, generic_simple_block6, avx2_block6, ...) [default: auto, the fastest]", NULL,
       0, -1},
      {"dprod", 0, OVL_OPT_CHOICE, &dprod, "P", "density product C_occ C_occ^T: syrk (upper triangle) or gemm", dprods,
       0, -1},
      {"algo", 'a', OVL_OPT_CHOICE, &algo, "A", "SymmSquareCube algorithm (default: alg5 if P is a cube, else alg6)",
       algos, 0, -1},
      {"purify", 'm', OVL_OPT_STRING, &plist, "LIST",
       "purifications to time: METHOD[:PRECISION][@K],... (canonical, sp2, trs4; double, mixed), all (every method x "
       "precision) or none [default: canonical,sp2]",
       NULL, 0, -1},
      {"ndup", 'd', OVL_OPT_INT, &ndup, "N", "N_DUP of the SymmSquareCube phases", NULL, 1, OVL_LANES_MAX},
      {"iterations", 'i', OVL_OPT_INT, &iters, "I", "timed rounds", NULL, 1, MAXREP},
      {"warmup", 'x', OVL_OPT_INT, &warmup, "X", "untimed warm-up rounds", NULL, 0, 100},
      {"json", 'j', OVL_OPT_FLAG, &json, NULL, "one JSON object per method", NULL, 0, -1},
      {"help", 'h', OVL_OPT_FLAG, &help, NULL, "show this help", NULL, 0, -1},
  };
  int nopts = (int)(sizeof opts / sizeof opts[0]);
#ifdef OVL_HAVE_ELPA
  have_elpa = elpa_init(ELPA_API_VERSION) == ELPA_OK;
#endif
  eroute er[NROUTES];
  memset(er, 0, sizeof er);
  ovl_err rc = ovl_opts_parse(opts, nopts, argc, argv, 1, NULL);
  if (!rc && !help && !fock) rc = ovl_err_set(OVL_ERR_ARG, "--fock FILE is required");
  pcfg cfg[MAXCFG];
  int ncfg = 0;
  if (!rc && !help) rc = parse_purify(plist, cfg, &ncfg);
  if (!rc && !help) rc = parse_eig(elist ? elist : have_elpa ? "pdsyevd,elpa2" : "pdsyevd", P, have_elpa, rank, er);
  int p = 0, q = 0, nd = 0, dims[3] = {0, 0, 0};
  if (!rc && grid) {
    rc = ovl_parse_dims(grid, dims, &nd);
    if (!rc && (nd != 2 || dims[0] * dims[1] != P))
      rc = ovl_err_set(OVL_ERR_ARG, "--grid PxQ must have P*Q = %d ranks, got '%s'", P, grid);
    p = dims[0], q = dims[1];
  }
  if (rc || help) {
    if (rank == 0) {
      if (rc) fprintf(stderr, "eig_peer: error: %s\n", ovl_errmsg());
      else ovl_opts_help(stdout, "usage: mpiexec -n P eig_peer --fock F.raw [options]", opts, nopts);
    }
    MPI_Finalize();
    return rc ? 2 : 0;
  }
  if (!grid) {
    p = ovl_isqrt(P);
    while (P % p) p--;
    q = P / p;
  }
  int cube = ovl_icbrt(P);
  ovl_algo alg = OVL_ALGO_SSC5;
  if (algo) ovl_algo_parse(algo, &alg);
  else if (cube * cube * cube != P) alg = OVL_ALGO_SSC6;
  /* the 2.5D grid (alg6 and the symmetric square) of each entry: its ranks',
   * or the largest below with the rest of the ranks idle (2 ranks form none) */

  double *F = NULL, *Dref = NULL;
  int64_t n = 0, nref = 0;
  ovl_fock_meta meta = {.nocc = -1, .eig_min = NAN, .eig_max = NAN, .homo = NAN, .lumo = NAN};
  rc = read_global(fock, &F, &n);
  /* meta.json beside F: n_occ, and the HOMO/LUMO that sp2acc takes as the previous SCF cycle's estimates */
  if (!rc) rc = ovl_fock_meta_read(MPI_COMM_WORLD, fock, &meta);
  if (!rc) {
    if (nocc < 0) nocc = meta.nocc;
    if (nocc < 0 || nocc > n) rc = ovl_err_set(OVL_ERR_ARG, "n_occ must lie in [0, %" PRId64 "] (give --nocc)", n);
    rc = ovl_err_agree(MPI_COMM_WORLD, rc);
  }
  for (int k = 0; k < ncfg; k++)
    if (cfg[k].po.method == OVL_PURIFY_SP2ACC) cfg[k].po.homo = meta.homo, cfg[k].po.lumo = meta.lumo;
  if (!rc) { /* the reference density beside the Fock file, if any */
    char path[4096];
    snprintf(path, sizeof path, "%s", fock);
    char *slash = strrchr(path, '/');
    snprintf(slash ? slash + 1 : path, sizeof path - (size_t)(slash ? slash + 1 - path : 0), "dref.raw");
    FILE *f = rank == 0 ? fopen(path, "rb") : NULL;
    int have = f != NULL;
    if (f) fclose(f);
    MPI_Bcast(&have, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (have && read_global(path, &Dref, &nref) != OVL_OK) ovl_free(&Dref);
    if (Dref && nref != n) ovl_free(&Dref);
  }
  if (rc) {
    if (rank == 0) fprintf(stderr, "eig_peer: error: %s\n", ovl_errmsg());
    MPI_Finalize();
    return 1;
  }

  /* ---- ScaLAPACK set-up: the layout, and workspace for every route ---- */
  eig_ctx c;
  memset(&c, 0, sizeof c);
  c.F = F, c.n = n, c.nocc = nocc, c.nb = nb, c.ni = (int)n, c.nk = (int)nocc, c.syrk = strcmp(dprod, "syrk") == 0;
  Cblacs_get(-1, 0, &c.ctxt);
  Cblacs_gridinit(&c.ctxt, "Row", p, q);
  Cblacs_gridinfo(c.ctxt, &c.nprow, &c.npcol, &c.myrow, &c.mycol);
  c.mp = peer_numroc(n, nb, c.myrow, c.nprow), c.nq = peer_numroc(n, nb, c.mycol, c.npcol);
  c.lld = c.mp > 1 ? c.mp : 1;
  int desc[9] = {1, c.ctxt, (int)n, (int)n, (int)nb, (int)nb, 0, 0, (int)c.lld};
  memcpy(c.desc, desc, sizeof desc);
  size_t loc = (size_t)(c.lld * (c.nq > 0 ? c.nq : 1));
  ovl_malloc(sizeof(double) * loc, &c.a), ovl_malloc(sizeof(double) * loc, &c.z),
      ovl_malloc(sizeof(double) * loc, &c.d);
  ovl_malloc(sizeof(double) * (size_t)(n > 0 ? n : 1), &c.w);
  ovl_malloc(sizeof(int) * (size_t)(n > 0 ? n : 1), &c.ifail);
  ovl_malloc(sizeof(int) * (size_t)(2 * P), &c.iclustr), ovl_malloc(sizeof(double) * (size_t)P, &c.gap);
  {
    /* the queries write more than WORK(1) on some ranks (pdsyevr broadcasts a few entries): room for 16 */
    double wq[16] = {0}, vl = 0, vu = 0, abstol = 0, orfac = 1e-3;
    int iwq[16] = {0}, lq = -1, one = 1, info = 0, m = 0, nz = 0, il = 1, iu = c.nk > 0 ? c.nk : 1;
    double lw = 0;
    int liw = 0;
    if (er[R_PDSYEVD].on || !Dref) {
      pdsyevd_("V", "U", &c.ni, c.a, &one, &one, c.desc, c.w, c.z, &one, &one, c.desc, wq, &lq, iwq, &lq, &info);
      /* the query is known to come out short for small n (PDORMTR rejects it): add slack */
      lw = fmax(lw, 2 * wq[0] + (double)(n * nb) + 10000), liw = iwq[0] > liw ? iwq[0] : liw;
    }
    if (er[R_PDSYEVR].on) {
      pdsyevr_("V", "I", "U", &c.ni, c.a, &one, &one, c.desc, &vl, &vu, &il, &iu, &m, &nz, c.w, c.z, &one, &one, c.desc,
               wq, &lq, iwq, &lq, &info);
      lw = fmax(lw, 2 * wq[0] + 10000), liw = iwq[0] > liw ? iwq[0] : liw;
    }
    if (er[R_PDSYEVX].on) { /* slack for reorthogonalising clusters of eigenvalues */
      pdsyevx_("V", "I", "U", &c.ni, c.a, &one, &one, c.desc, &vl, &vu, &il, &iu, &abstol, &m, &nz, c.w, &orfac, c.z,
               &one, &one, c.desc, wq, &lq, iwq, &lq, c.ifail, c.iclustr, c.gap, &info);
      lw = fmax(lw, 2 * wq[0] + (double)(n * nb) + 10000), liw = iwq[0] > liw ? iwq[0] : liw;
    }
    if (er[R_DSYEVR].on) {
      int ld = c.ni > 1 ? c.ni : 1, isz[2];
      dsyevr_("V", "I", "U", &c.ni, c.a, &ld, &vl, &vu, &il, &iu, &abstol, &m, c.w, c.z, &ld, isz, wq, &lq, iwq, &lq,
              &info);
      lw = fmax(lw, wq[0] + 1000), liw = (iwq[0] > liw ? iwq[0] : liw) + 2 * iu; /* + dsyevr's ISUPPZ */
    }
    c.lwork = (int)lw + 1, c.liwork = liw + 1000;
    ovl_malloc(sizeof(double) * (size_t)c.lwork, &c.work);
    ovl_malloc(sizeof(int) * (size_t)c.liwork, &c.iwork);
  }
  const char *against = "dref";
  if (!Dref) { /* no dref.raw: the reference is a pdsyevd density, made before the rounds */
    double t = 0, tt = 0;
    against = "pdsyevd";
    rc = ovl_malloc(sizeof(double) * (size_t)(n * n > 0 ? n * n : 1), &Dref);
    rc = ovl_err_agree(MPI_COMM_WORLD, rc);
    int info = rc ? 0 : run_route(&c, &er[R_PDSYEVD], R_PDSYEVD, &t, &tt);
    if (!rc && info) rc = ovl_err_set(OVL_ERR_NUMERIC, "pdsyevd failed (info %d)", info);
    rc = ovl_err_agree(MPI_COMM_WORLD, rc);
    if (!rc) density_gather(&c, Dref);
  }
  char ktrials[512] = "";
#ifdef OVL_HAVE_ELPA
  if ((er[R_ELPA1].on || er[R_ELPA2].on) && n <= nb * ((p > q ? p : q) - 1)) { /* ELPA fails on an empty process */
    if (rank == 0)
      fprintf(stderr,
              "eig_peer: elpa1 and elpa2 skipped: ELPA needs a block on every process (n = %" PRId64
              " <= NB x (%d - 1)); give a smaller --nb\n",
              n, p > q ? p : q);
    er[R_ELPA1].on = er[R_ELPA2].on = 0;
  }
  for (int r = R_ELPA1; r <= R_ELPA2 && !rc; r++) {
    if (!er[r].on) continue;
    int ee = elpa_make(&c, r == R_ELPA1 ? ELPA_SOLVER_1STAGE : ELPA_SOLVER_2STAGE, &er[r].h);
    if (ee != ELPA_OK) rc = ovl_err_set(OVL_ERR_NUMERIC, "ELPA set-up failed: %s", elpa_strerr(ee));
    rc = ovl_err_agree(MPI_COMM_WORLD, rc);
    if (!rc && r == R_ELPA2) rc = elpa_pick_kernel(&c, &er[r], kname, ktrials, sizeof ktrials);
  }
#else
  (void)kname;
#endif

  /* ---- ovl set-up: one grid and F, D per purification (@K: on the active ranks) ---- */
  int cores = 0;
  if (!rc) rc = ovl_node_cores(MPI_COMM_WORLD, &cores);
  for (int k = 0; k < ncfg && !rc; k++) {
    pcfg *x = &cfg[k];
    MPI_Comm on = MPI_COMM_WORLD;
    int Pk = P;
    if (x->ppn) {
      rc = ovl_active_create(MPI_COMM_WORLD, x->ppn, 0, &x->act);
      if (rc) break;
      on = ovl_active_comm(x->act);
      Pk = ovl_active_is_active(x->act);
      MPI_Allreduce(MPI_IN_PLACE, &Pk, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
      int on_node = 1;
      MPI_Comm_size(ovl_active_node_comm(x->act), &on_node);
      x->kn = x->ppn < on_node ? x->ppn : on_node;
    }
    x->threads = ovl_blas_threads_get(); /* @K: the active ranks' count, set around each run */
    int sq = ovl_purify_uses_sq(x->po.method), gs = 0, gc = 0;
    ovl_algo ka = alg;
    if (sq) ovl_sq_grid_dims(Pk, &gs, &gc);
    else if (x->ppn) { /* the active ranks' own grid: alg5 on a cube, else alg6 */ int cb = ovl_icbrt(Pk);
      if (cb * cb * cb != Pk) ka = OVL_ALGO_SSC6;
    }
    if (!sq && ka == OVL_ALGO_SSC6)
      for (int Q = Pk; gs == 0 && Q > 0; Q--) ovl_grid25d_dims(Q, &gs, &gc);
    x->po.nocc = nocc, x->po.plan.algo = ka, x->po.plan.ndup = ndup;
    if (!isnan(x->eps)) { /* the block-sparse route: a 2D grid of all ranks */
      x->po.plan = ovl_plan_auto(OVL_FAMILY_BSMUL, n), x->po.plan.ndup = ndup;
      rc = ovl_grid2d_create(MPI_COMM_WORLD, 0, 0, 0, &x->g2);
      if (!rc) rc = ovl_dmat_create(x->g2, n, n, &x->F);
      if (!rc) rc = ovl_dmat_create(x->g2, n, n, &x->D);
      if (!rc) rc = ovl_dmat_scatter(x->F, F);
      rc = ovl_err_agree(MPI_COMM_WORLD, rc);
      snprintf(x->grid, sizeof x->grid, "bsumma");
      continue;
    }
    if (on != MPI_COMM_NULL) {
      rc = ovl_grid3d_create(on, gs, gc, OVL_GRID_ALLOW_IDLE, &x->g);
      if (!rc) rc = ovl_dmat_create(ovl_grid3d_plane(x->g), n, n, &x->F);
      if (!rc) rc = ovl_dmat_create(ovl_grid3d_plane(x->g), n, n, &x->D);
      if (!rc && ovl_grid3d_active(x->g)) rc = ovl_dmat_scatter(x->F, F); /* every plane, like plane 0 */
      if (!rc) ovl_grid3d_dims(x->g, &x->alg_s, &x->alg_c);
    }
    rc = ovl_err_agree(MPI_COMM_WORLD, rc);
    snprintf(x->grid, sizeof x->grid, "%dx%dx%d", x->alg_s, x->alg_s, x->alg_c);
  }

  /* ---- the rounds: every route once, then every purification once ---- */
  for (int it = 0; it < warmup + iters && !rc; it++) {
    int timed = it >= warmup, last = it == warmup + iters - 1;
    for (int r = 0; r < NROUTES && !rc; r++) {
      if (!er[r].on) continue;
      double ts = 0, tt = 0;
      int info = run_route(&c, &er[r], (route_id)r, &ts, &tt);
      if (info) rc = ovl_err_set(OVL_ERR_NUMERIC, "%s failed (info %d)", k_routes[r], info);
      rc = ovl_err_agree(MPI_COMM_WORLD, rc);
      if (rc) break;
      if (timed) er[r].t[it - warmup] = tt, er[r].ts[it - warmup] = ts;
      if (last) {
        density_check(&c, Dref, &er[r].err, &er[r].trace_err);
        er[r].energy = 0;
        for (int64_t e = 0; e < nocc; e++) er[r].energy += c.w[e];
      }
    }
    for (int k = 0; k < ncfg && !rc; k++) {
      MPI_Barrier(MPI_COMM_WORLD);
      double t3 = ovl_time();
      if (!isnan(cfg[k].eps)) rc = run_sparse(&cfg[k]);
      else if (cfg[k].act) { /* the active ranks purify with the node's cores, the others sleep */ int restore = 0;
        if (ovl_active_is_active(cfg[k].act)) cfg[k].threads = ovl_blas_threads_share(cores, cfg[k].kn, &restore);
        rc = ovl_active_run(cfg[k].act, run_purify, &cfg[k], NULL);
        if (restore) ovl_blas_threads_set(restore);
      } else {
        rc = ovl_purify(cfg[k].g, cfg[k].F, cfg[k].D, &cfg[k].po, &cfg[k].res);
      }
      if (timed) cfg[k].t[it - warmup] = ovl_time() - t3;
    }
  }
  /* ---- the purifications' errors against the reference ---- */
  double *dp = NULL;
  if (!rc && ncfg) rc = ovl_malloc(sizeof(double) * (size_t)(n * n > 0 ? n * n : 1), &dp);
  for (int k = 0; k < ncfg && !rc; k++) {
    rc = cfg[k].g2                                 ? ovl_dmat_gather(cfg[k].D, dp)
         : cfg[k].g && ovl_grid3d_active(cfg[k].g) ? ovl_dmat_gather(cfg[k].D, dp)
                                                   : OVL_OK; /* rank 0 is P(0,0,0) */
    if (rc) break;
    MPI_Bcast(dp, (int)(n * n), MPI_DOUBLE, 0, MPI_COMM_WORLD);
    double sk[2] = {0, 0};
    for (int64_t e = 0; e < n * n; e++) sk[0] += (dp[e] - Dref[e]) * (dp[e] - Dref[e]), sk[1] += Dref[e] * Dref[e];
    cfg[k].err = sqrt(sk[0] / (sk[1] > 0 ? sk[1] : 1));
  }
  rc = ovl_err_agree(MPI_COMM_WORLD, rc);
  int status = 0;
  if (rc) {
    if (rank == 0) fprintf(stderr, "eig_peer: error: %s\n", ovl_errmsg());
    status = 1;
  } else {
    ovl_stats st[NROUTES], sts[NROUTES], sp[MAXCFG];
    memset(st, 0, sizeof st), memset(sts, 0, sizeof sts);
    int base = -1, pass = 1, threads = ovl_blas_threads_get();
    for (int r = 0; r < NROUTES; r++) {
      if (!er[r].on) continue;
      if (base < 0) base = r; /* the ratio column's eigensolver: pdsyevd when it ran */
      ovl_stats_max_over_ranks(MPI_COMM_WORLD, er[r].t, iters, &st[r]);
      ovl_stats_max_over_ranks(MPI_COMM_WORLD, er[r].ts, iters, &sts[r]);
      if (!(er[r].err <= 1e-8) || !(fabs(er[r].trace_err) <= 1e-8 * (nocc > 1 ? (double)nocc : 1.0))) pass = 0;
    }
    for (int k = 0; k < ncfg; k++) {
      ovl_stats_max_over_ranks(MPI_COMM_WORLD, cfg[k].t, iters, &sp[k]);
      double tol = cfg[k].po.prec == OVL_PURIFY_PREC_MIXED ? 1e-5 : 1e-8;
      if (!(cfg[k].err <= tol)) pass = 0;
    }
    double tbase = base >= 0 ? st[base].median : NAN;
    char layout[NROUTES][40];
    for (int r = 0; r < NROUTES; r++)
      if (r == R_DSYEVR) snprintf(layout[r], sizeof layout[r], "LAPACK, 1 rank");
      else snprintf(layout[r], sizeof layout[r], "BLACS %dx%d NB=%" PRId64, c.nprow, c.npcol, nb);
    if (rank == 0 && json) {
      for (int r = 0; r < NROUTES; r++) {
        if (!er[r].on) continue;
        printf("{\"bench\":\"eig_peer\",\"method\":\"%s\",\"n\":%" PRId64 ",\"nocc\":%" PRId64 ",\"ranks\":%d,"
               "\"grid\":\"%dx%d\",\"nb\":%" PRId64 ",\"blas_threads\":%d,\"nev\":%" PRId64 ",\"dprod\":\"%s\","
               "\"t_min\":%.6e,\"t_median\":%.6e,\"t_solve_min\":%.6e,\"t_solve_median\":%.6e,",
               k_routes[r], n, nocc, P, r == R_DSYEVR ? 1 : c.nprow, r == R_DSYEVR ? 1 : c.npcol, nb, threads,
               r == R_PDSYEVD ? n : nocc,
               r == R_DSYEVR ? "dsyrk"
               : c.syrk      ? "pdsyrk"
                             : "pdgemm",
               st[r].min, st[r].median, sts[r].min, sts[r].median);
        if (r == R_PDSYEVD) printf("\"t_syevd_median\":%.6e,", sts[r].median);
        if (r == R_ELPA2) printf("\"kernel\":\"%s\",\"kernel_trials\":\"%s\",", er[r].kernel, ktrials);
        printf("\"relerr\":%.3e,\"trace_err\":%.3e,\"against\":\"%s\",\"energy\":%.10f}\n", er[r].err, er[r].trace_err,
               against, er[r].energy);
      }
      for (int k = 0; k < ncfg; k++) {
        pcfg *x = &cfg[k];
        printf("{\"bench\":\"eig_peer\",\"method\":\"purify\",\"purify\":\"%s\",\"precision\":\"%s\",\"n\":%" PRId64
               ",\"nocc\":%" PRId64 ",\"ranks\":%d,\"grid\":\"%s\",\"algo\":\"%s\",\"ndup\":%d,\"iterations\":%d,"
               "\"iter_single\":%d,\"products\":%d,\"stop_reason\":\"%s\",\"t_min\":%.6e,\"t_median\":%.6e,"
               "\"kernel_gflops\":%.3f,\"relerr\":%.3e,\"against\":\"%s\",\"energy\":%.10f,\"eig_over_purify\":%.4f,"
               "\"elpa_over_purify\":%.4f,\"ppn\":%d,\"blas_threads\":%d,",
               ovl_purify_method_name(x->po.method), ovl_purify_prec_name(x->po.prec), n, nocc, P, x->grid,
               ovl_purify_uses_sq(x->po.method) ? "square" : ovl_algo_name(x->po.plan.algo), ndup, x->res.iterations,
               x->res.iter_single, x->res.products, x->res.stop_reason, sp[k].min, sp[k].median, x->res.ssc_gflops,
               x->err, against, x->res.energy, base >= 0 ? tbase / sp[k].median : 0.0,
               er[R_ELPA2].on ? st[R_ELPA2].median / sp[k].median : 0.0, x->ppn, x->threads);
        if (isnan(x->eps)) printf("\"sparse\":null,\"over\":{");
        else printf("\"sparse\":%.3e,\"over\":{", x->eps);
        for (int pass2 = 0, first = 1; pass2 < 2; pass2++, first = 1) { /* median ratios, then min ratios */
          if (pass2) printf("},\"over_min\":{");
          for (int r = 0; r < NROUTES; r++)
            if (er[r].on) {
              printf("%s\"%s\":%.4f", first ? "" : ",", k_routes[r],
                     pass2 ? st[r].min / sp[k].min : st[r].median / sp[k].median);
              first = 0;
            }
        }
        printf("}}\n");
      }
    } else if (rank == 0) {
      printf("# eig_peer: %s, n=%" PRId64 " n_occ=%" PRId64 ", %d ranks; %d warm-up + %d timed repetitions, "
             "interleaved; time = MAX over ranks\n",
             fock, n, nocc, P, warmup, iters);
      printf("# %d BLAS thread(s) per rank; eigensolvers + density C_occ C_occ^T by %s\n", threads,
             c.syrk ? "pdsyrk (upper triangle)" : "pdgemm");
      if (er[R_ELPA2].on)
        printf("# elpa2 real kernel: %s%s%s%s\n", er[R_ELPA2].kernel, ktrials[0] ? " (the fastest of: " : "", ktrials,
               ktrials[0] ? ")" : "");
      printf("# %-16s %-22s %10s %10s %10s %9s %-7s %s\n", "method", "layout", "t_min(s)", "t_med(s)", "eig/this",
             "relerr", "vs", "tr(D)-n_occ");
      for (int r = 0; r < NROUTES; r++)
        if (er[r].on)
          printf("  %-16s %-22s %10.4e %10.4e %10.3f %9.2e %-7s %.1e\n", k_routes[r], layout[r], st[r].min,
                 st[r].median, tbase / st[r].median, er[r].err, against, er[r].trace_err);
      for (int k = 0; k < ncfg; k++)
        printf("  %-16s %s %-6s %2d it       %10.4e %10.4e %10.3f %9.2e %s\n", cfg[k].name, cfg[k].grid,
               ovl_purify_uses_sq(cfg[k].po.method) ? "square" : ovl_algo_name(cfg[k].po.plan.algo),
               cfg[k].res.iterations, sp[k].min, sp[k].median, tbase / sp[k].median, cfg[k].err, against);
      if (ncfg && base >= 0) {
        printf("# eigensolver time / purification time, same launch: median (min)\n# %-16s", "purify");
        for (int r = 0; r < NROUTES; r++)
          if (er[r].on) printf(" %15s", k_routes[r]);
        printf("\n");
        for (int k = 0; k < ncfg; k++) {
          printf("  %-16s", cfg[k].name);
          for (int r = 0; r < NROUTES; r++)
            if (er[r].on) printf("   %5.3f (%5.3f)", st[r].median / sp[k].median, st[r].min / sp[k].min);
          printf("\n");
        }
      }
      printf("# energies: %.10f (eig)", base >= 0 ? er[base].energy : NAN);
      if (ncfg) printf(", %.10f (%s)", cfg[0].res.energy, cfg[0].name);
      printf(": %s\n", pass ? "PASS" : "FAIL");
    }
    status = pass ? 0 : 1;
  }
#ifdef OVL_HAVE_ELPA
  for (int r = R_ELPA1; r <= R_ELPA2; r++)
    if (er[r].h) {
      int e2 = 0;
      elpa_deallocate(er[r].h, &e2);
    }
  if (have_elpa) {
    int ue = 0;
    elpa_uninit(&ue);
  }
#endif
  ovl_free(&c.a), ovl_free(&c.z), ovl_free(&c.d), ovl_free(&c.w), ovl_free(&c.work), ovl_free(&c.iwork);
  ovl_free(&c.ifail), ovl_free(&c.iclustr), ovl_free(&c.gap);
  ovl_free(&F), ovl_free(&Dref), ovl_free(&dp);
  for (int k = 0; k < ncfg; k++) {
    ovl_dmat_destroy(&cfg[k].F), ovl_dmat_destroy(&cfg[k].D);
    if (cfg[k].g) ovl_grid3d_destroy(&cfg[k].g);
    if (cfg[k].g2) ovl_grid2d_destroy(&cfg[k].g2);
    if (cfg[k].act) ovl_active_destroy(&cfg[k].act);
  }
  Cblacs_gridexit(c.ctxt);
  Cblacs_exit(1);
  MPI_Finalize();
  return status;
}
