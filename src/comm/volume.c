/* Message volume counters (include/ovl/comm.h, "message volume"). */
#include <stdlib.h>
#include <string.h>

#include "comm/comm_impl.h"

static struct {
  int on;
  MPI_Group group; /* the counting communicator's ranks */
  int *node;       /* node of each of its ranks */
  ovl_volume v;
} g_vol = {0, MPI_GROUP_NULL, NULL, {{0}, {0}}};

ovl_err ovl_volume_stop(void) {
  if (g_vol.group != MPI_GROUP_NULL) MPI_Group_free(&g_vol.group);
  free(g_vol.node);
  g_vol.node = NULL;
  g_vol.on = 0;
  return OVL_OK;
}

ovl_err ovl_volume_start(MPI_Comm comm) {
  OVL_TRY(ovl_check_comm(comm, "ovl_volume_start"));
  OVL_TRY(ovl_volume_stop());
  int p, rank, wrank;
  OVL_MPI(MPI_Comm_size(comm, &p));
  OVL_MPI(MPI_Comm_rank(comm, &rank));
  OVL_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &wrank));
  MPI_Comm nc;
  OVL_MPI(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &nc));
  int id = wrank; /* a node is named by its first rank's world rank */
  OVL_MPI(MPI_Bcast(&id, 1, MPI_INT, 0, nc));
  OVL_MPI(MPI_Comm_free(&nc));
  g_vol.node = malloc(sizeof(int) * (size_t)p);
  ovl_err rc = g_vol.node ? OVL_OK : ovl_err_set(OVL_ERR_NOMEM, "cannot allocate %d node numbers", p);
  OVL_TRY(ovl_err_agree(comm, rc));
  OVL_MPI(MPI_Allgather(&id, 1, MPI_INT, g_vol.node, 1, MPI_INT, comm));
  OVL_MPI(MPI_Comm_group(comm, &g_vol.group));
  memset(&g_vol.v, 0, sizeof g_vol.v);
  g_vol.on = 1;
  return OVL_OK;
}

ovl_err ovl_volume_get(ovl_volume *out) {
  OVL_CHECK(out != NULL, OVL_ERR_ARG, "ovl_volume_get: NULL result");
  *out = g_vol.v;
  return OVL_OK;
}

void ovl_i_volume_add(int kind, MPI_Comm comm, int peer, int64_t count) {
  if (!g_vol.on || count <= 0) return;
  double b = (double)count * (double)sizeof(double);
  g_vol.v.bytes[kind] += b;
  MPI_Group cg;
  int me, other[2], mine[2] = {0, peer};
  if (MPI_Comm_rank(comm, &me) != MPI_SUCCESS || MPI_Comm_group(comm, &cg) != MPI_SUCCESS) return;
  mine[0] = me;
  int rc = MPI_Group_translate_ranks(cg, 2, mine, g_vol.group, other);
  MPI_Group_free(&cg);
  if (rc == MPI_SUCCESS && other[0] != MPI_UNDEFINED && other[1] != MPI_UNDEFINED &&
      g_vol.node[other[0]] != g_vol.node[other[1]])
    g_vol.v.offnode[kind] += b;
}
