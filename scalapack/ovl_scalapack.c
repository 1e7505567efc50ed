/* libovl_scalapack.so: ScaLAPACK's PDGEMM (and PDSYMM) for unchanged programs.
 *
 * The library defines the Fortran symbols pdgemm_ and pdsymm_ with PBLAS's
 * arguments and semantics. A program gets them instead of ScaLAPACK's by
 * linking -lovl_scalapack before -lscalapack-openmpi, or at run time with
 * LD_PRELOAD=libovl_scalapack.so. Each call runs on ovl (ovl_pdgemm: the
 * operands are redistributed to ovl's block layout and multiplied by SUMMA)
 * when it can, and is forwarded to the real ScaLAPACK routine when it cannot;
 * the real routine is the next definition after this library in the lookup
 * order (dlsym(RTLD_NEXT)), or failing that the one in Debian's
 * libscalapack-openmpi.so, opened by name.
 *
 * Forwarded, by reason (each decided from arguments that PBLAS requires to be
 * the same on every process of the grid, or from an error ovl_pdgemm has
 * agreed over the grid, so all processes take the same road):
 *   disabled      OVL_SCALAPACK_DISABLE=1 (or any value but 0/empty);
 *   trans         TRANSA/TRANSB (PDSYMM: SIDE/UPLO) not a valid letter;
 *   descriptor    a descriptor type other than 1 (BLOCK_CYCLIC_2D);
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
 * world rank 0 to stderr; OVL_SCALAPACK_REPORT=all prints every rank's. The
 * counts are per process: PDGEMM is collective over a grid, so rank 0's
 * counts are those of every grid it belongs to.
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
/* ScaLAPACK's own routines the PDSYMM path uses on the symmetric operand. */
typedef void (*pdgeadd_fn)(const char *, const int *, const int *, const double *, const double *, const int *,
                           const int *, const int *, const double *, double *, const int *, const int *, const int *);
typedef int (*numroc_fn)(const int *, const int *, const int *, const int *, const int *);
void Cblacs_gridinfo(int ctxt, int *nprow, int *npcol, int *myrow, int *mycol);

enum reason { R_DISABLED, R_TRANS, R_DESC, R_CONTEXT, R_REPLICATED, R_INVALID, R_UNSUPPORTED, R_ERROR, R_COUNT };
static const char *const reason_name[R_COUNT] = {"disabled",   "trans",   "descriptor",  "context",
                                                 "replicated", "invalid", "unsupported", "error"};
static const char *const reason_text[R_COUNT] = {"OVL_SCALAPACK_DISABLE is set",
                                                 "TRANS/SIDE/UPLO not a valid letter",
                                                 "descriptor type not 1 (BLOCK_CYCLIC_2D)",
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
  long calls[F_COUNT], by_ovl[F_COUNT], forwarded[F_COUNT][R_COUNT];
  void *lib; /* dlopen handle of the fallback ScaLAPACK, if opened */
} g = {.rank = -1};

static void report(void) {
  if (!g.report || (g.report == 1 && g.rank != 0)) return;
  for (int f = 0; f < F_COUNT; f++) {
    if (f == F_SYMM && g.calls[f] == 0) continue;
    long fwd = 0;
    for (int r = 0; r < R_COUNT; r++) fwd += g.forwarded[f][r];
    fprintf(stderr, "ovl_scalapack: rank %d: %s calls=%ld ovl=%ld forwarded=%ld\n", g.rank, routine_name[f], g.calls[f],
            g.by_ovl[f], fwd);
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
 * else the one in Debian's libscalapack-openmpi. Fatal if there is none
 * (a void Fortran routine has no way to return an error). */
static void *real_symbol(const char *name, const void *self) {
  void *p = dlsym(RTLD_NEXT, name);
  if (p && p != self) return p;
  const char *libs[] = {"libscalapack-openmpi.so.2.2", "libscalapack-openmpi.so", "libscalapack.so"};
  for (size_t i = 0; !g.lib && i < sizeof libs / sizeof libs[0]; i++) g.lib = dlopen(libs[i], RTLD_NOW | RTLD_GLOBAL);
  p = g.lib ? dlsym(g.lib, name) : NULL;
  if (p && p != self) return p;
  ovl_fatal(MPI_COMM_WORLD, OVL_ERR_UNSUPPORTED,
            "libovl_scalapack: the real ScaLAPACK %s was not found (link -lscalapack-openmpi after "
            "-lovl_scalapack, or preload libovl_scalapack.so into a program linked with ScaLAPACK)",
            name);
}

static int trans_ok(const char *t) { return t && strchr("NnTtCc", t[0]) && t[0]; }

/* The reasons decided from arguments every process of the grid shares, or
 * R_COUNT when ovl may try. */
static enum reason pre_check(const int *const descs[3]) {
  for (int i = 0; i < 3; i++)
    if (!descs[i] || descs[i][OVL_DESC_DTYPE] != 1) return R_DESC;
  for (int i = 0; i < 2; i++)
    if (descs[i][OVL_DESC_CTXT] != descs[2][OVL_DESC_CTXT]) return R_CONTEXT;
  for (int i = 0; i < 3; i++)
    if (descs[i][OVL_DESC_RSRC] == -1 || descs[i][OVL_DESC_CSRC] == -1) return R_REPLICATED;
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
  if (g.disabled) why = R_DISABLED;
  else if (!trans_ok(transa) || !trans_ok(transb)) why = R_TRANS;
  else why = pre_check(descs);
  if (why == R_COUNT)
    why = after_ovl(
        ovl_pdgemm(transa, transb, m, n, k, alpha, a, ia, ja, desca, b, ib, jb, descb, beta, c, ic, jc, descc));
  if (why == R_COUNT) {
    g.by_ovl[F_GEMM]++;
    return;
  }
  g.forwarded[F_GEMM][why]++;
  static pdgemm_fn real;
  if (!real) {
    pdgemm_fn me = pdgemm_;
    void *self = NULL, *p = NULL;
    memcpy(&self, &me, sizeof self);
    p = real_symbol("pdgemm_", self);
    memcpy(&real, &p, sizeof real);
  }
  real(transa, transb, m, n, k, alpha, a, ia, ja, desca, b, ib, jb, descb, beta, c, ic, jc, descc);
}
