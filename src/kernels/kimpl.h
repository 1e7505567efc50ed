/* Internal helpers shared by the kernels. */
#ifndef OVL_KIMPL_H
#define OVL_KIMPL_H

#include "ovl/kernels.h"

/* A (m x k), B (k x n), C (m x n) on the same grid. LOCAL. */
ovl_err ovl_kernel_check_gemm_shapes(ovl_dmat A, ovl_dmat B, ovl_dmat C);

#endif
