/* The temporaries this process is writing, for a signal handler that ends
 * the process: it removes them (unlink is async-signal-safe) so that a
 * killed write leaves nothing behind, and it waits for a commit (the renames
 * that put an output in place) so that an output is never half replaced. */
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "ovl/core.h"

enum { TMP_SLOTS = 16, TMP_PATH_MAX = 4096 };

/* A slot's path is written while the slot is free and read only while it is
 * live: the handler never sees a path being copied. */
static char g_path[TMP_SLOTS][TMP_PATH_MAX];
static atomic_int g_live[TMP_SLOTS];
static atomic_int g_hold;    /* commits in progress */
static atomic_int g_pending; /* the exit code a signal asked for during a commit */

void ovl_tmp_track(const char *path) {
  size_t len = path ? strlen(path) : 0;
  if (len == 0 || len >= TMP_PATH_MAX) return;
  for (int k = 0; k < TMP_SLOTS; k++)
    if (atomic_load(&g_live[k]) == 0) {
      memcpy(g_path[k], path, len + 1);
      atomic_store(&g_live[k], 1);
      return;
    }
}

void ovl_tmp_untrack(const char *path) {
  if (!path) return;
  for (int k = 0; k < TMP_SLOTS; k++)
    if (atomic_load(&g_live[k]) && strcmp(g_path[k], path) == 0) {
      atomic_store(&g_live[k], 0);
      return;
    }
}

int ovl_tmp_live(void) {
  int n = 0;
  for (int k = 0; k < TMP_SLOTS; k++) n += atomic_load(&g_live[k]) != 0;
  return n;
}

static _Noreturn void remove_and_exit(int code) {
  for (int k = 0; k < TMP_SLOTS; k++)
    if (atomic_load(&g_live[k])) unlink(g_path[k]);
  _exit(code);
}

void ovl_tmp_exit(int code) {
  if (code == 0) code = 1;
  atomic_store(&g_pending, code);
  /* the commit in progress ends the process when it is done (ovl_tmp_hold);
   * seen after the store, so that one of the two always does */
  if (atomic_load(&g_hold) > 0) return;
  remove_and_exit(code);
}

void ovl_tmp_hold(int on) {
  if (on) {
    atomic_fetch_add(&g_hold, 1);
    return;
  }
  if (atomic_fetch_sub(&g_hold, 1) == 1) {
    int code = atomic_load(&g_pending);
    if (code) remove_and_exit(code);
  }
}
