"""Purification over a whole SCF: each cycle as accurate as the SCF needs it, no more.

    from pyscf import gto, scf
    import ovl.pyscf, ovl.scf
    with ovl.pyscf.ranks() as root:
        if root:
            mf = ovl.scf.adaptive_scf(scf.RHF(mol))
            e = mf.kernel()
            print(sum(s["products"] for s in mf.ovl_stats))

``adaptive_scf(mf, comm=None, **kw)`` is ``ovl.pyscf.purify_scf(mf, comm, policy=Adaptive(**kw))``:
PySCF's SCF with its eigensolver step replaced by ovl's purification (ovl.pyscf's hook, unchanged),
each cycle's options chosen by the policy below. ``Adaptive`` is a plain object with
``options(Fo)`` and ``update(Fo, Do, info)``; bench/scf_replay.py drives it over a recorded Fock
sequence without PySCF.

The policy, cycle k (Fo the orthogonal-basis Fock matrix PySCF hands over, Do the purified
projector):

- **The SCF's error**: delta_k = ||Do_k - Do_{k-1}||_F, the change of the orthogonal-basis density
  between cycles. It costs n^2 (no product: the commutator ||F D - D F|| would cost two), is what the
  SCF itself converges (PySCF's DIIS drives it to zero), and bounds the density accuracy worth
  paying for: a density more exact than the next cycle's change is thrown away.
- **Tolerance**: tol_k = min(tol_max, factor * delta_{k-1}) on ||D^2 - D||_F (ovl.purify's tol), with
  factor = 1e-2 and tol_max = 1e-4 (the first cycle: tol_max). Once tol_k < tol_full (1e-8), or
  delta_{k-1} < full_below (adaptive_scf: 10 sqrt(conv_tol); PySCF stops when the orbital gradient
  is below sqrt(conv_tol), and the density change follows the gradient), the cycle runs to the
  method's own parameter-free stopping rule (tol = 0: float64's rounding floor): the last cycles,
  PySCF's final check included, are float64-exact, and the final density is the eigensolver's to
  rounding. The occupied orbitals the hook builds are orthonormalised (ovl.pyscf.orbitals), so
  a loose cycle's density is an exact projector and its energy error is second order.
- **Precision**: precision="mixed" (float32 products until the tolerance or float32's floor, then
  float64) while tol_k >= tol_mixed (1e-5): float32's density error (~1e-6,
  docs/guides/purification.md) stays below what the cycle asks; float64 after.
- **Method**: SP2-ACC with the previous cycle's HOMO and LUMO as the gap estimates (the first cycle
  has none: SP2's steps). The edges are measured after every cycle by a block Krylov Rayleigh-Ritz
  on F restricted to Do's occupied and to its virtual space, warm-started from the previous cycle's
  Ritz vectors (products of n x n by n x 4 blocks only, O(n^2); ``GapEdges``). Ritz values lie
  inside those spectra, so the estimated gap contains this F's true one. A cycle whose estimates turn out not to overlap its gap (an OvlError, or a
  projector whose HOMO lies above its LUMO) is run again without them (SP2), once.

Each cycle's entry of ``mf.ovl_stats`` is ovl.purify's info (iterations, products, t_total, ...)
plus the policy's choice and findings: cycle, tol, precision, method, homo_est/lumo_est (the
estimates used, None for none), delta (this cycle's density change), homo, lumo (measured),
t_edges (seconds in gap_edges), retried (products of a rejected first attempt, 0 for none).
"""
import math

import numpy as np

__all__ = ["Adaptive", "GapEdges", "adaptive_scf", "gap_edges", "total_products"]


def _gershgorin(F):
    r = np.abs(F).sum(axis=1) - np.abs(np.diag(F))
    d = np.diag(F)
    return float((d - r).min()), float((d + r).max())


def _next_block(basis, Y):
    """Y orthogonalised against the blocks of basis (block Gram-Schmidt, twice, one product each) and
    orthonormalised (QR)."""
    V = np.hstack(basis)
    for _ in range(2):
        Y = Y - V @ (V.T @ Y)
    return np.linalg.qr(Y)[0]


def _rayleigh_ritz(basis, images, apply, b, largest):
    """(the extreme Ritz value, the b Ritz vectors next to it) over span(basis), images = A basis."""
    V, AV = np.hstack(basis), np.hstack(images)
    G = V.T @ V
    if np.abs(G - np.eye(G.shape[0])).max() > 1e-8:  # an exhausted Krylov space: orthonormalise, apply again
        g, E = np.linalg.eigh(0.5 * (G + G.T))
        keep = g > 1e-8 * g[-1]
        V = V @ (E[:, keep] / np.sqrt(g[keep]))
        AV = apply(V)
    H = V.T @ AV
    w, U = np.linalg.eigh(0.5 * (H + H.T))
    sel = U[:, -b:] if largest else U[:, :b]
    return float(w[-1] if largest else w[0]), V @ sel


def _ritz(apply, X, steps, largest):
    """Block Krylov Rayleigh-Ritz: (the extreme Ritz value, the block's Ritz vectors) of the operator
    apply over span{X, A X, ..., A^(steps-1) X} (X: n x b)."""
    Q = np.linalg.qr(X)[0]
    basis, images = [], []
    for s in range(steps):
        basis.append(Q)
        Y = apply(Q)
        images.append(Y)
        if s < steps - 1:
            Q = _next_block(basis, Y)
    return _rayleigh_ritz(basis, images, apply, X.shape[1], largest)


class GapEdges:
    """HOMO and LUMO of a symmetric F for a (near-)projector D, cycle after cycle: the largest
    eigenvalue of D F D + lo (I - D) (F on D's range) and the smallest of (I - D) F (I - D) + hi D
    (F on the complement), lo and hi Gershgorin bounds of F, by a block Krylov Rayleigh-Ritz
    (block of b = 4 vectors; the first call 10 steps from seeded random vectors, later calls 3 steps
    from the previous call's Ritz vectors: F and D change little between SCF cycles). Matrix
    products with n x b blocks only, both edges in lockstep (each step: D, F and D times one
    n x 2b block), 3 steps x 4 vectors x 3 matrix-vector products of n^2 per edge.
    The Ritz values lie inside the restricted spectra: homo <= the true HOMO and lumo >= the true
    LUMO for this F (an estimated gap that contains the true one, as SP2-ACC needs). LOCAL."""

    def __init__(self, block=4, steps=3, first_steps=10, seed=0):
        self.block, self.steps, self.first_steps, self.seed = block, steps, first_steps, seed
        self.Vo = self.Vv = None

    def __call__(self, F, D):
        n = F.shape[0]
        b = min(self.block, max(1, n // 4))
        lo, hi = _gershgorin(F)
        warm = self.Vo is not None and self.Vo.shape == (n, b)
        if not warm:
            rng = np.random.default_rng(self.seed)
            self.Vo, self.Vv = rng.standard_normal((n, b)), rng.standard_normal((n, b))
        steps = self.steps if warm else self.first_steps
        k = int(round(float(np.trace(D))))  # the occupied space's dimension
        # Krylov spaces within each space's dimension (an exhausted one is caught in _ritz)
        so, sv = (max(1, min(steps, m // b)) for m in (k, n - k))

        def occ(X):
            DX = D @ X
            return D @ (F @ DX) + lo * (X - DX)

        def vir(X):
            W = X - D @ X
            FW = F @ W
            return FW - D @ FW + hi * (X - W)

        if so != sv:  # a small space: each edge on its own
            homo, self.Vo = _ritz(occ, D @ self.Vo, so, True)
            lumo, self.Vv = _ritz(vir, self.Vv - D @ self.Vv, sv, False)
            return homo, lumo
        # both edges in lockstep: each step's three products with D, F, D on one n x 2b block
        DV = D @ np.hstack((self.Vo, self.Vv))
        Qo, Qv = np.linalg.qr(DV[:, :b])[0], np.linalg.qr(self.Vv - DV[:, b:])[0]
        Bo, Bv, Io, Iv = [], [], [], []
        for s in range(so):
            Bo.append(Qo)
            Bv.append(Qv)
            DY = D @ np.hstack((Qo, Qv))
            FZ = F @ np.hstack((DY[:, :b], Qv - DY[:, b:]))
            DFZ = D @ FZ
            Io.append(DFZ[:, :b] + lo * (Qo - DY[:, :b]))
            Iv.append(FZ[:, b:] - DFZ[:, b:] + hi * DY[:, b:])
            if s < so - 1:
                Qo, Qv = _next_block(Bo, Io[-1]), _next_block(Bv, Iv[-1])
        homo, self.Vo = _rayleigh_ritz(Bo, Io, occ, b, True)
        lumo, self.Vv = _rayleigh_ritz(Bv, Iv, vir, b, False)
        return homo, lumo


def gap_edges(F, D):
    """(homo, lumo) of F for the projector D, from scratch (GapEdges' first call). LOCAL."""
    return GapEdges()(F, D)


class Adaptive:
    """The cycle-by-cycle policy of the module's doc. factor, tol_max, tol_mixed, tol_full: the
    tolerance rule; full_below: a density change below which the cycles run to float64's floor
    (adaptive_scf: 10 sqrt(conv_tol), see the module's doc); method: "sp2acc" (with the previous cycle's gap edges) or "sp2" (no estimates:
    only the tolerance and precision adapt); mixed: False keeps float64 throughout."""

    def __init__(self, factor=1e-2, tol_max=1e-4, tol_mixed=1e-5, tol_full=1e-8, full_below=0.0, method="sp2acc",
                 mixed=True):
        if not 0 < factor <= 1 or not tol_full <= tol_mixed <= tol_max <= 1e-2 or tol_full < 1e-14:
            raise ValueError("ovl.scf.Adaptive: need 0 < factor <= 1 and 1e-14 <= tol_full <= tol_mixed <= tol_max "
                             "<= 1e-2")
        if method not in ("sp2acc", "sp2"):
            raise ValueError(f"ovl.scf.Adaptive: method must be sp2acc or sp2, not {method!r}")
        self.factor, self.tol_max, self.tol_mixed, self.tol_full = factor, tol_max, tol_mixed, tol_full
        self.full_below = float(full_below)
        self.method, self.mixed = method, mixed
        self.reset()

    def reset(self):
        """Forget the previous cycles (a new SCF)."""
        self.cycle, self.prev, self.delta, self.homo, self.lumo = 0, None, math.inf, None, None
        self.edges = GapEdges()
        self.cold, self.retried, self.current = False, 0, None

    def tolerance(self):
        """(tol, precision) for the next cycle: tol 0 is the method's own stopping rule."""
        t = min(self.tol_max, self.factor * self.delta)
        if t < self.tol_full or self.delta < self.full_below:
            return 0.0, "double"
        return t, "mixed" if self.mixed and t >= self.tol_mixed else "double"

    def options(self, Fo):
        tol, prec = self.tolerance()
        opts = {"method": self.method, "tol": tol, "precision": prec}
        if self.method == "sp2acc" and self.homo is not None and not self.cold:
            opts["homo"], opts["lumo"] = self.homo, self.lumo
        self.current = opts
        return dict(opts)

    def failed(self, err):
        """An OvlError of this cycle: retry without the estimates if it had them."""
        if "homo" in self.current:
            self.cold = True
            return True
        return False

    def update(self, Fo, Do, info):
        import time
        t0 = time.perf_counter()
        try:
            homo, lumo = self.edges(Fo, Do)
        except np.linalg.LinAlgError:  # no estimates next cycle
            homo, lumo = None, None
        t_edges = time.perf_counter() - t0
        used = self.current
        info.update(cycle=self.cycle, tol=used["tol"], precision=used["precision"], method=used["method"],
                    homo_est=used.get("homo"), lumo_est=used.get("lumo"), homo=homo, lumo=lumo, t_edges=t_edges,
                    retried=self.retried)
        if homo is not None and homo >= lumo and "homo" in used and not self.cold:
            # not the aufbau projector: the estimates missed the gap; the cycle again, without them
            self.cold, self.retried = True, info.get("products", 0)
            return False
        if self.prev is not None and self.prev.shape == Do.shape:
            self.delta = float(np.linalg.norm(Do - self.prev))
        else:
            self.delta = math.inf
        info["delta"] = self.delta
        self.prev = Do.copy()
        self.homo, self.lumo = (homo, lumo) if homo is not None and homo < lumo else (None, None)
        self.cycle += 1
        self.cold, self.retried = False, 0
        return True


def adaptive_scf(mf, comm=None, **kw):
    """mf with its eigensolver step replaced by ovl's purification under the Adaptive(**kw) policy
    (ovl.pyscf.purify_scf); full_below defaults to 10 sqrt(mf.conv_tol). Returns mf. Run the SCF
    inside ovl.pyscf.ranks(comm)."""
    from .pyscf import purify_scf
    kw.setdefault("full_below", 10.0 * math.sqrt(mf.conv_tol))
    return purify_scf(mf, comm=comm, policy=Adaptive(**kw))


def total_products(mf):
    """Products of the whole SCF (every cycle's, retried attempts included)."""
    return sum(s.get("products", 0) + s.get("retried", 0) for s in mf.ovl_stats)
