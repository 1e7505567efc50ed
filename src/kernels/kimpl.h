/* Internal helpers shared by the kernels. */
#ifndef OVL_KIMPL_H
#define OVL_KIMPL_H

#include "dist/dmat_impl.h"
#include "ovl/kernels.h"
#include "ovl/trace.h"

/* A (m x k), B (k x n), C (m x n) on the same grid. LOCAL. */
ovl_err ovl_kernel_check_gemm_shapes(ovl_dmat A, ovl_dmat B, ovl_dmat C);

/* Validate the plan fields every algorithm uses (b, ndup). LOCAL. */
ovl_err kern_check_plan(const ovl_mm_plan *plan, const char *who);

/* C := beta * C on the local block. LOCAL. */
void kern_scale(ovl_dmat C, double beta);

/* C(m x n, ldc) += alpha * A(m x k, lda) * B(k x n, ldb), column-major; when
 * reqs is given, the product runs in column chunks and the requests are
 * progressed between chunks. LOCAL. */
void kern_dgemm(int64_t m, int64_t n, int64_t k, double alpha, const double *a, int64_t lda, const double *b,
                int64_t ldb, double *c, int64_t ldc, int nreq, ovl_req *reqs);

/* Copy an m x n column-major block. LOCAL. */
void kern_copy(double *dst, int64_t ldd, const double *src, int64_t lds, int64_t m, int64_t n);

#endif
