// A C++ program of ovl's C API, as a C++ user writes it: mpi.h first (so
// that only the package's or ovl.pc's definitions keep MPI's C++ bindings
// out), no extra flags, standard containers. C = A B on rank 0 (ovl_gemm_dense)
// against the plain triple loop. Built by tests/install_test.sh with
// find_package(ovl) in a project(... CXX) and with the README's c++ line.
#include <mpi.h>
#include <ovl/ovl.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int64_t m = 9, n = 7, k = 5;
  std::vector<double> a, b, c, want;
  if (rank == 0) {
    a.resize(m * k);
    b.resize(k * n);
    c.assign(m * n, 0.0);
    want.assign(m * n, 0.0);
    for (int64_t i = 0; i < m * k; i++) a[i] = static_cast<double>((i * 7) % 11) - 5.0;
    for (int64_t i = 0; i < k * n; i++) b[i] = static_cast<double>((i * 5) % 13) - 6.0;
    for (int64_t j = 0; j < n; j++)
      for (int64_t l = 0; l < k; l++)
        for (int64_t i = 0; i < m; i++) want[i + j * m] += a[i + l * m] * b[l + j * k];
  }
  ovl_dense_info info;
  ovl_err rc = ovl_gemm_dense(nullptr, m, n, k, rank == 0 ? a.data() : nullptr, rank == 0 ? b.data() : nullptr,
                              rank == 0 ? c.data() : nullptr, "auto", nullptr, &info);
  int ok = rc == OVL_OK && std::strcmp(ovl_version(), OVL_VERSION_STRING) == 0;
  if (rc != OVL_OK && rank == 0) std::fprintf(stderr, "ovl_gemm_dense: %s\n", ovl_errmsg());
  if (rank == 0) {
    double err = 0;
    for (int64_t i = 0; ok && i < m * n; i++) err = std::fmax(err, std::fabs(c[i] - want[i]));
    ok = ok && err == 0.0;
    std::printf("downstream C++: ovl %s (headers %d.%d.%d), %d ranks, |C - A B| %.1e: %s\n", ovl_version(),
                OVL_VERSION_MAJOR, OVL_VERSION_MINOR, OVL_VERSION_PATCH, size, err, ok ? "OK" : "FAIL");
  }
  MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Finalize();
  return ok ? 0 : 1;
}
