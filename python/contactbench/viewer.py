"""A recorded run as a Rerun recording (``.rrd``), opened by the Rerun viewer
(``rerun out.rrd``; ``pip install rerun-sdk``).

The run folder (``OUT/<scenario>/<solver>`` of ``contactbench run --out OUT``) is replayed by
the Rust crate (:func:`contactbench._native.run_trajectory`): the world of the scenario the
run recorded, the poses of its objects from the recorded configurations, and each step's
contacts. This module only logs them:

- ``world/<object>``: each object's mesh (static), and its pose per step
  (``rr.Transform3D``);
- ``contacts/points``, ``contacts/normals`` (5 cm arrows) and ``contacts/forces`` (arrows
  along the force, the largest of the run 0.3 m long) per step;
- time lines ``sim_time`` (the simulated time, s) and ``step``.
"""

from __future__ import annotations

import os
from typing import Any, Dict

import numpy as np

from ._native import run_trajectory

#: Length (m) of a contact normal's arrow.
NORMAL_LENGTH = 0.05
#: Length (m) of the largest contact force's arrow.
FORCE_LENGTH = 0.3

#: Colours (RGB) of the ground and the links, and of the bodies in turn: those of
#: `contactbench view --png`.
_GROUND_COLOUR = (158, 168, 153)
_LINK_COLOUR = (184, 189, 204)
_BODY_COLOURS = [(217, 140, 89), (115, 153, 217), (153, 191, 115), (204, 179, 102), (179, 128, 191)]


def _rerun() -> Any:
    try:
        import rerun
    except ImportError as error:
        raise ImportError(
            "contactbench.export_rerun needs the Rerun SDK: pip install rerun-sdk "
            "(python/install.sh installs it)"
        ) from error
    return rerun


def _force_scale(contacts: list) -> float:
    """Metres of arrow per newton: the largest force of the run is FORCE_LENGTH long."""
    largest = max(
        (float(np.linalg.norm(c["forces"], axis=1).max()) for c in contacts if len(c["forces"])),
        default=0.0,
    )
    return FORCE_LENGTH / largest if largest > 0.0 else 0.0


def _flat_shaded(vertices: np.ndarray, triangles: np.ndarray, *, upward_only: bool) -> "tuple[np.ndarray, np.ndarray]":
    """Three vertices of its own per triangle, each with the triangle's unit normal
    n = (b − a) × (c − a) / ‖(b − a) × (c − a)‖, so the viewer lights every face evenly
    (shared vertices would average the normals of a box's three faces at its corners).
    Triangles of no area are left out, and with `upward_only` those not facing up (the
    ground is a box of no thickness: its lower face would fight its upper one)."""
    corners = np.asarray(vertices, dtype=float)[np.asarray(triangles, dtype=np.int64)]
    normals = np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0])
    lengths = np.linalg.norm(normals, axis=1)
    kept = lengths > 0.0
    if upward_only:
        kept &= normals[:, 2] > 0.0
    normals = normals[kept] / lengths[kept, None]
    return corners[kept].reshape(-1, 3), np.repeat(normals, 3, axis=0)


def _colour(role: str, body_index: int) -> "tuple[int, int, int]":
    if role == "ground":
        return _GROUND_COLOUR
    if role == "link":
        return _LINK_COLOUR
    return _BODY_COLOURS[body_index % len(_BODY_COLOURS)]


def _log_meshes(rec: Any, rr: Any, trajectory: Dict[str, Any]) -> None:
    rec.log("world", rr.ViewCoordinates.RIGHT_HAND_Z_UP, static=True)
    bodies = 0
    for obj in trajectory["objects"]:
        positions, normals = _flat_shaded(
            obj["vertices"], obj["triangles"], upward_only=obj["role"] == "ground"
        )
        rec.log(
            f"world/{obj['name']}",
            rr.Mesh3D(
                vertex_positions=positions,
                vertex_normals=normals,
                triangle_indices=np.arange(len(positions), dtype=np.uint32).reshape(-1, 3),
                albedo_factor=_colour(obj["role"], bodies),
            ),
            static=True,
        )
        bodies += obj["role"] == "body"


def _log_poses(rec: Any, rr: Any, trajectory: Dict[str, Any]) -> None:
    indexes = [
        rr.TimeColumn("sim_time", duration=trajectory["time"]),
        rr.TimeColumn("step", sequence=trajectory["step"]),
    ]
    poses = trajectory["poses"]
    for k, obj in enumerate(trajectory["objects"]):
        rec.send_columns(
            f"world/{obj['name']}",
            indexes=indexes,
            columns=rr.Transform3D.columns(
                translation=poses[:, k, :3], quaternion=poses[:, k, 3:]
            ),
        )


def _log_contacts(rec: Any, rr: Any, trajectory: Dict[str, Any]) -> None:
    scale = _force_scale(trajectory["contacts"])
    for time, step, c in zip(trajectory["time"], trajectory["step"], trajectory["contacts"]):
        rec.set_time("sim_time", duration=float(time))
        rec.set_time("step", sequence=int(step))
        rec.log("contacts/points", rr.Points3D(c["points"], radii=0.008, colors=(220, 40, 40)))
        rec.log(
            "contacts/normals",
            rr.Arrows3D(origins=c["points"], vectors=c["normals"] * NORMAL_LENGTH, colors=(40, 80, 220)),
        )
        rec.log(
            "contacts/forces",
            rr.Arrows3D(origins=c["points"], vectors=c["forces"] * scale, colors=(240, 150, 30)),
        )


def export_rerun(run_dir: "str | os.PathLike[str]", out: "str | os.PathLike[str]", *, force: bool = False) -> Dict[str, Any]:
    """Writes the run in ``run_dir`` to the Rerun recording ``out`` (module docs); refuses
    to replace an existing file unless ``force``. Returns what was written: ``objects``,
    ``steps``, ``contacts`` (over all steps) and ``path``."""
    rr = _rerun()
    out = os.fspath(out)
    if os.path.lexists(out) and not force:
        raise FileExistsError(f"{out}: exists; pass force=True to replace it")
    trajectory = run_trajectory(os.fspath(run_dir))
    rec = rr.RecordingStream("contactbench")
    rec.save(out)
    rec.send_recording_name(f"{trajectory['scenario']} · {trajectory['solver']}")
    _log_meshes(rec, rr, trajectory)
    _log_poses(rec, rr, trajectory)
    _log_contacts(rec, rr, trajectory)
    rec.flush()
    rec.disconnect()
    return {
        "path": out,
        "objects": len(trajectory["objects"]),
        "steps": len(trajectory["time"]),
        "contacts": sum(len(c["points"]) for c in trajectory["contacts"]),
    }
