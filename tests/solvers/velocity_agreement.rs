//! Converged means the right velocities: no solver reports converged on
//! an answer whose contact velocities differ from the reference answer of its model by
//! more than the tolerance asked, in velocity units: `‖c − c_ref‖∞ ≤ k · eps_rel · v_s`,
//! `v_s = ‖g‖∞`, the reference being ccp-ipm's tight answer for the CCP (on the soft
//! problem for ccp-newton, whose model it is) and ncp-admm's tight answer for the NCP.
//! The factor `k` is measured per solver and stated (docs/ruler.md), not hidden: the
//! relative criterion bounds each contact's velocity along its own force, and a velocity
//! can lean off the force by up to the cone's aperture.
//!
//! Problems: robot steps (Solo-12 standing built by Pinocchio and by contactbench, Talos
//! pushed, the Allegro hand and its ball, a cube stack, the pushed and the resting cube),
//! ContactBench's own test problems, random problems, and some of them in other units
//! (G × 1e-3; g and G × 1e3).

use crate::common::solvers as common;

use std::collections::BTreeMap;
use std::path::Path;

use common::build;
use contactbench::problem::generators::random_problem;
use contactbench::problem::io::read_problem;
use contactbench::problem::{ContactModel, ContactProblem};
use contactbench::solvers::ccp_newton::CcpNewtonSolver;
use contactbench::solvers::{SolveReport, SolverId, SolverSettings};
use nalgebra::DVector;

const EPS_REL: f64 = 1e-6;
/// The references' tolerance, 1000 times tighter.
const REFERENCE_EPS_REL: f64 = 1e-9;

fn file(name: &str) -> ContactProblem {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name);
    match read_problem(&path) {
        Ok(f) => f.problem,
        Err(e) => panic!("{e}"),
    }
}

fn rescaled(p: &ContactProblem, a: f64, b: f64) -> ContactProblem {
    match ContactProblem::new(
        p.delassus() * a,
        p.free_velocity() * b,
        p.mu().clone(),
        p.compliance().map(|r| r * a),
    ) {
        Ok(q) => q,
        Err(e) => panic!("{e}"),
    }
}

fn problems() -> Vec<(String, ContactProblem)> {
    let mut list: Vec<(String, ContactProblem)> = [
        "pinocchio/solo12_standing.json",
        "robots/solo12_standing_step200.json",
        "robots/talos_push_step150.json",
        "robots/allegro_ball_step250.json",
        "robots/cube_stack_step100.json",
        "regressions/cube_push_step200.json",
        "regressions/cube_slide_step400.json",
    ]
    .iter()
    .map(|name| (name.to_string(), file(name)))
    .collect();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/contactbench");
    let mut names: Vec<String> = match std::fs::read_dir(&dir) {
        Ok(entries) => entries
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".json"))
            .collect(),
        Err(e) => panic!("{e}"),
    };
    names.sort();
    for name in names {
        let path = format!("contactbench/{name}");
        list.push((path.clone(), file(&path)));
    }
    for (seed, contacts, nv) in [(0, 4, 40), (1, 5, 30), (2, 8, 12), (3, 10, 60)] {
        match random_problem(seed, contacts, nv) {
            Ok(p) => list.push((format!("random {contacts}x{nv} seed {seed}"), p)),
            Err(e) => panic!("{e}"),
        }
    }
    let rescaled_ones: Vec<(String, ContactProblem)> = list
        .iter()
        .filter(|(name, _)| {
            name.starts_with("pinocchio") || name.contains("sliding_cube") || name.contains("talos")
        })
        .flat_map(|(name, p)| {
            [
                (format!("{name} (mN·s)"), rescaled(p, 1e-3, 1.0)),
                (format!("{name} (mm/s)"), rescaled(p, 1.0, 1e3)),
            ]
        })
        .collect();
    list.extend(rescaled_ones);
    list
}

fn solve(id: SolverId, settings: &SolverSettings, p: &ContactProblem) -> Option<SolveReport> {
    build(id, settings).solve(p, None).ok()
}

/// The tight reference answer of `model` on `p`: ccp-ipm's (CCP) or ncp-admm's (NCP) at
/// 1e-9; where it stops short of that (an interior point's floor, a stalled ADMM),
/// ccp-admm's (CCP) or ncp-stagproj's (NCP) at 1e-9; `None` if neither converges.
fn reference(model: ContactModel, p: &ContactProblem) -> Option<DVector<f64>> {
    let candidates = match model {
        ContactModel::Ccp => [SolverId::CcpIpm, SolverId::CcpAdmm],
        ContactModel::Ncp => [SolverId::NcpAdmm, SolverId::NcpStagproj],
        _ => return None,
    };
    let tight = SolverSettings {
        eps_rel: REFERENCE_EPS_REL,
        max_iter: 20000,
        ..SolverSettings::default()
    };
    candidates.iter().find_map(|&id| {
        let settings = if id == SolverId::NcpStagproj {
            SolverSettings {
                max_iter: 2000,
                ..tight.clone()
            }
        } else {
            tight.clone()
        };
        let r = solve(id, &settings, p)?;
        r.status.is_converged().then_some(r.velocity)
    })
}

/// The worst `‖c − c_ref‖∞ / (eps_rel v_s)` each solver reaches over the problems where it
/// reports converged, with the problem; prints every solver's count and median too.
fn worst_ratios() -> BTreeMap<SolverId, (f64, String)> {
    let mut all: BTreeMap<SolverId, Vec<f64>> = BTreeMap::new();
    let settings = SolverSettings {
        eps_rel: EPS_REL,
        ..SolverSettings::default()
    };
    let mut worst: BTreeMap<SolverId, (f64, String)> = BTreeMap::new();
    let mut skipped = Vec::new();
    for (name, p) in problems() {
        let v_s = p.velocity_scale();
        let ccp = reference(ContactModel::Ccp, &p);
        let ncp = reference(ContactModel::Ncp, &p);
        // ccp-newton's model is the soft CCP: its reference is ccp-ipm on that problem.
        let soft = CcpNewtonSolver::new(settings.clone(), Default::default())
            .ok()
            .and_then(|n| p.with_added_compliance(&n.soft_compliance(&p)).ok());
        let soft_ccp = soft.as_ref().and_then(|s| reference(ContactModel::Ccp, s));
        for id in SolverId::ALL {
            let Some(r) = solve(id, &settings, &p) else {
                panic!("{id} on {name}: refused");
            };
            if !r.status.is_converged() {
                continue;
            }
            let c_ref = match (id, build(id, &settings).model()) {
                (SolverId::CcpNewton, _) => soft_ccp.as_ref(),
                (_, ContactModel::Ccp) => ccp.as_ref(),
                (_, ContactModel::Ncp) => ncp.as_ref(),
                _ => continue,
            };
            let Some(c_ref) = c_ref else {
                skipped.push(format!("{id} on {name}"));
                continue;
            };
            // ccp-newton reports the problem's own velocity; its soft velocity is compared.
            let c = match (id, &soft) {
                (SolverId::CcpNewton, Some(s)) => s.velocity(&r.lambda),
                _ => r.velocity.clone(),
            };
            let ratio = (&c - c_ref).amax() / (EPS_REL * v_s);
            all.entry(id).or_default().push(ratio);
            let entry = worst.entry(id).or_insert((0.0, String::new()));
            if ratio > entry.0 {
                *entry = (ratio, name.clone());
            }
        }
    }
    println!("no converged reference for: {skipped:?}");
    for (id, (ratio, name)) in &worst {
        let mut ratios = all.get(id).cloned().unwrap_or_default();
        ratios.sort_by(f64::total_cmp);
        let median = ratios.get(ratios.len() / 2).copied().unwrap_or(f64::NAN);
        let within = ratios.iter().filter(|r| **r <= 1.0).count();
        println!(
            "| {id} | {} | {within} | {median:.3} | {ratio:.2} | {name} |",
            ratios.len()
        );
    }
    worst
}

/// The factor `k` each solver needs, measured on this set (docs/ruler.md gives the
/// problem where each is reached), with a margin of 1.5.
fn measured_factor(id: SolverId) -> f64 {
    1.5 * match id {
        SolverId::CcpPgs => 3.04,
        SolverId::CcpAdmm => 5.10,
        SolverId::CcpNewton => 0.76,
        SolverId::CcpIpm => 6.07,
        SolverId::RaisimCorrected => 2.65,
        // On ContactBench's heavy-cube problem (getSolution4, G up to 5.6e3, condition
        // 3e13), sliding: the criterion does not bound a sliding speed, which follows
        // from λ through G (docs/ruler.md). Elsewhere ncp-pgs stays within 8.2.
        SolverId::NcpPgs => 669.0,
        SolverId::NcpStagproj => 7.34,
        SolverId::NcpAdmm => 2.39,
        _ => 0.0,
    }
}

#[test]
fn converged_answers_have_the_reference_velocities() {
    let worst = worst_ratios();
    for (id, (ratio, name)) in &worst {
        let k = measured_factor(*id);
        assert!(*ratio <= k, "{id}: {ratio:.3} eps v_s > {k:.2} on {name}");
    }
    // Every CCP and NCP solver was measured somewhere.
    assert_eq!(worst.len(), 8, "{:?}", worst.keys());
}
