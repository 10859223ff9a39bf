//! Bad input gives a typed error naming the file and the element, never a panic.

use std::path::PathBuf;

use contactbench::dynamics::{self, Data, DynamicsError};
use contactbench::model::robots::load_robot;
use contactbench::model::{Model, ModelError, RootJoint};
use nalgebra::DVector;

/// Writes `text` to a fresh file in a per-process temporary directory.
fn write(name: &str, text: &str) -> PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("contactbench-model-errors-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

const LINK_A: &str = r#"<link name="a"><inertial><mass value="1"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>"#;

/// A link with mass, so that the joint moving it moves something.
const LINK_B: &str = r#"<link name="b"><inertial><mass value="1"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>"#;

fn joint(name: &str, kind: &str, parent: &str, child: &str) -> String {
    format!(
        r#"<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/><axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>"#
    )
}

fn load(name: &str, text: &str) -> (PathBuf, Result<Model, ModelError>) {
    let path = write(name, text);
    let result = Model::from_urdf(&path, RootJoint::Fixed);
    (path, result)
}

fn assert_names(err: &ModelError, parts: &[&str]) {
    let text = err.to_string();
    for part in parts {
        assert!(text.contains(part), "'{text}' does not name '{part}'");
    }
}

#[test]
fn a_valid_two_link_urdf_loads() {
    let text = format!(
        r#"<robot name="r">{LINK_A}{LINK_B}{}</robot>"#,
        joint("j", "revolute", "a", "b")
    );
    let (_, model) = load("valid.urdf", &text);
    let model = model.unwrap();
    assert_eq!((model.nq(), model.nv()), (1, 1));
}

#[test]
fn truncated_or_malformed_urdf() {
    for (name, text) in [
        (
            "truncated.urdf",
            format!(r#"<robot name="r">{LINK_A}<link name="b">"#),
        ),
        ("garbage.urdf", "this is not xml".to_string()),
        ("empty.urdf", String::new()),
        ("wrong_root.urdf", "<model/>".to_string()),
    ] {
        let (path, result) = load(name, &text);
        let err = result.unwrap_err();
        assert!(
            matches!(err, ModelError::MalformedUrdf { .. }),
            "{name}: {err:?}"
        );
        assert_names(&err, &[&path.display().to_string()]);
    }
}

#[test]
fn bad_or_missing_inertial_fields_name_the_link_and_line() {
    for (name, inertial, expected) in [
        (
            "bad_number.urdf",
            r#"<mass value="heavy"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/>"#,
            "mass value=\"heavy\"",
        ),
        (
            "no_inertia.urdf",
            r#"<mass value="1"/>"#,
            "without <inertia",
        ),
        (
            "bad_izz.urdf",
            r#"<mass value="1"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0"/>"#,
            "izz",
        ),
    ] {
        let text = format!(
            "<robot name=\"r\">\n{LINK_A}\n<link name=\"leg\">\n<inertial>{inertial}</inertial></link></robot>"
        );
        let (path, result) = load(name, &text);
        let err = result.unwrap_err();
        assert!(
            matches!(err, ModelError::InvalidElement { .. }),
            "{name}: {err:?}"
        );
        assert_names(
            &err,
            &[
                &path.display().to_string(),
                "link 'leg'",
                "line 4",
                expected,
            ],
        );
    }
}

#[test]
fn missing_file() {
    let err = Model::from_urdf("/nonexistent/robot.urdf", RootJoint::Fixed).unwrap_err();
    assert!(matches!(err, ModelError::Io { .. }), "{err:?}");
    assert_names(&err, &["/nonexistent/robot.urdf"]);
}

#[test]
fn unknown_or_unsupported_joint_type() {
    for kind in ["banana", "floating", "planar"] {
        let text = format!(
            r#"<robot name="r">{LINK_A}{LINK_B}{}</robot>"#,
            joint("weird_joint", kind, "a", "b")
        );
        let (path, result) = load(&format!("joint_{kind}.urdf"), &text);
        let err = result.unwrap_err();
        assert!(
            matches!(err, ModelError::UnsupportedJointType { .. }),
            "{err:?}"
        );
        assert_names(&err, &[&path.display().to_string(), "weird_joint", kind]);
    }
}

#[test]
fn missing_mesh() {
    let text = r#"<robot name="r"><link name="shell"><collision><geometry><mesh filename="package://nowhere/meshes/shell.stl"/></geometry></collision></link></robot>"#;
    let (path, result) = load("mesh.urdf", text);
    let err = result.unwrap_err();
    assert!(matches!(err, ModelError::MissingMesh { .. }), "{err:?}");
    assert_names(
        &err,
        &[
            &path.display().to_string(),
            "shell",
            "package://nowhere/meshes/shell.stl",
        ],
    );
}

#[test]
fn negative_mass_or_non_positive_definite_inertia() {
    for (name, inertial) in [
        (
            "negative_mass",
            r#"<mass value="-1"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/>"#,
        ),
        (
            "indefinite",
            r#"<mass value="1"/><inertia ixx="1" ixy="0" ixz="0" iyy="-1" iyz="0" izz="1"/>"#,
        ),
        (
            "off_diagonal",
            r#"<mass value="1"/><inertia ixx="1" ixy="2" ixz="0" iyy="1" iyz="0" izz="1"/>"#,
        ),
    ] {
        let text = format!(
            r#"<robot name="r">{LINK_A}<link name="bad_link"><inertial>{inertial}</inertial></link>{}</robot>"#,
            joint("j", "revolute", "a", "bad_link")
        );
        let (path, result) = load(&format!("{name}.urdf"), &text);
        let err = result.unwrap_err();
        assert!(
            matches!(err, ModelError::InvalidInertia { .. }),
            "{name}: {err:?}"
        );
        assert_names(&err, &[&path.display().to_string(), "bad_link"]);
    }
}

#[test]
fn loops_and_broken_trees() {
    let cases = [
        // b and c are each other's parent: detached loop.
        (
            "detached_loop",
            format!(
                r#"<robot name="r">{LINK_A}{LINK_B}<link name="c"/>{}{}</robot>"#,
                joint("j1", "revolute", "b", "c"),
                joint("j2", "revolute", "c", "b")
            ),
            "not reachable",
        ),
        // Every link has a parent.
        (
            "full_loop",
            format!(
                r#"<robot name="r">{LINK_A}{LINK_B}{}{}</robot>"#,
                joint("j1", "revolute", "a", "b"),
                joint("j2", "revolute", "b", "a")
            ),
            "no root",
        ),
        // b has two parents.
        (
            "two_parents",
            format!(
                r#"<robot name="r">{LINK_A}{LINK_B}<link name="c"/>{}{}{}</robot>"#,
                joint("j1", "revolute", "a", "b"),
                joint("j2", "revolute", "a", "c"),
                joint("j3", "revolute", "c", "b")
            ),
            "'b'",
        ),
        // two roots.
        (
            "two_roots",
            format!(r#"<robot name="r">{LINK_A}{LINK_B}</robot>"#),
            "several root links",
        ),
    ];
    for (name, text, says) in cases {
        let (path, result) = load(&format!("{name}.urdf"), &text);
        let err = result.unwrap_err();
        assert!(
            matches!(err, ModelError::NotATree { .. }),
            "{name}: {err:?}"
        );
        assert_names(&err, &[&path.display().to_string(), says]);
    }
    let text = format!(
        r#"<robot name="r">{LINK_A}{}</robot>"#,
        joint("j", "revolute", "a", "ghost")
    );
    let (_, result) = load("unknown_link.urdf", &text);
    let err = result.unwrap_err();
    assert!(matches!(err, ModelError::UnknownLink { .. }), "{err:?}");
    assert_names(&err, &["ghost", "'j'"]);
}

#[test]
fn zero_joint_axis() {
    let text = format!(
        r#"<robot name="r">{LINK_A}{LINK_B}{}</robot>"#,
        joint("j", "revolute", "a", "b").replace("0 0 1", "0 0 0")
    );
    let (_, result) = load("zero_axis.urdf", &text);
    let err = result.unwrap_err();
    assert!(matches!(err, ModelError::InvalidElement { .. }), "{err:?}");
    assert_names(&err, &["'j'", "axis"]);
}

#[test]
fn bad_srdf() {
    let text = format!(
        r#"<robot name="r">{LINK_A}{LINK_B}{}</robot>"#,
        joint("j", "revolute", "a", "b")
    );
    let (_, model) = load("srdf_robot.urdf", &text);
    let mut model = model.unwrap();
    let srdf = write(
        "bad.srdf",
        r#"<robot name="r"><group_state name="pose" group="all"><joint name="j" value="1 2"/></group_state></robot>"#,
    );
    let err = model.load_srdf(&srdf).unwrap_err();
    assert!(matches!(err, ModelError::Srdf { .. }), "{err:?}");
    assert_names(&err, &["bad.srdf", "'pose'", "'j'"]);
    let srdf = write(
        "good.srdf",
        r#"<robot name="r"><group_state name="pose" group="all"><joint name="j" value="0.5"/><joint name="not_in_model" value="3"/></group_state></robot>"#,
    );
    model.load_srdf(&srdf).unwrap();
    assert_eq!(
        model.reference_configuration("pose").unwrap(),
        DVector::from_vec(vec![0.5])
    );
    let err = model.reference_configuration("sitting").unwrap_err();
    assert_names(&err, &["sitting", "pose"]);
}

#[test]
fn srdf_disabled_collision_pairs_are_read_in_name_order() {
    let text = format!(
        r#"<robot name="r">{LINK_A}{LINK_B}{}</robot>"#,
        joint("j", "revolute", "a", "b")
    );
    let (_, model) = load("srdf_pairs_robot.urdf", &text);
    let mut model = model.unwrap();
    let srdf = write(
        "pairs.srdf",
        r#"<robot name="r"><disable_collisions link1="b" link2="a" reason="Adjacent"/></robot>"#,
    );
    model.load_srdf(&srdf).unwrap();
    let pairs: Vec<(String, String)> = model.disabled_collisions.iter().cloned().collect();
    assert_eq!(pairs, vec![("a".to_string(), "b".to_string())]);
    assert!(!model.self_collision_allowed(0, "a", 1, "b"));
}

#[test]
fn a_malformed_srdf_is_refused_naming_its_file_and_line() {
    let (_, model) = load(
        "srdf_lines_robot.urdf",
        &format!(r#"<robot name="r">{LINK_A}</robot>"#),
    );
    let mut model = model.unwrap();
    let missing = write(
        "missing_link2.srdf",
        "<robot name=\"r\">\n\n  <disable_collisions link1=\"a\"/>\n</robot>\n",
    );
    let err = model.load_srdf(&missing).unwrap_err();
    assert!(matches!(err, ModelError::Srdf { .. }), "{err:?}");
    assert_names(&err, &["missing_link2.srdf", "line 3", "link2"]);
    let unclosed = write(
        "unclosed.srdf",
        "<robot name=\"r\">\n  <disable_collisions link1=\"a\" link2=\"b\">\n</robot>\n",
    );
    let err = model.load_srdf(&unclosed).unwrap_err();
    assert!(matches!(err, ModelError::Srdf { .. }), "{err:?}");
    assert_names(&err, &["unclosed.srdf", "line 3"]);
}

#[test]
fn wrong_sizes_unknown_frames_and_bad_configurations() {
    let model = load_robot("solo12").unwrap();
    let mut data = Data::new(&model);
    let q = model.reference_configuration("standing").unwrap();
    let err = dynamics::crba(&model, &mut data, &DVector::zeros(18)).unwrap_err();
    assert_eq!(err.to_string(), "q: expected nq = 19, got 18");
    let err = dynamics::nonlinear_effects(&model, &mut data, &q, &DVector::zeros(12)).unwrap_err();
    assert_eq!(err.to_string(), "v: expected nv = 18, got 12");
    let v = DVector::zeros(18);
    let err = dynamics::aba(&model, &mut data, &q, &v, &DVector::zeros(3), None).unwrap_err();
    assert_eq!(err.to_string(), "tau: expected nv = 18, got 3");
    let err = dynamics::rnea(&model, &mut data, &q, &v, &v, Some(&[])).unwrap_err();
    assert!(
        matches!(err, DynamicsError::WrongSize { name: "fext", .. }),
        "{err:?}"
    );
    let err = dynamics::integrate(&model, &q, &DVector::zeros(6), 0.1).unwrap_err();
    assert!(
        matches!(err, DynamicsError::WrongSize { name: "v", .. }),
        "{err:?}"
    );
    let mut bad = q.clone();
    bad[6] = 2.0;
    let err = dynamics::forward_kinematics(&model, &mut data, &bad).unwrap_err();
    assert!(
        matches!(err, DynamicsError::NotUnitQuaternion { .. }),
        "{err:?}"
    );
    bad[6] = f64::NAN;
    let err = dynamics::potential_energy(&model, &mut data, &bad).unwrap_err();
    assert!(matches!(err, DynamicsError::NotFinite { .. }), "{err:?}");
    let err = model.frame_id("FL_TOE").unwrap_err();
    assert_names(&err, &["FL_TOE", "solo12"]);
    let err =
        dynamics::point_jacobian_world(&model, &data, 99, &nalgebra::Vector3::zeros()).unwrap_err();
    assert!(err.to_string().contains("99"), "{err}");
    let other = load_robot("allegro").unwrap();
    let err = dynamics::crba(&other, &mut data, &other.neutral_configuration()).unwrap_err();
    assert!(matches!(err, DynamicsError::DataMismatch { .. }), "{err:?}");
    let err = load_robot("atlas").unwrap_err();
    assert_names(&err, &["atlas", "solo12", "talos", "allegro"]);
}
