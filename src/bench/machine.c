/* The machine of the cost models, measured (ovl/bench.h, docs/design/models.md). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_impl.h"
#include "ovl/kernels.h"

enum { MACH_MAXSZ = 32, MACH_MAX_ITERS = 10000 };

ovl_bench_machine_params ovl_bench_machine_default(void) {
  ovl_bench_machine_params p;
  memset(&p, 0, sizeof p);
  p.comm = MPI_COMM_WORLD;
  p.name = "this-machine";
  p.eager = 65536, p.max_bytes = (int64_t)16 << 20;
  p.window = 16, p.iters = 10;
  return p;
}

static ovl_err mach_check(const ovl_bench_machine_params *p, int P) {
  OVL_CHECK(P >= 2, OVL_ERR_ARG, "needs at least 2 ranks (got %d)", P);
  OVL_CHECK(p->iters >= 1 && p->iters <= MACH_MAX_ITERS, OVL_ERR_ARG, "bench machine: iterations must be in [1, %d]",
            MACH_MAX_ITERS);
  OVL_CHECK(p->window >= 1 && p->window <= 64, OVL_ERR_ARG, "bench machine: window must be in [1, 64], got %d",
            p->window);
  OVL_CHECK(p->max_bytes >= 4096 && p->max_bytes <= ((int64_t)1 << 30), OVL_ERR_ARG,
            "bench machine: the largest message must be in [4 KiB, 1 GiB]");
  OVL_CHECK(p->eager >= 8, OVL_ERR_ARG, "bench machine: eager must be >= 8");
  return OVL_OK;
}

/* Ping-pong between ranks 0 and 1 (one buffer, a barrier before each
 * repetition): the fastest repetition of each size. */
static ovl_err mach_pingpong(const ovl_bench_machine_params *p, int window, int64_t lo, int64_t hi,
                             ovl_bench_pingpong_result *res) {
  ovl_bench_pingpong_params pp = ovl_bench_pingpong_default();
  pp.comm = p->comm;
  pp.min_bytes = lo, pp.max_bytes = hi;
  pp.half = 1, pp.pairs = 1, pp.window = window, pp.barrier = 1;
  pp.large = ((int64_t)1 << 20) - 1; /* from 1 MiB on: fewer repetitions */
  pp.iters = window ? (p->iters > 3 ? 3 : p->iters) : 4 * p->iters;
  pp.iters_large = window ? pp.iters : p->iters > 5 ? p->iters / 2 : p->iters;
  pp.warmup = pp.warmup_large = 1;
  pp.cache_bytes = 0, pp.mem_limit = p->mem_limit;
  return ovl_bench_pingpong(&pp, res);
}

/* alpha and beta from rows[0..n-1]: the fit, else the largest size's time per byte. */
static void mach_fit(const ovl_bench_pingpong_row *rows, int n, double *alpha, double *beta) {
  ovl_bench_fit f;
  ovl_bench_pingpong_fit(rows, n, 0, 0, 0, &f);
  *alpha = *beta = 0;
  if (n < 2) return;
  if (f.status == 0) {
    *alpha = f.alpha > 0 ? f.alpha : 0;
    *beta = f.beta;
    return;
  }
  double s = (double)rows[n - 1].bytes, t = rows[n - 1].st.min; /* noisy or flat data */
  *beta = t / s;
}

ovl_err ovl_bench_machine(const ovl_bench_machine_params *p, ovl_machine *m, double *gflops) {
  OVL_TRY(ovl_check_ptr(p, "ovl_bench_machine", "p"));
  OVL_TRY(ovl_check_ptr(m, "ovl_bench_machine", "m"));
  OVL_TRY(ovl_check_comm(p->comm, "ovl_bench_machine"));
  MPI_Comm comm = p->comm;
  int P = 0, rank = 0;
  OVL_MPI(MPI_Comm_size(comm, &P));
  OVL_MPI(MPI_Comm_rank(comm, &rank));
  OVL_TRY(ovl_err_agree(comm, mach_check(p, P)));
  memset(m, 0, sizeof *m);
  snprintf(m->name, sizeof m->name, "%s", p->name ? p->name : "this-machine");
  m->eager = (double)p->eager;
  int64_t maxsz = p->max_bytes;
  OVL_TRY(ovl_bench_check_memory(comm, 2.0 * 8.0 * (double)(maxsz / 4 + 64) + 4.0 * (double)maxsz, p->mem_limit));

  /* 1. ping-pong on ranks 0 and 1 (the others sleep), fastest repetition; the rows use st.min */
  ovl_bench_pingpong_result pr;
  OVL_TRY(mach_pingpong(p, 0, 8, maxsz, &pr));
  for (int i = 0; i < pr.nrows; i++) pr.rows[i].st.median = pr.rows[i].st.min;
  int nsmall = 0;
  while (nsmall < pr.nrows && pr.rows[nsmall].bytes <= p->eager) nsmall++;
  mach_fit(pr.rows, nsmall, &m->alpha, &m->beta);
  mach_fit(pr.rows + nsmall, pr.nrows - nsmall, &m->alpha_r, &m->beta_r);
  if (pr.nrows - nsmall < 2) m->alpha_r = m->alpha, m->beta_r = m->beta;
  if (nsmall < 2) m->alpha = m->alpha_r, m->beta = m->beta_r;
  ovl_bench_pingpong_free(&pr);
  /* peak_bw: a window of messages in flight, the best over the large sizes */
  ovl_bench_pingpong_result wr;
  OVL_TRY(mach_pingpong(p, p->window, maxsz / 16 > 65536 ? maxsz / 16 : 65536, maxsz, &wr));
  for (int i = 0; i < wr.nrows; i++) {
    double bw = wr.rows[i].st.min > 0 ? (double)wr.rows[i].bytes / wr.rows[i].st.min : 0;
    if (bw > m->peak_bw) m->peak_bw = bw;
  }
  ovl_bench_pingpong_free(&wr);
  ovl_i_bprogress(p->progress, p->progress_ctx, 1, 3,
                  "ping-pong: alpha %.2e s, beta %.2e s/B; alpha_r %.2e s, beta_r %.2e s/B; peak %.0f MB/s", m->alpha,
                  m->beta, m->alpha_r, m->beta_r, m->peak_bw / 1e6);

  /* 2. gamma of one core: one rank per core of every node at once (the
   * others wait), the slowest; the node's cores go into the file */
  int cores = 0;
  OVL_TRY(ovl_node_cores(comm, &cores));
  OVL_MPI(MPI_Allreduce(MPI_IN_PLACE, &cores, 1, MPI_INT, MPI_MIN, comm));
  MPI_Comm node = MPI_COMM_NULL;
  int lrank = 0;
  OVL_MPI(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node));
  MPI_Comm_rank(node, &lrank);
  MPI_Comm_free(&node);
  double gf = lrank < cores ? ovl_local_dgemm_gflops(512, 3) : INFINITY;
  OVL_TRY(ovl_i_bsleep_barrier(comm, 1000)); /* the waiting ranks sleep, leaving the cores to the dgemm */
  OVL_MPI(MPI_Allreduce(MPI_IN_PLACE, &gf, 1, MPI_DOUBLE, MPI_MIN, comm));
  m->gamma = gf > 0 && isfinite(gf) ? 1e-9 / gf : 0;
  m->cores = cores, m->nics = 1;
  if (gflops) *gflops = gf;
  ovl_i_bprogress(p->progress, p->progress_ctx, 2, 3,
                  "local dgemm: %.1f GFLOP/s per core (one rank per core at once), %d cores per node", gf, cores);

  /* 3. f_BW of three collectives over p = 2, 4, ..., P: the first p ranks, the others sleep */
  static const ovl_bench_op ops[3] = {OVL_BENCH_BCAST, OVL_BENCH_REDUCE, OVL_BENCH_ALLREDUCE};
  static const ovl_mcoll mops[3] = {OVL_MC_BCAST, OVL_MC_REDUCE, OVL_MC_ALLREDUCE};
  ovl_coll_cfg cfg = ovl_coll_cfg_default();
  double *s0 = NULL, *s1 = NULL, *t = NULL;
  ovl_err rc = ovl_calloc(sizeof(double) * (size_t)(maxsz / 4 + 64), &s0);
  if (!rc) rc = ovl_calloc(sizeof(double) * (size_t)(maxsz / 4 + 64), &s1);
  if (!rc) rc = ovl_calloc(sizeof(double) * (size_t)p->iters, &t);
  rc = ovl_err_agree(comm, rc);
  for (int np = 2; np <= P && !rc; np = np * 2 > P && np < P ? P : np * 2) {
    MPI_Comm cc;
    OVL_MPI(MPI_Comm_split(comm, rank < np ? 0 : MPI_UNDEFINED, rank, &cc));
    for (int o = 0; o < 3 && !rc; o++) {
      double fs[MACH_MAXSZ], fb[MACH_MAXSZ];
      int nf = 0;
      if (cc != MPI_COMM_NULL) {
        for (int64_t sz = 1024; sz <= maxsz && !rc && nf < MACH_MAXSZ; sz *= 4) {
          int64_t ne = sz / 8;
          int it = sz >= (1 << 20) ? (p->iters > 5 ? p->iters / 2 : p->iters) : p->iters;
          for (int r = -1; r < it && !rc; r++) {
            ovl_req q = NULL;
            MPI_Barrier(cc);
            double t0 = ovl_time();
            rc = ovl_i_bop_post(ops[o], s0, s1, ne, cc, &cfg, &q);
            if (!rc) rc = ovl_req_wait(&q);
            if (r >= 0) t[r] = ovl_time() - t0;
          }
          if (rc) ovl_fatal(comm, rc, "bench machine: %s", ovl_errmsg());
          ovl_stats st;
          ovl_stats_max_over_ranks(cc, t, it, &st);
          fs[nf] = (double)sz, fb[nf++] = ovl_coll_eff_bw((double)sz, np, st.median);
        }
      }
      ovl_i_bsleep_barrier(comm, 1000);
      OVL_MPI(MPI_Bcast(&nf, 1, MPI_INT, 0, comm));
      OVL_MPI(MPI_Bcast(fs, MACH_MAXSZ, MPI_DOUBLE, 0, comm));
      OVL_MPI(MPI_Bcast(fb, MACH_MAXSZ, MPI_DOUBLE, 0, comm));
      if (nf > 0) rc = ovl_machine_set_fbw(m, mops[o], np, fs, fb, nf);
    }
    if (cc != MPI_COMM_NULL) MPI_Comm_free(&cc);
    if (np == P) break;
  }
  ovl_free(&s0), ovl_free(&s1), ovl_free(&t);
  rc = ovl_err_agree(comm, rc);
  if (!rc) ovl_i_bprogress(p->progress, p->progress_ctx, 3, 3, "f_BW: %d tables", m->nfbw);
  return rc;
}
