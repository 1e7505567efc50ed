/* The tune database (ovl/tunedb.h): JSON lines read through the library's
 * JSON layer, entries written as records. */
#include "ovl/tunedb.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ovl/comm.h"
#include "ovl/json.h"
#include "ovl/record.h"

/* The fields of an entry are the knob table's keys (ovl_knobs[].key): the
 * algorithm's, N_DUP's, the panel width's, the groups', lookahead's and the
 * replication's; s is the grid's side. Files of older releases wrote the
 * algorithm as "kernel": still read. */
#define KEY(id) (ovl_knobs[id].key)

/* One entry of a line: 1 with its family, n, P and configuration; 0 when the
 * line is not a tune entry (the lookup skips it, the store keeps it). */
static int parse_entry(const ovl_json *d, int *fam, int64_t *n, int *P, ovl_plan *c) {
  const cJSON *o = d->root;
  char type[16], f[16], k[16];
  int64_t schema, vn, vP, nd, s, cc, b, G, la;
  const int64_t big = OVL_JSON_INT_MAX, imax = 2147483647;
  if (!o || ovl_json_str_opt(d, o, "type", "tune", type, sizeof type) || strcmp(type, "tune") ||
      ovl_json_int_opt(d, o, "schema", 1, 1, 1, &schema) || ovl_json_str(d, o, "family", f, sizeof f) ||
      (ovl_json_str_opt(d, o, KEY(OVL_KNOB_ALGO), "", k, sizeof k) ||
       (!k[0] && ovl_json_str(d, o, "kernel", k, sizeof k))) ||
      ovl_json_int(d, o, "n", 0, big, &vn) || ovl_json_int(d, o, "P", 1, imax, &vP) ||
      ovl_json_int(d, o, KEY(OVL_KNOB_NDUP), 1, OVL_LANES_MAX, &nd) || ovl_json_int(d, o, "s", -imax, imax, &s) ||
      ovl_json_int(d, o, KEY(OVL_KNOB_REPL), -imax, imax, &cc) ||
      ovl_json_int(d, o, KEY(OVL_KNOB_BLOCK), -big, big, &b) ||
      ovl_json_int(d, o, KEY(OVL_KNOB_GROUPS), -imax, imax, &G) ||
      ovl_json_int(d, o, KEY(OVL_KNOB_LOOKAHEAD), -imax, imax, &la))
    return 0;
  ovl_family ff;
  ovl_algo kk;
  if (ovl_family_parse(f, &ff) != OVL_OK || ovl_algo_parse(k, &kk) != OVL_OK) {
    ovl_err_clear();
    return 0;
  }
  *fam = (int)ff;
  *c = ovl_plan_default(kk, vn, (int)vP);
  c->ndup = (int)nd, c->s = (int)s, c->c = (int)cc, c->b = b, c->G = (int)G, c->lookahead = (int)la;
  *n = vn, *P = (int)vP;
  return 1;
}

typedef struct lookup_ctx {
  int f, P;
  int64_t n, nfound, nentries;
  double best;
  int found;
  ovl_plan cfg;
} lookup_ctx;

static ovl_err lookup_line(void *ctx, const ovl_json *d, const char *line, int lineno) {
  lookup_ctx *x = ctx;
  int fam, eP;
  int64_t en;
  ovl_plan c;
  (void)line, (void)lineno;
  if (!parse_entry(d, &fam, &en, &eP, &c)) return OVL_OK;
  x->nentries++;
  if (fam != x->f || eP != x->P || en <= 0 || x->n <= 0) return OVL_OK;
  double dist = fabs(log((double)en / (double)x->n));
  if (dist <= log(2.0) + 1e-12 && dist < x->best) x->best = dist, x->cfg = c, x->nfound = en, x->found = 1;
  return OVL_OK;
}

ovl_err ovl_tunedb_lookup(const char *path, ovl_family f, int64_t n, int P, ovl_plan *out, int64_t *nfound,
                          int *found) {
  if (!found || !out || !nfound) return ovl_err_set(OVL_ERR_ARG, "ovl_tunedb_lookup: a NULL output");
  *found = 0;
  lookup_ctx x = {(int)f, P, n, 0, 0, INFINITY, 0, {0}};
  /* the file is read (and so checked) even when n <= 0 cannot match */
  OVL_TRY(ovl_json_lines_read(path, "tune file", (size_t)OVL_TUNEDB_MAX_BYTES, lookup_line, &x));
  if (x.nentries == 0) /* a tune file named but useless: refused, not ignored */
    return ovl_err_set(OVL_ERR_FORMAT,
                       "tune file '%s' holds no tune entry (a line {\"type\":\"tune\",\"family\":...} as `ovl tune "
                       "-o` writes)",
                       path);
  if (!x.found) return OVL_OK;
  *out = x.cfg;
  out->n = n;
  *nfound = x.nfound;
  *found = 1;
  return OVL_OK;
}

/* The lines a store keeps: every line but blank ones and the entry it replaces. */
typedef struct keep_ctx {
  int f, P;
  int64_t n;
  char *text;
  size_t len, cap;
} keep_ctx;

static ovl_err keep_line(void *ctx, const ovl_json *d, const char *line, int lineno) {
  keep_ctx *x = ctx;
  int fam, eP;
  int64_t en;
  ovl_plan c;
  (void)lineno;
  if (line[strspn(line, " \t\r")] == '\0') return OVL_OK;
  if (parse_entry(d, &fam, &en, &eP, &c) && fam == x->f && en == x->n && eP == x->P) return OVL_OK;
  size_t n = strlen(line);
  if (x->len + n + 2 > x->cap) {
    size_t cap = 2 * x->cap + n + 4096;
    char *t = realloc(x->text, cap);
    if (!t) return ovl_err_set(OVL_ERR_NOMEM, "tune file: out of memory keeping %zu bytes", x->len + n);
    x->text = t, x->cap = cap;
  }
  memcpy(x->text + x->len, line, n);
  x->len += n;
  x->text[x->len++] = '\n';
  return OVL_OK;
}

/* The entry of c as a record ("type":"tune","schema":1, then the fields). */
static ovl_err entry_record(ovl_family f, const ovl_plan *c, double t_median, const char *machine, ovl_record **out) {
  ovl_record *r = NULL;
  OVL_TRY(ovl_record_create("tune", &r));
  ovl_err rc = ovl_record_set_str(r, "family", ovl_family_name(f));
  if (!rc) rc = ovl_record_set_int(r, "n", c->n);
  if (!rc) rc = ovl_record_set_int(r, "P", c->P);
  if (!rc) rc = ovl_record_set_str(r, KEY(OVL_KNOB_ALGO), ovl_algo_name(c->algo));
  if (!rc) rc = ovl_record_set_int(r, KEY(OVL_KNOB_NDUP), c->ndup);
  if (!rc) rc = ovl_record_set_int(r, "s", c->s);
  if (!rc) rc = ovl_record_set_int(r, KEY(OVL_KNOB_REPL), c->c);
  if (!rc) rc = ovl_record_set_int(r, KEY(OVL_KNOB_BLOCK), c->b);
  if (!rc) rc = ovl_record_set_int(r, KEY(OVL_KNOB_GROUPS), c->G);
  if (!rc) rc = ovl_record_set_int(r, KEY(OVL_KNOB_LOOKAHEAD), c->lookahead);
  if (!rc) rc = ovl_record_set_num(r, "t_median", t_median);
  if (!rc) rc = ovl_record_set_str(r, "machine", machine);
  if (rc) ovl_record_destroy(&r);
  *out = r;
  return rc;
}

ovl_err ovl_tunedb_store(const char *path, ovl_family f, const ovl_plan *c, double t_median, const char *machine) {
  if (!c) return ovl_err_set(OVL_ERR_ARG, "ovl_tunedb_store: no configuration");
  if ((int)f < 0 || (int)f >= OVL_FAMILY_N)
    return ovl_err_set(OVL_ERR_ARG, "ovl_tunedb_store: unknown family %d", (int)f);
  if ((int)c->algo < 0 || c->algo >= OVL_ALGO_N)
    return ovl_err_set(OVL_ERR_ARG, "ovl_tunedb_store: unknown kernel %d", (int)c->algo);
  if (c->ndup < 1 || c->ndup > OVL_LANES_MAX || c->P < 1 || c->n < 0 || c->n > OVL_JSON_INT_MAX)
    return ovl_err_set(OVL_ERR_ARG,
                       "ovl_tunedb_store: an entry needs ndup in [1, %d], P >= 1 and n >= 0, got ndup=%d P=%d "
                       "n=%lld",
                       OVL_LANES_MAX, c->ndup, c->P, (long long)c->n);
  OVL_TRY(ovl_file_check_write(path, "tune file", NULL, 0));
  keep_ctx x = {(int)f, c->P, c->n, NULL, 0, 0};
  struct stat st;
  ovl_err rc = OVL_OK;
  if (stat(path, &st) == 0) rc = ovl_json_lines_read(path, "tune file", (size_t)OVL_TUNEDB_MAX_BYTES, keep_line, &x);
  ovl_record *e = NULL;
  if (rc == OVL_OK) rc = entry_record(f, c, t_median, machine, &e);
  ovl_file_writer w = {0};
  w.fd = -1;
  if (rc == OVL_OK) rc = ovl_file_writer_open(&w, path, "tune file");
  if (rc == OVL_OK && x.len > 0 && fwrite(x.text, 1, x.len, w.f) != x.len)
    rc = ovl_err_set(OVL_ERR_IO, "cannot write tune file '%s': %s", path, strerror(errno ? errno : EIO));
  if (rc == OVL_OK) rc = ovl_record_print(e, w.f);
  ovl_record_destroy(&e);
  free(x.text);
  if (rc != OVL_OK) {
    ovl_file_writer_abort(&w);
    return rc;
  }
  return ovl_file_writer_commit(&w);
}
