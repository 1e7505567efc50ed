#!/usr/bin/env bash
# Every writer of ovl against files planted at every name it could use
# (docs/lab/reliability.md, "Outputs"): the raw output and its sidecar, the
# Matrix Market output, checkpoint data and state, the trace, the tune file,
# the machine file and ovl-plot's PNG.
#
# For each writer and each kind of planted file (a symlink to a victim file,
# a FIFO, a directory), the kind is planted at the names of the temporaries
# that ovl used to create ("<target>.tmp" and "<target>.tmp.<pid>") for every
# pid the run can have: the runs are made in a new PID namespace (unshare
# -fp), where the launcher and the ranks get the pids 1, 2, 3, ...; without
# unshare (not root) the pid-named cases are skipped with a message. Then a
# symlink to a victim at the target itself. Each run must succeed within its
# time limit, write regular files, and leave the victim byte-identical; a
# FIFO or a directory at the target is refused with the reason, in bounded
# time, and left as it was.
# usage: safe_write_test.sh OVL OVL_PLOT DATA MPIEXEC [MPIEXEC_FLAGS...]
set -u
OVL=$(readlink -f "$1") PLOT=$(readlink -f "$2") DATA=$(readlink -f "$3"); shift 3
MPIEXEC=("$@")
PY=python3; [ -x /usr/bin/python3 ] && PY=/usr/bin/python3
pass=0; fail=0; skipped=""
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
F="$DATA/h2o8_ccpvdz/fock.raw"

NS=()
if unshare -fp --mount-proc true 2>/dev/null; then NS=(unshare -fp --mount-proc); else skipped="pid-named temporaries (no unshare)"; fi
NPIDS=64 # the pids a run in a new namespace can have: mpiexec, its helpers and the ranks

ok() { if "$@"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $case: $*" >&2; [ -s err ] && sed 's/^/    /' err >&2; fi; }

victim_text="victim $$ $(date +%s%N)"
fresh() { rm -rf "$tmp/w" && mkdir "$tmp/w" && printf '%s\n' "$victim_text" >"$tmp/victim"; }
victim_ok() { [ "$(cat "$tmp/victim")" = "$victim_text" ] && [ ! -L "$tmp/victim" ]; }
regular() { for f in "$@"; do [ -f "w/$f" ] && [ ! -L "w/$f" ] || return 1; done; }
# plant KIND at w/NAME
plant() {
  case $1 in
    symlink) ln -s "$tmp/victim" "w/$2" ;;
    fifo) mkfifo "w/$2" ;;
    dir) mkdir "w/$2" ;;
  esac
}
# plant KIND at every name the old writers used for the targets given
plant_tmp_names() {
  local kind=$1; shift
  for t in "$@"; do
    plant "$kind" "$t.tmp"
    if [ ${#NS[@]} -gt 0 ]; then for p in $(seq 1 $NPIDS); do plant "$kind" "$t.tmp.$p"; done; fi
  done
}
runw() { (cd w && timeout -k 5 90 "${NS[@]}" "$@") >out 2>err; rc=$?; }

# the writers: name, targets written, command (run in w/)
writer_cmd() {
  case $1 in
    raw) runw "$OVL" purify --fock "$F" -q -o D.raw ;;
    mtx) runw "$OVL" purify --fock "$F" -q -o D.mtx ;;
    checkpoint) runw "$OVL" purify --fock "$F" -q --checkpoint CK --checkpoint-every 1 --max-iter 3 ;;
    trace) runw "$OVL" gemm -n 64 -i 2 -q -t TR ;;
    tune) runw "$OVL" tune --family gemm -n 64 --top 1 -i 1 -x 0 -q -o T.json ;;
    machine) runw "${MPIEXEC[@]}" -n 2 "$OVL" bench machine -o M.json --max-size 4096 -i 2 -q ;;
    plot) cp "$tmp/g.jsonl" w/ && runw "$PLOT" sweep g.jsonl --x n --y gflops_median -o P.png ;;
  esac
}
writer_targets() {
  case $1 in
    raw) echo D.raw D.raw.json ;;
    mtx) echo D.mtx ;;
    checkpoint) echo CK.state.json CK.it0.raw CK.it0.raw.json CK.it1.raw CK.it1.raw.json CK.it2.raw CK.it2.raw.json ;;
    trace) echo TR.json TR.csv ;;
    tune) echo T.json ;;
    machine) echo M.json ;;
    plot) echo P.png ;;
  esac
}
# the files that must exist after a successful run
writer_results() {
  case $1 in
    checkpoint) echo CK.state.json CK.it2.raw CK.it2.raw.json ;;
    *) writer_targets "$1" ;;
  esac
}
writer_ok_rc() { case $1 in checkpoint) [ "$rc" -eq 1 ] ;; *) [ "$rc" -eq 0 ] ;; esac; } # checkpoint: stops at --max-iter

writers="raw mtx checkpoint trace tune machine plot"
"$OVL" gemm -n 64 -i 2 -q --json >"$tmp/g.jsonl" 2>/dev/null
"$PLOT" check >/dev/null 2>&1; prc=$?
if [ $prc -ne 0 ]; then writers=${writers% plot}; skipped="$skipped${skipped:+; }ovl-plot (matplotlib missing)"; fi

for w in $writers; do
  read -r -a targets <<<"$(writer_targets $w)"
  read -r -a results <<<"$(writer_results $w)"
  for kind in symlink fifo dir; do
    case="$w: a $kind at every temporary name"
    fresh; plant_tmp_names $kind "${targets[@]}"
    writer_cmd $w
    ok writer_ok_rc $w
    ok test $rc -ne 124 -a $rc -ne 137
    ok regular "${results[@]}"
    ok victim_ok
    if [ $kind = fifo ]; then ok test -p "w/${targets[0]}.tmp"; fi
    if [ $kind = dir ]; then ok test -d "w/${targets[0]}.tmp"; fi
  done
  case="$w: a symlink at the target"
  fresh
  for t in "${results[@]}"; do plant symlink "$t"; done
  writer_cmd $w
  ok writer_ok_rc $w
  ok regular "${results[@]}"
  ok victim_ok
  for kind in fifo dir; do
    case="$w: a $kind at the target"
    fresh; plant $kind "${results[0]}"
    writer_cmd $w
    ok test $rc -ne 0 -a $rc -ne 124 -a $rc -ne 137
    ok grep -q -i "fifo\|directory" err
    if [ $kind = fifo ]; then ok test -p "w/${results[0]}"; else ok test -d "w/${results[0]}"; fi
  done
done

echo "safe writes: $pass passed, $fail failed${skipped:+ (skipped: $skipped)}"
[ $fail -eq 0 ]
