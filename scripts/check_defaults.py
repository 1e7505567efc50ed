#!/usr/bin/env python3
"""Each knob's default is written in one place: the knob table (src/schema/knobs.c).

Everywhere else a default is asked of the table (ovl_knob_default, ovl_plan_default,
ovl_plan_auto). This check scans the C sources outside src/schema (SCAN below) for a
literal written where a knob's default belongs:

  ndup       `ndup = 4`, `.ndup = 1`, `int ndups[] = {1, ...}`, `ndup = x > 0 ? x : 1`
  panel      `b = 256` (any of 64, 128, 256, 512, 1024; also `block`, `panel` and a
             ternary's fallback), `ovl_plan_gemm(..., 256)`
  lookahead  `lookahead = 0` or `= 1`; the same for `arrival`
  family     in the files of the block-sparse product (FAMILY_FILES: the product, the
             sparse purification), a knob's default asked of another family than
             OVL_FAMILY_BSMUL (`ovl_knob_default_int(OVL_KNOB_NDUP, OVL_FAMILY_GEMM)`):
             the family's own row is the one place its defaults are written

Comments and string literals are not code and are skipped. A hit is an error unless
ALLOW lists it: (file, a piece of the line's code) with the reason it is no default.
PENDING lists hits known to be defaults that another change removes; they are
reported, not failed, and must go when that change lands. An ALLOW or PENDING
entry that matches nothing is an error too (the list stays true).

usage: check_defaults.py [--root DIR]     the check (exit 1 with file:line: what)
       check_defaults.py --self-test      proves it can fail: a default added to a
                                          copy of the tree is found, the tree passes
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

SCAN = ["src", "tools", "include", "bench", "smpi"]
SKIP = ["src/schema"]  # the table's own room: the one place defaults are written
EXTS = (".c", ".h")

_ASSIGN = r"\s*(?<![=<>!])=(?!=)\s*"
PATTERNS = [
    ("ndup", re.compile(r"\bndups?\s*(?:\[[^\]]*\])?" + _ASSIGN + r"\{?\s*[1-9]\d*\b")),
    ("ndup", re.compile(r"\bndup" + _ASSIGN + r"[^;]*\?[^;]*:\s*[1-9]\d*\s*[;,)]")),
    ("panel width", re.compile(r"\b(?:b|block|panel)" + _ASSIGN + r"(?:[^;]*[?:]\s*)?(?:64|128|256|512|1024)\b")),
    ("panel width", re.compile(r"\bovl_plan_gemm\s*\([^;]*\b(?:64|128|256|512|1024)\b")),
    ("lookahead", re.compile(r"\b(?:lookahead|arrival)" + _ASSIGN + r"[01]\b")),
]

# the block-sparse product's files (a path, or a folder ending in "/"): their knob defaults are family bsmul's
FAMILY_FILES = ["src/sparse/", "src/purify/sparse.c"]
FAMILY_PATTERN = ("family", re.compile(r"\bovl_(?:knob_default(?:_int)?|plan_default|plan_auto)\s*\([^;]*"
                                       r"\bOVL_FAMILY_(?!BSMUL\b)\w+"))

# (file, a piece of the line's code): why it is no default
ALLOW = {
    ("src/model/cost.c", "c.G = g, c.lookahead = 1"):
        "HSUMMA's candidates are the configuration of the HSUMMA paper (lookahead on), one of the tuner's choices",
    ("src/model/cost.c", "c.ndup = 1;"):
        "Alg. 3 and 4 use blocking collectives: one lane is what they are, not a default",
    ("src/model/cost.c", "if (ndup < 1) ndup = 1;"):
        "a collective's modelled time: fewer than one lane is one message (a floor, not a plan's default)",
    ("src/bench/ssc.c", "c->ndup = multi(p->algs[a]) ? p->ndups[k] : 1;"):
        "Alg. 3 and 4 use blocking collectives: one lane is what they are, not a default",
    ("src/kernels/matvec.c", "if (alg == OVL_MATVEC_ALG1) ndup = 1;"):
        "the mat-vec's Algorithm 1 has no lanes",
    ("src/plan/plan.c", "if (v->lookahead) p->lookahead = 1;"):
        "--lookahead given turns it on (a flag's value, not its default)",
    ("bench/peers/pdgemm_peer.c", "hplan.lookahead = 1;"):
        "the peer comparison runs HSUMMA as its paper configures it (lookahead on), stated in its header",
}

# hits known to be defaults, removed by a change under way elsewhere: reported, not failed
PENDING = {
}


def code_lines(text):
    """The lines of a C file with comments and string/char literals blanked (line numbers kept)."""
    out, i, n = [], 0, len(text)
    buf = []
    state = None  # None, "block", "line", '"', "'"
    while i < n:
        ch = text[i]
        nxt = text[i + 1] if i + 1 < n else ""
        if state is None:
            if ch == "/" and nxt == "*":
                state, i = "block", i + 2
                buf.append("  ")
                continue
            if ch == "/" and nxt == "/":
                state, i = "line", i + 2
                continue
            if ch in "\"'":
                state = ch
                buf.append(ch)
            else:
                buf.append(ch)
        elif state == "block":
            if ch == "*" and nxt == "/":
                state, i = None, i + 2
                buf.append("  ")
                continue
            buf.append("\n" if ch == "\n" else " ")
        elif state == "line":
            if ch == "\n":
                state = None
                buf.append(ch)
        else:  # inside a literal
            if ch == "\\" and nxt:
                i += 2
                continue
            if ch == state:
                state = None
                buf.append(ch)
            elif ch == "\n":  # an unterminated literal ends with its line
                state = None
                buf.append(ch)
        i += 1
    out = "".join(buf).split("\n")
    return out


def files(root):
    for top in SCAN:
        base = os.path.join(root, top)
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames.sort()
            for f in sorted(filenames):
                path = os.path.relpath(os.path.join(dirpath, f), root).replace(os.sep, "/")
                if f.endswith(EXTS) and not any(path == s or path.startswith(s + "/") for s in SKIP):
                    yield path


def norm(s):
    return " ".join(s.split())


def check(root):
    bad, pending, used = [], [], set()
    for path in files(root):
        with open(os.path.join(root, path), encoding="utf-8", errors="replace") as fh:
            lines = code_lines(fh.read())
        pats = PATTERNS + ([FAMILY_PATTERN] if any(path == f or (f.endswith("/") and path.startswith(f))
                                                    for f in FAMILY_FILES) else [])
        for lineno, line in enumerate(lines, 1):
            for what, rx in pats:
                if not rx.search(line):
                    continue
                key = next((k for k in list(ALLOW) + list(PENDING) if k[0] == path and norm(k[1]) in norm(line)), None)
                if key is not None:
                    used.add(key)
                    if key in PENDING:
                        pending.append("%s:%d: pending (%s): %s" % (path, lineno, what, PENDING[key]))
                    continue
                bad.append("%s:%d: a literal default of the %s knob: `%s`; ask the knob table (ovl_knob_default, "
                           "ovl_plan_default) or list it in ALLOW with the reason it is no default"
                           % (path, lineno, what, line.strip()))
                break
    for key in list(ALLOW) + list(PENDING):
        if key not in used and os.path.isdir(os.path.join(root, "src")):
            if os.path.isfile(os.path.join(root, key[0])):
                bad.append("%s: %s lists `%s`, which is no longer there: remove it from the list"
                           % (key[0], "ALLOW" if key in ALLOW else "PENDING", key[1]))
    return bad, pending


def self_test(root):
    """A copy of the tree passes; with a hard-coded default added, each kind is found."""
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        for top in SCAN:
            if os.path.isdir(os.path.join(root, top)):
                shutil.copytree(os.path.join(root, top), os.path.join(tmp, top),
                                ignore=shutil.ignore_patterns("*.o", "build*"))
        bad, _ = check(tmp)
        if bad:
            failures += 1
            print("FAIL: the unchanged copy fails:\n  " + "\n  ".join(bad))
        faults = [
            ("tools/ovl/x_ndup.c", "int f(void) {\n  int ndup = 4;\n  return ndup;\n}\n", "ndup"),
            ("src/kernels/x_desig.c", "struct s { int ndup; };\nstruct s v = {.ndup = 1};\n", "ndup"),
            ("src/plan/x_tern.c", "int g(int n) {\n  int ndup = n > 0 ? n : 2;\n  return ndup;\n}\n", "ndup"),
            ("src/bench/x_b.c", "long h(void) {\n  long b = 256;\n  return b;\n}\n", "panel width"),
            ("src/entry/x_gemm.c", "void k(void) { ovl_plan p = ovl_plan_gemm(OVL_ALGO_SUMMA, 128); }\n",
             "panel width"),
            ("include/ovl/x.h", "static inline void la(int *lookahead) { *lookahead = 0; }\n"
             "static inline void l2(struct q *p) { p->lookahead = 1; }\n", "lookahead"),
            ("src/sparse/x_fam.c", "int v(int d) { return d > 0 ? d : ovl_knob_default_int(OVL_KNOB_NDUP, "
             "OVL_FAMILY_SQ); }\n", "family"),
        ]
        for path, text, what in faults:
            p = os.path.join(tmp, path)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            with open(p, "w") as f:
                f.write(text)
            bad, _ = check(tmp)
            mine = [b for b in bad if b.startswith(path + ":") and ("the %s knob" % what) in b]
            if not mine:
                failures += 1
                print("FAIL: %s (%s) was not found; found:\n  %s" % (path, what, "\n  ".join(bad) or "nothing"))
            os.remove(p)
        # comments, strings and comparisons are no defaults
        p = os.path.join(tmp, "src/core/x_ok.c")
        with open(p, "w") as f:
            f.write('/* ndup = 4 */\n// b = 256\nconst char *s = "lookahead = 1";\nint e(int ndup) { return ndup == 1; }\n'
                    "int z(int b) { return b >= 256; }\n")
        bad, _ = check(tmp)
        if any(b.startswith("src/core/x_ok.c") for b in bad):
            failures += 1
            print("FAIL: a comment, a string or a comparison was taken for a default:\n  " + "\n  ".join(bad))
        os.remove(p)
        # the family's own default in its files, and another family's outside them, are no findings
        for path, text in [("src/sparse/x_own.c", "int o(void) { return ovl_knob_default_int(OVL_KNOB_NDUP, "
                                                  "OVL_FAMILY_BSMUL); }\n"),
                           ("src/kernels/x_other.c", "int o(void) { return ovl_knob_default_int(OVL_KNOB_NDUP, "
                                                     "OVL_FAMILY_GEMM); }\n")]:
            p = os.path.join(tmp, path)
            with open(p, "w") as f:
                f.write(text)
            bad, _ = check(tmp)
            if any(b.startswith(path) for b in bad):
                failures += 1
                print("FAIL: %s was taken for another family's default:\n  %s" % (path, "\n  ".join(bad)))
            os.remove(p)
        # an ALLOW entry that matches nothing is reported
        with open(os.path.join(tmp, "src/kernels/matvec.c")) as f:
            t = f.read()
        with open(os.path.join(tmp, "src/kernels/matvec.c"), "w") as f:
            f.write(t.replace("if (alg == OVL_MATVEC_ALG1) ndup = 1;", "if (alg == OVL_MATVEC_ALG1) ndup = lanes1();"))
        bad, _ = check(tmp)
        if not any("no longer there" in b for b in bad):
            failures += 1
            print("FAIL: a stale ALLOW entry was not reported:\n  " + "\n  ".join(bad))
    print("check_defaults self-test: %s" % ("ok" if not failures else "%d failure(s)" % failures))
    return 1 if failures else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    ap.add_argument("--self-test", action="store_true")
    a = ap.parse_args()
    root = os.path.abspath(a.root)
    if a.self_test:
        return self_test(root)
    bad, pending = check(root)
    for p in pending:
        print(p)
    for b in bad:
        print(b)
    if bad:
        print("check_defaults: %d literal default(s) outside the knob table" % len(bad))
        return 1
    print("check_defaults: ok (every knob default is the table's; %d allowed, %d pending)" % (len(ALLOW), len(pending)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
