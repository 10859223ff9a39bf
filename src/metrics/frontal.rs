//! `null(Jᵀ)` of a large coupled component (a column of stacked cubes) by fronts: the
//! orthogonal factorization `J = Q R` of [`super::null_space`], eliminating `J`'s columns
//! block by block in their order, each block on the rows that touch it only.
//!
//! A block is a run of consecutive columns nonzero on the same contacts (a free body's six
//! dofs). Its front holds the rows carried from the previous front and the rows whose first
//! nonzero column is in the block, on the columns from the block to the last one any of them
//! touches. A column-pivoted Householder QR of the front's block columns decides their rank
//! `ρ` at the whole component's tolerance (its rows `..ρ` are rows of `R`); a second QR of
//! the rows `ρ..` on the front's later columns, unpivoted by rank (every nonzero column is
//! reflected), leaves at most as many nonzero rows as those columns, which are carried to the
//! next front, and zero rows: directions of `null(Jᵀ)`. Rows carried past the last block are
//! null directions too. Every transformation is orthogonal on `J`'s rows, so `Q`'s columns
//! on the null rows span `null(Jᵀ)` (orthonormal) as the whole-matrix QR's do, and the
//! rank decisions are the same tests on the same remaining column norms (rows outside the
//! front are zero on the block). A column of `n` cubes costs `n` fronts of about 30 × 12
//! instead of one QR of `12n × 6n`.

use super::householder::{apply, apply_transpose, householder_qr};

/// One front's reflectors, acting on the entries `slots` (rows of `J`) of a vector.
#[derive(Debug, Clone, Copy, Default)]
struct Step {
    /// Its rows in `slots[slot..slot + rows]`.
    slot: usize,
    rows: usize,
    /// Its reflectors (column-major, `rows` long) from `reflectors[reflector..]` and their
    /// `τ`s from `taus[tau..]`, `count` of each.
    reflector: usize,
    tau: usize,
    count: usize,
}

/// The factorization by fronts and its scratch buffers, kept from call to call.
#[derive(Debug, Default)]
pub(super) struct Fronts {
    steps: Vec<Step>,
    slots: Vec<usize>,
    reflectors: Vec<f64>,
    taus: Vec<f64>,
    /// The rows of `Qᵀ J` that are zero: `Nᵀ λ = (Qᵀ λ)[null]`.
    null: Vec<usize>,
    /// Per row, its first and last nonzero column (`first = columns` for a zero row).
    first: Vec<usize>,
    last: Vec<usize>,
    /// The nonzero rows by first column.
    order: Vec<usize>,
    /// The end column of each block.
    ends: Vec<usize>,
    /// The front (column-major) and its rows.
    front: Vec<f64>,
    front_slots: Vec<usize>,
    /// The rows carried to the next front (column-major, upper trapezoidal), their columns
    /// and their rows of `J`.
    carry: Vec<f64>,
    carry_columns: Vec<usize>,
    carry_slots: Vec<usize>,
    /// The remaining rows of a front on its later columns.
    rest: Vec<f64>,
    /// Scratch for one QR's `τ`s and reflectors, and for the projections.
    step_taus: Vec<f64>,
    step_reflectors: Vec<f64>,
    vector: Vec<f64>,
    column: Vec<f64>,
}

impl Fronts {
    /// Factors the column-major `m × columns` `data` at the absolute `tolerance` on squared
    /// column norms; returns `dim null(Jᵀ)`.
    pub(super) fn factor(
        &mut self,
        data: &[f64],
        m: usize,
        columns: usize,
        tolerance: f64,
    ) -> usize {
        self.steps.clear();
        self.slots.clear();
        self.reflectors.clear();
        self.taus.clear();
        self.null.clear();
        self.carry.clear();
        self.carry_columns.clear();
        self.carry_slots.clear();
        self.find_row_spans(data, m, columns);
        self.find_blocks(data, m, columns);
        let ends = std::mem::take(&mut self.ends);
        let (mut start, mut next) = (0, 0);
        for &end in &ends {
            next = self.gather_front(data, m, (start, end), next);
            self.eliminate(end - start, end, tolerance);
            start = end;
        }
        self.ends = ends;
        self.null.extend_from_slice(&self.carry_slots);
        self.null.len()
    }

    /// Each row's first and last nonzero column; zero rows are null directions.
    fn find_row_spans(&mut self, data: &[f64], m: usize, columns: usize) {
        self.first.clear();
        self.first.resize(m, columns);
        self.last.clear();
        self.last.resize(m, 0);
        for (c, column) in data.chunks_exact(m).enumerate().take(columns) {
            for (r, x) in column.iter().enumerate() {
                if *x != 0.0 {
                    self.first[r] = self.first[r].min(c);
                    self.last[r] = c;
                }
            }
        }
        self.order.clear();
        self.order
            .extend((0..m).filter(|&r| self.first[r] < columns));
        self.order.sort_by_key(|&r| self.first[r]);
        self.null
            .extend((0..m).filter(|&r| self.first[r] == columns));
    }

    /// The blocks: runs of consecutive columns nonzero on the same contacts.
    fn find_blocks(&mut self, data: &[f64], m: usize, columns: usize) {
        self.ends.clear();
        let touches = |contact: &[f64]| contact.iter().any(|x| *x != 0.0);
        for c in 1..columns {
            let (before, here) = (&data[(c - 1) * m..c * m], &data[c * m..(c + 1) * m]);
            let same = before
                .chunks_exact(3)
                .zip(here.chunks_exact(3))
                .all(|(a, b)| touches(a) == touches(b));
            if !same {
                self.ends.push(c);
            }
        }
        if columns > 0 {
            self.ends.push(columns);
        }
    }

    /// Forms the front of the block `[start, end)`: the carried rows, then the rows of
    /// `order[next..]` whose first column is in the block; returns the next row of `order`.
    fn gather_front(
        &mut self,
        data: &[f64],
        m: usize,
        (start, end): (usize, usize),
        mut next: usize,
    ) -> usize {
        let first_new = next;
        while next < self.order.len() && self.first[self.order[next]] < end {
            next += 1;
        }
        let new = &self.order[first_new..next];
        let width_end = new
            .iter()
            .map(|&r| self.last[r] + 1)
            .chain(self.carry_columns.iter().map(|&c| c + 1))
            .fold(end, usize::max);
        let carried = self.carry_slots.len();
        let rows = carried + new.len();
        self.front.clear();
        self.front.resize(rows * (width_end - start), 0.0);
        for (k, &c) in self.carry_columns.iter().enumerate() {
            let column = &mut self.front[(c - start) * rows..];
            column[..carried].copy_from_slice(&self.carry[k * carried..(k + 1) * carried]);
        }
        for (i, &r) in new.iter().enumerate() {
            for c in self.first[r]..=self.last[r] {
                self.front[(c - start) * rows + carried + i] = data[c * m + r];
            }
        }
        self.front_slots.clear();
        self.front_slots.extend_from_slice(&self.carry_slots);
        self.front_slots.extend_from_slice(new);
        next
    }

    /// The two QRs of the front (module doc): the block's `pivots` columns at `tolerance`,
    /// then the remaining rows on the later columns from `end`; keeps the carried rows.
    fn eliminate(&mut self, pivots: usize, end: usize, tolerance: f64) {
        let rows = self.front_slots.len();
        self.carry.clear();
        self.carry_slots.clear();
        self.carry_columns.clear();
        if rows == 0 {
            return;
        }
        let later = self.front.len() / rows - pivots;
        let rank = self.reflect_and_record(Front::Block, rows, pivots, tolerance, 0);
        let remaining = rows - rank;
        if remaining == 0 {
            return;
        }
        // The remaining rows on the later columns.
        self.rest.clear();
        for column in self.front.chunks_exact(rows).skip(pivots) {
            self.rest.extend_from_slice(&column[rank..]);
        }
        self.carry_columns.extend(end..end + later);
        let kept = self.reflect_and_record(Front::Rest, remaining, later, 0.0, rank);
        for k in 0..later {
            let column = &self.rest[k * remaining..];
            self.carry
                .extend((0..kept).map(|i| if i <= k { column[i] } else { 0.0 }));
        }
        let slots = &self.front_slots[rank..];
        self.carry_slots.extend_from_slice(&slots[..kept]);
        self.null.extend_from_slice(&slots[kept..]);
    }

    /// A pivoted Householder QR of the first `pivots` columns of the front (`Front::Block`,
    /// `rows` rows) or of the remaining rows (`Front::Rest`, the front's rows `offset..`,
    /// its column order applied to `carry_columns`), stopped at `tolerance`; records its
    /// reflectors as a step and returns its rank.
    fn reflect_and_record(
        &mut self,
        which: Front,
        rows: usize,
        pivots: usize,
        tolerance: f64,
        offset: usize,
    ) -> usize {
        let reflections = rows.min(pivots);
        self.step_taus.clear();
        self.step_taus.resize(reflections, 0.0);
        self.step_reflectors.clear();
        self.step_reflectors.resize(rows * reflections, 0.0);
        let rank = match which {
            Front::Block => householder_qr(
                &mut self.front,
                rows,
                pivots,
                &mut self.step_taus,
                &mut self.step_reflectors,
                tolerance,
                None,
            ),
            Front::Rest => householder_qr(
                &mut self.rest,
                rows,
                pivots,
                &mut self.step_taus,
                &mut self.step_reflectors,
                tolerance,
                Some(&mut self.carry_columns),
            ),
        };
        if rank > 0 {
            self.steps.push(Step {
                slot: self.slots.len(),
                rows,
                reflector: self.reflectors.len(),
                tau: self.taus.len(),
                count: rank,
            });
            self.slots
                .extend_from_slice(&self.front_slots[offset..offset + rows]);
            self.reflectors
                .extend_from_slice(&self.step_reflectors[..rows * rank]);
            self.taus.extend_from_slice(&self.step_taus[..rank]);
        }
        rank
    }

    /// `Nᵀ λ = (Qᵀ λ)[null]` into `out`.
    pub(super) fn project(&mut self, lambda: &[f64], out: &mut Vec<f64>) {
        self.vector.clear();
        self.vector.extend_from_slice(lambda);
        for step in &self.steps {
            let slots = &self.slots[step.slot..step.slot + step.rows];
            self.column.clear();
            self.column.extend(slots.iter().map(|&s| self.vector[s]));
            apply_transpose(
                &self.reflectors[step.reflector..],
                &self.taus[step.tau..],
                step.count,
                &mut self.column,
            );
            for (&s, x) in slots.iter().zip(&self.column) {
                self.vector[s] = *x;
            }
        }
        out.clear();
        out.extend(self.null.iter().map(|&s| self.vector[s]));
    }

    /// `N z = Q y`, `y` zero but for `z` on the null rows, into `out` (`m` rows).
    pub(super) fn lift(&mut self, z: &[f64], out: &mut [f64]) {
        out.fill(0.0);
        for (&s, x) in self.null.iter().zip(z) {
            out[s] = *x;
        }
        for step in self.steps.iter().rev() {
            let slots = &self.slots[step.slot..step.slot + step.rows];
            self.column.clear();
            self.column.extend(slots.iter().map(|&s| out[s]));
            apply(
                &self.reflectors[step.reflector..],
                &self.taus[step.tau..],
                step.count,
                &mut self.column,
            );
            for (&s, x) in slots.iter().zip(&self.column) {
                out[s] = *x;
            }
        }
    }
}

/// Which matrix [`Fronts::reflect_and_record`] factors.
#[derive(Debug, Clone, Copy)]
enum Front {
    Block,
    Rest,
}
