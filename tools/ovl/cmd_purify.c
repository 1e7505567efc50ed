/* ovl purify: density matrix from a Fock matrix by purification. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

/* SIGINT, SIGTERM and SIGUSR1 during a run: the handler records the signal;
 * the purification stops at the next iteration boundary (all ranks agree
 * there), writes a final checkpoint when --checkpoint is given, and the
 * command exits with 128 + the signal number (130, 143, 138) without writing
 * -o. A second signal kills the process (the handler resets itself).
 * Batch systems (scancel, time limits) send SIGTERM to every rank directly.
 * Open MPI's mpiexec passes SIGUSR1 on to the ranks at once; on SIGINT or
 * SIGTERM it sends the ranks SIGTERM only after odls_base_sigkill_timeout
 * seconds (default 1) and SIGKILL as long again after that. */
static volatile sig_atomic_t g_stop, g_started;
static int g_rank0;
/* Before the iterations start nothing has been written: the first signal
 * ends the process at once (with a message on rank 0), wherever it is
 * blocked (reading input, waiting for another rank). Async-signal-safe. */
static void on_stop_signal(int sig) {
  if (!g_started) {
    static const char m_int[] = "ovl purify: stopped by SIGINT before the iterations started; nothing written\n";
    static const char m_term[] = "ovl purify: stopped by SIGTERM before the iterations started; nothing written\n";
    static const char m_usr1[] = "ovl purify: stopped by SIGUSR1 before the iterations started; nothing written\n";
    const char *m = sig == SIGINT ? m_int : sig == SIGTERM ? m_term : m_usr1;
    size_t len = sig == SIGINT ? sizeof m_int - 1 : sig == SIGTERM ? sizeof m_term - 1 : sizeof m_usr1 - 1;
    if (g_rank0) {
      ssize_t w = write(STDERR_FILENO, m, len);
      (void)w;
    }
    _exit(128 + sig);
  }
  g_stop = sig;
}

static void stop_signals(int install) {
  static const int sigs[] = {SIGINT, SIGTERM, SIGUSR1};
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sigemptyset(&sa.sa_mask);
  sa.sa_handler = install ? on_stop_signal : SIG_DFL;
  sa.sa_flags = install ? SA_RESTART | SA_RESETHAND : 0;
  for (size_t k = 0; k < sizeof sigs / sizeof sigs[0]; k++) sigaction(sigs[k], &sa, NULL);
}

static const char *signal_name(int sig) {
  return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : sig == SIGUSR1 ? "SIGUSR1" : "a signal";
}

int cmd_purify(int argc, char **argv) {
  int help = 0, json = 0, quiet = 0, check = 0, allow_idle = 0, ppn = 0;
  const char *fock = NULL, *out = NULL, *trace = NULL;
  int64_t mem_limit = 0;
  ovl_plan_optvals pv = {.algo = "alg5", .backend = "mpi"};
  ovl_purify_optvals uv = ovl_purify_optvals_default();
  const ovl_opt own[] = {
      {"fock", 'F', OVL_OPT_STRING, &fock, "FILE", "Fock matrix in an orthonormal basis (raw + .json sidecar, or .mtx)",
       NULL, 0, -1},
      {"allow-idle", 0, OVL_OPT_FLAG, &allow_idle, NULL, "let ranks that do not fit the grid stay idle", NULL, 0, -1},
      {"ppn", 0, OVL_OPT_INT_OR_AUTO, &ppn, "K|auto",
       "run on the first K ranks of every node while the others sleep, each with the node's cores / K BLAS threads "
       "(multiple PPN; auto: the cost model's K for this node; default: 0, all ranks)",
       NULL, 0, 1 << 20},
      {"mem-limit", 'M', OVL_OPT_SIZE, &mem_limit, "BYTES",
       "refuse to run above this many bytes per rank (default: the node's available memory shared among its ranks)",
       NULL, 0, INT64_MAX},
      {"output", 'o', OVL_OPT_STRING, &out, "FILE", "write D (raw + .json), atomically", NULL, 0, -1},
      {"check", 'c', OVL_OPT_FLAG, &check, NULL, "compare with LAPACK dsyevd's density on rank 0 (n up to a few 1000)",
       NULL, 0, -1},
      {"trace", 't', OVL_OPT_STRING, &trace, "PREFIX", "trace the run: PREFIX.json and PREFIX.csv", NULL, 0, -1},
      {"json", 'j', OVL_OPT_FLAG, &json, NULL, "print one JSON object", NULL, 0, -1},
      {"quiet", 'q', OVL_OPT_FLAG, &quiet, NULL, "no progress lines", NULL, 0, -1},
      {"help", 'h', OVL_OPT_FLAG, &help, NULL, "show this help", NULL, 0, -1},
  };
  ovl_opt opts[64];
  unsigned char given[64];
  int nopts = ovl_plan_opts(OVL_FAMILY_SSC, &pv, opts, 64);
  nopts += ovl_purify_opts_table(&uv, opts + nopts, 64 - nopts);
  for (size_t o = 0; o < sizeof own / sizeof own[0]; o++) opts[nopts++] = own[o];
  int prc = cli_parse("usage: mpiexec -n P ovl purify --fock F.raw [--nocc K] [options]\n\n"
                      "Computes the density matrix D (D^2 = D, tr D = n_occ) of a Fock matrix F by purification:\n"
                      "canonical and mcweeny on SymmSquareCube (D -> D^2, D^3) over a p x p x p grid; sp2 and trs4\n"
                      "on the symmetric square (D -> D^2, n^3 flops) over an s x s x c grid. Reports iterations,\n"
                      "idempotency and trace errors, the energy tr(D F), what stopped the run and timings.",
                      opts, nopts, argc, argv, 2, &help, given);
  if (prc >= 0) return prc;
  ovl_purify_job j;
  memset(&j, 0, sizeof j);
  j.fock = fock, j.out = out, j.trace = trace, j.check = check, j.allow_idle = allow_idle, j.mem_limit = mem_limit;
  j.po = ovl_purify_opts_default();
  ovl_err rc = OVL_OK;
  if (!fock) rc = ovl_err_set(OVL_ERR_ARG, "--fock FILE is required");
  if (!rc) rc = ovl_purify_opts_apply(&uv, &j.po);
  j.po.plan = ovl_plan_auto(OVL_FAMILY_SSC, 0);
  if (!rc) rc = ovl_plan_opts_apply(OVL_FAMILY_SSC, &pv, &j.po.plan);
  for (int k = 0; k < nopts && !rc; k++) /* the plan's options the method has no use for */
    if (given[k] && opts[k].lname) {
      char name[64];
      snprintf(name, sizeof name, "--%s", opts[k].lname);
      rc = ovl_purify_option_applies(j.po.method, name);
    }
  j.have_grid = pv.grid != NULL;
  if ((rc = ovl_err_agree(MPI_COMM_WORLD, rc)) != OVL_OK) return cli_usage_fail("purify", rc);
  /* with --restart the state is an input first: the input check names it as such */
  const char *ckpt = uv.checkpoint;
  int64_t nocc = uv.nocc;
  if (uv.restart && ckpt) {
    char st[4200];
    snprintf(st, sizeof st, "%s.state.json", ckpt);
    rc = ovl_world_rank() == 0 ? ovl_file_check_read(st, "checkpoint state", -1) : OVL_OK;
    if ((rc = ovl_err_agree(MPI_COMM_WORLD, rc)) != OVL_OK) return cli_fail("purify", rc);
  }
  /* every output is checked before anything is read or computed */
  char b_oj[4200], b_tj[4200], b_tc[4200], b_st[4200], b_fj[4200], b_meta[4096];
  ovl_fock_meta_path(fock, b_meta, sizeof b_meta);
  const char *inputs[] = {fock, cli_join(b_fj, sizeof b_fj, fock, ".json"), b_meta, pv.machine, pv.tune_file};
  const cli_out outs[] = {{out, "output"},
                          {cli_join(b_oj, sizeof b_oj, out, ".json"), "output sidecar"},
                          {cli_join(b_tj, sizeof b_tj, trace, ".json"), "trace"},
                          {cli_join(b_tc, sizeof b_tc, trace, ".csv"), "trace"},
                          {cli_join(b_st, sizeof b_st, ckpt, ".state.json"), "checkpoint state"}};
  int orc = cli_check_outputs("purify", outs, 5, inputs, 5);
  if (orc >= 0) return orc;
  if ((rc = ovl_fock_meta_read(MPI_COMM_WORLD, fock, &j.meta)) != OVL_OK) return cli_fail("purify", rc);
  if (nocc < 0 && j.po.method != OVL_PURIFY_MCWEENY) {
    nocc = j.meta.nocc;
    if (nocc < 0) {
      rc = ovl_err_set(OVL_ERR_ARG, "--nocc K is required (no meta.json with n_occ beside '%s')", fock);
      return cli_usage_fail("purify", ovl_err_agree(MPI_COMM_WORLD, rc));
    }
  }
  j.po.nocc = nocc < 0 ? 0 : nocc, j.po.verbose = !quiet && !json;
  j.po.stop = &g_stop;
  j.po.started = &g_started;
  if (quiet) ovl_log_set_level(OVL_LOG_QUIET);
  int was_open = ovl_plan_is_open(&j.po.plan) || ppn == OVL_OPT_AUTO;
  char why[OVL_PLAN_WHY] = "";
  ovl_plan_src psrc = {pv.machine, pv.tune_file};
  ovl_matrix_meta mm;
  if ((rc = ovl_matrix_read_meta(MPI_COMM_WORLD, fock, &mm)) == OVL_OK) j.po.plan.n = mm.rows;
  if (!rc) rc = ovl_plan_resolve_ppn(MPI_COMM_WORLD, OVL_FAMILY_SSC, &j.po.plan, &ppn, &psrc, why, sizeof why);
  if (rc) return cli_fail("purify", rc);
  const char *alg = ovl_algo_name(j.po.plan.algo);
  int ndup = j.po.plan.ndup;
  const char *backend = ovl_backend_name(j.po.plan.coll.backend);
  if (was_open && !json)
    ovl_log(OVL_LOG_INFO, "# auto: %s ndup=%d ppn=%d%s (%s)\n", alg, ndup, ppn, ppn ? "" : " (all ranks)", why);
  int P = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  const char *method = ovl_purify_method_name(j.po.method); /* trs2 is sp2 */
  const char *kernel = ovl_purify_uses_sq(j.po.method) ? "square" : alg;
  if (!json)
    ovl_log(OVL_LOG_INFO, "# ovl purify: %s, method %s, %s %s ndup=%d backend=%s, %d ranks%s\n# MPI: %s\n", fock,
            method, kernel, ovl_purify_prec_name(j.po.prec), ndup, backend, P, ppn > 0 ? " (active subset)" : "",
            cli_mpi_library());
  g_stop = 0, g_started = 0, g_rank0 = ovl_world_rank() == 0;
  stop_signals(1);
  j.ppn = ppn;
  ovl_purify_job_result jr;
  rc = ovl_purify_job_run(MPI_COMM_WORLD, &j, &jr);
  stop_signals(0);
  /* a signal that arrived after the last iteration boundary still ends the
   * command with 128 + its number: every rank learns the largest */
  int sig = (int)g_stop;
  MPI_Allreduce(MPI_IN_PLACE, &sig, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rc) return cli_fail("purify", rc);
  ovl_purify_result *r = &jr.res;
  if (!json) ovl_log(OVL_LOG_INFO, "# memory: %.1f MiB per rank (estimate)\n", (double)jr.mem_estimate / 1048576.0);
  if (r->stopped) {
    if (ovl_world_rank() == 0) {
      fprintf(stderr, "ovl purify: stopped by %s after %d iterations (||D^2-D||_F %.2e); no output written; ",
              signal_name(r->stopped), r->iterations, r->idem_err);
      if (ckpt && r->checkpoint >= 0)
        fprintf(stderr, "checkpoint of iteration %d in %s.state.json: continue with --checkpoint %s --restart\n",
                r->checkpoint, ckpt, ckpt);
      else fprintf(stderr, "no checkpoint (--checkpoint PREFIX --checkpoint-every K keeps one)\n");
    }
    return 128 + r->stopped;
  }
  if (ovl_world_rank() == 0 && (rc = ovl_purify_job_print(stdout, &j, &jr, P, json)) != OVL_OK)
    return cli_fail("purify", rc);
  if ((rc = ovl_purify_job_verdict(&j, &jr)) != OVL_OK) return cli_fail("purify", rc);
  if (sig) {
    if (ovl_world_rank() == 0)
      fprintf(stderr, "ovl purify: %s arrived after the purification had finished; the outputs are complete\n",
              signal_name(sig));
    return 128 + sig;
  }
  return CLI_OK;
}
