/* Errors, collective agreement, memory, logging. */
#include "ovl/core.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OVL_MSG_MAX 1024

ovl_err ovl_err_mpi(int mpi_rc, const char *call) {
  char s[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(mpi_rc, s, &len) != MPI_SUCCESS) snprintf(s, sizeof s, "code %d", mpi_rc);
  return ovl_err_set(OVL_ERR_MPI, "%s failed: %s", call, s);
}

ovl_err ovl_err_agree(MPI_Comm comm, ovl_err local) {
  if (comm == MPI_COMM_NULL) return local;
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  /* MAXLOC on (code, -rank): the largest code, ties to the lowest rank. */
  struct {
    int code;
    int neg_rank;
  } in = {(int)local, -rank}, out = {0, 0};
  int rc = MPI_Allreduce(&in, &out, 1, MPI_2INT, MPI_MAXLOC, comm);
  if (rc != MPI_SUCCESS) return ovl_err_mpi(rc, "MPI_Allreduce (error agreement)");
  if (out.code == OVL_OK) return OVL_OK;
  int root = -out.neg_rank;
  char buf[OVL_MSG_MAX];
  if (rank == root) snprintf(buf, sizeof buf, "%s", ovl_errmsg());
  rc = MPI_Bcast(buf, (int)sizeof buf, MPI_CHAR, root, comm);
  if (rc != MPI_SUCCESS) return ovl_err_mpi(rc, "MPI_Bcast (error agreement)");
  buf[OVL_MSG_MAX - 1] = '\0';
  ovl_err_set((ovl_err)out.code, "%s", buf); /* an escaped text escapes to itself */
  return (ovl_err)out.code;
}

ovl_err ovl_err_agree_same(MPI_Comm comm, ovl_err local, const int64_t *v, const char *const *names, int k) {
  int64_t r0[16];
  int rank = 0;
  ovl_err same = OVL_OK;
  if (comm == MPI_COMM_NULL) return local;
  /* values that differ come first: they are the cause of what else fails */
  if (k < 0 || k > 16) same = ovl_err_set(OVL_ERR_ARG, "ovl_err_agree_same: %d values (0 to 16)", k);
  else if (k > 0 && v == NULL) same = ovl_err_set(OVL_ERR_ARG, "ovl_err_agree_same: v is NULL");
  else if (k > 0) {
    memcpy(r0, v, sizeof(int64_t) * (size_t)k);
    OVL_MPI(MPI_Bcast(r0, k, MPI_INT64_T, 0, comm));
    OVL_MPI(MPI_Comm_rank(comm, &rank));
  }
  for (int i = 0; i < k && i < 16 && same == OVL_OK; i++)
    if (v[i] != r0[i]) {
      const char *nm = names && names[i] ? names[i] : "a value";
      if (nm[0] == '=') /* a string, compared by its hash */
        same = ovl_err_set(OVL_ERR_ARG, "%s differs between rank %d and rank 0 (every rank must pass the same)", nm + 1,
                           rank);
      else
        same = ovl_err_set(OVL_ERR_ARG,
                           "%s = %" PRId64 " on rank %d but %" PRId64 " on rank 0 (every rank must pass the same)", nm,
                           v[i], rank, r0[i]);
    }
  OVL_TRY(ovl_err_agree(comm, same));
  return ovl_err_agree(comm, local);
}

ovl_err ovl_check_comm(MPI_Comm comm, const char *fn) {
  if (comm != MPI_COMM_NULL) return OVL_OK;
  return ovl_err_set(OVL_ERR_ARG, "%s: the communicator is MPI_COMM_NULL", fn);
}

void ovl_fatal(MPI_Comm comm, ovl_err code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char raw[OVL_MSG_MAX], buf[OVL_MSG_MAX];
  vsnprintf(raw, sizeof raw, fmt, ap);
  va_end(ap);
  ovl_escape_as(buf, sizeof buf, raw, OVL_ESCAPE_C0_ALL);
  fprintf(stderr, "ovl: fatal (%s) on rank %d: %s\n", ovl_err_name(code), ovl_world_rank(), buf);
  fflush(stderr);
  fflush(stdout);
  MPI_Abort(comm == MPI_COMM_NULL ? MPI_COMM_WORLD : comm, code == OVL_OK ? 1 : (int)code);
  abort(); /* MPI_Abort does not return; keep the compiler informed */
}

/* ---- memory ---- */

#ifdef OVL_SMPI
static long long smpi_shared_min(void) {
  static long long min = -2;
  if (min == -2) {
    const char *e = getenv("OVL_SMPI_SHARED_MALLOC");
    min = e != NULL && *e ? atoll(e) : -1;
  }
  return min;
}
#endif

ovl_err ovl_malloc(size_t n, void *ptr_out) {
  OVL_TRY(ovl_check_ptr(ptr_out, "ovl_malloc", "ptr_out"));
  void *p = NULL;
  *(void **)ptr_out = NULL;
  /* rounded up to 64 bytes: a size within 63 of SIZE_MAX would wrap to a small block */
  if (n > SIZE_MAX - 63) return ovl_err_set(OVL_ERR_NOMEM, "cannot allocate %zu bytes", n);
  size_t sz = (n + 63) / 64 * 64;
  if (sz == 0) sz = 64;
#ifdef OVL_SMPI
  /* SimGrid SMPI: OVL_SMPI_SHARED_MALLOC=BYTES makes blocks of at least BYTES
   * one memory shared by all simulated ranks (their contents are then
   * meaningless: with OVL_SMPI_FLOPS=skip only). docs/guides/smpi.md. */
  if (smpi_shared_min() >= 0 && (long long)n >= smpi_shared_min()) {
    p = SMPI_SHARED_MALLOC(sz);
    *(void **)ptr_out = p;
    return p != NULL ? OVL_OK : ovl_err_set(OVL_ERR_NOMEM, "cannot allocate %zu bytes (SMPI shared)", n);
  }
#endif
  if (posix_memalign(&p, 64, sz) != 0 || p == NULL) {
    *(void **)ptr_out = NULL;
    return ovl_err_set(OVL_ERR_NOMEM, "cannot allocate %zu bytes", n);
  }
  *(void **)ptr_out = p;
  return OVL_OK;
}

ovl_err ovl_calloc(size_t n, void *ptr_out) {
  OVL_TRY(ovl_malloc(n, ptr_out));
#ifdef OVL_SMPI
  if (smpi_shared_min() >= 0 && (long long)n >= smpi_shared_min()) return OVL_OK; /* shared: contents meaningless */
#endif
  memset(*(void **)ptr_out, 0, n);
  return OVL_OK;
}

void ovl_free(void *ptr_inout) {
  void **pp = (void **)ptr_inout;
  if (pp == NULL) return;
  free(*pp);
  *pp = NULL;
}

/* ---- timers ---- */

double ovl_time(void) { return MPI_Wtime(); }

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

ovl_stats ovl_stats_of(const double *x, int n) {
  ovl_stats s = {0, 0, 0, 0, n};
  if (n <= 0) return s;
  double *tmp = malloc(sizeof(double) * (size_t)n);
  if (tmp == NULL) return s;
  memcpy(tmp, x, sizeof(double) * (size_t)n);
  qsort(tmp, (size_t)n, sizeof(double), cmp_double);
  double sum = 0;
  for (int i = 0; i < n; i++) sum += tmp[i];
  s.min = tmp[0];
  s.max = tmp[n - 1];
  s.median = (n % 2) ? tmp[n / 2] : 0.5 * (tmp[n / 2 - 1] + tmp[n / 2]);
  s.mean = sum / n;
  free(tmp);
  return s;
}

ovl_err ovl_stats_max_over_ranks(MPI_Comm comm, double *t, int n, ovl_stats *out) {
  OVL_TRY(ovl_check_comm(comm, "ovl_stats_max_over_ranks"));
  OVL_TRY(ovl_check_ptr(out, "ovl_stats_max_over_ranks", "out"));
  if (n < 0) return ovl_err_set(OVL_ERR_ARG, "ovl_stats_max_over_ranks: n = %d is negative", n);
  if (n > 0) OVL_TRY(ovl_check_ptr(t, "ovl_stats_max_over_ranks", "t"));
  if (n > 0) OVL_MPI(MPI_Allreduce(MPI_IN_PLACE, t, n, MPI_DOUBLE, MPI_MAX, comm));
  *out = ovl_stats_of(t, n);
  return OVL_OK;
}

/* ---- logging ---- */

static ovl_log_level g_level = OVL_LOG_INFO;

void ovl_log_set_level(ovl_log_level level) { g_level = level; }
ovl_log_level ovl_log_get_level(void) { return g_level; }

int ovl_world_rank(void) {
  static int cached = -1;
  int init = 0, fin = 0;
  if (cached >= 0) return cached;
  MPI_Initialized(&init);
  MPI_Finalized(&fin);
  if (!init || fin) return 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &cached);
  return cached;
}

/* Format fmt, escape it (ovl_escape_as, newlines and tabs kept) and print it on out;
 * flush when asked. Returns the bytes written or -1. */
static int vprint_escaped(FILE *out, const char *prefix, int flush, const char *fmt, va_list ap) {
  va_list aq;
  va_copy(aq, ap);
  int len = vsnprintf(NULL, 0, fmt, aq), w = -1;
  va_end(aq);
  if (len < 0) return -1;
  size_t cap = (size_t)len + 1;
  char *raw = malloc(cap), *esc = malloc(4 * cap);
  if (raw && esc) {
    vsnprintf(raw, cap, fmt, ap);
    ovl_escape_as(esc, 4 * cap, raw, OVL_ESCAPE_C0_LINES);
    w = fprintf(out, "%s%s", prefix, esc);
  }
  free(raw);
  free(esc);
  if (flush) fflush(out);
  return w;
}

int ovl_fprintf(FILE *out, const char *fmt, ...) {
  if (!out || !fmt) return -1;
  va_list ap;
  va_start(ap, fmt);
  int w = vprint_escaped(out, "", 0, fmt, ap);
  va_end(ap);
  return w;
}

void ovl_log(ovl_log_level level, const char *fmt, ...) {
  if (level > g_level || ovl_world_rank() != 0) return;
  va_list ap;
  va_start(ap, fmt);
  vprint_escaped(stdout, "", 1, fmt, ap);
  va_end(ap);
}

void ovl_warn(const char *fmt, ...) {
  if (ovl_world_rank() != 0) return;
  va_list ap;
  va_start(ap, fmt);
  vprint_escaped(stderr, "ovl: warning: ", 1, fmt, ap);
  va_end(ap);
}

void ovl_log_rank(const char *fmt, ...) {
  char prefix[32];
  snprintf(prefix, sizeof prefix, "[rank %d] ", ovl_world_rank());
  va_list ap;
  va_start(ap, fmt);
  vprint_escaped(stderr, prefix, 1, fmt, ap);
  va_end(ap);
}

const char *ovl_version(void) { return OVL_VERSION_STRING; }

ovl_err ovl_mpi_library(char *buf, size_t n) {
  char lib[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  if (buf == NULL || n == 0) return ovl_err_set(OVL_ERR_ARG, "ovl_mpi_library: no buffer");
  OVL_MPI(MPI_Get_library_version(lib, &len));
  char *nl = strchr(lib, '\n');
  if (nl) *nl = '\0';
  char *comma = strchr(lib, ',');
  if (comma && comma - lib > 8) *comma = '\0';
  /* printed inside JSON strings: no control characters, quotes or backslashes (MPICH's string has a tab) */
  for (char *c = lib; *c; c++)
    if ((unsigned char)*c < 0x20 || *c == '"' || *c == '\\') *c = ' ';
  snprintf(buf, n, "%s", lib);
  return OVL_OK;
}
