//! Standard output for every command: a reader that goes away (`contactbench … | head -1`)
//! is not an error and never a panic (as `println!` would be): what is left to print is
//! dropped and the command finishes its work. Any other failure to write stdout (a full
//! disk behind a redirection) is kept and reported at the end, with exit code 1.

use std::fmt;
use std::io::{ErrorKind, Write};
use std::sync::Mutex;

/// The first failure to write stdout other than a closed pipe.
static FAILURE: Mutex<Option<String>> = Mutex::new(None);

/// Writes `args` to stdout (what [`out!`] and [`outln!`] expand to).
pub fn write(args: fmt::Arguments<'_>) {
    let mut stdout = std::io::stdout().lock();
    let result = stdout.write_fmt(args).and_then(|()| stdout.flush());
    if let Err(e) = result {
        if e.kind() != ErrorKind::BrokenPipe {
            if let Ok(mut failure) = FAILURE.lock() {
                failure.get_or_insert_with(|| e.to_string());
            }
        }
    }
}

/// Why stdout could not be written, if it could not (a closed pipe is not a failure).
pub fn failure() -> Option<String> {
    FAILURE.lock().ok().and_then(|f| f.clone())
}

/// `print!` that survives a closed pipe.
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::cli::out::write(format_args!($($arg)*))
    };
}

/// `println!` that survives a closed pipe.
macro_rules! outln {
    () => {
        $crate::cli::out::write(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::cli::out::write(format_args!("{}\n", format_args!($($arg)*)))
    };
}

pub(crate) use {out, outln};
