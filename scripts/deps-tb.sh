#!/usr/bin/env bash
# Install what tools/make-tb (the tight-binding cases, tools/make-cases --tb) and tools/make-sparse-cases
# (the sparse ones, make data-sparse) need: tblite and numpy,
# from PyPI wheels into a venv of their own ($OVL_TB_VENV, default ~/.cache/ovl/venv-tb), never into
# the system Python; only when missing (about 20 s here). tblite 0.4.0 is the version the cases of
# data/big/*_gfn2 and their checksums (data/checksums.sha256) were made with. make-tb finds the venv
# by itself (or $OVL_TB_PYTHON, a python with tblite).
# usage: scripts/deps-tb.sh
set -euo pipefail
TBLITE_VERSION=0.4.0
NUMPY_VERSION=2.4.6
venv=${OVL_TB_VENV:-$HOME/.cache/ovl/venv-tb}
py=$venv/bin/python
if [ -x "$py" ] && "$py" -c "import tblite.interface, numpy" 2>/dev/null; then
  have=$("$py" -c "from importlib.metadata import version; print(version('tblite'))")
  [ "$have" = "$TBLITE_VERSION" ] || echo "deps-tb.sh: $venv has tblite $have (the checksums are of $TBLITE_VERSION)" >&2
  exit 0
fi
base=$(command -v python3)
echo "deps-tb.sh: making a venv at $venv ($base) with tblite==$TBLITE_VERSION numpy==$NUMPY_VERSION"
"$base" -m venv "$venv"
"$py" -m pip install -q --only-binary :all: "tblite==$TBLITE_VERSION" "numpy==$NUMPY_VERSION"
