/* grid: 2D, 3D (natural rank order, row/col/grd comms), 2.5D, HSUMMA groups,
 * idle ranks and rank counts that do not fit. */
#include <string.h>

#include "ovl/ovl.h"
#include "ovltest.h"

static int csize(MPI_Comm c) {
  int s = -1;
  if (c != MPI_COMM_NULL) MPI_Comm_size(c, &s);
  return s;
}
static int crank(MPI_Comm c) {
  int r = -1;
  if (c != MPI_COMM_NULL) MPI_Comm_rank(c, &r);
  return r;
}

static void test_2d(int P, int rank) {
  ovl_grid2d g = NULL;
  T_OK(ovl_grid2d_create(MPI_COMM_WORLD, 0, 0, 0, &g));
  int p, q, i, j;
  ovl_grid2d_dims(g, &p, &q);
  ovl_grid2d_coords(g, &i, &j);
  T_CHECK(p * q == P && p <= q, "auto grid %dx%d for P=%d", p, q, P);
  T_CHECK(i == rank / q && j == rank % q, "row-major coords");
  T_CHECK(csize(ovl_grid2d_row_comm(g)) == q && crank(ovl_grid2d_row_comm(g)) == j, "row comm");
  T_CHECK(csize(ovl_grid2d_col_comm(g)) == p && crank(ovl_grid2d_col_comm(g)) == i, "col comm");
  ovl_grid2d_destroy(&g);
  T_CHECK(g == NULL, "destroy nulls");
  T_OK(ovl_grid2d_destroy(&g)); /* NULL-safe */

  /* explicit P x 1 */
  T_OK(ovl_grid2d_create(MPI_COMM_WORLD, P, 1, 0, &g));
  ovl_grid2d_dims(g, &p, &q);
  T_CHECK(p == P && q == 1, "explicit %dx1", P);
  ovl_grid2d_destroy(&g);

  /* one dimension given */
  T_OK(ovl_grid2d_create(MPI_COMM_WORLD, 0, P, 0, &g));
  ovl_grid2d_dims(g, &p, &q);
  T_CHECK(p == 1 && q == P, "0 x P derives 1");
  ovl_grid2d_destroy(&g);

  /* too big: same error on every rank */
  T_ERR(ovl_grid2d_create(MPI_COMM_WORLD, P + 1, 1, 0, &g), OVL_ERR_GRID);
  T_CHECK(g == NULL, "no handle on error");
  T_ERR(ovl_grid2d_create(MPI_COMM_WORLD, -1, 1, 0, &g), OVL_ERR_ARG);
  if (P >= 3) {
    /* 2x1 on P ranks: refused without ALLOW_IDLE, idle extras with it */
    T_ERR(ovl_grid2d_create(MPI_COMM_WORLD, 2, 1, 0, &g), OVL_ERR_GRID);
    T_CHECK(strstr(ovl_errmsg(), "idle") != NULL, "message mentions idle: %s", ovl_errmsg());
    T_OK(ovl_grid2d_create(MPI_COMM_WORLD, 2, 1, OVL_GRID_ALLOW_IDLE, &g));
    T_CHECK(ovl_grid2d_active(g) == (rank < 2), "active flag");
    if (rank >= 2) {
      T_CHECK(ovl_grid2d_comm(g) == MPI_COMM_NULL && ovl_grid2d_row_comm(g) == MPI_COMM_NULL, "idle comms null");
      ovl_grid2d_coords(g, &i, &j);
      T_CHECK(i == -1 && j == -1, "idle coords");
    } else {
      T_CHECK(csize(ovl_grid2d_comm(g)) == 2, "active comm size");
    }
    ovl_grid2d_destroy(&g);
  }
}

static void test_3d(int P, int rank) {
  ovl_grid3d g = NULL;
  int s, c, i, j, k;
  /* cube root with idle ranks: P=1 ->1, 2,3,4 -> 1 (+idle), 8 -> 2 */
  T_OK(ovl_grid3d_create(MPI_COMM_WORLD, 0, 0, OVL_GRID_ALLOW_IDLE, &g));
  ovl_grid3d_dims(g, &s, &c);
  int want = P >= 8 ? 2 : 1;
  T_CHECK(s == want && c == want, "auto 3D side %d (want %d)", s, want);
  int n3 = s * s * c;
  T_CHECK(ovl_grid3d_active(g) == (rank < n3), "3D active");
  if (rank < n3) {
    ovl_grid3d_coords(g, &i, &j, &k);
    T_CHECK(rank == k * s * s + i * s + j, "natural order: rank %d -> (%d,%d,%d)", rank, i, j, k);
    T_CHECK(ovl_grid3d_rank_of(g, i, j, k) == crank(ovl_grid3d_comm(g)), "rank_of");
    /* row_comm = P(:,j,k) ranked by i; col_comm = P(i,:,k) by j; grd = P(i,j,:) by k */
    T_CHECK(csize(ovl_grid3d_row_comm(g)) == s && crank(ovl_grid3d_row_comm(g)) == i, "row_comm");
    T_CHECK(csize(ovl_grid3d_col_comm(g)) == s && crank(ovl_grid3d_col_comm(g)) == j, "col_comm");
    T_CHECK(csize(ovl_grid3d_grd_comm(g)) == c && crank(ovl_grid3d_grd_comm(g)) == k, "grd_comm");
    /* members of row_comm share j and k: check by allgather of world ranks */
    int mine[3] = {i, j, k}, all[3 * 8];
    MPI_Allgather(mine, 3, MPI_INT, all, 3, MPI_INT, ovl_grid3d_row_comm(g));
    for (int r = 0; r < s; r++)
      T_CHECK(all[3 * r] == r && all[3 * r + 1] == j && all[3 * r + 2] == k, "row_comm member %d", r);
    MPI_Allgather(mine, 3, MPI_INT, all, 3, MPI_INT, ovl_grid3d_grd_comm(g));
    for (int r = 0; r < c; r++)
      T_CHECK(all[3 * r] == i && all[3 * r + 1] == j && all[3 * r + 2] == r, "grd_comm member %d", r);
    ovl_grid2d pl = ovl_grid3d_plane(g);
    int pi, pj;
    ovl_grid2d_coords(pl, &pi, &pj);
    T_CHECK(pi == i && pj == j && ovl_grid2d_active(pl), "plane coords");
  } else {
    T_CHECK(ovl_grid3d_row_comm(g) == MPI_COMM_NULL && !ovl_grid2d_active(ovl_grid3d_plane(g)), "idle 3D");
  }
  ovl_grid3d_destroy(&g);

  /* strict: P = 2,3,4 do not fit a cube */
  ovl_err rc = ovl_grid3d_create(MPI_COMM_WORLD, 0, 0, 0, &g);
  if (P == 1 || P == 8) {
    T_CHECK(rc == OVL_OK, "cube fits P=%d", P);
    ovl_grid3d_destroy(&g);
  } else {
    T_CHECK(rc == OVL_ERR_GRID, "P=%d is not a cube: %s", P, ovl_err_name(rc));
  }
  /* 2.5D: 2x2x2 is c = s; 2x2x1 on 4 ranks; c > s refused except on a 1 x 1 x c stack */
  if (P == 4) {
    T_OK(ovl_grid3d_create(MPI_COMM_WORLD, 0, 1, 0, &g));
    ovl_grid3d_dims(g, &s, &c);
    T_CHECK(s == 2 && c == 1, "2.5D 2x2x1");
    ovl_grid3d_destroy(&g);
    T_OK(ovl_grid3d_create(MPI_COMM_WORLD, 1, 4, 0, &g));
    ovl_grid3d_dims(g, &s, &c);
    T_CHECK(s == 1 && c == 4, "1x1x4 stack");
    ovl_grid3d_destroy(&g);
    T_ERR(ovl_grid3d_create(MPI_COMM_WORLD, 2, 4, OVL_GRID_ALLOW_IDLE, &g), OVL_ERR_ARG);
  }
  if (P == 8) {
    T_OK(ovl_grid3d_create(MPI_COMM_WORLD, 2, 2, 0, &g));
    ovl_grid3d_destroy(&g);
    T_ERR(ovl_grid3d_create(MPI_COMM_WORLD, 3, 3, 0, &g), OVL_ERR_GRID);
  }
}

static void test_hgroups(int P, int rank) {
  ovl_grid2d g = NULL;
  T_OK(ovl_grid2d_create(MPI_COMM_WORLD, 0, 0, 0, &g));
  int p, q, i, j;
  ovl_grid2d_dims(g, &p, &q);
  ovl_grid2d_coords(g, &i, &j);
  /* every G that tiles the grid: sizes and ranks of the four comms */
  for (int G = 1; G <= P; G++) {
    int gI, gJ;
    if (ovl_hgroups_auto_dims(p, q, G, &gI, &gJ) != OVL_OK) continue;
    T_CHECK(gI * gJ == G && p % gI == 0 && q % gJ == 0, "auto dims for G=%d", G);
    ovl_hgroups h = NULL;
    T_OK(ovl_hgroups_create(g, gI, gJ, &h));
    int bi = p / gI, bj = q / gJ;
    T_CHECK(csize(ovl_hgroups_outer_row(h)) == gJ && crank(ovl_hgroups_outer_row(h)) == j / bj, "outer_row G=%d", G);
    T_CHECK(csize(ovl_hgroups_outer_col(h)) == gI && crank(ovl_hgroups_outer_col(h)) == i / bi, "outer_col G=%d", G);
    T_CHECK(csize(ovl_hgroups_inner_row(h)) == bj && crank(ovl_hgroups_inner_row(h)) == j % bj, "inner_row G=%d", G);
    T_CHECK(csize(ovl_hgroups_inner_col(h)) == bi && crank(ovl_hgroups_inner_col(h)) == i % bi, "inner_col G=%d", G);
    /* members of outer_row share i and lj */
    int mine[2] = {i, j % bj}, all[2 * 8];
    MPI_Allgather(mine, 2, MPI_INT, all, 2, MPI_INT, ovl_hgroups_outer_row(h));
    for (int r = 0; r < gJ; r++) T_CHECK(all[2 * r] == i && all[2 * r + 1] == j % bj, "outer_row members");
    ovl_hgroups_destroy(&h);
  }
  ovl_hgroups h = NULL;
  T_ERR(ovl_hgroups_create(g, p + 1, 1, &h), OVL_ERR_ARG);
  T_ERR(ovl_hgroups_create(g, 0, 1, &h), OVL_ERR_ARG);
  int gI, gJ;
  T_ERR(ovl_hgroups_auto_dims(2, 2, 3, &gI, &gJ), OVL_ERR_ARG);
  ovl_grid2d_destroy(&g);
  (void)rank;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int P, rank;
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  test_2d(P, rank);
  test_3d(P, rank);
  test_hgroups(P, rank);
  int rc = t_finish("test_grid");
  MPI_Finalize();
  return rc;
}
