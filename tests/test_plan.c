#define _POSIX_C_SOURCE 200809L
/* The planner: shape rules, the plan's options, checks, resolution from
 * constraints, the tune database and the cost model, the grids a plan names,
 * and the tuner end to end (which `auto` then finds); plans on K ranks per
 * node (--ppn, auto); a purification job's printed lines, record and
 * verdict. The LOCAL parts run on
 * any rank count (1 without mpiexec); the collective ones on every rank. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ovl/ovl.h"
#include "ovltest.h"

/* The shape rules against their definitions, for every P up to 300. */
static void test_shapes(void) {
  for (int P = 1; P <= 300; P++) {
    int p, q, s, c;
    ovl_grid_shape(OVL_ALGO_SUMMA, P, &p, &q, &s, &c);
    T_CHECK(p * q == P && p <= q && s == 0 && c == 0, "summa P=%d: %dx%d", P, p, q);
    for (int d = p + 1; d * d <= P; d++) T_CHECK(P % d != 0, "summa P=%d: %dx%d is not the squarest", P, p, q);
    ovl_grid_shape(OVL_ALGO_CANNON, P, &p, &q, &s, &c);
    T_CHECK(p == q && p * p <= P && (p + 1) * (p + 1) > P, "cannon P=%d: %dx%d", P, p, q);
    ovl_grid_shape(OVL_ALGO_SSC5, P, &p, &q, &s, &c);
    T_CHECK(s == c && s * s * s <= P && (s + 1) * (s + 1) * (s + 1) > P && p == s, "alg5 P=%d: %dx%dx%d", P, s, s, c);
    ovl_grid_shape(OVL_ALGO_25D, P, &p, &q, &s, &c);
    int s25, c25;
    ovl_grid25d_dims(P, &s25, &c25);
    if (s25 > 0) T_CHECK(s == s25 && c == c25 && s * s * c == P && s % c == 0, "2.5d P=%d: %dx%dx%d", P, s, s, c);
    else T_CHECK(c == 1 && s * s <= P && (s + 1) * (s + 1) > P, "2.5d P=%d without a 2.5D grid: %dx%dx%d", P, s, s, c);
  }
  int gi, gj;
  ovl_hgroups_default(4, 4, &gi, &gj);
  T_CHECK(gi == 2 && gj == 2, "hsumma 4x4 default groups %dx%d", gi, gj);
  ovl_hgroups_default(1, 7, &gi, &gj);
  T_CHECK(gi * gj >= 1 && 7 % gj == 0, "hsumma 1x7 default groups %dx%d", gi, gj);
}

/* Options: one table for each family, applied as constraints. */
static void test_opts(void) {
  ovl_opt opts[32];
  ovl_plan_optvals v;
  memset(&v, 0, sizeof v);
  v.algo = "summa";
  int n = ovl_plan_opts(OVL_FAMILY_GEMM, &v, opts, 32);
  T_CHECK(n >= 10, "gemm plan options: %d", n);
  T_CHECK(ovl_plan_opts(OVL_FAMILY_GEMM, &v, opts, 2) == -1, "too small a table is refused");
  char *argv[] = {"x", "--algo", "hsumma", "--ndup", "3", "--groups", "2x2", "-b", "64"};
  T_OK(ovl_opts_parse(opts, n, 9, argv, 1, NULL));
  ovl_plan p = ovl_plan_auto(OVL_FAMILY_GEMM, 100);
  T_OK(ovl_plan_opts_apply(OVL_FAMILY_GEMM, &v, &p));
  T_CHECK(
      p.algo == OVL_ALGO_HSUMMA && p.ndup == 3 && p.groups_i == 2 && p.groups_j == 2 && p.b == 64 && p.lookahead == 0,
      "applied: %s ndup=%d groups %dx%d b=%lld", ovl_algo_name(p.algo), p.ndup, p.groups_i, p.groups_j, (long long)p.b);
  /* the same from a string (as $OVL_OPTIONS), unknown options skipped */
  memset(&v, 0, sizeof v);
  T_OK(ovl_opts_parse_string(opts, n, "--bogus 1 --ndup auto --algo auto -q", "OVL_OPTIONS", 1, NULL));
  p = ovl_plan_auto(OVL_FAMILY_GEMM, 100);
  T_OK(ovl_plan_opts_apply(OVL_FAMILY_GEMM, &v, &p));
  T_CHECK(p.algo == OVL_ALGO_AUTO && p.ndup <= 0 && p.b <= 0 && p.lookahead < 0 && ovl_plan_is_open(&p),
          "auto leaves the choices open");
  T_ERR(ovl_opts_parse_string(opts, n, "--bogus 1", "OVL_OPTIONS", 0, NULL), OVL_ERR_ARG);
  T_ERR(ovl_opts_parse_string(opts, n, "--ndup many", "OVL_OPTIONS", 1, NULL), OVL_ERR_ARG);
  /* not given and --algo fixed: the documented defaults */
  memset(&v, 0, sizeof v);
  v.algo = "alg6";
  n = ovl_plan_opts(OVL_FAMILY_SSC, &v, opts, 32);
  p = ovl_plan_auto(OVL_FAMILY_SSC, 100);
  T_OK(ovl_plan_opts_apply(OVL_FAMILY_SSC, &v, &p));
  T_CHECK(p.algo == OVL_ALGO_SSC6 && p.ndup == 4 && !ovl_plan_is_open(&p), "ssc defaults: ndup %d", p.ndup);
  /* what does not apply */
  memset(&v, 0, sizeof v);
  v.algo = "summa", v.repl = 2;
  T_ERR(ovl_plan_opts_apply(OVL_FAMILY_GEMM, &v, &p), OVL_ERR_ARG);
  memset(&v, 0, sizeof v);
  v.algo = "3d", v.grid = "2x2";
  T_ERR(ovl_plan_opts_apply(OVL_FAMILY_GEMM, &v, &p), OVL_ERR_ARG);
  memset(&v, 0, sizeof v);
  v.algo = "alg5";
  T_ERR(ovl_plan_opts_apply(OVL_FAMILY_GEMM, &v, &p), OVL_ERR_ARG);
  /* the collectives' options: a broadcast algorithm needs the own back end (the caller's or given), cannon none */
  memset(&v, 0, sizeof v);
  v.algo = "summa", v.bcast = "chain";
  p = ovl_plan_auto(OVL_FAMILY_GEMM, 100);
  T_ERR(ovl_plan_opts_apply(OVL_FAMILY_GEMM, &v, &p), OVL_ERR_ARG);
  T_CHECK(strstr(ovl_errmsg(), "--bcast-alg chain applies to --backend own only") != NULL, "%s", ovl_errmsg());
  v.backend = "own";
  T_OK(ovl_plan_opts_apply(OVL_FAMILY_GEMM, &v, &p));
  T_CHECK(p.coll.backend == OVL_BACKEND_OWN && p.coll.bcast == OVL_BCAST_CHAIN, "own chain");
  v.backend = NULL; /* the caller's plan has the own back end already */
  T_OK(ovl_plan_opts_apply(OVL_FAMILY_GEMM, &v, &p));
  v.algo = "cannon";
  T_ERR(ovl_plan_opts_apply(OVL_FAMILY_GEMM, &v, &p), OVL_ERR_ARG);
  T_CHECK(strstr(ovl_errmsg(), "--bcast-alg applies to --algo summa, hsumma, 3d and 2.5d only, not cannon") != NULL,
          "%s", ovl_errmsg());
  v.bcast = "auto", v.backend = "own";
  T_ERR(ovl_plan_opts_apply(OVL_FAMILY_GEMM, &v, &p), OVL_ERR_ARG);
  T_CHECK(strstr(ovl_errmsg(), "--backend own applies") != NULL, "%s", ovl_errmsg());
  v.backend = "mpi";
  T_OK(ovl_plan_opts_apply(OVL_FAMILY_GEMM, &v, &p));
  /* an options string: the same rule */
  ovl_plan q = ovl_plan_default(OVL_ALGO_SUMMA, 100, 1);
  T_ERR(ovl_options_apply("--bcast-alg hier", "options", 0, OVL_FAMILY_GEMM, &q, NULL), OVL_ERR_ARG);
  T_OK(ovl_options_apply("--backend own --bcast-alg hier", "options", 0, OVL_FAMILY_GEMM, &q, NULL));
  T_CHECK(q.coll.backend == OVL_BACKEND_OWN && q.coll.bcast == OVL_BCAST_HIER, "options string: own hier");
}

/* Checks of complete plans, and the printed forms. */
static void test_check(void) {
  ovl_plan p = ovl_plan_default(OVL_ALGO_CANNON, 64, 9);
  p.p = p.q = 3;
  T_OK(ovl_plan_check(&p, OVL_FAMILY_GEMM, 0));
  p.P = 10;
  T_ERR(ovl_plan_check(&p, OVL_FAMILY_GEMM, 0), OVL_ERR_GRID); /* one rank idle without leave */
  T_OK(ovl_plan_check(&p, OVL_FAMILY_GEMM, 1));
  T_CHECK(strstr(ovl_errmsg(), "") != NULL, "message");
  p.P = 8;
  T_ERR(ovl_plan_check(&p, OVL_FAMILY_GEMM, 1), OVL_ERR_GRID); /* needs 9 */
  T_ERR(ovl_plan_check(&p, OVL_FAMILY_SSC, 1), OVL_ERR_ARG);   /* the other family */
  p = ovl_plan_default(OVL_ALGO_SSC6, 64, 8);
  p.s = 2, p.c = 2, p.p = p.q = 2;
  T_OK(ovl_plan_check(&p, OVL_FAMILY_SSC, 0));
  char buf[256];
  ovl_plan_describe(&p, buf, sizeof buf);
  T_CHECK(strcmp(buf, "alg6 grid=2x2x2 ndup=4 backend=mpi") == 0, "describe: '%s'", buf);
  ovl_plan_short(&p, buf, sizeof buf);
  T_CHECK(strcmp(buf, "alg6 2x2x2 ndup=4") == 0, "short: '%s'", buf);
  p.c = 3;
  T_ERR(ovl_plan_check(&p, OVL_FAMILY_SSC, 1), OVL_ERR_GRID); /* c does not divide s */
  p = ovl_plan_default(OVL_ALGO_SUMMA, 64, 8);
  p.p = 2, p.q = 4;
  ovl_plan_describe(&p, buf, sizeof buf);
  T_CHECK(strcmp(buf, "summa grid=2x4 b=256 ndup=1 lookahead=0 backend=mpi bcast=auto") == 0, "describe: '%s'", buf);
  ovl_plan q = p;
  q.s = 5; /* not part of SUMMA's configuration */
  T_CHECK(ovl_plan_same(&p, &q), "same configuration");
  q.ndup = 2;
  T_CHECK(!ovl_plan_same(&p, &q), "different N_DUP");
}

/* Resolution on the ranks of MPI_COMM_WORLD. */
static void test_resolve(const char *dir) {
  int P = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  char why[OVL_PLAN_WHY];
  /* nothing open: only the shape rules and the checks */
  ovl_plan p = ovl_plan_default(OVL_ALGO_SUMMA, 100, 0);
  T_OK(ovl_plan_resolve(MPI_COMM_WORLD, OVL_FAMILY_GEMM, &p, NULL, why, sizeof why));
  T_CHECK(!strcmp(why, "given") && p.P == P && p.p * p.q == P && p.ndup == 1 && p.b == 256, "given: %s %dx%d (%s)",
          ovl_algo_name(p.algo), p.p, p.q, why);
  /* everything open: the cost model on the built-in machine (no files) */
  ovl_plan_src none = {NULL, NULL};
  unsetenv("OVL_TUNE_FILE"), unsetenv("OVL_MACHINE");
  p = ovl_plan_auto(OVL_FAMILY_SSC, 512);
  int s25, c25, cr = ovl_icbrt(P);
  ovl_grid25d_dims(P, &s25, &c25);
  if (s25 > 0 || cr * cr * cr == P) {
    T_OK(ovl_plan_resolve(MPI_COMM_WORLD, OVL_FAMILY_SSC, &p, &none, why, sizeof why));
    T_CHECK(ovl_algo_family(p.algo) == OVL_FAMILY_SSC && p.ndup >= 1 && strstr(why, "cost model") != NULL,
            "ssc auto: %s ndup=%d (%s)", ovl_algo_name(p.algo), p.ndup, why);
    T_OK(ovl_plan_check(&p, OVL_FAMILY_SSC, 1));
  } else { /* no grid of the family uses all the ranks: auto takes the largest rank count that has one */
    T_OK(ovl_plan_resolve(MPI_COMM_WORLD, OVL_FAMILY_SSC, &p, &none, why, sizeof why));
    T_CHECK(strstr(why, "of the") != NULL && p.s * p.s * p.c < P, "ssc auto on %d ranks: %s %dx%dx%d (%s)", P,
            ovl_algo_name(p.algo), p.s, p.s, p.c, why);
  }
  /* a constraint holds: N_DUP fixed */
  p = ovl_plan_auto(OVL_FAMILY_GEMM, 512);
  p.ndup = 3;
  T_OK(ovl_plan_resolve(MPI_COMM_WORLD, OVL_FAMILY_GEMM, &p, &none, why, sizeof why));
  T_CHECK(p.ndup == 3 && p.algo != OVL_ALGO_AUTO, "ndup 3 kept: %s ndup=%d", ovl_algo_name(p.algo), p.ndup);
  /* the same plan on every rank */
  int mine[4] = {(int)p.algo, p.ndup, p.p, (int)p.b}, lo[4], hi[4];
  MPI_Allreduce(mine, lo, 4, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(mine, hi, 4, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  T_CHECK(!memcmp(lo, hi, sizeof lo), "every rank has the same plan");
  /* a tune database entry wins over the model when it agrees with the constraints */
  char tf[512];
  snprintf(tf, sizeof tf, "%s/tune.json", dir);
  if (ovl_world_rank() == 0) {
    ovl_plan e = ovl_plan_default(OVL_ALGO_SUMMA, 600, P);
    e.b = 64, e.ndup = 2, e.lookahead = 1;
    T_OK(ovl_tunedb_store(tf, OVL_FAMILY_GEMM, &e, 1e-3, "test"));
  }
  MPI_Barrier(MPI_COMM_WORLD);
  ovl_plan_src tsrc = {NULL, tf};
  p = ovl_plan_auto(OVL_FAMILY_GEMM, 512); /* within a factor of 2 of 600 */
  T_OK(ovl_plan_resolve(MPI_COMM_WORLD, OVL_FAMILY_GEMM, &p, &tsrc, why, sizeof why));
  T_CHECK(p.algo == OVL_ALGO_SUMMA && p.b == 64 && p.ndup == 2 && p.lookahead == 1 && strstr(why, "tune file"),
          "tune entry: %s b=%lld ndup=%d la=%d (%s)", ovl_algo_name(p.algo), (long long)p.b, p.ndup, p.lookahead, why);
  p = ovl_plan_auto(OVL_FAMILY_GEMM, 512);
  p.b = 128; /* given: kept while the rest comes from the entry */
  T_OK(ovl_plan_resolve(MPI_COMM_WORLD, OVL_FAMILY_GEMM, &p, &tsrc, why, sizeof why));
  T_CHECK(p.b == 128 && p.ndup == 2, "given b kept: b=%lld ndup=%d", (long long)p.b, p.ndup);
  p = ovl_plan_auto(OVL_FAMILY_GEMM, 5000); /* too far from 600: the model */
  T_OK(ovl_plan_resolve(MPI_COMM_WORLD, OVL_FAMILY_GEMM, &p, &tsrc, why, sizeof why));
  T_CHECK(strstr(why, "cost model") != NULL, "n = 5000 is not 600's: %s", why);
  /* errors, the same on every rank */
  p = ovl_plan_auto(OVL_FAMILY_GEMM, 512);
  p.algo = OVL_ALGO_SSC5;
  T_ERR(ovl_plan_resolve(MPI_COMM_WORLD, OVL_FAMILY_GEMM, &p, &none, why, sizeof why), OVL_ERR_ARG);
  char bad[512];
  snprintf(bad, sizeof bad, "%s/missing.json", dir);
  ovl_plan_src msrc = {bad, NULL};
  p = ovl_plan_auto(OVL_FAMILY_GEMM, 512);
  T_ERR(ovl_plan_resolve(MPI_COMM_WORLD, OVL_FAMILY_GEMM, &p, &msrc, why, sizeof why), OVL_ERR_IO);
  /* the grids a plan names, with the planner's message when they do not fit */
  p = ovl_plan_default(OVL_ALGO_SSC5, 64, 0);
  T_OK(ovl_plan_resolve(MPI_COMM_WORLD, OVL_FAMILY_SSC, &p, NULL, NULL, 0));
  ovl_grid2d g2 = NULL;
  ovl_grid3d g3 = NULL;
  int cube = p.s * p.s * p.s == P;
  ovl_err rc = ovl_plan_grids(MPI_COMM_WORLD, &p, 0, &g2, &g3);
  T_CHECK(cube ? rc == OVL_OK : rc == OVL_ERR_GRID, "alg5 grid on %d ranks: %s", P, ovl_err_name(rc));
  if (!cube) T_CHECK(strstr(ovl_errmsg(), "--allow-idle") != NULL, "the message names --allow-idle: %s", ovl_errmsg());
  if (g3) ovl_grid3d_destroy(&g3);
  T_OK(ovl_plan_grids(MPI_COMM_WORLD, &p, OVL_GRID_ALLOW_IDLE, &g2, &g3));
  T_CHECK(g3 != NULL && g2 == ovl_grid3d_plane(g3), "3D grid and its plane");
  ovl_grid3d_destroy(&g3);
}

/* The tuner times the model's best, stores the fastest, and auto finds it. */
static void test_tune(const char *dir) {
  char tf[512];
  snprintf(tf, sizeof tf, "%s/tuned.json", dir);
  ovl_tune_params tp = ovl_tune_default(OVL_FAMILY_GEMM, 48);
  tp.top = 2, tp.band = 0, tp.rounds = 1, tp.warmup = 0, tp.src.tune_file = tf;
  ovl_tune_result r;
  T_OK(ovl_tune(MPI_COMM_WORLD, &tp, &r));
  /* the top 2, and those predicted as fast as the second (band 0: ties) */
  T_CHECK(r.nrows >= 2 && r.ntuned >= 2 && r.choice >= 0 && r.choice < r.ntuned && !strcmp(r.stored, tf),
          "tuner: %d rows, %d tuned, choice %d", r.nrows, r.ntuned, r.choice);
  for (int k = 0; k < r.ntuned; k++) T_CHECK(r.rows[k].t_median_tuner > 0, "row %d timed", k);
  for (int k = r.ntuned; k < r.nrows; k++)
    T_CHECK(isnan(r.rows[k].t_median_tuner) && r.rows[k].predicted > r.rows[0].predicted, "row %d not timed", k);
  ovl_plan p = ovl_plan_auto(OVL_FAMILY_GEMM, 48);
  ovl_plan_src src = {NULL, tf};
  char why[OVL_PLAN_WHY];
  T_OK(ovl_plan_resolve(MPI_COMM_WORLD, OVL_FAMILY_GEMM, &p, &src, why, sizeof why));
  T_CHECK(ovl_plan_same(&p, &r.rows[r.choice].plan) && strstr(why, "tune file"), "auto finds the tuner's choice (%s)",
          why);
  ovl_tune_result_free(&r);
  tp.top = 0;
  T_ERR(ovl_tune(MPI_COMM_WORLD, &tp, &r), OVL_ERR_ARG);
}

/* A plan on a subset of every node's ranks (ovl_plan_resolve_ppn): K ranks
 * per node, all of them, and --ppn auto's choice against the model. */
static void test_resolve_ppn(void) {
  int P = 1, rpn = 1, nodes = 1, consec = 1, ppn = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  T_OK(ovl_node_ranks(MPI_COMM_WORLD, &rpn, &nodes, &consec));
  char why[OVL_PLAN_WHY] = "";
  ovl_plan_src none = {NULL, NULL};
  unsetenv("OVL_TUNE_FILE"), unsetenv("OVL_MACHINE");
  ovl_plan p = ovl_plan_default(OVL_ALGO_SSC5, 96, 0);
  T_OK(ovl_plan_resolve_ppn(MPI_COMM_WORLD, OVL_FAMILY_SSC, &p, &ppn, &none, why, sizeof why));
  T_CHECK(p.P == nodes && p.s == 1 && ppn == 1, "ppn 1: P %d s %d (%d nodes)", p.P, p.s, nodes);
  /* everything open, K auto: the fastest prediction over the divisors of the ranks per node */
  ovl_machine m;
  T_OK(ovl_plan_machine(NULL, &m, NULL, 0));
  double best = INFINITY;
  for (int k = 1; k <= rpn; k++) {
    ovl_plan c = ovl_plan_auto(OVL_FAMILY_SSC, 96);
    ovl_model_cost cost;
    int kk = k;
    c.n = 96;
    if (rpn % k == 0 && ovl_plan_resolve_ppn(MPI_COMM_WORLD, OVL_FAMILY_SSC, &c, &kk, &none, NULL, 0) == OVL_OK) {
      c.ppn = k, c.P = nodes * k;
      if (ovl_model_predict(&m, &c, &cost) == OVL_OK && cost.total < best) best = cost.total;
    }
  }
  ovl_err_clear();
  p = ovl_plan_auto(OVL_FAMILY_SSC, 96);
  p.n = 96, ppn = OVL_AUTO;
  T_OK(ovl_plan_resolve_ppn(MPI_COMM_WORLD, OVL_FAMILY_SSC, &p, &ppn, &none, why, sizeof why));
  ovl_model_cost chosen;
  T_OK(ovl_model_predict(&m, &p, &chosen));
  T_CHECK(ppn >= 0 && ppn < rpn && (ppn == 0 || rpn % ppn == 0) && p.P == nodes * (ppn ? ppn : rpn),
          "auto: ppn %d, P %d of %d per node", ppn, p.P, rpn);
  T_CHECK(chosen.total <= best * (1 + 1e-12) && strstr(why, "cost model") != NULL, "auto %g s, best %g s (%s)",
          chosen.total, best, why);
  /* no K has a grid: a 5x5x5 grid asked for */
  p = ovl_plan_default(OVL_ALGO_SSC5, 96, 0);
  p.s = 5, p.c = 5, ppn = OVL_AUTO;
  T_ERR(ovl_plan_resolve_ppn(MPI_COMM_WORLD, OVL_FAMILY_SSC, &p, &ppn, &none, why, sizeof why), OVL_ERR_GRID);
  T_CHECK(ppn == OVL_AUTO, "a refused auto leaves ppn: %d", ppn);
}

/* A finished purification job as `ovl purify` prints it, and the check's verdict. */
static void test_purify_print(void) {
  ovl_purify_job j;
  memset(&j, 0, sizeof j);
  j.fock = "f.raw", j.out = "d.raw", j.check = 1;
  j.po = ovl_purify_opts_default();
  j.po.plan = ovl_plan_default(OVL_ALGO_SSC5, 10, 8);
  j.po.nocc = 3;
  ovl_purify_job_result r;
  memset(&r, 0, sizeof r);
  r.n = 10, r.active = 8, r.threads = 1, r.res.iterations = 12, r.res.stop_reason = "idempotency tolerance";
  r.ref.relerr = 1e-12, r.res.trace_err = 1e-13;
  snprintf(r.grid, sizeof r.grid, "2x2x2");
  T_OK(ovl_purify_job_verdict(&j, &r));
  char buf[4096] = "";
  for (int json = 0; json < 2; json++) {
    FILE *f = tmpfile();
    T_CHECK(f != NULL, "tmpfile");
    if (!f) return;
    T_OK(ovl_purify_job_print(f, &j, &r, 8, json));
    rewind(f);
    buf[fread(buf, 1, sizeof buf - 1, f)] = '\0';
    fclose(f);
    if (json)
      T_CHECK(strstr(buf, "{\"type\":\"purify\"") == buf && strstr(buf, "\"nocc\":3") &&
                  strstr(buf, "\"check\":\"PASS\"") && strstr(buf, "\"grid\":\"2x2x2\""),
              "record: %s", buf);
    else
      T_CHECK(strstr(buf, "purify: n=10 n_occ=3 grid 2x2x2 (8 active, 1 BLAS thread each): 12 iterations") == buf &&
                  strstr(buf, "D written to d.raw") && strstr(buf, "\ncheck: ") && strstr(buf, ": PASS\n"),
              "lines: %s", buf);
  }
  r.res.trace_err = 1e-3; /* the trace misses n_occ: FAIL, except for McWeeny */
  T_ERR(ovl_purify_job_verdict(&j, &r), OVL_ERR_NUMERIC);
  j.po.method = OVL_PURIFY_MCWEENY;
  T_OK(ovl_purify_job_verdict(&j, &r));
  r.ref.relerr = 1e-6;
  T_ERR(ovl_purify_job_verdict(&j, &r), OVL_ERR_NUMERIC);
  T_CHECK(strstr(ovl_errmsg(), "1.00e-06") != NULL, "verdict: %s", ovl_errmsg());
  j.check = 0;
  T_OK(ovl_purify_job_verdict(&j, &r));
  T_ERR(ovl_purify_job_print(NULL, &j, &r, 8, 0), OVL_ERR_ARG);
}

/* Every family planned for P = 1..128 ranks (plan->P: no such run needed),
 * one grid per family and P, and ovl_pdpurify's plan the planner's: SP2
 * (the family of the default, SP2-ACC) in the symmetric-square family, canonical in
 * SymmSquareCube's. The deprecated ovl_sq_grid_dims is the SQ shape rule.
 * Rank 0 alone, over MPI_COMM_SELF. */
static void test_entry_plans(void) {
  static const ovl_family fams[3] = {OVL_FAMILY_GEMM, OVL_FAMILY_SSC, OVL_FAMILY_SQ};
  for (int P = 1; P <= 128; P++)
    for (int f = 0; f < 3; f++) {
      ovl_plan a = ovl_plan_auto(fams[f], 600), b;
      a.P = P;
      b = a;
      T_OK(ovl_plan_resolve(MPI_COMM_SELF, fams[f], &a, NULL, NULL, 0));
      T_OK(ovl_plan_resolve(MPI_COMM_SELF, fams[f], &b, NULL, NULL, 0));
      int need = ovl_algo_is_3d(a.algo) ? a.s * a.s * a.c : a.p * a.q;
      T_CHECK(ovl_algo_family(a.algo) == fams[f] && need >= 1 && need <= P, "family %s P=%d: %s uses %d ranks",
              ovl_family_name(fams[f]), P, ovl_algo_name(a.algo), need);
      T_CHECK(ovl_plan_same(&a, &b) && a.p == b.p && a.q == b.q && a.s == b.s && a.c == b.c,
              "family %s P=%d: two grids", ovl_family_name(fams[f]), P);
      if (fams[f] == OVL_FAMILY_GEMM) continue;
      ovl_pdpurify_params prm = ovl_pdpurify_params_default();
      prm.method = fams[f] == OVL_FAMILY_SQ ? OVL_PURIFY_SP2 : OVL_PURIFY_CANONICAL;
      ovl_plan e;
      T_OK(ovl_pdpurify_plan(MPI_COMM_SELF, P, 600, &prm, &e, NULL, 0));
      char pa[256], pe[256];
      ovl_plan_describe(&a, pa, sizeof pa), ovl_plan_describe(&e, pe, sizeof pe);
      T_CHECK(strcmp(pa, pe) == 0 && e.s == a.s && e.c == a.c, "P=%d %s: ovl_pdpurify plans '%s', the planner '%s'", P,
              ovl_purify_method_name(prm.method), pe, pa);
      if (fams[f] == OVL_FAMILY_SQ) {
        int s = 0, c = 0;
        ovl_sq_grid_dims(P, &s, &c);
        T_CHECK(s == a.s && c == a.c && a.algo == OVL_ALGO_SQ, "P=%d: ovl_sq_grid_dims %dx%dx%d, the planner %dx%dx%d",
                P, s, s, c, a.s, a.s, a.c);
      }
    }
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  char dir[] = "/tmp/ovl_test_plan.XXXXXX";
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0 && !mkdtemp(dir)) dir[0] = 0;
  MPI_Bcast(dir, (int)sizeof dir, MPI_CHAR, 0, MPI_COMM_WORLD);
  test_shapes();
  test_opts();
  test_check();
  test_resolve(dir);
  test_tune(dir);
  test_resolve_ppn();
  test_purify_print();
  if (rank == 0) test_entry_plans();
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "test_plan: could not remove %s\n", dir);
  }
  int rc = t_finish("test_plan");
  MPI_Finalize();
  return rc;
}
