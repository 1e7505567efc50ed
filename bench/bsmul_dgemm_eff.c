/* The rate of the block-sparse product's local work against a large dgemm's:
 * the measurement behind OVL_BSMUL_BHALF (ovl/model.h), the block size at
 * which the block products run at half the rate of a large dgemm.
 *
 * For each block size b: a banded n x n matrix of b x b blocks (`band`
 * blocks each side of the diagonal, every block stored), A A by
 * ovl_bsmat_multiply on one rank at eps = 0 (so every block product is
 * computed: the product's own kernel, its inline loops and its batches of
 * dgemms, and the building of C), repeated for about a second, the median of
 * 3; its flops are ovl_bsmat_shape's (sum of 2 b^3 over the block products).
 * Then one n = 1024 dgemm (the rate gamma stands for). Prints per b the
 * GFLOP/s, e(b) = rate / the large rate and the half-rate size
 * h = b (1 / e(b) - 1) that e(b) = b / (b + h) implies; and the median h
 * over the sizes 8 to 64. One rank, one BLAS thread:
 *
 *   . scripts/env.sh && mpiexec -n 1 build/bench/bsmul_dgemm_eff [n [band]]
 */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>

#include "benchutil.h"
#include "ovl/ovl.h"

/* GFLOP/s of one large dgemm (n = 1024), the median of 3. */
static double large_rate(void) {
  const int n = 1024;
  double *a = malloc(sizeof(double) * n * n), *b = malloc(sizeof(double) * n * n), *c = malloc(sizeof(double) * n * n);
  if (!a || !b || !c) bench_die("bsmul_dgemm_eff", OVL_ERR_NOMEM, "the large dgemm's operands");
  for (int i = 0; i < n * n; i++) a[i] = 1e-3 * (i % 97), b[i] = 1e-3 * (i % 89), c[i] = 0;
  double r[3];
  for (int k = 0; k < 3; k++) {
    double t = ovl_time();
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, a, n, b, n, 0.0, c, n);
    r[k] = 2.0 * n * n * n / (ovl_time() - t) * 1e-9;
  }
  free(a), free(b), free(c);
  qsort(r, 3, sizeof r[0], bench_cmp_double);
  return r[1];
}

/* GFLOP/s of A A for blocks of size b (the last one narrower when b does not divide n). */
static double product_rate(int64_t n, int b, int band, ovl_grid2d g) {
  ovl_bsmat A = NULL, C = NULL;
  bench_band_bsmat("bsmul_dgemm_eff", g, n, b, band, &A);
  bench_die("bsmul_dgemm_eff", ovl_bsmat_create_like(A, &C), "ovl_bsmat_create_like");
  ovl_bsmul_shape sh;
  bench_die("bsmul_dgemm_eff", ovl_bsmat_shape(A, A, &sh), "ovl_bsmat_shape");
  bench_die("bsmul_dgemm_eff", ovl_bsmat_multiply(A, A, 0, 1, C, NULL),
            "ovl_bsmat_multiply"); /* warm-up: C's memory mapped */
  double r[3];
  for (int k = 0; k < 3; k++) {
    double t0 = ovl_time(), t = 0;
    int reps = 0;
    do {
      bench_die("bsmul_dgemm_eff", ovl_bsmat_multiply(A, A, 0, 1, C, NULL), "ovl_bsmat_multiply");
      reps++, t = ovl_time() - t0;
    } while (t < 1.0);
    r[k] = sh.flops * reps / t * 1e-9;
  }
  qsort(r, 3, sizeof r[0], bench_cmp_double);
  ovl_bsmat_destroy(&A), ovl_bsmat_destroy(&C);
  return r[1];
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int64_t n = argc > 1 ? atoll(argv[1]) : 2048;
  int band = argc > 2 ? atoi(argv[2]) : 3;
  if (n < 64 || n > 8192 || band < 0) {
    fprintf(stderr, "usage: bsmul_dgemm_eff [n in 64..8192 [band >= 0]]\n");
    MPI_Finalize();
    return 2;
  }
  ovl_grid2d g = NULL;
  bench_die("bsmul_dgemm_eff", ovl_grid2d_create(MPI_COMM_SELF, 1, 1, 0, &g), "ovl_grid2d_create");
  const int sizes[] = {2, 4, 8, 16, 24, 32, 48, 64};
  const int ns = (int)(sizeof sizes / sizeof sizes[0]);
  double big = large_rate(), h[16];
  int nh = 0;
  printf("# n = %lld, band %d blocks each side; large dgemm (n = 1024): %.2f GFLOP/s\n# %5s %10s %8s %8s\n",
         (long long)n, band, big, "b", "GFLOP/s", "e(b)", "h");
  for (int x = 0; x < ns; x++) {
    int b = sizes[x];
    double gf = product_rate(n, b, band, g), e = gf / big, hh = e > 0 ? b * (1 / e - 1) : 0;
    printf("  %5d %10.2f %8.3f %8.1f\n", b, gf, e, hh);
    fflush(stdout);
    if (b >= 8 && b <= 64) h[nh++] = hh;
  }
  qsort(h, (size_t)nh, sizeof h[0], bench_cmp_double);
  printf("# median h over b = 8 .. 64: %.1f\n", nh % 2 ? h[nh / 2] : 0.5 * (h[nh / 2 - 1] + h[nh / 2]));
  ovl_grid2d_destroy(&g);
  MPI_Finalize();
  return 0;
}
