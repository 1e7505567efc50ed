#!/usr/bin/env bash
# Build reference ScaLAPACK 2.2.2 (double precision: BLACS, TOOLS, PBLAS,
# REDIST and SRC) with SimGrid's SMPI compilers, for the eigensolver drivers
# smpi/eig_sim.c (docs/guides/smpi.md, "ScaLAPACK's eigensolvers under SMPI").
#
# usage: smpi/build_scalapack.sh [--src SOURCE] [--out DIR] [--simgrid PREFIX] [-j N]
#   SOURCE  (or $OVL_SCALAPACK_SRC): the Reference-ScaLAPACK/scalapack source at
#           tag v2.2.2 as a git repository (bare or not; the tag is archived),
#           an unpacked source directory, or a release tarball (.tar.gz/.tgz/.tar).
#           Its content is checked by sha256 and anything else is refused.
#   DIR     (or $OVL_SMPI_SCALAPACK): the output, default ~/.cache/ovl/smpi-scalapack;
#           gets lib/libscalapack.a, the patched source in src/, build.log, info.txt.
#   PREFIX  a SimGrid installation (the 4.1 prefix of smpi/build_simgrid.sh, which has
#           smpif90); default: smpicc/smpif90 from PATH (Debian's SimGrid 3.32). Without
#           smpif90 in the prefix the Fortran files are compiled by gfortran with SMPI's
#           mpif.h: they call MPI only through the BLACS.
#           For 4.1: smpi/build_scalapack.sh --simgrid build-simgrid/4.1 --out ~/.cache/ovl/smpi-scalapack-4.1,
#           then OVL_SMPI_SCALAPACK=~/.cache/ovl/smpi-scalapack-4.1 and build-simgrid/4.1/bin first
#           in PATH for smpi/eig_sim.sh.
#   N       parallel make jobs (default 1).
# The workarounds are the patches in smpi/patches/ plus, here: smpif90 writes the
# object of `smpif90 -c x.f` to `.o`, so the Fortran compiler is a wrapper that
# adds `-o x.o`; gfortran >= 10 needs -fallow-argument-mismatch for this code; the
# BLACS are compiled with their own -DZeroByteTypeBug (a zero-size message is sent
# as MPI_BYTE, never packed: without it pdsyevr dies of SIGFPE in SimGrid 3.32's
# Datatype::copy under MPI_Pack, called by the BLACS' BI_Pack, on a 2x2 grid).
set -euo pipefail
version=2.2.2
# sha256 of `git archive --format=tar v2.2.2` of Reference-ScaLAPACK/scalapack
git_sha256=f3e2df1f4bf2f53f7bd330276e3cd0ae7939c079a088bae0dc784527b6e5707b
# sha256 of the sorted `sha256sum` list of every file of the v2.2.2 tree
# (`cd TREE && find . -type f | LC_ALL=C sort | xargs sha256sum | sha256sum`):
# checks an unpacked directory or a tarball whatever its packaging.
tree_sha256=bad05030d45b46988ac8ad6e3ed1cf40cda62b95ef0ac5396ab5ac1e482e9d1f
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/scripts/unpack-source.sh"
src=${OVL_SCALAPACK_SRC:-} out=${OVL_SMPI_SCALAPACK:-$HOME/.cache/ovl/smpi-scalapack} sg="" jobs=1
die() { echo "build_scalapack.sh: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case $1 in
    --src) src=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --simgrid) sg=$2; shift 2 ;;
    -j) jobs=$2; shift 2 ;;
    -j*) jobs=${1#-j}; shift ;;
    -h | --help) sed -n '2,26p' "$0"; exit 0 ;;
    *) die "unknown argument '$1' (--help)" ;;
  esac
done
[ -n "$src" ] || die "no source: give --src (or OVL_SCALAPACK_SRC) a git repository of
  Reference-ScaLAPACK/scalapack (tag v$version), an unpacked v$version directory or its release tarball"
case $out in "$root" | "$root"/*) die "--out $out is inside the repository; choose a directory outside it" ;; esac
if [ -n "$sg" ]; then
  [ -x "$sg/bin/smpicc" ] || die "no $sg/bin/smpicc: --simgrid takes a SimGrid installation prefix"
  smpicc=$sg/bin/smpicc smpif90=$sg/bin/smpif90 fcinc=-I$sg/include/smpi
else
  smpicc=$(command -v smpicc) || die "smpicc not found (Debian: apt-get install libsimgrid-dev)"
  smpif90=$(command -v smpif90 || true) fcinc=-I/usr/include/smpi
fi
command -v flock >/dev/null || die "flock (util-linux) is needed"
sgver=$("$(dirname "$smpicc")/smpirun" -version 2>/dev/null | head -1)
mkdir -p "$out"
out=$(cd "$out" && pwd)
t0=$(date +%s)

# 1. The source, checked.
tree=$out/src
unpack_source "$src" "v$version" "$git_sha256" "$tree_sha256" "ScaLAPACK $version" "$out/src.tmp"
how=$SOURCE_HOW
rm -rf "$tree"
mv "$out/src.tmp" "$tree"
echo "source: $how"

# 2. The workarounds.
for p in "$root"/smpi/patches/*.patch; do
  patch -s -p1 -d "$tree" <"$p" || die "patch $p does not apply"
  echo "patched: $(basename "$p")"
done
fcw=$out/bin/fc
mkdir -p "$out/bin"
if [ -x "$smpif90" ]; then
  fc=$smpif90
else
  fc=gfortran
  echo "no smpif90 in the SimGrid installation: Fortran by gfortran $fcinc"
fi
# The Fortran compiler: adds -o NAME.o to `-c NAME.f` (smpif90 writes `.o` otherwise).
cat >"$fcw" <<EOF
#!/usr/bin/env bash
# smpi/build_scalapack.sh: the Fortran compiler of the ScaLAPACK build.
args=("\$@") src="" obj=0 c=0
for a in "\$@"; do
  case \$a in -o) obj=1 ;; -c) c=1 ;; *.f | *.f90 | *.F) src=\$a ;; esac
done
if [ \$c -eq 1 ] && [ \$obj -eq 0 ] && [ -n "\$src" ]; then
  b=\$(basename "\$src"); args+=(-o "\${b%.*}.o")
fi
exec "$fc" $fcinc "\${args[@]}"
EOF
chmod +x "$fcw"
fflags="-O2"
echo '      end' >"$out/bin/t.f"
"$fc" -fallow-argument-mismatch -c "$out/bin/t.f" -o "$out/bin/t.o" >/dev/null 2>&1 && fflags="$fflags -fallow-argument-mismatch"
rm -f "$out/bin/t.f" "$out/bin/t.o"
cat >"$tree/SLmake.inc" <<EOF
# Written by smpi/build_scalapack.sh ($sgver)
CDEFS         = -DAdd_ -DBLACS_NO_TYPE_MATCH_SIZE -DZeroByteTypeBug
FC            = $fcw
CC            = $smpicc
NOOPT         = -O0
FCFLAGS       = $fflags
CCFLAGS       = -O2
FCLOADER      = \$(FC)
CCLOADER      = \$(CC)
FCLOADFLAGS   = \$(FCFLAGS)
CCLOADFLAGS   = \$(CCFLAGS)
# Several targets of one directory add to the archive at once under -j.
ARCH          = flock $tree/.ar.lock ar
ARCHFLAGS     = cr
RANLIB        = flock $tree/.ar.lock ranlib
SCALAPACKLIB  = libscalapack.a
BLASLIB       = -lblas
LAPACKLIB     = -llapack
LIBS          = \$(LAPACKLIB) \$(BLASLIB)
EOF

# 3. The build: double precision only (the drivers' pdsyevd, pdsyevr, pdgemm, pdsyrk).
echo "building with $smpicc and $fc, make -j$jobs (log: $out/build.log)"
if ! make -C "$tree" -j"$jobs" lib PRECISIONS=double >"$out/build.log" 2>&1; then
  tail -30 "$out/build.log"
  die "the build failed (log: $out/build.log)"
fi
mkdir -p "$out/lib"
cp "$tree/libscalapack.a" "$out/lib/"
syms=$(nm "$out/lib/libscalapack.a" 2>/dev/null | awk '$2 == "T" { print $3 }')
for s in pdsyevd_ pdsyevr_ pdgemm_ pdsyrk_ blacs_gridinit_ descinit_ numroc_; do
  grep -qx "$s" <<<"$syms" || die "libscalapack.a lacks $s"
done
t1=$(date +%s)
cat >"$out/info.txt" <<EOF
ScaLAPACK $version, double precision, built by smpi/build_scalapack.sh
source: $how
simgrid: $sgver ($smpicc, Fortran: $fc $fflags)
make -j$jobs: $((t1 - t0)) s
EOF
cat "$out/info.txt"
echo "library: $out/lib/libscalapack.a"
