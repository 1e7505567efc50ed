/* Checkpoints of the purification (ovl_purify): D every K iterations as
 * PREFIX.itK.raw with PREFIX.state.json naming the problem it belongs to,
 * and the restart that reads it back (see ovl/purify.h). */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "ovl/json.h"
#include "purify/purify_impl.h"

static void ckpt_data_path(const char *prefix, int it, char *buf, size_t n) {
  snprintf(buf, n, "%s.it%d.raw", prefix, it);
}

/* Digits at *p (advanced past them); 0 when there are none. */
static int skip_digits(const char **p, long *v) {
  const char *q = *p;
  long x = 0;
  while (*q >= '0' && *q <= '9' && x < 100000000L) x = 10 * x + (*q++ - '0');
  if (q == *p) return 0;
  *p = q, *v = x;
  return 1;
}

/* Remove what earlier writers of this prefix left behind: the data of
 * iterations other than `keep` (PREFIX.itK.raw and its sidecar, which no
 * state file names once the state names iteration keep) and temporaries of
 * other processes (PREFIX.itK.raw[.json].tmp.PID.RANDOM,
 * PREFIX.state.json.tmp.PID.RANDOM: a writer killed mid-write). Rank 0 of plane 0, after the state is in
 * place. Best effort: a file that cannot be removed stays. */
static void ckpt_sweep(const char *prefix, int keep) {
  char dir[4096];
  const char *slash = strrchr(prefix, '/'), *base = slash ? slash + 1 : prefix;
  snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - prefix) + 1 : 1, slash ? prefix : ".");
  size_t blen = strlen(base);
  DIR *d = opendir(dir);
  struct dirent *e;
  while (d && (e = readdir(d)) != NULL) {
    if (strncmp(e->d_name, base, blen) != 0) continue;
    const char *r = e->d_name + blen;
    long it = -1, pid = -1;
    int data = 0;
    if (!strncmp(r, ".it", 3)) {
      r += 3;
      if (!skip_digits(&r, &it) || strncmp(r, ".raw", 4)) continue;
      r += 4, data = 1;
      if (!strncmp(r, ".json", 5)) r += 5;
    } else if (!strncmp(r, ".state.json", 11)) {
      r += 11;
    } else {
      continue;
    }
    if (*r) {
      /* a temporary of this target (ovl_file_tmp_create's name) */
      char target[4096];
      snprintf(target, sizeof target, "%.*s", (int)(r - e->d_name), e->d_name);
      if (!ovl_file_is_tmp_name(e->d_name, target, &pid) || pid == (long)getpid()) continue;
    } else if (!data || it == keep) {
      continue;
    }
    char path[8192];
    snprintf(path, sizeof path, "%s%s", slash ? dir : "", e->d_name);
    unlink(path);
  }
  if (d) closedir(d);
}

/* What defines the problem a checkpoint continues. The state file records
 * every field; a restart compares them all (ckpt_same_problem) and refuses
 * a mismatch or a missing field. A new field is one line in ckpt_problem. */
enum { CKPT_NFIELDS = 6, CKPT_STATE_MAX = 1 << 20 };
typedef struct ckpt_field {
  const char *key;
  char val[96]; /* the JSON value as written */
} ckpt_field;

static void ckpt_set(ckpt_field *f, const char *key, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void ckpt_set(ckpt_field *f, const char *key, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  f->key = key;
  vsnprintf(f->val, sizeof f->val, fmt, ap);
  va_end(ap);
}

static void ckpt_problem(const ovl_purify_opts *o, int64_t n, uint64_t fsum, ckpt_field f[CKPT_NFIELDS]) {
  int mcw = o->method == OVL_PURIFY_MCWEENY;
  ckpt_set(&f[0], "f_checksum", "\"%016" PRIx64 "\"", fsum);
  ckpt_set(&f[1], "n", "%" PRId64, n);
  ckpt_set(&f[2], "nocc", "%" PRId64, mcw ? (int64_t)-1 : o->nocc);
  ckpt_set(&f[3], "method", "\"%s\"", ovl_purify_method_name(o->method));
  ckpt_set(&f[4], "mu", mcw && isfinite(o->mu) ? "%.17g" : "null", o->mu);
  ckpt_set(&f[5], "precision", "\"%s\"", ovl_purify_prec_name(o->prec));
}

/* OVL_ERR_ARG unless the state d records exactly the problem of this run
 * (each field compared as a JSON value). LOCAL. */
static ovl_err ckpt_same_problem(const ovl_json *d, const ckpt_field want[CKPT_NFIELDS]) {
  for (int k = 0; k < CKPT_NFIELDS; k++) {
    int dup = 0;
    const cJSON *got = ovl_json_find(d->root, want[k].key, &dup);
    if (dup)
      return ovl_err_set(OVL_ERR_FORMAT, "checkpoint state '%s' is malformed: \"%s\" appears more than once", d->path,
                         want[k].key);
    if (!got)
      return ovl_err_set(OVL_ERR_FORMAT,
                         "checkpoint state '%s' lacks \"%s\", so it does not prove which problem it continues "
                         "(written by an older ovl?): start without --restart",
                         d->path, want[k].key);
    ovl_json w;
    OVL_TRY(ovl_json_parse(want[k].val, strlen(want[k].val), "checkpoint field", want[k].key, &w));
    int same = ovl_json_equal(got, w.root);
    ovl_json_free(&w);
    if (!same) {
      char txt[128];
      ovl_json_text(got, txt, sizeof txt);
      return ovl_err_set(OVL_ERR_ARG,
                         "checkpoint state '%s' is for a different problem: \"%s\" is %s there but %s in this run "
                         "(restart with the same F, n_occ, method, mu and precision, or start without --restart)",
                         d->path, want[k].key, txt, want[k].val);
    }
  }
  return OVL_OK;
}

/* Write D (iteration it) and then the state file that points to it; remove
 * the previous iteration's data. Plane-0 ranks; errors agreed by the caller. */
ovl_err ovl_i_ckpt_write(ovl_dmat D, const char *prefix, int it, const ovl_purify_opts *o, uint64_t fsum) {
  char data[4096], state[4096];
  ckpt_data_path(prefix, it, data, sizeof data);
  OVL_TRY(ovl_dmat_write_raw(D, data, 1));
  int rank = 0;
  MPI_Comm_rank(ovl_grid2d_parent(ovl_dmat_grid(D)), &rank);
  ovl_err rc = OVL_OK;
  if (rank == 0) {
    ckpt_field pf[CKPT_NFIELDS];
    char fields[1024] = "";
    ckpt_problem(o, ovl_dmat_rows(D), fsum, pf);
    for (int k = 0; k < CKPT_NFIELDS; k++)
      snprintf(fields + strlen(fields), sizeof fields - strlen(fields), "\"%s\": %s, ", pf[k].key, pf[k].val);
    snprintf(state, sizeof state, "%s.state.json", prefix);
    cJSON *dj = cJSON_CreateString(data); /* the path, escaped as JSON */
    char *dq = dj ? cJSON_PrintUnformatted(dj) : NULL;
    ovl_file_writer w;
    /* the state reaches the disk before it is renamed into place
     * (ovl_file_writer_commit syncs), so that it never names data that a
     * crash could lose */
    rc = ovl_file_writer_open(&w, state, "checkpoint state");
    if (rc == OVL_OK && (!dq || fprintf(w.f, "{\"iteration\": %d, %s\"data\": %s}\n", it, fields, dq) < 0)) {
      rc = ovl_err_set(OVL_ERR_IO, "cannot write checkpoint state '%s': %s", state,
                       dq ? strerror(errno) : "out of memory");
      ovl_file_writer_abort(&w);
    } else if (rc == OVL_OK) {
      rc = ovl_file_writer_commit(&w);
    }
    cJSON_free(dq);
    cJSON_Delete(dj);
    if (rc == OVL_OK) { ckpt_sweep(prefix, it); }
  }
  return ovl_err_agree(ovl_grid2d_parent(ovl_dmat_grid(D)), rc);
}

/* OVL_OK when the state of iteration `it` naming `data` can be continued by
 * a run of at most max_iter iterations: it lies in [0, max_iter) and data is
 * the file of that iteration of this prefix (PREFIX.itK.raw, the same file by
 * device and inode), so that the sweep after the read keeps what the state
 * names. LOCAL. */
static ovl_err ckpt_check_state(const char *state, const char *prefix, int64_t it, const char *data, int max_iter) {
  if (it >= 100000)
    return ovl_err_set(OVL_ERR_FORMAT,
                       "checkpoint state '%s' is damaged: its \"iteration\" %" PRId64
                       " lies beyond any run's (--max-iter is at most 100000)",
                       state, it);
  if (it >= max_iter)
    return ovl_err_set(OVL_ERR_ARG,
                       "checkpoint state '%s' is of iteration %" PRId64
                       ", not below --max-iter %d: raise --max-iter to continue it",
                       state, it, max_iter);
  char want[4096];
  ckpt_data_path(prefix, (int)it, want, sizeof want);
  struct stat sd, sw;
  if (stat(data, &sd) != 0)
    return ovl_err_set(OVL_ERR_IO, "checkpoint state '%s' names the data '%s', which cannot be opened: %s", state, data,
                       strerror(errno));
  if (stat(want, &sw) != 0 || sd.st_dev != sw.st_dev || sd.st_ino != sw.st_ino)
    return ovl_err_set(OVL_ERR_FORMAT,
                       "checkpoint state '%s' is inconsistent: it is of iteration %" PRId64
                       " but names the data '%s', not '%s'",
                       state, it, data, want);
  return OVL_OK;
}

/* Read the state file (rank 0), check that it continues this problem and
 * names the data of its iteration, whole and of this n, and load D from it.
 * Nothing is removed unless all of that holds. */
ovl_err ovl_i_ckpt_read(ovl_dmat D, const char *prefix, const ovl_purify_opts *o, uint64_t fsum, int *it) {
  MPI_Comm pc = ovl_grid2d_parent(ovl_dmat_grid(D));
  int rank = 0;
  MPI_Comm_rank(pc, &rank);
  char state[4096], data[4096] = "";
  int iter = -1;
  ovl_err rc = OVL_OK;
  if (rank == 0) {
    snprintf(state, sizeof state, "%s.state.json", prefix);
    ovl_json d;
    int64_t i64 = -1;
    rc = ovl_json_load(state, "checkpoint state", CKPT_STATE_MAX, &d);
    if (rc == OVL_OK) rc = ovl_json_root_object(&d, "");
    if (rc == OVL_OK) rc = ovl_json_int(&d, d.root, "iteration", 0, INT_MAX, &i64);
    if (rc == OVL_OK) rc = ovl_json_str(&d, d.root, "data", data, sizeof data);
    if (rc == OVL_OK) iter = (int)i64;
    ckpt_field pf[CKPT_NFIELDS];
    ckpt_problem(o, ovl_dmat_rows(D), fsum, pf);
    if (rc == OVL_OK) rc = ckpt_same_problem(&d, pf);
    if (rc == OVL_OK) rc = ckpt_check_state(state, prefix, i64, data, o->max_iter);
    ovl_json_free(&d);
  }
  OVL_TRY(ovl_err_agree(pc, rc));
  OVL_MPI(MPI_Bcast(&iter, 1, MPI_INT, 0, pc));
  OVL_MPI(MPI_Bcast(data, (int)sizeof data, MPI_CHAR, 0, pc));
  /* the data's shape before its bytes: a sidecar of another n is named as such */
  ovl_matrix_meta mm;
  OVL_TRY(ovl_matrix_read_meta(pc, data, &mm));
  if (mm.rows != ovl_dmat_rows(D) || mm.cols != ovl_dmat_cols(D))
    return ovl_err_set(OVL_ERR_SIZE,
                       "checkpoint '%s' holds a %" PRId64 " x %" PRId64 " matrix, expected %" PRId64 " x %" PRId64,
                       data, mm.rows, mm.cols, ovl_dmat_rows(D), ovl_dmat_cols(D));
  ovl_dmat X = NULL;
  OVL_TRY(ovl_dmat_read_raw(ovl_dmat_grid(D), data, 1, &X));
  rc = ovl_dmat_rows(X) == ovl_dmat_rows(D) && ovl_dmat_cols(X) == ovl_dmat_cols(D)
           ? ovl_dmat_copy(D, X)
           : ovl_err_set(OVL_ERR_SIZE, "checkpoint '%s' holds a %" PRId64 " x %" PRId64 " matrix, expected %" PRId64,
                         data, ovl_dmat_rows(X), ovl_dmat_cols(X), ovl_dmat_rows(D));
  ovl_dmat_destroy(&X);
  *it = iter;
  rc = ovl_err_agree(pc, rc);
  if (rc == OVL_OK && rank == 0) ckpt_sweep(prefix, iter); /* what a killed run left */
  return rc;
}
