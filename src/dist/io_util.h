/* Helpers shared by the matrix file readers and writers (src/dist/io_*.c):
 * the JSON sidecar, atomic writes through a temporary file, small-file
 * reading, byte order, and string broadcast. All functions are LOCAL unless
 * their comment says otherwise. */
#ifndef OVL_IO_UTIL_H
#define OVL_IO_UTIL_H

#include <stddef.h>
#include <stdio.h>

#include "ovl/dist.h"

/* Largest sidecar accepted, in bytes. */
enum { OVL_IO_SIDECAR_MAX = 65536 };

/* Parse sidecar text (len bytes, NUL not needed; read by the library's JSON
 * layer, ovl/json.h): a JSON object with exactly the keys "rows"
 * and "cols" (non-negative integers, at most 2^53) and "symmetric" (true or
 * false), each once, in any order, with any JSON whitespace. A symmetric
 * matrix must be square and rows * cols * 8 must fit in an int64. what names
 * the file in messages. Errors: OVL_ERR_FORMAT, OVL_ERR_NOMEM. */
ovl_err ovl_io_parse_meta(const char *text, size_t len, const char *what, ovl_matrix_meta *meta);

/* Parse a Matrix Market stream (header, size line, entries) into a new
 * m x n column-major array *g (ovl_free it); *sym is 1 for a symmetric file
 * (expanded to full storage). what names the file in messages. max_elems > 0
 * refuses a matrix of more than max_elems entries before allocating
 * (OVL_ERR_SIZE); 0 means no limit. Does not close f. Errors:
 * OVL_ERR_FORMAT, OVL_ERR_UNSUPPORTED, OVL_ERR_SIZE, OVL_ERR_IO,
 * OVL_ERR_NOMEM. */
ovl_err ovl_io_mtx_parse(FILE *f, const char *what, int64_t max_elems, int64_t *m, int64_t *n, int *sym, double **g);

/* Sidecar text of meta, with a trailing newline; returns snprintf's value. */
int ovl_io_format_meta(char *buf, size_t size, const ovl_matrix_meta *meta);

/* Read and parse "<path>.json". Errors: OVL_ERR_IO, OVL_ERR_FORMAT,
 * OVL_ERR_NOMEM. */
ovl_err ovl_io_read_meta_file(const char *path, ovl_matrix_meta *meta);
/* Rank 0 read a matrix's sizes into *found with verdict rc: every rank of
 * comm learns the verdict and, when it is OVL_OK, the sizes in *meta.
 * COLLECTIVE over comm. */
ovl_err ovl_io_meta_share(MPI_Comm comm, ovl_err rc, const ovl_matrix_meta *found, ovl_matrix_meta *meta);

/* ovl_file_check_read(path, what, -1): OVL_ERR_IO (with strerror) unless
 * path is an existing, readable regular file (so that opening a FIFO or
 * device can never block); what names the kind of file in the message. */
ovl_err ovl_io_check_regular(const char *path, const char *what);

/* "<path><suffix>" in new memory (ovl_free it). Errors: OVL_ERR_NOMEM. */
ovl_err ovl_io_concat(const char *path, const char *suffix, char **out);

/* "<path>.tmp.<pid>" in new memory (ovl_free it). Errors: OVL_ERR_NOMEM. */
ovl_err ovl_io_tmp_name(const char *path, long pid, char **out);

/* Create (or truncate) the file tmp and reserve bytes of disk space for it
 * (posix_fallocate; skipped where the file system cannot), so that failures
 * to create it give strerror in the message and a disk or quota too small for
 * the data fails here, before any data moves: MPI-IO writes into a sized file
 * on a full file system can succeed without storing the data (seen with Open
 * MPI 4.1 on tmpfs). path is the final name, for messages. On success tmp
 * is tracked (ovl_tmp_track: a signal that ends the process removes it);
 * the caller untracks it once it is renamed or removed.
 * Errors: OVL_ERR_IO (unlinks tmp). */
ovl_err ovl_io_create_sized(const char *tmp, const char *path, int64_t bytes);

/* An atomic text/binary writer: open checks path (ovl_file_check_write:
 * a special file or a directory is never replaced), writes "<path>.tmp.<pid>", commit
 * flushes, fsyncs, closes and renames it to path (ovl_tmp_hold around the
 * rename); any failure (and abort) closes and unlinks the temporary, so no
 * partial file remains. The temporary is tracked while it exists
 * (ovl_tmp_track). */
typedef struct ovl_io_atomic {
  FILE *f;
  char *tmp;
  const char *path; /* borrowed */
} ovl_io_atomic;

ovl_err ovl_io_atomic_open(ovl_io_atomic *w, const char *path);
ovl_err ovl_io_atomic_commit(ovl_io_atomic *w);
void ovl_io_atomic_abort(ovl_io_atomic *w);

/* Write len bytes to path atomically. Errors: OVL_ERR_IO, OVL_ERR_NOMEM. */
ovl_err ovl_io_write_file_atomic(const char *path, const void *data, size_t len);

/* 1 on a little-endian host. */
int ovl_io_host_le(void);
/* Reverse the byte order of n doubles in place. */
void ovl_io_bswap64(double *x, size_t n);

/* Broadcast rank 0's string *s to every rank of comm; other ranks receive a
 * new copy in *s (ovl_free it). COLLECTIVE over comm, agreed.
 * Errors: OVL_ERR_NOMEM, OVL_ERR_MPI. */
ovl_err ovl_io_bcast_string(MPI_Comm comm, char **s);

/* Re-record the current (agreed) message as "<prefix>: <message>" under
 * code; returns code. LOCAL. */
ovl_err ovl_io_prefix_msg(ovl_err code, const char *prefix);

/* Checks of a matrix read from path, with path in the message. COLLECTIVE
 * over the parent, agreed. finite: OVL_ERR_NUMERIC on NaN/Inf.
 * symmetric_read: OVL_ERR_NUMERIC when not square or not symmetric (1e-12).
 * symmetric_write: before writing A as symmetric (OVL_ERR_SIZE when not
 * square, OVL_ERR_NUMERIC when not symmetric). */
ovl_err ovl_io_check_finite(ovl_dmat A, const char *path);
ovl_err ovl_io_check_symmetric_read(ovl_dmat A, const char *path);
ovl_err ovl_io_check_symmetric_write(ovl_dmat A, const char *path);

#endif
