/* The plan schema without MPI: built with plain cc against src/schema alone
 * (no mpi.h on the include path: the `schema_nompi` test). Checks that every
 * family's and algorithm's printed plan parses back to the same plan, that
 * every knob's written value sets it again, and that auto plans round-trip.
 * With --markdown it prints the knob reference of docs/guides/cli.md instead
 * (scripts/gen_cli_doc.py). */
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
  printf("| knob | short | key | type | default (gemm / ssc / sq) | range or values | applies to |\n");
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
