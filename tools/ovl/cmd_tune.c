/* ovl tune: the library's tuner (ovl_tune, ovl/bench.h) on these ranks. */
#include <inttypes.h>
#include <stdlib.h>

#include "cli.h"

int cmd_tune(int argc, char **argv) {
  int help = 0, json = 0, quiet = 0;
  ovl_tune_params p = ovl_tune_default(OVL_FAMILY_SSC, 1024);
  const char *family = ovl_family_name(p.family);
  ovl_opt opts[] = {
      {"family", 0, OVL_OPT_CHOICE, &family, "F",
       "kernel family: gemm (C = A B) or ssc (SymmSquareCube); sq is refused (nothing to tune but N_DUP, whose default "
       "auto takes), and so is bsmul (the model alone plans the block-sparse product, from its sparsity)",
       ovl_family_names, 0, -1},
      {"kernel", 0, OVL_OPT_CHOICE, &family, "F", NULL, ovl_family_names, 0, -1}, /* deprecated spelling */
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
  enum { NOPTS = sizeof opts / sizeof opts[0] };
  unsigned char given[NOPTS];
  int prc =
      cli_parse("usage: mpiexec -n P ovl tune --family gemm|ssc -n N [options]\n\n"
                "Ranks the configurations of a kernel (algorithm, N_DUP, G, c, panel width, lookahead) by the\n"
                "cost model, times the K best (and those predicted within the band) on these ranks in\n"
                "interleaved rounds (time = MAX over ranks, median over rounds) and stores the fastest in the\n"
                "tune file, where `ovl gemm --algo auto` and `ovl purify --algo auto` find it. --exhaustive then\n"
                "times every configuration in fresh interleaved rounds and reports how far the model's, the\n"
                "tuner's and auto's choices are from the best one.",
                opts, NOPTS, argc, argv, 2, &help, given);
  if (prc >= 0) return prc;
  cli_note_deprecated(opts, NOPTS, given, (const char *const[]){"--kernel", NULL}, "--family");
  ovl_family_parse(family, &p.family);
  const char *env = getenv("OVL_TUNE_FILE");
  if (!p.src.tune_file && env && *env) p.src.tune_file = env;
  ovl_err rc = ovl_tune_check(&p);
  for (int o = 0; o < NOPTS && !rc; o++) /* the sweep's rounds need the sweep */
    if (given[o] && opts[o].dest == &p.sweep_rounds && !p.exhaustive)
      rc = ovl_err_set(OVL_ERR_ARG, "--rounds applies to --exhaustive only (the rounds of its sweep; the tuner's own "
                                    "rounds are --iterations): refused rather than ignored");
  rc = ovl_err_agree(MPI_COMM_WORLD, rc); /* before the first line of output */
  if (rc != OVL_OK) return cli_usage_fail("tune", rc);
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
  rc = ovl_tune(MPI_COMM_WORLD, &p, &r);
  if (rc) return cli_fail("tune", rc);
  if (ovl_world_rank() == 0) rc = ovl_tune_print(stdout, &p, &r, json);
  ovl_tune_result_free(&r);
  return rc ? cli_fail("tune", rc) : CLI_OK;
}
