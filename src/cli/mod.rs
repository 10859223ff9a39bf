//! The `contactbench` command line: parsing and dispatch, every command in its own file
//! over the library. [`main_with`] is the whole binary as a function, so that a crate of
//! one's own builds a `contactbench` whose `run`, `sweep`, `batch`, `solve` and `paper`
//! also know its own solvers:
//!
//! ```no_run
//! use contactbench::simulation::UserSolver;
//! use contactbench::solvers::{SolverId, SolverSettings, SolverSpec};
//!
//! fn main() -> std::process::ExitCode {
//!     // Any closure from settings to a boxed `ContactSolver` (a built-in one here).
//!     let mine = UserSolver::new("my-pgs", SolverSettings::default(), |settings| {
//!         SolverSpec { settings, ..SolverSpec::new(SolverId::NcpPgs) }.build()
//!     });
//!     // `my-binary solve problem.json --solver my-pgs:eps_rel=1e-8`, `--all`, ...
//!     contactbench::cli::main_with(vec![mine])
//! }
//! ```

mod batch;
mod bench_problems;
mod bench_step;
mod collision_bench;
mod common;
mod completions;
mod dump;
mod hints;
mod merge;
mod model;
pub(crate) mod out;
mod paper;
mod report;
mod robots;
mod run;
mod solve;
mod solvers;
mod sweep;
mod view;

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use contactbench::simulation::UserSolver;

/// The `contactbench` binary with the user's own solvers beside the built-in ones: parses
/// the command line, runs the command, prints an error (with a "did you mean" when a
/// solver or parameter name is misspelt) and returns the exit code (0 success; 1 a run
/// failed, a solve did not converge or a regression; 2 usage or input error; 130
/// interrupted). A user solver is named on the command line by its name, with shared
/// settings as for a built-in one (`--solver mine:eps_rel=1e-8`); its name must not be a
/// built-in id.
pub fn main_with(extra_solvers: Vec<UserSolver>) -> ExitCode {
    let args = Cli::parse();
    let outcome = common::set_user_solvers(extra_solvers).and_then(|()| run(args));
    match outcome {
        Ok(code) => match out::failure() {
            Some(e) => {
                eprintln!("error: writing the output: {e}");
                ExitCode::FAILURE
            }
            None => code,
        },
        Err(err) => {
            let message = format!("{err:#}");
            eprintln!("error: {message}");
            if let Some(hint) = hints::hint(&message, &common::user_solver_names()) {
                eprintln!("hint: {hint}");
            }
            common::exit_code(&err)
        }
    }
}

/// Benchmark contact models and solvers on real robots.
#[derive(Debug, Parser)]
#[command(
    name = "contactbench",
    version,
    about,
    after_help = after_help()
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// The text after `--help`: the solver ids (from the registry) and the exit codes.
fn after_help() -> String {
    let ids: Vec<&str> = contactbench::solvers::SolverId::ALL
        .iter()
        .map(|id| id.as_str())
        .collect();
    format!(
        "Solvers: {} (`contactbench solvers` lists their models, parameters, defaults and \
         units).\n\nExit codes: 0 success; 1 a run failed, a solve did not converge, a sweep \
         cell has no number or the baseline gate found a regression; 2 usage or input error (bad flag, scenario, \
         solver, parameter, model or problem file, an output that exists, is not contactbench's, is \
         locked or cannot be created); 130 interrupted.",
        ids.join(", ")
    )
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Fetch or list the robots of the manifest.
    Robots(robots::Args),
    /// Print a robot's model and, given q (v, tau), its dynamics quantities.
    Model(model::Args),
    /// Solve a contact problem file with one or every solver.
    Solve(solve::Args),
    /// Run a scenario with its solvers.
    Run(run::Args),
    /// Time-step or tolerance sweep of a scenario against a reference run, or µs per step
    /// over scenes (`--scene`).
    Sweep(sweep::Args),
    /// Run every scenario × solver in parallel, optionally against a baseline.
    Batch(batch::Args),
    /// Plots and a Markdown summary from a results directory.
    Report(report::Args),
    /// Write the contact problem of a scenario at a given step as a problem file.
    Dump(dump::Args),
    /// µs per whole simulation step and per stage (median after settling).
    BenchStep(bench_step::Args),
    /// GJK vanilla / Polyak / Nesterov iterations and times per distance bucket.
    CollisionBench(collision_bench::Args),
    /// Every problem file (JSON, FCLIB, npz) × solver, one ruler, performance profiles.
    BenchProblems(bench_problems::Args),
    /// Join the results of sharded bench-problems runs into one report.
    Merge(merge::Args),
    /// The tables and figures of the contact models paper's §IV, with their pages.
    Paper(paper::Args),
    /// Every built-in solver: model, parameters with defaults and units, shared settings.
    Solvers(solvers::Args),
    /// Simulate a scenario with one solver and write it as an animated glTF file (.glb).
    View(view::Args),
    /// Print a shell completion script (bash, elvish, fish, powershell, zsh).
    Completions(completions::Args),
}

/// Runs the parsed command.
fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    common::install_signal_handler();
    match cli.command {
        Command::Robots(args) => robots::run(args),
        Command::Model(args) => model::run(args),
        Command::Solve(args) => solve::run(args),
        Command::Run(args) => run::run(args),
        Command::Sweep(args) => sweep::run(args),
        Command::Batch(args) => batch::run(args),
        Command::Report(args) => report::run(args),
        Command::Dump(args) => dump::run(args),
        Command::BenchStep(args) => bench_step::run(args),
        Command::CollisionBench(args) => collision_bench::run(args),
        Command::BenchProblems(args) => bench_problems::run(args),
        Command::Merge(args) => merge::run(args),
        Command::Paper(args) => paper::run(args),
        Command::Solvers(args) => solvers::run(args),
        Command::View(args) => view::run(args),
        Command::Completions(args) => completions::run(args),
    }
}
