//! The `mufc` command.
//!
//! Not implemented yet: issue 6 builds it. Until then it says so and fails,
//! rather than pretending to run.

use std::process::ExitCode;

fn main() -> ExitCode {
    eprintln!("mufc: the command-line tool is not implemented yet (issue 6)");
    ExitCode::from(2)
}
