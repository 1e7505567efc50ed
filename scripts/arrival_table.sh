#!/usr/bin/env bash
# Arrival order on against off (--arrival-order) for SUMMA, HSUMMA and
# Algorithm 5: the table of docs/lab/benchmarks.md "SUMMA, HSUMMA and
# Algorithm 5 in arrival order".
#
#   scripts/arrival_table.sh real   # this machine: launches alternate on/off, 3 rounds; median of the 3 launches'
#                                   # medians (time per repetition = MAX over ranks)
#   scripts/arrival_table.sh smpi   # SMPI (build-smpi, smpicc): simulated time, deterministic; median of 3 calls
#
# OVL (default build/ovl) and OVL_SMPI_BUILD (default build-smpi) name the
# builds. Prints one markdown row per configuration: off, on, off / on.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$here/..
mode=${1:-real}
OVL=${OVL:-$root/build/ovl}
SB=${OVL_SMPI_BUILD:-$root/build-smpi}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# median KEY FILE...: the median of the JSON field KEY over the files' records, one per file
median() {
  python3 - "$@" <<'EOF'
import json, statistics, sys
key, files = sys.argv[1], sys.argv[2:]
vals = []
for f in files:
    recs = [json.loads(l) for l in open(f) if l.startswith("{")]
    vals.append(recs[-1][key])
print("%.4e" % statistics.median(vals))
EOF
}

# row NAME: the files $tmp/NAME.{on,off}.* -> a markdown row
row() {
  local name=$1 key=$2 off on
  off=$(median "$key" "$tmp/$name".off.*)
  on=$(median "$key" "$tmp/$name".on.*)
  echo "| $name | $off | $on | $(python3 -c "print('%.3f' % ($off / $on))") |"
}

echo "| configuration | off (s) | on (s) | off / on |"
echo "| --- | --- | --- | --- |"
if [ "$mode" = real ]; then
  . "$here/env.sh"
  run() { nice -n 10 "$here/mpirun.sh" "$@"; }
  for cfg in "summa np=2 d=2|2|-a summa -n 1536 -b 128 -d 2 --lookahead" \
    "summa np=2 d=4|2|-a summa -n 1536 -b 128 -d 4 --lookahead" \
    "summa np=4 d=4 (oversubscribed)|4|-a summa -n 1536 -b 128 -d 4 --lookahead" \
    "hsumma np=4 G=2x1 d=2 (oversubscribed)|4|-a hsumma -n 1536 -b 64 --outer 256 --groups 2x1 -d 2" \
    "hsumma np=4 G=2x1 d=4 (oversubscribed)|4|-a hsumma -n 1536 -b 64 --outer 256 --groups 2x1 -d 4"; do
    name=${cfg%%|*} rest=${cfg#*|} np=${rest%%|*} args=${rest#*|}
    for r in 1 2 3; do
      for a in on off; do
        # shellcheck disable=SC2086
        run "$np" "$OVL" gemm $args --arrival-order "$a" -i 3 -x 1 --no-blas-check -j -q >"$tmp/$name.$a.$r"
      done
    done
    row "$name" t_median
  done
  for r in 1 2 3; do
    for a in on off; do
      run 8 "$OVL" bench ssc -n 1024 -a alg5 -d 2,4 --arrival-order "$a" -i 3 -x 1 -j -q >"$tmp/ssc.$a.$r"
      for d in 2 4; do grep "\"ndup\":$d," "$tmp/ssc.$a.$r" >"$tmp/alg5 np=8 n=1024 d=$d (oversubscribed).$a.$r"; done
    done
  done
  for d in 2 4; do row "alg5 np=8 n=1024 d=$d (oversubscribed)" t_median; done
elif [ "$mode" = smpi ]; then
  sr() { OVL_SMPI_FLOPS=skip OVL_SMPI_PPN=1 "$root/smpi/smpirun.sh" "$@"; }
  for cfg in "summa P=16 n=2048 b=256 d=4 lookahead mpi|-a summa -n 2048 -b 256 -d 4 --lookahead --backend mpi" \
    "summa P=16 n=2048 b=256 d=4 lookahead own|-a summa -n 2048 -b 256 -d 4 --lookahead --backend own" \
    "hsumma P=16 n=2048 G=2x2 M=256 b=64 d=2 mpi|-a hsumma -n 2048 -b 64 --outer 256 --groups 2x2 -d 2 --backend mpi" \
    "hsumma P=16 n=2048 G=2x2 M=256 b=64 d=4 mpi|-a hsumma -n 2048 -b 64 --outer 256 --groups 2x2 -d 4 --backend mpi" \
    "hsumma P=16 n=2048 G=2x2 M=256 b=64 d=4 own|-a hsumma -n 2048 -b 64 --outer 256 --groups 2x2 -d 4 --backend own" \
    "hsumma P=16 n=2048 G=2x2 M=256 b=64 d=4 lookahead mpi|-a hsumma -n 2048 -b 64 --outer 256 --groups 2x2 -d 4 --lookahead" \
    "summa P=64 n=4096 b=128 d=4 mpi|-a summa -n 4096 -b 128 -d 4 --backend mpi" \
    "hsumma P=64 n=4096 G=2x2 M=512 b=128 d=4 mpi|-a hsumma -n 4096 -b 128 --outer 512 --groups 2x2 -d 4 --backend mpi" \
    "hsumma P=64 n=4096 G=4x4 M=512 b=128 d=4 mpi|-a hsumma -n 4096 -b 128 --outer 512 --groups 4x4 -d 4 --backend mpi"; do
    name=${cfg%%|*} args=${cfg#*|} np=16
    case $name in *P=64*) np=64 ;; esac
    for a in on off; do
      # shellcheck disable=SC2086
      sr -np "$np" "$SB/ovl" gemm $args --arrival-order "$a" -i 3 -x 1 --no-blas-check -j -q >"$tmp/$name.$a.1"
    done
    row "$name" t_median
  done
  for a in on off; do
    OVL_SMPI_FLOPS=skip OVL_SMPI_SHARED_MALLOC=1048576 OVL_SMPI_PPN=1 "$root/smpi/smpirun.sh" -np 64 \
      --flowcap 9.3GBps --sumrate 1.62GBps "$SB/ssc_sim" -n 7645 --algo alg5 --ndup 2,4 --reps 3 --warmup 0 \
      --arrival-order "$a" >"$tmp/ssc.$a"
  done
  for d in 2 4; do # ssc_sim's rows: "alg5 NDUP n grid ranks t_med ..."
    off=$(awk -v d="$d" '$1 == "alg5" && $2 == d { print $6 }' "$tmp/ssc.off")
    on=$(awk -v d="$d" '$1 == "alg5" && $2 == d { print $6 }' "$tmp/ssc.on")
    echo "| alg5 P=64 n=7645 d=$d flowcap 9.3GBps sumrate 1.62GBps | $off | $on |" \
      "$(python3 -c "print('%.4f' % ($off / $on))") |"
  done
else
  echo "usage: $0 real|smpi" >&2
  exit 2
fi
