#!/usr/bin/env python3
"""Check the Fock-matrix cases: usage data_test.py [--full] [DATA_DIR].

DATA_DIR defaults to $OVL_TEST_DATA, else data/ beside tests/. For every
DATA_DIR/<case>/ (a directory holding meta.json or fock.raw):
  - fock.raw / dref.raw sidecars parse, hold exactly the keys rows, cols,
    symmetric (as ovl's reader demands), say symmetric: true, are n x n with
    n = meta n, and the file sizes are 8 n^2 bytes;
  - F' and D' are finite and exactly symmetric (make-fock symmetrizes both);
  - the eigenvalues of F' (numpy.linalg.eigh) give homo, lumo and gap as in
    meta.json, the gap is positive (else the density would not be unique);
  - D = C_occ C_occ^T from those eigenvectors matches dref.raw:
    ||D - Dref||_F / ||Dref||_F <= 1e-8;
  - ||Dref^2 - Dref||_F < 1e-10, |tr Dref - n_occ| < 1e-10 (occupation-1
    convention), tr(Dref F') = meta e_trace, and the other meta keys agree;
  - where the case has its AO matrices (fock_ao.raw, overlap.raw; meta
    ao_files): sidecars and sizes n_ao x n_ao, exactly symmetric, S positive
    definite (Cholesky), the eigenvalues of F C = S C eps give homo, lumo and
    e_trace as in meta.json, and X^T F X = F' with X = S^(-1/2) to 1e-10
    relative (Loewdin cases).
Also: the whole DATA_DIR stays under 20 MB (data/big/ not counted).

Big cases, DATA_DIR/big/<case>/ (made by tools/make-cases, not in git): skipped
when their matrices are absent; when present, the cheap checks: sidecars,
sizes, exact symmetry, ||Dref^2 - Dref||_F, tr Dref = n_occ, tr(Dref F') =
e_trace, gap = lumo - homo > 0 (no eigendecomposition, unless --full). For every
case, small or big, fock.raw and dref.raw must match DATA_DIR/checksums.sha256
(required for big cases, checked for small ones when listed).

Needs numpy only (no PySCF). When the python3 running it has no numpy (e.g. a
pyenv interpreter first on PATH), it re-runs itself once with /usr/bin/python3
(Debian's python3-numpy). Prints one line per case and a final line
"data_test: N passed, M failed"; exits 1 on any failure or when no case is found.
"""
import json
import math
import os
import sys

SIZE_LIMIT = 20 * 1024 * 1024
REL_TOL_D = 1e-8
IDEM_TOL = 1e-10
AO_TOL = 1e-10  # X^T F_ao X against F' (relative to max |F'|); the AO eigenvalues against meta
AO_FILES = ("fock_ao.raw", "overlap.raw")
TRACE_TOL = 1e-10
REQUIRED_META = ("n", "n_occ", "energy_hf", "homo", "lumo", "gap", "basis", "molecule", "natoms",
                 "pyscf_version", "e_trace", "idempotency_ref", "trace_ref")


def import_numpy():
    try:
        import numpy
        return numpy
    except ImportError:
        pass
    me = os.path.realpath(sys.executable or "")
    if not os.environ.get("OVL_DATA_TEST_REEXEC"):
        for cand in ("/usr/bin/python3", "/usr/local/bin/python3"):
            if os.path.exists(cand) and os.path.realpath(cand) != me:
                env = dict(os.environ, OVL_DATA_TEST_REEXEC="1")
                print(f"data_test: numpy is missing in {sys.executable}; re-running with {cand}", flush=True)
                try:
                    os.execve(cand, [cand, os.path.abspath(__file__)] + sys.argv[1:], env)
                except OSError:
                    continue
    print(f"data_test: numpy is missing in {sys.executable} (Debian: apt-get install python3-numpy, "
          "or: python3 -m pip install numpy)", file=sys.stderr)
    print("data_test: 0 passed, 1 failed")
    sys.exit(1)


np = import_numpy()


def read_sidecar(path, errors):
    """Parse path.json like ovl's reader: exactly rows, cols, symmetric."""
    try:
        with open(path + ".json") as f:
            side = json.load(f)
    except (OSError, ValueError) as e:
        errors.append(f"{os.path.basename(path)}.json: cannot parse: {e}")
        return None
    if not isinstance(side, dict) or set(side) != {"rows", "cols", "symmetric"}:
        errors.append(f"{os.path.basename(path)}.json: keys must be exactly rows, cols, symmetric; got "
                      f"{sorted(side) if isinstance(side, dict) else type(side).__name__}")
        return None
    r, c, s = side["rows"], side["cols"], side["symmetric"]
    if (not isinstance(r, int) or isinstance(r, bool) or r < 0 or not isinstance(c, int) or isinstance(c, bool)
            or c < 0 or not isinstance(s, bool)):
        errors.append(f"{os.path.basename(path)}.json: rows/cols must be non-negative integers, symmetric a bool")
        return None
    return side


def read_matrix(path, n, errors):
    name = os.path.basename(path)
    side = read_sidecar(path, errors)
    if side is None:
        return None
    if side["rows"] != n or side["cols"] != n:
        errors.append(f"{name}: sidecar says {side['rows']} x {side['cols']}, meta.json n = {n}")
        return None
    if side["symmetric"] is not True:
        errors.append(f"{name}: sidecar must declare symmetric: true")
    try:
        size = os.path.getsize(path)
    except OSError as e:
        errors.append(f"{name}: {e.strerror}")
        return None
    if size != 8 * n * n:
        errors.append(f"{name}: {size} bytes, expected 8 n^2 = {8 * n * n}")
        return None
    a = np.fromfile(path, dtype="<f8").reshape(n, n)
    if not np.all(np.isfinite(a)):
        i, j = np.argwhere(~np.isfinite(a))[0]
        errors.append(f"{name}: non-finite entry at ({i}, {j})")
        return None
    if not np.array_equal(a, a.T):
        errors.append(f"{name}: not exactly symmetric (max |A - A^T| = {np.max(np.abs(a - a.T)):.3e})")
    return a


def close(a, b, tol):
    return abs(a - b) <= tol * max(1.0, abs(a), abs(b))


def read_sums(data):
    sums = {}
    try:
        with open(os.path.join(data, "checksums.sha256")) as f:
            for line in f:
                if line.strip() and not line.startswith("#"):
                    digest, path = line.split(None, 1)
                    sums[path.strip().lstrip("*")] = digest.lower()
    except OSError:
        pass
    return sums


def check_sums(data, d, sums, required, errors):
    """Compare fock.raw and dref.raw with checksums.sha256; the number of files verified."""
    import hashlib
    done = 0
    for name in ("fock.raw", "dref.raw") + AO_FILES:
        if not os.path.exists(os.path.join(d, name)):
            continue
        key = os.path.relpath(os.path.join(d, name), data).replace(os.sep, "/")
        want = sums.get(key)
        if want is None:
            if required:
                errors.append(f"{name}: no checksum for {key} in checksums.sha256")
            continue
        h = hashlib.sha256()
        with open(os.path.join(d, name), "rb") as f:
            for block in iter(lambda: f.read(1 << 22), b""):
                h.update(block)
        if h.hexdigest() != want:
            errors.append(f"{name}: SHA-256 differs from checksums.sha256 (remake: tools/make-cases "
                          f"{os.path.basename(d)})")
        done += 1
    return done


def check_case(d, full=True):
    errors = []
    try:
        with open(os.path.join(d, "meta.json")) as f:
            meta = json.load(f)
    except (OSError, ValueError) as e:
        return [f"meta.json: cannot parse: {e}"], ""
    missing = [k for k in REQUIRED_META if k not in meta]
    if missing:
        return [f"meta.json: missing keys {missing}"], ""
    n, nocc = meta["n"], meta["n_occ"]
    if not (isinstance(n, int) and isinstance(nocc, int) and 0 < nocc < n):
        return [f"meta.json: need integers 0 < n_occ < n, got n = {n!r}, n_occ = {nocc!r}"], ""
    f = read_matrix(os.path.join(d, "fock.raw"), n, errors)
    dref = read_matrix(os.path.join(d, "dref.raw"), n, errors)
    if f is None or dref is None:
        return errors, ""

    eps, rel = None, math.nan
    if full:
        eps, c = np.linalg.eigh(f)
        homo, lumo = float(eps[nocc - 1]), float(eps[nocc])
        gap = lumo - homo
        if not gap > 1e-6 * max(1.0, float(np.max(np.abs(eps)))):
            errors.append(f"HOMO-LUMO gap {gap:.3e} is not positive: the reference density is ill-defined")
        co = c[:, :nocc]
        del c
        dnew = co @ co.T
        nref = float(np.linalg.norm(dref))
        rel = float(np.linalg.norm(dnew - dref)) / nref if nref > 0 else math.inf
        del dnew
        if not rel <= REL_TOL_D:
            errors.append(f"||D(eigh F') - Dref||_F / ||Dref||_F = {rel:.3e} > {REL_TOL_D:g}")
    else:  # cheap: meta's values, checked for consistency only
        homo, lumo, gap = (float(meta[k]) if isinstance(meta[k], (int, float)) else math.nan
                           for k in ("homo", "lumo", "gap"))
    idem = float(np.linalg.norm(dref @ dref - dref))
    if not idem < IDEM_TOL:
        errors.append(f"||Dref^2 - Dref||_F = {idem:.3e} >= {IDEM_TOL:g}")
    tr = float(np.trace(dref))
    if not abs(tr - nocc) < TRACE_TOL:
        errors.append(f"|tr Dref - n_occ| = {abs(tr - nocc):.3e} >= {TRACE_TOL:g}")
    etr = float(np.sum(dref * f))

    # meta.json against the matrices
    for key, val, tol in (("homo", homo, 1e-9), ("lumo", lumo, 1e-9), ("gap", gap, 1e-9),
                          ("e_trace", etr, 1e-10), ("trace_ref", tr, 1e-12)):
        if not (isinstance(meta[key], (int, float)) and close(float(meta[key]), val, tol)):
            errors.append(f"meta {key} = {meta[key]!r}, recomputed {val!r}")
    if not (isinstance(meta["gap"], (int, float)) and meta["gap"] > 0
            and close(meta["gap"], meta["lumo"] - meta["homo"], 1e-12)):
        errors.append("meta gap is not lumo - homo > 0")
    if not (isinstance(meta["idempotency_ref"], (int, float)) and 0 <= meta["idempotency_ref"] < IDEM_TOL):
        errors.append(f"meta idempotency_ref = {meta['idempotency_ref']!r}")
    e_hf = meta["energy_hf"]
    if not (isinstance(e_hf, (int, float)) and math.isfinite(e_hf) and e_hf < 0):
        errors.append(f"meta energy_hf = {e_hf!r} is not a finite negative energy")
    if not (isinstance(meta["natoms"], int) and meta["natoms"] > 0):
        errors.append(f"meta natoms = {meta['natoms']!r}")
    for key in ("basis", "molecule", "pyscf_version"):
        if not (isinstance(meta[key], str) and meta[key]):
            errors.append(f"meta {key} must be a non-empty string")
    for key in ("eig_min", "eig_max"):
        if eps is None:
            break
        want = float(eps[0] if key == "eig_min" else eps[-1])
        if key in meta and not close(float(meta[key]), want, 1e-9):
            errors.append(f"meta {key} = {meta[key]!r}, recomputed {want!r}")
    ao = check_ao(d, meta, f, errors) if full else ""
    summary = (f"n={n} n_occ={nocc} gap={gap:.6f} E_HF={e_hf:.8f} "
               + (f"|D-Dref|/|Dref|={rel:.1e} " if full else "(no eigh) ")
               + f"idem={idem:.1e} |trD-nocc|={abs(tr - nocc):.1e}"
               + (" SYNTHETIC" if meta.get("synthetic") is True else "") + ao)
    return errors, summary


def check_ao(d, meta, fp, errors):
    """The AO matrices F and S of a case, when it has them; a summary fragment."""
    have = [os.path.exists(os.path.join(d, x)) for x in AO_FILES]
    if not any(have) and "ao_files" not in meta:
        return ""
    if not all(have):
        errors.append(f"AO matrices: {', '.join(x for x, h in zip(AO_FILES, have) if not h)} missing")
        return ""
    n, nocc = meta["n"], meta["n_occ"]
    nao = meta.get("n_ao", n)
    fa = read_matrix(os.path.join(d, "fock_ao.raw"), nao, errors)
    sa = read_matrix(os.path.join(d, "overlap.raw"), nao, errors)
    if fa is None or sa is None:
        return ""
    try:
        lo = np.linalg.cholesky(sa)
    except np.linalg.LinAlgError:
        errors.append("overlap.raw is not positive definite")
        return ""
    li = np.linalg.inv(lo)  # F C = S C eps  <=>  (L^-1 F L^-T) y = y eps, S = L L^T
    eps = np.linalg.eigvalsh(li @ fa @ li.T)
    width = max(1.0, float(np.max(np.abs(eps))))
    for key, val in (("homo", float(eps[nocc - 1])), ("lumo", float(eps[nocc])),
                     ("e_trace", float(np.sum(eps[:nocc])))):
        if not abs(val - float(meta[key])) <= AO_TOL * max(width, abs(val)):
            errors.append(f"AO matrices: {key} of F C = S C eps = {val!r}, meta {meta[key]!r}")
    rel = math.nan
    if nao == n and str(meta.get("orthogonalization", "lowdin")).startswith("lowdin"):
        s_eig, s_vec = np.linalg.eigh(sa)
        x = (s_vec * (1.0 / np.sqrt(s_eig))) @ s_vec.T
        rel = float(np.max(np.abs(x.T @ fa @ x - fp)) / np.max(np.abs(fp)))
        if not rel <= AO_TOL:
            errors.append(f"AO matrices: max |X^T F X - F'| / max |F'| = {rel:.3e} > {AO_TOL:g}")
    return f" AO: |X^T F X - F'|={rel:.1e}"


def case_dirs(top):
    if not os.path.isdir(top):
        return []
    return sorted(e for e in os.listdir(top) if not e.startswith(".") and e != "big"
                  and os.path.isdir(os.path.join(top, e))
                  and (os.path.exists(os.path.join(top, e, "meta.json"))
                       or os.path.exists(os.path.join(top, e, "fock.raw"))))


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    args = [a for a in sys.argv[1:] if a != "--full"]
    full_big = len(args) != len(sys.argv) - 1
    data = args[0] if args else os.environ.get("OVL_TEST_DATA") or os.path.join(here, "..", "data")
    data = os.path.normpath(data)
    passed = failed = skipped = 0
    if not os.path.isdir(data):
        print(f"FAIL {data}: not a directory")
        print("data_test: 0 passed, 1 failed")
        return 1
    sums = read_sums(data)
    cases = case_dirs(data)
    big = os.path.join(data, "big")
    todo = [(c, os.path.join(data, c), False) for c in cases]
    todo += [(f"big/{c}", os.path.join(big, c), True) for c in case_dirs(big)]
    for case, d, is_big in todo:
        if is_big and not all(os.path.exists(os.path.join(d, x)) for x in ("fock.raw", "dref.raw")):
            skipped += 1
            try:
                with open(os.path.join(d, "meta.json")) as f:
                    why = json.load(f).get("dref_skipped") if os.path.exists(os.path.join(d, "fock.raw")) else None
            except (OSError, ValueError):
                why = None
            print(f"SKIP {case}: " + (f"no reference density ({why})" if why else
                                      f"matrices not present (make them: tools/make-cases {os.path.basename(d)})"))
            continue
        errors, summary = check_case(d, full=full_big or not is_big)
        nsum = check_sums(data, d, sums, is_big, errors)
        if errors:
            failed += 1
            print(f"FAIL {case}: " + "; ".join(errors))
        else:
            passed += 1
            print(f"PASS {case}: {summary}" + (f" sha256 ok ({nsum} files)" if nsum >= 2 else ""))
    total = 0
    for root, dirs, files in os.walk(data):
        if os.path.normpath(root) == data:
            dirs[:] = [x for x in dirs if x != "big" and not x.startswith(".")]
        total += sum(os.path.getsize(os.path.join(root, x)) for x in files)
    if total > SIZE_LIMIT:
        failed += 1
        print(f"FAIL {data}: {total / 1e6:.1f} MB, over the 20 MiB budget")
    if not cases:
        failed += 1
        print(f"FAIL {data}: no case directories (expected <case>/meta.json + fock.raw + dref.raw)")
    print(f"data_test: {passed} passed, {failed} failed" + (f", {skipped} skipped (absent)" if skipped else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
