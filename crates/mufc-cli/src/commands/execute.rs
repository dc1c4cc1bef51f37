//! Running a parsed subcommand ([`execute`]): the command's own function,
//! then the options' privacy warnings and the federation's client
//! minimums added to its report.

use serde_json::json;

use super::bench::bench;
use super::compare::compare;
use super::run::run;
use super::store;
use super::summary::merged;
use super::topologies::topologies;
use super::unlearn::unlearn;
use crate::CliError;
use crate::cli::Command;
use crate::federated;
use crate::output::Report;

/// Runs a subcommand. `progress` says whether progress bars may be drawn
/// (see [`Progress::wanted`](crate::progress::Progress::wanted)).
///
/// # Errors
///
/// The errors of the steps run: bad options, bad data, and the errors of
/// the `mufc` library (for instance a client with fewer distinct points
/// than its k).
pub fn execute(command: &Command, progress: bool) -> Result<Report, CliError> {
    let result = match command {
        Command::Run(a) => run(a, progress),
        Command::Unlearn(a) => unlearn(a, progress),
        Command::Bench(a) => bench(a, progress),
        Command::Topologies(a) => topologies(a, progress),
        Command::Compare(a) => compare(a, progress),
        Command::Fit(a) => store::fit(a, progress),
        Command::Forget(a) => store::forget(a),
        Command::Add(a) => store::add(a),
        Command::Verify(a) => store::verify(a),
        Command::Predict(a) => store::predict(a),
        Command::Export(a) => store::export(a),
        Command::Inspect(a) => store::inspect(a),
        #[cfg(feature = "net")]
        Command::Certs(a) => super::certs::certs(a),
        #[cfg(feature = "net")]
        Command::Server(a) => super::net::server(a),
        #[cfg(feature = "net")]
        Command::Client(a) => super::net::client(a),
        #[cfg(feature = "net")]
        Command::Dealer(a) => super::dealer::dealer(a),
        #[cfg(not(feature = "net"))]
        Command::Certs(_) | Command::Server(_) | Command::Client(_) | Command::Dealer(_) => {
            Err(CliError::InvalidParameter {
                name: "command",
                value: command.name().into(),
                reason: "this build of mufc has no network support (mufc-cli's feature `net`)",
            })
        }
    };
    let mut report = result.map_err(|e| match e {
        CliError::Mufc(m @ mufc::MufcError::OutsideBox { .. }) => CliError::OutsideBox(m),
        other => other,
    })?;
    // The options' warnings first, then the run's own.
    let Some(fed) = command.fed() else {
        // A command on an existing store: its own warnings only.
        report.json = merged(report.json, json!({ "warnings": report.warnings }));
        return Ok(report);
    };
    let mut warnings = federated::privacy_warnings(fed);
    warnings.append(&mut report.warnings);
    report.json = merged(
        report.json,
        json!({
            "min_clients": fed.min_clients,
            "min_updating_clients": fed.min_updating_clients,
            "privacy_warnings": warnings,
        }),
    );
    report.warnings = warnings;
    Ok(report)
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;
    use crate::cli::Cli;

    fn parse(args: &[&str]) -> Command {
        Cli::try_parse_from(args).unwrap().command
    }

    #[test]
    fn options_are_checked_before_work() {
        for args in [
            &["mufc", "run", "--k", "0"][..],
            &["mufc", "run", "--gamma=-1"],
            &["mufc", "run", "--trials", "0"],
            &["mufc", "unlearn", "--removals", "0"],
            &["mufc", "unlearn", "--plot", "fig.pdf"],
            &["mufc", "unlearn", "--batch", "0"],
            &["mufc", "bench", "--requests", "0"],
            &["mufc", "run", "--server-restarts", "0"],
            &["mufc", "run", "--client-k", "0"],
            &["mufc", "compare", "--k-prime", "11"],
            &["mufc", "run", "--data", "no/such/file.csv"],
        ] {
            assert!(execute(&parse(args), false).is_err(), "{args:?}");
        }
    }
}
