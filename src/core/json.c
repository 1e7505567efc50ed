/* The one JSON reader of the library (ovl/json.h): cJSON under the input
 * checks of file.c, a strictness pass over what cJSON lets through, and typed
 * getters whose messages name the file and the key. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ovl/json.h"

/* ---- parsing ----------------------------------------------------------------- */

/* Where parsing failed, as "at line L, column C: found '...' after '...'". */
static ovl_err syntax_error(const ovl_json *d, const char *text, size_t len, size_t pos, const char *why) {
  if (pos > len) pos = len;
  int line = 1;
  size_t bol = 0;
  for (size_t k = 0; k < pos; k++)
    if (text[k] == '\n') line++, bol = k + 1;
  char found[24], after[24];
  size_t nf = 0, na = 0, from = pos - bol > 16 ? pos - 16 : bol;
  for (size_t k = pos; k < len && nf < 12 && text[k] != '\n'; k++)
    found[nf++] = text[k] >= 0x20 && text[k] < 0x7f ? text[k] : '?';
  found[nf] = '\0';
  for (size_t k = from; k < pos; k++) after[na++] = text[k] >= 0x20 && text[k] < 0x7f ? text[k] : '?';
  after[na] = '\0';
  return ovl_err_set(OVL_ERR_FORMAT, "%s '%s' is not valid JSON at line %d, column %zu%s%s: found %s%s%s after '%s'",
                     d->what, d->path, line, pos - bol + 1, why[0] ? ", " : "", why, nf ? "'" : "end of text", found,
                     nf ? "'" : "", after);
}

static int is_digit(char c) { return c >= '0' && c <= '9'; }

/* What RFC 8259 forbids and cJSON accepts: leading zeros, '.' without a
 * digit after it, raw control characters in strings. Runs on text cJSON has
 * parsed, so the structure is known to be sound. Returns the offending
 * offset and sets *why, or returns len. */
static size_t strict_scan(const char *t, size_t len, const char **why) {
  size_t k = 0;
  while (k < len) {
    char c = t[k];
    if (c == '"') {
      for (k++; k < len && t[k] != '"'; k++) {
        if ((unsigned char)t[k] < 0x20) return *why = "a control character inside a string", k;
        if (t[k] == '\\') k++;
      }
      k++;
    } else if (c == '-' || is_digit(c)) {
      size_t start = k;
      if (t[k] == '-') k++;
      if (k + 1 < len && t[k] == '0' && is_digit(t[k + 1])) return *why = "a number with a leading zero", start;
      while (k < len && is_digit(t[k])) k++;
      if (k < len && t[k] == '.') {
        if (k + 1 >= len || !is_digit(t[k + 1])) return *why = "no digit after the decimal point", start;
        for (k++; k < len && is_digit(t[k]); k++) {}
      }
      if (k < len && (t[k] == 'e' || t[k] == 'E')) {
        k++;
        if (k < len && (t[k] == '+' || t[k] == '-')) k++;
        if (k >= len || !is_digit(t[k])) return *why = "no digit in the exponent", start;
        while (k < len && is_digit(t[k])) k++;
      }
    } else {
      k++;
    }
  }
  return len;
}

static void set_names(ovl_json *d, const char *what, const char *path) {
  snprintf(d->what, sizeof d->what, "%s", what ? what : "JSON file");
  snprintf(d->path, sizeof d->path, "%s", path ? path : "");
  d->where[0] = '\0';
}

ovl_err ovl_json_parse(const char *text, size_t len, const char *what, const char *path, ovl_json *doc) {
  OVL_TRY(ovl_check_ptr(doc, "ovl_json_parse", "doc"));
  doc->root = NULL;
  set_names(doc, what, path);
  OVL_TRY(ovl_check_ptr(text, "ovl_json_parse", "text"));
  const char *nul = memchr(text, '\0', len);
  if (nul) return syntax_error(doc, text, len, (size_t)(nul - text), "a NUL byte");
  /* cJSON wants the NUL terminator inside the length it is given */
  char *buf = NULL;
  OVL_TRY(ovl_malloc(len + 1, &buf));
  memcpy(buf, text, len);
  buf[len] = '\0';
  const char *end = NULL;
  cJSON *root = cJSON_ParseWithLengthOpts(buf, len + 1, &end, 1);
  ovl_err rc = OVL_OK;
  if (!root) {
    size_t pos = end && end >= buf ? (size_t)(end - buf) : 0;
    rc = syntax_error(doc, text, len, pos, "");
  } else {
    const char *why = "";
    size_t pos = strict_scan(buf, len, &why);
    if (pos < len) rc = syntax_error(doc, text, len, pos, why);
  }
  ovl_free(&buf);
  if (rc != OVL_OK) {
    cJSON_Delete(root);
    return rc;
  }
  doc->root = root;
  return OVL_OK;
}

ovl_err ovl_json_load(const char *path, const char *what, size_t max, ovl_json *doc) {
  doc->root = NULL;
  set_names(doc, what, path);
  char *text = NULL;
  size_t len = 0;
  OVL_TRY(ovl_file_read_all(path, doc->what, max, &text, &len));
  ovl_err rc = ovl_json_parse(text, len, what, path, doc);
  ovl_free(&text);
  return rc;
}

void ovl_json_free(ovl_json *doc) {
  if (!doc) return;
  cJSON_Delete(doc->root);
  doc->root = NULL;
}

ovl_err ovl_json_root_object(const ovl_json *doc, const char *shape) {
  if (doc->root && cJSON_IsObject(doc->root)) return OVL_OK;
  char got[48];
  ovl_json_text(doc->root, got, sizeof got);
  return ovl_err_set(OVL_ERR_FORMAT, "%s '%s' must hold a JSON object%s%s, got %s", doc->what, doc->path,
                     shape && shape[0] ? " " : "", shape ? shape : "", got);
}

/* ---- getters ------------------------------------------------------------------ */

void ovl_json_text(const cJSON *item, char *buf, size_t n) {
  if (n == 0) return;
  if (cJSON_IsNumber(item) && !isfinite(item->valuedouble)) { /* cJSON prints such a number as null */
    snprintf(buf, n, "a number out of range (beyond %s1.8e308)", item->valuedouble < 0 ? "-" : "");
    return;
  }
  char *s = item ? cJSON_PrintUnformatted(item) : NULL;
  const char *t = item ? (s ? s : "?") : "absent";
  size_t len = strlen(t);
  if (len < n) snprintf(buf, n, "%s", t);
  else if (n > 4) snprintf(buf, n, "%.*s...", (int)(n - 4), t);
  else snprintf(buf, n, "%.*s", (int)(n - 1), t);
  cJSON_free(s);
}

int ovl_json_equal(const cJSON *a, const cJSON *b) { return a && b && cJSON_Compare(a, b, 1); }

const cJSON *ovl_json_find(const cJSON *obj, const char *key, int *dup) {
  if (dup) *dup = 0;
  if (!obj || !key || !cJSON_IsObject(obj)) return NULL;
  const cJSON *hit = NULL;
  for (const cJSON *c = obj->child; c; c = c->next) {
    if (!c->string || strcmp(c->string, key) != 0) continue;
    if (hit) {
      if (dup) *dup = 1;
      return NULL;
    }
    hit = c;
  }
  return hit;
}

static ovl_err bad_value(const ovl_json *d, const char *key, const cJSON *item, const char *expect) {
  char got[48];
  ovl_json_text(item, got, sizeof got);
  return ovl_err_set(OVL_ERR_FORMAT, "%s '%s': %s\"%s\" must be %s, got %s", d->what, d->path, d->where, key, expect,
                     got);
}

/* The member key: *item NULL when absent (an error when required). */
static ovl_err member(const ovl_json *d, const cJSON *obj, const char *key, int required, const cJSON **item) {
  int dup = 0;
  *item = ovl_json_find(obj, key, &dup);
  if (dup)
    return ovl_err_set(OVL_ERR_FORMAT, "%s '%s': %s\"%s\" appears more than once", d->what, d->path, d->where, key);
  if (!*item && required)
    return ovl_err_set(OVL_ERR_FORMAT, "%s '%s': %s\"%s\" is required but absent", d->what, d->path, d->where, key);
  return OVL_OK;
}

static ovl_err num_of(const ovl_json *d, const char *key, const cJSON *it, double *v) {
  if (!cJSON_IsNumber(it) || !isfinite(it->valuedouble)) return bad_value(d, key, it, "a finite number");
  *v = it->valuedouble;
  return OVL_OK;
}

ovl_err ovl_json_num(const ovl_json *doc, const cJSON *obj, const char *key, double *v) {
  const cJSON *it;
  OVL_TRY(member(doc, obj, key, 1, &it));
  return num_of(doc, key, it, v);
}

ovl_err ovl_json_num_opt(const ovl_json *doc, const cJSON *obj, const char *key, double dflt, double *v) {
  const cJSON *it;
  OVL_TRY(member(doc, obj, key, 0, &it));
  if (!it || cJSON_IsNull(it)) return *v = dflt, OVL_OK;
  return num_of(doc, key, it, v);
}

static ovl_err int_of(const ovl_json *d, const char *key, const cJSON *it, int64_t lo, int64_t hi, int64_t *v) {
  if (lo < -OVL_JSON_INT_MAX) lo = -OVL_JSON_INT_MAX;
  if (hi > OVL_JSON_INT_MAX) hi = OVL_JSON_INT_MAX;
  double x = cJSON_IsNumber(it) ? it->valuedouble : NAN;
  if (!(isfinite(x) && x == floor(x) && x >= (double)lo && x <= (double)hi)) {
    char expect[96];
    if (lo == -OVL_JSON_INT_MAX && hi == OVL_JSON_INT_MAX) snprintf(expect, sizeof expect, "an integer");
    else if (hi == OVL_JSON_INT_MAX) snprintf(expect, sizeof expect, "an integer >= %" PRId64, lo);
    else snprintf(expect, sizeof expect, "an integer in [%" PRId64 ", %" PRId64 "]", lo, hi);
    return bad_value(d, key, it, expect);
  }
  *v = (int64_t)x;
  return OVL_OK;
}

ovl_err ovl_json_int(const ovl_json *doc, const cJSON *obj, const char *key, int64_t lo, int64_t hi, int64_t *v) {
  const cJSON *it;
  OVL_TRY(member(doc, obj, key, 1, &it));
  return int_of(doc, key, it, lo, hi, v);
}

ovl_err ovl_json_int_opt(const ovl_json *doc, const cJSON *obj, const char *key, int64_t lo, int64_t hi, int64_t dflt,
                         int64_t *v) {
  const cJSON *it;
  OVL_TRY(member(doc, obj, key, 0, &it));
  if (!it || cJSON_IsNull(it)) return *v = dflt, OVL_OK;
  return int_of(doc, key, it, lo, hi, v);
}

static ovl_err str_of(const ovl_json *d, const char *key, const cJSON *it, char *buf, size_t n) {
  if (!cJSON_IsString(it) || !it->valuestring) return bad_value(d, key, it, "a string");
  size_t len = strlen(it->valuestring);
  if (len >= n) {
    char expect[64];
    snprintf(expect, sizeof expect, "a string of at most %zu characters", n ? n - 1 : 0);
    return bad_value(d, key, it, expect);
  }
  memcpy(buf, it->valuestring, len + 1);
  return OVL_OK;
}

ovl_err ovl_json_str(const ovl_json *doc, const cJSON *obj, const char *key, char *buf, size_t n) {
  const cJSON *it;
  OVL_TRY(member(doc, obj, key, 1, &it));
  return str_of(doc, key, it, buf, n);
}

ovl_err ovl_json_str_opt(const ovl_json *doc, const cJSON *obj, const char *key, const char *dflt, char *buf,
                         size_t n) {
  const cJSON *it;
  OVL_TRY(member(doc, obj, key, 0, &it));
  if (!it || cJSON_IsNull(it)) {
    if (n) snprintf(buf, n, "%s", dflt ? dflt : "");
    return OVL_OK;
  }
  return str_of(doc, key, it, buf, n);
}

static ovl_err bool_of(const ovl_json *d, const char *key, const cJSON *it, int *v) {
  if (!cJSON_IsBool(it)) return bad_value(d, key, it, "true or false");
  *v = cJSON_IsTrue(it) ? 1 : 0;
  return OVL_OK;
}

ovl_err ovl_json_bool(const ovl_json *doc, const cJSON *obj, const char *key, int *v) {
  const cJSON *it;
  OVL_TRY(member(doc, obj, key, 1, &it));
  return bool_of(doc, key, it, v);
}

ovl_err ovl_json_bool_opt(const ovl_json *doc, const cJSON *obj, const char *key, int dflt, int *v) {
  const cJSON *it;
  OVL_TRY(member(doc, obj, key, 0, &it));
  if (!it || cJSON_IsNull(it)) return *v = dflt, OVL_OK;
  return bool_of(doc, key, it, v);
}

ovl_err ovl_json_nums(const ovl_json *doc, const cJSON *obj, const char *key, double *v, int cap, int *count) {
  const cJSON *it;
  *count = 0;
  OVL_TRY(member(doc, obj, key, 1, &it));
  if (!cJSON_IsArray(it)) return bad_value(doc, key, it, "an array of numbers");
  int k = 0;
  for (const cJSON *e = it->child; e; e = e->next, k++) {
    if (k == cap) {
      char expect[64];
      snprintf(expect, sizeof expect, "an array of at most %d numbers", cap);
      return bad_value(doc, key, it, expect);
    }
    if (!cJSON_IsNumber(e) || !isfinite(e->valuedouble)) return bad_value(doc, key, it, "an array of finite numbers");
    v[k] = e->valuedouble;
  }
  *count = k;
  return OVL_OK;
}

ovl_err ovl_json_only_keys(const ovl_json *doc, const cJSON *obj, const char *const *keys) {
  if (!obj || !cJSON_IsObject(obj)) return bad_value(doc, "", obj, "an object");
  for (const cJSON *c = obj->child; c; c = c->next) {
    int known = 0;
    for (int k = 0; keys[k] && !known; k++) known = strcmp(c->string, keys[k]) == 0;
    if (!known) {
      char list[256] = "";
      for (int k = 0; keys[k]; k++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s\"%s\"", k ? ", " : "", keys[k]);
      return ovl_err_set(OVL_ERR_FORMAT, "%s '%s': %sunknown key \"%s\" (expected %s)", doc->what, doc->path,
                         doc->where, c->string, list);
    }
    for (const cJSON *e = obj->child; e != c; e = e->next)
      if (strcmp(e->string, c->string) == 0)
        return ovl_err_set(OVL_ERR_FORMAT, "%s '%s': %s\"%s\" appears more than once", doc->what, doc->path, doc->where,
                           c->string);
  }
  return OVL_OK;
}

/* ---- JSON lines ------------------------------------------------------------------ */

ovl_err ovl_json_lines_read(const char *path, const char *what, size_t max, ovl_json_line_fn fn, void *ctx) {
  char *text = NULL;
  size_t len = 0;
  OVL_TRY(ovl_file_read_all(path, what ? what : "JSON lines file", max, &text, &len));
  ovl_err rc = OVL_OK;
  int lineno = 0;
  for (size_t pos = 0; pos < len && rc == OVL_OK;) {
    char *line = text + pos, *nl = memchr(line, '\n', len - pos);
    size_t n = nl ? (size_t)(nl - line) : len - pos;
    line[n] = '\0'; /* the '\n' (or the terminator already there) */
    pos += n + 1;
    lineno++;
    ovl_json doc;
    if (ovl_json_parse(line, n, what, path, &doc) != OVL_OK) doc.root = NULL;
    snprintf(doc.where, sizeof doc.where, "line %d: ", lineno);
    rc = fn(ctx, &doc, line, lineno);
    ovl_json_free(&doc);
  }
  ovl_free(&text);
  return rc;
}
