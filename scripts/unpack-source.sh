# Sourced by the scripts that build a peer from its public source
# (smpi/build_scalapack.sh, bench/peers/build_ntpoly.sh): one way to take a
# source and check it.
#
#   unpack_source SRC REV GIT_SHA256 TREE_SHA256 WHAT DEST
#
# SRC is a git repository (bare or not: `git archive REV`, whose sha256 must
# be GIT_SHA256), a directory or a release tarball (one top directory), whose
# files' sorted sha256 list must hash to TREE_SHA256. DEST (made empty here)
# receives the tree. WHAT names the expected source in messages ("ScaLAPACK
# 2.2.2"). Sets SOURCE_HOW to a line saying what was used; calls the
# caller's die on anything else.
tree_hash() { (cd "$1" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum | cut -d' ' -f1); }

unpack_source() {
  local src=$1 rev=$2 git_sha=$3 tree_sha=$4 what=$5 dest=$6 gd got top n
  rm -rf "$dest"
  mkdir -p "$dest"
  if [ -d "$src" ] && git --git-dir="$src" rev-parse --git-dir >/dev/null 2>&1 ||
    { [ -d "$src" ] && [ -e "$src/.git" ] && git -C "$src" rev-parse --git-dir >/dev/null 2>&1; }; then
    gd=$src
    [ -e "$src/.git" ] && gd=$src/.git
    git --git-dir="$gd" cat-file -e "$rev^{commit}" 2>/dev/null || die "$src has no revision $rev ($what is expected)"
    git --git-dir="$gd" archive --format=tar "$rev" >"$dest.tar"
    got=$(sha256sum "$dest.tar" | cut -d' ' -f1)
    [ "$got" = "$git_sha" ] || { rm -f "$dest.tar"; die "git archive $rev of $src has sha256 $got, not $git_sha: not $what"; }
    tar -xf "$dest.tar" -C "$dest"
    rm -f "$dest.tar"
    SOURCE_HOW="git archive $rev of $src, sha256 $got"
  elif [ -d "$src" ]; then
    got=$(tree_hash "$src")
    [ "$got" = "$tree_sha" ] || die "$src: its files' sha256 list is $got, not $tree_sha: not an unchanged $what tree"
    cp -a "$src/." "$dest/"
    SOURCE_HOW="directory $src, file list sha256 $got"
  elif [ -f "$src" ]; then
    tar -xf "$src" -C "$dest" || die "$src: not a tar archive"
    top=$dest # a release tarball holds one top directory
    n=$(find "$top" -mindepth 1 -maxdepth 1 | wc -l)
    [ "$n" -eq 1 ] && [ -d "$(find "$top" -mindepth 1 -maxdepth 1)" ] && top=$(find "$top" -mindepth 1 -maxdepth 1)
    got=$(tree_hash "$top")
    [ "$got" = "$tree_sha" ] || die "$src: its files' sha256 list is $got, not $tree_sha: not the $what release"
    [ "$top" = "$dest" ] || { mv "$top" "$dest.2" && rm -rf "$dest" && mv "$dest.2" "$dest"; }
    SOURCE_HOW="tarball $src ($(sha256sum "$src" | cut -d' ' -f1)), file list sha256 $got"
  else
    die "$src: no such file or directory"
  fi
}
