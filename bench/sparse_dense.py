#!/usr/bin/env python3
"""ovl's dense purification on the block-sparse benchmark's cases (docs/guides/sparse.md, "Benchmarks").

  sparse_dense.py --cases "pe-4k pe-8k" [--method sp2] [--reps 1] [--out DIR]

For each case of $OVL_SPARSE_CASES (~/.cache/ovl/sparse-cases, made by tools/make-sparse-cases):
H and S read as dense arrays, then ovl.purify(H, n_occ, S=S, method=...) on one process (the
dense route of ovl_pdpurify: the Cholesky factor of S, F' = U^-T H U^-1, the purification on
the symmetric square, D back; BLAS threads as the environment says, e.g. OPENBLAS_NUM_THREADS=2),
timed from H and S in memory to D. One JSON line per run is appended to DIR/runs.jsonl with
tool "dense", so that bench/sparse_report.py shows it beside ovl's block-sparse route, NTPoly
and the eigensolver (energy tr(D H) of the closed-shell occupation 1, as the others).
"""
import argparse
import json
import os
import time

import numpy as np
import scipy.io

import ovl


def dense(path):
    return np.asarray(scipy.io.mmread(path).todense(), dtype=np.float64)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cases", required=True)
    ap.add_argument("--method", default="sp2")
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--out", default=os.path.expanduser("~/.cache/ovl/sparse-bench/dense"))
    a = ap.parse_args()
    root = os.environ.get("OVL_SPARSE_CASES", os.path.expanduser("~/.cache/ovl/sparse-cases"))
    os.makedirs(a.out, exist_ok=True)
    for rep in range(1, a.reps + 1):
        for case in a.cases.split():
            d = os.path.join(root, case)
            meta = json.load(open(os.path.join(d, "meta.json")))
            H, S = dense(os.path.join(d, "H.mtx")), dense(os.path.join(d, "S.mtx"))
            load = os.getloadavg()[0]
            t0 = time.perf_counter()
            D, info = ovl.purify(H, meta["n_occ"], S=S, method=a.method)
            t = time.perf_counter() - t0
            e = float(np.sum(D * H))  # tr(D H), D and H symmetric
            rec = {"type": "dense", "method": a.method, "t_total": t, "energy": e,
                   "iterations": info.get("iterations"), "plan": info.get("plan")}
            line = {"tool": "dense", "case": case, "n": meta["n"], "atoms": meta["atoms"], "np": 1, "rep": rep,
                    "eps": 0.0, "load": round(load, 2), "rec": rec}
            with open(os.path.join(a.out, "runs.jsonl"), "a") as f:
                f.write(json.dumps(line) + "\n")
            print(json.dumps(line), flush=True)
            del H, S, D


if __name__ == "__main__":
    main()
