/* Internal view of ovl_dmat, shared by the files of src/dmat. */
#ifndef OVL_DMAT_IMPL_H
#define OVL_DMAT_IMPL_H

#include "ovl/dmat.h"

struct ovl_dmat_s {
  ovl_grid2d grid;    /* borrowed */
  int64_t m, n;       /* global sizes */
  int64_t lm, ln;     /* local sizes (0 on idle ranks) */
  int64_t roff, coff; /* global offsets of the local block */
  int64_t ld;         /* leading dimension, max(1, lm) */
  double *data;       /* column-major lm x ln, ld */
  int borrowed;       /* 1: data is the caller's (ovl_dmat_wrap), never freed here */
};

/* Offsets/lengths of the block owned by grid position (i, j). */
static inline void ovl_dmat_block_of(const struct ovl_dmat_s *A, int p, int q, int i, int j, int64_t *roff, int64_t *lm,
                                     int64_t *coff, int64_t *ln) {
  *roff = ovl_block_off(A->m, p, i);
  *lm = ovl_block_len(A->m, p, i);
  *coff = ovl_block_off(A->n, q, j);
  *ln = ovl_block_len(A->n, q, j);
}

#endif
