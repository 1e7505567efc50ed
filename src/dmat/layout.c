/* Exchange between an ovl_dmat and a caller's distribution (ovl/dmat.h):
 * block-cyclic (ScaLAPACK's) or contiguous parts along each dimension, on a
 * process grid of any shape over the dmat's parent. One MPI_Alltoallv per
 * exchange.
 *
 * Both sides keep their indices in global order, so the caller's local rows
 * (columns) that fall into one dmat row (column) block form one contiguous
 * local range, and a dmat block's rows (columns) grouped by the caller's
 * process that holds them keep their order: each peer's piece is one
 * rectangle on the caller's side and a gather by index lists on the dmat
 * side. */
#include <inttypes.h>
#include <string.h>

#include "dmat/dmat_impl.h"

/* ---- axes ------------------------------------------------------------------ */

int64_t ovl_axis_len(const ovl_axis *a, int64_t n, int ip) {
  if (!a || a->np < 1 || ip < 0 || ip >= a->np || n < 0) return 0;
  if (a->nb >= 1) { /* ScaLAPACK's NUMROC */
    if (a->src < 0 || a->src >= a->np) return 0;
    int64_t off = ((int64_t)ip - a->src + a->np) % a->np;
    int64_t nblocks = n / a->nb, num = nblocks / a->np * a->nb, extra = nblocks % a->np;
    if (off < extra) num += a->nb;
    else if (off == extra) num += n % a->nb;
    return num;
  }
  return a->off ? a->off[ip + 1] - a->off[ip] : 0;
}

/* Global index of local index l of process ip. */
static int64_t ax_l2g(const ovl_axis *a, int ip, int64_t l) {
  if (a->nb >= 1) {
    int64_t off = ((int64_t)ip - a->src + a->np) % a->np;
    return ((l / a->nb) * a->np + off) * a->nb + l % a->nb;
  }
  return a->off[ip] + l;
}

/* The process that holds global index g (0 <= g < n). */
static int ax_owner(const ovl_axis *a, int64_t g) {
  if (a->nb >= 1) return (int)((g / a->nb + a->src) % a->np);
  int lo = 0, hi = a->np; /* off[lo] <= g < off[hi]; empty parts are skipped */
  while (hi - lo > 1) {
    int mid = lo + (hi - lo) / 2;
    if (a->off[mid] <= g) lo = mid;
    else hi = mid;
  }
  return lo;
}

static ovl_err axis_check(const ovl_axis *a, int64_t n, const char *what) {
  OVL_CHECK(a != NULL, OVL_ERR_ARG, "the %s axis is NULL", what);
  OVL_CHECK(a->np >= 1, OVL_ERR_ARG, "the %s axis: np must be >= 1, got %d", what, a->np);
  OVL_CHECK(a->nb >= 0, OVL_ERR_ARG,
            "the %s axis: nb must be >= 1 (block-cyclic) or 0 (contiguous parts), got %" PRId64, what, a->nb);
  if (a->nb >= 1) {
    OVL_CHECK(a->src >= 0 && a->src < a->np, OVL_ERR_ARG, "the %s axis: src must be in [0, %d), got %d", what, a->np,
              a->src);
    return OVL_OK;
  }
  OVL_CHECK(a->off != NULL, OVL_ERR_ARG, "the %s axis: contiguous parts (nb = 0) need np + 1 offsets, off is NULL",
            what);
  OVL_CHECK(a->off[0] == 0 && a->off[a->np] == n, OVL_ERR_ARG,
            "the %s axis: the offsets must run from 0 to %" PRId64 ", got off[0] = %" PRId64 " and off[%d] = %" PRId64,
            what, n, a->off[0], a->np, a->off[a->np]);
  for (int i = 0; i < a->np; i++)
    OVL_CHECK(a->off[i + 1] >= a->off[i], OVL_ERR_ARG,
              "the %s axis: the offsets must not decrease, got off[%d] = %" PRId64 " > off[%d] = %" PRId64, what, i,
              a->off[i], i + 1, a->off[i + 1]);
  return OVL_OK;
}

/* FNV-1a over what defines an axis. */
static uint64_t hash_i64(uint64_t h, int64_t v) {
  for (int b = 0; b < 8; b++) h = (h ^ (uint64_t)((v >> (8 * b)) & 0xff)) * 1099511628211ull;
  return h;
}
static uint64_t axis_hash(uint64_t h, const ovl_axis *a) {
  h = hash_i64(h, a->np);
  h = hash_i64(h, a->nb);
  if (a->nb >= 1) return hash_i64(h, a->src);
  for (int i = 0; i <= a->np; i++) h = hash_i64(h, a->off[i]);
  return h;
}

/* ---- the exchange ------------------------------------------------------------ */

/* dir 0: X := a; dir 1: a := X. */
static ovl_err exchange(ovl_dmat X, const ovl_axis *ra, const ovl_axis *ca, double *a, int64_t lld, int dir) {
  ovl_grid2d g = X->grid;
  MPI_Comm comm = ovl_grid2d_parent(g);
  int P = 0, rank = 0, pd = 0, qd = 0;
  OVL_MPI(MPI_Comm_size(comm, &P));
  OVL_MPI(MPI_Comm_rank(comm, &rank));
  ovl_grid2d_dims(g, &pd, &qd);
  const int64_t m = X->m, n = X->n;
  /* the caller's layout: checked, then the same on every rank */
  ovl_err rc = axis_check(ra, m, "row");
  if (rc == OVL_OK) rc = axis_check(ca, n, "column");
  if (rc == OVL_OK && ra->np * ca->np != P)
    rc = ovl_err_set(OVL_ERR_ARG, "the layout's process grid is %d x %d, but the matrix's communicator has %d ranks",
                     ra->np, ca->np, P);
  int npc = rc == OVL_OK ? ca->np : 1, myrow = rank / npc, mycol = rank % npc;
  int64_t mloc = 0, nloc = 0;
  if (rc == OVL_OK) {
    mloc = ovl_axis_len(ra, m, myrow), nloc = ovl_axis_len(ca, n, mycol);
    int64_t need = nloc > 0 && mloc > 1 ? mloc : 1;
    if (lld < need)
      rc = ovl_err_set(OVL_ERR_ARG,
                       "the local array's leading dimension is %" PRId64 ", less than %" PRId64
                       " (the local rows of rank %d)",
                       lld, need, rank);
    else if (a == NULL && mloc * nloc > 0)
      rc = ovl_err_set(OVL_ERR_ARG, "the local array of rank %d is NULL but holds %" PRId64 " x %" PRId64 " entries",
                       rank, mloc, nloc);
  }
  OVL_TRY(ovl_err_agree(comm, rc));
  uint64_t h[2];
  h[0] = axis_hash(axis_hash(14695981039346656037ull, ra), ca);
  h[1] = ~h[0];
  OVL_MPI(MPI_Allreduce(MPI_IN_PLACE, h, 2, MPI_UINT64_T, MPI_MAX, comm));
  if (h[0] != ~h[1])
    return ovl_err_set(OVL_ERR_ARG, "the layout (its axes) differs between the ranks of the matrix's communicator");
  const int npr = ra->np;
  int act = ovl_grid2d_active(g);
  int64_t ro = act ? X->roff : 0, co = act ? X->coff : 0;
  int64_t lm = act ? X->lm : 0, ln = act ? X->ln : 0, ld = X->ld;
  double *x = act ? X->data : NULL;
  /* caller's side: [lo, hi) of its local rows (columns) in each dmat row
   * (column) block; dmat side: its rows (columns) by the caller's process row
   * (column) that holds them, counts then starts, and the index lists */
  int64_t *rlo = NULL, *clo = NULL, *rows = NULL, *cols = NULL, *rstart = NULL, *cstart = NULL;
  int *cnt = NULL;
  double *sbuf = NULL, *rbuf = NULL;
  rc = ovl_calloc(sizeof(int64_t) * (size_t)(2 * pd + 2 * qd + 2 * (npr + 1) + 2 * (npc + 1)) +
                      sizeof(int64_t) * (size_t)(lm + ln + 2),
                  &rlo);
  if (rc == OVL_OK) rc = ovl_calloc(sizeof(int) * 4 * (size_t)P, &cnt);
  if (rc == OVL_OK) {
    clo = rlo + 2 * pd;
    rstart = clo + 2 * qd;
    cstart = rstart + (npr + 1) * 2;
    rows = cstart + (npc + 1) * 2;
    cols = rows + lm;
    for (int64_t l = 0; l < mloc; l++) {
      int i = ovl_block_owner(m, pd, ax_l2g(ra, myrow, l));
      if (rlo[2 * i + 1] == 0) rlo[2 * i] = l;
      rlo[2 * i + 1] = l + 1;
    }
    for (int64_t l = 0; l < nloc; l++) {
      int j = ovl_block_owner(n, qd, ax_l2g(ca, mycol, l));
      if (clo[2 * j + 1] == 0) clo[2 * j] = l;
      clo[2 * j + 1] = l + 1;
    }
    int64_t *rc_ = rstart, *rs_ = rstart + npr + 1, *cc_ = cstart, *cs_ = cstart + npc + 1;
    for (int64_t r = 0; r < lm; r++) rc_[ax_owner(ra, ro + r)]++;
    for (int64_t c = 0; c < ln; c++) cc_[ax_owner(ca, co + c)]++;
    for (int p = 0; p < npr; p++) rs_[p + 1] = rs_[p] + rc_[p];
    for (int p = 0; p < npc; p++) cs_[p + 1] = cs_[p] + cc_[p];
    int64_t *fill = NULL;
    rc = ovl_calloc(sizeof(int64_t) * (size_t)(npr + npc), &fill);
    if (rc == OVL_OK) {
      for (int64_t r = 0; r < lm; r++) {
        int o = ax_owner(ra, ro + r);
        rows[rs_[o] + fill[o]++] = r;
      }
      for (int64_t c = 0; c < ln; c++) {
        int o = ax_owner(ca, co + c);
        cols[cs_[o] + fill[npr + o]++] = c;
      }
      ovl_free(&fill);
    }
  }
  int *bcnt = cnt, *dcnt = cnt + P, *bdsp = cnt + 2 * P, *ddsp = cnt + 3 * P;
  int64_t btot = 0, dtot = 0;
  if (rc == OVL_OK) {
    for (int p = 0; p < P; p++) {
      int64_t nb_ = 0, nd_ = 0;
      if (p < pd * qd) { /* what the caller's side of this rank holds of dmat block p */
        int i = p / qd, j = p % qd;
        nb_ = (rlo[2 * i + 1] - rlo[2 * i]) * (clo[2 * j + 1] - clo[2 * j]);
      }
      if (act) /* what caller's process p holds of this rank's dmat block */
        nd_ = rstart[p / npc] * cstart[p % npc];
      if (nb_ > INT32_MAX - btot || nd_ > INT32_MAX - dtot) {
        rc = ovl_err_set(OVL_ERR_SIZE, "an exchange message exceeds 2^31 - 1 doubles");
        break;
      }
      bcnt[p] = (int)nb_, dcnt[p] = (int)nd_;
      bdsp[p] = (int)btot, ddsp[p] = (int)dtot;
      btot += nb_, dtot += nd_;
    }
  }
  if (rc == OVL_OK) rc = ovl_malloc(sizeof(double) * (size_t)(btot + 1), &sbuf);
  if (rc == OVL_OK) rc = ovl_malloc(sizeof(double) * (size_t)(dtot + 1), &rbuf);
  rc = ovl_err_agree(comm, rc);
  if (rc != OVL_OK) goto done;
  {
    double *bbuf = sbuf, *dbuf = rbuf; /* the caller's side's and the dmat side's data */
    const int64_t *rs_ = rstart + npr + 1, *cs_ = cstart + npc + 1;
    int mrc = MPI_SUCCESS;
    if (dir == 0) {
      double *q = bbuf;
      for (int p = 0; p < pd * qd && p < P; p++) {
        int i = p / qd, j = p % qd;
        for (int64_t lc = clo[2 * j]; lc < clo[2 * j + 1]; lc++)
          for (int64_t lr = rlo[2 * i]; lr < rlo[2 * i + 1]; lr++) *q++ = a[lr + lc * lld];
      }
      mrc = MPI_Alltoallv(bbuf, bcnt, bdsp, MPI_DOUBLE, dbuf, dcnt, ddsp, MPI_DOUBLE, comm);
      if (mrc != MPI_SUCCESS) ovl_fatal(comm, OVL_ERR_MPI, "MPI_Alltoallv failed while importing a matrix");
      const double *u = dbuf;
      for (int p = 0; p < P && act; p++) {
        int r = p / npc, c = p % npc;
        for (int64_t y = cs_[c]; y < cs_[c + 1]; y++)
          for (int64_t z = rs_[r]; z < rs_[r + 1]; z++) x[rows[z] + cols[y] * ld] = *u++;
      }
    } else {
      double *q = dbuf;
      for (int p = 0; p < P && act; p++) {
        int r = p / npc, c = p % npc;
        for (int64_t y = cs_[c]; y < cs_[c + 1]; y++)
          for (int64_t z = rs_[r]; z < rs_[r + 1]; z++) *q++ = x[rows[z] + cols[y] * ld];
      }
      mrc = MPI_Alltoallv(dbuf, dcnt, ddsp, MPI_DOUBLE, bbuf, bcnt, bdsp, MPI_DOUBLE, comm);
      if (mrc != MPI_SUCCESS) ovl_fatal(comm, OVL_ERR_MPI, "MPI_Alltoallv failed while exporting a matrix");
      const double *u = bbuf;
      for (int p = 0; p < pd * qd && p < P; p++) {
        int i = p / qd, j = p % qd;
        for (int64_t lc = clo[2 * j]; lc < clo[2 * j + 1]; lc++)
          for (int64_t lr = rlo[2 * i]; lr < rlo[2 * i + 1]; lr++) a[lr + lc * lld] = *u++;
      }
    }
  }
done:
  ovl_free(&sbuf);
  ovl_free(&rbuf);
  ovl_free(&rlo);
  ovl_free(&cnt);
  return rc;
}

ovl_err ovl_dmat_import(ovl_dmat X, const ovl_axis *rows, const ovl_axis *cols, const double *a, int64_t lld) {
  OVL_TRY(ovl_check_handle(X, "ovl_dmat_import", "X"));
  return exchange(X, rows, cols, (double *)a, lld, 0);
}

ovl_err ovl_dmat_export(ovl_dmat X, const ovl_axis *rows, const ovl_axis *cols, double *a, int64_t lld) {
  OVL_TRY(ovl_check_handle(X, "ovl_dmat_export", "X"));
  return exchange(X, rows, cols, a, lld, 1);
}
