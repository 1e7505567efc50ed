/* Entries for bindings (Python's ovl package) and plain C callers: ovl moves
 * the caller's matrices onto the kernel's grid, runs the kernel with the
 * plan the planner completes (ovl/plan.h), and moves the result back. Two
 * ways to hold the matrices:
 *
 *  - whole (ovl_purify_dense, ovl_gemm_dense): dense column-major arrays on
 *    rank 0 of the communicator, scattered and gathered; only rank 0's sizes
 *    and arrays are read, and its sizes reach the others.
 *  - row blocks (ovl_purify_rows, ovl_gemm_rows): every rank holds a
 *    contiguous block of rows of each matrix, the blocks in rank order: rank
 *    r holds rows [off_r, off_r + nrows_r), off_r the sum of the row counts
 *    of the ranks below it. Any counts >= 0 that sum to the matrix's rows
 *    (a rank may hold none). A block is column-major: entry (i, j) of the
 *    block, global row off_r + i, at X[i + j * ld], ld >= max(1, nrows_r).
 *    The result comes back in the same row split, and no rank ever holds
 *    more than its own rows and one block of the kernel's grid per matrix
 *    (ovl_dmat_import / ovl_dmat_export move them, one MPI_Alltoallv each).
 *    Every rank passes the same sizes and options (checked against rank
 *    0's).
 *
 * Communicator. Passed as a pointer to an MPI_Comm handle (NULL:
 * MPI_COMM_WORLD), so that a binding need not know the handle's type (a
 * pointer in Open MPI, an int in MPICH): mpi4py's MPI._addressof(comm) is
 * such a pointer.
 *
 * Options. options (NULL: none) is a string of run-time options with the
 * names of the command line (ovl/entry.h: ovl_options_runtime), e.g.
 * "--ndup 2 --algo alg5 --method canonical"; with $OVL_OPTIONS they set the
 * plan's options (--algo, --ndup, --grid, --backend, ...) and, for the
 * purification, --method, --precision, --nocc, --tol, --max-iter. Rank 0's
 * $OVL_OPTIONS and options decide, for every rank. Precedence: the
 * defaults < the arguments < $OVL_OPTIONS (other commands' options
 * skipped) < options (an unknown option is an error, OVL_ERR_ARG naming
 * it).
 *
 * Errors: the same code and ovl_errmsg() text on every rank of comm.
 */
#ifndef OVL_DENSE_H
#define OVL_DENSE_H

#include <stdint.h>

#include "ovl/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What a dense call did (the same numbers on every rank). */
typedef struct ovl_dense_info {
  int iterations;       /* purification iterations (0 for a product) */
  int products;         /* kernel calls */
  double idem_err;      /* ||D^2 - D||_F */
  double trace_err;     /* |tr D - n_occ| */
  double energy;        /* tr(D F) */
  double t_total;       /* seconds in the call (rank 0's), scatter and gather included */
  double t_kernel;      /* seconds in the kernel (rank 0's) */
  char stop_reason[32]; /* ovl_purify's ("" for a product) */
  char plan[192];       /* the plan that ran (ovl_plan_str) */
  char why[640];        /* where the plan came from (the planner's reason) */
} ovl_dense_info;

/* Purify F (n x n, symmetric, column-major, ld = n, on rank 0) into D
 * (n x n on rank 0; other ranks may pass NULL for both).
 * method: "sp2", "trs4", "canonical" (and "trs2"); algo: "auto" (or NULL)
 * for the planner, or an SSC algorithm name ("alg3".."alg6"); ndup <= 0:
 * the planner's; prec: "double" or "mixed" (NULL: double); tol 0: the
 * method's stopping rule; max_iter <= 0: 200. info may be NULL.
 * COLLECTIVE over *comm. Errors (agreed): OVL_ERR_ARG (nocc out of range,
 * options, n < 1), those of ovl_plan_resolve and ovl_purify. */
ovl_err ovl_purify_dense(const void *comm, int64_t n, const double *F, int64_t nocc, const char *method,
                         const char *algo, int ndup, const char *prec, double tol, int max_iter, double *D,
                         const char *options, ovl_dense_info *info);

/* C = A B with A (m x k), B (k x n), C (m x n), column-major with ld = rows,
 * on rank 0 (NULL elsewhere). algo: "auto" (or NULL) for the planner, or a
 * multiplication algorithm's name ("summa", "hsumma", "cannon", "3d",
 * "2.5d"). info may be NULL. COLLECTIVE over *comm. Errors (agreed):
 * OVL_ERR_ARG (sizes < 1, algo), those of ovl_plan_resolve and ovl_gemm. */
ovl_err ovl_gemm_dense(const void *comm, int64_t m, int64_t n, int64_t k, const double *A, const double *B, double *C,
                       const char *algo, const char *options, ovl_dense_info *info);

/* ovl_purify_dense on row blocks: this rank's nrows rows of the n x n F
 * (column-major, ldf >= max(1, nrows)) in, its rows of D (ldd) out; F and D
 * may be NULL when nrows = 0. The other arguments as ovl_purify_dense's, the
 * same on every rank. COLLECTIVE over *comm. Errors (agreed): OVL_ERR_ARG
 * (a negative row count, row counts that do not sum to n, ld, NULL arrays
 * with rows, sizes or options that differ from rank 0's, and
 * ovl_purify_dense's), those of ovl_plan_resolve and ovl_purify. */
ovl_err ovl_purify_rows(const void *comm, int64_t n, int64_t nrows, const double *F, int64_t ldf, int64_t nocc,
                        const char *method, const char *algo, int ndup, const char *prec, double tol, int max_iter,
                        double *D, int64_t ldd, const char *options, ovl_dense_info *info);

/* ovl_gemm_dense on row blocks: C = A B with A (m x k) and C (m x n) split
 * by the same row counts (this rank: mrows rows, lda and ldc >=
 * max(1, mrows)) and B (k x n) split by its own (krows, ldb >=
 * max(1, krows)). m, n, k and algo the same on every rank. COLLECTIVE over
 * *comm. Errors (agreed): OVL_ERR_ARG (as ovl_purify_rows, for both row
 * splits), those of ovl_plan_resolve and ovl_gemm. */
ovl_err ovl_gemm_rows(const void *comm, int64_t m, int64_t n, int64_t k, int64_t mrows, const double *A, int64_t lda,
                      int64_t krows, const double *B, int64_t ldb, double *C, int64_t ldc, const char *algo,
                      const char *options, ovl_dense_info *info);

#ifdef __cplusplus
}
#endif
#endif
