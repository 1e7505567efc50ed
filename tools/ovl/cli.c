/* The helpers every ovl sub-command shares: collective option parsing (with
 * $OVL_OPTIONS), agreed error reports, output checks, records. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static char g_mpi_lib[MPI_MAX_LIBRARY_VERSION_STRING];

const char *cli_mpi_library(void) {
  if (g_mpi_lib[0] == '\0' && ovl_mpi_library(g_mpi_lib, sizeof g_mpi_lib) != OVL_OK) g_mpi_lib[0] = '\0';
  return g_mpi_lib;
}

/* Errors are agreed across ranks and printed once, by rank 0. With
 * OVL_ERRORS_ALL_RANKS=1 in the environment every rank prints its own copy,
 * prefixed "[rank R] ", so that tests can check that all ranks agree. */
static int errors_all_ranks(void) {
  static int all = -1;
  if (all < 0) {
    const char *e = getenv("OVL_ERRORS_ALL_RANKS");
    all = e != NULL && e[0] == '1';
  }
  return all;
}

static int print_error_here(void) { return errors_all_ranks() || ovl_world_rank() == 0; }

static void print_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void print_error(const char *fmt, ...) {
  char msg[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (errors_all_ranks()) fprintf(stderr, "[rank %d] %s\n", ovl_world_rank(), msg);
  else fprintf(stderr, "%s\n", msg);
}

int cli_parse(const char *usage, const ovl_opt *opts, int nopts, int argc, char **argv, int first, const int *help,
              unsigned char *given) {
  /* $OVL_OPTIONS first (options of other commands skipped), then the command line, which wins */
  unsigned char *seen = given ? given : NULL;
  if (seen) memset(seen, 0, (size_t)nopts);
  ovl_err rc = ovl_opts_parse_string(opts, nopts, getenv("OVL_OPTIONS"), "OVL_OPTIONS", 1, seen);
  if (rc == OVL_OK) {
    unsigned char *line = seen ? calloc((size_t)nopts, 1) : NULL;
    rc = ovl_opts_parse(opts, nopts, argc, argv, first, line);
    for (int k = 0; line && k < nopts; k++) seen[k] |= line[k];
    free(line);
  }
  rc = ovl_err_agree(MPI_COMM_WORLD, rc);
  if (rc != OVL_OK) {
    if (print_error_here()) print_error("ovl: error: %s", ovl_errmsg());
    return CLI_USAGE;
  }
  if (*help) {
    if (ovl_world_rank() == 0) ovl_opts_help(stdout, usage, opts, nopts);
    return CLI_OK;
  }
  return -1;
}

int cli_fail(const char *cmd, ovl_err rc) {
  if (print_error_here()) print_error("ovl %s: error (%s): %s", cmd, ovl_err_name(rc), ovl_errmsg());
  return CLI_FAILED;
}

int cli_usage_fail(const char *cmd, ovl_err rc) {
  cli_fail(cmd, rc);
  return CLI_USAGE;
}

int cli_check_outputs(const char *cmd, const cli_out *outs, int nouts, const char *const *inputs, int ninputs) {
  ovl_err rc = OVL_OK;
  /* two outputs of one run on one file: the second would replace the first */
  for (int k = 0; k < nouts && rc == OVL_OK; k++)
    for (int l = 0; l < k && rc == OVL_OK; l++)
      if (ovl_file_same_target(outs[k].path, outs[l].path))
        rc = ovl_err_set(OVL_ERR_ARG, "the %s '%s' and the %s '%s' are one file: one would replace the other",
                         outs[l].what, outs[l].path, outs[k].what, outs[k].path);
  if (ovl_world_rank() == 0)
    for (int k = 0; k < nouts && rc == OVL_OK; k++)
      if (outs[k].path) rc = ovl_file_check_write(outs[k].path, outs[k].what, inputs, ninputs);
  rc = ovl_err_agree(MPI_COMM_WORLD, rc);
  if (rc == OVL_OK) return -1;
  return rc == OVL_ERR_ARG ? cli_usage_fail(cmd, rc) : cli_fail(cmd, rc);
}

ovl_err cli_emit(ovl_record **r) {
  ovl_err rc = OVL_OK;
  if (*r && ovl_world_rank() == 0) {
    rc = ovl_record_print(*r, stdout);
    fflush(stdout);
  }
  ovl_record_destroy(r);
  return rc;
}

const char *cli_join(char *buf, size_t n, const char *a, const char *b) {
  if (a == NULL) return NULL;
  snprintf(buf, n, "%s%s", a, b);
  return buf;
}

void cli_note_deprecated(const ovl_opt *opts, int nopts, const unsigned char *given, const char *const *olds,
                         const char *now) {
  for (int k = 0; given && k < nopts; k++) {
    if (!given[k] || opts[k].help) continue; /* the listed option itself */
    for (const char *const *o = olds; *o; o++) {
      char letter[3] = {'-', opts[k].sname, 0};
      if ((opts[k].lname && !strcmp(opts[k].lname, *o + 2)) || (opts[k].sname && !strcmp(letter, *o))) {
        if (ovl_world_rank() == 0)
          fprintf(stderr, "ovl: note: %s is deprecated, use %s (accepted for one release)\n", *o, now);
        return;
      }
    }
  }
}
