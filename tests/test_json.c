/* The JSON layer (src/core/json.c), result records (ovl/record.h) and the
 * tune database (ovl/tunedb.h). No MPI: the program runs without mpiexec
 * and never calls MPI_Init. usage: test_json [SCRATCH_DIR] */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ovl/json.h"
#include "ovl/record.h"
#include "ovl/tunedb.h"

static int g_errors = 0, g_checks = 0;
static char g_dir[512];

static void fail_(int line, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail_(int line, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "FAIL test_json.c:%d: ", line);
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, " [last error: %s]\n", ovl_errmsg());
  va_end(ap);
  g_errors++;
}

#define CHECK(cond, ...)                                                                                               \
  do {                                                                                                                 \
    g_checks++;                                                                                                        \
    if (!(cond)) fail_(__LINE__, __VA_ARGS__);                                                                         \
  } while (0)
/* call returns code, and the message holds every one of the NULL-terminated words */
#define EXPECT(call, code, ...) expect_(__LINE__, #call, (call), (code), __VA_ARGS__, (const char *)NULL)

static void expect_(int line, const char *what, ovl_err got, ovl_err want, ...) {
  g_checks++;
  if (got != want) {
    fail_(line, "%s returned %s, expected %s", what, ovl_err_name(got), ovl_err_name(want));
    return;
  }
  va_list ap;
  va_start(ap, want);
  for (const char *w = va_arg(ap, const char *); w; w = va_arg(ap, const char *))
    if (!strstr(ovl_errmsg(), w)) fail_(line, "%s: the message lacks '%s'", what, w);
  va_end(ap);
}

static const char *path_of(const char *name) {
  static char buf[4][1024];
  static int k = 0;
  k = (k + 1) % 4;
  snprintf(buf[k], sizeof buf[k], "%s/%s", g_dir, name);
  return buf[k];
}

static void put(const char *name, const char *text) {
  FILE *f = fopen(path_of(name), "w");
  CHECK(f != NULL, "cannot write %s", path_of(name));
  if (!f) return;
  fputs(text, f);
  fclose(f);
}

static char *slurp(const char *name) {
  static char buf[65536];
  buf[0] = '\0';
  FILE *f = fopen(path_of(name), "r");
  if (!f) return buf;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  buf[n] = '\0';
  fclose(f);
  return buf;
}

static int count_lines(const char *s) {
  int n = 0;
  for (; *s; s++) n += *s == '\n';
  return n;
}

/* ---- parsing and getters ------------------------------------------------------------ */

static void test_parse(void) {
  ovl_json d;
  const char *good = " {\"a\": 1.5, \"i\": -42, \"big\": 9007199254740992, \"s\": \"x\\\"y\\u00e9\", \"t\": true,"
                     " \"z\": null, \"v\": [1, 2e3, -0.5], \"o\": {\"k\": 3.0}} \n";
  EXPECT(ovl_json_parse(good, strlen(good), "test file", "good.json", &d), OVL_OK, "");
  double x = 0;
  int64_t i = 0;
  char s[16];
  int b = 0, cnt = 0;
  double v[4];
  EXPECT(ovl_json_root_object(&d, ""), OVL_OK, "");
  EXPECT(ovl_json_num(&d, d.root, "a", &x), OVL_OK, "");
  CHECK(x == 1.5, "a = %g", x);
  EXPECT(ovl_json_int(&d, d.root, "i", -100, 100, &i), OVL_OK, "");
  CHECK(i == -42, "i = %lld", (long long)i);
  EXPECT(ovl_json_int(&d, d.root, "big", 0, INT64_MAX, &i), OVL_OK, "");
  CHECK(i == OVL_JSON_INT_MAX, "big = %lld", (long long)i);
  EXPECT(ovl_json_str(&d, d.root, "s", s, sizeof s), OVL_OK, "");
  CHECK(!strcmp(s, "x\"y\xc3\xa9"), "s = '%s'", s);
  EXPECT(ovl_json_bool(&d, d.root, "t", &b), OVL_OK, "");
  CHECK(b == 1, "t = %d", b);
  EXPECT(ovl_json_nums(&d, d.root, "v", v, 4, &cnt), OVL_OK, "");
  CHECK(cnt == 3 && v[1] == 2000 && v[2] == -0.5, "v: %d numbers", cnt);
  const cJSON *o = ovl_json_find(d.root, "o", NULL);
  EXPECT(ovl_json_int(&d, o, "k", 0, 10, &i), OVL_OK, "");
  CHECK(i == 3, "o.k = %lld", (long long)i);
  /* optional: absent or null gives the default */
  EXPECT(ovl_json_num_opt(&d, d.root, "z", -7, &x), OVL_OK, "");
  CHECK(x == -7, "null -> default, got %g", x);
  EXPECT(ovl_json_int_opt(&d, d.root, "nope", 0, 9, 5, &i), OVL_OK, "");
  CHECK(i == 5, "absent -> default, got %lld", (long long)i);
  EXPECT(ovl_json_str_opt(&d, d.root, "nope", "dflt", s, sizeof s), OVL_OK, "");
  CHECK(!strcmp(s, "dflt"), "absent string -> '%s'", s);
  EXPECT(ovl_json_bool_opt(&d, d.root, "nope", 1, &b), OVL_OK, "");
  CHECK(b == 1, "absent bool -> %d", b);
  /* errors name the file and the key */
  EXPECT(ovl_json_num(&d, d.root, "nope", &x), OVL_ERR_FORMAT, "test file 'good.json'", "\"nope\"", "absent");
  EXPECT(ovl_json_num(&d, d.root, "s", &x), OVL_ERR_FORMAT, "good.json", "\"s\"", "a finite number");
  EXPECT(ovl_json_num(&d, d.root, "z", &x), OVL_ERR_FORMAT, "\"z\"", "got null");
  EXPECT(ovl_json_int(&d, d.root, "a", -100, 100, &i), OVL_ERR_FORMAT, "\"a\"", "an integer in [-100, 100]", "1.5");
  EXPECT(ovl_json_int(&d, d.root, "i", 0, 100, &i), OVL_ERR_FORMAT, "\"i\"", "got -42");
  EXPECT(ovl_json_int_opt(&d, d.root, "s", 0, 9, 5, &i), OVL_ERR_FORMAT, "\"s\"");
  EXPECT(ovl_json_str(&d, d.root, "a", s, sizeof s), OVL_ERR_FORMAT, "\"a\"", "a string");
  EXPECT(ovl_json_str(&d, d.root, "s", s, 3), OVL_ERR_FORMAT, "\"s\"", "at most 2 characters");
  EXPECT(ovl_json_bool(&d, d.root, "i", &b), OVL_ERR_FORMAT, "\"i\"", "true or false");
  EXPECT(ovl_json_nums(&d, d.root, "v", v, 2, &cnt), OVL_ERR_FORMAT, "\"v\"", "at most 2");
  EXPECT(ovl_json_nums(&d, d.root, "o", v, 4, &cnt), OVL_ERR_FORMAT, "\"o\"", "an array");
  static const char *const keys[] = {"a", "i", "big", "s", "t", "z", "v", NULL};
  EXPECT(ovl_json_only_keys(&d, d.root, keys), OVL_ERR_FORMAT, "unknown key \"o\"");
  snprintf(d.where, sizeof d.where, "entry 3: ");
  EXPECT(ovl_json_num(&d, d.root, "nope", &x), OVL_ERR_FORMAT, "good.json': entry 3: \"nope\"");
  ovl_json_free(&d);
  CHECK(d.root == NULL, "free nulls the root");
  ovl_json_free(&d); /* twice is fine */

  /* a key twice: the getter refuses it */
  const char *dup = "{\"n\": 1, \"n\": 2}";
  EXPECT(ovl_json_parse(dup, strlen(dup), "dup file", "dup.json", &d), OVL_OK, "");
  EXPECT(ovl_json_int(&d, d.root, "n", 0, 9, &i), OVL_ERR_FORMAT, "dup.json", "\"n\" appears more than once");
  ovl_json_free(&d);
  /* integers: 3.0 and 3e0 are 3; 2^53 + 2 is refused (not exact in a double) */
  const char *ints = "{\"a\": 3.0, \"b\": 3e0, \"c\": 9007199254740994, \"d\": -0}";
  EXPECT(ovl_json_parse(ints, strlen(ints), "ints", "ints.json", &d), OVL_OK, "");
  EXPECT(ovl_json_int(&d, d.root, "a", 0, 9, &i), OVL_OK, "");
  CHECK(i == 3, "3.0 -> %lld", (long long)i);
  EXPECT(ovl_json_int(&d, d.root, "b", 0, 9, &i), OVL_OK, "");
  CHECK(i == 3, "3e0 -> %lld", (long long)i);
  EXPECT(ovl_json_int(&d, d.root, "c", 0, INT64_MAX, &i), OVL_ERR_FORMAT, "\"c\"");
  EXPECT(ovl_json_int(&d, d.root, "d", 0, 9, &i), OVL_OK, "");
  CHECK(i == 0, "-0 -> %lld", (long long)i);
  ovl_json_free(&d);

  /* not JSON, or JSON RFC 8259 forbids and cJSON would take: FORMAT, naming the file and the place */
  static const struct {
    const char *text, *word;
  } bad[] = {{"", "end of text"},
             {"{\"a\": 1", "end of text"},
             {"{\"a\": 1,}", "line 1"},
             {"{\"a\": yes}", "found 'yes}'"},
             {"{\"a\": 1} x", "found 'x'"},
             {"{\"a\": 01}", "leading zero"},
             {"{\"a\": -01}", "leading zero"},
             {"{\"a\": 1.}", "decimal point"},
             {"{\"a\": 1.e5}", "decimal point"},
             {"{\"a\": \"x\ty\"}", "control character"},
             {"{\n\"a\": 1,\n\"b\": nan}", "line 3"},
             {"{'a': 1}", "after '{'"},
             {"[1, 2,]", "not valid JSON"}};
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
    EXPECT(ovl_json_parse(bad[k].text, strlen(bad[k].text), "bad file", "bad.json", &d), OVL_ERR_FORMAT,
           "bad file 'bad.json' is not valid JSON", bad[k].word);
    CHECK(d.root == NULL, "no tree after a failure (case %zu)", k);
  }
  const char nul[] = "{\"a\": 1}\0{\"b\": 2}";
  EXPECT(ovl_json_parse(nul, sizeof nul - 1, "bad file", "nul.json", &d), OVL_ERR_FORMAT, "NUL byte", "column 9");
  /* nesting within cJSON's limit parses; beyond it is an error, not a crash */
  char deep[3000];
  memset(deep, '[', 1500);
  memset(deep + 1500, ']', 1500);
  EXPECT(ovl_json_parse(deep, 3000, "deep", "deep.json", &d), OVL_ERR_FORMAT, "deep.json");
  EXPECT(ovl_json_parse(deep + 1000, 1000, "deep", "deep.json", &d), OVL_OK, "");
  ovl_json_free(&d);
  /* equality of values */
  const char *e1 = "{\"x\": [1, \"a\", null], \"y\": 0.1}", *e2 = "{\"y\": 1e-1, \"x\": [1.0, \"a\", null]}";
  ovl_json d1, d2;
  EXPECT(ovl_json_parse(e1, strlen(e1), "e", "e1", &d1), OVL_OK, "");
  EXPECT(ovl_json_parse(e2, strlen(e2), "e", "e2", &d2), OVL_OK, "");
  CHECK(ovl_json_equal(d1.root, d2.root), "equal values compare equal");
  CHECK(!ovl_json_equal(ovl_json_find(d1.root, "x", NULL), ovl_json_find(d1.root, "y", NULL)), "unequal values");
  char txt[12];
  ovl_json_text(ovl_json_find(d1.root, "x", NULL), txt, sizeof txt);
  CHECK(!strcmp(txt, "[1,\"a\",n..."), "text cut with '...': '%s'", txt);
  ovl_json_free(&d1);
  ovl_json_free(&d2);
}

static void test_load(void) {
  ovl_json d;
  put("ok.json", "{\"n\": 4}\n");
  EXPECT(ovl_json_load(path_of("ok.json"), "test file", 100, &d), OVL_OK, "");
  int64_t n = 0;
  EXPECT(ovl_json_int(&d, d.root, "n", 0, 9, &n), OVL_OK, "");
  CHECK(n == 4, "n = %lld", (long long)n);
  ovl_json_free(&d);
  EXPECT(ovl_json_load(path_of("ok.json"), "test file", 8, &d), OVL_ERR_FORMAT, "ok.json", "larger than 8 bytes");
  EXPECT(ovl_json_load(path_of("ok.json"), "test file", 9, &d), OVL_OK, ""); /* exactly the cap */
  ovl_json_free(&d);
  EXPECT(ovl_json_load(path_of("none.json"), "test file", 100, &d), OVL_ERR_IO, "test file", "none.json",
         "No such file");
  EXPECT(ovl_json_load(g_dir, "test file", 100, &d), OVL_ERR_IO, "not a regular file");
  const char *fifo = path_of("fifo.json");
  unlink(fifo);
  if (mkfifo(fifo, 0600) == 0) EXPECT(ovl_json_load(fifo, "test file", 100, &d), OVL_ERR_IO, "a FIFO");
  /* a file larger than the first buffer */
  size_t big = 200000;
  char *text = malloc(big + 1);
  CHECK(text != NULL, "malloc");
  if (text) {
    size_t k = 0;
    k += (size_t)sprintf(text, "{\"pad\": \"");
    while (k < big - 20) text[k++] = 'x';
    k += (size_t)sprintf(text + k, "\", \"n\": 7}");
    put("big.json", text);
    EXPECT(ovl_json_load(path_of("big.json"), "test file", big, &d), OVL_OK, "");
    EXPECT(ovl_json_int(&d, d.root, "n", 0, 9, &n), OVL_OK, "");
    CHECK(n == 7, "n of the big file = %lld", (long long)n);
    ovl_json_free(&d);
    EXPECT(ovl_json_load(path_of("big.json"), "test file", k - 1, &d), OVL_ERR_FORMAT, "larger than");
    free(text);
  }
}

typedef struct lines_seen {
  int n, valid, last_lineno;
  int64_t sum;
  char where[256];
} lines_seen;

static ovl_err on_line(void *ctx, const ovl_json *d, const char *line, int lineno) {
  lines_seen *s = ctx;
  s->n++, s->last_lineno = lineno;
  int64_t v = 0;
  if (d->root && ovl_json_int(d, d->root, "v", 0, 100, &v) == OVL_OK) s->valid++, s->sum += v;
  if (lineno == 2) snprintf(s->where, sizeof s->where, "%s|%s", d->where, line);
  if (v == 99) return ovl_err_set(OVL_ERR_ARG, "stop at line %d", lineno);
  return OVL_OK;
}

static void test_lines(void) {
  put("lines.jsonl", "{\"v\": 1}\nnot json\n\n{\"v\": 2}\r\n{\"v\": \"x\"}\n{\"v\": 3}");
  lines_seen s = {0, 0, 0, 0, ""};
  EXPECT(ovl_json_lines_read(path_of("lines.jsonl"), "lines file", 1000, on_line, &s), OVL_OK, "");
  CHECK(s.n == 6 && s.valid == 3 && s.sum == 6 && s.last_lineno == 6, "lines %d, valid %d, sum %lld", s.n, s.valid,
        (long long)s.sum);
  CHECK(!strcmp(s.where, "line 2: |not json"), "where and text of line 2: '%s'", s.where);
  put("stop.jsonl", "{\"v\": 1}\n{\"v\": 99}\n{\"v\": 5}\n");
  lines_seen t = {0, 0, 0, 0, ""};
  EXPECT(ovl_json_lines_read(path_of("stop.jsonl"), "lines file", 1000, on_line, &t), OVL_ERR_ARG, "line 2");
  CHECK(t.n == 2, "reading stops at the callback's error (%d lines)", t.n);
  put("empty.jsonl", "");
  lines_seen u = {0, 0, 0, 0, ""};
  EXPECT(ovl_json_lines_read(path_of("empty.jsonl"), "lines file", 1000, on_line, &u), OVL_OK, "");
  CHECK(u.n == 0, "an empty file has no lines (%d)", u.n);
  EXPECT(ovl_json_lines_read(path_of("none.jsonl"), "lines file", 1000, on_line, &u), OVL_ERR_IO, "lines file",
         "none.jsonl");
  EXPECT(ovl_json_lines_read(path_of("lines.jsonl"), "lines file", 10, on_line, &u), OVL_ERR_FORMAT, "larger than");
}

/* ---- records ------------------------------------------------------------------------- */

static void test_record(void) {
  ovl_record *r = NULL;
  EXPECT(ovl_record_create("demo", &r), OVL_OK, "");
  EXPECT(ovl_record_set_num(r, "x", 0.1), OVL_OK, "");
  EXPECT(ovl_record_set_num(r, "nan", NAN), OVL_OK, "");
  EXPECT(ovl_record_set_num(r, "inf", -INFINITY), OVL_OK, "");
  EXPECT(ovl_record_set_int(r, "big", INT64_MAX), OVL_OK, "");
  EXPECT(ovl_record_set_int(r, "neg", -5), OVL_OK, "");
  EXPECT(ovl_record_set_str(r, "s", "a\"b\\c\nd\te\x01/\xc3\xa9"), OVL_OK, "");
  EXPECT(ovl_record_set_str(r, "nostr", NULL), OVL_OK, "");
  EXPECT(ovl_record_set_bool(r, "yes", 7), OVL_OK, "");
  EXPECT(ovl_record_set_bool(r, "no", 0), OVL_OK, "");
  EXPECT(ovl_record_set_null(r, "relerr"), OVL_OK, "");
  double v[3] = {1, NAN, 2.5};
  EXPECT(ovl_record_set_nums(r, "v", v, 3), OVL_OK, "");
  EXPECT(ovl_record_set_nums(r, "empty", NULL, 0), OVL_OK, "");
  ovl_record *sub = NULL;
  EXPECT(ovl_record_create(NULL, &sub), OVL_OK, "");
  EXPECT(ovl_record_set_int(sub, "k", 1), OVL_OK, "");
  EXPECT(ovl_record_set_record(r, "sub", &sub), OVL_OK, "");
  CHECK(sub == NULL, "a nested record moves into its parent");
  for (int k = 0; k < 2; k++) {
    EXPECT(ovl_record_create(NULL, &sub), OVL_OK, "");
    EXPECT(ovl_record_set_int(sub, "i", k), OVL_OK, "");
    EXPECT(ovl_record_append_record(r, "list", &sub), OVL_OK, "");
  }
  EXPECT(ovl_record_set_num(r, "x", 2), OVL_OK, ""); /* replaced in place */
  EXPECT(ovl_record_set_int(r, "type", 3), OVL_ERR_ARG, "\"type\"");
  EXPECT(ovl_record_set_str(r, "schema", "2"), OVL_ERR_ARG, "\"schema\"");
  EXPECT(ovl_record_create(NULL, &sub), OVL_OK, "");
  EXPECT(ovl_record_append_record(r, "x", &sub), OVL_ERR_ARG, "not an array");
  CHECK(sub == NULL, "the appended record is freed on error");
  EXPECT(ovl_record_set_num(NULL, "x", 1), OVL_ERR_ARG, "");
  EXPECT(ovl_record_set_num(r, NULL, 1), OVL_ERR_ARG, "");
  EXPECT(ovl_record_create("", &sub), OVL_ERR_ARG, "empty");
  char *text = NULL;
  EXPECT(ovl_record_text(r, &text), OVL_OK, "");
  const char *want =
      "{\"type\":\"demo\",\"schema\":1,\"x\":2,\"nan\":null,\"inf\":null,\"big\":9223372036854775807,"
      "\"neg\":-5,\"s\":\"a\\\"b\\\\c\\nd\\te\\u0001/\xc3\xa9\",\"nostr\":null,\"yes\":true,\"no\":false,"
      "\"relerr\":null,\"v\":[1,null,2.5],\"empty\":[],\"sub\":{\"k\":1},\"list\":[{\"i\":0},{\"i\":1}]}";
  CHECK(text && !strcmp(text, want), "record text:\n  got  %s\n  want %s", text ? text : "(null)", want);
  /* what the record writes, the reader reads back */
  ovl_json d;
  EXPECT(ovl_json_parse(text, strlen(text), "record", "text", &d), OVL_OK, "");
  char s[64];
  EXPECT(ovl_json_str(&d, d.root, "s", s, sizeof s), OVL_OK, "");
  CHECK(!strcmp(s, "a\"b\\c\nd\te\x01/\xc3\xa9"), "string round trip: '%s'", s);
  double x = 0;
  EXPECT(ovl_json_num_opt(&d, d.root, "relerr", -1, &x), OVL_OK, "");
  CHECK(x == -1, "null reads as not measured");
  ovl_json_free(&d);
  ovl_free(&text);
  /* print: one line, '\n'-terminated; indented: several lines, the same value */
  FILE *f = fopen(path_of("rec.jsonl"), "w");
  CHECK(f != NULL, "open rec.jsonl");
  if (f) {
    EXPECT(ovl_record_print(r, f), OVL_OK, "");
    EXPECT(ovl_record_fprint(r, f, 1), OVL_OK, "");
    fclose(f);
    const char *all = slurp("rec.jsonl");
    CHECK(!strncmp(all, want, strlen(want)) && all[strlen(want)] == '\n', "print writes the text and a newline");
    CHECK(count_lines(all) > 10, "indented output spans lines (%d)", count_lines(all));
    const char *second = all + strlen(want) + 1;
    ovl_json a, b;
    EXPECT(ovl_json_parse(want, strlen(want), "r", "a", &a), OVL_OK, "");
    EXPECT(ovl_json_parse(second, strlen(second), "r", "b", &b), OVL_OK, "");
    CHECK(ovl_json_equal(a.root, b.root), "indented and compact print the same value");
    ovl_json_free(&a);
    ovl_json_free(&b);
  }
  EXPECT(ovl_record_print(r, NULL), OVL_ERR_ARG, "");
  FILE *full = fopen("/dev/full", "w");
  if (full) {
    setvbuf(full, NULL, _IONBF, 0);
    EXPECT(ovl_record_print(r, full), OVL_ERR_IO, "");
    fclose(full);
  }
  ovl_record_destroy(&r);
  CHECK(r == NULL, "destroy nulls the handle");
  ovl_record_destroy(&r);
  ovl_record_destroy(NULL);
}

/* ---- tune database ---------------------------------------------------------------------- */

static ovl_plan cfg(ovl_algo k, int64_t n, int P, int ndup) {
  ovl_plan c = ovl_plan_default(k, n, P);
  c.ndup = ndup;
  return c;
}

static void test_tunedb(void) {
  const char *db = path_of("tune.jsonl");
  unlink(db);
  ovl_plan out, c;
  int64_t nf = 0;
  int found = 1;
  /* a database that does not exist: lookups are IO errors naming it; a store creates it */
  EXPECT(ovl_tunedb_lookup(db, OVL_FAMILY_SSC, 576, 8, &out, &nf, &found), OVL_ERR_IO, "tune file", "tune.jsonl");
  CHECK(found == 0, "not found after an error");
  c = cfg(OVL_ALGO_SSC5, 576, 8, 4);
  EXPECT(ovl_tunedb_store(db, OVL_FAMILY_SSC, &c, 0.0125, "box"), OVL_OK, "");
  const char *t = slurp("tune.jsonl");
  CHECK(!strcmp(t, "{\"type\":\"tune\",\"schema\":1,\"family\":\"ssc\",\"n\":576,\"P\":8,\"algo\":\"alg5\",\"ndup\":4,"
                   "\"s\":0,\"c\":0,\"b\":256,\"G\":1,\"lookahead\":0,\"t_median\":0.0125,\"machine\":\"box\"}\n"),
        "the stored line: %s", t);
  EXPECT(ovl_tunedb_lookup(db, OVL_FAMILY_SSC, 576, 8, &out, &nf, &found), OVL_OK, "");
  CHECK(found && nf == 576 && out.algo == OVL_ALGO_SSC5 && out.ndup == 4 && out.n == 576 && out.P == 8,
        "exact lookup: found %d n %lld kernel %d ndup %d", found, (long long)nf, (int)out.algo, out.ndup);
  /* nearest within a factor of 2, n of the request in the result */
  c = cfg(OVL_ALGO_SSC4, 1000, 8, 2);
  EXPECT(ovl_tunedb_store(db, OVL_FAMILY_SSC, &c, 0.5, "box"), OVL_OK, "");
  EXPECT(ovl_tunedb_lookup(db, OVL_FAMILY_SSC, 700, 8, &out, &nf, &found), OVL_OK, "");
  CHECK(found && nf == 576 && out.n == 700 && out.algo == OVL_ALGO_SSC5, "700 -> 576 (found %d, n %lld)", found,
        (long long)nf);
  EXPECT(ovl_tunedb_lookup(db, OVL_FAMILY_SSC, 900, 8, &out, &nf, &found), OVL_OK, "");
  CHECK(found && nf == 1000 && out.n == 900 && out.algo == OVL_ALGO_SSC4 && out.ndup == 2, "900 -> 1000");
  EXPECT(ovl_tunedb_lookup(db, OVL_FAMILY_SSC, 2000, 8, &out, &nf, &found), OVL_OK, "");
  CHECK(found && nf == 1000, "2000 -> 1000 (a factor of 2 exactly)");
  nf = -5;
  EXPECT(ovl_tunedb_lookup(db, OVL_FAMILY_SSC, 2001, 8, &out, &nf, &found), OVL_OK, "");
  CHECK(!found && nf == -5, "2001: none within a factor of 2");
  EXPECT(ovl_tunedb_lookup(db, OVL_FAMILY_SSC, 287, 8, &out, &nf, &found), OVL_OK, "");
  CHECK(!found, "287: none within a factor of 2");
  EXPECT(ovl_tunedb_lookup(db, OVL_FAMILY_SSC, 576, 4, &out, &nf, &found), OVL_OK, "");
  CHECK(!found, "another P: none");
  EXPECT(ovl_tunedb_lookup(db, OVL_FAMILY_GEMM, 576, 8, &out, &nf, &found), OVL_OK, "");
  CHECK(!found, "another family: none");
  EXPECT(ovl_tunedb_lookup(db, OVL_FAMILY_SSC, 0, 8, &out, &nf, &found), OVL_OK, "");
  CHECK(!found, "n = 0: none");
  /* replace: same (family, n, P), one line, the new values; the others kept */
  c = cfg(OVL_ALGO_SSC6, 576, 8, 1);
  c.s = 2, c.c = 2;
  EXPECT(ovl_tunedb_store(db, OVL_FAMILY_SSC, &c, NAN, NULL), OVL_OK, "");
  t = slurp("tune.jsonl");
  CHECK(count_lines(t) == 2, "replace keeps one line per entry (%d lines)", count_lines(t));
  CHECK(strstr(t, "\"t_median\":null,\"machine\":null}") != NULL, "not measured -> null: %s", t);
  EXPECT(ovl_tunedb_lookup(db, OVL_FAMILY_SSC, 576, 8, &out, &nf, &found), OVL_OK, "");
  CHECK(found && out.algo == OVL_ALGO_SSC6 && out.s == 2 && out.c == 2 && out.ndup == 1, "the replaced entry");
  /* the same n and P in another family is another entry */
  c = cfg(OVL_ALGO_SUMMA, 576, 8, 2);
  c.b = 128, c.lookahead = 1;
  EXPECT(ovl_tunedb_store(db, OVL_FAMILY_GEMM, &c, 1e-3, "box"), OVL_OK, "");
  EXPECT(ovl_tunedb_lookup(db, OVL_FAMILY_GEMM, 600, 8, &out, &nf, &found), OVL_OK, "");
  CHECK(found && out.algo == OVL_ALGO_SUMMA && out.b == 128 && out.lookahead == 1 && out.ndup == 2, "gemm entry");
  CHECK(count_lines(slurp("tune.jsonl")) == 3, "three entries");

  /* old lines (before "type"/"schema"), malformed ones, other types: read or skipped, and kept by a store */
  const char *old = path_of("old.jsonl");
  put("old.jsonl",
      "{\"family\":\"ssc\",\"n\":576,\"P\":8,\"algo\":\"alg5\",\"ndup\":4,\"s\":0,\"c\":0,\"b\":256,\"G\":1,"
      "\"lookahead\":0,\"t_median\":1.2e-02,\"machine\":\"x\"}\n"
      "garbage line\n"
      "{\"family\":\"ssc\",\"n\":600,\"P\":8,\"kernel\":\"alg4\",\"ndup\":0,\"s\":0,\"c\":0,\"b\":256,\"G\":1,"
      "\"lookahead\":0}\n"
      "{\"family\":\"fft\",\"n\":600,\"P\":8,\"kernel\":\"alg4\",\"ndup\":1,\"s\":0,\"c\":0,\"b\":256,\"G\":1,"
      "\"lookahead\":0}\n"
      "{\"family\":\"ssc\",\"n\":600,\"P\":8,\"kernel\":\"alg9\",\"ndup\":1,\"s\":0,\"c\":0,\"b\":256,\"G\":1,"
      "\"lookahead\":0}\n"
      "{\"family\":\"ssc\",\"n\":600,\"P\":8,\"kernel\":\"alg4\",\"ndup\":1,\"s\":0,\"c\":0,\"b\":256,\"G\":1}\n"
      "{\"type\":\"note\",\"family\":\"ssc\",\"n\":600,\"P\":8,\"kernel\":\"alg4\",\"ndup\":1,\"s\":0,\"c\":0,\"b\":"
      "256,"
      "\"G\":1,\"lookahead\":0}\n"
      "{\"type\":\"tune\",\"schema\":2,\"family\":\"ssc\",\"n\":600,\"P\":8,\"kernel\":\"alg4\",\"ndup\":1,\"s\":0,"
      "\"c\":0,\"b\":256,\"G\":1,\"lookahead\":0}\n"
      "{\"family\": \"ssc\", \"n\": 560, \"P\": 8, \"kernel\": \"alg3\", \"ndup\": 1, \"s\": 0, \"c\": 0, \"b\": 256, "
      "\"G\": 1, \"lookahead\": 0}");
  EXPECT(ovl_tunedb_lookup(old, OVL_FAMILY_SSC, 600, 8, &out, &nf, &found), OVL_OK, "");
  CHECK(found && nf == 576 && out.algo == OVL_ALGO_SSC5 && out.ndup == 4,
        "an old line reads; bad ndup, family, kernel, a missing key, another type or schema are skipped (n %lld, "
        "kernel %d)",
        (long long)nf, (int)out.algo);
  EXPECT(ovl_tunedb_lookup(old, OVL_FAMILY_SSC, 560, 8, &out, &nf, &found), OVL_OK, "");
  CHECK(found && nf == 560 && out.algo == OVL_ALGO_SSC3, "spaces after ':' read too");
  /* ties: the first in the file wins */
  put("tie.jsonl",
      "{\"family\":\"gemm\",\"n\":50,\"P\":4,\"kernel\":\"summa\",\"ndup\":1,\"s\":0,\"c\":0,\"b\":64,\"G\":"
      "1,\"lookahead\":0}\n{\"family\":\"gemm\",\"n\":200,\"P\":4,\"kernel\":\"cannon\",\"ndup\":1,\"s\":0,"
      "\"c\":0,\"b\":64,\"G\":1,\"lookahead\":0}\n");
  EXPECT(ovl_tunedb_lookup(path_of("tie.jsonl"), OVL_FAMILY_GEMM, 100, 4, &out, &nf, &found), OVL_OK, "");
  CHECK(found && nf == 50 && out.algo == OVL_ALGO_SUMMA, "a tie goes to the first entry (n %lld)", (long long)nf);
  /* a store over the old file replaces the old entry of (ssc, 576, 8) and keeps every other line as it was */
  c = cfg(OVL_ALGO_SSC4, 576, 8, 3);
  EXPECT(ovl_tunedb_store(old, OVL_FAMILY_SSC, &c, 2.0, "y"), OVL_OK, "");
  t = slurp("old.jsonl");
  CHECK(count_lines(t) == 9 && strstr(t, "garbage line\n") && strstr(t, "\"kernel\":\"alg9\"") &&
            strstr(t, "\"type\":\"note\"") && !strstr(t, "\"kernel\":\"alg5\"") &&
            strstr(t, "\"lookahead\": 0}\n{\"type\":\"tune\""),
        "the store kept the other lines, ended the last one, replaced the entry:\n%s", t);
  EXPECT(ovl_tunedb_lookup(old, OVL_FAMILY_SSC, 576, 8, &out, &nf, &found), OVL_OK, "");
  CHECK(found && out.algo == OVL_ALGO_SSC4 && out.ndup == 3, "the new entry");
  CHECK(access(path_of("old.jsonl.tmp"), F_OK) != 0, "no temporary left");

  /* a file without a single tune entry is refused, never ignored */
  put("notes.jsonl", "{\"type\":\"note\"}\ngarbage line\n");
  EXPECT(ovl_tunedb_lookup(path_of("notes.jsonl"), OVL_FAMILY_GEMM, 100, 4, &out, &nf, &found), OVL_ERR_FORMAT,
         "notes.jsonl", "holds no tune entry");
  /* errors: a directory, a missing directory, bad entries */
  EXPECT(ovl_tunedb_lookup(g_dir, OVL_FAMILY_SSC, 576, 8, &out, &nf, &found), OVL_ERR_IO, "tune file",
         "not a regular file");
  EXPECT(ovl_tunedb_store(g_dir, OVL_FAMILY_SSC, &c, 1, "x"), OVL_ERR_IO, "tune file");
  EXPECT(ovl_tunedb_store(path_of("nodir/t.jsonl"), OVL_FAMILY_SSC, &c, 1, "x"), OVL_ERR_IO, "nodir");
  ovl_plan e = cfg(OVL_ALGO_SSC5, 576, 8, 0);
  EXPECT(ovl_tunedb_store(db, OVL_FAMILY_SSC, &e, 1, "x"), OVL_ERR_ARG, "ndup");
  e = cfg(OVL_ALGO_SSC5, 576, 0, 1);
  EXPECT(ovl_tunedb_store(db, OVL_FAMILY_SSC, &e, 1, "x"), OVL_ERR_ARG, "P");
  EXPECT(ovl_tunedb_store(db, (ovl_family)7, &c, 1, "x"), OVL_ERR_ARG, "family");
  CHECK(count_lines(slurp("tune.jsonl")) == 3, "a refused store leaves the file alone");
}

int main(int argc, char **argv) {
  snprintf(g_dir, sizeof g_dir, "%s", argc > 1 ? argv[1] : "test_json.d");
  mkdir(g_dir, 0777);
  test_parse();
  test_load();
  test_lines();
  test_record();
  test_tunedb();
  printf("test_json: %d checks, %d failures\n", g_checks, g_errors);
  return g_errors ? 1 : 0;
}
