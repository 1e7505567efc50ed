/* Lanes: N_DUP duplicates of one communicator, and collectives split over
 * them (part c of the data travels on lane c). */
#include <stdlib.h>

#include "comm/comm_impl.h"
#include "ovl/trace.h"

struct ovl_lanes_s {
  int ndup, size, rank;
  MPI_Comm comm[OVL_LANES_MAX];
};

void ovl_lanes_part(int64_t n, int ndup, int c, int64_t *off, int64_t *len) {
  /* ceil(n / ndup) and the bounds without overflow, for n up to INT64_MAX */
  int64_t chunk = ndup > 0 ? n / ndup + (n % ndup != 0) : n;
  int64_t o = c <= 0 ? 0 : chunk > 0 && c > n / chunk ? n : chunk * c;
  if (o > n) o = n;
  int64_t e = chunk > n - o ? n : o + chunk;
  *off = o;
  *len = e - o;
}

void ovl_lanes_part_blocks(int64_t nblk, int64_t blk, int ndup, int c, int64_t *off, int64_t *len) {
  ovl_lanes_part(nblk, ndup, c, off, len);
  *off *= blk;
  *len *= blk;
}

ovl_err ovl_lanes_create(MPI_Comm comm, int ndup, ovl_lanes *out) {
  ovl_err rc = OVL_OK;
  OVL_TRY(ovl_check_ptr(out, "ovl_lanes_create", "out"));
  *out = NULL;
  const int64_t key[] = {ndup};
  static const char *const names[] = {"N_DUP"};
  rc = ovl_knob_check(OVL_KNOB_NDUP, ndup, NULL);
  ovl_lanes L = NULL;
  if (rc == OVL_OK) {
    L = calloc(1, sizeof *L);
    if (!L) rc = ovl_err_set(OVL_ERR_NOMEM, "cannot allocate a lane set");
  }
  if (comm != MPI_COMM_NULL) rc = ovl_err_agree_same(comm, rc, key, names, 1);
  if (rc != OVL_OK) {
    free(L);
    return rc;
  }
  L->ndup = ndup;
  for (int c = 0; c < OVL_LANES_MAX; c++) L->comm[c] = MPI_COMM_NULL;
  if (comm == MPI_COMM_NULL) {
    L->ndup = 0;
    L->rank = -1;
    *out = L;
    return OVL_OK;
  }
  OVL_MPI(MPI_Comm_size(comm, &L->size));
  OVL_MPI(MPI_Comm_rank(comm, &L->rank));
  for (int c = 0; c < ndup; c++) OVL_MPI(MPI_Comm_dup(comm, &L->comm[c]));
  *out = L;
  return OVL_OK;
}

ovl_err ovl_lanes_destroy(ovl_lanes *Lp) {
  if (!Lp || !*Lp) return OVL_OK;
  for (int c = 0; c < (*Lp)->ndup; c++)
    if ((*Lp)->comm[c] != MPI_COMM_NULL) MPI_Comm_free(&(*Lp)->comm[c]);
  free(*Lp);
  *Lp = NULL;
  return OVL_OK;
}

int ovl_lanes_count(ovl_lanes L) { return L ? L->ndup : 0; }
MPI_Comm ovl_lanes_comm(ovl_lanes L, int lane) {
  return L && lane >= 0 && lane < L->ndup ? L->comm[lane] : MPI_COMM_NULL;
}
int ovl_lanes_size(ovl_lanes L) { return L ? L->size : 0; }
int ovl_lanes_rank(ovl_lanes L) { return L ? L->rank : -1; }

/* Post one operation per non-empty part (parts of whole blocks of blk
 * elements, n blocks); on failure, wait for what was
 * posted (the other ranks posted it too) and return the error. The tracer
 * records each post and its completion, at once for a part that completed
 * while it was posted (an own schedule whose messages had all arrived). */
#define FOR_PARTS(L, n, blk, NAME, body)                                                                               \
  do {                                                                                                                 \
    OVL_TRY(ovl_check_handle((L), __func__, "the lane set"));                                                          \
    OVL_TRY(ovl_check_ptr(reqs, __func__, "reqs"));                                                                    \
    for (int c = 0; c < (L)->ndup; c++) reqs[c] = OVL_REQ_NULL;                                                        \
    for (int c = 0; c < (L)->ndup; c++) {                                                                              \
      int64_t off, len;                                                                                                \
      ovl_lanes_part_blocks((n), (blk), (L)->ndup, c, &off, &len);                                                     \
      if (len == 0) continue;                                                                                          \
      MPI_Comm lc = (L)->comm[c];                                                                                      \
      ovl_err rc_ = (body);                                                                                            \
      if (rc_ != OVL_OK) {                                                                                             \
        ovl_req_waitall(c, reqs);                                                                                      \
        return rc_;                                                                                                    \
      }                                                                                                                \
      OVL_TRACE_POST((NAME), c, 8 * len);                                                                              \
      if (reqs[c] == OVL_REQ_NULL) OVL_TRACE_COMPLETE((NAME), c); /* done while posted */                              \
      else req_trace(reqs[c], (NAME), c);                                                                              \
    }                                                                                                                  \
    return OVL_OK;                                                                                                     \
  } while (0)

ovl_err ovl_lanes_ibcast(ovl_lanes L, double *buf, int64_t n, int root, const ovl_coll_cfg *cfg, ovl_req *reqs) {
  FOR_PARTS(L, n, 1, "bcast", ovl_ibcast(buf + off, len, root, lc, cfg, &reqs[c]));
}

ovl_err ovl_lanes_ibcast_blocks(ovl_lanes L, double *buf, int64_t nblk, int64_t blk, int root, const ovl_coll_cfg *cfg,
                                ovl_req *reqs) {
  FOR_PARTS(L, nblk, blk, "bcast", ovl_ibcast(buf + off, len, root, lc, cfg, &reqs[c]));
}

ovl_err ovl_lanes_ireduce(ovl_lanes L, const double *sbuf, double *rbuf, int64_t n, int root, const ovl_coll_cfg *cfg,
                          ovl_req *reqs) {
  FOR_PARTS(L, n, 1, "reduce", ovl_ireduce(sbuf + off, rbuf ? rbuf + off : NULL, len, root, lc, cfg, &reqs[c]));
}

ovl_err ovl_lanes_iallreduce(ovl_lanes L, const double *sbuf, double *rbuf, int64_t n, const ovl_coll_cfg *cfg,
                             ovl_req *reqs) {
  FOR_PARTS(L, n, 1, "allreduce", ovl_iallreduce(sbuf + off, rbuf + off, len, lc, cfg, &reqs[c]));
}

ovl_err ovl_lanes_iallgather(ovl_lanes L, const double *sbuf, int64_t n, double *rbuf, const ovl_coll_cfg *cfg,
                             ovl_req *reqs) {
  const double *mine = sbuf == rbuf + (int64_t)L->rank * n ? NULL : sbuf;
  FOR_PARTS(L, n, 1, "allgather",
            ovl_i_coll_iallgather_strided(mine ? mine + off : rbuf + (int64_t)L->rank * n + off, rbuf + off, len, n, lc,
                                          cfg, &reqs[c]));
}

ovl_err ovl_lanes_isend(ovl_lanes L, const double *buf, int64_t n, int dest, ovl_req *reqs) {
  FOR_PARTS(L, n, 1, "send", ovl_isend(buf + off, len, dest, 0, lc, &reqs[c]));
}

ovl_err ovl_lanes_irecv(ovl_lanes L, double *buf, int64_t n, int src, ovl_req *reqs) {
  FOR_PARTS(L, n, 1, "recv", ovl_irecv(buf + off, len, src, 0, lc, &reqs[c]));
}

#define BLOCKING(L, icall)                                                                                             \
  do {                                                                                                                 \
    ovl_req reqs[OVL_LANES_MAX];                                                                                       \
    OVL_TRY(ovl_check_handle((L), __func__, "the lane set"));                                                          \
    OVL_TRY(icall);                                                                                                    \
    return ovl_req_waitall((L)->ndup, reqs);                                                                           \
  } while (0)

ovl_err ovl_lanes_bcast(ovl_lanes L, double *buf, int64_t n, int root, const ovl_coll_cfg *cfg) {
  BLOCKING(L, ovl_lanes_ibcast(L, buf, n, root, cfg, reqs));
}
ovl_err ovl_lanes_reduce(ovl_lanes L, const double *sbuf, double *rbuf, int64_t n, int root, const ovl_coll_cfg *cfg) {
  BLOCKING(L, ovl_lanes_ireduce(L, sbuf, rbuf, n, root, cfg, reqs));
}
ovl_err ovl_lanes_allreduce(ovl_lanes L, const double *sbuf, double *rbuf, int64_t n, const ovl_coll_cfg *cfg) {
  BLOCKING(L, ovl_lanes_iallreduce(L, sbuf, rbuf, n, cfg, reqs));
}
ovl_err ovl_lanes_allgather(ovl_lanes L, const double *sbuf, int64_t n, double *rbuf, const ovl_coll_cfg *cfg) {
  BLOCKING(L, ovl_lanes_iallgather(L, sbuf, n, rbuf, cfg, reqs));
}
