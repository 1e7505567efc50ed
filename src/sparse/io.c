/* Files of block-sparse matrices (ovl/bsmat.h): Matrix Market coordinate
 * (.mtx) and raw blocks (.bsr), each with a JSON sidecar "<file>.json" that
 * carries the block sizes. Read on rank 0 of the grid's parent and scattered
 * by blocks (each process receives its blocks in its CSR order, the values
 * straight into its storage); written from rank 0 after a gather, through a
 * temporary renamed into place (the sidecar first). Every size a file claims
 * is checked against the memory before anything of that size is allocated. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ovl/json.h"
#include "ovl/node.h"
#include "ovl/record.h"
#include "sparse/sparse_impl.h"

enum { SIDECAR_MAX = 1 << 24, TAG_IDX = 7411, TAG_VAL = 7412 };

static const char mm_expected[] = "%%MatrixMarket matrix coordinate real|integer general|symmetric";

/* ---- small helpers ---------------------------------------------------------------- */

static int ends_with(const char *s, const char *suf) {
  size_t a = strlen(s), b = strlen(suf);
  return a >= b && strcasecmp(s + a - b, suf) == 0;
}

static ovl_err concat(const char *a, const char *b, char **out) {
  size_t la = strlen(a), lb = strlen(b);
  OVL_TRY(ovl_malloc(la + lb + 1, out));
  memcpy(*out, a, la);
  memcpy(*out + la, b, lb + 1);
  return OVL_OK;
}

static uint64_t fnv1a(uint64_t h, const void *p, size_t len) {
  const unsigned char *c = p;
  for (size_t k = 0; k < len; k++) h = (h ^ c[k]) * 1099511628211ULL;
  return h;
}
#define FNV_START 14695981039346656037ULL

static int host_le(void) {
  const uint16_t one = 1;
  unsigned char c;
  memcpy(&c, &one, 1);
  return c == 1;
}

/* Little-endian bytes <-> host order, in place, n 8-byte words. */
static void le64(void *p, size_t n) {
  if (host_le()) return;
  unsigned char *c = p;
  for (size_t k = 0; k < n; k++, c += 8)
    for (int x = 0; x < 4; x++) {
      unsigned char t = c[x];
      c[x] = c[7 - x], c[7 - x] = t;
    }
}

/* The current (agreed) message again, as "'<path>': <message>". */
static ovl_err with_path(ovl_err rc, const char *path) {
  char buf[1024];
  snprintf(buf, sizeof buf, "%s", ovl_errmsg());
  return ovl_err_set(rc, "'%s': %s", path, buf);
}

/* a + b, saturating at INT64_MAX (sizes claimed by a file). */
static int64_t sat_add(int64_t a, int64_t b) { return a > INT64_MAX - b ? INT64_MAX : a + b; }

/* ---- the sidecar ------------------------------------------------------------------ */

typedef struct bs_meta {
  int64_t n;
  int nblk;
  int *bs;
  int sym;        /* .bsr: the file holds the blocks with I >= J only */
  int64_t blocks; /* .bsr: records in the file */
  int has_sum;
  uint64_t sum;
} bs_meta;

/* Read "<path>.json" (rank 0). bsr: the raw-blocks keys too. *absent: the
 * sidecar does not exist (then nothing else is read; NULL: an error). */
static ovl_err read_sidecar(const char *path, int bsr, bs_meta *m, int *absent) {
  char *side = NULL;
  OVL_TRY(concat(path, ".json", &side));
  struct stat st;
  if (absent && stat(side, &st) != 0 && errno == ENOENT) {
    *absent = 1;
    ovl_free(&side);
    return OVL_OK;
  }
  ovl_json d;
  ovl_err rc = ovl_json_load(side, "sidecar", SIDECAR_MAX, &d);
  double *v = NULL;
  static const char *const kmtx[] = {"rows", "cols", "block_sizes", NULL};
  static const char *const kbsr[] = {"format", "rows", "cols", "block_sizes", "blocks", "symmetric", "checksum", NULL};
  int64_t rows = 0, cols = 0;
  if (rc == OVL_OK)
    rc = ovl_json_root_object(&d, bsr ? "{\"format\": \"ovl-bsr\", \"rows\": n, \"cols\": n, \"block_sizes\": [...], "
                                        "\"blocks\": count, \"symmetric\": true|false, \"checksum\": \"16 hex digits\"}"
                                      : "{\"rows\": n, \"cols\": n, \"block_sizes\": [...]}");
  if (rc == OVL_OK) rc = ovl_json_only_keys(&d, d.root, bsr ? kbsr : kmtx);
  if (rc == OVL_OK && bsr) {
    char fmt[32];
    rc = ovl_json_str(&d, d.root, "format", fmt, sizeof fmt);
    if (rc == OVL_OK && strcmp(fmt, "ovl-bsr") != 0)
      rc = ovl_err_set(OVL_ERR_FORMAT, "sidecar '%s': \"format\" is \"%s\", expected \"ovl-bsr\"", side, fmt);
  }
  if (rc == OVL_OK) rc = ovl_json_int(&d, d.root, "rows", 1, OVL_JSON_INT_MAX, &rows);
  if (rc == OVL_OK) rc = ovl_json_int(&d, d.root, "cols", 1, OVL_JSON_INT_MAX, &cols);
  if (rc == OVL_OK && rows != cols)
    rc = ovl_err_set(OVL_ERR_FORMAT,
                     "sidecar '%s': \"rows\" is %" PRId64 " but \"cols\" %" PRId64 ": a block-sparse matrix is square",
                     side, rows, cols);
  if (rc == OVL_OK && stat(side, &st) != 0)
    rc = ovl_err_set(OVL_ERR_IO, "cannot stat sidecar '%s': %s", side, strerror(errno));
  int cap = 0, cnt = 0;
  if (rc == OVL_OK) { /* a size takes two characters at least: the file bounds the count */
    int64_t c = (int64_t)st.st_size / 2 + 2;
    cap = c < rows + 1 ? (int)c : (int)(rows + 1);
    rc = ovl_malloc(sizeof(double) * (size_t)cap, &v);
  }
  if (rc == OVL_OK) rc = ovl_json_nums(&d, d.root, "block_sizes", v, cap, &cnt);
  if (rc == OVL_OK && cnt == 0) rc = ovl_err_set(OVL_ERR_FORMAT, "sidecar '%s': \"block_sizes\" is empty", side);
  int64_t sum = 0;
  for (int b = 0; b < cnt && rc == OVL_OK; b++) {
    if (!(v[b] >= 1 && v[b] <= INT_MAX && v[b] == floor(v[b])))
      rc = ovl_err_set(OVL_ERR_FORMAT,
                       "sidecar '%s': \"block_sizes\"[%d] is %g: a block size must be an integer from 1 to %d", side, b,
                       v[b], INT_MAX);
    else sum += (int64_t)v[b];
  }
  if (rc == OVL_OK && sum != rows)
    rc = ovl_err_set(OVL_ERR_FORMAT,
                     "sidecar '%s': the %d block sizes sum to %" PRId64 " but \"rows\" is %" PRId64
                     " (they must sum to n)",
                     side, cnt, sum, rows);
  if (rc == OVL_OK) rc = ovl_malloc(sizeof(int) * (size_t)cnt, &m->bs);
  if (rc == OVL_OK) {
    for (int b = 0; b < cnt; b++) m->bs[b] = (int)v[b];
    m->n = rows, m->nblk = cnt;
  }
  if (rc == OVL_OK && bsr) {
    int64_t blocks = 0;
    char hex[32] = "";
    rc = ovl_json_int(&d, d.root, "blocks", 0, OVL_JSON_INT_MAX, &blocks);
    if (rc == OVL_OK) rc = ovl_json_bool(&d, d.root, "symmetric", &m->sym);
    if (rc == OVL_OK) rc = ovl_json_str_opt(&d, d.root, "checksum", "", hex, sizeof hex);
    if (rc == OVL_OK && hex[0]) {
      char *end = NULL;
      m->sum = strtoull(hex, &end, 16);
      m->has_sum = 1;
      if (strlen(hex) != 16 || *end != '\0' || !isxdigit((unsigned char)hex[0]))
        rc = ovl_err_set(OVL_ERR_FORMAT, "sidecar '%s': \"checksum\" is \"%s\", expected 16 hex digits", side, hex);
    }
    m->blocks = blocks;
  }
  ovl_free(&v);
  ovl_json_free(&d);
  ovl_free(&side);
  return rc;
}

/* Rank 0's meta to every rank (after the agreed verdict rc). */
static ovl_err share_meta(MPI_Comm comm, int rank, bs_meta *m) {
  int64_t h[6] = {m->n, m->nblk, m->sym, m->blocks, m->has_sum, (int64_t)m->sum};
  OVL_MPI(MPI_Bcast(h, 6, MPI_INT64_T, 0, comm));
  m->n = h[0], m->nblk = (int)h[1], m->sym = (int)h[2], m->blocks = h[3], m->has_sum = (int)h[4];
  m->sum = (uint64_t)h[5];
  ovl_err rc = rank == 0 ? OVL_OK : ovl_malloc(sizeof(int) * (size_t)m->nblk, &m->bs);
  OVL_TRY(ovl_err_agree(comm, rc));
  OVL_MPI(MPI_Bcast(m->bs, m->nblk, MPI_INT, 0, comm));
  return OVL_OK;
}

/* ---- scattering blocks from rank 0 ---------------------------------------------------
 * Rank 0 lists the blocks to send (sorted by destination, then I, then J:
 * each process's CSR order) and fills each block's values on demand. */

typedef struct sblock {
  int d, bi, bj, trans; /* destination rank; block; .bsr: stored as (bj, bi), transpose it */
  int64_t first, count; /* .mtx: its entries; .bsr: the record's data offset */
} sblock;

typedef ovl_err (*fill_fn)(void *ctx, const sblock *b, const int *bs, double *out);

static int cmp_sblock(const void *a, const void *b) {
  const sblock *x = a, *y = b;
  if (x->d != y->d) return x->d < y->d ? -1 : 1;
  if (x->bi != y->bi) return x->bi < y->bi ? -1 : 1;
  return x->bj < y->bj ? -1 : x->bj > y->bj;
}

/* A's local blocks: nb blocks listed in idx (I, J pairs), whose values are
 * already in A->loc.val in that order (nval doubles). */
static ovl_err adopt(ovl_bsmat A, int64_t nb, const int *idx, int64_t nval) {
  ovl_i_bsr *L = &A->loc;
  int64_t off = 0;
  ovl_i_sparse_clear(A);
  for (int64_t t = 0; t < nb; t++) {
    int bi = idx[2 * t], bj = idx[2 * t + 1];
    int64_t lr = bi >= 0 && bi < A->nblk ? A->lrow[bi] : -1;
    if (lr < 0 || bj < 0 || bj >= A->nblk || A->lcol[bj] < 0 || lr < L->last_row ||
        (lr == L->last_row && L->nnzb > 0 && L->colidx[L->nnzb - 1] >= bj))
      return ovl_err_set(OVL_ERR_INTERNAL, "block (%d, %d) scattered to the wrong process or out of order", bi, bj);
    for (int64_t r = L->last_row + 1; r <= lr; r++) L->rowptr[r] = L->nnzb;
    int64_t len = (int64_t)A->bs[bi] * A->bs[bj];
    L->colidx[L->nnzb] = bj;
    L->valoff[L->nnzb] = off;
    L->nrm[L->nnzb] = ovl_i_sparse_norm(L->val + off, len);
    L->nnzb++;
    off += len;
    L->rowptr[lr + 1] = L->nnzb;
    L->last_row = lr;
  }
  L->nval = nval;
  ovl_i_sparse_finish(A);
  return off == nval ? OVL_OK : ovl_err_set(OVL_ERR_INTERNAL, "scattered values do not match their blocks");
}

static ovl_err scatter_blocks(ovl_bsmat A, const char *path, sblock *blk, int64_t nblk_list, fill_fn fill, void *ctx,
                              double eps) {
  MPI_Comm comm = ovl_grid2d_parent(A->g);
  int rank = 0, P = 1;
  OVL_MPI(MPI_Comm_rank(comm, &rank));
  OVL_MPI(MPI_Comm_size(comm, &P));
  int64_t *cnt = NULL, mine[2] = {0, 0}, maxv = 0, maxb = 0;
  ovl_err rc = OVL_OK;
  if (rank == 0) {
    rc = ovl_calloc(sizeof(int64_t) * 2 * (size_t)P, &cnt);
    for (int64_t t = 0; t < nblk_list && rc == OVL_OK; t++) {
      cnt[2 * blk[t].d]++;
      cnt[2 * blk[t].d + 1] = sat_add(cnt[2 * blk[t].d + 1], (int64_t)A->bs[blk[t].bi] * A->bs[blk[t].bj]);
    }
    for (int d = 1; d < P && rc == OVL_OK; d++) {
      if (cnt[2 * d + 1] > maxv) maxv = cnt[2 * d + 1];
      if (cnt[2 * d] > maxb) maxb = cnt[2 * d];
    }
  }
  OVL_TRY(ovl_err_agree(comm, rc));
  OVL_MPI(MPI_Scatter(cnt, 2, MPI_INT64_T, mine, 2, MPI_INT64_T, 0, comm));
  /* the memory of this process's blocks (and rank 0's sending buffers), before any of it is allocated */
  int64_t bytes = sat_add(sat_add(mine[1] > INT64_MAX / 8 ? INT64_MAX : mine[1] * 8, mine[0] * 28),
                          maxv > INT64_MAX / 8 ? INT64_MAX : maxv * 8 + maxb * 8);
  rc = ovl_check_memory(comm, bytes, 0);
  if (rc != OVL_OK) {
    ovl_free(&cnt);
    return with_path(rc, path);
  }
  if (mine[1] > INT32_MAX || 2 * mine[0] > INT32_MAX)
    rc = ovl_err_set(OVL_ERR_SIZE, "'%s': %" PRId64 " values for one process: more than one message holds", path,
                     mine[1]);
  int *idx = NULL;
  double *sv = NULL;
  if (rc == OVL_OK) rc = ovl_i_sparse_reserve(A, mine[0], mine[1]);
  if (rc == OVL_OK)
    rc = ovl_malloc(sizeof(int) * (size_t)(2 * (rank == 0 ? (maxb > mine[0] ? maxb : mine[0]) : mine[0]) + 2), &idx);
  if (rc == OVL_OK && rank == 0) rc = ovl_malloc(sizeof(double) * (size_t)(maxv + 1), &sv);
  rc = ovl_err_agree(comm, rc);
  if (rc != OVL_OK) {
    ovl_free(&cnt), ovl_free(&idx), ovl_free(&sv);
    return rc;
  }
  ovl_err frc = OVL_OK; /* a failure while filling: the data still moves, the verdict is agreed at the end */
  if (rank == 0) {
    int64_t t = 0;
    for (int d = 0; d < P; d++) {
      double *out = d == 0 ? A->loc.val : sv;
      int64_t nb = 0, off = 0;
      for (; t < nblk_list && blk[t].d == d; t++, nb++) {
        idx[2 * nb] = blk[t].bi, idx[2 * nb + 1] = blk[t].bj;
        int64_t len = (int64_t)A->bs[blk[t].bi] * A->bs[blk[t].bj];
        if (frc == OVL_OK) frc = fill(ctx, &blk[t], A->bs, out + off);
        else memset(out + off, 0, sizeof(double) * (size_t)len);
        off += len;
      }
      if (d == 0) {
        if (frc == OVL_OK) frc = adopt(A, nb, idx, off);
      } else if (nb > 0) {
        OVL_MPI(MPI_Send(idx, (int)(2 * nb), MPI_INT, d, TAG_IDX, comm));
        OVL_MPI(MPI_Send(sv, (int)off, MPI_DOUBLE, d, TAG_VAL, comm));
      }
    }
  } else if (mine[0] > 0) {
    OVL_MPI(MPI_Recv(idx, (int)(2 * mine[0]), MPI_INT, 0, TAG_IDX, comm, MPI_STATUS_IGNORE));
    OVL_MPI(MPI_Recv(A->loc.val, (int)mine[1], MPI_DOUBLE, 0, TAG_VAL, comm, MPI_STATUS_IGNORE));
    frc = adopt(A, mine[0], idx, mine[1]);
  }
  ovl_free(&cnt), ovl_free(&idx), ovl_free(&sv);
  if (frc == OVL_OK) frc = ovl_bsmat_filter(A, eps);
  return ovl_err_agree(comm, frc);
}

/* The destination of block (bi, bj): the parent rank of its process. */
static int owner(ovl_bsmat A, int bi, int bj) { return ovl_i_sparse_prow(A, bi) * A->q + ovl_i_sparse_pcol(A, bj); }

/* ---- Matrix Market ------------------------------------------------------------------ */

typedef struct mm_entry {
  int d, bi, bj, li, lj;
  double v;
  int64_t line;
} mm_entry;

static int cmp_entry(const void *a, const void *b) {
  const mm_entry *x = a, *y = b;
  if (x->d != y->d) return x->d < y->d ? -1 : 1;
  if (x->bi != y->bi) return x->bi < y->bi ? -1 : 1;
  if (x->bj != y->bj) return x->bj < y->bj ? -1 : 1;
  if (x->lj != y->lj) return x->lj < y->lj ? -1 : 1;
  return x->li < y->li ? -1 : x->li > y->li;
}

typedef struct mm_file {
  FILE *f;
  const char *path;
  char *line;
  size_t cap;
  int64_t lineno;
  int integer, sym;
  int64_t m, n, nnz;
} mm_file;

/* The next line (skip: the next data line, not blank nor a '%' comment); *eof at the end. */
static ovl_err mm_next(mm_file *r, int skip, int *eof) {
  for (;;) {
    ssize_t len = getline(&r->line, &r->cap, r->f);
    if (len < 0) {
      if (ferror(r->f)) return ovl_err_set(OVL_ERR_IO, "cannot read '%s': %s", r->path, strerror(errno ? errno : EIO));
      *eof = 1;
      return OVL_OK;
    }
    r->lineno++;
    if (strlen(r->line) != (size_t)len)
      return ovl_err_set(OVL_ERR_FORMAT, "'%s' line %" PRId64 ": a NUL byte", r->path, r->lineno);
    *eof = 0;
    const char *p = r->line;
    while (isspace((unsigned char)*p)) p++;
    if (!skip || (*p != '\0' && *p != '%')) return OVL_OK;
  }
}

static char *tok(char **p) {
  char *s = *p;
  while (*s && isspace((unsigned char)*s)) s++;
  if (*s == '\0') return *p = s, NULL;
  char *t = s;
  while (*s && !isspace((unsigned char)*s)) s++;
  if (*s) *s++ = '\0';
  *p = s;
  return t;
}

static int to_i64(const char *t, int64_t *v) {
  char *end = NULL;
  if (t == NULL || !(isdigit((unsigned char)t[0]) || t[0] == '-' || t[0] == '+')) return 0;
  errno = 0;
  long long x = strtoll(t, &end, 10);
  if (errno || *end) return 0;
  return *v = (int64_t)x, 1;
}

/* Header and size line. */
static ovl_err mm_head(mm_file *r) {
  int eof = 0;
  OVL_TRY(mm_next(r, 0, &eof));
  if (eof) return ovl_err_set(OVL_ERR_FORMAT, "'%s' is empty; expected the header '%s'", r->path, mm_expected);
  char *p = r->line, *t[6];
  int nt = 0;
  while (nt < 6 && (t[nt] = tok(&p)) != NULL) nt++;
  if (nt != 5 || strcasecmp(t[0], "%%MatrixMarket") != 0 || strcasecmp(t[1], "matrix") != 0)
    return ovl_err_set(OVL_ERR_FORMAT, "'%s' line 1: not a Matrix Market header; expected '%s'", r->path, mm_expected);
  if (strcasecmp(t[2], "coordinate") != 0)
    return ovl_err_set(OVL_ERR_UNSUPPORTED,
                       "'%s' line 1: format '%s': a block-sparse matrix is read from the coordinate format (read "
                       "dense files with ovl_dmat_read)",
                       r->path, t[2]);
  if (strcasecmp(t[3], "real") != 0 && strcasecmp(t[3], "integer") != 0)
    return ovl_err_set(OVL_ERR_UNSUPPORTED, "'%s' line 1: field '%s' is not supported; expected '%s'", r->path, t[3],
                       mm_expected);
  r->integer = strcasecmp(t[3], "integer") == 0;
  if (strcasecmp(t[4], "general") == 0) r->sym = 0;
  else if (strcasecmp(t[4], "symmetric") == 0) r->sym = 1;
  else
    return ovl_err_set(OVL_ERR_UNSUPPORTED, "'%s' line 1: symmetry '%s' is not supported; expected '%s'", r->path, t[4],
                       mm_expected);
  OVL_TRY(mm_next(r, 1, &eof));
  if (eof) return ovl_err_set(OVL_ERR_FORMAT, "'%s': no size line after the header", r->path);
  p = r->line;
  char *a = tok(&p), *b = tok(&p), *c = tok(&p), *e = tok(&p);
  if (!to_i64(a, &r->m) || !to_i64(b, &r->n) || !to_i64(c, &r->nnz) || e != NULL || r->m < 0 || r->n < 0 || r->nnz < 0)
    return ovl_err_set(OVL_ERR_FORMAT, "'%s' line %" PRId64 ": expected the size line 'rows cols entries'", r->path,
                       r->lineno);
  return OVL_OK;
}

/* The block that holds index i (no array of n: a file may claim any n). */
static int block_of(ovl_bsmat A, int64_t i) {
  int lo = 0, hi = A->nblk - 1;
  while (lo < hi) {
    int mid = lo + (hi - lo + 1) / 2;
    if (A->boff[mid] <= i) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/* The entries into e (ne of them; a symmetric file's off-diagonal ones twice). */
static ovl_err mm_entries(mm_file *r, ovl_bsmat A, mm_entry *e, int64_t *ne) {
  int64_t k = 0;
  int eof = 0;
  ovl_err rc = OVL_OK;
  for (int64_t t = 0; t < r->nnz && rc == OVL_OK; t++) {
    rc = mm_next(r, 1, &eof);
    if (rc != OVL_OK) break;
    if (eof) {
      rc = ovl_err_set(OVL_ERR_FORMAT, "'%s' ends after %" PRId64 " of the %" PRId64 " entries its size line declares",
                       r->path, t, r->nnz);
      break;
    }
    char *p = r->line, *a = tok(&p), *b = tok(&p), *c = tok(&p), *x = tok(&p);
    int64_t i = 0, j = 0;
    double v = 0;
    char *end = NULL;
    if (!to_i64(a, &i) || !to_i64(b, &j) || c == NULL || x != NULL) {
      rc = ovl_err_set(OVL_ERR_FORMAT, "'%s' line %" PRId64 ": expected an entry 'row col value'", r->path, r->lineno);
      break;
    }
    if (r->integer) {
      int64_t iv = 0;
      if (!to_i64(c, &iv)) {
        rc = ovl_err_set(OVL_ERR_FORMAT, "'%s' line %" PRId64 ": '%s' is not an integer (the field is integer)",
                         r->path, r->lineno, c);
        break;
      }
      v = (double)iv;
    } else {
      v = strtod(c, &end);
      if (end == c || *end != '\0') {
        rc = ovl_err_set(OVL_ERR_FORMAT, "'%s' line %" PRId64 ": '%s' is not a number", r->path, r->lineno, c);
        break;
      }
    }
    if (i < 1 || i > r->m || j < 1 || j > r->n)
      rc = ovl_err_set(OVL_ERR_FORMAT,
                       "'%s' line %" PRId64 ": index (%" PRId64 ", %" PRId64 ") is outside the %" PRId64 " x %" PRId64
                       " matrix",
                       r->path, r->lineno, i, j, r->m, r->n);
    else if (!isfinite(v))
      rc = ovl_err_set(OVL_ERR_FORMAT, "'%s' line %" PRId64 ": the value of (%" PRId64 ", %" PRId64 ") is %s", r->path,
                       r->lineno, i, j, c);
    else if (r->sym && i < j)
      rc = ovl_err_set(OVL_ERR_FORMAT,
                       "'%s' line %" PRId64 ": entry (%" PRId64 ", %" PRId64
                       ") lies above the diagonal of a symmetric file (which holds the lower triangle)",
                       r->path, r->lineno, i, j);
    for (int mirror = 0; mirror < 1 + (r->sym && i != j) && rc == OVL_OK; mirror++) {
      int64_t gi = (mirror ? j : i) - 1, gj = (mirror ? i : j) - 1;
      mm_entry *q = e + k++;
      q->bi = block_of(A, gi), q->bj = block_of(A, gj);
      q->li = (int)(gi - A->boff[q->bi]), q->lj = (int)(gj - A->boff[q->bj]);
      q->d = owner(A, q->bi, q->bj);
      q->v = v, q->line = r->lineno;
    }
  }
  if (rc == OVL_OK) {
    rc = mm_next(r, 1, &eof);
    if (rc == OVL_OK && !eof)
      rc =
          ovl_err_set(OVL_ERR_FORMAT, "'%s' line %" PRId64 ": more entries than the %" PRId64 " its size line declares",
                      r->path, r->lineno, r->nnz);
  }
  *ne = k;
  return rc;
}

typedef struct mm_ctx {
  const mm_entry *e;
} mm_ctx;

static ovl_err mm_fill(void *ctx, const sblock *b, const int *bs, double *out) {
  const mm_entry *e = ((mm_ctx *)ctx)->e;
  memset(out, 0, sizeof(double) * (size_t)((int64_t)bs[b->bi] * bs[b->bj]));
  for (int64_t t = b->first; t < b->first + b->count; t++) out[e[t].li + (int64_t)e[t].lj * bs[b->bi]] = e[t].v;
  return OVL_OK;
}

static ovl_err read_mtx(ovl_grid2d g, const char *path, int nblk, const int *bs, uint64_t seed, double eps,
                        ovl_bsmat *out) {
  MPI_Comm comm = ovl_grid2d_parent(g);
  int rank = 0;
  OVL_MPI(MPI_Comm_rank(comm, &rank));
  bs_meta m = {0};
  mm_file r = {0};
  r.path = path;
  ovl_err rc = OVL_OK;
  if (rank == 0) {
    int absent = 0;
    rc = read_sidecar(path, 0, &m, &absent);
    if (rc == OVL_OK && absent) {
      if (nblk <= 0)
        rc = ovl_err_set(OVL_ERR_IO, "'%s' has no sidecar '%s.json' with its block sizes, and none were given", path,
                         path);
      else {
        m.nblk = nblk, m.n = 0;
        rc = ovl_malloc(sizeof(int) * (size_t)nblk, &m.bs);
        for (int b = 0; b < nblk && rc == OVL_OK; b++) {
          if (bs[b] < 1) rc = ovl_err_set(OVL_ERR_ARG, "ovl_bsmat_read: block %d has size %d, expected >= 1", b, bs[b]);
          m.bs[b] = bs[b], m.n += bs[b];
        }
      }
    }
    if (rc == OVL_OK) rc = ovl_file_open_read(path, "Matrix Market file", &r.f);
    if (rc == OVL_OK) rc = mm_head(&r);
    if (rc == OVL_OK && (r.m != m.n || r.n != m.n))
      rc = ovl_err_set(OVL_ERR_FORMAT,
                       "'%s' line %" PRId64 ": the matrix is %" PRId64 " x %" PRId64
                       " but its block sizes sum to %" PRId64,
                       path, r.lineno, r.m, r.n, m.n);
    m.blocks = r.nnz;
  }
  rc = ovl_err_agree(comm, rc);
  if (rc == OVL_OK) rc = share_meta(comm, rank, &m);
  /* rank 0's entries (a symmetric file's twice), before they are allocated */
  int64_t ne = m.blocks > INT64_MAX / 2 ? INT64_MAX / 2 : m.blocks * (r.sym || rank != 0 ? 2 : 1);
  int64_t need =
      rank == 0 ? (ne > INT64_MAX / (int64_t)sizeof(mm_entry) ? INT64_MAX : ne * (int64_t)sizeof(mm_entry)) : 0;
  if (rc == OVL_OK && (rc = ovl_check_memory(comm, need, 0)) != OVL_OK) rc = with_path(rc, path);
  mm_entry *e = NULL;
  sblock *blk = NULL;
  int64_t nb = 0;
  if (rc == OVL_OK && rank == 0) rc = ovl_malloc(sizeof(mm_entry) * (size_t)(ne + 1), &e);
  rc = ovl_err_agree(comm, rc);
  ovl_bsmat A = NULL;
  if (rc == OVL_OK) rc = ovl_bsmat_create(g, m.nblk, m.bs, seed, &A);
  if (rc == OVL_OK && rank == 0) {
    rc = mm_entries(&r, A, e, &ne);
    if (rc == OVL_OK) qsort(e, (size_t)ne, sizeof *e, cmp_entry);
    for (int64_t t = 1; t < ne && rc == OVL_OK; t++)
      if (e[t].bi == e[t - 1].bi && e[t].bj == e[t - 1].bj && e[t].li == e[t - 1].li && e[t].lj == e[t - 1].lj) {
        int64_t l0 = e[t - 1].line < e[t].line ? e[t - 1].line : e[t].line, l1 = e[t - 1].line ^ e[t].line ^ l0;
        rc =
            ovl_err_set(OVL_ERR_FORMAT, "'%s' line %" PRId64 ": entry (%" PRId64 ", %" PRId64 ") repeats line %" PRId64,
                        path, l1, A->boff[e[t].bi] + e[t].li + 1, A->boff[e[t].bj] + e[t].lj + 1, l0);
      }
    for (int64_t t = 0; t < ne && rc == OVL_OK; t++)
      if (t == 0 || e[t].d != e[t - 1].d || e[t].bi != e[t - 1].bi || e[t].bj != e[t - 1].bj) nb++;
    if (rc == OVL_OK) rc = ovl_malloc(sizeof(sblock) * (size_t)(nb + 1), &blk);
    if (rc == OVL_OK) {
      nb = 0;
      for (int64_t t = 0; t < ne; t++) {
        if (t == 0 || e[t].d != e[t - 1].d || e[t].bi != e[t - 1].bi || e[t].bj != e[t - 1].bj)
          blk[nb++] = (sblock){e[t].d, e[t].bi, e[t].bj, 0, t, 0};
        blk[nb - 1].count++;
      }
    }
  }
  if (r.f) fclose(r.f);
  free(r.line);
  rc = ovl_err_agree(comm, rc);
  if (rc == OVL_OK) {
    mm_ctx ctx = {e};
    rc = scatter_blocks(A, path, blk, nb, mm_fill, &ctx, eps);
  }
  ovl_free(&e);
  ovl_free(&blk);
  ovl_free(&m.bs);
  if (rc != OVL_OK) ovl_bsmat_destroy(&A);
  *out = A;
  return rc;
}

/* ---- raw blocks -------------------------------------------------------------------- */

typedef struct bsr_ctx {
  FILE *f;
  const char *path;
  double *tmp;
} bsr_ctx;

static ovl_err bsr_fill(void *ctx, const sblock *b, const int *bs, double *out) {
  bsr_ctx *c = ctx;
  int rm = b->trans ? bs[b->bj] : bs[b->bi], cn = b->trans ? bs[b->bi] : bs[b->bj]; /* the record's shape */
  size_t len = (size_t)rm * (size_t)cn;
  double *dst = b->trans ? c->tmp : out;
  if (fseeko(c->f, (off_t)b->first, SEEK_SET) != 0 || fread(dst, 8, len, c->f) != len)
    return ovl_err_set(OVL_ERR_IO, "cannot read '%s' at byte %" PRId64 ": %s", c->path, b->first,
                       ferror(c->f) ? strerror(errno ? errno : EIO) : "the file changed while it was read");
  le64(dst, len);
  if (b->trans)
    for (int y = 0; y < cn; y++)
      for (int x = 0; x < rm; x++) out[y + (int64_t)x * cn] = dst[x + (int64_t)y * rm];
  return OVL_OK;
}

/* Pass over the records (rank 0): order, ranges, sizes, values, checksum;
 * the list of blocks to send (a symmetric file's off-diagonal ones twice). */
static ovl_err bsr_scan(FILE *f, const char *path, const bs_meta *m, ovl_bsmat A, int64_t fsize, sblock *blk,
                        int64_t *nb) {
  int64_t off = 0, k = 0, pi = -1, pj = -1;
  uint64_t h = FNV_START;
  double *chunk = NULL;
  enum { CH = 8192 };
  OVL_TRY(ovl_malloc(sizeof(double) * CH, &chunk));
  ovl_err rc = OVL_OK;
  for (int64_t t = 0; t < m->blocks && rc == OVL_OK; t++) {
    int64_t hd[2];
    if (off + 16 > fsize) {
      rc = ovl_err_set(OVL_ERR_FORMAT,
                       "'%s' is truncated: record %" PRId64 " of the %" PRId64 " its sidecar declares would start at "
                       "byte %" PRId64 " of %" PRId64,
                       path, t, m->blocks, off, fsize);
      break;
    }
    if (fread(hd, 8, 2, f) != 2) {
      rc = ovl_err_set(OVL_ERR_IO, "cannot read '%s' at byte %" PRId64, path, off);
      break;
    }
    h = fnv1a(h, hd, 16);
    le64(hd, 2);
    if (hd[0] < 0 || hd[0] >= m->nblk || hd[1] < 0 || hd[1] >= m->nblk) {
      rc = ovl_err_set(OVL_ERR_FORMAT,
                       "'%s' record %" PRId64 " at byte %" PRId64 ": block (%" PRId64 ", %" PRId64
                       ") is outside the %d x %d blocks",
                       path, t, off, hd[0], hd[1], m->nblk, m->nblk);
      break;
    }
    if (hd[0] < pi || (hd[0] == pi && hd[1] <= pj)) {
      rc = ovl_err_set(OVL_ERR_FORMAT,
                       "'%s' record %" PRId64 " at byte %" PRId64 ": block (%" PRId64 ", %" PRId64
                       ") %s block (%" PRId64 ", %" PRId64 ") (records go in increasing (I, J), each once)",
                       path, t, off, hd[0], hd[1], hd[0] == pi && hd[1] == pj ? "repeats" : "comes after", pi, pj);
      break;
    }
    if (m->sym && hd[0] < hd[1]) {
      rc = ovl_err_set(OVL_ERR_FORMAT,
                       "'%s' record %" PRId64 " at byte %" PRId64 ": block (%" PRId64 ", %" PRId64
                       ") lies above the diagonal of a symmetric file (which holds I >= J)",
                       path, t, off, hd[0], hd[1]);
      break;
    }
    pi = hd[0], pj = hd[1];
    int64_t len = (int64_t)m->bs[pi] * m->bs[pj];
    if (len > (fsize - off - 16) / 8) {
      rc = ovl_err_set(OVL_ERR_FORMAT,
                       "'%s' is truncated: record %" PRId64 " (block (%" PRId64 ", %" PRId64 "), %" PRId64
                       " values) at byte %" PRId64 " runs past its end (%" PRId64 " bytes)",
                       path, t, pi, pj, len, off, fsize);
      break;
    }
    for (int64_t x = 0; x < len && rc == OVL_OK; x += CH) {
      size_t c = (size_t)(len - x < CH ? len - x : CH);
      if (fread(chunk, 8, c, f) != c) {
        rc = ovl_err_set(OVL_ERR_IO, "cannot read '%s' at byte %" PRId64, path, off + 16 + 8 * x);
        break;
      }
      h = fnv1a(h, chunk, 8 * c);
      le64(chunk, c);
      for (size_t y = 0; y < c; y++)
        if (!isfinite(chunk[y])) {
          int64_t z = x + (int64_t)y;
          rc = ovl_err_set(OVL_ERR_FORMAT,
                           "'%s' record %" PRId64 " (block (%" PRId64 ", %" PRId64 ")), entry (%" PRId64 ", %" PRId64
                           ") of the block at byte %" PRId64 ": the value is %g",
                           path, t, pi, pj, z % m->bs[pi], z / m->bs[pi], off + 16 + 8 * z, chunk[y]);
          break;
        }
    }
    if (rc != OVL_OK) break;
    blk[k++] = (sblock){owner(A, (int)pi, (int)pj), (int)pi, (int)pj, 0, off + 16, len};
    if (m->sym && pi != pj) blk[k++] = (sblock){owner(A, (int)pj, (int)pi), (int)pj, (int)pi, 1, off + 16, len};
    off += 16 + 8 * len;
  }
  ovl_free(&chunk);
  if (rc == OVL_OK && off != fsize)
    rc = ovl_err_set(OVL_ERR_FORMAT,
                     "'%s' has %" PRId64 " bytes but its %" PRId64 " records end at byte %" PRId64 " (trailing data)",
                     path, fsize, m->blocks, off);
  if (rc == OVL_OK && m->has_sum && h != m->sum)
    rc = ovl_err_set(OVL_ERR_FORMAT,
                     "'%s' does not hold the data its sidecar describes (checksum %016" PRIx64
                     ", the sidecar says %016" PRIx64 "): the two were not written together",
                     path, h, m->sum);
  *nb = k;
  return rc;
}

static ovl_err read_bsr(ovl_grid2d g, const char *path, uint64_t seed, double eps, ovl_bsmat *out) {
  MPI_Comm comm = ovl_grid2d_parent(g);
  int rank = 0;
  OVL_MPI(MPI_Comm_rank(comm, &rank));
  bs_meta m = {0};
  FILE *f = NULL;
  int64_t fsize = 0;
  ovl_err rc = OVL_OK;
  if (rank == 0) {
    rc = read_sidecar(path, 1, &m, NULL);
    if (rc == OVL_OK) rc = ovl_file_open_read(path, "block-sparse file", &f);
    struct stat st;
    if (rc == OVL_OK && fstat(fileno(f), &st) != 0)
      rc = ovl_err_set(OVL_ERR_IO, "cannot stat '%s': %s", path, strerror(errno));
    if (rc == OVL_OK) fsize = (int64_t)st.st_size;
    if (rc == OVL_OK && m.blocks > fsize / 24)
      rc = ovl_err_set(OVL_ERR_FORMAT,
                       "'%s' has %" PRId64 " bytes: too few for the %" PRId64 " blocks its sidecar declares", path,
                       fsize, m.blocks);
  }
  rc = ovl_err_agree(comm, rc);
  if (rc == OVL_OK) rc = share_meta(comm, rank, &m);
  int64_t nl = m.blocks * (m.sym ? 2 : 1); /* <= the file's size / 12 */
  if (rc == OVL_OK && (rc = ovl_check_memory(comm, rank == 0 ? nl * (int64_t)sizeof(sblock) : 0, 0)) != OVL_OK)
    rc = with_path(rc, path);
  sblock *blk = NULL;
  ovl_bsmat A = NULL;
  int64_t nb = 0;
  if (rc == OVL_OK && rank == 0) rc = ovl_malloc(sizeof(sblock) * (size_t)(nl + 1), &blk);
  rc = ovl_err_agree(comm, rc);
  if (rc == OVL_OK) rc = ovl_bsmat_create(g, m.nblk, m.bs, seed, &A);
  if (rc == OVL_OK && rank == 0) {
    rc = bsr_scan(f, path, &m, A, fsize, blk, &nb);
    if (rc == OVL_OK) qsort(blk, (size_t)nb, sizeof *blk, cmp_sblock);
  }
  bsr_ctx ctx = {f, path, NULL};
  if (rc == OVL_OK && rank == 0 && m.sym) { /* a transposed record goes through a scratch block */
    int64_t big = 0;
    for (int64_t t = 0; t < nb; t++)
      if (blk[t].trans && blk[t].count > big) big = blk[t].count;
    rc = ovl_malloc(sizeof(double) * (size_t)(big + 1), &ctx.tmp);
  }
  rc = ovl_err_agree(comm, rc);
  if (rc == OVL_OK) rc = scatter_blocks(A, path, blk, nb, bsr_fill, &ctx, eps);
  if (f) fclose(f);
  ovl_free(&ctx.tmp);
  ovl_free(&blk);
  ovl_free(&m.bs);
  if (rc != OVL_OK) ovl_bsmat_destroy(&A);
  *out = A;
  return rc;
}

ovl_err ovl_bsmat_read(ovl_grid2d g, const char *path, int nblk, const int *bs, uint64_t seed, double eps,
                       ovl_bsmat *out) {
  OVL_TRY(ovl_check_ptr(out, "ovl_bsmat_read", "out"));
  *out = NULL;
  OVL_TRY(ovl_check_handle(g, "ovl_bsmat_read", "the grid"));
  MPI_Comm comm = ovl_grid2d_parent(g);
  ovl_err rc = OVL_OK;
  if (path == NULL || path[0] == '\0') rc = ovl_err_set(OVL_ERR_ARG, "ovl_bsmat_read needs a non-empty path");
  else if (!ends_with(path, ".mtx") && !ends_with(path, ".bsr"))
    rc = ovl_err_set(OVL_ERR_ARG,
                     "ovl_bsmat_read: '%s': the name must end in .mtx (Matrix Market) or .bsr (raw blocks)", path);
  else if (!(eps >= 0 && eps < INFINITY))
    rc = ovl_err_set(OVL_ERR_ARG, "ovl_bsmat_read: the threshold eps must be finite and >= 0, got %g", eps);
  else if (nblk > 0 && bs == NULL) rc = ovl_err_set(OVL_ERR_ARG, "ovl_bsmat_read: nblk is %d but bs is NULL", nblk);
  OVL_TRY(ovl_err_agree(comm, rc));
  if (ends_with(path, ".bsr")) return read_bsr(g, path, seed, eps, out);
  return read_mtx(g, path, nblk, bs, seed, eps, out);
}

/* ---- writing ------------------------------------------------------------------------ */

typedef struct gblock {
  int bi, bj;
  int64_t off;
} gblock;

static int cmp_gblock(const void *a, const void *b) {
  const gblock *x = a, *y = b;
  if (x->bi != y->bi) return x->bi < y->bi ? -1 : 1;
  return x->bj < y->bj ? -1 : x->bj > y->bj;
}

static const gblock *find_gblock(const gblock *gb, int64_t nb, int bi, int bj) {
  gblock key = {bi, bj, 0};
  return bsearch(&key, gb, (size_t)nb, sizeof *gb, cmp_gblock);
}

/* OVL_ERR_NUMERIC unless the gathered blocks are symmetric (1e-12 of the largest entry). */
static ovl_err check_symmetric(ovl_bsmat B, const char *path, const gblock *gb, int64_t nb, const double *val) {
  double amax = 0;
  for (int64_t t = 0; t < nb; t++) {
    int64_t len = (int64_t)B->bs[gb[t].bi] * B->bs[gb[t].bj];
    for (int64_t x = 0; x < len; x++) amax = fabs(val[gb[t].off + x]) > amax ? fabs(val[gb[t].off + x]) : amax;
  }
  double tol = 1e-12 * (amax > 1 ? amax : 1);
  for (int64_t t = 0; t < nb; t++) {
    int bi = gb[t].bi, bj = gb[t].bj, m = B->bs[bi], n = B->bs[bj];
    const gblock *o = find_gblock(gb, nb, bj, bi);
    const double *a = val + gb[t].off, *b = o ? val + o->off : NULL;
    for (int y = 0; y < n; y++)
      for (int x = 0; x < m; x++) {
        double u = a[x + (int64_t)y * m], w = b ? b[y + (int64_t)x * n] : 0.0;
        if (fabs(u - w) > tol)
          return ovl_err_set(OVL_ERR_NUMERIC,
                             "cannot write '%s' as symmetric: entry (%" PRId64 ", %" PRId64 ") is %g but (%" PRId64
                             ", %" PRId64 ") is %g",
                             path, B->boff[bi] + x + 1, B->boff[bj] + y + 1, u, B->boff[bj] + y + 1,
                             B->boff[bi] + x + 1, w);
      }
  }
  return OVL_OK;
}

/* The sidecar's text (a JSON object on one line). */
static ovl_err sidecar_text(ovl_bsmat B, int bsr, int64_t blocks, int sym, uint64_t sum, char **text) {
  ovl_record *r = NULL;
  double *v = NULL;
  OVL_TRY(ovl_record_create(NULL, &r));
  ovl_err rc = ovl_malloc(sizeof(double) * (size_t)B->nblk, &v);
  for (int b = 0; b < B->nblk && rc == OVL_OK; b++) v[b] = B->bs[b];
  if (rc == OVL_OK && bsr) rc = ovl_record_set_str(r, "format", "ovl-bsr");
  if (rc == OVL_OK) rc = ovl_record_set_int(r, "rows", B->n);
  if (rc == OVL_OK) rc = ovl_record_set_int(r, "cols", B->n);
  if (rc == OVL_OK) rc = ovl_record_set_nums(r, "block_sizes", v, B->nblk);
  if (rc == OVL_OK && bsr) rc = ovl_record_set_int(r, "blocks", blocks);
  if (rc == OVL_OK && bsr) rc = ovl_record_set_bool(r, "symmetric", sym);
  char hex[24];
  snprintf(hex, sizeof hex, "%016" PRIx64, sum);
  if (rc == OVL_OK && bsr) rc = ovl_record_set_str(r, "checksum", hex);
  if (rc == OVL_OK) rc = ovl_record_text(r, text);
  ovl_free(&v);
  ovl_record_destroy(&r);
  return rc;
}

/* Rank 0 writes the gathered blocks (sorted) to the writer's stream;
 * *blocks and *sum: the .bsr's record count and checksum. */
static ovl_err write_data(ovl_bsmat B, const char *path, int bsr, int sym, const gblock *gb, int64_t nb,
                          const double *val, FILE *f, int64_t *blocks, uint64_t *sum) {
  uint64_t h = FNV_START;
  int64_t nrec = 0, nnz = 0;
  int bad = 0;
  if (!bsr) {
    for (int64_t t = 0; t < nb; t++) {
      int m = B->bs[gb[t].bi], n = B->bs[gb[t].bj];
      for (int y = 0; y < n; y++)
        for (int x = 0; x < m; x++)
          if (val[gb[t].off + x + (int64_t)y * m] != 0 && (!sym || B->boff[gb[t].bi] + x >= B->boff[gb[t].bj] + y))
            nnz++;
    }
    bad |= fprintf(f,
                   "%%%%MatrixMarket matrix coordinate real %s\n%% written by ovl %s\n%" PRId64 " %" PRId64 " %" PRId64
                   "\n",
                   sym ? "symmetric" : "general", ovl_version(), B->n, B->n, nnz) < 0;
  }
  double *buf = NULL;
  int maxbs = 0;
  for (int b = 0; b < B->nblk; b++) maxbs = B->bs[b] > maxbs ? B->bs[b] : maxbs;
  if (bsr) OVL_TRY(ovl_malloc(sizeof(double) * (size_t)((int64_t)maxbs * maxbs + 2), &buf));
  for (int64_t t = 0; t < nb && !bad; t++) {
    int bi = gb[t].bi, bj = gb[t].bj, m = B->bs[bi], n = B->bs[bj];
    if (sym && bi < bj) continue;
    const double *v = val + gb[t].off;
    if (bsr) {
      int64_t hd[2] = {bi, bj}, len = (int64_t)m * n;
      le64(hd, 2);
      memcpy(buf, v, sizeof(double) * (size_t)len);
      le64(buf, (size_t)len);
      bad |= fwrite(hd, 8, 2, f) != 2 || fwrite(buf, 8, (size_t)len, f) != (size_t)len;
      h = fnv1a(fnv1a(h, hd, 16), buf, 8 * (size_t)len);
      nrec++;
    } else {
      for (int y = 0; y < n && !bad; y++)
        for (int x = 0; x < m && !bad; x++) {
          int64_t i = B->boff[bi] + x, j = B->boff[bj] + y;
          double e = v[x + (int64_t)y * m];
          if (e != 0 && (!sym || i >= j)) bad |= fprintf(f, "%" PRId64 " %" PRId64 " %.17g\n", i + 1, j + 1, e) < 0;
        }
    }
  }
  ovl_free(&buf);
  *blocks = nrec, *sum = h;
  if (bad) return ovl_err_set(OVL_ERR_IO, "cannot write '%s': %s", path, strerror(errno ? errno : EIO));
  return OVL_OK;
}

ovl_err ovl_bsmat_write(ovl_bsmat B, const char *path, int symmetric) {
  OVL_TRY(ovl_check_handle(B, "ovl_bsmat_write", "B"));
  MPI_Comm comm = ovl_grid2d_parent(B->g);
  int rank = 0, P = 1;
  OVL_MPI(MPI_Comm_rank(comm, &rank));
  OVL_MPI(MPI_Comm_size(comm, &P));
  ovl_err rc = OVL_OK;
  int bsr = 0;
  char *side = NULL;
  if (path == NULL || path[0] == '\0') rc = ovl_err_set(OVL_ERR_ARG, "ovl_bsmat_write needs a non-empty path");
  else if (!ends_with(path, ".mtx") && !ends_with(path, ".bsr"))
    rc = ovl_err_set(OVL_ERR_ARG,
                     "ovl_bsmat_write: '%s': the name must end in .mtx (Matrix Market) or .bsr (raw blocks)", path);
  else bsr = ends_with(path, ".bsr");
  if (rc == OVL_OK && rank == 0) {
    rc = ovl_file_check_write(path, "output", NULL, 0);
    if (rc == OVL_OK) rc = concat(path, ".json", &side);
    if (rc == OVL_OK) rc = ovl_file_check_write(side, "output sidecar", NULL, 0);
  }
  rc = ovl_err_agree(comm, rc);
  if (rc != OVL_OK) {
    ovl_free(&side);
    return rc;
  }
  /* gather the blocks on rank 0, after checking they fit */
  int64_t mine[2] = {B->loc.nnzb, B->loc.nval}, *cnt = NULL, tot[2] = {0, 0};
  if (rank == 0) rc = ovl_malloc(sizeof(int64_t) * 2 * (size_t)P, &cnt);
  rc = ovl_err_agree(comm, rc);
  if (rc == OVL_OK) OVL_MPI(MPI_Gather(mine, 2, MPI_INT64_T, cnt, 2, MPI_INT64_T, 0, comm));
  for (int r = 0; r < P && rank == 0 && rc == OVL_OK; r++) {
    tot[0] += cnt[2 * r], tot[1] += cnt[2 * r + 1];
    if (cnt[2 * r + 1] > INT32_MAX || 2 * cnt[2 * r] > INT32_MAX)
      rc = ovl_err_set(OVL_ERR_SIZE, "cannot write '%s': one process holds more values than one message holds", path);
  }
  rc = ovl_err_agree(comm, rc);
  if (rc == OVL_OK &&
      (rc = ovl_check_memory(comm, rank == 0 ? tot[1] * 8 + tot[0] * (int64_t)(sizeof(gblock) + 8) : 0, 0)) != OVL_OK)
    rc = with_path(rc, path);
  gblock *gb = NULL;
  double *val = NULL;
  int *idx = NULL;
  if (rc == OVL_OK && rank == 0) rc = ovl_malloc(sizeof(gblock) * (size_t)(tot[0] + 1), &gb);
  if (rc == OVL_OK && rank == 0) rc = ovl_malloc(sizeof(double) * (size_t)(tot[1] + 1), &val);
  if (rc == OVL_OK) rc = ovl_malloc(sizeof(int) * (size_t)(2 * (rank == 0 ? tot[0] : mine[0]) + 2), &idx);
  rc = ovl_err_agree(comm, rc);
  if (rc == OVL_OK) {
    /* each process's index as (I, J) pairs, its values in CSR order */
    const ovl_i_bsr *L = &B->loc;
    int *my = idx;
    for (int64_t r = 0; r < B->nrows; r++)
      for (int64_t k = L->rowptr[r]; k < L->rowptr[r + 1]; k++) my[2 * k] = B->rows[r], my[2 * k + 1] = L->colidx[k];
    if (rank == 0) {
      int64_t nb = 0, nv = 0;
      for (int r = 0; r < P; r++) {
        int64_t rb = cnt[2 * r], rv = cnt[2 * r + 1];
        if (r == 0) {
          if (rv) memcpy(val, L->val, sizeof(double) * (size_t)rv);
        } else if (rb > 0) {
          OVL_MPI(MPI_Recv(idx + 2 * nb, (int)(2 * rb), MPI_INT, r, TAG_IDX, comm, MPI_STATUS_IGNORE));
          OVL_MPI(MPI_Recv(val + nv, (int)rv, MPI_DOUBLE, r, TAG_VAL, comm, MPI_STATUS_IGNORE));
        }
        const int *ix = idx + 2 * nb;
        for (int64_t t = 0; t < rb; t++) {
          gb[nb + t] = (gblock){ix[2 * t], ix[2 * t + 1], nv};
          nv += (int64_t)B->bs[ix[2 * t]] * B->bs[ix[2 * t + 1]];
        }
        nb += rb;
      }
    } else if (mine[0] > 0) {
      OVL_MPI(MPI_Send(idx, (int)(2 * mine[0]), MPI_INT, 0, TAG_IDX, comm));
      OVL_MPI(MPI_Send(B->loc.val, (int)mine[1], MPI_DOUBLE, 0, TAG_VAL, comm));
    }
  }
  if (rc == OVL_OK && rank == 0) {
    qsort(gb, (size_t)tot[0], sizeof *gb, cmp_gblock);
    if (symmetric) rc = check_symmetric(B, path, gb, tot[0], val);
    ovl_file_writer w;
    int64_t blocks = 0;
    uint64_t sum = 0;
    char *text = NULL;
    if (rc == OVL_OK) rc = ovl_file_writer_open(&w, path, "output");
    if (rc == OVL_OK) {
      rc = write_data(B, path, bsr, symmetric != 0, gb, tot[0], val, w.f, &blocks, &sum);
      if (rc == OVL_OK && fflush(w.f) != 0)
        rc = ovl_err_set(OVL_ERR_IO, "cannot write '%s': %s", path, strerror(errno ? errno : EIO));
      if (rc == OVL_OK) rc = sidecar_text(B, bsr, blocks, symmetric != 0, sum, &text);
      if (rc == OVL_OK) {
        /* the sidecar first, then the data; a signal that ends the process waits for both renames */
        char *line = NULL;
        rc = concat(text, "\n", &line);
        ovl_tmp_hold(1);
        if (rc == OVL_OK) rc = ovl_file_write_atomic(side, "output sidecar", line, strlen(line));
        ovl_free(&line);
        if (rc == OVL_OK) {
          rc = ovl_file_writer_commit(&w);
          if (rc != OVL_OK) unlink(side); /* no sidecar that describes no data */
        } else ovl_file_writer_abort(&w);
        ovl_tmp_hold(0);
      } else ovl_file_writer_abort(&w);
    }
    ovl_free(&text);
  }
  ovl_free(&cnt), ovl_free(&gb), ovl_free(&val), ovl_free(&idx), ovl_free(&side);
  return ovl_err_agree(comm, rc);
}
