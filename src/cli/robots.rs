//! `contactbench robots fetch|list`: the robots of `robots/manifest.yaml` and of the user's
//! manifest named by `$CONTACTBENCH_ROBOTS`.

use std::process::ExitCode;

use super::out::outln;
use contactbench::model::robots::{cache_dir, Catalogue};
use contactbench::model::RootKind;

/// Arguments of `contactbench robots`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    action: Action,
}

#[derive(Debug, clap::Subcommand)]
enum Action {
    /// Download example-robot-data over HTTPS, check its size and sha256 and extract the
    /// built-in robots into the cache (robots/cache, or $CONTACTBENCH_CACHE).
    Fetch,
    /// List the built-in robots (and whether they are in the cache) and those of the
    /// user's manifest named by $CONTACTBENCH_ROBOTS.
    List,
}

/// Runs the command.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let catalogue = Catalogue::from_env()?;
    let manifest = &catalogue.builtin;
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
            if let Some(user) = &catalogue.user {
                outln!("user manifest: {}", user.file.display());
            }
            outln!(
                "{:<12} {:<10} {:<8} {:<13} urdf",
                "robot",
                "base",
                "fetched",
                "reference"
            );
            for robot in &manifest.robots {
                let fetched = if manifest.is_fetched(robot) {
                    "yes"
                } else {
                    "no"
                };
                outln!(
                    "{:<12} {:<10} {:<8} {:<13} {}",
                    robot.name,
                    base(robot.root),
                    fetched,
                    robot.reference.as_deref().unwrap_or("-"),
                    robot.urdf
                );
            }
            for robot in catalogue.user.iter().flat_map(|u| &u.robots) {
                outln!(
                    "{:<12} {:<10} {:<8} {:<13} {}",
                    robot.name,
                    base(robot.root),
                    "user",
                    robot.reference.as_deref().unwrap_or("-"),
                    robot.urdf.display()
                );
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn base(root: RootKind) -> &'static str {
    match root {
        RootKind::Fixed => "fixed",
        RootKind::FreeFlyer => "free-flyer",
    }
}
