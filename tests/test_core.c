/* core: error agreement, option parsing, sizes, statistics, block partition, integer roots, checked
 * products. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ovl/ovl.h"
#include "ovltest.h"

static void test_agree(void) {
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  /* only the last rank fails: every rank must get its code and message */
  ovl_err local = OVL_OK;
  if (rank == size - 1) local = ovl_err_set(OVL_ERR_SIZE, "rank %d says no", rank);
  ovl_err rc = ovl_err_agree(MPI_COMM_WORLD, local);
  char want[64];
  snprintf(want, sizeof want, "rank %d says no", size - 1);
  T_CHECK(rc == OVL_ERR_SIZE, "agreed code %s", ovl_err_name(rc));
  T_CHECK(strcmp(ovl_errmsg(), want) == 0, "agreed message '%s', want '%s'", ovl_errmsg(), want);
  /* the largest code wins; ties go to the lowest rank's message */
  local = ovl_err_set(rank % 2 ? OVL_ERR_IO : OVL_ERR_ARG, "from %d", rank);
  rc = ovl_err_agree(MPI_COMM_WORLD, local);
  T_CHECK(rc == (size > 1 ? OVL_ERR_IO : OVL_ERR_ARG), "max code %s", ovl_err_name(rc));
  T_CHECK(strcmp(ovl_errmsg(), size > 1 ? "from 1" : "from 0") == 0, "tie message '%s'", ovl_errmsg());
  rc = ovl_err_agree(MPI_COMM_WORLD, OVL_OK);
  T_CHECK(rc == OVL_OK, "all OK agreed as %s", ovl_err_name(rc));
  T_CHECK(ovl_err_agree(MPI_COMM_NULL, OVL_ERR_ARG) == OVL_ERR_ARG, "COMM_NULL passes the local code");
}

/* The --help text of an option table, into buf ("" when no temporary file). */
static void help_text(const ovl_opt *o, int n, char *buf, size_t cap) {
  buf[0] = '\0';
  FILE *f = tmpfile();
  T_CHECK(f != NULL, "tmpfile");
  if (!f) return;
  ovl_opts_help(f, "usage", o, n);
  rewind(f);
  size_t len = fread(buf, 1, cap - 1, f);
  buf[len] = '\0';
  fclose(f);
}

static void test_opts(void) {
  int iters = 10, flag = 0, full = 0;
  int64_t range[2] = {1, 1}, n = 0;
  double d = 0;
  const char *s = NULL, *c = "a";
  static const char *const choices[] = {"a", "bb", NULL};
  ovl_opt o[] = {
      {"iterations", 'i', OVL_OPT_INT, &iters, "I", "iters", NULL, 1, 100},
      {"message-size", 'm', OVL_OPT_RANGE, range, "MIN:MAX", "sizes", NULL, 0, 1 << 30},
      {"size", 'n', OVL_OPT_SIZE, &n, "N", "n", NULL, 0, -1},
      {"full", 'f', OVL_OPT_FLAG, &full, NULL, "full", NULL, 0, -1},
      {"json", 0, OVL_OPT_FLAG, &flag, NULL, "json", NULL, 0, -1},
      {"x", 'x', OVL_OPT_DOUBLE, &d, "X", "x", NULL, 0, -1},
      {"name", 0, OVL_OPT_STRING, &s, "S", "s", NULL, 0, -1},
      {"pick", 'p', OVL_OPT_CHOICE, &c, "C", "c", choices, 0, -1},
  };
  int no = (int)(sizeof o / sizeof o[0]);
  char *argv1[] = {"prog",   "-i", "7",   "-m",     "4K:1M", "--size=64M", "-f",
                   "--json", "-x", "2.5", "--name", "foo",   "-pbb"};
  unsigned char given[8];
  T_OK(ovl_opts_parse(o, no, 13, argv1, 1, given));
  T_CHECK(iters == 7, "iters %d", iters);
  T_CHECK(range[0] == 4096 && range[1] == 1048576, "range %lld:%lld", (long long)range[0], (long long)range[1]);
  T_CHECK(n == 64LL << 20, "size %lld", (long long)n);
  T_CHECK(full == 1 && flag == 1 && d == 2.5 && strcmp(s, "foo") == 0 && strcmp(c, "bb") == 0, "values");
  T_CHECK(given[0] && given[1] && given[7], "given flags");
  char *bad1[] = {"p", "-i", "0"};
  T_ERR(ovl_opts_parse(o, no, 3, bad1, 1, NULL), OVL_ERR_ARG);
  T_CHECK(strstr(ovl_errmsg(), "outside") != NULL, "bound message: %s", ovl_errmsg());
  char *bad2[] = {"p", "--nope"};
  T_ERR(ovl_opts_parse(o, no, 2, bad2, 1, NULL), OVL_ERR_ARG);
  char *bad3[] = {"p", "-i"};
  T_ERR(ovl_opts_parse(o, no, 2, bad3, 1, NULL), OVL_ERR_ARG);
  char *bad4[] = {"p", "-m", "8:4"};
  T_ERR(ovl_opts_parse(o, no, 3, bad4, 1, NULL), OVL_ERR_ARG);
  char *bad5[] = {"p", "--pick", "zz"};
  T_ERR(ovl_opts_parse(o, no, 3, bad5, 1, NULL), OVL_ERR_ARG);
  char *bad6[] = {"p", "-i", "12abc"};
  T_ERR(ovl_opts_parse(o, no, 3, bad6, 1, NULL), OVL_ERR_ARG);
  char *bad7[] = {"p", "stray"};
  T_ERR(ovl_opts_parse(o, no, 2, bad7, 1, NULL), OVL_ERR_ARG);
  char *bad8[] = {"p", "--json=1"};
  T_ERR(ovl_opts_parse(o, no, 2, bad8, 1, NULL), OVL_ERR_ARG);
  char *bad9[] = {"p", "--size", "-5"};
  T_ERR(ovl_opts_parse(o, no, 3, bad9, 1, NULL), OVL_ERR_ARG);
  int64_t v;
  T_OK(ovl_parse_size("8KiB", &v));
  T_CHECK(v == 8192, "8KiB = %lld", (long long)v);
  T_ERR(ovl_parse_size("99999999999G", &v), OVL_ERR_ARG);
  int dims[3], nd;
  T_OK(ovl_parse_dims("2x3x4", dims, &nd));
  T_CHECK(nd == 3 && dims[0] == 2 && dims[1] == 3 && dims[2] == 4, "dims");
  T_ERR(ovl_parse_dims("2x", dims, &nd), OVL_ERR_ARG);
  T_ERR(ovl_parse_dims("0x2", dims, &nd), OVL_ERR_ARG);
  T_ERR(ovl_parse_dims("2x2x2x2", dims, &nd), OVL_ERR_ARG);

  /* an alias (help NULL): parsed under its own name, not listed by --help; a default stated in the help
   * text is not repeated as [default: X] */
  {
    int al = 0, nd2 = 4;
    const ovl_opt oa[] = {
        {"algo", 'a', OVL_OPT_INT, &al, "A", "the algorithm", NULL, 0, 9},
        {"alg", 0, OVL_OPT_INT, &al, "A", NULL, NULL, 0, 9},
        {"ndup", 'd', OVL_OPT_INT, &nd2, "N", "lanes (default: 4)", NULL, 1, 64},
    };
    char *av[] = {"prog", "--alg", "3"};
    T_OK(ovl_opts_parse(oa, 3, 3, av, 1, NULL));
    T_CHECK(al == 3, "alias --alg sets the value: %d", al);
    char buf[1024];
    help_text(oa, 3, buf, sizeof buf);
    T_CHECK(strstr(buf, "-a, --algo A") != NULL, "help lists --algo: %s", buf);
    T_CHECK(strstr(buf, "--alg ") == NULL, "help leaves the alias out: %s", buf);
    T_CHECK(strstr(buf, "(default: 4)") != NULL && strstr(buf, "[default: 4]") == NULL, "one default: %s", buf);
  }
}

/* OVL_OPT_LIST and ovl_parse_list: values, sizes, ranges; every bad input refused with the
 * list left as it was */
static void test_opts_list(void) {
  int64_t v[4] = {1, 2, 4, 0}, big[8];
  ovl_opt_list l = {v, 4, 3};
  const ovl_opt o[] = {{"ndup", 'd', OVL_OPT_LIST, &l, NULL, "lanes", NULL, 1, 64}};
  char *ok1[] = {"p", "-d", "1-3,8"};
  T_OK(ovl_opts_parse(o, 1, 3, ok1, 1, NULL));
  T_CHECK(l.n == 4 && v[0] == 1 && v[1] == 2 && v[2] == 3 && v[3] == 8, "1-3,8 -> n %d", l.n);
  char *ok2[] = {"p", "--ndup=6"};
  T_OK(ovl_opts_parse(o, 1, 2, ok2, 1, NULL));
  T_CHECK(l.n == 1 && v[0] == 6, "6 -> n %d v %lld", l.n, (long long)v[0]);
  const char *bad[] = {"",          ",",   "1,,2", "1,2,", ",1",  "0",  "65",
                       "1,x",       "3-1", "1-",   "-2",   "1-5", "2K", "99999999999999999999",
                       "1,2,3,4,5", "1--2"};
  const char *why[] = {"empty",   "empty",      "item 2 is empty", "trailing", "item 1 is empty", "outside",
                       "outside", "not a size", "descends",        "",         "negative",        "more than 4",
                       "outside", "",           "more than 4",     ""};
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
    char *av[] = {"p", "-d", (char *)bad[k]};
    T_ERR(ovl_opts_parse(o, 1, 3, av, 1, NULL), OVL_ERR_ARG);
    T_CHECK(strstr(ovl_errmsg(), "-d/--ndup") != NULL && strstr(ovl_errmsg(), why[k]) != NULL, "'%s': %s", bad[k],
            ovl_errmsg());
    T_CHECK(l.n == 1 && v[0] == 6, "'%s' left the list as it was (n %d)", bad[k], l.n);
  }
  /* sizes with suffixes, no bounds; an overflowing size; counting without out */
  int n = -1;
  T_OK(ovl_parse_list("4K,1M-1M,3", 0, -1, big, 8, &n));
  T_CHECK(n == 3 && big[0] == 4096 && big[1] == 1048576 && big[2] == 3, "sizes n %d", n);
  T_ERR(ovl_parse_list("1,16G000", 0, -1, big, 8, &n), OVL_ERR_ARG);
  T_ERR(ovl_parse_list("99999999999G", 0, -1, big, 8, &n), OVL_ERR_ARG);
  T_CHECK(strstr(ovl_errmsg(), "too large") != NULL, "overflow: %s", ovl_errmsg());
  T_ERR(ovl_parse_list("0-9223372036854775807", 0, -1, big, 8, &n), OVL_ERR_ARG);
  T_CHECK(strstr(ovl_errmsg(), "more than 8") != NULL, "huge range: %s", ovl_errmsg());
  T_OK(ovl_parse_list("1-6", 1, 6, NULL, 6, &n));
  T_CHECK(n == 6, "count only: %d", n);
  /* --help names the type, its capacity and the default list */
  char buf[512];
  help_text(o, 1, buf, sizeof buf);
  T_CHECK(strstr(buf, "-d, --ndup LIST") != NULL && strstr(buf, "at most 4 values") != NULL &&
              strstr(buf, "[default: 6]") != NULL,
          "help: %s", buf);
  l.n = 3, v[0] = 1, v[1] = 2, v[2] = 4;
  help_text(o, 1, buf, sizeof buf);
  T_CHECK(strstr(buf, "[default: 1,2,4]") != NULL, "help default list: %s", buf);
}

static void test_blocks_stats(void) {
  /* the partition covers [0, n) exactly, sizes differ by <= 1, owner agrees */
  int64_t ns[] = {0, 1, 2, 7, 13, 100, 101};
  int ps[] = {1, 2, 3, 4, 8};
  for (size_t a = 0; a < sizeof ns / sizeof ns[0]; a++)
    for (size_t b = 0; b < sizeof ps / sizeof ps[0]; b++) {
      int64_t n = ns[a], next = 0;
      int p = ps[b];
      for (int i = 0; i < p; i++) {
        T_CHECK(ovl_block_off(n, p, i) == next, "n=%lld p=%d i=%d offset", (long long)n, p, i);
        int64_t len = ovl_block_len(n, p, i);
        T_CHECK(len == n / p || len == n / p + 1, "balanced");
        for (int64_t g = next; g < next + len; g++)
          T_CHECK(ovl_block_owner(n, p, g) == i, "owner of %lld", (long long)g);
        next += len;
      }
      T_CHECK(next == n, "covers");
    }
  double x[] = {5, 1, 4, 2, 3};
  ovl_stats s = ovl_stats_of(x, 5);
  T_CHECK(s.min == 1 && s.max == 5 && s.median == 3 && s.mean == 3, "stats odd");
  s = ovl_stats_of(x, 4);
  T_CHECK(s.median == 3.0, "stats even median %g", s.median);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  double t[2] = {(double)rank, 10.0 - rank};
  T_OK(ovl_stats_max_over_ranks(MPI_COMM_WORLD, t, 2, &s));
  int size;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  T_CHECK(t[0] == size - 1 && t[1] == 10.0, "max over ranks");
  T_CHECK(strcmp(ovl_err_name(OVL_ERR_GRID), "OVL_ERR_GRID") == 0, "err names");
  void *p = NULL;
  T_ERR(ovl_malloc((size_t)1 << 62, &p), OVL_ERR_NOMEM);
  T_CHECK(p == NULL, "failed malloc leaves NULL");
  T_OK(ovl_malloc(0, &p));
  T_CHECK(p != NULL, "malloc(0) is valid");
  ovl_free(&p);
  T_CHECK(p == NULL, "free nulls");
}

/* ovl_isqrt / ovl_icbrt against their definition: s^e <= x < (s+1)^e. */
static int root_ok(int x, int s, int e) {
  if (x < 1) return s == 0;
  long long a = s, b = (long long)s + 1;
  long long pa = e == 2 ? a * a : a * a * a, pb = e == 2 ? b * b : b * b * b;
  return s >= 1 && pa <= x && pb > x;
}

static void test_iroots(void) {
  int bad2 = 0, bad3 = 0;
  for (int x = -3; x <= 200000; x++) {
    bad2 += !root_ok(x, ovl_isqrt(x), 2);
    bad3 += !root_ok(x, ovl_icbrt(x), 3);
  }
  T_CHECK(bad2 == 0 && bad3 == 0, "integer roots wrong for %d (sqrt) and %d (cbrt) x in [-3, 200000]", bad2, bad3);
  /* around every square and cube that fits in an int, and at the ends */
  for (long long s = 1; s * s <= INT_MAX; s += s < 100 ? 1 : 97) {
    int sq = (int)(s * s);
    T_CHECK(ovl_isqrt(sq) == (int)s && ovl_isqrt(sq - 1) == (int)s - 1, "isqrt around %d", sq);
  }
  for (long long s = 1; s * s * s <= INT_MAX; s++) {
    int cu = (int)(s * s * s);
    T_CHECK(ovl_icbrt(cu) == (int)s && ovl_icbrt(cu - 1) == (int)s - 1, "icbrt around %d", cu);
  }
  T_CHECK(ovl_isqrt(INT_MAX) == 46340 && root_ok(INT_MAX, ovl_isqrt(INT_MAX), 2), "isqrt(INT_MAX) = %d",
          ovl_isqrt(INT_MAX));
  T_CHECK(ovl_icbrt(INT_MAX) == 1290 && root_ok(INT_MAX, ovl_icbrt(INT_MAX), 3), "icbrt(INT_MAX) = %d",
          ovl_icbrt(INT_MAX));
  T_CHECK(ovl_isqrt(INT_MIN) == 0 && ovl_icbrt(INT_MIN) == 0 && ovl_isqrt(0) == 0 && ovl_icbrt(0) == 0,
          "roots of x < 1 are 0");
  T_CHECK(ovl_isqrt(8) == 2 && ovl_isqrt(9) == 3 && ovl_icbrt(26) == 2 && ovl_icbrt(27) == 3, "small roots");
}

/* The back-end name table (comm layer) and its parser agree. */
static void test_backend_names(void) {
  int n = 0;
  for (; ovl_backend_names[n] != NULL && n < 16; n++) {
    ovl_backend b = OVL_BACKEND_MPI;
    T_OK(ovl_backend_parse(ovl_backend_names[n], &b));
    T_CHECK((int)b == n && strcmp(ovl_backend_name(b), ovl_backend_names[n]) == 0, "back end %d round trip", n);
  }
  T_CHECK(n == 2 && strcmp(ovl_backend_names[OVL_BACKEND_MPI], "mpi") == 0 &&
              strcmp(ovl_backend_names[OVL_BACKEND_OWN], "own") == 0,
          "back-end table {mpi, own, NULL}, got %d names", n);
  ovl_backend b = OVL_BACKEND_OWN;
  T_ERR(ovl_backend_parse("shm", &b), OVL_ERR_ARG);
  T_CHECK(strstr(ovl_errmsg(), "(mpi or own)") != NULL, "parse error names the choices: %s", ovl_errmsg());
  T_CHECK(b == OVL_BACKEND_OWN, "failed parse leaves the output");
}

/* Checked products: ovl_mul_i64 at the edges of int64, ovl_ranks_product
 * at the edge of int (the largest communicator). */
static void test_checked_products(void) {
  int64_t r = 42;
  T_CHECK(ovl_mul_i64(3037000499, 3037000499, &r) && r == 9223372030926249001LL, "3037000499^2 fits: %lld",
          (long long)r);
  r = 42;
  T_CHECK(!ovl_mul_i64(3037000500, 3037000500, &r) && r == 42, "3037000500^2 overflows, output untouched");
  T_CHECK(!ovl_mul_i64(INT64_MIN, -1, &r) && ovl_mul_i64(INT64_MIN, 1, &r) && r == INT64_MIN, "INT64_MIN x -1");
  T_CHECK(ovl_mul_i64(-4, 5, &r) && r == -20 && ovl_mul_i64(0, INT64_MAX, &r) && r == 0, "signs and zero");
  int n = -1;
  const int fits[3] = {1290, 1290, 1290}, edge[2] = {46341, 46340}, wide[2] = {65536, 65536};
  T_OK(ovl_ranks_product(fits, 3, "grid", &n));
  T_CHECK(n == 1290 * 1290 * 1290, "1290^3 = %d", n);
  T_OK(ovl_ranks_product(edge, 2, "grid", &n));
  T_CHECK(n == 2147441940, "46341 x 46340 = %d", n);
  n = -1;
  T_ERR(ovl_ranks_product(wide, 2, "--grid", &n), OVL_ERR_ARG);
  T_CHECK(n == -1 && strstr(ovl_errmsg(), "--grid 65536 x 65536: the product 4294967296 exceeds 2147483647") != NULL,
          "65536^2: %s", ovl_errmsg());
  const int huge[3] = {INT_MAX, INT_MAX, INT_MAX}, neg[2] = {4, -2}, one[1] = {INT_MAX};
  T_ERR(ovl_ranks_product(huge, 3, "grid", &n), OVL_ERR_ARG); /* beyond int64 too */
  T_CHECK(strstr(ovl_errmsg(), "the product about ") != NULL, "INT_MAX^3: %s", ovl_errmsg());
  T_ERR(ovl_ranks_product(neg, 2, "groups", &n), OVL_ERR_ARG);
  T_CHECK(strstr(ovl_errmsg(), "groups 4 x -2: dimensions must be >= 0") != NULL, "negative: %s", ovl_errmsg());
  T_OK(ovl_ranks_product(one, 1, "grid", &n));
  T_CHECK(n == INT_MAX, "one dimension");
  T_ERR(ovl_ranks_product(one, 0, "grid", &n), OVL_ERR_ARG);
}

/* ovl_err_agree_same: values that differ from rank 0's are OVL_ERR_ARG on
 * every rank, named, before any local error. */
static void test_agree_same(void) {
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  static const char *const names[] = {"n", "=method"};
  int64_t v[2] = {12, 777};
  T_OK(ovl_err_agree_same(MPI_COMM_WORLD, OVL_OK, v, names, 2));
  ovl_err local = rank == 0 ? ovl_err_set(OVL_ERR_IO, "rank 0 cannot read") : OVL_OK;
  T_ERR(ovl_err_agree_same(MPI_COMM_WORLD, local, v, names, 2), OVL_ERR_IO); /* the same values: local's verdict */
  T_CHECK(strcmp(ovl_errmsg(), "rank 0 cannot read") == 0, "local message: %s", ovl_errmsg());
  T_CHECK(ovl_err_agree_same(MPI_COMM_NULL, OVL_ERR_SIZE, v, names, 2) == OVL_ERR_SIZE, "COMM_NULL: local");
  if (size < 2) return;
  v[0] = rank == size - 1 ? 13 : 12;
  local = rank == 0 ? ovl_err_set(OVL_ERR_IO, "rank 0 cannot read") : OVL_OK;
  T_ERR(ovl_err_agree_same(MPI_COMM_WORLD, local, v, names, 2), OVL_ERR_ARG);
  char want[96];
  snprintf(want, sizeof want, "n = 13 on rank %d but 12 on rank 0 (every rank must pass the same)", size - 1);
  T_CHECK(strcmp(ovl_errmsg(), want) == 0, "message '%s', want '%s'", ovl_errmsg(), want);
  v[0] = 12, v[1] = rank == 1 ? 778 : 777;
  T_ERR(ovl_err_agree_same(MPI_COMM_WORLD, OVL_OK, v, names, 2), OVL_ERR_ARG);
  T_CHECK(strcmp(ovl_errmsg(), "method differs between rank 1 and rank 0 (every rank must pass the same)") == 0,
          "string: %s", ovl_errmsg());
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  test_agree();
  test_opts();
  test_opts_list();
  test_blocks_stats();
  test_iroots();
  test_backend_names();
  test_checked_products();
  test_agree_same();
  int rc = t_finish("test_core");
  MPI_Finalize();
  return rc;
}
