/* A plan timed: the multiplication benchmark of `ovl gemm`. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ovl/bench.h"
#include "ovl/record.h"
#include "ovl/trace.h"

ovl_plan_bench_params ovl_plan_bench_default(const ovl_plan *plan, int64_t m, int64_t n, int64_t k) {
  ovl_plan_bench_params p;
  memset(&p, 0, sizeof p);
  p.comm = MPI_COMM_WORLD, p.plan = *plan, p.m = m, p.n = n, p.k = k;
  p.transa = p.transb = 'N', p.alpha = 1.0, p.beta = 0.0, p.seed = 42, p.iters = 5, p.warmup = 1;
  p.check_mode = OVL_VERIFY_AUTO;
  return p;
}

static ovl_err check_params(const ovl_plan_bench_params *p) {
  OVL_CHECK(p->m >= 0 && p->n >= 0 && p->k >= 0, OVL_ERR_ARG, "gemm: sizes must be >= 0");
  OVL_CHECK(p->iters >= 1 && p->iters <= 1000 && p->warmup >= 0, OVL_ERR_ARG,
            "gemm: 1 to 1000 timed repetitions and a warm-up >= 0, got %d and %d", p->iters, p->warmup);
  OVL_CHECK((p->transa == 'N' || p->transa == 'T') && (p->transb == 'N' || p->transb == 'T'), OVL_ERR_ARG,
            "gemm: op(A) and op(B) are 'N' or 'T'");
  /* an operand of more than 2^60 bytes (1 EiB) cannot be held anywhere, and
   * the memory estimate (up to 7 such blocks) must not overflow int64 */
  const int64_t dim[3][2] = {{p->m, p->k}, {p->k, p->n}, {p->m, p->n}};
  for (int x = 0; x < 3; x++)
    if (dim[x][1] > 0 && dim[x][0] > ((int64_t)1 << 57) / dim[x][1])
      return ovl_err_set(OVL_ERR_NOMEM, "a %" PRId64 " x %" PRId64 " matrix of doubles would take more than 2^60 bytes",
                         dim[x][0], dim[x][1]);
  return OVL_OK;
}

ovl_err ovl_plan_bench(const ovl_plan_bench_params *p, ovl_plan_bench_result *r) {
  OVL_TRY(ovl_check_ptr(p, "ovl_plan_bench", "p"));
  OVL_TRY(ovl_check_ptr(r, "ovl_plan_bench", "r"));
  OVL_TRY(ovl_check_comm(p->comm, "ovl_plan_bench"));
  memset(r, 0, sizeof *r);
  r->relerr = r->tol = NAN;
  MPI_Comm comm = p->comm;
  OVL_MPI(MPI_Comm_size(comm, &r->ranks));
  OVL_TRY(ovl_err_agree(comm, check_params(p)));
  const ovl_plan *plan = &p->plan;
  int64_t m = p->m, n = p->n, k = p->k;
  ovl_grid2d g = NULL;
  ovl_grid3d g3 = NULL;
  OVL_TRY(ovl_plan_grids(comm, plan, p->allow_idle ? OVL_GRID_ALLOW_IDLE : 0, &g, &g3));
  int plane0 = 1, gp = 1, gq = 1, gc = 1;
  if (g3) {
    int gi, gj, gk;
    ovl_grid3d_dims(g3, &gp, &gc), gq = gp;
    ovl_grid3d_coords(g3, &gi, &gj, &gk);
    plane0 = gk == 0;
    snprintf(r->grid, sizeof r->grid, "%dx%dx%d", gp, gp, gc);
  } else {
    ovl_grid2d_dims(g, &gp, &gq);
    snprintf(r->grid, sizeof r->grid, "%dx%d", gp, gq);
  }
  int active = ovl_grid2d_active(g) && (!g3 || ovl_grid3d_active(g3));
  r->active = active;
  MPI_Allreduce(MPI_IN_PLACE, &r->active, 1, MPI_INT, MPI_SUM, comm);
  /* memory: ask before allocating */
  int64_t mem = ovl_mm_memory(plan, p->transa, p->transb, m, n, k, gp, gq, gc);
  if (p->beta != 0.0) mem += ovl_dmat_memory(m, n, gp, gq); /* C0 */
  r->mem_estimate = mem;
  ovl_err rc = ovl_check_memory(comm, mem, p->mem_limit);
  /* operands (on every plane for 3D/2.5D: planes k > 0 are workspace) */
  int tA = p->transa == 'T', tB = p->transb == 'T';
  ovl_dmat A = NULL, B = NULL, C = NULL, C0 = NULL;
  if (!rc) rc = ovl_dmat_create(g, tA ? k : m, tA ? m : k, &A);
  if (!rc) rc = ovl_dmat_create(g, tB ? n : k, tB ? k : n, &B);
  if (!rc) rc = ovl_dmat_create(g, m, n, &C);
  if (!rc && p->beta != 0.0) rc = ovl_dmat_create(g, m, n, &C0);
  if ((rc = ovl_err_agree(comm, rc)) == OVL_OK) {
    ovl_dmat_fill(A, OVL_FILL_RANDOM, p->seed);
    ovl_dmat_fill(B, OVL_FILL_RANDOM, p->seed + 1);
    if (C0) ovl_dmat_fill(C0, OVL_FILL_RANDOM, p->seed + 2);
  }
  double times[1000] = {0};
  if (!rc && p->trace) rc = ovl_trace_start(comm, (int64_t)1 << 20);
  ovl_kstats ks, acc;
  memset(&acc, 0, sizeof acc);
  for (int it = 0; !rc && it < p->warmup + p->iters; it++) {
    if (g3 && !plane0) { /* planes k > 0 hold workspace: refill (untimed) */
      ovl_dmat_fill(A, OVL_FILL_RANDOM, p->seed);
      ovl_dmat_fill(B, OVL_FILL_RANDOM, p->seed + 1);
    }
    if (C0) ovl_dmat_copy(C, C0);
    MPI_Barrier(comm);
    double t0 = ovl_time();
    memset(&ks, 0, sizeof ks);
    rc = ovl_gemm(p->transa, p->transb, p->alpha, A, B, p->beta, C, plan, g3, &ks);
    double t = ovl_time() - t0;
    if (p->trace && it + 1 == p->warmup) ovl_trace_write(NULL), ovl_trace_start(comm, (int64_t)1 << 20);
    if (it >= p->warmup) times[it - p->warmup] = t, acc.t_comm += ks.t_comm, acc.t_comp += ks.t_comp;
  }
  if (p->trace && ovl_trace_active()) { /* a failed run writes no trace */
    ovl_err trc = ovl_trace_write(rc == OVL_OK ? p->trace : NULL);
    if (!rc) rc = trc;
  }
  if (!rc && p->check) {
    double tol = p->tol > 0 ? p->tol : 16.0 * (double)(k > 1 ? k : 1) * 2.220446049250313e-16, relerr = 0;
    ovl_err vrc = OVL_OK;
    if (!g3 || (plane0 && active)) { /* the reference uses op(A) and op(B) explicitly */
      ovl_dmat Ar = A, Br = B;
      if (tA) ovl_dmat_create(g, m, k, &Ar), ovl_dmat_transpose(A, Ar);
      if (tB) ovl_dmat_create(g, k, n, &Br), ovl_dmat_transpose(B, Br);
      vrc = ovl_verify_gemm(p->alpha, Ar, Br, p->beta, C0, C, p->check_mode, tol, &relerr);
      if (tA) ovl_dmat_destroy(&Ar);
      if (tB) ovl_dmat_destroy(&Br);
    }
    if (g3) { /* plane 0 found the verdict; everyone learns it */
      vrc = ovl_err_agree(comm, vrc);
      MPI_Allreduce(MPI_IN_PLACE, &relerr, 1, MPI_DOUBLE, MPI_MAX, comm);
    }
    if (vrc != OVL_OK && vrc != OVL_ERR_NUMERIC) rc = vrc;
    r->checked = 1, r->passed = vrc == OVL_OK, r->relerr = relerr, r->tol = tol;
  }
  if (!rc) {
    ovl_stats_max_over_ranks(comm, times, p->iters, &r->st);
    double cc[2] = {acc.t_comm / p->iters, acc.t_comp / p->iters};
    MPI_Allreduce(MPI_IN_PLACE, cc, 2, MPI_DOUBLE, MPI_MAX, comm);
    r->t_comm = cc[0], r->t_comp = cc[1];
    double flops = 2.0 * (double)m * (double)n * (double)k;
    r->gflops_median = r->st.median > 0 ? flops / r->st.median * 1e-9 : NAN;
    r->gflops_best = r->st.min > 0 ? flops / r->st.min * 1e-9 : NAN;
  }
  ovl_dmat_destroy(&A), ovl_dmat_destroy(&B), ovl_dmat_destroy(&C), ovl_dmat_destroy(&C0);
  if (g3) ovl_grid3d_destroy(&g3);
  else ovl_grid2d_destroy(&g);
  return rc;
}

ovl_err ovl_plan_bench_print(FILE *out, const ovl_plan_bench_params *p, const ovl_plan_bench_result *r,
                             double blas_gflops, const ovl_bench_print_opts *po) {
  OVL_TRY(ovl_check_ptr(out, "ovl_plan_bench_print", "out"));
  OVL_TRY(ovl_check_ptr(p, "ovl_plan_bench_print", "p"));
  OVL_TRY(ovl_check_ptr(r, "ovl_plan_bench_print", "r"));
  if (!out || !p || !r || !po) return ovl_err_set(OVL_ERR_ARG, "ovl_plan_bench_print: a NULL argument");
  char planstr[192], mpi[MPI_MAX_LIBRARY_VERSION_STRING], ta[2] = {p->transa, 0}, tb[2] = {p->transb, 0};
  OVL_TRY(ovl_mpi_library(mpi, sizeof mpi));
  ovl_plan_str(&p->plan, planstr, sizeof planstr);
  const char *verdict = !p->check ? "not checked" : (r->passed ? "PASS" : "FAIL"), *an = ovl_algo_name(p->plan.algo);
  if (po->json) {
    ovl_record *o = NULL;
    OVL_TRY(ovl_record_create("gemm", &o));
    ovl_record_set_str(o, "algo", an), ovl_record_set_int(o, "m", p->m), ovl_record_set_int(o, "n", p->n);
    ovl_record_set_int(o, "k", p->k), ovl_record_set_str(o, "transa", ta), ovl_record_set_str(o, "transb", tb);
    ovl_record_set_int(o, "ranks", r->ranks), ovl_record_set_int(o, "active", r->active);
    ovl_record_set_str(o, "grid", r->grid), ovl_record_set_str(o, "plan", planstr);
    ovl_record_set_int(o, "iterations", p->iters), ovl_record_set_num(o, "t_min", r->st.min);
    ovl_record_set_num(o, "t_median", r->st.median), ovl_record_set_num(o, "t_max", r->st.max);
    ovl_record_set_num(o, "gflops_median", r->gflops_median), ovl_record_set_num(o, "gflops_best", r->gflops_best);
    ovl_record_set_num(o, "t_comm", r->t_comm), ovl_record_set_num(o, "t_comp", r->t_comp);
    ovl_record_set_num(o, "local_dgemm_gflops", blas_gflops), ovl_record_set_str(o, "check", verdict);
    ovl_record_set_num(o, "relerr", r->relerr), ovl_record_set_int(o, "mem_estimate", r->mem_estimate);
    ovl_err rc = ovl_record_set_str(o, "mpi", mpi);
    if (!rc) rc = ovl_record_print(o, out);
    ovl_record_destroy(&o);
    fflush(out);
    return rc;
  }
  if (po->header)
    ovl_fprintf(out,
                "# ovl gemm: m=%" PRId64 " n=%" PRId64 " k=%" PRId64 " op=%s%s, grid %s (%d of %d ranks active)\n"
                "# plan: %s\n# memory: %.1f MiB per rank (estimate)\n# MPI: %s; local dgemm %.1f GFLOP/s per rank\n"
                "# time per repetition = MAX over ranks; %d warm-up + %d timed repetitions\n",
                p->m, p->n, p->k, ta, tb, r->grid, r->active, r->ranks, planstr, (double)r->mem_estimate / 1048576.0,
                mpi, isnan(blas_gflops) ? 0.0 : blas_gflops, p->warmup, p->iters);
  fprintf(out, "# %-8s %10s %10s %10s %12s %12s %10s %10s %s\n", "algo", "t_min(s)", "t_med(s)", "t_max(s)",
          "GFLOP/s_med", "GFLOP/s_best", "comm(s)", "comp(s)", "check");
  fprintf(out, "  %-8s %10.4e %10.4e %10.4e %12.2f %12.2f %10.3e %10.3e %s", an, r->st.min, r->st.median, r->st.max,
          r->gflops_median, r->gflops_best, r->t_comm, r->t_comp, verdict);
  if (p->check) fprintf(out, " (relerr %.2e, tol %.2e)", r->relerr, r->tol);
  fprintf(out, "\n");
  fflush(out);
  return OVL_OK;
}
