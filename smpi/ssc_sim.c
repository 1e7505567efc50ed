/* ssc_sim: time SymmSquareCube (D -> D^2, D^3) for a random symmetric D, per
 * algorithm and N_DUP, as Huang & Chow's Tables I, II, III and V report it:
 * TFLOP/s = 2 products x 2 n^3 flop / time. Built in SMPI builds (smpi/, see
 * docs/guides/smpi.md); it is an ordinary MPI program and runs under mpiexec too.
 *
 * usage: ssc_sim -n N [--algo alg3,alg4,alg5] [--ndup 1,2,4] [--grid SxSxC]
 *                [--backend own|mpi] [--reps R] [--warmup W] [--check] [--volume]
 *                [--arrival-order on|off]
 * Prints one line per (algorithm, N_DUP):
 *   alg ndup n grid ranks t_med(s) tflops t_comm(s) t_comp(s) check
 * --volume adds, after each, the bytes one more run sends between nodes
 * (ovl_volume_*: ovl's own collectives and point-to-point sends), per node
 * (the sum over its ranks), MB = 1e6 B, as Huang & Chow's Table IV:
 *   volume algA ndup=D nodes=K max_node_MB mean_node_MB bcast_MB reduce_MB p2p_MB other_MB
 * (the last four: the busiest node's, by kind). --arrival-order on: Algorithm 5
 * multiplies each lane's part as it arrives (ovl_plan.arrival; default off).
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

static int g_arrival; /* --arrival-order on */

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
  p.arrival = g_arrival;
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

/* One more run of (alg, ndup) with the message volume counted: print the
 * inter-node bytes per node (max and mean over nodes, and the busiest node's
 * by kind) on rank 0. Returns the number of failures. */
static int volume_one(int64_t n, ovl_algo alg, int ndup, ovl_backend be, int s, int c) {
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  ovl_coll_cfg cc = ovl_coll_cfg_default();
  cc.backend = be;
  ovl_bench_ssc_h h = NULL;
  double t;
  ovl_volume v;
  ovl_err rc = ovl_bench_ssc_open(MPI_COMM_WORLD, alg, ndup, s, alg == OVL_ALGO_SSC6 ? c : 0, n, &cc, &h);
  if (!rc) rc = ovl_volume_start(MPI_COMM_WORLD);
  if (!rc) rc = ovl_bench_ssc_once(h, &t);
  if (!rc) rc = ovl_volume_get(&v);
  ovl_volume_stop();
  ovl_bench_ssc_close(&h);
  if (rc) {
    if (rank == 0) fprintf(stderr, "ssc_sim: volume: %s\n", ovl_errmsg());
    return 1;
  }
  /* per node: sum over its ranks (node comm), then max and mean over nodes */
  MPI_Comm nc, lc;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &nc);
  int nr;
  MPI_Comm_rank(nc, &nr);
  double node[OVL_VOL_KINDS + 1] = {0}, mine[OVL_VOL_KINDS + 1] = {0};
  for (int k = 0; k < OVL_VOL_KINDS; k++) mine[k] = v.offnode[k], mine[OVL_VOL_KINDS] += v.offnode[k];
  MPI_Allreduce(mine, node, OVL_VOL_KINDS + 1, MPI_DOUBLE, MPI_SUM, nc);
  MPI_Comm_split(MPI_COMM_WORLD, nr == 0 ? 0 : MPI_UNDEFINED, rank, &lc);
  if (lc != MPI_COMM_NULL) {
    int nn, lr;
    MPI_Comm_size(lc, &nn);
    MPI_Comm_rank(lc, &lr);
    struct {
      double v;
      int r;
    } in = {node[OVL_VOL_KINDS], lr}, mx;
    double sum = 0, kinds[OVL_VOL_KINDS];
    MPI_Allreduce(&in, &mx, 1, MPI_DOUBLE_INT, MPI_MAXLOC, lc);
    MPI_Reduce(&node[OVL_VOL_KINDS], &sum, 1, MPI_DOUBLE, MPI_SUM, 0, lc);
    if (mx.r == lr) memcpy(kinds, node, sizeof kinds);
    MPI_Bcast(kinds, OVL_VOL_KINDS, MPI_DOUBLE, mx.r, lc);
    if (lr == 0)
      printf("  volume alg%d ndup=%d nodes=%d %10.2f %10.2f %10.2f %10.2f %10.2f %10.2f\n",
             3 + (int)(alg - OVL_ALGO_SSC3), ndup, nn, mx.v / 1e6, sum / nn / 1e6, kinds[OVL_VOL_BCAST] / 1e6,
             kinds[OVL_VOL_REDUCE] / 1e6, kinds[OVL_VOL_P2P] / 1e6, kinds[OVL_VOL_OTHER] / 1e6);
    fflush(stdout);
    MPI_Comm_free(&lc);
  }
  MPI_Comm_free(&nc);
  return 0;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, P;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  int64_t n = 1000;
  int algs[MAXL] = {5}, nalg = 1, ndups[MAXL] = {ovl_knob_default_int(OVL_KNOB_NDUP, OVL_FAMILY_SSC)}, nnd = 1,
      reps = 2, warm = 1, check = 0, s = 0, c = 0, vol = 0;
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
    else if (!strcmp(argv[a], "--volume")) vol = 1;
    else if (!strcmp(argv[a], "--arrival-order"))
      bad = strcmp(v, "on") && strcmp(v, "off"), g_arrival = !strcmp(v, "on"), a++;
    else bad = 1;
    if (bad || n < 1 || reps < 1 || reps > 64 || warm < 0) {
      if (rank == 0)
        fprintf(stderr,
                "ssc_sim: bad argument '%s'\nusage: ssc_sim -n N [--algo alg3,alg4,alg5,alg6] [--ndup 1,2,4] "
                "[--grid SxSxC] [--backend own|mpi] [--reps R] [--warmup W] [--check] [--volume] [--arrival-order "
                "on|off]\n",
                argv[a < argc ? a : argc - 1]);
      MPI_Finalize();
      return 2;
    }
  }
  int fails = 0;
  if (rank == 0)
    printf("# ssc_sim: %d ranks, n=%lld, backend %s, arrival order %s\n", P, (long long)n,
           be == OVL_BACKEND_OWN ? "own" : "mpi", g_arrival ? "on" : "off");
  if (rank == 0) printf("# alg ndup     n grid       ranks     t_med(s)   tflops   t_comm(s)   t_comp(s) check\n");
  for (int ia = 0; ia < nalg; ia++)
    for (int id = 0; id < nnd; id++) {                         /* one call per configuration: each gets a fresh grid */
      ovl_algo alg = (ovl_algo)(OVL_ALGO_SSC3 + algs[ia] - 3); /* --algo alg3..alg6 */
      int gs = s, gc = c;
      if (alg != OVL_ALGO_SSC6 && gc != gs) gs = gc = 0; /* Algorithms 3-5: the p^3 grid */
      fails += run_one(n, alg, ndups[id], be, warm, reps, check, gs, gc);
      if (vol) fails += volume_one(n, alg, ndups[id], be, gs, gc);
    }
  MPI_Finalize();
  return fails ? 1 : 0;
}
