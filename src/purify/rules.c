/* The scalar rules of the SP2 family and the stopping test, shared by the
 * dense iteration (purify.c) and the block-sparse one (sparse.c): each step
 * is D <- c0 I + c1 D + c2 D^2, decided from the traces every rank holds. */
#include <float.h>
#include <inttypes.h>
#include <math.h>

#include "purify_impl.h"

/* SP2-ACC (see purify.h). Branch 0: D <- (1 - a + a D)^2, a = 2 / (2 - x),
 * which maps 0 and x to the same value; branch 1: D <- 2 b D - b^2 D^2,
 * b = 2 / (2 - y), its mirror image; the branch is the side whose estimate
 * is farther from its end (x >= y: branch 0; Ergo's rule). x and y follow
 * the step. The phases:
 *  - ACC_FOLD: x or y >= k_acc_off: folding, no check (the traces say
 *    little while many eigenvalues are between 0 and 1);
 *  - ACC_CHECKED: x and y below k_acc_off: still folding (near the end a
 *    fold squeezes [0, x] to [0, x^2/4], SP2's step to [0, x^2]), and every
 *    step checks that the estimates still bound the spectrum's images:
 *    virtuals in [0, x] and occupied in [1 - y, 1] give tr D - n_occ in
 *    [-n_occ y, (n - n_occ) x]. Outside it (estimates that did not bound the
 *    gap: too wide, or wrong) the steps become SP2's with its trace rule;
 *    once x and y are below k_acc_sp2 (float32: k_acc_sp2_single) the
 *    fold is below rounding: SP2 too;
 *  - ACC_SP2: SP2's steps, checked: an eigenvalue on the wrong side of 1/2
 *    makes |tr D - n_occ| exceed 2 tr(D - D^2) (sum min(t, 1 - t) <=
 *    2 sum t (1 - t) when every t is on its side), which a fold of an
 *    occupied eigenvalue among the virtuals (an estimated gap beside the
 *    true one) brings about and overlapping estimates did not in any run
 *    tried (docs/guides/purification.md): then end = 3 (start again from
 *    D0 with SP2);
 *  - ACC_NONE: plain SP2 (no estimates, or after such a fallback). */
static const double k_acc_off = 0.01;        /* where the checks start (Ergo's deltaTurnOffAcc) */
static const double k_acc_sp2 = 1e-8;        /* a fold moves eigenvalues by x^2/4: below rounding */
static const double k_acc_sp2_single = 1e-3; /* the same in float32 */
static const double k_acc_slack = 0.01;      /* slack of the trace tests (rounding of the traces, float32) */
enum { ACC_NONE, ACC_FOLD, ACC_CHECKED, ACC_SP2 };

ovl_i_acc ovl_i_acc_start(double homo, double lumo, double hmin, double hmax) {
  ovl_i_acc s = {0.0, 0.0, ACC_NONE};
  if (!isfinite(homo) || !isfinite(lumo)) return s;
  double w = hmax - hmin > 0 ? hmax - hmin : 1.0; /* the LUMO's image from 0, the HOMO's from 1 */
  s.xo = fmin(fmax((hmax - lumo) / w, 0.0), 1.0 - k_acc_off);
  s.yo = fmin(fmax((homo - hmin) / w, 0.0), 1.0 - k_acc_off);
  if (s.xo + s.yo >= 1.0) s.xo = s.yo = 0.0; /* cannot happen with homo < lumo; no acceleration */
  return ovl_i_acc_resume(s.xo, s.yo);
}

ovl_i_acc ovl_i_acc_resume(double xo, double yo) {
  ovl_i_acc s = {xo, yo, ACC_NONE};
  if (xo > 0.0 || yo > 0.0) s.phase = xo < k_acc_off && yo < k_acc_off ? ACC_CHECKED : ACC_FOLD;
  return s;
}

int ovl_i_sp2_branch(double trD, double trD2, double Ne) {
  return fabs(trD2 - Ne) <= fabs(2.0 * trD - trD2 - Ne) ? 0 : 1;
}

int ovl_i_sp2_step(ovl_i_acc *s, double N, double Ne, double trD, double trD2, int single, double c[3], int *branch) {
  const double r = trD - Ne, sm = trD - trD2;
  if (s->phase == ACC_CHECKED && !(r >= -Ne * s->yo - k_acc_slack && r <= (N - Ne) * s->xo + k_acc_slack))
    s->phase = ACC_SP2, s->xo = s->yo = 0.0; /* not bounds: SP2's trace rule from here */
  if (s->phase == ACC_SP2 && fabs(r) > 2.0 * sm + k_acc_slack)
    return 3; /* an eigenvalue folded to the wrong side: the estimated gap missed the true one */
  const int acc = s->phase == ACC_FOLD || s->phase == ACC_CHECKED;
  const double a = acc ? 2.0 / (2.0 - s->xo) : 1.0, b = acc ? 2.0 / (2.0 - s->yo) : 1.0;
  const int br = acc ? (s->xo >= s->yo ? 0 : 1) : ovl_i_sp2_branch(trD, trD2, Ne);
  const double sc = br == 0 ? a : b;
  if (br == 0) c[0] = (1.0 - a) * (1.0 - a), c[1] = 2.0 * a * (1.0 - a), c[2] = a * a;
  else c[0] = 0.0, c[1] = 2.0 * b, c[2] = -b * b;
  /* the estimates' images: (1 - s + s t)^2 on one side is 1 - (2 s u - s^2 u^2), u = 1 - t, on the other */
  double xo = s->xo, yo = s->yo;
  if (br == 0) xo = (1.0 - a + a * xo) * (1.0 - a + a * xo), yo = 2.0 * a * yo - a * a * yo * yo;
  else xo = 2.0 * b * xo - b * b * xo * xo, yo = (1.0 - b + b * yo) * (1.0 - b + b * yo);
  s->xo = xo, s->yo = yo;
  if (s->phase == ACC_FOLD && xo < k_acc_off && yo < k_acc_off) s->phase = ACC_CHECKED;
  /* float32 rounds at 1e-7: a fold below x = 1e-3 moves eigenvalues by less, and SP2's steps find its floor */
  const double sp2_below = single ? k_acc_sp2_single : k_acc_sp2;
  if (s->phase == ACC_CHECKED && xo < sp2_below && yo < sp2_below) s->phase = ACC_SP2, s->xo = s->yo = 0.0;
  *branch = br + (sc != 1.0 ? 2 : 0);
  return 0;
}

void ovl_i_acc_stop(ovl_i_acc *s) { s->phase = ACC_NONE, s->xo = s->yo = 0.0; }

double ovl_i_trs4_gamma(double Ne, double trD2, double tr3, double tr4) {
  double trF4 = 4.0 * tr3 - 3.0 * tr4, trG4 = trD2 - 2.0 * tr3 + tr4;
  double noise = 64.0 * DBL_EPSILON * (fabs(trD2) + 2.0 * fabs(tr3) + fabs(tr4) + 1.0);
  return trG4 > noise ? (Ne - trF4) / trG4 : 3.0;
}

int ovl_i_quadratic_bound_broken(double e, double e_ref, double K, double floor_guard) {
  return isfinite(e_ref) && e < floor_guard && e > K * e_ref * e_ref;
}

int ovl_i_sp2_floor(double err, const double e_hist[3], const int branch_hist[2], double floor_guard) {
  return branch_hist[0] >= 0 && branch_hist[0] < 2 && branch_hist[1] < 2 && branch_hist[0] != branch_hist[1] &&
         ovl_i_quadratic_bound_broken(err, e_hist[1], 4.0, floor_guard);
}

ovl_err ovl_i_purify_check_common(const ovl_purify_opts *o, int64_t n) {
  if (o->method != OVL_PURIFY_MCWEENY && (o->nocc < 0 || o->nocc > n))
    return ovl_err_set(OVL_ERR_ARG, "the number of occupied orbitals must be in [0, %" PRId64 "], got %" PRId64, n,
                       o->nocc);
  if (o->max_iter < 1 || o->max_iter > 100000)
    return ovl_err_set(OVL_ERR_ARG, "the iteration cap must be in [1, 100000], got %d", o->max_iter);
  if (o->tol != 0.0 && !(o->tol >= OVL_PURIFY_TOL_MIN && o->tol <= OVL_PURIFY_TOL_MAX))
    return ovl_err_set(OVL_ERR_ARG, "the tolerance must be 0 (the method's default) or in [%g, %g], got %g",
                       OVL_PURIFY_TOL_MIN, OVL_PURIFY_TOL_MAX, o->tol);
  if (o->method == OVL_PURIFY_SP2ACC && !(isnan(o->homo) && isnan(o->lumo)) &&
      !(isfinite(o->homo) && isfinite(o->lumo) && o->homo < o->lumo))
    return ovl_err_set(OVL_ERR_ARG,
                       "the HOMO and LUMO estimates must be both given (finite, homo < lumo) or both NAN, got homo %g "
                       "and lumo %g",
                       o->homo, o->lumo);
  return OVL_OK;
}

int ovl_i_stop_requested(const volatile sig_atomic_t *stop, MPI_Comm parent) {
  if (!stop) return 0;
  int v = (int)*stop;
  if (MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT, MPI_MAX, parent) != MPI_SUCCESS)
    ovl_fatal(parent, OVL_ERR_MPI, "purification: reduction of the stop request failed");
  return v;
}
