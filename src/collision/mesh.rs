//! Meshes: STL (binary and ASCII), COLLADA (`.dae`) and Wavefront OBJ reading through
//! `mesh-loader` (openrr's parser, the one urdf-viz uses), and the convex hull of a point
//! set (quickhull), whose support is found by hill-climbing on the vertex adjacency, as
//! HPP-FCL does for large hulls, or by a linear scan for small ones.

use std::collections::HashMap;
use std::io::Read;
use std::path::Path;

use nalgebra::Vector3;

use super::error::CollisionError;
use super::support::SupportMap;

/// Hulls with more vertices than this use hill-climbing; smaller ones a linear scan.
const HILL_CLIMB_MIN_VERTICES: usize = 32;

/// Largest mesh file read (bytes); a robot's collision meshes are kilobytes to megabytes.
const MAX_MESH_BYTES: u64 = 512 << 20;

/// A mesh file's format, from its extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum MeshFormat {
    Stl,
    Collada,
    Obj,
}

impl MeshFormat {
    /// `.dae` is COLLADA, `.obj` Wavefront OBJ, anything else STL (as URDF loaders do).
    fn of(path: &Path) -> MeshFormat {
        let extension = path
            .extension()
            .map(|e| e.to_string_lossy().to_ascii_lowercase());
        match extension.as_deref() {
            Some("dae") => MeshFormat::Collada,
            Some("obj") => MeshFormat::Obj,
            _ => MeshFormat::Stl,
        }
    }

    fn name(self) -> &'static str {
        match self {
            MeshFormat::Stl => "STL",
            MeshFormat::Collada => "COLLADA",
            MeshFormat::Obj => "OBJ",
        }
    }
}

/// Reads a file of at most [`MAX_MESH_BYTES`] (the reader `mesh-loader` calls for the mesh
/// and for an OBJ's material library).
fn read_capped(path: &Path) -> std::io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    std::fs::File::open(path)?
        .take(MAX_MESH_BYTES + 1)
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_MESH_BYTES {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("larger than {MAX_MESH_BYTES} bytes"),
        ));
    }
    Ok(bytes)
}

/// A COLLADA file whose `<up_axis>` is not `Z_UP`: mesh-loader does not rotate it (nor do
/// we guess), so it is refused rather than read lying on its side.
fn check_collada_up_axis(bytes: &[u8]) -> std::io::Result<()> {
    let text = String::from_utf8_lossy(bytes);
    let axis = text
        .split_once("<up_axis>")
        .and_then(|(_, rest)| rest.split_once("</up_axis>"))
        .map(|(axis, _)| axis.trim());
    match axis {
        None | Some("Z_UP") => Ok(()),
        Some(other) => Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("<up_axis>{other}</up_axis> is not supported (only Z_UP, the URDF convention)"),
        )),
    }
}

/// mesh-loader's COLLADA reader, its panics on a malformed file (a reference to a source
/// that does not exist is indexed, `unwrap`ped or `assert`ed) turned into an error naming
/// what it said: the only reader here that cannot be made to refuse such a file first.
/// The panic is not printed (see [`quiet_panics`]).
fn load_collada(
    loader: &mesh_loader::Loader,
    bytes: &[u8],
    path: &Path,
) -> std::io::Result<mesh_loader::Scene> {
    quiet_panics(|| loader.load_collada_from_slice(bytes, path)).unwrap_or_else(|said| {
        Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("malformed file (the reader stopped: {said})"),
        ))
    })
}

thread_local! {
    /// Whether a panic on this thread is caught by [`quiet_panics`] and must not be printed.
    static QUIET: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `f`, returning the message of a panic instead of unwinding. The panic hook in
/// place when this first runs is wrapped once (for the whole process) so that it stays
/// silent for a panic raised inside `f` and prints every other panic as before.
fn quiet_panics<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    static WRAP_HOOK: std::sync::Once = std::sync::Once::new();
    WRAP_HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !QUIET.with(std::cell::Cell::get) {
                previous(info);
            }
        }));
    });
    QUIET.with(|q| q.set(true));
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    QUIET.with(|q| q.set(false));
    outcome.map_err(|payload| {
        payload
            .downcast_ref::<&str>()
            .map(|s| (*s).to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "no message".into())
    })
}

/// Deepest element nesting accepted in a COLLADA file (exporters nest scene nodes a few
/// levels): mesh-loader walks nested nodes recursively, so a deeper file is refused before
/// it can overflow the stack.
const MAX_COLLADA_DEPTH: usize = 64;

/// Refuses a COLLADA file whose elements nest deeper than [`MAX_COLLADA_DEPTH`], counted
/// in one pass over the start and end tags (comments, CDATA, declarations and quoted
/// attribute values skipped).
fn check_collada_depth(bytes: &[u8]) -> std::io::Result<()> {
    let skip_to = |from: usize, end: &[u8]| {
        bytes[from..]
            .windows(end.len())
            .position(|w| w == end)
            .map_or(bytes.len(), |k| from + k + end.len())
    };
    let mut depth = 0usize;
    let mut at = 0;
    while let Some(k) = bytes[at..].iter().position(|&b| b == b'<') {
        let open = at + k;
        let rest = &bytes[open + 1..];
        at = if rest.starts_with(b"!--") {
            skip_to(open, b"-->")
        } else if rest.starts_with(b"![CDATA[") {
            skip_to(open, b"]]>")
        } else if rest.starts_with(b"?") || rest.starts_with(b"!") {
            skip_to(open, b">")
        } else {
            let (end, self_closing) = tag_end(bytes, open + 1);
            if rest.starts_with(b"/") {
                depth = depth.saturating_sub(1);
            } else if !self_closing {
                depth += 1;
                if depth > MAX_COLLADA_DEPTH {
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::InvalidData,
                        format!(
                            "elements nested deeper than {MAX_COLLADA_DEPTH} levels (at byte {open})"
                        ),
                    ));
                }
            }
            end
        };
    }
    Ok(())
}

/// The byte after the `>` that ends the tag starting at `from` (quoted attribute values
/// skipped) and whether the tag closes itself (`/>`).
fn tag_end(bytes: &[u8], from: usize) -> (usize, bool) {
    let mut quote = None;
    for (k, &b) in bytes[from..].iter().enumerate() {
        match (quote, b) {
            (Some(q), _) if b == q => quote = None,
            (Some(_), _) => {}
            (None, b'"' | b'\'') => quote = Some(b),
            (None, b'>') => {
                let self_closing = k > 0 && bytes[from + k - 1] == b'/';
                return (from + k + 1, self_closing);
            }
            (None, _) => {}
        }
    }
    (bytes.len(), false)
}

/// COLLADA primitives whose `count` is a number of polygons or lines: mesh-loader
/// reserves `count × 3 × inputs` indices for them before it reads one.
const COLLADA_PRIMITIVES: [&str; 7] = [
    "triangles",
    "polylist",
    "polygons",
    "lines",
    "linestrips",
    "trifans",
    "tristrips",
];

/// The unsigned values of every `key="N"` attribute of a text (`u64::MAX` for one too
/// large), with the byte where each value starts.
fn attribute_values<'a>(bytes: &'a [u8], key: &'a str) -> impl Iterator<Item = (usize, u64)> + 'a {
    let pattern = format!("{key}=\"").into_bytes();
    let mut at = 0;
    std::iter::from_fn(move || {
        let found = bytes[at..]
            .windows(pattern.len())
            .position(|w| w == pattern)?;
        let start = at + found + pattern.len();
        let digits = bytes[start..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        at = start + digits;
        let value = std::str::from_utf8(&bytes[start..start + digits])
            .ok()
            .and_then(|d| d.parse::<u64>().ok())
            .unwrap_or(if digits == 0 { 0 } else { u64::MAX });
        Some((start, value))
    })
}

/// The name of the element whose start tag holds byte `at`.
fn enclosing_tag(bytes: &[u8], at: usize) -> &str {
    let Some(open) = bytes[..at].iter().rposition(|&b| b == b'<') else {
        return "";
    };
    let name = &bytes[open + 1..at];
    let end = name
        .iter()
        .position(|b| b.is_ascii_whitespace())
        .unwrap_or(name.len());
    std::str::from_utf8(&name[..end]).unwrap_or("")
}

/// A COLLADA `count="N"` that the file cannot hold: every value counted takes at least two
/// bytes of text (a digit and a separator), and a primitive of `N` polygons or lines
/// holds at least `3 N` vertices of one index per input. mesh-loader reserves room for
/// what a count declares before it reads one value, so a 1 kB file declaring 4·10⁹ would
/// ask for gigabytes.
fn check_collada_counts(bytes: &[u8]) -> std::io::Result<()> {
    let limit = bytes.len() as u64 / 2;
    let inputs = attribute_values(bytes, "offset")
        .map(|(_, offset)| offset.saturating_add(1))
        .max()
        .unwrap_or(1);
    for (start, count) in attribute_values(bytes, "count") {
        let tag = enclosing_tag(bytes, start);
        let values = if COLLADA_PRIMITIVES.contains(&tag) {
            count.saturating_mul(3).saturating_mul(inputs)
        } else {
            count
        };
        if values > limit {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!(
                    "<{tag} count=\"{count}\"> at byte {start} declares {values} values, more than the file's {} bytes can hold",
                    bytes.len()
                ),
            ));
        }
    }
    Ok(())
}

/// A binary STL whose 80-byte header begins with `solid` (SolidWorks' exports; Solo-12's
/// feet) is taken for ASCII by mesh-loader, which then fails. A binary STL is exactly
/// 84 + 50·n bytes, n the count at byte 80 (an ASCII file has text there, so a count near
/// 5·10⁸ that its size cannot match); such a file is returned with its header, free text
/// in a binary STL, zeroed. `None` for any other file.
fn blank_binary_stl_header(bytes: &[u8]) -> Option<Vec<u8>> {
    let count: [u8; 4] = bytes.get(80..84)?.try_into().ok()?;
    let is_binary = bytes.len() as u64 == 84 + 50 * u64::from(u32::from_le_bytes(count));
    let says_solid = bytes[..80].trim_ascii_start().starts_with(b"solid");
    (is_binary && says_solid).then(|| {
        let mut binary = bytes.to_vec();
        binary[..80].fill(0);
        binary
    })
}

/// Reads the vertices of a mesh file (every mesh of the file, each in the file's frame,
/// COLLADA node transforms and `<unit>` applied), scaled per axis, in the format of its
/// extension: `.dae` COLLADA, `.obj` Wavefront OBJ, anything else STL.
pub fn read_mesh_vertices(
    path: &Path,
    scale: &Vector3<f64>,
) -> Result<Vec<Vector3<f64>>, CollisionError> {
    read_vertices(path, MeshFormat::of(path), scale)
}

/// Reads the vertices of an STL file (binary or ASCII, whatever its extension), scaled per
/// axis.
pub fn read_stl_vertices(
    path: &Path,
    scale: &Vector3<f64>,
) -> Result<Vec<Vector3<f64>>, CollisionError> {
    read_vertices(path, MeshFormat::Stl, scale)
}

fn read_vertices(
    path: &Path,
    format: MeshFormat,
    scale: &Vector3<f64>,
) -> Result<Vec<Vector3<f64>>, CollisionError> {
    let error = |e: std::io::Error| CollisionError::MeshFile {
        path: path.to_path_buf(),
        source: std::io::Error::new(e.kind(), format!("{}: {e}", format.name())),
    };
    let bytes = read_capped(path).map_err(|source| CollisionError::MeshFile {
        path: path.to_path_buf(),
        source,
    })?;
    let loader = mesh_loader::Loader::with_custom_reader(read_capped);
    let scene = match format {
        MeshFormat::Stl => match blank_binary_stl_header(&bytes) {
            Some(binary) => loader.load_stl_from_slice(&binary, path),
            None => loader.load_stl_from_slice(&bytes, path),
        },
        MeshFormat::Collada => {
            check_collada_up_axis(&bytes).map_err(error)?;
            check_collada_depth(&bytes).map_err(error)?;
            check_collada_counts(&bytes).map_err(error)?;
            load_collada(&loader, &bytes, path)
        }
        MeshFormat::Obj => loader.load_obj_from_slice(&bytes, path),
    }
    .map_err(error)?;
    Ok(scene
        .meshes
        .iter()
        .flat_map(|m| &m.vertices)
        .map(|v| {
            Vector3::new(f64::from(v[0]), f64::from(v[1]), f64::from(v[2])).component_mul(scale)
        })
        .collect())
}

/// The convex hull of a point set: its vertices and, when the hull is a polytope with
/// volume, the vertex adjacency used by hill-climbing. Flat or degenerate point sets keep
/// their distinct points and are searched linearly (a well-defined, exact support).
#[derive(Debug, Clone)]
pub struct ConvexHull {
    vertices: Vec<Vector3<f64>>,
    /// Vertex adjacency in compressed rows: the neighbours of vertex `i` are
    /// `neighbors[offsets[i]..offsets[i + 1]]`.
    offsets: Vec<u32>,
    neighbors: Vec<u32>,
    /// Vertices extreme along ±x, ±y, ±z: where a cold hill-climb starts.
    axis_extremes: [u32; 6],
    faces: Vec<[u32; 3]>,
    centre: Vector3<f64>,
}

/// Centre of the axis-aligned bounding box of non-empty `points`.
fn box_centre(points: &[Vector3<f64>]) -> Vector3<f64> {
    let mut lo = points[0];
    let mut hi = points[0];
    for p in points {
        lo = lo.inf(p);
        hi = hi.sup(p);
    }
    (lo + hi) * 0.5
}

impl ConvexHull {
    /// Builds the hull of `points` (`source_name` names the mesh in errors).
    pub fn from_points(points: &[Vector3<f64>], source_name: &str) -> Result<Self, CollisionError> {
        if points.is_empty() {
            return Err(CollisionError::EmptyMesh {
                source_name: source_name.to_string(),
            });
        }
        if let Some(index) = points.iter().position(|p| !p.iter().all(|c| c.is_finite())) {
            return Err(CollisionError::NonFiniteVertex {
                source_name: source_name.to_string(),
                index,
            });
        }
        let distinct = distinct_points(points);
        match quickhull(&distinct) {
            Some(faces) => Ok(Self::from_faces(&distinct, &faces)),
            None => Ok(Self {
                centre: box_centre(&distinct),
                vertices: distinct,
                offsets: Vec::new(),
                neighbors: Vec::new(),
                axis_extremes: [0; 6],
                faces: Vec::new(),
            }),
        }
    }

    /// Reads a mesh file (STL, COLLADA or OBJ by its extension) and builds the hull of its
    /// (scaled) vertices.
    pub fn from_mesh_file(path: &Path, scale: &Vector3<f64>) -> Result<Self, CollisionError> {
        let points = read_mesh_vertices(path, scale)?;
        Self::from_points(&points, &path.display().to_string())
    }

    /// The hull of an STL file's vertices (whatever its extension), scaled per axis.
    pub fn from_stl(path: &Path, scale: &Vector3<f64>) -> Result<Self, CollisionError> {
        let points = read_stl_vertices(path, scale)?;
        Self::from_points(&points, &path.display().to_string())
    }

    fn from_faces(points: &[Vector3<f64>], faces: &[[usize; 3]]) -> Self {
        let mut remap: HashMap<usize, u32> = HashMap::new();
        let mut vertices = Vec::new();
        let mut index_of = |i: usize, vertices: &mut Vec<Vector3<f64>>| -> u32 {
            *remap.entry(i).or_insert_with(|| {
                vertices.push(points[i]);
                (vertices.len() - 1) as u32
            })
        };
        let hull_faces: Vec<[u32; 3]> = faces
            .iter()
            .map(|f| {
                [
                    index_of(f[0], &mut vertices),
                    index_of(f[1], &mut vertices),
                    index_of(f[2], &mut vertices),
                ]
            })
            .collect();
        let mut adjacency: Vec<Vec<u32>> = vec![Vec::new(); vertices.len()];
        for f in &hull_faces {
            for k in 0..3 {
                let (a, b) = (f[k], f[(k + 1) % 3]);
                if !adjacency[a as usize].contains(&b) {
                    adjacency[a as usize].push(b);
                }
                if !adjacency[b as usize].contains(&a) {
                    adjacency[b as usize].push(a);
                }
            }
        }
        let mut offsets = vec![0_u32];
        let mut neighbors = Vec::new();
        for list in &adjacency {
            neighbors.extend_from_slice(list);
            offsets.push(neighbors.len() as u32);
        }
        let mut hull = Self {
            centre: box_centre(&vertices),
            vertices,
            offsets,
            neighbors,
            axis_extremes: [0; 6],
            faces: hull_faces,
        };
        hull.axis_extremes = std::array::from_fn(|k| {
            let sign = if k % 2 == 0 { 1.0 } else { -1.0 };
            hull.linear_support(&Vector3::ith(k / 2, sign)) as u32
        });
        hull
    }

    /// The hull's vertices (local frame, m).
    pub fn vertices(&self) -> &[Vector3<f64>] {
        &self.vertices
    }

    /// Centre of the hull's bounding box (local frame, m).
    pub fn centre(&self) -> Vector3<f64> {
        self.centre
    }

    /// The hull's triangles (counter-clockwise seen from outside); empty for flat sets.
    pub fn faces(&self) -> &[[u32; 3]] {
        &self.faces
    }

    /// True when the points span a volume (the hull has faces and adjacency).
    pub fn is_solid(&self) -> bool {
        !self.faces.is_empty()
    }

    /// The hull's neighbours of vertex `i` (the ends of its edges); empty for flat sets
    /// and for an index out of range.
    pub fn neighbors(&self, i: usize) -> &[u32] {
        match (self.offsets.get(i), self.offsets.get(i + 1)) {
            (Some(&lo), Some(&hi)) => &self.neighbors[lo as usize..hi as usize],
            _ => &[],
        }
    }

    fn linear_support(&self, dir: &Vector3<f64>) -> usize {
        let mut best = 0;
        let mut best_value = f64::NEG_INFINITY;
        for (i, v) in self.vertices.iter().enumerate() {
            let value = v.dot(dir);
            if value > best_value {
                best_value = value;
                best = i;
            }
        }
        best
    }

    /// The axis-extreme vertex best aligned with `dir`: a cold start for hill-climbing.
    fn cold_start(&self, dir: &Vector3<f64>) -> usize {
        let axis = dir.iamax();
        let k = 2 * axis + usize::from(dir[axis] < 0.0);
        self.axis_extremes[k] as usize
    }

    /// Hill-climbing on the vertex graph (a local maximum of a linear function on a
    /// convex polytope's vertex graph is global). Capped at the vertex count of moves.
    fn hill_climb_support(&self, dir: &Vector3<f64>, start: usize) -> usize {
        let mut current = if start < self.vertices.len() {
            start
        } else {
            self.cold_start(dir)
        };
        let mut value = self.vertices[current].dot(dir);
        for _ in 0..self.vertices.len() {
            let mut moved = false;
            let (lo, hi) = (
                self.offsets[current] as usize,
                self.offsets[current + 1] as usize,
            );
            for &n in &self.neighbors[lo..hi] {
                let candidate = self.vertices[n as usize].dot(dir);
                if candidate > value {
                    value = candidate;
                    current = n as usize;
                    moved = true;
                }
            }
            if !moved {
                break;
            }
        }
        current
    }
}

impl SupportMap for ConvexHull {
    fn local_support(&self, dir: &Vector3<f64>) -> Vector3<f64> {
        let mut hint = usize::MAX;
        self.local_support_hinted(dir, &mut hint)
    }

    /// `hint` is the vertex to start from (`usize::MAX` or out of range: cold start
    /// from the axis-extreme vertex closest to `dir`); it receives the support vertex.
    fn local_support_hinted(&self, dir: &Vector3<f64>, hint: &mut usize) -> Vector3<f64> {
        let index = if self.is_solid() && self.vertices.len() > HILL_CLIMB_MIN_VERTICES {
            self.hill_climb_support(dir, *hint)
        } else {
            self.linear_support(dir)
        };
        *hint = index;
        self.vertices[index]
    }
}

/// Removes exact duplicates (STL files repeat every shared vertex).
fn distinct_points(points: &[Vector3<f64>]) -> Vec<Vector3<f64>> {
    let mut seen = std::collections::HashSet::new();
    points
        .iter()
        .filter(|p| seen.insert([p.x.to_bits(), p.y.to_bits(), p.z.to_bits()]))
        .copied()
        .collect()
}

struct HullFace {
    vertices: [usize; 3],
    normal: Vector3<f64>,
    offset: f64,
    outside: Vec<usize>,
    alive: bool,
}

impl HullFace {
    fn new(points: &[Vector3<f64>], vertices: [usize; 3]) -> Self {
        let [a, b, c] = vertices.map(|i| points[i]);
        let cross = (b - a).cross(&(c - a));
        let normal = cross.try_normalize(0.0).unwrap_or_else(Vector3::zeros);
        Self {
            vertices,
            normal,
            offset: normal.dot(&a),
            outside: Vec::new(),
            alive: true,
        }
    }

    fn height(&self, p: &Vector3<f64>) -> f64 {
        self.normal.dot(p) - self.offset
    }
}

/// Indices of four points spanning a tetrahedron of non-negligible volume, or `None` when
/// the set is flat (relative tolerance `eps`).
fn initial_tetrahedron(points: &[Vector3<f64>], eps: f64) -> Option<[usize; 4]> {
    let extreme = |key: &dyn Fn(&Vector3<f64>) -> f64| -> usize {
        let mut best = 0;
        for (i, p) in points.iter().enumerate() {
            if key(p) > key(&points[best]) {
                best = i;
            }
        }
        best
    };
    let mut pairs = Vec::new();
    for axis in 0..3 {
        pairs.push((extreme(&|p| -p[axis]), extreme(&|p| p[axis])));
    }
    let (i0, i1) = pairs
        .into_iter()
        .max_by(|a, b| {
            let da = (points[a.1] - points[a.0]).norm();
            let db = (points[b.1] - points[b.0]).norm();
            da.total_cmp(&db)
        })
        .filter(|&(a, b)| (points[b] - points[a]).norm() > eps)?;
    let axis = points[i1] - points[i0];
    let i2 = extreme(&|p| (p - points[i0]).cross(&axis).norm());
    let normal = axis.cross(&(points[i2] - points[i0]));
    if normal.norm() <= eps * axis.norm() {
        return None;
    }
    let unit = normal.normalize();
    let i3 = extreme(&|p| (p - points[i0]).dot(&unit).abs());
    if (points[i3] - points[i0]).dot(&unit).abs() <= eps {
        return None;
    }
    Some([i0, i1, i2, i3])
}

/// Quickhull (Barber, Dobkin, Huhdanpaa 1996): triangles of the hull, counter-clockwise
/// seen from outside, or `None` for flat point sets. Loop capped at the point count.
fn quickhull(points: &[Vector3<f64>]) -> Option<Vec<[usize; 3]>> {
    let extent = points
        .iter()
        .fold(0.0_f64, |m, p| m.max(p.abs().max()))
        .max(f64::MIN_POSITIVE);
    let eps = 1e-10 * extent;
    let [a, b, c, d] = initial_tetrahedron(points, eps)?;
    let mut faces: Vec<HullFace> = Vec::new();
    let orient = |f: [usize; 3]| {
        let face = HullFace::new(points, f);
        if face.height(&points[d_of(f, [a, b, c, d])]) > 0.0 {
            [f[0], f[2], f[1]]
        } else {
            f
        }
    };
    for f in [[a, b, c], [a, b, d], [a, c, d], [b, c, d]] {
        faces.push(HullFace::new(points, orient(f)));
    }
    let mut edge_face: HashMap<(usize, usize), usize> = HashMap::new();
    for (fi, f) in faces.iter().enumerate() {
        register_edges(&mut edge_face, f.vertices, fi);
    }
    let used = [a, b, c, d];
    let candidates: Vec<usize> = (0..points.len()).filter(|i| !used.contains(i)).collect();
    assign_outside(points, &mut faces, &[0, 1, 2, 3], &candidates, eps);

    for _ in 0..points.len() {
        let Some(fi) = faces.iter().position(|f| f.alive && !f.outside.is_empty()) else {
            break;
        };
        let apex = farthest_outside(points, &faces[fi]);
        let visible = visible_faces(points, &faces, &edge_face, fi, apex, eps);
        let horizon = horizon_edges(&faces, &visible);
        let mut orphans = Vec::new();
        for &v in &visible {
            faces[v].alive = false;
            orphans.append(&mut faces[v].outside);
            unregister_edges(&mut edge_face, faces[v].vertices);
        }
        let mut created = Vec::new();
        for (p, q) in horizon {
            let face = HullFace::new(points, [p, q, apex]);
            faces.push(face);
            let new_index = faces.len() - 1;
            register_edges(&mut edge_face, faces[new_index].vertices, new_index);
            created.push(new_index);
        }
        orphans.retain(|&i| i != apex);
        assign_outside(points, &mut faces, &created, &orphans, eps);
    }
    let hull: Vec<[usize; 3]> = faces
        .iter()
        .filter(|f| f.alive)
        .map(|f| f.vertices)
        .collect();
    Some(hull)
}

/// The vertex of the tetrahedron not in face `f`.
fn d_of(f: [usize; 3], tet: [usize; 4]) -> usize {
    tet.into_iter().find(|v| !f.contains(v)).unwrap_or(tet[3])
}

fn register_edges(map: &mut HashMap<(usize, usize), usize>, v: [usize; 3], face: usize) {
    for k in 0..3 {
        map.insert((v[k], v[(k + 1) % 3]), face);
    }
}

fn unregister_edges(map: &mut HashMap<(usize, usize), usize>, v: [usize; 3]) {
    for k in 0..3 {
        map.remove(&(v[k], v[(k + 1) % 3]));
    }
}

/// Gives each candidate point to the first face it lies above (by more than `eps`).
fn assign_outside(
    points: &[Vector3<f64>],
    faces: &mut [HullFace],
    targets: &[usize],
    candidates: &[usize],
    eps: f64,
) {
    for &i in candidates {
        if let Some(&f) = targets.iter().find(|&&f| faces[f].height(&points[i]) > eps) {
            faces[f].outside.push(i);
        }
    }
}

fn farthest_outside(points: &[Vector3<f64>], face: &HullFace) -> usize {
    let mut best = face.outside[0];
    for &i in &face.outside {
        if face.height(&points[i]) > face.height(&points[best]) {
            best = i;
        }
    }
    best
}

/// Faces seen from `apex`, found by a flood fill from face `start` over shared edges.
fn visible_faces(
    points: &[Vector3<f64>],
    faces: &[HullFace],
    edge_face: &HashMap<(usize, usize), usize>,
    start: usize,
    apex: usize,
    eps: f64,
) -> Vec<usize> {
    let mut visible = vec![start];
    let mut stack = vec![start];
    while let Some(f) = stack.pop() {
        let v = faces[f].vertices;
        for k in 0..3 {
            let twin = (v[(k + 1) % 3], v[k]);
            if let Some(&n) = edge_face.get(&twin) {
                if !visible.contains(&n) && faces[n].height(&points[apex]) > eps {
                    visible.push(n);
                    stack.push(n);
                }
            }
        }
    }
    visible
}

/// Directed edges of the visible region whose twin is not visible.
fn horizon_edges(faces: &[HullFace], visible: &[usize]) -> Vec<(usize, usize)> {
    let mut edges = Vec::new();
    for &f in visible {
        let v = faces[f].vertices;
        for k in 0..3 {
            edges.push((v[k], v[(k + 1) % 3]));
        }
    }
    edges
        .iter()
        .filter(|(p, q)| !edges.contains(&(*q, *p)))
        .copied()
        .collect()
}
