/* Small helpers shared by the benchmark programs of bench/. */
#ifndef OVL_BENCHUTIL_H
#define OVL_BENCHUTIL_H

#include <stdio.h>

#include "ovl/ovl.h"

/* qsort's comparison of two doubles (ascending). */
static inline int bench_cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Stop every rank with prog's message when rc is an error. */
static inline void bench_die(const char *prog, ovl_err rc, const char *what) {
  if (rc == OVL_OK) return;
  fprintf(stderr, "%s: %s: %s\n", prog, what, ovl_errmsg());
  MPI_Abort(MPI_COMM_WORLD, 1);
}

#endif
