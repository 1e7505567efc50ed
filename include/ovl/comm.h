/* ovl communication layer: requests, nonblocking collectives with two back
 * ends, lanes (N_DUP duplicated communicators), pipelines driven in arrival
 * order, and active subsets of ranks for multiple processes per node.
 *
 * Data are doubles; counts are in elements. Reductions are sums.
 *
 * Back ends (chosen at run time in ovl_coll_cfg):
 *  - OVL_BACKEND_MPI: the MPI library's nonblocking collectives
 *    (MPI_Ibcast, MPI_Ireduce, MPI_Iallreduce, MPI_Iallgather, MPI_Ialltoall).
 *  - OVL_BACKEND_OWN: ovl's own nonblocking collectives, schedules of rounds
 *    of MPI_Isend/MPI_Irecv (plus local sums and copies) progressed by
 *    ovl_req_test/ovl_req_wait. They behave the same on every MPI library
 *    (and in SMPI, whose MPI_Ibcast/MPI_Ireduce are flat trees).
 *
 * Own schedules tag their messages with a per-communicator sequence number,
 * so any number of them may be in flight on one communicator as long as all
 * ranks start them in the same order (the MPI rule for collectives). Use
 * communicators that carry no other point-to-point traffic (lanes are
 * duplicates made for this).
 */
#ifndef OVL_COMM_H
#define OVL_COMM_H

#include <stdint.h>

#include "ovl/core.h"
#include "ovl/schema.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- requests ------------------------------------------------------------ */

/* A pending nonblocking operation (MPI request or own schedule). NULL is the
 * null request; completion frees it and sets it to NULL. */
typedef struct ovl_req_s *ovl_req;
#define OVL_REQ_NULL ((ovl_req)0)

/* Progress *req once; *done = 1 (and *req = NULL) when complete. A NULL
 * request is complete. Like MPI's progress rule, testing or waiting on any
 * request also advances every other live own schedule of this process, so
 * ranks may complete their requests in different orders. LOCAL. */
ovl_err ovl_req_test(ovl_req *req, int *done);
/* Block until *req completes. LOCAL. */
ovl_err ovl_req_wait(ovl_req *req);
/* Block until all complete. LOCAL. */
ovl_err ovl_req_waitall(int n, ovl_req *reqs);
/* Block until one non-NULL request completes; *index receives it (or -1
 * when all are NULL). Requests complete in the order the network finishes
 * them (arrival order). LOCAL. */
ovl_err ovl_req_waitany(int n, ovl_req *reqs, int *index);
/* Progress every request once (for computation loops: call every k panels);
 * *ncomplete receives how many completed. LOCAL. */
ovl_err ovl_req_progress(int n, ovl_req *reqs, int *ncomplete);
/* Number of live (created, not yet completed) requests in this process: a
 * leak check for tests. LOCAL. */
int64_t ovl_req_live(void);

/* ---- collective configuration ------------------------------------------- */

/* The back ends (ovl_backend), the schedules of the own back end (ovl_alg),
 * ovl_coll_cfg and their names are part of the plan: ovl/schema.h. */

/* ---- nonblocking collectives on one communicator ---------------------------
 * COLLECTIVE over comm (every rank calls it, in the same order as the other
 * collectives on comm); they only start the operation: complete *req with
 * ovl_req_test/wait. Buffers must stay valid until completion. Argument
 * errors are LOCAL checks returned without agreement (callers that take
 * user input validate first); they never leave a partial operation posted.
 * cfg == NULL means ovl_coll_cfg_default(). Tags of ovl_isend/irecv are in
 * [0, 32767]. */

ovl_err ovl_ibcast(double *buf, int64_t n, int root, MPI_Comm comm, const ovl_coll_cfg *cfg, ovl_req *req);
/* rbuf significant at root only; sbuf == rbuf allowed at root (in place). */
ovl_err ovl_ireduce(const double *sbuf, double *rbuf, int64_t n, int root, MPI_Comm comm, const ovl_coll_cfg *cfg,
                    ovl_req *req);
/* sbuf == rbuf allowed (in place). */
ovl_err ovl_iallreduce(const double *sbuf, double *rbuf, int64_t n, MPI_Comm comm, const ovl_coll_cfg *cfg,
                       ovl_req *req);
/* Each rank contributes n elements; rbuf holds p*n, rank r's at r*n.
 * sbuf == rbuf + rank*n allowed (in place). */
ovl_err ovl_iallgather(const double *sbuf, int64_t n, double *rbuf, MPI_Comm comm, const ovl_coll_cfg *cfg,
                       ovl_req *req);
/* sbuf and rbuf hold p blocks of n; block j of sbuf goes to rank j. */
ovl_err ovl_ialltoall(const double *sbuf, int64_t n, double *rbuf, MPI_Comm comm, const ovl_coll_cfg *cfg,
                      ovl_req *req);
/* Point-to-point as requests. */
ovl_err ovl_isend(const double *buf, int64_t n, int dest, int tag, MPI_Comm comm, ovl_req *req);
ovl_err ovl_irecv(double *buf, int64_t n, int src, int tag, MPI_Comm comm, ovl_req *req);

/* ---- lanes ----------------------------------------------------------------- */

/* N_DUP duplicates of one communicator, made once and reused. */
typedef struct ovl_lanes_s *ovl_lanes;

/* COLLECTIVE over comm. comm == MPI_COMM_NULL gives an empty lane set (for
 * ranks outside a grid). Errors (agreed over comm): OVL_ERR_ARG when ndup < 1
 * or ndup > OVL_LANES_MAX (ovl/schema.h) or differs between ranks (and out NULL). */
ovl_err ovl_lanes_create(MPI_Comm comm, int ndup, ovl_lanes *out);
/* NULL-safe; nulls *L. COLLECTIVE over the communicator. */
ovl_err ovl_lanes_destroy(ovl_lanes *L);
int ovl_lanes_count(ovl_lanes L);
MPI_Comm ovl_lanes_comm(ovl_lanes L, int lane);
int ovl_lanes_size(ovl_lanes L);
int ovl_lanes_rank(ovl_lanes L);

/* Part c of n elements split into ndup contiguous parts of ceil(n/ndup)
 * elements, the last part shorter, trailing parts empty when ndup > n.
 * LOCAL. */
void ovl_lanes_part(int64_t n, int ndup, int c, int64_t *off, int64_t *len);
/* Part c of nblk blocks of blk elements each, in whole blocks: the blocks
 * ovl_lanes_part(nblk, ndup, c) gives, as elements (offset and length). A
 * panel split by columns (blk = rows) or by rows of a panel packed by
 * row blocks gives each lane a self-contained part of a product. LOCAL. */
void ovl_lanes_part_blocks(int64_t nblk, int64_t blk, int ndup, int c, int64_t *off, int64_t *len);

/* Split collectives: part c travels on lane c. The i-forms post all parts
 * and fill reqs[0..ndup-1]; the plain forms also wait. COLLECTIVE over the
 * lanes' communicator. With ndup == 1 they are the plain operation. */
ovl_err ovl_lanes_ibcast(ovl_lanes L, double *buf, int64_t n, int root, const ovl_coll_cfg *cfg, ovl_req *reqs);
/* The same broadcast with parts of whole blocks (ovl_lanes_part_blocks):
 * buf holds nblk blocks of blk elements. COLLECTIVE over the lanes'
 * communicator. */
ovl_err ovl_lanes_ibcast_blocks(ovl_lanes L, double *buf, int64_t nblk, int64_t blk, int root, const ovl_coll_cfg *cfg,
                                ovl_req *reqs);
ovl_err ovl_lanes_ireduce(ovl_lanes L, const double *sbuf, double *rbuf, int64_t n, int root, const ovl_coll_cfg *cfg,
                          ovl_req *reqs);
ovl_err ovl_lanes_iallreduce(ovl_lanes L, const double *sbuf, double *rbuf, int64_t n, const ovl_coll_cfg *cfg,
                             ovl_req *reqs);
/* Each rank's n elements are split into parts; part c of every rank travels
 * on lane c and lands in place in rbuf (p blocks of n). */
ovl_err ovl_lanes_iallgather(ovl_lanes L, const double *sbuf, int64_t n, double *rbuf, const ovl_coll_cfg *cfg,
                             ovl_req *reqs);
ovl_err ovl_lanes_isend(ovl_lanes L, const double *buf, int64_t n, int dest, ovl_req *reqs);
ovl_err ovl_lanes_irecv(ovl_lanes L, double *buf, int64_t n, int src, ovl_req *reqs);

ovl_err ovl_lanes_bcast(ovl_lanes L, double *buf, int64_t n, int root, const ovl_coll_cfg *cfg);
ovl_err ovl_lanes_reduce(ovl_lanes L, const double *sbuf, double *rbuf, int64_t n, int root, const ovl_coll_cfg *cfg);
ovl_err ovl_lanes_allreduce(ovl_lanes L, const double *sbuf, double *rbuf, int64_t n, const ovl_coll_cfg *cfg);
ovl_err ovl_lanes_allgather(ovl_lanes L, const double *sbuf, int64_t n, double *rbuf, const ovl_coll_cfg *cfg);

/* ---- pipelines --------------------------------------------------------------
 * A pipeline runs nparts chains of nstages stages. post(ctx, part, stage,
 * &req) starts stage `stage` of part `part` (returning OVL_REQ_NULL when this
 * rank has nothing to wait for in it). Stage s+1 of part c is posted as soon
 * as stage s of part c completes, in the order completions arrive
 * (ovl_req_waitany), not in loop order. Stage 0 of every part is posted
 * first, in part order. */
typedef ovl_err (*ovl_stage_post)(void *ctx, int part, int stage, ovl_req *req);

/* One record per (part, stage): when it was posted and completed, seconds
 * since the pipeline started; `order` is the completion rank (0 = first). */
typedef struct ovl_pipe_event {
  double t_post, t_done;
  int order;
} ovl_pipe_event;

/* Runs to completion. events (nparts*nstages, index part*nstages + stage) may
 * be NULL. LOCAL (the stages it posts are whatever they are). */
ovl_err ovl_pipeline_run(int nparts, int nstages, ovl_stage_post post, void *ctx, ovl_pipe_event *events);
/* The same, naming the stages for the tracer (names[s] with static storage;
 * names may be NULL). */
ovl_err ovl_pipeline_run_named(int nparts, int nstages, ovl_stage_post post, void *ctx, ovl_pipe_event *events,
                               const char *const *names);
/* The same, calling done(ctx, part) as soon as a part has completed its
 * last stage (in arrival order; before the pipeline waits again), e.g. to
 * compute on that part while the others are in flight. done may be NULL. */
typedef void (*ovl_part_done)(void *ctx, int part);
ovl_err ovl_pipeline_run_each(int nparts, int nstages, ovl_stage_post post, void *ctx, ovl_pipe_event *events,
                              const char *const *names, ovl_part_done done);

/* ---- active subsets (multiple processes per node) ----------------------------
 * Of the ranks of comm on each node (MPI_Comm_split_type SHARED), the first
 * k by rank are active. Active ranks do the work in `active_comm` (ordered by
 * node, then by rank on the node: ranks on a node are consecutive); the
 * others sleep, polling with MPI_Test and sleeping sleep_us between polls,
 * until the active ranks are done and release them. Two releases:
 *  - OVL_WAKE_IBARRIER (default, the Huang-Chow mechanism): every rank meets
 *    in an MPI_Ibarrier over comm; sleepers poll it. The active ranks leave
 *    the barrier only after every sleeper has polled once more (up to one
 *    sleep interval later).
 *  - OVL_WAKE_P2P: each node's first rank sends the outcome to the sleepers
 *    of its node, who poll that receive; the active ranks do not wait for
 *    sleepers (measured in docs/design/active.md).
 * In both, the outcome of the work reaches the sleepers in a one-integer
 * message from their node's first rank. */
typedef struct ovl_active_s *ovl_active;
typedef enum ovl_active_wake { OVL_WAKE_IBARRIER = 0, OVL_WAKE_P2P = 1 } ovl_active_wake;

/* COLLECTIVE over comm. 1 <= k <= 2^20 (k larger than a node's rank count
 * makes all its ranks active); 0 <= sleep_us <= 10^7 (0: 10000, the paper's
 * 10 ms). Errors (agreed): OVL_ERR_ARG. */
ovl_err ovl_active_create(MPI_Comm comm, int k, int sleep_us, ovl_active *out);
/* COLLECTIVE over comm; NULL-safe, nulls *a. */
ovl_err ovl_active_destroy(ovl_active *a);
/* Choose the release (the same on every rank). LOCAL. */
ovl_err ovl_active_set_wake(ovl_active a, ovl_active_wake mode);
int ovl_active_is_active(ovl_active a);
MPI_Comm ovl_active_comm(ovl_active a);      /* MPI_COMM_NULL on sleepers */
MPI_Comm ovl_active_node_comm(ovl_active a); /* all ranks of this node */
int ovl_active_nodes(ovl_active a);
/* Run fn(ctx) on the active ranks while the others sleep; returns fn's
 * result agreed over comm (same code and message everywhere). COLLECTIVE
 * over comm. *slept_polls (may be NULL) receives how many times this rank
 * slept (0 on active ranks). */
ovl_err ovl_active_run(ovl_active a, ovl_err (*fn)(void *ctx), void *ctx, int64_t *slept_polls);

/* ---- message volume ------------------------------------------------------ */

/* Bytes this rank sends through ovl's comm layer, by kind, and how many of
 * them go to a rank on another node (Huang & Chow's Table IV counts the
 * inter-node ones). Seen: ovl_isend and every collective of the own back end
 * (its messages are ovl's); not seen: the MPI back end's collectives (the
 * MPI library's messages). Counted between ovl_volume_start and
 * ovl_volume_stop only; otherwise a send costs one test of a flag. */
typedef enum { OVL_VOL_P2P, OVL_VOL_BCAST, OVL_VOL_REDUCE, OVL_VOL_OTHER, OVL_VOL_KINDS } ovl_vol_kind;
typedef struct ovl_volume {
  double bytes[OVL_VOL_KINDS];   /* every byte sent, by kind (reduce: reduce and allreduce) */
  double offnode[OVL_VOL_KINDS]; /* of those, bytes to a rank on another node */
} ovl_volume;
/* Zero the counters and start counting; a node is what
 * MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) groups. Peers outside comm are
 * counted in bytes only. COLLECTIVE over comm. */
ovl_err ovl_volume_start(MPI_Comm comm);
/* The counts so far. LOCAL. */
ovl_err ovl_volume_get(ovl_volume *out);
/* Stop counting and release what start took. LOCAL; OVL_OK when not started. */
ovl_err ovl_volume_stop(void);

/* Node-shared memory (MPI-3 shared windows): `bytes` per node (every rank of
 * the node passes the same value), allocated once on the node's first rank
 * and mapped by all ranks of the node, so changing the active count moves no
 * data inside a node. The window may outlive a. ovl_shm_ptr is NULL when
 * bytes == 0. COLLECTIVE over the node communicator of a. */
typedef struct ovl_shm_s *ovl_shm;
ovl_err ovl_shm_create(ovl_active a, size_t bytes, ovl_shm *out);
ovl_err ovl_shm_destroy(ovl_shm *s);
void *ovl_shm_ptr(ovl_shm s);
size_t ovl_shm_bytes(ovl_shm s);
/* MPI_Win_sync + barrier on the node: makes stores visible. COLLECTIVE over
 * the node communicator. */
ovl_err ovl_shm_fence(ovl_shm s);

#ifdef __cplusplus
}
#endif
#endif
