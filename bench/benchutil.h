/* Small helpers shared by the benchmark programs of bench/. */
#ifndef OVL_BENCHUTIL_H
#define OVL_BENCHUTIL_H

#include <stdio.h>
#include <stdlib.h>

#include "ovl/ovl.h"

/* qsort's comparison of two doubles (ascending). */
static inline int bench_cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Stop every rank with prog's message when rc is an error. */
static inline void bench_die(const char *prog, ovl_err rc, const char *what) {
  if (rc == OVL_OK) return;
  fprintf(stderr, "%s: %s: %s\n", prog, what, ovl_errmsg());
  MPI_Abort(MPI_COMM_WORLD, 1);
}

/* *A := the n x n band test matrix on grid g in blocks of b rows (the last
 * one narrower when b does not divide n): entry (i, j) = 1 / (1 + |i - j|)
 * within band blocks of the diagonal, 0 beyond; built on rank 0 of the
 * grid's parent and scattered. COLLECTIVE over the grid's parent. */
static inline void bench_band_bsmat(const char *prog, ovl_grid2d g, int64_t n, int b, int band, ovl_bsmat *A) {
  int rank = 0;
  MPI_Comm_rank(ovl_grid2d_parent(g), &rank);
  int nblk = (int)((n + b - 1) / b), *bs = malloc(sizeof(int) * (size_t)nblk);
  double *d = rank == 0 ? calloc((size_t)(n * n), sizeof(double)) : NULL;
  if (!bs || (rank == 0 && !d)) bench_die(prog, OVL_ERR_NOMEM, "the dense band");
  for (int k = 0; k < nblk; k++) bs[k] = k + 1 < nblk ? b : (int)(n - (int64_t)b * (nblk - 1));
  for (int64_t j = 0; rank == 0 && j < n; j++)
    for (int64_t i = 0; i < n; i++)
      if (llabs(i / b - j / b) <= band) d[i + j * n] = 1.0 / (1.0 + (double)llabs(i - j));
  ovl_dmat D = NULL;
  bench_die(prog, ovl_dmat_create(g, n, n, &D), "ovl_dmat_create");
  bench_die(prog, ovl_dmat_scatter(D, d), "ovl_dmat_scatter");
  bench_die(prog, ovl_bsmat_create(g, nblk, bs, 1, A), "ovl_bsmat_create");
  bench_die(prog, ovl_bsmat_from_dense(D, 0, *A), "ovl_bsmat_from_dense");
  ovl_dmat_destroy(&D);
  free(bs), free(d);
}

#endif
