/* Internal to src/sparse: the block-sparse matrix's layout (ovl/bsmat.h).
 *
 * Global: nblk blocks per dimension, sizes bs[], offsets boff[] (nblk + 1).
 * perm[I] is block I's place in the permuted order; block row I belongs to
 * process row perm[I] % p, block column J to process column
 * (perm[J] / p) % q (ovl_i_sparse_prow, ovl_i_sparse_pcol): the place's
 * digits in base p, then q, so that on a grid with p = q the diagonal blocks
 * (I, I) spread over every process, not over the grid's diagonal only.
 *
 * Local (blocked CSR, one process): the block rows this process's row owns,
 * rows[0..nrows-1] (global I, increasing), and the block columns its column
 * owns, cols[0..ncols-1] (global J, increasing). Row r's stored blocks are
 * k = rowptr[r] .. rowptr[r + 1] - 1: global column colidx[k] (increasing
 * within the row), data at val + valoff[k] (bs[I] x bs[J], column-major,
 * ld = bs[I]), Frobenius norm nrm[k]. Arrays are grown by doubling; cap_*
 * are their capacities. */
#ifndef OVL_SPARSE_IMPL_H
#define OVL_SPARSE_IMPL_H

#include <stdint.h>

#include "ovl/bsmat.h"

typedef struct ovl_i_bsr {
  int64_t nrows;   /* local block rows */
  int64_t *rowptr; /* nrows + 1 */
  int64_t nnzb;    /* stored blocks */
  int *colidx;     /* nnzb: global block column */
  int64_t *valoff; /* nnzb: offset of the block's data in val */
  double *nrm;     /* nnzb: Frobenius norms */
  int64_t nval;    /* doubles stored */
  double *val;
  int64_t cap_blocks, cap_val;
  int64_t last_row; /* the local row of the last appended block, -1 when none */
} ovl_i_bsr;

struct ovl_bsmat_s {
  ovl_grid2d g;
  int p, q, myrow, mycol; /* -1 coordinates on idle ranks */
  int nblk;
  int64_t n;
  int *bs;       /* nblk */
  int64_t *boff; /* nblk + 1 */
  int *perm;     /* nblk: permuted place of each block */
  uint64_t seed;
  int64_t nrows, ncols;
  int *rows, *cols; /* the global block rows / columns owned here */
  int *lrow;        /* nblk: local row index of a global block row, or -1 */
  int *lcol;        /* nblk: local column index of a global block column, or -1 */
  ovl_i_bsr loc;
  /* Kept for the next operation that writes this matrix, so that it finds
   * memory already mapped (a fresh multi-megabyte array costs a page fault
   * every 4 KiB, each a zeroed page): the product's accumulator (malloc'd,
   * ovl_bsmat_multiply) and the value array of the blocks replaced last
   * (ovl_malloc'd, the rebuilding operations of ops.c). */
  double *pool_spare;
  int64_t pool_spare_cap;
  double *val_spare;
  int64_t val_spare_cap;
  /* Kept likewise by the 2.5D product for its result C (ovl_bsmat_multiply3,
   * src/sparse/bsmul3.c): the message buffer of its slices and partial
   * sums (ovl_malloc'd), a matrix of C's layout that receives a partial C
   * and one that receives B's slice when B is A (made on first use,
   * collectively over the plane). */
  double *msg_spare;
  int64_t msg_spare_cap;
  struct ovl_bsmat_s *sum_spare, *slice_spare;
  int arith;        /* ovl_bsmat_arith of the products that write it */
  int sym;          /* the products that write it are symmetric (ovl_bsmat_set_symmetric) */
  float *fspare[3]; /* a float32 product's panels' values and accumulator, kept for the next (as pool_spare) */
  int64_t fspare_cap[3];
};

/* The process row of block row I, the process column of block column J. */
static inline int ovl_i_sparse_prow(const struct ovl_bsmat_s *A, int bi) { return A->perm[bi] % A->p; }
static inline int ovl_i_sparse_pcol(const struct ovl_bsmat_s *A, int bj) { return (A->perm[bj] / A->p) % A->q; }

/* ---- helpers shared by the files of src/sparse (LOCAL) ----
 *
 * Building a matrix's local blocks: ovl_i_sparse_clear (no blocks), then
 * ovl_i_sparse_append_block in increasing (local row, global column), then
 * ovl_i_sparse_finish (closes the rows after the last block). rowptr is valid
 * up to the row of the last block appended, and everywhere after finish. */

/* Make room for `blocks` more blocks and `vals` more doubles (arrays grown by
 * doubling). Errors: OVL_ERR_NOMEM (the bytes in the message). */
ovl_err ovl_i_sparse_reserve(ovl_bsmat A, int64_t blocks, int64_t vals);
/* Drop every local block (the memory is kept). */
void ovl_i_sparse_clear(ovl_bsmat A);
/* Append block (local row lr, global column gj): its bs[I] x bs[J] values
 * copied from blk (column-major, ld = bs[I]; NULL: zeros); nrm its Frobenius
 * norm, or < 0 to compute it. *dst (when dst is not NULL) receives the stored
 * data (valid until the next append). Errors: OVL_ERR_INTERNAL (out of
 * order, or a column this process does not hold), OVL_ERR_NOMEM. */
ovl_err ovl_i_sparse_append_block(ovl_bsmat A, int64_t lr, int gj, const double *blk, double nrm, double **dst);
/* Close the rows after the last appended block. */
void ovl_i_sparse_finish(ovl_bsmat A);
/* The index k of stored block (local row lr, global column gj), or -1. */
int64_t ovl_i_sparse_find(ovl_bsmat A, int64_t lr, int gj);
/* Frobenius norm of len doubles, scaled (no overflow or underflow: > 0 when
 * one value is not zero; NaN when one is NaN). */
double ovl_i_sparse_norm(const double *x, int64_t len);
/* 1 when a block of norm nrm is kept by the threshold eps (eps > 0: nrm >=
 * eps; eps = 0: nrm > 0; a NaN norm is kept, so that checks see it). */
static inline int ovl_i_sparse_keep(double nrm, double eps) { return nrm != nrm || (eps > 0 ? nrm >= eps : nrm > 0); }
/* Exchange the local blocks of A and B (same layout). */
void ovl_i_sparse_swap(ovl_bsmat A, ovl_bsmat B);
/* Free the local blocks' arrays. */
void ovl_i_sparse_free(ovl_i_bsr *L);
/* B's local blocks := the blocks of A (none from this rank when send = 0)
 * moved to their owners in B by one MPI_Alltoallv over comm, where the rank
 * of B's process (i, j) in comm is i q + j (a grid over comm's first
 * ranks, as every grid is). B's blocks are A's or coarser ones, each a run
 * of A's (ovl_bsmat_group_sizes), with the same seed. Memory checked first;
 * errors (OVL_ERR_SIZE, OVL_ERR_NOMEM) agreed over comm, with fn in the
 * message. COLLECTIVE over comm. */
ovl_err ovl_i_sparse_move(ovl_bsmat A, int send, ovl_bsmat B, MPI_Comm comm, const char *fn);
/* 1 when A and B have the same grid, block sizes and permutation. */
int ovl_i_sparse_same_layout(ovl_bsmat A, ovl_bsmat B);

#endif
