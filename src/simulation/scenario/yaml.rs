//! Reading a scenario's YAML: straight into the types, or as a tree changed by `--set`
//! overrides first; and the locator that finds the line of a field path (`world.bodies[1].mass`)
//! in the text, for errors found after parsing. serde-saphyr's `Spanned<T>` would carry
//! each value's line, but it would wrap every field of the public types and is lost in
//! the `--set` tree, so the line is found in the text instead.

use std::path::Path;

use serde_json::{Map, Value};

use super::{Scenario, ScenarioError};
use crate::model::text::{parse_yaml, YamlFailure};

/// Budget of the YAML parser: nesting depth and size of a scenario (a scenario nests
/// about 5 levels and has a few hundred nodes).
fn yaml_options() -> serde_saphyr::Options {
    serde_saphyr::options! {
        with_snippet: false,
        budget: serde_saphyr::budget! {
            max_depth: 32,
            max_nodes: 1_000_000,
        },
    }
}

/// `file:line:column: field: message` of a parser failure.
fn parse_error(file: &Path, failure: YamlFailure) -> ScenarioError {
    ScenarioError::Parse {
        file: file.to_path_buf(),
        line: failure.line,
        column: failure.column,
        field: failure.field,
        message: failure.message,
    }
}

/// Deserializes the scenario straight from the text (exact line and column).
pub(super) fn parse_typed(text: &str, file: &Path) -> Result<Scenario, ScenarioError> {
    parse_yaml(text, yaml_options()).map_err(|f| parse_error(file, f))
}

/// The document as a tree, for `--set` overrides and to refuse non-finite numbers: read
/// straight into the types, `.nan`, `.inf` and `-.inf` become an `f64`, while read as a
/// tree they are refused with their line, column and field (no number of a scenario may
/// be non-finite).
pub(super) fn parse_tree(text: &str, file: &Path) -> Result<Value, ScenarioError> {
    let mut field = None;
    serde_saphyr::with_deserializer_from_str_with_options(text, yaml_options(), |de| {
        serde_path_to_error::deserialize(de).map_err(|e| {
            field = Some(e.path().to_string());
            e.into_inner()
        })
    })
    .map_err(|error| {
        let mut failure = YamlFailure::new(field.take(), &error);
        if let serde_saphyr::Error::NonFiniteFloat { value, .. } = &error {
            failure.message = format!("{value}: every number of a scenario must be finite");
        }
        parse_error(file, failure)
    })
}

/// Deserializes the overridden tree; an error names the field and the line where it is
/// written in the file (or says that it came from an override).
pub(super) fn from_tree(
    value: Value,
    text: &str,
    file: &Path,
    overrides: &[String],
) -> Result<Scenario, ScenarioError> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let field = e.path().to_string();
        let set = overrides.iter().find(|a| {
            a.split_once('=')
                .is_some_and(|(p, _)| same_field(p, &field))
        });
        let message = match set {
            Some(a) => format!("{} (from --set {a})", e.inner()),
            None => e.inner().to_string(),
        };
        ScenarioError::Invalid {
            file: file.to_path_buf(),
            line: locate(text, &field),
            field,
            message,
        }
    })
}

/// Whether an override path (`world.bodies.0.mass`) names `field` (`world.bodies[0].mass`).
fn same_field(path: &str, field: &str) -> bool {
    path_steps(path.trim()) == path_steps(field)
}

/// One step of a field path: a key or a list index.
#[derive(Debug, PartialEq)]
enum PathStep<'a> {
    Key(&'a str),
    Index(usize),
}

/// Splits `world.bodies[0].mass` (or `world.bodies.0.mass`) into steps.
fn path_steps(path: &str) -> Vec<PathStep<'_>> {
    let mut steps = Vec::new();
    for part in path.split('.').filter(|p| !p.is_empty()) {
        let (key, mut rest) = match part.find('[') {
            Some(k) => (&part[..k], &part[k..]),
            None => (part, ""),
        };
        if !key.is_empty() {
            match key.parse::<usize>() {
                Ok(i) => steps.push(PathStep::Index(i)),
                Err(_) => steps.push(PathStep::Key(key)),
            }
        }
        while let Some(open) = rest.find('[') {
            let after = &rest[open + 1..];
            let Some(close) = after.find(']') else {
                break;
            };
            if let Ok(i) = after[..close].parse() {
                steps.push(PathStep::Index(i));
            }
            rest = &after[close + 1..];
        }
    }
    steps
}

/// The 1-based line of `field` in a block-style YAML text: each key is searched below the
/// previous one, inside its block; a list index counts the `-` items of the block. Falls
/// back to the closest enclosing field found (line 1 if none).
pub fn locate(text: &str, field: &str) -> usize {
    let lines: Vec<&str> = text.lines().collect();
    let indent = |l: &str| l.len() - l.trim_start().len();
    let mut found = 0usize;
    let mut block_indent: Option<usize> = None;
    for step in path_steps(field) {
        let start = if block_indent.is_some() { found + 1 } else { 0 };
        let in_block = |l: &str| match block_indent {
            Some(b) => l.trim().is_empty() || l.trim_start().starts_with('#') || indent(l) > b,
            None => true,
        };
        let hit = match step {
            PathStep::Key(key) => (start..lines.len())
                .take_while(|&k| in_block(lines[k]))
                .find(|&k| has_key(lines[k], key))
                .map(|k| (k, key_indent(lines[k], key))),
            PathStep::Index(i) => (start..lines.len())
                .take_while(|&k| in_block(lines[k]))
                .filter(|&k| lines[k].trim_start().starts_with("- "))
                .nth(i)
                .map(|k| (k, indent(lines[k]))),
        };
        match hit {
            Some((k, col)) => {
                found = k;
                block_indent = Some(col);
            }
            None => break,
        }
    }
    found + 1
}

/// True if `line` holds `key:` as a mapping key (block or flow style).
fn has_key(line: &str, key: &str) -> bool {
    let pattern = format!("{key}:");
    line.match_indices(&pattern).any(|(k, _)| {
        line[..k]
            .chars()
            .last()
            .is_none_or(|c| c == ' ' || c == '{' || c == ',' || c == '-')
    })
}

/// Column of `key:` in `line` (its indentation as a block key).
fn key_indent(line: &str, key: &str) -> usize {
    line.find(&format!("{key}:")).unwrap_or(0)
}

/// Applies `path=value` to the document tree; the value is read as YAML (`1e-3`,
/// `[1, 0, 0]`). Missing keys along the path are created
/// (`initial_state.joint_offsets.FL_KFE=0.2`).
pub(super) fn apply_override(root: &mut Value, assignment: &str) -> Result<(), ScenarioError> {
    let fail = |message: String| ScenarioError::Override {
        assignment: format!("--set {assignment}"),
        message,
    };
    let (path, value) = assignment
        .split_once('=')
        .ok_or_else(|| fail("expected path=value".into()))?;
    let new_value: Value =
        serde_saphyr::from_str_with_options(value, yaml_options()).map_err(|e| match e {
            serde_saphyr::Error::NonFiniteFloat { value, .. } => fail(format!(
                "{value}: every number of a scenario must be finite"
            )),
            other => fail(format!("value: {other}")),
        })?;
    let mut node = root;
    for step in path_steps(path.trim()) {
        if node.is_null() && matches!(step, PathStep::Key(_)) {
            *node = Value::Object(Map::new());
        }
        node = match step {
            PathStep::Key(key) => match node {
                Value::Object(map) => map.entry(key.to_string()).or_insert(Value::Null),
                _ => return Err(fail(format!("'{key}' is not inside a mapping"))),
            },
            PathStep::Index(i) => match node {
                Value::Array(seq) => seq
                    .get_mut(i)
                    .ok_or_else(|| fail(format!("index {i} is out of range")))?,
                _ => return Err(fail(format!("[{i}] is not inside a list"))),
            },
        };
    }
    *node = new_value;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "name: t\nworld:\n  bodies:\n    - name: a\n      mass: 1\n    - name: b\n      mass: 2\nsimulation:\n  dt: 1e-3\n";

    #[test]
    fn locate_follows_blocks_and_list_items() {
        assert_eq!(locate(TEXT, "simulation.dt"), 9);
        assert_eq!(locate(TEXT, "world.bodies[1].mass"), 7);
        assert_eq!(locate(TEXT, "world.bodies[0].mass"), 5);
        assert_eq!(locate(TEXT, "world.nothing"), 2);
    }

    #[test]
    fn path_steps_accept_both_index_styles() {
        assert_eq!(
            path_steps("a.b[2].c"),
            vec![
                PathStep::Key("a"),
                PathStep::Key("b"),
                PathStep::Index(2),
                PathStep::Key("c")
            ]
        );
        assert_eq!(
            path_steps("a.2"),
            vec![PathStep::Key("a"), PathStep::Index(2)]
        );
        // Found by tests/input/fuzz.rs: a key made of brackets (`]]]`, `a[`, `[]`).
        for odd in ["]]]", "a[", "[]", "a[1", "]a[2]", "[[[0]"] {
            let _ = path_steps(odd);
        }
        assert_eq!(
            path_steps("]a[2]"),
            vec![PathStep::Key("]a"), PathStep::Index(2)]
        );
    }
}
