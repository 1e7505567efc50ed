/* ovl JSON: the library's one JSON reader (src/core/json.c), over cJSON: files loaded
 * through the input checks of src/core/file.c with a size cap, parsed
 * strictly, read through typed getters whose errors name the file and the
 * key; and JSON lines (one object per line). Every JSON file ovl reads goes
 * through it, and the entries of other languages may read ovl's records
 * with it. cJSON's node type is only declared here (cJSON.h is not needed
 * to use it). All functions are LOCAL.
 *
 * Strictness beyond cJSON's own parser (RFC 8259): no leading zeros, a digit
 * after '.', no raw control characters inside strings, no NUL byte in the
 * text, nothing after the value; a key a getter reads must appear once in its
 * object. Numbers are IEEE doubles: an integer getter accepts any number of
 * integral value (3, 3.0, 3e0) whose magnitude is at most 2^53. */
#ifndef OVL_JSON_H
#define OVL_JSON_H

#include <stddef.h>
#include <stdint.h>

#include "ovl/core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cJSON cJSON; /* cJSON's node; <cjson/cJSON.h> declares it in full */

/* A parsed document and the names its messages use:
 *   "<what> '<path>': <where>\"key\" must be ..." */
typedef struct ovl_json {
  cJSON *root;
  char what[64];   /* kind of file: "machine file", "sidecar" */
  char path[1024]; /* file name (truncated for messages only) */
  char where[96];  /* "" or a location inside the document, e.g. "fbw[2]: " */
} ovl_json;

/* Largest integer a getter accepts (exactly representable in a double). */
#define OVL_JSON_INT_MAX ((int64_t)9007199254740992) /* 2^53 */

/* Parse len bytes of text (a NUL is not needed; one inside is an error).
 * what and path name the source in messages. Errors: OVL_ERR_FORMAT ("<what>
 * '<path>' is not valid JSON at line L, column C: found '...' after '...'"),
 * OVL_ERR_NOMEM, OVL_ERR_ARG (text or doc NULL). On error doc->root is NULL
 * (when doc is given). */
ovl_err ovl_json_parse(const char *text, size_t len, const char *what, const char *path, ovl_json *doc);

/* Read the file path (ovl_file_open_read: a FIFO, device or directory is
 * refused before any byte is read) of at most max bytes and parse it.
 * Errors: OVL_ERR_IO, OVL_ERR_FORMAT (larger than max, or not valid JSON),
 * OVL_ERR_NOMEM. */
ovl_err ovl_json_load(const char *path, const char *what, size_t max, ovl_json *doc);

/* Free the tree (NULL-safe; doc->root becomes NULL). */
void ovl_json_free(ovl_json *doc);

/* OVL_ERR_FORMAT unless the root is an object ("<what> '<path>' must hold a
 * JSON object <shape>"; shape may be ""). */
ovl_err ovl_json_root_object(const ovl_json *doc, const char *shape);

/* The member key of object obj, or NULL when absent. A key present twice,
 * or an obj that is not an object, gives NULL and *dup (may be NULL) = 1. */
const cJSON *ovl_json_find(const cJSON *obj, const char *key, int *dup);

/* Typed getters. Required ones fail with OVL_ERR_FORMAT naming the key when
 * it is absent, repeated, or of another type / out of range; the _opt ones
 * return the default when the key is absent or null (a present value of
 * another type is still an error). Strings are copied into buf of n bytes;
 * a longer one is an error. */
ovl_err ovl_json_num(const ovl_json *doc, const cJSON *obj, const char *key, double *v);
ovl_err ovl_json_num_opt(const ovl_json *doc, const cJSON *obj, const char *key, double dflt, double *v);
ovl_err ovl_json_int(const ovl_json *doc, const cJSON *obj, const char *key, int64_t lo, int64_t hi, int64_t *v);
ovl_err ovl_json_int_opt(const ovl_json *doc, const cJSON *obj, const char *key, int64_t lo, int64_t hi, int64_t dflt,
                         int64_t *v);
ovl_err ovl_json_str(const ovl_json *doc, const cJSON *obj, const char *key, char *buf, size_t n);
ovl_err ovl_json_str_opt(const ovl_json *doc, const cJSON *obj, const char *key, const char *dflt, char *buf, size_t n);
ovl_err ovl_json_bool(const ovl_json *doc, const cJSON *obj, const char *key, int *v);
ovl_err ovl_json_bool_opt(const ovl_json *doc, const cJSON *obj, const char *key, int dflt, int *v);
/* An array of finite numbers: at most cap of them into v, their count in *count. */
ovl_err ovl_json_nums(const ovl_json *doc, const cJSON *obj, const char *key, double *v, int cap, int *count);

/* OVL_ERR_FORMAT naming the first member of obj whose key is not in keys
 * (NULL-terminated), or that appears twice. */
ovl_err ovl_json_only_keys(const ovl_json *doc, const cJSON *obj, const char *const *keys);

/* The compact JSON text of item (or "absent"), at most n - 1 characters,
 * "..." marking a cut. For messages. */
void ovl_json_text(const cJSON *item, char *buf, size_t n);

/* 1 when a and b are equal JSON values (numbers compared as doubles). */
int ovl_json_equal(const cJSON *a, const cJSON *b);

/* ---- JSON lines ---------------------------------------------------------------
 * A file of one JSON value per line. fn is called for every line, in order:
 * line is its text (without the '\n', NUL-terminated), lineno counts from 1,
 * doc->root is the parsed value or NULL when the line is not valid JSON (the
 * reader goes on: the caller decides whether a bad line matters), and
 * doc->where says "line N: ". A nonzero return of fn stops the reading and is
 * returned as the ovl_err. */
typedef ovl_err (*ovl_json_line_fn)(void *ctx, const ovl_json *doc, const char *line, int lineno);

/* Read path (ovl_file_open_read, at most max bytes) and call fn per line.
 * Errors: OVL_ERR_IO, OVL_ERR_FORMAT (larger than max), OVL_ERR_NOMEM, or
 * what fn returned. */
ovl_err ovl_json_lines_read(const char *path, const char *what, size_t max, ovl_json_line_fn fn, void *ctx);

#ifdef __cplusplus
}
#endif
#endif
