//! Terrain as a height field: a regular grid of heights `z_ij` at spacing `s` from an
//! origin `(x₀, y₀)`, sample `(i, j)` at `(x₀ + i s, y₀ + j s)`. Each cell is two triangles
//! split along its diagonal from `(i, j)` to `(i + 1, j + 1)`, so the surface is the
//! piecewise-linear interpolation of the samples.
//!
//! A point core (a sphere, a box's corner) finds its contact as the closest point of the
//! triangles of the cells its reach covers (the broad phase is the grid itself: only the
//! cells under the sphere's box grown by the margin are tested). The normal is `(c − p)/‖c − p‖`
//! (the face normal inside a face, the bisector on a ridge), the signed distance is
//! `±‖c − p‖ − r`, negative when the centre `c` lies below the surface. A sphere whose
//! centre is outside the grid's footprint has no contact: the terrain ends at its edge.
//! A box touches through its deepest corner. One contact per pair.
//!
//! Built from a file (CSV rows of heights, or a 2-D `.npy` of little-endian `f8`/`f4`,
//! row `j` holding `y = y₀ + j s`), from ContactBench's bumpy ground
//! `z = sin(30x)/5 + cos(30y²)/20 + sin(50xy)/10`, or from a seeded random roughness.

use std::path::{Path, PathBuf};

use nalgebra::Vector3;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Largest number of samples a height field may hold (refused above: 128 MB of heights).
pub const MAX_SAMPLES: usize = 16_000_000;

/// Cells visited per query, at most (a sphere much larger than the cells is refused).
const MAX_CELLS_PER_QUERY: usize = 65_536;

/// What is wrong with a height field or its file.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum HeightFieldError {
    /// A height is NaN or infinite.
    #[error(
        "{source_name}: heights: height at row {row}, column {column} is {value}: must be finite"
    )]
    NonFinite {
        /// File or description.
        source_name: String,
        /// Row (y index).
        row: usize,
        /// Column (x index).
        column: usize,
        /// The value.
        value: f64,
    },
    /// The heights do not fill the grid (ragged rows, too few samples).
    #[error("{source_name}: heights: {message}")]
    Size {
        /// File or description.
        source_name: String,
        /// What does not fit.
        message: String,
    },
    /// A grid parameter is out of range.
    #[error("{source_name}: {field}: {value}: {message}")]
    Parameter {
        /// File or description.
        source_name: String,
        /// The parameter (`spacing`, `amplitude`, ...).
        field: &'static str,
        /// Its value.
        value: f64,
        /// Why it is refused.
        message: &'static str,
    },
    /// The file cannot be read or parsed.
    #[error("{}: {message}", path.display())]
    File {
        /// The file.
        path: PathBuf,
        /// What went wrong (I/O error, line and token).
        message: String,
    },
}

/// A regular grid of heights (module docs).
#[derive(Debug, Clone, PartialEq)]
pub struct HeightField {
    heights: Vec<f64>,
    nx: usize,
    ny: usize,
    spacing: f64,
    origin: [f64; 2],
}

/// The closest surface point to a point, and where it was searched.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Closest {
    point: Vector3<f64>,
    distance: f64,
    normal_of_face: Vector3<f64>,
}

impl HeightField {
    /// A height field of `nx × ny` samples (`heights[j * nx + i]` at
    /// `(x₀ + i s, y₀ + j s)`); `source_name` names it in errors.
    pub fn new(
        source_name: &str,
        nx: usize,
        ny: usize,
        spacing: f64,
        origin: [f64; 2],
        heights: Vec<f64>,
    ) -> Result<Self, HeightFieldError> {
        let parameter = parameter_error(source_name);
        check_spacing(source_name, spacing)?;
        for (field, value) in [("origin.x", origin[0]), ("origin.y", origin[1])] {
            if !value.is_finite() {
                return Err(parameter(field, value, "must be finite (m)"));
            }
        }
        if nx < 2 || ny < 2 {
            return Err(HeightFieldError::Size {
                source_name: source_name.to_string(),
                message: format!("{nx} × {ny} samples: at least 2 × 2 are needed"),
            });
        }
        if nx.saturating_mul(ny) != heights.len() || heights.len() > MAX_SAMPLES {
            return Err(HeightFieldError::Size {
                source_name: source_name.to_string(),
                message: format!(
                    "{} heights for a {nx} × {ny} grid (at most {MAX_SAMPLES})",
                    heights.len()
                ),
            });
        }
        if let Some(k) = heights.iter().position(|h| !h.is_finite()) {
            return Err(HeightFieldError::NonFinite {
                source_name: source_name.to_string(),
                row: k / nx,
                column: k % nx,
                value: heights[k],
            });
        }
        Ok(Self {
            heights,
            nx,
            ny,
            spacing,
            origin,
        })
    }

    /// Samples `z(x, y)` on a grid covering `size` (m) centred on the origin at `spacing`.
    pub fn sampled(
        source_name: &str,
        size: [f64; 2],
        spacing: f64,
        z: impl Fn(f64, f64) -> f64,
    ) -> Result<Self, HeightFieldError> {
        let (nx, ny) = grid_counts(source_name, size, spacing)?;
        let origin = [
            -0.5 * (nx - 1) as f64 * spacing,
            -0.5 * (ny - 1) as f64 * spacing,
        ];
        let mut heights = Vec::with_capacity(nx * ny);
        for j in 0..ny {
            for i in 0..nx {
                heights.push(z(
                    origin[0] + i as f64 * spacing,
                    origin[1] + j as f64 * spacing,
                ));
            }
        }
        Self::new(source_name, nx, ny, spacing, origin, heights)
    }

    /// ContactBench's bumpy ground `z = sin(30x)/5 + cos(30y²)/20 + sin(50xy)/10`.
    pub fn contactbench(size: [f64; 2], spacing: f64) -> Result<Self, HeightFieldError> {
        Self::sampled("formula contactbench", size, spacing, contactbench_height)
    }

    /// A seeded random roughness: uniform random heights in `[−amplitude, amplitude]` on a
    /// lattice of pitch `wavelength`, interpolated by smoothstep (value noise), so that
    /// `|z| ≤ amplitude` and bumps are about `wavelength` wide.
    pub fn roughness(
        size: [f64; 2],
        spacing: f64,
        amplitude: f64,
        wavelength: f64,
        seed: u64,
    ) -> Result<Self, HeightFieldError> {
        let name = "roughness";
        let parameter = |field, value, message| HeightFieldError::Parameter {
            source_name: name.to_string(),
            field,
            value,
            message,
        };
        if !(amplitude.is_finite() && amplitude >= 0.0) {
            return Err(parameter(
                "amplitude",
                amplitude,
                "must be finite and >= 0 (m)",
            ));
        }
        if !(wavelength.is_finite() && wavelength >= spacing) {
            return Err(parameter(
                "wavelength",
                wavelength,
                "must be finite and at least the spacing (m)",
            ));
        }
        let (nx, ny) = grid_counts(name, size, spacing)?;
        let lx = ((nx - 1) as f64 * spacing / wavelength).ceil() as usize + 2;
        let ly = ((ny - 1) as f64 * spacing / wavelength).ceil() as usize + 2;
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let lattice: Vec<f64> = (0..lx * ly)
            .map(|_| amplitude * (2.0 * rng.random::<f64>() - 1.0))
            .collect();
        let at = |i: usize, j: usize| lattice[j.min(ly - 1) * lx + i.min(lx - 1)];
        let x0 = -0.5 * (nx - 1) as f64 * spacing;
        let y0 = -0.5 * (ny - 1) as f64 * spacing;
        Self::sampled(name, size, spacing, |x, y| {
            let (u, v) = ((x - x0) / wavelength, (y - y0) / wavelength);
            let (i, j) = (u.floor().max(0.0) as usize, v.floor().max(0.0) as usize);
            let (a, b) = (smoothstep(u - i as f64), smoothstep(v - j as f64));
            let bottom = at(i, j) * (1.0 - a) + at(i + 1, j) * a;
            let top = at(i, j + 1) * (1.0 - a) + at(i + 1, j + 1) * a;
            bottom * (1.0 - b) + top * b
        })
    }

    /// Reads heights from `path`: `.npy` (2-D, little-endian `f8` or `f4`, C order) or
    /// CSV (one row of comma-separated heights per line, `#` comments), row `j` at
    /// `y₀ + j s`; `origin: None` centres the grid on `(0, 0)`.
    pub fn from_file(
        path: &Path,
        spacing: f64,
        origin: Option<[f64; 2]>,
    ) -> Result<Self, HeightFieldError> {
        let file_error = |message: String| HeightFieldError::File {
            path: path.to_path_buf(),
            message,
        };
        let bytes = std::fs::read(path).map_err(|e| file_error(e.to_string()))?;
        let (nx, ny, heights) = if path.extension().is_some_and(|e| e == "npy") {
            parse_npy(&bytes).map_err(file_error)?
        } else {
            let text = String::from_utf8(bytes).map_err(|e| file_error(e.to_string()))?;
            parse_csv(&text).map_err(file_error)?
        };
        let origin = origin.unwrap_or([
            -0.5 * nx.saturating_sub(1) as f64 * spacing,
            -0.5 * ny.saturating_sub(1) as f64 * spacing,
        ]);
        Self::new(
            &path.display().to_string(),
            nx,
            ny,
            spacing,
            origin,
            heights,
        )
    }

    /// Samples along x and y.
    pub fn counts(&self) -> (usize, usize) {
        (self.nx, self.ny)
    }

    /// Grid spacing (m).
    pub fn spacing(&self) -> f64 {
        self.spacing
    }

    /// `[x_min, y_min, x_max, y_max]` of the footprint (m).
    pub fn footprint(&self) -> [f64; 4] {
        let s = self.spacing;
        [
            self.origin[0],
            self.origin[1],
            self.origin[0] + (self.nx - 1) as f64 * s,
            self.origin[1] + (self.ny - 1) as f64 * s,
        ]
    }

    /// Lowest and highest sample (m).
    pub fn height_range(&self) -> (f64, f64) {
        self.heights
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), h| {
                (lo.min(*h), hi.max(*h))
            })
    }

    fn sample(&self, i: usize, j: usize) -> Vector3<f64> {
        Vector3::new(
            self.origin[0] + i as f64 * self.spacing,
            self.origin[1] + j as f64 * self.spacing,
            self.heights[j * self.nx + i],
        )
    }

    /// The two triangles of cell `(i, j)` (counter-clockwise seen from above).
    fn triangles(&self, i: usize, j: usize) -> [[Vector3<f64>; 3]; 2] {
        let (p00, p10) = (self.sample(i, j), self.sample(i + 1, j));
        let (p01, p11) = (self.sample(i, j + 1), self.sample(i + 1, j + 1));
        [[p00, p10, p11], [p00, p11, p01]]
    }

    /// The cell containing `(x, y)` and the local coordinates in it, `None` outside.
    fn cell_of(&self, x: f64, y: f64) -> Option<(usize, usize, f64, f64)> {
        let u = (x - self.origin[0]) / self.spacing;
        let v = (y - self.origin[1]) / self.spacing;
        let (nx, ny) = ((self.nx - 1) as f64, (self.ny - 1) as f64);
        if !(u >= 0.0 && v >= 0.0 && u <= nx && v <= ny) {
            return None;
        }
        let i = (u.floor() as usize).min(self.nx - 2);
        let j = (v.floor() as usize).min(self.ny - 2);
        Some((i, j, u - i as f64, v - j as f64))
    }

    /// The surface height at `(x, y)` (local frame), `None` outside the footprint.
    pub fn height_at(&self, x: f64, y: f64) -> Option<f64> {
        let (i, j, a, b) = self.cell_of(x, y)?;
        let h = |di, dj| self.heights[(j + dj) * self.nx + i + di];
        Some(if a >= b {
            h(0, 0) + a * (h(1, 0) - h(0, 0)) + b * (h(1, 1) - h(1, 0))
        } else {
            h(0, 0) + b * (h(0, 1) - h(0, 0)) + a * (h(1, 1) - h(0, 1))
        })
    }

    /// The cell index range `[lo, hi)` along one axis that a reach of `radius` around
    /// `centre` covers (clipped to the grid).
    fn cell_range(&self, centre: f64, radius: f64, origin: f64, n: usize) -> (usize, usize) {
        let lo = ((centre - radius - origin) / self.spacing).floor().max(0.0);
        let hi = ((centre + radius - origin) / self.spacing).floor() + 1.0;
        let cells = (n - 1) as f64;
        (lo.min(cells) as usize, hi.clamp(0.0, cells) as usize)
    }

    /// The surface point closest to `c` among the cells within `reach` of it
    /// horizontally, if any of its triangles lies within `reach`.
    fn closest_point(&self, c: &Vector3<f64>, reach: f64) -> Option<Closest> {
        let (i0, i1) = self.cell_range(c.x, reach, self.origin[0], self.nx);
        let (j0, j1) = self.cell_range(c.y, reach, self.origin[1], self.ny);
        let mut best: Option<Closest> = None;
        for j in j0..j1 {
            for i in i0..i1 {
                for [a, b, t] in self.triangles(i, j) {
                    let p = closest_on_triangle(c, &a, &b, &t);
                    let distance = (c - p).norm();
                    if distance <= reach && best.is_none_or(|k| distance < k.distance) {
                        best = Some(Closest {
                            point: p,
                            distance,
                            normal_of_face: (b - a).cross(&(t - a)).normalize(),
                        });
                    }
                }
            }
        }
        best
    }

    /// The contact of a sphere of `radius` centred at `c` (local frame) when its signed
    /// distance is at most `reach − radius`; `None` when farther or when `c` is outside
    /// the footprint.
    pub(crate) fn sphere_contact(
        &self,
        c: &Vector3<f64>,
        radius: f64,
        reach: f64,
    ) -> Option<LocalContact> {
        let surface = self.height_at(c.x, c.y)?;
        let below = c.z < surface;
        let vertical = (c.z - surface).abs();
        let reach = if below { vertical } else { reach.min(vertical) };
        let cells = (2.0 * reach / self.spacing + 2.0).powi(2);
        let reach = if cells > MAX_CELLS_PER_QUERY as f64 {
            0.5 * self.spacing * ((MAX_CELLS_PER_QUERY as f64).sqrt() - 2.0)
        } else {
            reach
        };
        let closest = self.closest_point(c, reach + 1e-12)?;
        let sign = if below { -1.0 } else { 1.0 };
        let normal = if closest.distance > 1e-12 {
            sign * (c - closest.point) / closest.distance
        } else {
            closest.normal_of_face
        };
        Some(LocalContact {
            surface_point: closest.point,
            normal,
            distance: sign * closest.distance - radius,
        })
    }
}

/// A contact in the height field's frame.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LocalContact {
    pub(crate) surface_point: Vector3<f64>,
    pub(crate) normal: Vector3<f64>,
    pub(crate) distance: f64,
}

/// ContactBench's bumpy ground (module docs).
pub fn contactbench_height(x: f64, y: f64) -> f64 {
    (30.0 * x).sin() / 5.0 + (30.0 * y * y).cos() / 20.0 + (50.0 * x * y).sin() / 10.0
}

fn smoothstep(t: f64) -> f64 {
    t * t * (3.0 - 2.0 * t)
}

/// The refusal of a parameter of the height field named `source_name`.
fn parameter_error(
    source_name: &str,
) -> impl Fn(&'static str, f64, &'static str) -> HeightFieldError + '_ {
    move |field, value, message| HeightFieldError::Parameter {
        source_name: source_name.to_string(),
        field,
        value,
        message,
    }
}

/// A sample spacing must be finite and positive.
fn check_spacing(source_name: &str, spacing: f64) -> Result<(), HeightFieldError> {
    if spacing.is_finite() && spacing > 0.0 {
        Ok(())
    } else {
        Err(parameter_error(source_name)(
            "spacing",
            spacing,
            "must be finite and > 0 (m)",
        ))
    }
}

/// Samples along x and y covering `size` at `spacing`.
fn grid_counts(
    source_name: &str,
    size: [f64; 2],
    spacing: f64,
) -> Result<(usize, usize), HeightFieldError> {
    let parameter = parameter_error(source_name);
    check_spacing(source_name, spacing)?;
    let mut counts = [0usize; 2];
    for (k, field) in ["size.x", "size.y"].into_iter().enumerate() {
        let n = size[k] / spacing;
        if !(size[k].is_finite() && size[k] > 0.0 && n < MAX_SAMPLES as f64) {
            return Err(parameter(
                field,
                size[k],
                "must be finite, > 0 and span fewer samples than the limit (m)",
            ));
        }
        counts[k] = n.round() as usize + 1;
    }
    if counts[0].saturating_mul(counts[1]) > MAX_SAMPLES {
        return Err(HeightFieldError::Size {
            source_name: source_name.to_string(),
            message: format!(
                "{} × {} samples exceed the limit of {MAX_SAMPLES}",
                counts[0], counts[1]
            ),
        });
    }
    Ok((counts[0], counts[1]))
}

/// The point of triangle `abc` closest to `p` (Ericson, Real-Time Collision Detection
/// §5.1.5: Voronoi regions of the vertices, edges and face).
fn closest_on_triangle(
    p: &Vector3<f64>,
    a: &Vector3<f64>,
    b: &Vector3<f64>,
    c: &Vector3<f64>,
) -> Vector3<f64> {
    let (ab, ac, ap) = (b - a, c - a, p - a);
    let (d1, d2) = (ab.dot(&ap), ac.dot(&ap));
    if d1 <= 0.0 && d2 <= 0.0 {
        return *a;
    }
    let bp = p - b;
    let (d3, d4) = (ab.dot(&bp), ac.dot(&bp));
    if d3 >= 0.0 && d4 <= d3 {
        return *b;
    }
    let vc = d1 * d4 - d3 * d2;
    if vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0 {
        return a + ab * (d1 / (d1 - d3));
    }
    let cp = p - c;
    let (d5, d6) = (ab.dot(&cp), ac.dot(&cp));
    if d6 >= 0.0 && d5 <= d6 {
        return *c;
    }
    let vb = d5 * d2 - d1 * d6;
    if vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0 {
        return a + ac * (d2 / (d2 - d6));
    }
    let va = d3 * d6 - d5 * d4;
    if va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0 {
        return b + (c - b) * ((d4 - d3) / ((d4 - d3) + (d5 - d6)));
    }
    let denominator = 1.0 / (va + vb + vc);
    a + ab * (vb * denominator) + ac * (vc * denominator)
}

/// Heights of a 2-D `.npy` array (`(rows, columns, heights)`).
fn parse_npy(bytes: &[u8]) -> Result<(usize, usize, Vec<f64>), String> {
    let bad = |m: &str| format!("not a 2-D float .npy array: {m}");
    if bytes.len() < 10 || &bytes[..6] != b"\x93NUMPY" {
        return Err(bad("no NUMPY magic"));
    }
    let (header_start, header_len) = match bytes[6] {
        1 => (10_usize, u16::from_le_bytes([bytes[8], bytes[9]]) as usize),
        2 | 3 if bytes.len() >= 12 => (
            12,
            u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
        ),
        _ => return Err(bad("unknown version")),
    };
    let data_start = header_start
        .checked_add(header_len)
        .filter(|&e| e <= bytes.len())
        .ok_or_else(|| bad("header longer than the file"))?;
    let header = String::from_utf8_lossy(&bytes[header_start..data_start]);
    let width = if header.contains("'<f8'") {
        8
    } else if header.contains("'<f4'") {
        4
    } else {
        return Err(bad("descr must be '<f8' or '<f4'"));
    };
    if header.contains("'fortran_order': True") {
        return Err(bad("fortran_order must be False"));
    }
    let shape = header
        .split("'shape':")
        .nth(1)
        .and_then(|s| s.split(')').next())
        .ok_or_else(|| bad("no shape"))?;
    let dims: Vec<usize> = shape
        .trim_start_matches([' ', '('])
        .split(',')
        .filter(|s| !s.trim().is_empty())
        .map(|s| s.trim().parse::<usize>())
        .collect::<Result<_, _>>()
        .map_err(|_| bad("shape is not a tuple of sizes"))?;
    let [ny, nx] = dims[..] else {
        return Err(bad(&format!("shape has {} dimensions, not 2", dims.len())));
    };
    let count = nx.saturating_mul(ny);
    if count > MAX_SAMPLES || (bytes.len() - data_start) != count.saturating_mul(width) {
        return Err(bad(&format!(
            "{} data bytes for {ny} × {nx} values of {width} bytes (at most {MAX_SAMPLES} values)",
            bytes.len() - data_start
        )));
    }
    let data = &bytes[data_start..];
    let heights = data
        .chunks_exact(width)
        .map(|c| match c {
            [a, b, c, d] => f32::from_le_bytes([*a, *b, *c, *d]) as f64,
            _ => {
                let mut eight = [0u8; 8];
                eight.copy_from_slice(c);
                f64::from_le_bytes(eight)
            }
        })
        .collect();
    Ok((nx, ny, heights))
}

/// Heights of a CSV text (`(columns, rows, heights)`): every row the same length.
fn parse_csv(text: &str) -> Result<(usize, usize, Vec<f64>), String> {
    let mut heights = Vec::new();
    let mut columns = None;
    let mut rows = 0;
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let before = heights.len();
        for token in line.split(',') {
            let token = token.trim();
            let value: f64 = token
                .parse()
                .map_err(|_| format!("line {}: '{token}' is not a number", n + 1))?;
            heights.push(value);
            if heights.len() > MAX_SAMPLES {
                return Err(format!("more than {MAX_SAMPLES} heights"));
            }
        }
        let width = heights.len() - before;
        match columns {
            None => columns = Some(width),
            Some(c) if c != width => {
                return Err(format!(
                    "line {}: {width} heights where the first row has {c}",
                    n + 1
                ))
            }
            Some(_) => {}
        }
        rows += 1;
    }
    Ok((columns.unwrap_or(0), rows, heights))
}
