//! Memory: a settled step allocates nothing, and a run's, a sweep's and a report's memory
//! does not grow with the number of steps. One global allocator (`allocator`) measures
//! both; the tests run one at a time.

mod allocator;
mod report;
mod run;
mod step_allocations;
mod sweep;
