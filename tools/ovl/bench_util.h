/* Shared helpers of the `ovl bench` micro-benchmarks: size loops, buffers
 * that caches cannot flatter, node and cache queries, the collectives by
 * name, a computation kernel, a sleeping barrier and progress lines. */
#ifndef OVL_BENCH_UTIL_H
#define OVL_BENCH_UTIL_H

#include <stdint.h>

#include "cli.h"

/* ---- sizes ------------------------------------------------------------------ */

/* OSU size loop: lo, 2 lo, 4 lo, ... while <= hi, then hi itself when the
 * doubling missed it (lo = 0 counts as 1). Writes at most cap sizes to out
 * (out may be NULL) and returns how many there are. LOCAL. */
int bench_sizes(int64_t lo, int64_t hi, int64_t *out, int cap);

/* Parse a comma-separated list of integers in [lo, hi] ("1,2,4" or "1-6")
 * into out[0..cap-1]; *n receives the count. LOCAL. Errors: OVL_ERR_ARG
 * naming the option `what`. */
ovl_err bench_int_list(const char *what, const char *s, int lo, int hi, int *out, int cap, int *n);

/* "64 KiB"-style text of a byte count (static buffer: one call per
 * statement). LOCAL. */
const char *bench_bytes_str(double bytes);

/* ---- machine ---------------------------------------------------------------- */

/* Size in bytes of the largest (last-level) CPU cache: from
 * /sys/devices/system/cpu/cpu0/cache, else sysconf, else 32 MiB. LOCAL. */
int64_t bench_llc_bytes(void);

/* Bytes the kernel reports as MemAvailable (0 if unknown). LOCAL. */
int64_t bench_mem_available(void);

/* Ranks of comm on this node (MPI_Comm_split_type SHARED), the number of
 * nodes, and whether every node holds the same number of ranks, numbered
 * consecutively (ranks [j*k, (j+1)*k) on node j). COLLECTIVE over comm. */
ovl_err bench_node_info(MPI_Comm comm, int *ranks_on_node, int *nodes, int *consecutive);

/* Default per-rank size of one rotating buffer set: 2 x the last-level
 * cache, lowered so that `roles` sets on each of the node's ranks fit in half
 * of MemAvailable; *capped says whether it was lowered. COLLECTIVE (calls
 * bench_node_info). */
ovl_err bench_default_cache_bytes(MPI_Comm comm, int roles, int64_t *bytes, int *capped);

/* The memory gate of every bench command, before it allocates its large
 * buffers: OVL_ERR_NOMEM (agreed) when `bytes` per rank (summed in double)
 * exceeds limit (> 0) or the node's MemAvailable shared among its ranks
 * (ovl_check_memory), or 2^62. COLLECTIVE over MPI_COMM_WORLD. */
ovl_err bench_check_memory(double bytes, int64_t limit);

/* The --mem-limit option of the bench commands (dest: int64_t bytes). */
#define BENCH_OPT_MEM_LIMIT(dest)                                                                                      \
  {                                                                                                                    \
    "mem-limit", 0, OVL_OPT_SIZE, (dest), "BYTES",                                                                     \
        "refuse to run above this many bytes per rank (0: the node's available memory shared among its ranks)", NULL,  \
        0, INT64_MAX                                                                                                   \
  }

/* ---- buffers that caches cannot flatter --------------------------------------
 * One arena, first-touched at creation, cut into slots of the current message
 * size (rounded up to 64 bytes, a cache line); bench_rot_next returns the next
 * slot, wrapping around. With an arena of twice the last-level cache a slot
 * comes back only after the whole cache has been overwritten (IMB's
 * -off_cache idea). rotate == 0 always returns the first slot (OSU's default:
 * one buffer, warm in cache). */
typedef struct bench_rot {
  char *base;
  int64_t bytes;  /* arena size */
  int64_t stride; /* slot size for the current message size */
  int64_t nslots, next;
  int rotate;
} bench_rot;

/* Allocate max(arena, 2 * max_msg) bytes (at least 64) and fill them with a
 * byte pattern whose doubles are normal numbers; rotate = arena > 0. LOCAL.
 * Errors: OVL_ERR_NOMEM. */
ovl_err bench_rot_create(int64_t arena, int64_t max_msg, bench_rot *r);
/* Bytes bench_rot_create(arena, max_msg) allocates. LOCAL; pure. */
double bench_rot_bytes(int64_t arena, int64_t max_msg);
/* Prepare for messages of msg bytes (restarts the rotation). LOCAL. */
void bench_rot_size(bench_rot *r, int64_t msg);
/* Number of distinct slots for the current message size. LOCAL. */
int64_t bench_rot_slots(const bench_rot *r);
/* The next slot. LOCAL. */
void *bench_rot_next(bench_rot *r);
/* NULL-safe. LOCAL. */
void bench_rot_destroy(bench_rot *r);

/* ---- collectives by name -------------------------------------------------------- */

typedef enum bench_op { BENCH_BCAST = 0, BENCH_REDUCE, BENCH_ALLREDUCE, BENCH_ALLGATHER, BENCH_ALLTOALL } bench_op;
/* {"bcast", "reduce", "allreduce", "allgather", "alltoall", NULL} */
extern const char *const bench_op_names[];
bench_op bench_op_parse(const char *name); /* name must be one of bench_op_names */

/* Whether the op's buffers hold p blocks (allgather: rbuf; alltoall: both). */
int bench_op_blocked(bench_op op);

/* Start one collective, root 0, through the comm layer. n is the message
 * in elements for bcast/reduce/allreduce, and the block per rank for
 * allgather (rbuf holds p blocks) and alltoall (sbuf and rbuf hold p blocks).
 * COLLECTIVE over comm. */
ovl_err bench_op_post(bench_op op, double *sbuf, double *rbuf, int64_t n, MPI_Comm comm, const ovl_coll_cfg *cfg,
                      ovl_req *req);

/* The same split over the lanes of L (N_DUP parts of n, part c on lane c):
 * ovl_lanes_i* for bcast/reduce/allreduce/allgather; for alltoall (which has
 * no lanes form) lane c runs ovl_ialltoall on its own region of the buffers,
 * p blocks of part c's length at offset p * off_c, and the post is recorded
 * for the tracer like the lanes' (its completion is recorded by
 * bench_lanes_wait). Fills reqs[0..ndup-1]. COLLECTIVE over the lanes. */
ovl_err bench_op_post_lanes(bench_op op, ovl_lanes L, double *sbuf, double *rbuf, int64_t n, const ovl_coll_cfg *cfg,
                            ovl_req *reqs);
/* Wait for the requests of bench_op_post_lanes (records the completions of
 * alltoall parts for the tracer). LOCAL. */
ovl_err bench_lanes_wait(bench_op op, int ndup, ovl_req *reqs);

/* Names with static storage for trace events: "<prefix> <op>". */
const char *bench_trace_name(const char *prefix, bench_op op);

/* ---- computation ------------------------------------------------------------------ */

/* `calls` calls of a small floating-point kernel on L1-resident data (about
 * a microsecond each): a fixed amount of work. LOCAL. */
void bench_kernel(int64_t calls);
/* Seconds per kernel call on this rank: the fastest of 20 trials of ~2 ms. LOCAL. */
double bench_kernel_seconds_per_call(void);
/* OSU's do_compute_cpu: call the kernel until the time spent inside it
 * reaches `seconds`. LOCAL. */
void bench_compute_for(double seconds);

/* ---- synchronisation and progress ------------------------------------------------- */

/* MPI_Ibarrier over comm, then MPI_Test + sleep(sleep_us) until it completes:
 * idle ranks wait here without taking a core from the ranks that measure.
 * COLLECTIVE over comm. */
ovl_err bench_sleep_barrier(MPI_Comm comm, int sleep_us);

/* Progress lines on rank 0 (stderr), one per step, unless off. */
typedef struct bench_progress {
  const char *what;
  int on, total, done;
  double t0;
} bench_progress;
void bench_progress_start(bench_progress *p, const char *what, int total, int on);
/* "ovl bench <what>: [done/total] <text> (<elapsed> s)". */
void bench_progress_step(bench_progress *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
