#!/usr/bin/env bash
# Purification (ovl) against eigendecomposition (ScaLAPACK pdsyevd and ELPA's
# 2-stage solver, each + the density Z_occ Z_occ^T with pdgemm) on the same
# matrices and ranks, with bench/peers' eig_peer: one launch per (matrix, rank
# count), every method interleaved, time = MAX over ranks, median of REPS.
#
# usage: bench/purify_vs_eig.sh [BUILD_DIR]
#   env: NPS="1 2 4 8"  CASES="h2o24_ccpvdz c143h288_sto3g ..." (a name in data/ or data/big/, or a path to fock.raw)
#        REPS=3  WARMUP=1  PURIFY="canonical,sp2,trs4,sp2:mixed,trs4:mixed"  (METHOD[:PRECISION][@K]: @K on K
#        ranks per node with the node's cores as their BLAS threads, the others asleep)
#        OUT=DIR  (keeps results.jsonl, table.md and ratio.png there; default: a temporary directory)
#        APPEND=1 (add to OUT/results.jsonl instead of starting it anew: one table over several calls)
# Prints a markdown table; with matplotlib, OUT/ratio.png plots eigensolver time / purification time against n.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$here/..
build=${1:-$root/build}
NPS=${NPS:-"1 2 4 8"}
CASES=${CASES:-"c10h22_631g h2o8_ccpvdz h2o24_ccpvdz"}
REPS=${REPS:-3}
WARMUP=${WARMUP:-1}
PURIFY=${PURIFY:-"canonical,sp2,trs4,sp2:mixed,trs4:mixed"}
if [ -n "${OUT:-}" ]; then mkdir -p "$OUT"; out=$OUT; else out=$(mktemp -d); trap 'rm -rf "$out"' EXIT; fi
[ -n "${APPEND:-}" ] || : >"$out/results.jsonl"
PY=python3; [ -x /usr/bin/python3 ] && PY=/usr/bin/python3
for c in $CASES; do
  if [ -f "$c" ]; then f=$c
  elif [ -f "$root/data/$c/fock.raw" ]; then f=$root/data/$c/fock.raw
  elif [ -f "$root/data/big/$c/fock.raw" ]; then f=$root/data/big/$c/fock.raw
  else echo "purify_vs_eig: no case '$c' (data/$c or data/big/$c; make the big ones with tools/make-cases)" >&2; exit 2; fi
  for np in $NPS; do
    echo "# $c on $np ranks" >&2
    "$root/scripts/mpirun.sh" "$np" "$build/bench/eig_peer" --fock "$f" -i "$REPS" -x "$WARMUP" --purify "$PURIFY" --json \
      | grep '^{' | sed "s|^{|{\"case\":\"$(basename "$(dirname "$f")")\",|" >>"$out/results.jsonl"
  done
done
"$PY" - "$out" <<'PY'
import json, sys, os
out = sys.argv[1]
rows = [json.loads(l) for l in open(os.path.join(out, "results.jsonl"))]
runs = {}
for r in rows:
    key = (r["n"], r["ranks"], r["case"])
    name = r.get("purify", "") and r["purify"] + ":" + r["precision"] + ("@%d" % r["ppn"] if r.get("ppn") else "")
    runs.setdefault(key, {})[name or r["method"]] = r
lines = ["| case | n | ranks | pdsyevd (s) | ELPA (s) | purification | grid | iterations (float32) | time (s) | pdsyevd / it | ELPA / it | error vs reference |",
         "|---|---:|---:|---:|---:|---|---|---:|---:|---:|---:|---:|"]
best = {}
for (n, np_, case), m in sorted(runs.items()):
    e, l = m["pdsyevd"], m.get("elpa")
    for k, p in m.items():
        if k in ("pdsyevd", "elpa"):
            continue
        ratio_e = e["t_median"] / p["t_median"]
        ratio_l = l["t_median"] / p["t_median"] if l else float("nan")
        lines.append("| %s | %d | %d | %.4f | %s | %s | %s %s | %d (%d) | %.4f | **%.2f** | %s | %.1e |" % (
            case, n, np_, e["t_median"], "%.4f" % l["t_median"] if l else "-", k, p["grid"], p["algo"],
            p["iterations"], p["iter_single"], p["t_median"], ratio_e, "**%.2f**" % ratio_l if l else "-", p["relerr"]))
        if p["relerr"] <= 1e-8:  # the float64-accurate ones
            b = best.setdefault((np_, n), (0, 0, ""))
            if ratio_e > b[0]:
                best[(np_, n)] = (ratio_e, ratio_l, k)
table = "\n".join(lines)
open(os.path.join(out, "table.md"), "w").write(table + "\n")
print(table)
try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    sys.exit(0)
fig, ax = plt.subplots(figsize=(6.4, 4.2))
for np_ in sorted({k[0] for k in best}):
    pts = sorted((n, v) for (q, n), v in best.items() if q == np_)
    ax.plot([p[0] for p in pts], [p[1][0] for p in pts], "o-", label="pdsyevd, %d ranks" % np_)
    ax.plot([p[0] for p in pts], [p[1][1] for p in pts], "s--", label="ELPA, %d ranks" % np_)
ax.axhline(1.0, color="k", lw=0.8)
ax.set_xscale("log"); ax.set_yscale("log")
ax.set_xlabel("n"); ax.set_ylabel("eigensolver time / purification time")
ax.set_title("best float64 purification vs eigensolvers (above 1: purification faster)")
ax.legend(fontsize=7)
fig.tight_layout()
fig.savefig(os.path.join(out, "ratio.png"), dpi=110)
PY
