//! The server's reading of client payloads: masked inputs as field
//! elements and unmasking responses as the shares that were asked for,
//! with the refusal both give for a payload that does not fit. A leaf: it
//! knows nothing of the server's state.

// Untrusted input reaches this module (docs/threat-model.md §4): no
// panicking index, unwrap or expect, and no unchecked arithmetic.
#![deny(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::arithmetic_side_effects
)]

use std::collections::{BTreeMap, BTreeSet};

use field::FiniteField;

use super::super::messages::UnmaskingResponse;
use super::super::session::share_id;
use super::super::shamir::SecretShare;
use crate::context::ClientId;
use crate::error::{ProtocolError, SumError, SumResult};

/// A parsed unmasking response.
pub(super) struct Revealed {
    pub(super) seeds: BTreeMap<ClientId, SecretShare>,
    pub(super) keys: BTreeMap<ClientId, SecretShare>,
}

/// The refusal of a client message that does not fit
/// ([`ProtocolError::MessageRejected`]).
pub(super) fn rejected<T>(reason: String) -> SumResult<T> {
    Err(SumError::Protocol(ProtocolError::MessageRejected {
        reason,
    }))
}

pub(super) fn parse_elements<F: FiniteField>(
    f: &F,
    bytes: &[u8],
    count: usize,
) -> SumResult<Vec<F::Elem>> {
    let w = f.byte_len();
    let expected = count.saturating_mul(w);
    if bytes.len() != expected || w == 0 {
        return Err(SumError::WrongLength {
            expected,
            found: bytes.len(),
        });
    }
    bytes
        .chunks_exact(w)
        .map(|c| f.from_bytes(c).map_err(|_| SumError::NonCanonical))
        .collect()
}

pub(super) fn parse_response(
    responder: ClientId,
    resp: &UnmaskingResponse,
    alive: &BTreeSet<ClientId>,
    dropped: &BTreeSet<ClientId>,
) -> SumResult<Revealed> {
    let mut seeds = BTreeMap::new();
    let mut keys = BTreeMap::new();
    for (list, out, allowed, own_ok) in [
        (&resp.seed_shares, &mut seeds, alive, true),
        (&resp.key_shares, &mut keys, dropped, false),
    ] {
        for r in list {
            let asked = allowed.contains(&r.owner) || (own_ok && r.owner == responder);
            if !asked {
                return rejected(format!(
                    "client {responder} revealed a share of {} that was not asked for",
                    r.owner
                ));
            }
            let share = SecretShare::from_bytes(&r.share)?;
            if share.id != share_id(responder) {
                return rejected(format!("client {responder} sent a share with another id"));
            }
            if out.insert(r.owner, share).is_some() {
                return rejected(format!(
                    "client {responder} revealed two shares of {}",
                    r.owner
                ));
            }
        }
    }
    Ok(Revealed { seeds, keys })
}
