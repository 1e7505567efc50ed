#!/usr/bin/env bash
# The drop-in (libovl_scalapack.so) against plain ScaLAPACK on an unchanged
# program (tests/dropin_pdgemm.c, linked with ScaLAPACK alone), shape by
# shape: square 1024/2048/4096, transposed, sub-matrix, rank-k update
# (k = 64), mat-vec (n = 1), small (n = 128) and PDGETRF (n = 3000, whose
# pdgemm_ calls are ScaLAPACK's own).
#
#   bench/peers/dropin_shapes.sh [BUILD_DIR]      (default: build)
#   env: NP=2 REPS=5 NB=256 MPI=openmpi|mpich
#        VARIANTS="plain dropin"  (also: nocap, preloaded with
#        OVL_OPTIONS="--dropin-mem 1024G", no memory cap; layout and
#        convert, preloaded with --dropin-route layout / convert)
#        CALLS=1  calls per launch of the three fast shapes (rank-k update,
#        mat-vec, small), whose single calls last 0.1-25 ms: the launch's
#        time is then the median of its calls
#        LARGE_CALLS=1  the same for the square, transposed and sub-matrix
#        products and PDGETRF (each call of PDGETRF on a fresh copy)
#
# Each run is one launch: one warm-up call and CALLS or LARGE_CALLS timed
# calls (each the MAX over ranks), the peak RSS of the ranks (MAX), a check of C. The variants run
# interleaved (shape by shape, repetition by repetition), so a change of
# load hits them alike. Prints the load average at start and end, then a
# Markdown table: min and median over REPS of the time, the median peak
# RSS, and the ratios plain / preloaded of the mins and of the medians
# (> 1: the drop-in is faster) and RSS preloaded / plain.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-$root/build}
exe=$build/tests/dropin_pdgemm
lib=$build/lib/libovl_scalapack.so
for f in "$exe" "$lib"; do
  [ -e "$f" ] || { echo "dropin_shapes.sh: $f not found (build with ScaLAPACK)" >&2; exit 2; }
done
. "$root/scripts/env.sh"
NP=${NP:-2} REPS=${REPS:-5} NB=${NB:-256} VARIANTS=${VARIANTS:-"plain dropin"} CALLS=${CALLS:-1} LARGE_CALLS=${LARGE_CALLS:-1}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
load() { cut -d' ' -f1-3 /proc/loadavg; }
setenv() { # NAME VALUE -> the launcher's flags, into env
  if [ "${MPI:-openmpi}" = mpich ]; then env+=(-genv "$1" "$2"); else env+=(-x "$1=$2"); fi
}
# name | program arguments
shapes=(
  "square 1024|--shape N N 1024 1024 1024 0 $NB $LARGE_CALLS"
  "square 2048|--shape N N 2048 2048 2048 0 $NB $LARGE_CALLS"
  "square 4096|--shape N N 4096 4096 4096 0 $NB $LARGE_CALLS"
  "transposed 2048 (T, T)|--shape T T 2048 2048 2048 0 $NB $LARGE_CALLS"
  "sub-matrix 2048 at (101, 101)|--shape N N 2048 2048 2048 100 $NB $LARGE_CALLS"
  "rank-k update 4096 x 4096, k = 64|--shape N N 4096 4096 64 0 $NB $CALLS"
  "mat-vec 4096 x 4096 times 1 column|--shape N N 4096 1 4096 0 $NB $CALLS"
  "small n = 128|--shape N N 128 128 128 0 $NB $CALLS"
  "PDGETRF n = 3000|--lu 3000 64 $LARGE_CALLS"
)
echo "# bench/peers/dropin_shapes.sh: $NP ranks, NB=$NB, $REPS interleaved repetitions, $CALLS call(s) per launch of the fast shapes and $LARGE_CALLS of the others, variants: $VARIANTS;" \
  "load average at start: $(load)"
for rep in $(seq "$REPS"); do
  for s in "${!shapes[@]}"; do
    read -r -a args <<<"${shapes[$s]#*|}"
    for v in $VARIANTS; do
      env=()
      case $v in
        plain) ;;
        dropin) setenv LD_PRELOAD "$lib" ;;
        nocap) setenv LD_PRELOAD "$lib" && setenv OVL_OPTIONS "--dropin-mem 1024G" ;;
        layout | convert) setenv LD_PRELOAD "$lib" && setenv OVL_OPTIONS "--dropin-route $v" ;;
      esac
      line=$("$root/scripts/mpirun.sh" "$NP" "${env[@]}" "$exe" "${args[@]}" 2>&1 | grep -E "^(shape|lu) ")
      grep -qE "( |=)ok$" <<<"$line" || { echo "dropin_shapes.sh: WRONG: $v ${shapes[$s]}: $line" >&2; exit 1; }
      # the median of the launch's calls (one call: its time)
      t=$(grep -oE " t=[0-9.]+" <<<"$line" | cut -d= -f2 | sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}')
      rss=$(sed 's/.*rss_mb=\([0-9.]*\).*/\1/' <<<"$line")
      echo "$s $v $t $rss" >>"$out/runs"
    done
  done
done
echo "# load average at end: $(load)"
python3 - "$out/runs" "$VARIANTS" "${shapes[@]}" <<'PY'
import statistics, sys
runs, variants, shapes = sys.argv[1], sys.argv[2].split(), [s.split("|")[0] for s in sys.argv[3:]]
t, r = {}, {}
for line in open(runs):
    s, v, tt, rr = line.split()
    t.setdefault((int(s), v), []).append(float(tt))
    r.setdefault((int(s), v), []).append(float(rr))
med = lambda d, k: statistics.median(d[k])
low = lambda d, k: min(d[k])
others = [v for v in variants if v != "plain"]
head = ["shape"] + [f"{v} s min / med" for v in variants] + [f"{v} RSS MB" for v in variants]
head += [f"plain/{v} min / med" for v in others] + [f"RSS {v}/plain" for v in others]
print("| " + " | ".join(head) + " |")
print("|" + "---|" * len(head))
for i, name in enumerate(shapes):
    row = [name] + ["%.4f / %.4f" % (low(t, (i, v)), med(t, (i, v))) for v in variants]
    row += ["%.0f" % med(r, (i, v)) for v in variants]
    row += ["%.2f / %.2f" % (low(t, (i, "plain")) / low(t, (i, v)), med(t, (i, "plain")) / med(t, (i, v)))
            for v in others]
    row += ["%.2f" % (med(r, (i, v)) / med(r, (i, "plain"))) for v in others]
    print("| " + " | ".join(row) + " |")
PY
