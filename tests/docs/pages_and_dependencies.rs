//! The docs and the dependencies: every `docs/….md` named in the code, the docs or the
//! Python package exists, as does every relative link of the Markdown pages; every page is
//! under 400 lines and speaks of the product, not of how it was developed (no issue
//! numbers, phases, branch names, sessions); the lock file holds no serde_yaml (deprecated
//! and archived upstream) nor the two mesh crates mesh-loader replaced; no source file runs
//! a program (Python or other) to fetch the robots.

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Files under `dir` (recursively) whose name ends in one of `exts`, skipping build and
/// virtual-environment folders and the robot cache.
fn files(dir: &Path, exts: &[&str], out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().to_string();
        if path.is_dir() {
            if !matches!(name.as_str(), "target" | ".venv" | "cache" | ".git")
                && !name.starts_with('.')
            {
                files(&path, exts, out);
            }
        } else if exts.iter().any(|e| name.ends_with(e)) {
            out.push(path);
        }
    }
}

/// Every `docs/<name>.md` (path characters only) in `text`.
fn docs_paths(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("docs/") {
        let tail = &rest[at..];
        let len = tail
            .find(|c: char| !(c.is_ascii_alphanumeric() || "/._-".contains(c)))
            .unwrap_or(tail.len());
        let candidate = tail[..len].trim_end_matches('.');
        // `docs/` as the end of a longer path (`python/docs/`, `shared/docs/`) is not ours.
        let preceded = rest[..at]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_ascii_alphanumeric() || "/_-.".contains(c));
        if candidate.ends_with(".md") && !preceded {
            found.push(candidate.to_string());
        }
        rest = &rest[at + 5..];
    }
    found
}

/// The relative targets of Markdown links `](target)` in `text`, without their anchor.
fn markdown_links(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("](") {
        let tail = &rest[at + 2..];
        if let Some(end) = tail.find(')') {
            let target = tail[..end].split('#').next().unwrap_or("").trim();
            if !target.is_empty()
                && !target.contains("://")
                && !target.starts_with("mailto:")
                && !target.contains(' ')
            {
                found.push(target.to_string());
            }
        }
        rest = &rest[at + 2..];
    }
    found
}

#[test]
fn every_cited_docs_page_and_markdown_link_exists() {
    let root = root();
    let mut sources = Vec::new();
    for dir in [
        "src",
        "tests",
        "benches",
        "user-solver",
        "python",
        "docs",
        "tools",
        ".ci",
    ] {
        files(
            &root.join(dir),
            &[".rs", ".md", ".py", ".pyi", ".sh", ".toml", "run"],
            &mut sources,
        );
    }
    sources.push(root.join("README.md"));
    sources.push(root.join("Cargo.toml"));
    let mut checked = 0;
    let mut missing = Vec::new();
    for file in &sources {
        let Ok(text) = std::fs::read_to_string(file) else {
            continue;
        };
        for cited in docs_paths(&text) {
            checked += 1;
            if !root.join(&cited).is_file() {
                missing.push(format!("{}: {cited}", file.display()));
            }
        }
        if file.extension().is_some_and(|e| e == "md") {
            let base = file.parent().expect("a folder");
            // The experiment pages under docs/paper/ (and docs/paper/collision/,
            // docs/paper/smoothing/, docs/paper/gradients/) are written by `contactbench paper --out docs/paper`
            // (`--paper collision|smoothing|gradients --out docs/paper/<paper>`); of their data files (figures, CSV) only those the
            // README shows are committed, the others are made again by the command. Links
            // from such a page to its own data files (no folder in the link) are not checked.
            let generated = base.parent().is_some_and(|p| {
                [
                    "docs/paper",
                    "docs/paper/collision",
                    "docs/paper/smoothing",
                    "docs/paper/gradients",
                ]
                .iter()
                .any(|generated| p.ends_with(generated))
            });
            for link in markdown_links(&text) {
                if generated && !link.contains('/') && !link.ends_with(".md") {
                    continue;
                }
                checked += 1;
                if !base.join(&link).exists() {
                    missing.push(format!("{}: ]({link})", file.display()));
                }
            }
        }
    }
    assert!(
        checked > 100,
        "only {checked} citations found: the scan is broken"
    );
    assert!(
        missing.is_empty(),
        "cited but missing:\n{}",
        missing.join("\n")
    );
    // The design page and the API page, which the README and the crate docs lead to.
    assert!(root.join("docs/design.md").is_file());
    assert!(root.join("docs/api.md").is_file());
}

#[test]
fn the_scan_finds_what_it_looks_for() {
    assert_eq!(
        docs_paths("see docs/design.md §5, `docs/ruler.md`. and python/docs/x.md"),
        ["docs/design.md", "docs/ruler.md"]
    );
    assert_eq!(
        markdown_links("[a](ruler.md#x) [b](https://x.org/y.md) [c](../README.md)"),
        ["ruler.md", "../README.md"]
    );
}

#[test]
fn no_deprecated_yaml_crate_nor_replaced_mesh_crates_in_the_lock_file() {
    let lock = std::fs::read_to_string(root().join("Cargo.lock")).expect("Cargo.lock");
    for gone in ["serde_yaml", "serde_yml", "stl_io", "tobj"] {
        assert!(
            !lock.contains(&format!("name = \"{gone}\"\n")),
            "{gone} is in Cargo.lock"
        );
    }
    for kept in [
        "serde-saphyr",
        "serde_path_to_error",
        "ureq",
        "sha2",
        "mesh-loader",
    ] {
        assert!(
            lock.contains(&format!("name = \"{kept}\"\n")),
            "{kept} not in Cargo.lock"
        );
    }
}

#[test]
fn the_library_and_the_command_line_run_no_program() {
    let mut sources = Vec::new();
    files(&root().join("src"), &[".rs"], &mut sources);
    assert!(sources.len() > 50);
    for file in sources {
        let text = std::fs::read_to_string(&file).expect("utf8 source");
        for needle in [
            "process::Command",
            "Command::new(",
            "\"pip\"",
            "python3 -m pip",
        ] {
            assert!(
                !text.contains(needle),
                "{} contains {needle}",
                file.display()
            );
        }
    }
}

/// The documentation pages: every Markdown file under `docs/`, the README and the Python
/// package's README (the changelog is history by design and is not one of them).
fn doc_pages(root: &Path) -> Vec<PathBuf> {
    let mut pages = Vec::new();
    files(&root.join("docs"), &[".md"], &mut pages);
    pages.push(root.join("README.md"));
    pages.push(root.join("python/README.md"));
    pages.sort();
    pages
}

/// A page is read in one screenful of sections, not scrolled through: split it above this.
const MAX_PAGE_LINES: usize = 400;

/// Pages that still use words of the development process: none. A page listed here and
/// found clean fails the test, so the list can only shrink.
const PAGES_STILL_USING_PROCESS_WORDS: &[&str] = &[];

/// Words of how the product was developed, which mean nothing to its reader: (what it
/// is, pattern). Each pattern was checked against every page for false positives (e.g.
/// "branch-induced sparsity", "broad phase", "issues #1517" of another project).
fn process_word_rules() -> Vec<(&'static str, regex::Regex)> {
    [
        ("an issue number", r"(?i)\bissues? \d+"),
        (
            "a phase",
            r"(?i)\bphases? \d|\b(?:this|that|next|later|each|every|previous) phase\b",
        ),
        ("the brief", r"(?i)\bthe brief\b"),
        ("a session", r"(?i)\bsessions?\b"),
        ("a helper", r"(?i)\bhelpers?\b"),
        ("an engineer", r"(?i)\bengineers?\b"),
        (
            "a branch",
            concat!(
                r"(?i)\bbranch(?:es)? `?(?:crba|forces|split|socp|dyn|nullspace|ruler|shell|",
                r"reliab|fclib|python|paper|api\d*|admm\d*|ltdl\d*|nulln\d*|speed\d*|solvers?\d*)\b",
                r"|`?\b(?:crba|forces|split|socp|dyn|nullspace|ruler|shell|reliab|fclib|api\d*|",
                r"admm\d*|ltdl\d*|nulln\d*|speed\d*)`? branch(?:[^\w-]|$)",
                r"|\b(?:admm5|ltdl2|nulln2?|speed[23]|api12|solvers[234]|solv1)\b",
                r"|\b(?:this|that|the|a|on|merged|trial) branch(?:[^\w-]|$)",
            ),
        ),
        (
            "a commit of main",
            r"(?i)\bmain (?:at|before|after) `?[0-9a-f]{7}|\b(?:today's|merged) main\b",
        ),
        ("an audit", r"(?i)\b(?:this|the) audit\b"),
    ]
    .into_iter()
    .map(|(what, pattern)| match regex::Regex::new(pattern) {
        Ok(rule) => (what, rule),
        Err(err) => panic!("{what}: {err}"),
    })
    .collect()
}

/// `#N` (one to three digits) that does not name another project's issue: `#12` alone or
/// `contactbench#12` is ours; `MuJoCo issue #123`, `google-deepmind/mujoco#123` or a line
/// linking to another project's issue or pull request are citations.
fn own_issue_references(line: &str) -> Vec<String> {
    let Ok(number) = regex::Regex::new(r"#\d{1,3}\b") else {
        panic!("the #N pattern");
    };
    let Ok(cited) = regex::Regex::new(
        r"(?i)(?:\b([a-z][\w.-]*) (?:issues?|prs?|pull requests?) |\b([a-z][\w.-]*)/[\w.-]+)$",
    ) else {
        panic!("the citation pattern");
    };
    let links_elsewhere = line.contains("://")
        && (line.contains("/issues/") || line.contains("/pull/"))
        && !line.to_lowercase().contains("/contactbench/");
    number
        .find_iter(line)
        .filter(|m| {
            let before = &line[..m.start()];
            let project = cited
                .captures(before)
                .and_then(|c| c.get(1).or_else(|| c.get(2)))
                .map(|p| p.as_str().to_lowercase());
            let another_project = project.is_some_and(|p| p != "contactbench");
            !(another_project || links_elsewhere)
        })
        .map(|m| m.as_str().to_string())
        .collect()
}

/// Every process word of `text`, as `line: what 'match'`.
fn process_words(text: &str, rules: &[(&str, regex::Regex)]) -> Vec<String> {
    let mut found = Vec::new();
    for (n, line) in text.lines().enumerate() {
        for (what, rule) in rules {
            for m in rule.find_iter(line) {
                found.push(format!("{}: {what} '{}'", n + 1, m.as_str()));
            }
        }
        for reference in own_issue_references(line) {
            found.push(format!("{}: an issue reference '{reference}'", n + 1));
        }
    }
    found
}

#[test]
fn every_doc_page_is_under_400_lines() {
    let root = root();
    let pages = doc_pages(&root);
    assert!(pages.len() > 10, "only {} pages found", pages.len());
    let long: Vec<String> = pages
        .iter()
        .filter_map(|page| {
            let lines = std::fs::read_to_string(page).ok()?.lines().count();
            (lines >= MAX_PAGE_LINES).then(|| format!("{}: {lines} lines", page.display()))
        })
        .collect();
    assert!(
        long.is_empty(),
        "split these pages (at most {} lines):\n{}",
        MAX_PAGE_LINES - 1,
        long.join("\n")
    );
}

#[test]
fn doc_pages_speak_of_the_product_not_of_its_development() {
    let root = root();
    let rules = process_word_rules();
    let mut offending = Vec::new();
    let mut listed_but_clean = Vec::new();
    for page in doc_pages(&root) {
        let Ok(text) = std::fs::read_to_string(&page) else {
            continue;
        };
        let name = page
            .strip_prefix(&root)
            .map(|p| p.to_string_lossy().replace('\\', "/"))
            .unwrap_or_default();
        let found = process_words(&text, &rules);
        let listed = PAGES_STILL_USING_PROCESS_WORDS.contains(&name.as_str());
        match (found.is_empty(), listed) {
            (false, false) => offending.extend(found.iter().map(|f| format!("{name}:{f}"))),
            (true, true) => listed_but_clean.push(name),
            _ => {}
        }
    }
    assert!(
        offending.is_empty(),
        "words of the development process in the docs (say what the product does, and \
         leave how it was made to the git history and CHANGELOG.md):\n{}",
        offending.join("\n")
    );
    assert!(
        listed_but_clean.is_empty(),
        "these pages no longer use process words: remove them from \
         PAGES_STILL_USING_PROCESS_WORDS: {listed_but_clean:?}"
    );
}

#[test]
fn the_process_word_rules_catch_what_they_are_for_and_nothing_else() {
    let rules = process_word_rules();
    for caught in [
        "as issue 12 asks",
        "Issue 8.5's collision outcomes",
        "Phase 6, merged",
        "not done in this phase",
        "what the brief proposed",
        "one session, the binaries alternated",
        "the before-stop hook's helper",
        "another engineer's this phase",
        "branch `crba`: the CRBA",
        "the `forces` branch changes",
        "from branch admm5",
        "main at `09397b7`",
        "on today's main",
        "changed in this audit",
        "see #12 for the plan",
        "contactbench#7",
    ] {
        assert!(
            !process_words(caught, &rules).is_empty(),
            "not caught: {caught}"
        );
    }
    for legitimate in [
        "LTDL factorization with branch-induced sparsity (Featherstone Table 6.3)",
        "the broad phase and the narrow phase",
        "a branch-free pass over four lanes",
        "CRBA into the `LᵀDL` factor (`MassLtdl`)",
        "see mujoco issues #1517 and MuJoCo issue #123",
        "google-deepmind/mujoco#123",
        "[#42](https://github.com/google-deepmind/mujoco/issues/42)",
        "measured on 2026-11-26 at commit 09397b7",
        "the loop functions of `solvers::support`",
        "the internal-force split's SOCP",
        "## Fig. 12 and Tab. III",
    ] {
        let found = process_words(legitimate, &rules);
        assert!(
            found.is_empty(),
            "false positive on {legitimate:?}: {found:?}"
        );
    }
}
