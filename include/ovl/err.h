/* ovl errors without MPI: the error codes, the message of the last error,
 * the argument checks that need no communicator, and the one escaping of
 * text for a terminal. It is the bottom of the house: the plan schema
 * (ovl/schema.h), and through it the cost models and the Python package,
 * use it without mpi.h; ovl/core.h includes it and adds the collective
 * agreement (ovl_err_agree) and the MPI checks. */
#ifndef OVL_ERR_H
#define OVL_ERR_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
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

/* The checks of arguments every public function makes first, before any
 * communication. LOCAL. Each returns OVL_OK, or OVL_ERR_ARG with a message
 * that names fn (the function) and name (the argument):
 *  - ovl_check_handle: h is NULL ("never created, or destroyed": destroy
 *    functions null the caller's handle);
 *  - ovl_check_ptr: p is NULL (an output pointer or a required array);
 *  (ovl_check_comm, for a communicator, is in ovl/core.h). */
ovl_err ovl_check_handle(const void *h, const char *fn, const char *name);
ovl_err ovl_check_ptr(const void *p, const char *fn, const char *name);

/* The one escaping of text for a terminal: src copied into dst (n bytes,
 * always terminated, cut at a whole character) with control characters
 * (newlines and tabs too), DEL, C1 controls and bytes that are not valid
 * UTF-8 written as \xNN; printable ASCII and valid UTF-8 pass unchanged.
 * Messages (ovl_err_set, ovl_log, ovl_warn, ovl_fatal), ovl_fprintf and the
 * strings of records (ovl_record_set_str) go through it. Returns dst. LOCAL. */
const char *ovl_escape(char *dst, size_t n, const char *src);

/* What ovl_escape_as writes as \xNN besides DEL, C1 controls and invalid UTF-8. */
typedef enum ovl_escape_c0 {
  OVL_ESCAPE_C0_ALL,   /* every C0 control (ovl_escape, messages) */
  OVL_ESCAPE_C0_LINES, /* every C0 control but newline and tab (ovl_fprintf) */
  OVL_ESCAPE_C0_NONE   /* no C0 control: the caller escapes them (JSON strings: \n, \u0001) */
} ovl_escape_c0;
/* ovl_escape with the C0 controls treated as c0 says. Returns dst. LOCAL. */
const char *ovl_escape_as(char *dst, size_t n, const char *src, ovl_escape_c0 c0);

/* ---- macros ------------------------------------------------------------ */

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

#ifdef __cplusplus
}
#endif
#endif
