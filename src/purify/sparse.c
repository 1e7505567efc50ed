/* Purification of a block-sparse F (ovl/bsmat.h): SP2, SP2-ACC and TRS4 with
 * every product and sum filtered by a threshold, so that the cost follows
 * the density matrix's nonzero blocks rather than n^3. The steps and the
 * stopping rule are the dense iteration's (rules.c). */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "ovl/bsmat.h"
#include "ovl/plan.h"
#include "ovl/purify.h"
#include "purify_impl.h"
#include "sparse/bsmul3.h"

/* One iteration for both grids: the 2D one (ovl_purify_sparse: the products
 * by ovl_bsmat_multiply) and the 2.5D one (ovl_purify_sparse3: the matrices
 * on the 3D grid's planes, the products by ovl_bsmat_multiply3). On a 3D
 * grid every plane runs the same steps on its own matrices (planes k > 0
 * on workspace, overwritten by each product's replication), and the
 * scalars that decide the iteration (bounds, traces, norms, counts) are
 * plane 0's, broadcast along grd_comm, so that every rank takes the same
 * decisions. */
typedef struct sp_ctx {
  const char *fn;
  MPI_Comm parent; /* errors agreed, stop requests reduced, over it */
  ovl_grid3d g3;   /* NULL: the 2D purification */
} sp_ctx;

static ovl_err product(const sp_ctx *x, ovl_bsmat A, ovl_bsmat B, double eps, int ndup, ovl_bsmat C,
                       ovl_bsmul_stats *st) {
  return x->g3 ? ovl_i_bsmat_multiply3_active(x->g3, A, B, eps, ndup, C, st)
               : ovl_bsmat_multiply(A, B, eps, ndup, C, st);
}

/* v[0..k-1] := plane 0's values (nothing to do on a 2D grid or one plane). */
static ovl_err share(const sp_ctx *x, double *v, int k) {
  MPI_Comm grd = x->g3 ? ovl_grid3d_grd_comm(x->g3) : MPI_COMM_NULL;
  if (grd == MPI_COMM_NULL) return OVL_OK;
  int e = MPI_Bcast(v, k, MPI_DOUBLE, 0, grd);
  return e == MPI_SUCCESS ? OVL_OK : ovl_err_mpi(e, "MPI_Bcast");
}

/* The floor of the idempotency error that filtering leaves: each product
 * drops blocks of norm below eps, at most 2 eps sqrt(blocks) of Frobenius
 * norm (ovl_bsmat_multiply), and the iteration cannot get below about that.
 * The rounding-floor test runs below this level (never below 1e-6, the
 * dense iteration's, nor above 1e-2, where SP2 is not yet in its quadratic
 * regime); the trace test accepts the same. */
static double filter_floor(double eps, int64_t blocks) {
  return fmin(1e-2, fmax(1e-6, 4.0 * eps * sqrt((double)(blocks > 0 ? blocks : 1))));
}

/* D := (hmax I - F) / (hmax - hmin), filtered. LOCAL. */
static ovl_err d0(ovl_bsmat F, ovl_bsmat D, double hmin, double hmax, double eps) {
  double w = hmax - hmin > 0 ? hmax - hmin : 1.0;
  OVL_TRY(ovl_bsmat_copy(D, F));
  OVL_TRY(ovl_bsmat_shift(D, -1.0 / w, hmax / w));
  return ovl_bsmat_filter(D, eps);
}

/* TRS4's step from D and D2 = D^2 (T scratch): gamma from tr D^2, tr D^3 =
 * <D^2, D>, tr D^4 = <D^2, D^2>; in [0, 6] the step is D^2 M with
 * M = gamma I + (4 - 2 gamma) D + (gamma - 3) D^2, one more product. */
static ovl_err trs4_step(const sp_ctx *x, ovl_bsmat D, ovl_bsmat D2, ovl_bsmat T, double Ne, double eps, int ndup,
                         ovl_purify_result *R) {
  double tr[3] = {0.0, 0.0, 0.0};
  ovl_err rc = ovl_bsmat_trace(D2, &tr[0]);
  if (rc == OVL_OK) rc = ovl_bsmat_dot(D2, D, &tr[1]);
  if (rc == OVL_OK) rc = ovl_bsmat_dot(D2, D2, &tr[2]);
  OVL_TRY(ovl_err_agree(x->parent, rc)); /* (every plane, before the planes exchange) */
  OVL_TRY(share(x, tr, 3));
  const double g = ovl_i_trs4_gamma(Ne, tr[0], tr[1], tr[2]);
  if (g > 6.0) return ovl_bsmat_axpby(2.0, D, -1.0, D2, eps, D);
  if (g < 0.0) return ovl_bsmat_copy(D, D2);
  rc = ovl_bsmat_axpby(4.0 - 2.0 * g, D, g - 3.0, D2, 0.0, T);
  if (rc == OVL_OK) rc = ovl_bsmat_shift(T, 1.0, g);
  OVL_TRY(ovl_err_agree(x->parent, rc)); /* (before the product, which every rank enters) */
  double ts = ovl_time();
  rc = product(x, D2, T, eps, ndup, D, NULL);
  R->t_ssc += ovl_time() - ts;
  R->products++;
  return rc;
}

/* The arguments' checks, agreed over comm (the threshold the same on every
 * rank). COLLECTIVE over comm. */
static ovl_err check_opts(const sp_ctx *x, MPI_Comm comm, ovl_bsmat F, ovl_bsmat D, const ovl_purify_opts *opts) {
  const int64_t n = ovl_bsmat_n(F);
  ovl_err rc = OVL_OK;
  const double eps = !opts || isnan(opts->sparse) ? 0.0 : opts->sparse;
  if (!opts) rc = ovl_err_set(OVL_ERR_ARG, "%s: no options", x->fn);
  else if (ovl_bsmat_grid(D) != ovl_bsmat_grid(F) || ovl_bsmat_n(D) != n || ovl_bsmat_nblk(D) != ovl_bsmat_nblk(F))
    rc = ovl_err_set(OVL_ERR_ARG, "%s: D must have F's grid and blocks (ovl_bsmat_create_like)", x->fn);
  else if (opts->method != OVL_PURIFY_SP2 && opts->method != OVL_PURIFY_SP2ACC && opts->method != OVL_PURIFY_TRS4)
    rc = ovl_err_set(OVL_ERR_UNSUPPORTED, "the block-sparse purification runs sp2, sp2acc and trs4, not %s",
                     ovl_purify_method_name(opts->method));
  else rc = ovl_i_purify_check_common(opts, n);
  if (rc == OVL_OK) {
    if (opts->checkpoint_every != 0 || opts->restart)
      rc = ovl_err_set(OVL_ERR_UNSUPPORTED, "the block-sparse purification writes no checkpoints");
    else if (!(eps >= 0.0 && eps < 1.0))
      rc = ovl_err_set(OVL_ERR_ARG, "the filtering threshold must be in [0, 1), got %g", eps);
  }
  double ext[2] = {eps, -eps}; /* the same threshold on every rank (NaN counts as different) */
  if (MPI_Allreduce(MPI_IN_PLACE, ext, 2, MPI_DOUBLE, MPI_MAX, comm) != MPI_SUCCESS && rc == OVL_OK)
    rc = ovl_err_set(OVL_ERR_MPI, "%s: the threshold's reduction failed", x->fn);
  else if (rc == OVL_OK && !(ext[0] == -ext[1]))
    rc = ovl_err_set(OVL_ERR_ARG, "the filtering threshold differs between ranks (from %g to %g)", -ext[1], ext[0]);
  return ovl_err_agree(comm, rc);
}

static ovl_err purify_run(const sp_ctx *x, ovl_bsmat F, ovl_bsmat D, const ovl_purify_opts *opts,
                          ovl_purify_result *res) {
  MPI_Comm parent = x->parent;
  ovl_purify_result R;
  memset(&R, 0, sizeof R);
  R.stop_reason = "";
  R.checkpoint = -1;
  double t_start = ovl_time();
  const int64_t n = ovl_bsmat_n(F);
  OVL_TRY(check_opts(x, parent, F, D, opts));
  const double eps = isnan(opts->sparse) ? 0.0 : opts->sparse;
  ovl_err rc = OVL_OK;
  double fn = 0.0;
  OVL_TRY(ovl_err_agree(parent, ovl_bsmat_norm_fro(F, &fn)));
  OVL_TRY(ovl_err_agree(parent, share(x, &fn, 1)));
  if (!isfinite(fn)) return ovl_err_agree(parent, ovl_err_set(OVL_ERR_NUMERIC, "F has entries that are not finite"));

  const double N = (double)n, Ne = (double)opts->nocc, tol = opts->tol;
  const int ndup = opts->plan.ndup;
  ovl_bsmat D2 = NULL, T = NULL;
  rc = ovl_bsmat_create_like(F, &D2);
  if (rc == OVL_OK) rc = ovl_bsmat_create_like(F, &T);
  rc = ovl_err_agree(parent, rc);
  double hmin = 0.0, hmax = 0.0;
  if (rc == OVL_OK) rc = ovl_err_agree(parent, ovl_bsmat_bounds(F, &hmin, &hmax));
  if (rc == OVL_OK) {
    double hb[2] = {hmin, hmax};
    rc = share(x, hb, 2);
    hmin = hb[0], hmax = hb[1];
  }
  if (rc == OVL_OK) rc = ovl_err_agree(parent, d0(F, D, hmin, hmax, eps));
  ovl_i_acc acc = ovl_i_acc_resume(0.0, 0.0);
  if (opts->method == OVL_PURIFY_SP2ACC) acc = ovl_i_acc_start(opts->homo, opts->lumo, hmin, hmax);
  double trD = 0.0, trD2 = 0.0, err = INFINITY, floor = 1e-6, e_hist[3] = {INFINITY, INFINITY, INFINITY};
  int branch_hist[2] = {-1, -1}, it = 0, converged = 0, failed = 0;
  /* mixed precision: the products in float32 (ovl_bsmat_set_arith) until the iteration stalls; then float64,
   * unless it stalled at the filtering's own floor (4 eps sqrt(blocks)) with eps >= OVL_BSMAT_FLOAT32_EPS */
  int single = opts->prec == OVL_PURIFY_PREC_MIXED;
  const ovl_bsmat_arith d_arith = ovl_bsmat_get_arith(D);
  const int d_sym = ovl_bsmat_get_symmetric(D);
  ovl_bsmat wr[3] = {D, D2, T};
  /* every product is symmetric (D D, and TRS4's D^2 M with M a polynomial in D): half the blocks computed */
  for (int m = 0; m < 3; m++)
    ovl_bsmat_set_arith(wr[m], single ? OVL_BSMAT_FLOAT32 : OVL_BSMAT_FLOAT64), ovl_bsmat_set_symmetric(wr[m], 1);
  if (rc == OVL_OK && opts->started) *opts->started = 1;
  while (rc == OVL_OK) {
    double ts = ovl_time();
    ovl_bsmul_stats st;
    rc = product(x, D, D, eps, ndup, D2, &st);
    R.t_ssc += ovl_time() - ts;
    R.products++;
    if (rc != OVL_OK) break;
    int64_t blocks = 0;
    rc = ovl_bsmat_trace(D, &trD);
    if (rc == OVL_OK) rc = ovl_bsmat_trace(D2, &trD2);
    if (rc == OVL_OK) rc = ovl_bsmat_dist_fro(D2, D, &err);
    if (rc == OVL_OK) rc = ovl_bsmat_count(D2, &blocks, NULL, NULL);
    rc = ovl_err_agree(parent, rc);
    if (rc == OVL_OK) {
      double sv[4] = {trD, trD2, err, (double)blocks};
      rc = share(x, sv, 4);
      trD = sv[0], trD2 = sv[1], err = sv[2], blocks = (int64_t)sv[3];
    }
    rc = ovl_err_agree(parent, rc);
    if (rc != OVL_OK) break;
    floor = eps > 0.0 ? filter_floor(eps, blocks) : 1e-6;
    it++;
    if (opts->verbose)
      ovl_log(OVL_LOG_INFO, "# iter %3d  ||D^2-D||_F %.3e  |tr D - n_occ| %.3e  (product %.3f s, %" PRId64 " blocks)\n",
              it, err, fabs(trD - Ne), ovl_time() - ts, blocks);
    const int trs4 = opts->method == OVL_PURIFY_TRS4;
    int floor_hit = (trs4 ? ovl_i_quadratic_bound_broken(err, e_hist[0], 6.0, floor)
                          : ovl_i_sp2_floor(err, e_hist, branch_hist, floor)) ||
                    err == 0.0;
    e_hist[2] = e_hist[1], e_hist[1] = e_hist[0], e_hist[0] = err;
    if (tol > 0 && err <= tol) {
      converged = 1, R.stop_reason = "tolerance";
      break;
    }
    if (floor_hit && single &&
        !(eps >= OVL_BSMAT_FLOAT32_EPS && err <= 4.0 * eps * sqrt((double)(blocks > 0 ? blocks : 1)))) {
      single = 0, R.iter_single = it; /* float32's floor: float64 from here */
      for (int m = 0; m < 3; m++) ovl_bsmat_set_arith(wr[m], OVL_BSMAT_FLOAT64);
      e_hist[0] = e_hist[1] = e_hist[2] = INFINITY, branch_hist[0] = branch_hist[1] = -1;
      floor_hit = 0;
    }
    if (floor_hit) {
      converged = 1, R.stop_reason = eps > 0.0 ? "filtering floor" : "rounding floor";
      break;
    }
    if (it >= opts->max_iter) {
      failed = 1, R.stop_reason = "iteration cap";
      break;
    }
    double c[3];
    int branch = -1;
    if (trs4) rc = ovl_err_agree(parent, trs4_step(x, D, D2, T, Ne, eps, ndup, &R));
    else if (ovl_i_sp2_step(&acc, N, Ne, trD, trD2, 0, c, &branch) == 3) {
      /* the estimates missed the gap: SP2 again from D0, the products counted */
      rc = ovl_err_agree(parent, d0(F, D, hmin, hmax, eps));
      ovl_i_acc_stop(&acc), R.fallback = it;
      e_hist[0] = e_hist[1] = e_hist[2] = INFINITY, branch_hist[0] = branch_hist[1] = -1;
      continue;
    }
    if (!trs4) { /* D <- c0 I + c1 D + c2 D^2, filtered (D^2 was: D <- D^2 moves no data) */
      if (c[0] == 0.0 && c[1] == 0.0 && c[2] == 1.0) rc = ovl_bsmat_swap(D, D2);
      else if (c[0] == 0.0) rc = ovl_bsmat_axpby(c[1], D, c[2], D2, eps, D);
      else {
        rc = ovl_bsmat_axpby(c[1], D, c[2], D2, 0.0, D);
        if (rc == OVL_OK) rc = ovl_bsmat_shift(D, 1.0, c[0]);
        if (rc == OVL_OK) rc = ovl_bsmat_filter(D, eps);
      }
      rc = ovl_err_agree(parent, rc);
      if (branch >= 2) R.accelerated++;
      branch_hist[1] = branch_hist[0], branch_hist[0] = branch;
    }
    if (rc == OVL_OK && opts->stop) { /* a stop request: every rank learns of it at the same iteration */
      int stop = ovl_i_stop_requested(opts->stop, parent);
      if (stop) {
        R.stopped = stop, R.stop_reason = "signal";
        break;
      }
    }
  }
  if (single) R.iter_single = it;
  ovl_bsmat_set_arith(D, d_arith), ovl_bsmat_set_symmetric(D, d_sym);
  if (opts->started && *opts->started) *opts->started = 2;
  R.iterations = it;
  R.idem_err = err;
  R.trace_err = fabs(trD - Ne);
  /* D, not D^2, was measured last: its trace is the one returned */
  const double trace_tol = fmax(fmax(1e-6, sqrt(tol > 0 ? tol : 1e-12)), floor);
  if (rc == OVL_OK && converged && R.trace_err > trace_tol)
    rc = ovl_err_set(OVL_ERR_NUMERIC,
                     "purification reached ||D^2 - D||_F = %.3e after %d iterations, but |tr D - n_occ| = %.3e is "
                     "above %.1e: D is a projector of another trace, not the density for n_occ = %" PRId64,
                     err, it, R.trace_err, trace_tol, opts->nocc);
  else if (rc == OVL_OK && failed)
    rc = ovl_err_set(OVL_ERR_NUMERIC,
                     "purification did not converge: the iteration limit was reached (--max-iter %d) with "
                     "||D^2 - D||_F = %.3e; raise --max-iter, or check the gap and the threshold",
                     opts->max_iter, err);
  rc = ovl_err_agree(parent, rc);
  if (rc == OVL_OK && converged) {
    rc = ovl_err_agree(parent, ovl_bsmat_dot(D, F, &R.energy));
    if (rc == OVL_OK) rc = share(x, &R.energy, 1);
    rc = ovl_err_agree(parent, rc);
  }
  ovl_bsmat_destroy(&D2);
  ovl_bsmat_destroy(&T);
  R.t_total = ovl_time() - t_start;
  if (res) *res = R;
  return rc;
}

ovl_err ovl_purify_sparse(ovl_bsmat F, ovl_bsmat D, const ovl_purify_opts *opts, ovl_purify_result *res) {
  OVL_TRY(ovl_check_handle(F, "ovl_purify_sparse", "F"));
  OVL_TRY(ovl_check_handle(D, "ovl_purify_sparse", "D"));
  const sp_ctx x = {"ovl_purify_sparse", ovl_grid2d_parent(ovl_bsmat_grid(F)), NULL};
  return purify_run(&x, F, D, opts, res);
}

ovl_err ovl_purify_sparse3(ovl_grid3d g, ovl_bsmat F, ovl_bsmat D, const ovl_purify_opts *opts,
                           ovl_purify_result *res) {
  const char *fn = "ovl_purify_sparse3";
  OVL_TRY(ovl_check_handle(g, fn, "g"));
  OVL_TRY(ovl_check_handle(F, fn, "F"));
  OVL_TRY(ovl_check_handle(D, fn, "D"));
  MPI_Comm parent = ovl_grid3d_parent(g);
  ovl_err rc = OVL_OK;
  if (ovl_bsmat_grid(F) != ovl_grid3d_plane(g))
    rc = ovl_err_set(OVL_ERR_ARG, "%s: F is not on the 3D grid's plane (create F and D on ovl_grid3d_plane(g))", fn);
  /* every plane's matrices of the same size and blocks */
  const int64_t v[2] = {ovl_bsmat_n(F), ovl_bsmat_nblk(F)};
  const char *names[2] = {"n", "the block count"};
  OVL_TRY(ovl_err_agree_same(parent, rc, v, names, 2));
  /* the options agreed with the idle ranks too, which then have no part */
  const sp_ctx x = {fn, ovl_grid3d_comm(g), g};
  OVL_TRY(check_opts(&x, parent, F, D, opts));
  ovl_purify_result R, R0;
  memset(&R, 0, sizeof R);
  R.stop_reason = "";
  R.checkpoint = -1;
  const int active = ovl_grid3d_active(g);
  if (active) rc = purify_run(&x, F, D, opts, &R);
  rc = ovl_err_agree(parent, rc);
  /* the result on the idle ranks too: rank 0's (the active ranks hold plane 0's already) */
  static const char *const reasons[] = {"",      "tolerance", "filtering floor", "rounding floor", "iteration cap",
                                        "signal"};
  int ri = 0;
  for (int t = 0; t < (int)(sizeof reasons / sizeof *reasons); t++)
    if (R.stop_reason && strcmp(R.stop_reason, reasons[t]) == 0) ri = t;
  R0 = R;
  if (MPI_Bcast(&R0, (int)sizeof R0, MPI_BYTE, 0, parent) != MPI_SUCCESS ||
      MPI_Bcast(&ri, 1, MPI_INT, 0, parent) != MPI_SUCCESS)
    ovl_fatal(parent, OVL_ERR_MPI, "%s: the broadcast of the result failed", fn);
  if (!active) R = R0, R.stop_reason = reasons[ri];
  if (res) *res = R;
  return rc;
}

ovl_err ovl_purify_sparse_plan(ovl_bsmat F, const ovl_plan *given, const char *machine, ovl_plan *plan, char *why,
                               size_t nwhy) {
  OVL_TRY(ovl_check_handle(F, "ovl_purify_sparse_plan", "F"));
  OVL_TRY(ovl_check_ptr(plan, "ovl_purify_sparse_plan", "plan"));
  int p = 0, q = 0;
  ovl_grid2d_dims(ovl_bsmat_grid(F), &p, &q);
  MPI_Comm comm = ovl_grid2d_parent(ovl_bsmat_grid(F));
  ovl_plan bp = ovl_plan_auto(OVL_FAMILY_BSMUL, ovl_bsmat_n(F));
  if (given && given->ndup > 0) bp.ndup = given->ndup;
  if (given && given->c == 1) bp.algo = OVL_ALGO_BSUMMA;
  if (given && given->c > 1) bp.algo = OVL_ALGO_BS25D, bp.c = given->c;
  if (bp.algo == OVL_ALGO_BSUMMA) bp.p = p, bp.q = q; /* the matrices' grid */
  ovl_bsmul_shape sh;
  ovl_err rc = ovl_bsmat_shape(F, F, &sh);
  ovl_plan_src src = {machine, NULL};
  const ovl_plan open = bp;
  if (rc == OVL_OK) rc = ovl_plan_resolve_bsmul(comm, &bp, &sh, &src, why, nwhy);
  if (rc == OVL_OK && bp.algo == OVL_ALGO_BSUMMA && (bp.p != p || bp.q != q)) { /* SUMMA on F's grid */
    bp = open;
    bp.algo = OVL_ALGO_BSUMMA, bp.p = p, bp.q = q;
    rc = ovl_plan_resolve_bsmul(comm, &bp, &sh, &src, why, nwhy);
  }
  if (rc == OVL_OK) *plan = bp;
  return rc;
}

ovl_err ovl_purify_sparse_planned(const ovl_plan *plan, ovl_bsmat F, ovl_bsmat D, const ovl_purify_opts *opts,
                                  ovl_purify_result *res) {
  OVL_TRY(ovl_check_ptr(plan, "ovl_purify_sparse_planned", "plan"));
  OVL_TRY(ovl_check_ptr(opts, "ovl_purify_sparse_planned", "opts"));
  OVL_TRY(ovl_check_handle(F, "ovl_purify_sparse_planned", "F"));
  OVL_TRY(ovl_check_handle(D, "ovl_purify_sparse_planned", "D"));
  if (plan->algo != OVL_ALGO_BSUMMA && plan->algo != OVL_ALGO_BS25D)
    return ovl_err_set(OVL_ERR_ARG, "ovl_purify_sparse_planned: %s is not a plan of the block-sparse product",
                       ovl_algo_name(plan->algo));
  ovl_purify_opts po = *opts;
  po.plan.ndup = plan->ndup;
  if (plan->algo == OVL_ALGO_BSUMMA) return ovl_purify_sparse(F, D, &po, res);
  MPI_Comm comm = ovl_grid2d_parent(ovl_bsmat_grid(F));
  ovl_grid2d g2 = NULL;
  ovl_grid3d g3 = NULL;
  ovl_bsmat F3 = NULL, D3 = NULL, Db = NULL;
  ovl_err rc = ovl_plan_grids(comm, plan, 0, &g2, &g3);
  if (rc == OVL_OK) rc = ovl_bsmat_to_plane(F, g3, &F3);
  if (rc == OVL_OK) rc = ovl_err_agree(comm, ovl_bsmat_create_like(F3, &D3));
  if (rc == OVL_OK) rc = ovl_purify_sparse3(g3, F3, D3, &po, res);
  ovl_bsmat_destroy(&F3);
  if (rc == OVL_OK) rc = ovl_bsmat_from_plane(D3, g3, ovl_bsmat_grid(D), &Db);
  if (rc == OVL_OK) rc = ovl_bsmat_swap(D, Db); /* D's layout: F's grid, blocks and seed */
  ovl_bsmat_destroy(&Db);
  ovl_bsmat_destroy(&D3);
  ovl_grid3d_destroy(&g3);
  return rc;
}
