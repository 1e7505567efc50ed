#!/usr/bin/env bash
# The block-sparse purification against n, the eigensolver and NTPoly on the sparse
# tight-binding cases (docs/guides/sparse.md, "Benchmarks").
#
# usage: bench/sparse_bench.sh [--cases "pe-4k pe-8k ..."] [--eps 1e-5] [--method sp2]
#          [--np "1 2"] [--reps 3] [--eig-max 16128] [--eig-reps 3] [--ntpoly "pe-4k pe-8k"]
#          [--ntpoly-method trs2] [--block 32] [--precision double|mixed] [--out DIR] [--ovl build/ovl]
#          [--mpiexec "mpiexec.openmpi --oversubscribe --bind-to none"]
#   cases   tools/make-sparse-cases names under $OVL_SPARSE_CASES (~/.cache/ovl/sparse-cases)
#   eig-max the eigensolver route (bench/sparse_eig.py: LAPACK dsygvx for the n_occ lowest
#           pairs, 1 process x 2 OpenBLAS threads) runs on the cases with n <= this, once
#           in each of the first --eig-reps repetitions (default: every one); its energy is the
#           reference of every energy error
#   precision  ovl's: double, or mixed (float32 block products; docs/guides/sparse.md, "Mixed precision")
#   ntpoly  the cases NTPoly's TRS2 (bench/peers/ntpoly_purify, threshold = eps, converge
#           1e-8) runs on, on every --np (2 ranks: the 1x2x1 grid)
# Every repetition runs each tool once, interleaved (ovl, NTPoly, eigensolver), so that the
# ratios come from the same minutes. One JSON object per run goes to DIR/runs.jsonl (default
# DIR: ~/.cache/ovl/sparse-bench/<eps>-<method>); bench/sparse_report.py DIR prints the
# tables (min and median of t_solve: from H and S in memory to D, files excluded) and the
# slopes, and draws the plot.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cases="pe-4k pe-8k pe-16k pe-32k pe-64k" eps=1e-5 method=sp2 nps="1 2" reps=3 eigmax=16128 eigreps=1000
ntp="" ntpm=trs2 block=32 prec=double out="" ovl=$root/build/ovl mpiexec="mpiexec.openmpi --oversubscribe --bind-to none"
croot=${OVL_SPARSE_CASES:-$HOME/.cache/ovl/sparse-cases}
die() { echo "sparse_bench.sh: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case $1 in
    --cases) cases=$2; shift 2 ;;
    --eps) eps=$2; shift 2 ;;
    --method) method=$2; shift 2 ;;
    --np) nps=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --eig-max) eigmax=$2; shift 2 ;;
    --eig-reps) eigreps=$2; shift 2 ;;
    --ntpoly) ntp=$2; shift 2 ;;
    --ntpoly-method) ntpm=$2; shift 2 ;;
    --block) block=$2; shift 2 ;;
    --precision) prec=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --ovl) ovl=$2; shift 2 ;;
    --mpiexec) mpiexec=$2; shift 2 ;;
    -h | --help) sed -n '2,21p' "$0"; exit 0 ;;
    *) die "unknown argument '$1' (--help)" ;;
  esac
done
[ -x "$ovl" ] || die "no $ovl: build first (make build)"
out=${out:-$HOME/.cache/ovl/sparse-bench/$eps-$method}
mkdir -p "$out"
# shellcheck source=/dev/null
source "$root/scripts/env.sh"
py=/usr/bin/python3
ntdrv=$HOME/.cache/ovl/ntpoly/3.1.1/openmpi/bin/ntpoly_purify
[ -z "$ntp" ] || [ -x "$ntdrv" ] || die "no NTPoly driver $ntdrv: bench/peers/build_ntpoly.sh"
runs=$out/runs.jsonl
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
load() { cut -d' ' -f1 /proc/loadavg; }
emit() { echo "$1" >>"$runs"; echo "$1" | cut -c1-220; }
for rep in $(seq 1 "$reps"); do
  for c in $cases; do
    d=$croot/$c
    [ -f "$d/meta.json" ] || die "no case $d (tools/make-sparse-cases $c)"
    n=$(sed -n 's/^  "n": *\([0-9]*\).*/\1/p' "$d/meta.json")
    atoms=$(sed -n 's/^  "atoms": *\([0-9]*\).*/\1/p' "$d/meta.json")
    nocc=$(sed -n 's/^  "n_occ": *\([0-9]*\).*/\1/p' "$d/meta.json")
    for np in $nps; do
      l0=$(load)
      OPENBLAS_NUM_THREADS=1 $mpiexec -n "$np" "$ovl" purify --fock "$d/H.mtx" \
        --overlap "$d/S.mtx" --sparse "$eps" --method "$method" --sparse-block "$block" --precision "$prec" --json >"$tmp/o" 2>"$tmp/e" ||
        { cat "$tmp/e" >&2; die "ovl failed on $c (np $np)"; }
      rec=$(tail -1 "$tmp/o")
      emit "{\"tool\":\"ovl\",\"case\":\"$c\",\"n\":$n,\"atoms\":$atoms,\"np\":$np,\"rep\":$rep,\"eps\":$eps,\"load\":$l0,\"rec\":$rec}"
      if [[ " $ntp " == *" $c "* ]]; then
        grid=()
        [ "$np" -ge 2 ] && grid=(--grid "1x${np}x1")
        l0=$(load)
        OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 $mpiexec -n "$np" "$ntdrv" \
          --hamiltonian "$d/H.mtx" --overlap "$d/S.mtx" --nocc "$nocc" --threshold "$eps" --converge 1e-8 \
          --method "$ntpm" --log "$tmp/ntp.log" "${grid[@]}" >"$tmp/o" 2>"$tmp/e" ||
          { cat "$tmp/e" >&2; die "NTPoly failed on $c (np $np)"; }
        line=$(grep "t_total=" "$tmp/o" | tail -1)
        kv=$(echo "$line" | tr ' ' '\n' | grep '=' | sed -E 's/^([A-Za-z_]+)=(.*)$/"\1":"\2"/' | paste -sd, -)
        emit "{\"tool\":\"ntpoly\",\"case\":\"$c\",\"n\":$n,\"atoms\":$atoms,\"np\":$np,\"rep\":$rep,\"eps\":$eps,\"load\":$l0,\"rec\":{$kv}}"
      fi
    done
    if [ "$n" -le "$eigmax" ] && [ "$rep" -le "$eigreps" ]; then
      l0=$(load)
      rec=$(OPENBLAS_NUM_THREADS=2 "$py" "$root/bench/sparse_eig.py" "$d" --route gvx | tail -1)
      emit "{\"tool\":\"eig\",\"case\":\"$c\",\"n\":$n,\"atoms\":$atoms,\"np\":1,\"rep\":$rep,\"eps\":0,\"load\":$l0,\"rec\":$rec}"
    fi
  done
done
echo "# runs in $runs; tables: $py $root/bench/sparse_report.py $out"
