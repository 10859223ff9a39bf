//! The work of a corpus run: problem files found in directories, the sorted list of
//! problem × solver tasks, and the deterministic slice of it that one shard runs.

use std::io::Read;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::CorpusError;
use crate::solvers::SolverSpec;

/// Extensions of the problem files taken from a directory.
pub const PROBLEM_EXTENSIONS: [&str; 4] = ["json", "hdf5", "h5", "npz"];

/// Problem files given directly or found (by extension, not recursively) in directories,
/// sorted and without duplicates, so every shard sees the same list.
pub fn problem_files(inputs: &[PathBuf]) -> Result<Vec<PathBuf>, CorpusError> {
    let mut files = Vec::new();
    for input in inputs {
        if input.is_dir() {
            let entries = std::fs::read_dir(input).map_err(|e| CorpusError::io(input, e))?;
            for entry in entries {
                let path = entry.map_err(|e| CorpusError::io(input, e))?.path();
                let known = path.extension().is_some_and(|e| {
                    PROBLEM_EXTENSIONS.contains(&e.to_string_lossy().to_ascii_lowercase().as_str())
                });
                if path.is_file() && known {
                    files.push(path);
                }
            }
        } else {
            files.push(input.clone());
        }
    }
    files.sort();
    files.dedup();
    if files.is_empty() {
        return Err(CorpusError::Empty("no problem file found".into()));
    }
    Ok(files)
}

/// Limits every solve of a corpus run shares.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Budget {
    /// Iteration cap, replacing each solver specification's `max_iter` when given.
    pub max_iter: Option<usize>,
    /// Wall-time limit of one solve (s), passed to the solver as its `max_time` (it stops
    /// with status `MaxTime`). A solve that took longer counts as not solved.
    pub timeout: f64,
}

impl Budget {
    /// The specification a task runs: `max_iter` replaced when the budget has one,
    /// `max_time` the timeout or the specification's own smaller limit (the solver then
    /// stops itself at the budget instead of running past it).
    pub fn apply(&self, spec: &mut SolverSpec) {
        if let Some(max_iter) = self.max_iter {
            spec.settings.max_iter = max_iter;
        }
        let own = spec.settings.max_time;
        spec.settings.max_time = Some(own.map_or(self.timeout, |t| t.min(self.timeout)));
    }
}

/// What a problem file is, for the resume key: its canonical path and the SHA-256 of its
/// content (a file that cannot be read has an empty digest and a task of errors).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProblemId {
    /// The file as given (or found): read, and shown in reports.
    pub path: PathBuf,
    /// Its canonical path (as given when it has none).
    pub canonical: String,
    /// SHA-256 of its content, lowercase hex; empty when it could not be read.
    pub sha256: String,
}

impl ProblemId {
    /// Identifies a problem file (reads it once, in blocks).
    pub fn of(path: &Path) -> Self {
        let canonical = path
            .canonicalize()
            .unwrap_or_else(|_| path.to_path_buf())
            .display()
            .to_string();
        Self {
            path: path.to_path_buf(),
            canonical,
            sha256: file_sha256(path).unwrap_or_default(),
        }
    }
}

fn file_sha256(path: &Path) -> std::io::Result<String> {
    let mut file = std::fs::File::open(path)?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 1 << 16];
    loop {
        let n = file.read(&mut buffer)?;
        if n == 0 {
            break;
        }
        hasher.update(&buffer[..n]);
    }
    Ok(hex(&hasher.finalize()))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// One solve of the corpus: a problem file and a solver specification.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Task {
    /// The problem file, as given (or found).
    pub problem: PathBuf,
    /// The solver specification text (`ncp-admm`, `raisim:alpha=0.5`).
    pub solver: String,
    /// Position of the solver in the command's list (the order of report columns).
    pub solver_rank: usize,
    /// The resume key ([`Task::key`]), fixed when the task list is made.
    pub key: String,
}

impl Task {
    /// A task whose key is computed from the problem's content and the solver's full
    /// settings under `budget`: the same solve has the same key whatever the path's
    /// spelling, and a changed file or setting a new one.
    pub fn new(problem: &ProblemId, solver: &str, solver_rank: usize, budget: Budget) -> Self {
        Self {
            problem: problem.path.clone(),
            solver: solver.to_string(),
            solver_rank,
            key: task_key(problem, solver, budget),
        }
    }

    /// The file name of the task's result: the problem's stem, the solver, and 16 hex
    /// digits of the SHA-256 of the canonical path, the file's digest and the full
    /// settings the solver runs with.
    pub fn key(&self) -> String {
        self.key.clone()
    }
}

/// The full settings a solver text runs with under `budget`, as canonical text (the
/// text itself when it does not parse: the task is then an error, under its own key).
pub fn full_settings(solver: &str, budget: Budget) -> String {
    match solver.parse::<SolverSpec>() {
        Ok(mut spec) => {
            budget.apply(&mut spec);
            serde_json::json!({
                "id": spec.id.as_str(),
                "settings": spec.settings,
                "params": spec.params,
            })
            .to_string()
        }
        Err(_) => format!("unparsed: {solver}; timeout {:e}", budget.timeout),
    }
}

fn task_key(problem: &ProblemId, solver: &str, budget: Budget) -> String {
    let mut hasher = Sha256::new();
    for part in [
        problem.canonical.as_str(),
        problem.sha256.as_str(),
        &full_settings(solver, budget),
    ] {
        hasher.update(part.as_bytes());
        hasher.update([0]);
    }
    let digest = hex(&hasher.finalize());
    let stem = problem
        .path
        .file_stem()
        .map_or_else(|| "problem".into(), |s| s.to_string_lossy().into_owned());
    let short = |text: &str| sanitize(text).chars().take(60).collect::<String>();
    format!("{}__{}__{}", short(&stem), short(solver), &digest[..16])
}

fn sanitize(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Every problem × solver, problem-major: problems by canonical path (so every spelling
/// of the same files gives the same list and the same shards), solvers in the given order.
pub fn tasks(problems: &[PathBuf], solvers: &[String], budget: Budget) -> Vec<Task> {
    let mut ids: Vec<ProblemId> = problems.iter().map(|p| ProblemId::of(p)).collect();
    ids.sort_by(|a, b| a.canonical.cmp(&b.canonical));
    ids.dedup_by(|a, b| a.canonical == b.canonical);
    ids.iter()
        .flat_map(|p| {
            solvers
                .iter()
                .enumerate()
                .map(move |(rank, s)| Task::new(p, s, rank, budget))
        })
        .collect()
}

/// Shard `index` (1-based) of `count`: task `i` of the sorted list belongs to shard
/// `i mod count + 1`, so every shard gets a mix of problem sizes and solvers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// Which shard, `1..=count`.
    pub index: usize,
    /// How many shards.
    pub count: usize,
}

impl Shard {
    /// The whole task list.
    pub const ALL: Shard = Shard { index: 1, count: 1 };

    /// Parses `K/N` with `1 ≤ K ≤ N`.
    pub fn parse(text: &str) -> Result<Self, CorpusError> {
        let fail = |message: &str| CorpusError::Shard {
            text: text.to_string(),
            message: message.to_string(),
        };
        let (k, n) = text.split_once('/').ok_or_else(|| fail("expected K/N"))?;
        let index: usize = k.trim().parse().map_err(|_| fail("K is not a number"))?;
        let count: usize = n.trim().parse().map_err(|_| fail("N is not a number"))?;
        if count == 0 || index == 0 || index > count {
            return Err(fail("expected 1 <= K <= N"));
        }
        Ok(Self { index, count })
    }

    /// Whether task number `i` (0-based, in [`tasks`] order) is this shard's.
    pub fn owns(&self, i: usize) -> bool {
        i % self.count + 1 == self.index
    }

    /// This shard's tasks.
    pub fn select(&self, all: Vec<Task>) -> Vec<Task> {
        all.into_iter()
            .enumerate()
            .filter(|(i, _)| self.owns(*i))
            .map(|(_, t)| t)
            .collect()
    }
}

/// The shape of a Slurm job array (`--array=MIN-MAX:STEP`, `COUNT` tasks): task id
/// `MIN + (K − 1)·STEP` runs shard `K` of `COUNT`. An output folder records the array that
/// first wrote it, so that re-submitting some of its ids (`sbatch --array=7,12`, an array
/// of 2 with gaps) runs the same shards.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArrayGeometry {
    /// The first task id.
    pub first_id: usize,
    /// The step between ids (1 unless `:STEP`).
    pub step: usize,
    /// The number of tasks, the shard count.
    pub count: usize,
}

impl ArrayGeometry {
    /// The shard of task `id`, when the array has it.
    pub fn shard_of(&self, id: usize) -> Option<Shard> {
        let offset = id.checked_sub(self.first_id)?;
        let step = self.step.max(1);
        (offset % step == 0 && offset / step < self.count).then(|| Shard {
            index: offset / step + 1,
            count: self.count,
        })
    }
}

/// The Slurm array task this process is, from `SLURM_ARRAY_TASK_ID`, `_COUNT`, `_MIN`,
/// `_MAX` and `_STEP`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SlurmTask {
    /// `SLURM_ARRAY_TASK_ID`.
    pub id: usize,
    /// The array's shape, when it has no gaps (`MAX − MIN = (COUNT − 1)·STEP`).
    pub geometry: Option<ArrayGeometry>,
    /// `MIN`, `MAX` and `COUNT`, for messages.
    pub span: (usize, usize, usize),
}

impl SlurmTask {
    /// The task of the environment (`var` reads a variable); `None` outside a job array.
    pub fn from_env(var: impl Fn(&str) -> Option<String>) -> Result<Option<Self>, CorpusError> {
        let (Some(id), Some(count)) = (var("SLURM_ARRAY_TASK_ID"), var("SLURM_ARRAY_TASK_COUNT"))
        else {
            return Ok(None);
        };
        let number = |name: &str, text: &str| -> Result<usize, CorpusError> {
            text.trim().parse().map_err(|_| CorpusError::Shard {
                text: format!("{name}={text}"),
                message: "not a number".into(),
            })
        };
        let optional = |name: &str| var(name).map(|t| number(name, &t)).transpose();
        let id = number("SLURM_ARRAY_TASK_ID", &id)?;
        let count = number("SLURM_ARRAY_TASK_COUNT", &count)?;
        let min = optional("SLURM_ARRAY_TASK_MIN")?.unwrap_or(0);
        let step = optional("SLURM_ARRAY_TASK_STEP")?.unwrap_or(1).max(1);
        let max = optional("SLURM_ARRAY_TASK_MAX")?
            .unwrap_or_else(|| min + count.saturating_sub(1) * step);
        let contiguous = count > 0 && max.checked_sub(min) == Some((count - 1) * step);
        Ok(Some(Self {
            id,
            geometry: contiguous.then_some(ArrayGeometry {
                first_id: min,
                step,
                count,
            }),
            span: (min, max, count),
        }))
    }

    /// This task's shard and the array it belongs to: the `recorded` array (of the output
    /// folder) when it has this id, else this array when it has no gaps; an array with
    /// gaps and nothing recorded cannot say how many shards there are.
    pub fn shard(
        &self,
        recorded: Option<ArrayGeometry>,
    ) -> Result<(Shard, ArrayGeometry), CorpusError> {
        for geometry in [recorded, self.geometry].into_iter().flatten() {
            if let Some(shard) = geometry.shard_of(self.id) {
                return Ok((shard, geometry));
            }
        }
        let (min, max, count) = self.span;
        Err(CorpusError::Shard {
            text: format!(
                "SLURM_ARRAY_TASK_ID={} in an array of {count} tasks with ids {min}..={max}",
                self.id
            ),
            message: "the array has gaps (a re-submission of some ids?) and the output folder \
                      records no array with this id: pass --shard K/N (K = the task's shard \
                      in the original array of N)"
                .into(),
        })
    }
}

/// The folder of a corpus output holding one result file per task (shared by the shards).
pub const RESULTS: &str = "results";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_partition_the_tasks() {
        let all = tasks(
            &[PathBuf::from("a.json"), PathBuf::from("b.json")],
            &["ncp-pgs".into(), "ncp-admm".into(), "ccp-ipm".into()],
            Budget {
                max_iter: None,
                timeout: 60.0,
            },
        );
        let mut seen: Vec<Task> = (1..=3)
            .flat_map(|k| Shard { index: k, count: 3 }.select(all.clone()))
            .collect();
        seen.sort_by_key(Task::key);
        let mut expected = all.clone();
        expected.sort_by_key(Task::key);
        assert_eq!(seen, expected);
    }

    fn env(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name: &str| {
            pairs
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn slurm_arrays_starting_at_zero_or_one_give_the_same_shards() {
        let task = |pairs| SlurmTask::from_env(env(pairs)).ok().flatten();
        let zero = task(&[
            ("SLURM_ARRAY_TASK_ID", "0"),
            ("SLURM_ARRAY_TASK_COUNT", "3"),
            ("SLURM_ARRAY_TASK_MIN", "0"),
            ("SLURM_ARRAY_TASK_MAX", "2"),
        ]);
        let one = task(&[
            ("SLURM_ARRAY_TASK_ID", "1"),
            ("SLURM_ARRAY_TASK_COUNT", "3"),
            ("SLURM_ARRAY_TASK_MIN", "1"),
            ("SLURM_ARRAY_TASK_MAX", "3"),
        ]);
        let shard = |t: Option<SlurmTask>| t.and_then(|t| t.shard(None).ok()).map(|(s, _)| s);
        assert_eq!(shard(zero), Some(Shard { index: 1, count: 3 }));
        assert_eq!(shard(zero), shard(one));
        assert_eq!(SlurmTask::from_env(|_: &str| None).ok().flatten(), None);
        assert!(Shard::parse("0/3").is_err());
        assert_eq!(Shard::parse("2/3").ok(), Some(Shard { index: 2, count: 3 }));
    }

    #[test]
    fn a_resubmitted_id_runs_its_shard_of_the_recorded_array() {
        // The first array, `--array=1-16`, is recorded; `sbatch --array=7,12` re-submits two.
        let first = SlurmTask::from_env(env(&[
            ("SLURM_ARRAY_TASK_ID", "12"),
            ("SLURM_ARRAY_TASK_COUNT", "16"),
            ("SLURM_ARRAY_TASK_MIN", "1"),
            ("SLURM_ARRAY_TASK_MAX", "16"),
        ]));
        let Ok(Some(first)) = first else {
            panic!("a Slurm task")
        };
        let (shard, recorded) = first.shard(None).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            shard,
            Shard {
                index: 12,
                count: 16
            }
        );
        let again = SlurmTask::from_env(env(&[
            ("SLURM_ARRAY_TASK_ID", "12"),
            ("SLURM_ARRAY_TASK_COUNT", "2"),
            ("SLURM_ARRAY_TASK_MIN", "7"),
            ("SLURM_ARRAY_TASK_MAX", "12"),
        ]));
        let Ok(Some(again)) = again else {
            panic!("a Slurm task")
        };
        assert_eq!(again.geometry, None);
        assert_eq!(
            again.shard(Some(recorded)).map(|(s, _)| s).ok(),
            Some(Shard {
                index: 12,
                count: 16
            })
        );
        let error = again.shard(None).map(|_| ()).unwrap_err().to_string();
        assert!(
            error.contains("--shard K/N") && error.contains("7..=12"),
            "{error}"
        );
    }
}
