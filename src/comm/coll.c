/* Nonblocking collectives: argument checks, algorithm choice, and the two
 * back ends (the MPI library's, or ovl's own schedules). */
#include <limits.h>
#include <string.h>

#include "comm/comm_impl.h"

/* ---- common checks ------------------------------------------------------------ */

static ovl_err check_common(MPI_Comm comm, int64_t n, int root, int has_root, int *p, int *rank) {
  OVL_CHECK(comm != MPI_COMM_NULL, OVL_ERR_ARG, "collective called on MPI_COMM_NULL");
  OVL_CHECK(n >= 0, OVL_ERR_ARG, "element count must be >= 0, got %lld", (long long)n);
  OVL_MPI(MPI_Comm_size(comm, p));
  OVL_MPI(MPI_Comm_rank(comm, rank));
  OVL_CHECK(!has_root || (root >= 0 && root < *p), OVL_ERR_ARG, "root %d outside [0, %d)", root, *p);
  return OVL_OK;
}

/* Tags every MPI library accepts (MPI_TAG_UB is at least 32767). */
static ovl_err check_tag(int tag) {
  OVL_CHECK(tag >= 0 && tag <= 32767, OVL_ERR_ARG, "tag %d outside [0, 32767]", tag);
  return OVL_OK;
}

static const ovl_coll_cfg *cfg_or_default(const ovl_coll_cfg *cfg) {
  static ovl_coll_cfg def;
  if (cfg) return cfg;
  def = ovl_coll_cfg_default();
  return &def;
}

static ovl_err check_cfg(const ovl_coll_cfg *cfg) {
  OVL_CHECK(cfg->backend == OVL_BACKEND_MPI || cfg->backend == OVL_BACKEND_OWN, OVL_ERR_ARG,
            "unknown collective back end %d", (int)cfg->backend);
  return OVL_OK;
}

/* The MPI back end passes counts as int. */
static ovl_err check_int(int64_t n) {
  OVL_CHECK(n <= INT_MAX, OVL_ERR_SIZE,
            "%lld elements exceed what one MPI call can move; use lanes or the own back end", (long long)n);
  return OVL_OK;
}

/* Start an own schedule built by the caller in r->s. */
static ovl_err start_sched(ovl_req *req, ovl_req r) {
  ovl_err rc = ovl_i_sched_commit(&r->s);
  int done = 0;
  if (rc == OVL_OK) rc = ovl_i_sched_progress(&r->s, &done);
  if (rc != OVL_OK) {
    ovl_i_req_free(&r);
    *req = NULL;
    return rc;
  }
  if (done) {
    ovl_i_req_free(&r);
    *req = NULL;
  } else {
    *req = r;
  }
  return OVL_OK;
}

#define BUILD_OWN(comm, kind, call)                                                                                    \
  do {                                                                                                                 \
    ovl_req r_ = NULL;                                                                                                 \
    OVL_TRY(ovl_i_req_new_sched(&r_));                                                                                 \
    ovl_i_sched_init(&r_->s, (comm));                                                                                  \
    r_->s.vkind = (kind);                                                                                              \
    ovl_err rc_ = (call);                                                                                              \
    if (rc_ != OVL_OK) {                                                                                               \
      ovl_i_req_free(&r_);                                                                                             \
      return rc_;                                                                                                      \
    }                                                                                                                  \
    return start_sched(req, r_);                                                                                       \
  } while (0)

#define START_MPI(call, what)                                                                                          \
  do {                                                                                                                 \
    ovl_req r_ = NULL;                                                                                                 \
    OVL_TRY(ovl_i_req_new_mpi(&r_));                                                                                   \
    MPI_Request *mreq = &r_->mreq;                                                                                     \
    int mrc_ = (call);                                                                                                 \
    if (mrc_ != MPI_SUCCESS) {                                                                                         \
      ovl_i_req_free(&r_);                                                                                             \
      return ovl_err_mpi(mrc_, what);                                                                                  \
    }                                                                                                                  \
    *req = r_;                                                                                                         \
    return OVL_OK;                                                                                                     \
  } while (0)

/* ---- bcast / reduce / allreduce / allgather / alltoall -------------------------- */

static int pow2(int p) { return (p & (p - 1)) == 0; }

ovl_err ovl_ibcast(double *buf, int64_t n, int root, MPI_Comm comm, const ovl_coll_cfg *cfg, ovl_req *req) {
  int p, rank;
  OVL_TRY(ovl_check_ptr(req, __func__, "req"));
  *req = NULL;
  cfg = cfg_or_default(cfg);
  OVL_TRY(check_cfg(cfg));
  OVL_TRY(check_common(comm, n, root, 1, &p, &rank));
  if (cfg->backend == OVL_BACKEND_MPI) {
    OVL_TRY(check_int(n));
    START_MPI(MPI_Ibcast(buf, (int)n, MPI_DOUBLE, root, comm, mreq), "MPI_Ibcast");
  }
  ovl_alg a = cfg->bcast;
  if (a == OVL_ALG_AUTO) a = (p <= 2 || n * 8 < 65536) ? OVL_BCAST_BINOMIAL : OVL_BCAST_SCATTER_ALLGATHER;
  BUILD_OWN(comm, OVL_VOL_BCAST, ovl_i_own_bcast(&r_->s, a, buf, n, root, p, rank, cfg));
}

ovl_err ovl_ireduce(const double *sbuf, double *rbuf, int64_t n, int root, MPI_Comm comm, const ovl_coll_cfg *cfg,
                    ovl_req *req) {
  int p, rank;
  OVL_TRY(ovl_check_ptr(req, __func__, "req"));
  *req = NULL;
  cfg = cfg_or_default(cfg);
  OVL_TRY(check_cfg(cfg));
  OVL_TRY(check_common(comm, n, root, 1, &p, &rank));
  if (cfg->backend == OVL_BACKEND_MPI) {
    OVL_TRY(check_int(n));
    const void *s = rank == root && sbuf == rbuf ? MPI_IN_PLACE : (const void *)sbuf;
    START_MPI(MPI_Ireduce(s, rbuf, (int)n, MPI_DOUBLE, MPI_SUM, root, comm, mreq), "MPI_Ireduce");
  }
  ovl_alg a = cfg->reduce;
  if (a == OVL_ALG_AUTO) a = (p <= 2 || n * 8 < 65536) ? OVL_REDUCE_BINOMIAL : OVL_REDUCE_RABENSEIFNER;
  BUILD_OWN(comm, OVL_VOL_REDUCE, ovl_i_own_reduce(&r_->s, a, sbuf, rbuf, n, root, p, rank));
}

ovl_err ovl_iallreduce(const double *sbuf, double *rbuf, int64_t n, MPI_Comm comm, const ovl_coll_cfg *cfg,
                       ovl_req *req) {
  int p, rank;
  OVL_TRY(ovl_check_ptr(req, __func__, "req"));
  *req = NULL;
  cfg = cfg_or_default(cfg);
  OVL_TRY(check_cfg(cfg));
  OVL_TRY(check_common(comm, n, 0, 0, &p, &rank));
  if (cfg->backend == OVL_BACKEND_MPI) {
    OVL_TRY(check_int(n));
    const void *s = sbuf == rbuf ? MPI_IN_PLACE : (const void *)sbuf;
    START_MPI(MPI_Iallreduce(s, rbuf, (int)n, MPI_DOUBLE, MPI_SUM, comm, mreq), "MPI_Iallreduce");
  }
  ovl_alg a = cfg->allreduce == OVL_ALG_AUTO ? OVL_ALLREDUCE_RABENSEIFNER : cfg->allreduce;
  BUILD_OWN(comm, OVL_VOL_REDUCE, ovl_i_own_allreduce(&r_->s, a, sbuf, rbuf, n, p, rank));
}

ovl_err ovl_iallgather(const double *sbuf, int64_t n, double *rbuf, MPI_Comm comm, const ovl_coll_cfg *cfg,
                       ovl_req *req) {
  int p, rank;
  OVL_TRY(ovl_check_ptr(req, __func__, "req"));
  *req = NULL;
  cfg = cfg_or_default(cfg);
  OVL_TRY(check_cfg(cfg));
  OVL_TRY(check_common(comm, n, 0, 0, &p, &rank));
  int64_t np = 0;
  if (cfg->backend == OVL_BACKEND_MPI) {
    OVL_TRY(check_int(ovl_mul_i64(n, p, &np) ? np : INT64_MAX));
    const void *s = sbuf == rbuf + rank * n ? MPI_IN_PLACE : (const void *)sbuf;
    START_MPI(MPI_Iallgather(s, (int)n, MPI_DOUBLE, rbuf, (int)n, MPI_DOUBLE, comm, mreq), "MPI_Iallgather");
  }
  ovl_alg a = cfg->allgather;
  if (a == OVL_ALG_AUTO) a = pow2(p) && 8.0 * (double)n * p < 524288 ? OVL_ALLGATHER_RECDBL : OVL_ALLGATHER_RING;
  BUILD_OWN(comm, OVL_VOL_OTHER, ovl_i_own_allgather(&r_->s, a, sbuf, rbuf, n, n, p, rank));
}

ovl_err ovl_ialltoall(const double *sbuf, int64_t n, double *rbuf, MPI_Comm comm, const ovl_coll_cfg *cfg,
                      ovl_req *req) {
  int p, rank;
  OVL_TRY(ovl_check_ptr(req, __func__, "req"));
  *req = NULL;
  cfg = cfg_or_default(cfg);
  OVL_TRY(check_cfg(cfg));
  OVL_TRY(check_common(comm, n, 0, 0, &p, &rank));
  OVL_CHECK(sbuf != rbuf || n == 0, OVL_ERR_ARG, "alltoall cannot run in place");
  int64_t np = 0;
  if (cfg->backend == OVL_BACKEND_MPI) {
    OVL_TRY(check_int(ovl_mul_i64(n, p, &np) ? np : INT64_MAX));
    START_MPI(MPI_Ialltoall(sbuf, (int)n, MPI_DOUBLE, rbuf, (int)n, MPI_DOUBLE, comm, mreq), "MPI_Ialltoall");
  }
  ovl_alg a = cfg->alltoall;
  if (a == OVL_ALG_AUTO) a = pow2(p) ? OVL_ALLTOALL_PAIRWISE : OVL_ALLTOALL_RING;
  BUILD_OWN(comm, OVL_VOL_OTHER, ovl_i_own_alltoall(&r_->s, a, sbuf, rbuf, n, p, rank));
}

ovl_err ovl_isend(const double *buf, int64_t n, int dest, int tag, MPI_Comm comm, ovl_req *req) {
  int p, rank;
  OVL_TRY(ovl_check_ptr(req, __func__, "req"));
  *req = NULL;
  OVL_TRY(check_common(comm, n, dest, 1, &p, &rank));
  OVL_TRY(check_tag(tag));
  OVL_TRY(check_int(n));
  ovl_i_volume_add(OVL_VOL_P2P, comm, dest, n);
  START_MPI(MPI_Isend(buf, (int)n, MPI_DOUBLE, dest, tag, comm, mreq), "MPI_Isend");
}

ovl_err ovl_irecv(double *buf, int64_t n, int src, int tag, MPI_Comm comm, ovl_req *req) {
  int p, rank;
  OVL_TRY(ovl_check_ptr(req, __func__, "req"));
  *req = NULL;
  OVL_TRY(check_common(comm, n, src, 1, &p, &rank));
  OVL_TRY(check_tag(tag));
  OVL_TRY(check_int(n));
  START_MPI(MPI_Irecv(buf, (int)n, MPI_DOUBLE, src, tag, comm, mreq), "MPI_Irecv");
}

/* Allgather of strided blocks (lanes): block r has len elements at
 * base + r*stride. Internal to the comm layer. */
ovl_err ovl_i_coll_iallgather_strided(const double *sbuf, double *base, int64_t len, int64_t stride, MPI_Comm comm,
                                      const ovl_coll_cfg *cfg, ovl_req *req) {
  int p, rank;
  OVL_TRY(ovl_check_ptr(req, __func__, "req"));
  *req = NULL;
  cfg = cfg_or_default(cfg);
  OVL_TRY(check_cfg(cfg));
  OVL_TRY(check_common(comm, len, 0, 0, &p, &rank));
  if (cfg->backend == OVL_BACKEND_MPI) {
    OVL_TRY(check_int(len));
    MPI_Datatype blk = MPI_DATATYPE_NULL, rsz = MPI_DATATYPE_NULL;
    OVL_MPI(MPI_Type_contiguous((int)len, MPI_DOUBLE, &blk));
    OVL_MPI(MPI_Type_create_resized(blk, 0, (MPI_Aint)(stride * (int64_t)sizeof(double)), &rsz));
    OVL_MPI(MPI_Type_commit(&rsz));
    MPI_Type_free(&blk);
    const void *s = sbuf == base + rank * stride ? MPI_IN_PLACE : (const void *)sbuf;
    ovl_req r = NULL;
    ovl_err rc = ovl_i_req_new_mpi(&r);
    int mrc = rc == OVL_OK ? MPI_Iallgather(s, (int)len, MPI_DOUBLE, base, 1, rsz, comm, &r->mreq) : MPI_SUCCESS;
    MPI_Type_free(&rsz); /* safe: a pending operation keeps its own reference */
    OVL_TRY(rc);
    if (mrc != MPI_SUCCESS) {
      ovl_i_req_free(&r);
      return ovl_err_mpi(mrc, "MPI_Iallgather");
    }
    *req = r;
    return OVL_OK;
  }
  ovl_alg a = cfg->allgather == OVL_ALG_AUTO ? OVL_ALLGATHER_RING : cfg->allgather;
  BUILD_OWN(comm, OVL_VOL_OTHER, ovl_i_own_allgather(&r_->s, a, sbuf, base, len, stride, p, rank));
}
