/* Raw matrix files: little-endian float64, row-major, no header, with a JSON
 * sidecar "<path>.json". Read and written in parallel with MPI-IO: each rank
 * of the grid moves its block through a subarray file view; idle ranks and
 * ranks with empty blocks take part in every collective call with zero
 * counts. Writes go to a temporary beside the target that rank 0 creates
 * safely (ovl_file_tmp_create: exclusive, unpredictable name), which every
 * rank then opens without MPI_MODE_CREATE; it is renamed into place after the
 * sidecar, which carries the data's checksum so that a reader can tell a
 * data file and a sidecar that were not written together. In the SMPI build
 * (SimGrid, where MPI-IO cannot open files on the simulated hosts) the blocks
 * go through rank 0, which reads or writes every block with pread/pwrite. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dmat/dmat_impl.h"
#include "dmat/io_util.h"

/* OVL_ERR_IO for a failed MPI-IO call on the file of path. */
static ovl_err mpi_io_err(int mpi_rc, const char *call, const char *path) {
  char s[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(mpi_rc, s, &len) != MPI_SUCCESS) snprintf(s, sizeof s, "MPI error code %d", mpi_rc);
  return ovl_err_set(OVL_ERR_IO, "%s on '%s' failed: %s", call, path, s);
}

ovl_err ovl_raw_read_meta(MPI_Comm comm, const char *path, ovl_matrix_meta *meta) {
  int rank = 0;
  ovl_matrix_meta mt = {0, 0, 0};
  OVL_TRY(ovl_check_comm(comm, "ovl_raw_read_meta"));
  OVL_MPI(MPI_Comm_rank(comm, &rank));
  ovl_err rc = OVL_OK;
  if (path == NULL || path[0] == '\0' || meta == NULL)
    rc = ovl_err_set(OVL_ERR_ARG, "ovl_raw_read_meta needs a non-empty path and a meta pointer");
  if (rc == OVL_OK && rank == 0) rc = ovl_io_read_meta_file(path, &mt);
  return ovl_io_meta_share(comm, rc, &mt, meta);
}

/* Rank 0: the data file must be a readable regular file of exactly `bytes`. */
static ovl_err check_data_file(const char *path, int64_t bytes) {
  OVL_TRY(ovl_io_check_regular(path, "raw matrix file"));
  int fd = open(path, O_RDONLY | O_NONBLOCK);
  if (fd < 0) return ovl_err_set(OVL_ERR_IO, "cannot open raw matrix file '%s': %s", path, strerror(errno));
  struct stat st;
  ovl_err rc = OVL_OK;
  if (fstat(fd, &st) != 0) rc = ovl_err_set(OVL_ERR_IO, "cannot stat '%s': %s", path, strerror(errno));
  else if (!S_ISREG(st.st_mode)) rc = ovl_err_set(OVL_ERR_IO, "'%s' is not a regular file", path);
  else if ((int64_t)st.st_size != bytes)
    rc = ovl_err_set(OVL_ERR_FORMAT,
                     "raw matrix file '%s' has %" PRId64 " bytes but its sidecar implies %" PRId64 " bytes (%s)", path,
                     (int64_t)st.st_size, bytes, (int64_t)st.st_size < bytes ? "truncated" : "oversized");
  close(fd);
  return rc;
}

#ifdef OVL_SMPI
/* SimGrid SMPI: MPI-IO cannot open files on the simulated hosts, so rank 0 of
 * the parent moves every rank's block (row-major, as in raw_transfer's buffer)
 * with pread/pwrite: reading, it reads each block and sends it; writing, it
 * receives each block and writes it, then syncs the file. COLLECTIVE over the
 * parent; rank 0 exchanges a message with every rank that has a block even
 * after a failed read or write, so nobody waits for a message that never
 * comes, and the result is agreed. */
static ovl_err raw_root(ovl_dmat A, const char *fname, double *buf, int writing) {
  MPI_Comm parent = ovl_grid2d_parent(A->grid);
  int rank = 0, np = 1, fd = -1;
  const int have = A->lm > 0 && A->ln > 0;
  int64_t mine[4] = {A->roff, A->coff, have ? A->lm : 0, have ? A->ln : 0}, dummy[4], *all = NULL;
  double *blk = NULL;
  ovl_err rc = OVL_OK;
  OVL_MPI(MPI_Comm_rank(parent, &rank));
  OVL_MPI(MPI_Comm_size(parent, &np));
  if (rank == 0) {
    rc = ovl_malloc(sizeof(int64_t) * 4 * (size_t)np, &all);
    if (rc == OVL_OK) {
      fd = open(fname, writing ? O_WRONLY : O_RDONLY);
      if (fd < 0) rc = ovl_err_set(OVL_ERR_IO, "cannot open raw matrix file '%s': %s", fname, strerror(errno));
    }
    if (rc == OVL_OK && writing && ftruncate(fd, (off_t)(A->m * A->n * 8)) != 0)
      rc = ovl_err_set(OVL_ERR_IO, "cannot size '%s': %s", fname, strerror(errno));
  }
  OVL_MPI(MPI_Gather(mine, 4, MPI_INT64_T, all ? all : dummy, 4, MPI_INT64_T, 0, parent));
  rc = ovl_err_agree(parent, rc);
  if (rc == OVL_OK && rank == 0) {
    int64_t most = 1;
    for (int p = 0; p < np; p++)
      if (all[4 * p + 2] * all[4 * p + 3] > most) most = all[4 * p + 2] * all[4 * p + 3];
    rc = ovl_malloc(sizeof(double) * (size_t)most, &blk);
  }
  rc = ovl_err_agree(parent, rc);
  if (rc != OVL_OK) {
    if (fd >= 0) close(fd);
    ovl_free(&all);
    return rc;
  }
  if (rank == 0) {
    for (int p = 0; p < np; p++) {
      int64_t ro = all[4 * p], co = all[4 * p + 1], lm = all[4 * p + 2], ln = all[4 * p + 3];
      if (lm == 0) continue;
      double *b = p == 0 ? buf : blk;
      if (writing && p > 0) OVL_MPI(MPI_Recv(b, (int)(lm * ln), MPI_DOUBLE, p, 0, parent, MPI_STATUS_IGNORE));
      for (int64_t r = 0; rc == OVL_OK && r < lm; r++) {
        size_t want = sizeof(double) * (size_t)ln;
        off_t off = (off_t)(((ro + r) * A->n + co) * 8);
        ssize_t got = writing ? pwrite(fd, b + r * ln, want, off) : pread(fd, b + r * ln, want, off);
        if (got != (ssize_t)want)
          rc = ovl_err_set(OVL_ERR_IO, "short %s of '%s' at byte %lld%s%s", writing ? "write" : "read", fname,
                           (long long)off,
                           got < 0   ? ": "
                           : writing ? " (a full disk or a quota)"
                                     : " (the file ends early)",
                           got < 0 ? strerror(errno) : "");
      }
      /* after a failed read the owner gets an empty message and learns of the error from the agreement */
      if (!writing && p > 0) OVL_MPI(MPI_Send(b, rc == OVL_OK ? (int)(lm * ln) : 0, MPI_DOUBLE, p, 0, parent));
    }
    if (rc == OVL_OK && writing && fsync(fd) != 0)
      rc = ovl_err_set(OVL_ERR_IO, "cannot sync '%s': %s", fname, strerror(errno));
    if (close(fd) != 0 && rc == OVL_OK) rc = ovl_err_set(OVL_ERR_IO, "cannot close '%s': %s", fname, strerror(errno));
  } else if (have) {
    if (writing) OVL_MPI(MPI_Send(buf, (int)(A->lm * A->ln), MPI_DOUBLE, 0, 0, parent));
    else OVL_MPI(MPI_Recv(buf, (int)(A->lm * A->ln), MPI_DOUBLE, 0, 0, parent, MPI_STATUS_IGNORE));
  }
  ovl_free(&blk);
  ovl_free(&all);
  return ovl_err_agree(parent, rc);
}
#endif

/* Move the local blocks of A to (writing) or from the raw file fname, which
 * stands for path in messages. COLLECTIVE over the parent; the result is
 * agreed. When writing, the file is sized to exactly m * n * 8 bytes and
 * synced before it is closed. */
static ovl_err raw_transfer(ovl_dmat A, const char *fname, const char *path, int writing) {
  MPI_Comm parent = ovl_grid2d_parent(A->grid);
  MPI_File fh = MPI_FILE_NULL;
  MPI_Datatype ftype = MPI_DATATYPE_NULL, mtype = MPI_DATATYPE_NULL;
  double *buf = NULL;
  const int have = A->lm > 0 && A->ln > 0;
  const MPI_Offset bytes = (MPI_Offset)A->m * (MPI_Offset)A->n * 8;
  const int le = ovl_io_host_le();
  ovl_err rc = OVL_OK;
  int mrc = MPI_SUCCESS;

  if (A->m > INT_MAX || A->n > INT_MAX)
    rc = ovl_err_set(OVL_ERR_SIZE, "'%s': %" PRId64 " x %" PRId64 " is too large for MPI-IO subarrays", path, A->m,
                     A->n);
  if (rc == OVL_OK) rc = ovl_malloc(sizeof(double) * (size_t)(A->lm * A->ln), &buf);
  if (rc == OVL_OK && have) {
    int sizes[2] = {(int)A->m, (int)A->n}, sub[2] = {(int)A->lm, (int)A->ln}, start[2] = {(int)A->roff, (int)A->coff};
    mrc = MPI_Type_create_subarray(2, sizes, sub, start, MPI_ORDER_C, MPI_DOUBLE, &ftype);
    if (mrc == MPI_SUCCESS) mrc = MPI_Type_commit(&ftype);
    if (mrc == MPI_SUCCESS) mrc = MPI_Type_contiguous((int)A->ln, MPI_DOUBLE, &mtype);
    if (mrc == MPI_SUCCESS) mrc = MPI_Type_commit(&mtype);
    if (mrc != MPI_SUCCESS) rc = ovl_err_mpi(mrc, "MPI_Type_create_subarray");
  }
  if (rc == OVL_OK && writing && have) {
    /* column-major block -> row-major buffer */
    for (int64_t r = 0; r < A->lm; r++)
      for (int64_t c = 0; c < A->ln; c++) buf[r * A->ln + c] = A->data[r + c * A->ld];
    if (!le) ovl_io_bswap64(buf, (size_t)(A->lm * A->ln));
  }
  rc = ovl_err_agree(parent, rc);
#ifdef OVL_SMPI
  /* SMPI's simulated hosts have no MPI-IO: rank 0 reads or writes the file */
  (void)fh, (void)bytes;
  if (rc == OVL_OK) rc = raw_root(A, fname, buf, writing);
#else
  if (rc == OVL_OK) {
    /* the writer's temporary exists already: created by rank 0, never by MPI-IO */
    int amode = writing ? MPI_MODE_WRONLY : MPI_MODE_RDONLY;
    mrc = MPI_File_open(parent, (char *)fname, amode, MPI_INFO_NULL, &fh);
    if (mrc != MPI_SUCCESS) {
      fh = MPI_FILE_NULL;
      rc = mpi_io_err(mrc, "MPI_File_open", fname);
    }
    rc = ovl_err_agree(parent, rc);
  }
  if (rc == OVL_OK) {
    if (writing) {
      mrc = MPI_File_set_size(fh, bytes);
      if (mrc != MPI_SUCCESS) rc = mpi_io_err(mrc, "MPI_File_set_size", fname);
    } else {
      MPI_Offset size = 0;
      mrc = MPI_File_get_size(fh, &size);
      if (mrc != MPI_SUCCESS) rc = mpi_io_err(mrc, "MPI_File_get_size", fname);
      else if (size != bytes)
        rc = ovl_err_set(OVL_ERR_FORMAT, "raw matrix file '%s' has %lld bytes but its sidecar implies %lld bytes", path,
                         (long long)size, (long long)bytes);
    }
    rc = ovl_err_agree(parent, rc);
  }
  if (rc == OVL_OK) {
    mrc = MPI_File_set_view(fh, 0, MPI_DOUBLE, have ? ftype : MPI_DOUBLE, "native", MPI_INFO_NULL);
    if (mrc != MPI_SUCCESS) rc = mpi_io_err(mrc, "MPI_File_set_view", fname);
    rc = ovl_err_agree(parent, rc);
  }
  if (rc == OVL_OK) {
    MPI_Status st;
    MPI_Datatype t = have ? mtype : MPI_DOUBLE;
    int cnt = have ? (int)A->lm : 0, got = 0;
    if (writing) mrc = MPI_File_write_all(fh, buf, cnt, t, &st);
    else mrc = MPI_File_read_all(fh, buf, cnt, t, &st);
    if (mrc != MPI_SUCCESS) {
      rc = mpi_io_err(mrc, writing ? "MPI_File_write_all" : "MPI_File_read_all", fname);
    } else if (cnt > 0) {
      mrc = MPI_Get_count(&st, t, &got);
      if (mrc != MPI_SUCCESS || got != cnt)
        rc = ovl_err_set(writing ? OVL_ERR_IO : OVL_ERR_FORMAT, "short %s on '%s': %d of %d rows of the local block%s",
                         writing ? "write" : "read", fname, got, cnt,
                         writing ? " (MPI-IO reported no error: the file system took fewer bytes, a full disk or a "
                                   "quota)"
                                 : " (the file ends early)");
    }
    rc = ovl_err_agree(parent, rc);
  }
  if (rc == OVL_OK && writing) {
    mrc = MPI_File_sync(fh);
    rc = ovl_err_agree(parent, mrc == MPI_SUCCESS ? OVL_OK : mpi_io_err(mrc, "MPI_File_sync", fname));
  }
  if (fh != MPI_FILE_NULL) {
    mrc = MPI_File_close(&fh);
    ovl_err crc = mrc == MPI_SUCCESS ? OVL_OK : mpi_io_err(mrc, "MPI_File_close", fname);
    crc = ovl_err_agree(parent, crc);
    if (rc == OVL_OK) rc = crc;
  }
#endif
  if (rc == OVL_OK && !writing && have) {
    if (!le) ovl_io_bswap64(buf, (size_t)(A->lm * A->ln));
    /* row-major buffer -> column-major block */
    for (int64_t c = 0; c < A->ln; c++)
      for (int64_t r = 0; r < A->lm; r++) A->data[r + c * A->ld] = buf[r * A->ln + c];
  }
  if (ftype != MPI_DATATYPE_NULL) MPI_Type_free(&ftype);
  if (mtype != MPI_DATATYPE_NULL) MPI_Type_free(&mtype);
  ovl_free(&buf);
  return rc;
}

ovl_err ovl_dmat_read_raw(ovl_grid2d g, const char *path, int require_symmetric, ovl_dmat *out) {
  MPI_Comm parent = ovl_grid2d_parent(g);
  ovl_matrix_meta meta = {0, 0, 0};
  ovl_dmat A = NULL;
  int rank = 0, has_sum = 0;
  uint64_t sum = 0;
  OVL_TRY(ovl_check_ptr(out, "ovl_dmat_read_raw", "out"));
  *out = NULL;
  OVL_TRY(ovl_check_handle(g, "ovl_dmat_read_raw", "the grid"));
  OVL_TRY(ovl_check_comm(parent, "ovl_dmat_read_raw (an idle grid)"));
  OVL_MPI(MPI_Comm_rank(parent, &rank));
  ovl_err rc = OVL_OK;
  if (path == NULL || path[0] == '\0') rc = ovl_err_set(OVL_ERR_ARG, "ovl_dmat_read_raw needs a non-empty path");
  if (rc == OVL_OK && rank == 0) rc = ovl_io_read_sidecar_file(path, &meta, &has_sum, &sum);
  if (rc == OVL_OK && rank == 0) rc = check_data_file(path, meta.rows * meta.cols * 8);
  OVL_TRY(ovl_io_meta_share(parent, rc, &meta, &meta));
  uint64_t s2[2] = {(uint64_t)has_sum, sum};
  OVL_MPI(MPI_Bcast(s2, 2, MPI_UINT64_T, 0, parent));
  OVL_TRY(ovl_dmat_create(g, meta.rows, meta.cols, &A));
  rc = raw_transfer(A, path, path, 0);
  if (rc == OVL_OK && s2[0]) {
    uint64_t got = 0;
    rc = ovl_dmat_checksum(A, &got);
    if (rc == OVL_OK && got != s2[1])
      rc = ovl_err_set(OVL_ERR_FORMAT,
                       "raw matrix file '%s' does not hold the data its sidecar describes (checksum %016" PRIx64
                       ", the sidecar says %016" PRIx64 "): the two were not written together",
                       path, got, s2[1]);
  }
  if (rc == OVL_OK) rc = ovl_io_check_finite(A, path);
  if (rc == OVL_OK && (meta.symmetric || require_symmetric)) rc = ovl_io_check_symmetric_read(A, path);
  if (rc != OVL_OK) {
    ovl_dmat_destroy(&A);
    return rc;
  }
  *out = A;
  return OVL_OK;
}

ovl_err ovl_dmat_write_raw(ovl_dmat A, const char *path, int symmetric) {
  OVL_TRY(ovl_check_handle(A, "ovl_dmat_write_raw", "A"));
  MPI_Comm parent = ovl_grid2d_parent(A->grid);
  int rank = 0, fd = -1, held = 0;
  char *tmp = NULL, *side = NULL;
  uint64_t sum = 0;
  OVL_MPI(MPI_Comm_rank(parent, &rank));
  ovl_err rc = OVL_OK;
  if (path == NULL || path[0] == '\0') rc = ovl_err_set(OVL_ERR_ARG, "ovl_dmat_write_raw needs a non-empty path");
  OVL_TRY(ovl_err_agree(parent, rc));
  if (symmetric) OVL_TRY(ovl_io_check_symmetric_write(A, path));
  OVL_TRY(ovl_dmat_checksum(A, &sum));
  if (rank == 0) {
    rc = ovl_file_check_write(path, "output", NULL, 0); /* never replace a FIFO, a device, a directory */
    if (rc == OVL_OK) rc = ovl_io_concat(path, ".json", &side);
    if (rc == OVL_OK) rc = ovl_file_check_write(side, "output sidecar", NULL, 0);
    if (rc == OVL_OK) rc = ovl_file_tmp_create(path, "output", &tmp, &fd);
    if (rc == OVL_OK) rc = ovl_io_reserve(fd, tmp, path, A->m * A->n * 8);
  }
  rc = ovl_err_agree(parent, rc);
  if (rc == OVL_OK) rc = ovl_io_bcast_string(parent, &tmp);
  if (rc == OVL_OK) rc = raw_transfer(A, tmp, path, 1);
  if (rc == OVL_OK && rank == 0) {
    /* the sidecar first, then the data (the sidecar's checksum tells a
     * reader that finds the new sidecar beside the old data); a signal that
     * ends the process waits for both renames (ovl_tmp_hold) */
    ovl_tmp_hold(1);
    held = 1;
    char text[256];
    ovl_matrix_meta meta = {A->m, A->n, symmetric ? 1 : 0};
    int len = ovl_io_format_sidecar(text, sizeof text, &meta, sum);
    rc = ovl_file_write_atomic(side, "output sidecar", text, (size_t)len);
    if (rc == OVL_OK) {
      rc = ovl_file_tmp_commit(tmp, fd, path, "output");
      if (rc != OVL_OK) unlink(side); /* do not leave a sidecar that describes no data */
    }
    if (rc == OVL_OK) ovl_tmp_untrack(tmp), ovl_free(&tmp);
  }
  if (fd >= 0) close(fd);
  if (rank == 0 && tmp) unlink(tmp), ovl_tmp_untrack(tmp);
  if (held) ovl_tmp_hold(0);
  ovl_free(&tmp);
  ovl_free(&side);
  return ovl_err_agree(parent, rc);
}

/* 1 when path names a Matrix Market file (".mtx", any case). */
static int is_mtx(const char *path) {
  size_t len = path ? strlen(path) : 0;
  return len >= 4 && strcasecmp(path + len - 4, ".mtx") == 0;
}

ovl_err ovl_dmat_read(ovl_grid2d g, const char *path, int require_symmetric, ovl_dmat *out) {
  OVL_TRY(ovl_check_ptr(out, "ovl_dmat_read", "out"));
  if (is_mtx(path)) return ovl_dmat_read_mtx(g, path, require_symmetric, out);
  return ovl_dmat_read_raw(g, path, require_symmetric, out);
}

ovl_err ovl_matrix_read_meta(MPI_Comm comm, const char *path, ovl_matrix_meta *meta) {
  if (is_mtx(path)) return ovl_mtx_read_meta(comm, path, meta);
  return ovl_raw_read_meta(comm, path, meta);
}
