#!/usr/bin/env python3
"""RHF SCF with PySCF in which every density comes from ovl purification.

Each iteration builds the Fock matrix F with PySCF (h + J - K/2 of the
current density), extrapolates it with PySCF's DIIS (CDIIS, as PySCF's own
SCF does), orthogonalises it with the same X PySCF's SCF would use
(mf.check_linear_dependency: canonical orthogonalisation X = U s^(-1/2)
over the overlap eigenvalues above the linear-dependence threshold, as
tools/make-fock sets it), purifies F' = X^T F X with ovl (instead of
diagonalising it) and takes D = 2 X D' X^T. The same run times
scipy.linalg.eigh(F') on every iteration's F' -- the call PySCF's RHF makes
there (mf.eig with x = X) -- and reports both times. Finally it runs
PySCF's own RHF (same tolerances and threshold), timing its mf.eig, and
prints both energies.

Under mpiexec, rank 0 runs PySCF and every rank takes part in the
purification (ovl.purify over MPI.COMM_WORLD).

usage: [mpiexec -n P] python3 tools/pyscf_scf.py (--case DIR | --molecule NAME --basis B | --xyz F --basis B)
       [--method sp2] [--conv-tol 1e-11] [--check 1e-8] [--json]
NAME: water, h2o_cluster_N, alkane_N, polyene_N (tools/make-fock's built-in geometries).
Exit 0, or 1 with --check T when |E_ovl - E_pyscf| > T.
"""
import argparse
import importlib.machinery
import importlib.util
import json
import os
import sys
import time

import numpy as np
from mpi4py import MPI

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))  # an in-tree package when ovl is not installed
import ovl  # noqa: E402


def make_fock_module():
    path = os.path.join(HERE, "make-fock")
    loader = importlib.machinery.SourceFileLoader("make_fock", path)
    spec = importlib.util.spec_from_loader("make_fock", loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


def build_molecule(args):
    from pyscf import gto
    charge, basis = args.charge, args.basis
    if args.case:
        with open(os.path.join(args.case, "meta.json")) as f:
            meta = json.load(f)
        basis = basis or meta["basis"]
        charge = meta.get("charge", 0)
        atoms = make_fock_module().read_xyz(os.path.join(args.case, "geometry.xyz"))
        lindep = meta.get("lindep_threshold", args.lindep)
    else:
        mf_mod = make_fock_module()
        atoms = mf_mod.read_xyz(args.xyz) if args.xyz else mf_mod.builtin_molecule(args.molecule)[0]
        lindep = args.lindep
    if isinstance(atoms, tuple):
        atoms = atoms[0]
    if not basis:
        sys.exit("pyscf_scf.py: --basis is required")
    mol = gto.M(atom=[[s, xyz] for s, xyz in atoms], basis=basis, charge=charge, spin=0, unit="Angstrom", verbose=0)
    return mol, lindep


def set_lindep(lindep):
    """PySCF's SCF drops the overlap eigenvalues <= lindep (as tools/make-fock)."""
    from pyscf.scf import hf as scf_hf
    if hasattr(scf_hf, "overlap_zero_eigenvalue_threshold"):
        scf_hf.remove_overlap_zero_eigenvalue = True
        scf_hf.overlap_zero_eigenvalue_threshold = lindep


def make_rhf(mol, args, with_df):
    """PySCF's RHF object, density-fitted with the shared DF tensors when --density-fit is given."""
    from pyscf import scf
    mf = scf.RHF(mol)
    mf.max_memory = args.max_memory
    if with_df is not None:
        mf = mf.density_fit(with_df=with_df)
    return mf


def make_df(mol, args):
    """One density-fitting object (3-index tensors built once) for both SCFs: --density-fit AUXBASIS."""
    if not args.density_fit:
        return None
    from pyscf import df
    with_df = df.DF(mol, auxbasis=args.density_fit)
    with_df.max_memory = args.max_memory
    with_df.build()
    return with_df


def occupied_factor(Do, nocc):
    """C (n x nocc) with C C^T = Do, by pivoted Cholesky of the purified projector (n^2 nocc flops).

    The SCF takes D = 2 X C C^T X^T and hands PySCF C as the occupied orbitals' factor, so that its
    exchange build contracts over nocc orbitals (as PySCF does with its own orbitals) instead of all n."""
    import scipy.linalg.lapack as lapack
    L, piv, rank, info = lapack.dpstrf(Do, lower=1, tol=-1.0)
    if info < 0 or rank < nocc:
        raise RuntimeError(f"purified density of rank {rank} < nocc = {nocc}")
    C = np.zeros((Do.shape[0], nocc))
    C[piv - 1, :] = np.tril(L)[:, :nocc]
    return C


def scf_ovl(mol, lindep, args, comm, with_df=None):
    """Rank 0: (energy, iterations, t_purify, t_eigh, stats); other ranks: purify on request."""
    import scipy.linalg
    from pyscf import lib
    rank = comm.Get_rank()
    if rank != 0:
        while comm.bcast(None, root=0):
            ovl.purify(None, 0, comm=comm, method=args.method, bcast=False)
        return None
    set_lindep(lindep)
    mf = make_rhf(mol, args, with_df)
    nocc = mol.nelectron // 2
    S = mf.get_ovlp()
    h = mf.get_hcore()
    X = mf.check_linear_dependency(S)
    dm = mf.get_init_guess(mol, mf.init_guess, s1e=S)
    diis = mf.DIIS(mf, mf.diis_file)  # CDIIS, set up as PySCF's SCF kernel does
    diis.space, diis.rollback, diis.damp, diis.Corth = mf.diis_space, mf.diis_space_rollback, mf.diis_damp, X
    e_old, t_pur, t_eig, t_fock, stats = 0.0, 0.0, 0.0, 0.0, []
    converged = False
    for it in range(1, args.max_cycle + 1):
        t0 = time.perf_counter()
        vhf = mf.get_veff(mol, dm)
        F = h + vhf
        e = mf.energy_tot(dm, h, vhf)
        t_fock += time.perf_counter() - t0
        # convergence of the density that produced F (PySCF's criteria: energy change and orbital gradient)
        comm_err = np.linalg.norm(X.T @ (F @ dm @ S - S @ dm @ F) @ X)
        de = e - e_old
        if args.verbose:
            print(f"  iter {it:3d}  E = {e:.12f}  dE = {de:.2e}  |[F,D]| = {comm_err:.2e}", flush=True)
        if abs(de) < args.conv_tol and comm_err < args.conv_tol_grad:
            converged = True
            break
        e_old = e
        Fx = diis.update(S, dm, F) if it - 1 >= mf.diis_start_cycle else F  # PySCF counts cycles from 0
        Fo = X.T @ Fx @ X
        Fo = 0.5 * (Fo + Fo.T)
        # the eigensolver PySCF calls here (mf.eig with x = X: eigh of X^T F X; timed, its result unused)
        Fe = Fo.copy()
        t0 = time.perf_counter()
        scipy.linalg.eigh(Fe, overwrite_a=True)
        t_eig += time.perf_counter() - t0
        comm.bcast(True, root=0)
        t0 = time.perf_counter()
        Do, info = ovl.purify(Fo, nocc, comm=comm, method=args.method, bcast=False)
        t_pur += time.perf_counter() - t0
        stats.append(info)
        C = X @ occupied_factor(Do, nocc)
        dm = lib.tag_array(2.0 * (C @ C.T), mo_coeff=C, mo_occ=np.full(nocc, 2.0))
    comm.bcast(False, root=0)
    return dict(energy=e, converged=converged, iterations=it, t_purify=t_pur, t_eigh=t_eig, t_fock=t_fock,
                purify_iterations=sum(s["iterations"] for s in stats), plan=stats[-1]["plan"] if stats else "",
                n_orth=X.shape[1])


def scf_pyscf(mol, lindep, args, with_df=None):
    set_lindep(lindep)
    mf = make_rhf(mol, args, with_df)
    mf.conv_tol, mf.conv_tol_grad, mf.max_cycle = args.conv_tol, args.conv_tol_grad, args.max_cycle
    t_eig = [0.0]
    eig = mf.eig

    def timed_eig(h, s, *a, **kw):
        t0 = time.perf_counter()
        r = eig(h, s, *a, **kw)
        t_eig[0] += time.perf_counter() - t0
        return r

    mf.eig = timed_eig
    t0 = time.perf_counter()
    e = mf.kernel()
    return dict(energy=e, converged=bool(mf.converged), t_total=time.perf_counter() - t0, t_eigh=t_eig[0],
                iterations=getattr(mf, "cycles", -1))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--case", help="a shipped case directory (data/NAME: geometry.xyz and meta.json)")
    src.add_argument("--molecule", help="a built-in geometry of tools/make-fock (water, h2o_cluster_N, ...)")
    src.add_argument("--xyz", help="a geometry file (Angstrom)")
    p.add_argument("--basis", help="basis set (default for --case: its meta.json's)")
    p.add_argument("--charge", type=int, default=0)
    p.add_argument("--lindep", type=float, default=1e-6, help="overlap eigenvalue threshold (default 1e-6)")
    p.add_argument("--method", default="sp2", help="purification method: sp2, trs4, canonical")
    p.add_argument("--conv-tol", type=float, default=1e-11, help="energy change (Hartree) to stop at")
    p.add_argument("--conv-tol-grad", type=float, default=1e-7, help="orbital gradient ||X^T (F D S - S D F) X||")
    p.add_argument("--max-cycle", type=int, default=100)
    p.add_argument("--density-fit", metavar="AUXBASIS",
                   help="both SCFs density-fitted with this auxiliary basis (e.g. cc-pvdz-jkfit), tensors built once")
    p.add_argument("--max-memory", type=int, default=4000, help="PySCF's max_memory in MB (default 4000)")
    p.add_argument("--check", type=float, help="exit 1 unless |E_ovl - E_pyscf| <= CHECK")
    p.add_argument("--no-reference", action="store_true", help="skip PySCF's own SCF")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("-v", "--verbose", action="store_true")
    args = p.parse_args(argv)
    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    mol, lindep = build_molecule(args) if rank == 0 else (None, None)
    t0 = time.perf_counter()
    with_df = make_df(mol, args) if rank == 0 else None
    t_df = time.perf_counter() - t0
    t0 = time.perf_counter()
    r = scf_ovl(mol, lindep, args, comm, with_df)
    if rank != 0:
        return 0
    t_ovl = time.perf_counter() - t0
    ref = None if args.no_reference else scf_pyscf(mol, lindep, args, with_df)
    out = dict(nao=mol.nao_nr(), n=r["n_orth"], nocc=mol.nelectron // 2, ranks=comm.Get_size(), method=args.method,
               e_ovl=r["energy"], converged=r["converged"], scf_iterations=r["iterations"],
               purify_iterations=r["purify_iterations"], t_scf_ovl=t_ovl, t_purify=r["t_purify"],
               t_eigh_same_run=r["t_eigh"], t_fock=r["t_fock"], plan=r["plan"],
               density_fit=args.density_fit, t_df_build=t_df)
    if ref:
        out.update(e_pyscf=ref["energy"], pyscf_converged=ref["converged"], t_scf_pyscf=ref["t_total"],
                   t_eigh_pyscf=ref["t_eigh"], diff=r["energy"] - ref["energy"])
    if args.json:
        print(json.dumps(out))
    else:
        print(f"# molecule: {mol.natm} atoms, {out['nao']} basis functions ({out['n']} orthogonal), "
              f"{out['nocc']} occupied; {out['ranks']} rank(s); "
              f"{'density fitting ' + args.density_fit if args.density_fit else 'exact integrals'}; ovl {args.method} ({out['plan']})")
        print(f"E(ovl SCF)   = {r['energy']:.12f} Ha  ({r['iterations']} SCF iterations, "
              f"{r['purify_iterations']} purification iterations, converged: {r['converged']})")
        if ref:
            print(f"E(PySCF RHF) = {ref['energy']:.12f} Ha  (converged: {ref['converged']})")
            print(f"difference   = {out['diff']:.3e} Ha")
        if args.density_fit:
            print(f"time: density-fitting tensors (built once, used by both SCFs) {t_df:.3f} s")
        print(f"time: purification {r['t_purify']:.3f} s vs scipy.linalg.eigh(X^T F X) {r['t_eigh']:.3f} s on the same "
              f"Fock matrices; Fock builds {r['t_fock']:.3f} s; SCF total {t_ovl:.3f} s")
        if ref:
            print(f"time: PySCF's own RHF {ref['t_total']:.3f} s, of which its eigensolver {ref['t_eigh']:.3f} s")
    ok = r["converged"] and (ref is None or ref["converged"])
    if args.check is not None:
        if ref is None or not ok or abs(out["diff"]) > args.check:
            print(f"pyscf_scf.py: FAIL: |E_ovl - E_pyscf| > {args.check:g} or not converged", file=sys.stderr)
            return 1
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
