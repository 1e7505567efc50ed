/* ovl plan schema: what a plan is, the names of its parts and the one table
 * of its knobs. Pure C without MPI (only ovl/err.h below it): the cost
 * models, the tune database, the planner, every entry and the Python
 * package describe plans with it, and a program that has no MPI can build
 * against src/schema alone (the `schema_nompi` test does).
 *
 * "Schema" because this layer says what may be asked of a run and how it
 * is written down, never how it runs:
 *  - the algorithm, family and collective-schedule names (one table each);
 *  - the plan type (ovl_plan), which the kernels execute;
 *  - the knob table (ovl_knobs): one row per knob of a plan with its long
 *    option name, at most one short letter, its type, its default for each
 *    family, its range, the tuner's candidates, its key in printed plans,
 *    JSON records and tune files, and the algorithms it applies to. The
 *    command line and OVL_OPTIONS (ovl_plan_opts, ovl/plan.h), the printer
 *    and its parser (ovl_plan_describe, ovl_plan_parse), the tune file and
 *    the model's candidates read their names and defaults from it, and
 *    docs/guides/cli.md's knob reference is generated from it
 *    (scripts/gen_cli_doc.py, `ovl help --knobs`).
 *
 * One sentinel says "open" (left to the planner): OVL_AUTO (-1) for an
 * integer knob, OVL_ALGO_AUTO for the algorithm, "auto" for a name. A
 * value below a knob's minimum (e.g. 0 for ndup, which older code wrote)
 * reads as open too (ovl_knob_is_open).
 *
 * Every function is LOCAL and pure (no MPI, no files). */
#ifndef OVL_SCHEMA_H
#define OVL_SCHEMA_H

#include <stddef.h>
#include <stdint.h>

#include "ovl/err.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The one value of "open": left to the planner. */
#define OVL_AUTO (-1)
/* The most lanes (N_DUP) of one communication phase: the ndup knob's maximum. */
#define OVL_LANES_MAX 64

/* ---- algorithms and families ------------------------------------------------ */

typedef enum ovl_algo {
  OVL_ALGO_AUTO = -1, /* not chosen yet: the planner decides (ovl/plan.h) */
  OVL_ALGO_SUMMA = 0, /* 2D grid p x q */
  OVL_ALGO_HSUMMA,    /* 2D grid split into I x J groups */
  OVL_ALGO_CANNON,    /* square 2D grid */
  OVL_ALGO_3D,        /* p x p x p grid; operands on plane k = 0 */
  OVL_ALGO_25D,       /* s x s x c grid (c | s); operands on plane k = 0 */
  OVL_ALGO_SSC3,      /* SymmSquareCube, GTFock's original (p x p x p) */
  OVL_ALGO_SSC4,      /* SymmSquareCube, blocking collectives (p x p x p) */
  OVL_ALGO_SSC5,      /* SymmSquareCube, N_DUP lanes in arrival order (p x p x p) */
  OVL_ALGO_SSC6,      /* SymmSquareCube, 2.5D (s x s x c, c | s) */
  OVL_ALGO_SQ,        /* symmetric square D -> D^2 on a 2.5D grid (ovl_sq, SP2 and TRS4) */
  OVL_ALGO_BSUMMA,    /* block-sparse filtered product, SUMMA on a 2D grid p x q (ovl_bsmat_multiply) */
  OVL_ALGO_BS25D, /* block-sparse filtered product on an s x s x c grid (c <= s, or s = 1); operands on plane k = 0 */
  OVL_ALGO_N
} ovl_algo;

typedef enum ovl_family {
  OVL_FAMILY_GEMM = 0, /* C = A B */
  OVL_FAMILY_SSC,      /* D -> D^2, D^3 (canonical and McWeeny purification on top) */
  OVL_FAMILY_SQ,       /* D -> D^2 of a symmetric D (SP2 and TRS4 purification on top) */
  OVL_FAMILY_BSMUL,    /* C = A B of block-sparse matrices, filtered (sparse purification on top) */
  OVL_FAMILY_N
} ovl_family;

/* "summa", "hsumma", "cannon", "3d", "2.5d", "alg3", "alg4", "alg5", "alg6",
 * "sq", "bsumma", "bs2.5d" ("auto" for OVL_ALGO_AUTO, "unknown" outside the range). */
const char *ovl_algo_name(ovl_algo a);
/* The inverse of ovl_algo_name for the algorithms ("auto" is not parsed
 * here: it is a planner constraint). OVL_ERR_ARG naming the valid names
 * otherwise. */
ovl_err ovl_algo_parse(const char *name, ovl_algo *out);
/* A comma-separated list of algorithm names ("alg3,alg5") into out[0..cap-1]
 * and *n. Errors: OVL_ERR_ARG (an empty list or item, a trailing comma, an
 * unknown name, more than cap names), naming the list; out may then be
 * partly written, *n is not. */
ovl_err ovl_algo_parse_list(const char *list, ovl_algo *out, int cap, int *n);
/* The family of an algorithm (OVL_FAMILY_GEMM outside the range). */
ovl_family ovl_algo_family(ovl_algo a);
/* 1 for the algorithms on an s x s x c grid (3D, 2.5D, SymmSquareCube, sq,
 * bs2.5d). */
int ovl_algo_is_3d(ovl_algo a);
/* The algorithm names of family f, then "auto", NULL-terminated (the
 * choices of --algo); NULL for a family out of range. */
const char *const *ovl_algo_choices(ovl_family f);
/* "gemm", "ssc", "sq", "bsmul" and the inverse (OVL_ERR_ARG naming the families). */
const char *ovl_family_name(ovl_family f);
ovl_err ovl_family_parse(const char *name, ovl_family *out);
/* The family names, NULL-terminated (the choices of --family). */
extern const char *const ovl_family_names[];

/* ---- collectives: back ends and schedules ----------------------------------- */

typedef enum ovl_backend { OVL_BACKEND_MPI = 0, OVL_BACKEND_OWN = 1 } ovl_backend;

typedef enum ovl_alg {
  OVL_ALG_AUTO = 0,
  /* bcast */
  OVL_BCAST_BINOMIAL,
  OVL_BCAST_SCATTER_ALLGATHER, /* binomial scatter + ring allgather (van de Geijn) */
  OVL_BCAST_CHAIN,             /* segmented pipelined chain */
  OVL_BCAST_HIER,              /* two levels: between groups, then inside groups (HSUMMA) */
  /* reduce (sum) */
  OVL_REDUCE_BINOMIAL,
  OVL_REDUCE_RABENSEIFNER, /* reduce-scatter (recursive halving, ring when p is not a power of 2) + binomial gather */
  /* allreduce (sum) */
  OVL_ALLREDUCE_RABENSEIFNER, /* reduce-scatter + allgather (recursive doubling when p is a power of 2) */
  OVL_ALLREDUCE_RING,         /* ring reduce-scatter + ring allgather */
  /* allgather */
  OVL_ALLGATHER_RING,
  OVL_ALLGATHER_RECDBL, /* recursive doubling (ring when p is not a power of 2) */
  /* alltoall */
  OVL_ALLTOALL_RING,
  OVL_ALLTOALL_PAIRWISE, /* XOR pairing (ring order when p is not a power of 2) */
  OVL_ALG_COUNT
} ovl_alg;

typedef struct ovl_coll_cfg {
  ovl_backend backend;
  ovl_alg bcast, reduce, allreduce, allgather, alltoall; /* own back end; AUTO picks by size */
  int64_t segment;                                       /* chain bcast segment (elements); 0: 16384 */
  int hier_group;                                        /* hier bcast group size; 0: ~sqrt(p) */
} ovl_coll_cfg;

/* Defaults: MPI back end, AUTO algorithms. */
ovl_coll_cfg ovl_coll_cfg_default(void);
/* Schedule names ("binomial", "scatter-allgather", "chain", "hier",
 * "rabenseifner", "ring", "recdbl", "pairwise", "auto") of a collective
 * ("bcast", "reduce", "allreduce", "allgather", "alltoall"). */
const char *ovl_alg_name(ovl_alg a);
ovl_err ovl_alg_parse(const char *collective, const char *name, ovl_alg *out);
/* The schedule names of a collective, "auto" first, NULL-terminated (the
 * choices of --bcast-alg); NULL for an unknown collective. */
const char *const *ovl_alg_choices(const char *collective);
/* The back-end names, indexed by ovl_backend and NULL-terminated:
 * {"mpi", "own", NULL}. */
extern const char *const ovl_backend_names[];
/* Name -> back end ("mpi" or "own"). Errors: OVL_ERR_ARG (naming the choices). */
ovl_err ovl_backend_parse(const char *name, ovl_backend *out);
/* Back end -> name ("mpi" for a value out of range). */
const char *ovl_backend_name(ovl_backend b);

/* ---- the plan ------------------------------------------------------------------- */

/* A plan: everything that says how a kernel runs, for every family. The
 * cost model predicts plans (ovl/model.h), the tune database stores them
 * and the planner (ovl/plan.h) completes one from constraints; the kernels
 * execute them. Prints as one line (ovl_plan_describe) that ovl_plan_parse
 * reads back. Fields an algorithm does not use are ignored. */
/* Routes of a drop-in PDGEMM call (the knob dropin-route): the cost model's
 * choice, ScaLAPACK's own PDGEMM, ovl's SUMMA on ScaLAPACK's layout, or
 * ovl's SUMMA after converting the operands to ovl's layout. */
enum { OVL_ROUTE_AUTO = 0, OVL_ROUTE_SCALAPACK = 1, OVL_ROUTE_LAYOUT = 2, OVL_ROUTE_CONVERT = 3 };

typedef struct ovl_plan {
  ovl_algo algo;
  int64_t n;     /* the matrix size it is for (the largest of m, n, k for a multiplication) */
  int P;         /* ranks taking part (nodes x ppn) */
  int p, q;      /* 2D grid (SUMMA, HSUMMA, Cannon); open: derived from P */
  int s, c;      /* 3D, 2.5D, SymmSquareCube and sq grid s x s x c; open: derived from P */
  int64_t b;     /* panel width (SUMMA, HSUMMA inner block), > 0 */
  int64_t outer; /* HSUMMA outer block M >= b (0: M = b) */
  int G;         /* HSUMMA group count (a square g x g on a square grid) */
  int groups_i;  /* HSUMMA groups I x J as executed (G = I*J) */
  int groups_j;
  int ndup;          /* lanes (N_DUP) per communication phase, >= 1 */
  int lookahead;     /* SUMMA/HSUMMA: next panel's broadcasts in flight during the current dgemm */
  int arrival;       /* SUMMA, HSUMMA (inner broadcasts; refused with G = P), Alg. 5: 1 = each lane carries a
                        self-contained part of a panel and its product starts as it arrives (arrival order);
                        0 (default) = the product waits for all lanes */
  int ppn;           /* ranks per node sharing a link (1) */
  ovl_coll_cfg coll; /* collective back end and algorithms */
  /* ovl_pdgemm_pays (the drop-in libovl_scalapack.so) only; open: the cost model's and the default cap */
  int64_t dropin_min; /* calls with min(m, n, k) below it go to ScaLAPACK */
  int64_t dropin_mem; /* bytes of workspace per rank above which a call goes to ScaLAPACK */
  int dropin_route;   /* OVL_ROUTE_*: 0 auto (the cost model), 1 scalapack, 2 layout, 3 convert */
} ovl_plan;

/* The documented defaults of an algorithm for size n on P ranks: every
 * knob at its family's default (ovl_knob_default), grids derived from P
 * (0), G = 1 (groups 1 x 1), ppn 1, default collectives. */
ovl_plan ovl_plan_default(ovl_algo algo, int64_t n, int P);
/* The same with panel width b, for a multiplication whose size and ranks
 * follow from its matrices. */
ovl_plan ovl_plan_gemm(ovl_algo algo, int64_t b);
/* A plan of family f for size n with every knob open (OVL_AUTO; the
 * algorithm OVL_ALGO_AUTO), ppn 1, default collectives. */
ovl_plan ovl_plan_auto(ovl_family f, int64_t n);
/* 1 when a knob the planner chooses is open (algorithm, ndup, b, lookahead,
 * G for HSUMMA). */
int ovl_plan_is_open(const ovl_plan *plan);

/* The one printer: the algorithm, then key=value for every knob that
 * applies to it, in the table's order, e.g. "summa grid=2x4 b=256 ndup=1
 * lookahead=0 backend=mpi bcast=auto", "hsumma grid=4x4 b=64 G=2x2 M=256
 * ndup=1 lookahead=1 backend=mpi bcast=auto", "alg6 grid=2x2x2 ndup=4
 * backend=mpi". An open knob prints as key=auto; arrival=on appears only
 * when on. Returns what snprintf returns. */
int ovl_plan_describe(const ovl_plan *plan, char *buf, size_t n);
/* The same (compatibility name). */
int ovl_plan_str(const ovl_plan *plan, char *buf, size_t n);
/* Short form for tables: "summa b=256 ndup=1 lookahead", "hsumma G=4 b=256
 * ndup=1", "2.5d 2x2x2 ndup=2", "alg5 ndup=4". */
int ovl_plan_short(const ovl_plan *plan, char *buf, size_t n);
/* 1 when two complete plans run the same configuration (algorithm, ndup,
 * b, G, lookahead; s and c for 2.5D, alg6, sq and bs2.5d). */
int ovl_plan_same(const ovl_plan *a, const ovl_plan *b);
/* The parser of the printed form: text as ovl_plan_describe writes it (the
 * algorithm or "auto" first, optional; then key=value words, keys of the
 * knob table or its long names) sets those knobs of *plan, whose other
 * fields are left as they are (start from ovl_plan_auto). A plan printed
 * by a run, pasted back, gives the same plan. Errors: OVL_ERR_ARG naming
 * the word (an unknown key, a value out of range, an algorithm of another
 * family than f). */
ovl_err ovl_plan_parse(const char *text, ovl_family f, ovl_plan *plan);

/* ---- the block-sparse product's shape ------------------------------------------------
 * What the cost model and the planner of family OVL_FAMILY_BSMUL need to know
 * about C = A B of two block-sparse n x n matrices (ovl/bsmat.h) besides the
 * plan: the sparsity, which a plan does not hold. ovl_bsmat_shape (ovl/bsmat.h)
 * counts it from two matrices; ovl_bsmul_shape_estimate (ovl/model.h) makes
 * one from a fill. Fields left 0 where said are estimated by the model. */
typedef struct ovl_bsmul_shape {
  int64_t n;                  /* rows = columns, >= 1 */
  int64_t nblk;               /* blocks per dimension, in [1, n] */
  int64_t blocks_a, blocks_b; /* stored blocks of A and B, in [0, nblk^2] */
  int64_t values_a, values_b; /* their stored doubles (0: blocks x (n / nblk)^2) */
  int64_t products;           /* block products A_IK B_KJ of stored blocks, before any is skipped by its norm:
                                 sum over K of (blocks in A's block column K) x (blocks in B's block row K) */
  double flops;               /* their flops, sum of 2 m n k (0: products x 2 (n / nblk)^3) */
  int64_t blocks_c;           /* blocks of the product's pattern (0: min(nblk^2, products, blocks_a + blocks_b)) */
} ovl_bsmul_shape;

/* ---- written values ---------------------------------------------------------------- */

/* An integer: digits with at most a leading '-' (no white space, no '+').
 * Errors: OVL_ERR_ARG (not an integer, beyond 64 bits). */
ovl_err ovl_parse_int(const char *s, int64_t *out);
/* Parse a size "4096", "4K", "64M", "1G", "8KiB" into bytes/elements.
 */
ovl_err ovl_parse_size(const char *s, int64_t *out);

/* Parse "PxQ" or "PxQxR" into dims (ndims returned; dims[k] > 0). */
ovl_err ovl_parse_dims(const char *s, int dims[3], int *ndims);

/* ---- the knob table ------------------------------------------------------------ */

typedef enum ovl_knob_id {
  OVL_KNOB_ALGO = 0, /* kernel algorithm */
  OVL_KNOB_GRID,     /* process grid PxQ or SxSxC */
  OVL_KNOB_BLOCK,    /* panel width b */
  OVL_KNOB_GROUPS,   /* HSUMMA groups IxJ or a count G */
  OVL_KNOB_OUTER,    /* HSUMMA outer block M */
  OVL_KNOB_REPL,     /* replication c of a 2.5D grid */
  OVL_KNOB_NDUP,     /* lanes per communication phase (N_DUP) */
  OVL_KNOB_LOOKAHEAD,
  OVL_KNOB_ARRIVAL,
  OVL_KNOB_BACKEND,      /* collective back end */
  OVL_KNOB_BCAST,        /* broadcast schedule of the own back end */
  OVL_KNOB_DROPIN_MIN,   /* ovl_pdgemm_pays: the size below which calls go to ScaLAPACK */
  OVL_KNOB_DROPIN_MEM,   /* ovl_pdgemm_pays: the workspace cap per rank */
  OVL_KNOB_DROPIN_ROUTE, /* ovl_pdgemm_pays: ScaLAPACK, SUMMA in ScaLAPACK's layout, or converted (auto: the model) */
  OVL_KNOB_N
} ovl_knob_id;

typedef enum ovl_knob_type {
  OVL_KNOB_NAME,  /* one of names[] (or "auto" when the knob may be open) */
  OVL_KNOB_INT,   /* an integer in [min, max], or auto */
  OVL_KNOB_SIZE,  /* a size in [min, max] (K/M/G suffixes), or auto */
  OVL_KNOB_DIMS,  /* PxQ, SxSxC or IxJ (or a count), or auto */
  OVL_KNOB_ONOFF, /* on | off (or auto) */
  OVL_KNOB_FLAG   /* 0 | 1 (or auto); on the command line a flag (--lookahead) */
} ovl_knob_type;

typedef struct ovl_knob {
  ovl_knob_id id;
  const char *name;    /* the long option, --name, and the OVL_OPTIONS word */
  char letter;         /* the short option, or 0 */
  ovl_knob_type type;  /* how its value is written */
  const char *key;     /* its key in printed plans, JSON records and tune files */
  const char *metavar; /* in --help */
  /* the default of each family (indexed by ovl_family) when the knob is not
   * given and the algorithm is named; OVL_AUTO: the planner's choice even
   * then (the grid). For OVL_KNOB_NAME an index into names[]. */
  int64_t def[OVL_FAMILY_N];
  int64_t min, max;         /* range of an integer, size or each dimension */
  const char *const *names; /* OVL_KNOB_NAME: the valid names (NULL-terminated; NULL: the family's algorithms) */
  const int64_t *cand;      /* the tuner's and the cost model's candidates (ncand values), NULL: none */
  int ncand;
  unsigned algos;    /* the algorithms it applies to: bit a for ovl_algo a (all bits: every one) */
  int named;         /* 1: needs the algorithm named even under auto (--groups) */
  int printed;       /* 1: part of the printed plan (the replication is inside grid=SxSxC) */
  const char *which; /* the algorithms it applies to, in words ("summa and hsumma") */
  const char *help;  /* one line */
} ovl_knob;

/* The table: OVL_KNOB_N rows, row k has id k. */
extern const ovl_knob ovl_knobs[OVL_KNOB_N];
/* The row of a long option name, a short letter ("d"), a key ("b") or a
 * deprecated spelling ("kernel", "alg", "panel"); NULL when none. */
const ovl_knob *ovl_knob_find(const char *name);
/* The default of knob id for family f (OVL_AUTO for a knob that has none:
 * the planner's choice). The only place a default is written: every entry
 * asks here (e.g. ovl_knob_default_int(OVL_KNOB_NDUP, OVL_FAMILY_SSC)). */
int64_t ovl_knob_default(ovl_knob_id id, ovl_family f);
int ovl_knob_default_int(ovl_knob_id id, ovl_family f);
/* The valid names of an OVL_KNOB_NAME knob for family f (the row's names,
 * or the family's algorithms and "auto"), NULL-terminated; NULL for a knob
 * of another type. */
const char *const *ovl_knob_names(ovl_knob_id id, ovl_family f);
/* 1 when the knob applies to algorithm a (OVL_ALGO_AUTO: 1 unless the knob
 * needs the algorithm named). */
int ovl_knob_applies(ovl_knob_id id, ovl_algo a);
/* 1 when the plan leaves the knob open (OVL_AUTO or below its minimum). */
int ovl_knob_is_open(const ovl_plan *plan, ovl_knob_id id);
/* The range check of an integer, size or flag knob: OVL_OK when value is in
 * the row's [min, max], else OVL_ERR_ARG naming the long option and the
 * key ("who: --ndup (ndup) must be in [1, 64], got 0"; who may be NULL).
 * Every check of a knob's range (ovl_plan_check, the kernels' arguments,
 * the cost model) is this one. */
ovl_err ovl_knob_check(ovl_knob_id id, int64_t value, const char *who);
/* ovl_knob_check for every integer, size or flag knob of the table that
 * applies to plan->algo: one with a default (ndup, b, lookahead) must be in
 * range, one without (outer, repl: derived when open) only when set. */
ovl_err ovl_knob_check_plan(const ovl_plan *plan, const char *who);
/* Copy the knob's value (all the fields it sets) from src to dst. */
void ovl_knob_copy(ovl_plan *dst, const ovl_plan *src, ovl_knob_id id);
/* Write the knob's value of plan as the printer does ("256", "2x4", "on",
 * "auto"). Returns what snprintf returns. */
int ovl_knob_format(const ovl_plan *plan, ovl_knob_id id, char *buf, size_t n);
/* Set the knob of plan from a written value ("auto" opens it). Errors:
 * OVL_ERR_ARG naming the knob (a value that does not parse or is out of
 * range). The algorithm is parsed for family f. */
ovl_err ovl_knob_set(ovl_plan *plan, ovl_knob_id id, ovl_family f, const char *value);

#ifdef __cplusplus
}
#endif
#endif
