//! The house rules checked on the sources: the docs and their links, the dependencies,
//! and the layering of the crate's modules.

mod layering;
mod pages_and_dependencies;
