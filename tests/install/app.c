/* A C program of ovl's C API (valid C and C++): a grid, three matrices,
 * C = A B with SUMMA, its trace checked; ovl_version() against the headers'
 * OVL_VERSION_STRING. A(i,j) = i+1, B(i,j) = j+1: tr C = n * sum (i+1)^2.
 * Built by tests/install_test.sh with find_package(ovl) (ovl::ovl and
 * ovl::ovl_static), add_subdirectory, and the README's cc lines. */
#include <ovl/ovl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TRY(x)                                                                                                         \
  do {                                                                                                                 \
    ovl_err e_ = (x);                                                                                                  \
    if (e_ != OVL_OK) {                                                                                                \
      fprintf(stderr, "%s: %s: %s\n", #x, ovl_err_name(e_), ovl_errmsg());                                             \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                                                    \
    }                                                                                                                  \
  } while (0)

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int64_t n = 7;
  double *a = (double *)malloc(sizeof(double) * n * n), *b = (double *)malloc(sizeof(double) * n * n);
  for (int64_t j = 0; j < n; j++)
    for (int64_t i = 0; i < n; i++) {
      a[i + j * n] = (double)(i + 1);
      b[i + j * n] = (double)(j + 1);
    }
  ovl_grid2d g = NULL;
  ovl_dmat A = NULL, B = NULL, C = NULL;
  TRY(ovl_grid2d_create(MPI_COMM_WORLD, 0, 0, 0, &g));
  TRY(ovl_dmat_create(g, n, n, &A));
  TRY(ovl_dmat_create(g, n, n, &B));
  TRY(ovl_dmat_create(g, n, n, &C));
  TRY(ovl_dmat_scatter(A, a));
  TRY(ovl_dmat_scatter(B, b));
  ovl_plan plan = ovl_plan_gemm(OVL_ALGO_SUMMA, 2);
  TRY(ovl_gemm('N', 'N', 1.0, A, B, 0.0, C, &plan, NULL, NULL));
  double tr = 0, want = (double)(n * n * (n + 1) * (2 * n + 1) / 6);
  TRY(ovl_dmat_trace(C, &tr));
  int p, q;
  ovl_grid2d_dims(g, &p, &q);
  char headers[32];
  snprintf(headers, sizeof headers, "%d.%d.%d", OVL_VERSION_MAJOR, OVL_VERSION_MINOR, OVL_VERSION_PATCH);
  int ok = tr == want && strcmp(ovl_version(), OVL_VERSION_STRING) == 0 && strcmp(headers, OVL_VERSION_STRING) == 0;
  if (rank == 0)
    printf("downstream: ovl %s (headers %s), %d ranks, grid %dx%d, trace %.1f (expected %.1f)%s\n", ovl_version(),
           headers, size, p, q, tr, want, ok ? "" : ": FAIL");
  ovl_dmat_destroy(&C);
  ovl_dmat_destroy(&B);
  ovl_dmat_destroy(&A);
  ovl_grid2d_destroy(&g);
  free(a);
  free(b);
  MPI_Finalize();
  return ok ? 0 : 1;
}
