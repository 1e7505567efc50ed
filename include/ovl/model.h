/* ovl models: the Hockney (alpha-beta) point-to-point model and its fit, and
 * the overlap measures of the OSU and Intel MPI benchmarks and NBC-Eff.
 *
 * Pure functions: no MPI, no global state; every function is LOCAL. Times are
 * in seconds and sizes in bytes unless said otherwise. They are what
 * `ovl bench pingpong|coll|nbc` print, so tests can check the printed
 * numbers against hand calculations (tests/test_model.c).
 */
#ifndef OVL_MODEL_H
#define OVL_MODEL_H

#include <stdio.h>

#include "ovl/schema.h" /* the plan and its names: the model needs neither MPI nor the kernels */

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Hockney model: t(s) = alpha + beta * s ---------------------------------
 * alpha is the latency L (seconds), beta the time per byte (1/B, B the
 * asymptotic bandwidth in bytes/s). The achieved bandwidth of one message is
 * s / t(s) = s / (L + s/B), half of B at the size N_half = B * L = alpha / beta
 * (Hockney's r_inf and n_1/2; Tatebe's lecture, papers/004). */

/* Ordinary least squares of time[i] ~ alpha + beta * size[i], i < n.
 * Errors (OVL_ERR_ARG): n < 2, a NULL array, a value that is not finite, or
 * fewer than two distinct sizes. alpha may come out negative when the data
 * are not linear (e.g. an eager/rendezvous protocol switch), and beta <= 0
 * when the times do not grow with the size (e.g. one scheduler tick per
 * message on an oversubscribed machine): the caller decides what to make of
 * it; ovl_bench_pingpong_fit refuses beta <= 0 (status 2, nothing reported).
 * LOCAL. */
ovl_err ovl_hockney_fit(const double *size, const double *time, int n, double *alpha, double *beta);

/* Weighted least squares: minimises sum_i weight[i] * (time[i] - alpha -
 * beta * size[i])^2. weight[i] = 1 / time[i]^2 fits relative errors, so small
 * messages (which fix alpha) count as much as large ones (which fix beta);
 * weight == NULL is that relative weighting. Errors as ovl_hockney_fit, plus
 * a weight that is not finite and > 0 (or a time <= 0 when weight == NULL).
 * LOCAL. */
ovl_err ovl_hockney_fit_weighted(const double *size, const double *time, const double *weight, int n, double *alpha,
                                 double *beta);

/* t(s) = alpha + beta * s. LOCAL. */
static inline double ovl_hockney_time(double alpha, double beta, double s) { return alpha + beta * s; }
/* Model bandwidth s / (L + s/B) in bytes/s (0 when t(s) <= 0). LOCAL. */
static inline double ovl_hockney_bw(double alpha, double beta, double s) {
  double t = alpha + beta * s;
  return t > 0 ? s / t : 0.0;
}
/* N_half = B * L = alpha / beta, bytes (0 when beta <= 0). LOCAL. */
static inline double ovl_hockney_nhalf(double alpha, double beta) { return beta > 0 ? alpha / beta : 0.0; }

/* ---- collectives --------------------------------------------------------- */

/* Effective bandwidth of a collective of n bytes over p ranks that took t
 * seconds: 2 (p - 1) n / p / t bytes/s, the volume of a scatter-allgather
 * broadcast or a Rabenseifner reduction (Huang & Chow, Section V-B). 0 when
 * p < 2 or t <= 0. LOCAL. */
double ovl_coll_eff_bw(double n, int p, double t);

/* ---- overlap of nonblocking collectives with computation --------------------- */

/* OSU micro-benchmarks (osu_i* collectives), in percent:
 *   overlap = max(0, 100 - 100 * (t_overall - (t_compute - t_test)) / t_pure)
 * t_pure: post + wait alone; t_overall: post + computation + wait, with the
 * computation (about t_pure long) calling MPI_Test; t_compute: the
 * computation including those tests; t_test: the time inside the tests.
 * 0 when t_pure <= 0. LOCAL. */
double ovl_overlap_osu(double t_pure, double t_overall, double t_compute, double t_test);

/* Intel MPI Benchmarks, IMB-NBC, in percent:
 *   overlap = 100 * max(0, min(1, (t_pure + t_CPU - t_ovrl) / min(t_pure, t_CPU)))
 * t_pure: the operation alone; t_CPU: the computation while the operation is
 * in flight; t_ovrl: post + computation + wait. 0 when min(t_pure, t_CPU)
 * <= 0. LOCAL. */
double ovl_overlap_imb(double t_pure, double t_cpu, double t_ovrl);

/* NBC-Eff (Nanri et al.): a fixed amount of computation and one operation,
 * run one after the other (t_seq) and overlapped (t_ovl). Returns the
 * speedup t_seq / t_ovl: > 1 means overlapping pays, < 1 that it costs.
 * 0 when t_ovl <= 0. LOCAL. */
double ovl_nbc_eff_speedup(double t_seq, double t_ovl);

/* ==== cost models (Huang-Chow Sections III-A and V-A; HSUMMA Section 4) ====
 * Pure functions of a machine description and a configuration: no MPI, no
 * global state, every function LOCAL. */

/* ---- machine parameters --------------------------------------------------
 * alpha/beta for two message-size regimes (eager up to `eager` bytes,
 * rendezvous above): one stream's latency and time per byte; gamma = seconds
 * per flop of the local dgemm; the peak aggregate bandwidth a node's network
 * interface reaches with many streams (bytes/s; 0: 1/beta_r); and measured
 * effective bandwidths f_BW(n) of collectives over p ranks (bytes/s,
 * 2 (p-1) n / p / t), interpolated log-linearly in n. A machine is kept as a
 * small JSON file (ovl_machine_write/read), made by `ovl bench machine`.
 *
 * Node properties (multiple PPN, Huang & Chow III-B): `cores` per node and
 * `nics` network interfaces per node. With cores > 0, gamma is one core's,
 * and the PPN ranks of a node share its cores: a rank computes at
 * cores / PPN cores' speed, with cores / PPN BLAS threads when there are more
 * cores than ranks (what ovl sets on the active ranks of `--ppn K`) or a
 * time share when there are fewer (ovl_model_gamma). The ranks of a node
 * share its interfaces (peak_bw each; ceil(PPN / nics) ranks per interface),
 * and the ranks of a node are consecutive, so the model knows which members
 * of a collective's group sit on the same node (ovl_model_offnode): with
 * shm_bw > 0 their bytes move at shm_bw instead of the network's rate (a
 * machine measured on one node has shm_bw = 0: its "network" is the shared
 * memory). cores = 0: unknown, every rank computes at gamma (a gamma
 * measured with every rank busy), as before node properties. */
typedef enum ovl_mcoll { OVL_MC_BCAST = 0, OVL_MC_REDUCE, OVL_MC_ALLREDUCE, OVL_MC_ALLGATHER, OVL_MC_N } ovl_mcoll;
enum { OVL_FBW_MAXPTS = 32, OVL_FBW_MAXTAB = 24 };
typedef struct ovl_fbw {
  ovl_mcoll coll;
  int p, npts;
  double size[OVL_FBW_MAXPTS], bw[OVL_FBW_MAXPTS]; /* sizes ascending */
} ovl_fbw;
typedef struct ovl_machine {
  char name[64];
  double alpha, beta;     /* eager regime */
  double alpha_r, beta_r; /* rendezvous regime */
  double eager;           /* bytes */
  double gamma;           /* seconds per flop */
  double peak_bw;         /* bytes/s of one network interface with many streams (0: 1/beta_r) */
  int cores;              /* cores per node (0: unknown; gamma is then per rank) */
  int nics;               /* network interfaces per node (0: 1) */
  double shm_bw;          /* bytes/s of a transfer within a node (0: priced as the network's) */
  int nfbw;
  ovl_fbw fbw[OVL_FBW_MAXTAB];
} ovl_machine;

/* The Huang-Chow Stampede2 example (Section V-A): beta = 1/(12000 MB/s)
 * (MB = 2^20 B) in both regimes and as the peak, alpha = 1 us (the paper
 * neglects it), gamma from their two local 1912^3 products in 0.01794 s (one
 * rank per node); no f_BW tables. LOCAL. */
ovl_machine ovl_machine_stampede2(void);
/* Name of a collective ("bcast", ...) and its inverse. LOCAL. */
const char *ovl_mcoll_name(ovl_mcoll c);
ovl_err ovl_mcoll_parse(const char *name, ovl_mcoll *out);
/* Write / read a machine file (JSON). Errors: OVL_ERR_IO, OVL_ERR_FORMAT
 * (naming the key). LOCAL. */
ovl_err ovl_machine_write(const ovl_machine *m, const char *path);
ovl_err ovl_machine_read(const char *path, ovl_machine *m);
/* Add (or replace) the f_BW table of (coll, p). Errors: OVL_ERR_ARG. LOCAL. */
ovl_err ovl_machine_set_fbw(ovl_machine *m, ovl_mcoll coll, int p, const double *size, const double *bw, int npts);

/* Seconds per flop of one rank when ppn ranks share a node (ppn < 1: 1):
 * gamma when the machine does not know its cores; otherwise gamma / (cores /
 * ppn) with cores / ppn rounded down to whole BLAS threads when ppn <= cores,
 * and gamma * ppn / cores (time-shared cores) when ppn > cores. LOCAL. */
double ovl_model_gamma(const ovl_machine *m, int ppn);
/* The share of a collective's bytes that crosses the network, for groups of
 * p members with rank = base + stride * t (t < p), ranks numbered node by
 * node with ppn consecutive ranks per node: the largest, over the members of
 * every group with base in [0, stride) + blocks of stride * p, of the
 * fraction of the other members on other nodes. 1 when ppn <= 1 or stride
 * >= ppn; 0 when a whole group lives on one node. `groups` is the number of
 * groups (their bases: for each block b < groups / stride, b * stride * p +
 * [0, stride)). LOCAL. */
double ovl_model_offnode(int p, int stride, int groups, int ppn);

/* Point-to-point time of `bytes` in the regime the size falls in. LOCAL. */
double ovl_p2p_time(const ovl_machine *m, double bytes);
/* Measured f_BW(bytes) of coll over p ranks (log-linear interpolation,
 * clamped at the ends); 0 when the machine has no table for (coll, p). */
double ovl_fbw_eval(const ovl_machine *m, ovl_mcoll coll, int p, double bytes);

/* ---- collective models: T = L(p) alpha + m W(p) beta ------------------------ */
typedef enum ovl_cmodel {
  OVL_CM_BINOMIAL = 0,      /* bcast: log2 p rounds of the whole message */
  OVL_CM_SCATTER_ALLGATHER, /* bcast: (log2 p + p - 1) alpha + 2 (p-1)/p m beta */
  OVL_CM_CHAIN,             /* pipelined linear tree, X segments: (X + p - 1)(alpha + m/X beta) */
  OVL_CM_REDUCE_BINOMIAL,   /* reduce: log2 p (alpha + m beta) */
  OVL_CM_RABENSEIFNER,      /* reduce / allreduce: 2 log2 p alpha + 2 (p-1)/p m beta */
  OVL_CM_RING_ALLGATHER,    /* m = gathered total: (p-1) alpha + (p-1)/p m beta */
  OVL_CM_RING_ALLREDUCE     /* 2 (p-1) alpha + 2 (p-1)/p m beta */
} ovl_cmodel;
typedef struct ovl_lw {
  double L, W;
} ovl_lw;
/* L(p) and W(p) of a collective algorithm (segments: X of the chain, >= 1).
 * p <= 1 gives {0, 0}. log2 is the real logarithm, as in the papers. */
ovl_lw ovl_coll_lw(ovl_cmodel a, int p, int segments);
/* L alpha + m W beta with the regime of m (no f_BW tables). */
double ovl_coll_time_ab(const ovl_machine *m, ovl_cmodel a, int p, double bytes, int segments);
/* The default model of each collective for large messages, as Huang-Chow
 * assume: bcast scatter-allgather, reduce and allreduce Rabenseifner,
 * allgather ring. */
ovl_cmodel ovl_cmodel_default(ovl_mcoll c);
/* One collective of m bytes over p ranks split over ndup lanes, all in
 * flight together, on ranks that share their node's link with ppn - 1
 * others: the parts reach an aggregate bandwidth of min(ndup f(m/ndup),
 * peak_bw / ppn), where f is the measured f_BW (or the alpha-beta model's
 * 2 (p-1)/p m / T(m)), plus one part's latency. ndup = ppn = 1 is the plain
 * collective. Returns seconds; *lat (may be NULL) receives its latency part. */
double ovl_coll_time(const ovl_machine *m, ovl_mcoll c, int p, double bytes, int ndup, int ppn, double *lat);

/* N_DUP rule of Huang-Chow III-A: the largest N_DUP <= max with bytes /
 * N_DUP >= n_t (at least 1). LOCAL. */
int ovl_ndup_rule(double bytes, double n_t, int max);
/* The necessary condition N_DUP f_BW(n / N_DUP) >= f_BW(n) for coll over p
 * ranks (alpha-beta f when the machine has no table). */
int ovl_ndup_pays(const ovl_machine *m, ovl_mcoll c, int p, double bytes, int ndup);

/* ---- algorithm models -------------------------------------------------------- */
typedef struct ovl_model_cost {
  double latency;   /* alpha terms */
  double bandwidth; /* beta / f_BW terms */
  double compute;   /* gamma terms */
  double total;     /* with the overlaps the algorithm has (<= the sum) */
} ovl_model_cost;
/* Predict one configuration. Errors (OVL_ERR_ARG / OVL_ERR_GRID) name what
 * does not fit (grid shape, c not dividing s, G not tiling the grid). */
ovl_err ovl_model_predict(const ovl_machine *m, const ovl_plan *cfg, ovl_model_cost *out);

/* ---- the block-sparse product (family OVL_FAMILY_BSMUL) ------------------------
 * C = A B filtered (ovl_bsmat_multiply, ovl/bsmat.h), with the shape of the
 * matrices (ovl_bsmul_shape, ovl/schema.h) besides the plan; b = n / nblk is
 * the mean block size.
 *
 * bsumma, p x q grid: the L = p q SUMMA steps (min(L, nblk) of them carry
 * blocks) each broadcast one process row's panel of A's blocks along the row
 * (q ranks) and one process column's panel of B's along the column (p
 * ranks); a panel of a step holds blocks_a / (p steps) blocks of A (B:
 * blocks_b / (q steps)) with their values and index, 8 bytes each
 * (panel_bytes in src/model/cost.c: the packed form of src/sparse). Step s
 * runs on lane s mod N_DUP and N_DUP steps are in flight: N steps cost one
 * collective of N panels split over N lanes (ovl_coll_time: the aggregate
 * bandwidth min(N f_BW(m), peak / PPN) and one panel's latency). Compute:
 * flops / P at gamma / e(b), e(b) = b / (b + OVL_BSMUL_BHALF) the rate of
 * b x b x b dgemms relative to a large one. Arrival order overlaps the
 * broadcasts and the products: total = max(comm, comp) + min(comm, comp) /
 * steps.
 *
 * bs2.5d, s x s x c grid (c <= s, or s = 1), operands on plane 0: A's and B's blocks of
 * each plane-0 rank broadcast to the c layers, each layer runs ceil(steps /
 * c) of the s x s SUMMA steps, and the partial C's (a layer's products touch
 * min(blocks_c, products / c) blocks) are summed onto plane 0 (a reduce over
 * c ranks); total = broadcasts + sum + the layer's SUMMA as above. More
 * layers: fewer steps per layer, larger broadcast and sum.
 *
 * Every function is LOCAL. */
/* The half-rate block size of the block products: a b x b x b dgemm runs at
 * b / (b + OVL_BSMUL_BHALF) of a large dgemm's rate (docs/design/models.md
 * gives the measurement). */
#define OVL_BSMUL_BHALF 32.0
/* e(b) = b / (b + OVL_BSMUL_BHALF) (0 for b <= 0). */
double ovl_bsmul_dgemm_eff(double b);
/* What the model sees of one prediction (ovl_model_bsmul). */
typedef struct ovl_bsmul_detail {
  double steps;     /* SUMMA steps one layer runs */
  double step_comm; /* seconds of their broadcasts */
  double
      layer_comm; /* bs2.5d: seconds of the broadcasts to the layers and of the sum of the partial C's (0 for bsumma) */
  double flops;   /* per rank */
  double dgemm_eff; /* e(b) */
  double block;     /* b = n / nblk */
} ovl_bsmul_detail;
/* A shape from a fill: nblk blocks per dimension, the fraction fill of
 * them stored in A and in B, spread evenly over the block rows and columns
 * (max(1, fill nblk) per row; products = nblk (fill nblk)^2, exact for any
 * pattern with that many blocks in every block row and column, a banded
 * one too); the other fields 0 (the model's estimates). Errors
 * (OVL_ERR_ARG): n < 1, nblk outside [1, n], fill outside (0, 1]. */
ovl_err ovl_bsmul_shape_estimate(int64_t n, int64_t nblk, double fill, ovl_bsmul_shape *out);
/* Predict the block-sparse product cfg (bsumma or bs2.5d; its grid p x q or
 * s x s x c, or 0: the shape rules of P; ndup; ppn) on shape. detail (may be
 * NULL) receives the parts above. Errors: OVL_ERR_ARG (another algorithm, a
 * shape whose counts are negative or exceed nblk^2 blocks, ndup or ppn out
 * of range), OVL_ERR_GRID (a grid that does not have P ranks, c > s > 1). */
ovl_err ovl_model_bsmul(const ovl_machine *m, const ovl_plan *cfg, const ovl_bsmul_shape *shape, ovl_model_cost *out,
                        ovl_bsmul_detail *detail);
/* Sort cfg[0..n-1] of family OVL_FAMILY_BSMUL by ovl_model_bsmul's total
 * on shape, fastest first; predictions that fail go last. pred (may be
 * NULL) receives the sorted predictions. */
void ovl_model_rank_bsmul(const ovl_machine *m, const ovl_bsmul_shape *shape, ovl_plan *cfg, int n,
                          ovl_model_cost *pred);

/* ---- choosing: candidates of a kernel family, ranked by the model ------------- */
/* The configurations `ovl tune` and `auto` consider for P ranks and size n
 * (at most cap; returns how many): GEMM: SUMMA b in {128, 256, 512} with and
 * without lookahead, N_DUP 1/2/4; HSUMMA with lookahead for every square G
 * that tiles the grid; Cannon on a square P; 3D on a cube; 2.5D for every c;
 * SSC: Alg. 3, 4, Alg. 5 with N_DUP 1..8 (cube P), Alg. 6 for every c with
 * N_DUP 1/2/4; SQ: sq for every c with N_DUP 1/2/4; BSMUL: bsumma on the
 * squarest p x q and bs2.5d for every c > 1 with s s c = P and c <= s (or s = 1), each
 * with N_DUP 1/2/4 (the N_DUP candidates are the knob table's; rank them with
 * ovl_model_rank_bsmul). */
int ovl_model_candidates(ovl_family f, int64_t n, int P, ovl_plan *out, int cap);
/* Sort cfg[0..n-1] by predicted total time, fastest first; predictions that
 * fail go last. pred (may be NULL) receives the sorted predictions. */
void ovl_model_rank(const ovl_machine *m, ovl_plan *cfg, int n, ovl_model_cost *pred);

/* HSUMMA (Section 4.3, scatter-allgather broadcast): the sign of
 * dT/dG = (G - sqrt p)/(G sqrt G) (n alpha / b - 2 n^2 beta / p) decides:
 * alpha/beta > 2 n b / p makes G = sqrt(p) the minimum (returns sqrt p,
 * rounded to a divisor tiling), otherwise G = 1 (SUMMA). */
int ovl_hsumma_gopt(double alpha, double beta, int64_t n, int64_t b, int P);
/* The paper's HSUMMA communication time, scatter-allgather broadcast, square
 * grid of P ranks, G groups: latency + bandwidth (Section 4.2). */
double ovl_hsumma_comm_sag(double alpha, double beta, int64_t n, int64_t b, int64_t M, int P, int G);

/* ---- the table of `ovl model` ---------------------------------------------------
 * Predict base (a complete configuration: algorithm, n, P, ...; c = 0 for
 * 2.5D and Alg. 6: the largest c that fits) on m, or a sweep over one of its
 * parameters, and print it: header lines naming the kernel, n, P, the
 * machine (source: where it came from; NULL: its name) and its parameters,
 * then one row per configuration (latency, bandwidth, compute and total
 * seconds, GFLOP/s; or the model's error); or (json) one "model" record per
 * configuration (docs/guides/cli.md; a configuration that does not fit has
 * "error"). sweep: "none" (base alone); "G" (HSUMMA, every G that divides P
 * and tiles the near-square grid); "ndup" (1 .. maxv); "c" (2.5D, or Alg. 6
 * for SymmSquareCube, every c with s*s*c = P and c | s); "ppn" (P nodes of
 * K = 1, 2, 4, ... <= maxv ranks); "P" (powers of 2 up to P, cubes for 3D
 * and Alg. 3-5); "algo" (every dense algorithm, HSUMMA with ovl_hsumma_gopt's
 * G).
 * LOCAL (no MPI calls). Errors: OVL_ERR_ARG (NULL arguments, an unknown
 * sweep), those of the record writer. */
ovl_err ovl_model_print(FILE *out, const ovl_machine *m, const char *source, const ovl_plan *base, const char *sweep,
                        int maxv, int json);
/* ovl_model_print for the block-sparse product (base->algo bsumma or
 * bs2.5d) on shape: a header line with the shape, then the rows; the
 * sweeps "none", "ndup", "c" (bs2.5d for every c with s*s*c = P, c <= s or s = 1),
 * "ppn", "P" and "algo" (bsumma and bs2.5d); JSON records carry the shape
 * (nblk, blocks_a, blocks_b, products) and the model's parts (steps,
 * step_comm, layer_comm, dgemm_eff). ovl_model_print is this with shape
 * NULL (the dense kernels; "algo" then sweeps the dense algorithms). LOCAL.
 * Errors: those of ovl_model_print; OVL_ERR_ARG (a block-sparse base
 * without a shape). */
ovl_err ovl_model_print_bsmul(FILE *out, const ovl_machine *m, const char *source, const ovl_plan *base,
                              const ovl_bsmul_shape *shape, const char *sweep, int maxv, int json);

#ifdef __cplusplus
}
#endif
#endif
