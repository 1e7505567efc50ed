/* The lower triangle of a symmetric product from its upper one: every
 * block (I, J), I < J, sent transposed to the owner of (J, I) by one
 * MPI_Alltoallv over the grid (src/sparse/bsmul_impl.h). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "ovl/node.h"
#include "sparse/bsmul_impl.h"
#include "sparse/sparse_impl.h"

typedef struct mrec {
  int64_t lr;      /* local row of the block (J) */
  int col;         /* its column (I < J) */
  double nrm;      /* its norm */
  const double *v; /* its values, transposed already (bs[J] x bs[I]) */
} mrec;

/* The rank, in C's grid's communicator, of the process that holds block (row, col): process (i, j) is rank
 * i q + j there (the grid's ranks in their parent's order). */
static int owner_of(const struct ovl_bsmat_s *C, int row, int col) {
  return ovl_i_sparse_prow(C, row) * C->q + ovl_i_sparse_pcol(C, col);
}

static int mrec_cmp(const void *x, const void *y) {
  const mrec *a = x, *b = y;
  if (a->lr != b->lr) return a->lr < b->lr ? -1 : 1;
  return (a->col > b->col) - (a->col < b->col);
}

ovl_err ovl_i_sparse_mirror(ovl_bsmat C, MPI_Comm comm) {
  int P = 0;
  OVL_MPI(MPI_Comm_size(comm, &P));
  int *cnt = NULL; /* counts and displacements, sent and received */
  double *sbuf = NULL, *rbuf = NULL;
  mrec *recs = NULL;
  ovl_err rc = ovl_err_agree(comm, ovl_calloc(sizeof(int) * (size_t)(4 * P), &cnt));
  if (rc != OVL_OK) goto done;
  const ovl_i_bsr *L = &C->loc;
  int64_t stot = 0, rtot = 0;
  int64_t *scount = NULL;
  rc = ovl_calloc(sizeof(int64_t) * (size_t)P, &scount);
  rc = ovl_err_agree(comm, rc);
  if (rc != OVL_OK) goto done;
  for (int64_t r = 0; r < C->nrows; r++) {
    int gi = C->rows[r];
    for (int64_t k = L->rowptr[r]; k < L->rowptr[r + 1]; k++) {
      int gj = L->colidx[k];
      if (gj <= gi) continue;
      scount[owner_of(C, gj, gi)] += 3 + (int64_t)C->bs[gi] * C->bs[gj];
    }
  }
  for (int r = 0; r < P; r++) stot += scount[r];
  if (stot > INT32_MAX)
    rc = ovl_err_set(OVL_ERR_SIZE, "block-sparse product: %" PRId64 " doubles to mirror exceed MPI's int counts", stot);
  for (int r = 0; r < P && rc == OVL_OK; r++) cnt[r] = (int)scount[r], cnt[P + r] = r ? cnt[P + r - 1] + cnt[r - 1] : 0;
  rc = ovl_err_agree(comm, rc);
  if (rc == OVL_OK && MPI_Alltoall(cnt, 1, MPI_INT, cnt + 2 * P, 1, MPI_INT, comm) != MPI_SUCCESS)
    ovl_fatal(comm, OVL_ERR_MPI, "MPI_Alltoall failed in the mirror of a symmetric product");
  for (int r = 0; r < P && rc == OVL_OK; r++) rtot += cnt[2 * P + r];
  if (rc == OVL_OK && rtot > INT32_MAX)
    rc =
        ovl_err_set(OVL_ERR_SIZE, "block-sparse product: %" PRId64 " doubles to receive exceed MPI's int counts", rtot);
  for (int r = 0; r < P && rc == OVL_OK; r++) cnt[3 * P + r] = r ? cnt[3 * P + r - 1] + cnt[2 * P + r - 1] : 0;
  if (rc == OVL_OK) rc = ovl_check_memory(comm, (int64_t)sizeof(double) * (stot + rtot), 0);
  if (rc == OVL_OK) rc = ovl_malloc(sizeof(double) * (size_t)(stot + 1), &sbuf);
  if (rc == OVL_OK) rc = ovl_malloc(sizeof(double) * (size_t)(rtot + 1), &rbuf);
  rc = ovl_err_agree(comm, rc);
  if (rc != OVL_OK) {
    ovl_free(&scount);
    goto done;
  }
  for (int r = 0; r < P; r++) scount[r] = cnt[P + r]; /* the fill positions */
  for (int64_t r = 0; r < C->nrows; r++) {
    int gi = C->rows[r], m = C->bs[gi];
    for (int64_t k = L->rowptr[r]; k < L->rowptr[r + 1]; k++) {
      int gj = L->colidx[k], nb = C->bs[gj];
      if (gj <= gi) continue;
      const int dest = owner_of(C, gj, gi);
      double *o = sbuf + scount[dest];
      const double *v = L->val + L->valoff[k];
      o[0] = (double)gj, o[1] = (double)gi, o[2] = L->nrm[k];
      for (int x = 0; x < m; x++)
        for (int y = 0; y < nb; y++) o[3 + y + (int64_t)x * nb] = v[x + (int64_t)y * m];
      scount[dest] += 3 + (int64_t)m * nb;
    }
  }
  ovl_free(&scount);
  if (MPI_Alltoallv(sbuf, cnt, cnt + P, MPI_DOUBLE, rbuf, cnt + 2 * P, cnt + 3 * P, MPI_DOUBLE, comm) != MPI_SUCCESS)
    ovl_fatal(comm, OVL_ERR_MPI, "MPI_Alltoallv failed in the mirror of a symmetric product");
  ovl_free(&sbuf);
  /* the received blocks (I < J: left of the diagonal in row J), by row and column */
  int64_t nrec = 0;
  for (int64_t at = 0; at < rtot; nrec++) at += 3 + (int64_t)C->bs[(int)rbuf[at]] * C->bs[(int)rbuf[at + 1]];
  rc = ovl_malloc(sizeof(mrec) * (size_t)(nrec + 1), &recs);
  rc = ovl_err_agree(comm, rc);
  if (rc != OVL_OK) goto done;
  nrec = 0;
  for (int64_t at = 0; at < rtot;) {
    int gj = (int)rbuf[at], gi = (int)rbuf[at + 1];
    recs[nrec].lr = C->lrow[gj], recs[nrec].col = gi, recs[nrec].nrm = rbuf[at + 2], recs[nrec].v = rbuf + at + 3;
    if (recs[nrec].lr < 0 || C->lcol[gi] < 0)
      rc = ovl_err_set(OVL_ERR_INTERNAL, "block-sparse product: mirrored block (%d, %d) is not held here", gj, gi);
    at += 3 + (int64_t)C->bs[gj] * C->bs[gi], nrec++;
  }
  qsort(recs, (size_t)nrec, sizeof(mrec), mrec_cmp);
  /* the new index: each row's received blocks, then its own (columns >= the row's) */
  ovl_i_bsr old = C->loc;
  memset(&C->loc, 0, sizeof C->loc);
  if (rc == OVL_OK) rc = ovl_calloc(sizeof(int64_t) * (size_t)(C->nrows + 1), &C->loc.rowptr);
  C->loc.last_row = -1;
  int64_t x = 0;
  for (int64_t r = 0; r < C->nrows && rc == OVL_OK; r++) {
    for (; x < nrec && recs[x].lr == r && rc == OVL_OK; x++)
      rc = ovl_i_sparse_append_block(C, r, recs[x].col, recs[x].v, recs[x].nrm, NULL);
    for (int64_t k = old.rowptr[r]; k < old.rowptr[r + 1] && rc == OVL_OK; k++)
      rc = ovl_i_sparse_append_block(C, r, old.colidx[k], old.val + old.valoff[k], old.nrm[k], NULL);
  }
  if (rc == OVL_OK) ovl_i_sparse_finish(C);
  if (rc == OVL_OK) ovl_i_sparse_free(&old);
  else { /* C as it was */ ovl_i_sparse_free(&C->loc);
    C->loc = old;
  }
  rc = ovl_err_agree(comm, rc);
done:
  ovl_free(&cnt), ovl_free(&sbuf), ovl_free(&rbuf), ovl_free(&recs);
  return rc;
}
