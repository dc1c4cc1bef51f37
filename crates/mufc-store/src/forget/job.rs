//! What a call asks for ([`Job`]), and the small words every part of
//! serving a request shares: a leaf of the `forget` module, so that its
//! parts use it rather than their parent.

use crate::error::StoreError;
use crate::record::RecordId;
use mufc::MufcError;

/// What a call asks for.
#[derive(Clone, Copy)]
pub(super) enum Job<'a> {
    Records(&'a [RecordId]),
    Client(&'a str),
    Flush,
    Overdue,
    /// Records to add; with `true`, a name the store does not know joins
    /// as a new client.
    Add(
        &'a [crate::types::ClientRecords],
        crate::types::OnForgotten,
        bool,
    ),
}

/// The error of a call that found nothing to do where it must.
pub(super) fn empty() -> StoreError {
    StoreError::Mufc(MufcError::EmptyRequest)
}

/// "1 record", "3 records".
pub(super) fn plural(n: usize, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}
