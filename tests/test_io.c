/* Matrix files: raw (MPI-IO + JSON sidecar) and Matrix Market round trips on
 * several grids, hand-written files, bad inputs (same error on every rank),
 * atomic writes. Files live in /tmp/ovl_test_io_<pid of rank 0>. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ovl/ovl.h"
#include "ovltest.h"

static int g_rank = 0, g_size = 1;
static char g_dir[256];

enum { NGRIDS_MAX = 4 };
static ovl_grid2d g_grids[NGRIDS_MAX];
static const char *g_grid_names[NGRIDS_MAX];
static int g_ngrids = 0;

/* ---- helpers -------------------------------------------------------------- */

static void tpath(char *buf, size_t n, const char *name) { snprintf(buf, n, "%s/%s", g_dir, name); }

/* Rank 0 writes len bytes to <dir>/name; everyone waits. */
static void put_bytes(const char *name, const void *data, size_t len) {
  if (g_rank == 0) {
    char p[512];
    tpath(p, sizeof p, name);
    FILE *f = fopen(p, "wb");
    int ok = f != NULL && fwrite(data, 1, len, f) == len;
    if (f) ok = (fclose(f) == 0) && ok;
    T_CHECK(ok, "cannot write test file %s", p);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

static void put_text(const char *name, const char *text) { put_bytes(name, text, strlen(text)); }

/* Little-endian float64 bytes of x (the host is checked to be little-endian
 * in main). */
static void put_doubles(const char *name, const double *x, size_t n) { put_bytes(name, x, n * sizeof(double)); }

/* 1 when <dir>/name exists (checked on rank 0, broadcast). */
static int exists(const char *name) {
  int e = 0;
  if (g_rank == 0) {
    char p[512];
    struct stat st;
    tpath(p, sizeof p, name);
    e = stat(p, &st) == 0;
  }
  MPI_Bcast(&e, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return e;
}

/* Number of "*.tmp.*" entries left in the directory dir (rank 0, broadcast). */
static int count_tmp_in(const char *dir) {
  int n = 0;
  if (g_rank == 0) {
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL)
      if (strstr(e->d_name, ".tmp.")) n++;
    if (d) closedir(d);
  }
  MPI_Bcast(&n, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return n;
}
static int count_tmp(void) { return count_tmp_in(g_dir); }

/* Check code == want on this rank and that ovl_errmsg() is the same text as
 * on rank 0 of MPI_COMM_WORLD; optionally that it contains needle. */
static void check_err_(ovl_err got, ovl_err want, const char *needle, const char *call, int line) {
  char msg[1024], root[1024];
  snprintf(msg, sizeof msg, "%s", ovl_errmsg());
  memcpy(root, msg, sizeof root);
  MPI_Bcast(root, (int)sizeof root, MPI_CHAR, 0, MPI_COMM_WORLD);
  T_CHECK(got == want, "line %d: %s returned %s, expected %s (%s)", line, call, ovl_err_name(got), ovl_err_name(want),
          msg);
  if (g_rank == 0 && getenv("OVL_TEST_IO_VERBOSE")) printf("line %d: %s: %s\n", line, ovl_err_name(got), msg);
  if (want != OVL_OK) {
    T_CHECK(strcmp(msg, root) == 0, "line %d: %s: message differs from rank 0: '%s' vs '%s'", line, call, msg, root);
    T_CHECK(msg[0] != '\0', "line %d: %s: empty error message", line, call);
    if (needle) T_CHECK(strstr(msg, needle) != NULL, "line %d: %s: message '%s' lacks '%s'", line, call, msg, needle);
  }
}
#define T_ERR_ALL(call, code, needle) check_err_((call), (code), (needle), #call, __LINE__)

/* Entry (i, j) expected for a fill kind. */
static double fill_expect(ovl_fill_kind kind, uint64_t seed, int64_t i, int64_t j) {
  if (kind == OVL_FILL_SYMMETRIC) return i <= j ? ovl_fill_value(seed, i, j) : ovl_fill_value(seed, j, i);
  return ovl_fill_value(seed, i, j);
}

/* Every local entry of A equals the fill (exactly: files keep all bits). */
static void check_fill(ovl_dmat A, int64_t m, int64_t n, ovl_fill_kind kind, uint64_t seed, const char *what) {
  T_CHECK(A != NULL, "%s: no matrix", what);
  if (A == NULL) return;
  T_CHECK(ovl_dmat_rows(A) == m && ovl_dmat_cols(A) == n,
          "%s: got %" PRId64 " x %" PRId64 ", expected %" PRId64 " x %" PRId64, what, ovl_dmat_rows(A),
          ovl_dmat_cols(A), m, n);
  int bad = 0;
  const double *a = ovl_dmat_data(A);
  int64_t ld = ovl_dmat_ld(A), ro = ovl_dmat_row_off(A), co = ovl_dmat_col_off(A);
  for (int64_t c = 0; c < ovl_dmat_local_cols(A); c++)
    for (int64_t r = 0; r < ovl_dmat_local_rows(A); r++)
      if (a[r + c * ld] != fill_expect(kind, seed, ro + r, co + c)) bad++;
  T_CHECK(bad == 0, "%s: %d local entries differ", what, bad);
}

/* Every local entry of A equals the column-major m x n array e. */
static void check_array(ovl_dmat A, int64_t m, int64_t n, const double *e, const char *what) {
  T_CHECK(A != NULL, "%s: no matrix", what);
  if (A == NULL) return;
  T_CHECK(ovl_dmat_rows(A) == m && ovl_dmat_cols(A) == n,
          "%s: got %" PRId64 " x %" PRId64 ", expected %" PRId64 " x %" PRId64, what, ovl_dmat_rows(A),
          ovl_dmat_cols(A), m, n);
  if (ovl_dmat_rows(A) != m || ovl_dmat_cols(A) != n) return;
  int bad = 0;
  const double *a = ovl_dmat_data(A);
  int64_t ld = ovl_dmat_ld(A), ro = ovl_dmat_row_off(A), co = ovl_dmat_col_off(A);
  for (int64_t c = 0; c < ovl_dmat_local_cols(A); c++)
    for (int64_t r = 0; r < ovl_dmat_local_rows(A); r++)
      if (a[r + c * ld] != e[(ro + r) + (co + c) * m]) bad++;
  T_CHECK(bad == 0, "%s: %d local entries differ", what, bad);
}

/* Rank 0: the raw file holds the fill in row-major order, little-endian. */
static void check_raw_bytes(const char *path, int64_t m, int64_t n, uint64_t seed) {
  FILE *f = fopen(path, "rb");
  T_CHECK(f != NULL, "cannot open %s", path);
  if (f == NULL) return;
  int bad = 0;
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) {
      double v = 0;
      if (fread(&v, 8, 1, f) != 1 || v != ovl_fill_value(seed, i, j)) bad++;
    }
  T_CHECK(bad == 0 && fgetc(f) == EOF, "%s: %d entries differ from the row-major fill, or extra bytes", path, bad);
  fclose(f);
}

static void add_grid(int p, int q, int flags, const char *name) {
  ovl_grid2d g = NULL;
  T_OK(ovl_grid2d_create(MPI_COMM_WORLD, p, q, flags, &g));
  if (g == NULL) return;
  g_grids[g_ngrids] = g;
  g_grid_names[g_ngrids++] = name;
}

/* ---- raw round trips ---------------------------------------------------------- */

static void test_raw_roundtrip(void) {
  static const int64_t sizes[][2] = {{1, 1}, {7, 5}, {13, 13}, {3, 2}, {5, 1}, {0, 3}};
  const int nsizes = (int)(sizeof sizes / sizeof sizes[0]);
  for (int s = 0; s < nsizes; s++) {
    int64_t m = sizes[s][0], n = sizes[s][1];
    for (int w = 0; w < g_ngrids; w++) {
      char name[64], p[512], what[160];
      uint64_t seed = 100 + (uint64_t)(s * 10 + w);
      snprintf(name, sizeof name, "rt_%d_%d.bin", s, w);
      tpath(p, sizeof p, name);
      ovl_dmat A = NULL;
      T_OK(ovl_dmat_create(g_grids[w], m, n, &A));
      if (A == NULL) continue;
      T_OK(ovl_dmat_fill(A, OVL_FILL_RANDOM, seed));
      T_OK(ovl_dmat_write_raw(A, p, 0));
      ovl_dmat_destroy(&A);
      T_CHECK(count_tmp() == 0, "temporary files left after writing %s", name);
      if (g_rank == 0) check_raw_bytes(p, m, n, seed);
      ovl_matrix_meta meta = {-1, -1, -1};
      T_OK(ovl_raw_read_meta(MPI_COMM_WORLD, p, &meta));
      T_CHECK(meta.rows == m && meta.cols == n && meta.symmetric == 0, "%s: meta %" PRId64 " x %" PRId64 " sym %d",
              name, meta.rows, meta.cols, meta.symmetric);
      ovl_matrix_meta meta2 = {-1, -1, -1};
      T_OK(ovl_matrix_read_meta(MPI_COMM_WORLD, p, &meta2));
      T_CHECK(meta2.rows == m && meta2.cols == n && meta2.symmetric == 0, "%s: meta by extension", name);
      for (int r = 0; r < g_ngrids; r++) {
        ovl_dmat B = NULL;
        snprintf(what, sizeof what, "raw %" PRId64 "x%" PRId64 " written on %s, read on %s", m, n, g_grid_names[w],
                 g_grid_names[r]);
        if (r % 2) T_OK(ovl_dmat_read(g_grids[r], p, 0, &B)); /* dispatch: not .mtx -> raw */
        else T_OK(ovl_dmat_read_raw(g_grids[r], p, 0, &B));
        check_fill(B, m, n, OVL_FILL_RANDOM, seed, what);
        ovl_dmat_destroy(&B);
      }
    }
  }

  /* symmetric sidecar, require_symmetric, overwrite of an existing file */
  char p[512];
  tpath(p, sizeof p, "sym.bin");
  ovl_dmat A = NULL, B = NULL;
  T_OK(ovl_dmat_create(g_grids[0], 13, 13, &A));
  if (A == NULL) return;
  T_OK(ovl_dmat_fill(A, OVL_FILL_SYMMETRIC, 7));
  T_OK(ovl_dmat_write_raw(A, p, 1));
  ovl_matrix_meta meta = {-1, -1, -1};
  T_OK(ovl_raw_read_meta(MPI_COMM_WORLD, p, &meta));
  T_CHECK(meta.rows == 13 && meta.cols == 13 && meta.symmetric == 1, "sym.bin: wrong meta");
  T_OK(ovl_dmat_read_raw(g_grids[g_ngrids - 1], p, 1, &B));
  check_fill(B, 13, 13, OVL_FILL_SYMMETRIC, 7, "raw symmetric");
  ovl_dmat_destroy(&B);
  /* a general file holding symmetric data passes require_symmetric */
  T_OK(ovl_dmat_write_raw(A, p, 0));
  T_OK(ovl_dmat_read_raw(g_grids[1 % g_ngrids], p, 1, &B));
  check_fill(B, 13, 13, OVL_FILL_SYMMETRIC, 7, "raw symmetric data, general sidecar");
  ovl_dmat_destroy(&B);
  /* overwrite with different data */
  T_OK(ovl_dmat_fill(A, OVL_FILL_RANDOM, 8));
  T_OK(ovl_dmat_write_raw(A, p, 0));
  T_OK(ovl_dmat_read_raw(g_grids[0], p, 0, &B));
  check_fill(B, 13, 13, OVL_FILL_RANDOM, 8, "raw overwritten");
  ovl_dmat_destroy(&B);
  /* writing non-symmetric data as symmetric is refused */
  T_ERR_ALL(ovl_dmat_write_raw(A, p, 1), OVL_ERR_NUMERIC, "sym.bin");
  ovl_dmat_destroy(&A);
  T_CHECK(count_tmp() == 0, "temporary files left after the symmetric tests");
}

/* ---- Matrix Market --------------------------------------------------------------- */

static void test_mtx_roundtrip(void) {
  static const int64_t sizes[][2] = {{1, 1}, {7, 5}, {3, 2}, {13, 13}};
  for (int s = 0; s < 4; s++) {
    int64_t m = sizes[s][0], n = sizes[s][1];
    for (int sym = 0; sym <= (m == n); sym++) {
      int w = (s + sym) % g_ngrids, r = (s + sym + 1) % g_ngrids;
      char name[64], p[512], what[160];
      ovl_fill_kind kind = sym ? OVL_FILL_SYMMETRIC : OVL_FILL_RANDOM;
      uint64_t seed = 300 + (uint64_t)s;
      snprintf(name, sizeof name, "rt_%d_%d.mtx", s, sym);
      tpath(p, sizeof p, name);
      ovl_dmat A = NULL, B = NULL;
      T_OK(ovl_dmat_create(g_grids[w], m, n, &A));
      if (A == NULL) continue;
      T_OK(ovl_dmat_fill(A, kind, seed));
      T_OK(ovl_dmat_write_mtx(A, p, sym));
      ovl_dmat_destroy(&A);
      T_CHECK(count_tmp() == 0, "temporary files left after writing %s", name);
      snprintf(what, sizeof what, "mtx %s %" PRId64 "x%" PRId64 " written on %s, read on %s",
               sym ? "symmetric" : "general", m, n, g_grid_names[w], g_grid_names[r]);
      T_OK(ovl_dmat_read_mtx(g_grids[r], p, sym, &B));
      check_fill(B, m, n, kind, seed, what);
      ovl_dmat_destroy(&B);
      T_OK(ovl_dmat_read(g_grids[w], p, 0, &B)); /* dispatch by extension */
      check_fill(B, m, n, kind, seed, what);
      ovl_dmat_destroy(&B);
    }
  }
  /* non-symmetric data written as symmetric is refused, nothing is written */
  char p[512];
  tpath(p, sizeof p, "nosym.mtx");
  ovl_dmat A = NULL;
  T_OK(ovl_dmat_create(g_grids[0], 4, 4, &A));
  if (A) T_OK(ovl_dmat_fill(A, OVL_FILL_RANDOM, 1));
  if (A) T_ERR_ALL(ovl_dmat_write_mtx(A, p, 1), OVL_ERR_NUMERIC, "nosym.mtx");
  T_CHECK(!exists("nosym.mtx"), "nosym.mtx was written");
  ovl_dmat_destroy(&A);
}

static void test_mtx_handwritten(void) {
  static const double e_ag[] = {1, 2, 3, 4, 5, 6};                                           /* 3 x 2 */
  static const double e_as[] = {1, 2, 3, 2, 4, 5, 3, 5, 6};                                  /* 3 x 3 */
  static const double e_cg[] = {7, 0, 10, 0, 0, 0, 0, 5, 0, 0, 0, -2};                       /* 3 x 4 */
  static const double e_cs[] = {1.5, -2.25, 0, 0, -2.25, 0, 0, 3, 0, 0, 0.5, 0, 0, 3, 0, 4}; /* 4 x 4 */
  put_text("ag.mtx", "%%MatrixMarket matrix array real general\n% a comment\n%\n3 2\n1\n2\n3\n4\n5\n6\n");
  put_text("as.mtx", "%%MatrixMarket matrix array real symmetric\n3 3\n1\n2\n3\n4\n5\n6");
  put_text("cg.mtx", "%%MatrixMarket matrix coordinate integer general\n% comment\n\n3 4 4\n1 1 7\n3 4 -2\n"
                     "  2 3 5\n3 1 10\n");
  put_text("cs.mtx", "%%MatrixMarket matrix coordinate real symmetric\n% lower triangle\n4 4 5\n1 1 1.5\n2 1 -2.25\n"
                     "4 2 3e0\n3 3 .5\n4 4 4\n");
  put_text("ci.MTX", "%%matrixmarket MATRIX Coordinate Real General\r\n2 2 1\r\n2 1 -1\r\n");
  static const double e_ci[] = {0, -1, 0, 0};
  /* the sizes alone, from the header and size line */
  static const struct {
    const char *file;
    int64_t rows, cols;
    int sym;
  } sizes[] = {{"ag.mtx", 3, 2, 0}, {"as.mtx", 3, 3, 1}, {"cg.mtx", 3, 4, 0}, {"cs.mtx", 4, 4, 1}, {"ci.MTX", 2, 2, 0}};
  for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
    char p[512];
    ovl_matrix_meta a = {-1, -1, -1}, b = {-1, -1, -1};
    tpath(p, sizeof p, sizes[k].file);
    T_OK(ovl_mtx_read_meta(MPI_COMM_WORLD, p, &a));
    T_OK(ovl_matrix_read_meta(MPI_COMM_WORLD, p, &b));
    T_CHECK(a.rows == sizes[k].rows && a.cols == sizes[k].cols && a.symmetric == sizes[k].sym,
            "%s: sizes %" PRId64 " x %" PRId64 " sym %d", sizes[k].file, a.rows, a.cols, a.symmetric);
    T_CHECK(b.rows == a.rows && b.cols == a.cols && b.symmetric == a.symmetric, "%s: sizes by extension",
            sizes[k].file);
  }
  for (int k = 0; k < g_ngrids; k++) {
    char p[512];
    ovl_dmat A = NULL;
    tpath(p, sizeof p, "ag.mtx");
    T_OK(ovl_dmat_read_mtx(g_grids[k], p, 0, &A));
    check_array(A, 3, 2, e_ag, "array general");
    ovl_dmat_destroy(&A);
    tpath(p, sizeof p, "as.mtx");
    T_OK(ovl_dmat_read_mtx(g_grids[k], p, 1, &A));
    check_array(A, 3, 3, e_as, "array symmetric");
    ovl_dmat_destroy(&A);
    tpath(p, sizeof p, "cg.mtx");
    T_OK(ovl_dmat_read(g_grids[k], p, 0, &A));
    check_array(A, 3, 4, e_cg, "coordinate general (integer)");
    ovl_dmat_destroy(&A);
    tpath(p, sizeof p, "cs.mtx");
    T_OK(ovl_dmat_read_mtx(g_grids[k], p, 1, &A));
    check_array(A, 4, 4, e_cs, "coordinate symmetric");
    ovl_dmat_destroy(&A);
    tpath(p, sizeof p, "ci.MTX");
    T_OK(ovl_dmat_read(g_grids[k], p, 0, &A));
    check_array(A, 2, 2, e_ci, "case-insensitive header, CRLF");
    ovl_dmat_destroy(&A);
  }
}

/* ---- bad inputs -------------------------------------------------------------------- */

static void test_raw_bad(void) {
  ovl_grid2d g = g_grids[0];
  ovl_dmat A = NULL;
  char p[512];
  double d[16];
  for (int k = 0; k < 16; k++) d[k] = k; /* d[0..8] as 3 x 3 is not symmetric */

  /* nothing at all; data without sidecar; sidecar without data */
  tpath(p, sizeof p, "nope.bin");
  T_ERR_ALL(ovl_dmat_read_raw(g, p, 0, &A), OVL_ERR_IO, "nope.bin.json");
  T_CHECK(A == NULL, "output set on failure");
  put_doubles("noside.bin", d, 9);
  tpath(p, sizeof p, "noside.bin");
  T_ERR_ALL(ovl_dmat_read_raw(g, p, 0, &A), OVL_ERR_IO, "noside.bin.json");
  put_text("nodata.bin.json", "{\"rows\": 3, \"cols\": 3, \"symmetric\": false}");
  tpath(p, sizeof p, "nodata.bin");
  T_ERR_ALL(ovl_dmat_read_raw(g, p, 0, &A), OVL_ERR_IO, "nodata.bin");
  T_ERR_ALL(ovl_dmat_read(g, p, 0, &A), OVL_ERR_IO, "nodata.bin");

  /* the data file or the sidecar is a directory or a FIFO (must not block) */
  tpath(p, sizeof p, "fifo.bin");
  if (g_rank == 0) T_CHECK(mkfifo(p, 0666) == 0, "cannot create the FIFO %s", p);
  put_text("fifo.bin.json", "{\"rows\": 3, \"cols\": 3, \"symmetric\": false}");
  T_ERR_ALL(ovl_dmat_read_raw(g, p, 0, &A), OVL_ERR_IO, "fifo.bin");
  tpath(p, sizeof p, "fifo2.bin");
  put_doubles("fifo2.bin", d, 9);
  tpath(p, sizeof p, "fifo2.bin.json");
  if (g_rank == 0) T_CHECK(mkfifo(p, 0666) == 0, "cannot create the FIFO %s", p);
  tpath(p, sizeof p, "fifo2.bin");
  T_ERR_ALL(ovl_dmat_read_raw(g, p, 0, &A), OVL_ERR_IO, "fifo2.bin.json");
  tpath(p, sizeof p, "dir.bin");
  if (g_rank == 0) T_CHECK(mkdir(p, 0777) == 0, "cannot create %s", p);
  put_text("dir.bin.json", "{\"rows\": 3, \"cols\": 3, \"symmetric\": false}");
  T_ERR_ALL(ovl_dmat_read_raw(g, p, 0, &A), OVL_ERR_IO, "dir.bin");
  tpath(p, sizeof p, "dir.mtx");
  if (g_rank == 0) T_CHECK(mkdir(p, 0777) == 0, "cannot create %s", p);
  MPI_Barrier(MPI_COMM_WORLD);
  T_ERR_ALL(ovl_dmat_read(g, p, 0, &A), OVL_ERR_IO, "dir.mtx");

  /* sidecar garbage */
  static const char *bad_side[] = {
      "",
      "hello",
      "{}",
      "{\"rows\": 3, \"cols\": 3}",
      "{\"rows\": 3, \"symmetric\": false}",
      "{\"cols\": 3, \"symmetric\": false}",
      "{\"rows\": -3, \"cols\": 3, \"symmetric\": false}",
      "{\"rows\": 3.5, \"cols\": 3, \"symmetric\": false}",
      "{\"rows\": 1e99, \"cols\": 3, \"symmetric\": false}",
      "{\"rows\": 3., \"cols\": 3, \"symmetric\": false}",
      "{\"rows\": null, \"cols\": 3, \"symmetric\": false}",
      "{\"rows\": \"3\", \"cols\": 3, \"symmetric\": false}",
      "{\"rows\": 03, \"cols\": 3, \"symmetric\": false}",
      "{\"rows\": 3, \"cols\": 3, \"symmetric\": maybe}",
      "{\"rows\": 3, \"cols\": 3, \"symmetric\": 1}",
      "{\"rows\": 3, \"cols\": 3, \"symmetric\": false} junk",
      "{\"rows\": 3, \"cols\": 3, \"symmetric\": false}}",
      "{\"rows\": 3, \"cols\": 3, \"symmetric\": false,}",
      "{\"rows\": 3, \"cols\": 3, \"symmetric\": false",
      "{\"rows\": 3 \"cols\": 3, \"symmetric\": false}",
      "{\"rows\": 3, \"rows\": 3, \"cols\": 3, \"symmetric\": false}",
      "{\"rows\": 3, \"cols\": 3, \"symetric\": false}",
      "{\"rows\": 99999999999999999999, \"cols\": 3, \"symmetric\": false}",
      "{\"rows\": 4000000000, \"cols\": 4000000000, \"symmetric\": false}",
      "{\"rows\": 3, \"cols\": 2, \"symmetric\": true}",
      "[3, 3, false]",
  };
  put_doubles("side.bin", d, 9);
  tpath(p, sizeof p, "side.bin");
  for (size_t k = 0; k < sizeof bad_side / sizeof bad_side[0]; k++) {
    ovl_matrix_meta meta;
    put_text("side.bin.json", bad_side[k]);
    check_err_(ovl_raw_read_meta(MPI_COMM_WORLD, p, &meta), OVL_ERR_FORMAT, "side.bin.json", bad_side[k], __LINE__);
    check_err_(ovl_dmat_read_raw(g, p, 0, &A), OVL_ERR_FORMAT, "side.bin.json", bad_side[k], __LINE__);
  }
  /* binary garbage */
  static const char junk[] = "{\"rows\": 3\0, \"cols\": 3, \"symmetric\": false}";
  put_bytes("side.bin.json", junk, sizeof junk - 1);
  T_ERR_ALL(ovl_dmat_read_raw(g, p, 0, &A), OVL_ERR_FORMAT, "side.bin.json");
  /* whitespace and key order are free */
  put_text("side.bin.json", " \n{\n\t\"symmetric\" :false ,\r\n \"cols\":3,\"rows\"  :   3 }\n\n");
  ovl_matrix_meta meta = {0, 0, 0};
  T_OK(ovl_raw_read_meta(MPI_COMM_WORLD, p, &meta));
  T_CHECK(meta.rows == 3 && meta.cols == 3 && meta.symmetric == 0, "tolerant sidecar parsed wrongly");
  /* JSON numbers of integral value are integers (3.0, 3e0) */
  put_text("side.bin.json", "{\"rows\": 3.0, \"cols\": 3e0, \"symmetric\": false}");
  meta.rows = meta.cols = 0;
  T_OK(ovl_raw_read_meta(MPI_COMM_WORLD, p, &meta));
  T_CHECK(meta.rows == 3 && meta.cols == 3, "3.0 x 3e0 read as %lld x %lld", (long long)meta.rows,
          (long long)meta.cols);
  T_OK(ovl_dmat_read_raw(g, p, 0, &A));
  double dt[9]; /* the file is row-major, check_array wants column-major */
  for (int k = 0; k < 9; k++) dt[k] = d[(k % 3) * 3 + k / 3];
  check_array(A, 3, 3, dt, "tolerant sidecar");
  ovl_dmat_destroy(&A);

  /* truncated, oversized, dims contradicting the size */
  put_text("size.bin.json", "{\"rows\": 3, \"cols\": 3, \"symmetric\": false}");
  tpath(p, sizeof p, "size.bin");
  put_doubles("size.bin", d, 8);
  T_ERR_ALL(ovl_dmat_read_raw(g, p, 0, &A), OVL_ERR_FORMAT, "72");
  T_ERR_ALL(ovl_dmat_read_raw(g, p, 0, &A), OVL_ERR_FORMAT, "64");
  T_ERR_ALL(ovl_dmat_read_raw(g, p, 0, &A), OVL_ERR_FORMAT, "size.bin");
  put_doubles("size.bin", d, 10);
  T_ERR_ALL(ovl_dmat_read_raw(g, p, 0, &A), OVL_ERR_FORMAT, "80");
  put_bytes("size.bin", d, 9 * 8 - 3);
  T_ERR_ALL(ovl_dmat_read_raw(g, p, 0, &A), OVL_ERR_FORMAT, "69");
  put_doubles("size.bin", d, 9);
  T_OK(ovl_dmat_read_raw(g, p, 0, &A));
  ovl_dmat_destroy(&A);
  put_text("size.bin.json", "{\"rows\": 5, \"cols\": 5, \"symmetric\": false}");
  T_ERR_ALL(ovl_dmat_read_raw(g, p, 0, &A), OVL_ERR_FORMAT, "size.bin");
  put_text("size.bin.json", "{\"rows\": 1, \"cols\": 9, \"symmetric\": false}"); /* same bytes, other shape: fine */
  T_OK(ovl_dmat_read_raw(g, p, 0, &A));
  ovl_dmat_destroy(&A);
  put_text("size.bin.json", "{\"rows\": 0, \"cols\": 0, \"symmetric\": false}");
  T_ERR_ALL(ovl_dmat_read_raw(g, p, 0, &A), OVL_ERR_FORMAT, "size.bin");

  /* NaN and Inf */
  double x[9];
  memcpy(x, d, sizeof x);
  x[4] = NAN;
  put_text("nan.bin.json", "{\"rows\": 3, \"cols\": 3, \"symmetric\": false}");
  put_doubles("nan.bin", x, 9);
  tpath(p, sizeof p, "nan.bin");
  for (int k = 0; k < g_ngrids; k++) T_ERR_ALL(ovl_dmat_read_raw(g_grids[k], p, 0, &A), OVL_ERR_NUMERIC, "nan.bin");
  x[4] = -INFINITY;
  put_doubles("nan.bin", x, 9);
  T_ERR_ALL(ovl_dmat_read_raw(g, p, 0, &A), OVL_ERR_NUMERIC, "nan.bin");

  /* asymmetric data with a symmetric sidecar; require_symmetric */
  put_text("asym.bin.json", "{\"rows\": 3, \"cols\": 3, \"symmetric\": true}");
  put_doubles("asym.bin", d, 9);
  tpath(p, sizeof p, "asym.bin");
  for (int k = 0; k < g_ngrids; k++) T_ERR_ALL(ovl_dmat_read_raw(g_grids[k], p, 0, &A), OVL_ERR_NUMERIC, "asym.bin");
  put_text("asym.bin.json", "{\"rows\": 3, \"cols\": 3, \"symmetric\": false}");
  T_OK(ovl_dmat_read_raw(g, p, 0, &A));
  ovl_dmat_destroy(&A);
  T_ERR_ALL(ovl_dmat_read_raw(g, p, 1, &A), OVL_ERR_NUMERIC, "asym.bin");
  put_text("asym.bin.json", "{\"rows\": 1, \"cols\": 9, \"symmetric\": false}");
  T_ERR_ALL(ovl_dmat_read_raw(g, p, 1, &A), OVL_ERR_NUMERIC, "asym.bin");
  T_CHECK(A == NULL, "output set on failure");
}

static void test_mtx_bad(void) {
  ovl_grid2d g = g_grids[0];
  ovl_dmat A = NULL;
  char p[512];
  static const struct {
    const char *text;
    ovl_err code;
    const char *needle;
  } cases[] = {
      /* headers */
      {"", OVL_ERR_FORMAT, "empty"},
      {"3 3\n1\n", OVL_ERR_FORMAT, "header"},
      {"%MatrixMarket matrix array real general\n1 1\n1\n", OVL_ERR_FORMAT, "header"},
      {"%%MatrixMarket matrix array real\n1 1\n1\n", OVL_ERR_FORMAT, "line 1"},
      {"%%MatrixMarket matrix array real general extra\n1 1\n1\n", OVL_ERR_FORMAT, "line 1"},
      {"%%MatrixMarket tensor array real general\n1 1\n1\n", OVL_ERR_FORMAT, "tensor"},
      {"%%MatrixMarket matrix dense real general\n1 1\n1\n", OVL_ERR_FORMAT, "dense"},
      {"%%MatrixMarket matrix array float general\n1 1\n1\n", OVL_ERR_FORMAT, "float"},
      {"%%MatrixMarket matrix array real lower\n1 1\n1\n", OVL_ERR_FORMAT, "lower"},
      {"%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 0\n", OVL_ERR_UNSUPPORTED, "complex"},
      {"%%MatrixMarket matrix array complex general\n1 1\n1 0\n", OVL_ERR_UNSUPPORTED, "complex"},
      {"%%MatrixMarket matrix coordinate pattern general\n1 1 1\n1 1\n", OVL_ERR_UNSUPPORTED, "pattern"},
      {"%%MatrixMarket matrix coordinate real hermitian\n1 1 1\n1 1 1\n", OVL_ERR_UNSUPPORTED, "hermitian"},
      {"%%MatrixMarket matrix array real skew-symmetric\n1 1\n", OVL_ERR_UNSUPPORTED, "skew"},
      /* size line */
      {"%%MatrixMarket matrix array real general\n", OVL_ERR_FORMAT, "size"},
      {"%%MatrixMarket matrix array real general\n% only comments\n\n", OVL_ERR_FORMAT, "size"},
      {"%%MatrixMarket matrix array real general\n2 x\n1\n2\n", OVL_ERR_FORMAT, "line 2"},
      {"%%MatrixMarket matrix array real general\n2 2 4\n1\n2\n3\n4\n", OVL_ERR_FORMAT, "line 2"},
      {"%%MatrixMarket matrix coordinate real general\n2 2\n1 1 1\n", OVL_ERR_FORMAT, "line 2"},
      {"%%MatrixMarket matrix array real general\n-2 2\n", OVL_ERR_FORMAT, "line 2"},
      {"%%MatrixMarket matrix array real symmetric\n2 3\n1\n2\n3\n4\n5\n", OVL_ERR_FORMAT, "square"},
      {"%%MatrixMarket matrix array real general\n100000 100000\n1\n2\n", OVL_ERR_FORMAT, "truncated"},
      {"%%MatrixMarket matrix coordinate real general\n100000000 100000000 100000000\n1 1 1\n", OVL_ERR_FORMAT,
       "truncated"},
      /* entries */
      {"%%MatrixMarket matrix array real general\n3 2\n1\n2\n3\n4\n", OVL_ERR_FORMAT, "line 6"},
      {"%%MatrixMarket matrix array real symmetric\n3 3\n1\n2\n3\n4\n5\n", OVL_ERR_FORMAT, "5 of 6"},
      {"%%MatrixMarket matrix coordinate real general\n3 3 3\n1 1 1\n2 2 2\n", OVL_ERR_FORMAT, "line 4"},
      {"%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1\n2 2\n", OVL_ERR_FORMAT, "line 4"},
      {"%%MatrixMarket matrix coordinate real general\n3 3 1\n4 1 1\n", OVL_ERR_FORMAT, "line 3"},
      {"%%MatrixMarket matrix coordinate real general\n3 3 1\n1 0 1\n", OVL_ERR_FORMAT, "column index"},
      {"%%MatrixMarket matrix coordinate real general\n3 3 1\n-1 1 1\n", OVL_ERR_FORMAT, "row index"},
      {"%%MatrixMarket matrix coordinate real general\n3 3 1\n1.5 1 1\n", OVL_ERR_FORMAT, "row index"},
      {"%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1 abc\n", OVL_ERR_FORMAT, "abc"},
      {"%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1 1 1\n", OVL_ERR_FORMAT, "line 3"},
      {"%%MatrixMarket matrix coordinate real symmetric\n3 3 1\n1 2 1\n", OVL_ERR_FORMAT, "diagonal"},
      {"%%MatrixMarket matrix array real general\n1 2\n1\n2x\n", OVL_ERR_FORMAT, "2x"},
      {"%%MatrixMarket matrix array real general\n1 2\n1\n2\n3\n", OVL_ERR_FORMAT, "line 5"},
      {"%%MatrixMarket matrix array real general\n1 2\n1 2 3\n", OVL_ERR_FORMAT, "line 3"},
      {"%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 1\n2 2 2\n", OVL_ERR_FORMAT, "line 4"},
      /* values */
      {"%%MatrixMarket matrix array real general\n1 2\n1\nnan\n", OVL_ERR_NUMERIC, "NaN"},
      {"%%MatrixMarket matrix coordinate real general\n2 2 1\n2 2 -inf\n", OVL_ERR_NUMERIC, "Inf"},
      {"%%MatrixMarket matrix array real general\n1 2\n1\n1e999\n", OVL_ERR_NUMERIC, "Inf"},
  };
  tpath(p, sizeof p, "bad.mtx");
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    put_text("bad.mtx", cases[k].text);
    for (int r = 0; r < g_ngrids; r += 2) {
      char what[128];
      snprintf(what, sizeof what, "case %zu", k);
      check_err_(ovl_dmat_read_mtx(g_grids[r], p, 0, &A), cases[k].code, cases[k].needle, what, __LINE__);
      T_CHECK(A == NULL, "output set on failure (case %zu)", k);
    }
    /* the size reader fails on the same header and size lines (cases 0-20), and reads
     * the sizes of files whose faults come after them */
    char what[128];
    snprintf(what, sizeof what, "sizes of case %zu", k);
    ovl_matrix_meta meta = {-1, -1, -1};
    ovl_err mrc = ovl_mtx_read_meta(MPI_COMM_WORLD, p, &meta);
    if (k <= 20) check_err_(mrc, cases[k].code, cases[k].needle, what, __LINE__);
    else T_CHECK(mrc == OVL_OK && meta.rows > 0 && meta.cols > 0, "%s: %s", what, ovl_errmsg());
  }
  /* binary junk in an entry line */
  static const char junk[] = "%%MatrixMarket matrix array real general\n1 1\n1\0\n";
  put_bytes("bad.mtx", junk, sizeof junk - 1);
  T_ERR_ALL(ovl_dmat_read_mtx(g, p, 0, &A), OVL_ERR_FORMAT, "NUL");
  /* missing file; require_symmetric on a general file */
  tpath(p, sizeof p, "nope.mtx");
  T_ERR_ALL(ovl_dmat_read_mtx(g, p, 0, &A), OVL_ERR_IO, "nope.mtx");
  T_ERR_ALL(ovl_dmat_read(g, p, 0, &A), OVL_ERR_IO, "nope.mtx");
  ovl_matrix_meta none = {-1, -1, -1};
  T_ERR_ALL(ovl_mtx_read_meta(MPI_COMM_WORLD, p, &none), OVL_ERR_IO, "nope.mtx");
  T_ERR_ALL(ovl_matrix_read_meta(MPI_COMM_WORLD, p, &none), OVL_ERR_IO, "nope.mtx");
  T_ERR_ALL(ovl_mtx_read_meta(MPI_COMM_WORLD, "", &none), OVL_ERR_ARG, "non-empty path");
  tpath(p, sizeof p, "ag.mtx"); /* from test_mtx_handwritten: 3 x 2 */
  T_ERR_ALL(ovl_dmat_read_mtx(g, p, 1, &A), OVL_ERR_NUMERIC, "ag.mtx");
  put_text("gen.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 2 1\n2 1 2\n");
  tpath(p, sizeof p, "gen.mtx");
  T_ERR_ALL(ovl_dmat_read_mtx(g, p, 1, &A), OVL_ERR_NUMERIC, "gen.mtx");
  put_text("gen.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 2 1\n2 1 1\n");
  T_OK(ovl_dmat_read_mtx(g, p, 1, &A));
  ovl_dmat_destroy(&A);
}

/* ---- atomic writes ------------------------------------------------------------------- */

static void test_atomic(void) {
  ovl_dmat A = NULL;
  char p[512], sub[512];
  T_OK(ovl_dmat_create(g_grids[0], 6, 4, &A));
  if (A == NULL) return;
  T_OK(ovl_dmat_fill(A, OVL_FILL_RANDOM, 11));

  /* a directory that does not exist */
  tpath(p, sizeof p, "nodir/out.bin");
  T_ERR_ALL(ovl_dmat_write_raw(A, p, 0), OVL_ERR_IO, "out.bin");
  tpath(p, sizeof p, "nodir/out.mtx");
  T_ERR_ALL(ovl_dmat_write_mtx(A, p, 0), OVL_ERR_IO, "out.mtx");
  T_CHECK(!exists("nodir"), "nodir was created");

  /* the target is a directory: everything is written, the final rename
   * fails, and neither the temporary nor the sidecar remains */
  tpath(sub, sizeof sub, "isdir.bin");
  if (g_rank == 0) T_CHECK(mkdir(sub, 0777) == 0, "cannot create %s", sub);
  MPI_Barrier(MPI_COMM_WORLD);
  T_ERR_ALL(ovl_dmat_write_raw(A, sub, 0), OVL_ERR_IO, "isdir.bin");
  T_CHECK(!exists("isdir.bin.json"), "sidecar left after a failed write");
  T_ERR_ALL(ovl_dmat_write_mtx(A, sub, 0), OVL_ERR_IO, "isdir.bin");
  T_CHECK(count_tmp() == 0, "temporary files left after failed writes");
  T_CHECK(count_tmp_in(sub) == 0, "temporary files left in %s", sub);

  /* a read-only directory (skipped as root, who can write anyway) */
  tpath(sub, sizeof sub, "ro");
  int root = geteuid() == 0;
  MPI_Bcast(&root, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (!root) {
    if (g_rank == 0) T_CHECK(mkdir(sub, 0555) == 0, "cannot create %s", sub);
    MPI_Barrier(MPI_COMM_WORLD);
    tpath(p, sizeof p, "ro/out.bin");
    T_ERR_ALL(ovl_dmat_write_raw(A, p, 0), OVL_ERR_IO, "out.bin");
    T_CHECK(count_tmp_in(sub) == 0, "temporary files left in %s", sub);
    if (g_rank == 0) chmod(sub, 0755);
    MPI_Barrier(MPI_COMM_WORLD);
  }

  /* successful writes leave exactly the file and its sidecar */
  tpath(p, sizeof p, "ok.bin");
  T_OK(ovl_dmat_write_raw(A, p, 0));
  tpath(p, sizeof p, "ok.mtx");
  T_OK(ovl_dmat_write_mtx(A, p, 0));
  T_CHECK(exists("ok.bin") && exists("ok.bin.json") && exists("ok.mtx"), "written files missing");
  T_CHECK(!exists("ok.mtx.json"), "a Matrix Market file got a sidecar");
  T_CHECK(count_tmp() == 0, "temporary files left after successful writes");

  /* a data file and a sidecar that were not written together: the new
   * sidecar of a 4 x 6 matrix beside the old data of the 6 x 4 one (same
   * size, another shape), or one changed value, is refused by its checksum */
  ovl_dmat T = NULL, B = NULL;
  char q[512], side[600], keep[600];
  tpath(q, sizeof q, "pair.bin");
  T_OK(ovl_dmat_create(g_grids[0], 4, 6, &T));
  if (T) {
    T_OK(ovl_dmat_fill(T, OVL_FILL_RANDOM, 12));
    T_OK(ovl_dmat_write_raw(T, q, 0));
    snprintf(side, sizeof side, "%s.json", q);
    snprintf(keep, sizeof keep, "%s/keep.json", g_dir);
    if (g_rank == 0) T_CHECK(rename(side, keep) == 0, "cannot move %s", side);
    T_OK(ovl_dmat_write_raw(A, q, 0)); /* 6 x 4: the same number of bytes */
    if (g_rank == 0) T_CHECK(rename(keep, side) == 0, "cannot move %s back", keep);
    MPI_Barrier(MPI_COMM_WORLD);
    T_ERR_ALL(ovl_dmat_read_raw(g_grids[g_ngrids - 1], q, 0, &B), OVL_ERR_FORMAT, "not written together");
    T_CHECK(B == NULL, "a mismatched pair gave a matrix");
    /* the matching pair reads; one value changed in place is refused */
    T_OK(ovl_dmat_write_raw(T, q, 0));
    T_OK(ovl_dmat_read_raw(g_grids[0], q, 0, &B));
    ovl_dmat_destroy(&B);
    if (g_rank == 0) {
      FILE *f = fopen(q, "r+b");
      double v = 0.5;
      T_CHECK(f && fseek(f, 8 * 7, SEEK_SET) == 0 && fwrite(&v, 8, 1, f) == 1, "cannot change %s", q);
      if (f) fclose(f);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    T_ERR_ALL(ovl_dmat_read_raw(g_grids[0], q, 0, &B), OVL_ERR_FORMAT, "checksum");
    ovl_dmat_destroy(&T);
  }
  ovl_dmat_destroy(&A);
}

/* Rank 0 removes the test directory (one level of subdirectories). */
static void cleanup(void) {
  if (g_rank == 0) {
    DIR *d = opendir(g_dir);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
      if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
      char p[768];
      struct stat st;
      snprintf(p, sizeof p, "%s/%s", g_dir, e->d_name);
      if (stat(p, &st) == 0 && S_ISDIR(st.st_mode)) {
        DIR *d2 = opendir(p);
        struct dirent *e2;
        while (d2 && (e2 = readdir(d2)) != NULL) {
          char p2[1024];
          if (strcmp(e2->d_name, ".") == 0 || strcmp(e2->d_name, "..") == 0) continue;
          snprintf(p2, sizeof p2, "%s/%s", p, e2->d_name);
          unlink(p2);
        }
        if (d2) closedir(d2);
        rmdir(p);
      } else {
        unlink(p);
      }
    }
    if (d) closedir(d);
    T_CHECK(rmdir(g_dir) == 0, "cannot remove %s", g_dir);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  const uint16_t one = 1;
  unsigned char le = 0;
  memcpy(&le, &one, 1);
  T_CHECK(le == 1, "this test writes raw files in host order and needs a little-endian host");

  if (g_rank == 0) {
    snprintf(g_dir, sizeof g_dir, "/tmp/ovl_test_io_%ld", (long)getpid());
    T_CHECK(mkdir(g_dir, 0777) == 0, "cannot create %s", g_dir);
  }
  MPI_Bcast(g_dir, (int)sizeof g_dir, MPI_CHAR, 0, MPI_COMM_WORLD);

  add_grid(0, 0, 0, "auto grid");
  add_grid(1, g_size, 0, "1 x P grid");
  add_grid(g_size, 1, 0, "P x 1 grid");
  if (g_size > 1) add_grid(1, g_size - 1, OVL_GRID_ALLOW_IDLE, "1 x (P-1) grid with an idle rank");

  int setup_errors = t_errors_;
  MPI_Allreduce(MPI_IN_PLACE, &setup_errors, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (g_ngrids > 0 && setup_errors == 0) {
    test_raw_roundtrip();
    test_mtx_roundtrip();
    test_mtx_handwritten();
    test_raw_bad();
    test_mtx_bad();
    test_atomic();
  }
  cleanup();
  for (int k = 0; k < g_ngrids; k++) ovl_grid2d_destroy(&g_grids[k]);
  int rc = t_finish("test_io");
  MPI_Finalize();
  return rc;
}
