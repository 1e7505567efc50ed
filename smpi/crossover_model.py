#!/usr/bin/env python3
"""The crossover's analytic model and plot (docs/guides/smpi.md, "The crossover"),
from the results of smpi/crossover.sh.

usage: /usr/bin/python3 smpi/crossover_model.py [OUT] [--fit N[,N...]] [--plot PNG]
  OUT     crossover.sh's results (default ~/.cache/ovl/crossover)
  --fit   the matrix sizes whose points the model is fitted to (default 2000);
          every other measured point is a check (model / simulated printed)
  --plot  write the plot (eigensolver time / purification time against nodes)

The model, one per code, with F = 1.56e12 flop/s per node, beta = 12e9 B/s
per link and lg = log2(P):
  eigensolver (pdsyevd or pdsyevr, + D):  T = a n^3/(P F) + b 8 n^2/(sqrt(P) beta) + c n lg
      (local flops, the panels' broadcasts over a sqrt(P) x sqrt(P) grid, and the
      tridiagonal reduction's n steps of collectives: latency)
  purification, per product (the JSON's `products`):
      t = a n^3/(P F) + b 8 n^2/(P^(2/3) beta) + c lg
      (one square's flops, the 3D/2.5D grid's panel traffic, the collectives' latency)
fitted by least squares on the relative error; a, b, c are dimensionless (a:
flops' share of the node's rate, b: traffic over the link's rate) except c
(seconds per step and level). The purification's time at a point it is not
measured at takes that point's products from the nearest measured P of the same n
(the same method and precision), else from the same P at another n.
P*: the smallest P (on a log2 grid from 2 to 4096) where the model's best
eigensolver time exceeds the model's best purification time.
"""
import glob
import json
import math
import os
import re
import sys

import numpy as np

F, BETA = 1.56e12, 12e9


def load(out):
  pts = {}
  for d in glob.glob(os.path.join(out, "n*_P*")):
    m = re.match(r"n(\d+)_P(\d+)$", os.path.basename(d))
    if not m:
      continue
    n, P = int(m.group(1)), int(m.group(2))
    e, p = {}, {}
    for s, name in (("evd", "pdsyevd"), ("evr", "pdsyevr")):
      f = os.path.join(d, f"eig_{s}.txt")
      if os.path.exists(f):
        for line in open(f):
          w = line.split()
          if w and w[0] == name:
            e[name] = float(w[5])
    for f in glob.glob(os.path.join(d, "purify_*.json")):
      try:
        j = json.loads(open(f).read().strip().splitlines()[-1])
      except (ValueError, IndexError):
        continue
      key = f"{j['method']}:{'double' if j['precision'] == 'double' else 'mixed'}"
      p[key] = (j["t_total"], j["products"])
    pts[(n, P)] = (e, p)
  return pts


def eig_terms(n, P):
  return [n**3 / (P * F), 8.0 * n * n / (math.sqrt(P) * BETA), n * math.log2(P)]


def pur_terms(n, P):
  return [n**3 / (P * F), 8.0 * n * n / (P ** (2.0 / 3.0) * BETA), math.log2(P)]


def fit(rows, terms):
  """Least squares of the relative error: rows = [(n, P, t)]."""
  A = np.array([[x / t for x in terms(n, P)] for n, P, t in rows])
  coef, *_ = np.linalg.lstsq(A, np.ones(len(rows)), rcond=None)
  return coef


def main():
  args = sys.argv[1:]
  out = os.path.expanduser("~/.cache/ovl/crossover")
  fitn, plot = {2000}, None
  i = 0
  while i < len(args):
    if args[i] == "--fit":
      fitn = {int(x) for x in args[i + 1].split(",")}
      i += 2
    elif args[i] == "--plot":
      plot = args[i + 1]
      i += 2
    else:
      out = args[i]
      i += 1
  pts = load(out)
  solvers = sorted({s for e, _ in pts.values() for s in e})
  methods = sorted({m for _, p in pts.values() for m in p})
  em, pm = {}, {}
  print(f"# fitted to n in {sorted(fitn)}; coefficients a (flops), b (traffic), c (latency, s)")
  for s in solvers:
    rows = [(n, P, e[s]) for (n, P), (e, _) in pts.items() if s in e and n in fitn]
    if len(rows) >= 3:
      em[s] = fit(rows, eig_terms)
      print(f"# {s} + D: a {em[s][0]:.3g}  b {em[s][1]:.3g}  c {em[s][2]:.3g}  ({len(rows)} points)")
  for m in methods:
    rows = [(n, P, p[m][0] / p[m][1]) for (n, P), (_, p) in pts.items() if m in p and n in fitn]
    if len(rows) >= 3:
      pm[m] = fit(rows, pur_terms)
      print(f"# {m} per product: a {pm[m][0]:.3g}  b {pm[m][1]:.3g}  c {pm[m][2]:.3g}  ({len(rows)} points)")

  def products(m, n, P):
    same = [(abs(math.log2(P2 / P)), p[m][1]) for (n2, P2), (_, p) in pts.items() if n2 == n and m in p]
    if same:
      return min(same)[1]
    other = [(abs(math.log2(n2 / n)), p[m][1]) for (n2, P2), (_, p) in pts.items() if P2 == P and m in p]
    other = other or [(0, p[m][1]) for (_, p) in pts.values() if m in p]
    return min(other)[1] if other else None

  def t_eig(s, n, P):
    return float(np.dot(em[s], eig_terms(n, P)))

  def t_pur(m, n, P):
    k = products(m, n, P)
    return None if k is None else k * float(np.dot(pm[m], pur_terms(n, P)))

  print("| n | nodes | code | simulated (s) | model (s) | model / simulated | fitted or check |")
  print("| ---: | ---: | --- | ---: | ---: | ---: | --- |")
  for (n, P) in sorted(pts):
    e, p = pts[(n, P)]
    for s in solvers:
      if s in e and s in em:
        t = t_eig(s, n, P)
        print(f"| {n} | {P} | {s} + D | {e[s]:.4f} | {t:.4f} | {t / e[s]:.2f} | {'fit' if n in fitn else 'check'} |")
    for m in methods:
      if m in p and m in pm:
        t = t_pur(m, n, P)
        print(f"| {n} | {P} | {m} | {p[m][0]:.4f} | {t:.4f} | {t / p[m][0]:.2f} | {'fit' if n in fitn else 'check'} |")
  print()
  print("| n | P* (model) | model's best eigensolver / best purification at 16, 64, 256, 1024 nodes |")
  print("| ---: | ---: | --- |")
  grid = [2**k for k in range(1, 13)]
  curves = {}
  for n in sorted({n for n, _ in pts} | {2000, 4000, 8000}):
    if not em or not pm:
      break
    ratio = []
    for P in grid:
      te = min(t_eig(s, n, P) for s in em)
      tp = [t for t in (t_pur(m, n, P) for m in pm) if t]
      ratio.append(te / min(tp) if tp else float("nan"))
    curves[n] = ratio
    star = next((P for P, r in zip(grid, ratio) if r > 1), None)
    at = ", ".join(f"{ratio[grid.index(P)]:.2f}" for P in (16, 64, 256, 1024))
    print(f"| {n} | {star if star else '> 4096'} | {at} |")
  if plot:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for k, n in enumerate(sorted(curves)):
      c = f"C{k}"
      ax.plot(grid, curves[n], "-", color=c, lw=1, label=f"model, n = {n}")
      meas = [(P, min(e.values()) / min(t for t, _ in p.values())) for (n2, P), (e, p) in sorted(pts.items())
              if n2 == n and e and p]
      if meas:
        ax.plot([x for x, _ in meas], [y for _, y in meas], "o", color=c, label=f"simulated, n = {n}")
    ax.axhline(1.0, color="k", lw=0.8, ls=":")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("nodes (one rank per node, Stampede2-like)")
    ax.set_ylabel("best eigensolver + D / best purification")
    ax.set_title("SimGrid SMPI 3.32 simulation: where purification wins", fontsize=10)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(plot, dpi=110)
    print(f"# plot: {plot}")


if __name__ == "__main__":
  main()
