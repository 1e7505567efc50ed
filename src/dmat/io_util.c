/* Helpers of the matrix file readers and writers: JSON sidecar, atomic
 * writes, small-file reading, byte order, string broadcast. */
#include "dmat/io_util.h"

#include "dmat/dmat_impl.h"

#include "ovl/json.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- JSON sidecar ------------------------------------------------------- */

ovl_err ovl_io_parse_sidecar(const char *text, size_t len, const char *what, ovl_matrix_meta *meta, int *has_sum,
                             uint64_t *sum) {
  static const char *const keys[] = {"rows", "cols", "symmetric", "checksum", NULL};
  ovl_json d;
  OVL_TRY(ovl_json_parse(text, len, "sidecar", what, &d));
  ovl_matrix_meta mt = {0, 0, 0};
  char hex[32] = "";
  ovl_err rc = ovl_json_root_object(&d, "{\"rows\": m, \"cols\": n, \"symmetric\": true|false}");
  if (rc == OVL_OK) rc = ovl_json_only_keys(&d, d.root, keys);
  if (rc == OVL_OK) rc = ovl_json_int(&d, d.root, "rows", 0, INT64_MAX, &mt.rows);
  if (rc == OVL_OK) rc = ovl_json_int(&d, d.root, "cols", 0, INT64_MAX, &mt.cols);
  if (rc == OVL_OK) rc = ovl_json_bool(&d, d.root, "symmetric", &mt.symmetric);
  if (rc == OVL_OK) rc = ovl_json_str_opt(&d, d.root, "checksum", "", hex, sizeof hex);
  ovl_json_free(&d);
  if (rc != OVL_OK) return rc;
  uint64_t v = 0;
  if (hex[0]) {
    size_t k = 0;
    for (; hex[k]; k++) {
      char c = hex[k];
      int x = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
      if (x < 0) break;
      v = (v << 4) | (uint64_t)x;
    }
    if (k != 16 || hex[k])
      return ovl_err_set(OVL_ERR_FORMAT,
                         "sidecar '%s' is not valid: \"checksum\" must be 16 lowercase hexadecimal digits", what);
  }
  if (mt.symmetric && mt.rows != mt.cols)
    return ovl_err_set(OVL_ERR_FORMAT,
                       "sidecar '%s' is not valid: it declares a symmetric %" PRId64 " x %" PRId64
                       " matrix, which is not square",
                       what, mt.rows, mt.cols);
  if (mt.cols > 0 && mt.rows > INT64_MAX / 8 / mt.cols)
    return ovl_err_set(OVL_ERR_FORMAT, "sidecar '%s' is not valid: %" PRId64 " x %" PRId64 " is too large", what,
                       mt.rows, mt.cols);
  *meta = mt;
  if (has_sum) *has_sum = hex[0] != '\0';
  if (sum) *sum = v;
  return OVL_OK;
}

ovl_err ovl_io_parse_meta(const char *text, size_t len, const char *what, ovl_matrix_meta *meta) {
  return ovl_io_parse_sidecar(text, len, what, meta, NULL, NULL);
}

int ovl_io_format_sidecar(char *buf, size_t size, const ovl_matrix_meta *meta, uint64_t sum) {
  return snprintf(buf, size,
                  "{\"rows\": %" PRId64 ", \"cols\": %" PRId64 ", \"symmetric\": %s, \"checksum\": \"%016" PRIx64
                  "\"}\n",
                  meta->rows, meta->cols, meta->symmetric ? "true" : "false", sum);
}

int ovl_io_format_meta(char *buf, size_t size, const ovl_matrix_meta *meta) {
  return snprintf(buf, size, "{\"rows\": %" PRId64 ", \"cols\": %" PRId64 ", \"symmetric\": %s}\n", meta->rows,
                  meta->cols, meta->symmetric ? "true" : "false");
}

ovl_err ovl_io_read_sidecar_file(const char *path, ovl_matrix_meta *meta, int *has_sum, uint64_t *sum) {
  char *name = NULL, *text = NULL;
  size_t len = 0;
  OVL_TRY(ovl_io_concat(path, ".json", &name));
  ovl_err rc = ovl_file_read_all(name, "file", OVL_IO_SIDECAR_MAX, &text, &len);
  if (rc == OVL_ERR_IO) rc = ovl_io_prefix_msg(rc, "cannot read the sidecar of a raw matrix file");
  if (rc == OVL_OK) rc = ovl_io_parse_sidecar(text, len, name, meta, has_sum, sum);
  ovl_free(&text);
  ovl_free(&name);
  return rc;
}

ovl_err ovl_io_read_meta_file(const char *path, ovl_matrix_meta *meta) {
  return ovl_io_read_sidecar_file(path, meta, NULL, NULL);
}

ovl_err ovl_io_meta_share(MPI_Comm comm, ovl_err rc, const ovl_matrix_meta *found, ovl_matrix_meta *meta) {
  int64_t v[3] = {found->rows, found->cols, found->symmetric};
  OVL_TRY(ovl_err_agree(comm, rc));
  OVL_MPI(MPI_Bcast(v, 3, MPI_INT64_T, 0, comm));
  meta->rows = v[0], meta->cols = v[1], meta->symmetric = (int)v[2];
  return OVL_OK;
}

/* ---- files ------------------------------------------------------------------- */

ovl_err ovl_io_check_regular(const char *path, const char *what) { return ovl_file_check_read(path, what, -1); }

ovl_err ovl_io_concat(const char *path, const char *suffix, char **out) {
  size_t a = strlen(path), b = strlen(suffix);
  *out = NULL;
  OVL_TRY(ovl_malloc(a + b + 1, out));
  memcpy(*out, path, a);
  memcpy(*out + a, suffix, b + 1);
  return OVL_OK;
}

ovl_err ovl_io_reserve(int fd, const char *tmp, const char *path, int64_t bytes) {
  int e = bytes > 0 ? posix_fallocate(fd, 0, (off_t)bytes) : 0;
  if (e != 0 && e != EINVAL && e != EOPNOTSUPP)
    return ovl_err_set(OVL_ERR_IO, "cannot write '%s': reserving %" PRId64 " bytes for '%s' failed: %s", path, bytes,
                       tmp, strerror(e));
  return OVL_OK;
}

/* ---- byte order ------------------------------------------------------------- */

int ovl_io_host_le(void) {
  const uint16_t one = 1;
  unsigned char b;
  memcpy(&b, &one, 1);
  return b == 1;
}

void ovl_io_bswap64(double *x, size_t n) {
  for (size_t k = 0; k < n; k++) {
    uint64_t u, v = 0;
    memcpy(&u, x + k, 8);
    for (int b = 0; b < 8; b++) v = (v << 8) | ((u >> (8 * b)) & 0xffu);
    memcpy(x + k, &v, 8);
  }
}

/* ---- communication and messages ---------------------------------------------- */

ovl_err ovl_io_bcast_string(MPI_Comm comm, char **s) {
  int rank = 0;
  int64_t len = 0;
  OVL_MPI(MPI_Comm_rank(comm, &rank));
  if (rank == 0) len = (int64_t)strlen(*s);
  OVL_MPI(MPI_Bcast(&len, 1, MPI_INT64_T, 0, comm));
  ovl_err rc = OVL_OK;
  if (len > INT32_MAX - 1) rc = ovl_err_set(OVL_ERR_ARG, "a path of %" PRId64 " characters is too long", len);
  if (rc == OVL_OK && rank != 0) {
    *s = NULL;
    rc = ovl_malloc((size_t)len + 1, s);
  }
  rc = ovl_err_agree(comm, rc);
  if (rc != OVL_OK) {
    if (rank != 0) ovl_free(s);
    return rc;
  }
  int mrc = MPI_Bcast(*s, (int)len + 1, MPI_CHAR, 0, comm);
  rc = ovl_err_agree(comm, mrc == MPI_SUCCESS ? OVL_OK : ovl_err_mpi(mrc, "MPI_Bcast (path)"));
  if (rc != OVL_OK && rank != 0) ovl_free(s);
  return rc;
}

ovl_err ovl_io_prefix_msg(ovl_err code, const char *prefix) {
  char msg[1024];
  snprintf(msg, sizeof msg, "%s", ovl_errmsg());
  return ovl_err_set(code, "%s: %s", prefix, msg);
}

/* ---- checksum ---------------------------------------------------------------- */

static uint64_t mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

ovl_err ovl_dmat_checksum(ovl_dmat A, uint64_t *out) {
  if (A == NULL || out == NULL) return ovl_err_set(OVL_ERR_ARG, "ovl_dmat_checksum needs a matrix and an output");
  uint64_t s = 0;
  for (int64_t c = 0; c < A->ln; c++)
    for (int64_t r = 0; r < A->lm; r++) {
      double v = A->data[r + c * A->ld];
      uint64_t bits;
      memcpy(&bits, &v, sizeof bits);
      s += mix64(bits ^ mix64((uint64_t)((A->roff + r) * A->n + A->coff + c)));
    }
  OVL_MPI(MPI_Allreduce(&s, out, 1, MPI_UINT64_T, MPI_SUM, ovl_grid2d_parent(A->grid)));
  return OVL_OK;
}

/* ---- checks ------------------------------------------------------------------ */

static ovl_err prefix_path(ovl_err rc, const char *fmt, const char *path) {
  if (rc == OVL_OK) return rc;
  char prefix[1200];
  snprintf(prefix, sizeof prefix, fmt, path);
  return ovl_io_prefix_msg(rc, prefix);
}

ovl_err ovl_io_check_finite(ovl_dmat A, const char *path) {
  return prefix_path(ovl_dmat_check_finite(A), "'%s'", path);
}

ovl_err ovl_io_check_symmetric_read(ovl_dmat A, const char *path) {
  if (ovl_dmat_rows(A) != ovl_dmat_cols(A))
    return ovl_err_set(OVL_ERR_NUMERIC, "'%s' is not symmetric: it holds a %" PRId64 " x %" PRId64 " matrix", path,
                       ovl_dmat_rows(A), ovl_dmat_cols(A));
  return prefix_path(ovl_dmat_check_symmetric(A, 1e-12), "'%s'", path);
}

ovl_err ovl_io_check_symmetric_write(ovl_dmat A, const char *path) {
  return prefix_path(ovl_dmat_check_symmetric(A, 1e-12), "cannot write '%s' as symmetric", path);
}
