//! A client process that dies or loses its connection mid-round, for the
//! multi-process tests: in a debug build, with [`FAULT_ENV`] set to
//! `<round>:<step>` (a step as `SecAggStep` prints it, `advertise-keys` to
//! `unmasking`; with pairwise masks `advertise-keys` and `masked-input`),
//! the client aborts instead of answering that step of that round, as if
//! killed. From `share-keys` on, `<round>:<step>:reconnect`
//! drops its session there instead and connects again, and
//! `<round>:<step>:delay` answers that step three seconds late. Release
//! builds ignore it. A dealer process with [`DEALER_FAULT_ENV`] set to a
//! round number aborts when the server asks it for that round's deal,
//! before it answers.

use mufc::SecAggStep;

/// The variable a test sets on a client process.
pub const FAULT_ENV: &str = "MUFC_CLIENT_FAULT";

/// The variable a test sets on a dealer process: the round whose deal
/// request kills it.
pub const DEALER_FAULT_ENV: &str = "MUFC_DEALER_FAULT";

/// Aborts the process if a debug build of the dealer was asked to die
/// when asked for `round`'s deal.
pub(crate) fn dealer_asked(round: u64) {
    if cfg!(debug_assertions)
        && std::env::var(DEALER_FAULT_ENV).is_ok_and(|v| v == round.to_string())
    {
        std::process::abort();
    }
}

/// The suffix of a fault that drops the session instead of the process.
pub const RECONNECT_SUFFIX: &str = ":reconnect";

/// The suffix of a fault that answers the step three seconds late.
pub const DELAY_SUFFIX: &str = ":delay";

/// How late a `:delay` fault answers.
pub const DELAY: std::time::Duration = std::time::Duration::from_secs(3);

/// What a debug build was asked to do at a step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Asked {
    /// Answer as usual.
    Nothing,
    /// Drop the session and connect again.
    Reconnect,
    /// Answer [`DELAY`] late.
    Delay,
}

/// Aborts the process if a debug build was asked to die at `step` of
/// `round`; otherwise says what else it was asked to do there.
pub(crate) fn asked(round: u64, step: SecAggStep) -> Asked {
    if !cfg!(debug_assertions) {
        return Asked::Nothing;
    }
    let Ok(value) = std::env::var(FAULT_ENV) else {
        return Asked::Nothing;
    };
    let at = format!("{round}:{step}");
    if value == at {
        std::process::abort();
    }
    if value.strip_suffix(RECONNECT_SUFFIX) == Some(at.as_str()) {
        Asked::Reconnect
    } else if value.strip_suffix(DELAY_SUFFIX) == Some(at.as_str()) {
        Asked::Delay
    } else {
        Asked::Nothing
    }
}
