/* The checks of every file ovl reads and of every output it writes. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ovl/core.h"

static const char *file_kind(mode_t m) {
  return S_ISDIR(m)    ? "a directory"
         : S_ISFIFO(m) ? "a FIFO"
         : S_ISCHR(m)  ? "a character device"
         : S_ISBLK(m)  ? "a block device"
         : S_ISSOCK(m) ? "a socket"
                       : "not a regular file";
}

/* Open path O_RDONLY | O_NONBLOCK and check it; returns the descriptor in
 * *fd_out (blocking mode restored). */
static ovl_err open_checked(const char *path, const char *what, int64_t size, int *fd_out) {
  *fd_out = -1;
  if (path == NULL || path[0] == '\0') return ovl_err_set(OVL_ERR_ARG, "an empty file name for the %s", what);
  struct stat st;
  /* stat first: a FIFO is refused without being opened at all */
  if (stat(path, &st) != 0) return ovl_err_set(OVL_ERR_IO, "cannot open %s '%s': %s", what, path, strerror(errno));
  if (!S_ISREG(st.st_mode))
    return ovl_err_set(OVL_ERR_IO, "cannot read %s '%s': not a regular file (%s)", what, path, file_kind(st.st_mode));
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) return ovl_err_set(OVL_ERR_IO, "cannot open %s '%s': %s", what, path, strerror(errno));
  ovl_err rc = OVL_OK;
  if (fstat(fd, &st) != 0) rc = ovl_err_set(OVL_ERR_IO, "cannot stat %s '%s': %s", what, path, strerror(errno));
  else if (!S_ISREG(st.st_mode)) /* replaced between stat and open */
    rc = ovl_err_set(OVL_ERR_IO, "cannot read %s '%s': not a regular file (%s)", what, path, file_kind(st.st_mode));
  else if (size >= 0 && (int64_t)st.st_size != size)
    rc = ovl_err_set(OVL_ERR_FORMAT, "%s '%s' has %" PRId64 " bytes, expected %" PRId64 " (%s)", what, path,
                     (int64_t)st.st_size, size, (int64_t)st.st_size < size ? "truncated" : "oversized");
  if (rc == OVL_OK) {
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0)
      rc = ovl_err_set(OVL_ERR_IO, "cannot read %s '%s': %s", what, path, strerror(errno));
  }
  if (rc != OVL_OK) {
    close(fd);
    return rc;
  }
  *fd_out = fd;
  return OVL_OK;
}

ovl_err ovl_file_check_read(const char *path, const char *what, int64_t size) {
  int fd = -1;
  OVL_TRY(open_checked(path, what, size, &fd));
  close(fd);
  return OVL_OK;
}

ovl_err ovl_file_open_read(const char *path, const char *what, FILE **f) {
  int fd = -1;
  *f = NULL;
  OVL_TRY(open_checked(path, what, -1, &fd));
  *f = fdopen(fd, "rb");
  if (*f == NULL) {
    int e = errno;
    close(fd);
    return ovl_err_set(OVL_ERR_IO, "cannot read %s '%s': %s", what, path, strerror(e));
  }
  return OVL_OK;
}

/* "." or the directory part of path, in dir (size bytes); 0 when it does
 * not fit. */
static int dir_of(const char *path, char *dir, size_t size) {
  const char *slash = strrchr(path, '/');
  if (slash == NULL) snprintf(dir, size, ".");
  else if (slash == path) snprintf(dir, size, "/");
  else if ((size_t)(slash - path) >= size) return 0;
  else snprintf(dir, size, "%.*s", (int)(slash - path), path);
  return 1;
}

ovl_err ovl_file_check_write(const char *path, const char *what, const char *const *inputs, int ninputs) {
  if (path == NULL || path[0] == '\0') return ovl_err_set(OVL_ERR_ARG, "an empty file name for the %s", what);
  struct stat st;
  int exists = stat(path, &st) == 0;
  if (!exists && errno != ENOENT)
    return ovl_err_set(OVL_ERR_IO, "cannot write %s '%s': %s", what, path, strerror(errno));
  if (exists && !S_ISREG(st.st_mode))
    return ovl_err_set(OVL_ERR_IO, "cannot write %s '%s': it exists and is %s, which ovl never replaces", what, path,
                       file_kind(st.st_mode));
  for (int k = 0; k < ninputs; k++) {
    struct stat in;
    if (inputs[k] == NULL) continue;
    if (strcmp(inputs[k], path) == 0 ||
        (exists && stat(inputs[k], &in) == 0 && in.st_dev == st.st_dev && in.st_ino == st.st_ino))
      return ovl_err_set(OVL_ERR_ARG, "the %s '%s' is the input '%s': ovl does not replace its inputs", what, path,
                         inputs[k]);
  }
  /* the directory: outputs are written beside the target and renamed into place */
  char dir[4096];
  if (!dir_of(path, dir, sizeof dir)) return ovl_err_set(OVL_ERR_ARG, "%s path too long", what);
  struct stat ds;
  if (stat(dir, &ds) != 0)
    return ovl_err_set(OVL_ERR_IO, "cannot write %s '%s': directory '%s': %s", what, path, dir, strerror(errno));
  if (!S_ISDIR(ds.st_mode))
    return ovl_err_set(OVL_ERR_IO, "cannot write %s '%s': '%s' is not a directory", what, path, dir);
  if (access(dir, W_OK | X_OK) != 0)
    return ovl_err_set(OVL_ERR_IO, "cannot write %s '%s': directory '%s': %s", what, path, dir, strerror(errno));
  return OVL_OK;
}

ovl_err ovl_file_read_all(const char *path, const char *what, size_t max, char **text, size_t *len) {
  *text = NULL;
  *len = 0;
  FILE *f = NULL;
  OVL_TRY(ovl_file_open_read(path, what, &f));
  size_t cap = max < 65536 ? max + 2 : 65536, n = 0;
  char *buf = NULL;
  ovl_err rc = ovl_malloc(cap, &buf);
  while (rc == OVL_OK) {
    if (n + 1 == cap) { /* grow up to max + 2 bytes: one more than allowed tells a larger file */
      size_t ncap = cap > (max + 2) / 2 ? max + 2 : 2 * cap;
      char *nb = NULL;
      if (ncap <= cap || (rc = ovl_malloc(ncap, &nb)) != OVL_OK) break;
      memcpy(nb, buf, n);
      ovl_free(&buf);
      buf = nb, cap = ncap;
    }
    size_t r = fread(buf + n, 1, cap - 1 - n, f);
    n += r;
    if (n > max) {
      rc = ovl_err_set(OVL_ERR_FORMAT, "%s '%s' is larger than %zu bytes", what, path, max);
      break;
    }
    if (r == 0) {
      if (ferror(f)) rc = ovl_err_set(OVL_ERR_IO, "cannot read %s '%s': %s", what, path, strerror(errno ? errno : EIO));
      break;
    }
  }
  fclose(f);
  if (rc != OVL_OK) {
    ovl_free(&buf);
    return rc;
  }
  buf[n] = '\0';
  *text = buf, *len = n;
  return OVL_OK;
}

int ovl_file_same_target(const char *a, const char *b) {
  if (a == NULL || b == NULL) return 0;
  if (strcmp(a, b) == 0) return 1;
  const char *na = strrchr(a, '/'), *nb = strrchr(b, '/');
  na = na ? na + 1 : a, nb = nb ? nb + 1 : b;
  char da[4096], db[4096];
  struct stat sa, sb;
  return strcmp(na, nb) == 0 && dir_of(a, da, sizeof da) && dir_of(b, db, sizeof db) && stat(da, &sa) == 0 &&
         stat(db, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* ---- safe writes ---------------------------------------------------------- */

/* open(2) of a new file at exactly name: O_EXCL with O_CREAT never follows a
 * symlink and fails on anything that exists (a file, a FIFO, a directory, a
 * dangling link); O_NOFOLLOW says so again for systems that would not.
 * Returns the descriptor, or -1 with errno. */
static int open_excl(const char *name) {
  return open(name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0666);
}

ovl_err ovl_file_create_excl(const char *name, const char *what, int *fd) {
  *fd = -1;
  if (name == NULL || name[0] == '\0') return ovl_err_set(OVL_ERR_ARG, "an empty file name for the %s", what);
  int f = open_excl(name);
  if (f < 0) {
    int e = errno;
    return ovl_err_set(OVL_ERR_IO, "cannot create the %s '%s': %s", what, name, strerror(e));
  }
  struct stat st;
  if (fstat(f, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(f);
    return ovl_err_set(OVL_ERR_IO, "cannot create the %s '%s': not a regular file after creation", what, name);
  }
  *fd = f;
  return OVL_OK;
}

/* n characters of [0-9a-z] from the kernel's random source; a clock and
 * counter mix where that source is unavailable (the name is then still
 * created exclusively, only less unpredictable). */
static void random_chars(char *out, size_t n) {
  static const char set[] = "0123456789abcdefghijklmnopqrstuvwxyz";
  static unsigned long long counter;
  unsigned char b[32];
  size_t got = 0;
  if (n > sizeof b) n = sizeof b;
  int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (fd >= 0) {
    while (got < n) {
      ssize_t r = read(fd, b + got, n - got);
      if (r <= 0) break;
      got += (size_t)r;
    }
    close(fd);
  }
  unsigned long long x =
      (unsigned long long)time(NULL) ^ ((unsigned long long)getpid() << 32) ^ (++counter * 0x9e3779b97f4a7c15ull);
  x ^= (unsigned long long)(uintptr_t)&x;
  for (size_t k = got; k < n; k++) {
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    b[k] = (unsigned char)(x >> 56);
  }
  for (size_t k = 0; k < n; k++) out[k] = set[b[k] % 36];
  out[n] = '\0';
}

ovl_err ovl_file_tmp_create(const char *path, const char *what, char **tmp, int *fd) {
  *tmp = NULL;
  *fd = -1;
  if (path == NULL || path[0] == '\0') return ovl_err_set(OVL_ERR_ARG, "an empty file name for the %s", what);
  size_t len = strlen(path);
  char *name = NULL;
  OVL_TRY(ovl_malloc(len + 64, &name));
  ovl_err rc = OVL_OK;
  /* a name taken by anything (an earlier temporary, a planted link or FIFO)
   * is never opened: another random name is drawn */
  for (int attempt = 0; attempt < 64; attempt++) {
    char r[16];
    random_chars(r, 12);
    snprintf(name, len + 64, "%s" OVL_FILE_TMP_INFIX "%ld.%s", path, (long)getpid(), r);
    int f = open_excl(name);
    if (f >= 0) {
      *tmp = name, *fd = f;
      ovl_tmp_track(name); /* removed by a signal that ends the process */
      return OVL_OK;
    }
    if (errno != EEXIST) break;
  }
  int e = errno;
  rc = ovl_err_set(OVL_ERR_IO, "cannot write %s '%s': cannot create a temporary file beside it: %s", what, path,
                   strerror(e));
  ovl_free(&name);
  return rc;
}

int ovl_file_is_tmp_name(const char *name, const char *base, long *pid) {
  size_t blen = strlen(base), ilen = strlen(OVL_FILE_TMP_INFIX);
  if (strncmp(name, base, blen) != 0 || strncmp(name + blen, OVL_FILE_TMP_INFIX, ilen) != 0) return 0;
  const char *p = name + blen + ilen;
  long v = 0;
  int digits = 0;
  while (*p >= '0' && *p <= '9' && digits < 12) v = 10 * v + (*p++ - '0'), digits++;
  if (digits == 0 || (*p != '.' && *p != '\0')) return 0;
  if (*p == '\0') { /* "<target>.tmp.<pid>": the name of earlier versions */
    if (pid) *pid = v;
    return 1;
  }
  p++;
  size_t rl = 0;
  for (; p[rl]; rl++)
    if (!((p[rl] >= '0' && p[rl] <= '9') || (p[rl] >= 'a' && p[rl] <= 'z'))) return 0;
  if (rl != 12) return 0;
  if (pid) *pid = v;
  return 1;
}

ovl_err ovl_file_tmp_commit(const char *tmp, int fd, const char *path, const char *what) {
  struct stat a, b;
  if (fsync(fd) != 0 && errno != EINVAL && errno != EROFS)
    return ovl_err_set(OVL_ERR_IO, "cannot write %s '%s': fsync of '%s' failed: %s", what, path, tmp, strerror(errno));
  /* the name still holds the file this process created and wrote: nobody
   * replaced it meanwhile (rename moves the name, never follows it) */
  if (fstat(fd, &a) != 0 || lstat(tmp, &b) != 0 || !S_ISREG(b.st_mode) || a.st_dev != b.st_dev || a.st_ino != b.st_ino)
    return ovl_err_set(OVL_ERR_IO,
                       "cannot write %s '%s': its temporary file '%s' was replaced or removed while it was written",
                       what, path, tmp);
  /* the target again: a FIFO, a device or a directory put there since the
   * first check is refused, not replaced */
  OVL_TRY(ovl_file_check_write(path, what, NULL, 0));
  if (rename(tmp, path) != 0)
    return ovl_err_set(OVL_ERR_IO, "cannot write %s '%s': renaming '%s' into place failed: %s", what, path, tmp,
                       strerror(errno));
  /* the rename itself reaches the disk (best effort) */
  char dir[4096];
  int dfd = dir_of(path, dir, sizeof dir) ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
  if (dfd >= 0) {
    (void)fsync(dfd);
    close(dfd);
  }
  return OVL_OK;
}

ovl_err ovl_file_writer_open(ovl_file_writer *w, const char *path, const char *what) {
  if (w == NULL) return ovl_err_set(OVL_ERR_ARG, "ovl_file_writer_open: no writer");
  memset(w, 0, sizeof *w);
  w->fd = -1;
  w->path = path;
  w->what = what;
  OVL_TRY(ovl_file_check_write(path, what, NULL, 0));
  OVL_TRY(ovl_file_tmp_create(path, what, &w->tmp, &w->fd));
  w->f = fdopen(w->fd, "wb");
  if (w->f == NULL) {
    int e = errno;
    ovl_err rc = ovl_err_set(OVL_ERR_IO, "cannot write %s '%s': %s", what, path, strerror(e));
    ovl_file_writer_abort(w);
    return rc;
  }
  return OVL_OK;
}

void ovl_file_writer_abort(ovl_file_writer *w) {
  if (w == NULL) return;
  if (w->f) fclose(w->f);
  else if (w->fd >= 0) close(w->fd);
  w->f = NULL;
  w->fd = -1;
  if (w->tmp) unlink(w->tmp), ovl_tmp_untrack(w->tmp);
  ovl_free(&w->tmp);
}

ovl_err ovl_file_writer_commit(ovl_file_writer *w) {
  if (w == NULL || w->f == NULL || w->tmp == NULL) return ovl_err_set(OVL_ERR_INTERNAL, "the file writer is not open");
  ovl_err rc = OVL_OK;
  if (fflush(w->f) != 0 || ferror(w->f))
    rc = ovl_err_set(OVL_ERR_IO, "cannot write %s '%s': writing '%s' failed: %s", w->what, w->path, w->tmp,
                     strerror(errno ? errno : EIO));
  ovl_tmp_hold(1); /* a signal that ends the process waits for the rename */
  if (rc == OVL_OK) rc = ovl_file_tmp_commit(w->tmp, w->fd, w->path, w->what);
  if (rc != OVL_OK) {
    ovl_file_writer_abort(w);
    ovl_tmp_hold(0);
    return rc;
  }
  ovl_tmp_untrack(w->tmp);
  ovl_tmp_hold(0);
  int cl = fclose(w->f);
  int e = errno;
  w->f = NULL;
  w->fd = -1;
  ovl_free(&w->tmp);
  if (cl != 0)
    return ovl_err_set(OVL_ERR_IO, "cannot write %s '%s': closing it failed: %s", w->what, w->path, strerror(e));
  return OVL_OK;
}

ovl_err ovl_file_write_atomic(const char *path, const char *what, const void *data, size_t len) {
  ovl_file_writer w;
  OVL_TRY(ovl_file_writer_open(&w, path, what));
  if (len > 0 && fwrite(data, 1, len, w.f) != len) {
    ovl_err rc = ovl_err_set(OVL_ERR_IO, "cannot write %s '%s': writing '%s' failed: %s", what, path, w.tmp,
                             strerror(errno ? errno : EIO));
    ovl_file_writer_abort(&w);
    return rc;
  }
  return ovl_file_writer_commit(&w);
}
