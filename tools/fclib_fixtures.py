"""One-off generator of the FCLIB/npz test fixtures in tests/data/fclib/ (not run by the
tests; kept for provenance). Needs numpy, scipy, h5py (the HDF5 C library underneath).

- Writes local FCLIB problems with h5py, in the three CSparse storages, from the global
  problems of the shared FCLIB files reduced with numpy (M mirrored from its stored
  upper triangle), and two unsupported variants (2D, rolling friction).
- Writes a ContactBench-style .npz with numpy (np.savez(G=, g=, mus=)).
- Prints, for each shared file, one entry of W and q computed independently with numpy
  (indices in FCLIB's order [n, t1, t2]), for tests/problem/files.rs.

Usage: python tools/fclib_fixtures.py tests/data/fclib
"""
import sys
from pathlib import Path

import h5py
import numpy as np
import scipy.sparse as sp

out = Path(sys.argv[1])


def read_matrix(g):
    m, n, nz = int(g["m"][0]), int(g["n"][0]), int(g["nz"][0])
    x = g["x"][:]
    if nz >= 0:
        return sp.coo_matrix((x[:nz], (g["i"][:nz], g["p"][:nz])), shape=(m, n)).toarray()
    if nz == -1:
        return sp.csc_matrix((x, g["i"][:], g["p"][:]), shape=(m, n)).toarray()
    return sp.csr_matrix((x, g["i"][:], g["p"][:]), shape=(m, n)).toarray()


def reduce(path):
    g = h5py.File(path, "r")["fclib_global"]
    M, H = read_matrix(g["M"]), read_matrix(g["H"])
    if not np.tril(M, -1).any() or not np.triu(M, 1).any():
        M = M + M.T - np.diag(np.diag(M))
    f, w, mu = g["vectors/f"][:], g["vectors/w"][:], g["vectors/mu"][:]
    W = H.T @ np.linalg.solve(M, H)
    q = H.T @ np.linalg.solve(M, f) + w
    return W, q, mu


def write_local(path, W, q, mu, storage, spacedim=3):
    with h5py.File(path, "w") as h:
        loc = h.create_group("fclib_local")
        loc["spacedim"] = np.array([spacedim], dtype=np.int32)
        if storage == "csc":
            S, nz = sp.csc_matrix(W), -1
        elif storage == "csr":
            S, nz = sp.csr_matrix(W), -2
        else:
            S = sp.coo_matrix(W)
            nz = S.nnz
        grp = loc.create_group("W")
        grp["m"] = np.array([W.shape[0]], dtype=np.int32)
        grp["n"] = np.array([W.shape[1]], dtype=np.int32)
        grp["nz"] = np.array([nz], dtype=np.int32)
        grp["nzmax"] = np.array([S.nnz], dtype=np.int32)
        if storage == "triplet":
            grp["i"], grp["p"] = S.row.astype(np.int32), S.col.astype(np.int32)
        else:
            grp["i"], grp["p"] = S.indices.astype(np.int32), S.indptr.astype(np.int32)
        grp["x"] = S.data
        v = loc.create_group("vectors")
        v["q"], v["mu"] = q, mu


for name in ["Box_Stacks-i0122-82-5", "Spheres-i099-356-679", "CubeH8",
             "LMGC_GlobalFrictionContactProblem00046"]:
    W, q, mu = reduce(out / f"{name}.hdf5")
    asym = np.abs(W - W.T).max() / np.abs(W).max()
    print(f"{name}: dim {W.shape[0]}, asym {asym:.3e}, W[0,0] = {W[0, 0]!r}, "
          f"W[0,1] = {W[0, 1]!r}, q[0] = {q[0]!r}")

W, q, mu = reduce(out / "LMGC_GlobalFrictionContactProblem00046.hdf5")
write_local(out / "local_lmgc46_csr.hdf5", W, q, mu, "csr")
write_local(out / "local_lmgc46_triplet.hdf5", W, q, mu, "triplet")
write_local(out / "local_lmgc46_csc.hdf5", W, q, mu, "csc")
np.save(out / "local_lmgc46_expected.npy", np.vstack([W, q[None, :]]))
write_local(out / "unsupported_2d.hdf5", np.eye(4), np.zeros(4), np.array([0.5, 0.5]), "csc", 2)
write_local(out / "unsupported_rolling.hdf5", np.eye(5), np.zeros(5), np.array([0.5]), "csc", 5)

# A ContactBench-style npz: two contacts, [t1, t2, n] order, G symmetric positive definite.
rng = np.random.default_rng(7)
J = rng.standard_normal((6, 9))
np.savez(out / "contactbench_style.npz", G=J @ J.T, g=rng.standard_normal(6),
         mus=[0.5, 0.8])
print("npz G[5,5] =", repr((J @ J.T)[5, 5]))
