#!/usr/bin/env python3
"""Every link of the documentation, and every docs/ path the repository cites, exists.

Checks, from the repository root ROOT:

  - in every Markdown file (README.md, docs/**/*.md, the other tracked *.md
    outside build directories): each relative link [text](target) names an
    existing file or directory, relative to the Markdown file; a link to a
    Markdown page with #anchor (or a bare #anchor) names one of that page's
    headings (GitHub's anchors: lower case, punctuation dropped, spaces as
    '-', a repeated heading gets -1, -2, ...);
  - in those files and in the sources, scripts, tests and build files
    (src, include, tools, tests, scripts, bench, smpi, cluster, python,
    fortran, examples, scalapack, fuzz, cmake, data, Makefile,
    CMakeLists.txt): each path that starts with docs/ exists under ROOT (a
    pattern such as docs/img/smpi_*.png: some file matches it).

usage: check_docs_links.py [ROOT]     (default: the parent of this script's folder)
       check_docs_links.py --selftest  (a small tree with known breaks: each is found, nothing else)
Prints one line per broken link or path and exits 1 when there is any.
"""
import glob
import os
import re
import sys

SKIP_DIRS = {".git", "node_modules", "__pycache__"}
CODE_DIRS = ["src", "include", "tools", "tests", "scripts", "bench", "smpi", "cluster", "python", "fortran",
             "examples", "scalapack", "fuzz", "cmake", "data", ".ci"]
CODE_FILES = ["Makefile", "CMakeLists.txt", "ovl.pc.in"]
TEXT_EXT = (".c", ".h", ".f90", ".py", ".sh", ".cmake", ".txt", ".in", ".md", ".map", ".json", "")

LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
DOCS_PATH = re.compile(r"(?<![\w/.-])docs/[\w./*-]*[\w/*]")
FENCE = re.compile(r"^\s*(```|~~~)")


def skipped_dir(name):
    return name in SKIP_DIRS or name.startswith("build")


def walk(top):
    for d, dirs, files in os.walk(top):
        dirs[:] = sorted(x for x in dirs if not skipped_dir(x))
        for f in sorted(files):
            yield os.path.join(d, f)


def slug(heading):
    """GitHub's anchor of a heading's text."""
    h = heading.strip().lower()
    h = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", h)  # a link in a heading: its text
    h = re.sub(r"[^\w\- ]", "", h)  # keeps letters, digits, '_', '-', ' '
    return h.replace(" ", "-")


def anchors(path, cache={}):
    if path not in cache:
        seen, out, fenced = {}, set(), False
        for line in open(path, encoding="utf-8"):
            if FENCE.match(line):
                fenced = not fenced
                continue
            m = None if fenced else re.match(r"^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$", line)
            if m:
                s = slug(m.group(1))
                n = seen.get(s, 0)
                seen[s] = n + 1
                out.add(s if n == 0 else "%s-%d" % (s, n))
        cache[path] = out
    return cache[path]


def check_markdown(root, path, errors):
    rel = os.path.relpath(path, root)
    fenced = False
    for no, line in enumerate(open(path, encoding="utf-8"), 1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if fenced:
            continue
        for m in LINK.finditer(re.sub(r"`[^`]*`", "", line)):
            target = m.group(1)
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
                continue
            file_part, _, anchor = target.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) if file_part else path
            if not os.path.exists(dest):
                errors.append("%s:%d: link to %s: no such file" % (rel, no, target))
            elif anchor and dest.endswith(".md") and anchor not in anchors(dest):
                errors.append("%s:%d: link to %s: no heading with that anchor in %s" %
                              (rel, no, target, os.path.relpath(dest, root)))


def check_paths(root, path, errors):
    rel = os.path.relpath(path, root)
    try:
        lines = open(path, encoding="utf-8").read().split("\n")
    except (UnicodeDecodeError, OSError):
        return
    for no, line in enumerate(lines, 1):
        if path.endswith(".md"):  # link targets: checked as links, relative to the page
            line = re.sub(r"\]\([^)]*\)", "]()", line)
        for m in DOCS_PATH.finditer(line):
            p = m.group(0)
            if not glob.glob(os.path.join(root, p), recursive=True):
                errors.append("%s:%d: %s: no such file or directory" % (rel, no, p))


def check(root):
    errors, markdown, nfiles = [], [], 0
    for path in walk(root):
        if path.endswith(".md"):
            markdown.append(path)
    for path in markdown:
        check_markdown(root, path, errors)
    cited = list(markdown)
    for d in CODE_DIRS:
        if os.path.isdir(os.path.join(root, d)):
            cited += [p for p in walk(os.path.join(root, d))
                      if os.path.splitext(p)[1] in TEXT_EXT and not p.endswith(".md")]
    cited += [os.path.join(root, f) for f in CODE_FILES if os.path.exists(os.path.join(root, f))]
    cited = [p for p in cited if os.path.abspath(p) != os.path.abspath(__file__)]  # not the self-test's tree
    for path in cited:
        nfiles += 1
        check_paths(root, path, errors)
    return errors, len(markdown), nfiles


def selftest():
    import tempfile
    files = {
        "README.md": "# Top\n\n## A `code` heading: with-punctuation!\n\n## Top\n\n"
                     "[ok](docs/guides/a.md) [ok](docs/guides/a.md#use-it) [ok](#top-1) [ok](#a-code-heading-with-punctuation)\n"
                     "[gone](docs/a.md) [bad anchor](docs/guides/a.md#nowhere) ![img](docs/img/x.png)\n"
                     "[web](https://example.org/x.md) `[not a link](docs/b.md)`\n"
                     "```\n# not a heading\n[in code](nowhere.md)\n```\n",
        "docs/guides/a.md": "# A\n\n## Use it\n\n[up](../../README.md#top) [sibling](../lab/b.md) [no](b.md)\n",
        "docs/lab/b.md": "# B\n",
        "docs/img/x.png": "",
        "src/x.c": "/* see docs/guides/a.md and docs/guides/*.md; docs/old.md is gone */\n",
        "build/y.c": "/* docs/ignored.md: build directories are not searched */\n",
    }
    want = ["README.md:8: link to docs/a.md: no such file",
            "README.md:8: link to docs/guides/a.md#nowhere: no heading with that anchor in docs/guides/a.md",
            "docs/guides/a.md:5: link to b.md: no such file",
            "src/x.c:1: docs/old.md: no such file or directory"]
    with tempfile.TemporaryDirectory() as root:
        for name, text in files.items():
            os.makedirs(os.path.dirname(os.path.join(root, name)) or root, exist_ok=True)
            with open(os.path.join(root, name), "w") as f:
                f.write(text)
        got = check(root)[0]
    if sorted(got) != sorted(want):
        print("check_docs_links --selftest: FAIL\n  found:    %s\n  expected: %s" % (got, want))
        return 1
    print("check_docs_links --selftest: PASS (%d breaks found, nothing else)" % len(want))
    return 0


def main():
    if sys.argv[1:] == ["--selftest"]:
        return selftest()
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
    errors, nmd, nfiles = check(root)
    for e in errors:
        print(e)
    print("check_docs_links: %d Markdown files, %d files searched for docs/ paths: %s" %
          (nmd, nfiles, "%d broken" % len(errors) if errors else "OK"))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
