/* ovl_pdpurify against ScaLAPACK's eigensolver on the shipped Fock matrices.
 *
 * For each case and each BLACS grid shape of the rank count, and a few block
 * sizes (square and MB != NB, RSRC/CSRC != 0): D, the band energy, HOMO/LUMO
 * and W = D F D from ovl_pdpurify are compared with the eigensolver's
 * D_eig = C_occ C_occ^T, sum(eps_occ) and W_eig = C_occ diag(eps_occ)
 * C_occ^T, computed with PDSYEVD on a square-block copy. The non-orthogonal
 * path, with two kinds of overlap matrix, the reference by PDPOTRF + PDSYGST +
 * PDSYEVD and C = U^-1 Z (PDTRSM):
 *  - PySCF's (S=pyscf): the AO Fock matrix F and overlap S of the SCF that
 *    gave the case's F' = S^-1/2 F S^-1/2 (fock_ao.raw, overlap.raw of
 *    water_ccpvdz, c10h22_631g, h2o8_ccpvdz); besides the eigensolver's
 *    results, tr(D S) = n_occ, and the band energy tr(D F), HOMO and LUMO
 *    against meta.json's e_trace, homo and lumo (of F', the same spectrum);
 *  - a constructed one (S=built): S = U^T U with U = I + a small upper
 *    triangular perturbation, and F_S = U^T F' U (same spectrum, so the same
 *    gap); well conditioned, not a basis's overlap.
 * Then bad input: every rank gets the same error. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bctest.h"
#include "ovl/dm.h"
#include "ovl/pdpurify.h"
#include "ovltest.h"
#include "scalapack.h" /* BLACS and ScaLAPACK prototypes (bench/peers) */

/* max |a(i,j) - a(j,i)| of the n x n global array a. */
static double max_asym(const double *a, int n) {
  double m = 0;
  for (int j = 0; j < n; j++)
    for (int i = 0; i < j; i++) m = fmax(m, fabs(a[i + (size_t)j * n] - a[j + (size_t)i * n]));
  return m;
}

/* The eigensolver's reference: D_eig, W_eig (global), eps (n), from F and,
 * when given, S (global arrays), on a square-block layout nb. */
static void reference(const grid *G, const double *F, const double *S, int n, int nocc, int nb, double *Dg, double *Wg,
                      double *eps) {
  bc A = bc_new(G, n, nb, nb, 0, 0, 0), Z = bc_new(G, n, nb, nb, 0, 0, 0), B = bc_new(G, n, nb, nb, 0, 0, 0);
  bc_scatter(G, &A, F, n);
  int one = 1, info = 0;
  if (S) {
    bc_scatter(G, &B, S, n);
    pdpotrf_("U", &n, B.a, &one, &one, B.desc, &info);
    T_CHECK(info == 0, "pdpotrf info %d", info);
    double scale = 1;
    pdsygst_(&one, "U", &n, A.a, &one, &one, A.desc, B.a, &one, &one, B.desc, &scale, &info);
    T_CHECK(info == 0 && scale == 1.0, "pdsygst info %d scale %g", info, scale);
  }
  double wq = 0;
  int iwq = 0, lwork = -1, liwork = -1;
  pdsyevd_("V", "U", &n, A.a, &one, &one, A.desc, eps, Z.a, &one, &one, Z.desc, &wq, &lwork, &iwq, &liwork, &info);
  lwork = 2 * (int)wq + n * nb + 10000, liwork = (iwq > 1 ? iwq : 1) + 1000;
  double *work = malloc(sizeof(double) * (size_t)lwork);
  int *iwork = malloc(sizeof(int) * (size_t)liwork);
  pdsyevd_("V", "U", &n, A.a, &one, &one, A.desc, eps, Z.a, &one, &one, Z.desc, work, &lwork, iwork, &liwork, &info);
  T_CHECK(info == 0, "pdsyevd info %d", info);
  free(work), free(iwork);
  if (S) { /* C = U^-1 Z */
    double al = 1.0;
    pdtrsm_("L", "U", "N", "N", &n, &n, &al, B.a, &one, &one, B.desc, Z.a, &one, &one, Z.desc);
  }
  /* D = C_occ C_occ^T; W = (C_occ diag(eps)) C_occ^T */
  double al = 1.0, be = 0.0;
  pdgemm_("N", "T", &n, &n, &nocc, &al, Z.a, &one, &one, Z.desc, Z.a, &one, &one, Z.desc, &be, A.a, &one, &one, A.desc);
  bc_gather(G, &A, Dg, n);
  for (int c = 0; c < Z.nloc; c++) {
    int gc = l2g(c, nb, G->mycol, 0, G->npcol);
    for (int r = 0; r < Z.mloc; r++) B.a[r + (size_t)c * B.desc[8]] = Z.a[r + (size_t)c * Z.desc[8]] * eps[gc];
  }
  pdgemm_("N", "T", &n, &n, &nocc, &al, B.a, &one, &one, B.desc, Z.a, &one, &one, Z.desc, &be, A.a, &one, &one, A.desc);
  bc_gather(G, &A, Wg, n);
  free(A.a), free(Z.a), free(B.a);
}

typedef struct fcase {
  const char *name;
  int n, nocc;
  double *F;                  /* orthogonal basis */
  double *FS;                 /* U^T F U */
  double *S;                  /* U^T U */
  double *FA, *SA;            /* PySCF's AO Fock and overlap matrices (NULL when the case has none) */
  double e_trace, homo, lumo; /* meta.json */
} fcase;

enum { S_NONE, S_BUILT, S_PYSCF };
static const char *s_name[] = {"none", "built", "pyscf"};

/* n x n from a raw row-major file of a symmetric matrix; NULL if it cannot be read. */
static double *read_sym(const char *dir, const char *name, const char *file, int n) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s/%s", dir, name, file);
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  double *a = malloc(sizeof(double) * (size_t)n * n);
  size_t got = fread(a, sizeof(double), (size_t)n * n, f);
  fclose(f);
  if (got != (size_t)n * n) {
    free(a);
    return NULL;
  }
  for (int i = 0; i < n; i++) /* row-major file, symmetric: symmetrise exactly */
    for (int j = 0; j < i; j++) a[i + (size_t)j * n] = a[j + (size_t)i * n];
  return a;
}

static double meta_num(const char *buf, const char *key) {
  const char *p = strstr(buf, key);
  return p ? strtod(p + strlen(key), NULL) : NAN;
}

static int load_case(const char *name, fcase *c) {
  const char *dir = getenv("OVL_TEST_DATA");
  char path[4096];
  memset(c, 0, sizeof *c);
  c->name = name;
  snprintf(path, sizeof path, "%s/%s/meta.json", dir ? dir : "data", name);
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  char buf[8192];
  size_t len = fread(buf, 1, sizeof buf - 1, f);
  buf[len] = 0;
  fclose(f);
  const char *p = strstr(buf, "\"n_occ\":");
  const char *q = strstr(buf, "\"n\":");
  if (!p || !q) return -1;
  c->nocc = atoi(p + 8), c->n = atoi(q + 4);
  c->e_trace = meta_num(buf, "\"e_trace\":");
  c->homo = meta_num(buf, "\"homo\":"), c->lumo = meta_num(buf, "\"lumo\":");
  int n = c->n;
  c->F = read_sym(dir ? dir : "data", name, "fock.raw", n);
  if (!c->F) return -1;
  if (strstr(buf, "\"ao_files\":")) { /* n_ao = n: Lowdin cases */
    c->FA = read_sym(dir ? dir : "data", name, "fock_ao.raw", n);
    c->SA = read_sym(dir ? dir : "data", name, "overlap.raw", n);
    if (!c->FA || !c->SA) return -1;
  }
  /* U = I + small upper triangle; S = U^T U, FS = U^T F U */
  double *U = calloc((size_t)n * n, sizeof(double)), *T = calloc((size_t)n * n, sizeof(double));
  c->S = calloc((size_t)n * n, sizeof(double));
  c->FS = calloc((size_t)n * n, sizeof(double));
  for (int j = 0; j < n; j++)
    for (int i = 0; i <= j; i++)
      U[i + (size_t)j * n] = i == j ? 1.0 + 0.1 * sin(1.0 + j) : 0.3 / sqrt((double)n) * sin(0.37 * i + 1.3 * j);
  for (int j = 0; j < n; j++)
    for (int i = 0; i < n; i++) {
      double s = 0, t = 0;
      for (int k = 0; k <= (i < j ? i : j); k++) s += U[k + (size_t)i * n] * U[k + (size_t)j * n];
      for (int k = 0; k <= j; k++) t += c->F[i + (size_t)k * n] * U[k + (size_t)j * n];
      c->S[i + (size_t)j * n] = s, T[i + (size_t)j * n] = t; /* T = F U */
    }
  for (int j = 0; j < n; j++)
    for (int i = 0; i <= j; i++) {
      double s = 0;
      for (int k = 0; k <= i; k++) s += U[k + (size_t)i * n] * T[k + (size_t)j * n];
      c->FS[i + (size_t)j * n] = c->FS[j + (size_t)i * n] = s;
    }
  free(U), free(T);
  return 0;
}

/* with_s: S_NONE (F'), S_BUILT (U^T F' U, U^T U) or S_PYSCF (the AO F and S). */
static void run_case(const grid *G, const fcase *c, int with_s, int mb, int nb, int rsrc, int csrc, int want_w,
                     ovl_purify_method method) {
  int n = c->n, rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (with_s == S_PYSCF && !c->FA) {
    T_CHECK(0, "%s: no AO matrices (fock_ao.raw, overlap.raw)", c->name);
    return;
  }
  const double *Fg = with_s == S_PYSCF ? c->FA : with_s ? c->FS : c->F;
  const double *Sg = with_s == S_PYSCF ? c->SA : with_s ? c->S : NULL;
  double *Dr = malloc(sizeof(double) * (size_t)n * n), *Wr = malloc(sizeof(double) * (size_t)n * n);
  double *Dg = malloc(sizeof(double) * (size_t)n * n), *eps = malloc(sizeof(double) * (size_t)n);
  reference(G, Fg, Sg, n, c->nocc, 8, Dr, Wr, eps);
  bc F = bc_new(G, n, mb, nb, rsrc % G->nprow, csrc % G->npcol, 1);
  bc S = bc_new(G, n, nb, mb, 0, 0, 0);
  bc D = bc_new(G, n, nb, nb, 0, csrc % G->npcol, 0);
  bc W = bc_new(G, n, mb, mb, rsrc % G->nprow, 0, 2);
  bc_scatter(G, &F, Fg, n);
  if (with_s) bc_scatter(G, &S, Sg, n);
  ovl_pdpurify_params prm = ovl_pdpurify_params_default();
  prm.method = method;
  double mu = 0, e = 0;
  ovl_pdpurify_info info;
  ovl_err rc = ovl_pdpurify(F.a, F.desc, with_s ? S.a : NULL, with_s ? S.desc : NULL, c->nocc, D.a, D.desc,
                            want_w ? W.a : NULL, want_w ? W.desc : NULL, &prm, &mu, &e, &info);
  T_CHECK(rc == OVL_OK, "%s S=%s %dx%d mb=%d nb=%d: ovl_pdpurify: %s: %s", c->name, s_name[with_s], G->nprow, G->npcol,
          mb, nb, ovl_err_name(rc), ovl_errmsg());
  if (rc == OVL_OK) {
    bc_gather(G, &D, Dg, n);
    T_CHECK(max_asym(Dg, n) == 0.0, "%s S=%s %s: D is not exactly symmetric: max |D - D^T| = %.3e", c->name,
            s_name[with_s], ovl_purify_method_name(method), max_asym(Dg, n));
    double eref = 0;
    for (int i = 0; i < c->nocc; i++) eref += eps[i];
    double errD = relfro(Dg, Dr, n), errE = fabs(e - eref) / fabs(eref);
    double homo = c->nocc > 0 ? eps[c->nocc - 1] : 0, lumo = c->nocc < n ? eps[c->nocc] : 0;
    double errmu = fabs(mu - 0.5 * (homo + lumo)), errW = 0, errM = -1;
    T_CHECK(errD <= 1e-8, "%s S=%s grid %dx%d mb=%d nb=%d: ||D - D_eig||/||D_eig|| = %.3e", c->name, s_name[with_s],
            G->nprow, G->npcol, mb, nb, errD);
    T_CHECK(errE <= 1e-8, "%s S=%s: energy %.15g vs %.15g (rel %.2e)", c->name, s_name[with_s], e, eref, errE);
    T_CHECK(errmu <= 1e-6 * (fabs(homo) + fabs(lumo) + 1), "%s S=%s: mu %.12g vs (HOMO+LUMO)/2 = %.12g", c->name,
            s_name[with_s], mu, 0.5 * (homo + lumo));
    T_CHECK(fabs(info.homo - homo) <= 1e-6 && fabs(info.lumo - lumo) <= 1e-6,
            "%s S=%s: HOMO/LUMO %.12g %.12g vs %.12g %.12g", c->name, s_name[with_s], info.homo, info.lumo, homo, lumo);
    /* tr(D S) = n_occ (tr D without S) */
    double trDS = 0;
    for (size_t i = 0; i < (size_t)n * n; i++) trDS += Dg[i] * (Sg ? Sg[i] : (i % (size_t)(n + 1) == 0));
    T_CHECK(fabs(trDS - (double)c->nocc) <= 1e-8, "%s S=%s: tr(D S) = %.15g, n_occ = %d", c->name, s_name[with_s], trDS,
            c->nocc);
    if (with_s == S_PYSCF) { /* PySCF's F and S have the spectrum of the shipped F': meta.json's numbers */
      errM = fabs(e - c->e_trace) / fabs(c->e_trace);
      T_CHECK(errM <= 1e-8, "%s S=pyscf: energy %.15g vs meta.json e_trace %.15g (rel %.2e)", c->name, e, c->e_trace,
              errM);
      T_CHECK(fabs(info.homo - c->homo) <= 1e-6 && fabs(info.lumo - c->lumo) <= 1e-6,
              "%s S=pyscf: HOMO/LUMO %.12g %.12g vs meta.json %.12g %.12g", c->name, info.homo, info.lumo, c->homo,
              c->lumo);
    }
    if (want_w) {
      bc_gather(G, &W, Dg, n);
      errW = relfro(Dg, Wr, n);
      T_CHECK(max_asym(Dg, n) == 0.0, "%s S=%s: W is not exactly symmetric: max |W - W^T| = %.3e", c->name,
              s_name[with_s], max_asym(Dg, n));
      T_CHECK(errW <= 1e-8, "%s S=%s: ||W - W_eig||/||W_eig|| = %.3e", c->name, s_name[with_s], errW);
      /* the padding rows of W's local array (LLD_ larger) are untouched */
      for (int col = 0; col < W.nloc; col++)
        for (int r = W.mloc; r < W.desc[8]; r++)
          T_CHECK(isnan(W.a[r + (size_t)col * W.desc[8]]), "W padding written at (%d, %d)", r, col);
    }
    char meta[64] = "";
    if (errM >= 0) snprintf(meta, sizeof meta, ", |E-e_trace(meta)| %.1e", errM);
    if (rank == 0)
      printf("%-14s S=%-5s %s grid %dx%d kernel %dx%dx%d MB=%d NB=%d: iter %d, |D-D_eig| %.2e, |E-E_eig| %.2e, mu "
             "err %.2e, |W-W_eig| %.2e, |tr(DS)-nocc| %.1e%s\n",
             c->name, s_name[with_s], ovl_purify_method_name(method), G->nprow, G->npcol, info.s, info.s, info.c, mb,
             nb, info.iterations, errD, errE, errmu, errW, fabs(trDS - (double)c->nocc), meta);
  }
  free(F.a), free(S.a), free(D.a), free(W.a), free(Dr), free(Wr), free(Dg), free(eps);
}

/* The block-sparse route (params.sparse): with PySCF's S through S^(-1/2), at threshold 0 the eigensolver's D,
 * W, HOMO and LUMO; at 1e-7 within the filtering; every method of the route; as an option string; refused
 * for canonical and float32, and in a handle whose overlap was prepared for the other route. */
static void sparse_route(const grid *G, const fcase *c) {
  int n = c->n;
  double *Dr = malloc(sizeof(double) * (size_t)n * n), *Wr = malloc(sizeof(double) * (size_t)n * n);
  double *Dg = malloc(sizeof(double) * (size_t)n * n), *ev = malloc(sizeof(double) * (size_t)n);
  reference(G, c->FA, c->SA, n, c->nocc, 8, Dr, Wr, ev);
  double homo = ev[c->nocc - 1], lumo = ev[c->nocc];
  bc F = bc_new(G, n, 8, 8, 0, 0, 0), S = bc_new(G, n, 8, 8, 0, 0, 0), D = bc_new(G, n, 8, 8, 0, 0, 0);
  bc W = bc_new(G, n, 8, 8, 0, 0, 0);
  bc_scatter(G, &F, c->FA, n);
  bc_scatter(G, &S, c->SA, n);
  const double eps[] = {0.0, 1e-7};
  const ovl_purify_method m[] = {OVL_PURIFY_SP2, OVL_PURIFY_TRS4, OVL_PURIFY_SP2ACC};
  for (int k = 0; k < 3; k++) {
    ovl_pdpurify_params prm = ovl_pdpurify_params_default();
    prm.method = m[k], prm.sparse = eps[k % 2], prm.sparse_block = k == 1 ? 5 : 16;
    double tol = prm.sparse > 0 ? 100 * prm.sparse : 1e-9, e = 0;
    ovl_pdpurify_info info;
    T_OK(ovl_pdpurify(F.a, F.desc, S.a, S.desc, c->nocc, D.a, D.desc, W.a, W.desc, &prm, NULL, &e, &info));
    bc_gather(G, &D, Dg, n);
    double errD = relfro(Dg, Dr, n);
    T_CHECK(errD <= tol && max_asym(Dg, n) == 0.0, "%s sparse %g %s: ||D - D_eig|| / ||D_eig|| = %.3e, asym %.1e",
            c->name, prm.sparse, ovl_purify_method_name(m[k]), errD, max_asym(Dg, n));
    bc_gather(G, &W, Dg, n);
    double errW = relfro(Dg, Wr, n);
    T_CHECK(errW <= tol, "%s sparse %g: ||W - W_eig|| / ||W_eig|| = %.3e", c->name, prm.sparse, errW);
    T_CHECK(fabs(info.homo - homo) <= 1e-6 + tol && fabs(info.lumo - lumo) <= 1e-6 + tol,
            "%s sparse %g: HOMO/LUMO %.10g %.10g vs %.10g %.10g", c->name, prm.sparse, info.homo, info.lumo, homo,
            lumo);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0)
      printf("%-14s sparse %g %s blocks of %d: iter %d, |D-D_eig| %.2e, |W-W_eig| %.2e\n", c->name, prm.sparse,
             ovl_purify_method_name(m[k]), prm.sparse_block, info.iterations, errD, errW);
  }
  ovl_pdpurify_params prm = ovl_pdpurify_params_default();
  prm.options = "--method sp2 --sparse 0 --sparse-block 12";
  T_OK(ovl_pdpurify(F.a, F.desc, S.a, S.desc, c->nocc, D.a, D.desc, NULL, NULL, &prm, NULL, NULL, NULL));
  bc_gather(G, &D, Dg, n);
  T_CHECK(relfro(Dg, Dr, n) <= 1e-9, "%s --sparse 0 as an option: %.3e", c->name, relfro(Dg, Dr, n));
  int P = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  for (int rep = 2; rep <= P; rep *= 2) { /* the 2.5D product on rep layers (c given): s x s x rep = P */
    int s = (int)lround(sqrt((double)P / rep));
    if (s * s * rep != P || (rep > s && s != 1)) continue;
    prm = ovl_pdpurify_params_default();
    prm.method = OVL_PURIFY_TRS4, prm.sparse = 1e-7, prm.sparse_block = 16, prm.c = rep, prm.ndup = 2;
    T_OK(ovl_pdpurify(F.a, F.desc, S.a, S.desc, c->nocc, D.a, D.desc, NULL, NULL, &prm, NULL, NULL, NULL));
    bc_gather(G, &D, Dg, n);
    T_CHECK(relfro(Dg, Dr, n) <= 1e-5, "%s sparse 1e-7 on %d layers: %.3e", c->name, rep, relfro(Dg, Dr, n));
  }
  prm = ovl_pdpurify_params_default();
  prm.method = OVL_PURIFY_CANONICAL, prm.sparse = 1e-6;
  T_ERR(ovl_pdpurify(F.a, F.desc, NULL, NULL, c->nocc, D.a, D.desc, NULL, NULL, &prm, NULL, NULL, NULL), OVL_ERR_ARG);
  T_CHECK(strstr(ovl_errmsg(), "runs sp2, sp2acc or trs4") != NULL, "message: %s", ovl_errmsg());
  prm = ovl_pdpurify_params_default(); /* mixed precision: float32 products, the density as at float64 */
  prm.options = "--method sp2 --sparse 1e-7 -P mixed";
  T_OK(ovl_pdpurify(F.a, F.desc, S.a, S.desc, c->nocc, D.a, D.desc, NULL, NULL, &prm, NULL, NULL, NULL));
  bc_gather(G, &D, Dg, n);
  /* (float32's error stays in D's eigenvectors: about 1e-5 here, as in the dense mixed precision's 1e-6) */
  T_CHECK(relfro(Dg, Dr, n) <= 1e-4, "%s sparse 1e-7 mixed: %.3e", c->name, relfro(Dg, Dr, n));
  prm = ovl_pdpurify_params_default();
  prm.sparse = 2.0;
  T_ERR(ovl_pdpurify(F.a, F.desc, NULL, NULL, c->nocc, D.a, D.desc, NULL, NULL, &prm, NULL, NULL, NULL), OVL_ERR_ARG);
  /* a handle: the overlap is prepared for the route set when it is given */
  ovl_dm h = NULL;
  T_OK(ovl_dm_create(G->ctxt, n, 2.0 * c->nocc, 1, &h));
  T_OK(ovl_dm_set_overlap(h, S.a, S.desc));
  T_OK(ovl_dm_set(h, "sparse", "0"));
  T_ERR(ovl_dm_solve(h, 0, F.a, F.desc, D.a, D.desc, NULL, NULL), OVL_ERR_ARG);
  T_CHECK(strstr(ovl_errmsg(), "set it again") != NULL, "message: %s", ovl_errmsg());
  T_OK(ovl_dm_set_overlap(h, S.a, S.desc));
  T_OK(ovl_dm_solve(h, 0, F.a, F.desc, D.a, D.desc, NULL, NULL));
  bc_gather(G, &D, Dg, n);
  for (size_t i = 0; i < (size_t)n * n; i++) Dg[i] *= 0.5; /* the handle's occupation 2 */
  T_CHECK(relfro(Dg, Dr, n) <= 1e-9, "%s handle, sparse 0: %.3e", c->name, relfro(Dg, Dr, n));
  ovl_dm_destroy(&h);
  free(F.a), free(S.a), free(D.a), free(W.a), free(Dr), free(Wr), free(Dg), free(ev);
}

/* An SCF loop's second call: the default method (SP2-ACC, SP2's steps without estimates) given the first
 * call's info.homo and info.lumo needs at most 0.7 of its iterations for the same density (the same HOMO,
 * LUMO and energy); estimates that miss the gap (inside the occupied levels) cost iterations, not the
 * answer. */
static void scf_second_call(const grid *G, const fcase *c) {
  int n = c->n;
  bc F = bc_new(G, n, 8, 8, 0, 0, 0), D = bc_new(G, n, 8, 8, 0, 0, 0);
  bc_scatter(G, &F, c->F, n);
  ovl_pdpurify_params prm = ovl_pdpurify_params_default();
  T_CHECK(prm.method == OVL_PURIFY_SP2ACC, "default method %d", (int)prm.method);
  ovl_pdpurify_info i0, i1, i2;
  double e0 = 0, e1 = 0, e2 = 0;
  T_OK(ovl_pdpurify(F.a, F.desc, NULL, NULL, c->nocc, D.a, D.desc, NULL, NULL, &prm, NULL, &e0, &i0));
  prm.homo = i0.homo, prm.lumo = i0.lumo;
  T_OK(ovl_pdpurify(F.a, F.desc, NULL, NULL, c->nocc, D.a, D.desc, NULL, NULL, &prm, NULL, &e1, &i1));
  T_CHECK(100 * i1.iterations <= 70 * i0.iterations, "%s: %d iterations with the previous HOMO/LUMO, %d without",
          c->name, i1.iterations, i0.iterations);
  double g = 0.5 * (i0.lumo - i0.homo);
  prm.homo = i0.homo - 3 * g, prm.lumo = i0.homo - g;
  T_OK(ovl_pdpurify(F.a, F.desc, NULL, NULL, c->nocc, D.a, D.desc, NULL, NULL, &prm, NULL, &e2, &i2));
  T_CHECK(i2.iterations > i0.iterations, "%s: %d iterations with estimates that miss the gap, %d without", c->name,
          i2.iterations, i0.iterations);
  T_CHECK(fabs(e1 - e0) <= 1e-10 * fabs(e0) && fabs(e2 - e0) <= 1e-10 * fabs(e0), "%s: energies %.15g %.15g %.15g",
          c->name, e0, e1, e2);
  T_CHECK(fabs(i1.homo - i0.homo) <= 1e-8 && fabs(i2.homo - i0.homo) <= 1e-8 && fabs(i1.lumo - i0.lumo) <= 1e-8 &&
              fabs(i2.lumo - i0.lumo) <= 1e-8,
          "%s: HOMO/LUMO %.12g/%.12g, %.12g/%.12g, %.12g/%.12g", c->name, i0.homo, i0.lumo, i1.homo, i1.lumo, i2.homo,
          i2.lumo);
  free(F.a), free(D.a);
}

/* Bad input: the same error on every rank, nothing hangs. */
static void bad_input(const grid *G, const fcase *c) {
  int n = c->n;
  bc F = bc_new(G, n, 8, 8, 0, 0, 0), D = bc_new(G, n, 8, 8, 0, 0, 0);
  bc_scatter(G, &F, c->F, n);
  int desc[9];
  memcpy(desc, F.desc, sizeof desc);
  desc[0] = 2;
  T_ERR(ovl_pdpurify(F.a, desc, NULL, NULL, c->nocc, D.a, D.desc, NULL, NULL, NULL, NULL, NULL, NULL), OVL_ERR_ARG);
  T_CHECK(strstr(ovl_errmsg(), "DTYPE_") != NULL, "message: %s", ovl_errmsg());
  memcpy(desc, D.desc, sizeof desc);
  desc[5] = 0;
  T_ERR(ovl_pdpurify(F.a, F.desc, NULL, NULL, c->nocc, D.a, desc, NULL, NULL, NULL, NULL, NULL, NULL), OVL_ERR_ARG);
  memcpy(desc, D.desc, sizeof desc);
  desc[2] = n + 1;
  T_ERR(ovl_pdpurify(F.a, F.desc, NULL, NULL, c->nocc, D.a, desc, NULL, NULL, NULL, NULL, NULL, NULL), OVL_ERR_ARG);
  memcpy(desc, D.desc, sizeof desc);
  desc[6] = G->nprow; /* RSRC_ outside the grid */
  T_ERR(ovl_pdpurify(F.a, F.desc, NULL, NULL, c->nocc, D.a, desc, NULL, NULL, NULL, NULL, NULL, NULL), OVL_ERR_ARG);
  /* LLD_ too small on one process only: still agreed */
  memcpy(desc, D.desc, sizeof desc);
  if (G->myrow == 0 && G->mycol == 0 && D.mloc > 1) desc[8] = 1;
  T_ERR(ovl_pdpurify(F.a, F.desc, NULL, NULL, c->nocc, D.a, desc, NULL, NULL, NULL, NULL, NULL, NULL), OVL_ERR_ARG);
  T_ERR(ovl_pdpurify(F.a, F.desc, NULL, NULL, n + 1, D.a, D.desc, NULL, NULL, NULL, NULL, NULL, NULL), OVL_ERR_ARG);
  T_ERR(ovl_pdpurify(F.a, F.desc, F.a, NULL, c->nocc, D.a, D.desc, NULL, NULL, NULL, NULL, NULL, NULL), OVL_ERR_ARG);
  ovl_pdpurify_params prm = ovl_pdpurify_params_default();
  prm.method = OVL_PURIFY_MCWEENY;
  T_ERR(ovl_pdpurify(F.a, F.desc, NULL, NULL, c->nocc, D.a, D.desc, NULL, NULL, &prm, NULL, NULL, NULL), OVL_ERR_ARG);
  prm = ovl_pdpurify_params_default();
  prm.ndup = OVL_LANES_MAX + 1; /* 0 is open: the planner's */
  T_ERR(ovl_pdpurify(F.a, F.desc, NULL, NULL, c->nocc, D.a, D.desc, NULL, NULL, &prm, NULL, NULL, NULL), OVL_ERR_ARG);
  /* run-time options: the string over the fields, rank 0's $OVL_OPTIONS for every process, unknown ones refused */
  ovl_pdpurify_info i0, i1;
  T_OK(ovl_pdpurify(F.a, F.desc, NULL, NULL, c->nocc, D.a, D.desc, NULL, NULL, NULL, NULL, NULL, &i0));
  prm = ovl_pdpurify_params_default();
  prm.options = "--method trs4 --ndup 2";
  T_OK(ovl_pdpurify(F.a, F.desc, NULL, NULL, c->nocc, D.a, D.desc, NULL, NULL, &prm, NULL, NULL, &i1));
  T_CHECK(i1.iterations != i0.iterations, "--method trs4: %d iterations, as sp2", i1.iterations);
  prm.options = "--max-iter 1";
  T_ERR(ovl_pdpurify(F.a, F.desc, NULL, NULL, c->nocc, D.a, D.desc, NULL, NULL, &prm, NULL, NULL, NULL),
        OVL_ERR_NUMERIC);
  if (G->myrow == 0 && G->mycol == 0) setenv("OVL_OPTIONS", "--max-iter 1 --iterations 3", 1);
  T_ERR(ovl_pdpurify(F.a, F.desc, NULL, NULL, c->nocc, D.a, D.desc, NULL, NULL, NULL, NULL, NULL, NULL),
        OVL_ERR_NUMERIC);
  prm.options = "--max-iter 200"; /* the string wins over the environment */
  T_OK(ovl_pdpurify(F.a, F.desc, NULL, NULL, c->nocc, D.a, D.desc, NULL, NULL, &prm, NULL, NULL, NULL));
  if (G->myrow == 0 && G->mycol == 0) unsetenv("OVL_OPTIONS");
  prm.options = "--method trs4 --bogus 3";
  T_ERR(ovl_pdpurify(F.a, F.desc, NULL, NULL, c->nocc, D.a, D.desc, NULL, NULL, &prm, NULL, NULL, NULL), OVL_ERR_ARG);
  T_CHECK(strstr(ovl_errmsg(), "options: unknown option '--bogus'") != NULL, "message: %s", ovl_errmsg());
  {
    char mine[512], r0[512];
    snprintf(mine, sizeof mine, "%s", ovl_errmsg());
    memcpy(r0, mine, sizeof r0);
    MPI_Bcast(r0, sizeof r0, MPI_CHAR, 0, MPI_COMM_WORLD);
    T_CHECK(strcmp(r0, mine) == 0, "option messages differ: '%s' vs '%s'", mine, r0);
  }
  /* an invalid context: this process is in no grid of it */
  memcpy(desc, F.desc, sizeof desc);
  desc[1] = 12345;
  T_ERR(ovl_pdpurify(F.a, desc, NULL, NULL, c->nocc, D.a, D.desc, NULL, NULL, NULL, NULL, NULL, NULL), OVL_ERR_ARG);
  /* S not positive definite: -I */
  double *Sg = calloc((size_t)n * n, sizeof(double));
  for (int i = 0; i < n; i++) Sg[i + (size_t)i * n] = -1.0;
  bc S = bc_new(G, n, 8, 8, 0, 0, 0);
  bc_scatter(G, &S, Sg, n);
  T_ERR(ovl_pdpurify(F.a, F.desc, S.a, S.desc, c->nocc, D.a, D.desc, NULL, NULL, NULL, NULL, NULL, NULL),
        OVL_ERR_NUMERIC);
  /* F not symmetric */
  double *Fg = malloc(sizeof(double) * (size_t)n * n);
  memcpy(Fg, c->F, sizeof(double) * (size_t)n * n);
  Fg[1] += 1.0;
  bc_scatter(G, &F, Fg, n);
  T_ERR(ovl_pdpurify(F.a, F.desc, NULL, NULL, c->nocc, D.a, D.desc, NULL, NULL, NULL, NULL, NULL, NULL),
        OVL_ERR_NUMERIC);
  /* the messages agree: compare rank 0's */
  char msg[512];
  snprintf(msg, sizeof msg, "%s", ovl_errmsg());
  char m0[512];
  memcpy(m0, msg, sizeof m0);
  MPI_Bcast(m0, sizeof m0, MPI_CHAR, 0, MPI_COMM_WORLD);
  T_CHECK(strcmp(m0, msg) == 0, "messages differ: '%s' vs '%s'", msg, m0);
  free(Sg), free(Fg), free(F.a), free(D.a), free(S.a);
}

/* Under AddressSanitizer (the suite's time on 2 cores): the alkane with PySCF's S on the first grid shape only. */
#ifdef __SANITIZE_ADDRESS__
static const int quick = 1;
#else
static const int quick = 0;
#endif

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int P = 1, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  fcase water, alk;
  memset(&water, 0, sizeof water), memset(&alk, 0, sizeof alk);
  int ok = load_case("water_ccpvdz", &water) == 0 && load_case("c10h22_631g", &alk) == 0;
  T_CHECK(ok, "cannot read the cases water_ccpvdz and c10h22_631g under OVL_TEST_DATA");
  T_CHECK(!ok || (water.FA && alk.FA), "water_ccpvdz and c10h22_631g have no AO matrices (fock_ao.raw, overlap.raw)");
  fcase big[2];
  int big_ok[2] = {load_case("h2o8_ccpvdz", &big[0]) == 0, load_case("c40h42_sto3g", &big[1]) == 0};
  for (int x = 0; x < 2; x++) T_CHECK(big_ok[x], "cannot read case %d", x);
  if (ok) {
    /* every grid shape p x q = P (at most three) */
    int shapes[3][2], ns = 0;
    for (int p = 1; p <= P && ns < 3; p++)
      if (P % p == 0 && (p == 1 || p * p >= P / 2 || P / p == 1)) shapes[ns][0] = p, shapes[ns][1] = P / p, ns++;
    static const int blocks[][4] = {{8, 8, 0, 0}, {3, 5, 1, 1}, {16, 4, 0, 1}, {32, 32, 1, 0}};
    for (int k = 0; k < ns; k++) {
      grid G;
      Cblacs_get(-1, 0, &G.ctxt);
      Cblacs_gridinit(&G.ctxt, "Row", shapes[k][0], shapes[k][1]);
      Cblacs_gridinfo(G.ctxt, &G.nprow, &G.npcol, &G.myrow, &G.mycol);
      const int *b = blocks[k % 4];
      const int *b2 = blocks[(k + 1) % 4];
      run_case(&G, &water, S_NONE, b[0], b[1], b[2], b[3], 1, OVL_PURIFY_SP2);
      run_case(&G, &water, S_BUILT, b[0], b[1], b[2], b[3], 1, OVL_PURIFY_SP2);
      run_case(&G, &water, S_PYSCF, b[0], b[1], b[2], b[3], 1, OVL_PURIFY_SP2);
      run_case(&G, &alk, k % 2 ? S_BUILT : S_NONE, b2[0], b2[1], 1, 0, 1, k == 0 ? OVL_PURIFY_TRS4 : OVL_PURIFY_SP2);
      if (k == 0 || !quick)
        run_case(&G, &alk, S_PYSCF, b2[0], b2[1], 0, 1, 1, k == 1 ? OVL_PURIFY_TRS4 : OVL_PURIFY_SP2);
      if (k == 0) {
        run_case(&G, &alk, S_BUILT, 7, 7, 0, 0, 0, OVL_PURIFY_SP2);
        run_case(&G, &water, S_NONE, 4, 4, 0, 0, 0, OVL_PURIFY_CANONICAL);
        run_case(&G, &water, S_PYSCF, 4, 4, 0, 0, 0, OVL_PURIFY_CANONICAL);
        if (big_ok[1]) run_case(&G, &big[1], S_NONE, 16, 16, 0, 0, 0, OVL_PURIFY_CANONICAL); /* D written as is */
        /* the larger cases once each: h2o8 with PySCF's S, c40h42 (a smaller gap) without */
        for (size_t x = 0; x < sizeof big / sizeof big[0]; x++)
          if (big_ok[x]) run_case(&G, &big[x], x == 0 ? S_PYSCF : S_NONE, 16, 16, 0, 0, 1, OVL_PURIFY_SP2);
        bad_input(&G, &water);
        sparse_route(&G, &alk);
        scf_second_call(&G, &water);
      }
      Cblacs_gridexit(G.ctxt);
    }
    /* a column-major BLACS grid (the process map differs; the context's communicator is still row by row) */
    for (int k = 0; k < ns; k++)
      if (shapes[k][0] > 1 && shapes[k][1] > 1) {
        grid G;
        Cblacs_get(-1, 0, &G.ctxt);
        Cblacs_gridinit(&G.ctxt, "Col", shapes[k][0], shapes[k][1]);
        Cblacs_gridinfo(G.ctxt, &G.nprow, &G.npcol, &G.myrow, &G.mycol);
        run_case(&G, &alk, S_BUILT, 5, 3, 1, 1, 1, OVL_PURIFY_SP2);
        run_case(&G, &water, S_PYSCF, 5, 3, 1, 1, 1, OVL_PURIFY_SP2);
        Cblacs_gridexit(G.ctxt);
        break;
      }
  }
  fcase *all[] = {&water, &alk, &big[0], &big[1]};
  for (int x = 0; x < 4; x++) free(all[x]->F), free(all[x]->FS), free(all[x]->S), free(all[x]->FA), free(all[x]->SA);
  int rc = t_finish("test_pdpurify");
  Cblacs_exit(1);
  MPI_Finalize();
  return rc;
}
