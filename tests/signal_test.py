#!/usr/bin/env python3
"""A first SIGTERM or SIGINT ends `ovl purify` within a bounded time in every
phase, also when the process is blocked in a call that a signal handler
installed with SA_RESTART resumes (docs/lab/reliability.md, "Signals"):

 1. writing -o (rank 0 blocked in MPI_File_write_all: tests/hard_block.c,
    preloaded), on 1 rank and on 4 (alg6, SIGTERM to every rank, as a batch
    system sends it): exit 143 within seconds, the earlier -o and its sidecar
    byte-identical, no temporary left;
 2. the --check (rank 0 blocked in LAPACKE_dsyevd), SIGINT: exit 130, the
    earlier -o byte-identical (the outputs are written after the check);
 3. a checkpoint write during the iterations (the second checkpoint's data
    blocked): the signal is recorded, the watchdog ends the process
    OVL_STOP_GRACE seconds later with 143; the checkpoint state names the
    first checkpoint's complete data, no temporary left;
 4. progress lines into a full pipe (standard output of `ovl purify | slow
    reader`): the same watchdog, 143;
 5. the report into a full pipe after the outputs are written: 143 (an exit
    code, not a death by the signal).
Before these guarantees, 1 to 4 stayed blocked until killed and 5 died of
the signal.
usage: signal_test.py OVL HARD_BLOCK_SO DATA_DIR MPIEXEC [MPIEXEC_FLAGS...]
"""
import array
import fcntl
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time

OVL, SHIM, DATA = (os.path.abspath(a) for a in sys.argv[1:4])
MPIEXEC = sys.argv[4:]
SCALE = int(os.environ.get("OVL_TEST_TIMEOUT_SCALE", "1"))
LIMIT = 60 * SCALE  # a blocked run is killed by the test after this many seconds
BOUND = 10 * SCALE  # what "ends within a bounded time" means here
GRACE = 2  # OVL_STOP_GRACE of the runs
failures = []


def check(name, cond, detail=""):
    print(("ok   " if cond else "FAIL ") + name + ("" if cond else ": " + detail))
    if not cond:
        failures.append(name)


def ranks(pid):
    """The ovl processes among pid and its descendants."""
    kids, out = {}, []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    st = f.read()
                comm = st[st.index("(") + 1 : st.rindex(")")]
                ppid = int(st[st.rindex(")") + 2 :].split()[1])
                kids.setdefault(ppid, []).append((int(d), comm))
            except (OSError, ValueError):
                pass
    todo = [pid]
    while todo:
        p = todo.pop()
        for c, comm in kids.get(p, []):
            todo.append(c)
            if comm == "ovl":
                out.append(c)
    return out


def snapshot(d):
    """Every file of d with its bytes."""
    res = {}
    for name in sorted(os.listdir(d)):
        with open(os.path.join(d, name), "rb") as f:
            res[name] = f.read()
    return res


def run(args, nranks, env_extra, when, sig, stdout=subprocess.DEVNULL, n_targets=None, launcher_extra=()):
    """Start ovl (singleton, or under mpiexec), wait for when() to hold, send
    sig to every rank process, then wait at most LIMIT seconds. Returns (rc,
    seconds from the signal to the end, stderr); rc is None when the run had
    to be killed, negative for a death by a signal."""
    env = dict(os.environ, OVL_STOP_GRACE=str(GRACE), **env_extra)
    launcher = list(MPIEXEC)
    # a launcher that sets LD_PRELOAD for the ranks itself (MPICH's
    # "-genv LD_PRELOAD libovl_yield.so") would replace the fault library:
    # the ranks get both
    for k in range(len(launcher) - 2):
        if launcher[k] == "-genv" and launcher[k + 1] == "LD_PRELOAD" and "LD_PRELOAD" in env_extra:
            launcher[k + 2] = env_extra["LD_PRELOAD"] + ":" + launcher[k + 2]
    cmd = ([*launcher, *launcher_extra, "-n", str(nranks)] if nranks > 1 else []) + [OVL, "purify", *args]
    err = open("err", "w")
    p = subprocess.Popen(cmd, stdout=stdout, stderr=err, env=env, start_new_session=True)
    t_end = time.time() + LIMIT
    targets = []
    while time.time() < t_end and p.poll() is None:
        targets = [p.pid] if nranks == 1 else ranks(p.pid)
        if len(targets) >= (n_targets or nranks) and when():
            break
        time.sleep(0.05)
    t0 = time.time()
    for t in targets:
        try:
            os.kill(t, sig)
        except ProcessLookupError:
            pass
    try:
        rc = p.wait(timeout=max(1, t_end - time.time()))
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
        rc = None
    dt = time.time() - t0
    err.close()
    with open("err") as f:
        text = f.read()
    return rc, dt, text


def marked():
    return os.path.exists("mark")


def fresh(d):
    if os.path.exists(d):
        shutil.rmtree(d)
    os.mkdir(d)
    os.chdir(d)
    # an earlier output of the name -o gives: any regular files
    with open("D.raw", "wb") as f:
        f.write(b"earlier data\n")
    with open("D.raw.json", "w") as f:
        f.write('{"rows": 0, "cols": 0, "symmetric": false}\n')


def full_pipe():
    """A pipe whose buffer is full; the write end is returned blocking."""
    r, w = os.pipe()
    fl = fcntl.fcntl(w, fcntl.F_GETFL)
    fcntl.fcntl(w, fcntl.F_SETFL, fl | os.O_NONBLOCK)
    fill(w)
    fcntl.fcntl(w, fcntl.F_SETFL, fl)
    return r, w


def fill(w):
    try:
        while True:
            os.write(w, b"x" * 4096)
    except BlockingIOError:
        pass
    try:  # the last, partly free page
        while True:
            os.write(w, b"x")
    except BlockingIOError:
        pass


def synthetic_fock(path, n):
    """A Fock matrix with a small gap: diag(linspace(-1, 1, n)) plus symmetric
    noise of 1e-3 (about 25 iterations of canonical purification)."""
    rnd = random.Random(1)
    a = array.array("d", [0.0]) * (n * n)
    for i in range(n):
        a[i * n + i] = -1 + 2 * i / (n - 1)
        for j in range(i + 1, n):
            v = rnd.gauss(0, 1e-3)
            a[i * n + j] = v
            a[j * n + i] = v
    if sys.byteorder != "little":
        a.byteswap()
    with open(path, "wb") as f:
        a.tofile(f)
    with open(path + ".json", "w") as f:
        json.dump({"rows": n, "cols": n, "symmetric": True}, f)


top = tempfile.mkdtemp()
FOCK = os.path.join(top, "F700.raw")
synthetic_fock(FOCK, 700)
base = ["--fock", FOCK, "--nocc", "350", "-o", "D.raw"]
try:
    # 1. writing -o: 1 rank, then 4 ranks. MPICH's launcher (Hydra) kills the
    # other ranks with SIGKILL once one exits with 143 and then reports either
    # 143 or 9 depending on the order it sees the ends in: the exit code is
    # asserted with its -disable-auto-cleanup (every rank ends by itself), and
    # a second run with the launcher's default asserts what ovl controls there
    # (a bounded end, no temporary left: the ranks without a temporary linger
    # so that the writer removes its own first).
    hydra = any(a == "-genv" for a in MPIEXEC) or "mpich" in os.path.basename(MPIEXEC[0]) if MPIEXEC else False
    cases = [(1, [], True), (4, ["-disable-auto-cleanup"] if hydra else [], True)]
    if hydra:
        cases.append((4, [], False))
    for nr, extra, exact in cases:
        fresh(os.path.join(top, f"w{nr}{len(extra)}{int(exact)}"))
        before = snapshot(".")
        label = f"write phase, {nr} rank(s)" + (" (Hydra's auto-cleanup)" if not exact else "")
        rc, dt, err = run(base + ["--algo", "alg6"], nr, {"LD_PRELOAD": SHIM, "OVL_BLOCK": "write", "OVL_BLOCK_MARK": "mark"}, marked,
                          signal.SIGTERM, launcher_extra=extra)
        os.unlink("mark") if os.path.exists("mark") else None
        ok_rc = rc == 143 if exact else rc in (143, 9)
        check(f"{label}: exit {'143' if exact else '143 or 9'} within {BOUND} s (rc={rc}, {dt:.1f} s)",
              ok_rc and dt <= BOUND, err[-600:])
        if nr == 1:
            check("write phase: message", "stopped by SIGTERM after the iterations" in err, err[-600:])
        after = snapshot(".")
        after.pop("err", None)
        check(f"{label}: the earlier -o untouched, no temporary left", after == before,
              f"files now: {sorted(after)}")

    # 2. the --check, SIGINT
    fresh(os.path.join(top, "c"))
    before = snapshot(".")
    rc, dt, err = run(base + ["--check"], 1, {"LD_PRELOAD": SHIM, "OVL_BLOCK": "check", "OVL_BLOCK_MARK": "mark"},
                      marked, signal.SIGINT)
    os.unlink("mark") if os.path.exists("mark") else None
    check(f"--check: exit 130 within {BOUND} s (rc={rc}, {dt:.1f} s)", rc == 130 and dt <= BOUND, err[-600:])
    after = snapshot(".")
    after.pop("err", None)
    check("--check: the earlier -o untouched, nothing else written", after == before, f"files now: {sorted(after)}")

    # 3. a checkpoint write that does not end: the second checkpoint's data
    fresh(os.path.join(top, "k"))
    before = snapshot(".")
    state = {}

    def second_ckpt():
        # the first checkpoint is in place and the second one's write blocks
        return marked() and os.path.exists("ck.state.json")

    rc, dt, err = run(base + ["--checkpoint", "ck", "--checkpoint-every", "2"], 1,
                      {"LD_PRELOAD": SHIM, "OVL_BLOCK": "write:2", "OVL_BLOCK_MARK": "mark"}, second_ckpt,
                      signal.SIGTERM)
    os.unlink("mark") if os.path.exists("mark") else None
    check(f"checkpoint write: the watchdog ends it, 143 within {GRACE} + {BOUND} s (rc={rc}, {dt:.1f} s)",
          rc == 143 and GRACE - 0.5 <= dt <= GRACE + BOUND, err[-600:])
    check("checkpoint write: message", "did not end within OVL_STOP_GRACE seconds" in err, err[-600:])
    try:
        with open("ck.state.json") as f:
            state = json.load(f)
        meta = json.load(open(state["data"] + ".json"))
        whole = state["iteration"] == 2 and os.path.getsize(state["data"]) == meta["rows"] * meta["cols"] * 8
    except (OSError, ValueError, KeyError) as e:
        whole = False
        state = {"error": str(e)}
    check("checkpoint write: the state names the first checkpoint's complete data", whole, str(state))
    after = snapshot(".")
    after.pop("err", None)
    left = sorted(set(after) - set(before) - {"ck.state.json", "ck.it2.raw", "ck.it2.raw.json"})
    check("checkpoint write: the earlier -o untouched, no temporary left",
          not left and all(after[k] == before[k] for k in before), f"left: {left}")

    # 4. progress lines into a full pipe (n = 700, about 50 ms per iteration)
    fresh(os.path.join(top, "p"))
    before = snapshot(".")
    r, w = os.pipe()
    seen = bytearray()
    fcntl.fcntl(r, fcntl.F_SETFL, os.O_NONBLOCK)
    wfl = fcntl.fcntl(w, fcntl.F_GETFL)

    def third_iteration():
        try:
            while True:
                b = os.read(r, 65536)
                if not b:
                    break
                seen.extend(b)
        except BlockingIOError:
            pass
        if b"# iter   3" not in seen:
            return False
        fcntl.fcntl(w, fcntl.F_SETFL, wfl | os.O_NONBLOCK)
        fill(w)  # nobody reads any more: the next progress line blocks
        fcntl.fcntl(w, fcntl.F_SETFL, wfl)  # (the flag is shared with the process's standard output)
        return True

    rc, dt, err = run(base, 1, {}, third_iteration, signal.SIGTERM, stdout=w)
    os.close(r), os.close(w)
    check(f"progress into a full pipe: the watchdog ends it, 143 within {GRACE} + {BOUND} s (rc={rc}, {dt:.1f} s)",
          rc == 143 and GRACE - 0.5 <= dt <= GRACE + BOUND and "did not end within" in err, err[-600:])
    after = snapshot(".")
    after.pop("err", None)
    check("progress into a full pipe: the earlier -o untouched", after == before, f"files now: {sorted(after)}")

    # 5. the report into a full pipe, after D is written
    fresh(os.path.join(top, "r"))
    r, w = full_pipe()

    def written():
        return os.path.getsize("D.raw") > 100

    rc, dt, err = run(base + ["-q"], 1, {}, written, signal.SIGTERM, stdout=w)
    os.close(r), os.close(w)
    check(f"report into a full pipe: exit 143 within {BOUND} s (rc={rc}, {dt:.1f} s)", rc == 143 and dt <= BOUND,
          err[-600:])
finally:
    os.chdir("/")
    shutil.rmtree(top, ignore_errors=True)
print(f"signals: {len(failures)} failed")
sys.exit(1 if failures else 0)
