"""ovl's Python interface, run under mpiexec (1 and 4 ranks) and alone."""
import numpy as np
import pytest

import ovl
from conftest import read_case


def eig_density(F, nocc):
    w, V = np.linalg.eigh(F)
    C = V[:, :nocc]
    return C @ C.T


@pytest.mark.parametrize("case", ["water_ccpvdz", "c10h22_631g"])
@pytest.mark.parametrize("method", ["sp2", "trs4", "canonical"])
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
