#!/usr/bin/env bash
# Time NTPoly's purification (bench/peers/ntpoly_purify) on banded H and S of
# bench/peers/ntpoly_check.py (docs/lab/peers.md, "NTPoly"): each size, rank count and
# grid runs REPS times in one launch; prints every run's line, the load averages before and
# after, and per method the minimum and median t_purify, t_total and their CPU times
# (cpu_purify, cpu_total: CPU_TIME of the process, max over ranks) with the iterations,
# nnz(D) and the energy error against meta.json's dense reference when there is one.
#
# usage: bench/peers/ntpoly_bench.sh [--driver EXE] [--cases DIR] [--sizes "4000 20000"]
#          [--np "1 2"] [--grids "auto"] [--threshold 1e-5] [--converge 1e-8]
#          [--method trs2,trs4] [--reps 3] [--nice 19] [--mpiexec "mpiexec.openmpi --oversubscribe"]
#   EXE    default ~/.cache/ovl/ntpoly/3.1.1/openmpi/bin/ntpoly_purify
#   DIR    default ~/.cache/ovl/ntpoly/cases: DIR/bandN/{H,S}.mtx and meta.json, made by
#          `ntpoly_check.py make --n N --overlap` (with --reference up to n = 6000) if missing
#   grids  for 2 or more ranks: "auto" (NTPoly's choice: 1x1x2 on 2 ranks) and/or RxCxS
#          (e.g. "auto 1x2x1"); 1 rank always runs 1x1x1.
# Runs under `nice -n NICE` (--nice, default 19) with one thread per rank
# (OMP_NUM_THREADS=1); on a loaded machine the niced wall times grow several-fold while
# the CPU times barely move.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
driver=$HOME/.cache/ovl/ntpoly/3.1.1/openmpi/bin/ntpoly_purify
cases=$HOME/.cache/ovl/ntpoly/cases sizes="4000 20000" nps="1 2" grids=auto
threshold=1e-5 converge=1e-8 nicelvl=19 method=trs2,trs4 reps=3 mpiexec="mpiexec.openmpi --oversubscribe"
py=${OVL_PY_VENV:-$HOME/.cache/ovl/venv-python}/bin/python
die() { echo "ntpoly_bench.sh: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case $1 in
    --driver) driver=$2; shift 2 ;;
    --cases) cases=$2; shift 2 ;;
    --sizes) sizes=$2; shift 2 ;;
    --np) nps=$2; shift 2 ;;
    --grids) grids=$2; shift 2 ;;
    --threshold) threshold=$2; shift 2 ;;
    --converge) converge=$2; shift 2 ;;
    --method) method=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --nice) nicelvl=$2; shift 2 ;;
    --mpiexec) mpiexec=$2; shift 2 ;;
    -h | --help) sed -n '2,19p' "$0"; exit 0 ;;
    *) die "unknown argument '$1' (--help)" ;;
  esac
done
[ -x "$driver" ] || die "no driver $driver: build it with bench/peers/build_ntpoly.sh"
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
[ "$(id -u)" -eq 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
load() { cut -d' ' -f1-3 /proc/loadavg; }
tmp=$(mktemp)
trap 'rm -f "$tmp" "$tmp.log"' EXIT
for n in $sizes; do
  dir=$cases/band$n
  if [ ! -f "$dir/meta.json" ]; then
    [ -x "$py" ] || die "no $py for making the case (scripts/deps-python.sh)"
    ref=()
    [ "$n" -le 6000 ] && ref=(--reference)
    nice -n 19 "$py" "$root/bench/peers/ntpoly_check.py" make --n "$n" --overlap "${ref[@]}" --out "$dir" >/dev/null
  fi
  nocc=$(sed -n 's/.*"nocc": *\([0-9]*\).*/\1/p' "$dir/meta.json")
  eref=$(sed -n 's/.*"energy_ref": *\([-0-9.eE+]*\).*/\1/p' "$dir/meta.json")
  for np in $nps; do
    gl=$grids
    [ "$np" -eq 1 ] && gl=auto
    for g in $gl; do
      garg=()
      [ "$g" = auto ] || garg=(--grid "$g")
      before=$(load)
      # shellcheck disable=SC2086
      nice -n "$nicelvl" $mpiexec -n "$np" "$driver" --hamiltonian "$dir/H.mtx" --overlap "$dir/S.mtx" \
        --nocc "$nocc" --threshold "$threshold" --converge "$converge" --method "$method" \
        --repeat "$reps" --log "$tmp.log" "${garg[@]}" | tee "$tmp"
      out=$(cat "$tmp")
      echo "# n=$n np=$np grid=$g nice $nicelvl, load before: $before, after: $(load)"
      echo "$out" | awk -v eref="$eref" -v reps="$reps" '
        function med(a, k,   i, j, t) { for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++)
            if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t } return a[int((k + 1) / 2)] }
        function mn(a, k,   i, t) { t = a[1]; for (i = 2; i <= k; i++) if (a[i] + 0 < t + 0) t = a[i]; return t }
        { for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
          m = v["method"]; c[m]++; tp[m, c[m]] = v["t_purify"]; tt[m, c[m]] = v["t_total"]
          cp[m, c[m]] = v["cpu_purify"]; ct[m, c[m]] = v["cpu_total"]
          it[m] = v["iters"]; cv[m] = v["converged"]; its[m] = v["iters_s"]; nz[m] = v["nnz_D"]; e[m] = v["energy"]
          g = v["grid"]; n = v["n"]; r = v["ranks"]; order[c[m] == 1 ? ++no : 0] = m }
        END { for (k = 1; k <= no; k++) { m = order[k]
            for (i = 1; i <= c[m]; i++) { a[i] = tp[m, i]; b[i] = tt[m, i]; x[i] = cp[m, i]; y[i] = ct[m, i] }
            err = (eref == "") ? "-" : sprintf("%.1e", (e[m] - eref) < 0 ? eref - e[m] : e[m] - eref)
            printf "## %-9s n=%s ranks=%s grid=%s min (median) of %d: t_purify %.2f (%.2f) s, t_total %.2f (%.2f) s, cpu_purify %.2f (%.2f) s, cpu_total %.2f (%.2f) s, iters %s (converged %s; S: %s), nnz(D) %s, |E - E_ref| %s\n",
              m, n, r, g, c[m], mn(a, c[m]), med(a, c[m]), mn(b, c[m]), med(b, c[m]), mn(x, c[m]), med(x, c[m]), mn(y, c[m]), med(y, c[m]), it[m], cv[m], its[m], nz[m], err } }'
    done
  done
done
