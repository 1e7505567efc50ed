#!/usr/bin/env python3
"""Replay SP2 and SP2-ACC on the exact spectra of the shipped cases (numpy; the iteration acts on each
eigenvalue alone): what HOMO/LUMO estimates made inside one call could give.

1. products at ||D^2 - D||_F <= 1e-10 when the exact HOMO/LUMO images are known only after k SP2 steps
   (k = 0: from the start), with the library's rule (fold to the end, trace checks below 0.01);
2. per SP2 iteration on c10h22: tr(D - D^2) and the number of eigenvalues with t (1 - t) > 0.1, i.e. how
   far the first iterates are from isolating the gap;
3. a Lanczos run on F (40, 80, 120 steps, full reorthogonalisation, seeded start): the widest hole
   between Ritz values among those where the Lanczos quadrature counts n_occ +- 3 sigma levels below,
   and whether it overlaps the true gap.
usage: bench/sp2acc_replay.py [DATA_DIR [SEED]]   (/usr/bin/python3 with numpy; SEED: Lanczos's start vector)"""
import json
import sys

import numpy as np

DATA = sys.argv[1] if len(sys.argv) > 1 else "data"
SEED = int(sys.argv[2]) if len(sys.argv) > 2 else 20261128
CASES = ["water_ccpvdz", "c10h22_631g", "h2o8_ccpvdz", "h2o24_ccpvdz", "c40h42_sto3g", "c40h42_lda_sto3g"]


def load(c):
    m = json.load(open(f"{DATA}/{c}/meta.json"))
    n = m["n"]
    return np.fromfile(f"{DATA}/{c}/fock.raw").reshape(n, n), m["n_occ"]


def replay(lam, nocc, k=None, tol=1e-10):
    """products of SP2 (k None) or SP2-ACC given the exact images after k SP2 steps"""
    n = len(lam)
    lo, hi = lam[0], lam[-1]
    lo, hi = lo - 0.01 * (hi - lo), hi + 0.01 * (hi - lo)  # the Lanczos bounds' 1% margin
    t = (hi - lam) / (hi - lo)
    x = y = 0.0
    phase = 0  # 0 SP2, 1 fold, 2 fold checked, 3 SP2 checked
    it = 0
    while True:
        if k is not None and it == k:
            x, y, phase = t[nocc], 1 - t[nocc - 1], 1
        t2 = t * t
        it += 1
        if np.sqrt(np.sum((t2 - t) ** 2)) <= tol or it > 200:
            return it
        r, sm = t.sum() - nocc, t.sum() - t2.sum()
        if phase == 2 and not (-nocc * y - 0.01 <= r <= (n - nocc) * x + 0.01):
            phase, x, y = 3, 0.0, 0.0
        acc = phase in (1, 2)
        a, b = (2 / (2 - x), 2 / (2 - y)) if acc else (1.0, 1.0)
        br = (0 if x >= y else 1) if acc else (0 if abs(t2.sum() - nocc) <= abs(2 * t.sum() - t2.sum() - nocc) else 1)
        if br == 0:
            t, x, y = (1 - a + a * t) ** 2, (1 - a + a * x) ** 2, 2 * a * y - a * a * y * y
        else:
            t, x, y = 2 * b * t - b * b * t * t, 2 * b * x - b * b * x * x, (1 - b + b * y) ** 2
        if phase == 1 and x < 0.01 and y < 0.01:
            phase = 2
        if phase == 2 and x < 1e-8 and y < 1e-8:
            phase, x, y = 3, 0.0, 0.0


def lanczos(F, m, seed=20261128):
    n = F.shape[0]
    m = min(m, n)
    V = np.zeros((n, m + 1))
    v = np.random.default_rng(seed).standard_normal(n)
    V[:, 0] = v / np.linalg.norm(v)
    al, be = [], []
    for j in range(m):
        w = F @ V[:, j]
        al.append(w @ V[:, j])
        for _ in range(2):
            w -= V[:, : j + 1] @ (V[:, : j + 1].T @ w)
        b = np.linalg.norm(w)
        if b < 1e-10:
            break
        be.append(b)
        V[:, j + 1] = w / b
    k = len(al)
    T = np.diag(al) + np.diag(be[: k - 1], 1) + np.diag(be[: k - 1], -1)
    th, Z = np.linalg.eigh(T)
    return th, Z[0, :] ** 2


print("1. products, SP2 and SP2-ACC with the exact images after k SP2 steps")
ks = [0, 1, 2, 4, 8]
print("case", "sp2", " ".join(f"k={k}" for k in ks))
for c in CASES:
    F, nocc = load(c)
    lam = np.linalg.eigvalsh(F)
    print(c, replay(lam, nocc), " ".join(str(replay(lam, nocc, k)) for k in ks))
print("2. c10h22, SP2: iteration: tr(D - D^2), eigenvalues with t (1 - t) > 0.1")
F, nocc = load("c10h22_631g")
lam = np.linalg.eigvalsh(F)
lo, hi = lam[0] - 0.01 * (lam[-1] - lam[0]), lam[-1] + 0.01 * (lam[-1] - lam[0])
t = (hi - lam) / (hi - lo)
row = []
for it in range(1, 12):
    t2 = t * t
    row.append(f"{it}: {np.sum(t - t2):.1f}, {int(np.sum(t - t2 > 0.1))}")
    t = t2 if abs(t2.sum() - nocc) <= abs(2 * t.sum() - t2.sum() - nocc) else 2 * t - t2
print("; ".join(row))
print("3. Lanczos on F: the widest Ritz hole where the quadrature counts n_occ +- 3 sigma; overlaps the gap?")
for c in CASES:
    F, nocc = load(c)
    n = F.shape[0]
    lam = np.linalg.eigvalsh(F)
    h, l = lam[nocc - 1], lam[nocc]
    out = []
    for m in (40, 80, 120):
        th, wt = lanczos(F, m, SEED)
        cnt = n * np.cumsum(wt)
        win = np.abs(cnt[:-1] - nocc) <= 3 * np.sqrt(nocc * (n - nocc) / n) + 2
        j = int(np.argmax(np.where(win, np.diff(th), -1)))
        out.append(f"{m}: {'yes' if th[j] < l and th[j + 1] > h else 'no'}")
    print(c, ", ".join(out))
