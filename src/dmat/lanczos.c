/* Spectral bounds by a few Lanczos steps (ovl_lanczos_bounds, ovl/dmat.h). */
#include <lapacke.h>
#include <math.h>

#include "ovl/dmat.h"

ovl_err ovl_lanczos_bounds(int64_t n, int k, unsigned flags, ovl_matvec_fn mv, void *ctx, MPI_Comm comm, double *lo,
                           double *hi) {
  ovl_err rc = !mv || !lo || !hi ? ovl_err_set(OVL_ERR_ARG, "ovl_lanczos_bounds: NULL %s",
                                               !mv   ? "mv"
                                               : !lo ? "lo"
                                                     : "hi")
                                 : OVL_OK;
  OVL_TRY(ovl_err_agree(comm, rc));
  if (n < 2 || k < 1) return OVL_OK;
  if (k > n) k = (int)n;
  double *v = NULL, *vp = NULL, *w = NULL, *al = NULL, *be = NULL, *z = NULL;
  rc = ovl_malloc(sizeof(double) * (size_t)(3 * n + 2 * k + (int64_t)k * k + 4), &v);
  rc = ovl_err_agree(comm, rc);
  if (rc != OVL_OK) return rc;
  vp = v + n, w = vp + n, al = w + n, be = al + k, z = be + k;
  double nrm = 0;
  for (int64_t i = 0; i < n; i++) v[i] = ovl_fill_value(20261125u, i, 0), vp[i] = 0, nrm += v[i] * v[i];
  for (int64_t i = 0; i < n; i++) v[i] /= sqrt(nrm);
  int64_t m = 0;
  double bprev = 0;
  for (; m < k && rc == OVL_OK; m++) {
    rc = mv(ctx, v, w);
    if (rc != OVL_OK) break;
    double a = 0, b = 0;
    for (int64_t i = 0; i < n; i++) a += w[i] * v[i];
    for (int64_t i = 0; i < n; i++) w[i] -= a * v[i] + bprev * vp[i], b += w[i] * w[i];
    al[m] = a, be[m] = sqrt(b), bprev = be[m];
    if (!(flags & OVL_LANCZOS_EVERY_STEP) && !(be[m] > 1e-12 * (fabs(a) + 1.0))) { /* an invariant subspace */
      be[m] = 0, m++;
      break;
    }
    for (int64_t i = 0; i < n; i++) vp[i] = v[i], v[i] = w[i] / be[m];
  }
  if (rc == OVL_OK && m > 0) {
    double last = be[m - 1], *off = w; /* dstev overwrites the off-diagonal */
    for (int64_t i = 0; i + 1 < m; i++) off[i] = be[i];
    lapack_int info = LAPACKE_dstev(LAPACK_COL_MAJOR, 'V', (lapack_int)m, al, off, z, (lapack_int)m);
    if (info == 0) {
      double r0 = fabs(last * z[(m - 1) + 0 * m]), r1 = fabs(last * z[(m - 1) + (m - 1) * m]);
      double margin = 0.01 * (al[m - 1] - al[0]);
      double l = al[0] - r0 - margin, h = al[m - 1] + r1 + margin;
      if (l > *lo && l < h) *lo = l;
      if (h < *hi && h > *lo) *hi = h;
    }
  }
  ovl_free(&v);
  return rc;
}
