/* ovl_pdgemm: ScaLAPACK's PDGEMM interface on top of the block-cyclic <->
 * block exchanges (src/dmat/bcyclic.c) and SUMMA (see ovl/pdgemm.h).
 *
 * Process-wide state (documented in ovl/pdgemm.h): the deprecated caller
 * defaults of ovl_pdgemm_config (constraints, not a plan), the record of the
 * last call, and one workspace for the operands and the exchange buffers.
 * The context of a BLACS context (its ovl grid, the constraints read from
 * $OVL_OPTIONS and the plans resolved for it) is an attribute of the
 * context's communicator. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dmat/bcyclic.h"
#include "kernels/bcsumma.h"
#include "ovl/entry.h"
#include "ovl/node.h"
#include "ovl/pdgemm.h"
#include "ovl/plan.h"

/* ovl_pdgemm_config's values: constraints under $OVL_OPTIONS (set: given) */
static struct {
  int ndup;
  ovl_backend backend;
  int64_t panel;
  int set;
  unsigned gen; /* bumped by each ovl_pdgemm_config: the plans resolved before are stale */
} g_cfg = {1, OVL_BACKEND_MPI, 0, 0, 0};

static ovl_pdgemm_info g_info;
static ovl_bcyclic_ws g_ops;  /* the A, B and C blocks */
static ovl_bcyclic_ws g_xchg; /* MPI_Alltoallv send + receive buffers */

ovl_err ovl_pdgemm_config(int ndup, ovl_backend backend, int64_t panel) {
  OVL_CHECK(ndup >= 1 && ndup <= OVL_LANES_MAX, OVL_ERR_ARG, "ovl_pdgemm_config: ndup must be in [1, %d], got %d",
            OVL_LANES_MAX, ndup);
  OVL_CHECK(backend == OVL_BACKEND_MPI || backend == OVL_BACKEND_OWN, OVL_ERR_ARG,
            "ovl_pdgemm_config: unknown collective back end %d (OVL_BACKEND_MPI or OVL_BACKEND_OWN)", (int)backend);
  OVL_CHECK(panel >= 0, OVL_ERR_ARG, "ovl_pdgemm_config: panel width must be >= 0 (0: automatic), got %" PRId64, panel);
  g_cfg.ndup = ndup;
  g_cfg.backend = backend;
  g_cfg.panel = panel;
  g_cfg.set = 1, g_cfg.gen++;
  return OVL_OK;
}

ovl_err ovl_pdgemm_get_config(int *ndup, ovl_backend *backend, int64_t *panel) {
  if (ndup) *ndup = g_cfg.ndup;
  if (backend) *backend = g_cfg.backend;
  if (panel) *panel = g_cfg.panel;
  return OVL_OK;
}

ovl_err ovl_pdgemm_last_info(ovl_pdgemm_info *out) {
  OVL_CHECK(out != NULL, OVL_ERR_ARG, "ovl_pdgemm_last_info: out is NULL");
  *out = g_info;
  return OVL_OK;
}

ovl_err ovl_pdgemm_release(void) {
  ovl_bcyclic_ws_free(&g_ops);
  ovl_bcyclic_ws_free(&g_xchg);
  return OVL_OK;
}

#ifndef OVL_HAVE_SCALAPACK

ovl_err ovl_pdgemm(const char *transa, const char *transb, const int *m, const int *n, const int *k,
                   const double *alpha, const double *a, const int *ia, const int *ja, const int *desca,
                   const double *b, const int *ib, const int *jb, const int *descb, const double *beta, double *c,
                   const int *ic, const int *jc, const int *descc) {
  memset(&g_info, 0, sizeof g_info);
  return ovl_err_set(OVL_ERR_UNSUPPORTED,
                     "ovl_pdgemm: this ovl was built without ScaLAPACK/BLACS, which it needs to find the process "
                     "grid of a BLACS context (install libscalapack-openmpi-dev or libscalapack-mpich-dev, to match "
                     "the MPI library, and configure again)");
}

ovl_err ovl_pdgemm_pays(const char *transa, const char *transb, const int *m, const int *n, const int *k,
                        const double *beta, const int *desca, const int *descb, const int *descc, int *verdict) {
  (void)transa, (void)transb, (void)m, (void)n, (void)k, (void)beta, (void)desca, (void)descb, (void)descc;
  if (verdict) *verdict = OVL_PDGEMM_RUN;
  return ovl_err_set(OVL_ERR_UNSUPPORTED, "ovl_pdgemm_pays: this ovl was built without ScaLAPACK/BLACS");
}

ovl_err ovl_pdgemm_route(const char *transa, const char *transb, const int *m, const int *n, const int *k,
                         const double *beta, const int *ia, const int *ja, const int *desca, const int *ib,
                         const int *jb, const int *descb, const int *ic, const int *jc, const int *descc, int *verdict,
                         int *route) {
  (void)ia, (void)ja, (void)ib, (void)jb, (void)ic, (void)jc;
  if (route) *route = 3;
  return ovl_pdgemm_pays(transa, transb, m, n, k, beta, desca, descb, descc, verdict);
}

#else

/* The BLACS C interface (shipped inside ScaLAPACK's library; no header). */
void Cblacs_gridinfo(int ctxt, int *nprow, int *npcol, int *myrow, int *mycol);
void Cblacs_get(int ctxt, int what, int *val);
MPI_Comm Cblacs2sys_handle(int sysctxt);

/* Cblacs_get WHAT: a system handle for the context's own communicator. */
enum { BLACS_GET_CONTEXT_COMM = 10 };

static int g_keyval = MPI_KEYVAL_INVALID;

enum { PD_PLANS = 8 };

/* What ovl_pdgemm keeps for one BLACS context: its grid, the plan
 * constraints of $OVL_OPTIONS (read once, when the context is first used),
 * and the plans resolved for the last shapes (a plan per distinct m, n, k,
 * panel default and ovl_pdgemm_config generation). */
typedef struct pd_ctx {
  ovl_grid2d g;
  ovl_plan want;    /* $OVL_OPTIONS' constraints */
  int print_plan;   /* --print-plan in $OVL_OPTIONS */
  ovl_machine mach; /* the cost model's machine (ovl_pdgemm_pays) */
  int ppn;          /* ranks of the context on this node (rank 0's count) */
  double gamma;     /* seconds per flop of one rank (rank 0's measure, or the machine file's) */
  struct {
    int64_t m, n, k, bw;
    int route;
    unsigned gen;
    ovl_plan plan;
  } plans[PD_PLANS];
  int nplans, next;
} pd_ctx;

/* Runs when BLACS frees the context's communicator (grid exit). */
static int grid_attr_delete(MPI_Comm comm, int keyval, void *attr, void *extra) {
  (void)comm, (void)keyval, (void)extra;
  pd_ctx *x = attr;
  ovl_grid2d_destroy(&x->g);
  free(x);
  return MPI_SUCCESS;
}

/* The ovl context of a BLACS context: made on first use and cached on the
 * context's communicator. COLLECTIVE over the context's processes. */
static ovl_err context_of(int ctxt, int nprow, int npcol, int myrow, int mycol, pd_ctx **out) {
  int h = -1, flag = 0, size = 0, rank = -1;
  pd_ctx *x = NULL;
  *out = NULL;
  Cblacs_get(ctxt, BLACS_GET_CONTEXT_COMM, &h);
  MPI_Comm comm = Cblacs2sys_handle(h);
  if (g_keyval == MPI_KEYVAL_INVALID)
    OVL_MPI(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, grid_attr_delete, &g_keyval, NULL));
  OVL_MPI(MPI_Comm_get_attr(comm, g_keyval, &x, &flag));
  if (flag) {
    *out = x;
    return OVL_OK;
  }
  OVL_MPI(MPI_Comm_size(comm, &size));
  OVL_MPI(MPI_Comm_rank(comm, &rank));
  ovl_err rc = OVL_OK;
  if (size != nprow * npcol || rank != myrow * npcol + mycol)
    rc = ovl_err_set(OVL_ERR_UNSUPPORTED,
                     "ovl_pdgemm: BLACS context %d is a %d x %d grid, but its communicator has %d ranks and "
                     "process (%d, %d) is rank %d there, not %d (ovl needs the row-major order of the reference "
                     "BLACS)",
                     ctxt, nprow, npcol, size, myrow, mycol, rank, myrow * npcol + mycol);
  OVL_TRY(ovl_err_agree(comm, rc));
  /* the constraints of $OVL_OPTIONS (rank 0's, the same parser as every entry's) */
  ovl_plan want = ovl_plan_auto(OVL_FAMILY_GEMM, 1);
  want.algo = OVL_ALGO_SUMMA; /* what runs on the BLACS grid */
  int print_plan = 0;
  rc = ovl_options_runtime_print(comm, NULL, OVL_FAMILY_GEMM, &want, NULL, &print_plan);
  if (rc == OVL_OK && want.algo != OVL_ALGO_SUMMA)
    rc = ovl_err_set(OVL_ERR_UNSUPPORTED,
                     "ovl_pdgemm: OVL_OPTIONS: --algo %s does not run on the BLACS grid: ovl_pdgemm runs summa on the "
                     "context's %d x %d grid",
                     ovl_algo_name(want.algo), nprow, npcol);
  if (rc == OVL_OK && (want.p > 0 || want.s > 0))
    rc = ovl_err_set(OVL_ERR_UNSUPPORTED, "ovl_pdgemm: OVL_OPTIONS: --grid: the grid is the BLACS context's");
  if (rc != OVL_OK) { /* refused (the drop-in hands the call to ScaLAPACK): said once, by world rank 0 */
    static int told;
    if (!told++) ovl_warn("ovl_pdgemm: refused: %s\n", ovl_errmsg());
    return rc;
  }
  if (rc == OVL_OK && !(x = calloc(1, sizeof *x))) rc = ovl_err_set(OVL_ERR_NOMEM, "ovl_pdgemm: no memory");
  OVL_TRY(ovl_err_agree(comm, rc));
  x->want = want, x->print_plan = print_plan;
  rc = ovl_plan_machine(NULL, &x->mach, NULL, 0); /* $OVL_MACHINE, else the built-in machine */
  MPI_Comm node = MPI_COMM_NULL;
  int mrc = MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  if (mrc == MPI_SUCCESS) {
    MPI_Comm_size(node, &x->ppn);
    MPI_Comm_free(&node);
    mrc = MPI_Bcast(&x->ppn, 1, MPI_INT, 0, comm);
  }
  if (rc == OVL_OK && mrc != MPI_SUCCESS) rc = ovl_err_mpi(mrc, "MPI_Comm_split_type");
  x->gamma = ovl_model_gamma(&x->mach, x->ppn);
  if (!getenv("OVL_MACHINE") || !getenv("OVL_MACHINE")[0]) { /* the built-in is another machine: measure this one */
    double gf = rank == 0 ? ovl_local_dgemm_gflops(256, 2) : 0.0;
    MPI_Bcast(&gf, 1, MPI_DOUBLE, 0, comm);
    if (gf > 0) x->gamma = 1e-9 / gf;
  }
  rc = ovl_err_agree(comm, rc);
  if (rc == OVL_OK) rc = ovl_grid2d_create(comm, nprow, npcol, 0, &x->g);
  if (rc != OVL_OK) {
    free(x);
    return rc;
  }
  mrc = MPI_Comm_set_attr(comm, g_keyval, x);
  if (mrc != MPI_SUCCESS) {
    ovl_grid2d_destroy(&x->g);
    free(x);
    return ovl_err_mpi(mrc, "MPI_Comm_set_attr");
  }
  *out = x;
  return OVL_OK;
}

/* The plan of a call (M x N x K, the adapter's default panel width bw):
 * $OVL_OPTIONS' constraints, under them ovl_pdgemm_config's, the grid fixed
 * to the context's, the rest the planner's; resolved once per distinct
 * shape and kept in the context. COLLECTIVE over the context's processes. */
static ovl_err plan_of(pd_ctx *x, int64_t M, int64_t N, int64_t K, int64_t bw, int route, ovl_plan *out) {
  for (int i = 0; i < x->nplans; i++)
    if (x->plans[i].m == M && x->plans[i].n == N && x->plans[i].k == K && x->plans[i].bw == bw &&
        x->plans[i].route == route && x->plans[i].gen == g_cfg.gen) {
      *out = x->plans[i].plan;
      return OVL_OK;
    }
  ovl_plan p = x->want;
  int64_t big = M > N ? M : N;
  p.n = big > K ? big : K;
  ovl_grid2d_dims(x->g, &p.p, &p.q);
  p.P = p.p * p.q;
  if (g_cfg.set) {
    if (p.ndup <= 0) p.ndup = g_cfg.ndup;
    if (p.coll.backend == OVL_BACKEND_MPI) p.coll.backend = g_cfg.backend;
    if (p.b <= 0 && g_cfg.panel > 0) p.b = g_cfg.panel;
  }
  if (p.b <= 0) p.b = bw;
  if (p.b > K) p.b = K;
  char why[OVL_PLAN_WHY] = "";
  MPI_Comm parent = ovl_grid2d_parent(x->g);
  OVL_TRY(ovl_plan_resolve(parent, OVL_FAMILY_GEMM, &p, NULL, why, sizeof why));
  int rank = 0;
  MPI_Comm_rank(parent, &rank);
  if (x->print_plan && rank == 0) {
    char d[256];
    ovl_plan_describe(&p, d, sizeof d);
    fprintf(stderr, "ovl_pdgemm: plan: %s (m=%" PRId64 " n=%" PRId64 " k=%" PRId64 "; %s; %s)\n", d, M, N, K,
            route == OVL_ROUTE_LAYOUT ? "in ScaLAPACK's layout" : "converted to ovl's layout", why);
  }
  int slot = x->nplans < PD_PLANS ? x->nplans++ : (x->next++ % PD_PLANS);
  x->plans[slot].m = M, x->plans[slot].n = N, x->plans[slot].k = K, x->plans[slot].bw = bw;
  x->plans[slot].gen = g_cfg.gen, x->plans[slot].plan = p, x->plans[slot].route = route;
  *out = p;
  return OVL_OK;
}

/* 0 for 'N', 1 for 'T' or 'C' (either case), -1 otherwise. */
static int trans_of(const char *t) {
  switch (t[0]) {
  case 'N':
  case 'n': return 0;
  case 'T':
  case 't':
  case 'C':
  case 'c': return 1;
  default: return -1;
  }
}

/* The panel width when none is given: A's block along k (its row block when
 * A is transposed), at least the table's default. */
static int64_t default_panel(const int *desca, int ta) {
  const int64_t kblock = ta ? desca[OVL_DESC_MB] : desca[OVL_DESC_NB],
                b0 = ovl_knob_default(OVL_KNOB_BLOCK, OVL_FAMILY_GEMM);
  return kblock > b0 ? kblock : b0;
}

/* PDGEMM's argument checks, on this process. */
static ovl_err check_args(const char *transa, const char *transb, const int *m, const int *n, const int *k,
                          const double *alpha, const int *ia, const int *ja, const int *desca, const int *ib,
                          const int *jb, const int *descb, const double *beta, const int *ic, const int *jc,
                          const int *descc, int nprow, int npcol, int myrow, int mycol) {
  const void *ptrs[] = {transa, transb, m, n, k, alpha, ia, ja, desca, ib, jb, descb, beta, ic, jc};
  const char *names[] = {"transa", "transb", "m",  "n",     "k",    "alpha", "ia", "ja",
                         "desca",  "ib",     "jb", "descb", "beta", "ic",    "jc"};
  for (size_t i = 0; i < sizeof ptrs / sizeof ptrs[0]; i++)
    OVL_CHECK(ptrs[i] != NULL, OVL_ERR_ARG, "ovl_pdgemm: argument %s is NULL", names[i]);
  int ta = trans_of(transa), tb = trans_of(transb);
  OVL_CHECK(ta >= 0, OVL_ERR_ARG, "ovl_pdgemm: transa must be 'N', 'T' or 'C', got '%c'", transa[0]);
  OVL_CHECK(tb >= 0, OVL_ERR_ARG, "ovl_pdgemm: transb must be 'N', 'T' or 'C', got '%c'", transb[0]);
  OVL_CHECK(*m >= 0 && *n >= 0 && *k >= 0, OVL_ERR_ARG, "ovl_pdgemm: m, n and k must be >= 0, got %d, %d and %d", *m,
            *n, *k);
  int ctxt = descc[OVL_DESC_CTXT];
  OVL_TRY(ovl_bcyclic_check(desca, ctxt, nprow, npcol, myrow, mycol, *ia, *ja, ta ? *k : *m, ta ? *m : *k, "A", "IA",
                            "JA"));
  OVL_TRY(ovl_bcyclic_check(descb, ctxt, nprow, npcol, myrow, mycol, *ib, *jb, tb ? *n : *k, tb ? *k : *n, "B", "IB",
                            "JB"));
  OVL_TRY(ovl_bcyclic_check(descc, ctxt, nprow, npcol, myrow, mycol, *ic, *jc, *m, *n, "C", "IC", "JC"));
  return OVL_OK;
}

/* ---- the drop-in's verdict ------------------------------------------------------
 * The model (seconds on one rank; F = 2 m n k flops shared by P ranks;
 * gamma: a rank's seconds per flop; a local dgemm whose inner dimension is
 * kb runs at the rate 1/gamma * kb / (kb + PD_KHALF)):
 *   ScaLAPACK: F/P gamma (kbs + KHALF)/kbs with PBLAS's panel kbs =
 *     PD_PBLAS_NB (PILAENV's 32: PBLAS cuts k into panels of that width
 *     whatever the descriptors' blocks), plus k/kbs steps of the two panel
 *     broadcasts (A's along the grid row, B's along the column);
 *   ovl converted: the same with ovl's panel b, plus the layout conversion:
 *     every operand entry that moves (A, B, C, and C again when beta != 0;
 *     1/P of each per rank) is packed, sent and unpacked (3 passes over its
 *     bytes at the machine's beta), four MPI_Alltoallv (P - 1 latencies
 *     each) and PD_CALL seconds of set-up;
 *   ovl in ScaLAPACK's layout: the same SUMMA with b clipped at the blocks of
 *     op(A)'s columns and op(B)'s rows, one pass over each rank's part of
 *     A and B (packing), PD_CALL; an operand not laid out as C adds, per
 *     panel, the broadcast of the whole panel along both grid dimensions
 *     and one pass over the whole operand.
 * ovl runs when its route's time is below (1 - PD_MARGIN) of ScaLAPACK's:
 * 10 %, so that a shape where the model sees a small gain (a rank-64 update:
 * one 64-wide panel against PBLAS's two of 32) stays with ScaLAPACK, whose
 * time there is within the noise of ovl's. */
enum { PD_PBLAS_NB = 32 };
#define PD_KHALF  8.0
#define PD_CALL   50e-6
#define PD_MARGIN 0.10
#define PD_MEMCAP 0.3 /* default cap: this share of the operands' bytes per rank */
enum { PD_MIN_PANEL = 32 }; /* the layout route's panels narrow down to this under the cap */

static double gemm_time(double flops, double gamma, double kb) { return flops * gamma * (kb + PD_KHALF) / kb; }

/* Time of the SUMMA steps of M x N x K with panel width kb on p x q. */
static double summa_time(const pd_ctx *x, int p, int q, double M, double N, double K, double kb) {
  if (kb > K) kb = K;
  double steps = ceil(K / kb), P = (double)p * q;
  double t = gemm_time(2.0 * M * N * K / P, x->gamma, kb);
  double abytes = 8.0 * ceil(M / p) * kb, bbytes = 8.0 * kb * ceil(N / q);
  t += steps * (ovl_coll_time(&x->mach, OVL_MC_BCAST, q, abytes, 1, 1, NULL) +
                ovl_coll_time(&x->mach, OVL_MC_BCAST, p, bbytes, 1, 1, NULL));
  return t;
}

/* The route of a call (its descriptors as type 1, its sizes positive, the
 * process inside the grid): *verdict as ovl_pdgemm_pays says it, *route the
 * route ovl takes when it runs the call (OVL_ROUTE_LAYOUT or
 * OVL_ROUTE_CONVERT: the faster by the model among those under the cap,
 * the layout when neither fits). Every input is the same on every process
 * of the grid. LOCAL. */
static void decide(const pd_ctx *x, int ta, int tb, const int *m, const int *n, const int *k, const double *beta,
                   const int *ia, const int *ja, const int *desca, const int *ib, const int *jb, const int *descb,
                   const int *ic, const int *jc, const int *descc, int *verdict, int *route, int64_t *lay_b) {
  int nprow = 0, npcol = 0;
  ovl_grid2d_dims(x->g, &nprow, &npcol);
  double M = *m, N = *n, K = *k, P = (double)nprow * npcol;
  int64_t small = *m < *n ? *m : *n;
  if (*k < small) small = *k;
  /* the cap: the operands' bytes per rank times PD_MEMCAP, or --dropin-mem */
  double cap = (double)x->want.dropin_mem;
  if (x->want.dropin_mem <= 0) {
    const int *d[3] = {desca, descb, descc};
    double own = 0.0;
    for (int i = 0; i < 3; i++) own += 8.0 * (double)d[i][OVL_DESC_M] * (double)d[i][OVL_DESC_N] / P;
    cap = PD_MEMCAP * own;
  }
  /* converted: ovl's copies of the three operands and the exchange buffers (send and receive of the largest) */
  double la = ceil(M / nprow) * ceil(K / npcol), lb = ceil(K / nprow) * ceil(N / npcol),
         lc = ceil(M / nprow) * ceil(N / npcol);
  double big = la > lb ? la : lb;
  if (lc > big) big = lc;
  double ws_conv = 8.0 * (la + lb + lc + 2.0 * big);
  /* in layout: the panels only; a panel is at most b wide and ends at the blocks of op(A)'s columns and op(B)'s
   * rows */
  double b = (double)(x->want.b > 0 ? x->want.b : default_panel(desca, ta));
  ovl_bcview va = ovl_bcyclic_view(desca, ia ? *ia : 1, ja ? *ja : 1, ta ? K : M, ta ? M : K, NULL);
  ovl_bcview vb = ovl_bcyclic_view(descb, ib ? *ib : 1, jb ? *jb : 1, tb ? N : K, tb ? K : N, NULL);
  ovl_bcview vc = ovl_bcyclic_view(descc, ic ? *ic : 1, jc ? *jc : 1, M, N, NULL);
  int al_a = ovl_i_bcsumma_aligned(0, ta, &va, &vc, nprow, npcol);
  int al_b = ovl_i_bcsumma_aligned(1, tb, &vb, &vc, nprow, npcol);
  double kblk = (double)(ta ? va.mb : va.nb), kblkb = (double)(tb ? vb.nb : vb.mb);
  double bl = b < kblk ? b : kblk;
  if (kblkb < bl) bl = kblkb;
  /* under the cap the panels narrow (down to PD_MIN_PANEL) rather than the call going to ScaLAPACK */
  double ws_lay = ovl_i_bcsumma_memory(*m, *n, *k, (int64_t)bl, nprow, npcol, al_a, al_b, 1);
  *lay_b = 0;
  while (ws_lay > cap && bl > PD_MIN_PANEL) {
    bl = ceil(bl / 2.0);
    *lay_b = (int64_t)bl;
    ws_lay = ovl_i_bcsumma_memory(*m, *n, *k, (int64_t)bl, nprow, npcol, al_a, al_b, 1);
  }
  /* times */
  double t_scal = summa_time(x, nprow, npcol, M, N, K, PD_PBLAS_NB);
  double moved = M * K + K * N + M * N * (*beta != 0.0 ? 2.0 : 1.0);
  double t_conv = summa_time(x, nprow, npcol, M, N, K, b) + 3.0 * 8.0 * moved / P * x->mach.beta +
                  4.0 * (P - 1.0) * x->mach.alpha + PD_CALL;
  /* in layout: SUMMA with the clipped panels, packing each panel once; an operand that is not aligned moves its
   * whole panel to every process (an allgather along one dimension, a broadcast along the other) */
  double steps = ceil(K / (bl < K ? bl : K));
  double t_lay =
      summa_time(x, nprow, npcol, M, N, K, bl) + 8.0 * (M * K / nprow + K * N / npcol) * x->mach.beta + PD_CALL;
  if (!al_a)
    t_lay += steps * (ovl_coll_time(&x->mach, OVL_MC_BCAST, npcol, 8.0 * M * bl, 1, 1, NULL) +
                      ovl_coll_time(&x->mach, OVL_MC_BCAST, nprow, 8.0 * M * bl, 1, 1, NULL)) +
             8.0 * M * K * x->mach.beta;
  if (!al_b)
    t_lay += steps * (ovl_coll_time(&x->mach, OVL_MC_BCAST, npcol, 8.0 * N * bl, 1, 1, NULL) +
                      ovl_coll_time(&x->mach, OVL_MC_BCAST, nprow, 8.0 * N * bl, 1, 1, NULL)) +
             8.0 * N * K * x->mach.beta;
  int fit_lay = ws_lay <= cap, fit_conv = ws_conv <= cap;
  *route = fit_conv && (!fit_lay || t_conv < t_lay) ? OVL_ROUTE_CONVERT : OVL_ROUTE_LAYOUT;
  double t_ovl = *route == OVL_ROUTE_CONVERT ? t_conv : t_lay;
  switch (x->want.dropin_route) {
  case OVL_ROUTE_SCALAPACK: *verdict = OVL_PDGEMM_ROUTE; return;
  case OVL_ROUTE_LAYOUT: *route = OVL_ROUTE_LAYOUT, *verdict = fit_lay ? OVL_PDGEMM_RUN : OVL_PDGEMM_MEMORY; return;
  case OVL_ROUTE_CONVERT: *route = OVL_ROUTE_CONVERT, *verdict = fit_conv ? OVL_PDGEMM_RUN : OVL_PDGEMM_MEMORY; return;
  default: break;
  }
  /* ScaLAPACK's when it is faster than the faster of ovl's routes (under the cap or not); else the cap */
  double t_best = t_conv < t_lay ? t_conv : t_lay;
  int by_model = x->want.dropin_min <= 0;
  if (!by_model && small < x->want.dropin_min) *verdict = OVL_PDGEMM_SMALL;
  else if (by_model && !(t_best < (1.0 - PD_MARGIN) * t_scal)) *verdict = OVL_PDGEMM_SMALL;
  else if (!fit_lay && !fit_conv) *verdict = OVL_PDGEMM_MEMORY;
  else if (by_model && !(t_ovl < (1.0 - PD_MARGIN) * t_scal)) *verdict = OVL_PDGEMM_MEMORY; /* what pays does not fit */
  else *verdict = OVL_PDGEMM_RUN;
}

ovl_err ovl_pdgemm_pays(const char *transa, const char *transb, const int *m, const int *n, const int *k,
                        const double *beta, const int *desca, const int *descb, const int *descc, int *verdict) {
  return ovl_pdgemm_route(transa, transb, m, n, k, beta, NULL, NULL, desca, NULL, NULL, descb, NULL, NULL, descc,
                          verdict, NULL);
}

ovl_err ovl_pdgemm_route(const char *transa, const char *transb, const int *m, const int *n, const int *k,
                         const double *beta, const int *ia, const int *ja, const int *desca, const int *ib,
                         const int *jb, const int *descb, const int *ic, const int *jc, const int *descc, int *verdict,
                         int *route) {
  OVL_CHECK(verdict != NULL, OVL_ERR_ARG, "ovl_pdgemm_pays: verdict is NULL");
  *verdict = OVL_PDGEMM_RUN;
  int rt = OVL_ROUTE_CONVERT;
  if (route) *route = rt;
  if (!transa || !transb || !m || !n || !k || !beta || !desca || !descb || !descc) return OVL_OK;
  if (*m <= 0 || *n <= 0 || *k <= 0) return OVL_OK; /* ovl_pdgemm's quick return or its error */
  int ta = trans_of(transa), tb = trans_of(transb);
  if (ta < 0 || tb < 0) return OVL_OK;
  int ctxt = descc[OVL_DESC_CTXT], nprow = -1, npcol = -1, myrow = -1, mycol = -1;
  Cblacs_gridinfo(ctxt, &nprow, &npcol, &myrow, &mycol);
  if (nprow < 1 || npcol < 1 || myrow < 0 || mycol < 0) return OVL_OK;
  for (int i = 0; i < 3; i++) { /* blocks ovl_pdgemm would reject: it reports */
    const int *d = i == 0 ? desca : i == 1 ? descb : descc;
    if (d[OVL_DESC_MB] < 1 || d[OVL_DESC_NB] < 1) return OVL_OK;
  }
  pd_ctx *x = NULL;
  OVL_TRY(context_of(ctxt, nprow, npcol, myrow, mycol, &x));
  int64_t lay_b = 0;
  decide(x, ta, tb, m, n, k, beta, ia, ja, desca, ib, jb, descb, ic, jc, descc, verdict, &rt, &lay_b);
  if (route) *route = rt;
  return OVL_OK;
}

static int64_t round8(int64_t x) { return (x + 7) / 8 * 8; }

ovl_err ovl_pdgemm(const char *transa, const char *transb, const int *m, const int *n, const int *k,
                   const double *alpha, const double *a, const int *ia, const int *ja, const int *desca,
                   const double *b, const int *ib, const int *jb, const int *descb, const double *beta, double *c,
                   const int *ic, const int *jc, const int *descc) {
  double t0 = ovl_time();
  ovl_pdgemm_info info;
  memset(&info, 0, sizeof info);
  g_info = info;
  /* the grid comes from C's descriptor: without it there is nobody to agree with */
  OVL_CHECK(descc != NULL, OVL_ERR_ARG, "ovl_pdgemm: argument descc is NULL");
  int ctxt = descc[OVL_DESC_CTXT], nprow = -1, npcol = -1, myrow = -1, mycol = -1;
  Cblacs_gridinfo(ctxt, &nprow, &npcol, &myrow, &mycol);
  if (nprow < 1 || npcol < 1 || myrow < 0 || mycol < 0) return OVL_OK; /* not in the grid: as PDGEMM */
  pd_ctx *x = NULL;
  OVL_TRY(context_of(ctxt, nprow, npcol, myrow, mycol, &x));
  ovl_grid2d g = x->g;
  MPI_Comm parent = ovl_grid2d_parent(g);
  info.p = nprow;
  info.q = npcol;

  ovl_err rc = check_args(transa, transb, m, n, k, alpha, ia, ja, desca, ib, jb, descb, beta, ic, jc, descc, nprow,
                          npcol, myrow, mycol);
  int ta = 0, tb = 0, quick = 1, verdict = OVL_PDGEMM_RUN, route = OVL_ROUTE_CONVERT;
  int64_t lay_b = 0; /* > 0: the layout's panel width narrowed to fit the cap */
  int64_t M = 0, N = 0, K = 0, lena = 0, lenb = 0, lenc = 0;
  if (rc == OVL_OK) {
    ta = trans_of(transa), tb = trans_of(transb);
    M = *m, N = *n, K = *k;
    quick = M == 0 || N == 0 || K == 0 || *alpha == 0.0;
    if (!quick) decide(x, ta, tb, m, n, k, beta, ia, ja, desca, ib, jb, descb, ic, jc, descc, &verdict, &route, &lay_b);
    if (!quick && route == OVL_ROUTE_CONVERT) {
      lena = round8(ovl_dmat_local_len(g, M, K));
      lenb = round8(ovl_dmat_local_len(g, K, N));
      lenc = round8(ovl_dmat_local_len(g, M, N));
      rc = ovl_bcyclic_ws_reserve(&g_ops, (size_t)(lena + lenb + lenc));
    }
  }
  OVL_TRY(ovl_err_agree(parent, rc));
  ovl_bcview vc = ovl_bcyclic_view(descc, *ic, *jc, M, N, c);
  if (quick) { /* C := beta C (nothing at all when m or n is 0) */
    ovl_bcyclic_scale(&vc, nprow, npcol, myrow, mycol, *beta);
    info.t_total = info.t_setup = ovl_time() - t0;
    g_info = info;
    return OVL_OK;
  }
  /* op(sub(A)) is M x K: sub(A) is K x M when transposed; likewise B */
  ovl_bcview va = ovl_bcyclic_view(desca, *ia, *ja, ta ? K : M, ta ? M : K, (double *)a);
  ovl_bcview vb = ovl_bcyclic_view(descb, *ib, *jb, tb ? N : K, tb ? K : N, (double *)b);
  if (route == OVL_ROUTE_LAYOUT) { /* SUMMA on the caller's arrays: no copy of A, B or C */
    ovl_plan plan = x->want;
    int64_t bw = default_panel(desca, ta);
    rc = plan_of(x, M, N, K, lay_b > 0 && lay_b < bw ? lay_b : bw, route, &plan); /* agreed */
    if (rc != OVL_OK) return rc;
    if (lay_b > 0 && lay_b < plan.b) plan.b = lay_b;
    info.b = plan.b;
    ovl_plan_describe(&plan, info.plan, sizeof info.plan);
    double t1 = ovl_time();
    info.t_setup = t1 - t0;
    OVL_TRY(ovl_i_bcsumma(g, ta, tb, M, N, K, *alpha, &va, &vb, *beta, &vc, &plan, &info.summa));
    info.t_total = ovl_time() - t0;
    g_info = info;
    return OVL_OK;
  }
  ovl_dmat A = NULL, B = NULL, C = NULL; /* over g_ops */
  rc = ovl_dmat_wrap(g, M, K, g_ops.buf, &A);
  if (rc == OVL_OK) rc = ovl_dmat_wrap(g, K, N, g_ops.buf + lena, &B);
  if (rc == OVL_OK) rc = ovl_dmat_wrap(g, M, N, g_ops.buf + lena + lenb, &C);
  rc = ovl_err_agree(parent, rc);
  ovl_plan plan = x->want;
  if (rc == OVL_OK) rc = plan_of(x, M, N, K, default_panel(desca, ta), route, &plan); /* agreed */
  info.b = plan.b;
  if (rc == OVL_OK) ovl_plan_describe(&plan, info.plan, sizeof info.plan);
  double t1 = ovl_time();
  info.t_setup = t1 - t0;

  if (rc == OVL_OK) rc = ovl_bcyclic_to_dmat(&va, ta, A, &g_xchg);
  if (rc == OVL_OK) rc = ovl_bcyclic_to_dmat(&vb, tb, B, &g_xchg);
  if (rc == OVL_OK && *beta != 0.0) rc = ovl_bcyclic_to_dmat(&vc, 0, C, &g_xchg); /* beta == 0: C is never read */
  double t2 = ovl_time();
  info.t_in = t2 - t1;
  if (rc == OVL_OK) rc = ovl_summa(*alpha, A, B, *beta, C, &plan, &info.summa);
  double t3 = ovl_time();
  if (rc == OVL_OK) rc = ovl_bcyclic_from_dmat(C, 0, &vc, &g_xchg);
  double t4 = ovl_time();
  ovl_dmat_destroy(&A);
  ovl_dmat_destroy(&B);
  ovl_dmat_destroy(&C);
  if (rc != OVL_OK) return rc;
  info.t_out = t4 - t3;
  info.t_total = t4 - t0;
  g_info = info;
  return OVL_OK;
}

#endif
