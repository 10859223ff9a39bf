"""load_robot: the robots of the manifest and URDF files, checked against Pinocchio's
values (tests/data/pinocchio_solo12.json, written by Pinocchio 4.1.0)."""

from __future__ import annotations

import json

import numpy as np
import pytest

import contactbench as cb
from conftest import DATA

GOLD = json.loads((DATA / "pinocchio_solo12.json").read_text())


@pytest.fixture(scope="module")
def solo():
    return cb.load_robot("solo12")


def test_solo12_basics(solo):
    assert (solo.name, solo.nq, solo.nv, solo.free_flyer) == ("solo12", 19, 18, True)
    assert abs(solo.total_mass - GOLD["total_mass"]) <= 1e-14
    assert solo.joint_names == GOLD["joint_names"]
    assert {"FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"} <= set(solo.frame_names)
    assert "standing" in solo.reference_configurations
    standing = solo.reference_configuration("standing")
    assert standing.shape == (19,)
    assert np.array_equal(standing, solo.reference_configurations["standing"])
    neutral = solo.neutral_configuration()
    assert np.array_equal(neutral[3:7], [0.0, 0.0, 0.0, 1.0])


def gap(a, b) -> float:
    return float(np.abs(np.asarray(a) - np.asarray(b)).max())


@pytest.mark.parametrize("case", range(len(GOLD["cases"])))
def test_solo12_agrees_with_pinocchio(solo, case):
    """Largest gaps measured over the three cases: M 8.9e-16, kinetic energy 2.2e-16,
    potential 0, frame positions 1.1e-16, rotations 8.9e-16, Jacobians 2.2e-16."""
    c = GOLD["cases"][case]
    q, v = np.array(c["q"]), np.array(c["v"])
    assert gap(solo.mass_matrix(q), c["mass_matrix"]) <= 5e-15
    assert gap(solo.kinetic_energy(q, v), c["kinetic_energy"]) <= 2e-15
    assert gap(solo.potential_energy(q), c["potential_energy"]) <= 1e-15
    for frame, gold in c["frames"].items():
        position, rotation = solo.frame_placement(frame, q)
        assert gap(position, gold["position"]) <= 1e-15
        assert gap(rotation, gold["rotation"]) <= 5e-15
        jacobian = solo.frame_jacobian(frame, q)
        assert jacobian.shape == (3, 18)
        assert gap(jacobian, gold["jacobian_linear_world_aligned"]) <= 2e-15


def test_a_urdf_file_loads_with_its_root_joint():
    fixed = cb.load_robot(DATA / "model_pendulum.urdf")
    free = cb.load_robot(str(DATA / "model_pendulum.urdf"), free_flyer=True)
    assert not fixed.free_flyer and free.free_flyer
    assert free.nq == fixed.nq + 7 and free.nv == fixed.nv + 6


def test_robot_errors_name_what_is_wrong(solo, tmp_path):
    with pytest.raises(cb.ModelError, match=r"^unknown robot 'nope' \(known: ") as caught:
        cb.load_robot("nope")
    assert (caught.value.kind, caught.value.field) == ("unknown_robot", "nope")
    with pytest.raises(cb.ModelError, match=r"^model 'solo12': unknown frame 'FOOT'$"):
        solo.frame_placement("FOOT", solo.neutral_configuration())
    with pytest.raises(cb.ModelError, match=r"unknown reference configuration 'sitting' \(known: standing"):
        solo.reference_configuration("sitting")
    with pytest.raises(cb.DynamicsError, match=r"^q: expected nq = 19, got 3$"):
        solo.mass_matrix(np.zeros(3))
    bad = tmp_path / "bad.urdf"
    bad.write_text("<robot name='x'><link name='a'/><joint name='j' type='revolute'>"
                   "<parent link='a'/><child link='b'/></joint></robot>")
    with pytest.raises(cb.ModelError) as caught:
        cb.load_robot(bad)
    assert caught.value.path == str(bad)
