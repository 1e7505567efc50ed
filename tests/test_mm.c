/* The multiplication family against a serial dgemm: SUMMA (lookahead off/on),
 * HSUMMA (every G that tiles the grid, G = 1 and G = P matching SUMMA's
 * communication), Cannon (square grids), 3D (p^3 ranks) and 2.5D (s x s x c
 * that fit), N_DUP 1 and 4, both back ends, rectangular and uneven shapes,
 * both transposes. */
#include <stdio.h>
#include <string.h>

#include "ovl/ovl.h"
#include "ovltest.h"

static const int64_t k_shapes[][3] = {{13, 13, 13}, {17, 5, 11}, {5, 23, 9}, {31, 37, 41}, {3, 3, 2}, {64, 64, 64}};
#define NSHAPES ((int)(sizeof k_shapes / sizeof k_shapes[0]))

/* Run one case on grid g2 (and g3 for 3D/2.5D); all ranks of the world call
 * it; verification runs on the plane-0 grid. */
static void run(ovl_grid2d g2, ovl_grid3d g3, ovl_plan *plan, char ta, char tb, int64_t m, int64_t n, int64_t k,
                const char *what) {
  int on = ovl_grid2d_active(g2) && (!g3 || ovl_grid3d_active(g3));
  int plane0 = 1;
  if (g3 && on) {
    int i, j, kk;
    ovl_grid3d_coords(g3, &i, &j, &kk);
    plane0 = kk == 0;
  }
  ovl_dmat A = NULL, B = NULL, C = NULL, C0 = NULL, Ar = NULL, Br = NULL;
  int64_t am = ta == 'N' ? m : k, an = ta == 'N' ? k : m, bm = tb == 'N' ? k : n, bn = tb == 'N' ? n : k;
  T_OK(ovl_dmat_create(g2, am, an, &A));
  T_OK(ovl_dmat_create(g2, bm, bn, &B));
  T_OK(ovl_dmat_create(g2, m, n, &C));
  T_OK(ovl_dmat_create(g2, m, n, &C0));
  ovl_dmat_fill(A, OVL_FILL_RANDOM, 11);
  ovl_dmat_fill(B, OVL_FILL_RANDOM, 12);
  ovl_dmat_fill(C0, OVL_FILL_RANDOM, 13);
  ovl_dmat_copy(C, C0);
  ovl_kstats st;
  T_OK(ovl_gemm(ta, tb, -0.75, A, B, 0.5, C, plan, g3, &st));
  /* verification is collective over the grid's parent: every rank of a 2D
   * grid's parent (idle ones too), the active plane-0 ranks of a 3D grid */
  if (g3 ? on && plane0 : 1) {
    /* the reference uses the untransposed operands op(A), op(B) */
    ovl_dmat_create(g2, m, k, &Ar);
    ovl_dmat_create(g2, k, n, &Br);
    if (ta == 'N') ovl_dmat_copy(Ar, A);
    else ovl_dmat_transpose(A, Ar);
    if (tb == 'N') ovl_dmat_copy(Br, B);
    else ovl_dmat_transpose(B, Br);
    double e = -1;
    ovl_err rc = ovl_verify_gemm(-0.75, Ar, Br, 0.5, C0, C, OVL_VERIFY_EXACT, 1e-13, &e);
    char ps[160];
    ovl_plan_str(plan, ps, sizeof ps);
    T_CHECK(rc == OVL_OK, "%s [%s] op=%c%c m=%lld n=%lld k=%lld: relerr %.3e", what, ps, ta, tb, (long long)m,
            (long long)n, (long long)k, e);
    ovl_dmat_destroy(&Ar);
    ovl_dmat_destroy(&Br);
  }
  ovl_dmat_destroy(&A);
  ovl_dmat_destroy(&B);
  ovl_dmat_destroy(&C);
  ovl_dmat_destroy(&C0);
}

static void sweep(ovl_grid2d g2, ovl_grid3d g3, ovl_plan base, const char *what) {
  int ndups[] = {1, 4};
  for (int be = 0; be < 2; be++)
    for (int d = 0; d < 2; d++)
      for (int sh = 0; sh < NSHAPES; sh++) {
        ovl_plan p = base;
        p.ndup = ndups[d];
        p.coll.backend = be ? OVL_BACKEND_OWN : OVL_BACKEND_MPI;
        char ta = sh % 2 ? 'T' : 'N', tb = sh % 3 == 1 ? 'T' : 'N';
        run(g2, g3, &p, ta, tb, k_shapes[sh][0], k_shapes[sh][1], k_shapes[sh][2], what);
      }
}

/* HSUMMA with G = 1 and G = P moves exactly what SUMMA moves when M = b. */
static void hsumma_pattern(ovl_grid2d g, int p, int q) {
  ovl_dmat A = NULL, B = NULL, C = NULL;
  ovl_dmat_create(g, 40, 33, &A);
  ovl_dmat_create(g, 33, 29, &B);
  ovl_dmat_create(g, 40, 29, &C);
  ovl_dmat_fill(A, OVL_FILL_RANDOM, 1);
  ovl_dmat_fill(B, OVL_FILL_RANDOM, 2);
  ovl_plan ps = ovl_plan_gemm(OVL_ALGO_SUMMA, 4), ph = ovl_plan_gemm(OVL_ALGO_HSUMMA, 4);
  ovl_kstats ss, sh;
  double *ref = NULL;
  T_OK(ovl_summa(1.0, A, B, 0.0, C, &ps, &ss));
  int64_t nloc = ovl_dmat_local_rows(C) * ovl_dmat_local_cols(C);
  ovl_malloc(sizeof(double) * (size_t)(nloc + 1), &ref);
  memcpy(ref, ovl_dmat_data(C), sizeof(double) * (size_t)nloc);
  int shapes[2][2] = {{1, 1}, {p, q}};
  for (int v = 0; v < 2; v++) {
    ph.groups_i = shapes[v][0];
    ph.groups_j = shapes[v][1];
    T_OK(ovl_hsumma(1.0, A, B, 0.0, C, &ph, &sh));
    int same = memcmp(ref, ovl_dmat_data(C), sizeof(double) * (size_t)nloc) == 0;
    T_CHECK(same, "HSUMMA G=%dx%d differs from SUMMA", shapes[v][0], shapes[v][1]);
    T_CHECK(sh.ncoll == ss.ncoll && sh.bytes == ss.bytes,
            "HSUMMA G=%dx%d pattern: %lld collectives / %lld bytes, SUMMA %lld / %lld", shapes[v][0], shapes[v][1],
            (long long)sh.ncoll, (long long)sh.bytes, (long long)ss.ncoll, (long long)ss.bytes);
  }
  ovl_free(&ref);
  ovl_dmat_destroy(&A);
  ovl_dmat_destroy(&B);
  ovl_dmat_destroy(&C);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int P;
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  ovl_grid2d g = NULL;
  T_OK(ovl_grid2d_create(MPI_COMM_WORLD, 0, 0, 0, &g));
  int p, q;
  ovl_grid2d_dims(g, &p, &q);
  /* SUMMA, lookahead off and on */
  for (int la = 0; la < 2; la++) {
    ovl_plan pl = ovl_plan_gemm(OVL_ALGO_SUMMA, 5);
    pl.lookahead = la;
    sweep(g, NULL, pl, "summa");
  }
  /* HSUMMA: every G that tiles the grid, M = 2b */
  for (int G = 1; G <= P; G++) {
    int gi, gj;
    if (ovl_hgroups_auto_dims(p, q, G, &gi, &gj) != OVL_OK) continue;
    ovl_plan pl = ovl_plan_gemm(OVL_ALGO_HSUMMA, 3);
    pl.outer = 7, pl.groups_i = gi, pl.groups_j = gj;
    sweep(g, NULL, pl, "hsumma");
  }
  hsumma_pattern(g, p, q);
  /* Cannon: square grids (idle ranks when P is not a square) */
  int s = ovl_isqrt(P);
  ovl_grid2d gs = NULL;
  T_OK(ovl_grid2d_create(MPI_COMM_WORLD, s, s, OVL_GRID_ALLOW_IDLE, &gs));
  sweep(gs, NULL, ovl_plan_gemm(OVL_ALGO_CANNON, 1), "cannon");
  if (P >= 2) {
    ovl_dmat A = NULL;
    ovl_plan pc = ovl_plan_gemm(OVL_ALGO_CANNON, 1);
    ovl_grid2d gr = NULL;
    T_OK(ovl_grid2d_create(MPI_COMM_WORLD, 1, 2, OVL_GRID_ALLOW_IDLE, &gr));
    ovl_dmat_create(gr, 4, 4, &A);
    T_ERR(ovl_cannon(1.0, A, A, 0.0, A, &pc, NULL), OVL_ERR_GRID);
    ovl_dmat_destroy(&A);
    ovl_grid2d_destroy(&gr);
  }
  ovl_grid2d_destroy(&gs);
  /* 3D: the largest cube that fits; 2.5D: s x s x c with c | s */
  ovl_grid3d g3 = NULL;
  T_OK(ovl_grid3d_create(MPI_COMM_WORLD, 0, 0, OVL_GRID_ALLOW_IDLE, &g3));
  sweep(ovl_grid3d_plane(g3), g3, ovl_plan_gemm(OVL_ALGO_3D, 1), "3d");
  sweep(ovl_grid3d_plane(g3), g3, ovl_plan_gemm(OVL_ALGO_25D, 1), "2.5d(c=s)");
  ovl_grid3d_destroy(&g3);
  if (P >= 4) { /* 2 x 2 x 1 */
    T_OK(ovl_grid3d_create(MPI_COMM_WORLD, 2, 1, OVL_GRID_ALLOW_IDLE, &g3));
    sweep(ovl_grid3d_plane(g3), g3, ovl_plan_gemm(OVL_ALGO_25D, 1), "2.5d(2x2x1)");
    ovl_grid3d_destroy(&g3);
  }
  if (P >= 8) { /* 2 x 2 x 2 (c = s) and a 3D refusal: 2.5D grid for 3D */
    T_OK(ovl_grid3d_create(MPI_COMM_WORLD, 2, 1, OVL_GRID_ALLOW_IDLE, &g3));
    ovl_dmat A = NULL;
    ovl_plan p3 = ovl_plan_gemm(OVL_ALGO_3D, 1);
    ovl_dmat_create(ovl_grid3d_plane(g3), 4, 4, &A);
    T_ERR(ovl_mm3d(g3, 1.0, A, A, 0.0, A, &p3, NULL), OVL_ERR_GRID);
    ovl_dmat_destroy(&A);
    ovl_grid3d_destroy(&g3);
  }
  ovl_grid2d_destroy(&g);
  T_CHECK(ovl_req_live() == 0, "leaked %lld requests", (long long)ovl_req_live());
  int rc = t_finish("test_mm");
  MPI_Finalize();
  return rc;
}
