/* Helpers shared by the files of src/core, never in include/. */
#ifndef OVL_CORE_IMPL_H
#define OVL_CORE_IMPL_H

#include <stddef.h>

/* What ovl_escape writes as \xNN besides DEL, C1 controls and invalid UTF-8. */
typedef enum ovl_i_escape_c0 {
  OVL_I_ESCAPE_C0_ALL,   /* every C0 control (ovl_escape, messages) */
  OVL_I_ESCAPE_C0_LINES, /* every C0 control but newline and tab (ovl_fprintf) */
  OVL_I_ESCAPE_C0_NONE   /* no C0 control: the caller escapes them (JSON strings: \n, \u0001) */
} ovl_i_escape_c0;

/* ovl_escape with the C0 controls treated as c0 says. LOCAL. */
void ovl_i_core_escape(char *dst, size_t n, const char *src, ovl_i_escape_c0 c0);

#endif
