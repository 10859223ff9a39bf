//! The sliding cube of Tab. III, IV and Fig. 10, 14, 15 (`scenarios/paper/cube_slide.yaml`,
//! ContactBench's `cube.py --slide`): runs of the paper's three solvers at several Δt or
//! tolerances, under ContactBench's protocol and ours, their integral consistency errors
//! and their energy against the analytical curve.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use nalgebra::Vector3;

use crate::metrics::consistency::{consistency_error, Trajectory};
use crate::metrics::energy::{sliding_kinetic_energy, GRAVITY};
use crate::paper::measurable;
use crate::paper::page::ProtocolLine;
use crate::paper::protocol::{ContactBenchSettings, Protocol};
use crate::paper::runs::{complete, simulate_all, Run, CUBE_SLIDE};
use crate::paper::PaperError;
use crate::report::axis::format_value;
use crate::report::chart::Curve;
use crate::report::style::{solver_style, Dash, LineStyle, Marker};
use crate::simulation::recorder::RunRecord;
use crate::solvers::{Criterion, SolverId, SolverSpec};

/// The solvers of Tab. III and IV, in the paper's row order.
pub const SOLVERS: [SolverId; 3] = [SolverId::CcpPgs, SolverId::Raisim, SolverId::NcpPgs];

/// The paper's name of a solver.
pub fn paper_name(id: SolverId) -> &'static str {
    match id {
        SolverId::CcpPgs => "CCP/PGS",
        SolverId::Raisim => "RaiSim",
        SolverId::NcpPgs => "NCP/PGS",
        SolverId::LcpPgs => "LCP/PGS",
        SolverId::NcpAdmm => "NCP/ADMM",
        SolverId::CcpAdmm => "CCP/ADMM",
        other => other.as_str(),
    }
}

/// Duration of ContactBench's `cube.py` (s); it runs `int(duration / Δt)` steps.
pub const DURATION: f64 = 1.098;
/// Mass (kg), initial speed (m/s) and friction of the cube.
pub const MASS: f64 = 1.0;
/// Initial speed (m/s).
pub const V0: f64 = 1.0;
/// Friction coefficient.
pub const MU: f64 = 0.4;
/// `cube.py`'s tolerance, the reference of the tolerance study.
pub const REFERENCE_TH: f64 = 1e-9;
/// Time step of the reference of the time-step study (s).
pub const REFERENCE_DT: f64 = 1e-4;

/// The two protocols of these experiments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Proto {
    /// ContactBench's (`docs/paper-protocol.md`): forces, its stopping test, cold starts.
    ContactBench,
    /// ContactBench's stopping test and cold starts, but the tolerance applied to
    /// impulses and velocities (our units): separates the effect of units from the rest.
    ContactBenchImpulses,
    /// Ours: impulses, the solver's own test, warm starts.
    Ours,
}

impl Proto {
    /// ContactBench's and ours.
    pub const BOTH: [Proto; 2] = [Proto::ContactBench, Proto::Ours];
    /// The three.
    pub const ALL: [Proto; 3] = [
        Proto::ContactBench,
        Proto::ContactBenchImpulses,
        Proto::Ours,
    ];

    /// Short name for tables.
    pub fn name(self) -> &'static str {
        match self {
            Proto::ContactBench => "ContactBench protocol",
            Proto::ContactBenchImpulses => "ContactBench test in impulse units",
            Proto::Ours => "our protocol",
        }
    }

    /// File-name tag.
    pub fn tag(self) -> &'static str {
        match self {
            Proto::ContactBench => "cb",
            Proto::ContactBenchImpulses => "cb-impulses",
            Proto::Ours => "ours",
        }
    }
}

/// What a sweep varies.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Knob {
    /// The time step (s), tolerance `cube.py`'s 1e-9.
    Dt(f64),
    /// The absolute tolerance, Δt = 1 ms.
    Eps(f64),
}

impl Knob {
    /// The swept value.
    pub fn value(self) -> f64 {
        match self {
            Knob::Dt(v) | Knob::Eps(v) => v,
        }
    }
}

/// Iterations at most per solve: `cube.py` allows 10000, but a step that has not met
/// `th = 1e-9` after 1000 sweeps does not meet it later either (the CCP residual in force
/// units stalls at round-off, RaiSim's relaxation has decayed to `α_min`; measured: Tab.
/// III is the same to three digits with 10000): 1000, and ContactBench's default 100 for
/// the CI size. Such steps are counted as unconverged on the pages.
pub fn max_iter(quick: bool) -> usize {
    if quick {
        100
    } else {
        1000
    }
}

/// The run of `id` at `knob` under `proto`, for `duration` seconds (ContactBench's
/// `int(duration / Δt)` steps).
pub fn run(
    id: SolverId,
    knob: Knob,
    proto: Proto,
    duration: f64,
    quick: bool,
) -> Result<Run, PaperError> {
    let dt = match knob {
        Knob::Dt(dt) => dt,
        Knob::Eps(_) => 1e-3,
    };
    let steps = (duration / dt + 1e-9).floor();
    let scenario = CUBE_SLIDE.load(&[
        format!("simulation.dt={dt:e}"),
        format!("simulation.duration={:e}", steps * dt),
    ])?;
    let tolerance = match knob {
        Knob::Dt(_) => REFERENCE_TH,
        Knob::Eps(eps) => eps,
    };
    let (spec, protocol) = match proto {
        Proto::ContactBench | Proto::ContactBenchImpulses => (
            SolverSpec::new(id),
            Protocol::ContactBench(ContactBenchSettings {
                // Δt = 1 s leaves λ and c in our units.
                dt: if proto == Proto::ContactBench {
                    dt
                } else {
                    1.0
                },
                th: tolerance,
                rel_th: 1e-12,
                max_iter: max_iter(quick),
            }),
        ),
        Proto::Ours => {
            let mut spec = scenario
                .solver_specs()
                .into_iter()
                .find(|s| s.id == id)
                .unwrap_or_else(|| SolverSpec::new(id));
            spec.settings.stop = Criterion::Absolute;
            spec.settings.eps_abs = tolerance;
            spec.settings.eps_step = 0.0;
            spec.settings.max_iter = max_iter(quick);
            (spec, Protocol::Ours)
        }
    };
    Ok(Run::new(scenario, spec, protocol).labelled(paper_name(id)))
}

/// One run of a sweep.
#[derive(Debug, Clone)]
pub struct SweepRun {
    /// Solver.
    pub id: SolverId,
    /// Protocol.
    pub proto: Proto,
    /// Swept value.
    pub knob: Knob,
    /// Whether this is the reference run.
    pub reference: bool,
    /// The record.
    pub record: RunRecord,
}

/// Records of the runs already made in this process (Tab. III and Fig. 14, Tab. IV and
/// Fig. 15 share their runs), by [`run_key`].
fn cache() -> &'static Mutex<HashMap<String, RunRecord>> {
    static CACHE: OnceLock<Mutex<HashMap<String, RunRecord>>> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(HashMap::new()))
}

fn run_key(id: SolverId, proto: Proto, knob: Knob, duration: f64, quick: bool) -> String {
    format!("{id}/{}/{knob:?}/{duration}/{quick}", proto.tag())
}

/// Runs every solver × protocol at every value and at the reference, in parallel (runs
/// made earlier in the process are reused).
pub fn sweep(
    solvers: &[SolverId],
    protos: &[Proto],
    knobs: &[Knob],
    reference: Option<Knob>,
    duration: f64,
    quick: bool,
) -> Result<Vec<SweepRun>, PaperError> {
    let mut plan = Vec::new();
    for &id in solvers {
        for &proto in protos {
            if let Some(reference) = reference {
                plan.push((id, proto, reference, true));
            }
            for &knob in knobs {
                plan.push((id, proto, knob, false));
            }
        }
    }
    let key = |&(id, proto, knob, _): &(SolverId, Proto, Knob, bool)| {
        run_key(id, proto, knob, duration, quick)
    };
    let missing: Vec<_> = {
        let known = cache().lock().map_err(|_| PaperError::CachePoisoned)?;
        plan.iter()
            .filter(|p| !known.contains_key(&key(p)))
            .copied()
            .collect()
    };
    let runs = missing
        .iter()
        .map(|&(id, proto, knob, _)| run(id, knob, proto, duration, quick))
        .collect::<Result<Vec<_>, _>>()?;
    let records = simulate_all(&runs, false);
    {
        let mut known = cache().lock().map_err(|_| PaperError::CachePoisoned)?;
        for (p, record) in missing.iter().zip(records) {
            known.insert(key(p), complete(record?)?);
        }
    }
    let known = cache().lock().map_err(|_| PaperError::CachePoisoned)?;
    plan.iter()
        .map(|p| {
            let (id, proto, knob, reference) = *p;
            let record = known
                .get(&key(p))
                .cloned()
                .ok_or(PaperError::CachePoisoned)?;
            Ok(SweepRun {
                id,
                proto,
                knob,
                reference,
                record,
            })
        })
        .collect()
}

/// The run of `id` under `proto` at `knob` (or the reference) in a sweep's results.
pub fn find(
    runs: &[SweepRun],
    id: SolverId,
    proto: Proto,
    knob: Option<Knob>,
) -> Option<&RunRecord> {
    runs.iter()
        .find(|r| {
            r.id == id
                && r.proto == proto
                && match knob {
                    Some(k) => !r.reference && r.knob == k,
                    None => r.reference,
                }
        })
        .map(|r| &r.record)
}

fn trajectory(record: &RunRecord) -> (Vec<f64>, Vec<Vector3<f64>>) {
    record
        .steps
        .iter()
        .map(|s| (s.time, Vector3::from(s.base_position)))
        .unzip()
}

/// Integral consistency error `Σ_k ‖p(t_k) − p_ref(t_k)‖ Δt` (m·s) of `run` against
/// `reference` (design.md §5), over the run's steps up to `until` (s).
pub fn consistency(run: &RunRecord, reference: &RunRecord, until: f64) -> Option<f64> {
    let (mut times, mut positions) = trajectory(run);
    let keep = times.partition_point(|t| *t <= until + 1e-12);
    times.truncate(keep);
    positions.truncate(keep);
    let (ref_times, ref_positions) = trajectory(reference);
    consistency_error(
        Trajectory {
            times: &times,
            positions: &positions,
        },
        Trajectory {
            times: &ref_times,
            positions: &ref_positions,
        },
    )
    .ok()
}

/// The state `x = (q, v)` of a step: position and orientation, linear and angular
/// velocity.
fn state(step: &crate::simulation::recorder::StepRecord) -> Vec<f64> {
    step.q.iter().chain(step.v.iter()).copied().collect()
}

/// The axis title of [`state_consistency`]: what it sums and its mixed units.
pub const STATE_ERROR_LABEL: &str = "state consistency error, Σ ‖Δx‖ Δt (m·s, rad·s and m)";

/// Integral consistency error of the state, `Σ_k ‖x(t_k) − x_ref(t_k)‖ Δt` with
/// `x = (q, v)` (the paper's "state consistency error"; its unit mixes m·s, rad·s and
/// m), the reference linearly interpolated at the run's times; `None` when a run is empty.
pub fn state_consistency(run: &RunRecord, reference: &RunRecord) -> Option<f64> {
    let times: Vec<f64> = reference.steps.iter().map(|s| s.time).collect();
    let states: Vec<Vec<f64>> = reference.steps.iter().map(state).collect();
    let at = |t: f64| -> Option<Vec<f64>> {
        let k = times.partition_point(|s| *s <= t);
        let (a, b) = match k {
            0 => (states.first()?, states.first()?),
            k if k == states.len() => (states.last()?, states.last()?),
            k => (&states[k - 1], &states[k]),
        };
        let w = if k == 0 || k == states.len() {
            0.0
        } else {
            (t - times[k - 1]) / (times[k] - times[k - 1])
        };
        Some(
            a.iter()
                .zip(b)
                .map(|(x, y)| x * (1.0 - w) + y * w)
                .collect(),
        )
    };
    let mut sum = 0.0;
    for pair in run.steps.windows(2) {
        let (previous, step) = (&pair[0], &pair[1]);
        let reference = at(step.time)?;
        let gap = state(step)
            .iter()
            .zip(&reference)
            .map(|(x, y)| (x - y) * (x - y))
            .sum::<f64>()
            .sqrt();
        sum += gap * (step.time - previous.time);
    }
    (run.steps.len() > 1).then_some(sum)
}

/// ContactBench's `cube.py --slide` beside our scenario and the protocols of this page
/// (docs/paper-protocol.md), one line per aspect.
pub fn cube_protocol(quick: bool) -> Vec<ProtocolLine> {
    vec![
        ProtocolLine::new("cube", "models.py create_cubes: a = 0.2 m, m = 1 kg; cube.py: mu = 0.4, el = 0", "`scenarios/paper/cube_slide.yaml`: the same"),
        ProtocolLine::new("contact geometry", "addCubeToGeomModel: 8 spheres Sphere(a/50) = 4 mm centred on the corners; security_margin 1e-3", "8 corner spheres of 4 mm inset to touch the faces (lever arm 0.096 m instead of 0.1 m); margin 1 mm"),
        ProtocolLine::new("initial state", "qinit = (0, -1.0, 0.104), v = +1.0 m/s along y, ω = 0", "(0, −1, 0.1) (spheres touching the ground), v = 1 m/s along y"),
        ProtocolLine::new("time", "dt = 1e-3, duration 1.098 s, T = int(duration/dt) steps; Kb = 1e-4", "the same (Tab. III: int(1.098/Δt) steps at every Δt), Baumgarte 1e-4"),
        ProtocolLine::new("solver call", "simulator.step(..., maxIter = 10000, th = 1e-9, rel_th_stop = 1e-12, eps_reg = 1e-8), warm_start = False", format!("ContactBench protocol: th in force units, rel 1e-12, cold, at most {} sweeps (10000 changes no digit of Tab. III: `sliding.rs`); our protocol: eps_abs on impulses, no step test, warm, the same cap", max_iter(quick))),
        ProtocolLine::new("stopping residual", "solvers.hxx: NCP/PGS and RaiSim the NCP residual, CCP/PGS the CCP one, on (λ/Δt, c/Δt)", "the same residuals on (λ/Δt, c/Δt) (`protocol.rs`, ContactBenchStop)"),
        ProtocolLine::new("RaiSim", "Python bindings: alpha_min = 1e-4, gamma = 0.9, bisection 1e-3 N", "the same (1e-3 rad on the angle)"),
        ProtocolLine::new("consistency error", "not in the repository (no script); the paper: \"state consistency error\" in m·s", "Σ‖p − p_ref‖Δt of the cube's centre (m·s) and Σ‖x − x_ref‖Δt of the state x = (q, v)"),
    ]
}

/// `(t, E(t) − E_analytical(t))` (J), `E_analytical = U(q0) + ½ m (v0 − μ g t)²`.
pub fn energy_deviation(record: &RunRecord) -> Vec<(f64, f64)> {
    let potential = record.steps.first().map_or(0.0, |s| s.energy.potential);
    record
        .steps
        .iter()
        .map(|s| {
            let analytical = potential + sliding_kinetic_energy(MASS, V0, MU, s.time);
            (s.time, s.energy.total() - analytical)
        })
        .collect()
}

/// `max_t |E − E_analytical|` (J).
pub fn max_energy_deviation(record: &RunRecord) -> f64 {
    energy_deviation(record)
        .into_iter()
        .map(|(_, d)| d.abs())
        .fold(0.0, f64::max)
}

/// Time (s) the analytical cube stops, `v0 / (μ g)`.
pub fn stop_time() -> f64 {
    V0 / (MU * GRAVITY)
}

/// Fraction of the analytical energy loss `½ m v0²` the run has dissipated at the
/// analytical stop time (1 for the exact answer, 0 for no dissipation).
pub fn dissipated_fraction(record: &RunRecord) -> f64 {
    let t = stop_time();
    let first = record.steps.first().map_or(f64::NAN, |s| s.energy.total());
    let at = record
        .steps
        .iter()
        .min_by(|a, b| (a.time - t).abs().total_cmp(&(b.time - t).abs()))
        .map_or(f64::NAN, |s| s.energy.total());
    (first - at) / (0.5 * MASS * V0 * V0)
}

/// `"1.5e-3*"`: a number, starred when the run has unconverged steps.
pub fn starred(value: Option<f64>, unconverged: usize) -> String {
    match value {
        Some(v) if unconverged > 0 => format!("{}*", format_value(v)),
        Some(v) => format_value(v),
        None => "–".into(),
    }
}

/// ε in the unit the protocol applies it to, against the contact impulse it bounds
/// (the reference's median largest impulse, as a force under ContactBench's protocol).
pub fn tolerance_guard(
    label: &str,
    proto: Proto,
    eps: f64,
    reference: &RunRecord,
) -> Option<String> {
    let impulse = measurable::median_largest_impulse(reference);
    match proto {
        Proto::ContactBench => {
            measurable::tolerance_above_signal(label, eps, impulse / reference.dt, "N")
        }
        Proto::ContactBenchImpulses | Proto::Ours => {
            measurable::tolerance_above_signal(label, eps, impulse, "N·s")
        }
    }
}

/// The style of the paper's points: the solver's colour, dotted, squares.
pub fn paper_style(id: SolverId) -> LineStyle {
    LineStyle {
        dash: Dash::Dashed { on: 2, off: 4 },
        marker: Marker::Square,
        ..solver_style(id)
    }
}

/// Markers for the cells a log axis would hide or mislead with: errors exactly 0 (drawn
/// at a tenth of the smallest positive value; always a run identical to its reference)
/// and the other cells not measurable (crossed).
pub fn cell_markers(cells: &[(f64, f64, bool)]) -> Vec<Curve> {
    let floor = cells
        .iter()
        .map(|c| c.1)
        .filter(|v| *v > 0.0 && v.is_finite())
        .fold(f64::INFINITY, f64::min)
        / 10.0;
    let apart = |points: Vec<(f64, f64)>| -> Vec<(f64, f64)> {
        points
            .into_iter()
            .flat_map(|p| [p, (f64::NAN, f64::NAN)])
            .collect()
    };
    let zeros: Vec<(f64, f64)> = cells
        .iter()
        .filter(|c| c.1 == 0.0)
        .map(|c| (c.0, floor))
        .collect();
    let unmeasurable: Vec<(f64, f64)> = cells
        .iter()
        .filter(|c| c.2 && c.1 > 0.0)
        .map(|c| (c.0, c.1))
        .collect();
    let mut out = Vec::new();
    if !zeros.is_empty() && floor.is_finite() {
        out.push(
            Curve::styled(
                "= 0, drawn at the floor (not measurable)",
                apart(zeros),
                LineStyle {
                    color: plotters::style::RGBColor(120, 120, 120),
                    dash: Dash::Solid,
                    marker: Marker::Triangle,
                },
            )
            .marked(),
        );
    }
    if !unmeasurable.is_empty() {
        out.push(
            Curve::styled(
                "not measurable",
                apart(unmeasurable),
                LineStyle {
                    color: plotters::style::RGBColor(0, 0, 0),
                    dash: Dash::Solid,
                    marker: Marker::Cross,
                },
            )
            .marked(),
        );
    }
    out
}
