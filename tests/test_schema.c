/* The plan schema without MPI: built with plain cc against src/schema alone
 * (no mpi.h on the include path: the `schema_nompi` test). Checks that every
 * family's and algorithm's printed plan parses back to the same plan, that
 * every knob's written value sets it again, and that auto plans round-trip.
 * With --markdown it prints the knob reference of docs/guides/cli.md instead
 * (scripts/gen_cli_doc.py); with --walk, the cases of the cross-entry knob
 * walk (tests/knob_walk_test.py). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ovl/schema.h"

static int g_fail, g_checks;
#define CHECK(cond, ...)                                                                                               \
  do {                                                                                                                 \
    g_checks++;                                                                                                        \
    if (!(cond)) {                                                                                                     \
      g_fail++;                                                                                                        \
      fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                                                             \
      fprintf(stderr, __VA_ARGS__);                                                                                    \
      fputc('\n', stderr);                                                                                             \
    }                                                                                                                  \
  } while (0)

static const char *type_name(ovl_knob_type t) {
  static const char *const names[] = {"name", "integer", "size", "shape", "on/off", "flag"};
  return names[t];
}

/* The knob reference: one row per knob of the table. */
static void markdown(void) {
  printf("| knob | short | key | type | default (");
  for (int f = 0; f < OVL_FAMILY_N; f++) printf("%s%s", f ? " / " : "", ovl_family_names[f]);
  printf(") | range or values | applies to |\n");
  printf("|---|---|---|---|---|---|---|\n");
  for (int k = 0; k < OVL_KNOB_N; k++) {
    const ovl_knob *r = &ovl_knobs[k];
    char def[128] = "", range[256] = "";
    for (int f = 0; f < OVL_FAMILY_N; f++) {
      int64_t d = r->def[f];
      char one[48];
      if (d == OVL_AUTO) snprintf(one, sizeof one, "auto");
      else if (r->type == OVL_KNOB_NAME) snprintf(one, sizeof one, "%s", ovl_knob_names(r->id, (ovl_family)f)[d]);
      else if (r->type == OVL_KNOB_ONOFF) snprintf(one, sizeof one, "%s", d ? "on" : "off");
      else snprintf(one, sizeof one, "%" PRId64, d);
      snprintf(def + strlen(def), sizeof def - strlen(def), "%s%s", f ? " / " : "", one);
    }
    if (r->type == OVL_KNOB_NAME) {
      for (int f = 0; f < (r->id == OVL_KNOB_ALGO ? OVL_FAMILY_N : 1); f++)
        for (const char *const *c = ovl_knob_names(r->id, (ovl_family)f); *c; c++)
          if (strcmp(*c, "auto") || f == OVL_FAMILY_N - 1 || r->id != OVL_KNOB_ALGO)
            snprintf(range + strlen(range), sizeof range - strlen(range), "%s`%s`", range[0] ? ", " : "", *c);
    } else if (r->type == OVL_KNOB_ONOFF) {
      snprintf(range, sizeof range, "`on`, `off`");
    } else if (r->type == OVL_KNOB_DIMS) {
      char mv[32];
      snprintf(mv, sizeof mv, "%s", r->metavar);
      for (char *x = mv; *x; x++) /* a bar would split the Markdown table's cell */
        if (*x == '|') *x = '/';
      snprintf(range, sizeof range, "`%s`, each in [%" PRId64 ", %" PRId64 "]", mv, r->min, r->max);
    } else {
      snprintf(range, sizeof range, "[%" PRId64 ", %" PRId64 "]", r->min, r->max);
    }
    char sh[8] = "";
    if (r->letter) snprintf(sh, sizeof sh, "`-%c`", r->letter);
    printf("| `--%s` | %s | `%s` | %s | %s | %s | %s |\n", r->name, sh, r->key, type_name(r->type), def, range,
           r->which);
  }
  printf("\nEvery knob is also a word of `OVL_OPTIONS` (`--ndup 4`) and a `key=value` of a printed plan, which\n"
         "`--plan \"...\"` reads back (`ovl gemm`, `ovl purify`). `auto` (or leaving a knob out\n"
         "under `--algo auto`) leaves it to the planner. Sources, first one wins: a library call's own value,\n"
         "the command line, `OVL_OPTIONS`, `--plan`, the tune file, the cost model, the default above.\n");
}

/* The knob walk: per family, one line per knob the family's entries offer:
 *   FAMILY KNOB ALGO ALGOS FRAGMENT -- WORDS...
 * WORDS are the option words giving the knob a valid value other than its
 * default, derived from the row: the first tuner candidate that is not the
 * default, else the first name (on/off value) that is neither auto nor the
 * default, a flag's word alone, each dimension at its minimum (PxQ on a
 * p x q grid, SxSxC otherwise), the minimum of a range. ALGO is the
 * algorithm to name beside it ("-" when none is needed): the family's first
 * one the knob applies to, when the knob needs one named or does not apply
 * to every algorithm of the family. ALGOS lists the algorithms it applies to
 * (comma-separated); FRAGMENT is how the printed plan shows the value
 * ("key=value", the algorithm itself for the algorithm knob, "-" when it is
 * not printed). */
static void walk(void) {
  for (int f = 0; f < OVL_FAMILY_N; f++) {
    for (int k = 0; k < OVL_KNOB_N; k++) {
      const ovl_knob *r = &ovl_knobs[k];
      ovl_algo first = OVL_ALGO_AUTO;
      char algos[128] = "";
      int all = 1;
      for (int a = 0; a < OVL_ALGO_N; a++) {
        if (ovl_algo_family((ovl_algo)a) != (ovl_family)f) continue;
        if (!ovl_knob_applies(r->id, (ovl_algo)a)) {
          all = 0;
          continue;
        }
        if (first == OVL_ALGO_AUTO) first = (ovl_algo)a;
        snprintf(algos + strlen(algos), sizeof algos - strlen(algos), "%s%s", algos[0] ? "," : "", ovl_algo_name(a));
      }
      if (first == OVL_ALGO_AUTO) continue; /* no algorithm of the family has it */
      int64_t d = ovl_knob_default(r->id, (ovl_family)f);
      char val[64] = "";
      for (int c = 0; c < r->ncand && !val[0]; c++)
        if (r->cand[c] != d) snprintf(val, sizeof val, "%" PRId64, r->cand[c]);
      if (!val[0] && (r->type == OVL_KNOB_NAME || r->type == OVL_KNOB_ONOFF)) {
        const char *const *names = r->type == OVL_KNOB_ONOFF ? r->names : ovl_knob_names(r->id, (ovl_family)f);
        for (int c = 0; names[c] && !val[0]; c++)
          if (strcmp(names[c], "auto") &&
              (r->type == OVL_KNOB_ONOFF ? (strcmp(names[c], "on") == 0) != (d != 0) : c != d))
            snprintf(val, sizeof val, "%s", names[c]);
      } else if (!val[0] && r->type == OVL_KNOB_DIMS) {
        int three = r->id == OVL_KNOB_GRID && ovl_algo_is_3d(first);
        snprintf(val, sizeof val, three ? "%" PRId64 "x%" PRId64 "x%" PRId64 : "%" PRId64 "x%" PRId64, r->min, r->min,
                 r->min);
      } else if (!val[0]) {
        snprintf(val, sizeof val, "%" PRId64, r->min);
      }
      /* the value as the printed plan shows it: set on a plan of the algorithm, written back */
      ovl_plan p = ovl_plan_default(first, 1000, 8);
      char frag[96] = "-", fv[64];
      if (ovl_knob_set(&p, r->id, (ovl_family)f, r->type == OVL_KNOB_FLAG ? "1" : val) == OVL_OK && r->printed) {
        ovl_knob_format(&p, r->id, fv, sizeof fv);
        if (r->id == OVL_KNOB_ALGO) snprintf(frag, sizeof frag, "%s", fv);
        else snprintf(frag, sizeof frag, "%s=%s", r->key, fv);
      }
      int name_algo = r->id != OVL_KNOB_ALGO && (r->named || !all);
      printf("%s %s %s %s %s -- --%s", ovl_family_name((ovl_family)f), r->name, name_algo ? ovl_algo_name(first) : "-",
             algos, frag, r->name);
      if (r->type != OVL_KNOB_FLAG) printf(" %s", val);
      printf("\n");
    }
  }
}

/* describe -> parse -> describe gives the same text and the same plan. */
static void round_trip(const ovl_plan *p, ovl_family f) {
  char a[512], b[512];
  ovl_plan_describe(p, a, sizeof a);
  ovl_plan q = ovl_plan_auto(f, p->n);
  ovl_err rc = ovl_plan_parse(a, f, &q);
  CHECK(rc == OVL_OK, "parse '%s': %s", a, ovl_errmsg());
  ovl_plan_describe(&q, b, sizeof b);
  CHECK(strcmp(a, b) == 0, "round trip: '%s' came back as '%s'", a, b);
  CHECK(p->algo == OVL_ALGO_AUTO || ovl_plan_same(p, &q), "'%s': not the same plan", a);
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "--markdown") == 0) {
    markdown();
    return 0;
  }
  if (argc > 1 && strcmp(argv[1], "--walk") == 0) {
    walk();
    return 0;
  }
  for (int f = 0; f < OVL_FAMILY_N; f++) {
    ovl_plan p = ovl_plan_auto((ovl_family)f, 1000);
    round_trip(&p, (ovl_family)f);
    for (int a = 0; a < OVL_ALGO_N; a++) {
      if (ovl_algo_family((ovl_algo)a) != (ovl_family)f) continue;
      p = ovl_plan_default((ovl_algo)a, 1000, 8);
      CHECK(p.ndup == ovl_knob_default_int(OVL_KNOB_NDUP, (ovl_family)f), "%s: ndup default", ovl_algo_name(p.algo));
      if (ovl_algo_is_3d(p.algo)) p.s = p.p = p.q = 2, p.c = 2;
      else p.p = 2, p.q = 4;
      round_trip(&p, (ovl_family)f);
      p.ndup = 3, p.b = 64, p.lookahead = 1, p.coll.backend = OVL_BACKEND_OWN, p.coll.bcast = OVL_BCAST_CHAIN;
      p.groups_i = 2, p.groups_j = 1, p.G = 2, p.outer = 128, p.arrival = 1;
      round_trip(&p, (ovl_family)f);
      /* every knob: its written value sets it again */
      for (int k = 0; k < OVL_KNOB_N; k++) {
        char v[64], w[64];
        ovl_plan q = ovl_plan_auto((ovl_family)f, 1000);
        q.algo = p.algo;
        ovl_knob_format(&p, (ovl_knob_id)k, v, sizeof v);
        CHECK(ovl_knob_set(&q, (ovl_knob_id)k, (ovl_family)f, v) == OVL_OK, "knob %s = %s: %s", ovl_knobs[k].name, v,
              ovl_errmsg());
        ovl_knob_format(&q, (ovl_knob_id)k, w, sizeof w);
        CHECK(strcmp(v, w) == 0, "%s: knob %s wrote %s, read back %s", ovl_algo_name(p.algo), ovl_knobs[k].name, v, w);
        CHECK(ovl_knob_find(ovl_knobs[k].name) == &ovl_knobs[k] && ovl_knob_find(ovl_knobs[k].key) == &ovl_knobs[k],
              "knob %s: found by name and key", ovl_knobs[k].name);
      }
    }
  }
  /* refusals name what is wrong */
  ovl_plan q = ovl_plan_auto(OVL_FAMILY_GEMM, 10);
  CHECK(ovl_plan_parse("alg5 ndup=2", OVL_FAMILY_GEMM, &q) == OVL_ERR_ARG && strstr(ovl_errmsg(), "alg5"),
        "another family's algorithm: %s", ovl_errmsg());
  CHECK(ovl_plan_parse("summa nosuch=2", OVL_FAMILY_GEMM, &q) == OVL_ERR_ARG && strstr(ovl_errmsg(), "nosuch"),
        "unknown key: %s", ovl_errmsg());
  CHECK(ovl_plan_parse("summa ndup=0", OVL_FAMILY_GEMM, &q) == OVL_ERR_ARG, "ndup 0 refused");
  CHECK(ovl_plan_parse("summa ndup=2", OVL_FAMILY_GEMM, &q) == OVL_OK && q.ndup == 2 && q.algo == OVL_ALGO_SUMMA,
        "summa ndup=2");
  CHECK(ovl_knob_default_int(OVL_KNOB_NDUP, OVL_FAMILY_SSC) == 4 &&
            ovl_knob_default(OVL_KNOB_BLOCK, OVL_FAMILY_GEMM) > 0,
        "defaults");
  printf("test_schema: %d checks, %d failed: %s\n", g_checks, g_fail, g_fail ? "FAIL" : "PASS");
  return g_fail ? 1 : 0;
}
