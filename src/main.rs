//! The `contactbench` command line: a thin layer over the library.

mod cli;

use clap::Parser;

fn main() -> std::process::ExitCode {
    let args = cli::Cli::parse();
    match cli::run(args) {
        Ok(code) => match cli::stdout_failure() {
            Some(e) => {
                eprintln!("error: writing the output: {e}");
                std::process::ExitCode::FAILURE
            }
            None => code,
        },
        Err(err) => {
            eprintln!("error: {err:#}");
            cli::exit_code(&err)
        }
    }
}
