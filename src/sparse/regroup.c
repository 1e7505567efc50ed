/* Regrouping a block-sparse matrix into coarser blocks: consecutive blocks
 * merged up to a target size, the entries moved by one MPI_Alltoallv.
 *
 * Atom blocks of a minimal basis hold 1-9 orbitals: their products are
 * dgemm calls on 2 x 4 matrices, and the index (one norm, one offset per
 * block) outweighs the arithmetic. Blocks of consecutive atoms, which sit
 * close in space when the atoms are ordered as a molecule's or a crystal
 * cell's usually are, keep most of the sparsity at a fraction of the
 * overhead (docs/guides/sparse.md, "Block size"). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "ovl/node.h"
#include "sparse/sparse_impl.h"

ovl_err ovl_bsmat_group_sizes(int nblk, const int *bs, int target, int *ngroups, int *gs) {
  const char *fn = "ovl_bsmat_group_sizes";
  OVL_TRY(ovl_check_ptr(bs, fn, "bs"));
  OVL_TRY(ovl_check_ptr(ngroups, fn, "ngroups"));
  OVL_TRY(ovl_check_ptr(gs, fn, "gs"));
  OVL_CHECK(nblk >= 1, OVL_ERR_ARG, "%s: the block count must be >= 1, got %d", fn, nblk);
  OVL_CHECK(target >= 1, OVL_ERR_ARG, "%s: the target block size must be >= 1, got %d", fn, target);
  int ng = 0, cur = 0;
  for (int b = 0; b < nblk; b++) {
    OVL_CHECK(bs[b] >= 1, OVL_ERR_ARG, "%s: block %d has size %d, expected >= 1", fn, b, bs[b]);
    if (cur > 0 && (int64_t)cur + bs[b] > target) gs[ng++] = cur, cur = 0;
    cur += bs[b];
  }
  gs[ng++] = cur;
  *ngroups = ng;
  return OVL_OK;
}

/* One fine block on its way: its global fine indices, then its values. */
enum { HDR = 2 };

typedef struct rec {
  int64_t lr; /* the coarse local row at the receiver */
  int cj;     /* the coarse global column */
  int64_t at; /* the record's place in the receive buffer */
} rec;

static int cmp_rec(const void *a, const void *b) {
  const rec *x = a, *y = b;
  if (x->lr != y->lr) return x->lr < y->lr ? -1 : 1;
  if (x->cj != y->cj) return x->cj < y->cj ? -1 : 1;
  return (x->at > y->at) - (x->at < y->at);
}

typedef struct rg_ctx {
  int *grp;      /* fine block -> coarse block */
  int64_t *goff; /* fine block -> offset inside its coarse block */
  int *cnt;      /* 4 P: send counts, displacements, receive counts, displacements */
  int64_t *at;   /* P: the packing cursors */
  double *sbuf, *rbuf;
  rec *recs;
  int p, q; /* B's grid */
} rg_ctx;

static void rg_free(rg_ctx *c) {
  ovl_free(&c->grp);
  ovl_free(&c->goff);
  ovl_free(&c->cnt);
  ovl_free(&c->at);
  ovl_free(&c->sbuf);
  ovl_free(&c->rbuf);
  ovl_free(&c->recs);
}

/* The rank of the owner of fine block (fi, fj) in B's p x q grid (the
 * grid's dims, which B's handle lacks on ranks outside it). */
static int dest_of(ovl_bsmat B, const rg_ctx *c, int fi, int fj) {
  return (B->perm[c->grp[fi]] % c->p) * c->q + (B->perm[c->grp[fj]] / c->p) % c->q;
}

/* Counts (in doubles) per destination; the total into *tot. */
static ovl_err count_out(ovl_bsmat A, int send, ovl_bsmat B, rg_ctx *c, int P, int64_t *tot, const char *fn) {
  int64_t *c64 = NULL;
  OVL_TRY(ovl_calloc(sizeof(int64_t) * (size_t)P, &c64));
  *tot = 0;
  for (int64_t r = 0; r < (send ? A->nrows : 0); r++)
    for (int64_t k = A->loc.rowptr[r]; k < A->loc.rowptr[r + 1]; k++) {
      int fi = A->rows[r], fj = A->loc.colidx[k];
      int64_t len = HDR + (int64_t)A->bs[fi] * A->bs[fj];
      c64[dest_of(B, c, fi, fj)] += len, *tot += len;
    }
  ovl_err rc = OVL_OK;
  int64_t d = 0;
  for (int t = 0; t < P && rc == OVL_OK; t++) {
    if (c64[t] > INT32_MAX || d > INT32_MAX)
      rc = ovl_err_set(OVL_ERR_SIZE, "%s: %" PRId64 " doubles for one rank exceed MPI's int counts", fn,
                       c64[t] > d ? c64[t] : d);
    c->cnt[t] = (int)c64[t], c->cnt[P + t] = (int)d, d += c64[t];
  }
  ovl_free(&c64);
  return rc;
}

static void pack(ovl_bsmat A, int send, ovl_bsmat B, rg_ctx *c, int P) {
  int64_t *at = c->at;
  for (int t = 0; t < P; t++) at[t] = c->cnt[P + t];
  for (int64_t r = 0; r < (send ? A->nrows : 0); r++)
    for (int64_t k = A->loc.rowptr[r]; k < A->loc.rowptr[r + 1]; k++) {
      int fi = A->rows[r], fj = A->loc.colidx[k];
      int64_t len = (int64_t)A->bs[fi] * A->bs[fj];
      double *o = c->sbuf + at[dest_of(B, c, fi, fj)];
      o[0] = (double)fi, o[1] = (double)fj;
      memcpy(o + HDR, A->loc.val + A->loc.valoff[k], sizeof(double) * (size_t)len);
      at[dest_of(B, c, fi, fj)] += HDR + len;
    }
}

/* B's blocks from the received fine blocks, each coarse block once. */
static ovl_err unpack(ovl_bsmat A, ovl_bsmat B, rg_ctx *c, int64_t rtot) {
  int64_t nrec = 0;
  for (int64_t at = 0; at < rtot;) {
    int fi = (int)c->rbuf[at], fj = (int)c->rbuf[at + 1];
    c->recs[nrec].lr = B->lrow[c->grp[fi]], c->recs[nrec].cj = c->grp[fj], c->recs[nrec].at = at, nrec++;
    at += HDR + (int64_t)A->bs[fi] * A->bs[fj];
  }
  qsort(c->recs, (size_t)nrec, sizeof(rec), cmp_rec);
  ovl_i_sparse_clear(B);
  ovl_err rc = OVL_OK;
  for (int64_t t = 0; t < nrec && rc == OVL_OK;) {
    int64_t u = t;
    while (u < nrec && c->recs[u].lr == c->recs[t].lr && c->recs[u].cj == c->recs[t].cj) u++;
    int ci = B->rows[c->recs[t].lr], cj = c->recs[t].cj;
    int64_t ld = B->bs[ci];
    double *dst = NULL;
    rc = ovl_i_sparse_append_block(B, c->recs[t].lr, cj, NULL, 0.0, &dst);
    for (int64_t s = t; s < u && rc == OVL_OK; s++) {
      const double *v = c->rbuf + c->recs[s].at;
      int fi = (int)v[0], fj = (int)v[1], m = A->bs[fi];
      for (int y = 0; y < A->bs[fj]; y++)
        memcpy(dst + c->goff[fi] + (c->goff[fj] + y) * ld, v + HDR + (int64_t)y * m, sizeof(double) * (size_t)m);
    }
    if (rc == OVL_OK) B->loc.nrm[B->loc.nnzb - 1] = ovl_i_sparse_norm(dst, ld * B->bs[cj]);
    t = u;
  }
  ovl_i_sparse_finish(B);
  return rc;
}

ovl_err ovl_i_sparse_move(ovl_bsmat A, int send, ovl_bsmat B, MPI_Comm comm, const char *fn) {
  int P = 0;
  OVL_MPI(MPI_Comm_size(comm, &P));
  rg_ctx c = {0};
  int dims[2] = {B->p, B->q};
  OVL_MPI(MPI_Allreduce(MPI_IN_PLACE, dims, 2, MPI_INT, MPI_MAX, comm));
  c.p = dims[0], c.q = dims[1];
  ovl_err rc = ovl_malloc(sizeof(int) * (size_t)A->nblk, &c.grp);
  if (rc == OVL_OK) rc = ovl_malloc(sizeof(int64_t) * (size_t)A->nblk, &c.goff);
  if (rc == OVL_OK) rc = ovl_malloc(sizeof(int) * (size_t)(4 * P), &c.cnt);
  if (rc == OVL_OK)
    for (int b = 0, g = 0, off = 0; b < A->nblk; b++) {
      if (off == B->bs[g]) g++, off = 0;
      c.grp[b] = g, c.goff[b] = off, off += A->bs[b];
    }
  int64_t stot = 0, rtot = 0;
  if (rc == OVL_OK) rc = count_out(A, send, B, &c, P, &stot, fn);
  rc = ovl_err_agree(comm, rc);
  if (rc == OVL_OK && MPI_Alltoall(c.cnt, 1, MPI_INT, c.cnt + 2 * P, 1, MPI_INT, comm) != MPI_SUCCESS)
    ovl_fatal(comm, OVL_ERR_MPI, "MPI_Alltoall failed in %s", fn);
  if (rc == OVL_OK)
    for (int t = 0; t < P; t++) c.cnt[3 * P + t] = (int)(rtot > INT32_MAX ? 0 : rtot), rtot += c.cnt[2 * P + t];
  if (rc == OVL_OK && rtot > INT32_MAX)
    rc = ovl_err_set(OVL_ERR_SIZE, "%s: %" PRId64 " doubles to receive exceed MPI's int displacements", fn, rtot);
  /* the two buffers and the coarse blocks (at most the received values) */
  int64_t need = (int64_t)sizeof(double) * (stot + 2 * rtot) + (int64_t)sizeof(rec) * (rtot / (HDR + 1) + 1);
  if (rc == OVL_OK) rc = ovl_check_memory(comm, need, 0);
  if (rc == OVL_OK) rc = ovl_malloc(sizeof(double) * (size_t)(stot + 1), &c.sbuf);
  if (rc == OVL_OK) rc = ovl_malloc(sizeof(double) * (size_t)(rtot + 1), &c.rbuf);
  int64_t nrec_max = rtot / (HDR + 1) + 1;
  if (rc == OVL_OK) rc = ovl_malloc(sizeof(rec) * (size_t)nrec_max, &c.recs);
  if (rc == OVL_OK) rc = ovl_malloc(sizeof(int64_t) * (size_t)P, &c.at);
  rc = ovl_err_agree(comm, rc);
  if (rc == OVL_OK) {
    pack(A, send, B, &c, P);
    if (MPI_Alltoallv(c.sbuf, c.cnt, c.cnt + P, MPI_DOUBLE, c.rbuf, c.cnt + 2 * P, c.cnt + 3 * P, MPI_DOUBLE, comm) !=
        MPI_SUCCESS)
      ovl_fatal(comm, OVL_ERR_MPI, "MPI_Alltoallv failed in %s", fn);
    ovl_free(&c.sbuf);
    rc = ovl_i_sparse_reserve(B, 0, rtot);
    if (rc == OVL_OK) rc = unpack(A, B, &c, rtot);
    rc = ovl_err_agree(comm, rc);
  }
  rg_free(&c);
  return rc;
}

ovl_err ovl_bsmat_regroup(ovl_bsmat A, int target, ovl_bsmat *out) {
  const char *fn = "ovl_bsmat_regroup";
  OVL_TRY(ovl_check_ptr(out, fn, "out"));
  *out = NULL;
  OVL_TRY(ovl_check_handle(A, fn, "A"));
  MPI_Comm comm = ovl_grid2d_parent(A->g);
  int ng = 0, *gs = NULL;
  ovl_err rc =
      target >= 1 ? OVL_OK : ovl_err_set(OVL_ERR_ARG, "%s: the target block size must be >= 1, got %d", fn, target);
  if (rc == OVL_OK) rc = ovl_malloc(sizeof(int) * (size_t)A->nblk, &gs);
  if (rc == OVL_OK) rc = ovl_bsmat_group_sizes(A->nblk, A->bs, target, &ng, gs);
  const int64_t key[] = {target};
  static const char *const names[] = {"the target block size"};
  rc = ovl_err_agree_same(comm, rc, key, names, 1);
  ovl_bsmat B = NULL;
  if (rc == OVL_OK) rc = ovl_bsmat_create(A->g, ng, gs, A->seed, &B);
  ovl_free(&gs);
  if (rc != OVL_OK) return rc;
  rc = ovl_i_sparse_move(A, 1, B, comm, fn);
  if (rc != OVL_OK) {
    ovl_bsmat_destroy(&B);
    return rc;
  }
  *out = B;
  return OVL_OK;
}

/* The checks of both moves: the 2D grid and the 3D grid over the same
 * ranks in the same order, agreed over the 3D grid's parent. */
static ovl_err check_move(ovl_grid2d g2, ovl_grid3d g, const char *fn) {
  int cmp = MPI_UNEQUAL;
  ovl_err rc = OVL_OK;
  int e = MPI_Comm_compare(ovl_grid2d_parent(g2), ovl_grid3d_parent(g), &cmp);
  if (e != MPI_SUCCESS) rc = ovl_err_mpi(e, "MPI_Comm_compare");
  else if (cmp != MPI_IDENT && cmp != MPI_CONGRUENT)
    rc = ovl_err_set(OVL_ERR_ARG,
                     "%s: the 2D grid and the 3D grid are not over the same ranks in the same order (their parent "
                     "communicators differ)",
                     fn);
  return ovl_err_agree(ovl_grid3d_parent(g), rc);
}

ovl_err ovl_bsmat_to_plane(ovl_bsmat A, ovl_grid3d g, ovl_bsmat *out) {
  const char *fn = "ovl_bsmat_to_plane";
  OVL_TRY(ovl_check_ptr(out, fn, "out"));
  *out = NULL;
  OVL_TRY(ovl_check_handle(A, fn, "A"));
  OVL_TRY(ovl_check_handle(g, fn, "g"));
  MPI_Comm comm = ovl_grid3d_parent(g);
  OVL_TRY(check_move(A->g, g, fn));
  ovl_bsmat B = NULL;
  ovl_err rc = ovl_err_agree(comm, ovl_bsmat_create(ovl_grid3d_plane(g), A->nblk, A->bs, A->seed, &B));
  if (rc == OVL_OK) rc = ovl_i_sparse_move(A, 1, B, comm, fn);
  if (rc != OVL_OK) {
    ovl_bsmat_destroy(&B);
    return rc;
  }
  *out = B;
  return OVL_OK;
}

ovl_err ovl_bsmat_from_plane(ovl_bsmat A, ovl_grid3d g, ovl_grid2d g2, ovl_bsmat *out) {
  const char *fn = "ovl_bsmat_from_plane";
  OVL_TRY(ovl_check_ptr(out, fn, "out"));
  *out = NULL;
  OVL_TRY(ovl_check_handle(A, fn, "A"));
  OVL_TRY(ovl_check_handle(g, fn, "g"));
  OVL_TRY(ovl_check_handle(g2, fn, "g2"));
  MPI_Comm comm = ovl_grid3d_parent(g);
  ovl_err rc = A->g == ovl_grid3d_plane(g)
                   ? OVL_OK
                   : ovl_err_set(OVL_ERR_ARG, "%s: A is not on the 3D grid's plane (ovl_grid3d_plane(g))", fn);
  OVL_TRY(ovl_err_agree(comm, rc));
  OVL_TRY(check_move(g2, g, fn));
  int i = -1, j = -1, k = -1;
  ovl_grid3d_coords(g, &i, &j, &k);
  ovl_bsmat B = NULL;
  rc = ovl_err_agree(comm, ovl_bsmat_create(g2, A->nblk, A->bs, A->seed, &B));
  if (rc == OVL_OK) rc = ovl_i_sparse_move(A, k == 0, B, comm, fn);
  if (rc != OVL_OK) {
    ovl_bsmat_destroy(&B);
    return rc;
  }
  *out = B;
  return OVL_OK;
}
