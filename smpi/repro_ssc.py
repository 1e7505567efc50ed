#!/usr/bin/env python3
"""Huang & Chow, Tables I, II, III and V, simulated with SimGrid SMPI on the
Stampede2-like platform (smpi/platforms/make_platforms.py), beside the paper.

usage: smpi/repro_ssc.py {table1,table3,table4,table5,all} [--build build-smpi] [--net ideal|halfbw]
                         [--out DIR] [--rerun] [--timeout SECONDS] [--poll SECONDS]
                         [--max-ranks P] [--flowcap RATE] [--sumrate RATE] [--systems 1hsg_70,...]
Table I and II come from one set of runs (table1). table4: Algorithm 4 (N_DUP 1)
at Table III's meshes with the bytes between nodes counted (ssc_sim --volume)
beside its simulated communication time. Every run is ssc_sim under
smpi/smpirun.sh with OVL_SMPI_FLOPS=skip (local products as 2mnk flops at the
node's dgemm rate) and shared memory for the matrix blocks; results are
deterministic. --flowcap RATE runs on the uniform-latency platform with every
message stream capped at RATE (smpi/smpirun.sh --flowcap, docs/guides/smpi.md); its
files are tagged _capRATE. --sumrate RATE charges the reductions' sums at RATE
of the summing rank's time (smpi/smpirun.sh --sumrate); files tagged _sumRATE. Raw output goes to DIR (default build-smpi/repro), tables to
stdout and DIR/<table>_<net>.md.
"""
import argparse
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

SIZES = {"1hsg_45": 5330, "1hsg_60": 6895, "1hsg_70": 7645}
PAPER_T1 = {"1hsg_45": (12.36, 13.20, 16.05, 1.21), "1hsg_60": (16.83, 17.57, 20.57, 1.17),
            "1hsg_70": (18.49, 19.21, 22.48, 1.17)}
PAPER_T2 = {"1hsg_45": (13.17, 15.30, 14.61, 16.05, 16.19, 16.07), "1hsg_60": (17.57, 19.82, 19.43, 20.57, 21.21, 20.68),
            "1hsg_70": (19.21, 21.51, 21.47, 22.48, 22.39, 22.54)}
# PPN, mesh p, total nodes, N_DUP=1, N_DUP=4
PAPER_T3 = [(1, 4, 64, 19.21, 22.48), (2, 5, 63, 20.61, 26.45), (4, 6, 54, 26.24, 33.87), (6, 7, 58, 27.53, 36.73),
            (8, 8, 64, 24.98, 32.38)]
# PPN, mesh p, estimated inter-node volume (MB), reduce BW, bcast BW (GB/s), estimated time, actual time (s)
PAPER_T4 = [(1, 4, 265.0, 2.4, 8.5, 0.058, 0.073), (2, 5, 311.5, 3.1, 8.8, 0.056, 0.066),
            (4, 6, 405.1, 5.1, 9.0, 0.054, 0.056), (6, 7, 429.7, 8.3, 9.1, 0.047, 0.050),
            (8, 8, 390.5, 8.7, 9.1, 0.043, 0.054)]
# PPN, s, c, total nodes, N_DUP=1, N_DUP=4
PAPER_T5 = [(2, 8, 2, 64, 24.39, 24.55), (5, 12, 2, 58, 26.36, 28.04), (8, 16, 2, 64, 32.16, 34.69),
            (4, 9, 3, 61, 22.86, 23.53), (7, 12, 3, 62, 28.21, 30.15), (1, 4, 4, 64, 10.75, 11.86),
            (4, 8, 4, 64, 22.05, 23.03), (2, 5, 5, 63, 11.25, 12.22), (4, 6, 6, 54, 18.12, 19.14),
            (6, 7, 7, 58, 18.96, 20.05), (8, 8, 8, 64, 20.28, 21.70)]


DEFAULT_POLL = "1e-9"  # smpi/smpirun.sh's smpi/test and smpi/iprobe


def run(args, np_, ppn, sim_args, tag):
  """Run ssc_sim; return {(alg, ndup): (tflops, t, t_comm, t_comp)}."""
  os.makedirs(args.out, exist_ok=True)
  log = os.path.join(args.out, f"{tag}_{args.net}{args.sfx}.txt")
  env = dict(os.environ, OVL_SMPI_FLOPS="skip", OVL_SMPI_SHARED_MALLOC="1048576", OVL_SMPI_PPN=str(ppn),
             OVL_SMPI_NET=args.net, OVL_SMPI_WORK=os.path.join(args.out, "platforms"))
  if args.flowcap:
    env["OVL_SMPI_FLOWCAP"] = args.flowcap
  if args.poll != DEFAULT_POLL:
    env["OVL_SMPI_CFG"] = f"--cfg=smpi/test:{args.poll} --cfg=smpi/iprobe:{args.poll} " + env.get("OVL_SMPI_CFG", "")
  cmd = ["timeout", str(args.timeout), os.path.join(HERE, "smpirun.sh"), "-np", str(np_)]
  cmd += ["--sumrate", args.sumrate] if args.sumrate else []
  cmd += [os.path.join(args.build, "ssc_sim")] + sim_args + ["--reps", "1", "--warmup", "0"]
  if not os.path.exists(log) and np_ > args.max_ranks:
    return {}
  if not (os.path.exists(log) and not args.rerun):
    t0 = time.time()
    p = subprocess.run(cmd, env=env, cwd=args.out, capture_output=True, text=True)
    if p.returncode != 0:  # no log: the next call runs it again; the table shows "-"
      sys.stderr.write(p.stdout[-2000:] + p.stderr[-2000:])
      print(f"repro_ssc: {tag} failed ({p.returncode}; 124: more than --timeout {args.timeout} s)", file=sys.stderr)
      return {}
    with open(log, "w") as f:
      cfg = f"OVL_SMPI_CFG='{env['OVL_SMPI_CFG']}' " if "OVL_SMPI_CFG" in env else ""
      cfg += f"OVL_SMPI_FLOWCAP={args.flowcap} " if args.flowcap else ""
      f.write(f"# OVL_SMPI_FLOPS=skip OVL_SMPI_PPN={ppn} {cfg}" + " ".join(cmd[2:]) + "\n" + p.stdout + f"# host time {time.time() - t0:.0f} s\n")
    print(f"# {tag}: {np_} simulated ranks, PPN {ppn}: {time.time() - t0:.0f} s of host time", file=sys.stderr)
  res = {}
  for line in open(log):
    w = line.split()
    if len(w) >= 10 and w[0].startswith("alg") and not line.startswith("#"):
      res[(int(w[0][3:]), int(w[1]))] = (float(w[6]), float(w[5]), float(w[7]), float(w[8]))
    elif len(w) == 10 and w[0] == "volume":  # volume algA ndup=D nodes=K max mean bcast reduce p2p other
      res[("volume", int(w[1][3:]), int(w[2][5:]))] = tuple(float(x) for x in w[4:])
  return res


def table1(args):
  out = []
  t1 = ["| system | n | Alg. 3 | Alg. 4 | Alg. 5 (N_DUP=4) | Alg. 5 / Alg. 4 |", "|---|---|---|---|---|---|"]
  t2 = ["| system | " + " | ".join(f"N_DUP={d}" for d in range(1, 7)) + " |", "|---|" + "---|" * 6]
  csv = ["system,n,ndup,tflops,paper"]
  for name, n in SIZES.items():
    if args.systems and name not in args.systems:
      continue
    r = run(args, 64, 1, ["-n", str(n), "--algo", "alg3,alg4", "--ndup", "1"], f"t1_{name}_a34")
    r.update(run(args, 64, 1, ["-n", str(n), "--algo", "alg5", "--ndup", "1,2,3,4,5,6"], f"t1_{name}_a5"))
    p = PAPER_T1[name]
    a3, a4, a5 = r[(3, 1)][0], r[(4, 1)][0], r[(5, 4)][0]
    t1.append(f"| {name} | {n} | {a3:.2f} ({p[0]}) | {a4:.2f} ({p[1]}) | {a5:.2f} ({p[2]}) | {a5 / a4:.2f} ({p[3]}) |")
    t2.append(f"| {name} | " + " | ".join(f"{r[(5, d)][0]:.2f} ({PAPER_T2[name][d - 1]})" for d in range(1, 7)) + " |")
    csv += [f"{name},{n},{d},{r[(5, d)][0]:.4f},{PAPER_T2[name][d - 1]}" for d in range(1, 7)]
    out.append((name, r))
  text = ("Table I: TFLOP/s, simulated (paper), 64 nodes x 1 rank, 4x4x4 mesh\n\n" + "\n".join(t1) +
          "\n\nTable II: Algorithm 5, TFLOP/s by N_DUP, simulated (paper)\n\n" + "\n".join(t2) + "\n")
  return text, csv


def table3(args):
  rows = ["| PPN | mesh | nodes | N_DUP=1 | N_DUP=4 | N_DUP=4 / 1 |", "|---|---|---|---|---|---|"]
  csv = ["ppn,mesh,ndup1,ndup4,paper1,paper4"]
  for ppn, p, nodes, q1, q4 in PAPER_T3:
    r = run(args, p**3, ppn, ["-n", "7645", "--algo", "alg5", "--ndup", "1,4"], f"t3_ppn{ppn}")
    if not r:
      rows.append(f"| {ppn} | {p}x{p}x{p} | {-(-p**3 // ppn)} ({nodes}) | - ({q1}) | - ({q4}) | - ({q4 / q1:.2f}) |")
      continue
    a, b = r[(5, 1)][0], r[(5, 4)][0]
    rows.append(f"| {ppn} | {p}x{p}x{p} | {-(-p**3 // ppn)} ({nodes}) | {a:.2f} ({q1}) | {b:.2f} ({q4}) | "
                f"{b / a:.2f} ({q4 / q1:.2f}) |")
    csv.append(f"{ppn},{p},{a:.4f},{b:.4f},{q1},{q4}")
  return ("Table III: Algorithm 5, 1hsg_70 (n = 7645), TFLOP/s, simulated (paper)\n\n" + "\n".join(rows) + "\n"), csv


def table4(args):
  rows = ["| PPN | mesh | inter-node MB, busiest node: counted (paper's estimate) | mean over nodes | "
          "bcast / reduce / p2p MB (busiest node) | comm. time (s): simulated (paper's actual) |",
          "|---|---|---|---|---|---|"]
  csv = ["ppn,mesh,max_node_MB,mean_node_MB,bcast_MB,reduce_MB,p2p_MB,t_comm,paper_MB,paper_t"]
  for ppn, p, mb, _, _, _, tact in PAPER_T4:
    r = run(args, p**3, ppn, ["-n", "7645", "--algo", "alg4", "--ndup", "1", "--volume"], f"t4_ppn{ppn}")
    v, t = r.get(("volume", 4, 1)), r.get((4, 1))
    if not v or not t:
      rows.append(f"| {ppn} | {p}x{p}x{p} | - ({mb}) | - | - | - ({tact}) |")
      continue
    rows.append(f"| {ppn} | {p}x{p}x{p} | {v[0]:.1f} ({mb}) | {v[1]:.1f} | {v[2]:.1f} / {v[3]:.1f} / {v[4]:.1f} | "
                f"{t[2]:.3f} ({tact}) |")
    csv.append(f"{ppn},{p},{v[0]:.2f},{v[1]:.2f},{v[2]:.2f},{v[3]:.2f},{v[4]:.2f},{t[2]:.5f},{mb},{tact}")
  return ("Table IV: Algorithm 4 (N_DUP = 1), 1hsg_70 (n = 7645), bytes between nodes counted by ovl and "
          "simulated communication time (paper)\n\n" + "\n".join(rows) + "\n"), csv


def table5(args):
  rows = ["| PPN | s x s x c | nodes | N_DUP=1 | N_DUP=4 |", "|---|---|---|---|---|"]
  csv = ["ppn,s,c,ndup1,ndup4,paper1,paper4"]
  res = {}
  for ppn, s, c, nodes, q1, q4 in sorted(PAPER_T5, key=lambda t: t[1] * t[1] * t[2]):  # smallest first
    res[(ppn, s, c)] = run(args, s * s * c, ppn, ["-n", "7645", "--algo", "alg6", "--ndup", "1,4", "--grid",
                                                  f"{s}x{s}x{c}"], f"t5_ppn{ppn}_{s}x{s}x{c}")
  for ppn, s, c, nodes, q1, q4 in PAPER_T5:
    r = res[(ppn, s, c)]
    if not r:
      rows.append(f"| {ppn} | {s}x{s}x{c} | {-(-s * s * c // ppn)} ({nodes}) | - ({q1}) | - ({q4}) |")
      continue
    a, b = r[(6, 1)][0], r[(6, 4)][0]
    rows.append(f"| {ppn} | {s}x{s}x{c} | {-(-s * s * c // ppn)} ({nodes}) | {a:.2f} ({q1}) | {b:.2f} ({q4}) |")
    csv.append(f"{ppn},{s},{c},{a:.4f},{b:.4f},{q1},{q4}")
  return ("Table V: Algorithm 6 (2.5D), 1hsg_70, TFLOP/s, simulated (paper)\n\n" + "\n".join(rows) + "\n"), csv


def main():
  ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
  ap.add_argument("table", choices=["table1", "table3", "table4", "table5", "all"])
  ap.add_argument("--build", default=os.path.join(ROOT, "build-smpi"))
  ap.add_argument("--net", default="ideal", choices=["ideal", "halfbw"])
  ap.add_argument("--out", default=None)
  ap.add_argument("--rerun", action="store_true", help="run again even when the raw output exists")
  ap.add_argument("--max-ranks", type=int, default=1 << 30, help="skip configurations with more ranks (table: -)")
  ap.add_argument("--timeout", type=int, default=3600, help="host seconds allowed per simulation (default 3600)")
  ap.add_argument("--poll", default=DEFAULT_POLL,
                  help="simulated seconds per failed MPI_Test/MPI_Iprobe (smpi/test, smpi/iprobe; default 1e-9); "
                  "other values tag the output files _pollX")
  ap.add_argument("--flowcap", default="", help="per-stream bandwidth cap, e.g. 2.4GBps (smpi/smpirun.sh --flowcap); "
                  "tags the output files _capRATE")
  ap.add_argument("--sumrate", default="", help="the reductions' arithmetic at this rate, e.g. 1.5GBps "
                  "(smpi/smpirun.sh --sumrate); raw files tagged _sumRATE")
  ap.add_argument("--systems", default="", help="Table I/II: only these systems (comma-separated, e.g. 1hsg_70)")
  args = ap.parse_args()
  args.systems = [x for x in args.systems.split(",") if x]
  args.build = os.path.abspath(args.build)
  args.out = os.path.abspath(args.out or os.path.join(args.build, "repro"))
  args.sfx = ("" if args.poll == DEFAULT_POLL else f"_poll{args.poll}") + (f"_cap{args.flowcap}" if args.flowcap else "") + \
      (f"_sum{args.sumrate}" if args.sumrate else "")
  for t in (["table1", "table3", "table4", "table5"] if args.table == "all" else [args.table]):
    text, csv = globals()[t](args)
    print(text)
    with open(os.path.join(args.out, f"{t}_{args.net}{args.sfx}.md"), "w") as f:
      f.write(text)
    with open(os.path.join(args.out, f"{t}_{args.net}{args.sfx}.csv"), "w") as f:
      f.write("\n".join(csv) + "\n")


if __name__ == "__main__":
  main()
