"""ovlfiles: the one safe writer of ovl's Python tools (ovl-plot, make-fock, make-cases).

It keeps the guarantees of the library's writer (include/ovl/core.h, "safe writes";
docs/lab/reliability.md, "Outputs"):
- a target that exists must be a regular file (a FIFO, a device, a socket or a directory is
  refused, never replaced or opened), and its directory must exist;
- the data goes to a new temporary beside the target, "<target>.tmp.<pid>.<random>", created
  exclusively (O_CREAT | O_EXCL | O_NOFOLLOW through tempfile.mkstemp): a symlink, FIFO or
  directory planted at any name is never followed or opened;
- the temporary is synced, checked to be still the file that was created, and renamed over the
  target (a symlink at the target itself is replaced, the file it points to is not touched);
- any failure removes the temporary and leaves the old target as it was.
"""
import os
import stat
import tempfile


class WriteError(OSError):
    """A refused or failed write; str() is the message to print."""


def _kind(mode):
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def check_target(path, what="output"):
    """Raise WriteError unless path may be written: empty, special files and missing or
    unwritable directories are refused (as ovl_file_check_write)."""
    if not path:
        raise WriteError("an empty file name for the %s" % what)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        st = None
    except OSError as e:
        raise WriteError("cannot write %s '%s': %s" % (what, path, e.strerror))
    if st is not None and not stat.S_ISREG(st.st_mode):
        raise WriteError("cannot write %s '%s': it exists and is %s, which ovl never replaces"
                         % (what, path, _kind(st.st_mode)))
    d = os.path.dirname(path) or "."
    if not os.path.isdir(d):
        raise WriteError("cannot write %s '%s': directory '%s' does not exist" % (what, path, d))
    if not os.access(d, os.W_OK | os.X_OK):
        raise WriteError("cannot write %s '%s': directory '%s': Permission denied" % (what, path, d))


def write_atomic(path, fill, what="output"):
    """Write path through a safe temporary: fill(f) writes to the binary file object f."""
    check_target(path, what)
    d = os.path.dirname(path) or "."
    try:
        fd, tmp = tempfile.mkstemp(prefix="%s.tmp.%d." % (os.path.basename(path), os.getpid()), dir=d)
    except OSError as e:
        raise WriteError("cannot write %s '%s': cannot create a temporary file beside it: %s"
                         % (what, path, e.strerror))
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.fchmod(fd, 0o666 & ~umask)  # the mode a plain open() would give, not mkstemp's 0600
        with os.fdopen(fd, "wb") as f:
            fd = -1
            fill(f)
            f.flush()
            os.fsync(f.fileno())
            a, b = os.fstat(f.fileno()), os.lstat(tmp)
            if not stat.S_ISREG(b.st_mode) or (a.st_dev, a.st_ino) != (b.st_dev, b.st_ino):
                raise WriteError("cannot write %s '%s': its temporary file '%s' was replaced while it was "
                                 "written" % (what, path, tmp))
        check_target(path, what)
        os.replace(tmp, path)
        tmp = None
        try:
            dfd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
            try:
                os.fsync(dfd)
            finally:
                os.close(dfd)
        except OSError:
            pass
    except WriteError:
        raise
    except OSError as e:
        raise WriteError("cannot write %s '%s': %s" % (what, path, e.strerror or e))
    finally:
        if fd >= 0:
            os.close(fd)
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass


def write_bytes(path, data, what="output"):
    write_atomic(path, lambda f: f.write(data), what)


def write_text(path, text, what="output"):
    write_bytes(path, text.encode(), what)


def write_json(path, obj, what="output"):
    """obj as indented JSON text (meta.json)."""
    import json
    write_text(path, json.dumps(obj, indent=2) + "\n", what)


def write_raw(path, a, what="output"):
    """A symmetric n x n numpy matrix as ovl's raw file (little-endian float64, row-major) and its sidecar,
    exactly {"rows": n, "cols": n, "symmetric": true} (what ovl_dmat_read_raw accepts)."""
    n = a.shape[0]
    write_bytes(path, a.astype("<f8", order="C", copy=False).tobytes(order="C"), what)
    write_text(path + ".json", '{"rows": %d, "cols": %d, "symmetric": true}\n' % (n, n), what)
