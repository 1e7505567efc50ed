/* Block-sparse purification (ovl_purify_sparse) against the dense one
 * (ovl_purify, SP2) on a gapped banded Hamiltonian: a dimerised chain
 * (on-site energies +-0.6, hopping -1, a random symmetric perturbation within
 * the band) in uneven blocks of 1 to 5 orbitals, whose density matrix decays
 * exponentially. eps = 0: the dense result within 1e-12 (relative,
 * Frobenius); eps = 1e-8: the energy within 1e-6 per orbital, fewer blocks
 * than the dense pattern; SP2-ACC with HOMO/LUMO estimates: the same
 * density as SP2 with fewer products; bad input refused alike on every rank. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ovl/ovl.h"
#include "ovltest.h"

static int g_rank, g_size;

/* ||a - b||_F / ||b||_F of two global n x n arrays */
static double rel_diff(const double *a, const double *b, int64_t n) {
  double d2 = 0.0, b2 = 0.0;
  for (int64_t k = 0; k < n * n; k++) d2 += (a[k] - b[k]) * (a[k] - b[k]), b2 += b[k] * b[k];
  return b2 > 0 ? sqrt(d2 / b2) : sqrt(d2);
}

/* B as a global array on every rank (through a dense matrix on the grid of all ranks) */
static void gather_all(ovl_bsmat B, ovl_dmat W, double *out, int64_t n) {
  T_OK(ovl_bsmat_to_dense(B, W));
  T_OK(ovl_dmat_gather(W, out));
  MPI_Bcast(out, (int)(n * n), MPI_DOUBLE, 0, MPI_COMM_WORLD);
}

/* ovl_purify_sparse with opts.sparse = eps */
static ovl_err purify_eps(ovl_bsmat F, ovl_bsmat D, const ovl_purify_opts *o, double eps, ovl_purify_result *r) {
  ovl_purify_opts x = *o;
  x.sparse = eps;
  return ovl_purify_sparse(F, D, &x, r);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  /* uneven blocks of 1..5 orbitals, n about 150 */
  int bs[64], nblk = 0;
  int64_t n = 0;
  while (n < 150) bs[nblk] = 1 + (int)((t_urand((uint64_t)(7 * nblk + 3)) + 1.0) * 2.5), n += bs[nblk++];
  const int64_t nocc = n / 2;
  double *fg = t_chain(n);

  /* the dense reference: SP2 on rank 0 alone (a 1 x 1 x 1 grid over MPI_COMM_SELF), D broadcast */
  ovl_purify_opts o = ovl_purify_opts_default();
  o.method = OVL_PURIFY_SP2, o.nocc = nocc;
  ovl_purify_result rd, rs;
  double *dd = calloc((size_t)(n * n), sizeof(double)), *ds = calloc((size_t)(n * n), sizeof(double));
  if (g_rank == 0) {
    ovl_grid3d g3 = NULL;
    ovl_dmat F1 = NULL, D1 = NULL;
    T_OK(ovl_grid3d_create(MPI_COMM_SELF, 1, 1, 0, &g3));
    T_OK(ovl_dmat_create(ovl_grid3d_plane(g3), n, n, &F1));
    T_OK(ovl_dmat_create(ovl_grid3d_plane(g3), n, n, &D1));
    T_OK(ovl_dmat_scatter(F1, fg));
    T_OK(ovl_purify(g3, F1, D1, &o, &rd));
    ovl_purify_opts os = o;
    os.sparse = 1e-6; /* a threshold is for block-sparse matrices: refused by the dense purification */
    ovl_err src = ovl_purify(g3, F1, D1, &os, NULL);
    T_CHECK(src == OVL_ERR_ARG && strstr(ovl_errmsg(), "block-sparse"), "dense with sparse 1e-6: %s %s",
            ovl_err_name(src), ovl_errmsg());
    T_OK(ovl_dmat_gather(D1, dd));
    ovl_dmat_destroy(&F1);
    ovl_dmat_destroy(&D1);
    ovl_grid3d_destroy(&g3);
  }
  MPI_Bcast(dd, (int)(n * n), MPI_DOUBLE, 0, MPI_COMM_WORLD);
  MPI_Bcast(&rd.iterations, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Bcast(&rd.products, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Bcast(&rd.energy, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);

  /* the block-sparse runs on the 2D grid of all ranks */
  ovl_grid2d g = NULL;
  T_OK(ovl_grid2d_create(MPI_COMM_WORLD, 0, 0, 0, &g));
  ovl_dmat W = NULL;
  T_OK(ovl_dmat_create(g, n, n, &W));
  T_OK(ovl_dmat_scatter(W, fg));
  ovl_bsmat Fs = NULL, D = NULL;
  T_OK(ovl_bsmat_create(g, nblk, bs, 2024, &Fs));
  T_OK(ovl_bsmat_create_like(Fs, &D));
  T_OK(ovl_bsmat_from_dense(W, 0.0, Fs));

  /* eps = 0: the dense iteration's result */
  T_OK(purify_eps(Fs, D, &o, 0.0, &rs));
  gather_all(D, W, ds, n);
  double e0 = rel_diff(ds, dd, n);
  T_CHECK(e0 <= 1e-12, "eps = 0: ||D_sparse - D_dense|| / ||D_dense|| = %.3e", e0);
  T_CHECK(fabs(rs.energy - rd.energy) <= 1e-10 * fabs(rd.energy), "eps = 0: energy %.15g vs dense %.15g", rs.energy,
          rd.energy);
  /* both D0 from Lanczos-refined bounds (ovl_lanczos_bounds on the dense F, ovl_bsmat_bounds on the sparse) */
  T_CHECK(rs.iterations >= rd.iterations && rs.iterations <= rd.iterations + 4, "eps = 0: %d iterations, dense %d",
          rs.iterations, rd.iterations);
  T_CHECK(rs.trace_err <= 1e-8, "eps = 0: |tr D - n_occ| = %.3e", rs.trace_err);
  const ovl_purify_result r0 = rs;

  /* eps = 1e-8: the energy within 1e-6 per orbital, a sparser D */
  int64_t blocks_full = 0, blocks_eps = 0;
  T_OK(ovl_bsmat_count(D, &blocks_full, NULL, NULL));
  T_OK(purify_eps(Fs, D, &o, 1e-8, &rs));
  T_OK(ovl_bsmat_count(D, &blocks_eps, NULL, NULL));
  T_CHECK(fabs(rs.energy - rd.energy) <= 1e-6 * (double)n, "eps = 1e-8: energy %.12g vs dense %.12g", rs.energy,
          rd.energy);
  T_CHECK(blocks_eps < blocks_full, "eps = 1e-8: %lld blocks, not fewer than eps = 0's %lld", (long long)blocks_eps,
          (long long)blocks_full);
  T_CHECK(strcmp(rs.stop_reason, "filtering floor") == 0 || strcmp(rs.stop_reason, "rounding floor") == 0,
          "eps = 1e-8: stop reason '%s'", rs.stop_reason);

  /* SP2-ACC with the HOMO/LUMO estimates from the dense eigenvalues' bracket: the same D, fewer products */
  ovl_purify_opts oa = o;
  oa.method = OVL_PURIFY_SP2ACC, oa.homo = -0.5, oa.lumo = 0.5;
  ovl_purify_result ra;
  T_OK(purify_eps(Fs, D, &oa, 0.0, &ra));
  gather_all(D, W, ds, n);
  double ea = rel_diff(ds, dd, n);
  T_CHECK(ea <= 1e-10, "sp2acc: ||D - D_sp2|| / ||D_sp2|| = %.3e", ea);
  /* the products' sums run in arrival order, so their rounding (and a trace test near its slack) varies from run
   * to run: a restart from D0 after a check costs a few products, never the answer */
  T_CHECK(ra.products <= r0.products + 4 && ra.accelerated > 0,
          "sp2acc: %d products (%d scaled), sp2 %d (both from Gershgorin bounds)", ra.products, ra.accelerated,
          r0.products);
  /* TRS4: the same density (eps = 0 to rounding; 1e-8 within the filtering), two products a step */
  ovl_purify_opts ot = o;
  ot.method = OVL_PURIFY_TRS4;
  ovl_purify_result rt, rt8;
  T_OK(purify_eps(Fs, D, &ot, 0.0, &rt));
  gather_all(D, W, ds, n);
  double et = rel_diff(ds, dd, n);
  T_CHECK(et <= 1e-10 && rt.trace_err <= 1e-8, "trs4: ||D - D_dense|| / ||D_dense|| = %.3e, |tr D - n_occ| %.3e", et,
          rt.trace_err);
  T_CHECK(rt.products >= rt.iterations && rt.products <= 2 * rt.iterations, "trs4: %d products in %d iterations",
          rt.products, rt.iterations);
  T_OK(purify_eps(Fs, D, &ot, 1e-8, &rt8));
  T_CHECK(fabs(rt8.energy - rd.energy) <= 1e-6 * (double)n, "trs4 eps = 1e-8: energy %.12g vs dense %.12g", rt8.energy,
          rd.energy);
  if (g_rank == 0)
    printf("# n %lld, %d blocks: sp2 %d products (dense %d), sp2acc %d (fallback after %d), trs4 %d (%d iterations); "
           "eps 1e-8: %d products, %lld of %lld blocks\n",
           (long long)n, nblk, r0.products, rd.products, ra.products, ra.fallback, rt.products, rt.iterations,
           rs.products, (long long)blocks_eps, (long long)blocks_full);

  /* the inverse square root of an overlap S = I + a banded part: Z S Z = I, Z symmetric */
  double *sg = calloc((size_t)(n * n), sizeof(double)), *zg = calloc((size_t)(n * n), sizeof(double));
  for (int64_t i = 0; i < n; i++) {
    sg[i + i * n] = 1.0;
    if (i + 1 < n) sg[i + (i + 1) * n] = sg[i + 1 + i * n] = 0.3 + 0.05 * t_urand((uint64_t)(3 * n + i));
    if (i + 2 < n) sg[i + (i + 2) * n] = sg[i + 2 + i * n] = 0.05 * t_urand((uint64_t)(4 * n + i));
  }
  ovl_bsmat S = NULL, Z = NULL;
  T_OK(ovl_bsmat_create_like(Fs, &S));
  T_OK(ovl_bsmat_create_like(Fs, &Z));
  T_OK(ovl_dmat_scatter(W, sg));
  T_OK(ovl_bsmat_from_dense(W, 0.0, S));
  ovl_bsmat_invsqrt_info zi;
  /* float64, and Z's arithmetic float32 (its last products in float64): Z S Z = I to float64's rounding both */
  for (int ar = 0; ar < 2; ar++) {
    T_OK(ovl_bsmat_set_arith(Z, ar ? OVL_BSMAT_FLOAT32 : OVL_BSMAT_FLOAT64));
    T_OK(ovl_bsmat_invsqrt(S, 0.0, 2, 100, Z, &zi));
    gather_all(Z, W, zg, n);
    double zsz = 0.0, asym = 0.0;
    for (int64_t j = 0; j < n; j++)
      for (int64_t i = 0; i < n; i++) {
        double v = 0.0; /* (Z S Z)(i, j) from the banded S */
        for (int64_t k = 0; k < n; k++) {
          double sz = 0.0;
          for (int64_t l = k - 2 < 0 ? 0 : k - 2; l <= k + 2 && l < n; l++) sz += sg[k + l * n] * zg[l + j * n];
          v += zg[i + k * n] * sz;
        }
        zsz = fmax(zsz, fabs(v - (i == j ? 1.0 : 0.0)));
        asym = fmax(asym, fabs(zg[i + j * n] - zg[j + i * n]));
      }
    T_CHECK(zsz <= 1e-11 && asym <= 1e-12,
            "invsqrt (arith %d): max |Z S Z - I| = %.3e, max |Z - Z^T| = %.3e (%d iterations)", ar, zsz, asym,
            zi.iterations);
    T_CHECK(zi.iterations >= 3 && zi.iterations <= 40 && zi.products == 3 * zi.iterations - 4,
            "invsqrt: %d iterations, %d products", zi.iterations, zi.products);
  }
  T_OK(ovl_bsmat_set_arith(Z, OVL_BSMAT_FLOAT64));
  ovl_err zr = ovl_bsmat_invsqrt(S, -1.0, 2, 100, Z, NULL);
  T_CHECK(zr == OVL_ERR_ARG && strstr(ovl_errmsg(), "threshold"), "invsqrt eps < 0: %s %s", ovl_err_name(zr),
          ovl_errmsg());
  zr = ovl_bsmat_invsqrt(S, 0.0, 2, 100, S, NULL);
  T_CHECK(zr == OVL_ERR_ARG, "invsqrt Z = S: %s", ovl_err_name(zr));
  T_OK(ovl_bsmat_scale(S, -1.0)); /* negative definite: refused */
  zr = ovl_bsmat_invsqrt(S, 0.0, 2, 100, Z, NULL);
  T_CHECK(zr == OVL_ERR_NUMERIC, "invsqrt of -S: %s %s", ovl_err_name(zr), ovl_errmsg());
  ovl_bsmat_destroy(&S);
  ovl_bsmat_destroy(&Z);
  free(sg);
  free(zg);

  /* bad input: the same error on every rank */
  ovl_purify_opts ob = o;
  ob.method = OVL_PURIFY_CANONICAL;
  ovl_err rc = purify_eps(Fs, D, &ob, 0.0, NULL);
  T_CHECK(rc == OVL_ERR_UNSUPPORTED && strstr(ovl_errmsg(), "sp2, sp2acc and trs4"), "canonical: %s %s",
          ovl_err_name(rc), ovl_errmsg());
  rc = purify_eps(Fs, D, &o, -1.0, NULL);
  T_CHECK(rc == OVL_ERR_ARG && strstr(ovl_errmsg(), "threshold"), "eps < 0: %s %s", ovl_err_name(rc), ovl_errmsg());
  if (g_size > 1) {
    rc = purify_eps(Fs, D, &o, g_rank == 0 ? 1e-8 : 0.0, NULL);
    T_CHECK(rc == OVL_ERR_ARG && strstr(ovl_errmsg(), "differs between ranks"), "eps 1e-8 on rank 0 only: %s %s",
            ovl_err_name(rc), ovl_errmsg());
  }
  ob = o, ob.nocc = n + 1;
  rc = purify_eps(Fs, D, &ob, 0.0, NULL);
  T_CHECK(rc == OVL_ERR_ARG && strstr(ovl_errmsg(), "occupied"), "nocc > n: %s %s", ovl_err_name(rc), ovl_errmsg());
  /* mixed precision: float32 products until float32's floor, then float64: the float64 result */
  ob = o, ob.prec = OVL_PURIFY_PREC_MIXED;
  ovl_purify_result rm;
  T_OK(purify_eps(Fs, D, &ob, 0.0, &rm));
  gather_all(D, W, ds, n);
  T_CHECK(rel_diff(ds, dd, n) <= 1e-10 && rm.iter_single > 0 && rm.iter_single < rm.iterations,
          "mixed at eps = 0: ||D - D_dense|| / ||D_dense|| = %.3e, %d of %d iterations in float32", rel_diff(ds, dd, n),
          rm.iter_single, rm.iterations);
  T_CHECK(ovl_bsmat_get_arith(D) == OVL_BSMAT_FLOAT64, "mixed: D's arithmetic not restored");
  rc = purify_eps(Fs, NULL, &o, 0.0, NULL);
  T_CHECK(rc == OVL_ERR_ARG, "D NULL: %s", ovl_err_name(rc));

  ovl_bsmat_destroy(&Fs);
  ovl_bsmat_destroy(&D);
  ovl_dmat_destroy(&W);
  ovl_grid2d_destroy(&g);
  free(fg);
  free(dd);
  free(ds);
  int rc_all = t_finish("test_purify_sparse");
  MPI_Finalize();
  return rc_all;
}
