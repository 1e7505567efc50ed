/* ovl planner: one complete plan from constraints, for every entry.
 *
 * A plan (ovl_plan, ovl/schema.h) says everything about how a kernel runs:
 * algorithm, grid shape (p x q, or s x s x c), HSUMMA groups, panel width,
 * N_DUP, lookahead, ranks per node and the collective back end. The caller
 * fixes what it wants and leaves the rest to the planner:
 *
 *   ovl_plan plan = ovl_plan_auto(OVL_FAMILY_GEMM, n);   // everything open
 *   plan.ndup = 4;                                        // a constraint
 *   char why[OVL_PLAN_WHY];
 *   ovl_plan_resolve(comm, OVL_FAMILY_GEMM, &plan, NULL, why, sizeof why);
 *   ovl_plan_grids(comm, &plan, 0, &g2, &g3);             // the grid it names
 *
 * What is open: algo == OVL_ALGO_AUTO, ndup <= 0, b <= 0, lookahead < 0,
 * G <= 0 (HSUMMA), and the grid (p, q, s, c <= 0). The choice of algorithm,
 * N_DUP, panel width, lookahead, G and 2.5D's c comes from, in this order:
 * the tune database (an entry measured by `ovl tune` for this family, rank
 * count and a size within a factor of 2 that agrees with the constraints),
 * else the cost model on the machine description, ranking its candidates
 * (ovl_model_candidates) among those that agree with the constraints
 * (SymmSquareCube under auto on a rank count without its grids: those of
 * the largest count that has one, the other ranks idle). The
 * grid then follows from one set of shape rules (ovl_grid_shape), which the
 * cost model uses too. A plan with nothing open is only checked.
 *
 * Options (ovl/opts.h): ovl_plan_opts lists the plan's options once, with
 * their names, for every entry (the command line, OVL_OPTIONS, strings).
 */
#ifndef OVL_PLAN_H
#define OVL_PLAN_H

#include <stddef.h>
#include <stdio.h>

#include "ovl/algo.h"
#include "ovl/grid.h"
#include "ovl/kernels.h"
#include "ovl/model.h"
#include "ovl/opts.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A buffer size for the planner's reasons. */
#define OVL_PLAN_WHY 640

/* Where the planner looks: the machine description of the cost model and
 * the tune database. NULL: $OVL_MACHINE (else the built-in Stampede2 of
 * Huang & Chow) and $OVL_TUNE_FILE (else none). */
typedef struct ovl_plan_src {
  const char *machine;
  const char *tune_file;
} ovl_plan_src;

/* ovl_plan_auto, ovl_plan_is_open, the printer (ovl_plan_describe) and its
 * parser (ovl_plan_parse) are in the plan schema, ovl/schema.h. */

/* The machine of the cost models: path, else $OVL_MACHINE, else Huang &
 * Chow's Stampede2 (ovl_machine_stampede2); source (may be NULL) receives
 * where it came from. LOCAL. Errors: those of ovl_machine_read. */
ovl_err ovl_plan_machine(const char *path, ovl_machine *m, char *source, size_t nsource);

/* Complete the plan for the ranks of comm (plan->P <= 0: all of them;
 * otherwise P ranks, e.g. nodes x ppn), as described above, and check it.
 * why (may be NULL) receives where the choice came from ("given", "tune
 * file F, measured at n=N", "cost model, machine M"). Rank 0 reads the
 * files and decides; every rank receives the same plan. COLLECTIVE over
 * comm. Errors (agreed): OVL_ERR_ARG (a constraint out of range, an
 * algorithm of the other family), OVL_ERR_GRID (no configuration fits the
 * ranks), OVL_ERR_IO / OVL_ERR_FORMAT (machine or tune file). */
ovl_err ovl_plan_resolve(MPI_Comm comm, ovl_family f, ovl_plan *plan, const ovl_plan_src *src, char *why, size_t nwhy);

/* The planner of the block-sparse product (family OVL_FAMILY_BSMUL,
 * ovl_bsmat_multiply): completes *plan -- algorithm (bsumma or bs2.5d), grid
 * (p x q, or s x s x c: the replication c), ndup -- for the ranks of comm
 * (plan->P <= 0: all of them) and the matrices' shape (ovl_bsmat_shape, or
 * ovl_bsmul_shape_estimate), leaving the knobs the caller fixed as given
 * (the algorithm, ndup, the grid or only c). The cost model alone decides
 * (ovl_model_bsmul over ovl_model_candidates, ranked by
 * ovl_model_rank_bsmul): the tune file is not asked, since the product's
 * time depends on the sparsity, which a tune entry does not record. A plan
 * with nothing open is only checked. why (may be NULL) receives where the
 * choice came from. Rank 0's shape and machine decide; every rank receives
 * the same plan. COLLECTIVE over comm. Errors (agreed): OVL_ERR_ARG (a NULL
 * argument (not agreed), a constraint out of range, an algorithm of another
 * family, a bad shape), OVL_ERR_GRID (no configuration fits the ranks, c >
 * s), OVL_ERR_IO / OVL_ERR_FORMAT (the machine file). ovl_plan_resolve
 * refuses an open plan of this family (it has no shape). */
ovl_err ovl_plan_resolve_bsmul(MPI_Comm comm, ovl_plan *plan, const ovl_bsmul_shape *shape, const ovl_plan_src *src,
                               char *why, size_t nwhy);

/* ovl_plan_resolve for a run on a subset of every node's ranks (multiple
 * PPN, ovl_active): *ppn = K > 0 plans for nodes x K ranks (plan->P), 0 for
 * all ranks of comm; *ppn = OVL_AUTO models every divisor K of the ranks
 * per node (nodes x K ranks sharing each link, the tune file not asked),
 * keeps the fastest prediction and sets *ppn to its K (0 when it is every
 * rank of a node). plan->n must be set. COLLECTIVE over comm. Errors
 * (agreed): those of ovl_plan_resolve; OVL_ERR_GRID (--ppn auto: no K has
 * a grid); OVL_ERR_MPI. */
ovl_err ovl_plan_resolve_ppn(MPI_Comm comm, ovl_family f, ovl_plan *plan, int *ppn, const ovl_plan_src *src, char *why,
                             size_t nwhy);

/* The checks a complete plan passes: the algorithm belongs to f, ndup in
 * [1, OVL_LANES_MAX], b > 0, outer 0 or >= b, the grid fits P (idle ranks
 * only with allow_idle), c | s for 2.5D, c <= s (or s = 1) for bs2.5d, G tiles the grid
 * for HSUMMA.
 * LOCAL. Errors: OVL_ERR_ARG, OVL_ERR_GRID. */
ovl_err ovl_plan_check(const ovl_plan *plan, ovl_family f, int allow_idle);

/* Create the grid the plan names over comm: a p x q grid (*g3 = NULL) for
 * SUMMA, HSUMMA and Cannon, an s x s x c grid for the others (*g2 = its
 * plane k = 0, owned by *g3: destroy only *g3). Ranks beyond the grid are
 * idle when flags has OVL_GRID_ALLOW_IDLE. COLLECTIVE over comm. */
ovl_err ovl_plan_grids(MPI_Comm comm, const ovl_plan *plan, int flags, ovl_grid2d *g2, ovl_grid3d *g3);

/* The instruments that time plans -- the multiplication benchmark
 * (ovl_plan_bench, `ovl gemm`) and the tuner (ovl_tune, `ovl tune`) -- are
 * in ovl/bench.h, above the planner. */

/* ---- options --------------------------------------------------------------
 * The plan's options are derived from the knob table (ovl_knobs,
 * ovl/schema.h): one option per knob that applies to an algorithm of the
 * family (--algo, --grid, --block, --groups, --outer, --repl, --ndup,
 * --lookahead, --arrival-order, --backend, --bcast-alg), its name, letter,
 * range, choices and default from the row; then --plan TEXT (a printed
 * plan, ovl_plan_parse), --machine FILE and --tune-file FILE, and the
 * deprecated alias --kernel of --algo. ovl_plan_opts writes the table
 * (entries pointing into *po) into opts (cap entries; returns how many, or
 * -1 when cap is too small); after parsing, ovl_plan_opts_apply turns what
 * was given into constraints on *plan.
 *
 * The sources of a knob, first one wins: the value a library call passes
 * (per call) > the command line > $OVL_OPTIONS (parsed before argv into the
 * same table, so argv overrides it) > --plan (the knobs given beside it
 * win) > the tune file > the cost model (ovl_plan_resolve, for what is
 * still open) > the family's default (the table, for a named algorithm).
 * LOCAL. */
typedef struct ovl_plan_optvals {
  const char *algo;                                                  /* a name or "auto" (NULL: auto) */
  int ndup;                                                          /* > 0, OVL_OPT_AUTO, or 0: not given */
  const char *grid, *groups, *backend, *bcast, *machine, *tune_file; /* NULL: not given */
  const char *arrival;                                               /* "on" or "off" (NULL: off) */
  int64_t b, outer;                                                  /* 0: not given */
  int repl;                                                          /* 0: not given */
  int lookahead;                                                     /* flag */
  int dropin_min;                                                    /* 0: not given */
  int64_t dropin_mem;                                                /* 0: not given */
  const char *dropin_route;                                          /* NULL: not given */
  const char *plan;       /* --plan: a printed plan (ovl_plan_parse); NULL: not given */
  const char *kernel_old; /* --kernel, the spelling of older releases of --algo (a note on stderr) */
} ovl_plan_optvals;
int ovl_plan_opts(ovl_family f, ovl_plan_optvals *po, ovl_opt *opts, int cap);
/* The knob rows of ovl_plan_opts alone, for a command that offers some
 * knobs with options of its own (`ovl model`): the options of the knobs in
 * the mask knobs (bit 1u << id of each ovl_knob_id; 0: every knob that
 * applies to an algorithm of family f), in the table's order, with family
 * f's defaults in their help and choices, entries pointing into *po, into
 * opts (cap entries). Returns how many, or -1 when cap is too small or an
 * argument is bad. ovl_plan_opts_apply turns what was given into the plan.
 * LOCAL. */
int ovl_plan_knob_opts(ovl_family f, unsigned knobs, ovl_plan_optvals *po, ovl_opt *opts, int cap);
/* Errors (OVL_ERR_ARG, naming the option): a value that does not parse, an
 * option that does not apply to the algorithm (ovl_plan_option_applies),
 * --bcast-alg other than auto without the own back end,
 * --grid of the wrong rank, --outer < --block. LOCAL. */
ovl_err ovl_plan_opts_apply(ovl_family f, const ovl_plan_optvals *po, ovl_plan *plan);
/* The one rule of options that apply to some algorithms only: OVL_OK when
 * option ("--block", "--lookahead", "--outer", "--groups", "--repl",
 * "--arrival-order", "--backend own" (not Cannon, whose shifts are point to
 * point), "--bcast-alg"; any other option applies everywhere) applies to algo,
 * else OVL_ERR_ARG saying which algorithms it applies to. Under
 * OVL_ALGO_AUTO an option narrows auto's choice (OVL_OK), except --groups,
 * which needs --algo hsumma named. LOCAL. */
ovl_err ovl_plan_option_applies(const char *option, ovl_algo algo);

#ifdef __cplusplus
}
#endif
#endif
