/* eig_peer: purification (ovl) against eigendecomposition (ScaLAPACK
 * pdsyevd) for the same density matrix, on the same ranks, in one launch.
 *
 *   mpiexec -n P eig_peer --fock F.raw [--nocc K] [--nb NB] [--grid PxQ]
 *                         [--purify LIST] [--algo alg5|alg6] [--ndup N]
 *                         [-i I] [-x X] [--json]
 *
 *   pdsyevd  block-cyclic F (NB x NB blocks, BLACS p x q grid), pdsyevd_ for
 *            all eigenpairs, then D = Z_occ Z_occ^T with pdgemm_: the density
 *            matrix the way an eigensolver-based code forms it;
 *   elpa     (when built with Debian's libelpa-dev) ELPA's two-stage solver
 *            on the same block-cyclic F, then the same pdgemm_;
 *   purify   ovl_purify from F already distributed on plane 0, once per
 *            entry of --purify (METHOD[:PRECISION][@K], comma-separated;
 *            default "canonical,sp2"; @K: multiple PPN, the first K ranks
 *            of every node purify with the node's cores shared among them
 *            as BLAS threads, the others sleep, ovl_active): canonical and mcweeny on
 *            SymmSquareCube (alg5 on p x p x p, or alg6 on the 2.5D grid),
 *            sp2 and trs4 on the symmetric square (ovl_sq_grid_dims: the 2.5D
 *            grid, or 1 x 1 x P).
 * All run interleaved (one repetition of each in turn); time per repetition
 * = MAX over ranks; min/median over the timed repetitions. Every density is
 * compared with the reference density dref.raw beside the Fock file (made by
 * tools/make-cases or tools/make-fock), when it is there, else with the
 * first purification's. The run fails when a float64 density is off by more
 * than 1e-8 (mixed precision: 1e-5). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ovl/ovl.h"
#include "scalapack.h"
#ifdef OVL_HAVE_ELPA
#include <elpa/elpa.h>
#endif

enum { MAXREP = 200, MAXCFG = 8 };

/* One purification entry of --purify and its results. */
typedef struct pcfg {
  ovl_purify_opts po;
  ovl_grid3d g;
  ovl_dmat F, D;
  ovl_purify_result res;
  double t[MAXREP], err;
  char name[48], grid[32];
  int ppn, threads; /* @K: K active ranks per node (0: all), their BLAS threads */
  int kn;           /* @K: the active ranks on this node (K, or fewer on a smaller node) */
  ovl_active act;   /* the active subset of @K */
  int alg_s, alg_c; /* the grid of its ranks */
} pcfg;

static ovl_err run_purify(void *ctx) {
  pcfg *x = ctx;
  return ovl_purify(x->g, x->F, x->D, &x->po, &x->res);
}

/* "sp2:mixed,canonical" -> entries. LOCAL. */
static ovl_err parse_purify(const char *list, pcfg *c, int *nc) {
  char buf[512];
  snprintf(buf, sizeof buf, "%s", list);
  *nc = 0;
  for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    if (*nc == MAXCFG) return ovl_err_set(OVL_ERR_ARG, "--purify takes at most %d entries", MAXCFG);
    pcfg *x = &c[(*nc)++];
    memset(x, 0, sizeof *x);
    x->po = ovl_purify_opts_default();
    char *at = strchr(tok, '@');
    if (at) {
      char *end = NULL;
      long k = strtol(at + 1, &end, 10);
      if (end == at + 1 || *end || k < 1 || k > 1 << 20)
        return ovl_err_set(OVL_ERR_ARG, "--purify: '@%s' is not a count of ranks per node >= 1", at + 1);
      x->ppn = (int)k, *at = '\0';
    }
    char *colon = strchr(tok, ':');
    if (colon) *colon = '\0';
    OVL_TRY(ovl_purify_method_parse(tok, &x->po.method));
    if (colon) OVL_TRY(ovl_purify_prec_parse(colon + 1, &x->po.prec));
    if (x->po.method == OVL_PURIFY_MCWEENY) return ovl_err_set(OVL_ERR_ARG, "--purify: mcweeny needs mu; not offered");
    if (x->po.prec == OVL_PURIFY_PREC_MIXED && !ovl_purify_uses_sq(x->po.method))
      return ovl_err_set(OVL_ERR_ARG, "--purify: mixed precision needs sp2 or trs4");
    int l = snprintf(x->name, sizeof x->name, "%s:%s", ovl_purify_method_name(x->po.method),
                     ovl_purify_prec_name(x->po.prec));
    if (x->ppn) snprintf(x->name + l, sizeof x->name - (size_t)l, "@%d", x->ppn);
  }
  return *nc ? OVL_OK : ovl_err_set(OVL_ERR_ARG, "--purify needs at least one method");
}

#ifdef OVL_HAVE_ELPA
/* All eigenpairs of the block-cyclic a (destroyed) with ELPA's 2-stage solver. */
static int elpa_solve(int n, int nb, int mp, int nq, int myrow, int mycol, int ctxt, double *a, double *w, double *z) {
  int err = 0;
  elpa_t h = elpa_allocate(&err);
  if (err != ELPA_OK) return err;
  elpa_set(h, "na", n, &err);
  elpa_set(h, "nev", n, &err);
  elpa_set(h, "local_nrows", mp > 1 ? mp : 1, &err);
  elpa_set(h, "local_ncols", nq, &err);
  elpa_set(h, "nblk", nb, &err);
  elpa_set(h, "mpi_comm_parent", (int)MPI_Comm_c2f(MPI_COMM_WORLD), &err);
  elpa_set(h, "process_row", myrow, &err);
  elpa_set(h, "process_col", mycol, &err);
  elpa_set(h, "blacs_context", ctxt, &err);
  if (err == ELPA_OK) err = elpa_setup(h);
  if (err == ELPA_OK) elpa_set(h, "solver", ELPA_SOLVER_2STAGE, &err);
  if (err == ELPA_OK) elpa_eigenvectors(h, a, w, z, &err);
  int e2 = 0;
  elpa_deallocate(h, &e2);
  return err;
}
#endif

static int64_t g_of(int64_t l, int64_t nb, int ip, int np) { return (l / nb * np + ip) * nb + l % nb; }

/* n_occ from meta.json beside the Fock file, or -1. */
static int64_t nocc_from_meta(const char *fock) {
  char path[4096];
  snprintf(path, sizeof path, "%s", fock);
  char *slash = strrchr(path, '/');
  snprintf(slash ? slash + 1 : path, sizeof path - (size_t)(slash ? slash + 1 - path : 0), "meta.json");
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  char buf[8192];
  size_t len = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[len] = 0;
  const char *p = strstr(buf, "\"n_occ\"");
  if (!p || !(p = strchr(p, ':'))) return -1;
  return strtoll(p + 1, NULL, 10);
}

/* Whole matrix on every rank (rank 0 gathers, then broadcast). */
static ovl_err read_global(const char *path, double **out, int64_t *n) {
  ovl_grid2d g = NULL;
  ovl_dmat A = NULL;
  OVL_TRY(ovl_grid2d_create(MPI_COMM_WORLD, 0, 0, 0, &g));
  ovl_err rc = ovl_dmat_read(g, path, 1, &A);
  if (!rc) {
    *n = ovl_dmat_rows(A);
    rc = ovl_malloc(sizeof(double) * (size_t)(*n) * (size_t)(*n), out);
    rc = ovl_err_agree(MPI_COMM_WORLD, rc);
  }
  if (!rc) rc = ovl_dmat_gather(A, *out);
  if (!rc) OVL_MPI(MPI_Bcast(*out, (int)(*n * *n), MPI_DOUBLE, 0, MPI_COMM_WORLD));
  ovl_dmat_destroy(&A);
  ovl_grid2d_destroy(&g);
  return rc;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int P = 1, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int help = 0, json = 0, iters = 3, warmup = 1, ndup = 4;
  int64_t nb = 32, nocc = -1;
  const char *fock = NULL, *grid = NULL, *algo = NULL, *plist = "canonical,sp2";
  static const char *const algos[] = {"alg5", "alg6", NULL};
  ovl_opt opts[] = {
      {"fock", 'F', OVL_OPT_STRING, &fock, "FILE", "Fock matrix (raw + .json, or .mtx)", NULL, 0, -1},
      {"nocc", 'k', OVL_OPT_I64, &nocc, "K", "occupied orbitals (default: meta.json beside the file)", NULL, 0, -1},
      {"nb", 0, OVL_OPT_SIZE, &nb, "NB", "ScaLAPACK block size", NULL, 1, 1 << 20},
      {"grid", 'g', OVL_OPT_STRING, &grid, "PxQ", "BLACS grid (default: the squarest)", NULL, 0, -1},
      {"algo", 'a', OVL_OPT_CHOICE, &algo, "A", "SymmSquareCube algorithm (default: alg5 if P is a cube, else alg6)",
       algos, 0, -1},
      {"purify", 'm', OVL_OPT_STRING, &plist, "LIST",
       "purifications to time: METHOD[:PRECISION],... (canonical, sp2, trs4; double, mixed) [default: canonical,sp2]",
       NULL, 0, -1},
      {"ndup", 'd', OVL_OPT_INT, &ndup, "N", "N_DUP of the SymmSquareCube phases", NULL, 1, OVL_LANES_MAX},
      {"iterations", 'i', OVL_OPT_INT, &iters, "I", "timed repetitions", NULL, 1, MAXREP},
      {"warmup", 'x', OVL_OPT_INT, &warmup, "X", "untimed warm-up repetitions", NULL, 0, 100},
      {"json", 'j', OVL_OPT_FLAG, &json, NULL, "one JSON object per method", NULL, 0, -1},
      {"help", 'h', OVL_OPT_FLAG, &help, NULL, "show this help", NULL, 0, -1},
  };
  int nopts = (int)(sizeof opts / sizeof opts[0]);
  ovl_err rc = ovl_opts_parse(opts, nopts, argc, argv, 1, NULL);
  if (!rc && !help && !fock) rc = ovl_err_set(OVL_ERR_ARG, "--fock FILE is required");
  pcfg cfg[MAXCFG];
  int ncfg = 0;
  if (!rc && !help) rc = parse_purify(plist, cfg, &ncfg);
  int p = 0, q = 0, nd = 0, dims[3] = {0, 0, 0};
  if (!rc && grid) {
    rc = ovl_parse_dims(grid, dims, &nd);
    if (!rc && (nd != 2 || dims[0] * dims[1] != P))
      rc = ovl_err_set(OVL_ERR_ARG, "--grid PxQ must have P*Q = %d ranks, got '%s'", P, grid);
    p = dims[0], q = dims[1];
  }
  if (rc || help) {
    if (rank == 0) {
      if (rc) fprintf(stderr, "eig_peer: error: %s\n", ovl_errmsg());
      else ovl_opts_help(stdout, "usage: mpiexec -n P eig_peer --fock F.raw [options]", opts, nopts);
    }
    MPI_Finalize();
    return rc ? 2 : 0;
  }
  if (!grid) {
    p = ovl_isqrt(P);
    while (P % p) p--;
    q = P / p;
  }
  int cube = ovl_icbrt(P);
  ovl_algo alg = OVL_ALGO_SSC5;
  if (algo) ovl_algo_parse(algo, &alg);
  else if (cube * cube * cube != P) alg = OVL_ALGO_SSC6;
  /* the 2.5D grid (alg6 and the symmetric square) of each entry: its ranks',
   * or the largest below with the rest of the ranks idle (2 ranks form none) */

  double *F = NULL, *Dref = NULL;
  int64_t n = 0, nref = 0;
  rc = read_global(fock, &F, &n);
  if (!rc) {
    if (nocc < 0) nocc = rank == 0 ? nocc_from_meta(fock) : -1;
    MPI_Bcast(&nocc, 1, MPI_INT64_T, 0, MPI_COMM_WORLD);
    if (nocc < 0 || nocc > n) rc = ovl_err_set(OVL_ERR_ARG, "n_occ must lie in [0, %" PRId64 "] (give --nocc)", n);
    rc = ovl_err_agree(MPI_COMM_WORLD, rc);
  }
  if (!rc) { /* the reference density beside the Fock file, if any */
    char path[4096];
    snprintf(path, sizeof path, "%s", fock);
    char *slash = strrchr(path, '/');
    snprintf(slash ? slash + 1 : path, sizeof path - (size_t)(slash ? slash + 1 - path : 0), "dref.raw");
    FILE *f = rank == 0 ? fopen(path, "rb") : NULL;
    int have = f != NULL;
    if (f) fclose(f);
    MPI_Bcast(&have, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (have && read_global(path, &Dref, &nref) != OVL_OK) ovl_free(&Dref);
    if (Dref && nref != n) ovl_free(&Dref);
  }
  if (rc) {
    if (rank == 0) fprintf(stderr, "eig_peer: error: %s\n", ovl_errmsg());
    MPI_Finalize();
    return 1;
  }

  /* ---- ScaLAPACK set-up ---- */
  int ctxt = 0, nprow = 0, npcol = 0, myrow = 0, mycol = 0;
  Cblacs_get(-1, 0, &ctxt);
  Cblacs_gridinit(&ctxt, "Row", p, q);
  Cblacs_gridinfo(ctxt, &nprow, &npcol, &myrow, &mycol);
  int64_t mp = peer_numroc(n, nb, myrow, nprow), nq = peer_numroc(n, nb, mycol, npcol), lld = mp > 1 ? mp : 1;
  int desc[9] = {1, ctxt, (int)n, (int)n, (int)nb, (int)nb, 0, 0, (int)lld};
  size_t loc = (size_t)(lld * (nq > 0 ? nq : 1));
  double *a = NULL, *z = NULL, *d = NULL, *w = NULL, *work = NULL, wq = 0;
  int *iwork = NULL, iwq = 0, lwork = -1, liwork = -1, info = 0, one = 1, ni = (int)n, nk = (int)nocc;
  ovl_malloc(sizeof(double) * loc, &a), ovl_malloc(sizeof(double) * loc, &z), ovl_malloc(sizeof(double) * loc, &d);
  ovl_malloc(sizeof(double) * (size_t)(n > 0 ? n : 1), &w);
  pdsyevd_("V", "U", &ni, a, &one, &one, desc, w, z, &one, &one, desc, &wq, &lwork, &iwq, &liwork, &info);
  /* the query is known to come out short for small n (PDORMTR rejects it): add slack */
  lwork = 2 * (int)wq + (int)(n * nb) + 10000, liwork = (iwq > 1 ? iwq : 1) + 1000;
  ovl_malloc(sizeof(double) * (size_t)lwork, &work);
  ovl_malloc(sizeof(int) * (size_t)liwork, &iwork);

  /* ---- ovl set-up: one grid and F, D per purification (@K: on the active ranks) ---- */
  int cores = 0;
  if (!rc) rc = ovl_node_cores(MPI_COMM_WORLD, &cores);
  for (int k = 0; k < ncfg && !rc; k++) {
    pcfg *x = &cfg[k];
    MPI_Comm on = MPI_COMM_WORLD;
    int Pk = P;
    if (x->ppn) {
      rc = ovl_active_create(MPI_COMM_WORLD, x->ppn, 0, &x->act);
      if (rc) break;
      on = ovl_active_comm(x->act);
      Pk = ovl_active_is_active(x->act);
      MPI_Allreduce(MPI_IN_PLACE, &Pk, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
      int on_node = 1;
      MPI_Comm_size(ovl_active_node_comm(x->act), &on_node);
      x->kn = x->ppn < on_node ? x->ppn : on_node;
    }
    x->threads = ovl_blas_threads_get(); /* @K: the active ranks' count, set around each run */
    int sq = ovl_purify_uses_sq(x->po.method), gs = 0, gc = 0;
    ovl_algo ka = alg;
    if (sq) ovl_sq_grid_dims(Pk, &gs, &gc);
    else if (x->ppn) { /* the active ranks' own grid: alg5 on a cube, else alg6 */ int cb = ovl_icbrt(Pk);
      if (cb * cb * cb != Pk) ka = OVL_ALGO_SSC6;
    }
    if (!sq && ka == OVL_ALGO_SSC6)
      for (int Q = Pk; gs == 0 && Q > 0; Q--) ovl_grid25d_dims(Q, &gs, &gc);
    x->po.nocc = nocc, x->po.plan.algo = ka, x->po.plan.ndup = ndup;
    if (on != MPI_COMM_NULL) {
      rc = ovl_grid3d_create(on, gs, gc, OVL_GRID_ALLOW_IDLE, &x->g);
      if (!rc) rc = ovl_dmat_create(ovl_grid3d_plane(x->g), n, n, &x->F);
      if (!rc) rc = ovl_dmat_create(ovl_grid3d_plane(x->g), n, n, &x->D);
      if (!rc && ovl_grid3d_active(x->g)) rc = ovl_dmat_scatter(x->F, F); /* every plane, like plane 0 */
      if (!rc) ovl_grid3d_dims(x->g, &x->alg_s, &x->alg_c);
    }
    rc = ovl_err_agree(MPI_COMM_WORLD, rc);
    snprintf(x->grid, sizeof x->grid, "%dx%dx%d", x->alg_s, x->alg_s, x->alg_c);
  }
  double t_eig[MAXREP], t_syevd[MAXREP], t_elpa[MAXREP];
  int have_elpa = 0;
  double *d2 = NULL;
#ifdef OVL_HAVE_ELPA
  have_elpa = elpa_init(ELPA_API_VERSION) == ELPA_OK;
  if (have_elpa) ovl_malloc(sizeof(double) * loc, &d2);
#endif
  for (int it = 0; it < warmup + iters && !rc; it++) {
    for (int64_t c = 0; c < nq; c++)
      for (int64_t r = 0; r < mp; r++) a[r + c * lld] = F[g_of(r, nb, myrow, nprow) + g_of(c, nb, mycol, npcol) * n];
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = ovl_time();
    pdsyevd_("V", "U", &ni, a, &one, &one, desc, w, z, &one, &one, desc, work, &lwork, iwork, &liwork, &info);
    double t1 = ovl_time();
    double al = 1.0, be = 0.0;
    if (nk > 0)
      pdgemm_("N", "T", &ni, &ni, &nk, &al, z, &one, &one, desc, z, &one, &one, desc, &be, d, &one, &one, desc);
    double t2 = ovl_time();
    if (info != 0) rc = ovl_err_set(OVL_ERR_NUMERIC, "pdsyevd failed (info %d)", info);
    rc = ovl_err_agree(MPI_COMM_WORLD, rc);
    if (rc) break;
#ifdef OVL_HAVE_ELPA
    if (have_elpa) {
      for (int64_t c = 0; c < nq; c++)
        for (int64_t r = 0; r < mp; r++) a[r + c * lld] = F[g_of(r, nb, myrow, nprow) + g_of(c, nb, mycol, npcol) * n];
      MPI_Barrier(MPI_COMM_WORLD);
      double e0 = ovl_time();
      int ee = elpa_solve(ni, (int)nb, (int)mp, (int)nq, myrow, mycol, ctxt, a, w, z);
      if (nk > 0 && ee == 0)
        pdgemm_("N", "T", &ni, &ni, &nk, &al, z, &one, &one, desc, z, &one, &one, desc, &be, d2, &one, &one, desc);
      if (it >= warmup) t_elpa[it - warmup] = ovl_time() - e0;
      if (ee != 0) rc = ovl_err_set(OVL_ERR_NUMERIC, "ELPA failed (error %d)", ee);
      rc = ovl_err_agree(MPI_COMM_WORLD, rc);
      if (rc) break;
    }
#endif
    for (int k = 0; k < ncfg && !rc; k++) {
      MPI_Barrier(MPI_COMM_WORLD);
      double t3 = ovl_time();
      if (cfg[k].act) { /* the active ranks purify with the node's cores, the others sleep */
        int restore = 0;
        if (ovl_active_is_active(cfg[k].act)) cfg[k].threads = ovl_blas_threads_share(cores, cfg[k].kn, &restore);
        rc = ovl_active_run(cfg[k].act, run_purify, &cfg[k], NULL);
        if (restore) ovl_blas_threads_set(restore);
      } else {
        rc = ovl_purify(cfg[k].g, cfg[k].F, cfg[k].D, &cfg[k].po, &cfg[k].res);
      }
      if (it >= warmup) cfg[k].t[it - warmup] = ovl_time() - t3;
    }
    if (it >= warmup) t_eig[it - warmup] = t2 - t0, t_syevd[it - warmup] = t1 - t0;
  }
  /* ---- errors against the reference (or the first purification) ---- */
  double err[2] = {NAN, NAN}, e_eig = 0, den = 0;
  double *dp = NULL, *ref = Dref;
  if (!rc) rc = ovl_malloc(sizeof(double) * (size_t)(n * n > 0 ? n * n : 1), &dp);
  for (int k = ncfg - 1; k >= 0 && !rc; k--) { /* the first entry last: it stays in dp as the fallback reference */
    rc = cfg[k].g && ovl_grid3d_active(cfg[k].g) ? ovl_dmat_gather(cfg[k].D, dp) : OVL_OK; /* rank 0 is P(0,0,0) */
    if (rc) break;
    MPI_Bcast(dp, (int)(n * n), MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (!ref && k > 0) continue;
    const double *r0 = ref ? ref : dp;
    double sk[2] = {0, 0};
    for (int64_t e = 0; e < n * n; e++) sk[0] += (dp[e] - r0[e]) * (dp[e] - r0[e]), sk[1] += r0[e] * r0[e];
    cfg[k].err = sqrt(sk[0] / (sk[1] > 0 ? sk[1] : 1));
  }
  if (!rc && !ref) { /* no dref.raw: the other entries against the first */
    ref = dp;
    for (int k = 1; k < ncfg; k++) cfg[k].err = NAN;
  }
  if (!rc) {
    double s[3] = {0, 0, 0}; /* pdsyevd num, den; elpa num */
    for (int64_t c = 0; c < nq; c++)
      for (int64_t r = 0; r < mp; r++) {
        int64_t gi = g_of(r, nb, myrow, nprow), gj = g_of(c, nb, mycol, npcol);
        double x = d[r + c * lld] - ref[gi + gj * n];
        s[0] += x * x, s[1] += ref[gi + gj * n] * ref[gi + gj * n];
        if (d2) s[2] += (d2[r + c * lld] - ref[gi + gj * n]) * (d2[r + c * lld] - ref[gi + gj * n]);
      }
    MPI_Allreduce(MPI_IN_PLACE, s, 3, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    den = s[1] > 0 ? s[1] : 1;
    err[0] = sqrt(s[0] / den), err[1] = d2 ? sqrt(s[2] / den) : NAN;
    for (int64_t e = 0; e < nocc; e++) e_eig += w[e];
  }
  rc = ovl_err_agree(MPI_COMM_WORLD, rc);
  int status = 0;
  if (rc) {
    if (rank == 0) fprintf(stderr, "eig_peer: error: %s\n", ovl_errmsg());
    status = 1;
  } else {
    ovl_stats se, ss, sl, sp[MAXCFG];
    memset(&sl, 0, sizeof sl);
    if (have_elpa) ovl_stats_max_over_ranks(MPI_COMM_WORLD, t_elpa, iters, &sl);
    ovl_stats_max_over_ranks(MPI_COMM_WORLD, t_eig, iters, &se);
    ovl_stats_max_over_ranks(MPI_COMM_WORLD, t_syevd, iters, &ss);
    const char *against = Dref ? "dref" : "purify";
    int pass = err[0] <= 1e-8 && (!have_elpa || err[1] <= 1e-8);
    for (int k = 0; k < ncfg; k++) {
      ovl_stats_max_over_ranks(MPI_COMM_WORLD, cfg[k].t, iters, &sp[k]);
      double tol = cfg[k].po.prec == OVL_PURIFY_PREC_MIXED ? 1e-5 : 1e-8;
      if (!(cfg[k].err <= tol) && !isnan(cfg[k].err)) pass = 0;
    }
    if (rank == 0 && json) {
      printf("{\"bench\":\"eig_peer\",\"method\":\"pdsyevd\",\"n\":%" PRId64 ",\"nocc\":%" PRId64 ",\"ranks\":%d,"
             "\"grid\":\"%dx%d\",\"nb\":%" PRId64 ",\"t_min\":%.6e,\"t_median\":%.6e,\"t_syevd_median\":%.6e,"
             "\"relerr\":%.3e,\"against\":\"%s\",\"energy\":%.10f}\n",
             n, nocc, P, nprow, npcol, nb, se.min, se.median, ss.median, err[0], against, e_eig);
      if (have_elpa)
        printf("{\"bench\":\"eig_peer\",\"method\":\"elpa\",\"n\":%" PRId64 ",\"nocc\":%" PRId64 ",\"ranks\":%d,"
               "\"grid\":\"%dx%d\",\"nb\":%" PRId64 ",\"t_min\":%.6e,\"t_median\":%.6e,\"relerr\":%.3e,"
               "\"against\":\"%s\"}\n",
               n, nocc, P, nprow, npcol, nb, sl.min, sl.median, err[1], against);
      for (int k = 0; k < ncfg; k++) {
        pcfg *x = &cfg[k];
        printf("{\"bench\":\"eig_peer\",\"method\":\"purify\",\"purify\":\"%s\",\"precision\":\"%s\",\"n\":%" PRId64
               ",\"nocc\":%" PRId64 ",\"ranks\":%d,\"grid\":\"%s\",\"algo\":\"%s\",\"ndup\":%d,\"iterations\":%d,"
               "\"iter_single\":%d,\"products\":%d,\"stop_reason\":\"%s\",\"t_min\":%.6e,\"t_median\":%.6e,"
               "\"kernel_gflops\":%.3f,\"relerr\":%.3e,\"against\":\"%s\",\"energy\":%.10f,\"eig_over_purify\":%.4f,"
               "\"elpa_over_purify\":%.4f,\"ppn\":%d,\"blas_threads\":%d}\n",
               ovl_purify_method_name(x->po.method), ovl_purify_prec_name(x->po.prec), n, nocc, P, x->grid,
               ovl_purify_uses_sq(x->po.method) ? "square" : ovl_algo_name(x->po.plan.algo), ndup, x->res.iterations,
               x->res.iter_single, x->res.products, x->res.stop_reason, sp[k].min, sp[k].median, x->res.ssc_gflops,
               x->err, against, x->res.energy, se.median / sp[k].median, have_elpa ? sl.median / sp[k].median : 0.0,
               x->ppn, x->threads);
      }
    } else if (rank == 0) {
      printf("# eig_peer: %s, n=%" PRId64 " n_occ=%" PRId64 ", %d ranks; %d warm-up + %d timed repetitions, "
             "interleaved; time = MAX over ranks\n",
             fock, n, nocc, P, warmup, iters);
      printf("# %-16s %-22s %10s %10s %10s %9s %s\n", "method", "layout", "t_min(s)", "t_med(s)", "eig/this", "relerr",
             "vs");
      printf("  %-16s BLACS %dx%d NB=%-9" PRId64 " %10.4e %10.4e %10.3f %9.2e %s\n", "pdsyevd", nprow, npcol, nb,
             se.min, se.median, 1.0, err[0], against);
      if (have_elpa)
        printf("  %-16s BLACS %dx%d NB=%-9" PRId64 " %10.4e %10.4e %10.3f %9.2e %s\n", "elpa2", nprow, npcol, nb,
               sl.min, sl.median, se.median / sl.median, err[1], against);
      for (int k = 0; k < ncfg; k++)
        printf("  %-16s %s %-6s %2d it       %10.4e %10.4e %10.3f %9.2e %s\n", cfg[k].name, cfg[k].grid,
               ovl_purify_uses_sq(cfg[k].po.method) ? "square" : ovl_algo_name(cfg[k].po.plan.algo),
               cfg[k].res.iterations, sp[k].min, sp[k].median, se.median / sp[k].median, cfg[k].err, against);
      printf("# energies: %.10f (eig), %.10f (%s): %s\n", e_eig, cfg[0].res.energy, cfg[0].name,
             pass ? "PASS" : "FAIL");
    }
    status = pass ? 0 : 1;
  }
#ifdef OVL_HAVE_ELPA
  ovl_free(&d2);
  if (have_elpa) {
    int ue = 0;
    elpa_uninit(&ue);
  }
#endif
  ovl_free(&a), ovl_free(&z), ovl_free(&d), ovl_free(&w), ovl_free(&work), ovl_free(&iwork);
  ovl_free(&F), ovl_free(&Dref), ovl_free(&dp);
  for (int k = 0; k < ncfg; k++) {
    ovl_dmat_destroy(&cfg[k].F), ovl_dmat_destroy(&cfg[k].D);
    if (cfg[k].g) ovl_grid3d_destroy(&cfg[k].g);
    if (cfg[k].act) ovl_active_destroy(&cfg[k].act);
  }
  Cblacs_gridexit(ctxt);
  Cblacs_exit(1);
  MPI_Finalize();
  return status;
}
