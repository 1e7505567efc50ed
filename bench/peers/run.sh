#!/usr/bin/env bash
# ovl against its peers on one node: ScaLAPACK's PDGEMM (same ranks, same
# grid, same block-cyclic operands) and one multithreaded OpenBLAS dgemm
# (one process, as many threads as cores).
#
#   bench/peers/run.sh [BUILD_DIR]          (default: build)
#   env: N=4096 NB=256 ITERS=5 WARMUP=1 RANKS="2 4" BETA=0 MPI=openmpi|mpich
#
# Needs the top-level CMakeLists.txt to include bench/peers
# (add_subdirectory(bench/peers)) and ScaLAPACK for the MPI library in use.
# Prints each run's own table, then one summary table.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-$root/build}
exe=$build/bench/pdgemm_peer
if [ ! -x "$exe" ]; then
  echo "run.sh: $exe not found (add add_subdirectory(bench/peers) to CMakeLists.txt, and ScaLAPACK)" >&2
  exit 2
fi
. "$root/scripts/env.sh" # OPENBLAS_CORETYPE, one BLAS thread per rank, Open MPI as root
N=${N:-4096} NB=${NB:-256} ITERS=${ITERS:-5} WARMUP=${WARMUP:-1} RANKS=${RANKS:-"2 4"} BETA=${BETA:-0}
cores=$(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc) # nproc alone honours OMP_NUM_THREADS
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
load() { cut -d' ' -f1-3 /proc/loadavg; }
echo "# bench/peers/run.sh: n=$N NB=$NB beta=$BETA, $WARMUP warm-up + $ITERS timed repetitions, $cores cores," \
  "OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset}; load average at start: $(load)"

echo "\$ OPENBLAS_NUM_THREADS=$cores $exe --dgemm -n $N -i $ITERS -x $WARMUP"
OPENBLAS_NUM_THREADS=$cores "$exe" --dgemm -n "$N" -i "$ITERS" -x "$WARMUP" | tee "$out/dgemm.txt"
for np in $RANKS; do
  note=""
  [ "$np" -gt "$cores" ] && note="   # OVERSUBSCRIBED: $np ranks on $cores cores"
  echo "\$ scripts/mpirun.sh $np $exe -n $N --nb $NB -i $ITERS -x $WARMUP --beta $BETA$note"
  "$root/scripts/mpirun.sh" "$np" "$exe" -n "$N" --nb "$NB" -i "$ITERS" -x "$WARMUP" --beta "$BETA" |
    tee "$out/np$np.txt"
done
echo "# load average at end: $(load)"

python3 - "$out" "$cores" $RANKS <<'PY'
import re, sys
out, cores, ranks = sys.argv[1], int(sys.argv[2]), [int(r) for r in sys.argv[3:]]

def table(path):
    """Rows of a pdgemm_peer table (name -> GFLOP/s median and best) and its header lines."""
    rows, head = {}, ""
    for line in open(path):
        if line.startswith("#"):
            head += line
        elif line.strip():
            f = line.split()
            rows[f[0]] = {"med": float(f[4]), "best": float(f[5])}
    return rows, head

d, dh = table(f"{out}/dgemm.txt")
d = d["dgemm"]
threads = re.search(r"(\d+) OpenBLAS threads", dh).group(1)
print()
print("# summary: GFLOP/s best (median) over the timed repetitions; ratios are of the best rates")
print(f"# dgemm, 1 process x {threads} OpenBLAS threads: {d['best']:.1f} ({d['med']:.1f})")
hdr = ("ranks", "grid", "scalapack", "ovl_pdgemm", "ovl_summa", "ovl_hsumma", "pdgemm/scal", "summa/scal",
       "hsumma/scal", "pdgemm/dgemm", "summa/dgemm", "note")
print("# %-5s %-5s %15s %15s %15s %15s %11s %11s %11s %12s %12s  %s" % hdr)
for np in ranks:
    r, h = table(f"{out}/np{np}.txt")
    grid = re.search(r"grid (\d+x\d+)", h).group(1)
    s, o, m, hs = r["scalapack"], r["ovl_pdgemm"], r["ovl_summa"], r["ovl_hsumma"]
    note = f"oversubscribed: {np} ranks on {cores} cores" if np > cores else ""
    cell = lambda x: "%6.1f (%6.1f)" % (x["best"], x["med"])
    print("  %-5d %-5s %15s %15s %15s %15s %11.3f %11.3f %11.3f %12.3f %12.3f  %s" % (
        np, grid, cell(s), cell(o), cell(m), cell(hs), o["best"] / s["best"], m["best"] / s["best"], hs["best"] / s["best"],
        o["best"] / d["best"], m["best"] / d["best"], note))
PY
