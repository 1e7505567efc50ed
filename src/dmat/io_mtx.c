/* Matrix Market files ("matrix array|coordinate real|integer
 * general|symmetric"): read on rank 0 of the parent into a global
 * column-major array and scattered; written from rank 0 after a gather, in
 * array format, atomically. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "dmat/dmat_impl.h"
#include "dmat/io_util.h"

static const char mm_expected[] = "%%MatrixMarket matrix array|coordinate real|integer general|symmetric";

typedef struct mm_reader {
  FILE *f;
  const char *path;
  char *line;
  size_t cap;
  int64_t lineno;
  int integer; /* the header's field is integer: every value must be one */
} mm_reader;

/* Read the next line (the next data line when skip is set: not blank, not a
 * '%' comment). Returns OVL_OK with *eof = 0 or 1, or an error. */
static ovl_err mm_next(mm_reader *r, int skip, int *eof) {
  for (;;) {
    ssize_t n = getline(&r->line, &r->cap, r->f);
    if (n < 0) {
      if (ferror(r->f)) return ovl_err_set(OVL_ERR_IO, "cannot read '%s': %s", r->path, strerror(errno ? errno : EIO));
      *eof = 1;
      return OVL_OK;
    }
    r->lineno++;
    if (strlen(r->line) != (size_t)n)
      return ovl_err_set(OVL_ERR_FORMAT, "'%s' line %" PRId64 ": unexpected NUL byte", r->path, r->lineno);
    *eof = 0;
    if (!skip) return OVL_OK;
    const char *p = r->line;
    while (isspace((unsigned char)*p)) p++;
    if (*p != '\0' && *p != '%') return OVL_OK;
  }
}

/* Next whitespace-separated token of *p (NUL-terminated in place), or NULL. */
static char *mm_tok(char **p) {
  char *s = *p;
  while (*s && isspace((unsigned char)*s)) s++;
  if (*s == '\0') {
    *p = s;
    return NULL;
  }
  char *t = s;
  while (*s && !isspace((unsigned char)*s)) s++;
  if (*s) *s++ = '\0';
  *p = s;
  return t;
}

static int parse_i64(const char *t, int64_t *v) {
  char *end = NULL;
  if (t == NULL || !(isdigit((unsigned char)t[0]) || t[0] == '-' || t[0] == '+')) return 0;
  errno = 0;
  long long x = strtoll(t, &end, 10);
  if (errno != 0 || end == t || *end != '\0') return 0;
  *v = (int64_t)x;
  return 1;
}

static int parse_f64(const char *t, double *v) {
  char *end = NULL;
  if (t == NULL) return 0;
  double x = strtod(t, &end);
  if (end == t || *end != '\0') return 0;
  *v = x;
  return 1;
}

static ovl_err mm_header(mm_reader *r, int *coord, int *sym) {
  int eof = 0;
  OVL_TRY(mm_next(r, 0, &eof));
  if (eof) return ovl_err_set(OVL_ERR_FORMAT, "'%s' is empty; expected a header '%s'", r->path, mm_expected);
  char *p = r->line, *tok[6];
  int nt = 0;
  while (nt < 6 && (tok[nt] = mm_tok(&p)) != NULL) nt++;
  if (nt == 0 || strcasecmp(tok[0], "%%MatrixMarket") != 0)
    return ovl_err_set(OVL_ERR_FORMAT, "'%s' line 1: not a Matrix Market header; expected '%s'", r->path, mm_expected);
  if (nt != 5)
    return ovl_err_set(OVL_ERR_FORMAT, "'%s' line 1: the header has %s%d words; expected '%s'", r->path,
                       nt > 5 ? "more than " : "", nt > 5 ? 5 : nt, mm_expected);
  if (strcasecmp(tok[1], "matrix") != 0)
    return ovl_err_set(OVL_ERR_FORMAT, "'%s' line 1: unknown object '%s'; expected '%s'", r->path, tok[1], mm_expected);
  if (strcasecmp(tok[2], "array") == 0) *coord = 0;
  else if (strcasecmp(tok[2], "coordinate") == 0) *coord = 1;
  else
    return ovl_err_set(OVL_ERR_FORMAT, "'%s' line 1: unknown format '%s'; expected '%s'", r->path, tok[2], mm_expected);
  if (strcasecmp(tok[3], "complex") == 0 || strcasecmp(tok[3], "pattern") == 0)
    return ovl_err_set(OVL_ERR_UNSUPPORTED, "'%s': Matrix Market field '%s' is not supported (only real and integer)",
                       r->path, tok[3]);
  if (strcasecmp(tok[3], "real") != 0 && strcasecmp(tok[3], "integer") != 0 && strcasecmp(tok[3], "double") != 0)
    return ovl_err_set(OVL_ERR_FORMAT, "'%s' line 1: unknown field '%s'; expected '%s'", r->path, tok[3], mm_expected);
  r->integer = strcasecmp(tok[3], "integer") == 0;
  if (strcasecmp(tok[4], "skew-symmetric") == 0 || strcasecmp(tok[4], "hermitian") == 0)
    return ovl_err_set(OVL_ERR_UNSUPPORTED,
                       "'%s': Matrix Market symmetry '%s' is not supported (only general and symmetric)", r->path,
                       tok[4]);
  if (strcasecmp(tok[4], "general") == 0) *sym = 0;
  else if (strcasecmp(tok[4], "symmetric") == 0) *sym = 1;
  else
    return ovl_err_set(OVL_ERR_FORMAT, "'%s' line 1: unknown symmetry '%s'; expected '%s'", r->path, tok[4],
                       mm_expected);
  return OVL_OK;
}

/* Bytes left in the file after the current position, or -1 if unknown. */
static int64_t mm_bytes_left(FILE *f) {
  struct stat st;
  off_t pos = ftello(f);
  if (pos < 0 || fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) return -1;
  return (int64_t)st.st_size - (int64_t)pos;
}

/* Parse the entries into the m x n column-major array g (zeroed). */
/* One value of an entry: a number, an integer in an integer file. */
static ovl_err mm_value(const mm_reader *r, const char *t, double *v) {
  int64_t i = 0;
  if (r->integer && !parse_i64(t, &i))
    return ovl_err_set(OVL_ERR_FORMAT, "'%s' line %" PRId64 ": '%s' is not an integer (the header's field is integer)",
                       r->path, r->lineno, t);
  if (r->integer) return *v = (double)i, OVL_OK;
  if (!parse_f64(t, v))
    return ovl_err_set(OVL_ERR_FORMAT, "'%s' line %" PRId64 ": '%s' is not a number", r->path, r->lineno, t);
  return OVL_OK;
}

static ovl_err mm_entries(mm_reader *r, int coord, int sym, int64_t m, int64_t n, int64_t count, double *g) {
  int64_t k = 0, ai = 0, aj = 0; /* array format: next position (ai, aj) */
  int eof = 0;
  while (k < count) {
    OVL_TRY(mm_next(r, 1, &eof));
    if (eof)
      return ovl_err_set(OVL_ERR_FORMAT,
                         "'%s' is truncated: it ends at line %" PRId64 " after %" PRId64 " of %" PRId64 " entries",
                         r->path, r->lineno, k, count);
    char *p = r->line, *t;
    if (coord) {
      char *ti = mm_tok(&p), *tj = mm_tok(&p), *tv = mm_tok(&p);
      int64_t ri = 0, cj = 0;
      double v = 0;
      if (tv == NULL)
        return ovl_err_set(OVL_ERR_FORMAT, "'%s' line %" PRId64 ": expected 'row column value'", r->path, r->lineno);
      if ((t = mm_tok(&p)) != NULL)
        return ovl_err_set(OVL_ERR_FORMAT, "'%s' line %" PRId64 ": unexpected '%s' after the entry", r->path, r->lineno,
                           t);
      if (!parse_i64(ti, &ri) || ri < 1 || ri > m)
        return ovl_err_set(OVL_ERR_FORMAT, "'%s' line %" PRId64 ": row index '%s' is not in 1..%" PRId64, r->path,
                           r->lineno, ti, m);
      if (!parse_i64(tj, &cj) || cj < 1 || cj > n)
        return ovl_err_set(OVL_ERR_FORMAT, "'%s' line %" PRId64 ": column index '%s' is not in 1..%" PRId64, r->path,
                           r->lineno, tj, n);
      OVL_TRY(mm_value(r, tv, &v));
      if (sym && ri < cj)
        return ovl_err_set(OVL_ERR_FORMAT,
                           "'%s' line %" PRId64 ": entry (%" PRId64 ", %" PRId64
                           ") is above the diagonal; a symmetric file stores the lower triangle",
                           r->path, r->lineno, ri, cj);
      ri--, cj--;
      g[ri + cj * m] += v; /* duplicates add up */
      if (sym && ri != cj) g[cj + ri * m] += v;
      k++;
      continue;
    }
    /* array: one or more values per line, column by column (lower triangle
     * only when symmetric) */
    while (k < count && (t = mm_tok(&p)) != NULL) {
      double v = 0;
      OVL_TRY(mm_value(r, t, &v));
      g[ai + aj * m] = v;
      if (sym) g[aj + ai * m] = v;
      k++;
      if (++ai == m) aj++, ai = sym ? aj : 0;
    }
    if ((t = mm_tok(&p)) != NULL)
      return ovl_err_set(OVL_ERR_FORMAT, "'%s' line %" PRId64 ": unexpected '%s' after the last of %" PRId64 " entries",
                         r->path, r->lineno, t, count);
  }
  OVL_TRY(mm_next(r, 1, &eof));
  if (!eof)
    return ovl_err_set(OVL_ERR_FORMAT, "'%s' line %" PRId64 ": unexpected data after the last of %" PRId64 " entries",
                       r->path, r->lineno, count);
  return OVL_OK;
}

/* The header and the size line: the format, symmetry, sizes and the number
 * of entries that follow; max_elems > 0 refuses more than max_elems entries
 * in the matrix (OVL_ERR_SIZE). The one size-line parser of the Matrix Market
 * files. */
static ovl_err mm_sizes(mm_reader *r, int64_t max_elems, int *coord, int *sym, int64_t *m, int64_t *n, int64_t *count) {
  int eof = 0;
  const char *path = r->path;
  *m = *n = *count = 0;
  *coord = *sym = 0;
  ovl_err rc = mm_header(r, coord, sym);
  if (rc == OVL_OK) rc = mm_next(r, 1, &eof);
  if (rc == OVL_OK && eof)
    rc = ovl_err_set(OVL_ERR_FORMAT, "'%s' is truncated: no size line after the header (line %" PRId64 ")", path,
                     r->lineno);
  if (rc == OVL_OK) {
    char *p = r->line, *t[4];
    int nt = 0, want = *coord ? 3 : 2;
    while (nt < 4 && (t[nt] = mm_tok(&p)) != NULL) nt++;
    int64_t nz = 0;
    if (nt != want || !parse_i64(t[0], m) || !parse_i64(t[1], n) || (*coord && !parse_i64(t[2], &nz)) || *m < 0 ||
        *n < 0 || nz < 0)
      rc = ovl_err_set(OVL_ERR_FORMAT, "'%s' line %" PRId64 ": expected the sizes '%s' as non-negative integers", path,
                       r->lineno, *coord ? "rows columns entries" : "rows columns");
    else if (*sym && *m != *n)
      rc = ovl_err_set(OVL_ERR_FORMAT,
                       "'%s' line %" PRId64 ": a symmetric matrix must be square, got %" PRId64 " x %" PRId64, path,
                       r->lineno, *m, *n);
    else if (*m > INT_MAX || *n > INT_MAX || (*n > 0 && *m > INT64_MAX / 8 / *n))
      rc = ovl_err_set(OVL_ERR_SIZE, "'%s' line %" PRId64 ": %" PRId64 " x %" PRId64 " is too large", path, r->lineno,
                       *m, *n);
    else if (max_elems > 0 && *m * *n > max_elems)
      rc = ovl_err_set(OVL_ERR_SIZE,
                       "'%s' line %" PRId64 ": %" PRId64 " x %" PRId64 " exceeds the limit of %" PRId64 " entries",
                       path, r->lineno, *m, *n, max_elems);
    if (rc == OVL_OK) *count = *coord ? nz : *sym ? *n * (*n + 1) / 2 : *m * *n; /* sizes checked above */
  }
  return rc;
}

ovl_err ovl_io_mtx_parse(FILE *f, const char *what, int64_t max_elems, int64_t *m, int64_t *n, int *sym, double **g) {
  mm_reader r = {f, what, NULL, 0, 0, 0};
  int coord = 0;
  int64_t count = 0;
  const char *path = what;
  *g = NULL;
  ovl_err rc = mm_sizes(&r, max_elems, &coord, sym, m, n, &count);
  if (rc == OVL_OK) {
    /* each entry takes at least 2 bytes ("0\n"), 6 in coordinate format:
     * before a large allocation (over 64 MiB), refuse a size line that the
     * rest of the file cannot hold (small files get the line-exact message) */
    int64_t left = mm_bytes_left(r.f), least = coord ? 6 : 2;
    if (left >= 0 && *m * *n > ((int64_t)1 << 23) && count > (left + 1) / least)
      rc = ovl_err_set(OVL_ERR_FORMAT,
                       "'%s' is truncated: line %" PRId64 " declares %" PRId64 " entries but only %" PRId64
                       " bytes follow",
                       path, r.lineno, count, left);
  }
  if (rc == OVL_OK) rc = ovl_calloc(sizeof(double) * (size_t)(*m * *n), g);
  if (rc == OVL_OK) rc = mm_entries(&r, coord, *sym, *m, *n, count, *g);
  free(r.line);
  if (rc != OVL_OK) ovl_free(g);
  return rc;
}

ovl_err ovl_mtx_read_meta(MPI_Comm comm, const char *path, ovl_matrix_meta *meta) {
  int rank = 0;
  ovl_matrix_meta mt = {0, 0, 0};
  OVL_TRY(ovl_check_comm(comm, "ovl_mtx_read_meta"));
  OVL_MPI(MPI_Comm_rank(comm, &rank));
  ovl_err rc = OVL_OK;
  if (path == NULL || path[0] == '\0' || meta == NULL)
    rc = ovl_err_set(OVL_ERR_ARG, "ovl_mtx_read_meta needs a non-empty path and a meta pointer");
  if (rc == OVL_OK && rank == 0) {
    FILE *f = NULL;
    rc = ovl_file_open_read(path, "Matrix Market file", &f);
    if (rc == OVL_OK) {
      mm_reader r = {f, path, NULL, 0, 0, 0};
      int coord = 0;
      int64_t count = 0;
      rc = mm_sizes(&r, 0, &coord, &mt.symmetric, &mt.rows, &mt.cols, &count);
      free(r.line);
      fclose(f);
    }
  }
  return ovl_io_meta_share(comm, rc, &mt, meta);
}

/* Rank 0: parse path into a new m x n column-major array *g. */
static ovl_err mm_read(const char *path, int64_t *m, int64_t *n, int *sym, double **g) {
  *g = NULL;
  FILE *f = NULL;
  OVL_TRY(ovl_file_open_read(path, "Matrix Market file", &f));
  ovl_err rc = ovl_io_mtx_parse(f, path, 0, m, n, sym, g);
  fclose(f);
  return rc;
}

ovl_err ovl_dmat_read_mtx(ovl_grid2d g, const char *path, int require_symmetric, ovl_dmat *out) {
  MPI_Comm parent = ovl_grid2d_parent(g);
  int rank = 0, sym = 0;
  int64_t v[3] = {0, 0, 0};
  double *global = NULL;
  ovl_dmat A = NULL;
  OVL_TRY(ovl_check_ptr(out, "ovl_dmat_read_mtx", "out"));
  *out = NULL;
  OVL_TRY(ovl_check_handle(g, "ovl_dmat_read_mtx", "the grid"));
  OVL_TRY(ovl_check_comm(parent, "ovl_dmat_read_mtx (an idle grid)"));
  OVL_MPI(MPI_Comm_rank(parent, &rank));
  ovl_err rc = OVL_OK;
  if (path == NULL || path[0] == '\0') rc = ovl_err_set(OVL_ERR_ARG, "ovl_dmat_read_mtx needs a non-empty path");
  if (rc == OVL_OK && rank == 0) {
    rc = mm_read(path, &v[0], &v[1], &sym, &global);
    v[2] = sym;
  }
  rc = ovl_err_agree(parent, rc);
  if (rc == OVL_OK) {
    int mrc = MPI_Bcast(v, 3, MPI_INT64_T, 0, parent);
    rc = ovl_err_agree(parent, mrc == MPI_SUCCESS ? OVL_OK : ovl_err_mpi(mrc, "MPI_Bcast (sizes)"));
  }
  if (rc == OVL_OK) rc = ovl_dmat_create(g, v[0], v[1], &A);
  if (rc == OVL_OK) rc = ovl_err_agree(parent, ovl_dmat_scatter(A, global));
  ovl_free(&global);
  if (rc == OVL_OK) rc = ovl_io_check_finite(A, path);
  if (rc == OVL_OK && require_symmetric && !v[2]) rc = ovl_io_check_symmetric_read(A, path);
  if (rc != OVL_OK) {
    ovl_dmat_destroy(&A);
    return rc;
  }
  *out = A;
  return OVL_OK;
}

/* Rank 0: write the m x n column-major array g to path in array format. */
static ovl_err mm_write(const char *path, int64_t m, int64_t n, int sym, const double *g) {
  ovl_file_writer w;
  OVL_TRY(ovl_file_writer_open(&w, path, "output"));
  int bad = fprintf(w.f, "%%%%MatrixMarket matrix array real %s\n%% written by ovl %s\n%" PRId64 " %" PRId64 "\n",
                    sym ? "symmetric" : "general", ovl_version(), m, n) < 0;
  for (int64_t c = 0; c < n && !bad; c++)
    for (int64_t r = sym ? c : 0; r < m; r++)
      if (fprintf(w.f, "%.17g\n", g[r + c * m]) < 0) {
        bad = 1;
        break;
      }
  if (bad) {
    ovl_err rc = ovl_err_set(OVL_ERR_IO, "cannot write '%s': writing '%s' failed: %s", path, w.tmp,
                             strerror(errno ? errno : EIO));
    ovl_file_writer_abort(&w);
    return rc;
  }
  return ovl_file_writer_commit(&w);
}

ovl_err ovl_dmat_write_mtx(ovl_dmat A, const char *path, int symmetric) {
  OVL_TRY(ovl_check_handle(A, "ovl_dmat_write_mtx", "A"));
  MPI_Comm parent = ovl_grid2d_parent(A->grid);
  int rank = 0;
  double *global = NULL;
  OVL_MPI(MPI_Comm_rank(parent, &rank));
  ovl_err rc = OVL_OK;
  if (path == NULL || path[0] == '\0') rc = ovl_err_set(OVL_ERR_ARG, "ovl_dmat_write_mtx needs a non-empty path");
  OVL_TRY(ovl_err_agree(parent, rc));
  if (symmetric) OVL_TRY(ovl_io_check_symmetric_write(A, path));
  if (rank == 0) {
    if (A->n > 0 && A->m > INT64_MAX / 8 / A->n)
      rc = ovl_err_set(OVL_ERR_SIZE, "cannot write '%s': %" PRId64 " x %" PRId64 " is too large", path, A->m, A->n);
    else rc = ovl_malloc(sizeof(double) * (size_t)(A->m * A->n), &global);
  }
  rc = ovl_err_agree(parent, rc);
  if (rc == OVL_OK) rc = ovl_err_agree(parent, ovl_dmat_gather(A, global));
  if (rc == OVL_OK && rank == 0) rc = mm_write(path, A->m, A->n, symmetric, global);
  ovl_free(&global);
  return ovl_err_agree(parent, rc);
}
