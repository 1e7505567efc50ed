/* libovl_yield.so: blocking MPI calls that give the processor away while
 * they wait, for MPI libraries that busy-poll when ranks outnumber cores.
 *
 * MPICH 4.0 (ch4 device) waits in every blocking call by polling its shared
 * memory and UCX queues without a system call: no setting of that version
 * makes it yield (MPIR_CVAR_POLLS_BEFORE_YIELD belongs to the ch3 device). A
 * rank that waits for a message from a rank that is not running keeps its
 * core until the scheduler's next tick (4 ms at HZ=250), so with more ranks
 * than cores every message costs a tick (docs/guides/mpi.md). Preloaded
 * (LD_PRELOAD, set by scripts/mpirun.sh and the tests' launcher settings),
 * this library yields in two places:
 *  - the blocking point-to-point, completion and collective calls, replaced
 *    through the MPI profiling interface: each starts the nonblocking form
 *    and polls it with MPI_Test, calling sched_yield() between polls, as Open
 *    MPI does with mpi_yield_when_idle; after 64 polls that found it
 *    incomplete, each further poll sleeps 5 us instead (nanosleep: about
 *    55 us with Linux's default timer slack), so that a rank whose partner
 *    is not running leaves the core to the ranks that are, even when
 *    sched_yield finds nothing better to run (OVL_YIELD_SPINS and
 *    OVL_YIELD_SLEEP_US change the count and the sleep, at most 1000 us;
 *    0 us never sleeps);
 *  - UCX's ucp_worker_progress, which MPICH's ch4:ucx device calls in each
 *    turn of its own waiting loops (communicator creation, MPI_Init and
 *    MPI_Finalize, and calls not replaced here): a turn that found nothing
 *    to do is an idle turn as above (inside the replaced calls, which idle
 *    themselves, it only counts a turn that did something). Other devices
 *    never call it.
 * Results, statuses and error codes are those of the MPI library. Only the C
 * bindings are replaced.
 *
 * It acts only when the ranks on this node outnumber the cores this process
 * may run on: Hydra's MPI_LOCALNRANKS at load time, else MPI_COMM_TYPE_SHARED
 * in MPI_Init, against sched_getaffinity. OVL_YIELD=1 or 0 forces it on or
 * off. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int g_on = -1;            /* yield while waiting: 1, 0, or -1 until decided */
static unsigned g_spins = 64;    /* idle turns of one wait that yield before it sleeps (OVL_YIELD_SPINS) */
static long g_sleep_ns = 5000;   /* then sleep this long per idle turn, 0: never (OVL_YIELD_SLEEP_US) */
static __thread unsigned g_idle; /* idle turns of the current wait */
static __thread int g_in_wait;   /* inside one of the waits below: they yield, the UCX hook not */

/* One idle turn of a wait: yield the processor, or after g_spins turns sleep
 * (bounded: at most 1 ms per turn). */
static void idle_turn(void) {
  if (g_sleep_ns > 0 && ++g_idle > g_spins) {
    struct timespec ts = {0, g_sleep_ns};
    nanosleep(&ts, NULL);
  } else {
    sched_yield();
  }
}

static int cores(void) {
  cpu_set_t set;
  int n = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 0;
  return n > 0 ? n : (int)sysconf(_SC_NPROCESSORS_ONLN);
}

/* At load time: from OVL_YIELD, or from Hydra's count of ranks on this node. */
__attribute__((constructor)) static void decide_early(void) {
  const char *e = getenv("OVL_YIELD"), *local = getenv("MPI_LOCALNRANKS");
  const char *spins = getenv("OVL_YIELD_SPINS"), *sleep_us = getenv("OVL_YIELD_SLEEP_US");
  if (e && *e) g_on = strcmp(e, "0") != 0;
  else if (local && atoi(local) > 0) g_on = atoi(local) > cores();
  if (spins && *spins) g_spins = (unsigned)strtoul(spins, NULL, 10);
  if (sleep_us && *sleep_us) {
    long us = strtol(sleep_us, NULL, 10);
    g_sleep_ns = us <= 0 ? 0 : us > 1000 ? 1000000L : us * 1000L; /* at most 1 ms */
  }
}

/* After MPI_Init, when not decided yet: the ranks sharing this node. */
static void decide(void) {
  if (g_on >= 0) return;
  MPI_Comm node = MPI_COMM_NULL;
  int local = 1;
  if (PMPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) == MPI_SUCCESS) {
    PMPI_Comm_size(node, &local);
    PMPI_Comm_free(&node);
  }
  g_on = local > cores();
}

/* UCX's progress call (ucp_worker_h is a pointer): the real one, then a yield
 * when it found nothing to do. */
unsigned ucp_worker_progress(void *worker);
unsigned ucp_worker_progress(void *worker) {
  static unsigned (*real)(void *);
  if (!real) *(void **)&real = dlsym(RTLD_NEXT, "ucp_worker_progress");
  unsigned n = real ? real(worker) : 0;
  if (n > 0) g_idle = 0;
  else if (g_on > 0 && !g_in_wait) idle_turn();
  return n;
}

int MPI_Init(int *argc, char ***argv) {
  int rc = PMPI_Init(argc, argv);
  if (rc == MPI_SUCCESS) decide();
  return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided) {
  int rc = PMPI_Init_thread(argc, argv, required, provided);
  if (rc == MPI_SUCCESS) decide();
  return rc;
}

/* Poll with TEST (an MPI call setting rc) until it fails or DONE holds, one
 * idle turn between polls; the UCX hook leaves the idling to this loop. */
#define POLL(TEST, DONE)                                                                                               \
  do {                                                                                                                 \
    int outer_ = g_in_wait;                                                                                            \
    g_idle = 0;                                                                                                        \
    g_in_wait = 1;                                                                                                     \
    while ((rc = (TEST)) == MPI_SUCCESS && !(DONE)) idle_turn();                                                       \
    g_in_wait = outer_;                                                                                                \
  } while (0)

/* Poll REQ until it completes, yielding the processor between polls. */
static int yield_wait(MPI_Request *req, MPI_Status *status) {
  int done = 0, rc;
  POLL(PMPI_Test(req, &done, status), done);
  return rc;
}

/* Without yielding, the blocking call DIRECT; else start the nonblocking call
 * CALL (its request &r) and wait for it. */
#define YIELD_ON(CALL, DIRECT)                                                                                         \
  do {                                                                                                                 \
    if (g_on <= 0) return (DIRECT);                                                                                    \
    MPI_Request r;                                                                                                     \
    int rc_ = (CALL);                                                                                                  \
    return rc_ == MPI_SUCCESS ? yield_wait(&r, MPI_STATUS_IGNORE) : rc_;                                               \
  } while (0)

/* ---- completion -------------------------------------------------------------- */
int MPI_Wait(MPI_Request *request, MPI_Status *status) {
  return g_on > 0 ? yield_wait(request, status) : PMPI_Wait(request, status);
}

int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
  if (g_on <= 0) return PMPI_Waitall(count, requests, statuses);
  int done = 0, rc;
  POLL(PMPI_Testall(count, requests, &done, statuses), done);
  return rc;
}

int MPI_Waitany(int count, MPI_Request requests[], int *index, MPI_Status *status) {
  if (g_on <= 0) return PMPI_Waitany(count, requests, index, status);
  int done = 0, rc;
  POLL(PMPI_Testany(count, requests, index, &done, status), done);
  return rc;
}

int MPI_Waitsome(int incount, MPI_Request requests[], int *outcount, int indices[], MPI_Status statuses[]) {
  if (g_on <= 0) return PMPI_Waitsome(incount, requests, outcount, indices, statuses);
  int rc;
  POLL(PMPI_Testsome(incount, requests, outcount, indices, statuses), *outcount != 0);
  return rc;
}

/* ---- point to point ---------------------------------------------------------- */
int MPI_Send(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  YIELD_ON(PMPI_Isend(buf, count, type, dest, tag, comm, &r), PMPI_Send(buf, count, type, dest, tag, comm));
}

int MPI_Ssend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  YIELD_ON(PMPI_Issend(buf, count, type, dest, tag, comm, &r), PMPI_Ssend(buf, count, type, dest, tag, comm));
}

int MPI_Recv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Status *status) {
  if (g_on <= 0) return PMPI_Recv(buf, count, type, source, tag, comm, status);
  MPI_Request r;
  int rc = PMPI_Irecv(buf, count, type, source, tag, comm, &r);
  return rc == MPI_SUCCESS ? yield_wait(&r, status) : rc;
}

int MPI_Sendrecv(const void *sbuf, int scount, MPI_Datatype stype, int dest, int stag, void *rbuf, int rcount,
                 MPI_Datatype rtype, int source, int rtag, MPI_Comm comm, MPI_Status *status) {
  if (g_on <= 0) return PMPI_Sendrecv(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag, comm, status);
  MPI_Request r[2];
  int rc = PMPI_Irecv(rbuf, rcount, rtype, source, rtag, comm, &r[0]);
  if (rc != MPI_SUCCESS) return rc;
  rc = PMPI_Isend(sbuf, scount, stype, dest, stag, comm, &r[1]);
  if (rc != MPI_SUCCESS) {
    PMPI_Cancel(&r[0]);
    PMPI_Wait(&r[0], MPI_STATUS_IGNORE);
    return rc;
  }
  MPI_Status st[2];
  rc = MPI_Waitall(2, r, st);
  if (status != MPI_STATUS_IGNORE) *status = st[0];
  return rc;
}

int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status) {
  if (g_on <= 0) return PMPI_Probe(source, tag, comm, status);
  int flag = 0, rc;
  POLL(PMPI_Iprobe(source, tag, comm, &flag, status), flag);
  return rc;
}

/* ---- collectives ------------------------------------------------------------- */
int MPI_Barrier(MPI_Comm comm) { YIELD_ON(PMPI_Ibarrier(comm, &r), PMPI_Barrier(comm)); }

int MPI_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm) {
  YIELD_ON(PMPI_Ibcast(buf, count, type, root, comm, &r), PMPI_Bcast(buf, count, type, root, comm));
}

int MPI_Reduce(const void *s, void *d, int count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm) {
  YIELD_ON(PMPI_Ireduce(s, d, count, type, op, root, comm, &r), PMPI_Reduce(s, d, count, type, op, root, comm));
}

int MPI_Allreduce(const void *s, void *d, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  YIELD_ON(PMPI_Iallreduce(s, d, count, type, op, comm, &r), PMPI_Allreduce(s, d, count, type, op, comm));
}

int MPI_Gather(const void *s, int sc, MPI_Datatype st, void *d, int rc, MPI_Datatype rt, int root, MPI_Comm comm) {
  YIELD_ON(PMPI_Igather(s, sc, st, d, rc, rt, root, comm, &r), PMPI_Gather(s, sc, st, d, rc, rt, root, comm));
}

int MPI_Gatherv(const void *s, int sc, MPI_Datatype st, void *d, const int rcs[], const int displs[], MPI_Datatype rt,
                int root, MPI_Comm comm) {
  YIELD_ON(PMPI_Igatherv(s, sc, st, d, rcs, displs, rt, root, comm, &r),
           PMPI_Gatherv(s, sc, st, d, rcs, displs, rt, root, comm));
}

int MPI_Scatter(const void *s, int sc, MPI_Datatype st, void *d, int rc, MPI_Datatype rt, int root, MPI_Comm comm) {
  YIELD_ON(PMPI_Iscatter(s, sc, st, d, rc, rt, root, comm, &r), PMPI_Scatter(s, sc, st, d, rc, rt, root, comm));
}

int MPI_Scatterv(const void *s, const int scs[], const int displs[], MPI_Datatype st, void *d, int rc, MPI_Datatype rt,
                 int root, MPI_Comm comm) {
  YIELD_ON(PMPI_Iscatterv(s, scs, displs, st, d, rc, rt, root, comm, &r),
           PMPI_Scatterv(s, scs, displs, st, d, rc, rt, root, comm));
}

int MPI_Allgather(const void *s, int sc, MPI_Datatype st, void *d, int rc, MPI_Datatype rt, MPI_Comm comm) {
  YIELD_ON(PMPI_Iallgather(s, sc, st, d, rc, rt, comm, &r), PMPI_Allgather(s, sc, st, d, rc, rt, comm));
}

int MPI_Allgatherv(const void *s, int sc, MPI_Datatype st, void *d, const int rcs[], const int displs[],
                   MPI_Datatype rt, MPI_Comm comm) {
  YIELD_ON(PMPI_Iallgatherv(s, sc, st, d, rcs, displs, rt, comm, &r),
           PMPI_Allgatherv(s, sc, st, d, rcs, displs, rt, comm));
}

int MPI_Alltoall(const void *s, int sc, MPI_Datatype st, void *d, int rc, MPI_Datatype rt, MPI_Comm comm) {
  YIELD_ON(PMPI_Ialltoall(s, sc, st, d, rc, rt, comm, &r), PMPI_Alltoall(s, sc, st, d, rc, rt, comm));
}

int MPI_Alltoallv(const void *s, const int scs[], const int sd[], MPI_Datatype st, void *d, const int rcs[],
                  const int rd[], MPI_Datatype rt, MPI_Comm comm) {
  YIELD_ON(PMPI_Ialltoallv(s, scs, sd, st, d, rcs, rd, rt, comm, &r),
           PMPI_Alltoallv(s, scs, sd, st, d, rcs, rd, rt, comm));
}

int MPI_Reduce_scatter_block(const void *s, void *d, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  YIELD_ON(PMPI_Ireduce_scatter_block(s, d, count, type, op, comm, &r),
           PMPI_Reduce_scatter_block(s, d, count, type, op, comm));
}

int MPI_Scan(const void *s, void *d, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  YIELD_ON(PMPI_Iscan(s, d, count, type, op, comm, &r), PMPI_Scan(s, d, count, type, op, comm));
}

int MPI_Exscan(const void *s, void *d, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  YIELD_ON(PMPI_Iexscan(s, d, count, type, op, comm, &r), PMPI_Exscan(s, d, count, type, op, comm));
}
