"""Run the README's Python example (the code block after "<!-- test: python -->")
and check what it computes: D the projector onto the nocc lowest eigenvectors of F
(numpy.linalg.eigh's), C = D D = D.
usage: [mpiexec -n P] python3 readme_example.py README.md"""
import re
import sys

import numpy as np
from mpi4py import MPI

import ovl

text = open(sys.argv[1]).read()
m = re.search(r"<!-- test: python -->\s*```python\n(.*?)```", text, re.S)
if not m:
    sys.exit("README.md: no python code block after <!-- test: python -->")
env = {}
exec(compile(m.group(1), "README.md (python example)", "exec"), env)
D, C, info = env["D"], env["C"], env["info"]
F = -(np.eye(6, k=1) + np.eye(6, k=-1))  # the example's F (rank 0's)
w, V = np.linalg.eigh(F)
ref = V[:, :3] @ V[:, :3].T
err_d, err_c = np.abs(D - ref).max(), np.abs(C - ref).max()
print(f"rank {MPI.COMM_WORLD.rank}: README example: |D - D_exact| {err_d:.1e}, |C - D| {err_c:.1e}, "
      f"{info['iterations']} iterations, library {ovl.library_path()}", flush=True)
ok = err_d <= 1e-10 and err_c <= 1e-10 and not __import__("os").environ.get("OVL_LIBRARY")
if not MPI.COMM_WORLD.allreduce(ok, op=MPI.LAND):
    sys.exit("README example: FAIL")
