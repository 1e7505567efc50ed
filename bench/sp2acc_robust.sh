#!/usr/bin/env bash
# SP2-ACC with estimates that overlap the true gap (2x, 0.5x, 3x, 5x, 10x, 0.1x its width about the mid-gap;
# the gap moved by 0.9 half-gaps either way) and with estimates that miss it (the two levels below the HOMO;
# the two above the LUMO; [homo - 3g, homo - g]; [lumo + g, lumo + 3g]; the 5th and 3rd levels below the
# LUMO), on CASES (default three shipped ones), 1 rank, the parameter-free stopping rule: products, the
# iteration of the fallback (0: none) and the density's relative error against dsyevd's.
# usage: bench/sp2acc_robust.sh [OVL] [CASE...]   (/usr/bin/python3 with numpy; run from the repository)
OVL=${1:-build/ovl}; shift || true
CASES=("$@"); [ ${#CASES[@]} -gt 0 ] || CASES=(h2o8_ccpvdz c40h42_lda_sto3g water_ccpvdz)
for c in "${CASES[@]}"; do
  /usr/bin/python3 -c "
import json, numpy as np
m = json.load(open('data/$c/meta.json')); n, k = m['n'], m['n_occ']
lam = np.linalg.eigvalsh(np.fromfile('data/$c/fock.raw').reshape(n, n)); h, l = lam[k - 1], lam[k]; mid, g = (h + l) / 2, (l - h) / 2
good = [(mid - f * g, mid + f * g) for f in (2, 0.5, 3, 5, 10, 0.1)] + [(mid + d * g - g, mid + d * g + g) for d in (-0.9, 0.9)]
bad = [(lam[k - 2], lam[k - 1] - 1e-9), (lam[k] + 1e-9, lam[k + 1]), (h - 3 * g, h - g), (l + g, l + 3 * g), (lam[k - 5], lam[k - 3])]
for tag, L in (('overlaps', good), ('misses', bad)):
    for e in L: print(tag, repr(e[0]), repr(e[1]))
" | while read -r tag h l; do
    "$OVL" purify --fock "data/$c/fock.raw" --method sp2acc --homo "$h" --lumo "$l" --check --json 2>/dev/null | /usr/bin/python3 -c "
import json, sys; d = json.loads(sys.stdin.read().strip().splitlines()[-1]); print('$c', '$tag', d['products'], d['fallback'], '%.1e' % d['ref_relerr'])" || echo "$c $tag FAIL"
  done
done
