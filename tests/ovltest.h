/* Minimal MPI test harness: each rank counts its errors; one reduction
 * agrees the verdict; rank 0 prints a closing line. */
#ifndef OVL_TEST_H
#define OVL_TEST_H

#include <mpi.h>
#include <stdarg.h>
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
