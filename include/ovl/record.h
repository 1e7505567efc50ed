/* Result records: the one way ovl writes a JSON object (a line of `--json`
 * output, an entry of the tune database).
 *
 * A record is an opaque JSON object whose first two members are
 * "type": <what it is> and "schema": OVL_RECORD_SCHEMA; members keep the
 * order in which they were first set, and setting a key again replaces its
 * value in place. Strings are escaped as JSON requires; a number that is not
 * finite, and a value set with ovl_record_set_null, is written as null (the
 * one way to say "not measured"). Integers are written exactly (int64).
 * Every function is LOCAL and NULL-safe in the record; errors:
 * OVL_ERR_ARG (a NULL record or key, the keys "type" and "schema", which
 * ovl_record_create owns), OVL_ERR_NOMEM, OVL_ERR_IO (ovl_record_print).
 * Reading records back: tools/ovlrecords.py (Python); the library's own
 * files are read by its internal JSON layer. */
#ifndef OVL_RECORD_H
#define OVL_RECORD_H

#include <stdint.h>
#include <stdio.h>

#include "ovl/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The version of the record layout written in "schema". */
#define OVL_RECORD_SCHEMA 1

typedef struct ovl_record ovl_record;

/* A new record {"type": type, "schema": OVL_RECORD_SCHEMA}. type NULL makes
 * a plain object without the two (for nesting with ovl_record_set_record).
 * LOCAL. Errors: OVL_ERR_ARG (empty type), OVL_ERR_NOMEM. */
ovl_err ovl_record_create(const char *type, ovl_record **out);

/* Free a record and null the handle (NULL-safe). LOCAL. */
void ovl_record_destroy(ovl_record **r);

/* key: v; a NaN or infinity writes null. LOCAL. */
ovl_err ovl_record_set_num(ovl_record *r, const char *key, double v);
/* key: v, exactly. LOCAL. */
ovl_err ovl_record_set_int(ovl_record *r, const char *key, int64_t v);
/* key: "s" (escaped); s NULL writes null. LOCAL. */
ovl_err ovl_record_set_str(ovl_record *r, const char *key, const char *s);
/* key: true / false (v != 0). LOCAL. */
ovl_err ovl_record_set_bool(ovl_record *r, const char *key, int v);
/* key: null, for a value that was not measured. LOCAL. */
ovl_err ovl_record_set_null(ovl_record *r, const char *key);
/* key: [v0, v1, ...] (n >= 0 numbers; non-finite ones written as null). LOCAL. */
ovl_err ovl_record_set_nums(ovl_record *r, const char *key, const double *v, int n);
/* key: the object *sub, which moves into r (*sub becomes NULL, also on
 * error, when it is destroyed). LOCAL. */
ovl_err ovl_record_set_record(ovl_record *r, const char *key, ovl_record **sub);
/* Append the object *sub to the array key (created empty first when absent;
 * OVL_ERR_ARG when key holds something else); *sub moves as above. LOCAL. */
ovl_err ovl_record_append_record(ovl_record *r, const char *key, ovl_record **sub);

/* The record as one line of compact JSON (no newline) in new memory:
 * ovl_free(text). LOCAL. Errors: OVL_ERR_ARG, OVL_ERR_NOMEM. */
ovl_err ovl_record_text(const ovl_record *r, char **text);
/* Write the record to f as one line, '\n'-terminated. indent != 0 writes
 * it over several lines, indented (for files people read); still one
 * record. LOCAL. Errors: OVL_ERR_ARG, OVL_ERR_NOMEM, OVL_ERR_IO (a write
 * failed). */
ovl_err ovl_record_fprint(const ovl_record *r, FILE *f, int indent);
/* ovl_record_fprint(r, f, 0). LOCAL. */
ovl_err ovl_record_print(const ovl_record *r, FILE *f);

#ifdef __cplusplus
}
#endif
#endif
