//! Tables: numbers printed as a reader reads them, zero as `0` and never a negative zero.

use contactbench::report::tables::{fixed, scientific, signed_scientific, summary_table};
use contactbench::simulation::recorder::RunSummary;

fn summary(position: [f64; 3], energy_change: f64, criterion: f64) -> RunSummary {
    serde_json::from_value(serde_json::json!({
        "scenario": "cube_slide",
        "solver": "ncp-admm",
        "outcome": "completed",
        "failure": null,
        "dt": 1e-3,
        "steps": 200,
        "final_time": 0.2,
        "final_q": [],
        "final_base_position": position,
        "initial_energy": 1.0,
        "final_energy": 1.0 + energy_change,
        "max_ncp_criterion": criterion,
        "max_signorini_violation": 0.0,
        "max_penetration_velocity": 0.0,
        "unconverged_steps": 0,
        "iterations": {"median": 3.0, "mean": 3.0, "max": 4.0},
        "solve_time": {"median": 2e-6, "mean": 2e-6, "max": 3e-6},
        "step_time": {"median": 1e-5, "mean": 1e-5, "max": 2e-5},
        "max_contacts": 4
    }))
    .unwrap()
}

#[test]
fn a_value_that_rounds_to_zero_prints_as_zero_without_sign() {
    assert_eq!(fixed(-0.0, 4), "0");
    assert_eq!(fixed(-3e-7, 4), "0");
    assert_eq!(fixed(4e-5, 4), "0");
    assert_eq!(fixed(-0.00012, 4), "-0.0001");
    assert_eq!(fixed(0.25, 4), "0.2500");
    assert_eq!(scientific(0.0, 2), "0");
    assert_eq!(scientific(-0.0, 2), "0");
    assert_eq!(scientific(1.234e-7, 2), "1.23e-7");
    assert_eq!(signed_scientific(-0.0, 3), "0");
    assert_eq!(signed_scientific(2.5e-3, 3), "+2.500e-3");
    assert_eq!(fixed(f64::NAN, 2), "NaN");
}

#[test]
fn the_run_summary_table_has_no_negative_zero_or_zero_mantissa() {
    let table = summary_table(&[summary([-1e-9, -0.0, 0.1], 0.0, 0.0)]);
    assert!(!table.contains("-0.0"), "{table}");
    assert!(!table.contains("0.00e0"), "{table}");
    assert!(!table.contains("e0 "), "{table}");
    assert!(table.contains("| (0, 0, 0.1000) | 0 | 0 |"), "{table}");
}
