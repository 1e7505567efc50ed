/* Shared pieces of the ovl command-line tool. */
#ifndef OVL_CLI_H
#define OVL_CLI_H

#include "ovl/ovl.h"

/* Exit codes of the ovl tool (the same on every rank). */
enum { CLI_OK = 0, CLI_FAILED = 1, CLI_USAGE = 2 };

/* Parse options collectively: agree on the verdict over MPI_COMM_WORLD, print
 * --help or the error on rank 0. Returns -1 to continue, else an exit code. */
int cli_parse(const char *usage, const ovl_opt *opts, int nopts, int argc, char **argv, int first, const int *help,
              unsigned char *given);

/* The spellings of older releases, accepted for one release: for every
 * option of opts[] given (given[k]) whose long name is one of the olds (or
 * whose letter is, as "-a"), print one note on rank 0's stderr naming the
 * option that replaces it (now). LOCAL. */
void cli_note_deprecated(const ovl_opt *opts, int nopts, const unsigned char *given, const char *const *olds,
                         const char *now);

/* Report an agreed error on rank 0 ("ovl <cmd>: error: ...") and return
 * CLI_FAILED. */
int cli_fail(const char *cmd, ovl_err rc);
/* The same for options that contradict each other: exit code CLI_USAGE. */
int cli_usage_fail(const char *cmd, ovl_err rc);

/* One output target of a command: path (NULL: none) and what it is. */
typedef struct cli_out {
  const char *path, *what;
} cli_out;

/* Check every output target of a command before any computation
 * (ovl_file_check_write against the ninputs inputs; NULL paths skipped):
 * rank 0 checks, every rank learns the verdict and the error is reported.
 * "PREFIX" targets are passed with their suffixes (trace: PREFIX.json and
 * PREFIX.csv). Returns -1 to continue, else the exit code (CLI_USAGE when
 * the target is an input, CLI_FAILED otherwise). COLLECTIVE over
 * MPI_COMM_WORLD. */
int cli_check_outputs(const char *cmd, const cli_out *outs, int nouts, const char *const *inputs, int ninputs);

/* Print the record *r as one line of JSON on stdout of rank 0 and destroy
 * it (NULL-safe; every rank frees its copy). Returns rank 0's write error
 * (OVL_OK elsewhere). LOCAL. */
ovl_err cli_emit(ovl_record **r);

/* "<a><b>" into buf (NULL when a is NULL); returns buf or NULL. LOCAL. */
const char *cli_join(char *buf, size_t n, const char *a, const char *b);

/* A one-line description of the MPI library in use. */
const char *cli_mpi_library(void);

#endif
