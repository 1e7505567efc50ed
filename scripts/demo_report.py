#!/usr/bin/env python3
"""The tables, headlines and picture of `make demo` (scripts/demo.sh) from its raw results.

usage: demo_report.py ssc --shm FILE --shm-setting TEXT [--sim FILE --sim-setting TEXT]
       demo_report.py eig --eig FILE --setting TEXT --threads K --methods LIST
       demo_report.py plot -o PNG [--shm FILE --shm-setting TEXT] [--sim FILE --sim-setting TEXT]
                               [--eig FILE --setting TEXT]
Inputs: --shm the JSON records of `ovl bench ssc --json` (shared memory, one launch, rounds
interleaved); --sim the text of smpi/ssc_sim on the simulated cluster (one line per algorithm and
N_DUP: alg ndup n grid ranks t ...); --eig the JSON records of bench/peers/eig_peer --json
(pdsyevd, ELPA and the purifications, interleaved in one launch). The picture is written through
tools/ovlfiles.py (the safe writer); without matplotlib `plot` says so and exits 3.
Every number printed names its setting; ratios are of medians measured in the same launch (or, for
the simulation, of deterministic simulated times).
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tools"))
import ovlfiles  # noqa: E402  (tools/ovlfiles.py: the safe writer)
import ovlrecords  # noqa: E402  (tools/ovlrecords.py: the reader of ovl's JSON records)

SSC_CONFIGS = (("alg4", 1, "Alg. 4"), ("alg5", 1, "Alg. 5 N_DUP 1"), ("alg5", 4, "Alg. 5 N_DUP 4"))
WHY_SHM = ("in shared memory a message is a copy made\n"
           "  by the cores that also multiply, so there is no idle link for Alg. 5's N_DUP lanes to fill; what Alg. 5\n"
           "  gains or loses there is how the ranks share the cores (on a busy machine the medians move by tens of percent).")
WHY_ONE_RANK = "on one rank there is no communication at all: Algorithms 4 and 5 do the same products and differ by noise."
WHY_SIM = ("On the simulated cluster one message stream gets at most 9.3 of a node's 12 GB/s and a reduction's sums\n"
           "  take its rank's time, so the lanes overlap transfers with each other and with the sums: the paper's effect\n"
           "  (its Table I: 1.17-1.21x; docs/lab/smpi-reproductions.md, \"The reductions' arithmetic\").")


def fail(msg):
    sys.stderr.write("demo_report: %s\n" % msg)
    sys.exit(1)


def read_shm(path):
    """{(algo, ndup): (t_min, t_median)} of `ovl bench ssc --json` (alg4 has no lanes: ndup 1); "ranks": its ranks."""
    out = {}
    for r in ovlrecords.read_file(path, require=True):
        if r.get("type") != "ssc":
            continue
        if r.get("check") != "PASS":
            fail("%s: %s N_DUP %s did not pass its check" % (path, r.get("algo"), r.get("ndup")))
        out[(r["algo"], 1 if r["algo"] == "alg4" else int(r["ndup"]))] = (float(r["t_min"]), float(r["t_median"]))
        out["ranks"] = int(r["ranks"])
    return out


def read_sim(path):
    """{(algo, ndup): (t, t)} of smpi/ssc_sim's result lines (simulated time: one deterministic run)."""
    out = {}
    with open(path) as f:
        for line in f:
            w = line.split()
            if len(w) >= 10 and w[0] in ("alg4", "alg5") and not line.startswith("#"):
                out[(w[0], int(w[1]))] = (float(w[5]), float(w[5]))
    if not out:
        fail("%s: no ssc_sim result lines" % path)
    return out


def ssc_rows(res, where):
    missing = [label for a, d, label in SSC_CONFIGS if (a, d) not in res]
    if missing:
        fail("%s: no result for %s" % (where, ", ".join(missing)))
    return [(label, res[(a, d)][0], res[(a, d)][1], res[("alg4", 1)][1] / res[(a, d)][1]) for a, d, label in SSC_CONFIGS]


def cmd_ssc(args):
    sets = [("shared memory", read_shm(args.shm), args.shm_setting)]
    if args.sim:
        sets.append(("simulated", read_sim(args.sim), args.sim_setting))
    print("%-15s %-15s %12s %12s %16s" % ("setting", "algorithm", "t_min (s)", "t_med (s)", "Alg. 4 / this"))
    for name, res, _ in sets:
        for label, tmin, tmed, ratio in ssc_rows(res, name):
            print("%-15s %-15s %12.4e %12.4e %15.2fx" % (name, label, tmin, tmed, ratio))
    print()
    for name, res, setting in sets:
        r = ssc_rows(res, name)
        print("Alg. 5 N_DUP 4 / Alg. 4 = %.2fx  (N_DUP 1: %.2fx)  %s" % (r[2][3], r[1][3], setting))
    if args.sim:
        print("Why the two settings differ: %s\n  %s" % (WHY_ONE_RANK if sets[0][1].get("ranks") == 1 else WHY_SHM, WHY_SIM))


def read_eig(path):
    recs = [r for r in ovlrecords.read_file(path, require=True) if r.get("bench") == "eig_peer"]
    eig = [r for r in recs if r.get("method") == "pdsyevd"]
    if not eig:
        fail("%s: no pdsyevd record" % path)
    return eig[0], [r for r in recs if r.get("method") in ("elpa", "elpa2")], [r for r in recs if r.get("method") == "purify"]


def energy_error(p, e0):
    """|tr(D F) - E_pdsyevd| as text: eig_peer prints energies to 1e-10 Hartree."""
    de = abs(float(p["energy"]) - e0)
    return "< 1e-10" if de < 5e-11 else "%.1e" % de


def cmd_eig(args):
    eig, elpa, pur = read_eig(args.eig)
    want = [m for m in args.methods.split(",") if m]
    got = {(p["purify"], p["precision"]) for p in pur}
    lost = [m for m in want if (m, "double") not in got or (m, "mixed") not in got]
    if lost:
        fail("%s: no float64 or mixed result for %s" % (args.eig, ", ".join(lost)))
    threads = {int(p["blas_threads"]) for p in pur}
    if threads != {args.threads}:
        fail("%s: the eig_peer process ran %s BLAS threads, not %d" % (args.eig, sorted(threads), args.threads))
    e0 = float(eig["energy"])
    print("%-22s %6s %11s %11s %15s %13s %13s" % ("method", "iter.", "t_min (s)", "t_med (s)", "pdsyevd / this",
                                                 "energy error", "density error"))
    print("%-22s %6s %11.4e %11.4e %14.2fx %13s %13.1e" % ("pdsyevd + pdgemm", "-", eig["t_min"], eig["t_median"], 1.0,
                                                           "(reference)", eig["relerr"]))
    for r in elpa:
        print("%-22s %6s %11.4e %11.4e %14.2fx %13s %13.1e" % ("ELPA 2-stage + pdgemm", "-", r["t_min"], r["t_median"],
                                                               eig["t_median"] / r["t_median"], "-", r["relerr"]))
    best = None
    for p in pur:
        ratio = eig["t_median"] / p["t_median"]
        de = energy_error(p, e0)
        prec = "float64" if p["precision"] == "double" else "mixed"
        print("%-22s %6d %11.4e %11.4e %14.2fx %13s %13.1e" % ("%s %s" % (p["purify"].upper(), prec), p["iterations"],
                                                                 p["t_min"], p["t_median"], ratio, de, p["relerr"]))
        if p["precision"] == "double" and (best is None or ratio > best[1]):
            best = (p["purify"].upper(), ratio)
    print("(energy error: |tr(D F) - the sum of pdsyevd's occupied eigenvalues|, Hartree, as printed to 1e-10;\n"
          " density error: ||D - D_ref||_F / ||D_ref||_F, D_ref the reference density %s)" %
          ("beside the Fock file (PySCF's eigensolver)" if eig.get("against") == "dref" else "of the first method"))
    print()
    print("pdsyevd / %s (float64) = %.2fx  %s: %s" % (best[0], best[1], args.setting,
                                                    "purification faster in this launch" if best[1] > 1
                                                    else "the eigensolver faster, as docs/lab/peers.md finds on this machine"))


def plot(args):
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("picture: skipped (matplotlib is missing: apt-get install python3-matplotlib, which scripts/deps.sh "
              "installs)")
        sys.exit(3)
    panels = []
    if args.shm:
        panels.append("ssc")
    if args.eig:
        panels.append("eig")
    if not panels:
        fail("plot: nothing to draw")
    fig, axes = plt.subplots(1, len(panels), figsize=(6.0 * len(panels), 4.6), squeeze=False)
    caption = []
    k = 0
    if args.shm:
        ax = axes[0][k]
        k += 1
        sets = [("shared memory", ssc_rows(read_shm(args.shm), "shared memory"), args.shm_setting)]
        if args.sim:
            sets.append(("simulated", ssc_rows(read_sim(args.sim), "simulated"), args.sim_setting))
        width = 0.8 / len(sets)
        for i, (name, rows, _) in enumerate(sets):
            xs = [j + (i - (len(sets) - 1) / 2) * width for j in range(len(rows))]
            bars = ax.bar(xs, [r[3] for r in rows], width, label={"shared memory": "shared memory (this machine)",
                                                                  "simulated": "simulated cluster (SMPI)"}[name])
            for b, r in zip(bars, rows):
                ax.annotate("%.2f" % r[3], (b.get_x() + b.get_width() / 2, b.get_height()), ha="center",
                            va="bottom", fontsize=8)
        ax.axhline(1.0, color="k", lw=0.8)
        ax.set_xticks(range(len(SSC_CONFIGS)))
        ax.set_xticklabels([c[2] for c in SSC_CONFIGS])
        ax.set_ylabel("speed relative to Alg. 4 (Alg. 4 time / time)")
        ax.set_title("SymmSquareCube: Alg. 5 against Alg. 4", fontsize=10)
        ax.legend(fontsize=8, loc="lower right")
        caption += ["left, %s: %s" % (n, s) for n, _, s in sets]
    if args.eig:
        ax = axes[0][k]
        eig, elpa, pur = read_eig(args.eig)
        names = ["pdsyevd"] + ["ELPA"] * len(elpa) + ["%s %s" % (p["purify"].upper(), "float64" if p["precision"] ==
                                                                  "double" else "mixed") for p in pur]
        recs = [eig] + elpa + pur
        bars = ax.bar(range(len(recs)), [r["t_median"] for r in recs],
                      color=["tab:gray"] * (1 + len(elpa)) + ["tab:green"] * len(pur))
        ax.plot(range(len(recs)), [r["t_min"] for r in recs], "k_", ms=14, label="min")
        for b, r in zip(bars[1 + len(elpa):], pur):
            ax.annotate("dE %s" % energy_error(r, float(eig["energy"])),
                        (b.get_x() + b.get_width() / 2, b.get_height()), ha="center", va="bottom", fontsize=7)
        ax.set_xticks(range(len(recs)))
        ax.set_xticklabels(names, fontsize=8)
        ax.set_ylabel("time (s), median (bar) and min")
        ax.set_title("Density matrix: purification against the eigensolvers", fontsize=10)
        ax.legend(fontsize=8)
        caption.append("right: %s; dE: energy error (Hartree) against pdsyevd" % args.setting)
    fig.text(0.01, 0.01, "\n".join(caption), fontsize=7, va="bottom", ha="left", wrap=True)
    fig.tight_layout(rect=(0, 0.04 + 0.035 * len(caption), 1, 1))
    try:  # all or nothing, never through a planted symlink or FIFO (tools/ovlfiles.py)
        ovlfiles.write_atomic(args.output, lambda f: fig.savefig(f, dpi=100, format="png"), "picture")
    except ovlfiles.WriteError as e:
        fail(str(e))
    print("picture: %s" % args.output)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("cmd", choices=["ssc", "eig", "plot"])
    ap.add_argument("--shm")
    ap.add_argument("--shm-setting", default="")
    ap.add_argument("--sim")
    ap.add_argument("--sim-setting", default="")
    ap.add_argument("--eig")
    ap.add_argument("--setting", default="")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--methods", default="")
    ap.add_argument("-o", "--output")
    args = ap.parse_args()
    try:
        if args.cmd == "ssc":
            if not args.shm:
                fail("ssc needs --shm")
            cmd_ssc(args)
        elif args.cmd == "eig":
            if not args.eig:
                fail("eig needs --eig")
            cmd_eig(args)
        else:
            if not args.output:
                fail("plot needs -o PNG")
            plot(args)
    except (ovlrecords.RecordError, OSError, KeyError, ValueError) as e:
        fail(str(e))


if __name__ == "__main__":
    main()
