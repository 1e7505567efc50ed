#!/usr/bin/env python3
"""Layer check over the #include lines of the C sources.

Every folder of src/ is a layer, a room of the house (ORDER below lists them,
lowest first). A layer's public header is include/ovl/<name>.h; a header that
lives in src/<layer>/ is private to that layer. The rules:

  (a) the layers of src/ do not include each other in a circle;
  (b) a file of src/<layer>/ includes no private header of another layer,
      except the few internal headers a room offers to the rooms above it,
      listed in SHARED with their reason (never installed);
  (c) nothing outside src/ (tools, tests, bench, smpi, examples, fuzz)
      includes a private header, except the white-box tests and fuzzers
      listed in WHITEBOX with their reason;
  (d) a public header (include/ovl/) includes no private header;
  (e) src/ and include/ovl/ include nothing from the other folders;
  (f) the order is stated: ORDER names every folder of src/ and nothing
      else, and every include goes down it (a layer includes only layers
      listed before it).

The order derived from the includes (--print) must agree with ORDER. Exit
status 0 when every rule holds, 1 with one line per violation (file:line:
rule: what) otherwise.

usage: check_layers.py [--root DIR] [--print] [--order a,b,...] [--shared PATH,...]
  (--order and --shared replace ORDER and SHARED: for checking another tree)
"""
import argparse
import os
import re
import sys

SCAN = ["src", "include/ovl", "tools", "bench", "smpi", "examples", "tests", "fuzz"]
OUTSIDE = ["tools", "bench", "smpi", "examples", "tests", "fuzz"]
EXTS = (".c", ".h")

# The rooms of src/, lowest first: a room includes only rooms above it in
# this list. One line per room; a new room is a new line at its place.
ORDER = [
    "schema",   # the plan schema (no MPI): error codes, names, the knob table, the plan, its printer and parser
    "core",     # errors, memory, options, JSON, records, traces, files
    "comm",     # collectives, lanes, pipelines, requests, the active set
    "grid",     # 2D and 3D process grids and their shapes
    "dmat",     # the distributed matrix: layout, exchanges (block-cyclic too), files
    "node",     # probes of the node: cores, BLAS threads, memory, the local dgemm rate
    "kernels",  # SUMMA, HSUMMA, Cannon, 3D, 2.5D, SymmSquareCube, matvec, verification
    "sparse",   # the block-sparse distributed matrix: layout, conversion, operations, files, filtered product
    "model",    # cost models, the machine description, the tune database
    "plan",     # the planner: a complete plan from constraints
    "bench",    # every instrument: micro-benchmarks, the gemm timing engine, the tuner
    "purify",   # density-matrix purification (the algorithm)
    "entry",    # one-call entries: dense gemm/purify, pdgemm, pdpurify, purify options and jobs
]

# Private headers a room offers to the rooms above it (rule (b)), with the
# reason. They stay in src/ and are not installed.
SHARED = {
    "src/dmat/bcyclic.h": "the exchange with ScaLAPACK's block-cyclic layout, for ovl_pdgemm (entry) and the SUMMA"
    " on that layout (kernels)",
    "src/kernels/bcsumma.h": "SUMMA on ScaLAPACK's block-cyclic layout, for ovl_pdgemm (entry)",
    "src/sparse/bsmul3.h": "the 2.5D block-sparse product with its errors agreed over the 3D grid's active ranks, for"
    " the 2.5D purification (purify), whose iterations run on those ranks only",
}

# Files outside src/ allowed to include a private header, with the reason.
WHITEBOX = {
    "tests/test_pdgemm.c": "white-box test of the block-cyclic exchanges under ovl_pdgemm (dmat/bcyclic.h)",
    "tests/test_bsmul.c": "its timing mode builds a large banded block-sparse matrix in place (sparse/sparse_impl.h),"
    " which no dense matrix could hold",
    "fuzz/fuzz_mtx.c": "fuzzes the private Matrix Market parser (dmat/io_util.h) without MPI",
    "fuzz/fuzz_sidecar.c": "fuzzes the private JSON sidecar parser (dmat/io_util.h) without MPI",
}

# Public headers whose layer is neither a folder of src/ of the same name nor
# the folder holding src/<layer>/<name>.c. None: an umbrella header that
# stands for the headers it includes.
HEADER_OWNER = {"ovl.h": None, "dist.h": None, "algo.h": None, "ssc.h": "kernels", "err.h": "schema", "dm.h": "entry"}

INCLUDE_RE = re.compile(r'^\s*#\s*include\s*(?:"([^"]+)"|<(ovl/[^>]+)>)')


def rel(root, path):
    return os.path.relpath(path, root).replace(os.sep, "/")


class Tree:
    def __init__(self, root):
        self.root = os.path.abspath(root)
        src = os.path.join(self.root, "src")
        self.layers = sorted(d for d in os.listdir(src) if os.path.isdir(os.path.join(src, d))) if os.path.isdir(src) else []
        self.files = []
        for top in SCAN:
            base = os.path.join(self.root, top)
            for dirpath, dirnames, filenames in os.walk(base):
                dirnames.sort()
                for f in sorted(filenames):
                    if f.endswith(EXTS):
                        self.files.append(rel(self.root, os.path.join(dirpath, f)))
        self.includes = {f: self._read(f) for f in self.files}
        self._owner_cache = {}

    def _read(self, f):
        out = []
        with open(os.path.join(self.root, f), encoding="utf-8", errors="replace") as fh:
            for lineno, line in enumerate(fh, 1):
                m = INCLUDE_RE.match(line)
                if m:
                    name = m.group(1) or m.group(2)
                    out.append((lineno, name, self.resolve(f, name, m.group(1) is not None)))
        return out

    def resolve(self, f, name, quoted):
        """Repository path of an include, or None for a system header."""
        cands = []
        if quoted:
            cands.append(os.path.join(os.path.dirname(f), name))
        cands += [os.path.join("include", name), os.path.join("src", name)]
        for c in cands:
            p = os.path.normpath(os.path.join(self.root, c))
            if os.path.isfile(p):
                return rel(self.root, p)
        return None

    @staticmethod
    def private_layer(path):
        """The layer whose private header path is, or None."""
        parts = path.split("/")
        if len(parts) == 3 and parts[0] == "src" and parts[2].endswith(".h"):
            return parts[1]
        return None

    def public_owner(self, path):
        """Layer owning a public header include/ovl/<x>.h (None: umbrella)."""
        if path in self._owner_cache:
            return self._owner_cache[path]
        base = path.split("/")[-1]
        stem = base[:-2]
        if base in HEADER_OWNER:
            owner = HEADER_OWNER[base]
        elif stem in self.layers:
            owner = stem
        else:
            holders = [l for l in self.layers if os.path.isfile(os.path.join(self.root, "src", l, stem + ".c"))]
            if len(holders) != 1:
                raise SystemExit(
                    "check_layers: cannot tell which layer owns %s (no src/%s/ and %s src/*/%s.c); add it to HEADER_OWNER"
                    % (path, stem, "no" if not holders else "several", stem))
            owner = holders[0]
        self._owner_cache[path] = owner
        return owner

    def layer_of(self, f):
        """Layer of a file of src/ or include/ovl/, else None."""
        parts = f.split("/")
        if parts[0] == "src" and len(parts) >= 3 and parts[1] in self.layers:
            return parts[1]
        if f.startswith("include/ovl/"):
            return self.public_owner(f)
        return None

    def target_layers(self, path, seen=None):
        """Layers a file depends on by including path."""
        lay = self.private_layer(path)
        if lay:
            return {lay}
        if path.startswith("include/ovl/"):
            owner = self.public_owner(path)
            if owner is not None:
                return {owner}
            seen = seen or set()
            if path in seen:
                return set()
            seen.add(path)
            out = set()
            for _, _, t in self.includes.get(path, []):
                if t:
                    out |= self.target_layers(t, seen)
            return out
        return set()


def find_violations(tree, shared=None):
    shared = SHARED if shared is None else shared
    bad = []
    edges = {}  # (from, to) -> first witness "file:line includes name"
    for f in tree.files:
        top = f.split("/")[0]
        mine = tree.layer_of(f)
        for lineno, name, target in tree.includes[f]:
            if target is None:
                continue
            where = "%s:%d" % (f, lineno)
            priv = tree.private_layer(target)
            if top == "src" and mine and priv and priv != mine and target not in shared:
                bad.append("%s: rule (b): includes \"%s\", a private header of layer '%s'; use its public header"
                           " (include/ovl/) instead" % (where, name, priv))
            if f.startswith("include/") and priv:
                bad.append("%s: rule (d): public header includes \"%s\", a private header of layer '%s'"
                           % (where, name, priv))
            if top in OUTSIDE and priv and f not in WHITEBOX:
                bad.append("%s: rule (c): includes \"%s\", a private header of layer '%s'; outside src/ use the public"
                           " headers (or list a white-box test in WHITEBOX with its reason)" % (where, name, priv))
            if top in ("src", "include") and target.split("/")[0] not in ("src", "include"):
                bad.append("%s: rule (e): the library includes \"%s\" from %s/" % (where, name, target.split("/")[0]))
            if mine is not None:
                for t in sorted(tree.target_layers(target)):
                    if t != mine and (mine, t) not in edges:
                        edges[(mine, t)] = "%s includes \"%s\"" % (where, name)
    for f in WHITEBOX:
        if f in tree.includes and not any(tree.private_layer(t or "") for _, _, t in tree.includes[f]):
            bad.append("%s: WHITEBOX lists it but it includes no private header: remove it from the list" % f)
    return bad, edges


def sccs(nodes, succ):
    """Strongly connected components (Tarjan), each a sorted list."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in succ.get(v, []):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(sorted(comp))

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def one_circle(comp, succ):
    """A circle through the first node of a strongly connected component."""
    start, members = comp[0], set(comp)
    prev, frontier = {start: None}, [start]
    while frontier:  # breadth first: the shortest way back to start
        nxt = []
        for v in frontier:
            for w in sorted(succ.get(v, [])):
                if w == start:
                    path = [v]
                    while prev[path[-1]] is not None:
                        path.append(prev[path[-1]])
                    return list(reversed(path)) + [start]
                if w in members and w not in prev:
                    prev[w] = v
                    nxt.append(w)
        frontier = nxt
    return comp + [start]


def layer_order(layers, succ):
    """Layers lowest first (each after everything it includes); ties by name."""
    done, order = set(), []
    while len(order) < len(layers):
        ready = [l for l in sorted(layers) if l not in done and all(d in done for d in succ.get(l, []))]
        if not ready:
            return None
        for l in ready:
            done.add(l)
            order.append(l)
    return order


def order_violations(layers, order, edges):
    """Rule (f): ORDER names the layers of src/, and every include goes down it."""
    bad = []
    for l in sorted(set(layers) - set(order)):
        bad.append("rule (f): src/%s/ is not in ORDER (scripts/check_layers.py): add its line at its place" % l)
    for l in order:
        if l not in layers:
            bad.append("rule (f): ORDER names '%s', which is not a folder of src/: remove its line" % l)
    if len(set(order)) != len(order):
        bad.append("rule (f): ORDER names a layer twice: %s" % ", ".join(order))
    rank = {l: i for i, l in enumerate(order)}
    for (a, b) in sorted(edges):
        if a in rank and b in rank and rank[b] > rank[a]:
            bad.append("rule (f): %s includes %s, which ORDER puts above it: %s" % (a, b, edges[(a, b)]))
    return bad


def main(argv=None):
    ap = argparse.ArgumentParser(description="Check the include layering of the C sources.")
    ap.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."),
                    help="repository root (default: the parent of scripts/)")
    ap.add_argument("--print", dest="show", action="store_true", help="print the layer order and dependencies found")
    ap.add_argument("--order", help="the layers lowest first, comma-separated (default: ORDER)")
    ap.add_argument("--shared", help="private headers offered to higher layers, comma-separated (default: SHARED)")
    args = ap.parse_args(argv)
    order = args.order.split(",") if args.order is not None else ORDER
    shared = set(x for x in args.shared.split(",") if x) if args.shared is not None else set(SHARED)
    tree = Tree(args.root)
    bad, edges = find_violations(tree, shared)
    succ = {}
    for (a, b) in edges:
        succ.setdefault(a, []).append(b)
    nodes = set(tree.layers) | {a for a, _ in edges} | {b for _, b in edges}
    for comp in sccs(nodes, succ):
        if len(comp) < 2:
            continue
        circle = one_circle(comp, succ)
        steps = ["  %s -> %s: %s" % (a, b, edges[(a, b)]) for a, b in zip(circle, circle[1:])]
        bad.append("rule (a): the layers %s include each other in a circle: %s\n%s"
                   % (", ".join(comp), " -> ".join(circle), "\n".join(steps)))
    bad += order_violations(tree.layers, order, edges)
    if args.show:
        if layer_order(nodes, succ):
            print("layer order (lowest first, as ORDER states it):")
            for l in [l for l in order if l in nodes] + sorted(nodes - set(order)):
                deps = sorted(succ.get(l, []), key=lambda d: (order.index(d) if d in order else len(order), d))
                print("  %-10s includes %s" % (l, ", ".join(deps) if deps else "(nothing)"))
        else:
            print("layer order: none (circle)")
    for b in bad:
        print(b)
    if bad:
        print("check_layers: %d violation(s) in %d files" % (len(bad), len(tree.files)), file=sys.stderr)
        return 1
    print("check_layers: ok (%d files, %d layers: %s)" % (len(tree.files), len(nodes), " < ".join(order)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
