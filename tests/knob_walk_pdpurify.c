/* The C entry of the knob walk (tests/knob_walk_test.py): ovl_pdpurify on a
 * Fock matrix read from a raw file, once per options string, given first as
 * params.options and then as rank 0's $OVL_OPTIONS.
 * usage: mpiexec -n P knob_walk_pdpurify FOCK.raw N NOCC OPTIONS...
 * The BLACS grid is 1 x P with one N x N block (process (0, 0) holds F; the
 * planner still plans for all P ranks). Prints on rank 0, per string i and
 * mode (options, env), "walk I MODE ok PLAN" (info.plan) or "walk I MODE
 * refused MESSAGE"; exit 0 unless the program itself fails. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ovl/pdpurify.h"

void Cblacs_pinfo(int *mypnum, int *nprocs);
void Cblacs_get(int ctxt, int what, int *val);
void Cblacs_gridinit(int *ctxt, const char *order, int nprow, int npcol);
void Cblacs_gridinfo(int ctxt, int *nprow, int *npcol, int *myrow, int *mycol);
void Cblacs_gridexit(int ctxt);

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int me = 0, np = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  if (argc < 4) {
    if (me == 0) fprintf(stderr, "usage: knob_walk_pdpurify FOCK.raw N NOCC OPTIONS...\n");
    MPI_Finalize();
    return 2;
  }
  int n = atoi(argv[2]), nocc = atoi(argv[3]);
  int ctxt = -1, sys = 0, nprow = 0, npcol = 0, myrow = 0, mycol = 0;
  Cblacs_get(-1, 0, &sys);
  ctxt = sys;
  Cblacs_gridinit(&ctxt, "Row", 1, np);
  Cblacs_gridinfo(ctxt, &nprow, &npcol, &myrow, &mycol);
  size_t len = mycol == 0 ? (size_t)n * (size_t)n : (size_t)n; /* the one block, or a column's room */
  double *f = calloc(len, sizeof *f), *d = calloc(len, sizeof *d);
  int ok = f && d;
  if (ok && mycol == 0) {
    FILE *fp = fopen(argv[1], "rb");
    ok = fp && fread(f, sizeof *f, len, fp) == len;
    if (fp) fclose(fp);
  }
  MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!ok) {
    if (me == 0) fprintf(stderr, "knob_walk_pdpurify: cannot read %s (%d x %d doubles)\n", argv[1], n, n);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  int desc[9] = {1, ctxt, n, n, n, n, 0, 0, n};
  for (int i = 4; i < argc; i++)
    for (int mode = 0; mode < 2; mode++) {
      ovl_pdpurify_params prm = ovl_pdpurify_params_default();
      if (mode == 0) prm.options = argv[i];
      else if (me == 0) setenv("OVL_OPTIONS", argv[i], 1);
      ovl_pdpurify_info info;
      memset(&info, 0, sizeof info);
      ovl_err rc = ovl_pdpurify(f, desc, NULL, NULL, nocc, d, desc, NULL, NULL, &prm, NULL, NULL, &info);
      if (me == 0) unsetenv("OVL_OPTIONS");
      if (me == 0) {
        if (rc == OVL_OK) printf("walk %d %s ok %s\n", i - 4, mode ? "env" : "options", info.plan);
        else printf("walk %d %s refused %s\n", i - 4, mode ? "env" : "options", ovl_errmsg());
        fflush(stdout);
      }
    }
  free(f);
  free(d);
  Cblacs_gridexit(ctxt);
  MPI_Finalize();
  return 0;
}
