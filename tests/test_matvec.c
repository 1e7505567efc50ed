/* Algorithms 1 and 2 (Huang-Chow): pipelined reduce -> bcast mat-vec against
 * Algorithm 1 and a reference product, on square grids (with idle ranks when
 * P is not a square), every N_DUP in {1,2,3,4,7}, both back ends. */
#include <math.h>
#include <stdlib.h>

#include "ovl/ovl.h"
#include "ovltest.h"

static void run(ovl_grid2d g, int64_t n, ovl_backend be) {
  int p, q, i, j;
  ovl_grid2d_dims(g, &p, &q);
  ovl_grid2d_coords(g, &i, &j);
  ovl_dmat A = NULL;
  T_OK(ovl_dmat_create(g, n, n, &A));
  ovl_dmat_fill(A, OVL_FILL_RANDOM, 77);
  double *xf = malloc(sizeof(double) * (size_t)(n + 1)), *yref = malloc(sizeof(double) * (size_t)(n + 1));
  for (int64_t k = 0; k < n; k++) xf[k] = ovl_fill_value(78, k, 0);
  T_OK(ovl_dmat_matvec(A, xf, yref));
  int active = ovl_grid2d_active(g);
  int64_t off = active ? ovl_block_off(n, q, j) : 0, len = active ? ovl_block_len(n, q, j) : 0;
  double *y1 = calloc((size_t)len + 1, sizeof(double)), *y2 = calloc((size_t)len + 1, sizeof(double));
  ovl_coll_cfg cfg = ovl_coll_cfg_default();
  cfg.backend = be;
  T_OK(ovl_matvec(A, xf + off, y1, OVL_MATVEC_ALG1, 1, &cfg, NULL));
  for (int64_t k = 0; k < len; k++)
    T_CHECK(fabs(y1[k] - yref[off + k]) <= 1e-12 * (1 + fabs(yref[off + k])) * (double)n, "alg1 n=%lld k=%lld",
            (long long)n, (long long)k);
  int ndups[] = {1, 2, 3, 4, 7};
  for (int d = 0; d < 5; d++) {
    int nd = ndups[d];
    ovl_pipe_event ev[14];
    for (int64_t k = 0; k < len; k++) y2[k] = -1.0;
    T_OK(ovl_matvec(A, xf + off, y2, OVL_MATVEC_ALG2, nd, &cfg, ev));
    int bad = 0;
    /* own schedules sum in the same order for every split: identical; the MPI
     * library may pick another reduction order for another count */
    for (int64_t k = 0; k < len; k++)
      bad += be == OVL_BACKEND_OWN ? y2[k] != y1[k] : fabs(y2[k] - y1[k]) > 1e-14 * (double)n * (1 + fabs(y1[k]));
    T_CHECK(bad == 0, "alg2 ndup=%d backend=%s n=%lld differs from alg1 in %d entries", nd, ovl_backend_name(be),
            (long long)n, bad);
    if (active) {
      int seen[14] = {0};
      for (int c = 0; c < nd; c++) {
        T_CHECK(ev[c * 2 + 1].t_post >= ev[c * 2].t_done, "part %d: bcast posted before its reduce completed", c);
        for (int s = 0; s < 2; s++)
          if (ev[c * 2 + s].order >= 0 && ev[c * 2 + s].order < 2 * nd) seen[ev[c * 2 + s].order]++;
      }
      for (int k = 0; k < 2 * nd; k++) T_CHECK(seen[k] == 1, "completion order %d seen %d times", k, seen[k]);
    }
  }
  T_ERR(ovl_matvec(A, xf + off, y2, OVL_MATVEC_ALG2, 0, &cfg, NULL), OVL_ERR_ARG);
  free(xf);
  free(yref);
  free(y1);
  free(y2);
  ovl_dmat_destroy(&A);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int P;
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  int s = ovl_isqrt(P);
  ovl_grid2d g = NULL;
  T_OK(ovl_grid2d_create(MPI_COMM_WORLD, s, s, OVL_GRID_ALLOW_IDLE, &g));
  int64_t ns[] = {1, 5, 17, 100, 1001};
  for (int b = 0; b < 2; b++)
    for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++) run(g, ns[k], b ? OVL_BACKEND_OWN : OVL_BACKEND_MPI);
  ovl_grid2d_destroy(&g);
  if (P >= 2) { /* a non-square grid is refused on every rank */
    ovl_grid2d g2 = NULL;
    T_OK(ovl_grid2d_create(MPI_COMM_WORLD, 1, 2, OVL_GRID_ALLOW_IDLE, &g2));
    ovl_dmat A = NULL;
    T_OK(ovl_dmat_create(g2, 4, 4, &A));
    double x[4] = {0}, y[4] = {0};
    T_ERR(ovl_matvec(A, x, y, OVL_MATVEC_ALG1, 1, NULL, NULL), OVL_ERR_GRID);
    ovl_dmat_destroy(&A);
    ovl_grid2d_destroy(&g2);
  }
  T_CHECK(ovl_req_live() == 0, "leaked %lld requests", (long long)ovl_req_live());
  int rc = t_finish("test_matvec");
  MPI_Finalize();
  return rc;
}
