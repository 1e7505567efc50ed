/* Fuzz target: the Matrix Market parser (ovl_io_mtx_parse,
 * src/dmat/io_mtx.c), the part of ovl_dmat_read_mtx that rank 0 runs on the
 * file's bytes. The input is read through a memory stream; matrices above
 * 2^16 entries are refused before allocation (the reader itself allows any
 * size that fits memory). Properties checked beyond memory safety: accepted
 * sizes are non-negative, a symmetric file gives a square matrix stored in
 * full and exactly symmetric, and errors carry a message. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dmat/io_util.h"

#define FUZZ_ASSERT(c)                                                                                                 \
  do {                                                                                                                 \
    if (!(c)) abort();                                                                                                 \
  } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  /* fmemopen needs a non-empty buffer; keep a private copy (the stream is
   * read-only, but the data pointer is const) */
  char *buf = malloc(size + 1);
  if (buf == NULL) return 0;
  memcpy(buf, data, size);
  buf[size] = '\0';
  FILE *f = size > 0 ? fmemopen(buf, size, "r") : fopen("/dev/null", "r");
  if (f == NULL) {
    free(buf);
    return 0;
  }
  int64_t m = -1, n = -1;
  int sym = -1;
  double *g = NULL;
  ovl_err rc = ovl_io_mtx_parse(f, "fuzz.mtx", (int64_t)1 << 16, &m, &n, &sym, &g);
  fclose(f);
  free(buf);
  FUZZ_ASSERT(rc == OVL_OK || rc == OVL_ERR_FORMAT || rc == OVL_ERR_UNSUPPORTED || rc == OVL_ERR_SIZE ||
              rc == OVL_ERR_IO);
  if (rc != OVL_OK) {
    FUZZ_ASSERT(g == NULL);
    FUZZ_ASSERT(strlen(ovl_errmsg()) > 0);
    return 0;
  }
  FUZZ_ASSERT(m >= 0 && n >= 0 && m * n <= ((int64_t)1 << 16));
  FUZZ_ASSERT(sym == 0 || sym == 1);
  FUZZ_ASSERT(g != NULL || m * n == 0);
  if (sym) {
    FUZZ_ASSERT(m == n);
    for (int64_t c = 0; c < n; c++)
      for (int64_t r = 0; r < c; r++) {
        double a = g[r + c * m], b = g[c + r * m];
        FUZZ_ASSERT(memcmp(&a, &b, sizeof a) == 0 || (isnan(a) && isnan(b)));
      }
  }
  volatile double sink = 0; /* touch every entry: the array is m x n */
  for (int64_t k = 0; k < m * n; k++) sink += g[k];
  (void)sink;
  ovl_free(&g);
  return 0;
}
