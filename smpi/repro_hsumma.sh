#!/usr/bin/env bash
# HSUMMA (Quintin, Hasanov & Lastovetsky) on the simulated BlueGene/P-like torus:
#   sweep  execution and communication time vs the number of groups G at P ranks (their Fig. 10 style)
#   scale  SUMMA vs HSUMMA (G = sqrt(P)) communication time vs P (their Fig. 11 style)
# usage: smpi/repro_hsumma.sh sweep|scale [BUILD_DIR]   (env: P, N, B, GS, PS, POLL, TIMEOUT, LATF, BCAST, REPS)
# LATF=X multiplies every latency of the platform by X (SimGrid's smpi/lat-factor): an effective
# per-message latency in the HSUMMA paper's regime (alpha/beta above 2nb/p); the CSV names get _latfX.
# BCAST=ALG sets the own back end's broadcast (ovl gemm --bcast-alg: binomial, scatter-allgather, ...;
# default auto); the CSV names get _ALG. The HSUMMA paper's cost analysis assumes scatter-allgather.
# REPS=R times R calls after the warm-up and reports their median (default 1); the CSV names get _rR.
# Successive calls differ in simulated time (up to 15 % with scatter-allgather at P = 256, latencies x 10:
# the ranks leave one call skewed and the rings' messages meet differently on the torus in the next).
# Runs `ovl gemm` of the SMPI build under smpi/smpirun.sh with local products as
# flops (OVL_SMPI_FLOPS=skip) and shared matrix memory; writes BUILD/hsumma/*.csv
# (host_s: host seconds the simulation took). b = M = B (default 256, the paper's).
# Each simulation runs under `timeout $TIMEOUT` (default 3600 s); a run that
# times out or fails stops the script.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
mode=${1:?usage: $0 sweep|scale [BUILD_DIR]}
bld=$(cd "${2:-$here/../build-smpi}" && pwd)
out=$bld/hsumma; mkdir -p "$out"
N=${N:-1024} B=${B:-256} POLL=${POLL:-1e-6}
# POLL: simulated seconds charged to a failed MPI_Test/MPI_Iprobe (smpi/test, smpi/iprobe; growing while a
# rank keeps failing). ovl's own collectives wait by polling, so host time grows as P x simulated time / POLL:
# 1e-9 (smpi/smpirun.sh's default) does not finish at P = 1024; 1e-6 is about one MPI_Test on an 850 MHz core.
export OVL_SMPI_FLOPS=skip OVL_SMPI_SHARED_MALLOC=1048576 OVL_SMPI_WORK=$out/platforms
export OVL_SMPI_CFG="--cfg=smpi/test:$POLL --cfg=smpi/iprobe:$POLL ${OVL_SMPI_CFG:-}"
sfx=_warm
if [ -n "${LATF:-}" ]; then OVL_SMPI_CFG="$OVL_SMPI_CFG --cfg=smpi/lat-factor:0:$LATF"; sfx=${sfx}_latf$LATF; fi
[ -n "${BCAST:-}" ] && sfx=${sfx}_$BCAST
REPS=${REPS:-1}
[ "$REPS" != 1 ] && sfx=${sfx}_r$REPS
one() { # ranks algo G -> "t_med comm comp"
  local p=$1 algo=$2 g=$3 name
  name=$(python3 "$here/platforms/make_platforms.py" bgp --ranks "$p" "$OVL_SMPI_WORK")
  # one warm-up call: HSUMMA builds its group communicators (four MPI_Comm_split over the P ranks) on its
  # first call, 0.6 ms of simulated time at P = 2048, which SUMMA's grid has before the timing starts
  local args=(gemm --algo "$algo" -n "$N" -b "$B" --backend own -i "$REPS" -x 1 --no-blas-check)
  [ -n "${BCAST:-}" ] && args+=(--bcast-alg "$BCAST")
  [ "$algo" = hsumma ] && args+=(-G "$g")
  local t0=$SECONDS line
  line=$(cd "$out" && OVL_SMPI_PLATFORM=$OVL_SMPI_WORK/$name.xml OVL_SMPI_HOSTFILE=$OVL_SMPI_WORK/${name}_$p.hostfile \
         timeout "${TIMEOUT:-3600}" "$here/smpirun.sh" -np "$p" "$bld/ovl" "${args[@]}" 2>>"$out/stderr.log" |
         grep -E "^ +(summa|hsumma) ") || { echo "$0: P=$p $algo G=$g n=$N failed or timed out" >&2; exit 1; }
  echo "# P=$p $algo G=$g n=$N: $((SECONDS - t0)) s of host time" >&2
  echo "$line" | awk -v h=$((SECONDS - t0)) '{print $3, $7, $8, h}'
}
case "$mode" in
  sweep)
    P=${P:-1024}
    csv=$out/sweep_P${P}_n${N}_b${B}${sfx}.csv
    echo "G,t,comm,comp,host_s" >"$csv"
    r=$(one "$P" summa 1) || exit 1; read -r t c k h <<<"$r"; echo "summa,$t,$c,$k,$h" >>"$csv"
    for g in ${GS:-1 2 4 8 16 32 64 128 256 512 1024}; do
      [ "$g" -gt "$P" ] && continue
      r=$(one "$P" hsumma "$g") || exit 1; read -r t c k h <<<"$r"; echo "$g,$t,$c,$k,$h" >>"$csv"
    done
    echo "HSUMMA G sweep, P=$P, n=$N, b=M=$B, simulated BlueGene/P-like torus (paper, Fig. 10: P=16384, n=65536:"
    echo "SUMMA 50.2 s, HSUMMA best 21.26 s at G=512, 2.36x; 1.2x at P=2048)"
    column -s, -t "$csv" ;;
  scale)
    csv=$out/scale_n${N}_b${B}${sfx}.csv
    echo "P,summa_t,summa_comm,hsumma_G,hsumma_t,hsumma_comm,host_s" >"$csv"
    for p in ${PS:-64 256 1024}; do
      g=$(python3 -c "import math; print(2**round(math.log2(math.sqrt($p))))")
      r=$(one "$p" summa 1) || exit 1; read -r t1 c1 _ h1 <<<"$r"
      r=$(one "$p" hsumma "$g") || exit 1; read -r t2 c2 _ h2 <<<"$r"
      echo "$p,$t1,$c1,$g,$t2,$c2,$((h1 + h2))" >>"$csv"
    done
    echo "SUMMA vs HSUMMA communication time, n=$N, b=M=$B (paper, Fig. 11: HSUMMA 2.08x less at P=2048, 5.89x at 16384)"
    column -s, -t "$csv" ;;
  *) echo "usage: $0 sweep|scale [BUILD_DIR]" >&2; exit 2 ;;
esac
