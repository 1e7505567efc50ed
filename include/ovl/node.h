/* ovl node: what this node offers the ranks on it, probed at run time --
 * its cores and BLAS threads (src/node/blas.c), the ranks on it
 * (src/node/ranks.c), its largest cache (src/node/cache.c), its available
 * memory and whether a run fits in it (src/node/memory.c), the local dgemm
 * rate and what the CPU promises (src/node/rate.c). The instruments that
 * measure the network and build a machine description are in ovl/bench.h. */
#ifndef OVL_NODE_H
#define OVL_NODE_H

#include <stdint.h>

#include "ovl/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Refuse a footprint that does not fit: OVL_ERR_NOMEM (agreed over comm) when
 * bytes exceeds limit (> 0: a user limit per rank) or this node's available
 * memory (MemAvailable) divided among the ranks on the node.
 * COLLECTIVE over comm. */
ovl_err ovl_check_memory(MPI_Comm comm, int64_t bytes, int64_t limit);

/* The memory this node's kernel reports as available (MemAvailable of
 * /proc/meminfo) in bytes, -1 when unknown. LOCAL. Always OVL_OK. */
ovl_err ovl_mem_available(int64_t *bytes);

/* Local dgemm rate in GFLOP/s on this rank for an n x n x n product
 * (best of `reps`). LOCAL. */
double ovl_local_dgemm_gflops(int n, int reps);

/* Threads of this process's BLAS: OpenBLAS's openblas_get_num_threads /
 * openblas_set_num_threads, looked up at run time (the BLAS is the one the
 * program is linked with). get: the count, 0 when the BLAS cannot tell.
 * set: OVL_ERR_ARG (n < 1), OVL_ERR_UNSUPPORTED (a BLAS without the call).
 * LOCAL. */
int ovl_blas_threads_get(void);
ovl_err ovl_blas_threads_set(int n);
/* Multiple PPN: give this process floor(cores / ranks) BLAS threads (at
 * least 1), the share of a node's cores of each of its `ranks` working
 * ranks. Returns the threads it has now; *restore receives the count to put
 * back with ovl_blas_threads_set (0: nothing was changed, e.g. a BLAS
 * without the call). LOCAL. */
int ovl_blas_threads_share(int cores, int ranks, int *restore);

/* CPUs this node offers to the ranks of comm on it: the union of their CPU
 * affinity masks (sched_getaffinity), so ranks bound to one core each count
 * as many cores as there are ranks. COLLECTIVE over comm. Errors:
 * OVL_ERR_MPI. */
ovl_err ovl_node_cores(MPI_Comm comm, int *cores);

/* Ranks of comm on this node (MPI_Comm_split_type SHARED), the number of
 * nodes, and whether every node holds the same number of ranks, numbered
 * consecutively (ranks [j*k, (j+1)*k) on node j). COLLECTIVE over comm.
 * Errors: OVL_ERR_ARG (MPI_COMM_NULL, NULL outputs), OVL_ERR_MPI. */
ovl_err ovl_node_ranks(MPI_Comm comm, int *ranks_on_node, int *nodes, int *consecutive);

/* Size in bytes of the largest (last-level) CPU cache: from
 * /sys/devices/system/cpu/cpu0/cache, else sysconf, else 32 MiB. LOCAL.
 * Errors: OVL_ERR_ARG (bytes NULL). */
ovl_err ovl_node_llc_bytes(int64_t *bytes);

/* Double-precision GFLOP/s per core that the CPU's vector unit promises:
 * flops/cycle (32 with AVX-512 FMA, 16 with AVX2 FMA, 4 otherwise, from
 * /proc/cpuinfo flags) times the reported clock; 0 when unknown. LOCAL. */
double ovl_cpu_peak_gflops(void);

/* Measure the local dgemm rate and, when it is below 1/3 of
 * ovl_cpu_peak_gflops(), print a warning on rank 0 that names the likely
 * cause (a generic OpenBLAS kernel; OPENBLAS_CORETYPE). Returns the
 * measured rate. COLLECTIVE over comm (the rate is the minimum over ranks).*/
double ovl_check_local_blas(MPI_Comm comm, int quiet);

#ifdef __cplusplus
}
#endif
#endif
