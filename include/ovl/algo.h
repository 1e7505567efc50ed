/* ovl algorithms: the identifiers and names of the distributed kernels and
 * their families now live in the plan schema (ovl/schema.h), which this
 * header includes; kept so that programs including ovl/algo.h still build. */
#ifndef OVL_ALGO_H
#define OVL_ALGO_H

#include "ovl/core.h"
#include "ovl/schema.h"

#endif
