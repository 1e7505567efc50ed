/* Active subsets of ranks (multiple processes per node) and node-shared
 * memory.
 *
 * Many processes are launched per node and each stage of an application uses
 * only the first k of them on every node (Chow, Liu, Solomonik, Yang: "A
 * density matrix purification ... multiple PPN overlap", Section III-B). The
 * other ranks sleep: they poll a pending request with MPI_Test and sleep
 * (nanosleep) between polls, so they leave the cores, the memory bandwidth
 * and the network to the active ranks. When the active ranks are done they
 * complete that request, which releases the sleepers. The paper's request is
 * an MPI_Ibarrier over all ranks; ovl's is a receive of a one-integer message
 * from the node leader carrying the agreed result of the work (see
 * ovl_active_run for why). Node data lives in one MPI-3 shared window per
 * node, allocated on the node's first rank and mapped by all, so changing k
 * moves no data inside a node.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "ovl/comm.h"

/* Sane upper bounds of the arguments of ovl_active_create. */
#define ACTIVE_K_MAX            (1 << 20) /* active ranks per node */
#define ACTIVE_SLEEP_MAX_US     10000000  /* 10 s between two polls */
#define ACTIVE_SLEEP_DEFAULT_US 10000     /* 10 ms, as in the paper */

struct ovl_active_s {
  MPI_Comm comm;        /* duplicate of the parent: release barrier and agreement */
  MPI_Comm node_comm;   /* ranks of comm on this node, ordered by rank in comm */
  MPI_Comm active_comm; /* active ranks, ordered by node then local rank; NULL on sleepers */
  MPI_Comm wake_comm;   /* private duplicate of node_comm: the release messages */
  MPI_Request *wake;    /* on node leaders with sleepers: one request per sleeper of the node */
  int k, sleep_us;
  int active;     /* local rank < k */
  int all_active; /* no rank of comm sleeps: ovl_active_run skips the release */
  int local_rank, local_size;
  int node, nnodes; /* node index (nodes numbered by their lowest rank in comm) and count */
  ovl_active_wake wake_mode;
};

struct ovl_shm_s {
  MPI_Comm comm; /* duplicate of the node communicator (errors return) */
  MPI_Win win;
  void *base; /* node-local rank 0's segment, mapped here */
  size_t bytes;
};

static void comm_free(MPI_Comm *c) {
  if (*c != MPI_COMM_NULL) MPI_Comm_free(c);
  *c = MPI_COMM_NULL;
}

/* ---- active subsets ------------------------------------------------------ */

static ovl_err active_validate(int k, int sleep_us, const ovl_active *out) {
  OVL_CHECK(out != NULL, OVL_ERR_ARG, "ovl_active_create: out is NULL");
  OVL_CHECK(k >= 1, OVL_ERR_ARG, "active ranks per node k must be >= 1, got %d", k);
  OVL_CHECK(k <= ACTIVE_K_MAX, OVL_ERR_ARG, "active ranks per node k = %d is absurdly large (max %d)", k, ACTIVE_K_MAX);
  OVL_CHECK(sleep_us >= 0, OVL_ERR_ARG, "sleep interval must be >= 0 us (0: default %d), got %d",
            ACTIVE_SLEEP_DEFAULT_US, sleep_us);
  OVL_CHECK(sleep_us <= ACTIVE_SLEEP_MAX_US, OVL_ERR_ARG, "sleep interval %d us is larger than the maximum %d us",
            sleep_us, ACTIVE_SLEEP_MAX_US);
  return OVL_OK;
}

/* Build the communicators and the node numbering of a (whose k and sleep_us
 * are set). Nodes are numbered in the order of their lowest rank in comm: the
 * node leader (node-local rank 0, the lowest rank since node_comm is keyed by
 * rank) takes the exclusive prefix count of leaders as its index, and the
 * exclusive prefix sum of the active counts of earlier nodes as the offset of
 * its node in active_comm; both are broadcast on the node. The key of an
 * active rank in active_comm is offset + local rank, a dense numbering below
 * the size of comm (no overflow whatever k). */
static ovl_err active_build(ovl_active a, MPI_Comm parent) {
  int rank = 0;
  OVL_MPI(MPI_Comm_dup(parent, &a->comm));
  OVL_MPI(MPI_Comm_rank(a->comm, &rank));
  OVL_MPI(MPI_Comm_split_type(a->comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &a->node_comm));
  OVL_MPI(MPI_Comm_rank(a->node_comm, &a->local_rank));
  OVL_MPI(MPI_Comm_size(a->node_comm, &a->local_size));
  a->active = a->local_rank < a->k;

  int leader = a->local_rank == 0;
  int nactive_here = a->local_size < a->k ? a->local_size : a->k;
  int mine[2] = {leader, leader ? nactive_here : 0}, before[2] = {0, 0};
  OVL_MPI(MPI_Exscan(mine, before, 2, MPI_INT, MPI_SUM, a->comm));
  if (rank == 0) before[0] = before[1] = 0; /* MPI_Exscan leaves rank 0's buffer undefined */
  OVL_MPI(MPI_Bcast(before, 2, MPI_INT, 0, a->node_comm));
  a->node = before[0];

  /* counts[0]: nodes; counts[1]: sleeping ranks */
  int counts[2] = {leader, !a->active};
  OVL_MPI(MPI_Allreduce(MPI_IN_PLACE, counts, 2, MPI_INT, MPI_SUM, a->comm));
  a->nnodes = counts[0];
  a->all_active = counts[1] == 0;

  OVL_MPI(MPI_Comm_split(a->comm, a->active ? 0 : MPI_UNDEFINED, before[1] + a->local_rank, &a->active_comm));
  OVL_MPI(MPI_Comm_dup(a->node_comm, &a->wake_comm));
  if (leader && a->local_size > a->k)
    OVL_TRY(ovl_malloc(sizeof(MPI_Request) * (size_t)(a->local_size - a->k), &a->wake));
  return OVL_OK;
}

/* COLLECTIVE over comm. Validates k and sleep_us, agrees on the verdict over
 * comm (so every rank returns the same code and message and no communicator
 * is created on error), then builds the duplicate, node and active
 * communicators. */
ovl_err ovl_active_create(MPI_Comm comm, int k, int sleep_us, ovl_active *out) {
  if (out != NULL) *out = NULL;
  OVL_CHECK(comm != MPI_COMM_NULL, OVL_ERR_ARG, "ovl_active_create: comm is MPI_COMM_NULL");
  ovl_err rc = active_validate(k, sleep_us, out);
  ovl_active a = NULL;
  if (rc == OVL_OK) rc = ovl_calloc(sizeof *a, &a);
  if ((rc = ovl_err_agree(comm, rc)) != OVL_OK) {
    ovl_free(&a);
    return rc;
  }
  a->comm = a->node_comm = a->active_comm = a->wake_comm = MPI_COMM_NULL;
  a->k = k;
  a->sleep_us = sleep_us ? sleep_us : ACTIVE_SLEEP_DEFAULT_US;
  if ((rc = active_build(a, comm)) != OVL_OK) {
    ovl_active_destroy(&a);
    return rc;
  }
  *out = a;
  return OVL_OK;
}

/* COLLECTIVE over the communicator of a (it frees communicators). NULL-safe;
 * nulls *ap. */
ovl_err ovl_active_destroy(ovl_active *ap) {
  if (ap == NULL || *ap == NULL) return OVL_OK;
  ovl_active a = *ap;
  comm_free(&a->wake_comm);
  comm_free(&a->active_comm);
  comm_free(&a->node_comm);
  ovl_free(&a->wake);
  comm_free(&a->comm);
  ovl_free(ap);
  return OVL_OK;
}

int ovl_active_is_active(ovl_active a) { return a ? a->active : 0; }
MPI_Comm ovl_active_comm(ovl_active a) { return a ? a->active_comm : MPI_COMM_NULL; }
MPI_Comm ovl_active_node_comm(ovl_active a) { return a ? a->node_comm : MPI_COMM_NULL; }
int ovl_active_nodes(ovl_active a) { return a ? a->nnodes : 0; }

/* Sleep us microseconds, resuming after signals. */
static void nap(int us) {
  struct timespec req = {us / 1000000, (long)(us % 1000000) * 1000L}, rem;
  while (nanosleep(&req, &rem) != 0 && errno == EINTR) req = rem;
}

/* Active side of the release: agree on fn's result among the active ranks
 * (all awake, so nobody waits for a sleeper), then each node leader sends the
 * agreed code to the sleepers of its node. The sends are small (eager), so
 * they complete without the sleepers' progress. */
static ovl_err release_sleepers(ovl_active a, ovl_err local, ovl_err *worst) {
  *worst = ovl_err_agree(a->active_comm, local);
  int code = (int)*worst, n = a->wake ? a->local_size - a->k : 0;
  for (int i = 0; i < n; i++) OVL_MPI(MPI_Isend(&code, 1, MPI_INT, a->k + i, 0, a->wake_comm, &a->wake[i]));
  if (a->wake_mode == OVL_WAKE_IBARRIER) { /* the paper's release: every rank meets in MPI_Ibarrier */
    MPI_Request bar = MPI_REQUEST_NULL;
    OVL_MPI(MPI_Ibarrier(a->comm, &bar));
    OVL_MPI(MPI_Wait(&bar, MPI_STATUS_IGNORE));
  }
  /* one MPI_Wait each: gcc 12 misreads MPICH's MPI_STATUSES_IGNORE in MPI_Waitall as an overflow */
  for (int i = 0; i < n; i++) OVL_MPI(MPI_Wait(&a->wake[i], MPI_STATUS_IGNORE));
  return OVL_OK;
}

/* Sleeper side: post the receive of the release message from the node
 * leader and poll it with MPI_Test, sleeping between polls, counting the
 * sleeps. */
static ovl_err sleep_until_released(ovl_active a, ovl_err *worst, int64_t *polls) {
  MPI_Request req = MPI_REQUEST_NULL, bar = MPI_REQUEST_NULL;
  int code = (int)OVL_OK, done = 0;
  OVL_MPI(MPI_Irecv(&code, 1, MPI_INT, 0, 0, a->wake_comm, &req));
  if (a->wake_mode == OVL_WAKE_IBARRIER) OVL_MPI(MPI_Ibarrier(a->comm, &bar));
  MPI_Request *poll = a->wake_mode == OVL_WAKE_IBARRIER ? &bar : &req;
  for (;;) {
    OVL_MPI(MPI_Test(poll, &done, MPI_STATUS_IGNORE));
    if (done) break;
    nap(a->sleep_us);
    (*polls)++;
  }
  /* with the barrier, the leader's message was sent before it: already here */
  OVL_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
  *worst = (ovl_err)code;
  return OVL_OK;
}

ovl_err ovl_active_set_wake(ovl_active a, ovl_active_wake mode) {
  OVL_CHECK(a != NULL, OVL_ERR_ARG, "ovl_active_set_wake: active handle is NULL");
  OVL_CHECK(mode == OVL_WAKE_IBARRIER || mode == OVL_WAKE_P2P, OVL_ERR_ARG, "unknown wake-up mode %d", (int)mode);
  a->wake_mode = mode;
  return OVL_OK;
}

/* COLLECTIVE over comm. Active ranks run fn, agree on its result among
 * themselves and wake the sleepers of their node; sleepers sleep until woken.
 * The paper's release is an MPI_Ibarrier over all ranks; a nonblocking
 * collective, though, only completes when the sleepers progress it, so the
 * active ranks would wait for sleepers to wake (up to one sleep interval per
 * round of the collective's algorithm); point-to-point wake-ups do not. On
 * failure every rank (all awake by then) calls ovl_err_agree over comm, so
 * the sleepers return the same code and message as the active ranks. With no
 * sleepers, fn's result is agreed directly. */
ovl_err ovl_active_run(ovl_active a, ovl_err (*fn)(void *ctx), void *ctx, int64_t *slept_polls) {
  int64_t polls = 0;
  if (slept_polls) *slept_polls = 0;
  OVL_CHECK(a != NULL, OVL_ERR_ARG, "ovl_active_run: active handle is NULL");
  ovl_err rc = OVL_OK, worst = OVL_OK;
  if (a->active) rc = fn ? fn(ctx) : ovl_err_set(OVL_ERR_ARG, "ovl_active_run: fn is NULL");
  if (a->all_active) return ovl_err_agree(a->comm, rc);
  if (a->active) OVL_TRY(release_sleepers(a, rc, &worst));
  else OVL_TRY(sleep_until_released(a, &worst, &polls));
  if (slept_polls) *slept_polls = polls;
  /* the lowest failing rank of comm is active and holds the agreed message */
  return worst == OVL_OK ? OVL_OK : ovl_err_agree(a->comm, a->active ? worst : OVL_OK);
}

/* ---- node-shared memory -------------------------------------------------- */

/* Local verdict on the arguments plus one reduction over the node that
 * checks that every rank asked for the same size. */
static ovl_err shm_validate(MPI_Comm node, size_t bytes, const ovl_shm *out) {
  uint64_t mm[2] = {(uint64_t)bytes, ~(uint64_t)bytes}; /* max of bytes, ~min of bytes */
  OVL_MPI(MPI_Allreduce(MPI_IN_PLACE, mm, 2, MPI_UINT64_T, MPI_MAX, node));
  OVL_CHECK(out != NULL, OVL_ERR_ARG, "ovl_shm_create: out is NULL");
  OVL_CHECK(mm[0] == ~mm[1], OVL_ERR_ARG,
            "ovl_shm_create: ranks of a node asked for different sizes (%llu to %llu bytes)",
            (unsigned long long)~mm[1], (unsigned long long)mm[0]);
  OVL_CHECK(bytes <= (size_t)PTRDIFF_MAX, OVL_ERR_ARG, "ovl_shm_create: %zu bytes do not fit an MPI_Aint", bytes);
  return OVL_OK;
}

/* Allocate the window (the whole segment on node-local rank 0, nothing
 * elsewhere), map rank 0's segment and open the lock_all epoch. Errors
 * return (the duplicate communicator and the window use MPI_ERRORS_RETURN)
 * so the caller can agree on them. */
static ovl_err shm_map(ovl_shm s, int local_rank) {
  void *mybase = NULL;
  MPI_Aint mine = local_rank == 0 ? (MPI_Aint)s->bytes : 0, size = 0;
  int disp = 0;
  int mrc = MPI_Win_allocate_shared(mine, 1, MPI_INFO_NULL, s->comm, &mybase, &s->win);
  if (mrc != MPI_SUCCESS) {
    char why[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    s->win = MPI_WIN_NULL;
    MPI_Error_string(mrc, why, &len);
    return ovl_err_set(OVL_ERR_NOMEM, "MPI_Win_allocate_shared of %zu bytes of node-shared memory failed: %s", s->bytes,
                       why);
  }
  OVL_MPI(MPI_Win_set_errhandler(s->win, MPI_ERRORS_RETURN));
  /* Always query rank 0: its segment is the node buffer (SMPI answers with
   * rank 0's base whatever the rank asked, so this is portable to it). */
  OVL_MPI(MPI_Win_shared_query(s->win, 0, &size, &disp, &s->base));
  OVL_CHECK((size_t)size >= s->bytes, OVL_ERR_INTERNAL, "shared window of %zu bytes reports %ld bytes", s->bytes,
            (long)size);
  if (s->bytes == 0) s->base = NULL;
  OVL_MPI(MPI_Win_lock_all(MPI_MODE_NOCHECK, s->win));
  return OVL_OK;
}

/* COLLECTIVE over the node communicator of a. Validates and agrees on the
 * arguments over the node, then maps one shared segment per node. An
 * allocation failure is agreed over the node too; the half-built window is
 * freed when every rank of the node holds it (otherwise it cannot be freed
 * collectively and is left to MPI_Finalize). */
ovl_err ovl_shm_create(ovl_active a, size_t bytes, ovl_shm *out) {
  if (out != NULL) *out = NULL;
  OVL_CHECK(a != NULL, OVL_ERR_ARG, "ovl_shm_create: active handle is NULL");
  ovl_err rc = shm_validate(a->node_comm, bytes, out);
  ovl_shm s = NULL;
  if (rc == OVL_OK) rc = ovl_calloc(sizeof *s, &s);
  if ((rc = ovl_err_agree(a->node_comm, rc)) != OVL_OK) {
    ovl_free(&s);
    return rc;
  }
  s->comm = MPI_COMM_NULL;
  s->win = MPI_WIN_NULL;
  s->bytes = bytes;
  int mrc = MPI_Comm_dup(a->node_comm, &s->comm);
  if (mrc == MPI_SUCCESS) mrc = MPI_Comm_set_errhandler(s->comm, MPI_ERRORS_RETURN);
  if (mrc != MPI_SUCCESS) { /* a node_comm error is fatal by default: no agreement possible */
    comm_free(&s->comm);
    ovl_free(&s);
    return ovl_err_mpi(mrc, "MPI_Comm_dup (node-shared memory)");
  }
  rc = shm_map(s, a->local_rank);
  if ((rc = ovl_err_agree(s->comm, rc)) != OVL_OK) {
    int have = s->win != MPI_WIN_NULL, all = 0;
    if (MPI_Allreduce(&have, &all, 1, MPI_INT, MPI_MIN, s->comm) == MPI_SUCCESS && all) {
      MPI_Win_unlock_all(s->win); /* may fail when lock_all did: harmless */
      MPI_Win_free(&s->win);
    }
    comm_free(&s->comm);
    ovl_free(&s);
    return rc;
  }
  *out = s;
  return OVL_OK;
}

/* COLLECTIVE over the node communicator. Closes the epoch and frees the
 * window. NULL-safe; nulls *sp. */
ovl_err ovl_shm_destroy(ovl_shm *sp) {
  if (sp == NULL || *sp == NULL) return OVL_OK;
  ovl_shm s = *sp;
  ovl_err rc = OVL_OK;
  int mrc = MPI_SUCCESS;
  if (s->win != MPI_WIN_NULL) {
    if ((mrc = MPI_Win_unlock_all(s->win)) != MPI_SUCCESS) rc = ovl_err_mpi(mrc, "MPI_Win_unlock_all");
    if ((mrc = MPI_Win_free(&s->win)) != MPI_SUCCESS && rc == OVL_OK) rc = ovl_err_mpi(mrc, "MPI_Win_free");
  }
  comm_free(&s->comm);
  ovl_free(sp);
  return rc;
}

void *ovl_shm_ptr(ovl_shm s) { return s ? s->base : NULL; }
size_t ovl_shm_bytes(ovl_shm s) { return s ? s->bytes : 0; }

/* COLLECTIVE over the node communicator. In the unified memory model of
 * shared windows, MPI_Win_sync orders this rank's loads and stores with
 * respect to the barrier: stores made before the fence on any rank of the
 * node are visible to loads made after it on every rank. */
ovl_err ovl_shm_fence(ovl_shm s) {
  OVL_CHECK(s != NULL, OVL_ERR_ARG, "ovl_shm_fence: shm handle is NULL");
  OVL_MPI(MPI_Win_sync(s->win));
  OVL_MPI(MPI_Barrier(s->comm));
  OVL_MPI(MPI_Win_sync(s->win));
  return OVL_OK;
}
