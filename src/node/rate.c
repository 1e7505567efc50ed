/* The local BLAS rate: measured (ovl_local_dgemm_gflops), promised by the
 * CPU (ovl_cpu_peak_gflops), and the warning when the first is far below
 * the second (ovl_check_local_blas). */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ovl/node.h"

double ovl_local_dgemm_gflops(int n, int reps) {
  double *a = NULL, *b = NULL, *c = NULL, best = 0.0;
  size_t sz = sizeof(double) * (size_t)n * (size_t)n;
  if (n <= 0 || ovl_malloc(sz, &a) || ovl_malloc(sz, &b) || ovl_calloc(sz, &c)) goto out;
  for (size_t i = 0; i < (size_t)n * n; i++) a[i] = b[i] = 1.0 / (double)(1 + i % 7);
  for (int r = 0; r < reps; r++) {
    double t0 = ovl_time();
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, a, n, b, n, 0.0, c, n);
    double t = ovl_time() - t0, g = 2.0 * n * (double)n * n / (t > 0 ? t : 1e-9) * 1e-9;
    if (g > best) best = g;
  }
out:
  ovl_free(&a);
  ovl_free(&b);
  ovl_free(&c);
  return best;
}

double ovl_cpu_peak_gflops(void) {
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (!f) return 0.0;
  char line[8192];
  double mhz = 0.0;
  int avx512 = 0, avx2 = 0, fma = 0, have_flags = 0;
  while (fgets(line, sizeof line, f)) {
    if (mhz == 0.0 && strncmp(line, "cpu MHz", 7) == 0) {
      char *colon = strchr(line, ':');
      if (colon) mhz = atof(colon + 1);
    } else if (!have_flags && strncmp(line, "flags", 5) == 0) {
      have_flags = 1;
      avx512 = strstr(line, " avx512f") != NULL;
      avx2 = strstr(line, " avx2") != NULL;
      fma = strstr(line, " fma") != NULL;
    }
  }
  fclose(f);
  double fpc = avx512 && fma ? 32.0 : (avx2 && fma ? 16.0 : 4.0);
  return have_flags && mhz > 0 ? fpc * mhz / 1000.0 : 0.0;
}

double ovl_check_local_blas(MPI_Comm comm, int quiet) {
  if (ovl_check_comm(comm, "ovl_check_local_blas") != OVL_OK) return 0.0;
  double g = ovl_local_dgemm_gflops(512, 3), peak = ovl_cpu_peak_gflops();
  MPI_Allreduce(MPI_IN_PLACE, &g, 1, MPI_DOUBLE, MPI_MIN, comm);
  /* With more ranks on a node than cores the rate is shared: no verdict. */
  MPI_Comm node = MPI_COMM_NULL;
  int local = 1;
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) == MPI_SUCCESS) {
    MPI_Comm_size(node, &local);
    MPI_Comm_free(&node);
  }
  int over = cores > 0 && local > cores;
  MPI_Allreduce(MPI_IN_PLACE, &over, 1, MPI_INT, MPI_MAX, comm);
  if (!quiet && !over && peak > 0 && g < peak / 3.0) {
    const char *ct = getenv("OPENBLAS_CORETYPE");
    ovl_warn("local dgemm runs at %.1f GFLOP/s per rank, below 1/3 of the %.0f GFLOP/s this CPU's vector unit "
             "promises.\novl: warning: Debian's OpenBLAS 0.3.21 may not recognise this CPU and use a generic kernel; "
             "set OPENBLAS_CORETYPE=%s (now %s) and OPENBLAS_NUM_THREADS=1, or check that other jobs are not "
             "sharing the cores.\n",
             g, peak, peak >= 60 ? "SkylakeX" : "Haswell", ct ? ct : "unset");
  }
  return g;
}
