//! Figures: text spaced as it was measured, one look per solver, the SVG, PNG and PDF
//! files of a figure written and readable, and a report's labels in words.

use std::path::{Path, PathBuf};

use contactbench::output::Replace;
use contactbench::report::axis::Scale;
use contactbench::report::chart::{font_family, render, Curve, Figure, LineChart, Panel};
use contactbench::report::make_report_with;
use contactbench::report::style::{distinct_styles, solver_style};
use contactbench::simulation::batch::{jobs_overriding, run_batch, Runner};
use contactbench::simulation::runner::simulate_into;
use contactbench::simulation::Scenario;
use contactbench::solvers::SolverId;
use resvg::tiny_skia::Pixmap;

fn temp_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "contactbench-figures-{name}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn small_chart() -> Panel {
    Panel::Line(LineChart {
        title: "solver time per step".into(),
        x_label: "time (s)".into(),
        y_label: "NCP criterion".into(),
        y_scale: Scale::Log,
        curves: vec![
            Curve::new("ncp-pgs", vec![(0.0, 1e-3), (1.0, 1e-6), (2.0, 0.0)]),
            Curve::new("lcp-pgs", vec![(0.0, 1e-2), (1.0, 1e-4), (2.0, 1e-5)]),
        ],
        ..Default::default()
    })
}

/// The widest run of blank pixel columns between the first and last inked columns of
/// the figure's title band (its top 36 pixels).
fn widest_gap_in_title(png: &Path) -> usize {
    let pixmap = Pixmap::load_png(png).unwrap();
    let width = pixmap.width() as usize;
    let dark = |x: usize, y: u32| {
        let p = pixmap.pixel(x as u32, y).unwrap();
        p.red() < 140 && p.green() < 140 && p.blue() < 140
    };
    // The title's rows: the first band of inked rows (the subtitle below it has spaces).
    let row_inked = |y: u32| (0..width).any(|x| dark(x, y));
    let top = (0..pixmap.height()).find(|y| row_inked(*y)).unwrap();
    let bottom = (top..pixmap.height()).find(|y| !row_inked(*y)).unwrap();
    let inked: Vec<bool> = (0..width)
        .map(|x| (top..bottom).any(|y| dark(x, y)))
        .collect();
    let first = inked.iter().position(|i| *i).unwrap();
    let last = inked.iter().rposition(|i| *i).unwrap();
    inked[first..=last]
        .split(|i| *i)
        .map(<[bool]>::len)
        .max()
        .unwrap_or(0)
}

#[test]
fn title_letters_are_spaced_as_measured() {
    let dir = temp_dir("spacing");
    let gap = |title: &str, stem: &str| {
        render(&Figure::grid(title, 1, vec![small_chart()]), &dir, stem).unwrap();
        widest_gap_in_title(&dir.join(format!("{stem}.png")))
    };
    // A letter gap inside a word is at most a few pixels at 24 px; a space is wider.
    let inside = gap("trajectory", "inside");
    assert!(inside <= 3, "a {inside} px gap inside \"trajectory\"");
    let split = gap("traj ectory", "split");
    assert!(
        split >= inside + 3,
        "\"traj ectory\" ({split} px) reads as \"trajectory\" ({inside} px)"
    );
}

#[test]
fn a_figure_is_written_as_svg_png_and_pdf_naming_its_font() {
    let dir = temp_dir("files");
    render(&Figure::single(small_chart()), &dir, "chart").unwrap();
    let family = font_family().unwrap();
    assert!(family.contains("Ubuntu"), "{family}");

    let svg = std::fs::read_to_string(dir.join("chart.svg")).unwrap();
    assert!(!svg.contains("font-family=\"sans-serif\""));
    assert!(svg.contains(&format!("font-family=\"'{family}', sans-serif\"")));
    let tree = resvg::usvg::Tree::from_str(&svg, &resvg::usvg::Options::default()).unwrap();
    assert_eq!(tree.size().width(), 960.0);

    let png = Pixmap::load_png(dir.join("chart.png")).unwrap();
    assert_eq!((png.width(), png.height()), (960, 600));

    let pdf = std::fs::read(dir.join("chart.pdf")).unwrap();
    assert!(pdf.starts_with(b"%PDF-"));
    let tail = String::from_utf8_lossy(&pdf[pdf.len().saturating_sub(64)..]).into_owned();
    assert!(tail.contains("%%EOF"), "{tail}");
    let text = String::from_utf8_lossy(&pdf);
    assert!(
        text.contains("/FontFile2"),
        "the PDF does not embed its font"
    );
    assert!(
        text.contains("Ubuntu"),
        "the PDF's font is not the embedded one"
    );
}

#[test]
fn every_built_in_solver_has_its_own_colour_and_dash() {
    let labels: Vec<String> = SolverId::ALL.iter().map(|id| id.to_string()).collect();
    let styles = distinct_styles(&labels);
    for (i, (id, style)) in SolverId::ALL.iter().zip(&styles).enumerate() {
        assert_eq!(
            *style,
            solver_style(*id),
            "{id} changed in a figure of all solvers"
        );
        for (other, earlier) in SolverId::ALL.iter().zip(&styles[..i]) {
            assert!(
                (style.color, style.dash) != (earlier.color, earlier.dash),
                "{id} and {other} look alike"
            );
        }
    }
}

#[test]
fn two_settings_of_one_solver_are_told_apart() {
    let styles = distinct_styles(&["ncp-pgs", "ncp-pgs:block=exact", "ncp-admm"]);
    assert_eq!(styles[0].color, styles[1].color);
    assert_ne!(styles[0].dash, styles[1].dash);
}

/// The text of every `<text>` element of an SVG file.
fn svg_texts(svg: &str) -> Vec<String> {
    svg.split("<text")
        .skip(1)
        .filter_map(|rest| {
            let start = rest.find('>')? + 1;
            let end = rest.find("</text>")?;
            (start <= end).then(|| rest[start..end].to_string())
        })
        .collect()
}

/// A report of a resting pile of cubes (`pile_columns`, 30 steps, ncp-admm).
fn pile_report(out: &Path) -> PathBuf {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/pile_columns.yaml");
    let scenario = Scenario::load(&path, &["simulation.duration=0.03".to_string()]).unwrap();
    let jobs = jobs_overriding(vec![scenario], &["ncp-admm".into()]).unwrap();
    let runner: &Runner = &|scenario, solver, recorder| {
        simulate_into(scenario, solver, recorder).map_err(|e| e.to_string())
    };
    run_batch(&jobs, out, runner, false, Replace::Never).unwrap();
    make_report_with(out, Replace::Never).unwrap();
    out.join("report")
}

#[test]
fn report_figures_are_labelled_in_words_and_draw_a_resting_force_flat() {
    let out = temp_dir("pile").join("results");
    let report = pile_report(&out);
    let mut svgs = 0;
    for entry in std::fs::read_dir(&report).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "svg") {
            continue;
        }
        svgs += 1;
        let svg = std::fs::read_to_string(&path).unwrap();
        for text in svg_texts(&svg) {
            // The scenario's name is a name; any other `a_b` is a code identifier.
            let words = text.replace("pile_columns", "");
            assert!(
                !words.contains('_'),
                "{}: label {text:?} has a code identifier",
                path.display()
            );
        }
    }
    assert_eq!(svgs, 5, "energy, trajectory, residuals, forces and timings");
    // The pile's 118 N weight is carried to within the solver's tolerance: a figure that
    // resolved that variation would draw the tolerance as spikes.
    let forces = std::fs::read_to_string(report.join("pile_columns_forces.svg")).unwrap();
    let title = svg_texts(&forces)
        .into_iter()
        .find(|t| t.contains("total normal contact force") && t.contains(':'))
        .unwrap();
    assert!(title.contains("drawn flat"), "{title}");
    assert!(
        !svg_texts(&forces).iter().any(|t| t.contains("e-")),
        "the force axis is labelled in tiny values: {:?}",
        svg_texts(&forces)
    );
    let _ = std::fs::remove_dir_all(out.parent().unwrap());
}
