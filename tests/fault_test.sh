#!/usr/bin/env bash
# Faults injected into running `ovl purify` jobs on 4 ranks (a 2 x 2 x 1 grid,
# alg6) of a synthetic n = 700 Fock matrix (about 25 iterations), with
# checkpoints every 2 iterations:
#  1. SIGTERM to every rank (what batch systems do): the job stops at the next
#     iteration boundary with exit code 143, writes a final checkpoint, no -o
#     output; --restart from it converges to the eigensolver's density.
#  2. SIGINT to every rank: exit code 130, the same.
#  3. SIGUSR1 to mpiexec (Open MPI's mpiexec and MPICH's Hydra pass it on to
#     every rank at once): exit code 138.
#  4. SIGTERM to mpiexec (Open MPI sends the ranks SIGTERM, then SIGKILL, each
#     after odls_base_sigkill_timeout = 1 s; Hydra passes SIGTERM on): the job
#     ends within a bounded time, non-zero, and the last checkpoint is
#     consistent.
#  5. kill -9 of one rank: the job ends within a bounded time with the
#     launcher's report of the killed process (Open MPI names the rank; Hydra
#     prints, on standard output, "BAD TERMINATION" with the exit code and
#     string of the first process it saw end, usually "Killed (signal 9)",
#     and a PID, not a rank: docs/guides/mpi.md); an earlier output file of the
#     same name is intact; the last checkpoint is consistent and --restart
#     from it works.
#  6. A full disk (a 1 MiB tmpfs, and one with room for the data but not for
#     its sidecar, mounted by the test; skipped when mount is not allowed):
#     an error naming ENOSPC, and no file left, neither for -o nor for
#     checkpoints.
#  7. SIGTERM while the ranks wait before the iterations start (one rank is
#     stopped with SIGSTOP as soon as the job prints its header, so the others
#     block in their first collective): the first SIGTERM ends them at once
#     with a message and exit code 143, and nothing is written.
# "Consistent checkpoint": PREFIX.state.json parses, names a data file whose
# sidecar says 700 x 700 symmetric and whose size is 700*700*8 bytes, and the
# data is finite and symmetric (to 1e-12, the writer's test).
# usage: fault_test.sh OVL MPIEXEC [MPIEXEC_FLAGS...]
set -u
OVL=$(readlink -f "$1"); shift
MPIEXEC=("$@")
PY=python3; [ -x /usr/bin/python3 ] && PY=/usr/bin/python3
pass=0; fail=0; skip=""
tmp=$(mktemp -d)
mounts=()
cleanup() { for m in "${mounts[@]}"; do umount "$m" 2>/dev/null; done; rm -rf "$tmp"; }
trap cleanup EXIT
cd "$tmp" || exit 1
T=$((60 * ${OVL_TEST_TIMEOUT_SCALE:-1}))
n=700; nocc=350

ok() { # NAME COMMAND...
  local name=$1; shift
  if "$@"; then pass=$((pass + 1)); else
    fail=$((fail + 1)); echo "FAIL: $name"; echo "--- stderr:"; grep -v '^--\|^ \|^$' err 2>/dev/null | tail -n 8
  fi
}
has() { grep -qE -- "$1" "$2"; }
# a well-conditioned synthetic Fock matrix with a small HOMO-LUMO gap
"$PY" - "$n" <<'PY'
import json, sys
import numpy as np
n = int(sys.argv[1])
r = np.random.default_rng(1).standard_normal((n, n)) * 1e-3
F = np.diag(np.linspace(-1, 1, n)) + (r + r.T) / 2
F.astype("<f8").tofile("F.raw")
json.dump({"rows": n, "cols": n, "symmetric": True}, open("F.raw.json", "w"))
PY
base=(purify --fock F.raw --nocc "$nocc" --algo alg6)
# start a checkpointed run in the background; wait for its first checkpoint
start() { # PREFIX [extra args]
  local pre=$1; shift
  rm -f "$pre".*
  : >out
  "${MPIEXEC[@]}" -n 4 "$OVL" "${base[@]}" --checkpoint "$pre" --checkpoint-every 2 "$@" >out 2>err &
  job=$!
  local i
  # the rank processes first (so that no time is lost between the checkpoint
  # and the signal), then the first checkpoint
  for ((i = 0; i < 1200; i++)); do
    rank_pids=$(ranks)
    [ "$(wc -w <<<"$rank_pids")" -eq 4 ] && break
    sleep 0.05
  done
  for ((i = 0; i < 1200; i++)); do [ -f "$pre.state.json" ] && return 0; sleep 0.02; done
  return 1
}
# wait for the job at most T seconds; sets rc and dt
finish() {
  local t0=$SECONDS i
  for ((i = 0; i < T * 10; i++)); do kill -0 "$job" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$job" 2>/dev/null; then kill -9 "$job"; rc=124; else wait "$job"; rc=$?; fi
  dt=$((SECONDS - t0))
}
# the rank processes: descendants of mpiexec running ovl (Open MPI forks them
# directly, MPICH's hydra through a proxy)
desc() { local c; for c in $(pgrep -P "$1"); do echo "$c"; desc "$c"; done; }
ranks() { local p; for p in $(desc "$job"); do [ "$(ps -o comm= -p "$p")" = ovl ] && echo "$p"; done; }
# a rank process's MPI rank, from the launcher's environment (Open MPI, Hydra)
rank_of() { tr '\0' '\n' <"/proc/$1/environ" 2>/dev/null | sed -n 's/^\(OMPI_COMM_WORLD_RANK\|PMI_RANK\)=//p' | head -n 1; }
ompi="" hydra=""
"${MPIEXEC[0]}" --version 2>&1 | grep -q "Open MPI\|OpenRTE" && ompi=1
"${MPIEXEC[0]}" --version 2>&1 | grep -q "HYDRA" && hydra=1
consistent() { # PREFIX: the checkpoint is whole
  "$PY" - "$1" "$n" <<'PY'
import json, os, sys
import numpy as np
pre, n = sys.argv[1], int(sys.argv[2])
st = json.load(open(pre + ".state.json"))
d = st["data"]
side = json.load(open(d + ".json"))
assert {k: side[k] for k in ("rows", "cols", "symmetric")} == {"rows": n, "cols": n, "symmetric": True}, side
assert os.path.getsize(d) == n * n * 8, os.path.getsize(d)
D = np.fromfile(d, dtype="<f8").reshape(n, n)
assert np.isfinite(D).all() and np.abs(D - D.T).max() <= 1e-12 * max(1.0, np.abs(D).max())
assert st["iteration"] >= 2 and st["n"] == n, st
print(f"checkpoint {pre}: iteration {st['iteration']}, {d}: whole")
PY
}
restart_ok() { # PREFIX: --restart converges to the eigensolver's density
  timeout -k 5 "$T" "${MPIEXEC[@]}" -n 4 "$OVL" "${base[@]}" --checkpoint "$1" --restart --check -q -o R.raw >rout 2>rerr
  local r=$?
  grep -q PASS rout && [ "$r" -eq 0 ] && [ -f R.raw ] || { echo "restart from $1: rc=$r"; tail -n 5 rerr; return 1; }
  rm -f R.raw R.raw.json
}
hydra_report() { # Hydra's banner; its standard output is shown when it is missing
  has "BAD TERMINATION|signal 9|Killed|EXIT CODE: 9[[:space:]]*$" both && return 0
  echo "--- the launcher's standard output:"; tail -n 12 out; return 1
}
no_output() { [ ! -e D.raw ] && [ ! -e D.raw.json ] && [ -z "$(ls D.raw.tmp.* 2>/dev/null)" ]; }
all_or_nothing() { { [ ! -e D.raw ] && [ ! -e D.raw.json ]; } || { [ -s D.raw ] && [ -s D.raw.json ]; }; }

# 1. SIGTERM to every rank
if start ck1 -o D.raw; then
  kill -TERM $rank_pids; finish
  ok "SIGTERM: exit 143 (rc=$rc)" test "$rc" -eq 143
  ok "SIGTERM: message" has "stopped by SIGTERM after [0-9]+ iterations.*checkpoint of iteration [0-9]+ in ck1.state.json" err
  ok "SIGTERM: no output" no_output
  ok "SIGTERM: checkpoint consistent" consistent ck1
  ok "SIGTERM: restart" restart_ok ck1
else ok "SIGTERM: a checkpoint appears" false; finish; fi
# 2. SIGINT to every rank
if start ck2 -o D.raw; then
  kill -INT $rank_pids; finish
  ok "SIGINT: exit 130 (rc=$rc)" test "$rc" -eq 130
  ok "SIGINT: message" has "stopped by SIGINT" err
  ok "SIGINT: no output" no_output
  ok "SIGINT: checkpoint consistent" consistent ck2
else ok "SIGINT: a checkpoint appears" false; finish; fi
# 3. SIGUSR1 to mpiexec (how launchers other than Open MPI's and Hydra pass
# signals on is not tested)
if [ -z "$ompi$hydra" ]; then echo "faults: SKIP SIGUSR1 and SIGTERM to mpiexec: neither Open MPI's mpiexec nor Hydra"
elif start ck3 -o D.raw; then
  kill -USR1 "$job"; finish
  ok "SIGUSR1 to mpiexec: exit 138 (rc=$rc)" test "$rc" -eq 138
  ok "SIGUSR1 to mpiexec: message" has "stopped by SIGUSR1" err
  ok "SIGUSR1 to mpiexec: no output" no_output
  ok "SIGUSR1 to mpiexec: checkpoint consistent" consistent ck3
else ok "SIGUSR1: a checkpoint appears" false; finish; fi
# 4. SIGTERM to mpiexec
if [ -z "$ompi$hydra" ]; then :
elif start ck4 -o D.raw; then
  kill -TERM "$job"; finish
  ok "SIGTERM to mpiexec: ends (rc=$rc, ${dt}s)" test "$rc" -ne 0 -a "$rc" -ne 124
  # the ranks see SIGTERM a second after mpiexec: a run that converged in the
  # meantime has written its output in full and says so
  if grep -q "arrived after the purification had finished" err; then
    ok "SIGTERM to mpiexec after convergence: output whole" test -f D.raw -a -f D.raw.json
    rm -f D.raw D.raw.json
  else
    # SIGKILL follows SIGTERM a second later and may land while a run that has
    # just converged writes D: what is guaranteed then is all or nothing
    ok "SIGTERM to mpiexec: no output, or all of it" all_or_nothing
  fi
  ok "SIGTERM to mpiexec: checkpoint consistent" consistent ck4
else ok "SIGTERM to mpiexec: a checkpoint appears" false; finish; fi
# 5. kill -9 of one rank, with an earlier output of the same name
timeout -k 5 "$T" "${MPIEXEC[@]}" -n 4 "$OVL" "${base[@]}" -q -o D.raw >out 2>err
ok "reference run" test -f D.raw
sum0=$(cat D.raw D.raw.json | md5sum)
if start ck5 -o D.raw; then
  victim=$(tr -s " \n" "\n\n" <<<"$rank_pids" | sed -n 3p)
  kill -9 "$victim"; finish
  ok "kill -9: the job ends (rc=$rc, ${dt}s)" test "$rc" -ne 0 -a "$rc" -ne 124
  if [ -n "$ompi" ]; then
    ok "kill -9: message names the rank" has "rank [0-9]+ .*(exited on signal 9|signal 9|Killed)" err
  else # Hydra reports on standard output and names no rank. Its banner gives
    # the exit code and string of the first process it saw end: the killed one
    # ("EXIT CODE: 9", "Killed (signal 9)"), or, when a survivor's MPI call
    # failed on the lost connection and that survivor ended first (a loaded
    # machine), the survivor's. The banner itself is the report.
    cat out err >both
    ok "kill -9: the launcher's report" hydra_report
  fi
  ok "kill -9: earlier output intact" test "$(cat D.raw D.raw.json | md5sum)" = "$sum0"
  ok "kill -9: checkpoint consistent" consistent ck5
  ok "kill -9: restart" restart_ok ck5
else ok "kill -9: a checkpoint appears" false; finish; fi
rm -f D.raw D.raw.json
echo "faults: stray temporaries: $(ls ./*.tmp.* 2>/dev/null | tr '\n' ' ')"

# 7. SIGTERM before the iterations: a larger F (reading and checking it takes
# a while), one rank stopped right after the header, SIGTERM to the others
"$PY" - <<'PY'
import json
import numpy as np
n = 3000
r = np.random.default_rng(2).standard_normal((n, n)) * 1e-3
F = np.diag(np.linspace(-1, 1, n)) + (r + r.T) / 2
F.astype("<f8").tofile("G.raw")
json.dump({"rows": n, "cols": n, "symmetric": True}, open("G.raw.json", "w"))
PY
# (out emptied first: the background job's own redirection may come after the
# first look for the header, which would then find the previous case's)
: >out
"${MPIEXEC[@]}" -n 4 "$OVL" purify --fock G.raw --nocc 1500 --algo alg6 -o D7.raw >out 2>err &
job=$!
for ((i = 0; i < 1200; i++)); do grep -q "^# ovl purify" out 2>/dev/null && break; sleep 0.01; done
for ((i = 0; i < 600; i++)); do
  rank_pids=$(ranks)
  [ "$(wc -w <<<"$rank_pids")" -eq 4 ] && break
  sleep 0.01
done
# the last rank, not rank 0 (which prints the message): by the launcher's
# rank variable, else the last process started
stopped=""
for p in $rank_pids; do [ "$(rank_of "$p")" = 3 ] && stopped=$p; done
[ -n "$stopped" ] || stopped=$(tr -s " \n" "\n\n" <<<"$rank_pids" | sed -n 4p)
[ -n "$stopped" ] && kill -STOP "$stopped"
sleep 0.5
if grep -q "# iter" out; then
  echo "faults: SKIP SIGTERM before the iterations: the iterations had started before the rank was stopped"
  kill -CONT "$stopped"; finish
else
  for p in $rank_pids; do [ "$p" != "$stopped" ] && kill -TERM "$p"; done
  finish
  [ -n "$stopped" ] && kill -CONT "$stopped" 2>/dev/null
  ok "SIGTERM before the iterations: ends at once (rc=$rc, ${dt}s)" test "$rc" -ne 124 -a "$rc" -ne 0
  ok "SIGTERM before the iterations: message" has "stopped by SIGTERM before the iterations started; nothing written" err
  ok "SIGTERM before the iterations: no output" test ! -e D7.raw -a ! -e D7.raw.json -a -z "$(ls D7.raw.tmp.* 2>/dev/null)"
fi
rm -f G.raw G.raw.json

# 6. a full disk
mkdir -p full tight
if mount -t tmpfs -o size=1m ovl-full full 2>/dev/null; then
  mounts+=("$tmp/full")
  timeout -k 5 "$T" "${MPIEXEC[@]}" -n 4 "$OVL" "${base[@]}" -q -o full/D.raw >out 2>err; rc=$?
  ok "full disk -o: exit 1 (rc=$rc)" test "$rc" -eq 1
  ok "full disk -o: message" has "cannot write 'full/D.raw'.*No space left on device" err
  ok "full disk -o: nothing left" test -z "$(ls -A full)"
  timeout -k 5 "$T" "${MPIEXEC[@]}" -n 4 "$OVL" "${base[@]}" -q --checkpoint full/ck --checkpoint-every 2 >out 2>err; rc=$?
  ok "full disk checkpoint: exit 1 (rc=$rc)" test "$rc" -eq 1
  ok "full disk checkpoint: message" has "cannot write 'full/ck.it2.raw'.*No space left on device" err
  ok "full disk checkpoint: nothing left" test -z "$(ls -A full)"
  # room for the n*n*8 bytes of data (whole pages) but not for the sidecar
  if mount -t tmpfs -o size=$(((n * n * 8 + 4095) / 4096 * 4096)) ovl-tight tight 2>/dev/null; then
    mounts+=("$tmp/tight")
    timeout -k 5 "$T" "${MPIEXEC[@]}" -n 4 "$OVL" "${base[@]}" -q -o tight/D.raw >out 2>err; rc=$?
    ok "no room for the sidecar: exit 1 (rc=$rc)" test "$rc" -eq 1
    ok "no room for the sidecar: message" has "cannot write .*'tight/D.raw.json'.*No space left on device" err
    ok "no room for the sidecar: nothing left" test -z "$(ls -A tight)"
  fi
else
  skip=1; echo "faults: SKIP full disk: cannot mount a tmpfs here (needs root and mount rights)"
fi
echo "faults: $pass passed, $fail failed${skip:+, full-disk cases skipped=$skip}"
[ "$fail" -eq 0 ]
