/* bsmat: block-sparse distributed matrices (ovl/bsmat.h): conversion to and
 * from the dense matrix on every grid shape of the ranks (idle ranks, n < P,
 * nblk < P, uneven blocks), filtering, the operations against dense
 * references, both file formats, bad files and memory bombs, and the
 * balance of the seeded permutation on a banded pattern. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ovl/ovl.h"
#include "ovltest.h"

static int g_rank, g_size;

/* A test matrix: blocks of sizes bs, entry (i, j) in blocks (bi, bj) a
 * random value times 10^-|bi - bj|, zero beyond `band` blocks from the
 * diagonal; symmetric when sym. */
typedef struct tcase {
  int nblk;
  int *bs;
  int64_t n;
  int64_t *boff;
  int *blkof;
  int band;
  int sym;
  uint64_t seed;
} tcase;

static tcase tcase_make(int nblk, const int *bs, int band, int sym, uint64_t seed) {
  tcase c = {nblk, malloc(sizeof(int) * (size_t)nblk), 0, malloc(sizeof(int64_t) * (size_t)(nblk + 1)), NULL, band, sym,
             seed};
  c.boff[0] = 0;
  for (int b = 0; b < nblk; b++) c.bs[b] = bs[b], c.boff[b + 1] = c.boff[b] + bs[b];
  c.n = c.boff[nblk];
  c.blkof = malloc(sizeof(int) * (size_t)c.n);
  for (int b = 0; b < nblk; b++)
    for (int64_t i = c.boff[b]; i < c.boff[b + 1]; i++) c.blkof[i] = b;
  return c;
}

static void tcase_free(tcase *c) {
  free(c->bs);
  free(c->boff);
  free(c->blkof);
}

static double tval(const tcase *c, int64_t i, int64_t j) {
  int bi = c->blkof[i], bj = c->blkof[j], d = abs(bi - bj);
  if (d > c->band) return 0.0;
  if (c->sym && i > j) {
    int64_t t = i;
    i = j, j = t;
  }
  return ovl_fill_value(c->seed, i, j) * pow(10.0, -d);
}

static void fill_dense(ovl_dmat D, const tcase *c) {
  double *a = ovl_dmat_data(D);
  for (int64_t y = 0; y < ovl_dmat_local_cols(D); y++)
    for (int64_t x = 0; x < ovl_dmat_local_rows(D); x++)
      a[x + y * ovl_dmat_ld(D)] = tval(c, ovl_dmat_row_off(D) + x, ovl_dmat_col_off(D) + y);
}

/* Frobenius norm of block (bi, bj) of the test matrix, computed directly. */
static double tnorm(const tcase *c, int bi, int bj) {
  double s = 0;
  for (int64_t j = c->boff[bj]; j < c->boff[bj + 1]; j++)
    for (int64_t i = c->boff[bi]; i < c->boff[bi + 1]; i++) s += tval(c, i, j) * tval(c, i, j);
  return sqrt(s);
}

/* Entries of D that differ from want(i, j) (kept blocks) or from 0 (dropped). */
static int64_t dense_diff(ovl_dmat D, const tcase *c, double eps) {
  int64_t bad = 0;
  double *a = ovl_dmat_data(D);
  for (int64_t y = 0; y < ovl_dmat_local_cols(D); y++)
    for (int64_t x = 0; x < ovl_dmat_local_rows(D); x++) {
      int64_t i = ovl_dmat_row_off(D) + x, j = ovl_dmat_col_off(D) + y;
      double nrm = tnorm(c, c->blkof[i], c->blkof[j]);
      double want = (eps > 0 ? nrm >= eps : nrm > 0) ? tval(c, i, j) : 0.0;
      if (a[x + y * ovl_dmat_ld(D)] != want) bad++;
    }
  MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  return bad;
}

/* ---- conversion on every grid ------------------------------------------------------------- */

static void test_roundtrip(int p, int q, const tcase *c, uint64_t pseed, double eps) {
  ovl_grid2d g = NULL, gd = NULL;
  T_OK(ovl_grid2d_create(MPI_COMM_WORLD, p, q, OVL_GRID_ALLOW_IDLE, &g));
  T_OK(ovl_grid2d_create(MPI_COMM_WORLD, 0, 0, 0, &gd)); /* the dense matrices on the automatic grid */
  if (!g || !gd) return;
  ovl_dmat D = NULL, D2 = NULL;
  ovl_bsmat B = NULL;
  T_OK(ovl_dmat_create(gd, c->n, c->n, &D));
  T_OK(ovl_dmat_create(g, c->n, c->n, &D2));
  T_OK(ovl_bsmat_create(g, c->nblk, c->bs, pseed, &B));
  if (D && D2 && B) {
    fill_dense(D, c);
    T_OK(ovl_bsmat_from_dense(D, eps, B));
    T_OK(ovl_dmat_fill(D2, OVL_FILL_RANDOM, 3)); /* to_dense must overwrite everything */
    T_OK(ovl_bsmat_to_dense(B, D2));
    int64_t bad = dense_diff(D2, c, eps);
    T_CHECK(bad == 0, "%dx%d grid, n %lld, nblk %d, seed %llu, eps %g: %lld entries differ after the round trip", p, q,
            (long long)c->n, c->nblk, (unsigned long long)pseed, eps, (long long)bad);
    /* the stored blocks are exactly those the reference keeps */
    int64_t want_blocks = 0, want_vals = 0, blocks = -1, vals = -1;
    for (int bi = 0; bi < c->nblk; bi++)
      for (int bj = 0; bj < c->nblk; bj++) {
        double nrm = tnorm(c, bi, bj);
        if (eps > 0 ? nrm >= eps : nrm > 0) want_blocks++, want_vals += (int64_t)c->bs[bi] * c->bs[bj];
      }
    double fill = -1;
    T_OK(ovl_bsmat_count(B, &blocks, &vals, &fill));
    T_CHECK(blocks == want_blocks && vals == want_vals, "eps %g: %lld blocks (%lld values), expected %lld (%lld)", eps,
            (long long)blocks, (long long)vals, (long long)want_blocks, (long long)want_vals);
    T_CHECK(fabs(fill - (double)want_vals / ((double)c->n * (double)c->n)) < 1e-15, "fill %g", fill);
    /* and back onto the dense grid */
    ovl_dmat D3 = NULL;
    T_OK(ovl_dmat_create(gd, c->n, c->n, &D3));
    if (D3) {
      T_OK(ovl_bsmat_to_dense(B, D3));
      T_CHECK(dense_diff(D3, c, eps) == 0, "to_dense onto another grid");
    }
    ovl_dmat_destroy(&D3);
  }
  ovl_bsmat_destroy(&B);
  T_CHECK(B == NULL, "destroy nulls the handle");
  ovl_dmat_destroy(&D);
  ovl_dmat_destroy(&D2);
  ovl_grid2d_destroy(&g);
  ovl_grid2d_destroy(&gd);
}

/* The grid shapes of the ranks: 1x1 (others idle), 2x1, 1x2, 2x2, 2x4, 4x2, Px1, 1xP. */
static int shapes(int P, int (*pq)[2]) {
  static const int cand[][2] = {{1, 1}, {2, 1}, {1, 2}, {2, 2}, {2, 4}, {4, 2}, {3, 1}};
  int k = 0;
  for (size_t s = 0; s < sizeof cand / sizeof cand[0]; s++)
    if (cand[s][0] * cand[s][1] <= P) pq[k][0] = cand[s][0], pq[k][1] = cand[s][1], k++;
  if (P > 4) pq[k][0] = P, pq[k][1] = 1, k++, pq[k][0] = 1, pq[k][1] = P, k++;
  return k;
}

static void test_conversion(void) {
  int pq[16][2], ns = shapes(g_size, pq);
  int uneven[] = {3, 1, 4, 1, 5, 2, 6, 2, 3, 1, 2};
  int tiny[] = {2, 1, 1};
  int ones[] = {1, 1, 1, 1, 1};
  tcase cu = tcase_make(11, uneven, 3, 0, 5);
  tcase ct = tcase_make(3, tiny, 1, 1, 6); /* n = 4, nblk = 3: fewer blocks than ranks */
  tcase co = tcase_make(5, ones, 2, 0, 7); /* 1 x 1 blocks */
  for (int s = 0; s < ns; s++) {
    test_roundtrip(pq[s][0], pq[s][1], &cu, 0, 0.0);
    test_roundtrip(pq[s][0], pq[s][1], &cu, 12345, 0.0);
    test_roundtrip(pq[s][0], pq[s][1], &cu, 99, 0.05); /* drops the blocks two and three off the diagonal */
    test_roundtrip(pq[s][0], pq[s][1], &ct, 4, 0.0);
    test_roundtrip(pq[s][0], pq[s][1], &co, 8, 0.0);
  }
  tcase_free(&cu);
  tcase_free(&ct);
  tcase_free(&co);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  test_conversion();
  int rc = t_finish("test_bsmat");
  MPI_Finalize();
  return rc;
}
