/* A Fock matrix file purified: the job of `ovl purify` as one library call
 * (meta.json beside the file, memory asked first, F read on plane 0, the
 * plausibility of F, the run, D written, the eigensolver's check, and the
 * multiple-PPN subset). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#include "ovl/entry.h"
#include "ovl/json.h"
#include "ovl/record.h"
#include "ovl/trace.h"

/* "meta.json" beside the Fock file. LOCAL. */
void ovl_fock_meta_path(const char *fock, char *path, size_t n) {
  snprintf(path, n, "%s", fock);
  char *slash = strrchr(path, '/');
  if (slash) snprintf(slash + 1, n - (size_t)(slash + 1 - path), "meta.json");
  else snprintf(path, n, "meta.json");
}

ovl_err ovl_fock_meta_read(MPI_Comm comm, const char *fock, ovl_fock_meta *m) {
  OVL_TRY(ovl_check_comm(comm, "ovl_fock_meta_read"));
  OVL_TRY(ovl_check_ptr(m, "ovl_fock_meta_read", "m"));
  int rank = 0;
  OVL_MPI(MPI_Comm_rank(comm, &rank));
  double v[5] = {-1, NAN, NAN, NAN, NAN};
  ovl_err rc = OVL_OK;
  if (rank == 0) {
    char path[4096];
    ovl_fock_meta_path(fock, path, sizeof path);
    struct stat st;
    if (lstat(path, &st) == 0 || errno != ENOENT) {
      ovl_json d;
      int64_t k = -1;
      rc = ovl_json_load(path, "metadata file", 1 << 20, &d);
      if (rc == OVL_OK) rc = ovl_json_root_object(&d, "");
      if (rc == OVL_OK) rc = ovl_json_int_opt(&d, d.root, "n_occ", 0, INT64_MAX, -1, &k);
      if (rc == OVL_OK) rc = ovl_json_num_opt(&d, d.root, "eig_min", NAN, &v[1]);
      if (rc == OVL_OK) rc = ovl_json_num_opt(&d, d.root, "eig_max", NAN, &v[2]);
      if (rc == OVL_OK) rc = ovl_json_num_opt(&d, d.root, "homo", NAN, &v[3]);
      if (rc == OVL_OK) rc = ovl_json_num_opt(&d, d.root, "lumo", NAN, &v[4]);
      ovl_json_free(&d);
      v[0] = (double)k;
    }
  }
  OVL_TRY(ovl_err_agree(comm, rc));
  OVL_MPI(MPI_Bcast(v, 5, MPI_DOUBLE, 0, comm));
  m->nocc = (int64_t)v[0], m->eig_min = v[1], m->eig_max = v[2];
  int gap = isfinite(v[3]) && isfinite(v[4]) && v[3] < v[4]; /* both, in order, or neither */
  m->homo = gap ? v[3] : NAN, m->lumo = gap ? v[4] : NAN;
  return OVL_OK;
}

/* Plausibility of F against the eigenvalues meta.json records: every entry
 * of a symmetric F is at most R = max(|eig_min|, |eig_max|) in magnitude and
 * ||F||_F >= R. A byte-swapped or different file fails one of the two.
 * Plane-0 ranks of F's grid: COLLECTIVE over its parent. */
static ovl_err check_fock_plausible(ovl_dmat F, const char *fock, const ovl_fock_meta *m) {
  if (isnan(m->eig_min) || isnan(m->eig_max)) return OVL_OK;
  double R = fmax(fabs(m->eig_min), fabs(m->eig_max)), amax = 0, fro = 0;
  const double *a = ovl_dmat_data(F);
  for (int64_t c = 0; c < ovl_dmat_local_cols(F); c++)
    for (int64_t r = 0; r < ovl_dmat_local_rows(F); r++) amax = fmax(amax, fabs(a[r + c * ovl_dmat_ld(F)]));
  MPI_Comm pc = ovl_grid2d_parent(ovl_dmat_grid(F));
  OVL_MPI(MPI_Allreduce(MPI_IN_PLACE, &amax, 1, MPI_DOUBLE, MPI_MAX, pc));
  OVL_TRY(ovl_dmat_norm_fro(F, &fro));
  const double slack = 1e-6 * R + 1e-12;
  if (amax > R + slack || fro < R - slack)
    return ovl_err_set(OVL_ERR_FORMAT,
                       "'%s' does not match its meta.json: the eigenvalues lie in [%.6g, %.6g], so max |F_ij| must be "
                       "<= %.6g and ||F||_F >= %.6g, but they are %.6g and %.6g (wrong byte order, or another "
                       "matrix?)",
                       fock, m->eig_min, m->eig_max, R, R, amax, fro);
  return OVL_OK;
}

/* Peak bytes per rank of the job on an s x s x c grid: ovl_purify's (which
 * covers reading F and writing D: 2 and 3 blocks), or, with the check, rank
 * 0's F, D, a gather buffer, the gathered F and D and LAPACK dsyevd's
 * workspace (1 + 6n + 2n^2 doubles, 3 + 5n integers). LOCAL. */
static int64_t job_memory(const ovl_purify_job *j, int64_t n, int s, int c) {
  int64_t mem = ovl_purify_memory(n, s, c, &j->po);
  if (mem < 0 || !j->check) return mem;
  double N = (double)n;
  double chk = 3.0 * (double)ovl_dmat_memory(n, n, s, s) + 8.0 * (4 * N * N + 7 * N + 1) + 4.0 * (5 * N + 3);
  return chk >= 4611686018427387904.0 ? -1 : (int64_t)fmax((double)mem, chk);
}

typedef struct job_ctx {
  MPI_Comm comm;
  const ovl_purify_job *j;
  ovl_purify_job_result *r;
} job_ctx;

/* The whole job on the ranks that run it (all, or the active subset). */
static ovl_err purify_on(MPI_Comm comm, const ovl_purify_job *j, ovl_purify_job_result *r) {
  /* the plan's grid (given, or by the shape rules of the method's family) */
  int s = j->po.plan.s, c = j->po.plan.c;
  ovl_grid3d g = NULL;
  OVL_TRY(ovl_grid3d_create(comm, s, c, j->allow_idle ? OVL_GRID_ALLOW_IDLE : 0, &g));
  ovl_grid3d_dims(g, &s, &c);
  snprintf(r->grid, sizeof r->grid, "%dx%dx%d", s, s, c);
  int gi, gj, gk;
  ovl_grid3d_coords(g, &gi, &gj, &gk);
  int on0 = ovl_grid3d_active(g) && gk == 0;
  ovl_grid2d pl = ovl_grid3d_plane(g);
  MPI_Comm parent = ovl_grid3d_parent(g);
  /* memory: ask before allocating (an unreadable header is left to the reader's message) */
  ovl_err rc = OVL_OK;
  int64_t n = 0;
  ovl_matrix_meta mm;
  if (ovl_matrix_read_meta(comm, j->fock, &mm) == OVL_OK) {
    n = mm.rows;
    r->mem_estimate = job_memory(j, n, s, c);
    if (r->mem_estimate < 0) /* n is agreed, so is this */
      rc = ovl_err_set(OVL_ERR_NOMEM, "n = %" PRId64 " needs 2^62 bytes or more per rank on a %d x %d x %d grid", n, s,
                       s, c);
    else rc = ovl_check_memory(comm, r->mem_estimate, j->mem_limit);
    if (rc) {
      ovl_grid3d_destroy(&g);
      return rc;
    }
  }
  n = 0;
  /* F is read on plane 0; the other planes hold handles of the same layout */
  ovl_dmat F = NULL, D = NULL;
  if (on0) {
    rc = ovl_dmat_read(pl, j->fock, 1, &F);
    if (!rc) n = ovl_dmat_rows(F);
    if (!rc) rc = check_fock_plausible(F, j->fock, &j->meta);
  }
  rc = ovl_err_agree(parent, rc);
  if (rc) {
    ovl_grid3d_destroy(&g);
    return rc;
  }
  MPI_Allreduce(MPI_IN_PLACE, &n, 1, MPI_INT64_T, MPI_MAX, parent);
  r->n = n;
  if (!on0) rc = ovl_dmat_create(pl, n, n, &F);
  if (!rc) rc = ovl_dmat_create(pl, n, n, &D);
  rc = ovl_err_agree(parent, rc);
  int traced = 0;
  if (!rc && j->trace) rc = ovl_trace_start(parent, (int64_t)1 << 20), traced = rc == OVL_OK;
  if (!rc) rc = ovl_purify(g, F, D, &j->po, &r->res);
  /* the check comes before the outputs, which are written last: a signal
   * that ends the process during the check leaves files of their names as
   * they were (the check emits no trace events) */
  if (!rc && j->check && !r->res.stopped) {
    if (on0) rc = ovl_purify_reference(F, D, &j->po, &r->ref);
    rc = ovl_err_agree(parent, rc);
    MPI_Bcast(&r->ref, (int)sizeof r->ref, MPI_BYTE, 0, parent);
    r->checked = 1;
  }
  if (traced) { /* a failed run writes no trace: nothing is left behind by a failure */
    ovl_err trc = ovl_trace_write(rc == OVL_OK ? j->trace : NULL);
    if (!rc) rc = trc;
  }
  if (!rc && j->out && on0 && !r->res.stopped) rc = ovl_dmat_write_raw(D, j->out, 1);
  rc = ovl_err_agree(parent, rc);
  ovl_dmat_destroy(&F);
  ovl_dmat_destroy(&D);
  ovl_grid3d_destroy(&g);
  return rc;
}

/* The block-sparse job (see ovl_purify_job_run). The blocks are dealt out by
 * a fixed random permutation (seed k_sparse_seed): load balance whatever the
 * atoms' order. */
static const uint64_t k_sparse_seed = 2024;

/* *X := X with its blocks merged into blocks of up to `block` rows (block <=
 * 1: as they are); *file_blocks receives X's blocks before. COLLECTIVE. */
static ovl_err sparse_regroup(ovl_bsmat *X, int block, int *file_blocks) {
  *file_blocks = ovl_bsmat_nblk(*X);
  if (block <= 1) return OVL_OK;
  ovl_bsmat Y = NULL;
  ovl_err rc = ovl_bsmat_regroup(*X, block, &Y);
  if (Y) ovl_bsmat_destroy(X), *X = Y;
  return rc;
}

static ovl_err sparse_on(MPI_Comm comm, const ovl_purify_job *j, ovl_purify_job_result *r) {
  const double eps = j->po.sparse;
  /* mixed precision (ovl_bsmat_set_arith): S^(-1/2) and the purification start in float32 and finish in
   * float64 where float32 would set their floor; Z F Z and Z D Z in float32 from OVL_BSMAT_FLOAT32_EPS up */
  const int mixed = j->po.prec == OVL_PURIFY_PREC_MIXED;
  const ovl_bsmat_arith arith = mixed && eps >= OVL_BSMAT_FLOAT32_EPS ? OVL_BSMAT_FLOAT32 : OVL_BSMAT_FLOAT64;
  const int ndup =
      j->po.plan.ndup > 0 ? j->po.plan.ndup : 0; /* S^(-1/2), Z F Z and Z D Z: as given, else the family's */
  ovl_grid2d g = NULL;
  OVL_TRY(ovl_grid2d_create(comm, 0, 0, 0, &g));
  int p = 0, q = 0;
  ovl_grid2d_dims(g, &p, &q);
  snprintf(r->grid, sizeof r->grid, "%dx%d", p, q);
  r->active = p * q, r->threads = ovl_blas_threads_get();
  /* Peak memory: S^(-1/2) is made before F is read, and each phase's
   * temporaries go before the next one starts (the matrices of ice-64k are
   * gigabytes each) */
  ovl_bsmat F = NULL, S = NULL, Z = NULL, T = NULL, D = NULL;
  ovl_err rc = OVL_OK;
  if (j->overlap) rc = ovl_bsmat_read(g, j->overlap, 0, NULL, k_sparse_seed, 0.0, &S);
  rc = ovl_err_agree(comm, rc);
  /* the file's blocks (atoms) merged into blocks of up to sparse_block rows */
  int nb_s = 0, *bs_s = NULL; /* S's file blocks, to compare with F's */
  if (rc == OVL_OK && S) {
    nb_s = ovl_bsmat_nblk(S);
    bs_s = malloc((size_t)nb_s * sizeof *bs_s);
    if (!bs_s) rc = ovl_err_set(OVL_ERR_NOMEM, "the block sizes of '%s' (%d blocks)", j->overlap, nb_s);
    else memcpy(bs_s, ovl_bsmat_block_sizes(S), (size_t)nb_s * sizeof *bs_s);
  }
  rc = ovl_err_agree(comm, rc);
  if (rc == OVL_OK && S) rc = sparse_regroup(&S, j->po.sparse_block, &r->blocks_file);
  if (rc == OVL_OK && S) { /* a non-orthogonal basis: F' = Z F Z with Z = S^(-1/2) */
    rc = ovl_bsmat_create_like(S, &Z);
    rc = ovl_err_agree(comm, rc);
    if (rc == OVL_OK && mixed) ovl_bsmat_set_arith(Z, OVL_BSMAT_FLOAT32); /* (until its last iterations) */
    ovl_bsmat_invsqrt_info zi = {0};
    if (rc == OVL_OK) rc = ovl_bsmat_invsqrt(S, eps, ndup, 200, Z, &zi);
    r->invsqrt_iter = zi.iterations, r->t_invsqrt = zi.t_total;
  }
  const int64_t n_s = S ? ovl_bsmat_n(S) : 0;
  ovl_bsmat_destroy(&S); /* Z holds what the job needs of it */
  if (rc == OVL_OK) rc = ovl_bsmat_read(g, j->fock, 0, NULL, k_sparse_seed, 0.0, &F);
  rc = ovl_err_agree(comm, rc);
  if (rc == OVL_OK && bs_s) { /* the same atoms: F's file blocks are those S was read with */
    int same = n_s == ovl_bsmat_n(F) && ovl_bsmat_nblk(F) == nb_s;
    for (int b = 0; same && b < nb_s; b++) same = ovl_bsmat_block_sizes(F)[b] == bs_s[b];
    if (!same)
      rc = ovl_err_set(OVL_ERR_SIZE, "'%s' and '%s' do not have the same blocks (n %" PRId64 " and %" PRId64 ")",
                       j->fock, j->overlap, ovl_bsmat_n(F), n_s);
  }
  free(bs_s);
  if (rc == OVL_OK) rc = sparse_regroup(&F, j->po.sparse_block, &r->blocks_file);
  rc = ovl_err_agree(comm, rc);
  r->blocks = rc == OVL_OK ? ovl_bsmat_nblk(F) : 0;
  r->n = rc == OVL_OK ? ovl_bsmat_n(F) : 0;
  if (rc == OVL_OK) rc = ovl_bsmat_count(F, &r->blocks_f, NULL, NULL);
  if (rc == OVL_OK && Z) {
    double t0 = ovl_time();
    rc = ovl_bsmat_create_like(F, &T);
    rc = ovl_err_agree(comm, rc);
    if (rc == OVL_OK) ovl_bsmat_set_arith(T, arith), ovl_bsmat_set_arith(F, arith), ovl_bsmat_set_symmetric(F, 1);
    if (rc == OVL_OK) rc = ovl_bsmat_multiply(Z, F, eps, ndup, T, NULL);
    if (rc == OVL_OK) rc = ovl_bsmat_multiply(T, Z, eps, ndup, F, NULL); /* F' replaces F */
    ovl_bsmat_destroy(&T);
    if (rc == OVL_OK) rc = ovl_bsmat_release_work(F); /* F' is read from now on, never written */
    r->t_transform += ovl_time() - t0;
  }
  /* the purification's product planned on F''s shape (its first square's): bsumma or bs2.5d, N_DUP */
  if (rc == OVL_OK) rc = ovl_purify_sparse_plan(F, &j->po.plan, j->machine, &r->plan, r->plan_why, sizeof r->plan_why);
  if (rc == OVL_OK) rc = ovl_err_agree(comm, ovl_bsmat_create_like(F, &D));
  if (rc == OVL_OK) rc = ovl_purify_sparse_planned(&r->plan, F, D, &j->po, &r->res);
  if (rc == OVL_OK && j->check && !r->res.stopped) { /* F' and D' as dense matrices on the same ranks */
    ovl_dmat Fd = NULL, Dd = NULL;
    int64_t n = ovl_bsmat_n(F);
    rc = ovl_dmat_create(g, n, n, &Fd);
    if (rc == OVL_OK) rc = ovl_dmat_create(g, n, n, &Dd);
    rc = ovl_err_agree(comm, rc);
    if (rc == OVL_OK) rc = ovl_bsmat_to_dense(F, Fd);
    if (rc == OVL_OK) rc = ovl_bsmat_to_dense(D, Dd);
    if (rc == OVL_OK) rc = ovl_purify_reference(Fd, Dd, &j->po, &r->ref);
    r->checked = rc == OVL_OK;
    ovl_dmat_destroy(&Fd);
    ovl_dmat_destroy(&Dd);
  }
  if (!j->check) ovl_bsmat_destroy(&F);       /* F' is not needed any more */
  if (rc == OVL_OK && Z && !r->res.stopped) { /* D = Z D' Z in the basis of F */
    double t0 = ovl_time();
    rc = ovl_err_agree(comm, ovl_bsmat_create_like(D, &T));
    if (rc == OVL_OK) ovl_bsmat_set_arith(T, arith), ovl_bsmat_set_arith(D, arith), ovl_bsmat_set_symmetric(D, 1);
    if (rc == OVL_OK) rc = ovl_bsmat_multiply(Z, D, eps, ndup, T, NULL);
    if (rc == OVL_OK) rc = ovl_bsmat_multiply(T, Z, eps, ndup, D, NULL);
    r->t_transform += ovl_time() - t0;
  }
  if (rc == OVL_OK) rc = ovl_bsmat_count(D, &r->blocks_d, NULL, &r->fill_d);
  /* written whole (general): Z D' Z's filtered products leave (I, J) and (J, I) apart by about eps */
  if (rc == OVL_OK && j->out && !r->res.stopped) rc = ovl_bsmat_write(D, j->out, 0);
  rc = ovl_err_agree(comm, rc);
  ovl_bsmat_destroy(&F);
  ovl_bsmat_destroy(&S);
  ovl_bsmat_destroy(&Z);
  ovl_bsmat_destroy(&T);
  ovl_bsmat_destroy(&D);
  ovl_grid2d_destroy(&g);
  return rc;
}

static ovl_err run_active(void *ctx) {
  job_ctx *x = ctx;
  return purify_on(x->comm, x->j, x->r);
}

/* The process's CPU time in seconds (user and system, every thread). */
static double cpu_time(void) {
  struct timespec ts;
  if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0) return NAN;
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

ovl_err ovl_purify_job_run(MPI_Comm comm, const ovl_purify_job *j, ovl_purify_job_result *r) {
  OVL_TRY(ovl_check_comm(comm, "ovl_purify_job_run"));
  OVL_TRY(ovl_check_ptr(j, "ovl_purify_job_run", "j"));
  OVL_TRY(ovl_check_ptr(r, "ovl_purify_job_run", "r"));
  memset(r, 0, sizeof *r);
  r->ref.relerr = r->ref.trace_err = r->ref.energy = r->ref.t_eig = NAN;
  int P = 0;
  OVL_MPI(MPI_Comm_size(comm, &P));
  double t0 = ovl_time(), c0 = cpu_time();
  ovl_err rc = OVL_OK;
  if (!isnan(j->po.sparse)) {
    rc = j->ppn > 0 ? ovl_err_set(OVL_ERR_UNSUPPORTED, "the block-sparse purification runs on every rank (no --ppn)")
                    : OVL_OK;
    if (rc == OVL_OK) rc = sparse_on(comm, j, r);
  } else if (j->ppn > 0) { /* multiple PPN: the first ppn ranks of every node purify, the others sleep */
    int cores = 0;
    OVL_TRY(ovl_node_cores(comm, &cores));
    ovl_active a = NULL;
    OVL_TRY(ovl_active_create(comm, j->ppn, 0, &a));
    job_ctx x = {ovl_active_comm(a), j, r};
    r->active = ovl_active_is_active(a);
    /* the active ranks take the sleepers' cores as BLAS threads (Huang & Chow
     * III-B: fewer processes, more threads each); restored afterwards */
    int on_node = 1, restore = 0;
    MPI_Comm_size(ovl_active_node_comm(a), &on_node);
    r->threads = r->active ? ovl_blas_threads_share(cores, j->ppn < on_node ? j->ppn : on_node, &restore) : 0;
    MPI_Allreduce(MPI_IN_PLACE, &r->threads, 1, MPI_INT, MPI_MAX, comm);
    if (!r->active && j->po.started) *j->po.started = 1; /* sleepers wait for the active ranks' clean stop */
    MPI_Allreduce(MPI_IN_PLACE, &r->active, 1, MPI_INT, MPI_SUM, comm);
    int nact = r->active;
    int threads = r->threads;
    rc = ovl_active_run(a, run_active, &x, NULL);
    if (restore) ovl_blas_threads_set(restore);
    /* the active ranks' results reach the sleepers (rank 0 is always active) */
    MPI_Bcast(r, (int)sizeof *r, MPI_BYTE, 0, comm);
    r->active = nact, r->threads = threads;
    ovl_active_destroy(&a);
  } else {
    r->active = P, r->threads = ovl_blas_threads_get();
    rc = purify_on(comm, j, r);
  }
  r->t_wall = ovl_time() - t0;
  r->t_cpu = cpu_time() - c0;
  MPI_Allreduce(MPI_IN_PLACE, &r->t_cpu, 1, MPI_DOUBLE, MPI_MAX, comm);
  struct rusage ru;
  r->rss_peak = getrusage(RUSAGE_SELF, &ru) == 0 ? (int64_t)ru.ru_maxrss * 1024 : 0; /* Linux: KiB */
  MPI_Allreduce(MPI_IN_PLACE, &r->rss_peak, 1, MPI_INT64_T, MPI_MAX, comm);
  return rc;
}

/* ---- options ------------------------------------------------------------------- */

static const char *const k_methods[] = {"canonical", "mcweeny", "sp2", "trs2", "trs4", "sp2acc", NULL};
static const char *const k_precs[] = {"double", "mixed", NULL};

ovl_purify_optvals ovl_purify_optvals_default(void) {
  ovl_purify_optvals v;
  memset(&v, 0, sizeof v);
  v.method = "canonical", v.precision = "double", v.nocc = -1, v.mu = NAN, v.tol = NAN, v.max_iter = 200;
  v.homo = v.lumo = v.sparse = NAN;
  v.sparse_block = ovl_purify_opts_default().sparse_block;
  return v;
}

int ovl_purify_opts_table(ovl_purify_optvals *v, ovl_opt *opts, int cap) {
  const ovl_opt t[] = {
      {"method", 0, OVL_OPT_CHOICE, &v->method, "NAME", "purification method", k_methods, 0, -1},
      {"precision", 'P', OVL_OPT_CHOICE, &v->precision, "PREC",
       "sp2/sp2acc/trs4 products and messages: double (float64), or mixed (float32 until its rounding floor, then "
       "float64; "
       "idempotent and trace-exact, but the density is only about 1e-6 accurate; with --sparse the block "
       "products in float32 arithmetic, the iterations finishing in float64 below threshold 1e-5)",
       k_precs, 0, -1},
      {"nocc", 0, OVL_OPT_I64, &v->nocc, "K",
       "occupied orbitals (default: n_occ of meta.json beside the Fock file; not with mcweeny)", NULL, 0, INT64_MAX},
      {"mu", 0, OVL_OPT_DOUBLE, &v->mu, "MU", "chemical potential (mcweeny; between HOMO and LUMO)", NULL, 0, -1},
      {"max-iter", 0, OVL_OPT_INT, &v->max_iter, "N", "iteration cap", NULL, 1, 100000},
      {"homo", 0, OVL_OPT_DOUBLE, &v->homo, "E",
       "sp2acc: an estimate of F's HOMO eigenvalue, with --lumo (the previous SCF cycle's; an estimated gap that "
       "misses the true one is detected and costs a restart with sp2's steps)",
       NULL, 0, -1},
      {"lumo", 0, OVL_OPT_DOUBLE, &v->lumo, "E", "sp2acc: an estimate of F's LUMO eigenvalue, with --homo", NULL, 0,
       -1},
      {"tol", 0, OVL_OPT_DOUBLE, &v->tol, "T",
       "stop once ||D^2 - D||_F <= T, T in [1e-14, 1e-2] (default: canonical 1e-11; sp2, trs4, mcweeny: none, they "
       "stop at the rounding floor)",
       NULL, 0, -1},
      {"checkpoint", 0, OVL_OPT_STRING, &v->checkpoint, "PREFIX", "checkpoint path prefix", NULL, 0, -1},
      {"checkpoint-every", 0, OVL_OPT_INT, &v->checkpoint_every, "K", "write a checkpoint every K iterations", NULL, 0,
       1000000},
      {"restart", 0, OVL_OPT_FLAG, &v->restart, NULL, "continue from the checkpoint", NULL, 0, -1},
      {"sparse", 0, OVL_OPT_DOUBLE, &v->sparse, "EPS",
       "block-sparse purification (sp2, sp2acc, trs4) of a block-sparse F (.mtx or .bsr with its block sizes in the "
       "sidecar), every product and sum filtered by EPS in [0, 1) (0: only exact zeros dropped; "
       "docs/guides/sparse.md)",
       NULL, 0, -1},
      {"sparse-block", 0, OVL_OPT_INT, &v->sparse_block, "B",
       "with --sparse: consecutive blocks of the file (atoms) merged into blocks of up to B rows (1: the file's "
       "blocks)",
       NULL, 1, 1 << 20},
  };
  int nt = (int)(sizeof t / sizeof t[0]);
  if (nt > cap) return -1;
  for (int k = 0; k < nt; k++) opts[k] = t[k];
  return nt;
}

ovl_err ovl_purify_opts_apply(const ovl_purify_optvals *v, ovl_purify_opts *po) {
  OVL_TRY(ovl_check_ptr(v, "ovl_purify_opts_apply", "v"));
  OVL_TRY(ovl_check_ptr(po, "ovl_purify_opts_apply", "po"));
  OVL_TRY(ovl_purify_method_parse(v->method, &po->method));
  OVL_TRY(ovl_purify_prec_parse(v->precision, &po->prec));
  int mcw = po->method == OVL_PURIFY_MCWEENY;
  OVL_CHECK(po->prec != OVL_PURIFY_PREC_MIXED || ovl_purify_uses_sq(po->method), OVL_ERR_ARG,
            "--precision mixed needs --method sp2, sp2acc or trs4");
  OVL_CHECK(isnan(v->homo) == isnan(v->lumo), OVL_ERR_ARG, "--homo and --lumo go together");
  OVL_CHECK(isnan(v->homo) || (isfinite(v->homo) && isfinite(v->lumo) && v->homo < v->lumo), OVL_ERR_ARG,
            "--homo must be below --lumo, got %g and %g", v->homo, v->lumo);
  OVL_CHECK(isnan(v->homo) || po->method == OVL_PURIFY_SP2ACC, OVL_ERR_ARG,
            "--homo and --lumo apply to --method sp2acc only, not %s: refused rather than ignored",
            ovl_purify_method_name(po->method));
  OVL_CHECK(!mcw || !isnan(v->mu), OVL_ERR_ARG, "--method mcweeny needs --mu");
  OVL_CHECK(mcw || isnan(v->mu), OVL_ERR_ARG, "--mu applies to --method mcweeny only");
  OVL_CHECK(!(v->checkpoint_every > 0 || v->restart) || v->checkpoint, OVL_ERR_ARG,
            "--checkpoint-every and --restart need --checkpoint PREFIX");
  OVL_CHECK(!v->checkpoint || v->checkpoint_every > 0 || v->restart, OVL_ERR_ARG,
            "--checkpoint needs --checkpoint-every K (or --restart)");
  OVL_CHECK(isnan(v->tol) || (v->tol >= OVL_PURIFY_TOL_MIN && v->tol <= OVL_PURIFY_TOL_MAX), OVL_ERR_ARG,
            "--tol must be in [%g, %g] (the rounding floor of double precision lies below)", OVL_PURIFY_TOL_MIN,
            OVL_PURIFY_TOL_MAX);
  OVL_CHECK(!mcw || v->nocc < 0, OVL_ERR_ARG,
            "--nocc does not apply to --method mcweeny (the occupation follows from --mu)");
  po->nocc = v->nocc, po->mu = v->mu, po->max_iter = v->max_iter, po->tol = isnan(v->tol) ? 0.0 : v->tol;
  OVL_CHECK(isnan(v->sparse) || (v->sparse >= 0.0 && v->sparse < 1.0), OVL_ERR_ARG,
            "--sparse must be in [0, 1) (a filtering threshold), got %g", v->sparse);
  OVL_CHECK(isnan(v->sparse) || ovl_purify_uses_sq(po->method), OVL_ERR_ARG,
            "--sparse runs --method sp2, sp2acc or trs4, not %s", ovl_purify_method_name(po->method));
  OVL_CHECK(!isnan(v->sparse) || v->sparse_block == ovl_purify_opts_default().sparse_block, OVL_ERR_ARG,
            "--sparse-block applies with --sparse only: refused rather than ignored");
  po->homo = v->homo, po->lumo = v->lumo, po->sparse = v->sparse, po->sparse_block = v->sparse_block;
  po->checkpoint = v->checkpoint, po->checkpoint_every = v->checkpoint_every, po->restart = v->restart;
  return OVL_OK;
}

ovl_err ovl_purify_option_applies(ovl_purify_method m, const char *option) {
  if (!option) return ovl_err_set(OVL_ERR_ARG, "ovl_purify_option_applies: a NULL option");
  if (!ovl_purify_uses_sq(m) || (strcmp(option, "--algo") != 0 && strcmp(option, "--arrival-order") != 0))
    return OVL_OK;
  return ovl_err_set(OVL_ERR_ARG,
                     "%s does not apply to --method %s, which squares with the symmetric square, not with a "
                     "SymmSquareCube algorithm: refused rather than ignored",
                     option, ovl_purify_method_name(m));
}

ovl_err ovl_purify_job_verdict(const ovl_purify_job *j, const ovl_purify_job_result *r) {
  OVL_TRY(ovl_check_ptr(j, "ovl_purify_job_verdict", "j"));
  OVL_TRY(ovl_check_ptr(r, "ovl_purify_job_verdict", "r"));
  if (!j->check) return OVL_OK;
  /* the block-sparse job: what the filtering leaves (measured: 9-15 eps relative on the tight-binding cases) */
  const double tol = isnan(j->po.sparse) ? 1e-8 : fmax(1e-8, 100.0 * j->po.sparse);
  if (r->ref.relerr <= tol && (j->po.method == OVL_PURIFY_MCWEENY || r->res.trace_err <= tol)) return OVL_OK;
  return ovl_err_set(OVL_ERR_NUMERIC, "the density differs from dsyevd's by %.2e (tolerance %.0e)", r->ref.relerr, tol);
}

ovl_err ovl_purify_job_print(FILE *out, const ovl_purify_job *j, const ovl_purify_job_result *jr, int ranks, int json) {
  OVL_TRY(ovl_check_ptr(out, "ovl_purify_job_print", "out"));
  OVL_TRY(ovl_check_ptr(j, "ovl_purify_job_print", "j"));
  OVL_TRY(ovl_check_ptr(jr, "ovl_purify_job_print", "jr"));
  if (!out || !j || !jr) return ovl_err_set(OVL_ERR_ARG, "ovl_purify_job_print: a NULL argument");
  const ovl_purify_result *r = &jr->res;
  const int mcw = j->po.method == OVL_PURIFY_MCWEENY, check = j->check;
  const int pass = ovl_purify_job_verdict(j, jr) == OVL_OK;
  const char *method = ovl_purify_method_name(j->po.method), *precision = ovl_purify_prec_name(j->po.prec);
  const char *kernel = ovl_purify_uses_sq(j->po.method) ? "square" : ovl_algo_name(j->po.plan.algo);
  char mpi[MPI_MAX_LIBRARY_VERSION_STRING], bsplan[256] = ""; /* the block-sparse job's product plan, printed */
  OVL_TRY(ovl_mpi_library(mpi, sizeof mpi));
  if (!isnan(j->po.sparse)) ovl_plan_describe(&jr->plan, bsplan, sizeof bsplan);
  if (json) {
    ovl_record *o = NULL;
    OVL_TRY(ovl_record_create("purify", &o));
    ovl_record_set_str(o, "fock", j->fock), ovl_record_set_int(o, "n", jr->n),
        ovl_record_set_int(o, "nocc", j->po.nocc);
    ovl_record_set_str(o, "method", method), ovl_record_set_str(o, "algo", kernel);
    ovl_record_set_str(o, "precision", precision), ovl_record_set_str(o, "stop_reason", r->stop_reason);
    ovl_record_set_int(o, "iter_single", r->iter_single), ovl_record_set_int(o, "products", r->products);
    ovl_record_set_int(o, "accelerated", r->accelerated);
    ovl_record_set_int(o, "fallback", r->fallback);
    ovl_record_set_num(o, "homo_estimate", j->po.homo), ovl_record_set_num(o, "lumo_estimate", j->po.lumo);
    ovl_record_set_int(o, "ndup", isnan(j->po.sparse) ? j->po.plan.ndup : jr->plan.ndup);
    ovl_record_set_str(o, "backend", ovl_backend_name(j->po.plan.coll.backend));
    ovl_record_set_int(o, "ranks", ranks), ovl_record_set_int(o, "active", jr->active);
    ovl_record_set_int(o, "blas_threads", jr->threads);
    ovl_record_set_str(o, "grid", jr->grid), ovl_record_set_int(o, "iterations", r->iterations);
    ovl_record_set_num(o, "idempotency_error", r->idem_err), ovl_record_set_num(o, "trace_error", r->trace_err);
    ovl_record_set_str(o, "trace_error_of", mcw ? "round(tr D)" : "n_occ");
    ovl_record_set_num(o, "energy", r->energy), ovl_record_set_num(o, "t_total", jr->t_wall);
    ovl_record_set_num(o, "t_ssc", r->t_ssc), ovl_record_set_num(o, "ssc_gflops", r->ssc_gflops);
    ovl_record_set_num(o, "t_symm", r->t_symm), ovl_record_set_num(o, "t_cpu", jr->t_cpu);
    ovl_record_set_str(o, "check", check ? (pass ? "PASS" : "FAIL") : "not checked");
    ovl_record_set_num(o, "ref_relerr", check ? jr->ref.relerr : NAN); /* null when not checked */
    ovl_record_set_num(o, "t_eig", check ? jr->ref.t_eig : NAN);
    ovl_record_set_int(o, "mem_estimate", jr->mem_estimate), ovl_record_set_str(o, "mpi", mpi);
    ovl_record_set_num(o, "sparse", j->po.sparse); /* null: dense */
    if (!isnan(j->po.sparse)) {
      ovl_record_set_str(o, "overlap", j->overlap);
      ovl_record_set_int(o, "blocks_f", jr->blocks_f), ovl_record_set_int(o, "blocks_d", jr->blocks_d);
      ovl_record_set_num(o, "fill_d", jr->fill_d), ovl_record_set_int(o, "invsqrt_iterations", jr->invsqrt_iter);
      ovl_record_set_num(o, "t_invsqrt", jr->t_invsqrt), ovl_record_set_num(o, "t_transform", jr->t_transform);
      ovl_record_set_int(o, "sparse_block", j->po.sparse_block);
      /* from H and S in memory to D: S^(-1/2), Z F Z, the purification, Z D Z (no files, no check) */
      ovl_record_set_num(o, "t_solve", jr->t_invsqrt + jr->t_transform + r->t_total);
      ovl_record_set_int(o, "blocks_file", jr->blocks_file), ovl_record_set_int(o, "blocks", jr->blocks);
      ovl_record_set_str(o, "plan", bsplan), ovl_record_set_str(o, "plan_why", jr->plan_why);
    }
    ovl_record_set_int(o, "rss_peak", jr->rss_peak);
    ovl_err rc = ovl_record_print(o, out);
    ovl_record_destroy(&o);
    fflush(out);
    return rc;
  }
  char occ[64];
  if (mcw) snprintf(occ, sizeof occ, "n_occ from mu=%g", j->po.mu);
  else snprintf(occ, sizeof occ, "n_occ=%" PRId64, j->po.nocc);
  if (!isnan(j->po.sparse)) { /* no flop count (block products), no symmetrization */
    ovl_fprintf(out,
                "purify: n=%" PRId64
                " %s grid %s (%d ranks, %d BLAS thread%s each): %d iterations, stopped at the %s, ||D^2-D||_F %.2e, "
                "|tr D - n_occ| %.2e, energy tr(DF) %.10f\n"
                "purify: time %.4f s, block-sparse products %.4f s (%d calls)%s%s\n",
                jr->n, occ, jr->grid, jr->active, jr->threads, jr->threads == 1 ? "" : "s", r->iterations,
                r->stop_reason, r->idem_err, r->trace_err, r->energy, jr->t_wall, r->t_ssc, r->products,
                j->out ? ", D written to " : "", j->out ? j->out : "");
  } else {
    ovl_fprintf(out,
                "purify: n=%" PRId64
                " %s grid %s (%d active, %d BLAS thread%s each): %d iterations (%d in float32), stopped at the "
                "%s, ||D^2-D||_F %.2e, %s %.2e, energy tr(DF) %.10f\n"
                "purify: time %.4f s, %s %.4f s (%d calls, %.2f GFLOP/s), symmetrization %.4f s%s%s\n",
                jr->n, occ, jr->grid, jr->active, jr->threads, jr->threads == 1 ? "" : "s", r->iterations,
                r->iter_single, r->stop_reason, r->idem_err, mcw ? "|tr D - round(tr D)|" : "|tr D - n_occ|",
                r->trace_err, r->energy, jr->t_wall,
                ovl_purify_uses_sq(j->po.method) ? "symmetric square" : "SymmSquareCube", r->t_ssc, r->products,
                r->ssc_gflops, r->t_symm, j->out ? ", D written to " : "", j->out ? j->out : "");
  }
  char grp[96] = "";
  if (j->po.sparse_block > 1) snprintf(grp, sizeof grp, " merged from the file's %d", jr->blocks_file);
  if (!isnan(j->po.sparse))
    fprintf(out,
            "purify: block-sparse, threshold %.1e, %d blocks%s: F %" PRId64 " blocks, D %" PRId64
            " blocks (%.2f %% of the entries); S^(-1/2) %d iterations %.4f s, Z F Z and Z D Z "
            "%.4f s; peak memory %.1f MiB a rank\n"
            "purify: the product's plan: %s (%s)\n",
            j->po.sparse, jr->blocks, grp, jr->blocks_f, jr->blocks_d, 100.0 * jr->fill_d, jr->invsqrt_iter,
            jr->t_invsqrt, jr->t_transform, (double)jr->rss_peak / 1048576.0, bsplan, jr->plan_why);
  if (check)
    fprintf(out, "check: ||D - D_eig||_F / ||D_eig||_F = %.2e, tr(D_eig F) = %.10f (dsyevd %.4f s on rank 0): %s\n",
            jr->ref.relerr, jr->ref.energy, jr->ref.t_eig, pass ? "PASS" : "FAIL");
  fflush(out);
  return OVL_OK;
}
