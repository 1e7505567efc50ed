/* coll: every nonblocking collective x back end x algorithm x root x size
 * against MPI's blocking collective as the reference; in-place forms; const
 * send buffers; guard zones after every receive buffer; several collectives
 * in flight on one communicator (per-communicator tagging); two
 * communicators posted in different orders; sub-communicators; waitany and
 * progress accounting; request leaks (ovl_req_live); point-to-point ring;
 * argument errors that must post nothing; algorithm/back-end names.
 *
 * Data are small integers depending on rank and index, so every sum is exact
 * in floating point and results are compared with ==. Values are never 0, so
 * a zero-filled or untouched buffer cannot pass by accident.
 *
 * Run time (budget: well under 60 s per rank count at 8 ranks oversubscribed
 * on 2 cores): the large size (LARGE = 100003 elements) runs for every
 * configuration, root and variant except: chain bcast with segment 1 never
 * runs it (100003 one-element rounds through the chain take minutes), chain
 * bcast with segment 7 runs it for the first root only (~5 s per root), and
 * reduce runs its "null-rbuf" variant at the large size for the first root
 * only. OVL_TEST_FULL=1 lifts the last two restrictions; OVL_TEST_VERBOSE=1
 * prints section times and slow cases on rank 0.
 *
 * A watchdog (alarm) turns a hang into a message naming the case. */
#define _POSIX_C_SOURCE 200809L
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "ovl/ovl.h"
#define OVL_CASE_NAME "test_coll"
#include "ovlcase.h"

enum { K_BCAST, K_REDUCE, K_ALLREDUCE, K_ALLGATHER, K_ALLTOALL, K_COUNT };
static unsigned g_mode; /* rotates the completion method */
static int g_full;

/* Alltoall element i of the block that rank src sends to rank dst. */
static double a2a(int src, int dst, int64_t i) { return (double)src * 65536.0 + dst * 256.0 + (double)(i % 251); }

static void fill_val(double *b, int r, int64_t n, int salt) {
  for (int64_t i = 0; i < n; i++) b[i] = val(r, i, salt);
}
static void fill_const(double *b, int64_t n, double v) {
  for (int64_t i = 0; i < n; i++) b[i] = v;
}

static void expect_buf(const char *what, const double *got, const double *want, int64_t n) {
  int64_t bad = 0, first = -1;
  for (int64_t i = 0; i < n; i++)
    if (got[i] != want[i]) {
      if (first < 0) first = i;
      bad++;
    }
  C_CHECK(bad == 0, "%s: %lld of %lld elements wrong, first [%lld] got %.17g want %.17g", what, (long long)bad,
          (long long)n, (long long)first, got[first], want[first]);
}
static void expect_fill(const char *what, const double *got, int64_t n, double v) {
  int64_t bad = 0, first = -1;
  for (int64_t i = 0; i < n; i++)
    if (got[i] != v) {
      if (first < 0) first = i;
      bad++;
    }
  C_CHECK(bad == 0, "%s: %lld of %lld elements modified, first [%lld] = %.17g (expected untouched %.17g)", what,
          (long long)bad, (long long)n, (long long)first, got[first], v);
}
static void expect_val(const char *what, const double *got, int r, int64_t n, int salt) {
  int64_t bad = 0, first = -1;
  for (int64_t i = 0; i < n; i++)
    if (got[i] != val(r, i, salt)) {
      if (first < 0) first = i;
      bad++;
    }
  C_CHECK(bad == 0, "%s: %lld of %lld elements changed, first [%lld] = %.17g want %.17g", what, (long long)bad,
          (long long)n, (long long)first, got[first], val(r, first, salt));
}
static void expect_guard(const char *what, const double *b, int64_t n) {
  int bad = 0;
  for (int k = 0; k < GUARD; k++) bad += b[n + k] != GUARDV;
  C_CHECK(bad == 0, "%s: %d of %d guard elements after [%lld] overwritten (first guard = %.17g)", what, bad, GUARD,
          (long long)n, b[n]);
}
static void expect_no_leak(void) {
  int64_t live = ovl_req_live();
  C_CHECK(live == 0, "ovl_req_live() = %lld after completion (leaked requests)", (long long)live);
}

/* Complete one request with a rotating method (wait, test loop, waitall,
 * waitany). */
static void complete(ovl_req *r) {
  unsigned mode = g_mode++ % 4;
  ovl_err rc = OVL_OK;
  if (mode == 0) {
    rc = ovl_req_wait(r);
  } else if (mode == 1) {
    int done = 0;
    while (!done && rc == OVL_OK) {
      rc = ovl_req_test(r, &done);
      if (!done) sched_yield();
    }
  } else if (mode == 2) {
    rc = ovl_req_waitall(1, r);
  } else {
    int idx = -2, was = *r != NULL;
    rc = ovl_req_waitany(1, r, &idx);
    C_CHECK(idx == (was ? 0 : -1), "waitany(1) index %d, expected %d", idx, was ? 0 : -1);
  }
  C_CHECK(rc == OVL_OK, "completion (method %u) returned %s: %s", mode, ovl_err_name(rc), ovl_errmsg());
  C_CHECK(*r == NULL, "request not NULL after completion (method %u)", mode);
}

/* ---- configurations ------------------------------------------------------- */

typedef struct ccase {
  char label[64];
  ovl_coll_cfg cfg;
  int64_t maxn;    /* largest size run with this configuration */
  int large_root0; /* the largest size only with the first root */
} ccase;

static ovl_alg *alg_field(ovl_coll_cfg *c, int k) {
  switch (k) {
  case K_BCAST: return &c->bcast;
  case K_REDUCE: return &c->reduce;
  case K_ALLREDUCE: return &c->allreduce;
  case K_ALLGATHER: return &c->allgather;
  default: return &c->alltoall;
  }
}

static ccase mk(int k, ovl_backend be, ovl_alg alg, int64_t seg, int hg, int64_t maxn) {
  ccase c;
  memset(&c, 0, sizeof c);
  c.cfg = ovl_coll_cfg_default();
  c.cfg.backend = be;
  *alg_field(&c.cfg, k) = alg;
  c.cfg.segment = seg;
  c.cfg.hier_group = hg;
  c.maxn = maxn;
  if (be == OVL_BACKEND_MPI) snprintf(c.label, sizeof c.label, "backend=mpi");
  else snprintf(c.label, sizeof c.label, "backend=own alg=%d(%s)", (int)alg, ovl_alg_name(alg));
  size_t l = strlen(c.label);
  if (alg == OVL_BCAST_CHAIN) snprintf(c.label + l, sizeof c.label - l, " segment=%lld", (long long)seg);
  if (alg == OVL_BCAST_HIER) snprintf(c.label + l, sizeof c.label - l, " hier_group=%d", hg);
  return c;
}

/* Every configuration of collective k: the MPI back end, then OWN with AUTO
 * and every algorithm of k (chain with several segments, hier with several
 * group sizes). */
static int cases_of(int k, int p, ccase *out) {
  int m = 0;
  out[m++] = mk(k, OVL_BACKEND_MPI, OVL_ALG_AUTO, 0, 0, LARGE);
  out[m++] = mk(k, OVL_BACKEND_OWN, OVL_ALG_AUTO, 0, 0, LARGE);
  switch (k) {
  case K_BCAST: {
    out[m++] = mk(k, OVL_BACKEND_OWN, OVL_BCAST_BINOMIAL, 0, 0, LARGE);
    out[m++] = mk(k, OVL_BACKEND_OWN, OVL_BCAST_SCATTER_ALLGATHER, 0, 0, LARGE);
    out[m++] = mk(k, OVL_BACKEND_OWN, OVL_BCAST_CHAIN, 0, 0, LARGE);
    out[m++] = mk(k, OVL_BACKEND_OWN, OVL_BCAST_CHAIN, 1, 0, 1000);  /* 100003 one-element segments: too slow */
    out[m++] = mk(k, OVL_BACKEND_OWN, OVL_BCAST_CHAIN, 7, 0, LARGE); /* 14287 segments: ~5 s at 8 ranks */
    out[m - 1].large_root0 = 1;
    out[m++] = mk(k, OVL_BACKEND_OWN, OVL_BCAST_CHAIN, 1000, 0, LARGE);
    int hg[5] = {0, 1, 2, 3, p};
    for (int a = 0; a < 5; a++) {
      int dup = 0;
      for (int b = 0; b < a; b++) dup |= hg[b] == hg[a];
      if (!dup) out[m++] = mk(k, OVL_BACKEND_OWN, OVL_BCAST_HIER, 0, hg[a], LARGE);
    }
    break;
  }
  case K_REDUCE:
    out[m++] = mk(k, OVL_BACKEND_OWN, OVL_REDUCE_BINOMIAL, 0, 0, LARGE);
    out[m++] = mk(k, OVL_BACKEND_OWN, OVL_REDUCE_RABENSEIFNER, 0, 0, LARGE);
    break;
  case K_ALLREDUCE:
    out[m++] = mk(k, OVL_BACKEND_OWN, OVL_ALLREDUCE_RABENSEIFNER, 0, 0, LARGE);
    out[m++] = mk(k, OVL_BACKEND_OWN, OVL_ALLREDUCE_RING, 0, 0, LARGE);
    break;
  case K_ALLGATHER:
    out[m++] = mk(k, OVL_BACKEND_OWN, OVL_ALLGATHER_RING, 0, 0, LARGE);
    out[m++] = mk(k, OVL_BACKEND_OWN, OVL_ALLGATHER_RECDBL, 0, 0, LARGE);
    break;
  default:
    out[m++] = mk(k, OVL_BACKEND_OWN, OVL_ALLTOALL_RING, 0, 0, LARGE);
    out[m++] = mk(k, OVL_BACKEND_OWN, OVL_ALLTOALL_PAIRWISE, 0, 0, LARGE);
    break;
  }
  return m;
}

static int roots_of(int p, int *roots) {
  int m = 0, cand[3] = {0, p - 1, p / 2};
  for (int a = 0; a < 3; a++) {
    int dup = 0;
    for (int b = 0; b < m; b++) dup |= roots[b] == cand[a];
    if (!dup) roots[m++] = cand[a];
  }
  return m;
}

static const int64_t SIZES[] = {0, 1, 7, 1000, LARGE};
#define NSIZES ((int)(sizeof SIZES / sizeof SIZES[0]))

/* ---- one collective against the MPI reference ----------------------------- */

/* tolerant: the configuration is outside what the header specifies; the call
 * may either refuse it with OVL_ERR_ARG (posting nothing) or run it
 * correctly. Returns 1 when it was refused. */
static int posted_ok(ovl_err rc, ovl_req req, int64_t live0, int tolerant) {
  if (tolerant && g_verbose && W_rank == 0)
    fprintf(stderr, "unspecified input %s: %s\n", rc == OVL_OK ? "accepted" : "refused", g_case);
  if (tolerant && rc == OVL_ERR_ARG) {
    C_CHECK(req == NULL, "refused with OVL_ERR_ARG but *req is not NULL");
    C_CHECK(ovl_req_live() == live0, "refused with OVL_ERR_ARG but ovl_req_live() went %lld -> %lld", (long long)live0,
            (long long)ovl_req_live());
    return 0;
  }
  C_CHECK(rc == OVL_OK, "post returned %s: %s", ovl_err_name(rc), ovl_errmsg());
  return rc == OVL_OK;
}

static void run_bcast(MPI_Comm comm, const char *cname, const ovl_coll_cfg *cfg, const char *label, int root, int64_t n,
                      int tolerant) {
  int p = csize(comm), r = crank(comm), salt = (int)(n % 13) + root;
  set_case("bcast %s root=%d n=%lld comm=%s p=%d rank=%d", label, root, (long long)n, cname, p, r);
  double *buf = tb(n), *ref = tb(n);
  if (r == root) {
    fill_val(buf, root, n, salt);
    fill_val(ref, root, n, salt);
  } else {
    fill_const(buf, n, SENT);
    fill_const(ref, n, SENT);
  }
  MPI_Bcast(ref, (int)n, MPI_DOUBLE, root, comm);
  int64_t live0 = ovl_req_live();
  ovl_req req = NULL;
  ovl_err rc = ovl_ibcast(buf, n, root, comm, cfg, &req);
  if (posted_ok(rc, req, live0, tolerant)) {
    complete(&req);
    expect_buf("buf", buf, ref, n);
    expect_guard("buf", buf, n);
    expect_no_leak();
  }
  free(buf);
  free(ref);
}

/* variant: 0 = separate rbuf everywhere (non-root rbuf must stay untouched),
 * 1 = rbuf NULL at non-roots, 2 = in place at root (sbuf == rbuf). */
static const char *const RVAR[3] = {"sep", "null-rbuf-nonroot", "in-place-root"};
static void run_reduce(MPI_Comm comm, const char *cname, const ovl_coll_cfg *cfg, const char *label, int root,
                       int64_t n, int variant, int tolerant) {
  int p = csize(comm), r = crank(comm), salt = (int)(n % 11) + 3 * root + variant;
  set_case("reduce %s root=%d n=%lld variant=%s comm=%s p=%d rank=%d", label, root, (long long)n, RVAR[variant], cname,
           p, r);
  double *sbuf = tb(n), *rbuf = tb(n), *ref = tb(n);
  fill_val(sbuf, r, n, salt);
  fill_const(rbuf, n, SENT);
  fill_const(ref, n, SENT);
  MPI_Reduce(sbuf, ref, (int)n, MPI_DOUBLE, MPI_SUM, root, comm);
  const double *s = sbuf;
  double *d = rbuf;
  if (variant == 1 && r != root) d = NULL;
  if (variant == 2) {
    if (r == root) {
      fill_val(rbuf, r, n, salt);
      s = rbuf;
    } else {
      d = NULL;
    }
  }
  int64_t live0 = ovl_req_live();
  ovl_req req = NULL;
  ovl_err rc = ovl_ireduce(s, d, n, root, comm, cfg, &req);
  if (posted_ok(rc, req, live0, tolerant)) {
    complete(&req);
    if (r == root) {
      expect_buf("rbuf at root", rbuf, ref, n);
    } else if (variant == 0) {
      expect_fill("rbuf at non-root (not significant, must stay untouched)", rbuf, n, SENT);
    }
    expect_guard("rbuf", rbuf, n);
    if (s == sbuf) {
      expect_val("sbuf (const)", sbuf, r, n, salt);
      expect_guard("sbuf", sbuf, n);
    }
    expect_no_leak();
  }
  free(sbuf);
  free(rbuf);
  free(ref);
}

static const char *const AVAR[2] = {"sep", "in-place"};
static void run_allreduce(MPI_Comm comm, const char *cname, const ovl_coll_cfg *cfg, const char *label, int64_t n,
                          int variant, int tolerant) {
  int p = csize(comm), r = crank(comm), salt = (int)(n % 7) + 5 * variant;
  set_case("allreduce %s n=%lld variant=%s comm=%s p=%d rank=%d", label, (long long)n, AVAR[variant], cname, p, r);
  double *sbuf = tb(n), *rbuf = tb(n), *ref = tb(n);
  fill_val(sbuf, r, n, salt);
  MPI_Allreduce(sbuf, ref, (int)n, MPI_DOUBLE, MPI_SUM, comm);
  if (variant == 1) fill_val(rbuf, r, n, salt);
  else fill_const(rbuf, n, SENT);
  int64_t live0 = ovl_req_live();
  ovl_req req = NULL;
  ovl_err rc = ovl_iallreduce(variant == 1 ? rbuf : sbuf, rbuf, n, comm, cfg, &req);
  if (posted_ok(rc, req, live0, tolerant)) {
    complete(&req);
    expect_buf("rbuf", rbuf, ref, n);
    expect_guard("rbuf", rbuf, n);
    if (variant == 0) {
      expect_val("sbuf (const)", sbuf, r, n, salt);
      expect_guard("sbuf", sbuf, n);
    }
    expect_no_leak();
  }
  free(sbuf);
  free(rbuf);
  free(ref);
}

static void run_allgather(MPI_Comm comm, const char *cname, const ovl_coll_cfg *cfg, const char *label, int64_t n,
                          int variant, int tolerant) {
  int p = csize(comm), r = crank(comm), salt = (int)(n % 5) + 7 * variant;
  set_case("allgather %s n=%lld variant=%s comm=%s p=%d rank=%d", label, (long long)n, AVAR[variant], cname, p, r);
  int64_t tot = (int64_t)p * n;
  double *sbuf = tb(n), *rbuf = tb(tot), *ref = tb(tot);
  fill_val(sbuf, r, n, salt);
  MPI_Allgather(sbuf, (int)n, MPI_DOUBLE, ref, (int)n, MPI_DOUBLE, comm);
  fill_const(rbuf, tot, SENT);
  const double *s = sbuf;
  if (variant == 1) {
    fill_val(rbuf + (int64_t)r * n, r, n, salt);
    s = rbuf + (int64_t)r * n;
  }
  int64_t live0 = ovl_req_live();
  ovl_req req = NULL;
  ovl_err rc = ovl_iallgather(s, n, rbuf, comm, cfg, &req);
  if (posted_ok(rc, req, live0, tolerant)) {
    complete(&req);
    expect_buf("rbuf", rbuf, ref, tot);
    expect_guard("rbuf", rbuf, tot);
    if (variant == 0) {
      expect_val("sbuf (const)", sbuf, r, n, salt);
      expect_guard("sbuf", sbuf, n);
    }
    expect_no_leak();
  }
  free(sbuf);
  free(rbuf);
  free(ref);
}

static void run_alltoall(MPI_Comm comm, const char *cname, const ovl_coll_cfg *cfg, const char *label, int64_t n,
                         int tolerant) {
  int p = csize(comm), r = crank(comm);
  set_case("alltoall %s n=%lld comm=%s p=%d rank=%d", label, (long long)n, cname, p, r);
  int64_t tot = (int64_t)p * n;
  double *sbuf = tb(tot), *rbuf = tb(tot), *ref = tb(tot), *want = tb(tot);
  for (int j = 0; j < p; j++)
    for (int64_t i = 0; i < n; i++) {
      sbuf[(int64_t)j * n + i] = a2a(r, j, i);
      want[(int64_t)j * n + i] = a2a(j, r, i);
    }
  MPI_Alltoall(sbuf, (int)n, MPI_DOUBLE, ref, (int)n, MPI_DOUBLE, comm);
  expect_buf("MPI_Alltoall reference vs formula (harness)", ref, want, tot);
  fill_const(rbuf, tot, SENT);
  int64_t live0 = ovl_req_live();
  ovl_req req = NULL;
  ovl_err rc = ovl_ialltoall(sbuf, n, rbuf, comm, cfg, &req);
  if (posted_ok(rc, req, live0, tolerant)) {
    complete(&req);
    expect_buf("rbuf", rbuf, ref, tot);
    expect_guard("rbuf", rbuf, tot);
    int64_t bad = 0;
    for (int j = 0; j < p; j++)
      for (int64_t i = 0; i < n; i++) bad += sbuf[(int64_t)j * n + i] != a2a(r, j, i);
    C_CHECK(bad == 0, "sbuf (const) modified in %lld elements", (long long)bad);
    expect_guard("sbuf", sbuf, tot);
    expect_no_leak();
  }
  free(sbuf);
  free(rbuf);
  free(ref);
  free(want);
}

/* ---- the matrix ------------------------------------------------------------ */

static void test_matrix(MPI_Comm comm, const char *cname) {
  int p = csize(comm), roots[3], nr = roots_of(p, roots);
  ccase cc[24];
  for (int k = 0; k < K_COUNT; k++) {
    int nc = cases_of(k, p, cc);
    for (int c = 0; c < nc; c++)
      for (int si = 0; si < NSIZES; si++) {
        int64_t n = SIZES[si];
        if (n > cc[c].maxn) continue;
        const ovl_coll_cfg *cfg = &cc[c].cfg;
        const char *lb = cc[c].label;
        switch (k) {
        case K_BCAST:
          for (int ri = 0; ri < nr; ri++)
            if (n < LARGE || g_full || ri == 0 || !cc[c].large_root0) run_bcast(comm, cname, cfg, lb, roots[ri], n, 0);
          break;
        case K_REDUCE:
          for (int ri = 0; ri < nr; ri++)
            for (int v = 0; v < 3; v++)
              if (n < LARGE || g_full || ri == 0 || v == 0) run_reduce(comm, cname, cfg, lb, roots[ri], n, v, 0);
          break;
        case K_ALLREDUCE:
          for (int v = 0; v < 2; v++) run_allreduce(comm, cname, cfg, lb, n, v, 0);
          break;
        case K_ALLGATHER:
          for (int v = 0; v < 2; v++) run_allgather(comm, cname, cfg, lb, n, v, 0);
          break;
        default: run_alltoall(comm, cname, cfg, lb, n, 0); break;
        }
      }
  }
}

/* A smaller matrix (sizes 7 and 1000, every algorithm, last root) on a
 * communicator that is not MPI_COMM_WORLD-shaped. */
static void test_small_matrix(MPI_Comm comm, const char *cname) {
  int p = csize(comm);
  ccase cc[24];
  static const int64_t sz[2] = {7, 1000};
  for (int k = 0; k < K_COUNT; k++) {
    int nc = cases_of(k, p, cc);
    for (int c = 0; c < nc; c++)
      for (int si = 0; si < 2; si++) {
        const ovl_coll_cfg *cfg = &cc[c].cfg;
        const char *lb = cc[c].label;
        int64_t n = sz[si];
        switch (k) {
        case K_BCAST: run_bcast(comm, cname, cfg, lb, p - 1, n, 0); break;
        case K_REDUCE: run_reduce(comm, cname, cfg, lb, p - 1, n, si, 0); break;
        case K_ALLREDUCE: run_allreduce(comm, cname, cfg, lb, n, si, 0); break;
        case K_ALLGATHER: run_allgather(comm, cname, cfg, lb, n, si, 0); break;
        default: run_alltoall(comm, cname, cfg, lb, n, 0); break;
        }
      }
  }
}

/* ---- several collectives in flight ------------------------------------------ */

#define NF 7
typedef struct flight {
  int p, r;
  double *b0, *s1, *r1, *b2, *s3, *r3, *s4, *r4, *b5, *s6, *r6;
  ovl_req req[NF];
} flight;

static const int64_t F_N[NF] = {1000, 7, 1000, 7, 100, 513, 0};

/* Post NF collectives of different kinds (two bcasts) on comm, in order. */
static void flight_post(flight *f, MPI_Comm comm, const ovl_coll_cfg cfg[NF]) {
  int p = f->p = csize(comm), r = f->r = crank(comm);
  f->b0 = tb(F_N[0]);
  f->s1 = tb(F_N[1]);
  f->r1 = tb(F_N[1]);
  f->b2 = tb(F_N[2]);
  f->s3 = tb(F_N[3]);
  f->r3 = tb(p * F_N[3]);
  f->s4 = tb(p * F_N[4]);
  f->r4 = tb(p * F_N[4]);
  f->b5 = tb(F_N[5]);
  f->s6 = tb(1);
  f->r6 = tb(1);
  if (r == p - 1) fill_val(f->b0, r, F_N[0], 1);
  else fill_const(f->b0, F_N[0], SENT);
  fill_val(f->s1, r, F_N[1], 2);
  fill_const(f->r1, F_N[1], SENT);
  fill_val(f->b2, r, F_N[2], 3);
  fill_val(f->s3, r, F_N[3], 4);
  fill_const(f->r3, p * F_N[3], SENT);
  for (int j = 0; j < p; j++)
    for (int64_t i = 0; i < F_N[4]; i++) f->s4[j * F_N[4] + i] = a2a(r, j, i);
  fill_const(f->r4, p * F_N[4], SENT);
  if (r == 0) fill_val(f->b5, r, F_N[5], 5);
  else fill_const(f->b5, F_N[5], SENT);
  f->s6[0] = 1;
  f->r6[0] = SENT;
  for (int k = 0; k < NF; k++) f->req[k] = NULL;
  C_OK(ovl_ibcast(f->b0, F_N[0], p - 1, comm, &cfg[0], &f->req[0]));
  C_OK(ovl_ireduce(f->s1, r == p / 2 ? f->r1 : NULL, F_N[1], p / 2, comm, &cfg[1], &f->req[1]));
  C_OK(ovl_iallreduce(f->b2, f->b2, F_N[2], comm, &cfg[2], &f->req[2]));
  C_OK(ovl_iallgather(f->s3, F_N[3], f->r3, comm, &cfg[3], &f->req[3]));
  C_OK(ovl_ialltoall(f->s4, F_N[4], f->r4, comm, &cfg[4], &f->req[4]));
  C_OK(ovl_ibcast(f->b5, F_N[5], 0, comm, &cfg[5], &f->req[5]));
  C_OK(ovl_iallreduce(f->s6, f->r6, F_N[6], comm, &cfg[6], &f->req[6]));
}

/* Compare with MPI references (blocking, after completion) and free. */
static void flight_check(flight *f, MPI_Comm comm) {
  int p = f->p, r = f->r;
  for (int k = 0; k < NF; k++) C_CHECK(f->req[k] == NULL, "request %d not NULL after completion", k);
  double *ref = tb((int64_t)p * 1000);
  /* 0: bcast from p-1 */
  fill_val(ref, p - 1, F_N[0], 1);
  expect_buf("op0 bcast(root p-1, n=1000)", f->b0, ref, F_N[0]);
  expect_guard("op0", f->b0, F_N[0]);
  /* 1: reduce to p/2 */
  MPI_Reduce(f->s1, ref, (int)F_N[1], MPI_DOUBLE, MPI_SUM, p / 2, comm);
  if (r == p / 2) expect_buf("op1 reduce(root p/2, n=7)", f->r1, ref, F_N[1]);
  expect_val("op1 sbuf (const)", f->s1, r, F_N[1], 2);
  /* 2: allreduce in place */
  double *tmp = tb(F_N[2]);
  fill_val(tmp, r, F_N[2], 3);
  MPI_Allreduce(tmp, ref, (int)F_N[2], MPI_DOUBLE, MPI_SUM, comm);
  expect_buf("op2 allreduce(in place, n=1000)", f->b2, ref, F_N[2]);
  expect_guard("op2", f->b2, F_N[2]);
  free(tmp);
  /* 3: allgather */
  MPI_Allgather(f->s3, (int)F_N[3], MPI_DOUBLE, ref, (int)F_N[3], MPI_DOUBLE, comm);
  expect_buf("op3 allgather(n=7)", f->r3, ref, p * F_N[3]);
  expect_guard("op3", f->r3, p * F_N[3]);
  /* 4: alltoall */
  MPI_Alltoall(f->s4, (int)F_N[4], MPI_DOUBLE, ref, (int)F_N[4], MPI_DOUBLE, comm);
  expect_buf("op4 alltoall(n=100)", f->r4, ref, p * F_N[4]);
  expect_guard("op4", f->r4, p * F_N[4]);
  /* 5: bcast from 0 */
  fill_val(ref, 0, F_N[5], 5);
  expect_buf("op5 bcast(root 0, n=513)", f->b5, ref, F_N[5]);
  expect_guard("op5", f->b5, F_N[5]);
  /* 6: n = 0 allreduce touches nothing */
  C_CHECK(f->r6[0] == SENT && f->s6[0] == 1, "op6 allreduce(n=0) touched its buffers");
  free(ref);
  free(f->b0);
  free(f->s1);
  free(f->r1);
  free(f->b2);
  free(f->s3);
  free(f->r3);
  free(f->s4);
  free(f->r4);
  free(f->b5);
  free(f->s6);
  free(f->r6);
  expect_no_leak();
}

static const char *const HOW[5] = {"waitall(reversed array)", "wait one by one in reverse order", "waitany loop",
                                   "progress loop", "test round-robin from the last"};

static void flight_complete(flight *f, int how) {
  if (how == 0) {
    ovl_req rev[NF];
    for (int k = 0; k < NF; k++) rev[k] = f->req[NF - 1 - k];
    C_OK(ovl_req_waitall(NF, rev));
    for (int k = 0; k < NF; k++) {
      C_CHECK(rev[k] == NULL, "waitall left entry %d non-NULL", k);
      f->req[k] = NULL;
    }
  } else if (how == 1) {
    for (int k = NF - 1; k >= 0; k--) C_OK(ovl_req_wait(&f->req[k]));
  } else if (how == 2) {
    int seen[NF] = {0}, expect = 0;
    for (int k = 0; k < NF; k++) expect += f->req[k] != NULL;
    for (int it = 0; it < expect; it++) {
      int idx = -2;
      C_OK(ovl_req_waitany(NF, f->req, &idx));
      C_CHECK(idx >= 0 && idx < NF, "waitany returned index %d with %d requests live", idx, expect - it);
      if (idx >= 0 && idx < NF) {
        C_CHECK(seen[idx] == 0, "waitany returned index %d twice", idx);
        seen[idx]++;
        C_CHECK(f->req[idx] == NULL, "waitany index %d: request not NULLed", idx);
      } else {
        break;
      }
    }
    int idx = -2;
    C_OK(ovl_req_waitany(NF, f->req, &idx));
    C_CHECK(idx == -1, "waitany with all requests NULL returned %d, expected -1", idx);
    /* anything waitany did not report is drained here so the check goes on */
    C_OK(ovl_req_waitall(NF, f->req));
  } else if (how == 3) {
    int total = 0, expect = 0, iters = 0, badcount = 0;
    ovl_err rc = OVL_OK;
    for (int k = 0; k < NF; k++) expect += f->req[k] != NULL;
    for (;;) {
      int before = 0, after = 0, nc = -1;
      for (int k = 0; k < NF; k++) before += f->req[k] != NULL;
      if (before == 0) break;
      rc = ovl_req_progress(NF, f->req, &nc);
      if (rc != OVL_OK) break;
      for (int k = 0; k < NF; k++) after += f->req[k] != NULL;
      if (nc != before - after && badcount++ == 0)
        C_CHECK(0, "progress reported %d completions, %d requests became NULL", nc, before - after);
      total += nc;
      iters++;
      sched_yield();
    }
    C_CHECK(rc == OVL_OK, "ovl_req_progress returned %s: %s", ovl_err_name(rc), ovl_errmsg());
    C_OK(ovl_req_waitall(NF, f->req)); /* drain after a failure */
    C_CHECK(total == expect, "progress counted %d completions in %d calls, %d requests were live", total, iters,
            expect);
    int nc = -1;
    C_OK(ovl_req_progress(NF, f->req, &nc));
    C_CHECK(nc == 0, "progress on all-NULL requests reported %d", nc);
  } else {
    int left = 1, bad = 0;
    ovl_err rc = OVL_OK;
    while (left && rc == OVL_OK) {
      left = 0;
      for (int k = NF - 1; k >= 0 && rc == OVL_OK; k--) {
        int done = 0;
        rc = ovl_req_test(&f->req[k], &done);
        if (!done) left = 1;
        if (done != (f->req[k] == NULL) && bad++ == 0)
          C_CHECK(0, "test: done=%d but request %s", done, f->req[k] ? "live" : "NULL");
      }
      sched_yield();
    }
    C_CHECK(rc == OVL_OK, "ovl_req_test returned %s: %s", ovl_err_name(rc), ovl_errmsg());
    C_OK(ovl_req_waitall(NF, f->req)); /* drain after a failure */
  }
}

static void test_inflight(MPI_Comm comm, const char *cname) {
  int p = csize(comm);
  ovl_coll_cfg base = ovl_coll_cfg_default(), cfgs[5][NF];
  const char *lbl[5] = {"own/first algs", "own/second algs", "own/auto", "mpi", "mixed mpi+own"};
  for (int s = 0; s < 5; s++)
    for (int k = 0; k < NF; k++) cfgs[s][k] = base;
  for (int k = 0; k < NF; k++) {
    ovl_coll_cfg *a = &cfgs[0][k], *b = &cfgs[1][k], *c = &cfgs[2][k], *e = &cfgs[4][k];
    a->backend = b->backend = c->backend = OVL_BACKEND_OWN;
    a->bcast = OVL_BCAST_BINOMIAL;
    a->reduce = OVL_REDUCE_BINOMIAL;
    a->allreduce = OVL_ALLREDUCE_RABENSEIFNER;
    a->allgather = OVL_ALLGATHER_RING;
    a->alltoall = OVL_ALLTOALL_RING;
    b->bcast = OVL_BCAST_SCATTER_ALLGATHER;
    b->reduce = OVL_REDUCE_RABENSEIFNER;
    b->allreduce = OVL_ALLREDUCE_RING;
    b->allgather = OVL_ALLGATHER_RECDBL;
    b->alltoall = OVL_ALLTOALL_PAIRWISE;
    *e = k % 2 ? *b : base;
  }
  cfgs[0][5].bcast = OVL_BCAST_CHAIN;
  cfgs[0][5].segment = 7;
  cfgs[1][5].bcast = OVL_BCAST_HIER;
  cfgs[1][5].hier_group = 2;
  cfgs[4][5] = cfgs[0][5];
  for (int s = 0; s < 5; s++)
    for (int how = 0; how < 5; how++) {
      set_case("in flight: %d collectives on one comm (%s), completed by %s, comm=%s p=%d rank=%d", NF, lbl[s],
               HOW[how], cname, p, crank(comm));
      flight f;
      flight_post(&f, comm, cfgs[s]);
      flight_complete(&f, how);
      flight_check(&f, comm);
    }
}

/* Many small collectives in flight on one communicator, waited in reverse. */
static void test_many(MPI_Comm comm, const char *cname) {
  int p = csize(comm), r = crank(comm);
  enum { NA = 32, NB = 16, N = 5 };
  set_case("many in flight: %d allreduce + %d bcast (n=%d), comm=%s p=%d rank=%d", NA, NB, N, cname, p, r);
  ovl_req req[NA + NB];
  double *ab = tb(NA * N), *bb = tb(NB * N);
  ovl_coll_cfg cfg[4];
  for (int c = 0; c < 4; c++) cfg[c] = ovl_coll_cfg_default();
  cfg[1].backend = cfg[2].backend = cfg[3].backend = OVL_BACKEND_OWN;
  cfg[2].allreduce = OVL_ALLREDUCE_RABENSEIFNER;
  cfg[3].allreduce = OVL_ALLREDUCE_RING;
  cfg[2].bcast = OVL_BCAST_CHAIN;
  cfg[2].segment = 2;
  cfg[3].bcast = OVL_BCAST_HIER;
  cfg[1].bcast = OVL_BCAST_SCATTER_ALLGATHER;
  for (int a = 0; a < NA; a++) {
    fill_val(ab + a * N, r, N, a);
    req[a] = NULL;
    C_OK(ovl_iallreduce(ab + a * N, ab + a * N, N, comm, &cfg[a % 4], &req[a]));
  }
  for (int b = 0; b < NB; b++) {
    int root = b % p;
    if (r == root) fill_val(bb + b * N, root, N, b);
    else fill_const(bb + b * N, N, SENT);
    req[NA + b] = NULL;
    C_OK(ovl_ibcast(bb + b * N, N, root, comm, &cfg[b % 4], &req[NA + b]));
  }
  ovl_req rev[NA + NB];
  for (int k = 0; k < NA + NB; k++) rev[k] = req[NA + NB - 1 - k];
  C_OK(ovl_req_waitall(NA + NB, rev));
  double want[N];
  for (int a = 0; a < NA; a++) {
    for (int i = 0; i < N; i++) want[i] = val(0, i, a) * (double)p * (p + 1) / 2;
    char what[48];
    snprintf(what, sizeof what, "allreduce #%d (%s)", a, a % 4 == 0 ? "mpi" : "own");
    expect_buf(what, ab + a * N, want, N);
  }
  for (int b = 0; b < NB; b++) {
    for (int i = 0; i < N; i++) want[i] = val(b % p, i, b);
    char what[48];
    snprintf(what, sizeof what, "bcast #%d (root %d)", b, b % p);
    expect_buf(what, bb + b * N, want, N);
  }
  expect_guard("allreduce buffers", ab, NA * N);
  expect_guard("bcast buffers", bb, NB * N);
  free(ab);
  free(bb);
  expect_no_leak();
}

/* Two communicators: even ranks post on A then B, odd ranks B then A (legal:
 * the order only has to agree per communicator). Waited in one order. */
static void test_two_comms(MPI_Comm A, MPI_Comm B) {
  int p = csize(A), r = crank(A), rb = crank(B);
  set_case("two comms posted in rank-dependent order, p=%d rankA=%d rankB=%d", p, r, rb);
  ovl_coll_cfg own = ovl_coll_cfg_default();
  own.backend = OVL_BACKEND_OWN;
  own.bcast = OVL_BCAST_CHAIN;
  own.segment = 16;
  own.allreduce = OVL_ALLREDUCE_RING;
  const int64_t n = 1000;
  double *a1 = tb(n), *a2 = tb(n), *b1 = tb(n), *b2 = tb(n);
  if (r == p - 1) fill_val(a1, r, n, 21);
  else fill_const(a1, n, SENT);
  fill_val(a2, r, n, 22);
  if (rb == 0) fill_val(b1, rb, n, 23);
  else fill_const(b1, n, SENT);
  fill_val(b2, rb, n, 24);
  ovl_req q[4] = {NULL, NULL, NULL, NULL};
  int wr = W_rank;
  for (int pass = 0; pass < 2; pass++) {
    int doA = (pass == 0) == (wr % 2 == 0);
    if (doA) {
      C_OK(ovl_ibcast(a1, n, p - 1, A, &own, &q[0]));
      C_OK(ovl_iallreduce(a2, a2, n, A, &own, &q[1]));
    } else {
      C_OK(ovl_ibcast(b1, n, 0, B, &own, &q[2]));
      C_OK(ovl_iallreduce(b2, b2, n, B, &own, &q[3]));
    }
  }
  C_OK(ovl_req_waitall(4, q));
  double *w = tb(n);
  fill_val(w, p - 1, n, 21);
  expect_buf("bcast on A", a1, w, n);
  fill_val(w, 0, n, 23);
  expect_buf("bcast on B", b1, w, n);
  for (int i = 0; i < n; i++) w[i] = val(0, i, 22) * (double)p * (p + 1) / 2;
  expect_buf("allreduce on A", a2, w, n);
  for (int i = 0; i < n; i++) w[i] = val(0, i, 24) * (double)p * (p + 1) / 2;
  expect_buf("allreduce on B", b2, w, n);
  free(a1);
  free(a2);
  free(b1);
  free(b2);
  free(w);
  expect_no_leak();
}

/* Rank-dependent wait order with own schedules: even ranks wait forward, odd
 * ranks backward. Testing or waiting on any request progresses every live own
 * schedule (comm.h), so this must not stall; a stall is an error, reported
 * and then drained with ovl_req_progress. */
static int test_wait_order(MPI_Comm comm, const char *cname) {
  int p = csize(comm), r = crank(comm);
  ovl_coll_cfg cfg[NF];
  for (int k = 0; k < NF; k++) {
    cfg[k] = ovl_coll_cfg_default();
    cfg[k].backend = OVL_BACKEND_OWN;
  }
  set_case("rank-dependent wait order, own/auto, comm=%s p=%d rank=%d", cname, p, r);
  flight f;
  flight_post(&f, comm, cfg);
  int stalled = 0;
  for (int j = 0; j < NF && !stalled; j++) {
    int k = r % 2 ? NF - 1 - j : j;
    double t0 = MPI_Wtime();
    int done = 0;
    while (!done) {
      ovl_err rc = ovl_req_test(&f.req[k], &done);
      if (rc != OVL_OK) {
        C_OK(rc);
        break;
      }
      if (!done && MPI_Wtime() - t0 > 5.0) {
        stalled = 1;
        break;
      }
      if (!done) sched_yield();
    }
  }
  for (;;) {
    int live = 0, nc;
    for (int k = 0; k < NF; k++) live += f.req[k] != NULL;
    if (!live) break;
    ovl_err rc = ovl_req_progress(NF, f.req, &nc);
    if (rc != OVL_OK) {
      C_OK(rc);
      break;
    }
    sched_yield();
  }
  flight_check(&f, comm);
  int any = 0;
  MPI_Allreduce(&stalled, &any, 1, MPI_INT, MPI_MAX, comm);
  return any;
}

/* ---- point-to-point ring ------------------------------------------------------ */

static void test_ring(MPI_Comm comm, const char *cname) {
  int p = csize(comm), r = crank(comm), next = (r + 1) % p, prev = (r + p - 1) % p;
  for (int si = 0; si < NSIZES; si++) {
    int64_t n = SIZES[si];
    set_case("isend/irecv ring n=%lld (tag 5 forward, tag 6 backward), comm=%s p=%d rank=%d", (long long)n, cname, p,
             r);
    double *sf = tb(n), *sb = tb(n), *rf = tb(n), *rbk = tb(n);
    fill_val(sf, r, n, 30);
    fill_val(sb, r, n, 31);
    fill_const(rf, n, SENT);
    fill_const(rbk, n, SENT);
    ovl_req q[4] = {NULL, NULL, NULL, NULL};
    /* receives posted in the opposite order of the sends; the backward
     * receive before the forward one: matching must go by tag */
    C_OK(ovl_irecv(rbk, n, next, 6, comm, &q[0]));
    C_OK(ovl_irecv(rf, n, prev, 5, comm, &q[1]));
    C_OK(ovl_isend(sf, n, next, 5, comm, &q[2]));
    C_OK(ovl_isend(sb, n, prev, 6, comm, &q[3]));
    if (si % 2) {
      C_OK(ovl_req_waitall(4, q));
    } else {
      int seen = 0, idx;
      for (int k = 0; k < 4; k++) {
        C_OK(ovl_req_waitany(4, q, &idx));
        if (idx >= 0) seen |= 1 << idx;
      }
      C_CHECK(seen == 15, "waitany over 4 p2p requests reported set 0x%x", seen);
    }
    double *w = tb(n);
    fill_val(w, prev, n, 30);
    expect_buf("forward receive", rf, w, n);
    fill_val(w, next, n, 31);
    expect_buf("backward receive", rbk, w, n);
    expect_guard("forward receive", rf, n);
    expect_guard("backward receive", rbk, n);
    expect_val("send buffer (const)", sf, r, n, 30);
    free(w);
    free(sf);
    free(sb);
    free(rf);
    free(rbk);
    expect_no_leak();
  }
}

/* ---- requests on their own ------------------------------------------------------ */

static void test_null_requests(void) {
  set_case("NULL requests");
  ovl_req q[3] = {NULL, NULL, NULL};
  int done = 0, idx = 7, nc = 7;
  C_OK(ovl_req_test(&q[0], &done));
  C_CHECK(done == 1, "test on NULL: done=%d", done);
  C_OK(ovl_req_wait(&q[0]));
  C_OK(ovl_req_waitall(3, q));
  C_OK(ovl_req_waitall(0, q));
  C_OK(ovl_req_waitany(3, q, &idx));
  C_CHECK(idx == -1, "waitany over NULLs: %d", idx);
  idx = 7;
  C_OK(ovl_req_waitany(0, q, &idx));
  C_CHECK(idx == -1, "waitany(0): %d", idx);
  C_OK(ovl_req_progress(3, q, &nc));
  C_CHECK(nc == 0, "progress over NULLs: %d", nc);
  C_CHECK(ovl_req_live() == 0, "live %lld", (long long)ovl_req_live());
}

/* Zero-size operations on both back ends, completed with waitany (a request
 * with nothing to do must still be reported exactly once, or be NULL). */
static void test_zero_waitany(MPI_Comm comm, const char *cname) {
  int p = csize(comm), r = crank(comm);
  for (int be = 0; be < 2; be++) {
    set_case("zero-size collectives + waitany, backend=%s comm=%s p=%d rank=%d", be ? "own" : "mpi", cname, p, r);
    ovl_coll_cfg cfg = ovl_coll_cfg_default();
    cfg.backend = be ? OVL_BACKEND_OWN : OVL_BACKEND_MPI;
    double x[1] = {SENT}, y[1] = {SENT};
    ovl_req q[5] = {NULL, NULL, NULL, NULL, NULL};
    C_OK(ovl_ibcast(x, 0, 0, comm, &cfg, &q[0]));
    C_OK(ovl_ireduce(x, y, 0, 0, comm, &cfg, &q[1]));
    C_OK(ovl_iallreduce(x, y, 0, comm, &cfg, &q[2]));
    C_OK(ovl_iallgather(x, 0, y, comm, &cfg, &q[3]));
    C_OK(ovl_ialltoall(x, 0, y, comm, &cfg, &q[4]));
    int live = 0, idx = -2;
    for (int k = 0; k < 5; k++) live += q[k] != NULL;
    for (int k = 0; k < live; k++) {
      C_OK(ovl_req_waitany(5, q, &idx));
      C_CHECK(idx >= 0, "waitany returned %d with %d of 5 requests still live", idx, live - k);
      if (idx < 0) break;
    }
    int still = 0;
    for (int k = 0; k < 5; k++) still += q[k] != NULL;
    C_CHECK(still == 0, "%d requests still live after %d waitany calls", still, live);
    C_OK(ovl_req_waitall(5, q));
    C_CHECK(x[0] == SENT && y[0] == SENT, "n=0 collectives touched buffers");
    expect_no_leak();
  }
}

/* ---- argument errors ---------------------------------------------------------------- */

/* The call must fail with one of the accepted codes, leave *req NULL and
 * create no request. */
static void expect_refused(const char *what, ovl_err rc, ovl_err want1, ovl_err want2, ovl_req req, int64_t live0) {
  C_CHECK(rc == want1 || rc == want2, "%s returned %s, expected %s%s%s", what, ovl_err_name(rc), ovl_err_name(want1),
          want2 != want1 ? " or " : "", want2 != want1 ? ovl_err_name(want2) : "");
  C_CHECK(req == NULL, "%s: *req not NULL after refusal", what);
  C_CHECK(ovl_req_live() == live0, "%s: ovl_req_live() went %lld -> %lld (something was posted)", what,
          (long long)live0, (long long)ovl_req_live());
}

static void test_bad_args(MPI_Comm comm, const char *cname) {
  int p = csize(comm), r = crank(comm);
  double *b = tb((int64_t)p * 16), *c = tb((int64_t)p * 16);
  fill_const(b, p * 16, 1);
  fill_const(c, p * 16, 1);
  for (int be = 0; be < 2; be++) {
    ovl_coll_cfg cfg = ovl_coll_cfg_default();
    cfg.backend = be ? OVL_BACKEND_OWN : OVL_BACKEND_MPI;
    set_case("argument errors, backend=%s, comm=%s p=%d rank=%d", be ? "own" : "mpi", cname, p, r);
    int64_t l0 = ovl_req_live();
    ovl_req q = NULL;
    /* negative counts */
    expect_refused("ibcast n=-1", ovl_ibcast(b, -1, 0, comm, &cfg, &q), OVL_ERR_ARG, OVL_ERR_ARG, q, l0);
    expect_refused("ireduce n=-1", ovl_ireduce(b, c, -1, 0, comm, &cfg, &q), OVL_ERR_ARG, OVL_ERR_ARG, q, l0);
    expect_refused("iallreduce n=-1", ovl_iallreduce(b, c, -1, comm, &cfg, &q), OVL_ERR_ARG, OVL_ERR_ARG, q, l0);
    expect_refused("iallgather n=-1", ovl_iallgather(b, -1, c, comm, &cfg, &q), OVL_ERR_ARG, OVL_ERR_ARG, q, l0);
    expect_refused("ialltoall n=-1", ovl_ialltoall(b, -1, c, comm, &cfg, &q), OVL_ERR_ARG, OVL_ERR_ARG, q, l0);
    expect_refused("ibcast n=INT64_MIN", ovl_ibcast(b, INT64_MIN, 0, comm, &cfg, &q), OVL_ERR_ARG, OVL_ERR_ARG, q, l0);
    /* roots out of range */
    expect_refused("ibcast root=-1", ovl_ibcast(b, 4, -1, comm, &cfg, &q), OVL_ERR_ARG, OVL_ERR_ARG, q, l0);
    expect_refused("ibcast root=p", ovl_ibcast(b, 4, p, comm, &cfg, &q), OVL_ERR_ARG, OVL_ERR_ARG, q, l0);
    expect_refused("ireduce root=-1", ovl_ireduce(b, c, 4, -1, comm, &cfg, &q), OVL_ERR_ARG, OVL_ERR_ARG, q, l0);
    expect_refused("ireduce root=p", ovl_ireduce(b, c, 4, p, comm, &cfg, &q), OVL_ERR_ARG, OVL_ERR_ARG, q, l0);
    expect_refused("ireduce root=p+100", ovl_ireduce(b, c, 4, p + 100, comm, &cfg, &q), OVL_ERR_ARG, OVL_ERR_ARG, q,
                   l0);
    /* MPI_COMM_NULL (errors on no communicator are raised on
     * MPI_COMM_WORLD: make them return, so an unchecked NULL shows up as
     * OVL_ERR_MPI instead of aborting the job) */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    expect_refused("ibcast comm=MPI_COMM_NULL", ovl_ibcast(b, 4, 0, MPI_COMM_NULL, &cfg, &q), OVL_ERR_ARG, OVL_ERR_MPI,
                   q, l0);
    expect_refused("iallreduce comm=MPI_COMM_NULL", ovl_iallreduce(b, c, 4, MPI_COMM_NULL, &cfg, &q), OVL_ERR_ARG,
                   OVL_ERR_MPI, q, l0);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    /* point-to-point */
    expect_refused("isend n=-1", ovl_isend(b, -1, 0, 0, comm, &q), OVL_ERR_ARG, OVL_ERR_ARG, q, l0);
    expect_refused("irecv n=-1", ovl_irecv(b, -1, 0, 0, comm, &q), OVL_ERR_ARG, OVL_ERR_ARG, q, l0);
    expect_refused("isend dest=p", ovl_isend(b, 1, p, 0, comm, &q), OVL_ERR_ARG, OVL_ERR_MPI, q, l0);
    expect_refused("irecv src=p", ovl_irecv(b, 1, p, 0, comm, &q), OVL_ERR_ARG, OVL_ERR_MPI, q, l0);
    expect_refused("isend tag=-3", ovl_isend(b, 1, 0, -3, comm, &q), OVL_ERR_ARG, OVL_ERR_MPI, q, l0);
    /* the failed calls above must not have consumed a sequence number or
     * left anything behind: a correct collective right after works */
    C_CHECK(ovl_req_live() == 0, "live %lld after argument errors", (long long)ovl_req_live());
  }
  free(b);
  free(c);
  /* a collective right after the refusals, on both back ends and a few
   * algorithms: sequence numbers must still agree on every rank */
  ccase cc[24];
  int nc = cases_of(K_ALLREDUCE, p, cc);
  for (int k = 0; k < nc; k++) run_allreduce(comm, cname, &cc[k].cfg, cc[k].label, 1000, 0, 0);
  nc = cases_of(K_BCAST, p, cc);
  for (int k = 0; k < nc; k++) run_bcast(comm, cname, &cc[k].cfg, cc[k].label, p - 1, 100, 0);
}

/* Inputs the header leaves unspecified: the call may refuse them with
 * OVL_ERR_ARG (posting nothing) or run them correctly; it must not crash,
 * hang, or return wrong data. */
static void test_unspecified(MPI_Comm comm, const char *cname) {
  int p = csize(comm);
  ovl_coll_cfg d = ovl_coll_cfg_default(), c;
  /* NULL cfg: the header does not say it is allowed */
  run_bcast(comm, cname, NULL, "cfg=NULL", 0, 100, 1);
  run_reduce(comm, cname, NULL, "cfg=NULL", p - 1, 100, 0, 1);
  run_allreduce(comm, cname, NULL, "cfg=NULL", 100, 0, 1);
  run_allgather(comm, cname, NULL, "cfg=NULL", 100, 0, 1);
  run_alltoall(comm, cname, NULL, "cfg=NULL", 100, 1);
  /* out-of-range enum values and algorithms of another collective (own) */
  c = d;
  c.backend = (ovl_backend)7;
  run_bcast(comm, cname, &c, "backend=7", 0, 100, 1);
  c = d;
  c.backend = OVL_BACKEND_OWN;
  c.bcast = OVL_ALG_COUNT;
  run_bcast(comm, cname, &c, "own bcast alg=OVL_ALG_COUNT", 0, 100, 1);
  c.bcast = (ovl_alg)-1;
  run_bcast(comm, cname, &c, "own bcast alg=-1", 0, 100, 1);
  c = d;
  c.backend = OVL_BACKEND_OWN;
  c.bcast = OVL_ALLTOALL_RING;
  run_bcast(comm, cname, &c, "own bcast alg=OVL_ALLTOALL_RING (other collective)", 0, 100, 1);
  c = d;
  c.backend = OVL_BACKEND_OWN;
  c.reduce = OVL_BCAST_CHAIN;
  run_reduce(comm, cname, &c, "own reduce alg=OVL_BCAST_CHAIN (other collective)", 0, 100, 0, 1);
  c = d;
  c.backend = OVL_BACKEND_OWN;
  c.allreduce = OVL_REDUCE_BINOMIAL;
  run_allreduce(comm, cname, &c, "own allreduce alg=OVL_REDUCE_BINOMIAL (other collective)", 100, 0, 1);
  c = d;
  c.backend = OVL_BACKEND_OWN;
  c.allgather = OVL_ALLTOALL_PAIRWISE;
  run_allgather(comm, cname, &c, "own allgather alg=OVL_ALLTOALL_PAIRWISE (other collective)", 100, 0, 1);
  c = d;
  c.backend = OVL_BACKEND_OWN;
  c.alltoall = OVL_ALLGATHER_RING;
  run_alltoall(comm, cname, &c, "own alltoall alg=OVL_ALLGATHER_RING (other collective)", 100, 1);
  /* segment / group sizes out of range */
  c = d;
  c.backend = OVL_BACKEND_OWN;
  c.bcast = OVL_BCAST_CHAIN;
  c.segment = -5;
  run_bcast(comm, cname, &c, "own chain segment=-5", p / 2, 100, 1);
  c.segment = (int64_t)1 << 40; /* longer than the message: one segment */
  run_bcast(comm, cname, &c, "own chain segment=2^40", p / 2, 100, 1);
  /* segment = INT64_MAX overflows n + segment - 1 in the segment count; on
   * p >= 3 the middle ranks of the chain then build a schedule of ~2^35
   * operations (hours of CPU and unbounded memory), so the case only runs
   * where the chain has no middle rank */
  if (p <= 2) {
    c.segment = INT64_MAX;
    run_bcast(comm, cname, &c, "own chain segment=INT64_MAX", p / 2, 100, 1);
  }
  c = d;
  c.backend = OVL_BACKEND_OWN;
  c.bcast = OVL_BCAST_HIER;
  c.hier_group = -1;
  run_bcast(comm, cname, &c, "own hier hier_group=-1", p - 1, 100, 1);
  c.hier_group = p + 3;
  run_bcast(comm, cname, &c, "own hier hier_group=p+3", p - 1, 100, 1);
  expect_no_leak();
}

/* ---- names ------------------------------------------------------------------------------ */

static void test_names(void) {
  set_case("algorithm and back-end names");
  static const struct {
    const char *coll, *name;
    ovl_alg alg;
  } T[] = {
      {"bcast", "auto", OVL_ALG_AUTO},
      {"bcast", "binomial", OVL_BCAST_BINOMIAL},
      {"bcast", "scatter-allgather", OVL_BCAST_SCATTER_ALLGATHER},
      {"bcast", "chain", OVL_BCAST_CHAIN},
      {"bcast", "hier", OVL_BCAST_HIER},
      {"reduce", "auto", OVL_ALG_AUTO},
      {"reduce", "binomial", OVL_REDUCE_BINOMIAL},
      {"reduce", "rabenseifner", OVL_REDUCE_RABENSEIFNER},
      {"allreduce", "auto", OVL_ALG_AUTO},
      {"allreduce", "rabenseifner", OVL_ALLREDUCE_RABENSEIFNER},
      {"allreduce", "ring", OVL_ALLREDUCE_RING},
      {"allgather", "auto", OVL_ALG_AUTO},
      {"allgather", "ring", OVL_ALLGATHER_RING},
      {"allgather", "recdbl", OVL_ALLGATHER_RECDBL},
      {"alltoall", "auto", OVL_ALG_AUTO},
      {"alltoall", "ring", OVL_ALLTOALL_RING},
      {"alltoall", "pairwise", OVL_ALLTOALL_PAIRWISE},
  };
  int nt = (int)(sizeof T / sizeof T[0]);
  int covered[OVL_ALG_COUNT] = {0};
  for (int k = 0; k < nt; k++) {
    ovl_alg a = (ovl_alg)-1;
    C_OK(ovl_alg_parse(T[k].coll, T[k].name, &a));
    C_CHECK(a == T[k].alg, "ovl_alg_parse(%s, %s) = %d, expected %d", T[k].coll, T[k].name, (int)a, (int)T[k].alg);
    const char *nm = ovl_alg_name(T[k].alg);
    C_CHECK(nm && strcmp(nm, T[k].name) == 0, "ovl_alg_name(%d) = '%s', expected '%s'", (int)T[k].alg,
            nm ? nm : "(null)", T[k].name);
    covered[T[k].alg] = 1;
  }
  for (int a = 0; a < OVL_ALG_COUNT; a++) C_CHECK(covered[a], "enum value %d not covered by the name table", a);
  ovl_alg a;
  static const char *const bad[][2] = {{"bcast", "ring"},         {"reduce", "ring"},  {"allgather", "pairwise"},
                                       {"alltoall", "recdbl"},    {"bcast", "nope"},   {"scan", "auto"},
                                       {"allreduce", "binomial"}, {"reduce", "chain"}, {"bcast", ""}};
  for (int k = 0; k < (int)(sizeof bad / sizeof bad[0]); k++)
    C_CHECK(ovl_alg_parse(bad[k][0], bad[k][1], &a) == OVL_ERR_ARG, "ovl_alg_parse(%s, %s) accepted", bad[k][0],
            bad[k][1]);
  ovl_backend b = (ovl_backend)-1;
  C_OK(ovl_backend_parse("mpi", &b));
  C_CHECK(b == OVL_BACKEND_MPI, "parse mpi -> %d", (int)b);
  C_OK(ovl_backend_parse("own", &b));
  C_CHECK(b == OVL_BACKEND_OWN, "parse own -> %d", (int)b);
  C_CHECK(ovl_backend_parse("nccl", &b) == OVL_ERR_ARG, "backend 'nccl' accepted");
  C_CHECK(strcmp(ovl_backend_name(OVL_BACKEND_MPI), "mpi") == 0, "backend name mpi: %s",
          ovl_backend_name(OVL_BACKEND_MPI));
  C_CHECK(strcmp(ovl_backend_name(OVL_BACKEND_OWN), "own") == 0, "backend name own: %s",
          ovl_backend_name(OVL_BACKEND_OWN));
  ovl_coll_cfg d = ovl_coll_cfg_default();
  C_CHECK(d.backend == OVL_BACKEND_MPI && d.bcast == OVL_ALG_AUTO && d.reduce == OVL_ALG_AUTO &&
              d.allreduce == OVL_ALG_AUTO && d.allgather == OVL_ALG_AUTO && d.alltoall == OVL_ALG_AUTO,
          "ovl_coll_cfg_default is not MPI + AUTO");
}

/* ---- main ----------------------------------------------------------------------------------- */

/* Run one section; OVL_TEST_VERBOSE=1 prints its time on rank 0. */
#define SECTION(call)                                                                                                  \
  do {                                                                                                                 \
    double t_s_ = MPI_Wtime();                                                                                         \
    call;                                                                                                              \
    if (g_verbose && W_rank == 0) fprintf(stderr, "section %-45s %7.2f s\n", #call, MPI_Wtime() - t_s_);               \
  } while (0)

/* Message volume counters: an own binomial broadcast and reduction of n
 * doubles send (p-1) n doubles in all, a point-to-point send its own; the MPI
 * back end's collectives and anything after ovl_volume_stop are not counted;
 * with every rank on one node nothing is off-node. comm: ranks reversed against the
 * counting communicator MPI_COMM_WORLD, so ranks must be translated. */
static void test_volume(MPI_Comm comm, const char *cname) {
  (void)cname;
  int p, r;
  MPI_Comm_size(comm, &p);
  MPI_Comm_rank(comm, &r);
  const int64_t n = 1000;
  double *b = malloc(sizeof(double) * (size_t)n), *c = malloc(sizeof(double) * (size_t)n);
  fill_const(b, n, 1.0);
  ovl_coll_cfg own = ovl_coll_cfg_default(), mpi = ovl_coll_cfg_default();
  own.backend = OVL_BACKEND_OWN, own.bcast = OVL_BCAST_BINOMIAL, own.reduce = OVL_REDUCE_BINOMIAL;
  mpi.backend = OVL_BACKEND_MPI;
  ovl_req q = NULL;
  ovl_volume v;
  C_OK(ovl_volume_start(MPI_COMM_WORLD));
  C_OK(ovl_ibcast(b, n, 0, comm, &own, &q));
  complete(&q);
  C_OK(ovl_ireduce(b, c, n, 0, comm, &own, &q));
  complete(&q);
  C_OK(ovl_ibcast(b, n, 0, comm, &mpi, &q)); /* not seen */
  complete(&q);
  if (p > 1 && (r == 0 || r == p - 1)) {
    C_OK(r == 0 ? ovl_isend(b, 7, p - 1, 5, comm, &q) : ovl_irecv(c, 7, 0, 5, comm, &q));
    complete(&q);
  }
  C_OK(ovl_volume_get(&v));
  C_OK(ovl_volume_stop());
  C_OK(ovl_ibcast(b, n, 0, comm, &own, &q)); /* after stop: not counted */
  complete(&q);
  ovl_volume w;
  C_OK(ovl_volume_get(&w));
  C_CHECK(memcmp(&v, &w, sizeof v) == 0, "volume changed after ovl_volume_stop");
  double mine[5] = {v.bytes[OVL_VOL_BCAST], v.bytes[OVL_VOL_REDUCE], v.bytes[OVL_VOL_P2P], v.bytes[OVL_VOL_OTHER], 0},
         all[5];
  for (int k = 0; k < OVL_VOL_KINDS; k++) mine[4] += v.offnode[k];
  MPI_Allreduce(mine, all, 5, MPI_DOUBLE, MPI_SUM, comm);
  double want = 8.0 * (double)n * (p - 1);
  C_CHECK(all[0] == want, "volume: broadcast bytes %.0f, want %.0f", all[0], want);
  C_CHECK(all[1] == want, "volume: reduction bytes %.0f, want %.0f", all[1], want);
  C_CHECK(all[2] == (p > 1 ? 56.0 : 0.0), "volume: point-to-point bytes %.0f, want %d", all[2], p > 1 ? 56 : 0);
  MPI_Comm node;
  int nn, wn;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  MPI_Comm_size(node, &nn);
  MPI_Comm_size(MPI_COMM_WORLD, &wn);
  MPI_Comm_free(&node);
  C_CHECK(all[3] == 0, "volume: other bytes %.0f, want 0", all[3]);
  C_CHECK(nn < wn || all[4] == 0, "volume: %.0f bytes off-node with every rank on one node", all[4]);
  C_CHECK(all[4] <= all[0] + all[1] + all[2], "volume: more bytes off-node (%.0f) than sent", all[4]);
  C_CHECK(ovl_volume_get(NULL) == OVL_ERR_ARG, "ovl_volume_get(NULL) accepted");
  free(b), free(c);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &W_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &W_size);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_alarm;
  sigaction(SIGALRM, &sa, NULL);
  g_verbose = getenv("OVL_TEST_VERBOSE") != NULL;
  g_full = getenv("OVL_TEST_FULL") != NULL;
  double t0 = MPI_Wtime();

  C_CHECK(ovl_req_live() == 0, "live requests at start: %lld", (long long)ovl_req_live());
  test_names();
  test_null_requests();

  /* the main communicator has ranks reversed relative to MPI_COMM_WORLD, so
   * code that confuses comm ranks and world ranks fails */
  MPI_Comm rev, dupw, half, errc;
  MPI_Comm_split(MPI_COMM_WORLD, 0, W_size - 1 - W_rank, &rev);
  MPI_Comm_dup(MPI_COMM_WORLD, &dupw);
  MPI_Comm_split(MPI_COMM_WORLD, W_rank % 2, W_rank, &half);
  MPI_Comm_dup(MPI_COMM_WORLD, &errc);
  MPI_Comm_set_errhandler(errc, MPI_ERRORS_RETURN);
  /* MPI errors inside ovl (e.g. a truncated message when tags get mixed up)
   * come back as OVL_ERR_MPI and are reported with the case, instead of
   * aborting the job without saying which case it was */
  MPI_Comm_set_errhandler(rev, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(dupw, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(half, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);

  SECTION(test_matrix(rev, "rev"));
  SECTION(test_ring(rev, "rev"));
  SECTION(test_zero_waitany(rev, "rev"));
  SECTION(test_inflight(rev, "rev"));
  SECTION(test_many(rev, "rev"));
  SECTION(test_two_comms(rev, dupw));
  SECTION(test_volume(rev, "rev"));
  /* both halves at once: even world ranks in one comm, odd in the other */
  SECTION(test_small_matrix(half, W_rank % 2 ? "odd-half" : "even-half"));
  SECTION(test_small_matrix(MPI_COMM_SELF, "self"));
  SECTION(test_inflight(MPI_COMM_SELF, "self"));
  SECTION(test_bad_args(errc, "dup-errors-return"));
  SECTION(test_unspecified(rev, "rev"));
  int stalled = 0;
  SECTION(stalled = test_wait_order(rev, "rev"));

  set_case("final");
  alarm(0);
  C_CHECK(ovl_req_live() == 0, "ovl_req_live() = %lld at the end (leaked requests)", (long long)ovl_req_live());
  C_CHECK(!stalled, "own schedules stalled when ranks waited on them in different orders");
  double tt = MPI_Wtime() - t0;
  if (W_rank == 0 && g_verbose) fprintf(stderr, "test_coll: total %.2f s\n", tt);
  MPI_Comm_free(&rev);
  MPI_Comm_free(&dupw);
  MPI_Comm_free(&half);
  MPI_Comm_free(&errc);
  int rc = t_finish("test_coll");
  MPI_Finalize();
  return rc;
}
