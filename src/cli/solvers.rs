//! `contactbench solvers [--json]`: every built-in solver with its model, its parameters
//! (defaults and units) and the shared settings, read from the registry.

use std::process::ExitCode;

use super::out::{out, outln};
use contactbench::solvers::registry::{listing, shared_defaults, REGISTRY, SHARED_SETTINGS};
use serde_json::{json, Value};

/// Arguments of `contactbench solvers`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Print the table as JSON on stdout instead of text.
    #[arg(long)]
    json: bool,
}

/// Runs the command.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&as_json())?);
    } else {
        out!("{}", listing());
    }
    Ok(ExitCode::SUCCESS)
}

/// The registry as JSON: `{solvers: [{name, model, summary, parameters: [...]}],
/// shared_settings: [...]}`, each parameter `{name, default, unit, doc}`.
fn as_json() -> Value {
    let solvers: Vec<Value> = REGISTRY
        .iter()
        .map(|e| {
            let defaults = (e.defaults)();
            let params: Vec<Value> = e
                .params
                .iter()
                .map(|p| {
                    json!({"name": p.name, "default": defaults.get(p.name),
                           "unit": p.unit, "doc": p.doc})
                })
                .collect();
            json!({"name": e.name, "model": e.model, "summary": e.summary,
                   "parameters": params})
        })
        .collect();
    let shared = shared_defaults();
    let settings: Vec<Value> = SHARED_SETTINGS
        .iter()
        .map(|p| json!({"name": p.name, "default": shared.get(p.name), "unit": p.unit, "doc": p.doc}))
        .collect();
    json!({"solvers": solvers, "shared_settings": settings})
}
