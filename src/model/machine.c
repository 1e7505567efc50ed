/* Machine files: the parameters of ovl_machine as a small JSON document.
 *
 *   {"type": "machine", "schema": 1, "name": "...", "alpha": 1e-6, "beta": 8e-11, "alpha_r": ..., "beta_r": ...,
 *    "eager": 65536, "gamma": 2e-11, "peak_bw": 1.2e10, "cores": 48, "nics": 1, "shm_bw": 0,
 *    "fbw": [{"coll": "bcast", "p": 4, "size": [...], "bw": [...]}, ...]}
 *
 * Read through the library's JSON layer (ovl/json.h): "beta" and
 * "gamma" are required, the other numbers default to 0, every number is
 * finite and >= 0, "cores" and "nics" are optional integers (0: unknown); unknown keys are skipped, so files may carry
 * notes such as "measured_by". Written as a record (ovl/record.h), indented. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ovl/json.h"
#include "ovl/model.h"
#include "ovl/record.h"

enum { MACHINE_MAX_BYTES = 16 << 20 };

static ovl_err fbw_entry(ovl_json *d, const cJSON *e, int k, ovl_machine *m) {
  char cname[32];
  int64_t p = 0;
  double size[OVL_FBW_MAXPTS], bw[OVL_FBW_MAXPTS];
  int ns = 0, nb = 0;
  snprintf(d->where, sizeof d->where, "fbw[%d]: ", k);
  OVL_TRY(ovl_json_str(d, e, "coll", cname, sizeof cname));
  OVL_TRY(ovl_json_int(d, e, "p", 2, 1000000000, &p));
  OVL_TRY(ovl_json_nums(d, e, "size", size, OVL_FBW_MAXPTS, &ns));
  OVL_TRY(ovl_json_nums(d, e, "bw", bw, OVL_FBW_MAXPTS, &nb));
  ovl_mcoll c;
  if (ovl_mcoll_parse(cname, &c) != OVL_OK)
    return ovl_err_set(OVL_ERR_FORMAT,
                       "machine file '%s': fbw[%d]: \"coll\" must be bcast, reduce, allreduce or "
                       "allgather, got \"%s\"",
                       d->path, k, cname);
  if (ns != nb)
    return ovl_err_set(OVL_ERR_FORMAT, "machine file '%s': fbw[%d]: \"size\" and \"bw\" differ in length (%d, %d)",
                       d->path, k, ns, nb);
  for (int i = 0; i < ns; i++) /* the ranges of the scalar parameters: the model's terms stay finite */
    if (!(size[i] > 0 && size[i] <= 1e15 && bw[i] >= 1 && bw[i] <= 1e18))
      return ovl_err_set(OVL_ERR_FORMAT,
                         "machine file '%s': fbw[%d]: point %d (size %g B, bw %g B/s) is outside (0, 1e15] B x [1, "
                         "1e18] B/s",
                         d->path, k, i, size[i], bw[i]);
  if (ovl_machine_set_fbw(m, c, (int)p, size, bw, ns) != OVL_OK)
    return ovl_err_set(OVL_ERR_FORMAT, "machine file '%s': fbw[%d]: %s", d->path, k, ovl_errmsg());
  return OVL_OK;
}

static ovl_err machine_of(ovl_json *d, ovl_machine *m) {
  OVL_TRY(ovl_json_root_object(d, ""));
  /* each parameter in a range no machine leaves (a second per message or byte or flop, an exabyte per
   * second), so that the model's sums and products of them stay finite */
  const struct {
    const char *key;
    double *dst;
    int required;
    double max;
    const char *unit;
  } nums[] = {{"alpha", &m->alpha, 0, 1.0, "s"},        {"beta", &m->beta, 1, 1.0, "s/B"},
              {"alpha_r", &m->alpha_r, 0, 1.0, "s"},    {"beta_r", &m->beta_r, 0, 1.0, "s/B"},
              {"eager", &m->eager, 0, 1e15, "B"},       {"gamma", &m->gamma, 1, 1.0, "s/flop"},
              {"peak_bw", &m->peak_bw, 0, 1e18, "B/s"}, {"shm_bw", &m->shm_bw, 0, 1e18, "B/s"}};
  for (size_t k = 0; k < sizeof nums / sizeof nums[0]; k++) {
    if (nums[k].required) OVL_TRY(ovl_json_num(d, d->root, nums[k].key, nums[k].dst));
    else OVL_TRY(ovl_json_num_opt(d, d->root, nums[k].key, 0, nums[k].dst));
    if (!(*nums[k].dst >= 0 && *nums[k].dst <= nums[k].max))
      return ovl_err_set(OVL_ERR_FORMAT, "machine file '%s': \"%s\" must be in [0, %g] %s, got %g", d->path,
                         nums[k].key, nums[k].max, nums[k].unit, *nums[k].dst);
  }
  int64_t cores = 0, nics = 0; /* node properties: 0 = unknown (older files) */
  OVL_TRY(ovl_json_int_opt(d, d->root, "cores", 0, 1 << 20, 0, &cores));
  OVL_TRY(ovl_json_int_opt(d, d->root, "nics", 0, 1024, 0, &nics));
  m->cores = (int)cores, m->nics = (int)nics;
  OVL_TRY(ovl_json_str_opt(d, d->root, "name", "", m->name, sizeof m->name));
  int dup = 0;
  const cJSON *fbw = ovl_json_find(d->root, "fbw", &dup);
  if (dup) return ovl_err_set(OVL_ERR_FORMAT, "machine file '%s': \"fbw\" appears more than once", d->path);
  if (!fbw) return OVL_OK;
  if (!cJSON_IsArray(fbw)) return ovl_err_set(OVL_ERR_FORMAT, "machine file '%s': \"fbw\" must be an array", d->path);
  int k = 0;
  for (const cJSON *e = fbw->child; e; e = e->next, k++) {
    if (!cJSON_IsObject(e))
      return ovl_err_set(OVL_ERR_FORMAT,
                         "machine file '%s': fbw[%d] must be an object {\"coll\", \"p\", \"size\", "
                         "\"bw\"}",
                         d->path, k);
    OVL_TRY(fbw_entry(d, e, k, m));
  }
  return OVL_OK;
}

ovl_err ovl_machine_read(const char *path, ovl_machine *m) {
  OVL_TRY(ovl_check_ptr(m, "ovl_machine_read", "m"));
  memset(m, 0, sizeof *m);
  ovl_json d;
  OVL_TRY(ovl_json_load(path, "machine file", MACHINE_MAX_BYTES, &d));
  ovl_err rc = machine_of(&d, m);
  ovl_json_free(&d);
  if (rc != OVL_OK) return rc;
  if (m->alpha_r == 0 && m->beta_r == 0) m->alpha_r = m->alpha, m->beta_r = m->beta;
  return OVL_OK;
}

static ovl_err machine_record(const ovl_machine *m, ovl_record *r) {
  OVL_TRY(ovl_record_set_str(r, "name", m->name));
  OVL_TRY(ovl_record_set_num(r, "alpha", m->alpha));
  OVL_TRY(ovl_record_set_num(r, "beta", m->beta));
  OVL_TRY(ovl_record_set_num(r, "alpha_r", m->alpha_r));
  OVL_TRY(ovl_record_set_num(r, "beta_r", m->beta_r));
  OVL_TRY(ovl_record_set_num(r, "eager", m->eager));
  OVL_TRY(ovl_record_set_num(r, "gamma", m->gamma));
  OVL_TRY(ovl_record_set_num(r, "peak_bw", m->peak_bw));
  OVL_TRY(ovl_record_set_int(r, "cores", m->cores));
  OVL_TRY(ovl_record_set_int(r, "nics", m->nics));
  OVL_TRY(ovl_record_set_num(r, "shm_bw", m->shm_bw));
  OVL_TRY(ovl_record_set_nums(r, "fbw", NULL, 0)); /* [] when there is no table */
  for (int t = 0; t < m->nfbw; t++) {
    const ovl_fbw *b = &m->fbw[t];
    ovl_record *e = NULL;
    OVL_TRY(ovl_record_create(NULL, &e));
    ovl_err rc = ovl_record_set_str(e, "coll", ovl_mcoll_name(b->coll));
    if (rc == OVL_OK) rc = ovl_record_set_int(e, "p", b->p);
    if (rc == OVL_OK) rc = ovl_record_set_nums(e, "size", b->size, b->npts);
    if (rc == OVL_OK) rc = ovl_record_set_nums(e, "bw", b->bw, b->npts);
    if (rc != OVL_OK) {
      ovl_record_destroy(&e);
      return rc;
    }
    OVL_TRY(ovl_record_append_record(r, "fbw", &e));
  }
  return OVL_OK;
}

ovl_err ovl_machine_write(const ovl_machine *m, const char *path) {
  OVL_TRY(ovl_check_ptr(m, "ovl_machine_write", "m"));
  OVL_TRY(ovl_file_check_write(path, "machine file", NULL, 0));
  ovl_record *r = NULL;
  OVL_TRY(ovl_record_create("machine", &r));
  ovl_err rc = machine_record(m, r);
  ovl_file_writer w = {0};
  w.fd = -1;
  if (rc == OVL_OK) rc = ovl_file_writer_open(&w, path, "machine file");
  if (rc == OVL_OK) rc = ovl_record_fprint(r, w.f, 1);
  ovl_record_destroy(&r);
  if (rc != OVL_OK) {
    ovl_file_writer_abort(&w);
    return rc;
  }
  return ovl_file_writer_commit(&w);
}
