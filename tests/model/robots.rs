//! The three robots of the manifest and the built-in bodies: sizes, masses, frames,
//! geometry, reference configurations.

use contactbench::dynamics::{self, Data};
use contactbench::model::robots::{load_robot, manifest};
use contactbench::model::{FrameKind, FreeBodiesBuilder, GeometryShape, JointKind};
use nalgebra::{Isometry3, Vector3};

#[test]
fn robots_have_pinocchio_sizes_masses_and_frames() {
    for (robot, nq, nv, mass, frames) in [
        (
            "solo12",
            19,
            18,
            2.50000279,
            vec!["FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT", "base_link"],
        ),
        (
            "talos",
            39,
            38,
            90.272192,
            vec!["left_sole_link", "right_sole_link", "root_joint"],
        ),
        (
            "allegro",
            16,
            16,
            0.9549,
            vec!["palm_link", "link_3.0_tip", "link_15.0_tip"],
        ),
    ] {
        let model = load_robot(robot).unwrap();
        assert_eq!((model.nq(), model.nv()), (nq, nv), "{robot}");
        assert!(
            (model.total_mass() - mass).abs() < 1e-9,
            "{robot}: {}",
            model.total_mass()
        );
        assert_eq!(model.has_free_flyer(), robot != "allegro");
        for f in frames {
            model.frame_id(f).unwrap_or_else(|e| panic!("{robot}: {e}"));
        }
        assert!(!model.geometries.is_empty(), "{robot}: no geometry");
        for g in &model.geometries {
            assert!(g.parent_joint < model.njoints());
            if let GeometryShape::Mesh { path, .. } = &g.shape {
                assert!(
                    path.is_absolute() && path.is_file(),
                    "{robot}: {}",
                    path.display()
                );
            }
        }
        assert_eq!(model.limits.lower_position.len(), nq);
        assert_eq!(model.limits.velocity.len(), nv);
    }
}

#[test]
fn fixed_joint_links_are_merged_with_their_frames_kept() {
    let model = load_robot("solo12").unwrap();
    let foot = &model.frames[model.frame_id("FL_FOOT").unwrap()];
    assert_eq!(foot.kind, FrameKind::Body);
    assert_eq!(model.joints[foot.parent_joint].name, "FL_KFE");
    assert!(foot.placement.translation.vector.norm() > 0.1);
    let ankle = &model.frames[model.frame_id("FL_ANKLE").unwrap()];
    assert_eq!(ankle.kind, FrameKind::FixedJoint);
    // The fixed joints add no joint: world, free flyer, 12 revolute joints.
    assert_eq!(model.njoints(), 14);
    assert!(model.joints[2..]
        .iter()
        .all(|j| matches!(j.kind, JointKind::Revolute { .. })));
}

#[test]
fn reference_configurations_come_from_the_srdf() {
    let solo = load_robot("solo12").unwrap();
    let q = solo.reference_configuration("standing").unwrap();
    assert_eq!(q[2], 0.235);
    assert_eq!(q[solo.joints[solo.joint_id("FL_HFE").unwrap()].idx_q], 0.8);
    assert!(solo.reference_configuration("straight_standing").is_ok());
    let talos = load_robot("talos").unwrap();
    let q = talos.reference_configuration("half_sitting").unwrap();
    assert_eq!(q[2], 1.01927);
    // Half sitting: the soles are level with each other, below the base.
    let mut data = Data::new(&talos);
    dynamics::forward_kinematics(&talos, &mut data, &q).unwrap();
    let left = data.omf[talos.frame_id("left_sole_link").unwrap()]
        .translation
        .vector;
    let right = data.omf[talos.frame_id("right_sole_link").unwrap()]
        .translation
        .vector;
    assert!(
        (left.z - right.z).abs() < 1e-9 && left.z < 0.05,
        "{left} {right}"
    );
    let err = load_robot("allegro")
        .unwrap()
        .reference_configuration("open")
        .unwrap_err();
    assert!(err.to_string().contains("open"));
}

#[test]
fn manifest_lists_three_robots_from_one_wheel() {
    let m = manifest().unwrap();
    assert_eq!(m.names(), ["solo12", "talos", "allegro"]);
    assert_eq!(m.version, "6.0.0");
    assert_eq!(m.wheel_sha256.len(), 64);
    assert!(m
        .robots
        .iter()
        .all(|r| m.is_fetched(r) || !m.package_dir().exists()));
}

#[test]
fn free_bodies_share_one_model() {
    let mut builder = FreeBodiesBuilder::new("stack");
    let light = builder
        .add_box("light_cube", 1.0, Vector3::repeat(0.1))
        .unwrap();
    let heavy = builder
        .add_box("heavy_cube", 1000.0, Vector3::repeat(0.1))
        .unwrap();
    let ball = builder.add_sphere("ball", 0.5, 0.05).unwrap();
    assert!(builder.add_sphere("bad", -1.0, 0.1).is_err());
    assert!(builder
        .add_box("flat", 1.0, Vector3::new(0.1, 0.0, 0.1))
        .is_err());
    let mut model = builder.build();
    assert_eq!((light, heavy, ball), (1, 2, 3));
    assert_eq!((model.nq(), model.nv()), (21, 18));
    assert!((model.total_mass() - 1001.5).abs() < 1e-12);
    assert_eq!(model.geometries.len(), 3);
    // A cube's inertia: m (a² + b²) / 12 with full side 0.2.
    assert!((model.inertias[light].rotational[(0, 0)] - 1.0 * 0.08 / 12.0).abs() < 1e-15);
    for (k, corner) in [Vector3::new(0.1, 0.1, -0.1), Vector3::new(-0.1, 0.1, -0.1)]
        .into_iter()
        .enumerate()
    {
        model
            .add_geometry(
                &format!("corner_{k}"),
                heavy,
                Isometry3::translation(corner.x, corner.y, corner.z),
                GeometryShape::Sphere { radius: 1e-3 },
            )
            .unwrap();
    }
    assert_eq!(model.geometries.len(), 5);
    assert!(model
        .add_geometry(
            "x",
            7,
            Isometry3::identity(),
            GeometryShape::Sphere { radius: 1.0 }
        )
        .is_err());
    let q = model.neutral_configuration();
    assert_eq!(q[6], 1.0);
    assert_eq!(q[13], 1.0);
    model.frame_id("heavy_cube").unwrap();
}
