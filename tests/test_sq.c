/* Symmetric square X -> X^2 (ovl_sq) against a serial product on every grid
 * that fits the rank count (2D c = 1, 3D c = s, with idle ranks too), in
 * double and single precision, N_DUP 1..4, both back ends, uneven blocks;
 * exact symmetry of X^2, tr(X^2) on every rank, byte counts, the memory
 * query, and refusals agreed on every rank. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ovl/ovl.h"
#include "ovltest.h"

/* Gather X and X2 on P(0,0,0) (world rank 0), check X2 against X X and its
 * exact symmetry; returns the reference trace on every rank of the world. */
static double check(ovl_grid3d g, ovl_dmat X, ovl_dmat X2, int64_t n, double tol, int single, const char *what) {
  int i, j, k, rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  ovl_grid3d_coords(g, &i, &j, &k);
  double tr = 0;
  if (ovl_grid3d_active(g) && k == 0) {
    double *x = NULL, *x2 = NULL;
    if (rank == 0) {
      x = calloc((size_t)(n * n + 1), sizeof(double));
      x2 = calloc((size_t)(n * n + 1), sizeof(double));
    }
    T_OK(ovl_dmat_gather(X, x));
    T_OK(ovl_dmat_gather(X2, x2));
    if (rank == 0) {
      double err = 0, nrm = 0;
      int asym = 0;
      for (int64_t a = 0; a < n * n; a++) nrm += x[a] * x[a];
      for (int64_t c = 0; c < n; c++)
        for (int64_t r = 0; r < n; r++) {
          double ref = 0;
          for (int64_t l = 0; l < n; l++) ref += x[r + l * n] * x[l + c * n];
          if (r == c) tr += ref;
          double d = fabs(x2[r + c * n] - ref);
          if (d > err) err = d;
          if (x2[r + c * n] != x2[c + r * n]) asym++;
        }
      err = nrm > 0 ? err / nrm : err;
      T_CHECK(err <= tol, "%s: relerr %.3e > %.1e", what, err, tol);
      /* the float path really rounds: its error is far above double's */
      if (single && n >= 7) T_CHECK(err > 1e-12, "%s: relerr %.3e: not computed in float32", what, err);
      T_CHECK(asym == 0, "%s: X^2 not exactly symmetric (%d entries)", what, asym);
    }
    free(x);
    free(x2);
  }
  MPI_Bcast(&tr, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  return tr;
}

static void run(ovl_grid3d g, int64_t n, int ndup, ovl_backend be, ovl_prec prec, int reps) {
  ovl_grid2d pl = ovl_grid3d_plane(g);
  ovl_dmat X = NULL, X2 = NULL;
  T_OK(ovl_dmat_create(pl, n, n, &X));
  T_OK(ovl_dmat_create(pl, n, n, &X2));
  ovl_dmat_fill(X, OVL_FILL_SYMMETRIC, 7 + (uint64_t)n);
  ovl_coll_cfg cfg = ovl_coll_cfg_default();
  cfg.backend = be;
  ovl_sq s = NULL;
  T_OK(ovl_sq_create(g, n, ndup, &cfg, &s));
  char what[160] = "sq";
  if (s) {
    ovl_sq_str(s, what, sizeof what);
    size_t len = strlen(what);
    snprintf(what + len, sizeof what - len, " %s", ovl_prec_name(prec));
  }
  double tol = prec == OVL_PREC_SINGLE ? 1e-5 : 1e-13;
  for (int rep = 0; rep < reps && s; rep++) {
    ovl_dmat_fill(X2, OVL_FILL_RANDOM, 99); /* every entry must be overwritten */
    double tr = NAN;
    ovl_kstats st;
    T_OK(ovl_sq_run(s, X, X2, prec, &tr, &st));
    double ref = check(g, X, X2, n, tol, prec == OVL_PREC_SINGLE, what);
    T_CHECK(fabs(tr - ref) <= tol * fabs(ref) + 1e-300, "%s: trace %.17g, reference %.17g", what, tr, ref);
    T_CHECK(st.t_total >= st.t_comm && st.t_comm >= 0 && st.t_comp >= 0, "%s: times", what);
  }
  ovl_sq_destroy(&s);
  T_CHECK(s == NULL, "destroy nulls");
  ovl_dmat_destroy(&X);
  ovl_dmat_destroy(&X2);
}

/* Single precision moves exactly half the bytes of double precision. */
static void bytes_half(ovl_grid3d g, int64_t n) {
  ovl_grid2d pl = ovl_grid3d_plane(g);
  ovl_dmat X = NULL, X2 = NULL;
  ovl_dmat_create(pl, n, n, &X);
  ovl_dmat_create(pl, n, n, &X2);
  ovl_dmat_fill(X, OVL_FILL_SYMMETRIC, 3);
  ovl_sq s = NULL;
  T_OK(ovl_sq_create(g, n, 3, NULL, &s));
  ovl_kstats sd, ss;
  T_OK(ovl_sq_run(s, X, X2, OVL_PREC_DOUBLE, NULL, &sd));
  T_OK(ovl_sq_run(s, X, X2, OVL_PREC_SINGLE, NULL, &ss));
  T_CHECK(sd.bytes == 2 * ss.bytes, "bytes: double %lld, single %lld", (long long)sd.bytes, (long long)ss.bytes);
  int sdim, c;
  ovl_grid3d_dims(g, &sdim, &c);
  if (ovl_grid3d_active(g) && sdim * c > 1) T_CHECK(sd.bytes > 0, "no bytes counted on a %dx%dx%d grid", sdim, sdim, c);
  if (sdim * c == 1) T_CHECK(sd.bytes == 0, "one rank moved %lld bytes", (long long)sd.bytes);
  /* the memory query is the largest workspace of any rank */
  int64_t ws = ovl_sq_workspace(s), mx = 0;
  MPI_Allreduce(&ws, &mx, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
  T_CHECK(mx == ovl_sq_memory(n, sdim, c), "memory %lld, largest workspace %lld", (long long)ovl_sq_memory(n, sdim, c),
          (long long)mx);
  ovl_sq_destroy(&s);
  ovl_dmat_destroy(&X);
  ovl_dmat_destroy(&X2);
}

static void refusals(ovl_grid3d g) {
  ovl_sq s = NULL;
  T_ERR(ovl_sq_create(g, 10, 0, NULL, &s), OVL_ERR_ARG);
  T_ERR(ovl_sq_create(g, 10, OVL_LANES_MAX + 1, NULL, &s), OVL_ERR_ARG);
  T_ERR(ovl_sq_create(g, -1, 1, NULL, &s), OVL_ERR_ARG);
  T_CHECK(s == NULL, "a refused create leaves NULL");
  T_OK(ovl_sq_create(g, 10, 2, NULL, &s));
  int sd, c;
  ovl_grid3d_dims(g, &sd, &c);
  char buf[96], want[96];
  snprintf(want, sizeof want, "sq ndup=2 grid=%dx%dx%d n=10 backend=mpi", sd, sd, c);
  if (s) ovl_sq_str(s, buf, sizeof buf);
  T_CHECK(s && strcmp(buf, want) == 0, "ovl_sq_str: '%s', expected '%s'", s ? buf : "", want);
  ovl_grid2d pl = ovl_grid3d_plane(g), other = NULL;
  T_OK(ovl_grid2d_create(MPI_COMM_WORLD, 0, 0, 0, &other));
  ovl_dmat X = NULL, X2 = NULL, Y = NULL, Z = NULL;
  ovl_dmat_create(pl, 10, 10, &X);
  ovl_dmat_create(pl, 10, 10, &X2);
  ovl_dmat_create(pl, 11, 10, &Y);
  ovl_dmat_create(other, 10, 10, &Z);
  ovl_dmat_fill(X, OVL_FILL_SYMMETRIC, 1);
  double tr = -1;
  T_ERR(ovl_sq_run(s, X, Y, OVL_PREC_DOUBLE, &tr, NULL), OVL_ERR_SIZE);
  T_ERR(ovl_sq_run(s, Y, X2, OVL_PREC_SINGLE, &tr, NULL), OVL_ERR_SIZE);
  T_ERR(ovl_sq_run(s, Z, X2, OVL_PREC_DOUBLE, &tr, NULL), OVL_ERR_ARG);
  T_ERR(ovl_sq_run(s, X, X2, (ovl_prec)2, &tr, NULL), OVL_ERR_ARG);
  T_ERR(ovl_sq_run(NULL, X, X2, OVL_PREC_DOUBLE, &tr, NULL), OVL_ERR_ARG);
  T_OK(ovl_sq_run(s, X, X2, OVL_PREC_DOUBLE, &tr, NULL)); /* still usable after refusals */
  T_CHECK(tr > 0, "trace %g after refusals", tr);
  ovl_dmat_destroy(&X), ovl_dmat_destroy(&X2), ovl_dmat_destroy(&Y), ovl_dmat_destroy(&Z);
  ovl_grid2d_destroy(&other);
  ovl_sq_destroy(&s);
  T_OK(ovl_sq_destroy(&s)); /* NULL-safe */
  T_OK(ovl_sq_destroy(NULL));
}

static void local_checks(void) {
  ovl_prec p = OVL_PREC_DOUBLE;
  T_OK(ovl_prec_parse("single", &p));
  T_CHECK(p == OVL_PREC_SINGLE, "parse single");
  T_OK(ovl_prec_parse("double", &p));
  T_CHECK(p == OVL_PREC_DOUBLE, "parse double");
  T_ERR(ovl_prec_parse("half", &p), OVL_ERR_ARG);
  T_CHECK(strcmp(ovl_prec_name(OVL_PREC_SINGLE), "single") == 0 &&
              strcmp(ovl_prec_name(OVL_PREC_DOUBLE), "double") == 0,
          "precision names");
  T_CHECK(ovl_sq_memory(-1, 2, 2) == -1 && ovl_sq_memory(10, 3, 2) == -1 && ovl_sq_memory(10, 0, 1) == -1 &&
              ovl_sq_memory(10, 2, 0) == -1,
          "memory refuses invalid arguments");
  T_CHECK(ovl_sq_memory((int64_t)1 << 40, 2, 2) == -1, "memory beyond 2^62 bytes is -1");
  T_CHECK(ovl_sq_memory(0, 1, 1) > 0 && ovl_sq_memory(1000, 1, 1) >= 2 * 8 * 1000 * 1000, "memory of one rank");
  T_CHECK(ovl_sq_memory(1000, 4, 2) < ovl_sq_memory(1000, 2, 2), "memory shrinks with the grid");
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int P, rank;
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  local_checks();
  int64_t ns[] = {1, 2, 7, 30, 61, 97};
  int nn = (int)(sizeof ns / sizeof ns[0]);
  /* every s x s x c grid with c | s that fits, and the 1 x 1 x c stacks: the
   * exact fits in full, the ones with idle ranks reduced */
  for (int sd = 1; sd * sd <= P; sd++)
    for (int c = 1; c <= (sd == 1 ? P : sd) && sd * sd * c <= P; c++) {
      if (sd % c && sd != 1) continue;
      int exact = sd * sd * c == P;
      int some_exact = 0; /* with no exact fit (P = 2), the largest grid is run in full */
      for (int s2 = 1; s2 * s2 <= P; s2++)
        for (int c2 = 1; c2 <= s2; c2++) some_exact |= s2 % c2 == 0 && s2 * s2 * c2 == P;
      if (!some_exact && sd == 1) exact = 1;
      ovl_grid3d g = NULL;
      T_OK(ovl_grid3d_create(MPI_COMM_WORLD, sd, c, OVL_GRID_ALLOW_IDLE, &g));
      if (!g) continue;
      if (exact) {
        for (int b = 0; b < 2; b++)
          for (int d = 1; d <= 4; d++)
            for (int x = 0; x < nn; x++) {
              ovl_backend be = b ? OVL_BACKEND_OWN : OVL_BACKEND_MPI;
              run(g, ns[x], d, be, OVL_PREC_DOUBLE, x == 3 ? 2 : 1);
              if (d == 1 || d == 3) run(g, ns[x], d, be, OVL_PREC_SINGLE, x == 3 ? 2 : 1);
            }
        refusals(g);
      } else {
        run(g, 7, 2, OVL_BACKEND_MPI, OVL_PREC_DOUBLE, 1);
        run(g, 61, 3, OVL_BACKEND_OWN, OVL_PREC_SINGLE, 1);
      }
      bytes_half(g, 61);
      bytes_half(g, 5);
      ovl_grid3d_destroy(&g);
    }
  T_CHECK(ovl_req_live() == 0, "leaked %lld requests", (long long)ovl_req_live());
  int rc = t_finish("test_sq");
  MPI_Finalize();
  return rc;
}
