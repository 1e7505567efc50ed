#!/usr/bin/env python3
"""The cross-entry knob walk: every entry accepts each knob of the knob table
and resolves auto to the same plan on the same ranks.

The knobs come from the table itself: tests/test_schema.c --walk (built with
scripts/gen_cli_doc.py's compiler line) prints, per family, each knob its
entries offer, a valid value other than its default derived from the row,
the algorithm to name beside it when it needs one, and how the printed plan
shows the value. For each family and case (auto, then each knob) every entry
runs on the same ranks and matrix size and prints its plan (ovl_plan_describe):

  gemm       ovl gemm (the flag, and OVL_OPTIONS); Python ovl.gemm (options=,
             and OVL_OPTIONS); the drop-in libovl_scalapack.so preloaded
             under an unchanged pdgemm program (OVL_OPTIONS with --print-plan)
  ssc, sq    ovl purify (the flag, and OVL_OPTIONS); ovl_pdpurify from C
             (params.options, and OVL_OPTIONS, with --print-plan) and from
             Fortran (options=); Python ovl.purify (options=, and OVL_OPTIONS)
             -- ssc with --method canonical, sq with --method sp2

Checks: per family and case, every entry gives the same verdict; accepted,
the same plan, which shows the knob's value when the algorithm that ran is
one the knob applies to; refused, a message naming the knob. The drop-in
runs SUMMA on the BLACS context's grid: its plan must equal `ovl gemm` given
those constraints as a printed plan (--plan "summa grid=PxQ b=B ndup=auto
lookahead=auto") and the knob; it refuses the knobs SUMMA on a given grid
cannot take (another algorithm, --grid, HSUMMA's and 2.5D's), naming them,
and hands the call to ScaLAPACK (the program still passes). With
--print-plan the C entry and the drop-in print the plan on rank 0's stderr.
The Python and Fortran entries are skipped when not built (as their tests).

usage: knob_walk_test.py --ovl OVL --src DIR [--pdpurify EXE] [--fortran EXE]
         [--libovl LIB] [--python PY] [--dropin EXE --dropin-lib LIB] [--np 4]
         -- MPIEXEC [MPIEXEC_FLAGS...]
  (internal) knob_walk_test.py --python-entry FAMILY N FILE OPTIONS...
"""
import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

GEMM_N = 256  # the multiplication's size (the drop-in: blocks of GEMM_NB on a near-square grid)
GEMM_NB = 64
FOCK = "data/water_ccpvdz/fock.raw"  # the purification's matrix (n and n_occ from its meta.json)
METHOD = {"ssc": ["--method", "canonical"], "sq": ["--method", "sp2"]}
# the families of the knob table no entry takes a plan of yet, with the reason; any other family the table
# lists but the walk does not know fails it (a new family needs its entries here)
NO_ENTRY = {"bsmul": "the block-sparse product: ovl purify --sparse and ovl_pdpurify's sparse route pass N_DUP alone; "
                     "its planner (ovl_plan_resolve_bsmul) is tested by test_bsplan"}
# --bcast-alg names a schedule of ovl's own broadcast: it needs the own back end (ovl_plan_opts_apply's rule)
NEEDS = {"bcast-alg": ["--backend", "own"]}


DROPIN_LIFT = {"--dropin-min": "1", "--dropin-mem": "1024G"}


def mpi_of(lib):
    """The MPI library a shared object links (libmpi.so.N or libmpich.so.N), or None."""
    out = subprocess.run(["ldd", lib], capture_output=True, text=True).stdout
    m = re.search(r"lib(mpich|mpi)\.so[.0-9]*", out)
    return m.group(0) if m else None


def dropin_lifted(s):
    """The drop-in's own knobs that s leaves out, lifted (its default cap would forward the calls)."""
    return "".join("%s %s " % kv for kv in DROPIN_LIFT.items() if kv[0] not in s.split())


def python_entry(argv):
    """Under mpiexec: Python's entry, one call per options string, as options= then as OVL_OPTIONS."""
    import numpy as np
    import ovl
    from mpi4py import MPI
    fam, n, path, strings = argv[0], int(argv[1]), argv[2], argv[3:]
    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    if fam == "gemm":
        i = np.arange(n)
        A = np.cos(0.3 * i[:, None] + 0.7 * i[None, :]) if rank == 0 else None
        B = np.sin(0.2 * i[:, None] - 0.5 * i[None, :]) if rank == 0 else None
    else:
        F = np.fromfile(path).reshape(n, n, order="F") if rank == 0 else None
        nocc = json.load(open(os.path.join(os.path.dirname(path), "meta.json")))["n_occ"]
    for k, s in enumerate(strings):
        if fam == "gemm":  # ovl.gemm returns C alone: its plan is the one --print-plan shows on stderr
            s = (s + " --print-plan").strip()
        for mode in ("options", "env"):
            if mode == "env" and rank == 0:
                os.environ["OVL_OPTIONS"] = s
            try:
                if fam == "gemm":
                    C = ovl.gemm(A, B, options=s if mode == "options" else None)
                    if rank == 0:
                        assert np.allclose(C, A @ B), "ovl.gemm: a wrong product"
                    info = {"plan": "(stderr)"}
                else:
                    _, info = ovl.purify(F, nocc, options=s if mode == "options" else None)
                line = "walk %d %s ok %s" % (k, mode, info["plan"])
            except ovl.OvlError as e:
                line = "walk %d %s refused %s" % (k, mode, e)
            os.environ.pop("OVL_OPTIONS", None)
            if rank == 0:
                print(line, flush=True)
    return 0


def knob_cases(src):
    sys.path.insert(0, os.path.join(src, "scripts"))
    import gen_cli_doc  # the one compiler line of test_schema.c
    cases = {}
    for line in gen_cli_doc.table(src, os.environ.get("CC", "cc"), "--walk").splitlines():
        head, words = line.split(" -- ")
        fam, knob, algo, algos, frag = head.split()
        # a knob that needs no algorithm is walked under auto (`ovl gemm` and `ovl purify` name one by default)
        named = ["--algo", algo] if algo != "-" else ["--algo", "auto"] if knob != "algo" and fam != "sq" else []
        w = named + NEEDS.get(knob, []) + words.split()
        cases.setdefault(fam, []).append({"knob": knob, "words": w, "algos": algos.split(","), "frag": frag})
    return cases


class Walk:
    def __init__(self, a):
        self.a, self.fail, self.checks = a, 0, 0
        self.mpi = a.mpiexec
        self.tmp = tempfile.mkdtemp(prefix="ovl_knob_walk.")

    def run(self, args, env=None, timeout=240, ranks_env=None):
        """args under mpiexec; env: the launch's environment; ranks_env: set for the ranks only, through the
        launcher's flags (-x for Open MPI, -genv for MPICH), not for the launcher (a preloaded library)."""
        e = dict(os.environ)
        for k in ("OVL_OPTIONS", "OVL_TUNE_FILE", "OVL_MACHINE", "OVL_SCALAPACK_DISABLE"):
            e.pop(k, None)
        e.update(env or {})
        flags = []
        if ranks_env:
            v = subprocess.run(self.mpi[:1] + ["--version"], capture_output=True, text=True)
            openmpi = "Open MPI" in v.stdout + v.stderr or "OpenRTE" in v.stdout + v.stderr
            for k, v in ranks_env.items():
                e.pop(k, None)
                flags += ["-x", "%s=%s" % (k, v)] if openmpi else ["-genv", k, v]
        cmd = self.mpi + flags + ["-n", str(self.a.np)] + args
        p = subprocess.run(cmd, env=e, capture_output=True, text=True, timeout=timeout)
        return p.returncode, p.stdout, p.stderr

    def expect(self, cond, what):
        self.checks += 1
        if not cond:
            self.fail += 1
            print("FAIL:", what, flush=True)

    # ---- the entries: each returns [(entry, verdict, plan or message)] per string -------------------------
    def cli(self, fam, strings):
        res = []
        for s in strings:
            w = shlex.split(s)
            if fam == "gemm":
                base = [self.a.ovl, "gemm", "-n", str(GEMM_N), "-i", "1", "-x", "0", "-j", "--allow-idle"]
            else:
                base = [self.a.ovl, "purify", "--fock", self.fock, "--allow-idle"]
            out = []
            for mode in ("flag", "env"):
                rc, o, e = self.run(base + w if mode == "flag" else base, {"OVL_OPTIONS": s} if mode == "env" else {})
                if fam == "gemm":
                    m = re.search(r'"plan":"([^"]*)"', o)
                else:
                    m = re.search(r"^# plan: (.*)$", o + e, re.M)
                if rc == 0 and m:
                    out.append(("cli-" + mode, "ok", m.group(1)))
                else:
                    said = [x for x in e.splitlines() if x.startswith("ovl")] or e.splitlines() or [o.strip()]
                    out.append(("cli-" + mode, "refused" if rc in (1, 2) and said else "failed", said[0][:400]))
            res.append(out)
        return res

    def lines(self, entry, text, strings, modes):
        """'walk I MODE ok|refused TEXT' lines -> per string [(entry-MODE, verdict, text)]."""
        got = {}
        for line in text.splitlines():
            m = re.match(r"walk (\d+) (\w+) (ok|refused) ?(.*)$", line)
            if m:
                got[(int(m.group(1)), m.group(2))] = (m.group(3), m.group(4).strip())
        return [[("%s-%s" % (entry, md),) + got.get((i, md), ("failed", "no line"))
                 for md in modes] for i in range(len(strings))]

    def c_entry(self, strings):
        pp = [s + " --print-plan" for s in strings]
        rc, o, e = self.run([self.a.pdpurify, self.fock, str(self.n), str(self.nocc)] + pp)
        self.expect(rc == 0, "C entry exit %d: %s" % (rc, e[-400:]))
        res = self.lines("c", o, strings, ("options", "env"))
        # --print-plan: rank 0's stderr shows each plan that ran, in order
        printed = re.findall(r"^ovl_pdpurify: plan: (.*) \(n=\d+, method", e, re.M)
        ran = [r[2] for per in res for r in per if r[1] == "ok"]
        self.expect(printed == ran, "C entry: --print-plan printed %s, info.plan %s" % (printed, ran))
        return res

    def fortran_entry(self, strings):
        rc, o, e = self.run([self.a.fortran, self.fock, str(self.n), str(self.nocc)] + strings)
        self.expect(rc == 0, "Fortran entry exit %d: %s" % (rc, e[-400:]))
        return self.lines("fortran", o, strings, ("options",))

    def python_entry(self, fam, strings):
        env = {"OVL_LIBRARY": self.a.libovl,
               "PYTHONPATH": os.path.join(self.a.src, "python") + os.pathsep + os.environ.get("PYTHONPATH", ""),
               "PYTHONDONTWRITEBYTECODE": "1"}
        n = GEMM_N if fam == "gemm" else self.n
        rc, o, e = self.run([self.a.python, os.path.abspath(__file__), "--python-entry", fam, str(n), self.fock]
                            + strings, env)
        self.expect(rc == 0, "Python entry exit %d: %s" % (rc, e[-600:]))
        res = self.lines("python", o, strings, ("options", "env"))
        if fam == "gemm":
            printed = iter(re.findall(r"^ovl_gemm_dense: plan: (.*) \(n=", e, re.M))
            res = [[(r[0], r[1], next(printed, "not printed") if r[1] == "ok" else r[2]) for r in per] for per in res]
        return res

    def dropin(self, strings):
        res = []
        for s in strings:
            rc, o, e = self.run([self.a.dropin, "--bench", str(GEMM_N), str(GEMM_NB), "1"],
                                ranks_env={"LD_PRELOAD": self.a.dropin_lib, "OVL_SCALAPACK_REPORT": "1",
                                           "OVL_OPTIONS": (dropin_lifted(s) + s + " --print-plan").strip()})
            m = re.search(r"^ovl_pdgemm: plan: (.*) \(m=", e, re.M)
            fwd = re.search(r"forwarded=([1-9])", e)
            if rc != 0:
                res.append([("dropin", "failed", (e + o)[-400:])])
            elif m and not fwd:
                res.append([("dropin", "ok", m.group(1))])
            else:
                why = (re.search(r"ovl: warning: ovl_pdgemm: refused: (.*)$", e, re.M) or  # a knob it cannot take
                       re.search(r"forwarded reason=\w+ count=\d+ \((.*)\)$", e, re.M))  # its policy's verdict
                res.append([("dropin", "refused", why.group(1) if why and fwd else "forwarded without a reason: " + e)])
        return res

    # ---- one family ------------------------------------------------------------------------------------------
    def family(self, fam, cases):
        strings = [" ".join(METHOD.get(fam, []) + c["words"]) for c in cases]
        per = [[] for _ in cases]
        for col in [self.cli(fam, strings)] + self.library(fam, strings):
            for i, r in enumerate(col):
                per[i] += r
        ref = {}
        if fam == "gemm" and self.a.dropin:
            # the drop-in: SUMMA on the BLACS grid, b from the blocks; ovl gemm given those as a printed plan
            grid = self.near_square(self.a.np)
            cons = "summa grid=%s b=%d ndup=auto lookahead=auto" % (grid, max(GEMM_NB, 256) if GEMM_N >= 256
                                                                     else GEMM_N)
            for i, r in enumerate(self.dropin(strings)):
                per[i] += r
            for i, s in enumerate(strings):
                # an algorithm named brings the family's defaults, not the adapter's open knobs
                fix = ["--grid", grid, "--block", cons.split()[2][2:]] if "--algo" in cases[i]["words"] else ["--plan", cons]
                words = shlex.split(s)  # the drop-in's own knobs are no benchmark's: ovl gemm refuses them
                words = [w for j, w in enumerate(words) if w not in DROPIN_LIFT and
                         (j == 0 or words[j - 1] not in DROPIN_LIFT)]
                rc, o, e = self.run([self.a.ovl, "gemm", "-n", str(GEMM_N), "-i", "1", "-x", "0", "-j"] + fix + words)
                m = re.search(r'"plan":"([^"]*)"', o)
                ref[i] = m.group(1) if rc == 0 and m else None
        for i, c in enumerate(cases):
            self.check_case(fam, c, strings[i], per[i], ref.get(i))

    def check_case(self, fam, c, s, results, dropin_ref):
        name = "%s %s [%s]" % (fam, c["knob"], s)
        main = [r for r in results if r[0] != "dropin"]
        for r in results:
            print("  %-16s %-8s %s" % (r[0], r[1], r[2]))
        self.expect(all(r[1] != "failed" for r in results), name + ": an entry failed")
        verdicts = {r[1] for r in main}
        self.expect(len(verdicts) == 1, name + ": the entries disagree on the verdict %s" % sorted(verdicts))
        if verdicts == {"ok"}:
            plans = {r[2] for r in main}
            self.expect(len(plans) == 1, name + ": the entries resolve different plans %s" % sorted(plans))
            plan = main[0][2].split()
            if c["frag"] != "-" and plan and plan[0] in c["algos"]:
                shown = plan[0] == c["frag"] if c["knob"] == "algo" else c["frag"] in plan
                self.expect(shown, name + ": the plan %s does not show %s" % (" ".join(plan), c["frag"]))
        for r in results:
            if r[1] == "refused":
                self.expect(any(w.lstrip("-") in r[2] for w in c["words"]), name + ": %s's refusal names none of "
                            "the options given: %s" % (r[0], r[2]))
        for r in results:
            if r[0] != "dropin":
                continue
            if r[1] == "ok":
                self.expect(r[2] == dropin_ref, name + ": the drop-in's plan %s, ovl gemm's with its constraints %s"
                            % (r[2], dropin_ref))
                self.expect(c["frag"] == "-" or "summa" not in c["algos"] or c["frag"] in r[2].split() or
                            c["knob"] == "algo", name + ": the drop-in's plan does not show " + c["frag"])
            else:
                self.expect(r[1] == "refused" and (dropin_ref is None or c["knob"] in ("algo", "grid", "dropin-mem") or
                                                   "summa" not in c["algos"]),
                            name + ": the drop-in refused a knob summa takes: " + r[2])

    def library(self, fam, strings):
        cols = []
        if fam != "gemm":
            if self.a.pdpurify:
                cols.append(self.c_entry(strings))
            if self.a.fortran:
                cols.append(self.fortran_entry(strings))
        if self.python_ok:
            cols.append(self.python_entry(fam, strings))
        return cols

    @staticmethod
    def near_square(P):
        p = int(P ** 0.5)
        while P % p:
            p -= 1
        return "%dx%d" % (p, P // p)

    def main(self):
        a = self.a
        self.fock = os.path.join(a.src, FOCK)
        meta = json.load(open(os.path.join(os.path.dirname(self.fock), "meta.json")))
        self.n, self.nocc = meta["n"], meta["n_occ"]
        self.python_ok = False
        if a.python and a.libovl:
            probe = subprocess.run([a.python, "-c", "import glob, os, numpy, mpi4py; print(glob.glob(os.path.join("
                                    "os.path.dirname(mpi4py.__file__), 'MPI*.so'))[0])"], capture_output=True, text=True)
            # mpi4py must use the MPI library of the build (two MPI libraries in one process crash)
            self.python_ok = probe.returncode == 0 and mpi_of(probe.stdout.strip()) == mpi_of(a.libovl)
        skipped = [what for what, have in (("C pdpurify", a.pdpurify), ("Fortran", a.fortran),
                                           ("Python", self.python_ok), ("drop-in", a.dropin)) if not have]
        if skipped:
            print("knob walk: not built or not installed, skipped: " + ", ".join(skipped))
        cases = knob_cases(a.src)
        for fam in sorted(set(cases) - {"gemm", "ssc", "sq"}):
            self.checks += 1
            if fam in NO_ENTRY:
                print("== %s: not walked: %s" % (fam, NO_ENTRY[fam]), flush=True)
            else:
                self.fail += 1
                print("FAIL: family %s of the knob table has no entries in the walk (nor a reason in NO_ENTRY)" % fam)
        for fam in ("gemm", "ssc", "sq"):
            # auto: the algorithm left to the planner (`ovl gemm` and `ovl purify` name one by default);
            # sp2 takes no --algo: its family has one
            auto = ["--algo", "auto"] if fam != "sq" else []
            walk = [{"knob": "auto", "words": auto, "algos": [], "frag": "-"}] + cases[fam]
            print("== %s: %s" % (fam, ", ".join(c["knob"] for c in walk)), flush=True)
            self.family(fam, walk)
        print("knob walk: %d checks, %d failed: %s" % (self.checks, self.fail, "FAIL" if self.fail else "PASS"))
        return 1 if self.fail else 0


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--python-entry":
        return python_entry(sys.argv[2:])
    ap = argparse.ArgumentParser()
    for o in ("ovl", "src", "pdpurify", "fortran", "libovl", "python", "dropin", "dropin-lib"):
        ap.add_argument("--" + o, default="")
    ap.add_argument("--np", type=int, default=4)
    ap.add_argument("mpiexec", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    a.mpiexec = [m for m in a.mpiexec if m != "--"]
    if a.dropin and not a.dropin_lib:
        a.dropin = ""
    return Walk(a).main()


if __name__ == "__main__":
    sys.exit(main())
