/* lanes: the partition of n elements over N_DUP lanes; lane-set creation,
 * accessors, errors and destruction; split collectives (blocking and
 * i-forms) on both back ends against MPI's blocking collectives; isend/irecv
 * over lanes in a ring; pipelines: Algorithm 2 of Huang & Chow (IPDPS 2019,
 * Section III-A: reduce part c on row lane c, then broadcast it on column
 * lane c, driven in arrival order) on a q x q grid, event records, NULL
 * stages, arrival-order driving, and errors from the post function.
 *
 * Data are small integers, so every sum is exact and results are compared
 * with ==. Run time: the large size (LARGE = 100003) is run for every N_DUP
 * and back end in the blocking forms, and for N_DUP in {1, 4} in the i-forms
 * (the i-form code path is the same, so the large size adds little there).
 *
 * A watchdog (alarm) turns a hang into a message naming the case. */
#define _POSIX_C_SOURCE 200809L
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "ovl/ovl.h"
#define OVL_CASE_NAME "test_lanes"
#include "ovlcase.h"

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
  C_CHECK(bad == 0, "%s: %lld of %lld elements modified, first [%lld] = %.17g", what, (long long)bad, (long long)n,
          (long long)first, got[first]);
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
  C_CHECK(bad == 0, "%s: %d guard elements after [%lld] overwritten", what, bad, (long long)n);
}
static void expect_no_leak(void) {
  int64_t live = ovl_req_live();
  C_CHECK(live == 0, "ovl_req_live() = %lld after completion (leaked requests)", (long long)live);
}

/* ---- partition ------------------------------------------------------------------ */

static void test_part(void) {
  static const int64_t NS[] = {0, 1, 2, 5, 10, 1000, 100003};
  static const int ND[] = {1, 2, 3, 4, 7, 16, OVL_LANES_MAX};
  for (int a = 0; a < (int)(sizeof NS / sizeof NS[0]); a++)
    for (int b = 0; b < (int)(sizeof ND / sizeof ND[0]); b++) {
      int64_t n = NS[a];
      int nd = ND[b];
      set_case("ovl_lanes_part n=%lld ndup=%d", (long long)n, nd);
      int64_t chunk = (n + nd - 1) / nd, sum = 0, prev_end = 0;
      int last_nonempty = -1, nonempty = 0;
      for (int c = 0; c < nd; c++) {
        int64_t off = -99, len = -99;
        ovl_lanes_part(n, nd, c, &off, &len);
        C_CHECK(off == prev_end, "part %d: off %lld, expected %lld (contiguous)", c, (long long)off,
                (long long)prev_end);
        C_CHECK(len >= 0 && len <= chunk, "part %d: len %lld outside [0, ceil(n/ndup) = %lld]", c, (long long)len,
                (long long)chunk);
        int64_t want = n - (int64_t)c * chunk;
        want = want < 0 ? 0 : want > chunk ? chunk : want;
        C_CHECK(len == want, "part %d: len %lld, expected %lld", c, (long long)len, (long long)want);
        C_CHECK(off >= 0 && off + len <= n, "part %d: [%lld, %lld) outside [0, %lld)", c, (long long)off,
                (long long)(off + len), (long long)n);
        if (len > 0) {
          C_CHECK(last_nonempty == c - 1, "part %d non-empty after an empty part", c);
          last_nonempty = c;
          nonempty++;
        }
        sum += len;
        prev_end = off + len;
      }
      C_CHECK(sum == n, "parts cover %lld elements, expected %lld", (long long)sum, (long long)n);
      int64_t want_ne = chunk ? (n + chunk - 1) / chunk : 0;
      C_CHECK(nonempty == want_ne, "%d non-empty parts, expected %lld", nonempty, (long long)want_ne);
    }
}

/* Parts of whole blocks: the block split of ovl_lanes_part, in elements; and
 * a broadcast split so, on both back ends, with ndup > blocks (empty parts). */
static void test_part_blocks(MPI_Comm comm, const char *cname) {
  static const int64_t NB[] = {0, 1, 3, 7, 64}, BL[] = {1, 5, 17};
  static const int ND[] = {1, 2, 3, 4, 7};
  for (int a = 0; a < 5; a++)
    for (int b = 0; b < 3; b++)
      for (int d = 0; d < 5; d++) {
        set_case("ovl_lanes_part_blocks nblk=%lld blk=%lld ndup=%d", (long long)NB[a], (long long)BL[b], ND[d]);
        for (int c = 0; c < ND[d]; c++) {
          int64_t bo, bl, off = -1, len = -1;
          ovl_lanes_part(NB[a], ND[d], c, &bo, &bl);
          ovl_lanes_part_blocks(NB[a], BL[b], ND[d], c, &off, &len);
          C_CHECK(off == bo * BL[b] && len == bl * BL[b], "part %d: [%lld, +%lld), expected [%lld, +%lld)", c,
                  (long long)off, (long long)len, (long long)(bo * BL[b]), (long long)(bl * BL[b]));
        }
      }
  int p = csize(comm), r = crank(comm);
  for (int be = 0; be < 2; be++)
    for (int d = 0; d < 5; d++) {
      ovl_lanes L = NULL;
      C_OK(ovl_lanes_create(comm, ND[d], &L));
      if (!L) continue;
      for (int a = 0; a < 5; a++) {
        int64_t nblk = NB[a], blk = 5, n = nblk * blk;
        set_case("ovl_lanes_ibcast_blocks nblk=%lld blk=%lld ndup=%d backend=%s comm=%s", (long long)nblk,
                 (long long)blk, ND[d], be ? "own" : "mpi", cname);
        double buf[64 * 5 + 1];
        for (int64_t x = 0; x <= n; x++) buf[x] = r == p - 1 ? (double)x : -1;
        ovl_coll_cfg cfg = ovl_coll_cfg_default();
        cfg.backend = be ? OVL_BACKEND_OWN : OVL_BACKEND_MPI;
        ovl_req reqs[OVL_LANES_MAX];
        C_OK(ovl_lanes_ibcast_blocks(L, buf, nblk, blk, p - 1, &cfg, reqs));
        C_OK(ovl_req_waitall(ND[d], reqs));
        int bad = 0;
        for (int64_t x = 0; x < n; x++) bad += buf[x] != (double)x;
        C_CHECK(bad == 0, "%d of %lld elements wrong", bad, (long long)n);
        C_CHECK(buf[n] == (r == p - 1 ? (double)n : -1), "element past the end written");
      }
      ovl_lanes_destroy(&L);
    }
  expect_no_leak();
}

/* ---- create / destroy / accessors -------------------------------------------------------- */

static void test_create(MPI_Comm comm, const char *cname) {
  int p = csize(comm), r = crank(comm);
  ovl_lanes L = NULL;
  static const int BAD[3] = {0, -1, OVL_LANES_MAX + 1};
  for (int k = 0; k < 3; k++) {
    set_case("ovl_lanes_create ndup=%d comm=%s p=%d rank=%d", BAD[k], cname, p, r);
    L = NULL;
    C_ERR(ovl_lanes_create(comm, BAD[k], &L), OVL_ERR_ARG);
    C_CHECK(L == NULL, "handle set on error");
  }
  static const int GOOD[4] = {1, 3, 7, OVL_LANES_MAX};
  for (int k = 0; k < 4; k++) {
    int nd = GOOD[k];
    set_case("ovl_lanes_create ndup=%d comm=%s p=%d rank=%d", nd, cname, p, r);
    L = NULL;
    C_OK(ovl_lanes_create(comm, nd, &L));
    C_CHECK(L != NULL, "no handle");
    if (!L) continue;
    C_CHECK(ovl_lanes_count(L) == nd, "count %d", ovl_lanes_count(L));
    C_CHECK(ovl_lanes_size(L) == p, "size %d", ovl_lanes_size(L));
    C_CHECK(ovl_lanes_rank(L) == r, "rank %d", ovl_lanes_rank(L));
    for (int c = 0; c < nd; c++) {
      MPI_Comm lc = ovl_lanes_comm(L, c);
      C_CHECK(lc != MPI_COMM_NULL, "lane %d is MPI_COMM_NULL", c);
      if (lc == MPI_COMM_NULL) continue;
      int res;
      MPI_Comm_compare(lc, comm, &res);
      C_CHECK(res == MPI_CONGRUENT, "lane %d vs parent: compare %d, expected MPI_CONGRUENT (a duplicate)", c, res);
      if (c > 0) {
        MPI_Comm_compare(lc, ovl_lanes_comm(L, c - 1), &res);
        C_CHECK(res == MPI_CONGRUENT, "lane %d vs lane %d: compare %d, expected distinct duplicates", c, c - 1, res);
      }
    }
    C_OK(ovl_lanes_destroy(&L));
    C_CHECK(L == NULL, "destroy did not null the handle");
  }
  set_case("ovl_lanes_destroy NULL-safety");
  L = NULL;
  C_OK(ovl_lanes_destroy(&L));
  C_OK(ovl_lanes_destroy(NULL));
  set_case("ovl_lanes_create(MPI_COMM_NULL) [rank %d]", r);
  L = NULL;
  C_OK(ovl_lanes_create(MPI_COMM_NULL, 3, &L));
  if (L) {
    C_CHECK(ovl_lanes_count(L) == 0, "empty lane set has count %d", ovl_lanes_count(L));
    C_CHECK(ovl_lanes_comm(L, 0) == MPI_COMM_NULL, "empty lane set has a lane 0 communicator");
    C_CHECK(ovl_lanes_rank(L) < 0, "empty lane set has rank %d", ovl_lanes_rank(L));
    C_CHECK(ovl_lanes_size(L) <= 0, "empty lane set has size %d", ovl_lanes_size(L));
    C_OK(ovl_lanes_destroy(&L));
    C_CHECK(L == NULL, "destroy did not null the empty handle");
  }
}

/* Bad ndup on one rank only: the verdict is agreed, every rank fails. */
static void test_create_agreed(MPI_Comm comm, const char *cname) {
  int p = csize(comm), r = crank(comm);
  if (p < 2) return;
  set_case("ovl_lanes_create agreement: rank 0 ndup=0, rank p-1 ndup=65, others 2, comm=%s p=%d rank=%d", cname, p, r);
  ovl_lanes L = NULL;
  int nd = r == 0 ? 0 : r == p - 1 ? OVL_LANES_MAX + 1 : 2;
  C_ERR(ovl_lanes_create(comm, nd, &L), OVL_ERR_ARG);
  C_CHECK(L == NULL, "handle set on agreed error");
  ovl_lanes_destroy(&L);
  /* and the communicator is still usable by a lane set afterwards */
  C_OK(ovl_lanes_create(comm, 2, &L));
  if (L) C_CHECK(ovl_lanes_count(L) == 2, "count %d", ovl_lanes_count(L));
  ovl_lanes_destroy(&L);
}

/* ---- split collectives -------------------------------------------------------------------- */

typedef struct bcase {
  const char *label;
  ovl_coll_cfg cfg;
} bcase;

static bcase backend_case(int k) {
  bcase b;
  b.cfg = ovl_coll_cfg_default();
  if (k == 0) {
    b.label = "mpi";
  } else if (k == 1) {
    b.label = "own/auto";
    b.cfg.backend = OVL_BACKEND_OWN;
  } else {
    b.label = "own/chain(seg 100)+rabenseifner+ring+recdbl";
    b.cfg.backend = OVL_BACKEND_OWN;
    b.cfg.bcast = OVL_BCAST_CHAIN;
    b.cfg.segment = 100;
    b.cfg.reduce = OVL_REDUCE_RABENSEIFNER;
    b.cfg.allreduce = OVL_ALLREDUCE_RING;
    b.cfg.allgather = OVL_ALLGATHER_RECDBL;
  }
  return b;
}

static void wait_lanes(int nreq, ovl_req *reqs, int reverse) {
  if (reverse) {
    ovl_req rev[4 * OVL_LANES_MAX];
    for (int k = 0; k < nreq; k++) rev[k] = reqs[nreq - 1 - k];
    C_OK(ovl_req_waitall(nreq, rev));
    for (int k = 0; k < nreq; k++) {
      C_CHECK(rev[k] == NULL, "request %d not NULL after waitall", nreq - 1 - k);
      reqs[nreq - 1 - k] = rev[k];
    }
  } else {
    C_OK(ovl_req_waitall(nreq, reqs));
    for (int k = 0; k < nreq; k++) C_CHECK(reqs[k] == NULL, "request %d not NULL after waitall", k);
  }
}

/* form: 0 = blocking, 1 = i-form waited one collective at a time,
 * 2 = all four i-forms in flight, waitall over 4*ndup requests reversed.
 * inplace: allreduce / allgather in place, reduce in place at the root. */
static void lanes_colls(ovl_lanes L, MPI_Comm comm, const char *cname, const bcase *bc, int64_t n, int form,
                        int inplace) {
  int p = csize(comm), r = crank(comm), nd = ovl_lanes_count(L);
  int broot = p - 1, rroot = p / 2;
  static const char *const FORM[3] = {"blocking", "i-form + waitall", "4 i-forms in flight + reversed waitall"};
  set_case("lanes bcast(root %d)/reduce(root %d)/allreduce/allgather backend=%s ndup=%d n=%lld form=%s%s comm=%s "
           "p=%d rank=%d",
           broot, rroot, bc->label, nd, (long long)n, FORM[form], inplace ? " in-place" : "", cname, p, r);
  int salt = (int)(n % 17) + nd + 3 * form;
  int64_t tot = (int64_t)p * n;
  double *bb = tb(n), *bref = tb(n);
  double *rs = tb(n), *rr = tb(n), *rref = tb(n);
  double *as = tb(n), *ar = tb(n), *aref = tb(n);
  double *gs = tb(n), *gr = tb(tot), *gref = tb(tot);
  /* inputs and references */
  if (r == broot) fill_val(bb, r, n, salt);
  else fill_const(bb, n, SENT);
  memcpy(bref, bb, sizeof(double) * (size_t)n);
  MPI_Bcast(bref, (int)n, MPI_DOUBLE, broot, comm);
  fill_val(rs, r, n, salt + 1);
  MPI_Reduce(rs, rref, (int)n, MPI_DOUBLE, MPI_SUM, rroot, comm);
  fill_val(as, r, n, salt + 2);
  MPI_Allreduce(as, aref, (int)n, MPI_DOUBLE, MPI_SUM, comm);
  fill_val(gs, r, n, salt + 3);
  MPI_Allgather(gs, (int)n, MPI_DOUBLE, gref, (int)n, MPI_DOUBLE, comm);
  fill_const(rr, n, SENT);
  fill_const(ar, n, SENT);
  fill_const(gr, tot, SENT);
  const double *rsp = rs, *asp = as, *gsp = gs;
  double *rrp = r == rroot ? rr : (inplace ? NULL : rr);
  if (inplace) {
    if (r == rroot) {
      fill_val(rr, r, n, salt + 1);
      rsp = rr;
    }
    fill_val(ar, r, n, salt + 2);
    asp = ar;
    fill_val(gr + (int64_t)r * n, r, n, salt + 3);
    gsp = gr + (int64_t)r * n;
  }
  if (form == 0) {
    C_OK(ovl_lanes_bcast(L, bb, n, broot, &bc->cfg));
    C_OK(ovl_lanes_reduce(L, rsp, rrp, n, rroot, &bc->cfg));
    C_OK(ovl_lanes_allreduce(L, asp, ar, n, &bc->cfg));
    C_OK(ovl_lanes_allgather(L, gsp, n, gr, &bc->cfg));
  } else {
    ovl_req reqs[4 * OVL_LANES_MAX];
    for (int k = 0; k < 4 * OVL_LANES_MAX; k++) reqs[k] = NULL;
    ovl_req *q0 = reqs, *q1 = reqs + nd, *q2 = reqs + 2 * nd, *q3 = reqs + 3 * nd;
    C_OK(ovl_lanes_ibcast(L, bb, n, broot, &bc->cfg, q0));
    if (form == 1) wait_lanes(nd, q0, 0);
    C_OK(ovl_lanes_ireduce(L, rsp, rrp, n, rroot, &bc->cfg, q1));
    if (form == 1) wait_lanes(nd, q1, 1);
    C_OK(ovl_lanes_iallreduce(L, asp, ar, n, &bc->cfg, q2));
    if (form == 1) wait_lanes(nd, q2, 0);
    C_OK(ovl_lanes_iallgather(L, gsp, n, gr, &bc->cfg, q3));
    if (form == 1) wait_lanes(nd, q3, 1);
    if (form == 2) wait_lanes(4 * nd, reqs, 1);
    for (int k = 4 * nd; k < 4 * OVL_LANES_MAX; k++) C_CHECK(reqs[k] == NULL, "reqs[%d] beyond ndup written", k);
  }
  expect_buf("bcast", bb, bref, n);
  expect_guard("bcast", bb, n);
  if (r == rroot) expect_buf("reduce at root", rr, rref, n);
  else if (rrp) expect_fill("reduce rbuf at non-root (not significant, must stay untouched)", rr, n, SENT);
  expect_guard("reduce", rr, n);
  if (rsp == rs) expect_val("reduce sbuf (const)", rs, r, n, salt + 1);
  expect_buf("allreduce", ar, aref, n);
  expect_guard("allreduce", ar, n);
  if (!inplace) expect_val("allreduce sbuf (const)", as, r, n, salt + 2);
  expect_buf("allgather", gr, gref, tot);
  expect_guard("allgather", gr, tot);
  if (!inplace) expect_val("allgather sbuf (const)", gs, r, n, salt + 3);
  expect_no_leak();
  free(bb);
  free(bref);
  free(rs);
  free(rr);
  free(rref);
  free(as);
  free(ar);
  free(aref);
  free(gs);
  free(gr);
  free(gref);
}

static void lanes_ring(ovl_lanes L, MPI_Comm comm, const char *cname, int64_t n) {
  int p = csize(comm), r = crank(comm), nd = ovl_lanes_count(L);
  int next = (r + 1) % p, prev = (r + p - 1) % p;
  set_case("lanes isend/irecv ring ndup=%d n=%lld comm=%s p=%d rank=%d", nd, (long long)n, cname, p, r);
  double *s = tb(n), *d = tb(n), *w = tb(n);
  fill_val(s, r, n, 40 + nd);
  fill_const(d, n, SENT);
  ovl_req reqs[2 * OVL_LANES_MAX];
  for (int k = 0; k < 2 * nd; k++) reqs[k] = NULL;
  C_OK(ovl_lanes_irecv(L, d, n, prev, reqs));
  C_OK(ovl_lanes_isend(L, s, n, next, reqs + nd));
  if (n % 2) {
    wait_lanes(2 * nd, reqs, 1);
  } else {
    int got = 0, idx = -2, live = 0;
    for (int k = 0; k < 2 * nd; k++) live += reqs[k] != NULL;
    for (int k = 0; k < live; k++) {
      C_OK(ovl_req_waitany(2 * nd, reqs, &idx));
      if (idx < 0) break;
      got++;
    }
    C_CHECK(got == live, "waitany reported %d of %d requests", got, live);
    C_OK(ovl_req_waitany(2 * nd, reqs, &idx));
    C_CHECK(idx == -1, "waitany after all: %d", idx);
  }
  fill_val(w, prev, n, 40 + nd);
  expect_buf("received", d, w, n);
  expect_guard("received", d, n);
  expect_val("send buffer (const)", s, r, n, 40 + nd);
  expect_no_leak();
  free(s);
  free(d);
  free(w);
}

static void test_lanes_colls(MPI_Comm comm, const char *cname) {
  static const int ND[] = {1, 2, 3, 4, 7};
  static const int64_t SZ[] = {0, 1, 7, 1000, LARGE};
  for (int a = 0; a < 5; a++) {
    ovl_lanes L = NULL;
    set_case("ovl_lanes_create ndup=%d comm=%s", ND[a], cname);
    C_OK(ovl_lanes_create(comm, ND[a], &L));
    if (!L) continue;
    for (int k = 0; k < 3; k++) {
      bcase bc = backend_case(k);
      for (int s = 0; s < 5; s++)
        for (int form = 0; form < 3; form++)
          for (int inplace = 0; inplace < 2; inplace++) {
            if (SZ[s] == LARGE && (inplace || (form > 0 && ND[a] != 1 && ND[a] != 4))) continue;
            lanes_colls(L, comm, cname, &bc, SZ[s], form, inplace);
          }
    }
    for (int s = 0; s < 5; s++) lanes_ring(L, comm, cname, SZ[s]);
    set_case("ovl_lanes_destroy ndup=%d comm=%s", ND[a], cname);
    C_OK(ovl_lanes_destroy(&L));
  }
}

/* ---- pipelines: Algorithm 2 ------------------------------------------------------------------ */

/* Global N x N matrix and vector, N = q*nb: small integers. */
static double Aij(int64_t g, int64_t h) { return (double)((g * 7 + h * 3) % 11) - 5.0; }
static double xv(int64_t h) { return (double)(h % 13) - 6.0; }

typedef struct alg2 {
  ovl_lanes row, col;
  int i, j, ndup, mid;
  int64_t nb;
  const double *yloc;
  double *yout;
  const ovl_coll_cfg *cfg;
  int calls;
} alg2;

/* Stage 0: reduce part c of y_i^(j) over row i to P(i,i) on row lane c.
 * (3-stage form: stage 1 doubles the reduced part on P(i,i), locally, and
 * returns OVL_REQ_NULL on every rank.) Last stage: P(j,j) broadcasts part c
 * of y_j over column j on column lane c. */
static ovl_err alg2_post(void *ctx, int part, int stage, ovl_req *req) {
  alg2 *a = ctx;
  a->calls++;
  int64_t off, len;
  ovl_lanes_part(a->nb, a->ndup, part, &off, &len);
  int diag = a->i == a->j;
  if (stage == 0)
    return ovl_ireduce(a->yloc + off, diag ? a->yout + off : NULL, len, a->i, ovl_lanes_comm(a->row, part), a->cfg,
                       req);
  if (a->mid && stage == 1) {
    if (diag)
      for (int64_t k = 0; k < len; k++) a->yout[off + k] *= 2;
    *req = OVL_REQ_NULL;
    return OVL_OK;
  }
  return ovl_ibcast(a->yout + off, len, a->j, ovl_lanes_comm(a->col, part), a->cfg, req);
}

static void check_events(const ovl_pipe_event *ev, int np, int ns) {
  int tot = np * ns;
  int *seen = calloc((size_t)tot + 1, sizeof *seen);
  int bad_order = 0, bad_seq = 0, bad_t = 0, first_bad = -1;
  for (int c = 0; c < np; c++)
    for (int s = 0; s < ns; s++) {
      const ovl_pipe_event *e = &ev[c * ns + s];
      if (e->order < 0 || e->order >= tot || seen[e->order]++) {
        bad_order++;
        if (first_bad < 0) first_bad = c * ns + s;
      }
      if (!(e->t_post >= 0 && e->t_done >= e->t_post)) bad_t++;
      if (s > 0 && !(e->t_post >= ev[c * ns + s - 1].t_done)) {
        bad_seq++;
        if (first_bad < 0) first_bad = c * ns + s;
      }
      if (s > 0 && !(e->order > ev[c * ns + s - 1].order)) bad_seq++;
    }
  C_CHECK(bad_order == 0, "event `order` values are not a permutation of 0..%d (%d bad; first at part %d stage %d)",
          tot - 1, bad_order, first_bad / (ns ? ns : 1), first_bad % (ns ? ns : 1));
  C_CHECK(bad_seq == 0,
          "%d events where stage s+1 was posted before stage s of the same part completed (first part %d stage %d)",
          bad_seq, first_bad / (ns ? ns : 1), first_bad % (ns ? ns : 1));
  C_CHECK(bad_t == 0, "%d events with t_post < 0 or t_done < t_post", bad_t);
  free(seen);
}

static void test_alg2(MPI_Comm world) {
  int P = csize(world), wr = crank(world);
  int q = ovl_isqrt(P);
  int active = wr < q * q, i = wr / q, j = wr % q;
  MPI_Comm row, col;
  MPI_Comm_split(world, active ? i : MPI_UNDEFINED, j, &row);
  MPI_Comm_split(world, active ? j : MPI_UNDEFINED, i, &col);
  if (row != MPI_COMM_NULL) MPI_Comm_set_errhandler(row, MPI_ERRORS_RETURN);
  if (col != MPI_COMM_NULL) MPI_Comm_set_errhandler(col, MPI_ERRORS_RETURN);
  static const int ND[] = {1, 2, 3, 4, 7};
  static const int64_t NB[] = {0, 5, 1000};
  for (int a = 0; a < 5; a++) {
    int nd = ND[a];
    ovl_lanes Lr = NULL, Lc = NULL;
    set_case("Algorithm 2 lanes ndup=%d q=%d %s (i=%d j=%d)", nd, q, active ? "active" : "idle", i, j);
    C_OK(ovl_lanes_create(row, nd, &Lr));
    C_OK(ovl_lanes_create(col, nd, &Lc));
    if (!active) {
      C_CHECK(Lr == NULL || ovl_lanes_count(Lr) == 0, "idle rank: row lane set not empty");
      C_CHECK(Lc == NULL || ovl_lanes_count(Lc) == 0, "idle rank: column lane set not empty");
      ovl_lanes_destroy(&Lr);
      ovl_lanes_destroy(&Lc);
      continue;
    }
    C_CHECK(ovl_lanes_size(Lr) == q && ovl_lanes_rank(Lr) == j, "row lanes size %d rank %d", ovl_lanes_size(Lr),
            ovl_lanes_rank(Lr));
    C_CHECK(ovl_lanes_size(Lc) == q && ovl_lanes_rank(Lc) == i, "col lanes size %d rank %d", ovl_lanes_size(Lc),
            ovl_lanes_rank(Lc));
    for (int b = 0; b < 3; b++) {
      int64_t nb = NB[b], N = q * nb;
      double *yloc = tb(nb), *yloc0 = tb(nb), *yout = tb(nb), *want = tb(nb);
      for (int64_t k = 0; k < nb; k++) {
        double s = 0, t = 0;
        for (int64_t h = 0; h < nb; h++) s += Aij(i * nb + k, j * nb + h) * xv(j * nb + h);
        for (int64_t h = 0; h < N; h++) t += Aij(j * nb + k, h) * xv(h);
        yloc[k] = yloc0[k] = s;
        want[k] = t;
      }
      for (int k = 0; k < 3; k++) {
        bcase bc = backend_case(k);
        for (int mid = 0; mid < 2; mid++)
          for (int withev = 0; withev < 2; withev++) {
            if (!withev && (k != 1 || mid)) continue; /* events = NULL: one configuration */
            int ns = mid ? 3 : 2;
            set_case("pipeline Algorithm 2 (%d stages%s) q=%d ndup=%d nb=%lld backend=%s events=%s (i=%d j=%d)", ns,
                     mid ? ", middle stage local/NULL" : "", q, nd, (long long)nb, bc.label, withev ? "yes" : "NULL", i,
                     j);
            fill_const(yout, nb, SENT);
            alg2 ctx = {Lr, Lc, i, j, nd, mid, nb, yloc, yout, &bc.cfg, 0};
            ovl_pipe_event ev[3 * 8];
            for (int e = 0; e < 3 * 8; e++) ev[e] = (ovl_pipe_event){-1, -1, -1};
            C_OK(ovl_pipeline_run(nd, ns, alg2_post, &ctx, withev ? ev : NULL));
            C_CHECK(ctx.calls == nd * ns, "post called %d times, expected %d", ctx.calls, nd * ns);
            double *w2 = tb(nb);
            for (int64_t e = 0; e < nb; e++) w2[e] = want[e] * (mid ? 2 : 1);
            expect_buf("y (distributed as x) vs serial reference", yout, w2, nb);
            expect_guard("y", yout, nb);
            expect_buf("local product (const)", yloc, yloc0, nb);
            free(w2);
            if (withev) check_events(ev, nd, ns);
            expect_no_leak();
          }
      }
      free(yloc);
      free(yloc0);
      free(yout);
      free(want);
    }
    ovl_lanes_destroy(&Lr);
    ovl_lanes_destroy(&Lc);
    C_CHECK(Lr == NULL && Lc == NULL, "destroy did not null");
  }
  if (row != MPI_COMM_NULL) MPI_Comm_free(&row);
  if (col != MPI_COMM_NULL) MPI_Comm_free(&col);
}

/* ---- pipelines: local stages, order of posting, NULL stages, errors ------------------------ */

typedef struct lp {
  int np, ns, cnt;
  int seq[256]; /* part*ns + stage in the order posted */
  int fail_part, fail_stage;
  ovl_err fail_code;
  int done[8]; /* post count when done(part) was called (ovl_pipeline_run_each), 0: never */
  int ndone;
  int real;    /* stage requests: 0 = all NULL, 1 = allreduce on lane `part` except NULL pattern,
                  2 = allreduce in stage 0 only, later stages local */
  ovl_lanes L; /* for real requests */
  double *d;   /* np x 3 */
  int p;
} lp;

static ovl_err lp_post(void *ctx, int part, int stage, ovl_req *req) {
  lp *x = ctx;
  if (x->cnt < 256) x->seq[x->cnt] = part * x->ns + stage;
  x->cnt++;
  if (part == x->fail_part && stage == x->fail_stage) return ovl_err_set(x->fail_code, "injected failure");
  *req = OVL_REQ_NULL;
  if (!x->real) return OVL_OK;
  double *d = x->d + 3 * part;
  if (stage > 0 && ((part + stage) % 3 == 1 || x->real == 2)) { /* local stage */
    for (int k = 0; k < 3; k++) d[k] += 1;
    return OVL_OK;
  }
  ovl_coll_cfg cfg = ovl_coll_cfg_default();
  if ((part + stage) % 2) {
    cfg.backend = OVL_BACKEND_OWN;
    cfg.allreduce = (part % 2) ? OVL_ALLREDUCE_RING : OVL_ALLREDUCE_RABENSEIFNER;
  }
  return ovl_iallreduce(d, d, 3, ovl_lanes_comm(x->L, part), &cfg, req);
}

static void lp_done(void *ctx, int part) {
  lp *x = ctx;
  if (part >= 0 && part < 8) x->done[part] = x->done[part] ? -1 : x->cnt;
  x->ndone++;
}

static void check_seq(const lp *x) {
  int np = x->np, ns = x->ns, tot = np * ns;
  C_CHECK(x->cnt == tot, "post called %d times, expected %d", x->cnt, tot);
  if (x->cnt != tot || tot > 256) return;
  int pos[256], dup = 0;
  for (int k = 0; k < tot; k++) pos[k] = -1;
  for (int k = 0; k < tot; k++) {
    if (pos[x->seq[k]] >= 0) dup++;
    pos[x->seq[k]] = k;
  }
  C_CHECK(dup == 0, "%d (part, stage) pairs posted more than once", dup);
  int bad = 0;
  for (int c = 0; c < np; c++)
    for (int s = 1; s < ns; s++) bad += !(pos[c * ns + s] > pos[c * ns + s - 1]);
  C_CHECK(bad == 0, "%d stages posted before the previous stage of their part", bad);
  int first_bad = -1;
  for (int c = 0; c < np; c++)
    if (x->seq[c] != c * ns && first_bad < 0) first_bad = c;
  C_CHECK(first_bad < 0,
          "header: 'Stage 0 of every part is posted first, in part order' - post #%d was (part %d, stage %d), "
          "expected (part %d, stage 0)",
          first_bad, first_bad >= 0 ? x->seq[first_bad] / ns : -1, first_bad >= 0 ? x->seq[first_bad] % ns : -1,
          first_bad);
}

static void test_pipeline_local(void) {
  static const int NP[] = {1, 3, 5}, NS[] = {1, 2, 4};
  for (int a = 0; a < 3; a++)
    for (int b = 0; b < 3; b++) {
      set_case("pipeline, every stage returns OVL_REQ_NULL, nparts=%d nstages=%d", NP[a], NS[b]);
      lp x;
      memset(&x, 0, sizeof x);
      x.np = NP[a];
      x.ns = NS[b];
      x.fail_part = -1;
      ovl_pipe_event ev[32];
      C_OK(ovl_pipeline_run(x.np, x.ns, lp_post, &x, ev));
      check_seq(&x);
      check_events(ev, x.np, x.ns);
      expect_no_leak();
    }
}

/* Real requests (allreduce on lane `part`, both back ends) mixed with local
 * stages returning OVL_REQ_NULL; stage 0 is always real. */
static void test_pipeline_mixed(MPI_Comm comm, const char *cname) {
  int p = csize(comm);
  static const int NP[] = {1, 2, 4, 7}, NS[] = {1, 3, 5};
  for (int a = 0; a < 4; a++) {
    ovl_lanes L = NULL;
    set_case("pipeline mixed: lanes ndup=%d comm=%s", NP[a], cname);
    C_OK(ovl_lanes_create(comm, NP[a], &L));
    if (!L) continue;
    for (int b = 0; b < 3; b++) {
      set_case("pipeline mixed real/NULL stages nparts=%d nstages=%d comm=%s p=%d", NP[a], NS[b], cname, p);
      lp x;
      memset(&x, 0, sizeof x);
      x.np = NP[a];
      x.ns = NS[b];
      x.fail_part = -1;
      x.real = 1;
      x.L = L;
      x.p = p;
      double d[3 * 8];
      x.d = d;
      for (int k = 0; k < 3 * 8; k++) d[k] = 1;
      ovl_pipe_event ev[64];
      C_OK(ovl_pipeline_run_each(x.np, x.ns, lp_post, &x, ev, NULL, lp_done));
      check_seq(&x);
      check_events(ev, x.np, x.ns);
      /* done(c) once per part, after its last stage was posted */
      C_CHECK(x.ndone == x.np, "done called %d times, expected %d", x.ndone, x.np);
      for (int c = 0; c < x.np; c++) {
        int last = -1;
        for (int k = 0; k < x.cnt && k < 256; k++)
          if (x.seq[k] == c * x.ns + x.ns - 1) last = k;
        C_CHECK(x.done[c] > last, "done(%d) at post count %d, its last stage was post #%d", c, x.done[c], last);
      }
      for (int c = 0; c < x.np; c++) {
        double w = 1;
        for (int s = 0; s < x.ns; s++) w = (s > 0 && (c + s) % 3 == 1) ? w + 1 : w * p;
        C_CHECK(d[3 * c] == w && d[3 * c + 1] == w && d[3 * c + 2] == w, "part %d: value %.17g, expected %.17g", c,
                d[3 * c], w);
      }
      expect_no_leak();
    }
    ovl_lanes_destroy(&L);
  }
}

/* Arrival order: part 0's stage 0 is a receive that only part 1's stage 1
 * satisfies (a self-message on MPI_COMM_SELF). A pipeline that waited for
 * part 0 first would hang. */
typedef struct arr {
  double rbuf[4], sbuf[4], abuf[4];
} arr;
static ovl_err arr_post(void *ctx, int part, int stage, ovl_req *req) {
  arr *a = ctx;
  *req = OVL_REQ_NULL;
  if (part == 0 && stage == 0) return ovl_irecv(a->rbuf, 4, 0, 77, MPI_COMM_SELF, req);
  if (part == 1 && stage == 0) {
    ovl_coll_cfg cfg = ovl_coll_cfg_default();
    return ovl_iallreduce(a->abuf, a->abuf, 4, MPI_COMM_SELF, &cfg, req);
  }
  if (part == 1 && stage == 1) return ovl_isend(a->sbuf, 4, 0, 77, MPI_COMM_SELF, req);
  return OVL_OK; /* part 0 stage 1: nothing */
}
static void test_pipeline_arrival(void) {
  set_case("pipeline arrival order: part 0 waits for a message part 1 sends in its stage 1");
  arr a;
  for (int k = 0; k < 4; k++) {
    a.rbuf[k] = SENT;
    a.sbuf[k] = 10 + k;
    a.abuf[k] = k;
  }
  ovl_pipe_event ev[4];
  C_OK(ovl_pipeline_run(2, 2, arr_post, &a, ev));
  for (int k = 0; k < 4; k++) C_CHECK(a.rbuf[k] == 10 + k, "received [%d] = %g", k, a.rbuf[k]);
  check_events(ev, 2, 2);
  C_CHECK(ev[0].order > ev[2].order, "part 0 stage 0 (order %d) should complete after part 1 stage 0 (order %d)",
          ev[0].order, ev[2].order);
  C_CHECK(ev[0].t_done >= ev[3].t_post, "part 0 stage 0 done at %g before its sender was posted at %g", ev[0].t_done,
          ev[3].t_post);
  expect_no_leak();
}

static void test_pipeline_errors(MPI_Comm comm, const char *cname) {
  /* error on the very first post */
  set_case("pipeline: post fails at (part 0, stage 0)");
  lp x;
  memset(&x, 0, sizeof x);
  x.np = 3;
  x.ns = 2;
  x.fail_part = 0;
  x.fail_stage = 0;
  x.fail_code = OVL_ERR_NUMERIC;
  C_ERR(ovl_pipeline_run(x.np, x.ns, lp_post, &x, NULL), OVL_ERR_NUMERIC);
  C_CHECK(x.cnt == 1, "post called %d times after the first failed", x.cnt);
  expect_no_leak();
  /* error later, NULL requests everywhere */
  set_case("pipeline: post fails at (part 1, stage 1), NULL requests");
  memset(&x, 0, sizeof x);
  x.np = 3;
  x.ns = 3;
  x.fail_part = 1;
  x.fail_stage = 1;
  x.fail_code = OVL_ERR_IO;
  ovl_pipe_event ev[16];
  C_ERR(ovl_pipeline_run(x.np, x.ns, lp_post, &x, ev), OVL_ERR_IO);
  C_CHECK(strstr(ovl_errmsg(), "injected") != NULL, "error message not kept: '%s'", ovl_errmsg());
  expect_no_leak();
  /* error while real requests are in flight (allreduce on lanes of comm;
   * every rank fails at the same point, so the collectives match) */
  ovl_lanes L = NULL;
  C_OK(ovl_lanes_create(comm, 4, &L));
  if (L) {
    set_case("pipeline: post fails at (part 2, stage 1) with real requests in flight, comm=%s", cname);
    memset(&x, 0, sizeof x);
    x.np = 4;
    x.ns = 2;
    x.fail_part = 2;
    x.fail_stage = 1;
    x.fail_code = OVL_ERR_NUMERIC;
    x.real = 2; /* only stage 0 (posted in part order on every rank) is a collective: the ranks' posted sets agree */
    x.L = L;
    double d[3 * 4];
    for (int k = 0; k < 12; k++) d[k] = 1;
    x.d = d;
    C_ERR(ovl_pipeline_run(x.np, x.ns, lp_post, &x, NULL), OVL_ERR_NUMERIC);
    C_CHECK(ovl_req_live() == 0,
            "%lld requests left live after the pipeline returned the error (the caller cannot reach them)",
            (long long)ovl_req_live());
    /* the lanes still work afterwards (nothing half-posted on them) */
    MPI_Barrier(comm);
    double v[3] = {1, 1, 1};
    ovl_coll_cfg own = ovl_coll_cfg_default();
    own.backend = OVL_BACKEND_OWN;
    for (int c = 0; c < 4; c++) {
      ovl_req rq = NULL;
      C_OK(ovl_iallreduce(v, v, 3, ovl_lanes_comm(L, c), &own, &rq));
      C_OK(ovl_req_wait(&rq));
    }
    double p4 = (double)csize(comm) * csize(comm) * csize(comm) * csize(comm);
    C_CHECK(v[0] == p4 && v[2] == p4, "allreduce on the lanes after the failed pipeline: %g, expected %g", v[0], p4);
    ovl_lanes_destroy(&L);
  }
  /* degenerate sizes */
  set_case("pipeline: nparts=0 / nstages=0 / negative");
  memset(&x, 0, sizeof x);
  x.fail_part = -1;
  ovl_err rc = ovl_pipeline_run(0, 3, lp_post, &x, NULL);
  C_CHECK(rc == OVL_OK || rc == OVL_ERR_ARG, "nparts=0: %s", ovl_err_name(rc));
  rc = ovl_pipeline_run(3, 0, lp_post, &x, NULL);
  C_CHECK(rc == OVL_OK || rc == OVL_ERR_ARG, "nstages=0: %s", ovl_err_name(rc));
  C_CHECK(x.cnt == 0, "post called %d times with nothing to run", x.cnt);
  C_ERR(ovl_pipeline_run(-1, 2, lp_post, &x, NULL), OVL_ERR_ARG);
  C_ERR(ovl_pipeline_run(2, -1, lp_post, &x, NULL), OVL_ERR_ARG);
  C_CHECK(x.cnt == 0, "post called %d times on argument errors", x.cnt);
  expect_no_leak();
}

/* ---- main --------------------------------------------------------------------------------- */

/* Run one section; OVL_TEST_VERBOSE=1 prints its time on rank 0. */
#define SECTION(call)                                                                                                  \
  do {                                                                                                                 \
    double t_s_ = MPI_Wtime();                                                                                         \
    call;                                                                                                              \
    if (g_verbose && W_rank == 0) fprintf(stderr, "section %-40s %7.2f s\n", #call, MPI_Wtime() - t_s_);               \
  } while (0)

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &W_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &W_size);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_alarm;
  sigaction(SIGALRM, &sa, NULL);
  g_verbose = getenv("OVL_TEST_VERBOSE") != NULL;

  /* ranks reversed relative to MPI_COMM_WORLD */
  MPI_Comm rev;
  MPI_Comm_split(MPI_COMM_WORLD, 0, W_size - 1 - W_rank, &rev);
  /* MPI errors inside ovl come back as OVL_ERR_MPI and are reported with the
   * case instead of aborting the job (lanes inherit it through MPI_Comm_dup) */
  MPI_Comm_set_errhandler(rev, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);

  SECTION(test_part());
  SECTION(test_part_blocks(rev, "rev"));
  SECTION(test_create(rev, "rev"));
  SECTION(test_lanes_colls(rev, "rev"));
  SECTION(test_pipeline_local());
  SECTION(test_pipeline_arrival());
  SECTION(test_pipeline_mixed(rev, "rev"));
  SECTION(test_alg2(MPI_COMM_WORLD));
  SECTION(test_pipeline_errors(rev, "rev"));
  SECTION(test_create_agreed(rev, "rev"));

  set_case("final");
  alarm(0);
  C_CHECK(ovl_req_live() == 0, "ovl_req_live() = %lld at the end (leaked requests)", (long long)ovl_req_live());
  MPI_Comm_free(&rev);
  int rc = t_finish("test_lanes");
  MPI_Finalize();
  return rc;
}
