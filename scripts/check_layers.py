#!/usr/bin/env python3
"""Layer check over the #include lines of the C sources.

Every folder of src/ is a layer (core, comm, grid, dist, kernels, model,
purify, ...). A layer's public header is include/ovl/<name>.h; a header that
lives in src/<layer>/ is private to that layer. The rules:

  (a) the layers of src/ do not include each other in a circle;
  (b) a file of src/<layer>/ includes no private header of another layer;
  (c) nothing outside src/ (tools, tests, bench, smpi, examples, fuzz)
      includes a private header, except the white-box tests and fuzzers
      listed in WHITEBOX with their reason;
  (d) a public header (include/ovl/) includes no private header;
  (e) src/ and include/ovl/ include nothing from the other folders.

The layer order is derived from the includes. Exit status 0 when every rule
holds, 1 with one line per violation (file:line: rule: what) otherwise.

usage: check_layers.py [--root DIR] [--print]
"""
import argparse
import os
import re
import sys

SCAN = ["src", "include/ovl", "tools", "bench", "smpi", "examples", "tests", "fuzz"]
OUTSIDE = ["tools", "bench", "smpi", "examples", "tests", "fuzz"]
EXTS = (".c", ".h")

# Files outside src/ allowed to include a private header, with the reason.
WHITEBOX = {
    "tests/test_pdgemm.c": "white-box test of the block-cyclic exchanges under ovl_pdgemm (kernels/bcyclic.h)",
    "fuzz/fuzz_mtx.c": "fuzzes the private Matrix Market parser (dist/io_util.h) without MPI",
    "fuzz/fuzz_sidecar.c": "fuzzes the private JSON sidecar parser (dist/io_util.h) without MPI",
}

# Public headers whose layer is neither a folder of src/ of the same name nor
# the folder holding src/<layer>/<name>.c. None: an umbrella header that
# stands for the headers it includes.
HEADER_OWNER = {"ovl.h": None, "ssc.h": "kernels", "err.h": "schema", "algo.h": None}

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


def find_violations(tree):
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
            if top == "src" and mine and priv and priv != mine:
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


def main(argv=None):
    ap = argparse.ArgumentParser(description="Check the include layering of the C sources.")
    ap.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."),
                    help="repository root (default: the parent of scripts/)")
    ap.add_argument("--print", dest="show", action="store_true", help="print the layer order and dependencies found")
    args = ap.parse_args(argv)
    tree = Tree(args.root)
    bad, edges = find_violations(tree)
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
    if args.show:
        order = layer_order(nodes, succ)
        if order:
            print("layer order (lowest first):")
            for l in order:
                deps = sorted(succ.get(l, []))
                print("  %-10s includes %s" % (l, ", ".join(deps) if deps else "(nothing)"))
        else:
            print("layer order: none (circle)")
    for b in bad:
        print(b)
    if bad:
        print("check_layers: %d violation(s) in %d files" % (len(bad), len(tree.files)), file=sys.stderr)
        return 1
    print("check_layers: ok (%d files, %d layers)" % (len(tree.files), len(nodes)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
