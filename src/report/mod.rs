//! Reports from recorded runs: tables, plots.
