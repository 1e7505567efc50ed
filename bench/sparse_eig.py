#!/usr/bin/env python3
"""The eigensolver routes to the density of a sparse tight-binding case (bench/sparse_bench.sh).

  sparse_eig.py CASE_DIR [--route gvx|gvd|both] [--fprime PATH] [--reps K]

CASE_DIR holds H.mtx, S.mtx (Matrix Market, symmetric) and meta.json (n_occ), as
tools/make-sparse-cases writes them. The routes, each from H and S in memory (dense) to D:
  gvx  LAPACK dsygvx through scipy.linalg.eigh(H, S, subset_by_index=[0, n_occ - 1]):
       Cholesky S = L L^T, the standard problem, the n_occ lowest pairs only, back-transform;
  gvd  LAPACK dsygvd (every pair, divide and conquer).
Then D = C_occ C_occ^T (dgemm). Threads: OpenBLAS's (OPENBLAS_NUM_THREADS; the headline
setting is 1 process x 2 threads). Prints one JSON object per route and repetition: route,
n, t_solve (the eigensolver, seconds), t_density (C C^T), t_total, energy = tr(D H),
trace = tr(D S), homo, lumo. --fprime PATH also writes F' = S^(-1/2) H S^(-1/2) (dense, raw
row-major float64 with its .json sidecar) for ovl's dense purification, untimed.
"""
import argparse
import json
import os
import sys
import time

import numpy as np
import scipy.io
import scipy.linalg


def load(case):
    H = scipy.io.mmread(os.path.join(case, "H.mtx")).toarray()
    S = scipy.io.mmread(os.path.join(case, "S.mtx")).toarray()
    meta = json.load(open(os.path.join(case, "meta.json")))
    return np.asfortranarray(H), np.asfortranarray(S), int(meta["n_occ"])


def route(H, S, nocc, name):
    t0 = time.perf_counter()
    if name == "gvx":
        w, C = scipy.linalg.eigh(H, S, subset_by_index=[0, nocc], driver="gvx", check_finite=False)
        homo, lumo, C = w[nocc - 1], w[nocc], C[:, :nocc]
    else:
        w, C = scipy.linalg.eigh(H, S, driver="gvd", check_finite=False)
        homo, lumo, C = w[nocc - 1], w[nocc], C[:, :nocc]
    t1 = time.perf_counter()
    D = C @ C.T
    t2 = time.perf_counter()
    return D, {"route": name, "t_solve": t1 - t0, "t_density": t2 - t1, "t_total": t2 - t0,
               "energy": float(np.sum(D * H)), "trace": float(np.sum(D * S)), "homo": float(homo),
               "lumo": float(lumo)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("case")
    ap.add_argument("--route", default="gvx", choices=["gvx", "gvd", "both"])
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--fprime", default=None)
    a = ap.parse_args()
    if not os.path.isfile(os.path.join(a.case, "meta.json")):
        sys.exit(f"sparse_eig.py: no case in {a.case!r} (meta.json, H.mtx, S.mtx)")
    H, S, nocc = load(a.case)
    n = H.shape[0]
    for r in range(a.reps):
        for name in (["gvx", "gvd"] if a.route == "both" else [a.route]):
            _, rec = route(H, S, nocc, name)
            rec.update({"case": os.path.basename(os.path.normpath(a.case)), "n": n, "n_occ": nocc, "rep": r,
                        "threads": os.environ.get("OPENBLAS_NUM_THREADS", "")})
            print(json.dumps(rec), flush=True)
    if a.fprime:
        w, V = np.linalg.eigh(S)
        Z = (V * w ** -0.5) @ V.T
        Fp = Z @ H @ Z
        Fp = 0.5 * (Fp + Fp.T)
        np.ascontiguousarray(Fp, dtype="<f8").tofile(a.fprime)
        json.dump({"rows": n, "cols": n, "symmetric": True}, open(a.fprime + ".json", "w"))
        json.dump({"n_occ": nocc}, open(os.path.join(os.path.dirname(os.path.abspath(a.fprime)), "meta.json"), "w"))


if __name__ == "__main__":
    main()
