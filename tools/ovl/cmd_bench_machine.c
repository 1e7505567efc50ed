/* ovl bench machine: measure the parameters of the cost models and write a
 * machine file (ovl/model.h, docs/design/models.md).
 *
 *   alpha, beta      ping-pong between ranks 0 and 1, Hockney fit (relative
 *                    weights) over sizes up to the eager limit;
 *   alpha_r, beta_r  the same above it;
 *   peak_bw          ranks 0 -> 1 with a window of W messages in flight
 *                    (osu_bw style), the best over the large sizes;
 *   gamma            local dgemm (n = 512) on every rank at once, the slowest;
 *   f_BW             bcast, reduce, allreduce over the first p ranks, p = 2, 4,
 *                    8, ... and P, sizes 1 KiB .. max, effective bandwidth
 *                    2 (p-1) n / p / t, t = median over repetitions of the MAX
 *                    over ranks (the ranks not measuring sleep).
 * The measurement is ovl_bench_machine (ovl/bench.h); this file parses the
 * options, writes the file and prints. */
#include <inttypes.h>
#include <stdio.h>

#include "bench_util.h"

int cmd_bench_machine(int argc, char **argv) {
  int help = 0, quiet = 0, iters = 10, window = 16;
  int64_t eager = 65536, maxsz = (int64_t)16 << 20, mem_limit = 0;
  const char *out = NULL, *name = "this-machine";
  ovl_opt opts[] = {
      {"output", 'o', OVL_OPT_STRING, &out, "FILE", "machine file to write (JSON; required)", NULL, 0, -1},
      {"name", 0, OVL_OPT_STRING, &name, "NAME", "name stored in the file", NULL, 0, -1},
      {"eager", 0, OVL_OPT_SIZE, &eager, "BYTES", "boundary between the two alpha-beta regimes", NULL, 64,
       (int64_t)1 << 26},
      {"max-size", 0, OVL_OPT_SIZE, &maxsz, "BYTES", "largest message measured", NULL, 4096, (int64_t)1 << 30},
      {"window", 'W', OVL_OPT_INT, &window, "W", "messages in flight for peak_bw", NULL, 1, 64},
      {"iterations", 'i', OVL_OPT_INT, &iters, "I", "repetitions per size", NULL, 1, 10000},
      BENCH_OPT_MEM_LIMIT(&mem_limit),
      {"quiet", 'q', OVL_OPT_FLAG, &quiet, NULL, "no progress lines", NULL, 0, -1},
      {"help", 'h', OVL_OPT_FLAG, &help, NULL, "show this help", NULL, 0, -1},
  };
  int prc = cli_parse("usage: mpiexec -n P ovl bench machine -o machine.json [options]\n\n"
                      "Measures the cost models' machine parameters (alpha and beta in two regimes, the peak\n"
                      "bandwidth of many streams, gamma of the local dgemm, f_BW of bcast, reduce and allreduce over\n"
                      "2, 4, 8, ... and P ranks) and writes them to a machine file for `ovl model`, `ovl tune` and\n"
                      "`auto`. Needs at least 2 ranks; ranks 0 and 1 should be on different nodes to measure the\n"
                      "network.",
                      opts, (int)(sizeof opts / sizeof opts[0]), argc, argv, 3, &help, NULL);
  if (prc >= 0) return prc;
  int P = 0, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  ovl_err rc = OVL_OK;
  if (!out) rc = ovl_err_set(OVL_ERR_ARG, "-o FILE is required");
  else if (P < 2) rc = ovl_err_set(OVL_ERR_ARG, "needs at least 2 ranks (got %d)", P);
  if ((rc = ovl_err_agree(MPI_COMM_WORLD, rc)) != OVL_OK) return cli_usage_fail("bench machine", rc);
  {
    const cli_out outs[] = {{out, "machine file"}};
    int orc = cli_check_outputs("bench machine", outs, 1, NULL, 0);
    if (orc >= 0) return orc;
  }

  ovl_bench_machine_params p = ovl_bench_machine_default();
  p.name = name, p.eager = eager, p.max_bytes = maxsz, p.window = window, p.iters = iters, p.mem_limit = mem_limit;
  ovl_bench_reporter prog;
  ovl_bench_reporter_start(&prog, "machine", 4, !quiet);
  p.progress = ovl_bench_reporter_fn, p.progress_ctx = &prog;
  ovl_machine m;
  double gf = 0;
  rc = ovl_bench_machine(&p, &m, &gf);
  if (!rc && rank == 0) rc = ovl_machine_write(&m, out);
  rc = ovl_err_agree(MPI_COMM_WORLD, rc);
  if (!rc) ovl_bench_reporter_step(&prog, "wrote %s", out);
  if (!rc && rank == 0)
    ovl_fprintf(stdout,
                "# ovl bench machine: %d ranks, %s\n# alpha %.3e s  beta %.3e s/B (<= %" PRId64 " B)   alpha_r %.3e s  "
                "beta_r %.3e s/B   peak %.1f MB/s   gamma %.3e s/flop (%.1f GFLOP/s)   %d f_BW tables -> %s\n",
                P, cli_mpi_library(), m.alpha, m.beta, eager, m.alpha_r, m.beta_r, m.peak_bw / 1e6, m.gamma, gf, m.nfbw,
                out);
  return rc ? cli_fail("bench machine", rc) : CLI_OK;
}
