"""A run folder as a Rerun recording: ``write_run`` writes the folder ``contactbench run``
writes, ``export_rerun`` replays it into an ``.rrd`` file, and the Rerun SDK's own reader
(``rerun.chunk.RrdReader``) finds the meshes, one pose per step on the ``sim_time`` time
line, and the contacts."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import rerun as rr

import contactbench as cb
from conftest import SCENARIOS


def entity_rows(rrd: Path) -> dict:
    """Rows per entity path over the recording's chunks (static and temporal), from the
    chunk summary of Rerun's reader."""
    store = rr.chunk.RrdReader(rrd).stream().collect()
    rows: dict = {}
    for line in store.summary().splitlines():
        match = re.match(r"\s*(\S+)\s+rows=(\d+)\s+static=(True|False)\s+timelines=\[([^\]]*)\]", line)
        assert match, line
        path, n, static, timelines = match.groups()
        key = (path, static == "True")
        rows[key] = rows.get(key, 0) + int(n)
        if static == "False":
            assert "sim_time" in timelines and "step" in timelines, line
    return rows


def recorded(tmp_path: Path, scenario: str, duration: float) -> Path:
    run = tmp_path / "run"
    outcome = cb.write_run(SCENARIOS / scenario, run, set=[f"simulation.duration={duration}"])
    assert outcome == "completed"
    return run


def test_a_pile_run_is_a_recording_with_each_cube_s_pose_per_step_and_its_contacts(tmp_path: Path):
    run = recorded(tmp_path, "pile_pyramid.yaml", 0.01)
    rrd = tmp_path / "pile.rrd"
    written = cb.export_rerun(run, rrd)
    assert written["steps"] == 11
    assert written["contacts"] > 0
    rows = entity_rows(rrd)
    cubes = [p for (p, static) in rows if static and p.startswith("/world/") and p != "/world/ground"]
    assert len(cubes) == written["objects"] - 1 and cubes
    for cube in cubes:
        assert rows[(cube, False)] == 11, cube
    for entity in ("/contacts/points", "/contacts/normals", "/contacts/forces"):
        assert rows[(entity, False)] == 11, entity


def test_a_solo_run_shows_its_links_and_its_feet_on_the_ground(tmp_path: Path):
    run = recorded(tmp_path, "solo_standing.yaml", 0.005)
    trajectory = cb._native.run_trajectory(run)
    names = [o["name"] for o in trajectory["objects"]]
    assert "ground" in names and len(names) > 10
    assert trajectory["poses"].shape == (6, len(names), 7)
    last = trajectory["contacts"][-1]
    assert len(last["points"]) == 4
    assert abs(last["points"][:, 2]).max() < 0.01
    assert (last["forces"][:, 2] > 0).all()
    written = cb.export_rerun(run, tmp_path / "solo.rrd")
    assert written["steps"] == 6


def test_a_folder_that_is_not_a_run_is_refused_naming_it(tmp_path: Path):
    with pytest.raises(cb.RecordError, match="not a run folder") as raised:
        cb.export_rerun(tmp_path, tmp_path / "x.rrd")
    assert raised.value.path == str(tmp_path)
    assert not (tmp_path / "x.rrd").exists()


def test_an_existing_recording_is_not_replaced_without_force(tmp_path: Path):
    run = recorded(tmp_path, "ball_drop.yaml", 0.005)
    rrd = tmp_path / "ball.rrd"
    rrd.write_bytes(b"mine")
    with pytest.raises(FileExistsError):
        cb.export_rerun(run, rrd)
    assert rrd.read_bytes() == b"mine"
    assert cb.export_rerun(run, rrd, force=True)["steps"] == 6


def test_python_m_contactbench_view_writes_the_recording(tmp_path: Path, capsys):
    from contactbench.__main__ import main

    run = recorded(tmp_path, "ball_drop.yaml", 0.005)
    assert main(["view", str(run), "--rrd", str(tmp_path / "ball.rrd")]) == 0
    assert "6 steps" in capsys.readouterr().out
    assert main(["view", str(tmp_path / "nothing"), "--rrd", str(tmp_path / "y.rrd")]) == 1
    assert "not a run folder" in capsys.readouterr().err


def test_every_mesh_carries_a_normal_per_vertex_and_the_ground_only_its_upper_face(tmp_path: Path):
    from contactbench.viewer import _flat_shaded

    run = recorded(tmp_path, "pile_pyramid.yaml", 0.005)
    rrd = tmp_path / "pile.rrd"
    cb.export_rerun(run, rrd)
    summary = rr.chunk.RrdReader(rrd).stream().collect().summary().splitlines()
    meshes = [line for line in summary if "Mesh3D:vertex_positions" in line]
    assert len(meshes) == cb.export_rerun(run, rrd, force=True)["objects"]
    assert all("Mesh3D:vertex_normals" in line for line in meshes)

    ground = cb._native.run_trajectory(run)["objects"][0]
    assert ground["role"] == "ground" and len(ground["triangles"]) == 12
    positions, normals = _flat_shaded(ground["vertices"], ground["triangles"], upward_only=True)
    assert positions.shape == normals.shape == (6, 3)
    assert (normals == [0.0, 0.0, 1.0]).all()
