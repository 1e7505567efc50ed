/* Process grids: 2D, 3D / 2.5D, HSUMMA groups. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "ovl/grid.h"

/* Lane sets made on demand, keyed by (direction, ndup). */
#define LANE_CACHE 64 /* lane sets per grid: 3 directions x many N_DUP values (a sweep) */
typedef struct lane_cache {
  int n;
  int dir[LANE_CACHE], ndup[LANE_CACHE];
  ovl_lanes lanes[LANE_CACHE];
} lane_cache;

#define HG_CACHE 8
struct ovl_grid2d_s {
  int p, q, i, j, active;
  MPI_Comm parent, comm, row, col;
  lane_cache lc;
  int nhg;
  ovl_hgroups hg[HG_CACHE];
};

struct ovl_grid3d_s {
  int s, c, i, j, k, active;
  MPI_Comm parent, comm, row, col, grd, plane_comm;
  ovl_grid2d plane;
  lane_cache lc;
};

struct ovl_hgroups_s {
  int nI, nJ, active;
  MPI_Comm outer_row, outer_col, inner_row, inner_col;
  lane_cache lc;
};

static void comm_free(MPI_Comm *c) {
  if (*c != MPI_COMM_NULL) MPI_Comm_free(c);
  *c = MPI_COMM_NULL;
}

static ovl_err cache_lanes(lane_cache *lc, int active, MPI_Comm comm, ovl_grid_dir dir, int ndup, ovl_lanes *out) {
  *out = NULL;
  /* refused on idle ranks too: every rank of the parent gives the same code */
  OVL_TRY(ovl_knob_check(OVL_KNOB_NDUP, ndup, NULL));
  if (!active) return OVL_OK;
  for (int k = 0; k < lc->n; k++)
    if (lc->dir[k] == (int)dir && lc->ndup[k] == ndup) {
      *out = lc->lanes[k];
      return OVL_OK;
    }
  if (lc->n == LANE_CACHE)
    return ovl_err_set(OVL_ERR_ARG, "a grid keeps at most %d lane sets (asked for one more with N_DUP = %d)",
                       LANE_CACHE, ndup);
  OVL_TRY(ovl_lanes_create(comm, ndup, &lc->lanes[lc->n]));
  lc->dir[lc->n] = (int)dir;
  lc->ndup[lc->n] = ndup;
  *out = lc->lanes[lc->n++];
  return OVL_OK;
}

static void cache_free(lane_cache *lc) {
  for (int k = 0; k < lc->n; k++) ovl_lanes_destroy(&lc->lanes[k]);
  lc->n = 0;
}

/* ---- 2D ---------------------------------------------------------------- */

void ovl_grid2d_auto_dims(int P, int *p, int *q) {
  int best = 1;
  if (P < 1) P = 1;
  for (int d = 1; (long)d * d <= P; d++)
    if (P % d == 0) best = d;
  if (p) *p = best;
  if (q) *q = P / best;
}

static ovl_err fit_check(int need, int P, int flags, const char *what) {
  if (need > P) return ovl_err_set(OVL_ERR_GRID, "%s needs %d ranks but the communicator has %d", what, need, P);
  if (need < P && !(flags & OVL_GRID_ALLOW_IDLE))
    return ovl_err_set(OVL_ERR_GRID,
                       "%s uses %d ranks but the communicator has %d; run with %d ranks, or allow the "
                       "extra %d to stay idle",
                       what, need, P, need, P - need);
  return OVL_OK;
}

static ovl_err grid2d_validate(int P, int *p, int *q, int flags) {
  char what[64];
  if (*p < 0 || *q < 0) return ovl_err_set(OVL_ERR_ARG, "grid dimensions must be >= 0, got %d x %d", *p, *q);
  if (*p == 0 && *q == 0) {
    ovl_grid2d_auto_dims(P, p, q);
  } else if (*p == 0) {
    *p = P / *q;
  } else if (*q == 0) {
    *q = P / *p;
  }
  if (*p == 0 || *q == 0)
    return ovl_err_set(OVL_ERR_GRID, "a grid with a dimension of %d cannot fit %d ranks", *p ? *p : *q, P);
  int dims[2] = {*p, *q}, need = 0;
  OVL_TRY(ovl_ranks_product(dims, 2, "grid", &need));
  snprintf(what, sizeof what, "a %d x %d grid", *p, *q);
  return fit_check(need, P, flags, what);
}

static ovl_err grid2d_alloc_idle(ovl_grid2d *out) {
  ovl_grid2d g = calloc(1, sizeof *g);
  if (!g) return ovl_err_set(OVL_ERR_NOMEM, "cannot allocate a grid handle");
  g->i = g->j = -1;
  g->parent = g->comm = g->row = g->col = MPI_COMM_NULL;
  *out = g;
  return OVL_OK;
}

ovl_err ovl_grid2d_create(MPI_Comm parent, int p, int q, int flags, ovl_grid2d *out) {
  int P = 0, rank = 0;
  OVL_TRY(ovl_check_ptr(out, "ovl_grid2d_create", "out"));
  *out = NULL;
  OVL_TRY(ovl_check_comm(parent, "ovl_grid2d_create"));
  OVL_MPI(MPI_Comm_size(parent, &P));
  OVL_MPI(MPI_Comm_rank(parent, &rank));
  const int64_t key[] = {p, q, flags};
  static const char *const names[] = {"the grid's p", "the grid's q", "the grid's flags"};
  ovl_err rc = grid2d_validate(P, &p, &q, flags);
  ovl_grid2d g = NULL;
  if (rc == OVL_OK) rc = grid2d_alloc_idle(&g);
  if ((rc = ovl_err_agree_same(parent, rc, key, names, 3)) != OVL_OK) {
    free(g);
    return rc;
  }
  g->p = p;
  g->q = q;
  OVL_MPI(MPI_Comm_dup(parent, &g->parent));
  g->active = rank < p * q;
  OVL_MPI(MPI_Comm_split(g->parent, g->active ? 0 : MPI_UNDEFINED, rank, &g->comm));
  if (g->active) {
    g->i = rank / q;
    g->j = rank % q;
    OVL_MPI(MPI_Comm_split(g->comm, g->i, g->j, &g->row));
    OVL_MPI(MPI_Comm_split(g->comm, g->j, g->i, &g->col));
  }
  *out = g;
  return OVL_OK;
}

ovl_err ovl_grid2d_destroy(ovl_grid2d *gp) {
  if (gp == NULL || *gp == NULL) return OVL_OK;
  ovl_grid2d g = *gp;
  for (int k = 0; k < g->nhg; k++) ovl_hgroups_destroy(&g->hg[k]);
  cache_free(&g->lc);
  comm_free(&g->row);
  comm_free(&g->col);
  comm_free(&g->comm);
  comm_free(&g->parent);
  free(g);
  *gp = NULL;
  return OVL_OK;
}

/* The accessors take a NULL handle as an idle one (grid.h). */
int ovl_grid2d_active(ovl_grid2d g) { return g ? g->active : 0; }
void ovl_grid2d_dims(ovl_grid2d g, int *p, int *q) {
  if (p) *p = g ? g->p : 0;
  if (q) *q = g ? g->q : 0;
}
void ovl_grid2d_coords(ovl_grid2d g, int *i, int *j) {
  if (i) *i = g ? g->i : -1;
  if (j) *j = g ? g->j : -1;
}
MPI_Comm ovl_grid2d_comm(ovl_grid2d g) { return g ? g->comm : MPI_COMM_NULL; }
MPI_Comm ovl_grid2d_row_comm(ovl_grid2d g) { return g ? g->row : MPI_COMM_NULL; }
MPI_Comm ovl_grid2d_col_comm(ovl_grid2d g) { return g ? g->col : MPI_COMM_NULL; }
MPI_Comm ovl_grid2d_parent(ovl_grid2d g) { return g ? g->parent : MPI_COMM_NULL; }

ovl_err ovl_grid2d_lanes(ovl_grid2d g, ovl_grid_dir dir, int ndup, ovl_lanes *out) {
  OVL_TRY(ovl_check_ptr(out, "ovl_grid2d_lanes", "out"));
  *out = NULL;
  OVL_TRY(ovl_check_handle(g, "ovl_grid2d_lanes", "the grid"));
  OVL_CHECK(dir == OVL_DIR_ROW || dir == OVL_DIR_COL, OVL_ERR_ARG, "a 2D grid has row and column lanes only");
  return cache_lanes(&g->lc, g->active, dir == OVL_DIR_ROW ? g->row : g->col, dir, ndup, out);
}

/* ---- 3D / 2.5D ----------------------------------------------------------- */

static ovl_err grid3d_validate(int P, int *s, int *c, int flags) {
  char what[64];
  if (*s < 0 || *c < 0) return ovl_err_set(OVL_ERR_ARG, "grid dimensions must be >= 0, got s=%d c=%d", *s, *c);
  if (*s == 0 && *c == 0) {
    *s = P > 1 ? ovl_icbrt(P) : 1;
    *c = *s;
  } else if (*s == 0) {
    *s = P / *c > 1 ? ovl_isqrt(P / *c) : 1;
  } else if (*c == 0) {
    *c = *s;
  }
  int dims[3] = {*s, *s, *c}, need = 0;
  OVL_TRY(ovl_ranks_product(dims, 3, "grid", &need));
  if (*c > *s && *s != 1) /* 1 x 1 x c: a stack of single ranks (ovl_sq splits the inner dimension over it) */
    return ovl_err_set(OVL_ERR_ARG, "replication c = %d exceeds the plane side s = %d (a 3D grid has c = s)", *c, *s);
  snprintf(what, sizeof what, "a %d x %d x %d grid", *s, *s, *c);
  return fit_check(need, P, flags, what);
}

void ovl_grid25d_dims(int P, int *s, int *c) {
  *s = *c = 0;
  for (int cc = 1; cc <= ovl_icbrt(P); cc++) {
    int ss = ovl_isqrt(P / cc); /* the largest ss with ss^2 cc <= P */
    if ((int64_t)ss * ss * cc == P && ss % cc == 0) *s = ss, *c = cc;
  }
}

void ovl_grid_shape(ovl_algo a, int P, int *p, int *q, int *s, int *c) {
  if (P < 1) P = 1;
  *p = *q = *s = *c = 0;
  switch (a) {
  case OVL_ALGO_SUMMA:
  case OVL_ALGO_HSUMMA:
  case OVL_ALGO_BSUMMA: ovl_grid2d_auto_dims(P, p, q); return;
  case OVL_ALGO_CANNON: *p = *q = ovl_isqrt(P); return;
  case OVL_ALGO_25D:
  case OVL_ALGO_SSC6:
    ovl_grid25d_dims(P, s, c);
    if (*s == 0) *s = ovl_isqrt(P), *c = 1;
    break;
  case OVL_ALGO_SQ:    /* the 2.5D grid, else a stack of single ranks splitting the inner dimension */
  case OVL_ALGO_BS25D: /* (the block-sparse product splits a step's blocks over the stack) */
    ovl_grid25d_dims(P, s, c);
    if (*s == 0) *s = 1, *c = P;
    break;
  default: *s = *c = ovl_icbrt(P); break;
  }
  *p = *q = *s;
}

ovl_err ovl_grid3d_create(MPI_Comm parent, int s, int c, int flags, ovl_grid3d *out) {
  int P = 0, rank = 0;
  OVL_TRY(ovl_check_ptr(out, "ovl_grid3d_create", "out"));
  *out = NULL;
  OVL_TRY(ovl_check_comm(parent, "ovl_grid3d_create"));
  OVL_MPI(MPI_Comm_size(parent, &P));
  OVL_MPI(MPI_Comm_rank(parent, &rank));
  const int64_t key[] = {s, c, flags};
  static const char *const names[] = {"the grid's s", "the grid's c", "the grid's flags"};
  ovl_err rc = grid3d_validate(P, &s, &c, flags);
  ovl_grid3d g = NULL;
  if (rc == OVL_OK) {
    g = calloc(1, sizeof *g);
    if (!g) rc = ovl_err_set(OVL_ERR_NOMEM, "cannot allocate a grid handle");
  }
  if ((rc = ovl_err_agree_same(parent, rc, key, names, 3)) != OVL_OK) {
    free(g);
    return rc;
  }
  g->s = s;
  g->c = c;
  g->i = g->j = g->k = -1;
  g->comm = g->row = g->col = g->grd = g->plane_comm = MPI_COMM_NULL;
  OVL_MPI(MPI_Comm_dup(parent, &g->parent));
  g->active = rank < s * s * c;
  OVL_MPI(MPI_Comm_split(g->parent, g->active ? 0 : MPI_UNDEFINED, rank, &g->comm));
  if (g->active) {
    g->k = rank / (s * s);
    g->i = (rank % (s * s)) / s;
    g->j = rank % s;
    OVL_MPI(MPI_Comm_split(g->comm, g->j + g->k * s, g->i, &g->row));
    OVL_MPI(MPI_Comm_split(g->comm, g->i + g->k * s, g->j, &g->col));
    OVL_MPI(MPI_Comm_split(g->comm, g->i * s + g->j, g->k, &g->grd));
    OVL_MPI(MPI_Comm_split(g->comm, g->k, g->i * s + g->j, &g->plane_comm));
    OVL_TRY(ovl_grid2d_create(g->plane_comm, s, s, 0, &g->plane));
  } else {
    OVL_TRY(grid2d_alloc_idle(&g->plane));
  }
  *out = g;
  return OVL_OK;
}

ovl_err ovl_grid3d_destroy(ovl_grid3d *gp) {
  if (gp == NULL || *gp == NULL) return OVL_OK;
  ovl_grid3d g = *gp;
  cache_free(&g->lc);
  ovl_grid2d_destroy(&g->plane);
  comm_free(&g->plane_comm);
  comm_free(&g->row);
  comm_free(&g->col);
  comm_free(&g->grd);
  comm_free(&g->comm);
  comm_free(&g->parent);
  free(g);
  *gp = NULL;
  return OVL_OK;
}

int ovl_grid3d_active(ovl_grid3d g) { return g ? g->active : 0; }
void ovl_grid3d_dims(ovl_grid3d g, int *s, int *c) {
  if (s) *s = g ? g->s : 0;
  if (c) *c = g ? g->c : 0;
}
void ovl_grid3d_coords(ovl_grid3d g, int *i, int *j, int *k) {
  if (i) *i = g ? g->i : -1;
  if (j) *j = g ? g->j : -1;
  if (k) *k = g ? g->k : -1;
}
MPI_Comm ovl_grid3d_comm(ovl_grid3d g) { return g ? g->comm : MPI_COMM_NULL; }
MPI_Comm ovl_grid3d_row_comm(ovl_grid3d g) { return g ? g->row : MPI_COMM_NULL; }
MPI_Comm ovl_grid3d_col_comm(ovl_grid3d g) { return g ? g->col : MPI_COMM_NULL; }
MPI_Comm ovl_grid3d_grd_comm(ovl_grid3d g) { return g ? g->grd : MPI_COMM_NULL; }
MPI_Comm ovl_grid3d_parent(ovl_grid3d g) { return g ? g->parent : MPI_COMM_NULL; }

ovl_err ovl_grid3d_lanes(ovl_grid3d g, ovl_grid_dir dir, int ndup, ovl_lanes *out) {
  OVL_TRY(ovl_check_ptr(out, "ovl_grid3d_lanes", "out"));
  *out = NULL;
  OVL_TRY(ovl_check_handle(g, "ovl_grid3d_lanes", "the grid"));
  OVL_CHECK(dir == OVL_DIR_ROW || dir == OVL_DIR_COL || dir == OVL_DIR_GRD, OVL_ERR_ARG, "unknown grid direction %d",
            (int)dir);
  MPI_Comm c = dir == OVL_DIR_ROW ? g->row : dir == OVL_DIR_COL ? g->col : g->grd;
  return cache_lanes(&g->lc, g->active, c, dir, ndup, out);
}

ovl_err ovl_grid3d_lanes3(ovl_grid3d g, int ndup, ovl_lanes *row, ovl_lanes *col, ovl_lanes *grd) {
  OVL_TRY(ovl_check_handle(g, "ovl_grid3d_lanes3", "the grid"));
  if (row) OVL_TRY(ovl_grid3d_lanes(g, OVL_DIR_ROW, ndup, row));
  if (col) OVL_TRY(ovl_grid3d_lanes(g, OVL_DIR_COL, ndup, col));
  if (grd) OVL_TRY(ovl_grid3d_lanes(g, OVL_DIR_GRD, ndup, grd));
  return OVL_OK;
}
ovl_grid2d ovl_grid3d_plane(ovl_grid3d g) { return g ? g->plane : NULL; }
int ovl_grid3d_rank_of(ovl_grid3d g, int i, int j, int k) {
  if (g == NULL || i < 0 || j < 0 || k < 0 || i >= g->s || j >= g->s || k >= g->c) return -1;
  return k * g->s * g->s + i * g->s + j;
}

/* ---- HSUMMA groups --------------------------------------------------------- */

ovl_err ovl_hgroups_auto_dims(int p, int q, int G, int *gI, int *gJ) {
  int bestI = 0;
  double bestd = 1e300;
  OVL_TRY(ovl_check_ptr(gI, "ovl_hgroups_auto_dims", "gI"));
  OVL_TRY(ovl_check_ptr(gJ, "ovl_hgroups_auto_dims", "gJ"));
  if (p < 1 || q < 1) return ovl_err_set(OVL_ERR_ARG, "ovl_hgroups_auto_dims: a %d x %d grid", p, q);
  if (G <= 0) return ovl_err_set(OVL_ERR_ARG, "number of groups G must be > 0, got %d", G);
  for (int a = 1; (int64_t)a * a <= G; a++) { /* the divisors in pairs (a, G / a): O(sqrt G) for any G */
    if (G % a) continue;
    for (int t = 0; t < 2; t++) {
      int i = t ? G / a : a;
      if (p % i || q % (G / i)) continue;
      double d = fabs(log((double)i) - log((double)(G / i)));
      if (d < bestd - 1e-12 || (fabs(d - bestd) <= 1e-12 && i > bestI)) {
        bestd = d;
        bestI = i;
      }
    }
  }
  if (bestI == 0)
    return ovl_err_set(OVL_ERR_ARG, "G = %d groups cannot tile a %d x %d grid (need I*J = G, I | %d, J | %d)", G, p, q,
                       p, q);
  *gI = bestI;
  *gJ = G / bestI;
  return OVL_OK;
}

void ovl_hgroups_default(int p, int q, int *gI, int *gJ) {
  int64_t pq = (int64_t)p * q; /* a grid's processes fit in an int (ovl_ranks_product); clamp anyway */
  int G = ovl_isqrt(pq > INT32_MAX ? INT32_MAX : pq > 0 ? (int)pq : 1);
  while (G > 1 && ovl_hgroups_auto_dims(p, q, G, gI, gJ) != OVL_OK) G--;
  if (G <= 1) *gI = *gJ = 1;
}

ovl_err ovl_hgroups_create(ovl_grid2d g, int gI, int gJ, ovl_hgroups *out) {
  ovl_err rc = OVL_OK;
  OVL_TRY(ovl_check_ptr(out, "ovl_hgroups_create", "out"));
  *out = NULL;
  OVL_TRY(ovl_check_handle(g, "ovl_hgroups_create", "the grid"));
  const int64_t key[] = {gI, gJ};
  static const char *const names[] = {"the groups' I", "the groups' J"};
  if (gI <= 0 || gJ <= 0) rc = ovl_err_set(OVL_ERR_ARG, "HSUMMA group dimensions must be > 0, got %d x %d", gI, gJ);
  else if (g->p % gI || g->q % gJ)
    rc = ovl_err_set(OVL_ERR_ARG, "%d x %d groups do not tile a %d x %d grid (I must divide %d, J must divide %d)", gI,
                     gJ, g->p, g->q, g->p, g->q);
  ovl_hgroups h = NULL;
  if (rc == OVL_OK) {
    h = calloc(1, sizeof *h);
    if (!h) rc = ovl_err_set(OVL_ERR_NOMEM, "cannot allocate a group handle");
  }
  if ((rc = ovl_err_agree_same(g->parent, rc, key, names, 2)) != OVL_OK) {
    free(h);
    return rc;
  }
  h->nI = gI;
  h->nJ = gJ;
  h->active = g->active;
  h->outer_row = h->outer_col = h->inner_row = h->inner_col = MPI_COMM_NULL;
  if (g->active) {
    int bi = g->p / gI, bj = g->q / gJ;
    int gi = g->i / bi, gj = g->j / bj, li = g->i % bi, lj = g->j % bj;
    OVL_MPI(MPI_Comm_split(g->comm, g->i * bj + lj, gj, &h->outer_row));
    OVL_MPI(MPI_Comm_split(g->comm, g->j * bi + li, gi, &h->outer_col));
    OVL_MPI(MPI_Comm_split(g->comm, g->i * gJ + gj, lj, &h->inner_row));
    OVL_MPI(MPI_Comm_split(g->comm, g->j * gI + gi, li, &h->inner_col));
  }
  *out = h;
  return OVL_OK;
}

ovl_err ovl_hgroups_destroy(ovl_hgroups *hp) {
  if (hp == NULL || *hp == NULL) return OVL_OK;
  ovl_hgroups h = *hp;
  cache_free(&h->lc);
  comm_free(&h->outer_row);
  comm_free(&h->outer_col);
  comm_free(&h->inner_row);
  comm_free(&h->inner_col);
  free(h);
  *hp = NULL;
  return OVL_OK;
}

ovl_err ovl_grid2d_hgroups(ovl_grid2d g, int gI, int gJ, ovl_hgroups *out) {
  OVL_TRY(ovl_check_ptr(out, "ovl_grid2d_hgroups", "out"));
  *out = NULL;
  OVL_TRY(ovl_check_handle(g, "ovl_grid2d_hgroups", "the grid"));
  for (int k = 0; k < g->nhg; k++)
    if (g->hg[k]->nI == gI && g->hg[k]->nJ == gJ) {
      *out = g->hg[k];
      return OVL_OK;
    }
  OVL_TRY(ovl_err_agree(g->parent, g->nhg < HG_CACHE ? OVL_OK
                                                     : ovl_err_set(OVL_ERR_ARG,
                                                                   "a grid keeps at most %d group "
                                                                   "layouts",
                                                                   HG_CACHE)));
  OVL_TRY(ovl_hgroups_create(g, gI, gJ, &g->hg[g->nhg]));
  *out = g->hg[g->nhg++];
  return OVL_OK;
}

ovl_err ovl_hgroups_lanes(ovl_hgroups h, ovl_grid_dir dir, int ndup, ovl_lanes *out) {
  OVL_TRY(ovl_check_ptr(out, "ovl_hgroups_lanes", "out"));
  *out = NULL;
  OVL_TRY(ovl_check_handle(h, "ovl_hgroups_lanes", "h"));
  MPI_Comm c = dir == OVL_DIR_OUTER_ROW   ? h->outer_row
               : dir == OVL_DIR_OUTER_COL ? h->outer_col
               : dir == OVL_DIR_INNER_ROW ? h->inner_row
               : dir == OVL_DIR_INNER_COL ? h->inner_col
                                          : MPI_COMM_NULL;
  OVL_CHECK(dir >= OVL_DIR_OUTER_ROW && dir <= OVL_DIR_INNER_COL, OVL_ERR_ARG, "not a group direction: %d", (int)dir);
  return cache_lanes(&h->lc, h->active, c, dir, ndup, out);
}

void ovl_hgroups_dims(ovl_hgroups h, int *gI, int *gJ) {
  if (gI) *gI = h ? h->nI : 0;
  if (gJ) *gJ = h ? h->nJ : 0;
}
MPI_Comm ovl_hgroups_outer_row(ovl_hgroups h) { return h ? h->outer_row : MPI_COMM_NULL; }
MPI_Comm ovl_hgroups_outer_col(ovl_hgroups h) { return h ? h->outer_col : MPI_COMM_NULL; }
MPI_Comm ovl_hgroups_inner_row(ovl_hgroups h) { return h ? h->inner_row : MPI_COMM_NULL; }
MPI_Comm ovl_hgroups_inner_col(ovl_hgroups h) { return h ? h->inner_col : MPI_COMM_NULL; }
