/* Entries for bindings (ovl/dense.h): the matrices whole on rank 0
 * (scattered and gathered) or in row blocks (imported and exported with
 * ovl_dmat_import / ovl_dmat_export), moved onto the kernel's grid, computed
 * there with the planner's plan, and moved back. */
#include "ovl/dense.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ovl/dmat.h"
#include "ovl/entry.h"
#include "ovl/grid.h"
#include "ovl/kernels.h"
#include "ovl/plan.h"
#include "ovl/sq.h"

static MPI_Comm comm_of(const void *handle) { return handle ? *(const MPI_Comm *)handle : MPI_COMM_WORLD; }

static void info_init(ovl_dense_info *info) {
  if (info) memset(info, 0, sizeof *info);
}

/* The planner's choice for family f (with po: the family of po's method)
 * with an optional algorithm name and N_DUP as constraints, for the ranks
 * of comm. COLLECTIVE over comm. */
static ovl_err plan_for(MPI_Comm comm, ovl_family f, int64_t n, const char *algo, int ndup, const char *options,
                        ovl_purify_opts *po, ovl_err rc, ovl_plan *plan, ovl_dense_info *info) {
  *plan = ovl_plan_auto(f, n);
  if (!rc && algo && strcmp(algo, "auto") != 0) {
    rc = ovl_algo_parse(algo, &plan->algo);
    /* a purification takes the kernels of both its families (the method's decides below, as in ovl_pdpurify) */
    ovl_family af = rc ? f : ovl_algo_family(plan->algo);
    if (!rc && af != f && !(po && af == OVL_FAMILY_SQ))
      rc = ovl_err_set(OVL_ERR_ARG, "algorithm '%s' is not a %s algorithm", algo,
                       f == OVL_FAMILY_GEMM ? "multiplication" : "purification (alg3..alg6, sq)");
  }
  if (ndup > 0) plan->ndup = ndup;
  OVL_TRY(ovl_err_agree(comm, rc));
  /* the run-time options over the arguments: rank 0's $OVL_OPTIONS, then options */
  int print_plan = 0, rank = 0;
  OVL_TRY(ovl_options_runtime_print(comm, options, f, plan, po, &print_plan));
  if (po && po->method == OVL_PURIFY_MCWEENY)
    rc = ovl_err_set(OVL_ERR_ARG, "method mcweeny needs a chemical potential, not nocc: use sp2, trs4 or canonical");
  else if (plan->dropin_min > 0 || plan->dropin_mem > 0 || plan->dropin_route != OVL_ROUTE_AUTO)
    rc =
        ovl_err_set(OVL_ERR_ARG,
                    "--dropin-min, --dropin-mem and --dropin-route apply to ovl_pdgemm and the ScaLAPACK drop-in only: "
                    "refused rather than ignored");
  else if (po && (po->nocc < 0 || po->nocc > n))
    rc = ovl_err_set(OVL_ERR_ARG, "nocc = %" PRId64 " is out of range: 0 <= nocc <= n = %" PRId64, po->nocc, n);
  OVL_TRY(ovl_err_agree(comm, rc));
  if (po) f = ovl_purify_plan_family(po->method, plan); /* the family of the method's kernel */
  char why[OVL_PLAN_WHY] = "";
  OVL_TRY(ovl_plan_resolve(comm, f, plan, NULL, why, sizeof why));
  MPI_Comm_rank(comm, &rank);
  if (print_plan && rank == 0) {
    char d[256];
    ovl_plan_describe(plan, d, sizeof d);
    fprintf(stderr, "ovl_%s_dense: plan: %s (n=%" PRId64 "; %s)\n", po ? "purify" : "gemm", d, n, why);
  }
  if (info) {
    snprintf(info->why, sizeof info->why, "%s", why);
    ovl_plan_describe(plan, info->plan, sizeof info->plan);
  }
  return OVL_OK;
}

/* ---- where the caller's matrices are ------------------------------------- */

/* One matrix on the caller's side: whole, column-major with ld = its rows,
 * on rank 0 (rows == NULL), or in the distribution (rows, cols) with this
 * rank's part at a (leading dimension ld). */
typedef struct place {
  const ovl_axis *rows, *cols;
  double *a;
  int64_t ld;
} place;

/* X := the caller's matrix. COLLECTIVE over X's parent. */
static ovl_err place_in(ovl_dmat X, const place *p) {
  return p->rows ? ovl_dmat_import(X, p->rows, p->cols, p->a, p->ld) : ovl_dmat_scatter(X, p->a);
}

/* The caller's matrix := X. COLLECTIVE over X's parent. */
static ovl_err place_out(ovl_dmat X, const place *p) {
  return p->rows ? ovl_dmat_export(X, p->rows, p->cols, p->a, p->ld) : ovl_dmat_gather(X, p->a);
}

/* A matrix on `home`, an ovl_grid2d over the call's communicator whose
 * process (i, j) is rank i*q + j (the kernel's grid itself when that is 2D,
 * else one with the shape of the kernel grid's plane 0), and the kernel's
 * operand K on kgrid: the same handle when kgrid is home, a handle over the
 * same memory on plane 0 (on0), a block of its own on the other planes.
 * COLLECTIVE over comm. Errors (agreed): OVL_ERR_NOMEM. */
static ovl_err operand(MPI_Comm comm, ovl_grid2d home, ovl_grid2d kgrid, int on0, int64_t m, int64_t n, ovl_dmat *H,
                       ovl_dmat *K) {
  ovl_err rc = ovl_dmat_create(home, m, n, H);
  if (rc == OVL_OK && kgrid == home) *K = *H;
  else if (rc == OVL_OK) rc = on0 ? ovl_dmat_wrap(kgrid, m, n, ovl_dmat_data(*H), K) : ovl_dmat_create(kgrid, m, n, K);
  return ovl_err_agree(comm, rc);
}

static void operand_free(ovl_dmat *H, ovl_dmat *K) {
  if (*K != *H) ovl_dmat_destroy(K);
  *K = NULL;
  ovl_dmat_destroy(H);
}

/* ---- the row-block entries' agreement --------------------------------------- */

static int64_t str_hash(const char *s) {
  uint64_t h = 14695981039346656037ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return (int64_t)(h >> 1);
}

/* The row offsets (P + 1 of them, in off) of the row counts of every rank
 * (nrows: this rank's), which must sum to m. what names the matrix and
 * count the argument ("F", "nrows"). COLLECTIVE over comm; the same verdict
 * on every rank. Errors: OVL_ERR_ARG. */
static ovl_err row_offsets(MPI_Comm comm, int64_t nrows, int64_t m, const char *what, const char *count, int64_t *off) {
  int P = 0;
  OVL_MPI(MPI_Comm_size(comm, &P));
  OVL_MPI(MPI_Allgather(&nrows, 1, MPI_INT64_T, off + 1, 1, MPI_INT64_T, comm));
  off[0] = 0;
  int64_t sum = 0;
  for (int r = 0; r < P; r++) { /* negative counts were refused before, on their rank */
    sum = off[r + 1] > INT64_MAX - sum ? INT64_MAX : sum + off[r + 1];
    off[r + 1] = sum;
  }
  if (sum == m) return OVL_OK;
  char list[160] = "";
  if (P <= 16)
    for (int r = 0, used = 0; r < P && used < (int)sizeof list; r++)
      used += snprintf(list + used, sizeof list - (size_t)used, "%s%" PRId64, r ? ", " : " (", off[r + 1] - off[r]);
  return ovl_err_set(OVL_ERR_ARG, "the %s of the ranks sum to %" PRId64 "%s%s, but %s has %" PRId64 " rows", count, sum,
                     list, P <= 16 ? ")" : "", what, m);
}

/* ---- purification --------------------------------------------------------------- */

/* Local checks of the purification's arguments into po. */
static ovl_err purify_args(int64_t n, int64_t nocc, const char *method, const char *prec, double tol, int max_iter,
                           ovl_purify_opts *po) {
  *po = ovl_purify_opts_default();
  if (n < 1) return ovl_err_set(OVL_ERR_ARG, "the Fock matrix must be at least 1 x 1 (n = %" PRId64 ")", n);
  if (nocc < 0 || nocc > n)
    return ovl_err_set(OVL_ERR_ARG, "nocc = %" PRId64 " is out of range: 0 <= nocc <= n = %" PRId64, nocc, n);
  OVL_TRY(ovl_purify_method_parse(method ? method : "sp2", &po->method));
  OVL_CHECK(po->method != OVL_PURIFY_MCWEENY, OVL_ERR_ARG,
            "method mcweeny needs a chemical potential, not nocc: use sp2, trs4 or canonical");
  OVL_TRY(ovl_purify_prec_parse(prec ? prec : "double", &po->prec));
  OVL_CHECK(po->prec != OVL_PURIFY_PREC_MIXED || ovl_purify_uses_sq(po->method), OVL_ERR_ARG,
            "precision mixed needs method sp2 or trs4");
  OVL_CHECK(tol == 0.0 || (tol >= OVL_PURIFY_TOL_MIN && tol <= OVL_PURIFY_TOL_MAX), OVL_ERR_ARG,
            "tol must be 0 (the method's own stopping rule) or in [%g, %g]", OVL_PURIFY_TOL_MIN, OVL_PURIFY_TOL_MAX);
  po->nocc = nocc, po->tol = tol, po->max_iter = max_iter > 0 ? max_iter : 200;
  return OVL_OK;
}

/* Plan, move F in, purify, move D out. rc: the arguments' verdict (agreed
 * here). COLLECTIVE over comm. */
static ovl_err purify_run(MPI_Comm comm, int64_t n, const char *algo, int ndup, const char *options, ovl_err rc,
                          ovl_purify_opts *po, const place *fin, const place *dout, ovl_dense_info *info, double t0) {
  /* one plan, of the method's family (SymmSquareCube or the symmetric square), and its grid */
  OVL_TRY(plan_for(comm, OVL_FAMILY_SSC, n, algo, ndup, options, po, rc, &po->plan, info));
  int s = po->plan.s, c = po->plan.c;
  int64_t mem = ovl_purify_memory(n, s, c, po);
  rc = mem < 0 ? ovl_err_set(OVL_ERR_NOMEM, "n = %" PRId64 " needs 2^62 bytes or more per rank", n) : OVL_OK;
  OVL_TRY(ovl_err_agree(comm, rc));
  OVL_TRY(ovl_check_memory(comm, mem, 0));
  ovl_grid3d g = NULL;
  ovl_grid2d home = NULL;
  OVL_TRY(ovl_grid3d_create(comm, s, c, OVL_GRID_ALLOW_IDLE, &g));
  rc = ovl_grid2d_create(comm, s, s, OVL_GRID_ALLOW_IDLE, &home);
  if (rc != OVL_OK) {
    ovl_grid3d_destroy(&g);
    return rc;
  }
  int gi, gj, gk;
  ovl_grid3d_coords(g, &gi, &gj, &gk);
  int on0 = ovl_grid3d_active(g) && gk == 0;
  ovl_grid2d pl = ovl_grid3d_plane(g);
  ovl_dmat Fh = NULL, Dh = NULL, Fm = NULL, Dm = NULL;
  rc = operand(comm, home, pl, on0, n, n, &Fh, &Fm);
  if (!rc) rc = operand(comm, home, pl, on0, n, n, &Dh, &Dm);
  if (!rc) rc = place_in(Fh, fin);
  ovl_purify_result res;
  memset(&res, 0, sizeof res);
  if (!rc) rc = ovl_purify(g, Fm, Dm, po, &res);
  if (!rc) rc = place_out(Dh, dout);
  rc = ovl_err_agree(comm, rc);
  operand_free(&Fh, &Fm);
  operand_free(&Dh, &Dm);
  ovl_grid2d_destroy(&home);
  ovl_grid3d_destroy(&g);
  if (rc) return rc;
  if (info) {
    info->iterations = res.iterations, info->products = res.products;
    info->idem_err = res.idem_err, info->trace_err = res.trace_err, info->energy = res.energy;
    info->t_kernel = res.t_ssc;
    snprintf(info->stop_reason, sizeof info->stop_reason, "%s", res.stop_reason ? res.stop_reason : "");
    double t[2] = {ovl_time() - t0, info->t_kernel};
    OVL_MPI(MPI_Bcast(t, 2, MPI_DOUBLE, 0, comm));
    info->t_total = t[0], info->t_kernel = t[1];
  }
  return OVL_OK;
}

ovl_err ovl_purify_dense(const void *comm_handle, int64_t n, const double *F, int64_t nocc, const char *method,
                         const char *algo, int ndup, const char *prec, double tol, int max_iter, double *D,
                         const char *options, ovl_dense_info *info) {
  MPI_Comm comm = comm_of(comm_handle);
  OVL_TRY(ovl_check_comm(comm, "ovl_purify_dense"));
  info_init(info);
  double t0 = ovl_time();
  int rank = 0;
  OVL_MPI(MPI_Comm_rank(comm, &rank));
  int64_t sz[2] = {n, nocc};
  OVL_MPI(MPI_Bcast(sz, 2, MPI_INT64_T, 0, comm));
  n = sz[0], nocc = sz[1];
  ovl_purify_opts po;
  ovl_err rc = purify_args(n, nocc, method, prec, tol, max_iter, &po);
  if (!rc && rank == 0 && (!F || !D)) rc = ovl_err_set(OVL_ERR_ARG, "F and D must be given on rank 0");
  place fin = {NULL, NULL, (double *)F, n}, dout = {NULL, NULL, D, n};
  return purify_run(comm, n, algo, ndup, options, rc, &po, &fin, &dout, info, t0);
}

ovl_err ovl_purify_rows(const void *comm_handle, int64_t n, int64_t nrows, const double *F, int64_t ldf, int64_t nocc,
                        const char *method, const char *algo, int ndup, const char *prec, double tol, int max_iter,
                        double *D, int64_t ldd, const char *options, ovl_dense_info *info) {
  MPI_Comm comm = comm_of(comm_handle);
  OVL_TRY(ovl_check_comm(comm, "ovl_purify_rows"));
  info_init(info);
  double t0 = ovl_time();
  int rank = 0, P = 0;
  OVL_MPI(MPI_Comm_rank(comm, &rank));
  OVL_MPI(MPI_Comm_size(comm, &P));
  ovl_purify_opts po;
  ovl_err rc = OVL_OK;
  int64_t ld_min = nrows > 1 ? nrows : 1;
  if (nrows < 0)
    rc = ovl_err_set(OVL_ERR_ARG, "rank %d passes nrows = %" PRId64 ": a row count must be >= 0", rank, nrows);
  else rc = purify_args(n, nocc, method, prec, tol, max_iter, &po);
  if (!rc && (ldf < ld_min || ldd < ld_min))
    rc =
        ovl_err_set(OVL_ERR_ARG, "rank %d: ldf = %" PRId64 " and ldd = %" PRId64 " must be >= max(1, nrows) = %" PRId64,
                    rank, ldf, ldd, ld_min);
  else if (!rc && nrows > 0 && (!F || !D))
    rc = ovl_err_set(OVL_ERR_ARG, "rank %d holds %" PRId64 " rows but passes a NULL F or D", rank, nrows);
  /* what decides the run must be the same on every rank */
  int64_t key[] = {n,
                   nocc,
                   str_hash(method ? method : "sp2"),
                   str_hash(algo ? algo : "auto"),
                   ndup > 0 ? ndup : 0,
                   str_hash(prec ? prec : "double"),
                   0,
                   max_iter > 0 ? max_iter : 200};
  memcpy(&key[6], &tol, sizeof tol);
  static const char *const names[] = {"n", "nocc", "=method", "=algo", "ndup", "=prec", "=tol", "max_iter"};
  OVL_TRY(ovl_err_agree_same(comm, rc, key, names, (int)(sizeof key / sizeof key[0])));
  int64_t *off = NULL, coff[2] = {0, n};
  OVL_TRY(ovl_err_agree(comm, ovl_malloc(sizeof(int64_t) * (size_t)(P + 1), &off)));
  rc = row_offsets(comm, nrows, n, "F", "row counts (nrows)", off);
  ovl_axis ra = {P, 0, 0, off}, ca = {1, 0, 0, coff};
  place fin = {&ra, &ca, (double *)F, ldf}, dout = {&ra, &ca, D, ldd};
  if (!rc) rc = purify_run(comm, n, algo, ndup, options, OVL_OK, &po, &fin, &dout, info, t0);
  ovl_free(&off);
  return rc;
}

/* ---- products ---------------------------------------------------------------------- */

/* Plan, move A and B in, multiply, move C out. rc: the arguments' verdict
 * (agreed here). COLLECTIVE over comm. */
static ovl_err gemm_run(MPI_Comm comm, int64_t m, int64_t n, int64_t k, const char *algo, const char *options,
                        ovl_err rc, const place *pa, const place *pb, const place *pc, ovl_dense_info *info,
                        double t0) {
  int64_t big = m > n ? (m > k ? m : k) : (n > k ? n : k);
  ovl_plan plan;
  OVL_TRY(plan_for(comm, OVL_FAMILY_GEMM, big, algo, 0, options, NULL, rc, &plan, info));
  ovl_grid2d g = NULL, home = NULL;
  ovl_grid3d g3 = NULL;
  OVL_TRY(ovl_plan_grids(comm, &plan, OVL_GRID_ALLOW_IDLE, &g, &g3));
  int gp = 1, gq = 1, gc = 1, on0 = 1;
  if (g3) {
    int gi, gj, gk;
    ovl_grid3d_dims(g3, &gp, &gc), gq = gp;
    ovl_grid3d_coords(g3, &gi, &gj, &gk);
    on0 = ovl_grid3d_active(g3) && gk == 0;
  } else {
    ovl_grid2d_dims(g, &gp, &gq);
  }
  int64_t mem = ovl_mm_memory(&plan, 'N', 'N', m, n, k, gp, gq, gc);
  rc = mem < 0 ? ovl_err_set(OVL_ERR_NOMEM, "the product needs 2^62 bytes or more per rank") : OVL_OK;
  rc = ovl_err_agree(comm, rc);
  if (!rc) rc = ovl_check_memory(comm, mem, 0);
  if (g3) {
    if (!rc) rc = ovl_grid2d_create(comm, gp, gp, OVL_GRID_ALLOW_IDLE, &home);
  } else {
    home = g;
  }
  ovl_dmat Ah = NULL, Bh = NULL, Ch = NULL, Am = NULL, Bm = NULL, Cm = NULL;
  if (!rc) rc = operand(comm, home, g, on0, m, k, &Ah, &Am);
  if (!rc) rc = operand(comm, home, g, on0, k, n, &Bh, &Bm);
  if (!rc) rc = operand(comm, home, g, on0, m, n, &Ch, &Cm);
  if (!rc) rc = place_in(Ah, pa);
  if (!rc) rc = place_in(Bh, pb);
  ovl_kstats ks;
  memset(&ks, 0, sizeof ks);
  if (!rc) rc = ovl_gemm('N', 'N', 1.0, Am, Bm, 0.0, Cm, &plan, g3, &ks);
  if (!rc) rc = place_out(Ch, pc);
  rc = ovl_err_agree(comm, rc);
  operand_free(&Ah, &Am);
  operand_free(&Bh, &Bm);
  operand_free(&Ch, &Cm);
  if (g3) {
    ovl_grid2d_destroy(&home);
    ovl_grid3d_destroy(&g3);
  } else {
    ovl_grid2d_destroy(&g);
  }
  if (rc) return rc;
  if (info) {
    info->products = 1;
    double t[2] = {ovl_time() - t0, ks.t_total};
    OVL_MPI(MPI_Bcast(t, 2, MPI_DOUBLE, 0, comm));
    info->t_total = t[0], info->t_kernel = t[1];
  }
  return OVL_OK;
}

static ovl_err gemm_sizes(int64_t m, int64_t n, int64_t k) {
  OVL_CHECK(m >= 1 && n >= 1 && k >= 1, OVL_ERR_ARG,
            "the sizes must be >= 1 (m = %" PRId64 ", n = %" PRId64 ", k = %" PRId64 ")", m, n, k);
  return OVL_OK;
}

ovl_err ovl_gemm_dense(const void *comm_handle, int64_t m, int64_t n, int64_t k, const double *A, const double *B,
                       double *C, const char *algo, const char *options, ovl_dense_info *info) {
  MPI_Comm comm = comm_of(comm_handle);
  OVL_TRY(ovl_check_comm(comm, "ovl_gemm_dense"));
  info_init(info);
  double t0 = ovl_time();
  int rank = 0;
  OVL_MPI(MPI_Comm_rank(comm, &rank));
  int64_t sz[3] = {m, n, k};
  OVL_MPI(MPI_Bcast(sz, 3, MPI_INT64_T, 0, comm));
  m = sz[0], n = sz[1], k = sz[2];
  ovl_err rc = gemm_sizes(m, n, k);
  if (!rc && rank == 0 && (!A || !B || !C)) rc = ovl_err_set(OVL_ERR_ARG, "A, B and C must be given on rank 0");
  place pa = {NULL, NULL, (double *)A, m}, pb = {NULL, NULL, (double *)B, k}, pc = {NULL, NULL, C, m};
  return gemm_run(comm, m, n, k, algo, options, rc, &pa, &pb, &pc, info, t0);
}

ovl_err ovl_gemm_rows(const void *comm_handle, int64_t m, int64_t n, int64_t k, int64_t mrows, const double *A,
                      int64_t lda, int64_t krows, const double *B, int64_t ldb, double *C, int64_t ldc,
                      const char *algo, const char *options, ovl_dense_info *info) {
  MPI_Comm comm = comm_of(comm_handle);
  OVL_TRY(ovl_check_comm(comm, "ovl_gemm_rows"));
  info_init(info);
  double t0 = ovl_time();
  int rank = 0, P = 0;
  OVL_MPI(MPI_Comm_rank(comm, &rank));
  OVL_MPI(MPI_Comm_size(comm, &P));
  ovl_err rc = OVL_OK;
  int64_t mmin = mrows > 1 ? mrows : 1, kmin = krows > 1 ? krows : 1;
  if (mrows < 0 || krows < 0)
    rc = ovl_err_set(OVL_ERR_ARG, "rank %d passes mrows = %" PRId64 ", krows = %" PRId64 ": a row count must be >= 0",
                     rank, mrows, krows);
  else rc = gemm_sizes(m, n, k);
  if (!rc && (lda < mmin || ldc < mmin || ldb < kmin))
    rc = ovl_err_set(OVL_ERR_ARG,
                     "rank %d: lda = %" PRId64 ", ldc = %" PRId64 " must be >= max(1, mrows) = %" PRId64
                     " and ldb = %" PRId64 " >= max(1, krows) = %" PRId64,
                     rank, lda, ldc, mmin, ldb, kmin);
  else if (!rc && ((mrows > 0 && (!A || !C)) || (krows > 0 && !B)))
    rc = ovl_err_set(OVL_ERR_ARG,
                     "rank %d holds rows (mrows = %" PRId64 ", krows = %" PRId64 ") but passes a NULL A, B or C", rank,
                     mrows, krows);
  int64_t key[] = {m, n, k, str_hash(algo ? algo : "auto")};
  static const char *const names[] = {"m", "n", "k", "=algo"};
  OVL_TRY(ovl_err_agree_same(comm, rc, key, names, 4));
  int64_t *off = NULL, coff[4] = {0, k, 0, n};
  OVL_TRY(ovl_err_agree(comm, ovl_malloc(sizeof(int64_t) * (size_t)(2 * P + 2), &off)));
  rc = row_offsets(comm, mrows, m, "A", "row counts of A (mrows)", off);
  if (!rc) rc = row_offsets(comm, krows, k, "B", "row counts of B (krows)", off + P + 1);
  ovl_axis ra = {P, 0, 0, off}, rb = {P, 0, 0, off + P + 1}, cak = {1, 0, 0, coff}, cbn = {1, 0, 0, coff + 2};
  place pa = {&ra, &cak, (double *)A, lda}, pb = {&rb, &cbn, (double *)B, ldb}, pc = {&ra, &cbn, C, ldc};
  if (!rc) rc = gemm_run(comm, m, n, k, algo, options, OVL_OK, &pa, &pb, &pc, info, t0);
  ovl_free(&off);
  return rc;
}
