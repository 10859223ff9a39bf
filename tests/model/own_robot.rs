//! A user's own robot in a scenario: `robot:` takes a URDF path, with
//! package directories for `package://` meshes (OBJ as well as STL) and an SRDF; a
//! missing or broken URDF or mesh is an error that names the file.

use std::path::{Path, PathBuf};

use contactbench::model::robots;
use contactbench::simulation::{simulate, Scenario};
use contactbench::solvers::{SolverId, SolverSpec};

fn data(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/own_robot")
        .join(path)
}

fn temp(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "contactbench-own-robot-{name}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
    dir
}

#[test]
fn a_ball_rests_on_a_urdf_robots_obj_mesh() {
    let scenario = Scenario::load(&data("box_robot.yaml"), &[]).unwrap_or_else(|e| panic!("{e}"));
    let record =
        simulate(&scenario, &SolverSpec::new(SolverId::NcpAdmm)).unwrap_or_else(|e| panic!("{e}"));
    assert!(record.failure.is_none(), "{:?}", record.failure);
    // The OBJ cube's top face is at z = 0.3 m: the ball (radius 0.05 m) rests at 0.35 m
    // (it would fall through without the mesh).
    let last = record.steps.last().unwrap_or_else(|| panic!("no step"));
    let z = last.q[2];
    // Measured 0.35 + 1.5e-9 m.
    assert!((z - 0.35).abs() < 2e-8, "final ball height {z}");
    assert_eq!(last.contacts.len(), 1);
}

#[test]
fn solo12_by_urdf_path_runs_as_by_name() {
    let manifest = robots::manifest().unwrap_or_else(|e| panic!("{e}"));
    let entry = manifest.robot("solo12").unwrap_or_else(|e| panic!("{e}"));
    manifest.fetch(false).unwrap_or_else(|e| panic!("{e}"));
    let urdf = manifest.robots_dir().join(&entry.urdf);
    let srdf = manifest.robots_dir().join(
        entry
            .srdf
            .as_ref()
            .unwrap_or_else(|| panic!("solo12 has an SRDF")),
    );
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/solo_standing.yaml");
    let text = std::fs::read_to_string(&shipped).unwrap_or_else(|e| panic!("{e}"));
    let by_path = text.replace(
        "  robot: solo12\n",
        &format!(
            "  robot: {}\n  robot_root: free_flyer\n  robot_srdf: {}\n  robot_packages: [{}]\n",
            urdf.display(),
            srdf.display(),
            manifest.package_dir().join("share").display()
        ),
    );
    assert_ne!(by_path, text);
    let dir = temp("solo");
    let file = dir.join("solo_by_path.yaml");
    std::fs::write(&file, by_path).unwrap_or_else(|e| panic!("{e}"));
    let short = ["simulation.duration=0.05".to_string()];
    let spec = SolverSpec::new(SolverId::NcpAdmm);
    let run = |path: &Path| {
        let scenario = Scenario::load(path, &short).unwrap_or_else(|e| panic!("{e}"));
        simulate(&scenario, &spec).unwrap_or_else(|e| panic!("{e}"))
    };
    let (a, b) = (run(&shipped), run(&file));
    assert!(a.failure.is_none() && b.failure.is_none());
    let last = |r: &contactbench::simulation::recorder::RunRecord| {
        r.steps.last().map(|s| s.q.as_slice().to_vec())
    };
    assert_eq!(last(&a), last(&b));
}

/// The error of building the world of `yaml` written in a scenario file in `dir`, with
/// its sources, as the command line prints it.
fn world_error(dir: &Path, yaml: &str) -> String {
    let file = dir.join("scenario.yaml");
    std::fs::write(&file, yaml).unwrap_or_else(|e| panic!("{e}"));
    let scenario = Scenario::load(&file, &[]).unwrap_or_else(|e| panic!("{e}"));
    match contactbench::simulation::World::build(&scenario) {
        Ok(_) => panic!("the world of {yaml} built"),
        Err(e) => {
            let mut text = e.to_string();
            let mut source = std::error::Error::source(&e);
            while let Some(cause) = source {
                text.push_str(&format!(": {cause}"));
                source = cause.source();
            }
            text
        }
    }
}

#[test]
fn missing_and_broken_urdf_and_meshes_name_the_file() {
    let dir = temp("errors");
    let scenario = |robot: &str, packages: &str| {
        format!(
            "name: t\nworld:\n  robot: {robot}\n  robot_packages: [{packages}]\n\
             solvers:\n  - {{solver: ncp-admm}}\nsimulation: {{dt: 1.0e-3, duration: 0.01}}\n"
        )
    };
    // A URDF that is not there.
    let err = world_error(&dir, &scenario("nowhere.urdf", ""));
    assert!(
        err.contains("world.robot") && err.contains("nowhere.urdf"),
        "{err}"
    );
    // A URDF that is not XML.
    std::fs::write(dir.join("broken.urdf"), "<robot name='x'><link name=")
        .unwrap_or_else(|e| panic!("{e}"));
    let err = world_error(&dir, &scenario("broken.urdf", ""));
    assert!(
        err.contains("broken.urdf") && err.contains("malformed URDF"),
        "{err}"
    );
    // The box's package:// mesh without its package directory.
    let urdf = data("box_robot.urdf");
    std::fs::copy(&urdf, dir.join("box_robot.urdf")).unwrap_or_else(|e| panic!("{e}"));
    let err = world_error(&dir, &scenario("box_robot.urdf", ""));
    assert!(err.contains("box.obj"), "{err}");
    // An OBJ mesh that is not one.
    let meshes = dir.join("pkgs/box_robot/meshes");
    std::fs::create_dir_all(&meshes).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(meshes.join("box.obj"), "v 1 2\nf 1 x\n").unwrap_or_else(|e| panic!("{e}"));
    let err = world_error(&dir, &scenario("box_robot.urdf", "pkgs"));
    assert!(err.contains("box.obj") && err.contains("OBJ"), "{err}");
}
