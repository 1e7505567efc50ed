#!/usr/bin/env bash
# Purification (ovl) against the eigensolver routes of bench/peers/eig_peer
# (pdsyevd for all pairs; pdsyevr, pdsyevx, ELPA 1- and 2-stage for the n_occ
# lowest; one-rank LAPACK dsyevr; each + the density C_occ C_occ^T) on the same
# matrices, in one launch per (setting, matrix): every round runs every route
# and every purification once, time = MAX over ranks, min and median over the
# rounds, ratios eigensolver / purification of the same launch.
#
# usage: bench/purify_vs_eig.sh [--stress] [BUILD_DIR]
#   settings (the node's 2 cores used two ways; the setting is named on every row):
#     1x2  1 rank x 2 BLAS threads (OPENBLAS_NUM_THREADS=2; eig_peer runs dsyevr here too)
#     2x1  2 ranks x 1 BLAS thread
#     8x1  with --stress only: 8 ranks x 1 thread on the 2 cores, labelled "stress" (it
#          measures the scheduler as much as the solvers; never a headline)
#   env: CASES="c10h22_631g h2o8_ccpvdz c40h42_sto3g h2o24_ccpvdz" (a name in data/ or data/big/, or a path to fock.raw)
#        SETTINGS="1x2 2x1" (RxT: R ranks x T BLAS threads; NPS="1 8" means SETTINGS="1x1 8x1")  REPS=5  WARMUP=1
#        EIG=all (eig_peer --eig)  PURIFY=all (eig_peer --purify: every method x precision ovl offers)
#        THREADCHECK=1 (first: the eigensolvers on 1 rank with 1 and with 2 threads, to show the 2 threads work)
#        OUT=DIR  (keeps results.jsonl, threads.txt, table.md and ratio.png there; default: a temporary directory)
#        APPEND=1 (add to OUT/results.jsonl instead of starting it anew: one table over several calls)
# Prints markdown tables; with matplotlib, OUT/ratio.png plots the fastest eigensolver's time / the
# fastest float64 purification's time against n, per setting.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$here/..
stress=0
if [ "${1:-}" = --stress ]; then stress=1; shift; fi
build=${1:-$root/build}
CASES=${CASES:-"c10h22_631g h2o8_ccpvdz c40h42_sto3g h2o24_ccpvdz"}
SETTINGS=${SETTINGS:-"1x2 2x1"}
if [ -n "${NPS:-}" ]; then SETTINGS=$(for np in $NPS; do printf '%sx1 ' "$np"; done); fi # the older NPS="1 8": 1 thread each
[ "$stress" = 1 ] && SETTINGS="$SETTINGS 8x1"
REPS=${REPS:-5}
WARMUP=${WARMUP:-1}
EIG=${EIG:-all}
PURIFY=${PURIFY:-all}
exe=$build/bench/eig_peer
[ -x "$exe" ] || { echo "purify_vs_eig: $exe not built (needs ScaLAPACK)" >&2; exit 2; }
if [ -n "${OUT:-}" ]; then mkdir -p "$OUT"; out=$OUT; else out=$(mktemp -d); trap 'rm -rf "$out"' EXIT; fi
[ -n "${APPEND:-}" ] || { : >"$out/results.jsonl"; : >"$out/threads.txt"; }
PY=python3; [ -x /usr/bin/python3 ] && PY=/usr/bin/python3
cores=$(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc)
fock_of() {
  if [ -f "$1" ]; then echo "$1"
  elif [ -f "$root/data/$1/fock.raw" ]; then echo "$root/data/$1/fock.raw"
  elif [ -f "$root/data/big/$1/fock.raw" ]; then echo "$root/data/big/$1/fock.raw"
  else echo "purify_vs_eig: no case '$1' (data/$1 or data/big/$1; make the big ones with tools/make-cases)" >&2; return 2; fi
}
label() { # RxT -> the setting's name
  local r=${1%x*} t=${1#*x} s
  s="$r rank"; [ "$r" -gt 1 ] && s="${s}s"
  s="$s x $t thread"; [ "$t" -gt 1 ] && s="${s}s"
  [ $((r * t)) -gt "$cores" ] && s="$s (stress: $((r * t)) on $cores cores)"
  echo "$s"
}
run_eig() { # RxT FOCK ARGS...: eig_peer on R ranks with T BLAS threads each
  local r=${1%x*} t=${1#*x} f=$2
  shift 2
  OPENBLAS_NUM_THREADS=$t OMP_NUM_THREADS=$t "$root/scripts/mpirun.sh" "$r" "$exe" --fock "$f" "$@"
}
echo "# purify_vs_eig: settings $SETTINGS on $cores cores; $WARMUP warm-up + $REPS timed rounds;" \
  "load average at start: $(cut -d' ' -f1-3 /proc/loadavg); $(date -u '+%Y-%m-%d %H:%M UTC')" >&2

if [ "${THREADCHECK:-1}" = 1 ] && [ -z "${APPEND:-}" ]; then
  # the same eigensolvers on 1 rank with 1 and 2 BLAS threads: the second must be faster
  set -- $CASES
  f=$(fock_of "${!#}")
  for t in 1 2; do
    run_eig "1x$t" "$f" -i "$REPS" -x "$WARMUP" --eig "$EIG" --purify none --json | grep '^{' |
      sed "s|^{|{\"threads_check\":$t,|" >>"$out/threads.txt"
  done
  "$PY" - "$out/threads.txt" "$(basename "$(dirname "$f")")" <<'PY' | tee -a "$out/threads.md"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
t = {(r["threads_check"], r["method"]): r for r in rows}
print("# thread check, %s on 1 rank: median seconds with 1 / 2 BLAS threads (speed-up)" % sys.argv[2])
for m in sorted({k[1] for k in t}, key=lambda m: t[(1, m)]["t_median"]):
    a, b = t[(1, m)], t[(2, m)]
    print("#   %-8s %.4f / %.4f (%.2fx; eig_peer saw %d and %d threads)" % (
        m, a["t_median"], b["t_median"], a["t_median"] / b["t_median"], a["blas_threads"], b["blas_threads"]))
PY
fi

for s in $SETTINGS; do
  for c in $CASES; do
    f=$(fock_of "$c")
    echo "# $c, $(label "$s")" >&2
    run_eig "$s" "$f" -i "$REPS" -x "$WARMUP" --eig "$EIG" --purify "$PURIFY" --json | grep '^{' |
      sed "s|^{|{\"case\":\"$(basename "$(dirname "$f")")\",\"setting\":\"$(label "$s")\",|" >>"$out/results.jsonl"
  done
done
echo "# load average at end: $(cut -d' ' -f1-3 /proc/loadavg)" >&2

"$PY" - "$out" <<'PY'
import json, sys, os
out = sys.argv[1]
rows = [json.loads(l) for l in open(os.path.join(out, "results.jsonl"))]
order = ["pdsyevd", "pdsyevr", "pdsyevx", "elpa1", "elpa2", "dsyevr"]
runs = {}
for r in rows:
    key = (r["setting"], r["n"], r["case"])
    if r["method"] == "purify":
        name = r["purify"] + ":" + r["precision"] + ("@%d" % r["ppn"] if r.get("ppn") else "")
        if r.get("sparse") is not None:  # the block-sparse route at threshold EPS
            name += " block-sparse %g" % r["sparse"]
        runs.setdefault(key, {"eig": {}, "pur": {}})["pur"][name] = r
    else:
        runs.setdefault(key, {"eig": {}, "pur": {}})["eig"][r["method"]] = r
routes = [m for m in order if any(m in v["eig"] for v in runs.values())]
ms = lambda r: "%.4f (%.4f)" % (r["t_median"], r["t_min"])
# 1: the eigensolver routes
t1 = ["| setting | case | n | n_occ | route | pairs | median (min) s | solve alone, median s | error vs reference | tr D - n_occ |",
      "|---|---|---:|---:|---|---:|---:|---:|---:|---:|"]
for (st, n, case), v in sorted(runs.items()):
    for m in order:
        if m in v["eig"]:
            e = v["eig"][m]
            name = m + (" (%s)" % e["kernel"].lower() if m == "elpa2" else "")
            t1.append("| %s | %s | %d | %d | %s | %d | %s | %.4f | %.1e | %.0e |" % (
                st, case, n, e["nocc"], name, e["nev"], ms(e), e["t_solve_median"], e["relerr"], e["trace_err"]))
# 2: the purifications and the ratios eigensolver / purification of the same launch
t2 = ["| setting | case | n | purification | squares (float32) | median (min) s | error vs reference | "
      "E - E_eig (Eh) | " + " | ".join("%s / it" % m for m in routes) + " | fastest eig / it |",
      "|---|---|---:|---|---:|---:|---:|---:|" + "---:|" * (len(routes) + 1)]
best = {}
for (st, n, case), v in sorted(runs.items()):
    if not v["eig"]:
        continue
    fast = min(v["eig"].values(), key=lambda e: e["t_median"])
    for k, p in v["pur"].items():
        cells = []
        for m in routes:
            e = v["eig"].get(m)
            cells.append("%.2f (%.2f)" % (e["t_median"] / p["t_median"], e["t_min"] / p["t_min"]) if e else "-")
        r = fast["t_median"] / p["t_median"]
        de = p["energy"] - v["eig"][min(v["eig"], key=lambda m: v["eig"][m]["relerr"])]["energy"]
        t2.append("| %s | %s | %d | %s | %d (%d) | %s | %.1e | %.1e | %s | **%.2f** %s |" % (
            st, case, n, k, p["iterations"], p["iter_single"], ms(p), p["relerr"], de, " | ".join(cells), r,
            fast["method"]))
        if p["relerr"] <= 1e-8 and r > best.get((st, n), (0, ""))[0]:  # the float64-accurate ones
            best[(st, n)] = (r, k)
table = ("Eigensolver routes (each with the density C_occ C_occ^T):\n\n" + "\n".join(t1)
         + "\n\nPurifications; ratios = eigensolver time / purification time, median (min), same launch"
         " (above 1: purification faster):\n\n" + "\n".join(t2))
open(os.path.join(out, "table.md"), "w").write(table + "\n")
print(table)
try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    sys.exit(0)
fig, ax = plt.subplots(figsize=(6.4, 4.2))
for st in sorted({k[0] for k in best}):
    pts = sorted((n, v[0]) for (s, n), v in best.items() if s == st)
    ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", label=st)
ax.axhline(1.0, color="k", lw=0.8)
ax.set_xscale("log"); ax.set_yscale("log")
ax.set_xlabel("n"); ax.set_ylabel("fastest eigensolver time / purification time")
ax.set_title("best float64 purification vs the fastest eigensolver route")
ax.legend(fontsize=7)
fig.tight_layout()
fig.savefig(os.path.join(out, "ratio.png"), dpi=110)
PY
