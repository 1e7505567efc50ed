#!/usr/bin/env python3
"""Random arguments for every sub-command of ovl, each run under a timeout.

Each case is one command (gemm, purify, the six benchmarks, model, tune;
also version, help, bench alone and unknown commands) with a small base of options that keeps a valid run short, followed by a few
options drawn at random from that command's table, each with a value drawn
from a pool of valid, boundary and invalid values: negative, huge, not a
number, empty, inf/nan, unknown choices, and files that are missing, FIFOs,
character devices (made here with mknod), directories, truncated or
byte-swapped, plus unknown options and stray words. A case passes when:

  - the exit code is 0, 1 or 2 (no crash, no signal) and the run ends
    within the timeout (no hang);
  - exit 2 (bad arguments) leaves stdout empty: nothing is printed before
    the arguments are judged;
  - stderr holds no sanitizer report (ASan, UBSan, LSan), is valid UTF-8
    and holds no control byte but newline and tab, although values, file
    names and file contents carry escapes and invalid UTF-8;
  - after a failure the case's output directory holds nothing but a
    checkpoint (which is kept by design); after success no temporary;
  - the special files are still what they were at the end, and no
    temporary is left beside them;
  - symbolic links planted at output names and at the names of the old
    predictable temporaries (to a victim file, and dangling) are never
    written through: the victim stays byte-identical and a dangling link's
    target is never created.

Before the cases, every option that `ovl <command> --help` lists must have a
pool here: an option added to the CLI without one fails the test.

The cases are drawn from a seeded generator: the same seed gives the same
cases. The seed is printed; OVL_RANDOM_SEED=S reproduces a run and
OVL_RANDOM_COUNT=N sets the number of cases; a failing case prints its
command line.

usage: random_args_test.py OVL DATA_DIR MPIEXEC [MPIEXEC_FLAGS...]
"""
import concurrent.futures
import os
import random
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time

OVL, DATA = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
MPIEXEC = sys.argv[3:]
SEED = int(os.environ.get("OVL_RANDOM_SEED", "20261125"))
COUNT = int(os.environ.get("OVL_RANDOM_COUNT", "300"))
JOBS = int(os.environ.get("OVL_RANDOM_JOBS", "2"))
TIMEOUT = 30 * float(os.environ.get("OVL_TEST_TIMEOUT_SCALE", "1"))
SANITIZER = re.compile(r"ERROR: (Address|Leak)Sanitizer|runtime error:|SUMMARY: (Address|Undefined|Leak)Sanitizer")

tmp = tempfile.mkdtemp(prefix="ovl_random_")
fx = os.path.join(tmp, "fx")
os.makedirs(os.path.join(fx, "dir"))
os.makedirs(os.path.join(fx, "swapped"))
W = os.path.join(DATA, "water_ccpvdz")
for name in ("fock.raw", "fock.raw.json", "meta.json"):
    shutil.copy(os.path.join(W, name), os.path.join(fx, name))
raw = open(os.path.join(W, "fock.raw"), "rb").read()
open(os.path.join(fx, "trunc.raw"), "wb").write(raw[:1000])
shutil.copy(os.path.join(W, "fock.raw.json"), os.path.join(fx, "trunc.raw.json"))
swapped = b"".join(raw[k:k + 8][::-1] for k in range(0, len(raw), 8))
open(os.path.join(fx, "swapped", "fock.raw"), "wb").write(swapped)
shutil.copy(os.path.join(W, "fock.raw.json"), os.path.join(fx, "swapped", "fock.raw.json"))
shutil.copy(os.path.join(W, "meta.json"), os.path.join(fx, "swapped", "meta.json"))
with open(os.path.join(fx, "f.mtx"), "w") as o:
    vals = [float(x) for x in __import__("struct").unpack("<576d", raw)]
    o.write("%%MatrixMarket matrix array real general\n24 24\n")
    for j in range(24):
        for i in range(24):
            o.write("%.17g\n" % vals[i * 24 + j])
open(os.path.join(fx, "bad.json"), "w").write('{"alpha": oops}\n')
# escapes and invalid UTF-8 in file contents and names, for the messages
ESC = "\x1b[31m\x07\udcff\udcc3"  # ESC, BEL, an invalid byte, a truncated sequence
open(os.path.join(fx, "esc.json"), "wb").write(b'{"\x1b[2J\xff": 1, "alpha": "\x1b]0;t\x07"}\n')
open(os.path.join(fx, "esc.raw"), "wb").write(raw)
open(os.path.join(fx, "esc.raw.json"), "wb").write(b'{"rows": 24, "cols": "\x1b[31m\xff", "dtype": "float64"}\n')
os.mkfifo(os.path.join(fx, "fifo"))
os.mkfifo(os.path.join(fx, "fifo.mtx"))
os.mknod(os.path.join(fx, "dev"), 0o644 | stat.S_IFCHR, os.makedev(1, 3))
SPECIAL = {"fifo": stat.S_ISFIFO, "fifo.mtx": stat.S_ISFIFO, "dev": stat.S_ISCHR, "dir": stat.S_ISDIR}

F = lambda n: os.path.join(fx, n)
IN_FILES = [F("fock.raw"), F("f.mtx"), F("trunc.raw"), F("swapped/fock.raw"), F("none.raw"), F("fifo"),
            F("fifo.mtx"), F("dev"), F("dir"), F("bad.json"), F("esc.json"), F("esc.raw"), F("e" + ESC + ".raw"), ""]
# @OUT@/link* are symbolic links to the case's victim file, @OUT@/dangle a dangling one (planted by run_case)
OUT_FILES = ["@OUT@/x", "@OUT@/x.raw", "@OUT@/link", "@OUT@/link.raw", "@OUT@/dangle", "@OUT@/nodir/x",
             "@OUT@/e" + ESC, F("dev"), F("fifo"), F("dir"), ""]
LINKS = ["link", "link.raw", "link.json", "link.raw.json", "link.csv", "link.mtx", "t.json.tmp", "m.json.tmp",
         "link.tmp", "link.raw.tmp", "ck.state.json.tmp"]
INTS = ["0", "1", "2", "3", "-1", "-7", "64", "65", "2147483648", "99999999999999999999", "x", "1.5", "",
        " -18446744073709551615", "9223372036854775807", "1" + ESC]
SMALL = ["1", "2", "0", "-1", "x", ""]
SIZES = ["0", "8", "64", "1K", "4K", "-1", "1G", "8G", "1T", "99999999999999999999", "K", "x", ""]
RANGES = ["8:64", "64", "1:1K", "0:8", "64:8", "-1:8", "8G:8G", "16G:16G", "1T", "8:x", ":", ""]
DOUBLES = ["0", "1", "-1", "1e-11", "1e-3", "1e-20", "inf", "-inf", "nan", "1e308", "x", "", "-1e400", "0x1p-3",
           "1e-400", ESC]
GRIDS = ["1x1", "2x2", "1x1x1", "2x2x1", "2x2x2", "0x2", "1x2x1", "-1x1", "3", "x", ""]
ND = ["1", "2", "4", "auto", "0", "65", "-3", "x", ""]
PLANS = ["summa grid=1x1 b=64 ndup=1", "alg5 grid=1x1x1 ndup=2", "sq grid=1x1x1 ndup=4", "auto", "summa b=x", "x=1", ""]

# per command: base options (a short valid run) and the option pools
CMDS = {
    "gemm": (["-n", "32", "-i", "1", "-x", "0", "--no-blas-check"], {
        "--algo": ["summa", "hsumma", "cannon", "3d", "2.5d", "auto", "alg5", ""], "--machine": IN_FILES,
        "--tune-file": IN_FILES, "-n": ["16", "33", "0", "-1", "256K", "1G", "2048G", "x"], "--m": SIZES,
        "--k": SIZES, "--size": SIZES, "--transa": ["N", "T", "X"], "--transb": ["N", "T", "C"], "-b": SIZES, "--outer": SIZES,
        "-G": ["2", "2x2", "0", "x", ""], "--grid": GRIDS, "--repl": SMALL, "--allow-idle": None, "-d": INTS,
        "--lookahead": None, "--backend": ["mpi", "own", "x"], "--arrival-order": ["on", "off", "x", ""],
        "--no-blas-check": None,
        "--bcast-alg": ["auto", "binomial", "chain", "hier", "x"], "-M": SIZES, "-i": SMALL, "-x": SMALL,
        "--alpha": DOUBLES, "--beta": DOUBLES, "-s": INTS, "-c": None,
        "--check-mode": ["auto", "exact", "prob", "x"], "--tol": DOUBLES, "-t": OUT_FILES, "-j": None,
        "-q": None, "--plan": PLANS, "--dropin-min": INTS, "--dropin-mem": SIZES,
        "--dropin-route": ["auto", "layout", "scalapack", "x", ""]}),
    "purify": (["--fock", F("fock.raw"), "--nocc", "5", "-q"], {
        "--fock": IN_FILES, "--nocc": INTS, "--method": ["canonical", "mcweeny", "trs2", "x"], "--mu": DOUBLES,
        "--algo": ["alg3", "alg4", "alg5", "alg6", "auto", "x"], "--ndup": ND,
        "--arrival-order": ["on", "off", "x"], "--precision": ["double", "mixed", "x", ""], "--method": ["canonical",
        "mcweeny", "sp2", "trs4", "trs2", "sp2acc", "x", ESC], "--grid": GRIDS, "--repl": SMALL, "--plan": PLANS,
        "--homo": DOUBLES, "--lumo": DOUBLES,
        "--allow-idle": None, "--ppn": ["0", "1", "auto", "-1", "x"], "--machine": IN_FILES,
        "--tune-file": IN_FILES, "--backend": ["mpi", "own", ""], "--mem-limit": SIZES,
        "--max-iter": ["1", "3", "50", "0", "100001", "x"], "--tol": DOUBLES, "-o": OUT_FILES,
        "--checkpoint": ["@OUT@/ck", "@OUT@/nodir/ck", F("dev"), F("dir"), ""], "--checkpoint-every": SMALL,
        "--restart": None, "--check": None, "--trace": OUT_FILES, "--json": None, "--quiet": None,
        "--sparse": DOUBLES, "--sparse-block": INTS, "--overlap": IN_FILES}),
    "bench pingpong": (["-m", "8:1K", "-i", "1", "-x", "0", "--iterations-large", "1", "--warmup-large", "0"], {
        "-m": RANGES, "-i": SMALL, "--iterations-large": SMALL, "-x": SMALL, "--warmup-large": SMALL,
        "--large": SIZES, "--pairs": SMALL, "-W": ["0", "1", "4", "-1", "x"], "--fit": ["rel", "abs", "x"],
        "--fit-range": RANGES, "--cache-bytes": SIZES, "-M": SIZES, "-f": None, "-j": None, "-q": None}),
    "bench coll": (["-m", "8:1K", "-i", "1", "-x", "0"], {
        "--op": ["bcast", "reduce", "allreduce", "allgather", "alltoall", "x"], "-m": RANGES, "-d": INTS,
        "--ppn": SMALL, "--backend": ["mpi", "own", "x"], "-a": ["auto", "binomial", "ring", "x", ""],
        "--alg": ["auto", "ring", "x"], "--coll-alg": ["auto", "binomial", "ring", "x", ""], "-i": SMALL, "-x": SMALL, "--cache-bytes": SIZES, "--timeline": OUT_FILES, "--timeline-size": SIZES, "--timeline-reps": SMALL,
        "--mem-limit": SIZES, "-f": None, "-j": None, "-q": None}),
    "bench nbc": (["-m", "8:1K", "-i", "1", "-x", "0", "--num-tests", "1", "--compute-us", "10"], {
        "--op": ["bcast", "allreduce", "alltoall", "x"], "-m": RANGES, "--mode": ["all", "osu", "imb", "eff", "x"],
        "--num-tests": SMALL, "--compute-us": ["0", "10", "-1", "inf", "x"], "--backend": ["mpi", "own", "x"],
        "-a": ["auto", "x", ""], "--coll-alg": ["auto", "x", ""], "-i": SMALL, "-x": SMALL, "--cache-bytes": SIZES,
        "-M": SIZES, "-f": None, "-j": None,
        "-q": None}),
    "bench progress": (["-n", "64K", "--chunks", "4", "--chunk-size", "16", "-i", "1", "-x", "0"], {
        "-n": ["8", "64K", "0", "-1", "1T", "x"], "--chunks": SMALL, "--chunk-size": ["1", "16", "0", "8193", "x"],
        "--every": SMALL, "-a": ["auto", "binomial", "scatter-allgather", "chain", "hier", "x"], "--segment": SIZES,
        "--bcast-alg": ["auto", "binomial", "chain", "x", ""],
        "-i": SMALL, "-x": SMALL, "-M": SIZES, "-j": None}),
    "bench ssc": (["-n", "48", "-i", "1", "-x", "0", "-q"], {
        "-n": ["16", "48", "0", "-1", "100000", "x"], "-a": ["alg3", "alg5,alg6", "alg9", ",", "alg3,alg3,alg3,alg3,alg3"],
        "-d": ["1", "1,2", "1-3", "0", "65", "x"], "-g": GRIDS, "--allow-idle": None, "--backend": ["mpi", "own"],
        "--arrival-order": ["on", "off", "x"], "--quiet": None, "--plan": PLANS,
        "-i": SMALL, "-x": SMALL, "-M": SIZES, "-j": None}),
    "bench machine": (["-o", "@OUT@/m.json", "--max-size", "4096", "-i", "1", "-W", "1", "-q"], {
        "-o": OUT_FILES, "--name": ["x", "a\"b", ""], "--eager": SIZES, "--max-size": ["4096", "8K", "0", "1T", "x"],
        "-W": SMALL, "-i": SMALL, "-M": SIZES, "--quiet": None}),
    "model": (["-n", "256"], {
        "--kernel": ["summa", "hsumma", "cannon", "3d", "2.5d", "alg3", "alg6", "x"], "-n": SIZES, "--ranks": INTS,
        "--algo": ["summa", "hsumma", "cannon", "3d", "2.5d", "alg3", "alg6", "sq", "bsumma", "bs2.5d", "x"],
        "--fill": DOUBLES + ["0.05", "0.5"], "--sparse-block": INTS,
        "--machine": IN_FILES, "-b": SIZES, "--outer": SIZES, "-G": INTS, "-d": INTS, "--repl": INTS, "--ppn": INTS,
        "--lookahead": None, "--sweep": ["none", "G", "ndup", "c", "ppn", "P", "algo", "x"], "--max": INTS,
        "-j": None}),
    "tune": (["-n", "48", "--top", "1", "-i", "1", "-x", "0", "-q", "-o", "@OUT@/t.json"], {
        "--kernel": ["gemm", "ssc", "x"], "--family": ["gemm", "ssc", "sq", "bsmul", "x"], "-n": ["16", "48", "0", "-1", "1G", "x"],
        "--machine": IN_FILES,
        "--top": SMALL,
        "--band": DOUBLES, "-i": SMALL, "-r": SMALL, "-x": SMALL, "-o": OUT_FILES, "-j": None, "--exhaustive": None,
        "--quiet": None}),
    # commands without options: random words after them
    "version": ([], {}),
    "help": ([], {}),
    "bench": ([], {}),
    "": ([], {}),
    "frobnicate": ([], {}),
    "bench frobnicate": ([], {}),
}
JUNK = ["--bogus", "stray", "--check=1", "-", "--", "-zz", "--help", "-h", ESC, "--" + ESC, "-q=" + ESC]


def make_case(rng, k):
    names = sorted(CMDS)  # the commands with options drawn five times as often as the others
    cmd = rng.choices(names, [5 if CMDS[c][1] else 1 for c in names])[0]
    base, pool = CMDS[cmd]
    args = list(base)
    for _ in range(rng.randint(0, 5)):
        if rng.random() < 0.07 or not pool:
            args.append(rng.choice(JUNK))
            continue
        opt = rng.choice(sorted(pool))
        args.append(opt)
        if pool[opt] is not None:  # the pools start with valid values: half of the draws come from those
            vals = pool[opt]
            args.append(rng.choice(vals[:max(1, len(vals) // 3)] if rng.random() < 0.5 else vals))
    np = 2 if rng.random() < 0.15 else 1
    return k, np, ([cmd] if cmd == "" else cmd.split()) + args


def leftovers(od, rc):
    left = []
    for root, _, files in os.walk(od):
        for name in files:
            rel = os.path.relpath(os.path.join(root, name), od)
            if ".tmp." in name and name not in LINKS:
                left.append(rel)  # a temporary is never left, whatever the outcome
            elif rc != 0 and name in LINKS + ["dangle"] and os.path.islink(os.path.join(root, name)):
                pass  # planted
            elif rc != 0 and not re.match(r"ck\.(state\.json|it\d+\.raw(\.json)?)$", rel):
                left.append(rel)  # after a failure: nothing but a checkpoint
    return left


def bad_text(b):
    """Why the bytes b are not fit for a terminal (None when they are)."""
    try:
        t = b.decode("utf-8")
    except UnicodeDecodeError as e:
        return "invalid UTF-8 at byte %d: %r" % (e.start, b[max(0, e.start - 40):e.start + 8])
    m = re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]", t)
    return "control character %r in %r" % (m.group(), t[max(0, m.start() - 40):m.start() + 8]) if m else None


def check_options():
    """Every option `ovl <command> --help` lists has a pool here."""
    missing = []
    for cmd, (base, pool) in CMDS.items():
        if not pool:
            continue
        h = subprocess.run([OVL] + cmd.split() + ["--help"], capture_output=True, text=True).stdout
        opts = re.findall(r"^\s+(?:-(\w), )?--([a-z0-9-]+)", h, re.M)
        if not opts:
            missing.append("%s: no options in --help" % cmd)
        for short, long in opts:
            if long != "help" and "--" + long not in pool and not (short and "-" + short in pool):
                missing.append("%s --%s" % (cmd, long))
    return missing


def run_case(case):
    k, np, argv = case
    od = os.path.join(tmp, "out.%d" % k)
    os.makedirs(od)
    victim = os.path.join(tmp, "victim.%d" % k)
    content = b"victim %d: never written through a link\n" % k
    open(victim, "wb").write(content)
    for name in LINKS:
        os.symlink(victim, os.path.join(od, name))
    absent = os.path.join(tmp, "absent.%d" % k)
    os.symlink(absent, os.path.join(od, "dangle"))
    argv = [a.replace("@OUT@", od) for a in argv]
    launch = [] if np == 1 else MPIEXEC + ["-n", str(np)]
    t0 = time.time()
    p = subprocess.Popen(launch + [OVL] + argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=od,
                         start_new_session=True)
    try:
        out, err = p.communicate(timeout=TIMEOUT)
        rc = p.returncode
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)  # the case's own process group: what it started
        out, err = p.communicate()
        rc = "timeout"
    raw_err = err
    err = err.decode(errors="replace")
    dt = time.time() - t0
    why = None
    if rc == "timeout":
        why = "no end within %.0f s (a hang)" % TIMEOUT
    elif rc not in (0, 1, 2):
        why = "exit code %s" % rc
    elif SANITIZER.search(err):
        why = "sanitizer report"
    elif rc == 2 and out:
        why = "exit 2 after printing to stdout: %r" % out[:200]
    elif bad_text(raw_err):
        why = "stderr: %s" % bad_text(raw_err)
    elif open(victim, "rb").read() != content or not stat.S_ISREG(os.lstat(victim).st_mode):
        why = "the victim of a planted link was written through"
    elif os.path.lexists(absent):
        why = "a dangling link's target was created"
    else:
        left = leftovers(od, rc)
        if left:
            why = "left behind after exit %d: %s" % (rc, " ".join(left))
    shutil.rmtree(od, ignore_errors=True)
    return k, np, argv, rc, dt, why, err


def main():
    rng = random.Random(SEED)
    cases = [make_case(rng, k) for k in range(COUNT)]
    print("random arguments: seed %d (OVL_RANDOM_SEED), %d cases (OVL_RANDOM_COUNT), timeout %.0f s" %
          (SEED, COUNT, TIMEOUT), flush=True)
    t0 = time.time()
    codes = {0: 0, 1: 0, 2: 0}
    fails = 0
    missing = check_options()
    if missing:
        fails += 1
        print("FAIL: options of the CLI without a pool in this test: %s" % ", ".join(missing))
    percmd = {}
    for _, _, argv in cases:
        c = " ".join(argv[:2]) if argv[:1] == ["bench"] and len(argv) > 1 and not argv[1].startswith("-") else argv[0]
        percmd[c] = percmd.get(c, 0) + 1
    print("cases per command: " + ", ".join("%s %d" % (c or "''", n) for c, n in sorted(percmd.items())), flush=True)
    with concurrent.futures.ThreadPoolExecutor(JOBS) as ex:
        for k, np, argv, rc, dt, why, err in ex.map(run_case, cases):
            if rc in codes:
                codes[rc] += 1
            if why:
                fails += 1
                print("FAIL case %d (np=%d, %.1f s): %s\n  ovl %s" % (k, np, dt, why, " ".join(repr(a) for a in argv)))
                for line in err.strip().splitlines()[-6:]:
                    print("  | " + line)
    for name, is_kind in SPECIAL.items():
        if not is_kind(os.lstat(F(name)).st_mode):
            fails += 1
            print("FAIL: the special file %s was replaced" % name)
    beside = [n for n in os.listdir(fx) if ".tmp." in n]
    if beside:
        fails += 1
        print("FAIL: temporaries left beside the inputs: %s" % " ".join(beside))
    print("random arguments: %d cases in %.0f s: exit 0: %d, 1: %d, 2: %d; %d failed (seed %d)" %
          (COUNT, time.time() - t0, codes[0], codes[1], codes[2], fails, SEED))
    shutil.rmtree(tmp, ignore_errors=True)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
