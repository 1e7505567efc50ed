/* The options the `ovl bench` commands share; the benchmarks and their
 * printers are in the library (ovl/bench.h). */
#ifndef OVL_BENCH_UTIL_H
#define OVL_BENCH_UTIL_H

#include <stdint.h>

#include "cli.h"

/* The --mem-limit option of the bench commands (dest: int64_t bytes). */
#define BENCH_OPT_MEM_LIMIT(dest)                                                                                      \
  {                                                                                                                    \
    "mem-limit", 'M', OVL_OPT_SIZE, (dest), "BYTES",                                                                   \
        "refuse to run above this many bytes per rank (default: the node's available memory shared among its ranks)",  \
        NULL, 0, INT64_MAX                                                                                             \
  }

/* The --cache-bytes option of the communication benchmarks (dest: int64_t bytes). */
#define BENCH_OPT_CACHE_BYTES(dest)                                                                                    \
  {                                                                                                                    \
    "cache-bytes", 0, OVL_OPT_SIZE, (dest), "BYTES",                                                                   \
        "rotate each rank's send and receive buffers through this many bytes (0: one buffer each, warm in cache; "     \
        "default: 2x the last-level cache, lowered when the node's ranks would not fit in half of MemAvailable)",      \
        NULL, 0, (int64_t)1 << 40                                                                                      \
  }

#endif
