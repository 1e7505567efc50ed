/* Block-cyclic test arrays: a BLACS grid, an n x n array with its ScaLAPACK
 * descriptor, and copies between it and a global column-major matrix held
 * on every rank (test_pdpurify, test_dm). */
#ifndef OVL_BCTEST_H
#define OVL_BCTEST_H

#include <math.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

typedef struct grid {
  int ctxt, nprow, npcol, myrow, mycol;
} grid;

/* ScaLAPACK's NUMROC: the local rows (columns) of process ip */
static inline int numroc(int n, int nb, int ip, int isrc, int np) {
  int off = (ip - isrc + np) % np, nblocks = n / nb, num = nblocks / np * nb, extra = nblocks % np;
  if (off < extra) num += nb;
  else if (off == extra) num += n % nb;
  return num;
}

/* the global index of local index l */
static inline int l2g(int l, int nb, int ip, int isrc, int np) {
  return ((l / nb) * np + (ip - isrc + np) % np) * nb + l % nb;
}

/* A block-cyclic n x n array with its descriptor. */
typedef struct bc {
  int desc[9];
  int mloc, nloc;
  double *a;
} bc;

/* LLD_ is the local rows plus extra_lld; every entry (padding too) starts as
 * NAN: padding must stay untouched or unread */
static inline bc bc_new(const grid *G, int n, int mb, int nb, int rsrc, int csrc, int extra_lld) {
  bc x;
  x.mloc = numroc(n, mb, G->myrow, rsrc, G->nprow);
  x.nloc = numroc(n, nb, G->mycol, csrc, G->npcol);
  int lld = (x.mloc > 1 ? x.mloc : 1) + extra_lld;
  int d[9] = {1, G->ctxt, n, n, mb, nb, rsrc, csrc, lld};
  memcpy(x.desc, d, sizeof d);
  size_t len = (size_t)lld * (size_t)(x.nloc > 0 ? x.nloc : 1);
  x.a = malloc(sizeof(double) * len);
  for (size_t i = 0; i < len; i++) x.a[i] = NAN;
  return x;
}

/* local := global (column-major n x n) */
static inline void bc_scatter(const grid *G, bc *x, const double *g, int n) {
  for (int c = 0; c < x->nloc; c++)
    for (int r = 0; r < x->mloc; r++) {
      int gr = l2g(r, x->desc[4], G->myrow, x->desc[6], G->nprow);
      int gc = l2g(c, x->desc[5], G->mycol, x->desc[7], G->npcol);
      x->a[r + (size_t)c * x->desc[8]] = g[gr + (size_t)gc * n];
    }
}

/* global := the whole matrix, on every rank */
static inline void bc_gather(const grid *G, const bc *x, double *g, int n) {
  memset(g, 0, sizeof(double) * (size_t)n * n);
  for (int c = 0; c < x->nloc; c++)
    for (int r = 0; r < x->mloc; r++) {
      int gr = l2g(r, x->desc[4], G->myrow, x->desc[6], G->nprow);
      int gc = l2g(c, x->desc[5], G->mycol, x->desc[7], G->npcol);
      g[gr + (size_t)gc * n] = x->a[r + (size_t)c * x->desc[8]];
    }
  MPI_Allreduce(MPI_IN_PLACE, g, n * n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
}

/* ||a - b||_F / ||b||_F */
static inline double relfro(const double *a, const double *b, int n) {
  double num = 0, den = 0;
  for (size_t i = 0; i < (size_t)n * n; i++) num += (a[i] - b[i]) * (a[i] - b[i]), den += b[i] * b[i];
  return sqrt(num / (den > 0 ? den : 1));
}

#endif
