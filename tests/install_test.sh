#!/usr/bin/env bash
# ovl as an installed library, as a user's code sees it:
#   1. configure, build and install ovl into a temporary prefix;
#   2. what is installed: headers (with the generated ovl/version.h),
#      libovl.so (SONAME) and libovl.a, libovl_fortran.a and the module, the
#      CMake package, ovl.pc, ovl-fortran.pc, the ovl command;
#   3. symbols: libovl.so exports exactly the functions and variables of the
#      installed headers (tests/api_list_check.py --exports), every global
#      name of libovl.a starts with ovl_;
#   4. downstream programs (tests/install/app.c, app.cpp, app.f90), each run
#      on 2 ranks under mpiexec: find_package(ovl) from a C project
#      (ovl::ovl, ovl::ovl_static), a C++-only project (no extra defines) and
#      a Fortran-only project (ovl::fortran); the README's pkg-config lines
#      (<!-- test: link-lines -->: C, C++, Fortran, --static) run exactly as
#      written, with PREFIX set; the headers as C++11 and C++17 without ovl.pc's
#      defines (ovl/core.h keeps MPI's C++ bindings out by itself);
#   5. the README's "C and CMake" example: its C lines (ovl_purify_rows,
#      ovl_gemm_rows) in a program, built with its CMake lines through
#      find_package(ovl) and run on 2 ranks with an uneven row split;
#   6. add_subdirectory(ovl) in a parent project: the parent's build type is
#      left alone, only the library is built, and the program runs.
# Everything happens in one temporary directory (TMPDIR points there too, for
# the MPI session files), removed at the end.
# usage: install_test.sh SOURCE_DIR MPI_C_COMPILER MPIEXEC [MPIEXEC flags...]
set -euo pipefail
src=$(cd "$1" && pwd) mpicc=$2 mpiexec=$3
shift 3
mpiflags=("$@")
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ovl_install_test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
export TMPDIR=$tmp
fail() { echo "install test: FAIL: $*"; exit 1; }
log=$tmp/log
run() { "$@" >"$log" 2>&1 || { tail -40 "$log"; fail "$*"; }; }
gen=(); command -v ninja >/dev/null && gen=(-G Ninja)
cc=${CC:-cc} cxx=${CXX:-c++}
command -v "$cxx" >/dev/null || fail "no C++ compiler ($cxx; Debian: g++, scripts/deps.sh installs it)"
command -v pkg-config >/dev/null || fail "no pkg-config (Debian: pkgconf, scripts/deps.sh installs it)"
command -v gfortran >/dev/null || fail "no gfortran (Debian: gfortran, scripts/deps.sh installs it)"
# the C++ and Fortran wrappers of the C wrapper's MPI (mpicc.mpich -> mpicxx.mpich, mpif90.mpich)
mpicxx=$(dirname "$mpicc")/$(basename "$mpicc" | sed 's/^mpicc/mpicxx/')
mpif90=$(dirname "$mpicc")/$(basename "$mpicc" | sed 's/^mpicc/mpif90/')
[ -x "$mpicxx" ] && [ -x "$mpif90" ] || fail "no $mpicxx or $mpif90 beside $mpicc"

# ---- 1. configure, build, install ---------------------------------------
prefix=$tmp/prefix
run cmake -S "$src" -B "$tmp/build" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DOVL_WERROR=ON \
  -DOVL_BUILD_TESTS=OFF -DOVL_BUILD_BENCH=OFF -DOVL_BUILD_CLI=ON -DMPI_C_COMPILER="$mpicc" \
  -DCMAKE_INSTALL_PREFIX="$prefix"
run cmake --build "$tmp/build" -j 2
run cmake --install "$tmp/build"
echo "install test: installed into a temporary prefix"

# ---- 2. what is installed ------------------------------------------------
so=$(find "$prefix" -name 'libovl.so' | head -1)
[ -n "$so" ] || fail "no libovl.so under the prefix"
libdir=$(dirname "$so")
for f in include/ovl/ovl.h include/ovl/core.h include/ovl/version.h include/ovl/fortran/ovl_mod.mod bin/ovl; do
  [ -e "$prefix/$f" ] || fail "$f not installed"
done
for f in libovl.a libovl_fortran.a pkgconfig/ovl.pc pkgconfig/ovl-fortran.pc cmake/ovl/ovlConfig.cmake \
  cmake/ovl/ovlConfigVersion.cmake cmake/ovl/ovlTargets.cmake; do
  [ -e "$libdir/$f" ] || fail "$libdir/$f not installed"
done
nh=$(($(find "$src/include/ovl" -name '*.h' | wc -l) + 1)) # and the generated version.h
[ "$(find "$prefix/include/ovl" -name '*.h' | wc -l)" -eq "$nh" ] || fail "not all $nh public headers installed"
version=$(sed -n 's/^project(ovl VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
grep -q "^#define OVL_VERSION_STRING \"$version\"$" "$prefix/include/ovl/version.h" ||
  fail "include/ovl/version.h does not define OVL_VERSION_STRING \"$version\""
soname=$(objdump -p "$so" | awk '$1 == "SONAME" {print $2}')
[ "$soname" = "libovl.so.${version%.*}" ] || fail "SONAME '$soname', expected libovl.so.${version%.*}"
[ -e "$libdir/libovl.so.$version" ] || fail "no libovl.so.$version"
[ "$("$prefix/bin/ovl" --version | cut -d' ' -f1-2)" = "ovl $version" ] || fail "bin/ovl --version"
echo "install test: headers ($nh, version.h: $version), $soname -> libovl.so.$version, libovl.a, libovl_fortran.a" \
  "+ ovl_mod.mod, CMake package, ovl.pc, ovl-fortran.pc, bin/ovl: OK"

# ---- 3. symbols ----------------------------------------------------------
out=$(python3 "$src/tests/api_list_check.py" "$prefix/include/ovl" "$so" --exports) || { echo "$out"; fail "libovl.so's exports"; }
nm -g --defined-only "$libdir/libovl.a" | awk 'NF == 3 {print $3}' | sort -u >"$tmp/a.syms"
[ "$(wc -l <"$tmp/a.syms")" -ge 100 ] || fail "libovl.a defines only $(wc -l <"$tmp/a.syms") global names"
bad=$(grep -v '^ovl_' "$tmp/a.syms" || true)
[ -z "$bad" ] || fail "libovl.a defines global names without the ovl_ prefix: $(echo $bad)"
echo "install test: symbols: $out; libovl.a defines $(wc -l <"$tmp/a.syms"), all ovl_*: OK"

# ---- 4. downstream programs ----------------------------------------------
mkdir -p "$tmp/app"
cp "$src/tests/install/app.c" "$src/tests/install/app.cpp" "$src/tests/install/app.f90" "$tmp/app/"
want_c="^downstream: ovl $version (headers $version), 2 ranks, grid 1x2, trace 980.0 (expected 980.0)$"
want_cxx="^downstream C++: ovl $version (headers $version), 2 ranks, |C - A B| 0.0e+00: OK$"
want_f='^downstream Fortran: 2 ranks, |D - D_exact| .*: OK$'
check_run() { # name program pattern: 2 ranks, the expected line
  local out
  out=$("$mpiexec" "${mpiflags[@]}" -n 2 "$2" 2>&1 </dev/null) || { echo "$out"; fail "$1: the program failed"; }
  echo "$out" | grep -q "$3" || { echo "$out"; fail "$1: unexpected output"; }
  echo "install test: $1: $(echo "$out" | grep '^downstream')"
}
needs_so() { # name program yes|no: whether it loads libovl.so
  local has=no
  objdump -p "$2" | grep -q "NEEDED *libovl\.so" && has=yes
  [ "$has" = "$3" ] || fail "$1: NEEDED libovl.so: $has, expected $3"
}

# find_package(ovl) from a C project, a C++-only and a Fortran-only one
mkdir -p "$tmp/app/c" "$tmp/app/cxx" "$tmp/app/f"
cat >"$tmp/app/c/CMakeLists.txt" <<EOF
cmake_minimum_required(VERSION 3.16)
project(downstream C)
find_package(ovl $version REQUIRED)
add_executable(app_shared ../app.c)
target_link_libraries(app_shared PRIVATE ovl::ovl)
add_executable(app_static ../app.c)
target_link_libraries(app_static PRIVATE ovl::ovl_static)
EOF
cat >"$tmp/app/cxx/CMakeLists.txt" <<EOF
cmake_minimum_required(VERSION 3.16)
project(downstream_cxx CXX)
find_package(ovl $version REQUIRED)
add_executable(app ../app.cpp)
target_link_libraries(app PRIVATE ovl::ovl)
EOF
cat >"$tmp/app/f/CMakeLists.txt" <<EOF
cmake_minimum_required(VERSION 3.16)
project(downstream_fortran Fortran)
find_package(ovl $version REQUIRED)
add_executable(app ../app.f90)
target_link_libraries(app PRIVATE ovl::fortran)
EOF
for lang in c cxx f; do
  run cmake -S "$tmp/app/$lang" -B "$tmp/app/$lang/build" "${gen[@]}" -DCMAKE_PREFIX_PATH="$prefix" \
    -DMPI_C_COMPILER="$mpicc" -DMPI_CXX_COMPILER="$mpicxx" -DMPI_Fortran_COMPILER="$mpif90"
  run cmake --build "$tmp/app/$lang/build" -v
  grep -q 'SKIP_MPICXX' "$log" || [ $lang = f ] ||
    fail "find_package, $lang: ovl::ovl does not pass OMPI_SKIP_MPICXX and MPICH_SKIP_MPICXX"
done
needs_so "find_package, ovl::ovl" "$tmp/app/c/build/app_shared" yes
needs_so "find_package, ovl::ovl_static" "$tmp/app/c/build/app_static" no
check_run "find_package, C, ovl::ovl" "$tmp/app/c/build/app_shared" "$want_c"
check_run "find_package, C, ovl::ovl_static" "$tmp/app/c/build/app_static" "$want_c"
check_run "find_package, project(... CXX), ovl::ovl" "$tmp/app/cxx/build/app" "$want_cxx"
check_run "find_package, project(... Fortran), ovl::fortran" "$tmp/app/f/build/app" "$want_f"

# the README's pkg-config lines, exactly as written, PREFIX set; each program run
# the code block after "<!-- test: TAG -->"
readme_block() {
  awk -v tag="<!-- test: $1 -->" '$0 == tag {f = 1; next} f == 1 && /^```/ {f = 2; next} f == 2 && /^```/ {exit} f == 2 {print}' \
    "$src/README.md"
}
[ "$libdir" = "$prefix/lib" ] || fail "the library directory is $libdir, the README's lines say \$PREFIX/lib"
readme_block link-lines >"$tmp/app/lines.sh"
[ -s "$tmp/app/lines.sh" ] || fail "README.md: no code block after <!-- test: link-lines -->"
(
  cd "$tmp/app"
  export PREFIX=$prefix
  unset PKG_CONFIG_PATH
  seen=""
  while IFS= read -r line <&3; do # fd 3: mpiexec reads its standard input
    case "$line" in '' | '#'*) continue ;; esac
    rm -f app
    eval "$line" >"$log" 2>&1 || { tail -40 "$log"; fail "README line: $line"; }
    case "$line" in
      export*) continue ;;
      *' app.c '*--static*) kind="C, pkg-config --static" want=$want_c so=no ;;
      *' app.c '*) kind="C, pkg-config" want=$want_c so=yes ;;
      *' app.cpp '*) kind="C++, pkg-config" want=$want_cxx so=yes ;;
      *' app.f90 '*) kind="Fortran, pkg-config ovl-fortran" want=$want_f so=yes ;;
      *) fail "README line of no known kind: $line" ;;
    esac
    [ -x app ] || fail "README line: $line: no ./app"
    needs_so "README: $kind" ./app "$so"
    check_run "README: $kind" ./app "$want"
    if [ "$so" = no ]; then
      echo "install test: README: $kind: libovl.a linked in; loaded at run time:" \
        "$(objdump -p app | awk '$1 == "NEEDED" {printf "%s ", $2}')"
    fi
    seen="$seen[$kind]"
  done 3<"$tmp/app/lines.sh"
  for kind in "C, pkg-config" "C++, pkg-config" "Fortran, pkg-config ovl-fortran" "C, pkg-config --static"; do
    case "$seen" in *"[$kind]"*) ;; *) fail "README.md: the link-lines block has no line for $kind" ;; esac
  done
) || exit 1

# the headers as C++ without ovl.pc's defines (ovl/core.h keeps MPI's C++ bindings out)
export PKG_CONFIG_PATH=$libdir/pkgconfig
cflags=$(pkg-config --cflags ovl | sed 's/-D[A-Z_]*SKIP_MPICXX//g')
for std in c++11 c++17; do
  run "$cxx" -std=$std -Wall -Wextra -Wpedantic -Werror -x c++ "$tmp/app/app.c" -x none -o "$tmp/app/app_cxx" \
    $cflags $(pkg-config --libs ovl) -Wl,-rpath,"$libdir"
done
check_run "the headers as C++ (g++ -std=c++11 and c++17, no defines)" "$tmp/app/app_cxx" "$want_c"

# ---- 5. the README's C and CMake example -----------------------------------
mkdir -p "$tmp/readme"
readme_block c-app >"$tmp/readme/snippet.c"
readme_block c-cmake >"$tmp/readme/CMakeLists.txt"
[ -s "$tmp/readme/snippet.c" ] || fail "README.md: no code block after <!-- test: c-app -->"
[ -s "$tmp/readme/CMakeLists.txt" ] || fail "README.md: no code block after <!-- test: c-cmake -->"
grep -q 'find_package(ovl' "$tmp/readme/CMakeLists.txt" || fail "README.md: the c-cmake block does not use find_package(ovl)"
# the program around the lines: a Hueckel chain (F = -1 beside the diagonal), rank r holding rows [3r, 3r + 3)
# and the last rank the rest; its density is known in closed form (sines)
{
  cat <<'EOF'
#include <math.h>
#include <ovl/ovl.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int64_t n = 10, nocc = 5;
  int64_t lo = 3 * rank < n ? 3 * rank : n, hi = rank == size - 1 ? n : (3 * rank + 3 < n ? 3 * rank + 3 : n);
  int64_t nrows = hi - lo, ld = nrows > 1 ? nrows : 1;
  double *F = (double *)calloc((size_t)(ld * n), sizeof(double));
  double *D = (double *)calloc((size_t)(ld * n), sizeof(double));
  double *DD = (double *)calloc((size_t)(ld * n), sizeof(double));
  for (int64_t i = 0; i < nrows; i++)
    for (int64_t j = 0; j < n; j++) F[i + j * ld] = (lo + i - j == 1 || j - lo - i == 1) ? -1.0 : 0.0;
EOF
  cat "$tmp/readme/snippet.c"
  cat <<'EOF'
  double err_d = 0, err_dd = 0, pi = acos(-1.0);
  for (int64_t i = 0; i < nrows; i++)
    for (int64_t j = 0; j < n; j++) {
      double x = 0;
      for (int64_t k = 1; k <= nocc; k++)
        x += 2.0 / (double)(n + 1) * sin((double)(k * (lo + i + 1)) * pi / (double)(n + 1)) *
             sin((double)(k * (j + 1)) * pi / (double)(n + 1));
      err_d = fmax(err_d, fabs(D[i + j * ld] - x));
      err_dd = fmax(err_dd, fabs(DD[i + j * ld] - x));
    }
  MPI_Allreduce(MPI_IN_PLACE, &err_d, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &err_dd, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  int ok = rc == OVL_OK && err_d <= 1e-10 && err_dd <= 1e-10;
  if (rank == 0)
    printf("readme: %d ranks, |D - D_exact| %.1e, |D D - D_exact| %.1e: %s\n", size, err_d, err_dd, ok ? "OK" : "FAIL");
  free(F);
  free(D);
  free(DD);
  MPI_Finalize();
  return ok ? 0 : 1;
}
EOF
} >"$tmp/readme/app.c"
echo 'target_link_libraries(app PRIVATE m) # the test program around the README lines calls sin' >>"$tmp/readme/CMakeLists.txt"
run cmake -S "$tmp/readme" -B "$tmp/readme/build" "${gen[@]}" -DCMAKE_PREFIX_PATH="$prefix" -DMPI_C_COMPILER="$mpicc" \
  -DCMAKE_C_FLAGS="-Wall -Wextra -Werror"
run cmake --build "$tmp/readme/build"
out=$("$mpiexec" "${mpiflags[@]}" -n 2 "$tmp/readme/build/app" 2>&1) ||
  { echo "$out"; fail "README C and CMake example: the program failed"; }
echo "$out" | grep -q '^readme: 2 ranks, .*: OK$' || { echo "$out"; fail "README C and CMake example: unexpected output"; }
echo "install test: README C and CMake example (find_package; ovl_purify_rows, ovl_gemm_rows; 2 ranks, rows 3 + 7):" \
  "$(echo "$out" | tr '\n' ' ')"

# ---- 6. add_subdirectory -------------------------------------------------
mkdir -p "$tmp/parent"
cp "$tmp/app/app.c" "$tmp/parent/main.c"
cat >"$tmp/parent/CMakeLists.txt" <<EOF
cmake_minimum_required(VERSION 3.25)
project(parent C)
add_subdirectory("$src" ovl)
add_executable(app main.c)
target_link_libraries(app PRIVATE ovl::ovl_static)
EOF
run cmake -S "$tmp/parent" -B "$tmp/parent/build" "${gen[@]}" -DMPI_C_COMPILER="$mpicc"
bt=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$tmp/parent/build/CMakeCache.txt")
[ -z "$bt" ] || fail "add_subdirectory: ovl set the parent's build type to '$bt'"
if [ ${#gen[@]} -gt 0 ]; then
  ninja -C "$tmp/parent/build" -t targets all | sed 's/:.*//' >"$tmp/targets"
  for t in pdgemm_peer eig_peer sq_bench test_core ovl_cli ssc_sim; do
    grep -q "\(^\|/\)$t$" "$tmp/targets" && fail "add_subdirectory: the parent's build has $t"
  done
  grep -q '\(^\|/\)libovl\.a$' "$tmp/targets" || fail "add_subdirectory: no libovl.a in the parent's build"
fi
run cmake --build "$tmp/parent/build" -j 2
check_run "add_subdirectory, ovl::ovl_static" "$tmp/parent/build/app" "$want_c"
echo "install test: add_subdirectory: build type left unset, only the library built: OK"
echo "install test: PASS"
