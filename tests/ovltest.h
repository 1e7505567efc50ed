/* Minimal MPI test harness: each rank counts its errors; one reduction
 * agrees the verdict; rank 0 prints a closing line. */
#ifndef OVL_TEST_H
#define OVL_TEST_H

#include <mpi.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static int t_errors_ = 0;
static int t_checks_ = 0;

static void t_fail_(const char *file, int line, const char *fmt, ...) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  fprintf(stderr, "[rank %d] FAIL %s:%d: %s\n", rank, file, line, buf);
  fflush(stderr);
  t_errors_++;
}

/* Check a condition; on failure print the formatted message and count it. */
#define T_CHECK(cond, ...)                                                                                             \
  do {                                                                                                                 \
    t_checks_++;                                                                                                       \
    if (!(cond)) t_fail_(__FILE__, __LINE__, __VA_ARGS__);                                                             \
  } while (0)

/* Check an ovl call returns OVL_OK. */
#define T_OK(call)                                                                                                     \
  do {                                                                                                                 \
    ovl_err t_rc_ = (call);                                                                                            \
    t_checks_++;                                                                                                       \
    if (t_rc_ != OVL_OK) t_fail_(__FILE__, __LINE__, "%s returned %s: %s", #call, ovl_err_name(t_rc_), ovl_errmsg());  \
  } while (0)

/* Check an ovl call fails with the expected code. */
#define T_ERR(call, code)                                                                                              \
  do {                                                                                                                 \
    ovl_err t_rc_ = (call);                                                                                            \
    t_checks_++;                                                                                                       \
    if (t_rc_ != (code))                                                                                               \
      t_fail_(__FILE__, __LINE__, "%s returned %s, expected %s (%s)", #call, ovl_err_name(t_rc_), ovl_err_name(code),  \
              ovl_errmsg());                                                                                           \
  } while (0)

/* 1 when every rank of comm holds the same msg (an error message: a
 * collective verdict; FNV-1a hashes compared). COLLECTIVE over comm. */
static inline int t_same_message(MPI_Comm comm, const char *msg) {
  uint64_t h = 14695981039346656037ull;
  for (const char *s = msg; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  uint64_t mm[2] = {h, ~h};
  MPI_Allreduce(MPI_IN_PLACE, mm, 2, MPI_UINT64_T, MPI_MAX, comm);
  return mm[0] == ~mm[1];
}

/* T_ERR, and the same message on every rank of MPI_COMM_WORLD. */
#define T_ERR_SAME(call, code)                                                                                         \
  do {                                                                                                                 \
    T_ERR(call, code);                                                                                                 \
    T_CHECK(t_same_message(MPI_COMM_WORLD, ovl_errmsg()), "%s: a different message on some rank (here: %s)", #call,    \
            ovl_errmsg());                                                                                             \
  } while (0)

/* splitmix64 of x: reproducible bits, the same on every rank. */
static inline uint64_t t_mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}
/* A reproducible number in [-1, 1) from x. */
static inline double t_urand(uint64_t x) { return (double)(t_mix(x) >> 11) * (1.0 / 9007199254740992.0) * 2 - 1; }

/* The gapped chain of the block-sparse tests: F(i, j), column-major n x n,
 * alternating on-site energies, nearest- and next-nearest-neighbour hops
 * (malloc'd; the caller frees). */
static inline double *t_chain(int64_t n) {
  double *f = calloc((size_t)(n * n), sizeof(double));
  for (int64_t i = 0; f && i < n; i++) {
    f[i + i * n] = (i % 2 ? 0.6 : -0.6) + 0.05 * t_urand((uint64_t)i);
    if (i + 1 < n) f[i + (i + 1) * n] = f[i + 1 + i * n] = -1.0 + 0.1 * t_urand((uint64_t)(n + i));
    if (i + 2 < n) f[i + (i + 2) * n] = f[i + 2 + i * n] = 0.05 * t_urand((uint64_t)(2 * n + i));
  }
  return f;
}

/* Agree the verdict over MPI_COMM_WORLD; returns the process exit code. */
static int t_finish(const char *name) {
  int rank = 0, size = 1, errs = 0, checks = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Reduce(&t_errors_, &errs, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  MPI_Reduce(&t_checks_, &checks, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  MPI_Bcast(&errs, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    printf("%s: %d ranks, %d checks, %d errors: %s\n", name, size, checks, errs, errs ? "FAIL" : "PASS");
    fflush(stdout);
  }
  return errs ? 1 : 0;
}

#endif
