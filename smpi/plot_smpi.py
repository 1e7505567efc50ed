#!/usr/bin/env python3
"""Plots of the simulated reproductions (docs/lab/smpi-reproductions.md) from the CSV files of
smpi/repro_ssc.py and smpi/repro_hsumma.sh.

usage: /usr/bin/python3 smpi/plot_smpi.py [BUILD_DIR] [OUT_DIR]   (defaults: build-smpi, docs/img)
Writes whichever of smpi_table2.png, smpi_table3.png, smpi_table5.png,
smpi_hsumma_sweep_P<P>.png (one per P), smpi_hsumma_scale.png has its data (for
Tables III and V the CSV whose name sorts last; for the scale plot the last scale_*.csv).
"""
import glob
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(root, "tools"))
import ovlrecords  # noqa: E402  (tools/ovlrecords.py: the schema and reader of ovl's records and tables)
bld = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "build-smpi")
out = sys.argv[2] if len(sys.argv) > 2 else os.path.join(root, "docs", "img")
os.makedirs(out, exist_ok=True)
TAG = "SimGrid SMPI 3.32 simulation"


def rows(path):
  """The rows of a CSV table of smpi/repro_*.py (or the records of a JSON-lines file)."""
  return ovlrecords.read_rows(path)


p = os.path.join(bld, "repro", "table1_ideal.csv")
if os.path.exists(p):
  r = rows(p)
  fig, ax = plt.subplots(figsize=(6.4, 4))
  for sysname in dict.fromkeys(x["system"] for x in r):
    xs = [int(x["ndup"]) for x in r if x["system"] == sysname]
    ax.plot(xs, [float(x["tflops"]) for x in r if x["system"] == sysname], "o-", label=f"{sysname} simulated")
    ax.plot(xs, [float(x["paper"]) for x in r if x["system"] == sysname], "x--", label=f"{sysname} paper")
  ax.set_xlabel("N_DUP")
  ax.set_ylabel("TFLOP/s")
  ax.set_title(f"SymmSquareCube Alg. 5 vs N_DUP, 64 nodes (Table II)\n{TAG}", fontsize=9)
  ax.legend(fontsize=7, ncol=2)
  fig.tight_layout()
  fig.savefig(os.path.join(out, "smpi_table2.png"), dpi=110)

def poll_of(path):
  """The smpi/test value a repro_ssc.py CSV was made with (file name suffix _pollX; default 1e-9)."""
  b = os.path.basename(path)[:-4]
  return b.split("_poll")[1] if "_poll" in b else "1e-9"


for p in sorted(glob.glob(os.path.join(bld, "repro", "table3_ideal*.csv")))[-1:]:
  r = rows(p)
  fig, ax = plt.subplots(figsize=(6.4, 4))
  x = [int(v["ppn"]) for v in r]
  for key, lab, st in (("ndup1", "N_DUP=1 simulated", "o-"), ("ndup4", "N_DUP=4 simulated", "s-"),
                       ("paper1", "N_DUP=1 paper", "o--"), ("paper4", "N_DUP=4 paper", "s--")):
    ax.plot(x, [float(v[key]) for v in r], st, label=lab)
  ax.set_xlabel("PPN (mesh 4^3 .. 8^3)")
  ax.set_ylabel("TFLOP/s")
  ax.set_title(f"SymmSquareCube Alg. 5, n = 7645, multiple PPN (Table III), poll {poll_of(p)} s\n{TAG}", fontsize=9)
  ax.set_ylim(bottom=0)
  ax.legend(fontsize=8)
  fig.tight_layout()
  fig.savefig(os.path.join(out, "smpi_table3.png"), dpi=110)

for p in sorted(glob.glob(os.path.join(bld, "repro", "table5_ideal*.csv")))[-1:]:
  r = rows(p)
  fig, ax = plt.subplots(figsize=(8, 4))
  lab = [f"{v['s']}x{v['s']}x{v['c']}\nPPN {v['ppn']}" for v in r]
  xs = range(len(r))
  w = 0.2
  for i, (key, name, col) in enumerate((("ndup1", "N_DUP=1 simulated", "C0"), ("ndup4", "N_DUP=4 simulated", "C1"),
                                        ("paper1", "N_DUP=1 paper", "C2"), ("paper4", "N_DUP=4 paper", "C3"))):
    ax.bar([x + (i - 1.5) * w for x in xs], [float(v[key]) for v in r], w, label=name, color=col,
           alpha=1.0 if "sim" in name else 0.55)
  ax.set_xticks(list(xs))
  ax.set_xticklabels(lab, fontsize=7)
  ax.set_ylabel("TFLOP/s")
  ax.set_title(f"SymmSquareCube Alg. 6 (2.5D), n = 7645 (Table V), poll {poll_of(p)} s\n{TAG}", fontsize=9)
  ax.legend(fontsize=7, ncol=2)
  fig.tight_layout()
  fig.savefig(os.path.join(out, "smpi_table5.png"), dpi=110)

for p in sorted(glob.glob(os.path.join(bld, "hsumma", "sweep_*.csv"))):
  r = rows(p)
  s = [v for v in r if v["G"] == "summa"]
  h = [v for v in r if v["G"] != "summa"]
  if not h:  # a sweep that did not get past SUMMA
    continue
  fig, ax = plt.subplots(figsize=(6.4, 4))
  g = [int(v["G"]) for v in h]
  ax.plot(g, [float(v["t"]) for v in h], "o-", label="HSUMMA total")
  ax.plot(g, [float(v["comm"]) for v in h], "s-", label="HSUMMA communication")
  if s:
    ax.axhline(float(s[0]["t"]), color="gray", ls="--", label="SUMMA total")
    ax.axhline(float(s[0]["comm"]), color="gray", ls=":", label="SUMMA communication")
  ax.set_xscale("log", base=2)
  ax.set_xlabel("groups G")
  ax.set_ylabel("seconds")
  ax.set_title(f"HSUMMA G sweep, {os.path.basename(p)[6:-4]}, b = M, BlueGene/P-like torus (Fig. 10 style)\n{TAG}",
               fontsize=9)
  ax.legend(fontsize=8)
  fig.tight_layout()
  fig.savefig(os.path.join(out, f"smpi_hsumma_sweep_{os.path.basename(p)[6:-4].split('_')[0]}.png"), dpi=110)

for p in sorted(glob.glob(os.path.join(bld, "hsumma", "scale_*.csv"))):
  r = rows(p)
  fig, ax = plt.subplots(figsize=(6.4, 4))
  P = [int(v["P"]) for v in r]
  ax.plot(P, [float(v["summa_comm"]) for v in r], "o-", label="SUMMA")
  ax.plot(P, [float(v["hsumma_comm"]) for v in r], "s-", label="HSUMMA, G = sqrt(P)")
  ax.set_xscale("log", base=2)
  ax.set_xlabel("ranks P")
  ax.set_ylabel("communication time (s)")
  ax.set_title(f"SUMMA vs HSUMMA communication, {os.path.basename(p)[6:-4]} (Fig. 11 style)\n{TAG}", fontsize=9)
  ax.legend(fontsize=8)
  fig.tight_layout()
  fig.savefig(os.path.join(out, "smpi_hsumma_scale.png"), dpi=110)
