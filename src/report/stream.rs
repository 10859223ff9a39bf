//! Reading recorded runs in bounded memory: CSV rows one at a time (checked as
//! [`crate::simulation::recorder::read_columns`] checks them), curves reduced as they
//! come to the first, lowest, highest and last point of each of a bounded number of
//! buckets, and samples reduced to a log histogram. A report of a run of 10⁷ steps uses
//! the memory of one of 10⁴.

use std::collections::BTreeMap;
use std::fs::File;
use std::path::Path;

use crate::simulation::recorder::RecordError;

/// What a CSV column holds, as far as read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Only empty cells so far.
    Unknown,
    /// Numbers (an empty cell is NaN).
    Numbers,
    /// Text (its first non-empty cell is not a number): not read.
    Text,
}

/// A CSV file read row by row: every column is checked (a numeric column holds finite
/// numbers or empty cells), the wanted ones are handed out as numbers (NaN when empty,
/// absent or a text column).
pub struct CsvRows {
    shown: String,
    reader: csv::Reader<File>,
    header: Vec<String>,
    kinds: Vec<Kind>,
    wanted: Vec<Option<usize>>,
    row: usize,
    record: csv::StringRecord,
}

impl CsvRows {
    /// Opens `path` and finds the `wanted` columns.
    pub fn open(path: &Path, wanted: &[&str]) -> Result<Self, RecordError> {
        let shown = path.display().to_string();
        let csv_err = |error| RecordError::Csv {
            path: shown.clone(),
            error,
        };
        let mut reader = csv::Reader::from_path(path).map_err(csv_err)?;
        let header: Vec<String> = reader
            .headers()
            .map_err(csv_err)?
            .iter()
            .map(str::to_string)
            .collect();
        let wanted = wanted
            .iter()
            .map(|w| header.iter().position(|h| h == w))
            .collect();
        Ok(Self {
            kinds: vec![Kind::Unknown; header.len()],
            shown,
            reader,
            header,
            wanted,
            row: 0,
            record: csv::StringRecord::new(),
        })
    }

    /// The next row's wanted values into `out`; `false` at the end.
    pub fn next_into(&mut self, out: &mut [f64]) -> Result<bool, RecordError> {
        let more = self
            .reader
            .read_record(&mut self.record)
            .map_err(|error| RecordError::Csv {
                path: self.shown.clone(),
                error,
            })?;
        if !more {
            return Ok(false);
        }
        self.row += 1;
        let mut values = vec![f64::NAN; self.header.len()];
        for (k, field) in self.record.iter().enumerate() {
            let Some(kind) = self.kinds.get_mut(k) else {
                continue;
            };
            let field = field.trim();
            if field.is_empty() || *kind == Kind::Text {
                continue;
            }
            let error = |finite: bool| {
                let (path, row, column, value) = (
                    self.shown.clone(),
                    self.row,
                    self.header[k].clone(),
                    field.to_string(),
                );
                if finite {
                    RecordError::NotANumber {
                        path,
                        row,
                        column,
                        value,
                    }
                } else {
                    RecordError::NotFinite {
                        path,
                        row,
                        column,
                        value,
                    }
                }
            };
            match (field.parse::<f64>(), *kind) {
                (Ok(x), _) if !x.is_finite() => return Err(error(false)),
                (Ok(x), _) => {
                    *kind = Kind::Numbers;
                    values[k] = x;
                }
                (Err(_), Kind::Unknown) => *kind = Kind::Text,
                (Err(_), _) => return Err(error(true)),
            }
        }
        for (slot, column) in out.iter_mut().zip(&self.wanted) {
            *slot = column.map_or(f64::NAN, |k| values[k]);
        }
        Ok(true)
    }
}

/// Buckets kept per curve before two neighbours are merged.
const BUCKETS: usize = 4096;

/// A curve reduced as its points come: per bucket of consecutive points, the first, the
/// lowest, the highest and the last (and a gap, a NaN, where the bucket had one), in
/// order. When the buckets are full, neighbours are merged (each bucket then covers
/// twice as many points), so that memory stays bounded whatever the length.
#[derive(Debug, Clone, Default)]
pub struct Decimator {
    buckets: Vec<Bucket>,
    per_bucket: usize,
    count: usize,
}

/// Index and point.
type Indexed = (usize, (f64, f64));

#[derive(Debug, Clone, Copy)]
struct Bucket {
    first: Indexed,
    lowest: Indexed,
    highest: Indexed,
    last: Indexed,
    gap: Option<usize>,
    points: usize,
}

impl Bucket {
    fn of(point: Indexed) -> Self {
        let gap = (point.1 .0.is_nan() || point.1 .1.is_nan()).then_some(point.0);
        Self {
            first: point,
            lowest: point,
            highest: point,
            last: point,
            gap,
            points: 1,
        }
    }

    fn merge(self, next: Self) -> Self {
        let lower = |a: Indexed, b: Indexed| {
            if b.1 .1 < a.1 .1 || a.1 .1.is_nan() {
                b
            } else {
                a
            }
        };
        let higher = |a: Indexed, b: Indexed| {
            if b.1 .1 > a.1 .1 || a.1 .1.is_nan() {
                b
            } else {
                a
            }
        };
        Self {
            first: self.first,
            lowest: lower(self.lowest, next.lowest),
            highest: higher(self.highest, next.highest),
            last: next.last,
            gap: self.gap.or(next.gap),
            points: self.points + next.points,
        }
    }
}

impl Decimator {
    /// Adds the next point (NaN in either coordinate: a gap).
    pub fn push(&mut self, x: f64, y: f64) {
        if self.per_bucket == 0 {
            self.per_bucket = 1;
        }
        let point = (self.count, (x, y));
        self.count += 1;
        match self.buckets.last_mut() {
            Some(last) if last.points < self.per_bucket => *last = last.merge(Bucket::of(point)),
            _ => self.buckets.push(Bucket::of(point)),
        }
        if self.buckets.len() > BUCKETS {
            let merged = self
                .buckets
                .chunks(2)
                .filter_map(|pair| pair.iter().copied().reduce(Bucket::merge))
                .collect();
            self.buckets = merged;
            self.per_bucket *= 2;
        }
    }

    /// The points kept, in order.
    pub fn points(&self) -> Vec<(f64, f64)> {
        let mut out = Vec::with_capacity(5 * self.buckets.len());
        for b in &self.buckets {
            let mut kept: Vec<Indexed> = vec![b.first, b.lowest, b.highest, b.last];
            if let Some(k) = b.gap {
                kept.push((k, (f64::NAN, f64::NAN)));
            }
            kept.sort_by_key(|p| p.0);
            kept.dedup_by_key(|p| p.0);
            out.extend(kept.into_iter().map(|(_, p)| p));
        }
        out
    }
}

/// Ratio between neighbouring buckets of [`Quantiles`].
const RATIO: f64 = 1.001;

/// Positive samples reduced to a log histogram (buckets of ratio 1.001): their quantiles
/// within 0.1 %, in memory bounded by their range, not their number.
#[derive(Debug, Clone, Default)]
pub struct Quantiles {
    buckets: BTreeMap<i64, u64>,
    count: u64,
    min: f64,
    max: f64,
}

impl Quantiles {
    /// Adds a sample (not finite or not positive: left out, as a log axis does).
    pub fn push(&mut self, x: f64) {
        if !(x.is_finite() && x > 0.0) {
            return;
        }
        let bucket = (x.ln() / RATIO.ln()).floor() as i64;
        *self.buckets.entry(bucket).or_default() += 1;
        (self.min, self.max) = if self.count == 0 {
            (x, x)
        } else {
            (self.min.min(x), self.max.max(x))
        };
        self.count += 1;
    }

    /// `n` samples at evenly spaced quantile levels (the smallest and largest exact), or
    /// every sample when there are at most `n`: what a box plot needs.
    pub fn samples(&self, n: usize) -> Vec<f64> {
        if self.count == 0 {
            return Vec::new();
        }
        let n = (n.max(2) as u64).min(self.count) as usize;
        let mut out = Vec::with_capacity(n);
        let mut iter = self.buckets.iter();
        let mut seen = 0u64;
        let mut current = (0i64, 0u64);
        for k in 0..n {
            let rank = (k as u64 * (self.count - 1)) / (n as u64 - 1).max(1);
            while seen <= rank {
                match iter.next() {
                    Some((&b, &c)) => {
                        current = (b, c);
                        seen += c;
                    }
                    None => break,
                }
            }
            let centre = RATIO.powf(current.0 as f64 + 0.5);
            out.push(centre.clamp(self.min, self.max));
        }
        if let Some(first) = out.first_mut() {
            *first = self.min;
        }
        if let Some(last) = out.last_mut() {
            *last = self.max;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimation_of_a_long_curve_keeps_its_extremes_in_bounded_memory() {
        let mut d = Decimator::default();
        let n = 1_000_000;
        for k in 0..n {
            let spike = if k == 654_321 { 50.0 } else { 0.0 };
            d.push(k as f64, (k as f64 * 1e-3).sin() + spike);
        }
        let points = d.points();
        assert!(points.len() <= 4 * BUCKETS + 8, "{}", points.len());
        let top = points.iter().map(|p| p.1).fold(f64::MIN, f64::max);
        assert_eq!(top, (654_321.0_f64 * 1e-3).sin() + 50.0);
        assert_eq!(points.first().map(|p| p.0), Some(0.0));
        assert_eq!(points.last().map(|p| p.0), Some((n - 1) as f64));
        assert!(points.windows(2).all(|w| w[0].0 < w[1].0));
    }

    #[test]
    fn gaps_survive_decimation() {
        let mut d = Decimator::default();
        for k in 0..100_000 {
            let y = if (50_000..50_010).contains(&k) {
                f64::NAN
            } else {
                1.0
            };
            d.push(k as f64, y);
        }
        assert_eq!(d.points().iter().filter(|p| p.1.is_nan()).count(), 1);
    }

    #[test]
    fn quantile_samples_match_the_exact_quartiles() {
        let mut q = Quantiles::default();
        let values: Vec<f64> = (1..=100_000)
            .map(|k| 1e-6 * f64::from(k).powf(1.5))
            .collect();
        for v in &values {
            q.push(*v);
        }
        let samples = q.samples(2001);
        assert_eq!(samples.len(), 2001);
        assert_eq!(samples[0], values[0]);
        assert_eq!(samples[2000], values[99_999]);
        for (level, exact) in [
            (500, values[24_999]),
            (1000, values[49_999]),
            (1500, values[74_999]),
        ] {
            assert!((samples[level] / exact - 1.0).abs() < 2e-3, "{level}");
        }
    }
}
