/* The one table of algorithm identifiers and names. */
#include "ovl/algo.h"

#include <stdio.h>
#include <string.h>

static const char *const k_algo_names[OVL_ALGO_N] = {"summa", "hsumma", "cannon", "3d",   "2.5d",
                                                     "alg3",  "alg4",   "alg5",   "alg6", "sq"};
static const char *const k_family_names[] = {"gemm", "ssc", "sq"};

const char *ovl_algo_name(ovl_algo a) {
  if (a == OVL_ALGO_AUTO) return "auto";
  return (int)a >= 0 && (int)a < OVL_ALGO_N ? k_algo_names[a] : "unknown";
}

ovl_err ovl_algo_parse(const char *name, ovl_algo *out) {
  OVL_TRY(ovl_check_ptr(out, "ovl_algo_parse", "out"));
  for (int a = 0; name && a < OVL_ALGO_N; a++)
    if (strcmp(name, k_algo_names[a]) == 0) {
      *out = (ovl_algo)a;
      return OVL_OK;
    }
  return ovl_err_set(OVL_ERR_ARG,
                     "'%s' is not an algorithm (summa, hsumma, cannon, 3d, 2.5d; SymmSquareCube: alg3, alg4, alg5, "
                     "alg6; the symmetric square: sq)",
                     name ? name : "(null)");
}

ovl_err ovl_algo_parse_list(const char *list, ovl_algo *out, int cap, int *n) {
  char name[32], why[1024];
  int k = 0;
  OVL_TRY(ovl_check_ptr(out, "ovl_algo_parse_list", "out"));
  OVL_TRY(ovl_check_ptr(n, "ovl_algo_parse_list", "n"));
  if (list == NULL || *list == '\0') return ovl_err_set(OVL_ERR_ARG, "an empty list of algorithms");
  for (const char *s = list;; k++) {
    const char *comma = strchr(s, ',');
    int len = comma ? (int)(comma - s) : (int)strlen(s);
    if (len == 0) return ovl_err_set(OVL_ERR_ARG, "algorithm list '%s': item %d is empty", list, k + 1);
    if (k == cap) return ovl_err_set(OVL_ERR_ARG, "algorithm list '%s': more than %d algorithms", list, cap);
    snprintf(name, sizeof name, "%.*s", len, s);
    if (ovl_algo_parse(name, &out[k]) != OVL_OK) {
      snprintf(why, sizeof why, "%s", ovl_errmsg());
      return ovl_err_set(OVL_ERR_ARG, "algorithm list '%s': %s", list, why);
    }
    if (!comma) break;
    s = comma + 1;
  }
  *n = k + 1;
  return OVL_OK;
}

ovl_family ovl_algo_family(ovl_algo a) {
  return a == OVL_ALGO_SQ ? OVL_FAMILY_SQ : a >= OVL_ALGO_SSC3 ? OVL_FAMILY_SSC : OVL_FAMILY_GEMM;
}

int ovl_algo_is_3d(ovl_algo a) { return a == OVL_ALGO_3D || a == OVL_ALGO_25D || a >= OVL_ALGO_SSC3; }

const char *ovl_family_name(ovl_family f) {
  return (int)f >= 0 && (int)f < (int)(sizeof k_family_names / sizeof k_family_names[0]) ? k_family_names[f] : "gemm";
}

ovl_err ovl_family_parse(const char *name, ovl_family *out) {
  OVL_TRY(ovl_check_ptr(out, "ovl_family_parse", "out"));
  for (int f = 0; name && f < (int)(sizeof k_family_names / sizeof k_family_names[0]); f++)
    if (strcmp(name, k_family_names[f]) == 0) {
      *out = (ovl_family)f;
      return OVL_OK;
    }
  return ovl_err_set(OVL_ERR_ARG, "'%s' is not a kernel family (gemm, ssc, sq)", name ? name : "(null)");
}
