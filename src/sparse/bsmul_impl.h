/* Internal to src/sparse: the local kernel of the filtered block-sparse
 * product (src/sparse/bsmul_local.c), used by ovl_bsmat_multiply
 * (src/sparse/bsmul.c).
 *
 * A panel is a set of block rows in blocked CSR with global indices: row t
 * is global block row rowid[t], its blocks are k = rowptr[t] ..
 * rowptr[t + 1] - 1, global block column colidx[k], Frobenius norm nrm[k],
 * data at val + valoff[k] (bs[row] x bs[col], column-major). In SUMMA the A
 * panel holds the blocks (I, K) of one process row with K in one step's set,
 * the B panel the block rows K of that set.
 *
 * Packed panel (one contiguous double buffer, broadcast whole): nr, nnzb,
 * nval, then rowid[nr], rowptr[nr + 1] (rowptr[0] = 0), colidx[nnzb],
 * nrm[nnzb], the values of the blocks in order (nval doubles). Indices are
 * stored as doubles (exact below 2^53); an empty panel is 0 doubles.
 *
 * The accumulator holds the blocks of C's local rows as they are summed:
 * per local row a list of (global J, offset of a bs[I] x bs[J] buffer in one
 * pool), in the order the blocks appeared. Each product of a panel pair is a
 * task (A block, B block, C block, sizes); tasks are collected over a chunk
 * of rows, grouped by size (m, n, k) and run as small dgemms. */
#ifndef OVL_SPARSE_BSMUL_IMPL_H
#define OVL_SPARSE_BSMUL_IMPL_H

#include <stdint.h>

#include "ovl/bsmat.h"
#include "ovl/core.h"

typedef struct ovl_i_bspanel {
  int64_t nr, nnzb, nval;
  int *rowid;
  int64_t *rowptr;
  int *colidx;
  int64_t *valoff;
  const double *nrm;
  const double *val;
  double *nrm_own; /* a view's norms (ovl_i_sparse_panel_view) */
  int64_t *ord;    /* each row's blocks by decreasing norm, when ordered (ovl_i_sparse_panel_order) */
  int ordered;     /* reset by unpack and view */
  int64_t span;    /* doubles from val that the blocks' offsets reach */
  int64_t cap_r, cap_b, cap_n, cap_o; /* capacities of the owned arrays */
} ovl_i_bspanel;

typedef struct ovl_i_bstask {
  const double *a, *b;
  int64_t coff; /* offset of the C block in the pool (the pool may move) */
  int m, n, k;
} ovl_i_bstask;

typedef struct ovl_i_bsacc {
  int nblk;
  const int *bs;
  int64_t nrows;
  int64_t *len, *cap; /* per local row */
  int **col;          /* per local row: global J of each block */
  int64_t **off;      /* per local row: offset of each block in pool */
  double *pool;
  int64_t npool, cap_pool;
  int *mark; /* nblk: position of J in the current row, -1 */
  ovl_i_bstask *task;
  int64_t ntask, cap_task;
  int64_t products, skipped;
  int sym;    /* C symmetric: only the block products into C's blocks (I, J), I <= J */
  int single; /* C's arithmetic is float32: the panels' values as floats, sgemm into fpool (C's blocks at the
               * offsets of pool, in float32), folded into pool before C is built */
  float *fa, *fb, *fpool;
  int64_t cap_fa, cap_fb, cap_fpool;
  const double *fa_src, *fb_src; /* the values fa and fb hold (a view's are converted once per product) */
  int64_t fa_len, fb_len;
} ovl_i_bsacc;

/* Doubles of the packed form of a panel with nr rows, nnzb blocks and nval
 * values (0 when nnzb = 0). LOCAL. */
int64_t ovl_i_sparse_panel_len(int64_t nr, int64_t nnzb, int64_t nval);
/* Pack the panel of step s from the local blocks L (rows[r]: the global
 * block row of local row r; kstep[X]: the step of block index X): by_col = 1
 * takes the blocks whose column is in the step (an A panel), by_col = 0 the
 * rows that are (a B panel). buf = NULL: *len receives the doubles needed;
 * else buf holds *len doubles, exactly that many. Errors: OVL_ERR_INTERNAL
 * (a length that does not match). LOCAL. */
struct ovl_i_bsr;
ovl_err ovl_i_sparse_panel_pack(const struct ovl_i_bsr *L, int64_t nrows, const int *rows, const int *bs,
                                const int *kstep, int s, int by_col, double *buf, int64_t *len);
/* Read a packed panel of len doubles in buf into P (its index arrays grown
 * as needed; nrm and val point into buf). len = 0 is the empty panel.
 * Errors: OVL_ERR_NOMEM, OVL_ERR_INTERNAL (inconsistent header). LOCAL. */
ovl_err ovl_i_sparse_panel_unpack(const double *buf, int64_t len, const int *bs, int nblk, ovl_i_bspanel *P);
/* The panel of step s (as ovl_i_sparse_panel_pack) as a view of L without
 * copying the values: val points to L's values, the index arrays and the
 * norms are P's own. For a panel that no broadcast carries. Errors:
 * OVL_ERR_NOMEM. LOCAL. */
ovl_err ovl_i_sparse_panel_view(const struct ovl_i_bsr *L, int64_t nrows, const int *rows, const int *kstep, int s,
                                int by_col, ovl_i_bspanel *P);
/* Order each row's blocks by decreasing norm (P->ord; NaN first), so that
 * a product's loop over a B row stops at the first block below the
 * skipping threshold. Errors: OVL_ERR_NOMEM. LOCAL. */
ovl_err ovl_i_sparse_panel_order(ovl_i_bspanel *P);
/* Free a panel's owned index arrays. LOCAL. */
void ovl_i_sparse_panel_free(ovl_i_bspanel *P);

/* An empty accumulator for nrows local rows. Errors: OVL_ERR_NOMEM. LOCAL. */
ovl_err ovl_i_sparse_acc_init(ovl_i_bsacc *acc, int nblk, const int *bs, int64_t nrows);
void ovl_i_sparse_acc_free(ovl_i_bsacc *acc);

/* acc += Apan * Bpan: for every block (I, K) of Apan and (K, J) of Bpan
 * (kpos[K]: the row of Bpan holding K, or -1) the product is added to C's
 * block (lrow[I], J) unless ||A_IK|| ||B_KJ|| < thr[lrow[I]] (counted as
 * skipped). progress(ctx), when not NULL, is called between chunks of rows.
 * Errors: OVL_ERR_NOMEM (the accumulator may then hold a partial sum).
 * LOCAL. */
ovl_err ovl_i_sparse_acc_multiply(ovl_i_bsacc *acc, const ovl_i_bspanel *Apan, const ovl_i_bspanel *Bpan,
                                  const int *kpos, const int *lrow, const double *thr, void (*progress)(void *),
                                  void *ctx);

/* The checks of ovl_bsmat_multiply's arguments (A, B, C not NULL): the
 * same verdict on every rank when the ranks pass the same handles and
 * values; fn names the caller in the message. LOCAL. */
ovl_err ovl_i_sparse_multiply_check(ovl_bsmat A, ovl_bsmat B, double eps, int ndup, ovl_bsmat C, const char *fn);
/* The layer (0..c-1) of every inner block K of A's layout, kl[0..nblk-1]:
 * its SUMMA step t = prow(K) + p pcol(K) mod c while the p q steps are at
 * least c (whole steps), else (t + p q m_K) mod c with m_K = (perm(K) /
 * (p q)) mod ceil(c / (p q)) (a step split into parts). LOCAL. */
void ovl_i_sparse_layers(ovl_bsmat A, int c, int *kl);
/* The SUMMA of C = A B (ovl_bsmat_multiply, arguments checked and agreed,
 * called on the active ranks of C's grid only) restricted to the inner
 * blocks K of layer `layer` of c (ovl_i_sparse_layers; c = 1: all, every
 * step run). A needs only its blocks (I, K) and B its rows K of the layer.
 * The skipping thresholds are the whole product's, eps / n_I with n_I the
 * blocks of A's block row I over the grid, summed over the process row
 * from rowcnt (per local row; NULL: A's stored blocks), so that the
 * products skipped are the 2D product's. C's blocks are built with the
 * threshold eps_keep (ovl_i_sparse_keep). Errors are agreed over `agree`,
 * which must hold every rank that calls (the grid's communicator, or a 3D
 * grid's whose planes call together). COLLECTIVE. */
ovl_err ovl_i_sparse_multiply_part(ovl_bsmat A, ovl_bsmat B, double eps, int ndup, int layer, int c,
                                   const int64_t *rowcnt, double eps_keep, MPI_Comm agree, ovl_bsmat C,
                                   ovl_bsmul_stats *stats);

/* C's blocks (J, I), I < J, := its blocks (I, J) transposed, which every
 * rank sends to the owner by one MPI_Alltoallv over comm (C's grid's
 * communicator): the product of a symmetric result computed above the
 * diagonal (ovl_bsmat_set_symmetric). Memory checked first; errors
 * (OVL_ERR_SIZE, OVL_ERR_NOMEM) agreed over comm, C then as it was.
 * COLLECTIVE over comm. */
ovl_err ovl_i_sparse_mirror(ovl_bsmat C, MPI_Comm comm);
/* pool += fpool (a float32 product's sums, none otherwise), before C is built from pool. LOCAL. */
void ovl_i_sparse_acc_fold(ovl_i_bsacc *acc);
/* Sort local row r's blocks by global J; cols/offs then list them. LOCAL. */
void ovl_i_sparse_acc_sort_row(ovl_i_bsacc *acc, int64_t r);

#endif
