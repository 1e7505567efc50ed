/* models (serial): the Hockney fit recovers known alpha and beta, and the
 * overlap measures match hand calculations. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ovl/model.h"
#include "ovl/ovl.h"
#include "ovltest.h"

static int close_rel(double got, double want, double tol) { return fabs(got - want) <= tol * fabs(want); }

/* Deterministic uniform noise in [-1, 1) (xorshift64*; seeded). */
static double noise(uint64_t *s) {
  *s ^= *s >> 12, *s ^= *s << 25, *s ^= *s >> 27;
  uint64_t r = *s * 2685821657736338717ULL;
  return (double)(r >> 11) / 4503599627370496.0 - 1.0;
}

static void test_hockney_exact(void) {
  /* t = 3 us + s / (4 GB/s): alpha = 3e-6 s, beta = 2.5e-10 s/B.
   * N_half = alpha / beta = 3e-6 / 2.5e-10 = 12000 B, where the model bandwidth
   * 12000 / (3e-6 + 12000 * 2.5e-10) = 12000 / 6e-6 = 2e9 B/s is half of 4e9. */
  const double a = 3e-6, b = 2.5e-10;
  double s[27], t[27], one[27];
  for (int k = 0; k < 27; k++) s[k] = (double)(1 << k), t[k] = a + b * s[k], one[k] = 1.0;
  double fa = 0, fb = 0;
  T_OK(ovl_hockney_fit(s, t, 27, &fa, &fb));
  T_CHECK(close_rel(fa, a, 1e-9) && close_rel(fb, b, 1e-12), "OLS alpha %.12e beta %.12e", fa, fb);
  T_OK(ovl_hockney_fit_weighted(s, t, NULL, 27, &fa, &fb));
  T_CHECK(close_rel(fa, a, 1e-9) && close_rel(fb, b, 1e-12), "relative alpha %.12e beta %.12e", fa, fb);
  T_OK(ovl_hockney_fit_weighted(s, t, one, 27, &fa, &fb));
  T_CHECK(close_rel(fa, a, 1e-9) && close_rel(fb, b, 1e-12), "unit weights alpha %.12e beta %.12e", fa, fb);
  T_CHECK(close_rel(ovl_hockney_nhalf(a, b), 12000.0, 1e-12), "N_half %g", ovl_hockney_nhalf(a, b));
  T_CHECK(close_rel(ovl_hockney_bw(a, b, 12000.0), 2e9, 1e-12), "bw at N_half %g", ovl_hockney_bw(a, b, 12000.0));
  T_CHECK(close_rel(ovl_hockney_time(a, b, 1e6), 3e-6 + 2.5e-4, 1e-12), "t(1 MB)");
  /* two points determine the line: (1000, 4 us) and (3000, 8 us) -> beta = 4 us / 2000 B = 2 ns/B, alpha = 2 us */
  double s2[2] = {1000, 3000}, t2[2] = {4e-6, 8e-6};
  T_OK(ovl_hockney_fit(s2, t2, 2, &fa, &fb));
  T_CHECK(close_rel(fa, 2e-6, 1e-12) && close_rel(fb, 2e-9, 1e-12), "two points: alpha %g beta %g", fa, fb);
}

static void test_hockney_noise(void) {
  /* +-2% multiplicative noise, seeded: the relative fit gets both parameters
   * within a few percent; the ordinary fit, dominated by the large sizes, gets
   * beta within the noise level (3%; its alpha is not meaningful: 2% of 17 ms is 100x alpha). */
  const double a = 3e-6, b = 2.5e-10;
  double s[27], t[27];
  uint64_t seed = 20190520;
  for (int rep = 0; rep < 5; rep++) {
    for (int k = 0; k < 27; k++) s[k] = (double)(1 << k), t[k] = (a + b * s[k]) * (1.0 + 0.02 * noise(&seed));
    double fa = 0, fb = 0;
    T_OK(ovl_hockney_fit_weighted(s, t, NULL, 27, &fa, &fb));
    T_CHECK(close_rel(fa, a, 0.05) && close_rel(fb, b, 0.05), "noisy relative fit %d: alpha %g beta %g", rep, fa, fb);
    T_OK(ovl_hockney_fit(s, t, 27, &fa, &fb));
    T_CHECK(close_rel(fb, b, 0.03), "noisy OLS fit %d: beta %g", rep, fb);
  }
}

static void test_hockney_errors(void) {
  double s[3] = {8, 8, 8}, t[3] = {1e-6, 2e-6, 3e-6}, w[3] = {1, 0, 1}, a, b;
  T_ERR(ovl_hockney_fit(s, t, 1, &a, &b), OVL_ERR_ARG);
  T_ERR(ovl_hockney_fit(s, t, 3, &a, &b), OVL_ERR_ARG); /* one distinct size */
  T_ERR(ovl_hockney_fit(NULL, t, 3, &a, &b), OVL_ERR_ARG);
  double s2[3] = {8, 16, 32}, tn[3] = {1e-6, NAN, 3e-6}, tz[3] = {0, 1e-6, 2e-6};
  T_ERR(ovl_hockney_fit(s2, tn, 3, &a, &b), OVL_ERR_ARG);
  T_ERR(ovl_hockney_fit_weighted(s2, t, w, 3, &a, &b), OVL_ERR_ARG);     /* zero weight */
  T_ERR(ovl_hockney_fit_weighted(s2, tz, NULL, 3, &a, &b), OVL_ERR_ARG); /* relative weight of t = 0 */
  T_OK(ovl_hockney_fit(s2, tz, 3, &a, &b));                              /* fine without weights */
}

static void test_overlap(void) {
  /* OSU: t_pure 100 us, computation 105 us of which 5 us in MPI_Test, overall 130 us.
   * Computation without tests = 105 - 5 = 100 us; overall exceeds it by 30 us = 30% of
   * t_pure: overlap = 100 - 100 * (130 - (105 - 5)) / 100 = 100 - 30 = 70%. */
  T_CHECK(fabs(ovl_overlap_osu(100e-6, 130e-6, 105e-6, 5e-6) - 70.0) < 1e-9, "osu 70%%: %g",
          ovl_overlap_osu(100e-6, 130e-6, 105e-6, 5e-6));
  /* No overlap: overall = compute + pure = 200 -> 100 - 100 * 100 / 100 = 0. */
  T_CHECK(fabs(ovl_overlap_osu(100e-6, 200e-6, 100e-6, 0)) < 1e-9, "osu none");
  /* Worse than serial: 100 - 100 * 150 / 100 = -50 -> clamped to 0. */
  T_CHECK(ovl_overlap_osu(100e-6, 250e-6, 100e-6, 0) == 0.0, "osu clamped at 0");
  /* Perfect: overall = compute - test = 100 -> 100%. */
  T_CHECK(fabs(ovl_overlap_osu(100e-6, 100e-6, 102e-6, 2e-6) - 100.0) < 1e-9, "osu perfect");
  /* Half: t_pure 2 ms, compute 2 ms, overall 3 ms -> 100 - 100 * 1 / 2 = 50%. */
  T_CHECK(fabs(ovl_overlap_osu(2e-3, 3e-3, 2e-3, 0) - 50.0) < 1e-9, "osu 50%%");
  T_CHECK(ovl_overlap_osu(0, 1, 1, 0) == 0.0, "osu t_pure = 0");

  /* IMB: t_pure 100, t_CPU 80, t_ovrl 120 us: (100 + 80 - 120) / min(100, 80) = 60 / 80 = 0.75 -> 75%. */
  T_CHECK(fabs(ovl_overlap_imb(100e-6, 80e-6, 120e-6) - 75.0) < 1e-9, "imb 75%%: %g",
          ovl_overlap_imb(100e-6, 80e-6, 120e-6));
  /* Perfect: t_ovrl = max(100, 80) = 100: 80 / 80 = 1 -> 100%. */
  T_CHECK(fabs(ovl_overlap_imb(100e-6, 80e-6, 100e-6) - 100.0) < 1e-9, "imb perfect");
  /* None: t_ovrl = 100 + 80 = 180 -> 0%; slower than serial (200) -> clamped 0%. */
  T_CHECK(fabs(ovl_overlap_imb(100e-6, 80e-6, 180e-6)) < 1e-9, "imb none");
  T_CHECK(ovl_overlap_imb(100e-6, 80e-6, 200e-6) == 0.0, "imb clamped at 0");
  /* Faster than the longer of the two (90 < 100): 90 / 80 > 1 -> clamped 100%. */
  T_CHECK(ovl_overlap_imb(100e-6, 80e-6, 90e-6) == 100.0, "imb clamped at 100");
  /* The two definitions differ: with t_pure 100, compute 50, overall 120 (no tests),
   * OSU: 100 - 100 * (120 - 50) / 100 = 30%; IMB: (100 + 50 - 120) / 50 = 60%. */
  T_CHECK(fabs(ovl_overlap_osu(100e-6, 120e-6, 50e-6, 0) - 30.0) < 1e-9, "osu 30%%");
  T_CHECK(fabs(ovl_overlap_imb(100e-6, 50e-6, 120e-6) - 60.0) < 1e-9, "imb 60%%");
  T_CHECK(ovl_overlap_imb(0, 1, 1) == 0.0, "imb t_pure = 0");

  /* NBC-Eff: 3.0 ms one after the other, 2.4 ms overlapped -> 3.0 / 2.4 = 1.25 (pays);
   * 2.0 vs 2.5 ms -> 0.8 (overlap costs). */
  T_CHECK(fabs(ovl_nbc_eff_speedup(3.0e-3, 2.4e-3) - 1.25) < 1e-12, "nbc-eff 1.25");
  T_CHECK(fabs(ovl_nbc_eff_speedup(2.0e-3, 2.5e-3) - 0.8) < 1e-12, "nbc-eff 0.8");
  T_CHECK(ovl_nbc_eff_speedup(1, 0) == 0.0, "nbc-eff t_ovl = 0");

  /* Effective bandwidth: 1 MiB over p = 4 in 1 ms: 2 * 3 * 1048576 / 4 / 1e-3 = 1.572864e9 B/s. */
  T_CHECK(fabs(ovl_coll_eff_bw(1048576.0, 4, 1e-3) - 1.572864e9) < 1e-3, "eff bw %g",
          ovl_coll_eff_bw(1048576.0, 4, 1e-3));
  /* p = 2: 2 * 1 * n / 2 = n: 1e6 B in 1 ms = 1e9 B/s; p = 1 moves nothing. */
  T_CHECK(fabs(ovl_coll_eff_bw(1e6, 2, 1e-3) - 1e9) < 1e-3, "eff bw p=2");
  T_CHECK(ovl_coll_eff_bw(1e6, 1, 1e-3) == 0.0 && ovl_coll_eff_bw(1e6, 4, 0) == 0.0, "eff bw degenerate");
}

/* What ovl_model_print wrote for one sweep: the rows (lines starting with two
 * spaces, or records), and the text in g_out. */
static char g_out[65536];
static int model_rows(const ovl_plan *base, const char *sweep, int maxv, int json) {
  FILE *f = tmpfile();
  ovl_machine m = ovl_machine_stampede2();
  T_CHECK(f != NULL, "tmpfile");
  if (!f) return -1;
  T_OK(ovl_model_print(f, &m, NULL, base, sweep, maxv, json));
  rewind(f);
  size_t len = fread(g_out, 1, sizeof g_out - 1, f);
  g_out[len] = '\0';
  fclose(f);
  int n = 0;
  for (const char *l = g_out; *l; l = strchr(l, '\n') + 1) {
    n += strncmp(l, json ? "{\"type\":\"model\"" : "  ", json ? 15 : 2) == 0;
    if (!strchr(l, '\n')) break;
  }
  return n;
}

static void test_model_table(void) {
  ovl_plan b = ovl_plan_default(OVL_ALGO_SUMMA, 1024, 16);
  T_CHECK(model_rows(&b, "none", 1, 0) == 1 && strstr(g_out, "# ovl model: summa n=1024 P=16, machine ") &&
              strstr(g_out, "  summa P=16 b="),
          "one row:\n%s", g_out);
  T_CHECK(model_rows(&b, "ndup", 5, 1) == 5 && strstr(g_out, "\"ndup\":5") && !strstr(g_out, "# "),
          "ndup 1..5 as records:\n%s", g_out);
  T_CHECK(model_rows(&b, "P", 1, 0) == 5, "P = 1, 2, 4, 8, 16:\n%s", g_out);
  T_CHECK(model_rows(&b, "G", 1, 0) == 5 && strstr(g_out, "hsumma P=16 b=256 G=8 "), "G = 1, 2, 4, 8, 16:\n%s", g_out);
  T_CHECK(model_rows(&b, "ppn", 8, 0) == 8 && strstr(g_out, "P=128 ") && strstr(g_out, "ppn=8") &&
              strstr(g_out, "ppn=3 nodes=16"),
          "ppn 1..8:\n%s", g_out);
  /* Alg. 5 on 64 nodes: the largest cube of 64 K ranks (Huang & Chow's Table III meshes) */
  ovl_plan a5 = ovl_plan_default(OVL_ALGO_SSC5, 7645, 64);
  T_CHECK(model_rows(&a5, "ppn", 6, 0) == 6 && strstr(g_out, "alg5 P=125 (5x5x5) ndup=4 ppn=2 nodes=63") &&
              strstr(g_out, "alg5 P=343 (7x7x7) ndup=4 ppn=6 nodes=58"),
          "alg5 PPN sweep:\n%s", g_out);
  int dense = 0; /* the dense algorithms (the block-sparse product's need a shape: ovl_model_print_bsmul) */
  for (int a = 0; a < OVL_ALGO_N; a++) dense += ovl_algo_family((ovl_algo)a) != OVL_FAMILY_BSMUL;
  T_CHECK(model_rows(&b, "algo", 1, 1) == dense && !strstr(g_out, "bsumma"), "every dense algorithm:\n%s", g_out);
  /* a configuration that does not fit: the model's message in the row, "error" in the record */
  b = ovl_plan_default(OVL_ALGO_3D, 1024, 7);
  T_CHECK(model_rows(&b, "none", 1, 1) == 1 && strstr(g_out, "\"error\":"), "error record:\n%s", g_out);
  b = ovl_plan_default(OVL_ALGO_SSC6, 1024, 32);
  T_CHECK(model_rows(&b, "c", 1, 0) == 1 && strstr(g_out, "alg6 P=32 c=2 "), "c: s=4 c=2 only:\n%s", g_out);
  b = ovl_plan_default(OVL_ALGO_SSC3, 1024, 64);
  T_CHECK(model_rows(&b, "P", 1, 0) == 4, "cubes 1, 8, 27, 64:\n%s", g_out);
  ovl_machine m = ovl_machine_stampede2();
  FILE *f = tmpfile();
  if (f) {
    T_ERR(ovl_model_print(f, &m, NULL, &b, "nope", 1, 0), OVL_ERR_ARG);
    fclose(f);
  }
  T_ERR(ovl_model_print(NULL, &m, NULL, &b, "none", 1, 0), OVL_ERR_ARG);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  test_hockney_exact();
  test_hockney_noise();
  test_hockney_errors();
  test_overlap();
  test_model_table();
  int rc = t_finish("test_model");
  MPI_Finalize();
  return rc;
}
