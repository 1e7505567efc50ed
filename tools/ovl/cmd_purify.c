/* ovl purify: density matrix from a Fock matrix by purification. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench_util.h"
#include "cli.h"
#include "ovl/json.h"

static const char *const k_methods[] = {"canonical", "mcweeny", "sp2", "trs2", "trs4", NULL};
static const char *const k_precs[] = {"double", "mixed", NULL};

/* "meta.json" beside the Fock file. LOCAL. */
static void meta_path(const char *fock, char *path, size_t n) {
  snprintf(path, n, "%s", fock);
  char *slash = strrchr(path, '/');
  if (slash) snprintf(slash + 1, n - (size_t)(slash + 1 - path), "meta.json");
  else snprintf(path, n, "meta.json");
}

/* What meta.json beside the Fock file says: n_occ (-1 when absent) and the
 * extreme eigenvalues of F (NAN when absent). A missing meta.json is no
 * error; one that exists goes through the input check (a FIFO is refused,
 * never opened for data) and must be a JSON object whose "n_occ" (an
 * integer) and "eig_min", "eig_max" (numbers), where present, are valid
 * (OVL_ERR_FORMAT naming the file and the key). Rank 0 reads; every rank learns the values and
 * the verdict. COLLECTIVE over MPI_COMM_WORLD. */
typedef struct fock_meta {
  int64_t nocc;
  double eig_min, eig_max;
} fock_meta;

static ovl_err read_fock_meta(const char *fock, fock_meta *m) {
  double v[3] = {-1, NAN, NAN};
  ovl_err rc = OVL_OK;
  if (ovl_world_rank() == 0) {
    char path[4096];
    meta_path(fock, path, sizeof path);
    struct stat st;
    if (lstat(path, &st) == 0 || errno != ENOENT) {
      ovl_json d;
      int64_t k = -1;
      rc = ovl_json_load(path, "metadata file", 1 << 20, &d);
      if (rc == OVL_OK) rc = ovl_json_root_object(&d, "");
      if (rc == OVL_OK) rc = ovl_json_int_opt(&d, d.root, "n_occ", INT64_MIN, INT64_MAX, -1, &k);
      if (rc == OVL_OK) rc = ovl_json_num_opt(&d, d.root, "eig_min", NAN, &v[1]);
      if (rc == OVL_OK) rc = ovl_json_num_opt(&d, d.root, "eig_max", NAN, &v[2]);
      ovl_json_free(&d);
      v[0] = (double)k;
    }
  }
  OVL_TRY(ovl_err_agree(MPI_COMM_WORLD, rc));
  MPI_Bcast(v, 3, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  m->nocc = (int64_t)v[0], m->eig_min = v[1], m->eig_max = v[2];
  return OVL_OK;
}

/* Plausibility of F against the eigenvalues meta.json records: every entry
 * of a symmetric F is at most R = max(|eig_min|, |eig_max|) in magnitude and
 * ||F||_F >= R. A byte-swapped or different file fails one of the two.
 * Plane-0 ranks of F's grid: COLLECTIVE over its parent. */
static ovl_err check_fock_plausible(ovl_dmat F, const char *fock, const fock_meta *m) {
  if (isnan(m->eig_min) || isnan(m->eig_max)) return OVL_OK;
  double R = fmax(fabs(m->eig_min), fabs(m->eig_max)), amax = 0, fro = 0;
  const double *a = ovl_dmat_data(F);
  for (int64_t c = 0; c < ovl_dmat_local_cols(F); c++)
    for (int64_t r = 0; r < ovl_dmat_local_rows(F); r++) amax = fmax(amax, fabs(a[r + c * ovl_dmat_ld(F)]));
  MPI_Comm pc = ovl_grid2d_parent(ovl_dmat_grid(F));
  OVL_MPI(MPI_Allreduce(MPI_IN_PLACE, &amax, 1, MPI_DOUBLE, MPI_MAX, pc));
  OVL_TRY(ovl_dmat_norm_fro(F, &fro));
  const double slack = 1e-6 * R + 1e-12;
  if (amax > R + slack || fro < R - slack)
    return ovl_err_set(OVL_ERR_FORMAT,
                       "'%s' does not match its meta.json: the eigenvalues lie in [%.6g, %.6g], so max |F_ij| must be "
                       "<= %.6g and ||F||_F >= %.6g, but they are %.6g and %.6g (wrong byte order, or another "
                       "matrix?)",
                       fock, m->eig_min, m->eig_max, R, R, amax, fro);
  return OVL_OK;
}

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

typedef struct purify_job {
  /* inputs */
  const char *fock, *out, *trace;
  int64_t nocc;
  int check, json, have_grid, allow_idle;
  int64_t mem_limit; /* bytes per rank (0: the node's available memory) */
  fock_meta meta;    /* meta.json beside the Fock file */
  ovl_purify_opts po;
  /* outputs */
  ovl_purify_result res;
  double ref_err, ref_trace_err, t_eig, e_ref;
  int64_t n, mem_est;
  char gridstr[64];
} purify_job;

static ovl_err fock_size(MPI_Comm comm, const char *fock, int64_t *n);

/* Peak bytes per rank of `ovl purify` on an s x s x c grid: ovl_purify's
 * (which covers reading F and writing D: 2 and 3 blocks), or, with --check,
 * rank 0's F, D, a gather buffer, the gathered F and D and LAPACK dsyevd's
 * workspace (1 + 6n + 2n^2 doubles, 3 + 5n integers). LOCAL. */
static int64_t job_memory(const purify_job *j, int64_t n, int s, int c) {
  int64_t mem = ovl_purify_memory(n, s, c, &j->po);
  if (mem < 0 || !j->check) return mem;
  double N = (double)n;
  double chk = 3.0 * (double)ovl_dmat_memory(n, n, s, s) + 8.0 * (4 * N * N + 7 * N + 1) + 4.0 * (5 * N + 3);
  return chk >= 4611686018427387904.0 ? -1 : (int64_t)fmax((double)mem, chk);
}

/* The whole job on the ranks that run it (all, or the active subset). */
static ovl_err purify_on(MPI_Comm comm, purify_job *j) {
  int P = 0;
  MPI_Comm_size(comm, &P);
  /* the plan's grid (given, or by the shape rules); sp2 and trs4: the 2.5D grid, or 1 x 1 x P */
  int s = j->po.plan.s, c = j->po.plan.c;
  if (!j->have_grid && ovl_purify_uses_sq(j->po.method)) ovl_sq_grid_dims(P, &s, &c);
  ovl_grid3d g = NULL;
  OVL_TRY(ovl_grid3d_create(comm, s, c, j->allow_idle ? OVL_GRID_ALLOW_IDLE : 0, &g));
  ovl_grid3d_dims(g, &s, &c);
  snprintf(j->gridstr, sizeof j->gridstr, "%dx%dx%d", s, s, c);
  int gi, gj, gk;
  ovl_grid3d_coords(g, &gi, &gj, &gk);
  int on0 = ovl_grid3d_active(g) && gk == 0;
  ovl_grid2d pl = ovl_grid3d_plane(g);
  MPI_Comm parent = ovl_grid3d_parent(g);
  /* memory: ask before allocating (an unreadable header is left to the reader's message) */
  ovl_err rc = OVL_OK;
  int64_t n = 0;
  if (fock_size(comm, j->fock, &n) == OVL_OK) {
    j->mem_est = job_memory(j, n, s, c);
    if (j->mem_est < 0) /* n is agreed, so is this */
      rc = ovl_err_set(OVL_ERR_NOMEM, "n = %" PRId64 " needs 2^62 bytes or more per rank on a %d x %d x %d grid", n, s,
                       s, c);
    else rc = ovl_check_memory(comm, j->mem_est, j->mem_limit);
    if (rc) {
      ovl_grid3d_destroy(&g);
      return rc;
    }
    if (!j->json) ovl_log(OVL_LOG_INFO, "# memory: %.1f MiB per rank (estimate)\n", (double)j->mem_est / 1048576.0);
  }
  n = 0;
  /* F is read on plane 0; the other planes hold handles of the same layout */
  ovl_dmat F = NULL, D = NULL;
  if (on0) {
    rc = ovl_dmat_read(pl, j->fock, 1, &F);
    if (!rc) n = ovl_dmat_rows(F);
    if (!rc) rc = check_fock_plausible(F, j->fock, &j->meta);
  }
  rc = ovl_err_agree(parent, rc);
  if (rc) {
    ovl_grid3d_destroy(&g);
    return rc;
  }
  MPI_Allreduce(MPI_IN_PLACE, &n, 1, MPI_INT64_T, MPI_MAX, parent);
  j->n = n;
  if (!on0) rc = ovl_dmat_create(pl, n, n, &F);
  if (!rc) rc = ovl_dmat_create(pl, n, n, &D);
  rc = ovl_err_agree(parent, rc);
  int traced = 0;
  if (!rc && j->trace) rc = ovl_trace_start(parent, (int64_t)1 << 20), traced = rc == OVL_OK;
  if (!rc) rc = ovl_purify(g, F, D, &j->po, &j->res);
  if (traced) { /* a failed run writes no trace: nothing is left behind by a failure */
    ovl_err trc = ovl_trace_write(rc == OVL_OK ? j->trace : NULL);
    if (!rc) rc = trc;
  }
  if (!rc && j->out && on0 && !j->res.stopped) rc = ovl_dmat_write_raw(D, j->out, 1);
  rc = ovl_err_agree(parent, rc);
  if (!rc && j->check && !j->res.stopped) {
    ovl_purify_ref ref;
    memset(&ref, 0, sizeof ref);
    if (on0) rc = ovl_purify_reference(F, D, &j->po, &ref);
    j->ref_err = ref.relerr, j->ref_trace_err = ref.trace_err, j->t_eig = ref.t_eig, j->e_ref = ref.energy;
    rc = ovl_err_agree(parent, rc);
    double v[4] = {j->ref_err, j->ref_trace_err, j->t_eig, j->e_ref};
    MPI_Bcast(v, 4, MPI_DOUBLE, 0, parent);
    j->ref_err = v[0], j->ref_trace_err = v[1], j->t_eig = v[2], j->e_ref = v[3];
  }
  ovl_dmat_destroy(&F);
  ovl_dmat_destroy(&D);
  ovl_grid3d_destroy(&g);
  return rc;
}

/* n of the Fock matrix from its header. COLLECTIVE over comm. */
static ovl_err fock_size(MPI_Comm comm, const char *fock, int64_t *n) {
  ovl_matrix_meta m;
  OVL_TRY(ovl_matrix_read_meta(comm, fock, &m));
  *n = m.rows;
  return OVL_OK;
}

/* The plan: the options are constraints; the planner completes what is open
 * (--algo auto, --ndup auto). --ppn auto models every divisor K of the ranks
 * per node (nodes x K ranks sharing each link) and keeps the fastest
 * prediction. COLLECTIVE over MPI_COMM_WORLD. */
static ovl_err resolve_plan(purify_job *j, int *ppn, const ovl_plan_src *src, char *why, size_t nwhy) {
  int64_t n = 0;
  OVL_TRY(fock_size(MPI_COMM_WORLD, j->fock, &n));
  int P = 0, rpn = 1, nodes = 1, consec = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  if (*ppn != 0) OVL_TRY(ovl_bench_node_info(MPI_COMM_WORLD, &rpn, &nodes, &consec));
  ovl_plan want = j->po.plan;
  want.n = n;
  if (*ppn != OVL_OPT_AUTO) {
    want.P = *ppn > 0 ? nodes * *ppn : P;
    OVL_TRY(ovl_plan_resolve(MPI_COMM_WORLD, OVL_FAMILY_SSC, &want, src, why, nwhy));
    j->po.plan = want;
    return OVL_OK;
  }
  ovl_machine m;
  ovl_err rc = ovl_world_rank() == 0 ? ovl_plan_machine(src->machine, &m, NULL, 0) : OVL_OK;
  OVL_TRY(ovl_err_agree(MPI_COMM_WORLD, rc));
  double bt = INFINITY;
  int best_k = 0;
  for (int k = 1; k <= rpn; k++) {
    if (rpn % k) continue;
    ovl_plan c = want;
    c.P = nodes * k, c.ppn = k;
    char w[OVL_PLAN_WHY];
    ovl_plan_src nt = {src->machine, NULL};
    if (ovl_plan_resolve(MPI_COMM_WORLD, OVL_FAMILY_SSC, &c, &nt, w, sizeof w) != OVL_OK) continue; /* no grid */
    ovl_model_cost cost;
    double t = INFINITY;
    if (ovl_world_rank() == 0 && ovl_model_predict(&m, &c, &cost) == OVL_OK) t = cost.total;
    MPI_Bcast(&t, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (t < bt) bt = t, best_k = k, j->po.plan = c, snprintf(why, nwhy, "%s", w);
  }
  if (!isfinite(bt)) return ovl_err_set(OVL_ERR_GRID, "--ppn auto: no grid fits %d nodes x K ranks", nodes);
  *ppn = best_k == rpn ? 0 : best_k;
  return OVL_OK;
}

static purify_job *g_job; /* for the active-subset callback */
static MPI_Comm g_active_comm;
static ovl_err run_active(void *ctx) {
  (void)ctx;
  return purify_on(g_active_comm, g_job);
}

int cmd_purify(int argc, char **argv) {
  int help = 0, json = 0, quiet = 0, check = 0, allow_idle = 0, max_iter = 200, ck_every = 0, restart = 0;
  int ppn = 0;
  int64_t nocc = -1;
  double mu = NAN, tol = NAN; /* NaN: not given, the method's default */
  const char *precision = "double";
  const char *fock = NULL, *out = NULL, *method = "canonical";
  const char *ckpt = NULL, *trace = NULL;
  int64_t mem_limit = 0;
  ovl_plan_optvals pv = {.algo = "alg5", .backend = "mpi"};
  const ovl_opt own[] = {
      {"fock", 'F', OVL_OPT_STRING, &fock, "FILE", "Fock matrix in an orthonormal basis (raw + .json sidecar, or .mtx)",
       NULL, 0, -1},
      {"nocc", 0, OVL_OPT_I64, &nocc, "K",
       "occupied orbitals (default: n_occ of meta.json beside the Fock file; not with mcweeny)", NULL, 0, INT64_MAX},
      {"method", 0, OVL_OPT_CHOICE, &method, "NAME", "purification method", k_methods, 0, -1},
      {"precision", 'P', OVL_OPT_CHOICE, &precision, "PREC",
       "sp2/trs4 products and messages: double (float64), or mixed (float32 until its rounding floor, then float64; "
       "idempotent and trace-exact, but the density is only about 1e-6 accurate)",
       k_precs, 0, -1},
      {"mu", 0, OVL_OPT_DOUBLE, &mu, "MU", "chemical potential (mcweeny; between HOMO and LUMO)", NULL, 0, -1},
      {"allow-idle", 0, OVL_OPT_FLAG, &allow_idle, NULL, "let ranks that do not fit the grid stay idle", NULL, 0, -1},
      {"ppn", 0, OVL_OPT_INT_OR_AUTO, &ppn, "K|auto",
       "run on the first K ranks of every node while the others sleep (multiple-PPN; default: 0, all ranks)", NULL, 0,
       1 << 20},
      {"mem-limit", 'M', OVL_OPT_SIZE, &mem_limit, "BYTES",
       "refuse to run above this many bytes per rank (default: the node's available memory shared among its ranks)",
       NULL, 0, INT64_MAX},
      {"max-iter", 0, OVL_OPT_INT, &max_iter, "N", "iteration cap", NULL, 1, 100000},
      {"tol", 0, OVL_OPT_DOUBLE, &tol, "T",
       "stop once ||D^2 - D||_F <= T, T in [1e-14, 1e-2] (default: canonical 1e-11; sp2, trs4, mcweeny: none, they "
       "stop at the rounding floor)",
       NULL, 0, -1},
      {"output", 'o', OVL_OPT_STRING, &out, "FILE", "write D (raw + .json), atomically", NULL, 0, -1},
      {"checkpoint", 0, OVL_OPT_STRING, &ckpt, "PREFIX", "checkpoint path prefix", NULL, 0, -1},
      {"checkpoint-every", 0, OVL_OPT_INT, &ck_every, "K", "write a checkpoint every K iterations", NULL, 0, 1000000},
      {"restart", 0, OVL_OPT_FLAG, &restart, NULL, "continue from the checkpoint", NULL, 0, -1},
      {"check", 'c', OVL_OPT_FLAG, &check, NULL, "compare with LAPACK dsyevd's density on rank 0 (n up to a few 1000)",
       NULL, 0, -1},
      {"trace", 't', OVL_OPT_STRING, &trace, "PREFIX", "trace the run: PREFIX.json and PREFIX.csv", NULL, 0, -1},
      {"json", 'j', OVL_OPT_FLAG, &json, NULL, "print one JSON object", NULL, 0, -1},
      {"quiet", 'q', OVL_OPT_FLAG, &quiet, NULL, "no progress lines", NULL, 0, -1},
      {"help", 'h', OVL_OPT_FLAG, &help, NULL, "show this help", NULL, 0, -1},
  };
  ovl_opt opts[64];
  int nopts = ovl_plan_opts(OVL_FAMILY_SSC, &pv, opts, 64);
  for (size_t o = 0; o < sizeof own / sizeof own[0]; o++) opts[nopts++] = own[o];
  int prc = cli_parse("usage: mpiexec -n P ovl purify --fock F.raw [--nocc K] [options]\n\n"
                      "Computes the density matrix D (D^2 = D, tr D = n_occ) of a Fock matrix F by purification:\n"
                      "canonical and mcweeny on SymmSquareCube (D -> D^2, D^3) over a p x p x p grid; sp2 and trs4\n"
                      "on the symmetric square (D -> D^2, n^3 flops) over an s x s x c grid. Reports iterations,\n"
                      "idempotency and trace errors, the energy tr(D F), what stopped the run and timings.",
                      opts, nopts, argc, argv, 2, &help, NULL);
  if (prc >= 0) return prc;
  purify_job j;
  memset(&j, 0, sizeof j);
  j.fock = fock, j.out = out, j.trace = trace, j.check = check, j.json = json, j.allow_idle = allow_idle;
  j.mem_limit = mem_limit;
  j.po = ovl_purify_opts_default();
  ovl_err rc = OVL_OK;
  if (!fock) rc = ovl_err_set(OVL_ERR_ARG, "--fock FILE is required");
  if (!rc) rc = ovl_purify_method_parse(method, &j.po.method);
  if (!rc) rc = ovl_purify_prec_parse(precision, &j.po.prec);
  if (!rc && j.po.prec == OVL_PURIFY_PREC_MIXED && !ovl_purify_uses_sq(j.po.method))
    rc = ovl_err_set(OVL_ERR_ARG, "--precision mixed needs --method sp2 or trs4");
  j.po.plan = ovl_plan_auto(OVL_FAMILY_SSC, 0);
  if (!rc) rc = ovl_plan_opts_apply(OVL_FAMILY_SSC, &pv, &j.po.plan);
  j.have_grid = pv.grid != NULL;
  if (!rc && j.po.method == OVL_PURIFY_MCWEENY && isnan(mu))
    rc = ovl_err_set(OVL_ERR_ARG, "--method mcweeny needs --mu");
  if (!rc && j.po.method != OVL_PURIFY_MCWEENY && !isnan(mu))
    rc = ovl_err_set(OVL_ERR_ARG, "--mu applies to --method mcweeny only");
  if (!rc && (ck_every > 0 || restart) && !ckpt)
    rc = ovl_err_set(OVL_ERR_ARG, "--checkpoint-every and --restart need --checkpoint PREFIX");
  if (!rc && ckpt && ck_every == 0 && !restart)
    rc = ovl_err_set(OVL_ERR_ARG, "--checkpoint needs --checkpoint-every K (or --restart)");
  if (!rc && !isnan(tol) && !(tol >= OVL_PURIFY_TOL_MIN && tol <= OVL_PURIFY_TOL_MAX))
    rc = ovl_err_set(OVL_ERR_ARG, "--tol must be in [%g, %g] (the rounding floor of double precision lies below)",
                     OVL_PURIFY_TOL_MIN, OVL_PURIFY_TOL_MAX);
  if (!rc && j.po.method == OVL_PURIFY_MCWEENY && nocc >= 0)
    rc = ovl_err_set(OVL_ERR_ARG, "--nocc does not apply to --method mcweeny (the occupation follows from --mu)");
  if ((rc = ovl_err_agree(MPI_COMM_WORLD, rc)) != OVL_OK) return cli_usage_fail("purify", rc);
  /* with --restart the state is an input first: the input check names it as such */
  if (restart && ckpt) {
    char st[4200];
    snprintf(st, sizeof st, "%s.state.json", ckpt);
    rc = ovl_world_rank() == 0 ? ovl_file_check_read(st, "checkpoint state", -1) : OVL_OK;
    if ((rc = ovl_err_agree(MPI_COMM_WORLD, rc)) != OVL_OK) return cli_fail("purify", rc);
  }
  /* every output is checked before anything is read or computed */
  char b_oj[4200], b_tj[4200], b_tc[4200], b_st[4200], b_fj[4200], b_meta[4096];
  meta_path(fock, b_meta, sizeof b_meta);
  const char *inputs[] = {fock, cli_join(b_fj, sizeof b_fj, fock, ".json"), b_meta, pv.machine, pv.tune_file};
  const cli_out outs[] = {{out, "output"},
                          {cli_join(b_oj, sizeof b_oj, out, ".json"), "output sidecar"},
                          {cli_join(b_tj, sizeof b_tj, trace, ".json"), "trace"},
                          {cli_join(b_tc, sizeof b_tc, trace, ".csv"), "trace"},
                          {cli_join(b_st, sizeof b_st, ckpt, ".state.json"), "checkpoint state"}};
  int orc = cli_check_outputs("purify", outs, 5, inputs, 5);
  if (orc >= 0) return orc;
  if ((rc = read_fock_meta(fock, &j.meta)) != OVL_OK) return cli_fail("purify", rc);
  if (nocc < 0 && j.po.method != OVL_PURIFY_MCWEENY) {
    nocc = j.meta.nocc;
    if (nocc < 0) {
      rc = ovl_err_set(OVL_ERR_ARG, "--nocc K is required (no meta.json with n_occ beside '%s')", fock);
      return cli_usage_fail("purify", ovl_err_agree(MPI_COMM_WORLD, rc));
    }
  }
  j.nocc = nocc < 0 ? 0 : nocc;
  j.po.nocc = j.nocc, j.po.mu = mu, j.po.max_iter = max_iter, j.po.tol = isnan(tol) ? 0.0 : tol;
  j.po.checkpoint = ckpt, j.po.checkpoint_every = ck_every, j.po.restart = restart, j.po.verbose = !quiet && !json;
  j.po.stop = &g_stop;
  j.po.started = &g_started;
  if (quiet) ovl_log_set_level(OVL_LOG_QUIET);
  int was_open = ovl_plan_is_open(&j.po.plan) || ppn == OVL_OPT_AUTO;
  char why[OVL_PLAN_WHY] = "";
  ovl_plan_src psrc = {pv.machine, pv.tune_file};
  if ((rc = resolve_plan(&j, &ppn, &psrc, why, sizeof why)) != OVL_OK) return cli_fail("purify", rc);
  const char *alg = ovl_algo_name(j.po.plan.algo);
  int ndup = j.po.plan.ndup;
  const char *backend = ovl_backend_name(j.po.plan.coll.backend);
  if (was_open && !json)
    ovl_log(OVL_LOG_INFO, "# auto: %s ndup=%d ppn=%d%s (%s)\n", alg, ndup, ppn, ppn ? "" : " (all ranks)", why);
  int P = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  method = ovl_purify_method_name(j.po.method); /* trs2 is sp2 */
  const char *kernel = ovl_purify_uses_sq(j.po.method) ? "square" : alg;
  if (!json)
    ovl_log(OVL_LOG_INFO, "# ovl purify: %s, method %s, %s %s ndup=%d backend=%s, %d ranks%s\n# MPI: %s\n", fock,
            method, kernel, precision, ndup, backend, P, ppn > 0 ? " (active subset)" : "", cli_mpi_library());
  double t0 = ovl_time();
  int nactive = P;
  g_stop = 0, g_started = 0, g_rank0 = ovl_world_rank() == 0;
  stop_signals(1);
  if (ppn > 0) { /* multiple PPN: the first ppn ranks of every node purify, the others sleep */
    ovl_active a = NULL;
    rc = ovl_active_create(MPI_COMM_WORLD, ppn, 0, &a);
    if (!rc) {
      g_job = &j, g_active_comm = ovl_active_comm(a);
      nactive = ovl_active_is_active(a);
      if (!nactive) g_started = 1; /* sleepers wait for the active ranks' clean stop */
      MPI_Allreduce(MPI_IN_PLACE, &nactive, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
      rc = ovl_active_run(a, run_active, NULL, NULL);
      /* the active ranks' results reach the sleepers (rank 0 is always active) */
      MPI_Bcast(&j.res, (int)sizeof j.res, MPI_BYTE, 0, MPI_COMM_WORLD);
      double v[5] = {j.ref_err, j.ref_trace_err, j.t_eig, j.e_ref, (double)j.n};
      MPI_Bcast(v, 5, MPI_DOUBLE, 0, MPI_COMM_WORLD);
      MPI_Bcast(j.gridstr, (int)sizeof j.gridstr, MPI_CHAR, 0, MPI_COMM_WORLD);
      j.ref_err = v[0], j.ref_trace_err = v[1], j.t_eig = v[2], j.e_ref = v[3], j.n = (int64_t)v[4];
      ovl_active_destroy(&a);
    }
  } else {
    rc = purify_on(MPI_COMM_WORLD, &j);
  }
  double wall = ovl_time() - t0;
  stop_signals(0);
  /* a signal that arrived after the last iteration boundary still ends the
   * command with 128 + its number: every rank learns the largest */
  int sig = (int)g_stop;
  MPI_Allreduce(MPI_IN_PLACE, &sig, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rc) return cli_fail("purify", rc);
  ovl_purify_result *r = &j.res;
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
  int pass = !check || (j.ref_err <= 1e-8 && (j.po.method == OVL_PURIFY_MCWEENY || r->trace_err <= 1e-8));
  if (json) {
    ovl_record *o = NULL;
    if (ovl_record_create("purify", &o) == OVL_OK) {
      ovl_record_set_str(o, "fock", fock), ovl_record_set_int(o, "n", j.n), ovl_record_set_int(o, "nocc", j.nocc);
      ovl_record_set_str(o, "method", method), ovl_record_set_str(o, "algo", kernel);
      ovl_record_set_str(o, "precision", precision), ovl_record_set_str(o, "stop_reason", r->stop_reason);
      ovl_record_set_int(o, "iter_single", r->iter_single), ovl_record_set_int(o, "products", r->products);
      ovl_record_set_int(o, "ndup", ndup), ovl_record_set_str(o, "backend", backend);
      ovl_record_set_int(o, "ranks", P), ovl_record_set_int(o, "active", nactive);
      ovl_record_set_str(o, "grid", j.gridstr), ovl_record_set_int(o, "iterations", r->iterations);
      ovl_record_set_num(o, "idempotency_error", r->idem_err), ovl_record_set_num(o, "trace_error", r->trace_err);
      ovl_record_set_str(o, "trace_error_of", j.po.method == OVL_PURIFY_MCWEENY ? "round(tr D)" : "n_occ");
      ovl_record_set_num(o, "energy", r->energy), ovl_record_set_num(o, "t_total", wall);
      ovl_record_set_num(o, "t_ssc", r->t_ssc), ovl_record_set_num(o, "ssc_gflops", r->ssc_gflops);
      ovl_record_set_str(o, "check", check ? (pass ? "PASS" : "FAIL") : "not checked");
      ovl_record_set_num(o, "ref_relerr", check ? j.ref_err : NAN); /* null when not checked */
      ovl_record_set_num(o, "t_eig", check ? j.t_eig : NAN);
      ovl_record_set_int(o, "mem_estimate", j.mem_est), ovl_record_set_str(o, "mpi", cli_mpi_library());
      if (ovl_world_rank() == 0) ovl_record_print(o, stdout);
      ovl_record_destroy(&o);
    }
  } else {
    char occ[64];
    if (j.po.method == OVL_PURIFY_MCWEENY) snprintf(occ, sizeof occ, "n_occ from mu=%g", j.po.mu);
    else snprintf(occ, sizeof occ, "n_occ=%" PRId64, j.nocc);
    ovl_log(OVL_LOG_QUIET,
            "purify: n=%" PRId64 " %s grid %s (%d active): %d iterations (%d in float32), stopped at the "
            "%s, ||D^2-D||_F %.2e, %s %.2e, energy tr(DF) %.10f\n"
            "purify: time %.4f s, %s %.4f s (%d calls, %.2f GFLOP/s)%s%s\n",
            j.n, occ, j.gridstr, nactive, r->iterations, r->iter_single, r->stop_reason, r->idem_err,
            j.po.method == OVL_PURIFY_MCWEENY ? "|tr D - round(tr D)|" : "|tr D - n_occ|", r->trace_err, r->energy,
            wall, ovl_purify_uses_sq(j.po.method) ? "symmetric square" : "SymmSquareCube", r->t_ssc, r->products,
            r->ssc_gflops, out ? ", D written to " : "", out ? out : "");
    if (check)
      ovl_log(OVL_LOG_QUIET,
              "check: ||D - D_eig||_F / ||D_eig||_F = %.2e, tr(D_eig F) = %.10f (dsyevd %.4f s on rank 0): %s\n",
              j.ref_err, j.e_ref, j.t_eig, pass ? "PASS" : "FAIL");
  }
  if (!pass) {
    ovl_err_set(OVL_ERR_NUMERIC, "the density differs from dsyevd's by %.2e (tolerance 1e-8)", j.ref_err);
    return cli_fail("purify", OVL_ERR_NUMERIC);
  }
  if (sig) {
    if (ovl_world_rank() == 0)
      fprintf(stderr, "ovl purify: %s arrived after the purification had finished; the outputs are complete\n",
              signal_name(sig));
    return 128 + sig;
  }
  return CLI_OK;
}
