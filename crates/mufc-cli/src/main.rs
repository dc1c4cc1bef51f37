//! The `mufc` command. Parsing and printing only: the work is in the
//! library half of this crate (`mufc_cli`).

use std::process::ExitCode;

use clap::Parser;
use mufc_cli::cli::Cli;
use mufc_cli::commands::execute;
use mufc_cli::progress::Progress;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let json = cli.command.json();
    let result = execute(&cli.command, Progress::wanted(cli.command.quiet(), json))
        .map_err(anyhow::Error::from);
    match result {
        Ok(report) => {
            for w in &report.warnings {
                eprintln!("warning: {w}");
            }
            print!("{}", report.render(json));
            ExitCode::SUCCESS
        }
        Err(err) => {
            if json {
                // stdout stays one JSON object, even on failure.
                println!(
                    "{}",
                    serde_json::json!({ "command": cli.command.name(), "error": format!("{err:#}") })
                );
            }
            eprintln!("error: {err:#}");
            ExitCode::FAILURE
        }
    }
}
