#!/usr/bin/env python3
"""Fit the mechanisms of the platform stampede2mech (smpi/smpirun.sh --mech)
to Huang & Chow's micro-benchmarks, and write them to smpi/platforms/mech.env.

Nothing here reads Tables I, II, III or V. The sources, in the order of the fit:

1. Fig. 6 (posting times on node 0, 4 nodes, one rank per node): posting a
   nonblocking reduction of 8 MB took 1139 us, posting each of the four
   2 MB lanes of N_DUP = 4 took 265, 281, 357 and 349 us (the paper's text
   states these five numbers; the figure itself is not in the text copy).
   ovl's own reduction posts one message (its first round) and copies its
   input (the schedule's first round, src/comm/sched.c), so a post costs
   OVERHEAD + s / COPYRATE: a least-squares line through the five points.
   OVERHEAD is SimGrid's smpi/ois and smpi/os (per message, every size);
   COPYRATE is the per-rank rate of ovl's copies.
2. Fig. 3 (unidirectional bandwidth against message size, PPN 1): the text
   states the peak (about 12000 MB/s, the link) and that one process per
   node reaches it only at very large messages; the curve's points are not
   in the text copy. Its shape is taken as Tatebe's s / (L + s/B), i.e. a
   bandwidth factor f(s) = s / (s + NHALF) (smpi/bw-factor), and NHALF is set
   by the one number the text states for a single process per node at a
   known size: the blocking broadcast of 16 MB on 4 nodes reaches about 75 %
   of the peak (Section V-B, Fig. 5), i.e. 9.0 GB/s in `ovl bench coll`'s
   2(p-1)n/p convention. Solved by bisection on the simulated benchmark,
   with 1. in place.
3. Table IV, the column "Reduce BW (GB/s)" only (2.4, 3.1, 5.1, 8.3, 8.7 at
   PPN 1, 2, 4, 6, 8: the paper's own micro-benchmark of Section V-B at PPN
   ranks per node): the reductions' arithmetic, SUMRATE per rank, and the
   node's memory NODEMEM, shared by the sums and copies of all ranks of a
   node (the memory host m<i> of stampede2mech). Least squares on the
   logarithm of the simulated `ovl bench coll --op reduce --ppn K` (16 MB,
   the ppn case) against the column, with 1. and 2. in place.

usage: smpi/fit_mech.py [--build build-smpi] [--out smpi/platforms/mech.env] [--step 1,2,3]
Every simulation runs under `nice -n 19`, one at a time; 15-30 minutes on a loaded 2-core machine.
"""
import argparse
import os
import subprocess
import sys

import numpy as np
from scipy import optimize

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

FIG6_POSTS = [(8388608, 1139e-6), (2097152, 265e-6), (2097152, 281e-6), (2097152, 357e-6), (2097152, 349e-6)]
FIG5_BCAST_16MB = 0.75 * 12.0  # GB/s: "about 75% of the peak unidirectional point-to-point bandwidth"
T4_REDUCE_BW = {1: 2.4, 2: 3.1, 4: 5.1, 6: 8.3, 8: 8.7}  # GB/s, Table IV's "Reduce BW" column


def write_env(path, m, notes):
  with open(path, "w") as f:
    f.write("# Mechanisms of the platform stampede2mech (smpi/smpirun.sh --mech), written by smpi/fit_mech.py.\n")
    for n in notes:
      f.write(f"# {n}\n")
    for k in ("NHALF", "OVERHEAD", "COPYRATE", "SUMRATE", "NODEMEM"):
      f.write(f"{k}={m[k]:.6g}\n")


def bench(args, m, op, k, size, extra=()):
  """Simulated `ovl bench coll` on 4 nodes x k ranks; returns (blocking, ndup, ppn) GB/s."""
  env = dict(os.environ, OVL_SMPI_FLOPS="skip", OVL_SMPI_PPN=str(k), OVL_SMPI_WORK=os.path.join(args.build, "platforms"))
  for key, v in m.items():
    env[f"OVL_MECH_{key}"] = f"{v:.9g}"
  cmd = ["nice", "-n", "19", os.path.join(HERE, "smpirun.sh"), "-np", str(4 * k), "--mech", args.out,
         os.path.join(args.build, "ovl"), "bench", "coll", "--op", op, "--backend", "own", "--ppn", str(k),
         "-m", f"{size}:{size}", "-i", "1", "-x", "0", "-q"] + list(extra)
  p = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=args.build)
  for line in p.stdout.splitlines():
    w = line.split()
    if len(w) == 7 and w[0] == str(size):
      return float(w[2]) / 1e3, float(w[4]) / 1e3, float(w[6]) / 1e3
  sys.exit(f"fit_mech: no result from {' '.join(cmd)}\n{p.stdout[-2000:]}{p.stderr[-2000:]}")


def posts(args, m):
  """Simulated posting times (s) of `ovl bench coll --timeline`, reduce 8 MB: (blocking, lanes)."""
  import json
  tl = os.path.join(args.build, "fit_mech_timeline.json")
  bench(args, m, "reduce", 1, 8388608, ["--timeline", tl, "--timeline-reps", "1"])
  ev = json.load(open(tl))["traceEvents"]
  blk, lanes, last, case = [], [], None, None
  for e in ev:
    if e["ph"] == "B":
      last, case = e["ts"], e["name"]
    elif e["name"].startswith("post") and last is not None:
      (blk if case == "blocking" else lanes if case == "ndup" else []).append((e["ts"] - last) * 1e-6)
      last = e["ts"]
  return blk, lanes


def main():
  ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
  ap.add_argument("--build", default=os.path.join(ROOT, "build-smpi"))
  ap.add_argument("--out", default=os.path.join(HERE, "platforms", "mech.env"))
  ap.add_argument("--only3", action="store_true", help="keep steps 1 and 2 of the existing --out file, fit step 3")
  args = ap.parse_args()
  args.build = os.path.abspath(args.build)
  m = {"NHALF": 0.0, "OVERHEAD": 0.0, "COPYRATE": 0.0, "SUMRATE": 0.0, "NODEMEM": 0.0}
  notes = []

  if args.only3:
    for line in open(args.out):
      if "=" in line and not line.startswith("#"):
        k, v = line.strip().split("=")
        m[k] = float(v)
      elif line.startswith("# Fig."):
        notes.append(line[2:].strip())
    return step3(args, m, notes)
  # 1. Fig. 6: post = OVERHEAD + s / COPYRATE
  s = np.array([p[0] for p in FIG6_POSTS], float)
  t = np.array([p[1] for p in FIG6_POSTS], float)
  slope, icpt = np.polyfit(s, t, 1)
  m["OVERHEAD"], m["COPYRATE"] = icpt, 1.0 / slope
  write_env(args.out, m, notes)
  blk, lanes = posts(args, m)
  line = (f"Fig. 6: OVERHEAD {icpt * 1e6:.1f} us, COPYRATE {m['COPYRATE'] / 1e9:.3f} GB/s; simulated posts: "
          f"8 MB {np.median(blk) * 1e6:.0f} us (paper 1139), 2 MB lanes {np.median(lanes) * 1e6:.0f} us "
          f"(paper 265-357)")
  print(line, flush=True)
  notes.append(line)

  # 2. Fig. 3's shape, Fig. 5's number: blocking bcast 16 MB = 9.0 GB/s
  def gap(lognh):
    m["NHALF"] = 10**lognh
    write_env(args.out, m, notes)
    b = bench(args, m, "bcast", 1, 16777216)[0]
    print(f"  NHALF {m['NHALF']:.4g} B: blocking bcast 16 MB {b:.3f} GB/s", flush=True)
    return b - FIG5_BCAST_16MB
  lo, hi = 3.0, 8.0
  if gap(lo) < 0:
    sys.exit("fit_mech: the broadcast is below 9 GB/s even with NHALF = 1 KB (the overheads alone)")
  lognh = optimize.brentq(gap, lo, hi, xtol=0.01)
  m["NHALF"] = 10**lognh
  b = bench(args, m, "bcast", 1, 16777216)[0]
  line = f"Fig. 3 shape, Fig. 5's 75 % at 16 MB: NHALF {m['NHALF']:.4g} B; blocking bcast 16 MB {b:.2f} GB/s (9.0)"
  print(line, flush=True)
  notes.append(line)

  step3(args, m, notes)


def step3(args, m, notes):
  """3. Table IV's reduce column: SUMRATE per rank, NODEMEM per node."""
  ks = sorted(T4_REDUCE_BW)
  want = np.log([T4_REDUCE_BW[k] for k in ks])

  def resid(x):
    m["SUMRATE"], m["NODEMEM"] = 10**x[0], 10**x[1]
    write_env(args.out, m, notes)
    got = [bench(args, m, "reduce", k, 16777216)[2] for k in ks]
    r = np.log(got) - want
    print(f"  SUMRATE {m['SUMRATE'] / 1e9:.3f} GB/s NODEMEM {m['NODEMEM'] / 1e9:.3f} GB/s: "
          + " ".join(f"{g:.2f}" for g in got) + f"  rms log {np.sqrt(np.mean(r**2)):.4f}", flush=True)
    return r
  fit = optimize.least_squares(resid, x0=[np.log10(2e9), np.log10(30e9)], diff_step=0.02, max_nfev=8,
                               bounds=([8.0, 8.5], [11.0, 12.0]))
  m["SUMRATE"], m["NODEMEM"] = 10**fit.x[0], 10**fit.x[1]
  got = [bench(args, m, "reduce", k, 16777216)[2] for k in ks]
  line = (f"Table IV reduce BW column: SUMRATE {m['SUMRATE'] / 1e9:.3f} GB/s per rank, NODEMEM "
          f"{m['NODEMEM'] / 1e9:.3f} GB/s per node; simulated " +
          ", ".join(f"PPN {k} {g:.2f} ({T4_REDUCE_BW[k]})" for k, g in zip(ks, got)) + " GB/s")
  print(line, flush=True)
  notes.append(line)
  write_env(args.out, m, notes)
  print(open(args.out).read())


if __name__ == "__main__":
  main()
