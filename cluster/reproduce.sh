#!/usr/bin/env bash
# The experiments of docs/lab/cluster-measurements.md on the emulated network (as root):
#  coll  Huang & Chow Fig. 5 style: bcast and reduce bandwidth, blocking vs
#        N_DUP = 4 lanes vs 4 PPN, 4 nodes x 4 ranks, 1 Gbit/s links
#  ssc   SymmSquareCube Algorithm 4 vs Algorithm 5 with N_DUP 1..6, 8 nodes
#        (2 x 2 x 2 grid), 1 rank per node, 1 Gbit/s links
# Every measurement is repeated REPS times (separate mpiexec runs, the
# configurations interleaved inside each run); ratios are taken inside one run,
# then min and median over the runs. Writes the JSON lines of every run, the
# tables (tables.md) and summary.json to OUT, and the plots to IMG.
#
# usage: cluster/reproduce.sh [coll] [ssc] [report]   (default: all three)
#   report: only the tables and plots, from the JSON lines already in OUT
# environment: OVL (default build/ovl), REPS (5), RATE (1gbit), OUT
# (cluster/results/RATE), IMG (docs/img; plots cluster_*_RATE.png), SSC_SIZES
# ("600 1000 1400"), COLL_SIZES (1M:16M), COLL_NODES (4), COLL_PPN (4),
# SSC_NODES (8), MPI_ARGS (more mpiexec arguments, space-separated)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
CL=$here/ovl-cluster
export OVL=${OVL:-$root/build/ovl}
REPS=${REPS:-5}
RATE=${RATE:-1gbit}
OUT=${OUT:-$here/results/$RATE}
IMG=${IMG:-$root/docs/img}
COLL_SIZES=${COLL_SIZES:-1M:16M}
COLL_NODES=${COLL_NODES:-4}
COLL_PPN=${COLL_PPN:-4}
SSC_NODES=${SSC_NODES:-8}
SSC_SIZES=${SSC_SIZES:-600 1000 1400}
parts=("$@"); [ ${#parts[@]} -gt 0 ] || parts=(coll ssc report)
mpiargs=(); for a in ${MPI_ARGS:-}; do mpiargs+=(--mpi-arg "$a"); done

[ "$(id -u)" -eq 0 ] || [ "${parts[*]}" = report ] || { echo "reproduce.sh: must run as root (network namespaces)" >&2; exit 1; }
[ -x "$OVL" ] || [ "${parts[*]}" = report ] || { echo "reproduce.sh: $OVL not found: build it first (make build), or set OVL" >&2; exit 1; }
export OVL_CLUSTER_PREFIX=ovlr
measure=0; [[ " ${parts[*]} " == *" coll "* || " ${parts[*]} " == *" ssc "* ]] && measure=1
if [ $measure -eq 1 ]; then
  trap '"$CL" down >/dev/null 2>&1 || true' EXIT
  trap 'exit 130' INT TERM
fi
mkdir -p "$OUT" "$IMG"
log() { echo "[$(date +%H:%M:%S)] $*" >&2; }
# append the JSON lines of one run, each tagged with the run number and a label
tag() { sed -e "s/^{/{\"run\":$1,\"part\":\"$2\",/" | grep '^{' || true; }

platform() {
  echo "{\"platform\":\"emulated network: $1 network namespaces on one bridge, tbf $RATE per link direction, Open MPI $(mpiexec.openmpi --version 2>/dev/null | head -1 | awk '{print $NF}') TCP between nodes, $(nproc)-core machine\",\"date\":\"$(date -u +%Y-%m-%dT%H:%MZ)\",\"ovl\":\"$("$OVL" version 2>/dev/null | head -1)\",\"reps\":$REPS}"
}

if [[ " ${parts[*]} " == *" coll "* ]]; then
  "$CL" up "$COLL_NODES" --rate "$RATE" --ppn "$COLL_PPN"
  platform "$COLL_NODES" >"$OUT/coll_platform.json"
  [ ${#mpiargs[@]} -eq 0 ] || echo "{\"mpi_args\":\"${MPI_ARGS}\"}" >"$OUT/coll_mpi_args.json"
  cfgs=("bcast mpi" "reduce mpi" "bcast own scatter-allgather" "reduce own rabenseifner")
  for c in "${cfgs[@]}"; do set -- $c; : >"$OUT/coll_$1_$2.jsonl"; done
  for r in $(seq 1 "$REPS"); do
    for c in "${cfgs[@]}"; do
      set -- $c
      log "coll run $r/$REPS: $1, backend $2${3:+ ($3)}"
      "$CL" run --timeout 300 "${mpiargs[@]}" -- ovl bench coll --op "$1" --backend "$2" ${3:+--algo "$3"} -m "$COLL_SIZES" \
        -d 4 -i 10 -x 2 --cache-bytes 32M -j -q 2>/dev/null | tag "$r" "$1-$2" >>"$OUT/coll_$1_$2.jsonl" ||
        log "  this run failed"
    done
  done
fi

if [[ " ${parts[*]} " == *" ssc "* ]]; then
  "$CL" up "$SSC_NODES" --rate "$RATE" --ppn 1
  platform "$SSC_NODES" >"$OUT/ssc_platform.json"
  [ ${#mpiargs[@]} -eq 0 ] || echo "{\"mpi_args\":\"${MPI_ARGS}\"}" >"$OUT/ssc_mpi_args.json"
  : >"$OUT/ssc.jsonl"
  for r in $(seq 1 "$REPS"); do
    for n in $SSC_SIZES; do
      # a grid caches at most 16 lane sets (3 per N_DUP): N_DUP 6 in a run of its own, with its own Alg. 4
      for d in 1-5 6; do
        log "ssc run $r/$REPS: n = $n, alg4 and alg5 with N_DUP $d"
        "$CL" run --timeout 500 "${mpiargs[@]}" -- ovl bench ssc -n "$n" -a alg4,alg5 -d "$d" -i 5 -x 1 -j -q 2>/dev/null |
          tag "$r" "d$d" >>"$OUT/ssc.jsonl" || log "  this run failed"
      done
    done
  done
fi

[ $measure -eq 0 ] || "$CL" down >/dev/null
[[ " ${parts[*]} " == *" report "* ]] || exit 0
python3 "$here/summarize.py" "$OUT" | tee "$OUT/tables.md"

if "$root/tools/ovl-plot" check >/dev/null 2>&1; then
  for f in "$OUT"/coll_*_median.jsonl; do
    [ -s "$f" ] || continue
    b=$(basename "$f" _median.jsonl)                    # coll_bcast_mpi
    set -- ${b//_/ }
    "$root/tools/ovl-plot" bw "$f" --dpi 80 -o "$IMG/cluster_$2_$3_$RATE.png" \
      --title "$2 ($3 back end), $COLL_NODES nodes x $COLL_PPN ranks, $RATE links (median of $REPS runs)"
  done
  if [ -s "$OUT/ssc_summary_alg5.jsonl" ]; then
    "$root/tools/ovl-plot" sweep "$OUT/ssc_summary_alg5.jsonl" --x ndup --y speedup_median --series n \
      --ylabel "Alg. 5 over Alg. 4 (median of runs)" --dpi 80 -o "$IMG/cluster_ssc_speedup_$RATE.png" \
      --title "SymmSquareCube, $SSC_NODES nodes (2x2x2), $RATE links"
  fi
else
  echo "reproduce.sh: matplotlib missing: no plots (apt-get install python3-matplotlib)" >&2
fi
