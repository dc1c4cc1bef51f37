//! A client's message in an aggregation round: its histogram encoded as a
//! sketch under the round's public parameters, masked with the client's
//! mask of the round, framed for the wire (Algorithm 2 of the paper,
//! lines 1-2).

use std::time::{Duration, Instant};

use num_bigint::{BigInt, BigUint};
use syndrome_agg::ConcreteSketch;
use syndrome_agg::masking::MaskVector;
use syndrome_agg::masking::pairwise::{MaskKeyPair, MaskPublicKey, RoundContext};

use crate::{ClientId, MufcResult};

/// The mask a client adds to its sketch in one round.
#[derive(Debug)]
pub(crate) enum ClientMask<'a, E> {
    /// Its share of the dealer's zero-sum masks.
    Dealt(&'a MaskVector<E>),
    /// Pairwise masks: its own key pair and its peers' public keys (its
    /// own entry may be among them; it is skipped).
    Pairwise {
        keys: &'a MaskKeyPair,
        directory: &'a [(u64, MaskPublicKey)],
    },
}

/// The sketch of a histogram under `params` (every count is unsigned,
/// within the parameters' bound), on the round's native elements.
///
/// # Errors
///
/// A bin outside the key domain, or a count the parameters refuse.
pub(crate) fn encode<S: ConcreteSketch>(
    params: &S::Params,
    histogram: &[(BigUint, u64)],
) -> MufcResult<S> {
    let mut sketch = S::new(params);
    for (bin, count) in histogram {
        sketch.insert_integer(bin, BigInt::from(*count))?;
    }
    Ok(sketch)
}

/// What a client sends in a round, and how long it took to make.
#[derive(Debug)]
pub(crate) struct ClientMessage {
    /// The frame's bytes.
    pub(crate) frame: Vec<u8>,
    /// The time to encode and mask (the framing is transport, not
    /// timed, as before the frames went through the parser).
    pub(crate) encode_mask: Duration,
}

/// The frame client `id` sends in the round of `ctx`: its histogram's
/// sketch plus `mask`, as bytes.
///
/// # Errors
///
/// As [`encode`]; a mask of the wrong length; a pairwise key agreement
/// that fails.
pub(crate) fn masked_frame<S: ConcreteSketch>(
    params: &S::Params,
    id: ClientId,
    histogram: &[(BigUint, u64)],
    mask: &ClientMask<'_, S::Elem>,
    ctx: RoundContext,
) -> MufcResult<ClientMessage> {
    let start = Instant::now();
    let sketch: S = encode(params, histogram)?;
    let masked = match mask {
        ClientMask::Dealt(m) => sketch.mask(m, id.0, ctx)?,
        ClientMask::Pairwise { keys, directory } => {
            let peers: Vec<(u64, MaskPublicKey)> = directory
                .iter()
                .filter(|(p, _)| *p != id.0)
                .copied()
                .collect();
            sketch.mask_pairwise(keys, id.0, &peers, ctx)?
        }
    };
    let encode_mask = start.elapsed();
    Ok(ClientMessage {
        frame: masked.to_frame().to_bytes()?,
        encode_mask,
    })
}
