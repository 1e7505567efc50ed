# Helpers shared by the shell tests (sourced). The caller sets OVL, MPIEXEC
# (an array) and tmp (a scratch directory), and may set RUN_TIMEOUT (seconds,
# scaled by OVL_TEST_TIMEOUT_SCALE) and SHOW (lines shown on failure).
pass=0; fail=0
run() { # run NP ARGS... -> sets rc, out, err (stdout also in $tmp/out)
  local np=$1; shift
  timeout $((${RUN_TIMEOUT:-180} * ${OVL_TEST_TIMEOUT_SCALE:-1})) "${MPIEXEC[@]}" -n "$np" "$OVL" "$@" \
    >"$tmp/out" 2>"$tmp/err"
  rc=$?; out=$(cat "$tmp/out"); err=$(cat "$tmp/err")
}
expect() { # expect NAME COMMAND...
  local name=$1; shift
  if "$@"; then pass=$((pass + 1)); else
    fail=$((fail + 1)); echo "FAIL: $name (rc=$rc)"; echo "--- stdout:"; echo "$out" | tail -"${SHOW:-15}"
    echo "--- stderr:"; echo "$err" | tail -"${SHOW:-15}"
  fi
}
has() { grep -q -- "$1" <<<"$2"; }
count() { grep -c -- "$1" <<<"$2"; }
