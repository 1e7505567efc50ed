/* Whole-matrix entries for bindings: scatter from rank 0, run, gather back
 * (ovl/dense.h). */
#include "ovl/dense.h"

#include <inttypes.h>
#include <string.h>

#include "ovl/dist.h"
#include "ovl/grid.h"
#include "ovl/kernels.h"
#include "ovl/plan.h"
#include "ovl/purify.h"
#include "ovl/sq.h"

static MPI_Comm comm_of(const void *handle) { return handle ? *(const MPI_Comm *)handle : MPI_COMM_WORLD; }

static void info_init(ovl_dense_info *info) {
  if (info) memset(info, 0, sizeof *info);
}

/* The planner's choice for family f with an optional algorithm name and
 * N_DUP as constraints, for P ranks (0: all of comm). COLLECTIVE over comm. */
static ovl_err plan_for(MPI_Comm comm, ovl_family f, int64_t n, int P, const char *algo, int ndup, ovl_err rc,
                        ovl_plan *plan, ovl_dense_info *info) {
  *plan = ovl_plan_auto(f, n);
  plan->P = P;
  if (!rc && algo && strcmp(algo, "auto") != 0) {
    rc = ovl_algo_parse(algo, &plan->algo);
    if (!rc && ovl_algo_family(plan->algo) != f)
      rc = ovl_err_set(OVL_ERR_ARG, "algorithm '%s' is not a %s algorithm", algo,
                       f == OVL_FAMILY_GEMM ? "multiplication" : "SymmSquareCube");
  }
  if (ndup > 0) plan->ndup = ndup;
  OVL_TRY(ovl_err_agree(comm, rc));
  char why[OVL_PLAN_WHY] = "";
  OVL_TRY(ovl_plan_resolve(comm, f, plan, NULL, why, sizeof why));
  if (info) {
    snprintf(info->why, sizeof info->why, "%s", why);
    ovl_plan_str(plan, info->plan, sizeof info->plan);
  }
  return OVL_OK;
}

ovl_err ovl_purify_dense(const void *comm_handle, int64_t n, const double *F, int64_t nocc, const char *method,
                         const char *algo, int ndup, const char *prec, double tol, int max_iter, double *D,
                         ovl_dense_info *info) {
  MPI_Comm comm = comm_of(comm_handle);
  info_init(info);
  double t0 = ovl_time();
  int rank = 0, P = 0;
  OVL_MPI(MPI_Comm_rank(comm, &rank));
  OVL_MPI(MPI_Comm_size(comm, &P));
  int64_t sz[2] = {n, nocc};
  OVL_MPI(MPI_Bcast(sz, 2, MPI_INT64_T, 0, comm));
  n = sz[0], nocc = sz[1];
  ovl_purify_opts po = ovl_purify_opts_default();
  ovl_err rc = OVL_OK;
  if (n < 1) rc = ovl_err_set(OVL_ERR_ARG, "the Fock matrix must be at least 1 x 1 (n = %" PRId64 ")", n);
  else if (nocc < 0 || nocc > n)
    rc = ovl_err_set(OVL_ERR_ARG, "nocc = %" PRId64 " is out of range: 0 <= nocc <= n = %" PRId64, nocc, n);
  else if (rank == 0 && (!F || !D)) rc = ovl_err_set(OVL_ERR_ARG, "F and D must be given on rank 0");
  if (!rc) rc = ovl_purify_method_parse(method ? method : "sp2", &po.method);
  if (!rc && po.method == OVL_PURIFY_MCWEENY)
    rc = ovl_err_set(OVL_ERR_ARG, "method mcweeny needs a chemical potential, not nocc: use sp2, trs4 or canonical");
  if (!rc) rc = ovl_purify_prec_parse(prec ? prec : "double", &po.prec);
  if (!rc && po.prec == OVL_PURIFY_PREC_MIXED && !ovl_purify_uses_sq(po.method))
    rc = ovl_err_set(OVL_ERR_ARG, "precision mixed needs method sp2 or trs4");
  if (!rc && tol != 0.0 && !(tol >= OVL_PURIFY_TOL_MIN && tol <= OVL_PURIFY_TOL_MAX))
    rc = ovl_err_set(OVL_ERR_ARG, "tol must be 0 (the method's own stopping rule) or in [%g, %g]", OVL_PURIFY_TOL_MIN,
                     OVL_PURIFY_TOL_MAX);
  ovl_err prc = plan_for(comm, OVL_FAMILY_SSC, n, 0, algo, ndup, rc, &po.plan, info);
  /* SP2 and TRS4 run on any rank count (the symmetric square's grid, 1 x 1 x P
   * when no 2.5D grid fits); the planner, which then only chooses N_DUP, is
   * asked for the largest rank count SymmSquareCube has a grid for */
  for (int Q = P - 1; prc == OVL_ERR_GRID && ovl_purify_uses_sq(po.method) && Q >= 1; Q--) {
    ovl_err_clear();
    prc = plan_for(comm, OVL_FAMILY_SSC, n, Q, algo, ndup, OVL_OK, &po.plan, info);
  }
  OVL_TRY(prc);
  po.nocc = nocc, po.tol = tol, po.max_iter = max_iter > 0 ? max_iter : 200;
  /* the grid: the plan's (canonical), or the symmetric square's (sp2, trs4) */
  int s = po.plan.s, c = po.plan.c;
  if (ovl_purify_uses_sq(po.method)) ovl_sq_grid_dims(P, &s, &c);
  int64_t mem = ovl_purify_memory(n, s, c, &po);
  rc = mem < 0 ? ovl_err_set(OVL_ERR_NOMEM, "n = %" PRId64 " needs 2^62 bytes or more per rank", n) : OVL_OK;
  OVL_TRY(ovl_err_agree(comm, rc));
  OVL_TRY(ovl_check_memory(comm, mem, 0));
  ovl_grid3d g = NULL;
  OVL_TRY(ovl_grid3d_create(comm, s, c, OVL_GRID_ALLOW_IDLE, &g));
  int gi, gj, gk;
  ovl_grid3d_coords(g, &gi, &gj, &gk);
  int on0 = ovl_grid3d_active(g) && gk == 0; /* plane 0's rank 0 is rank 0 of comm */
  ovl_grid2d pl = ovl_grid3d_plane(g);
  ovl_dmat Fm = NULL, Dm = NULL;
  rc = ovl_dmat_create(pl, n, n, &Fm);
  if (!rc) rc = ovl_dmat_create(pl, n, n, &Dm);
  rc = ovl_err_agree(comm, rc);
  if (!rc && on0) rc = ovl_dmat_scatter(Fm, F);
  rc = ovl_err_agree(comm, rc);
  ovl_purify_result res;
  memset(&res, 0, sizeof res);
  if (!rc) rc = ovl_purify(g, Fm, Dm, &po, &res);
  if (!rc && on0) rc = ovl_dmat_gather(Dm, D);
  rc = ovl_err_agree(comm, rc);
  ovl_dmat_destroy(&Fm);
  ovl_dmat_destroy(&Dm);
  ovl_grid3d_destroy(&g);
  if (rc) return rc;
  if (info) {
    info->iterations = res.iterations, info->products = res.products;
    info->idem_err = res.idem_err, info->trace_err = res.trace_err, info->energy = res.energy;
    info->t_kernel = res.t_ssc;
    snprintf(info->stop_reason, sizeof info->stop_reason, "%s", res.stop_reason ? res.stop_reason : "");
    info->t_total = ovl_time() - t0;
    double t[2] = {info->t_total, info->t_kernel};
    OVL_MPI(MPI_Bcast(t, 2, MPI_DOUBLE, 0, comm));
    info->t_total = t[0], info->t_kernel = t[1];
  }
  return OVL_OK;
}

ovl_err ovl_gemm_dense(const void *comm_handle, int64_t m, int64_t n, int64_t k, const double *A, const double *B,
                       double *C, const char *algo, ovl_dense_info *info) {
  MPI_Comm comm = comm_of(comm_handle);
  info_init(info);
  double t0 = ovl_time();
  int rank = 0;
  OVL_MPI(MPI_Comm_rank(comm, &rank));
  int64_t sz[3] = {m, n, k};
  OVL_MPI(MPI_Bcast(sz, 3, MPI_INT64_T, 0, comm));
  m = sz[0], n = sz[1], k = sz[2];
  ovl_err rc = OVL_OK;
  if (m < 1 || n < 1 || k < 1)
    rc =
        ovl_err_set(OVL_ERR_ARG, "the sizes must be >= 1 (m = %" PRId64 ", n = %" PRId64 ", k = %" PRId64 ")", m, n, k);
  else if (rank == 0 && (!A || !B || !C)) rc = ovl_err_set(OVL_ERR_ARG, "A, B and C must be given on rank 0");
  int64_t big = m > n ? (m > k ? m : k) : (n > k ? n : k);
  ovl_plan plan;
  OVL_TRY(plan_for(comm, OVL_FAMILY_GEMM, big, 0, algo, 0, rc, &plan, info));
  ovl_grid2d g = NULL;
  ovl_grid3d g3 = NULL;
  OVL_TRY(ovl_plan_grids(comm, &plan, OVL_GRID_ALLOW_IDLE, &g, &g3));
  int gp = 1, gq = 1, gc = 1, part = 1; /* part: takes part in scatter and gather */
  if (g3) {
    int gi, gj, gk;
    ovl_grid3d_dims(g3, &gp, &gc), gq = gp;
    ovl_grid3d_coords(g3, &gi, &gj, &gk);
    part = ovl_grid3d_active(g3) && gk == 0;
  } else {
    ovl_grid2d_dims(g, &gp, &gq);
  }
  int64_t mem = ovl_mm_memory(&plan, 'N', 'N', m, n, k, gp, gq, gc);
  rc = mem < 0 ? ovl_err_set(OVL_ERR_NOMEM, "the product needs 2^62 bytes or more per rank") : OVL_OK;
  rc = ovl_err_agree(comm, rc);
  if (!rc) rc = ovl_check_memory(comm, mem, 0);
  ovl_dmat Am = NULL, Bm = NULL, Cm = NULL;
  if (!rc) rc = ovl_dmat_create(g, m, k, &Am);
  if (!rc) rc = ovl_dmat_create(g, k, n, &Bm);
  if (!rc) rc = ovl_dmat_create(g, m, n, &Cm);
  rc = ovl_err_agree(comm, rc);
  if (!rc && part) rc = ovl_dmat_scatter(Am, A);
  if (!rc && part) rc = ovl_dmat_scatter(Bm, B);
  rc = ovl_err_agree(comm, rc);
  ovl_kstats ks;
  memset(&ks, 0, sizeof ks);
  if (!rc) rc = ovl_gemm('N', 'N', 1.0, Am, Bm, 0.0, Cm, &plan, g3, &ks);
  if (!rc && part) rc = ovl_dmat_gather(Cm, C);
  rc = ovl_err_agree(comm, rc);
  ovl_dmat_destroy(&Am);
  ovl_dmat_destroy(&Bm);
  ovl_dmat_destroy(&Cm);
  if (g3) ovl_grid3d_destroy(&g3);
  else ovl_grid2d_destroy(&g);
  if (rc) return rc;
  if (info) {
    info->products = 1;
    double t[2] = {ovl_time() - t0, ks.t_total};
    OVL_MPI(MPI_Bcast(t, 2, MPI_DOUBLE, 0, comm));
    info->t_total = t[0], info->t_kernel = t[1];
  }
  return OVL_OK;
}
