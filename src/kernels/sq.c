/* Stand-in symmetric square on the 2.5D product. */
#include <string.h>
#include "kernels/kimpl.h"
#include "ovl/sq.h"
struct ovl_sq_s { ovl_grid3d g; int64_t n; ovl_mm_plan plan; };
ovl_err ovl_sq_create(ovl_grid3d g, int64_t n, int ndup, const ovl_coll_cfg *cfg, ovl_sq *out) {
  ovl_sq s = NULL;
  OVL_TRY(ovl_calloc(sizeof *s, &s));
  s->g = g, s->n = n, s->plan = ovl_mm_plan_default(OVL_MM_25D, 256);
  s->plan.ndup = ndup;
  if (cfg) s->plan.coll = *cfg;
  *out = s;
  return OVL_OK;
}
ovl_err ovl_sq_destroy(ovl_sq *s) { if (s) ovl_free(s); return OVL_OK; }
static void round_f(ovl_dmat X) {
  for (int64_t c = 0; c < X->ln; c++) for (int64_t r = 0; r < X->lm; r++) X->data[r + c * X->ld] = (float)X->data[r + c * X->ld];
}
ovl_err ovl_sq_run(ovl_sq s, ovl_dmat X, ovl_dmat X2, ovl_prec prec, double *tr_out, ovl_kstats *st) {
  int on0 = ovl_grid3d_active(s->g);
  int i, j, k; ovl_grid3d_coords(s->g, &i, &j, &k);
  on0 = on0 && k == 0;
  ovl_dmat Y = X;
  if (prec == OVL_PREC_SINGLE && on0) { OVL_TRY(ovl_dmat_create(X->grid, X->m, X->n, &Y)); ovl_dmat_copy(Y, X); round_f(Y); }
  if (prec == OVL_PREC_SINGLE && !on0) OVL_TRY(ovl_dmat_create(X->grid, X->m, X->n, &Y));
  ovl_err rc = ovl_mm25d(s->g, 1.0, Y, Y, 0.0, X2, &s->plan, st);
  if (prec == OVL_PREC_SINGLE) { if (on0) round_f(X2); ovl_dmat_destroy(&Y); }
  double tr = 0;
  if (on0) ovl_dmat_trace(X2, &tr);
  MPI_Bcast(&tr, 1, MPI_DOUBLE, 0, ovl_grid3d_parent(s->g));
  if (tr_out) *tr_out = tr;
  return rc;
}
int64_t ovl_sq_memory(int64_t n, int s, int c) { (void)c; return 3 * ovl_dmat_memory(n, n, s, s); }
int64_t ovl_sq_workspace(ovl_sq s) { (void)s; return 0; }
int ovl_sq_str(ovl_sq s, char *buf, size_t n) { (void)s; return snprintf(buf, n, "sq"); }
const char *ovl_prec_name(ovl_prec p) { return p == OVL_PREC_SINGLE ? "single" : "double"; }
ovl_err ovl_prec_parse(const char *name, ovl_prec *out) {
  if (!strcmp(name, "double")) { *out = OVL_PREC_DOUBLE; return OVL_OK; }
  if (!strcmp(name, "single")) { *out = OVL_PREC_SINGLE; return OVL_OK; }
  return ovl_err_set(OVL_ERR_ARG, "'%s' is not a precision (double, single)", name);
}
