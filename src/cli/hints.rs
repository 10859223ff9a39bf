//! "Did you mean": the nearest solver id to an unknown one, the nearest parameter or
//! shared setting to an unknown one (with the shared settings every solver takes), read
//! from an error's message, so that every command and every way of naming a solver (a
//! flag, a scenario file, a problem file) gets the same hint.

use contactbench::solvers::{SolverId, SolverSettings};

/// The hint for an error message, if it names an unknown solver or parameter; `extra`
/// are the names of the user's own solvers.
pub fn hint(message: &str, extra: &[String]) -> Option<String> {
    unknown_solver_hint(message, extra).or_else(|| unknown_parameter_hint(message))
}

/// `unknown solver 'X'`: the nearest ids.
fn unknown_solver_hint(message: &str, extra: &[String]) -> Option<String> {
    let name = between(message, "unknown solver '", "'")?;
    let ids = SolverId::ALL
        .iter()
        .map(|id| id.as_str().to_string())
        .chain(extra.iter().cloned());
    let near = nearest(name, ids);
    (!near.is_empty()).then(|| format!("did you mean {}?", alternatives(&near)))
}

/// serde's `unknown field `X`, expected one of `a`, `b``: the nearest expected name; for a
/// solver's parameters (the message names `solver ID`) also the nearest shared setting,
/// and the shared settings.
fn unknown_parameter_hint(message: &str) -> Option<String> {
    let (context, rest) = message.split_once("unknown field `")?;
    let of_a_solver = context.contains("solver ");
    let (name, expected) = rest.split_once('`')?;
    let own: Vec<String> = expected
        .split(['\n', ';'])
        .next()
        .unwrap_or("")
        .split('`')
        .skip(1)
        .step_by(2)
        .map(String::from)
        .collect();
    if !of_a_solver {
        let near = nearest(name, own.into_iter());
        return (!near.is_empty()).then(|| format!("did you mean {}?", alternatives(&near)));
    }
    let shared: Vec<String> = SolverSettings::FIELDS
        .iter()
        .map(|f| f.to_string())
        .collect();
    let near = nearest(name, own.iter().chain(&shared).cloned());
    let guess = if near.is_empty() {
        String::new()
    } else {
        format!("did you mean {}? ", alternatives(&near))
    };
    Some(format!(
        "{guess}Every solver also takes the shared settings: {}",
        shared.join(", ")
    ))
}

/// The text between `start` and the next `end` after it.
fn between<'a>(text: &'a str, start: &str, end: &str) -> Option<&'a str> {
    let (_, rest) = text.split_once(start)?;
    rest.split_once(end).map(|(inside, _)| inside)
}

/// The candidates that start with `name` (or that `name` starts with), else those at
/// the smallest edit distance when it is at most a third of the name's length (at
/// least 2).
fn nearest(name: &str, names: impl Iterator<Item = String>) -> Vec<String> {
    let mut candidates: Vec<String> = Vec::new();
    for c in names {
        if c != name && !candidates.contains(&c) {
            candidates.push(c);
        }
    }
    let prefixed: Vec<String> = candidates
        .iter()
        .filter(|c| !name.is_empty() && (c.starts_with(name) || name.starts_with(c.as_str())))
        .cloned()
        .collect();
    if !prefixed.is_empty() {
        return prefixed;
    }
    let distances: Vec<usize> = candidates.iter().map(|c| edit_distance(name, c)).collect();
    let Some(&best) = distances.iter().min() else {
        return Vec::new();
    };
    if best > (name.chars().count() / 3).max(2) {
        return Vec::new();
    }
    candidates
        .into_iter()
        .zip(distances)
        .filter(|(_, d)| *d == best)
        .map(|(c, _)| c)
        .collect()
}

/// `'a'`, `'a' or 'b'`, `'a', 'b' or 'c'`.
fn alternatives(names: &[String]) -> String {
    let quoted: Vec<String> = names.iter().map(|n| format!("'{n}'")).collect();
    match quoted.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

/// Levenshtein distance (insertions, deletions and substitutions), by characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (diagonal + usize::from(ca != cb))
                .min(above + 1)
                .min(row[j] + 1);
            diagonal = above;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_misspelt_solver_id_gets_the_nearest_id() {
        let h = hint("unknown solver 'ncp-admn' (known: ...)", &[]).expect("a hint");
        assert_eq!(h, "did you mean 'ncp-admm'?");
        let mine = hint("unknown solver 'jacobbi'", &["jacobi".into()]).expect("a hint");
        assert_eq!(mine, "did you mean 'jacobi'?");
        assert_eq!(hint("unknown solver 'zzzzzzzz'", &[]), None);
    }

    #[test]
    fn an_unknown_parameter_gets_the_nearest_name_and_the_shared_settings() {
        let message = "solver ncp-admm: unknown field `eps`, expected one of `rho`, `tau`";
        let h = hint(message, &[]).expect("a hint");
        assert!(
            h.starts_with("did you mean 'eps_rel', 'eps_abs' or 'eps_step'?"),
            "{h}"
        );
        assert!(h.contains("shared settings: stop, eps_rel"), "{h}");
        let h = hint("solver ncp-admm: unknown field `rhoo`, expected `rho`", &[]).expect("a hint");
        assert!(h.starts_with("did you mean 'rho'?"), "{h}");
    }

    #[test]
    fn an_unknown_scenario_field_gets_the_nearest_field_and_no_solver_settings() {
        let message = "cube_slide.yaml:19: simulation.dtt: unknown field `dtt`, expected one of `dt`, `duration`";
        assert_eq!(hint(message, &[]).as_deref(), Some("did you mean 'dt'?"));
        let far = "simulation.zzzzzz: unknown field `zzzzzz`, expected one of `dt`, `duration`";
        assert_eq!(hint(far, &[]), None);
    }

    #[test]
    fn edit_distance_counts_single_character_edits() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("ncp-admm", "ncp-admm"), 0);
    }
}
