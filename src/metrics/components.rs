//! The coupled components of `J` and each one's block, for the internal forces of
//! [`super::forces`]: the same components and blocks, entry for entry, as
//! [`ContactJacobian::coupled_components`] and [`ContactJacobian::component`], into
//! buffers kept from call to call. A block costs its rows' entries (by sparse rows), not
//! one pass over `J`'s columns per component: a pile of 64 cubes has 16 components of 384
//! columns each, of which a component touches 24.

use std::cell::RefCell;

use nalgebra::DVector;

use crate::problem::coupling::{root, union};
use crate::problem::ContactJacobian;

/// No contact, or no position yet.
const NONE: usize = usize::MAX;

/// The components of the last [`Components::find`] and the block of the last
/// [`Components::load`], with the component's `λ`, `c` and friction coefficients.
#[derive(Debug, Default)]
pub(super) struct Components {
    /// Union-find forest over contacts, and per column the first contact seen on it.
    parent: Vec<usize>,
    owner: Vec<usize>,
    /// Per contact, its component; then the contacts component by component, the `k`-th
    /// in `contacts[starts[k]..starts[k + 1]]` (increasing).
    component_of: Vec<usize>,
    contacts: Vec<usize>,
    starts: Vec<usize>,
    /// Per column of `J`, its column in the block (`NONE` between loads).
    position: Vec<usize>,
    /// The block's columns of `J`, increasing.
    columns: Vec<usize>,
    /// The block (column-major, `rows × columns.len()`).
    pub(super) block: Vec<f64>,
    pub(super) rows: usize,
    /// The component's `λ`, `c` (3 per contact) and `μ`s.
    pub(super) lambda: Vec<f64>,
    pub(super) velocity: Vec<f64>,
    pub(super) mus: Vec<f64>,
}

/// Runs `f` on this thread's [`Components`]. Not reentrant.
pub(super) fn with_components<T>(f: impl FnOnce(&mut Components) -> T) -> T {
    thread_local! {
        static COMPONENTS: RefCell<Components> = RefCell::default();
    }
    COMPONENTS.with(|cell| f(&mut cell.borrow_mut()))
}

impl Components {
    /// Finds the coupled components of `jacobian` (contacts whose rows are nonzero on a
    /// common column), in order of their first contact; returns their count.
    pub(super) fn find(&mut self, jacobian: &ContactJacobian) -> usize {
        let n = jacobian.nrows() / 3;
        self.parent.clear();
        self.parent.extend(0..n);
        match jacobian {
            ContactJacobian::Dense(j) => {
                for column in j.column_iter() {
                    let mut first = NONE;
                    for (row, _) in column.iter().enumerate().filter(|(_, v)| **v != 0.0) {
                        let contact = row / 3;
                        if first == NONE {
                            first = contact;
                        } else {
                            union(&mut self.parent, first, contact);
                        }
                    }
                }
            }
            ContactJacobian::Sparse(j) => {
                self.owner.clear();
                self.owner.resize(j.ncols(), NONE);
                for (row, entries) in j.row_iter().enumerate() {
                    let contact = row / 3;
                    for (&k, _) in nonzeros(entries.col_indices(), entries.values()) {
                        match self.owner[k] {
                            NONE => self.owner[k] = contact,
                            first => union(&mut self.parent, first, contact),
                        }
                    }
                }
            }
        }
        // Number the components by first contact (roots are reused as scratch indices).
        self.component_of.clear();
        self.component_of.resize(n, NONE);
        self.starts.clear();
        let mut count = 0;
        for i in 0..n {
            let r = root(&self.parent, i);
            if self.component_of[r] == NONE {
                self.component_of[r] = count;
                self.starts.push(0);
                count += 1;
            }
            let k = self.component_of[r];
            self.component_of[i] = k;
            self.starts[k] += 1;
        }
        // Counts to offsets, then the contacts in increasing order within each component.
        let mut offset = 0;
        for start in &mut self.starts {
            let size = *start;
            *start = offset;
            offset += size;
        }
        self.starts.push(offset);
        self.contacts.clear();
        self.contacts.resize(n, 0);
        self.columns.clear();
        self.columns.extend_from_slice(&self.starts[..count]);
        for (i, &k) in self.component_of.iter().enumerate() {
            self.contacts[self.columns[k]] = i;
            self.columns[k] += 1;
        }
        count
    }

    /// The contacts of component `k` of the last [`Components::find`].
    #[cfg(test)]
    fn contacts(&self, k: usize) -> &[usize] {
        &self.contacts[self.starts[k]..self.starts[k + 1]]
    }

    /// Loads component `k`'s block of `jacobian` (its rows on the columns where they are
    /// nonzero, in increasing order) and its `λ`, `c` and `μ`s; returns the block's
    /// number of columns.
    pub(super) fn load(
        &mut self,
        jacobian: &ContactJacobian,
        k: usize,
        (lambda, c, mus): (&DVector<f64>, &DVector<f64>, impl Fn(usize) -> f64),
    ) -> usize {
        let (start, end) = (self.starts[k], self.starts[k + 1]);
        self.rows = 3 * (end - start);
        let rows = self.rows;
        let contacts = &self.contacts[start..end];
        self.lambda.clear();
        self.velocity.clear();
        self.mus.clear();
        for &i in contacts {
            self.lambda
                .extend_from_slice(&lambda.as_slice()[3 * i..3 * i + 3]);
            self.velocity
                .extend_from_slice(&c.as_slice()[3 * i..3 * i + 3]);
            self.mus.push(mus(i));
        }
        self.columns.clear();
        match jacobian {
            ContactJacobian::Dense(j) => {
                self.columns.extend((0..j.ncols()).filter(|&column| {
                    contacts
                        .iter()
                        .any(|&i| (3 * i..3 * i + 3).any(|r| j[(r, column)] != 0.0))
                }));
                self.block.clear();
                for &column in &self.columns {
                    let column = j.column(column);
                    for &i in contacts {
                        self.block
                            .extend_from_slice(&column.as_slice()[3 * i..3 * i + 3]);
                    }
                }
            }
            ContactJacobian::Sparse(j) => {
                self.position.resize(j.ncols(), NONE);
                // Each column once, at its first sight.
                for &i in contacts {
                    for r in 3 * i..3 * i + 3 {
                        let row = j.row(r);
                        for (&column, _) in nonzeros(row.col_indices(), row.values()) {
                            if self.position[column] == NONE {
                                self.position[column] = 0;
                                self.columns.push(column);
                            }
                        }
                    }
                }
                self.columns.sort_unstable();
                for (p, &column) in self.columns.iter().enumerate() {
                    self.position[column] = p;
                }
                self.block.clear();
                self.block.resize(rows * self.columns.len(), 0.0);
                for (local, &i) in contacts.iter().enumerate() {
                    for offset in 0..3 {
                        let r = 3 * local + offset;
                        let row = j.row(3 * i + offset);
                        for (&column, v) in nonzeros(row.col_indices(), row.values()) {
                            self.block[self.position[column] * rows + r] = *v;
                        }
                    }
                }
                for &column in &self.columns {
                    self.position[column] = NONE;
                }
            }
        }
        self.columns.len()
    }
}

/// The stored entries of a sparse row that are not zero.
fn nonzeros<'a>(
    columns: &'a [usize],
    values: &'a [f64],
) -> impl Iterator<Item = (&'a usize, &'a f64)> {
    columns.iter().zip(values).filter(|(_, v)| **v != 0.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::DMatrix;
    use nalgebra_sparse::convert::serial::convert_dense_csr;

    /// Seeded entries (a linear congruential generator): four contacts per body, each
    /// body on six columns of its own spread over `J`, and one contact in eight also on
    /// the next body, so that bodies pair up into several components.
    fn scattered_jacobian(n: usize, nv: usize) -> DMatrix<f64> {
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1);
            (state >> 11) as f64 / (1u64 << 53) as f64 - 0.5
        };
        let bodies = n.div_ceil(4) + 1;
        let mut j = DMatrix::zeros(3 * n, nv);
        for i in 0..n {
            let touched = if i % 8 == 0 { 2 } else { 1 };
            for body in i / 4..i / 4 + touched {
                let first = body * (nv / bodies);
                for r in 3 * i..3 * i + 3 {
                    for c in first..first + 6 {
                        j[(r, c)] = next();
                    }
                }
            }
        }
        j
    }

    #[test]
    fn components_and_blocks_are_those_of_the_jacobian_entry_for_entry() {
        let dense = scattered_jacobian(40, 240);
        let sparse = ContactJacobian::Sparse(convert_dense_csr(&dense));
        let dense = ContactJacobian::Dense(dense);
        let lambda = DVector::from_fn(120, |i, _| i as f64);
        let c = DVector::from_fn(120, |i, _| -(i as f64));
        for jacobian in [&dense, &sparse] {
            let reference = jacobian.coupled_components();
            assert!(reference.len() > 3, "{} components", reference.len());
            with_components(|components| {
                assert_eq!(components.find(jacobian), reference.len());
                for (k, contacts) in reference.iter().enumerate() {
                    assert_eq!(components.contacts(k), contacts.as_slice());
                    let block = jacobian.component(contacts);
                    let columns = components.load(jacobian, k, (&lambda, &c, |i| i as f64));
                    assert_eq!(columns, block.ncols());
                    assert_eq!(components.block.as_slice(), block.as_slice());
                    let rows: Vec<usize> =
                        contacts.iter().flat_map(|&i| 3 * i..3 * i + 3).collect();
                    let expected: Vec<f64> = rows.iter().map(|&r| lambda[r]).collect();
                    assert_eq!(components.lambda, expected);
                    let expected: Vec<f64> = rows.iter().map(|&r| c[r]).collect();
                    assert_eq!(components.velocity, expected);
                    let expected: Vec<f64> = contacts.iter().map(|&i| i as f64).collect();
                    assert_eq!(components.mus, expected);
                }
            });
        }
    }
}
