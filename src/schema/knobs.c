/* The knob table: the one place each knob of a plan is named, defaulted and
 * bounded, and the get/set/print of a knob derived from its row. */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "ovl/schema.h"

#define A_(a)     (1u << (a))
#define ALL_ALGOS ((1u << OVL_ALGO_N) - 1u)
#define BIG       ((int64_t)1 << 40)

static const char *const k_onoff[] = {"on", "off", NULL};
static const char *const k_route[] = {"auto", "scalapack", "layout", "convert", NULL}; /* OVL_ROUTE_* */
static const int64_t k_cand_b[] = {128, 256, 512};
static const int64_t k_cand_outer[] = {512, 1024}; /* HSUMMA's outer block M: multiples of the panel widths */
static const int64_t k_cand_ndup[] = {1, 2, 4};
static const int64_t k_cand_flag[] = {0, 1};

/* default of each family: {gemm, ssc, sq, bsmul} */
const ovl_knob ovl_knobs[OVL_KNOB_N] = {
    {OVL_KNOB_ALGO,
     "algo",
     'a',
     OVL_KNOB_NAME,
     "algo",
     "NAME",
     {OVL_AUTO, OVL_AUTO, OVL_AUTO, OVL_AUTO},
     0,
     0,
     NULL,
     NULL,
     0,
     ALL_ALGOS,
     0,
     1,
     "every algorithm",
     "kernel algorithm (auto: the tune file's choice, else the cost model's; knobs given explicitly win)"},
    {OVL_KNOB_GRID,
     "grid",
     'g',
     OVL_KNOB_DIMS,
     "grid",
     "PxQ|SxSxC",
     {OVL_AUTO, OVL_AUTO, OVL_AUTO, OVL_AUTO},
     1,
     1 << 20,
     NULL,
     NULL,
     0,
     ALL_ALGOS,
     1,
     1,
     "every algorithm",
     "process grid: PxQ for summa/hsumma/cannon/bsumma, SxSxC for 3d (C = S), 2.5d, alg3-alg6, sq and bs2.5d "
     "(default: from the rank count)"},
    {OVL_KNOB_BLOCK,
     "block",
     'b',
     OVL_KNOB_SIZE,
     "b",
     "B",
     {256, 256, 256, 256},
     1,
     BIG,
     NULL,
     k_cand_b,
     3,
     A_(OVL_ALGO_SUMMA) | A_(OVL_ALGO_HSUMMA),
     0,
     1,
     "summa and hsumma",
     "panel width (SUMMA; HSUMMA inner block)"},
    {OVL_KNOB_GROUPS,
     "groups",
     'G',
     OVL_KNOB_DIMS,
     "G",
     "IxJ|G",
     {OVL_AUTO, OVL_AUTO, OVL_AUTO, OVL_AUTO},
     1,
     1 << 20,
     NULL,
     NULL,
     0,
     A_(OVL_ALGO_HSUMMA),
     1,
     1,
     "hsumma",
     "HSUMMA groups: IxJ, or a count G (default: ~sqrt(P))"},
    {OVL_KNOB_OUTER,
     "outer",
     0,
     OVL_KNOB_SIZE,
     "M",
     "M",
     {OVL_AUTO, OVL_AUTO, OVL_AUTO, OVL_AUTO},
     1,
     BIG,
     NULL,
     k_cand_outer,
     2,
     A_(OVL_ALGO_HSUMMA),
     0,
     1,
     "hsumma",
     "HSUMMA outer block (default: b)"},
    {OVL_KNOB_REPL,
     "repl",
     0,
     OVL_KNOB_INT,
     "c",
     "C",
     {OVL_AUTO, OVL_AUTO, OVL_AUTO, OVL_AUTO},
     1,
     4096,
     NULL,
     NULL,
     0,
     A_(OVL_ALGO_25D) | A_(OVL_ALGO_SSC6) | A_(OVL_ALGO_SQ) | A_(OVL_ALGO_BS25D),
     0,
     0,
     "2.5d, alg6, sq and bs2.5d",
     "replication c of the s x s x c grid (default: the largest that fits)"},
    {OVL_KNOB_NDUP,
     "ndup",
     'd',
     OVL_KNOB_INT,
     "ndup",
     "N",
     {1, 4, 4, 1},
     1,
     OVL_LANES_MAX,
     NULL,
     k_cand_ndup,
     3,
     ALL_ALGOS,
     0,
     1,
     "every algorithm",
     "lanes (N_DUP) per communication phase"},
    {OVL_KNOB_LOOKAHEAD,
     "lookahead",
     0,
     OVL_KNOB_FLAG,
     "lookahead",
     NULL,
     {0, 0, 0, 0},
     0,
     1,
     NULL,
     k_cand_flag,
     2,
     A_(OVL_ALGO_SUMMA) | A_(OVL_ALGO_HSUMMA),
     0,
     1,
     "summa and hsumma",
     "SUMMA, HSUMMA: next panel's broadcasts during this panel's dgemm"},
    {OVL_KNOB_ARRIVAL,
     "arrival-order",
     0,
     OVL_KNOB_ONOFF,
     "arrival",
     "on|off",
     {0, 0, 0, 0},
     0,
     1,
     k_onoff,
     NULL,
     0,
     A_(OVL_ALGO_SUMMA) | A_(OVL_ALGO_HSUMMA) | A_(OVL_ALGO_SSC5),
     0,
     1,
     "summa, hsumma and alg5",
     "SUMMA, HSUMMA (inside the groups), alg5: multiply each lane's part of a panel as it arrives (on) or wait for "
     "the whole panel (off)"},
    {OVL_KNOB_BACKEND,
     "backend",
     0,
     OVL_KNOB_NAME,
     "backend",
     "B",
     {OVL_BACKEND_MPI, OVL_BACKEND_MPI, OVL_BACKEND_MPI, OVL_BACKEND_MPI},
     0,
     0,
     ovl_backend_names,
     NULL,
     0,
     ALL_ALGOS,
     0,
     1,
     "every algorithm",
     "collectives: the MPI library's or ovl's own"},
    {OVL_KNOB_BCAST,
     "bcast-alg",
     0,
     OVL_KNOB_NAME,
     "bcast",
     "A",
     {0, 0, 0, 0},
     0,
     0,
     NULL,
     NULL,
     0,
     A_(OVL_ALGO_SUMMA) | A_(OVL_ALGO_HSUMMA) | A_(OVL_ALGO_3D) | A_(OVL_ALGO_25D),
     0,
     1,
     "summa, hsumma, 3d and 2.5d",
     "broadcast schedule of the own back end"},
    {OVL_KNOB_DROPIN_MIN,
     "dropin-min",
     0,
     OVL_KNOB_INT,
     "dropin_min",
     "N",
     {OVL_AUTO, OVL_AUTO, OVL_AUTO, OVL_AUTO},
     1,
     1 << 30,
     NULL,
     NULL,
     0,
     A_(OVL_ALGO_SUMMA),
     0,
     0,
     "ovl_pdgemm_pays and the drop-in",
     "drop-in: calls with min(m, n, k) < N go to ScaLAPACK (default: the cost model decides; 1: size never does)"},
    {OVL_KNOB_DROPIN_MEM,
     "dropin-mem",
     0,
     OVL_KNOB_SIZE,
     "dropin_mem",
     "BYTES",
     {OVL_AUTO, OVL_AUTO, OVL_AUTO, OVL_AUTO},
     1,
     BIG,
     NULL,
     NULL,
     0,
     A_(OVL_ALGO_SUMMA),
     0,
     0,
     "ovl_pdgemm_pays and the drop-in",
     "drop-in: calls whose workspace per rank would pass BYTES go to ScaLAPACK; the workspace is kept up to it "
     "(default: 0.3 x the operands' bytes per rank)"},
    {OVL_KNOB_DROPIN_ROUTE,
     "dropin-route",
     0,
     OVL_KNOB_NAME,
     "dropin_route",
     "R",
     {OVL_ROUTE_AUTO, OVL_ROUTE_AUTO, OVL_ROUTE_AUTO, OVL_ROUTE_AUTO},
     0,
     0,
     k_route,
     NULL,
     0,
     A_(OVL_ALGO_SUMMA),
     0,
     0,
     "ovl_pdgemm_pays and the drop-in",
     "drop-in: scalapack (forward every call), layout (SUMMA on ScaLAPACK's layout), convert (to ovl's layout and "
     "back); auto: the cost model's choice under the cap"},
};

/* Spellings of older releases, still found (with a note by the callers). */
static const struct {
  const char *old;
  ovl_knob_id id;
} k_old[] = {{"kernel", OVL_KNOB_ALGO}, {"panel", OVL_KNOB_BLOCK}};

const ovl_knob *ovl_knob_find(const char *name) {
  if (!name || !*name) return NULL;
  for (int k = 0; k < OVL_KNOB_N; k++) {
    const ovl_knob *r = &ovl_knobs[k];
    if (!strcmp(name, r->name) || !strcmp(name, r->key) || (r->letter && name[0] == r->letter && !name[1])) return r;
  }
  for (size_t k = 0; k < sizeof k_old / sizeof k_old[0]; k++)
    if (!strcmp(name, k_old[k].old)) return &ovl_knobs[k_old[k].id];
  return NULL;
}

int64_t ovl_knob_default(ovl_knob_id id, ovl_family f) {
  if ((int)id < 0 || id >= OVL_KNOB_N) return OVL_AUTO;
  return ovl_knobs[id].def[(int)f >= 0 && f < OVL_FAMILY_N ? f : OVL_FAMILY_GEMM];
}

int ovl_knob_default_int(ovl_knob_id id, ovl_family f) { return (int)ovl_knob_default(id, f); }

const char *const *ovl_knob_names(ovl_knob_id id, ovl_family f) {
  if ((int)id < 0 || id >= OVL_KNOB_N) return NULL;
  if (id == OVL_KNOB_ALGO) return ovl_algo_choices(f);
  if (id == OVL_KNOB_BCAST) return ovl_alg_choices("bcast");
  return ovl_knobs[id].names;
}

int ovl_knob_applies(ovl_knob_id id, ovl_algo a) {
  if ((int)id < 0 || id >= OVL_KNOB_N) return 0;
  if (a == OVL_ALGO_AUTO) return !ovl_knobs[id].named;
  return (int)a >= 0 && a < OVL_ALGO_N && ((ovl_knobs[id].algos >> a) & 1u);
}

/* ---- where a knob lives in a plan: the one mapping of knob to fields ------------------ */

/* A field of ovl_plan: its offset and width (an int, an enum or an int64_t). */
typedef struct {
  size_t off, size;
} field;
#define F_(m)                                                                                                          \
  { offsetof(ovl_plan, m), sizeof(((ovl_plan *)0)->m) }
_Static_assert(sizeof(ovl_algo) == sizeof(int) && sizeof(ovl_backend) == sizeof(int) && sizeof(ovl_alg) == sizeof(int),
               "the plan's enum fields are read and written as int");

/* The fields each knob sets, its value field first (grid: p q s c; groups:
 * G i j). */
static const field k_fields[OVL_KNOB_N][4] = {
    [OVL_KNOB_ALGO] = {F_(algo)},
    [OVL_KNOB_GRID] = {F_(p), F_(q), F_(s), F_(c)},
    [OVL_KNOB_BLOCK] = {F_(b)},
    [OVL_KNOB_GROUPS] = {F_(G), F_(groups_i), F_(groups_j)},
    [OVL_KNOB_OUTER] = {F_(outer)},
    [OVL_KNOB_REPL] = {F_(c)},
    [OVL_KNOB_NDUP] = {F_(ndup)},
    [OVL_KNOB_LOOKAHEAD] = {F_(lookahead)},
    [OVL_KNOB_ARRIVAL] = {F_(arrival)},
    [OVL_KNOB_BACKEND] = {F_(coll.backend)},
    [OVL_KNOB_BCAST] = {F_(coll.bcast)},
    [OVL_KNOB_DROPIN_MIN] = {F_(dropin_min)},
    [OVL_KNOB_DROPIN_MEM] = {F_(dropin_mem)},
    [OVL_KNOB_DROPIN_ROUTE] = {F_(dropin_route)},
};
#undef F_

static int64_t field_get(const ovl_plan *p, field f) {
  const char *at = (const char *)p + f.off;
  if (f.size == sizeof(int64_t)) {
    int64_t v;
    memcpy(&v, at, sizeof v);
    return v;
  }
  int v;
  memcpy(&v, at, sizeof v);
  return v;
}

static void field_put(ovl_plan *p, field f, int64_t v) {
  char *at = (char *)p + f.off;
  if (f.size == sizeof(int64_t)) {
    memcpy(at, &v, sizeof v);
  } else {
    int iv = (int)v;
    memcpy(at, &iv, sizeof iv);
  }
}

/* The integer a knob holds in a plan (grid and groups: their first
 * dimension; names: their enum value). */
static int64_t knob_value(const ovl_plan *p, ovl_knob_id id) {
  if ((int)id < 0 || id >= OVL_KNOB_N) return OVL_AUTO;
  if (id == OVL_KNOB_GRID && ovl_algo_is_3d(p->algo)) return p->s;
  if (id == OVL_KNOB_GROUPS && p->groups_i > 0) return p->groups_i;
  return field_get(p, k_fields[id][0]);
}

int ovl_knob_is_open(const ovl_plan *p, ovl_knob_id id) {
  if (!p || (int)id < 0 || id >= OVL_KNOB_N) return 1;
  int64_t v = knob_value(p, id);
  if (ovl_knobs[id].type == OVL_KNOB_NAME) return id == OVL_KNOB_ALGO && v == OVL_ALGO_AUTO;
  return v == OVL_AUTO || v < ovl_knobs[id].min;
}

int ovl_knob_format(const ovl_plan *p, ovl_knob_id id, char *buf, size_t n) {
  if (!p || (int)id < 0 || id >= OVL_KNOB_N) return snprintf(buf, n, "?");
  if (ovl_knob_is_open(p, id)) return snprintf(buf, n, "auto");
  int64_t v = knob_value(p, id);
  switch (id) {
  case OVL_KNOB_ALGO: return snprintf(buf, n, "%s", ovl_algo_name((ovl_algo)v));
  case OVL_KNOB_BACKEND: return snprintf(buf, n, "%s", ovl_backend_name((ovl_backend)v));
  case OVL_KNOB_BCAST: return snprintf(buf, n, "%s", ovl_alg_name((ovl_alg)v));
  case OVL_KNOB_ARRIVAL: return snprintf(buf, n, "%s", v ? "on" : "off");
  case OVL_KNOB_DROPIN_ROUTE: return snprintf(buf, n, "%s", v >= 0 && v <= OVL_ROUTE_CONVERT ? k_route[v] : "?");
  case OVL_KNOB_GRID:
    if (ovl_algo_is_3d(p->algo)) return snprintf(buf, n, "%dx%dx%d", p->s, p->s, p->c > 0 ? p->c : p->s);
    return snprintf(buf, n, "%dx%d", p->p, p->q);
  case OVL_KNOB_GROUPS:
    if (p->groups_i > 0 && p->groups_j > 0) return snprintf(buf, n, "%dx%d", p->groups_i, p->groups_j);
    return snprintf(buf, n, "%d", p->G);
  default: return snprintf(buf, n, "%" PRId64, v);
  }
}

void ovl_knob_copy(ovl_plan *d, const ovl_plan *s, ovl_knob_id id) {
  if (!d || !s || (int)id < 0 || id >= OVL_KNOB_N) return;
  for (int k = 0; k < 4 && k_fields[id][k].size; k++) field_put(d, k_fields[id][k], field_get(s, k_fields[id][k]));
}

ovl_err ovl_knob_check(ovl_knob_id id, int64_t value, const char *who) {
  if ((int)id < 0 || id >= OVL_KNOB_N) return ovl_err_set(OVL_ERR_ARG, "ovl_knob_check: no knob %d", (int)id);
  const ovl_knob *r = &ovl_knobs[id];
  if (value >= r->min && value <= r->max) return OVL_OK;
  return ovl_err_set(OVL_ERR_ARG, "%s%s--%s (%s) must be in [%" PRId64 ", %" PRId64 "], got %" PRId64, who ? who : "",
                     who ? ": " : "", r->name, r->key, r->min, r->max, value);
}

ovl_err ovl_knob_check_plan(const ovl_plan *p, const char *who) {
  OVL_TRY(ovl_check_ptr(p, "ovl_knob_check_plan", "plan"));
  for (int k = 0; k < OVL_KNOB_N; k++) {
    const ovl_knob *r = &ovl_knobs[k];
    if (r->type != OVL_KNOB_INT && r->type != OVL_KNOB_SIZE && r->type != OVL_KNOB_FLAG) continue;
    if (!ovl_knob_applies(r->id, p->algo)) continue;
    /* a knob without a default (the planner's or derived: outer, repl) may stay open */
    if (ovl_knob_default(r->id, ovl_algo_family(p->algo)) == OVL_AUTO && ovl_knob_is_open(p, r->id)) continue;
    OVL_TRY(ovl_knob_check(r->id, knob_value(p, r->id), who));
  }
  return OVL_OK;
}

static ovl_err bad(const ovl_knob *r, const char *value, const char *what) {
  char why[512];
  snprintf(why, sizeof why, "%s", ovl_errmsg());
  return ovl_err_set(OVL_ERR_ARG, "knob %s (%s): '%s' %s%s%s", r->name, r->key, value, what, why[0] ? ": " : "", why);
}

/* An index into a NULL-terminated list, -1 when absent. */
static int name_index(const char *const *names, const char *v) {
  for (int k = 0; names && names[k]; k++)
    if (!strcmp(names[k], v)) return k;
  return -1;
}

ovl_err ovl_knob_set(ovl_plan *p, ovl_knob_id id, ovl_family f, const char *value) {
  OVL_TRY(ovl_check_ptr(p, "ovl_knob_set", "plan"));
  OVL_TRY(ovl_check_ptr(value, "ovl_knob_set", "value"));
  if ((int)id < 0 || id >= OVL_KNOB_N) return ovl_err_set(OVL_ERR_ARG, "ovl_knob_set: no knob %d", (int)id);
  const ovl_knob *r = &ovl_knobs[id];
  ovl_err_clear();
  int is_auto = !strcmp(value, "auto");
  int64_t v = OVL_AUTO;
  int dims[3] = {0, 0, 0}, nd = 0;
  if (!is_auto) switch (r->type) {
    case OVL_KNOB_NAME: {
      int k = name_index(ovl_knob_names(id, f), value);
      ovl_algo alg = OVL_ALGO_AUTO;
      if (id == OVL_KNOB_ALGO && k < 0 && ovl_algo_parse(value, &alg) == OVL_OK) /* another family's */
        return ovl_err_set(OVL_ERR_ARG, "knob algo: %s is not a %s algorithm", value, ovl_family_name(f));
      if (k < 0 || (id == OVL_KNOB_ALGO && ovl_algo_parse(value, &alg) != OVL_OK)) {
        ovl_err_clear();
        char list[256] = "";
        for (const char *const *c = ovl_knob_names(id, f); c && *c; c++)
          snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", list[0] ? ", " : "", *c);
        return ovl_err_set(OVL_ERR_ARG, "knob %s (%s): '%s' is not one of {%s}", r->name, r->key, value, list);
      }
      v = id == OVL_KNOB_ALGO ? (int64_t)alg : k;
      break;
    }
    case OVL_KNOB_INT:
    case OVL_KNOB_FLAG:
      if (ovl_parse_int(value, &v) != OVL_OK) return bad(r, value, "is not an integer");
      break;
    case OVL_KNOB_SIZE:
      if (ovl_parse_size(value, &v) != OVL_OK) return bad(r, value, "is not a size");
      break;
    case OVL_KNOB_ONOFF:
      if (name_index(k_onoff, value) < 0) return bad(r, value, "is not on or off");
      v = !strcmp(value, "on");
      break;
    case OVL_KNOB_DIMS:
      if (ovl_parse_dims(value, dims, &nd) != OVL_OK) return bad(r, value, "is not a shape");
      v = dims[0];
      break;
    }
  if (!is_auto && r->type != OVL_KNOB_NAME && r->type != OVL_KNOB_ONOFF && r->type != OVL_KNOB_DIMS)
    OVL_TRY(ovl_knob_check(id, v, "knob"));
  if (id == OVL_KNOB_ALGO && !is_auto && ovl_algo_family((ovl_algo)v) != f)
    return ovl_err_set(OVL_ERR_ARG, "knob algo: %s is not a %s algorithm", value, ovl_family_name(f));
  if (id == OVL_KNOB_GRID && !is_auto && !(nd == 2 || (nd == 3 && dims[0] == dims[1])))
    return ovl_err_set(OVL_ERR_ARG, "knob grid: '%s' is neither PxQ nor SxSxC", value);
  if (id == OVL_KNOB_GROUPS && !is_auto && nd != 1 && nd != 2)
    return ovl_err_set(OVL_ERR_ARG, "knob groups: '%s' is neither IxJ nor a count", value);
  if (r->type == OVL_KNOB_DIMS) { /* groups G i j (grid p q s c under auto): every field open, then the shape */
    if (is_auto || id == OVL_KNOB_GROUPS)
      for (int k = 0; k < 4 && k_fields[id][k].size; k++) field_put(p, k_fields[id][k], OVL_AUTO);
    if (id == OVL_KNOB_GRID && nd == 2) p->p = dims[0], p->q = dims[1];
    if (id == OVL_KNOB_GRID && nd == 3) p->s = dims[0], p->c = dims[2], p->p = p->q = dims[0];
    if (id == OVL_KNOB_GROUPS && nd == 1) p->G = dims[0];
    if (id == OVL_KNOB_GROUPS && nd == 2) p->groups_i = dims[0], p->groups_j = dims[1], p->G = dims[0] * dims[1];
    return OVL_OK;
  }
  /* auto of a name or on/off: the table's default (the MPI back end, off); a
   * broadcast schedule's index k is the enum after OVL_ALG_AUTO (0: auto) */
  if (is_auto)
    v = id == OVL_KNOB_ALGO                                                             ? OVL_ALGO_AUTO
        : id == OVL_KNOB_BCAST || r->type == OVL_KNOB_NAME || r->type == OVL_KNOB_ONOFF ? ovl_knob_default(id, f)
                                                                                        : OVL_AUTO;
  if (id == OVL_KNOB_BCAST) v = v == 0 ? OVL_ALG_AUTO : (int64_t)OVL_BCAST_BINOMIAL + v - 1;
  field_put(p, k_fields[id][0], v);
  return OVL_OK;
}
