//! Saving and loading a whole federation (postcard: every `f64` round-trips
//! exactly).
//!
//! What is stored: the resolved configuration (its topology included),
//! each client's id, points and seeds, the decoded counts, the sketch
//! capacity, the round counter, the reports, the removal requests still
//! pending ([`Federation::pending`](crate::Federation::pending)) with what the aggregate still holds
//! of the clients they name (the histogram of each one's last message:
//! their points are erased already) and, for a federation with groups,
//! each group's clients, round counter, included clients and decoded
//! counts. Loading rebuilds every client's clustering from its points and
//! the configuration, and the server's K-means (every node's, with groups)
//! from the counts: by exactness (see the crate docs) that is the saved
//! state, bit for bit, and the stored seeds and counts are checked
//! against it (each group's counts against its included members'
//! histograms, and the groups' sum against the root's).
//!
//! # File format, version 12
//!
//! | offset       | bytes | contents                                              |
//! |--------------|-------|-------------------------------------------------------|
//! | 0            | 7     | magic `MUFCFED`                                       |
//! | 7            | 1     | format version, `12`                                  |
//! | 8            | 8     | body length `n`, unsigned little endian               |
//! | 16           | `n`   | body: the state, postcard                             |
//! | 16 + `n`     | 32    | SHA-256 of bytes `0 .. 16 + n` (magic to body)        |
//!
//! Loading checks, in order: the magic ([`MufcError::Persistence`] if it is
//! not there: not a saved federation), the version
//! ([`PersistError::UnsupportedVersion`]), the length against the bytes
//! there are ([`PersistError::Truncated`] when they are fewer,
//! [`PersistError::Corrupt`] when there are more), then the checksum
//! ([`PersistError::Corrupt`]), and only then parses the body (nothing is
//! allocated from the length field). So a flipped bit anywhere, a
//! truncation or an extension is refused with a typed error, never loaded
//! as a different federation. The checksum detects damage, not tampering:
//! anyone can write a valid file, so a saved federation is as trusted as
//! the data it holds (the body's parsing is still bounded and its contents
//! still checked).
//!
//! Versions 1 and 2 had no checksum (a test flipped each bit of a version 2
//! file: 3134 of 3472 flips loaded as a *different* federation, so the
//! loader's own checks cannot vouch for such a file). They are refused with
//! [`PersistError::UnsupportedVersion`], whose message says why: rebuild
//! the federation from its data and save it again.
//!
//! # Atomic saves
//!
//! [`Federation::save`](crate::Federation::save) writes a temporary file in the target's directory,
//! flushes it to disk, renames it over the target and flushes the
//! directory: a crash or an error at any point leaves either the old file
//! or the new one, whole. A crash (not an error) may leave the temporary
//! file (`.mufc-save-*.tmp`) behind.

// Saved files come from outside (docs/threat-model.md §8): no panicking
// index, unwrap or expect, and no unchecked arithmetic.
#![deny(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::arithmetic_side_effects
)]

pub(crate) mod body;
mod format;
#[cfg(test)]
mod groups_tests;
mod load;
pub(crate) mod save;
mod snapshot;

pub(crate) use body::Repr;
pub(crate) use format::{bad, corrupt, open};
pub(crate) use load::{Restored, restore};
pub(crate) use save::{sealed, write_atomically};
pub use snapshot::{ClientSnapshot, ServerSnapshot};

#[cfg(doc)]
use crate::{MufcError, PersistError};

/// The sum of the histograms the aggregate holds of the clients
/// `included`: each one's last message, which is its histogram (of
/// `clients`) unless its round waits (`unsent`). What a decoded aggregate
/// that included them holds, against which a loaded file's counts are
/// checked (the whole federation's, or a group's); `None` when an
/// included client is in neither.
pub(crate) fn included_sum(
    clients: &[crate::Client],
    unsent: &std::collections::BTreeMap<crate::ClientId, crate::state::unsent::Unsent>,
    included: &std::collections::BTreeSet<crate::ClientId>,
) -> Option<std::collections::BTreeMap<num_bigint::BigUint, u64>> {
    let mut sum = std::collections::BTreeMap::new();
    for c in included {
        let histogram = match unsent.get(c) {
            Some(u) => u.sent.as_slice(),
            None => clients
                .binary_search_by_key(c, crate::Client::id)
                .ok()
                .and_then(|p| clients.get(p))?
                .histogram(),
        };
        for (b, n) in histogram {
            let e = sum.entry(b.clone()).or_insert(0u64);
            *e = e.saturating_add(*n);
        }
    }
    Some(sum)
}
