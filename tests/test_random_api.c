/* Random arguments for the public functions (docs/lab/reliability.md, "Random
 * arguments"). Every function of the public headers (include/ovl) has an entry in the table
 * at the end: DRIVE(name, driver) or EXEMPT(name, "reason");
 * tests/api_list_check.py checks that the table names every declared
 * function and that the library exports them. A driver calls its functions
 * many times with arguments drawn from pools: NULL pointers, NULL and
 * destroyed handles, MPI_COMM_NULL, negative, zero and huge sizes (INT_MAX
 * + 1, INT64_MAX), NaN and infinities, unknown enum values, empty, long and
 * escape-laden strings, and missing or special paths (a FIFO, a directory,
 * an empty and a garbage file, made in a temporary directory). Properties:
 * an ovl_err function returns OVL_OK or an ovl error code, with a non-empty
 * message when it fails, and the same code on every rank (every rank draws
 * the same arguments); names are never NULL; nothing crashes or hangs (the
 * sanitizer builds run it too).
 *
 * Seeded: the seed is printed; OVL_RANDOM_SEED=S reproduces a run and
 * OVL_RANDOM_API_ROUNDS=N sets the calls per driver. */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ovl/ovl.h"
#include "ovltest.h"

static MPI_Comm g_world;
static uint64_t g_state;
static int g_rounds = 40;
static char g_dir[512];
static int64_t g_calls, g_fails;

/* Argument classes: a generator that draws a value of a class marks it; the
 * next call checked (CALL, NAME, VCALL) counts once in every class marked
 * since the previous one. The totals are printed at the end. */
enum { C_NULLPTR, C_NULLH, C_DEAD, C_COMM, C_SIZE, C_FLOAT, C_ENUM, C_STR, C_PATH, C_JSON, C_N };
static const char *const k_class[C_N] = {"NULL pointer",
                                         "NULL handle",
                                         "destroyed handle",
                                         "MPI_COMM_NULL",
                                         "negative or huge size",
                                         "NaN, inf or huge double",
                                         "unknown enum",
                                         "bad string",
                                         "bad path",
                                         "malformed JSON"};
static unsigned g_mask;
static int64_t g_class[C_N];
static void mark(int c) { g_mask |= 1u << c; }
static void tally(void) {
  for (int c = 0; c < C_N; c++)
    if (g_mask & (1u << c)) g_class[c]++;
  g_mask = 0;
}
/* p, or NULL half of the time (counted as a NULL pointer) */
#define MAYBE(p) (coin() ? (p) : (mark(C_NULLPTR), NULL))
/* a handle argument: NULL counts in the class kept in the driver's hk */
#define H(h)  ((h) == NULL ? mark(hk) : (void)0, (h))
#define HN(h) ((h) == NULL ? mark(C_NULLH) : (void)0, (h))
/* a handle, or NULL half of the time (counted as a NULL handle) */
#define HNULL(h) (coin() ? (h) : (mark(C_NULLH), NULL))

static uint64_t rnd(void) { /* splitmix64 */
  uint64_t z = (g_state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
static int pick(int n) { return (int)(rnd() % (uint64_t)n); }
#define PICK(arr) ((arr)[pick((int)(sizeof(arr) / sizeof((arr)[0])))])

/* ---- pools ---- */
static const int64_t k_i64[] = {
    0, 1, 2, 3, 8, 16, -1, -7, INT_MAX, (int64_t)INT_MAX + 1, INT64_MAX, INT64_MIN, (int64_t)1 << 40};
static const int k_int[] = {0, 1, 2, 3, 4, -1, -3, 64, 65, INT_MAX, INT_MIN};
static const int k_enum[] = {0, 1, 2, 3, 5, 7, -1, 99, INT_MAX, INT_MIN};
static const double k_dbl[] = {0, 1, -1, 0.5, 1e-12, 1e308, -1e308, DBL_MIN, -0.0, 4096, NAN, INFINITY, -INFINITY};
static char k_long[5000];
static const char *k_str[] = {NULL,
                              "",
                              "x",
                              "auto",
                              "summa",
                              "hsumma",
                              "cannon",
                              "3d",
                              "2.5d",
                              "alg3",
                              "alg4",
                              "alg5",
                              "alg6",
                              "double",
                              "mixed",
                              "canonical",
                              "mcweeny",
                              "sp2",
                              "trs4",
                              "bcast",
                              "allreduce",
                              "reduce",
                              "allgather",
                              "ring",
                              "binomial",
                              "mpi",
                              "own",
                              "1K",
                              "8:64",
                              "2x2",
                              "2x2x1",
                              "-1",
                              "99999999999999999999",
                              " 1",
                              "1e400",
                              "nan",
                              "--ndup 2",
                              "--block 0",
                              "--bogus",
                              "\x1b[31m\xff\xc3",
                              k_long};
static const char *k_json[] = {"{}",
                               "[]",
                               "{\"a\": 1}",
                               "{\"a\": 1, \"a\": 2}",
                               "{\"a\": 1e400}",
                               "{\"a\": \"\x1b\xff\"}",
                               "{",
                               "",
                               "null",
                               "{\"a\": [1, 2, 3], \"b\": true, \"c\": null}",
                               "\xff\xfe",
                               "[[[[[[[[",
                               "{\"a\": -9223372036854775809}",
                               k_long};
static const char *k_keys[] = {NULL, "", "a", "b", "c", "zz", "\x1b"};
static char k_path[8][5000]; /* filled in make_paths */
static int coin(void);
static const char *path(void) {
  int k = pick(9);
  mark(k == 8 ? C_NULLPTR : k == 5 ? C_N : C_PATH); /* k_path[5]: a writable new file */
  return k == 8 ? NULL : k_path[k];
}
static MPI_Comm comm(void) {
  int k = pick(3);
  if (k == 0) mark(C_COMM);
  return k == 0 ? MPI_COMM_NULL : k == 1 ? MPI_COMM_SELF : g_world;
}
static int64_t i64(void) {
  int64_t v = PICK(k_i64);
  if (v < 0 || v >= INT_MAX) mark(C_SIZE);
  return v;
}
static int iint(void) {
  int v = PICK(k_int);
  if (v < 0 || v == INT_MAX) mark(C_SIZE);
  return v;
}
static double dbl(void) {
  double v = PICK(k_dbl);
  if (!isfinite(v) || fabs(v) >= 1e308) mark(C_FLOAT);
  return v;
}
static const char *str(void) {
  int k = pick((int)(sizeof k_str / sizeof k_str[0]));
  const char *s = k_str[k];
  /* NULL, "", "x" and from "-1" on (but "--ndup 2"): no name, number or option any function takes */
  if (!s) mark(C_NULLPTR);
  else if (k <= 2 || (k >= 31 && k != 35)) mark(C_STR);
  return s;
}
static const char *key(void) {
  const char *s = PICK(k_keys);
  if (!s) mark(C_NULLPTR);
  return s;
}
static const char *json_text(void) {
  int k = pick((int)(sizeof k_json / sizeof k_json[0]));
  if (k >= 3) mark(C_JSON); /* duplicate keys, 1e400, escapes, truncated, not an object, ... */
  return k_json[k];
}
static int en(void) {
  int v = PICK(k_enum);
  if (v < 0 || v >= 99) mark(C_ENUM);
  return v;
}
static int coin(void) { return pick(2); }

static void make_paths(void) {
  int rank;
  MPI_Comm_rank(g_world, &rank);
  /* one directory that every rank sees (the local readers then see the same
   * files everywhere), made by rank 0 */
  snprintf(g_dir, sizeof g_dir, "%s/ovl_random_api.%ld", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (long)getpid());
  MPI_Bcast(g_dir, (int)sizeof g_dir, MPI_CHAR, 0, g_world);
  const char *names[] = {"missing.raw", "fifo", "dir", "empty.raw", "garbage.raw", "out.raw", "e\x1b[31m\xff.json"};
  for (int k = 0; k < 7; k++) snprintf(k_path[k], sizeof k_path[k], "%s/%s", g_dir, names[k]);
  if (rank == 0) {
    T_CHECK(mkdir(g_dir, 0700) == 0, "mkdir %s", g_dir);
    T_CHECK(mkfifo(k_path[1], 0600) == 0, "mkfifo");
    T_CHECK(mkdir(k_path[2], 0700) == 0, "mkdir");
    FILE *f = fopen(k_path[3], "w");
    if (f) fclose(f);
    f = fopen(k_path[4], "w");
    if (f) {
      fputs("{\"rows\": 3, \"cols\": \x1b[2J\xff}\n%%MatrixMarket\n", f);
      fclose(f);
    }
  }
  MPI_Barrier(g_world);
  memset(k_path[7], 'p', 4500);
  k_path[7][0] = '/';
  k_path[7][4500] = '\0';
  memset(k_long, 'a', sizeof k_long - 1);
}

/* ---- properties ---- */
static int same_everywhere(int64_t v) {
  int64_t mm[2] = {v, -v};
  MPI_Allreduce(MPI_IN_PLACE, mm, 2, MPI_INT64_T, MPI_MAX, g_world);
  return mm[0] == -mm[1];
}

static void check_rc_in(const char *call, ovl_err rc, int agreed) {
  g_calls++;
  int ok = (int)rc >= 0 && (int)rc <= OVL_ERR_INTERNAL;
  T_CHECK(ok, "%s returned %d, not an ovl_err code", call, (int)rc);
  if (rc != OVL_OK) {
    g_fails++;
    T_CHECK(ovl_errmsg() && ovl_errmsg()[0], "%s failed (%s) with an empty message", call, ovl_err_name(rc));
    T_CHECK(rc != OVL_ERR_INTERNAL, "%s: %s", call, ovl_errmsg());
  }
  T_CHECK(!agreed || same_everywhere((int64_t)rc), "%s: the code differs between ranks (here %s: %s; seed %llu)", call,
          ovl_err_name(rc), ovl_errmsg(), (unsigned long long)g_state);
  ovl_err_clear();
  tally();
}
static void check_rc(const char *call, ovl_err rc) { check_rc_in(call, rc, 1); }
#define CALL(expr) check_rc(#expr, (expr))
/* a LOCAL function whose outcome may depend on the rank's share (an empty
 * local block): the same properties but the agreement */
#define CALL_LOCAL(expr) check_rc_in(#expr, (expr), 0)
#define NAME(expr)                                                                                                     \
  do {                                                                                                                 \
    const char *n_ = (expr);                                                                                           \
    g_calls++;                                                                                                         \
    T_CHECK(n_ != NULL, "%s returned NULL", #expr);                                                                    \
    tally();                                                                                                           \
  } while (0)
/* a call whose result has no ovl_err code: it must return (no crash) */
#define VCALL(expr)                                                                                                    \
  do {                                                                                                                 \
    (void)(expr);                                                                                                      \
    g_calls++;                                                                                                         \
    tally();                                                                                                           \
  } while (0)

/* ---- drivers ---- */
static void d_names(void) {
  for (int r = 0; r < g_rounds; r++) {
    NAME(ovl_algo_name((ovl_algo)en()));
    NAME(ovl_family_name((ovl_family)en()));
    NAME(ovl_alg_name((ovl_alg)en()));
    NAME(ovl_backend_name((ovl_backend)en()));
    NAME(ovl_err_name((ovl_err)en()));
    NAME(ovl_mcoll_name((ovl_mcoll)en()));
    NAME(ovl_purify_method_name((ovl_purify_method)en()));
    NAME(ovl_purify_prec_name((ovl_purify_prec)en()));
    NAME(ovl_prec_name((ovl_prec)en()));
    NAME(ovl_version());
    VCALL(ovl_algo_family((ovl_algo)en()));
    VCALL(ovl_algo_is_3d((ovl_algo)en()));
    VCALL(ovl_purify_uses_sq((ovl_purify_method)en()));
    VCALL(ovl_purify_family((ovl_purify_method)en()));
    ovl_plan fp = ovl_plan_default((ovl_algo)en(), 1, 1);
    VCALL(ovl_purify_plan_family((ovl_purify_method)en(), MAYBE(&fp)));
    VCALL(ovl_cmodel_default((ovl_mcoll)en()));
    VCALL(ovl_algo_choices((ovl_family)en()));
    VCALL(ovl_alg_choices(str()));
    VCALL(ovl_knob_find(str()));
    VCALL(ovl_knob_default((ovl_knob_id)en(), (ovl_family)en()));
    VCALL(ovl_knob_default_int((ovl_knob_id)en(), (ovl_family)en()));
    VCALL(ovl_knob_names((ovl_knob_id)en(), (ovl_family)en()));
    VCALL(ovl_knob_applies((ovl_knob_id)en(), (ovl_algo)en()));
  }
}

static void d_parse(void) {
  for (int r = 0; r < g_rounds; r++) {
    ovl_algo a, list[4];
    ovl_family f;
    ovl_alg alg;
    ovl_backend b;
    ovl_mcoll mc;
    ovl_purify_method pm;
    ovl_purify_prec pp;
    ovl_prec pr;
    ovl_bench_op op;
    int n = 0;
    CALL(ovl_algo_parse(str(), MAYBE(&a)));
    CALL(ovl_algo_parse_list(str(), MAYBE(list), iint() & 7, MAYBE(&n)));
    CALL(ovl_family_parse(str(), MAYBE(&f)));
    CALL(ovl_alg_parse(str(), str(), MAYBE(&alg)));
    CALL(ovl_backend_parse(str(), MAYBE(&b)));
    CALL(ovl_mcoll_parse(str(), MAYBE(&mc)));
    CALL(ovl_purify_method_parse(str(), MAYBE(&pm)));
    CALL(ovl_purify_prec_parse(str(), MAYBE(&pp)));
    CALL(ovl_prec_parse(str(), MAYBE(&pr)));
    CALL(ovl_bench_op_parse(str(), MAYBE(&op)));
    int64_t v, vals[4];
    int dims[3], nd;
    CALL(ovl_parse_size(str(), MAYBE(&v)));
    CALL(ovl_parse_list(str(), i64(), i64(), MAYBE(vals), iint() & 3, MAYBE(&n)));
    CALL(ovl_parse_dims(str(), MAYBE(dims), MAYBE(&nd)));
    CALL(ovl_plan_option_applies(str(), (ovl_algo)en()));
    CALL(ovl_purify_option_applies((ovl_purify_method)en(), str()));
    CALL(ovl_parse_int(str(), MAYBE(&v)));
    ovl_plan pl = ovl_plan_auto((ovl_family)en(), i64()), q = ovl_plan_default((ovl_algo)en(), i64(), iint());
    char buf[256], esc[64];
    CALL(ovl_plan_parse(str(), (ovl_family)en(), MAYBE(&pl)));
    CALL(ovl_knob_set(MAYBE(&pl), (ovl_knob_id)en(), (ovl_family)en(), str()));
    VCALL(ovl_knob_is_open(MAYBE(&pl), (ovl_knob_id)en()));
    CALL(ovl_knob_check((ovl_knob_id)en(), i64(), coin() ? str() : NULL));
    CALL(ovl_knob_check_plan(MAYBE(&q), coin() ? str() : NULL));
    VCALL(ovl_knob_format(&pl, (ovl_knob_id)en(), buf, sizeof buf));
    VCALL(ovl_knob_copy(MAYBE(&q), MAYBE(&pl), (ovl_knob_id)en()));
    VCALL(ovl_escape_as(esc, sizeof esc, str(), (ovl_escape_c0)en()));
  }
}

static void d_arith(void) {
  for (int r = 0; r < g_rounds; r++) {
    int p, q, s, c, gI, gJ, out, restore;
    int64_t o64, off, len;
    VCALL(ovl_isqrt(iint()));
    VCALL(ovl_icbrt(iint()));
    VCALL(ovl_mul_i64(i64(), i64(), &o64));
    int dims[3] = {iint(), iint(), iint()};
    CALL(ovl_ranks_product(MAYBE(dims), pick(5) - 1, str(), MAYBE(&out)));
    int P = iint();
    if (P >= 1) { /* the rank count of a launch: >= 1 by contract */
      VCALL(ovl_grid2d_auto_dims(P, &p, &q));
      VCALL(ovl_grid25d_dims(P, &s, &c));
      VCALL(ovl_grid_shape((ovl_algo)en(), P, &p, &q, &s, &c));
      VCALL(ovl_sq_grid_dims(P, &s, &c));
    }
    int pq = iint(), qq = iint();
    if (pq >= 1 && qq >= 1) ovl_hgroups_default(pq, qq, &gI, &gJ);
    CALL(ovl_hgroups_auto_dims(iint(), iint(), iint(), MAYBE(&gI), MAYBE(&gJ)));
    int nd = iint();
    if (nd >= 1) {
      int64_t n = i64();
      if (n >= 0) ovl_lanes_part(n, nd, pick(nd < 4 ? nd : 4), &off, &len);
    }
    VCALL(ovl_block_len(16, 1 + pick(4), pick(4)));
    VCALL(ovl_block_off(16, 1 + pick(4), pick(4)));
    VCALL(ovl_block_owner(16, 1 + pick(4), pick(16)));
    VCALL(ovl_dmat_memory(i64(), i64(), iint(), iint()));
    VCALL(ovl_sq_memory(i64(), iint(), iint()));
    VCALL(ovl_ssc_memory(i64(), iint(), iint(), (ovl_algo)en()));
    VCALL(ovl_fill_value(rnd(), i64(), i64()));
    VCALL(ovl_blas_threads_share(iint(), iint(), &restore));
  }
}

static void d_model(void) {
  ovl_machine m = ovl_machine_stampede2();
  for (int r = 0; r < g_rounds; r++) {
    double a = dbl(), b = dbl();
    VCALL(ovl_hockney_time(a, b, dbl()));
    VCALL(ovl_hockney_bw(a, b, dbl()));
    VCALL(ovl_hockney_nhalf(a, b));
    VCALL(ovl_coll_eff_bw(dbl(), iint(), dbl()));
    VCALL(ovl_overlap_osu(dbl(), dbl(), dbl(), dbl()));
    VCALL(ovl_overlap_imb(dbl(), dbl(), dbl()));
    VCALL(ovl_nbc_eff_speedup(dbl(), dbl()));
    VCALL(ovl_p2p_time(&m, dbl()));
    VCALL(ovl_ndup_rule(dbl(), dbl(), iint()));
    double sz[4] = {dbl(), dbl(), dbl(), dbl()}, t[4] = {dbl(), dbl(), dbl(), dbl()}, w[4] = {1, 1, dbl(), 1};
    double al, be;
    int n = pick(6) - 1;
    CALL(ovl_hockney_fit(MAYBE(sz), t, n, &al, &be));
    CALL(ovl_hockney_fit_weighted(sz, t, MAYBE(w), n, &al, MAYBE(&be)));
    CALL(ovl_machine_set_fbw(MAYBE(&m), (ovl_mcoll)en(), iint(), sz, t, n));
    m = ovl_machine_stampede2();
    ovl_plan pl = ovl_plan_default((ovl_algo)en(), i64(), iint());
    ovl_model_cost cost;
    CALL(ovl_model_predict(MAYBE(&m), MAYBE(&pl), MAYBE(&cost)));
    /* the block-sparse product: any shape, or one from a fill */
    ovl_bsmul_shape sh = {i64(), i64(), i64(), i64(), i64(), i64(), i64(), dbl(), i64()};
    if (coin()) CALL(ovl_bsmul_shape_estimate(i64(), i64(), dbl(), MAYBE(&sh)));
    ovl_bsmul_detail det;
    if (coin()) pl.algo = (ovl_algo)(OVL_ALGO_BSUMMA + pick(2));
    CALL(ovl_model_bsmul(MAYBE(&m), MAYBE(&pl), MAYBE(&sh), MAYBE(&cost), MAYBE(&det)));
    VCALL(ovl_bsmul_dgemm_eff(dbl()));
    ovl_machine rd;
    CALL(ovl_machine_read(path(), MAYBE(&rd)));
    CALL(ovl_plan_machine(path(), MAYBE(&rd), NULL, 0));
  }
}

static void d_grid(void) {
  for (int r = 0; r < g_rounds; r++) {
    ovl_grid2d g = NULL, gnull = NULL;
    ovl_grid3d g3 = NULL;
    int flags = pick(3) == 0 ? en() : coin();
    ovl_err rc = ovl_grid2d_create(comm(), pick(3) ? 0 : iint(), pick(3) ? 0 : iint(), flags, MAYBE(&g));
    check_rc("ovl_grid2d_create", rc);
    /* the handle: the grid made, one never made, or one made and destroyed */
    ovl_grid2d h = g;
    int hk = C_NULLH;
    if (pick(3) == 0) h = gnull;
    else if (pick(2) == 0) {
      ovl_grid2d z = NULL;
      T_OK(ovl_grid2d_create(g_world, 0, 0, 0, &z));
      T_OK(ovl_grid2d_destroy(&z));
      h = z, hk = C_DEAD;
    }
    int p, q, i, j, k;
    VCALL(ovl_grid2d_active(H(h)));
    VCALL(ovl_grid2d_dims(H(h), &p, &q));
    VCALL(ovl_grid2d_coords(H(h), &i, &j));
    VCALL(ovl_grid2d_comm(H(h)));
    VCALL(ovl_grid2d_row_comm(H(h)));
    VCALL(ovl_grid2d_col_comm(H(h)));
    VCALL(ovl_grid2d_parent(H(h)));
    ovl_lanes L = NULL;
    CALL(ovl_grid2d_lanes(H(h), (ovl_grid_dir)en(), iint(), MAYBE(&L)));
    if (L) {
      VCALL(ovl_lanes_count(L));
      VCALL(ovl_lanes_size(L));
      VCALL(ovl_lanes_rank(L));
      VCALL(ovl_lanes_comm(L, iint()));
    }
    L = NULL; /* owned by the grid */
    ovl_hgroups hg = NULL, hgo = NULL;
    CALL(ovl_hgroups_create(H(h), iint(), iint(), MAYBE(&hg)));
    CALL(ovl_grid2d_hgroups(H(h), iint(), iint(), MAYBE(&hgo))); /* owned by the grid */
    if (coin()) hg = hgo;
    int gI, gJ;
    VCALL(ovl_hgroups_dims(HN(hg), &gI, &gJ));
    VCALL(ovl_hgroups_outer_row(HN(hg)));
    VCALL(ovl_hgroups_outer_col(HN(hg)));
    VCALL(ovl_hgroups_inner_row(HN(hg)));
    VCALL(ovl_hgroups_inner_col(HN(hg)));
    CALL(ovl_hgroups_lanes(HN(hg), (ovl_grid_dir)en(), iint(), MAYBE(&L)));
    L = NULL; /* owned by the groups */
    if (hg != hgo) {
      CALL(ovl_hgroups_destroy(MAYBE(&hg)));
      if (hg == NULL) mark(C_DEAD);
      CALL(ovl_hgroups_destroy(&hg));
    }
    CALL(ovl_grid3d_create(comm(), pick(3) ? 1 : iint(), pick(3) ? 1 : iint(), flags, MAYBE(&g3)));
    ovl_grid3d h3 = HNULL(g3);
    VCALL(ovl_grid3d_active(HN(h3)));
    VCALL(ovl_grid3d_dims(HN(h3), &p, &q));
    VCALL(ovl_grid3d_coords(HN(h3), &i, &j, &k));
    VCALL(ovl_grid3d_comm(HN(h3)));
    VCALL(ovl_grid3d_row_comm(HN(h3)));
    VCALL(ovl_grid3d_col_comm(HN(h3)));
    VCALL(ovl_grid3d_grd_comm(HN(h3)));
    VCALL(ovl_grid3d_parent(HN(h3)));
    VCALL(ovl_grid3d_plane(HN(h3)));
    VCALL(ovl_grid3d_rank_of(HN(h3), iint(), iint(), iint()));
    CALL(ovl_grid3d_lanes(HN(h3), (ovl_grid_dir)en(), iint(), MAYBE(&L)));
    ovl_lanes Lr = NULL, Lc = NULL, Lg = NULL; /* lanes of a grid: owned by the grid */
    CALL(ovl_grid3d_lanes3(HN(h3), iint(), MAYBE(&Lr), &Lc, MAYBE(&Lg)));
    L = NULL;
    CALL(ovl_lanes_create(comm(), iint(), MAYBE(&L)));
    CALL(ovl_lanes_destroy(&L));
    CALL(ovl_grid3d_destroy(MAYBE(&g3)));
    CALL(ovl_grid3d_destroy(&g3));
    mark(C_DEAD);
    CALL(ovl_grid3d_destroy(&g3)); /* destroyed: NULL again */
    CALL(ovl_grid2d_destroy(&g));
    mark(C_DEAD);
    CALL(ovl_grid2d_destroy(&g));
    CALL(ovl_grid2d_destroy(NULL));
  }
}

static void d_dmat(void) {
  ovl_grid2d g = NULL;
  T_OK(ovl_grid2d_create(g_world, 0, 0, 0, &g));
  for (int r = 0; r < g_rounds; r++) {
    ovl_dmat A = NULL, B = NULL;
    int64_t m = pick(3) ? 1 + pick(9) : i64(), n = pick(3) ? 1 + pick(9) : i64();
    /* sizes the allocator may grant but this node cannot hold (1 x INT_MAX:
     * 16 GiB zeroed) are left out: far too big or small enough */
    if (m > 0 && n > 0 && (double)m * (double)n > 1e6 && (double)m * (double)n < 1e13) m = n = 1 + pick(9);
    CALL(ovl_dmat_create(HNULL(g), m, n, MAYBE(&A)));
    CALL(ovl_dmat_create(g, 1 + pick(9), 1 + pick(9), &B));
    /* the handle: the matrix made, NULL, or one made and destroyed */
    ovl_dmat h = A;
    int hk = C_NULLH;
    if (pick(4) == 0) h = NULL;
    else if (pick(4) == 0) {
      ovl_dmat z = NULL;
      T_OK(ovl_dmat_create(g, 3, 3, &z));
      T_OK(ovl_dmat_destroy(&z));
      h = z, hk = C_DEAD;
    }
    VCALL(ovl_dmat_grid(H(h)));
    VCALL(ovl_dmat_rows(H(h)));
    VCALL(ovl_dmat_cols(H(h)));
    VCALL(ovl_dmat_data(H(h)));
    VCALL(ovl_dmat_local_rows(H(h)));
    VCALL(ovl_dmat_local_cols(H(h)));
    VCALL(ovl_dmat_ld(H(h)));
    VCALL(ovl_dmat_row_off(H(h)));
    VCALL(ovl_dmat_col_off(H(h)));
    VCALL(ovl_dmat_local_len(HNULL(g), i64(), i64()));
    CALL(ovl_dmat_fill(H(h), (ovl_fill_kind)(pick(3) ? pick(4) : en()), rnd()));
    CALL(ovl_dmat_copy(HNULL(H(h)), B));
    CALL(ovl_dmat_redistribute(H(h), HNULL(B)));
    CALL(ovl_dmat_transpose(HNULL(B), h));
    CALL(ovl_dmat_check_finite(H(h)));
    CALL(ovl_dmat_check_symmetric(H(h), dbl()));
    double d;
    uint64_t u;
    CALL(ovl_dmat_norm_fro(H(h), MAYBE(&d)));
    CALL(ovl_dmat_trace(H(h), MAYBE(&d)));
    CALL(ovl_dmat_checksum(H(h), MAYBE(&u)));
    CALL(ovl_dmat_gather(H(h), NULL));
    CALL(ovl_dmat_scatter(H(h), NULL));
    CALL(ovl_dmat_matvec(H(h), NULL, NULL));
    CALL(ovl_dmat_import(H(h), NULL, NULL, NULL, i64()));
    CALL(ovl_dmat_export(H(h), NULL, NULL, NULL, i64()));
    ovl_dmat Wr = NULL;
    CALL_LOCAL(ovl_dmat_wrap(HNULL(g), m, n, NULL, MAYBE(&Wr)));
    CALL(ovl_dmat_destroy(&Wr));
    const char *p = path();
    ovl_matrix_meta meta;
    CALL(ovl_raw_read_meta(comm(), p, MAYBE(&meta)));
    CALL(ovl_mtx_read_meta(comm(), path(), MAYBE(&meta)));
    CALL(ovl_matrix_read_meta(comm(), path(), MAYBE(&meta)));
    ovl_dmat R = NULL;
    CALL(ovl_dmat_read_raw(HNULL(g), path(), coin(), MAYBE(&R)));
    CALL(ovl_dmat_destroy(&R));
    CALL(ovl_dmat_read_mtx(g, path(), coin(), MAYBE(&R)));
    CALL(ovl_dmat_destroy(&R));
    CALL(ovl_dmat_read(g, path(), coin(), MAYBE(&R)));
    CALL(ovl_dmat_destroy(&R));
    CALL(ovl_dmat_symmetrize(H(h), coin() ? B : NULL));
    CALL(ovl_dmat_symmetrize(B, H(h)));
    CALL(ovl_dmat_destroy(&A));
    mark(C_DEAD);
    CALL(ovl_dmat_destroy(&A));
    CALL(ovl_dmat_destroy(&B));
    CALL(ovl_dmat_destroy(NULL));
  }
  ovl_grid2d_destroy(&g);
}

static void d_writers(void) {
  ovl_grid2d g = NULL;
  ovl_dmat A = NULL;
  T_OK(ovl_grid2d_create(g_world, 0, 0, 0, &g));
  T_OK(ovl_dmat_create(g, 6, 6, &A));
  T_OK(ovl_dmat_fill(A, OVL_FILL_SYMMETRIC, 3));
  for (int r = 0; r < g_rounds / 4; r++) {
    const char *p = path();
    CALL(ovl_dmat_write_raw(HNULL(A), p, coin()));
    CALL(ovl_dmat_write_mtx(A, path(), coin()));
    ovl_machine m = ovl_machine_stampede2();
    CALL(ovl_machine_write(MAYBE(&m), path()));
    CALL(ovl_file_check_read(path(), str(), i64()));
    CALL(ovl_file_check_write(path(), str(), NULL, 0));
    const char *q = coin() ? NULL : path();
    int same = ovl_file_same_target(q, path());
    T_CHECK(same == 0 || same == 1, "ovl_file_same_target returned %d", same);
    T_CHECK(ovl_file_same_target(q, q) == (q != NULL), "ovl_file_same_target of a path and itself");
  }
  ovl_dmat_destroy(&A);
  ovl_grid2d_destroy(&g);
}

static ovl_err json_line(void *ctx, const ovl_json *doc, const char *line, int lineno) {
  (void)ctx, (void)doc, (void)line, (void)lineno;
  return OVL_OK;
}

static void d_json(void) {
  for (int r = 0; r < g_rounds; r++) {
    ovl_json doc;
    memset(&doc, 0, sizeof doc);
    const char *t = json_text();
    ovl_err rc = ovl_json_parse(MAYBE(t), strlen(t), str(), str(), &doc);
    check_rc("ovl_json_parse", rc);
    if (rc == OVL_OK) {
      CALL(ovl_json_root_object(&doc, str()));
      const cJSON *o = doc.root;
      double v, vs[3];
      int64_t iv;
      int b, cnt, dup;
      char buf[32];
      VCALL(ovl_json_find(o, key(), &dup));
      CALL(ovl_json_num(&doc, o, key(), &v));
      CALL(ovl_json_num_opt(&doc, o, key(), dbl(), &v));
      CALL(ovl_json_int(&doc, o, key(), i64(), i64(), &iv));
      CALL(ovl_json_int_opt(&doc, o, key(), i64(), i64(), i64(), &iv));
      CALL(ovl_json_str(&doc, o, key(), buf, 1 + (size_t)pick(32)));
      CALL(ovl_json_str_opt(&doc, o, key(), str(), buf, 1 + (size_t)pick(32)));
      CALL(ovl_json_bool(&doc, o, key(), &b));
      CALL(ovl_json_bool_opt(&doc, o, key(), coin(), &b));
      CALL(ovl_json_nums(&doc, o, key(), vs, pick(4), &cnt));
      const char *keys[] = {key(), "a", NULL};
      CALL(ovl_json_only_keys(&doc, o, keys));
      VCALL(ovl_json_text(o, buf, 1 + (size_t)pick(32)));
      VCALL(ovl_json_equal(o, o));
    }
    VCALL(ovl_json_free(&doc));
    VCALL(ovl_json_free(NULL));
    CALL(ovl_json_load(path(), str(), (size_t)pick(1 << 12), &doc));
    VCALL(ovl_json_free(&doc));
    CALL(ovl_json_lines_read(path(), str(), (size_t)pick(1 << 12), json_line, NULL));
    char *text = NULL;
    size_t len;
    CALL(ovl_file_read_all(path(), str(), (size_t)pick(1 << 12), &text, &len));
    free(text);
  }
}

static void d_record(void) {
  for (int r = 0; r < g_rounds; r++) {
    ovl_record *rec = NULL, *sub = NULL;
    CALL(ovl_record_create(str(), MAYBE(&rec)));
    int hk = C_NULLH;
    ovl_record *h = coin() ? rec : NULL;
    double v[3] = {dbl(), dbl(), dbl()};
    CALL(ovl_record_set_num(H(h), str(), dbl()));
    CALL(ovl_record_set_int(H(h), str(), i64()));
    CALL(ovl_record_set_str(H(h), str(), str()));
    CALL(ovl_record_set_bool(H(h), str(), en()));
    CALL(ovl_record_set_null(H(h), str()));
    CALL(ovl_record_set_nums(H(h), str(), MAYBE(v), pick(5) - 1));
    CALL(ovl_record_create("s", &sub));
    CALL(ovl_record_set_record(H(h), str(), MAYBE(&sub)));
    ovl_record_destroy(&sub);
    CALL(ovl_record_create("s", &sub));
    CALL(ovl_record_append_record(H(h), str(), &sub));
    ovl_record_destroy(&sub);
    char *text = NULL;
    CALL(ovl_record_text(H(h), MAYBE(&text)));
    free(text);
    CALL(ovl_record_fprint(H(h), NULL, iint()));
    CALL(ovl_record_print(H(h), NULL));
    VCALL(ovl_record_destroy(&rec));
    mark(C_DEAD);
    VCALL(ovl_record_destroy(&rec));
    ovl_record_destroy(NULL);
  }
}

/* no byte below 0x20 (but newlines and tabs when keep_nl) and no DEL */
static int clean_text(const char *s, size_t len, int keep_nl) {
  for (size_t k = 0; k < len; k++) {
    unsigned char c = (unsigned char)s[k];
    if ((c < 0x20 && !(keep_nl && (c == '\n' || c == '\t'))) || c == 0x7f) return 0;
  }
  return 1;
}

static void d_text(void) {
  char out[FILENAME_MAX];
  snprintf(out, sizeof out, "%s/text.%d.out", g_dir, ovl_world_rank());
  FILE *f = fopen(out, "w");
  T_CHECK(f != NULL, "fopen %s", out);
  for (int r = 0; r < g_rounds; r++) {
    char dst[96];
    size_t n = (size_t)pick(4) == 0 ? 0 : 1 + (size_t)pick((int)sizeof dst);
    memset(dst, 'z', sizeof dst);
    const char *src = str();
    char *d = MAYBE(dst);
    const char *got = ovl_escape(d, n, src);
    g_calls++;
    tally();
    T_CHECK(got == d, "ovl_escape did not return dst");
    if (d && n > 0) {
      const char *nul = memchr(d, '\0', n);
      size_t len = nul ? (size_t)(nul - d) : n;
      T_CHECK(len < n, "ovl_escape: the result is not terminated within %zu bytes", n);
      T_CHECK(clean_text(d, len, 0), "ovl_escape left a control byte in '%s'", d);
    }
    /* fixed formats with generated strings; a NULL string is not a %s argument */
    const char *a = str(), *b = str();
    a = a ? a : "(null)", b = b ? b : "(null)";
    FILE *o = coin() ? f : (mark(C_NULLPTR), (FILE *)NULL);
    int w;
    switch (pick(3)) {
    case 0: w = ovl_fprintf(o, "%s\n", a); break;
    case 1: w = ovl_fprintf(o, "%s: %d\t%s\n", a, iint(), b); break;
    default: w = ovl_fprintf(o, "%.3s|%g|%s", a, dbl(), b); break;
    }
    g_calls++;
    tally();
    T_CHECK(o ? w >= 0 : w == -1, "ovl_fprintf returned %d", w);
  }
  T_CHECK(fclose(f) == 0, "fclose");
  char *text = NULL;
  size_t len = 0;
  T_OK(ovl_file_read_all(out, "text", (size_t)1 << 24, &text, &len));
  T_CHECK(clean_text(text, len, 1), "ovl_fprintf wrote a control byte");
  free(text);
}

static void d_dense(void) {
  for (int r = 0; r < g_rounds / 2; r++) {
    MPI_Comm c = comm();
    const void *cp = MAYBE((const void *)&c);
    double F[4] = {1, 0, 0, 2}, D[4];
    int64_t n = pick(3) ? 2 : i64();
    CALL(ovl_purify_dense(cp, n, MAYBE(F), pick(2) ? 1 : i64(), str(), str(), iint(), str(), dbl(), iint(), MAYBE(D),
                          str(), NULL));
    CALL(ovl_gemm_dense(cp, pick(3) ? 2 : i64(), pick(3) ? 2 : i64(), pick(3) ? 2 : i64(), MAYBE(F), F, MAYBE(D), str(),
                        str(), NULL));
    CALL(ovl_purify_rows(cp, i64(), i64(), NULL, i64(), i64(), str(), str(), iint(), str(), dbl(), iint(), NULL, i64(),
                         str(), NULL));
    CALL(ovl_gemm_rows(cp, i64(), i64(), i64(), i64(), NULL, i64(), i64(), NULL, i64(), NULL, i64(), str(), str(),
                       NULL));
  }
}

static void d_misc(void) {
  for (int r = 0; r < g_rounds; r++) {
    ovl_err local = (ovl_err)pick(10);
    if (local != OVL_OK) ovl_err_set(local, "a local failure"); /* the message that goes with a local code */
    CALL(ovl_err_agree(comm(), local));
    CALL(ovl_check_comm(comm(), str()));
    CALL(ovl_check_handle(MAYBE("h"), str(), str()));
    CALL(ovl_check_ptr(MAYBE("p"), str(), str()));
    int64_t bytes;
    int a, b, c;
    CALL(ovl_check_memory(comm(), i64(), i64()));
    CALL(ovl_bench_check_memory(comm(), dbl(), i64()));
    CALL(ovl_mem_available(MAYBE(&bytes)));
    CALL(ovl_node_llc_bytes(MAYBE(&bytes)));
    CALL(ovl_bench_node_info(comm(), MAYBE(&a), &b, &c));
    CALL(ovl_node_ranks(comm(), MAYBE(&a), &b, &c));
    int64_t sizes[8];
    int n;
    CALL(ovl_bench_sizes(i64(), i64(), MAYBE(sizes), pick(9), &n));
    char buf[64];
    CALL(ovl_mpi_library(MAYBE(buf), (size_t)pick(64)));
    ovl_stats st;
    double t[3] = {dbl(), dbl(), dbl()};
    CALL(ovl_stats_max_over_ranks(comm(), MAYBE(t), pick(4) - 1, MAYBE(&st)));
    VCALL(ovl_stats_of(t, pick(4)));
    CALL(ovl_pdgemm_config(iint(), (ovl_backend)en(), i64()));
    ovl_backend be;
    int64_t panel;
    CALL(ovl_pdgemm_get_config(MAYBE(&a), &be, &panel));
    CALL(ovl_pdgemm_config(0, OVL_BACKEND_MPI, 0));
    ovl_plan pl = ovl_plan_default((ovl_algo)en(), i64(), iint());
    CALL(ovl_plan_check(MAYBE(&pl), (ovl_family)en(), coin()));
    ovl_plan pl2 = ovl_plan_auto((ovl_family)en(), i64());
    VCALL(ovl_plan_is_open(&pl2));
    VCALL(ovl_plan_same(&pl, &pl2));
    VCALL(ovl_plan_str(&pl, buf, (size_t)pick(64)));
    VCALL(ovl_plan_describe(&pl, buf, (size_t)pick(64)));
    VCALL(ovl_plan_short(&pl, buf, (size_t)pick(64)));
    ovl_purify_opts po = ovl_purify_opts_default();
    CALL(ovl_options_apply(str(), str(), coin(), (ovl_family)en(), MAYBE(&pl), MAYBE(&po)));
    CALL(ovl_options_runtime(comm(), str(), (ovl_family)(pick(3) ? pick(2) : en()), &pl, &po));
    int pplan = 0;
    CALL(ovl_options_runtime_print(comm(), str(), (ovl_family)pick(3), MAYBE(&pl), MAYBE(&po), MAYBE(&pplan)));
    ovl_tune_params tp = ovl_tune_default((ovl_family)en(), i64());
    CALL(ovl_tune_check(MAYBE(&tp)));
    int found;
    int64_t nf;
    CALL(ovl_tunedb_lookup(path(), (ovl_family)en(), i64(), iint(), MAYBE(&pl), &nf, &found));
    ovl_fock_meta fm;
    CALL(ovl_fock_meta_read(comm(), path(), MAYBE(&fm)));
    VCALL(ovl_purify_memory(i64(), iint(), iint(), MAYBE(&po)));
  }
}

static void d_core(void) {
  const size_t k_bytes[] = {0, 1, 64, SIZE_MAX, SIZE_MAX / 2, (size_t)INT64_MAX + 1};
  int threads = ovl_blas_threads_get();
  ovl_log_level lv = ovl_log_get_level();
  for (int r = 0; r < g_rounds; r++) {
    void *p = NULL;
    CALL(ovl_malloc(PICK(k_bytes), MAYBE(&p)));
    VCALL(ovl_free(&p));
    CALL(ovl_calloc(PICK(k_bytes), MAYBE(&p)));
    VCALL(ovl_free(&p));
    VCALL(ovl_free(NULL));
    const int k_mpi[] = {MPI_SUCCESS, MPI_ERR_COMM, MPI_ERR_ARG, MPI_ERR_OTHER, -1, INT_MAX};
    CALL(ovl_err_mpi(PICK(k_mpi), str()));
    int64_t v[4] = {i64(), i64(), i64(), i64()};
    const char *names[4] = {str(), "b", str(), "d"};
    ovl_err local = (ovl_err)pick(10);
    if (local != OVL_OK) ovl_err_set(local, "a local failure");
    CALL(ovl_err_agree_same(comm(), local, MAYBE(v), MAYBE(names), pick(6) == 0 ? iint() : pick(5)));
    ovl_err_clear();
    NAME(ovl_errmsg());
    VCALL(ovl_world_rank());
    VCALL(ovl_time());
    VCALL(ovl_log_set_level((ovl_log_level)en()));
    VCALL(ovl_log_get_level());
    VCALL(ovl_log_set_level(OVL_LOG_QUIET));
    CALL(ovl_blas_threads_set(iint()));
    VCALL(ovl_blas_threads_get());
    int cores;
    CALL(ovl_node_cores(comm(), MAYBE(&cores)));
    ovl_plan pl = ovl_plan_auto((ovl_family)(pick(3) ? pick(2) : en()), pick(3) ? 1 + pick(64) : i64());
    if (pick(3) == 0) pl = ovl_plan_default((ovl_algo)en(), i64(), iint());
    ovl_plan_src src = {path(), path()};
    char why[128];
    int ppn = pick(3) - 1;
    CALL(ovl_plan_resolve(comm(), (ovl_family)(pick(3) ? pick(2) : en()), MAYBE(&pl), MAYBE(&src), MAYBE(why),
                          sizeof why));
    CALL(ovl_plan_resolve_ppn(comm(), (ovl_family)pick(2), &pl, MAYBE(&ppn), NULL, why, sizeof why));
    ovl_bsmul_shape sh = {i64(), i64(), i64(), i64(), i64(), i64(), i64(), dbl(), i64()};
    if (coin()) CALL(ovl_bsmul_shape_estimate(pick(3) ? 1000 : i64(), pick(3) ? 100 : i64(), dbl(), MAYBE(&sh)));
    if (coin()) pl = ovl_plan_auto(OVL_FAMILY_BSMUL, sh.n);
    CALL(ovl_plan_resolve_bsmul(comm(), MAYBE(&pl), MAYBE(&sh), MAYBE(&src), MAYBE(why), sizeof why));
    ovl_pdpurify_params pp = ovl_pdpurify_params_default();
    pp.method = (ovl_purify_method)en(), pp.algo = (ovl_algo)en(), pp.ndup = iint(), pp.c = iint();
    CALL(ovl_pdpurify_plan(comm(), pick(130) - 1, pick(3) ? 1 + pick(64) : i64(), MAYBE(&pp), MAYBE(&pl), MAYBE(why),
                           sizeof why));
    ovl_grid2d g2 = NULL;
    ovl_grid3d g3 = NULL;
    CALL(ovl_plan_grids(comm(), MAYBE(&pl), coin(), MAYBE(&g2), MAYBE(&g3)));
    if (g3) g2 = NULL; /* the plane of the 3D grid: owned by it */
    ovl_grid2d_destroy(&g2);
    ovl_grid3d_destroy(&g3);
    CALL(ovl_tunedb_store(path(), (ovl_family)en(), MAYBE(&pl), dbl(), str()));
  }
  ovl_blas_threads_set(threads);
  VCALL(ovl_log_set_level(lv));
}

typedef struct {
  const char *name;
  void (*fn)(void);
  const char *why;
} entry;
#define DRIVE(n, f)    {#n, f, NULL},
#define EXEMPT(n, why) {#n, NULL, why},

static const entry k_table[] = {
#include "random_api_table.h"
};

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  g_world = MPI_COMM_WORLD;
  MPI_Comm_set_errhandler(g_world, MPI_ERRORS_RETURN);
  int rank;
  MPI_Comm_rank(g_world, &rank);
  uint64_t seed = getenv("OVL_RANDOM_SEED") ? strtoull(getenv("OVL_RANDOM_SEED"), NULL, 10) : 20261125u;
  MPI_Bcast(&seed, 1, MPI_UINT64_T, 0, g_world);
  if (getenv("OVL_RANDOM_API_ROUNDS")) g_rounds = atoi(getenv("OVL_RANDOM_API_ROUNDS"));
  if (rank == 0)
    printf("test_random_api: seed %llu (OVL_RANDOM_SEED), %d rounds per driver\n", (unsigned long long)seed, g_rounds);
  ovl_log_set_level(OVL_LOG_QUIET);
  make_paths();
  int n = (int)(sizeof k_table / sizeof k_table[0]), driven = 0;
  for (int k = 0; k < n; k++) {
    if (!k_table[k].fn) continue;
    driven++;
    int first = 1; /* one run per driver, however many functions it drives */
    for (int j = 0; j < k; j++) first &= k_table[j].fn != k_table[k].fn;
    if (!first) continue;
    g_state = seed ^ (uint64_t)(k + 1) * 0x9E3779B97F4A7C15ull;
    int64_t c0 = g_calls, f0 = g_fails;
    double t0 = MPI_Wtime();
    if (getenv("OVL_RANDOM_API_VERBOSE")) fprintf(stderr, "driver %s\n", k_table[k].name);
    k_table[k].fn();
    if (rank == 0)
      printf("  driver of %-28s %6lld calls, %6lld failed, %.2f s\n", k_table[k].name, (long long)(g_calls - c0),
             (long long)(g_fails - f0), MPI_Wtime() - t0);
  }
  if (rank == 0)
    printf("test_random_api: %d public functions: %d driven, %d exempt; %lld calls, %lld returned an error\n", n,
           driven, n - driven, (long long)g_calls, (long long)g_fails);
  if (rank == 0) {
    printf("test_random_api: calls per argument class:");
    for (int c = 0; c < C_N; c++) printf("%s %s: %lld", c ? "," : "", k_class[c], (long long)g_class[c]);
    printf("\n");
  }
  MPI_Barrier(g_world);
  char cmd[700];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
  if (rank == 0) T_CHECK(system(cmd) == 0, "%s", cmd);
  int rc = t_finish("test_random_api");
  MPI_Finalize();
  return rc;
}
