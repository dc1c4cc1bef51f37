//! The file format of a saved federation (see the `persist` module docs):
//! the header, the checksum, sealing a body into a file and opening a file
//! back into its body, and the errors of a file that is not a whole saved
//! federation.

use crate::{MufcError, MufcResult, PersistError};

/// The magic that opens every saved federation (then the version byte).
const MAGIC: &[u8; 7] = b"MUFCFED";

/// Version 12: the ids of the clients that left whole, at the end of the
/// body (a loaded federation let a join take one). A version 11 file is
/// refused: its body ends before that field.
///
/// Version 11: the additions whose rounds wait (records that arrive,
/// issue 29), at the end of the body. A version 10 file is refused: its
/// body ends before that field.
///
/// Version 10: why a federation serves no model, if a request withdrew
/// it (below the minimum aggregate), at the end of the body. A version 9
/// file is refused: its body ends before that field.
///
/// Version 9: the client configuration's adaptive `k` (the rule and the
/// value it resolved to), minimum cluster size and K-means runs, and the
/// rule for gamma (issue 26). A version 8 file is refused: its client
/// configuration has a fixed or absent `k` and no minimum size.
///
/// Version 8: what the aggregate still holds of the clients whose
/// points a pending request erased (a request the privacy policy defers
/// erases its points at once; version 7 kept them until the round). A
/// version 7 file is refused: its pending requests' points are still in
/// its clients.
///
/// Version 7: the configuration's topology and a federation's groups
/// (each group's clients, round counter, included clients and counts;
/// the tree's fan-out). Version 6 had no groups: a federation with groups
/// could not be saved. A version 6 file is refused: its configuration
/// has no topology.
///
/// Version 6: `Scma::Auto` chooses by `syndrome-agg`'s measured cost
/// model, which may pick a partitioned sketch (and `Scma::Partitioned`);
/// a version 5 file could rebuild a different scheme than it was saved
/// with, so it is refused.
///
/// Version 5: the channel's `Scma::Auto` (the default: the fastest exact
/// sketch) and the fit report's sketch scheme. A version 4 file is
/// refused.
///
/// Version 4: the configuration in three parts (client, server, channel;
/// docs/architecture.md), the body otherwise as version 3. A version 3
/// file is refused: its configuration has the flat shape.
///
/// Version 3: a body length and a SHA-256 checksum around the body (and
/// the configuration's `insecure_deterministic_masks`, the pending removal
/// requests, and the reports' outcome, request numbers and privacy
/// warning). Version 2 had the
/// reports name dropped clients and the protocol's times, the
/// configuration the dropout settings; version 1 had neither. Neither had
/// a checksum.
const VERSION: u8 = 12;

/// Magic, version and body length.
const HEADER_LEN: usize = 16;

/// The SHA-256 checksum.
const CHECKSUM_LEN: usize = 32;

pub(crate) fn bad(what: impl Into<String>) -> MufcError {
    MufcError::Persistence(what.into())
}

pub(crate) fn corrupt(reason: impl Into<String>) -> MufcError {
    PersistError::Corrupt {
        reason: reason.into(),
    }
    .into()
}

fn checksum(bytes: &[u8]) -> [u8; CHECKSUM_LEN] {
    use sha2::{Digest, Sha256};
    Sha256::digest(bytes).into()
}

/// Wraps a body: magic, version, length, body, checksum.
pub(super) fn seal(body: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(
        body.len()
            .saturating_add(HEADER_LEN)
            .saturating_add(CHECKSUM_LEN),
    );
    out.extend_from_slice(MAGIC);
    out.push(VERSION);
    out.extend_from_slice(&(body.len() as u64).to_le_bytes());
    out.extend_from_slice(body);
    let sum = checksum(&out);
    out.extend_from_slice(&sum);
    out
}

/// The body of sealed `bytes`, once the header, the length and the
/// checksum are checked (see the `persist` module docs).
pub(crate) fn open(bytes: &[u8]) -> MufcResult<&[u8]> {
    let found = bytes.len() as u64;
    let m = bytes.len().min(MAGIC.len());
    if bytes.get(..m) != MAGIC.get(..m) {
        return Err(bad("not a saved federation (bad header)"));
    }
    let truncated = |expected: u64| PersistError::Truncated { expected, found };
    let Some(&version) = bytes.get(MAGIC.len()) else {
        return Err(truncated(HEADER_LEN as u64).into());
    };
    if version != VERSION {
        return Err(PersistError::UnsupportedVersion {
            found: version,
            supported: VERSION,
        }
        .into());
    }
    let Some(len) = bytes.get(8..HEADER_LEN) else {
        return Err(truncated(HEADER_LEN as u64).into());
    };
    let mut word = [0u8; 8];
    word.copy_from_slice(len);
    let len = u64::from_le_bytes(word);
    let total = len
        .checked_add((HEADER_LEN + CHECKSUM_LEN) as u64)
        .ok_or_else(|| corrupt(format!("impossible body length {len}")))?;
    if found < total {
        return Err(truncated(total).into());
    }
    if found > total {
        return Err(corrupt(format!(
            "{} bytes after the checksum",
            found.saturating_sub(total)
        )));
    }
    // `total` is the length of `bytes`, so the body's end fits a usize.
    let end = bytes.len().saturating_sub(CHECKSUM_LEN);
    let (sealed, sum) = bytes.split_at_checked(end).unwrap_or((bytes, &[]));
    if checksum(sealed) != sum {
        return Err(corrupt("the checksum does not match the contents"));
    }
    sealed
        .get(HEADER_LEN..)
        .ok_or_else(|| corrupt("the body is shorter than its header"))
}
