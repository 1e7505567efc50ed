/* An unchanged ScaLAPACK program: BLACS set-up and pdgemm_ only, linked with
 * ScaLAPACK alone (tests/dropin_test.sh runs it plain, with
 * LD_PRELOAD=libovl_scalapack.so, and linked with -lovl_scalapack first).
 *
 * On every BLACS grid that fits the ranks (1x1, 2x1, 2x2, 1x3, 2x3; the
 * other ranks idle) it multiplies operands whose entries are a formula of
 * their global indices, over cases covering square and rectangular shapes,
 * sub-matrices (IA/JA offsets), transposes N/T/C, block sizes that do not
 * divide the sizes, RSRC/CSRC != 0, LLD larger than the local rows, beta 0
 * (with NaN in C, which must not propagate) and not 0, alpha 0, m, n or
 * k = 0, and PBLAS's type-2 descriptors (11 integers), one of them with a
 * first block smaller than the others (1x1 grid only: a case the drop-in
 * forwards to ScaLAPACK). Each process checks the entries of C it holds against the exact
 * product computed here from the formula, and that everything outside
 * sub(C), including the LLD padding, is untouched.
 *
 * Prints per grid the number of cases, the max error and a checksum of the
 * results, then "dropin_pdgemm: PASS" (exit 0) or "dropin_pdgemm: FAIL"
 * (exit 1) on rank 0.
 * usage: mpiexec -n P dropin_pdgemm [repeat]   (repeat: calls per case, default 1)
 *
 * Then pzgemm_ (complex; the drop-in does not define it) on all ranks,
 * checked against the formula: "pzgemm maxerr=... ok".
 *
 * Shape mode (bench/peers/dropin_shapes.sh): dropin_pdgemm --shape TA TB M N
 * K OFF NB REPS times one shape on the near-square grid of all ranks
 * (sub-matrices at offset OFF, beta 1) and prints the peak RSS; LU mode:
 * dropin_pdgemm --lu N NB [CALLS] times PDGETRF (whose internal pdgemm_ calls the
 * drop-in leaves to ScaLAPACK) and checks the solve of A x = A ones.
 *
 * Timing mode (bench/dropin_bench.sh): mpiexec -n P dropin_pdgemm --bench N NB REPS
 * runs C := A B (N x N, blocks NB x NB, beta 0) on a near-square grid of all
 * P ranks, 1 warm-up + REPS timed calls, each timed as the MAX over ranks,
 * and prints "bench n=N nb=NB grid=PxQ t=<s> ..." on rank 0; a few entries
 * of C are checked against the formula (exit 1 if wrong). */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

/* BLACS and ScaLAPACK (no header ships with them). */
void Cblacs_pinfo(int *mypnum, int *nprocs);
void Cblacs_get(int ctxt, int what, int *val);
void Cblacs_gridinit(int *ctxt, const char *order, int nprow, int npcol);
void Cblacs_gridinfo(int ctxt, int *nprow, int *npcol, int *myrow, int *mycol);
void Cblacs_gridexit(int ctxt);
void Cblacs_exit(int cont);
int numroc_(const int *n, const int *nb, const int *iproc, const int *isrc, const int *nprocs);
void descinit_(int *desc, const int *m, const int *n, const int *mb, const int *nb, const int *irsrc, const int *icsrc,
               const int *ictxt, const int *lld, int *info);
void pdgetrf_(const int *m, const int *n, double *a, const int *ia, const int *ja, const int *desca, int *ipiv,
              int *info);
void pdgetrs_(const char *trans, const int *n, const int *nrhs, const double *a, const int *ia, const int *ja,
              const int *desca, const int *ipiv, double *b, const int *ib, const int *jb, const int *descb, int *info);
void pzgemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k, const double *alpha,
             const double *a, const int *ia, const int *ja, const int *desca, const double *b, const int *ib,
             const int *jb, const int *descb, const double *beta, double *c, const int *ic, const int *jc,
             const int *descc);
void pdgemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k, const double *alpha,
             const double *a, const int *ia, const int *ja, const int *desca, const double *b, const int *ib,
             const int *jb, const int *descb, const double *beta, double *c, const int *ic, const int *jc,
             const int *descc);

#define PAD      3 /* LLD = local rows + PAD */
#define SENTINEL (-4242.0)

/* Entry (i, j) (0-based, global) of operand `which` (0 A, 1 B, 2 C). */
static double val(int which, int i, int j) { return (double)((i * 131 + j * 71 + which * 37) % 97) / 97.0 - 0.5; }

typedef struct bmat {
  int desc[11]; /* type 1 (9 integers) or, see as_type2, PBLAS's type 2 (11) */
  int mloc, nloc, lld;
  double *d;
  int mb, nb, rsrc, csrc;
} bmat;

/* A global M x N matrix, blocks mb x nb, first block on (rsrc, csrc); its
 * entries inside rows [r0, r0+rows) x cols [c0, c0+cols) are val(which) (or
 * NaN if nan), the others SENTINEL (they must never change). */
static void bmat_make(bmat *X, int ctxt, int which, int M, int N, int mb, int nb, int rsrc, int csrc, int r0, int c0,
                      int rows, int cols, int nan) {
  int nprow, npcol, myrow, mycol, info = 0;
  Cblacs_gridinfo(ctxt, &nprow, &npcol, &myrow, &mycol);
  X->mb = mb, X->nb = nb, X->rsrc = rsrc, X->csrc = csrc;
  X->mloc = numroc_(&M, &mb, &myrow, &rsrc, &nprow);
  X->nloc = numroc_(&N, &nb, &mycol, &csrc, &npcol);
  X->lld = (X->mloc > 1 ? X->mloc : 1) + PAD;
  descinit_(X->desc, &M, &N, &mb, &nb, &rsrc, &csrc, &ctxt, &X->lld, &info);
  if (info != 0) {
    fprintf(stderr, "descinit_ failed: info %d\n", info);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  size_t len = (size_t)X->lld * (size_t)(X->nloc > 0 ? X->nloc : 1);
  X->d = malloc(len * sizeof(double));
  for (size_t t = 0; t < len; t++) X->d[t] = SENTINEL;
  for (int lj = 0; lj < X->nloc; lj++) {
    int j = (lj / nb * npcol + (npcol + mycol - csrc) % npcol) * nb + lj % nb;
    for (int li = 0; li < X->mloc; li++) {
      int i = (li / mb * nprow + (nprow + myrow - rsrc) % nprow) * mb + li % mb;
      if (i >= r0 && i < r0 + rows && j >= c0 && j < c0 + cols)
        X->d[li + (size_t)lj * X->lld] = nan ? NAN : val(which, i, j);
    }
  }
}

typedef struct gcase {
  char ta, tb;
  int m, n, k;
  int ia, ja, ib, jb, ic, jc; /* 1-based */
  int mb, nb;                 /* block sizes (A's; B and C use nb, mb) */
  int src;                    /* RSRC = CSRC = src mod the grid */
  double alpha, beta;
  int dtype; /* 0: type-1 descriptors; 2: type 2 (PBLAS's BLOCK_CYCLIC_2D_INB) with whole first blocks;
                3: type 2 with A's first block smaller (IMB < MB: the drop-in forwards it; 1x1 grid only) */
} gcase;

static const gcase cases[] = {
    {'N', 'N', 64, 64, 64, 1, 1, 1, 1, 1, 1, 8, 8, 0, 1.0, 0.0, 0},     /* square */
    {'N', 'N', 50, 37, 23, 1, 1, 1, 1, 1, 1, 7, 5, 0, 1.5, 0.5, 0},     /* rectangular, NB not dividing */
    {'T', 'N', 41, 29, 33, 3, 5, 2, 4, 6, 2, 4, 6, 1, -0.75, 2.0, 0},   /* sub-matrices, transposed A */
    {'N', 'T', 30, 45, 19, 7, 2, 5, 9, 1, 8, 5, 3, 1, 1.0, 0.0, 0},     /* transposed B, beta 0 */
    {'C', 'C', 33, 21, 40, 2, 3, 4, 2, 3, 3, 6, 4, 0, 2.0, -1.0, 0},    /* both 'C' */
    {'T', 'T', 17, 17, 17, 11, 11, 1, 1, 5, 5, 3, 3, 1, 1.0, 1.0, 0},   /* both 'T', offsets */
    {'N', 'N', 100, 80, 90, 1, 1, 1, 1, 1, 1, 64, 64, 0, 1.0, 0.0, 0},  /* NB larger than the local part */
    {'n', 't', 25, 31, 12, 1, 13, 9, 1, 2, 2, 1, 1, 0, 0.5, 0.25, 0},   /* NB = 1, lower-case letters */
    {'N', 'N', 20, 20, 20, 1, 1, 1, 1, 1, 1, 4, 4, 0, 0.0, 0.5, 0},     /* alpha 0: C := beta C */
    {'N', 'N', 20, 20, 20, 1, 1, 1, 1, 1, 1, 4, 4, 0, 0.0, 0.0, 0},     /* alpha 0, beta 0: zeros over NaN */
    {'N', 'N', 15, 12, 0, 2, 2, 2, 2, 2, 2, 4, 4, 0, 1.0, 3.0, 0},      /* k = 0 */
    {'N', 'N', 0, 12, 9, 1, 1, 1, 1, 1, 1, 4, 4, 0, 1.0, 0.0, 0},       /* m = 0 */
    {'T', 'N', 9, 0, 5, 1, 1, 1, 1, 1, 1, 4, 4, 0, 1.0, 0.0, 0},        /* n = 0 */
    {'N', 'N', 1, 1, 1, 3, 3, 3, 3, 3, 3, 2, 2, 1, 1.0, 0.0, 0},        /* 1 x 1 x 1 inside larger matrices */
    {'N', 'T', 130, 70, 110, 1, 1, 1, 1, 1, 1, 16, 16, 0, 1.0, 1.0, 0}, /* larger */
    {'T', 'N', 31, 22, 27, 2, 3, 1, 2, 4, 1, 5, 3, 1, 1.0, 0.5, 2},     /* type-2 descriptors */
    {'N', 'N', 19, 23, 29, 2, 2, 1, 1, 1, 1, 4, 4, 0, 1.0, 0.0, 3}};    /* IMB < MB: forwarded */

/* op(X)(i, j) of the global operand `which`, sub-matrix at (r0, c0) 0-based. */
static double opval(int which, char t, int r0, int c0, int i, int j) {
  int tr = t != 'N' && t != 'n';
  return tr ? val(which, r0 + j, c0 + i) : val(which, r0 + i, c0 + j);
}

/* X's descriptor as PBLAS's type 2: {2, CTXT, M, N, IMB, INB, MB, NB, RSRC,
 * CSRC, LLD}, the first block imb x NB (imb = MB: the same layout). */
static void as_type2(bmat *X, int imb) {
  int d[11] = {2,          X->desc[1], X->desc[2], X->desc[3], imb,       X->desc[5],
               X->desc[4], X->desc[5], X->desc[6], X->desc[7], X->desc[8]};
  memcpy(X->desc, d, sizeof d);
}

/* Runs case cs on grid ctxt; returns the max error on this process (or
 * INFINITY for a changed entry outside sub(C)) and adds to *sum; *ran = 0 if
 * the case does not apply to this grid. */
static double run_case(int ctxt, const gcase *cs, int repeat, double *sum, int *ran) {
  int nprow, npcol, myrow, mycol;
  Cblacs_gridinfo(ctxt, &nprow, &npcol, &myrow, &mycol);
  /* a smaller first block changes the layout on more than one process; this
   * program lays its matrices out with whole first blocks */
  *ran = cs->dtype != 3 || nprow * npcol == 1;
  if (!*ran) return 0.0;
  int tra = cs->ta != 'N' && cs->ta != 'n', trb = cs->tb != 'N' && cs->tb != 'n';
  int ar = tra ? cs->k : cs->m, ac = tra ? cs->m : cs->k; /* sub(A) is ar x ac */
  int br = trb ? cs->n : cs->k, bc = trb ? cs->k : cs->n;
  int src_r = cs->src % nprow, src_c = cs->src % npcol;
  bmat A, B, C;
  /* global sizes: the sub-matrix plus a margin of 2 past it */
  bmat_make(&A, ctxt, 0, cs->ia - 1 + ar + 2, cs->ja - 1 + ac + 2, cs->mb, cs->nb, src_r, src_c, cs->ia - 1, cs->ja - 1,
            ar, ac, 0);
  bmat_make(&B, ctxt, 1, cs->ib - 1 + br + 2, cs->jb - 1 + bc + 1, cs->nb, cs->mb, 0, src_c, cs->ib - 1, cs->jb - 1, br,
            bc, 0);
  int nan = cs->beta == 0.0;
  bmat_make(&C, ctxt, 2, cs->ic - 1 + cs->m + 1, cs->jc - 1 + cs->n + 2, cs->mb, cs->mb, src_r, 0, cs->ic - 1,
            cs->jc - 1, cs->m, cs->n, nan);
  if (cs->dtype) {
    as_type2(&A, cs->dtype == 3 ? 1 : cs->mb);
    as_type2(&B, cs->nb);
    as_type2(&C, cs->mb);
  }
  for (int r = 0; r < repeat; r++) {
    if (r > 0) { /* the same product again: restore C */
      free(C.d);
      bmat_make(&C, ctxt, 2, cs->ic - 1 + cs->m + 1, cs->jc - 1 + cs->n + 2, cs->mb, cs->mb, src_r, 0, cs->ic - 1,
                cs->jc - 1, cs->m, cs->n, nan);
      if (cs->dtype) as_type2(&C, cs->mb);
    }
    char ta[2] = {cs->ta, 0}, tb[2] = {cs->tb, 0};
    pdgemm_(ta, tb, &cs->m, &cs->n, &cs->k, &cs->alpha, A.d, &cs->ia, &cs->ja, A.desc, B.d, &cs->ib, &cs->jb, B.desc,
            &cs->beta, C.d, &cs->ic, &cs->jc, C.desc);
  }
  double err = 0.0;
  for (int lj = 0; lj < (C.nloc > 0 ? C.nloc : 1); lj++)
    for (int li = 0; li < C.lld; li++) {
      double got = C.d[li + (size_t)lj * C.lld];
      int i = (li / C.mb * nprow + (nprow + myrow - C.rsrc) % nprow) * C.mb + li % C.mb;
      int j = (lj / C.nb * npcol + (npcol + mycol - C.csrc) % npcol) * C.nb + lj % C.nb;
      int si = i - (cs->ic - 1), sj = j - (cs->jc - 1);
      if (li >= C.mloc || lj >= C.nloc || si < 0 || si >= cs->m || sj < 0 || sj >= cs->n) {
        if (got != SENTINEL) err = INFINITY; /* outside sub(C): untouched */
        continue;
      }
      double ref = 0.0;
      if (cs->alpha != 0.0) {
        for (int l = 0; l < cs->k; l++)
          ref += opval(0, cs->ta, cs->ia - 1, cs->ja - 1, si, l) * opval(1, cs->tb, cs->ib - 1, cs->jb - 1, l, sj);
        ref *= cs->alpha;
      }
      if (cs->beta != 0.0) ref += cs->beta * val(2, i, j);
      double e = fabs(got - ref);
      if (!(e <= err)) err = isnan(e) ? INFINITY : e;
      *sum += got;
    }
  free(A.d);
  free(B.d);
  free(C.d);
  return err;
}

static int bench(int me, int np, int n, int nb, int reps) {
  int p = 1;
  for (int d = 1; d * d <= np; d++)
    if (np % d == 0) p = d;
  int q = np / p, ctxt, nprow, npcol, myrow, mycol;
  Cblacs_get(-1, 0, &ctxt);
  Cblacs_gridinit(&ctxt, "Row", p, q);
  Cblacs_gridinfo(ctxt, &nprow, &npcol, &myrow, &mycol);
  bmat A, B, C;
  bmat_make(&A, ctxt, 0, n, n, nb, nb, 0, 0, 0, 0, n, n, 0);
  bmat_make(&B, ctxt, 1, n, n, nb, nb, 0, 0, 0, 0, n, n, 0);
  bmat_make(&C, ctxt, 2, n, n, nb, nb, 0, 0, 0, 0, n, n, 1);
  const int one = 1;
  const double alpha = 1.0, beta = 0.0;
  if (me == 0) printf("bench n=%d nb=%d grid=%dx%d", n, nb, p, q);
  for (int r = 0; r <= reps; r++) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t = MPI_Wtime();
    pdgemm_("N", "N", &n, &n, &n, &alpha, A.d, &one, &one, A.desc, B.d, &one, &one, B.desc, &beta, C.d, &one, &one,
            C.desc);
    t = MPI_Wtime() - t;
    MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (me == 0 && r > 0) printf(" t=%.4f", t);
  }
  /* spot check: the first few local entries of C */
  double err = 0.0;
  for (int t = 0; t < 4 && t < C.mloc && t < C.nloc; t++) {
    int i = (t / nb * nprow + myrow) * nb + t % nb, j = (t / nb * npcol + mycol) * nb + t % nb;
    double ref = 0.0;
    for (int l = 0; l < n; l++) ref += val(0, i, l) * val(1, l, j);
    double e = fabs(C.d[t + (size_t)t * C.lld] - ref);
    if (!(e <= err)) err = isnan(e) ? INFINITY : e;
  }
  MPI_Allreduce(MPI_IN_PLACE, &err, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  int ok = err <= 1e-9 * n;
  if (me == 0) printf(" check=%s\n", ok ? "ok" : "WRONG");
  free(A.d);
  free(B.d);
  free(C.d);
  Cblacs_gridexit(ctxt);
  return ok ? 0 : 1;
}

/* The largest resident set of the ranks, MB (getrusage: the process's peak). */
static double peak_rss_mb(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  double mb = (double)ru.ru_maxrss / 1024.0;
  MPI_Allreduce(MPI_IN_PLACE, &mb, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return mb;
}

/* The near-square grid of all ranks (p <= q). */
static int grid_all(int np, int *ctxt) {
  int p = 1;
  for (int d = 1; d * d <= np; d++)
    if (np % d == 0) p = d;
  Cblacs_get(-1, 0, ctxt);
  Cblacs_gridinit(ctxt, "Row", p, np / p);
  return p;
}

/* --shape TA TB M N K OFF NB REPS: C(OFF+1.., OFF+1..) := op(A) op(B) on
 * sub-matrices at offset OFF (beta 1), 1 warm-up + REPS timed calls (MAX
 * over ranks each), a few entries of C checked; prints "shape ... t=..."
 * and the peak RSS. */
static int shape(int me, int np, char ta, char tb, int m, int n, int k, int off, int nb, int reps) {
  int ctxt, nprow, npcol, myrow, mycol;
  grid_all(np, &ctxt);
  Cblacs_gridinfo(ctxt, &nprow, &npcol, &myrow, &mycol);
  int tra = ta != 'N', trb = tb != 'N';
  int ar = tra ? k : m, ac = tra ? m : k, br = trb ? n : k, bc = trb ? k : n;
  bmat A, B, C;
  bmat_make(&A, ctxt, 0, off + ar, off + ac, nb, nb, 0, 0, off, off, ar, ac, 0);
  bmat_make(&B, ctxt, 1, off + br, off + bc, nb, nb, 0, 0, off, off, br, bc, 0);
  bmat_make(&C, ctxt, 2, off + m, off + n, nb, nb, 0, 0, off, off, m, n, 0);
  int i1 = off + 1;
  const double alpha = 1.0, beta = 1.0;
  char sa[2] = {ta, 0}, sb[2] = {tb, 0};
  if (me == 0) printf("shape %c%c m=%d n=%d k=%d off=%d nb=%d grid=%dx%d", ta, tb, m, n, k, off, nb, nprow, npcol);
  for (int r = 0; r <= reps; r++) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t = MPI_Wtime();
    pdgemm_(sa, sb, &m, &n, &k, &alpha, A.d, &i1, &i1, A.desc, B.d, &i1, &i1, B.desc, &beta, C.d, &i1, &i1, C.desc);
    t = MPI_Wtime() - t;
    MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (me == 0 && r > 0) printf(" t=%.7f", t);
  }
  /* C = C0 + (reps + 1) op(A) op(B): check the first local entries of sub(C) */
  double err = 0.0;
  for (int lj = 0, cnt = 0; lj < C.nloc && cnt < 4; lj++)
    for (int li = 0; li < C.mloc && cnt < 4; li++) {
      int i = (li / nb * nprow + myrow) * nb + li % nb, j = (lj / nb * npcol + mycol) * nb + lj % nb;
      if (i < off || j < off) continue;
      double ref = 0.0;
      for (int l = 0; l < k; l++) ref += opval(0, ta, off, off, i - off, l) * opval(1, tb, off, off, l, j - off);
      ref = val(2, i, j) + (reps + 1) * ref;
      double e = fabs(C.d[li + (size_t)lj * C.lld] - ref);
      if (!(e <= err)) err = isnan(e) ? INFINITY : e;
      cnt++;
    }
  MPI_Allreduce(MPI_IN_PLACE, &err, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  int ok = err <= 1e-9 * (k + 1) * (reps + 1);
  double rss = peak_rss_mb();
  if (me == 0) printf(" rss_mb=%.1f check=%s\n", rss, ok ? "ok" : "WRONG");
  free(A.d);
  free(B.d);
  free(C.d);
  Cblacs_gridexit(ctxt);
  return ok ? 0 : 1;
}

/* --lu N NB [CALLS]: PDGETRF of a diagonally dominant N x N matrix (entries
 * val(0, i, j), N on the diagonal), 1 warm-up + CALLS timed factorisations
 * (default 1) of fresh copies, each the MAX over ranks; then PDGETRS for
 * b = A * ones on the last factor: the solution must be ones. Prints
 * "lu n=N ... t=<s> [t=<s> ...] err=..." */
static int lu(int me, int np, int n, int nb, int calls) {
  int ctxt, nprow, npcol, myrow, mycol, info = 0, one = 1;
  grid_all(np, &ctxt);
  Cblacs_gridinfo(ctxt, &nprow, &npcol, &myrow, &mycol);
  bmat A, X;
  bmat_make(&A, ctxt, 0, n, n, nb, nb, 0, 0, 0, 0, n, n, 0);
  bmat_make(&X, ctxt, 1, n, 1, nb, nb, 0, 0, 0, 0, n, 1, 0);
  for (int lj = 0; lj < A.nloc; lj++)
    for (int li = 0; li < A.mloc; li++) {
      int i = (li / nb * nprow + myrow) * nb + li % nb, j = (lj / nb * npcol + mycol) * nb + lj % nb;
      if (i == j) A.d[li + (size_t)lj * A.lld] += n;
    }
  for (int li = 0; li < X.mloc && X.nloc > 0; li++) { /* b_i = sum_j A(i, j) */
    int i = (li / nb * nprow + myrow) * nb + li % nb;
    double s = n;
    for (int j = 0; j < n; j++) s += val(0, i, j);
    X.d[li] = s;
  }
  size_t alen = (size_t)A.lld * (size_t)(A.nloc > 0 ? A.nloc : 0);
  double *A0 = malloc(sizeof(double) * (alen > 0 ? alen : 1));
  if (alen > 0) memcpy(A0, A.d, sizeof(double) * alen);
  int *ipiv = malloc(sizeof(int) * (size_t)(A.mloc + nb));
  if (me == 0) printf("lu n=%d nb=%d grid=%dx%d", n, nb, nprow, npcol);
  for (int r = 0; r <= calls && info == 0; r++) {
    if (alen > 0) memcpy(A.d, A0, sizeof(double) * alen);
    MPI_Barrier(MPI_COMM_WORLD);
    double t = MPI_Wtime();
    pdgetrf_(&n, &n, A.d, &one, &one, A.desc, ipiv, &info);
    t = MPI_Wtime() - t;
    MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (me == 0 && r > 0) printf(" t=%.7f", t);
  }
  if (info == 0) pdgetrs_("N", &n, &one, A.d, &one, &one, A.desc, ipiv, X.d, &one, &one, X.desc, &info);
  double err = info == 0 ? 0.0 : INFINITY;
  for (int li = 0; li < X.mloc && X.nloc > 0; li++) {
    double e = fabs(X.d[li] - 1.0);
    if (!(e <= err)) err = isnan(e) ? INFINITY : e;
  }
  MPI_Allreduce(MPI_IN_PLACE, &err, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  int ok = err <= 1e-10;
  double rss = peak_rss_mb();
  if (me == 0) printf(" err=%.3e rss_mb=%.1f %s\n", err, rss, ok ? "ok" : "WRONG");
  free(ipiv);
  free(A0);
  free(A.d);
  free(X.d);
  Cblacs_gridexit(ctxt);
  return ok ? 0 : 1;
}

/* pzgemm_ (complex, never ovl's) on the grid of all ranks: C := A^T B with
 * A(i, j) = val(0) + i val(1), B(i, j) = val(1) + i val(2), checked against
 * the formula; returns the max error over ranks. */
static double zgemm_check(int np) {
  int ctxt, nprow, npcol, myrow, mycol, info = 0, one = 1;
  grid_all(np, &ctxt);
  Cblacs_gridinfo(ctxt, &nprow, &npcol, &myrow, &mycol);
  const int m = 23, n = 19, k = 29, nb = 4, zero = 0;
  int dims[3][2] = {{k, m}, {k, n}, {m, n}}, desc[3][9];
  double *x[3];
  for (int w = 0; w < 3; w++) {
    int mloc = numroc_(&dims[w][0], &nb, &myrow, &zero, &nprow),
        nloc = numroc_(&dims[w][1], &nb, &mycol, &zero, &npcol);
    int lld = mloc > 1 ? mloc : 1;
    descinit_(desc[w], &dims[w][0], &dims[w][1], &nb, &nb, &zero, &zero, &ctxt, &lld, &info);
    x[w] = calloc((size_t)2 * lld * (nloc > 0 ? nloc : 1), sizeof(double));
    for (int lj = 0; lj < nloc; lj++)
      for (int li = 0; li < mloc; li++) {
        int i = (li / nb * nprow + myrow) * nb + li % nb, j = (lj / nb * npcol + mycol) * nb + lj % nb;
        x[w][2 * (li + (size_t)lj * lld)] = val(w, i, j);
        x[w][2 * (li + (size_t)lj * lld) + 1] = val(w + 1, i, j);
      }
  }
  const double alpha[2] = {1.0, 0.0}, beta[2] = {0.0, 0.0};
  pzgemm_("T", "N", &m, &n, &k, alpha, x[0], &one, &one, desc[0], x[1], &one, &one, desc[1], beta, x[2], &one, &one,
          desc[2]);
  double err = 0.0;
  int mloc = numroc_(&m, &nb, &myrow, &zero, &nprow), nloc = numroc_(&n, &nb, &mycol, &zero, &npcol);
  for (int lj = 0; lj < nloc; lj++)
    for (int li = 0; li < mloc; li++) {
      int i = (li / nb * nprow + myrow) * nb + li % nb, j = (lj / nb * npcol + mycol) * nb + lj % nb;
      double re = 0.0, im = 0.0;
      for (int l = 0; l < k; l++) {
        double ar = val(0, l, i), ai = val(1, l, i), br = val(1, l, j), bi = val(2, l, j);
        re += ar * br - ai * bi, im += ar * bi + ai * br;
      }
      size_t t = 2 * (li + (size_t)lj * desc[2][8]);
      double e = fabs(x[2][t] - re) + fabs(x[2][t + 1] - im);
      if (!(e <= err)) err = isnan(e) ? INFINITY : e;
    }
  MPI_Allreduce(MPI_IN_PLACE, &err, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  for (int w = 0; w < 3; w++) free(x[w]);
  Cblacs_gridexit(ctxt);
  return err;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int me, np;
  Cblacs_pinfo(&me, &np);
  if (argc == 5 && strcmp(argv[1], "--bench") == 0) {
    int rc = bench(me, np, atoi(argv[2]), atoi(argv[3]), atoi(argv[4]));
    fflush(stdout);
    Cblacs_exit(1);
    MPI_Finalize();
    return rc;
  }
  if ((argc == 10 && strcmp(argv[1], "--shape") == 0) || ((argc == 4 || argc == 5) && strcmp(argv[1], "--lu") == 0)) {
    int rc = strcmp(argv[1], "--lu") == 0 ? lu(me, np, atoi(argv[2]), atoi(argv[3]), argc == 5 ? atoi(argv[4]) : 1)
                                          : shape(me, np, argv[2][0], argv[3][0], atoi(argv[4]), atoi(argv[5]),
                                                  atoi(argv[6]), atoi(argv[7]), atoi(argv[8]), atoi(argv[9]));
    fflush(stdout);
    Cblacs_exit(1);
    MPI_Finalize();
    return rc;
  }
  int repeat = argc > 1 ? atoi(argv[1]) : 1;
  if (repeat < 1) repeat = 1;
  const int grids[][2] = {{1, 1}, {2, 1}, {2, 2}, {1, 3}, {2, 3}};
  int fails = 0, ncases = (int)(sizeof cases / sizeof cases[0]);
  for (size_t gi = 0; gi < sizeof grids / sizeof grids[0]; gi++) {
    int p = grids[gi][0], q = grids[gi][1];
    if (p * q > np) continue;
    int ctxt;
    Cblacs_get(-1, 0, &ctxt);
    Cblacs_gridinit(&ctxt, "Row", p, q);
    int nprow, npcol, myrow, mycol;
    Cblacs_gridinfo(ctxt, &nprow, &npcol, &myrow, &mycol);
    double err = 0.0, sum = 0.0;
    int nran = 0;
    if (myrow >= 0 && myrow < p && mycol >= 0 && mycol < q) {
      for (int c = 0; c < ncases; c++) {
        int ran = 0;
        double e = run_case(ctxt, &cases[c], repeat, &sum, &ran);
        nran += ran;
        if (!(e <= 1e-11))
          fprintf(stderr, "dropin_pdgemm: grid %dx%d case %d: error %g on (%d,%d)\n", p, q, c, e, myrow, mycol);
        if (!(e <= err)) err = e;
      }
      Cblacs_gridexit(ctxt);
    }
    double gerr = 0.0, gsum = 0.0;
    MPI_Allreduce(&err, &gerr, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(&sum, &gsum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &nran, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    int ok = gerr <= 1e-11;
    fails += !ok;
    if (me == 0)
      printf("grid %dx%d cases=%d maxerr=%.3e checksum=%.10e %s\n", p, q, nran, gerr, gsum, ok ? "ok" : "WRONG");
  }
  double zerr = zgemm_check(np); /* pzgemm_ is ScaLAPACK's, preloaded or not */
  fails += !(zerr <= 1e-12);
  if (me == 0) printf("pzgemm maxerr=%.3e %s\n", zerr, zerr <= 1e-12 ? "ok" : "WRONG");
  if (me == 0) printf("dropin_pdgemm: %s\n", fails ? "FAIL" : "PASS");
  fflush(stdout);
  Cblacs_exit(1);
  MPI_Finalize();
  return fails ? 1 : 0;
}
