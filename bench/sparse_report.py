#!/usr/bin/env python3
"""Tables, slopes and the plot of bench/sparse_bench.sh's runs (docs/guides/sparse.md, "Benchmarks").

  sparse_report.py DIR [DIR...] [--plot PNG] [--min-n 4000] [--eps E]

Reads DIR/runs.jsonl. Per tool (ovl, ntpoly, eig), case and rank count: the minimum and the
median of t_solve over the repetitions (ovl: S^(-1/2), Z H Z, the purification and Z D Z,
from H and S in memory, the record's t_solve; NTPoly: the driver's t_total, its inverse square
root and purification; eig: dsygvx for the n_occ lowest pairs and D = C C^T), ovl's peak
resident memory per rank, and the energy error per atom against the eigensolver's tr(D H)
(NTPoly's energy is 2 tr(K H): halved). Ratios are of medians in the same DIR (the runs were
interleaved). Slopes: least squares of log(median t_solve) and log(peak memory) against
log(n) over the cases of one system (the name before the dash) with n >= --min-n.
--eps E keeps the ovl and NTPoly runs at threshold E (the eigensolver's are the reference of
every threshold; ovl's dense purification, bench/sparse_dense.py's tool "dense", has none):
DIRs of several thresholds, e.g. the eigensolver run once beside one of them.
"""
import argparse
import json
import math
import os
import statistics
from collections import defaultdict


def load(dirs):
    runs = []
    for d in dirs:
        with open(os.path.join(d, "runs.jsonl")) as f:
            for line in f:
                line = line.strip()
                if line:
                    runs.append(json.loads(line))
    return runs


def t_solve(r):
    rec = r["rec"]
    if r["tool"] == "ovl":
        return float(rec["t_solve"])
    return float(rec["t_total"])


def energy(r):
    rec = r["rec"]
    e = float(rec["energy"])
    return e / 2.0 if r["tool"] == "ntpoly" else e


def slope(xs, ys):
    lx = [math.log(x) for x in xs]
    ly = [math.log(y) for y in ys]
    mx, my = sum(lx) / len(lx), sum(ly) / len(ly)
    sxx = sum((a - mx) ** 2 for a in lx)
    return sum((a - mx) * (b - my) for a, b in zip(lx, ly)) / sxx if sxx > 0 else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dirs", nargs="+")
    ap.add_argument("--plot", default=None)
    ap.add_argument("--min-n", type=int, default=4000)
    ap.add_argument("--eps", type=float, default=None)
    a = ap.parse_args()
    runs = [r for r in load(a.dirs) if a.eps is None or r["tool"] in ("eig", "dense") or float(r["eps"]) == a.eps]
    g = defaultdict(list)
    meta = {}
    for r in runs:
        g[(r["tool"], r["case"], r["np"])].append(r)
        meta[r["case"]] = (r["n"], r["atoms"])
    eref = {c: statistics.median(energy(r) for r in g[("eig", c, 1)]) for (t, c, p) in g if t == "eig"}
    cases = sorted(meta, key=lambda c: (c.split("-")[0], meta[c][0]))
    eps = sorted({r["eps"] for r in runs if r["tool"] == "ovl"})
    print(f"# sparse_report: {len(runs)} runs from {', '.join(a.dirs)}; threshold {eps}")
    print("| case | n | atoms | tool | ranks | runs | t_solve min | median | memory/rank | E error/atom (Eh) | "
          "eig / ovl | NTPoly / ovl |")
    print("|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    med = {}
    for (t, c, p), rs in g.items():
        med[(t, c, p)] = statistics.median(t_solve(r) for r in rs)
    for c in cases:
        n, atoms = meta[c]
        for t in ("ovl", "ntpoly", "dense", "eig"):
            for p in sorted({k[2] for k in g if k[0] == t and k[1] == c}):
                rs = g[(t, c, p)]
                ts = [t_solve(r) for r in rs]
                mem = "" if t != "ovl" else "%.0f MiB" % (max(r["rec"].get("rss_peak", 0) for r in rs) / 2 ** 20)
                err = ""
                if c in eref:
                    err = "%.1e" % (abs(statistics.median(energy(r) for r in rs) - eref[c]) / atoms)
                r_eig = r_ntp = ""
                if t == "ovl":
                    if ("eig", c, 1) in med:
                        r_eig = "%.1fx" % (med[("eig", c, 1)] / med[(t, c, p)])
                    if ("ntpoly", c, p) in med:
                        r_ntp = "%.2fx" % (med[("ntpoly", c, p)] / med[(t, c, p)])
                print(f"| {c} | {n} | {atoms} | {t} | {p} | {len(rs)} | {min(ts):.3f} | {statistics.median(ts):.3f} | "
                      f"{mem} | {err} | {r_eig} | {r_ntp} |")
    print()
    print("| system | tool | ranks | cases (n) | time slope | memory slope |")
    print("|---|---|---:|---|---:|---:|")
    systems = sorted({c.split("-")[0] for c in cases})
    for s in systems:
        for t in ("ovl", "ntpoly"):
            for p in sorted({k[2] for k in g if k[0] == t}):
                cs = [c for c in cases if c.split("-")[0] == s and meta[c][0] >= a.min_n and (t, c, p) in med]
                if len(cs) < 2:
                    continue
                ns = [meta[c][0] for c in cs]
                st = slope(ns, [med[(t, c, p)] for c in cs])
                sm = ""
                if t == "ovl":
                    sm = "%.2f" % slope(ns, [max(r["rec"]["rss_peak"] for r in g[(t, c, p)]) for c in cs])
                print(f"| {s} | {t} | {p} | {', '.join(str(x) for x in ns)} | {st:.2f} | {sm} |")
    if a.plot:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(1, 2, figsize=(11, 4.2))
        marks = {"ovl": "o-", "ntpoly": "s--", "eig": "^:"}
        for s in systems:
            for (t, p) in sorted({(k[0], k[2]) for k in g}):
                cs = [c for c in cases if c.split("-")[0] == s and (t, c, p) in med]
                if not cs:
                    continue
                ns = [meta[c][0] for c in cs]
                lab = f"{s} {t} ({p} rank{'s' if p > 1 else ''}{', 2 threads' if t == 'eig' else ''})"
                ax[0].loglog(ns, [med[(t, c, p)] for c in cs], marks[t], label=lab)
                if t == "ovl":
                    ax[1].loglog(ns, [max(r["rec"]["rss_peak"] for r in g[(t, c, p)]) / 2 ** 20 for c in cs],
                                 marks[t], label=lab)
        ax[0].set_xlabel("n (orbitals)")
        ax[0].set_ylabel("t_solve median (s)")
        ax[0].set_title(f"H, S -> D at threshold {', '.join(str(e) for e in eps)}")
        ax[1].set_xlabel("n (orbitals)")
        ax[1].set_ylabel("ovl peak memory per rank (MiB)")
        for x in ax:
            x.grid(True, which="both", alpha=0.3)
            x.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(a.plot, dpi=110)
        print(f"\nplot: {a.plot}")


if __name__ == "__main__":
    main()
