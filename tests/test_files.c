/* The safe writer (include/ovl/core.h, "safe writes"): temporaries are
 * created exclusively under unpredictable names, nothing planted at a name
 * is ever followed or opened, a temporary replaced while it is written is
 * refused, and a symlink at the target is replaced, never written through.
 * Each rank works in a directory of its own. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ovl/core.h"
#include "ovltest.h"

static char dir[256];

static const char *at(const char *name) {
  static char buf[8][512];
  static int k;
  k = (k + 1) % 8;
  snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
  return buf[k];
}

static void put(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  if (f) {
    fputs(text, f);
    fclose(f);
  }
}

/* 1 when path is a regular file (not a link) holding exactly text */
static int holds(const char *path, const char *text) {
  struct stat st;
  if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode)) return 0;
  char buf[256] = "";
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  return strcmp(buf, text) == 0;
}

/* number of entries of dir whose name starts with prefix */
static int count_prefix(const char *prefix) {
  char cmd[600];
  snprintf(cmd, sizeof cmd, "ls -a '%s' | grep -c '^%s' > '%s/.count'", dir, prefix, dir);
  if (system(cmd) < 0) return -1;
  char buf[32] = "";
  FILE *f = fopen(at(".count"), "r");
  if (!f) return -1;
  if (!fgets(buf, sizeof buf, f)) buf[0] = '\0';
  fclose(f);
  unlink(at(".count"));
  return atoi(buf);
}

static void test_create_excl(void) {
  put(at("victim"), "victim");
  /* a symlink, a dangling symlink, a FIFO, a directory and a file: each refused, nothing touched */
  T_CHECK(symlink(at("victim"), at("link")) == 0, "symlink: %s", strerror(errno));
  T_CHECK(symlink(at("nowhere"), at("dangling")) == 0, "symlink: %s", strerror(errno));
  T_CHECK(mkfifo(at("fifo"), 0600) == 0, "mkfifo: %s", strerror(errno));
  T_CHECK(mkdir(at("dir"), 0700) == 0, "mkdir: %s", strerror(errno));
  put(at("file"), "file");
  const char *names[] = {"link", "dangling", "fifo", "dir", "file"};
  for (int k = 0; k < 5; k++) {
    int fd = -1;
    T_ERR(ovl_file_create_excl(at(names[k]), "test file", &fd), OVL_ERR_IO);
    T_CHECK(fd == -1, "%s: no descriptor on failure", names[k]);
    T_CHECK(strstr(ovl_errmsg(), "File exists") != NULL, "%s: the reason is given: %s", names[k], ovl_errmsg());
  }
  T_CHECK(holds(at("victim"), "victim"), "the link's target is untouched");
  T_CHECK(access(at("nowhere"), F_OK) != 0, "the dangling link's target was not created");
  T_CHECK(holds(at("file"), "file"), "an existing file is untouched");
  int fd = -1;
  T_OK(ovl_file_create_excl(at("new"), "test file", &fd));
  T_CHECK(fd >= 0 && write(fd, "x", 1) == 1, "a new name is created and writable");
  if (fd >= 0) close(fd);
  T_ERR(ovl_file_create_excl("", "test file", &fd), OVL_ERR_ARG);
}

static void test_tmp_names(void) {
  char *a = NULL, *b = NULL;
  int fa = -1, fb = -1;
  int live0 = ovl_tmp_live();
  T_OK(ovl_file_tmp_create(at("out.raw"), "output", &a, &fa));
  T_OK(ovl_file_tmp_create(at("out.raw"), "output", &b, &fb));
  /* both are tracked for a signal handler's cleanup, and untracked one by one */
  T_CHECK(ovl_tmp_live() == live0 + 2, "two temporaries tracked: %d, was %d", ovl_tmp_live(), live0);
  ovl_tmp_untrack(a);
  T_CHECK(ovl_tmp_live() == live0 + 1, "one untracked: %d tracked, was %d", ovl_tmp_live(), live0);
  ovl_tmp_untrack(b);
  T_CHECK(ovl_tmp_live() == live0, "both untracked: %d tracked, was %d", ovl_tmp_live(), live0);
  T_CHECK(a && b && strcmp(a, b) != 0, "two temporaries of one target differ: %s %s", a ? a : "", b ? b : "");
  long pid = 0;
  const char *base_a = a ? strrchr(a, '/') + 1 : "";
  T_CHECK(ovl_file_is_tmp_name(base_a, "out.raw", &pid) && pid == (long)getpid(), "'%s' is a temporary of out.raw",
          base_a);
  /* in the target's directory, named after it, with 12 random characters */
  T_CHECK(a && strncmp(a, at("out.raw.tmp."), strlen(at("out.raw.tmp."))) == 0, "'%s' sits beside its target", a);
  char own[64];
  snprintf(own, sizeof own, "out.raw.tmp.%ld", (long)getpid());
  T_CHECK(a && strlen(base_a) == strlen(own) + 13, "'%s' has a random part of 12 characters", base_a);
  T_CHECK(!ovl_file_is_tmp_name("out.raw.tmp.12.ABCDEFGHIJKL", "out.raw", NULL), "upper case is not ovl's");
  T_CHECK(!ovl_file_is_tmp_name("out.raw.tmp.12.abc", "out.raw", NULL), "a short random part is not ovl's");
  T_CHECK(!ovl_file_is_tmp_name("out.raw.tmpx", "out.raw", NULL), "another suffix is not ovl's");
  T_CHECK(ovl_file_is_tmp_name("out.raw.tmp.12", "out.raw", &pid) && pid == 12, "an earlier version's temporary");
  /* many draws: never the same name twice */
  char *seen[32] = {0};
  int dup = 0;
  for (int k = 0; k < 32; k++) {
    int fd = -1;
    T_OK(ovl_file_tmp_create(at("many"), "output", &seen[k], &fd));
    if (fd >= 0) close(fd);
    for (int j = 0; j < k; j++)
      if (seen[j] && seen[k] && !strcmp(seen[j], seen[k])) dup = 1;
  }
  T_CHECK(!dup, "32 temporaries of one target have 32 names");
  T_CHECK(count_prefix("many.tmp.") == 32, "32 temporaries exist");
  for (int k = 0; k < 32; k++) {
    if (seen[k]) unlink(seen[k]);
    ovl_free(&seen[k]);
  }
  if (fa >= 0) close(fa);
  if (fb >= 0) close(fb);
  if (a) unlink(a);
  if (b) unlink(b);
  ovl_free(&a);
  ovl_free(&b);
}

static void test_commit(void) {
  put(at("victim2"), "victim");
  /* a symlink at the target: replaced by the new file; its target untouched */
  T_CHECK(symlink(at("victim2"), at("target")) == 0, "symlink");
  T_OK(ovl_file_write_atomic(at("target"), "output", "new", 3));
  T_CHECK(holds(at("target"), "new"), "the target is a regular file with the new data");
  T_CHECK(holds(at("victim2"), "victim"), "the file the link pointed to is untouched");
  /* an existing file is replaced; no temporary remains */
  T_OK(ovl_file_write_atomic(at("target"), "output", "newer", 5));
  T_CHECK(holds(at("target"), "newer"), "replaced");
  T_CHECK(count_prefix("target.tmp.") == 0, "no temporary left");
  /* a FIFO or a directory at the target: refused, never opened, left as it was */
  T_CHECK(mkfifo(at("tfifo"), 0600) == 0, "mkfifo");
  T_ERR(ovl_file_write_atomic(at("tfifo"), "output", "x", 1), OVL_ERR_IO);
  struct stat st;
  T_CHECK(lstat(at("tfifo"), &st) == 0 && S_ISFIFO(st.st_mode), "the FIFO is still there");
  T_CHECK(mkdir(at("tdir"), 0700) == 0, "mkdir");
  T_ERR(ovl_file_write_atomic(at("tdir"), "output", "x", 1), OVL_ERR_IO);
  T_CHECK(count_prefix("tfifo.tmp.") == 0 && count_prefix("tdir.tmp.") == 0, "no temporary left by a refusal");
  /* the temporary replaced by a symlink while it is written: refused, the
   * link's target untouched, the old output kept */
  ovl_file_writer w;
  T_OK(ovl_file_writer_open(&w, at("target"), "output"));
  if (w.f) {
    fputs("hijacked?", w.f);
    fflush(w.f);
    char swapped[600];
    snprintf(swapped, sizeof swapped, "%s", w.tmp);
    unlink(swapped);
    T_CHECK(symlink(at("victim2"), swapped) == 0, "symlink in place of the temporary");
    T_ERR(ovl_file_writer_commit(&w), OVL_ERR_IO);
    T_CHECK(strstr(ovl_errmsg(), "replaced") != NULL, "the message says so: %s", ovl_errmsg());
    T_CHECK(holds(at("victim2"), "victim"), "the link's target is untouched");
    T_CHECK(holds(at("target"), "newer"), "the old output is kept");
    unlink(swapped);
  }
  /* a FIFO put at the target after open: refused at commit, not replaced */
  T_OK(ovl_file_writer_open(&w, at("late"), "output"));
  if (w.f) {
    T_CHECK(mkfifo(at("late"), 0600) == 0, "mkfifo");
    T_ERR(ovl_file_writer_commit(&w), OVL_ERR_IO);
    T_CHECK(lstat(at("late"), &st) == 0 && S_ISFIFO(st.st_mode), "the FIFO is still there");
    T_CHECK(count_prefix("late.tmp.") == 0, "the temporary is removed");
  }
  /* abort removes the temporary */
  T_OK(ovl_file_writer_open(&w, at("aborted"), "output"));
  ovl_file_writer_abort(&w);
  T_CHECK(count_prefix("aborted") == 0, "abort leaves nothing");
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const char *base = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
  snprintf(dir, sizeof dir, "%s/ovl_test_files.%d.%d.XXXXXX", base, (int)getpid(), rank);
  if (!mkdtemp(dir)) {
    fprintf(stderr, "mkdtemp failed: %s\n", strerror(errno));
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  test_create_excl();
  test_tmp_names();
  test_commit();
  char cmd[400];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
  int rc = t_finish("test_files");
  MPI_Finalize();
  return rc;
}
