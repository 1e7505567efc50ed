/* ScaLAPACK 2D block-cyclic layout <-> ovl_dmat block layout: descriptor
 * checks, and the two exchanges (one MPI_Alltoallv each), see bcyclic.h. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "dmat/bcyclic.h"

/* ---- one dimension of a block-cyclic layout -------------------------------- */

typedef struct bcdim {
  int64_t nb; /* block size */
  int src;    /* process holding block 0 */
  int np;     /* processes along this dimension */
} bcdim;

/* Index of the first block process ip owns. */
static int64_t first_block(const bcdim *d, int ip) { return ((int64_t)ip - d->src + d->np) % d->np; }

/* Number of global indices in [0, g) that process ip owns. */
static int64_t dim_below(const bcdim *d, int ip, int64_t g) {
  int64_t blk = g / d->nb, rem = g % d->nb, first = first_block(d, ip);
  int64_t full = blk > first ? (blk - first - 1) / d->np + 1 : 0; /* owned blocks before blk */
  return full * d->nb + (blk % d->np == first ? rem : 0);
}

/* First run of indices owned by ip in [g, g1): returns its start, *len its
 * length (0 when there is none). With one process the run is all of
 * [g, g1); otherwise it ends at a block boundary. */
static int64_t dim_next(const bcdim *d, int ip, int64_t g, int64_t g1, int64_t *len) {
  if (d->np == 1) {
    *len = g1 > g ? g1 - g : 0;
    return g;
  }
  int64_t blk = g / d->nb, skip = (first_block(d, ip) - blk % d->np + d->np) % d->np;
  if (skip > 0) {
    blk += skip;
    g = blk * d->nb;
  }
  int64_t end = (blk + 1) * d->nb < g1 ? (blk + 1) * d->nb : g1;
  *len = end > g ? end - g : 0;
  return g;
}

int64_t ovl_bcyclic_numroc(int64_t n, int64_t nb, int iproc, int isrc, int np) {
  bcdim d = {nb, isrc, np};
  return n > 0 ? dim_below(&d, iproc, n) : 0;
}

/* ---- descriptors ------------------------------------------------------------- */

ovl_err ovl_bcyclic_check(const int *desc, int ctxt, int nprow, int npcol, int myrow, int mycol, int64_t i1, int64_t j1,
                          int64_t sm, int64_t sn, const char *name, const char *iname, const char *jname) {
  OVL_CHECK(sm >= 0 && sn >= 0, OVL_ERR_ARG, "sub(%s) must have sizes >= 0, got %" PRId64 " x %" PRId64, name, sm, sn);
  OVL_CHECK(i1 >= 1 && j1 >= 1, OVL_ERR_ARG, "%s and %s must be >= 1 (1-based), got %" PRId64 " and %" PRId64, iname,
            jname, i1, j1);
  OVL_CHECK(desc != NULL, OVL_ERR_ARG, "the descriptor of %s is NULL", name);
  OVL_CHECK(desc[0] == 1, OVL_ERR_ARG, "descriptor of %s: DTYPE_ must be 1 (dense block-cyclic), got %d", name,
            desc[0]);
  OVL_CHECK(desc[1] == ctxt, OVL_ERR_ARG,
            "descriptor of %s: CTXT_ is %d but C's is %d (A, B and C must share one BLACS context)", name, desc[1],
            ctxt);
  OVL_CHECK(desc[4] >= 1 && desc[5] >= 1, OVL_ERR_ARG, "descriptor of %s: MB_ and NB_ must be >= 1, got %d x %d", name,
            desc[4], desc[5]);
  OVL_CHECK(desc[6] != -1 && desc[7] != -1, OVL_ERR_UNSUPPORTED,
            "descriptor of %s: RSRC_ or CSRC_ = -1 (an operand replicated over the grid) is not supported", name);
  OVL_CHECK(desc[6] >= 0 && desc[6] < nprow, OVL_ERR_ARG,
            "descriptor of %s: RSRC_ must be in [0, %d) (process rows), got %d", name, nprow, desc[6]);
  OVL_CHECK(desc[7] >= 0 && desc[7] < npcol, OVL_ERR_ARG,
            "descriptor of %s: CSRC_ must be in [0, %d) (process columns), got %d", name, npcol, desc[7]);
  OVL_CHECK(desc[2] >= 0 && desc[3] >= 0, OVL_ERR_ARG, "descriptor of %s: M_ and N_ must be >= 0, got %d x %d", name,
            desc[2], desc[3]);
  OVL_CHECK(desc[8] >= 1, OVL_ERR_ARG, "descriptor of %s: LLD_ must be >= 1, got %d", name, desc[8]);
  if (sm == 0 || sn == 0) return OVL_OK; /* an empty submatrix: nothing else matters (as in PBLAS) */
  OVL_CHECK(i1 - 1 + sm <= desc[2] && j1 - 1 + sn <= desc[3], OVL_ERR_SIZE,
            "sub(%s) = %s(%" PRId64 ":%" PRId64 ", %" PRId64 ":%" PRId64 ") does not fit in the %d x %d matrix %s",
            name, name, i1, i1 + sm - 1, j1, j1 + sn - 1, desc[2], desc[3], name);
  int64_t mp = ovl_bcyclic_numroc(desc[2], desc[4], myrow, desc[6], nprow);
  int64_t nq = ovl_bcyclic_numroc(desc[3], desc[5], mycol, desc[7], npcol);
  OVL_CHECK(nq == 0 || desc[8] >= mp, OVL_ERR_ARG,
            "descriptor of %s: LLD_ must be >= %" PRId64 " (the local rows of process (%d, %d)), got %d", name, mp,
            myrow, mycol, desc[8]);
  return OVL_OK;
}

ovl_bcview ovl_bcyclic_view(const int *desc, int64_t i1, int64_t j1, int64_t sm, int64_t sn, double *data) {
  ovl_bcview v = {desc[2], desc[3], desc[4], desc[5], desc[6], desc[7], desc[8], i1 - 1, j1 - 1, sm, sn, data};
  return v;
}

/* ---- workspace ------------------------------------------------------------------ */

void ovl_bcyclic_ws_free(ovl_bcyclic_ws *ws) {
  ovl_free(&ws->buf);
  ws->cap = 0;
}

ovl_err ovl_bcyclic_ws_reserve(ovl_bcyclic_ws *ws, size_t n) {
  if (ws->buf != NULL && n <= ws->cap) return OVL_OK;
  ovl_bcyclic_ws_free(ws);
  OVL_CHECK(n <= SIZE_MAX / sizeof(double), OVL_ERR_NOMEM, "cannot allocate %zu doubles", n);
  OVL_TRY(ovl_malloc(sizeof(double) * n, &ws->buf));
  ws->cap = n;
  return OVL_OK;
}

/* ---- copies --------------------------------------------------------------------- */

/* dst := src, rows x cols, column-major. */
static void copy_block(double *dst, int64_t ldd, const double *src, int64_t lds, int64_t rows, int64_t cols) {
  if (rows == 1) {
    for (int64_t c = 0; c < cols; c++) dst[c * ldd] = src[c * lds];
    return;
  }
  for (int64_t c = 0; c < cols; c++) memcpy(dst + c * ldd, src + c * lds, sizeof(double) * (size_t)rows);
}

/* dst (cols x rows) := src (rows x cols)^T, in tiles that stay in cache. */
static void transpose_block(double *dst, int64_t ldd, const double *src, int64_t lds, int64_t rows, int64_t cols) {
  enum { TILE = 32 };
  for (int64_t c0 = 0; c0 < cols; c0 += TILE)
    for (int64_t r0 = 0; r0 < rows; r0 += TILE) {
      int64_t c1 = c0 + TILE < cols ? c0 + TILE : cols, r1 = r0 + TILE < rows ? r0 + TILE : rows;
      for (int64_t c = c0; c < c1; c++)
        for (int64_t r = r0; r < r1; r++) dst[c + r * ldd] = src[r + c * lds];
    }
}

/* ---- the exchange ------------------------------------------------------------------ */

/* A rectangle of the block-cyclic matrix, global 0-based half-open ranges. */
typedef struct window {
  int64_t r0, r1, c0, c1;
} window;

/* The block-cyclic entries that dmat block (roff, lm, coff, ln) holds. */
static window dmat_window(const ovl_bcview *v, int trans, int64_t roff, int64_t lm, int64_t coff, int64_t ln) {
  window w;
  if (!trans) {
    w.r0 = v->i0 + roff, w.r1 = w.r0 + lm, w.c0 = v->j0 + coff, w.c1 = w.c0 + ln;
  } else {
    w.r0 = v->i0 + coff, w.r1 = w.r0 + ln, w.c0 = v->j0 + roff, w.c1 = w.c0 + lm;
  }
  return w;
}

/* Entries of window w that block-cyclic process (bi, bj) owns: lr x lc, and
 * where they start in its local array (lr0, lc0). */
static void owned(const bcdim *rd, const bcdim *cd, int bi, int bj, const window *w, int64_t *lr0, int64_t *lr,
                  int64_t *lc0, int64_t *lc) {
  *lr0 = dim_below(rd, bi, w->r0);
  *lr = dim_below(rd, bi, w->r1) - *lr0;
  *lc0 = dim_below(cd, bj, w->c0);
  *lc = dim_below(cd, bj, w->c1) - *lc0;
  if (*lr == 0 || *lc == 0) *lr = *lc = 0;
}

/* Move the pieces of window w owned by block-cyclic process (bi, bj) between
 * a packed column-major array pk (their lr x lc rectangle, in local order,
 * leading dimension pld) and the dense dmat block den (ld), whose (0, 0) is
 * the window's origin (transposed when trans). to_dense: pk -> den. */
static void dense_pieces(int to_dense, int trans, double *pk, int64_t pld, double *den, int64_t ld, const bcdim *rd,
                         int bi, const bcdim *cd, int bj, const window *w) {
  int64_t lc = 0, lr = 0, yc = 0;
  for (int64_t gc = dim_next(cd, bj, w->c0, w->c1, &lc); lc > 0; gc = dim_next(cd, bj, gc + lc, w->c1, &lc)) {
    int64_t xr = 0;
    for (int64_t gr = dim_next(rd, bi, w->r0, w->r1, &lr); lr > 0; gr = dim_next(rd, bi, gr + lr, w->r1, &lr)) {
      double *p = pk + xr + yc * pld;
      if (!trans) {
        double *d = den + (gr - w->r0) + (gc - w->c0) * ld;
        if (to_dense) copy_block(d, ld, p, pld, lr, lc);
        else copy_block(p, pld, d, ld, lr, lc);
      } else {
        double *d = den + (gc - w->c0) + (gr - w->r0) * ld;
        if (to_dense) transpose_block(d, ld, p, pld, lr, lc);
        else transpose_block(p, pld, d, ld, lc, lr);
      }
      xr += lr;
    }
    yc += lc;
  }
}

/* Offsets and lengths of the block of D that grid position (i, j) of a p x q
 * grid owns. */
static void block_of(ovl_dmat D, int p, int q, int i, int j, int64_t *roff, int64_t *lm, int64_t *coff, int64_t *ln) {
  int64_t m = ovl_dmat_rows(D), n = ovl_dmat_cols(D);
  *roff = ovl_block_off(m, p, i);
  *lm = ovl_block_len(m, p, i);
  *coff = ovl_block_off(n, q, j);
  *ln = ovl_block_len(n, q, j);
}

/* to_dmat: D := op(sub(v)); else sub(v) := op^-1(D). */
static ovl_err exchange(const ovl_bcview *v, ovl_dmat D, int trans, int to_dmat, ovl_bcyclic_ws *ws) {
  ovl_grid2d g = ovl_dmat_grid(D);
  MPI_Comm parent = ovl_grid2d_parent(g);
  int P = 0, p = 1, q = 1, mi = -1, mj = -1, active = ovl_grid2d_active(g);
  OVL_MPI(MPI_Comm_size(parent, &P));
  ovl_grid2d_dims(g, &p, &q);
  ovl_grid2d_coords(g, &mi, &mj);
  ovl_err rc = OVL_OK;
  int64_t em = trans ? v->sn : v->sm, en = trans ? v->sm : v->sn;
  if (ovl_dmat_rows(D) != em || ovl_dmat_cols(D) != en)
    rc = ovl_err_set(OVL_ERR_SIZE,
                     "the distributed matrix is %" PRId64 " x %" PRId64 ", expected %" PRId64 " x %" PRId64
                     " (the %ssubmatrix)",
                     ovl_dmat_rows(D), ovl_dmat_cols(D), em, en, trans ? "transposed " : "");
  bcdim rd = {v->mb, v->rsrc, p}, cd = {v->nb, v->csrc, q};
  ovl_bcyclic_ws own = {NULL, 0};
  if (ws == NULL) ws = &own;
  int *cnt = NULL;
  int64_t stot = 0, rtot = 0;
  if (rc == OVL_OK) rc = ovl_calloc(sizeof(int) * 4 * (size_t)P, &cnt);
  int *scnt = cnt, *sdsp = cnt + P, *rcnt = cnt + 2 * P, *rdsp = cnt + 3 * P;
  window mine = {0, 0, 0, 0};
  int self = active ? mi * q + mj : -1;
  if (rc == OVL_OK && active) {
    mine =
        dmat_window(v, trans, ovl_dmat_row_off(D), ovl_dmat_local_rows(D), ovl_dmat_col_off(D), ovl_dmat_local_cols(D));
    for (int r = 0; r < p * q && rc == OVL_OK; r++) {
      if (r == self) continue; /* copied directly below */
      int64_t ro, lm, co, ln, a0, la, b0, lb, sn, rn;
      block_of(D, p, q, r / q, r % q, &ro, &lm, &co, &ln);
      window wr = dmat_window(v, trans, ro, lm, co, ln);
      /* block-cyclic side (bi, bj) -> dmat side with window w: what (bi, bj) owns of w */
      owned(&rd, &cd, mi, mj, &wr, &a0, &la, &b0, &lb); /* I am block-cyclic, r is dmat */
      int64_t mine_to_r = la * lb;
      owned(&rd, &cd, r / q, r % q, &mine, &a0, &la, &b0, &lb); /* r is block-cyclic, I am dmat */
      int64_t r_to_mine = la * lb;
      sn = to_dmat ? mine_to_r : r_to_mine;
      rn = to_dmat ? r_to_mine : mine_to_r;
      if (sn > INT32_MAX - stot || rn > INT32_MAX - rtot) {
        rc = ovl_err_set(OVL_ERR_SIZE,
                         "a redistribution message exceeds 2^31 - 1 doubles (%" PRId64 " + %" PRId64 ", %" PRId64
                         " + %" PRId64 ")",
                         stot, sn, rtot, rn);
        break;
      }
      scnt[r] = (int)sn;
      sdsp[r] = (int)stot;
      stot += sn;
      rcnt[r] = (int)rn;
      rdsp[r] = (int)rtot;
      rtot += rn;
    }
  }
  if (rc == OVL_OK) rc = ovl_bcyclic_ws_reserve(ws, (size_t)(stot + rtot));
  rc = ovl_err_agree(parent, rc);
  if (rc != OVL_OK) goto done;
  double *sbuf = ws->buf, *rbuf = ws->buf + stot;
  /* pack */
  for (int r = 0; r < p * q && active; r++) {
    if (scnt[r] == 0) continue;
    int64_t ro, lm, co, ln, a0, la, b0, lb;
    block_of(D, p, q, r / q, r % q, &ro, &lm, &co, &ln);
    if (to_dmat) { /* my block-cyclic rectangle of r's window */
      window wr = dmat_window(v, trans, ro, lm, co, ln);
      owned(&rd, &cd, mi, mj, &wr, &a0, &la, &b0, &lb);
      copy_block(sbuf + sdsp[r], la, v->data + a0 + b0 * v->lld, v->lld, la, lb);
    } else { /* the pieces of my dmat block that block-cyclic process r owns */
      owned(&rd, &cd, r / q, r % q, &mine, &a0, &la, &b0, &lb);
      dense_pieces(0, trans, sbuf + sdsp[r], la, ovl_dmat_data(D), ovl_dmat_ld(D), &rd, r / q, &cd, r % q, &mine);
    }
  }
  /* my own part: straight between the local arrays */
  if (active) {
    int64_t a0, la, b0, lb;
    owned(&rd, &cd, mi, mj, &mine, &a0, &la, &b0, &lb);
    if (la * lb > 0)
      dense_pieces(to_dmat, trans, v->data + a0 + b0 * v->lld, v->lld, ovl_dmat_data(D), ovl_dmat_ld(D), &rd, mi, &cd,
                   mj, &mine);
  }
  if (MPI_Alltoallv(sbuf, scnt, sdsp, MPI_DOUBLE, rbuf, rcnt, rdsp, MPI_DOUBLE, parent) != MPI_SUCCESS)
    ovl_fatal(parent, OVL_ERR_MPI, "MPI_Alltoallv failed while redistributing a block-cyclic matrix");
  /* unpack */
  for (int r = 0; r < p * q && active; r++) {
    if (rcnt[r] == 0) continue;
    int64_t ro, lm, co, ln, a0, la, b0, lb;
    if (to_dmat) { /* pieces of my dmat block that r owned */
      owned(&rd, &cd, r / q, r % q, &mine, &a0, &la, &b0, &lb);
      dense_pieces(1, trans, rbuf + rdsp[r], la, ovl_dmat_data(D), ovl_dmat_ld(D), &rd, r / q, &cd, r % q, &mine);
    } else { /* my block-cyclic rectangle of r's dmat window */
      block_of(D, p, q, r / q, r % q, &ro, &lm, &co, &ln);
      window wr = dmat_window(v, trans, ro, lm, co, ln);
      owned(&rd, &cd, mi, mj, &wr, &a0, &la, &b0, &lb);
      copy_block(v->data + a0 + b0 * v->lld, v->lld, rbuf + rdsp[r], la, la, lb);
    }
  }
done:
  ovl_free(&cnt);
  ovl_bcyclic_ws_free(&own);
  return rc;
}

ovl_err ovl_bcyclic_to_dmat(const ovl_bcview *src, int trans, ovl_dmat dst, ovl_bcyclic_ws *ws) {
  return exchange(src, dst, trans != 0, 1, ws);
}

ovl_err ovl_bcyclic_from_dmat(ovl_dmat src, int trans, const ovl_bcview *dst, ovl_bcyclic_ws *ws) {
  return exchange(dst, src, trans != 0, 0, ws);
}

/* ---- local scaling ---------------------------------------------------------------- */

void ovl_bcyclic_scale(const ovl_bcview *v, int nprow, int npcol, int myrow, int mycol, double beta) {
  if (beta == 1.0 || v->sm == 0 || v->sn == 0) return;
  bcdim rd = {v->mb, v->rsrc, nprow}, cd = {v->nb, v->csrc, npcol};
  window w = {v->i0, v->i0 + v->sm, v->j0, v->j0 + v->sn};
  int64_t a0, la, b0, lb;
  owned(&rd, &cd, myrow, mycol, &w, &a0, &la, &b0, &lb);
  for (int64_t c = 0; c < lb; c++) {
    double *col = v->data + a0 + (b0 + c) * v->lld;
    if (beta == 0.0) memset(col, 0, sizeof(double) * (size_t)la);
    else
      for (int64_t r = 0; r < la; r++) col[r] *= beta;
  }
}
