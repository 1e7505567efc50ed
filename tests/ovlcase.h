/* Case-labelled checks for the large table-driven tests (test_coll,
 * test_lanes): every failure names the case being run, and a watchdog turns
 * a hang into a message naming it. Define OVL_CASE_NAME before including. */
#ifndef OVL_CASE_H
#define OVL_CASE_H

#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ovltest.h"

#ifndef OVL_CASE_NAME
#define OVL_CASE_NAME "test"
#endif

#define LARGE      100003
#define GUARD      8
#define GUARDV     (-4242.0)
#define SENT       (-7777.0)
#define WATCHDOG_S 90

static int W_rank, W_size;
static char g_case[640];
static size_t g_case_len;

/* ---- harness helpers (same as test_coll) ------------------------------------ */

static void on_alarm(int sig) {
  (void)sig;
  static const char msg[] = "\n" OVL_CASE_NAME ": TIMEOUT (watchdog) in case: ";
  ssize_t w = write(2, msg, sizeof msg - 1);
  w = write(2, g_case, g_case_len);
  w = write(2, "\n", 1);
  (void)w;
  _exit(3);
}

static void set_case(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int g_verbose;
static double g_case_t0;
static void set_case(const char *fmt, ...) {
  /* OVL_TEST_VERBOSE=1: rank 0 reports the cases that took over 0.5 s */
  double now = MPI_Wtime();
  if (g_verbose && W_rank == 0 && g_case_len && now - g_case_t0 > 0.5)
    fprintf(stderr, "slow case (%.2f s): %s\n", now - g_case_t0, g_case);
  g_case_t0 = now;
  va_list ap;
  va_start(ap, fmt);
  int k = vsnprintf(g_case, sizeof g_case, fmt, ap);
  va_end(ap);
  if (k < 0) k = 0;
  if ((size_t)k >= sizeof g_case) k = (int)sizeof g_case - 1;
  int k2 = snprintf(g_case + k, sizeof g_case - (size_t)k, " [world rank %d of %d]", W_rank, W_size);
  if (k2 > 0) k += k2;
  if ((size_t)k >= sizeof g_case) k = (int)sizeof g_case - 1;
  g_case_len = (size_t)k;
  alarm(WATCHDOG_S);
}

static void cfail_(int line, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void cfail_(int line, const char *fmt, ...) {
  char msg[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  t_fail_(__FILE__, line, "case {%s}: %s", g_case, msg);
}
#define C_CHECK(cond, ...)                                                                                             \
  do {                                                                                                                 \
    t_checks_++;                                                                                                       \
    if (!(cond)) cfail_(__LINE__, __VA_ARGS__);                                                                        \
  } while (0)
#define C_OK(call)                                                                                                     \
  do {                                                                                                                 \
    ovl_err c_rc_ = (call);                                                                                            \
    C_CHECK(c_rc_ == OVL_OK, "%s returned %s: %s", #call, ovl_err_name(c_rc_), ovl_errmsg());                          \
  } while (0)
#define C_ERR(call, code)                                                                                              \
  do {                                                                                                                 \
    ovl_err c_rc_ = (call);                                                                                            \
    C_CHECK(c_rc_ == (code), "%s returned %s, expected %s (%s)", #call, ovl_err_name(c_rc_), ovl_err_name(code),       \
            ovl_errmsg());                                                                                             \
  } while (0)

/* Communicator size and rank. */
static int csize(MPI_Comm c) {
  int s;
  MPI_Comm_size(c, &s);
  return s;
}
static int crank(MPI_Comm c) {
  int r;
  MPI_Comm_rank(c, &r);
  return r;
}

/* Buffer of n elements followed by GUARD guard values. */
static double *tb(int64_t n) {
  double *b = malloc((size_t)(n + GUARD) * sizeof *b);
  if (!b) {
    fprintf(stderr, OVL_CASE_NAME ": out of memory\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  for (int k = 0; k < GUARD; k++) b[n + k] = GUARDV;
  return b;
}

/* Contribution of rank r, element i: small nonzero integer. */
static double val(int r, int64_t i, int salt) { return (double)((r + 1) * (int)((i + salt) % 97 + 1)); }

#endif
