/* ovl core: error codes, collective error agreement, timers, logging.
 *
 * Conventions used by every public function of ovl:
 *  - it returns an ovl_err (OVL_OK == 0 on success);
 *  - its comment says whether it is COLLECTIVE (every rank of the named
 *    communicator must call it) or LOCAL;
 *  - a collective function that validates input agrees on the verdict with
 *    one reduction before any data moves, so every rank returns the same
 *    code and ovl_errmsg() holds the same text on every rank;
 *  - a NULL handle (never created, or nulled by its destroy), a NULL output
 *    pointer and MPI_COMM_NULL are OVL_ERR_ARG naming the function and the
 *    argument (ovl_check_handle, ovl_check_ptr, ovl_check_comm), never a
 *    crash or MPI's error handler; accessors that return a value answer a
 *    NULL handle as an idle rank (0, -1, NULL or MPI_COMM_NULL);
 *  - a collective constructor refuses arguments that differ between ranks
 *    with the same OVL_ERR_ARG on every rank (ovl_err_agree_same).
 */
#ifndef OVL_CORE_H
#define OVL_CORE_H

/* ovl is a C API: C++ programs that include it use MPI's C bindings, so
 * Open MPI's and MPICH's mpi.h must leave out their C++ bindings (which
 * would need libmpi_cxx or libmpichcxx at link time). Defined here unless
 * the program decided before (as PETSc's headers do); the CMake package and
 * ovl.pc pass them too, for programs that include mpi.h first. */
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1
#endif
#include <mpi.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ovl/err.h"
#include "ovl/version.h"

#ifdef __cplusplus
extern "C" {
#endif

/* C11's _Noreturn is not C++: there the attribute [[noreturn]] says the same. */
#ifdef __cplusplus
#define OVL_NORETURN [[noreturn]]
#else
#define OVL_NORETURN _Noreturn
#endif

/* Agree on an error across comm. COLLECTIVE over comm.
 * Every rank passes its local verdict; all ranks return the largest code and
 * hold, in ovl_errmsg(), the message of the lowest rank that reported that
 * code. Costs one MPI_Allreduce, plus one MPI_Bcast only when an error was
 * found. comm == MPI_COMM_NULL returns local unchanged. */
ovl_err ovl_err_agree(MPI_Comm comm, ovl_err local);

/* Agree that k values are the same on every rank of comm, then agree on
 * local as ovl_err_agree does. COLLECTIVE over comm. v[i] is named names[i]
 * in the message; a name that starts with '=' marks a hash of a string (the
 * message then does not print the values). Every rank returns the same
 * code: OVL_ERR_ARG naming the first value that differs from rank 0's
 * ("n = 13 on rank 1 but 12 on rank 0 (every rank must pass the same)"),
 * else local's agreement. k <= 16. comm == MPI_COMM_NULL returns local
 * unchanged. The collective constructors (grids, matrices, lane sets, ...)
 * and the row-block entries check their arguments with it. */
ovl_err ovl_err_agree_same(MPI_Comm comm, ovl_err local, const int64_t *v, const char *const *names, int k);

/* ovl_check_comm: comm is MPI_COMM_NULL (refused before MPI sees it, so
 * MPI's error handler does not abort the job): OVL_ERR_ARG naming fn. The
 * MPI-free checks (ovl_check_handle, ovl_check_ptr) are in ovl/err.h. LOCAL. */
ovl_err ovl_check_comm(MPI_Comm comm, const char *fn);

/* Print "ovl: fatal: <message>" on this rank and MPI_Abort(comm). For
 * failures after data has started moving, when a clean return could leave
 * other ranks waiting. LOCAL, does not return. */
OVL_NORETURN void ovl_fatal(MPI_Comm comm, ovl_err code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Convert an MPI return code into OVL_ERR_MPI with the MPI error string.
 * LOCAL. */
ovl_err ovl_err_mpi(int mpi_rc, const char *call);

/* ---- macros (the only three: OVL_TRY and OVL_CHECK are in ovl/err.h) ---- */

/* Evaluate an MPI call; on failure return OVL_ERR_MPI with its message. */
#define OVL_MPI(call)                                                                                                  \
  do {                                                                                                                 \
    int ovl_mpi_rc_ = (call);                                                                                          \
    if (ovl_mpi_rc_ != MPI_SUCCESS) return ovl_err_mpi(ovl_mpi_rc_, #call);                                            \
  } while (0)

/* ---- memory ------------------------------------------------------------ */

/* 64-byte aligned allocation of n bytes (n == 0 gives a valid pointer).
 * LOCAL. Returns OVL_ERR_NOMEM with the size in the message. */
ovl_err ovl_malloc(size_t n, void *ptr_out);
/* Same, zero-filled. */
ovl_err ovl_calloc(size_t n, void *ptr_out);
/* Free memory from ovl_malloc/ovl_calloc and null the pointer. LOCAL. */
void ovl_free(void *ptr_inout);

/* ---- files ------------------------------------------------------------- */

/* The one check of every file ovl reads, before it is opened for data:
 * path names an existing regular file that this process can open for
 * reading, of exactly `size` bytes when size >= 0. what names the kind of
 * file in messages ("machine file"). Never blocks: the file is opened with
 * O_NONBLOCK and a FIFO, device, socket or directory is refused by fstat
 * before any byte is read. LOCAL. Errors: OVL_ERR_IO (missing, not a regular
 * file, unreadable: with strerror), OVL_ERR_FORMAT (the size differs:
 * "truncated" or "oversized"). */
ovl_err ovl_file_check_read(const char *path, const char *what, int64_t size);

/* Open path for reading ("rb") after the same check (any size); *f receives
 * the stream (fclose it). LOCAL. Errors: as ovl_file_check_read. */
ovl_err ovl_file_open_read(const char *path, const char *what, FILE **f);
/* The whole of a file read through ovl_file_open_read, NUL-terminated, in
 * *text (ovl_free it), its length in *len. LOCAL. Errors: those of
 * ovl_file_open_read, OVL_ERR_FORMAT (more than max bytes, naming what and
 * the path), OVL_ERR_IO (a read error), OVL_ERR_NOMEM. */
ovl_err ovl_file_read_all(const char *path, const char *what, size_t max, char **text, size_t *len);

/* The one check of every output target, made before any computation and
 * again by the writers: path is not empty, its directory exists and is
 * writable, and path either does not exist or is a regular file (a FIFO,
 * device, socket or directory is never replaced), and it is none of the
 * ninputs files of inputs (NULL entries skipped; the same file by device and
 * inode, or the same name). what names the output in messages ("output",
 * "trace"). LOCAL. Errors: OVL_ERR_ARG (empty, or one of the inputs),
 * OVL_ERR_IO (with the reason). */
ovl_err ovl_file_check_write(const char *path, const char *what, const char *const *inputs, int ninputs);

/* 1 when the output paths a and b are one target: the same text, or the
 * same file name in the same directory (by device and inode); 0 otherwise
 * (and for NULL). Outputs are renamed into place (ovl_file_writer), so two
 * names that are links to one file are two targets: each link is replaced,
 * the file they point to is not written. LOCAL. */
int ovl_file_same_target(const char *a, const char *b);

/* ---- safe writes ---------------------------------------------------------
 * Every file ovl writes goes through these (docs/lab/reliability.md, "Outputs"):
 * the data is written to a new temporary beside the target, created with
 * O_CREAT | O_EXCL | O_NOFOLLOW under an unpredictable name (so a symlink,
 * FIFO or directory planted at any name ovl could use is never opened or
 * followed), synced, checked to be still the file that was created, and
 * renamed over the target (which replaces a symlink at the target itself,
 * never the file it points to). A failure removes the temporary; the
 * previous target stays as it was. */

/* The infix of every temporary: "<target>" OVL_FILE_TMP_INFIX "<pid>.<12
 * random characters of [0-9a-z]>". */
#define OVL_FILE_TMP_INFIX ".tmp."

/* Create a new regular file at exactly name, exclusively (nothing may exist
 * there, not even a dangling symlink), for writing; *fd receives the
 * descriptor (close it). LOCAL. Errors: OVL_ERR_ARG (empty name),
 * OVL_ERR_IO (with strerror: "File exists" when something is there). */
ovl_err ovl_file_create_excl(const char *name, const char *what, int *fd);

/* A new temporary beside path, created as ovl_file_create_excl does under a
 * random name (another name is drawn while one exists). *tmp receives the
 * name (ovl_free it), *fd the open descriptor (close it). what names the
 * target in messages. LOCAL. Errors: OVL_ERR_ARG, OVL_ERR_IO (with
 * strerror), OVL_ERR_NOMEM. */
ovl_err ovl_file_tmp_create(const char *path, const char *what, char **tmp, int *fd);

/* 1 when name is a temporary that ovl_file_tmp_create made for a target
 * whose file name is base (no directory part); *pid (may be NULL) receives
 * the creating process's id. "<target>.tmp.<pid>", the temporaries of
 * earlier versions, counts too. LOCAL. */
int ovl_file_is_tmp_name(const char *name, const char *base, long *pid);

/* Put the temporary tmp, open as fd and completely written, in place of
 * path: fsync fd, check that tmp still names the file of fd (not replaced
 * or removed meanwhile), check path again (ovl_file_check_write), rename,
 * and sync the directory. Neither closes fd nor removes tmp on failure.
 * LOCAL. Errors: OVL_ERR_IO (naming the step, with strerror), OVL_ERR_ARG. */
ovl_err ovl_file_tmp_commit(const char *tmp, int fd, const char *path, const char *what);

/* A stream writer on a safe temporary: open checks path
 * (ovl_file_check_write) and creates the temporary; write to w->f; commit
 * flushes and renames it into place (ovl_file_tmp_commit); abort (and any
 * failed commit) closes and removes the temporary. LOCAL. Errors:
 * OVL_ERR_IO (with strerror), OVL_ERR_ARG, OVL_ERR_NOMEM. */
typedef struct ovl_file_writer {
  FILE *f;          /* the stream to write to */
  int fd;           /* its descriptor */
  char *tmp;        /* the temporary's name */
  const char *path; /* the target (borrowed) */
  const char *what; /* the kind of output, for messages (borrowed) */
} ovl_file_writer;

ovl_err ovl_file_writer_open(ovl_file_writer *w, const char *path, const char *what);
ovl_err ovl_file_writer_commit(ovl_file_writer *w);
void ovl_file_writer_abort(ovl_file_writer *w);

/* Write len bytes of data to path through a writer. LOCAL. Errors: as the
 * writer's. */
ovl_err ovl_file_write_atomic(const char *path, const char *what, const void *data, size_t len);

/* ---- temporaries and signals ------------------------------------------- */

/* The temporaries this process is writing, for a signal handler that ends
 * the process (tools/ovl/cmd_purify.c). A writer calls ovl_tmp_track(tmp)
 * once the temporary exists and ovl_tmp_untrack(tmp) once it is renamed
 * into place or removed (up to 16 at once and paths below 4096 bytes; one
 * that does not fit is simply not removed on a signal). The renames that
 * put an output in place (data and sidecar) run between ovl_tmp_hold(1) and
 * ovl_tmp_hold(0). ovl_tmp_exit(code) removes every tracked temporary and
 * ends the process with _exit(code) (a code of 0 becomes 1); during a
 * commit it returns at once, and the commit's ovl_tmp_hold(0) ends the
 * process when the output is whole. ovl_tmp_live() is the number of
 * tracked temporaries. ovl_tmp_exit and ovl_tmp_live are async-signal-safe;
 * the others are LOCAL and called by one thread. */
void ovl_tmp_track(const char *path);
void ovl_tmp_untrack(const char *path);
void ovl_tmp_hold(int on);
void ovl_tmp_exit(int code);
int ovl_tmp_live(void);

/* ---- timers ------------------------------------------------------------ */

/* Wall-clock seconds (MPI_Wtime). LOCAL. */
double ovl_time(void);

/* Summary statistics of a sample. */
typedef struct ovl_stats {
  double min, median, max, mean;
  int count;
} ovl_stats;

/* Statistics of x[0..n-1] (x is not modified). LOCAL. */
ovl_stats ovl_stats_of(const double *x, int n);

/* For each repetition r, t[r] becomes the MAX over ranks of comm, then the
 * statistics of those maxima are returned on every rank. COLLECTIVE. */
ovl_err ovl_stats_max_over_ranks(MPI_Comm comm, double *t, int n, ovl_stats *out);

/* ---- logging ------------------------------------------------------------ */

typedef enum { OVL_LOG_QUIET = 0, OVL_LOG_INFO = 1, OVL_LOG_DEBUG = 2 } ovl_log_level;

/* Set the global verbosity (default OVL_LOG_INFO). LOCAL. */
void ovl_log_set_level(ovl_log_level level);
ovl_log_level ovl_log_get_level(void);

/* printf to stdout on rank 0 of MPI_COMM_WORLD only, when level allows.
 * LOCAL (no communication). */
void ovl_log(ovl_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* "ovl: warning: ..." to stderr on rank 0 of MPI_COMM_WORLD only, whatever
 * the level (so machine-readable stdout stays clean). LOCAL. */
void ovl_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* printf to stderr with a "[rank r] " prefix, on any rank. LOCAL. */
void ovl_log_rank(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* fprintf whose formatted text is escaped as ovl_escape does, newlines and
 * tabs kept: for every line that carries a file name, a path or a string
 * read from a file. Returns the bytes written, or -1 (a write error or no
 * memory). LOCAL. */
int ovl_fprintf(FILE *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Rank in MPI_COMM_WORLD (cached). LOCAL. */
int ovl_world_rank(void);

/* ---- small integer helpers --------------------------------------------- */

/* Balanced block partition of n items over p parts: part i gets
 * n/p + (i < n%p) items starting at i*(n/p) + min(i, n%p). LOCAL. */
static inline int64_t ovl_block_len(int64_t n, int p, int i) { return n / p + (i < n % p ? 1 : 0); }
static inline int64_t ovl_block_off(int64_t n, int p, int i) {
  int64_t r = n % p;
  return (int64_t)i * (n / p) + (i < r ? i : r);
}
/* Integer roots: the largest s with s*s <= x (ovl_isqrt) or s*s*s <= x
 * (ovl_icbrt); 0 for x < 1. Exact for every int (no floating point, no
 * overflow). LOCAL; pure functions. */
int ovl_isqrt(int x);
int ovl_icbrt(int x);
/* Overflow-checked products of sizes given by a user (grid dimensions, group
 * counts, n x n, bytes of a block). LOCAL; pure functions.
 *  - ovl_mul_i64: 1 and *out = a * b when the product fits in int64_t, else
 *    0 (*out is then left unchanged);
 *  - ovl_ranks_product: the product of the n dimensions dims (a grid, groups)
 *    in *out when it fits in an int (the largest size of an MPI
 *    communicator); else OVL_ERR_ARG naming what ("grid", "--groups") and
 *    the dimensions ("grid 65536 x 65536: the product 4294967296 exceeds
 *    2147483647, the most processes an MPI communicator holds"). A
 *    dimension < 0 is OVL_ERR_ARG too; n in [1, 3]. */
int ovl_mul_i64(int64_t a, int64_t b, int64_t *out);
ovl_err ovl_ranks_product(const int *dims, int n, const char *what, int *out);
/* Index of the part that holds item g. */
static inline int ovl_block_owner(int64_t n, int p, int64_t g) {
  int64_t q = n / p, r = n % p;
  if (g < r * (q + 1)) return (int)(g / (q + 1));
  return (int)(r + (g - r * (q + 1)) / q);
}

/* The library's version, "MAJOR.MINOR.PATCH" (the loaded library's; the
 * headers' is OVL_VERSION_STRING, ovl/version.h). LOCAL. */
const char *ovl_version(void);

/* The MPI library in use as one line for headers and records (the first
 * line of MPI_Get_library_version, cut at a comma past its first 8
 * characters; control characters, quotes and backslashes become spaces)
 * into buf (n bytes; MPI_MAX_LIBRARY_VERSION_STRING holds it). LOCAL.
 * Errors: OVL_ERR_ARG (buf NULL or n == 0), OVL_ERR_MPI. */
ovl_err ovl_mpi_library(char *buf, size_t n);

#ifdef __cplusplus
}
#endif
#endif
