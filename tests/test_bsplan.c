/* The block-sparse product's cost model, planner and shape (family
 * OVL_FAMILY_BSMUL): ovl_model_bsmul's parts against each other and against
 * the knobs they depend on (lanes, the replication c), ovl_plan_resolve_bsmul
 * on 1, 2, 4, 8 and 16 ranks (simulated through plan->P) under auto and
 * under constraints, the printed plan read back, the refusals; and
 * ovl_bsmat_shape against the multiplication it describes: at eps = 0 its
 * count of block products equals the products and skipped products of
 * ovl_bsmat_multiply summed over the ranks, and its blocks, values and flops
 * equal independent counts from the dense matrices. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ovl/ovl.h"
#include "ovltest.h"

static int g_rank, g_size;

/* ---- the model ------------------------------------------------------------------ */

static ovl_plan bs_plan(ovl_algo a, int P, int s, int c, int ndup) {
  ovl_plan p = ovl_plan_default(a, 0, P);
  p.ndup = ndup;
  if (a == OVL_ALGO_BS25D) p.s = p.p = p.q = s, p.c = c;
  return p;
}

/* The parts of one prediction: each finite and >= 0, communication = the
 * steps' and the layers' seconds, the total between the larger of
 * communication and computation and their sum (the overlap of arrival
 * order). */
static void check_parts(const ovl_machine *m, const ovl_plan *c, const ovl_bsmul_shape *sh) {
  ovl_model_cost r;
  ovl_bsmul_detail d;
  T_OK(ovl_model_bsmul(m, c, sh, &r, &d));
  double comm = r.latency + r.bandwidth, sum = comm + r.compute;
  T_CHECK(isfinite(r.total) && r.latency >= 0 && r.bandwidth >= 0 && r.compute > 0 && r.total > 0,
          "%s P=%d: parts %g %g %g %g", ovl_algo_name(c->algo), c->P, r.latency, r.bandwidth, r.compute, r.total);
  T_CHECK(fabs(comm - (d.step_comm + d.layer_comm)) <= 1e-12 * (comm + 1e-30),
          "%s P=%d: latency + bandwidth %g != steps %g + layers %g", ovl_algo_name(c->algo), c->P, comm, d.step_comm,
          d.layer_comm);
  T_CHECK(r.total <= sum * (1 + 1e-12) && r.total >= fmax(comm, r.compute) * (1 - 1e-12),
          "%s P=%d: total %g outside [max(%g, %g), %g]", ovl_algo_name(c->algo), c->P, r.total, comm, r.compute, sum);
  if (c->P > 1 && (c->algo == OVL_ALGO_BSUMMA || c->c > 1))
    T_CHECK(r.latency > 0 && r.bandwidth > 0, "%s P=%d c=%d: no communication priced", ovl_algo_name(c->algo), c->P,
            c->c);
  if (c->P == 1) T_CHECK(comm == 0 && r.total == r.compute, "P = 1: nothing to send, total %g", r.total);
  /* the flops: the shape's, shared by the ranks, at gamma / e(b) */
  double b = (double)sh->n / sh->nblk, want = 2.0 * sh->products * b * b * b / c->P;
  T_CHECK(fabs(d.flops - want) <= 1e-9 * want, "flops per rank %g, expected %g", d.flops, want);
  T_CHECK(fabs(r.compute - want * ovl_model_gamma(m, c->ppn) / ovl_bsmul_dgemm_eff(b)) <= 1e-9 * r.compute,
          "compute %g", r.compute);
}

static void test_model(void) {
  ovl_machine m = ovl_machine_stampede2();
  ovl_bsmul_shape sh;
  T_OK(ovl_bsmul_shape_estimate(8000, 250, 0.05, &sh));
  T_CHECK(sh.blocks_a == llround(250 * 12.5) && sh.products == llround(250 * 12.5 * 12.5),
          "estimate: %lld blocks, %lld products", (long long)sh.blocks_a, (long long)sh.products);
  /* every candidate of several rank counts */
  const int Ps[] = {1, 2, 4, 8, 16, 64, 128};
  for (int i = 0; i < 7; i++) {
    ovl_plan cand[64];
    int nc = ovl_model_candidates(OVL_FAMILY_BSMUL, sh.n, Ps[i], cand, 64);
    T_CHECK(nc >= 1, "P=%d: no candidate", Ps[i]);
    for (int k = 0; k < nc; k++) check_parts(&m, &cand[k], &sh);
  }
  /* lanes: a link that needs 8 streams for its peak; more lanes lower the
   * bandwidth part until the lanes reach it, then nothing changes */
  ovl_machine m8 = m;
  m8.peak_bw = 8.0 / m8.beta_r;
  double bw[8], tot[8], comm[8];
  for (int x = 0; x < 7; x++) {
    ovl_plan c = bs_plan(OVL_ALGO_BSUMMA, 64, 0, 0, 1 << x);
    ovl_model_cost r;
    T_OK(ovl_model_bsmul(&m8, &c, &sh, &r, NULL));
    bw[x] = r.bandwidth, tot[x] = r.total, comm[x] = r.latency + r.bandwidth;
  }
  T_CHECK(bw[1] < bw[0] && bw[2] < bw[1], "more lanes, less bandwidth time: %g %g %g", bw[0], bw[1], bw[2]);
  for (int x = 1; x < 7; x++) T_CHECK(tot[x] <= tot[x - 1] * (1 + 1e-12), "N_DUP %d: total %g rose", 1 << x, tot[x]);
  T_CHECK(fabs(comm[6] - comm[5]) <= 1e-9 * comm[5] && fabs(tot[6] - tot[5]) <= 1e-9 * tot[5],
          "beyond the link's peak the lanes change nothing: communication %g -> %g, total %g -> %g", comm[5], comm[6],
          tot[5], tot[6]);
  /* the cap itself: with the machine's own peak (one stream reaches it) lanes add no bandwidth */
  {
    ovl_plan c1 = bs_plan(OVL_ALGO_BSUMMA, 64, 0, 0, 1), c4 = bs_plan(OVL_ALGO_BSUMMA, 64, 0, 0, 4);
    ovl_model_cost r1, r4;
    T_OK(ovl_model_bsmul(&m, &c1, &sh, &r1, NULL));
    T_OK(ovl_model_bsmul(&m, &c4, &sh, &r4, NULL));
    T_CHECK(r4.total <= r1.total * (1 + 1e-12) && r4.latency < r1.latency,
            "lanes at the cap: total %g -> %g, latency %g -> %g", r1.total, r4.total, r1.latency, r4.latency);
  }
  /* 2.5D on 4096 ranks: c = 1, 4, 16 (s = 64, 32, 16); a matrix with more blocks than steps */
  ovl_bsmul_shape big;
  T_OK(ovl_bsmul_shape_estimate(65536, 8192, 0.01, &big));
  const int cs[] = {1, 4, 16}, ss[] = {64, 32, 16};
  ovl_bsmul_detail d[3];
  for (int x = 0; x < 3; x++) {
    ovl_plan c = bs_plan(OVL_ALGO_BS25D, 4096, ss[x], cs[x], 2);
    ovl_model_cost r;
    T_OK(ovl_model_bsmul(&m, &c, &big, &r, &d[x]));
    check_parts(&m, &c, &big);
  }
  for (int x = 1; x < 3; x++) {
    T_CHECK(d[x].steps < d[x - 1].steps && d[x].step_comm < d[x - 1].step_comm,
            "c = %d: a layer's steps %g (%g s) should fall from c = %d's %g (%g s)", cs[x], d[x].steps, d[x].step_comm,
            cs[x - 1], d[x - 1].steps, d[x - 1].step_comm);
    T_CHECK(d[x].layer_comm > d[x - 1].layer_comm, "c = %d: broadcast and sum %g s should rise from %g s", cs[x],
            d[x].layer_comm, d[x - 1].layer_comm);
  }
  T_CHECK(d[0].layer_comm == 0 && d[0].steps == 4096, "c = 1: no layers to feed, every step (%g, %g)", d[0].layer_comm,
          d[0].steps);
  /* refusals */
  ovl_model_cost r;
  ovl_plan c = bs_plan(OVL_ALGO_BSUMMA, 4, 0, 0, 1);
  ovl_bsmul_shape bad = sh;
  bad.blocks_a = bad.nblk * bad.nblk + 1;
  T_ERR(ovl_model_bsmul(&m, &c, &bad, &r, NULL), OVL_ERR_ARG);
  T_ERR(ovl_model_bsmul(&m, &c, NULL, &r, NULL), OVL_ERR_ARG);
  c.p = 3, c.q = 1;
  T_ERR(ovl_model_bsmul(&m, &c, &sh, &r, NULL), OVL_ERR_GRID);
  c = bs_plan(OVL_ALGO_BS25D, 32, 2, 8, 1); /* c > s */
  T_ERR(ovl_model_bsmul(&m, &c, &sh, &r, NULL), OVL_ERR_GRID);
  c = ovl_plan_default(OVL_ALGO_SUMMA, 1000, 4);
  T_ERR(ovl_model_bsmul(&m, &c, &sh, &r, NULL), OVL_ERR_ARG);
  c = bs_plan(OVL_ALGO_BSUMMA, 4, 0, 0, 1);
  T_ERR(ovl_model_predict(&m, &c, &r), OVL_ERR_ARG); /* the dense entry has no shape */
  T_ERR(ovl_bsmul_shape_estimate(100, 200, 0.1, &bad), OVL_ERR_ARG);
  T_ERR(ovl_bsmul_shape_estimate(100, 10, 0, &bad), OVL_ERR_ARG);
}

/* ---- the planner ----------------------------------------------------------------- */

static int grid_ranks(const ovl_plan *p) { return p->algo == OVL_ALGO_BSUMMA ? p->p * p->q : p->s * p->s * p->c; }

/* describe -> parse gives the same plan and text */
static void round_trip(const ovl_plan *p) {
  char a[512], b[512];
  ovl_plan_describe(p, a, sizeof a);
  ovl_plan q = ovl_plan_auto(OVL_FAMILY_BSMUL, p->n);
  T_OK(ovl_plan_parse(a, OVL_FAMILY_BSMUL, &q));
  ovl_plan_describe(&q, b, sizeof b);
  T_CHECK(strcmp(a, b) == 0 && ovl_plan_same(p, &q), "round trip '%s' -> '%s'", a, b);
  T_CHECK(q.algo != OVL_ALGO_BS25D || (q.s == p->s && q.c == p->c), "'%s': grid %dx%dx%d", a, q.s, q.s, q.c);
  T_CHECK(q.algo != OVL_ALGO_BSUMMA || (q.p == p->p && q.q == p->q), "'%s': grid %dx%d", a, q.p, q.q);
}

static void test_planner(void) {
  ovl_bsmul_shape sh;
  T_OK(ovl_bsmul_shape_estimate(8000, 250, 0.05, &sh));
  ovl_machine m = ovl_machine_stampede2();
  int ppn = 1, nodes = 1, consec = 1;
  T_OK(ovl_node_ranks(MPI_COMM_WORLD, &ppn, &nodes, &consec));
  const int Ps[] = {1, 2, 4, 8, 16};
  for (int i = 0; i < 5; i++) {
    int P = Ps[i];
    char why[OVL_PLAN_WHY];
    ovl_plan p = ovl_plan_auto(OVL_FAMILY_BSMUL, sh.n);
    p.P = P;
    T_OK(ovl_plan_resolve_bsmul(MPI_COMM_WORLD, &p, &sh, NULL, why, sizeof why));
    T_CHECK(ovl_algo_family(p.algo) == OVL_FAMILY_BSMUL && p.ndup >= 1 && p.ndup <= OVL_LANES_MAX &&
                grid_ranks(&p) == P,
            "P=%d: %s ndup=%d on %d ranks", P, ovl_algo_name(p.algo), p.ndup, grid_ranks(&p));
    T_OK(ovl_plan_check(&p, OVL_FAMILY_BSMUL, 0));
    T_CHECK(strstr(why, "cost model") != NULL, "P=%d: why '%s'", P, why);
    round_trip(&p);
    /* the model's best: no candidate predicts less (with the ranks per node the planner saw) */
    ovl_model_cost best, other;
    ovl_plan pk = p;
    pk.ppn = ppn;
    T_OK(ovl_model_bsmul(&m, &pk, &sh, &best, NULL));
    ovl_plan cand[64];
    int nc = ovl_model_candidates(OVL_FAMILY_BSMUL, sh.n, P, cand, 64);
    for (int k = 0; k < nc; k++)
      if (cand[k].ppn = ppn, ovl_model_bsmul(&m, &cand[k], &sh, &other, NULL) == OVL_OK)
        T_CHECK(best.total <= other.total * (1 + 1e-12), "P=%d: chose %g s, a candidate predicts %g s", P, best.total,
                other.total);
    /* constraints: ndup, the algorithm, both */
    ovl_plan q = ovl_plan_auto(OVL_FAMILY_BSMUL, sh.n);
    q.P = P, q.ndup = 3;
    T_OK(ovl_plan_resolve_bsmul(MPI_COMM_WORLD, &q, &sh, NULL, NULL, 0));
    T_CHECK(q.ndup == 3 && grid_ranks(&q) == P, "P=%d ndup=3 given: got %d", P, q.ndup);
    q = ovl_plan_auto(OVL_FAMILY_BSMUL, sh.n);
    q.P = P, q.algo = OVL_ALGO_BSUMMA;
    T_OK(ovl_plan_resolve_bsmul(MPI_COMM_WORLD, &q, &sh, NULL, NULL, 0));
    T_CHECK(q.algo == OVL_ALGO_BSUMMA && q.p * q.q == P, "P=%d bsumma given: %s %dx%d", P, ovl_algo_name(q.algo), q.p,
            q.q);
    round_trip(&q);
    { /* bs2.5d: the model's c among the grids s x s x c = P with c <= s or s = 1 (2 ranks: 1x1x2) */
      q = ovl_plan_auto(OVL_FAMILY_BSMUL, sh.n);
      q.P = P, q.algo = OVL_ALGO_BS25D, q.ndup = 2;
      ovl_err rc = ovl_plan_resolve_bsmul(MPI_COMM_WORLD, &q, &sh, NULL, NULL, 0);
      T_CHECK(rc == OVL_OK && q.algo == OVL_ALGO_BS25D && q.ndup == 2 && grid_ranks(&q) == P &&
                  (q.c <= q.s || q.s == 1) && (P != 2 || (q.s == 1 && q.c == 2)),
              "P=%d bs2.5d ndup=2 given: %s %s %dx%dx%d ndup=%d", P, ovl_err_name(rc), ovl_algo_name(q.algo), q.s, q.s,
              q.c, q.ndup);
      if (rc == OVL_OK) round_trip(&q);
    }
    /* a given grid is kept */
    q = ovl_plan_auto(OVL_FAMILY_BSMUL, sh.n);
    q.P = P, q.algo = OVL_ALGO_BSUMMA, q.p = 1, q.q = P;
    T_OK(ovl_plan_resolve_bsmul(MPI_COMM_WORLD, &q, &sh, NULL, NULL, 0));
    T_CHECK(q.p == 1 && q.q == P, "P=%d grid 1x%d given: got %dx%d", P, P, q.p, q.q);
  }
  /* 8 ranks: c given alone */
  ovl_plan q = ovl_plan_auto(OVL_FAMILY_BSMUL, sh.n);
  q.P = 8, q.algo = OVL_ALGO_BS25D, q.c = 2;
  T_OK(ovl_plan_resolve_bsmul(MPI_COMM_WORLD, &q, &sh, NULL, NULL, 0));
  T_CHECK(q.s == 2 && q.c == 2, "8 ranks, c = 2: %dx%dx%d", q.s, q.s, q.c);
  /* refusals, agreed on every rank */
  q = ovl_plan_auto(OVL_FAMILY_BSMUL, sh.n);
  T_ERR(ovl_plan_resolve(MPI_COMM_WORLD, OVL_FAMILY_BSMUL, &q, NULL, NULL, 0), OVL_ERR_ARG); /* no shape */
  q = ovl_plan_auto(OVL_FAMILY_BSMUL, sh.n);
  q.algo = OVL_ALGO_SUMMA;
  T_ERR(ovl_plan_resolve_bsmul(MPI_COMM_WORLD, &q, &sh, NULL, NULL, 0), OVL_ERR_ARG);
  q = ovl_plan_auto(OVL_FAMILY_BSMUL, sh.n);
  q.ndup = OVL_LANES_MAX + 1;
  T_ERR(ovl_plan_resolve_bsmul(MPI_COMM_WORLD, &q, &sh, NULL, NULL, 0), OVL_ERR_ARG);
  ovl_bsmul_shape bad = sh;
  bad.products = -1;
  q = ovl_plan_auto(OVL_FAMILY_BSMUL, sh.n);
  T_ERR(ovl_plan_resolve_bsmul(MPI_COMM_WORLD, &q, &bad, NULL, NULL, 0), OVL_ERR_ARG);
  q = ovl_plan_auto(OVL_FAMILY_BSMUL, sh.n);
  q.P = 8, q.algo = OVL_ALGO_BS25D, q.s = 1, q.c = 8; /* 1 x 1 x 8: the one step's blocks split over the layers */
  T_OK(ovl_plan_resolve_bsmul(MPI_COMM_WORLD, &q, &sh, NULL, NULL, 0));
  T_CHECK(q.s == 1 && q.c == 8, "1x1x8 given: %dx%dx%d", q.s, q.s, q.c);
  q = ovl_plan_auto(OVL_FAMILY_BSMUL, sh.n);
  q.P = 32, q.algo = OVL_ALGO_BS25D, q.s = 2, q.c = 8; /* c > s */
  T_ERR(ovl_plan_resolve_bsmul(MPI_COMM_WORLD, &q, &sh, NULL, NULL, 0), OVL_ERR_GRID);
  T_ERR(ovl_plan_resolve_bsmul(MPI_COMM_WORLD, &q, NULL, NULL, NULL, 0), OVL_ERR_ARG);
  /* the schema's words for the family */
  ovl_family f;
  T_OK(ovl_family_parse("bsmul", &f));
  T_CHECK(f == OVL_FAMILY_BSMUL && strcmp(ovl_family_name(f), "bsmul") == 0, "family name");
  ovl_algo a;
  T_OK(ovl_algo_parse("bs2.5d", &a));
  T_CHECK(a == OVL_ALGO_BS25D && ovl_algo_is_3d(a) && !ovl_algo_is_3d(OVL_ALGO_BSUMMA), "bs2.5d");
  q = ovl_plan_auto(OVL_FAMILY_BSMUL, 100);
  T_OK(ovl_plan_parse("bs2.5d grid=2x2x2 ndup=4", OVL_FAMILY_BSMUL, &q));
  T_CHECK(q.algo == OVL_ALGO_BS25D && q.s == 2 && q.c == 2 && q.ndup == 4, "parse bs2.5d");
  T_ERR(ovl_plan_parse("summa", OVL_FAMILY_BSMUL, &q), OVL_ERR_ARG);
  T_ERR(ovl_plan_option_applies("--block", OVL_ALGO_BSUMMA), OVL_ERR_ARG);
  T_ERR(ovl_plan_option_applies("--repl", OVL_ALGO_BSUMMA), OVL_ERR_ARG);
  T_OK(ovl_plan_option_applies("--repl", OVL_ALGO_BS25D));
  T_ERR(ovl_plan_option_applies("--backend own", OVL_ALGO_BSUMMA), OVL_ERR_ARG);
}

/* ---- the shape against the multiplication ------------------------------------------- */

static uint64_t mix(uint64_t x) {
  x ^= x >> 33, x *= 0xff51afd7ed558ccdULL, x ^= x >> 33, x *= 0xc4ceb9fe1a85ec53ULL;
  return x ^ (x >> 33);
}

/* A dense n x n array (column-major) of blocks bs[], block (I, J) present
 * when |I - J| <= band and (I, J) is not in block column `hole`. */
static double *make_dense(int nblk, const int *bs, int band, int hole, uint64_t seed, int64_t *n_out) {
  int64_t n = 0, off[64];
  for (int b = 0; b < nblk; b++) off[b] = n, n += bs[b];
  off[nblk] = n;
  double *a = calloc((size_t)(n * n), sizeof(double));
  for (int J = 0; J < nblk; J++)
    for (int I = 0; I < nblk; I++) {
      if (abs(I - J) > band || J == hole) continue;
      for (int64_t j = off[J]; j < off[J + 1]; j++)
        for (int64_t i = off[I]; i < off[I + 1]; i++)
          a[i + j * n] = 1.0 + (double)(mix(seed + (uint64_t)(i * n + j)) % 1000) / 1000.0;
    }
  *n_out = n;
  return a;
}

static void test_shape(void) {
  enum { NB = 13 };
  const int bs[NB] = {3, 1, 4, 1, 5, 2, 6, 2, 3, 5, 1, 4, 2};
  int64_t n = 0;
  double *da = make_dense(NB, bs, 2, 4, 11, &n), *db = make_dense(NB, bs, 3, -1, 29, &n);
  /* independent counts: blocks present, products over (I, K, J), their flops */
  int64_t blocks[2] = {0, 0}, prod = 0;
  double flops = 0;
  for (int I = 0; I < NB; I++)
    for (int K = 0; K < NB; K++) {
      int inA = abs(I - K) <= 2 && K != 4, inB = abs(I - K) <= 3;
      blocks[0] += inA, blocks[1] += inB;
      if (!inA) continue;
      for (int J = 0; J < NB; J++)
        if (abs(K - J) <= 3) prod++, flops += 2.0 * bs[I] * bs[K] * bs[J];
    }
  int dims[2] = {0, 0};
  MPI_Dims_create(g_size, 2, dims);
  ovl_grid2d g = NULL;
  T_OK(ovl_grid2d_create(MPI_COMM_WORLD, dims[0], dims[1], 0, &g));
  ovl_dmat D = NULL;
  ovl_bsmat A = NULL, B = NULL, C = NULL;
  T_OK(ovl_dmat_create(g, n, n, &D));
  T_OK(ovl_bsmat_create(g, NB, bs, 7, &A));
  T_OK(ovl_bsmat_create_like(A, &B));
  T_OK(ovl_bsmat_create_like(A, &C));
  T_OK(ovl_dmat_scatter(D, g_rank == 0 ? da : NULL));
  T_OK(ovl_bsmat_from_dense(D, 0, A));
  T_OK(ovl_dmat_scatter(D, g_rank == 0 ? db : NULL));
  T_OK(ovl_bsmat_from_dense(D, 0, B));
  ovl_bsmul_shape sh;
  T_OK(ovl_bsmat_shape(A, B, &sh));
  int64_t va = 0, vb = 0, ba = 0, bb = 0;
  T_OK(ovl_bsmat_count(A, &ba, &va, NULL));
  T_OK(ovl_bsmat_count(B, &bb, &vb, NULL));
  T_CHECK(sh.n == n && sh.nblk == NB && sh.blocks_a == blocks[0] && sh.blocks_b == blocks[1] && sh.blocks_a == ba &&
              sh.blocks_b == bb && sh.values_a == va && sh.values_b == vb,
          "shape: n %lld nblk %lld blocks %lld %lld (expected %lld %lld) values %lld %lld (expected %lld %lld)",
          (long long)sh.n, (long long)sh.nblk, (long long)sh.blocks_a, (long long)sh.blocks_b, (long long)blocks[0],
          (long long)blocks[1], (long long)sh.values_a, (long long)sh.values_b, (long long)va, (long long)vb);
  T_CHECK(sh.products == prod && fabs(sh.flops - flops) <= 1e-9 * flops,
          "shape: %lld products and %g flops, expected %lld and %g", (long long)sh.products, sh.flops, (long long)prod,
          flops);
  /* the multiplication's own count at eps = 0, for every N_DUP it takes here */
  for (int nd = 1; nd <= 2; nd++) {
    ovl_bsmul_stats st;
    T_OK(ovl_bsmat_multiply(A, B, 0, nd, C, &st));
    int64_t done[2] = {st.products, st.skipped};
    MPI_Allreduce(MPI_IN_PLACE, done, 2, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    T_CHECK(done[0] + done[1] == sh.products && done[1] == 0,
            "ndup %d: the product computed %lld and skipped %lld block products, the shape counts %lld", nd,
            (long long)done[0], (long long)done[1], (long long)sh.products);
  }
  /* the planner takes the counted shape */
  ovl_plan p = ovl_plan_auto(OVL_FAMILY_BSMUL, n);
  T_OK(ovl_plan_resolve_bsmul(MPI_COMM_WORLD, &p, &sh, NULL, NULL, 0));
  T_CHECK(grid_ranks(&p) == g_size, "planned on %d ranks for %d", grid_ranks(&p), g_size);
  /* refusals: another layout, NULL */
  ovl_bsmat E = NULL;
  T_OK(ovl_bsmat_create(g, NB, bs, 8, &E)); /* another permutation */
  T_ERR(ovl_bsmat_shape(A, E, &sh), OVL_ERR_ARG);
  T_ERR(ovl_bsmat_shape(A, B, NULL), OVL_ERR_ARG);
  ovl_bsmat_destroy(&E), ovl_bsmat_destroy(&A), ovl_bsmat_destroy(&B), ovl_bsmat_destroy(&C);
  ovl_dmat_destroy(&D);
  ovl_grid2d_destroy(&g);
  free(da), free(db);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  test_model();
  test_planner();
  test_shape();
  int rc = t_finish("test_bsplan");
  MPI_Finalize();
  return rc;
}
