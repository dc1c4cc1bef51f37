//! A client's message in an aggregation round: its histogram encoded as a
//! sketch under the round's public parameters, masked with the client's
//! mask of the round, framed for the wire (Algorithm 2 of the paper,
//! lines 1-2).
//!
//! A client keeps the unmasked sketch of its last committed message
//! ([`Encoded`]). The sketch is linear, so the next one is that sketch
//! updated by the bins whose counts changed ([`sketch_of`]): a removal
//! that changes one bin costs one insert (`2t + r` multiplications), not
//! one per bin, and a client whose histogram did not change encodes
//! nothing. Only the unmasked sketch is kept: every round masks it afresh
//! with that round's mask (the module docs of `aggregation`, "Masks are
//! never reused").

use std::borrow::Cow;
use std::collections::BTreeMap;

use num_bigint::{BigInt, BigUint};
use syndrome_agg::masking::pairwise::{MaskKeyPair, MaskPublicKey, RoundContext};
use syndrome_agg::{AnySketch, LinearSketch, ValidAnyParams};

use crate::{ClientId, MufcResult};

/// The sketch of a histogram under `params` (every count is unsigned,
/// within the parameters' bound).
///
/// # Errors
///
/// A bin outside the key domain, or a count the parameters refuse.
pub(crate) fn encode(
    params: &ValidAnyParams,
    histogram: &[(BigUint, u64)],
) -> MufcResult<AnySketch> {
    let mut sketch = AnySketch::new(params);
    for (bin, count) in histogram {
        sketch.insert(bin, &BigInt::from(*count))?;
    }
    Ok(sketch)
}

/// The unmasked sketch of a client's last committed message and the
/// histogram it encodes.
#[derive(Clone, Debug)]
pub(crate) struct Encoded {
    pub(crate) histogram: Vec<(BigUint, u64)>,
    pub(crate) sketch: AnySketch,
}

/// The counts of `histogram` by bin (repeated bins add up).
fn counts(histogram: &[(BigUint, u64)]) -> BTreeMap<&BigUint, u64> {
    let mut m = BTreeMap::new();
    for (bin, c) in histogram {
        let e = m.entry(bin).or_insert(0u64);
        *e = e.saturating_add(*c);
    }
    m
}

/// The sketch of `histogram` under `params`: `last`, the client's last
/// sketch, as it is when it encodes this histogram, or updated by the
/// bins whose counts changed ([`AnySketch::change`], one insert per
/// changed bin); without a last sketch of these parameters,
/// every bin encoded afresh. The same elements either way (the sketch is
/// linear, its arithmetic exact). A new sketch is owned: the caller keeps
/// it once the round commits.
///
/// # Errors
///
/// As [`encode`].
pub(crate) fn sketch_of<'a>(
    params: &ValidAnyParams,
    histogram: &[(BigUint, u64)],
    last: Option<&'a Encoded>,
) -> MufcResult<Cow<'a, AnySketch>> {
    let Some(last) = last.filter(|e| e.sketch.params() == params) else {
        return Ok(Cow::Owned(encode(params, histogram)?));
    };
    if last.histogram == histogram {
        return Ok(Cow::Borrowed(&last.sketch));
    }
    let (old, new) = (counts(&last.histogram), counts(histogram));
    let mut sketch = last.sketch.clone();
    for (bin, &from) in &old {
        let to = new.get(bin).copied().unwrap_or(0);
        if from != to {
            sketch.change(bin, &BigInt::from(from), &BigInt::from(to))?;
        }
    }
    for (bin, &to) in &new {
        if !old.contains_key(bin) {
            sketch.change(bin, &BigInt::ZERO, &BigInt::from(to))?;
        }
    }
    Ok(Cow::Owned(sketch))
}

/// The frame client `id` sends in the round of `ctx` under pairwise
/// masks: `sketch` plus its masks against the peers of `directory` (its
/// own entry may be among them; it is skipped), drawn in the sketch's own
/// field, as bytes.
///
/// # Errors
///
/// A pairwise key agreement that fails.
pub(crate) fn pairwise_frame(
    id: ClientId,
    sketch: &AnySketch,
    keys: &MaskKeyPair,
    directory: &[(u64, MaskPublicKey)],
    ctx: RoundContext,
) -> MufcResult<Vec<u8>> {
    let peers: Vec<(u64, MaskPublicKey)> = directory
        .iter()
        .filter(|(p, _)| *p != id.0)
        .copied()
        .collect();
    let masked = sketch.mask_pairwise(keys, id.0, &peers, ctx)?;
    Ok(masked.to_frame().to_bytes()?)
}
