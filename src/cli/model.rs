//! `contactbench model ROBOT`: a robot's model and, given a configuration, its dynamics
//! quantities as JSON with the field names of the Pinocchio golden files
//! (`tests/data/pinocchio_*.json`), so that any library can be compared with this one.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use super::out::outln;
use anyhow::Context;
use contactbench::dynamics::{self, Data};
use contactbench::model::robots::{load_robot, Catalogue, NamedRobot};
use contactbench::model::{JointKind, Model, RootJoint};
use nalgebra::{DMatrix, DVector};
use serde_json::{json, Map, Value};

/// Arguments of `contactbench model`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// A robot by name (solo12, talos, allegro, or one of the user's manifest named by
    /// $CONTACTBENCH_ROBOTS) or a URDF file.
    robot: String,
    /// For a URDF file: give it a free-flyer root joint.
    #[arg(long)]
    free_flyer: bool,
    /// For a URDF file: an SRDF with reference configurations.
    #[arg(long)]
    srdf: Option<PathBuf>,
    /// Configuration q: a JSON array of nq numbers (free flyer [x y z qx qy qz qw] first).
    #[arg(long, value_name = "Q.json", conflicts_with = "config")]
    q: Option<PathBuf>,
    /// Configuration q: a reference configuration of the SRDF (e.g. standing).
    #[arg(long, value_name = "NAME")]
    config: Option<String>,
    /// Velocity v: a JSON array of nv numbers (default zero).
    #[arg(long, value_name = "V.json")]
    v: Option<PathBuf>,
    /// Torque tau: a JSON array of nv numbers (default zero).
    #[arg(long, value_name = "T.json")]
    tau: Option<PathBuf>,
    /// Frames whose placements and world-aligned linear Jacobians to report, comma
    /// separated (unless `--q` or `--config`: at the robot's reference configuration when
    /// its manifest names one, e.g. solo12's standing, else at the neutral one).
    #[arg(long, value_delimiter = ',')]
    frames: Vec<String>,
    /// Print the model's quantities as JSON on stdout instead of text.
    #[arg(long)]
    json: bool,
}

/// Runs the command.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let model = load(&args)?;
    for note in &model.notes {
        eprintln!("note: {}: {note}", model.name);
    }
    let q = match (&args.q, &args.config) {
        (Some(path), _) => Some(read_vector(path)?),
        (None, Some(name)) => Some(model.reference_configuration(name)?),
        // Frames asked for without a configuration: at the reference configuration the
        // robot's manifest names (solo12's standing, talos's half_sitting), else at the
        // neutral one (zero pose, identity base at the origin); said on stderr.
        (None, None) if !args.frames.is_empty() => match manifest_reference(&args.robot) {
            Some(name) => {
                eprintln!(
                    "note: --frames without --q or --config: at the reference configuration \
                     '{name}' of {}'s manifest",
                    model.name
                );
                Some(model.reference_configuration(&name)?)
            }
            None => {
                eprintln!("note: --frames without --q or --config: at the neutral configuration");
                Some(model.neutral_configuration())
            }
        },
        (None, None) => None,
    };
    let mut out = summary(&model);
    if let Some(q) = q {
        let v = optional_vector(args.v.as_deref(), model.nv())?;
        let tau = optional_vector(args.tau.as_deref(), model.nv())?;
        quantities(&model, &q, &v, &tau, &args.frames, &mut out)?;
    }
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&Value::Object(out))?);
    } else {
        print_text(&model, &out);
    }
    Ok(ExitCode::SUCCESS)
}

fn load(args: &Args) -> anyhow::Result<Model> {
    let path = Path::new(&args.robot);
    if path.extension().is_some_and(|e| e == "urdf") {
        let root = if args.free_flyer {
            RootJoint::FreeFlyer
        } else {
            RootJoint::Fixed
        };
        let mut model = Model::from_urdf(path, root)?;
        if let Some(srdf) = &args.srdf {
            model.load_srdf(srdf)?;
        }
        Ok(model)
    } else {
        Ok(load_robot(&args.robot)?)
    }
}

/// The reference configuration a named robot's manifest entry gives (built-in or the
/// user's), if any; none for a URDF path.
fn manifest_reference(robot: &str) -> Option<String> {
    if Path::new(robot).extension().is_some_and(|e| e == "urdf") {
        return None;
    }
    let catalogue = Catalogue::from_env().ok()?;
    match catalogue.robot(robot).ok()? {
        NamedRobot::Builtin(entry) => entry.reference.clone(),
        NamedRobot::User(user) => user.reference.clone(),
    }
}

fn read_vector(path: &Path) -> anyhow::Result<DVector<f64>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let values: Vec<f64> = serde_json::from_str(&text)
        .with_context(|| format!("{}: expected a JSON array of numbers", path.display()))?;
    Ok(DVector::from_vec(values))
}

fn optional_vector(path: Option<&Path>, n: usize) -> anyhow::Result<DVector<f64>> {
    path.map_or_else(|| Ok(DVector::zeros(n)), read_vector)
}

fn summary(model: &Model) -> Map<String, Value> {
    let joints: Vec<Value> = model
        .joints
        .iter()
        .enumerate()
        .skip(1)
        .map(|(i, j)| {
            json!({
                "index": i,
                "name": j.name,
                "type": joint_type(&j.kind),
                "parent": model.joints[j.parent].name,
                "idx_q": j.idx_q,
                "idx_v": j.idx_v,
                "lower": j_limits(&model.limits.lower_position, j.idx_q, j.nq()),
                "upper": j_limits(&model.limits.upper_position, j.idx_q, j.nq()),
            })
        })
        .collect();
    let frames: Vec<Value> = model
        .frames
        .iter()
        .map(|f| {
            json!({
                "name": f.name,
                "kind": format!("{:?}", f.kind),
                "parent_joint": model.joints[f.parent_joint].name,
            })
        })
        .collect();
    let mut out = Map::new();
    out.insert("robot".into(), json!(model.name));
    out.insert("nq".into(), json!(model.nq()));
    out.insert("nv".into(), json!(model.nv()));
    out.insert("total_mass".into(), json!(model.total_mass()));
    out.insert("free_flyer".into(), json!(model.has_free_flyer()));
    out.insert(
        "joint_names".into(),
        json!(model.joint_names()[1..].to_vec()),
    );
    out.insert(
        "reference_configurations".into(),
        json!(model.reference_configurations.keys().collect::<Vec<_>>()),
    );
    out.insert("joints".into(), Value::Array(joints));
    out.insert("frames_of_model".into(), Value::Array(frames));
    out.insert("geometries".into(), json!(model.geometries.len()));
    out
}

fn j_limits(v: &DVector<f64>, start: usize, n: usize) -> Value {
    // JSON has no infinity: unbounded limits are null.
    json!(v
        .rows(start, n)
        .iter()
        .map(|x| x.is_finite().then_some(*x))
        .collect::<Vec<_>>())
}

fn joint_type(kind: &JointKind) -> &'static str {
    match kind {
        JointKind::Universe => "universe",
        JointKind::FreeFlyer => "free-flyer",
        JointKind::Revolute { .. } => "revolute",
        JointKind::RevoluteUnbounded { .. } => "continuous",
        JointKind::Prismatic { .. } => "prismatic",
    }
}

fn quantities(
    model: &Model,
    q: &DVector<f64>,
    v: &DVector<f64>,
    tau: &DVector<f64>,
    frames: &[String],
    out: &mut Map<String, Value>,
) -> anyhow::Result<()> {
    let mut data = Data::new(model);
    let m = dynamics::crba(model, &mut data, q)?.clone();
    let nle = dynamics::nonlinear_effects(model, &mut data, q, v)?.clone();
    let g = dynamics::generalized_gravity(model, &mut data, q)?.clone();
    let ddq = dynamics::aba(model, &mut data, q, v, tau, None)?.clone();
    let ke = dynamics::kinetic_energy(model, &mut data, q, v)?;
    let pe = dynamics::potential_energy(model, &mut data, q)?;
    dynamics::forward_kinematics(model, &mut data, q)?;
    let mut frame_values = Map::new();
    for name in frames {
        let id = model.frame_id(name)?;
        let placement = data.omf[id];
        let rot = placement.rotation.to_rotation_matrix().into_inner();
        let jac = dynamics::frame_jacobian(model, &data, id)?;
        frame_values.insert(
            name.clone(),
            json!({
                "position": placement.translation.vector.as_slice(),
                "rotation": rows(&DMatrix::from_column_slice(3, 3, rot.as_slice())),
                "jacobian_linear_world_aligned": rows(&DMatrix::from_column_slice(3, model.nv(), jac.as_slice())),
            }),
        );
    }
    out.insert("q".into(), json!(q.as_slice()));
    out.insert("v".into(), json!(v.as_slice()));
    out.insert("tau".into(), json!(tau.as_slice()));
    out.insert("mass_matrix".into(), rows(&m));
    out.insert("nonlinear_effects".into(), json!(nle.as_slice()));
    out.insert("generalized_gravity".into(), json!(g.as_slice()));
    out.insert("aba_acceleration".into(), json!(ddq.as_slice()));
    out.insert("kinetic_energy".into(), json!(ke));
    out.insert("potential_energy".into(), json!(pe));
    out.insert("frames".into(), Value::Object(frame_values));
    Ok(())
}

fn rows(m: &DMatrix<f64>) -> Value {
    json!(m
        .row_iter()
        .map(|r| r.iter().copied().collect::<Vec<f64>>())
        .collect::<Vec<_>>())
}

fn print_text(model: &Model, out: &Map<String, Value>) {
    outln!("robot {}", model.name);
    outln!(
        "nq {}  nv {}  total mass {} kg  {}",
        model.nq(),
        model.nv(),
        model.total_mass(),
        if model.has_free_flyer() {
            "free-flyer base"
        } else {
            "fixed base"
        }
    );
    let refs: Vec<&String> = model.reference_configurations.keys().collect();
    if !refs.is_empty() {
        outln!(
            "reference configurations: {}",
            refs.iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    outln!("joints ({}):", model.njoints() - 1);
    for (i, j) in model.joints.iter().enumerate().skip(1) {
        outln!(
            "  {i:>3} {:<28} {:<10} parent {:<24} q[{}] v[{}]",
            j.name,
            joint_type(&j.kind),
            model.joints[j.parent].name,
            j.idx_q,
            j.idx_v
        );
    }
    outln!("frames ({}):", model.frames.len());
    for f in &model.frames {
        outln!(
            "  {:<36} {:<11} on {}",
            f.name,
            format!("{:?}", f.kind),
            model.joints[f.parent_joint].name
        );
    }
    outln!("collision geometries: {}", model.geometries.len());
    for key in [
        "nonlinear_effects",
        "generalized_gravity",
        "aba_acceleration",
        "kinetic_energy",
        "potential_energy",
    ] {
        if let Some(value) = out.get(key) {
            outln!("{key}: {value}");
        }
    }
    if let Some(Value::Object(frames)) = out.get("frames") {
        for (name, f) in frames {
            outln!("{name}: position {}", f["position"]);
        }
    }
}
