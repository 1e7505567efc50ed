/* Machine files: the parameters of ovl_machine as a small JSON document.
 *
 *   {"name": "...", "alpha": 1e-6, "beta": 8e-11, "alpha_r": ..., "beta_r": ...,
 *    "eager": 65536, "gamma": 2e-11, "peak_bw": 1.2e10,
 *    "fbw": [{"coll": "bcast", "p": 4, "size": [...], "bw": [...]}, ...]}
 *
 * The reader is a strict recursive-descent parser for this shape (unknown
 * keys are skipped, so files may carry notes such as "measured_by"). */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ovl/model.h"

typedef struct jp {
  const char *s, *path;
  size_t i, n;
} jp;

static void ws(jp *j) {
  while (j->i < j->n && isspace((unsigned char)j->s[j->i])) j->i++;
}

static ovl_err bad(jp *j, const char *what) {
  return ovl_err_set(OVL_ERR_FORMAT, "machine file %s: %s at byte %zu", j->path, what, j->i);
}

static int lit(jp *j, char c) {
  ws(j);
  if (j->i < j->n && j->s[j->i] == c) {
    j->i++;
    return 1;
  }
  return 0;
}

static ovl_err str(jp *j, char *out, size_t cap) {
  if (!lit(j, '"')) return bad(j, "expected a string");
  size_t k = 0;
  while (j->i < j->n && j->s[j->i] != '"') {
    if (j->s[j->i] == '\\') j->i++;
    if (j->i < j->n && k + 1 < cap) out[k++] = j->s[j->i];
    j->i++;
  }
  if (j->i >= j->n) return bad(j, "unterminated string");
  j->i++;
  out[k] = 0;
  return OVL_OK;
}

static ovl_err num(jp *j, double *out) {
  ws(j);
  char buf[64];
  size_t k = 0;
  while (j->i < j->n && k + 1 < sizeof buf && strchr("0123456789+-.eE", j->s[j->i])) buf[k++] = j->s[j->i++];
  buf[k] = 0;
  char *end = NULL;
  errno = 0;
  double v = k ? strtod(buf, &end) : 0;
  if (!k || *end || errno || !isfinite(v)) return bad(j, "expected a finite number");
  *out = v;
  return OVL_OK;
}

static ovl_err skip(jp *j, int depth);

static ovl_err numarr(jp *j, double *out, int cap, int *cnt) {
  *cnt = 0;
  if (!lit(j, '[')) return bad(j, "expected an array of numbers");
  if (lit(j, ']')) return OVL_OK;
  do {
    double v;
    OVL_TRY(num(j, &v));
    if (*cnt == cap) return bad(j, "too many points in an f_BW table");
    out[(*cnt)++] = v;
  } while (lit(j, ','));
  if (!lit(j, ']')) return bad(j, "expected ']'");
  return OVL_OK;
}

static ovl_err skip(jp *j, int depth) {
  if (depth > 32) return bad(j, "nesting too deep");
  ws(j);
  if (j->i >= j->n) return bad(j, "unexpected end");
  char c = j->s[j->i];
  char tmp[256];
  if (c == '"') return str(j, tmp, sizeof tmp);
  if (c == '{' || c == '[') {
    char close = c == '{' ? '}' : ']';
    j->i++;
    if (lit(j, close)) return OVL_OK;
    do {
      if (c == '{') {
        OVL_TRY(str(j, tmp, sizeof tmp));
        if (!lit(j, ':')) return bad(j, "expected ':'");
      }
      OVL_TRY(skip(j, depth + 1));
    } while (lit(j, ','));
    if (!lit(j, close)) return bad(j, "expected a closing bracket");
    return OVL_OK;
  }
  if (!strncmp(j->s + j->i, "true", 4) || !strncmp(j->s + j->i, "null", 4)) return j->i += 4, OVL_OK;
  if (!strncmp(j->s + j->i, "false", 5)) return j->i += 5, OVL_OK;
  double v;
  return num(j, &v);
}

static ovl_err fbw_entry(jp *j, ovl_machine *m) {
  if (!lit(j, '{')) return bad(j, "expected an f_BW object");
  char key[64], cname[32] = "";
  double p = 0, size[OVL_FBW_MAXPTS], bw[OVL_FBW_MAXPTS];
  int ns = 0, nb = 0;
  if (!lit(j, '}')) {
    do {
      OVL_TRY(str(j, key, sizeof key));
      if (!lit(j, ':')) return bad(j, "expected ':'");
      if (!strcmp(key, "coll")) OVL_TRY(str(j, cname, sizeof cname));
      else if (!strcmp(key, "p")) OVL_TRY(num(j, &p));
      else if (!strcmp(key, "size")) OVL_TRY(numarr(j, size, OVL_FBW_MAXPTS, &ns));
      else if (!strcmp(key, "bw")) OVL_TRY(numarr(j, bw, OVL_FBW_MAXPTS, &nb));
      else OVL_TRY(skip(j, 1));
    } while (lit(j, ','));
    if (!lit(j, '}')) return bad(j, "expected '}'");
  }
  ovl_mcoll c;
  if (ovl_mcoll_parse(cname, &c) != OVL_OK) return bad(j, "f_BW entry with an unknown \"coll\"");
  if (ns != nb) return bad(j, "f_BW \"size\" and \"bw\" differ in length");
  if (p != floor(p) || p < 2 || p > 1e9) return bad(j, "f_BW \"p\" must be an integer >= 2");
  ovl_err rc = ovl_machine_set_fbw(m, c, (int)p, size, bw, ns);
  if (rc) return ovl_err_set(OVL_ERR_FORMAT, "machine file %s: %s", j->path, ovl_errmsg());
  return OVL_OK;
}

ovl_err ovl_machine_read(const char *path, ovl_machine *m) {
  memset(m, 0, sizeof *m);
  FILE *f = NULL;
  OVL_TRY(ovl_file_open_read(path, "machine file", &f));
  char *buf = NULL;
  size_t len = 0, cap = 0;
  for (;;) {
    if (len + 4096 > cap) {
      if (cap > ((size_t)1 << 24)) {
        free(buf), fclose(f);
        return ovl_err_set(OVL_ERR_FORMAT, "machine file %s is larger than 16 MiB", path);
      }
      char *nb = realloc(buf, cap = cap * 2 + 8192);
      if (!nb) return free(buf), fclose(f), ovl_err_set(OVL_ERR_NOMEM, "reading %s", path);
      buf = nb;
    }
    size_t r = fread(buf + len, 1, cap - len, f);
    len += r;
    if (r == 0) break;
  }
  fclose(f);
  jp j = {buf, path, 0, len};
  ovl_err rc = OVL_OK;
  double *dst;
  int seen = 0;
  if (!lit(&j, '{')) rc = bad(&j, "expected a JSON object");
  if (!rc && !lit(&j, '}')) {
    do {
      char key[64];
      if ((rc = str(&j, key, sizeof key))) break;
      if (!lit(&j, ':')) {
        rc = bad(&j, "expected ':'");
        break;
      }
      dst = !strcmp(key, "alpha")     ? &m->alpha
            : !strcmp(key, "beta")    ? &m->beta
            : !strcmp(key, "alpha_r") ? &m->alpha_r
            : !strcmp(key, "beta_r")  ? &m->beta_r
            : !strcmp(key, "eager")   ? &m->eager
            : !strcmp(key, "gamma")   ? &m->gamma
            : !strcmp(key, "peak_bw") ? &m->peak_bw
                                      : NULL;
      if (dst) {
        if ((rc = num(&j, dst))) break;
        if (*dst < 0) {
          rc = ovl_err_set(OVL_ERR_FORMAT, "machine file %s: \"%s\" must be >= 0, got %g", path, key, *dst);
          break;
        }
        seen |= !strcmp(key, "beta") ? 1 : !strcmp(key, "gamma") ? 2 : 0;
      } else if (!strcmp(key, "name")) {
        rc = str(&j, m->name, sizeof m->name);
      } else if (!strcmp(key, "fbw")) {
        if (!lit(&j, '[')) rc = bad(&j, "\"fbw\" must be an array");
        else if (!lit(&j, ']')) {
          do rc = fbw_entry(&j, m);
          while (!rc && lit(&j, ','));
          if (!rc && !lit(&j, ']')) rc = bad(&j, "expected ']'");
        }
      } else {
        rc = skip(&j, 1);
      }
    } while (!rc && lit(&j, ','));
    if (!rc && !lit(&j, '}')) rc = bad(&j, "expected '}'");
  }
  if (!rc && (ws(&j), j.i != j.n)) rc = bad(&j, "trailing characters");
  free(buf);
  if (rc) return rc;
  if ((seen & 3) != 3) return ovl_err_set(OVL_ERR_FORMAT, "machine file %s: \"beta\" and \"gamma\" are required", path);
  if (m->alpha_r == 0 && m->beta_r == 0) m->alpha_r = m->alpha, m->beta_r = m->beta;
  return OVL_OK;
}

ovl_err ovl_machine_write(const ovl_machine *m, const char *path) {
  char tmp[4096];
  if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp)
    return ovl_err_set(OVL_ERR_ARG, "machine file path too long");
  OVL_TRY(ovl_file_check_write(path, "machine file", NULL, 0));
  FILE *f = fopen(tmp, "w");
  if (!f) return ovl_err_set(OVL_ERR_IO, "cannot create %s: %s", tmp, strerror(errno));
  fprintf(f,
          "{\n  \"name\": \"%s\",\n  \"alpha\": %.6e,\n  \"beta\": %.6e,\n  \"alpha_r\": %.6e,\n  \"beta_r\": %.6e,\n"
          "  \"eager\": %.0f,\n  \"gamma\": %.6e,\n  \"peak_bw\": %.6e,\n  \"fbw\": [",
          m->name, m->alpha, m->beta, m->alpha_r, m->beta_r, m->eager, m->gamma, m->peak_bw);
  for (int t = 0; t < m->nfbw; t++) {
    const ovl_fbw *b = &m->fbw[t];
    fprintf(f, "%s\n    {\"coll\": \"%s\", \"p\": %d,\n     \"size\": [", t ? "," : "", ovl_mcoll_name(b->coll), b->p);
    for (int k = 0; k < b->npts; k++) fprintf(f, "%s%.0f", k ? ", " : "", b->size[k]);
    fprintf(f, "],\n     \"bw\": [");
    for (int k = 0; k < b->npts; k++) fprintf(f, "%s%.6e", k ? ", " : "", b->bw[k]);
    fprintf(f, "]}");
  }
  fprintf(f, "%s]\n}\n", m->nfbw ? "\n  " : "");
  return ovl_file_commit(f, tmp, path);
}
