#!/usr/bin/env bash
# Where purification wins (docs/guides/smpi.md, "The crossover"): ScaLAPACK's
# pdsyevd and pdsyevr, each with the density product (smpi/eig_sim.c), against
# every `ovl purify` method in float64 and mixed precision, on the simulated
# Stampede2-like cluster, one rank per node, n x P points. Every run's output
# and host time is kept in OUT (a point already there is not run again), so
# the work survives an interruption; `smpi/crossover.sh --table` prints the
# table of what is there.
#
# usage: smpi/crossover.sh [--table] [N:P ...]     (default: the points of POINTS)
#   POINTS="2000:16 2000:64 ..."  the (n, nodes) points, in the order they are run
#   OUT=$HOME/.cache/ovl/crossover   results (one directory per point)
#   OVL_SMPI_HOST_SPEED   this machine's one-core dgemm rate (flop/s) for eig_sim's
#                         scaling; required (smpi/validate.sh measures it) so that
#                         every point uses the same one
#   POLL=1e-6             SMPI's poll quantum (smpi/test, smpi/iprobe), docs/guides/smpi.md
#   BUILD_SMPI=build-smpi  the SMPI build of ovl (target ovl)
#   METHODS="canonical:double sp2:double trs4:double sp2acc:double sp2:mixed trs4:mixed sp2acc:mixed"
#   SOLVERS="evd evr"
#   MODE=computed         computed: ovl's products also computed (OVL_SMPI_FLOPS=real), the
#                         iterations and stopping the real ones; each run's iteration schedule
#                         is kept in OUT/n<n>_P<P>/sched_<method>_<precision>.txt
#                         (OVL_SMPI_SCHEDULE_OUT). replay: ovl's products charged only
#                         (OVL_SMPI_FLOPS=skip), the matrices in memory shared by the ranks
#                         (OVL_SMPI_SHARED_MALLOC, default 65536 bytes), the iterations those of the schedules in
#                         SCHED (OVL_SMPI_SCHEDULE): the same simulated time as the run that
#                         computed when the schedule is that run's (docs/guides/smpi.md)
#   SCHED=$HOME/.cache/ovl/crossover/n2000_P16   MODE=replay: the computed point whose schedules are replayed
#   PLATFORM=stampede2    or bgpsmp: the BlueGene/P-like 3D torus, one rank per node at the
#                         node's 4 cores' rate (smpi/platforms/make_platforms.py bgpsmp)
# The matrices: n = 2000, 4000 and 8000 are data/big/synth2000_ccpvdz, synth4000_ccpvdz
# and synth8000_ccpvdz (tools/make-cases), the same file for both codes.
# The purifications: ovl's products charged as flops at the node's speed
# (OVL_SMPI_FLOPS=real: also computed, so the iterations and the stopping are
# the real ones), ovl's own collectives (--backend own); the canonical method
# with --algo auto (SymmSquareCube's algorithm and N_DUP from the cost model
# of the built-in Stampede2 machine) and --allow-idle (it takes p^3 ranks);
# the symmetric-square methods (one algorithm) with their default plan.
# The eigensolvers: executed and scaled by OVL_SMPI_HOST_SPEED (smpi/eig_sim.sh).
# Memory: a simulation holds every rank's blocks in one process; with the products
# computed, a purification at n = 4000 on 64 nodes took 7-13 GB. Run one such
# point at a time (two at once were killed by the out-of-memory killer on 23 GB).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
cd "$root"
# shellcheck source=/dev/null
. scripts/env.sh
OUT=${OUT:-$HOME/.cache/ovl/crossover}
POLL=${POLL:-1e-6}
BUILD_SMPI=${BUILD_SMPI:-build-smpi}
METHODS=${METHODS:-canonical:double sp2:double trs4:double sp2acc:double sp2:mixed trs4:mixed sp2acc:mixed}
SOLVERS=${SOLVERS:-evd evr}
MODE=${MODE:-computed}
PLATFORM=${PLATFORM:-stampede2}
case $PLATFORM in stampede2 | bgpsmp) ;; *) echo "crossover.sh: PLATFORM is stampede2 or bgpsmp, not $PLATFORM" >&2; exit 2 ;; esac
SCHED=${SCHED:-$HOME/.cache/ovl/crossover/n2000_P16}
case $MODE in computed | replay) ;; *) echo "crossover.sh: MODE is computed or replay, not $MODE" >&2; exit 2 ;; esac
POINTS=${POINTS:-2000:16 2000:64 4000:16 4000:64 2000:256 4000:256 2000:1024 4000:1024 8000:16 8000:64 8000:256 8000:1024}
table=0
pts=()
for a in "$@"; do
  case $a in --table) table=1 ;; *:*) pts+=("$a") ;; *) echo "crossover.sh: bad argument $a" >&2; exit 2 ;; esac
done
[ ${#pts[@]} -gt 0 ] || read -r -a pts <<<"$POINTS"
mkdir -p "$OUT"

fock() { echo "data/big/synth${1}_ccpvdz/fock.raw"; }
nocc() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['n_occ'])" "$(dirname "$(fock "$1")")/meta.json"; }
# Run one command into FILE unless FILE exists; FILE.host gets its host time (s) and the load,
# FILE.cpu its CPU time (user + system, s) and peak memory (KB) by /usr/bin/time when there is one.
run() {
  local f=$1; shift
  [ -s "$f" ] && return 0
  local t0 t1 tm=()
  [ -x /usr/bin/time ] && tm=(/usr/bin/time -f "%U %S %M" -o "$f.cpu")
  t0=$(date +%s.%N)
  if "${tm[@]}" "$@" >"$f.tmp" 2>"$f.err"; then
    t1=$(date +%s.%N)
    mv "$f.tmp" "$f"
    echo "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') $(cut -d' ' -f1 /proc/loadavg)" >"$f.host"
  else
    echo "crossover.sh: failed: $* (see $f.err)" >&2
  fi
}

if [ $table = 0 ]; then
  command -v smpirun >/dev/null || { echo "crossover.sh: SKIPPED: no smpirun"; exit 77; }
  [ -x "$BUILD_SMPI/ovl" ] || { echo "crossover.sh: no $BUILD_SMPI/ovl"; exit 2; }
  [ -n "${OVL_SMPI_HOST_SPEED:-}" ] || { echo "crossover.sh: set OVL_SMPI_HOST_SPEED (smpi/validate.sh prints it)"; exit 2; }
  export OVL_SMPI_PPN=1 OVL_SMPI_FLOPS=real
  if [ "$MODE" = replay ]; then
    export OVL_SMPI_FLOPS=skip OVL_SMPI_SHARED_MALLOC=${OVL_SMPI_SHARED_MALLOC:-65536}
    [ -d "$SCHED" ] || { echo "crossover.sh: MODE=replay: no schedule directory $SCHED"; exit 2; }
  fi
  export OVL_SMPI_CFG="--cfg=smpi/test:$POLL --cfg=smpi/iprobe:$POLL"
  for pt in "${pts[@]}"; do
    n=${pt%:*} P=${pt#*:}
    F=$(fock "$n")
    [ -f "$F" ] || { echo "crossover.sh: no $F (tools/make-cases synth${n}_ccpvdz): point $pt skipped" >&2; continue; }
    K=$(nocc "$n")
    d=$OUT/n${n}_P$P
    mkdir -p "$d"
    if [ "$PLATFORM" = bgpsmp ]; then # the torus of P nodes (smpirun.sh's default is the Stampede2-like cluster)
      work=${OVL_SMPI_WORK:-${TMPDIR:-/tmp}/ovl-smpi-$(id -u)}
      pn=$(python3 "$here/platforms/make_platforms.py" bgpsmp "$work" --nodes "$P")
      export OVL_SMPI_PLATFORM=$work/$pn.xml OVL_SMPI_HOSTFILE=$work/${pn}_$P.hostfile
      echo "$PLATFORM" >"$d/platform.txt"
    fi
    echo "$OVL_SMPI_HOST_SPEED" >"$d/host_speed.txt"
    for m in $METHODS; do
      meth=${m%:*} prec=${m#*:}
      extra=(--allow-idle)
      [ "$meth" = canonical ] && extra+=(--algo auto)
      [ "$meth" = canonical ] && [ "$prec" = mixed ] && continue
      if [ "$MODE" = replay ]; then
        sf=$SCHED/sched_${meth}_$prec.txt
        [ -s "$sf" ] || { echo "crossover.sh: no schedule $sf: $m at $pt skipped" >&2; continue; }
        sched=(env "OVL_SMPI_SCHEDULE=@$sf")
        cp "$sf" "$d/replayed_${meth}_$prec.txt"
      else
        sched=(env "OVL_SMPI_SCHEDULE_OUT=$d/sched_${meth}_$prec.txt")
      fi
      run "$d/purify_${meth}_$prec.json" "${sched[@]}" nice -n 19 "$here/smpirun.sh" -np "$P" "$BUILD_SMPI/ovl" purify --fock "$F" \
        --nocc "$K" --method "$meth" --precision "$prec" --backend own "${extra[@]}" --json -q
    done
    for s in $SOLVERS; do
      run "$d/eig_$s.txt" nice -n 19 "$here/eig_sim.sh" -np "$P" --fock "$F" --nocc "$K" --solver "$s"
    done
  done
fi

# The table of what OUT holds.
python3 - "$OUT" <<'EOF'
import glob, json, os, re, sys
out = sys.argv[1]
def host(f):
  """wall seconds, and the CPU seconds (user + system) after a slash when recorded"""
  try:
    w = open(f + ".host").read().split()[0]
  except OSError:
    return "?"
  try:
    u, s = open(f + ".cpu").read().split()[-3:-1]
    return f"{w}/{float(u) + float(s):.1f}"
  except (OSError, ValueError):
    return w
rows = []
for d in sorted(glob.glob(os.path.join(out, "n*_P*")), key=lambda d: tuple(map(int, re.findall(r"\d+", os.path.basename(d))))):
  n, P = map(int, re.findall(r"\d+", os.path.basename(d)))
  eig = {}
  for s in ("evd", "evr"):
    f = os.path.join(d, f"eig_{s}.txt")
    if os.path.exists(f):
      for line in open(f):
        w = line.split()
        if w and w[0] in ("pdsyevd", "pdsyevr"):
          eig[s] = (float(w[5]), float(w[7]), host(f))
  pur = {}
  for f in sorted(glob.glob(os.path.join(d, "purify_*.json"))):
    try:
      j = json.loads(open(f).read().strip().splitlines()[-1])
    except (ValueError, IndexError):
      continue
    pur[f"{j['method']}:{'mixed' if j['precision'] != 'double' else 'double'}"] = (j["t_total"], j, host(f))
    if j.get("stop_reason", "").startswith("fixed schedule"):
      j["iterations"] = f"{j['iterations']} replayed"

  rows.append((n, P, eig, pur))
print("| n | nodes | pdsyevd + D (s) | pdsyevr + D (s) | purification | grid, algo, N_DUP, iterations | purification (s) | best eig / purification | host time (s), wall/CPU: eig evd, evr; purification |")
print("| ---: | ---: | ---: | ---: | --- | --- | ---: | ---: | --- |")
for n, P, eig, pur in rows:
  best = min([v[0] for v in eig.values()], default=None)
  for k, (t, j, h) in sorted(pur.items(), key=lambda kv: kv[1][0]):
    r = f"{best / t:.2f}" if best else "-"
    print(f"| {n} | {P} | {eig['evd'][0]:.4f} |" if "evd" in eig else f"| {n} | {P} | - |", end="")
    print(f" {eig['evr'][0]:.4f} |" if "evr" in eig else " - |", end="")
    print(f" {k} | {j['grid']} {j['algo']} ndup={j['ndup']} it={j['iterations']} ({j['active']}/{j['ranks']} ranks) | {t:.4f} | {r} |"
          f" {eig.get('evd', (0, 0, '-'))[2]}, {eig.get('evr', (0, 0, '-'))[2]}; {h} |")
EOF
