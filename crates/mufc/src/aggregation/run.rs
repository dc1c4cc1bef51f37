//! What a round gives and how its sum is decoded: the server's halves
//! (`framed/server.rs`, `secagg_halves.rs`) conclude through these, so
//! the decoding is written once whatever masks the round ran.

use std::time::Instant;

use num_bigint::BigInt;

use syndrome_agg::{AnySketch, ValidAnyParams};

use crate::MufcResult;
use crate::server::decode::{Decoded, DeltaCheck, Previous, decode, decode_change};

/// The new aggregate, to keep once the request succeeds (`None` for a
/// scheme that keeps nothing: the integer scheme always decodes the
/// whole sum).
#[derive(Clone, Debug)]
pub(crate) struct Pending(pub(super) Option<Last>);

/// The last sum to keep: its sketch, or its counts (encoded when a whole
/// round needs them, see `SchemeState::restored`).
#[derive(Clone, Debug)]
pub(crate) enum Last {
    Sketch(Box<AnySketch>),
    Counts(std::collections::BTreeMap<num_bigint::BigUint, u64>),
}

/// Decodes a round's `sum` (of `params`): its difference against the
/// `last` committed sum under the signed `delta` parameters when it passes
/// the `check`, else the whole sum; with the aggregate to keep (only a
/// scheme that decodes differences keeps one) and the decoding time.
pub(super) fn conclude(
    sum: AnySketch,
    delta: Option<&ValidAnyParams>,
    last: Option<&AnySketch>,
    check: &DeltaCheck<'_>,
) -> MufcResult<(Decoded, Pending, std::time::Duration)> {
    let previous = match (last, delta) {
        (Some(last), Some(delta)) => Some(Previous { last, delta }),
        _ => None,
    };
    let start = Instant::now();
    let decoded = decode(&sum, previous, check)?;
    let time = start.elapsed();
    let pending = match delta {
        Some(_) => Pending(Some(Last::Sketch(Box::new(sum)))),
        None => Pending(None),
    };
    Ok((decoded, pending, time))
}

/// Decodes the sum of a change round's messages (of the small signed
/// parameters) into the change of the aggregate, and moves the `last`
/// committed sum by it, for the rounds that
/// decode against it later; `None` when the sum does not decode to counts
/// the `check` accepts (the caller then runs a whole round).
pub(super) fn conclude_change(
    sum: &AnySketch,
    last: &AnySketch,
    check: &DeltaCheck<'_>,
) -> MufcResult<Option<(Decoded, Pending)>> {
    let Some(decoded) = decode_change(sum, check) else {
        return Ok(None);
    };
    let mut moved = last.clone();
    for (bin, change) in &decoded {
        let from = check.last.get(bin).copied().unwrap_or(0);
        let to = i128::from(from) + change;
        moved.change(bin, &BigInt::from(from), &BigInt::from(to))?;
    }
    let pending = Pending(Some(Last::Sketch(Box::new(moved))));
    Ok(Some((Decoded::Delta(decoded), pending)))
}

/// [`conclude_change`] when the last sum is kept as counts (`check.last`):
/// the counts move by the change, and nothing is encoded.
pub(super) fn conclude_change_counts(
    sum: &AnySketch,
    check: &DeltaCheck<'_>,
) -> Option<(Decoded, Pending)> {
    let decoded = decode_change(sum, check)?;
    let mut counts = check.last.clone();
    for (bin, change) in &decoded {
        let from = counts.get(bin).copied().unwrap_or(0);
        let to = u64::try_from(i128::from(from).checked_add(*change)?).ok()?;
        if to == 0 {
            counts.remove(bin);
        } else {
            counts.insert(bin.clone(), to);
        }
    }
    Some((Decoded::Delta(decoded), Pending(Some(Last::Counts(counts)))))
}
