//! Derivatives against central finite differences: a solver's answer under every contact
//! model and mode, and one simulation step's A and B on robots and the sliding cube.

mod solve;
mod step;
