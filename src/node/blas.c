/* The BLAS's threads (looked up at run time) and the node's cores: what
 * multiple PPN needs to give the active ranks the cores of the sleeping
 * ones (Huang & Chow III-B: fewer processes, more threads each). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sched.h>
#include <string.h>

#include "ovl/node.h"

typedef int (*get_fn)(void);
typedef void (*set_fn)(int);

int ovl_blas_threads_get(void) {
  get_fn g = (get_fn)(uintptr_t)dlsym(RTLD_DEFAULT, "openblas_get_num_threads");
  return g ? g() : 0;
}

ovl_err ovl_blas_threads_set(int n) {
  OVL_CHECK(n >= 1, OVL_ERR_ARG, "BLAS threads must be >= 1, got %d", n);
  set_fn s = (set_fn)(uintptr_t)dlsym(RTLD_DEFAULT, "openblas_set_num_threads");
  if (!s) return ovl_err_set(OVL_ERR_UNSUPPORTED, "this BLAS has no openblas_set_num_threads: its threads stay");
  s(n);
  return OVL_OK;
}

int ovl_blas_threads_share(int cores, int ranks, int *restore) {
  *restore = 0;
  int old = ovl_blas_threads_get(), want = ranks > 0 && cores / ranks > 1 ? cores / ranks : 1;
  if (old > 0 && want != old && ovl_blas_threads_set(want) == OVL_OK) *restore = old;
  ovl_err_clear();
  return ovl_blas_threads_get();
}

ovl_err ovl_node_cores(MPI_Comm comm, int *cores) {
  OVL_TRY(ovl_check_comm(comm, "ovl_node_cores"));
  OVL_TRY(ovl_check_ptr(cores, "ovl_node_cores", "cores"));
  cpu_set_t mine;
  CPU_ZERO(&mine);
  if (sched_getaffinity(0, sizeof mine, &mine) != 0) CPU_SET(0, &mine); /* at least one */
  MPI_Comm node = MPI_COMM_NULL;
  int rank = 0;
  OVL_MPI(MPI_Comm_rank(comm, &rank));
  OVL_MPI(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node));
  cpu_set_t all;
  int mrc = MPI_Allreduce(&mine, &all, (int)sizeof mine, MPI_BYTE, MPI_BOR, node);
  MPI_Comm_free(&node);
  if (mrc != MPI_SUCCESS) return ovl_err_set(OVL_ERR_MPI, "ovl_node_cores: MPI_Allreduce failed");
  *cores = CPU_COUNT(&all);
  return OVL_OK;
}
