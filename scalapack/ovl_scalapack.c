/* libovl_scalapack.so: ScaLAPACK's PDGEMM (and PDSYMM) for unchanged programs,
 * taken by ovl only where it wins.
 *
 * The library defines the Fortran symbols pdgemm_ and pdsymm_ with PBLAS's
 * arguments and semantics. A program gets them instead of ScaLAPACK's by
 * linking -lovl_scalapack before ScaLAPACK (-lscalapack-openmpi or
 * -lscalapack-mpich on Debian), or at run time with
 * LD_PRELOAD=libovl_scalapack.so. Each call runs on ovl (ovl_pdgemm, by the
 * route ovl_pdgemm_route chooses: SUMMA on ScaLAPACK's own layout, whose
 * workspace is only the panels, or the operands redistributed to ovl's
 * block layout, multiplied by SUMMA and C converted back) when that pays
 * and fits, and is forwarded to the real ScaLAPACK routine when it cannot;
 * the real routine is the next definition after this library in the lookup
 * order (dlsym(RTLD_NEXT)), or failing that the one in the ScaLAPACK library
 * it was built with (for the same MPI), opened by name.
 *
 * Forwarded, by reason (each decided from arguments that PBLAS requires to be
 * the same on every process of the grid, from where the call comes (the same
 * code on every process), or from a verdict or error ovl has agreed over the
 * grid, so all processes take the same road):
 *   disabled      OVL_SCALAPACK_DISABLE=1 (or any value but 0/empty);
 *   internal      the caller is ScaLAPACK itself (PDGETRF, PDPOTRF...: the
 *                 return address lies in an object whose file name starts
 *                 with libscalapack, by dladdr); ScaLAPACK's own blocking
 *                 is left alone;
 *   small         ovl_pdgemm_route: the cost model (or OVL_OPTIONS
 *                 --dropin-min) says ScaLAPACK is faster for this shape
 *                 (rank-k updates, mat-vec, small sizes);
 *   memory        ovl_pdgemm_route: the workspace of both of ovl's routes
 *                 would pass the cap (OVL_OPTIONS --dropin-mem; default
 *                 0.3 x the operands' bytes per rank), or of the one
 *                 --dropin-route forces. The converted route's workspace is
 *                 kept between calls, so it never grows past the cap;
 *   route         OVL_OPTIONS --dropin-route scalapack;
 *   trans         TRANSA/TRANSB (PDSYMM: SIDE/UPLO) not a valid letter;
 *   descriptor    a descriptor neither of type 1 (BLOCK_CYCLIC_2D) nor of
 *                 PBLAS's type 2 with whole first blocks (IMB_ = MB_ and
 *                 INB_ = NB_, which is type 1 in 11 integers);
 *   context       A, B and C in different BLACS contexts;
 *   replicated    RSRC_ or CSRC_ = -1 (PBLAS's replicated operands);
 *   invalid       an argument PBLAS rejects (ovl_pdgemm: OVL_ERR_ARG or
 *                 OVL_ERR_SIZE); ScaLAPACK then reports it (PXERBLA) as usual;
 *   unsupported   ovl_pdgemm returned OVL_ERR_UNSUPPORTED (a BLACS whose
 *                 grid communicator is not ordered row by row);
 *   error         any other error of ovl before data moved (memory, MPI).
 *
 * Report: OVL_SCALAPACK_REPORT=1 prints, at exit of the process (an atexit
 * handler, so after MPI_Finalize; chosen over interposing MPI_Finalize, which
 * would export an MPI name and clash with profiling tools), the counts of
 * world rank 0 to stderr (in_layout: the calls ovl ran on ScaLAPACK's
 * layout); OVL_SCALAPACK_REPORT=all prints every rank's. The
 * counts are per process: PDGEMM is collective over a grid, so rank 0's
 * counts are those of every grid it belongs to.
 *
 * psgemm_, pcgemm_ and pzgemm_ are not defined here: they stay ScaLAPACK's.
 *
 * Not thread-safe, as ovl_pdgemm. */
#define _GNU_SOURCE /* RTLD_NEXT */
#include <dlfcn.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ovl/pdgemm.h"

/* The exported names (PBLAS's Fortran interface, every argument a pointer;
 * PBLAS is written in C and takes no hidden string lengths). */
void pdgemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k, const double *alpha,
             const double *a, const int *ia, const int *ja, const int *desca, const double *b, const int *ib,
             const int *jb, const int *descb, const double *beta, double *c, const int *ic, const int *jc,
             const int *descc);
void pdsymm_(const char *side, const char *uplo, const int *m, const int *n, const double *alpha, const double *a,
             const int *ia, const int *ja, const int *desca, const double *b, const int *ib, const int *jb,
             const int *descb, const double *beta, double *c, const int *ic, const int *jc, const int *descc);

typedef void (*pdgemm_fn)(const char *, const char *, const int *, const int *, const int *, const double *,
                          const double *, const int *, const int *, const int *, const double *, const int *,
                          const int *, const int *, const double *, double *, const int *, const int *, const int *);
typedef void (*pdsymm_fn)(const char *, const char *, const int *, const int *, const double *, const double *,
                          const int *, const int *, const int *, const double *, const int *, const int *, const int *,
                          const double *, double *, const int *, const int *, const int *);
void Cblacs_gridinfo(int ctxt, int *nprow, int *npcol, int *myrow, int *mycol);

enum reason {
  R_DISABLED,
  R_INTERNAL,
  R_SMALL,
  R_MEMORY,
  R_ROUTE,
  R_TRANS,
  R_DESC,
  R_CONTEXT,
  R_REPLICATED,
  R_INVALID,
  R_UNSUPPORTED,
  R_ERROR,
  R_COUNT
};
static const char *const reason_name[R_COUNT] = {"disabled",   "internal", "small",       "memory",
                                                 "route",      "trans",    "descriptor",  "context",
                                                 "replicated", "invalid",  "unsupported", "error"};
static const char *const reason_text[R_COUNT] = {"OVL_SCALAPACK_DISABLE is set",
                                                 "called from inside ScaLAPACK (PDGETRF, PDPOTRF...)",
                                                 "ScaLAPACK is faster here (cost model, or OVL_OPTIONS --dropin-min)",
                                                 "workspace over the cap (OVL_OPTIONS --dropin-mem)",
                                                 "OVL_OPTIONS --dropin-route scalapack",
                                                 "TRANS/SIDE/UPLO not a valid letter",
                                                 "descriptor not type 1, nor type 2 with IMB = MB, INB = NB",
                                                 "operands in different BLACS contexts",
                                                 "RSRC_ or CSRC_ = -1 (replicated operand)",
                                                 "argument rejected (ScaLAPACK reports it)",
                                                 "not supported by ovl (see ovl_pdgemm)",
                                                 "ovl error before data moved"};

enum routine { F_GEMM, F_SYMM, F_COUNT };
static const char *const routine_name[F_COUNT] = {"pdgemm", "pdsymm"};

static struct {
  int init;
  int disabled, report; /* report: 0 none, 1 rank 0, 2 every rank */
  int rank;             /* MPI_COMM_WORLD rank, -1 if unknown */
  long calls[F_COUNT], by_ovl[F_COUNT], by_layout[F_COUNT], forwarded[F_COUNT][R_COUNT];
  void *lib; /* dlopen handle of the fallback ScaLAPACK, if opened */
} g = {.rank = -1};

static void report(void) {
  if (!g.report || (g.report == 1 && g.rank != 0)) return;
  for (int f = 0; f < F_COUNT; f++) {
    if (f == F_SYMM && g.calls[f] == 0) continue;
    long fwd = 0;
    for (int r = 0; r < R_COUNT; r++) fwd += g.forwarded[f][r];
    fprintf(stderr, "ovl_scalapack: rank %d: %s calls=%ld ovl=%ld forwarded=%ld in_layout=%ld\n", g.rank,
            routine_name[f], g.calls[f], g.by_ovl[f], fwd, g.by_layout[f]);
    for (int r = 0; r < R_COUNT; r++)
      if (g.forwarded[f][r])
        fprintf(stderr, "ovl_scalapack: rank %d: %s forwarded reason=%s count=%ld (%s)\n", g.rank, routine_name[f],
                reason_name[r], g.forwarded[f][r], reason_text[r]);
  }
  fflush(stderr);
}

static int env_on(const char *name) {
  const char *v = getenv(name);
  return v && v[0] && strcmp(v, "0") != 0;
}

static void init_once(void) {
  if (g.init) return;
  g.init = 1;
  g.disabled = env_on("OVL_SCALAPACK_DISABLE");
  const char *r = getenv("OVL_SCALAPACK_REPORT");
  g.report = !env_on("OVL_SCALAPACK_REPORT") ? 0 : strcmp(r, "all") == 0 ? 2 : 1;
  int up = 0, down = 0;
  MPI_Initialized(&up);
  MPI_Finalized(&down);
  if (up && !down) MPI_Comm_rank(MPI_COMM_WORLD, &g.rank);
  if (g.report) atexit(report);
}

/* The real ScaLAPACK routine NAME: the next definition after this library,
 * else the one in the ScaLAPACK library of the build (OVL_SCALAPACK_REAL and
 * _FILE: its file names, set by scalapack/CMakeLists.txt for the MPI of the
 * build). Fatal if there is none (a void Fortran routine has no way to return
 * an error). */
#ifndef OVL_SCALAPACK_FILE
#define OVL_SCALAPACK_FILE "libscalapack.so"
#endif
#ifndef OVL_SCALAPACK_REAL
#define OVL_SCALAPACK_REAL OVL_SCALAPACK_FILE
#endif
static void *real_symbol(const char *name, const void *self) {
  void *p = dlsym(RTLD_NEXT, name);
  if (p && p != self) return p;
  const char *libs[] = {OVL_SCALAPACK_REAL, OVL_SCALAPACK_FILE};
  for (size_t i = 0; !g.lib && i < sizeof libs / sizeof libs[0]; i++) g.lib = dlopen(libs[i], RTLD_NOW | RTLD_GLOBAL);
  p = g.lib ? dlsym(g.lib, name) : NULL;
  if (p && p != self) return p;
  ovl_fatal(MPI_COMM_WORLD, OVL_ERR_UNSUPPORTED,
            "libovl_scalapack: the real ScaLAPACK %s was not found (link ScaLAPACK (%s) after "
            "-lovl_scalapack, or preload libovl_scalapack.so into a program linked with ScaLAPACK)",
            name, OVL_SCALAPACK_FILE);
}

/* 1 when the code at ADDR (a return address) belongs to a ScaLAPACK
 * library (its file name starts with libscalapack): a call that ScaLAPACK's
 * own routines make (PDGETRF's trailing updates, PDPOTRF's...) is theirs to
 * tune, so it is left to ScaLAPACK. The verdict of the last few addresses is
 * kept (dladdr walks the loaded objects). */
static int from_scalapack(const void *addr) {
  enum { KEEP = 8 };
  static struct {
    const void *addr;
    int inside;
  } seen[KEEP];
  static int next;
  for (int i = 0; i < KEEP; i++)
    if (seen[i].addr == addr && addr) return seen[i].inside;
  Dl_info info;
  int inside = 0;
  if (addr && dladdr(addr, &info) && info.dli_fname) {
    const char *base = strrchr(info.dli_fname, '/');
    base = base ? base + 1 : info.dli_fname;
    inside = strncmp(base, "libscalapack", 12) == 0;
  }
  seen[next].addr = addr, seen[next].inside = inside;
  next = (next + 1) % KEEP;
  return inside;
}

static int trans_ok(const char *t) { return t && strchr("NnTtCc", t[0]) && t[0]; }

/* PBLAS's descriptor of type 2 (BLOCK_CYCLIC_2D_INB: 11 integers, with the
 * sizes IMB_/INB_ of the first block) is a type-1 descriptor when the first
 * block is a whole one; PBLAS converts type 1 to it internally. */
enum { D2_CTXT = 1, D2_M, D2_N, D2_IMB, D2_INB, D2_MB, D2_NB, D2_RSRC, D2_CSRC, D2_LLD };

/* Copy DESC into the 9-integer type-1 descriptor OUT; R_COUNT, or the reason
 * ovl cannot take it. */
static enum reason normalize(const int *desc, int out[9]) {
  if (!desc) return R_DESC;
  if (desc[OVL_DESC_DTYPE] == 1) {
    memcpy(out, desc, 9 * sizeof(int));
  } else if (desc[OVL_DESC_DTYPE] == 2 && desc[D2_IMB] == desc[D2_MB] && desc[D2_INB] == desc[D2_NB]) {
    int d[9] = {1,           desc[D2_CTXT], desc[D2_M],    desc[D2_N],  desc[D2_MB],
                desc[D2_NB], desc[D2_RSRC], desc[D2_CSRC], desc[D2_LLD]};
    memcpy(out, d, sizeof d);
  } else {
    return R_DESC;
  }
  return R_COUNT;
}

/* The reasons decided from arguments every process of the grid shares (the
 * descriptors but LLD_), or R_COUNT when ovl may try; the descriptors as
 * type 1 in OUT. */
static enum reason pre_check(const int *const descs[3], int out[3][9]) {
  for (int i = 0; i < 3; i++)
    if (normalize(descs[i], out[i]) != R_COUNT) return R_DESC;
  for (int i = 0; i < 2; i++)
    if (out[i][OVL_DESC_CTXT] != out[2][OVL_DESC_CTXT]) return R_CONTEXT;
  for (int i = 0; i < 3; i++)
    if (out[i][OVL_DESC_RSRC] == -1 || out[i][OVL_DESC_CSRC] == -1) return R_REPLICATED;
  return R_COUNT;
}

/* ovl_pdgemm's agreed error -> a reason to forward (R_COUNT: handled). */
static enum reason after_ovl(ovl_err rc) {
  switch (rc) {
  case OVL_OK: return R_COUNT;
  case OVL_ERR_ARG:
  case OVL_ERR_SIZE: return R_INVALID;
  case OVL_ERR_UNSUPPORTED: return R_UNSUPPORTED;
  default: return R_ERROR;
  }
}

void pdgemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k, const double *alpha,
             const double *a, const int *ia, const int *ja, const int *desca, const double *b, const int *ib,
             const int *jb, const int *descb, const double *beta, double *c, const int *ic, const int *jc,
             const int *descc) {
  init_once();
  g.calls[F_GEMM]++;
  enum reason why = R_COUNT;
  const int *descs[3] = {desca, descb, descc};
  int d[3][9];
  if (g.disabled) why = R_DISABLED;
  else if (from_scalapack(__builtin_return_address(0))) why = R_INTERNAL;
  else if (!trans_ok(transa) || !trans_ok(transb)) why = R_TRANS;
  else why = pre_check(descs, d);
  if (why == R_COUNT) {
    int verdict = OVL_PDGEMM_RUN;
    int route = OVL_ROUTE_CONVERT;
    ovl_err rc =
        ovl_pdgemm_route(transa, transb, m, n, k, beta, ia, ja, d[0], ib, jb, d[1], ic, jc, d[2], &verdict, &route);
    if (rc != OVL_OK) why = after_ovl(rc);
    else if (verdict == OVL_PDGEMM_SMALL) why = R_SMALL;
    else if (verdict == OVL_PDGEMM_MEMORY) why = R_MEMORY;
    else if (verdict == OVL_PDGEMM_ROUTE) why = R_ROUTE;
    if (why == R_COUNT)
      why = after_ovl(
          ovl_pdgemm(transa, transb, m, n, k, alpha, a, ia, ja, d[0], b, ib, jb, d[1], beta, c, ic, jc, d[2]));
    if (why == R_COUNT) {
      g.by_ovl[F_GEMM]++;
      g.by_layout[F_GEMM] += route == OVL_ROUTE_LAYOUT;
      return;
    }
  }
  g.forwarded[F_GEMM][why]++;
  static pdgemm_fn real;
  if (!real) {
    pdgemm_fn me = pdgemm_;
    void *self = NULL, *p = NULL;
    memcpy(&self, &me, sizeof self); /* ISO C has no cast between object and function pointers */
    p = real_symbol("pdgemm_", self);
    memcpy(&real, &p, sizeof real);
  }
  real(transa, transb, m, n, k, alpha, a, ia, ja, desca, b, ib, jb, descb, beta, c, ic, jc, descc);
}

/* PDSYMM on ovl: the symmetric sub(A) (only its UPLO triangle is read) is
 * expanded into a full matrix W, laid out as A (same blocks and sources, W's
 * own LLD, only the rows and columns up to the end of sub(A)), as W = T + S^T
 * with T the triangle with its diagonal and S the strict triangle (one
 * ScaLAPACK pdgeadd_), and then sub(C) := alpha W B + beta C (SIDE 'L') or
 * alpha B W + beta C ('R') by ovl_pdgemm. W costs two local arrays of about
 * sub(A)'s local size. alpha == 0 and empty products need no W. */
void pdgeadd_(const char *trans, const int *m, const int *n, const double *alpha, const double *a, const int *ia,
              const int *ja, const int *desca, const double *beta, double *c, const int *ic, const int *jc,
              const int *descc);
MPI_Comm Cblacs2sys_handle(int sysctxt);
void Cblacs_get(int ctxt, int what, int *val);

static int64_t local_count(int64_t n, int nb, int iproc, int isrc, int np) {
  int64_t mydist = (np + iproc - isrc) % np, nblocks = n / nb, num = nblocks / np * nb, extra = nblocks % np;
  if (mydist < extra) num += nb;
  else if (mydist == extra) num += n % nb;
  return num;
}

/* Builds W (and the scratch S) for sub(A) of order ka in A's layout; returns
 * 0 on success on every process of the grid, non-zero (agreed) when A's
 * arguments are invalid or memory is short, and nothing has been changed. */
static int expand_symmetric(int lower, int ka, const double *a, int ia, int ja, const int *da, int dw[9], double **w,
                            double **s) {
  int nprow, npcol, myrow, mycol, h = -1, bad = 0;
  int ctxt = da[OVL_DESC_CTXT], mb = da[OVL_DESC_MB], nb = da[OVL_DESC_NB];
  int rsrc = da[OVL_DESC_RSRC], csrc = da[OVL_DESC_CSRC], lda = da[OVL_DESC_LLD];
  Cblacs_gridinfo(ctxt, &nprow, &npcol, &myrow, &mycol);
  *w = *s = NULL;
  int mw = ia - 1 + ka, nw = ja - 1 + ka; /* W covers rows 1..mw and columns 1..nw of A's layout */
  bad = ia < 1 || ja < 1 || mb < 1 || nb < 1 || rsrc < 0 || rsrc >= nprow || csrc < 0 || csrc >= npcol ||
        mw > da[OVL_DESC_M] || nw > da[OVL_DESC_N];
  int64_t mloc = 0, nloc = 0, lldw = 1;
  if (!bad) {
    mloc = local_count(mw, mb, myrow, rsrc, nprow), nloc = local_count(nw, nb, mycol, csrc, npcol);
    int64_t mloc_a = local_count(da[OVL_DESC_M], mb, myrow, rsrc, nprow);
    bad = lda < 1 || (local_count(da[OVL_DESC_N], nb, mycol, csrc, npcol) > 0 && lda < mloc_a);
    lldw = mloc > 1 ? mloc : 1;
  }
  if (!bad) {
    size_t len = (size_t)lldw * (size_t)(nloc > 0 ? nloc : 1);
    *w = malloc(len * sizeof(double));
    *s = malloc(len * sizeof(double));
    bad = !*w || !*s;
  }
  Cblacs_get(ctxt, 10, &h);
  MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, Cblacs2sys_handle(h));
  if (bad) {
    free(*w), free(*s);
    *w = *s = NULL;
    return 1;
  }
  for (int64_t lj = 0; lj < nloc; lj++) {
    int64_t j = (lj / nb * npcol + (npcol + mycol - csrc) % npcol) * nb + lj % nb - (ja - 1); /* in sub(A) */
    for (int64_t li = 0; li < mloc; li++) {
      int64_t i = (li / mb * nprow + (nprow + myrow - rsrc) % nprow) * mb + li % mb - (ia - 1);
      int in = i >= 0 && j >= 0 && (lower ? i >= j : i <= j); /* the referenced triangle of sub(A) */
      double x = in ? a[li + lj * (int64_t)lda] : 0.0;        /* the other entries are never read */
      (*w)[li + lj * lldw] = x;
      (*s)[li + lj * lldw] = i == j ? 0.0 : x;
    }
  }
  int d[9] = {1, ctxt, mw, nw, mb, nb, rsrc, csrc, (int)lldw};
  memcpy(dw, d, sizeof d);
  const double one = 1.0;
  pdgeadd_("T", &ka, &ka, &one, *s, &ia, &ja, dw, &one, *w, &ia, &ja, dw); /* W := T + S^T */
  return 0;
}

void pdsymm_(const char *side, const char *uplo, const int *m, const int *n, const double *alpha, const double *a,
             const int *ia, const int *ja, const int *desca, const double *b, const int *ib, const int *jb,
             const int *descb, const double *beta, double *c, const int *ic, const int *jc, const int *descc) {
  init_once();
  g.calls[F_SYMM]++;
  enum reason why = R_COUNT;
  const int *descs[3] = {desca, descb, descc};
  int d[3][9], dw[9];
  int left = side && (side[0] == 'L' || side[0] == 'l'), right = side && (side[0] == 'R' || side[0] == 'r');
  int lower = uplo && (uplo[0] == 'L' || uplo[0] == 'l'), upper = uplo && (uplo[0] == 'U' || uplo[0] == 'u');
  if (g.disabled) why = R_DISABLED;
  else if (from_scalapack(__builtin_return_address(0))) why = R_INTERNAL;
  else if (!(left || right) || !(lower || upper)) why = R_TRANS;
  else if (!m || !n || !alpha || !ia || !ja) why = R_INVALID;
  else why = pre_check(descs, d);
  if (why == R_COUNT) {
    int ka = left ? *m : *n;
    double *w = NULL, *s = NULL;
    const double *aw = a;
    const int *daw = d[0];
    int nprow, npcol, myrow, mycol;
    Cblacs_gridinfo(d[2][OVL_DESC_CTXT], &nprow, &npcol, &myrow, &mycol);
    int in_grid = nprow >= 1 && npcol >= 1 && myrow >= 0 && mycol >= 0;
    if (in_grid && *m > 0 && *n > 0 && *alpha != 0.0) {                                /* otherwise A is not read */
      if (expand_symmetric(lower, ka, a, *ia, *ja, d[0], dw, &w, &s)) why = R_INVALID; /* or out of memory */
      aw = w, daw = dw;
    }
    if (why == R_COUNT) {
      if (left)
        why = after_ovl(ovl_pdgemm("N", "N", m, n, m, alpha, aw, ia, ja, daw, b, ib, jb, d[1], beta, c, ic, jc, d[2]));
      else
        why = after_ovl(ovl_pdgemm("N", "N", m, n, n, alpha, b, ib, jb, d[1], aw, ia, ja, daw, beta, c, ic, jc, d[2]));
    }
    free(w);
    free(s);
  }
  if (why == R_COUNT) {
    g.by_ovl[F_SYMM]++;
    return;
  }
  g.forwarded[F_SYMM][why]++;
  static pdsymm_fn real;
  if (!real) {
    pdsymm_fn me = pdsymm_;
    void *self = NULL, *p = NULL;
    memcpy(&self, &me, sizeof self);
    p = real_symbol("pdsymm_", self);
    memcpy(&real, &p, sizeof real);
  }
  real(side, uplo, m, n, alpha, a, ia, ja, desca, b, ib, jb, descb, beta, c, ic, jc, descc);
}
