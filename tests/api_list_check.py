#!/usr/bin/env python3
"""The public functions of include/ovl/*.h, and the table of test_random_api.c.

Lists every function the public headers declare (at file scope: prototypes
and static inline definitions) and every variable they declare extern, and
checks that

  - every declared function that is not static inline is exported by the
    shared library (`nm -D --defined-only`: a 'T' symbol);
  - the shared library exports nothing else: every name it defines is a
    declared function or variable (the rest is hidden by src/libovl.map);
  - the table of tests/test_random_api.c names every declared function
    exactly once (DRIVE(name, ...) or EXEMPT(name, "reason")), and nothing
    else: a function added to a header without a random-argument driver, or
    a stated reason for none, fails this check.

usage: api_list_check.py INCLUDE_DIR LIBOVL_SO TEST_SOURCE [TABLE...] [--list]
       api_list_check.py INCLUDE_DIR LIBOVL_SO --exports   (the two export checks only:
                                                          an installed library and its headers)
"""
import os
import re
import subprocess
import sys


def declared(incdir):
    names, inline, data = set(), set(), set()
    for h in sorted(os.listdir(incdir)):
        if not h.endswith(".h"):
            continue
        src = open(os.path.join(incdir, h)).read()
        src = re.sub(r"/\*.*?\*/", " ", src, flags=re.S)
        src = re.sub(r"//[^\n]*", " ", src)
        src = re.sub(r"^\s*#(?:[^\n]*\\\n)*[^\n]*", " ", src, flags=re.M)
        src = re.sub(r'extern\s*"C"\s*\{', " ", src)  # C++ linkage blocks: their closing brace is ignored below
        depth, top = 0, []
        for ch in src:  # keep only what lies at brace depth 0 (and struct bodies out)
            if ch == "{":
                depth += 1
                top.append(" ; ")
            elif ch == "}":
                depth = max(0, depth - 1)
                top.append(" ; ")
            elif depth == 0:
                top.append(ch)
        for stmt in "".join(top).split(";"):
            m = re.search(r"[\w\*]\s*\*?\s*\b(ovl_\w+)\s*\(", stmt)
            if m and not re.match(r"\s*typedef\b", stmt):
                names.add(m.group(1))
                if re.search(r"\bstatic\b", stmt[:m.start()] + " "):
                    inline.add(m.group(1))
            m = re.match(r"\s*extern\b[^(]*?\b(ovl_\w+)\s*(?:\[[^\]]*\])?\s*$", stmt)
            if m:
                data.add(m.group(1))
    return names, inline, data


def main():
    incdir, lib, test = sys.argv[1:4]
    names, inline, data = declared(incdir)
    if "--list" in sys.argv:
        print("\n".join(sorted(names)))
        return 0
    nm = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True, text=True, check=True).stdout
    syms = [l.split() for l in nm.splitlines() if len(l.split()) == 3]
    exported = {s[2] for s in syms if s[1] == "T"}
    fails = []
    for n in sorted(names - inline - exported):
        fails.append("%s is declared but not exported by %s" % (n, os.path.basename(lib)))
    for n in sorted({s[2] for s in syms} - (names - inline) - data):
        fails.append("%s is exported by %s but no public header declares it (hide it: src/libovl.map)" %
                     (n, os.path.basename(lib)))
    if sys.argv[3] == "--exports":
        print("%s exports %d names: %d functions and %d variables of the public headers" %
              (os.path.basename(lib), len(syms), len(names - inline), len(data)))
        for f in fails:
            print("FAIL: " + f)
        return 1 if fails else 0
    text = "".join(open(f).read() for f in sys.argv[3:] if f != "--list")
    table = re.findall(r"^\s*(?:DRIVE|EXEMPT)\((ovl_\w+)\s*,", text, re.M)
    for n in sorted(set(table) - names):
        fails.append("%s is in the table of %s but no public header declares it" % (n, os.path.basename(test)))
    for n in sorted(names - set(table)):
        fails.append("%s has no entry in the table of %s (DRIVE or EXEMPT)" % (n, os.path.basename(test)))
    for n in sorted({n for n in table if table.count(n) > 1}):
        fails.append("%s appears more than once in the table" % n)
    drive = len(re.findall(r"^\s*DRIVE\(ovl_", text, re.M))
    print("public functions: %d declared (%d static inline), %d in the table: %d driven, %d exempt" %
          (len(names), len(inline), len(table), drive, len(table) - drive))
    for f in fails:
        print("FAIL: " + f)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
