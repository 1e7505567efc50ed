/* Symmetric square: X -> X^2 for a symmetric X with half the flops, in
 * float64 or float32.
 *
 * The 2.5D structure of SymmSquareCube's Algorithm 6 on an s x s x c grid
 * (c | s; c = s is the p x p x p grid, c = 1 the 2D grid): X_ij is broadcast
 * over grd_comm to every layer, and layer k runs the Cannon steps
 * t = k s/c .. (k+1) s/c - 1, where P(i,j,k) holds A = X_il and B = X_lj,
 * l = (i + j + t) mod s. P(j,i,k) holds B^T and A^T at the same step, so the
 * pair splits the block product: P(i,j) with i > j accumulates the left
 * ceil(n_j/2) columns of X2_ij, P(i,j) with i < j the last floor(n_i/2) rows
 * of X2_ij (the transpose of the right columns of X2_ji), and P(i,i) the
 * lower triangle of X2_ii with syrk. The layers' halves are summed onto
 * plane 0 over grd_comm, then each pair swaps its half (transposed on
 * arrival) and diagonal ranks mirror their triangle: X2 is exactly
 * symmetric. Every phase is split over N_DUP lanes.
 *
 * Single precision: X is rounded to float32 on plane 0; the broadcast, the
 * Cannon shifts and the pair exchange move the float32 data as bytes through
 * the double-typed lane helpers (whole doubles, so a block of an odd number
 * of floats travels with 4 bytes of padding); the sum over layers adds
 * float32 with MPI_Ireduce(MPI_FLOAT, MPI_SUM) on the grd lane communicators
 * (the MPI library's reduction whatever the back end in cfg); the float32
 * result is widened into X2.
 */
#ifndef OVL_SQ_H
#define OVL_SQ_H

#include "ovl/comm.h"
#include "ovl/core.h"
#include "ovl/dmat.h"
#include "ovl/grid.h"
#include "ovl/kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum ovl_prec { OVL_PREC_DOUBLE = 0, OVL_PREC_SINGLE = 1 } ovl_prec;

typedef struct ovl_sq_s *ovl_sq;

/* Plan and allocate for an s x s x c grid (c divides s; c = s is the
 * p x p x p grid, c = 1 the 2D grid; or s = 1 and any c, see
 * ovl_sq_grid_dims). COLLECTIVE over the grid's parent.
 * Errors (agreed on every rank): OVL_ERR_ARG (n < 0, ndup; n or ndup that
 * differ between ranks; a NULL grid or out: local), OVL_ERR_GRID,
 * OVL_ERR_NOMEM. */
ovl_err ovl_sq_create(ovl_grid3d g, int64_t n, int ndup, const ovl_coll_cfg *cfg, ovl_sq *out);
/* NULL-safe, nulls *s. LOCAL. */
ovl_err ovl_sq_destroy(ovl_sq *s);

/* X2 = X * X for a symmetric n x n X on plane 0 of the grid
 * (ovl_grid3d_plane, the dist layer's block layout, uneven blocks allowed),
 * X2 likewise, both triangles of X2 filled (X2 exactly symmetric). X must
 * be symmetric (not checked).
 * prec = OVL_PREC_SINGLE: X is rounded to float32, the local products
 * (sgemm/ssyrk) and every message are float32, and the float32 result is
 * widened into X2. Only the blocks on and below the block diagonal are
 * computed: about n^3 flops in all instead of 2 n^3, and half the reduction
 * volume. tr_out (may be NULL) receives tr(X2) in double on every rank (all
 * ranks of the parent). st (may be NULL) receives phase times and bytes.
 * Repeatable. Errors (agreed): OVL_ERR_ARG (no plan, prec, X or X2 not on
 * the plane), OVL_ERR_SIZE (X or X2 not n x n). COLLECTIVE over the grid's
 * parent. */
ovl_err ovl_sq_run(ovl_sq s, ovl_dmat X, ovl_dmat X2, ovl_prec prec, double *tr_out, ovl_kstats *st);

/* Bytes of workspace any rank holds (besides X and X2) for this n and grid:
 * the most over the ranks of ovl_sq_workspace, the Cannon buffers each run
 * allocates and frees included (double precision, the larger). -1 for
 * invalid arguments (the grids ovl_sq_create refuses) or >= 2^62. LOCAL,
 * pure. */
/* The grid ovl_sq runs on with P ranks: the 2.5D one (ovl_grid25d_dims),
 * else 1 x 1 x P, whose layers split the inner dimension (one syrk each and
 * a reduction of the lower triangle); 0 x 0 x 0 for P < 1. The rule is the
 * planner's shape rule of family OVL_FAMILY_SQ (ovl_grid_shape with
 * OVL_ALGO_SQ); entries resolve a plan of that family (ovl/plan.h) instead.
 * Deprecated: kept for one release. LOCAL; pure function. */
void ovl_sq_grid_dims(int P, int *s, int *c);
int64_t ovl_sq_memory(int64_t n, int s, int c);
/* This rank's workspace: the buffers the object holds plus the Cannon
 * buffers of a double-precision run. LOCAL. */
int64_t ovl_sq_workspace(ovl_sq s);
/* "sq ndup=4 grid=2x2x2 n=1000 backend=mpi". LOCAL. */
int ovl_sq_str(ovl_sq s, char *buf, size_t n);
/* "double", "single" <-> enum. LOCAL. */
const char *ovl_prec_name(ovl_prec p);
ovl_err ovl_prec_parse(const char *name, ovl_prec *out);

#ifdef __cplusplus
}
#endif
#endif
