/* The one table of each name set of a plan: algorithms (with their
 * families), families, collective back ends and collective schedules. */
#include <stdio.h>
#include <string.h>

#include "ovl/schema.h"

/* ---- algorithms and families ---------------------------------------------------- */

static const struct {
  const char *name;
  ovl_family family;
  int grid3; /* an s x s x c grid */
} k_algos[OVL_ALGO_N] = {
    [OVL_ALGO_SUMMA] = {"summa", OVL_FAMILY_GEMM, 0},    [OVL_ALGO_HSUMMA] = {"hsumma", OVL_FAMILY_GEMM, 0},
    [OVL_ALGO_CANNON] = {"cannon", OVL_FAMILY_GEMM, 0},  [OVL_ALGO_3D] = {"3d", OVL_FAMILY_GEMM, 1},
    [OVL_ALGO_25D] = {"2.5d", OVL_FAMILY_GEMM, 1},       [OVL_ALGO_SSC3] = {"alg3", OVL_FAMILY_SSC, 1},
    [OVL_ALGO_SSC4] = {"alg4", OVL_FAMILY_SSC, 1},       [OVL_ALGO_SSC5] = {"alg5", OVL_FAMILY_SSC, 1},
    [OVL_ALGO_SSC6] = {"alg6", OVL_FAMILY_SSC, 1},       [OVL_ALGO_SQ] = {"sq", OVL_FAMILY_SQ, 1},
    [OVL_ALGO_BSUMMA] = {"bsumma", OVL_FAMILY_BSMUL, 0}, [OVL_ALGO_BS25D] = {"bs2.5d", OVL_FAMILY_BSMUL, 1},
};

const char *const ovl_family_names[] = {
    [OVL_FAMILY_GEMM] = "gemm", [OVL_FAMILY_SSC] = "ssc", [OVL_FAMILY_SQ] = "sq", [OVL_FAMILY_BSMUL] = "bsmul", NULL};

const char *ovl_algo_name(ovl_algo a) {
  if (a == OVL_ALGO_AUTO) return "auto";
  return (int)a >= 0 && (int)a < OVL_ALGO_N ? k_algos[a].name : "unknown";
}

/* "summa, hsumma, ...; ssc: alg3, ...": every name, by family. */
static void algo_list(char *buf, size_t n) {
  size_t used = 0;
  buf[0] = '\0';
  for (int f = 0; f < OVL_FAMILY_N; f++)
    for (int a = 0, first = 1; a < OVL_ALGO_N; a++) {
      if (k_algos[a].family != (ovl_family)f) continue;
      if (used < n)
        used += (size_t)snprintf(buf + used, n - used, "%s%s%s%s",
                                 used && first ? "; "
                                 : used        ? ", "
                                               : "",
                                 first ? ovl_family_names[f] : "", first ? ": " : "", k_algos[a].name);
      first = 0;
    }
}

ovl_err ovl_algo_parse(const char *name, ovl_algo *out) {
  OVL_TRY(ovl_check_ptr(out, "ovl_algo_parse", "out"));
  for (int a = 0; name && a < OVL_ALGO_N; a++)
    if (strcmp(name, k_algos[a].name) == 0) {
      *out = (ovl_algo)a;
      return OVL_OK;
    }
  char list[256];
  algo_list(list, sizeof list);
  return ovl_err_set(OVL_ERR_ARG, "'%s' is not an algorithm (%s)", name ? name : "(null)", list);
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
  return (int)a >= 0 && (int)a < OVL_ALGO_N ? k_algos[a].family : OVL_FAMILY_GEMM;
}

int ovl_algo_is_3d(ovl_algo a) { return (int)a >= 0 && (int)a < OVL_ALGO_N && k_algos[a].grid3; }

const char *const *ovl_algo_choices(ovl_family f) {
  /* the names of each family and "auto", built once from the table */
  static const char *lists[OVL_FAMILY_N][OVL_ALGO_N + 2];
  if ((int)f < 0 || f >= OVL_FAMILY_N) return NULL;
  if (lists[f][0] == NULL) {
    int k = 0;
    for (int a = 0; a < OVL_ALGO_N; a++)
      if (k_algos[a].family == f) lists[f][k++] = k_algos[a].name;
    lists[f][k] = "auto";
  }
  return lists[f];
}

const char *ovl_family_name(ovl_family f) {
  return (int)f >= 0 && f < OVL_FAMILY_N ? ovl_family_names[f] : ovl_family_names[OVL_FAMILY_GEMM];
}

ovl_err ovl_family_parse(const char *name, ovl_family *out) {
  OVL_TRY(ovl_check_ptr(out, "ovl_family_parse", "out"));
  for (int f = 0; name && f < OVL_FAMILY_N; f++)
    if (strcmp(name, ovl_family_names[f]) == 0) {
      *out = (ovl_family)f;
      return OVL_OK;
    }
  return ovl_err_set(OVL_ERR_ARG, "'%s' is not a kernel family (gemm, ssc, sq, bsmul)", name ? name : "(null)");
}

/* ---- collectives -------------------------------------------------------------------- */

ovl_coll_cfg ovl_coll_cfg_default(void) {
  ovl_coll_cfg c = {OVL_BACKEND_MPI, OVL_ALG_AUTO, OVL_ALG_AUTO, OVL_ALG_AUTO, OVL_ALG_AUTO, OVL_ALG_AUTO, 0, 0};
  return c;
}

/* The schedules of each collective: names[k] (k >= 1) is the ovl_alg
 * first + k - 1; names[0] is "auto". */
static const char *const k_bcast[] = {"auto", "binomial", "scatter-allgather", "chain", "hier", NULL};
static const char *const k_reduce[] = {"auto", "binomial", "rabenseifner", NULL};
static const char *const k_allreduce[] = {"auto", "rabenseifner", "ring", NULL};
static const char *const k_allgather[] = {"auto", "ring", "recdbl", NULL};
static const char *const k_alltoall[] = {"auto", "ring", "pairwise", NULL};
static const struct {
  const char *coll;
  ovl_alg first;
  const char *const *names;
} k_colls[] = {
    {"bcast", OVL_BCAST_BINOMIAL, k_bcast},
    {"reduce", OVL_REDUCE_BINOMIAL, k_reduce},
    {"allreduce", OVL_ALLREDUCE_RABENSEIFNER, k_allreduce},
    {"allgather", OVL_ALLGATHER_RING, k_allgather},
    {"alltoall", OVL_ALLTOALL_RING, k_alltoall},
};
enum { N_COLLS = (int)(sizeof k_colls / sizeof k_colls[0]) };

const char *ovl_alg_name(ovl_alg a) {
  if (a == OVL_ALG_AUTO) return "auto";
  for (int c = 0; c < N_COLLS; c++)
    for (int k = 1; k_colls[c].names[k]; k++)
      if ((int)k_colls[c].first + k - 1 == (int)a) return k_colls[c].names[k];
  return "unknown";
}

const char *const *ovl_alg_choices(const char *coll) {
  for (int c = 0; coll && c < N_COLLS; c++)
    if (strcmp(k_colls[c].coll, coll) == 0) return k_colls[c].names;
  return NULL;
}

ovl_err ovl_alg_parse(const char *coll, const char *name, ovl_alg *out) {
  OVL_TRY(ovl_check_ptr(coll, "ovl_alg_parse", "coll"));
  OVL_TRY(ovl_check_ptr(name, "ovl_alg_parse", "name"));
  OVL_TRY(ovl_check_ptr(out, "ovl_alg_parse", "out"));
  int c = 0;
  while (c < N_COLLS && strcmp(k_colls[c].coll, coll) != 0) c++;
  if (c == N_COLLS) return ovl_err_set(OVL_ERR_ARG, "unknown collective '%s'", coll);
  char list[256] = "";
  for (int k = 0; k_colls[c].names[k]; k++) {
    if (strcmp(k_colls[c].names[k], name) == 0) {
      *out = k == 0 ? OVL_ALG_AUTO : (ovl_alg)((int)k_colls[c].first + k - 1);
      return OVL_OK;
    }
    if (k) strncat(list, ", ", sizeof list - strlen(list) - 1);
    strncat(list, k_colls[c].names[k], sizeof list - strlen(list) - 1);
  }
  return ovl_err_set(OVL_ERR_ARG, "'%s' is not a %s algorithm (one of: %s)", name, coll, list);
}

const char *const ovl_backend_names[] = {[OVL_BACKEND_MPI] = "mpi", [OVL_BACKEND_OWN] = "own", NULL};
enum { N_BACKENDS = (int)(sizeof ovl_backend_names / sizeof ovl_backend_names[0]) - 1 };

const char *ovl_backend_name(ovl_backend b) {
  return (int)b >= 0 && (int)b < N_BACKENDS ? ovl_backend_names[b] : ovl_backend_names[OVL_BACKEND_MPI];
}

ovl_err ovl_backend_parse(const char *name, ovl_backend *out) {
  OVL_TRY(ovl_check_ptr(out, "ovl_backend_parse", "out"));
  char list[64] = "";
  for (int i = 0; i < N_BACKENDS; i++) {
    if (name != NULL && strcmp(name, ovl_backend_names[i]) == 0) {
      *out = (ovl_backend)i;
      return OVL_OK;
    }
    if (i > 0) strncat(list, i + 1 == N_BACKENDS ? " or " : ", ", sizeof list - strlen(list) - 1);
    strncat(list, ovl_backend_names[i], sizeof list - strlen(list) - 1);
  }
  return ovl_err_set(OVL_ERR_ARG, "'%s' is not a collective back end (%s)", name ? name : "(null)", list);
}
