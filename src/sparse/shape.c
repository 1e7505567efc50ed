/* The shape of a block-sparse product C = A B (ovl_bsmat_shape, ovl/bsmat.h):
 * what the cost model and the planner of the block-sparse product need to
 * know of A and B (ovl_bsmul_shape, ovl/schema.h), counted from their index
 * alone. */
#include <string.h>

#include "sparse/sparse_impl.h"

ovl_err ovl_bsmat_shape(ovl_bsmat A, ovl_bsmat B, ovl_bsmul_shape *out) {
  const char *fn = "ovl_bsmat_shape";
  OVL_TRY(ovl_check_handle(A, fn, "A"));
  OVL_TRY(ovl_check_handle(B, fn, "B"));
  OVL_TRY(ovl_check_ptr(out, fn, "out"));
  MPI_Comm parent = ovl_grid2d_parent(A->g);
  ovl_err rc = OVL_OK;
  if (!ovl_i_sparse_same_layout(A, B))
    rc = ovl_err_set(OVL_ERR_ARG,
                     "%s: A and B must have the same grid, blocks and permutation (ovl_bsmat_create_like), as their "
                     "product needs",
                     fn);
  int nblk = A->nblk;
  /* per block index K: A's blocks in block column K and the rows they span,
   * B's blocks in block row K and the columns they span; then the stored
   * doubles of A and B */
  int64_t *cnt = NULL, nv = 4 * (int64_t)nblk + 2;
  if (rc == OVL_OK) rc = ovl_calloc(sizeof(int64_t) * (size_t)nv, &cnt);
  OVL_TRY(ovl_err_agree(parent, rc));
  int64_t *acol = cnt, *arows = cnt + nblk, *brow = cnt + 2 * nblk, *bcols = cnt + 3 * nblk;
  for (int64_t r = 0; r < A->nrows; r++)
    for (int64_t k = A->loc.rowptr[r]; k < A->loc.rowptr[r + 1]; k++) {
      int K = A->loc.colidx[k];
      acol[K]++, arows[K] += A->bs[A->rows[r]];
    }
  for (int64_t r = 0; r < B->nrows; r++) {
    int K = B->rows[r];
    for (int64_t k = B->loc.rowptr[r]; k < B->loc.rowptr[r + 1]; k++) brow[K]++, bcols[K] += B->bs[B->loc.colidx[k]];
  }
  cnt[4 * nblk] = A->loc.nval, cnt[4 * nblk + 1] = B->loc.nval;
  int e = MPI_Allreduce(MPI_IN_PLACE, cnt, (int)nv, MPI_INT64_T, MPI_SUM, parent);
  if (e != MPI_SUCCESS) {
    ovl_free(&cnt);
    return ovl_err_mpi(e, "MPI_Allreduce");
  }
  memset(out, 0, sizeof *out);
  out->n = A->n, out->nblk = nblk;
  out->values_a = cnt[4 * nblk], out->values_b = cnt[4 * nblk + 1];
  for (int K = 0; K < nblk; K++) {
    out->blocks_a += acol[K], out->blocks_b += brow[K];
    out->products += acol[K] * brow[K];
    out->flops += 2.0 * (double)arows[K] * A->bs[K] * (double)bcols[K];
  }
  ovl_free(&cnt);
  return OVL_OK;
}
