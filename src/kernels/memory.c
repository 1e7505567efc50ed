/* Memory footprint of the multiplication algorithms (the check that it fits
 * the node is src/node/memory.c). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "kernels/kimpl.h"
#include "ovl/ssc.h"

/* Footprints are summed in double, where no product of block sizes can
 * overflow, and returned as bytes when below 2^62 (else -1). */
#define MEM_MAX 4611686018427387904.0 /* 2^62 */

/* Size of one allocation of `elems` doubles as ovl_malloc makes it (64-byte
 * granularity). */
static double alloc_bytes(double elems) { return ceil(elems * 8.0 / 64.0) * 64.0; }

static int64_t mem_result(double bytes) { return bytes >= 0 && bytes < MEM_MAX ? (int64_t)bytes : -1; }

int64_t ovl_mm_memory(const ovl_plan *plan, char transa, char transb, int64_t m, int64_t n, int64_t k, int p, int q,
                      int repl) {
  if (!plan || p < 1 || q < 1 || m < 0 || n < 0 || k < 0) return -1;
  /* the largest blocks are those of process (0, 0) */
  double mi = (double)ovl_block_len(m, p, 0), nj = (double)ovl_block_len(n, q, 0), kq = (double)ovl_block_len(k, q, 0),
         kp = (double)ovl_block_len(k, p, 0);
  double bytes = alloc_bytes(mi * kq) + alloc_bytes(kp * nj) + alloc_bytes(mi * nj); /* A, B, C */
  int ta = transa == 'T' || transa == 't', tb = transb == 'T' || transb == 't';
  if (ta) bytes += alloc_bytes(kp * (double)ovl_block_len(m, q, 0)); /* stored A is k x m */
  if (tb) bytes += alloc_bytes((double)ovl_block_len(n, p, 0) * kq);
  double b = (double)(plan->b < k ? plan->b : (k > 0 ? k : 1));
  switch (plan->algo) {
  case OVL_ALGO_SUMMA: {
    int nbuf = plan->lookahead ? 2 : 1;
    bytes += nbuf * (alloc_bytes(mi * b + 1) + alloc_bytes(nj * b + 1));
    break;
  }
  case OVL_ALGO_HSUMMA: { /* outer panels of A and B (two pairs with lookahead); sub-panels live in them */
    double M = (double)(plan->outer > 0 ? plan->outer : plan->b);
    if (M > (double)k && k > 0) M = (double)k;
    bytes += (plan->lookahead ? 2 : 1) * (alloc_bytes(mi * M + 1) + alloc_bytes(M * nj + 1));
    break;
  }
  case OVL_ALGO_CANNON: /* double buffers once there is a second step */
    bytes += (p > 1 ? 2 : 1) * (alloc_bytes(mi * kq + 1) + alloc_bytes(kq * nj + 1));
    break;
  case OVL_ALGO_3D: /* B_jk, the partial product and the reduced result */
    bytes += alloc_bytes(kp * nj + 1) + alloc_bytes(mi * nj + 1) + alloc_bytes(mi * nj + 1);
    break;
  case OVL_ALGO_25D: /* the partial product of layers k > 0, and Cannon's buffers */
    if (repl > 1) bytes += alloc_bytes(mi * nj + 1);
    bytes += (repl > 0 && p / repl > 1 ? 2 : 1) * (alloc_bytes(mi * kq + 1) + alloc_bytes(kq * nj + 1));
    break;
  default: return -1; /* not a multiplication algorithm */
  }
  return mem_result(bytes);
}

int64_t ovl_ssc_memory(int64_t n, int s, int c, ovl_algo alg) {
  if (n < 0 || s < 1 || c < 1 || alg < OVL_ALGO_SSC3 || alg > OVL_ALGO_SSC6) return -1;
  if (alg != OVL_ALGO_SSC6 ? c != s : s % c != 0) return -1;
  double b = (double)ovl_block_len(n, s, 0), blk = alloc_bytes(b * b); /* P(0,0,0) holds the largest blocks */
  if (alg != OVL_ALGO_SSC6) return mem_result(6 * blk);                /* A, Bt, C, D2r, B2, D3r (ssc.c) */
  /* A, C, B2; each run's Cannon steps add double buffers for A and B
   * (single ones when a layer takes one step) */
  return mem_result(3 * blk + (s / c > 1 ? 4 : 2) * alloc_bytes(b * b + 1));
}
