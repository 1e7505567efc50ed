#!/usr/bin/env bash
# The emulated cluster end to end: 4 network namespaces ("nodes") on a bridge,
# 1 Gbit/s tbf links, 2 ranks per node (shared memory inside a node, TCP
# between nodes), tiny sizes: hostnames, node detection, gemm --check,
# purify --check (Algorithms 4 and 5) on the shipped water Fock matrix, and
# bytes really crossing the links. Skips (exit 77) when not root, when the
# machine cannot make namespaces, veth, bridges or tbf, or without Open MPI.
# Its cluster has a name of its own (ovlt<pid>), so a cluster a user has up
# is left alone, and it is removed on every exit.
# usage: cluster_test.sh OVL DATA_DIR [MPIEXEC]
set -u
OVL=$1; DATA=$2; MPIEXEC=${3:-}
here=$(cd "$(dirname "$0")" && pwd)
CL=$here/../cluster/ovl-cluster
skip() { echo "SKIP: emulated cluster test: $*"; exit 77; }

[ "$(id -u)" -eq 0 ] || skip "needs root (network namespaces, veth, tc)"
for c in ip tc unshare; do command -v "$c" >/dev/null 2>&1 || skip "'$c' not found (Debian packages: scripts/deps.d/cluster.txt)"; done
if [ -n "$MPIEXEC" ]; then
  "$MPIEXEC" --version 2>/dev/null | grep -q "Open MPI\|OpenRTE" || skip "needs Open MPI's launcher ($MPIEXEC is not; the cluster runs over Open MPI's TCP BTL)"
  export MPIEXEC
fi
if ! out=$("$CL" check 2>&1); then skip "the kernel lacks a feature: $(grep -E 'NO|not' <<<"$out" | tr '\n' ' ')"; fi

# clusters of earlier runs of this test that were killed (ctest's timeout sends
# SIGKILL, which no trap sees): their pid is gone, remove them
for ns in /run/netns/ovlt*-n0; do
  [ -e "$ns" ] || continue
  old=${ns##*/ovlt}; old=${old%-n0}
  [[ $old =~ ^[0-9]+$ ]] && ! kill -0 "$old" 2>/dev/null &&
    OVL_CLUSTER_STATE=${TMPDIR:-/tmp}/ovl-cluster-test.$old "$CL" --prefix "ovlt$old" down >/dev/null 2>&1
done

export OVL_CLUSTER_PREFIX=ovlt$$
export OVL_CLUSTER_STATE=${TMPDIR:-/tmp}/ovl-cluster-test.$$
export OVL=$OVL
tmp=$(mktemp -d)
cleanup() { "$CL" down >/dev/null 2>&1; rm -rf "$tmp" "$OVL_CLUSTER_STATE"; }
trap cleanup EXIT
trap 'exit 130' INT TERM

pass=0; fail=0
ok() { if "$@"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $name"; tail -15 "$tmp/out"; fi; }
has() { grep -q -- "$1" "$tmp/out"; }
run() { timeout 40 "$CL" run --timeout 35 "$@" >"$tmp/out" 2>&1; rc=$?; }
txbytes() { ip -n "$OVL_CLUSTER_PREFIX-n$1" -s link show ovl0 | awk '/TX:/ { getline; print $1 }'; }

name="up"; "$CL" up 4 --rate 1gbit --ppn 2 >"$tmp/out" 2>&1; rc=$?
ok test "$rc" -eq 0
[ "$rc" -eq 0 ] || exit 1
name="up again (idempotent)"; "$CL" up 4 --rate 1gbit --ppn 2 >"$tmp/out" 2>&1; ok test $? -eq 0

name="hostnames"; run -- hostname
ok test "$rc" -eq 0
ok test "$(sort -u "$tmp/out" | grep -c "^$OVL_CLUSTER_PREFIX-n[0-3]$")" -eq 4
ok test "$(grep -c "^$OVL_CLUSTER_PREFIX-n" "$tmp/out")" -eq 8

tx0=$(txbytes 1)
name="gemm --check, 8 ranks on 4 nodes"; run -- ovl gemm -n 192 -b 32 --algo summa --lookahead --check
ok test "$rc" -eq 0; ok has PASS
name="bytes crossed node 1's link"; tx1=$(txbytes 1)
ok test $((tx1 - tx0)) -gt 100000

for alg in alg4 alg5; do
  name="purify $alg --check, 8 ranks on 4 nodes"
  run -- ovl purify --fock "$DATA/water_ccpvdz/fock.raw" --algo "$alg" --ndup 3 --check -q
  ok test "$rc" -eq 0; ok has PASS
done

name="bench coll sees 4 nodes x 2 ppn"; run -- ovl bench coll --op bcast -m 8:4096 -i 2 -x 1 --cache-bytes 0
ok test "$rc" -eq 0; ok has "4 nodes x 2 ppn"

name="down"; "$CL" down >"$tmp/out" 2>&1; ok test $? -eq 0
ok test ! -e "/run/netns/$OVL_CLUSTER_PREFIX-n0"

echo "cluster test: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
