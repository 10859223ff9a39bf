//! The work of a corpus run: problem files found in directories, the sorted list of
//! problem × solver tasks, and the deterministic slice of it that one shard runs.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::CorpusError;

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

/// One solve of the corpus: a problem file and a solver specification.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Task {
    /// The problem file, as given (or found).
    pub problem: PathBuf,
    /// The solver specification text (`ncp-admm`, `raisim:alpha=0.5`).
    pub solver: String,
    /// Position of the solver in the command's list (the order of report columns).
    pub solver_rank: usize,
}

impl Task {
    /// A file name unique to this task: the problem's stem, the solver, and 12 hex digits
    /// of the SHA-256 of the full path and specification.
    pub fn key(&self) -> String {
        let mut hasher = Sha256::new();
        hasher.update(self.problem.to_string_lossy().as_bytes());
        hasher.update([0]);
        hasher.update(self.solver.as_bytes());
        let digest = hasher.finalize();
        let hex: String = digest.iter().take(6).map(|b| format!("{b:02x}")).collect();
        let stem = self
            .problem
            .file_stem()
            .map_or_else(|| "problem".into(), |s| s.to_string_lossy().into_owned());
        format!("{}__{}__{hex}", sanitize(&stem), sanitize(&self.solver))
    }
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

/// Every problem × solver, problem-major, problems sorted and solvers in the given order.
pub fn tasks(problems: &[PathBuf], solvers: &[String]) -> Vec<Task> {
    problems
        .iter()
        .flat_map(|p| {
            solvers.iter().enumerate().map(|(rank, s)| Task {
                problem: p.clone(),
                solver: s.clone(),
                solver_rank: rank,
            })
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

    /// The shard of a Slurm job array task: `K = (SLURM_ARRAY_TASK_ID − MIN) / STEP + 1`,
    /// `N = SLURM_ARRAY_TASK_COUNT` (`MIN` = `SLURM_ARRAY_TASK_MIN`, 0 if unset; `STEP` =
    /// `SLURM_ARRAY_TASK_STEP`, 1 if unset), so `--array=0-9` and `--array=1-10` both give
    /// shards 1..10 of 10. `None` outside a job array.
    pub fn from_slurm(var: impl Fn(&str) -> Option<String>) -> Result<Option<Self>, CorpusError> {
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
        let id = number("SLURM_ARRAY_TASK_ID", &id)?;
        let count = number("SLURM_ARRAY_TASK_COUNT", &count)?;
        let min = match var("SLURM_ARRAY_TASK_MIN") {
            Some(t) => number("SLURM_ARRAY_TASK_MIN", &t)?,
            None => 0,
        };
        let step = match var("SLURM_ARRAY_TASK_STEP") {
            Some(t) => number("SLURM_ARRAY_TASK_STEP", &t)?.max(1),
            None => 1,
        };
        let index = id.checked_sub(min).map(|d| d / step + 1);
        match index {
            Some(index) if index <= count => Ok(Some(Self { index, count })),
            _ => Err(CorpusError::Shard {
                text: format!("SLURM_ARRAY_TASK_ID={id}, MIN={min}, COUNT={count}"),
                message: "task id outside the array".into(),
            }),
        }
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

/// The directory where a run writes its per-task result files.
pub fn results_dir(out: &Path) -> PathBuf {
    out.join("results")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_partition_the_tasks() {
        let all = tasks(
            &[PathBuf::from("a.json"), PathBuf::from("b.json")],
            &["ncp-pgs".into(), "ncp-admm".into(), "ccp-ipm".into()],
        );
        let mut seen: Vec<Task> = (1..=3)
            .flat_map(|k| Shard { index: k, count: 3 }.select(all.clone()))
            .collect();
        seen.sort_by_key(Task::key);
        let mut expected = all.clone();
        expected.sort_by_key(Task::key);
        assert_eq!(seen, expected);
    }

    #[test]
    fn slurm_arrays_starting_at_zero_or_one_give_the_same_shards() {
        let env = |id: &'static str, min: &'static str| {
            move |name: &str| match name {
                "SLURM_ARRAY_TASK_ID" => Some(id.to_string()),
                "SLURM_ARRAY_TASK_COUNT" => Some("3".to_string()),
                "SLURM_ARRAY_TASK_MIN" => Some(min.to_string()),
                _ => None,
            }
        };
        let zero = Shard::from_slurm(env("0", "0")).ok().flatten();
        let one = Shard::from_slurm(env("1", "1")).ok().flatten();
        assert_eq!(zero, Some(Shard { index: 1, count: 3 }));
        assert_eq!(zero, one);
        assert!(Shard::from_slurm(env("5", "0")).is_err());
        assert_eq!(Shard::from_slurm(|_: &str| None).ok().flatten(), None);
        assert!(Shard::parse("0/3").is_err());
        assert_eq!(Shard::parse("2/3").ok(), Some(Shard { index: 2, count: 3 }));
    }
}
