/* ovl: overlapped communication for distributed dense matrix kernels.
 * Umbrella header: include this one. */
#ifndef OVL_OVL_H
#define OVL_OVL_H

#include "ovl/bench.h"
#include "ovl/comm.h"
#include "ovl/core.h"
#include "ovl/dist.h"
#include "ovl/grid.h"
#include "ovl/kernels.h"
#include "ovl/model.h"
#include "ovl/opts.h"
#include "ovl/pdgemm.h"
#include "ovl/purify.h"
#include "ovl/sq.h"
#include "ovl/ssc.h"
#include "ovl/trace.h"

#endif
