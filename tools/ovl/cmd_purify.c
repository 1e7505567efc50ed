/* ovl purify: density matrix from a Fock matrix by purification. */
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

/* SIGINT, SIGTERM and SIGUSR1 during a run end it within a bounded time,
 * by phase (g_phase: 0 before the iterations, 1 during, 2 after; the
 * library reports the transitions through ovl_purify_opts.started):
 * - before the iterations nothing has been written: the first signal ends
 *   the process at once, wherever it is blocked (reading input, waiting for
 *   another rank);
 * - during the iterations the first signal is recorded; the purification
 *   stops at the next iteration boundary (all ranks agree there), writes a
 *   final checkpoint when --checkpoint is given, and the command exits with
 *   128 + the signal number (130, 143, 138) without writing -o. A watchdog
 *   (alarm) ends the process if that clean stop has not finished
 *   OVL_STOP_GRACE seconds (default 30) after the signal: an iteration or a
 *   checkpoint write that does not end, progress lines into a full pipe;
 * - after the iterations (the --check, the trace, -o, the report) the first
 *   signal ends the process at once.
 * A process ended by a signal removes the temporaries it was writing and
 * never half replaces an output (ovl_tmp_exit waits for a rename in
 * progress): every file of an output's name is either as it was or the
 * complete new one, and a checkpoint state always names complete data. A
 * second signal ends the process at once in every phase.
 * Batch systems (scancel, time limits) send SIGTERM to every rank directly.
 * Open MPI's mpiexec passes SIGUSR1 on to the ranks at once; on SIGINT or
 * SIGTERM it sends the ranks SIGTERM only after odls_base_sigkill_timeout
 * seconds (default 1) and SIGKILL as long again after that. MPICH's
 * mpiexec (Hydra) kills every other rank with SIGKILL as soon as one rank
 * exits with a code other than 0, and Open MPI's soon after: a rank other
 * than rank 0 that holds no temporary of its own therefore waits LINGER_MS
 * before it exits after a first signal, so that rank 0 (which reports) and a
 * rank writing an output (either may be scheduled later on a loaded node)
 * print the message and remove their temporaries before the launcher kills
 * them. */
enum { LINGER_MS = 1000 };
static volatile sig_atomic_t g_stop, g_phase;
static int g_rank0;
static unsigned g_grace = 30;

/* Async-signal-safe message building (no stdio in a handler). */
static size_t put(char *buf, size_t at, const char *s) {
  while (*s && at < 511) buf[at++] = *s++;
  return at;
}
static const char *sig_text(int sig) {
  return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : sig == SIGUSR1 ? "SIGUSR1" : "a signal";
}
/* The message on rank 0's stderr, written only when it does not block (a
 * full pipe must not hold the process), then the end: the temporaries are
 * removed and the process exits with 128 + sig. Async-signal-safe. */
static void end_now(int sig, const char *what, int linger) {
  if (linger && !g_rank0 && ovl_tmp_live() == 0) {
    struct timespec t = {LINGER_MS / 1000, (LINGER_MS % 1000) * 1000000L};
    while (nanosleep(&t, &t) != 0 && errno == EINTR) {}
  }
  if (g_rank0) {
    char m[512];
    size_t k = put(m, 0, "ovl purify: stopped by ");
    k = put(m, k, sig_text(sig));
    k = put(m, k, what);
    struct pollfd p = {STDERR_FILENO, POLLOUT, 0};
    if (poll(&p, 1, 0) == 1 && (p.revents & POLLOUT)) {
      ssize_t w = write(STDERR_FILENO, m, k);
      (void)w;
    }
  }
  ovl_tmp_exit(128 + sig);
}

static void on_stop_signal(int sig) {
  int phase = (int)g_phase;
  if (phase == 0) {
    end_now(sig, " before the iterations started; nothing written\n", 1);
  } else if (g_stop) {
    end_now(sig,
            " (a second signal); ended at once: outputs not complete were discarded, a file of their name is "
            "as it was; the last checkpoint is complete\n",
            0);
  } else if (phase == 1) {
    g_stop = sig;
    alarm(g_grace); /* the watchdog of the clean stop */
    return;
  } else {
    g_stop = sig;
    end_now(sig,
            " after the iterations, before the outputs were all written: outputs not complete were "
            "discarded, a file of their name is as it was\n",
            1);
  }
  /* here only when a rename is in progress: ovl_tmp_hold ends the process after it */
}

static void on_watchdog(int s) {
  (void)s;
  int sig = (int)g_stop ? (int)g_stop : SIGTERM;
  end_now(sig,
          ", but the run did not end within OVL_STOP_GRACE seconds of it (an iteration or a write that "
          "does not end); ended: outputs not complete were discarded, a file of their name is as it was; the "
          "last checkpoint is complete\n",
          1);
}

static void stop_signals(int install) {
  static const int sigs[] = {SIGINT, SIGTERM, SIGUSR1, SIGALRM};
  if (!install) alarm(0);
  for (size_t k = 0; k < sizeof sigs / sizeof sigs[0]; k++) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    sa.sa_handler = !install ? SIG_DFL : sigs[k] == SIGALRM ? on_watchdog : on_stop_signal;
    /* SA_RESTART: during the iterations a recorded signal must not make an
     * I/O call fail (the watchdog bounds a call that does not end) */
    sa.sa_flags = install ? SA_RESTART : 0;
    sigaction(sigs[k], &sa, NULL);
  }
}

/* OVL_STOP_GRACE: seconds from a signal during the iterations to the end of
 * the process when the clean stop has not finished (1 to 86400). */
static ovl_err stop_grace(void) {
  const char *e = getenv("OVL_STOP_GRACE");
  if (!e) return OVL_OK;
  char *end = NULL;
  long v = strtol(e, &end, 10);
  if (end == e || *end || v < 1 || v > 86400)
    return ovl_err_set(OVL_ERR_ARG, "OVL_STOP_GRACE must be a whole number of seconds in [1, 86400], got '%s'", e);
  g_grace = (unsigned)v;
  return OVL_OK;
}

/* What the run did, on rank 0; the exit code. */
static int purify_report(const ovl_purify_job *j, const ovl_purify_job_result *jr, ovl_err rc, int P, int json,
                         const char *ckpt) {
  /* a signal that arrived after the last iteration boundary still ends the
   * command with 128 + its number: every rank learns the largest */
  int sig = (int)g_stop;
  MPI_Allreduce(MPI_IN_PLACE, &sig, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rc) return cli_fail("purify", rc);
  const ovl_purify_result *r = &jr->res;
  if (!json) ovl_log(OVL_LOG_INFO, "# memory: %.1f MiB per rank (estimate)\n", (double)jr->mem_estimate / 1048576.0);
  if (r->stopped) {
    if (ovl_world_rank() == 0) {
      fprintf(stderr, "ovl purify: stopped by %s after %d iterations (||D^2-D||_F %.2e); no output written; ",
              sig_text(r->stopped), r->iterations, r->idem_err);
      if (ckpt && r->checkpoint >= 0)
        ovl_fprintf(stderr, "checkpoint of iteration %d in %s.state.json: continue with --checkpoint %s --restart\n",
                    r->checkpoint, ckpt, ckpt);
      else fprintf(stderr, "no checkpoint (--checkpoint PREFIX --checkpoint-every K keeps one)\n");
    }
    return 128 + r->stopped;
  }
  if (ovl_world_rank() == 0 && (rc = ovl_purify_job_print(stdout, j, jr, P, json)) != OVL_OK)
    return cli_fail("purify", rc);
  if ((rc = ovl_purify_job_verdict(j, jr)) != OVL_OK) return cli_fail("purify", rc);
  if (sig) {
    if (ovl_world_rank() == 0)
      fprintf(stderr, "ovl purify: %s arrived after the purification had finished; the outputs are complete\n",
              sig_text(sig));
    return 128 + sig;
  }
  return CLI_OK;
}

int cmd_purify(int argc, char **argv) {
  int help = 0, json = 0, quiet = 0, check = 0, allow_idle = 0, ppn = 0;
  const char *fock = NULL, *out = NULL, *trace = NULL, *overlap = NULL;
  int64_t mem_limit = 0;
  ovl_plan_optvals pv = {.algo = "alg5", .backend = "mpi"};
  ovl_purify_optvals uv = ovl_purify_optvals_default();
  const ovl_opt own[] = {
      {"fock", 'F', OVL_OPT_STRING, &fock, "FILE", "Fock matrix in an orthonormal basis (raw + .json sidecar, or .mtx)",
       NULL, 0, -1},
      {"overlap", 'S', OVL_OPT_STRING, &overlap, "FILE",
       "with --sparse: the overlap S of a non-orthogonal basis (same blocks as F); D = S^(-1/2) D' S^(-1/2)", NULL, 0,
       -1},
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
  const int nplan = nopts; /* the plan's options come first */
  nopts += ovl_purify_opts_table(&uv, opts + nopts, 64 - nopts);
  for (size_t o = 0; o < sizeof own / sizeof own[0]; o++) opts[nopts++] = own[o];
  int prc =
      cli_parse("usage: mpiexec -n P ovl purify --fock F.raw [--nocc K] [options]\n\n"
                "Computes the density matrix D (D^2 = D, tr D = n_occ) of a Fock matrix F by purification:\n"
                "canonical and mcweeny on SymmSquareCube (D -> D^2, D^3) over a p x p x p grid; sp2, sp2acc\n"
                "and trs4 on the symmetric square (D -> D^2, n^3 flops) over an s x s x c grid; with --sparse EPS,\n"
                "sp2 and sp2acc on block-sparse matrices, every product filtered (with --overlap S: through\n"
                "S^(-1/2)), whose cost follows D's nonzero blocks. sp2acc takes\n"
                "its HOMO/LUMO estimates from --homo/--lumo, else from meta.json. Reports iterations,\n"
                "idempotency and trace errors, the energy tr(D F), what stopped the run and timings.",
                opts, nopts, argc, argv, 2, &help, given);
  if (prc >= 0) return prc;
  ovl_purify_job j;
  memset(&j, 0, sizeof j);
  j.fock = fock, j.out = out, j.trace = trace, j.check = check, j.allow_idle = allow_idle, j.mem_limit = mem_limit;
  j.overlap = overlap;
  j.po = ovl_purify_opts_default();
  ovl_err rc = OVL_OK;
  if (!fock) rc = ovl_err_set(OVL_ERR_ARG, "--fock FILE is required");
  if (!rc) rc = ovl_purify_opts_apply(&uv, &j.po);
  if (!rc && overlap && isnan(j.po.sparse))
    rc = ovl_err_set(OVL_ERR_ARG, "--overlap applies to --sparse (the dense purification takes F in an orthonormal "
                                  "basis)");
  if (!rc && !isnan(j.po.sparse) && (trace || ppn != 0))
    rc = ovl_err_set(OVL_ERR_ARG, "--sparse runs on every rank without a trace: not with %s",
                     trace ? "--trace" : "--ppn");
  if (!rc) rc = stop_grace();
  j.po.plan = ovl_plan_auto(OVL_FAMILY_SSC, 0);
  int algo_given = 0;
  for (int k = 0; k < nopts; k++) algo_given |= given[k] && opts[k].lname && strcmp(opts[k].lname, "algo") == 0;
  if (!rc && !algo_given && ovl_purify_uses_sq(j.po.method)) /* sp2, trs4: the symmetric square's knobs apply */
    pv.algo = "auto";
  if (!rc) rc = ovl_plan_opts_apply(OVL_FAMILY_SSC, &pv, &j.po.plan);
  for (int k = 0; k < nopts && !rc; k++) /* the plan's options the method has no use for */
    if (given[k] && opts[k].lname) {
      char name[64];
      snprintf(name, sizeof name, "--%s", opts[k].lname);
      rc = ovl_purify_option_applies(j.po.method, name);
    }
  for (int k = 0; k < nplan && !rc && !isnan(j.po.sparse); k++) /* the block-sparse job plans its own product */
    if (given[k] && opts[k].lname && strcmp(opts[k].lname, "ndup") != 0 && strcmp(opts[k].lname, "repl") != 0 &&
        strcmp(opts[k].lname, "machine") != 0)
      rc = ovl_err_set(OVL_ERR_ARG,
                       "--%s does not apply with --sparse: the block-sparse product is planned by its own cost "
                       "model (docs/guides/sparse.md); of the plan's options it takes --ndup, --repl (1: SUMMA on "
                       "every rank, C > 1: the 2.5D product on C "
                       "layers) and --machine",
                       opts[k].lname);
  j.machine = pv.machine;
  ovl_family fam = ovl_purify_plan_family(j.po.method, &j.po.plan);
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
  char b_sj[4200];
  const char *inputs[] = {fock,    cli_join(b_fj, sizeof b_fj, fock, ".json"),   b_meta, pv.machine, pv.tune_file,
                          overlap, cli_join(b_sj, sizeof b_sj, overlap, ".json")};
  const cli_out outs[] = {{out, "output"},
                          {cli_join(b_oj, sizeof b_oj, out, ".json"), "output sidecar"},
                          {cli_join(b_tj, sizeof b_tj, trace, ".json"), "trace"},
                          {cli_join(b_tc, sizeof b_tc, trace, ".csv"), "trace"},
                          {cli_join(b_st, sizeof b_st, ckpt, ".state.json"), "checkpoint state"}};
  int orc = cli_check_outputs("purify", outs, 5, inputs, 7);
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
  int meta_gap = j.po.method == OVL_PURIFY_SP2ACC && isnan(j.po.homo) && isfinite(j.meta.homo) && !uv.restart;
  if (meta_gap) j.po.homo = j.meta.homo, j.po.lumo = j.meta.lumo; /* the caller's knowledge, as n_occ */
  j.po.stop = &g_stop;
  j.po.started = &g_phase;
  if (quiet) ovl_log_set_level(OVL_LOG_QUIET);
  int was_open = ovl_plan_is_open(&j.po.plan) || ppn == OVL_OPT_AUTO;
  char why[OVL_PLAN_WHY] = "";
  ovl_plan_src psrc = {pv.machine, pv.tune_file};
  ovl_matrix_meta mm;
  if ((rc = ovl_matrix_read_meta(MPI_COMM_WORLD, fock, &mm)) == OVL_OK) j.po.plan.n = mm.rows;
  if (!rc && isnan(j.po.sparse))
    rc = ovl_plan_resolve_ppn(MPI_COMM_WORLD, fam, &j.po.plan, &ppn, &psrc, why, sizeof why);
  if (rc) return cli_fail("purify", rc);
  const char *alg = ovl_algo_name(j.po.plan.algo);
  int ndup = j.po.plan.ndup;
  const char *backend = ovl_backend_name(j.po.plan.coll.backend);
  if (was_open && !json && isnan(j.po.sparse)) /* the block-sparse job has no dense plan */
    ovl_log(OVL_LOG_INFO, "# auto: %s ndup=%d ppn=%d%s (%s)\n", alg, ndup, ppn, ppn ? "" : " (all ranks)", why);
  int P = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  const char *method = ovl_purify_method_name(j.po.method); /* trs2 is sp2 */
  const char *kernel = fam == OVL_FAMILY_SQ ? "square" : alg;
  char plan_s[256];
  ovl_plan_describe(&j.po.plan, plan_s, sizeof plan_s);
  char nd[48] = "auto (the product's cost model)";
  if (ndup > 0) snprintf(nd, sizeof nd, "%d", ndup);
  if (!json && !isnan(j.po.sparse)) /* the block-sparse job: a 2D grid of every rank, no dense plan */
    ovl_log(OVL_LOG_INFO,
            "# ovl purify: %s, method %s, block-sparse, threshold %g, blocks of up to %d rows, ndup=%s, %d ranks\n"
            "# MPI: %s\n",
            fock, method, j.po.sparse, j.po.sparse_block, nd, P, cli_mpi_library());
  else if (!json)
    ovl_log(OVL_LOG_INFO, "# ovl purify: %s, method %s, %s %s ndup=%d backend=%s, %d ranks%s\n# plan: %s\n# MPI: %s\n",
            fock, method, kernel, ovl_purify_prec_name(j.po.prec), ndup, backend, P, ppn > 0 ? " (active subset)" : "",
            plan_s, cli_mpi_library());
  if (!json && j.po.method == OVL_PURIFY_SP2ACC)
    ovl_log(OVL_LOG_INFO, "# gap estimates: %s\n",
            isnan(j.po.homo) ? "none (the steps are SP2's)"
            : meta_gap       ? "meta.json's homo and lumo"
                             : "--homo, --lumo");
  g_stop = 0, g_phase = 0, g_rank0 = ovl_world_rank() == 0;
  stop_signals(1);
  j.ppn = ppn;
  ovl_purify_job_result jr;
  rc = ovl_purify_job_run(MPI_COMM_WORLD, &j, &jr);
  /* the handlers stay until the report is printed (into a full pipe, say) */
  int code = purify_report(&j, &jr, rc, P, json, ckpt);
  stop_signals(0);
  return code;
}
