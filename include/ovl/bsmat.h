/* ovl block-sparse distributed matrices (square, symmetric use: a Hamiltonian,
 * an overlap, a density matrix of one basis) and their filtered product.
 *
 * Blocks: the n indices are cut into nblk blocks of sizes bs[0..nblk-1]
 * (atoms or shells of the basis; sum = n). Block (I, J) is bs[I] x bs[J],
 * stored whole (dense, column-major) or not at all.
 *
 * Distribution: on a p x q grid (ovl_grid2d, the dense kernels' grids). The
 * blocks are first permuted by a random permutation made from a seed (the
 * same on every rank: a Fisher-Yates shuffle driven by splitmix64 from the
 * seed, so the same on every machine; seed 0: no permutation), then dealt
 * out cyclically:
 * block row I goes to process row perm(I) mod p, block column J to process
 * column floor(perm(J) / p) mod q (so that on a p x p grid the diagonal
 * blocks spread over every process, not over the grid's diagonal). So every
 * process holds about nnzb / (p q) blocks, and about nval / (p q) values,
 * whatever the sparsity pattern and the order of the block sizes (a
 * molecule's atoms in file order put the nonzeros near the diagonal, and a
 * water box's sizes repeat with period 3: in file order on 3 process rows
 * one row would hold every oxygen). Each process keeps its blocks as blocked CSR:
 * its block rows in increasing global I, each with its block columns in
 * increasing global J, the Frobenius norm of every block kept beside it.
 *
 * Filtering: a threshold eps >= 0 drops every block whose Frobenius norm is
 * below eps; eps = 0 drops only blocks that are exactly zero. Norms are
 * computed scaled (no underflow: a block with one nonzero has a norm > 0);
 * a block whose norm is NaN is kept, so that the checks downstream see it.
 *
 * Files (read on rank 0 of the grid's parent and scattered by blocks; written
 * from rank 0 after a gather; docs/guides/sparse.md):
 *  - Matrix Market "coordinate real|integer general|symmetric" (.mtx; one
 *    based; a symmetric file holds the lower triangle) with the block sizes
 *    in a JSON sidecar "<file>.json" holding exactly {"rows": n, "cols": n,
 *    "block_sizes": [..]}. Without a sidecar the caller's block sizes are
 *    used; a sidecar present wins over them. An entry makes its whole block
 *    stored (the rest of the block zeros). Written: the nonzero entries of
 *    the stored blocks in increasing (I, J), column by column in a block.
 *  - raw blocks (.bsr): records, each int64 I, int64 J (block indices from
 *    0), then bs[I] * bs[J] float64 column-major, all little-endian, in
 *    strictly increasing (I, J), with the sidecar "<file>.json" =
 *    {"format": "ovl-bsr", "rows": n, "cols": n, "block_sizes": [..],
 *    "blocks": records, "symmetric": bool, "checksum": 16 hex digits};
 *    symmetric files hold the blocks with I >= J only (diagonal blocks
 *    whole). The checksum is the 64-bit FNV-1a hash of the file's bytes
 *    (optional when read: a file that does not match it is refused), so the
 *    same matrix gives the same file whatever the grid and permutation.
 * Every size a file claims is checked against the memory before it is
 * allocated (ovl_check_memory; rank 0 holds a .mtx file's entries, 40 bytes
 * each, twice for a symmetric file's off-diagonal ones, or a .bsr file's
 * index, then each process its blocks). Outputs are written atomically as
 * the dense matrices' (ovl/dmat.h): a temporary renamed into place, the
 * sidecar first.
 */
#ifndef OVL_BSMAT_H
#define OVL_BSMAT_H

#include <stdint.h>
#include <stdio.h>

#include "ovl/core.h"
#include "ovl/dmat.h"
#include "ovl/grid.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ovl_bsmat_s *ovl_bsmat;

/* An empty (all blocks absent) n x n block-sparse matrix on grid g with the
 * block sizes bs[0..nblk-1] (each >= 1, sum = n, the same on every rank) and
 * the permutation seed. COLLECTIVE over the grid's parent.
 * Errors (agreed): OVL_ERR_ARG (NULL grid/bs/out, nblk < 1, a size < 1,
 * sizes or seed that differ between ranks), OVL_ERR_NOMEM. */
ovl_err ovl_bsmat_create(ovl_grid2d g, int nblk, const int *bs, uint64_t seed, ovl_bsmat *out);
/* A new empty matrix with A's grid, blocks and permutation. COLLECTIVE. */
ovl_err ovl_bsmat_create_like(ovl_bsmat A, ovl_bsmat *out);
/* NULL-safe, nulls *A. LOCAL. */
ovl_err ovl_bsmat_destroy(ovl_bsmat *A);
/* Free the work arrays A keeps for the next operation that writes it (a
 * product's accumulator, the value array of the blocks replaced last: kept
 * so that a matrix rewritten every iteration finds its memory mapped) when A
 * will not be written again soon; its blocks stay. LOCAL. Errors: OVL_ERR_ARG
 * (a NULL handle). */
ovl_err ovl_bsmat_release_work(ovl_bsmat A);
/* The arithmetic of the block products that write C (ovl_bsmat_multiply,
 * ovl_bsmat_multiply3 and the products of ovl_bsmat_invsqrt into Z):
 * OVL_BSMAT_FLOAT64 (the default of a new matrix) or OVL_BSMAT_FLOAT32,
 * where each block product of at least 512 multiply-adds runs as sgemm on
 * its operands rounded to float32, the products a step adds to one block
 * of C are summed in float32 and C accumulates the steps in float64: twice
 * the rate, and a relative error of about 1e-7 (float32's rounding, times
 * the inner blocks' count) per product, for thresholds of 1e-6 and above.
 * C's stored values stay float64. LOCAL; it must be the same on every rank
 * when C is written (the products agree it). Errors: OVL_ERR_ARG (a NULL
 * handle, another value). */
typedef enum ovl_bsmat_arith { OVL_BSMAT_FLOAT64 = 0, OVL_BSMAT_FLOAT32 = 1 } ovl_bsmat_arith;
/* The threshold from which float32 may finish a filtered computation: a
 * block's float32 rounding (about 1e-7 times its inner blocks' count) is
 * then far below what the filtering drops. Below it, mixed precision ends in
 * float64 (the purification, S^(-1/2)) or stays in float64 (the transforms
 * Z F Z and Z D Z of ovl purify --sparse, ovl_pdpurify and ovl_dm). */
#define OVL_BSMAT_FLOAT32_EPS 1e-5
ovl_err ovl_bsmat_set_arith(ovl_bsmat C, ovl_bsmat_arith arith);
/* C's arithmetic (OVL_BSMAT_FLOAT64 for a NULL handle). LOCAL. */
ovl_bsmat_arith ovl_bsmat_get_arith(ovl_bsmat C);
/* symmetric = 1: the products that write C (ovl_bsmat_multiply, and
 * ovl_bsmat_multiply3 on one layer) have a symmetric result, such as A A
 * for a symmetric A, A B for commuting symmetric A and B, or X Y with
 * X Y = (X Y)^T: only its blocks (I, J) with I <= J are computed, and the
 * others are their transposes (one MPI_Alltoallv of about half of C over
 * the grid), about half the block products. The caller vouches for the
 * symmetry; C then is exactly symmetric. 0 (a new matrix's): every block
 * computed. LOCAL; the same on every rank when C is written (agreed there).
 * Errors: OVL_ERR_ARG (a NULL handle, a value other than 0 and 1). */
ovl_err ovl_bsmat_set_symmetric(ovl_bsmat C, int symmetric);
/* C's setting (0 for a NULL handle). LOCAL. */
int ovl_bsmat_get_symmetric(ovl_bsmat C);

/* Accessors. LOCAL. A NULL handle gives NULL or -1. */
ovl_grid2d ovl_bsmat_grid(ovl_bsmat A);
int64_t ovl_bsmat_n(ovl_bsmat A);
int ovl_bsmat_nblk(ovl_bsmat A);
const int *ovl_bsmat_block_sizes(ovl_bsmat A);
/* Stored blocks and stored doubles on this process. */
int64_t ovl_bsmat_local_blocks(ovl_bsmat A);
int64_t ovl_bsmat_local_values(ovl_bsmat A);

/* Totals over the grid: stored blocks, stored doubles (the matrix's memory
 * is 8 bytes a double plus its index), the fraction of the n x n entries
 * stored. COLLECTIVE over the grid's parent. */
ovl_err ovl_bsmat_count(ovl_bsmat A, int64_t *blocks, int64_t *values, double *fill);

/* ---- conversion ---- */
/* B := the blocks of the dense D (n x n on any grid of a congruent parent)
 * whose Frobenius norm is >= eps (eps = 0: the blocks that are not all zero).
 * B's blocks must have been made (ovl_bsmat_create). COLLECTIVE. */
ovl_err ovl_bsmat_from_dense(ovl_dmat D, double eps, ovl_bsmat B);
/* D := B (absent blocks as zeros). COLLECTIVE.
 * Both conversions move the entries with one MPI_Alltoallv over the parent
 * and take, besides the two matrices, about three times a process's share of
 * the dense n x n matrix (the dense view of its blocks and the two message
 * buffers). Errors (agreed): OVL_ERR_ARG (a NULL handle, grids over other
 * ranks, eps < 0 or NaN), OVL_ERR_SIZE (D not n x n, a message over 2^31
 * doubles), OVL_ERR_NOMEM. */
ovl_err ovl_bsmat_to_dense(ovl_bsmat B, ovl_dmat D);

/* ---- coarser blocks ----
 * The sizes of consecutive blocks merged while their sum stays <= target (a
 * block larger than target stays alone): gs[0..*ngroups-1], gs with room for
 * nblk. LOCAL. Errors: OVL_ERR_ARG (NULL pointers, nblk < 1, target < 1, a
 * size < 1). */
ovl_err ovl_bsmat_group_sizes(int nblk, const int *bs, int target, int *ngroups, int *gs);
/* *out := A on the coarser blocks of ovl_bsmat_group_sizes(target): the same
 * entries (no block is dropped: a coarse block is stored when one of its
 * parts is), the same grid and seed. One MPI_Alltoallv; memory checked
 * first. COLLECTIVE over the grid's parent. Errors (agreed): OVL_ERR_ARG
 * (NULL, target < 1 or differing between ranks), OVL_ERR_SIZE (a message
 * over 2^31 doubles), OVL_ERR_NOMEM. */
ovl_err ovl_bsmat_regroup(ovl_bsmat A, int target, ovl_bsmat *out);

/* ---- files (COLLECTIVE over the grid's parent; errors agreed) ----
 * Reading (.mtx or .bsr by the name's ending, any case): a new matrix on g
 * with the permutation seed, the blocks under eps dropped. The block sizes
 * are the sidecar's (or `bs`/`nblk` when a .mtx file has no sidecar: give
 * nblk = 0 to require it); memory is checked before the blocks are
 * allocated (OVL_ERR_NOMEM naming the file, with the bytes needed and
 * available). OVL_ERR_FORMAT naming the file and the place (line, record,
 * byte, key): a sidecar that is not JSON, lacks a key, has an unknown key,
 * rows != cols, block sizes that are not integers >= 1 or do not sum to n;
 * a file that contradicts its sidecar (sizes, record count, checksum,
 * trailing or missing bytes); an index outside the matrix; a repeated entry
 * or block; an entry above the diagonal of a symmetric file; a NaN or
 * infinite value. OVL_ERR_IO: a missing file or sidecar. OVL_ERR_UNSUPPORTED:
 * a Matrix Market array, complex, pattern or skew file. OVL_ERR_ARG: a name
 * without .mtx or .bsr, eps < 0 or NaN. */
ovl_err ovl_bsmat_read(ovl_grid2d g, const char *path, int nblk, const int *bs, uint64_t seed, double eps,
                       ovl_bsmat *out);
/* Write B (.mtx or .bsr by the name's ending) and its sidecar "<path>.json";
 * symmetric: the lower triangle only, refused (OVL_ERR_NUMERIC, naming the
 * entries) unless B is symmetric within 1e-12 of its largest entry. Rank 0
 * gathers the blocks (memory checked first). Errors (agreed): OVL_ERR_ARG
 * (the name), OVL_ERR_IO (the target or its directory), OVL_ERR_NUMERIC,
 * OVL_ERR_NOMEM. */
ovl_err ovl_bsmat_write(ovl_bsmat B, const char *path, int symmetric);

/* ---- operations on the stored blocks (COLLECTIVE over the grid's parent
 * where a sum over ranks is needed, else LOCAL as stated) ---- */
ovl_err ovl_bsmat_copy(ovl_bsmat dst, ovl_bsmat src); /* same blocks and grid; LOCAL */
ovl_err ovl_bsmat_scale(ovl_bsmat A, double alpha);   /* LOCAL */
/* A := alpha A + beta I (adds the diagonal blocks that are absent). LOCAL. */
ovl_err ovl_bsmat_shift(ovl_bsmat A, double alpha, double beta);
/* C := alpha A + beta B, the union of the patterns, then filtered by eps.
 * C may be A or B. LOCAL. */
ovl_err ovl_bsmat_axpby(double alpha, ovl_bsmat A, double beta, ovl_bsmat B, double eps, ovl_bsmat C);
/* Drop the blocks with Frobenius norm < eps. LOCAL. */
ovl_err ovl_bsmat_filter(ovl_bsmat A, double eps);
/* trace(A); dot: the sum of the elementwise products of A and B (trace(A^T
 * B), which is trace(A B) for symmetric A or B); the Frobenius norm (from
 * the blocks' norms). COLLECTIVE; dot: OVL_ERR_ARG (agreed) for A and B of
 * other layouts. The LOCAL operations above return OVL_ERR_ARG for matrices
 * of other grids, blocks or permutations (ovl_bsmat_create_like makes a
 * matching one), a threshold < 0 or NaN, and factors that are not finite. */
ovl_err ovl_bsmat_trace(ovl_bsmat A, double *tr);
ovl_err ovl_bsmat_dot(ovl_bsmat A, ovl_bsmat B, double *tr);
ovl_err ovl_bsmat_norm_fro(ovl_bsmat A, double *nrm);
/* ||A - B||_F without forming A - B (one walk over both patterns).
 * COLLECTIVE; OVL_ERR_ARG (agreed) for A and B of other layouts. */
ovl_err ovl_bsmat_dist_fro(ovl_bsmat A, ovl_bsmat B, double *d);
/* Exchange the stored blocks of A and B (the same layout): no copy. LOCAL;
 * OVL_ERR_ARG for other layouts. */
ovl_err ovl_bsmat_swap(ovl_bsmat A, ovl_bsmat B);
/* Gershgorin bounds of the spectrum of a symmetric A. COLLECTIVE. */
ovl_err ovl_bsmat_gershgorin(ovl_bsmat A, double *lo, double *hi);
/* y := A x, with x and y (n entries each) whole and the same on every rank
 * of the grid's parent (idle ranks included). COLLECTIVE over the parent;
 * OVL_ERR_ARG (agreed) for a NULL handle or vector, OVL_ERR_NOMEM. */
ovl_err ovl_bsmat_matvec(ovl_bsmat A, const double *x, double *y);
/* Bounds of the spectrum of a symmetric A: Gershgorin's, tightened by 40
 * Lanczos steps (ovl_bsmat_matvec; the extreme Ritz values widened by
 * their residual bounds and 1% of their range). Lanczos' ends converge
 * fast, so the bounds are tight estimates, not proofs. COLLECTIVE. */
ovl_err ovl_bsmat_bounds(ovl_bsmat A, double *lo, double *hi);

/* ---- the filtered product ----
 * C := A B, keeping the blocks of C whose Frobenius norm is >= eps.
 * Skipping rule: the product A_IK B_KJ is skipped when its bound
 * ||A_IK|| ||B_KJ|| is below eps_skip(I) = eps / n_I, n_I the number of
 * blocks A stores in its block row I (over the whole grid). A block of C
 * sums at most n_I products, so what skipping leaves out of it is below eps
 * (Frobenius norm): every kept block is within eps of the exact (A B)_IJ,
 * every dropped block has an exact norm below 2 eps, and ||C - A B||_F <
 * 2 eps sqrt(blocks of the unfiltered product) (docs/guides/sparse.md).
 * eps = 0 skips nothing and drops only zero blocks: the product is exact up
 * to rounding.
 * SUMMA over the grid: the panels of A's block columns and B's block rows
 * (one step per pair of A's process column and B's process row, p q steps)
 * are packed and broadcast along the process rows and columns, step s on lane
 * s mod ndup (ndup >= 1; 0: the bsmul family's N_DUP, the knob table's), and each process multiplies the steps
 * in the order they arrive, max(2, ndup) of them in flight; small block products run inline, larger ones as batches of
 * dgemms grouped by size. C must not be A or B; its previous blocks are replaced. COLLECTIVE over the grid's parent;
 * errors agreed (OVL_ERR_ARG: NULL handles (not agreed), different grids, blocks or permutations, C = A or B, eps < 0,
 * NaN or infinite, ndup outside 0..OVL_LANES_MAX, eps or ndup that differ between ranks; OVL_ERR_NOMEM: the panels'
 * buffers, agreed before any panel moves; memory that runs out while C is being summed stops the job with a message, as
 * data are then in flight). stats may be NULL. */
typedef struct ovl_bsmul_stats {
  int64_t products;      /* block products computed on this process */
  int64_t skipped;       /* block products skipped by the norm bound */
  int64_t bytes_sent;    /* bytes this process broadcast (as the root of a panel) */
  double t_comm, t_comp; /* seconds packing, posting and waiting for panels; multiplying and building C */
} ovl_bsmul_stats;
ovl_err ovl_bsmat_multiply(ovl_bsmat A, ovl_bsmat B, double eps, int ndup, ovl_bsmat C, ovl_bsmul_stats *stats);

/* The shape of the product A B for the cost model and the planner of the
 * block-sparse product (ovl_model_bsmul, ovl_plan_resolve_bsmul): n, the
 * blocks per dimension, the stored blocks and doubles of A and B, and the
 * exact count of block products before any is skipped by its norm, sum over
 * K of (blocks in A's block column K) x (blocks in B's block row K), with
 * their flops (sum of 2 m n k); blocks_c is left 0 (the model's estimate).
 * At eps = 0 the products equal the sum over the ranks of
 * ovl_bsmat_multiply's stats.products + stats.skipped. Counted from the
 * index (no values move): one allreduce of 4 nblk + 2 integers over the
 * grid's parent, whose every rank (idle ones too) receives the shape.
 * COLLECTIVE over the grid's parent. Errors (agreed): OVL_ERR_ARG (NULL
 * handles or out (not agreed); A and B of different grids, blocks or
 * permutations), OVL_ERR_NOMEM; OVL_ERR_MPI. */
ovl_err ovl_bsmat_shape(ovl_bsmat A, ovl_bsmat B, ovl_bsmul_shape *out);

/* ---- the 2.5D product and moves between 2D and 3D grids ----
 * On an s x s x c grid g (ovl_grid3d, the dense kernels' 2.5D grid) the
 * matrices follow the dense kernels' convention (ovl/kernels.h ovl_mm25d):
 * every rank creates them on its plane, ovl_grid3d_plane(g), with the same
 * blocks and seed on every plane; the operands and the result are plane
 * k = 0's, on planes k > 0 the same handles are workspace.
 *
 * C := A B on g, filtered as ovl_bsmat_multiply: the inner blocks K are
 * dealt to the layers (whole SUMMA steps t with t mod c == k while the
 * plane's p q = s^2 steps are at least c; on smaller planes a step's blocks
 * are split further), plane 0 sends layer k > 0 A's blocks (I, K) and B's
 * rows K of its K (on the grd lanes), layer k runs the 2D SUMMA of its
 * plane on them, the partial C's are summed onto plane 0 by a binomial
 * tree over grd_comm (message sizes exchanged and memory checked before
 * the blocks move), and plane 0 then drops the blocks of norm < eps. The
 * skipping rule and thresholds are the 2D product's (eps / n_I, n_I
 * counted over the whole block row), so the same
 * block products are computed, each on one layer, and the error bound of
 * ovl_bsmat_multiply holds unchanged: every kept block within eps of
 * (A B)_IJ, every dropped one below 2 eps, ||C - A B||_F < 2 eps
 * sqrt(blocks of the unfiltered product); only the order of the sums
 * differs (eps = 0: exact up to rounding). c = 1 is ovl_bsmat_multiply on
 * the plane. Afterwards, on planes k > 0, A and B hold the slices of plane
 * 0's that the layer used and C is empty; C keeps the buffers of the
 * slices and the sums and two scratch matrices of its layout for its next
 * products (freed with C: a fresh multi-megabyte buffer costs a page fault
 * every 4 KiB). COLLECTIVE over the 3D grid's
 * parent. Errors (agreed over the parent): OVL_ERR_ARG (NULL handles (not
 * agreed), A, B or C not on ovl_grid3d_plane(g), the checks of
 * ovl_bsmat_multiply; eps, ndup, block count, block sizes, seed or A = B
 * that differ between ranks or planes), OVL_ERR_SIZE (a slice or a partial
 * C over 2^31 doubles), OVL_ERR_NOMEM (the slices' and the sums' buffers
 * and the panels, agreed before data move). stats: this process's block
 * products, skipped products, bytes it sent (the slices from plane 0, its
 * partial C, its panels), seconds. May be NULL. */
ovl_err ovl_bsmat_multiply3(ovl_grid3d g, ovl_bsmat A, ovl_bsmat B, double eps, int ndup, ovl_bsmat C,
                            ovl_bsmul_stats *stats);
/* *out := A (on a 2D grid) as a new matrix on ovl_grid3d_plane(g) with A's
 * blocks and seed: plane 0 holds A's blocks, planes k > 0 an empty
 * workspace matrix of the same layout (ready for ovl_bsmat_multiply3). The
 * blocks move by one MPI_Alltoallv over g's parent (memory checked first).
 * A's grid and g must be over the same ranks in the same order (their
 * parents congruent). COLLECTIVE over g's parent. Errors (agreed):
 * OVL_ERR_ARG (NULL (not agreed), grids over other ranks), OVL_ERR_SIZE (a
 * message over 2^31 doubles), OVL_ERR_NOMEM. */
ovl_err ovl_bsmat_to_plane(ovl_bsmat A, ovl_grid3d g, ovl_bsmat *out);
/* The reverse: *out := the blocks of A (on ovl_grid3d_plane(g); plane 0's
 * are the matrix, the others' are ignored) as a new matrix on the 2D grid
 * g2, over the same ranks as g. COLLECTIVE over g's parent. Errors
 * (agreed): as ovl_bsmat_to_plane, and OVL_ERR_ARG for an A that is not on
 * g's plane. */
ovl_err ovl_bsmat_from_plane(ovl_bsmat A, ovl_grid3d g, ovl_grid2d g2, ovl_bsmat *out);

/* ---- the inverse square root ----
 * Z := S^(-1/2) of a symmetric positive definite S (an overlap matrix) by
 * the coupled Newton-Schulz iteration: Y0 = S / c, Z0 = I (c: S's
 * Gershgorin bound above), then T = (3 I - Z Y) / 2, Y <- Y T, Z <- T Z,
 * three filtered products (ovl_bsmat_multiply with eps and ndup) an
 * iteration but the first (Z0 = I: one product), until ||I - Z Y||_F is at rounding (1e-14 sqrt(n)) or stops
 * halving below the filtering's floor max(1e-3, 10 eps sqrt(blocks of Z Y)),
 * or max_iter; then Z / sqrt(c).
 * The iterations grow with log2 of S's condition number (each multiplies
 * the smallest eigenvalues' images by about 1.5 until they near 1). With
 * Z's arithmetic float32 (ovl_bsmat_set_arith) the products run in float32
 * while ||I - Z Y||_F > 1e-2 and in float64 after (the iteration corrects
 * the rounding). Z must be another matrix of S's layout
 * (ovl_bsmat_create_like). COLLECTIVE over
 * the grid's parent; errors (agreed): OVL_ERR_ARG, OVL_ERR_NUMERIC (S not
 * positive definite as far as the iteration shows: no convergence),
 * OVL_ERR_NOMEM. info may be NULL. */
typedef struct ovl_bsmat_invsqrt_info {
  int iterations;  /* Newton-Schulz iterations */
  double residual; /* ||I - Z Y||_F at the end (Y = (S / c)^(1/2)) */
  double scale;    /* c */
  double t_total;  /* seconds */
  int products;    /* block-sparse products */
} ovl_bsmat_invsqrt_info;
ovl_err ovl_bsmat_invsqrt(ovl_bsmat S, double eps, int ndup, int max_iter, ovl_bsmat Z, ovl_bsmat_invsqrt_info *info);

#ifdef __cplusplus
}
#endif
#endif
