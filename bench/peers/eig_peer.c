/* eig_peer: purification (ovl) against eigendecomposition (ScaLAPACK
 * pdsyevd) for the same density matrix, on the same ranks, in one launch.
 *
 *   mpiexec -n P eig_peer --fock F.raw [--nocc K] [--nb NB] [--grid PxQ]
 *                         [--algo alg5|alg6] [--ndup N] [-i I] [-x X] [--json]
 *
 *   pdsyevd  block-cyclic F (NB x NB blocks, BLACS p x q grid), pdsyevd_ for
 *            all eigenpairs, then D = Z_occ Z_occ^T with pdgemm_: the density
 *            matrix the way an eigensolver-based code forms it;
 *   elpa     (when built with Debian's libelpa-dev) ELPA's two-stage solver
 *            on the same block-cyclic F, then the same pdgemm_;
 *   purify   ovl_purify (canonical, SymmSquareCube alg5 on p x p x p, or
 *            alg6 on the 2.5D grid) from F already distributed on plane 0.
 * The two run interleaved (one repetition of each in turn); time per
 * repetition = MAX over ranks; min/median over the timed repetitions. Both
 * densities are compared with the reference density dref.raw beside the Fock
 * file (made by tools/make-fock), when it is there, else with each other. */
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

enum { MAXREP = 200 };

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
  const char *fock = NULL, *grid = NULL, *algo = NULL;
  static const char *const algos[] = {"alg5", "alg6", NULL};
  ovl_opt opts[] = {
      {"fock", 'F', OVL_OPT_STRING, &fock, "FILE", "Fock matrix (raw + .json, or .mtx)", NULL, 0, -1},
      {"nocc", 'k', OVL_OPT_I64, &nocc, "K", "occupied orbitals (default: meta.json beside the file)", NULL, 0, -1},
      {"nb", 0, OVL_OPT_SIZE, &nb, "NB", "ScaLAPACK block size", NULL, 1, 1 << 20},
      {"grid", 'g', OVL_OPT_STRING, &grid, "PxQ", "BLACS grid (default: the squarest)", NULL, 0, -1},
      {"algo", 'a', OVL_OPT_CHOICE, &algo, "A", "SymmSquareCube algorithm (default: alg5 if P is a cube, else alg6)",
       algos, 0, -1},
      {"ndup", 'd', OVL_OPT_INT, &ndup, "N", "N_DUP of the SymmSquareCube phases", NULL, 1, OVL_LANES_MAX},
      {"iterations", 'i', OVL_OPT_INT, &iters, "I", "timed repetitions", NULL, 1, MAXREP},
      {"warmup", 'x', OVL_OPT_INT, &warmup, "X", "untimed warm-up repetitions", NULL, 0, 100},
      {"json", 'j', OVL_OPT_FLAG, &json, NULL, "one JSON object per method", NULL, 0, -1},
      {"help", 'h', OVL_OPT_FLAG, &help, NULL, "show this help", NULL, 0, -1},
  };
  int nopts = (int)(sizeof opts / sizeof opts[0]);
  ovl_err rc = ovl_opts_parse(opts, nopts, argc, argv, 1, NULL);
  if (!rc && !help && !fock) rc = ovl_err_set(OVL_ERR_ARG, "--fock FILE is required");
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
    for (p = 1; (p + 1) * (p + 1) <= P; p++) {}
    while (P % p) p--;
    q = P / p;
  }
  int cube = 1;
  while ((cube + 1) * (cube + 1) * (cube + 1) <= P) cube++;
  ovl_ssc_alg alg = OVL_SSC_ALG5;
  if (algo) ovl_ssc_alg_parse(algo, &alg);
  else if (cube * cube * cube != P) alg = OVL_SSC_ALG6;
  int s3 = 0, c3 = 0;
  if (alg == OVL_SSC_ALG6) ovl_grid25d_dims(P, &s3, &c3);
  if (alg == OVL_SSC_ALG6 && s3 == 0) {
    if (rank == 0) fprintf(stderr, "eig_peer: error: %d ranks form neither a p x p x p nor an s x s x c grid\n", P);
    MPI_Finalize();
    return 2;
  }

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

  /* ---- ovl set-up ---- */
  ovl_grid3d g3 = NULL;
  ovl_dmat Fd = NULL, Dd = NULL;
  rc = ovl_grid3d_create(MPI_COMM_WORLD, alg == OVL_SSC_ALG6 ? s3 : 0, alg == OVL_SSC_ALG6 ? c3 : 0, 0, &g3);
  if (!rc) rc = ovl_dmat_create(ovl_grid3d_plane(g3), n, n, &Fd);
  if (!rc) rc = ovl_dmat_create(ovl_grid3d_plane(g3), n, n, &Dd);
  if (!rc) rc = ovl_dmat_scatter(Fd, F);
  ovl_purify_opts po = ovl_purify_opts_default();
  po.nocc = nocc, po.alg = alg, po.ndup = ndup;
  ovl_purify_result res;
  memset(&res, 0, sizeof res);
  double t_eig[MAXREP], t_pur[MAXREP], t_syevd[MAXREP], t_elpa[MAXREP];
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
    MPI_Barrier(MPI_COMM_WORLD);
    double t3 = ovl_time();
    rc = ovl_purify(g3, Fd, Dd, &po, &res);
    double t4 = ovl_time();
    if (it >= warmup) t_eig[it - warmup] = t2 - t0, t_syevd[it - warmup] = t1 - t0, t_pur[it - warmup] = t4 - t3;
  }
  /* ---- errors against the reference (or each other) ---- */
  double err[3] = {NAN, NAN, NAN}, e_eig = 0;
  double *dp = NULL;
  if (!rc) rc = ovl_malloc(sizeof(double) * (size_t)(n * n > 0 ? n * n : 1), &dp);
  if (!rc) rc = ovl_dmat_gather(Dd, dp);
  if (!rc) {
    MPI_Bcast(dp, (int)(n * n), MPI_DOUBLE, 0, MPI_COMM_WORLD);
    const double *ref = Dref ? Dref : dp;
    double s[4] = {0, 0, 0, 0}; /* pdsyevd num, den; purify num; elpa num */
    for (int64_t c = 0; c < nq; c++)
      for (int64_t r = 0; r < mp; r++) {
        int64_t gi = g_of(r, nb, myrow, nprow), gj = g_of(c, nb, mycol, npcol);
        double x = d[r + c * lld] - ref[gi + gj * n], y = dp[gi + gj * n] - ref[gi + gj * n];
        s[0] += x * x, s[1] += ref[gi + gj * n] * ref[gi + gj * n], s[2] += y * y;
        if (d2) s[3] += (d2[r + c * lld] - ref[gi + gj * n]) * (d2[r + c * lld] - ref[gi + gj * n]);
      }
    MPI_Allreduce(MPI_IN_PLACE, s, 4, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    err[0] = sqrt(s[0] / (s[1] > 0 ? s[1] : 1)), err[1] = sqrt(s[2] / (s[1] > 0 ? s[1] : 1));
    err[2] = d2 ? sqrt(s[3] / (s[1] > 0 ? s[1] : 1)) : NAN;
    for (int64_t e = 0; e < nocc; e++) e_eig += w[e];
  }
  rc = ovl_err_agree(MPI_COMM_WORLD, rc);
  int status = 0;
  if (rc) {
    if (rank == 0) fprintf(stderr, "eig_peer: error: %s\n", ovl_errmsg());
    status = 1;
  } else {
    ovl_stats se, ss, sp, sl;
    memset(&sl, 0, sizeof sl);
    if (have_elpa) ovl_stats_max_over_ranks(MPI_COMM_WORLD, t_elpa, iters, &sl);
    ovl_stats_max_over_ranks(MPI_COMM_WORLD, t_eig, iters, &se);
    ovl_stats_max_over_ranks(MPI_COMM_WORLD, t_syevd, iters, &ss);
    ovl_stats_max_over_ranks(MPI_COMM_WORLD, t_pur, iters, &sp);
    const char *against = Dref ? "dref" : "purify";
    int pass = err[0] <= 1e-8 && err[1] <= 1e-8 && (!have_elpa || err[2] <= 1e-8);
    char g3s[32];
    int s_ = 0, c_ = 0;
    ovl_grid3d_dims(g3, &s_, &c_);
    snprintf(g3s, sizeof g3s, "%dx%dx%d", s_, s_, c_);
    if (rank == 0 && json) {
      printf("{\"bench\":\"eig_peer\",\"method\":\"pdsyevd\",\"n\":%" PRId64 ",\"nocc\":%" PRId64 ",\"ranks\":%d,"
             "\"grid\":\"%dx%d\",\"nb\":%" PRId64 ",\"t_min\":%.6e,\"t_median\":%.6e,\"t_syevd_median\":%.6e,"
             "\"relerr\":%.3e,\"against\":\"%s\",\"energy\":%.10f}\n",
             n, nocc, P, nprow, npcol, nb, se.min, se.median, ss.median, err[0], against, e_eig);
      if (have_elpa)
        printf("{\"bench\":\"eig_peer\",\"method\":\"elpa\",\"n\":%" PRId64 ",\"nocc\":%" PRId64 ",\"ranks\":%d,"
               "\"grid\":\"%dx%d\",\"nb\":%" PRId64 ",\"t_min\":%.6e,\"t_median\":%.6e,\"relerr\":%.3e,"
               "\"against\":\"%s\",\"elpa_over_purify\":%.4f}\n",
               n, nocc, P, nprow, npcol, nb, sl.min, sl.median, err[2], against, sl.median / sp.median);
      printf("{\"bench\":\"eig_peer\",\"method\":\"purify\",\"n\":%" PRId64 ",\"nocc\":%" PRId64 ",\"ranks\":%d,"
             "\"grid\":\"%s\",\"algo\":\"%s\",\"ndup\":%d,\"iterations\":%d,\"t_min\":%.6e,\"t_median\":%.6e,"
             "\"relerr\":%.3e,\"against\":\"%s\",\"energy\":%.10f,\"eig_over_purify\":%.4f}\n",
             n, nocc, P, g3s, ovl_ssc_alg_name(alg), ndup, res.iterations, sp.min, sp.median, err[1], against,
             res.energy, se.median / sp.median);
    } else if (rank == 0) {
      printf("# eig_peer: %s, n=%" PRId64 " n_occ=%" PRId64 ", %d ranks; %d warm-up + %d timed repetitions, "
             "interleaved; time = MAX over ranks\n",
             fock, n, nocc, P, warmup, iters);
      printf("# %-8s %-22s %10s %10s %10s %9s %s\n", "method", "layout", "t_min(s)", "t_med(s)", "syevd(s)", "relerr",
             "vs");
      printf("  %-8s BLACS %dx%d NB=%-9" PRId64 " %10.4e %10.4e %10.4e %9.2e %s\n", "pdsyevd", nprow, npcol, nb, se.min,
             se.median, ss.median, err[0], against);
      if (have_elpa)
        printf("  %-8s BLACS %dx%d NB=%-9" PRId64 " %10.4e %10.4e %10s %9.2e %s\n", "elpa2", nprow, npcol, nb, sl.min,
               sl.median, "-", err[2], against);
      printf("  %-8s %s %s ndup=%d %2d it %10.4e %10.4e %10s %9.2e %s\n", "purify", g3s, ovl_ssc_alg_name(alg), ndup,
             res.iterations, sp.min, sp.median, "-", err[1], against);
      printf("# eigendecomposition / purification (median): %.3f; energies %.10f (eig) %.10f (purify) %s\n",
             se.median / sp.median, e_eig, res.energy, pass ? "PASS" : "FAIL");
    }
    if (rank == 0 && !json && have_elpa)
      printf("# ELPA (2-stage) / purification (median): %.3f\n", sl.median / sp.median);
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
  ovl_dmat_destroy(&Fd), ovl_dmat_destroy(&Dd);
  ovl_grid3d_destroy(&g3);
  Cblacs_gridexit(ctxt);
  Cblacs_exit(1);
  MPI_Finalize();
  return status;
}
