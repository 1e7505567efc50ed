/* The size of the node's largest CPU cache. */
#include <stdio.h>
#include <unistd.h>

#include "ovl/node.h"

static int64_t read_cache_size(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  char line[64] = "";
  int64_t v = 0;
  if (fgets(line, sizeof line, f)) {
    char unit = 0;
    long long x = 0;
    int got = sscanf(line, "%lld%c", &x, &unit);
    if (got >= 1) v = x;
    if (got == 2 && (unit == 'K' || unit == 'k')) v = x << 10;
    if (got == 2 && (unit == 'M' || unit == 'm')) v = x << 20;
  }
  fclose(f);
  return v;
}

ovl_err ovl_node_llc_bytes(int64_t *bytes) {
  OVL_TRY(ovl_check_ptr(bytes, "ovl_node_llc_bytes", "bytes"));
  int64_t best = 0;
  for (int i = 0; i < 8; i++) {
    char path[128];
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
    int64_t v = read_cache_size(path);
    if (v > best) best = v;
  }
#ifdef _SC_LEVEL3_CACHE_SIZE
  if (best <= 0) {
    long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE), l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    best = l3 > 0 ? l3 : l2 > 0 ? l2 : 0;
  }
#endif
  *bytes = best > 0 ? best : (int64_t)32 << 20;
  return OVL_OK;
}
