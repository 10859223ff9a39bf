//! The registry of the built-in solvers: one table ([`REGISTRY`]) of id, model, summary,
//! constructor, default parameters and parameter documentation. Parsing a solver name
//! ([`super::SolverId`]'s `FromStr`), building it, `contactbench solvers` and the `--help`
//! list are read from this table; adding a built-in solver is one row here and its file.

use serde::Serialize;
use serde_json::{Map, Value};

use super::admm::AdmmParams;
use super::ccp_ipm::CcpIpmParams;
use super::ccp_newton::CcpNewtonParams;
use super::ncp_pgs::NcpPgsParams;
use super::per_contact::PgsParams;
use super::raisim::RaisimParams;
use super::stagproj::SubproblemParams;
use super::{
    ccp_admm, ccp_ipm, ccp_newton, ccp_pgs, lcp_pgs, lcp_qp, lcp_stagproj, ncp_admm, ncp_pgs,
    ncp_stagproj, raisim, raisim_corrected, ContactSolver, SolverError, SolverId, SolverSettings,
};
use crate::problem::ContactModel;

/// Builds a solver from checked settings and its own parameters (a map, unknown keys refused).
pub type Constructor =
    fn(SolverSettings, &Map<String, Value>) -> Result<Box<dyn ContactSolver>, SolverError>;

/// One documented parameter (of a solver, or a shared setting).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParamDoc {
    /// The name, as in files and on the command line.
    pub name: &'static str,
    /// Its unit (`-` when dimensionless).
    pub unit: &'static str,
    /// What it does.
    pub doc: &'static str,
}

/// One row of the registry.
#[derive(Debug, Clone, Copy)]
pub struct SolverEntry {
    /// The id.
    pub id: SolverId,
    /// The name in files and on the command line.
    pub name: &'static str,
    /// The contact model it solves (its cone and the criteria it stops on).
    pub model: ContactModel,
    /// One line on the method.
    pub summary: &'static str,
    /// The constructor.
    pub build: Constructor,
    /// Its own parameters' defaults, as a map (serialized from the parameter struct's
    /// `Default`, so they cannot drift from the code).
    pub defaults: fn() -> Map<String, Value>,
    /// Its own parameters, documented.
    pub params: &'static [ParamDoc],
}

/// The defaults of a parameter struct, as a map.
fn defaults_of<P: Default + Serialize>() -> Map<String, Value> {
    match serde_json::to_value(P::default()) {
        Ok(Value::Object(map)) => map,
        _ => Map::new(),
    }
}

const QP_PARAMS: &[ParamDoc] = &[ParamDoc {
    name: "qp_max_iter",
    unit: "iterations",
    doc: "interior-point iteration cap of each QP (clarabel)",
}];

const ADMM_PARAMS: &[ParamDoc] = &[
    ParamDoc {
        name: "rho",
        unit: "m/s per N·s (units of G)",
        doc: "initial ρ; absent (null): the spectral rule √(L m)(L/m)^rho_power",
    },
    ParamDoc {
        name: "rho_power",
        unit: "-",
        doc: "exponent p of the spectral rule",
    },
    ParamDoc {
        name: "rho_power_factor",
        unit: "-",
        doc: "ρ is multiplied or divided by (L/m)^rho_power_factor at an update",
    },
    ParamDoc {
        name: "ratio_primal_dual",
        unit: "-",
        doc: "imbalance of the scaled primal and dual residuals that triggers an update",
    },
    ParamDoc {
        name: "mu_prox",
        unit: "× L (relative)",
        doc: "proximal weight μ_prox = mu_prox · L, L the largest eigenvalue of G + R",
    },
    ParamDoc {
        name: "tau",
        unit: "-",
        doc: "penalty scaling, ρ̄ = τ ρ, in ]0, 1]",
    },
    ParamDoc {
        name: "power_iterations",
        unit: "iterations",
        doc: "power iterations estimating L",
    },
    ParamDoc {
        name: "rho_update",
        unit: "spectral | linear | osqp",
        doc: "how ρ follows the residuals: ×(L/m)^±rho_power_factor, ×linear_factor^±1, or ×√(r_p/r_d)",
    },
    ParamDoc {
        name: "linear_factor",
        unit: "-",
        doc: "factor of the linear ρ rule, > 1",
    },
    ParamDoc {
        name: "anderson_memory",
        unit: "iterates",
        doc: "memory of the safeguarded type-II Anderson acceleration, 0 (off) to 32",
    },
];

const RAISIM_PARAMS: &[ParamDoc] = &[
    ParamDoc {
        name: "alpha",
        unit: "-",
        doc: "initial relaxation α in ]0, 1]",
    },
    ParamDoc {
        name: "alpha_min",
        unit: "-",
        doc: "floor the relaxation decays to, in ]0, α]",
    },
    ParamDoc {
        name: "gamma",
        unit: "-",
        doc: "decay of α per sweep, in [0, 1]",
    },
    ParamDoc {
        name: "beta1",
        unit: "rad",
        doc: "initial angular step of the bracketing search",
    },
    ParamDoc {
        name: "beta2",
        unit: "-",
        doc: "step shrink factor when a step leaves the ellipse, in ]0, 1[",
    },
    ParamDoc {
        name: "beta3",
        unit: "-",
        doc: "step growth factor while the slope keeps its sign, > 1",
    },
    ParamDoc {
        name: "bisection_tol",
        unit: "rad",
        doc: "the bisection stops below this bracket width",
    },
    ParamDoc {
        name: "bisection_max_iter",
        unit: "iterations",
        doc: "cap on the bracketing and on the bisection, each",
    },
];

const NCP_PGS_PARAMS: &[ParamDoc] = &[
    ParamDoc {
        name: "block",
        unit: "diagonal|exact",
        doc: "per-contact solve: Alg. 5's diagonal step, or the contact's NCP with the full 3×3 block",
    },
    ParamDoc {
        name: "inner_max_iter",
        unit: "iterations",
        doc: "block=exact: cap on the inner fixed-point iterations per contact visit",
    },
    ParamDoc {
        name: "inner_tol",
        unit: "-",
        doc: "block=exact: inner loop stops at relative step ‖Δλ_i‖/‖λ_i‖ ≤ inner_tol",
    },
];

const NEWTON_PARAMS: &[ParamDoc] = &[ParamDoc {
    name: "alpha",
    unit: "-",
    doc: "compliance scale, R_soft = α diag(G + R), > 0",
}];

/// Every built-in solver, in the order of [`SolverId::ALL`] (design.md §4).
pub const REGISTRY: [SolverEntry; 12] = [
    SolverEntry {
        id: SolverId::LcpPgs,
        name: "lcp-pgs",
        model: ContactModel::Lcp,
        summary: "projected Gauss-Seidel on the 4-facet pyramid (Alg. 1)",
        build: lcp_pgs::build,
        defaults: defaults_of::<PgsParams>,
        params: &[],
    },
    SolverEntry {
        id: SolverId::LcpQp,
        name: "lcp-qp",
        model: ContactModel::Lcp,
        summary: "exact QP on the pyramid, interior point (clarabel)",
        build: lcp_qp::build,
        defaults: defaults_of::<SubproblemParams>,
        params: QP_PARAMS,
    },
    SolverEntry {
        id: SolverId::LcpStagproj,
        name: "lcp-stagproj",
        model: ContactModel::Lcp,
        summary: "staggered projections on the pyramid (Alg. 6)",
        build: lcp_stagproj::build,
        defaults: defaults_of::<SubproblemParams>,
        params: QP_PARAMS,
    },
    SolverEntry {
        id: SolverId::CcpPgs,
        name: "ccp-pgs",
        model: ContactModel::Ccp,
        summary: "per-contact projected Gauss-Seidel on the cone (Alg. 2)",
        build: ccp_pgs::build,
        defaults: defaults_of::<PgsParams>,
        params: &[],
    },
    SolverEntry {
        id: SolverId::CcpAdmm,
        name: "ccp-admm",
        model: ContactModel::Ccp,
        summary: "ADMM with adaptive spectral ρ (Alg. 3)",
        build: ccp_admm::build,
        defaults: defaults_of::<AdmmParams>,
        params: ADMM_PARAMS,
    },
    SolverEntry {
        id: SolverId::CcpNewton,
        name: "ccp-newton",
        model: ContactModel::Ccp,
        summary: "soft CCP, MuJoCo's primal Newton with line search",
        build: ccp_newton::build,
        defaults: defaults_of::<CcpNewtonParams>,
        params: NEWTON_PARAMS,
    },
    SolverEntry {
        id: SolverId::CcpIpm,
        name: "ccp-ipm",
        model: ContactModel::Ccp,
        summary: "interior point on the second-order cone program (clarabel)",
        build: ccp_ipm::build,
        defaults: defaults_of::<CcpIpmParams>,
        params: &[],
    },
    SolverEntry {
        id: SolverId::Raisim,
        name: "raisim",
        model: ContactModel::Raisim,
        summary: "RaiSim's per-contact bisection (Alg. 4)",
        build: raisim::build,
        defaults: defaults_of::<RaisimParams>,
        params: RAISIM_PARAMS,
    },
    SolverEntry {
        id: SolverId::RaisimCorrected,
        name: "raisim-corrected",
        model: ContactModel::Ncp,
        summary: "RaiSim's bisection with the de Saxcé correction",
        build: raisim_corrected::build,
        defaults: defaults_of::<RaisimParams>,
        params: RAISIM_PARAMS,
    },
    SolverEntry {
        id: SolverId::NcpPgs,
        name: "ncp-pgs",
        model: ContactModel::Ncp,
        summary: "projected Gauss-Seidel with horizontal projection (Alg. 5) or exact block solve",
        build: ncp_pgs::build,
        defaults: defaults_of::<NcpPgsParams>,
        params: NCP_PGS_PARAMS,
    },
    SolverEntry {
        id: SolverId::NcpStagproj,
        name: "ncp-stagproj",
        model: ContactModel::Ncp,
        summary: "staggered projections on the disk (Alg. 6)",
        build: ncp_stagproj::build,
        defaults: defaults_of::<SubproblemParams>,
        params: QP_PARAMS,
    },
    SolverEntry {
        id: SolverId::NcpAdmm,
        name: "ncp-admm",
        model: ContactModel::Ncp,
        summary: "ADMM with the de Saxcé correction and adaptive ρ (Pinocchio's)",
        build: ncp_admm::build,
        defaults: defaults_of::<AdmmParams>,
        params: ADMM_PARAMS,
    },
];

/// The settings every solver shares, documented (defaults: [`SolverSettings::default`]).
pub const SHARED_SETTINGS: [ParamDoc; 8] = [
    ParamDoc {
        name: "stop",
        unit: "relative|absolute",
        doc: "the criterion that stops the solver and judges a warm start",
    },
    ParamDoc {
        name: "eps_rel",
        unit: "-",
        doc: "tolerance of the relative criterion (docs/ruler.md)",
    },
    ParamDoc {
        name: "eps_abs",
        unit: "paper's mixed units",
        doc: "tolerance of the absolute criterion (needs stop=absolute)",
    },
    ParamDoc {
        name: "eps_step",
        unit: "-",
        doc: "stall threshold on the relative step ‖Δλ‖/‖λ‖",
    },
    ParamDoc {
        name: "max_iter",
        unit: "iterations",
        doc: "iteration cap",
    },
    ParamDoc {
        name: "max_time",
        unit: "s",
        doc: "wall-time cap (status max_time); null: none",
    },
    ParamDoc {
        name: "over_relaxation",
        unit: "-",
        doc: "over-relaxation in ]0, 2[ (eq. 22), where the method uses it",
    },
    ParamDoc {
        name: "record_history",
        unit: "bool",
        doc: "record the tested criterion at every iteration",
    },
];

/// The registry row of `id`.
pub fn entry(id: SolverId) -> &'static SolverEntry {
    // REGISTRY is in the order of SolverId::ALL (checked by a test), which is the
    // declaration order of the enum.
    &REGISTRY[id as usize]
}

/// The shared settings' defaults, as a map.
pub fn shared_defaults() -> Map<String, Value> {
    defaults_of::<SolverSettings>()
}

/// A plain-text listing of every solver: id, model, summary, parameters with defaults and
/// units, then the shared settings (what `contactbench solvers` prints).
pub fn listing() -> String {
    let mut out = String::from("Solvers (name: model, method):\n");
    for e in &REGISTRY {
        out.push_str(&format!(
            "\n{} [{}]: {}\n",
            e.name,
            model_name(e.model),
            e.summary
        ));
        let defaults = (e.defaults)();
        if e.params.is_empty() {
            out.push_str("    (no parameters of its own)\n");
        }
        for p in e.params {
            out.push_str(&param_line(p, defaults.get(p.name)));
        }
    }
    out.push_str("\nShared settings (every solver):\n");
    let shared = shared_defaults();
    for p in &SHARED_SETTINGS {
        out.push_str(&param_line(p, shared.get(p.name)));
    }
    out.push_str(
        "\nSyntax: NAME or NAME:key=value,key=value, e.g. ncp-admm:eps_rel=1e-8,rho=1e-3\n",
    );
    out
}

/// `    name = default [unit]  doc`.
fn param_line(p: &ParamDoc, default: Option<&Value>) -> String {
    let default = match default {
        Some(Value::String(s)) => s.clone(),
        Some(v) => v.to_string(),
        None => "-".to_string(),
    };
    format!("    {} = {default} [{}]  {}\n", p.name, p.unit, p.doc)
}

/// The model's short name.
fn model_name(model: ContactModel) -> &'static str {
    match model {
        ContactModel::Lcp => "LCP",
        ContactModel::Ccp => "CCP",
        ContactModel::Raisim => "RaiSim",
        ContactModel::Ncp => "NCP",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_follows_the_ids() {
        for (e, id) in REGISTRY.iter().zip(SolverId::ALL) {
            assert_eq!(e.id, id);
            assert_eq!(entry(id).name, e.name);
        }
    }

    #[test]
    fn documented_parameters_are_the_accepted_ones_and_models_match() {
        for e in &REGISTRY {
            let defaults = (e.defaults)();
            let mut documented: Vec<&str> = e.params.iter().map(|p| p.name).collect();
            let mut accepted: Vec<&str> = defaults.keys().map(String::as_str).collect();
            documented.sort_unstable();
            accepted.sort_unstable();
            assert_eq!(documented, accepted, "{}", e.name);
            // The defaults, given explicitly, build the solver; its model is the row's.
            let solver = (e.build)(SolverSettings::default(), &defaults)
                .unwrap_or_else(|err| panic!("{}: {err}", e.name));
            assert_eq!(solver.model(), e.model, "{}", e.name);
            assert_eq!(solver.name(), e.name);
        }
        let shared: Vec<&str> = SHARED_SETTINGS.iter().map(|p| p.name).collect();
        assert_eq!(shared, SolverSettings::FIELDS);
    }
}
