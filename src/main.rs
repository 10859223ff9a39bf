//! The `contactbench` command line: the library's [`contactbench::cli::main_with`] with
//! the built-in solvers only.

fn main() -> std::process::ExitCode {
    contactbench::cli::main_with(Vec::new())
}
