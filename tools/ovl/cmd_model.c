/* ovl model: predicted time of a kernel configuration, split into latency,
 * bandwidth and computation, and sweeps over G, N_DUP, c, PPN, P or the
 * algorithm. Runs on rank 0 only (the models are pure functions). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const char *const k_sweeps[] = {"none", "G", "ndup", "c", "ppn", "P", "algo", NULL};

int cmd_model(int argc, char **argv) {
  int help = 0, json = 0, P = 8, G = 1, repl = 0, ppn = 1, maxv = 16;
  int lookahead = ovl_knob_default_int(OVL_KNOB_LOOKAHEAD, OVL_FAMILY_GEMM);
  int ndup = ovl_knob_default_int(OVL_KNOB_NDUP, OVL_FAMILY_GEMM);
  int64_t n = 4096, b = ovl_knob_default(OVL_KNOB_BLOCK, OVL_FAMILY_GEMM), outer = 0;
  const char *kernel = "alg5", *machine = NULL, *sweep = "none";
  /* every algorithm of every family (the one table), without "auto" */
  const char *kernels[OVL_ALGO_N + 1] = {NULL};
  for (int a = 0; a < OVL_ALGO_N; a++) kernels[a] = ovl_algo_name((ovl_algo)a);
  ovl_opt opts[] = {
      {"algo", 'a', OVL_OPT_CHOICE, &kernel, "NAME", "kernel algorithm", kernels, 0, -1},
      {"kernel", 0, OVL_OPT_CHOICE, &kernel, "NAME", NULL, kernels, 0, -1}, /* deprecated spelling */
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
  enum { NOPTS = sizeof opts / sizeof opts[0] };
  const int nopts = NOPTS;
  unsigned char given[NOPTS];
  int prc = cli_parse("usage: ovl model [options]\n\n"
                      "Predicts the time of one kernel run from the cost models (docs/design/models.md): latency\n"
                      "(alpha terms), bandwidth (beta or measured f_BW terms), computation (gamma) and the total\n"
                      "with the overlaps the algorithm has. --sweep prints a table over G, N_DUP, c, PPN, P or the\n"
                      "algorithm.",
                      opts, nopts, argc, argv, 2, &help, given);
  if (prc >= 0) return prc;
  cli_note_deprecated(opts, nopts, given, (const char *const[]){"--kernel", NULL}, "--algo");
  ovl_algo k;
  ovl_algo_parse(kernel, &k);
  ovl_plan c = ovl_plan_default(k, n, P);
  c.b = b, c.outer = outer, c.G = G, c.ndup = ndup, c.ppn = ppn, c.lookahead = lookahead;
  /* the options that do not apply to the kernel or the sweep are refused (one rule: ovl_plan_option_applies) */
  ovl_err rc = OVL_OK;
  for (int o = 0; o < nopts && !rc; o++) {
    if (!given[o] || !opts[o].lname) continue;
    const char *name = opts[o].dest == &b ? "--block" : opts[o].dest == &G ? "--groups" : NULL;
    char buf[64];
    snprintf(buf, sizeof buf, "--%s", opts[o].lname);
    rc = ovl_plan_option_applies(name ? name : buf, k);
    if (!rc && opts[o].dest == &maxv && strcmp(sweep, "ndup") != 0 && strcmp(sweep, "ppn") != 0)
      rc = ovl_err_set(OVL_ERR_ARG, "--max applies to --sweep ndup and ppn only, not %s: refused rather than ignored",
                       sweep);
    /* a sweep sets the parameter it varies: a value given for it would be ignored */
    const void *varied = !strcmp(sweep, "G")      ? (const void *)&G
                         : !strcmp(sweep, "ndup") ? (const void *)&ndup
                         : !strcmp(sweep, "c")    ? (const void *)&repl
                         : !strcmp(sweep, "ppn")  ? (const void *)&ppn
                                                  : NULL;
    if (!rc && varied && opts[o].dest == varied)
      rc =
          ovl_err_set(OVL_ERR_ARG, "--%s is what --sweep %s varies: refused rather than ignored", opts[o].lname, sweep);
    /* the sweeps of one algorithm's parameter run that algorithm: another one named would be replaced */
    if (!rc && opts[o].dest == &kernel && !strcmp(sweep, "G") && k != OVL_ALGO_HSUMMA)
      rc = ovl_err_set(OVL_ERR_ARG,
                       "--sweep G varies HSUMMA's groups: --algo %s has none (refused rather than "
                       "replaced by hsumma)",
                       kernel);
    if (!rc && opts[o].dest == &kernel && !strcmp(sweep, "c") && k != OVL_ALGO_25D && k != OVL_ALGO_SSC6)
      rc = ovl_err_set(OVL_ERR_ARG,
                       "--sweep c varies the replication of 2.5d and alg6: --algo %s has none (refused "
                       "rather than replaced)",
                       kernel);
  }
  if (!rc && repl > 0) { /* c given: the grid s x s x c on P ranks, c | s */
    c.c = repl, c.s = (int)lround(sqrt((double)P / repl));
    if (c.s < 1 || (int64_t)c.s * c.s * repl != P || c.s % repl)
      rc = ovl_err_set(OVL_ERR_ARG, "--repl %d: %d ranks are no 2.5D grid s x s x %d with %d | s", repl, P, repl, repl);
  }
  ovl_machine m;
  char src[512];
  if (!rc) rc = ovl_plan_machine(machine, &m, src, sizeof src);
  /* one configuration (or its N_DUP sweep) that the model cannot place is a usage error, before any output */
  ovl_model_cost cost;
  if (!rc && (!strcmp(sweep, "none") || !strcmp(sweep, "ndup")) && ovl_model_predict(&m, &c, &cost) != OVL_OK) {
    char why[512];
    snprintf(why, sizeof why, "%s", ovl_errmsg());
    rc = ovl_err_set(OVL_ERR_ARG, "no such configuration: %s", why);
  }
  if ((rc = ovl_err_agree(MPI_COMM_WORLD, rc)) != OVL_OK)
    return rc == OVL_ERR_ARG ? cli_usage_fail("model", rc) : cli_fail("model", rc);
  if (ovl_world_rank() != 0) return CLI_OK;
  rc = ovl_model_print(stdout, &m, src, &c, sweep, maxv, json);
  return rc ? cli_fail("model", rc) : CLI_OK;
}
