#define _POSIX_C_SOURCE 200809L
/* cost models (serial): the papers' own numbers and formulas, the collective
 * L(p)/W(p) table, N_DUP through f_BW, HSUMMA's G analysis, the algorithm
 * models' identities, and machine files. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ovl/model.h"
#include "ovl/ovl.h"
#include "ovltest.h"

static int close_rel(double got, double want, double tol) { return fabs(got - want) <= tol * fabs(want); }

/* Huang-Chow V-A: p = 4, n = 1912^2 * 8 B = 27.89 MB, 12000 MB/s, latency
 * neglected: T_P2P = 2.324e-3, T_Bcast = T_Reduce = 3.487e-3, T_baseline =
 * 2 (T_P2P + T_Reduce) + 3 T_Bcast = 0.02208 s; and their 0.01794 s of local
 * products. */
static void test_huang_chow(void) {
  ovl_machine m = ovl_machine_stampede2();
  m.alpha = m.alpha_r = 0;
  double blk = 1912.0 * 1912.0 * 8.0;
  T_CHECK(fabs(blk / 1048576.0 - 27.89) < 0.005, "message %.4f MB", blk / 1048576.0);
  double tp = ovl_p2p_time(&m, blk);
  double tb = ovl_coll_time_ab(&m, OVL_CM_SCATTER_ALLGATHER, 4, blk, 1);
  double tr = ovl_coll_time_ab(&m, OVL_CM_RABENSEIFNER, 4, blk, 1);
  T_CHECK(fabs(tp - 2.324e-3) < 0.0005e-3, "T_P2P %.6e", tp);
  /* 1.5 x 2.32426e-3 = 3.48639e-3, printed as 3.487e-3 in the paper */
  T_CHECK(fabs(tb - 3.487e-3) < 0.001e-3, "T_Bcast %.6e", tb);
  T_CHECK(fabs(tr - 3.487e-3) < 0.001e-3, "T_Reduce %.6e", tr);
  ovl_plan c = ovl_plan_default(OVL_ALGO_SSC4, 7645, 64);
  c.ndup = 1; /* the paper's baseline (the family's default N_DUP is 4) */
  ovl_model_cost k4, k5, k3;
  T_OK(ovl_model_predict(&m, &c, &k4));
  double comm = k4.total - k4.compute;
  T_CHECK(fabs(comm - 0.02208) < 0.000005, "T_baseline %.6e", comm);
  T_CHECK(fabs(k4.latency) < 1e-15 && fabs(k4.bandwidth - comm) < 1e-12, "alpha = 0: all bandwidth");
  T_CHECK(fabs(k4.compute - 0.01794) < 1e-9, "local products %.6e", k4.compute);
  /* Alg. 5 with N_DUP = 1 is Alg. 4; Alg. 3 adds the transpose of D^2 */
  c.algo = OVL_ALGO_SSC5;
  T_OK(ovl_model_predict(&m, &c, &k5));
  T_CHECK(fabs(k5.total - k4.total) < 1e-15, "alg5 ndup=1 %.9e vs alg4 %.9e", k5.total, k4.total);
  c.algo = OVL_ALGO_SSC3;
  T_OK(ovl_model_predict(&m, &c, &k3));
  T_CHECK(fabs(k3.total - k4.total - tp) < 1e-12, "alg3 = alg4 + T_P2P");
  /* pipelining: with N_DUP = 4 the three phases overlap, and with one
   * stream per link already at the peak, no bandwidth is gained: the
   * prediction lies between max-of-phases and the baseline */
  c.algo = OVL_ALGO_SSC5, c.ndup = 4;
  T_OK(ovl_model_predict(&m, &c, &k5));
  double floor_ = (tb + tb) + (tr + tb) + (tr + 2 * tp); /* sums, the N=1 value */
  double ceil_ = fmax(tb, tb) + fmax(tr, tb) + fmax(tr, tp);
  T_CHECK(k5.total - k5.compute < floor_ - 1e-12 && k5.total - k5.compute >= ceil_ - 1e-12,
          "alg5 ndup=4 comm %.6e within [%.6e, %.6e)", k5.total - k5.compute, ceil_, floor_);
}

static void test_lw(void) {
  ovl_lw r = ovl_coll_lw(OVL_CM_SCATTER_ALLGATHER, 8, 1);
  T_CHECK(fabs(r.L - 10.0) < 1e-12 && fabs(r.W - 1.75) < 1e-12, "scatter-allgather p=8: L %g W %g", r.L, r.W);
  r = ovl_coll_lw(OVL_CM_CHAIN, 5, 4); /* (X + p - 1)(alpha + m/X beta), X = 4, p = 5 */
  T_CHECK(fabs(r.L - 8.0) < 1e-12 && fabs(r.W - 2.0) < 1e-12, "chain: L %g W %g", r.L, r.W);
  r = ovl_coll_lw(OVL_CM_BINOMIAL, 5, 1);
  T_CHECK(r.L == 3.0 && r.W == 3.0, "binomial p=5: ceil(log2 5) = 3");
  r = ovl_coll_lw(OVL_CM_RABENSEIFNER, 16, 1);
  T_CHECK(fabs(r.L - 8.0) < 1e-12 && fabs(r.W - 1.875) < 1e-12, "rabenseifner p=16");
  r = ovl_coll_lw(OVL_CM_RING_ALLGATHER, 4, 1);
  T_CHECK(r.L == 3.0 && fabs(r.W - 0.75) < 1e-12, "ring allgather p=4");
  r = ovl_coll_lw(OVL_CM_RING_ALLREDUCE, 4, 1);
  T_CHECK(r.L == 6.0 && fabs(r.W - 1.5) < 1e-12, "ring allreduce p=4");
  r = ovl_coll_lw(OVL_CM_SCATTER_ALLGATHER, 1, 1);
  T_CHECK(r.L == 0 && r.W == 0, "p = 1 costs nothing");
  /* regimes: eager up to 64 KiB, rendezvous above */
  ovl_machine m = ovl_machine_stampede2();
  m.alpha = 1e-6, m.beta = 1e-9, m.alpha_r = 5e-6, m.beta_r = 1e-10, m.eager = 65536;
  T_CHECK(close_rel(ovl_p2p_time(&m, 1000), 1e-6 + 1e-6, 1e-12), "eager p2p");
  T_CHECK(close_rel(ovl_p2p_time(&m, 1e6), 5e-6 + 1e-4, 1e-12), "rendezvous p2p");
  /* generic form: binomial bcast of 1 MB over 8 = 3 (alpha_r + m beta_r) */
  T_CHECK(close_rel(ovl_coll_time_ab(&m, OVL_CM_BINOMIAL, 8, 1e6, 1), 3 * (5e-6 + 1e-4), 1e-12), "binomial time");
}

static void test_fbw_ndup(void) {
  ovl_machine m;
  memset(&m, 0, sizeof m);
  m.alpha = m.alpha_r = 10e-6, m.beta = m.beta_r = 1e-9, m.gamma = 1e-10, m.eager = 1 << 16;
  m.peak_bw = 4e9; /* many streams reach 4x one stream */
  /* measured bcast over 4: rises with size, saturating at 1 GB/s */
  double size[4] = {1024, 16384, 262144, 4194304}, bw[4] = {1e7, 1e8, 5e8, 1e9};
  T_OK(ovl_machine_set_fbw(&m, OVL_MC_BCAST, 4, size, bw, 4));
  T_CHECK(close_rel(ovl_fbw_eval(&m, OVL_MC_BCAST, 4, 16384), 1e8, 1e-12), "f_BW at a point");
  T_CHECK(close_rel(ovl_fbw_eval(&m, OVL_MC_BCAST, 4, 4096), sqrt(1e7 * 1e8), 1e-12), "log-linear midpoint");
  T_CHECK(ovl_fbw_eval(&m, OVL_MC_BCAST, 4, 1e9) == 1e9 && ovl_fbw_eval(&m, OVL_MC_BCAST, 4, 1) == 1e7, "clamped");
  T_CHECK(ovl_fbw_eval(&m, OVL_MC_BCAST, 8, 1e6) == 0 && ovl_fbw_eval(&m, OVL_MC_REDUCE, 4, 1e6) == 0, "no table");
  /* T = 2 (p-1)/p n / f: 4 MiB at 1 GB/s over 4 ranks */
  double t1 = ovl_coll_time(&m, OVL_MC_BCAST, 4, 4194304, 1, 1, NULL);
  T_CHECK(close_rel(t1, 1.5 * 4194304 / 1e9, 1e-12), "T from f_BW %.6e", t1);
  /* N_DUP = 4: parts of 1 MiB reach f ~ 7.1e8 each, aggregate 2.8e9 < peak */
  double f1m = ovl_fbw_eval(&m, OVL_MC_BCAST, 4, 1048576);
  double t4 = ovl_coll_time(&m, OVL_MC_BCAST, 4, 4194304, 4, 1, NULL);
  T_CHECK(close_rel(t4, 1.5 * 4194304 / (4 * f1m), 1e-12), "N_DUP = 4 time %.6e", t4);
  T_CHECK(ovl_ndup_pays(&m, OVL_MC_BCAST, 4, 4194304, 4), "N f(n/N) >= f(n) at 4 MiB");
  /* N_DUP = 64: 64 KiB parts at ~2.2e8, aggregate capped at the 4e9 peak */
  double t64 = ovl_coll_time(&m, OVL_MC_BCAST, 4, 4194304, 64, 1, NULL);
  T_CHECK(close_rel(t64, 1.5 * 4194304 / 4e9, 1e-12), "capped at peak %.6e", t64);
  /* PPN = 4 shares the link: cap 1e9, no better than N_DUP = 1 */
  double tp = ovl_coll_time(&m, OVL_MC_BCAST, 4, 4194304, 4, 4, NULL);
  T_CHECK(close_rel(tp, 1.5 * 4194304 / 1e9, 1e-12), "ppn cap %.6e", tp);
  /* a protocol switch (f jumps 10x from 64 to 128 KiB): two 64 KiB parts reach
   * 2e8 < f(128 KiB) = 1e9, so splitting 128 KiB does not pay; 2 MiB does */
  double s2[3] = {1024, 65536, 131072}, b2[3] = {1e7, 1e8, 1e9};
  T_OK(ovl_machine_set_fbw(&m, OVL_MC_REDUCE, 4, s2, b2, 3));
  T_CHECK(!ovl_ndup_pays(&m, OVL_MC_REDUCE, 4, 131072, 2), "splitting at the switch does not pay");
  T_CHECK(ovl_ndup_pays(&m, OVL_MC_REDUCE, 4, 2097152, 2), "splitting 2 MiB pays");
  /* the rule n / N_DUP >= n_t */
  T_CHECK(ovl_ndup_rule(1048576, 262144, 8) == 4, "rule 4");
  T_CHECK(ovl_ndup_rule(1048576, 262144, 3) == 3, "rule capped");
  T_CHECK(ovl_ndup_rule(1000, 262144, 8) == 1, "rule small");
  /* errors */
  double bad[2] = {100, 50};
  T_ERR(ovl_machine_set_fbw(&m, OVL_MC_BCAST, 4, bad, bw, 2), OVL_ERR_ARG);
  T_ERR(ovl_machine_set_fbw(&m, OVL_MC_BCAST, 1, size, bw, 4), OVL_ERR_ARG);
}

static void test_hsumma(void) {
  /* G = 1 is the SUMMA formula of Section 4.1 (scatter-allgather):
   * (log2 p + 2 (sqrt p - 1)) alpha n / b + 4 (1 - 1/sqrt p) n^2 / sqrt p beta */
  double al = 1e-5, be = 1e-9;
  int64_t n = 8192, b = 64;
  int P = 1024;
  double summa = (10 + 2 * 31) * al * 8192.0 / 64 + 4 * (1 - 1 / 32.0) * 8192.0 * 8192.0 / 32 * be;
  T_CHECK(close_rel(ovl_hsumma_comm_sag(al, be, n, b, b, P, 1), summa, 1e-12), "G = 1 is SUMMA");
  T_CHECK(close_rel(ovl_hsumma_comm_sag(al, be, n, b, b, P, P), summa, 1e-12), "G = P is SUMMA");
  /* alpha/beta = 1e4 > 2 n b / p = 1024: G = sqrt(p) = 32 is the minimum */
  T_CHECK(ovl_hsumma_gopt(al, be, n, b, P) == 32, "gopt latency-bound");
  double t32 = ovl_hsumma_comm_sag(al, be, n, b, b, P, 32);
  T_CHECK(t32 < summa && t32 < ovl_hsumma_comm_sag(al, be, n, b, b, P, 16) &&
              t32 < ovl_hsumma_comm_sag(al, be, n, b, b, P, 64),
          "minimum at 32");
  /* alpha/beta = 100 < 1024: G = sqrt(p) is the maximum, SUMMA is best */
  T_CHECK(ovl_hsumma_gopt(1e-7, be, n, b, P) == 1, "gopt bandwidth-bound");
  T_CHECK(ovl_hsumma_comm_sag(1e-7, be, n, b, b, P, 32) > ovl_hsumma_comm_sag(1e-7, be, n, b, b, P, 1), "maximum");
  /* the algorithm model: hsumma with G = 1 or P equals summa; G = 4 differs */
  ovl_machine m = ovl_machine_stampede2();
  ovl_plan c = ovl_plan_default(OVL_ALGO_SUMMA, 4096, 16);
  c.b = 128;
  ovl_model_cost s, h;
  T_OK(ovl_model_predict(&m, &c, &s));
  c.algo = OVL_ALGO_HSUMMA;
  T_OK(ovl_model_predict(&m, &c, &h));
  T_CHECK(close_rel(h.total, s.total, 1e-12), "hsumma G=1");
  c.G = 16;
  T_OK(ovl_model_predict(&m, &c, &h));
  T_CHECK(close_rel(h.total, s.total, 1e-12), "hsumma G=P");
  c.G = 4;
  T_OK(ovl_model_predict(&m, &c, &h));
  T_CHECK(!close_rel(h.total, s.total, 1e-6) && h.compute == s.compute, "hsumma G=4 differs in communication");
  c.G = 3;
  T_ERR(ovl_model_predict(&m, &c, &h), OVL_ERR_GRID);
  /* hsumma.c at G = 1 is SUMMA with panel b, at G = P SUMMA with panel M,
   * with and without lookahead, also when M is not b */
  for (int la = 0; la < 2; la++)
    for (int mb = 1; mb <= 2; mb++) {
      ovl_plan sb = ovl_plan_default(OVL_ALGO_SUMMA, 4096, 16), sm = sb, hp = sb;
      sb.b = 128, sm.b = 128 * mb, sb.lookahead = sm.lookahead = la;
      hp.algo = OVL_ALGO_HSUMMA, hp.b = 128, hp.outer = 128 * mb, hp.lookahead = la;
      ovl_model_cost pb, pm, p1, pp;
      T_OK(ovl_model_predict(&m, &sb, &pb));
      T_OK(ovl_model_predict(&m, &sm, &pm));
      hp.G = 1;
      T_OK(ovl_model_predict(&m, &hp, &p1));
      hp.G = 16;
      T_OK(ovl_model_predict(&m, &hp, &pp));
      T_CHECK(close_rel(p1.total, pb.total, 1e-12) && close_rel(p1.latency, pb.latency, 1e-12),
              "hsumma G=1 M=%d b lookahead %d: %g, summa b %g", mb, la, p1.total, pb.total);
      T_CHECK(close_rel(pp.total, pm.total, 1e-12) && close_rel(pp.latency, pm.latency, 1e-12),
              "hsumma G=P M=%d b lookahead %d: %g, summa M %g", mb, la, pp.total, pm.total);
    }
  /* lookahead is credited at G = 4 (hidden communication); M = 3b/2 adds a
   * narrower sub-panel to every outer panel */
  ovl_plan h4 = ovl_plan_default(OVL_ALGO_HSUMMA, 4096, 16);
  h4.b = 128, h4.G = 4, h4.outer = 256;
  ovl_model_cost off, on, r;
  T_OK(ovl_model_predict(&m, &h4, &off));
  h4.lookahead = 1;
  T_OK(ovl_model_predict(&m, &h4, &on));
  T_CHECK(on.total < off.total && on.latency == off.latency && on.bandwidth == off.bandwidth,
          "hsumma G=4 lookahead %g vs %g", on.total, off.total);
  T_CHECK(off.total - off.compute > 0, "hsumma G=4 communicates");
  h4.lookahead = 0, h4.outer = 192;
  T_OK(ovl_model_predict(&m, &h4, &r));
  T_CHECK(r.latency > 0 && !close_rel(r.total, off.total, 1e-9), "hsumma G=4 M=192 b=128: %g", r.total);
  h4.outer = 64; /* M < b */
  T_ERR(ovl_model_predict(&m, &h4, &r), OVL_ERR_ARG);
}

static void test_algorithms(void) {
  ovl_machine m = ovl_machine_stampede2();
  ovl_model_cost r, la;
  /* SUMMA: compute = 2 n^3 / P gamma; lookahead hides the smaller part */
  ovl_plan c = ovl_plan_default(OVL_ALGO_SUMMA, 2048, 4);
  T_OK(ovl_model_predict(&m, &c, &r));
  T_CHECK(close_rel(r.compute, 2.0 * 2048 * 2048 * 2048 / 4 * ovl_model_gamma(&m, 1), 1e-12), "summa compute");
  T_CHECK(close_rel(r.total, r.latency + r.bandwidth + r.compute, 1e-12), "no overlap without lookahead");
  c.lookahead = 1;
  T_OK(ovl_model_predict(&m, &c, &la));
  T_CHECK(la.total < r.total && la.total >= fmax(r.compute, r.latency + r.bandwidth), "lookahead overlaps");
  /* Cannon on 2x2: 2 s shifts of an n/s block each */
  c = ovl_plan_default(OVL_ALGO_CANNON, 1000, 4);
  T_OK(ovl_model_predict(&m, &c, &r));
  T_CHECK(close_rel(r.latency + r.bandwidth, 4 * ovl_p2p_time(&m, 8.0 * 500 * 500), 1e-12), "cannon comm");
  c.P = 8;
  T_ERR(ovl_model_predict(&m, &c, &r), OVL_ERR_GRID);
  /* 3D and the SymmSquareCube family need a cube */
  c = ovl_plan_default(OVL_ALGO_3D, 1000, 6);
  T_ERR(ovl_model_predict(&m, &c, &r), OVL_ERR_GRID);
  c.P = 8;
  T_OK(ovl_model_predict(&m, &c, &r));
  T_CHECK(close_rel(r.compute, 2.0 * 500 * 500 * 500 * ovl_model_gamma(&m, 1), 1e-12), "3d compute");
  /* 2.5D: 2x2x2 on 8; c must divide s */
  c = ovl_plan_default(OVL_ALGO_SSC6, 1000, 8);
  T_OK(ovl_model_predict(&m, &c, &r));
  T_CHECK(close_rel(r.compute, 2 * 1 * 2.0 * 500.0 * 500 * 500 * ovl_model_gamma(&m, 1), 1e-12), "alg6 compute");
  c.s = 3, c.c = 2, c.P = 18;
  T_ERR(ovl_model_predict(&m, &c, &r), OVL_ERR_GRID);
  /* more N_DUP never predicts a slower Alg. 5 under the cap */
  c = ovl_plan_default(OVL_ALGO_SSC5, 4000, 8);
  double prev = 1e30;
  for (int d = 1; d <= 8; d++) {
    c.ndup = d;
    T_OK(ovl_model_predict(&m, &c, &r));
    T_CHECK(r.total <= prev * (1 + 1e-12), "alg5 ndup %d: %.6e after %.6e", d, r.total, prev);
    prev = r.total;
  }
  c.ndup = 0;
  T_ERR(ovl_model_predict(&m, &c, &r), OVL_ERR_ARG);
  ovl_algo k;
  T_OK(ovl_algo_parse("2.5d", &k));
  T_CHECK(k == OVL_ALGO_25D, "parse 2.5d");
  T_ERR(ovl_algo_parse("alg7", &k), OVL_ERR_ARG);
}

static void test_machine_file(void) {
  char path[] = "/tmp/ovl_machine_XXXXXX";
  int fd = mkstemp(path);
  T_CHECK(fd >= 0, "mkstemp");
  if (fd < 0) return;
  close(fd);
  ovl_machine m = ovl_machine_stampede2(), r;
  double size[3] = {1024, 65536, 1048576}, bw[3] = {1e8, 2e9, 9.5e9};
  T_OK(ovl_machine_set_fbw(&m, OVL_MC_REDUCE, 8, size, bw, 3));
  T_OK(ovl_machine_set_fbw(&m, OVL_MC_BCAST, 2, size, bw, 2));
  m.shm_bw = 4e10;
  T_OK(ovl_machine_write(&m, path));
  T_OK(ovl_machine_read(path, &r));
  T_CHECK(r.cores == 48 && r.nics == 1 && close_rel(r.shm_bw, 4e10, 1e-6), "node properties: %d cores, %d nics",
          r.cores, r.nics);
  T_CHECK(!strcmp(r.name, m.name) && close_rel(r.beta, m.beta, 1e-6) && close_rel(r.gamma, m.gamma, 1e-6) &&
              close_rel(r.alpha_r, m.alpha_r, 1e-6) && r.eager == m.eager && close_rel(r.peak_bw, m.peak_bw, 1e-6),
          "round trip of the scalars");
  T_CHECK(r.nfbw == 2 && r.fbw[0].p == 8 && r.fbw[0].coll == OVL_MC_REDUCE && r.fbw[0].npts == 3 &&
              close_rel(r.fbw[0].bw[2], 9.5e9, 1e-6) && r.fbw[1].npts == 2,
          "round trip of the tables");
  FILE *f = fopen(path, "w");
  fputs("{\"beta\": 1e-9, \"note\": {\"x\": [1, 2]}, \"gamma\": 2e-11}", f);
  fclose(f);
  T_OK(ovl_machine_read(path, &r));
  T_CHECK(r.beta_r == 1e-9 && r.alpha == 0 && r.cores == 0 && r.nics == 0 && r.shm_bw == 0,
          "rendezvous defaults to eager; node properties unknown; unknown keys skipped");
  const char *bad[] = {"{\"beta\": 1e-9}",
                       "{\"beta\": -1, \"gamma\": 1}",
                       "{\"beta\": 1e-9, \"gamma\": 1",
                       "[1]",
                       "{\"beta\": 1e-9, \"gamma\": 1, \"fbw\": [{\"coll\": \"scan\", \"p\": 2}]}",
                       "{\"beta\": nan, \"gamma\": 1}",
                       "{\"beta\": 1, \"gamma\": 1} x",
                       "{\"beta\": 1, \"gamma\": 1, \"cores\": -2}",
                       "{\"beta\": 1, \"gamma\": 1, \"cores\": 2.5}",
                       "{\"beta\": 1, \"gamma\": 1, \"fbw\": [{\"coll\": \"bcast\", \"p\": 2, \"size\": [1, 2], "
                       "\"bw\": [1]}]}"};
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
    f = fopen(path, "w");
    fputs(bad[k], f);
    fclose(f);
    T_ERR(ovl_machine_read(path, &r), OVL_ERR_FORMAT);
  }
  remove(path);
  T_ERR(ovl_machine_read("/nonexistent/ovl_machine.json", &r), OVL_ERR_IO);
}

/* Node properties: the cores a rank computes with, the share of a group's
 * bytes that leaves the node, and Huang & Chow's Table III meshes. */
static void test_nodes(void) {
  ovl_machine m = ovl_machine_stampede2(), u = m;
  u.cores = 0;
  T_CHECK(ovl_model_gamma(&u, 8) == u.gamma, "cores unknown: gamma per rank");
  T_CHECK(close_rel(ovl_model_gamma(&m, 1), m.gamma / 48, 1e-15) &&
              close_rel(ovl_model_gamma(&m, 8), m.gamma / 6, 1e-15) &&
              close_rel(ovl_model_gamma(&m, 5), m.gamma / 9, 1e-15) &&
              close_rel(ovl_model_gamma(&m, 96), m.gamma * 2, 1e-15),
          "48 cores: threads 48, 6, 9 (whole), a half core each at 96");
  T_CHECK(ovl_model_offnode(8, 1, 8, 1) == 1 && ovl_model_offnode(8, 8, 8, 4) == 1,
          "one rank a node, or strided apart");
  T_CHECK(ovl_model_offnode(8, 1, 8, 8) == 0, "a group that is a node");
  /* ranks 0..4 on nodes of 2: runs 2, 2, 1: (2*3 + 2*3 + 1*4) / (5*4) */
  T_CHECK(close_rel(ovl_model_offnode(5, 1, 1, 2), 0.8, 1e-15), "5 consecutive on nodes of 2: %g",
          ovl_model_offnode(5, 1, 1, 2));
  /* Table III's meshes: a node computes the same at PPN 1 (4^3 on 64 nodes)
   * and PPN 8 (8^3 on 64 nodes) */
  ovl_plan a = ovl_plan_default(OVL_ALGO_SSC5, 7645, 64), b = ovl_plan_default(OVL_ALGO_SSC5, 7645, 512);
  b.ppn = 8;
  ovl_model_cost ra, rb;
  T_OK(ovl_model_predict(&m, &a, &ra));
  T_OK(ovl_model_predict(&m, &b, &rb));
  T_CHECK(close_rel(ra.compute, 0.01794, 1e-3) && close_rel(rb.compute, 4.0 * 956 * 956 * 956 * m.gamma / 6, 1e-12),
          "compute per node: %g (PPN 1), %g (PPN 8)", ra.compute, rb.compute);
  /* with shm_bw the 8x8x8 mesh's column reductions stay in their node: less bandwidth */
  ovl_model_cost rs;
  m.shm_bw = 1e13;
  T_OK(ovl_model_predict(&m, &b, &rs));
  T_CHECK(rs.bandwidth < 0.8 * rb.bandwidth && rs.compute == rb.compute, "in-node transfers at shm_bw: %g < %g",
          rs.bandwidth, rb.bandwidth);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  test_huang_chow();
  test_lw();
  test_fbw_ndup();
  test_hsumma();
  test_algorithms();
  test_machine_file();
  test_nodes();
  int rc = t_finish("test_cost");
  MPI_Finalize();
  return rc;
}
