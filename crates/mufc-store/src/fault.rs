//! Fault injection inside a request's transaction, for crash tests.
//!
//! Two ways, both for tests only:
//!
//! - In the process: [`Store::inject_fault`](crate::Store::inject_fault)
//!   (hidden from the docs) makes the next request fail with
//!   [`StoreError::InjectedFault`](crate::StoreError::InjectedFault) at a
//!   [`FaultPoint`]; the transaction is rolled back, as after any error.
//! - In a child process: with the environment variable [`FAULT_ENV`] set
//!   to a point's [name](FaultPoint::name), a **debug build** aborts the
//!   process there (`std::process::abort`, no unwinding, no destructors:
//!   as close to `SIGKILL` as a process can do to itself). Set to the name
//!   followed by [`WAIT_SUFFIX`], it writes [`WAITING`] and the name as one
//!   line to stderr and waits there, so that the parent can kill it with a
//!   real `SIGKILL` in the middle of the transaction; a child nobody kills
//!   aborts after 60 seconds, so that a broken test stops by itself.
//!   Release builds never read the variable.

use std::fmt;

/// The environment variable that makes a debug build abort inside a
/// request's transaction: its value is a [`FaultPoint::name`].
///
/// # Example
///
/// ```
/// assert_eq!(mufc_store::FAULT_ENV, "MUFC_STORE_FAULT");
/// ```
pub const FAULT_ENV: &str = "MUFC_STORE_FAULT";

/// Appended to a point's name in [`FAULT_ENV`]: wait there to be killed
/// instead of aborting.
///
/// # Example
///
/// ```
/// use mufc_store::{FaultPoint, WAIT_SUFFIX};
///
/// let value = format!("{}{WAIT_SUFFIX}", FaultPoint::AfterClients.name());
/// assert_eq!(value, "after-clients:wait");
/// ```
pub const WAIT_SUFFIX: &str = ":wait";

/// What a debug build waiting at a fault point writes to stderr, before
/// the point's name.
pub const WAITING: &str = "mufc-store-fault: waiting at ";

/// A point inside the transaction of a request (see [`FAULT_ENV`]), in the
/// order they are reached.
///
/// # Example
///
/// ```
/// use mufc_store::FaultPoint;
///
/// assert_eq!(FaultPoint::from_name("after-journal"), Some(FaultPoint::AfterJournal));
/// for p in FaultPoint::ALL {
///     assert_eq!(FaultPoint::from_name(p.name()), Some(p));
/// }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FaultPoint {
    /// The journal row is written, nothing else.
    AfterJournal,
    /// The journal row and the changed clients' rows (and records) are
    /// written; not the server row nor the audit rows.
    AfterClients,
    /// Everything is written; the transaction is not committed.
    BeforeCommit,
}

impl FaultPoint {
    /// Every point, in order.
    pub const ALL: [Self; 3] = [Self::AfterJournal, Self::AfterClients, Self::BeforeCommit];

    /// The point's name, as [`FAULT_ENV`] takes it.
    pub fn name(self) -> &'static str {
        match self {
            Self::AfterJournal => "after-journal",
            Self::AfterClients => "after-clients",
            Self::BeforeCommit => "before-commit",
        }
    }

    /// The point named `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.name() == name)
    }
}

impl fmt::Display for FaultPoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Aborts the process, or waits to be killed, if a debug build runs with
/// [`FAULT_ENV`] naming `at` (read at every point, so that a test can set
/// it per child).
pub(crate) fn abort_if_asked(at: FaultPoint) {
    if !cfg!(debug_assertions) {
        return;
    }
    let Ok(value) = std::env::var(FAULT_ENV) else {
        return;
    };
    if value == at.name() {
        std::process::abort();
    }
    if value.strip_suffix(WAIT_SUFFIX) == Some(at.name()) {
        use std::io::Write;
        let mut err = std::io::stderr().lock();
        // Nothing to do about a failed write: the parent then kills the
        // child on its timeout instead.
        let _ = writeln!(err, "{WAITING}{}", at.name());
        let _ = err.flush();
        drop(err);
        std::thread::sleep(std::time::Duration::from_secs(60));
        std::process::abort();
    }
}
