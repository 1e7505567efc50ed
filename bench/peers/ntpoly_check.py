#!/usr/bin/env python3
"""Check bench/peers/ntpoly_purify (NTPoly's purification) against a dense eigensolver,
and make banded test matrices for timing it (docs/lab/peers.md, "NTPoly").

usage: ntpoly_check.py check [--driver EXE] [--n 240] [--band 6] [--np 1,2] [--tol 1e-8]
                             [--mpiexec CMD] [--seed 7] [--keep DIR]
       ntpoly_check.py make --n N --out DIR [--band 6] [--overlap] [--reference] [--seed 7]

numpy and scipy from the venv of scripts/deps-python.sh (~/.cache/ovl/venv-python), e.g.
  ~/.cache/ovl/venv-python/bin/python bench/peers/ntpoly_check.py check

The matrices: a random banded symmetric H of half-bandwidth BAND whose n/2 "occupied"
sites have on-site energies in [-1.5, -0.5] and the others in [0.5, 1.5] (sites shuffled),
with random couplings scaled so that every row's off-diagonal sum is 0.4: by Gershgorin's
theorem exactly n/2 eigenvalues lie below -0.1 and n/2 above 0.1 (a gap >= 0.2, so the
density decays along the band). S = I + a random banded symmetric part with row sums 0.1
(eigenvalues in [0.9, 1.1]); nocc = n/2. Files: Matrix Market, symmetric.

check: writes H and S, runs the driver at threshold 0 with a tight tolerance (converge
1e-12, and 1e-12 for S's factor) for trs2, trs4, pm, hpcp, orthogonal (S = I) and with S
(inverse square root and inverse Cholesky factor), on each rank count, reads D (occupation
2) and compares it with D_ref = 2 C_occ C_occ^T of scipy.linalg.eigh(H, S): max |D - D_ref|,
|E - E_ref| with E = tr(D H), |tr(D S) - 2 nocc|. Fails (exit 1) if max |D - D_ref| > TOL.

make: writes DIR/H.mtx (and DIR/S.mtx with --overlap) and DIR/meta.json (n, nocc, band,
seed, and with --reference the dense reference energy, for n up to about 6000).
"""
import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time

import numpy as np
import scipy.io
import scipy.linalg
import scipy.sparse as sp

DEFAULT_DRIVER = os.path.expanduser("~/.cache/ovl/ntpoly/3.1.1/openmpi/bin/ntpoly_purify")


def banded_sym(n, band, rng, rowsum):
    """A random symmetric banded matrix, zero diagonal, every row's |off-diagonal| sum <= rowsum."""
    rows, cols, vals = [], [], []
    for k in range(1, band + 1):
        v = rng.uniform(-1.0, 1.0, n - k) * np.exp(-0.5 * (k - 1))
        i = np.arange(n - k)
        rows += [i, i + k]
        cols += [i + k, i]
        vals += [v, v]
    a = sp.coo_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(n, n)).tocsr()
    s = np.asarray(abs(a).sum(axis=1)).ravel()
    return (a * (rowsum / s.max())).tocsr()


def make_case(n, band, seed, overlap):
    rng = np.random.default_rng(seed)
    nocc = n // 2
    eps = np.concatenate([rng.uniform(-1.5, -0.5, nocc), rng.uniform(0.5, 1.5, n - nocc)])
    rng.shuffle(eps)
    h = (sp.diags(eps) + banded_sym(n, band, rng, 0.4)).tocsr()
    s = (sp.identity(n) + banded_sym(n, band, rng, 0.1)).tocsr() if overlap else None
    return h, s, nocc


def write_mm(path, a):
    scipy.io.mmwrite(path, sp.coo_matrix(a), symmetry="symmetric", precision=17)


def dense_density(h, s, nocc):
    hd = h.toarray()
    if s is None:
        w, c = scipy.linalg.eigh(hd)
    else:
        w, c = scipy.linalg.eigh(hd, s.toarray())
    co = c[:, :nocc]
    d = 2.0 * co @ co.T
    return d, float(np.sum(d * hd)), float(w[nocc] - w[nocc - 1])


LINE = re.compile(r"(\w+)=(\S+)")


def parse(out):
    runs = []
    for line in out.splitlines():
        if line.startswith("ntpoly "):
            runs.append(dict(LINE.findall(line)))
    return runs


def check(args):
    driver = args.driver
    if not os.access(driver, os.X_OK):
        sys.exit(f"ntpoly_check.py: no driver {driver}: build it with bench/peers/build_ntpoly.sh")
    mpiexec = shlex.split(args.mpiexec)
    work = args.keep or tempfile.mkdtemp(prefix="ntpoly_check.")
    os.makedirs(work, exist_ok=True)
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    if os.geteuid() == 0:
        env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    h, s, nocc = make_case(args.n, args.band, args.seed, True)
    write_mm(os.path.join(work, "H.mtx"), h)
    write_mm(os.path.join(work, "S.mtx"), s)
    refs = {"orth": dense_density(h, None, nocc), "S": dense_density(h, s, nocc)}
    print(f"n={args.n} band={args.band} nocc={nocc} seed={args.seed}: gap {refs['orth'][2]:.3f} (S = I), "
          f"{refs['S'][2]:.3f} (with S); threshold 0, converge 1e-12; pass: max|D - D_ref| <= {args.tol:g}")
    print(f"{'case':<11} {'method':<10} {'np':>2} {'grid':>6} {'iters':>5} {'max|D-Dref|':>11} "
          f"{'|E-Eref|':>9} {'|trDS-2nocc|':>12} {'nnz_D':>7} result")
    bad = 0
    for np_ in [int(x) for x in args.np.split(",")]:
        for case, extra in (("S=I", []), ("S isqrt", ["--overlap", "S.mtx"]),
                            ("S chol", ["--overlap", "S.mtx", "--factor", "chol"])):
            dref, eref, _ = refs["orth" if case == "S=I" else "S"]
            tag = case.replace(" ", "_").replace("=", "") + f"_np{np_}_"
            cmd = mpiexec + ["-n", str(np_), driver, "--hamiltonian", "H.mtx", "--nocc", str(nocc),
                             "--threshold", "0", "--converge", "1e-12", "--converge-s", "1e-12",
                             "--method", "trs2,trs4,pm,hpcp", "--density", tag] + extra
            r = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True, timeout=600)
            if r.returncode != 0:
                print(r.stdout, r.stderr, file=sys.stderr)
                print(f"{case:<11} {'all':<10} {np_:>2} the driver failed (exit {r.returncode})")
                bad += 1
                continue
            for run in parse(r.stdout):
                m = run["method"]
                key = {"TRS2(SP2)": "trs2", "TRS4": "trs4", "PM": "pm", "HPCP": "hpcp"}[m]
                d = scipy.io.mmread(os.path.join(work, tag + key + ".mtx")).toarray()
                err = float(np.abs(d - dref).max())
                e = float(run["energy"])
                tr = float(run["trace"])
                ok = err <= args.tol
                bad += not ok
                print(f"{case:<11} {m:<10} {np_:>2} {run['grid']:>6} {run['iters']:>5} {err:11.2e} "
                      f"{abs(e - eref):9.2e} {abs(tr - 2 * nocc):12.2e} {run['nnz_D']:>7} "
                      f"{'passed' if ok else 'FAILED'}")
    print(f"{'all passed' if bad == 0 else f'{bad} FAILED'} (files in {work})")
    return 1 if bad else 0


def make(args):
    os.makedirs(args.out, exist_ok=True)
    t0 = time.time()
    h, s, nocc = make_case(args.n, args.band, args.seed, args.overlap)
    write_mm(os.path.join(args.out, "H.mtx"), h)
    if s is not None:
        write_mm(os.path.join(args.out, "S.mtx"), s)
    meta = {"n": args.n, "nocc": nocc, "band": args.band, "seed": args.seed, "overlap": bool(args.overlap),
            "nnz_H": int(h.nnz), "made_by": "bench/peers/ntpoly_check.py make"}
    if args.reference:
        t1 = time.time()
        _, eref, gap = dense_density(h, s, nocc)
        meta.update(energy_ref=eref, gap=gap, eigh_seconds=round(time.time() - t1, 2))
    meta["seconds"] = round(time.time() - t0, 2)
    with open(os.path.join(args.out, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
    print(json.dumps(meta))
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("check")
    c.add_argument("--driver", default=DEFAULT_DRIVER)
    c.add_argument("--n", type=int, default=240)
    c.add_argument("--band", type=int, default=6)
    c.add_argument("--np", default="1,2")
    c.add_argument("--tol", type=float, default=1e-8)
    c.add_argument("--mpiexec", default="mpiexec.openmpi --oversubscribe")
    c.add_argument("--seed", type=int, default=7)
    c.add_argument("--keep", default="")
    m = sub.add_parser("make")
    m.add_argument("--n", type=int, required=True)
    m.add_argument("--out", required=True)
    m.add_argument("--band", type=int, default=6)
    m.add_argument("--overlap", action="store_true")
    m.add_argument("--reference", action="store_true")
    m.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    return check(args) if args.cmd == "check" else make(args)


if __name__ == "__main__":
    sys.exit(main())
