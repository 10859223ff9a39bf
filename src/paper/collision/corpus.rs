//! The meshes of the collision pages: convex hulls of the robots' meshes of the
//! `example-robot-data` wheel pinned by `robots/manifest.yaml` (GJK++ uses the YCB
//! objects, which are not here).
//!
//! Where they come from, in this order:
//! - `$CONTACTBENCH_MESHES`, a directory searched recursively (a user's meshes);
//! - in full runs, the whole wheel (39 robots, about 780 STL, COLLADA and OBJ files),
//!   fetched on first use by the project's robot fetcher into
//!   `<cache>/example-robot-data-all-<version>` (same wheel, same size and sha256 checks,
//!   every robot folder extracted);
//! - in `--quick` runs (and when the wheel cannot be fetched), the robots of the manifest
//!   (Solo-12, Talos, Allegro), which every run has.
//!
//! Every file is read and hulled; a bad one (unreadable, empty, non-finite, flat, a
//! COLLADA file that is not Z-up) is refused with its name and the reason, and listed on
//! the pages that use the corpus. Meshes are chosen by hull vertex count
//! ([`Corpus::closest`]).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use nalgebra::Vector3;
use rayon::prelude::*;

use crate::collision::{CollisionError, ConvexHull};
use crate::model::robots::{self, Manifest, RobotEntry};
use crate::model::RootKind;

/// Environment variable naming a directory of meshes to use instead of the wheel's.
pub const MESHES_ENV: &str = "CONTACTBENCH_MESHES";

/// Smallest and largest bounding-box diagonal of a chosen mesh (m): the papers' shapes
/// measure "from a few centimeters up to a meter"; some robots' meshes are in millimetres
/// and scaled by their URDF, and are left out rather than guessed.
pub const DIAGONAL_RANGE: (f64, f64) = (0.03, 1.5);

/// Largest relative gap between a target vertex count and the chosen hull's.
pub const VERTEX_TOLERANCE: f64 = 0.1;

/// The robot folders of example-robot-data 6.0.0 with one file each proves extracted.
const WHEEL_FOLDERS: [(&str, &str); 39] = [
    ("a1_description", "a1_description/urdf/a1.urdf"),
    (
        "alex_description",
        "alex_description/urdf/alex_nub_hands.urdf",
    ),
    (
        "alexander_description",
        "alexander_description/urdf/alexander_v1.lowerBodyOnly.urdf",
    ),
    (
        "allegro_hand_description",
        "allegro_hand_description/urdf/allegro_left_hand.urdf",
    ),
    (
        "anymal_b_simple_description",
        "anymal_b_simple_description/robots/anymal-kinova.urdf",
    ),
    (
        "anymal_c_simple_description",
        "anymal_c_simple_description/urdf/anymal.urdf",
    ),
    (
        "asr_twodof_description",
        "asr_twodof_description/urdf/TwoDofs.urdf",
    ),
    ("b1_description", "b1_description/urdf/b1-z1.urdf"),
    ("baxter_description", "baxter_description/urdf/baxter.urdf"),
    ("bolt_description", "bolt_description/robots/bolt.urdf"),
    (
        "borinot_description",
        "borinot_description/urdf/borinot_flying_arm_2.urdf",
    ),
    ("cassie_description", "cassie_description/README.md"),
    (
        "centauro_description",
        "centauro_description/urdf/centauro.urdf",
    ),
    (
        "double_pendulum_description",
        "double_pendulum_description/urdf/double_pendulum.urdf",
    ),
    (
        "finger_edu_description",
        "finger_edu_description/robots/finger_edu.urdf",
    ),
    (
        "g1_description",
        "g1_description/urdf/g1_29dof_rev_1_0.urdf",
    ),
    ("go1_description", "go1_description/urdf/go1.urdf"),
    ("go2_description", "go2_description/urdf/go2.urdf"),
    (
        "hector_description",
        "hector_description/robots/quadrotor_base.urdf",
    ),
    (
        "hextilt_description",
        "hextilt_description/urdf/hextilt_flying_arm_5.urdf",
    ),
    ("human_description", "human_description/robots/human.urdf"),
    (
        "hyq_description",
        "hyq_description/robots/hyq_no_sensors.urdf",
    ),
    ("icub_description", "icub_description/robots/icub.urdf"),
    ("iris_description", "iris_description/robots/iris.urdf"),
    (
        "kinova_description",
        "kinova_description/robots/kinova.urdf",
    ),
    (
        "laikago_description",
        "laikago_description/urdf/laikago.urdf",
    ),
    ("panda_description", "panda_description/urdf/panda.urdf"),
    ("pr2_description", "pr2_description/urdf/pr2.urdf"),
    (
        "quadruped_description",
        "quadruped_description/urdf/quadruped.urdf",
    ),
    ("romeo_description", "romeo_description/urdf/romeo.urdf"),
    (
        "simple_humanoid_description",
        "simple_humanoid_description/urdf/simple_humanoid.urdf",
    ),
    ("so_arm_description", "so_arm_description/urdf/so100.urdf"),
    ("solo_description", "solo_description/robots/solo.urdf"),
    ("talos_data", "talos_data/robots/talos_full_v2.urdf"),
    ("tiago_description", "tiago_description/robots/tiago.urdf"),
    (
        "tiago_pro_description",
        "tiago_pro_description/robots/tiago_pro.urdf",
    ),
    (
        "ur_description",
        "ur_description/urdf/ur10_joint_limited_robot.urdf",
    ),
    ("xarm_description", "xarm_description/urdf/xarm7.urdf"),
    ("z1_description", "z1_description/urdf/z1.urdf"),
];

/// Where a corpus comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// `$CONTACTBENCH_MESHES`.
    User,
    /// Every robot of the wheel.
    Wheel,
    /// The robots of the manifest only.
    ManifestRobots,
}

/// One usable mesh: its hull and what it is chosen by.
#[derive(Debug, Clone)]
pub struct MeshEntry {
    /// Path relative to the corpus root (the path inside the wheel's `robots/`).
    pub name: String,
    /// The convex hull of its vertices.
    pub hull: Arc<ConvexHull>,
    /// Hull vertices.
    pub vertices: usize,
    /// Hull triangles.
    pub faces: usize,
    /// Diagonal of the hull's bounding box (m).
    pub diagonal: f64,
}

/// A scanned corpus.
#[derive(Debug)]
pub struct Corpus {
    /// Its root directory.
    pub root: PathBuf,
    /// Where it comes from.
    pub origin: Origin,
    /// Why the richer sources were not used (a fetch that failed, a quick run).
    pub notes: Vec<String>,
    /// Usable meshes, by name.
    pub meshes: Vec<MeshEntry>,
    /// Refused files: name and reason.
    pub refused: Vec<(String, String)>,
}

/// The manifest that fetches every robot folder of the wheel into its own directory of
/// the cache (the robots' manifest is left as it is).
fn wheel_manifest() -> Result<Manifest, String> {
    let base = robots::manifest().map_err(|e| e.to_string())?;
    Ok(Manifest {
        package: format!("{}-all", base.package),
        robots: WHEEL_FOLDERS
            .iter()
            .map(|(folder, marker)| RobotEntry {
                name: (*folder).to_string(),
                folder: (*folder).to_string(),
                urdf: (*marker).to_string(),
                srdf: None,
                root: RootKind::Fixed,
                reference: None,
            })
            .collect(),
        ..base
    })
}

/// The corpus root and origin: `$CONTACTBENCH_MESHES`, else the whole wheel when `fetch`
/// (fetched on first use), else the manifest's robots.
fn locate(fetch: bool) -> Result<(PathBuf, Origin, Vec<String>), String> {
    if let Some(dir) = std::env::var_os(MESHES_ENV).filter(|d| !d.is_empty()) {
        let dir = PathBuf::from(dir);
        return if dir.is_dir() {
            Ok((dir, Origin::User, Vec::new()))
        } else {
            Err(format!("{MESHES_ENV}={} is not a directory", dir.display()))
        };
    }
    let mut notes = Vec::new();
    if fetch {
        let wheel = wheel_manifest()?;
        match wheel.fetch(false) {
            Ok(dir) => return Ok((dir, Origin::Wheel, notes)),
            Err(e) => notes.push(format!("The wheel's robots could not be fetched: {e}.")),
        }
    } else {
        notes.push(
            "A --quick run reads the meshes of the manifest's robots only (no download, and the \
             same meshes on every machine); the full run reads the whole wheel."
                .into(),
        );
    }
    let base = robots::manifest().map_err(|e| e.to_string())?;
    let dir = base
        .fetch(false)
        .map_err(|e| format!("no meshes: the robots could not be fetched: {e}"))?;
    Ok((dir, Origin::ManifestRobots, notes))
}

/// Mesh files under `dir` (`.stl`, `.dae`, `.obj`, any case), sorted, recursively.
pub fn mesh_files(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let entries =
            std::fs::read_dir(&dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path
                .extension()
                .map(|e| e.to_string_lossy().to_ascii_lowercase())
                .is_some_and(|e| matches!(e.as_str(), "stl" | "dae" | "obj"))
            {
                out.push(path);
            }
        }
    }
    out.sort();
    Ok(out)
}

/// The hull of a mesh file, refused when the file is missing, unreadable, empty, has a
/// non-finite vertex or spans no volume; every error names the file.
pub fn solid_hull(path: &Path) -> Result<ConvexHull, CollisionError> {
    let hull = ConvexHull::from_mesh_file(path, &Vector3::repeat(1.0))?;
    if hull.is_solid() {
        Ok(hull)
    } else {
        Err(CollisionError::FlatMesh {
            source_name: path.display().to_string(),
        })
    }
}

fn entry(root: &Path, path: &Path, hull: ConvexHull) -> MeshEntry {
    let vertices = hull.vertices();
    let (lo, hi) = vertices.iter().fold(
        (
            Vector3::repeat(f64::INFINITY),
            Vector3::repeat(f64::NEG_INFINITY),
        ),
        |(lo, hi), v| (lo.inf(v), hi.sup(v)),
    );
    MeshEntry {
        name: path
            .strip_prefix(root)
            .unwrap_or(path)
            .display()
            .to_string(),
        vertices: vertices.len(),
        faces: hull.faces().len(),
        diagonal: (hi - lo).norm(),
        hull: Arc::new(hull),
    }
}

/// Reads and hulls every mesh file under `root`.
pub fn scan(root: &Path, origin: Origin, notes: Vec<String>) -> Result<Corpus, String> {
    let files = mesh_files(root)?;
    let results: Vec<Result<MeshEntry, (String, String)>> = files
        .par_iter()
        .map(|path| {
            solid_hull(path)
                .map(|hull| entry(root, path, hull))
                .map_err(|e| {
                    let name = path
                        .strip_prefix(root)
                        .unwrap_or(path)
                        .display()
                        .to_string();
                    (name, e.to_string())
                })
        })
        .collect();
    let (mut meshes, mut refused) = (Vec::new(), Vec::new());
    for r in results {
        match r {
            Ok(m) => meshes.push(m),
            Err(e) => refused.push(e),
        }
    }
    Ok(Corpus {
        root: root.to_path_buf(),
        origin,
        notes,
        meshes,
        refused,
    })
}

type CorpusCache = Mutex<HashMap<(bool, Option<std::ffi::OsString>), Arc<Corpus>>>;

/// The corpus of a run (`fetch` for full runs), scanned once per process.
pub fn corpus(fetch: bool) -> Result<Arc<Corpus>, String> {
    static CACHE: OnceLock<CorpusCache> = OnceLock::new();
    let cache = CACHE.get_or_init(|| Mutex::new(HashMap::new()));
    let key = (fetch, std::env::var_os(MESHES_ENV));
    if let Some(c) = cache.lock().ok().and_then(|c| c.get(&key).cloned()) {
        return Ok(c);
    }
    let (root, origin, notes) = locate(fetch)?;
    let scanned = Arc::new(scan(&root, origin, notes)?);
    if let Ok(mut c) = cache.lock() {
        c.insert(key, scanned.clone());
    }
    Ok(scanned)
}

impl Corpus {
    /// Meshes of a size the papers use ([`DIAGONAL_RANGE`]).
    pub fn sized(&self) -> impl Iterator<Item = &MeshEntry> {
        self.meshes
            .iter()
            .filter(|m| m.diagonal >= DIAGONAL_RANGE.0 && m.diagonal <= DIAGONAL_RANGE.1)
    }

    /// The mesh whose hull vertex count is closest to `target` (ties: the first name),
    /// among those of the papers' sizes and not in `taken`; `Err` with the closest one
    /// when it is more than [`VERTEX_TOLERANCE`] away.
    pub fn closest(&self, target: usize, taken: &[&str]) -> Result<&MeshEntry, String> {
        let best = self
            .sized()
            .filter(|m| !taken.contains(&m.name.as_str()))
            .min_by_key(|m| (m.vertices.abs_diff(target), m.name.clone()))
            .ok_or_else(|| "no mesh of the papers' sizes in the corpus".to_string())?;
        let gap = best.vertices.abs_diff(target) as f64 / target as f64;
        if gap <= VERTEX_TOLERANCE {
            Ok(best)
        } else {
            Err(format!(
                "no hull within {:.0} % of {target} vertices among the {} meshes read (closest: \
                 `{}`, {} vertices)",
                VERTEX_TOLERANCE * 100.0,
                self.sized().count(),
                best.name,
                best.vertices
            ))
        }
    }

    /// `the 690 usable meshes of the wheel's 39 robots (…)`-style description.
    pub fn describe(&self) -> String {
        let source = match self.origin {
            Origin::User => format!("{MESHES_ENV}={}", self.root.display()),
            Origin::Wheel => "the example-robot-data wheel's 39 robots".to_string(),
            Origin::ManifestRobots => "the manifest's robots (Solo-12, Talos, Allegro)".to_string(),
        };
        format!(
            "{source} ({} files read, {} refused, {} of the papers' sizes)",
            self.meshes.len() + self.refused.len(),
            self.refused.len(),
            self.sized().count()
        )
    }

    /// Setup lines for a page: the source, why not a richer one, the refused files
    /// grouped by reason.
    pub fn setup_lines(&self) -> Vec<String> {
        let mut lines = vec![format!("Meshes: convex hulls of {}.", self.describe())];
        lines.extend(self.notes.iter().cloned());
        let mut reasons: HashMap<String, Vec<&str>> = HashMap::new();
        for (name, why) in &self.refused {
            let reason = why.rsplit(": ").next().unwrap_or(why).to_string();
            reasons.entry(reason).or_default().push(name);
        }
        let mut reasons: Vec<_> = reasons.into_iter().collect();
        reasons.sort();
        for (reason, names) in reasons {
            lines.push(format!(
                "Refused ({}): `{}` — {}{}",
                names.len(),
                reason,
                names.iter().take(3).copied().collect::<Vec<_>>().join(", "),
                if names.len() > 3 { ", …" } else { "" }
            ));
        }
        lines
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wheel_manifest_keeps_the_pinned_wheel_and_lists_every_folder() {
        let base = robots::manifest().expect("manifest");
        let wheel = wheel_manifest().expect("wheel manifest");
        assert_eq!(wheel.wheel_sha256, base.wheel_sha256);
        assert_ne!(wheel.package_dir(), base.package_dir());
        for robot in &base.robots {
            assert!(wheel.robots.iter().any(|r| r.folder == robot.folder));
        }
    }
}
