#!/usr/bin/env python3
"""Writes a URDF with N links on stdout, to measure how loading scales with the links.

    python3 tools/long_urdf.py 10000 chain > /tmp/chain10k.urdf
    python3 tools/long_urdf.py 10000 star > /tmp/star10k.urdf
    contactbench model /tmp/chain10k.urdf

`chain`: every link hangs from the previous one by a revolute joint (a 10,000-link arm);
`star`: every link hangs from the root. Each link has an inertial and a box collision
geometry, as a robot's links do.
"""

import sys


def link(k: int) -> str:
    return (
        f'  <link name="link_{k}">\n'
        '    <inertial><origin xyz="0 0 0.05" rpy="0 0 0"/><mass value="0.1"/>\n'
        '      <inertia ixx="1e-4" ixy="0" ixz="0" iyy="1e-4" iyz="0" izz="1e-4"/></inertial>\n'
        '    <collision><origin xyz="0 0 0.05"/><geometry><box size="0.02 0.02 0.1"/></geometry></collision>\n'
        "  </link>\n"
    )


def joint(k: int, parent: int) -> str:
    return (
        f'  <joint name="joint_{k}" type="revolute">\n'
        f'    <parent link="link_{parent}"/><child link="link_{k}"/>\n'
        '    <origin xyz="0 0 0.1" rpy="0 0 0"/><axis xyz="0 1 0"/>\n'
        '    <limit lower="-1" upper="1" effort="10" velocity="5"/>\n'
        "  </joint>\n"
    )


def main() -> None:
    if len(sys.argv) != 3 or sys.argv[2] not in ("chain", "star"):
        sys.exit("usage: long_urdf.py N chain|star")
    n = int(sys.argv[1])
    out = sys.stdout
    out.write('<?xml version="1.0"?>\n<robot name="long">\n')
    for k in range(n):
        out.write(link(k))
        if k > 0:
            out.write(joint(k, k - 1 if sys.argv[2] == "chain" else 0))
    out.write("</robot>\n")


if __name__ == "__main__":
    main()
