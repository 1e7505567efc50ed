/* Cost models: collectives (L(p) alpha + m W(p) beta, or measured f_BW),
 * N_DUP and multiple PPN through the aggregate bandwidth of concurrent
 * parts, and the algorithms built on them. Pure functions (ovl/model.h). */
#include <math.h>
#include <string.h>

#include "ovl/grid.h"
#include "ovl/model.h"

/* ---- machine ------------------------------------------------------------------ */

ovl_machine ovl_machine_stampede2(void) {
  ovl_machine m;
  memset(&m, 0, sizeof m);
  strcpy(m.name, "stampede2-hc2019");
  /* Huang-Chow V-A: 12000 MB/s (MB = 2^20 B, which reproduces their 2.324e-3 s
   * for 27.89 MB); latency is neglected there: 1 us is a typical Omni-Path
   * value. gamma: their two local products of 1912^3 took 0.01794 s. */
  m.alpha = m.alpha_r = 1e-6;
  m.beta = m.beta_r = 1.0 / (12000.0 * 1048576.0);
  m.eager = 65536;
  /* Skylake nodes of 2 x 24 cores; the products ran on one rank per node, so
   * the node's rate is 48 cores' (ovl_model_gamma at PPN 1) */
  m.cores = 48, m.nics = 1;
  m.gamma = 48.0 * 0.01794 / (4.0 * 1912.0 * 1912.0 * 1912.0);
  m.peak_bw = 12000.0 * 1048576.0;
  return m;
}

double ovl_model_gamma(const ovl_machine *m, int ppn) {
  if (ppn < 1) ppn = 1;
  if (m->cores <= 0) return m->gamma;
  if (ppn <= m->cores) return m->gamma / (double)(m->cores / ppn); /* whole BLAS threads */
  return m->gamma * ppn / m->cores;                                /* time-shared cores */
}

double ovl_model_offnode(int p, int stride, int groups, int ppn) {
  if (ppn <= 1 || p <= 1 || stride < 1 || stride >= ppn || groups < 1) return 1.0;
  int blocks = groups / stride > 0 ? groups / stride : 1;
  double worst = 0;
  for (int b = 0; b < blocks; b++)
    for (int o = 0; o < stride; o++) {
      /* members base + stride t; those of one node form runs of consecutive t */
      long long base = (long long)b * stride * p + o, run = 1, prev = base / ppn;
      double sum = 0; /* sum over runs of L (p - L): the members' off-node shares times p - 1 */
      for (int t = 1; t <= p; t++) {
        long long nd = t < p ? (base + (long long)stride * t) / ppn : -1;
        if (nd == prev) {
          run++;
        } else {
          sum += (double)run * (double)(p - run);
          run = 1, prev = nd;
        }
      }
      double f = sum / ((double)p * (p - 1));
      if (f > worst) worst = f;
    }
  return worst;
}

static const char *const k_mcoll[OVL_MC_N] = {"bcast", "reduce", "allreduce", "allgather"};

const char *ovl_mcoll_name(ovl_mcoll c) { return c >= 0 && c < OVL_MC_N ? k_mcoll[c] : "?"; }

/* Index of name in t[0..n-1], or -1. */
static int name_index(const char *const *t, int n, const char *name) {
  for (int i = 0; name && i < n; i++)
    if (strcmp(name, t[i]) == 0) return i;
  return -1;
}

ovl_err ovl_mcoll_parse(const char *name, ovl_mcoll *out) {
  OVL_TRY(ovl_check_ptr(out, "ovl_mcoll_parse", "out"));
  int c = name_index(k_mcoll, OVL_MC_N, name);
  if (c >= 0) {
    *out = (ovl_mcoll)c;
    return OVL_OK;
  }
  return ovl_err_set(OVL_ERR_ARG, "'%s' is not a modelled collective (bcast, reduce, allreduce, allgather)",
                     name ? name : "(null)");
}

ovl_err ovl_machine_set_fbw(ovl_machine *m, ovl_mcoll coll, int p, const double *size, const double *bw, int npts) {
  OVL_TRY(ovl_check_ptr(m, "ovl_machine_set_fbw", "m"));
  OVL_TRY(ovl_check_ptr(size, "ovl_machine_set_fbw", "size"));
  OVL_TRY(ovl_check_ptr(bw, "ovl_machine_set_fbw", "bw"));
  if (coll < 0 || coll >= OVL_MC_N || p < 2 || npts < 1 || npts > OVL_FBW_MAXPTS)
    return ovl_err_set(OVL_ERR_ARG, "f_BW table: collective %d, p = %d, %d points (1..%d)", (int)coll, p, npts,
                       OVL_FBW_MAXPTS);
  for (int k = 0; k < npts; k++)
    if (!(size[k] > 0) || !(bw[k] > 0) || !isfinite(size[k]) || !isfinite(bw[k]) || (k && size[k] <= size[k - 1]))
      return ovl_err_set(OVL_ERR_ARG,
                         "f_BW table of %s over %d ranks: point %d (%g B, %g B/s) is not positive or "
                         "sizes do not increase",
                         ovl_mcoll_name(coll), p, k, size[k], bw[k]);
  int slot = -1;
  for (int t = 0; t < m->nfbw; t++)
    if (m->fbw[t].coll == coll && m->fbw[t].p == p) slot = t;
  if (slot < 0) {
    if (m->nfbw == OVL_FBW_MAXTAB) return ovl_err_set(OVL_ERR_ARG, "at most %d f_BW tables", OVL_FBW_MAXTAB);
    slot = m->nfbw++;
  }
  ovl_fbw *f = &m->fbw[slot];
  f->coll = coll, f->p = p, f->npts = npts;
  memcpy(f->size, size, sizeof(double) * (size_t)npts);
  memcpy(f->bw, bw, sizeof(double) * (size_t)npts);
  return OVL_OK;
}

double ovl_p2p_time(const ovl_machine *m, double bytes) {
  if (bytes <= 0) return 0;
  return bytes <= m->eager ? m->alpha + m->beta * bytes : m->alpha_r + m->beta_r * bytes;
}

double ovl_fbw_eval(const ovl_machine *m, ovl_mcoll coll, int p, double bytes) {
  const ovl_fbw *f = NULL;
  for (int t = 0; t < m->nfbw; t++)
    if (m->fbw[t].coll == coll && m->fbw[t].p == p) f = &m->fbw[t];
  if (!f || f->npts < 1 || bytes <= 0) return 0;
  if (bytes <= f->size[0]) return f->bw[0];
  if (bytes >= f->size[f->npts - 1]) return f->bw[f->npts - 1];
  int k = 1;
  while (f->size[k] < bytes) k++;
  double x0 = log(f->size[k - 1]), x1 = log(f->size[k]), w = (log(bytes) - x0) / (x1 - x0);
  return exp((1 - w) * log(f->bw[k - 1]) + w * log(f->bw[k]));
}

/* ---- collective models ------------------------------------------------------------ */

ovl_lw ovl_coll_lw(ovl_cmodel a, int p, int segments) {
  ovl_lw r = {0, 0};
  if (p <= 1) return r;
  double lp = log2((double)p), pm = (double)(p - 1) / p;
  double x = segments >= 1 ? segments : 1;
  switch (a) {
  case OVL_CM_BINOMIAL: r.L = r.W = ceil(lp); break;
  case OVL_CM_SCATTER_ALLGATHER: r.L = lp + p - 1, r.W = 2 * pm; break;
  case OVL_CM_CHAIN: r.L = x + p - 1, r.W = (x + p - 1) / x; break;
  case OVL_CM_REDUCE_BINOMIAL: r.L = r.W = ceil(lp); break;
  case OVL_CM_RABENSEIFNER: r.L = 2 * lp, r.W = 2 * pm; break;
  case OVL_CM_RING_ALLGATHER: r.L = p - 1, r.W = pm; break;
  case OVL_CM_RING_ALLREDUCE: r.L = 2.0 * (p - 1), r.W = 2 * pm; break;
  }
  return r;
}

static void regime(const ovl_machine *m, double bytes, double *alpha, double *beta) {
  int eager = bytes <= m->eager;
  *alpha = eager ? m->alpha : m->alpha_r;
  *beta = eager ? m->beta : m->beta_r;
}

double ovl_coll_time_ab(const ovl_machine *m, ovl_cmodel a, int p, double bytes, int segments) {
  if (p <= 1 || bytes <= 0) return 0;
  ovl_lw lw = ovl_coll_lw(a, p, segments);
  double al, be;
  regime(m, bytes, &al, &be);
  return lw.L * al + bytes * lw.W * be;
}

ovl_cmodel ovl_cmodel_default(ovl_mcoll c) {
  switch (c) {
  case OVL_MC_BCAST: return OVL_CM_SCATTER_ALLGATHER;
  case OVL_MC_ALLGATHER: return OVL_CM_RING_ALLGATHER;
  default: return OVL_CM_RABENSEIFNER;
  }
}

static double peak_of(const ovl_machine *m) {
  return m->peak_bw > 0 ? m->peak_bw : (m->beta_r > 0 ? 1.0 / m->beta_r : 0);
}

/* Ranks of a node that share one network interface. */
static int nic_share(const ovl_machine *m, int ppn) {
  int nics = m->nics > 0 ? m->nics : 1;
  return ppn > nics ? (ppn + nics - 1) / nics : 1;
}

/* Effective bandwidth of one collective of x bytes: measured, else alpha-beta. */
static double fbw_of(const ovl_machine *m, ovl_mcoll c, int p, double x) {
  double f = ovl_fbw_eval(m, c, p, x);
  if (f > 0) return f;
  double t = ovl_coll_time_ab(m, ovl_cmodel_default(c), p, x, 1);
  return t > 0 ? 2.0 * (p - 1) / p * x / t : 0;
}

double ovl_coll_time(const ovl_machine *m, ovl_mcoll c, int p, double bytes, int ndup, int ppn, double *lat) {
  if (lat) *lat = 0;
  if (p <= 1 || bytes <= 0) return 0;
  if (ndup < 1) ndup = 1;
  if (ppn < 1) ppn = 1;
  double part = bytes / ndup, vol = 2.0 * (p - 1) / p * bytes;
  double agg = ndup * fbw_of(m, c, p, part);
  if (ndup > 1 || ppn > 1) {
    double cap = peak_of(m) / nic_share(m, ppn);
    if (cap > 0 && agg > cap) agg = cap;
  }
  double t = agg > 0 ? vol / agg : 0;
  if (lat) {
    double al, be;
    regime(m, part, &al, &be);
    double l = ovl_coll_lw(ovl_cmodel_default(c), p, 1).L * al;
    *lat = l < t ? l : t;
  }
  return t;
}

/* Point to point of `bytes` split over ndup concurrent parts, ppn ranks per link. */
static double p2p_time_nd(const ovl_machine *m, double bytes, int ndup, int ppn, double *lat) {
  if (lat) *lat = 0;
  if (bytes <= 0) return 0;
  double part = bytes / ndup, tp = ovl_p2p_time(m, part), agg = ndup * part / tp;
  if (ndup > 1 || ppn > 1) {
    double cap = peak_of(m) / nic_share(m, ppn);
    if (cap > 0 && agg > cap) agg = cap;
  }
  double t = bytes / agg;
  if (lat) {
    double al, be;
    regime(m, part, &al, &be);
    *lat = al < t ? al : t;
  }
  return t;
}

int ovl_ndup_rule(double bytes, double n_t, int max) {
  if (max < 1) max = 1;
  if (!(n_t > 0)) return max;
  double k = floor(bytes / n_t);
  if (k < 1) return 1;
  return k > max ? max : (int)k;
}

int ovl_ndup_pays(const ovl_machine *m, ovl_mcoll c, int p, double bytes, int ndup) {
  if (ndup <= 1) return 1;
  return ndup * fbw_of(m, c, p, bytes / ndup) >= fbw_of(m, c, p, bytes);
}

/* ---- algorithm models ----------------------------------------------------------- */

/* Accumulates the parts of a prediction. */
typedef struct acc {
  double lat, bw;
} acc;

static double add(acc *a, double t, double lat) {
  a->lat += lat, a->bw += t - lat;
  return t;
}

/* What an off-node share `off` of a transfer's bytes costs, relative to all
 * of them crossing the network: the rest moves at shm_bw within the node
 * (shm_bw = 0: priced as the network, the whole transfer). */
static double bw_scale(const ovl_machine *m, double off) {
  if (!(m->shm_bw > 0)) return 1.0;
  double r = peak_of(m) / m->shm_bw;
  return off + (1.0 - off) * r;
}

/* A collective whose group sends the share off of its bytes over the network
 * (ovl_model_offnode): the bandwidth part scales, the latency stays. */
static double coll_off(const ovl_machine *m, ovl_mcoll c, int p, double bytes, int ndup, int ppn, double off,
                       double *lat) {
  double l = 0, t = ovl_coll_time(m, c, p, bytes, ndup, ppn, &l);
  if (lat) *lat = l;
  return l + (t - l) * bw_scale(m, off);
}

static double coll(acc *a, const ovl_machine *m, ovl_mcoll c, int p, double bytes, int ndup, int ppn, double off) {
  double l = 0, t = coll_off(m, c, p, bytes, ndup, ppn, off, &l);
  return add(a, t, l);
}

/* The share of SymmSquareCube's result sends P(i,i,k) -> P(i,k,0) and
 * P(i,k,k) -> P(i,k,0) that leave the node (rank = j + s i + s^2 k, ppn
 * consecutive ranks per node). */
static double ssc_p2p_off(int s, int ppn) {
  if (ppn < 1) ppn = 1;
  double cross = 0, all = 0;
  for (int i = 0; i < s; i++)
    for (int k = 0; k < s; k++) {
      long long plane = (long long)s * s * k, dst = k + (long long)s * i; /* P(i,k,0) */
      long long src[2] = {i + (long long)s * i + plane, dst + plane};     /* P(i,i,k), P(i,k,k) */
      for (int x = 0; x < 2; x++)
        if (src[x] != dst) all += 1, cross += src[x] / ppn != dst / ppn;
    }
  return all > 0 ? cross / all : 0; /* s = 1: every send stays on its rank */
}

/* Two (or three) operations pipelined part by part: the slowest sets the pace,
 * the others add one part each. N = 1 is their sum. */
static double pipe3(double x, double y, double z, int N) {
  double mx = fmax(x, fmax(y, z));
  return mx + (x + y + z - mx) / N;
}

/* Communication overlapped with computation over `steps` steps (lookahead,
 * Cannon's shifts during the dgemm): the larger hides the smaller except for
 * one step. */
static double overlap(double comm, double comp, double steps) {
  if (steps < 1) steps = 1;
  return fmax(comm, comp) + fmin(comm, comp) / steps;
}

ovl_err ovl_model_predict(const ovl_machine *m, const ovl_plan *cfg, ovl_model_cost *out) {
  OVL_TRY(ovl_check_ptr(m, "ovl_model_predict", "the machine"));
  OVL_TRY(ovl_check_ptr(cfg, "ovl_model_predict", "cfg"));
  OVL_TRY(ovl_check_ptr(out, "ovl_model_predict", "out"));
  memset(out, 0, sizeof *out);
  ovl_plan c = *cfg;
  if (c.n < 0 || c.P < 1)
    return ovl_err_set(OVL_ERR_ARG, "model: n = %lld and P = %d must be >= 0 and >= 1", (long long)c.n, c.P);
  OVL_TRY(ovl_knob_check(OVL_KNOB_NDUP, c.ndup, "model"));
  if (c.ppn < 1) return ovl_err_set(OVL_ERR_ARG, "model: PPN must be >= 1, got %d", c.ppn);
  double n = (double)c.n, g = ovl_model_gamma(m, c.ppn), flops = 2.0 * n * n * n;
  int N = c.ndup, k = c.ppn;
  acc a = {0, 0};
  double comm = 0, comp = 0, total = 0;
  switch (c.algo) {
  case OVL_ALGO_SUMMA:
  case OVL_ALGO_HSUMMA:
  case OVL_ALGO_CANNON: {
    int p = c.p, q = c.q, s0, c0;
    if (p <= 0 || q <= 0) ovl_grid_shape(c.algo, c.P, &p, &q, &s0, &c0); /* the shape rules */
    if ((int64_t)p * q != c.P)
      return ovl_err_set(OVL_ERR_GRID, "model: grid %d x %d does not have %d ranks", p, q, c.P);
    comp = flops / c.P * g;
    /* rank = i q + j: a row (over q) is consecutive ranks, a column strided */
    double off_r = ovl_model_offnode(q, 1, p, k), off_c = ovl_model_offnode(p, q, q, k);
    if (c.algo == OVL_ALGO_CANNON) {
      if (p != q) return ovl_err_set(OVL_ERR_GRID, "model: Cannon needs a square grid, got %d x %d", p, q);
      double blk = 8.0 * ceil(n / p) * ceil(n / p), lp = 0, t = p2p_time_nd(m, blk, N, k, &lp);
      t = lp + (t - lp) * bw_scale(m, (off_r + off_c) / 2); /* A shifts along the row, B along the column */
      comm = 2.0 * p * t;                                   /* skew + s - 1 shifts, of A and of B */
      a.lat = 2.0 * p * lp, a.bw = comm - a.lat;
      total = overlap(comm, comp, p);
      break;
    }
    if (c.b < 1) return ovl_err_set(OVL_ERR_ARG, "model: panel width b must be >= 1, got %lld", (long long)c.b);
    double steps = ceil(n / c.b), ra = 8.0 * ceil(n / p) * c.b, rb = 8.0 * c.b * ceil(n / q);
    if (c.algo == OVL_ALGO_SUMMA) { /* A's and B's panels posted together, one step after the other */
      acc s = {0, 0};
      double per = coll(&s, m, OVL_MC_BCAST, q, ra, N, k, off_r) + coll(&s, m, OVL_MC_BCAST, p, rb, N, k, off_c);
      comm = steps * per, a.lat = steps * s.lat, a.bw = steps * s.bw;
      total = c.lookahead ? overlap(comm, comp, steps) : comm + comp;
      break;
    }
    /* HSUMMA (hsumma.c): per outer panel of width M, A's and B's panels go
     * between groups (over J and I ranks), then its sub-panels of width b
     * inside the groups (over q/J and p/I ranks); each level posts A and B
     * together. G = 1 leaves the outer level empty, G = P the inner one:
     * SUMMA with panel b or M. */
    int gI = 0, gJ = 0, G = c.G > 0 ? c.G : 1;
    if (c.groups_i >= 1 && c.groups_j >= 1 && (int64_t)c.groups_i * c.groups_j == G && p % c.groups_i == 0 &&
        q % c.groups_j == 0)
      gI = c.groups_i, gJ = c.groups_j;
    else if (ovl_hgroups_auto_dims(p, q, G, &gI, &gJ) != OVL_OK)
      return ovl_err_set(OVL_ERR_GRID, "model: G = %d groups do not tile the %d x %d grid", G, p, q);
    int64_t M = c.outer > 0 ? c.outer : c.b;
    if (M < c.b)
      return ovl_err_set(OVL_ERR_ARG, "model: the outer block M = %lld must be >= the inner block b = %lld",
                         (long long)M, (long long)c.b);
    double osteps = ceil(n / (double)M), oa = 8.0 * ceil(n / p) * M, ob = 8.0 * M * ceil(n / q);
    double full = floor((double)M / c.b), rest = (double)(M - (int64_t)full * c.b); /* sub-panels of an outer panel */
    acc o = {0, 0}, in = {0, 0}, ir = {0, 0};
    /* both levels priced with the row's and the column's off-node share */
    double per_o = coll(&o, m, OVL_MC_BCAST, gJ, oa, N, k, off_r) + coll(&o, m, OVL_MC_BCAST, gI, ob, N, k, off_c);
    double per_i =
        coll(&in, m, OVL_MC_BCAST, q / gJ, ra, N, k, off_r) + coll(&in, m, OVL_MC_BCAST, p / gI, rb, N, k, off_c);
    double per_r = rest > 0 ? coll(&ir, m, OVL_MC_BCAST, q / gJ, 8.0 * ceil(n / p) * rest, N, k, off_r) +
                                  coll(&ir, m, OVL_MC_BCAST, p / gI, 8.0 * rest * ceil(n / q), N, k, off_c)
                            : 0;
    comm = osteps * (per_o + full * per_i + per_r);
    a.lat = osteps * (o.lat + full * in.lat + ir.lat), a.bw = osteps * (o.bw + full * in.bw + ir.bw);
    if (!c.lookahead) total = comm + comp;
    else if (comm <= comp) /* hidden but the first outer panel and its first sub-panel */
      total = comp + per_o + (full > 0 ? per_i : per_r);
    else /* exposed: the compute after the last broadcast, one sub-panel's (one outer panel's when G = P) */
      total = comm + comp / (p / gI > 1 || q / gJ > 1 ? osteps * (full + (rest > 0)) : osteps);
    break;
  }
  case OVL_ALGO_3D:
  case OVL_ALGO_SSC3:
  case OVL_ALGO_SSC4:
  case OVL_ALGO_SSC5: {
    int s = c.s, p0, q0, c0;
    if (s <= 0) ovl_grid_shape(c.algo, c.P, &p0, &q0, &s, &c0); /* the shape rules */
    if (s > 1290 || s * s * s != c.P)                           /* 1291^3 > 2^31: more ranks than an int holds */
      return ovl_err_set(OVL_ERR_GRID, "model: %s needs a p x p x p grid; %d ranks are not a cube",
                         ovl_algo_name(c.algo), c.P);
    /* rank = j + s i + s^2 k: grd (over k) strided by s^2, row (over i) by s,
     * col (over j) consecutive; ppn consecutive ranks per node */
    double nb = ceil(n / s), blk = 8.0 * nb * nb, lb = 0, lr = 0, lp = 0;
    double og = ovl_model_offnode(s, s * s, s * s, k), orow = ovl_model_offnode(s, s, s * s, k);
    double ocol = ovl_model_offnode(s, 1, s * s, k), op = ssc_p2p_off(s, k);
    double bg = coll_off(m, OVL_MC_BCAST, s, blk, N, k, og, &lb);    /* D_ij over P(i,j,:) */
    double br = coll_off(m, OVL_MC_BCAST, s, blk, N, k, orow, NULL); /* over P(:,j,k) */
    double rd = coll_off(m, OVL_MC_REDUCE, s, blk, N, k, ocol, &lr); /* over P(i,:,k) */
    double pp = p2p_time_nd(m, blk, N, k, &lp);
    pp = op > 0 ? lp + (pp - lp) * bw_scale(m, op) : 0; /* s = 1: no sends */
    if (c.algo == OVL_ALGO_3D) { /* bcast A; p2p -> bcast B; dgemm; reduce -> p2p C (chains pipelined) */
      comp = 2.0 * nb * nb * nb * g;
      comm = bg + pipe3(pp, br, 0, N) + pipe3(rd, pp, 0, N);
      a.lat = 2 * lb + lr + 2 * lp;
    } else {
      comp = 4.0 * nb * nb * nb * g; /* two local products */
      int alg3 = c.algo == OVL_ALGO_SSC3;
      if (c.algo == OVL_ALGO_SSC5) /* grd bcast -> row bcast; reduce -> bcast; reduce -> send, D^2 sends */
        comm = pipe3(bg, br, 0, N) + pipe3(rd, br, 0, N) + pipe3(rd, pp, pp, N);
      else /* T_baseline = 2 (T_P2P + T_Reduce) + 3 T_Bcast; Alg. 3 also transposes D^2 */
        comm = bg + 2 * br + 2 * rd + (2 + alg3) * pp;
      a.lat = 3 * lb + 2 * lr + (2 + alg3) * lp;
    }
    a.bw = comm - a.lat;
    total = comm + comp;
    break;
  }
  case OVL_ALGO_25D:
  case OVL_ALGO_SSC6: {
    int s = c.s, rc = c.c, p0, q0;
    if (s <= 0 || rc <= 0) ovl_grid_shape(c.algo, c.P, &p0, &q0, &s, &rc); /* the shape rules */
    if (s <= 0 || rc <= 0 || s > 46340 || (int64_t)s * s * rc != c.P)
      return ovl_err_set(OVL_ERR_GRID, "model: no 2.5D grid s x s x c with %d ranks", c.P);
    if (s % rc) return ovl_err_set(OVL_ERR_GRID, "model: c = %d must divide s = %d", rc, s);
    double nb = ceil(n / s), blk = 8.0 * nb * nb, steps = s / rc, lp = 0;
    double t1 = p2p_time_nd(m, blk, 1, k, &lp), mult = 2.0 * nb * nb * nb * g;
    /* rank = j + s i + s^2 k: A shifts along j (consecutive), B along i (by s); grd over k by s^2 */
    double osh = (ovl_model_offnode(s, 1, s * rc, k) + ovl_model_offnode(s, s, s * rc, k)) / 2;
    double og = ovl_model_offnode(rc, s * s, s * s, k);
    double shift = s > 1 ? 2.0 * (lp + (t1 - lp) * bw_scale(m, osh)) : 0; /* s = 1: nothing to shift */
    double cannon = overlap(steps * shift, steps * mult, steps);
    double lb = 0, la = 0, lr = 0;
    double bc = coll_off(m, OVL_MC_BCAST, rc, blk, N, k, og, &lb);
    double ar = coll_off(m, OVL_MC_ALLREDUCE, rc, blk, N, k, og, &la);
    double rd = coll_off(m, OVL_MC_REDUCE, rc, blk, N, k, og, &lr);
    if (c.algo == OVL_ALGO_25D) { /* A and B broadcast, one Cannon pass, reduce */
      comm = 2 * bc + rd + steps * shift;
      comp = steps * mult;
      a.lat = 2 * lb + lr + (s > 1) * steps * 2 * lp;
      total = 2 * bc + rd + cannon;
    } else { /* D broadcast once, Cannon, allreduce D^2, Cannon, reduce D^3 */
      comm = bc + ar + rd + 2 * steps * shift;
      comp = 2 * steps * mult;
      a.lat = lb + la + lr + (s > 1) * 2 * steps * 2 * lp;
      total = bc + ar + rd + 2 * cannon;
    }
    a.bw = comm - a.lat;
    break;
  }
  case OVL_ALGO_SQ: { /* the symmetric square (sq.c): D over the layers, a half Cannon pass, the reduction */
    int s = c.s, rc = c.c, p0, q0;
    if (s <= 0 || rc <= 0) ovl_grid_shape(c.algo, c.P, &p0, &q0, &s, &rc); /* the shape rules */
    if (s <= 0 || rc <= 0 || s > 46340 || (int64_t)s * s * rc != c.P || (s > 1 && s % rc))
      return ovl_err_set(OVL_ERR_GRID, "model: no symmetric-square grid s x s x c (c | s, or s = 1) with %d ranks",
                         c.P);
    /* s = 1: the layers split the inner dimension (one syrk each), the lower triangle reduced */
    double nb = ceil(n / s), blk = 8.0 * nb * nb, steps = s > 1 ? s / rc : 1, lp = 0;
    double t1 = p2p_time_nd(m, blk, 1, k, &lp), mult = nb * nb * (s > 1 ? nb : ceil(n / rc)) * g;
    double osh = (ovl_model_offnode(s, 1, s * rc, k) + ovl_model_offnode(s, s, s * rc, k)) / 2;
    double og = ovl_model_offnode(rc, s * s, s * s, k);
    double shift = s > 1 ? 2.0 * (lp + (t1 - lp) * bw_scale(m, osh)) : 0;
    double lb = 0, lr = 0;
    double bc = coll_off(m, OVL_MC_BCAST, rc, blk, N, k, og, &lb);
    double rd = coll_off(m, OVL_MC_REDUCE, rc, s > 1 ? blk : blk / 2, N, k, og, &lr);
    comm = bc + rd + steps * shift;
    comp = steps * mult;
    a.lat = lb + lr + (s > 1) * steps * 2 * lp;
    a.bw = comm - a.lat;
    total = bc + rd + overlap(steps * shift, steps * mult, steps);
    break;
  }
  case OVL_ALGO_BSUMMA:
  case OVL_ALGO_BS25D:
    return ovl_err_set(OVL_ERR_ARG,
                       "model: %s is a block-sparse product: its prediction needs the matrices' shape "
                       "(ovl_model_bsmul; `ovl model --algo %s --fill F`)",
                       ovl_algo_name(c.algo), ovl_algo_name(c.algo));
  default: return ovl_err_set(OVL_ERR_ARG, "model: unknown kernel %d", (int)c.algo);
  }
  out->latency = a.lat;
  out->bandwidth = a.bw > 0 ? a.bw : 0;
  out->compute = comp;
  out->total = total;
  return OVL_OK;
}

/* ---- the block-sparse product (ovl_bsmat_multiply, src/sparse/bsmul.c) ------------- */

ovl_err ovl_bsmul_shape_estimate(int64_t n, int64_t nblk, double fill, ovl_bsmul_shape *out) {
  OVL_TRY(ovl_check_ptr(out, "ovl_bsmul_shape_estimate", "out"));
  if (n < 1 || nblk < 1 || nblk > n)
    return ovl_err_set(OVL_ERR_ARG, "ovl_bsmul_shape_estimate: n = %lld and nblk = %lld must satisfy 1 <= nblk <= n",
                       (long long)n, (long long)nblk);
  if (!(fill > 0 && fill <= 1))
    return ovl_err_set(OVL_ERR_ARG, "ovl_bsmul_shape_estimate: the fill must be in (0, 1], got %g", fill);
  memset(out, 0, sizeof *out);
  double nb = (double)nblk, per = fmax(1.0, fill * nb); /* blocks per block row and column */
  out->n = n, out->nblk = nblk;
  out->blocks_a = out->blocks_b = (int64_t)llround(per * nb);
  out->products = (int64_t)llround(nb * per * per); /* sum over K of a_K b_K with every count the same */
  return OVL_OK;
}

/* The checks of a shape, and its fields left 0 filled in (mean block size b). */
static ovl_err bsmul_shape_fill(const ovl_bsmul_shape *in, ovl_bsmul_shape *sh, double *b) {
  OVL_TRY(ovl_check_ptr(in, "model", "the block-sparse shape"));
  *sh = *in;
  if (sh->n < 1 || sh->nblk < 1 || sh->nblk > sh->n)
    return ovl_err_set(OVL_ERR_ARG, "model: the shape's n = %lld and nblk = %lld must satisfy 1 <= nblk <= n",
                       (long long)sh->n, (long long)sh->nblk);
  double nb = (double)sh->nblk, all = nb * nb;
  if (sh->blocks_a < 0 || sh->blocks_b < 0 || sh->blocks_a > all || sh->blocks_b > all || sh->products < 0 ||
      sh->blocks_c < 0 || sh->blocks_c > all || sh->values_a < 0 || sh->values_b < 0 || !(sh->flops >= 0) ||
      !isfinite(sh->flops))
    return ovl_err_set(OVL_ERR_ARG,
                       "model: the shape's counts must be >= 0 and blocks <= nblk^2 = %.0f (blocks %lld, %lld, "
                       "%lld; products %lld; flops %g)",
                       all, (long long)sh->blocks_a, (long long)sh->blocks_b, (long long)sh->blocks_c,
                       (long long)sh->products, sh->flops);
  *b = (double)sh->n / nb;
  if (sh->values_a == 0) sh->values_a = (int64_t)llround(sh->blocks_a * *b * *b);
  if (sh->values_b == 0) sh->values_b = (int64_t)llround(sh->blocks_b * *b * *b);
  if (sh->flops == 0) sh->flops = 2.0 * sh->products * *b * *b * *b;
  if (sh->blocks_c == 0)
    sh->blocks_c = (int64_t)fmin(all, fmin((double)sh->products, (double)(sh->blocks_a + sh->blocks_b)));
  return OVL_OK;
}

/* Bytes of a packed panel (src/sparse/bsmul_impl.h): a header of 3 doubles,
 * row ids, row pointers, column indices and norms, then the values, each a
 * double. */
static double panel_bytes(double rows, double blocks, double values) {
  return blocks > 0 ? 8.0 * (3 + rows + (rows + 1) + 2 * blocks + values) : 0;
}

/* The block rows a panel of `blocks` blocks spread over `rows` rows touches
 * (each row as likely). */
static double rows_hit(double rows, double blocks) { return rows > 0 ? rows * (1 - exp(-blocks / rows)) : 0; }

double ovl_bsmul_dgemm_eff(double b) { return b > 0 ? b / (b + OVL_BSMUL_BHALF) : 0; }

/* The SUMMA steps of one p x q grid (a layer of the 2.5D grid runs `share`
 * of them): A's panel along the process rows (q ranks, rows consecutive:
 * off_r), B's along the columns (p ranks: off_c); N steps in flight on N
 * lanes priced as one collective of N panels split over the lanes. Returns
 * the steps it runs; *comm and a the seconds of their broadcasts. */
static double bsumma_steps(const ovl_machine *m, const ovl_bsmul_shape *sh, int p, int q, double share, int N, int k,
                           double off_r, double off_c, acc *a, double *comm) {
  double nb = (double)sh->nblk, L = (double)p * q, active = fmin(L, nb); /* steps that carry blocks */
  double steps = ceil(active * share);
  double ab = sh->blocks_a / (p * active), av = sh->values_a / (p * active); /* one process row's A panel */
  double bb = sh->blocks_b / (q * active), bv = sh->values_b / (q * active); /* one process column's B panel */
  double ma = panel_bytes(rows_hit(nb / p, ab), ab, av), mb = panel_bytes(rows_hit(nb / q, bb), bb, bv);
  acc s = {0, 0};
  int Ne = steps < N ? (int)steps : N; /* lanes beyond the steps carry nothing */
  if (Ne < 1) Ne = 1;
  double per =
      coll(&s, m, OVL_MC_BCAST, q, Ne * ma, Ne, k, off_r) + coll(&s, m, OVL_MC_BCAST, p, Ne * mb, Ne, k, off_c);
  *comm = steps * per / Ne;
  a->lat += steps * s.lat / Ne, a->bw += steps * s.bw / Ne;
  return steps;
}

ovl_err ovl_model_bsmul(const ovl_machine *m, const ovl_plan *cfg, const ovl_bsmul_shape *shape, ovl_model_cost *out,
                        ovl_bsmul_detail *detail) {
  OVL_TRY(ovl_check_ptr(m, "ovl_model_bsmul", "the machine"));
  OVL_TRY(ovl_check_ptr(cfg, "ovl_model_bsmul", "cfg"));
  OVL_TRY(ovl_check_ptr(out, "ovl_model_bsmul", "out"));
  memset(out, 0, sizeof *out);
  if (detail) memset(detail, 0, sizeof *detail);
  ovl_plan c = *cfg;
  if (c.algo != OVL_ALGO_BSUMMA && c.algo != OVL_ALGO_BS25D)
    return ovl_err_set(OVL_ERR_ARG, "ovl_model_bsmul: %s is not a block-sparse product (bsumma, bs2.5d)",
                       ovl_algo_name(c.algo));
  if (c.P < 1) return ovl_err_set(OVL_ERR_ARG, "model: P = %d must be >= 1", c.P);
  OVL_TRY(ovl_knob_check(OVL_KNOB_NDUP, c.ndup, "model"));
  if (c.ppn < 1) return ovl_err_set(OVL_ERR_ARG, "model: PPN must be >= 1, got %d", c.ppn);
  ovl_bsmul_shape sh;
  double b = 0;
  OVL_TRY(bsmul_shape_fill(shape, &sh, &b));
  int N = c.ndup, k = c.ppn;
  double g = ovl_model_gamma(m, k) / ovl_bsmul_dgemm_eff(b), comp = sh.flops / c.P * g;
  acc a = {0, 0};
  double steps = 0, scomm = 0, lcomm = 0, total = 0;
  if (c.algo == OVL_ALGO_BSUMMA) {
    int p = c.p, q = c.q, s0, c0;
    if (p <= 0 || q <= 0) ovl_grid_shape(c.algo, c.P, &p, &q, &s0, &c0); /* the shape rules */
    if ((int64_t)p * q != c.P)
      return ovl_err_set(OVL_ERR_GRID, "model: grid %d x %d does not have %d ranks", p, q, c.P);
    /* rank = i q + j: a row (over q) is consecutive ranks, a column strided */
    double off_r = ovl_model_offnode(q, 1, p, k), off_c = ovl_model_offnode(p, q, q, k);
    steps = bsumma_steps(m, &sh, p, q, 1.0, N, k, off_r, off_c, &a, &scomm);
    total = overlap(scomm, comp, steps); /* arrival order, max(2, N) steps in flight */
  } else {
    int s = c.s, rc = c.c, p0, q0;
    if (s <= 0 || rc <= 0) ovl_grid_shape(c.algo, c.P, &p0, &q0, &s, &rc); /* the shape rules */
    if (s <= 0 || rc <= 0 || s > 46340 || (int64_t)s * s * rc != c.P)
      return ovl_err_set(OVL_ERR_GRID, "model: no grid s x s x c with %d ranks", c.P);
    if (rc > s && s != 1)
      return ovl_err_set(OVL_ERR_GRID,
                         "model: the replication c = %d exceeds the plane side s = %d (c > s only for s = 1)", rc, s);
    /* rank = j + s i + s^2 k: a layer's rows consecutive, its columns by s; the layers by s^2 */
    double orow = ovl_model_offnode(s, 1, s * rc, k), ocol = ovl_model_offnode(s, s, s * rc, k);
    double og = ovl_model_offnode(rc, s * s, s * s, k), nb = (double)sh.nblk, ss = (double)s * s;
    steps = bsumma_steps(m, &sh, s, s, 1.0 / rc, N, k, orow, ocol, &a, &scomm);
    /* plane 0 sends layer k > 0 the slices of A and B its steps use (1/c of each: c - 1 messages from each
     * plane-0 rank, one after the other); the partial C's (a layer's products touch at most
     * min(blocks_c, products / c) blocks) summed onto plane 0 */
    double la = sh.blocks_a / ss, lb = sh.blocks_b / ss, pc = fmin((double)sh.blocks_c, sh.products / (double)rc) / ss;
    double ma = panel_bytes(rows_hit(nb / s, la), la, sh.values_a / ss);
    double mb = panel_bytes(rows_hit(nb / s, lb), lb, sh.values_b / ss);
    double mc = panel_bytes(rows_hit(nb / s, pc), pc, pc * b * b);
    double slat = 0, st = (rc - 1) * p2p_time_nd(m, (ma + mb) / rc, N, k, &slat);
    a.lat += (rc - 1) * slat, a.bw += st - (rc - 1) * slat;
    lcomm = st + coll(&a, m, OVL_MC_REDUCE, rc, mc, N, k, og);
    total = lcomm + overlap(scomm, comp, steps);
  }
  out->latency = a.lat;
  out->bandwidth = a.bw > 0 ? a.bw : 0;
  out->compute = comp;
  out->total = total;
  if (detail) {
    detail->steps = steps, detail->step_comm = scomm, detail->layer_comm = lcomm;
    detail->flops = sh.flops / c.P, detail->dgemm_eff = ovl_bsmul_dgemm_eff(b), detail->block = b;
  }
  return OVL_OK;
}

/* ---- HSUMMA's analysis (Section 4) ----------------------------------------------- */

double ovl_hsumma_comm_sag(double alpha, double beta, int64_t n, int64_t b, int64_t M, int P, int G) {
  double sp = sqrt((double)P), sg = sqrt((double)G), nn = (double)n;
  double inner = (log2((double)P / G) + 2 * (sp / sg - 1)) * alpha * nn / b + 4 * (1 - sg / sp) * nn * nn / sp * beta;
  double outer = (log2((double)G) + 2 * (sg - 1)) * alpha * nn / M + 4 * (1 - 1 / sg) * nn * nn / sp * beta;
  return inner + outer;
}

int ovl_hsumma_gopt(double alpha, double beta, int64_t n, int64_t b, int P) {
  if (P < 4 || !(beta > 0) || alpha / beta <= 2.0 * (double)n * (double)b / P) return 1;
  int g = (int)lround(sqrt((double)P));
  while (g > 1 && P % g) g--;
  return g;
}

/* ---- candidates and ranking -------------------------------------------------------- */

static int push(ovl_plan *out, int cap, int n, ovl_plan c) {
  if (n < cap) out[n] = c;
  return n + 1;
}

int ovl_model_candidates(ovl_family f, int64_t n, int P, ovl_plan *out, int cap) {
  int cr = ovl_icbrt(P), sq = ovl_isqrt(P), cnt = 0, cube = P >= 1 && cr * cr * cr == P;
  /* the candidates of each knob: the knob table's */
  const ovl_knob *kb = &ovl_knobs[OVL_KNOB_BLOCK], *kd = &ovl_knobs[OVL_KNOB_NDUP],
                 *kl = &ovl_knobs[OVL_KNOB_LOOKAHEAD];
  const int64_t *nd3 = kd->cand;
  const int nnd = kd->ncand;
  if (f == OVL_FAMILY_BSMUL) { /* bsumma on the shape rules' grid; bs2.5d for every c > 1 with c <= s or s = 1 */
    for (int d = 0; d < nnd; d++) {
      ovl_plan c = ovl_plan_default(OVL_ALGO_BSUMMA, n, P);
      ovl_grid_shape(OVL_ALGO_BSUMMA, P, &c.p, &c.q, &c.s, &c.c);
      c.ndup = (int)nd3[d];
      cnt = push(out, cap, cnt, c);
    }
    for (int cc = 2; cc <= P; cc++) { /* c <= s, or a stack of c single ranks (s = 1) */
      int s = (int)lround(sqrt((double)P / cc));
      if ((int64_t)s * s * cc != P || (cc > s && s != 1)) continue;
      for (int d = 0; d < nnd; d++) {
        ovl_plan c = ovl_plan_default(OVL_ALGO_BS25D, n, P);
        c.s = c.p = c.q = s, c.c = cc, c.ndup = (int)nd3[d];
        cnt = push(out, cap, cnt, c);
      }
    }
    return cnt < cap ? cnt : cap;
  }
  if (f == OVL_FAMILY_GEMM) {
    for (int ib = 0; ib < kb->ncand; ib++)
      for (int la = 0; la < kl->ncand; la++)
        for (int d = 0; d < nnd; d++) {
          ovl_plan c = ovl_plan_default(OVL_ALGO_SUMMA, n, P);
          c.b = kb->cand[ib], c.lookahead = (int)kl->cand[la], c.ndup = (int)nd3[d];
          cnt = push(out, cap, cnt, c);
        }
    int p, q;
    p = P > 1 ? ovl_isqrt(P) : 1;
    while (P % p) p--;
    q = P / p;
    for (int g = 2; g < P; g++) {
      int gI, gJ, r = (int)lround(sqrt((double)g));
      if (r * r != g || ovl_hgroups_auto_dims(p, q, g, &gI, &gJ) != OVL_OK) continue;
      ovl_plan c = ovl_plan_default(OVL_ALGO_HSUMMA, n, P);
      c.G = g, c.lookahead = 1;
      cnt = push(out, cap, cnt, c);
    }
    if (sq * sq == P && P > 1) cnt = push(out, cap, cnt, ovl_plan_default(OVL_ALGO_CANNON, n, P));
    for (int d = 0; d < nnd && cube && P > 1; d++) {
      ovl_plan c = ovl_plan_default(OVL_ALGO_3D, n, P);
      c.ndup = (int)nd3[d];
      cnt = push(out, cap, cnt, c);
    }
  } else if (f == OVL_FAMILY_SSC) {
    if (cube) {
      for (int a = OVL_ALGO_SSC3; a <= OVL_ALGO_SSC4; a++) { /* blocking collectives: one lane */
        ovl_plan c = ovl_plan_default((ovl_algo)a, n, P);
        c.ndup = 1;
        cnt = push(out, cap, cnt, c);
      }
      for (int d = 1; d <= 8; d++) { /* Alg. 5's lanes: every count up to 8 */
        ovl_plan c = ovl_plan_default(OVL_ALGO_SSC5, n, P);
        c.ndup = d;
        cnt = push(out, cap, cnt, c);
      }
    }
  }
  /* 2.5D: every c with c | s and s * s * c = P */
  for (int cc = 1; cc <= P; cc++) {
    int s = (int)lround(sqrt((double)P / cc));
    if ((int64_t)s * s * cc != P || s % cc) continue;
    for (int d = 0; d < nnd; d++) {
      if (cc == 1 && d > 0) continue; /* no collectives to split */
      ovl_plan c = ovl_plan_default(f == OVL_FAMILY_GEMM ? OVL_ALGO_25D
                                    : f == OVL_FAMILY_SQ ? OVL_ALGO_SQ
                                                         : OVL_ALGO_SSC6,
                                    n, P);
      c.s = s, c.c = cc, c.ndup = (int)nd3[d];
      if (f == OVL_FAMILY_GEMM && (cc == 1 || (cube && cc == s))) continue; /* Cannon / 3D already listed */
      cnt = push(out, cap, cnt, c);
    }
  }
  return cnt < cap ? cnt : cap;
}

/* Insertion sort of cfg and pr on the predicted total (n is small; stable). */
static void sort_by_total(ovl_plan *cfg, ovl_model_cost *pr, int n) {
  for (int i = 1; i < n; i++) {
    ovl_plan c = cfg[i];
    ovl_model_cost r = pr[i];
    int j = i - 1;
    while (j >= 0 && pr[j].total > r.total) cfg[j + 1] = cfg[j], pr[j + 1] = pr[j], j--;
    cfg[j + 1] = c, pr[j + 1] = r;
  }
}

void ovl_model_rank(const ovl_machine *m, ovl_plan *cfg, int n, ovl_model_cost *pred) {
  ovl_model_cost tmp[256], *pr = pred ? pred : tmp;
  if (!pred && n > 256) n = 256;
  for (int i = 0; i < n; i++)
    if (ovl_model_predict(m, &cfg[i], &pr[i]) != OVL_OK) pr[i].total = INFINITY;
  sort_by_total(cfg, pr, n);
}

void ovl_model_rank_bsmul(const ovl_machine *m, const ovl_bsmul_shape *shape, ovl_plan *cfg, int n,
                          ovl_model_cost *pred) {
  ovl_model_cost tmp[256], *pr = pred ? pred : tmp;
  if (!pred && n > 256) n = 256;
  for (int i = 0; i < n; i++)
    if (ovl_model_bsmul(m, &cfg[i], shape, &pr[i], NULL) != OVL_OK) pr[i].total = INFINITY;
  sort_by_total(cfg, pr, n);
}
