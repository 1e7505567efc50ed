/* ovl: command-line front end. `ovl <command> [options]`. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"

static void usage(FILE *out) {
  fprintf(out, "usage: ovl <command> [options]      (run under mpiexec/srun; `ovl <command> --help` for options)\n"
               "\n"
               "commands:\n"
               "  gemm      distributed C = alpha*A*B + beta*C (SUMMA), with verification and timings\n"
               "  purify    density matrix of a Fock matrix by purification (SymmSquareCube), with --check\n"
               "  bench     micro-benchmarks (`ovl bench --help`)\n"
               "  model     predicted time of a kernel from the cost models, and sweeps over its parameters\n"
               "  tune      rank configurations by the model, time the best few, store the choice for `auto`\n"
               "  version   print the ovl version and the MPI library\n"
               "  help      this text\n");
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rc = CLI_OK;
  const char *cmd = argc > 1 ? argv[1] : "";
  if (cmd[0] == '\0') { /* no command: the usage is an error */
    if (ovl_world_rank() == 0) {
      fprintf(stderr, "ovl: error: missing command\n\n");
      usage(stderr);
    }
    rc = CLI_USAGE;
  } else if (strcmp(cmd, "gemm") == 0) {
    rc = cmd_gemm(argc, argv);
  } else if (strcmp(cmd, "purify") == 0) {
    rc = cmd_purify(argc, argv);
  } else if (strcmp(cmd, "bench") == 0) {
    rc = cmd_bench(argc, argv);
  } else if (strcmp(cmd, "model") == 0) {
    rc = cmd_model(argc, argv);
  } else if (strcmp(cmd, "tune") == 0) {
    rc = cmd_tune(argc, argv);
  } else if (strcmp(cmd, "version") == 0 || strcmp(cmd, "--version") == 0) {
    if (ovl_world_rank() == 0) printf("ovl %s (%s)\n", ovl_version(), cli_mpi_library());
  } else if (strcmp(cmd, "help") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
    if (ovl_world_rank() == 0) usage(stdout);
  } else {
    if (ovl_world_rank() == 0) {
      ovl_err_set(OVL_ERR_ARG, "unknown command '%s'", cmd); /* the message escapes the bytes of cmd */
      fprintf(stderr, "ovl: error: %s\n\n", ovl_errmsg());
      usage(stderr);
    }
    rc = CLI_USAGE;
  }
  MPI_Finalize();
  return rc;
}
