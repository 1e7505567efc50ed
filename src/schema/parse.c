/* The parsers of written values shared by options, plans and files:
 * integers, sizes and grid shapes. */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>

#include "ovl/schema.h"

/* An integer is digits with at most a leading '-' (signed only): strtoll and
 * strtoull also take leading white space and a sign, and strtoull negates a
 * "-N" it then returns as a huge unsigned value (" -18446744073709551615" is
 * 1). Returns 1 when s has that form. */
static int integer_form(const char *s, int sign_ok) {
  if (sign_ok && *s == '-') s++;
  return isdigit((unsigned char)*s);
}

ovl_err ovl_parse_size(const char *s, int64_t *out) {
  OVL_TRY(ovl_check_ptr(out, "ovl_parse_size", "out"));
  if (s == NULL || *s == '\0') return ovl_err_set(OVL_ERR_ARG, "empty size");
  if (*s == '-') return ovl_err_set(OVL_ERR_ARG, "size '%s' is negative", s);
  if (!integer_form(s, 0)) return ovl_err_set(OVL_ERR_ARG, "'%s' is not a size (it must start with a digit)", s);
  errno = 0;
  char *end = NULL;
  unsigned long long v = strtoull(s, &end, 10);
  if (end == s) return ovl_err_set(OVL_ERR_ARG, "'%s' is not a size", s);
  if (errno == ERANGE) return ovl_err_set(OVL_ERR_ARG, "size '%s' is too large", s);
  int shift = 0;
  switch (toupper((unsigned char)*end)) {
  case 'K':
    shift = 10;
    end++;
    break;
  case 'M':
    shift = 20;
    end++;
    break;
  case 'G':
    shift = 30;
    end++;
    break;
  default: break;
  }
  if (shift && (*end == 'i' || *end == 'I')) end++;
  if (shift && (*end == 'B' || *end == 'b')) end++;
  if (*end != '\0') return ovl_err_set(OVL_ERR_ARG, "'%s' is not a size (expected N, NK, NM or NG)", s);
  if (v > ((unsigned long long)INT64_MAX >> shift)) return ovl_err_set(OVL_ERR_ARG, "size '%s' is too large", s);
  *out = (int64_t)(v << shift);
  return OVL_OK;
}

ovl_err ovl_parse_int(const char *s, int64_t *out) {
  OVL_TRY(ovl_check_ptr(out, "ovl_parse_int", "out"));
  if (s == NULL || *s == '\0') return ovl_err_set(OVL_ERR_ARG, "empty number");
  errno = 0;
  char *end = NULL;
  long long v = integer_form(s, 1) ? strtoll(s, &end, 10) : 0;
  if (end == NULL || end == s || *end != '\0') return ovl_err_set(OVL_ERR_ARG, "'%s' is not an integer", s);
  if (errno == ERANGE) return ovl_err_set(OVL_ERR_ARG, "'%s' is out of range (beyond 64 bits)", s);
  *out = (int64_t)v;
  return OVL_OK;
}

ovl_err ovl_parse_dims(const char *s, int dims[3], int *ndims) {
  int n = 0;
  const char *p = s;
  OVL_TRY(ovl_check_ptr(dims, "ovl_parse_dims", "dims"));
  OVL_TRY(ovl_check_ptr(ndims, "ovl_parse_dims", "ndims"));
  if (s == NULL || *s == '\0') return ovl_err_set(OVL_ERR_ARG, "empty grid shape");
  while (*p) {
    if (n == 3) return ovl_err_set(OVL_ERR_ARG, "grid shape '%s' has more than 3 dimensions", s);
    errno = 0;
    char *end = NULL;
    long v = integer_form(p, 0) ? strtol(p, &end, 10) : 0;
    if (end == NULL || end == p || v <= 0 || v > (1 << 20) || errno == ERANGE)
      return ovl_err_set(OVL_ERR_ARG, "grid shape '%s': expected positive integers like 2x3 or 2x2x2", s);
    dims[n++] = (int)v;
    if (*end == 'x' || *end == 'X') {
      p = end + 1;
      if (*p == '\0') return ovl_err_set(OVL_ERR_ARG, "grid shape '%s' ends with 'x'", s);
    } else if (*end == '\0') {
      p = end;
    } else {
      return ovl_err_set(OVL_ERR_ARG, "grid shape '%s': unexpected '%c'", s, *end);
    }
  }
  *ndims = n;
  return OVL_OK;
}
