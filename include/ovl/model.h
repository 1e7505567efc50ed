/* ovl models: the Hockney (alpha-beta) point-to-point model and its fit, and
 * the overlap measures of the OSU and Intel MPI benchmarks and NBC-Eff.
 *
 * Pure functions: no MPI, no global state; every function is LOCAL. Times are
 * in seconds and sizes in bytes unless said otherwise. They are what
 * `ovl bench pingpong|coll|nbc` print, so tests can check the printed
 * numbers against hand calculations (tests/test_model.c).
 */
#ifndef OVL_MODEL_H
#define OVL_MODEL_H

#include "ovl/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Hockney model: t(s) = alpha + beta * s ---------------------------------
 * alpha is the latency L (seconds), beta the time per byte (1/B, B the
 * asymptotic bandwidth in bytes/s). The achieved bandwidth of one message is
 * s / t(s) = s / (L + s/B), half of B at the size N_half = B * L = alpha / beta
 * (Hockney's r_inf and n_1/2; Tatebe's lecture, papers/004). */

/* Ordinary least squares of time[i] ~ alpha + beta * size[i], i < n.
 * Errors (OVL_ERR_ARG): n < 2, a NULL array, a value that is not finite, or
 * fewer than two distinct sizes. alpha may come out negative when the data
 * are not linear (e.g. an eager/rendezvous protocol switch): the caller
 * decides what to make of it. LOCAL. */
ovl_err ovl_hockney_fit(const double *size, const double *time, int n, double *alpha, double *beta);

/* Weighted least squares: minimises sum_i weight[i] * (time[i] - alpha -
 * beta * size[i])^2. weight[i] = 1 / time[i]^2 fits relative errors, so small
 * messages (which fix alpha) count as much as large ones (which fix beta);
 * weight == NULL is that relative weighting. Errors as ovl_hockney_fit, plus
 * a weight that is not finite and > 0 (or a time <= 0 when weight == NULL).
 * LOCAL. */
ovl_err ovl_hockney_fit_weighted(const double *size, const double *time, const double *weight, int n,
                                 double *alpha, double *beta);

/* t(s) = alpha + beta * s. LOCAL. */
static inline double ovl_hockney_time(double alpha, double beta, double s) { return alpha + beta * s; }
/* Model bandwidth s / (L + s/B) in bytes/s (0 when t(s) <= 0). LOCAL. */
static inline double ovl_hockney_bw(double alpha, double beta, double s) {
  double t = alpha + beta * s;
  return t > 0 ? s / t : 0.0;
}
/* N_half = B * L = alpha / beta, bytes (0 when beta <= 0). LOCAL. */
static inline double ovl_hockney_nhalf(double alpha, double beta) { return beta > 0 ? alpha / beta : 0.0; }

/* ---- collectives --------------------------------------------------------- */

/* Effective bandwidth of a collective of n bytes over p ranks that took t
 * seconds: 2 (p - 1) n / p / t bytes/s, the volume of a scatter-allgather
 * broadcast or a Rabenseifner reduction (Huang & Chow, Section V-B). 0 when
 * p < 2 or t <= 0. LOCAL. */
double ovl_coll_eff_bw(double n, int p, double t);

/* ---- overlap of nonblocking collectives with computation --------------------- */

/* OSU micro-benchmarks (osu_i* collectives), in percent:
 *   overlap = max(0, 100 - 100 * (t_overall - (t_compute - t_test)) / t_pure)
 * t_pure: post + wait alone; t_overall: post + computation + wait, with the
 * computation (about t_pure long) calling MPI_Test; t_compute: the
 * computation including those tests; t_test: the time inside the tests.
 * 0 when t_pure <= 0. LOCAL. */
double ovl_overlap_osu(double t_pure, double t_overall, double t_compute, double t_test);

/* Intel MPI Benchmarks, IMB-NBC, in percent:
 *   overlap = 100 * max(0, min(1, (t_pure + t_CPU - t_ovrl) / min(t_pure, t_CPU)))
 * t_pure: the operation alone; t_CPU: the computation while the operation is
 * in flight; t_ovrl: post + computation + wait. 0 when min(t_pure, t_CPU)
 * <= 0. LOCAL. */
double ovl_overlap_imb(double t_pure, double t_cpu, double t_ovrl);

/* NBC-Eff (Nanri et al.): a fixed amount of computation and one operation,
 * run one after the other (t_seq) and overlapped (t_ovl). Returns the
 * speedup t_seq / t_ovl: > 1 means overlapping pays, < 1 that it costs.
 * 0 when t_ovl <= 0. LOCAL. */
double ovl_nbc_eff_speedup(double t_seq, double t_ovl);

#ifdef __cplusplus
}
#endif
#endif
