/* ovl bench nbc: how much of a nonblocking collective hides behind
 * computation, three ways.
 *
 *  osu  (osu_iallreduce and friends): t_pure = post + wait alone; then post,
 *       compute for t_pure seconds (this rank's mean t_pure) split into T
 *       equal parts each followed by one ovl_req_test (MPI_Test on the MPI
 *       back end; T = --num-tests), wait. t_compute includes the tests, t_test
 *       is the time inside them. Each time is the mean over repetitions, then
 *       the mean over ranks (as OSU reports), and
 *         overlap = max(0, 100 - 100 (t_overall - (t_compute - t_test)) / t_pure).
 *  imb  (IMB-NBC): the computation is a fixed amount of work calibrated to
 *       this rank's t_pure, with no MPI calls inside (MPI_I<op> /
 *       IMB_cpu_exploit / MPI_Wait); t_CPU is its time while the operation is
 *       in flight, t_ovrl the time of post + computation + wait; the values
 *       are those of the rank with the largest t_ovrl (as IMB does), and
 *         overlap = 100 max(0, min(1, (t_pure + t_CPU - t_ovrl) / min(t_pure, t_CPU))).
 *  eff  (NBC-Eff, Nanri et al.): a fixed amount of computation chosen by the
 *       user (--compute-us, converted once into kernel calls at the fastest
 *       rank's undisturbed speed, the same count on every rank) and the operation, one after the other (seq: post,
 *       wait, compute) and overlapped (ovl: post, compute with T tests,
 *       wait). Per repetition MAX over ranks, median over repetitions;
 *       speedup = t_seq / t_ovl: above 1 overlapping pays, below 1 it costs.
 * The formulas are pure functions in include/ovl/model.h. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "ovl/model.h"

typedef struct nbc_ctx {
  bench_op op;
  ovl_coll_cfg cfg;
  MPI_Comm comm;
  int P, rank, ntests;
  bench_rot sb, rb;
} nbc_ctx;

/* Compute `calls` kernel calls in ntests parts, each followed by one test;
 * *t_test receives the time inside the tests. */
static ovl_err compute_calls_testing(const nbc_ctx *x, int64_t calls, ovl_req *req, double *t_test) {
  *t_test = 0;
  if (x->ntests == 0) {
    bench_kernel(calls);
    return OVL_OK;
  }
  for (int j = 0; j < x->ntests; j++) {
    bench_kernel(ovl_block_len(calls, x->ntests, j));
    int done = 0;
    double t1 = ovl_time();
    OVL_TRY(ovl_req_test(req, &done));
    *t_test += ovl_time() - t1;
  }
  return OVL_OK;
}

/* OSU's do_compute_and_probe: `seconds` of computation in ntests parts, each
 * followed by one (timed) test. Returns the time inside the tests. */
static ovl_err compute_for_testing(const nbc_ctx *x, double seconds, ovl_req *req, double *t_test) {
  *t_test = 0;
  if (x->ntests == 0) {
    bench_compute_for(seconds);
    return OVL_OK;
  }
  for (int j = 0; j < x->ntests; j++) {
    bench_compute_for(seconds / x->ntests);
    int done = 0;
    double t1 = ovl_time();
    OVL_TRY(ovl_req_test(req, &done));
    *t_test += ovl_time() - t1;
  }
  return OVL_OK;
}

static ovl_err post(nbc_ctx *x, int64_t e, ovl_req *req) {
  return bench_op_post(x->op, bench_rot_next(&x->sb), bench_rot_next(&x->rb), e, x->comm, &x->cfg, req);
}

typedef struct nbc_res {
  double osu[7]; /* pure, overall, compute, test, init, wait, overlap (means over reps and ranks) */
  double imb[4]; /* pure, cpu, ovrl, overlap (rank with the largest t_ovrl) */
  double eff[6]; /* comm, comp, seq, ovl, speedup, ideal speedup (medians of per-rep MAX over ranks) */
  int64_t imb_calls;
} nbc_res;

/* One size: every selected mode. Runs on every rank. */
static ovl_err nbc_size(nbc_ctx *x, int64_t e, int warm, int nit, int do_osu, int do_imb, int do_eff, double spc,
                        int64_t eff_calls, double *t, nbc_res *res) {
  memset(res, 0, sizeof *res);
  double sum_pure = 0;
  /* pure: post + wait */
  for (int it = 0; it < warm + nit; it++) {
    ovl_req req = OVL_REQ_NULL;
    MPI_Barrier(x->comm);
    double t0 = ovl_time();
    OVL_TRY(post(x, e, &req));
    OVL_TRY(ovl_req_wait(&req));
    double dt = ovl_time() - t0;
    if (it >= warm) t[it - warm] = dt, sum_pure += dt;
  }
  double pure_local = sum_pure / nit; /* this rank's mean: the target of its computation */
  ovl_stats st_pure;
  OVL_TRY(ovl_stats_max_over_ranks(x->comm, t, nit, &st_pure));

  if (do_osu) {
    double acc[6] = {0}; /* overall, compute, test, init, wait, pure */
    for (int it = 0; it < warm + nit; it++) {
      ovl_req req = OVL_REQ_NULL;
      MPI_Barrier(x->comm);
      double t0 = ovl_time();
      OVL_TRY(post(x, e, &req));
      double t1 = ovl_time(), tt = 0;
      OVL_TRY(compute_for_testing(x, pure_local, &req, &tt));
      double t2 = ovl_time();
      OVL_TRY(ovl_req_wait(&req));
      double t3 = ovl_time();
      if (it >= warm) acc[0] += t3 - t0, acc[1] += t2 - t1, acc[2] += tt, acc[3] += t1 - t0, acc[4] += t3 - t2;
    }
    for (int i = 0; i < 5; i++) acc[i] /= nit;
    acc[5] = pure_local;
    OVL_MPI(MPI_Allreduce(MPI_IN_PLACE, acc, 6, MPI_DOUBLE, MPI_SUM, x->comm));
    for (int i = 0; i < 6; i++) acc[i] /= x->P;
    res->osu[0] = acc[5], res->osu[1] = acc[0], res->osu[2] = acc[1], res->osu[3] = acc[2];
    res->osu[4] = acc[3], res->osu[5] = acc[4];
    res->osu[6] = ovl_overlap_osu(acc[5], acc[0], acc[1], acc[2]);
  }

  if (do_imb) {
    int64_t calls = spc > 0 ? (int64_t)(pure_local / spc + 0.5) : 0;
    double t_ovrl = 0, t_comp = 0;
    for (int it = 0; it < warm + nit; it++) {
      ovl_req req = OVL_REQ_NULL;
      MPI_Barrier(x->comm);
      double t0 = ovl_time();
      OVL_TRY(post(x, e, &req));
      double t1 = ovl_time();
      bench_kernel(calls);
      double t2 = ovl_time();
      OVL_TRY(ovl_req_wait(&req));
      double t3 = ovl_time();
      if (it >= warm) t_ovrl += t3 - t0, t_comp += t2 - t1;
    }
    struct {
      double v;
      int r;
    } mine = {t_ovrl / nit, x->rank}, worst;
    OVL_MPI(MPI_Allreduce(&mine, &worst, 1, MPI_DOUBLE_INT, MPI_MAXLOC, x->comm));
    double v[3] = {pure_local, t_comp / nit, t_ovrl / nit};
    OVL_MPI(MPI_Bcast(v, 3, MPI_DOUBLE, worst.r, x->comm));
    int64_t c = calls;
    OVL_MPI(MPI_Bcast(&c, 1, MPI_INT64_T, worst.r, x->comm));
    res->imb[0] = v[0], res->imb[1] = v[1], res->imb[2] = v[2];
    res->imb[3] = ovl_overlap_imb(v[0], v[1], v[2]);
    res->imb_calls = c;
  }

  if (do_eff) {
    double med[3];
    for (int mode = 0; mode < 3; mode++) { /* 0: compute alone, 1: seq, 2: overlapped */
      for (int it = 0; it < warm + nit; it++) {
        ovl_req req = OVL_REQ_NULL;
        double tt = 0;
        MPI_Barrier(x->comm);
        double t0 = ovl_time();
        if (mode == 0) {
          bench_kernel(eff_calls);
        } else if (mode == 1) {
          OVL_TRY(post(x, e, &req));
          OVL_TRY(ovl_req_wait(&req));
          bench_kernel(eff_calls);
        } else {
          OVL_TRY(post(x, e, &req));
          OVL_TRY(compute_calls_testing(x, eff_calls, &req, &tt));
          OVL_TRY(ovl_req_wait(&req));
        }
        double dt = ovl_time() - t0;
        if (it >= warm) t[it - warm] = dt;
      }
      ovl_stats st;
      OVL_TRY(ovl_stats_max_over_ranks(x->comm, t, nit, &st));
      med[mode] = st.median;
    }
    double ideal = st_pure.median > med[0] ? st_pure.median : med[0];
    res->eff[0] = st_pure.median, res->eff[1] = med[0], res->eff[2] = med[1], res->eff[3] = med[2];
    res->eff[4] = ovl_nbc_eff_speedup(med[1], med[2]);
    res->eff[5] = ovl_nbc_eff_speedup(med[1], ideal);
  }
  return OVL_OK;
}

int cmd_bench_nbc(int argc, char **argv) {
  int help = 0, iters = 20, warmup = 3, ntests = 10, full = 0, json = 0, quiet = 0;
  int64_t range[2] = {8, (int64_t)1 << 20}, cache = 0, mem_limit = 0;
  double compute_us = 1000.0;
  const char *op = "allreduce", *backend = "mpi", *alg = "auto", *mode = "all";
  static const char *const backends[] = {"mpi", "own", NULL};
  static const char *const modes[] = {"all", "osu", "imb", "eff", NULL};
  int capped = 0;
  if (bench_default_cache_bytes(MPI_COMM_WORLD, 2, &cache, &capped) != OVL_OK)
    return cli_fail("bench nbc", OVL_ERR_MPI);
  ovl_opt opts[] = {
      {"op", 'o', OVL_OPT_CHOICE, &op, "OP", "the nonblocking collective (sum for reductions; root 0)", bench_op_names,
       0, -1},
      {"message-size", 'm', OVL_OPT_RANGE, range, "MIN:MAX",
       "message sizes in bytes, rounded to whole doubles (allgather: the gathered result, alltoall: the send buffer, "
       "both P equal blocks)",
       NULL, 1, (int64_t)1 << 34},
      {"mode", 'M', OVL_OPT_CHOICE, &mode, "MODE", "which measures: osu, imb, eff (NBC-Eff) or all", modes, 0, -1},
      {"num-tests", 't', OVL_OPT_INT, &ntests, "T",
       "osu and eff: the computation is cut into T equal parts, each followed by one ovl_req_test (0: none)", NULL, 0,
       1000000},
      {"compute-us", 'c', OVL_OPT_DOUBLE, &compute_us, "US",
       "eff: the fixed computation, in microseconds of this machine's kernel (converted once into a number of "
       "kernel calls, the same on every rank)",
       NULL, 0, -1},
      {"backend", 'b', OVL_OPT_CHOICE, &backend, "B", "collectives: the MPI library's or ovl's own", backends, 0, -1},
      {"alg", 'a', OVL_OPT_STRING, &alg, "NAME", "algorithm of the own back end (see `ovl bench coll --help`)", NULL, 0,
       -1},
      {"iterations", 'i', OVL_OPT_INT, &iters, "I", "timed repetitions per size and measurement", NULL, 1, 1000000},
      {"warmup", 'x', OVL_OPT_INT, &warmup, "X", "untimed warm-up repetitions per size and measurement", NULL, 0,
       1000000},
      {"cache-bytes", 0, OVL_OPT_SIZE, &cache, "BYTES",
       "rotate each rank's send and receive buffers through this many bytes (0: one buffer each, warm in cache; "
       "default: 2x the last-level cache, lowered when the node's ranks would not fit in half of MemAvailable)",
       NULL, 0, (int64_t)1 << 40},
      BENCH_OPT_MEM_LIMIT(&mem_limit),
      {"full", 'f', OVL_OPT_FLAG, &full, NULL, "osu: also print the post (init) and wait times", NULL, 0, -1},
      {"json", 'j', OVL_OPT_FLAG, &json, NULL, "one JSON object per size instead of the table", NULL, 0, -1},
      {"quiet", 'q', OVL_OPT_FLAG, &quiet, NULL, "results only: no header lines, no progress on stderr", NULL, 0, -1},
      {"help", 'h', OVL_OPT_FLAG, &help, NULL, "show this help", NULL, 0, -1},
  };
  int prc = cli_parse("usage: mpiexec -n P ovl bench nbc [options]\n\n"
                      "Overlap of one nonblocking collective (over all ranks) with computation, three ways:\n"
                      "  osu  overlap% as the OSU micro-benchmarks define it:\n"
                      "       max(0, 100 - 100 (t_overall - (t_compute - t_test)) / t_pure), computation ~ t_pure\n"
                      "       with T tests inside; means over repetitions and ranks\n"
                      "  imb  overlap% as IMB-NBC defines it:\n"
                      "       100 max(0, min(1, (t_pure + t_CPU - t_ovrl) / min(t_pure, t_CPU))), computation\n"
                      "       calibrated to t_pure without MPI calls; values of the rank with the largest t_ovrl\n"
                      "  eff  NBC-Eff: a fixed computation (--compute-us) after the collective (seq) and overlapped\n"
                      "       with it (ovl); speedup = t_seq / t_ovl: above 1 overlapping pays, below 1 it costs.\n"
                      "       Per repetition MAX over ranks, median over repetitions.\n"
                      "Rank 0 prints one progress line per size on stderr.",
                      opts, (int)(sizeof opts / sizeof opts[0]), argc, argv, 3, &help, NULL);
  if (prc >= 0) return prc;
  nbc_ctx x;
  memset(&x, 0, sizeof x);
  MPI_Comm_size(MPI_COMM_WORLD, &x.P);
  MPI_Comm_rank(MPI_COMM_WORLD, &x.rank);
  x.op = bench_op_parse(op);
  x.cfg = ovl_coll_cfg_default();
  x.ntests = ntests;
  x.comm = MPI_COMM_NULL;
  ovl_alg a = OVL_ALG_AUTO;
  ovl_err rc = ovl_backend_parse(backend, &x.cfg.backend);
  if (!rc) rc = ovl_alg_parse(op, alg, &a);
  if (!rc && a != OVL_ALG_AUTO && x.cfg.backend != OVL_BACKEND_OWN)
    rc = ovl_err_set(OVL_ERR_ARG, "--alg %s needs --backend own (the MPI library picks its own algorithms)", alg);
  if (!rc && !(compute_us >= 0 && compute_us <= 1e9))
    rc = ovl_err_set(OVL_ERR_ARG, "--compute-us must be in [0, 1e9], got %g", compute_us);
  if ((rc = ovl_err_agree(MPI_COMM_WORLD, rc)) != OVL_OK) return cli_fail("bench nbc", rc);
  switch (x.op) {
  case BENCH_BCAST: x.cfg.bcast = a; break;
  case BENCH_REDUCE: x.cfg.reduce = a; break;
  case BENCH_ALLREDUCE: x.cfg.allreduce = a; break;
  case BENCH_ALLGATHER: x.cfg.allgather = a; break;
  case BENCH_ALLTOALL: x.cfg.alltoall = a; break;
  }
  if (quiet) ovl_log_set_level(OVL_LOG_QUIET);
  int do_osu = !strcmp(mode, "all") || !strcmp(mode, "osu"), do_imb = !strcmp(mode, "all") || !strcmp(mode, "imb");
  int do_eff = !strcmp(mode, "all") || !strcmp(mode, "eff");
  MPI_Comm_dup(MPI_COMM_WORLD, &x.comm);

  /* sizes (bytes that really move, no repeats), buffers */
  int nreq = bench_sizes(range[0], range[1], NULL, 0), nsz = 0;
  int64_t *sizes = calloc((size_t)nreq, sizeof(int64_t));
  double *t = calloc((size_t)iters, sizeof(double));
  if (!sizes || !t) rc = ovl_err_set(OVL_ERR_NOMEM, "cannot allocate the result arrays");
  if (!rc) {
    bench_sizes(range[0], range[1], sizes, nreq);
    for (int i = 0; i < nreq; i++) {
      int64_t e = sizes[i] / 8 > 0 ? sizes[i] / 8 : 1;
      if (bench_op_blocked(x.op)) e = (e / x.P > 0 ? e / x.P : 1) * x.P;
      if (nsz == 0 || sizes[nsz - 1] != 8 * e) sizes[nsz++] = 8 * e;
    }
  }
  rc = ovl_err_agree(MPI_COMM_WORLD, rc);
  if (!rc) rc = bench_check_memory(2.0 * bench_rot_bytes(cache, sizes[nsz - 1]), mem_limit);
  if (!rc) rc = bench_rot_create(cache, sizes[nsz - 1], &x.sb);
  if (!rc) rc = bench_rot_create(cache, sizes[nsz - 1], &x.rb);
  if ((rc = ovl_err_agree(MPI_COMM_WORLD, rc)) != OVL_OK) {
    free(sizes);
    free(t);
    MPI_Comm_free(&x.comm);
    return cli_fail("bench nbc", rc);
  }
  /* the kernel's undisturbed speed, measured with every rank computing; eff converts --compute-us with the
   * fastest rank's, so every rank does the same work and eff_comp above --compute-us shows a disturbance */
  MPI_Barrier(x.comm);
  double spc = bench_kernel_seconds_per_call(), spc_min = spc;
  MPI_Allreduce(MPI_IN_PLACE, &spc_min, 1, MPI_DOUBLE, MPI_MIN, x.comm);
  int64_t eff_calls = (int64_t)(compute_us * 1e-6 / spc_min + 0.5);

  if (!json) {
    ovl_log(OVL_LOG_INFO,
            "# ovl bench nbc: %s, %d ranks, backend %s (alg %s), %d ovl_req_test calls in the computation\n", op, x.P,
            backend, alg, ntests);
    ovl_log(OVL_LOG_INFO, "# MPI: %s\n", cli_mpi_library());
    if (cache > 0)
      ovl_log(OVL_LOG_INFO, "# buffers: send and receive each rotate through %s per rank\n",
              bench_bytes_str((double)x.sb.bytes));
    else ovl_log(OVL_LOG_INFO, "# buffers: one send and one receive buffer, reused (warm in cache)\n");
    ovl_log(OVL_LOG_INFO,
            "# kernel: %.3f us per call on rank 0, %.3f us on the fastest rank (best of 20 trials); %d warm-up + %d "
            "timed repetitions\n",
            spc * 1e6, spc_min * 1e6, warmup, iters);
    if (do_osu)
      ovl_log(OVL_LOG_INFO, "# osu: means over repetitions and ranks; ovl%% = max(0, 100 - 100 (overall - (compute - "
                            "test)) / pure)\n");
    if (do_imb)
      ovl_log(OVL_LOG_INFO, "# imb: means over repetitions, rank with the largest t_ovrl; ovl%% = 100 max(0, min(1, "
                            "(pure + cpu - ovrl) / min(pure, cpu)))\n");
    if (do_eff)
      ovl_log(OVL_LOG_INFO,
              "# eff: fixed computation %.1f us = %" PRId64
              " kernel calls; per repetition MAX over ranks, median; seq = post+wait+compute, ovl = "
              "post+compute+wait; speedup = seq/ovl (> 1: overlap pays); ideal = seq/max(comm, comp)\n",
              compute_us, eff_calls);
    ovl_log(OVL_LOG_QUIET, "# %10s", "size(B)");
    if (do_osu) {
      ovl_log(OVL_LOG_QUIET, " %10s %10s %10s %10s %8s", "osu_pure", "osu_all", "osu_comp", "osu_test", "osu_ovl%");
      if (full) ovl_log(OVL_LOG_QUIET, " %10s %10s", "osu_init", "osu_wait");
    }
    if (do_imb) ovl_log(OVL_LOG_QUIET, " %10s %10s %10s %8s", "imb_pure", "imb_cpu", "imb_ovrl", "imb_ovl%");
    if (do_eff)
      ovl_log(OVL_LOG_QUIET, " %10s %10s %10s %10s %8s %8s", "eff_comm", "eff_comp", "eff_seq", "eff_ovl", "speedup",
              "ideal");
    ovl_log(OVL_LOG_QUIET, "   (times in us)\n");
  }
  bench_progress prog;
  bench_progress_start(&prog, "nbc", nsz, !quiet);
  for (int si = 0; si < nsz && rc == OVL_OK; si++) {
    int64_t bytes = sizes[si], e = bytes / 8;
    if (bench_op_blocked(x.op)) e /= x.P;
    bench_rot_size(&x.sb, bytes);
    bench_rot_size(&x.rb, bytes);
    nbc_res r;
    rc = nbc_size(&x, e, warmup, iters, do_osu, do_imb, do_eff, spc, eff_calls, t, &r);
    if (rc != OVL_OK) ovl_fatal(MPI_COMM_WORLD, rc, "bench nbc at %" PRId64 " bytes: %s", bytes, ovl_errmsg());
    if (json) {
      ovl_log(OVL_LOG_QUIET,
              "{\"bench\":\"nbc\",\"op\":\"%s\",\"ranks\":%d,\"backend\":\"%s\",\"alg\":\"%s\",\"bytes\":%" PRId64
              ",\"iterations\":%d,\"num_tests\":%d",
              op, x.P, backend, alg, bytes, iters, ntests);
      if (do_osu)
        ovl_log(OVL_LOG_QUIET,
                ",\"osu\":{\"t_pure\":%.6e,\"t_overall\":%.6e,\"t_compute\":%.6e,\"t_test\":%.6e,\"t_init\":%.6e,"
                "\"t_wait\":%.6e,\"overlap_pct\":%.2f}",
                r.osu[0], r.osu[1], r.osu[2], r.osu[3], r.osu[4], r.osu[5], r.osu[6]);
      if (do_imb)
        ovl_log(OVL_LOG_QUIET,
                ",\"imb\":{\"t_pure\":%.6e,\"t_cpu\":%.6e,\"t_ovrl\":%.6e,\"overlap_pct\":%.2f,\"cpu_calls\":%" PRId64
                "}",
                r.imb[0], r.imb[1], r.imb[2], r.imb[3], r.imb_calls);
      if (do_eff)
        ovl_log(OVL_LOG_QUIET,
                ",\"eff\":{\"compute_us\":%.3f,\"calls\":%" PRId64 ",\"t_comm\":%.6e,\"t_comp\":%.6e,\"t_seq\":%.6e,"
                "\"t_ovl\":%.6e,\"speedup\":%.4f,\"ideal_speedup\":%.4f}",
                compute_us, eff_calls, r.eff[0], r.eff[1], r.eff[2], r.eff[3], r.eff[4], r.eff[5]);
      ovl_log(OVL_LOG_QUIET, ",\"mpi\":\"%s\"}\n", cli_mpi_library());
    } else {
      ovl_log(OVL_LOG_QUIET, "  %10" PRId64, bytes);
      if (do_osu) {
        ovl_log(OVL_LOG_QUIET, " %10.2f %10.2f %10.2f %10.2f %8.1f", r.osu[0] * 1e6, r.osu[1] * 1e6, r.osu[2] * 1e6,
                r.osu[3] * 1e6, r.osu[6]);
        if (full) ovl_log(OVL_LOG_QUIET, " %10.2f %10.2f", r.osu[4] * 1e6, r.osu[5] * 1e6);
      }
      if (do_imb)
        ovl_log(OVL_LOG_QUIET, " %10.2f %10.2f %10.2f %8.1f", r.imb[0] * 1e6, r.imb[1] * 1e6, r.imb[2] * 1e6, r.imb[3]);
      if (do_eff)
        ovl_log(OVL_LOG_QUIET, " %10.2f %10.2f %10.2f %10.2f %8.3f %8.3f", r.eff[0] * 1e6, r.eff[1] * 1e6,
                r.eff[2] * 1e6, r.eff[3] * 1e6, r.eff[4], r.eff[5]);
      ovl_log(OVL_LOG_QUIET, "\n");
    }
    char note[160] = "";
    size_t nl = 0;
    if (do_osu) nl += (size_t)snprintf(note + nl, sizeof note - nl, ", osu %.1f%%", r.osu[6]);
    if (do_imb) nl += (size_t)snprintf(note + nl, sizeof note - nl, ", imb %.1f%%", r.imb[3]);
    if (do_eff) snprintf(note + nl, sizeof note - nl, ", eff speedup %.3f", r.eff[4]);
    bench_progress_step(&prog, "%" PRId64 " B%s", bytes, note);
  }
  free(sizes);
  free(t);
  bench_rot_destroy(&x.sb);
  bench_rot_destroy(&x.rb);
  MPI_Comm_free(&x.comm);
  return rc ? cli_fail("bench nbc", rc) : CLI_OK;
}
