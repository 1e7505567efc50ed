#!/usr/bin/env python3
"""Tables of cluster/reproduce.sh's runs: reads OUT/coll_*.jsonl and OUT/ssc.jsonl
(one JSON object per line, tagged with "run"), prints markdown tables, and writes
OUT/summary.json, OUT/coll_<op>_<backend>_median.jsonl (the shape of `ovl bench
coll --json`, medians over runs, for tools/ovl-plot bw) and OUT/ssc_summary.jsonl (and _alg5.jsonl: the Alg. 5 rows).

usage: summarize.py OUT
"""
import glob
import json
import os
import statistics
import sys
from collections import defaultdict

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tools"))
import ovlrecords  # noqa: E402  (tools/ovlrecords.py: the schema and reader of ovl's records)

CASES = ("blocking", "ndup_overlap", "ppn_overlap")


def lines(path):
    """The records of a JSON-lines file (ovlrecords: "type" set, None for what was not measured)."""
    try:
        return ovlrecords.read_file(path)
    except ovlrecords.RecordError as e:
        sys.exit("summarize: %s" % e)


def size(b):
    return f"{b // (1 << 20)} MiB" if b >= 1 << 20 else f"{b // 1024} KiB"


def platform(out, name):
    p = os.path.join(out, name)
    return lines(p)[0] if os.path.exists(p) else {}


def coll(out, summary):
    files = sorted(f for f in glob.glob(os.path.join(out, "coll_*.jsonl")) if not f.endswith("_median.jsonl"))
    if not files:
        return
    plat = platform(out, "coll_platform.json")
    print(f"## Collectives: blocking vs N_DUP lanes vs multiple PPN\n\nplatform: {plat.get('platform', '?')}\n")
    for path in files:
        rows = lines(path)
        if not rows:
            continue
        r0 = rows[0]
        runs = sorted({r["run"] for r in rows})
        alg = r0.get("alg", "auto")
        print(f"### {r0['op']}, backend {r0['backend']} ({alg}), {r0['ranks']} ranks = {r0['ranks'] // r0['ppn']} nodes "
              f"x {r0['ppn']} PPN, p = {r0['p']}, N_DUP = {r0['ndup']}, {len(runs)} runs x {r0['iterations']} repetitions\n")
        print("| n | blocking MB/s | N_DUP MB/s | PPN MB/s | N_DUP / blocking | PPN / blocking |")
        print("| --- | --- | --- | --- | --- | --- |")
        by = defaultdict(list)
        for r in rows:
            by[r["bytes"]].append(r)
        med_lines, table = [], []
        for b in sorted(by):
            rs = by[b]
            bw = {c: [r[c]["bw_MBps"] for r in rs] for c in CASES}
            best = {c: max(r[c]["bw_MBps"] * r[c]["t_median"] / r[c]["t_min"] for r in rs) for c in CASES}
            ratio = {c: [r[c]["bw_MBps"] / r["blocking"]["bw_MBps"] for r in rs] for c in CASES[1:]}
            cell = lambda c: f"{statistics.median(bw[c]):.1f} ({best[c]:.1f})"
            rat = lambda c: (f"{statistics.median(ratio[c]):.2f} [{min(ratio[c]):.2f}-{max(ratio[c]):.2f}]")
            print(f"| {size(b)} | {cell('blocking')} | {cell('ndup_overlap')} | {cell('ppn_overlap')} | "
                  f"{rat('ndup_overlap')} | {rat('ppn_overlap')} |")
            m = dict(rs[0])
            m.pop("run", None)
            m.pop("part", None)
            for c in CASES:
                m[c] = {"t_min": min(r[c]["t_min"] for r in rs),
                        "t_median": statistics.median(r[c]["t_median"] for r in rs),
                        "t_max": max(r[c]["t_max"] for r in rs),
                        "bw_MBps": statistics.median(bw[c])}
            med_lines.append(m)
            table.append({"bytes": b, "runs": len(rs),
                          **{f"{c}_bw_median": statistics.median(bw[c]) for c in CASES},
                          **{f"{c}_bw_best": best[c] for c in CASES},
                          **{f"{c}_over_blocking_median": statistics.median(ratio[c]) for c in CASES[1:]}})
        print("\nMB/s: effective bandwidth 2(p-1)n/p / t, median over runs of each run's median "
              "(in parentheses: the best, from the fastest repetition of any run); ratios: per run, "
              "median [min-max] over runs.\n")
        base = os.path.basename(path)[:-len(".jsonl")]
        with open(os.path.join(out, base + "_median.jsonl"), "w") as f:
            for m in med_lines:
                f.write(json.dumps(m) + "\n")
        summary.setdefault("coll", {})[base] = table


def ssc(out, summary):
    path = os.path.join(out, "ssc.jsonl")
    if not os.path.exists(path):
        return
    rows = lines(path)
    if not rows:
        return
    plat = platform(out, "ssc_platform.json")
    # Alg. 4 of the same mpiexec run (run, part, n) is the reference of each Alg. 5 row
    ref = {(r["run"], r["part"], r["n"]): r["t_median"] for r in rows if r["algo"] == "alg4"}
    groups = defaultdict(list)
    for r in rows:
        if r["algo"] == "alg4" and r["part"] != "d1-5":
            continue  # the extra Alg. 4 of the N_DUP 6 runs serves as reference only
        groups[(r["n"], r["algo"], r["ndup"])].append(r)
    print(f"## SymmSquareCube: Algorithm 4 vs Algorithm 5\n\nplatform: {plat.get('platform', '?')}\n")
    res = []
    for n in sorted({k[0] for k in groups}):
        keys = sorted((k for k in groups if k[0] == n), key=lambda k: (k[1], k[2]))
        r0 = groups[keys[0]][0]
        nruns = len({r["run"] for k in keys for r in groups[k]})
        print(f"### n = {n}, {r0['ranks']} ranks, grid {r0['grid']}, backend {r0['backend']}, "
              f"{nruns} runs x {r0['iterations']} rounds\n")
        print("| algo | N_DUP | t_min (s) | t_median (s) | comm share | GFLOP/s | speedup over Alg. 4 |")
        print("| --- | --- | --- | --- | --- | --- | --- |")
        for k in keys:
            rs = groups[k]
            tmin = min(r["t_min"] for r in rs)
            tmed = statistics.median(r["t_median"] for r in rs)
            comm = statistics.median(r["t_comm_median"] / r["t_median"] for r in rs)
            sp = [ref[(r["run"], r["part"], n)] / r["t_median"] for r in rs if (r["run"], r["part"], n) in ref]
            spm = statistics.median(sp) if sp else float("nan")
            spr = f" [{min(sp):.2f}-{max(sp):.2f}]" if sp and k[1] != "alg4" else ""
            label = "**" if k[1] == "alg5" and spm >= 1.15 else ""
            print(f"| {k[1]} | {k[2]} | {tmin:.4f} | {tmed:.4f} | {comm:.0%} | {4 * n**3 / tmed * 1e-9:.2f} | "
                  f"{label}{spm:.2f}{label}{spr} |")
            res.append({"n": n, "algo": k[1], "ndup": k[2], "runs": len(rs), "t_min": tmin, "t_median": tmed,
                        "comm_share_median": comm, "gflops_median": 4 * n**3 / tmed * 1e-9,
                        "speedup_median": spm, "speedup_min": min(sp) if sp else None,
                        "speedup_max": max(sp) if sp else None})
        print()
    print("t_min: fastest round of any run; t_median: median over runs of each run's median round; "
          "comm share: time in communication phases / total (median); speedup: Alg. 4's median / this "
          "median within the same mpiexec run, median [min-max] over runs (N_DUP 6 runs separately, "
          "with an Alg. 4 of its own).\n")
    with open(os.path.join(out, "ssc_summary.jsonl"), "w") as f, \
         open(os.path.join(out, "ssc_summary_alg5.jsonl"), "w") as f5:
        for r in res:
            f.write(json.dumps(r) + "\n")
            if r["algo"] == "alg5":
                f5.write(json.dumps(r) + "\n")
    summary["ssc"] = res


def main():
    out = sys.argv[1]
    summary = {"coll_platform": platform(out, "coll_platform.json"), "ssc_platform": platform(out, "ssc_platform.json")}
    coll(out, summary)
    ssc(out, summary)
    with open(os.path.join(out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1)


if __name__ == "__main__":
    main()
