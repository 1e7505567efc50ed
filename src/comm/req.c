/* Requests: MPI requests and own schedules behind one handle. */
#include <sched.h>
#include <stdlib.h>

#include "comm/comm_impl.h"
#include "ovl/trace.h"

static int64_t g_live = 0;
/* Live own schedules: any wait progresses all of them, as MPI's progress rule
 * does for its own requests, so ranks may wait in different orders. */
static ovl_req g_sched_head = NULL;
static int64_t g_nsched = 0;

static void progress_others(ovl_req except) {
  for (ovl_req q = g_sched_head; q; q = q->next)
    if (q != except) {
      int d = 0;
      ovl_i_sched_progress(&q->s, &d); /* errors surface when the owner tests it */
    }
}

int64_t ovl_req_live(void) { return g_live; }

/* Nothing can move until MPI completes a message: block in MPI_Waitany over
 * every message the live schedules have posted, and mark the one that
 * completed. A schedule advances only when one of its messages completes, so
 * after a sweep that moved nothing this gives the same order of events as
 * polling, without spinning: in SimGrid SMPI a waiting rank then costs no
 * host time and no polling quantum of simulated time (docs/lab/smpi-reproductions.md,
 * "Waiting"). Only when every live request is an own schedule: with a
 * nonblocking collective of the MPI library in flight as well (the MPI back
 * end mixed with the own one), Open MPI's MPI_Waitany over the schedules'
 * messages was seen to hang with every rank inside it (tests/test_lanes.c,
 * "pipeline mixed", 8 ranks), so that case polls and yields as before. */
static ovl_err block_on_any(void) {
  int cnt = 0;
  if (g_live == g_nsched)
    for (ovl_req q = g_sched_head; q; q = q->next)
      for (int j = 0; q->s.posted && j < q->s.nm; j++) cnt += q->s.mreq[j] != MPI_REQUEST_NULL;
  if (cnt == 0) {
    sched_yield(); /* let other ranks sharing this core progress */
    return OVL_OK;
  }
  MPI_Request stack[64], *m = stack;
  MPI_Request *wstack[64], **where = wstack;
  if (cnt > 64) {
    m = malloc(sizeof *m * (size_t)cnt);
    where = malloc(sizeof *where * (size_t)cnt);
    if (!m || !where) {
      free(m), free(where);
      return ovl_err_set(OVL_ERR_NOMEM, "cannot allocate %d requests", cnt);
    }
  }
  int k = 0;
  for (ovl_req q = g_sched_head; q; q = q->next)
    for (int j = 0; q->s.posted && j < q->s.nm; j++)
      if (q->s.mreq[j] != MPI_REQUEST_NULL) where[k] = &q->s.mreq[j], m[k++] = q->s.mreq[j];
  int idx = MPI_UNDEFINED, rc = MPI_Waitany(k, m, &idx, MPI_STATUS_IGNORE);
  if (rc == MPI_SUCCESS && idx != MPI_UNDEFINED) *where[idx] = MPI_REQUEST_NULL;
  if (m != stack) free(m), free(where);
  return rc == MPI_SUCCESS ? OVL_OK : ovl_err_mpi(rc, "MPI_Waitany");
}

static ovl_err req_new(req_kind kind, ovl_req *out) {
  ovl_req r = calloc(1, sizeof *r);
  if (!r) return ovl_err_set(OVL_ERR_NOMEM, "cannot allocate a request");
  r->kind = kind;
  r->mreq = MPI_REQUEST_NULL;
  if (kind == REQ_SCHED) {
    r->next = g_sched_head;
    if (g_sched_head) g_sched_head->prev = r;
    g_sched_head = r;
    g_nsched++;
  }
  g_live++;
  *out = r;
  return OVL_OK;
}
ovl_err ovl_i_req_new_mpi(ovl_req *out) { return req_new(REQ_MPI, out); }
ovl_err ovl_i_req_new_sched(ovl_req *out) { return req_new(REQ_SCHED, out); }

/* A request completed: record it for the tracer, then free it. */
static void req_done(ovl_req *rp) {
  if (*rp && (*rp)->tname) OVL_TRACE_COMPLETE((*rp)->tname, (*rp)->tpart);
  ovl_i_req_free(rp);
}

void ovl_i_req_free(ovl_req *rp) {
  ovl_req r = *rp;
  if (!r) return;
  if (r->kind == REQ_SCHED) {
    ovl_i_sched_free(&r->s);
    if (r->prev) r->prev->next = r->next;
    else g_sched_head = r->next;
    if (r->next) r->next->prev = r->prev;
    g_nsched--;
  }
  free(r);
  g_live--;
  *rp = NULL;
}

ovl_err ovl_req_test(ovl_req *req, int *done) {
  OVL_TRY(ovl_check_ptr(req, "ovl_req_test", "req"));
  OVL_TRY(ovl_check_ptr(done, "ovl_req_test", "done"));
  ovl_req r = *req;
  *done = 1;
  if (r == NULL) return OVL_OK;
  if (r->kind == REQ_MPI) {
    OVL_MPI(MPI_Test(&r->mreq, done, MPI_STATUS_IGNORE));
  } else {
    OVL_TRY(ovl_i_sched_progress(&r->s, done));
  }
  if (*done) req_done(req);
  else progress_others(r);
  return OVL_OK;
}

ovl_err ovl_req_wait(ovl_req *req) {
  OVL_TRY(ovl_check_ptr(req, "ovl_req_wait", "req"));
  ovl_req r = *req;
  if (r == NULL) return OVL_OK;
  if (r->kind == REQ_MPI && g_nsched == 0) {
    OVL_MPI(MPI_Wait(&r->mreq, MPI_STATUS_IGNORE));
    req_done(req);
    return OVL_OK;
  }
  for (;;) {
    int done = 0;
    OVL_TRY(ovl_req_test(req, &done)); /* also a sweep over the other schedules */
    if (done) return OVL_OK;
    OVL_TRY(block_on_any());
  }
}

ovl_err ovl_req_waitall(int n, ovl_req *reqs) {
  if (n > 0) OVL_TRY(ovl_check_ptr(reqs, "ovl_req_waitall", "reqs"));
  for (int i = 0; i < n; i++) OVL_TRY(ovl_req_wait(&reqs[i]));
  return OVL_OK;
}

ovl_err ovl_req_progress(int n, ovl_req *reqs, int *ncomplete) {
  int c = 0;
  if (n > 0) OVL_TRY(ovl_check_ptr(reqs, "ovl_req_progress", "reqs"));
  for (int i = 0; i < n; i++) {
    if (reqs[i] == NULL) continue;
    int done = 0;
    OVL_TRY(ovl_req_test(&reqs[i], &done));
    c += done;
  }
  if (ncomplete) *ncomplete = c;
  return OVL_OK;
}

ovl_err ovl_req_waitany(int n, ovl_req *reqs, int *index) {
  int live = 0, all_mpi = 1;
  OVL_TRY(ovl_check_ptr(index, "ovl_req_waitany", "index"));
  *index = -1;
  if (n > 0) OVL_TRY(ovl_check_ptr(reqs, "ovl_req_waitany", "reqs"));
  for (int i = 0; i < n; i++)
    if (reqs[i]) {
      live++;
      if (reqs[i]->kind != REQ_MPI) all_mpi = 0;
    }
  if (live == 0) return OVL_OK;
  if (all_mpi && g_nsched == 0) { /* let MPI block efficiently */
    MPI_Request stack[64], *m = n <= 64 ? stack : malloc(sizeof(MPI_Request) * (size_t)n);
    if (!m) return ovl_err_set(OVL_ERR_NOMEM, "cannot allocate %d requests", n);
    for (int i = 0; i < n; i++) m[i] = reqs[i] ? reqs[i]->mreq : MPI_REQUEST_NULL;
    int idx = MPI_UNDEFINED, rc = MPI_Waitany(n, m, &idx, MPI_STATUS_IGNORE);
    if (m != stack) free(m);
    if (rc != MPI_SUCCESS) return ovl_err_mpi(rc, "MPI_Waitany");
    if (idx == MPI_UNDEFINED) return OVL_OK;
    reqs[idx]->mreq = MPI_REQUEST_NULL;
    req_done(&reqs[idx]);
    *index = idx;
    return OVL_OK;
  }
  /* mixed or own schedules: test every live request, starting after the last
   * index so no request is favoured, and block until a message completes when
   * none has */
  static int start = 0;
  for (;;) {
    for (int k = 0; k < n; k++) {
      int i = (start + k) % n;
      if (!reqs[i]) continue;
      int done = 0;
      OVL_TRY(ovl_req_test(&reqs[i], &done));
      if (done) {
        *index = i;
        start = i + 1;
        return OVL_OK;
      }
    }
    progress_others(NULL);
    OVL_TRY(block_on_any());
  }
}
