/* ovl_dm: a density-matrix handle for SCF codes, on the caller's ScaLAPACK
 * block-cyclic matrices (as ELSI's and ELPA's handles).
 *
 * An SCF program solves for the density matrix once per cycle with the same
 * basis, the same overlap matrix S and the same electron count. The handle
 * keeps what does not change between cycles: the BLACS grid and its
 * communicator, n, the electron count and spin, the options, the Cholesky
 * factor of S (computed once, by ovl_dm_set_overlap; ovl_pdpurify, the
 * one-call form, computes it on every call) and the previous cycle's HOMO and
 * LUMO (sp2acc's estimates for the next cycle).
 *
 *   ovl_dm h;
 *   ovl_dm_create(ctxt, n, 10.0, 1, &h);          // 10 electrons, spin-restricted
 *   ovl_dm_set(h, "method", "sp2acc");              // the command line's option names
 *   ovl_dm_set_overlap(h, s, descs);                // factorised once
 *   for (cycle ...) {
 *     ovl_dm_solve(h, 0, f, descf, d, descd, w, descw);  // D, W for this F
 *     ovl_dm_results r; ovl_dm_get_results(h, 0, &r);    // mu, energy, iterations, ...
 *   }
 *   ovl_dm_destroy(&h);
 *
 * Occupation. nspin = 1 (spin-restricted): every occupied orbital holds two
 * electrons, n_occ = n_electrons / 2, D = 2 C_occ C_occ^T, tr(D S) =
 * n_electrons. nspin = 2 (unrestricted): each spin channel has its own F and
 * D with occupation 1, n_occ = the channel's electron count ("n_electrons_up",
 * "n_electrons_down"; when neither is set, an even n_electrons is split
 * evenly). Purification yields a projector onto whole orbitals, so every
 * n_occ must be an integer (within 1e-8): a fractional count is OVL_ERR_ARG.
 * The energy is tr(D F) and W = D F D / occupation (= occ C_occ diag(eps_occ)
 * C_occ^T, ELSI's energy-weighted density), both with the occupation.
 *
 * Options (ovl_dm_set, ovl_dm_get): the names of the command line
 * (docs/guides/cli.md) without the dashes, the plan's knobs and the
 * purification's options: "method", "precision", "tol", "max-iter", "ndup",
 * "algo", "grid", "backend", ..., "homo" and "lumo" (sp2acc's estimates;
 * NAN: none); and the handle's own "n_electrons", "n_electrons_up",
 * "n_electrons_down" and "verbose" (0 or 1). Values are the command line's
 * strings ("sp2acc", "1e-10", "2x2x1", "auto"). Combinations are checked as
 * on the command line, against what the handle holds when set is called
 * (set "method" before "algo"). Precedence: the defaults < $OVL_OPTIONS
 * (rank 0's) < ovl_dm_set; rank 0's settings decide for every process.
 *
 * Warm bounds. Each solve records the HOMO and LUMO it estimated (per spin);
 * with method sp2acc the next solve of that spin passes them to the
 * purification as its gap estimates, unless the caller set "homo" and
 * "lumo" (results.warm says which ran). Estimates need only overlap the true
 * gap (ovl/purify.h), so the small change of F between SCF cycles keeps them
 * valid. Estimates that miss the gap can fold eigenvalues across it; the
 * solve sees that (the HOMO estimated from its D above the LUMO, or no
 * convergence) and runs again without them (results.warm = -1), so a poor
 * estimate costs a second solve, never a wrong D. Set "homo" and "lumo"
 * to "nan" to go back to the previous solve's.
 *
 * Communicator: the BLACS context's (Cblacs_get(ctxt, 10, ...),
 * Cblacs2sys_handle), as ovl_pdpurify. Requires ScaLAPACK (otherwise every
 * function but the NULL checks returns OVL_ERR_UNSUPPORTED). Not thread-safe
 * (one call at a time per handle). */
#ifndef OVL_DM_H
#define OVL_DM_H

#include <stddef.h>

#include "ovl/core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ovl_dm_s *ovl_dm;

/* What the last solve of a spin channel did (the numbers the same on every
 * process of the context; the times this process's). */
typedef struct ovl_dm_results {
  double mu;            /* (homo + lumo) / 2 */
  double energy;        /* band energy tr(D F), with the occupation */
  double homo, lumo;    /* estimated from the purified D (ovl/pdpurify.h) */
  double idem_err;      /* ||D'^2 - D'||_F of the orthogonal-basis density, occupation 1 */
  double trace_err;     /* |tr D' - n_occ| */
  double n_occ;         /* occupied orbitals of the channel */
  double occupation;    /* 2 (nspin 1) or 1 (nspin 2) */
  int iterations;       /* purification iterations */
  int warm;             /* sp2acc: 0 no estimates, 1 the previous solve's, 2 the caller's; -1: they missed the
                           gap (the result's HOMO above its LUMO, or no convergence) and the solve ran again
                           without them */
  int solves;           /* solves of this channel since create */
  int factorizations;   /* Cholesky factorisations of S since create (1 per ovl_dm_set_overlap) */
  double t_solve;       /* seconds in this solve */
  double t_purify;      /* seconds in ovl_purify */
  double t_redist;      /* seconds in the block-cyclic <-> block exchanges */
  double t_overlap;     /* seconds in this solve's four triangular solves (0 without S) */
  double t_mu;          /* seconds estimating HOMO and LUMO */
  double t_factor;      /* seconds of the last factorisation of S (in ovl_dm_set_overlap, not per solve) */
  char stop_reason[48]; /* ovl_purify's */
  char plan[192];       /* the plan that ran (ovl_plan_describe) */
} ovl_dm_results;

/* A handle for an n x n problem on the BLACS context ctxt with n_electrons
 * electrons and nspin spin channels (1 or 2). COLLECTIVE over the context's
 * processes. Errors (agreed, the same on every process; *h stays NULL):
 * OVL_ERR_ARG (h NULL: at once on that process; a process outside the grid
 * of ctxt or an invalid context: at once on that process; n < 1, nspin not 1
 * or 2, n_electrons not finite or out of [0, occ n], a count that gives a
 * fractional n_occ), OVL_ERR_UNSUPPORTED (no ScaLAPACK; a grid not ordered
 * row by row), OVL_ERR_NOMEM, OVL_ERR_MPI. */
ovl_err ovl_dm_create(int ctxt, int n, double n_electrons, int nspin, ovl_dm *h);

/* Set the option name to value (see above). LOCAL; call it with the same
 * arguments on every process. Errors: OVL_ERR_ARG (h, name or value NULL; an
 * unknown name; a value that does not parse, is out of range or does not fit
 * the options set before), naming the option. */
ovl_err ovl_dm_set(ovl_dm h, const char *name, const char *value);

/* The value of option name as a string (what ovl_dm_set takes; "auto" for
 * what the planner decides, "nan" for no estimate) into buf (len bytes,
 * NUL-terminated). LOCAL. Errors: OVL_ERR_ARG (NULL arguments, an unknown
 * name, len too small). */
ovl_err ovl_dm_get(ovl_dm h, const char *name, char *buf, size_t len);

/* Give the overlap matrix S (n x n, symmetric positive definite, a
 * descriptor of the handle's context), factorised here once (PDPOTRF on a
 * square-block copy; S itself is not kept or modified); every later solve
 * reuses the factor. s and descs NULL: back to an orthonormal basis.
 * COLLECTIVE. Errors (agreed): OVL_ERR_ARG (h NULL; s without descs; a bad
 * descriptor), OVL_ERR_NUMERIC (S not finite, not symmetric or not positive
 * definite: the handle then has no S), OVL_ERR_NOMEM, OVL_ERR_MPI. */
ovl_err ovl_dm_set_overlap(ovl_dm h, const double *s, const int descs[9]);

/* D (and W) of the spin channel ispin (0, or 1 with nspin 2) from its F.
 * f, descf: F (n x n, symmetric); d, descd: receives D; w, descw: receives
 * W, or both NULL. Descriptors as ovl_pdpurify's (any block sizes, sources
 * and LLD_, the handle's context). COLLECTIVE. Errors (agreed): OVL_ERR_ARG
 * (h NULL; ispin out of range; NULL f/d or a bad descriptor; nspin 2 with an
 * odd count and no "n_electrons_up"; options that do not fit), and those of
 * ovl_pdpurify (OVL_ERR_NUMERIC: F not finite or not symmetric, no
 * convergence; OVL_ERR_GRID, OVL_ERR_NOMEM, OVL_ERR_MPI). */
ovl_err ovl_dm_solve(ovl_dm h, int ispin, const double *f, const int descf[9], double *d, const int descd[9], double *w,
                     const int descw[9]);

/* The results of the last solve of channel ispin (zeros before the first).
 * LOCAL. Errors: OVL_ERR_ARG (h or r NULL, ispin out of range). */
ovl_err ovl_dm_get_results(ovl_dm h, int ispin, ovl_dm_results *r);

/* Free the handle and set *h to NULL (a NULL *h: nothing to do, OVL_OK).
 * COLLECTIVE (the communicator's resources). Errors: OVL_ERR_ARG (h NULL). */
ovl_err ovl_dm_destroy(ovl_dm *h);

#ifdef __cplusplus
}
#endif
#endif
