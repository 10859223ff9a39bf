//! `contactbench model` (placeholder until the command lands).

use std::process::ExitCode;

/// Arguments of `contactbench model`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Runs the command.
pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("contactbench model is not implemented yet")
}
