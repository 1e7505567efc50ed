/* Helpers shared by the benchmarks of src/bench (never in include/). */
#ifndef OVL_BENCH_IMPL_H
#define OVL_BENCH_IMPL_H

#include "ovl/bench.h"

/* ---- buffers that caches cannot flatter --------------------------------------
 * One arena, first-touched at creation, cut into slots of the current message
 * size (rounded up to 64 bytes, a cache line); ovl_i_brot_next returns the next
 * slot, wrapping around. With an arena of twice the last-level cache a slot
 * comes back only after the whole cache has been overwritten (IMB's
 * -off_cache idea). rotate == 0 always returns the first slot (OSU's default:
 * one buffer, warm in cache). */
typedef struct brot {
  char *base;
  int64_t bytes;  /* arena size */
  int64_t stride; /* slot size for the current message size */
  int64_t nslots, next;
  int rotate;
} brot;

/* Bytes ovl_i_brot_create(arena, max_msg) allocates. */
double ovl_i_brot_bytes(int64_t arena, int64_t max_msg);
/* max(arena, 2 max_msg) bytes (at least 64) filled with a pattern whose
 * doubles are normal numbers; rotate = arena > 0. Errors: OVL_ERR_NOMEM. */
ovl_err ovl_i_brot_create(int64_t arena, int64_t max_msg, brot *r);
/* Prepare for messages of msg bytes (restarts the rotation). */
void ovl_i_brot_size(brot *r, int64_t msg);
void *ovl_i_brot_next(brot *r);
void ovl_i_brot_destroy(brot *r); /* NULL-safe */

/* Whether the op's buffers hold p blocks (allgather: rbuf; alltoall: both). */
int ovl_i_bop_blocked(ovl_bench_op op);
/* Start one collective, root 0. n: elements of the message (bcast, reduce,
 * allreduce) or of the block per rank (allgather, alltoall). COLLECTIVE. */
ovl_err ovl_i_bop_post(ovl_bench_op op, double *sbuf, double *rbuf, int64_t n, MPI_Comm comm, const ovl_coll_cfg *cfg,
                       ovl_req *req);
/* The same split over the lanes of L (part c on lane c; alltoall, which has
 * no lanes form, runs ovl_ialltoall per lane on its own region and records
 * the posts for the tracer). Fills reqs[0..ndup-1]. COLLECTIVE. */
ovl_err ovl_i_bop_post_lanes(ovl_bench_op op, ovl_lanes L, double *sbuf, double *rbuf, int64_t n,
                             const ovl_coll_cfg *cfg, ovl_req *reqs);
/* Wait for ovl_i_bop_post_lanes' requests (records alltoall completions). */
ovl_err ovl_i_bop_lanes_wait(ovl_bench_op op, int ndup, ovl_req *reqs);
/* "<prefix> <op>" with static storage, for trace events. */
const char *ovl_i_bop_trace_name(const char *prefix, ovl_bench_op op);

/* `calls` calls of a small floating-point kernel on L1-resident data (about
 * a microsecond each). */
void ovl_i_bkernel(int64_t calls);
/* Seconds per kernel call on this rank: the fastest of 20 trials of ~2 ms. */
double ovl_i_bkernel_seconds_per_call(void);
/* OSU's do_compute_cpu: call the kernel until `seconds` are spent inside it. */
void ovl_i_bkernel_for(double seconds);

/* MPI_Ibarrier, then MPI_Test + sleep until it completes: idle ranks wait
 * without taking a core from the ranks that measure. COLLECTIVE. */
ovl_err ovl_i_bsleep_barrier(MPI_Comm comm, int sleep_us);

/* Report a step through p's callback (if any): printf-style text. */
void ovl_i_bprogress(ovl_bench_progress_fn fn, void *ctx, int done, int total, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

#endif
