/* ovl model: predicted time of a kernel configuration, split into latency,
 * bandwidth and computation, and sweeps over G, N_DUP, c, PPN, P or the
 * algorithm. Runs on rank 0 only (the models are pure functions). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char *const k_kernels[] = {"summa", "hsumma", "cannon", "3d",   "2.5d",
                                        "alg3",  "alg4",   "alg5",   "alg6", NULL};
static const char *const k_sweeps[] = {"none", "G", "ndup", "c", "ppn", "P", "algo", NULL};

static int is_ssc(ovl_algo k) { return k >= OVL_ALGO_SSC3; }

/* flops of one run: C = A B (2 n^3) or D -> D^2, D^3 (4 n^3) */
static double kernel_flops(ovl_algo k, int64_t n) {
  double x = (double)n;
  return (is_ssc(k) ? 4.0 : 2.0) * x * x * x;
}

static ovl_err row(const ovl_plan *c, const ovl_model_cost *r, ovl_err rc, int json, const char *mname) {
  char cfg[160];
  int P = c->P;
  snprintf(cfg, sizeof cfg, "%s P=%d", ovl_algo_name(c->algo), P);
  size_t l = strlen(cfg);
  if (c->algo == OVL_ALGO_SUMMA || c->algo == OVL_ALGO_HSUMMA)
    l += (size_t)snprintf(cfg + l, sizeof cfg - l, " b=%" PRId64, c->b);
  if (c->algo == OVL_ALGO_HSUMMA) l += (size_t)snprintf(cfg + l, sizeof cfg - l, " G=%d", c->G);
  if (c->algo == OVL_ALGO_25D || c->algo == OVL_ALGO_SSC6)
    l += (size_t)snprintf(cfg + l, sizeof cfg - l, " c=%d", c->c);
  snprintf(cfg + l, sizeof cfg - l, " ndup=%d ppn=%d%s", c->ndup, c->ppn, c->lookahead ? " lookahead" : "");
  double gf = rc == OVL_OK && r->total > 0 ? kernel_flops(c->algo, c->n) / r->total * 1e-9 : 0;
  if (json) {
    ovl_record *rec = NULL;
    char ebuf[512];
    snprintf(ebuf, sizeof ebuf, "%s", rc ? ovl_errmsg() : "");
    const char *msg = rc ? ebuf : NULL;
    ovl_err wrc = ovl_record_create("model", &rec);
    if (!wrc) wrc = ovl_record_set_str(rec, "config", cfg);
    if (!wrc) wrc = ovl_record_set_str(rec, "kernel", ovl_algo_name(c->algo));
    if (!wrc && msg) wrc = ovl_record_set_str(rec, "error", msg);
    if (!wrc && !msg) {
      wrc = ovl_record_set_int(rec, "n", c->n);
      if (!wrc) wrc = ovl_record_set_int(rec, "P", P);
      if (!wrc) wrc = ovl_record_set_int(rec, "b", c->b);
      if (!wrc) wrc = ovl_record_set_int(rec, "G", c->G);
      if (!wrc) wrc = ovl_record_set_int(rec, "c", c->c);
      if (!wrc) wrc = ovl_record_set_int(rec, "ndup", c->ndup);
      if (!wrc) wrc = ovl_record_set_int(rec, "ppn", c->ppn);
      if (!wrc) wrc = ovl_record_set_int(rec, "lookahead", c->lookahead);
      if (!wrc) wrc = ovl_record_set_num(rec, "latency", r->latency);
      if (!wrc) wrc = ovl_record_set_num(rec, "bandwidth", r->bandwidth);
      if (!wrc) wrc = ovl_record_set_num(rec, "compute", r->compute);
      if (!wrc) wrc = ovl_record_set_num(rec, "total", r->total);
      if (!wrc) wrc = ovl_record_set_num(rec, "gflops", r->total > 0 ? gf : NAN);
      if (!wrc) wrc = ovl_record_set_str(rec, "machine", mname);
    }
    /* rank 0 alone runs the models: print here */
    if (!wrc) wrc = ovl_record_print(rec, stdout);
    ovl_record_destroy(&rec);
    return wrc;
  }
  if (rc) {
    printf("  %-44s %s\n", cfg, ovl_errmsg());
    return OVL_OK;
  }
  printf("  %-44s %11.4e %11.4e %11.4e %11.4e %10.2f\n", cfg, r->latency, r->bandwidth, r->compute, r->total, gf);
  return OVL_OK;
}

static void predict_row(const ovl_machine *m, ovl_plan c, int json) {
  ovl_model_cost r;
  memset(&r, 0, sizeof r);
  if ((c.algo == OVL_ALGO_25D || c.algo == OVL_ALGO_SSC6) && c.c == 0) ovl_grid25d_dims(c.P, &c.s, &c.c);
  ovl_err rc = ovl_model_predict(m, &c, &r);
  row(&c, &r, rc, json, m->name);
}

int cmd_model(int argc, char **argv) {
  int help = 0, json = 0, P = 8, G = 1, ndup = 1, repl = 0, ppn = 1, lookahead = 0, maxv = 16;
  int64_t n = 4096, b = 256, outer = 0;
  const char *kernel = "alg5", *machine = NULL, *sweep = "none";
  ovl_opt opts[] = {
      {"kernel", 0, OVL_OPT_CHOICE, &kernel, "K", "kernel", k_kernels, 0, -1},
      {"size", 'n', OVL_OPT_I64, &n, "N", "matrix size", NULL, 1, (int64_t)1 << 24},
      {"ranks", 0, OVL_OPT_INT, &P, "P", "ranks taking part (nodes x PPN)", NULL, 1, 1 << 24},
      {"machine", 0, OVL_OPT_STRING, &machine, "FILE",
       "machine file from `ovl bench machine` (default: $OVL_MACHINE, else Huang-Chow's Stampede2)", NULL, 0, -1},
      {"block", 'b', OVL_OPT_I64, &b, "B", "panel width (SUMMA, HSUMMA inner block)", NULL, 1, (int64_t)1 << 24},
      {"panel", 0, OVL_OPT_I64, &b, "B", NULL, NULL, 1, (int64_t)1 << 24},
      {"outer", 0, OVL_OPT_I64, &outer, "M", "HSUMMA outer block (default: b)", NULL, 0, (int64_t)1 << 24},
      {"groups", 'G', OVL_OPT_INT, &G, "G", "HSUMMA groups", NULL, 1, 1 << 24},
      {"ndup", 'd', OVL_OPT_INT, &ndup, "N", "lanes (N_DUP) per phase", NULL, 1, OVL_LANES_MAX},
      {"repl", 0, OVL_OPT_INT, &repl, "C", "2.5D replication c (default: the largest that fits)", NULL, 0, 1 << 20},
      {"ppn", 0, OVL_OPT_INT, &ppn, "K", "ranks per node sharing a link", NULL, 1, 1024},
      {"lookahead", 0, OVL_OPT_FLAG, &lookahead, NULL, "SUMMA/HSUMMA broadcasts overlap the dgemm", NULL, 0, -1},
      {"sweep", 0, OVL_OPT_CHOICE, &sweep, "WHAT", "table over a parameter (P: powers of 2 or cubes up to P)", k_sweeps,
       0, -1},
      {"max", 0, OVL_OPT_INT, &maxv, "V", "largest N_DUP or PPN of a sweep", NULL, 1, OVL_LANES_MAX},
      {"json", 'j', OVL_OPT_FLAG, &json, NULL, "one JSON object per configuration", NULL, 0, -1},
      {"help", 'h', OVL_OPT_FLAG, &help, NULL, "show this help", NULL, 0, -1},
  };
  int prc = cli_parse("usage: ovl model [options]\n\n"
                      "Predicts the time of one kernel run from the cost models (docs/models.md): latency (alpha\n"
                      "terms), bandwidth (beta or measured f_BW terms), computation (gamma) and the total with the\n"
                      "overlaps the algorithm has. --sweep prints a table over G, N_DUP, c, PPN, P or the algorithm.",
                      opts, (int)(sizeof opts / sizeof opts[0]), argc, argv, 2, &help, NULL);
  if (prc >= 0) return prc;
  ovl_machine m;
  char src[512];
  ovl_err rc = ovl_plan_machine(machine, &m, src, sizeof src);
  if ((rc = ovl_err_agree(MPI_COMM_WORLD, rc)) != OVL_OK) return cli_fail("model", rc);
  if (ovl_world_rank() != 0) return CLI_OK;
  ovl_algo k;
  ovl_algo_parse(kernel, &k);
  ovl_plan c = ovl_plan_default(k, n, P);
  c.b = b, c.outer = outer, c.G = G, c.ndup = ndup, c.c = repl, c.ppn = ppn, c.lookahead = lookahead;
  if (!json)
    printf("# ovl model: %s n=%" PRId64 " P=%d, machine %s\n"
           "# alpha %.3e s, beta %.3e s/B (eager <= %.0f B), alpha_r %.3e s, beta_r %.3e s/B, gamma %.3e s/flop "
           "(%.1f GFLOP/s), peak %.3e B/s, %d f_BW tables\n"
           "# %-44s %11s %11s %11s %11s %10s\n",
           kernel, n, P, src, m.alpha, m.beta, m.eager, m.alpha_r, m.beta_r, m.gamma, m.gamma > 0 ? 1e-9 / m.gamma : 0,
           m.peak_bw, m.nfbw, "configuration", "latency(s)", "bandw.(s)", "compute(s)", "total(s)", "GFLOP/s");
  if (!strcmp(sweep, "none")) {
    predict_row(&m, c, json);
  } else if (!strcmp(sweep, "G")) {
    for (int g = 1; g <= P; g++) {
      int gi, gj, p, q;
      for (p = 1; (p + 1) * (p + 1) <= P; p++) {}
      while (P % p) p--;
      q = P / p;
      if (P % g || ovl_hgroups_auto_dims(p, q, g, &gi, &gj) != OVL_OK) continue;
      c.algo = OVL_ALGO_HSUMMA, c.G = g;
      predict_row(&m, c, json);
    }
  } else if (!strcmp(sweep, "ndup")) {
    for (int d = 1; d <= maxv; d++) c.ndup = d, predict_row(&m, c, json);
  } else if (!strcmp(sweep, "c")) {
    for (int cc = 1; cc <= P; cc++) {
      int s = (int)lround(sqrt((double)P / cc));
      if (s * s * cc != P || s % cc) continue;
      c.s = s, c.c = cc;
      if (k != OVL_ALGO_25D && k != OVL_ALGO_SSC6) c.algo = is_ssc(k) ? OVL_ALGO_SSC6 : OVL_ALGO_25D;
      predict_row(&m, c, json);
    }
  } else if (!strcmp(sweep, "ppn")) { /* P nodes, ppn ranks each */
    for (int k2 = 1; k2 <= maxv; k2 *= 2) {
      c.ppn = k2, c.P = P * k2, c.s = c.c = 0;
      predict_row(&m, c, json);
    }
  } else if (!strcmp(sweep, "P")) {
    int cube = k == OVL_ALGO_3D || (is_ssc(k) && k != OVL_ALGO_SSC6);
    for (int x = 1; x <= P; x++) {
      int r = cube ? x * x * x : 1 << (x - 1);
      if (r > P) break;
      c.P = r, c.s = c.c = 0;
      predict_row(&m, c, json);
    }
  } else { /* algo */
    for (int kk = 0; kk < OVL_ALGO_N; kk++) {
      c.algo = (ovl_algo)kk, c.s = c.c = 0;
      if (kk == OVL_ALGO_HSUMMA) c.G = ovl_hsumma_gopt(m.alpha_r, m.beta_r, n, b, P);
      predict_row(&m, c, json);
    }
  }
  return CLI_OK;
}
