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
