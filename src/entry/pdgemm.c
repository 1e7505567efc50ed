/* ovl_pdgemm: ScaLAPACK's PDGEMM interface on top of the block-cyclic <->
 * block exchanges (src/dmat/bcyclic.c) and SUMMA (see ovl/pdgemm.h).
 *
 * Process-wide state (documented in ovl/pdgemm.h): the defaults set by
 * ovl_pdgemm_config, the record of the last call, and one workspace for the
 * operands and the exchange buffers. The ovl grid of a BLACS context is an
 * attribute of the context's communicator. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "dmat/bcyclic.h"
#include "ovl/pdgemm.h"

static struct {
  int ndup;
  ovl_backend backend;
  int64_t panel;
} g_cfg = {1, OVL_BACKEND_MPI, 0};

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

#else

/* The BLACS C interface (shipped inside ScaLAPACK's library; no header). */
void Cblacs_gridinfo(int ctxt, int *nprow, int *npcol, int *myrow, int *mycol);
void Cblacs_get(int ctxt, int what, int *val);
MPI_Comm Cblacs2sys_handle(int sysctxt);

/* Cblacs_get WHAT: a system handle for the context's own communicator. */
enum { BLACS_GET_CONTEXT_COMM = 10 };

static int g_keyval = MPI_KEYVAL_INVALID;

/* Runs when BLACS frees the context's communicator (grid exit). */
static int grid_attr_delete(MPI_Comm comm, int keyval, void *attr, void *extra) {
  (void)comm, (void)keyval, (void)extra;
  ovl_grid2d g = attr;
  ovl_grid2d_destroy(&g);
  return MPI_SUCCESS;
}

/* The ovl grid of a BLACS context: made on first use and cached on the
 * context's communicator. COLLECTIVE over the context's processes. */
static ovl_err context_grid(int ctxt, int nprow, int npcol, int myrow, int mycol, ovl_grid2d *out) {
  int h = -1, flag = 0, size = 0, rank = -1;
  ovl_grid2d g = NULL;
  *out = NULL;
  Cblacs_get(ctxt, BLACS_GET_CONTEXT_COMM, &h);
  MPI_Comm comm = Cblacs2sys_handle(h);
  if (g_keyval == MPI_KEYVAL_INVALID)
    OVL_MPI(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, grid_attr_delete, &g_keyval, NULL));
  OVL_MPI(MPI_Comm_get_attr(comm, g_keyval, &g, &flag));
  if (flag) {
    *out = g;
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
  OVL_TRY(ovl_grid2d_create(comm, nprow, npcol, 0, &g));
  int mrc = MPI_Comm_set_attr(comm, g_keyval, g);
  if (mrc != MPI_SUCCESS) {
    ovl_grid2d_destroy(&g);
    return ovl_err_mpi(mrc, "MPI_Comm_set_attr");
  }
  *out = g;
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
  ovl_grid2d g = NULL;
  OVL_TRY(context_grid(ctxt, nprow, npcol, myrow, mycol, &g));
  MPI_Comm parent = ovl_grid2d_parent(g);
  info.p = nprow;
  info.q = npcol;

  ovl_err rc = check_args(transa, transb, m, n, k, alpha, ia, ja, desca, ib, jb, descb, beta, ic, jc, descc, nprow,
                          npcol, myrow, mycol);
  int ta = 0, tb = 0, quick = 1;
  int64_t M = 0, N = 0, K = 0, lena = 0, lenb = 0, lenc = 0;
  if (rc == OVL_OK) {
    ta = trans_of(transa), tb = trans_of(transb);
    M = *m, N = *n, K = *k;
    quick = M == 0 || N == 0 || K == 0 || *alpha == 0.0;
    if (!quick) {
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
  ovl_dmat A = NULL, B = NULL, C = NULL; /* over g_ops */
  rc = ovl_dmat_wrap(g, M, K, g_ops.buf, &A);
  if (rc == OVL_OK) rc = ovl_dmat_wrap(g, K, N, g_ops.buf + lena, &B);
  if (rc == OVL_OK) rc = ovl_dmat_wrap(g, M, N, g_ops.buf + lena + lenb, &C);
  rc = ovl_err_agree(parent, rc);
  int64_t bw = g_cfg.panel;
  if (bw == 0) {
    int64_t kblock = ta ? desca[OVL_DESC_MB] : desca[OVL_DESC_NB];
    bw = kblock > 256 ? kblock : 256;
  }
  if (bw > K) bw = K;
  ovl_plan plan = ovl_plan_gemm(OVL_ALGO_SUMMA, bw);
  plan.ndup = g_cfg.ndup;
  plan.coll.backend = g_cfg.backend;
  info.b = bw;
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
