/* The API refuses misuse (docs/lab/reliability.md, "API misuse"): NULL output
 * pointers, NULL and destroyed handles and MPI_COMM_NULL give OVL_ERR_ARG
 * with a message that names the function and the argument; collective
 * constructors called with arguments that differ between ranks give the
 * same OVL_ERR_ARG on every rank; grid products that do not fit in an int
 * are OVL_ERR_ARG, not a wrapped count. */
#include <string.h>

#include "ovl/ovl.h"
#include "ovltest.h"

static int g_rank, g_size;
static MPI_Comm g_world; /* MPI_COMM_WORLD, set in main */

/* call returns OVL_ERR_ARG and its message names `what`. */
#define T_ARG(call, what)                                                                                              \
  do {                                                                                                                 \
    T_ERR(call, OVL_ERR_ARG);                                                                                          \
    T_CHECK(strstr(ovl_errmsg(), what) != NULL, "%s: expected '%s' in the message: %s", #call, what, ovl_errmsg());    \
  } while (0)

/* ... and the same message on every rank (a collective verdict). */
#define T_ARG_EVERYWHERE(call, what)                                                                                   \
  do {                                                                                                                 \
    T_ARG(call, what);                                                                                                 \
    T_CHECK(t_same_message(g_world, ovl_errmsg()), "%s: the message differs between ranks (here: %s)", #call,          \
            ovl_errmsg());                                                                                             \
  } while (0)

/* NULL output pointers: refused before anything is written through them. */
static void null_outputs(void) {
  ovl_grid2d g = NULL;
  T_OK(ovl_grid2d_create(g_world, 0, 0, 0, &g));
  T_ARG(ovl_grid2d_create(g_world, 0, 0, 0, NULL), "ovl_grid2d_create: out is NULL");
  T_ARG(ovl_grid3d_create(g_world, 1, 1, OVL_GRID_ALLOW_IDLE, NULL), "ovl_grid3d_create: out is NULL");
  T_ARG(ovl_dmat_create(g, 4, 4, NULL), "ovl_dmat_create: out is NULL");
  T_ARG(ovl_dmat_wrap(g, 4, 4, NULL, NULL), "ovl_dmat_wrap: out is NULL");
  T_ARG(ovl_lanes_create(g_world, 1, NULL), "ovl_lanes_create: out is NULL");
  T_ARG(ovl_grid2d_lanes(g, OVL_DIR_ROW, 1, NULL), "ovl_grid2d_lanes: out is NULL");
  T_ARG(ovl_hgroups_create(g, 1, 1, NULL), "ovl_hgroups_create: out is NULL");
  T_ARG(ovl_grid2d_hgroups(g, 1, 1, NULL), "ovl_grid2d_hgroups: out is NULL");
  T_ARG(ovl_dmat_read(g, "x.raw", 0, NULL), "ovl_dmat_read: out is NULL");
  T_ARG(ovl_algo_parse("summa", NULL), "ovl_algo_parse: out is NULL");
  T_ARG(ovl_prec_parse("double", NULL), "ovl_prec_parse: out is NULL");
  T_ARG(ovl_req_wait(NULL), "ovl_req_wait: req is NULL");
  T_ARG(ovl_ibcast(NULL, 0, 0, g_world, NULL, NULL), "ovl_ibcast: req is NULL");
  ovl_dmat A = NULL;
  T_OK(ovl_dmat_create(g, 5, 3, &A));
  T_ARG(ovl_dmat_norm_fro(A, NULL), "ovl_dmat_norm_fro: out is NULL");
  T_ARG(ovl_dmat_trace(A, NULL), "ovl_dmat_trace: out is NULL");
  /* y is NULL on rank 0 only: the verdict is agreed */
  double x[3] = {1, 2, 3}, y[5];
  T_ARG_EVERYWHERE(ovl_dmat_matvec(A, x, g_rank == 0 ? NULL : y), "ovl_dmat_matvec: y is NULL");
  ovl_grid3d g3 = NULL;
  T_OK(ovl_grid3d_create(g_world, 1, 1, OVL_GRID_ALLOW_IDLE, &g3));
  T_ARG(ovl_sq_create(g3, 4, 1, NULL, NULL), "ovl_sq_create: out is NULL");
  ovl_plan plan = ovl_plan_default(OVL_ALGO_SSC5, 4, 1);
  T_ARG(ovl_ssc_create(g3, &plan, NULL), "ovl_ssc_create: out is NULL");
  ovl_grid3d_destroy(&g3);
  ovl_dmat_destroy(&A);
  ovl_grid2d_destroy(&g);
}

/* A handle that destroy has nulled, or one never created. */
static void destroyed_handles(void) {
  ovl_grid2d g = NULL;
  ovl_dmat A = NULL, B = NULL, X = NULL;
  T_OK(ovl_grid2d_create(g_world, 0, 0, 0, &g));
  T_OK(ovl_dmat_create(g, 6, 6, &A));
  T_OK(ovl_dmat_create(g, 6, 6, &B));
  T_OK(ovl_dmat_destroy(&A));
  T_CHECK(A == NULL, "ovl_dmat_destroy left the handle set");
  double v = 0, buf[36], xv[6] = {0};
  memset(buf, 0, sizeof buf);
  const char *h = "never created, or already destroyed";
  T_ARG(ovl_dmat_fill(A, OVL_FILL_RANDOM, 1), h);
  T_ARG(ovl_dmat_fill(A, OVL_FILL_RANDOM, 1), "ovl_dmat_fill: A is NULL");
  T_ARG(ovl_dmat_copy(B, A), "ovl_dmat_copy: src is NULL");
  T_ARG(ovl_dmat_copy(A, B), "ovl_dmat_copy: dst is NULL");
  T_ARG(ovl_dmat_scatter(A, buf), "ovl_dmat_scatter: A is NULL");
  T_ARG(ovl_dmat_gather(A, buf), "ovl_dmat_gather: A is NULL");
  T_ARG(ovl_dmat_redistribute(A, B), "ovl_dmat_redistribute: src is NULL");
  T_ARG(ovl_dmat_transpose(B, A), "ovl_dmat_transpose: dst is NULL");
  T_ARG(ovl_dmat_check_finite(A), "ovl_dmat_check_finite: A is NULL");
  T_ARG(ovl_dmat_check_symmetric(A, 1e-12), "ovl_dmat_check_symmetric: A is NULL");
  T_ARG(ovl_dmat_norm_fro(A, &v), "ovl_dmat_norm_fro: A is NULL");
  T_ARG(ovl_dmat_trace(A, &v), "ovl_dmat_trace: A is NULL");
  T_ARG(ovl_dmat_matvec(A, xv, xv), "ovl_dmat_matvec: A is NULL");
  T_ARG(ovl_dmat_write_raw(A, "never.raw", 0), "ovl_dmat_write_raw: A is NULL");
  T_ARG(ovl_dmat_write_mtx(A, "never.mtx", 0), "ovl_dmat_write_mtx: A is NULL");
  const int64_t off[2] = {0, 6};
  ovl_axis ax = {1, 0, 0, off};
  T_ARG(ovl_dmat_import(A, &ax, &ax, buf, 6), "ovl_dmat_import: X is NULL");
  T_ARG(ovl_dmat_export(A, &ax, &ax, buf, 6), "ovl_dmat_export: X is NULL");
  T_CHECK(ovl_dmat_rows(A) == -1 && ovl_dmat_cols(A) == -1 && ovl_dmat_local_rows(A) == -1 && ovl_dmat_ld(A) == -1,
          "accessors of a NULL matrix: rows %lld", (long long)ovl_dmat_rows(A));
  T_CHECK(ovl_dmat_data(A) == NULL && ovl_dmat_grid(A) == NULL, "accessors of a NULL matrix return NULL");
  T_OK(ovl_dmat_destroy(&A)); /* NULL-safe, again */
  /* the kernels */
  ovl_plan plan = ovl_plan_default(OVL_ALGO_SUMMA, 6, g_size);
  T_ARG(ovl_summa(1.0, A, B, 0.0, B, &plan, NULL), "ovl_summa: A is NULL");
  T_ARG(ovl_hsumma(1.0, B, A, 0.0, B, &plan, NULL), "ovl_hsumma: B is NULL");
  T_ARG(ovl_cannon(1.0, B, B, 0.0, A, &plan, NULL), "ovl_cannon: C is NULL");
  T_ARG(ovl_gemm('N', 'N', 1.0, A, B, 0.0, B, &plan, NULL, NULL), "ovl_gemm: A is NULL");
  T_ARG(ovl_verify_gemm(1.0, B, B, 0.0, NULL, A, OVL_VERIFY_EXACT, 1e-12, &v), "ovl_verify_gemm: C is NULL");
  T_ARG(ovl_matvec(A, xv, xv, OVL_MATVEC_ALG1, 1, NULL, NULL), "ovl_matvec: A is NULL");
  /* a destroyed grid */
  ovl_dmat_destroy(&B);
  T_OK(ovl_grid2d_destroy(&g));
  T_CHECK(g == NULL, "ovl_grid2d_destroy left the handle set");
  T_ARG(ovl_dmat_create(g, 4, 4, &X), "ovl_dmat_create: the grid is NULL");
  T_CHECK(X == NULL, "ovl_dmat_create on a NULL grid set the output");
  T_ARG(ovl_dmat_wrap(g, 4, 4, buf, &X), "ovl_dmat_wrap: the grid is NULL");
  T_ARG(ovl_dmat_read_raw(g, "never.raw", 0, &X), "ovl_dmat_read_raw: the grid is NULL");
  T_ARG(ovl_dmat_read_mtx(g, "never.mtx", 0, &X), "ovl_dmat_read_mtx: the grid is NULL");
  ovl_lanes L = NULL;
  ovl_hgroups hg = NULL;
  T_ARG(ovl_grid2d_lanes(g, OVL_DIR_ROW, 1, &L), "ovl_grid2d_lanes: the grid is NULL");
  T_ARG(ovl_hgroups_create(g, 1, 1, &hg), "ovl_hgroups_create: the grid is NULL");
  T_ARG(ovl_grid2d_hgroups(g, 1, 1, &hg), "ovl_grid2d_hgroups: the grid is NULL");
  T_CHECK(ovl_grid2d_active(g) == 0 && ovl_grid2d_parent(g) == MPI_COMM_NULL && ovl_grid2d_comm(g) == MPI_COMM_NULL,
          "accessors of a NULL grid: idle, no communicators");
  int p = 7, q = 7, i = 7, j = 7;
  ovl_grid2d_dims(g, &p, &q);
  ovl_grid2d_coords(g, &i, &j);
  T_CHECK(p == 0 && q == 0 && i == -1 && j == -1, "a NULL grid: %d x %d at (%d, %d)", p, q, i, j);
  /* 3D grids, lanes, the kernels on them */
  ovl_grid3d g3 = NULL;
  T_OK(ovl_grid3d_create(g_world, 1, 1, OVL_GRID_ALLOW_IDLE, &g3));
  T_OK(ovl_grid3d_destroy(&g3));
  ovl_sq sq = NULL;
  ovl_ssc ssc = NULL;
  ovl_plan sp = ovl_plan_default(OVL_ALGO_SSC5, 4, 1);
  T_ARG(ovl_grid3d_lanes(g3, OVL_DIR_ROW, 1, &L), "ovl_grid3d_lanes: the grid is NULL");
  T_ARG(ovl_grid3d_lanes3(g3, 1, &L, NULL, NULL), "ovl_grid3d_lanes3: the grid is NULL");
  T_ARG(ovl_sq_create(g3, 4, 1, NULL, &sq), "ovl_sq_create: the 3D grid is NULL");
  T_ARG(ovl_ssc_create(g3, &sp, &ssc), "ovl_ssc_create: the 3D grid is NULL");
  T_ARG(ovl_mm3d(g3, 1.0, X, X, 0.0, X, &sp, NULL), "ovl_mm3d: the 3D grid is NULL");
  T_ARG(ovl_mm25d(g3, 1.0, X, X, 0.0, X, &sp, NULL), "ovl_mm25d: the 3D grid is NULL");
  ovl_purify_opts po = ovl_purify_opts_default();
  T_ARG(ovl_purify(g3, X, X, &po, NULL), "ovl_purify: the 3D grid is NULL");
  T_CHECK(ovl_grid3d_plane(g3) == NULL && ovl_grid3d_active(g3) == 0 && ovl_grid3d_rank_of(g3, 0, 0, 0) == -1,
          "accessors of a NULL 3D grid");
  double d = 0;
  ovl_req reqs[OVL_LANES_MAX];
  T_ARG(ovl_lanes_bcast(L, &d, 1, 0, NULL), "ovl_lanes_bcast: the lane set is NULL");
  T_ARG(ovl_lanes_iallreduce(L, &d, &d, 1, NULL, reqs), "ovl_lanes_iallreduce: the lane set is NULL");
  T_CHECK(ovl_lanes_count(L) == 0 && ovl_lanes_rank(L) == -1, "accessors of a NULL lane set");
  T_ARG(ovl_hgroups_lanes(hg, OVL_DIR_INNER_ROW, 1, &L), "ovl_hgroups_lanes: h is NULL");
}

/* MPI_COMM_NULL: refused by ovl, never handed to MPI (whose handler aborts). */
static void comm_null(void) {
  MPI_Comm nc = MPI_COMM_NULL;
  ovl_grid2d g = NULL;
  ovl_grid3d g3 = NULL;
  const char *w = "the communicator is MPI_COMM_NULL";
  T_ARG(ovl_grid2d_create(nc, 0, 0, 0, &g), w);
  T_ARG(ovl_grid3d_create(nc, 0, 0, 0, &g3), w);
  T_CHECK(g == NULL && g3 == NULL, "a refused grid left its output set");
  ovl_plan plan = ovl_plan_default(OVL_ALGO_SUMMA, 8, 1);
  T_ARG(ovl_plan_resolve(nc, OVL_FAMILY_GEMM, &plan, NULL, NULL, 0), "ovl_plan_resolve: the communicator");
  T_ARG(ovl_plan_grids(nc, &plan, 0, &g, &g3), "ovl_plan_grids: the communicator");
  ovl_matrix_meta meta;
  T_ARG(ovl_raw_read_meta(nc, "never.raw", &meta), "ovl_raw_read_meta: the communicator");
  T_ARG(ovl_mtx_read_meta(nc, "never.mtx", &meta), "ovl_mtx_read_meta: the communicator");
  ovl_fock_meta fm;
  T_ARG(ovl_fock_meta_read(nc, "never.raw", &fm), "ovl_fock_meta_read: the communicator");
  double t[2] = {1, 2};
  ovl_stats st;
  T_ARG(ovl_stats_max_over_ranks(nc, t, 2, &st), w);
  T_ARG(ovl_check_memory(nc, 8, 0), w);
  int k = 0, nodes = 0, cons = 0;
  T_ARG(ovl_bench_node_info(nc, &k, &nodes, &cons), w);
  T_ARG(ovl_node_ranks(nc, &k, &nodes, &cons), w);
  T_ARG(ovl_node_cores(nc, &k), w);
  T_ARG(ovl_trace_start(nc, 16), w);
  T_ARG(ovl_volume_start(nc), w);
  T_ARG(ovl_options_runtime(nc, NULL, OVL_FAMILY_GEMM, &plan, NULL), w);
  double F = 1, D = 0;
  T_ARG(ovl_purify_dense(&nc, 1, &F, 0, "sp2", NULL, 0, NULL, 0, 0, &D, NULL, NULL), "ovl_purify_dense: the commun");
  T_ARG(ovl_gemm_dense(&nc, 1, 1, 1, &F, &F, &D, NULL, NULL, NULL), "ovl_gemm_dense: the communicator");
  ovl_bench_coll_params bp = ovl_bench_coll_default();
  ovl_bench_coll_result br;
  bp.comm = nc;
  T_ARG(ovl_bench_coll(&bp, &br), w);
}

/* Arguments that differ between ranks: the same OVL_ERR_ARG everywhere. */
static void differing_arguments(void) {
  if (g_size < 2) return;
  ovl_grid2d g = NULL;
  ovl_dmat A = NULL;
  T_OK(ovl_grid2d_create(g_world, 0, 0, 0, &g));
  T_ARG_EVERYWHERE(ovl_dmat_create(g, g_rank == 1 ? 9 : 8, 8, &A), "m = 9 on rank 1 but 8 on rank 0");
  T_CHECK(A == NULL, "a refused matrix left its output set");
  T_ARG_EVERYWHERE(ovl_dmat_create(g, 8, g_rank == g_size - 1 ? 7 : 8, &A), "every rank must pass the same");
  T_CHECK(A == NULL, "a refused matrix left its output set");
  /* a negative size on one rank and a different one elsewhere: the difference is named */
  T_ARG_EVERYWHERE(ovl_dmat_create(g, g_rank == 1 ? -1 : 8, 8, &A), "on rank 1 but 8 on rank 0");
  ovl_grid2d g2 = NULL;
  T_ARG_EVERYWHERE(ovl_grid2d_create(g_world, g_rank == 1 ? 1 : 0, 0, OVL_GRID_ALLOW_IDLE, &g2), "the grid's p");
  T_ARG_EVERYWHERE(ovl_grid2d_create(g_world, 0, 0, g_rank == 1 ? OVL_GRID_ALLOW_IDLE : 0, &g2), "the grid's flags");
  T_CHECK(g2 == NULL, "a refused grid left its output set");
  ovl_grid3d g3 = NULL;
  T_ARG_EVERYWHERE(ovl_grid3d_create(g_world, 1, g_rank == 1 ? 2 : 1, OVL_GRID_ALLOW_IDLE, &g3), "the grid's c");
  T_CHECK(g3 == NULL, "a refused 3D grid left its output set");
  ovl_lanes L = NULL;
  T_ARG_EVERYWHERE(ovl_lanes_create(g_world, g_rank == 1 ? 2 : 1, &L), "N_DUP = 2 on rank 1 but 1 on rank 0");
  T_CHECK(L == NULL, "a refused lane set left its output set");
  T_OK(ovl_grid3d_create(g_world, 1, 1, OVL_GRID_ALLOW_IDLE, &g3));
  ovl_sq sq = NULL;
  T_ARG_EVERYWHERE(ovl_sq_create(g3, g_rank == 1 ? 5 : 4, 1, NULL, &sq), "n = 5 on rank 1 but 4 on rank 0");
  ovl_ssc ssc = NULL;
  ovl_plan sp = ovl_plan_default(OVL_ALGO_SSC5, g_rank == 1 ? 5 : 4, 1);
  T_ARG_EVERYWHERE(ovl_ssc_create(g3, &sp, &ssc), "n = 5 on rank 1 but 4 on rank 0");
  ovl_grid3d_destroy(&g3);
  /* the same arguments still work */
  T_OK(ovl_dmat_create(g, 8, 8, &A));
  ovl_dmat_destroy(&A);
  ovl_grid2d_destroy(&g);
}

/* Grid products beyond an int are refused as arguments, not wrapped. */
static void overflowing_grids(void) {
  ovl_grid3d g3 = NULL;
  const char *w = "the most processes an MPI communicator holds";
  /* 4096^3 = 2^36 and 2048^2 x 1024 = 2^32 wrapped to 0 ranks */
  T_ARG_EVERYWHERE(ovl_grid3d_create(g_world, 4096, 4096, OVL_GRID_ALLOW_IDLE, &g3), w);
  T_ARG_EVERYWHERE(ovl_grid3d_create(g_world, 2048, 1024, OVL_GRID_ALLOW_IDLE, &g3), w);
  T_CHECK(g3 == NULL, "a refused 3D grid left its output set");
  ovl_grid2d g = NULL;
  T_ARG_EVERYWHERE(ovl_grid2d_create(g_world, 65536, 65536, OVL_GRID_ALLOW_IDLE, &g), w);
  ovl_plan plan = ovl_plan_default(OVL_ALGO_SUMMA, 64, g_size);
  plan.p = plan.q = 65536;
  T_ARG(ovl_plan_check(&plan, OVL_FAMILY_GEMM, 1), w);
  plan = ovl_plan_default(OVL_ALGO_25D, 64, g_size);
  plan.s = 2048, plan.c = 1024;
  T_ARG(ovl_plan_check(&plan, OVL_FAMILY_GEMM, 1), w);
  /* a grid that fits an int but not the ranks is still OVL_ERR_GRID */
  plan = ovl_plan_default(OVL_ALGO_SUMMA, 64, g_size);
  plan.p = plan.q = 40000;
  plan.P = g_size;
  T_ERR(ovl_plan_check(&plan, OVL_FAMILY_GEMM, 1), OVL_ERR_GRID);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  g_world = MPI_COMM_WORLD;
  MPI_Comm_rank(g_world, &g_rank);
  MPI_Comm_size(g_world, &g_size);
  null_outputs();
  destroyed_handles();
  comm_null();
  differing_arguments();
  overflowing_grids();
  int rc = t_finish("test_misuse");
  MPI_Finalize();
  return rc;
}
