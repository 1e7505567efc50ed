/* `ovl model`'s table: the prediction of one configuration, or of a sweep
 * over one of its parameters, as rows or records (ovl_model_print). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ovl/grid.h"
#include "ovl/model.h"
#include "ovl/record.h"

static int is_ssc(ovl_algo k) { return ovl_algo_family(k) == OVL_FAMILY_SSC || ovl_algo_family(k) == OVL_FAMILY_SQ; }
static int is_bs(ovl_algo k) { return ovl_algo_family(k) == OVL_FAMILY_BSMUL; }
static int has_repl(ovl_algo k) { return k == OVL_ALGO_25D || k == OVL_ALGO_SSC6 || k == OVL_ALGO_BS25D; }

/* flops of one run: C = A B (2 n^3), D -> D^2, D^3 (4 n^3) or the symmetric square (n^3) */
static double kernel_flops(ovl_algo k, int64_t n) {
  double x = (double)n;
  return (k == OVL_ALGO_SQ ? 1.0 : is_ssc(k) ? 4.0 : 2.0) * x * x * x;
}

/* One row: the configuration, its terms and GFLOP/s, or the model's error;
 * nodes > 0 (the PPN sweep): the nodes the grid occupies, ppn ranks each;
 * sh: the shape of a block-sparse product (NULL for the dense kernels). */
static ovl_err row_on(FILE *out, const ovl_machine *m, ovl_plan c, const ovl_bsmul_shape *sh, int nodes, int launched,
                      int json) {
  ovl_model_cost r;
  ovl_bsmul_detail d;
  memset(&r, 0, sizeof r), memset(&d, 0, sizeof d);
  if (has_repl(c.algo) && c.c == 0) {
    int p0, q0;
    ovl_grid_shape(c.algo, c.P, &p0, &q0, &c.s, &c.c);
  }
  ovl_err rc = is_bs(c.algo) ? ovl_model_bsmul(m, &c, sh, &r, &d) : ovl_model_predict(m, &c, &r);
  char cfg[160], msg[512];
  snprintf(msg, sizeof msg, "%s", rc ? ovl_errmsg() : "");
  int l = snprintf(cfg, sizeof cfg, "%s P=%d", ovl_algo_name(c.algo), c.P);
  if (c.algo == OVL_ALGO_SUMMA || c.algo == OVL_ALGO_HSUMMA) l += snprintf(cfg + l, sizeof cfg - l, " b=%" PRId64, c.b);
  if (c.algo == OVL_ALGO_HSUMMA) l += snprintf(cfg + l, sizeof cfg - l, " G=%d", c.G);
  if (has_repl(c.algo)) l += snprintf(cfg + l, sizeof cfg - l, " c=%d", c.c);
  if (c.s > 0 && !has_repl(c.algo) && nodes > 0) l += snprintf(cfg + l, sizeof cfg - l, " (%dx%dx%d)", c.s, c.s, c.s);
  l += snprintf(cfg + l, sizeof cfg - l, " ndup=%d ppn=%d%s", c.ndup, c.ppn, c.lookahead ? " lookahead" : "");
  if (launched > c.ppn) l += snprintf(cfg + l, sizeof cfg - l, " of %d", launched);
  if (nodes > 0) snprintf(cfg + l, sizeof cfg - l, " nodes=%d", nodes);
  double fl = is_bs(c.algo) ? d.flops * c.P : kernel_flops(c.algo, c.n);
  double gf = rc == OVL_OK && r.total > 0 ? fl / r.total * 1e-9 : 0;
  if (!json) {
    if (rc) ovl_fprintf(out, "  %-44s %s\n", cfg, msg);
    else
      fprintf(out, "  %-44s %11.4e %11.4e %11.4e %11.4e %10.2f\n", cfg, r.latency, r.bandwidth, r.compute, r.total, gf);
    return OVL_OK;
  }
  ovl_record *rec = NULL;
  ovl_err wrc = ovl_record_create("model", &rec);
  if (!wrc) wrc = ovl_record_set_str(rec, "config", cfg);
  if (!wrc) wrc = ovl_record_set_str(rec, ovl_knobs[OVL_KNOB_ALGO].key, ovl_algo_name(c.algo));
  if (!wrc && rc) wrc = ovl_record_set_str(rec, "error", msg);
  if (!wrc && !rc) {
    const char *ik[] = {"n", "P", "b", "G", "c", "ndup", "ppn", "lookahead"};
    const int64_t iv[] = {c.n, c.P, c.b, c.G, c.c, c.ndup, c.ppn, c.lookahead};
    for (int k = 0; k < 8 && !wrc; k++) /* the block-sparse product has no panels (b, G, lookahead) */
      if (!is_bs(c.algo) || (k != 2 && k != 3 && k != 7)) wrc = ovl_record_set_int(rec, ik[k], iv[k]);
    if (!wrc && nodes > 0) wrc = ovl_record_set_int(rec, "nodes", nodes);
    if (!wrc && launched > 0) wrc = ovl_record_set_int(rec, "ppn_launched", launched);
    const char *nk[] = {"latency", "bandwidth", "compute", "total", "gflops"};
    const double nv[] = {r.latency, r.bandwidth, r.compute, r.total, r.total > 0 ? gf : NAN};
    for (int k = 0; k < 5 && !wrc; k++) wrc = ovl_record_set_num(rec, nk[k], nv[k]);
    if (!wrc) wrc = ovl_record_set_str(rec, "machine", m->name);
    if (is_bs(c.algo) && sh) { /* the shape it was predicted on, and the model's parts of it */
      const char *sk[] = {"nblk", "blocks_a", "blocks_b", "products"};
      const int64_t sv[] = {sh->nblk, sh->blocks_a, sh->blocks_b, sh->products};
      for (int k = 0; k < 4 && !wrc; k++) wrc = ovl_record_set_int(rec, sk[k], sv[k]);
      const char *dk[] = {"steps", "step_comm", "layer_comm", "dgemm_eff"};
      const double dv[] = {d.steps, d.step_comm, d.layer_comm, d.dgemm_eff};
      for (int k = 0; k < 4 && !wrc; k++) wrc = ovl_record_set_num(rec, dk[k], dv[k]);
    }
  }
  if (!wrc) wrc = ovl_record_print(rec, out);
  ovl_record_destroy(&rec);
  return wrc;
}

/* The rows of a sweep over one parameter of c (sh: as row_on). */
static ovl_err sweep_rows(FILE *out, const ovl_machine *m, ovl_plan c, const ovl_bsmul_shape *sh, const char *sweep,
                          int maxv, int json) {
  const ovl_algo k = c.algo;
  const int P = c.P;
  const int64_t n = c.n, b = c.b;
  ovl_err rc = OVL_OK;
  if (!strcmp(sweep, "none")) return row_on(out, m, c, sh, 0, 0, json);
  if (!strcmp(sweep, "G")) { /* HSUMMA on the near-square p x q grid, every G that tiles it */
    int p = 1, gi, gj;
    while ((p + 1) * (p + 1) <= P) p++;
    while (P % p) p--;
    for (int g = 1; g <= P && !rc; g++)
      if (P % g == 0 && ovl_hgroups_auto_dims(p, P / p, g, &gi, &gj) == OVL_OK)
        c.algo = OVL_ALGO_HSUMMA, c.G = g, rc = row_on(out, m, c, sh, 0, 0, json);
    ovl_err_clear();
  } else if (!strcmp(sweep, "ndup")) {
    for (int d = 1; d <= maxv && !rc; d++) c.ndup = d, rc = row_on(out, m, c, sh, 0, 0, json);
  } else if (!strcmp(sweep, "c")) { /* 2.5D (Alg. 6 for SymmSquareCube) for every c with s*s*c = P, c | s
                                       (bs2.5d: c <= s, or s = 1) */
    for (int cc = 1; cc <= P && !rc; cc++) {
      int s = (int)lround(sqrt((double)P / cc));
      if ((int64_t)s * s * cc != P || (is_bs(k) ? cc > s && s != 1 : s % cc)) continue;
      c.s = s, c.c = cc;
      if (!has_repl(k)) c.algo = is_bs(k) ? OVL_ALGO_BS25D : is_ssc(k) ? OVL_ALGO_SSC6 : OVL_ALGO_25D;
      rc = row_on(out, m, c, sh, 0, 0, json);
    }
  } else if (!strcmp(sweep, "ppn")) {
    /* P nodes of K = 1 .. maxv ranks: the algorithm's grid on the P K ranks
     * (the largest cube for Alg. 3-5 and 3D, as Huang & Chow's Table III,
     * 2.5D or the largest square for Alg. 6 and 2.5D; the rest idle), on
     * ceil(grid / K) nodes */
    for (int k2 = 1; k2 <= maxv && !rc; k2++) {
      int gp, gq, gs, gc;
      ovl_grid_shape(k, P * k2, &gp, &gq, &gs, &gc);
      if (gs > 0) c.s = gs, c.c = gc, c.P = gs * gs * gc, c.p = c.q = 0;
      else c.p = gp, c.q = gq, c.P = gp * gq, c.s = c.c = 0;
      c.ppn = c.P < k2 ? c.P : k2; /* a grid smaller than a node leaves its other ranks asleep */
      rc = row_on(out, m, c, sh, (c.P + k2 - 1) / k2, k2, json);
    }
  } else if (!strcmp(sweep, "P")) { /* powers of 2, or cubes for the cube algorithms */
    int cube = k == OVL_ALGO_3D || (is_ssc(k) && k != OVL_ALGO_SSC6);
    for (int x = 1; x <= P && !rc; x++) {
      int r = cube ? x * x * x : 1 << (x - 1);
      if (r > P) break;
      c.P = r, c.s = c.c = c.p = c.q = 0, rc = row_on(out, m, c, sh, 0, 0, json);
    }
  } else if (!strcmp(sweep, "algo")) { /* the dense kernels, or the block-sparse product's algorithms */
    for (int kk = 0; kk < OVL_ALGO_N && !rc; kk++) {
      if (is_bs((ovl_algo)kk) != is_bs(k)) continue;
      c.algo = (ovl_algo)kk, c.s = c.c = 0, c.p = c.q = 0;
      if (kk == OVL_ALGO_HSUMMA) c.G = ovl_hsumma_gopt(m->alpha_r, m->beta_r, n, b, P);
      rc = row_on(out, m, c, sh, 0, 0, json);
    }
  } else {
    rc = ovl_err_set(OVL_ERR_ARG, "'%s' is not a sweep (none, G, ndup, c, ppn, P, algo)", sweep);
  }
  return rc;
}

ovl_err ovl_model_print(FILE *out, const ovl_machine *m, const char *source, const ovl_plan *base, const char *sweep,
                        int maxv, int json) {
  return ovl_model_print_bsmul(out, m, source, base, NULL, sweep, maxv, json);
}

ovl_err ovl_model_print_bsmul(FILE *out, const ovl_machine *m, const char *source, const ovl_plan *base,
                              const ovl_bsmul_shape *shape, const char *sweep, int maxv, int json) {
  if (!out || !m || !base || !sweep) return ovl_err_set(OVL_ERR_ARG, "ovl_model_print: a NULL argument");
  if (is_bs(base->algo) && !shape)
    return ovl_err_set(OVL_ERR_ARG, "ovl_model_print: %s is a block-sparse product: it needs a shape",
                       ovl_algo_name(base->algo));
  if (!json)
    ovl_fprintf(out,
                "# ovl model: %s n=%" PRId64 " P=%d, machine %s\n"
                "# alpha %.3e s, beta %.3e s/B (eager <= %.0f B), alpha_r %.3e s, beta_r %.3e s/B, gamma %.3e s/flop "
                "(%.1f GFLOP/s per %s), peak %.3e B/s, %d cores and %d NIC(s) per node, %d f_BW tables\n",
                ovl_algo_name(base->algo), base->n, base->P, source ? source : m->name, m->alpha, m->beta, m->eager,
                m->alpha_r, m->beta_r, m->gamma, m->gamma > 0 ? 1e-9 / m->gamma : 0, m->cores > 0 ? "core" : "rank",
                m->peak_bw, m->cores, m->nics > 0 ? m->nics : 1, m->nfbw);
  if (!json && shape && is_bs(base->algo))
    ovl_fprintf(out,
                "# block-sparse shape: nblk=%" PRId64 " (mean block %.1f), blocks of A %" PRId64 ", of B %" PRId64
                ", block products %" PRId64 "%s; b x b dgemms at %.2f of gamma's rate\n",
                shape->nblk, shape->nblk > 0 ? (double)shape->n / shape->nblk : 0.0, shape->blocks_a, shape->blocks_b,
                shape->products, shape->flops > 0 ? " (flops given)" : "",
                ovl_bsmul_dgemm_eff(shape->nblk > 0 ? (double)shape->n / shape->nblk : 0.0));
  if (!json)
    fprintf(out, "# %-44s %11s %11s %11s %11s %10s\n", "configuration", "latency(s)", "bandw.(s)", "compute(s)",
            "total(s)", "GFLOP/s");
  ovl_err rc = sweep_rows(out, m, *base, shape, sweep, maxv, json);
  fflush(out);
  return rc;
}
