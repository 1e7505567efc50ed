#!/usr/bin/env python3
"""RHF SCF with PySCF in which every density comes from ovl purification (ovl.pyscf).

A thin command over the package's PySCF hook: ovl.pyscf.purify_scf replaces the
eigensolver step of PySCF's own RHF (mf._eigh: F' = X^T F X with PySCF's X, purified
by ovl.purify instead of diagonalised), so Fock builds, DIIS and the convergence tests
are PySCF's. Then PySCF's unchanged RHF runs on the same molecule with the same
tolerances and linear-dependence threshold, its eigensolver timed, and both energies
are printed. Under mpiexec, rank 0 runs PySCF and every rank takes part in the
purification (over MPI.COMM_WORLD). Needs the installed package (pip install ./python)
and PySCF.

usage: [mpiexec -n P] python tools/pyscf_scf.py (--case DIR | --molecule NAME --basis B | --xyz F --basis B)
       [--method sp2] [--conv-tol 1e-11] [--check 1e-8] [--json]
NAME: water, h2o_cluster_N, alkane_N, polyene_N (tools/make-fock's built-in geometries).
Exit 0, or 1 with --check T when |E_ovl - E_pyscf| > T or either SCF did not converge.
"""
import argparse
import importlib.machinery
import importlib.util
import json
import os
import sys
import time

from mpi4py import MPI

import ovl.pyscf

HERE = os.path.dirname(os.path.abspath(__file__))


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


def set_lindep(lindep):
    """PySCF's SCF drops the overlap eigenvalues <= lindep (as tools/make-fock)."""
    from pyscf.scf import hf as scf_hf
    if hasattr(scf_hf, "overlap_zero_eigenvalue_threshold"):
        scf_hf.remove_overlap_zero_eigenvalue = True
        scf_hf.overlap_zero_eigenvalue_threshold = lindep


def make_rhf(mol, args, with_df):
    """PySCF's RHF, with the run's tolerances (density-fitted with the shared tensors under --density-fit)."""
    from pyscf import scf
    mf = scf.RHF(mol)
    mf.max_memory = args.max_memory
    mf.conv_tol, mf.conv_tol_grad, mf.max_cycle = args.conv_tol, args.conv_tol_grad, args.max_cycle
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


def timed_eig(mf):
    """mf with its eig timed: a list whose [0] accumulates the seconds."""
    t = [0.0]
    eig = mf.eig

    def run(h, s, *a, **kw):
        t0 = time.perf_counter()
        r = eig(h, s, *a, **kw)
        t[0] += time.perf_counter() - t0
        return r

    mf.eig = run
    return t


def scf(mol, lindep, args, with_df, comm):
    """(energy, converged, cycles, seconds, seconds in the eigensolver step, mf) of one RHF; ovl's when comm."""
    set_lindep(lindep)
    mf = make_rhf(mol, args, with_df)
    if comm is not None:
        ovl.pyscf.purify_scf(mf, comm=comm, method=args.method)
    t_eig = timed_eig(mf)
    t0 = time.perf_counter()
    e = mf.kernel()
    return dict(energy=e, converged=bool(mf.converged), iterations=getattr(mf, "cycles", -1),
                t_total=time.perf_counter() - t0, t_eigh=t_eig[0]), mf


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--case", help="a shipped case directory (data/NAME: geometry.xyz and meta.json)")
    src.add_argument("--molecule", help="a built-in geometry of tools/make-fock (water, h2o_cluster_N, ...)")
    src.add_argument("--xyz", help="a geometry file (Angstrom)")
    p.add_argument("--basis", help="basis set (default for --case: its meta.json's)")
    p.add_argument("--charge", type=int, default=0)
    p.add_argument("--lindep", type=float, default=1e-6, help="overlap eigenvalue threshold (default 1e-6)")
    p.add_argument("--method", default="sp2", help="purification method: sp2, sp2acc, trs4, canonical")
    p.add_argument("--conv-tol", type=float, default=1e-11, help="energy change (Hartree) to stop at")
    p.add_argument("--conv-tol-grad", type=float, default=1e-7, help="orbital gradient (PySCF's conv_tol_grad)")
    p.add_argument("--max-cycle", type=int, default=100)
    p.add_argument("--density-fit", metavar="AUXBASIS",
                   help="both SCFs density-fitted with this auxiliary basis (e.g. cc-pvdz-jkfit), tensors built once")
    p.add_argument("--max-memory", type=int, default=4000, help="PySCF's max_memory in MB (default 4000)")
    p.add_argument("--check", type=float, help="exit 1 unless |E_ovl - E_pyscf| <= CHECK")
    p.add_argument("--no-reference", action="store_true", help="skip PySCF's own SCF")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    args = p.parse_args(argv)
    comm = MPI.COMM_WORLD
    with ovl.pyscf.ranks(comm) as root:
        if not root:
            return 0
        mol, lindep = build_molecule(args)
        t0 = time.perf_counter()
        with_df = make_df(mol, args)
        t_df = time.perf_counter() - t0
        r, mf = scf(mol, lindep, args, with_df, comm)
    ref = None if args.no_reference else scf(mol, lindep, args, with_df, None)[0]
    stats = mf.ovl_stats
    t_pur = sum(s["t_total"] for s in stats)
    out = dict(nao=mol.nao_nr(), nocc=mol.nelectron // 2, ranks=comm.Get_size(), method=args.method,
               e_ovl=r["energy"], converged=r["converged"], scf_iterations=r["iterations"],
               purify_iterations=sum(s["iterations"] for s in stats), t_scf_ovl=r["t_total"], t_purify=t_pur,
               t_eig_step_ovl=r["t_eigh"], plan=stats[-1]["plan"] if stats else "", density_fit=args.density_fit,
               t_df_build=t_df)
    if ref:
        out.update(e_pyscf=ref["energy"], pyscf_converged=ref["converged"], t_scf_pyscf=ref["t_total"],
                   t_eigh_pyscf=ref["t_eigh"], diff=r["energy"] - ref["energy"])
    if args.json:
        print(json.dumps(out))
    else:
        print(f"# molecule: {mol.natm} atoms, {out['nao']} basis functions, {out['nocc']} occupied; "
              f"{out['ranks']} rank(s); "
              f"{'density fitting ' + args.density_fit if args.density_fit else 'exact integrals'}; "
              f"ovl {args.method} ({out['plan']})")
        print(f"E(ovl SCF)   = {r['energy']:.12f} Ha  ({r['iterations']} SCF iterations, "
              f"{out['purify_iterations']} purification iterations, converged: {r['converged']})")
        if ref:
            print(f"E(PySCF RHF) = {ref['energy']:.12f} Ha  (converged: {ref['converged']})")
            print(f"difference   = {out['diff']:.3e} Ha")
        if args.density_fit:
            print(f"time: density-fitting tensors (built once, used by both SCFs) {t_df:.3f} s")
        print(f"time: ovl SCF {r['t_total']:.3f} s, of which the eigensolver step {r['t_eigh']:.3f} s "
              f"(purification {t_pur:.3f} s, the rest the orbitals from the projector)")
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
