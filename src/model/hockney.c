/* Models: the Hockney fit and the overlap measures (pure functions). */
#include <math.h>
#include <stddef.h>

#include "ovl/model.h"

static ovl_err check_inputs(const double *size, const double *time, int n) {
  OVL_CHECK(size != NULL && time != NULL, OVL_ERR_ARG, "Hockney fit: NULL size or time array");
  OVL_CHECK(n >= 2, OVL_ERR_ARG, "Hockney fit needs at least 2 points, got %d", n);
  int distinct = 0;
  for (int i = 0; i < n; i++) {
    OVL_CHECK(isfinite(size[i]) && isfinite(time[i]), OVL_ERR_ARG, "Hockney fit: point %d (%g, %g) is not finite", i,
              size[i], time[i]);
    if (size[i] != size[0]) distinct = 1;
  }
  OVL_CHECK(distinct, OVL_ERR_ARG, "Hockney fit needs at least 2 distinct sizes, all %d are %g", n, size[0]);
  return OVL_OK;
}

/* Weight of point i: weight[i] if given, else 1/time^2 (relative) or 1. */
static double wt(const double *time, const double *weight, int relative, int i) {
  return weight ? weight[i] : relative ? 1.0 / (time[i] * time[i]) : 1.0;
}

/* Weighted least squares in centred form (stable for sizes up to 2^40):
 * beta = sum w (s - sm)(t - tm) / sum w (s - sm)^2, alpha = tm - beta sm. */
static void fit_centred(const double *size, const double *time, const double *weight, int relative, int n,
                        double *alpha, double *beta) {
  double sw = 0, ss = 0, st = 0;
  for (int i = 0; i < n; i++) {
    double w = wt(time, weight, relative, i);
    sw += w, ss += w * size[i], st += w * time[i];
  }
  double sm = ss / sw, tm = st / sw, sxx = 0, sxy = 0;
  for (int i = 0; i < n; i++) {
    double w = wt(time, weight, relative, i), ds = size[i] - sm;
    sxx += w * ds * ds, sxy += w * ds * (time[i] - tm);
  }
  *beta = sxy / sxx;
  *alpha = tm - *beta * sm;
}

ovl_err ovl_hockney_fit(const double *size, const double *time, int n, double *alpha, double *beta) {
  OVL_TRY(ovl_check_ptr(alpha, "ovl_hockney_fit", "alpha"));
  OVL_TRY(ovl_check_ptr(beta, "ovl_hockney_fit", "beta"));
  OVL_TRY(check_inputs(size, time, n));
  fit_centred(size, time, NULL, 0, n, alpha, beta);
  return OVL_OK;
}

ovl_err ovl_hockney_fit_weighted(const double *size, const double *time, const double *weight, int n, double *alpha,
                                 double *beta) {
  OVL_TRY(ovl_check_ptr(alpha, "ovl_hockney_fit_weighted", "alpha"));
  OVL_TRY(ovl_check_ptr(beta, "ovl_hockney_fit_weighted", "beta"));
  OVL_TRY(check_inputs(size, time, n));
  for (int i = 0; i < n; i++) {
    if (weight)
      OVL_CHECK(isfinite(weight[i]) && weight[i] > 0, OVL_ERR_ARG, "Hockney fit: weight %d is %g, must be > 0", i,
                weight[i]);
    else
      OVL_CHECK(time[i] > 0, OVL_ERR_ARG, "Hockney fit with relative weights: time %d is %g, must be > 0", i, time[i]);
  }
  fit_centred(size, time, weight, 1, n, alpha, beta);
  return OVL_OK;
}

double ovl_coll_eff_bw(double n, int p, double t) {
  if (p < 2 || !(t > 0)) return 0.0;
  return 2.0 * (p - 1) * n / p / t;
}

double ovl_overlap_osu(double t_pure, double t_overall, double t_compute, double t_test) {
  if (!(t_pure > 0)) return 0.0;
  double o = 100.0 - 100.0 * (t_overall - (t_compute - t_test)) / t_pure;
  return o > 0 ? o : 0.0;
}

double ovl_overlap_imb(double t_pure, double t_cpu, double t_ovrl) {
  double m = t_pure < t_cpu ? t_pure : t_cpu;
  if (!(m > 0)) return 0.0;
  double f = (t_pure + t_cpu - t_ovrl) / m;
  if (f > 1) f = 1;
  if (f < 0) f = 0;
  return 100.0 * f;
}

double ovl_nbc_eff_speedup(double t_seq, double t_ovl) { return t_ovl > 0 ? t_seq / t_ovl : 0.0; }
