//! `contactbench robots fetch|list`: the robots of `robots/manifest.yaml`.

use std::process::ExitCode;

use super::out::outln;
use contactbench::model::robots::{cache_dir, manifest, RootKind};

/// Arguments of `contactbench robots`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    action: Action,
}

#[derive(Debug, clap::Subcommand)]
enum Action {
    /// Download example-robot-data with pip, check its sha256 and extract the robots into
    /// the cache (robots/cache, or $CONTACTBENCH_CACHE).
    Fetch,
    /// List the robots of the manifest and whether they are in the cache.
    List,
}

/// Runs the command.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let manifest = manifest()?;
    match args.action {
        Action::Fetch => {
            let dir = manifest.fetch(true)?;
            outln!(
                "{} {}: {} in {}",
                manifest.package,
                manifest.version,
                manifest.names().join(", "),
                dir.display()
            );
        }
        Action::List => {
            outln!("cache: {}", cache_dir().display());
            outln!(
                "{:<8} {:<10} {:<8} {:<13} urdf",
                "robot",
                "base",
                "fetched",
                "reference"
            );
            for robot in &manifest.robots {
                let base = match robot.root {
                    RootKind::Fixed => "fixed",
                    RootKind::FreeFlyer => "free-flyer",
                };
                outln!(
                    "{:<8} {:<10} {:<8} {:<13} {}",
                    robot.name,
                    base,
                    if manifest.is_fetched(robot) {
                        "yes"
                    } else {
                        "no"
                    },
                    robot.reference.as_deref().unwrap_or("-"),
                    robot.urdf
                );
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
