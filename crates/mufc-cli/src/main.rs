//! The `mufc` command. Parsing and printing only: the work is in the
//! library half of this crate (`mufc_cli`). Printing never panics: a
//! closed stdout or stderr loses the text, not the exit code.

use std::process::ExitCode;

use clap::Parser;
use mufc_cli::cli::Cli;
use mufc_cli::commands::execute;
use mufc_cli::exit;
use mufc_cli::output::{Stdout, eprint_line};
use mufc_cli::progress::Progress;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let json = cli.command.json();
    // -q: nothing but errors (and the JSON object asked for with --json).
    let quiet = cli.command.quiet();
    let result = execute(&cli.command, Progress::wanted(quiet, json));
    match result {
        Ok(report) => {
            if !quiet {
                for w in &report.warnings {
                    eprint_line(&format!("warning: {w}"));
                }
            }
            if json || !quiet {
                Stdout::default().print(&report.render(json));
            }
            ExitCode::from(report.exit)
        }
        Err(err) => {
            let code = exit::of_error(&err);
            let err = anyhow::Error::from(err);
            if json {
                // stdout stays one JSON object, even on failure.
                let line = serde_json::json!({ "command": cli.command.name(), "error": format!("{err:#}"), "exit": code });
                Stdout::default().print(&format!("{line}\n"));
            }
            eprint_line(&format!("error: {err:#}"));
            ExitCode::from(code)
        }
    }
}
