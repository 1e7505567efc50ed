/* Whole-matrix entries for bindings (Python's ovl package): the caller holds
 * the matrices as dense column-major arrays on rank 0 of its communicator;
 * ovl scatters them onto the kernel's grid, runs the kernel with the plan
 * the planner completes (ovl/plan.h), and gathers the result back to rank 0.
 *
 * Communicator. Passed as a pointer to an MPI_Comm handle (NULL:
 * MPI_COMM_WORLD), so that a binding need not know the handle's type (a
 * pointer in Open MPI, an int in MPICH): mpi4py's MPI._addressof(comm) is
 * such a pointer.
 *
 * Only rank 0's sizes and arrays are read; its sizes reach the others.
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
                         ovl_dense_info *info);

/* C = A B with A (m x k), B (k x n), C (m x n), column-major with ld = rows,
 * on rank 0 (NULL elsewhere). algo: "auto" (or NULL) for the planner, or a
 * multiplication algorithm's name ("summa", "hsumma", "cannon", "3d",
 * "25d"). info may be NULL. COLLECTIVE over *comm. Errors (agreed):
 * OVL_ERR_ARG (sizes < 1, algo), those of ovl_plan_resolve and ovl_gemm. */
ovl_err ovl_gemm_dense(const void *comm, int64_t m, int64_t n, int64_t k, const double *A, const double *B, double *C,
                       const char *algo, ovl_dense_info *info);

#ifdef __cplusplus
}
#endif
#endif
