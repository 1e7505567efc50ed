/* The block-sparse product's cost model against the product itself: a
 * banded n x n matrix of b x b blocks (`band` blocks each side of the
 * diagonal), A A by ovl_bsmat_multiply at eps = 0 on the squarest p x q grid
 * of the ranks (bsumma), for N_DUP 1, 2 and 4: the median of `reps` runs
 * (each the slowest rank's time) against ovl_model_bsmul's prediction on the
 * shape ovl_bsmat_shape counts, with the machine of $OVL_MACHINE (else the
 * built-in one) and the ranks per node of this run; then the plan
 * ovl_plan_resolve_bsmul chooses for these ranks. Rank 0 builds the dense
 * matrix (8 n^2 bytes), so n is at most 8192.
 *
 *   . scripts/env.sh && OVL_MACHINE=machine.json mpiexec -n 4 build/bench/bsmul_validate [n [b [band [reps]]]]
 */
#include <stdio.h>
#include <stdlib.h>

#include "benchutil.h"
#include "ovl/ovl.h"

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, P = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  int64_t n = argc > 1 ? atoll(argv[1]) : 4096;
  int b = argc > 2 ? atoi(argv[2]) : 32, band = argc > 3 ? atoi(argv[3]) : 4, reps = argc > 4 ? atoi(argv[4]) : 5;
  if (n < 64 || n > 8192 || b < 1 || b > n || band < 0 || reps < 1 || reps > 99) {
    if (rank == 0) fprintf(stderr, "usage: bsmul_validate [n in 64..8192 [b [band [reps in 1..99]]]]\n");
    MPI_Finalize();
    return 2;
  }
  ovl_grid2d g = NULL;
  bench_die("bsmul_validate", ovl_grid2d_create(MPI_COMM_WORLD, 0, 0, 0, &g), "ovl_grid2d_create");
  int p = 0, q = 0, ppn = 1, nodes = 1, consec = 1;
  ovl_grid2d_dims(g, &p, &q);
  bench_die("bsmul_validate", ovl_node_ranks(MPI_COMM_WORLD, &ppn, &nodes, &consec), "ovl_node_ranks");
  ovl_bsmat A = NULL, C = NULL;
  bench_band_bsmat("bsmul_validate", g, n, b, band, &A);
  bench_die("bsmul_validate", ovl_bsmat_create_like(A, &C), "ovl_bsmat_create_like");
  ovl_bsmul_shape sh;
  bench_die("bsmul_validate", ovl_bsmat_shape(A, A, &sh), "ovl_bsmat_shape");
  ovl_machine m;
  char src[512];
  bench_die("bsmul_validate", ovl_plan_machine(NULL, &m, src, sizeof src), "the machine");
  if (rank == 0)
    printf("# n=%lld b=%d band=%d: nblk=%lld, blocks %lld, block products %lld, %.3g flops; %d ranks (%dx%d), %d per "
           "node; machine %s\n# %4s %12s %12s %11s %11s %11s %7s\n",
           (long long)n, b, band, (long long)sh.nblk, (long long)sh.blocks_a, (long long)sh.products, sh.flops, P, p, q,
           ppn, src, "ndup", "measured(s)", "predicted(s)", "latency", "bandwidth", "compute", "ratio");
  const int nds[] = {1, 2, 4};
  for (int x = 0; x < 3; x++) {
    double t[99];
    bench_die("bsmul_validate", ovl_bsmat_multiply(A, A, 0, nds[x], C, NULL), "ovl_bsmat_multiply"); /* warm-up */
    for (int r = 0; r < reps; r++) {
      MPI_Barrier(MPI_COMM_WORLD);
      double t0 = ovl_time();
      bench_die("bsmul_validate", ovl_bsmat_multiply(A, A, 0, nds[x], C, NULL), "ovl_bsmat_multiply");
      t[r] = ovl_time() - t0;
      MPI_Allreduce(MPI_IN_PLACE, &t[r], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    }
    qsort(t, (size_t)reps, sizeof t[0], bench_cmp_double);
    ovl_plan c = ovl_plan_default(OVL_ALGO_BSUMMA, n, P);
    c.p = p, c.q = q, c.ndup = nds[x], c.ppn = ppn;
    ovl_model_cost pr;
    bench_die("bsmul_validate", ovl_model_bsmul(&m, &c, &sh, &pr, NULL), "ovl_model_bsmul");
    if (rank == 0)
      printf("  %4d %12.4e %12.4e %11.3e %11.3e %11.3e %7.2f\n", nds[x], t[reps / 2], pr.total, pr.latency,
             pr.bandwidth, pr.compute, pr.total / t[reps / 2]);
  }
  ovl_plan plan = ovl_plan_auto(OVL_FAMILY_BSMUL, n);
  char why[OVL_PLAN_WHY], line[256];
  bench_die("bsmul_validate", ovl_plan_resolve_bsmul(MPI_COMM_WORLD, &plan, &sh, NULL, why, sizeof why),
            "ovl_plan_resolve_bsmul");
  ovl_plan_describe(&plan, line, sizeof line);
  if (rank == 0) printf("# auto: %s (%s)\n", line, why);
  ovl_bsmat_destroy(&A), ovl_bsmat_destroy(&C);
  ovl_grid2d_destroy(&g);
  MPI_Finalize();
  return 0;
}
