/* A fault for tests/signal_test.py, preloaded (LD_PRELOAD): rank 0 blocks
 * in a system call that does not end, as a write to a hung file system or a
 * long computation would, at the point OVL_BLOCK names:
 *   OVL_BLOCK=write   the first MPI_File_write_all (the first raw output:
 *                     -o, or the first checkpoint's data); write:N the N-th;
 *   OVL_BLOCK=check   LAPACKE_dsyevd (the --check of ovl purify).
 * The call is a write into a full pipe: a signal handler installed with
 * SA_RESTART runs and the write resumes, so only a handler that ends the
 * process ends it. OVL_BLOCK_MARK=FILE is created just before blocking (the
 * test signals the process then). Without OVL_BLOCK the calls pass through
 * (MPI's profiling interface; the next LAPACKE_dsyevd by dlsym). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <lapacke.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* 1 when this call of `what` is the one to block (rank 0 only) */
static int wants(const char *what, int *calls) {
  const char *e = getenv("OVL_BLOCK");
  size_t len = strlen(what);
  int rank = 0, init = 0;
  MPI_Initialized(&init);
  if (init) PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (!e || strncmp(e, what, len) != 0 || (e[len] != '\0' && e[len] != ':') || rank != 0) return 0;
  int nth = e[len] == ':' ? atoi(e + len + 1) : 1;
  return ++*calls == nth;
}

static void block_forever(void) {
  int p[2];
  if (pipe(p) != 0) abort();
  char buf[4096];
  memset(buf, 'x', sizeof buf);
  fcntl(p[1], F_SETFL, O_NONBLOCK);
  while (write(p[1], buf, sizeof buf) > 0) {}
  fcntl(p[1], F_SETFL, 0);
  const char *mark = getenv("OVL_BLOCK_MARK");
  if (mark) {
    int fd = open(mark, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) close(fd);
  }
  for (;;) /* the pipe stays full: the write never completes */
    if (write(p[1], buf, 1) < 0 && errno != EINTR) abort();
}

int MPI_File_write_all(MPI_File fh, const void *buf, int count, MPI_Datatype type, MPI_Status *st) {
  static int calls;
  if (wants("write", &calls)) block_forever();
  return PMPI_File_write_all(fh, buf, count, type, st);
}

lapack_int LAPACKE_dsyevd(int layout, char jobz, char uplo, lapack_int n, double *a, lapack_int lda, double *w) {
  static int calls;
  if (wants("check", &calls)) block_forever();
  lapack_int (*next)(int, char, char, lapack_int, double *, lapack_int, double *) = NULL;
  *(void **)&next = dlsym(RTLD_NEXT, "LAPACKE_dsyevd");
  return next ? next(layout, jobz, uplo, n, a, lda, w) : -1000;
}
