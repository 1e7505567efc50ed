#!/usr/bin/env python3
"""Self-test of scripts/check_layers.py: small trees with one deliberate
fault each must fail for that reason (and only that one); a clean tree passes
and prints its layer order.

usage: check_layers_test.py <path of check_layers.py>
"""
import os
import subprocess
import sys
import tempfile

SCRIPT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "scripts",
                                                             "check_layers.py")
failures = 0


def check(cond, what):
    global failures
    if not cond:
        failures += 1
        print("FAIL:", what)


def write(root, path, text):
    p = os.path.join(root, path)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    with open(p, "w") as f:
        f.write(text)


def base_tree(root):
    """core <- comm <- dmat, a public header per layer, a private header in dmat."""
    write(root, "include/ovl/core.h", "#include <stdint.h>\n")
    write(root, "include/ovl/comm.h", '#include "ovl/core.h"\n')
    write(root, "include/ovl/dmat.h", '#include "ovl/comm.h"\n#include "ovl/core.h"\n')
    write(root, "include/ovl/ovl.h", '#include "ovl/dmat.h"\n')
    write(root, "include/ovl/trace.h", '#include "ovl/core.h"\n')  # owned by core through src/core/trace.c
    write(root, "src/core/err.c", '#include "ovl/core.h"\n')
    write(root, "src/core/trace.c", '#include "ovl/trace.h"\n')
    write(root, "src/comm/coll.c", '#include "ovl/comm.h"\n#include "ovl/trace.h"\n')
    write(root, "src/dmat/dmat_impl.h", '#include "ovl/dmat.h"\n')
    write(root, "src/dmat/dmat.c", '#include "dmat/dmat_impl.h"\n')
    write(root, "tools/cli.h", '#include "ovl/ovl.h"\n')
    write(root, "tools/main.c", '#include "cli.h"\n')
    write(root, "tests/test_x.c", '#include "ovl/ovl.h"\n')


def run(root, *extra):
    p = subprocess.run([sys.executable, SCRIPT, "--root", root] + list(extra), stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, universal_newlines=True)
    return p.returncode, p.stdout


ORDER = "core,comm,dmat"


def case(name, mutate, expect_rc, expect=(), reject=(), args=("--order", ORDER)):
    with tempfile.TemporaryDirectory() as root:
        base_tree(root)
        mutate(root)
        rc, out = run(root, "--print", *args)
        check(rc == expect_rc, "%s: exit %d, expected %d; output:\n%s" % (name, rc, expect_rc, out))
        for e in expect:
            check(e in out, "%s: output lacks %r; output:\n%s" % (name, e, out))
        for r in reject:
            check(r not in out, "%s: output has %r; output:\n%s" % (name, r, out))
        return out


# a clean tree passes and prints the order it derived
out = case("clean", lambda r: None, 0, ["check_layers: ok", "layer order (lowest first"], ["rule ("])
order = [l.split()[0] for l in out.splitlines() if l.startswith("  ")]
check(order == ["core", "comm", "dmat"], "clean: order %s, expected core, comm, dmat" % order)

# (a) a circle through a public header: core includes dmat's public header
case("circle", lambda r: write(r, "src/core/bad.c", '#include "ovl/dmat.h"\n'), 1,
     ["rule (a)", "circle", "core -> dmat", "src/core/bad.c:1 includes \"ovl/dmat.h\""], ["rule (b)"])

# (a) a circle through a public header of one layer including another's
case("header circle", lambda r: write(r, "include/ovl/core.h", '#include "ovl/comm.h"\n'), 1,
     ["rule (a)", "comm -> core -> comm", "include/ovl/core.h:1"])

# (b) comm reads dmat's private header
case("private", lambda r: write(r, "src/comm/peek.c", '\n#include "dmat/dmat_impl.h"\n'), 1,
     ["src/comm/peek.c:2: rule (b)", "'dmat'"])

# (c) a tool reads a private header
case("outside", lambda r: write(r, "tools/peek.c", '#include "dmat/dmat_impl.h"\n'), 1,
     ["tools/peek.c:1: rule (c)"], ["rule (a)", "rule (b)"])

# (d) a public header reads a private header
case("public", lambda r: write(r, "include/ovl/comm.h", '#include "ovl/core.h"\n#include "dmat/dmat_impl.h"\n'), 1,
     ["include/ovl/comm.h:2: rule (d)"])

# (e) the library reads a header of the tools
case("library reads tools", lambda r: write(r, "src/dmat/io.c", '#include "../../tools/cli.h"\n'), 1,
     ["src/dmat/io.c:1: rule (e)"])

# (f) an include that goes up the stated order, without a circle
def grid(r):
    write(r, "include/ovl/grid.h", '#include "ovl/core.h"\n')
    write(r, "src/grid/grid.c", '#include "ovl/grid.h"\n')


case("upward", lambda r: (grid(r), write(r, "src/comm/x.c", '#include "ovl/grid.h"\n')), 1,
     ["rule (f): comm includes grid, which ORDER puts above it: src/comm/x.c:1"], ["rule (a)"],
     args=("--order", "core,comm,grid,dmat"))
case("downward", lambda r: (grid(r), write(r, "src/comm/x.c", '#include "ovl/grid.h"\n')), 0, ["check_layers: ok"],
     args=("--order", "core,grid,comm,dmat"))

# (f) a room the order does not name, and a name with no room
case("room not in order", grid, 1, ["rule (f): src/grid/ is not in ORDER"])
case("order names no room", lambda r: None, 1, ["rule (f): ORDER names 'ghost'"],
     args=("--order", ORDER + ",ghost"))

# (b) a private header offered to the rooms above (SHARED) may be included
# there, and only when it is listed
def entry(r):
    write(r, "src/entry/e.c", '#include "dmat/dmat_impl.h"\n')


case("shared", entry, 0, ["check_layers: ok"], ["rule ("],
     args=("--order", ORDER + ",entry", "--shared", "src/dmat/dmat_impl.h"))
case("not shared", entry, 1, ["src/entry/e.c:1: rule (b)"], args=("--order", ORDER + ",entry", "--shared", ""))
# a shared header still goes down only: below its room it is an upward include
case("shared upward", lambda r: write(r, "src/comm/peek.c", '#include "dmat/dmat_impl.h"\n'), 1,
     ["rule (f): comm includes dmat"], args=("--order", "core,comm,dmat", "--shared", "src/dmat/dmat_impl.h"))

# a public header with no layer to own it is an error, not a silent pass
case("unowned header", lambda r: write(r, "include/ovl/mystery.h", '#include "ovl/core.h"\n'), 1,
     ["cannot tell which layer owns include/ovl/mystery.h"])

# the real tree passes
rc, out = subprocess.run([sys.executable, SCRIPT, "--print"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         universal_newlines=True).returncode, None
check(rc == 0, "the repository itself fails the layer check (run scripts/check_layers.py)")

if failures:
    print("check_layers_test: %d failure(s)" % failures)
    sys.exit(1)
print("check_layers_test: ok")
