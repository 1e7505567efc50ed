/* The BLACS, ScaLAPACK (and LAPACK dsyevr) entry points the peer programs (and
 * tests/test_pdgemm.c, test_pdpurify.c, test_pdpurify_readme.c) call, which Debian's ScaLAPACK ships no C header for,
 * and NUMROC for a first process row/column of 0. */
#ifndef OVL_PEERS_SCALAPACK_H
#define OVL_PEERS_SCALAPACK_H

#include <stdint.h>

void Cblacs_get(int ctxt, int what, int *val);
void Cblacs_gridinit(int *ctxt, const char *order, int nprow, int npcol);
void Cblacs_gridinfo(int ctxt, int *nprow, int *npcol, int *myrow, int *mycol);
void Cblacs_gridexit(int ctxt);
void Cblacs_exit(int notdone);
void pdgemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k, const double *alpha,
             const double *a, const int *ia, const int *ja, const int *desca, const double *b, const int *ib,
             const int *jb, const int *descb, const double *beta, double *c, const int *ic, const int *jc,
             const int *descc);
void pdsyevd_(const char *jobz, const char *uplo, const int *n, double *a, const int *ia, const int *ja,
              const int *desca, double *w, double *z, const int *iz, const int *jz, const int *descz, double *work,
              const int *lwork, int *iwork, const int *liwork, int *info);
void pdsyevr_(const char *jobz, const char *range, const char *uplo, const int *n, double *a, const int *ia,
              const int *ja, const int *desca, const double *vl, const double *vu, const int *il, const int *iu, int *m,
              int *nz, double *w, double *z, const int *iz, const int *jz, const int *descz, double *work,
              const int *lwork, int *iwork, const int *liwork, int *info);
void pdsyevx_(const char *jobz, const char *range, const char *uplo, const int *n, double *a, const int *ia,
              const int *ja, const int *desca, const double *vl, const double *vu, const int *il, const int *iu,
              const double *abstol, int *m, int *nz, double *w, const double *orfac, double *z, const int *iz,
              const int *jz, const int *descz, double *work, const int *lwork, int *iwork, const int *liwork,
              int *ifail, int *iclustr, double *gap, int *info);
void pdsyrk_(const char *uplo, const char *trans, const int *n, const int *k, const double *alpha, const double *a,
             const int *ia, const int *ja, const int *desca, const double *beta, double *c, const int *ic,
             const int *jc, const int *descc);
/* LAPACK's (one process) */
void dsyevr_(const char *jobz, const char *range, const char *uplo, const int *n, double *a, const int *lda,
             const double *vl, const double *vu, const int *il, const int *iu, const double *abstol, int *m, double *w,
             double *z, const int *ldz, int *isuppz, double *work, const int *lwork, int *iwork, const int *liwork,
             int *info);
void pdpotrf_(const char *uplo, const int *n, double *a, const int *ia, const int *ja, const int *desca, int *info);
void pdsygst_(const int *ibtype, const char *uplo, const int *n, double *a, const int *ia, const int *ja,
              const int *desca, const double *b, const int *ib, const int *jb, const int *descb, double *scale,
              int *info);
void pdtrsm_(const char *side, const char *uplo, const char *transa, const char *diag, const int *m, const int *n,
             const double *alpha, const double *a, const int *ia, const int *ja, const int *desca, double *b,
             const int *ib, const int *jb, const int *descb);

/* Rows (or columns) of an n-long dimension in blocks of nb that process ip of
 * np holds, the first block on process 0 (ScaLAPACK's NUMROC, ISRCPROC = 0). */
static inline int64_t peer_numroc(int64_t n, int64_t nb, int ip, int np) {
  int64_t nblocks = n / nb, num = nblocks / np * nb, extra = nblocks % np;
  if (ip < extra) num += nb;
  else if (ip == extra) num += n % nb;
  return num;
}

#endif
