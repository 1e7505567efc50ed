#!/usr/bin/env bash
# ovl purify --sparse end to end: a gapped chain Hamiltonian H and an overlap
# S (uneven blocks, Matrix Market with the block-size sidecar, made here),
# through S^(-1/2), against the eigensolver (--check: 1e-8 at --sparse 0,
# 100 eps at eps > 0), the output D against the generalized eigenproblem's
# density, on 1, 2 and 4 ranks; bad input refused with a clear message.
# usage: purify_sparse_test.sh OVL MPIEXEC [MPIEXEC_FLAGS...]
set -u
OVL=$1; shift
PY=python3; [ -x /usr/bin/python3 ] && PY=/usr/bin/python3
MPIEXEC=("$@")
pass=0; fail=0
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
run() { local np=$1; shift; timeout $((120 * ${OVL_TEST_TIMEOUT_SCALE:-1})) "${MPIEXEC[@]}" -n "$np" "$OVL" purify "$@" >"$tmp/out" 2>"$tmp/err"; rc=$?
        out=$(cat "$tmp/out"); err=$(cat "$tmp/err"); }
ok() { if "$@"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $name (rc=$rc)"; echo "$out" | tail -5; echo "$err" | tail -5; fi; }
has() { grep -q -- "$1" <<<"$2"; }

# the case: n ~ 300 in blocks of 1-4, a dimerised chain (gap), S = I + nearest-neighbour overlaps.
# OVL_TEST_QUICK=1 (the sanitizer build): n ~ 120, the same runs and checks (at --sparse 0 the ~120^2 / 6
# block products of n ~ 300 take most of a minute there; at 1e-7 blocks are still dropped at n ~ 120)
N=300; [ "${OVL_TEST_QUICK:-0}" = 1 ] && N=120
"$PY" - "$tmp" "$N" <<'PY'
import json, sys
import numpy as np
d = sys.argv[1]
rng = np.random.default_rng(7)
bs = []
while sum(bs) < int(sys.argv[2]): bs.append(int(rng.integers(1, 5)))
n = sum(bs)
H = np.zeros((n, n)); S = np.eye(n)
for i in range(n):
    H[i, i] = (0.6 if i % 2 else -0.6) + 0.05 * rng.standard_normal()
    if i + 1 < n:
        H[i, i + 1] = H[i + 1, i] = -1.0 + 0.05 * rng.standard_normal()
        S[i, i + 1] = S[i + 1, i] = 0.2
def mtx(path, A):
    with open(path, "w") as f:
        ij = [(i, j) for j in range(n) for i in range(j, n) if A[i, j] != 0.0]
        f.write("%%%%MatrixMarket matrix coordinate real symmetric\n%d %d %d\n" % (n, n, len(ij)))
        for i, j in ij: f.write("%d %d %.17g\n" % (i + 1, j + 1, A[i, j]))
    json.dump({"rows": n, "cols": n, "block_sizes": bs}, open(path + ".json", "w"))
mtx(d + "/H.mtx", H); mtx(d + "/S.mtx", S)
json.dump({"n_occ": n // 2}, open(d + "/meta.json", "w"))
# the reference: the generalized eigenproblem H C = S C e, D = C_occ C_occ^T
w, V = np.linalg.eigh(S); Z = V @ np.diag(w ** -0.5) @ V.T
e, C = np.linalg.eigh(Z @ H @ Z); Co = Z @ C[:, : n // 2]
np.save(d + "/dref.npy", Co @ Co.T)
PY
H="$tmp/H.mtx"; S="$tmp/S.mtx"
# the file's blocks (--sparse-block 1) and merged ones (the default 32, and 7); the product's plan as the
# cost model chooses it, and the 2.5D product on c layers (--repl c: 1 x 1 x c)
for c in "1 0 sp2 1 0" "1 1e-7 sp2acc 32 0" "2 1e-7 sp2 7 0" "4 0 sp2acc 32 0" "1 0 trs4 32 0" "2 1e-7 trs4 1 0" \
  "2 1e-7 sp2 7 2" "4 0 trs4 32 4"; do
  read -r np eps m bsz repl <<<"$c"
  extra=(); [ "$repl" -gt 0 ] && extra=(--repl "$repl")
  {
    {
      name="np=$np --sparse $eps --method $m --sparse-block $bsz ${extra[*]} with S"
      run "$np" --fock "$H" --overlap "$S" --sparse "$eps" --method "$m" --sparse-block "$bsz" "${extra[@]}" --check -o "$tmp/D.mtx"
      ok test "$rc" -eq 0; ok has "check: .*PASS" "$out"; ok has "block-sparse, threshold" "$out"
      if [ "$repl" -gt 0 ]; then ok has "the product's plan: bs2.5d grid=1x1x$repl " "$out"
      else ok has "the product's plan: \(bsumma grid=\|bs2.5d grid=\)" "$out"; fi
      # D (in the basis of H and S) against the generalized eigenproblem's density
      err=$("$PY" - "$tmp" "$eps" <<'PY'
import sys
import numpy as np
d, eps = sys.argv[1], float(sys.argv[2])
ref = np.load(d + "/dref.npy"); n = ref.shape[0]
D = np.zeros((n, n))
rows = [l.split() for l in open(d + "/D.mtx") if not l.startswith("%")]
for i, j, v in rows[1:]: D[int(i) - 1, int(j) - 1] = float(v)
r = np.linalg.norm(D - ref) / np.linalg.norm(ref)
print("%.3e" % r, "ok" if r <= max(1e-10, 100 * eps) else "WRONG")
PY
)
      name="$name: D against the reference ($err)"; ok has "ok" "$err"
    }
  }
done
# without S: F itself in an orthonormal basis (the chain's H), exact at --sparse 0
name="np=2 no overlap"; run 2 --fock "$H" --sparse 0 --method sp2 --check --json
ok test "$rc" -eq 0; ok has '"check":"PASS"' "$out"; ok has '"sparse":0' "$out"; ok has '"blocks_d":' "$out"
# bad input: the same message on every rank, no output left
name="--overlap without --sparse"; run 2 --fock "$H" --overlap "$S" -q
ok test "$rc" -ne 0; ok has "--overlap applies to --sparse" "$err"
name="--sparse with canonical"; run 2 --fock "$H" --sparse 1e-6 --method canonical -q
ok test "$rc" -ne 0; ok has "--sparse runs --method sp2, sp2acc or trs4" "$err"
name="--sparse with a dense plan's knob"; run 2 --fock "$H" --sparse 1e-6 --method sp2 --backend mpi -q
ok test "$rc" -ne 0; ok has "--backend does not apply with --sparse" "$err"
name="--sparse --json names the product's plan"; run 2 --fock "$H" --sparse 1e-6 --method sp2 --ndup 3 --json
ok test "$rc" -eq 0; ok has '"plan":"bsumma grid=1x2 ndup=3' "$out"; ok has '"ndup":3' "$out"
name="--sparse-block without --sparse"; run 1 --fock "$H" --sparse-block 8 --method sp2 -q
ok test "$rc" -ne 0; ok has "--sparse-block applies with --sparse only" "$err"
name="--sparse out of range"; run 1 --fock "$H" --sparse 2 --method sp2 -q
ok test "$rc" -ne 0; ok has "must be in \[0, 1)" "$err"
name="--sparse 1e-6 with mixed precision: float32 products, checked"
run 2 --fock "$H" --overlap "$S" --sparse 1e-6 --method sp2 --sparse-block 32 -P mixed --check --json
ok test "$rc" -eq 0; ok has '"check":"PASS"' "$out"; ok has '"precision":"mixed"' "$out"
ok test "$(sed -n 's/.*"iter_single":\([0-9]*\).*/\1/p' <<<"$out")" -gt 0
name="a block-size sidecar that does not add up"; cp "$H" "$tmp/B.mtx"; echo '{"rows": 5, "cols": 5, "block_sizes": [2, 2]}' >"$tmp/B.mtx.json"
run 2 --fock "$tmp/B.mtx" --sparse 1e-6 --method sp2 --nocc 2 -q -o "$tmp/out.mtx"
ok test "$rc" -ne 0; ok has "B.mtx" "$err"; ok test ! -e "$tmp/out.mtx"
name="S of other blocks"; sed 's/\[/[1, /' "$S.json" >"$tmp/x" && cp "$S" "$tmp/S2.mtx" && cp "$tmp/x" "$tmp/S2.mtx.json"
run 2 --fock "$H" --overlap "$tmp/S2.mtx" --sparse 1e-6 --method sp2 -q
ok test "$rc" -ne 0
name="S of the same size, other blocks"; cp "$S" "$tmp/S3.mtx"
python3 -c 'import json, sys; m = json.load(open(sys.argv[1])); b = m["block_sizes"]; m["block_sizes"] = [b[0] + b[1]] + b[2:]; json.dump(m, open(sys.argv[2], "w"))' "$S.json" "$tmp/S3.mtx.json"
for bsz in 1 32; do
  run 2 --fock "$H" --overlap "$tmp/S3.mtx" --sparse 1e-6 --method sp2 --sparse-block "$bsz" -q
  ok test "$rc" -ne 0; ok has "do not have the same blocks" "$err"
done
echo "purify_sparse_test: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
