/* The entry room's shared parts (src/entry): the purification options as
 * every entry declares them (the command line, $OVL_OPTIONS, option
 * strings), the option strings of the library's entries (ovl/dense.h,
 * ovl_pdpurify, ovl_pdgemm), and the job of `ovl purify`: a Fock matrix
 * file purified. The purification itself is ovl/purify.h (below this room);
 * the one-call entries are ovl/dense.h, ovl/pdgemm.h and ovl/pdpurify.h.
 * (Up to this release these were declared in ovl/purify.h; ovl/ovl.h
 * includes both.) */
#ifndef OVL_ENTRY_H
#define OVL_ENTRY_H

#include <stdio.h>

#include "ovl/opts.h"
#include "ovl/plan.h"
#include "ovl/purify.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- options ------------------------------------------------------------------
 * The purification options, declared once for every entry (the command
 * line, $OVL_OPTIONS, strings): --method NAME, --precision (-P) double|mixed,
 * --nocc K, --mu MU, --tol T, --max-iter N, --homo E, --lumo E (sp2acc's
 * gap estimates, given together), --checkpoint PREFIX,
 * --checkpoint-every K, --restart, --sparse EPS (the block-sparse
 * purification's filtering threshold, in [0, 1): ovl_purify_opts.sparse). ovl_purify_opts_table writes the table
 * (entries pointing into *v) into opts (cap entries; returns how many, or -1
 * when cap is too small). ovl_purify_opts_apply checks what was given and
 * sets *po (po->nocc = -1 when --nocc was not given: the caller supplies
 * it). LOCAL. Errors (OVL_ERR_ARG, naming the options): --precision mixed
 * without sp2/sp2acc/trs4, --homo or --lumo without the other or not
 * homo < lumo, mcweeny without --mu or with --nocc, --mu without
 * mcweeny, --tol outside [OVL_PURIFY_TOL_MIN, OVL_PURIFY_TOL_MAX], a
 * checkpoint option without the others it needs. */
typedef struct ovl_purify_optvals {
  const char *method, *precision, *checkpoint; /* checkpoint: NULL when not given */
  int64_t nocc;                                /* -1: not given */
  double mu, tol, homo, lumo;                  /* NAN: not given */
  int max_iter, checkpoint_every, restart;
  double sparse;    /* --sparse EPS: NAN when not given */
  int sparse_block; /* --sparse-block B (default: ovl_purify_opts_default's) */
} ovl_purify_optvals;
ovl_purify_optvals ovl_purify_optvals_default(void);
int ovl_purify_opts_table(ovl_purify_optvals *v, ovl_opt *opts, int cap);
ovl_err ovl_purify_opts_apply(const ovl_purify_optvals *v, ovl_purify_opts *po);
/* The rule of options that do not apply (ovl_plan_option_applies) for the
 * purification: sp2 and trs4 square with the symmetric square, not with a
 * SymmSquareCube algorithm, so the plan's --algo and --arrival-order given
 * with them are refused (OVL_ERR_ARG naming both); every other option
 * applies (OVL_OK). LOCAL. */
ovl_err ovl_purify_option_applies(ovl_purify_method m, const char *option);

/* ---- options strings for the library's entries ---------------------------------
 * PETSc-like run-time options for the entries (ovl/dense.h, ovl_pdpurify):
 * the plan's options (ovl_plan_opts of family f) and the purification's
 * (ovl_purify_opts_table), parsed from a string such as "--ndup 2 --algo
 * alg5 --method trs4" with the same names as on the command line. The
 * planner's files (--machine, --tune-file) and the checkpoint options are
 * commands' options, not an entry's.
 *
 * ovl_options_apply: the options in str (NULL: none) laid over *plan (may
 * be NULL: no plan options) and *po (may be NULL: no purification options):
 * only what str gives replaces the caller's values; the checks of
 * ovl_plan_opts_apply and ovl_purify_opts_apply then run on the result.
 * With ignore_unknown, options the table lacks are skipped (another
 * command's, as in $OVL_OPTIONS); otherwise they are an error. LOCAL.
 * Errors: OVL_ERR_ARG (an unknown option, a bad value, options that do not
 * fit together), the message starting with `what` ("OVL_OPTIONS",
 * "options") and naming the option; OVL_ERR_NOMEM.
 *
 * ovl_options_runtime: rank 0's $OVL_OPTIONS (other commands' options
 * skipped), then rank 0's options string (every option must be known),
 * broadcast from rank 0 and applied as above on every rank, so that every
 * rank runs the same plan whatever its own environment. The order of
 * precedence: the defaults < the caller's arguments (*plan, *po as passed)
 * < $OVL_OPTIONS < options (the run-time database overrides the code, as
 * PETSc's does). COLLECTIVE over comm. Errors (agreed, the same message on
 * every rank): those of ovl_options_apply, OVL_ERR_MPI. */
ovl_err ovl_options_apply(const char *str, const char *what, int ignore_unknown, ovl_family f, ovl_plan *plan,
                          ovl_purify_opts *po);
ovl_err ovl_options_runtime(MPI_Comm comm, const char *options, ovl_family f, ovl_plan *plan, ovl_purify_opts *po);
/* ovl_options_runtime with the entries' own flag --print-plan (print the
 * resolved plan, ovl_plan_describe, on rank 0's stderr): *print_plan is set
 * to 1 when $OVL_OPTIONS or options give it (print_plan NULL: the flag is
 * not known, as in ovl_options_runtime). COLLECTIVE over comm; errors as
 * ovl_options_runtime's. */
ovl_err ovl_options_runtime_print(MPI_Comm comm, const char *options, ovl_family f, ovl_plan *plan, ovl_purify_opts *po,
                                  int *print_plan);

/* ---- a Fock matrix file purified (the job of `ovl purify`) -------------------
 * The file convention of `ovl purify` and tools/make-fock: F as raw float64
 * with a JSON sidecar (or Matrix Market), and a meta.json beside it with
 * n_occ and the extreme eigenvalues of F. */
typedef struct ovl_fock_meta {
  int64_t nocc;            /* -1 when absent */
  double eig_min, eig_max; /* NAN when absent */
  double homo, lumo;       /* F's HOMO and LUMO eigenvalues (sp2acc's estimates when the caller gives none);
                              NAN when absent or not homo < lumo */
} ovl_fock_meta;
/* The path of meta.json beside fock. LOCAL. */
void ovl_fock_meta_path(const char *fock, char *path, size_t n);
/* What meta.json beside fock says. A missing meta.json is no error; one
 * that exists goes through the input check (a FIFO is refused, never
 * opened for data) and must be a JSON object whose "n_occ" (an integer) and
 * "eig_min", "eig_max", "homo", "lumo" (numbers), where present, are valid (OVL_ERR_FORMAT
 * naming the file and the key). Rank 0 reads; every rank learns the values
 * and the verdict. COLLECTIVE over comm. */
ovl_err ovl_fock_meta_read(MPI_Comm comm, const char *fock, ovl_fock_meta *m);

typedef struct ovl_purify_job {
  const char *fock;    /* F, in an orthonormal basis */
  const char *out;     /* write D (raw + sidecar, atomically), or NULL */
  const char *trace;   /* trace the run to PREFIX.json/.csv, or NULL */
  int check;           /* compare with dsyevd's density (ovl_purify_reference) */
  int allow_idle;      /* ranks beyond the grid stay idle */
  int have_grid;       /* deprecated, not read: the grid is po.plan's (resolved in the method's family,
                          ovl_purify_plan_family) */
  int ppn;             /* > 0: the first ppn ranks of every node work while the others sleep */
  int64_t mem_limit;   /* bytes per rank (0: the node's available memory shared among its ranks) */
  ovl_fock_meta meta;  /* checked against F when it has the eigenvalues (a byte-swapped or different file fails) */
  ovl_purify_opts po;  /* method, n_occ, the complete plan, stopping, checkpoints, stop flag; po.sparse not NAN:
                          the block-sparse job below */
  const char *overlap; /* the block-sparse job: S of a non-orthogonal basis (same blocks as F), or NULL */
  const char *machine; /* the block-sparse job: the cost model's machine file for the product's plan
                          (ovl_plan_resolve_bsmul; NULL: $OVL_MACHINE, else the built-in) */
} ovl_purify_job;

typedef struct ovl_purify_job_result {
  ovl_purify_result res;
  ovl_purify_ref ref; /* when checked; NAN otherwise */
  int checked;
  int64_t n, mem_estimate;
  int active;    /* ranks that worked */
  int threads;   /* BLAS threads of an active rank (multiple PPN: the node's cores / its active ranks; 0: unknown) */
  char grid[64]; /* "2x2x2" */
  double t_wall; /* seconds */
  double t_cpu;  /* the process's CPU time over the same span, max over ranks (seconds; what a dedicated core
                    would take when the wall time includes other jobs' time slices; under SMPI the simulated time) */
  /* the block-sparse job: blocks of F and of D (over the grid), D's fraction of the n^2 entries, the
   * inverse square root of S (iterations 0 without an overlap) and the seconds of S^(-1/2), of Z F Z and
   * Z D Z; the block count per dimension in the file and after merging (ovl_purify_opts.sparse_block) */
  int64_t blocks_f, blocks_d;
  int blocks_file, blocks;
  double fill_d, t_invsqrt, t_transform;
  int invsqrt_iter;
  int64_t rss_peak; /* the largest peak resident memory of a rank (bytes, getrusage; 0: unknown) */
  /* the block-sparse job: the product's plan (ovl_purify_sparse_plan) and where it came from */
  ovl_plan plan;
  char plan_why[OVL_PLAN_WHY];
} ovl_purify_job_result;

/* Run the job: the grid, the memory asked before anything is allocated, F
 * read on plane 0 and checked against meta, ovl_purify, D written (not when
 * stopped), the check. With po.sparse set (not NAN), the block-sparse job:
 * F (and S) read as block-sparse matrices (.mtx or .bsr with the block
 * sizes in the sidecar; ovl/bsmat.h) on the 2D grid of comm, with S: Z =
 * S^(-1/2) (ovl_bsmat_invsqrt) and F' = Z F Z, ovl_purify_sparse, D = Z D'
 * Z written (.mtx or .bsr by the name), the check on F' and D' gathered
 * (small n); every product filtered by po.sparse. COLLECTIVE over comm.
 * Errors: those of the steps. */
ovl_err ovl_purify_job_run(MPI_Comm comm, const ovl_purify_job *j, ovl_purify_job_result *r);

/* The check's verdict of a finished job: OVL_OK when it was not checked or
 * D agrees with dsyevd's density (relative error <= 1e-8, and |tr D - n_occ|
 * <= 1e-8 except for McWeeny; the block-sparse job: max(1e-8, 100 eps)
 * for both); else OVL_ERR_NUMERIC naming the error. The
 * same on every rank (the result is). LOCAL. */
ovl_err ovl_purify_job_verdict(const ovl_purify_job *j, const ovl_purify_job_result *r);

/* A finished job as `ovl purify` prints it: two lines (size, occupation,
 * grid, iterations, what stopped the run, idempotency and trace errors,
 * energy; times, products, GFLOP/s, the output) and the check's line; or
 * (json) one "purify" record (docs/guides/cli.md). ranks: the ranks of the run's
 * communicator. LOCAL: call it on the rank that prints. Errors: OVL_ERR_ARG
 * (NULL arguments), those of the record writer. */
ovl_err ovl_purify_job_print(FILE *out, const ovl_purify_job *j, const ovl_purify_job_result *r, int ranks, int json);

#ifdef __cplusplus
}
#endif
#endif
