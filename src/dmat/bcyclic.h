/* Internal to the kernels (ovl_pdgemm): ScaLAPACK 2D block-cyclic layout <-> ovl_dmat block layout.
 *
 * A block-cyclic matrix (ScaLAPACK array descriptor DTYPE_ = 1) of M x N
 * global entries is cut into MB x NB blocks; block (bi, bj) lives on process
 * ((RSRC + bi) mod p, (CSRC + bj) mod q) as its local block (bi div p,
 * bj div q), the local array being column-major with leading dimension LLD.
 * The exchanges here move a submatrix sub(A) = A(i0 : i0+sm-1, j0 : j0+sn-1)
 * (0-based) between that layout and an ovl_dmat on a p x q ovl_grid2d, the
 * block-cyclic process (i, j) being the grid's process (i, j), i.e. rank
 * i*q + j of the grid's parent. Each exchange is one MPI_Alltoallv over the
 * parent: for each peer, the intersection of what one side holds and what
 * the other needs is computed, packed, exchanged and unpacked.
 *
 * Owned indices of one process inside any global interval are contiguous in
 * its local array (local order is global order), so the block-cyclic side
 * packs and unpacks one rectangle per peer; the dmat side walks the block
 * segments of the peer.
 */
#ifndef OVL_BCYCLIC_H
#define OVL_BCYCLIC_H

#include <stddef.h>
#include <stdint.h>

#include "ovl/dmat.h"

/* One process's view of a block-cyclic submatrix. */
typedef struct ovl_bcview {
  int64_t m, n;   /* global matrix sizes (M_, N_) */
  int64_t mb, nb; /* block sizes (MB_, NB_), >= 1 */
  int rsrc, csrc; /* process row / column of the first block */
  int64_t lld;    /* leading dimension of the local array */
  int64_t i0, j0; /* 0-based offsets of the submatrix (IA - 1, JA - 1) */
  int64_t sm, sn; /* submatrix sizes */
  double *data;   /* local array (column-major, lld); only read when the view is a source */
} ovl_bcview;

/* Growable exchange buffer owned by the caller (zero-initialise it; free it
 * with ovl_bcyclic_ws_free). */
typedef struct ovl_bcyclic_ws {
  double *buf;
  size_t cap; /* doubles */
} ovl_bcyclic_ws;
void ovl_bcyclic_ws_free(ovl_bcyclic_ws *ws);
/* Make room for n doubles (contents not kept). LOCAL. Errors: OVL_ERR_NOMEM. */
ovl_err ovl_bcyclic_ws_reserve(ovl_bcyclic_ws *ws, size_t n);

/* ScaLAPACK's NUMROC: entries of a dimension of n entries, blocks of nb,
 * first block on process isrc of np, owned by process iproc. LOCAL. */
int64_t ovl_bcyclic_numroc(int64_t n, int64_t nb, int iproc, int isrc, int np);

/* PDGEMM's checks (PBLAS's PB_Cchkmat) of the sm x sn submatrix at 1-based
 * (i1, j1) of the matrix described by desc, on a nprow x npcol grid, from
 * process (myrow, mycol): i1, j1 >= 1; sm, sn >= 0; DTYPE_ = 1; CTXT_ ==
 * ctxt; MB_, NB_ >= 1; RSRC_ / CSRC_ inside the grid; M_, N_ >= 0; and, when
 * the submatrix is not empty, that it fits in the M_ x N_ matrix and that
 * LLD_ >= max(1, local rows) on a process that owns columns (LLD_ >= 1
 * always). name ("A"), iname ("IA") and jname ("JA") go into the messages.
 * LOCAL. Errors: OVL_ERR_ARG; OVL_ERR_SIZE (does not fit);
 * OVL_ERR_UNSUPPORTED (RSRC_ or CSRC_ = -1, PBLAS's replicated operands). */
ovl_err ovl_bcyclic_check(const int *desc, int ctxt, int nprow, int npcol, int myrow, int mycol, int64_t i1, int64_t j1,
                          int64_t sm, int64_t sn, const char *name, const char *iname, const char *jname);

/* View of the sm x sn submatrix at 1-based (i1, j1) of the local array data
 * described by desc (already validated). LOCAL. */
ovl_bcview ovl_bcyclic_view(const int *desc, int64_t i1, int64_t j1, int64_t sm, int64_t sn, double *data);

/* dst := sub(src) (trans = 0, dst is sm x sn) or dst := sub(src)^T
 * (trans = 1, dst is sn x sm). ws (may be NULL: allocated and freed here)
 * holds the exchange buffers. COLLECTIVE over the parent of dst's grid.
 * Errors (agreed): OVL_ERR_SIZE (shapes, or a message over 2^31 - 1
 * doubles), OVL_ERR_NOMEM. */
ovl_err ovl_bcyclic_to_dmat(const ovl_bcview *src, int trans, ovl_dmat dst, ovl_bcyclic_ws *ws);

/* sub(dst) := src (trans = 0, src is sm x sn) or sub(dst) := src^T
 * (trans = 1, src is sn x sm); only the submatrix entries of dst's local
 * array are written. COLLECTIVE over the parent of src's grid. Errors as
 * ovl_bcyclic_to_dmat. */
ovl_err ovl_bcyclic_from_dmat(ovl_dmat src, int trans, const ovl_bcview *dst, ovl_bcyclic_ws *ws);

/* sub(v) := beta sub(v) on this process's entries (beta == 0 stores zeros;
 * beta == 1 does nothing). (myrow, mycol) in a nprow x npcol grid. LOCAL. */
void ovl_bcyclic_scale(const ovl_bcview *v, int nprow, int npcol, int myrow, int mycol, double beta);

#endif
