//! The exit codes of the `mufc` command. A script can tell what happened
//! without parsing the output.
//!
//! | code | meaning |
//! |---:|---|
//! | 0 | success (`forget`: applied; `verify`: equal) |
//! | 1 | an error: bad input, a damaged store, I/O, ... (nothing changed); `inspect --id`: the store does not know the id |
//! | 2 | the command line does not parse (clap's usage error) |
//! | 3 | `forget`: the records are erased, the model update is deferred by the privacy policy; `verify`: the clients equal retraining, the model's update is pending |
//! | 4 | `forget`: the request was refused (unknown or already forgotten records, an unknown or removed client, a request the privacy policy refuses): nothing changed |
//! | 5 | `verify`: the served model differs from retraining |
//! | 6 | `forget`: the records are erased and the store serves no model: the request would have left fewer clients than the minimum aggregate (docs/threat-model.md P4), or an earlier one did; `verify`: the model is withdrawn and the clients equal their fit from scratch |

/// Success.
pub const SUCCESS: u8 = 0;
/// An error.
pub const FAILURE: u8 = 1;
/// The command line does not parse.
pub const USAGE: u8 = 2;
/// Erased; the model update deferred (or, for `verify`, pending).
pub const DEFERRED: u8 = 3;
/// The request was refused; nothing changed.
pub const REFUSED: u8 = 4;
/// `verify` found a difference.
pub const DIFFERS: u8 = 5;
/// Erased; the model withdrawn (below the minimum aggregate).
pub const WITHDRAWN: u8 = 6;

/// The exit code of a failed run: [`REFUSED`] for a refusal, else
/// [`FAILURE`].
///
/// # Example
///
/// ```
/// use mufc_cli::CliError;
///
/// assert_eq!(mufc_cli::exit::of_error(&CliError::Refused("no".into())), mufc_cli::exit::REFUSED);
/// assert_eq!(mufc_cli::exit::of_error(&CliError::NoData("none")), mufc_cli::exit::FAILURE);
/// ```
pub fn of_error(e: &crate::CliError) -> u8 {
    match e {
        crate::CliError::Refused(_) => REFUSED,
        _ => FAILURE,
    }
}
