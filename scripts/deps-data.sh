#!/usr/bin/env bash
# Install what tools/make-fock and tools/make-cases need (PySCF and numpy) into
# the python3 they run under (the first python3 on PATH, as their "#!/usr/bin/env
# python3" line finds it), only when missing. The version is the one the cases of
# data/ and their checksums (data/checksums.sha256) were made with.
# usage: scripts/deps-data.sh
set -euo pipefail
PYSCF_VERSION=2.14.0
py=$(command -v python3)
if "$py" -c "import pyscf, numpy" 2>/dev/null; then
  have=$("$py" -c "import pyscf; print(pyscf.__version__)")
  [ "$have" = "$PYSCF_VERSION" ] || echo "deps-data.sh: $py has PySCF $have (the checksums are of $PYSCF_VERSION)" >&2
  exit 0
fi
echo "deps-data.sh: installing pyscf==$PYSCF_VERSION into $py"
"$py" -m pip install -q "pyscf==$PYSCF_VERSION"
