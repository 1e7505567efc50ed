/* ovl bench <name>: micro-benchmarks. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "commands.h"

static void bench_usage(FILE *out) {
  fprintf(out, "usage: ovl bench <name> [options]   (`ovl bench <name> --help` for options)\n\n"
               "benchmarks:\n"
               "  progress   does a nonblocking broadcast advance while ranks compute? (with/without progress calls)\n"
               "  pingpong   point-to-point latency and bandwidth, K pairs at once, Hockney fit (alpha, beta, N_half)\n"
               "  coll       collective bandwidth vs size: blocking, N_DUP lanes, multiple PPN (Huang-Chow Fig. 5)\n"
               "  nbc        overlap of a nonblocking collective with computation: OSU, IMB and NBC-Eff measures\n"
               "  ssc        SymmSquareCube (D -> D^2, D^3) time and GFLOP/s per algorithm and N_DUP, checked\n"
               "  machine    measure the cost models' machine parameters and write a machine file (-o FILE)\n");
}

int cmd_bench(int argc, char **argv) {
  const char *name = argc > 2 ? argv[2] : "";
  if (strcmp(name, "progress") == 0) return cmd_bench_progress(argc, argv);
  if (strcmp(name, "pingpong") == 0) return cmd_bench_pingpong(argc, argv);
  if (strcmp(name, "coll") == 0) return cmd_bench_coll(argc, argv);
  if (strcmp(name, "nbc") == 0) return cmd_bench_nbc(argc, argv);
  if (strcmp(name, "ssc") == 0) return cmd_bench_ssc(argc, argv);
  if (strcmp(name, "machine") == 0) return cmd_bench_machine(argc, argv);
  if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0) {
    if (ovl_world_rank() == 0) bench_usage(stdout);
    return CLI_OK;
  }
  if (ovl_world_rank() == 0) {
    ovl_err_set(OVL_ERR_ARG, "%s benchmark '%s'", *name ? "unknown" : "missing", name); /* escapes name */
    fprintf(stderr, "ovl bench: error: %s\n\n", ovl_errmsg());
    bench_usage(stderr);
  }
  return CLI_USAGE;
}
