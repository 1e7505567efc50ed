/* ovl distributed dense matrices of doubles.
 *
 * Layout: 2D block distribution on a 2D grid (ovl_grid2d). A global m x n
 * matrix is split into p row blocks and q column blocks with
 * ovl_block_off/ovl_block_len (balanced: sizes differ by at most one, so
 * grids that do not divide m or n give uneven blocks). Process (i, j) owns
 * rows [ovl_block_off(m,p,i), +len) and columns [ovl_block_off(n,q,j), +len),
 * stored column-major with leading dimension ld = max(1, local rows).
 *
 * Files:
 *  - raw: little-endian float64, row-major, no header, with a JSON sidecar
 *    "<file>.json" = {"rows": m, "cols": n, "symmetric": true|false}, and
 *    "checksum": ovl_dmat_checksum of the data as 16 hex digits (written by
 *    ovl; optional when read: a reader refuses data that does not match it).
 *    Read and written in parallel with MPI-IO.
 *  - Matrix Market (.mtx): "array" and "coordinate", "real", "general" and
 *    "symmetric". Read on rank 0 and scattered; written from rank 0.
 * Outputs are written atomically: to a new temporary beside the target
 * (ovl_file_tmp_create: exclusive, never through a symlink, unpredictable
 * name), then synced and renamed into place.
 */
#ifndef OVL_DMAT_H
#define OVL_DMAT_H

#include <stdint.h>

#include "ovl/core.h"
#include "ovl/grid.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ovl_dmat_s *ovl_dmat;

/* Create an m x n matrix (zero-filled) on grid g. On idle ranks of g the
 * handle is valid and owns no data. COLLECTIVE over the grid's parent.
 * Errors: OVL_ERR_ARG (a NULL grid or out; agreed: negative sizes, m or n
 * that differ between ranks), OVL_ERR_NOMEM (agreed). */
ovl_err ovl_dmat_create(ovl_grid2d g, int64_t m, int64_t n, ovl_dmat *out);
/* A handle over caller memory: the local block of an m x n matrix on grid g,
 * stored at data (column-major, ld = max(1, local rows), at least
 * ovl_dmat_local_len(g, m, n) doubles; may be NULL when that is 0). The data
 * stays the caller's: ovl_dmat_destroy frees the handle only. LOCAL.
 * Errors: OVL_ERR_ARG (no grid, negative sizes, NULL data for a non-empty
 * block), OVL_ERR_NOMEM. */
ovl_err ovl_dmat_wrap(ovl_grid2d g, int64_t m, int64_t n, double *data, ovl_dmat *out);
/* Doubles the local block of an m x n matrix on g takes on this process
 * (ld * local columns; 0 on idle ranks and for invalid arguments; INT64_MAX
 * when the count does not fit in int64_t). LOCAL. */
int64_t ovl_dmat_local_len(ovl_grid2d g, int64_t m, int64_t n);
/* NULL-safe, nulls *A. LOCAL (frees memory only; not the data of a wrapped
 * handle). */
ovl_err ovl_dmat_destroy(ovl_dmat *A);
/* Memory query: the bytes of the largest local block of an m x n matrix on
 * a p x q grid (process (0, 0)'s), in 64-byte allocation granules as the
 * other memory queries count them. -1 for invalid arguments or 2^62 bytes or
 * more. LOCAL; pure function. */
int64_t ovl_dmat_memory(int64_t m, int64_t n, int p, int q);

/* Accessors. LOCAL. A NULL handle gives NULL (grid, data) or -1 (sizes,
 * offsets). Every function below that takes a handle returns OVL_ERR_ARG
 * for a NULL one ("A is NULL"), and for a NULL output pointer. */
ovl_grid2d ovl_dmat_grid(ovl_dmat A);
int64_t ovl_dmat_rows(ovl_dmat A);
int64_t ovl_dmat_cols(ovl_dmat A);
/* Local block: pointer, local rows/cols, leading dimension, global offsets. */
double *ovl_dmat_data(ovl_dmat A);
int64_t ovl_dmat_local_rows(ovl_dmat A);
int64_t ovl_dmat_local_cols(ovl_dmat A);
int64_t ovl_dmat_ld(ovl_dmat A);
int64_t ovl_dmat_row_off(ovl_dmat A);
int64_t ovl_dmat_col_off(ovl_dmat A);

/* ---- fill (LOCAL: values depend only on (seed, global i, j), so the same
 * matrix results on any grid) ---- */
typedef enum { OVL_FILL_ZERO, OVL_FILL_RANDOM, OVL_FILL_SYMMETRIC, OVL_FILL_IDENTITY } ovl_fill_kind;
ovl_err ovl_dmat_fill(ovl_dmat A, ovl_fill_kind kind, uint64_t seed);
/* Value used by OVL_FILL_RANDOM at (i, j): uniform in [-1, 1). LOCAL. */
double ovl_fill_value(uint64_t seed, int64_t i, int64_t j);

/* Copy src into dst (same sizes and grid). LOCAL. */
ovl_err ovl_dmat_copy(ovl_dmat dst, ovl_dmat src);

/* ---- scatter / gather against a column-major global array on rank 0 of the
 * grid's parent (ld = m). COLLECTIVE over the parent. `global` is only read
 * (scatter) or written (gather) on that rank; may be NULL elsewhere. */
ovl_err ovl_dmat_scatter(ovl_dmat A, const double *global);
ovl_err ovl_dmat_gather(ovl_dmat A, double *global);

/* Redistribute src into dst (same global sizes, grids over congruent parent
 * communicators, any shapes). COLLECTIVE over the parent. */
ovl_err ovl_dmat_redistribute(ovl_dmat src, ovl_dmat dst);

/* dst := src^T (dst is n x m; any grid over a congruent parent).
 * COLLECTIVE over the parent. */
ovl_err ovl_dmat_transpose(ovl_dmat src, ovl_dmat dst);

/* ---- exchange with the caller's own distribution ----
 * One dimension (of size n) of a matrix spread over np processes:
 *  - block-cyclic (nb >= 1): blocks of nb indices dealt out in turn, block 0
 *    to process src (ScaLAPACK's MB_ and RSRC_, or NB_ and CSRC_);
 *  - contiguous parts (nb = 0): process i holds [off[i], off[i+1]), with
 *    0 = off[0] <= off[1] <= ... <= off[np] = n (empty parts allowed): rows
 *    split in rank order, as petsc4py or a 1D code own them.
 * A process keeps its indices in global order. */
typedef struct ovl_axis {
  int np;             /* processes along the dimension, >= 1 */
  int64_t nb;         /* block size (block-cyclic), or 0 (contiguous parts) */
  int src;            /* block-cyclic: the process holding block 0 */
  const int64_t *off; /* contiguous parts: np + 1 offsets */
} ovl_axis;

/* Indices of a dimension of size n that process ip of the axis holds (0 for
 * invalid arguments). LOCAL; pure function. */
int64_t ovl_axis_len(const ovl_axis *ax, int64_t n, int ip);

/* X := the matrix as the caller holds it. The ranks of X's parent form a
 * rows->np x cols->np process grid, process (r, c) being rank r * cols->np + c
 * (ScaLAPACK's row-major BLACS order; a row split is rows->np = P,
 * cols->np = 1); each holds the entries whose row it holds along `rows` and
 * whose column it holds along `cols`, column-major in a with leading
 * dimension lld (>= max(1, its rows) when it holds columns; a may be NULL
 * when it holds nothing). rows and cols must be the same on every rank.
 * Works for X on any grid over the parent (idle ranks included).
 * COLLECTIVE over X's parent (one MPI_Alltoallv). Errors (agreed):
 * OVL_ERR_ARG (an axis that does not describe X's rows or columns, a grid
 * that is not the parent's size, lld, a NULL a with entries, layouts that
 * differ between ranks), OVL_ERR_SIZE (a message over 2^31 - 1 doubles),
 * OVL_ERR_NOMEM. */
ovl_err ovl_dmat_import(ovl_dmat X, const ovl_axis *rows, const ovl_axis *cols, const double *a, int64_t lld);
/* a := X in the caller's distribution (the reverse of ovl_dmat_import; only
 * the entries this rank holds are written). COLLECTIVE over X's parent.
 * Errors as ovl_dmat_import. */
ovl_err ovl_dmat_export(ovl_dmat X, const ovl_axis *rows, const ovl_axis *cols, double *a, int64_t lld);

/* A := (A + A^T) / 2, exactly symmetric: A(i,j) and A(j,i) become the same
 * double (the same two values summed, then halved). On a p x p grid the
 * blocks (i, j) and (j, i) swap with one MPI_Sendrecv (diagonal blocks stay
 * local); other grids go through ovl_dmat_transpose. W: NULL, or another
 * matrix of A's size on A's grid used as scratch (its values are lost),
 * which spares allocating a block. COLLECTIVE over the parent. Errors
 * (agreed): OVL_ERR_SIZE (A not square), OVL_ERR_ARG (A NULL, a W that does
 * not fit), OVL_ERR_NOMEM. */
ovl_err ovl_dmat_symmetrize(ovl_dmat A, ovl_dmat W);

/* ---- checks and norms (COLLECTIVE over the parent) ---- */
/* OVL_ERR_NUMERIC naming the first non-finite entry, if any. */
ovl_err ovl_dmat_check_finite(ovl_dmat A);
/* OVL_ERR_NUMERIC when max |A(i,j) - A(j,i)| > tol * max(1, max |A|). */
ovl_err ovl_dmat_check_symmetric(ovl_dmat A, double tol);
/* Frobenius norm. */
ovl_err ovl_dmat_norm_fro(ovl_dmat A, double *out);
/* y = A x with x (n entries) and y (m entries) replicated on every rank of
 * the parent (idle ranks included). */
ovl_err ovl_dmat_matvec(ovl_dmat A, const double *x, double *y);

/* y := A x for a symmetric operator A on vectors of length n held whole
 * (the same) on every rank of a communicator; COLLECTIVE over it, with an
 * error agreed over it. ctx is the caller's. */
typedef ovl_err (*ovl_matvec_fn)(void *ctx, const double *x, double *y);
/* [*lo, *hi] (on entry: bounds known to hold, e.g. Gershgorin's) tightened
 * by k Lanczos steps (at most n) from a seeded start vector, the same on
 * every rank: the extreme Ritz values widened by their residual bounds
 * |beta_k s_k| and by 1% of the Ritz range, then intersected with the
 * interval. The residual bound places an eigenvalue near each extreme Ritz
 * value; it does not prove that none lies beyond, so the result is an
 * estimate that Lanczos' fast convergence at the ends makes tight. On
 * failure of the small eigensolver the interval stays. flags:
 * OVL_LANCZOS_EVERY_STEP takes all k steps even past an invariant subspace
 * (the same calls of mv whatever the values: a simulation that computes
 * none), else 0. COLLECTIVE over comm (mv is called by every rank);
 * errors (agreed): OVL_ERR_ARG (NULL mv or bounds), OVL_ERR_NOMEM and
 * mv's. Used by ovl_purify (the dense F) and ovl_bsmat_bounds. */
enum { OVL_LANCZOS_EVERY_STEP = 1 };
ovl_err ovl_lanczos_bounds(int64_t n, int k, unsigned flags, ovl_matvec_fn mv, void *ctx, MPI_Comm comm, double *lo,
                           double *hi);
/* Trace of a square matrix. */
ovl_err ovl_dmat_trace(ovl_dmat A, double *out);
/* A checksum of A's values that does not depend on the grid: the sum mod
 * 2^64 of a hash of every entry's global position and bits, the same on
 * every rank. Written into raw sidecars ("checksum") and checkpoint states.
 * COLLECTIVE over the parent. Errors: OVL_ERR_ARG, OVL_ERR_MPI. */
ovl_err ovl_dmat_checksum(ovl_dmat A, uint64_t *out);

/* ---- files (COLLECTIVE over the parent; same error on every rank) ---- */

typedef struct ovl_matrix_meta {
  int64_t rows, cols;
  int symmetric; /* 1 when the file declares symmetry */
} ovl_matrix_meta;

/* Read the JSON sidecar of a raw file (path + ".json"). COLLECTIVE over comm
 * (rank 0 reads, result broadcast). Errors: OVL_ERR_IO, OVL_ERR_FORMAT. */
ovl_err ovl_raw_read_meta(MPI_Comm comm, const char *path, ovl_matrix_meta *meta);

/* Read a raw file into a new matrix on g. Checks the file size against the
 * metadata (OVL_ERR_FORMAT on mismatch), that all values are finite, and
 * symmetry when the metadata declares it or require_symmetric is set. */
ovl_err ovl_dmat_read_raw(ovl_grid2d g, const char *path, int require_symmetric, ovl_dmat *out);

/* Write A to path (raw, row-major) and path.json, atomically. */
ovl_err ovl_dmat_write_raw(ovl_dmat A, const char *path, int symmetric);

/* Matrix Market. Symmetric files are expanded to full storage. */
ovl_err ovl_dmat_read_mtx(ovl_grid2d g, const char *path, int require_symmetric, ovl_dmat *out);
ovl_err ovl_dmat_write_mtx(ovl_dmat A, const char *path, int symmetric);

/* Read the header and size line of a Matrix Market file (not its entries):
 * rows, cols and whether it declares symmetry. COLLECTIVE over comm (rank 0
 * reads, result broadcast). Errors (agreed): OVL_ERR_ARG, OVL_ERR_IO,
 * OVL_ERR_FORMAT, OVL_ERR_UNSUPPORTED, OVL_ERR_SIZE, as ovl_dmat_read_mtx
 * gives them for the same lines. */
ovl_err ovl_mtx_read_meta(MPI_Comm comm, const char *path, ovl_matrix_meta *meta);

/* Read by extension: ".mtx" (any case) is Matrix Market, anything else raw. */
ovl_err ovl_dmat_read(ovl_grid2d g, const char *path, int require_symmetric, ovl_dmat *out);
/* The sizes of a matrix file by extension, as ovl_dmat_read reads it:
 * ovl_mtx_read_meta or ovl_raw_read_meta. COLLECTIVE over comm. */
ovl_err ovl_matrix_read_meta(MPI_Comm comm, const char *path, ovl_matrix_meta *meta);

#ifdef __cplusplus
}
#endif
#endif
