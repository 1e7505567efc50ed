/* ovl tune: rank a kernel family's configurations by the cost model, time the
 * best few (or all, --exhaustive), and store the fastest in a tune file that
 * `auto` reads. Also the resolution of `auto` itself (cli_auto).
 *
 * Tune file: one JSON object per line,
 *   {"family":"ssc","n":576,"P":8,"kernel":"alg5","ndup":4,"s":0,"c":0,"b":256,"G":1,"lookahead":0,
 *    "t_median":1.2e-02,"machine":"..."}
 * A new entry replaces the one with the same family, n and P. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bench_util.h"
#include "cli.h"

enum { TUNE_MAXCAND = 128, TUNE_MAXLINES = 4096 };

static const char *const k_families[] = {"gemm", "ssc", NULL};

int cli_cfg_str(const ovl_plan *c, char *buf, size_t n) {
  const char *k = ovl_algo_name(c->algo);
  switch (c->algo) {
  case OVL_ALGO_SUMMA:
    return snprintf(buf, n, "%s b=%" PRId64 " ndup=%d%s", k, c->b, c->ndup, c->lookahead ? " lookahead" : "");
  case OVL_ALGO_HSUMMA:
    return snprintf(buf, n, "%s G=%d b=%" PRId64 " ndup=%d%s", k, c->G, c->b, c->ndup,
                    c->lookahead ? " lookahead" : "");
  case OVL_ALGO_25D:
  case OVL_ALGO_SSC6: return snprintf(buf, n, "%s %dx%dx%d ndup=%d", k, c->s, c->s, c->c, c->ndup);
  default: return snprintf(buf, n, "%s ndup=%d", k, c->ndup);
  }
}

/* ---- tune file ------------------------------------------------------------------ */

static int jnum(const char *line, const char *key, double *v) {
  char pat[48];
  snprintf(pat, sizeof pat, "\"%s\":", key);
  const char *p = strstr(line, pat);
  if (!p) return 0;
  char *end = NULL;
  *v = strtod(p + strlen(pat), &end);
  return end != p + strlen(pat);
}

static int jstr(const char *line, const char *key, char *out, size_t n) {
  char pat[48];
  snprintf(pat, sizeof pat, "\"%s\":\"", key);
  const char *p = strstr(line, pat);
  if (!p) return 0;
  p += strlen(pat);
  size_t k = 0;
  while (*p && *p != '"' && k + 1 < n) out[k++] = *p++;
  out[k] = 0;
  return *p == '"';
}

/* Parse one line; returns 1 with the family index, n, P and the configuration. */
static int parse_entry(const char *line, int *fam, int64_t *n, int *P, ovl_plan *c) {
  char f[16], k[16];
  double vn, vP, nd, s, cc, b, G, la;
  if (!jstr(line, "family", f, sizeof f) || !jstr(line, "kernel", k, sizeof k) || !jnum(line, "n", &vn) ||
      !jnum(line, "P", &vP) || !jnum(line, "ndup", &nd) || !jnum(line, "s", &s) || !jnum(line, "c", &cc) ||
      !jnum(line, "b", &b) || !jnum(line, "G", &G) || !jnum(line, "lookahead", &la))
    return 0;
  *fam = !strcmp(f, "gemm") ? OVL_FAMILY_GEMM : !strcmp(f, "ssc") ? OVL_FAMILY_SSC : -1;
  ovl_algo kk;
  if (*fam < 0 || ovl_algo_parse(k, &kk) != OVL_OK) return 0;
  *c = ovl_plan_default(kk, (int64_t)vn, (int)vP);
  c->ndup = (int)nd, c->s = (int)s, c->c = (int)cc, c->b = (int64_t)b, c->G = (int)G, c->lookahead = (int)la;
  *n = (int64_t)vn, *P = (int)vP;
  return c->ndup >= 1 && c->ndup <= OVL_LANES_MAX && *P >= 1 && *n >= 0;
}

/* Rank 0: the entry for (f, P) with the nearest n within a factor of 2
 * (*found = 0 when there is none). A tune file that cannot be read is an
 * error (OVL_ERR_IO naming it), not an empty file. */
static ovl_err tune_lookup(const char *path, ovl_family f, int64_t n, int P, ovl_plan *out, int64_t *nfound,
                           int *found_out) {
  FILE *fp = NULL;
  *found_out = 0;
  OVL_TRY(ovl_file_open_read(path, "tune file", &fp));
  char line[1024];
  double best = INFINITY;
  int found = 0;
  while (fgets(line, sizeof line, fp)) {
    int fam, eP;
    int64_t en;
    ovl_plan c;
    if (!parse_entry(line, &fam, &en, &eP, &c) || fam != (int)f || eP != P || en <= 0 || n <= 0) continue;
    double d = fabs(log((double)en / (double)n));
    if (d <= log(2.0) + 1e-12 && d < best) best = d, *out = c, *nfound = en, found = 1;
  }
  fclose(fp);
  if (found) out->n = n;
  *found_out = found;
  return OVL_OK;
}

static ovl_err tune_store(const char *path, ovl_family f, const ovl_plan *c, double tmed, const char *mname) {
  char *keep[TUNE_MAXLINES];
  int nk = 0;
  FILE *fp = NULL;
  struct stat st;
  OVL_TRY(ovl_file_check_write(path, "tune file", NULL, 0));
  if (stat(path, &st) == 0) OVL_TRY(ovl_file_open_read(path, "tune file", &fp)); /* kept entries */
  if (fp) {
    char line[1024];
    while (fgets(line, sizeof line, fp) && nk < TUNE_MAXLINES) {
      int fam, eP;
      int64_t en;
      ovl_plan e;
      if (parse_entry(line, &fam, &en, &eP, &e) && fam == (int)f && en == c->n && eP == c->P) continue;
      keep[nk] = strdup(line);
      if (keep[nk]) nk++;
    }
    fclose(fp);
  }
  char tmp[4096];
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  FILE *o = fopen(tmp, "w");
  ovl_err rc = OVL_OK;
  if (!o) rc = ovl_err_set(OVL_ERR_IO, "cannot create %s: %s", tmp, strerror(errno));
  for (int k = 0; k < nk; k++) {
    if (o) fputs(keep[k], o);
    free(keep[k]);
  }
  if (!o) return rc;
  fprintf(o,
          "{\"family\":\"%s\",\"n\":%" PRId64 ",\"P\":%d,\"kernel\":\"%s\",\"ndup\":%d,\"s\":%d,\"c\":%d,\"b\":%" PRId64
          ",\"G\":%d,\"lookahead\":%d,\"t_median\":%.6e,\"machine\":\"%s\"}\n",
          k_families[f], c->n, c->P, ovl_algo_name(c->algo), c->ndup, c->s, c->c, c->b, c->G, c->lookahead, tmed,
          mname);
  return ovl_file_commit(o, tmp, path);
}

ovl_err cli_auto_ex(ovl_family f, int64_t n, int P, int ppn, int kernel, int ndup, const char *machine,
                    const char *tune_file, ovl_plan *out, double *predicted, char *why, size_t nwhy) {
  const char *env = getenv("OVL_TUNE_FILE");
  if (!tune_file && env && *env) tune_file = env;
  ovl_err rc = OVL_OK;
  int found = 0;
  int64_t nf = 0;
  double pred = INFINITY;
  if (ovl_world_rank() == 0) {
    if (tune_file && ppn <= 1) rc = tune_lookup(tune_file, f, n, P, out, &nf, &found);
    if (found && ((kernel >= 0 && (int)out->algo != kernel) || (ndup > 0 && out->ndup != ndup))) found = 0;
    ovl_machine m;
    char src[512];
    if (!rc) rc = cli_machine(machine, &m, src, sizeof src);
    if (!rc && found) {
      ovl_model_cost c;
      if (ovl_model_predict(&m, out, &c) == OVL_OK) pred = c.total;
      snprintf(why, nwhy, "tune file %s, measured at n=%" PRId64, tune_file, nf);
    } else if (!rc) {
      ovl_plan cand[TUNE_MAXCAND];
      ovl_model_cost pr[TUNE_MAXCAND];
      int nc = ovl_model_candidates(f, n, P, cand, TUNE_MAXCAND), keep = 0;
      for (int k = 0; k < nc; k++) { /* the constraints the caller fixed */
        if ((kernel >= 0 && (int)cand[k].algo != kernel) || (ndup > 0 && cand[k].ndup != ndup)) continue;
        cand[k].ppn = ppn > 1 ? ppn : 1;
        cand[keep++] = cand[k];
      }
      if (kernel >= 0 && ndup > 0 && keep == 0 && nc > 0) { /* e.g. alg4 with ndup 3: the pair itself */
        cand[0] = ovl_plan_default((ovl_algo)kernel, n, P);
        cand[0].ndup = ndup, cand[0].ppn = ppn > 1 ? ppn : 1, keep = 1;
      }
      ovl_model_rank(&m, cand, keep, pr);
      if (keep == 0 || isinf(pr[0].total)) {
        rc = ovl_err_set(OVL_ERR_GRID, "auto: no %s configuration fits %d ranks", f == OVL_FAMILY_GEMM ? "gemm" : "ssc",
                         P);
      } else {
        *out = cand[0], pred = pr[0].total;
        snprintf(why, nwhy, "cost model, machine %s", src);
      }
    }
  }
  OVL_TRY(ovl_err_agree(MPI_COMM_WORLD, rc));
  MPI_Bcast(out, (int)sizeof *out, MPI_BYTE, 0, MPI_COMM_WORLD);
  MPI_Bcast(&pred, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  MPI_Bcast(why, (int)nwhy, MPI_CHAR, 0, MPI_COMM_WORLD);
  if (predicted) *predicted = pred;
  return OVL_OK;
}

ovl_err cli_auto(ovl_family f, int64_t n, int P, const char *machine, const char *tune_file, ovl_plan *out, char *why,
                 size_t nwhy) {
  return cli_auto_ex(f, n, P, 1, -1, 0, machine, tune_file, out, NULL, why, nwhy);
}

/* ---- measuring candidates, interleaved ------------------------------------------------
 *
 * Each candidate gets its grid, plan and operands up front (a tune_run); the
 * repetitions then run in rounds, each round timing every candidate of the
 * set once, so that the slow drifts of a shared machine fall on all
 * candidates alike (as in `ovl bench ssc`). Time of a repetition = MAX over
 * ranks; min and median over the rounds. */

typedef struct tune_run {
  ovl_family f;
  ovl_plan plan; /* gemm */
  ovl_grid2d g;
  ovl_grid3d g3;
  ovl_dmat A, B, C;
  ovl_bench_ssc_h ssc; /* ssc: ovl_bench_ssc_open's handle */
  int64_t mem;
} tune_run;

static void run_close(tune_run *r) {
  ovl_dmat_destroy(&r->A), ovl_dmat_destroy(&r->B), ovl_dmat_destroy(&r->C);
  if (r->g3) ovl_grid3d_destroy(&r->g3), r->g = NULL;
  else if (r->g) ovl_grid2d_destroy(&r->g);
  ovl_bench_ssc_close(&r->ssc);
}

/* Set up one candidate if what is already open (*used bytes per rank) and
 * its own footprint fit the node. COLLECTIVE over MPI_COMM_WORLD. */
static ovl_err run_open(ovl_family f, const ovl_plan *c, int64_t *used, tune_run *r) {
  memset(r, 0, sizeof *r);
  r->f = f;
  ovl_err rc = OVL_OK;
  int P = c->P;
  if (f == OVL_FAMILY_SSC) {
    ovl_algo a = (ovl_algo)(OVL_ALGO_SSC3 + (c->algo - OVL_ALGO_SSC3));
    int s = c->s, cc = c->c;
    if (a != OVL_ALGO_SSC6 || s <= 0)
      for (s = 1, cc = 1; (s + 1) * (s + 1) * (s + 1) <= P; s++, cc++) {}
    int64_t w = ovl_ssc_memory(c->n, s, cc, a), blk = ovl_dmat_memory(c->n, c->n, s, s);
    r->mem = w < 0 || blk < 0 ? INT64_MAX / 2 : w + 3 * blk; /* workspace + D, D^2, D^3 */
    OVL_TRY(ovl_check_memory(MPI_COMM_WORLD, *used + r->mem, 0));
    ovl_coll_cfg col = ovl_coll_cfg_default();
    OVL_TRY(ovl_bench_ssc_open(MPI_COMM_WORLD, a, c->ndup, a == OVL_ALGO_SSC6 ? c->s : 0, a == OVL_ALGO_SSC6 ? c->c : 0,
                               c->n, &col, &r->ssc));
    *used += r->mem;
    return OVL_OK;
  }
  ovl_plan *plan = &r->plan;
  *plan = ovl_plan_gemm(OVL_ALGO_SUMMA, c->b);
  plan->ndup = c->ndup, plan->lookahead = c->lookahead, plan->outer = c->outer;
  int p = 0, q = 0, rep = 1;
  if (c->algo == OVL_ALGO_3D || c->algo == OVL_ALGO_25D) {
    plan->algo = c->algo == OVL_ALGO_3D ? OVL_ALGO_3D : OVL_ALGO_25D;
    rc = ovl_grid3d_create(MPI_COMM_WORLD, c->algo == OVL_ALGO_3D ? 0 : c->s, c->algo == OVL_ALGO_3D ? 0 : c->c,
                           OVL_GRID_ALLOW_IDLE, &r->g3);
    if (!rc) r->g = ovl_grid3d_plane(r->g3), ovl_grid3d_dims(r->g3, &p, &rep), q = p;
  } else {
    plan->algo = c->algo == OVL_ALGO_CANNON   ? OVL_ALGO_CANNON
                 : c->algo == OVL_ALGO_HSUMMA ? OVL_ALGO_HSUMMA
                                              : OVL_ALGO_SUMMA;
    if (c->algo == OVL_ALGO_CANNON) {
      for (p = 1; (p + 1) * (p + 1) <= P; p++) {}
      q = p;
    }
    rc = ovl_grid2d_create(MPI_COMM_WORLD, p, q, OVL_GRID_ALLOW_IDLE, &r->g);
    if (!rc) ovl_grid2d_dims(r->g, &p, &q);
    if (!rc && c->algo == OVL_ALGO_HSUMMA)
      rc = ovl_err_agree(MPI_COMM_WORLD, ovl_hgroups_auto_dims(p, q, c->G, &plan->groups_i, &plan->groups_j));
  }
  if (!rc) {
    r->mem = ovl_mm_memory(plan, 'N', 'N', c->n, c->n, c->n, p, q, rep);
    rc = ovl_check_memory(MPI_COMM_WORLD, *used + (r->mem < 0 ? INT64_MAX / 2 : r->mem), 0);
  }
  if (!rc) rc = ovl_dmat_create(r->g, c->n, c->n, &r->A);
  if (!rc) rc = ovl_dmat_create(r->g, c->n, c->n, &r->B);
  if (!rc) rc = ovl_dmat_create(r->g, c->n, c->n, &r->C);
  rc = ovl_err_agree(MPI_COMM_WORLD, rc);
  if (!rc) rc = ovl_dmat_fill(r->A, OVL_FILL_RANDOM, 1);
  if (!rc) rc = ovl_dmat_fill(r->B, OVL_FILL_RANDOM, 2);
  if (rc) {
    run_close(r);
    return rc;
  }
  *used += r->mem;
  return OVL_OK;
}

/* One repetition (this rank's seconds). COLLECTIVE over MPI_COMM_WORLD. */
static ovl_err run_once(tune_run *r, double *t) {
  if (r->f == OVL_FAMILY_SSC) return ovl_bench_ssc_once(r->ssc, t);
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = ovl_time();
  ovl_err rc = ovl_gemm('N', 'N', 1.0, r->A, r->B, 0.0, r->C, &r->plan, r->g3, NULL);
  *t = ovl_time() - t0;
  return rc;
}

/* Time the candidates idx[0..m-1] in warmup + rounds interleaved rounds:
 * tmin/tmed[idx[k]] over the timed rounds. prog (may be NULL) steps per
 * round. COLLECTIVE over MPI_COMM_WORLD. */
static ovl_err interleave(tune_run *runs, const int *idx, int m, int rounds, int warmup, double *tmin, double *tmed,
                          ovl_bench_reporter *prog, const char *what) {
  double *t = calloc((size_t)m * (size_t)rounds, sizeof *t);
  ovl_err rc = ovl_err_agree(MPI_COMM_WORLD, t ? OVL_OK : ovl_err_set(OVL_ERR_NOMEM, "cannot allocate timings"));
  for (int r = 0; r < warmup + rounds && !rc; r++) {
    for (int k = 0; k < m && !rc; k++) {
      double x = 0;
      rc = run_once(&runs[idx[k]], &x);
      if (r >= warmup) t[(size_t)k * (size_t)rounds + (size_t)(r - warmup)] = x;
    }
    if (prog) ovl_bench_reporter_step(prog, "%s round %d%s", what, r + 1, r < warmup ? " (warm-up)" : "");
  }
  for (int k = 0; k < m && !rc; k++) {
    ovl_stats st;
    rc = ovl_stats_max_over_ranks(MPI_COMM_WORLD, t + (size_t)k * (size_t)rounds, rounds, &st);
    tmin[idx[k]] = st.min, tmed[idx[k]] = st.median;
  }
  free(t);
  return rc;
}

static int cfg_equal(const ovl_plan *a, const ovl_plan *b) {
  return a->algo == b->algo && a->ndup == b->ndup && a->b == b->b && a->G == b->G && a->lookahead == b->lookahead &&
         ((a->algo != OVL_ALGO_25D && a->algo != OVL_ALGO_SSC6) || (a->s == b->s && a->c == b->c));
}

int cmd_tune(int argc, char **argv) {
  int help = 0, top = 3, iters = 3, warmup = 1, exhaustive = 0, rounds = 9, json = 0, quiet = 0;
  double band = 0.10;
  int64_t n = 1024;
  const char *family = "ssc", *machine = NULL, *out = NULL;
  ovl_opt opts[] = {
      {"kernel", 'k', OVL_OPT_CHOICE, &family, "K", "kernel family: gemm (C = A B) or ssc (SymmSquareCube)", k_families,
       0, -1},
      {"size", 'n', OVL_OPT_I64, &n, "N", "matrix size", NULL, 1, (int64_t)1 << 20},
      {"machine", 'm', OVL_OPT_STRING, &machine, "FILE", "machine file (default: $OVL_MACHINE, else built-in)", NULL, 0,
       -1},
      {"top", 't', OVL_OPT_INT, &top, "K", "time the K best configurations by the model", NULL, 1, TUNE_MAXCAND},
      {"band", 0, OVL_OPT_DOUBLE, &band, "F",
       "also time every configuration predicted within (1 + F) x the best prediction (the model cannot tell them "
       "apart)",
       NULL, 0, -1},
      {"exhaustive", 0, OVL_OPT_FLAG, &exhaustive, NULL,
       "after choosing, time every configuration in interleaved rounds and judge the choice against the best", NULL, 0,
       -1},
      {"iterations", 'i', OVL_OPT_INT, &iters, "I", "timed rounds of the tuner (each times its set once)", NULL, 1,
       1000},
      {"rounds", 'r', OVL_OPT_INT, &rounds, "R",
       "timed rounds of the exhaustive sweep (each times every configuration)", NULL, 1, 1000},
      {"warmup", 'x', OVL_OPT_INT, &warmup, "X", "untimed warm-up rounds before each timing", NULL, 0, 100},
      {"output", 'o', OVL_OPT_STRING, &out, "FILE", "tune file to store the choice in (default: $OVL_TUNE_FILE)", NULL,
       0, -1},
      {"json", 'j', OVL_OPT_FLAG, &json, NULL, "one JSON object per configuration", NULL, 0, -1},
      {"quiet", 'q', OVL_OPT_FLAG, &quiet, NULL, "no progress lines", NULL, 0, -1},
      {"help", 'h', OVL_OPT_FLAG, &help, NULL, "show this help", NULL, 0, -1},
  };
  int prc =
      cli_parse("usage: mpiexec -n P ovl tune --kernel gemm|ssc -n N [options]\n\n"
                "Ranks the configurations of a kernel (algorithm, N_DUP, G, c, panel width, lookahead) by the\n"
                "cost model, times the K best (and those predicted within the band) on these ranks in\n"
                "interleaved rounds (time = MAX over ranks, median over rounds) and stores the fastest in the\n"
                "tune file, where `ovl gemm --algo auto` and `ovl purify --algo auto` find it. --exhaustive then\n"
                "times every configuration in fresh interleaved rounds and reports how far the model's, the\n"
                "tuner's and auto's choices are from the best one.",
                opts, (int)(sizeof opts / sizeof opts[0]), argc, argv, 2, &help, NULL);
  if (prc >= 0) return prc;
  const char *env = getenv("OVL_TUNE_FILE");
  if (!out && env && *env) out = env;
  {
    const char *inputs[] = {machine};
    const cli_out outs[] = {{out, "tune file"}};
    int orc = cli_check_outputs("tune", outs, 1, inputs, 1);
    if (orc >= 0) return orc;
  }
  int P = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  ovl_family f = !strcmp(family, "gemm") ? OVL_FAMILY_GEMM : OVL_FAMILY_SSC;
  ovl_machine m;
  char src[512];
  ovl_err rc = cli_machine(machine, &m, src, sizeof src);
  ovl_plan cand[TUNE_MAXCAND];
  ovl_model_cost pred[TUNE_MAXCAND];
  int nc = 0;
  if (!rc) {
    nc = ovl_model_candidates(f, n, P, cand, TUNE_MAXCAND);
    ovl_model_rank(&m, cand, nc, pred);
    while (nc > 0 && isinf(pred[nc - 1].total)) nc--;
    if (nc == 0) rc = ovl_err_set(OVL_ERR_GRID, "no %s configuration fits %d ranks", family, P);
  }
  if (!rc && !(band >= 0)) rc = ovl_err_set(OVL_ERR_ARG, "--band must be >= 0, got %g", band);
  if ((rc = ovl_err_agree(MPI_COMM_WORLD, rc)) != OVL_OK) return cli_fail("tune", rc);
  /* the tuner's set: the model's top K and every candidate inside the band */
  int nt = top < nc ? top : nc;
  while (nt < nc && pred[nt].total <= (1.0 + band) * pred[0].total) nt++;
  int nm = exhaustive ? nc : nt;
  if (!json)
    ovl_log(OVL_LOG_INFO,
            "# ovl tune: %s n=%" PRId64 " on %d ranks, %d configurations; machine %s\n# MPI: %s\n"
            "# time = MAX over ranks, median over rounds, configurations interleaved in each round; rank = position "
            "in the model's order\n# tuner: the top %d and those predicted within %.0f%% of the best (%d), %d rounds "
            "(+%d warm-up)%s\n",
            family, n, P, nc, src, cli_mpi_library(), top, 100 * band, nt, iters, warmup,
            exhaustive ? "; then every configuration" : "");
  if (!json && exhaustive)
    ovl_log(OVL_LOG_INFO, "# exhaustive sweep: all %d, %d rounds (+%d warm-up)\n", nc, rounds, warmup);
  /* every configuration to time gets its operands up front */
  tune_run *runs = calloc((size_t)nm, sizeof *runs);
  int idx[TUNE_MAXCAND], nopen = 0;
  int64_t used = 0;
  rc = ovl_err_agree(MPI_COMM_WORLD, runs ? OVL_OK : ovl_err_set(OVL_ERR_NOMEM, "cannot allocate the candidates"));
  for (int k = 0; k < nm && !rc; k++) {
    rc = run_open(f, &cand[k], &used, &runs[k]);
    if (!rc) idx[nopen++] = k;
  }
  double tmed1[TUNE_MAXCAND], tmin1[TUNE_MAXCAND], tmed[TUNE_MAXCAND], tmin[TUNE_MAXCAND];
  ovl_bench_reporter prog;
  ovl_bench_reporter_start(&prog, "tune", warmup + iters + (exhaustive ? warmup + rounds : 0), !quiet && !json);
  /* the tuner: its set in interleaved rounds; the fastest median is the choice */
  if (!rc) rc = interleave(runs, idx, nt, iters, warmup, tmin1, tmed1, &prog, "tuner");
  int tbest = 0, best = 0, ai = -1;
  for (int k = 1; k < nt && !rc; k++)
    if (tmed1[k] < tmed1[tbest]) tbest = k;
  /* the sweep: every configuration in fresh rounds */
  if (!rc && exhaustive) rc = interleave(runs, idx, nc, rounds, warmup, tmin, tmed, &prog, "sweep");
  for (int k = 0; k < nopen; k++) run_close(&runs[k]);
  free(runs);
  if (rc) return cli_fail("tune", rc);
  if (!exhaustive)
    for (int k = 0; k < nt; k++) tmin[k] = tmin1[k], tmed[k] = tmed1[k];
  for (int k = 1; k < nm; k++)
    if (tmed[k] < tmed[best]) best = k;
  for (int k = 0; k < nm; k++) {
    char cs[96];
    cli_cfg_str(&cand[k], cs, sizeof cs);
    if (json)
      ovl_log(OVL_LOG_QUIET,
              "{\"cmd\":\"tune\",\"family\":\"%s\",\"n\":%" PRId64 ",\"P\":%d,\"rank\":%d,\"config\":\"%s\","
              "\"predicted\":%.6e,\"tuner\":%d,\"t_median_tuner\":%.6e,\"t_min\":%.6e,\"t_median\":%.6e}\n",
              family, n, P, k + 1, cs, pred[k].total, k < nt, k < nt ? tmed1[k] : -1.0, tmin[k], tmed[k]);
    else {
      if (k == 0)
        ovl_log(OVL_LOG_QUIET, "# %4s  %-34s %12s %12s %12s %12s %8s\n", "rank", "configuration", "predicted(s)",
                "tuner_med(s)", exhaustive ? "sweep_min(s)" : "t_min(s)", exhaustive ? "sweep_med(s)" : "t_med(s)",
                "pred/med");
      char tt[32] = "           -";
      if (k < nt) snprintf(tt, sizeof tt, "%12.4e", tmed1[k]);
      ovl_log(OVL_LOG_QUIET, "  %4d  %-34s %12.4e %12s %12.4e %12.4e %8.2f\n", k + 1, cs, pred[k].total, tt, tmin[k],
              tmed[k], pred[k].total / tmed[k]);
    }
  }
  /* the choice stored is the tuner's */
  char bs[96];
  cli_cfg_str(&cand[tbest], bs, sizeof bs);
  if (!json) ovl_log(OVL_LOG_QUIET, "# choice: %s (%.4e s in the tuner's rounds)\n", bs, tmed1[tbest]);
  if (out) {
    ovl_plan st = cand[tbest];
    st.n = n;
    if (ovl_world_rank() == 0) rc = tune_store(out, f, &st, tmed1[tbest], m.name);
    rc = ovl_err_agree(MPI_COMM_WORLD, rc);
    if (rc) return cli_fail("tune", rc);
    if (!json) ovl_log(OVL_LOG_QUIET, "# stored in %s\n", out);
  }
  if (exhaustive) {
    /* what `auto` resolves to now (the tune file just written, else the model), found among the candidates */
    ovl_plan ac;
    char why[600] = "";
    rc = cli_auto(f, n, P, machine, out, &ac, why, sizeof why);
    if (rc) return cli_fail("tune", rc);
    for (int k = 0; k < nc && ai < 0; k++)
      if (cfg_equal(&cand[k], &ac)) ai = k;
    char as[96], be[96];
    cli_cfg_str(&ac, as, sizeof as);
    cli_cfg_str(&cand[best], be, sizeof be);
    double ar = ai >= 0 ? tmed[ai] / tmed[best] : -1.0;
    if (json)
      ovl_log(OVL_LOG_QUIET,
              "{\"cmd\":\"tune-sweep\",\"family\":\"%s\",\"n\":%" PRId64 ",\"P\":%d,\"configurations\":%d,"
              "\"rounds\":%d,\"best\":\"%s\",\"t_best\":%.6e,\"model_ratio\":%.4f,\"tuner\":\"%s\","
              "\"tuner_ratio\":%.4f,\"auto\":\"%s\",\"auto_from\":\"%s\",\"auto_ratio\":%.4f}\n",
              family, n, P, nc, rounds, be, tmed[best], tmed[0] / tmed[best], bs, tmed[tbest] / tmed[best], as, why,
              ar);
    else
      ovl_log(OVL_LOG_QUIET,
              "# sweep: best %s %.4e s; the model's first choice %.3fx the best; the tuner's %.3fx; auto (%s): %s "
              "%s%.3fx the best\n",
              be, tmed[best], tmed[0] / tmed[best], tmed[tbest] / tmed[best], why, as,
              ai < 0 ? "(not a candidate) " : "", ar);
  }
  return CLI_OK;
}
