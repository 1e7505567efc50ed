/* The checks of every file ovl reads and of every output it writes. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
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
  const char *slash = strrchr(path, '/');
  if (slash == NULL) snprintf(dir, sizeof dir, ".");
  else if (slash == path) snprintf(dir, sizeof dir, "/");
  else if ((size_t)(slash - path) >= sizeof dir) return ovl_err_set(OVL_ERR_ARG, "%s path too long", what);
  else snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
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
      if (ferror(f)) rc = ovl_err_set(OVL_ERR_IO, "cannot read %s '%s': %s", what, path, strerror(errno));
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
