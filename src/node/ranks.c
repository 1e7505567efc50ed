/* The ranks of a communicator on this node, and how the nodes share them. */
#include "ovl/node.h"

ovl_err ovl_node_ranks(MPI_Comm comm, int *ranks_on_node, int *nodes, int *consecutive) {
  OVL_TRY(ovl_check_comm(comm, "ovl_node_ranks"));
  OVL_TRY(ovl_check_ptr(ranks_on_node, "ovl_node_ranks", "ranks_on_node"));
  OVL_TRY(ovl_check_ptr(nodes, "ovl_node_ranks", "nodes"));
  OVL_TRY(ovl_check_ptr(consecutive, "ovl_node_ranks", "consecutive"));
  MPI_Comm node = MPI_COMM_NULL;
  int rank, P, k, lrank;
  OVL_MPI(MPI_Comm_rank(comm, &rank));
  OVL_MPI(MPI_Comm_size(comm, &P));
  OVL_MPI(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node));
  MPI_Comm_size(node, &k);
  MPI_Comm_rank(node, &lrank);
  MPI_Comm_free(&node);
  /* consecutive: every node has the same k ranks and rank = node * k + local */
  int ok = P % k == 0 && rank % k == lrank, all = 0, kmin = 0, kmax = 0;
  OVL_MPI(MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, comm));
  OVL_MPI(MPI_Allreduce(&k, &kmin, 1, MPI_INT, MPI_MIN, comm));
  OVL_MPI(MPI_Allreduce(&k, &kmax, 1, MPI_INT, MPI_MAX, comm));
  int leader = lrank == 0, nn = 0;
  OVL_MPI(MPI_Allreduce(&leader, &nn, 1, MPI_INT, MPI_SUM, comm));
  *ranks_on_node = k;
  *nodes = nn;
  *consecutive = all && kmin == kmax;
  return OVL_OK;
}
