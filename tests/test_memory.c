/* The memory query against the measured peak: for every algorithm, the peak
 * resident set growth of a rank during create + multiply must be within 10%
 * of ovl_mm_memory (plus a small allowance for the MPI library's own
 * buffers). Linux only: the peak is reset through /proc/self/clear_refs. */
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

static void measure(ovl_mm_plan plan, int64_t nn, int is3, int s, int c, const char *what) {
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
    if (pass == 0) continue;
    /* rank 0 holds the largest blocks: compare there (not under
     * AddressSanitizer, whose quarantine and redzones change the footprint) */
#ifdef __SANITIZE_ADDRESS__
    can = 0;
#endif
    if (rank == 0 && can && before > 0 && peak > 0) {
      double est = (double)ovl_mm_memory(&plan, 'N', 'N', nn, nn, nn, p, q, c) / 1024.0;
      double got = (double)(peak - before);
      T_CHECK(got <= 1.10 * est + 2048 && got >= 0.90 * est - 2048,
              "%s: measured peak growth %.0f KiB, estimate %.0f KiB (ratio %.3f)", what, got, est, got / est);
      if (getenv("OVL_TEST_VERBOSE"))
        printf("%s: measured %.0f KiB, estimate %.0f KiB, ratio %.3f\n", what, got, est, got / est);
    }
  }
  if (g3) ovl_grid3d_destroy(&g3);
  else ovl_grid2d_destroy(&g);
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
  int64_t nn = 1600;
  ovl_mm_plan pl = ovl_mm_plan_default(OVL_MM_SUMMA, 64);
  measure(pl, nn, 0, s, 1, "summa");
  pl.lookahead = 1;
  measure(pl, nn, 0, s, 1, "summa+lookahead");
  pl = ovl_mm_plan_default(OVL_MM_HSUMMA, 64);
  pl.outer = 128;
  pl.groups_i = s, pl.groups_j = 1;
  measure(pl, nn, 0, s, 1, "hsumma");
  measure(ovl_mm_plan_default(OVL_MM_CANNON, 64), nn, 0, s, 1, "cannon");
  measure(ovl_mm_plan_default(OVL_MM_3D, 64), nn, 1, P >= 8 ? 2 : 1, P >= 8 ? 2 : 1, "3d");
  measure(ovl_mm_plan_default(OVL_MM_25D, 64), nn, 1, s, 1, "2.5d");
  int rc = t_finish("test_memory");
  MPI_Finalize();
  return rc;
}
