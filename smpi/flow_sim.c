/* flow_sim: the bandwidth of concurrent message streams between two nodes,
 * to see what the simulated network gives one stream and several (the
 * per-flow cap of smpi/smpirun.sh --flowcap, docs/guides/smpi.md). Built in SMPI
 * builds (smpi/); an ordinary MPI program, it runs under mpiexec too.
 *
 * usage: flow_sim [--bytes S] [--streams 1,2,4] [--reps R]
 * Needs an even number of ranks: rank r < P/2 sends to rank r + P/2 (with
 * P/2 ranks per node, every pair crosses the same two nodes). For each K in
 * --streams every sender posts K messages of S bytes at once (MPI_Isend,
 * matched by K MPI_Irecv), the receivers answer with an empty message when
 * all have arrived, and the time is the largest over senders, median of R.
 * Prints one line per K:
 *   streams K pairs Q bytes S time(s) GB/s
 * where GB/s is the bytes sent by all pairs over the time (1e9 B/s). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#define MAXK 16

static int cmp_dbl(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* One round of K concurrent messages of S bytes per pair; returns the time
 * on this rank (senders: until the answer arrived; receivers: 0). */
static double round_trip(char *buf, long long S, int K, int rank, int half) {
  MPI_Request rq[MAXK];
  int sender = rank < half, peer = sender ? rank + half : rank - half;
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  for (int k = 0; k < K; k++) {
    char *p = buf + (size_t)k * (size_t)S;
    if (sender) MPI_Isend(p, (int)S, MPI_BYTE, peer, k, MPI_COMM_WORLD, &rq[k]);
    else MPI_Irecv(p, (int)S, MPI_BYTE, peer, k, MPI_COMM_WORLD, &rq[k]);
  }
  MPI_Waitall(K, rq, MPI_STATUSES_IGNORE);
  if (sender) MPI_Recv(NULL, 0, MPI_BYTE, peer, MAXK, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  else MPI_Send(NULL, 0, MPI_BYTE, peer, MAXK, MPI_COMM_WORLD);
  return sender ? MPI_Wtime() - t0 : 0.0;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, P;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  long long S = 8 << 20;
  int ks[MAXK] = {1, 2, 4}, nk = 3, reps = 3, bad = P % 2 != 0;
  for (int a = 1; a < argc && !bad; a++) {
    const char *v = a + 1 < argc ? argv[a + 1] : "";
    if (!strcmp(argv[a], "--bytes")) S = atoll(v), a++;
    else if (!strcmp(argv[a], "--reps")) reps = atoi(v), a++;
    else if (!strcmp(argv[a], "--streams")) {
      nk = 0;
      for (const char *p = v; *p && nk < MAXK;) {
        char *end = NULL;
        long k = strtol(p, &end, 10);
        if (end == p || k < 1 || k > MAXK) {
          bad = 1;
          break;
        }
        ks[nk++] = (int)k;
        p = *end == ',' ? end + 1 : end;
      }
      bad |= nk == 0, a++;
    } else bad = 1;
  }
  bad |= S < 1 || S > (1LL << 30) || reps < 1 || reps > 64;
  if (bad) {
    if (rank == 0)
      fprintf(stderr,
              "usage: flow_sim [--bytes S (1..2^30)] [--streams 1,2,4 (1..%d)] [--reps R (1..64)] "
              "on an even number of ranks\n",
              MAXK);
    MPI_Finalize();
    return 2;
  }
  int kmax = 1;
  for (int i = 0; i < nk; i++) kmax = ks[i] > kmax ? ks[i] : kmax;
  char *buf = calloc((size_t)kmax, (size_t)S);
  if (!buf) {
    fprintf(stderr, "flow_sim: rank %d: out of memory\n", rank);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  int half = P / 2;
  if (rank == 0) printf("# flow_sim: %d pairs, %lld bytes per message\n", half, S);
  for (int i = 0; i < nk; i++) {
    double t[64];
    for (int r = 0; r < reps; r++) {
      double mine = round_trip(buf, S, ks[i], rank, half);
      MPI_Allreduce(&mine, &t[r], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    }
    qsort(t, (size_t)reps, sizeof t[0], cmp_dbl);
    double tm = t[reps / 2];
    if (rank == 0)
      printf("streams %d pairs %d bytes %lld time %.6e GB/s %.3f\n", ks[i], half, S, tm,
             (double)ks[i] * (double)half * (double)S / tm / 1e9);
  }
  free(buf);
  MPI_Finalize();
  return 0;
}
