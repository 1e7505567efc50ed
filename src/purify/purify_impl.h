/* Private to src/purify: the checkpoints of ovl_purify (checkpoint.c) and the
 * SP2 family's scalar rules (rules.c). */
#ifndef OVL_PURIFY_IMPL_H
#define OVL_PURIFY_IMPL_H

#include <stdint.h>

#include "ovl/purify.h"

/* Write D (plane 0) as PREFIX.itIT.raw and the state naming the problem
 * (F's checksum fsum, n, n_occ, the method, mu, the precision) atomically,
 * then remove the older data files. COLLECTIVE over D's plane. */
ovl_err ovl_i_ckpt_write(ovl_dmat D, const char *prefix, int it, const ovl_purify_opts *o, uint64_t fsum);
/* Read the checkpoint PREFIX into D (plane 0) and its iteration into *it,
 * refusing a state of another problem. COLLECTIVE over D's plane. */
ovl_err ovl_i_ckpt_read(ovl_dmat D, const char *prefix, const ovl_purify_opts *o, uint64_t fsum, int *it);

/* ---- the SP2 family's scalar rules (rules.c), shared by the dense and the
 * block-sparse iterations ---- */
/* SP2-ACC's state: the images of the LUMO estimate (xo, its distance from 0)
 * and of the HOMO estimate (yo, its distance from 1) under the steps so far,
 * and the phase (none: plain SP2). */
typedef struct ovl_i_acc {
  double xo, yo;
  int phase;
} ovl_i_acc;
/* The state at D0 = (hmax I - F) / (hmax - hmin) for the estimates homo <
 * lumo (NAN: none, plain SP2). LOCAL. */
ovl_i_acc ovl_i_acc_start(double homo, double lumo, double hmin, double hmax);
/* The state from given images (0, 0: none). LOCAL. */
ovl_i_acc ovl_i_acc_resume(double xo, double yo);
/* Plain SP2 from here (after a fallback). LOCAL. */
void ovl_i_acc_stop(ovl_i_acc *s);
/* SP2's branch: D^2 (0) or 2D - D^2 (1), whichever trace is closer to n_occ. LOCAL. */
int ovl_i_sp2_branch(double trD, double trD2, double Ne);
/* The next step D <- c[0] I + c[1] D + c[2] D^2 of SP2-ACC (plain SP2 when
 * the state has no estimates) from tr D, tr D^2, n and n_occ; single: the
 * products are float32. *branch: 0 or 1 for a step that was SP2's, 2 or 3
 * for a scaled one. Returns 3 when the estimates are found to have missed
 * the gap (start again from D0 with SP2; c is then not set), else 0. LOCAL. */
int ovl_i_sp2_step(ovl_i_acc *s, double N, double Ne, double trD, double trD2, int single, double c[3], int *branch);
/* The rounding-floor test of SP2 and TRS4 (see purify.h): the error e of this
 * iteration breaks the quadratic bound e <= K e_ref^2 of a converging
 * iteration, in the asymptotic regime (e < floor_guard). LOCAL. */
/* TRS4's gamma from the traces of D^2, D^3 and D^4 (Niklasson): the step is
 * D^2 (4 D - 3 D^2) + gamma D^2 (1 - D)^2 for gamma in [0, 6], 2 D - D^2 above,
 * D^2 below. Near the end tr G = tr D^2 (1 - D)^2 is a difference of traces
 * within their rounding: then gamma = 3 (McWeeny's step, which keeps the
 * trace). LOCAL. */
double ovl_i_trs4_gamma(double Ne, double trD2, double tr3, double tr4);
int ovl_i_quadratic_bound_broken(double e, double e_ref, double K, double floor_guard);
/* SP2's form of it: over the two iterations after a change of branch, both
 * SP2's (not scaled); e_hist: the errors of the last three iterations
 * (newest first, before this one), branch_hist: the last two branches. LOCAL. */
int ovl_i_sp2_floor(double err, const double e_hist[3], const int branch_hist[2], double floor_guard);
/* The stop request (opts.stop, NULL: none) reduced over parent, so that
 * every rank learns of it at the same iteration: its largest value, 0 for
 * none. COLLECTIVE over parent (when stop is not NULL). */
int ovl_i_stop_requested(const volatile sig_atomic_t *stop, MPI_Comm parent);

/* The checks of the options both iterations share: n_occ in [0, n] (not
 * McWeeny), the iteration cap, the tolerance, SP2-ACC's HOMO/LUMO pair.
 * LOCAL; OVL_ERR_ARG naming the option. */
ovl_err ovl_i_purify_check_common(const ovl_purify_opts *o, int64_t n);

#endif
