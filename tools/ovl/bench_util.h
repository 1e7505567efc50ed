/* Printing and option helpers of the `ovl bench` commands; the benchmarks
 * themselves are in the library (ovl/bench.h). */
#ifndef OVL_BENCH_UTIL_H
#define OVL_BENCH_UTIL_H

#include <stdint.h>

#include "cli.h"

/* Parse a comma-separated list of integers in [lo, hi] ("1,2,4" or "1-6")
 * into out[0..cap-1]; *n receives the count. LOCAL. Errors: OVL_ERR_ARG
 * naming the option `what`. */
ovl_err bench_int_list(const char *what, const char *s, int lo, int hi, int *out, int cap, int *n);

/* "64 KiB"-style text of a byte count (static buffer: one call per
 * statement). LOCAL. */
const char *bench_bytes_str(double bytes);

/* ovl_bench_node_info under the name `ovl purify` calls. COLLECTIVE over comm. */
static inline ovl_err bench_node_info(MPI_Comm comm, int *ranks_on_node, int *nodes, int *consecutive) {
  return ovl_bench_node_info(comm, ranks_on_node, nodes, consecutive);
}

/* The --mem-limit option of the bench commands (dest: int64_t bytes). */
#define BENCH_OPT_MEM_LIMIT(dest)                                                                                      \
  {                                                                                                                    \
    "mem-limit", 'M', OVL_OPT_SIZE, (dest), "BYTES",                                                                   \
        "refuse to run above this many bytes per rank (default: the node's available memory shared among its ranks)",  \
        NULL, 0, INT64_MAX                                                                                             \
  }

#endif
