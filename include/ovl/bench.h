/* The instruments: micro-benchmarks as library functions.
 *
 * Each benchmark takes a parameter struct (initialise it with its
 * `*_default()` function, then change what differs) and fills a result
 * record: plain C structs, with an array of per-size rows where there are
 * sizes. Results are the same on every rank of the communicator unless a
 * field says otherwise; `ovl_bench_*_free` releases the rows (LOCAL,
 * NULL-safe). Bad parameters give OVL_ERR_ARG, agreed over the communicator,
 * before anything is allocated or sent; the memory a benchmark needs is
 * checked against the node first (OVL_ERR_NOMEM, agreed; `mem_limit` is
 * bytes per rank, 0 for the node's available memory shared among its ranks,
 * < 0 for no check). Once data has started moving, a failure is ovl_fatal.
 *
 * Conventions (docs/design/style.md, rule 10): the time of a repetition is the MAX
 * over the ranks taking part; statistics (ovl_stats) are min/median/max over
 * the timed repetitions; warm-up repetitions are excluded. Buffers rotate
 * through an arena of `cache_bytes` per rank and role, so that caches cannot
 * flatter repeated repetitions (0: one buffer, warm in cache). */
#ifndef OVL_BENCH_H
#define OVL_BENCH_H

#include <stdint.h>
#include <stdio.h>

#include "ovl/comm.h"
#include "ovl/core.h"
#include "ovl/model.h"
#include "ovl/plan.h"
#include "ovl/ssc.h"

/* ---- progress ---------------------------------------------------------------
 * A benchmark reports each finished step (a size, a round) through an
 * optional callback, called on the ranks that take part in the step (every
 * rank of the communicator; ping-pong: the ranks of the pairs): done steps,
 * total steps and a short text ("1024 B: t_med 3.2 us"). The callback must
 * not communicate. */
typedef void (*ovl_bench_progress_fn)(void *ctx, int done, int total, const char *text);

/* The standard reporter: "ovl bench <what>: [done/total] <text> (<elapsed> s)"
 * on stderr of world rank 0, unless off. total > 0 fixes the count shown
 * (for callers that add steps of their own); 0 takes the benchmark's. */
typedef struct ovl_bench_reporter {
  const char *what;
  int on, total, done;
  double t0;
} ovl_bench_reporter;

/* Start a reporter (the clock starts now). LOCAL. Always OVL_OK. */
ovl_err ovl_bench_reporter_start(ovl_bench_reporter *r, const char *what, int total, int on);
/* One step with a printf-style text. LOCAL. Always OVL_OK. */
ovl_err ovl_bench_reporter_step(ovl_bench_reporter *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* An ovl_bench_progress_fn for a reporter (ctx: ovl_bench_reporter *); a
 * callback, so it returns nothing. LOCAL. */
void ovl_bench_reporter_fn(void *ctx, int done, int total, const char *text);

/* ---- sizes, node, memory ------------------------------------------------------ */

/* The OSU size loop: lo, 2 lo, 4 lo, ... while <= hi, then hi itself when the
 * doubling missed it (lo = 0 counts as 1). Writes at most cap sizes to out
 * (out may be NULL) and *n receives how many there are. LOCAL.
 * Errors: OVL_ERR_ARG (cap < 0). */
ovl_err ovl_bench_sizes(int64_t lo, int64_t hi, int64_t *out, int cap, int *n);

/* Deprecated, removed next release: ovl_node_llc_bytes (ovl/node.h). */
ovl_err ovl_bench_llc_bytes(int64_t *bytes);

/* Deprecated, removed next release: ovl_node_ranks (ovl/node.h). */
ovl_err ovl_bench_node_info(MPI_Comm comm, int *ranks_on_node, int *nodes, int *consecutive);

/* Default per-rank size of one rotating buffer arena: 2 x the last-level
 * cache, lowered so that `roles` arenas on each of the node's ranks fit in
 * half of MemAvailable (ovl_mem_available); *capped says whether it was
 * lowered. In SMPI builds 0 (no arena): simulated time does not depend on
 * caches, and all simulated ranks share one host process's memory. The same
 * on every rank. COLLECTIVE over comm. Errors: OVL_ERR_MPI. */
ovl_err ovl_bench_default_cache_bytes(MPI_Comm comm, int roles, int64_t *bytes, int *capped);

/* The memory gate of every benchmark: OVL_ERR_NOMEM (agreed) when `bytes` per
 * rank (summed in double by the caller) exceeds limit (> 0) or the node's
 * MemAvailable shared among its ranks (ovl_check_memory), or 2^62.
 * COLLECTIVE over comm. limit < 0: no check (a simulator whose
 * ranks share memory). */
ovl_err ovl_bench_check_memory(MPI_Comm comm, double bytes, int64_t limit);

/* ---- collectives by name ------------------------------------------------------ */

typedef enum ovl_bench_op {
  OVL_BENCH_BCAST = 0,
  OVL_BENCH_REDUCE,
  OVL_BENCH_ALLREDUCE,
  OVL_BENCH_ALLGATHER,
  OVL_BENCH_ALLTOALL
} ovl_bench_op;
/* {"bcast", "reduce", "allreduce", "allgather", "alltoall", NULL} */
extern const char *const ovl_bench_op_names[];
/* LOCAL. Errors: OVL_ERR_ARG (unknown name). */
ovl_err ovl_bench_op_parse(const char *name, ovl_bench_op *op);
/* Set the own back end's algorithm of op in cfg. LOCAL. Errors: OVL_ERR_ARG. */
ovl_err ovl_bench_op_set_alg(ovl_bench_op op, ovl_alg alg, ovl_coll_cfg *cfg);

/* ---- ping-pong ----------------------------------------------------------------
 * Pair i is rank i and rank half + i of comm, i < pairs (half = 0: P/2); all
 * pairs run at once, the other ranks sleep. window == 0: the low rank sends s
 * bytes (MPI_BYTE), the high rank sends them back; the time is the one-way
 * time, round trip / 2 (osu_latency). window W > 0: the low rank posts W
 * MPI_Isend, the high rank W MPI_Irecv, then a 1-byte acknowledgement comes
 * back (osu_bw); the time is the window's time / W (W is lowered to the
 * messages that fit in the arena when cache_bytes > 0). Each repetition is
 * timed on the senders; MAX over the senders. */
typedef struct ovl_bench_pingpong_params {
  MPI_Comm comm;                  /* default MPI_COMM_WORLD */
  int64_t min_bytes, max_bytes;   /* OSU size loop; default 1 .. 64 MiB, max <= 2^31-1 */
  int iters, warmup;              /* per size up to `large`: default 1000, 100 */
  int iters_large, warmup_large;  /* per size above `large`: default 100, 10 */
  int64_t large;                  /* default 65536 */
  int pairs, half, window;        /* default 1, 0 (P/2), 0 */
  int64_t cache_bytes;            /* arena per rank and role (send, receive); default 0 */
  int64_t mem_limit;              /* bytes per rank (0: the node's available memory) */
  int barrier;                    /* 1: a barrier of the pairs before every repetition; default 0 */
  ovl_bench_progress_fn progress; /* may be NULL */
  void *progress_ctx;
} ovl_bench_pingpong_params;

typedef struct ovl_bench_pingpong_row {
  int64_t bytes;
  int iters, window; /* the window used at this size (0: ping-pong) */
  ovl_stats st;      /* one-way time (ping-pong) or time per message (window), seconds */
} ovl_bench_pingpong_row;

typedef struct ovl_bench_pingpong_result {
  int ranks, pairs, half, nrows;
  ovl_bench_pingpong_row *rows; /* nrows, sizes ascending */
} ovl_bench_pingpong_result;

/* LOCAL. */
ovl_bench_pingpong_params ovl_bench_pingpong_default(void);
/* COLLECTIVE over p->comm. Errors: OVL_ERR_ARG (fewer than 2 ranks, pairs >
 * P/2 or half too small, sizes above 2^31-1, counts < 1), OVL_ERR_NOMEM. */
ovl_err ovl_bench_pingpong(const ovl_bench_pingpong_params *p, ovl_bench_pingpong_result *res);
/* LOCAL, NULL-safe. */
ovl_err ovl_bench_pingpong_free(ovl_bench_pingpong_result *res);

/* The Hockney fit t = alpha + beta s over the rows with lo <= bytes <= hi
 * (hi == 0: all) of the median times, least relative squares (absolute = 0)
 * or ordinary least squares. status: 0 fitted, 1 fewer than 2 sizes, 2 the
 * sizes do not follow one line (beta <= 0). alpha and beta are 0 unless
 * status == 0: a fit never reports beta <= 0. LOCAL. Always OVL_OK. */
typedef struct ovl_bench_fit {
  double alpha, beta, n_half; /* s, s/B, B */
  int nfit, status;
  int absolute; /* the weighting asked for: 1 ordinary, 0 relative least squares */
} ovl_bench_fit;
ovl_err ovl_bench_pingpong_fit(const ovl_bench_pingpong_row *rows, int nrows, int64_t lo, int64_t hi, int absolute,
                               ovl_bench_fit *fit);

/* ---- collective bandwidth ------------------------------------------------------
 * Huang & Chow, Section V-B (Fig. 4-6). Ranks form nodes of K = ppn
 * consecutive ranks; communicator c holds the c-th rank of every node
 * (p = P/K ranks). For a message of n bytes:
 *   blocking  one collective of n bytes on communicator 0 (one rank per node,
 *             the others sleep), posted and waited at once;
 *   ndup      the same ranks, the message split over ndup lanes, waitall;
 *   ppn       all K communicators at once, each moving n/K.
 * Effective bandwidth = 2(p-1)n/p / t_median (ovl_coll_eff_bw), in B/s. */
enum { OVL_BENCH_BLOCKING = 0, OVL_BENCH_NDUP = 1, OVL_BENCH_PPN = 2, OVL_BENCH_NCASES = 3 };

typedef struct ovl_bench_coll_params {
  MPI_Comm comm;                /* default MPI_COMM_WORLD */
  ovl_bench_op op;              /* default bcast (root 0; sum for reductions) */
  ovl_coll_cfg cfg;             /* back end and algorithms */
  int64_t min_bytes, max_bytes; /* default 8 .. 16 MiB; rounded to whole doubles (p blocks for allgather/alltoall) */
  int ndup, ppn;                /* default 4, 1 */
  int iters, warmup;            /* default 20, 2 */
  int64_t cache_bytes, mem_limit;
  const char *timeline;   /* also trace every case at one size: PREFIX(.json) -> PREFIX.json, .csv */
  int64_t timeline_bytes; /* 0: the largest size */
  int timeline_reps;      /* default 3 */
  ovl_bench_progress_fn progress;
  void *progress_ctx;
} ovl_bench_coll_params;

typedef struct ovl_bench_coll_row {
  int64_t bytes;                  /* the bytes that really move */
  ovl_stats st[OVL_BENCH_NCASES]; /* seconds */
  double bw[OVL_BENCH_NCASES];    /* effective bandwidth, B/s */
} ovl_bench_coll_row;

typedef struct ovl_bench_coll_result {
  int ranks, ppn, p, ndup, nrows;
  int64_t arena_bytes;    /* bytes of one rotating arena (0 when cache_bytes == 0) */
  int64_t timeline_bytes; /* the size traced (0: no timeline) */
  ovl_bench_coll_row *rows;
} ovl_bench_coll_result;

/* LOCAL. */
ovl_bench_coll_params ovl_bench_coll_default(void);
/* COLLECTIVE over p->comm. Errors: OVL_ERR_ARG (ppn does not divide P, p < 2,
 * bad op or counts), OVL_ERR_NOMEM, errors of the tracer's files. */
ovl_err ovl_bench_coll(const ovl_bench_coll_params *p, ovl_bench_coll_result *res);
/* LOCAL, NULL-safe. */
ovl_err ovl_bench_coll_free(ovl_bench_coll_result *res);

/* ---- overlap of a nonblocking collective: OSU, IMB, NBC-Eff ----------------------
 *  osu  t_pure = post + wait; then post, compute for t_pure (this rank's mean)
 *       in ntests parts each followed by one ovl_req_test, wait; means over
 *       repetitions and ranks; overlap = ovl_overlap_osu.
 *  imb  a computation calibrated to t_pure without MPI calls inside; the
 *       values of the rank with the largest t_ovrl; overlap = ovl_overlap_imb.
 *  eff  NBC-Eff: a fixed computation (compute_us, converted once into kernel
 *       calls at the fastest rank's speed) after the collective (seq) and
 *       overlapped with it (ovl, ntests tests inside); per repetition MAX over
 *       ranks, median; speedup = t_seq / t_ovl (ovl_nbc_eff_speedup), ideal =
 *       t_seq / max(t_comm, t_comp). */
enum { OVL_BENCH_OSU = 1, OVL_BENCH_IMB = 2, OVL_BENCH_EFF = 4 };

typedef struct ovl_bench_nbc_params {
  MPI_Comm comm; /* default MPI_COMM_WORLD */
  ovl_bench_op op;
  ovl_coll_cfg cfg;
  int64_t min_bytes, max_bytes; /* default 8 .. 1 MiB */
  int modes;                    /* OVL_BENCH_OSU | IMB | EFF (default all) */
  int ntests;                   /* default 10 */
  double compute_us;            /* default 1000, in [0, 1e9] */
  int iters, warmup;            /* default 20, 3 */
  int64_t cache_bytes, mem_limit;
  ovl_bench_progress_fn progress;
  void *progress_ctx;
} ovl_bench_nbc_params;

typedef struct ovl_bench_nbc_row {
  int64_t bytes;
  /* osu: means over repetitions and ranks */
  double osu_pure, osu_overall, osu_compute, osu_test, osu_init, osu_wait, osu_overlap_pct;
  /* imb: the rank with the largest t_ovrl */
  double imb_pure, imb_cpu, imb_ovrl, imb_overlap_pct;
  int64_t imb_calls;
  /* eff: medians of the per-repetition MAX over ranks */
  double eff_comm, eff_comp, eff_seq, eff_ovl, eff_speedup, eff_ideal;
} ovl_bench_nbc_row;

typedef struct ovl_bench_nbc_result {
  int ranks, nrows;
  double kernel_s, kernel_s_min; /* seconds per kernel call: rank 0's, the fastest rank's */
  int64_t eff_calls;             /* kernel calls of the eff computation */
  int64_t arena_bytes;
  ovl_bench_nbc_row *rows;
} ovl_bench_nbc_result;

/* LOCAL. */
ovl_bench_nbc_params ovl_bench_nbc_default(void);
/* COLLECTIVE over p->comm. Errors: OVL_ERR_ARG, OVL_ERR_NOMEM. */
ovl_err ovl_bench_nbc(const ovl_bench_nbc_params *p, ovl_bench_nbc_result *res);
/* LOCAL, NULL-safe. */
ovl_err ovl_bench_nbc_free(ovl_bench_nbc_result *res);

/* ---- progress of a nonblocking broadcast -----------------------------------------
 * For the MPI back end and the own one, per repetition (MAX over ranks),
 * median over repetitions: comm (post, wait), comp (dgemm chunks alone),
 * noprog (post, chunks, wait), prog (post, chunks with ovl_req_progress
 * after every `every` chunks, wait). overlap = (serial - t) / (serial -
 * max(comm, comp)), serial = comm + comp (0 when serial <= max). */
typedef struct ovl_bench_progress_params {
  MPI_Comm comm;     /* default MPI_COMM_WORLD */
  int64_t bytes;     /* broadcast size from rank 0; default 32 MiB */
  int chunks, nb;    /* default 64 chunks of a 192^3 dgemm */
  int every;         /* default 1 */
  ovl_alg alg;       /* own back end's broadcast; default auto */
  int64_t segment;   /* chain segment in bytes (0: the default) */
  int iters, warmup; /* default 5, 1 */
  int64_t mem_limit;
} ovl_bench_progress_params;

typedef struct ovl_bench_progress_row {
  ovl_backend backend;
  double t_comm, t_comp, t_noprog, t_prog, serial, overlap_noprog, overlap_prog;
} ovl_bench_progress_row;

typedef struct ovl_bench_progress_result {
  int ranks;
  ovl_bench_progress_row rows[2]; /* MPI, own */
} ovl_bench_progress_result;

/* LOCAL. */
ovl_bench_progress_params ovl_bench_progress_default(void);
/* COLLECTIVE over p->comm. Errors: OVL_ERR_ARG, OVL_ERR_NOMEM. */
ovl_err ovl_bench_progress(const ovl_bench_progress_params *p, ovl_bench_progress_result *res);

/* ---- SymmSquareCube -----------------------------------------------------------
 * D -> D^2, D^3 (ovl_ssc_run) on a random symmetric D scaled by 1/sqrt(n),
 * for each algorithm and, for alg5 and alg6, each N_DUP. alg3-alg5 run on a
 * cube s x s x s, alg6 on a 2.5D grid s x s x c. Every configuration gets its
 * plan and matrices up front; the repetitions run in rounds, each round
 * timing every configuration once, so that slow drifts of a shared machine
 * fall on all alike. Each result is then checked with a random vector
 * (D^2 x against D (D x), D^3 x against D (D (D x))). GFLOP/s = 4 n^3 / t. */
enum { OVL_BENCH_SSC_MAXCFG = 64 };

typedef struct ovl_bench_ssc_params {
  MPI_Comm comm;    /* default MPI_COMM_WORLD */
  int64_t n;        /* default 1000 */
  ovl_algo algs[4]; /* default alg3, alg4, alg5, alg6 */
  int nalgs;
  int ndups[16]; /* N_DUP values of alg5 and alg6; default 1, 2, 4 */
  int nndups;
  int cube_s;     /* cube edge of alg3-5 (0: the largest cube) */
  int s25, c25;   /* 2.5D grid of alg6 (0: the largest c with c | s, s*s*c = P) */
  int allow_idle; /* let ranks outside a grid stay idle; default 0 */
  ovl_coll_cfg cfg;
  int iters, warmup; /* timed and warm-up rounds; default 5, 1 */
  int check;         /* the matrix-vector check; default 1 */
  uint64_t seed;     /* default 42 */
  int64_t mem_limit;
  ovl_bench_progress_fn progress; /* one step per round */
  void *progress_ctx;
  int arrival; /* Algorithm 5: compute in arrival order (ovl_plan.arrival); default 0 */
} ovl_bench_ssc_params;

typedef struct ovl_bench_ssc_row {
  ovl_algo alg;
  int ndup, s, c;                 /* grid s x s x c */
  ovl_stats st, st_comm, st_comp; /* total, communication and computation time (ovl_kstats), seconds */
  double gflops;                  /* 4 n^3 / st.median */
  double relerr;                  /* the check's relative error (-1: not checked) */
  double trace2, trace3;          /* traces of D^2 and D^3 (checked runs; else 0) */
} ovl_bench_ssc_row;

/* The relative error above which a row of ovl_bench_ssc fails its check. */
#define OVL_BENCH_SSC_TOL 1e-10

typedef struct ovl_bench_ssc_result {
  int ranks, nrows;
  int nfailed;          /* rows whose check failed (relerr > OVL_BENCH_SSC_TOL) */
  int cube_s, s25, c25; /* the grids used (0: none) */
  ovl_bench_ssc_row *rows;
} ovl_bench_ssc_result;

/* LOCAL. */
ovl_bench_ssc_params ovl_bench_ssc_default(void);
/* COLLECTIVE over p->comm. Errors: OVL_ERR_ARG (lists, counts, more than
 * OVL_BENCH_SSC_MAXCFG configurations), OVL_ERR_GRID, OVL_ERR_NOMEM, errors of
 * ovl_ssc_create. */
ovl_err ovl_bench_ssc(const ovl_bench_ssc_params *p, ovl_bench_ssc_result *res);
/* LOCAL, NULL-safe. */
ovl_err ovl_bench_ssc_free(ovl_bench_ssc_result *res);

/* One SymmSquareCube configuration ready to time, for a caller that
 * interleaves it with its own (the tuner): grid s x s x c of comm (s = c = 0:
 * the cube; idle ranks allowed), plan and a symmetric D with D^2, D^3.
 * ovl_bench_ssc_once times one run after a barrier (this rank's seconds).
 * open and once are COLLECTIVE over comm; close is LOCAL, NULL-safe and
 * nulls *h. */
typedef struct ovl_bench_ssc_one *ovl_bench_ssc_h;
ovl_err ovl_bench_ssc_open(MPI_Comm comm, ovl_algo alg, int ndup, int s, int c, int64_t n, const ovl_coll_cfg *cc,
                           ovl_bench_ssc_h *h);
ovl_err ovl_bench_ssc_once(ovl_bench_ssc_h h, double *t);
ovl_err ovl_bench_ssc_close(ovl_bench_ssc_h *h);

/* ---- the machine of the cost models --------------------------------------------
 *   alpha, beta      ping-pong between ranks 0 and 1 (ovl_bench_pingpong, one
 *                    buffer, fastest repetition), Hockney fit over the sizes
 *                    up to eager (when the fit has beta <= 0: the largest
 *                    size's time per byte);
 *   alpha_r, beta_r  the same above eager;
 *   peak_bw          ranks 0 -> 1 with a window of messages in flight, the
 *                    best over the large sizes;
 *   gamma            local dgemm (n = 512) on every rank at once, the slowest;
 *   f_BW             bcast, reduce, allreduce over the first p ranks, p = 2, 4,
 *                    8, ... and P, sizes 1 KiB, 4 KiB, ... max_bytes. */
typedef struct ovl_bench_machine_params {
  MPI_Comm comm;     /* default MPI_COMM_WORLD */
  const char *name;  /* default "this-machine" */
  int64_t eager;     /* default 65536 */
  int64_t max_bytes; /* default 16 MiB */
  int window, iters; /* default 16, 10 */
  int64_t mem_limit;
  ovl_bench_progress_fn progress; /* three steps: ping-pong, dgemm, f_BW */
  void *progress_ctx;
} ovl_bench_machine_params;

/* LOCAL. */
ovl_bench_machine_params ovl_bench_machine_default(void);
/* Fill *m (the same on every rank); gflops (may be NULL) receives the
 * slowest rank's dgemm rate. COLLECTIVE over p->comm. Errors: OVL_ERR_ARG
 * (fewer than 2 ranks, bad counts), OVL_ERR_NOMEM. */
ovl_err ovl_bench_machine(const ovl_bench_machine_params *p, ovl_machine *m, double *gflops);

/* ---- printing -------------------------------------------------------------------
 * A result as the `ovl bench` commands print it: the OSU-style table
 * (docs/design/style.md, rule 10: '#' header lines naming the benchmark, the ranks,
 * the parameters and the MPI library, then fixed columns; times in the
 * columns' units) or one JSON record per row (ovl/record.h; the types are
 * listed in docs/guides/cli.md). p is what the benchmark ran with, res its result.
 * The printers are LOCAL and write to out only: call them on the rank that
 * prints (rank 0), after the benchmark. Errors: those of the record writer
 * (OVL_ERR_IO, OVL_ERR_NOMEM), OVL_ERR_ARG (a NULL argument). */
typedef struct ovl_bench_print_opts {
  int json;             /* one record per row instead of the table */
  int header;           /* the table's '#' header lines (0: column names and rows only, as --quiet) */
  int full;             /* pingpong, coll, nbc: the extra columns (min/max times, counts, post and wait) */
  int cache_capped;     /* pingpong, coll: the cache_bytes default was lowered to fit memory (said in the header) */
  const char *alg;      /* coll, nbc: the own back end's algorithm as named (NULL: "auto") */
  const char *ppn_from; /* coll: where ppn came from (NULL: "explicit") */
} ovl_bench_print_opts;

/* fit: the Hockney fit printed beside the rows (ovl_bench_pingpong_fit). */
ovl_err ovl_bench_pingpong_print(FILE *out, const ovl_bench_pingpong_params *p, const ovl_bench_pingpong_result *res,
                                 const ovl_bench_fit *fit, const ovl_bench_print_opts *po);
/* With p->timeline, a last header line names the timeline's files. */
ovl_err ovl_bench_coll_print(FILE *out, const ovl_bench_coll_params *p, const ovl_bench_coll_result *res,
                             const ovl_bench_print_opts *po);
/* The measures of p->modes only. */
ovl_err ovl_bench_nbc_print(FILE *out, const ovl_bench_nbc_params *p, const ovl_bench_nbc_result *res,
                            const ovl_bench_print_opts *po);
/* One row per back end. */
ovl_err ovl_bench_progress_print(FILE *out, const ovl_bench_progress_params *p, const ovl_bench_progress_result *res,
                                 const ovl_bench_print_opts *po);
/* One row per configuration, with its check (PASS/FAIL) and the speedup over
 * alg4's median (0 in the table, null in the records, without alg4). */
ovl_err ovl_bench_ssc_print(FILE *out, const ovl_bench_ssc_params *p, const ovl_bench_ssc_result *res,
                            const ovl_bench_print_opts *po);

/* ---- a plan timed: the multiplication benchmark (`ovl gemm`) ------------------
 * C = alpha op(A) op(B) + beta C0 for random A, B, C0 with a complete plan:
 * the plan's grid over comm (ovl_plan_grids), the memory asked before
 * anything is allocated (ovl_mm_memory + C0; ovl_check_memory), warmup +
 * iters repetitions after a barrier each (time = MAX over ranks; 3D/2.5D
 * operands refilled on planes k > 0, untimed), optionally traced, and
 * optionally verified (ovl_verify_gemm with op(A), op(B) formed explicitly). */
typedef struct ovl_plan_bench_params {
  MPI_Comm comm; /* default MPI_COMM_WORLD */
  ovl_plan plan; /* complete (ovl_plan_resolve) */
  int64_t m, n, k;
  char transa, transb; /* 'N' or 'T' */
  double alpha, beta;
  uint64_t seed;  /* A from seed, B from seed + 1, C0 from seed + 2 (default 42) */
  int iters;      /* timed repetitions, 1..1000 (5) */
  int warmup;     /* untimed (1) */
  int allow_idle; /* ranks beyond the plan's grid stay idle */
  int64_t mem_limit;
  int check;                  /* verify the result */
  ovl_verify_mode check_mode; /* OVL_VERIFY_AUTO */
  double tol;                 /* <= 0: 16 k eps */
  const char *trace;          /* trace the timed repetitions to PREFIX.json/.csv (NULL: no) */
} ovl_plan_bench_params;

typedef struct ovl_plan_bench_result {
  int ranks, active;
  char grid[64]; /* "2x4" or "2x2x2" */
  int64_t mem_estimate;
  ovl_stats st;                      /* seconds per repetition */
  double t_comm, t_comp;             /* per repetition, MAX over ranks */
  double gflops_median, gflops_best; /* 2 m n k / time */
  int checked, passed;
  double relerr, tol; /* NAN when not checked */
} ovl_plan_bench_result;

/* Defaults as documented above, for a plan. LOCAL. */
ovl_plan_bench_params ovl_plan_bench_default(const ovl_plan *plan, int64_t m, int64_t n, int64_t k);
/* COLLECTIVE over p->comm. A product that fails verification is OVL_OK
 * with r->passed = 0. Errors (agreed): OVL_ERR_ARG, OVL_ERR_GRID,
 * OVL_ERR_NOMEM (an operand of 2^60 bytes or more, or more than the node
 * holds), OVL_ERR_IO (trace). */
ovl_err ovl_plan_bench(const ovl_plan_bench_params *p, ovl_plan_bench_result *r);
/* The run as `ovl gemm` prints it: header lines (po->header: sizes, grid,
 * plan, memory, MPI library, blas_gflops as the local dgemm rate, counts),
 * the column names and one row (times, GFLOP/s, communication and
 * computation, the check); or (po->json) one "gemm" record (docs/guides/cli.md;
 * blas_gflops NAN: null). LOCAL: call it on the rank that prints. Errors:
 * OVL_ERR_ARG (NULL arguments), those of the record writer. */
ovl_err ovl_plan_bench_print(FILE *out, const ovl_plan_bench_params *p, const ovl_plan_bench_result *r,
                             double blas_gflops, const ovl_bench_print_opts *po);

/* ---- the tuner ---------------------------------------------------------------
 * Rank a family's configurations for P ranks and size n by the cost model,
 * time the model's best `top` (and every one predicted within (1 + band) x
 * the best) on these ranks, and store the fastest median in the tune
 * database, where ovl_plan_resolve finds it. Every configuration to time
 * gets its grid and operands up front (a configuration that does not fit the
 * node's memory beside the others is an error: OVL_ERR_NOMEM); the
 * repetitions run in rounds, each timing every configuration once, so that
 * the slow drifts of a shared machine fall on all alike. Time of a
 * repetition = MAX over ranks; min and median over the rounds. With
 * exhaustive, every configuration is then timed in fresh rounds, and the
 * result says how far the model's, the tuner's and auto's choices are from
 * the best one. */
typedef struct ovl_tune_params {
  ovl_family family;
  int64_t n;
  int top;          /* time the model's K best (3) */
  double band;      /* and every one predicted within (1 + band) x the best (0.10) */
  int rounds;       /* timed rounds of the tuner (3) */
  int warmup;       /* untimed rounds before each timing (1) */
  int exhaustive;   /* then time every configuration (0) */
  int sweep_rounds; /* timed rounds of the exhaustive sweep (9) */
  ovl_plan_src src; /* machine; tune_file: where the choice is stored (NULL: $OVL_TUNE_FILE, else nowhere) */
  ovl_bench_progress_fn progress; /* one step per round (may be NULL) */
  void *progress_ctx;
} ovl_tune_params;

typedef struct ovl_tune_row {
  ovl_plan plan;          /* a complete configuration */
  double predicted;       /* the model's seconds */
  int tuned;              /* 1 when the tuner timed it */
  double t_median_tuner;  /* the tuner's median (NAN when not tuned) */
  double t_min, t_median; /* the sweep's (exhaustive) or the tuner's (NAN when not timed) */
} ovl_tune_row;

typedef struct ovl_tune_result {
  int ranks; /* the ranks of comm */
  int nrows; /* configurations, in the model's order */
  ovl_tune_row *rows;
  int ntuned;        /* the tuner's set: rows[0..ntuned-1] */
  int choice;        /* the tuner's choice (stored) */
  int best;          /* the fastest median */
  int timed;         /* rows timed (ntuned, or nrows when exhaustive) */
  char machine[512]; /* where the machine came from */
  char machine_name[64];
  char stored[512]; /* the tune file written ("" when none) */
  /* exhaustive: what auto resolves to now and where it stands */
  ovl_plan auto_plan;
  int auto_row; /* -1: not among the candidates */
  char auto_why[OVL_PLAN_WHY];
} ovl_tune_result;

/* Defaults as documented above. LOCAL. */
ovl_tune_params ovl_tune_default(ovl_family f, int64_t n);
/* Check the parameters of ovl_tune without running anything (a command
 * checks them before its first line of output): OVL_ERR_ARG naming the
 * first one out of range. The families are gemm and ssc: sq (SP2, TRS4) is
 * refused, its only knob being N_DUP, whose default auto takes without a
 * tune-file lookup, and bsmul, which the cost model alone plans from the
 * matrices' sparsity (ovl_plan_resolve_bsmul). LOCAL. */
ovl_err ovl_tune_check(const ovl_tune_params *p);
/* Run the tuner on the ranks of comm. COLLECTIVE over comm. Errors (agreed):
 * OVL_ERR_ARG (parameters: ovl_tune_check), OVL_ERR_GRID (no configuration fits),
 * OVL_ERR_IO / OVL_ERR_FORMAT (machine or tune file), OVL_ERR_NOMEM. */
ovl_err ovl_tune(MPI_Comm comm, const ovl_tune_params *p, ovl_tune_result *r);
/* NULL-safe. LOCAL. */
void ovl_tune_result_free(ovl_tune_result *r);
/* The result as `ovl tune` prints it: the table of the timed candidates
 * (predicted and measured seconds), the choice, the tune file and, with
 * p->exhaustive, the sweep's verdict; or (json) one "tune-candidate" record
 * per timed candidate and a "tune-sweep" record (docs/guides/cli.md). LOCAL: call
 * it on the rank that prints. Errors: OVL_ERR_ARG (NULL arguments), those
 * of the record writer. */
ovl_err ovl_tune_print(FILE *out, const ovl_tune_params *p, const ovl_tune_result *r, int json);

#endif
