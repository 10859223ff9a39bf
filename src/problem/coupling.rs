//! Which contacts are coupled through `G`, and the velocity scale of each group.
//!
//! Contacts `i` and `j` are coupled when the `3 × 3` block `G_ij` (or `G_ji`) holds a
//! nonzero entry: a force at one changes the velocity of the other (they share a body,
//! or bodies linked by joints). The groups are the connected components of that graph:
//! the velocities of a group depend only on its own forces and free velocities. For a
//! problem built from a model, `G_ij = J_i M⁻¹ J_jᵀ` is exactly zero between contacts of
//! unrelated bodies, so the test is exact (no threshold, hence no unit).
//!
//! The relative criterion (`metrics::residuals`, docs/ruler.md) measures the velocities of
//! contact `i` against the largest free velocity of its group, `v_i = max_{j ~ i} ‖g_j‖∞`,
//! so that nothing outside the bodies it touches sets its scale.
//!
//! The contact Jacobian `J` (`3n × nv`) a problem carries for its metrics couples contacts
//! the same way through its columns ([`ContactJacobian::coupled_components`]): a
//! simulator's large problems carry it sparse, rows on the contacts' chains only, so that
//! no `3n × nv` matrix is formed for them.

use nalgebra::{DMatrix, DVector};
use nalgebra_sparse::CsrMatrix;

/// The contact Jacobian `J` (`3n × nv`, rows `[t1, t2, n]` per contact) a problem carries
/// for its metrics: dense (files, small problems) or sparse by rows (a simulator's
/// problems from the size where its operator is factorized). Both give the same
/// components and the same component blocks, entry for entry.
#[derive(Debug, Clone, PartialEq)]
pub enum ContactJacobian {
    /// The whole matrix.
    Dense(DMatrix<f64>),
    /// Its rows, each on the columns where it may be nonzero (stored zeros are ignored).
    Sparse(CsrMatrix<f64>),
}

impl ContactJacobian {
    /// `3n`.
    pub fn nrows(&self) -> usize {
        match self {
            Self::Dense(j) => j.nrows(),
            Self::Sparse(j) => j.nrows(),
        }
    }

    /// `nv`.
    pub fn ncols(&self) -> usize {
        match self {
            Self::Dense(j) => j.ncols(),
            Self::Sparse(j) => j.ncols(),
        }
    }

    /// The contacts coupled through `J`, as connected components: two contacts are
    /// coupled when their rows are nonzero on a common column (a body they both touch,
    /// or a joint of a chain both hang from). Each component's contacts are increasing;
    /// the components are in order of their first contact.
    pub fn coupled_components(&self) -> Vec<Vec<usize>> {
        let n = self.nrows() / 3;
        let mut parent: Vec<usize> = (0..n).collect();
        match self {
            Self::Dense(j) => {
                for column in j.column_iter() {
                    let mut first: Option<usize> = None;
                    for (row, _) in column.iter().enumerate().filter(|(_, v)| **v != 0.0) {
                        let contact = row / 3;
                        match first {
                            None => first = Some(contact),
                            Some(f) => union(&mut parent, f, contact),
                        }
                    }
                }
            }
            Self::Sparse(j) => {
                // The first contact seen on each column.
                let mut owner: Vec<Option<usize>> = vec![None; j.ncols()];
                for (row, entries) in j.row_iter().enumerate() {
                    let contact = row / 3;
                    for (&k, _) in nonzeros(entries.col_indices(), entries.values()) {
                        match owner[k] {
                            Some(f) => union(&mut parent, f, contact),
                            None => owner[k] = Some(contact),
                        }
                    }
                }
            }
        }
        let mut index_of_root = vec![usize::MAX; n];
        let mut components: Vec<Vec<usize>> = Vec::new();
        for i in 0..n {
            let r = root(&parent, i);
            if index_of_root[r] == usize::MAX {
                index_of_root[r] = components.len();
                components.push(Vec::new());
            }
            components[index_of_root[r]].push(i);
        }
        components
    }

    /// The rows of `contacts` on the columns where they are nonzero, in increasing
    /// order: the component's own `J` (its other columns are zero and leave its null
    /// space unchanged).
    pub fn component(&self, contacts: &[usize]) -> DMatrix<f64> {
        let rows: Vec<usize> = contacts.iter().flat_map(|&i| 3 * i..3 * i + 3).collect();
        match self {
            Self::Dense(j) => {
                let columns: Vec<usize> = (0..j.ncols())
                    .filter(|&c| rows.iter().any(|&r| j[(r, c)] != 0.0))
                    .collect();
                DMatrix::from_fn(rows.len(), columns.len(), |r, c| j[(rows[r], columns[c])])
            }
            Self::Sparse(j) => {
                // Each column once, at its first sight (no sort of every entry).
                let mut position = vec![usize::MAX; j.ncols()];
                let mut columns = Vec::new();
                for &r in &rows {
                    let row = j.row(r);
                    for (&k, _) in nonzeros(row.col_indices(), row.values()) {
                        if position[k] == usize::MAX {
                            position[k] = 0;
                            columns.push(k);
                        }
                    }
                }
                columns.sort_unstable();
                for (c, &k) in columns.iter().enumerate() {
                    position[k] = c;
                }
                let mut block = DMatrix::zeros(rows.len(), columns.len());
                for (r, &row) in rows.iter().enumerate() {
                    let entries = j.row(row);
                    for (&k, v) in nonzeros(entries.col_indices(), entries.values()) {
                        block[(r, position[k])] = *v;
                    }
                }
                block
            }
        }
    }

    /// The whole matrix (formed for a sparse one).
    pub fn to_dense(&self) -> DMatrix<f64> {
        match self {
            Self::Dense(j) => j.clone(),
            Self::Sparse(j) => nalgebra_sparse::convert::serial::convert_csr_dense(j),
        }
    }
}

/// The stored entries of a sparse row that are not zero.
fn nonzeros<'a>(
    columns: &'a [usize],
    values: &'a [f64],
) -> impl Iterator<Item = (&'a usize, &'a f64)> {
    columns.iter().zip(values).filter(|(_, v)| **v != 0.0)
}

/// The group of every contact: the smallest contact index of its connected component in
/// the coupling graph of `delassus` (`3n × 3n`).
pub fn contact_groups(delassus: &DMatrix<f64>) -> Vec<usize> {
    let n = delassus.nrows() / 3;
    let mut parent: Vec<usize> = (0..n).collect();
    for i in 0..n {
        for j in (i + 1)..n {
            if coupled(delassus, i, j) {
                union(&mut parent, i, j);
            }
        }
    }
    (0..n).map(|i| root(&parent, i)).collect()
}

/// `v_i = max ‖g_j‖∞` over the contacts `j` of the group of `i`, for every contact.
pub fn group_velocity_scales(delassus: &DMatrix<f64>, free_velocity: &DVector<f64>) -> Vec<f64> {
    scales_of_groups(&contact_groups(delassus), free_velocity)
}

/// `v_i = max ‖g_j‖∞` over the contacts `j` with the group of `i`, given every contact's
/// group (its component's smallest contact index).
pub fn scales_of_groups(groups: &[usize], free_velocity: &DVector<f64>) -> Vec<f64> {
    let mut largest = vec![0.0_f64; groups.len()];
    for (i, &group) in groups.iter().enumerate() {
        let own = free_velocity
            .rows(3 * i, 3)
            .iter()
            .fold(0.0_f64, |m, v| m.max(v.abs()));
        largest[group] = largest[group].max(own);
    }
    groups.iter().map(|&group| largest[group]).collect()
}

/// True when the block `G_ij` or `G_ji` holds a nonzero entry.
fn coupled(delassus: &DMatrix<f64>, i: usize, j: usize) -> bool {
    let nonzero = |r: usize, c: usize| {
        (0..3).any(|a| (0..3).any(|b| delassus[(3 * r + a, 3 * c + b)] != 0.0))
    };
    nonzero(i, j) || nonzero(j, i)
}

/// The root of `i` (the smallest index of its tree: roots only ever point lower).
pub(crate) fn root(parent: &[usize], mut i: usize) -> usize {
    while parent[i] != i {
        i = parent[i];
    }
    i
}

/// Joins the trees of `i` and `j` under the smaller root, halving paths on the way.
pub(crate) fn union(parent: &mut [usize], i: usize, j: usize) {
    let (a, b) = (compress(parent, i), compress(parent, j));
    let (low, high) = if a < b { (a, b) } else { (b, a) };
    parent[high] = low;
}

/// The root of `i`, pointing every node on the way to its grandparent.
fn compress(parent: &mut [usize], mut i: usize) -> usize {
    while parent[i] != i {
        parent[i] = parent[parent[i]];
        i = parent[i];
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_are_the_connected_components_of_the_blocks() {
        // Four contacts: 0-2 coupled through G_02, 2-3 through G_32 only (one triangle
        // written), 1 alone.
        let mut g = DMatrix::identity(12, 12);
        g[(0, 8)] = 0.1;
        g[(8, 0)] = 0.1;
        g[(11, 6)] = 1e-300;
        assert_eq!(contact_groups(&g), vec![0, 1, 0, 0]);
        let free = DVector::from_fn(12, |k, _| if k == 11 { -4.0 } else { 0.5 });
        assert_eq!(group_velocity_scales(&g, &free), vec![4.0, 0.5, 4.0, 4.0]);
    }
}
