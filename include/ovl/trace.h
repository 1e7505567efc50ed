/* ovl tracer: a light per-rank event log with clock correction.
 *
 * Events go into a buffer allocated once by ovl_trace_start (no allocation,
 * no communication in the hot path; when the buffer is full further events
 * are counted and dropped). Clock offsets of every rank to rank 0 are measured
 * by ping-pong at start and at write time, and timestamps are corrected with
 * the linear drift between the two measurements (as tlog does).
 * ovl_trace_write gathers everything on rank 0 and writes Chrome trace-event
 * JSON (opens in Perfetto / chrome://tracing) and CSV.
 *
 * Off by default: OVL_TRACE_* macros cost one predictable branch. Building
 * with -DOVL_TRACE=OFF compiles them out entirely.
 */
#ifndef OVL_TRACE_H
#define OVL_TRACE_H

#include <stdint.h>

#include "ovl/core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum ovl_trace_kind {
  OVL_EV_BEGIN = 0,   /* a phase starts */
  OVL_EV_END = 1,     /* the phase ends */
  OVL_EV_POST = 2,    /* a nonblocking operation was posted */
  OVL_EV_COMPLETE = 3 /* a nonblocking operation completed */
} ovl_trace_kind;

typedef struct ovl_trace_event {
  double t;         /* local MPI_Wtime */
  const char *name; /* a string with static storage (a literal) */
  int64_t bytes;
  int32_t part; /* lane / part / step, or -1 */
  int32_t kind; /* ovl_trace_kind */
} ovl_trace_event;

/* Start tracing on this communicator with room for `capacity` events per
 * rank; measures the clock offsets. COLLECTIVE over comm. Errors: OVL_ERR_ARG,
 * OVL_ERR_NOMEM (agreed). */
ovl_err ovl_trace_start(MPI_Comm comm, int64_t capacity);

/* Measure the offsets again, gather the events on rank 0 and write
 * `prefix`.json (Chrome trace events) and `prefix`.csv (rank, t_us, kind,
 * name, part, bytes), both atomically; then stop tracing and free the
 * buffer. prefix == NULL just stops. COLLECTIVE over the start communicator.
 * Errors: OVL_ERR_IO (agreed). */
ovl_err ovl_trace_write(const char *prefix);

/* 1 while tracing. LOCAL. */
int ovl_trace_active(void);
/* Events recorded / dropped on this rank so far. LOCAL. */
int64_t ovl_trace_count(void);
int64_t ovl_trace_dropped(void);

/* Record an event (use the macros). LOCAL, no allocation. */
void ovl_trace_event_(ovl_trace_kind kind, const char *name, int part, int64_t bytes);
extern int ovl_trace_on_;

#ifndef OVL_NO_TRACE
#define OVL_TRACE_BEGIN(name)                                                                                          \
  do {                                                                                                                 \
    if (ovl_trace_on_) ovl_trace_event_(OVL_EV_BEGIN, (name), -1, 0);                                                  \
  } while (0)
#define OVL_TRACE_END(name, bytes)                                                                                     \
  do {                                                                                                                 \
    if (ovl_trace_on_) ovl_trace_event_(OVL_EV_END, (name), -1, (bytes));                                              \
  } while (0)
#define OVL_TRACE_POST(name, part, bytes)                                                                              \
  do {                                                                                                                 \
    if (ovl_trace_on_) ovl_trace_event_(OVL_EV_POST, (name), (part), (bytes));                                         \
  } while (0)
#define OVL_TRACE_COMPLETE(name, part)                                                                                 \
  do {                                                                                                                 \
    if (ovl_trace_on_) ovl_trace_event_(OVL_EV_COMPLETE, (name), (part), 0);                                           \
  } while (0)
#else
#define OVL_TRACE_BEGIN(name)             ((void)0)
#define OVL_TRACE_END(name, bytes)        ((void)0)
#define OVL_TRACE_POST(name, part, bytes) ((void)0)
#define OVL_TRACE_COMPLETE(name, part)    ((void)0)
#endif

#ifdef __cplusplus
}
#endif
#endif
