//! A still picture of a simulated world ([`Scene`]) without a display: the triangles of
//! the links, bodies and ground drawn flat-shaded from a fixed three-quarter camera, far
//! ones first (painter's algorithm), as an SVG that resvg rasterizes to PNG. Contact
//! points (red dots), normals (blue) and forces (orange arrows, the largest a third of the
//! scene's size) are drawn over the geometry.
//!
//! The camera is orthographic, looking down 30° from the front-right (azimuth −60° from
//! +x), fitted to the bounding box of everything but the ground and to the ground drawn
//! around that box's footprint only (half its size on each side), so that a small robot on
//! a large terrain fills the picture.

use std::fmt::Write as _;
use std::sync::Arc;

use nalgebra::{Matrix3, Vector2, Vector3};
use resvg::{tiny_skia, usvg};
use thiserror::Error;

use crate::simulation::view::{Scene, SceneRole};

/// Picture width (px).
pub const WIDTH: u32 = 960;
/// Picture height (px).
pub const HEIGHT: u32 = 720;
/// Margin around the fitted scene (px).
const MARGIN: f64 = 40.0;
/// Height of the caption band at the top (px).
const CAPTION: f64 = 36.0;
/// Camera elevation and azimuth (rad).
const ELEVATION: f64 = 30.0 * std::f64::consts::PI / 180.0;
const AZIMUTH: f64 = -60.0 * std::f64::consts::PI / 180.0;
/// Direction towards the light (world axes, before normalizing): above, left of the camera.
const LIGHT: [f64; 3] = [0.3, -0.8, 1.0];
/// Length of a drawn normal, as a fraction of the scene's size.
const NORMAL_FRACTION: f64 = 0.08;
/// Length of the largest drawn force, as a fraction of the scene's size.
const FORCE_FRACTION: f64 = 1.0 / 3.0;

/// Why a picture could not be made.
#[derive(Debug, Error)]
pub enum SnapshotError {
    /// The scene has nothing to fit the camera to.
    #[error("the scene has no object to draw")]
    Empty,
    /// The drawing could not be rasterized or encoded.
    #[error("rendering: {0}")]
    Render(String),
}

/// The fixed camera: world → picture (px, y down) and depth (larger is nearer).
struct Camera {
    rotation: Matrix3<f64>,
    scale: f64,
    offset: Vector2<f64>,
}

impl Camera {
    /// Rows: the picture's right, up and towards-the-viewer axes in world coordinates.
    fn rotation() -> Matrix3<f64> {
        let toward = Vector3::new(
            ELEVATION.cos() * AZIMUTH.cos(),
            ELEVATION.cos() * AZIMUTH.sin(),
            ELEVATION.sin(),
        );
        let right = Vector3::z().cross(&toward).normalize();
        let up = toward.cross(&right);
        Matrix3::from_rows(&[right.transpose(), up.transpose(), toward.transpose()])
    }

    /// The camera that fits `points` in the picture below the caption.
    fn fitted(points: &[Vector3<f64>]) -> Option<Camera> {
        let rotation = Camera::rotation();
        let (mut lo, mut hi) = (
            Vector2::repeat(f64::INFINITY),
            Vector2::repeat(f64::NEG_INFINITY),
        );
        for p in points {
            let r = rotation * p;
            lo = lo.inf(&r.xy());
            hi = hi.sup(&r.xy());
        }
        let extent = (hi - lo).map(|e| e.max(1e-3));
        if !extent.iter().all(|e| e.is_finite()) {
            return None;
        }
        let (w, h) = (
            f64::from(WIDTH) - 2.0 * MARGIN,
            f64::from(HEIGHT) - 2.0 * MARGIN - CAPTION,
        );
        let scale = (w / extent.x).min(h / extent.y);
        let centre = (lo + hi) / 2.0;
        let offset = Vector2::new(
            f64::from(WIDTH) / 2.0 - scale * centre.x,
            CAPTION + MARGIN + h / 2.0 + scale * centre.y,
        );
        Some(Camera {
            rotation,
            scale,
            offset,
        })
    }

    /// Picture coordinates (px) and depth of a world point.
    fn project(&self, p: &Vector3<f64>) -> (Vector2<f64>, f64) {
        let r = self.rotation * p;
        (
            Vector2::new(
                self.offset.x + self.scale * r.x,
                self.offset.y - self.scale * r.y,
            ),
            r.z,
        )
    }
}

/// The base colour (RGB, 0–1) of an object.
fn base_colour(role: SceneRole) -> [f64; 3] {
    const BODIES: [[f64; 3]; 5] = [
        [0.85, 0.55, 0.35],
        [0.45, 0.6, 0.85],
        [0.6, 0.75, 0.45],
        [0.8, 0.7, 0.4],
        [0.7, 0.5, 0.75],
    ];
    match role {
        SceneRole::Ground => [0.62, 0.66, 0.6],
        SceneRole::Link => [0.72, 0.74, 0.8],
        SceneRole::Body(k) => BODIES[k % BODIES.len()],
    }
}

/// Lambert shading of a face of unit normal `n` (either side lit), with an ambient floor.
fn shaded(colour: [f64; 3], n: &Vector3<f64>) -> String {
    let light = Vector3::from(LIGHT).normalize();
    let k = 0.35 + 0.65 * n.dot(&light).abs();
    let [r, g, b] = colour.map(|c| (255.0 * (c * k).clamp(0.0, 1.0)).round() as u8);
    format!("#{r:02x}{g:02x}{b:02x}")
}

/// The points the camera is fitted to: every vertex but the ground's, and the contacts.
fn fitted_points(scene: &Scene) -> Vec<Vector3<f64>> {
    let mut points: Vec<Vector3<f64>> = scene
        .objects
        .iter()
        .filter(|o| o.role != SceneRole::Ground)
        .flat_map(|o| o.triangles.iter().flatten().copied())
        .collect();
    points.extend(scene.contacts.iter().map(|c| c.point));
    points
}

/// The axis-aligned box `[lo, hi]` of `points`.
fn bounds(points: &[Vector3<f64>]) -> (Vector3<f64>, Vector3<f64>) {
    points.iter().fold(
        (
            Vector3::repeat(f64::INFINITY),
            Vector3::repeat(f64::NEG_INFINITY),
        ),
        |(lo, hi), p| (lo.inf(p), hi.sup(p)),
    )
}

/// How far the ground is drawn beyond the objects' footprint `[lo, hi]` (m): half the
/// footprint's size, at least 10 cm.
fn footprint_pad(lo: &Vector3<f64>, hi: &Vector3<f64>) -> Vector2<f64> {
    ((hi - lo).xy() / 2.0).map(|e| e.max(0.1))
}

/// A drawn triangle: its corners (px), its depth and its fill.
struct Face {
    corners: [Vector2<f64>; 3],
    depth: f64,
    fill: String,
}

/// The triangles of the scene, the ground's kept only around the other objects'
/// footprint ([`footprint_pad`]), far ones first.
fn faces(scene: &Scene, camera: &Camera, lo: &Vector3<f64>, hi: &Vector3<f64>) -> Vec<Face> {
    let pad = footprint_pad(lo, hi);
    let near_footprint = |p: &Vector3<f64>| {
        p.x >= lo.x - pad.x && p.x <= hi.x + pad.x && p.y >= lo.y - pad.y && p.y <= hi.y + pad.y
    };
    let mut faces = Vec::new();
    for object in &scene.objects {
        let colour = base_colour(object.role);
        for t in &object.triangles {
            let t = match object.role {
                SceneRole::Ground if t.iter().all(|p| p.z.abs() < 1e-12) => {
                    clip_flat_ground(t, lo, hi, &pad)
                }
                SceneRole::Ground if !t.iter().all(near_footprint) => continue,
                _ => *t,
            };
            let normal = (t[1] - t[0]).cross(&(t[2] - t[0]));
            let Some(normal) = normal.try_normalize(1e-18) else {
                continue;
            };
            let projected = t.map(|p| camera.project(&p));
            faces.push(Face {
                corners: projected.map(|(c, _)| c),
                depth: projected.iter().map(|(_, d)| d).sum::<f64>() / 3.0,
                fill: shaded(colour, &normal),
            });
        }
    }
    faces.sort_by(|a, b| a.depth.total_cmp(&b.depth));
    faces
}

/// A triangle of the flat ground (a large square) shrunk to the footprint around the
/// objects: its corners clamped to the padded box.
fn clip_flat_ground(
    t: &[Vector3<f64>; 3],
    lo: &Vector3<f64>,
    hi: &Vector3<f64>,
    pad: &Vector2<f64>,
) -> [Vector3<f64>; 3] {
    t.map(|p| {
        Vector3::new(
            p.x.clamp(lo.x - pad.x, hi.x + pad.x),
            p.y.clamp(lo.y - pad.y, hi.y + pad.y),
            p.z,
        )
    })
}

/// The SVG of `scene` with `caption` above it.
pub fn scene_svg(scene: &Scene, caption: &str) -> Result<String, SnapshotError> {
    let points = fitted_points(scene);
    if points.is_empty() {
        return Err(SnapshotError::Empty);
    }
    let (lo, hi) = bounds(&points);
    let size = (hi - lo).norm().max(1e-3);
    let mut framed = points;
    if scene.objects.iter().any(|o| o.role == SceneRole::Ground) {
        let pad = footprint_pad(&lo, &hi);
        for x in [lo.x - pad.x, hi.x + pad.x] {
            for y in [lo.y - pad.y, hi.y + pad.y] {
                framed.push(Vector3::new(x, y, 0.0));
            }
        }
    }
    let camera = Camera::fitted(&framed).ok_or(SnapshotError::Empty)?;
    let mut svg = String::new();
    let px = |v: f64| (v * 10.0).round() / 10.0;
    let _ = write!(
        svg,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{HEIGHT}\" \
         viewBox=\"0 0 {WIDTH} {HEIGHT}\">\n<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n"
    );
    for face in faces(scene, &camera, &lo, &hi) {
        let [a, b, c] = face.corners;
        let _ = writeln!(
            svg,
            "<polygon points=\"{},{} {},{} {},{}\" fill=\"{f}\" stroke=\"{f}\" \
             stroke-width=\"0.6\" stroke-linejoin=\"round\"/>",
            px(a.x),
            px(a.y),
            px(b.x),
            px(b.y),
            px(c.x),
            px(c.y),
            f = face.fill
        );
    }
    let largest = scene
        .contacts
        .iter()
        .map(|c| c.force.norm())
        .fold(0.0, f64::max);
    let force_scale = if largest > 0.0 {
        FORCE_FRACTION * size / largest
    } else {
        0.0
    };
    for contact in &scene.contacts {
        let (p, _) = camera.project(&contact.point);
        let tip = |v: Vector3<f64>| camera.project(&(contact.point + v)).0;
        let n = tip(contact.normal * NORMAL_FRACTION * size);
        let f = tip(contact.force * force_scale);
        let _ = writeln!(
            svg,
            "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#1f4fd8\" stroke-width=\"1.5\"/>",
            px(p.x),
            px(p.y),
            px(n.x),
            px(n.y)
        );
        arrow(&mut svg, &p, &f);
        let _ = writeln!(
            svg,
            "<circle cx=\"{}\" cy=\"{}\" r=\"3\" fill=\"#d62020\"/>",
            px(p.x),
            px(p.y)
        );
    }
    let _ = writeln!(
        svg,
        "<text x=\"{MARGIN}\" y=\"{}\" font-size=\"18\" fill=\"#222222\">{}</text>\n</svg>",
        CAPTION - 10.0,
        escape(caption)
    );
    Ok(svg)
}

/// An orange arrow from `from` to `to` (px), its head 8 px long.
fn arrow(svg: &mut String, from: &Vector2<f64>, to: &Vector2<f64>) {
    let d = to - from;
    let Some(u) = d.try_normalize(1e-9) else {
        return;
    };
    let head = 8.0_f64.min(d.norm());
    let side = Vector2::new(-u.y, u.x) * head * 0.45;
    let base = to - u * head;
    let (l, r) = (base + side, base - side);
    let _ = writeln!(
        svg,
        "<line x1=\"{:.1}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"#f0900c\" \
         stroke-width=\"2\"/>\n<polygon points=\"{:.1},{:.1} {:.1},{:.1} {:.1},{:.1}\" fill=\"#f0900c\"/>",
        from.x, from.y, base.x, base.y, to.x, to.y, l.x, l.y, r.x, r.y
    );
}

/// `text` with the XML special characters escaped.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The PNG bytes of `scene` with `caption` (the caption in the embedded figure font).
pub fn scene_png(scene: &Scene, caption: &str) -> Result<Vec<u8>, SnapshotError> {
    let svg = scene_svg(scene, caption)?;
    let mut database = usvg::fontdb::Database::new();
    database.load_font_data(epaint_default_fonts::UBUNTU_LIGHT.to_vec());
    let family = database
        .faces()
        .next()
        .and_then(|f| f.families.first().map(|(name, _)| name.clone()))
        .ok_or_else(|| SnapshotError::Render("the embedded font holds no face".into()))?;
    let options = usvg::Options {
        fontdb: Arc::new(database),
        font_family: family,
        ..usvg::Options::default()
    };
    let tree =
        usvg::Tree::from_str(&svg, &options).map_err(|e| SnapshotError::Render(e.to_string()))?;
    let mut pixmap = tiny_skia::Pixmap::new(WIDTH, HEIGHT)
        .ok_or_else(|| SnapshotError::Render(format!("no {WIDTH}×{HEIGHT} image")))?;
    resvg::render(
        &tree,
        tiny_skia::Transform::identity(),
        &mut pixmap.as_mut(),
    );
    pixmap
        .encode_png()
        .map_err(|e| SnapshotError::Render(e.to_string()))
}
