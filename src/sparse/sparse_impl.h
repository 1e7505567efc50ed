/* Internal to src/sparse: the block-sparse matrix's layout (ovl/bsmat.h).
 *
 * Global: nblk blocks per dimension, sizes bs[], offsets boff[] (nblk + 1).
 * perm[I] is block I's place in the permuted order; block row I belongs to
 * process row perm[I] % p, block column J to process column perm[J] % q.
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
};

#endif
