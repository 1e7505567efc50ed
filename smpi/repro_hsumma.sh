#!/usr/bin/env bash
# HSUMMA (Quintin, Hasanov & Lastovetsky) on the simulated BlueGene/P-like torus:
#   sweep  execution and communication time vs the number of groups G at P ranks (their Fig. 10 style)
#   scale  SUMMA vs HSUMMA (G = sqrt(P)) communication time vs P (their Fig. 11 style)
# usage: smpi/repro_hsumma.sh sweep|scale [BUILD_DIR]   (env: P, N, B, GS, PS)
# Runs `ovl gemm` of the SMPI build under smpi/smpirun.sh with local products as
# flops (OVL_SMPI_FLOPS=skip) and shared matrix memory; writes BUILD/hsumma/*.csv.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
mode=${1:?usage: $0 sweep|scale [BUILD_DIR]}
bld=$(cd "${2:-$here/../build-smpi}" && pwd)
out=$bld/hsumma; mkdir -p "$out"
N=${N:-16384} B=${B:-256}
export OVL_SMPI_FLOPS=skip OVL_SMPI_SHARED_MALLOC=1048576 OVL_SMPI_WORK=$out/platforms
one() { # ranks algo G -> "t_med comm comp"
  local p=$1 algo=$2 g=$3 name
  name=$(python3 "$here/platforms/make_platforms.py" bgp --ranks "$p" "$OVL_SMPI_WORK")
  local args=(gemm --algo "$algo" -n "$N" -b "$B" --backend own -i 1 -x 0 --no-blas-check)
  [ "$algo" = hsumma ] && args+=(-G "$g")
  local t0=$SECONDS line
  line=$(cd "$out" && OVL_SMPI_PLATFORM=$OVL_SMPI_WORK/$name.xml OVL_SMPI_HOSTFILE=$OVL_SMPI_WORK/${name}_$p.hostfile \
         "$here/smpirun.sh" -np "$p" "$bld/ovl" "${args[@]}" 2>>"$out/stderr.log" | grep -E "^ +(summa|hsumma) ")
  echo "# P=$p $algo G=$g: $((SECONDS - t0)) s of host time" >&2
  echo "$line" | awk '{print $3, $7, $8}'
}
case "$mode" in
  sweep)
    P=${P:-1024}
    csv=$out/sweep_P${P}_n${N}.csv
    echo "G,t,comm,comp" >"$csv"
    read -r t c k < <(one "$P" summa 1); echo "summa,$t,$c,$k" >>"$csv"
    for g in ${GS:-1 2 4 8 16 32 64 128 256 512 1024}; do
      [ "$g" -gt "$P" ] && continue
      read -r t c k < <(one "$P" hsumma "$g"); echo "$g,$t,$c,$k" >>"$csv"
    done
    echo "HSUMMA G sweep, P=$P, n=$N, b=M=$B, simulated BlueGene/P-like torus (paper, Fig. 10: P=16384, n=65536:"
    echo "SUMMA 50.2 s, HSUMMA best 21.26 s at G=512, 2.36x; 1.2x at P=2048)"
    column -s, -t "$csv" ;;
  scale)
    csv=$out/scale_n${N}.csv
    echo "P,summa_t,summa_comm,hsumma_G,hsumma_t,hsumma_comm" >"$csv"
    for p in ${PS:-64 256 1024}; do
      g=$(python3 -c "import math; print(2**round(math.log2(math.sqrt($p))))")
      read -r t1 c1 _ < <(one "$p" summa 1)
      read -r t2 c2 _ < <(one "$p" hsumma "$g")
      echo "$p,$t1,$c1,$g,$t2,$c2" >>"$csv"
    done
    echo "SUMMA vs HSUMMA communication time, n=$N, b=M=$B (paper, Fig. 11: HSUMMA 2.08x less at P=2048, 5.89x at 16384)"
    column -s, -t "$csv" ;;
  *) echo "usage: $0 sweep|scale [BUILD_DIR]" >&2; exit 2 ;;
esac
