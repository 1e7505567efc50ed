/* Fuzz target: the JSON sidecar parser of raw matrix files
 * (ovl_io_parse_meta, src/dmat/io_util.c). Properties checked beyond memory
 * safety: an accepted sidecar describes non-negative sizes, a square matrix
 * when symmetric, m * n * 8 within int64; and the text ovl writes for it
 * parses back to the same metadata. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dmat/io_util.h"

#define FUZZ_ASSERT(c)                                                                                                 \
  do {                                                                                                                 \
    if (!(c)) abort();                                                                                                 \
  } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > OVL_IO_SIDECAR_MAX) return 0; /* the reader refuses larger sidecars before parsing */
  ovl_matrix_meta meta = {-1, -1, -1};
  ovl_err rc = ovl_io_parse_meta((const char *)data, size, "fuzz.raw.json", &meta);
  FUZZ_ASSERT(rc == OVL_OK || rc == OVL_ERR_FORMAT);
  FUZZ_ASSERT(ovl_errmsg() != NULL);
  if (rc != OVL_OK) {
    FUZZ_ASSERT(strlen(ovl_errmsg()) > 0);
    return 0;
  }
  FUZZ_ASSERT(meta.rows >= 0 && meta.cols >= 0);
  FUZZ_ASSERT(meta.symmetric == 0 || meta.symmetric == 1);
  FUZZ_ASSERT(!meta.symmetric || meta.rows == meta.cols);
  FUZZ_ASSERT(meta.cols == 0 || meta.rows <= INT64_MAX / 8 / meta.cols);
  char text[160];
  int len = ovl_io_format_meta(text, sizeof text, &meta);
  FUZZ_ASSERT(len > 0 && (size_t)len < sizeof text);
  ovl_matrix_meta back = {-1, -1, -1};
  FUZZ_ASSERT(ovl_io_parse_meta(text, (size_t)len, "round trip", &back) == OVL_OK);
  FUZZ_ASSERT(back.rows == meta.rows && back.cols == meta.cols && back.symmetric == meta.symmetric);
  return 0;
}
