import json
import os

import numpy as np
import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def read_case(name):
    """(F, nocc) of a shipped case in data/: raw float64 with a .json sidecar."""
    d = os.path.join(ROOT, "data", name)
    with open(os.path.join(d, "fock.raw.json")) as f:
        side = json.load(f)
    with open(os.path.join(d, "meta.json")) as f:
        meta = json.load(f)
    F = np.fromfile(os.path.join(d, "fock.raw"), dtype="<f8").reshape(side["rows"], side["cols"])  # row-major files
    return F, int(meta["n_occ"])


@pytest.fixture
def comm():
    from mpi4py import MPI
    return MPI.COMM_WORLD
