/* Fuzz target: the command-line option parser (ovl_opts_parse,
 * ovl_parse_size, ovl_parse_list, ovl_parse_dims; src/core/opts.c). The input is split at
 * NUL bytes into argv; the option table has every option type, with and
 * without bounds, short and long names. Properties checked beyond memory
 * safety: a successful parse leaves bounded values inside their bounds,
 * ranges with min <= max, lists within their bounds and capacity,
 * choices from the list, --help text prints, and
 * an error message is not formatted over itself. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ovl/opts.h"

#define FUZZ_ASSERT(c)                                                                                                 \
  do {                                                                                                                 \
    if (!(c)) abort();                                                                                                 \
  } while (0)

enum { MAX_ARGS = 64 };
static const char *const k_choices[] = {"summa", "hsumma", "cannon", "3d", NULL};
static FILE *g_null;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 4096) return 0;
  char *buf = malloc(size + 1);
  if (buf == NULL) return 0;
  memcpy(buf, data, size);
  buf[size] = '\0';
  char *argv[MAX_ARGS + 2];
  int argc = 0;
  argv[argc++] = (char *)"ovl";
  for (size_t k = 0; k <= size && argc < MAX_ARGS + 1;) {
    argv[argc++] = buf + k;
    k += strlen(buf + k) + 1;
  }
  argv[argc] = NULL;

  int flag = 0, i = 7, ib = 3;
  int64_t l = 0, lb = 5, sz = 0, szb = 64, range[2] = {1, 1};
  double d = 0;
  const char *str = NULL, *choice = "summa";
  int64_t lv[8] = {1, 2, 4};
  ovl_opt_list list = {lv, 8, 3};
  const ovl_opt opts[] = {
      {"flag", 'f', OVL_OPT_FLAG, &flag, NULL, "a flag", NULL, 0, -1},
      {"int", 'i', OVL_OPT_INT, &i, "I", "an int", NULL, 0, -1},
      {"bint", 'b', OVL_OPT_INT, &ib, "I", "a bounded int", NULL, 1, 100},
      {"i64", 0, OVL_OPT_I64, &l, "L", "an int64", NULL, 0, -1},
      {"bi64", 'L', OVL_OPT_I64, &lb, "L", "a bounded int64", NULL, 0, INT64_MAX},
      {"size", 's', OVL_OPT_SIZE, &sz, "S", "a size", NULL, 0, -1},
      {"bsize", 'n', OVL_OPT_SIZE, &szb, "S", "a bounded size", NULL, 1, (int64_t)1 << 40},
      {"range", 'm', OVL_OPT_RANGE, range, "MIN:MAX", "a range", NULL, 1, (int64_t)1 << 30},
      {"double", 'd', OVL_OPT_DOUBLE, &d, "X", "a double", NULL, 0, -1},
      {"string", 'S', OVL_OPT_STRING, &str, "T", "a string", NULL, 0, -1},
      {"algo", 'a', OVL_OPT_CHOICE, &choice, "A", "a choice", k_choices, 0, -1},
      {"list", 'l', OVL_OPT_LIST, &list, "LIST", "a bounded list", NULL, 1, 64},
      {NULL, 'x', OVL_OPT_INT, &i, "X", "short only", NULL, 0, 10},
  };
  const int nopts = (int)(sizeof opts / sizeof opts[0]);
  unsigned char given[sizeof opts / sizeof opts[0]];
  ovl_err rc = ovl_opts_parse(opts, nopts, argc, argv, 1, given);
  FUZZ_ASSERT(rc == OVL_OK || rc == OVL_ERR_ARG);
  if (rc == OVL_OK) {
    FUZZ_ASSERT(flag == 0 || flag == 1);
    FUZZ_ASSERT(ib >= 1 && ib <= 100);
    FUZZ_ASSERT(lb >= 0);
    FUZZ_ASSERT(sz >= 0 && szb >= 1 && szb <= ((int64_t)1 << 40));
    FUZZ_ASSERT(range[0] >= 1 && range[0] <= range[1] && range[1] <= ((int64_t)1 << 30));
    FUZZ_ASSERT(d == d);
    FUZZ_ASSERT(list.n >= 1 && list.n <= 8);
    for (int k = 0; k < list.n; k++) FUZZ_ASSERT(lv[k] >= 1 && lv[k] <= 64);
    int known = 0;
    for (const char *const *c = k_choices; *c; c++) known |= *c == choice;
    FUZZ_ASSERT(known);
    if (g_null == NULL) g_null = fopen("/dev/null", "w");
    if (g_null) ovl_opts_help(g_null, "usage: fuzz", opts, nopts);
  } else {
    /* a message names the option once: "option -s/--size: '1T' is not a
     * size", never "option -s/--size: option -s/--size: ..." (a message
     * formatted over itself) */
    const char *msg = ovl_errmsg();
    FUZZ_ASSERT(strlen(msg) > 0);
    if (strncmp(msg, "option ", 7) == 0) {
      const char *colon = strstr(msg, ": ");
      FUZZ_ASSERT(colon == NULL || strncmp(colon + 2, "option ", 7) != 0);
    }
  }
  /* the helpers on the first argument */
  if (argc > 1) {
    int64_t v = -1;
    if (ovl_parse_size(argv[1], &v) == OVL_OK) FUZZ_ASSERT(v >= 0);
    int64_t lst[4];
    int nl = -1;
    if (ovl_parse_list(argv[1], 0, 100, lst, 4, &nl) == OVL_OK) {
      FUZZ_ASSERT(nl >= 1 && nl <= 4);
      for (int k = 0; k < nl; k++) FUZZ_ASSERT(lst[k] >= 0 && lst[k] <= 100);
    } else {
      FUZZ_ASSERT(nl == -1);
    }
    int dims[3] = {0, 0, 0}, nd = 0;
    if (ovl_parse_dims(argv[1], dims, &nd) == OVL_OK) {
      FUZZ_ASSERT(nd >= 1 && nd <= 3);
      for (int k = 0; k < nd; k++) FUZZ_ASSERT(dims[k] > 0 && dims[k] <= (1 << 20));
    }
  }
  free(buf);
  return 0;
}
