/* ovl tune: the library's tuner (ovl_tune, ovl/plan.h) on these ranks. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char *const k_families[] = {"gemm", "ssc", NULL};

/* One JSON record (rank 0 prints; every rank frees). */
static void emit(ovl_record *r) {
  if (ovl_world_rank() == 0) ovl_record_print(r, stdout);
  ovl_record_destroy(&r);
}

static void print_rows(const ovl_tune_params *p, const ovl_tune_result *r, int P, int json) {
  const char *family = ovl_family_name(p->family);
  for (int k = 0; k < r->timed; k++) {
    const ovl_tune_row *w = &r->rows[k];
    char cs[96];
    ovl_plan_short(&w->plan, cs, sizeof cs);
    if (json) {
      ovl_record *o = NULL;
      if (ovl_record_create("tune-candidate", &o) != OVL_OK) return;
      ovl_record_set_str(o, "family", family), ovl_record_set_int(o, "n", p->n), ovl_record_set_int(o, "P", P);
      ovl_record_set_int(o, "rank", k + 1), ovl_record_set_str(o, "config", cs);
      ovl_record_set_num(o, "predicted", w->predicted), ovl_record_set_bool(o, "tuner", w->tuned);
      ovl_record_set_num(o, "t_median_tuner", w->t_median_tuner); /* null when the tuner did not time it */
      ovl_record_set_num(o, "t_min", w->t_min), ovl_record_set_num(o, "t_median", w->t_median);
      emit(o);
      continue;
    }
    if (k == 0)
      ovl_log(OVL_LOG_QUIET, "# %4s  %-34s %12s %12s %12s %12s %8s\n", "rank", "configuration", "predicted(s)",
              "tuner_med(s)", p->exhaustive ? "sweep_min(s)" : "t_min(s)", p->exhaustive ? "sweep_med(s)" : "t_med(s)",
              "pred/med");
    char tt[32] = "           -";
    if (w->tuned) snprintf(tt, sizeof tt, "%12.4e", w->t_median_tuner);
    ovl_log(OVL_LOG_QUIET, "  %4d  %-34s %12.4e %12s %12.4e %12.4e %8.2f\n", k + 1, cs, w->predicted, tt, w->t_min,
            w->t_median, w->predicted / w->t_median);
  }
}

static void print_sweep(const ovl_tune_params *p, const ovl_tune_result *r, int P, int json) {
  const ovl_tune_row *b = &r->rows[r->best], *c = &r->rows[r->choice];
  char as[96], be[96], bs[96];
  ovl_plan_short(&r->auto_plan, as, sizeof as);
  ovl_plan_short(&b->plan, be, sizeof be);
  ovl_plan_short(&c->plan, bs, sizeof bs);
  double ar = r->auto_row >= 0 ? r->rows[r->auto_row].t_median / b->t_median : NAN;
  if (json) {
    ovl_record *o = NULL;
    if (ovl_record_create("tune-sweep", &o) != OVL_OK) return;
    ovl_record_set_str(o, "family", ovl_family_name(p->family)), ovl_record_set_int(o, "n", p->n);
    ovl_record_set_int(o, "P", P), ovl_record_set_int(o, "configurations", r->nrows);
    ovl_record_set_int(o, "rounds", p->sweep_rounds), ovl_record_set_str(o, "best", be);
    ovl_record_set_num(o, "t_best", b->t_median);
    ovl_record_set_num(o, "model_ratio", r->rows[0].t_median / b->t_median), ovl_record_set_str(o, "tuner", bs);
    ovl_record_set_num(o, "tuner_ratio", c->t_median / b->t_median), ovl_record_set_str(o, "auto", as);
    ovl_record_set_str(o, "auto_from", r->auto_why);
    ovl_record_set_num(o, "auto_ratio", ar); /* null: auto's choice is not a candidate */
    emit(o);
    return;
  }
  ovl_log(OVL_LOG_QUIET,
          "# sweep: best %s %.4e s; the model's first choice %.3fx the best; the tuner's %.3fx; auto (%s): %s "
          "%s%.3fx the best\n",
          be, b->t_median, r->rows[0].t_median / b->t_median, c->t_median / b->t_median, r->auto_why, as,
          r->auto_row < 0 ? "(not a candidate) " : "", ar);
}

int cmd_tune(int argc, char **argv) {
  int help = 0, json = 0, quiet = 0;
  const char *family = "ssc";
  ovl_tune_params p = ovl_tune_default(OVL_FAMILY_SSC, 1024);
  ovl_opt opts[] = {
      {"kernel", 0, OVL_OPT_CHOICE, &family, "K", "kernel family: gemm (C = A B) or ssc (SymmSquareCube)", k_families,
       0, -1},
      {"size", 'n', OVL_OPT_I64, &p.n, "N", "matrix size", NULL, 1, (int64_t)1 << 20},
      {"machine", 0, OVL_OPT_STRING, &p.src.machine, "FILE", "machine file (default: $OVL_MACHINE, else built-in)",
       NULL, 0, -1},
      {"top", 0, OVL_OPT_INT, &p.top, "K", "time the K best configurations by the model", NULL, 1, 128},
      {"band", 0, OVL_OPT_DOUBLE, &p.band, "F",
       "also time every configuration predicted within (1 + F) x the best prediction (the model cannot tell them "
       "apart)",
       NULL, 0, -1},
      {"exhaustive", 0, OVL_OPT_FLAG, &p.exhaustive, NULL,
       "after choosing, time every configuration in interleaved rounds and judge the choice against the best", NULL, 0,
       -1},
      {"iterations", 'i', OVL_OPT_INT, &p.rounds, "I", "timed rounds of the tuner (each times its set once)", NULL, 1,
       1000},
      {"rounds", 'r', OVL_OPT_INT, &p.sweep_rounds, "R",
       "timed rounds of the exhaustive sweep (each times every configuration)", NULL, 1, 1000},
      {"warmup", 'x', OVL_OPT_INT, &p.warmup, "X", "untimed warm-up rounds before each timing", NULL, 0, 100},
      {"output", 'o', OVL_OPT_STRING, &p.src.tune_file, "FILE",
       "tune file to store the choice in (default: $OVL_TUNE_FILE)", NULL, 0, -1},
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
  ovl_family_parse(family, &p.family);
  const char *env = getenv("OVL_TUNE_FILE");
  if (!p.src.tune_file && env && *env) p.src.tune_file = env;
  {
    const char *inputs[] = {p.src.machine};
    const cli_out outs[] = {{p.src.tune_file, "tune file"}};
    int orc = cli_check_outputs("tune", outs, 1, inputs, 1);
    if (orc >= 0) return orc;
  }
  int P = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  ovl_bench_reporter rep;
  ovl_bench_reporter_start(&rep, "tune", 0, !quiet && !json);
  p.progress = ovl_bench_reporter_fn, p.progress_ctx = &rep;
  if (!json)
    ovl_log(OVL_LOG_INFO,
            "# ovl tune: %s n=%" PRId64 " on %d ranks; MPI: %s\n"
            "# time = MAX over ranks, median over rounds, configurations interleaved in each round; rank = position "
            "in the model's order\n",
            family, p.n, P, cli_mpi_library());
  ovl_tune_result r;
  ovl_err rc = ovl_tune(MPI_COMM_WORLD, &p, &r);
  if (rc) return cli_fail("tune", rc);
  if (!json)
    ovl_log(OVL_LOG_INFO,
            "# %d configurations; machine %s\n# tuner: the top %d and those predicted within %.0f%% of the best (%d), "
            "%d rounds (+%d warm-up)%s\n",
            r.nrows, r.machine, p.top, 100 * p.band, r.ntuned, p.rounds, p.warmup,
            p.exhaustive ? "; then every configuration" : "");
  if (!json && p.exhaustive)
    ovl_log(OVL_LOG_INFO, "# exhaustive sweep: all %d, %d rounds (+%d warm-up)\n", r.nrows, p.sweep_rounds, p.warmup);
  print_rows(&p, &r, P, json);
  char bs[96];
  ovl_plan_short(&r.rows[r.choice].plan, bs, sizeof bs);
  if (!json)
    ovl_log(OVL_LOG_QUIET, "# choice: %s (%.4e s in the tuner's rounds)\n", bs, r.rows[r.choice].t_median_tuner);
  if (!json && r.stored[0]) ovl_log(OVL_LOG_QUIET, "# stored in %s\n", r.stored);
  if (p.exhaustive) print_sweep(&p, &r, P, json);
  ovl_tune_result_free(&r);
  return CLI_OK;
}
