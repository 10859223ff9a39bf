//! `report::snapshot`: a still picture of a simulated world, drawn without a display.

use std::path::Path;

use contactbench::report::snapshot::{scene_png, HEIGHT, WIDTH};
use contactbench::simulation::runner::simulator;
use contactbench::simulation::view::scene_at;
use contactbench::simulation::Scenario;
use resvg::tiny_skia::Pixmap;

/// The PNG of `file` at `time`, decoded, with the scene's contact count.
fn picture(file: &str, time: f64) -> (Pixmap, usize) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scenarios")
        .join(file);
    let scenario = Scenario::load(&path, &[]).unwrap_or_else(|e| panic!("{e}"));
    let spec = scenario.solver_specs().remove(0);
    let sim = simulator(&scenario, &spec).unwrap_or_else(|e| panic!("{e}"));
    let scene = scene_at(sim, scenario.num_steps(), scenario.simulation.dt, time)
        .unwrap_or_else(|e| panic!("{e}"));
    let bytes = scene_png(&scene, "test").unwrap_or_else(|e| panic!("{e}"));
    let pixmap = Pixmap::decode_png(&bytes).unwrap_or_else(|e| panic!("{e}"));
    (pixmap, scene.contacts.len())
}

/// The variance of the pixels' grey level (0–255) and the share of pixels that are not
/// white.
fn grey_spread(pixmap: &Pixmap) -> (f64, f64) {
    let grey: Vec<f64> = pixmap
        .pixels()
        .iter()
        .map(|p| (f64::from(p.red()) + f64::from(p.green()) + f64::from(p.blue())) / 3.0)
        .collect();
    let n = grey.len() as f64;
    let mean = grey.iter().sum::<f64>() / n;
    let variance = grey.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / n;
    let drawn = grey.iter().filter(|&&g| g < 250.0).count() as f64 / n;
    (variance, drawn)
}

#[test]
fn a_pile_picture_is_drawn_with_its_contacts() {
    let (pixmap, contacts) = picture("pile_columns.yaml", 0.02);
    assert_eq!((pixmap.width(), pixmap.height()), (WIDTH, HEIGHT));
    let (variance, drawn) = grey_spread(&pixmap);
    println!("pile at 0.02 s: {contacts} contacts, grey variance {variance:.0}, drawn {drawn:.2}");
    assert!(contacts > 0);
    assert!(variance > 500.0, "variance {variance}");
    assert!(drawn > 0.2 && drawn < 0.9, "drawn share {drawn}");
}
