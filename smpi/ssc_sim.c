/* ssc_sim: time SymmSquareCube (D -> D^2, D^3) for a random symmetric D, per
 * algorithm and N_DUP, as Huang & Chow's Tables I, II, III and V report it:
 * TFLOP/s = 2 products x 2 n^3 flop / time. Built in SMPI builds (smpi/, see
 * docs/smpi.md); it is an ordinary MPI program and runs under mpiexec too.
 *
 * usage: ssc_sim -n N [--algo alg3,alg4,alg5] [--ndup 1,2,4] [--grid SxSxC]
 *                [--backend own|mpi] [--reps R] [--warmup W] [--check]
 * Prints one line per (algorithm, N_DUP):
 *   alg ndup n grid ranks t_med(s) tflops t_comm(s) t_comp(s) check
 * The time of one run is the MAX over ranks; t_med is the median over runs.
 * The measurement is ovl_bench_ssc, the benchmark of `ovl bench ssc`
 * (ovl/bench.h): D is a random symmetric matrix scaled by 1/sqrt(n), and
 * --check compares D^2 x and D^3 x with repeated matrix-vector products
 * (relerr <= 1e-10). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ovl/ovl.h"

#define MAXL 16

static int parse_list(const char *s, int *out, int max, int alg) {
  int n = 0;
  const char *p = s;
  while (*p && n < max) {
    if (alg && strncmp(p, "alg", 3) == 0) p += 3;
    char *end = NULL;
    long v = strtol(p, &end, 10);
    if (end == p) return -1;
    out[n++] = (int)v;
    p = *end == ',' ? end + 1 : end;
  }
  return n;
}

/* One (algorithm, N_DUP) on an s x s x c grid (0: the default grid): time it
 * with ovl_bench_ssc (the benchmark of `ovl bench ssc`), print a line on
 * rank 0. Returns the number of failures. */
static int run_one(int64_t n, ovl_algo alg, int ndup, ovl_backend be, int warm, int reps, int check, int s, int c) {
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  ovl_bench_ssc_params p = ovl_bench_ssc_default();
  p.n = n, p.algs[0] = alg, p.nalgs = 1, p.ndups[0] = ndup, p.nndups = 1;
  if (alg == OVL_ALGO_SSC6) p.s25 = s, p.c25 = c;
  else p.cube_s = s;
  p.allow_idle = 1, p.cfg.backend = be, p.iters = reps, p.warmup = warm, p.check = check, p.seed = 7;
  p.mem_limit = -1; /* simulated ranks: no memory gate (OVL_SMPI_FLOPS=skip shares their buffers) */
  ovl_bench_ssc_result res;
  if (ovl_bench_ssc(&p, &res) != OVL_OK) {
    if (rank == 0) fprintf(stderr, "ssc_sim: %s\n", ovl_errmsg());
    return 1;
  }
  const ovl_bench_ssc_row *r = &res.rows[0];
  int ok = !check || r->relerr <= 1e-10;
  if (!ok && rank == 0) fprintf(stderr, "ssc_sim: check: relerr %.3e\n", r->relerr);
  if (rank == 0) {
    char grid[32];
    snprintf(grid, sizeof grid, "%dx%dx%d", r->s, r->s, r->c);
    double tm = r->st.median;
    printf("  alg%d %4d %5lld %-10s %5d %12.6e %8.3f %11.4e %11.4e %s\n", 3 + (int)(alg - OVL_ALGO_SSC3), ndup,
           (long long)n, grid, r->s * r->s * r->c, tm, 4.0 * (double)n * (double)n * (double)n / tm / 1e12,
           r->st_comm.median, r->st_comp.median, check ? (ok ? "PASS" : "FAIL") : "-");
    fflush(stdout);
  }
  ovl_bench_ssc_free(&res);
  return !ok;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, P;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  int64_t n = 1000;
  int algs[MAXL] = {5}, nalg = 1, ndups[MAXL] = {4}, nnd = 1, reps = 2, warm = 1, check = 0, s = 0, c = 0;
  ovl_backend be = OVL_BACKEND_OWN;
  for (int a = 1; a < argc; a++) {
    const char *v = a + 1 < argc ? argv[a + 1] : "";
    int bad = 0;
    if (!strcmp(argv[a], "-n")) n = atoll(v), a++;
    else if (!strcmp(argv[a], "--algo")) bad = (nalg = parse_list(v, algs, MAXL, 1)) <= 0, a++;
    else if (!strcmp(argv[a], "--ndup")) bad = (nnd = parse_list(v, ndups, MAXL, 0)) <= 0, a++;
    else if (!strcmp(argv[a], "--grid")) bad = sscanf(v, "%dx%dx%d", &s, &s, &c) != 3, a++;
    else if (!strcmp(argv[a], "--backend")) bad = ovl_backend_parse(v, &be) != OVL_OK, a++;
    else if (!strcmp(argv[a], "--reps")) reps = atoi(v), a++;
    else if (!strcmp(argv[a], "--warmup")) warm = atoi(v), a++;
    else if (!strcmp(argv[a], "--check")) check = 1;
    else bad = 1;
    if (bad || n < 1 || reps < 1 || reps > 64 || warm < 0) {
      if (rank == 0)
        fprintf(stderr,
                "ssc_sim: bad argument '%s'\nusage: ssc_sim -n N [--algo alg3,alg4,alg5,alg6] [--ndup 1,2,4] "
                "[--grid SxSxC] [--backend own|mpi] [--reps R] [--warmup W] [--check]\n",
                argv[a < argc ? a : argc - 1]);
      MPI_Finalize();
      return 2;
    }
  }
  int fails = 0;
  if (rank == 0)
    printf("# ssc_sim: %d ranks, n=%lld, backend %s\n", P, (long long)n, be == OVL_BACKEND_OWN ? "own" : "mpi");
  if (rank == 0) printf("# alg ndup     n grid       ranks     t_med(s)   tflops   t_comm(s)   t_comp(s) check\n");
  for (int ia = 0; ia < nalg; ia++)
    for (int id = 0; id < nnd; id++) {                         /* one call per configuration: each gets a fresh grid */
      ovl_algo alg = (ovl_algo)(OVL_ALGO_SSC3 + algs[ia] - 3); /* --algo alg3..alg6 */
      int gs = s, gc = c;
      if (alg != OVL_ALGO_SSC6 && gc != gs) gs = gc = 0; /* Algorithms 3-5: the p^3 grid */
      fails += run_one(n, alg, ndups[id], be, warm, reps, check, gs, gc);
    }
  MPI_Finalize();
  return fails ? 1 : 0;
}
