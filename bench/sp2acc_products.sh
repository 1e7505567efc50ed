#!/usr/bin/env bash
# Products of SP2 and SP2-ACC on every case with a fock.raw under DATA (default data, then data/big), 1 rank,
# float64, stopped at ||D^2 - D||_F <= 1e-10 (--tol 1e-10), every density checked against dsyevd's (--check):
# SP2; SP2-ACC with meta.json's exact HOMO/LUMO; with no estimates; with the gap 2x too wide and 2x too narrow
# about the mid-gap; with a wrong estimate (an estimated gap inside the occupied levels, [homo - 3g, homo - g]
# for g the half gap); SP2-ACC mixed with the exact estimates (products, float32 ones, density error). A cell is products, "r" when the run fell back to SP2 from D0, "!" when the density's
# relative error is above 1e-10.
# usage: bench/sp2acc_products.sh [OVL] [DATA...]
set -u
OVL=${1:-build/ovl}; shift || true
DIRS=("$@"); [ ${#DIRS[@]} -gt 0 ] || DIRS=(data data/big)
py=/usr/bin/python3
one() { # args: ovl purify flags; prints the cell
  "$OVL" purify --json --check --tol 1e-10 "$@" 2>/dev/null | $py -c "
import json,sys
try: d=json.loads(sys.stdin.read().strip().splitlines()[-1])
except Exception: print('fail'); sys.exit()
print(str(d['products']) + ('r' if d.get('fallback',0) else '') + ('' if d['ref_relerr'] <= 1e-10 else '!'))"
}
printf '| case | n | SP2 | SP2-ACC exact | ratio | no estimates | gap x2 | gap x0.5 | wrong (occupied) | mixed, exact |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n'
for dir in "${DIRS[@]}"; do
  for m in "$dir"/*/meta.json; do
    c=$(dirname "$m"); [ -f "$c/fock.raw" ] || continue
    read -r n h l < <($py -c "import json; m=json.load(open('$m')); print(m['n'], repr(m['homo']), repr(m['lumo']))")
    est() { $py -c "h=$h; l=$l; g=(l-h)/2; m=(h+l)/2; e={'w': (m-2*g, m+2*g), 'n': (m-g/2, m+g/2), 'x': (h-3*g, h-g)}['$1']; print('--homo', repr(e[0]), '--lumo', repr(e[1]))"; }
    F=$c/fock.raw
    p0=$(one --fock "$F" --method sp2)
    p1=$(one --fock "$F" --method sp2acc --homo "$h" --lumo "$l")
    # no estimates: the matrix without its meta.json (which the command would read them from)
    tmp=$(mktemp -d); ln -s "$(realpath "$F")" "$tmp/fock.raw"; ln -s "$(realpath "$F").json" "$tmp/fock.raw.json"
    p2=$(one --fock "$tmp/fock.raw" --nocc "$($py -c "import json; print(json.load(open('$m'))['n_occ'])")" --method sp2acc); rm -rf "$tmp"
    # shellcheck disable=SC2046
    p3=$(one --fock "$F" --method sp2acc $(est w)); p4=$(one --fock "$F" --method sp2acc $(est n)); p5=$(one --fock "$F" --method sp2acc $(est x))
    p6=$("$OVL" purify --json --check --method sp2acc -P mixed --fock "$F" --homo "$h" --lumo "$l" 2>/dev/null | $py -c "
import json,sys; d=json.loads(sys.stdin.read().strip().splitlines()[-1]); print('%d (%d), %.0e' % (d['products'], d['iter_single'], d['ref_relerr']))")
    ratio=$($py -c "print('%.2f' % (int('$p1'.rstrip('r!'))/int('$p0'.rstrip('r!'))))" 2>/dev/null || echo -)
    printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "${c#*/}" "$n" "$p0" "$p1" "$ratio" "$p2" "$p3" "$p4" "$p5" "$p6"
  done
done
