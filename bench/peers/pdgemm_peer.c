/* pdgemm_peer: ovl against ScaLAPACK's PDGEMM on the same problem, in one
 * process launch.
 *
 *   mpiexec -n P pdgemm_peer [-n N] [--nb NB] [-i I] [-x X] [--grid PxQ] [--beta B] [--json]
 *     C = alpha A B + beta C, all N x N, on the same BLACS/ovl p x q grid:
 *       scalapack   pdgemm_ on NB x NB block-cyclic operands (RSRC = CSRC = 0)
 *       ovl_pdgemm  ovl_pdgemm on the very same block-cyclic arrays
 *                   (block-cyclic -> blocks, SUMMA, blocks -> block-cyclic)
 *       ovl_summa   ovl_summa on ovl_dmat operands directly (no layout change)
 *       ovl_hsumma  ovl_hsumma on the same operands: HSUMMA (Quintin, Hasanov &
 *                   Lastovetsky) with the default groups of the grid
 *                   (ovl_hgroups_default: the largest G <= sqrt(P) that tiles
 *                   it), outer block = inner block = the SUMMA panel, lookahead
 *     The three run interleaved (one repetition of each in turn), so a
 *     change in machine load hits them alike. Time per repetition = MAX over
 *     ranks; min/median/max over the timed repetitions after the warm-up.
 *   pdgemm_peer --dgemm [-n N] [-i I] [-x X] [--json]
 *     One process: one cblas_dgemm of N x N x N per repetition, with as many
 *     OpenBLAS threads as OPENBLAS_NUM_THREADS says (the shared-memory peer).
 *
 * The operands hold the same values in every layout (ovl_fill_value by
 * global index), and the two C's of pdgemm_ and ovl_pdgemm are compared at
 * the end (max |difference| / max |C|). */
#include <cblas.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ovl/ovl.h"
#include "ovl/pdgemm.h"
#include "scalapack.h"

enum { MAXREP = 1000, NIMPL = 4 };
static const char *const k_impl[NIMPL] = {"scalapack", "ovl_pdgemm", "ovl_summa", "ovl_hsumma"};

/* Per-repetition phase times of the ovl implementations (this rank). */
typedef struct phases {
  double in[MAXREP], comm[MAXREP], comp[MAXREP], out[MAXREP];
} phases;

/* Block-cyclic local array (RSRC = CSRC = 0) holding ovl_fill_value(seed, i, j). */
static double *bc_alloc(int64_t n, int64_t nb, int nprow, int npcol, int myrow, int mycol, uint64_t seed, int *desc,
                        int ctxt) {
  int64_t mp = peer_numroc(n, nb, myrow, nprow), nq = peer_numroc(n, nb, mycol, npcol), lld = mp > 1 ? mp : 1;
  int d[9] = {1, ctxt, (int)n, (int)n, (int)nb, (int)nb, 0, 0, (int)lld};
  memcpy(desc, d, sizeof d);
  double *x = NULL;
  if (ovl_malloc(sizeof(double) * (size_t)(lld * (nq > 0 ? nq : 1)), &x) != OVL_OK) return NULL;
  for (int64_t c = 0; c < nq; c++) {
    int64_t gj = (c / nb * npcol + mycol) * nb + c % nb;
    for (int64_t r = 0; r < mp; r++) x[r + c * lld] = ovl_fill_value(seed, (r / nb * nprow + myrow) * nb + r % nb, gj);
  }
  return x;
}

/* The MAX over ranks of each repetition, then the median over repetitions. */
static double med_of_max(MPI_Comm comm, double *t, int n) {
  ovl_stats s;
  ovl_stats_max_over_ranks(comm, t, n, &s);
  return s.median;
}

static int run_dgemm(int64_t n, int iters, int warmup, int json) {
  double *a = NULL, *b = NULL, *c = NULL;
  size_t nn = (size_t)n * (size_t)n;
  if (ovl_malloc(sizeof(double) * nn, &a) != OVL_OK || ovl_malloc(sizeof(double) * nn, &b) != OVL_OK ||
      ovl_malloc(sizeof(double) * nn, &c) != OVL_OK) {
    fprintf(stderr, "pdgemm_peer: %s\n", ovl_errmsg());
    return 1;
  }
  for (int64_t j = 0; j < n; j++)
    for (int64_t i = 0; i < n; i++) {
      a[i + j * n] = ovl_fill_value(1, i, j);
      b[i + j * n] = ovl_fill_value(2, i, j);
      c[i + j * n] = 0.0;
    }
  double t[MAXREP];
  for (int it = 0; it < warmup + iters; it++) {
    double t0 = ovl_time();
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, (int)n, (int)n, (int)n, 1.0, a, (int)n, b, (int)n, 0.0, c,
                (int)n);
    if (it >= warmup) t[it - warmup] = ovl_time() - t0;
  }
  ovl_stats s = ovl_stats_of(t, iters);
  double fl = 2.0 * (double)n * (double)n * (double)n * 1e-9;
  int threads = openblas_get_num_threads();
  if (json) {
    printf("{\"bench\":\"pdgemm_peer\",\"impl\":\"dgemm\",\"n\":%" PRId64 ",\"threads\":%d,\"iterations\":%d,"
           "\"t_min\":%.6e,\"t_median\":%.6e,\"t_max\":%.6e,\"gflops_median\":%.4f,\"gflops_best\":%.4f}\n",
           n, threads, iters, s.min, s.median, s.max, fl / s.median, fl / s.min);
  } else {
    printf("# pdgemm_peer --dgemm: one cblas_dgemm, n=%" PRId64 ", %d OpenBLAS threads, 1 process\n", n, threads);
    printf("# %d warm-up + %d timed repetitions\n", warmup, iters);
    printf("# %-10s %10s %10s %10s %12s %12s\n", "impl", "t_min(s)", "t_med(s)", "t_max(s)", "GFLOP/s_med",
           "GFLOP/s_best");
    printf("  %-10s %10.4e %10.4e %10.4e %12.2f %12.2f\n", "dgemm", s.min, s.median, s.max, fl / s.median, fl / s.min);
  }
  ovl_free(&a);
  ovl_free(&b);
  ovl_free(&c);
  return 0;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int P = 1, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int help = 0, json = 0, iters = 5, warmup = 1, dgemm_only = 0;
  int64_t n = 4096, nb = 256, panel = 0;
  double alpha = 1.0, beta = 0.0;
  const char *grid = NULL;
  ovl_opt opts[] = {
      {"n", 'n', OVL_OPT_SIZE, &n, "N", "matrix size (A, B, C are N x N)", NULL, 1, 46340},
      {"nb", 0, OVL_OPT_SIZE, &nb, "NB", "ScaLAPACK block size (MB = NB)", NULL, 1, 1 << 20},
      {"panel", 'b', OVL_OPT_SIZE, &panel, "B", "ovl SUMMA panel width (0: ovl_pdgemm's automatic choice)", NULL, 0,
       1 << 20},
      {"grid", 'g', OVL_OPT_STRING, &grid, "PxQ", "process grid (default: most square, p <= q)", NULL, 0, -1},
      {"iterations", 'i', OVL_OPT_INT, &iters, "I", "timed repetitions", NULL, 1, MAXREP},
      {"warmup", 'x', OVL_OPT_INT, &warmup, "X", "untimed warm-up repetitions", NULL, 0, 1000},
      {"alpha", 0, OVL_OPT_DOUBLE, &alpha, "A", "alpha", NULL, 0, -1},
      {"beta", 0, OVL_OPT_DOUBLE, &beta, "B", "beta", NULL, 0, -1},
      {"dgemm", 0, OVL_OPT_FLAG, &dgemm_only, NULL, "one process: time one cblas_dgemm (OPENBLAS_NUM_THREADS)", NULL, 0,
       -1},
      {"json", 'j', OVL_OPT_FLAG, &json, NULL, "one JSON object per implementation instead of the table", NULL, 0, -1},
      {"help", 'h', OVL_OPT_FLAG, &help, NULL, "show this help", NULL, 0, -1},
  };
  const int nopts = (int)(sizeof opts / sizeof opts[0]);
  ovl_err rc = ovl_opts_parse(opts, nopts, argc, argv, 1, NULL);
  int dims[3] = {0, 0, 0}, nd = 2;
  if (rc == OVL_OK && grid) {
    rc = ovl_parse_dims(grid, dims, &nd);
    if (rc == OVL_OK && (nd != 2 || dims[0] * dims[1] != P))
      rc = ovl_err_set(OVL_ERR_ARG, "--grid must be PxQ with P*Q = %d ranks, got '%s'", P, grid);
  }
  if (rc == OVL_OK && dgemm_only && P != 1)
    rc = ovl_err_set(OVL_ERR_ARG, "--dgemm runs on one process, got %d (use OPENBLAS_NUM_THREADS for cores)", P);
  rc = ovl_err_agree(MPI_COMM_WORLD, rc);
  if (help || rc != OVL_OK) {
    if (rank == 0) {
      if (rc != OVL_OK) fprintf(stderr, "pdgemm_peer: %s\n", ovl_errmsg());
      else
        ovl_opts_help(stdout, "usage: mpiexec -n P pdgemm_peer [options] | pdgemm_peer --dgemm [options]", opts, nopts);
    }
    MPI_Finalize();
    return rc != OVL_OK ? 2 : 0;
  }
  if (dgemm_only) {
    int e = run_dgemm(n, iters, warmup, json);
    MPI_Finalize();
    return e;
  }
  if (dims[0] == 0) ovl_grid2d_auto_dims(P, &dims[0], &dims[1]);
  int p = dims[0], q = dims[1];

  /* BLACS grid over MPI_COMM_WORLD, row-major: the same (i, j) <-> rank map as ovl_grid2d */
  int ctxt = -1, nprow, npcol, myrow, mycol;
  Cblacs_get(-1, 0, &ctxt);
  Cblacs_gridinit(&ctxt, "Row", p, q);
  Cblacs_gridinfo(ctxt, &nprow, &npcol, &myrow, &mycol);
  int desca[9], descb[9], descc[9], one = 1, N = (int)n;
  double *a = bc_alloc(n, nb, p, q, myrow, mycol, 1, desca, ctxt);
  double *b = bc_alloc(n, nb, p, q, myrow, mycol, 2, descb, ctxt);
  double *cref = bc_alloc(n, nb, p, q, myrow, mycol, 3, descc, ctxt);
  double *covl = bc_alloc(n, nb, p, q, myrow, mycol, 3, descc, ctxt);
  double *c0 = bc_alloc(n, nb, p, q, myrow, mycol, 3, descc, ctxt);
  int64_t clen = (int64_t)descc[8] * (peer_numroc(n, nb, mycol, q) > 0 ? peer_numroc(n, nb, mycol, q) : 1);
  ovl_grid2d g = NULL;
  ovl_dmat A = NULL, B = NULL, C = NULL, C0 = NULL;
  rc = (a && b && cref && covl && c0) ? OVL_OK : OVL_ERR_NOMEM;
  rc = ovl_err_agree(MPI_COMM_WORLD, rc);
  if (rc == OVL_OK) rc = ovl_grid2d_create(MPI_COMM_WORLD, p, q, 0, &g);
  if (rc == OVL_OK) rc = ovl_dmat_create(g, n, n, &A);
  if (rc == OVL_OK) rc = ovl_dmat_create(g, n, n, &B);
  if (rc == OVL_OK) rc = ovl_dmat_create(g, n, n, &C);
  if (rc == OVL_OK && beta != 0.0) rc = ovl_dmat_create(g, n, n, &C0);
  if (rc == OVL_OK) rc = ovl_pdgemm_config(1, OVL_BACKEND_MPI, panel);
  rc = ovl_err_agree(MPI_COMM_WORLD, rc);
  if (rc != OVL_OK) {
    if (rank == 0) fprintf(stderr, "pdgemm_peer: %s\n", ovl_errmsg());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  ovl_dmat_fill(A, OVL_FILL_RANDOM, 1);
  ovl_dmat_fill(B, OVL_FILL_RANDOM, 2);
  ovl_dmat_fill(C, OVL_FILL_RANDOM, 3);
  if (C0) ovl_dmat_fill(C0, OVL_FILL_RANDOM, 3);
  int64_t b_summa = panel > 0 ? panel : (nb > 256 ? nb : 256);
  if (b_summa > n) b_summa = n;
  ovl_plan plan = ovl_plan_gemm(OVL_ALGO_SUMMA, b_summa), hplan = ovl_plan_gemm(OVL_ALGO_HSUMMA, b_summa);
  ovl_hgroups_default(p, q, &hplan.groups_i, &hplan.groups_j);
  hplan.G = hplan.groups_i * hplan.groups_j, hplan.lookahead = 1;

  static double t[NIMPL][MAXREP];
  static phases ph[NIMPL];
  for (int it = 0; it < warmup + iters; it++) {
    int r = it - warmup;
    for (int impl = 0; impl < NIMPL; impl++) {
      if (beta != 0.0) { /* restore C (untimed) so every repetition computes the same thing */
        if (impl == 0) memcpy(cref, c0, sizeof(double) * (size_t)clen);
        if (impl == 1) memcpy(covl, c0, sizeof(double) * (size_t)clen);
        if (impl >= 2) ovl_dmat_copy(C, C0);
      }
      ovl_kstats ks = {0};
      ovl_pdgemm_info info;
      memset(&info, 0, sizeof info);
      MPI_Barrier(MPI_COMM_WORLD);
      double t0 = ovl_time();
      if (impl == 0) {
        pdgemm_("N", "N", &N, &N, &N, &alpha, a, &one, &one, desca, b, &one, &one, descb, &beta, cref, &one, &one,
                descc);
      } else if (impl == 1) {
        rc = ovl_pdgemm("N", "N", &N, &N, &N, &alpha, a, &one, &one, desca, b, &one, &one, descb, &beta, covl, &one,
                        &one, descc);
      } else if (impl == 2) {
        rc = ovl_summa(alpha, A, B, beta, C, &plan, &ks);
      } else {
        rc = ovl_hsumma(alpha, A, B, beta, C, &hplan, &ks);
      }
      double dt = ovl_time() - t0;
      if (rc != OVL_OK) {
        if (rank == 0) fprintf(stderr, "pdgemm_peer: %s: %s\n", k_impl[impl], ovl_errmsg());
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
      if (impl == 1) ovl_pdgemm_last_info(&info), ks = info.summa;
      if (r >= 0) {
        t[impl][r] = dt;
        ph[impl].in[r] = info.t_in + info.t_setup;
        ph[impl].out[r] = info.t_out;
        ph[impl].comm[r] = ks.t_comm;
        ph[impl].comp[r] = ks.t_comp;
      }
    }
  }

  /* same answer? */
  double loc[2] = {0.0, 0.0};
  for (int64_t i = 0; i < clen; i++) {
    double d = fabs(covl[i] - cref[i]);
    if (d > loc[0] || d != d) loc[0] = d;
    if (fabs(cref[i]) > loc[1]) loc[1] = fabs(cref[i]);
  }
  MPI_Allreduce(MPI_IN_PLACE, loc, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  double relerr = loc[0] / (loc[1] > 0 ? loc[1] : 1.0);

  double fl = 2.0 * (double)n * (double)n * (double)n * 1e-9;
  ovl_stats s[NIMPL];
  double pin[NIMPL], pcomm[NIMPL], pcomp[NIMPL], pout[NIMPL];
  for (int impl = 0; impl < NIMPL; impl++) {
    ovl_stats_max_over_ranks(MPI_COMM_WORLD, t[impl], iters, &s[impl]);
    pin[impl] = med_of_max(MPI_COMM_WORLD, ph[impl].in, iters);
    pcomm[impl] = med_of_max(MPI_COMM_WORLD, ph[impl].comm, iters);
    pcomp[impl] = med_of_max(MPI_COMM_WORLD, ph[impl].comp, iters);
    pout[impl] = med_of_max(MPI_COMM_WORLD, ph[impl].out, iters);
  }
  char mpiver[MPI_MAX_LIBRARY_VERSION_STRING] = "";
  int vlen = 0;
  MPI_Get_library_version(mpiver, &vlen);
  char *nl = strchr(mpiver, '\n');
  if (nl) *nl = '\0';
  nl = strchr(mpiver, ',');
  if (nl) *nl = '\0';
  if (rank == 0) {
    if (json) {
      for (int impl = 0; impl < NIMPL; impl++)
        printf("{\"bench\":\"pdgemm_peer\",\"impl\":\"%s\",\"n\":%" PRId64 ",\"nb\":%" PRId64 ",\"ranks\":%d,"
               "\"grid\":\"%dx%d\",\"panel\":%" PRId64 ",\"beta\":%g,\"iterations\":%d,\"t_min\":%.6e,"
               "\"t_median\":%.6e,\"t_max\":%.6e,\"gflops_median\":%.4f,\"gflops_best\":%.4f,\"t_in\":%.6e,"
               "\"t_comm\":%.6e,\"t_comp\":%.6e,\"t_out\":%.6e,\"relerr_vs_scalapack\":%.3e,\"mpi\":\"%s\"}\n",
               k_impl[impl], n, nb, P, p, q, b_summa, beta, iters, s[impl].min, s[impl].median, s[impl].max,
               fl / s[impl].median, fl / s[impl].min, pin[impl], pcomm[impl], pcomp[impl], pout[impl], relerr, mpiver);
    } else {
      printf("# pdgemm_peer: C = alpha A B + beta C, n=%" PRId64 ", %d ranks, grid %dx%d, ScaLAPACK NB=%" PRId64
             ", ovl SUMMA b=%" PRId64 " ndup=1 backend=mpi, HSUMMA G=%dx%d lookahead, alpha=%g beta=%g\n",
             n, P, p, q, nb, b_summa, hplan.groups_i, hplan.groups_j, alpha, beta);
      printf("# MPI: %s; ovl_pdgemm vs pdgemm_: max|diff|/max|C| = %.2e\n", mpiver, relerr);
      printf("# time per repetition = MAX over ranks; %d warm-up + %d timed repetitions, implementations "
             "interleaved\n# phases (median of per-repetition MAX over ranks): in = setup + block-cyclic -> blocks, "
             "comm/comp = SUMMA broadcasts / local dgemm, out = blocks -> block-cyclic\n",
             warmup, iters);
      printf("# %-10s %10s %10s %10s %12s %12s %9s %9s %9s %9s\n", "impl", "t_min(s)", "t_med(s)", "t_max(s)",
             "GFLOP/s_med", "GFLOP/s_best", "in(s)", "comm(s)", "comp(s)", "out(s)");
      for (int impl = 0; impl < NIMPL; impl++) {
        printf("  %-10s %10.4e %10.4e %10.4e %12.2f %12.2f", k_impl[impl], s[impl].min, s[impl].median, s[impl].max,
               fl / s[impl].median, fl / s[impl].min);
        if (impl == 0) printf(" %9s %9s %9s %9s\n", "-", "-", "-", "-");
        else printf(" %9.3e %9.3e %9.3e %9.3e\n", pin[impl], pcomm[impl], pcomp[impl], pout[impl]);
      }
      printf("# ratio ovl_pdgemm/scalapack: best %.3f, median %.3f\n", s[0].min / s[1].min, s[0].median / s[1].median);
      printf("# ratio ovl_summa/scalapack:  best %.3f, median %.3f\n", s[0].min / s[2].min, s[0].median / s[2].median);
      printf("# ratio ovl_hsumma/scalapack: best %.3f, median %.3f\n", s[0].min / s[3].min, s[0].median / s[3].median);
    }
  }
  ovl_dmat_destroy(&A);
  ovl_dmat_destroy(&B);
  ovl_dmat_destroy(&C);
  ovl_dmat_destroy(&C0);
  ovl_grid2d_destroy(&g);
  ovl_free(&a);
  ovl_free(&b);
  ovl_free(&cref);
  ovl_free(&covl);
  ovl_free(&c0);
  ovl_pdgemm_release();
  Cblacs_gridexit(ctxt);
  Cblacs_exit(1);
  MPI_Finalize();
  return 0;
}
