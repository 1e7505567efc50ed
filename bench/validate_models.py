#!/usr/bin/env python3
"""Predicted vs measured time for every algorithm ovl models, and how close
`auto` comes to the best configuration of an exhaustive sweep.

usage: bench/validate_models.py [--np 8] [--n 1536] [--ssc-n 1200] [--reps 5] [--rounds 9] [--tune-only]
                                [--families ssc,gemm] [--out DIR] [--ovl build/ovl] [--mpiexec CMD] [--smoke]

--smoke runs every step at tiny sizes (n = 96, one repetition, a short
machine measurement: a few seconds on 8 ranks) and checks what it prints
(every configuration predicted and measured, each record complete, the
sweep's ratios >= 1); it says whether the script and the ovl command agree,
not how good the models are. The ranks: scripts/mpirun.sh NP, or
--mpiexec "mpiexec --oversubscribe" (then CMD -n NP).

1. `ovl bench machine` measures this machine's parameters (machine.json);
2. each algorithm runs with `ovl gemm --json` / `ovl bench ssc --json`
   (median of --reps repetitions, MAX over ranks) and is predicted by
   `ovl model --json` with the same configuration and machine file;
3. `ovl tune --exhaustive` (one launch per family) lets the tuner choose
   (the model's top 3 and its 10% band, --reps interleaved rounds) and store
   the choice in a tune file, then re-times every configuration in --rounds
   fresh interleaved rounds; auto's choice (resolved through that tune file)
   and the model's first choice (what `auto` runs without a tune file) are
   compared with the best of the sweep.
Prints Markdown tables; the raw JSON lines go to --out.
"""
import argparse
import json
import math
import os
import shlex
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tools"))
import ovlrecords  # noqa: E402  (tools/ovlrecords.py: the schema and reader of ovl's records)


def run(np_, args, a):
    if a.mpiexec:
        cmd = shlex.split(a.mpiexec) + ["-n", str(np_), a.ovl] + args
    else:
        cmd = [os.path.join(ROOT, "scripts", "mpirun.sh"), str(np_), a.ovl] + args
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit("validate_models: failed: %s\n%s%s" % (" ".join(cmd), p.stdout[-2000:], p.stderr[-2000:]))
    return p.stdout


def jlines(text):
    """The records in ovl's output (ovlrecords: "type" set, None for what was not measured)."""
    try:
        return ovlrecords.read_text(text, "ovl output")
    except ovlrecords.RecordError as e:
        sys.exit("validate_models: %s" % e)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--np", type=int, default=8)
    ap.add_argument("--n", type=int, default=1536)
    ap.add_argument("--ssc-n", type=int, default=1200)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--tune-only", action="store_true", help="skip the predicted-vs-measured table (step 2)")
    ap.add_argument("--families", default="ssc,gemm", help="kernel families of step 3 (ssc needs a cube or 2.5D grid)")
    ap.add_argument("--out", default="validate-out")
    ap.add_argument("--ovl", default=os.path.join(ROOT, "build", "ovl"))
    ap.add_argument("--mpiexec", default="", help="launcher, called as CMD -n NP (default: scripts/mpirun.sh NP)")
    ap.add_argument("--smoke", action="store_true", help="tiny sizes, one repetition, and checks of the output")
    a = ap.parse_args()
    if a.smoke:
        a.np, a.n, a.ssc_n, a.reps, a.rounds = 8, 96, 48, 1, 1
    os.makedirs(a.out, exist_ok=True)
    mfile = os.path.join(a.out, "machine.json")
    quick = ["--max-size", "64K", "-i", "2"] if a.smoke else []
    print(run(a.np, ["bench", "machine", "-o", mfile, "-q"] + quick, a).strip())
    P, n, r = a.np, a.n, str(a.reps)
    warm = "0" if a.smoke else "1"
    rows = [] if a.tune_only else table(a, mfile, P, n, r, warm)
    sweeps = tune(a, mfile, P, n, r, warm)
    if a.smoke:
        smoke_check(a, rows, sweeps)


def table(a, mfile, P, n, r, warm):
    rows = []
    b = "32" if a.smoke else "256"
    # (label, ranks, gemm args, model args)
    gemm_cases = [
        ("summa b=" + b, P, ["--algo", "summa", "-b", b], ["--algo", "summa", "-b", b]),
        ("summa b=%s lookahead" % b, P, ["--algo", "summa", "-b", b, "--lookahead"],
         ["--algo", "summa", "-b", b, "--lookahead"]),
        ("hsumma G=4 b=" + b, P, ["--algo", "hsumma", "-b", b, "-G", "4"], ["--algo", "hsumma", "-b", b, "-G", "4"]),
        ("cannon", 4, ["--algo", "cannon"], ["--algo", "cannon"]),
        ("3d ndup=2", P, ["--algo", "3d", "--ndup", "2"], ["--algo", "3d", "--ndup", "2"]),
        ("2.5d c=2", P, ["--algo", "2.5d", "--repl", "2"], ["--algo", "2.5d", "--repl", "2"]),
    ]
    raw = open(os.path.join(a.out, "validate.jsonl"), "w")
    for label, np_, gargs, margs in gemm_cases:
        meas = jlines(run(np_, ["gemm", "-n", str(n), "-i", r, "-x", warm, "--json", "--no-blas-check"] + gargs, a))[0]
        pred = jlines(run(1, ["model", "-n", str(n), "--ranks", str(np_), "--machine", mfile, "--json"] + margs, a))[0]
        raw.write(json.dumps({"case": label, "measured": meas, "predicted": pred}) + "\n")
        rows.append((label, n, np_, pred, meas["t_median"], meas["t_min"]))
    ssc = jlines(run(P, ["bench", "ssc", "-n", str(a.ssc_n), "-d", "1,4", "-i", r, "-x", warm, "--json", "-q"], a))
    for s in ssc:
        margs = ["--algo", s["algo"], "--ndup", str(s["ndup"])]
        pred = jlines(run(1, ["model", "-n", str(a.ssc_n), "--ranks", str(P), "--machine", mfile, "--json"] + margs,
                          a))[0]
        raw.write(json.dumps({"case": s["algo"], "measured": s, "predicted": pred}) + "\n")
        rows.append(("%s ndup=%d" % (s["algo"], s["ndup"]), a.ssc_n, P, pred, s["t_median"], s["t_min"]))
    print()
    print("| configuration | n | P | predicted (s) | latency | bandwidth | compute | measured median (s) | min (s) "
          "| measured / predicted |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for label, nn, np_, p, tmed, tmin in rows:
        print("| %s | %d | %d | %.4g | %.4g | %.4g | %.4g | %.4g | %.4g | %.2f |" % (
            label, nn, np_, p["total"], p["latency"], p["bandwidth"], p["compute"], tmed, tmin, tmed / p["total"]))
    print()
    return rows


def tune(a, mfile, P, n, r, warm):
    sweeps = []
    tfile = os.path.join(a.out, "tune.json")
    if os.path.exists(tfile):
        os.remove(tfile)
    for fam, nn in [(f, a.ssc_n if f == "ssc" else n) for f in a.families.split(",")]:
        # one launch: the tuner chooses (its set in interleaved rounds) and stores the choice; then every
        # candidate is re-timed in fresh interleaved rounds, and auto's choice (resolved through the tune
        # file) is judged against the best of those rounds
        out = run(P, ["tune", "--family", fam, "-n", str(nn), "--machine", mfile, "--exhaustive", "-i", r, "-r",
                      str(a.rounds), "-x", warm, "-q", "--json", "-o", tfile], a)
        with open(os.path.join(a.out, "tune_%s.json" % fam), "w") as f:
            f.write(out)
        rows_t = [x for x in jlines(out) if ovlrecords.kind(x) == "tune-candidate"]
        sw = [x for x in jlines(out) if ovlrecords.kind(x) == "tune-sweep"][0]
        print("exhaustive sweep, %s n=%d on %d ranks (%d configurations; tuner %s rounds, sweep %d rounds, "
              "interleaved):" % (fam, nn, P, len(rows_t), r, a.rounds))
        print()
        print("| rank | configuration | predicted (s) | tuner median (s) | sweep median (s) | sweep min (s) | / best |")
        print("|---:|---|---:|---:|---:|---:|---:|")
        for x in rows_t:
            print("| %d | %s | %.4g | %s | %.4g | %.4g | %.3f |" % (
                x["rank"], x["config"], x["predicted"], "%.4g" % x["t_median_tuner"] if x["tuner"] and x["t_median_tuner"] is not None else "-",
                x["t_median"], x["t_min"], x["t_median"] / sw["t_best"]))
        print()
        print("- best of the sweep: %s, %.4g s" % (sw["best"], sw["t_best"]))
        ratio = "not a candidate" if sw["auto_ratio"] is None else "**%.3fx** the best" % sw["auto_ratio"]
        print("- `auto` (%s): **%s** = %s" % (sw["auto_from"], sw["auto"], ratio))
        print("- the model's first choice (`auto` without a tune file): %.3fx the best" % sw["model_ratio"])
        print()
        sweeps.append((fam, rows_t, sw))
    return sweeps


def smoke_check(a, rows, sweeps):
    """What --smoke asserts: every step printed what this script reads, with sane values."""
    bad = []

    def pos(x):
        return isinstance(x, (int, float)) and math.isfinite(x) and x > 0

    if len(rows) < 6 + 4:  # six gemm configurations, SymmSquareCube Algorithms 3-6
        bad.append("%d predicted-vs-measured rows, expected at least 10" % len(rows))
    algos = {label.split()[0] for label, *_ in rows}
    for want in ("summa", "hsumma", "cannon", "3d", "2.5d", "alg3", "alg4", "alg5", "alg6"):
        if want not in algos:
            bad.append("no row for %s" % want)
    for label, nn, np_, p, tmed, tmin in rows:
        if p.get(ovlrecords.ALGO_KEY) != label.split()[0]:  # the model's record names the algorithm by the knob's key
            bad.append("%s: the model's record says %s=%r" % (label, ovlrecords.ALGO_KEY, p.get(ovlrecords.ALGO_KEY)))
        # latency and bandwidth may be 0 alone: a collective of a few bytes is all latency (its share is
        # capped at its time), one of many lanes all bandwidth; never both, never negative
        nonneg = all(isinstance(p.get(k), (int, float)) and math.isfinite(p[k]) and p[k] >= 0 for k in ("latency", "bandwidth"))
        if not all(pos(p.get(k)) for k in ("total", "compute")) or not nonneg or not (p["latency"] + p["bandwidth"] > 0):
            bad.append("%s: prediction %s" % (label, {k: p.get(k) for k in ("total", "latency", "bandwidth", "compute")}))
        if not (pos(tmed) and pos(tmin) and tmin <= tmed):
            bad.append("%s: measured min %r, median %r" % (label, tmin, tmed))
    if [f for f, _, _ in sweeps] != a.families.split(","):
        bad.append("sweeps of %s, expected %s" % ([f for f, _, _ in sweeps], a.families))
    for fam, cands, sw in sweeps:
        if not cands or sw["configurations"] != len(cands):
            bad.append("%s: %d candidates printed, the sweep counts %r" % (fam, len(cands), sw["configurations"]))
        if sw["best"] not in [x["config"] for x in cands]:
            bad.append("%s: the best %r is not a candidate" % (fam, sw["best"]))
        for key in ("model_ratio", "auto_ratio"):  # against the best of the same sweep: >= 1
            if not (isinstance(sw[key], (int, float)) and sw[key] >= 1.0 - 1e-12):
                bad.append("%s: %s = %r" % (fam, key, sw[key]))
    for b in bad:
        print("validate_models --smoke: FAIL: %s" % b)
    if bad:
        sys.exit(1)
    print("validate_models --smoke: PASS (%d configurations predicted and measured, %d sweeps)" % (len(rows), len(sweeps)))


if __name__ == "__main__":
    main()
