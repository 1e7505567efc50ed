"""ovlrecords: the output schema of ovl's JSON records and the one reader of them.

ovl writes results as JSON objects, one per line (`ovl gemm --json`, `ovl bench ... --json`,
`ovl purify --json`, `ovl model --json`, `ovl tune --json`, the tune database). Two generations:

- records of schema 1 (include/ovl/record.h): {"type": T, "schema": 1, ...}, with null for a value
  that was not measured;
- older lines, read the same: the type in "bench" (gemm, coll, nbc, pingpong, progress, ssc) or in
  "cmd" (purify, model, tune, tune-sweep), no "schema", and -1 for some values that were not
  measured (the fields listed in TYPES below); tune-database lines without "type" or "cmd". An old
  `ovl tune --json` row ("cmd":"tune" with a "rank") reads as type "tune-candidate", its name now.

The types: gemm, pingpong, coll, nbc, progress, ssc (`ovl gemm` and `ovl bench ... --json`, one
record per row), model (`ovl model --json`), machine (a machine file), purify, tune-candidate and
tune-sweep (`ovl purify --json`, `ovl tune --json`), tune (a tune-database entry).

read_file / read_text return every JSON object line (lines not starting with '{' are skipped),
normalized: "type" is set on every ovl record, the old -1 markers become None, and the kernel
algorithm's old key "kernel" (model records and tune entries before the one vocabulary) reads as
"algo", the knob table's key (src/schema/knobs.c). Other keys,
and objects that are not ovl records, are left as they are. Used by tools/ovl-plot,
cluster/summarize.py, bench/validate_models.py and smpi/plot_smpi.py, each of which finds this file
relative to its own path.
"""
import csv
import json
import os
import stat

SCHEMA = 1  # the "schema" written by include/ovl/record.h (OVL_RECORD_SCHEMA)

# Record types: where the type stood before "type" existed (None: nowhere), and the fields in which -1 then
# meant "not measured" (null in schema 1). A sketch of the shape is in "fields" (the keys a
# consumer may count on; records carry more).
TYPES = {
    "gemm": {"legacy": "bench", "not_measured": ("relerr",),
             "fields": ("algo", "m", "n", "k", "ranks", "grid", "plan", "iterations", "t_min", "t_median", "t_max",
                        "gflops_median", "gflops_best", "t_comm", "t_comp", "check", "relerr", "mpi")},
    "coll": {"legacy": "bench", "not_measured": (),
             "fields": ("op", "ranks", "ppn", "p", "ndup", "backend", "alg", "bytes", "iterations", "blocking",
                        "ndup_overlap", "ppn_overlap", "cache_bytes", "mpi")},
    "nbc": {"legacy": "bench", "not_measured": (),
            "fields": ("op", "ranks", "backend", "alg", "bytes", "iterations", "num_tests", "mpi")},
    "pingpong": {"legacy": "bench", "not_measured": (),
                 "fields": ("method", "ranks", "pairs", "window", "bytes", "iterations", "t_min", "t_median", "t_max",
                            "bw_MBps", "agg_bw_MBps", "model_bw_MBps", "alpha", "beta", "n_half", "fit", "mpi")},
    "progress": {"legacy": "bench", "not_measured": (),
                 "fields": ("backend", "ranks", "bytes", "chunks", "every", "t_comm", "t_comp", "t_noprog", "t_prog",
                            "overlap_noprog", "overlap_prog", "mpi")},
    "ssc": {"legacy": "bench", "not_measured": (),
            "fields": ("algo", "ndup", "n", "ranks", "grid", "backend", "t_min", "t_median", "t_max",
                       "t_comm_median", "gflops", "speedup_vs_alg4", "relerr", "check", "iterations", "mpi")},
    "purify": {"legacy": "cmd", "not_measured": ("ref_relerr", "t_eig"),
               "fields": ("fock", "n", "nocc", "method", "algo", "precision", "stop_reason", "iterations",
                          "idempotency_error", "trace_error", "energy", "t_total", "check", "ref_relerr", "t_eig")},
    "model": {"legacy": "cmd", "not_measured": (),
              "fields": ("config", "algo", "n", "P", "latency", "bandwidth", "compute", "total", "gflops",
                         "machine")},
    # a machine file (`ovl bench machine -o FILE`; older files have no type)
    "machine": {"legacy": None, "not_measured": (),
                "fields": ("name", "alpha", "beta", "alpha_r", "beta_r", "eager", "gamma", "peak_bw")},
    # a tune-database entry
    "tune": {"legacy": None, "not_measured": (),
             "fields": ("family", "n", "P", "algo", "ndup", "s", "c", "b", "G", "lookahead", "t_median",
                        "machine")},
    # a row of `ovl tune --json`, one per candidate ("cmd":"tune" before); t_median_tuner is -1 in old rows
    # the tuner did not time
    "tune-candidate": {"legacy": "cmd", "not_measured": ("t_median_tuner",),
                       "fields": ("family", "n", "P", "rank", "config", "predicted", "tuner", "t_median_tuner",
                                  "t_median", "t_min")},
    "tune-sweep": {"legacy": "cmd", "not_measured": ("auto_ratio",),
                   "fields": ("family", "n", "P", "configurations", "rounds", "best", "t_best", "model_ratio",
                              "tuner", "tuner_ratio", "auto", "auto_from", "auto_ratio")},
}

# the key of the kernel algorithm (the knob table's "algo"), and the one older records wrote for it
ALGO_KEY = "algo"
_OLD_ALGO_KEY = "kernel"
# the record types whose older generations wrote the algorithm as "kernel" (read as "algo")
_OLD_ALGO_TYPES = ("model", "tune")

_TUNE_ENTRY_KEYS = ("family", "n", "P", "ndup", "s", "c", "b", "G", "lookahead")


class RecordError(Exception):
    """A file or line that cannot be read; the message names the file (and line)."""


def kind(rec):
    """The type of an ovl record ("gemm", "purify", ...), old or new; None for other objects."""
    if not isinstance(rec, dict):
        return None
    t = rec.get("type")
    if isinstance(t, str):
        return t
    for key in ("bench", "cmd"):
        if isinstance(rec.get(key), str):
            if rec[key] == "tune" and ("rank" in rec or "config" in rec):
                return "tune-candidate"  # an old `ovl tune --json` row
            return rec[key]
    if all(k in rec for k in _TUNE_ENTRY_KEYS) and (ALGO_KEY in rec or _OLD_ALGO_KEY in rec):
        return "tune"  # a tune-database line written before "type"
    return None


def schema(rec):
    """The record's schema version: 0 for lines written before "schema" existed."""
    s = rec.get("schema") if isinstance(rec, dict) else None
    return s if isinstance(s, int) and not isinstance(s, bool) else 0


def normalize(rec):
    """A copy of rec with "type" set (first) and, for old records, -1 "not measured" markers as None.
    Objects that are not ovl records come back unchanged (as a copy)."""
    if not isinstance(rec, dict):
        return rec
    t = kind(rec)
    if t is None:
        return dict(rec)
    out = {"type": t}
    for k, v in rec.items():
        if k == "type":
            continue
        if k == _OLD_ALGO_KEY and t in _OLD_ALGO_TYPES and ALGO_KEY not in rec:
            k = ALGO_KEY  # the old spelling of the kernel algorithm's key
        out[k] = v
    if schema(rec) == 0:
        for key in TYPES.get(t, {}).get("not_measured", ()):
            if out.get(key) == -1:
                out[key] = None
    return out


def measured(rec, key):
    """rec[key], or None when absent or not measured (null, or an old -1 marker)."""
    return normalize(rec).get(key)


def parse_line(line, where="<line>"):
    """The normalized object of one line; None for lines that do not start with '{'."""
    line = line.strip()
    if not line.startswith("{"):
        return None
    try:
        obj = json.loads(line)
    except ValueError as e:
        raise RecordError("%s: not JSON (%s)" % (where, e))
    if not isinstance(obj, dict):
        raise RecordError("%s: not a JSON object" % where)
    return normalize(obj)


def read_text(text, source="<text>"):
    """Normalized objects of every line of text that starts with '{'."""
    out = []
    for num, line in enumerate(text.splitlines(), 1):
        rec = parse_line(line, "%s:%d" % (source, num))
        if rec is not None:
            out.append(rec)
    return out


def check_input(path):
    """Every file read: an existing regular file (a FIFO would block, a device never ends)."""
    try:
        st = os.stat(path)
    except OSError as e:
        raise RecordError("%s: %s" % (path, e.strerror))
    if not stat.S_ISREG(st.st_mode):
        raise RecordError("%s: not a regular file" % path)


def read_file(path, require=False):
    """Normalized objects of a JSON-lines file (lines not starting with '{' skipped). require: a file
    without any is an error."""
    check_input(path)
    try:
        with open(path) as f:
            text = f.read()
    except OSError as e:
        raise RecordError("%s: %s" % (path, e.strerror))
    except UnicodeDecodeError as e:
        raise RecordError("%s: not text (%s)" % (path, e))
    out = read_text(text, path)
    if require and not out:
        raise RecordError("%s: no JSON lines" % path)
    return out


def read_rows(path):
    """Rows of a table: a CSV file (by its .csv name) as dicts of strings, or the records of a
    JSON-lines file."""
    check_input(path)
    if path.endswith(".csv"):
        with open(path, newline="") as f:
            return list(csv.DictReader(f))
    return read_file(path)


def dumps(rec):
    """One line of compact JSON for a record (None as null), as ovl writes them."""
    return json.dumps(rec, separators=(",", ":"), allow_nan=False)
