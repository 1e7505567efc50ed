#!/usr/bin/env bash
# ovl as an installed library, as a user's code sees it:
#   1. configure, build and install ovl into a temporary prefix;
#   2. what is installed: headers, libovl.so (SONAME) and libovl.a, the CMake
#      package, ovl.pc, the ovl command;
#   3. symbols: every global name defined in libovl.so and libovl.a starts
#      with ovl_, and libovl.so exports no internal ovl_i_* name;
#   4. a downstream C program (a grid, ovl_gemm, a trace checked) built with
#      find_package(ovl) (ovl::ovl and ovl::ovl_static) and with pkg-config
#      (shared, and --static from a prefix holding only libovl.a), the same
#      file compiled as C++, each run on 2 ranks under mpiexec;
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
for f in include/ovl/ovl.h include/ovl/core.h bin/ovl; do
  [ -e "$prefix/$f" ] || fail "$f not installed"
done
for f in libovl.a pkgconfig/ovl.pc cmake/ovl/ovlConfig.cmake cmake/ovl/ovlConfigVersion.cmake cmake/ovl/ovlTargets.cmake; do
  [ -e "$libdir/$f" ] || fail "$libdir/$f not installed"
done
nh=$(find "$src/include/ovl" -name '*.h' | wc -l)
[ "$(find "$prefix/include/ovl" -name '*.h' | wc -l)" -eq "$nh" ] || fail "not all $nh public headers installed"
version=$(sed -n 's/^project(ovl VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
soname=$(objdump -p "$so" | awk '$1 == "SONAME" {print $2}')
[ "$soname" = "libovl.so.${version%.*}" ] || fail "SONAME '$soname', expected libovl.so.${version%.*}"
[ -e "$libdir/libovl.so.$version" ] || fail "no libovl.so.$version"
[ "$("$prefix/bin/ovl" --version | cut -d' ' -f1-2)" = "ovl $version" ] || fail "bin/ovl --version"
echo "install test: headers ($nh), $soname -> libovl.so.$version, libovl.a, CMake package, ovl.pc, bin/ovl: OK"

# ---- 3. symbols ----------------------------------------------------------
nm -D --defined-only "$so" | awk 'NF == 3 {print $3}' | sort -u >"$tmp/so.syms"
nm -g --defined-only "$libdir/libovl.a" | awk 'NF == 3 {print $3}' | sort -u >"$tmp/a.syms"
[ "$(wc -l <"$tmp/so.syms")" -ge 100 ] || fail "libovl.so exports only $(wc -l <"$tmp/so.syms") names"
[ "$(wc -l <"$tmp/a.syms")" -ge 100 ] || fail "libovl.a defines only $(wc -l <"$tmp/a.syms") global names"
bad=$(grep -v '^ovl_' "$tmp/so.syms" || true)
[ -z "$bad" ] || fail "libovl.so exports names without the ovl_ prefix: $(echo $bad)"
bad=$(grep '^ovl_i_' "$tmp/so.syms" || true)
[ -z "$bad" ] || fail "libovl.so exports internal names: $(echo $bad)"
bad=$(grep -v '^ovl_' "$tmp/a.syms" || true)
[ -z "$bad" ] || fail "libovl.a defines global names without the ovl_ prefix: $(echo $bad)"
grep -qx ovl_gemm "$tmp/so.syms" || fail "libovl.so does not export ovl_gemm"
echo "install test: symbols: libovl.so exports $(wc -l <"$tmp/so.syms") names, libovl.a defines $(wc -l <"$tmp/a.syms"), all ovl_*: OK"

# ---- 4. a downstream program ---------------------------------------------
mkdir -p "$tmp/app"
# valid C and C++: A(i,j) = i+1, B(i,j) = j+1, C = A*B has trace n * sum (i+1)^2
cat >"$tmp/app/main.c" <<'EOF'
#include <ovl/ovl.h>
#include <stdio.h>
#include <stdlib.h>

#define TRY(x)                                                                \
  do {                                                                        \
    ovl_err e_ = (x);                                                         \
    if (e_ != OVL_OK) {                                                       \
      fprintf(stderr, "%s: %s: %s\n", #x, ovl_err_name(e_), ovl_errmsg());    \
      MPI_Abort(MPI_COMM_WORLD, 1);                                           \
    }                                                                         \
  } while (0)

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int64_t n = 7;
  double *a = (double *)malloc(sizeof(double) * n * n), *b = (double *)malloc(sizeof(double) * n * n);
  for (int64_t j = 0; j < n; j++)
    for (int64_t i = 0; i < n; i++) {
      a[i + j * n] = (double)(i + 1);
      b[i + j * n] = (double)(j + 1);
    }
  ovl_grid2d g = NULL;
  ovl_dmat A = NULL, B = NULL, C = NULL;
  TRY(ovl_grid2d_create(MPI_COMM_WORLD, 0, 0, 0, &g));
  TRY(ovl_dmat_create(g, n, n, &A));
  TRY(ovl_dmat_create(g, n, n, &B));
  TRY(ovl_dmat_create(g, n, n, &C));
  TRY(ovl_dmat_scatter(A, a));
  TRY(ovl_dmat_scatter(B, b));
  ovl_plan plan = ovl_plan_gemm(OVL_ALGO_SUMMA, 2);
  TRY(ovl_gemm('N', 'N', 1.0, A, B, 0.0, C, &plan, NULL, NULL));
  double tr = 0, want = (double)(n * n * (n + 1) * (2 * n + 1) / 6);
  TRY(ovl_dmat_trace(C, &tr));
  int p, q;
  ovl_grid2d_dims(g, &p, &q);
  if (rank == 0) printf("downstream: ovl %s, %d ranks, grid %dx%d, trace %.1f (expected %.1f)\n", ovl_version(), size, p, q, tr, want);
  int ok = tr == want;
  ovl_dmat_destroy(&C);
  ovl_dmat_destroy(&B);
  ovl_dmat_destroy(&A);
  ovl_grid2d_destroy(&g);
  free(a);
  free(b);
  MPI_Finalize();
  return ok ? 0 : 1;
}
EOF
check_run() { # name program: 2 ranks, the expected line
  local out
  out=$("$mpiexec" "${mpiflags[@]}" -n 2 "$2" 2>&1) || { echo "$out"; fail "$1: the program failed"; }
  echo "$out" | grep -q "^downstream: ovl $version, 2 ranks, grid 1x2, trace 980.0 (expected 980.0)$" ||
    { echo "$out"; fail "$1: unexpected output"; }
  echo "install test: $1: $(echo "$out" | grep '^downstream')"
}
needs_so() { # name program yes|no: whether it loads libovl.so
  local has=no
  objdump -p "$2" | grep -q "NEEDED *libovl\.so" && has=yes
  [ "$has" = "$3" ] || fail "$1: NEEDED libovl.so: $has, expected $3"
}

# find_package(ovl)
cat >"$tmp/app/CMakeLists.txt" <<EOF
cmake_minimum_required(VERSION 3.16)
project(downstream C)
find_package(ovl $version REQUIRED)
add_executable(app_shared main.c)
target_link_libraries(app_shared PRIVATE ovl::ovl)
add_executable(app_static main.c)
target_link_libraries(app_static PRIVATE ovl::ovl_static)
EOF
run cmake -S "$tmp/app" -B "$tmp/app/build" "${gen[@]}" -DCMAKE_PREFIX_PATH="$prefix" -DMPI_C_COMPILER="$mpicc"
run cmake --build "$tmp/app/build"
needs_so "find_package, ovl::ovl" "$tmp/app/build/app_shared" yes
needs_so "find_package, ovl::ovl_static" "$tmp/app/build/app_static" no
check_run "find_package, ovl::ovl" "$tmp/app/build/app_shared"
check_run "find_package, ovl::ovl_static" "$tmp/app/build/app_static"

# pkg-config, shared
export PKG_CONFIG_PATH=$libdir/pkgconfig
[ "$(pkg-config --modversion ovl)" = "$version" ] || fail "pkg-config --modversion ovl"
run "$cc" -std=c11 -Wall -Wextra -Werror "$tmp/app/main.c" -o "$tmp/app/app_pc" $(pkg-config --cflags --libs ovl) \
  -Wl,-rpath,"$libdir"
needs_so "pkg-config" "$tmp/app/app_pc" yes
check_run "pkg-config" "$tmp/app/app_pc"

# pkg-config --static, from a copy of the prefix without libovl.so (the
# .pc file's paths are relative to where it is)
mkdir -p "$tmp/static/lib/pkgconfig"
cp -r "$prefix/include" "$tmp/static/"
cp "$libdir/libovl.a" "$tmp/static/lib/"
cp "$libdir/pkgconfig/ovl.pc" "$tmp/static/lib/pkgconfig/"
sed -i "s|^libdir=.*|libdir=\${prefix}/lib|" "$tmp/static/lib/pkgconfig/ovl.pc"
run "$cc" -std=c11 -Wall -Wextra -Werror "$tmp/app/main.c" -o "$tmp/app/app_pc_static" \
  $(PKG_CONFIG_PATH=$tmp/static/lib/pkgconfig pkg-config --static --cflags --libs ovl)
needs_so "pkg-config --static" "$tmp/app/app_pc_static" no
check_run "pkg-config --static" "$tmp/app/app_pc_static"

# the headers as C++ (the MPI C++ bindings left out, as for any C API user)
for std in c++11 c++17; do
  run "$cxx" -std=$std -Wall -Wextra -Wpedantic -Werror -DOMPI_SKIP_MPICXX -DMPICH_SKIP_MPICXX -x c++ \
    "$tmp/app/main.c" -x none -o "$tmp/app/app_cxx" $(pkg-config --cflags --libs ovl) -Wl,-rpath,"$libdir"
done
check_run "C++ (g++ -std=c++11 and c++17)" "$tmp/app/app_cxx"

# ---- 5. the README's C and CMake example -----------------------------------
# the code block after "<!-- test: TAG -->"
readme_block() {
  awk -v tag="<!-- test: $1 -->" '$0 == tag {f = 1; next} f == 1 && /^```/ {f = 2; next} f == 2 && /^```/ {exit} f == 2 {print}' \
    "$src/README.md"
}
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
cp "$tmp/app/main.c" "$tmp/parent/"
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
check_run "add_subdirectory, ovl::ovl_static" "$tmp/parent/build/app"
echo "install test: add_subdirectory: build type left unset, only the library built: OK"
echo "install test: PASS"
