/* MPI handle accounting through the PMPI profiling interface: a shared
 * library preloaded into ovl's processes (LD_PRELOAD) counts communicators,
 * windows, requests, datatypes and files as they are created and freed, and
 * prints the balance of each at MPI_Finalize on stderr:
 *   ovl-handles: rank R: comms 0 windows 0 requests 0 types 0 files 0
 * followed by how many of each were made. A non-zero balance is a handle ovl did not free (tests/valgrind_test.sh
 * fails on it). Requests count as completed when Wait/Test sets them to
 * MPI_REQUEST_NULL (ovl uses no persistent requests). Communicators,
 * windows and files that MPI itself owns (MPI_COMM_WORLD, MPI_COMM_SELF) are
 * not counted; neither are communicators made by other means than the calls
 * wrapped here (ovl uses only these). Datatypes that the MPI library makes
 * for itself through these public names are not counted either: MPICH 4.0's
 * ROMIO creates one with MPI_Type_create_resized (in its collective I/O) and
 * frees it with PMPI_Type_free, which no profiling library sees (docs/guides/mpi.md);
 * a datatype counts when the call comes from outside the MPI library. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>

static long g_comms, g_wins, g_reqs, g_types, g_files; /* live */
static long g_made[5];                                 /* created, same order */

static void comm_made(int rc, const MPI_Comm *c) {
  if (rc == MPI_SUCCESS && *c != MPI_COMM_NULL) g_comms++, g_made[0]++;
}
int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *out) {
  int rc = PMPI_Comm_dup(comm, out);
  comm_made(rc, out);
  return rc;
}
int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *out) {
  int rc = PMPI_Comm_split(comm, color, key, out);
  comm_made(rc, out);
  return rc;
}
int MPI_Comm_split_type(MPI_Comm comm, int type, int key, MPI_Info info, MPI_Comm *out) {
  int rc = PMPI_Comm_split_type(comm, type, key, info, out);
  comm_made(rc, out);
  return rc;
}
int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *out) {
  int rc = PMPI_Comm_create(comm, group, out);
  comm_made(rc, out);
  return rc;
}
int MPI_Cart_create(MPI_Comm comm, int nd, const int dims[], const int periods[], int reorder, MPI_Comm *out) {
  int rc = PMPI_Cart_create(comm, nd, dims, periods, reorder, out);
  comm_made(rc, out);
  return rc;
}
int MPI_Comm_free(MPI_Comm *comm) {
  int rc = PMPI_Comm_free(comm);
  if (rc == MPI_SUCCESS) g_comms--;
  return rc;
}

int MPI_Win_allocate_shared(MPI_Aint size, int disp, MPI_Info info, MPI_Comm comm, void *base, MPI_Win *win) {
  int rc = PMPI_Win_allocate_shared(size, disp, info, comm, base, win);
  if (rc == MPI_SUCCESS) g_wins++, g_made[1]++;
  return rc;
}
int MPI_Win_allocate(MPI_Aint size, int disp, MPI_Info info, MPI_Comm comm, void *base, MPI_Win *win) {
  int rc = PMPI_Win_allocate(size, disp, info, comm, base, win);
  if (rc == MPI_SUCCESS) g_wins++, g_made[1]++;
  return rc;
}
int MPI_Win_create(void *base, MPI_Aint size, int disp, MPI_Info info, MPI_Comm comm, MPI_Win *win) {
  int rc = PMPI_Win_create(base, size, disp, info, comm, win);
  if (rc == MPI_SUCCESS) g_wins++, g_made[1]++;
  return rc;
}
int MPI_Win_free(MPI_Win *win) {
  int rc = PMPI_Win_free(win);
  if (rc == MPI_SUCCESS) g_wins--;
  return rc;
}

#define REQ_MADE(call)                                                                                                 \
  int rc = call;                                                                                                       \
  if (rc == MPI_SUCCESS) g_reqs++, g_made[2]++;                                                                        \
  return rc
int MPI_Isend(const void *b, int n, MPI_Datatype t, int d, int tag, MPI_Comm c, MPI_Request *r) {
  REQ_MADE(PMPI_Isend(b, n, t, d, tag, c, r));
}
int MPI_Irecv(void *b, int n, MPI_Datatype t, int s, int tag, MPI_Comm c, MPI_Request *r) {
  REQ_MADE(PMPI_Irecv(b, n, t, s, tag, c, r));
}
int MPI_Ibarrier(MPI_Comm c, MPI_Request *r) { REQ_MADE(PMPI_Ibarrier(c, r)); }
int MPI_Ibcast(void *b, int n, MPI_Datatype t, int root, MPI_Comm c, MPI_Request *r) {
  REQ_MADE(PMPI_Ibcast(b, n, t, root, c, r));
}
int MPI_Ireduce(const void *s, void *d, int n, MPI_Datatype t, MPI_Op op, int root, MPI_Comm c, MPI_Request *r) {
  REQ_MADE(PMPI_Ireduce(s, d, n, t, op, root, c, r));
}
int MPI_Iallreduce(const void *s, void *d, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c, MPI_Request *r) {
  REQ_MADE(PMPI_Iallreduce(s, d, n, t, op, c, r));
}
int MPI_Iallgather(const void *s, int sn, MPI_Datatype st, void *d, int dn, MPI_Datatype dt, MPI_Comm c,
                   MPI_Request *r) {
  REQ_MADE(PMPI_Iallgather(s, sn, st, d, dn, dt, c, r));
}
int MPI_Ialltoall(const void *s, int sn, MPI_Datatype st, void *d, int dn, MPI_Datatype dt, MPI_Comm c,
                  MPI_Request *r) {
  REQ_MADE(PMPI_Ialltoall(s, sn, st, d, dn, dt, c, r));
}

static int live(int n, const MPI_Request *r) {
  int k = 0;
  for (int i = 0; i < n; i++) k += r[i] != MPI_REQUEST_NULL;
  return k;
}
#define REQ_DONE(n, reqs, call)                                                                                        \
  int before = live(n, reqs);                                                                                          \
  int rc = call;                                                                                                       \
  g_reqs -= before - live(n, reqs);                                                                                    \
  return rc
int MPI_Wait(MPI_Request *r, MPI_Status *s) { REQ_DONE(1, r, PMPI_Wait(r, s)); }
int MPI_Test(MPI_Request *r, int *flag, MPI_Status *s) { REQ_DONE(1, r, PMPI_Test(r, flag, s)); }
int MPI_Waitall(int n, MPI_Request r[], MPI_Status s[]) { REQ_DONE(n, r, PMPI_Waitall(n, r, s)); }
int MPI_Testall(int n, MPI_Request r[], int *flag, MPI_Status s[]) { REQ_DONE(n, r, PMPI_Testall(n, r, flag, s)); }
int MPI_Waitany(int n, MPI_Request r[], int *idx, MPI_Status *s) { REQ_DONE(n, r, PMPI_Waitany(n, r, idx, s)); }
int MPI_Testany(int n, MPI_Request r[], int *idx, int *flag, MPI_Status *s) {
  REQ_DONE(n, r, PMPI_Testany(n, r, idx, flag, s));
}
int MPI_Waitsome(int n, MPI_Request r[], int *outn, int idx[], MPI_Status s[]) {
  REQ_DONE(n, r, PMPI_Waitsome(n, r, outn, idx, s));
}
int MPI_Testsome(int n, MPI_Request r[], int *outn, int idx[], MPI_Status s[]) {
  REQ_DONE(n, r, PMPI_Testsome(n, r, outn, idx, s));
}
int MPI_Request_free(MPI_Request *r) { REQ_DONE(1, r, PMPI_Request_free(r)); }

/* 1 when the code at ADDR belongs to the MPI library itself (the object that
 * defines PMPI_Type_free). */
static int from_mpi_library(const void *addr) {
  static const void *mpi_base;
  Dl_info info;
  if (!mpi_base && dladdr((const void *)(size_t)PMPI_Type_free, &info)) mpi_base = info.dli_fbase;
  return mpi_base && dladdr(addr, &info) && info.dli_fbase == mpi_base;
}
#define TYPE_MADE(call)                                                                                                \
  int rc = call;                                                                                                       \
  if (rc == MPI_SUCCESS && !from_mpi_library(__builtin_return_address(0))) g_types++, g_made[3]++;                     \
  return rc
int MPI_Type_contiguous(int n, MPI_Datatype old, MPI_Datatype *t) { TYPE_MADE(PMPI_Type_contiguous(n, old, t)); }
int MPI_Type_vector(int n, int bl, int stride, MPI_Datatype old, MPI_Datatype *t) {
  TYPE_MADE(PMPI_Type_vector(n, bl, stride, old, t));
}
int MPI_Type_create_subarray(int nd, const int sizes[], const int sub[], const int start[], int order, MPI_Datatype old,
                             MPI_Datatype *t) {
  TYPE_MADE(PMPI_Type_create_subarray(nd, sizes, sub, start, order, old, t));
}
int MPI_Type_create_resized(MPI_Datatype old, MPI_Aint lb, MPI_Aint extent, MPI_Datatype *t) {
  TYPE_MADE(PMPI_Type_create_resized(old, lb, extent, t));
}
int MPI_Type_free(MPI_Datatype *t) {
  int rc = PMPI_Type_free(t);
  if (rc == MPI_SUCCESS && !from_mpi_library(__builtin_return_address(0))) g_types--;
  return rc;
}

int MPI_File_open(MPI_Comm c, const char *name, int amode, MPI_Info info, MPI_File *fh) {
  int rc = PMPI_File_open(c, name, amode, info, fh);
  if (rc == MPI_SUCCESS) g_files++, g_made[4]++;
  return rc;
}
int MPI_File_close(MPI_File *fh) {
  int rc = PMPI_File_close(fh);
  if (rc == MPI_SUCCESS) g_files--;
  return rc;
}

int MPI_Finalize(void) {
  int rank = -1;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  fprintf(stderr,
          "ovl-handles: rank %d: comms %ld windows %ld requests %ld types %ld files %ld (made: %ld %ld %ld %ld %ld)\n",
          rank, g_comms, g_wins, g_reqs, g_types, g_files, g_made[0], g_made[1], g_made[2], g_made[3], g_made[4]);
  fflush(stderr);
  return PMPI_Finalize();
}
