/* ovl's own nonblocking collectives: schedules of rounds.
 *
 * A schedule is a list of rounds. Each round posts its sends and receives
 * together (MPI_Isend/MPI_Irecv); when all of them have completed, its local
 * operations (sums, copies) run and the next round is posted. Progress is
 * made only when the owner calls ovl_i_sched_progress (through ovl_req_test/wait).
 *
 * The algorithms work in "virtual ranks" vr = (rank - root) mod p and use one
 * binomial tree T: parent(vr) = vr - lowbit(vr), children vr + m for
 * m = lowbit(vr)/2, ..., 1 (for vr = 0, every power of two below p). The
 * subtree of vr is the contiguous range [vr, vr + lowbit(vr)), which makes
 * scatter and gather of contiguous blocks natural. Blocks of a buffer of n
 * elements are the balanced partition ovl_block_off/len(n, p, k).
 */
#include <stdlib.h>
#include <string.h>

#include "comm/comm_impl.h"

/* ---- per-communicator tags ------------------------------------------------ */

#define OVL_TAG_BASE  4096
#define OVL_TAG_RANGE 16384

static int g_tag_key = MPI_KEYVAL_INVALID;

static int tag_delete(MPI_Comm comm, int key, void *val, void *extra) {
  (void)comm, (void)key, (void)extra;
  free(val);
  return MPI_SUCCESS;
}

static ovl_err next_tag(MPI_Comm comm, int *tag) {
  if (g_tag_key == MPI_KEYVAL_INVALID)
    OVL_MPI(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, tag_delete, &g_tag_key, NULL));
  int *ctr = NULL, found = 0;
  OVL_MPI(MPI_Comm_get_attr(comm, g_tag_key, &ctr, &found));
  if (!found) {
    ctr = calloc(1, sizeof *ctr);
    if (!ctr) return ovl_err_set(OVL_ERR_NOMEM, "cannot allocate a tag counter");
    OVL_MPI(MPI_Comm_set_attr(comm, g_tag_key, ctr));
  }
  *tag = OVL_TAG_BASE + (*ctr % OVL_TAG_RANGE);
  *ctr = (*ctr + 1) % OVL_TAG_RANGE;
  return OVL_OK;
}

/* ---- builders ---------------------------------------------------------------- */

ovl_err ovl_i_sched_init(sched *s, MPI_Comm comm) {
  memset(s, 0, sizeof *s);
  s->comm = comm;
  s->vkind = OVL_VOL_OTHER;
  return OVL_OK;
}

static ovl_err push(sched *s, sop op) {
  if (s->nops == s->cap) {
    int cap = s->cap ? 2 * s->cap : 16;
    sop *n = realloc(s->ops, sizeof(sop) * (size_t)cap);
    if (!n) return ovl_err_set(OVL_ERR_NOMEM, "cannot grow a schedule to %d operations", cap);
    s->ops = n;
    s->cap = cap;
  }
  s->ops[s->nops++] = op;
  return OVL_OK;
}

static ovl_err push_split(sched *s, int kind, int peer, double *a, const double *b, int64_t n) {
  for (int64_t off = 0; off < n; off += OVL_MSG_MAX_ELEMS) {
    int64_t len = n - off < OVL_MSG_MAX_ELEMS ? n - off : OVL_MSG_MAX_ELEMS;
    sop op = {kind, peer, (int)len, a ? a + off : NULL, b ? b + off : NULL};
    OVL_TRY(push(s, op));
  }
  return OVL_OK;
}

ovl_err ovl_i_sched_send(sched *s, int peer, const double *buf, int64_t n) {
  ovl_i_volume_add(s->vkind, s->comm, peer, n);
  return n > 0 ? push_split(s, SOP_SEND, peer, NULL, buf, n) : OVL_OK;
}
ovl_err ovl_i_sched_recv(sched *s, int peer, double *buf, int64_t n) {
  return n > 0 ? push_split(s, SOP_RECV, peer, buf, NULL, n) : OVL_OK;
}
ovl_err ovl_i_sched_sum(sched *s, double *dst, const double *src, int64_t n) {
  return n > 0 ? push_split(s, SOP_SUM, -1, dst, src, n) : OVL_OK;
}
ovl_err ovl_i_sched_copy(sched *s, double *dst, const double *src, int64_t n) {
  return n > 0 && dst != src ? push_split(s, SOP_COPY, -1, dst, src, n) : OVL_OK;
}
ovl_err ovl_i_sched_round(sched *s) {
  if (s->nops == 0 || s->ops[s->nops - 1].kind == SOP_END) return OVL_OK;
  sop op = {SOP_END, -1, 0, NULL, NULL};
  return push(s, op);
}

ovl_err ovl_i_sched_tmp(sched *s, int64_t n, double **out) {
  if (s->tmp) return ovl_err_set(OVL_ERR_INTERNAL, "schedule scratch requested twice");
  OVL_TRY(ovl_malloc(sizeof(double) * (size_t)(n > 0 ? n : 1), &s->tmp));
  *out = s->tmp;
  return OVL_OK;
}

ovl_err ovl_i_sched_commit(sched *s) {
  OVL_TRY(ovl_i_sched_round(s));
  int maxc = 0, c = 0;
  for (int i = 0; i < s->nops; i++) {
    if (s->ops[i].kind == SOP_SEND || s->ops[i].kind == SOP_RECV) c++;
    if (s->ops[i].kind == SOP_END) {
      if (c > maxc) maxc = c;
      c = 0;
    }
  }
  s->mcap = maxc > 0 ? maxc : 1;
  s->mreq = malloc(sizeof(MPI_Request) * (size_t)s->mcap);
  if (!s->mreq) return ovl_err_set(OVL_ERR_NOMEM, "cannot allocate %d requests", s->mcap);
  if (s->nops > 0) OVL_TRY(next_tag(s->comm, &s->tag));
  return OVL_OK;
}

void ovl_i_sched_free(sched *s) {
  free(s->ops);
  free(s->mreq);
  ovl_free(&s->tmp);
  memset(s, 0, sizeof *s);
}

/* ---- progress ------------------------------------------------------------------ */

#ifdef OVL_SMPI
#include <errno.h>
#include <simgrid/actor.h>
#include <simgrid/exec.h>
#include <simgrid/host.h>
#include <stdio.h>
/* SimGrid SMPI (docs/lab/smpi-reproductions.md, "The reductions' arithmetic"
 * and "Mechanisms"): the simulated network moves bytes, but a real reduction
 * also adds them up on the receiving process's core, and cannot post its next
 * round meanwhile. Rates in bytes per simulated second, from the environment
 * (smpi/smpirun.sh sets them):
 *   OVL_SMPI_SUMRATE   every sum of a schedule, per rank (--sumrate);
 *   OVL_SMPI_COPYRATE  every copy of a schedule, per rank (a reduction
 *                      copies its input in its first round, so at its post);
 *   OVL_SMPI_NODEMEM   > 0 (the node's memory rate, which the platform
 *                      stampede2mech gives its host m<i> beside the node s<i>,
 *                      one flop per byte): these charges run on m<i>, each
 *                      bounded by its per-rank rate, so the ranks of a node
 *                      share the node's rate; unset: a sleep (the ranks of a
 *                      node charge in parallel, as on their own cores).
 * The calling rank can post nothing meanwhile. Unset or 0: free. */
static double sched_rate(const char *var, double *cache) {
  if (*cache < 0) {
    const char *e = getenv(var);
    char *end = NULL;
    errno = 0;
    double v = e && *e ? strtod(e, &end) : 0;
    if (e && *e && (errno || *end || !(v >= 0))) {
      ovl_fprintf(stderr, "ovl: %s='%s' is not a rate in bytes per second\n", var, e);
      abort();
    }
    *cache = v;
  }
  return *cache;
}
static double g_sumrate = -1, g_copyrate = -1, g_nodemem = -1;

/* The node's memory host (m<i> for the node s<i>), or NULL. */
static sg_host_t sched_memhost(void) {
  if (sched_rate("OVL_SMPI_NODEMEM", &g_nodemem) <= 0) return NULL;
  const char *h = sg_host_get_name(sg_host_self());
  char name[256];
  if (!h || h[0] == '\0' || strlen(h) + 1 >= sizeof name) return NULL;
  snprintf(name, sizeof name, "m%s", h + 1);
  return sg_host_by_name(name);
}

/* Spend bytes at rate (per rank), on the node's memory host when there is one. */
static void sched_charge(double bytes, double rate) {
  if (!(bytes > 0) || !(rate > 0)) return;
  sg_host_t m = sched_memhost();
  if (!m) {
    sg_actor_sleep_for(bytes / rate);
    return;
  }
  sg_exec_t e = sg_actor_exec_init(bytes);
  sg_exec_set_host(e, m);
  sg_exec_set_bound(e, rate);
  sg_exec_start(e);
  sg_exec_wait(e);
}
#endif

ovl_err ovl_i_sched_progress(sched *s, int *done) {
  for (;;) {
    if (s->posted) {
      int flag = 1;
/* MPICH defines MPI_STATUSES_IGNORE as (MPI_Status *)1, which GCC 12 reads
 * as a zero-sized array (a false -Wstringop-overflow). */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpragmas"
#pragma GCC diagnostic ignored "-Wstringop-overflow"
      if (s->nm > 0) OVL_MPI(MPI_Testall(s->nm, s->mreq, &flag, MPI_STATUSES_IGNORE));
#pragma GCC diagnostic pop
      if (!flag) {
        *done = 0;
        return OVL_OK;
      }
      int i = s->cur;
      double summed = 0, copied = 0;
      for (; i < s->nops && s->ops[i].kind != SOP_END; i++) {
        sop *o = &s->ops[i];
        if (o->kind == SOP_SUM) {
          for (int k = 0; k < o->count; k++) o->a[k] += o->b[k];
          summed += (double)o->count;
        } else if (o->kind == SOP_COPY) {
          memmove(o->a, o->b, sizeof(double) * (size_t)o->count);
          copied += (double)o->count;
        }
      }
#ifdef OVL_SMPI
      sched_charge(summed * sizeof(double), sched_rate("OVL_SMPI_SUMRATE", &g_sumrate));
      sched_charge(copied * sizeof(double), sched_rate("OVL_SMPI_COPYRATE", &g_copyrate));
#else
      (void)summed, (void)copied;
#endif
      s->cur = i + 1;
      s->posted = 0;
      s->nm = 0;
    }
    if (s->cur >= s->nops) {
      *done = 1;
      return OVL_OK;
    }
    for (int i = s->cur; i < s->nops && s->ops[i].kind != SOP_END; i++) {
      sop *o = &s->ops[i];
      if (o->kind == SOP_SEND)
        OVL_MPI(MPI_Isend(o->b, o->count, MPI_DOUBLE, o->peer, s->tag, s->comm, &s->mreq[s->nm++]));
      else if (o->kind == SOP_RECV)
        OVL_MPI(MPI_Irecv(o->a, o->count, MPI_DOUBLE, o->peer, s->tag, s->comm, &s->mreq[s->nm++]));
    }
    s->posted = 1;
  }
}

/* ---- algorithm helpers ------------------------------------------------------------ */

static int is_pow2(int p) { return p > 0 && (p & (p - 1)) == 0; }
static int absr(int vr, int root, int p) { return (vr + root) % p; }
static int lowbit_vr(int vr, int p) { /* lowbit(vr), or for vr = 0 the power of two >= p */
  if (vr > 0) return vr & -vr;
  int m = 1;
  while (m < p) m <<= 1;
  return m;
}
static int64_t boff(int64_t n, int p, int k) { return k >= p ? n : ovl_block_off(n, p, k); }
/* Elements of blocks [a, b) (b clipped to p). */
static int64_t brange(int64_t n, int p, int a, int b) { return boff(n, p, b < p ? b : p) - boff(n, p, a); }

/* Binomial broadcast of buf[lo, lo+len) over tree T. */
static ovl_err tree_bcast(sched *s, double *buf, int64_t len, int root, int p, int rank) {
  int vr = (rank - root + p) % p, lb = lowbit_vr(vr, p);
  if (vr > 0) {
    OVL_TRY(ovl_i_sched_recv(s, absr(vr - lb, root, p), buf, len));
    OVL_TRY(ovl_i_sched_round(s));
  }
  for (int m = lb / 2; m >= 1; m /= 2)
    if (vr + m < p) OVL_TRY(ovl_i_sched_send(s, absr(vr + m, root, p), buf, len));
  return ovl_i_sched_round(s);
}

/* Ring allgather of the p blocks of buf (balanced partition of n) in virtual
 * rank space: vr starts owning block vr. */
static ovl_err ring_allgather_blocks(sched *s, double *buf, int64_t n, int root, int p, int rank) {
  int vr = (rank - root + p) % p;
  int right = absr((vr + 1) % p, root, p), left = absr((vr - 1 + p) % p, root, p);
  for (int st = 0; st < p - 1; st++) {
    int sb = (vr - st + 2 * p) % p, rb = (vr - st - 1 + 2 * p) % p;
    OVL_TRY(ovl_i_sched_send(s, right, buf + boff(n, p, sb), brange(n, p, sb, sb + 1)));
    OVL_TRY(ovl_i_sched_recv(s, left, buf + boff(n, p, rb), brange(n, p, rb, rb + 1)));
    OVL_TRY(ovl_i_sched_round(s));
  }
  return OVL_OK;
}

/* ---- bcast ------------------------------------------------------------------------ */

ovl_err ovl_i_own_bcast(sched *s, ovl_alg alg, double *buf, int64_t n, int root, int p, int rank,
                        const ovl_coll_cfg *cfg) {
  if (p == 1 || n == 0) return OVL_OK;
  int vr = (rank - root + p) % p;
  switch (alg) {
  case OVL_BCAST_BINOMIAL: return tree_bcast(s, buf, n, root, p, rank);
  case OVL_BCAST_SCATTER_ALLGATHER: {
    int lb = lowbit_vr(vr, p);
    if (vr > 0) { /* my subtree's blocks from the parent */
      OVL_TRY(ovl_i_sched_recv(s, absr(vr - lb, root, p), buf + boff(n, p, vr), brange(n, p, vr, vr + lb)));
      OVL_TRY(ovl_i_sched_round(s));
    }
    for (int m = lb / 2; m >= 1; m /= 2)
      if (vr + m < p)
        OVL_TRY(ovl_i_sched_send(s, absr(vr + m, root, p), buf + boff(n, p, vr + m), brange(n, p, vr + m, vr + 2 * m)));
    OVL_TRY(ovl_i_sched_round(s));
    return ring_allgather_blocks(s, buf, n, root, p, rank);
  }
  case OVL_BCAST_CHAIN: {
    int64_t seg = cfg && cfg->segment > 0 ? cfg->segment : 16384;
    if (seg > n) seg = n; /* one segment; also keeps n + seg from overflowing */
    int64_t nseg = (n + seg - 1) / seg;
    int prev = absr(vr - 1, root, p), next = absr(vr + 1, root, p);
#define SEG(i) (buf + (i)*seg), ((i) == nseg - 1 ? n - (i)*seg : seg)
    if (vr == 0) {
      for (int64_t i = 0; i < nseg; i++) OVL_TRY(ovl_i_sched_send(s, next, SEG(i)));
    } else if (vr == p - 1) {
      for (int64_t i = 0; i < nseg; i++) OVL_TRY(ovl_i_sched_recv(s, prev, SEG(i)));
    } else {
      OVL_TRY(ovl_i_sched_recv(s, prev, SEG(0)));
      OVL_TRY(ovl_i_sched_round(s));
      for (int64_t i = 1; i < nseg; i++) {
        OVL_TRY(ovl_i_sched_send(s, next, SEG(i - 1)));
        OVL_TRY(ovl_i_sched_recv(s, prev, SEG(i)));
        OVL_TRY(ovl_i_sched_round(s));
      }
      OVL_TRY(ovl_i_sched_send(s, next, SEG(nseg - 1)));
    }
#undef SEG
    return ovl_i_sched_round(s);
  }
  case OVL_BCAST_HIER: {
    int g = cfg && cfg->hier_group > 0 ? cfg->hier_group : 0;
    if (g <= 0) g = p > 1 ? ovl_isqrt(p) : 1;
    if (g > p) g = p;
    int L = (p + g - 1) / g, grp = vr / g, li = vr % g;
    int gs = p - grp * g < g ? p - grp * g : g;
    /* level 1: binomial tree T over the group leaders (li == 0) */
    if (li == 0) {
      int lbl = lowbit_vr(grp, L);
      if (grp > 0) {
        OVL_TRY(ovl_i_sched_recv(s, absr((grp - lbl) * g, root, p), buf, n));
        OVL_TRY(ovl_i_sched_round(s));
      }
      for (int m = lbl / 2; m >= 1; m /= 2)
        if (grp + m < L) OVL_TRY(ovl_i_sched_send(s, absr((grp + m) * g, root, p), buf, n));
    }
    /* level 2: binomial tree T inside the group, rooted at its leader */
    int lbg = lowbit_vr(li, gs);
    if (li > 0) {
      OVL_TRY(ovl_i_sched_recv(s, absr(grp * g + li - lbg, root, p), buf, n));
      OVL_TRY(ovl_i_sched_round(s));
    }
    for (int m = lbg / 2; m >= 1; m /= 2)
      if (li + m < gs) OVL_TRY(ovl_i_sched_send(s, absr(grp * g + li + m, root, p), buf, n));
    return ovl_i_sched_round(s);
  }
  default: return ovl_err_set(OVL_ERR_ARG, "'%s' is not a broadcast algorithm", ovl_alg_name(alg));
  }
}

/* ---- reduce ------------------------------------------------------------------------ */

/* Reduce-scatter of acc (n elements, p blocks) in virtual rank space: vr ends
 * with block vr fully reduced. Uses tmp (n elements). */
static ovl_err reduce_scatter_blocks(sched *s, double *acc, double *tmp, int64_t n, int root, int p, int rank,
                                     int force_ring) {
  int vr = (rank - root + p) % p;
  if (is_pow2(p) && !force_ring) { /* recursive halving */
    int lo = 0, hi = p;
    for (int mask = p / 2; mask >= 1; mask /= 2) {
      int partner = absr(vr ^ mask, root, p), mid = lo + (hi - lo) / 2;
      int klo = (vr & mask) ? mid : lo, khi = (vr & mask) ? hi : mid;
      int slo = (vr & mask) ? lo : mid, shi = (vr & mask) ? mid : hi;
      OVL_TRY(ovl_i_sched_send(s, partner, acc + boff(n, p, slo), brange(n, p, slo, shi)));
      OVL_TRY(ovl_i_sched_recv(s, partner, tmp + boff(n, p, klo), brange(n, p, klo, khi)));
      OVL_TRY(ovl_i_sched_sum(s, acc + boff(n, p, klo), tmp + boff(n, p, klo), brange(n, p, klo, khi)));
      OVL_TRY(ovl_i_sched_round(s));
      lo = klo, hi = khi;
    }
    return OVL_OK;
  }
  int right = absr((vr + 1) % p, root, p), left = absr((vr - 1 + p) % p, root, p);
  for (int st = 0; st < p - 1; st++) {
    int sb = (vr - st - 1 + 2 * p) % p, rb = (vr - st - 2 + 2 * p) % p;
    OVL_TRY(ovl_i_sched_send(s, right, acc + boff(n, p, sb), brange(n, p, sb, sb + 1)));
    OVL_TRY(ovl_i_sched_recv(s, left, tmp + boff(n, p, rb), brange(n, p, rb, rb + 1)));
    OVL_TRY(ovl_i_sched_sum(s, acc + boff(n, p, rb), tmp + boff(n, p, rb), brange(n, p, rb, rb + 1)));
    OVL_TRY(ovl_i_sched_round(s));
  }
  return OVL_OK;
}

ovl_err ovl_i_own_reduce(sched *s, ovl_alg alg, const double *sbuf, double *rbuf, int64_t n, int root, int p,
                         int rank) {
  int vr = (rank - root + p) % p;
  if (n == 0) return OVL_OK;
  if (p == 1) return ovl_i_sched_copy(s, rbuf, sbuf, n), ovl_i_sched_round(s);
  double *acc = NULL, *tmp = NULL;
  if (alg == OVL_REDUCE_BINOMIAL) {
    int lb = lowbit_vr(vr, p), has_child = vr + 1 < p && lb > 1;
    if (!has_child) { /* a leaf sends its input as it is */
      OVL_TRY(ovl_i_sched_send(s, absr(vr - lb, root, p), sbuf, n));
      return ovl_i_sched_round(s);
    }
    OVL_TRY(ovl_i_sched_tmp(s, vr == 0 ? n : 2 * n, &tmp));
    acc = vr == 0 ? rbuf : tmp + n;
    OVL_TRY(ovl_i_sched_copy(s, acc, sbuf, n));
    OVL_TRY(ovl_i_sched_round(s));
    for (int m = 1; m < lb; m *= 2) /* smallest subtrees finish first */
      if (vr + m < p) {
        OVL_TRY(ovl_i_sched_recv(s, absr(vr + m, root, p), tmp, n));
        OVL_TRY(ovl_i_sched_sum(s, acc, tmp, n));
        OVL_TRY(ovl_i_sched_round(s));
      }
    if (vr > 0) OVL_TRY(ovl_i_sched_send(s, absr(vr - lb, root, p), acc, n));
    return ovl_i_sched_round(s);
  }
  if (alg != OVL_REDUCE_RABENSEIFNER)
    return ovl_err_set(OVL_ERR_ARG, "'%s' is not a reduce algorithm", ovl_alg_name(alg));
  OVL_TRY(ovl_i_sched_tmp(s, vr == 0 ? n : 2 * n, &tmp));
  acc = vr == 0 ? rbuf : tmp + n;
  OVL_TRY(ovl_i_sched_copy(s, acc, sbuf, n));
  OVL_TRY(ovl_i_sched_round(s));
  OVL_TRY(reduce_scatter_blocks(s, acc, tmp, n, root, p, rank, 0));
  /* binomial gather of the reduced blocks to vr 0 along tree T */
  int lb = lowbit_vr(vr, p);
  for (int m = 1; m < lb; m *= 2)
    if (vr + m < p) {
      OVL_TRY(ovl_i_sched_recv(s, absr(vr + m, root, p), acc + boff(n, p, vr + m), brange(n, p, vr + m, vr + 2 * m)));
      OVL_TRY(ovl_i_sched_round(s));
    }
  if (vr > 0) OVL_TRY(ovl_i_sched_send(s, absr(vr - lb, root, p), acc + boff(n, p, vr), brange(n, p, vr, vr + lb)));
  return ovl_i_sched_round(s);
}

/* ---- allgather --------------------------------------------------------------------- */

ovl_err ovl_i_own_allgather(sched *s, ovl_alg alg, const double *sbuf, double *base, int64_t len, int64_t stride, int p,
                            int rank) {
  if (len == 0) return OVL_OK;
  if (sbuf) OVL_TRY(ovl_i_sched_copy(s, base + rank * stride, sbuf, len));
  OVL_TRY(ovl_i_sched_round(s));
  if (p == 1) return OVL_OK;
  if (alg == OVL_ALLGATHER_RECDBL && is_pow2(p)) {
    for (int m = 1; m < p; m *= 2) {
      int partner = rank ^ m, mine = rank & ~(m - 1), theirs = mine ^ m;
      if (stride == len) { /* contiguous blocks travel as one message */
        OVL_TRY(ovl_i_sched_send(s, partner, base + mine * stride, m * len));
        OVL_TRY(ovl_i_sched_recv(s, partner, base + theirs * stride, m * len));
      } else {
        for (int k = 0; k < m; k++) {
          OVL_TRY(ovl_i_sched_send(s, partner, base + (mine + k) * stride, len));
          OVL_TRY(ovl_i_sched_recv(s, partner, base + (theirs + k) * stride, len));
        }
      }
      OVL_TRY(ovl_i_sched_round(s));
    }
    return OVL_OK;
  }
  if (alg != OVL_ALLGATHER_RING && alg != OVL_ALLGATHER_RECDBL)
    return ovl_err_set(OVL_ERR_ARG, "'%s' is not an allgather algorithm", ovl_alg_name(alg));
  int right = (rank + 1) % p, left = (rank - 1 + p) % p;
  for (int st = 0; st < p - 1; st++) {
    int sb = (rank - st + 2 * p) % p, rb = (rank - st - 1 + 2 * p) % p;
    OVL_TRY(ovl_i_sched_send(s, right, base + sb * stride, len));
    OVL_TRY(ovl_i_sched_recv(s, left, base + rb * stride, len));
    OVL_TRY(ovl_i_sched_round(s));
  }
  return OVL_OK;
}

/* ---- allreduce --------------------------------------------------------------------- */

ovl_err ovl_i_own_allreduce(sched *s, ovl_alg alg, const double *sbuf, double *rbuf, int64_t n, int p, int rank) {
  if (n == 0) return OVL_OK;
  OVL_TRY(ovl_i_sched_copy(s, rbuf, sbuf, n));
  OVL_TRY(ovl_i_sched_round(s));
  if (p == 1) return OVL_OK;
  if (alg != OVL_ALLREDUCE_RABENSEIFNER && alg != OVL_ALLREDUCE_RING)
    return ovl_err_set(OVL_ERR_ARG, "'%s' is not an allreduce algorithm", ovl_alg_name(alg));
  double *tmp = NULL;
  OVL_TRY(ovl_i_sched_tmp(s, n, &tmp));
  int ring = alg == OVL_ALLREDUCE_RING || !is_pow2(p);
  OVL_TRY(reduce_scatter_blocks(s, rbuf, tmp, n, 0, p, rank, ring));
  if (ring) return ring_allgather_blocks(s, rbuf, n, 0, p, rank);
  for (int m = 1; m < p; m *= 2) { /* recursive doubling over aligned block ranges */
    int partner = rank ^ m, mine = rank & ~(m - 1), theirs = mine ^ m;
    OVL_TRY(ovl_i_sched_send(s, partner, rbuf + boff(n, p, mine), brange(n, p, mine, mine + m)));
    OVL_TRY(ovl_i_sched_recv(s, partner, rbuf + boff(n, p, theirs), brange(n, p, theirs, theirs + m)));
    OVL_TRY(ovl_i_sched_round(s));
  }
  return OVL_OK;
}

/* ---- alltoall ---------------------------------------------------------------------- */

ovl_err ovl_i_own_alltoall(sched *s, ovl_alg alg, const double *sbuf, double *rbuf, int64_t n, int p, int rank) {
  if (n == 0) return OVL_OK;
  if (alg != OVL_ALLTOALL_RING && alg != OVL_ALLTOALL_PAIRWISE)
    return ovl_err_set(OVL_ERR_ARG, "'%s' is not an alltoall algorithm", ovl_alg_name(alg));
  OVL_TRY(ovl_i_sched_copy(s, rbuf + rank * n, sbuf + rank * n, n));
  OVL_TRY(ovl_i_sched_round(s));
  int pairx = alg == OVL_ALLTOALL_PAIRWISE && is_pow2(p);
  for (int st = 1; st < p; st++) {
    int to = pairx ? rank ^ st : (rank + st) % p, from = pairx ? rank ^ st : (rank - st + p) % p;
    OVL_TRY(ovl_i_sched_send(s, to, sbuf + to * n, n));
    OVL_TRY(ovl_i_sched_recv(s, from, rbuf + from * n, n));
    OVL_TRY(ovl_i_sched_round(s));
  }
  return OVL_OK;
}
