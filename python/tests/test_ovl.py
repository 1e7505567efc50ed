"""ovl's Python interface, run under mpiexec (1 and 4 ranks) and alone."""
import math
import operator
import os

import numpy as np
import pytest

import ovl
from conftest import read_case


def eig_density(F, nocc):
    w, V = np.linalg.eigh(F)
    C = V[:, :nocc]
    return C @ C.T


@pytest.mark.parametrize("case", ["water_ccpvdz", "c10h22_631g"])
@pytest.mark.parametrize("method", ["sp2", "sp2acc", "trs4", "canonical"])
def test_purify_matches_eigh(comm, case, method):
    F, nocc = read_case(case)
    D, info = ovl.purify(F if comm.rank == 0 else None, nocc, comm=comm, method=method)
    ref = eig_density(F, nocc)
    err = np.linalg.norm(D - ref) / np.linalg.norm(ref)
    assert err <= 1e-8, (case, method, err, info)
    assert info["iterations"] > 0
    assert abs(info["energy"] - np.sum(ref * F)) <= 1e-8 * abs(np.sum(ref * F))
    assert info["plan"]
    # every rank holds the same D
    assert comm.allreduce(float(np.abs(D - comm.bcast(D, root=0)).max()), op=__import__("mpi4py").MPI.MAX) == 0.0


@pytest.mark.parametrize("factor", [1.0, 2.0, 0.5])
def test_purify_sp2acc_estimates(comm, factor):
    """sp2acc with HOMO/LUMO estimates (exact, or a gap twice or half as wide): the same density, fewer products."""
    F, nocc = read_case("c10h22_631g")
    w = np.linalg.eigvalsh(F)
    mid, half = (w[nocc - 1] + w[nocc]) / 2, factor * (w[nocc] - w[nocc - 1]) / 2
    D, info = ovl.purify(F if comm.rank == 0 else None, nocc, comm=comm, method="sp2acc", homo=mid - half,
                         lumo=mid + half)
    ref = eig_density(F, nocc)
    assert np.linalg.norm(D - ref) / np.linalg.norm(ref) <= 1e-10, info
    _, base = ovl.purify(F if comm.rank == 0 else None, nocc, comm=comm, method="sp2")
    assert info["products"] < base["products"], (info, base)
    with pytest.raises(TypeError):
        ovl.purify(F if comm.rank == 0 else None, nocc, comm=comm, method="sp2acc", homo=mid)


@pytest.mark.parametrize("method", ["sp2", "trs4", "canonical"])
def test_purify_diagonal(comm, method):
    """An exactly diagonal F: the iterates become exactly idempotent (error 0), and the run must stop there."""
    F = np.diag([-1.0, -0.5, 0.3, 0.8, 1.1])
    D, info = ovl.purify(F if comm.rank == 0 else None, 2, comm=comm, method=method)
    assert np.linalg.norm(D - np.diag([1.0, 1.0, 0.0, 0.0, 0.0])) <= 1e-12, (method, info)


def test_purify_root_only(comm):
    F, nocc = read_case("water_ccpvdz")
    D, _ = ovl.purify(F if comm.rank == 0 else None, nocc, comm=comm, bcast=False)
    if comm.rank == 0:
        assert np.linalg.norm(D - eig_density(F, nocc)) <= 1e-8 * np.linalg.norm(eig_density(F, nocc))
    else:
        assert D is None


@pytest.mark.parametrize("algo", ["auto", "summa", "cannon"])
@pytest.mark.parametrize("shape", [(50, 37, 41), (64, 64, 64)])
def test_gemm_matches_numpy(comm, algo, shape):
    m, n, k = shape
    if algo == "cannon" and m != n:
        pytest.skip("the shapes Cannon takes are the planner's business; square only here")
    rng = np.random.default_rng(7)
    A = rng.standard_normal((m, k))
    B = rng.standard_normal((k, n))
    C = ovl.gemm(A if comm.rank == 0 else None, B if comm.rank == 0 else None, comm=comm, algo=algo)
    ref = A @ B
    assert C.shape == (m, n)
    assert np.linalg.norm(C - ref) <= 1e-12 * np.linalg.norm(ref) * k


@pytest.mark.parametrize("nocc", [-1, 10**6])
def test_bad_nocc_raises_everywhere(comm, nocc):
    F, _ = read_case("water_ccpvdz")
    with pytest.raises(ovl.OvlError) as e:
        ovl.purify(F if comm.rank == 0 else None, nocc, comm=comm)
    assert "nocc" in str(e.value) and e.value.name == "OVL_ERR_ARG"
    # the same message on every rank
    assert len(set(comm.allgather(str(e.value)))) == 1


def test_bad_inputs_raise_everywhere(comm):
    with pytest.raises(ovl.OvlError, match="square"):
        ovl.purify(np.zeros((3, 4)) if comm.rank == 0 else None, 1, comm=comm)
    with pytest.raises(ovl.OvlError, match="method"):
        ovl.purify(np.eye(4) if comm.rank == 0 else None, 1, comm=comm, method="nonsense")
    with pytest.raises(ovl.OvlError):
        ovl.gemm(np.ones((3, 4)) if comm.rank == 0 else None, np.ones((3, 4)) if comm.rank == 0 else None, comm=comm)
    # F not symmetric: ovl's own check
    with pytest.raises(ovl.OvlError, match="symmetric"):
        ovl.purify(np.triu(np.ones((6, 6))) if comm.rank == 0 else None, 2, comm=comm)


def test_subcommunicator(comm):
    """A communicator other than COMM_WORLD: each half purifies on its own."""
    sub = comm.Split(comm.rank % 2, comm.rank)
    F, nocc = read_case("water_ccpvdz")
    D, _ = ovl.purify(F if sub.rank == 0 else None, nocc, comm=sub)
    ref = eig_density(F, nocc)
    assert np.linalg.norm(D - ref) <= 1e-8 * np.linalg.norm(ref)
    sub.Free()


def row_split(kind, n, size):
    """Row offsets of n rows over size ranks: even, uneven with empty ranks, all on rank 0."""
    if kind == "even":
        counts = [n // size + (r < n % size) for r in range(size)]
    elif kind == "uneven":
        counts = [((r * 5 + 3) % 4) * n // (2 * size + 1) for r in range(size - 1)]
        counts.append(n - sum(counts))
    else:
        counts = [n] + [0] * (size - 1)
    return np.concatenate([[0], np.cumsum(counts)]).astype(int)


@pytest.mark.parametrize("kind", ["even", "uneven", "rank0"])
@pytest.mark.parametrize("method", ["sp2", "trs4"])
@pytest.mark.parametrize("case", ["water_ccpvdz", "c10h22_631g"])
def test_purify_rows(comm, case, method, kind):
    """Each rank's rows of F in, its rows of D out: the rows of the whole-matrix D, and numpy's eigh density."""
    F, nocc = read_case(case)
    off = row_split(kind, F.shape[0], comm.size)
    lo, hi = off[comm.rank], off[comm.rank + 1]
    mine = F[lo:hi]  # C order: the binding makes it column-major
    if kind == "uneven" and hi == lo and comm.rank % 2:
        mine = None  # no rows: None will do
    D_rows, info = ovl.purify(mine, nocc, comm=comm, method=method, layout="rows")
    D_whole, info_whole = ovl.purify(F if comm.rank == 0 else None, nocc, comm=comm, method=method)
    assert D_rows.shape == (hi - lo, F.shape[0])
    assert np.array_equal(D_rows, D_whole[lo:hi]), np.abs(D_rows - D_whole[lo:hi]).max()
    assert info["plan"] == info_whole["plan"] and info["iterations"] == info_whole["iterations"]
    ref = eig_density(F, nocc)[lo:hi]
    assert np.abs(D_rows - ref).max(initial=0.0) <= 1e-8, (case, method, kind)
    assert abs(info["energy"] - info_whole["energy"]) <= 1e-12 * abs(info_whole["energy"])


@pytest.mark.parametrize("algo", ["auto", "summa"])
@pytest.mark.parametrize("shape", [(50, 37, 41), (7, 64, 3)])
def test_gemm_rows(comm, algo, shape):
    """A and B split differently by rows; C comes back split as A."""
    m, n, k = shape
    rng = np.random.default_rng(11)
    A = rng.standard_normal((m, k))
    B = rng.standard_normal((k, n))
    oa, ob = row_split("uneven", m, comm.size), row_split("rank0", k, comm.size)
    r = comm.rank
    C = ovl.gemm(A[oa[r]:oa[r + 1]], B[ob[r]:ob[r + 1]], comm=comm, algo=algo, layout="rows")
    ref = (A @ B)[oa[r]:oa[r + 1]]
    assert C.shape == ref.shape
    assert np.abs(C - ref).max(initial=0.0) <= 1e-12 * np.abs(A @ B).max() * k


def raises_everywhere(world, match, fn, *args, **kw):
    with pytest.raises(ovl.OvlError, match=match) as e:
        fn(*args, **kw)
    assert e.value.name == "OVL_ERR_ARG"
    assert len(set(world.allgather(str(e.value)))) == 1, str(e.value)


def test_rows_bad_inputs_raise_everywhere(comm):
    F, nocc = read_case("water_ccpvdz")
    n, r, last = F.shape[0], comm.rank, comm.size - 1
    off = row_split("even", n, comm.size)
    mine = F[off[r]:off[r + 1]]
    # one row too many on the last rank: the counts do not add up to n
    extra = np.vstack([mine, F[:1]]) if r == last else mine
    raises_everywhere(comm, f"sum to {n + 1}", ovl.purify, extra, nocc, comm=comm, layout="rows")
    raises_everywhere(comm, "out of range", ovl.purify, mine, n + 1, comm=comm, layout="rows")
    raises_everywhere(comm, f"F on rank {last} must be a 2D block", ovl.purify,
                      mine[0] if r == last else mine, nocc, comm=comm, layout="rows")
    if comm.size >= 2:
        # a column too many on rank 1: its n differs from rank 0's
        wide = np.hstack([mine, mine[:, :1]]) if r == 1 else mine
        raises_everywhere(comm, f"n = {n + 1} on rank 1 but {n} on rank 0", ovl.purify, wide, nocc, comm=comm,
                          layout="rows")
        raises_everywhere(comm, "method differs", ovl.purify, mine, nocc, comm=comm, layout="rows",
                          method="trs4" if r == 1 else "sp2")
    A = np.ones((2, 3)) if r == 0 else None
    raises_everywhere(comm, "krows", ovl.gemm, A, np.ones((2, 4)) if r == 0 else None, comm=comm, layout="rows")
    with pytest.raises(ValueError, match="layout"):
        ovl.purify(mine, nocc, comm=comm, layout="columns")
    # and a good call afterwards
    D, _ = ovl.purify(mine, nocc, comm=comm, layout="rows")
    assert np.abs(D - eig_density(F, nocc)[off[r]:off[r + 1]]).max(initial=0.0) <= 1e-8


@pytest.mark.parametrize("layout", ["root", "rows"])
def test_gil_released(comm, layout):
    """Another Python thread runs while ovl computes (ctypes.CDLL releases the GIL), in both layouts."""
    import sys
    import threading
    import time

    rng = np.random.default_rng(3)
    n = 500
    A = rng.standard_normal((n, n))
    S = (A + A.T) / 2
    F = S if comm.rank == 0 else None
    off = row_split("even", n, comm.size)
    if layout == "rows":
        F = S[off[comm.rank]:off[comm.rank + 1]]
    ticks, done = [], threading.Event()

    def ticker():
        while not done.is_set():
            ticks.append(time.perf_counter())
            time.sleep(0)

    old = sys.getswitchinterval()
    sys.setswitchinterval(1.0)  # with the GIL held, the ticker would wait a whole second
    th = threading.Thread(target=ticker)
    th.start()
    try:
        t0 = time.perf_counter()
        C = ovl.gemm(F, F, comm=comm, bcast=False, layout=layout)
        t1 = time.perf_counter()
    finally:
        done.set()
        th.join()
        sys.setswitchinterval(old)
    during = [t for t in ticks if t0 < t < t1]
    if layout == "rows":
        assert np.allclose(C, (S @ S)[off[comm.rank]:off[comm.rank + 1]])
    elif comm.rank == 0:
        assert np.allclose(C, S @ S)
    assert t1 - t0 < 0.9 and len(during) >= 2, (t1 - t0, len(during))


@pytest.mark.parametrize("layout", ["root", "rows"])
def test_options_string(comm, layout):
    """options= sets the plan and the method with the command line's names; a bad option raises everywhere."""
    F, nocc = read_case("water_ccpvdz")
    n = F.shape[0]
    lo, hi = comm.rank * n // comm.size, (comm.rank + 1) * n // comm.size
    arg = (F if comm.rank == 0 else None) if layout == "root" else F[lo:hi]
    _, sp2 = ovl.purify(arg, nocc, comm=comm, layout=layout)
    D, info = ovl.purify(arg, nocc, comm=comm, layout=layout, options="--ndup 3 --method trs4")
    assert "ndup=3" in info["plan"], info["plan"]
    assert (info["iterations"], info["products"]) != (sp2["iterations"], sp2["products"])
    ref = eig_density(F, nocc)
    got = D if layout == "root" else np.vstack(comm.allgather(D))
    assert np.linalg.norm(got - ref) <= 1e-8 * np.linalg.norm(ref)
    with pytest.raises(ovl.OvlError, match="options: unknown option '--iterations'"):
        ovl.purify(arg, nocc, comm=comm, layout=layout, options="--iterations 5")
    with pytest.raises(ovl.OvlError, match="--tol"):
        ovl.purify(arg, nocc, comm=comm, layout=layout, options="--tol 1")
    C = ovl.gemm(F if comm.rank == 0 else None, F if comm.rank == 0 else None, comm=comm, options="--algo summa --ndup 2")
    assert np.allclose(C, F @ F)


def raises_same_everywhere(world, exc, match, fn, *args, **kw):
    """fn raises exc itself (not an OvlError) matching match, with the same message on every rank."""
    with pytest.raises(exc, match=match) as e:
        fn(*args, **kw)
    assert not isinstance(e.value, ovl.OvlError), repr(e.value)
    assert len(set(world.allgather(str(e.value)))) == 1, str(e.value)


def my_part(F, comm, layout):
    """The F this rank passes: rank 0's whole matrix (None elsewhere), or this rank's rows."""
    if layout == "root":
        return F if comm.rank == 0 else None
    off = row_split("even", F.shape[0], comm.size)
    return F[off[comm.rank]:off[comm.rank + 1]]


@pytest.mark.parametrize("layout", ["root", "rows"])
def test_integers_never_wrap(comm, layout):
    """Counts that ctypes would wrap (2**64 + 5 to 5) or truncate (4.9 to 4) are refused, naming the argument."""
    F, nocc = read_case("water_ccpvdz")
    mine, last = my_part(F, comm, layout), comm.size - 1
    kw = dict(comm=comm, layout=layout)
    raises_same_everywhere(comm, ValueError, rf"nocc = {2**64 + nocc} is out of range", ovl.purify, mine, 2**64 + nocc,
                           **kw)
    raises_same_everywhere(comm, ValueError, r"nocc = -9223372036854775809 is out of range", ovl.purify, mine,
                           -2**63 - 1, **kw)
    raises_same_everywhere(comm, ValueError, rf"max_iter = {2**32 + 1} is out of range", ovl.purify, mine, nocc,
                           max_iter=2**32 + 1, **kw)
    raises_same_everywhere(comm, ValueError, r"nocc must be an integral count, not 4.9", ovl.purify, mine, 4.9, **kw)
    raises_same_everywhere(comm, ValueError, r"nocc must be an integral count, not nan", ovl.purify, mine, np.nan,
                           **kw)
    raises_same_everywhere(comm, TypeError, r"nocc must be an integer, not 'five'", ovl.purify, mine, "five", **kw)
    raises_same_everywhere(comm, TypeError, r"max_iter must be an integer, not 1.5j", ovl.purify, mine, nocc,
                           max_iter=1.5j, **kw)
    raises_same_everywhere(comm, TypeError, r"tol must be a real number, not \(1e-10\+1j\)", ovl.purify, mine, nocc,
                           tol=1e-10 + 1j, **kw)
    # ndup too large on the last rank only: every rank raises the same
    raises_same_everywhere(comm, ValueError, rf"ndup = {2**40} is out of range", ovl.purify, mine, nocc,
                           ndup=2**40 if comm.rank == last else None, **kw)
    # integral floats and numpy integers are counts: the same D as with int
    ref = eig_density(F, nocc)
    for k, it in ((float(nocc), np.int32(200)), (np.int64(nocc), 200.0), (np.uint8(nocc), np.int64(200))):
        D, info = ovl.purify(mine, k, max_iter=it, ndup=np.int16(2), **kw)
        want = ref if layout == "root" else my_part(ref, comm, layout)
        assert np.abs(D - want).max(initial=0.0) <= 1e-8, (k, it)


@pytest.mark.parametrize("layout", ["root", "rows"])
def test_complex_and_non_numeric_refused(comm, layout):
    """A complex matrix would lose its imaginary part and a string one be parsed: both are refused."""
    F, nocc = read_case("water_ccpvdz")
    mine, r, last = my_part(F, comm, layout), comm.rank, comm.size - 1
    kw = dict(comm=comm, layout=layout)
    where = "F" if layout == "root" else f"F on rank {last}"
    # a Hermitian F: its real part is a valid input, which is what the old conversion ran
    H = F + 1e-3j * (np.triu(np.ones_like(F), 1) - np.tril(np.ones_like(F), -1))
    Hmine = my_part(H, comm, layout)
    bad = Hmine if layout == "root" or r == last else mine
    raises_same_everywhere(comm, TypeError, rf"{where} is complex \(complex128\)", ovl.purify, bad, nocc, **kw)
    bad = (mine.astype(str) if mine is not None else None) if layout == "root" or r == last else mine
    raises_same_everywhere(comm, TypeError, rf"{where} has dtype <U", ovl.purify, bad, nocc, **kw)
    bad = (mine.astype(object) if mine is not None else None) if layout == "root" or r == last else mine
    raises_same_everywhere(comm, TypeError, rf"{where} has dtype object", ovl.purify, bad, nocc, **kw)
    A = np.arange(6.0).reshape(2, 3)
    if layout == "root":
        raises_same_everywhere(comm, TypeError, r"B is complex", ovl.gemm, A if r == 0 else None,
                               A.T * (1 + 1j) if r == 0 else None, comm=comm)
    else:
        raises_same_everywhere(comm, TypeError, rf"A on rank {last} is complex", ovl.gemm,
                               A * 1j if r == last else A, A.T, comm=comm, layout="rows")
    # integer and unsigned matrices are real numbers: taken
    C = ovl.gemm(np.arange(6).reshape(2, 3) if r == 0 else None, np.ones((3, 2), dtype=np.uint16) if r == 0 else None,
                 comm=comm)
    assert np.array_equal(C, np.arange(6).reshape(2, 3) @ np.ones((3, 2))), C


# ---- random arguments (docs/lab/reliability.md, "Random arguments") ----
_BAD = object()  # a marker: the value must be refused


def _int_ok(v, lo, hi):
    """True when v is a count the C side can take unchanged (no wrap, no truncation)."""
    if isinstance(v, (bool, np.bool_)) or v is None:
        return False
    if isinstance(v, (float, np.floating)):
        return bool(np.isfinite(v)) and v == int(v) and lo <= int(v) <= hi
    try:
        return lo <= operator.index(v) <= hi
    except TypeError:
        return False


def _random_matrices(rng):
    """(name, value, refused) for one matrix argument: valid, odd layouts, and values that must be refused."""
    n = 4
    S = rng.standard_normal((n, n))
    S = S + S.T
    S8 = rng.standard_normal((2 * n, 2 * n))
    S8 = S8 + S8.T
    return [
        ("symmetric", S, False),
        ("non-contiguous", S8[::2, ::2], False),
        ("Fortran order", np.asfortranarray(S), False),
        ("int32", np.rint(S).astype(np.int32), False),
        ("float32", S.astype(np.float32), False),
        ("list", S.tolist(), False),
        ("complex", S + 1j, True),
        ("object", S.astype(object), False),  # numbers in object arrays: either converted or refused
        ("str", S.astype(str), True),
        ("3x4", S[:3], None),
        ("1D", S[0], None),
        ("0x0", np.empty((0, 0)), None),
        ("3D", S.reshape(2, 2, 4), None),
        ("None", None, None),
        ("nan", np.full((n, n), np.nan), None),
    ]


def _draw(rng, pool):
    return pool[int(rng.integers(len(pool)))]


def _outcome(fn, *args, **kw):
    """('ok', value) or (exception class name, exception); any other exception fails the test."""
    try:
        return "ok", fn(*args, **kw)
    except ovl.OvlError as e:
        return "OvlError:" + e.name, e
    except (ValueError, TypeError) as e:
        return type(e).__name__, e


def test_random_arguments(comm):
    """Every public function with generated arguments (huge and negative integers, 2**64 + 3, 4.9, nan, complex,
    strings, None, wrong shapes and dtypes, non-contiguous arrays, bad communicators): each call returns or raises
    ValueError, TypeError or OvlError, the same on every rank, and a call that returns took no value that
    ctypes would wrap or truncate. Seeded: OVL_RANDOM_SEED, OVL_RANDOM_PY_CALLS."""
    from mpi4py import MPI
    seed = comm.bcast(int(os.environ.get("OVL_RANDOM_SEED", "20261127")), root=0)
    calls = int(os.environ.get("OVL_RANDOM_PY_CALLS", "200"))
    rng = np.random.default_rng(seed)
    I64, CINT = (-2**63, 2**63 - 1), (-2**31, 2**31 - 1)
    big = [2**64 + 3, 2**63, -2**63 - 1, 2**31, -1, 0, 4.9, 4.0, np.nan, np.inf, 1 + 2j, "2", None, True, b"2",
           np.int64(2), np.uint64(2**64 - 1), np.float32(2.0), 2, 1, 3]
    reals = [0.0, 1e-10, -5.0, np.nan, np.inf, 1e300, 1j, "1e-9", None, np.float32(1e-8), 2**70, True]
    names = ["auto", "sp2", "trs4", "canonical", "mcweeny", "alg3", "alg5", "summa", "hsumma", "cannon", "3d", "2.5d",
             "double", "mixed", "", "x", None, 5, "\x1b[31m\xff", "a" * 300]
    opts = [None, "", "--ndup 2", "--bogus", "--tol -5", "--nocc 99999999999999999999", "--algo alg3",
            "--max-iter 0", 5, "--grid 65536x65536"]
    comms = [None, comm, MPI.COMM_SELF, MPI.COMM_NULL, "world", 0]
    counts = {}

    def pk(good, pool):  # a valid value 3 times in 5, so that some calls run
        return good if rng.random() < 0.6 else _draw(rng, pool)
    assert isinstance(ovl.version(), str) and ovl.version()
    assert isinstance(ovl.library_path(), str) and ovl.library_path()
    for call in range(calls):
        mats = _random_matrices(rng)
        c = _draw(rng, comms)
        if c is MPI.COMM_SELF:
            c = comm.Split(comm.rank, 0)  # a communicator of one rank, freed below
        if rng.integers(2):
            fn = "purify"
            (fname, F, f_bad), nocc = pk(mats[0], mats), pk(2, big)
            kw = dict(comm=c, method=pk("sp2", names), algo=pk("auto", names), precision=pk("double", names),
                      layout=pk("root", ["root", "rows", "bogus", None]), options=pk(None, opts),
                      bcast=bool(rng.integers(2)))
            if rng.integers(2):
                kw["ndup"] = pk(1, big)
            if rng.integers(2):
                kw["tol"] = pk(1e-10, reals)
            if rng.integers(2):
                kw["max_iter"] = pk(100, big)
            what, res = _outcome(ovl.purify, F, nocc, **kw)
            # must have been refused: a count that would wrap or truncate, a complex or string value
            refused = [f"F {fname}"] if f_bad else []
            refused += [] if _int_ok(nocc, *I64) else [f"nocc={nocc!r}"]
            if kw.get("ndup") is not None and not _int_ok(kw["ndup"], *CINT):
                refused.append(f"ndup={kw['ndup']!r}")
            if "max_iter" in kw and not _int_ok(kw["max_iter"], *CINT):
                refused.append(f"max_iter={kw['max_iter']!r}")
            tol = kw.get("tol", 0.0)
            if isinstance(tol, (complex, str, bytes, bool, type(None))) or not math.isfinite(float(tol)):
                refused.append(f"tol={tol!r}")
            desc = f"purify(F {fname}, nocc={nocc!r}, {kw})"
        else:
            fn = "gemm"
            (an, A, a_bad), (bn, B, b_bad) = pk(mats[0], mats), pk(mats[1], mats)
            kw = dict(comm=c, algo=pk("auto", names), layout=pk("root", ["root", "rows", "bogus"]),
                      options=pk(None, opts), bcast=bool(rng.integers(2)))
            what, res = _outcome(ovl.gemm, A, B, **kw)
            refused = [n for n, bad in ((f"A {an}", a_bad), (f"B {bn}", b_bad)) if bad]
            desc = f"gemm(A {an}, B {bn}, {kw})"
        if isinstance(c, MPI.Comm) and c not in (comm, MPI.COMM_NULL):
            c.Free()
        assert len(set(comm.allgather(what))) == 1, f"seed {seed} call {call}: {desc}: {what} differs between ranks"
        if what == "ok":
            assert not refused, f"seed {seed} call {call}: {desc} returned, taking {refused}"
        else:
            assert str(res), f"seed {seed} call {call}: {desc}: {what} without a message"
        counts[fn, what] = counts.get((fn, what), 0) + 1
    if comm.rank == 0:
        print("random arguments:", ", ".join(f"{f} {w}: {n}" for (f, w), n in sorted(counts.items())))
