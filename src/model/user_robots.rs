//! A user's robot manifest: their own named robots, in a YAML file of their own found by
//! `$CONTACTBENCH_ROBOTS` (docs/robots.md, "Your own robot").
//!
//! ```yaml
//! robots:
//!   - name: my_arm
//!     urdf: my_arm/urdf/my_arm.urdf     # relative to this file's directory
//!     packages: [my_arm/..]             # package://PKG/rest looked up as DIR/PKG/rest
//!     srdf: my_arm/srdf/my_arm.srdf     # optional: reference configurations
//!     root: fixed                       # or free-flyer (default fixed)
//!     reference: home                   # optional: a configuration the SRDF must have
//! ```
//!
//! A user name may not shadow a built-in robot (`solo12` must mean the same robot in every
//! benchmark result) nor repeat within the file; both are errors naming the file, the line
//! and the field.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_saphyr::Spanned;

use super::{read_text, ModelError, RootKind};

/// Environment variable naming the user's robot manifest.
pub const USER_MANIFEST_ENV: &str = "CONTACTBENCH_ROBOTS";

/// Largest user manifest read (bytes): a list of robots, not a data file.
const MAX_MANIFEST_BYTES: u64 = 1 << 20;

/// The user's manifest: its file and its robots, paths resolved against the file's
/// directory.
#[derive(Debug, Clone)]
pub struct UserManifest {
    /// The file it was read from.
    pub file: PathBuf,
    /// The robots, in file order.
    pub robots: Vec<UserRobot>,
}

/// One robot of a user's manifest.
#[derive(Debug, Clone)]
pub struct UserRobot {
    /// Name used in scenarios, on the command line and in Python.
    pub name: String,
    /// Line (1-based) of the entry's `name` in the user's file.
    pub line: usize,
    /// Column (1-based) of the entry's `name` value.
    pub column: usize,
    /// The URDF file (absolute or relative to the working directory once resolved).
    pub urdf: PathBuf,
    /// Directories for `package://` URIs, looked up before the URDF's ancestors.
    pub packages: Vec<PathBuf>,
    /// SRDF with reference configurations, if any.
    pub srdf: Option<PathBuf>,
    /// Fixed or free-flyer base.
    pub root: RootKind,
    /// A reference configuration the SRDF must have, if any (shown by `robots list`).
    pub reference: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawManifest {
    robots: Vec<RawRobot>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRobot {
    name: Spanned<String>,
    urdf: PathBuf,
    #[serde(default)]
    packages: Vec<PathBuf>,
    #[serde(default)]
    srdf: Option<PathBuf>,
    #[serde(default = "fixed")]
    root: RootKind,
    #[serde(default)]
    reference: Option<String>,
}

fn fixed() -> RootKind {
    RootKind::Fixed
}

impl UserManifest {
    /// The manifest named by `$CONTACTBENCH_ROBOTS`, `None` when it is unset or empty.
    pub fn from_env() -> Result<Option<UserManifest>, ModelError> {
        match std::env::var_os(USER_MANIFEST_ENV) {
            Some(file) if !file.is_empty() => UserManifest::load(Path::new(&file)).map(Some),
            _ => Ok(None),
        }
    }

    /// Reads a user's manifest. Parse errors and duplicate names name the file, the line
    /// and the field.
    pub fn load(file: &Path) -> Result<UserManifest, ModelError> {
        let text = read_text(file, MAX_MANIFEST_BYTES).map_err(|error| ModelError::Io {
            file: file.to_path_buf(),
            error,
        })?;
        UserManifest::from_yaml(&text, file)
    }

    /// Parses a user's manifest from text; `file` is used in messages and relative paths
    /// are resolved against its directory.
    pub fn from_yaml(text: &str, file: &Path) -> Result<UserManifest, ModelError> {
        let raw = parse(text, file)?;
        let base = file.parent().unwrap_or(Path::new(""));
        let mut robots: Vec<UserRobot> = Vec::with_capacity(raw.robots.len());
        for (i, r) in raw.robots.into_iter().enumerate() {
            let line = r.name.referenced.line() as usize;
            let column = r.name.referenced.column() as usize;
            let name = r.name.value;
            let invalid = |message: String| ModelError::RobotManifest {
                file: file.to_path_buf(),
                line,
                column,
                field: format!("robots[{i}].name"),
                message,
            };
            if name.trim().is_empty() || name.trim() != name {
                return Err(invalid(format!(
                    "'{name}': a robot name must be non-empty without surrounding spaces"
                )));
            }
            if let Some(first) = robots.iter().find(|u| u.name == name) {
                return Err(invalid(format!(
                    "'{name}' is already the robot of line {}",
                    first.line
                )));
            }
            robots.push(UserRobot {
                name,
                line,
                column,
                urdf: base.join(r.urdf),
                packages: r.packages.iter().map(|d| base.join(d)).collect(),
                srdf: r.srdf.map(|s| base.join(s)),
                root: r.root,
                reference: r.reference,
            });
        }
        Ok(UserManifest {
            file: file.to_path_buf(),
            robots,
        })
    }

    /// The robot with the given name, if the file has it.
    pub fn robot(&self, name: &str) -> Option<&UserRobot> {
        self.robots.iter().find(|r| r.name == name)
    }
}

/// Deserializes the file with the field path of the first error and its line and column.
fn parse(text: &str, file: &Path) -> Result<RawManifest, ModelError> {
    let options = serde_saphyr::options! {
        with_snippet: false,
        budget: serde_saphyr::budget! {
            max_depth: 16,
            max_nodes: 100_000,
        },
    };
    super::text::parse_yaml(text, options).map_err(|f| ModelError::RobotManifest {
        file: file.to_path_buf(),
        line: f.line,
        column: f.column,
        field: f.field,
        message: f.message,
    })
}
