/* The tune database: the measured best configuration of a kernel family for
 * a matrix size and a rank count, kept in a file that `auto` reads and
 * `ovl tune` writes.
 *
 * File format: JSON lines, one entry per line,
 *   {"type":"tune","schema":1,"family":"ssc","n":576,"P":8,"algo":"alg5","ndup":4,"s":0,"c":0,"b":256,
 *    "G":1,"lookahead":0,"t_median":1.2e-02,"machine":"..."}
 * (the keys of the knob table, ovl/schema.h). Lines written before "type"
 * and "schema" existed, and with the algorithm as "kernel", read the same. A line
 * that is not such an entry (not JSON, a key missing or out of range, an
 * unknown family or kernel, ndup outside [1, OVL_LANES_MAX], P < 1, n < 0,
 * another "type", a "schema" other than 1) is skipped by lookups and kept
 * as it is by stores. One entry per (family, n, P): a store replaces it.
 * Every function is LOCAL (call it on one rank and broadcast). */
#ifndef OVL_TUNEDB_H
#define OVL_TUNEDB_H

#include <stdint.h>

#include "ovl/core.h"
#include "ovl/model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Largest tune file read, in bytes. */
#define OVL_TUNEDB_MAX_BYTES ((int64_t)64 << 20)

/* The entry of family f for P ranks whose n is nearest to n within a factor
 * of 2 (|log(n_entry / n)| <= log 2; among equally near entries, the first
 * in the file); *out receives its configuration with out->n = n, *nfound the
 * n it was measured at, *found = 1. *found = 0 (and *out, *nfound untouched)
 * when there is none, or when n <= 0. LOCAL. Errors: OVL_ERR_IO naming the
 * file (missing, unreadable, not a regular file), OVL_ERR_FORMAT (larger
 * than OVL_TUNEDB_MAX_BYTES, or no line of the file is a tune entry: a tune
 * file named is never ignored silently), OVL_ERR_NOMEM. */
ovl_err ovl_tunedb_lookup(const char *path, ovl_family f, int64_t n, int P, ovl_plan *out, int64_t *nfound, int *found);

/* Add the entry (f, c->n, c->P) with configuration c, its measured median
 * time t_median (written as null when not finite) and the machine's name
 * (may be NULL: null), replacing an entry with the same family, n and P;
 * every other line is kept as it was. Atomic: written to a safe temporary
 * beside it (ovl_file_writer) and renamed into place (path need not exist). LOCAL. Errors: OVL_ERR_ARG
 * (f or c->kernel unknown, c->ndup outside [1, OVL_LANES_MAX], c->P < 1,
 * c->n < 0), OVL_ERR_IO (path not writable, an existing file unreadable,
 * the write failed), OVL_ERR_FORMAT (larger than OVL_TUNEDB_MAX_BYTES),
 * OVL_ERR_NOMEM. */
ovl_err ovl_tunedb_store(const char *path, ovl_family f, const ovl_plan *c, double t_median, const char *machine);

#ifdef __cplusplus
}
#endif
#endif
