/* Printing and option helpers of the `ovl bench` commands (see bench_util.h). */
#include "bench_util.h"

#include <stdio.h>
#include <stdlib.h>

const char *bench_bytes_str(double b) {
  static char buf[32];
  const char *unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (b >= 1024.0 && u < 4) b /= 1024.0, u++;
  snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", b, unit[u]);
  return buf;
}

ovl_err bench_int_list(const char *what, const char *s, int lo, int hi, int *out, int cap, int *n) {
  *n = 0;
  const char *p = s;
  while (p && *p) {
    char *end = NULL;
    long a = strtol(p, &end, 10), b;
    if (end == p)
      return ovl_err_set(OVL_ERR_ARG, "%s: expected a list of integers like 1,2,4 or 1-6, got '%s'", what, s);
    b = a;
    if (*end == '-') {
      const char *q = end + 1;
      b = strtol(q, &end, 10);
      if (end == q) return ovl_err_set(OVL_ERR_ARG, "%s: bad range in '%s'", what, s);
    }
    if (a < lo || b > hi || b < a)
      return ovl_err_set(OVL_ERR_ARG, "%s: values must lie in [%d, %d] (ranges ascending), got '%s'", what, lo, hi, s);
    for (long v = a; v <= b; v++) {
      if (*n >= cap) return ovl_err_set(OVL_ERR_ARG, "%s: at most %d values, got '%s'", what, cap, s);
      out[(*n)++] = (int)v;
    }
    if (*end == ',') end++;
    else if (*end) return ovl_err_set(OVL_ERR_ARG, "%s: unexpected '%c' in '%s'", what, *end, s);
    p = end;
  }
  if (*n == 0) return ovl_err_set(OVL_ERR_ARG, "%s: empty list", what);
  return OVL_OK;
}
