/* The memory queries against the measured peak: for every multiplication
 * algorithm, SymmSquareCube algorithm and purification, the peak resident set
 * growth of a rank during create + run must be within 10% of ovl_mm_memory,
 * ovl_ssc_memory (+ D, D^2, D^3) and ovl_purify_memory (+ nothing: it counts
 * F and D), plus a small allowance for the MPI library's own buffers; and the
 * queries refuse sizes whose byte counts would overflow. Linux only: the peak
 * is reset through /proc/self/clear_refs. */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ovl/ovl.h"
#include "ovltest.h"

static long status_kb(const char *key) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  long v = -1;
  size_t kl = strlen(key);
  while (f && fgets(line, sizeof line, f))
    if (strncmp(line, key, kl) == 0) v = atol(line + kl + 1);
  if (f) fclose(f);
  return v;
}

static int reset_peak(void) {
  FILE *f = fopen("/proc/self/clear_refs", "w");
  if (!f) return 0;
  int ok = fputs("5", f) >= 0;
  return fclose(f) == 0 && ok;
}

/* Compare a measured peak growth (KiB) on rank 0 with an estimate (bytes). */
static void compare(long before, long peak, int can, int64_t est_bytes, const char *what) {
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  /* rank 0 holds the largest blocks: compare there (not under
   * AddressSanitizer, whose quarantine and redzones change the footprint) */
#ifdef __SANITIZE_ADDRESS__
  can = 0;
#endif
  if (rank != 0 || !can || before <= 0 || peak <= 0) return;
  double est = (double)est_bytes / 1024.0, got = (double)(peak - before);
  T_CHECK(est > 0 && got <= 1.10 * est + 2048 && got >= 0.90 * est - 2048,
          "%s: measured peak growth %.0f KiB, estimate %.0f KiB (ratio %.3f)", what, got, est, got / est);
  if (getenv("OVL_TEST_VERBOSE"))
    printf("%s: measured %.0f KiB, estimate %.0f KiB, ratio %.3f\n", what, got, est, got / est);
}

static void measure(ovl_plan plan, int64_t nn, int is3, int s, int c, const char *what) {
  int rank, P;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  ovl_grid2d g = NULL;
  ovl_grid3d g3 = NULL;
  int p = 1, q = 1;
  if (is3) {
    T_OK(ovl_grid3d_create(MPI_COMM_WORLD, s, c, OVL_GRID_ALLOW_IDLE, &g3));
    g = ovl_grid3d_plane(g3);
    p = q = s;
  } else {
    T_OK(ovl_grid2d_create(MPI_COMM_WORLD, s, s, OVL_GRID_ALLOW_IDLE, &g));
    ovl_grid2d_dims(g, &p, &q);
  }
  /* a warm-up run so the MPI library's buffers for these messages exist */
  ovl_dmat A, B, C;
  for (int pass = 0; pass < 2; pass++) {
    MPI_Barrier(MPI_COMM_WORLD);
    long before = status_kb("VmRSS:");
    int can = reset_peak();
    ovl_dmat_create(g, nn, nn, &A);
    ovl_dmat_create(g, nn, nn, &B);
    ovl_dmat_create(g, nn, nn, &C);
    ovl_dmat_fill(A, OVL_FILL_RANDOM, 1);
    ovl_dmat_fill(B, OVL_FILL_RANDOM, 2);
    T_OK(ovl_gemm('N', 'N', 1.0, A, B, 0.0, C, &plan, g3, NULL));
    long peak = status_kb("VmHWM:");
    ovl_dmat_destroy(&A);
    ovl_dmat_destroy(&B);
    ovl_dmat_destroy(&C);
    if (pass == 1) compare(before, peak, can, ovl_mm_memory(&plan, 'N', 'N', nn, nn, nn, p, q, c), what);
  }
  if (g3) ovl_grid3d_destroy(&g3);
  else ovl_grid2d_destroy(&g);
}

/* SymmSquareCube (purify = 0) or a few purification iterations (purify = 1)
 * on an s x s x c grid. */
static void measure_ssc(ovl_algo alg, int64_t nn, int s, int c, int purify, const char *what) {
  ovl_grid3d g = NULL;
  T_OK(ovl_grid3d_create(MPI_COMM_WORLD, s, c, OVL_GRID_ALLOW_IDLE, &g));
  ovl_grid2d pl = ovl_grid3d_plane(g);
  ovl_purify_opts po = ovl_purify_opts_default();
  po.plan.algo = alg, po.plan.ndup = 2, po.nocc = nn / 2, po.max_iter = 2;
  for (int pass = 0; pass < 2; pass++) {
    MPI_Barrier(MPI_COMM_WORLD);
    long before = status_kb("VmRSS:");
    int can = reset_peak();
    if (purify) {
      ovl_dmat F = NULL, D = NULL;
      ovl_purify_result res;
      ovl_dmat_create(pl, nn, nn, &F);
      ovl_dmat_create(pl, nn, nn, &D);
      ovl_dmat_fill(F, OVL_FILL_SYMMETRIC, 3);
      ovl_log_set_level(OVL_LOG_QUIET);
      ovl_err rc = ovl_purify(g, F, D, &po, &res); /* two iterations: the cap is the expected end */
      ovl_log_set_level(OVL_LOG_INFO);
      T_CHECK(rc == OVL_OK || rc == OVL_ERR_NUMERIC, "%s: ovl_purify returned %s", what, ovl_err_name(rc));
      ovl_dmat_destroy(&F);
      ovl_dmat_destroy(&D);
    } else {
      ovl_dmat D = NULL, D2 = NULL, D3 = NULL;
      ovl_ssc ssc = NULL;
      ovl_dmat_create(pl, nn, nn, &D);
      ovl_dmat_create(pl, nn, nn, &D2);
      ovl_dmat_create(pl, nn, nn, &D3);
      ovl_dmat_fill(D, OVL_FILL_SYMMETRIC, 3);
      ovl_plan sp = ovl_plan_default(alg, nn, 0);
      sp.ndup = 2;
      T_OK(ovl_ssc_create(g, &sp, &ssc));
      T_OK(ovl_ssc_run(ssc, D, D2, D3, NULL));
      ovl_ssc_destroy(&ssc);
      ovl_dmat_destroy(&D);
      ovl_dmat_destroy(&D2);
      ovl_dmat_destroy(&D3);
    }
    long peak = status_kb("VmHWM:");
    int64_t b = ovl_block_len(nn, s, 0), blk = ((b * b * 8 + 63) / 64) * 64;
    int64_t est = purify ? ovl_purify_memory(nn, s, c, &po) : ovl_ssc_memory(nn, s, c, alg) + 3 * blk;
    if (pass == 1) compare(before, peak, can, est, what);
  }
  ovl_grid3d_destroy(&g);
}

/* The queries refuse what they cannot count, and never overflow. */
static void queries(void) {
  ovl_plan pl = ovl_plan_gemm(OVL_ALGO_SUMMA, 256);
  ovl_purify_opts po = ovl_purify_opts_default();
  T_CHECK(ovl_mm_memory(&pl, 'N', 'N', (int64_t)1 << 30, (int64_t)1 << 30, (int64_t)1 << 30, 1, 1, 1) == -1,
          "2^30 x 2^30 operands on one rank (2^63 bytes) are refused");
  T_CHECK(ovl_mm_memory(&pl, 'N', 'N', INT64_MAX, INT64_MAX, INT64_MAX, 2, 2, 1) == -1, "INT64_MAX sizes are refused");
  T_CHECK(ovl_mm_memory(&pl, 'N', 'N', -1, 4, 4, 1, 1, 1) == -1, "negative sizes are refused");
  T_CHECK(ovl_mm_memory(&pl, 'N', 'N', 1 << 20, 1 << 20, 1 << 20, 1024, 1024, 1) > 0,
          "2^20 on a 1024 x 1024 grid is countable");
  T_CHECK(ovl_ssc_memory((int64_t)1 << 40, 1, 1, OVL_ALGO_SSC4) == -1, "SymmSquareCube n = 2^40 is refused");
  T_CHECK(ovl_ssc_memory(1000, 2, 1, OVL_ALGO_SSC5) == -1, "Alg. 5 needs c = s");
  T_CHECK(ovl_ssc_memory(1000, 3, 2, OVL_ALGO_SSC6) == -1, "Alg. 6 needs c | s");
  T_CHECK(ovl_ssc_memory(1000, 2, 2, OVL_ALGO_N) == -1, "unknown algorithm");
  /* 1000 x 1000 on 2 x 2 x 2: 500 x 500 blocks, 6 for Alg. 4; Alg. 6 with c = 1 holds 3 and takes 4 per run */
  int64_t blk = 500 * 500 * 8;
  T_CHECK(ovl_ssc_memory(1000, 2, 2, OVL_ALGO_SSC4) == 6 * blk, "Alg. 4 workspace");
  T_CHECK(ovl_ssc_memory(1000, 2, 1, OVL_ALGO_SSC6) == 3 * blk + 4 * (blk + 64), "Alg. 6 workspace");
  T_CHECK(ovl_ssc_memory(1000, 2, 2, OVL_ALGO_SSC6) == 3 * blk + 2 * (blk + 64), "Alg. 6, one step per layer");
  po.plan.algo = OVL_ALGO_SSC4;
  T_CHECK(ovl_purify_memory(1000, 2, 2, &po) == 10 * blk, "purify Alg. 4: F, D, D^2, D^3 + 6");
  po.checkpoint_every = 5;
  T_CHECK(ovl_purify_memory(1000, 2, 2, &po) == 11 * blk, "purify Alg. 4 with checkpoints: + a write buffer");
  po.restart = 1;
  T_CHECK(ovl_purify_memory(1000, 2, 2, &po) == 12 * blk, "purify Alg. 4 restarting: + the read");
  T_CHECK(ovl_purify_memory(1000, 2, 2, NULL) == -1, "no options");
}

int main(int argc, char **argv) {
  /* large blocks always from mmap and back to the system on free, so the
   * resident set follows what ovl holds (glibc otherwise keeps freed blocks) */
  mallopt(M_MMAP_THRESHOLD, 256 * 1024);
  mallopt(M_TRIM_THRESHOLD, 0);
  MPI_Init(&argc, &argv);
  int P;
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  int s = P >= 4 ? 2 : 1;
#ifdef __SANITIZE_ADDRESS__
  /* AddressSanitizer: no comparison (compare()), so the same calls on a fourth of the order */
  int64_t nn = 400;
#else
  int64_t nn = 1600;
#endif
  ovl_plan pl = ovl_plan_gemm(OVL_ALGO_SUMMA, 64);
  measure(pl, nn, 0, s, 1, "summa");
  pl.lookahead = 1;
  measure(pl, nn, 0, s, 1, "summa+lookahead");
  pl = ovl_plan_gemm(OVL_ALGO_HSUMMA, 64);
  pl.outer = 128;
  pl.groups_i = s, pl.groups_j = 1;
  measure(pl, nn, 0, s, 1, "hsumma");
  pl.lookahead = 1;
  measure(pl, nn, 0, s, 1, "hsumma+lookahead");
  measure(ovl_plan_gemm(OVL_ALGO_CANNON, 64), nn, 0, s, 1, "cannon");
  measure(ovl_plan_gemm(OVL_ALGO_3D, 64), nn, 1, P >= 8 ? 2 : 1, P >= 8 ? 2 : 1, "3d");
  measure(ovl_plan_gemm(OVL_ALGO_25D, 64), nn, 1, s, 1, "2.5d");
  int s3 = P >= 8 ? 2 : 1;
  measure_ssc(OVL_ALGO_SSC4, nn, s3, s3, 0, "ssc alg4");
  measure_ssc(OVL_ALGO_SSC5, nn, s3, s3, 0, "ssc alg5");
  measure_ssc(OVL_ALGO_SSC6, nn, s, P >= 8 ? 2 : 1, 0, "ssc alg6");
  measure_ssc(OVL_ALGO_SSC6, nn, s, 1, 0, "ssc alg6 c=1");
  measure_ssc(OVL_ALGO_SSC5, nn, s3, s3, 1, "purify alg5");
  measure_ssc(OVL_ALGO_SSC6, nn, s, 1, 1, "purify alg6 c=1");
  queries();
  int rc = t_finish("test_memory");
  MPI_Finalize();
  return rc;
}
