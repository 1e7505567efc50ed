/* Tracer: a known sequence of events per rank (phases, and the post/complete
 * pairs of a lane-split broadcast and of a lane-split allreduce that
 * completes while it is posted), written as Chrome JSON and CSV; the file
 * contents are checked by tests/trace_check.py. Also: capacity overflow is
 * counted, not written past; a second start is refused on every rank. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "ovl/ovl.h"
#include "ovltest.h"

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, P;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  const char *prefix = argc > 1 ? argv[1] : NULL;
  T_CHECK(!ovl_trace_active(), "off by default");
  OVL_TRACE_BEGIN("not recorded"); /* off: nothing happens */
  T_OK(ovl_trace_start(MPI_COMM_WORLD, 1000));
  T_ERR(ovl_trace_start(MPI_COMM_WORLD, 1000), OVL_ERR_ARG);
  /* rank r: 3 + r phases of a few microseconds each */
  for (int k = 0; k < 3 + rank; k++) {
    OVL_TRACE_BEGIN("phase");
    double t0 = MPI_Wtime();
    while (MPI_Wtime() - t0 < 20e-6) {}
    OVL_TRACE_END("phase", 8 * k);
  }
  /* a broadcast split over 3 lanes: 3 posts and 3 completions per rank */
  ovl_lanes L = NULL;
  T_OK(ovl_lanes_create(MPI_COMM_WORLD, 3, &L));
  double buf[300];
  for (int i = 0; i < 300; i++) buf[i] = rank == 0 ? i : -1;
  T_OK(ovl_lanes_bcast(L, buf, 300, 0, NULL));
  T_CHECK(buf[299] == 299, "bcast result");
  ovl_lanes_destroy(&L);
  /* own allreduces on one rank complete while they are posted: each lane still
   * records its post and its completion (2 + 2 events) */
  T_OK(ovl_lanes_create(MPI_COMM_SELF, 2, &L));
  ovl_coll_cfg own = ovl_coll_cfg_default();
  own.backend = OVL_BACKEND_OWN;
  double s2[4] = {1, 2, 3, 4}, r2[4] = {0};
  ovl_req reqs[OVL_LANES_MAX];
  T_OK(ovl_lanes_iallreduce(L, s2, r2, 4, &own, reqs));
  T_OK(ovl_req_waitall(2, reqs));
  T_CHECK(r2[0] == 1 && r2[3] == 4, "allreduce on one rank");
  ovl_lanes_destroy(&L);
  int64_t want = 2 * (3 + rank) + 6 + 4;
  T_CHECK(ovl_trace_count() == want, "recorded %lld events, expected %lld", (long long)ovl_trace_count(),
          (long long)want);
  T_OK(ovl_trace_write(prefix));
  T_CHECK(!ovl_trace_active(), "off after write");
  /* overflow: capacity 4, 10 events -> 6 dropped */
  T_OK(ovl_trace_start(MPI_COMM_WORLD, 4));
  for (int k = 0; k < 5; k++) {
    OVL_TRACE_BEGIN("x");
    OVL_TRACE_END("x", 0);
  }
  T_CHECK(ovl_trace_count() == 4 && ovl_trace_dropped() == 6, "overflow: %lld kept, %lld dropped",
          (long long)ovl_trace_count(), (long long)ovl_trace_dropped());
  T_OK(ovl_trace_write(NULL));
  T_ERR(ovl_trace_start(MPI_COMM_WORLD, 0), OVL_ERR_ARG);
  int rc = t_finish("test_trace");
  MPI_Finalize();
  return rc;
}
