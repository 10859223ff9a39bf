//! The estimators' error against the exact derivative as samples, noise and the Gumbel
//! neighbourhood grow: the study of the paper's Fig. 6 ("the higher the number of samples,
//! the better the quality of the estimator; the higher the noise, the faster the
//! convergence at the price of reduced accuracy"), measured here on pairs whose
//! derivative is known in closed form instead of through a Gauss-Newton run.

use std::sync::Arc;

use nalgebra::{Isometry3, Translation3, UnitQuaternion, Vector3};
use plotters::style::RGBColor;
use rayon::prelude::*;

use crate::collision::smoothing::oracle::{box_on_slab, sphere_sphere};
use crate::collision::smoothing::{
    pair_derivatives, Estimator, GeometryJacobians, Pair, SmoothingError,
};
use crate::collision::{ContactSettings, ConvexHull, Shape};
use crate::paper::claims::{num, Claim};
use crate::paper::page::Page;
use crate::paper::{Context, Experiment, PaperError};
use crate::report::axis::Scale;
use crate::report::chart::{Curve, Figure, LineChart, Panel};
use crate::report::style::{Dash, LineStyle, Marker};
use crate::report::tables::markdown_table;

/// The study.
pub struct Samples;

const ID: &str = "rs-samples";

/// A pair with its exact Jacobians.
struct Case {
    name: &'static str,
    a: Shape,
    b: Shape,
    b_in_a: Isometry3<f64>,
    exact: GeometryJacobians,
}

fn failed(e: impl std::fmt::Display) -> PaperError {
    PaperError::RunFailed {
        run: ID.into(),
        reason: e.to_string(),
    }
}

fn pose(t: [f64; 3], rpy: [f64; 3]) -> Isometry3<f64> {
    Isometry3::from_parts(
        Translation3::new(t[0], t[1], t[2]),
        UnitQuaternion::from_euler_angles(rpy[0], rpy[1], rpy[2]),
    )
}

/// Two separated spheres (radii 0.1 and 0.15 m, 4.6 cm apart) and a box of half extents
/// 5 × 8 × 3 cm tilted 8.5 cm over the face of a 2 × 2 × 0.2 m slab.
fn cases() -> Result<Vec<Case>, PaperError> {
    let spheres_pose = pose([0.2, 0.1, 0.15], [0.3, -0.2, 0.5]);
    let (_, spheres) =
        sphere_sphere(0.1, 0.15, &spheres_pose).ok_or_else(|| failed("concentric spheres"))?;
    let half = Vector3::new(0.05, 0.08, 0.03);
    let box_pose = pose([0.1, -0.05, 0.2], [0.4, 0.3, 0.2]);
    let (_, on_slab) =
        box_on_slab(&half, 0.1, &box_pose).ok_or_else(|| failed("no unique lowest vertex"))?;
    Ok(vec![
        Case {
            name: "two spheres",
            a: Shape::sphere(0.1).map_err(failed)?,
            b: Shape::sphere(0.15).map_err(failed)?,
            b_in_a: spheres_pose,
            exact: spheres,
        },
        Case {
            name: "box over a slab",
            a: Shape::cuboid(Vector3::new(1.0, 1.0, 0.1)).map_err(failed)?,
            b: Shape::cuboid(half).map_err(failed)?,
            b_in_a: box_pose,
            exact: on_slab,
        },
    ])
}

/// The hull of `n` points spread evenly on a sphere (Fibonacci lattice).
fn sphere_mesh(radius: f64, n: usize) -> Result<Shape, PaperError> {
    let golden = std::f64::consts::PI * (3.0 - 5f64.sqrt());
    let points: Vec<Vector3<f64>> = (0..n)
        .map(|k| {
            let z = 1.0 - 2.0 * (k as f64 + 0.5) / n as f64;
            let r = (1.0 - z * z).sqrt();
            let phi = golden * k as f64;
            Vector3::new(r * phi.cos(), r * phi.sin(), z) * radius
        })
        .collect();
    let hull = ConvexHull::from_points(&points, "sphere lattice").map_err(failed)?;
    Ok(Shape::convex_hull(Arc::new(hull)))
}

/// Mean over `seeds` seeds of the largest Jacobian error relative to the largest entry
/// of the exact witness Jacobians.
fn mean_error(
    case: &Case,
    seeds: u64,
    make: impl Fn(u64) -> Estimator + Sync,
) -> Result<f64, SmoothingError> {
    let pair = Pair {
        a: &case.a,
        b: &case.b,
        b_in_a: case.b_in_a,
    };
    let settings = ContactSettings::default();
    let errors = (0..seeds)
        .into_par_iter()
        .map(|seed| {
            let d = pair_derivatives(&pair, &make(seed), &settings)?;
            Ok(d.jacobians.max_difference(&case.exact) / case.exact.witness_scale())
        })
        .collect::<Result<Vec<f64>, SmoothingError>>()?;
    Ok(errors.iter().sum::<f64>() / seeds as f64)
}

/// One curve: an estimator family at a noise level, its error per sample count.
struct Series {
    case: usize,
    estimator: &'static str,
    noise: f64,
    errors: Vec<(usize, f64)>,
}

/// The noise of both estimators on each pair (the same for both, so that the errors
/// compare at equal noise and samples).
const CASE_NOISE: [f64; 2] = [1e-3, 1e-4];
const NOISE_STUDY: [f64; 3] = [1e-5, 1e-3, 1e-2];
const TEMPERATURES: [f64; 3] = [5e-5, 1e-4, 2e-4];
const RINGS: [usize; 7] = [0, 1, 2, 3, 4, 6, 8];

fn zeroth(samples: usize, noise: f64) -> impl Fn(u64) -> Estimator + Sync {
    move |seed| Estimator::ZerothOrder {
        samples,
        noise,
        seed,
    }
}

fn gaussian(samples: usize, noise: f64) -> impl Fn(u64) -> Estimator + Sync {
    move |seed| Estimator::FirstOrderGaussian {
        samples,
        noise,
        seed,
    }
}

fn series(
    cases: &[Case],
    case: usize,
    estimator: &'static str,
    noise: f64,
    samples: &[usize],
    seeds: u64,
) -> Result<Series, PaperError> {
    let errors = samples
        .iter()
        .map(|&m| {
            let e = if estimator == "zeroth" {
                mean_error(&cases[case], seeds, zeroth(m, noise))
            } else {
                mean_error(&cases[case], seeds, gaussian(m, noise))
            };
            e.map(|e| (m, e)).map_err(failed)
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Series {
        case,
        estimator,
        noise,
        errors,
    })
}

const COLORS: [RGBColor; 4] = [
    RGBColor(0, 114, 178),
    RGBColor(213, 94, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
];

fn style(k: usize, dashed: bool) -> LineStyle {
    LineStyle {
        color: COLORS[k % COLORS.len()],
        dash: if dashed {
            Dash::Dashed { on: 8, off: 4 }
        } else {
            Dash::Solid
        },
        marker: if dashed {
            Marker::Triangle
        } else {
            Marker::Circle
        },
    }
}

fn label(s: &Series) -> String {
    // The 0th-order noise is on the pose (m and rad), the 1st-order's on the separation
    // vector (m).
    let (name, unit) = if s.estimator == "zeroth" {
        ("0th-order", "m, rad")
    } else {
        ("1st-order Gaussian", "m")
    };
    format!("{name}, ε = {} {unit}", num(s.noise))
}

fn samples_panel(title: &str, curves: &[&Series]) -> Panel {
    Panel::Line(LineChart {
        title: title.into(),
        x_label: "samples M".into(),
        y_label: "relative error of the Jacobians".into(),
        x_scale: Scale::Log,
        y_scale: Scale::Log,
        curves: curves
            .iter()
            .enumerate()
            .map(|(k, s)| {
                let points = s.errors.iter().map(|&(m, e)| (m as f64, e)).collect();
                Curve::styled(label(s), points, style(k, s.estimator == "zeroth")).marked()
            })
            .collect(),
        ..LineChart::default()
    })
}

impl Experiment for Samples {
    fn id(&self) -> &'static str {
        ID
    }

    fn paper_ref(&self) -> &'static str {
        "RS Fig. 6, §V"
    }

    fn title(&self) -> &'static str {
        "Estimator error against samples, noise and neighbourhood"
    }

    fn run(&self, ctx: &Context) -> Result<Page, PaperError> {
        let samples: Vec<usize> = if ctx.quick {
            vec![4, 16, 64, 256, 1024]
        } else {
            vec![4, 16, 64, 256, 1024, 4096]
        };
        let seeds = if ctx.quick { 4 } else { 10 };
        let cases = cases()?;
        let mut study = Vec::new();
        for (c, noise) in CASE_NOISE.iter().enumerate() {
            study.push(series(&cases, c, "zeroth", *noise, &samples, seeds)?);
            study.push(series(&cases, c, "first", *noise, &samples, seeds)?);
        }
        let noise_study = NOISE_STUDY
            .iter()
            .map(|&noise| series(&cases, 1, "first", noise, &samples, seeds))
            .collect::<Result<Vec<_>, _>>()?;
        let gumbel = gumbel_study()?;
        let of_case = |c: usize| study.iter().filter(|s| s.case == c).collect::<Vec<_>>();
        let mut noise_curves: Vec<&Series> = noise_study.iter().collect();
        noise_curves.extend(study.get(3));
        noise_curves.sort_by(|x, y| x.noise.total_cmp(&y.noise));
        let stem = ctx.figure(
            ID,
            &Figure::grid(
                "Randomized-smoothing derivatives against the exact ones",
                2,
                vec![
                    samples_panel("(a) two spheres", &of_case(0)),
                    samples_panel("(b) box over a slab", &of_case(1)),
                    samples_panel("(c) box over a slab: noise of the 1st-order", &noise_curves),
                    gumbel_panel(&gumbel),
                ],
            ),
        )?;
        let mut page = Page::headed(self);
        page.setup = vec![
            "Pairs with a closed-form derivative (`collision::smoothing::oracle`): two spheres \
             of radii 0.1 and 0.15 m, 4.6 cm apart; a box of half extents 5 × 8 × 3 cm, tilted, \
             its lowest vertex 8.5 cm over the face of a 2 × 2 × 0.2 m slab (a box: GJK needs \
             a bounded shape)."
                .into(),
            format!(
                "Error: the largest entry of the difference of the four Jacobians (witness \
                 points, normal, signed distance, with respect to B's pose) over the largest \
                 entry of the exact witness Jacobians, mean over {seeds} seeds. 0th-order noise \
                 on the pose (m and rad); 1st-order Gaussian noise on the separation \
                 vector (m); Gumbel temperature on ⟨vᵢ, x*⟩ (m²), as in the paper."
            ),
            "Gumbel: two hulls of 3000 points on spheres of radii 0.1 and 0.15 m (Fibonacci \
             lattice, about 6 mm between neighbours), compared with the exact spheres' \
             derivatives; the zero Hessian of the hulls' piecewise-constant support (eq. 25) \
             is the baseline."
                .into(),
        ];
        page.figures.push((
            "Relative error against samples (a-c) and against the Gumbel neighbourhood (d)".into(),
            stem,
        ));
        page.tables
            .push(samples_table(&cases, &study, &noise_study));
        page.tables.push(gumbel_table(&gumbel));
        page.claims = claims(&study, &noise_study, &gumbel);
        page.data
            .push(csv(ctx, &cases, &study, &noise_study, &gumbel)?);
        Ok(page)
    }
}

/// Gumbel errors per temperature and neighbourhood depth, and the zero-Hessian baseline.
struct GumbelStudy {
    errors: Vec<(f64, Vec<(usize, f64)>)>,
    zero_hessian: f64,
}

fn gumbel_study() -> Result<GumbelStudy, PaperError> {
    let b_in_a = pose([0.2, 0.1, 0.15], [0.3, -0.2, 0.5]);
    let (_, exact) =
        sphere_sphere(0.1, 0.15, &b_in_a).ok_or_else(|| failed("concentric spheres"))?;
    let case = Case {
        name: "sphere meshes",
        a: sphere_mesh(0.1, 3000)?,
        b: sphere_mesh(0.15, 3000)?,
        b_in_a,
        exact,
    };
    let errors = TEMPERATURES
        .iter()
        .map(|&noise| {
            let row = RINGS
                .iter()
                .map(|&rings| {
                    mean_error(&case, 1, |_| Estimator::FirstOrderGumbel { rings, noise })
                        .map(|e| (rings, e))
                        .map_err(failed)
                })
                .collect::<Result<Vec<_>, _>>()?;
            Ok((noise, row))
        })
        .collect::<Result<Vec<_>, PaperError>>()?;
    let zero_hessian = mean_error(&case, 1, |_| Estimator::FirstOrderExact).map_err(failed)?;
    Ok(GumbelStudy {
        errors,
        zero_hessian,
    })
}

fn gumbel_panel(g: &GumbelStudy) -> Panel {
    let mut curves: Vec<Curve> = g
        .errors
        .iter()
        .enumerate()
        .map(|(k, (noise, row))| {
            let points = row.iter().map(|&(r, e)| (r as f64, e)).collect();
            Curve::styled(
                format!("1st-order Gumbel, ε = {} m²", num(*noise)),
                points,
                style(k, false),
            )
            .marked()
        })
        .collect();
    let last = RINGS[RINGS.len() - 1] as f64;
    curves.push(Curve::styled(
        "zero Hessian (eq. 25)",
        vec![(0.0, g.zero_hessian), (last, g.zero_hessian)],
        style(3, true),
    ));
    Panel::Line(LineChart {
        title: "(d) sphere meshes: Gumbel neighbourhood".into(),
        x_label: "neighbourhood depth (edges from the witness vertex)".into(),
        y_label: "relative error of the Jacobians".into(),
        x_scale: Scale::Linear,
        y_scale: Scale::Log,
        curves,
        ..LineChart::default()
    })
}

fn samples_table(cases: &[Case], study: &[Series], noise_study: &[Series]) -> (String, String) {
    let Some(first) = study.first() else {
        return ("Relative error".into(), String::new());
    };
    let mut header = vec!["pair".to_string(), "estimator".to_string()];
    header.extend(first.errors.iter().map(|(m, _)| format!("M = {m}")));
    let rows: Vec<Vec<String>> = study
        .iter()
        .chain(noise_study)
        .map(|s| {
            let mut row = vec![cases[s.case].name.to_string(), label(s)];
            row.extend(s.errors.iter().map(|(_, e)| num(*e)));
            row
        })
        .collect();
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    (
        "Relative error of the Jacobians against the exact ones".into(),
        markdown_table(&header, &rows),
    )
}

fn gumbel_table(g: &GumbelStudy) -> (String, String) {
    let mut header = vec!["temperature ε (m²)".to_string()];
    header.extend(
        RINGS
            .iter()
            .map(|r| format!("neighbourhood depth {r} (edges)")),
    );
    let rows: Vec<Vec<String>> = g
        .errors
        .iter()
        .map(|(noise, row)| {
            let mut out = vec![num(*noise)];
            out.extend(row.iter().map(|(_, e)| num(*e)));
            out
        })
        .collect();
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    (
        format!(
            "Gumbel on the sphere meshes: relative error (zero Hessian: {})",
            num(g.zero_hessian)
        ),
        markdown_table(&header, &rows),
    )
}

fn first_last(s: &Series) -> (f64, f64) {
    let first = s.errors.first().map_or(f64::NAN, |e| e.1);
    let last = s.errors.last().map_or(f64::NAN, |e| e.1);
    (first, last)
}

fn claims(study: &[Series], noise_study: &[Series], g: &GumbelStudy) -> Vec<Claim> {
    let mut claims = Vec::new();
    let parts: Vec<Claim> = study
        .iter()
        .map(|s| {
            let (first, last) = first_last(s);
            let (m0, m1) = (
                s.errors.first().map_or(0, |e| e.0),
                s.errors.last().map_or(0, |e| e.0),
            );
            Claim::ratio_at_least(
                "",
                (&format!("error({}, M = {m0})", label(s)), first),
                (&format!("error(M = {m1})"), last),
                2.0,
            )
        })
        .collect();
    claims.push(
        Claim::all(
            "the higher the number of samples, the better the quality of the estimator (§V, Fig. 6)",
            parts,
        )
        .threshold("our choice: at least halved over the range of samples"),
    );
    let mut noise_series: Vec<&Series> = noise_study.iter().chain(study.get(3)).collect();
    noise_series.sort_by(|x, y| x.noise.total_cmp(&y.noise));
    let noise_items: Vec<(String, f64)> = noise_series
        .iter()
        .map(|s| (format!("error(ε = {})", num(s.noise)), first_last(s).1))
        .collect();
    claims.push(Claim::increasing(
        "the higher the noise, the less precise the estimator ends (§V, Fig. 6): error of the \
         1st-order Gaussian estimator at the most samples, box over a slab",
        &noise_items,
    ));
    let parts: Vec<Claim> = study
        .chunks(2)
        .flat_map(|pair| {
            let (zeroth, first) = (&pair[0], &pair[1]);
            zeroth
                .errors
                .iter()
                .zip(&first.errors)
                .map(|(z, f)| {
                    Claim::ratio_at_least(
                        "",
                        (&format!("error({}, M = {})", label(zeroth), z.0), z.1),
                        (&label(first), f.1),
                        1.0,
                    )
                })
                .collect::<Vec<_>>()
        })
        .collect();
    claims.push(Claim::all(
        "the 1st-order estimator is more accurate than the 0th-order one (abstract, §I), at \
         equal samples and noise",
        parts,
    ));
    let best = g
        .errors
        .iter()
        .flat_map(|(_, row)| row.last().map(|e| e.1))
        .fold(f64::INFINITY, f64::min);
    claims.push(
        Claim::ratio_at_least(
            "without smoothing, a mesh's derivatives forget the curvature of the surface it \
             approximates (eq. 25); the Gumbel soft-max on a neighbourhood recovers it (§IV)",
            ("error(zero Hessian)", g.zero_hessian),
            (
                &format!(
                    "best Gumbel error at neighbourhood depth {}",
                    RINGS[RINGS.len() - 1]
                ),
                best,
            ),
            3.0,
        )
        .threshold("our choice: a threefold smaller error"),
    );
    claims
}

fn csv(
    ctx: &Context,
    cases: &[Case],
    study: &[Series],
    noise_study: &[Series],
    g: &GumbelStudy,
) -> Result<String, PaperError> {
    let mut rows = Vec::new();
    for s in study.iter().chain(noise_study) {
        for (m, e) in &s.errors {
            rows.push(vec![
                cases[s.case].name.to_string(),
                s.estimator.to_string(),
                num(s.noise),
                m.to_string(),
                String::new(),
                format!("{e:.6e}"),
            ]);
        }
    }
    for (noise, row) in &g.errors {
        for (rings, e) in row {
            rows.push(vec![
                "sphere meshes".into(),
                "gumbel".into(),
                num(*noise),
                String::new(),
                rings.to_string(),
                format!("{e:.6e}"),
            ]);
        }
    }
    rows.push(vec![
        "sphere meshes".into(),
        "zero-hessian".into(),
        String::new(),
        String::new(),
        String::new(),
        format!("{:.6e}", g.zero_hessian),
    ]);
    ctx.csv(
        &format!("{ID}.csv"),
        &[
            "pair",
            "estimator",
            "noise",
            "samples",
            "rings",
            "relative_error",
        ],
        &rows,
    )
}
