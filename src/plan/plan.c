/* The planner: constraints + tune database + cost model -> one complete plan. */
#include "ovl/plan.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ovl/tunedb.h"

enum { PLAN_MAXCAND = 128 };

/* What the cost model or the tune database decides (the rest follows). */
static int open_choice(const ovl_plan *p) { return p->algo == OVL_ALGO_AUTO || p->ndup <= 0 || p->lookahead < 0; }

ovl_err ovl_plan_machine(const char *path, ovl_machine *m, char *source, size_t nsource) {
  OVL_TRY(ovl_check_ptr(m, "ovl_plan_machine", "m"));
  const char *env = getenv("OVL_MACHINE");
  if (!path && env && *env) path = env;
  if (!path) {
    *m = ovl_machine_stampede2();
    if (source) snprintf(source, nsource, "built-in %s (no machine file, no OVL_MACHINE)", m->name);
    return OVL_OK;
  }
  if (source) snprintf(source, nsource, "%s", path);
  return ovl_machine_read(path, m);
}

static int is_2d(ovl_algo a) {
  return a == OVL_ALGO_SUMMA || a == OVL_ALGO_HSUMMA || a == OVL_ALGO_CANNON || a == OVL_ALGO_BSUMMA;
}
static int has_c(ovl_algo a) {
  return a == OVL_ALGO_25D || a == OVL_ALGO_SSC6 || a == OVL_ALGO_SQ || a == OVL_ALGO_BS25D;
}

/* What a family's algorithms are called in messages. */
static const char *family_what(ovl_family f) {
  return f == OVL_FAMILY_GEMM    ? "multiplication"
         : f == OVL_FAMILY_SQ    ? "symmetric-square"
         : f == OVL_FAMILY_BSMUL ? "block-sparse product"
                                 : "SymmSquareCube";
}

/* A chosen configuration c fills what the caller left open in *p. */
static void take_choice(ovl_plan *p, const ovl_plan *c) {
  int algo_open = p->algo == OVL_ALGO_AUTO;
  if (algo_open) {
    p->algo = c->algo;
    if (c->algo == OVL_ALGO_HSUMMA && p->G <= 0 && p->groups_i <= 0) p->G = c->G;
    if (has_c(c->algo) && p->s <= 0 && p->c <= 0 && c->s > 0) p->s = c->s, p->c = c->c;
  }
  if (p->ndup <= 0) p->ndup = c->ndup;
  if (p->b <= 0) p->b = c->b;
  if (p->lookahead < 0) p->lookahead = c->lookahead;
  if (p->outer <= 0 && algo_open) p->outer = c->outer;
}

/* The grid the caller fixed of a block-sparse plan: 3 (s or c given), 2 (p
 * or q given), 0 (open). */
static int bsmul_grid_given(const ovl_plan *p) { return p->s > 0 || p->c > 0 ? 3 : p->p > 0 || p->q > 0 ? 2 : 0; }

/* Rank 0: the cost model's choice of algorithm, grid and N_DUP for the open
 * fields of a block-sparse plan *p on P ranks (no tune file: a measured
 * entry is for a size, and the product's time depends on its sparsity). */
static ovl_err choose_bsmul(ovl_plan *p, int P, int ppn, int cores, const ovl_bsmul_shape *sh, const ovl_plan_src *src,
                            char *why, size_t nwhy) {
  if (!sh)
    return ovl_err_set(OVL_ERR_ARG, "auto: the block-sparse product is planned from its matrices' shape: "
                                    "ovl_plan_resolve_bsmul (ovl_bsmat_shape), not ovl_plan_resolve");
  ovl_machine m;
  char msrc[512];
  OVL_TRY(ovl_plan_machine(src ? src->machine : NULL, &m, msrc, sizeof msrc));
  if (cores > 0) m.cores = cores;
  ovl_plan cand[PLAN_MAXCAND];
  ovl_model_cost pr[PLAN_MAXCAND];
  int nc = ovl_model_candidates(OVL_FAMILY_BSMUL, p->n, P, cand, PLAN_MAXCAND), keep = 0, gg = bsmul_grid_given(p);
  for (int k = 0; k < nc; k++) { /* the constraints the caller fixed */
    ovl_plan *c = &cand[k];
    if (p->algo != OVL_ALGO_AUTO && c->algo != p->algo) continue;
    if ((gg == 3 && c->algo == OVL_ALGO_BSUMMA) || (gg == 2 && c->algo == OVL_ALGO_BS25D)) continue;
    if (c->algo == OVL_ALGO_BS25D && ((p->s > 0 && p->s != c->s) || (p->c > 0 && p->c != c->c))) continue;
    if (c->algo == OVL_ALGO_BSUMMA && gg == 2) { /* the grid given (one side: the other from P) */
      c->p = p->p > 0 ? p->p : P / p->q, c->q = p->q > 0 ? p->q : P / p->p;
      if (c->p < 1 || c->q < 1) continue;
    }
    c->ppn = ppn;
    if (p->ndup > 0) c->ndup = p->ndup;
    cand[keep++] = *c;
  }
  if (keep == 0 && p->algo != OVL_ALGO_AUTO) { /* e.g. bs2.5d with c = 1: the algorithm on the shape rules' grid */
    cand[0] = ovl_plan_default(p->algo, p->n, P);
    cand[0].ppn = ppn, cand[0].s = p->s, cand[0].c = p->c, cand[0].p = p->p, cand[0].q = p->q;
    if (p->ndup > 0) cand[0].ndup = p->ndup;
    if (cand[0].algo == OVL_ALGO_BS25D && cand[0].c > 0 && cand[0].s <= 0)
      cand[0].s = cand[0].p = cand[0].q = P / cand[0].c > 1 ? ovl_isqrt(P / cand[0].c) : 1;
    keep = 1;
  }
  ovl_model_rank_bsmul(&m, sh, cand, keep, pr);
  if (keep == 0 || isinf(pr[0].total)) {
    char reason[512] = "";
    ovl_err why_rc = keep > 0 ? ovl_model_bsmul(&m, &cand[0], sh, &pr[0], NULL) : OVL_ERR_GRID;
    if (why_rc == OVL_ERR_ARG) return why_rc; /* the shape or a knob: the model's message */
    if (keep > 0 && why_rc != OVL_OK) snprintf(reason, sizeof reason, ": %s", ovl_errmsg());
    return ovl_err_set(OVL_ERR_GRID, "auto: no block-sparse product configuration%s%s fits %d ranks%s",
                       p->algo != OVL_ALGO_AUTO ? " of " : "", p->algo != OVL_ALGO_AUTO ? ovl_algo_name(p->algo) : "",
                       P, reason);
  }
  const ovl_plan *c = &cand[0];
  if (p->algo == OVL_ALGO_AUTO) p->algo = c->algo;
  if (p->ndup <= 0) p->ndup = c->ndup;
  if (is_2d(c->algo) && p->p <= 0 && p->q <= 0) p->p = c->p, p->q = c->q;
  if (has_c(c->algo) && p->s <= 0 && p->c <= 0) p->s = c->s, p->c = c->c;
  snprintf(why, nwhy, "cost model of the block-sparse product, machine %s (nblk=%" PRId64 ", products=%" PRId64 ")",
           msrc, sh->nblk, sh->products);
  return OVL_OK;
}

/* Rank 0: the tune database's or the cost model's choice for the open
 * fields of *p, P ranks, ppn of them per node (the model's node sharing),
 * cores per node (0: the machine file's); subset: a run on part of every
 * node's ranks (the tune database holds whole runs only). */
static ovl_err choose(ovl_family f, ovl_plan *p, int P, int ppn, int cores, int subset, const ovl_bsmul_shape *sh,
                      const ovl_plan_src *src, char *why, size_t nwhy) {
  if (f == OVL_FAMILY_BSMUL) return choose_bsmul(p, P, ppn, cores, sh, src, why, nwhy);
  if (f == OVL_FAMILY_SQ) { /* one algorithm; its N_DUP the family's default (the knob table) */
    ovl_plan d = ovl_plan_default(OVL_ALGO_SQ, p->n, P);
    d.ndup = ovl_knob_default_int(OVL_KNOB_NDUP, OVL_FAMILY_SQ);
    d.lookahead = ovl_knob_default_int(OVL_KNOB_LOOKAHEAD, OVL_FAMILY_SQ);
    take_choice(p, &d);
    snprintf(why, nwhy, "the symmetric square's defaults (no cost model or tune entry of its own)");
    return OVL_OK;
  }
  const char *env = getenv("OVL_TUNE_FILE");
  const char *tune = src && src->tune_file ? src->tune_file : (env && *env ? env : NULL);
  if (tune && !subset) {
    ovl_plan t;
    int64_t nf = 0;
    int found = 0;
    OVL_TRY(ovl_tunedb_lookup(tune, f, p->n, P, &t, &nf, &found));
    if (found && (p->algo == OVL_ALGO_AUTO || t.algo == p->algo) && (p->ndup <= 0 || t.ndup == p->ndup)) {
      take_choice(p, &t);
      snprintf(why, nwhy, "tune file %s, measured at n=%" PRId64, tune, nf);
      return OVL_OK;
    }
  }
  ovl_machine m;
  char msrc[512];
  OVL_TRY(ovl_plan_machine(src ? src->machine : NULL, &m, msrc, sizeof msrc));
  if (cores > 0) m.cores = cores;
  ovl_plan *cand = malloc(sizeof *cand * PLAN_MAXCAND);
  ovl_model_cost *pr = malloc(sizeof *pr * PLAN_MAXCAND);
  if (!cand || !pr) {
    free(cand), free(pr);
    return ovl_err_set(OVL_ERR_NOMEM, "planner: cannot allocate the candidates");
  }
  /* SymmSquareCube under auto on a rank count without its grids (2, 3,
   * 5, ...): the best configuration of the largest Q < P that has one, the
   * other ranks idle (as the shape rules leave them) */
  int Q = P, keep = 0;
again:;
  int nc = ovl_model_candidates(f, p->n, Q, cand, PLAN_MAXCAND);
  keep = 0;
  for (int k = 0; k < nc; k++) { /* the constraints the caller fixed */
    if (p->algo != OVL_ALGO_AUTO && cand[k].algo != p->algo) continue;
    cand[k].ppn = ppn; /* the fields the caller fixed are predicted as given */
    if (p->ndup > 0) cand[k].ndup = p->ndup;
    if (p->b > 0) cand[k].b = p->b;
    if (p->lookahead >= 0) cand[k].lookahead = p->lookahead;
    cand[keep++] = cand[k];
  }
  if (keep == 0 && p->algo != OVL_ALGO_AUTO) { /* e.g. alg4 with ndup 3, or Cannon on 8 ranks: the pair itself */
    cand[0] = ovl_plan_default(p->algo, p->n, P);
    cand[0].ppn = ppn; /* its knobs: the family's defaults (the table), those given win */
    if (p->ndup > 0) cand[0].ndup = p->ndup;
    if (p->b > 0) cand[0].b = p->b;
    keep = 1;
  }
  ovl_model_rank(&m, cand, keep, pr);
  if ((keep == 0 || isinf(pr[0].total)) && f == OVL_FAMILY_SSC && p->algo == OVL_ALGO_AUTO && Q > 1) {
    Q--;
    goto again;
  }
  ovl_err rc = OVL_OK;
  if (keep == 0 || isinf(pr[0].total)) {
    rc = ovl_err_set(OVL_ERR_GRID, "auto: no %s configuration%s%s fits %d ranks", ovl_family_name(f),
                     p->algo != OVL_ALGO_AUTO ? " of " : "", p->algo != OVL_ALGO_AUTO ? ovl_algo_name(p->algo) : "", P);
  } else {
    take_choice(p, &cand[0]);
    if (Q < P) snprintf(why, nwhy, "cost model, machine %s, on %d of the %d ranks", msrc, Q, P);
    else snprintf(why, nwhy, "cost model, machine %s", msrc);
  }
  free(cand), free(pr);
  return rc;
}

/* Fill the grid and the groups by the shape rules. */
static ovl_err shape(ovl_plan *p, int P) {
  int gp, gq, gs, gc;
  ovl_grid_shape(p->algo, P, &gp, &gq, &gs, &gc);
  if (is_2d(p->algo)) {
    if (p->p <= 0 && p->q <= 0) p->p = gp, p->q = gq;
    else if (p->p <= 0) p->p = P / p->q > 0 ? P / p->q : 1;
    else if (p->q <= 0) p->q = P / p->p > 0 ? P / p->p : 1;
    int dims[2] = {p->p, p->q}, need = 0;
    OVL_TRY(ovl_ranks_product(dims, 2, "grid", &need));
    p->s = p->c = 0;
    if (p->algo == OVL_ALGO_HSUMMA && (p->groups_i <= 0 || p->groups_j <= 0)) {
      if (p->G <= 0) ovl_hgroups_default(p->p, p->q, &p->groups_i, &p->groups_j);
      else OVL_TRY(ovl_hgroups_auto_dims(p->p, p->q, p->G, &p->groups_i, &p->groups_j));
    }
    if (p->algo == OVL_ALGO_HSUMMA && p->groups_i > 0) {
      int gd[2] = {p->groups_i, p->groups_j};
      OVL_TRY(ovl_ranks_product(gd, 2, "HSUMMA groups", &p->G));
    }
  } else {
    if (p->s <= 0 && p->c <= 0) p->s = gs, p->c = gc;
    else if (p->s <= 0) { /* c given: the largest s with s s c <= P and c | s (1 x 1 x c for the square) */
      int ss = P / p->c > 1 ? ovl_isqrt(P / p->c) : 1;
      while (has_c(p->algo) && p->algo != OVL_ALGO_BS25D && p->c > 1 && ss > 1 && ss % p->c) ss--;
      p->s = ss;
    } else if (p->c <= 0) p->c = has_c(p->algo) ? 1 : p->s;
    p->p = p->q = p->s;
  }
  return OVL_OK;
}

/* The checks of ovl_plan_check; the fit to the ranks only when ranks != 0
 * (ranks < 0: idle ranks allowed). */
static ovl_err check_plan(const ovl_plan *p, ovl_family f, int ranks) {
  if ((int)p->algo < 0 || p->algo >= OVL_ALGO_N || ovl_algo_family(p->algo) != f)
    return ovl_err_set(OVL_ERR_ARG, "%s is not a %s algorithm", ovl_algo_name(p->algo), family_what(f));
  /* the ranges: the knob table's rows (ndup, b, lookahead; outer and repl when set) */
  OVL_TRY(ovl_knob_check_plan(p, ovl_algo_name(p->algo)));
  if (ovl_knob_applies(OVL_KNOB_OUTER, p->algo) && p->outer > 0 && p->outer < p->b)
    return ovl_err_set(OVL_ERR_ARG, "--outer %" PRId64 " must be >= --block %" PRId64, p->outer, p->b);
  int need = 0, dims[3] = {p->p, p->q, 0}, d3[3] = {p->s, p->s, p->c};
  if (is_2d(p->algo) && (p->p < 1 || p->q < 1))
    return ovl_err_set(OVL_ERR_GRID, "%s: --grid %dx%d", ovl_algo_name(p->algo), p->p, p->q);
  if (!is_2d(p->algo) && (p->s < 1 || p->c < 1))
    return ovl_err_set(OVL_ERR_GRID, "%s: --grid %dx%dx%d", ovl_algo_name(p->algo), p->s, p->s, p->c);
  OVL_TRY(is_2d(p->algo) ? ovl_ranks_product(dims, 2, "--grid", &need) : ovl_ranks_product(d3, 3, "--grid", &need));
  if (p->algo == OVL_ALGO_CANNON && p->p != p->q)
    return ovl_err_set(OVL_ERR_GRID, "cannon needs a square --grid, got %dx%d", p->p, p->q);
  if ((p->algo == OVL_ALGO_3D || (p->algo >= OVL_ALGO_SSC3 && p->algo <= OVL_ALGO_SSC5)) && p->c != p->s)
    return ovl_err_set(OVL_ERR_GRID, "%s needs a --grid PxPxP, got %dx%dx%d", ovl_algo_name(p->algo), p->s, p->s, p->c);
  if (p->algo == OVL_ALGO_BS25D && p->c > p->s && p->s != 1)
    return ovl_err_set(OVL_ERR_GRID,
                       "bs2.5d: the replication --repl %d exceeds the plane side s = %d (c > s only for s = 1)", p->c,
                       p->s);
  if (has_c(p->algo) && p->algo != OVL_ALGO_BS25D && p->s % p->c != 0 && !(p->algo == OVL_ALGO_SQ && p->s == 1))
    return ovl_err_set(OVL_ERR_GRID, "%s: the replication --repl %d must divide s = %d", ovl_algo_name(p->algo), p->c,
                       p->s);
  int gd[2] = {p->groups_i, p->groups_j}, ng = 0;
  if (p->algo == OVL_ALGO_HSUMMA && p->groups_i >= 1 && p->groups_j >= 1)
    OVL_TRY(ovl_ranks_product(gd, 2, "--groups", &ng));
  if (p->algo == OVL_ALGO_HSUMMA && (p->groups_i < 1 || p->groups_j < 1 || p->p % p->groups_i || p->q % p->groups_j))
    return ovl_err_set(OVL_ERR_ARG, "hsumma: --groups %d cannot tile the %dx%d grid", p->G, p->p, p->q);
  if (p->algo == OVL_ALGO_HSUMMA && p->arrival && p->groups_i == p->p && p->groups_j == p->q && p->p * p->q > 1)
    return ovl_err_set(OVL_ERR_ARG,
                       "hsumma: --arrival-order acts on the broadcasts inside the groups, and --groups %dx%d (G = P) "
                       "leaves none: use fewer groups, or --algo summa with -b M; refused rather than ignored",
                       p->groups_i, p->groups_j);
  if (ranks == 0 || p->P <= 0) return OVL_OK;
  if (need > p->P)
    return ovl_err_set(OVL_ERR_GRID, "%s needs %d ranks for its grid, but there are %d", ovl_algo_name(p->algo), need,
                       p->P);
  if (need < p->P && ranks > 0) {
    ovl_algo fit = OVL_ALGO_N;
    if (f == OVL_FAMILY_GEMM) fit = OVL_ALGO_SUMMA;
    else if (f == OVL_FAMILY_BSMUL) fit = OVL_ALGO_BSUMMA;
    else {
      int s, c;
      ovl_grid25d_dims(p->P, &s, &c);
      fit = s > 0 ? OVL_ALGO_SSC6 : OVL_ALGO_N;
    }
    return ovl_err_set(OVL_ERR_GRID,
                       "%s uses %d of the %d ranks; run with %d ranks, let the other %d stay idle (--allow-idle), or "
                       "choose an algorithm that uses them all%s%s",
                       ovl_algo_name(p->algo), need, p->P, need, p->P - need, fit != OVL_ALGO_N ? " (" : "",
                       fit != OVL_ALGO_N ? ovl_algo_name(fit) : "");
  }
  return OVL_OK;
}

ovl_err ovl_plan_check(const ovl_plan *p, ovl_family f, int allow_idle) {
  OVL_TRY(ovl_check_ptr(p, "ovl_plan_check", "plan"));
  return check_plan(p, f, allow_idle ? -1 : 1);
}

/* ovl_plan_resolve with the node sharing of the model: ppn ranks per node
 * (0: the run's), cores per node (0: the machine file's); subset as choose. */
static ovl_err resolve(MPI_Comm comm, ovl_family f, ovl_plan *plan, int ppn, int cores, int subset,
                       const ovl_bsmul_shape *sh, const ovl_plan_src *src, char *why, size_t nwhy) {
  int rank = 0, size = 1;
  OVL_MPI(MPI_Comm_rank(comm, &rank));
  OVL_MPI(MPI_Comm_size(comm, &size));
  char w[OVL_PLAN_WHY] = "given";
  ovl_plan p = *plan;
  if (p.P <= 0) p.P = size;
  ovl_err rc = OVL_OK;
  if (p.algo != OVL_ALGO_AUTO && ((int)p.algo < 0 || p.algo >= OVL_ALGO_N || ovl_algo_family(p.algo) != f))
    rc = ovl_err_set(OVL_ERR_ARG, "%s is not a %s algorithm", ovl_algo_name(p.algo), family_what(f));
  else if (!ovl_knob_is_open(&p, OVL_KNOB_NDUP)) rc = ovl_knob_check(OVL_KNOB_NDUP, p.ndup, NULL);
  /* the block-sparse product: its grid (c of bs2.5d) is the model's choice too */
  int open = open_choice(&p) || (f == OVL_FAMILY_BSMUL && bsmul_grid_given(&p) == 0), nodes = 1, consec = 1;
  if (open && ppn <= 0 && rc == OVL_OK) OVL_TRY(ovl_node_ranks(comm, &ppn, &nodes, &consec));
  if (rank == 0 && rc == OVL_OK) {
    if (open) rc = choose(f, &p, p.P, ppn, cores, subset, sh, src, w, sizeof w);
    if (rc == OVL_OK) {
      if (p.b <= 0) p.b = ovl_knob_default(OVL_KNOB_BLOCK, f);
      if (p.lookahead < 0) p.lookahead = ovl_knob_default_int(OVL_KNOB_LOOKAHEAD, f);
      if (p.ppn < 1) p.ppn = 1;
      rc = shape(&p, p.P);
      if (rc == OVL_OK) rc = check_plan(&p, f, 0); /* the fit to the ranks: ovl_plan_grids */
    }
  }
  OVL_TRY(ovl_err_agree(comm, rc));
  OVL_MPI(MPI_Bcast(&p, (int)sizeof p, MPI_BYTE, 0, comm));
  OVL_MPI(MPI_Bcast(w, (int)sizeof w, MPI_CHAR, 0, comm));
  *plan = p;
  if (why && nwhy) snprintf(why, nwhy, "%s", w);
  return OVL_OK;
}

ovl_err ovl_plan_resolve(MPI_Comm comm, ovl_family f, ovl_plan *plan, const ovl_plan_src *src, char *why, size_t nwhy) {
  OVL_TRY(ovl_check_comm(comm, "ovl_plan_resolve"));
  OVL_TRY(ovl_check_ptr(plan, "ovl_plan_resolve", "plan"));
  return resolve(comm, f, plan, plan->ppn > 1 ? plan->ppn : 0, 0, 0, NULL, src, why, nwhy);
}

ovl_err ovl_plan_resolve_bsmul(MPI_Comm comm, ovl_plan *plan, const ovl_bsmul_shape *shape, const ovl_plan_src *src,
                               char *why, size_t nwhy) {
  OVL_TRY(ovl_check_comm(comm, "ovl_plan_resolve_bsmul"));
  OVL_TRY(ovl_check_ptr(plan, "ovl_plan_resolve_bsmul", "plan"));
  OVL_TRY(ovl_check_ptr(shape, "ovl_plan_resolve_bsmul", "shape"));
  return resolve(comm, OVL_FAMILY_BSMUL, plan, plan->ppn > 1 ? plan->ppn : 0, 0, 0, shape, src, why, nwhy);
}

ovl_err ovl_plan_grids(MPI_Comm comm, const ovl_plan *p, int flags, ovl_grid2d *g2, ovl_grid3d *g3) {
  OVL_TRY(ovl_check_ptr(g2, "ovl_plan_grids", "g2"));
  OVL_TRY(ovl_check_ptr(g3, "ovl_plan_grids", "g3"));
  OVL_TRY(ovl_check_comm(comm, "ovl_plan_grids"));
  OVL_TRY(ovl_check_ptr(p, "ovl_plan_grids", "plan"));
  *g2 = NULL, *g3 = NULL;
  int size = 1;
  OVL_MPI(MPI_Comm_size(comm, &size));
  ovl_plan q = *p;
  q.P = size;
  /* the same verdict on every rank before any communicator is made: a grid
   * that needs more ranks, or leaves some idle without leave, is refused
   * with what would fit */
  ovl_err rc = check_plan(&q, ovl_algo_family(p->algo), (flags & OVL_GRID_ALLOW_IDLE) ? -1 : 1);
  if (rc != OVL_OK) return rc;
  if (is_2d(p->algo)) return ovl_grid2d_create(comm, p->p, p->q, flags, g2);
  OVL_TRY(ovl_grid3d_create(comm, p->s, p->c, flags, g3));
  *g2 = ovl_grid3d_plane(*g3);
  return OVL_OK;
}

/* ---- options: derived from the knob table ---------------------------------------- */

/* Where the value of a knob's option goes in *v, and the option's type. */
static void *knob_dest(ovl_plan_optvals *v, ovl_knob_id id) {
  switch (id) {
  case OVL_KNOB_ALGO: return &v->algo;
  case OVL_KNOB_GRID: return &v->grid;
  case OVL_KNOB_BLOCK: return &v->b;
  case OVL_KNOB_GROUPS: return &v->groups;
  case OVL_KNOB_OUTER: return &v->outer;
  case OVL_KNOB_REPL: return &v->repl;
  case OVL_KNOB_NDUP: return &v->ndup;
  case OVL_KNOB_LOOKAHEAD: return &v->lookahead;
  case OVL_KNOB_ARRIVAL: return &v->arrival;
  case OVL_KNOB_BACKEND: return &v->backend;
  case OVL_KNOB_BCAST: return &v->bcast;
  case OVL_KNOB_DROPIN_MIN: return &v->dropin_min;
  case OVL_KNOB_DROPIN_MEM: return &v->dropin_mem;
  case OVL_KNOB_DROPIN_ROUTE: return &v->dropin_route;
  default: return NULL;
  }
}

static ovl_opt_type knob_opt_type(const ovl_knob *r) {
  switch (r->type) {
  case OVL_KNOB_NAME:
  case OVL_KNOB_ONOFF: return OVL_OPT_CHOICE;
  case OVL_KNOB_INT: return r->def[0] == OVL_AUTO ? OVL_OPT_INT : OVL_OPT_INT_OR_AUTO;
  case OVL_KNOB_SIZE: return OVL_OPT_SIZE;
  case OVL_KNOB_FLAG: return OVL_OPT_FLAG;
  default: return OVL_OPT_STRING;
  }
}

/* The help line of a knob for family f: the table's, with its default. */
static const char *knob_help(const ovl_knob *r, ovl_family f) {
  static char help[OVL_KNOB_N][OVL_FAMILY_N][256];
  char *h = help[r->id][f];
  int64_t d = ovl_knob_default(r->id, f);
  if (r->type == OVL_KNOB_INT || r->type == OVL_KNOB_SIZE) {
    if (d != OVL_AUTO)
      snprintf(h, sizeof help[0][0], "%s (default: %" PRId64 "; auto's choice with --algo auto)", r->help, d);
    else snprintf(h, sizeof help[0][0], "%s", r->help);
  } else if (r->type == OVL_KNOB_ONOFF) {
    snprintf(h, sizeof help[0][0], "%s (default: %s)", r->help, d ? "on" : "off");
  } else {
    snprintf(h, sizeof help[0][0], "%s", r->help);
  }
  return h;
}

/* The knobs every family's entries offer; the multiplication's own follow. */
static int knob_offered(const ovl_knob *r, ovl_family f) {
  for (int a = 0; a < OVL_ALGO_N; a++)
    if (ovl_algo_family((ovl_algo)a) == f && ((r->algos >> a) & 1u)) return 1;
  return 0;
}

int ovl_plan_knob_opts(ovl_family f, unsigned knobs, ovl_plan_optvals *v, ovl_opt *opts, int cap) {
  if (!v || !opts || cap < 0 || (int)f < 0 || f >= OVL_FAMILY_N) return -1;
  int n = 0;
  for (int k = 0; k < OVL_KNOB_N; k++) {
    const ovl_knob *r = &ovl_knobs[k];
    if (knobs ? !((knobs >> k) & 1u) : !knob_offered(r, f)) continue;
    if (n + 1 > cap) return -1;
    ovl_opt o = {r->name,
                 r->letter,
                 knob_opt_type(r),
                 knob_dest(v, r->id),
                 r->metavar,
                 knob_help(r, f),
                 r->type == OVL_KNOB_ONOFF ? r->names : ovl_knob_names(r->id, f),
                 r->min,
                 r->max};
    if (r->type == OVL_KNOB_NAME || r->type == OVL_KNOB_DIMS || r->type == OVL_KNOB_FLAG) o.min = 0, o.max = -1;
    opts[n++] = o;
  }
  return n;
}

int ovl_plan_opts(ovl_family f, ovl_plan_optvals *v, ovl_opt *opts, int cap) {
  int n = ovl_plan_knob_opts(f, 0, v, opts, cap);
  if (n < 0) return -1;
  const ovl_opt extra[] = {
      {"plan", 0, OVL_OPT_STRING, &v->plan, "TEXT",
       "a whole plan as a run prints it (\"summa grid=2x4 b=256 ndup=1 ...\"); knobs given beside it win", NULL, 0, -1},
      {"machine", 0, OVL_OPT_STRING, &v->machine, "FILE", "machine file for auto (default: $OVL_MACHINE)", NULL, 0, -1},
      {"tune-file", 0, OVL_OPT_STRING, &v->tune_file, "FILE", "tune file for auto (default: $OVL_TUNE_FILE)", NULL, 0,
       -1},
      /* the spelling of older releases (an alias: parsed, not listed; a note on stderr) */
      {"kernel", 0, OVL_OPT_CHOICE, &v->kernel_old, "NAME", NULL, ovl_algo_choices(f), 0, -1},
  };
  for (size_t k = 0; k < sizeof extra / sizeof extra[0]; k++) {
    if (n + 1 > cap) return -1;
    opts[n++] = extra[k];
  }
  return n;
}

ovl_err ovl_plan_option_applies(const char *option, ovl_algo algo) {
  if (!option) return ovl_err_set(OVL_ERR_ARG, "ovl_plan_option_applies: a NULL option");
  if (strcmp(option, "--backend own") == 0) { /* Cannon shifts its blocks point to point; the block-sparse product
                                                broadcasts with the MPI library's */
    if (algo != OVL_ALGO_CANNON && ovl_algo_family(algo) != OVL_FAMILY_BSMUL) return OVL_OK;
    return ovl_err_set(OVL_ERR_ARG,
                       "--backend own applies to --algo summa, hsumma, 3d, 2.5d and alg3-alg6, whose collectives it "
                       "runs, only, not %s: refused rather than ignored",
                       ovl_algo_name(algo));
  }
  const ovl_knob *r = strncmp(option, "--", 2) == 0 ? ovl_knob_find(option + 2) : NULL;
  if (!r || r->algos == (1u << OVL_ALGO_N) - 1u) return OVL_OK; /* any other option applies everywhere */
  if (ovl_knob_applies(r->id, algo)) return OVL_OK;
  return ovl_err_set(OVL_ERR_ARG, "%s applies to --algo %s only, not %s: refused rather than ignored", option, r->which,
                     algo == OVL_ALGO_AUTO ? "auto" : ovl_algo_name(algo));
}

ovl_err ovl_plan_opts_apply(ovl_family f, const ovl_plan_optvals *v0, ovl_plan *p) {
  OVL_TRY(ovl_check_ptr(v0, "ovl_plan_opts_apply", "v"));
  OVL_TRY(ovl_check_ptr(p, "ovl_plan_opts_apply", "plan"));
  ovl_plan_optvals vv = *v0, *v = &vv;
  if (v->kernel_old) {
    if (ovl_world_rank() == 0)
      fprintf(stderr,
              "ovl: note: --kernel is deprecated, use --algo (the kernel algorithm); accepted for one release\n");
    v->algo = v->kernel_old;
  }
  /* --plan: the printed plan first, its algorithm included (unless it says
   * auto); the knobs given beside it override the rest */
  const char *pl = v->plan;
  ovl_plan base = *p;
  if (pl) {
    base = ovl_plan_auto(f, p->n);
    base.P = p->P, base.ppn = p->ppn;
    OVL_TRY(ovl_plan_parse(pl, f, &base));
  }
  const char *algo_name = pl && base.algo != OVL_ALGO_AUTO ? ovl_algo_name(base.algo) : v->algo;
  int is_auto = !algo_name || strcmp(algo_name, "auto") == 0;
  if (is_auto) p->algo = OVL_ALGO_AUTO;
  else OVL_TRY(ovl_algo_parse(algo_name, &p->algo));
  if (!is_auto && ovl_algo_family(p->algo) != f)
    return ovl_err_set(OVL_ERR_ARG, "--algo %s is not a %s algorithm", algo_name, family_what(f));
  /* not given: the plan's (--plan), else auto's choice with --algo auto, else the family's default (the table) */
  if (pl) {
    ovl_algo keep = p->algo;
    *p = base, p->algo = keep;
  } else {
    p->ndup = is_auto ? OVL_AUTO : ovl_knob_default_int(OVL_KNOB_NDUP, f);
    p->b = is_auto ? OVL_AUTO : ovl_knob_default(OVL_KNOB_BLOCK, f);
    p->lookahead = is_auto ? OVL_AUTO : ovl_knob_default_int(OVL_KNOB_LOOKAHEAD, f);
    p->arrival = ovl_knob_default_int(OVL_KNOB_ARRIVAL, f);
    p->outer = 0;
  }
  if (v->ndup > 0) p->ndup = v->ndup;
  else if (v->ndup == OVL_AUTO) p->ndup = OVL_AUTO;
  if (v->b > 0) p->b = v->b;
  if (v->lookahead) p->lookahead = 1;
  if (v->outer > 0) p->outer = v->outer;
  if (v->dropin_min > 0) p->dropin_min = v->dropin_min;
  if (v->dropin_mem > 0) p->dropin_mem = v->dropin_mem;
  if (v->dropin_route) OVL_TRY(ovl_knob_set(p, OVL_KNOB_DROPIN_ROUTE, OVL_FAMILY_GEMM, v->dropin_route));
  if (v->backend) OVL_TRY(ovl_backend_parse(v->backend, &p->coll.backend));
  if (v->arrival) p->arrival = strcmp(v->arrival, "on") == 0;
  if (v->bcast) OVL_TRY(ovl_alg_parse("bcast", v->bcast, &p->coll.bcast));
  if (v->b > 0) OVL_TRY(ovl_plan_option_applies("--block", p->algo));
  if (v->lookahead) OVL_TRY(ovl_plan_option_applies("--lookahead", p->algo));
  if (v->outer > 0) OVL_TRY(ovl_plan_option_applies("--outer", p->algo));
  if (v->groups) OVL_TRY(ovl_plan_option_applies("--groups", p->algo));
  if (v->repl > 0) OVL_TRY(ovl_plan_option_applies("--repl", p->algo));
  if (v->arrival) OVL_TRY(ovl_plan_option_applies("--arrival-order", p->algo));
  if (v->bcast && strcmp(v->bcast, "auto") != 0) { /* a schedule of ovl's own broadcast */
    if (p->coll.backend != OVL_BACKEND_OWN)
      return ovl_err_set(OVL_ERR_ARG,
                         "--bcast-alg %s applies to --backend own only (the MPI library picks its own broadcast): "
                         "refused rather than ignored",
                         v->bcast);
    OVL_TRY(ovl_plan_option_applies("--bcast-alg", p->algo));
  }
  if (v->backend && p->coll.backend == OVL_BACKEND_OWN) OVL_TRY(ovl_plan_option_applies("--backend own", p->algo));
  int is3 = !is_auto && ovl_algo_is_3d(p->algo);
  if (v->grid) {
    int dims[3] = {0, 0, 0}, nd = 0;
    OVL_TRY(ovl_parse_dims(v->grid, dims, &nd));
    if (is_auto)
      return ovl_err_set(OVL_ERR_ARG, "--grid needs an algorithm (--algo): the grid follows from it under auto");
    if (is3 && (nd != 3 || dims[0] != dims[1]))
      return ovl_err_set(OVL_ERR_ARG, "--grid is SxSxC, got '%s' (%s runs on an s x s x c grid)", v->grid,
                         ovl_algo_name(p->algo));
    if (!is3 && nd != 2)
      return ovl_err_set(OVL_ERR_ARG, "--grid is PxQ, got '%s' (%s runs on a p x q grid)", v->grid,
                         ovl_algo_name(p->algo));
    int ranks = 0; /* the grid's processes must fit in an int: exit 2, before any communicator */
    OVL_TRY(ovl_ranks_product(dims, nd, "--grid", &ranks));
    if (is3) p->s = dims[0], p->c = dims[2];
    else p->p = dims[0], p->q = dims[1];
  }
  if (v->repl > 0) {
    if (v->grid && p->c != v->repl)
      return ovl_err_set(OVL_ERR_ARG, "--repl %d conflicts with --grid %s", v->repl, v->grid);
    p->c = v->repl;
  }
  if (v->groups) {
    int gd[3], gn = 0;
    OVL_TRY(ovl_parse_dims(v->groups, gd, &gn));
    if (gn == 2) OVL_TRY(ovl_ranks_product(gd, 2, "--groups", &p->G));
    if (gn == 2) p->groups_i = gd[0], p->groups_j = gd[1];
    else if (gn == 1) p->G = gd[0];
    else return ovl_err_set(OVL_ERR_ARG, "--groups is IxJ or a count, got '%s'", v->groups);
  }
  if (v->outer > 0 && v->b > 0 && v->outer < v->b)
    return ovl_err_set(OVL_ERR_ARG, "--outer %" PRId64 " must be >= --block %" PRId64, v->outer, v->b);
  return OVL_OK;
}

ovl_err ovl_plan_resolve_ppn(MPI_Comm comm, ovl_family f, ovl_plan *plan, int *ppn, const ovl_plan_src *src, char *why,
                             size_t nwhy) {
  OVL_TRY(ovl_check_comm(comm, "ovl_plan_resolve_ppn"));
  OVL_TRY(ovl_check_ptr(plan, "ovl_plan_resolve_ppn", "plan"));
  OVL_TRY(ovl_check_ptr(ppn, "ovl_plan_resolve_ppn", "ppn"));
  int P = 0, rank = 0, rpn = 1, nodes = 1, consec = 1, cores = 0;
  OVL_MPI(MPI_Comm_size(comm, &P));
  OVL_MPI(MPI_Comm_rank(comm, &rank));
  if (*ppn != 0) {
    OVL_TRY(ovl_node_ranks(comm, &rpn, &nodes, &consec));
    OVL_TRY(ovl_node_cores(comm, &cores));
    OVL_MPI(MPI_Allreduce(MPI_IN_PLACE, &cores, 1, MPI_INT, MPI_MIN, comm)); /* one figure for every rank */
  }
  ovl_plan want = *plan;
  if (*ppn != OVL_AUTO) {
    int k = *ppn > 0 && *ppn < rpn ? *ppn : 0;
    want.P = k > 0 ? nodes * k : P;
    OVL_TRY(resolve(comm, f, &want, k, cores, k > 0, NULL, src, why, nwhy));
    *plan = want;
    return OVL_OK;
  }
  ovl_machine m;
  ovl_err rc = rank == 0 ? ovl_plan_machine(src ? src->machine : NULL, &m, NULL, 0) : OVL_OK;
  OVL_TRY(ovl_err_agree(comm, rc));
  m.cores = cores; /* the node this run is on: its cores are shared by its ranks, or given to the active ones */
  double bt = INFINITY;
  int best_k = 0;
  for (int k = 1; k <= rpn; k++) { /* every K: nodes x K ranks, the algorithm's grid on them */
    ovl_plan c = want;
    c.P = nodes * k, c.ppn = k;
    char w[OVL_PLAN_WHY];
    ovl_plan_src nt = {src ? src->machine : NULL, NULL};
    if (resolve(comm, f, &c, k, cores, k < rpn, NULL, &nt, w, sizeof w) != OVL_OK) continue; /* no grid */
    ovl_model_cost cost;
    double t = INFINITY;
    ovl_plan pc = c;
    int used = pc.s > 0 ? pc.s * pc.s * pc.c : pc.p * pc.q; /* a grid smaller than a node: the rest sleep */
    if (used > 0 && used < pc.ppn) pc.ppn = used;
    if (rank == 0 && ovl_model_predict(&m, &pc, &cost) == OVL_OK) t = cost.total;
    OVL_MPI(MPI_Bcast(&t, 1, MPI_DOUBLE, 0, comm));
    if (t < bt) {
      bt = t, best_k = k, *plan = c;
      if (why) snprintf(why, nwhy, "%s", w);
    }
  }
  if (!isfinite(bt)) return ovl_err_set(OVL_ERR_GRID, "--ppn auto: no grid fits %d nodes x K ranks", nodes);
  ovl_err_clear();
  *ppn = best_k == rpn ? 0 : best_k;
  return OVL_OK;
}
