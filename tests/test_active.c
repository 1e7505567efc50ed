/* active subsets and node-shared memory: active flags, active_comm size and
 * order (node, then local rank), sleepers polling until released, fn's result
 * agreed on every rank, bad input, and shared windows written slice by slice
 * with no data moved by MPI. Expectations are computed from this rank's own
 * MPI_Comm_split_type, so the test also holds on several nodes. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ovl/ovl.h"
#include "ovltest.h"

/* Communicator leak check. MPICH has 2046 context ids: holding all but
 * LEAK_SPARE of them makes a create/destroy loop that leaks one communicator
 * per cycle fail within LEAK_SPARE cycles. Done only where cheap: MPICH, no
 * more ranks on the node than cores (oversubscribed MPICH busy-polls, and 2000
 * duplications then take minutes), no AddressSanitizer. Elsewhere the loops
 * only exercise create/destroy. */
#define LEAK_SPARE    40
#define LEAK_MAX_HELD 2100
static MPI_Comm g_held[LEAK_MAX_HELD];
static int g_nheld = 0, g_leak_checked = 0;

/* 1 when some node runs more ranks than it has cores. COLLECTIVE. */
static int oversubscribed(void) {
  MPI_Comm node;
  int rank = 0, L = 0, over = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
  MPI_Comm_size(node, &L);
  MPI_Comm_free(&node);
  over = L > sysconf(_SC_NPROCESSORS_ONLN);
  MPI_Allreduce(MPI_IN_PLACE, &over, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return over;
}

/* Hold all context ids but LEAK_SPARE (when the check applies). Returns the
 * number of create/destroy cycles to run: 2 * LEAK_SPARE, or 4 when
 * oversubscribed. COLLECTIVE. */
static int leak_hold(void) {
  if (oversubscribed()) return 4;
#if defined(MPICH) && !defined(__SANITIZE_ADDRESS__)
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  while (g_nheld < LEAK_MAX_HELD && MPI_Comm_dup(MPI_COMM_WORLD, &g_held[g_nheld]) == MPI_SUCCESS) g_nheld++;
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  for (int i = 0; i < LEAK_SPARE && g_nheld > 0; i++) MPI_Comm_free(&g_held[--g_nheld]);
  g_leak_checked = g_nheld > 0;
#endif
  return 2 * LEAK_SPARE;
}

static void leak_release(void) {
  while (g_nheld > 0) MPI_Comm_free(&g_held[--g_nheld]);
}

static int csize(MPI_Comm c) {
  int s = -1;
  if (c != MPI_COMM_NULL) MPI_Comm_size(c, &s);
  return s;
}
static int crank(MPI_Comm c) {
  int r = -1;
  if (c != MPI_COMM_NULL) MPI_Comm_rank(c, &r);
  return r;
}

static void nap_ms(double ms) {
  struct timespec t = {(time_t)(ms / 1000), (long)((ms - 1000.0 * (time_t)(ms / 1000)) * 1e6)};
  nanosleep(&t, NULL);
}

static double cpu_seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* What ovl_active_create(comm, k) should produce on this rank. */
typedef struct expect {
  int local_rank, local_size, active, pos, nactive, nodes;
} expect;

static expect expected_layout(MPI_Comm comm, int k) {
  expect e = {0, 0, 0, 0, 0, 0};
  int rank = 0, P = 0, lead = 0;
  MPI_Comm node;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &P);
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
  MPI_Comm_rank(node, &e.local_rank);
  MPI_Comm_size(node, &e.local_size);
  lead = rank;
  MPI_Bcast(&lead, 1, MPI_INT, 0, node);
  MPI_Comm_free(&node);
  int mine[2] = {lead, e.local_rank};
  int *all = malloc(sizeof(int) * 2 * (size_t)P);
  MPI_Allgather(mine, 2, MPI_INT, all, 2, MPI_INT, comm);
  e.active = e.local_rank < k;
  for (int j = 0; j < P; j++) {
    int lj = all[2 * j], rj = all[2 * j + 1];
    if (rj == 0) e.nodes++;
    if (rj >= k) continue;
    e.nactive++;
    if (lj < lead || (lj == lead && rj < e.local_rank)) e.pos++;
  }
  if (!e.active) e.pos = -1; /* else: the count of active ranks before this one */
  free(all);
  return e;
}

typedef struct work_ctx {
  MPI_Comm comm; /* active_comm */
  int calls;     /* times fn ran on this rank */
  int seen;      /* active ranks counted by an allreduce inside fn */
  int fail_rank; /* rank of active_comm that fails (-1: none) */
  double ms;     /* simulated work */
} work_ctx;

static ovl_err work(void *p) {
  work_ctx *c = p;
  int one = 1;
  c->calls++;
  MPI_Allreduce(&one, &c->seen, 1, MPI_INT, MPI_SUM, c->comm); /* active_comm works while others sleep */
  if (c->ms > 0) nap_ms(c->ms);
  if (crank(c->comm) == c->fail_rank) return ovl_err_set(OVL_ERR_NUMERIC, "boom on active rank %d", c->fail_rank);
  return OVL_OK;
}

static ovl_active_wake g_wake = OVL_WAKE_IBARRIER;

static void test_layout(MPI_Comm comm, int k, const char *what) {
  expect e = expected_layout(comm, k);
  ovl_active a = NULL;
  T_OK(ovl_active_create(comm, k, 1000, &a));
  if (a == NULL) return;
  T_OK(ovl_active_set_wake(a, g_wake));
  T_CHECK(ovl_active_is_active(a) == e.active, "%s k=%d: active flag %d, want %d", what, k, ovl_active_is_active(a),
          e.active);
  T_CHECK(ovl_active_nodes(a) == e.nodes, "%s k=%d: %d nodes, want %d", what, k, ovl_active_nodes(a), e.nodes);
  MPI_Comm node = ovl_active_node_comm(a), act = ovl_active_comm(a);
  T_CHECK(csize(node) == e.local_size && crank(node) == e.local_rank, "%s k=%d: node comm %d/%d, want %d/%d", what, k,
          crank(node), csize(node), e.local_rank, e.local_size);
  if (e.active) {
    T_CHECK(csize(act) == e.nactive, "%s k=%d: active comm size %d, want %d", what, k, csize(act), e.nactive);
    T_CHECK(crank(act) == e.pos, "%s k=%d: active comm rank %d, want %d", what, k, crank(act), e.pos);
  } else {
    T_CHECK(act == MPI_COMM_NULL, "%s k=%d: sleeper has an active comm", what, k);
  }

  /* fn runs on active ranks only; sleepers poll while it works for 30 ms */
  work_ctx c = {act, 0, 0, -1, 30.0};
  int64_t polls = -1;
  T_OK(ovl_active_run(a, work, &c, &polls));
  int calls = 0;
  MPI_Allreduce(&c.calls, &calls, 1, MPI_INT, MPI_SUM, comm);
  T_CHECK(calls == e.nactive, "%s k=%d: fn ran %d times, want %d", what, k, calls, e.nactive);
  if (e.active) {
    T_CHECK(c.calls == 1 && c.seen == e.nactive, "%s k=%d: fn calls %d, saw %d", what, k, c.calls, c.seen);
    T_CHECK(polls == 0, "%s k=%d: active rank polled %lld times", what, k, (long long)polls);
  } else {
    T_CHECK(c.calls == 0, "%s k=%d: fn ran on a sleeper", what, k);
    T_CHECK(polls > 0, "%s k=%d: sleeper polled %lld times during 30 ms of work", what, k, (long long)polls);
  }

  /* fn fails on the last active rank: same code and message everywhere */
  c.calls = 0;
  c.ms = 0;
  c.fail_rank = e.nactive - 1;
  char want[64];
  snprintf(want, sizeof want, "boom on active rank %d", e.nactive - 1);
  T_ERR(ovl_active_run(a, work, &c, NULL), OVL_ERR_NUMERIC);
  T_CHECK(strcmp(ovl_errmsg(), want) == 0, "%s k=%d: message '%s', want '%s'", what, k, ovl_errmsg(), want);

  /* a NULL fn is an argument error on every rank */
  T_ERR(ovl_active_run(a, NULL, NULL, &polls), OVL_ERR_ARG);

  T_OK(ovl_active_destroy(&a));
  T_CHECK(a == NULL, "destroy nulls");
  T_OK(ovl_active_destroy(&a));
  T_OK(ovl_active_destroy(NULL));
}

static void test_bad_input(int P, int rank) {
  ovl_active a = (ovl_active)&a; /* must be overwritten with NULL */
  T_ERR(ovl_active_create(MPI_COMM_WORLD, 0, 1000, &a), OVL_ERR_ARG);
  T_CHECK(a == NULL, "no handle on error");
  T_ERR(ovl_active_create(MPI_COMM_WORLD, -3, 1000, &a), OVL_ERR_ARG);
  T_ERR(ovl_active_create(MPI_COMM_WORLD, 1, -1, &a), OVL_ERR_ARG);
  T_CHECK(strstr(ovl_errmsg(), "sleep") != NULL, "message names the sleep interval: %s", ovl_errmsg());
  T_ERR(ovl_active_create(MPI_COMM_WORLD, 1 << 30, 1000, &a), OVL_ERR_ARG);
  T_ERR(ovl_active_create(MPI_COMM_WORLD, 1, 2000000000, &a), OVL_ERR_ARG);
  T_ERR(ovl_active_create(MPI_COMM_NULL, 1, 1000, &a), OVL_ERR_ARG);
  /* bad on the last rank only: every rank fails with its message */
  T_ERR(ovl_active_create(MPI_COMM_WORLD, rank == P - 1 ? 0 : 1, 1000, &a), OVL_ERR_ARG);
  T_CHECK(strstr(ovl_errmsg(), "got 0") != NULL, "agreed message: %s", ovl_errmsg());
  T_CHECK(a == NULL, "no handle on agreed error");
  T_ERR(ovl_active_run(NULL, work, NULL, NULL), OVL_ERR_ARG);
  T_CHECK(ovl_active_is_active(NULL) == 0 && ovl_active_comm(NULL) == MPI_COMM_NULL &&
              ovl_active_node_comm(NULL) == MPI_COMM_NULL && ovl_active_nodes(NULL) == 0,
          "NULL accessors");

  /* default sleep interval (0: 10 ms) */
  T_OK(ovl_active_create(MPI_COMM_WORLD, 1, 0, &a));
  work_ctx c = {ovl_active_comm(a), 0, 0, -1, 0};
  T_OK(ovl_active_run(a, work, &c, NULL));
  T_OK(ovl_active_destroy(&a));

  /* create/destroy cycles making 3 communicators each */
  int fails = 0, nc = leak_hold(), held = g_nheld;
  for (int i = 0; i < nc; i++) {
    fails += ovl_active_create(MPI_COMM_WORLD, 1 + i % 3, 1000, &a) != OVL_OK;
    fails += ovl_active_destroy(&a) != OVL_OK;
  }
  leak_release();
  T_CHECK(fails == 0, "%d failures in %d create/destroy cycles (%d context ids held): leaked communicators?", fails, nc,
          held);
}

/* Sleepers' CPU time during 200 ms of work, against ranks blocked in
 * MPI_Barrier (which most MPI libraries busy-poll), and the time the active
 * rank spends in ovl_active_run beyond the work. Printed; the sleepers must
 * use less than a quarter of a core. */
static void test_cpu(int P, int rank) {
  ovl_active a = NULL;
  const double ms = 200;
  T_OK(ovl_active_create(MPI_COMM_WORLD, 1, 0, &a));
  if (a == NULL) return;
  int sleeper = !ovl_active_is_active(a);
  work_ctx c = {ovl_active_comm(a), 0, 0, -1, ms};
  int64_t polls = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = cpu_seconds(), w0 = MPI_Wtime();
  T_OK(ovl_active_run(a, work, &c, &polls));
  double cpu_run = sleeper ? cpu_seconds() - t0 : 0, over = sleeper ? 0 : MPI_Wtime() - w0 - 1e-3 * ms;
  MPI_Barrier(MPI_COMM_WORLD);
  t0 = cpu_seconds();
  if (!sleeper) nap_ms(ms);
  MPI_Barrier(MPI_COMM_WORLD);
  double cpu_bar = sleeper ? cpu_seconds() - t0 : 0;
  double in[3] = {cpu_run, cpu_bar, over}, mx[3];
  long long pl = (long long)polls, plmax = 0;
  MPI_Reduce(in, mx, 3, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  MPI_Reduce(&pl, &plmax, 1, MPI_LONG_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
  if (rank == 0 && P > 1)
    printf("cpu: %d ranks, k=1, %.0f ms of work: sleeper CPU %.1f ms in ovl_active_run (%lld polls of 10 ms), "
           "%.1f ms in MPI_Barrier; active rank overhead %.2f ms\n",
           P, ms, 1e3 * mx[0], plmax, 1e3 * mx[1], 1e3 * mx[2]);
  if (sleeper) T_CHECK(cpu_run < 0.25 * ms * 1e-3, "sleeper used %.1f ms CPU in %.0f ms", 1e3 * cpu_run, ms);
  T_OK(ovl_active_destroy(&a));
}

static void test_shm(int P, int rank) {
  ovl_active a = NULL;
  ovl_shm s = NULL;
  T_OK(ovl_active_create(MPI_COMM_WORLD, 1, 1000, &a));
  if (a == NULL) return;
  MPI_Comm node = ovl_active_node_comm(a);
  int L = csize(node), lr = crank(node);

  /* every rank writes its slice; after the fence the active rank reads all */
  const int64_t n = 1000;
  size_t bytes = sizeof(double) * (size_t)(n * L);
  T_OK(ovl_shm_create(a, bytes, &s));
  if (s == NULL) return;
  double *buf = ovl_shm_ptr(s);
  T_CHECK(buf != NULL && ovl_shm_bytes(s) == bytes, "shm ptr %p, %zu bytes", (void *)buf, ovl_shm_bytes(s));
  for (int64_t i = 0; i < n; i++) buf[lr * n + i] = 1e6 * lr + (double)i;
  T_OK(ovl_shm_fence(s));
  if (ovl_active_is_active(a)) {
    int64_t bad = 0;
    for (int r = 0; r < L; r++)
      for (int64_t i = 0; i < n; i++) bad += buf[r * n + i] != 1e6 * r + (double)i;
    T_CHECK(bad == 0, "active rank read %lld wrong values from the node buffer", (long long)bad);
  }
  /* the active rank updates the node's data while the others sleep; they see it after a fence */
  T_OK(ovl_shm_fence(s));
  work_ctx c = {ovl_active_comm(a), 0, 0, -1, 0};
  if (ovl_active_is_active(a))
    for (int64_t i = 0; i < n * L; i++) buf[i] *= 2;
  T_OK(ovl_active_run(a, work, &c, NULL));
  T_OK(ovl_shm_fence(s));
  int64_t bad = 0;
  for (int64_t i = 0; i < n; i++) bad += buf[lr * n + i] != 2 * (1e6 * lr + (double)i);
  T_CHECK(bad == 0, "rank read %lld wrong values of its slice after the active update", (long long)bad);
  T_OK(ovl_shm_destroy(&s));
  T_CHECK(s == NULL, "shm destroy nulls");
  T_OK(ovl_shm_destroy(&s));
  T_OK(ovl_shm_destroy(NULL));
  T_CHECK(ovl_shm_ptr(NULL) == NULL && ovl_shm_bytes(NULL) == 0, "NULL shm accessors");

  /* size 0 */
  T_OK(ovl_shm_create(a, 0, &s));
  T_CHECK(s != NULL && ovl_shm_bytes(s) == 0, "empty shm");
  T_OK(ovl_shm_fence(s));
  T_OK(ovl_shm_destroy(&s));

  /* 64 MiB, byte slices */
  const size_t big = (size_t)64 << 20, part = big / (size_t)L;
  T_OK(ovl_shm_create(a, big, &s));
  if (s != NULL) {
    unsigned char *b = ovl_shm_ptr(s);
    size_t lo = part * (size_t)lr, hi = lr == L - 1 ? big : lo + part;
    memset(b + lo, lr + 1, hi - lo);
    T_OK(ovl_shm_fence(s));
    if (lr == 0) {
      size_t wrong = 0;
      for (size_t i = 0; i < big; i++) {
        size_t owner = i / part < (size_t)L ? i / part : (size_t)L - 1;
        wrong += b[i] != (unsigned char)(owner + 1);
      }
      T_CHECK(wrong == 0, "64 MiB shm: %zu wrong bytes", wrong);
    }
    T_OK(ovl_shm_destroy(&s));
  }

  /* create/destroy cycles (a communicator and a window each) */
  int fails = 0, nc = leak_hold(), held = g_nheld;
  for (int i = 0; i < nc; i++) {
    fails += ovl_shm_create(a, (size_t)(i % 5) * 4096, &s) != OVL_OK;
    fails += ovl_shm_destroy(&s) != OVL_OK;
  }
  leak_release();
  T_CHECK(fails == 0, "%d failures in %d shm create/destroy cycles (%d context ids held): leaked communicators?", fails,
          nc, held);

  /* ranks of a node disagreeing on the size */
  if (L > 1) {
    s = (ovl_shm)&s;
    T_ERR(ovl_shm_create(a, lr == 1 ? 16 : 8, &s), OVL_ERR_ARG);
    T_CHECK(s == NULL, "no shm handle on error");
  }
  T_ERR(ovl_shm_fence(NULL), OVL_ERR_ARG);

  /* the shared window outlives the active handle */
  T_OK(ovl_shm_create(a, 64, &s));
  T_OK(ovl_active_destroy(&a));
  if (s != NULL) {
    if (lr == 0) memset(ovl_shm_ptr(s), 7, 64);
    T_OK(ovl_shm_fence(s));
    T_CHECK(((unsigned char *)ovl_shm_ptr(s))[63] == 7, "shm after active destroy");
    T_OK(ovl_shm_destroy(&s));
  }
  (void)P;
  (void)rank;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int P = 0, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);

  double t[5];
  t[0] = MPI_Wtime();
  const int ks[] = {1, 2, 3, P, P + 5};
  for (int w = 0; w < 2; w++) { /* both releases: MPI_Ibarrier (the paper's) and point to point */
    g_wake = w ? OVL_WAKE_P2P : OVL_WAKE_IBARRIER;
    for (int i = 0; i < 5; i++) test_layout(MPI_COMM_WORLD, ks[i], w ? "world/p2p" : "world/ibarrier");
  }
  /* a communicator in reverse world order: local ranks follow its order */
  MPI_Comm rev;
  MPI_Comm_split(MPI_COMM_WORLD, 0, P - 1 - rank, &rev);
  test_layout(rev, 2, "reversed");
  MPI_Comm_free(&rev);
  t[1] = MPI_Wtime();
  test_bad_input(P, rank);
  t[2] = MPI_Wtime();
  test_cpu(P, rank);
  t[3] = MPI_Wtime();
  test_shm(P, rank);
  t[4] = MPI_Wtime();
  if (rank == 0)
    printf("time: layout %.2f s, input %.2f s, cpu %.2f s, shm %.2f s; communicator leak check %s\n", t[1] - t[0],
           t[2] - t[1], t[3] - t[2], t[4] - t[3], g_leak_checked ? "on (MPICH context ids)" : "off");

  int rc = t_finish("test_active");
  MPI_Finalize();
  return rc;
}
