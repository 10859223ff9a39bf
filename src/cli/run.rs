//! `contactbench run` (placeholder until the command lands).

use std::process::ExitCode;

/// Arguments of `contactbench run`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Runs the command.
pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("contactbench run is not implemented yet")
}
