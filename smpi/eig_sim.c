/* eig_sim: ScaLAPACK's eigensolvers and the density matrix, the reference that
 * ovl's purification replaces (docs/guides/smpi.md, "ScaLAPACK's eigensolvers
 * under SMPI"). Built by smpi/eig_sim.sh against the ScaLAPACK of
 * smpi/build_scalapack.sh; an ordinary MPI program (pdsyevd also runs under
 * mpiexec with Debian's ScaLAPACK 2.2.1, whose pdsyevr rejects its own workspace
 * in PDORMTR on 2x2 ranks; 2.2.2 does not).
 *
 * usage: eig_sim (--fock FILE --nocc K | --gen N --nocc K) [--solver evd,evr]
 *                [--dens gemm|syrk] [--nb NB] [--check] [--measure]
 *   --fock FILE  an ovl raw matrix (n x n float64, little-endian, row-major) and
 *                its sidecar FILE.json {"rows": n, "cols": n, ...}: read by rank 0
 *                and scattered (MPI-IO cannot open files on SMPI's simulated hosts)
 *   --gen N      A = H diag(lambda) H, H a Householder reflector: lambda_i known
 *                (occupied in [-1,-0.2], virtual in [0.2,1]), and D = H P H known
 *   --solver     evd: pdsyevd, all eigenpairs; evr: pdsyevr, the K lowest
 *   --dens       D = C_occ C_occ^T by pdgemm (default) or pdsyrk
 *   --check      D against the exact D (--gen, every n) or against a dense
 *                one-rank dsyevd reference on rank 0 (--fock): ||D - D_ref||_F /
 *                ||D_ref||_F, tr D, ||D^2 - D||_F (dense, on rank 0, n <= 4000)
 *   --measure    time a 1000^3 dgemm in wall-clock time and print its rate (one rank,
 *                outside the measured parts; also its rate by CPU time, which a loaded
 *                machine does not lower): smpi/eig_sim.sh passes the first to SimGrid
 *                as smpi/host-speed
 * Times are MPI_Wtime, the simulated clock under SMPI, max over ranks:
 *   solver n P grid nb t_total(s) t_eig(s) t_dens(s) homo lumo trD errD check
 * (t_total = t_eig + t_dens; reading and scattering the matrix is printed apart). Built
 * natively (not by smpicc), it also prints the CPU time of the timed part. */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#undef clock_gettime /* SMPI maps it to the simulated clock; --measure needs the host's */

void blacs_pinfo_(int *iam, int *nprocs);
void blacs_get_(const int *ctxt, const int *what, int *val);
void blacs_gridinit_(int *ctxt, const char *order, const int *nprow, const int *npcol);
void blacs_gridinfo_(const int *ctxt, int *nprow, int *npcol, int *myrow, int *mycol);
void blacs_gridexit_(const int *ctxt);
int numroc_(const int *n, const int *nb, const int *iproc, const int *isrc, const int *nprocs);
void descinit_(int *desc, const int *m, const int *n, const int *mb, const int *nb, const int *irsrc, const int *icsrc,
               const int *ctxt, const int *lld, int *info);
void pdsyevd_(const char *jobz, const char *uplo, const int *n, double *a, const int *ia, const int *ja,
              const int *desca, double *w, double *z, const int *iz, const int *jz, const int *descz, double *work,
              const int *lwork, int *iwork, const int *liwork, int *info, size_t l1, size_t l2);
void pdsyevr_(const char *jobz, const char *range, const char *uplo, const int *n, double *a, const int *ia,
              const int *ja, const int *desca, const double *vl, const double *vu, const int *il, const int *iu, int *m,
              int *nz, double *w, double *z, const int *iz, const int *jz, const int *descz, double *work,
              const int *lwork, int *iwork, const int *liwork, int *info, size_t l1, size_t l2, size_t l3);
void pdgemm_(const char *ta, const char *tb, const int *m, const int *n, const int *k, const double *alpha,
             const double *a, const int *ia, const int *ja, const int *desca, const double *b, const int *ib,
             const int *jb, const int *descb, const double *beta, double *c, const int *ic, const int *jc,
             const int *descc);
void pdsyrk_(const char *uplo, const char *trans, const int *n, const int *k, const double *alpha, const double *a,
             const int *ia, const int *ja, const int *desca, const double *beta, double *c, const int *ic,
             const int *jc, const int *descc);
void dsyevd_(const char *jobz, const char *uplo, const int *n, double *a, const int *lda, double *w, double *work,
             const int *lwork, int *iwork, const int *liwork, int *info, size_t l1, size_t l2);
void dgemm_(const char *ta, const char *tb, const int *m, const int *n, const int *k, const double *alpha,
            const double *a, const int *lda, const double *b, const int *ldb, const double *beta, double *c,
            const int *ldc, size_t l1, size_t l2);

static const int I0 = 0, I1 = 1;

typedef struct {
  int n, nocc, nb, ctxt, nprow, npcol, myrow, mycol, lr, lc, desc[9];
  const double *hv; /* --gen: the reflector's vector v (length n), NULL for --fock */
  double hs, hvv;   /* --gen: v^T v */
} grid_t;

/* An error every rank meets (arguments, the file read by rank 0 and agreed):
 * rank 0 says it and every rank finishes cleanly, exit code 2. */
static void die(int rank, const char *msg) {
  if (rank == 0) fprintf(stderr, "eig_sim: %s\n", msg);
  MPI_Finalize();
  exit(2);
}

/* An error of one rank (memory): it says it and aborts the run. */
static void die_one(const char *msg) {
  fprintf(stderr, "eig_sim: %s\n", msg);
  MPI_Abort(MPI_COMM_WORLD, 2);
}

/* The global index of local row/column l of a block-cyclic dimension. */
static int l2g(int l, int nb, int p, int np) { return (l / nb * np + p) * nb + l % nb; }

/* --gen: the spectrum and the reflector. */
static double gen_lambda(int i, int n, int nocc) {
  if (i < nocc) return -1.0 + 0.8 * (nocc > 1 ? (double)i / (nocc - 1) : 0.0);
  return 0.2 + 0.8 * (n - nocc > 1 ? (double)(i - nocc) / (n - nocc - 1) : 0.0);
}
/* (H diag(d) H)_ij with H = I - 2 v v^T / (v^T v): d_i delta_ij - 2 v_i v_j (d_i + d_j) / vv
 * + 4 v_i v_j (sum_k v_k^2 d_k) / vv^2; s = sum_k v_k^2 d_k. */
static double gen_entry(const grid_t *g, int i, int j, double di, double dj, double s) {
  const double *v = g->hv;
  double vv = g->hvv;
  return (i == j ? di : 0.0) - 2.0 * v[i] * v[j] * (di + dj) / vv + 4.0 * v[i] * v[j] * s / (vv * vv);
}

/* The grid coordinates of rank p: blacs_gridinit's row-major order (checked in main). */
static void pcoord(const grid_t *g, int p, int *pr, int *pc) {
  *pr = p / g->npcol;
  *pc = p % g->npcol;
}

/* Copy between rank (pr, pc)'s local part (lr x lc, column-major) and the dense
 * column-major n x n matrix: to_full 0 packs full -> loc, 1 unpacks loc -> full. */
static void pack(const grid_t *g, int pr, int pc, double *full, double *loc, int to_full) {
  int lr = numroc_(&g->n, &g->nb, &pr, &I0, &g->nprow), lc = numroc_(&g->n, &g->nb, &pc, &I0, &g->npcol);
  for (int c = 0; c < lc; c++) {
    int gc = l2g(c, g->nb, pc, g->npcol);
    for (int r = 0; r < lr; r++) {
      int gr = l2g(r, g->nb, pr, g->nprow);
      if (to_full) full[(size_t)gc * g->n + gr] = loc[(size_t)c * lr + r];
      else loc[(size_t)c * lr + r] = full[(size_t)gc * g->n + gr];
    }
  }
}

/* Between rank 0's dense matrix `full` and every rank's part `loc`,
 * point-to-point through rank 0: to_full 0 scatters full, 1 gathers it. */
static void exchange(const grid_t *g, double *full, double *loc, int rank, int nproc, int to_full) {
  const int tag = to_full ? 8 : 7;
  if (rank != 0) {
    if (to_full) MPI_Send(loc, g->lr * g->lc, MPI_DOUBLE, 0, tag, MPI_COMM_WORLD);
    else MPI_Recv(loc, g->lr * g->lc, MPI_DOUBLE, 0, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    return;
  }
  pack(g, 0, 0, full, loc, to_full);
  double *buf = NULL;
  for (int p = 1; p < nproc; p++) {
    int pr, pc;
    pcoord(g, p, &pr, &pc);
    int lr = numroc_(&g->n, &g->nb, &pr, &I0, &g->nprow), lc = numroc_(&g->n, &g->nb, &pc, &I0, &g->npcol);
    double *b = realloc(buf, sizeof(double) * ((size_t)lr * lc + 1));
    if (!b) die_one("out of memory");
    buf = b;
    if (to_full) {
      MPI_Recv(buf, lr * lc, MPI_DOUBLE, p, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      pack(g, pr, pc, full, buf, 1);
    } else {
      pack(g, pr, pc, full, buf, 0);
      MPI_Send(buf, lr * lc, MPI_DOUBLE, p, tag, MPI_COMM_WORLD);
    }
  }
  free(buf);
}

/* Rank 0: read an ovl raw matrix and its sidecar; returns n (0 on error, msg set). */
static double *read_fock(const char *path, int *n, char *msg, size_t msz) {
  char side[4096];
  snprintf(side, sizeof side, "%s.json", path);
  FILE *f = fopen(side, "r");
  if (!f) {
    snprintf(msg, msz, "cannot open the sidecar %s", side);
    return NULL;
  }
  char txt[4096] = {0};
  size_t got = fread(txt, 1, sizeof txt - 1, f);
  fclose(f);
  txt[got] = 0;
  const char *r = strstr(txt, "\"rows\""), *c = strstr(txt, "\"cols\"");
  long rows = r ? strtol(strchr(r + 6, ':') + 1, NULL, 10) : -1,
       cols = c ? strtol(strchr(c + 6, ':') + 1, NULL, 10) : -1;
  if (rows <= 0 || rows != cols || rows > 100000) {
    snprintf(msg, msz, "%s: rows and cols must be equal and positive", side);
    return NULL;
  }
  double *a = malloc(sizeof(double) * (size_t)rows * rows);
  f = fopen(path, "rb");
  if (!a || !f) {
    snprintf(msg, msz, "cannot read %s", path);
    free(a);
    if (f) fclose(f);
    return NULL;
  }
  size_t want = (size_t)rows * rows, have = fread(a, sizeof(double), want, f);
  int extra = fgetc(f) != EOF;
  fclose(f);
  if (have != want || extra) {
    snprintf(msg, msz, "%s: expected %zu float64 values (%ld x %ld)", path, want, rows, rows);
    free(a);
    return NULL;
  }
  /* Row-major on file: transpose into column-major (symmetric input: the same matrix). */
  for (long i = 0; i < rows; i++)
    for (long j = i + 1; j < rows; j++) {
      double t = a[i * rows + j];
      a[i * rows + j] = a[j * rows + i];
      a[j * rows + i] = t;
    }
  *n = (int)rows;
  return a;
}

static double now_host(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The process's CPU time (natively; under SMPI the simulated clock is what counts and
 * this is not printed): on a shared machine it tells the computation from the
 * time slices other jobs took. */
static double cpu_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* --measure: the host's dgemm rate (one thread), flop/s, by the wall clock; *cpu_rate:
 * by the process's CPU time (best of the same 3 calls), which other jobs on a shared
 * machine do not lower. */
static double measure_dgemm(double *cpu_rate) {
  int m = 1000;
  double *a = malloc(sizeof(double) * m * m * 3), one = 1.0, zero = 0.0;
  *cpu_rate = 0;
  if (!a) return 0;
  for (long i = 0; i < 3L * m * m; i++) a[i] = (double)(i % 17) / 17.0 - 0.5;
  dgemm_("N", "N", &m, &m, &m, &one, a, &m, a + (size_t)m * m, &m, &zero, a + 2 * (size_t)m * m, &m, 1, 1);
  double best = 1e30, bestc = 1e30;
  for (int r = 0; r < 3; r++) {
    double t = now_host(), c = cpu_now();
    dgemm_("N", "N", &m, &m, &m, &one, a, &m, a + (size_t)m * m, &m, &zero, a + 2 * (size_t)m * m, &m, 1, 1);
    t = now_host() - t, c = cpu_now() - c;
    if (t < best) best = t;
    if (c < bestc) bestc = c;
  }
  free(a);
  *cpu_rate = 2.0 * m * m * (double)m / bestc;
  return 2.0 * m * m * (double)m / best;
}

static double tmax(double t) {
  double r;
  MPI_Allreduce(&t, &r, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return r;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, nproc;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nproc);
  const char *fock = NULL, *solvers = "evd", *dens = "gemm";
  int ngen = 0, nocc = -1, nb = 64, check = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--measure")) {
      double cr = 0, wr = rank == 0 ? measure_dgemm(&cr) : 0;
      if (rank == 0) printf("host dgemm rate %.4g flop/s (by CPU time: %.4g flop/s)\n", wr, cr);
      MPI_Finalize();
      return 0;
    } else if (!strcmp(a, "--check")) {
      check = 1;
    } else if (v && !strcmp(a, "--fock")) {
      fock = v, i++;
    } else if (v && !strcmp(a, "--gen")) {
      ngen = atoi(v), i++;
    } else if (v && !strcmp(a, "--nocc")) {
      nocc = atoi(v), i++;
    } else if (v && !strcmp(a, "--nb")) {
      nb = atoi(v), i++;
    } else if (v && !strcmp(a, "--solver")) {
      solvers = v, i++;
    } else if (v && !strcmp(a, "--dens")) {
      dens = v, i++;
    } else {
      die(rank, "usage: eig_sim (--fock FILE --nocc K | --gen N --nocc K) [--solver evd,evr] [--dens gemm|syrk] "
                "[--nb NB] [--check] [--measure]");
    }
  }
  if (!fock == !(ngen > 0)) die(rank, "give exactly one of --fock FILE and --gen N (N > 0)");
  if (nb < 1) die(rank, "--nb must be positive");
  if (strcmp(dens, "gemm") && strcmp(dens, "syrk")) die(rank, "--dens must be gemm or syrk");
  for (const char *s = solvers; *s;) {
    if (strncmp(s, "evd", 3) && strncmp(s, "evr", 3)) die(rank, "--solver takes evd, evr or evd,evr");
    s += 3;
    if (*s == ',') s++;
    else if (*s) die(rank, "--solver takes evd, evr or evd,evr");
  }

  /* The matrix: rank 0 reads the file (its n goes to everyone), or every rank
   * generates its own part. */
  grid_t g = {0};
  double *full = NULL, t_read = MPI_Wtime();
  if (fock) {
    char msg[4300] = "";
    int n = 0;
    if (rank == 0) full = read_fock(fock, &n, msg, sizeof msg);
    MPI_Bcast(&n, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (n == 0) die(rank, msg);
    g.n = n;
  } else {
    g.n = ngen;
  }
  g.nocc = nocc, g.nb = nb;
  if (nocc < 1 || nocc >= g.n) die(rank, "--nocc K needs 1 <= K < n");
  if (check && g.n > 4000) die(rank, "--check needs n <= 4000 (a dense reference on rank 0)");
  /* The grid: nprow <= npcol, as square as P allows. */
  int pr = 1;
  for (int d = 1; d * d <= nproc; d++)
    if (nproc % d == 0) pr = d;
  g.nprow = pr, g.npcol = nproc / pr;
  int iam = 0, bnp = 0;
  blacs_pinfo_(&iam, &bnp);
  blacs_get_(&I0, &I0, &g.ctxt);
  blacs_gridinit_(&g.ctxt, "R", &g.nprow, &g.npcol);
  blacs_gridinfo_(&g.ctxt, &g.nprow, &g.npcol, &g.myrow, &g.mycol);
  if (g.npcol < 1 || g.myrow != rank / g.npcol || g.mycol != rank % g.npcol)
    die_one("unexpected BLACS process grid order");
  g.lr = numroc_(&g.n, &nb, &g.myrow, &I0, &g.nprow);
  g.lc = numroc_(&g.n, &nb, &g.mycol, &I0, &g.npcol);
  int lld = g.lr > 1 ? g.lr : 1, info = 0;
  descinit_(g.desc, &g.n, &g.n, &nb, &nb, &I0, &I0, &g.ctxt, &lld, &info);
  if (info != 0) die_one("descinit failed");
  size_t lsz = (size_t)g.lr * g.lc + 1;
  double *a0 = malloc(sizeof(double) * lsz), *a = malloc(sizeof(double) * lsz), *z = malloc(sizeof(double) * lsz),
         *d = malloc(sizeof(double) * lsz), *w = malloc(sizeof(double) * g.n), *v = NULL;
  if (!a0 || !a || !z || !d || !w) die_one("out of memory");
  double sa = 0, sp = 0;
  if (fock) {
    exchange(&g, full, a0, rank, nproc, 0);
  } else {
    v = malloc(sizeof(double) * g.n);
    if (!v) die_one("out of memory");
    g.hvv = 0;
    for (int i = 0; i < g.n; i++) {
      v[i] = 1.0 + 0.5 * sin(1.7 * i + 0.3);
      g.hvv += v[i] * v[i];
    }
    g.hv = v;
    for (int i = 0; i < g.n; i++) {
      sa += v[i] * v[i] * gen_lambda(i, g.n, nocc);
      sp += i < nocc ? v[i] * v[i] : 0.0;
    }
    for (int c = 0; c < g.lc; c++) {
      int gc = l2g(c, nb, g.mycol, g.npcol);
      for (int r = 0; r < g.lr; r++) {
        int gr = l2g(r, nb, g.myrow, g.nprow);
        a0[(size_t)c * g.lr + r] = gen_entry(&g, gr, gc, gen_lambda(gr, g.n, nocc), gen_lambda(gc, g.n, nocc), sa);
      }
    }
  }
  t_read = tmax(MPI_Wtime() - t_read);
  if (rank == 0)
    printf("# eig_sim: n %d, n_occ %d, %s, P %d (%dx%d), nb %d; matrix %s in %.4g s\n", g.n, nocc,
           fock ? fock : "generated (known spectrum)", nproc, g.nprow, g.npcol, nb,
           fock ? "read by rank 0 and scattered" : "generated on every rank", t_read);

  /* The dense one-rank reference (--check, --fock): eigenvalues and D on rank 0. */
  double *wref = NULL, *dref = NULL, *dfull = NULL;
  if (check && rank == 0) {
    dfull = malloc(sizeof(double) * (size_t)g.n * g.n);
    if (!dfull) die_one("out of memory");
    if (fock) {
      wref = malloc(sizeof(double) * g.n);
      dref = malloc(sizeof(double) * (size_t)g.n * g.n);
      int lw = -1, liw = -1, iq = 0;
      double wq = 0;
      dsyevd_("V", "U", &g.n, full, &g.n, wref, &wq, &lw, &iq, &liw, &info, 1, 1);
      lw = (int)wq + 1, liw = iq + 1;
      double *wk = malloc(sizeof(double) * lw);
      int *iw = malloc(sizeof(int) * liw);
      if (!wk || !iw || !wref || !dref) die_one("out of memory");
      dsyevd_("V", "U", &g.n, full, &g.n, wref, wk, &lw, iw, &liw, &info, 1, 1);
      if (info != 0) die_one("the reference dsyevd failed");
      double one = 1.0, zero = 0.0;
      dgemm_("N", "T", &g.n, &g.n, &nocc, &one, full, &g.n, full, &g.n, &zero, dref, &g.n, 1, 1);
      free(wk), free(iw);
    }
  }
  free(full);

  if (rank == 0)
    printf("# local computation under SMPI: executed and charged at the simulated host's speed (SMPI's "
           "smpi/simulate-computation, scaled by smpi/host-speed)\n"
           "# solver n P grid nb t_total(s) t_eig(s) t_dens(s) homo lumo trD errD idemD check\n");
  for (const char *s = solvers; *s; s += s[3] == ',' ? 4 : 3) {
    int evr = !strncmp(s, "evr", 3);
    memcpy(a, a0, sizeof(double) * lsz);
    memset(z, 0, sizeof(double) * lsz);
    /* Workspace queries (outside the timed part), with slack: pdsyevd's query can be short. */
    int lw = -1, liw = -1, iq = 0, m = 0, nz = 0;
    double wq = 0, vl = 0, vu = 0;
    if (evr)
      pdsyevr_("V", "I", "U", &g.n, a, &I1, &I1, g.desc, &vl, &vu, &I1, &nocc, &m, &nz, w, z, &I1, &I1, g.desc, &wq,
               &lw, &iq, &liw, &info, 1, 1, 1);
    else pdsyevd_("V", "U", &g.n, a, &I1, &I1, g.desc, w, z, &I1, &I1, g.desc, &wq, &lw, &iq, &liw, &info, 1, 1);
    lw = (int)(1.2 * wq) + 4 * g.n * nb + 1000, liw = iq + 2 * g.n + 1000;
    double *wk = malloc(sizeof(double) * lw);
    int *iw = malloc(sizeof(int) * liw);
    if (!wk || !iw) die_one("out of memory");
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime(), c0 = cpu_now();
    if (evr)
      pdsyevr_("V", "I", "U", &g.n, a, &I1, &I1, g.desc, &vl, &vu, &I1, &nocc, &m, &nz, w, z, &I1, &I1, g.desc, wk, &lw,
               iw, &liw, &info, 1, 1, 1);
    else pdsyevd_("V", "U", &g.n, a, &I1, &I1, g.desc, w, z, &I1, &I1, g.desc, wk, &lw, iw, &liw, &info, 1, 1);
    double t_eig = MPI_Wtime() - t0;
    free(wk), free(iw);
    if (info != 0 || (evr && nz < nocc)) {
      if (rank == 0)
        fprintf(stderr, "eig_sim: %s: info %d (vectors %d of %d)\n", evr ? "pdsyevr" : "pdsyevd", info, nz, nocc);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    double one = 1.0, zero = 0.0;
    if (!strcmp(dens, "syrk")) pdsyrk_("U", "N", &g.n, &nocc, &one, z, &I1, &I1, g.desc, &zero, d, &I1, &I1, g.desc);
    else
      pdgemm_("N", "T", &g.n, &g.n, &nocc, &one, z, &I1, &I1, g.desc, z, &I1, &I1, g.desc, &zero, d, &I1, &I1, g.desc);
    double t_dens = MPI_Wtime() - t0, t_cpu = tmax(cpu_now() - c0);
    t_eig = tmax(t_eig), t_dens = tmax(t_dens);

    /* Checks (after the timed parts). */
    double trd = 0, err = -1, idem = -1;
    int ok = 1;
    for (int c = 0; c < g.lc; c++) {
      int gc = l2g(c, nb, g.mycol, g.npcol);
      for (int r = 0; r < g.lr; r++)
        if (l2g(r, nb, g.myrow, g.nprow) == gc) trd += d[(size_t)c * g.lr + r];
    }
    MPI_Allreduce(MPI_IN_PLACE, &trd, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    if (check) {
      exchange(&g, dfull, d, rank, nproc, 1);
      if (rank == 0) {
        size_t nn = (size_t)g.n * g.n;
        if (!strcmp(dens, "syrk")) /* the upper triangle only */
          for (int c = 0; c < g.n; c++)
            for (int r = c + 1; r < g.n; r++) dfull[(size_t)c * g.n + r] = dfull[(size_t)r * g.n + c];
        double num = 0, den = 0, wmax = 0;
        for (size_t k = 0; k < nn; k++) {
          int r = (int)(k % g.n), c = (int)(k / g.n);
          double ref = dref ? dref[k] : gen_entry(&g, r, c, r < nocc, c < nocc, sp);
          num += (dfull[k] - ref) * (dfull[k] - ref);
          den += ref * ref;
        }
        err = sqrt(num / den);
        int nw = evr ? nocc : g.n;
        for (int i = 0; i < nw; i++) {
          double ref = wref ? wref[i] : gen_lambda(i, g.n, nocc);
          if (fabs(w[i] - ref) > wmax) wmax = fabs(w[i] - ref);
        }
        double *d2 = malloc(sizeof(double) * nn);
        if (!d2) die_one("out of memory");
        dgemm_("N", "N", &g.n, &g.n, &g.n, &one, dfull, &g.n, dfull, &g.n, &zero, d2, &g.n, 1, 1);
        num = 0;
        for (size_t k = 0; k < nn; k++) num += (d2[k] - dfull[k]) * (d2[k] - dfull[k]);
        idem = sqrt(num);
        free(d2);
        ok = err < 1e-10 && idem < 1e-9 && fabs(trd - nocc) < 1e-9 &&
             wmax < 1e-10 * (1.0 + fabs(w[g.n - 1]) + fabs(w[0]));
        printf("# %s: max |lambda - lambda_ref| %.3g over %d eigenvalues\n", evr ? "pdsyevr" : "pdsyevd", wmax, nw);
      }
    }
    if (rank == 0) {
      char homo[32], lumo[32];
      snprintf(homo, sizeof homo, "%.10g", w[nocc - 1]);
      snprintf(lumo, sizeof lumo, evr ? "-" : "%.10g", evr ? 0.0 : w[nocc]);
      printf("%s %d %d %dx%d %d %.6g %.6g %.6g %s %s %.12g %.3g %.3g %s\n", evr ? "pdsyevr" : "pdsyevd", g.n, nproc,
             g.nprow, g.npcol, nb, t_eig + t_dens, t_eig, t_dens, homo, lumo, trd, err, idem,
             check ? (ok ? "PASS" : "FAIL") : "-");
    }
#ifndef SMPI_H
    if (rank == 0)
      printf("# %s: CPU time of the timed part %.6g s (max over ranks; with MPI's busy waiting)\n",
             evr ? "pdsyevr" : "pdsyevd", t_cpu);
#else
    (void)t_cpu;
#endif
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (!ok) {
      blacs_gridexit_(&g.ctxt);
      MPI_Finalize();
      return 1;
    }
  }
  free(a0), free(a), free(z), free(d), free(w), free(v), free(wref), free(dref), free(dfull);
  blacs_gridexit_(&g.ctxt);
  MPI_Finalize();
  return 0;
}
