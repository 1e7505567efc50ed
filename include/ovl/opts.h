/* ovl command-line options: a table-driven parser with OSU-style short flags
 * (-m min:max, -i iters, -x warmup, -f) and long forms (--iterations 10,
 * --iterations=10). All functions are LOCAL: every rank parses the same argv
 * and reaches the same verdict; callers still agree with ovl_err_agree. */
#ifndef OVL_OPTS_H
#define OVL_OPTS_H

#include <stdint.h>
#include <stdio.h>

#include "ovl/core.h"
#include "ovl/schema.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum ovl_opt_type {
  OVL_OPT_FLAG,        /* int*: set to 1 when present */
  OVL_OPT_INT,         /* int* */
  OVL_OPT_I64,         /* int64_t* */
  OVL_OPT_DOUBLE,      /* double*: a finite number (inf and nan are refused) */
  OVL_OPT_SIZE,        /* int64_t*: integer with optional K/M/G suffix (powers of 2) */
  OVL_OPT_RANGE,       /* int64_t[2]: "min:max" sizes, or one size for both */
  OVL_OPT_STRING,      /* const char**: points into argv; never empty */
  OVL_OPT_CHOICE,      /* const char**: one of choices[] (NULL-terminated) */
  OVL_OPT_INT_OR_AUTO, /* int*: an integer in [min, max], or "auto" (stored as OVL_OPT_AUTO) */
  OVL_OPT_LIST         /* ovl_opt_list*: a list of sizes, "1,2,4" or "1-6" (see ovl_parse_list) */
} ovl_opt_type;

/* The destination of an OVL_OPT_LIST option: the caller's array v of cap
 * entries and the count n. The default is what v[0..n-1] holds before the
 * parse; a value given replaces the whole list, and a refused value leaves
 * v and n as they were. */
typedef struct ovl_opt_list {
  int64_t *v;
  int cap, n;
} ovl_opt_list;

/* What OVL_OPT_INT_OR_AUTO stores for "auto": the one sentinel OVL_AUTO
 * (ovl/schema.h); this name is kept for one release. */
#define OVL_OPT_AUTO OVL_AUTO

typedef struct ovl_opt {
  const char *lname; /* long name without dashes, e.g. "iterations" */
  char sname;        /* short letter, or 0 */
  ovl_opt_type type;
  void *dest;
  const char *metavar; /* shown in --help, e.g. "N" */
  const char *help;    /* one line; NULL: an alias (another name of an option listed), left out of --help */
  const char *const *choices;
  int64_t min, max; /* bounds for INT/I64/SIZE/RANGE/LIST (each value) when min <= max */
} ovl_opt;

/* Parse argv[first..argc-1] against opts[0..nopts-1]. given[k] (may be NULL,
 * else nopts entries) is set to 1 for each option seen. Positional arguments
 * are an error. Returns OVL_ERR_ARG with a message naming the option and the
 * offending value. LOCAL. */
ovl_err ovl_opts_parse(const ovl_opt *opts, int nopts, int argc, char **argv, int first, unsigned char *given);

/* The same for options in a string, split at white space (no quoting), as
 * PETSc's options database takes them from PETSC_OPTIONS: e.g. the value of
 * $OVL_OPTIONS, "--ndup 4 --algo summa". With ignore_unknown, an option the
 * table does not have is skipped with its value, if the next word is not an
 * option (so one string serves every command); otherwise it is an error.
 * Errors name the source (`what`, e.g. "OVL_OPTIONS"). Parse the string
 * first and argv after it: the command line wins. given as in
 * ovl_opts_parse, but not cleared. LOCAL. */
ovl_err ovl_opts_parse_string(const ovl_opt *opts, int nopts, const char *str, const char *what, int ignore_unknown,
                              unsigned char *given);

/* ovl_opts_parse_string for a caller that uses the values at once (a
 * library entry called many times): *words receives the copy of str that
 * string values point into (NULL when str is NULL or on error), which the
 * caller frees with free() once it no longer needs them. LOCAL. */
ovl_err ovl_opts_parse_string_buf(const ovl_opt *opts, int nopts, const char *str, const char *what, int ignore_unknown,
                                  unsigned char *given, char **words);

/* Print usage and one line per option with its current (default) value
 * (options whose help is NULL, aliases, are not listed). LOCAL. */
void ovl_opts_help(FILE *out, const char *usage, const ovl_opt *opts, int nopts);

/* Parse a comma-separated list of sizes (each as ovl_parse_size: "4K" is
 * 4096) and ascending ranges A-B (every integer from A to B: "1-6"), e.g.
 * "1,2,4", "1-3,8", "4K,64K". Every value must lie in [lo, hi] (when lo <=
 * hi), and there may be at most cap of them; out (may be NULL: count only)
 * receives them in order and *n the count. LOCAL. Errors: OVL_ERR_ARG (an
 * empty list or item, a trailing comma, a value that is not a size, a range
 * that descends, a value out of bounds, more than cap values), naming the
 * offending item; out and *n are then left as they were. */
ovl_err ovl_parse_list(const char *s, int64_t lo, int64_t hi, int64_t *out, int cap, int *n);

/* ovl_parse_int, ovl_parse_size and ovl_parse_dims: ovl/schema.h. */

#ifdef __cplusplus
}
#endif
#endif
