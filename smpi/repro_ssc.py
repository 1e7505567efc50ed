#!/usr/bin/env python3
"""Huang & Chow, Tables I, II, III and V, simulated with SimGrid SMPI on the
Stampede2-like platform (smpi/platforms/make_platforms.py), beside the paper.

usage: smpi/repro_ssc.py {table1,table3,table4,table5,all} [--build build-smpi] [--net ideal|halfbw]
                         [--out DIR] [--rerun] [--timeout SECONDS] [--poll SECONDS]
                         [--max-ranks P] [--flowcap RATE] [--sumrate RATE] [--mech FILE] [--systems 1hsg_70,...]
Table I and II come from one set of runs (table1). table4: Algorithm 4 (N_DUP 1)
at Table III's meshes with the bytes between nodes counted (ssc_sim --volume)
beside its simulated communication time. Every run is ssc_sim under
smpi/smpirun.sh with OVL_SMPI_FLOPS=skip (local products as 2mnk flops at the
node's dgemm rate) and shared memory for the matrix blocks; results are
deterministic. --flowcap RATE runs on the uniform-latency platform with every
message stream capped at RATE (smpi/smpirun.sh --flowcap, docs/guides/smpi.md); its
files are tagged _capRATE. --sumrate RATE charges the reductions' sums at RATE
of the summing rank's time (smpi/smpirun.sh --sumrate); files tagged _sumRATE.
--mech FILE runs on the platform of fitted mechanisms (smpi/smpirun.sh --mech,
smpi/fit_mech.py, docs/guides/smpi.md "Mechanisms"); files tagged _mech, and
the tables put the prediction beside the paper and beside the stand-ins
(--flowcap 9.3GBps --sumrate 1.62GBps, the figures of
docs/lab/smpi-reproductions.md), every row marked in or out of sample. Raw output goes to DIR (default build-smpi/repro), tables to
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


# The stand-ins (--flowcap 9.3GBps --sumrate 1.62GBps), as measured in docs/lab/smpi-reproductions.md,
# "The reductions' arithmetic": Table I (Alg. 3, 4, 5 at N_DUP 4), Table II (N_DUP 1, 2, 4, 6; 3 and 5
# not run), Table III (final code, SimGrid 4.1), Table IV (Alg. 4 communication, s), Table V (SimGrid 4.1).
STANDIN_T1 = {"1hsg_45": (16.82, 17.57, 20.31), "1hsg_60": (20.76, 21.63, 24.81), "1hsg_70": (22.51, 23.44, 26.75)}
STANDIN_T2 = {"1hsg_45": (18.12, 19.85, None, 20.31, None, 20.30), "1hsg_60": (22.28, 24.27, None, 24.81, None, 24.83),
              "1hsg_70": (24.12, 26.28, None, 26.75, None, 26.76)}
STANDIN_T3 = {1: (24.14, 26.76), 2: (26.90, 30.63), 4: (28.12, 30.28), 6: (28.93, 30.59), 8: (30.25, 31.16)}
STANDIN_T4 = {1: 0.0583, 2: 0.0594, 4: 0.0551, 6: 0.0583, 8: 0.0454}
STANDIN_T5 = {(2, 8, 2): (53.25, 54.01), (5, 12, 2): (49.57, 50.33), (8, 16, 2): (54.30, 55.10), (4, 9, 3): (44.99, 47.80),
              (7, 12, 3): (46.91, 49.51), (1, 4, 4): (25.58, 27.47), (4, 8, 4): (38.12, 39.98), (2, 5, 5): (27.05, 29.23),
              (4, 6, 6): (23.55, 26.08), (6, 7, 7): (24.29, 27.31), (8, 8, 8): (29.12, 31.53)}
OOS = "out of sample"


def f2(x):
  return "-" if x is None else f"{x:.2f}"


DEFAULT_POLL = "1e-9"  # smpi/smpirun.sh's smpi/test and smpi/iprobe


def run(args, np_, ppn, sim_args, tag):
  """Run ssc_sim; return {(alg, ndup): (tflops, t, t_comm, t_comp)}."""
  os.makedirs(args.out, exist_ok=True)
  log = os.path.join(args.out, f"{tag}_{args.net}{args.sfx}.txt")
  env = dict(os.environ, OVL_SMPI_FLOPS="skip", OVL_SMPI_SHARED_MALLOC="1048576", OVL_SMPI_PPN=str(ppn),
             OVL_SMPI_NET=args.net, OVL_SMPI_WORK=os.path.join(args.out, "platforms"))
  if args.flowcap:
    env["OVL_SMPI_FLOWCAP"] = args.flowcap
  if args.mech:
    env["OVL_SMPI_MECH"] = args.mech
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
      cfg += f"OVL_SMPI_MECH={args.mech} " if args.mech else ""
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
  m1 = ["| system | Alg. 3 | Alg. 4 | Alg. 5 (N_DUP=4) | Alg. 5 / Alg. 4 | sample |", "|---|---|---|---|---|---|"]
  m2 = ["| system | " + " | ".join(f"N_DUP={d}" for d in range(1, 7)) + " | N_DUP 4 over 1 | sample |",
        "|---|" + "---|" * 8]
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
    if args.mech:
      sd, s2 = STANDIN_T1[name], STANDIN_T2[name]
      m1.append(f"| {name} | {a3:.2f} / {sd[0]:.2f} / {p[0]} | {a4:.2f} / {sd[1]:.2f} / {p[1]} | "
                f"{a5:.2f} / {sd[2]:.2f} / {p[2]} | **{a5 / a4:.3f}** / {sd[2] / sd[1]:.2f} / {p[3]} | {OOS} |")
      m2.append(f"| {name} | " + " | ".join(f"{r[(5, d)][0]:.2f} / {f2(s2[d - 1])} / {PAPER_T2[name][d - 1]}"
                                             for d in range(1, 7)) +
                f" | **{r[(5, 4)][0] / r[(5, 1)][0] - 1:+.1%}** / {s2[3] / s2[0] - 1:+.1%} / "
                f"{PAPER_T2[name][3] / PAPER_T2[name][0] - 1:+.1%} | {OOS} |")
  if args.mech:
    return ("Table I: TFLOP/s, predicted / stand-in / paper, 64 nodes x 1 rank, 4x4x4 mesh\n\n" + "\n".join(m1) +
            "\n\nTable II: Algorithm 5, TFLOP/s by N_DUP, predicted / stand-in / paper\n\n" + "\n".join(m2) + "\n"), csv
  text = ("Table I: TFLOP/s, simulated (paper), 64 nodes x 1 rank, 4x4x4 mesh\n\n" + "\n".join(t1) +
          "\n\nTable II: Algorithm 5, TFLOP/s by N_DUP, simulated (paper)\n\n" + "\n".join(t2) + "\n")
  return text, csv


def table3(args):
  rows = ["| PPN | mesh | nodes | N_DUP=1 | N_DUP=4 | N_DUP=4 / 1 |", "|---|---|---|---|---|---|"]
  if args.mech:
    rows = ["| PPN | mesh | N_DUP=1: predicted / stand-in / paper | N_DUP=4 | N_DUP=4 / 1 | sample |",
            "|---|---|---|---|---|---|"]
  csv = ["ppn,mesh,ndup1,ndup4,paper1,paper4"]
  for ppn, p, nodes, q1, q4 in PAPER_T3:
    r = run(args, p**3, ppn, ["-n", "7645", "--algo", "alg5", "--ndup", "1,4"], f"t3_ppn{ppn}")
    if not r and args.mech:
      rows.append(f"| {ppn} | {p}x{p}x{p} | - / {STANDIN_T3[ppn][0]:.2f} / {q1} | - / {STANDIN_T3[ppn][1]:.2f} / {q4} | "
                  f"- / {STANDIN_T3[ppn][1] / STANDIN_T3[ppn][0]:.2f} / {q4 / q1:.2f} | not run (--max-ranks) |")
      continue
    if not r:
      rows.append(f"| {ppn} | {p}x{p}x{p} | {-(-p**3 // ppn)} ({nodes}) | - ({q1}) | - ({q4}) | - ({q4 / q1:.2f}) |")
      continue
    a, b = r[(5, 1)][0], r[(5, 4)][0]
    if args.mech:
      sd = STANDIN_T3[ppn]
      rows.append(f"| {ppn} | {p}x{p}x{p} | {a:.2f} / {sd[0]:.2f} / {q1} | {b:.2f} / {sd[1]:.2f} / {q4} | "
                  f"{b / a:.2f} / {sd[1] / sd[0]:.2f} / {q4 / q1:.2f} | {OOS} |")
    else:
      rows.append(f"| {ppn} | {p}x{p}x{p} | {-(-p**3 // ppn)} ({nodes}) | {a:.2f} ({q1}) | {b:.2f} ({q4}) | "
                  f"{b / a:.2f} ({q4 / q1:.2f}) |")
    csv.append(f"{ppn},{p},{a:.4f},{b:.4f},{q1},{q4}")
  return ("Table III: Algorithm 5, 1hsg_70 (n = 7645), TFLOP/s, simulated (paper)\n\n" + "\n".join(rows) + "\n"), csv


def table4(args):
  rows = ["| PPN | mesh | inter-node MB, busiest node: counted (paper's estimate) | mean over nodes | "
          "bcast / reduce / p2p MB (busiest node) | comm. time (s): simulated (paper's actual) |",
          "|---|---|---|---|---|---|"]
  if args.mech:
    rows[0] = rows[0].replace("simulated (paper's actual) |", "predicted / stand-in / paper's actual | sample |")
    rows[1] += "---|"
  csv = ["ppn,mesh,max_node_MB,mean_node_MB,bcast_MB,reduce_MB,p2p_MB,t_comm,paper_MB,paper_t"]
  for ppn, p, mb, _, _, _, tact in PAPER_T4:
    r = run(args, p**3, ppn, ["-n", "7645", "--algo", "alg4", "--ndup", "1", "--volume"], f"t4_ppn{ppn}")
    v, t = r.get(("volume", 4, 1)), r.get((4, 1))
    if (not v or not t) and args.mech:
      rows.append(f"| {ppn} | {p}x{p}x{p} | - ({mb}) | - | - | - / {STANDIN_T4[ppn]:.3f} / {tact} | not run |")
      continue
    if not v or not t:
      rows.append(f"| {ppn} | {p}x{p}x{p} | - ({mb}) | - | - | - ({tact}) |")
      continue
    if args.mech:
      rows.append(f"| {ppn} | {p}x{p}x{p} | {v[0]:.1f} ({mb}) | {v[1]:.1f} | {v[2]:.1f} / {v[3]:.1f} / {v[4]:.1f} | "
                  f"{t[2]:.3f} / {STANDIN_T4[ppn]:.3f} / {tact} | {OOS} (the reduce BW column is in sample) |")
    else:
      rows.append(f"| {ppn} | {p}x{p}x{p} | {v[0]:.1f} ({mb}) | {v[1]:.1f} | {v[2]:.1f} / {v[3]:.1f} / {v[4]:.1f} | "
                  f"{t[2]:.3f} ({tact}) |")
    csv.append(f"{ppn},{p},{v[0]:.2f},{v[1]:.2f},{v[2]:.2f},{v[3]:.2f},{v[4]:.2f},{t[2]:.5f},{mb},{tact}")
  return ("Table IV: Algorithm 4 (N_DUP = 1), 1hsg_70 (n = 7645), bytes between nodes counted by ovl and "
          "simulated communication time (paper)\n\n" + "\n".join(rows) + "\n"), csv


def table5(args):
  rows = ["| PPN | s x s x c | nodes | N_DUP=1 | N_DUP=4 |", "|---|---|---|---|---|"]
  if args.mech:
    rows = ["| PPN | s x s x c | N_DUP=1: predicted / stand-in / paper | N_DUP=4 | sample |", "|---|---|---|---|---|"]
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
    if args.mech:
      sd = STANDIN_T5[(ppn, s, c)]
      rows.append(f"| {ppn} | {s}x{s}x{c} | {a:.2f} / {sd[0]:.2f} / {q1} | {b:.2f} / {sd[1]:.2f} / {q4} | {OOS} |")
    else:
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
  ap.add_argument("--mech", default="", help="the platform of fitted mechanisms, e.g. smpi/platforms/mech.env "
                  "(smpi/smpirun.sh --mech); raw files tagged _mech, tables beside the stand-ins")
  ap.add_argument("--systems", default="", help="Table I/II: only these systems (comma-separated, e.g. 1hsg_70)")
  args = ap.parse_args()
  args.systems = [x for x in args.systems.split(",") if x]
  args.build = os.path.abspath(args.build)
  args.out = os.path.abspath(args.out or os.path.join(args.build, "repro"))
  args.sfx = ("" if args.poll == DEFAULT_POLL else f"_poll{args.poll}") + (f"_cap{args.flowcap}" if args.flowcap else "") + \
      (f"_sum{args.sumrate}" if args.sumrate else "") + ("_mech" if args.mech else "")
  if args.mech:
    if args.flowcap or args.sumrate:
      ap.error("--mech replaces --flowcap and --sumrate")
    args.mech = os.path.abspath(args.mech)
  for t in (["table1", "table3", "table4", "table5"] if args.table == "all" else [args.table]):
    text, csv = globals()[t](args)
    print(text)
    with open(os.path.join(args.out, f"{t}_{args.net}{args.sfx}.md"), "w") as f:
      f.write(text)
    with open(os.path.join(args.out, f"{t}_{args.net}{args.sfx}.csv"), "w") as f:
      f.write("\n".join(csv) + "\n")


if __name__ == "__main__":
  main()
