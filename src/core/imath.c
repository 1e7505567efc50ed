/* Integer square and cube roots (ovl/core.h). */
#include "ovl/core.h"

/* Largest s in [1, hi] with s^e <= x, by bisection in 64-bit arithmetic
 * (hi^e fits: hi <= 46341 for squares, 1291 for cubes); x >= 1. */
static int iroot(int x, int e, int64_t hi) {
  int64_t lo = 1;
  while (lo < hi) {
    int64_t mid = lo + (hi - lo + 1) / 2, pw = e == 2 ? mid * mid : mid * mid * mid;
    if (pw <= x) lo = mid;
    else hi = mid - 1;
  }
  return (int)lo;
}

int ovl_isqrt(int x) { return x < 1 ? 0 : iroot(x, 2, 46341); }

int ovl_icbrt(int x) { return x < 1 ? 0 : iroot(x, 3, 1291); }

int ovl_mul_i64(int64_t a, int64_t b, int64_t *out) {
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) return 0;
  *out = r;
  return 1;
}

ovl_err ovl_ranks_product(const int *dims, int n, const char *what, int *out) {
  char shape[64] = "";
  int64_t prod = 1;
  double approx = 1.0;
  int ok = 1, len = 0;
  OVL_TRY(ovl_check_ptr(out, "ovl_ranks_product", "out"));
  if (n < 0) return ovl_err_set(OVL_ERR_ARG, "ovl_ranks_product: n = %d is negative", n);
  if (n > 0) OVL_TRY(ovl_check_ptr(dims, "ovl_ranks_product", "dims"));
  if (what == NULL) what = "grid";
  if (dims == NULL || n < 1 || n > 3) return ovl_err_set(OVL_ERR_ARG, "%s: no dimensions", what);
  for (int k = 0; k < n; k++) {
    len += snprintf(shape + len, sizeof shape - (size_t)len, k ? " x %d" : "%d", dims[k]);
    approx *= dims[k];
    if (dims[k] < 0) ok = -1;
    else if (ok == 1) ok = ovl_mul_i64(prod, dims[k], &prod);
  }
  if (ok < 0) return ovl_err_set(OVL_ERR_ARG, "%s %s: dimensions must be >= 0", what, shape);
  if (!ok || prod > INT32_MAX)
    return ovl_err_set(OVL_ERR_ARG,
                       "%s %s: the product %s%.0f exceeds %d, the most processes an MPI communicator holds", what,
                       shape, ok ? "" : "about ", approx, INT32_MAX);
  *out = (int)prod;
  return OVL_OK;
}
