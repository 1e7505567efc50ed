/* HSUMMA against a serial product: every grid shape the rank count allows and
 * every I x J that tiles it, lookahead off and on, N_DUP 1..4, both back ends,
 * uneven sizes (n < P, M not a multiple of b, M beyond a block, k = 0); G = 1
 * and G = P against SUMMA (the same result bit for bit and the same
 * broadcasts, with and without lookahead); arrival order against in order on
 * every grid shape and I x J (G = P refused); bad plans refused on every
 * rank. */
#include <stdio.h>
#include <string.h>

#include "ovl/ovl.h"
#include "ovltest.h"

/* m, n, k, b, M */
static const int64_t k_cases[][5] = {{31, 37, 41, 3, 7}, {13, 5, 11, 2, 4},   {3, 2, 5, 1, 1},
                                     {19, 23, 29, 5, 5}, {40, 33, 29, 4, 40}, {8, 8, 0, 2, 4}};
#define NCASES    ((int)(sizeof k_cases / sizeof k_cases[0]))
#define NVARIANTS 16

/* Variant v of 16: lookahead (bit 0), N_DUP 1..4 (bits 1-2), back end (bit 3). */
static void set_variant(ovl_plan *p, int v) {
  p->lookahead = v & 1;
  p->ndup = 1 + (v >> 1) % 4;
  p->coll.backend = (v >> 3) & 1 ? OVL_BACKEND_OWN : OVL_BACKEND_MPI;
}

static void run_case(ovl_grid2d g, int gi, int gj, const int64_t *cs, int v) {
  int64_t m = cs[0], n = cs[1], k = cs[2];
  ovl_dmat A = NULL, B = NULL, C = NULL, C0 = NULL;
  T_OK(ovl_dmat_create(g, m, k, &A));
  T_OK(ovl_dmat_create(g, k, n, &B));
  T_OK(ovl_dmat_create(g, m, n, &C));
  T_OK(ovl_dmat_create(g, m, n, &C0));
  ovl_dmat_fill(A, OVL_FILL_RANDOM, 21);
  ovl_dmat_fill(B, OVL_FILL_RANDOM, 22);
  ovl_dmat_fill(C0, OVL_FILL_RANDOM, 23);
  ovl_dmat_copy(C, C0);
  ovl_plan pl = ovl_plan_gemm(OVL_ALGO_HSUMMA, cs[3]);
  pl.outer = cs[4], pl.groups_i = gi, pl.groups_j = gj;
  set_variant(&pl, v);
  ovl_kstats st;
  T_OK(ovl_hsumma(-0.75, A, B, 0.5, C, &pl, &st));
  double e = -1;
  ovl_err rc = ovl_verify_gemm(-0.75, A, B, 0.5, C0, C, OVL_VERIFY_EXACT, 1e-13, &e);
  int p, q;
  ovl_grid2d_dims(g, &p, &q);
  char ps[160];
  ovl_plan_str(&pl, ps, sizeof ps);
  T_CHECK(rc == OVL_OK, "grid %dx%d [%s] m=%lld n=%lld k=%lld: relerr %.3e", p, q, ps, (long long)m, (long long)n,
          (long long)k, e);
  ovl_dmat_destroy(&A);
  ovl_dmat_destroy(&B);
  ovl_dmat_destroy(&C);
  ovl_dmat_destroy(&C0);
}

/* G = 1 and G = P with M = b against SUMMA with the same plan otherwise. */
static void against_summa(ovl_grid2d g, int v) {
  int p, q;
  ovl_grid2d_dims(g, &p, &q);
  ovl_dmat A = NULL, B = NULL, C = NULL;
  T_OK(ovl_dmat_create(g, 40, 33, &A));
  T_OK(ovl_dmat_create(g, 33, 29, &B));
  T_OK(ovl_dmat_create(g, 40, 29, &C));
  ovl_dmat_fill(A, OVL_FILL_RANDOM, 1);
  ovl_dmat_fill(B, OVL_FILL_RANDOM, 2);
  ovl_plan ps = ovl_plan_gemm(OVL_ALGO_SUMMA, 4), ph = ovl_plan_gemm(OVL_ALGO_HSUMMA, 4);
  set_variant(&ps, v);
  set_variant(&ph, v);
  ovl_kstats ss, sh;
  T_OK(ovl_summa(1.0, A, B, 0.0, C, &ps, &ss));
  int64_t nloc = ovl_dmat_local_rows(C) * ovl_dmat_local_cols(C);
  double *ref = NULL;
  T_OK(ovl_malloc(sizeof(double) * (size_t)(nloc + 1), &ref));
  memcpy(ref, ovl_dmat_data(C), sizeof(double) * (size_t)nloc);
  int shapes[2][2] = {{1, 1}, {p, q}};
  for (int s = 0; s < 2; s++) {
    ph.groups_i = shapes[s][0], ph.groups_j = shapes[s][1];
    ovl_dmat_fill(C, OVL_FILL_ZERO, 0);
    T_OK(ovl_hsumma(1.0, A, B, 0.0, C, &ph, &sh));
    char str[160];
    ovl_plan_str(&ph, str, sizeof str);
    T_CHECK(memcmp(ref, ovl_dmat_data(C), sizeof(double) * (size_t)nloc) == 0, "grid %dx%d [%s]: differs from SUMMA", p,
            q, str);
    T_CHECK(sh.ncoll == ss.ncoll && sh.bytes == ss.bytes && sh.steps == ss.steps,
            "grid %dx%d [%s]: %lld broadcasts / %lld bytes / %lld steps, SUMMA %lld / %lld / %lld", p, q, str,
            (long long)sh.ncoll, (long long)sh.bytes, (long long)sh.steps, (long long)ss.ncoll, (long long)ss.bytes,
            (long long)ss.steps);
  }
  ovl_free(&ref);
  ovl_dmat_destroy(&A);
  ovl_dmat_destroy(&B);
  ovl_dmat_destroy(&C);
}

/* Arrival order (inner lanes multiplied as they complete) against the same
 * plan in order: the serial check, bit for bit with one lane (the same
 * products), and equal up to rounding with several (the sum in another
 * order); the same broadcasts, bytes and steps. Not with G = P (refused). */
static void arrival_case(ovl_grid2d g, int gi, int gj, const int64_t *cs, int v) {
  int64_t m = cs[0], n = cs[1], k = cs[2];
  int p, q;
  ovl_grid2d_dims(g, &p, &q);
  ovl_dmat A = NULL, B = NULL, C = NULL, C0 = NULL, Cr = NULL;
  T_OK(ovl_dmat_create(g, m, k, &A));
  T_OK(ovl_dmat_create(g, k, n, &B));
  T_OK(ovl_dmat_create(g, m, n, &C));
  T_OK(ovl_dmat_create(g, m, n, &C0));
  T_OK(ovl_dmat_create(g, m, n, &Cr));
  ovl_dmat_fill(A, OVL_FILL_RANDOM, 31);
  ovl_dmat_fill(B, OVL_FILL_RANDOM, 32);
  ovl_dmat_fill(C0, OVL_FILL_RANDOM, 33);
  ovl_plan pl = ovl_plan_gemm(OVL_ALGO_HSUMMA, cs[3]);
  pl.outer = cs[4], pl.groups_i = gi, pl.groups_j = gj;
  set_variant(&pl, v);
  ovl_kstats si, sa;
  ovl_dmat_copy(Cr, C0);
  T_OK(ovl_hsumma(0.5, A, B, -1.5, Cr, &pl, &si));
  pl.arrival = 1;
  ovl_dmat_copy(C, C0);
  T_OK(ovl_hsumma(0.5, A, B, -1.5, C, &pl, &sa));
  char ps[160];
  ovl_plan_str(&pl, ps, sizeof ps);
  double e = -1;
  ovl_err rc = ovl_verify_gemm(0.5, A, B, -1.5, C0, C, OVL_VERIFY_EXACT, 1e-13, &e);
  T_CHECK(rc == OVL_OK, "grid %dx%d [%s] m=%lld n=%lld k=%lld: relerr %.3e", p, q, ps, (long long)m, (long long)n,
          (long long)k, e);
  int64_t nloc = ovl_dmat_local_rows(C) * ovl_dmat_local_cols(C);
  const double *c = ovl_dmat_data(C), *r = ovl_dmat_data(Cr);
  double d[2] = {0, 0}; /* the largest difference and the largest element */
  for (int64_t x = 0; x < nloc; x++) {
    double dx = c[x] > r[x] ? c[x] - r[x] : r[x] - c[x], ax = r[x] < 0 ? -r[x] : r[x];
    if (dx > d[0]) d[0] = dx;
    if (ax > d[1]) d[1] = ax;
  }
  MPI_Allreduce(MPI_IN_PLACE, d, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  if (pl.ndup == 1)
    T_CHECK(d[0] == 0, "grid %dx%d [%s]: one lane in arrival order differs from in order by %.3e", p, q, ps, d[0]);
  else
    T_CHECK(d[0] <= 1e-13 * (d[1] > 1 ? d[1] : 1), "grid %dx%d [%s]: arrival order differs from in order by %.3e", p, q,
            ps, d[0]);
  T_CHECK(sa.ncoll == si.ncoll && sa.bytes == si.bytes && sa.steps == si.steps,
          "grid %dx%d [%s]: %lld broadcasts / %lld bytes / %lld steps, in order %lld / %lld / %lld", p, q, ps,
          (long long)sa.ncoll, (long long)sa.bytes, (long long)sa.steps, (long long)si.ncoll, (long long)si.bytes,
          (long long)si.steps);
  ovl_dmat_destroy(&A);
  ovl_dmat_destroy(&B);
  ovl_dmat_destroy(&C);
  ovl_dmat_destroy(&C0);
  ovl_dmat_destroy(&Cr);
}

/* Every I x J that tiles grid g but G = P, the variants in turn; with more
 * than one process, G = P with arrival order is refused on every rank. */
static void arrival_all(ovl_grid2d g, int *turn) {
  int p, q;
  ovl_grid2d_dims(g, &p, &q);
  for (int gi = 1; gi <= p; gi++)
    for (int gj = 1; gj <= q; gj++) {
      if (p % gi || q % gj || (gi == p && gj == q && p * q > 1)) continue;
      for (int c = 0; c < NCASES; c++) arrival_case(g, gi, gj, k_cases[c], (*turn)++ % NVARIANTS);
    }
  if (p * q == 1) return;
  ovl_dmat A = NULL;
  T_OK(ovl_dmat_create(g, 12, 12, &A));
  ovl_plan pl = ovl_plan_gemm(OVL_ALGO_HSUMMA, 4);
  pl.groups_i = p, pl.groups_j = q, pl.arrival = 1;
  T_ERR(ovl_hsumma(1.0, A, A, 0.0, A, &pl, NULL), OVL_ERR_ARG);
  T_CHECK(strstr(ovl_errmsg(), "--arrival-order acts on the broadcasts inside the groups") != NULL,
          "G = P arrival message: %s", ovl_errmsg());
  ovl_dmat_destroy(&A);
}

/* Bad plans: the same error on every rank, nothing posted. */
static void refusals(ovl_grid2d g) {
  int p, q;
  ovl_grid2d_dims(g, &p, &q);
  ovl_dmat A = NULL;
  T_OK(ovl_dmat_create(g, 12, 12, &A));
  ovl_plan pl = ovl_plan_gemm(OVL_ALGO_HSUMMA, 4);
  pl.outer = 2; /* M < b */
  T_ERR(ovl_hsumma(1.0, A, A, 0.0, A, &pl, NULL), OVL_ERR_ARG);
  T_CHECK(strstr(ovl_errmsg(), "outer block M = 2") != NULL, "M < b message: %s", ovl_errmsg());
  pl.outer = 0, pl.groups_i = p + 1; /* does not tile */
  T_ERR(ovl_hsumma(1.0, A, A, 0.0, A, &pl, NULL), OVL_ERR_ARG);
  pl.groups_i = 1, pl.lookahead = 1, pl.ndup = 0;
  T_ERR(ovl_hsumma(1.0, A, A, 0.0, A, &pl, NULL), OVL_ERR_ARG);
  ovl_dmat_destroy(&A);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int P;
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  ovl_grid2d g = NULL;
  T_OK(ovl_grid2d_create(MPI_COMM_WORLD, 0, 0, 0, &g));
  int p0, q0;
  ovl_grid2d_dims(g, &p0, &q0);
  /* the default grid: every I x J with all 16 variants, two cases each in
   * turn (every case meets lookahead off and on, both back ends and several
   * N_DUP) */
  for (int gi = 1; gi <= p0; gi++)
    for (int gj = 1; gj <= q0; gj++) {
      if (p0 % gi || q0 % gj) continue;
      for (int v = 0; v < NVARIANTS; v++)
        for (int c = 0; c < 2; c++) run_case(g, gi, gj, k_cases[(v + 3 * c) % NCASES], v);
    }
  for (int v = 0; v < NVARIANTS; v++) against_summa(g, v);
  refusals(g);
  ovl_grid2d_destroy(&g);
  /* arrival order on every grid shape */
  int turn = 0;
  for (int p = 1; p <= P; p++) {
    if (P % p) continue;
    T_OK(ovl_grid2d_create(MPI_COMM_WORLD, p, P / p, 0, &g));
    arrival_all(g, &turn);
    ovl_grid2d_destroy(&g);
  }
  /* every other grid shape: every I x J and case, the variants in turn */
  turn = 0;
  for (int p = 1; p <= P; p++) {
    if (P % p || p == p0) continue;
    T_OK(ovl_grid2d_create(MPI_COMM_WORLD, p, P / p, 0, &g));
    for (int gi = 1; gi <= p; gi++)
      for (int gj = 1; gj <= P / p; gj++) {
        if (p % gi || (P / p) % gj) continue;
        for (int c = 0; c < NCASES; c++) run_case(g, gi, gj, k_cases[c], turn++ % NVARIANTS);
      }
    for (int v = 0; v < NVARIANTS; v += 3) against_summa(g, v);
    ovl_grid2d_destroy(&g);
  }
  /* a grid with idle ranks */
  if (P >= 3) {
    T_OK(ovl_grid2d_create(MPI_COMM_WORLD, 1, 2, OVL_GRID_ALLOW_IDLE, &g));
    for (int v = 0; v < NVARIANTS; v += 5) run_case(g, 1, 2, k_cases[0], v);
    ovl_grid2d_destroy(&g);
  }
  T_CHECK(ovl_req_live() == 0, "leaked %lld requests", (long long)ovl_req_live());
  int rc = t_finish("test_hsumma");
  MPI_Finalize();
  return rc;
}
