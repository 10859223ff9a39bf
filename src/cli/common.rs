//! Helpers shared by the simulation commands.

use std::path::{Path, PathBuf};

use anyhow::Context;
use contactbench::simulation::batch::Runner;
use contactbench::simulation::runner::{check, simulate};
use contactbench::simulation::Scenario;
use contactbench::solvers::SolverSpec;

/// The simulator as a batch runner.
pub fn runner() -> &'static Runner {
    &|scenario, spec| simulate(scenario, spec).map_err(|e| e.to_string())
}

/// Parses `--solver` texts (`ncp-admm:eps_rel=1e-8`); each solver must build.
pub fn parse_solvers(texts: &[String]) -> anyhow::Result<Option<Vec<SolverSpec>>> {
    if texts.is_empty() {
        return Ok(None);
    }
    let specs = texts
        .iter()
        .map(|t| checked_spec(t).with_context(|| format!("--solver {t}")))
        .collect::<anyhow::Result<Vec<_>>>()?;
    Ok(Some(specs))
}

fn checked_spec(text: &str) -> anyhow::Result<SolverSpec> {
    let spec = text.parse::<SolverSpec>()?;
    spec.build()?;
    Ok(spec)
}

/// Scenario files given directly or found (`*.yaml`, sorted) in directories.
pub fn scenario_files(inputs: &[PathBuf]) -> anyhow::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for input in inputs {
        if input.is_dir() {
            let mut found: Vec<PathBuf> = std::fs::read_dir(input)
                .with_context(|| format!("{}", input.display()))?
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|e| e == "yaml" || e == "yml"))
                .collect();
            found.sort();
            files.extend(found);
        } else {
            files.push(input.clone());
        }
    }
    anyhow::ensure!(!files.is_empty(), "no scenario file found");
    Ok(files)
}

/// Loads and checks every scenario (world and solvers), failing on the first bad one
/// before anything runs.
pub fn load_scenarios(files: &[PathBuf], overrides: &[String]) -> anyhow::Result<Vec<Scenario>> {
    files
        .iter()
        .map(|f| {
            let scenario = Scenario::load(Path::new(f), overrides)?;
            check(&scenario)?;
            Ok(scenario)
        })
        .collect()
}
