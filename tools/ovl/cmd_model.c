/* ovl model: predicted time of a kernel configuration, split into latency,
 * bandwidth and computation, and sweeps over G, N_DUP, c, PPN, P or the
 * algorithm; the block-sparse product (bsumma, bs2.5d) on a shape made from
 * --fill and --sparse-block. Runs on rank 0 only (the models are pure
 * functions). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const char *const k_sweeps[] = {"none", "G", "ndup", "c", "ppn", "P", "algo", NULL};

/* The knobs a prediction takes: their options are the knob table's rows
 * (ovl_plan_knob_opts), with the family's defaults of the algorithm named. */
#define MODEL_KNOBS                                                                                                    \
  (1u << OVL_KNOB_ALGO | 1u << OVL_KNOB_BLOCK | 1u << OVL_KNOB_GROUPS | 1u << OVL_KNOB_OUTER | 1u << OVL_KNOB_REPL |   \
   1u << OVL_KNOB_NDUP | 1u << OVL_KNOB_LOOKAHEAD)

/* An alias of option o (a spelling of older releases: parsed, not listed) writing to dest. */
static ovl_opt alias_of(ovl_opt o, const char *name, void *dest) {
  o.lname = name, o.sname = 0, o.help = NULL, o.dest = dest;
  return o;
}

int cmd_model(int argc, char **argv) {
  int help = 0, json = 0, P = 8, ppn = 1, maxv = 16, sblock = OVL_PURIFY_SPARSE_BLOCK;
  int64_t n = 4096;
  double fill = NAN; /* not given: no default (the dense kernels take none) */
  char sbhelp[160];
  snprintf(sbhelp, sizeof sbhelp,
           "bsumma, bs2.5d: block size, n / B blocks per dimension (default: %d, ovl purify --sparse-block's)",
           OVL_PURIFY_SPARSE_BLOCK);
  const char *machine = NULL, *sweep = "none";
  ovl_plan_optvals pv;
  memset(&pv, 0, sizeof pv);
  pv.algo = "alg5";
  /* every algorithm of every family (the one table), without "auto" */
  const char *kernels[OVL_ALGO_N + 1] = {NULL};
  for (int a = 0; a < OVL_ALGO_N; a++) kernels[a] = ovl_algo_name((ovl_algo)a);
  const ovl_opt own[] = {
      {"size", 'n', OVL_OPT_I64, &n, "N", "matrix size", NULL, 1, (int64_t)1 << 24},
      {"ranks", 0, OVL_OPT_INT, &P, "P", "ranks taking part (nodes x PPN)", NULL, 1, 1 << 24},
      {"machine", 0, OVL_OPT_STRING, &machine, "FILE",
       "machine file from `ovl bench machine` (default: $OVL_MACHINE, else Huang-Chow's Stampede2)", NULL, 0, -1},
      {"ppn", 0, OVL_OPT_INT, &ppn, "K", "ranks per node sharing a link", NULL, 1, 1024},
      {"sweep", 0, OVL_OPT_CHOICE, &sweep, "WHAT", "table over a parameter (P: powers of 2 or cubes up to P)", k_sweeps,
       0, -1},
      {"max", 0, OVL_OPT_INT, &maxv, "V", "largest N_DUP or PPN of a sweep", NULL, 1, OVL_LANES_MAX},
      {"fill", 0, OVL_OPT_DOUBLE, &fill, "F",
       "bsumma, bs2.5d (the block-sparse product C = A B): the fraction of blocks A and B store, in (0, 1], "
       "the same in every block row and column (required by them)",
       NULL, 0, -1},
      {"sparse-block", 0, OVL_OPT_INT, &sblock, "B", sbhelp, NULL, 1, 1 << 20},
      {"json", 'j', OVL_OPT_FLAG, &json, NULL, "one JSON object per configuration", NULL, 0, -1},
      {"help", 'h', OVL_OPT_FLAG, &help, NULL, "show this help", NULL, 0, -1},
  };
  enum { NOWN = sizeof own / sizeof own[0], CAP = OVL_KNOB_N + 2 + NOWN };
  ovl_opt opts[CAP];
  int nopts = ovl_plan_knob_opts(OVL_FAMILY_GEMM, MODEL_KNOBS, &pv, opts, OVL_KNOB_N);
  if (nopts < 0) return cli_fail("model", ovl_err_set(OVL_ERR_ARG, "the knob table offers no options to the model"));
  for (int o = 0, nk = nopts; o < nk; o++) {
    if (opts[o].dest == &pv.algo) { /* any family's algorithm; --kernel, the old spelling (a note on stderr) */
      opts[o].choices = kernels, opts[o].help = "kernel algorithm, of any family";
      opts[nopts++] = alias_of(opts[o], "kernel", &pv.kernel_old);
    }
    if (opts[o].dest == &pv.b) opts[nopts++] = alias_of(opts[o], "panel", &pv.b);
  }
  for (int o = 0; o < NOWN; o++) opts[nopts++] = own[o];
  unsigned char given[CAP];
  int prc = cli_parse("usage: ovl model [options]\n\n"
                      "Predicts the time of one kernel run from the cost models (docs/design/models.md): latency\n"
                      "(alpha terms), bandwidth (beta or measured f_BW terms), computation (gamma) and the total\n"
                      "with the overlaps the algorithm has. --sweep prints a table over G, N_DUP, c, PPN, P or the\n"
                      "algorithm. A knob not given takes the default of the algorithm's family. --algo bsumma or\n"
                      "bs2.5d predicts the filtered block-sparse product on --fill F of the n / B blocks of --sparse-\n"
                      "block B (block products: (n / B)^3 F^2, none of them skipped by its norm).",
                      opts, nopts, argc, argv, 2, &help, given);
  if (prc >= 0) return prc;
  ovl_algo k = OVL_ALGO_AUTO;
  ovl_algo_parse(pv.kernel_old ? pv.kernel_old : pv.algo, &k);
  ovl_plan c = ovl_plan_default(k, n, P);
  /* the knobs given, and the refusal of those that do not apply to the algorithm (ovl_plan_option_applies) */
  ovl_err rc = ovl_plan_opts_apply(ovl_algo_family(k), &pv, &c);
  c.ppn = ppn;
  if (!rc && ovl_knob_is_open(&c, OVL_KNOB_NDUP))
    rc = ovl_err_set(OVL_ERR_ARG, "--ndup auto: the model predicts the configuration given; auto is the planner's "
                                  "(ovl gemm, ovl purify)");
  for (int o = 0; o < nopts && !rc; o++) {
    if (!given[o] || !opts[o].lname) continue;
    if (opts[o].dest == &maxv && strcmp(sweep, "ndup") != 0 && strcmp(sweep, "ppn") != 0)
      rc = ovl_err_set(OVL_ERR_ARG, "--max applies to --sweep ndup and ppn only, not %s: refused rather than ignored",
                       sweep);
    /* a sweep sets the parameter it varies: a value given for it would be ignored */
    const void *varied = !strcmp(sweep, "G")      ? (const void *)&pv.groups
                         : !strcmp(sweep, "ndup") ? (const void *)&pv.ndup
                         : !strcmp(sweep, "c")    ? (const void *)&pv.repl
                         : !strcmp(sweep, "ppn")  ? (const void *)&ppn
                                                  : NULL;
    if (!rc && varied && opts[o].dest == varied)
      rc =
          ovl_err_set(OVL_ERR_ARG, "--%s is what --sweep %s varies: refused rather than ignored", opts[o].lname, sweep);
    /* the sweeps of one algorithm's parameter run that algorithm: another one named would be replaced */
    int named = opts[o].dest == &pv.algo || opts[o].dest == &pv.kernel_old;
    if (!rc && named && !strcmp(sweep, "G") && k != OVL_ALGO_HSUMMA)
      rc = ovl_err_set(OVL_ERR_ARG,
                       "--sweep G varies HSUMMA's groups: --algo %s has none (refused rather than "
                       "replaced by hsumma)",
                       ovl_algo_name(k));
    if (!rc && named && !strcmp(sweep, "c") && k != OVL_ALGO_25D && k != OVL_ALGO_SSC6 && k != OVL_ALGO_BS25D)
      rc = ovl_err_set(OVL_ERR_ARG,
                       "--sweep c varies the replication of 2.5d, alg6 and bs2.5d: --algo %s has none (refused "
                       "rather than replaced)",
                       ovl_algo_name(k));
  }
  int repl = pv.repl, bs = ovl_algo_family(k) == OVL_FAMILY_BSMUL;
  if (!rc && repl > 0) { /* c given: the grid s x s x c on P ranks, c | s (bs2.5d: c <= s) */
    c.c = repl, c.s = (int)lround(sqrt((double)P / repl));
    if (!bs && (c.s < 1 || (int64_t)c.s * c.s * repl != P || c.s % repl))
      rc = ovl_err_set(OVL_ERR_ARG, "--repl %d: %d ranks are no 2.5D grid s x s x %d with %d | s", repl, P, repl, repl);
    if (bs && (c.s < 1 || (int64_t)c.s * c.s * repl != P || repl > c.s))
      rc = ovl_err_set(OVL_ERR_ARG, "--repl %d: %d ranks are no grid s x s x %d with %d <= s", repl, P, repl, repl);
  }
  /* the block-sparse product: its shape from --fill and --sparse-block; the dense kernels take neither */
  int fill_given = 0, sb_given = 0;
  for (int o = 0; o < nopts; o++)
    if (given[o] && opts[o].dest == &fill) fill_given = 1;
    else if (given[o] && opts[o].dest == &sblock) sb_given = 1;
  ovl_bsmul_shape shape;
  memset(&shape, 0, sizeof shape);
  if (!rc && !bs && (fill_given || sb_given))
    rc = ovl_err_set(OVL_ERR_ARG, "--%s applies to --algo bsumma and bs2.5d (the block-sparse product) only, not %s",
                     fill_given ? "fill" : "sparse-block", ovl_algo_name(k));
  if (!rc && bs && !fill_given)
    rc = ovl_err_set(OVL_ERR_ARG,
                     "--algo %s predicts a block-sparse product: give --fill F, the fraction of blocks "
                     "A and B store",
                     ovl_algo_name(k));
  if (!rc && bs && (int64_t)sblock > n)
    rc = ovl_err_set(OVL_ERR_ARG, "--sparse-block %d exceeds the matrix size -n %lld", sblock, (long long)n);
  if (!rc && bs) rc = ovl_bsmul_shape_estimate(n, (n + sblock - 1) / sblock, fill, &shape);
  ovl_machine m;
  char src[512];
  if (!rc) rc = ovl_plan_machine(machine, &m, src, sizeof src);
  /* one configuration (or its N_DUP sweep) that the model cannot place is a usage error, before any output */
  ovl_model_cost cost;
  if (!rc && (!strcmp(sweep, "none") || !strcmp(sweep, "ndup")) &&
      (bs ? ovl_model_bsmul(&m, &c, &shape, &cost, NULL) : ovl_model_predict(&m, &c, &cost)) != OVL_OK) {
    char why[512];
    snprintf(why, sizeof why, "%s", ovl_errmsg());
    rc = ovl_err_set(OVL_ERR_ARG, "no such configuration: %s", why);
  }
  if ((rc = ovl_err_agree(MPI_COMM_WORLD, rc)) != OVL_OK)
    return rc == OVL_ERR_ARG ? cli_usage_fail("model", rc) : cli_fail("model", rc);
  if (ovl_world_rank() != 0) return CLI_OK;
  rc = ovl_model_print_bsmul(stdout, &m, src, &c, bs ? &shape : NULL, sweep, maxv, json);
  return rc ? cli_fail("model", rc) : CLI_OK;
}
