#!/usr/bin/env python3
"""The crossover's analytic model and plot (docs/guides/smpi.md, "The crossover"),
from the results of smpi/crossover.sh.

usage: /usr/bin/python3 smpi/crossover_model.py [OUT ...] [--fit N[:P],...] [--plot PNG] [--title T]
  OUT     crossover.sh's results (default ~/.cache/ovl/crossover); several: merged, a
          run in an earlier one kept over the same run (code, method, precision) in a later one
  --fit   the points the model is fitted to: N (every P of that n) or N:P, comma-separated
          (default 2000,4000:16); every other measured point is a check (model / simulated)
  --plot  write the plot (eigensolver time / purification time against nodes)
  --machine bgpsmp   the BlueGene/P-like torus of PLATFORM=bgpsmp: F = 11.6e9, beta = 425e6
                     (default stampede2)

The model, one per code, with F = 1.56e12 flop/s per node, beta = 12e9 B/s
per link and lg = log2(P):
  eigensolver (pdsyevd or pdsyevr, + D):  T = a n^3/(P F) + b 8 n^2/(sqrt(P) beta) + c n lg
      (local flops, the panels' broadcasts over a sqrt(P) x sqrt(P) grid, and the
      tridiagonal reduction's n steps of collectives: latency)
  purification, per product (the JSON's `products`), on the run's s x s x c grid:
      t = f/(P_a F) + b 8 n^2 (2 s/c + 2 log2(c) + 1)/(s^2 beta) + c' lg
      (the product's flops f, known: t_ssc x ssc_gflops / products of the run, over
      the P_a active ranks; a rank's words: s/c Cannon steps of two n/s x n/s blocks,
      the replication to and reduction from c planes by trees; the collectives'
      latency. A grid not measured is the symmetric square's default for P: the
      largest c <= P^(1/3) with P/c a square, as `ovl purify` chooses it)
fitted by least squares on the relative error, every coefficient >= 0: the eigensolver's a, b, c (a:
the flops' share of the node's rate, b: traffic over the link's rate, c:
seconds per step and level), the purification's b and c only (its flop term
is not fitted). The purification's time at a point it is not
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


def host(f):
  """(the run's CPU seconds, user + system, when recorded, else nan; its wall seconds)"""
  try:
    u, s = open(f + ".cpu").read().split()[-3:-1]
    c = float(u) + float(s)
  except (OSError, ValueError):
    c = float("nan")
  try:
    return np.array([c, float(open(f + ".host").read().split()[0])])
  except (OSError, ValueError, IndexError):
    return np.array([c, float("nan")])


def load(outs):
  """{(n, P): (eigensolver times, {method:precision: (t, products, record)}, host seconds of the point)}"""
  pts, hosts = {}, {}
  for out in outs:
    for (n, P), (e, p, hk) in load1(out).items():
      e0, p0 = pts.get((n, P), ({}, {}))
      h0 = hosts.setdefault((n, P), {})
      for k, v in e.items():
        if k not in e0:
          e0[k], h0[k] = v, hk[k]
      for k, v in p.items():
        if k not in p0:
          p0[k], h0[k] = v, hk[k]
      pts[(n, P)] = (e0, p0)
  return {k: (e, p, sum(hosts[k].values(), np.zeros(2))) for k, (e, p) in pts.items()}


def load1(out):
  pts = {}
  for d in glob.glob(os.path.join(out, "n*_P*")):
    m = re.match(r"n(\d+)_P(\d+)$", os.path.basename(d))
    if not m:
      continue
    n, P = int(m.group(1)), int(m.group(2))
    e, p, h = {}, {}, {}
    for s, name in (("evd", "pdsyevd"), ("evr", "pdsyevr")):
      f = os.path.join(d, f"eig_{s}.txt")
      if os.path.exists(f):
        for line in open(f):
          w = line.split()
          if w and w[0] == name:
            e[name] = float(w[5])
            h[name] = host(f)
    for f in glob.glob(os.path.join(d, "purify_*.json")):
      try:
        j = json.loads(open(f).read().strip().splitlines()[-1])
      except (ValueError, IndexError):
        continue
      key = f"{j['method']}:{'double' if j['precision'] == 'double' else 'mixed'}"
      p[key] = (j["t_total"], j["products"], j)
      h[key] = host(f)
      if j["algo"] == "square":
        g = [int(x) for x in j["grid"].split("x")]
        GRIDS[(n, P)] = GRIDS[P] = (g[0], g[2])
    pts[(n, P)] = (e, p, h)
  return pts


def summary(pts):
  """One row per point: the eigensolvers, the best purification in each precision, the ratios."""
  print("| n | nodes | pdsyevd + D (s) | pdsyevr + D (s) | best float64 purification (s) | best mixed (s) |"
        " best eig / best float64 | best eig / best mixed | canonical, `--algo auto` | purifications run | host time of the point, wall / CPU (s) |")
  print("| ---: | ---: | ---: | ---: | --- | --- | ---: | ---: | --- | ---: | ---: |")
  for (n, P) in sorted(pts):
    e, p, h = pts[(n, P)]
    if not e and not p:
      continue
    def best(prec):
      c = [(v[0], k.split(":")[0], v[2]) for k, v in p.items() if k.endswith(":" + prec)]
      return min(c, key=lambda x: x[0]) if c else None
    bd, bm = best("double"), best("mixed")
    te = min(e.values()) if e else None
    rp = lambda j: ", replayed" if str(j.get("stop_reason", "")).startswith("fixed schedule") else ""
    fmt = lambda b: f"{b[1]} {b[0]:.4f} ({b[2]['iterations']} it., {b[2]['grid']}{rp(b[2])})" if b else "-"
    rat = lambda b: f"**{te / b[0]:.2f}**" if b and te else "-"
    c = p.get("canonical:double")
    cs = f"{c[2]['algo']} {c[2]['grid']} N_DUP {c[2]['ndup']}: {c[0]:.4f}" if c else "-"
    et = lambda k: f"{e[k]:.4f}" if k in e else "-"
    hc = "-" if np.isnan(h[0]) else f"{h[0]:.0f}"
    print(f"| {n} | {P} | {et('pdsyevd')} | {et('pdsyevr')} | {fmt(bd)} |"
          f" {fmt(bm)} | {rat(bd)} | {rat(bm)} | {cs} | {len(p)} | {h[1]:.0f} / {hc} |")
  print()


def eig_terms(n, P):
  return [n**3 / (P * F), 8.0 * n * n / (math.sqrt(P) * BETA), n * math.log2(P)]


def sq_grid(P):
  """The s x s x c grid of P ranks: the largest c <= P^(1/3) with P/c a perfect square."""
  for c in range(int(round(P ** (1.0 / 3.0))) + 1, 0, -1):
    if c ** 3 <= P and P % c == 0 and round(math.sqrt(P // c)) ** 2 == P // c:
      return int(round(math.sqrt(P // c))), c
  return int(math.sqrt(P)), 1


GRIDS = {}


def pur_terms(n, P):
  s, c = GRIDS.get((n, P)) or GRIDS.get(P) or sq_grid(P)
  return [8.0 * n * n * (2.0 * s / c + 2.0 * math.log2(c) + 1.0) / (s * s * BETA), math.log2(P)]


def fit(rows, terms, known=None):
  """Least squares of the relative error with coefficients >= 0 (every subset of the terms
  tried, the best nonnegative solution kept): rows = [(n, P, t)]; known(n, P): a part of t
  not fitted."""
  A = np.array([[x / t for x in terms(n, P)] for n, P, t in rows])
  y = np.array([1.0 - (known(n, P) / t if known else 0.0) for n, P, t in rows])
  k = A.shape[1]
  best = (math.inf, np.zeros(k))
  for mask in range(1, 2**k):
    cols = [i for i in range(k) if mask >> i & 1]
    c, *_ = np.linalg.lstsq(A[:, cols], y, rcond=None)
    if (c < 0).any():
      continue
    full = np.zeros(k)
    full[cols] = c
    r = float(np.sum((A @ full - y) ** 2))
    if r < best[0]:
      best = (r, full)
  return best[1]


def main():
  args = sys.argv[1:]
  outs = []
  fitspec, plot, title = "2000,4000:16", None, "SimGrid SMPI simulation: where purification wins"
  xlabel = "nodes (one rank per node, Stampede2-like)"
  i = 0
  while i < len(args):
    if args[i] == "--fit":
      fitspec = args[i + 1]
      i += 2
    elif args[i] == "--machine":
      global F, BETA
      F, BETA = {"stampede2": (1.56e12, 12e9), "bgpsmp": (11.6e9, 425e6)}[args[i + 1]]
      i += 2
    elif args[i] == "--title":
      title = args[i + 1]
      i += 2
    elif args[i] == "--xlabel":
      xlabel = args[i + 1]
      i += 2
    elif args[i] == "--plot":
      plot = args[i + 1]
      i += 2
    else:
      outs.append(os.path.expanduser(args[i]))
      i += 1
  outs = outs or [os.path.expanduser("~/.cache/ovl/crossover")]
  specs = [tuple(map(int, x.split(":"))) for x in fitspec.split(",") if x]
  fitted = lambda n, P: any(sp[0] == n and (len(sp) == 1 or sp[1] == P) for sp in specs)
  pts = load(outs)
  summary(pts)
  pts = {k: v[:2] for k, v in pts.items()}
  solvers = sorted({s for e, _ in pts.values() for s in e})
  methods = sorted({m for _, p in pts.values() for m in p})
  em, pm = {}, {}
  print(f"# fitted to the points {fitspec}; coefficients a (flops), b (traffic), c (latency, s)")
  for s in solvers:
    rows = [(n, P, e[s]) for (n, P), (e, _) in pts.items() if s in e and fitted(n, P)]
    if len(rows) >= 3:
      em[s] = fit(rows, eig_terms)
      print(f"# {s} + D: a {em[s][0]:.3g}  b {em[s][1]:.3g}  c {em[s][2]:.3g}  ({len(rows)} points)")
  def flop_time(m, n, P):
    """One product's flops at the node's rate over the active ranks: from the run at (n, P), else
    scaled as n^3 from the same method's run at the nearest P (the active share kept)."""
    c = [(abs(math.log2(P2 / P)) + abs(math.log2(n2 / n)), n2, P2, p[m][2]) for (n2, P2), (_, p) in pts.items()
         if m in p]
    if not c:
      return None
    _, n2, P2, j = min(c, key=lambda x: x[0])
    f = j["t_ssc"] * j["ssc_gflops"] * 1e9 / j["products"] * (n / n2) ** 3
    return f / (j["active"] / j["ranks"] * P * F)

  for m in methods:
    rows = [(n, P, p[m][0] / p[m][1]) for (n, P), (_, p) in pts.items() if m in p and fitted(n, P)]
    if len(rows) >= 2:
      pm[m] = fit(rows, pur_terms, lambda n, P, m=m: flop_time(m, n, P))
      print(f"# {m} per product: flops known, b {pm[m][0]:.3g}  c {pm[m][1]:.3g}  ({len(rows)} points)")

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
    return None if k is None else k * (flop_time(m, n, P) + float(np.dot(pm[m], pur_terms(n, P))))

  print("| n | nodes | code | simulated (s) | model (s) | model / simulated | fitted or check |")
  print("| ---: | ---: | --- | ---: | ---: | ---: | --- |")
  for (n, P) in sorted(pts):
    e, p = pts[(n, P)]
    for s in solvers:
      if s in e and s in em:
        t = t_eig(s, n, P)
        print(f"| {n} | {P} | {s} + D | {e[s]:.4f} | {t:.4f} | {t / e[s]:.2f} | {'fit' if fitted(n, P) else 'check'} |")
    for m in methods:
      if m in p and m in pm:
        t = t_pur(m, n, P)
        print(f"| {n} | {P} | {m} | {p[m][0]:.4f} | {t:.4f} | {t / p[m][0]:.2f} | {'fit' if fitted(n, P) else 'check'} |")
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
      meas = [(P, min(e.values()) / min(v[0] for v in p.values())) for (n2, P), (e, p) in sorted(pts.items())
              if n2 == n and e and p]
      if meas:
        ax.plot([x for x, _ in meas], [y for _, y in meas], "o", color=c, label=f"simulated, n = {n}")
    ax.axhline(1.0, color="k", lw=0.8, ls=":")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("best eigensolver + D / best purification")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(plot, dpi=110)
    print(f"# plot: {plot}")


if __name__ == "__main__":
  main()
