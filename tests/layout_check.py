#!/usr/bin/env python3
"""The hand-kept mirrors of the C headers, checked against the C compiler.

The Fortran module (fortran/ovl_mod.f90) copies constants (integer and real
`parameter`s named OVL_*) and structs (`type, bind(C)`, named as the C
typedef); the Python package (python/ovl/_lib.py) copies structs as
ctypes.Structure classes (the C typedef: the class's `_c_struct_` string if
it has one, else its name in snake case with ovl_ in front: DenseInfo ->
ovl_dense_info). A copy that drifts from the header reads the wrong bytes
without any error, so this check compares, for every mirrored struct, the
field names in order, each field's offset, size and kind (integer, floating,
other) and the struct's size, and for every constant its value:

  gen      writes layout_c.c, a C program that prints what the C compiler
           makes of the constants and of the structs (their fields from the
           headers' definitions), and layout_f.f90, a Fortran program that
           prints what the Fortran compiler makes of the module's copies
           (c_sizeof, c_loc); the build compiles both;
  compare  runs them, lays the Python classes out with ctypes (the classes
           are read from _lib.py's source: no import, no MPI, no libovl.so)
           and prints every difference (exit status 1), or one line per
           mirror checked.

usage: layout_check.py gen --include DIR --out DIR [--fortran MOD.f90] [--python _lib.py|PACKAGE_DIR ...]
       layout_check.py compare --c LAYOUT_C [--f LAYOUT_F] [--python _lib.py|PACKAGE_DIR ...]
(--python repeatable; a package directory stands for every module in it)
"""
import argparse
import ast
import ctypes
import os
import re
import subprocess
import sys


# ---- the C headers -------------------------------------------------------
def strip_c(src):
    src = re.sub(r"/\*.*?\*/", " ", src, flags=re.S)
    return re.sub(r"//[^\n]*", " ", src)


def c_structs(incdir):
    """{typedef name: [field names]} of every `typedef struct X {...} X;` in the headers."""
    out, text = {}, ""
    for h in sorted(os.listdir(incdir)):
        if h.endswith(".h"):
            text += strip_c(open(os.path.join(incdir, h)).read()) + "\n"
    for m in re.finditer(r"typedef\s+struct\s+\w*\s*\{([^{}]*)\}\s*(\w+)\s*;", text):
        fields = []
        for decl in m.group(1).split(";"):
            decl = decl.strip()
            if not decl:
                continue
            for part in [decl] if "(" in decl else decl.split(","):
                fp = re.search(r"\(\s*\*\s*(\w+)\s*\)", part)  # a function pointer: (*name)(...)
                name = fp.group(1) if fp else re.sub(r"\[[^\]]*\]", "", part).replace("*", " ").split()[-1]
                fields.append(name)
        out[m.group(2)] = fields
    return out, text


def snake(name):
    return "ovl_" + re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


# ---- the Fortran module --------------------------------------------------
def fortran_module(path):
    """(constants [name], types {name: [(field, kind)]}) of the module's public copies."""
    lines, cur = [], ""
    for raw in open(path).read().splitlines():  # free form: comments out, continuations joined
        line = re.sub(r"!.*", "", raw).strip()
        if line.startswith("&"):
            line = line[1:]
        if line.endswith("&"):
            cur += line[:-1] + " "
            continue
        lines.append(cur + line)
        cur = ""
    consts, types, typ = [], {}, None
    for line in lines:
        low = line.lower()
        m = re.match(r"type\s*,\s*bind\s*\(\s*c\s*\)[^:]*::\s*(\w+)", low)
        if m:
            typ = m.group(1)
            types[typ] = []
            continue
        if typ and re.match(r"end\s*type", low):
            typ = None
            continue
        if typ and "::" in line:
            # kinds as C's _Generic sees them: an array (decayed) or a derived type is "other"
            spec, names = line.split("::", 1)
            spec = spec.strip().lower()
            scalar = "f" if spec.startswith("real") else "i" if spec.startswith(("integer", "logical", "character")) else "o"
            if re.search(r"\bdimension\b", spec):
                scalar = "o"
            for name in re.sub(r"\([^)]*\)", "", names).split(","):
                arr = re.search(r"\b%s\s*\(" % re.escape(name.strip()), names)
                types[typ].append((name.strip(), "o" if arr else scalar))
            continue
        if not typ and "parameter" in low and "::" in line:
            for m in re.finditer(r"\b(OVL_\w+)\s*=\s*[-+]?[\d.]", line.split("::", 1)[1], re.I):
                consts.append(m.group(1))
    return consts, types


# ---- the Python package --------------------------------------------------
def python_structs(path):
    """[(class name, C typedef name, ctypes class)] of the Structure classes of _lib.py (or of every module of
    the package directory path: no mirror escapes the check), built from their source."""
    if os.path.isdir(path):
        return [s for f in sorted(os.listdir(path)) if f.endswith(".py")
                for s in python_structs(os.path.join(path, f))]
    tree = ast.parse(open(path).read(), path)
    ns, out = {"ctypes": ctypes}, []
    for node in tree.body:
        if isinstance(node, ast.Assign):  # module constants a _fields_ may use (what fails to evaluate is not one)
            try:
                exec(compile(ast.Module([node], []), path, "exec"), ns)
            except Exception:
                pass
        if not isinstance(node, ast.ClassDef):
            continue
        if not any(ast.unparse(b) in ("ctypes.Structure", "Structure") for b in node.bases):
            continue
        attrs = {}
        for st in node.body:
            if isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name):
                if st.targets[0].id in ("_fields_", "_pack_", "_c_struct_"):
                    attrs[st.targets[0].id] = eval(compile(ast.Expression(st.value), path, "eval"), ns)
        cname = attrs.pop("_c_struct_", snake(node.name))
        cls = type(node.name, (ctypes.Structure,), attrs)
        ns[node.name] = cls
        out.append((node.name, cname, cls))
    return out


def ctypes_kind(t):
    if t in (ctypes.c_float, ctypes.c_double, ctypes.c_longdouble):
        return "f"
    if issubclass(t, (ctypes.Array, ctypes.Structure, ctypes.Union, ctypes._Pointer)) or t in (
            ctypes.c_char_p, ctypes.c_void_p, ctypes.c_wchar_p):
        return "o"
    return "i"


# ---- gen -----------------------------------------------------------------
C_KIND = ("_Generic((x), float: 'f', double: 'f', long double: 'f', _Bool: 'i', char: 'i', signed char: 'i', "
          "unsigned char: 'i', short: 'i', unsigned short: 'i', int: 'i', unsigned: 'i', long: 'i', "
          "unsigned long: 'i', long long: 'i', unsigned long long: 'i', default: 'o')")


def gen(args):
    structs, ctext = c_structs(args.include)
    consts, ftypes = fortran_module(args.fortran) if args.fortran else ([], {})
    pys = [x for path in args.python or [] for x in python_structs(path)]
    want = sorted(set(ftypes) | {c for _, c, _ in pys})
    c = ["/* Generated by tests/layout_check.py gen: the C compiler's view of what", " * "
         "fortran/ovl_mod.f90 and python/ovl/_lib.py copy. */",
         "#include <ovl/ovl.h>", "#include <stddef.h>", "#include <stdio.h>", "",
         "#define KIND(x) %s" % C_KIND, "", "int main(void) {"]
    for k in consts:
        if re.search(r"\b%s\b" % k, ctext):
            c.append('  printf("const %s %%.17g\\n", (double)(%s));' % (k, k))
    for s in want:
        if s not in structs:
            continue
        c.append('  printf("size %s %%zu\\n", sizeof(%s));' % (s, s))
        for f in structs[s]:
            c.append('  printf("field %s %s %%zu %%zu %%c\\n", offsetof(%s, %s), sizeof(((%s *)0)->%s), KIND(((%s *)0)->%s));' %
                     (s, f, s, f, s, f, s, f))
    c += ["  return 0;", "}", ""]
    os.makedirs(args.out, exist_ok=True)
    write_if_changed(os.path.join(args.out, "layout_c.c"), "\n".join(c))
    if args.fortran:
        f = ["! Generated by tests/layout_check.py gen: the Fortran compiler's view of", "! the copies in fortran/ovl_mod.f90.",
             "program layout_f", "  use, intrinsic :: iso_c_binding", "  use ovl_mod", "  implicit none",
             "  integer(c_intptr_t) :: base"]
        for i, t in enumerate(ftypes):
            f.append("  type(%s), target :: v%d" % (t, i))
        for k in consts:
            f.append("  write (*, '(a, 1x, es26.17e3)') 'const %s', real(%s, c_double)" % (k, k))
        for i, (t, fields) in enumerate(ftypes.items()):
            f.append("  base = transfer(c_loc(v%d), base)" % i)
            f.append("  write (*, '(a, 1x, i0)') 'size %s', c_sizeof(v%d)" % (t, i))
            for name, kind in fields:
                f.append("  write (*, '(a, 2(1x, i0), 1x, a)') 'field %s %s', &" % (t, name))
                f.append("    transfer(c_loc(v%d%%%s), base) - base, c_sizeof(v%d%%%s), '%s'" % (i, name, i, name, kind))
        f += ["end program", ""]
        write_if_changed(os.path.join(args.out, "layout_f.f90"), "\n".join(f))
    return 0


def write_if_changed(path, text):
    if not os.path.exists(path) or open(path).read() != text:
        with open(path, "w") as fh:
            fh.write(text)


# ---- compare -------------------------------------------------------------
def parse(out):
    consts, sizes, fields = {}, {}, {}
    for line in out.splitlines():
        w = line.split()
        if w and w[0] == "const":
            consts[w[1]] = float(w[2])
        elif w and w[0] == "size":
            sizes[w[1]] = int(w[2])
            fields.setdefault(w[1], [])
        elif w and w[0] == "field":
            fields.setdefault(w[1], []).append((w[2], int(w[3]), int(w[4]), w[5]))
    return consts, sizes, fields


def compare_struct(who, name, csize, cfields, size, flds, fails):
    if csize is None:
        fails.append("%s: %s has no C struct of that name in the headers" % (who, name))
        return
    cn, n = [f[0] for f in cfields], [f[0] for f in flds]
    if [x.lower() for x in cn] != [x.lower() for x in n]:
        fails.append("%s: %s has the fields %s, the C struct %s" % (who, name, ", ".join(n), ", ".join(cn)))
        return
    for (fname, off, sz, kind), (_, coff, csz, ckind) in zip(flds, cfields):
        if (off, sz, kind) != (coff, csz, ckind):
            fails.append("%s: %s.%s at offset %d, %d bytes, kind %s; in C at %d, %d bytes, kind %s" %
                         (who, name, fname, off, sz, kind, coff, csz, ckind))
    if size != csize:
        fails.append("%s: %s is %d bytes, the C struct %d" % (who, name, size, csize))


def compare(args):
    cc, csizes, cfields = parse(subprocess.run([args.c], capture_output=True, text=True, check=True).stdout)
    fails, done = [], []
    if args.f:
        fc, fsizes, ffields = parse(subprocess.run([args.f], capture_output=True, text=True, check=True).stdout)
        for k, v in fc.items():
            if k not in cc:
                fails.append("Fortran: %s is in no C header" % k)
            elif cc[k] != v:
                fails.append("Fortran: %s = %.17g, in C %.17g" % (k, v, cc[k]))
        for t in fsizes:
            compare_struct("Fortran", t, csizes.get(t), cfields.get(t, []), fsizes[t], ffields[t], fails)
        done.append("Fortran module: %d constants, %d structs (%s)" % (len(fc), len(fsizes), ", ".join(fsizes)))
    if args.python:
        pys = [x for path in args.python for x in python_structs(path)]
        for cls_name, cname, cls in pys:
            flds = [(n, getattr(cls, n).offset, getattr(cls, n).size, ctypes_kind(t)) for n, t, *_ in cls._fields_]
            compare_struct("Python %s" % cls_name, cname, csizes.get(cname), cfields.get(cname, []), ctypes.sizeof(cls),
                           flds, fails)
        done.append("Python ctypes: %d structs (%s)" % (len(pys), ", ".join("%s = %s, %d bytes" % (
            p[0], p[1], ctypes.sizeof(p[2])) for p in pys)))
    for d in done:
        print("layout: " + d)
    for f in fails:
        print("FAIL: " + f)
    if not done:
        print("FAIL: nothing to check")
        return 1
    print("layout: %s" % ("FAIL" if fails else "PASS"))
    return 1 if fails else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("mode", choices=("gen", "compare"))
    ap.add_argument("--include")
    ap.add_argument("--out")
    ap.add_argument("--fortran")
    ap.add_argument("--python", action="append", help="a module with ctypes mirrors (repeatable)")
    ap.add_argument("--c")
    ap.add_argument("--f")
    args = ap.parse_args()
    return gen(args) if args.mode == "gen" else compare(args)


if __name__ == "__main__":
    sys.exit(main())
