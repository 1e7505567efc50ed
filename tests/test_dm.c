/* The handle API (ovl/dm.h) against LAPACK's generalized eigensolver.
 *
 * A symmetric F with a known gap and a well-conditioned S = I + E are built
 * on every rank; the reference (LAPACKE_dsygvd, or dsyevd without S, on
 * every rank from the same global arrays) gives D = occ C_occ C_occ^T,
 * W = occ C_occ diag(eps_occ) C_occ^T, the band energy occ sum(eps_occ) and
 * the HOMO and LUMO. Checked on every BLACS grid shape of the rank count:
 *  - nspin 1 (occupation 2): D, W, mu, energy, tr(D S) = n_electrons;
 *  - S factorised once: a second solve of a perturbed F reuses it
 *    (results.factorizations stays 1), and with sp2acc that solve starts
 *    from the first one's HOMO and LUMO (results.warm = 1) and needs fewer
 *    iterations;
 *  - nspin 2 (occupation 1): an odd count needs n_electrons_up; each channel
 *    its own F; S removed (NULL) gives the orthonormal answer;
 *  - options by name: set/get, unknown names and bad values;
 *  - bad input: the same error on every rank (NULL handles, an unknown
 *    option, a fractional electron count, nspin 3, ispin out of range). */
#include <lapacke.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bctest.h"
#include "ovl/dm.h"
#include "ovl/pdpurify.h"
#include "ovltest.h"

/* BLACS (no C header ships with it) */
void Cblacs_get(int ctxt, int what, int *val);
void Cblacs_gridinit(int *ctxt, const char *order, int nprow, int npcol);
void Cblacs_gridinfo(int ctxt, int *nprow, int *npcol, int *myrow, int *mycol);
void Cblacs_gridexit(int ctxt);

static uint64_t rng = 88172645463325252ull;
static double urand(void) { /* xorshift64, the same sequence on every rank */
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return (double)(rng >> 11) / 9007199254740992.0;
}

/* F = Q diag(eps) Q^T (Q from Householder reflections), eps with a gap of
 * 0.5 after index gap_at; S = I + E (E small symmetric). */
static void build(int n, int gap_at, double *F, double *S) {
  double *Q = calloc((size_t)n * n, sizeof(double)), *v = malloc(sizeof(double) * n);
  for (int i = 0; i < n; i++) Q[i + (size_t)i * n] = 1;
  for (int k = 0; k < 3; k++) { /* Q := Q (I - 2 v v^T) */
    double nv = 0;
    for (int i = 0; i < n; i++) v[i] = urand() - 0.5, nv += v[i] * v[i];
    for (int i = 0; i < n; i++) v[i] /= sqrt(nv);
    for (int r = 0; r < n; r++) {
      double s = 0;
      for (int c = 0; c < n; c++) s += Q[r + (size_t)c * n] * v[c];
      for (int c = 0; c < n; c++) Q[r + (size_t)c * n] -= 2 * s * v[c];
    }
  }
  for (int r = 0; r < n; r++)
    for (int c = 0; c < n; c++) {
      double s = 0;
      for (int k = 0; k < n; k++) {
        double e = -1.0 + 2.0 * k / n + (k > gap_at ? 0.5 : 0.0);
        s += Q[r + (size_t)k * n] * e * Q[c + (size_t)k * n];
      }
      F[r + (size_t)c * n] = s;
    }
  for (int c = 0; c < n; c++)
    for (int r = 0; r <= c; r++) {
      double e = r == c ? 1.0 : 0.02 * (urand() - 0.5);
      S[r + (size_t)c * n] = S[c + (size_t)r * n] = e;
    }
  free(Q), free(v);
}

typedef struct ref {
  double *D, *W, homo, lumo, energy;
} ref;

/* The eigensolver's D, W (occupation occ), energy, HOMO, LUMO. */
static ref reference(const double *F, const double *S, int n, int nocc, double occ) {
  ref R;
  double *A = malloc(sizeof(double) * n * n), *B = malloc(sizeof(double) * n * n), *eps = malloc(sizeof(double) * n);
  memcpy(A, F, sizeof(double) * n * n);
  int info;
  if (S) {
    memcpy(B, S, sizeof(double) * n * n);
    info = LAPACKE_dsygvd(LAPACK_COL_MAJOR, 1, 'V', 'U', n, A, n, B, n, eps);
  } else info = LAPACKE_dsyevd(LAPACK_COL_MAJOR, 'V', 'U', n, A, n, eps);
  T_CHECK(info == 0, "LAPACKE info %d", info);
  R.D = calloc((size_t)n * n, sizeof(double)), R.W = calloc((size_t)n * n, sizeof(double));
  R.energy = 0;
  for (int k = 0; k < nocc; k++) {
    R.energy += occ * eps[k];
    for (int c = 0; c < n; c++)
      for (int r = 0; r < n; r++) {
        double x = A[r + (size_t)k * n] * A[c + (size_t)k * n];
        R.D[r + (size_t)c * n] += occ * x, R.W[r + (size_t)c * n] += occ * eps[k] * x;
      }
  }
  R.homo = nocc > 0 ? eps[nocc - 1] : NAN, R.lumo = nocc < n ? eps[nocc] : NAN;
  free(A), free(B), free(eps);
  return R;
}

static void ref_free(ref *R) { free(R->D), free(R->W); }

/* Every rank has the same error code and message. */
static void same_everywhere(ovl_err rc, const char *what) {
  unsigned long h = 5381;
  for (const char *c = ovl_errmsg(); *c; c++) h = h * 33 + (unsigned char)*c;
  long v[2] = {(long)rc, (long)(h & 0x7fffffff)}, mn[2], mx[2];
  MPI_Allreduce(v, mn, 2, MPI_LONG, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(v, mx, 2, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
  T_CHECK(mn[0] == mx[0] && mn[1] == mx[1], "%s: the error differs between ranks (%s)", what, ovl_errmsg());
}

/* D, W, energy, mu of one solve against the reference. */
static void check_solve(const grid *G, ovl_dm h, int ispin, const bc *D, const bc *W, const ref *R, int n,
                        const char *what) {
  double *g = malloc(sizeof(double) * n * n);
  bc_gather(G, D, g, n);
  double ed = relfro(g, R->D, n);
  T_CHECK(ed < 1e-8, "%s: D differs from the eigensolver's by %.2e", what, ed);
  if (W) {
    bc_gather(G, W, g, n);
    double ew = relfro(g, R->W, n);
    T_CHECK(ew < 1e-8, "%s: W differs from the eigensolver's by %.2e", what, ew);
  }
  ovl_dm_results r;
  T_OK(ovl_dm_get_results(h, ispin, &r));
  T_CHECK(fabs(r.energy - R->energy) < 1e-9 * (1 + fabs(R->energy)), "%s: energy %.15g, eigensolver %.15g", what,
          r.energy, R->energy);
  T_CHECK(fabs(r.homo - R->homo) < 1e-8 && fabs(r.lumo - R->lumo) < 1e-8, "%s: homo %.12g lumo %.12g, eig %.12g %.12g",
          what, r.homo, r.lumo, R->homo, R->lumo);
  T_CHECK(r.mu > R->homo && r.mu < R->lumo, "%s: mu %.12g outside the gap", what, r.mu);
  T_CHECK(r.iterations > 0 && r.plan[0] != 0, "%s: iterations %d, plan '%s'", what, r.iterations, r.plan);
  free(g);
}

/* tr(D S) from the global arrays. */
static double trace_ds(const grid *G, const bc *D, const double *S, int n) {
  double *g = malloc(sizeof(double) * n * n), t = 0;
  bc_gather(G, D, g, n);
  for (int i = 0; i < n; i++)
    for (int k = 0; k < n; k++) t += g[i + (size_t)k * n] * (S ? S[k + (size_t)i * n] : (i == k));
  free(g);
  return t;
}

static void run_grid(int nprow, int npcol) {
  grid G;
  Cblacs_get(-1, 0, &G.ctxt);
  Cblacs_gridinit(&G.ctxt, "Row", nprow, npcol);
  Cblacs_gridinfo(G.ctxt, &G.nprow, &G.npcol, &G.myrow, &G.mycol);
  const int n = 37;
  char tag[64];
  snprintf(tag, sizeof tag, "%dx%d", nprow, npcol);
  double *F = malloc(sizeof(double) * n * n), *S = malloc(sizeof(double) * n * n);
  double *F2 = malloc(sizeof(double) * n * n), *S2 = malloc(sizeof(double) * n * n);
  build(n, 10, F, S);   /* nocc 11: gap between eps[10] and eps[11] */
  build(n, 11, F2, S2); /* S2 unused */
  bc f = bc_new(&G, n, 4, 3, 0, G.npcol - 1, 1), s = bc_new(&G, n, 5, 5, G.nprow - 1, 0, 1);
  bc d = bc_new(&G, n, 3, 3, 0, 0, 1), w = bc_new(&G, n, 2, 4, 0, 0, 1);
  bc_scatter(&G, &s, S, n);

  /* nspin 1: 22 electrons, occupation 2; sp2acc; S factorised once */
  ovl_dm h = NULL;
  T_OK(ovl_dm_create(G.ctxt, n, 22.0, 1, &h));
  T_OK(ovl_dm_set(h, "method", "sp2acc"));
  char buf[64];
  T_OK(ovl_dm_get(h, "method", buf, sizeof buf));
  T_CHECK(strcmp(buf, "sp2acc") == 0, "get method: %s", buf);
  T_OK(ovl_dm_set_overlap(h, s.a, s.desc));
  bc_scatter(&G, &f, F, n);
  T_OK(ovl_dm_solve(h, 0, f.a, f.desc, d.a, d.desc, w.a, w.desc));
  ref R = reference(F, S, n, 11, 2.0);
  snprintf(tag, sizeof tag, "%dx%d nspin 1", nprow, npcol);
  check_solve(&G, h, 0, &d, &w, &R, n, tag);
  double tr = trace_ds(&G, &d, S, n);
  T_CHECK(fabs(tr - 22.0) < 1e-8, "%s: tr(D S) = %.12g, expected 22", tag, tr);
  ovl_dm_results r1, r2;
  T_OK(ovl_dm_get_results(h, 0, &r1));
  T_CHECK(r1.occupation == 2.0 && r1.n_occ == 11.0 && r1.warm == 0 && r1.factorizations == 1 && r1.solves == 1,
          "%s: occupation %g n_occ %g warm %d factorizations %d solves %d", tag, r1.occupation, r1.n_occ, r1.warm,
          r1.factorizations, r1.solves);
  T_CHECK(r1.t_factor > 0 && r1.t_overlap > 0, "%s: t_factor %g t_overlap %g", tag, r1.t_factor, r1.t_overlap);
  ref_free(&R);
  /* the next SCF cycle: F slightly perturbed; the factor and the previous gap reused */
  double *Fp = malloc(sizeof(double) * n * n);
  for (int c = 0; c < n; c++)
    for (int rr = 0; rr <= c; rr++) {
      double e = 1e-3 * (urand() - 0.5);
      Fp[rr + (size_t)c * n] = F[rr + (size_t)c * n] + e, Fp[c + (size_t)rr * n] = F[c + (size_t)rr * n] + e;
    }
  bc_scatter(&G, &f, Fp, n);
  T_OK(ovl_dm_solve(h, 0, f.a, f.desc, d.a, d.desc, NULL, NULL));
  R = reference(Fp, S, n, 11, 2.0);
  snprintf(tag, sizeof tag, "%dx%d nspin 1, cycle 2", nprow, npcol);
  check_solve(&G, h, 0, &d, NULL, &R, n, tag);
  T_OK(ovl_dm_get_results(h, 0, &r2));
  T_CHECK(r2.factorizations == 1 && r2.solves == 2, "%s: factorizations %d solves %d (S must be factorised once)", tag,
          r2.factorizations, r2.solves);
  T_CHECK(r2.warm == 1 && r2.iterations < r1.iterations,
          "%s: warm %d, iterations %d after %d cold (the previous gap must save iterations)", tag, r2.warm,
          r2.iterations, r1.iterations);
  if (G.myrow == 0 && G.mycol == 0)
    printf("%s: sp2acc iterations %d cold, %d warm; factor %.2e s once, triangular solves %.2e s per solve\n", tag,
           r1.iterations, r2.iterations, r2.t_factor, r2.t_overlap);
  ref_free(&R);
  /* the caller's estimates win over the previous solve's */
  T_OK(ovl_dm_set(h, "homo", "-0.5"));
  T_OK(ovl_dm_set(h, "lumo", "0.3"));
  T_OK(ovl_dm_solve(h, 0, f.a, f.desc, d.a, d.desc, NULL, NULL));
  T_OK(ovl_dm_get_results(h, 0, &r2));
  T_CHECK(r2.warm == 2, "caller's estimates: warm %d", r2.warm);
  /* estimates that miss the gap (about -0.46 .. 0.09): never a wrong D */
  T_OK(ovl_dm_set(h, "homo", "0.7"));
  T_OK(ovl_dm_set(h, "lumo", "0.8"));
  T_OK(ovl_dm_solve(h, 0, f.a, f.desc, d.a, d.desc, NULL, NULL));
  T_OK(ovl_dm_get_results(h, 0, &r2));
  R = reference(Fp, S, n, 11, 2.0);
  snprintf(tag, sizeof tag, "%dx%d estimates off the gap (warm %d)", nprow, npcol, r2.warm);
  check_solve(&G, h, 0, &d, NULL, &R, n, tag);
  if (G.myrow == 0 && G.mycol == 0) printf("%s\n", tag);
  ref_free(&R);
  T_OK(ovl_dm_destroy(&h));
  T_CHECK(h == NULL, "destroy must null the handle");

  /* nspin 2: 23 electrons; the split is the caller's (12 up, 11 down) */
  T_OK(ovl_dm_create(G.ctxt, n, 23.0, 2, &h));
  T_OK(ovl_dm_set_overlap(h, s.a, s.desc));
  bc_scatter(&G, &f, F, n);
  ovl_err rc = ovl_dm_solve(h, 0, f.a, f.desc, d.a, d.desc, NULL, NULL);
  T_CHECK(rc == OVL_ERR_ARG && strstr(ovl_errmsg(), "n_electrons_up"), "odd count without a split: %s", ovl_errmsg());
  same_everywhere(rc, "odd count without a split");
  T_OK(ovl_dm_set(h, "n_electrons_up", "12"));
  T_OK(ovl_dm_get(h, "n_electrons_down", buf, sizeof buf));
  T_CHECK(atof(buf) == 11.0, "n_electrons_down %s", buf);
  T_OK(ovl_dm_set(h, "method", "trs4"));
  T_OK(ovl_dm_solve(h, 0, f.a, f.desc, d.a, d.desc, w.a, w.desc));
  R = reference(F, S, n, 12, 1.0);
  snprintf(tag, sizeof tag, "%dx%d nspin 2 up", nprow, npcol);
  check_solve(&G, h, 0, &d, &w, &R, n, tag);
  tr = trace_ds(&G, &d, S, n);
  T_CHECK(fabs(tr - 12.0) < 1e-8, "%s: tr(D S) = %.12g, expected 12", tag, tr);
  ref_free(&R);
  bc_scatter(&G, &f, F2, n);
  T_OK(ovl_dm_solve(h, 1, f.a, f.desc, d.a, d.desc, w.a, w.desc));
  R = reference(F2, S, n, 11, 1.0);
  snprintf(tag, sizeof tag, "%dx%d nspin 2 down", nprow, npcol);
  check_solve(&G, h, 1, &d, &w, &R, n, tag);
  T_OK(ovl_dm_get_results(h, 1, &r1));
  T_CHECK(r1.occupation == 1.0 && r1.n_occ == 11.0 && r1.factorizations == 1, "%s: occupation %g n_occ %g fact %d", tag,
          r1.occupation, r1.n_occ, r1.factorizations);
  ref_free(&R);
  /* S removed: the orthonormal answer */
  T_OK(ovl_dm_set_overlap(h, NULL, NULL));
  T_OK(ovl_dm_solve(h, 1, f.a, f.desc, d.a, d.desc, NULL, NULL));
  R = reference(F2, NULL, n, 11, 1.0);
  snprintf(tag, sizeof tag, "%dx%d nspin 2, no S", nprow, npcol);
  check_solve(&G, h, 1, &d, NULL, &R, n, tag);
  ref_free(&R);

  /* options by name */
  T_OK(ovl_dm_get(h, "ndup", buf, sizeof buf));
  T_CHECK(strcmp(buf, "auto") == 0, "get ndup before set: %s", buf);
  T_OK(ovl_dm_set(h, "ndup", "2"));
  T_OK(ovl_dm_get(h, "ndup", buf, sizeof buf));
  T_CHECK(strcmp(buf, "2") == 0, "get ndup: %s", buf);
  T_OK(ovl_dm_set(h, "tol", "1e-10"));
  T_OK(ovl_dm_get(h, "max-iter", buf, sizeof buf));
  T_CHECK(strcmp(buf, "200") == 0, "get max-iter: %s", buf);
  rc = ovl_dm_set(h, "ndup", "many");
  T_CHECK(rc == OVL_ERR_ARG && strstr(ovl_errmsg(), "ndup"), "bad ndup: %s", ovl_errmsg());
  rc = ovl_dm_set(h, "algo", "alg5"); /* trs4 squares with the symmetric square */
  T_CHECK(rc == OVL_ERR_ARG && strstr(ovl_errmsg(), "algo"), "algo with trs4: %s", ovl_errmsg());
  rc = ovl_dm_set(h, "no-such-knob", "1");
  T_CHECK(rc == OVL_ERR_ARG && strstr(ovl_errmsg(), "no-such-knob"), "unknown option: %s", ovl_errmsg());
  same_everywhere(rc, "unknown option");
  T_ERR(ovl_dm_get(h, "no-such-knob", buf, sizeof buf), OVL_ERR_ARG);
  T_ERR(ovl_dm_set(h, "n_electrons_up", "12.5"), OVL_ERR_ARG);
  T_ERR(ovl_dm_set(h, "ndup", "2 --method sp2"), OVL_ERR_ARG);
  /* the options set reach the solve: ndup 2 in the plan */
  T_OK(ovl_dm_solve(h, 1, f.a, f.desc, d.a, d.desc, NULL, NULL));
  T_OK(ovl_dm_get_results(h, 1, &r1));
  T_CHECK(strstr(r1.plan, "ndup=2") != NULL, "plan with ndup 2: %s", r1.plan);
  rc = ovl_dm_solve(h, 2, f.a, f.desc, d.a, d.desc, NULL, NULL);
  T_CHECK(rc == OVL_ERR_ARG && strstr(ovl_errmsg(), "ispin"), "ispin 2: %s", ovl_errmsg());
  same_everywhere(rc, "ispin out of range");
  T_ERR(ovl_dm_get_results(h, 2, &r1), OVL_ERR_ARG);
  T_OK(ovl_dm_destroy(&h));

  /* bad creation: the same error everywhere, no handle */
  rc = ovl_dm_create(G.ctxt, n, 21.0, 1, &h);
  T_CHECK(rc == OVL_ERR_ARG && h == NULL && strstr(ovl_errmsg(), "integer"), "21 electrons, nspin 1: %s", ovl_errmsg());
  same_everywhere(rc, "odd count, nspin 1");
  rc = ovl_dm_create(G.ctxt, n, 10.3, 2, &h);
  T_CHECK(rc == OVL_ERR_ARG && h == NULL && strstr(ovl_errmsg(), "integer"), "10.3 electrons: %s", ovl_errmsg());
  same_everywhere(rc, "fractional count");
  rc = ovl_dm_create(G.ctxt, n, 10.0, 3, &h);
  T_CHECK(rc == OVL_ERR_ARG && h == NULL && strstr(ovl_errmsg(), "nspin"), "nspin 3: %s", ovl_errmsg());
  same_everywhere(rc, "nspin 3");
  rc = ovl_dm_create(G.ctxt, n, 2.0 * n + 2, 1, &h);
  T_CHECK(rc == OVL_ERR_ARG && h == NULL, "too many electrons: %s", ovl_errmsg());
  same_everywhere(rc, "too many electrons");

  Cblacs_gridexit(G.ctxt);
  free(F), free(S), free(F2), free(S2), free(Fp);
  free(f.a), free(s.a), free(d.a), free(w.a);
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* test_dm --time N CYCLES: one SCF-like sequence of CYCLES solves with S
 * (n = N, blocks 64, the most square grid), by ovl_pdpurify (S factorised
 * every call) and by the handle (once); rank 0 prints the medians (the
 * slowest rank's time per call; the two interleaved, cycle by cycle). */
static void time_cycles(int n, int cycles) {
  int P = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  int pr = 1;
  for (int p = 1; p * p <= P; p++)
    if (P % p == 0) pr = p;
  grid G;
  Cblacs_get(-1, 0, &G.ctxt);
  Cblacs_gridinit(&G.ctxt, "Row", pr, P / pr);
  Cblacs_gridinfo(G.ctxt, &G.nprow, &G.npcol, &G.myrow, &G.mycol);
  double *F = malloc(sizeof(double) * n * n), *S = malloc(sizeof(double) * n * n);
  build(n, n / 4 - 1, F, S);
  bc f = bc_new(&G, n, 64, 64, 0, 0, 1), s = bc_new(&G, n, 64, 64, 0, 0, 1), d = bc_new(&G, n, 64, 64, 0, 0, 1);
  bc_scatter(&G, &f, F, n), bc_scatter(&G, &s, S, n);
  double *tp = malloc(sizeof(double) * cycles), *th = malloc(sizeof(double) * cycles);
  ovl_pdpurify_info info;
  ovl_dm h = NULL;
  ovl_dm_results r;
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  T_OK(ovl_dm_create(G.ctxt, n, 2.0 * (n / 4), 1, &h));
  T_OK(ovl_dm_set_overlap(h, s.a, s.desc));
  double tset = MPI_Wtime() - t0;
  for (int k = 0; k < cycles; k++) { /* interleaved: both see the same machine */
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    T_OK(ovl_pdpurify(f.a, f.desc, s.a, s.desc, n / 4, d.a, d.desc, NULL, NULL, NULL, NULL, NULL, &info));
    tp[k] = MPI_Wtime() - t0;
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    T_OK(ovl_dm_solve(h, 0, f.a, f.desc, d.a, d.desc, NULL, NULL));
    th[k] = MPI_Wtime() - t0;
  }
  T_OK(ovl_dm_get_results(h, 0, &r));
  T_OK(ovl_dm_destroy(&h));
  MPI_Allreduce(MPI_IN_PLACE, tp, cycles, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, th, cycles, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &tset, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  qsort(tp, cycles, sizeof(double), cmp_double), qsort(th, cycles, sizeof(double), cmp_double);
  if (G.myrow == 0 && G.mycol == 0)
    printf("n %d, %d ranks (%d x %d), %d cycles, sp2 with S: ovl_pdpurify %.3f s per call (S part %.3f s); "
           "handle: create + set_overlap %.3f s once (factor %.3f s), %.3f s per solve (S part %.3f s)\n",
           n, P, G.nprow, G.npcol, cycles, tp[cycles / 2], info.t_overlap, tset, r.t_factor, th[cycles / 2],
           r.t_overlap);
  Cblacs_gridexit(G.ctxt);
  free(F), free(S), free(f.a), free(s.a), free(d.a), free(tp), free(th);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int P = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  if (argc == 4 && strcmp(argv[1], "--time") == 0) {
    time_cycles(atoi(argv[2]), atoi(argv[3]));
    int rc = t_finish("test_dm --time");
    MPI_Finalize();
    return rc;
  }
  /* NULL handles: OVL_ERR_ARG, never a crash */
  ovl_dm_results r;
  char buf[8];
  int desc[9] = {0};
  double x = 0;
  T_ERR(ovl_dm_create(0, 4, 2.0, 1, NULL), OVL_ERR_ARG);
  T_ERR(ovl_dm_set(NULL, "method", "sp2"), OVL_ERR_ARG);
  T_ERR(ovl_dm_get(NULL, "method", buf, sizeof buf), OVL_ERR_ARG);
  T_ERR(ovl_dm_set_overlap(NULL, &x, desc), OVL_ERR_ARG);
  T_ERR(ovl_dm_solve(NULL, 0, &x, desc, &x, desc, NULL, NULL), OVL_ERR_ARG);
  T_ERR(ovl_dm_get_results(NULL, 0, &r), OVL_ERR_ARG);
  T_ERR(ovl_dm_destroy(NULL), OVL_ERR_ARG);
  ovl_dm none = NULL;
  T_OK(ovl_dm_destroy(&none)); /* NULL-safe, as every destroy */
  for (int p = 1; p <= P; p++)
    if (P % p == 0) run_grid(p, P / p);
  int rc = t_finish("test_dm");
  MPI_Finalize();
  return rc;
}
