//! The crate's own `contactbench` (`src/main.rs`, `contactbench::cli::main_with`) knows
//! the user's solver in the commands, beside the built-in ones.

use std::path::Path;
use std::process::Command;

fn own_contactbench(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_user-solver"))
        .args(args)
        .output()
        .expect("the binary runs")
}

fn problem_file() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/data/contactbench/sliding_cube_4c.json")
        .display()
        .to_string()
}

#[test]
fn the_users_solver_is_a_row_of_solve_all() {
    let out = own_contactbench(&["solve", &problem_file(), "--all"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let row = text
        .lines()
        .find(|l| l.starts_with(user_solver::NAME))
        .unwrap_or_else(|| panic!("no {} row in:\n{text}", user_solver::NAME));
    assert!(row.contains("converged"), "{row}");
    assert!(text.lines().any(|l| l.starts_with("ncp-admm ")), "{text}");
}

#[test]
fn the_users_solver_takes_shared_settings_and_refuses_others_with_a_hint() {
    let good = own_contactbench(&[
        "solve",
        &problem_file(),
        "--solver",
        &format!("{}:eps_rel=1e-4", user_solver::NAME),
        "--json",
    ]);
    assert!(
        good.status.success(),
        "{}",
        String::from_utf8_lossy(&good.stderr)
    );
    let bad = own_contactbench(&[
        "solve",
        &problem_file(),
        "--solver",
        &format!("{}:eps_rell=1e-4", user_solver::NAME),
    ]);
    assert_eq!(bad.status.code(), Some(2));
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(err.contains("did you mean 'eps_rel'?"), "{err}");
    let misspelt = own_contactbench(&["solve", &problem_file(), "--solver", "jacobi-npc"]);
    assert_eq!(misspelt.status.code(), Some(2));
    let err = String::from_utf8_lossy(&misspelt.stderr);
    assert!(err.contains("did you mean 'jacobi-ncp'?"), "{err}");
}
