/* ovl core: error codes, collective error agreement, timers, logging.
 *
 * Conventions used by every public function of ovl:
 *  - it returns an ovl_err (OVL_OK == 0 on success);
 *  - its comment says whether it is COLLECTIVE (every rank of the named
 *    communicator must call it) or LOCAL;
 *  - a collective function that validates input agrees on the verdict with
 *    one reduction before any data moves, so every rank returns the same
 *    code and ovl_errmsg() holds the same text on every rank.
 */
#ifndef OVL_CORE_H
#define OVL_CORE_H

#include <mpi.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* C11's _Noreturn is not C++: there the attribute [[noreturn]] says the same. */
#ifdef __cplusplus
#define OVL_NORETURN [[noreturn]]
#else
#define OVL_NORETURN _Noreturn
#endif

/* Error codes, ordered by severity: the collective agreement keeps the
 * largest code seen on any rank. */
typedef enum ovl_err {
  OVL_OK = 0,
  OVL_ERR_ARG = 1,         /* invalid argument or option */
  OVL_ERR_SIZE = 2,        /* sizes that contradict each other or the grid */
  OVL_ERR_GRID = 3,        /* rank count does not fit the requested grid */
  OVL_ERR_IO = 4,          /* file missing, unreadable, unwritable */
  OVL_ERR_FORMAT = 5,      /* file present but malformed or truncated */
  OVL_ERR_NUMERIC = 6,     /* NaN/Inf, asymmetry, verification failure */
  OVL_ERR_NOMEM = 7,       /* allocation failed or over the memory limit */
  OVL_ERR_UNSUPPORTED = 8, /* valid request that this build cannot do */
  OVL_ERR_MPI = 9,         /* an MPI call returned an error */
  OVL_ERR_INTERNAL = 10    /* a bug in ovl */
} ovl_err;

/* Short constant name of a code ("OVL_ERR_ARG"). LOCAL. */
const char *ovl_err_name(ovl_err code);

/* Message of the last error recorded on this rank (empty if none). LOCAL. */
const char *ovl_errmsg(void);

/* Record a formatted message for code and return code. LOCAL.
 * Typical use: return ovl_err_set(OVL_ERR_ARG, "n must be > 0, got %d", n); */
ovl_err ovl_err_set(ovl_err code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Clear the recorded error. LOCAL. */
void ovl_err_clear(void);

/* Agree on an error across comm. COLLECTIVE over comm.
 * Every rank passes its local verdict; all ranks return the largest code and
 * hold, in ovl_errmsg(), the message of the lowest rank that reported that
 * code. Costs one MPI_Allreduce, plus one MPI_Bcast only when an error was
 * found. comm == MPI_COMM_NULL returns local unchanged. */
ovl_err ovl_err_agree(MPI_Comm comm, ovl_err local);

/* Print "ovl: fatal: <message>" on this rank and MPI_Abort(comm). For
 * failures after data has started moving, when a clean return could leave
 * other ranks waiting. LOCAL, does not return. */
OVL_NORETURN void ovl_fatal(MPI_Comm comm, ovl_err code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Convert an MPI return code into OVL_ERR_MPI with the MPI error string.
 * LOCAL. */
ovl_err ovl_err_mpi(int mpi_rc, const char *call);

/* ---- macros (the only three) ------------------------------------------ */

/* Evaluate an ovl call and return its code on failure. */
#define OVL_TRY(call)                                                                                                  \
  do {                                                                                                                 \
    ovl_err ovl_try_rc_ = (call);                                                                                      \
    if (ovl_try_rc_ != OVL_OK) return ovl_try_rc_;                                                                     \
  } while (0)

/* Check a condition; on failure record a message and return code. */
#define OVL_CHECK(cond, code, ...)                                                                                     \
  do {                                                                                                                 \
    if (!(cond)) return ovl_err_set((code), __VA_ARGS__);                                                              \
  } while (0)

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

/* Finish an atomic text write: close f (written to tmp), then rename tmp to
 * path; on any failure tmp is removed and OVL_ERR_IO names the step. LOCAL. */
ovl_err ovl_file_commit(FILE *f, const char *tmp, const char *path);

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
 * process when the output is whole. ovl_tmp_exit is async-signal-safe;
 * the others are LOCAL and called by one thread. */
void ovl_tmp_track(const char *path);
void ovl_tmp_untrack(const char *path);
void ovl_tmp_hold(int on);
void ovl_tmp_exit(int code);

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
/* Index of the part that holds item g. */
static inline int ovl_block_owner(int64_t n, int p, int64_t g) {
  int64_t q = n / p, r = n % p;
  if (g < r * (q + 1)) return (int)(g / (q + 1));
  return (int)(r + (g - r * (q + 1)) / q);
}

/* Library version string. LOCAL. */
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
