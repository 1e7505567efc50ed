/* The node's available memory, and the check that a run's footprint fits
 * in it. */
#include <inttypes.h>
#include <stdio.h>

#include "ovl/node.h"

ovl_err ovl_mem_available(int64_t *bytes) {
  OVL_TRY(ovl_check_ptr(bytes, "ovl_mem_available", "bytes"));
  *bytes = -1;
  FILE *f = fopen("/proc/meminfo", "r");
  if (!f) return OVL_OK;
  char line[256];
  int64_t kb = -1;
  while (fgets(line, sizeof line, f))
    if (sscanf(line, "MemAvailable: %" SCNd64 " kB", &kb) == 1) break;
  fclose(f);
  *bytes = kb > 0 ? kb * 1024 : -1;
  return OVL_OK;
}

/* "12.5 MiB", or "40.0 KiB" below 1 MiB. */
static const char *size_str(double bytes, char *buf, size_t n) {
  if (bytes < 1048576.0) snprintf(buf, n, "%.1f KiB", bytes / 1024.0);
  else snprintf(buf, n, "%.1f MiB", bytes / 1048576.0);
  return buf;
}

ovl_err ovl_check_memory(MPI_Comm comm, int64_t bytes, int64_t limit) {
  OVL_TRY(ovl_check_comm(comm, "ovl_check_memory"));
  ovl_err rc = OVL_OK;
  MPI_Comm node = MPI_COMM_NULL;
  int local = 1;
  if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) == MPI_SUCCESS) {
    MPI_Comm_size(node, &local);
    MPI_Comm_free(&node);
  }
  int64_t avail = -1;
  ovl_mem_available(&avail);
  char a[32], b[32], c[32];
  if (limit > 0 && bytes > limit)
    rc = ovl_err_set(OVL_ERR_NOMEM, "this run needs %s per rank, above the limit of %s",
                     size_str((double)bytes, a, sizeof a), size_str((double)limit, b, sizeof b));
  else if (avail > 0 && bytes > avail / local)
    rc = ovl_err_set(OVL_ERR_NOMEM,
                     "this run needs %s per rank, but the node has %s available for its %d ranks (%s each)",
                     size_str((double)bytes, a, sizeof a), size_str((double)avail, b, sizeof b), local,
                     size_str((double)avail / local, c, sizeof c));
  return ovl_err_agree(comm, rc);
}
