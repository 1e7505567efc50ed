#!/usr/bin/env bash
# Build the libFuzzer targets of ovl with clang (ASan + UBSan + libFuzzer).
# usage: fuzz/build.sh OUT_DIR LIBOVL_A
#   OUT_DIR    where the fuzzers go (fuzz_sidecar, fuzz_mtx, fuzz_opts)
#   LIBOVL_A   the library of a normal build (libovl.a): the code under test
#              (src/core/opts.c, src/core/json.c, src/dmat/io_util.c,
#              src/dmat/io_mtx.c) is
#              compiled again here with coverage instrumentation, the rest is
#              linked from the library.
# Exits 77 (a skipped test) when clang or its libFuzzer runtime is missing:
# Debian packages clang and libclang-rt-14-dev (scripts/deps.d/hardening.txt).
set -euo pipefail
OUT=$1; LIB=$2
SRC=$(cd "$(dirname "$0")/.." && pwd)
CC=${OVL_FUZZ_CC:-}
if [ -z "$CC" ]; then
  for c in clang clang-16 clang-15 clang-14; do command -v "$c" >/dev/null 2>&1 && { CC=$c; break; }; done
fi
if [ -z "$CC" ]; then
  echo "fuzz: SKIP: no clang found (install the Debian packages clang and libclang-rt-14-dev)"; exit 77
fi
mkdir -p "$OUT"
if ! echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { (void)d; (void)n; return 0; }' |
   "$CC" -x c - -fsanitize=fuzzer -o "$OUT/probe" >"$OUT/probe.log" 2>&1; then
  echo "fuzz: SKIP: $CC cannot link libFuzzer (install libclang-rt-14-dev or the runtime matching $CC):"
  sed 's/^/  /' "$OUT/probe.log" | head -5; exit 77
fi
# MPI and the libraries libovl.a needs: from the CMake build (OVL_FUZZ_CFLAGS,
# OVL_FUZZ_LIBS, set by tests/hardening.cmake), else from Open MPI's wrapper.
MPIINC=${OVL_FUZZ_CFLAGS:-$(mpicc.openmpi --showme:compile 2>/dev/null || mpicc --showme:compile 2>/dev/null)}
if [ -n "${OVL_FUZZ_LIBS:-}" ]; then
  LIBS="$LIB $OVL_FUZZ_LIBS"
else
  LIBS="$LIB $(mpicc.openmpi --showme:link 2>/dev/null || mpicc --showme:link 2>/dev/null)"
  for l in scalapack-openmpi lapacke openblas; do
    [ -n "$(ls /usr/lib/*/lib$l.so 2>/dev/null)" ] && LIBS="$LIBS -l$l"
  done
  LIBS="$LIBS -lcjson -lm"
fi
SAN="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
CFLAGS="-std=c11 -g -O1 -Wall -Wextra -Werror -D_POSIX_C_SOURCE=200809L -DOVL_VERSION_STRING=\"fuzz\" -I$SRC/include -I$SRC/src $MPIINC"
# instrumented copies of the code under test
objs=()
for s in core/opts.c core/json.c dmat/io_util.c dmat/io_mtx.c; do
  o="$OUT/$(basename "$s" .c).o"
  "$CC" $CFLAGS $SAN -fsanitize=fuzzer-no-link -c "$SRC/src/$s" -o "$o"
  objs+=("$o")
done
for t in sidecar mtx opts; do
  "$CC" $CFLAGS $SAN -fsanitize=fuzzer "$SRC/fuzz/fuzz_$t.c" "${objs[@]}" $LIBS -o "$OUT/fuzz_$t"
done
echo "fuzz: built $OUT/fuzz_sidecar $OUT/fuzz_mtx $OUT/fuzz_opts with $CC"
