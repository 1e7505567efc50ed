/* ovl bench ssc: SymmSquareCube (D -> D^2, D^3) GFLOP/s per algorithm and N_DUP.
 *
 * Every configuration (algorithm, N_DUP) gets its own plan and matrices up
 * front; the repetitions then run in rounds, each round timing every
 * configuration once, so that slow drifts of a shared machine fall on all
 * configurations alike and the ratios stay fair. Time per repetition is the
 * MAX over ranks; GFLOP/s counts the two multiplications, 4 n^3 flops. After
 * the timed rounds each result is checked with a random vector:
 * D^2 x against D (D x) and D^3 x against D (D (D x)). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "cli.h"

#define SSC_MAXCFG 64

typedef struct ssc_cfg {
  ovl_algo alg;
  int ndup;
  ovl_grid3d g; /* owned by ssc_bench.grids */
  ovl_ssc s;
  ovl_dmat D, D2, D3;
  double *t, *tc; /* total and communication time per timed repetition */
  double relerr;
} ssc_cfg;

typedef struct ssc_bench {
  ovl_grid3d cube, g25; /* p x p x p for alg3-5; the 2.5D grid for alg6 */
  ssc_cfg c[SSC_MAXCFG];
  int ncfg;
} ssc_bench;

/* ||A x - B (C x)|| / ||A x|| style check: y = D^e x against D applied e times. */
static ovl_err ssc_check(ssc_cfg *c, int64_t n, double *relerr) {
  *relerr = 0;
  if (!ovl_grid3d_active(c->g)) return OVL_OK; /* idle ranks hold no part of the plane */
  double *x = NULL, *y = NULL, *z = NULL, *w = NULL;
  size_t b = sizeof(double) * (size_t)(n > 0 ? n : 1);
  ovl_err rc = ovl_malloc(b, &x);
  if (!rc) rc = ovl_malloc(b, &y);
  if (!rc) rc = ovl_malloc(b, &z);
  if (!rc) rc = ovl_malloc(b, &w);
  double worst = 0;
  if (!rc) {
    uint64_t st = 0x9e3779b97f4a7c15ULL;
    for (int64_t i = 0; i < n; i++) {
      st = st * 6364136223846793005ULL + 1442695040888963407ULL;
      x[i] = (double)(st >> 11) / 9007199254740992.0 - 0.5;
    }
    /* z = D x, w = D z = D^2 x; y = D2 x */
    rc = ovl_dmat_matvec(c->D, x, z);
    if (!rc) rc = ovl_dmat_matvec(c->D, z, w);
    if (!rc) rc = ovl_dmat_matvec(c->D2, x, y);
    for (int pass = 0; pass < 2 && !rc; pass++) {
      double num = 0, den = 0;
      for (int64_t i = 0; i < n; i++) num += (y[i] - w[i]) * (y[i] - w[i]), den += w[i] * w[i];
      double e = den > 0 ? sqrt(num / den) : sqrt(num);
      if (e > worst || isnan(e)) worst = e;
      if (pass == 0) { /* then z = D w = D^3 x, y = D3 x */
        rc = ovl_dmat_matvec(c->D, w, z);
        if (!rc) rc = ovl_dmat_matvec(c->D3, x, y);
        if (!rc) memcpy(w, z, b);
      }
    }
  }
  ovl_free(&x), ovl_free(&y), ovl_free(&z), ovl_free(&w);
  *relerr = worst;
  return rc;
}

static void bench_free(ssc_bench *B) {
  for (int k = 0; k < B->ncfg; k++) {
    ssc_cfg *c = &B->c[k];
    ovl_ssc_destroy(&c->s);
    ovl_dmat_destroy(&c->D), ovl_dmat_destroy(&c->D2), ovl_dmat_destroy(&c->D3);
    free(c->t), free(c->tc);
  }
  ovl_grid3d_destroy(&B->cube);
  ovl_grid3d_destroy(&B->g25);
}

static ovl_err cfg_setup(ssc_cfg *c, int64_t n, int reps, const ovl_coll_cfg *cc, uint64_t seed) {
  ovl_grid2d pl = ovl_grid3d_plane(c->g);
  MPI_Comm parent = ovl_grid3d_parent(c->g);
  ovl_err rc = OVL_OK;
  c->t = calloc((size_t)reps, sizeof(double));
  c->tc = calloc((size_t)reps, sizeof(double));
  if (!c->t || !c->tc) rc = ovl_err_set(OVL_ERR_NOMEM, "cannot allocate timing arrays");
  OVL_TRY(ovl_err_agree(parent, rc));
  ovl_plan sp = ovl_plan_default(c->alg, n, 0);
  sp.ndup = c->ndup;
  if (cc) sp.coll = *cc;
  OVL_TRY(ovl_ssc_create(c->g, &sp, &c->s));
  OVL_TRY(ovl_dmat_create(pl, n, n, &c->D));
  OVL_TRY(ovl_dmat_create(pl, n, n, &c->D2));
  OVL_TRY(ovl_dmat_create(pl, n, n, &c->D3));
  /* the same symmetric D for every configuration, scaled so that D^3 stays O(1) */
  OVL_TRY(ovl_dmat_fill(c->D, OVL_FILL_SYMMETRIC, seed));
  double *d = ovl_dmat_data(c->D);
  int64_t lm = ovl_dmat_local_rows(c->D), ln = ovl_dmat_local_cols(c->D), ld = ovl_dmat_ld(c->D);
  double sc = 1.0 / sqrt((double)(n > 0 ? n : 1));
  for (int64_t j = 0; j < ln; j++)
    for (int64_t i = 0; i < lm; i++) d[i + j * ld] *= sc;
  return OVL_OK;
}

ovl_err bench_ssc_open(ovl_algo alg, int ndup, int s, int c, int64_t n, const ovl_coll_cfg *cc, void **h) {
  *h = NULL;
  ssc_bench *B = calloc(1, sizeof *B);
  OVL_TRY(ovl_err_agree(MPI_COMM_WORLD, B ? OVL_OK : ovl_err_set(OVL_ERR_NOMEM, "cannot allocate a benchmark")));
  ovl_err rc = ovl_grid3d_create(MPI_COMM_WORLD, s, c, OVL_GRID_ALLOW_IDLE, &B->cube);
  if (!rc) {
    ssc_cfg *x = &B->c[B->ncfg++];
    x->alg = alg, x->ndup = ndup, x->g = B->cube;
    rc = cfg_setup(x, n, 1, cc, 42);
  }
  if (rc) {
    bench_free(B);
    free(B);
    return rc;
  }
  *h = B;
  return OVL_OK;
}

ovl_err bench_ssc_once(void *h, double *t) {
  ssc_cfg *x = &((ssc_bench *)h)->c[0];
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = ovl_time();
  ovl_err rc = ovl_ssc_run(x->s, x->D, x->D2, x->D3, NULL);
  *t = ovl_time() - t0;
  return rc;
}

void bench_ssc_close(void **h) {
  if (!h || !*h) return;
  bench_free(*h);
  free(*h);
  *h = NULL;
}

int cmd_bench_ssc(int argc, char **argv) {
  int help = 0, iters = 5, warmup = 1, json = 0, quiet = 0, allow_idle = 0;
  int64_t n = 1000, mem_limit = 0;
  const char *algs_s = "alg3,alg4,alg5,alg6", *ndup_s = "1,2,4", *backend = "mpi", *grid25 = NULL;
  static const char *const backends[] = {"mpi", "own", NULL};
  ovl_opt opts[] = {
      {"size", 'n', OVL_OPT_I64, &n, "N", "matrix size n (D is n x n)", NULL, 1, (int64_t)1 << 20},
      {"algos", 'a', OVL_OPT_STRING, &algs_s, "LIST", "algorithms, comma-separated {alg3,alg4,alg5,alg6}", NULL, 0, -1},
      {"ndup", 'd', OVL_OPT_STRING, &ndup_s, "LIST", "N_DUP values for alg5 and alg6 (e.g. 1,2,4 or 1-6)", NULL, 0, -1},
      {"grid25", 'g', OVL_OPT_STRING, &grid25, "SxSxC", "alg6 grid (default: the largest c with c | s, s*s*c = P)",
       NULL, 0, -1},
      {"allow-idle", 0, OVL_OPT_FLAG, &allow_idle, NULL, "let ranks that do not fit a grid stay idle", NULL, 0, -1},
      {"backend", 0, OVL_OPT_CHOICE, &backend, "B", "collectives: the MPI library's or ovl's own", backends, 0, -1},
      {"iterations", 'i', OVL_OPT_INT, &iters, "I", "timed rounds (each times every configuration once)", NULL, 1,
       100000},
      {"warmup", 'x', OVL_OPT_INT, &warmup, "X", "untimed warm-up rounds", NULL, 0, 1000},
      BENCH_OPT_MEM_LIMIT(&mem_limit),
      {"json", 'j', OVL_OPT_FLAG, &json, NULL, "one JSON object per configuration", NULL, 0, -1},
      {"quiet", 'q', OVL_OPT_FLAG, &quiet, NULL, "no progress lines", NULL, 0, -1},
      {"help", 'h', OVL_OPT_FLAG, &help, NULL, "show this help", NULL, 0, -1},
  };
  int prc = cli_parse("usage: mpiexec -n P ovl bench ssc [options]\n\n"
                      "Times SymmSquareCube (D -> D^2, D^3; Huang-Chow Algorithms 3-6) for each algorithm and, for\n"
                      "alg5 and alg6, each N_DUP, on a random symmetric D. alg3-alg5 use a p x p x p grid, alg6 a\n"
                      "2.5D s x s x c grid. Rounds interleave the configurations; time = MAX over ranks, min/median\n"
                      "over rounds; GFLOP/s = 4 n^3 / t_median; speedup = alg4's median / this median. Every result\n"
                      "is checked against repeated matrix-vector products (relerr).",
                      opts, (int)(sizeof opts / sizeof opts[0]), argc, argv, 3, &help, NULL);
  if (prc >= 0) return prc;
  int P = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  ovl_err rc = OVL_OK;
  int nd[16], nnd = 0, na = 0;
  ovl_algo al[4];
  int g25[3] = {0, 0, 0}, ngd = 0;
  { /* parse the lists (every rank: same verdict) */
    char buf[128];
    snprintf(buf, sizeof buf, "%s", algs_s);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok && !rc; tok = strtok_r(NULL, ",", &save)) {
      if (na == 4) rc = ovl_err_set(OVL_ERR_ARG, "--algos: at most 4 algorithms, got '%s'", algs_s);
      else rc = ovl_algo_parse(tok, &al[na++]);
    }
    if (!rc && na == 0) rc = ovl_err_set(OVL_ERR_ARG, "--algos: empty list");
    if (!rc) rc = bench_int_list("--ndup", ndup_s, 1, OVL_LANES_MAX, nd, 16, &nnd);
    if (!rc && grid25) {
      rc = ovl_parse_dims(grid25, g25, &ngd);
      if (!rc && (ngd != 3 || g25[0] != g25[1])) rc = ovl_err_set(OVL_ERR_ARG, "--grid25 is SxSxC, got '%s'", grid25);
    }
  }
  if ((rc = ovl_err_agree(MPI_COMM_WORLD, rc)) != OVL_OK) return cli_usage_fail("bench ssc", rc);

  ovl_coll_cfg cc = ovl_coll_cfg_default();
  cc.backend = strcmp(backend, "own") == 0 ? OVL_BACKEND_OWN : OVL_BACKEND_MPI;
  ssc_bench B;
  memset(&B, 0, sizeof B);
  int flags = allow_idle ? OVL_GRID_ALLOW_IDLE : 0;
  int need_cube = 0, need25 = 0;
  for (int a = 0; a < na; a++) need_cube |= al[a] != OVL_ALGO_SSC6, need25 |= al[a] == OVL_ALGO_SSC6;
  if (need_cube) rc = ovl_grid3d_create(MPI_COMM_WORLD, 0, 0, flags, &B.cube);
  if (!rc && need25) {
    int s = g25[0], c = g25[2];
    if (!grid25) ovl_grid25d_dims(P, &s, &c);
    if (!grid25 && s == 0)
      rc = ovl_err_set(OVL_ERR_GRID, "no 2.5D grid s x s x c with c | s has %d ranks: give --grid25", P);
    else rc = ovl_grid3d_create(MPI_COMM_WORLD, s, c, flags, &B.g25);
  }
  rc = ovl_err_agree(MPI_COMM_WORLD, rc);
  if (!rc) { /* every configuration stays allocated (interleaved rounds): their sum must fit */
    double mem = 4.0 * 8.0 * (double)n; /* the check's vectors */
    for (int a = 0; a < na; a++) {
      int gs = 0, gc = 0;
      ovl_grid3d_dims(al[a] == OVL_ALGO_SSC6 ? B.g25 : B.cube, &gs, &gc);
      double w = (double)ovl_ssc_memory(n, gs, gc, al[a]), blk = (double)ovl_dmat_memory(n, n, gs, gs);
      int cfgs = al[a] == OVL_ALGO_SSC5 || al[a] == OVL_ALGO_SSC6 ? nnd : 1;
      mem += w < 0 || blk < 0 ? INFINITY : cfgs * (w + 3.0 * blk); /* workspace + D, D^2, D^3 */
    }
    rc = bench_check_memory(mem, mem_limit);
  }
  for (int a = 0; a < na && !rc; a++) {
    int multi = al[a] == OVL_ALGO_SSC5 || al[a] == OVL_ALGO_SSC6;
    for (int k = 0; k < (multi ? nnd : 1) && !rc; k++) {
      if (B.ncfg == SSC_MAXCFG) {
        rc = ovl_err_set(OVL_ERR_ARG, "at most %d configurations", SSC_MAXCFG);
        break;
      }
      ssc_cfg *c = &B.c[B.ncfg++];
      c->alg = al[a], c->ndup = multi ? nd[k] : 1;
      c->g = al[a] == OVL_ALGO_SSC6 ? B.g25 : B.cube;
      rc = cfg_setup(c, n, iters, &cc, 42);
    }
  }
  rc = ovl_err_agree(MPI_COMM_WORLD, rc);
  if (rc) {
    bench_free(&B);
    return cli_fail("bench ssc", rc);
  }
  char cube_s[32] = "-", g25_s[32] = "-";
  int s = 0, c = 0;
  if (B.cube) ovl_grid3d_dims(B.cube, &s, &c), snprintf(cube_s, sizeof cube_s, "%dx%dx%d", s, s, c);
  if (B.g25) ovl_grid3d_dims(B.g25, &s, &c), snprintf(g25_s, sizeof g25_s, "%dx%dx%d", s, s, c);
  if (!json)
    ovl_log(OVL_LOG_INFO,
            "# ovl bench ssc: n=%" PRId64 ", %d ranks, grids %s (alg3-5) and %s (alg6), backend %s\n# MPI: %s\n"
            "# time per repetition = MAX over ranks; %d warm-up + %d timed rounds, configurations interleaved\n",
            n, P, cube_s, g25_s, backend, cli_mpi_library(), warmup, iters);

  bench_progress prog;
  bench_progress_start(&prog, "ssc", warmup + iters, !quiet && !json);
  for (int r = 0; r < warmup + iters && !rc; r++) {
    for (int k = 0; k < B.ncfg && !rc; k++) {
      ssc_cfg *x = &B.c[k];
      ovl_kstats st;
      MPI_Barrier(MPI_COMM_WORLD);
      double t0 = ovl_time();
      rc = ovl_ssc_run(x->s, x->D, x->D2, x->D3, &st);
      double t = ovl_time() - t0;
      if (r >= warmup) x->t[r - warmup] = t, x->tc[r - warmup] = st.t_comm;
    }
    bench_progress_step(&prog, "round %d%s", r + 1, r < warmup ? " (warm-up)" : "");
  }
  for (int k = 0; k < B.ncfg && !rc; k++) rc = ssc_check(&B.c[k], n, &B.c[k].relerr);
  rc = ovl_err_agree(MPI_COMM_WORLD, rc);
  if (rc) {
    bench_free(&B);
    return cli_fail("bench ssc", rc);
  }
  ovl_stats S[SSC_MAXCFG], SC[SSC_MAXCFG];
  double base = 0;
  for (int k = 0; k < B.ncfg; k++) {
    ovl_stats_max_over_ranks(MPI_COMM_WORLD, B.c[k].t, iters, &S[k]);
    ovl_stats_max_over_ranks(MPI_COMM_WORLD, B.c[k].tc, iters, &SC[k]);
    MPI_Bcast(&B.c[k].relerr, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (B.c[k].alg == OVL_ALGO_SSC4 && base == 0) base = S[k].median;
  }
  double flops = 4.0 * (double)n * (double)n * (double)n;
  int bad = 0;
  if (!json)
    ovl_log(OVL_LOG_QUIET, "# %-5s %4s %8s %11s %11s %11s %10s %10s %8s %9s %s\n", "algo", "ndup", "grid", "t_min(s)",
            "t_med(s)", "t_max(s)", "GFLOP/s", "comm_med", "speedup", "relerr", "check");
  for (int k = 0; k < B.ncfg; k++) {
    ssc_cfg *x = &B.c[k];
    int ok = x->relerr <= 1e-10;
    bad |= !ok;
    const char *gs = x->alg == OVL_ALGO_SSC6 ? g25_s : cube_s;
    double gf = S[k].median > 0 ? flops / S[k].median * 1e-9 : 0, sp = base > 0 ? base / S[k].median : 0;
    if (json)
      ovl_log(OVL_LOG_QUIET,
              "{\"bench\":\"ssc\",\"algo\":\"%s\",\"ndup\":%d,\"n\":%" PRId64 ",\"ranks\":%d,\"grid\":\"%s\","
              "\"backend\":\"%s\",\"t_min\":%.6e,\"t_median\":%.6e,\"t_max\":%.6e,\"t_comm_median\":%.6e,"
              "\"gflops\":%.3f,\"speedup_vs_alg4\":%.6g,\"relerr\":%.3e,\"check\":\"%s\",\"iterations\":%d,"
              "\"mpi\":\"%s\"}\n",
              ovl_algo_name(x->alg), x->ndup, n, P, gs, backend, S[k].min, S[k].median, S[k].max, SC[k].median, gf, sp,
              x->relerr, ok ? "PASS" : "FAIL", iters, cli_mpi_library());
    else
      ovl_log(OVL_LOG_QUIET, "  %-5s %4d %8s %11.4e %11.4e %11.4e %10.2f %10.3e %8.3f %9.2e %s\n",
              ovl_algo_name(x->alg), x->ndup, gs, S[k].min, S[k].median, S[k].max, gf, SC[k].median, sp, x->relerr,
              ok ? "PASS" : "FAIL");
  }
  bench_free(&B);
  if (bad) {
    ovl_log(OVL_LOG_QUIET, "ovl bench ssc: error: a result failed its check (relerr > 1e-10)\n");
    return CLI_FAILED;
  }
  return CLI_OK;
}
