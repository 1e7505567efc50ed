/* Internal: the 2.5D block-sparse product for the rooms above src/sparse
 * (the 2.5D purification, src/purify/sparse.c), whose iterations run on the
 * 3D grid's active ranks only. */
#ifndef OVL_SPARSE_BSMUL3_H
#define OVL_SPARSE_BSMUL3_H

#include "ovl/bsmat.h"

/* ovl_bsmat_multiply3 called by the active ranks of g only (the idle ranks
 * of its parent take no part): its errors are agreed over
 * ovl_grid3d_comm(g). COLLECTIVE over the grid's active ranks. */
ovl_err ovl_i_bsmat_multiply3_active(ovl_grid3d g, ovl_bsmat A, ovl_bsmat B, double eps, int ndup, ovl_bsmat C,
                                     ovl_bsmul_stats *stats);

#endif
