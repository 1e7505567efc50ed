/* Result records (ovl/record.h): a cJSON object with "type" and "schema"
 * first, printed through cJSON (escaping, number formatting). */
#include "ovl/record.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct ovl_record {
  cJSON *obj;
  int typed; /* "type" and "schema" belong to the record */
};

ovl_err ovl_record_create(const char *type, ovl_record **out) {
  if (!out) return ovl_err_set(OVL_ERR_ARG, "ovl_record_create: no output handle");
  *out = NULL;
  if (type && !type[0]) return ovl_err_set(OVL_ERR_ARG, "ovl_record_create: an empty record type");
  ovl_record *r = calloc(1, sizeof *r);
  if (!r) return ovl_err_set(OVL_ERR_NOMEM, "ovl_record_create: out of memory");
  r->obj = cJSON_CreateObject();
  r->typed = type != NULL;
  int ok = r->obj != NULL;
  if (ok && type) {
    ok = cJSON_AddStringToObject(r->obj, "type", type) != NULL;
    cJSON *schema = ok ? cJSON_CreateRaw("1") : NULL;
    ok = schema && cJSON_AddItemToObject(r->obj, "schema", schema);
    if (!ok) cJSON_Delete(schema);
  }
  if (!ok) {
    cJSON_Delete(r->obj);
    free(r);
    return ovl_err_set(OVL_ERR_NOMEM, "ovl_record_create: out of memory");
  }
  *out = r;
  return OVL_OK;
}

void ovl_record_destroy(ovl_record **r) {
  if (!r || !*r) return;
  cJSON_Delete((*r)->obj);
  free(*r);
  *r = NULL;
}

/* Put item under key: in place of an existing member, else at the end.
 * Takes item in every case (deleted on error). */
static ovl_err put(ovl_record *r, const char *key, cJSON *item) {
  ovl_err rc = OVL_OK;
  if (!r || !key) rc = ovl_err_set(OVL_ERR_ARG, "ovl_record: a NULL record or key");
  else if (r->typed && (!strcmp(key, "type") || !strcmp(key, "schema")))
    rc = ovl_err_set(OVL_ERR_ARG, "ovl_record: \"%s\" is set by ovl_record_create", key);
  else if (!item) rc = ovl_err_set(OVL_ERR_NOMEM, "ovl_record: out of memory setting \"%s\"", key);
  if (rc != OVL_OK) {
    cJSON_Delete(item);
    return rc;
  }
  int ok = cJSON_GetObjectItemCaseSensitive(r->obj, key) ? cJSON_ReplaceItemInObjectCaseSensitive(r->obj, key, item)
                                                         : cJSON_AddItemToObject(r->obj, key, item);
  if (!ok) {
    cJSON_Delete(item);
    return ovl_err_set(OVL_ERR_NOMEM, "ovl_record: out of memory setting \"%s\"", key);
  }
  return OVL_OK;
}

static cJSON *number(double v) { return isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull(); }

ovl_err ovl_record_set_num(ovl_record *r, const char *key, double v) { return put(r, key, number(v)); }

ovl_err ovl_record_set_int(ovl_record *r, const char *key, int64_t v) {
  char buf[32];
  snprintf(buf, sizeof buf, "%" PRId64, v);
  return put(r, key, cJSON_CreateRaw(buf));
}

ovl_err ovl_record_set_str(ovl_record *r, const char *key, const char *s) {
  if (!s) return put(r, key, cJSON_CreateNull());
  /* paths and names from files: valid UTF-8 without DEL or a C1 control
   * (written as \xNN); JSON's own escapes (\n, \u0001) keep the C0 controls */
  size_t cap = 4 * strlen(s) + 1;
  char *esc = malloc(cap);
  if (!esc) return ovl_err_set(OVL_ERR_NOMEM, "ovl_record_set_str: no memory for %zu bytes", cap);
  ovl_escape_as(esc, cap, s, OVL_ESCAPE_C0_NONE);
  ovl_err rc = put(r, key, cJSON_CreateString(esc));
  free(esc);
  return rc;
}

ovl_err ovl_record_set_bool(ovl_record *r, const char *key, int v) { return put(r, key, cJSON_CreateBool(v != 0)); }

ovl_err ovl_record_set_null(ovl_record *r, const char *key) { return put(r, key, cJSON_CreateNull()); }

ovl_err ovl_record_set_nums(ovl_record *r, const char *key, const double *v, int n) {
  if (n < 0 || (n > 0 && !v)) return ovl_err_set(OVL_ERR_ARG, "ovl_record_set_nums: %d numbers at %p", n, (void *)v);
  cJSON *a = cJSON_CreateArray();
  for (int k = 0; a && k < n; k++) {
    cJSON *e = number(v[k]);
    if (!e || !cJSON_AddItemToArray(a, e)) {
      cJSON_Delete(e);
      cJSON_Delete(a);
      a = NULL;
    }
  }
  return put(r, key, a);
}

/* The object of *sub, detached from its handle (which is freed and nulled). */
static cJSON *take(ovl_record **sub) {
  if (!sub || !*sub) return NULL;
  cJSON *o = (*sub)->obj;
  (*sub)->obj = NULL;
  ovl_record_destroy(sub);
  return o;
}

ovl_err ovl_record_set_record(ovl_record *r, const char *key, ovl_record **sub) {
  if (!sub || !*sub) return ovl_err_set(OVL_ERR_ARG, "ovl_record_set_record: no record to nest");
  return put(r, key, take(sub));
}

ovl_err ovl_record_append_record(ovl_record *r, const char *key, ovl_record **sub) {
  cJSON *o = take(sub);
  if (!o) return ovl_err_set(OVL_ERR_ARG, "ovl_record_append_record: no record to append");
  cJSON *arr = r && key ? cJSON_GetObjectItemCaseSensitive(r->obj, key) : NULL;
  if (!arr) {
    ovl_err rc = put(r, key, cJSON_CreateArray());
    if (rc != OVL_OK) {
      cJSON_Delete(o);
      return rc;
    }
    arr = cJSON_GetObjectItemCaseSensitive(r->obj, key);
  }
  if (!cJSON_IsArray(arr)) {
    cJSON_Delete(o);
    return ovl_err_set(OVL_ERR_ARG, "ovl_record_append_record: \"%s\" is not an array", key);
  }
  if (!cJSON_AddItemToArray(arr, o)) {
    cJSON_Delete(o);
    return ovl_err_set(OVL_ERR_NOMEM, "ovl_record_append_record: out of memory");
  }
  return OVL_OK;
}

ovl_err ovl_record_text(const ovl_record *r, char **text) {
  if (!text) return ovl_err_set(OVL_ERR_ARG, "ovl_record_text: no output");
  *text = NULL;
  if (!r) return ovl_err_set(OVL_ERR_ARG, "ovl_record_text: a NULL record");
  char *s = cJSON_PrintUnformatted(r->obj);
  if (!s) return ovl_err_set(OVL_ERR_NOMEM, "ovl_record_text: out of memory");
  size_t n = strlen(s);
  ovl_err rc = ovl_malloc(n + 1, text);
  if (rc == OVL_OK) memcpy(*text, s, n + 1);
  cJSON_free(s);
  return rc;
}

ovl_err ovl_record_fprint(const ovl_record *r, FILE *f, int indent) {
  if (!r || !f) return ovl_err_set(OVL_ERR_ARG, "ovl_record_print: a NULL record or stream");
  char *s = indent ? cJSON_Print(r->obj) : cJSON_PrintUnformatted(r->obj);
  if (!s) return ovl_err_set(OVL_ERR_NOMEM, "ovl_record_print: out of memory");
  int ok = fputs(s, f) >= 0 && fputc('\n', f) != EOF;
  int e = errno;
  cJSON_free(s);
  if (!ok) return ovl_err_set(OVL_ERR_IO, "ovl_record_print: writing the record failed: %s", strerror(e));
  return OVL_OK;
}

ovl_err ovl_record_print(const ovl_record *r, FILE *f) { return ovl_record_fprint(r, f, 0); }
