/* Internal pieces of the communication layer: requests and own schedules. */
#ifndef OVL_COMM_IMPL_H
#define OVL_COMM_IMPL_H

#include "ovl/comm.h"

/* ---- schedules: rounds of sends/receives followed by local operations ---- */

enum { SOP_SEND, SOP_RECV, SOP_SUM, SOP_COPY, SOP_END };

typedef struct sop {
  int kind;
  int peer;
  int count;       /* elements (<= OVL_MSG_MAX_ELEMS) */
  double *a;       /* RECV buffer; SUM/COPY destination */
  const double *b; /* SEND buffer; SUM/COPY source */
} sop;

typedef struct sched {
  MPI_Comm comm;
  int tag;
  sop *ops;
  int nops, cap;
  int cur;    /* first op of the current round */
  int posted; /* the current round's messages are posted */
  MPI_Request *mreq;
  int nm, mcap;
  double *tmp; /* scratch owned by the schedule */
  int vkind;   /* ovl_vol_kind of its sends (message volume counters) */
} sched;

/* Count a send of count doubles to peer of comm (volume.c). LOCAL. */
void ovl_i_volume_add(int kind, MPI_Comm comm, int peer, int64_t count);

/* Largest single message; longer ones are split by the builders. */
#define OVL_MSG_MAX_ELEMS (1 << 28)

/* Builders (LOCAL). Errors only on allocation. */
ovl_err ovl_i_sched_init(sched *s, MPI_Comm comm);
ovl_err ovl_i_sched_send(sched *s, int peer, const double *buf, int64_t n);
ovl_err ovl_i_sched_recv(sched *s, int peer, double *buf, int64_t n);
ovl_err ovl_i_sched_sum(sched *s, double *dst, const double *src, int64_t n);
ovl_err ovl_i_sched_copy(sched *s, double *dst, const double *src, int64_t n);
ovl_err ovl_i_sched_round(sched *s);
ovl_err ovl_i_sched_tmp(sched *s, int64_t n, double **out);
/* Finish building: takes a tag for comm and sizes the request array. */
ovl_err ovl_i_sched_commit(sched *s);
/* Progress: *done = 1 when every round has completed. */
ovl_err ovl_i_sched_progress(sched *s, int *done);
void ovl_i_sched_free(sched *s);

/* Own algorithms: append the full schedule of one collective. */
ovl_err ovl_i_own_bcast(sched *s, ovl_alg alg, double *buf, int64_t n, int root, int p, int rank,
                        const ovl_coll_cfg *cfg);
ovl_err ovl_i_own_reduce(sched *s, ovl_alg alg, const double *sbuf, double *rbuf, int64_t n, int root, int p, int rank);
ovl_err ovl_i_own_allreduce(sched *s, ovl_alg alg, const double *sbuf, double *rbuf, int64_t n, int p, int rank);
/* Allgather of blocks: block r has `len` elements at base + r*stride (the
 * caller's contribution is block `rank`, already in place unless sbuf is
 * given, then copied first). */
ovl_err ovl_i_own_allgather(sched *s, ovl_alg alg, const double *sbuf, double *base, int64_t len, int64_t stride, int p,
                            int rank);
ovl_err ovl_i_own_alltoall(sched *s, ovl_alg alg, const double *sbuf, double *rbuf, int64_t n, int p, int rank);

/* Allgather of strided blocks: block r has len elements at base + r*stride;
 * sbuf is this rank's contribution (== base + rank*stride for in place). */
ovl_err ovl_i_coll_iallgather_strided(const double *sbuf, double *base, int64_t len, int64_t stride, MPI_Comm comm,
                                      const ovl_coll_cfg *cfg, ovl_req *req);

/* ---- requests ---- */

typedef enum { REQ_MPI, REQ_SCHED } req_kind;

struct ovl_req_s {
  req_kind kind;
  MPI_Request mreq;
  sched s;
  const char *tname;  /* traced operation name (static string), or NULL */
  int tpart;          /* its lane / part */
  ovl_req prev, next; /* live own schedules of this process (progressed by every wait) */
};

/* Tag a request for the tracer: its completion is recorded under name/part. */
static inline void req_trace(ovl_req r, const char *name, int part) {
  if (r) r->tname = name, r->tpart = part;
}

ovl_err ovl_i_req_new_mpi(ovl_req *out);
ovl_err ovl_i_req_new_sched(ovl_req *out);
void ovl_i_req_free(ovl_req *r);

#endif
