#!/usr/bin/env bash
# Simulated against real on this machine, 1 and 2 ranks (docs/guides/smpi.md,
# "Validation on this machine"): ScaLAPACK's pdsyevd + the density product
# (smpi/eig_sim.c) and `ovl purify` (SP2-ACC and the canonical method, float64)
# on the same Fock file, each side's median of REPS calls, and a table of
# simulated / real with the +-25 % target.
#
# The one calibration: this machine's one-core dgemm rate, measured once by the
# native eig_sim --measure (a 1000^3 dgemm, best of 3; the median of 5 such
# calls; OVL_SMPI_HOST_SPEED gives it instead). It is the speed of every core of the simulated platform
# `local` (smpi/platforms/make_platforms.py: one host of 2 cores, ranks on its
# cores, the Stampede2-like node's loopback for messages) and SMPI's
# smpi/host-speed for eig_sim, whose executed computation is then charged 1:1;
# ovl's kernels charge 2mnk flops per product at that speed. Nothing else is
# taken from this machine and nothing is fitted to the comparison.
#
# usage: smpi/validate.sh            (environment below)
#   FOCK=data/big/c166h334_gfn2/fock.raw  NOCC=499   the case (its meta.json gives SP2-ACC's HOMO/LUMO)
#   REPS=3        calls per side and point (simulated purification: 1, it is deterministic)
#   RANKS="1 2"   rank counts
#   BUILD=build BUILD_SMPI=build-smpi   native and SMPI builds of ovl (cmake target ovl)
#   OUT=/tmp/ovl-validate               logs, the native eig_sim, the platform, table.md
#   NATIVE_SCALAPACK="-lscalapack-openmpi"  ScaLAPACK for the native eig_sim (mpicc.openmpi)
#   MAXLOAD=2     a real measurement waits until the 1-minute load average is below
#                 this (at most WAIT=120 s, then it runs anyway); the load is recorded
#   (the canonical method runs with --allow-idle on 2 ranks: SymmSquareCube takes p^3)
# Exit 77 when SimGrid, the ScaLAPACK of build_scalapack.sh or a build is missing.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
cd "$root"
# shellcheck source=/dev/null
. scripts/env.sh
FOCK=${FOCK:-data/big/c166h334_gfn2/fock.raw}
NOCC=${NOCC:-499}
REPS=${REPS:-3}
RANKS=${RANKS:-1 2}
BUILD=${BUILD:-build}
BUILD_SMPI=${BUILD_SMPI:-build-smpi}
OUT=${OUT:-/tmp/ovl-validate}
NATIVE_SCALAPACK=${NATIVE_SCALAPACK:--lscalapack-openmpi}
MAXLOAD=${MAXLOAD:-2}
WAIT=${WAIT:-120}
MPIEXEC=${MPIEXEC:-mpiexec.openmpi}
MPICC=${MPICC:-mpicc.openmpi}
sl=${OVL_SMPI_SCALAPACK:-$HOME/.cache/ovl/smpi-scalapack}
command -v smpirun >/dev/null || { echo "validate.sh: SKIPPED: no smpirun"; exit 77; }
[ -f "$sl/lib/libscalapack.a" ] || { echo "validate.sh: SKIPPED: no $sl/lib/libscalapack.a"; exit 77; }
for b in "$BUILD/ovl" "$BUILD_SMPI/ovl"; do
  [ -x "$b" ] || { echo "validate.sh: SKIPPED: no $b (cmake --build ... --target ovl)"; exit 77; }
done
[ -f "$FOCK" ] || { echo "validate.sh: no $FOCK (tools/make-cases)"; exit 2; }
mkdir -p "$OUT"
export OPENBLAS_NUM_THREADS=1
load() { cut -d' ' -f1 /proc/loadavg; }
# Wait for a quiet machine before a real measurement; print the load it ran at.
quiet() {
  local t=0
  while awk -v l="$(load)" -v m="$MAXLOAD" 'BEGIN { exit !(l >= m) }' && [ "$t" -lt "$WAIT" ]; do
    sleep 10; t=$((t + 10))
  done
  load
}
med() { sort -g | awk '{ a[NR] = $1 } END { if (NR == 0) print "nan"; else print (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2) }'; }
# Run a real command (P ranks) and keep its CPU share, (user + system) / (P x elapsed
# time of the whole launch), in OUT/share: a load indicator (below 1: the ranks
# waited for a core, or for the launch). The native eig_sim and ovl purify (t_cpu)
# also give the CPU time of their timed part, which on one rank is what a dedicated
# core would take (on two, an upper estimate: a rank spinning in MPI while its peer
# waits for a core counts as busy).
timed() {
  local P=$1; shift
  /usr/bin/time -f "%e %U %S" -o "$OUT/time.txt" "$@"
  awk -v p="$P" '{ s = ($2 + $3) / (p * $1); print (s > 1 ? 1 : s) }' "$OUT/time.txt" >"$OUT/share"
}
jf() { grep -o "\"$1\":[0-9.eE+-]*" "$2" | tail -1 | cut -d: -f2; }

# The native eig_sim: the same source, Open MPI and Debian's ScaLAPACK, the same BLAS.
native=$OUT/eig_native
if [ ! -x "$native" ] || [ "$here/eig_sim.c" -nt "$native" ]; then
  "$MPICC" -O2 -std=gnu11 -Wall "$here/eig_sim.c" -o "$native" $NATIVE_SCALAPACK -llapack -lblas -lgfortran -lm
fi

# The calibration: one dgemm measurement.
if [ -n "${OVL_SMPI_HOST_SPEED:-}" ]; then
  speed=$OVL_SMPI_HOST_SPEED
  echo "# per-core speed: $speed flop/s (OVL_SMPI_HOST_SPEED)"
else
  l=$(quiet)
  ms=$(for i in 1 2 3 4 5; do "$MPIEXEC" -n 1 "$native" --measure | awk '/host dgemm rate/ { print $4, $9 }'; done)
  speed=$(echo "$ms" | awk '{ print $1 }' | med)
  echo "# per-core speed: $speed flop/s, the median of 5 calls of the native eig_sim --measure (1000^3 dgemm, best of 3): $(echo "$ms" | awk '{ print $1 }' | tr '\n' ' ')(by CPU time: $(echo "$ms" | awk '{ print $2 }' | tr '\n' ' ')); OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset}, load $l"
fi
export OVL_SMPI_HOST_SPEED=$speed OVL_SMPI_PPN=1 OVL_SMPI_EIG_BIN=$OUT/smpi-bin

pur_args=(--fock "$FOCK" --nocc "$NOCC" --precision double --json -q)
{
  echo "# case $FOCK (n_occ $NOCC), reps $REPS; load average at start $(cut -d' ' -f1-3 /proc/loadavg); $(date -u +%FT%TZ)"
  echo "# what P side rep time(s) load cpu_share(real) cpu_time_of_timed_part(real) t_ssc(purify: its products)"
} >"$OUT/raw.txt"
for P in $RANKS; do
  name=$(python3 "$here/platforms/make_platforms.py" local "$OUT/plat" --speed "$speed" --cores 2 --ranks "$P")
  export OVL_SMPI_PLATFORM=$OUT/plat/$name.xml OVL_SMPI_HOSTFILE=$OUT/plat/${name}_$P.hostfile
  for r in $(seq "$REPS"); do
    # eigensolver + density (pdgemm), real and simulated
    l=$(quiet)
    timed "$P" "$MPIEXEC" -n "$P" "$native" --fock "$FOCK" --nocc "$NOCC" --solver evd >"$OUT/eig.out"
    t=$(awk '$1 == "pdsyevd" { print $6 }' "$OUT/eig.out")
    c=$(awk '/CPU time of the timed part/ { print $9 }' "$OUT/eig.out")
    echo "pdsyevd+dens $P real $r $t $l $(cat "$OUT/share") $c" >>"$OUT/raw.txt"
    t=$(nice -n 19 "$here/eig_sim.sh" -np "$P" --fock "$FOCK" --nocc "$NOCC" --solver evd 2>>"$OUT/smpi.err" |
      awk '$1 == "pdsyevd" { print $6 }')
    echo "pdsyevd+dens $P sim $r $t $(load)" >>"$OUT/raw.txt"
    for m in sp2acc canonical; do
      l=$(quiet)
      idle=()
      [ "$m" = canonical ] && [ "$P" -gt 1 ] && idle=(--allow-idle) # SymmSquareCube: p^3 ranks
      timed "$P" "$MPIEXEC" -n "$P" "$BUILD/ovl" purify --method "$m" "${pur_args[@]}" "${idle[@]}" >"$OUT/pur.json"
      echo "purify:$m $P real $r $(jf t_total "$OUT/pur.json") $l $(cat "$OUT/share") $(jf t_cpu "$OUT/pur.json") \
        $(jf t_ssc "$OUT/pur.json")" >>"$OUT/raw.txt"
      if [ "$r" = 1 ]; then # the simulated purification is deterministic (charged flops only)
        nice -n 19 "$here/smpirun.sh" -np "$P" "$BUILD_SMPI/ovl" purify --method "$m" "${pur_args[@]}" "${idle[@]}" \
          2>>"$OUT/smpi.err" >"$OUT/pur.json"
        echo "purify:$m $P sim $r $(jf t_total "$OUT/pur.json") $(load) - - $(jf t_ssc "$OUT/pur.json")" >>"$OUT/raw.txt"
      fi
    done
    tail -n +1 "$OUT/raw.txt" | tail -5 >&2
  done
done

# The table: medians, simulated / real.
{
  echo "| code | ranks | real (s), median of $REPS | real, all | load | CPU share | real's CPU time (s), median | simulated (s) | simulated, all | sim / real | within 25 % | sim / real's CPU time |"
  echo "| --- | ---: | ---: | --- | --- | --- | ---: | ---: | --- | ---: | --- | ---: |"
  for what in pdsyevd+dens purify:sp2acc purify:canonical; do
    for P in $RANKS; do
      sel() { awk -v w="$what" -v p="$P" -v s="$1" '$1 == w && $2 == p && $3 == s { print $'"$2"' }' "$OUT/raw.txt"; }
      rm=$(sel real 5 | med)
      sm=$(sel sim 5 | med)
      ra=$(sel real 5 | tr '\n' ' ')
      sa=$(sel sim 5 | tr '\n' ' ')
      la=$(sel real 6 | tr '\n' ' ')
      sh=$(sel real 7 | tr '\n' ' ')
      cm=$(sel real 8 | grep -v -- - | med)
      awk -v w="$what" -v p="$P" -v rm="$rm" -v sm="$sm" -v ra="$ra" -v sa="$sa" -v la="$la" -v sh="$sh" -v cm="$cm" 'BEGIN {
        q = sm / rm; ok = (q >= 0.75 && q <= 1.25) ? "yes" : "**no**"
        cs = cm == "nan" ? "-" : sprintf("%.4f", cm); cq = cm == "nan" ? "-" : sprintf("%.3f", sm / cm)
        printf "| %s | %d | %.4f | %s | %s | %s | %s | %.4f | %s | %.3f | %s | %s |\n", w, p, rm, ra, la, sh, cs, sm, sa, q, ok, cq }'
    done
  done
} | tee "$OUT/table.md"
echo "# per-core speed $speed flop/s; load average at end $(cut -d' ' -f1-3 /proc/loadavg); raw: $OUT/raw.txt"
