/* Helpers shared by the matrix file readers and writers (src/dmat/io_*.c):
 * the JSON sidecar, atomic writes through a temporary file, small-file
 * reading, byte order, and string broadcast. All functions are LOCAL unless
 * their comment says otherwise. */
#ifndef OVL_IO_UTIL_H
#define OVL_IO_UTIL_H

#include <stddef.h>
#include <stdio.h>

#include "ovl/dmat.h"

/* Largest sidecar accepted, in bytes. */
enum { OVL_IO_SIDECAR_MAX = 65536 };

/* Parse sidecar text (len bytes, NUL not needed; read by the library's JSON
 * layer, ovl/json.h): a JSON object with exactly the keys "rows"
 * and "cols" (non-negative integers, at most 2^53) and "symmetric" (true or
 * false), each once, in any order, with any JSON whitespace. A symmetric
 * matrix must be square and rows * cols * 8 must fit in an int64. what names
 * the file in messages. Errors: OVL_ERR_FORMAT, OVL_ERR_NOMEM. */
ovl_err ovl_io_parse_meta(const char *text, size_t len, const char *what, ovl_matrix_meta *meta);

/* The same, with the optional key "checksum" (a string of 16 hex digits,
 * ovl_dmat_checksum of the data, written by ovl since 0.x): *has_sum is 1
 * and *sum its value when present, 0 otherwise. */
ovl_err ovl_io_parse_sidecar(const char *text, size_t len, const char *what, ovl_matrix_meta *meta, int *has_sum,
                             uint64_t *sum);

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
/* The same with the data's checksum as the key "checksum". */
int ovl_io_format_sidecar(char *buf, size_t size, const ovl_matrix_meta *meta, uint64_t sum);

/* Read and parse "<path>.json". Errors: OVL_ERR_IO, OVL_ERR_FORMAT,
 * OVL_ERR_NOMEM. */
ovl_err ovl_io_read_meta_file(const char *path, ovl_matrix_meta *meta);
/* The same, with the sidecar's checksum when it has one (ovl_io_parse_sidecar). */
ovl_err ovl_io_read_sidecar_file(const char *path, ovl_matrix_meta *meta, int *has_sum, uint64_t *sum);
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

/* Reserve bytes of disk space for the open temporary fd (posix_fallocate;
 * skipped where the file system cannot), so that a disk or quota too small
 * for the data fails here, before any data moves: MPI-IO writes into a sized
 * file on a full file system can succeed without storing the data (seen with
 * Open MPI 4.1 on tmpfs). tmp and path name the temporary and the target in
 * messages. LOCAL. Errors: OVL_ERR_IO. */
ovl_err ovl_io_reserve(int fd, const char *tmp, const char *path, int64_t bytes);

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
