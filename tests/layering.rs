//! The crate's layering, read from the paths written in `src/` (docs/design.md §9): a
//! module names only modules of lower layers, and the files of one module do not name
//! each other in a cycle.
//!
//! Every path written in code (`use` lines and paths in expressions starting with
//! `crate::`, `super::`, `self::`, or `contactbench::` in the command line's files) is
//! resolved to the module it names; comments, doc comments, string and char literals are
//! skipped (a doc link may point up). A path through a `mod.rs` re-export
//! (`super::StepMetrics`) counts as a path to the file that defines it. Code inside a
//! file's `mod tests { … }` counts as the file's. `tools/layers.py` prints the same graph.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

/// The top modules, lowest first; a module may name only modules before it.
const LAYERS: [&str; 13] = [
    "output",
    "model",
    "dynamics",
    "collision",
    "problem",
    "metrics",
    "solvers",
    "derivatives",
    "simulation",
    "report",
    "corpus",
    "paper",
    "cli",
];
/// The library's name, as the command line's files write it.
const LIBRARY: &str = "contactbench";

/// The library or the command line (`main.rs` and `cli/`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Crate {
    Lib,
    Bin,
}

type ModPath = Vec<String>;
/// `(from, to)` → the places (`file:line`) that name `to` from `from`.
type Edges = BTreeMap<(String, String), Vec<String>>;

/// One `.rs` file of `src/`.
struct Source {
    /// Relative to `src/`, with `/`.
    file: String,
    text: String,
}

impl Source {
    /// `simulation/scenario/check.rs` → (Lib, [simulation, scenario, check]).
    fn module(&self) -> (Crate, ModPath) {
        let stem = self.file.strip_suffix(".rs").unwrap_or(&self.file);
        let mut parts: ModPath = stem.split('/').map(String::from).collect();
        if matches!(
            parts.last().map(String::as_str),
            Some("mod" | "lib" | "main")
        ) {
            parts.pop();
        }
        let binary = self.file == "main.rs" || parts.first().is_some_and(|p| p == "cli");
        (if binary { Crate::Bin } else { Crate::Lib }, parts)
    }

    fn is_module_root(&self) -> bool {
        self.file == "lib.rs" || self.file == "mod.rs" || self.file.ends_with("/mod.rs")
    }
}

/// Every `.rs` file under `dir`, sorted by path.
fn read_sources(dir: &Path) -> Vec<Source> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<Source>) {
        let mut entries: Vec<_> = fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.expect("directory entry").path())
            .collect();
        entries.sort();
        for path in entries {
            if path.is_dir() {
                walk(root, &path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let rel = path.strip_prefix(root).expect("under src");
                let file = rel
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect::<Vec<_>>()
                    .join("/");
                let text =
                    fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                out.push(Source { file, text });
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out
}

fn sources(files: &[(&str, &str)]) -> Vec<Source> {
    files
        .iter()
        .map(|(file, text)| Source {
            file: file.to_string(),
            text: text.to_string(),
        })
        .collect()
}

fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80
}

/// The word (`\w+`) starting at `i`, if any.
fn word_at(code: &[u8], i: usize) -> Option<(String, usize)> {
    let end = (i..code.len())
        .find(|&j| !is_word(code[j]))
        .unwrap_or(code.len());
    (end > i).then(|| (String::from_utf8_lossy(&code[i..end]).into_owned(), end))
}

/// The code without comments, string and char literals (line breaks kept).
fn strip(code: &[u8]) -> Vec<u8> {
    let (n, mut i) = (code.len(), 0);
    let mut out = Vec::with_capacity(n);
    let newlines = |a: usize, b: usize| code[a..b.min(n)].iter().filter(|&&c| c == b'\n').count();
    while i < n {
        let word = i > 0 && is_word(code[i - 1]);
        let rest = &code[i..];
        if rest.starts_with(b"//") {
            i = (i..n).find(|&j| code[j] == b'\n').unwrap_or(n);
        } else if rest.starts_with(b"/*") {
            let (mut depth, start) = (1, i);
            i += 2;
            while i < n && depth > 0 {
                if code[i..].starts_with(b"/*") {
                    depth += 1;
                    i += 2;
                } else if code[i..].starts_with(b"*/") {
                    depth -= 1;
                    i += 2;
                } else {
                    i += 1;
                }
            }
            out.resize(out.len() + newlines(start, i), b'\n');
        } else if let Some(end) = (!word).then(|| raw_string_end(code, i)).flatten() {
            out.resize(out.len() + newlines(i, end), b'\n');
            out.extend_from_slice(b"\"\"");
            i = end;
        } else if code[i] == b'"' || (!word && rest.starts_with(b"b\"")) {
            let mut j = i + if code[i] == b'b' { 2 } else { 1 };
            while j < n && code[j] != b'"' {
                j += if code[j] == b'\\' { 2 } else { 1 };
            }
            out.resize(out.len() + newlines(i, j), b'\n');
            out.extend_from_slice(b"\"\"");
            i = j + 1;
        } else if let Some(end) = (!word).then(|| char_literal_end(code, i)).flatten() {
            out.extend_from_slice(b"' '");
            i = end;
        } else {
            out.push(code[i]);
            i += 1;
        }
    }
    out
}

/// The end of a raw string `b?r#*"…"#*` starting at `i`.
fn raw_string_end(code: &[u8], i: usize) -> Option<usize> {
    let mut j = i + usize::from(code.get(i) == Some(&b'b'));
    if code.get(j) != Some(&b'r') {
        return None;
    }
    j += 1;
    let hashes = code[j..].iter().take_while(|&&c| c == b'#').count();
    j += hashes;
    if code.get(j) != Some(&b'"') {
        return None;
    }
    let mut close = vec![b'"'];
    close.resize(1 + hashes, b'#');
    Some(
        (j + 1..code.len())
            .find(|&k| code[k..].starts_with(&close))
            .map_or(code.len(), |k| k + close.len()),
    )
}

/// The end of a char literal `b?'x'`, `'\n'`, `'\u{…}'` starting at `i` (not a lifetime).
fn char_literal_end(code: &[u8], i: usize) -> Option<usize> {
    let mut j = i + usize::from(code.get(i) == Some(&b'b'));
    if code.get(j) != Some(&b'\'') {
        return None;
    }
    j += 1;
    match *code.get(j)? {
        b'\\' => {
            j += 2;
            while j < code.len() && code[j] != b'\'' {
                j += 1;
            }
        }
        b'\'' => return None,
        lead => j += utf8_len(lead),
    }
    (code.get(j) == Some(&b'\'')).then_some(j + 1)
}

fn utf8_len(lead: u8) -> usize {
    match lead {
        0xF0..=0xFF => 4,
        0xE0..=0xEF => 3,
        0xC0..=0xDF => 2,
        _ => 1,
    }
}

/// A path written in code: its segments, its line and the inline modules around it.
struct Found {
    segments: Vec<String>,
    line: usize,
    inner: Vec<String>,
}

/// Every path starting with `crate`, `super`, `self` or the library's name, groups
/// expanded to their items' first segment.
fn paths_in(code: &[u8]) -> Vec<Found> {
    let (mut found, mut scopes, mut depth) = (Vec::new(), Vec::<(String, i64)>::new(), 0i64);
    let (mut pos, mut line, mut counted) = (0, 1, 0);
    while pos < code.len() {
        let boundary = pos == 0 || !is_word(code[pos - 1]);
        if boundary && is_word(code[pos]) {
            if let Some((name, end)) = inline_module(code, pos) {
                depth += 1;
                scopes.push((name, depth));
                pos = end;
                continue;
            }
            if let Some((heads, end, group)) = path_head(code, pos) {
                line += code[counted..pos].iter().filter(|&&c| c == b'\n').count();
                counted = pos;
                let inner: Vec<String> = scopes.iter().map(|(s, _)| s.clone()).collect();
                let mut push = |tail: Option<String>| {
                    let mut segments = heads.clone();
                    segments.extend(tail);
                    found.push(Found {
                        segments,
                        line,
                        inner: inner.clone(),
                    });
                };
                if group {
                    let close = group_end(code, end);
                    for item in split_top(&code[end..close.saturating_sub(1)]) {
                        let first = (0..item.len()).find(|&k| is_word(item[k]));
                        push(first.and_then(|k| word_at(item, k)).map(|(w, _)| w));
                    }
                    pos = close;
                } else {
                    push(word_at(code, end).map(|(w, _)| w));
                    pos = end;
                }
                continue;
            }
        }
        match code[pos] {
            b'{' => depth += 1,
            b'}' => {
                if scopes.last().is_some_and(|s| s.1 == depth) {
                    scopes.pop();
                }
                depth -= 1;
            }
            _ => {}
        }
        pos += 1;
    }
    found
}

/// `mod NAME {` at `pos`: the name and the position after the brace.
fn inline_module(code: &[u8], pos: usize) -> Option<(String, usize)> {
    let (keyword, mut j) = word_at(code, pos)?;
    let blank = |j: usize| (j..code.len()).find(|&k| !code[k].is_ascii_whitespace());
    if keyword != "mod" || !code.get(j)?.is_ascii_whitespace() {
        return None;
    }
    let (name, end) = word_at(code, blank(j)?)?;
    j = blank(end)?;
    (code[j] == b'{').then_some((name, j + 1))
}

/// `head(::word)*::` at `pos`, head one of `crate super self` and the library: the
/// segments before the last `::`, the position after it and whether a group `{` follows
/// (then the position is after the brace).
fn path_head(code: &[u8], pos: usize) -> Option<(Vec<String>, usize, bool)> {
    let (head, mut end) = word_at(code, pos)?;
    if !["crate", "super", "self", LIBRARY].contains(&head.as_str()) {
        return None;
    }
    let mut heads = vec![head];
    while code[end..].starts_with(b"::") {
        match word_at(code, end + 2) {
            Some((segment, after)) if code[after..].starts_with(b"::") => {
                heads.push(segment);
                end = after;
            }
            Some(_) => return Some((heads, end + 2, false)),
            None => {
                let group = code.get(end + 2) == Some(&b'{');
                return Some((heads, end + 2 + usize::from(group), group));
            }
        }
    }
    None
}

/// The position after the `}` that closes a group opened before `pos`.
fn group_end(code: &[u8], mut pos: usize) -> usize {
    let mut depth = 1;
    while pos < code.len() && depth > 0 {
        match code[pos] {
            b'{' => depth += 1,
            b'}' => depth -= 1,
            _ => {}
        }
        pos += 1;
    }
    pos
}

/// The items of a group's body, split at its top-level commas.
fn split_top(body: &[u8]) -> Vec<&[u8]> {
    let (mut items, mut depth, mut start) = (Vec::new(), 0, 0);
    for (k, &c) in body.iter().enumerate() {
        match c {
            b'{' => depth += 1,
            b'}' => depth -= 1,
            b',' if depth == 0 => {
                items.push(&body[start..k]);
                start = k + 1;
            }
            _ => {}
        }
    }
    items.push(&body[start..]);
    items
}

/// The crate and module a path names, written in module `here` of `krate`.
fn resolve(segments: &[String], krate: Crate, here: &[String]) -> (Crate, ModPath) {
    let (head, mut rest) = (segments[0].as_str(), &segments[1..]);
    match head {
        LIBRARY => (Crate::Lib, rest.to_vec()),
        "crate" => (krate, rest.to_vec()),
        _ => {
            let mut base = here.to_vec();
            if head == "super" {
                base.pop();
            }
            while rest.first().is_some_and(|s| s == "super") {
                base.pop();
                rest = &rest[1..];
            }
            base.extend(rest.iter().cloned());
            (krate, base)
        }
    }
}

/// The module graph: at each module, the edges between its children.
struct Graph {
    modules: BTreeSet<(Crate, ModPath)>,
    /// `pub use child::…::Name` in a `mod.rs` or `lib.rs`: (crate, module, Name) → child.
    exports: BTreeMap<(Crate, ModPath, String), String>,
    edges: BTreeMap<(Crate, ModPath), Edges>,
}

impl Graph {
    fn new(sources: &[Source]) -> Graph {
        let mut graph = Graph {
            modules: sources.iter().map(Source::module).collect(),
            exports: BTreeMap::new(),
            edges: BTreeMap::new(),
        };
        for source in sources.iter().filter(|s| s.is_module_root()) {
            graph.read_exports(source);
        }
        for source in sources {
            graph.read_file(source);
        }
        graph
    }

    fn is_module(&self, krate: Crate, path: &[String]) -> bool {
        self.modules.contains(&(krate, path.to_vec()))
    }

    fn read_exports(&mut self, source: &Source) {
        let (krate, here) = source.module();
        let text: Vec<String> = source
            .text
            .lines()
            .map(|line| match line.trim_start().strip_prefix("pub use ") {
                Some(rest) if rest.starts_with(|c: char| c.is_alphanumeric() || c == '_') => {
                    format!("self::{rest}")
                }
                _ => line.to_string(),
            })
            .collect();
        for found in paths_in(&strip(text.join("\n").as_bytes())) {
            let s = &found.segments;
            if s[0] == "self" && s.len() >= 3 && found.inner.is_empty() {
                let name = s[s.len() - 1].clone();
                self.exports
                    .insert((krate, here.clone(), name), s[1].clone());
            }
        }
    }

    /// `simulation::StepMetrics` (a re-export) → `simulation::step::StepMetrics`.
    fn canonical(&self, krate: Crate, path: ModPath) -> ModPath {
        for k in 0..path.len() {
            let key = (krate, path[..k].to_vec(), path[k].clone());
            if let Some(child) = self.exports.get(&key) {
                if !self.is_module(krate, &path[..=k]) {
                    let mut out = path[..k].to_vec();
                    out.push(child.clone());
                    out.extend(path[k..].iter().cloned());
                    return out;
                }
            }
        }
        path
    }

    fn read_file(&mut self, source: &Source) {
        let (krate, here) = source.module();
        for found in paths_in(&strip(source.text.as_bytes())) {
            let mut scope = here.clone();
            scope.extend(found.inner.iter().cloned());
            let (target_crate, target) = resolve(&found.segments, krate, &scope);
            let target = self.canonical(target_crate, target);
            let place = format!("{}:{}", source.file, found.line);
            if target_crate != krate {
                let from = here.first().map_or("cli", String::as_str).to_string();
                if let Some(to) = target.first() {
                    self.edge(Crate::Bin, vec![], from, to.clone(), place);
                }
                continue;
            }
            let k = here.iter().zip(&target).take_while(|(a, b)| a == b).count();
            if k < here.len() && k < target.len() && self.is_module(krate, &target[..=k]) {
                let (from, to) = (here[k].clone(), target[k].clone());
                self.edge(krate, here[..k].to_vec(), from, to, place);
            }
        }
    }

    fn edge(&mut self, krate: Crate, parent: ModPath, from: String, to: String, place: String) {
        let edges = self.edges.entry((krate, parent)).or_default();
        edges.entry((from, to)).or_default().push(place);
    }

    /// Edges between the top modules, the command line's included.
    fn top(&self) -> Edges {
        let mut top = Edges::new();
        for krate in [Crate::Lib, Crate::Bin] {
            for ((a, b), places) in self.edges.get(&(krate, vec![])).into_iter().flatten() {
                let from = if krate == Crate::Bin { "cli" } else { a };
                let entry = top.entry((from.to_string(), b.clone())).or_default();
                entry.extend(places.iter().cloned());
            }
        }
        top
    }

    /// Top modules that name a higher layer, with where.
    fn upward(&self) -> Edges {
        let rank = |m: &str| LAYERS.iter().position(|l| *l == m);
        self.top()
            .into_iter()
            .filter(|((a, b), _)| matches!((rank(a), rank(b)), (Some(x), Some(y)) if y > x))
            .collect()
    }

    /// Cycles between the files of a module: (module, the files of one cycle).
    fn cycles(&self) -> Vec<(String, Vec<String>)> {
        let mut out = Vec::new();
        for ((_, parent), edges) in &self.edges {
            if parent.is_empty() {
                continue;
            }
            for cycle in strongly_connected(edges.keys().filter(|(a, b)| a != b)) {
                out.push((parent.join("/"), cycle));
            }
        }
        out
    }
}

/// The strongly connected components of more than one node (Tarjan).
fn strongly_connected<'a>(edges: impl Iterator<Item = &'a (String, String)>) -> Vec<Vec<String>> {
    struct Tarjan<'a> {
        succ: BTreeMap<&'a str, BTreeSet<&'a str>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        out: Vec<Vec<String>>,
    }
    impl<'a> Tarjan<'a> {
        fn visit(&mut self, v: &'a str) {
            let k = self.index.len();
            self.index.insert(v, k);
            self.low.insert(v, k);
            self.stack.push(v);
            let next: Vec<&str> = self.succ.get(v).into_iter().flatten().copied().collect();
            for w in next {
                if !self.index.contains_key(w) {
                    self.visit(w);
                    self.low.insert(v, self.low[v].min(self.low[w]));
                } else if self.stack.contains(&w) {
                    self.low.insert(v, self.low[v].min(self.index[w]));
                }
            }
            if self.low[v] == self.index[v] {
                let at = self
                    .stack
                    .iter()
                    .rposition(|&x| x == v)
                    .expect("on the stack");
                let mut component: Vec<String> = self.stack.drain(at..).map(String::from).collect();
                if component.len() > 1 {
                    component.sort();
                    self.out.push(component);
                }
            }
        }
    }
    let mut tarjan = Tarjan {
        succ: BTreeMap::new(),
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        out: Vec::new(),
    };
    for (a, b) in edges {
        tarjan.succ.entry(a).or_default().insert(b);
        tarjan.succ.entry(b).or_default();
    }
    let nodes: Vec<&str> = tarjan.succ.keys().copied().collect();
    for v in nodes {
        if !tarjan.index.contains_key(v) {
            tarjan.visit(v);
        }
    }
    tarjan.out
}

fn src_graph() -> Graph {
    Graph::new(&read_sources(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
    ))
}

fn listed(edges: &Edges) -> String {
    edges
        .iter()
        .map(|((a, b), places)| format!("{a} -> {b}: {}", places.join(", ")))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn no_module_of_src_names_a_higher_layer() {
    let upward = src_graph().upward();
    assert!(upward.is_empty(), "upward imports:\n{}", listed(&upward));
}

#[test]
fn no_files_of_a_module_of_src_name_each_other_in_a_cycle() {
    let cycles = src_graph().cycles();
    assert!(cycles.is_empty(), "cycles: {cycles:?}");
}

#[test]
fn every_top_module_of_src_has_a_layer() {
    let graph = src_graph();
    let top: BTreeSet<&str> = graph
        .modules
        .iter()
        .filter_map(|(_, path)| path.first().map(String::as_str))
        .collect();
    let unranked: Vec<&&str> = top.iter().filter(|m| !LAYERS.contains(m)).collect();
    assert!(unranked.is_empty(), "modules without a layer: {unranked:?}");
    assert!(top.len() >= 10, "the walk found {top:?}");
}

#[test]
fn a_lower_module_naming_a_higher_one_is_reported_with_its_line() {
    let graph = Graph::new(&sources(&[
        ("lib.rs", "pub mod model;\npub mod solvers;\n"),
        (
            "model/mod.rs",
            "use std::fmt;\n\nuse crate::solvers::Solver;\n",
        ),
        ("solvers/mod.rs", "use crate::model::Model;\n"),
        ("cli/run.rs", "use contactbench::solvers::Solver;\n"),
    ]));
    let upward = graph.upward();
    let places: Vec<_> = upward.iter().collect();
    assert_eq!(
        places,
        [(
            &("model".to_string(), "solvers".to_string()),
            &vec!["model/mod.rs:3".to_string()]
        )]
    );
    assert!(graph.top().contains_key(&("cli".into(), "solvers".into())));
}

#[test]
fn a_cycle_through_a_re_export_of_mod_rs_is_reported() {
    let graph = Graph::new(&sources(&[
        ("lib.rs", "pub mod simulation;\n"),
        (
            "simulation/mod.rs",
            "mod runner;\nmod scenario;\nmod step;\npub use runner::{MAX_SPEED, Runner};\n",
        ),
        ("simulation/scenario.rs", "use super::MAX_SPEED;\n"),
        (
            "simulation/runner.rs",
            "use super::{scenario::Scenario, step};\n",
        ),
        (
            "simulation/step.rs",
            "fn f() { let _ = super::super::simulation::x; }\n",
        ),
    ]));
    assert_eq!(
        graph.cycles(),
        [(
            "simulation".to_string(),
            vec!["runner".into(), "scenario".into()]
        )]
    );
    let inner = &graph.edges[&(Crate::Lib, vec!["simulation".to_string()])];
    assert!(inner.contains_key(&("runner".into(), "step".into())));
}

#[test]
fn code_inside_a_test_module_counts_as_its_file() {
    let graph = Graph::new(&sources(&[
        ("lib.rs", "pub mod dynamics;\n"),
        ("dynamics/mod.rs", "mod crba;\nmod ltdl;\n"),
        ("dynamics/crba.rs", "use super::ltdl::MassLtdl;\n"),
        (
            "dynamics/ltdl.rs",
            "pub struct MassLtdl;\n#[cfg(test)]\nmod tests {\n    use super::*;\n    \
             use crate::dynamics::crba::crba;\n}\n",
        ),
    ]));
    assert_eq!(
        graph.cycles(),
        [("dynamics".to_string(), vec!["crba".into(), "ltdl".into()])]
    );
}

#[test]
fn comments_strings_and_doc_links_name_no_module_but_code_after_them_does() {
    let quiet = "//! See [`crate::solvers::Solver`].\n\
                 /* crate::solvers::A /* nested crate::solvers::B */ */\n\
                 /// [`crate::solvers`]\n\
                 fn f<'a>(x: &'a str) -> &'a str {\n\
                 \x20   let _ = (\"crate::solvers::C\", r#\"crate::solvers::\"D\"#, b\"crate::solvers\");\n\
                 \x20   let _ = ('\"', '\\'', 'λ'); // crate::solvers::E\n\
                 \x20   x\n}\n";
    let loud = format!("{quiet}use crate::solvers::Solver;\n");
    let graph = |model: &str| {
        Graph::new(&sources(&[
            ("lib.rs", "pub mod model;\npub mod solvers;\n"),
            ("model/mod.rs", model),
            ("solvers/mod.rs", ""),
        ]))
    };
    assert!(
        graph(quiet).upward().is_empty(),
        "{}",
        listed(&graph(quiet).upward())
    );
    let upward = graph(&loud).upward();
    assert_eq!(
        upward.get(&("model".to_string(), "solvers".to_string())),
        Some(&vec!["model/mod.rs:9".to_string()])
    );
}
