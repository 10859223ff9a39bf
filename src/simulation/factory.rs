//! What every runner builds its solver from: a [`SolverFactory`].
//!
//! A run needs a fresh solver (solvers keep state between solves: ρ, factorizations), and
//! a sweep needs the same solver at other settings (the tolerance study), so the runners
//! ([`super::runner::simulate`], [`super::sweep::sweep`], [`super::batch::run_batch`],
//! the paper's runs) take a factory rather than a solver. A built-in solver's factory is
//! its [`SolverSpec`]; a user's own [`ContactSolver`], defined in any crate, runs through
//! every runner with a [`UserSolver`]:
//!
//! ```
//! use contactbench::simulation::factory::{SolverFactory, UserSolver};
//! use contactbench::solvers::{SolverId, SolverSettings, SolverSpec};
//!
//! // Any closure from settings to a boxed `ContactSolver` (here a built-in one, to keep
//! // the example short; the `user-solver` crate of the repository has its own algorithm).
//! let mine = UserSolver::new("my-pgs", SolverSettings::default(), |settings| {
//!     SolverSpec { settings, ..SolverSpec::new(SolverId::NcpPgs) }.build()
//! });
//! assert_eq!(mine.name(), "my-pgs");
//! let mut solver = mine.build().expect("valid settings");
//! assert_eq!(solver.settings().max_iter, SolverSettings::default().max_iter);
//! # let _ = &mut solver;
//! ```

use std::fmt;
use std::sync::Arc;

use crate::solvers::{ContactSolver, Criterion, SolverError, SolverSettings, SolverSpec};

/// Builds fresh solvers of one kind at given settings: what the runners take.
pub trait SolverFactory: Send + Sync {
    /// Short name (`ncp-admm`, or a user's own): the run's directory in a batch.
    fn name(&self) -> String;
    /// The text recorded with a run (summaries, tables, sweep rows): the name, then the
    /// settings that differ from the defaults.
    fn label(&self) -> String {
        with_settings_text(&self.name(), self.settings(), &[])
    }
    /// The settings the solver is built with.
    fn settings(&self) -> &SolverSettings;
    /// The same factory at other settings (the tolerance sweep sets `stop`, `eps_abs`,
    /// `eps_step`).
    fn with_settings(&self, settings: SolverSettings) -> Arc<dyn SolverFactory>;
    /// A fresh solver; the settings are validated first.
    fn build(&self) -> Result<Box<dyn ContactSolver>, SolverError>;
    /// The built-in solver's spec, when the factory is one (the paper's ContactBench
    /// protocol re-runs built-in per-contact solvers sweep by sweep).
    fn spec(&self) -> Option<&SolverSpec> {
        None
    }
}

impl fmt::Debug for dyn SolverFactory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SolverFactory({})", self.label())
    }
}

impl SolverFactory for SolverSpec {
    fn name(&self) -> String {
        self.id.to_string()
    }

    fn label(&self) -> String {
        let params: Vec<String> = self
            .params
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        with_settings_text(self.id.as_str(), &self.settings, &params)
    }

    fn settings(&self) -> &SolverSettings {
        &self.settings
    }

    fn with_settings(&self, settings: SolverSettings) -> Arc<dyn SolverFactory> {
        Arc::new(SolverSpec {
            settings,
            ..self.clone()
        })
    }

    fn build(&self) -> Result<Box<dyn ContactSolver>, SolverError> {
        SolverSpec::build(self)
    }

    fn spec(&self) -> Option<&SolverSpec> {
        Some(self)
    }
}

impl<T: SolverFactory + ?Sized> SolverFactory for Arc<T> {
    fn name(&self) -> String {
        (**self).name()
    }
    fn label(&self) -> String {
        (**self).label()
    }
    fn settings(&self) -> &SolverSettings {
        (**self).settings()
    }
    fn with_settings(&self, settings: SolverSettings) -> Arc<dyn SolverFactory> {
        (**self).with_settings(settings)
    }
    fn build(&self) -> Result<Box<dyn ContactSolver>, SolverError> {
        (**self).build()
    }
    fn spec(&self) -> Option<&SolverSpec> {
        (**self).spec()
    }
}

/// What builds a user's solver from its settings.
pub type BuildSolver =
    dyn Fn(SolverSettings) -> Result<Box<dyn ContactSolver>, SolverError> + Send + Sync;

/// A user's own solver as a factory: a name, settings, and a closure building the solver
/// from (validated) settings.
#[derive(Clone)]
pub struct UserSolver {
    name: String,
    settings: SolverSettings,
    build: Arc<BuildSolver>,
}

impl UserSolver {
    /// A factory named `name` building solvers with `build` at `settings`.
    pub fn new(
        name: impl Into<String>,
        settings: SolverSettings,
        build: impl Fn(SolverSettings) -> Result<Box<dyn ContactSolver>, SolverError>
            + Send
            + Sync
            + 'static,
    ) -> Self {
        Self {
            name: name.into(),
            settings,
            build: Arc::new(build),
        }
    }

    /// The factory as the runners' shared form.
    pub fn into_arc(self) -> Arc<dyn SolverFactory> {
        Arc::new(self)
    }
}

impl fmt::Debug for UserSolver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UserSolver")
            .field("name", &self.name)
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

impl SolverFactory for UserSolver {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn settings(&self) -> &SolverSettings {
        &self.settings
    }

    fn with_settings(&self, settings: SolverSettings) -> Arc<dyn SolverFactory> {
        Arc::new(UserSolver {
            settings,
            ..self.clone()
        })
    }

    fn build(&self) -> Result<Box<dyn ContactSolver>, SolverError> {
        self.settings.validate()?;
        (self.build)(self.settings.clone())
    }
}

/// `name`, then the settings that differ from the defaults and `extra` (`key=value`), as
/// `name:key=value,…`.
pub fn with_settings_text(name: &str, settings: &SolverSettings, extra: &[String]) -> String {
    let defaults = SolverSettings::default();
    let s = settings;
    let mut parts: Vec<String> = Vec::new();
    if s.stop != defaults.stop {
        parts.push(format!("stop={}", s.stop));
    }
    // Only the tolerance of the criterion in use: the other one would be refused.
    match s.stop {
        Criterion::Relative if s.eps_rel != defaults.eps_rel => {
            parts.push(format!("eps_rel={:e}", s.eps_rel));
        }
        Criterion::Absolute if s.eps_abs != defaults.eps_abs => {
            parts.push(format!("eps_abs={:e}", s.eps_abs));
        }
        _ => {}
    }
    if s.eps_step != defaults.eps_step {
        parts.push(format!("eps_step={:e}", s.eps_step));
    }
    if let Some(t) = s.max_time {
        parts.push(format!("max_time={t}"));
    }
    if s.max_iter != defaults.max_iter {
        parts.push(format!("max_iter={}", s.max_iter));
    }
    if s.over_relaxation != defaults.over_relaxation {
        parts.push(format!("over_relaxation={}", s.over_relaxation));
    }
    parts.extend(extra.iter().cloned());
    if parts.is_empty() {
        name.to_string()
    } else {
        format!("{name}:{}", parts.join(","))
    }
}
