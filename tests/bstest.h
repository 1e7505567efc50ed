/* Helpers of the block-sparse tests (test_bsmul, test_bsmul3): a banded
 * test matrix as a global array, the same on every rank, and its block-sparse
 * copy on a grid. */
#ifndef OVL_BSTEST_H
#define OVL_BSTEST_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "ovl/ovl.h"
#include "ovltest.h"

/* A banded test matrix as a global column-major array: entry (i, j) of
 * block (bi, bj) a random value times decay^|bi - bj|, zero beyond band
 * blocks; block row er and block column ec (when >= 0) left empty. */
typedef struct tmat {
  int nblk, *bs;
  int64_t n, *boff;
  double *a;
} tmat;

static inline void tmat_make(tmat *t, int nblk, const int *bs, int band, double decay, int er, int ec, uint64_t seed) {
  t->nblk = nblk;
  t->bs = malloc(sizeof(int) * (size_t)nblk);
  t->boff = malloc(sizeof(int64_t) * (size_t)(nblk + 1));
  t->boff[0] = 0;
  for (int b = 0; b < nblk; b++) t->bs[b] = bs[b], t->boff[b + 1] = t->boff[b] + bs[b];
  t->n = t->boff[nblk];
  t->a = calloc((size_t)(t->n * t->n + 1), sizeof(double));
  for (int bj = 0; bj < nblk; bj++)
    for (int bi = 0; bi < nblk; bi++) {
      if (abs(bi - bj) > band || bi == er || bj == ec) continue;
      double sc = pow(decay, abs(bi - bj));
      for (int64_t j = t->boff[bj]; j < t->boff[bj + 1]; j++)
        for (int64_t i = t->boff[bi]; i < t->boff[bi + 1]; i++)
          t->a[i + j * t->n] = sc * t_urand(seed * 1000003ULL + (uint64_t)(i * t->n + j));
    }
}

static inline void tmat_free(tmat *t) { free(t->bs), free(t->boff), free(t->a); }

/* The block-sparse copy of t on grid g (rank 0 of MPI_COMM_WORLD scatters
 * it), blocks dealt with seed. COLLECTIVE over g's parent. */
static inline ovl_err to_bsmat(ovl_grid2d g, const tmat *t, uint64_t seed, ovl_bsmat *out) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  ovl_dmat D = NULL;
  OVL_TRY(ovl_dmat_create(g, t->n, t->n, &D));
  ovl_err rc = ovl_dmat_scatter(D, rank == 0 ? t->a : NULL);
  if (rc == OVL_OK) rc = ovl_bsmat_create(g, t->nblk, t->bs, seed, out);
  if (rc == OVL_OK) rc = ovl_bsmat_from_dense(D, 0, *out);
  ovl_dmat_destroy(&D);
  return rc;
}

#endif
