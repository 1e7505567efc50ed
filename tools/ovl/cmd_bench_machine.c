/* ovl bench machine: measure the parameters of the cost models and write a
 * machine file (ovl/model.h, docs/models.md).
 *
 *   alpha, beta      ping-pong between ranks 0 and 1, Hockney fit (relative
 *                    weights) over sizes up to the eager limit;
 *   alpha_r, beta_r  the same above it;
 *   peak_bw          ranks 0 -> 1 with a window of W messages in flight
 *                    (osu_bw style), the best over the large sizes;
 *   gamma            local dgemm (n = 512) on every rank at once, the slowest;
 *   f_BW             bcast, reduce, allreduce over the first p ranks, p = 2, 4,
 *                    8, ... and P, sizes 1 KiB .. max, effective bandwidth
 *                    2 (p-1) n / p / t, t = median over repetitions of the MAX
 *                    over ranks (the ranks not measuring sleep). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "bench_util.h"
#include "cli.h"

enum { MACH_MAXSZ = 32 };

static double pingpong(MPI_Comm comm, char *buf, int64_t bytes, int iters) {
  int r;
  MPI_Comm_rank(comm, &r);
  double t = 0;
  for (int it = -1; it < iters; it++) { /* first round is the warm-up */
    MPI_Barrier(comm);
    double t0 = ovl_time();
    if (r == 0) {
      MPI_Send(buf, (int)bytes, MPI_BYTE, 1, 7, comm);
      MPI_Recv(buf, (int)bytes, MPI_BYTE, 1, 7, comm, MPI_STATUS_IGNORE);
    } else if (r == 1) {
      MPI_Recv(buf, (int)bytes, MPI_BYTE, 0, 7, comm, MPI_STATUS_IGNORE);
      MPI_Send(buf, (int)bytes, MPI_BYTE, 0, 7, comm);
    }
    double dt = (ovl_time() - t0) / 2;
    if (it >= 0) t = it == 0 || dt < t ? dt : t; /* fastest one-way time */
  }
  return t;
}

static double window_bw(MPI_Comm comm, char *buf, int64_t bytes, int window, int iters) {
  int r;
  MPI_Comm_rank(comm, &r);
  MPI_Request req[64];
  double best = 0;
  for (int it = -1; it < iters; it++) {
    MPI_Barrier(comm);
    double t0 = ovl_time();
    for (int w = 0; w < window; w++) {
      if (r == 0) MPI_Isend(buf + w * bytes, (int)bytes, MPI_BYTE, 1, 8, comm, &req[w]);
      else MPI_Irecv(buf + w * bytes, (int)bytes, MPI_BYTE, 0, 8, comm, &req[w]);
    }
    MPI_Waitall(window, req, MPI_STATUSES_IGNORE);
    char ack = 0;
    if (r == 0) MPI_Recv(&ack, 1, MPI_CHAR, 1, 9, comm, MPI_STATUS_IGNORE);
    else MPI_Send(&ack, 1, MPI_CHAR, 0, 9, comm);
    double bw = (double)window * (double)bytes / (ovl_time() - t0);
    if (it >= 0 && bw > best) best = bw;
  }
  return best;
}

int cmd_bench_machine(int argc, char **argv) {
  int help = 0, quiet = 0, iters = 10, window = 16;
  int64_t eager = 65536, maxsz = (int64_t)16 << 20, mem_limit = 0;
  const char *out = NULL, *name = "this-machine";
  ovl_opt opts[] = {
      {"output", 'o', OVL_OPT_STRING, &out, "FILE", "machine file to write (JSON; required)", NULL, 0, -1},
      {"name", 0, OVL_OPT_STRING, &name, "NAME", "name stored in the file", NULL, 0, -1},
      {"eager", 0, OVL_OPT_SIZE, &eager, "BYTES", "boundary between the two alpha-beta regimes", NULL, 64,
       (int64_t)1 << 26},
      {"max-size", 'M', OVL_OPT_SIZE, &maxsz, "BYTES", "largest message measured", NULL, 4096, (int64_t)1 << 30},
      {"window", 'w', OVL_OPT_INT, &window, "W", "messages in flight for peak_bw", NULL, 1, 64},
      {"iterations", 'i', OVL_OPT_INT, &iters, "I", "repetitions per size", NULL, 1, 10000},
      BENCH_OPT_MEM_LIMIT(&mem_limit),
      {"quiet", 'q', OVL_OPT_FLAG, &quiet, NULL, "no progress lines", NULL, 0, -1},
      {"help", 'h', OVL_OPT_FLAG, &help, NULL, "show this help", NULL, 0, -1},
  };
  int prc = cli_parse("usage: mpiexec -n P ovl bench machine -o machine.json [options]\n\n"
                      "Measures the cost models' machine parameters (alpha and beta in two regimes, the peak\n"
                      "bandwidth of many streams, gamma of the local dgemm, f_BW of bcast, reduce and allreduce over\n"
                      "2, 4, 8, ... and P ranks) and writes them to a machine file for `ovl model`, `ovl tune` and\n"
                      "`auto`. Needs at least 2 ranks; ranks 0 and 1 should be on different nodes to measure the\n"
                      "network.",
                      opts, (int)(sizeof opts / sizeof opts[0]), argc, argv, 3, &help, NULL);
  if (prc >= 0) return prc;
  int P = 0, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  ovl_err rc = OVL_OK;
  if (!out) rc = ovl_err_set(OVL_ERR_ARG, "-o FILE is required");
  else if (P < 2) rc = ovl_err_set(OVL_ERR_ARG, "needs at least 2 ranks (got %d)", P);
  if ((rc = ovl_err_agree(MPI_COMM_WORLD, rc)) != OVL_OK) return cli_usage_fail("bench machine", rc);
  {
    const cli_out outs[] = {{out, "machine file"}};
    int orc = cli_check_outputs("bench machine", outs, 1, NULL, 0);
    if (orc >= 0) return orc;
  }

  ovl_machine m;
  memset(&m, 0, sizeof m);
  snprintf(m.name, sizeof m.name, "%s", name);
  m.eager = (double)eager;
  int64_t sizes[MACH_MAXSZ];
  int ns = bench_sizes(8, maxsz, sizes, MACH_MAXSZ);
  char *buf = NULL;
  double *s0 = NULL, *s1 = NULL;
  int64_t need = maxsz * window < ((int64_t)64 << 20) ? maxsz * window : (int64_t)64 << 20;
  if (need < maxsz * 2) need = maxsz * 2;
  rc = bench_check_memory((double)need + 2.0 * (8.0 * (double)(maxsz / 4) + 512.0), mem_limit);
  if (rc) return cli_fail("bench machine", rc);
  rc = ovl_calloc((size_t)need, &buf);
  if (!rc) rc = ovl_calloc(sizeof(double) * (size_t)maxsz / 4 + 64, &s0);
  if (!rc) rc = ovl_calloc(sizeof(double) * (size_t)maxsz / 4 + 64, &s1);
  if ((rc = ovl_err_agree(MPI_COMM_WORLD, rc)) != OVL_OK) {
    ovl_free(&buf), ovl_free(&s0), ovl_free(&s1);
    return cli_fail("bench machine", rc);
  }
  bench_progress prog;
  bench_progress_start(&prog, "machine", 4, !quiet);
  /* 1. ping-pong on ranks 0 and 1; the others sleep */
  MPI_Comm pair;
  MPI_Comm_split(MPI_COMM_WORLD, rank < 2 ? 0 : MPI_UNDEFINED, rank, &pair);
  double xs[2][MACH_MAXSZ], ts[2][MACH_MAXSZ];
  int nx[2] = {0, 0};
  double peak = 0;
  if (pair != MPI_COMM_NULL) {
    for (int k = 0; k < ns; k++) {
      int it = sizes[k] >= (1 << 20) ? (iters > 5 ? iters / 2 : iters) : iters * 4;
      double t = pingpong(pair, buf, sizes[k], it);
      int reg = sizes[k] > eager;
      xs[reg][nx[reg]] = (double)sizes[k], ts[reg][nx[reg]++] = t;
    }
    for (int64_t sz = maxsz / 16 > 65536 ? maxsz / 16 : 65536; sz <= maxsz; sz *= 4) {
      int w = window;
      while (w > 1 && sz * w > need) w--;
      double bw = window_bw(pair, buf, sz, w, iters > 3 ? 3 : iters);
      if (bw > peak) peak = bw;
    }
    MPI_Comm_free(&pair);
  }
  bench_sleep_barrier(MPI_COMM_WORLD, 1000); /* the other ranks wait without taking a core */
  MPI_Bcast(nx, 2, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Bcast(xs, 2 * MACH_MAXSZ, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  MPI_Bcast(ts, 2 * MACH_MAXSZ, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  MPI_Bcast(&peak, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  for (int reg = 0; reg < 2 && !rc; reg++) {
    double a = 0, b = 0;
    if (nx[reg] >= 2) rc = ovl_hockney_fit_weighted(xs[reg], ts[reg], NULL, nx[reg], &a, &b);
    if (a < 0) a = 0;
    if (!(b > 0) && nx[reg] >= 2) { /* noisy or flat data: the largest message's time per byte */
      int l = nx[reg] - 1;
      b = ts[reg][l] > a ? (ts[reg][l] - a) / xs[reg][l] : ts[reg][l] / xs[reg][l];
    }
    if (reg == 0) m.alpha = a, m.beta = b;
    else m.alpha_r = a, m.beta_r = b;
  }
  if (nx[1] < 2) m.alpha_r = m.alpha, m.beta_r = m.beta;
  if (nx[0] < 2) m.alpha = m.alpha_r, m.beta = m.beta_r;
  m.peak_bw = peak;
  bench_progress_step(&prog, "ping-pong: alpha %.2e s, beta %.2e s/B; alpha_r %.2e s, beta_r %.2e s/B; peak %.0f MB/s",
                      m.alpha, m.beta, m.alpha_r, m.beta_r, peak / 1e6);
  /* 2. gamma: every rank at once, the slowest */
  double gf = ovl_local_dgemm_gflops(512, 3);
  MPI_Allreduce(MPI_IN_PLACE, &gf, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
  m.gamma = gf > 0 ? 1e-9 / gf : 0;
  bench_progress_step(&prog, "local dgemm: %.1f GFLOP/s per rank (all ranks at once)", gf);
  /* 3. f_BW of three collectives over p = 2, 4, ..., P */
  static const bench_op ops[3] = {BENCH_BCAST, BENCH_REDUCE, BENCH_ALLREDUCE};
  static const ovl_mcoll mops[3] = {OVL_MC_BCAST, OVL_MC_REDUCE, OVL_MC_ALLREDUCE};
  ovl_coll_cfg cfg = ovl_coll_cfg_default();
  for (int p = 2; p <= P && !rc; p = p * 2 > P && p < P ? P : p * 2) {
    MPI_Comm cc;
    MPI_Comm_split(MPI_COMM_WORLD, rank < p ? 0 : MPI_UNDEFINED, rank, &cc);
    for (int o = 0; o < 3 && !rc; o++) {
      double fs[MACH_MAXSZ], fb[MACH_MAXSZ];
      int nf = 0;
      if (cc != MPI_COMM_NULL) {
        for (int64_t sz = 1024; sz <= maxsz && !rc; sz *= 4) {
          int64_t ne = sz / 8;
          int it = sz >= (1 << 20) ? (iters > 5 ? iters / 2 : iters) : iters;
          double t[10000];
          for (int r = -1; r < it && !rc; r++) {
            ovl_req q = NULL;
            MPI_Barrier(cc);
            double t0 = ovl_time();
            rc = bench_op_post(ops[o], s0, s1, ne, cc, &cfg, &q);
            if (!rc) rc = ovl_req_wait(&q);
            if (r >= 0) t[r] = ovl_time() - t0;
          }
          ovl_stats st;
          ovl_stats_max_over_ranks(cc, t, it, &st);
          fs[nf] = (double)sz, fb[nf++] = ovl_coll_eff_bw((double)sz, p, st.median);
        }
      }
      bench_sleep_barrier(MPI_COMM_WORLD, 1000);
      rc = ovl_err_agree(MPI_COMM_WORLD, rc);
      MPI_Bcast(&nf, 1, MPI_INT, 0, MPI_COMM_WORLD);
      MPI_Bcast(fs, MACH_MAXSZ, MPI_DOUBLE, 0, MPI_COMM_WORLD);
      MPI_Bcast(fb, MACH_MAXSZ, MPI_DOUBLE, 0, MPI_COMM_WORLD);
      if (!rc && nf > 0) rc = ovl_machine_set_fbw(&m, mops[o], p, fs, fb, nf);
    }
    if (cc != MPI_COMM_NULL) MPI_Comm_free(&cc);
    if (p == P) break;
  }
  bench_progress_step(&prog, "f_BW: %d tables", m.nfbw);
  if (!rc && rank == 0) rc = ovl_machine_write(&m, out);
  rc = ovl_err_agree(MPI_COMM_WORLD, rc);
  if (!rc) bench_progress_step(&prog, "wrote %s", out);
  if (!rc && rank == 0)
    printf("# ovl bench machine: %d ranks, %s\n# alpha %.3e s  beta %.3e s/B (<= %" PRId64 " B)   alpha_r %.3e s  "
           "beta_r %.3e s/B   peak %.1f MB/s   gamma %.3e s/flop (%.1f GFLOP/s)   %d f_BW tables -> %s\n",
           P, cli_mpi_library(), m.alpha, m.beta, eager, m.alpha_r, m.beta_r, m.peak_bw / 1e6, m.gamma, gf, m.nfbw,
           out);
  ovl_free(&buf), ovl_free(&s0), ovl_free(&s1);
  return rc ? cli_fail("bench machine", rc) : CLI_OK;
}
