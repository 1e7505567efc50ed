/* ovl: overlapped communication for distributed dense matrix kernels.
 * Umbrella header: include this one. */
#ifndef OVL_OVL_H
#define OVL_OVL_H

#include "ovl/algo.h"
#include "ovl/bench.h"
#include "ovl/bsmat.h"
#include "ovl/comm.h"
#include "ovl/core.h"
#include "ovl/dense.h"
#include "ovl/dm.h"
#include "ovl/dmat.h"
#include "ovl/entry.h"
#include "ovl/grid.h"
#include "ovl/json.h"
#include "ovl/kernels.h"
#include "ovl/model.h"
#include "ovl/node.h"
#include "ovl/opts.h"
#include "ovl/pdgemm.h"
#include "ovl/pdpurify.h"
#include "ovl/plan.h"
#include "ovl/purify.h"
#include "ovl/record.h"
#include "ovl/sq.h"
#include "ovl/ssc.h"
#include "ovl/trace.h"
#include "ovl/tunedb.h"

#endif
