#!/usr/bin/env bash
# libovl_scalapack.so, the pdgemm_ drop-in, under an unchanged ScaLAPACK
# program (tests/dropin_pdgemm.c: BLACS set-up and pdgemm_ only, checked
# against the exact product):
#   1. the library exports only pdgemm_, pdsymm_ and ovl_* names;
#   2. on 1, 4 and 6 ranks: the program plain (ScaLAPACK's pdgemm_), with
#      LD_PRELOAD=libovl_scalapack.so, and linked with -lovl_scalapack before
#      ScaLAPACK, with OVL_OPTIONS="--dropin-min 1 --dropin-mem 1024G" (no size
#      threshold, no cap: ovl takes what it can): all PASS (pzgemm_ too,
#      which stays ScaLAPACK's) with the same checksums, and the report
#      (OVL_SCALAPACK_REPORT=1) shows every call handled by ovl but the one
#      with a descriptor ovl does not take (forwarded, reason "descriptor");
#   2a. --dropin-route layout (SUMMA on ScaLAPACK's layout, no conversion)
#      on 1, 2 and 4 ranks and --dropin-route convert on 4: same checksums,
#      every non-empty call in the forced route (report's in_layout);
#   2b. the default options on 4 ranks: the program's small products are
#      left to ScaLAPACK (reasons "small" or "memory", no call on ovl), same
#      checksums; --dropin-min 50 forwards exactly the cases below 50;
#   2c. PDGETRF (--lu) plain and preloaded on 2 ranks: the solve is right
#      and every pdgemm_ call, all made inside ScaLAPACK, is forwarded
#      (reason "internal", none on ovl);
#   3. OVL_SCALAPACK_DISABLE=1 forwards every call (still correct);
#   4. the README's example (the block after "<!-- dropin example -->"),
#      run as written on a copy of the program;
#   5. ScaLAPACK's own PBLAS level-3 tester (dpb3tst of the launcher's MPI,
#      Debian's scalapack-mpi-test; skipped if absent) on 4 ranks, preloaded,
#      its input cut to PDGEMM and PDSYMM (both SIDEs), with the model's route
#      and with --dropin-route layout: every computational test passes and
#      ovl handled its calls (the error-exit tests are forwarded);
#   6. tests/dropin_pdgemm.f90, the same kind of program in Fortran (hidden
#      string lengths), built with the launcher's mpif90 and ScaLAPACK,
#      plain and preloaded on 4 ranks (skipped without gfortran).
# usage: dropin_test.sh PLAIN LINKED LIBOVL_SCALAPACK SOURCE_DIR MPIEXEC [MPIEXEC flags...]
set -euo pipefail
plain=$1 linked=$2 lib=$3 src=$4 mpiexec=$5
shift 5
flags=("$@")
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ovl_dropin_test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
export TMPDIR=$tmp
fail() { echo "dropin test: FAIL: $*"; exit 1; }
# mpiexec's flag that passes an environment variable to the ranks
# and the flavour of Debian's ScaLAPACK built for it
if "$mpiexec" --version 2>&1 | grep -q "Open MPI\|OpenRTE"; then envflag=-x mpi=openmpi; else envflag=-genv mpi=mpich; fi
setenv() { # NAME=VALUE -> the launcher's flags
  if [ "$envflag" = -x ]; then printf '%s\n' -x "$1"; else printf '%s\n' -genv "${1%%=*}" "${1#*=}"; fi
}

# Sanitizer build (OVL_SANITIZE): the ASan runtime must come first, so it
# is preloaded before the library, leaks are not checked in the
# uninstrumented PBLAS tester, and the README example (built with plain
# mpicc) is skipped.
asan=$(ldd "$plain" 2>/dev/null | awk '/libasan/ { print $3; exit }')
preload=$lib
[ -n "$asan" ] && preload=$asan:$lib
# A preload the launcher's flags give every rank (MPICH: -genv LD_PRELOAD libovl_yield.so, whose blocking
# calls yield the processor; tests/CMakeLists.txt) stays after ours: a later -genv LD_PRELOAD replaces it,
# and without it 4 or 6 ranks polling on 2 cores take several times as long.
for ((i = 0; i + 2 < ${#flags[@]}; i++)); do
  [ "${flags[i]}" = -genv ] && [ "${flags[i + 1]}" = LD_PRELOAD ] && preload=$preload:${flags[i + 2]}
done

# ---- 1. exported names ---------------------------------------------------
bad=$(nm -D --defined-only "$lib" | awk '{print $3}' | grep -v -E '^(pdgemm_|pdsymm_|ovl_.*)$' || true)
[ -z "$bad" ] || fail "libovl_scalapack.so exports names other than pdgemm_, pdsymm_, ovl_*: $bad"
nm -D --defined-only "$lib" | grep -q ' T pdgemm_$' || fail "libovl_scalapack.so does not export pdgemm_"
echo "dropin test: exports ok: $(nm -D --defined-only "$lib" | awk '{print $3}' | tr '\n' ' ')"

# run NP OUT [VAR=VALUE...] -- PROGRAM: one run, stdout+stderr in OUT, PASS required
run() {
  local np=$1 out=$2
  shift 2
  local env=()
  while [ "$1" != -- ]; do mapfile -t -O ${#env[@]} env < <(setenv "$1"); shift; done
  shift
  "$mpiexec" "${flags[@]}" -n "$np" "${env[@]}" "$@" >"$out" 2>&1 || { tail -20 "$out"; fail "$* on $np ranks"; }
  grep -q "^dropin_pdgemm: PASS" "$out" || { tail -20 "$out"; fail "$* on $np ranks: no PASS"; }
}
# checksums of two runs agree to 1e-9 (relative)
same_sums() {
  paste <(grep '^grid' "$1") <(grep '^grid' "$2") | awk -v a="$1" -v b="$2" '
    { split($4, x, "="); split($10, y, "="); d = x[2] - y[2]; if (d < 0) d = -d
      s = x[2] < 0 ? -x[2] : x[2]; if (d > 1e-9 * (s > 1 ? s : 1) || $1 != $7 || $2 != $8) bad = 1; n++ }
    END { exit (bad || n == 0) }' || fail "checksums differ: $1 vs $2"
}
# report line of rank 0: "ovl_scalapack: rank 0: pdgemm calls=N ovl=H forwarded=F"
report() { grep -o "rank 0: pdgemm calls=[0-9]* ovl=[0-9]* forwarded=[0-9]*" "$1" || fail "no report in $1"; }

# ---- 2. plain, preloaded, linked first -----------------------------------
all="--dropin-min 1 --dropin-mem 1024G"
for np in 1 4 6; do
  run "$np" "$tmp/plain$np" -- "$plain"
  grep -q "ovl_scalapack" "$tmp/plain$np" && fail "plain run on $np ranks went through libovl_scalapack"
  run "$np" "$tmp/pre$np" LD_PRELOAD="$preload" OVL_SCALAPACK_REPORT=1 OVL_OPTIONS="$all" -- "$plain"
  run "$np" "$tmp/lnk$np" OVL_SCALAPACK_REPORT=1 OVL_OPTIONS="$all" -- "$linked"
  for v in pre lnk; do
    same_sums "$tmp/plain$np" "$tmp/$v$np"
    r=$(report "$tmp/$v$np")
    calls=$(sed 's/.*calls=\([0-9]*\).*/\1/' <<<"$r") by=$(sed 's/.*ovl=\([0-9]*\).*/\1/' <<<"$r")
    # every call but the one with a smaller first block (1x1 grid), forwarded for that reason
    [ "$calls" -gt 1 ] && [ "$by" = $((calls - 1)) ] || fail "$v on $np ranks: ovl did not handle every call but one: $r"
    grep -q "rank 0: pdgemm forwarded reason=descriptor count=1 " "$tmp/$v$np" || fail "$v on $np ranks: no reason=descriptor count=1"
    echo "dropin test: np=$np $v: PASS, same checksums as plain, $r"
  done
done

# ---- 2a. each of ovl's routes forced: SUMMA on ScaLAPACK's layout (1, 2 and 4 ranks:
# grids 1x1, 2x1, 2x2, 1x3) and the conversion to ovl's layout (4 ranks) -----
run 2 "$tmp/plain2" -- "$plain"
for rt in layout:1 layout:2 layout:4 convert:4; do
  np=${rt#*:} route=${rt%:*}
  run "$np" "$tmp/$route$np" LD_PRELOAD="$preload" OVL_SCALAPACK_REPORT=1 OVL_OPTIONS="$all --dropin-route $route" -- "$plain"
  same_sums "$tmp/plain$np" "$tmp/$route$np"
  r=$(grep -o "rank 0: pdgemm calls=[0-9]* ovl=[0-9]* forwarded=[0-9]* in_layout=[0-9]*" "$tmp/$route$np") ||
    fail "$route on $np ranks: no report"
  calls=$(sed 's/.*calls=\([0-9]*\).*/\1/' <<<"$r") by=$(sed 's/.*ovl=\([0-9]*\).*/\1/' <<<"$r")
  lay=$(sed 's/.*in_layout=\([0-9]*\).*/\1/' <<<"$r")
  [ "$by" = $((calls - 1)) ] || fail "$route on $np ranks: ovl did not handle every call but one: $r"
  # in layout: every call but the empty ones (m, n or k = 0: 3 per grid) and the forwarded one
  if [ "$route" = layout ]; then want=$((by - 3 * (calls - 1) / 16)); else want=0; fi
  [ "$lay" = "$want" ] || fail "$route on $np ranks: $lay calls in ScaLAPACK's layout, expected $want: $r"
  echo "dropin test: --dropin-route $route on $np ranks: PASS, same checksums as plain, $r"
done

# ---- 2b. default options: small products stay with ScaLAPACK ---------------
# per case of the program (awk over its table): "zero" (m, n or k = 0: ovl's
# quick return) or "small" (0 < min(m, n, k) < 50); times 4, the grids rank 0
# of 4 ranks is in (1x1, 2x1, 2x2, 1x3); the IMB < MB case is not counted
count() {
  awk -v want="$1" '/^static const gcase cases/ { on = 1; next } on && /^ *\{/ { gsub(/[{}]/, ""); split($0, f, ",");
    m = f[3] + 0; n = f[4] + 0; k = f[5] + 0; s = m < n ? m : n; s = s < k ? s : k
    if (f[17] + 0 != 3 && ((want == "zero" && s == 0) || (want == "small" && s > 0 && s < 50))) c++ }
    on && /;/ { exit } END { print 4 * c }' "$src/tests/dropin_pdgemm.c"
}
run 4 "$tmp/def" LD_PRELOAD="$preload" OVL_SCALAPACK_REPORT=1 -- "$plain"
same_sums "$tmp/plain4" "$tmp/def"
r=$(report "$tmp/def")
grep -q "ovl=$(count zero) forwarded=[1-9]" <<<"$r" ||
  fail "default options: ovl took more than the $(count zero) empty products (all small): $r"
grep -q "pdgemm forwarded reason=\(small\|memory\)" "$tmp/def" || fail "default options: no reason=small/memory"
echo "dropin test: default options: PASS, every non-empty (small) product forwarded, $r"
run 4 "$tmp/min50" LD_PRELOAD="$preload" OVL_SCALAPACK_REPORT=1 OVL_OPTIONS="--dropin-min 50 --dropin-mem 1024G" -- "$plain"
same_sums "$tmp/plain4" "$tmp/min50"
want=$(count small)
grep -q "rank 0: pdgemm forwarded reason=small count=$want " "$tmp/min50" ||
  { grep ovl_scalapack "$tmp/min50"; fail "--dropin-min 50: not $want calls forwarded as small"; }
echo "dropin test: --dropin-min 50: PASS, $want small calls forwarded, $(report "$tmp/min50")"

# ---- 2c. PDGETRF: ScaLAPACK's own pdgemm_ calls stay ScaLAPACK's -----------
"$mpiexec" "${flags[@]}" -n 2 "$plain" --lu 600 32 >"$tmp/lu" 2>&1 || { cat "$tmp/lu"; fail "LU plain"; }
lupre=()
for x in LD_PRELOAD="$preload" OVL_SCALAPACK_REPORT=1 OVL_OPTIONS="$all"; do mapfile -t -O ${#lupre[@]} lupre < <(setenv "$x"); done
"$mpiexec" "${flags[@]}" -n 2 "${lupre[@]}" "$plain" --lu 600 32 >"$tmp/lupre" 2>&1 || { cat "$tmp/lupre"; fail "LU preloaded"; }
for f in lu lupre; do grep -q "^lu n=600 .* ok$" "$tmp/$f" || { cat "$tmp/$f"; fail "LU $f: wrong solution"; }; done
r=$(report "$tmp/lupre")
calls=$(sed 's/.*calls=\([0-9]*\).*/\1/' <<<"$r")
[ "$calls" -gt 0 ] && grep -q "ovl=0 forwarded=$calls" <<<"$r" &&
  grep -q "rank 0: pdgemm forwarded reason=internal count=$calls " "$tmp/lupre" ||
  { cat "$tmp/lupre"; fail "LU preloaded: ScaLAPACK's internal pdgemm_ calls were not all forwarded as internal"; }
echo "dropin test: PDGETRF preloaded: PASS (solution right, $calls internal pdgemm_ calls all left to ScaLAPACK)"

# ---- 3. disabled: everything forwarded ------------------------------------
run 4 "$tmp/off" LD_PRELOAD="$preload" OVL_SCALAPACK_REPORT=1 OVL_SCALAPACK_DISABLE=1 -- "$plain"
same_sums "$tmp/plain4" "$tmp/off"
r=$(report "$tmp/off")
grep -q "ovl=0 forwarded=[1-9]" <<<"$r" || fail "OVL_SCALAPACK_DISABLE=1 did not forward every call: $r"
grep -q "pdgemm forwarded reason=disabled" "$tmp/off" || fail "no reason=disabled in the report"
echo "dropin test: OVL_SCALAPACK_DISABLE=1: PASS, $r"

# ---- 4. the README's example (written for Open MPI: mpiexec -x, -lscalapack-openmpi) ----
if [ "$envflag" != -x ] || [ -n "$asan" ]; then
  echo "dropin test: README example (Open MPI, no sanitizers): skipped"
else
  awk '/<!-- dropin example -->/ { on = 1; next } on && /^```sh/ { inb = 1; next } inb && /^```/ { exit } inb' \
    "$src/README.md" >"$tmp/example.sh"
  [ -s "$tmp/example.sh" ] || fail "no example after '<!-- dropin example -->' in README.md"
  cp "$src/tests/dropin_pdgemm.c" "$tmp/app.c"
  mpicc_bin=$(dirname "$mpiexec")/mpicc.openmpi
  [ -x "$mpicc_bin" ] || mpicc_bin=mpicc
  (
    cd "$tmp"
    LIBDIR=$(dirname "$lib")
    export LIBDIR
    mpicc() { "$mpicc_bin" "$@"; }
    mpiexec() { "$mpiexec" "${flags[@]}" "$@"; }
    . ./example.sh
  ) >"$tmp/example.out" 2>&1 || { tail -20 "$tmp/example.out"; fail "the README example"; }
  [ "$(grep -c '^dropin_pdgemm: PASS' "$tmp/example.out")" = 2 ] || { cat "$tmp/example.out"; fail "README example: not 2 PASS"; }
  [ "$(grep -c 'rank 0: pdgemm calls=[1-9][0-9]* ovl=[0-9]' "$tmp/example.out")" = 2 ] ||
    { cat "$tmp/example.out"; fail "README example: no report of the drop-in twice"; }
  echo "dropin test: README example: PASS (preloaded and linked)"
fi
# ---- 5. ScaLAPACK's PBLAS tester ---------------------------------------------
pb=/usr/lib/x86_64-linux-gnu/scalapack/$mpi-tests/PBLAS/dpb3tst dat=/usr/share/scalapack/PBLAS/PDBLAS3TST.dat
if [ -x "$pb" ] && [ -r "$dat" ]; then
  mkdir "$tmp/pb"
  # only PDGEMM and PDSYMM; SIDE R and L
  sed -e '/^PDSYRK\|^PDSYR2K\|^PDTRMM\|^PDTRSM\|^PDGEADD\|^PDTRADD/s/ T\t/ F\t/' \
    -e "/values of SIDE/s/^.*\t\t/'R' 'L' 'R' 'L' 'R' 'R' 'L' 'R'\t\t/" "$dat" >"$tmp/pb/PDBLAS3TST.dat"
  for route in auto layout; do # the model's route, then SUMMA on ScaLAPACK's layout forced
    pbenv=()
    for v in LD_PRELOAD="$preload" OVL_SCALAPACK_REPORT=1 OVL_OPTIONS="$all --dropin-route $route" \
      ${asan:+ASAN_OPTIONS=detect_leaks=0}; do
      mapfile -t -O ${#pbenv[@]} pbenv < <(setenv "$v")
    done
    (cd "$tmp/pb" && "$mpiexec" "${flags[@]}" -n 4 "${pbenv[@]}" "$pb") \
      >"$tmp/pb.out" 2>&1 || { tail -20 "$tmp/pb.out"; fail "dpb3tst ($route)"; }
    for r in PDGEMM PDSYMM; do
      grep -q "|  $r  *16  *16  *0  *0" "$tmp/pb.out" || { grep '|  PD' "$tmp/pb.out"; fail "dpb3tst ($route): $r not 16 of 16 passed"; }
    done
    grep -q "rank 0: pdgemm calls=[0-9]* ovl=16 " "$tmp/pb.out" || { grep ovl_scalapack "$tmp/pb.out"; fail "dpb3tst ($route): ovl did not run the 16 pdgemm tests"; }
    grep -q "rank 0: pdsymm calls=[0-9]* ovl=16 " "$tmp/pb.out" || { grep ovl_scalapack "$tmp/pb.out"; fail "dpb3tst ($route): ovl did not run the 16 pdsymm tests"; }
    [ $route = auto ] || grep -q "rank 0: pdgemm calls=[0-9]* ovl=16 .* in_layout=16" "$tmp/pb.out" ||
      { grep ovl_scalapack "$tmp/pb.out"; fail "dpb3tst (layout): not every pdgemm test in ScaLAPACK's layout"; }
    echo "dropin test: ScaLAPACK's dpb3tst, route $route: PDGEMM and PDSYMM 16/16 passed, $(grep -o 'pdgemm calls=.*' "$tmp/pb.out" | head -1)"
  done
else
  echo "dropin test: ScaLAPACK's dpb3tst not installed (Debian: scalapack-mpi-test): skipped"
fi
# ---- 6. a Fortran caller ---------------------------------------------------------
fc=$(command -v gfortran || command -v gfortran-12 || true)
mpif90=$(dirname "$mpiexec")/mpif90.$mpi
if [ -n "$fc" ] && [ -x "$mpif90" ]; then
  OMPI_FC=$fc MPICH_FC=$fc "$mpif90" -O1 "$src/tests/dropin_pdgemm.f90" -o "$tmp/fprog" -lscalapack-$mpi >"$tmp/fc.out" 2>&1 ||
    { cat "$tmp/fc.out"; fail "compiling tests/dropin_pdgemm.f90"; }
  for v in plain pre; do
    pre=()
    if [ $v = pre ]; then
      for x in LD_PRELOAD="$preload" OVL_SCALAPACK_REPORT=1 OVL_OPTIONS="$all" ${asan:+ASAN_OPTIONS=detect_leaks=0}; do
        mapfile -t -O ${#pre[@]} pre < <(setenv "$x")
      done
    fi
    "$mpiexec" "${flags[@]}" -n 4 "${pre[@]}" "$tmp/fprog" >"$tmp/f$v" 2>&1 || { cat "$tmp/f$v"; fail "Fortran $v"; }
    e=$(sed -n 's/.*fortran pdgemm: max error *\([0-9.eE+-]*\).*/\1/p' "$tmp/f$v")
    [ -n "$e" ] && awk -v e="$e" 'BEGIN { exit !(e < 1e-12) }' || { cat "$tmp/f$v"; fail "Fortran $v: error '$e'"; }
  done
  grep -q "rank 0: pdgemm calls=1 ovl=1 forwarded=0" "$tmp/fpre" || { cat "$tmp/fpre"; fail "Fortran: ovl did not take the call"; }
  echo "dropin test: Fortran caller: plain and preloaded PASS (max error $e), handled by ovl"
else
  echo "dropin test: no gfortran (Debian: gfortran) or no $mpif90: Fortran caller skipped"
fi
echo "dropin test: all passed"
