/* The option every `ovl bench` command shares; the benchmarks and their
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

#endif
