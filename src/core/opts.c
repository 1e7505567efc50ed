/* Table-driven option parser. */
#include "ovl/opts.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int has_bounds(const ovl_opt *o) { return o->min <= o->max; }

static void optname(const ovl_opt *o, char *buf, size_t n) {
  if (o->sname && o->lname) snprintf(buf, n, "-%c/--%s", o->sname, o->lname);
  else if (o->lname) snprintf(buf, n, "--%s", o->lname);
  else snprintf(buf, n, "-%c", o->sname);
}

static ovl_err check_bounds(const ovl_opt *o, int64_t v) {
  if (!has_bounds(o) || (v >= o->min && v <= o->max)) return OVL_OK;
  char nm[64];
  optname(o, nm, sizeof nm);
  return ovl_err_set(OVL_ERR_ARG, "option %s: value %" PRId64 " is outside [%" PRId64 ", %" PRId64 "]", nm, v, o->min,
                     o->max);
}

/* The message of the last error, copied: ovl_err_set formats into the buffer
 * that ovl_errmsg() returns, so it must not be an argument of ovl_err_set. */
static const char *last_msg(char *buf, size_t n) {
  snprintf(buf, n, "%s", ovl_errmsg());
  return buf;
}

/* One pass over a list: the values are checked and counted, and written to
 * out when out is not NULL. */
static ovl_err list_scan(const char *s, int64_t lo, int64_t hi, int64_t *out, int cap, int *count) {
  char why[256], buf[64];
  int k = 0;
  for (int item = 1;; item++) {
    const char *comma = strchr(s, ',');
    size_t len = comma ? (size_t)(comma - s) : strlen(s);
    if (len == 0) return ovl_err_set(OVL_ERR_ARG, "item %d is empty%s", item, comma ? "" : " (a trailing comma?)");
    if (len >= sizeof buf) return ovl_err_set(OVL_ERR_ARG, "item %d is too long", item);
    memcpy(buf, s, len);
    buf[len] = '\0';
    char *dash = buf[0] == '-' ? NULL : strchr(buf, '-'); /* a leading '-' is a negative size */
    if (dash) *dash = '\0';
    int64_t a = 0, b = 0;
    if (ovl_parse_size(buf, &a) != OVL_OK || (dash && ovl_parse_size(dash + 1, &b) != OVL_OK))
      return ovl_err_set(OVL_ERR_ARG, "item %d: %s", item, last_msg(why, sizeof why));
    if (!dash) b = a;
    if (b < a) return ovl_err_set(OVL_ERR_ARG, "item %d: the range %" PRId64 "-%" PRId64 " descends", item, a, b);
    if (lo <= hi && (a < lo || b > hi))
      return ovl_err_set(OVL_ERR_ARG, "item %d: value %" PRId64 " is outside [%" PRId64 ", %" PRId64 "]", item,
                         a < lo ? a : b, lo, hi);
    if (b - a >= (int64_t)cap - k) return ovl_err_set(OVL_ERR_ARG, "more than %d values", cap);
    for (int64_t v = a;; v++) {
      if (out) out[k] = v;
      k++;
      if (v == b) break;
    }
    if (!comma) break;
    s = comma + 1;
  }
  *count = k;
  return OVL_OK;
}

ovl_err ovl_parse_list(const char *s, int64_t lo, int64_t hi, int64_t *out, int cap, int *n) {
  char why[256];
  int k = 0;
  OVL_TRY(ovl_check_ptr(n, "ovl_parse_list", "n"));
  if (s == NULL || *s == '\0') return ovl_err_set(OVL_ERR_ARG, "an empty list");
  if (list_scan(s, lo, hi, NULL, cap, &k) != OVL_OK)
    return ovl_err_set(OVL_ERR_ARG, "list '%s': %s", s, last_msg(why, sizeof why));
  if (out) list_scan(s, lo, hi, out, cap, &k);
  *n = k;
  return OVL_OK;
}

static ovl_err assign(const ovl_opt *o, const char *val) {
  char nm[64], why[256];
  optname(o, nm, sizeof nm);
  int64_t v = 0;
  ovl_err rc = OVL_OK;
  switch (o->type) {
  case OVL_OPT_FLAG: *(int *)o->dest = 1; return OVL_OK;
  case OVL_OPT_INT:
    if (ovl_parse_int(val, &v) != OVL_OK)
      return ovl_err_set(OVL_ERR_ARG, "option %s: %s", nm, last_msg(why, sizeof why));
    OVL_TRY(check_bounds(o, v));
    if (v < INT32_MIN || v > INT32_MAX)
      return ovl_err_set(OVL_ERR_ARG, "option %s: '%s' is out of range (beyond 32 bits)", nm, val);
    *(int *)o->dest = (int)v;
    return OVL_OK;
  case OVL_OPT_I64:
    if (ovl_parse_int(val, &v) != OVL_OK)
      return ovl_err_set(OVL_ERR_ARG, "option %s: %s", nm, last_msg(why, sizeof why));
    OVL_TRY(check_bounds(o, v));
    *(int64_t *)o->dest = v;
    return OVL_OK;
  case OVL_OPT_SIZE:
    if (ovl_parse_size(val, &v) != OVL_OK)
      return ovl_err_set(OVL_ERR_ARG, "option %s: %s", nm, last_msg(why, sizeof why));
    OVL_TRY(check_bounds(o, v));
    *(int64_t *)o->dest = v;
    return OVL_OK;
  case OVL_OPT_RANGE: {
    int64_t lo = 0, hi = 0;
    const char *colon = strchr(val, ':');
    char buf[64];
    if (colon) {
      size_t len = (size_t)(colon - val);
      if (len >= sizeof buf) return ovl_err_set(OVL_ERR_ARG, "option %s: '%s' is too long", nm, val);
      memcpy(buf, val, len);
      buf[len] = '\0';
      if (ovl_parse_size(buf, &lo) != OVL_OK || ovl_parse_size(colon + 1, &hi) != OVL_OK)
        return ovl_err_set(OVL_ERR_ARG, "option %s: '%s' is not min:max (%s)", nm, val, last_msg(why, sizeof why));
    } else {
      if (ovl_parse_size(val, &lo) != OVL_OK)
        return ovl_err_set(OVL_ERR_ARG, "option %s: %s", nm, last_msg(why, sizeof why));
      hi = lo;
    }
    if (lo > hi) return ovl_err_set(OVL_ERR_ARG, "option %s: min %" PRId64 " > max %" PRId64, nm, lo, hi);
    OVL_TRY(check_bounds(o, lo));
    OVL_TRY(check_bounds(o, hi));
    ((int64_t *)o->dest)[0] = lo;
    ((int64_t *)o->dest)[1] = hi;
    return OVL_OK;
  }
  case OVL_OPT_DOUBLE: {
    errno = 0;
    char *end = NULL;
    double d = isspace((unsigned char)val[0]) ? 0 : strtod(val, &end);
    if (end == NULL || end == val || *end != '\0' || d != d)
      return ovl_err_set(OVL_ERR_ARG, "option %s: '%s' is not a number", nm, val);
    if (errno == ERANGE)
      return ovl_err_set(OVL_ERR_ARG, "option %s: '%s' is out of range (beyond what a double holds)", nm, val);
    if (!isfinite(d)) return ovl_err_set(OVL_ERR_ARG, "option %s: '%s' is not a finite number", nm, val);
    *(double *)o->dest = d;
    return OVL_OK;
  }
  case OVL_OPT_INT_OR_AUTO:
    if (strcmp(val, "auto") == 0) {
      *(int *)o->dest = OVL_OPT_AUTO;
      return OVL_OK;
    }
    rc = ovl_parse_int(val, &v);
    if (rc == OVL_OK && (v < INT32_MIN || v > INT32_MAX)) rc = ovl_err_set(OVL_ERR_ARG, "out of range");
    if (rc != OVL_OK)
      return ovl_err_set(OVL_ERR_ARG, "option %s: '%s' is not an integer in [%" PRId64 ", %" PRId64 "] or auto", nm,
                         val, o->min, o->max);
    OVL_TRY(check_bounds(o, v));
    *(int *)o->dest = (int)v;
    return OVL_OK;
  case OVL_OPT_LIST: {
    ovl_opt_list *l = (ovl_opt_list *)o->dest;
    if (ovl_parse_list(val, o->min, o->max, l->v, l->cap, &l->n) != OVL_OK)
      return ovl_err_set(OVL_ERR_ARG, "option %s: %s", nm, last_msg(why, sizeof why));
    return OVL_OK;
  }
  case OVL_OPT_STRING:
    if (val[0] == '\0') return ovl_err_set(OVL_ERR_ARG, "option %s: an empty value", nm);
    *(const char **)o->dest = val;
    return OVL_OK;
  case OVL_OPT_CHOICE: {
    for (const char *const *c = o->choices; c && *c; c++)
      if (strcmp(*c, val) == 0) {
        *(const char **)o->dest = *c;
        return OVL_OK;
      }
    char list[256] = "";
    for (const char *const *c = o->choices; c && *c; c++) {
      if (list[0]) strncat(list, ", ", sizeof list - strlen(list) - 1);
      strncat(list, *c, sizeof list - strlen(list) - 1);
    }
    return ovl_err_set(OVL_ERR_ARG, "option %s: '%s' is not one of {%s}", nm, val, list);
  }
  }
  return ovl_err_set(OVL_ERR_INTERNAL, "option %s: unknown type", nm);
}

ovl_err ovl_opts_parse(const ovl_opt *opts, int nopts, int argc, char **argv, int first, unsigned char *given) {
  if (given) memset(given, 0, (size_t)nopts);
  for (int a = first; a < argc; a++) {
    const char *arg = argv[a];
    const ovl_opt *o = NULL;
    const char *inline_val = NULL;
    if (arg[0] == '-' && arg[1] == '-' && arg[2] != '\0') {
      const char *name = arg + 2;
      const char *eq = strchr(name, '=');
      size_t len = eq ? (size_t)(eq - name) : strlen(name);
      for (int k = 0; k < nopts; k++)
        if (opts[k].lname && strlen(opts[k].lname) == len && strncmp(opts[k].lname, name, len) == 0) o = &opts[k];
      if (o == NULL) return ovl_err_set(OVL_ERR_ARG, "unknown option '%s' (see --help)", arg);
      if (eq) inline_val = eq + 1;
    } else if (arg[0] == '-' && arg[1] != '\0' && arg[1] != '-' && !isdigit((unsigned char)arg[1])) {
      for (int k = 0; k < nopts; k++)
        if (opts[k].sname == arg[1]) o = &opts[k];
      if (o == NULL) return ovl_err_set(OVL_ERR_ARG, "unknown option '%s' (see --help)", arg);
      if (arg[2] != '\0') inline_val = arg + 2;
    } else {
      return ovl_err_set(OVL_ERR_ARG, "unexpected argument '%s' (see --help)", arg);
    }
    if (given) given[o - opts] = 1;
    if (o->type == OVL_OPT_FLAG) {
      if (inline_val) return ovl_err_set(OVL_ERR_ARG, "option '%s' takes no value", arg);
      OVL_TRY(assign(o, NULL));
      continue;
    }
    if (inline_val == NULL) {
      if (a + 1 >= argc) return ovl_err_set(OVL_ERR_ARG, "option '%s' needs a value", arg);
      inline_val = argv[++a];
    }
    OVL_TRY(assign(o, inline_val));
  }
  return OVL_OK;
}

/* The option a word names (NULL: none; *inline_val set for --name=value and
 * -Xvalue); *is_opt = 0 when the word is not an option at all. */
static const ovl_opt *find_opt(const ovl_opt *opts, int nopts, const char *arg, const char **inline_val, int *is_opt) {
  *inline_val = NULL;
  *is_opt = 1;
  if (arg[0] == '-' && arg[1] == '-' && arg[2] != '\0') {
    const char *name = arg + 2, *eq = strchr(name, '=');
    size_t len = eq ? (size_t)(eq - name) : strlen(name);
    if (eq) *inline_val = eq + 1;
    for (int k = 0; k < nopts; k++)
      if (opts[k].lname && strlen(opts[k].lname) == len && strncmp(opts[k].lname, name, len) == 0) return &opts[k];
    return NULL;
  }
  if (arg[0] == '-' && arg[1] != '\0' && arg[1] != '-' && !isdigit((unsigned char)arg[1])) {
    if (arg[2] != '\0') *inline_val = arg + 2;
    for (int k = 0; k < nopts; k++)
      if (opts[k].sname == arg[1]) return &opts[k];
    return NULL;
  }
  *is_opt = 0;
  return NULL;
}

/* String options point into the parsed words: their buffers stay (reachable)
 * for the life of the process, a few per process at most. */
enum { OPTS_MAX_STRINGS = 32 };
static char *g_kept[OPTS_MAX_STRINGS];
static int g_nkept;

ovl_err ovl_opts_parse_string_buf(const ovl_opt *opts, int nopts, const char *str, const char *what, int ignore_unknown,
                                  unsigned char *given, char **words_out) {
  *words_out = NULL;
  if (!str) return OVL_OK;
  char *buf = strdup(str);
  if (!buf) return ovl_err_set(OVL_ERR_NOMEM, "cannot copy the options of %s", what);
  char *words[256];
  int nw = 0;
  for (char *save = NULL, *w = strtok_r(buf, " \t\n", &save); w; w = strtok_r(NULL, " \t\n", &save)) {
    if (nw == 256) {
      free(buf);
      return ovl_err_set(OVL_ERR_ARG, "%s: more than 256 words", what);
    }
    words[nw++] = w;
  }
  ovl_err rc = OVL_OK;
  for (int a = 0; a < nw && rc == OVL_OK; a++) {
    const char *iv = NULL;
    int is_opt = 0;
    const ovl_opt *o = find_opt(opts, nopts, words[a], &iv, &is_opt);
    if (!o) {
      if (is_opt && ignore_unknown) {
        if (!iv && a + 1 < nw && words[a + 1][0] != '-') a++; /* its value */
        continue;
      }
      rc = ovl_err_set(OVL_ERR_ARG, "%s: %s '%s'", what, is_opt ? "unknown option" : "unexpected word", words[a]);
      break;
    }
    if (given) given[o - opts] = 1;
    if (o->type == OVL_OPT_FLAG) {
      rc = iv ? ovl_err_set(OVL_ERR_ARG, "%s: option '%s' takes no value", what, words[a]) : assign(o, NULL);
      continue;
    }
    if (!iv && a + 1 >= nw) {
      rc = ovl_err_set(OVL_ERR_ARG, "%s: option '%s' needs a value", what, words[a]);
      break;
    }
    rc = assign(o, iv ? iv : words[++a]);
    if (rc != OVL_OK) { /* the message is formatted from a copy: never from the buffer it is written to */
      char msg[1024];
      snprintf(msg, sizeof msg, "%s", ovl_errmsg());
      rc = ovl_err_set(OVL_ERR_ARG, "%s: %s", what, msg);
    }
  }
  if (rc == OVL_OK) *words_out = buf;
  else free(buf);
  return rc;
}

ovl_err ovl_opts_parse_string(const ovl_opt *opts, int nopts, const char *str, const char *what, int ignore_unknown,
                              unsigned char *given) {
  if (!str) return OVL_OK;
  if (g_nkept == OPTS_MAX_STRINGS) return ovl_err_set(OVL_ERR_ARG, "%s: too many option strings in one process", what);
  char *buf = NULL;
  OVL_TRY(ovl_opts_parse_string_buf(opts, nopts, str, what, ignore_unknown, given, &buf));
  g_kept[g_nkept++] = buf;
  return OVL_OK;
}

static void current_value(const ovl_opt *o, char *buf, size_t n) {
  buf[0] = '\0';
  switch (o->type) {
  case OVL_OPT_FLAG: break;
  case OVL_OPT_INT: snprintf(buf, n, "%d", *(int *)o->dest); break;
  case OVL_OPT_INT_OR_AUTO:
    if (*(int *)o->dest == OVL_OPT_AUTO) snprintf(buf, n, "auto");
    else snprintf(buf, n, "%d", *(int *)o->dest);
    break;
  case OVL_OPT_I64:
  case OVL_OPT_SIZE: snprintf(buf, n, "%" PRId64, *(int64_t *)o->dest); break;
  case OVL_OPT_RANGE: snprintf(buf, n, "%" PRId64 ":%" PRId64, ((int64_t *)o->dest)[0], ((int64_t *)o->dest)[1]); break;
  case OVL_OPT_DOUBLE: snprintf(buf, n, "%g", *(double *)o->dest); break;
  case OVL_OPT_LIST: {
    const ovl_opt_list *l = (const ovl_opt_list *)o->dest;
    size_t used = 0;
    for (int k = 0; k < l->n && used < n; k++)
      used += (size_t)snprintf(buf + used, n - used, "%s%" PRId64, k ? "," : "", l->v[k]);
    break;
  }
  case OVL_OPT_STRING:
  case OVL_OPT_CHOICE: {
    const char *s = *(const char **)o->dest;
    if (s) snprintf(buf, n, "%s", s);
    break;
  }
  }
}

void ovl_opts_help(FILE *out, const char *usage, const ovl_opt *opts, int nopts) {
  ovl_fprintf(out, "%s\n\nOptions:\n", usage);
  for (int k = 0; k < nopts; k++) {
    const ovl_opt *o = &opts[k];
    if (o->help == NULL) continue; /* an alias (another name of a listed option): parsed, not listed */
    char left[96], def[96], choices[160] = "";
    const char *mv = o->type == OVL_OPT_FLAG ? "" : o->metavar ? o->metavar : o->type == OVL_OPT_LIST ? "LIST" : "VAL";
    if (o->sname && o->lname) snprintf(left, sizeof left, "  -%c, --%s%s%s", o->sname, o->lname, *mv ? " " : "", mv);
    else if (o->lname) snprintf(left, sizeof left, "      --%s%s%s", o->lname, *mv ? " " : "", mv);
    else snprintf(left, sizeof left, "  -%c%s%s", o->sname, *mv ? " " : "", mv);
    current_value(o, def, sizeof def);
    if (o->type == OVL_OPT_CHOICE) {
      strcpy(choices, " {");
      for (const char *const *c = o->choices; c && *c; c++) {
        if (c != o->choices) strncat(choices, ",", sizeof choices - strlen(choices) - 1);
        strncat(choices, *c, sizeof choices - strlen(choices) - 1);
      }
      strncat(choices, "}", sizeof choices - strlen(choices) - 1);
    }
    if (o->type == OVL_OPT_LIST) /* the type is said once, by the parser */
      snprintf(choices, sizeof choices, " (a list: A,B,... with ranges A-B; at most %d values)",
               ((const ovl_opt_list *)o->dest)->cap);
    fprintf(out, "%-30s %s%s", left, o->help ? o->help : "", choices);
    /* a help text that states its default in words keeps it; an unset number (NaN) has none */
    if (def[0] && !(o->help && strstr(o->help, "default")) && strcmp(def, "nan") != 0)
      ovl_fprintf(out, " [default: %s]", def);
    fputc('\n', out);
  }
}
