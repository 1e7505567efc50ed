/* Pipeline engine: chains of stages per part, advanced in arrival order. */
#include <stdlib.h>

#include "comm/comm_impl.h"
#include "ovl/trace.h"

ovl_err ovl_pipeline_run(int nparts, int nstages, ovl_stage_post post, void *ctx, ovl_pipe_event *events) {
  return ovl_pipeline_run_named(nparts, nstages, post, ctx, events, NULL);
}

/* Post stage s of part c and name its request for the tracer. */
static ovl_err post_named(ovl_stage_post post, void *ctx, int c, int s, ovl_req *req, const char *const *names) {
  OVL_TRY(post(ctx, c, s, req));
  if (names && *req) {
    req_trace(*req, names[s], c);
    OVL_TRACE_POST(names[s], c, 0);
  }
  return OVL_OK;
}

ovl_err ovl_pipeline_run_named(int nparts, int nstages, ovl_stage_post post, void *ctx, ovl_pipe_event *events,
                               const char *const *names) {
  return ovl_pipeline_run_each(nparts, nstages, post, ctx, events, names, NULL);
}

ovl_err ovl_pipeline_run_each(int nparts, int nstages, ovl_stage_post post, void *ctx, ovl_pipe_event *events,
                              const char *const *names, ovl_part_done done) {
  OVL_CHECK(nparts >= 0 && nstages >= 0 && post != NULL, OVL_ERR_ARG,
            "pipeline needs nparts >= 0, nstages >= 0 and a post function");
  if (nparts == 0 || nstages == 0) return OVL_OK;
  ovl_req *reqs = calloc((size_t)nparts, sizeof *reqs);
  int *stage = calloc((size_t)nparts, sizeof *stage);
  if (!reqs || !stage) {
    free(reqs);
    free(stage);
    return ovl_err_set(OVL_ERR_NOMEM, "cannot allocate a pipeline of %d parts", nparts);
  }
  double t0 = ovl_time();
  int order = 0, remaining = nparts;
  ovl_err rc = OVL_OK;
  /* Stage 0 of every part first, in part order. */
#define EV(c, s) events[(c)*nstages + (s)]
  for (int c = 0; c < nparts && rc == OVL_OK; c++) {
    if (events) EV(c, 0).t_post = ovl_time() - t0;
    rc = post_named(post, ctx, c, 0, &reqs[c], names);
  }
  /* Stages with nothing to wait for complete at once and their chain moves on. */
  for (int c = 0; c < nparts && rc == OVL_OK; c++) {
    while (reqs[c] == OVL_REQ_NULL) {
      if (events) EV(c, stage[c]).t_done = ovl_time() - t0, EV(c, stage[c]).order = order;
      order++;
      if (++stage[c] == nstages) {
        remaining--;
        if (done) done(ctx, c);
        break;
      }
      if (events) EV(c, stage[c]).t_post = ovl_time() - t0;
      rc = post_named(post, ctx, c, stage[c], &reqs[c], names);
      if (rc != OVL_OK) break;
    }
  }
  while (rc == OVL_OK && remaining > 0) {
    int c = -1;
    rc = ovl_req_waitany(nparts, reqs, &c);
    if (rc != OVL_OK) break;
    if (c < 0) {
      rc = ovl_err_set(OVL_ERR_INTERNAL, "pipeline: %d chains pending but no request live", remaining);
      break;
    }
    for (;;) {
      if (events) EV(c, stage[c]).t_done = ovl_time() - t0, EV(c, stage[c]).order = order;
      order++;
      if (++stage[c] == nstages) {
        remaining--;
        if (done) done(ctx, c);
        break;
      }
      if (events) EV(c, stage[c]).t_post = ovl_time() - t0;
      rc = post_named(post, ctx, c, stage[c], &reqs[c], names);
      if (rc != OVL_OK || reqs[c] != OVL_REQ_NULL) break;
    }
  }
#undef EV
  if (rc != OVL_OK) ovl_req_waitall(nparts, reqs); /* do not leave posted operations behind */
  free(reqs);
  free(stage);
  return rc;
}
