/* Plans: their defaults, the one printer and its parser, all derived from
 * the knob table. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ovl/schema.h"

ovl_plan ovl_plan_default(ovl_algo algo, int64_t n, int P) {
  ovl_plan p;
  memset(&p, 0, sizeof p);
  ovl_family f = ovl_algo_family(algo);
  p.algo = algo, p.n = n, p.P = P;
  p.b = ovl_knob_default(OVL_KNOB_BLOCK, f), p.ndup = ovl_knob_default_int(OVL_KNOB_NDUP, f);
  p.lookahead = ovl_knob_default_int(OVL_KNOB_LOOKAHEAD, f), p.arrival = ovl_knob_default_int(OVL_KNOB_ARRIVAL, f);
  p.G = 1, p.groups_i = p.groups_j = 1, p.ppn = 1;
  p.coll = ovl_coll_cfg_default();
  p.coll.backend = (ovl_backend)ovl_knob_default_int(OVL_KNOB_BACKEND, f);
  p.dropin_min = ovl_knob_default(OVL_KNOB_DROPIN_MIN, f), p.dropin_mem = ovl_knob_default(OVL_KNOB_DROPIN_MEM, f);
  p.dropin_route = ovl_knob_default_int(OVL_KNOB_DROPIN_ROUTE, f);
  return p;
}

ovl_plan ovl_plan_gemm(ovl_algo algo, int64_t b) {
  ovl_plan p = ovl_plan_default(algo, 0, 0);
  p.b = b;
  return p;
}

ovl_plan ovl_plan_auto(ovl_family f, int64_t n) {
  ovl_plan p = ovl_plan_default(OVL_ALGO_AUTO, n, 0);
  (void)f;
  p.ndup = OVL_AUTO, p.b = OVL_AUTO, p.lookahead = OVL_AUTO, p.G = OVL_AUTO, p.groups_i = p.groups_j = OVL_AUTO;
  return p;
}

int ovl_plan_is_open(const ovl_plan *p) {
  return ovl_knob_is_open(p, OVL_KNOB_ALGO) || ovl_knob_is_open(p, OVL_KNOB_NDUP) ||
         ovl_knob_is_open(p, OVL_KNOB_LOOKAHEAD) || ovl_knob_is_open(p, OVL_KNOB_BLOCK) ||
         (p->algo == OVL_ALGO_HSUMMA && ovl_knob_is_open(p, OVL_KNOB_GROUPS));
}

int ovl_plan_describe(const ovl_plan *p, char *buf, size_t n) {
  if (p == NULL) return snprintf(buf, n, "(no plan)");
  char line[512], val[64];
  size_t used = (size_t)snprintf(line, sizeof line, "%s", ovl_algo_name(p->algo));
  for (int k = OVL_KNOB_ALGO + 1; k < OVL_KNOB_N && used < sizeof line; k++) {
    const ovl_knob *r = &ovl_knobs[k];
    if (!r->printed || !ovl_knob_applies(r->id, p->algo)) continue;
    if (r->id == OVL_KNOB_ARRIVAL && !p->arrival) continue; /* off: the default, not printed */
    if (r->id == OVL_KNOB_OUTER && ovl_knob_is_open(p, r->id) && !ovl_knob_is_open(p, OVL_KNOB_BLOCK)) {
      snprintf(val, sizeof val, "%" PRId64, p->b); /* M = b */
    } else {
      ovl_knob_format(p, r->id, val, sizeof val);
    }
    used += (size_t)snprintf(line + used, sizeof line - used, " %s=%s", r->key, val);
  }
  return snprintf(buf, n, "%s", line);
}

int ovl_plan_str(const ovl_plan *p, char *buf, size_t n) { return ovl_plan_describe(p, buf, n); }

int ovl_plan_short(const ovl_plan *c, char *buf, size_t n) {
  if (c == NULL) return snprintf(buf, n, "(no plan)");
  const char *k = ovl_algo_name(c->algo);
  switch (c->algo) {
  case OVL_ALGO_SUMMA:
    return snprintf(buf, n, "%s b=%" PRId64 " ndup=%d%s", k, c->b, c->ndup, c->lookahead > 0 ? " lookahead" : "");
  case OVL_ALGO_HSUMMA:
    return snprintf(buf, n, "%s G=%d b=%" PRId64 " ndup=%d%s", k, c->G, c->b, c->ndup,
                    c->lookahead > 0 ? " lookahead" : "");
  case OVL_ALGO_25D:
  case OVL_ALGO_SSC6:
  case OVL_ALGO_SQ:
  case OVL_ALGO_BS25D: return snprintf(buf, n, "%s %dx%dx%d ndup=%d", k, c->s, c->s, c->c, c->ndup);
  default: return snprintf(buf, n, "%s ndup=%d", k, c->ndup);
  }
}

int ovl_plan_same(const ovl_plan *a, const ovl_plan *b) {
  int panels = a->algo == OVL_ALGO_SUMMA || a->algo == OVL_ALGO_HSUMMA;
  int has_c =
      a->algo == OVL_ALGO_25D || a->algo == OVL_ALGO_SSC6 || a->algo == OVL_ALGO_SQ || a->algo == OVL_ALGO_BS25D;
  return a->algo == b->algo && a->ndup == b->ndup && (!panels || (a->b == b->b && a->lookahead == b->lookahead)) &&
         (a->algo != OVL_ALGO_HSUMMA || a->G == b->G) && (!has_c || (a->s == b->s && a->c == b->c));
}

ovl_err ovl_plan_parse(const char *text, ovl_family f, ovl_plan *plan) {
  OVL_TRY(ovl_check_ptr(plan, "ovl_plan_parse", "plan"));
  if (!text) return ovl_err_set(OVL_ERR_ARG, "ovl_plan_parse: no text");
  if ((int)f < 0 || f >= OVL_FAMILY_N) return ovl_err_set(OVL_ERR_ARG, "ovl_plan_parse: unknown family %d", (int)f);
  char buf[1024], why[1024];
  if (strlen(text) >= sizeof buf) return ovl_err_set(OVL_ERR_ARG, "plan '%.40s...': longer than %zu", text, sizeof buf);
  snprintf(buf, sizeof buf, "%s", text);
  ovl_plan p = *plan;
  int word = 0;
  for (char *save = NULL, *w = strtok_r(buf, " \t\n", &save); w; w = strtok_r(NULL, " \t\n", &save), word++) {
    char *eq = strchr(w, '=');
    const ovl_knob *r = NULL;
    const char *value = w;
    if (eq) { /* key=value */
      *eq = '\0', value = eq + 1;
      r = ovl_knob_find(w);
      if (!r) return ovl_err_set(OVL_ERR_ARG, "plan '%s': '%s' is not a knob (see `ovl help --knobs`)", text, w);
    } else if (word == 0) { /* the algorithm first */
      r = &ovl_knobs[OVL_KNOB_ALGO];
    } else {
      return ovl_err_set(OVL_ERR_ARG, "plan '%s': '%s' is not key=value", text, w);
    }
    if (ovl_knob_set(&p, r->id, f, value) != OVL_OK) {
      snprintf(why, sizeof why, "%s", ovl_errmsg());
      return ovl_err_set(OVL_ERR_ARG, "plan '%s': %s", text, why);
    }
  }
  /* the grid was read for the algorithm it names: a 3D shape keeps p = q = s */
  if (ovl_algo_is_3d(p.algo) && p.s <= 0 && p.p > 0 && p.q > 0)
    return ovl_err_set(OVL_ERR_ARG, "plan '%s': %s runs on an SxSxC grid, not %dx%d", text, ovl_algo_name(p.algo), p.p,
                       p.q);
  *plan = p;
  return OVL_OK;
}
