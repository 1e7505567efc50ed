#!/usr/bin/env python3
"""Replay recorded PySCF Fock sequences (tools/scf-record) through the eigensolver routes and
through purification, in one launch, interleaved.

usage: [mpiexec -n P] python bench/scf_replay.py DIR [DIR...] [--reps 5] [--plot PNG] [--json F]
       /usr/bin/python3 bench/scf_replay.py --replot F [F...] --plot PNG  (a Python with matplotlib)

Each DIR holds one SCF's orthogonal-basis Fock matrices F'_k (fock.KK.raw) and sequence.json.
Routes, each producing every cycle's density D'_k (the projector onto the nocc lowest
eigenvectors) from F'_k:
  eig:numpy       numpy.linalg.eigh (LAPACK dsyevd, all pairs), then D = C_occ C_occ^T
  eig:evd         scipy.linalg.eigh(driver="evd"), all pairs, then D = C_occ C_occ^T
  eig:evr-occ     scipy.linalg.eigh(driver="evr", subset_by_index=[0, nocc-1]): only the
                  occupied pairs (dsyevr), then D = C C^T
  pur:cold        ovl.purify(F', nocc, method="sp2", tol=1e-12) every cycle (no memory)
  pur:adaptive    ovl.scf.Adaptive: SP2-ACC with the previous cycle's gap edges, tolerance from
                  the density change, float32 products while it is >= 1e-5 (ovl.scf's doc);
                  its time includes the gap edges' Lanczos (gap_edges)
The eigensolver routes run on rank 0 (their BLAS threads: OPENBLAS_NUM_THREADS); the
purification routes on every rank of MPI.COMM_WORLD. Order: for each repetition, for each
cycle, every route on that cycle (the route order rotates), so that machine noise hits all
routes alike; the adaptive policy is reset at the start of each repetition. Times are wall
seconds on rank 0 summed over the cycles; reported: min and median over the repetitions, and
the ratio (fastest eigensolver route) / (purification route) of the medians and of the mins
(> 1: purification faster). Also the products per cycle, and the last cycle's density
against eig:evd's (||D - D_eig||_F / ||D_eig||_F) and its band energy 2 tr(F' (D - D_eig)).
Not in the routes: the orbitals PySCF's hook builds from a purified D (ovl.pyscf.orbitals:
two pivoted Cholesky factorisations and a QR), timed apart as "orbitals".
"""
import argparse
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def read_matrix(path):
    with open(path + ".json") as f:
        side = json.load(f)
    return np.fromfile(path, dtype="<f8").reshape(side["rows"], side["cols"])


def load(d):
    with open(os.path.join(d, "sequence.json")) as f:
        meta = json.load(f)
    return meta, [read_matrix(os.path.join(d, nm)) for nm in meta["fock_files"]]


def _imports():
    """numpy, scipy, MPI and ovl, imported on use (--replot needs none of them)."""
    global MPI, ovl, scipy, np
    import numpy as np
    import scipy.linalg
    from mpi4py import MPI
    import ovl
    import ovl.pyscf
    import ovl.scf


def eig_numpy(F, nocc):
    w, C = np.linalg.eigh(F)
    C = C[:, :nocc]
    return C @ C.T


def eig_evd(F, nocc):
    w, C = scipy.linalg.eigh(F, driver="evd", check_finite=False)
    C = C[:, :nocc]
    return C @ C.T


def eig_evr_occ(F, nocc):
    w, C = scipy.linalg.eigh(F, driver="evr", subset_by_index=[0, nocc - 1], check_finite=False)
    return C @ C.T


EIG = {"eig:numpy": eig_numpy, "eig:evd": eig_evd, "eig:evr-occ": eig_evr_occ}
PUR = ("pur:cold", "pur:adaptive")


def run_seq(name, meta, focks, reps, comm):
    rank = comm.Get_rank()
    nocc = meta["nocc"]
    routes = list(EIG) + list(PUR)
    t = {r: [0.0] * reps for r in routes}
    prods = {r: [[] for _ in range(reps)] for r in PUR}
    policy_log = []
    last = {}
    full_below = 10.0 * np.sqrt(meta["conv_tol"])
    for rep in range(reps):
        pol = ovl.scf.Adaptive(full_below=full_below)
        for k, F in enumerate(focks):
            order = routes[(rep + k) % len(routes):] + routes[:(rep + k) % len(routes)]
            for r in order:
                comm.Barrier()
                t0 = time.perf_counter()
                if r in EIG:
                    D = EIG[r](F, nocc) if rank == 0 else None
                    info = None
                elif r == "pur:cold":
                    D, info = ovl.purify(F if rank == 0 else None, nocc, comm=comm, method="sp2", tol=1e-12,
                                         bcast=False)
                else:
                    opts = comm.bcast(pol.options(F) if rank == 0 else None, root=0)
                    D, info = ovl.purify(F if rank == 0 else None, nocc, comm=comm, bcast=False, **opts)
                    if rank == 0:
                        D = 0.5 * (D + D.T)
                        ok = pol.update(F, D, info)
                        if not ok:  # the policy asks for the cycle again (estimates missed the gap)
                            opts = pol.options(F)
                    ok = comm.bcast(ok if rank == 0 else None, root=0)
                    if not ok:
                        opts = comm.bcast(opts if rank == 0 else None, root=0)
                        D, info2 = ovl.purify(F if rank == 0 else None, nocc, comm=comm, bcast=False, **opts)
                        if rank == 0:
                            D = 0.5 * (D + D.T)
                            pol.update(F, D, info2)
                            info2["retried"] = info["products"]
                        info = info2
                dt = time.perf_counter() - t0
                t[r][rep] += dt
                if rank == 0 and r in PUR:
                    prods[r][rep].append(info["products"] + info.get("retried", 0))
                    if r == "pur:adaptive" and rep == 0:
                        policy_log.append({k2: info.get(k2) for k2 in ("tol", "precision", "homo_est", "lumo_est",
                                                                         "delta", "products", "retried", "t_edges")})
                if rank == 0 and k == len(focks) - 1 and rep == 0:
                    last[r] = D
    if rank != 0:
        return None
    # the hook's orbitals from a projector, timed apart (once per cycle, on the eigensolver's density)
    t_orb = []
    for _ in range(min(reps, 3)):
        s = 0.0
        for F in focks:
            D = eig_evd(F, nocc)
            t0 = time.perf_counter()
            ovl.pyscf.orbitals(F, D, nocc)
            s += time.perf_counter() - t0
        t_orb.append(s)
    De = last["eig:evd"]
    F = focks[-1]
    res = {"name": name, "n": meta["n"], "nocc": nocc, "cycles": len(focks), "ranks": comm.Get_size(),
           "threads": os.environ.get("OPENBLAS_NUM_THREADS", ""), "reps": reps,
           "conv_tol": meta["conv_tol"], "density_fit": meta.get("density_fit"),
           "time_min": {r: min(v) for r, v in t.items()}, "time_median": {r: statistics.median(v) for r, v in t.items()},
           "orbitals_median": statistics.median(t_orb),
           "products": {r: prods[r][0] for r in PUR}, "products_total": {r: sum(prods[r][0]) for r in PUR},
           "products_reps_equal": {r: all(p == prods[r][0] for p in prods[r]) for r in PUR},
           "policy": policy_log,
           "final_relerr": {r: float(np.linalg.norm(last[r] - De) / np.linalg.norm(De)) for r in last if r != "eig:evd"},
           "final_band_energy_diff": {r: float(2.0 * np.sum(F * (last[r] - De))) for r in last if r != "eig:evd"}}
    best_eig_med = min(res["time_median"][r] for r in EIG)
    best_eig_min = min(res["time_min"][r] for r in EIG)
    res["fastest_eig_median"] = min(EIG, key=lambda r: res["time_median"][r])
    res["ratio_median"] = {r: best_eig_med / res["time_median"][r] for r in PUR}
    res["ratio_min"] = {r: best_eig_min / res["time_min"][r] for r in PUR}
    return res


def report(res):
    print(f"# {res['name']}: n = {res['n']}, nocc = {res['nocc']}, {res['cycles']} cycles, {res['ranks']} rank(s) x "
          f"OPENBLAS_NUM_THREADS={res['threads'] or 'unset'}, {res['reps']} repetitions (conv_tol {res['conv_tol']:g})")
    print("#   %-14s %10s %10s" % ("route", "min s", "median s"))
    for r in res["time_min"]:
        print("#   %-14s %10.4f %10.4f" % (r, res["time_min"][r], res["time_median"][r]))
    print("#   %-14s %10s %10.4f  (the hook's orbitals from D, not in the routes)" % ("orbitals", "", res["orbitals_median"]))
    for r in PUR:
        print(f"#   {r}: products {res['products_total'][r]} {res['products'][r]}; fastest eigensolver "
              f"({res['fastest_eig_median']}) / {r}: {res['ratio_median'][r]:.2f}x (medians), "
              f"{res['ratio_min'][r]:.2f}x (mins); final ||D - D_evd||/||D_evd|| {res['final_relerr'][r]:.1e}, "
              f"2 tr F'(D - D_evd) {res['final_band_energy_diff'][r]:.1e}")
    print("#   adaptive policy per cycle (tol, precision, products):",
          " ".join("%s/%s/%d" % ("full" if p["tol"] == 0 else "%.0e" % p["tol"], p["precision"][0], p["products"])
                   for p in res["policy"]))


def plot(results, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, len(results), figsize=(5 * len(results), 3.6), squeeze=False)
    for ax, res in zip(axes[0], results):
        for r, style in (("pur:cold", "o-"), ("pur:adaptive", "s-")):
            p = res["products"][r]
            label = "adaptive SP2-ACC (ovl.scf)" if "adap" in r else "cold SP2, tol 1e-12"
            ax.plot(range(len(p)), p, style, label=f"{label} (total {sum(p)})")
        for k, pol in enumerate(res["policy"]):
            if pol["precision"] == "mixed":
                ax.axvspan(k - 0.4, k + 0.4, color="0.9", lw=0)
        ax.set_title(f"{res['name']} (n = {res['n']}, {res['cycles']} cycles)")
        ax.set_xlabel("SCF cycle (grey: float32 products)")
        ax.set_ylabel("matrix products")
        ax.set_ylim(bottom=0)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("dirs", nargs="*", help="recorded sequences (tools/scf-record)")
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--plot", help="products per cycle, cold against adaptive (PNG)")
    p.add_argument("--json", help="write the results as JSON")
    p.add_argument("--replot", metavar="JSON", nargs="+",
                   help="only the plot, from --json files (their sequences side by side; any Python with matplotlib)")
    args = p.parse_args(argv)
    if args.replot:
        results = []
        for path in args.replot:
            with open(path) as f:
                results += json.load(f)
        plot(results, args.plot)
        return 0
    _imports()
    comm = MPI.COMM_WORLD
    results = []
    for d in args.dirs:
        d = os.path.expanduser(d)
        meta, focks = load(d)
        res = run_seq(os.path.basename(os.path.normpath(d)), meta, focks, args.reps, comm)
        if res:
            report(res)
            sys.stdout.flush()
            results.append(res)
    if comm.Get_rank() == 0:
        if args.json:
            with open(args.json, "w") as f:
                json.dump(results, f, indent=1)
        if args.plot:
            try:
                plot(results, args.plot)
            except ImportError:
                print(f"# no matplotlib here: /usr/bin/python3 {sys.argv[0]} --replot {args.json or 'JSON'} --plot {args.plot}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
