//! `contactbench completions SHELL`: the shell's completion script on stdout (clap_complete),
//! e.g. `contactbench completions bash > ~/.local/share/bash-completion/completions/contactbench`.

use std::process::ExitCode;

use clap::CommandFactory;
use clap_complete::Shell;

use super::out::out;
use super::Cli;

/// Arguments of `contactbench completions`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The shell: bash, elvish, fish, powershell or zsh.
    pub shell: Shell,
}

/// Prints the completion script.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut Cli::command(), "contactbench", &mut script);
    out!("{}", String::from_utf8_lossy(&script));
    Ok(ExitCode::SUCCESS)
}
