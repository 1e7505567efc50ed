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


def test_gil_released(comm):
    """Another Python thread runs while ovl computes (ctypes releases the GIL)."""
    import sys
    import threading
    import time

    rng = np.random.default_rng(3)
    n = 500
    A = rng.standard_normal((n, n))
    F = (A + A.T) / 2 if comm.rank == 0 else None
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
        C = ovl.gemm(F, F, comm=comm, bcast=False)
        t1 = time.perf_counter()
    finally:
        done.set()
        th.join()
        sys.setswitchinterval(old)
    during = [t for t in ticks if t0 < t < t1]
    if comm.rank == 0:
        assert np.allclose(C, F @ F)
    assert t1 - t0 < 0.9 and len(during) >= 2, (t1 - t0, len(during))
