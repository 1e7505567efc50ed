/* Options strings for the library's entries (ovl/entry.h: ovl_options_apply,
 * ovl_options_runtime): the tables the plan and the purification declare
 * (ovl_plan_opts, ovl_purify_opts_table), parsed by ovl_opts_parse_string_buf,
 * and what was given laid over the caller's plan and options. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ovl/entry.h"
#include "ovl/plan.h"

/* Options of the commands that an entry has no use for: files of the
 * planner (the entries read $OVL_MACHINE and $OVL_TUNE_FILE) and
 * checkpoints. In $OVL_OPTIONS they are skipped as another command's. */
static int entry_option(const char *name) {
  static const char *const skip[] = {"machine", "tune-file", "checkpoint", "checkpoint-every", "restart", NULL};
  for (const char *const *s = skip; *s; s++)
    if (strcmp(*s, name) == 0) return 0;
  return 1;
}

enum { MAX_OPTS = 40 };

static int given_name(const ovl_opt *t, const unsigned char *given, int n, const char *name) {
  for (int k = 0; k < n; k++)
    if (given[k] && strcmp(t[k].lname, name) == 0) return 1;
  return 0;
}

/* ovl_options_apply, and the entries' own --print-plan flag when print_plan
 * is not NULL (set to 1 when given). */
static ovl_err options_apply(const char *str, const char *what, int ignore_unknown, ovl_family f, ovl_plan *plan,
                             ovl_purify_opts *po, int *print_plan) {
  if (!str) return OVL_OK;
  if (!what) what = "options";
  ovl_opt all[MAX_OPTS], t[MAX_OPTS + 1];
  ovl_plan_optvals pv;
  memset(&pv, 0, sizeof pv);
  ovl_purify_optvals uv = ovl_purify_optvals_default();
  int na = 0;
  if (plan) {
    pv.algo = plan->algo == OVL_ALGO_AUTO ? "auto" : ovl_algo_name(plan->algo);
    na = ovl_plan_opts(f, &pv, all, MAX_OPTS);
    if (na < 0) return ovl_err_set(OVL_ERR_ARG, "%s: %d is not a kernel family (gemm, ssc, sq)", what, (int)f);
  }
  const int np = na;
  if (po) {
    uv.method = ovl_purify_method_name(po->method), uv.precision = ovl_purify_prec_name(po->prec);
    uv.nocc = po->method == OVL_PURIFY_MCWEENY ? -1 : po->nocc;
    uv.mu = po->method == OVL_PURIFY_MCWEENY ? po->mu : NAN;
    uv.tol = po->tol > 0 ? po->tol : NAN, uv.max_iter = po->max_iter;
    uv.homo = po->homo, uv.lumo = po->lumo, uv.sparse = po->sparse, uv.sparse_block = po->sparse_block;
    uv.checkpoint = po->checkpoint, uv.checkpoint_every = po->checkpoint_every, uv.restart = po->restart;
    int k = ovl_purify_opts_table(&uv, all + na, MAX_OPTS - na);
    if (k < 0) return ovl_err_set(OVL_ERR_INTERNAL, "%s: the option table does not fit (MAX_OPTS)", what);
    na += k;
  }
  int n = 0, nplan = 0, pp = 0;
  for (int k = 0; k < na; k++)
    if (entry_option(all[k].lname)) {
      t[n++] = all[k];
      if (k < np) nplan = n;
    }
  if (print_plan)
    t[n++] = (ovl_opt){"print-plan", 0, OVL_OPT_FLAG, &pp, NULL, "print the plan on rank 0 (stderr)", NULL, 0, -1};
  unsigned char given[MAX_OPTS + 1] = {0};
  char *words = NULL;
  OVL_TRY(ovl_opts_parse_string_buf(t, n, str, what, ignore_unknown, given, &words));
  ovl_err rc = OVL_OK;
  if (plan) {
    ovl_plan s = *plan;
    rc = ovl_plan_opts_apply(f, &pv, &s);
    /* only what the string gives replaces the caller's choice; an algorithm it names brings the family's
     * defaults (the knob table's) for the knobs the caller left open, as on the command line */
    int named = given_name(t, given, nplan, "algo") && s.algo != OVL_ALGO_AUTO;
    for (int k = 0; rc == OVL_OK && k < OVL_KNOB_N; k++)
      if (given_name(t, given, nplan, ovl_knobs[k].name) ||
          (named && ovl_knobs[k].type != OVL_KNOB_NAME && ovl_knob_is_open(plan, (ovl_knob_id)k) &&
           !ovl_knob_is_open(&s, (ovl_knob_id)k)))
        ovl_knob_copy(plan, &s, (ovl_knob_id)k);
  }
  int any_purify = 0;
  for (int k = nplan; k < n; k++) any_purify |= given[k];
  if (rc == OVL_OK && po && any_purify) {
    ovl_purify_opts s = *po;
    rc = ovl_purify_opts_apply(&uv, &s);
    if (rc == OVL_OK) s.plan = po->plan, *po = s;
  }
  /* the plan's options the method has no use for: given in this string */
  if (rc == OVL_OK && po && given_name(t, given, nplan, "algo")) rc = ovl_purify_option_applies(po->method, "--algo");
  if (rc == OVL_OK && po && given_name(t, given, nplan, "arrival-order"))
    rc = ovl_purify_option_applies(po->method, "--arrival-order");
  free(words);
  if (rc == OVL_OK && print_plan && pp) *print_plan = 1;
  if (rc == OVL_OK) return OVL_OK;
  char msg[1024];
  snprintf(msg, sizeof msg, "%s", ovl_errmsg());
  return ovl_err_set(rc, "%s: %s", what, msg);
}

ovl_err ovl_options_apply(const char *str, const char *what, int ignore_unknown, ovl_family f, ovl_plan *plan,
                          ovl_purify_opts *po) {
  return options_apply(str, what, ignore_unknown, f, plan, po, NULL);
}

ovl_err ovl_options_runtime(MPI_Comm comm, const char *options, ovl_family f, ovl_plan *plan, ovl_purify_opts *po) {
  return ovl_options_runtime_print(comm, options, f, plan, po, NULL);
}

ovl_err ovl_options_runtime_print(MPI_Comm comm, const char *options, ovl_family f, ovl_plan *plan, ovl_purify_opts *po,
                                  int *print_plan) {
  OVL_TRY(ovl_check_comm(comm, "ovl_options_runtime"));
  int rank = 0;
  OVL_MPI(MPI_Comm_rank(comm, &rank));
  /* rank 0's environment and string decide: the lengths (-1: none), then the text */
  const char *src[2] = {rank == 0 ? getenv("OVL_OPTIONS") : NULL, rank == 0 ? options : NULL};
  long long len[2] = {src[0] ? (long long)strlen(src[0]) : -1, src[1] ? (long long)strlen(src[1]) : -1};
  OVL_MPI(MPI_Bcast(len, 2, MPI_LONG_LONG, 0, comm));
  char *buf[2] = {NULL, NULL};
  ovl_err rc = OVL_OK;
  for (int i = 0; i < 2 && rc == OVL_OK; i++)
    if (len[i] > 65536)
      rc = ovl_err_set(OVL_ERR_ARG, "%s: longer than 65536 characters", i ? "options" : "OVL_OPTIONS");
  for (int i = 0; i < 2 && rc == OVL_OK; i++)
    if (len[i] >= 0 && !(buf[i] = malloc((size_t)len[i] + 1))) rc = ovl_err_set(OVL_ERR_NOMEM, "options: no memory");
  rc = ovl_err_agree(comm, rc);
  for (int i = 0; i < 2 && rc == OVL_OK; i++)
    if (len[i] >= 0) {
      if (rank == 0) memcpy(buf[i], src[i], (size_t)len[i] + 1);
      int mrc = MPI_Bcast(buf[i], (int)len[i] + 1, MPI_CHAR, 0, comm);
      if (mrc != MPI_SUCCESS) rc = ovl_err_mpi(mrc, "MPI_Bcast (options)");
    }
  /* every rank parses the same words: the same verdict everywhere (agreed all the same) */
  if (rc == OVL_OK) rc = options_apply(buf[0], "OVL_OPTIONS", 1, f, plan, po, print_plan);
  if (rc == OVL_OK) rc = options_apply(buf[1], "options", 0, f, plan, po, print_plan);
  free(buf[0]);
  free(buf[1]);
  return ovl_err_agree(comm, rc);
}
