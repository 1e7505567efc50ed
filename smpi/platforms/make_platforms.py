#!/usr/bin/env python3
"""Write SimGrid platform files and smpirun hostfiles for ovl's simulations.

  stampede2  64 nodes (default) x 48 cores, Omni-Path-like 100 Gb/s links in a
             two-level fat tree with full bisection (8 leaf switches of 8 nodes,
             4 core switches, 2 links from every leaf to every core switch).
             A node is one host whose speed is the node's dgemm rate (all 48
             cores, as MKL runs when PPN = 1); ranks on a node share it, like
             PPN ranks that each run dgemm on 48/PPN cores.
  stampede2flat
             the same nodes and links, but every node's link goes to one
             non-blocking switch (a crossbar: full bisection as the fat tree),
             so every inter-node route has the same latency, 2 x 1 us. With
             --flowcap RATE it also prints the TCP-gamma window that caps
             every inter-node flow at RATE (SimGrid bounds a flow at
             gamma / (2 x route latency)): smpi/smpirun.sh --flowcap.
  stampede2mech
             stampede2flat without a cap, plus one memory host m<i> beside
             every node s<i> whose speed is the node's memory rate (--nodemem
             RATE, one flop per byte): the shared per-node resource on which
             ovl's reductions add and copy (src/comm/sched.c, OVL_SMPI_NODEMEM;
             smpi/smpirun.sh --mech, docs/guides/smpi.md "Mechanisms").
  local      this machine, for validating simulations against real runs
             (smpi/validate.sh): one host of --cores cores, each running at
             --speed flop/s (a dgemm rate measured here on one core), ranks
             on its cores; intra-host messages over the loopback of the
             Stampede2-like node (20 GB/s, 0.3 us).
  bgp        BlueGene/P-like: a 3D torus of 4-core nodes (850 MHz PowerPC 450,
             3.4 GFLOP/s peak per core), 425 MB/s per torus link and direction,
             VN mode: one rank per core.
  bgpsmp     the same torus and links in SMP mode: one rank per node, the node
             one host running at its 4 cores' rate (11.6 GFLOP/s, a 4-thread
             dgemm); --nodes N (a power of two), one rank per node. For the
             crossover of eigensolvers and purification (smpi/crossover.sh
             PLATFORM=bgpsmp), which counts nodes.

usage: make_platforms.py stampede2 [--nodes N] [--ppn K] DIR
       make_platforms.py stampede2flat [--nodes N] [--ppn K] [--flowcap RATE] DIR
       make_platforms.py stampede2mech [--nodes N] [--ppn K] --nodemem RATE DIR
       make_platforms.py bwfactor NHALF   (prints smpi/bw-factor for s / (s + NHALF) bytes)
       make_platforms.py bgp --ranks P DIR
       make_platforms.py bgpsmp --nodes N DIR
       make_platforms.py local --speed FLOPS [--cores K] --ranks P DIR
       make_platforms.py rate RATE        (prints RATE, e.g. 1.7GBps, in bytes/s)
Writes DIR/<name>.xml and DIR/<name>_<ranks>.hostfile (rank r on the node of
rank r, ranks of one node consecutive: the "natural" assignment).
"""
import argparse
import math
import os
import sys

HEADER = '<?xml version="1.0"?>\n<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">\n<platform version="4.1">\n'
# A FAT_TREE or TORUS cluster sits in a zone of its own: SimGrid 4.1 builds such
# a cluster inside its parent zone and crashes when it has none (a top-level
# cluster); routes inside the cluster are the same either way.
ZONE_OPEN = '  <zone id="world" routing="Full">\n'
ZONE_CLOSE = '  </zone>\n'

# Stampede2 Skylake node: 2 x 24-core Xeon Platinum 8160. Huang & Chow report
# 0.01794 s for the two local products of 1hsg_70 on a 4x4x4 mesh, i.e.
# 2 * 2 * 1912^3 flop / 0.01794 s = 1.56 TFLOP/s per node with MKL.
S2_NODE_FLOPS = "1.56Tf"
S2_LINK_BW = "12GBps"      # measured peak unidirectional bandwidth (their Fig. 3)
S2_LINK_LAT = "0.5us"      # per link; 2 to 4 links between two nodes
S2_SHM_BW = "20GBps"       # intra-node (shared memory) copy
S2_SHM_LAT = "0.3us"
# stampede2flat: 1 us on each node's link, none in the switch, so every
# inter-node route takes 2 us (the fat tree's routes: 1 us within a leaf
# switch, 2 us across the core).
S2F_LINK_LAT_S = 1e-6
S2F_ROUTE_LAT_S = 2 * S2F_LINK_LAT_S

# BlueGene/P (Shaheen): 4 cores x 3.4 GFLOP/s peak; ESSL dgemm at ~85 %.
BGP_CORE_FLOPS = "2.9Gf"
BGP_LINK_BW = "425MBps"
BGP_LINK_LAT = "0.5us"     # per hop; plus the loopback for ranks of one node
BGP_SHM_BW = "2GBps"
BGP_SHM_LAT = "0.5us"


def write(path, text):
  tmp = f"{path}.{os.getpid()}.tmp"  # concurrent runs write the same platform
  with open(tmp, "w") as f:
    f.write(text)
  os.replace(tmp, path)


def hostfile(prefix, nodes, ppn, ranks):
  lines = []
  left = ranks
  for i in range(nodes):
    if left <= 0:
      break
    k = min(ppn, left)
    lines += [f"{prefix}{i}"] * k  # unrolled: smpirun would write a temporary file for "host:k"
    left -= k
  if left > 0:
    raise SystemExit(f"{ranks} ranks do not fit on {nodes} nodes x {ppn}")
  return "\n".join(lines) + "\n"


def stampede2(d, nodes, ppn, ranks):
  leaves = max(1, nodes // 8)
  per_leaf = nodes // leaves
  if leaves * per_leaf != nodes:
    raise SystemExit("stampede2: the node count must be a multiple of 8 (or below 8)")
  cores_sw = min(4, max(1, per_leaf // 2))
  par = max(1, per_leaf // cores_sw)
  topo = f"2;{per_leaf},{leaves};1,{cores_sw};1,{par}" if leaves > 1 else f"1;{per_leaf};1;1"
  name = f"stampede2_{nodes}"
  xml = HEADER + ZONE_OPEN + f'''  <!-- Stampede2-like: {nodes} Skylake nodes, Omni-Path-like fat tree ({topo}) -->
  <cluster id="{name}" prefix="s" suffix="" radical="0-{nodes - 1}" speed="{S2_NODE_FLOPS}" core="1"
           bw="{S2_LINK_BW}" lat="{S2_LINK_LAT}" sharing_policy="SPLITDUPLEX"
           loopback_bw="{S2_SHM_BW}" loopback_lat="{S2_SHM_LAT}"
           topology="FAT_TREE" topo_parameters="{topo}"/>
{ZONE_CLOSE}</platform>
'''
  write(os.path.join(d, name + ".xml"), xml)
  write(os.path.join(d, f"{name}_ppn{ppn}_{ranks}.hostfile"), hostfile("s", nodes, ppn, ranks))
  return name


def stampede2flat(d, nodes, ppn, ranks):
  name = f"stampede2flat_{nodes}"
  # No backbone element: a cluster without one routes a node's link to the
  # other's directly, which is the non-blocking switch. An infinite FATPIPE
  # backbone gave the same times (within 4e-5), but it put every inter-node
  # flow into one constraint of SimGrid's max-min solver, which then solved
  # the whole network at every event: 444 s of host time against 21 s for
  # Table IV at PPN 4 (docs/lab/smpi-reproductions.md, "SimGrid 4.1 for the large runs").
  xml = HEADER + f'''  <!-- Stampede2-like: {nodes} Skylake nodes, one non-blocking switch: uniform route latency -->
  <cluster id="{name}" prefix="s" suffix="" radical="0-{nodes - 1}" speed="{S2_NODE_FLOPS}" core="1"
           bw="{S2_LINK_BW}" lat="{S2F_LINK_LAT_S * 1e6:g}us" sharing_policy="SPLITDUPLEX"
           loopback_bw="{S2_SHM_BW}" loopback_lat="{S2_SHM_LAT}"/>
</platform>
'''
  write(os.path.join(d, name + ".xml"), xml)
  write(os.path.join(d, f"{name}_ppn{ppn}_{ranks}.hostfile"), hostfile("s", nodes, ppn, ranks))
  return name


def stampede2mech(d, nodes, ppn, ranks, nodemem):
  name = f"stampede2mech_{nodes}_{nodemem:.6g}"
  xml = HEADER + ZONE_OPEN + f'''  <!-- Stampede2-like: {nodes} Skylake nodes, one non-blocking switch, and a memory host per node -->
  <cluster id="{name}" prefix="s" suffix="" radical="0-{nodes - 1}" speed="{S2_NODE_FLOPS}" core="1"
           bw="{S2_LINK_BW}" lat="{S2F_LINK_LAT_S * 1e6:g}us" sharing_policy="SPLITDUPLEX"
           loopback_bw="{S2_SHM_BW}" loopback_lat="{S2_SHM_LAT}"/>
  <!-- m<i>: node s<i>'s memory, {nodemem:.6g} bytes/s shared by its ranks' sums and copies (no messages) -->
  <cluster id="{name}_mem" prefix="m" suffix="" radical="0-{nodes - 1}" speed="{nodemem:.6g}f" core="1"
           bw="{S2_LINK_BW}" lat="{S2F_LINK_LAT_S * 1e6:g}us"/>
{ZONE_CLOSE}</platform>
'''
  write(os.path.join(d, name + ".xml"), xml)
  write(os.path.join(d, f"{name}_ppn{ppn}_{ranks}.hostfile"), hostfile("s", nodes, ppn, ranks))
  return name


def bw_factor(nhalf):
  """smpi/bw-factor for f(s) = s / (s + nhalf): one step per half octave of
  message size from 1 KiB to 1 GiB, each step at the factor of its lower
  size (SimGrid applies the entry of the largest size <= the message's)."""
  steps = [(0, 1024 / (1024 + nhalf))]
  s = 1024.0
  while s <= 2**30:
    steps.append((int(s), s / (s + nhalf)))
    s *= 2**0.5
  return ";".join(f"{a}:{f:.5f}" for a, f in steps)


UNITS = {"Bps": 1, "kBps": 1e3, "KBps": 1e3, "MBps": 1e6, "GBps": 1e9, "TBps": 1e12,
         "KiBps": 2**10, "MiBps": 2**20, "GiBps": 2**30}


def rate_bytes(text):
  """'2.4GBps' (SimGrid's units; a bare number is bytes/s) -> bytes/s."""
  for u in sorted(UNITS, key=len, reverse=True):
    if text.endswith(u):
      num, f = text[:-len(u)], UNITS[u]
      break
  else:
    num, f = text, 1
  try:
    v = float(num) * f
  except ValueError:
    raise SystemExit(f"'{text}' is not a rate (e.g. 2.4GBps)")
  if not v > 0:
    raise SystemExit(f"rate '{text}' must be positive")
  return v


def torus_dims(nodes):
  """Near-cubic 3D torus of nodes (powers of two), largest dimension last."""
  e = int(round(math.log2(nodes)))
  if 2**e != nodes:
    raise SystemExit("bgp: the node count must be a power of two")
  dims = [2 ** (e // 3)] * 3
  for x in range(e % 3):
    dims[2 - x] *= 2
  return dims


def torus_xml(name, nodes, dims, speed, cores, comment):
  """The BlueGene/P-like 3D torus of nodes with `cores` cores of `speed` each."""
  return HEADER + ZONE_OPEN + f'''  <!-- {comment} -->
  <cluster id="{name}" prefix="b" suffix="" radical="0-{nodes - 1}" speed="{speed}" core="{cores}"
           bw="{BGP_LINK_BW}" lat="{BGP_LINK_LAT}" sharing_policy="SPLITDUPLEX"
           loopback_bw="{BGP_SHM_BW}" loopback_lat="{BGP_SHM_LAT}"
           topology="TORUS" topo_parameters="{dims[0]},{dims[1]},{dims[2]}"/>
{ZONE_CLOSE}</platform>
'''


def bgp(d, ranks):
  nodes = max(1, (ranks + 3) // 4)
  nodes = 2 ** math.ceil(math.log2(nodes))
  dims = torus_dims(nodes)
  name = f"bgp_{nodes}"
  xml = torus_xml(name, nodes, dims, BGP_CORE_FLOPS, 4,
                  f"BlueGene/P-like: {nodes} nodes x 4 cores (VN mode), 3D torus {dims[0]}x{dims[1]}x{dims[2]}")
  write(os.path.join(d, name + ".xml"), xml)
  write(os.path.join(d, f"{name}_{ranks}.hostfile"), hostfile("b", nodes, 4, ranks))
  return name


def bgpsmp(d, nodes):
  dims = torus_dims(nodes)
  name = f"bgpsmp_{nodes}"
  node_flops = f"{4 * float(BGP_CORE_FLOPS[:-2]):.6g}Gf"
  xml = torus_xml(name, nodes, dims, node_flops, 1, f"BlueGene/P-like, SMP mode: {nodes} nodes, one rank per node "
                  f"on its 4 cores, 3D torus {dims[0]}x{dims[1]}x{dims[2]}")
  write(os.path.join(d, name + ".xml"), xml)
  write(os.path.join(d, f"{name}_{nodes}.hostfile"), hostfile("b", nodes, 1, nodes))
  return name


def local(d, speed, cores, ranks):
  if ranks > cores:
    raise SystemExit(f"local: {ranks} ranks on {cores} cores (one rank per core)")
  name = f"local_{cores}c_{speed:.6g}"
  xml = HEADER + ZONE_OPEN + f'''  <!-- this machine: one host, {cores} cores at {speed:.6g} flop/s each (a measured one-core dgemm rate) -->
  <cluster id="{name}" prefix="l" suffix="" radical="0-0" speed="{speed:.6g}f" core="{cores}"
           bw="{S2_LINK_BW}" lat="{S2_LINK_LAT}" loopback_bw="{S2_SHM_BW}" loopback_lat="{S2_SHM_LAT}"/>
{ZONE_CLOSE}</platform>
'''
  write(os.path.join(d, name + ".xml"), xml)
  write(os.path.join(d, f"{name}_{ranks}.hostfile"), hostfile("l", 1, cores, ranks))
  return name


def main():
  if len(sys.argv) == 3 and sys.argv[1] == "rate":
    print(f"{rate_bytes(sys.argv[2]):.6g}")
    return
  if len(sys.argv) == 3 and sys.argv[1] == "bwfactor":
    print(bw_factor(float(sys.argv[2])))
    return
  ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
  ap.add_argument("kind", choices=["stampede2", "stampede2flat", "stampede2mech", "bgp", "bgpsmp", "local"])
  ap.add_argument("dir")
  ap.add_argument("--nodes", type=int, default=64)
  ap.add_argument("--ppn", type=int, default=1)
  ap.add_argument("--ranks", type=int, default=0, help="ranks in the hostfile (default: nodes x ppn)")
  ap.add_argument("--speed", type=float, default=0.0, help="local: flop/s of one core")
  ap.add_argument("--cores", type=int, default=2, help="local: cores of the host")
  ap.add_argument("--flowcap", default=None, help="stampede2flat: also print the TCP-gamma (bytes) for this cap")
  ap.add_argument("--nodemem", default=None, help="stampede2mech: the node's memory rate, e.g. 30GBps")
  a = ap.parse_args()
  os.makedirs(a.dir, exist_ok=True)
  if a.kind == "stampede2":
    print(stampede2(a.dir, a.nodes, a.ppn, a.ranks or a.nodes * a.ppn))
  elif a.kind == "stampede2flat":
    name = stampede2flat(a.dir, a.nodes, a.ppn, a.ranks or a.nodes * a.ppn)
    print(name if a.flowcap is None else f"{name} {rate_bytes(a.flowcap) * 2 * S2F_ROUTE_LAT_S:.6g}")
  elif a.kind == "stampede2mech":
    if not a.nodemem:
      raise SystemExit("stampede2mech: --nodemem RATE is required")
    print(stampede2mech(a.dir, a.nodes, a.ppn, a.ranks or a.nodes * a.ppn, rate_bytes(a.nodemem)))
  elif a.kind == "local":
    if not a.speed > 0:
      raise SystemExit("local: --speed FLOPS (> 0) is required")
    print(local(a.dir, a.speed, a.cores, a.ranks or a.cores))
  elif a.kind == "bgpsmp":
    print(bgpsmp(a.dir, a.nodes))
  else:
    print(bgp(a.dir, a.ranks or 4 * a.nodes))


if __name__ == "__main__":
  main()
