/* Errors without MPI: codes, the last message of this rank (thread-local),
 * the argument checks and the escaping of text for a terminal. */
#include "ovl/err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define OVL_MSG_MAX 1024

static _Thread_local char g_msg[OVL_MSG_MAX];

const char *ovl_err_name(ovl_err code) {
  switch (code) {
  case OVL_OK: return "OVL_OK";
  case OVL_ERR_ARG: return "OVL_ERR_ARG";
  case OVL_ERR_SIZE: return "OVL_ERR_SIZE";
  case OVL_ERR_GRID: return "OVL_ERR_GRID";
  case OVL_ERR_IO: return "OVL_ERR_IO";
  case OVL_ERR_FORMAT: return "OVL_ERR_FORMAT";
  case OVL_ERR_NUMERIC: return "OVL_ERR_NUMERIC";
  case OVL_ERR_NOMEM: return "OVL_ERR_NOMEM";
  case OVL_ERR_UNSUPPORTED: return "OVL_ERR_UNSUPPORTED";
  case OVL_ERR_MPI: return "OVL_ERR_MPI";
  case OVL_ERR_INTERNAL: return "OVL_ERR_INTERNAL";
  }
  return "OVL_ERR_UNKNOWN";
}

const char *ovl_errmsg(void) { return g_msg; }

void ovl_err_clear(void) { g_msg[0] = '\0'; }

/* Length of the valid UTF-8 sequence that starts at s (1 to 4 bytes), or 0
 * when s does not start one (overlong forms, surrogates and code points
 * above U+10FFFF are invalid). */
static int utf8_len(const unsigned char *s) {
  unsigned c = s[0];
  int len = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 && c < 0xE0 ? 2 : 0;
  if (len == 0 || c > 0xF4) return 0;
  for (int k = 1; k < len; k++)
    if ((s[k] & 0xC0) != 0x80) return 0;
  if (len == 3 && ((c == 0xE0 && s[1] < 0xA0) || (c == 0xED && s[1] >= 0xA0))) return 0;
  if (len == 4 && ((c == 0xF0 && s[1] < 0x90) || (c == 0xF4 && s[1] >= 0x90))) return 0;
  if (len == 2 && c == 0xC2 && s[1] < 0xA0) return 0; /* C1 controls (U+0080-U+009F) */
  return len;
}

/* Copy src into dst (n bytes) with every byte a terminal could act on, or
 * that is not UTF-8, written as \xNN: C0 control characters (as c0 says),
 * DEL, C1 controls and invalid UTF-8. Printable
 * ASCII and valid UTF-8 are copied as they are, so an escaped text escapes
 * to itself. Messages carry bytes of file names and file contents; this is
 * the one place they are made safe for a terminal. */
const char *ovl_escape_as(char *dst, size_t n, const char *src, ovl_escape_c0 c0) {
  if (!dst || n == 0) return dst;
  if (!src) src = "";
  size_t o = 0;
  const unsigned char *s = (const unsigned char *)src;
  while (*s && o + 1 < n) {
    int len = *s >= 0x80 ? utf8_len(s)
                         : (*s >= 0x20 && *s != 0x7F) || c0 == OVL_ESCAPE_C0_NONE ||
                               (c0 == OVL_ESCAPE_C0_LINES && (*s == '\n' || *s == '\t'));
    if (len > 0) {
      if (o + (size_t)len >= n) break;
      memcpy(dst + o, s, (size_t)len);
      o += (size_t)len, s += len;
    } else {
      if (o + 4 >= n) break;
      snprintf(dst + o, 5, "\\x%02X", *s);
      o += 4, s++;
    }
  }
  dst[o] = '\0';
  return dst;
}

const char *ovl_escape(char *dst, size_t n, const char *src) { return ovl_escape_as(dst, n, src, OVL_ESCAPE_C0_ALL); }

static void vset(const char *fmt, va_list ap) {
  char raw[OVL_MSG_MAX];
  vsnprintf(raw, sizeof raw, fmt, ap);
  ovl_escape_as(g_msg, sizeof g_msg, raw, OVL_ESCAPE_C0_ALL);
}

ovl_err ovl_err_set(ovl_err code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vset(fmt, ap);
  va_end(ap);
  return code;
}

ovl_err ovl_check_handle(const void *h, const char *fn, const char *name) {
  if (h != NULL) return OVL_OK;
  return ovl_err_set(OVL_ERR_ARG, "%s: %s is NULL (a handle never created, or already destroyed)", fn, name);
}

ovl_err ovl_check_ptr(const void *p, const char *fn, const char *name) {
  if (p != NULL) return OVL_OK;
  return ovl_err_set(OVL_ERR_ARG, "%s: %s is NULL", fn, name);
}
