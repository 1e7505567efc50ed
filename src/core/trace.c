/* The tracer: preallocated per-rank event log, clock offsets by ping-pong at
 * start and end (linear drift correction), Chrome JSON + CSV output. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ovl/trace.h"

int ovl_trace_on_ = 0;

static struct {
  MPI_Comm comm;
  ovl_trace_event *ev;
  int64_t cap, n, dropped;
  double t_start, o_start; /* local time and offset to rank 0 at start */
} T = {MPI_COMM_NULL, NULL, 0, 0, 0, 0, 0};

int ovl_trace_active(void) { return ovl_trace_on_; }
int64_t ovl_trace_count(void) { return T.n; }
int64_t ovl_trace_dropped(void) { return T.dropped; }

void ovl_trace_event_(ovl_trace_kind kind, const char *name, int part, int64_t bytes) {
  if (T.n >= T.cap) {
    T.dropped++;
    return;
  }
  ovl_trace_event *e = &T.ev[T.n++];
  e->t = MPI_Wtime();
  e->name = name;
  e->bytes = bytes;
  e->part = part;
  e->kind = (int32_t)kind;
}

/* Offset of this rank's clock to rank 0's (t0 = t_local + offset), from the
 * ping-pong with the smallest round trip of `trials`. COLLECTIVE. */
static ovl_err clock_offset(MPI_Comm comm, double *offset) {
  int rank, P;
  const int trials = 10, tag = 77;
  OVL_MPI(MPI_Comm_rank(comm, &rank));
  OVL_MPI(MPI_Comm_size(comm, &P));
  *offset = 0.0;
  OVL_MPI(MPI_Barrier(comm));
  for (int r = 1; r < P; r++) {
    if (rank == 0) {
      for (int k = 0; k < trials; k++) {
        double dummy, t0;
        OVL_MPI(MPI_Recv(&dummy, 1, MPI_DOUBLE, r, tag, comm, MPI_STATUS_IGNORE));
        t0 = MPI_Wtime();
        OVL_MPI(MPI_Send(&t0, 1, MPI_DOUBLE, r, tag, comm));
      }
    } else if (rank == r) {
      double best = 1e300;
      for (int k = 0; k < trials; k++) {
        double t1 = MPI_Wtime(), t0 = 0;
        OVL_MPI(MPI_Send(&t1, 1, MPI_DOUBLE, 0, tag, comm));
        OVL_MPI(MPI_Recv(&t0, 1, MPI_DOUBLE, 0, tag, comm, MPI_STATUS_IGNORE));
        double t2 = MPI_Wtime();
        if (t2 - t1 < best) {
          best = t2 - t1;
          *offset = t0 - 0.5 * (t1 + t2);
        }
      }
    }
  }
  return OVL_OK;
}

ovl_err ovl_trace_start(MPI_Comm comm, int64_t capacity) {
  ovl_err rc = OVL_OK;
  if (ovl_trace_on_) rc = ovl_err_set(OVL_ERR_ARG, "tracing is already on");
  else if (capacity < 1 || capacity > ((int64_t)1 << 32))
    rc = ovl_err_set(OVL_ERR_ARG, "trace capacity must be in [1, 2^32] events, got %lld", (long long)capacity);
  ovl_trace_event *ev = NULL;
  if (rc == OVL_OK) rc = ovl_malloc(sizeof(ovl_trace_event) * (size_t)capacity, &ev);
  rc = ovl_err_agree(comm, rc);
  if (rc != OVL_OK) {
    ovl_free(&ev);
    return rc;
  }
  OVL_MPI(MPI_Comm_dup(comm, &T.comm));
  T.ev = ev, T.cap = capacity, T.n = 0, T.dropped = 0;
  OVL_TRY(clock_offset(T.comm, &T.o_start));
  T.t_start = MPI_Wtime();
  ovl_trace_on_ = 1;
  return OVL_OK;
}

static const char *kind_name(int k) {
  switch (k) {
  case OVL_EV_BEGIN: return "begin";
  case OVL_EV_END: return "end";
  case OVL_EV_POST: return "post";
  default: return "complete";
  }
}

/* Append printf output to a growing buffer. */
typedef struct sbuf {
  char *p;
  size_t n, cap;
  int bad;
} sbuf;

static void sb_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(sbuf *b, const char *fmt, ...) {
  if (b->bad) return;
  for (;;) {
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(b->p ? b->p + b->n : NULL, b->p ? b->cap - b->n : 0, fmt, ap);
    va_end(ap);
    if (w < 0) {
      b->bad = 1;
      return;
    }
    if (b->p && b->n + (size_t)w < b->cap) {
      b->n += (size_t)w;
      return;
    }
    size_t cap = b->cap ? 2 * b->cap : 65536;
    while (cap < b->n + (size_t)w + 1) cap *= 2;
    char *np = realloc(b->p, cap);
    if (!np) {
      b->bad = 1;
      return;
    }
    b->p = np, b->cap = cap;
  }
}

/* Gather every rank's text on rank 0 (in rank order). */
static ovl_err gather_text(MPI_Comm comm, const sbuf *mine, char **all, int64_t *len) {
  int rank, P;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &P);
  int n = (int)mine->n;
  int *cnt = NULL, *dsp = NULL;
  *all = NULL;
  *len = 0;
  if (rank == 0) {
    cnt = calloc((size_t)P, sizeof(int));
    dsp = calloc((size_t)P, sizeof(int));
  }
  OVL_MPI(MPI_Gather(&n, 1, MPI_INT, cnt, 1, MPI_INT, 0, comm));
  int64_t tot = 0;
  if (rank == 0)
    for (int r = 0; r < P; r++) dsp[r] = (int)tot, tot += cnt[r];
  if (rank == 0) *all = malloc((size_t)tot + 1);
  OVL_MPI(MPI_Gatherv(mine->p, n, MPI_CHAR, *all, cnt, dsp, MPI_CHAR, 0, comm));
  if (rank == 0) (*all)[tot] = '\0', *len = tot;
  free(cnt);
  free(dsp);
  return OVL_OK;
}

static ovl_err write_atomic(const char *path, const char *head, const char *body, int64_t len, const char *tail) {
  char tmp[4096];
  OVL_TRY(ovl_file_check_write(path, "trace", NULL, 0));
  snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
  FILE *f = fopen(tmp, "w");
  if (!f) return ovl_err_set(OVL_ERR_IO, "cannot write trace '%s': %s", tmp, strerror(errno));
  ovl_tmp_track(tmp); /* removed by a signal that ends the process */
  int ok = fputs(head, f) >= 0 && (len == 0 || fwrite(body, 1, (size_t)len, f) == (size_t)len) && fputs(tail, f) >= 0;
  int e = ok ? 0 : errno;
  if (fclose(f) != 0 && ok) ok = 0, e = errno;
  ovl_tmp_hold(1);
  if (ok && rename(tmp, path) != 0) ok = 0, e = errno;
  if (!ok) unlink(tmp);
  ovl_tmp_untrack(tmp);
  ovl_tmp_hold(0);
  if (!ok) { return ovl_err_set(OVL_ERR_IO, "cannot write trace '%s': %s", path, strerror(e)); }
  return OVL_OK;
}

ovl_err ovl_trace_write(const char *prefix) {
  if (T.comm == MPI_COMM_NULL) return ovl_err_set(OVL_ERR_ARG, "tracing was not started");
  ovl_trace_on_ = 0;
  MPI_Comm comm = T.comm;
  int rank;
  MPI_Comm_rank(comm, &rank);
  double o_end = 0, t_end = 0;
  OVL_TRY(clock_offset(comm, &o_end));
  t_end = MPI_Wtime();
  /* global origin: rank 0's start time */
  double origin = T.t_start + T.o_start;
  OVL_MPI(MPI_Bcast(&origin, 1, MPI_DOUBLE, 0, comm));
  ovl_err rc = OVL_OK;
  if (prefix) {
    sbuf js = {0}, cs = {0};
    double span = t_end - T.t_start;
    for (int64_t i = 0; i < T.n; i++) {
      const ovl_trace_event *e = &T.ev[i];
      double frac = span > 0 ? (e->t - T.t_start) / span : 0.0;
      double t = e->t + T.o_start + (o_end - T.o_start) * frac - origin;
      const char *ph = e->kind == OVL_EV_BEGIN ? "B" : e->kind == OVL_EV_END ? "E" : "i";
      sb_printf(&js,
                "{\"name\":\"%s%s\",\"ph\":\"%s\",%s\"ts\":%.3f,\"pid\":%d,\"tid\":%d,\"args\":{\"bytes\":%lld,"
                "\"part\":%d}},\n",
                e->kind == OVL_EV_POST       ? "post "
                : e->kind == OVL_EV_COMPLETE ? "done "
                                             : "",
                e->name, ph, *ph == 'i' ? "\"s\":\"t\"," : "", t * 1e6, rank,
                e->kind <= OVL_EV_END ? 0 : 1 + (e->part > 0 ? e->part : 0), (long long)e->bytes, e->part);
      sb_printf(&cs, "%d,%.3f,%s,%s,%d,%lld\n", rank, t * 1e6, kind_name(e->kind), e->name, e->part,
                (long long)e->bytes);
    }
    if (js.bad || cs.bad) rc = ovl_err_set(OVL_ERR_NOMEM, "cannot format the trace");
    rc = ovl_err_agree(comm, rc);
    char *all = NULL;
    int64_t len = 0;
    if (rc == OVL_OK) rc = gather_text(comm, &js, &all, &len);
    if (rc == OVL_OK && rank == 0) {
      char path[4096];
      snprintf(path, sizeof path, "%s.json", prefix);
      /* drop the last ",\n" so the array is valid JSON */
      int64_t keep = len >= 2 ? len - 2 : 0;
      rc = write_atomic(path, "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n", all, keep, "\n]}\n");
    }
    free(all);
    all = NULL;
    rc = ovl_err_agree(comm, rc); /* rank 0's write failed: no rank gathers the CSV */
    if (rc == OVL_OK) rc = gather_text(comm, &cs, &all, &len);
    if (rc == OVL_OK && rank == 0) {
      char path[4096];
      snprintf(path, sizeof path, "%s.csv", prefix);
      rc = write_atomic(path, "rank,t_us,kind,name,part,bytes\n", all, len, "");
    }
    free(all);
    free(js.p);
    free(cs.p);
    rc = ovl_err_agree(comm, rc);
  }
  ovl_free(&T.ev);
  T.cap = T.n = 0;
  MPI_Comm_free(&T.comm);
  T.comm = MPI_COMM_NULL;
  return rc;
}
