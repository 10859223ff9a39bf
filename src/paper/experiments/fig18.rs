//! Fig. 18: Solo-12 trotting on bumpy, slippery ground (μ = 0.3) under the controller of
//! Fig. 17 seeing the terrain's height map, every contact model, at the paper's roughness
//! (0.1 m); the same controller blind falls there, and its falls are recorded. A variant
//! walks on ContactBench's own height-field formula, scaled.

use super::fig17::{
    duration, fall_time, mean_iterations, model_table, of, panels, path_gap, peak_criterion,
    scenario_target, walk, walking_figure, walking_protocol, SOLVERS, TROT_BUMPY, TROT_FLAT,
};
use super::sliding::paper_name;
use crate::collision::heightfield::{contactbench_height, HeightField};
use crate::paper::claims::{num, Claim, Why};
use crate::paper::names::CRITERION;
use crate::paper::page::Page;
use crate::paper::runs::{metric_series, solved_steps, unconverged};
use crate::paper::{Context, Experiment, PaperError};
use crate::report::tables::markdown_table;
use crate::simulation::recorder::RunRecord;
use crate::simulation::scenario::{HeightFieldSpec, Terrain};
use crate::simulation::Scenario;
use crate::solvers::SolverId;

/// Fig. 18.
pub struct Fig18;

/// How long the blind walk runs (s): past its falls, at both sizes.
const BLIND_DURATION: f64 = 4.0;
/// ContactBench's formula is scaled by this factor (unscaled, its bumps of ±0.35 m every
/// 0.21 m are taller than Solo-12's legs).
const FORMULA_SCALE: f64 = 0.1;
/// The formula's grid: first sample (m), samples along x and y, spacing (m) (ContactBench's
/// 2 cm cells, over the walk rather than its 10 m square).
const FORMULA_ORIGIN: [f64; 2] = [-0.6, -0.6];
const FORMULA_SAMPLES: (usize, usize) = (131, 61);
const FORMULA_SPACING: f64 = 0.02;
/// The models the paper finds deviating from the NCP.
const DEVIATING: [SolverId; 3] = [SolverId::Raisim, SolverId::CcpPgs, SolverId::CcpAdmm];
/// Smallest path gap called a deviation (m): a foot's radius is 16 mm.
const DEVIATION_FLOOR: f64 = 0.01;

/// The roughness of the scenario (amplitude, wavelength, seed) and its height field.
fn roughness_field(scenario: &Scenario) -> Option<HeightField> {
    let spec = &scenario.world.terrain.as_ref()?.heightfield;
    let r = spec.roughness?;
    HeightField::roughness(spec.size, spec.spacing, r.amplitude, r.wavelength, r.seed).ok()
}

/// ContactBench's formula times [`FORMULA_SCALE`] on the grid above.
fn formula_field() -> Result<HeightField, PaperError> {
    let (nx, ny) = FORMULA_SAMPLES;
    let heights = (0..ny)
        .flat_map(|j| {
            (0..nx).map(move |i| {
                let x = FORMULA_ORIGIN[0] + i as f64 * FORMULA_SPACING;
                let y = FORMULA_ORIGIN[1] + j as f64 * FORMULA_SPACING;
                FORMULA_SCALE * contactbench_height(x, y)
            })
        })
        .collect();
    HeightField::new(
        "contactbench formula, scaled",
        nx,
        ny,
        FORMULA_SPACING,
        FORMULA_ORIGIN,
        heights,
    )
    .map_err(|e| PaperError::RunFailed {
        run: "contactbench terrain".into(),
        reason: e.to_string(),
    })
}

/// Writes the scaled formula's heights as `<dir>/contactbench_terrain.csv` (one row per
/// y, the file format of `world.terrain.heightfield.file`) and returns the bumpy
/// scenario walking on it at μ = 0.9.
fn formula_scenario(ctx: &Context, duration: f64) -> Result<Scenario, PaperError> {
    let (nx, ny) = FORMULA_SAMPLES;
    let rows: Vec<Vec<String>> = (0..ny)
        .map(|j| {
            (0..nx)
                .map(|i| {
                    let x = FORMULA_ORIGIN[0] + i as f64 * FORMULA_SPACING;
                    let y = FORMULA_ORIGIN[1] + j as f64 * FORMULA_SPACING;
                    format!("{}", FORMULA_SCALE * contactbench_height(x, y))
                })
                .collect()
        })
        .collect();
    let path = ctx.dir.join(TERRAIN_FILE);
    let text: String = rows.iter().map(|r| r.join(",") + "\n").collect();
    std::fs::write(&path, text).map_err(|error| PaperError::Io {
        path: path.display().to_string(),
        error,
    })?;
    let mut scenario = TROT_BUMPY.load(&[
        format!("simulation.duration={duration}"),
        "world.friction=0.9".into(),
        "actuation.trot.friction=0.5".into(),
    ])?;
    scenario.name = "solo_trot_contactbench".into();
    scenario.world.terrain = Some(Terrain {
        heightfield: HeightFieldSpec {
            spacing: FORMULA_SPACING,
            size: [0.0, 0.0],
            origin: Some(FORMULA_ORIGIN),
            // Absolute: a relative file is read from the scenario file's folder.
            file: Some(std::path::absolute(&path).map_err(|error| PaperError::Io {
                path: path.display().to_string(),
                error,
            })?),
            formula: None,
            roughness: None,
        },
    });
    Ok(scenario)
}

/// The scaled formula's heights, written beside the page.
const TERRAIN_FILE: &str = "contactbench_terrain.csv";

/// A contact slides when its tangential speed exceeds this (m/s) while it pushes.
const SLIDING_SPEED: f64 = 1e-3;

/// The sliding of a walk: the share of its contacts (a contact at a step) that slide
/// and the distance they slide, summed over the run (m; speed × Δt).
fn sliding(record: &RunRecord) -> (f64, f64) {
    let steps = solved_steps(record);
    let dt = steps
        .windows(2)
        .next()
        .map_or(0.0, |w| w[1].time - w[0].time);
    let (mut contacts, mut slides, mut distance) = (0usize, 0usize, 0.0);
    for contact in steps.iter().flat_map(|s| &s.contacts) {
        contacts += 1;
        let speed = contact.velocity[0].hypot(contact.velocity[1]);
        if speed > SLIDING_SPEED && contact.lambda[2] > 0.0 {
            slides += 1;
            distance += speed * dt;
        }
    }
    (slides as f64 / contacts.max(1) as f64, distance)
}

/// Why the paths stay together, from the runs: how much NCP/PGS's feet slide (the
/// models differ only on sliding contacts), the largest path gap and the two NCP
/// solvers' own gap.
fn deviation_reason(walks: &[(SolverId, RunRecord)]) -> String {
    let Some(reference) = of(walks, SolverId::NcpPgs) else {
        return "no NCP/PGS run".into();
    };
    let (share, distance) = sliding(reference);
    let gap = DEVIATING
        .into_iter()
        .filter_map(|id| of(walks, id).map(|r| path_gap(r, reference)))
        .fold(0.0, f64::max);
    let noise = of(walks, SolverId::NcpAdmm).map_or(f64::NAN, |r| path_gap(r, reference));
    let compared = if gap < distance {
        "below that slid distance"
    } else {
        "above that slid distance"
    };
    format!(
        "the contact models differ only on sliding contacts; NCP/PGS's feet slide at {} % of its contacts (tangential speed > {} m/s while pushing), {} m summed over the run; the largest path gap of RaiSim and CCP ({} m) is {compared}, and the two NCP solvers' paths are {} m apart",
        num(100.0 * share),
        num(SLIDING_SPEED),
        num(distance),
        num(gap),
        num(noise)
    )
}

/// Why NCP/PGS's largest criterion is as large as the others', from its run: the step
/// where it peaks, its iterations and whether the solver converged there.
fn criterion_reason(walks: &[(SolverId, RunRecord)]) -> String {
    let Some(reference) = of(walks, SolverId::NcpPgs) else {
        return "no NCP/PGS run".into();
    };
    let series = metric_series(reference, CRITERION);
    let peak = series
        .iter()
        .enumerate()
        .filter(|(_, (_, v))| !v.is_nan())
        .max_by(|a, b| a.1 .1.total_cmp(&b.1 .1));
    let Some((i, (time, value))) = peak else {
        return "NCP/PGS has no step with contacts".into();
    };
    let step = &solved_steps(reference)[i];
    let unconverged = unconverged(reference);
    let outcome = if step.converged {
        "converged"
    } else {
        "stopped unconverged (the reference solver's residual, not the NCP model's)"
    };
    format!(
        "NCP/PGS's largest criterion ({}) is at t = {} s, where it {outcome} after {} iterations ({unconverged} unconverged steps in its run)",
        num(*value),
        num(*time),
        step.iterations,
    )
}

/// Mean iterations at the steps whose contact pairs differ from the previous step's
/// (a foot lands or lifts) and at the others, and the share of the former.
fn iterations_by_contact_change(record: &RunRecord) -> (f64, f64, f64) {
    let steps = solved_steps(record);
    let (mut changed, mut kept) = (Vec::new(), Vec::new());
    for pair in steps.windows(2) {
        let [before, now] = pair else { continue };
        if now.contacts.is_empty() {
            continue;
        }
        let same = before.contacts.len() == now.contacts.len()
            && before
                .contacts
                .iter()
                .zip(&now.contacts)
                .all(|(a, b)| a.pair == b.pair);
        let bucket = if same { &mut kept } else { &mut changed };
        bucket.push(now.iterations as f64);
    }
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
    let share = changed.len() as f64 / (changed.len() + kept.len()).max(1) as f64;
    (mean(&changed), mean(&kept), share)
}

/// Where the iterations change, from the runs: for each model whose mean iterations
/// do not grow from flat to bumpy, its iterations at the steps where the contact set
/// changes (a foot lands or lifts) and elsewhere, and the share of changing steps.
fn iteration_reason(bumpy: &[(SolverId, RunRecord)], flat: &[(SolverId, RunRecord)]) -> String {
    let parts: Vec<String> = SOLVERS
        .into_iter()
        .filter(|&id| iteration_growth(bumpy, flat, id) < 1.0)
        .filter_map(|id| {
            let (bc, bk, bs) = iterations_by_contact_change(of(bumpy, id)?);
            let (fc, fk, fs) = iterations_by_contact_change(of(flat, id)?);
            Some(format!(
                "{}: {} bumpy vs {} flat where the contact set changes, {} vs {} elsewhere, at {} % vs {} % of the steps",
                paper_name(id),
                num(bc),
                num(fc),
                num(bk),
                num(fk),
                num(100.0 * bs),
                num(100.0 * fs)
            ))
        })
        .collect();
    format!(
        "with warm starts the iterations split between the steps where a foot lands or lifts and the others; for the models whose iterations do not grow: {}",
        parts.join("; ")
    )
}

/// RaiSim's and CCP's paths leave NCP/PGS's by at least [`DEVIATION_FLOOR`] and ten
/// times NCP/ADMM's gap (two NCP solvers' disagreement: the solvers' own noise).
fn deviation_claim(walks: &[(SolverId, RunRecord)], terrain: &str) -> Claim {
    let reference = of(walks, SolverId::NcpPgs);
    let gap = |id| match (of(walks, id), reference) {
        (Some(r), Some(reference)) => path_gap(r, reference),
        _ => f64::NAN,
    };
    let noise = gap(SolverId::NcpAdmm);
    let bound = DEVIATION_FLOOR.max(10.0 * noise);
    Claim::all(
        &format!("\"the locomotion velocity generated from the RaiSim and CCP models significantly deviates from the NCP one\" (their base paths leave NCP/PGS's by ≥ max(1 cm, 10× NCP/ADMM's gap); {terrain})"),
        DEVIATING
            .into_iter()
            .map(|id| {
                Claim::at_least(
                    "",
                    &format!("path gap({} − NCP/PGS) (m)", paper_name(id)),
                    gap(id),
                    bound,
                )
            })
            .collect(),
    )
    .threshold(format!("\"significantly deviates\" (no number): tested as a largest horizontal distance between base paths ≥ {} m, the larger of 1 cm and 10× the gap between the two NCP solvers ({} m)", num(bound), num(noise)))
}

/// RaiSim's and CCP's largest NCP criterion is at least ten times NCP/PGS's.
fn criterion_claim(walks: &[(SolverId, RunRecord)], terrain: &str) -> Claim {
    let reference = of(walks, SolverId::NcpPgs).map_or(f64::NAN, peak_criterion);
    Claim::all(
        &format!("\"Slippery contact points violate the contact complementarity criterion for the RaiSim and CCP contact modelings\" (largest NCP criterion ≥ 10× NCP/PGS's; {terrain})"),
        DEVIATING
            .into_iter()
            .map(|id| {
                Claim::ratio_at_least(
                    "",
                    (
                        &format!("largest criterion({})", paper_name(id)),
                        of(walks, id).map_or(f64::NAN, peak_criterion),
                    ),
                    ("largest criterion(NCP/PGS)", reference),
                    10.0,
                )
            })
            .collect(),
    )
    .threshold("\"violate\" (no number): tested as ≥ 10× the NCP solver's largest criterion")
}

/// Mean iterations on bumpy ground over flat ground, per solver.
fn iteration_growth(
    bumpy: &[(SolverId, RunRecord)],
    flat: &[(SolverId, RunRecord)],
    id: SolverId,
) -> f64 {
    match (of(bumpy, id), of(flat, id)) {
        (Some(b), Some(f)) => mean_iterations(b) / mean_iterations(f),
        _ => f64::NAN,
    }
}

impl Experiment for Fig18 {
    fn id(&self) -> &'static str {
        "fig18"
    }

    fn paper_ref(&self) -> &'static str {
        "§IV-D, Fig. 18"
    }

    fn title(&self) -> &'static str {
        "Solo-12 trotting on bumpy, slippery ground: RaiSim and CCP leave the NCP"
    }

    fn run(&self, ctx: &Context) -> Result<Page, PaperError> {
        let duration = duration(ctx.quick);
        let at = format!("simulation.duration={duration}");
        let scenario = TROT_BUMPY.load(std::slice::from_ref(&at))?;
        let field = roughness_field(&scenario);
        let amplitude = scenario
            .world
            .terrain
            .as_ref()
            .and_then(|t| t.heightfield.roughness)
            .map_or(f64::NAN, |r| r.amplitude);
        let target = scenario_target(&scenario);
        let bumpy = walk(&scenario)?;
        let flat = walk(&TROT_FLAT.load(&[at])?)?;
        let blind = if ctx.quick {
            Vec::new()
        } else {
            walk(&TROT_BUMPY.load(&[
                format!("simulation.duration={BLIND_DURATION}"),
                "actuation.trot.perception=false".into(),
            ])?)?
        };
        let formula = walk(&formula_scenario(ctx, duration)?)?;
        let formula_field = formula_field()?;

        let mut page = Page::headed(self);
        page.setup = vec![
            format!("Scenario `{}`: Solo-12 on a seeded random roughness (value noise, |z| ≤ {} m, bumps about 0.4 m wide, seed 1), μ = 0.3 (the controller assumes 0.25), target {} m/s along x, {duration} s at Δt = 1 ms; the controller of Fig. 17, identical for every model.", TROT_BUMPY.file, num(amplitude), num(target)),
            format!("The controller sees the terrain's height map (`perception`: footholds on the surface, the swing apex raised over the highest ground along the step, each stance foot's friction pyramid on the surface normal under it), as a quadruped with a height map does. Blind (it feels the ground only through its footholds) it falls on this ground with every model (table below, {} s; a fall: the base's height over the plane of its last footholds leaves ±0.1 m, or its roll or pitch exceeds 0.6 rad).", num(BLIND_DURATION)),
            format!("Variant: ContactBench's bumpy ground `create_solo(height_field=True)`, z = sin(30x)/5 + cos(30y²)/20 + sin(50xy)/10 at 2 cm cells, μ = 0.9, scaled by {FORMULA_SCALE} (unscaled, bumps of ±0.35 m every 0.21 m: taller than Solo-12's legs; at 0.2 the controller falls), on x ∈ [−0.6, 2.0] m, y ∈ [−0.6, 0.6] m (`{TERRAIN_FILE}`)."),
            "Measures as in Fig. 17; the iterations on bumpy ground are compared with a flat walk of the same length.".into(),
        ];
        page.protocol = walking_protocol();
        let mut tables = Vec::new();
        let mut sets = vec![
            (
                format!("Roughness {} m, μ = 0.3", num(amplitude)),
                &bumpy,
                "fig18.csv",
                duration,
            ),
            (
                format!("ContactBench's height field ×{FORMULA_SCALE}, μ = 0.9"),
                &formula,
                "fig18_contactbench.csv",
                duration,
            ),
        ];
        if !ctx.quick {
            sets.insert(
                1,
                (
                    format!(
                        "The blind controller, roughness {} m, μ = 0.3",
                        num(amplitude)
                    ),
                    &blind,
                    "fig18_blind.csv",
                    BLIND_DURATION,
                ),
            );
        }
        for (name, walks, file, length) in sets {
            let (header, rows) = model_table(walks, length);
            page.data.push(ctx.csv(file, &header, &rows)?);
            tables.push((name, markdown_table(&header, &rows)));
        }
        page.tables = tables;
        page.data.push(TERRAIN_FILE.into());

        let here = format!("roughness {} m", num(amplitude));
        page.claims
            .push(deviation_claim(&bumpy, &here).why(Why::Protocol, deviation_reason(&bumpy)));
        page.claims.push(criterion_claim(&bumpy, &here));
        page.claims.push(
            Claim::all(
                &format!("\"the simulation is more challenging than the flat case, which causes increased computations from the solvers\" (mean iterations per step with contacts, bumpy ÷ flat ≥ 1 for every model; {here})"),
                SOLVERS
                    .into_iter()
                    .map(|id| {
                        Claim::at_least(
                            "",
                            &format!("iterations bumpy ÷ flat ({})", paper_name(id)),
                            iteration_growth(&bumpy, &flat, id),
                            1.0,
                        )
                    })
                    .collect(),
            )
            .why(Why::Finding, iteration_reason(&bumpy, &flat)),
        );
        let raisim_growth = iteration_growth(&bumpy, &flat, SolverId::Raisim);
        let mut parts: Vec<Claim> = SOLVERS
            .into_iter()
            .filter(|id| *id != SolverId::Raisim)
            .map(|id| {
                Claim::at_least(
                    "",
                    &format!("growth(RaiSim) − growth({})", paper_name(id)),
                    raisim_growth - iteration_growth(&bumpy, &flat, id),
                    0.0,
                )
            })
            .collect();
        parts.push(Claim::ratio_at_least(
            "",
            (
                "iterations(RaiSim)",
                of(&bumpy, SolverId::Raisim).map_or(f64::NAN, mean_iterations),
            ),
            (
                "iterations(NCP/PGS)",
                of(&bumpy, SolverId::NcpPgs).map_or(f64::NAN, mean_iterations),
            ),
            1.0,
        ));
        page.claims.push(
            Claim::all(
                &format!("\"... particularly for RaiSim\" (RaiSim's iterations grow most from flat to bumpy, and it takes at least as many iterations per step as NCP/PGS, a sweep over the contacts each; {here})"),
                parts,
            )
            .threshold("\"particularly\" (no number): tested as the largest growth of the mean iterations, and at least NCP/PGS's iterations")
            .why(Why::Finding, iteration_reason(&bumpy, &flat)),
        );
        let variant = format!("ContactBench's height field ×{FORMULA_SCALE}, μ = 0.9");
        page.claims.push(
            deviation_claim(&formula, &variant).why(Why::Protocol, deviation_reason(&formula)),
        );
        page.claims.push(
            criterion_claim(&formula, &variant).why(Why::Finding, criterion_reason(&formula)),
        );

        let falls: Vec<String> = blind
            .iter()
            .map(|(id, r)| {
                let t = fall_time(r);
                if t.is_nan() {
                    format!("{} walks", paper_name(*id))
                } else {
                    format!("{} falls at {} s", paper_name(*id), num(t))
                }
            })
            .collect();
        if ctx.quick {
            page.notes
                .push("The blind controller's walks run at the full size only.".into());
        } else {
            page.notes.push(format!(
            "The blind controller ({} m, μ = 0.3, target {} m/s, {} s): {}. A run that goes on after its fall may diverge (its outcome in the table).",
            num(amplitude),
            num(target),
            num(BLIND_DURATION),
            falls.join("; ")
        ));
        }
        page.notes.push("The solver times are wall times of single solves along the run (no repetition, no noise estimate): the panel illustrates them; the paper's timing remark (\"reduces the gap between per-contact and ADMM approaches\") is not tested.".into());

        let figure = walking_figure(
            &format!(
                "Fig. 18: Solo-12 trotting on a roughness of {} m, μ = 0.3, target {} m/s",
                num(amplitude),
                num(target)
            ),
            panels(&bumpy, field.as_ref()),
        );
        page.figures.push((
            "Base velocity against the target, NCP criterion and solver time per step, base paths from above, base height and the terrain under the NCP/PGS path".into(),
            ctx.figure("fig18", &figure)?,
        ));
        let figure = walking_figure(
            &format!(
                "Fig. 18 on ContactBench's height field ×{FORMULA_SCALE}, μ = 0.9, target {} m/s",
                num(target)
            ),
            panels(&formula, Some(&formula_field)),
        );
        page.figures.push((
            format!(
                "The same panels on ContactBench's height-field formula scaled by {FORMULA_SCALE}"
            ),
            ctx.figure("fig18_contactbench", &figure)?,
        ));
        Ok(page)
    }
}
