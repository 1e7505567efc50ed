/* The rate of the block-sparse product's local work against a large dgemm's:
 * the measurement behind OVL_BSMUL_BHALF (ovl/model.h), the block size
 * whose b x b x b dgemms run at half the rate of a large one.
 *
 * For each block size b: many b x b x b cblas_dgemm calls, C_k += A_i B_j
 * over blocks scattered through 64 MiB of operands (larger than the last
 * level cache, as a sparse matrix's blocks are), timed for about a second,
 * the median of 3 repetitions; then one n = 1024 dgemm (the rate gamma
 * stands for). Prints per b the GFLOP/s, e(b) = rate / the large rate and
 * the half-rate size h = b (1 / e(b) - 1) that e(b) = b / (b + h) implies;
 * and the median h over the sizes 8 to 64. One rank, one BLAS thread
 * (OPENBLAS_NUM_THREADS=1, as scripts/env.sh sets):
 *
 *   . scripts/env.sh && build/bench/bsmul_dgemm_eff
 */
#include <cblas.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* GFLOP/s of b x b x b products over nb blocks of each operand, about a second, the median of 3. */
static double rate(int b, int64_t nb, const double *A, const double *B, double *C) {
  double r[3];
  int64_t bb = (int64_t)b * b;
  for (int rep = 0; rep < 3; rep++) {
    double fl = 0, t0 = now(), t = 0;
    int64_t k = 0;
    do {
      for (int64_t i = 0; i < nb; i++, k++)
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, b, b, b, 1.0, A + i * bb, b, B + ((i * 7 + k) % nb) * bb,
                    b, 1.0, C + ((i * 13) % nb) * bb, b);
      fl += 2.0 * (double)b * b * b * (double)nb;
      t = now() - t0;
    } while (t < 1.0);
    r[rep] = fl / t * 1e-9;
  }
  qsort(r, 3, sizeof r[0], cmp);
  return r[1];
}

int main(void) {
  const int sizes[] = {2, 4, 8, 13, 16, 24, 32, 48, 64, 128};
  const int ns = (int)(sizeof sizes / sizeof sizes[0]);
  const int64_t bytes = (int64_t)64 << 20;
  double *A = malloc((size_t)bytes), *B = malloc((size_t)bytes), *C = malloc((size_t)bytes);
  if (!A || !B || !C) {
    fprintf(stderr, "bsmul_dgemm_eff: cannot allocate 3 x 64 MiB\n");
    return 1;
  }
  for (int64_t i = 0; i < bytes / 8; i++) A[i] = 1e-3 * (double)(i % 97), B[i] = 1e-3 * (double)(i % 89), C[i] = 0;
  double big = rate(1024, 4, A, B, C), g[16], h[16];
  int nh = 0;
  printf("# large dgemm (n = 1024): %.2f GFLOP/s\n# %5s %10s %8s %8s\n", big, "b", "GFLOP/s", "e(b)", "h");
  for (int x = 0; x < ns; x++) {
    int b = sizes[x];
    g[x] = rate(b, bytes / 8 / ((int64_t)b * b), A, B, C);
    double e = g[x] / big, hh = e > 0 ? b * (1 / e - 1) : 0;
    printf("  %5d %10.2f %8.3f %8.1f\n", b, g[x], e, hh);
    if (b >= 8 && b <= 64) h[nh++] = hh;
  }
  qsort(h, (size_t)nh, sizeof h[0], cmp);
  printf("# median h over b = 8 .. 64: %.1f\n", nh % 2 ? h[nh / 2] : 0.5 * (h[nh / 2 - 1] + h[nh / 2]));
  free(A), free(B), free(C);
  return 0;
}
