/* Random arguments for the public functions (docs/reliability.md, "Random
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
static const char *path(void) {
  int k = pick(9);
  return k == 8 ? NULL : k_path[k];
}
static MPI_Comm comm(void) {
  int k = pick(3);
  return k == 0 ? MPI_COMM_NULL : k == 1 ? MPI_COMM_SELF : g_world;
}
static int64_t i64(void) { return PICK(k_i64); }
static int iint(void) { return PICK(k_int); }
static double dbl(void) { return PICK(k_dbl); }
static const char *str(void) { return PICK(k_str); }
static int en(void) { return PICK(k_enum); }
static int coin(void) { return pick(2); }

static void make_paths(void) {
  int rank;
  MPI_Comm_rank(g_world, &rank);
  snprintf(g_dir, sizeof g_dir, "%s/ovl_random_api.%d.%ld", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", rank,
           (long)getpid());
  T_CHECK(mkdir(g_dir, 0700) == 0, "mkdir %s", g_dir);
  const char *names[] = {"missing.raw", "fifo", "dir", "empty.raw", "garbage.raw", "out.raw", "e\x1b[31m\xff.json"};
  for (int k = 0; k < 7; k++) snprintf(k_path[k], sizeof k_path[k], "%s/%s", g_dir, names[k]);
  T_CHECK(mkfifo(k_path[1], 0600) == 0, "mkfifo");
  T_CHECK(mkdir(k_path[2], 0700) == 0, "mkdir");
  FILE *f = fopen(k_path[3], "w");
  if (f) fclose(f);
  f = fopen(k_path[4], "w");
  if (f) {
    fputs("{\"rows\": 3, \"cols\": \x1b[2J\xff}\n%%MatrixMarket\n", f);
    fclose(f);
  }
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

static void check_rc(const char *call, ovl_err rc) {
  g_calls++;
  int ok = (int)rc >= 0 && (int)rc <= OVL_ERR_INTERNAL;
  T_CHECK(ok, "%s returned %d, not an ovl_err code", call, (int)rc);
  if (rc != OVL_OK) {
    g_fails++;
    T_CHECK(ovl_errmsg() && ovl_errmsg()[0], "%s failed (%s) with an empty message", call, ovl_err_name(rc));
    T_CHECK(rc != OVL_ERR_INTERNAL, "%s: %s", call, ovl_errmsg());
  }
  T_CHECK(same_everywhere((int64_t)rc), "%s: the code differs between ranks (here %s: %s; seed %llu)", call,
          ovl_err_name(rc), ovl_errmsg(), (unsigned long long)g_state);
  ovl_err_clear();
}
#define CALL(expr) check_rc(#expr, (expr))
#define NAME(expr)                                                                                                     \
  do {                                                                                                                 \
    const char *n_ = (expr);                                                                                           \
    g_calls++;                                                                                                         \
    T_CHECK(n_ != NULL, "%s returned NULL", #expr);                                                                    \
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
    (void)ovl_algo_family((ovl_algo)en());
    (void)ovl_algo_is_3d((ovl_algo)en());
    (void)ovl_purify_uses_sq((ovl_purify_method)en());
    (void)ovl_cmodel_default((ovl_mcoll)en());
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
    CALL(ovl_algo_parse(str(), coin() ? &a : NULL));
    CALL(ovl_algo_parse_list(str(), coin() ? list : NULL, iint() & 7, coin() ? &n : NULL));
    CALL(ovl_family_parse(str(), coin() ? &f : NULL));
    CALL(ovl_alg_parse(str(), str(), coin() ? &alg : NULL));
    CALL(ovl_backend_parse(str(), coin() ? &b : NULL));
    CALL(ovl_mcoll_parse(str(), coin() ? &mc : NULL));
    CALL(ovl_purify_method_parse(str(), coin() ? &pm : NULL));
    CALL(ovl_purify_prec_parse(str(), coin() ? &pp : NULL));
    CALL(ovl_prec_parse(str(), coin() ? &pr : NULL));
    CALL(ovl_bench_op_parse(str(), coin() ? &op : NULL));
    int64_t v, vals[4];
    int dims[3], nd;
    CALL(ovl_parse_size(str(), coin() ? &v : NULL));
    CALL(ovl_parse_list(str(), i64(), i64(), coin() ? vals : NULL, iint() & 3, coin() ? &n : NULL));
    CALL(ovl_parse_dims(str(), coin() ? dims : NULL, coin() ? &nd : NULL));
    CALL(ovl_plan_option_applies(str(), (ovl_algo)en()));
    CALL(ovl_purify_option_applies((ovl_purify_method)en(), str()));
  }
}

static void d_arith(void) {
  for (int r = 0; r < g_rounds; r++) {
    int p, q, s, c, gI, gJ, out, restore;
    int64_t o64, off, len;
    (void)ovl_isqrt(iint());
    (void)ovl_icbrt(iint());
    (void)ovl_mul_i64(i64(), i64(), &o64);
    int dims[3] = {iint(), iint(), iint()};
    CALL(ovl_ranks_product(coin() ? dims : NULL, pick(5) - 1, str(), coin() ? &out : NULL));
    int P = iint();
    if (P >= 1) { /* the rank count of a launch: >= 1 by contract */
      ovl_grid2d_auto_dims(P, &p, &q);
      ovl_grid25d_dims(P, &s, &c);
      ovl_grid_shape((ovl_algo)en(), P, &p, &q, &s, &c);
      ovl_sq_grid_dims(P, &s, &c);
    }
    int pq = iint(), qq = iint();
    if (pq >= 1 && qq >= 1) ovl_hgroups_default(pq, qq, &gI, &gJ);
    CALL(ovl_hgroups_auto_dims(iint(), iint(), iint(), coin() ? &gI : NULL, coin() ? &gJ : NULL));
    int nd = iint();
    if (nd >= 1) {
      int64_t n = i64();
      if (n >= 0) ovl_lanes_part(n, nd, pick(nd < 4 ? nd : 4), &off, &len);
    }
    (void)ovl_block_len(16, 1 + pick(4), pick(4));
    (void)ovl_block_off(16, 1 + pick(4), pick(4));
    (void)ovl_block_owner(16, 1 + pick(4), pick(16));
    (void)ovl_dmat_memory(i64(), i64(), iint(), iint());
    (void)ovl_sq_memory(i64(), iint(), iint());
    (void)ovl_ssc_memory(i64(), iint(), iint(), (ovl_algo)en());
    (void)ovl_fill_value(rnd(), i64(), i64());
    (void)ovl_blas_threads_share(iint(), iint(), &restore);
  }
}

static void d_model(void) {
  ovl_machine m = ovl_machine_stampede2();
  for (int r = 0; r < g_rounds; r++) {
    double a = dbl(), b = dbl();
    (void)ovl_hockney_time(a, b, dbl());
    (void)ovl_hockney_bw(a, b, dbl());
    (void)ovl_hockney_nhalf(a, b);
    (void)ovl_coll_eff_bw(dbl(), iint(), dbl());
    (void)ovl_overlap_osu(dbl(), dbl(), dbl(), dbl());
    (void)ovl_overlap_imb(dbl(), dbl(), dbl());
    (void)ovl_nbc_eff_speedup(dbl(), dbl());
    (void)ovl_p2p_time(&m, dbl());
    (void)ovl_ndup_rule(dbl(), dbl(), iint());
    double sz[4] = {dbl(), dbl(), dbl(), dbl()}, t[4] = {dbl(), dbl(), dbl(), dbl()}, w[4] = {1, 1, dbl(), 1};
    double al, be;
    int n = pick(6) - 1;
    CALL(ovl_hockney_fit(coin() ? sz : NULL, t, n, &al, &be));
    CALL(ovl_hockney_fit_weighted(sz, t, coin() ? w : NULL, n, &al, coin() ? &be : NULL));
    CALL(ovl_machine_set_fbw(coin() ? &m : NULL, (ovl_mcoll)en(), iint(), sz, t, n));
    m = ovl_machine_stampede2();
    ovl_plan pl = ovl_plan_default((ovl_algo)en(), i64(), iint());
    ovl_model_cost cost;
    CALL(ovl_model_predict(coin() ? &m : NULL, coin() ? &pl : NULL, coin() ? &cost : NULL));
    ovl_machine rd;
    CALL(ovl_machine_read(path(), coin() ? &rd : NULL));
    CALL(ovl_plan_machine(path(), coin() ? &rd : NULL, NULL, 0));
  }
}

static void d_grid(void) {
  for (int r = 0; r < g_rounds; r++) {
    ovl_grid2d g = NULL, gnull = NULL;
    ovl_grid3d g3 = NULL;
    int flags = pick(3) == 0 ? en() : coin();
    ovl_err rc = ovl_grid2d_create(comm(), pick(3) ? 0 : iint(), pick(3) ? 0 : iint(), flags, coin() ? &g : NULL);
    check_rc("ovl_grid2d_create", rc);
    ovl_grid2d h = coin() ? g : gnull;
    int p, q, i, j, k;
    (void)ovl_grid2d_active(h);
    ovl_grid2d_dims(h, &p, &q);
    ovl_grid2d_coords(h, &i, &j);
    (void)ovl_grid2d_comm(h);
    (void)ovl_grid2d_row_comm(h);
    (void)ovl_grid2d_col_comm(h);
    (void)ovl_grid2d_parent(h);
    ovl_lanes L = NULL;
    CALL(ovl_grid2d_lanes(h, (ovl_grid_dir)en(), iint(), coin() ? &L : NULL));
    if (L) {
      (void)ovl_lanes_count(L);
      (void)ovl_lanes_size(L);
      (void)ovl_lanes_rank(L);
      (void)ovl_lanes_comm(L, iint());
    }
    CALL(ovl_lanes_destroy(coin() ? &L : NULL));
    ovl_hgroups hg = NULL;
    CALL(ovl_hgroups_create(h, iint(), iint(), coin() ? &hg : NULL));
    CALL(ovl_grid2d_hgroups(h, iint(), iint(), coin() ? &hg : NULL));
    int gI, gJ;
    ovl_hgroups_dims(hg, &gI, &gJ);
    (void)ovl_hgroups_outer_row(hg);
    (void)ovl_hgroups_outer_col(hg);
    (void)ovl_hgroups_inner_row(hg);
    (void)ovl_hgroups_inner_col(hg);
    CALL(ovl_hgroups_lanes(hg, (ovl_grid_dir)en(), iint(), coin() ? &L : NULL));
    CALL(ovl_lanes_destroy(&L));
    CALL(ovl_hgroups_destroy(coin() ? &hg : NULL));
    CALL(ovl_hgroups_destroy(&hg));
    CALL(ovl_grid3d_create(comm(), pick(3) ? 1 : iint(), pick(3) ? 1 : iint(), flags, coin() ? &g3 : NULL));
    ovl_grid3d h3 = coin() ? g3 : NULL;
    (void)ovl_grid3d_active(h3);
    ovl_grid3d_dims(h3, &p, &q);
    ovl_grid3d_coords(h3, &i, &j, &k);
    (void)ovl_grid3d_comm(h3);
    (void)ovl_grid3d_row_comm(h3);
    (void)ovl_grid3d_col_comm(h3);
    (void)ovl_grid3d_grd_comm(h3);
    (void)ovl_grid3d_parent(h3);
    (void)ovl_grid3d_plane(h3);
    (void)ovl_grid3d_rank_of(h3, iint(), iint(), iint());
    CALL(ovl_grid3d_lanes(h3, (ovl_grid_dir)en(), iint(), coin() ? &L : NULL));
    CALL(ovl_lanes_destroy(&L));
    ovl_lanes Lr = NULL, Lc = NULL, Lg = NULL;
    CALL(ovl_grid3d_lanes3(h3, iint(), coin() ? &Lr : NULL, &Lc, coin() ? &Lg : NULL));
    CALL(ovl_lanes_destroy(&Lr));
    CALL(ovl_lanes_destroy(&Lc));
    CALL(ovl_lanes_destroy(&Lg));
    CALL(ovl_lanes_create(comm(), iint(), coin() ? &L : NULL));
    CALL(ovl_lanes_destroy(&L));
    CALL(ovl_grid3d_destroy(coin() ? &g3 : NULL));
    CALL(ovl_grid3d_destroy(&g3));
    CALL(ovl_grid3d_destroy(&g3)); /* destroyed: NULL again */
    CALL(ovl_grid2d_destroy(&g));
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
    CALL(ovl_dmat_create(coin() ? g : NULL, m, n, coin() ? &A : NULL));
    CALL(ovl_dmat_create(g, 1 + pick(9), 1 + pick(9), &B));
    ovl_dmat h = pick(4) ? A : NULL;
    (void)ovl_dmat_grid(h);
    (void)ovl_dmat_rows(h);
    (void)ovl_dmat_cols(h);
    (void)ovl_dmat_data(h);
    (void)ovl_dmat_local_rows(h);
    (void)ovl_dmat_local_cols(h);
    (void)ovl_dmat_ld(h);
    (void)ovl_dmat_row_off(h);
    (void)ovl_dmat_col_off(h);
    (void)ovl_dmat_local_len(coin() ? g : NULL, i64(), i64());
    CALL(ovl_dmat_fill(h, (ovl_fill_kind)(pick(3) ? pick(4) : en()), rnd()));
    CALL(ovl_dmat_copy(coin() ? h : NULL, B));
    CALL(ovl_dmat_redistribute(h, coin() ? B : NULL));
    CALL(ovl_dmat_transpose(coin() ? B : NULL, h));
    CALL(ovl_dmat_check_finite(h));
    CALL(ovl_dmat_check_symmetric(h, dbl()));
    double d;
    uint64_t u;
    CALL(ovl_dmat_norm_fro(h, coin() ? &d : NULL));
    CALL(ovl_dmat_trace(h, coin() ? &d : NULL));
    CALL(ovl_dmat_checksum(h, coin() ? &u : NULL));
    CALL(ovl_dmat_gather(h, NULL));
    CALL(ovl_dmat_scatter(h, NULL));
    CALL(ovl_dmat_matvec(h, NULL, NULL));
    CALL(ovl_dmat_import(h, NULL, NULL, NULL, i64()));
    CALL(ovl_dmat_export(h, NULL, NULL, NULL, i64()));
    CALL(ovl_dmat_wrap(coin() ? g : NULL, m, n, NULL, coin() ? &B : NULL));
    const char *p = path();
    ovl_matrix_meta meta;
    CALL(ovl_raw_read_meta(comm(), p, coin() ? &meta : NULL));
    CALL(ovl_mtx_read_meta(comm(), path(), coin() ? &meta : NULL));
    CALL(ovl_matrix_read_meta(comm(), path(), coin() ? &meta : NULL));
    ovl_dmat R = NULL;
    CALL(ovl_dmat_read_raw(coin() ? g : NULL, path(), coin(), coin() ? &R : NULL));
    CALL(ovl_dmat_destroy(&R));
    CALL(ovl_dmat_read_mtx(g, path(), coin(), coin() ? &R : NULL));
    CALL(ovl_dmat_destroy(&R));
    CALL(ovl_dmat_read(g, path(), coin(), coin() ? &R : NULL));
    CALL(ovl_dmat_destroy(&R));
    CALL(ovl_dmat_destroy(&A));
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
    CALL(ovl_dmat_write_raw(coin() ? A : NULL, p, coin()));
    CALL(ovl_dmat_write_mtx(A, path(), coin()));
    ovl_machine m = ovl_machine_stampede2();
    CALL(ovl_machine_write(coin() ? &m : NULL, path()));
    CALL(ovl_file_check_read(path(), str(), i64()));
    CALL(ovl_file_check_write(path(), str(), NULL, 0));
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
    const char *t = PICK(k_json);
    ovl_err rc = ovl_json_parse(coin() ? t : NULL, strlen(t), str(), str(), &doc);
    check_rc("ovl_json_parse", rc);
    if (rc == OVL_OK) {
      CALL(ovl_json_root_object(&doc, str()));
      const cJSON *o = doc.root;
      double v, vs[3];
      int64_t iv;
      int b, cnt, dup;
      char buf[32];
      (void)ovl_json_find(o, PICK(k_keys), &dup);
      CALL(ovl_json_num(&doc, o, PICK(k_keys), &v));
      CALL(ovl_json_num_opt(&doc, o, PICK(k_keys), dbl(), &v));
      CALL(ovl_json_int(&doc, o, PICK(k_keys), i64(), i64(), &iv));
      CALL(ovl_json_int_opt(&doc, o, PICK(k_keys), i64(), i64(), i64(), &iv));
      CALL(ovl_json_str(&doc, o, PICK(k_keys), buf, 1 + (size_t)pick(32)));
      CALL(ovl_json_str_opt(&doc, o, PICK(k_keys), str(), buf, 1 + (size_t)pick(32)));
      CALL(ovl_json_bool(&doc, o, PICK(k_keys), &b));
      CALL(ovl_json_bool_opt(&doc, o, PICK(k_keys), coin(), &b));
      CALL(ovl_json_nums(&doc, o, PICK(k_keys), vs, pick(4), &cnt));
      const char *keys[] = {PICK(k_keys), "a", NULL};
      CALL(ovl_json_only_keys(&doc, o, keys));
      ovl_json_text(o, buf, 1 + (size_t)pick(32));
      (void)ovl_json_equal(o, o);
    }
    ovl_json_free(&doc);
    ovl_json_free(NULL);
    CALL(ovl_json_load(path(), str(), (size_t)pick(1 << 12), &doc));
    ovl_json_free(&doc);
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
    CALL(ovl_record_create(str(), coin() ? &rec : NULL));
    ovl_record *h = coin() ? rec : NULL;
    double v[3] = {dbl(), dbl(), dbl()};
    CALL(ovl_record_set_num(h, str(), dbl()));
    CALL(ovl_record_set_int(h, str(), i64()));
    CALL(ovl_record_set_str(h, str(), str()));
    CALL(ovl_record_set_bool(h, str(), en()));
    CALL(ovl_record_set_null(h, str()));
    CALL(ovl_record_set_nums(h, str(), coin() ? v : NULL, pick(5) - 1));
    CALL(ovl_record_create("s", &sub));
    CALL(ovl_record_set_record(h, str(), coin() ? &sub : NULL));
    ovl_record_destroy(&sub);
    CALL(ovl_record_create("s", &sub));
    CALL(ovl_record_append_record(h, str(), &sub));
    ovl_record_destroy(&sub);
    char *text = NULL;
    CALL(ovl_record_text(h, coin() ? &text : NULL));
    free(text);
    CALL(ovl_record_fprint(h, NULL, iint()));
    CALL(ovl_record_print(h, NULL));
    ovl_record_destroy(&rec);
    ovl_record_destroy(&rec);
    ovl_record_destroy(NULL);
  }
}

static void d_dense(void) {
  for (int r = 0; r < g_rounds / 2; r++) {
    MPI_Comm c = comm();
    const void *cp = coin() ? (const void *)&c : NULL;
    double F[4] = {1, 0, 0, 2}, D[4];
    int64_t n = pick(3) ? 2 : i64();
    CALL(ovl_purify_dense(cp, n, coin() ? F : NULL, pick(2) ? 1 : i64(), str(), str(), iint(), str(), dbl(), iint(),
                          coin() ? D : NULL, str(), NULL));
    CALL(ovl_gemm_dense(cp, pick(3) ? 2 : i64(), pick(3) ? 2 : i64(), pick(3) ? 2 : i64(), coin() ? F : NULL, F,
                        coin() ? D : NULL, str(), str(), NULL));
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
    CALL(ovl_check_handle(coin() ? "h" : NULL, str(), str()));
    CALL(ovl_check_ptr(coin() ? "p" : NULL, str(), str()));
    int64_t bytes;
    int a, b, c;
    CALL(ovl_check_memory(comm(), i64(), i64()));
    CALL(ovl_bench_check_memory(comm(), dbl(), i64()));
    CALL(ovl_mem_available(coin() ? &bytes : NULL));
    CALL(ovl_bench_node_info(comm(), coin() ? &a : NULL, &b, &c));
    int64_t sizes[8];
    int n;
    CALL(ovl_bench_sizes(i64(), i64(), coin() ? sizes : NULL, pick(9), &n));
    char buf[64];
    CALL(ovl_mpi_library(coin() ? buf : NULL, (size_t)pick(64)));
    ovl_stats st;
    double t[3] = {dbl(), dbl(), dbl()};
    CALL(ovl_stats_max_over_ranks(comm(), coin() ? t : NULL, pick(4) - 1, coin() ? &st : NULL));
    (void)ovl_stats_of(t, pick(4));
    CALL(ovl_pdgemm_config(iint(), (ovl_backend)en(), i64()));
    ovl_backend be;
    int64_t panel;
    CALL(ovl_pdgemm_get_config(coin() ? &a : NULL, &be, &panel));
    CALL(ovl_pdgemm_config(0, OVL_BACKEND_MPI, 0));
    ovl_plan pl = ovl_plan_default((ovl_algo)en(), i64(), iint());
    CALL(ovl_plan_check(coin() ? &pl : NULL, (ovl_family)en(), coin()));
    ovl_plan pl2 = ovl_plan_auto((ovl_family)en(), i64());
    (void)ovl_plan_is_open(&pl2);
    (void)ovl_plan_same(&pl, &pl2);
    (void)ovl_plan_str(&pl, buf, (size_t)pick(64));
    (void)ovl_plan_describe(&pl, buf, (size_t)pick(64));
    (void)ovl_plan_short(&pl, buf, (size_t)pick(64));
    ovl_purify_opts po = ovl_purify_opts_default();
    CALL(ovl_options_apply(str(), str(), coin(), (ovl_family)en(), coin() ? &pl : NULL, coin() ? &po : NULL));
    CALL(ovl_options_runtime(comm(), str(), (ovl_family)(pick(3) ? pick(2) : en()), &pl, &po));
    ovl_tune_params tp = ovl_tune_default((ovl_family)en(), i64());
    CALL(ovl_tune_check(coin() ? &tp : NULL));
    int found;
    int64_t nf;
    CALL(ovl_tunedb_lookup(path(), (ovl_family)en(), i64(), iint(), coin() ? &pl : NULL, &nf, &found));
    ovl_fock_meta fm;
    CALL(ovl_fock_meta_read(comm(), path(), coin() ? &fm : NULL));
    (void)ovl_purify_memory(i64(), iint(), iint(), coin() ? &po : NULL);
  }
}

static void d_core(void) {
  const size_t k_bytes[] = {0, 1, 64, SIZE_MAX, SIZE_MAX / 2, (size_t)INT64_MAX + 1};
  int threads = ovl_blas_threads_get();
  ovl_log_level lv = ovl_log_get_level();
  for (int r = 0; r < g_rounds; r++) {
    void *p = NULL;
    CALL(ovl_malloc(PICK(k_bytes), coin() ? &p : NULL));
    ovl_free(&p);
    CALL(ovl_calloc(PICK(k_bytes), coin() ? &p : NULL));
    ovl_free(&p);
    ovl_free(NULL);
    const int k_mpi[] = {MPI_SUCCESS, MPI_ERR_COMM, MPI_ERR_ARG, MPI_ERR_OTHER, -1, INT_MAX};
    CALL(ovl_err_mpi(PICK(k_mpi), str()));
    int64_t v[4] = {i64(), i64(), i64(), i64()};
    const char *names[4] = {str(), "b", str(), "d"};
    ovl_err local = (ovl_err)pick(10);
    if (local != OVL_OK) ovl_err_set(local, "a local failure");
    CALL(ovl_err_agree_same(comm(), local, coin() ? v : NULL, coin() ? names : NULL, pick(5)));
    ovl_err_clear();
    NAME(ovl_errmsg());
    (void)ovl_world_rank();
    (void)ovl_time();
    ovl_log_set_level((ovl_log_level)en());
    (void)ovl_log_get_level();
    ovl_log_set_level(OVL_LOG_QUIET);
    CALL(ovl_blas_threads_set(iint()));
    (void)ovl_blas_threads_get();
    int cores;
    CALL(ovl_node_cores(comm(), coin() ? &cores : NULL));
    ovl_plan pl = ovl_plan_auto((ovl_family)(pick(3) ? pick(2) : en()), pick(3) ? 1 + pick(64) : i64());
    if (pick(3) == 0) pl = ovl_plan_default((ovl_algo)en(), i64(), iint());
    ovl_plan_src src = {path(), path()};
    char why[128];
    int ppn = pick(3) - 1;
    CALL(ovl_plan_resolve(comm(), (ovl_family)(pick(3) ? pick(2) : en()), coin() ? &pl : NULL, coin() ? &src : NULL,
                          coin() ? why : NULL, sizeof why));
    CALL(ovl_plan_resolve_ppn(comm(), (ovl_family)pick(2), &pl, coin() ? &ppn : NULL, NULL, why, sizeof why));
    ovl_grid2d g2 = NULL;
    ovl_grid3d g3 = NULL;
    CALL(ovl_plan_grids(comm(), coin() ? &pl : NULL, coin(), coin() ? &g2 : NULL, coin() ? &g3 : NULL));
    ovl_grid2d_destroy(&g2);
    ovl_grid3d_destroy(&g3);
    CALL(ovl_tunedb_store(path(), (ovl_family)en(), coin() ? &pl : NULL, dbl(), str()));
  }
  ovl_blas_threads_set(threads);
  ovl_log_set_level(lv);
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
  char cmd[700];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
  T_CHECK(system(cmd) == 0, "%s", cmd);
  int rc = t_finish("test_random_api");
  MPI_Finalize();
  return rc;
}
