//! Dealt masks on an [`AnySketch`]: a client's mask expanded from the
//! seed the dealer sealed to it, and the dealer's correction, drawn and
//! added in the concrete sketch's own field or ring
//! ([`masking::dealer`](crate::masking::dealer)). Every client of a round
//! expands a mask of the sketch's length and the dealer expands them all,
//! so this is a round's per-element work: through canonical integers it
//! measured a fifth of a fit (docs/benchmarks.md).

use masked_sum::RoundContext;
use masked_sum::masking::dealer::{SealKey, deal_seeds, seeded_mask};
use rand::CryptoRng;

use super::{AnySketch, SealedSeeds, SketchInner, ValidAnyParams};
use crate::error::SketchResult;
use crate::sketch::{LinearParams, LinearSketch, MaskedSketch};

/// `s` plus client `client`'s mask expanded from `seed`.
fn seeded<S: LinearSketch>(
    s: &S,
    seed: &[u8; 32],
    client: u64,
    ctx: RoundContext,
) -> SketchResult<S> {
    let p = s.params();
    let mask = seeded_mask(&p.mask_domain(), seed, &ctx, client, p.num_elements())?;
    Ok(s.mask(&mask, client, ctx)?.into_masked())
}

/// The dealer's seals and its correction, as the zero sketch masked with
/// it.
fn dealt<S: LinearSketch, R: CryptoRng + ?Sized>(
    p: &S::Params,
    ctx: RoundContext,
    ring: &[(u64, &SealKey)],
    correction_id: u64,
    rng: &mut R,
) -> SketchResult<(SealedSeeds, S)> {
    let deal = deal_seeds(&p.mask_domain(), &ctx, ring, p.num_elements(), rng)?;
    let correction = S::new(p).mask(&deal.correction, correction_id, ctx)?;
    Ok((deal.sealed, correction.into_masked()))
}

impl AnySketch {
    /// The message of client `client_id` in `context` under dealt masks:
    /// the sketch plus the mask expanded from the `seed` the dealer sealed
    /// to it ([`seeded_mask`]), drawn in the concrete field or ring. The
    /// same message as [`mask`](LinearSketch::mask) with that mask.
    ///
    /// # Errors
    ///
    /// As [`seeded_mask`].
    ///
    /// # Example
    ///
    /// ```
    /// use syndrome_agg::masking::dealer::{SealKey, open_seed};
    /// use syndrome_agg::masking::pairwise::{RoundContext, SessionId};
    /// use syndrome_agg::{Aggregator, AnyParams, AnySketch, LinearSketch, Scheme, SketchParams};
    ///
    /// let params = AnyParams::new(Scheme::FieldKeys, SketchParams::new(2, 100u32)).validate()?;
    /// let ctx = RoundContext { session: SessionId([5; 32]), round: 0 };
    /// // Each client shares a key with the dealer (agreed once; here drawn).
    /// let keys = [(1u64, SealKey::from_secret_bytes([1; 32])), (2, SealKey::from_secret_bytes([2; 32]))];
    /// let ring: Vec<(u64, &SealKey)> = keys.iter().map(|(c, k)| (*c, k)).collect();
    /// let (sealed, correction) = AnySketch::deal(&params, ctx, &ring, 0, &mut rand::rng())?;
    /// let mut server = Aggregator::new(&params, ctx, 3);
    /// server.accept(&correction)?;
    /// for ((client, key), (_, seal)) in keys.iter().zip(&sealed) {
    ///     let seed = open_seed(key, &ctx, *client, &[1, 2], seal)?;
    ///     let sketch = AnySketch::encode(&params, [(7u32.into(), 1.into())])?;
    ///     server.accept(&sketch.mask_seeded(&seed, *client, ctx)?)?;
    /// }
    /// assert_eq!(server.decode()?.into_entries(), vec![(7u32.into(), 2.into())]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn mask_seeded(
        &self,
        seed: &[u8; 32],
        client_id: u64,
        context: RoundContext,
    ) -> SketchResult<MaskedSketch<Self>> {
        let inner = map!(&self.inner, s => seeded(s, seed, client_id, context)?);
        Ok(MaskedSketch::new(
            Self::wrap(&self.params, inner),
            client_id,
            context,
        ))
    }

    /// The dealer's part of a round under `params` ([`deal_seeds`], in the
    /// concrete field or ring): a fresh seed sealed to each client of
    /// `ring` under the key it shares with the dealer, and the correction
    /// (minus the sum of the clients' masks) as the message of the zero
    /// sketch from `correction_id`, which the server adds to the sum.
    ///
    /// # Errors
    ///
    /// As [`deal_seeds`] (a client named twice, a sealing failure).
    pub fn deal<R: CryptoRng + ?Sized>(
        params: &ValidAnyParams,
        context: RoundContext,
        ring: &[(u64, &SealKey)],
        correction_id: u64,
        rng: &mut R,
    ) -> SketchResult<(SealedSeeds, MaskedSketch<Self>)> {
        // Set in whichever arm runs, before the correction is made.
        let sealed: SealedSeeds;
        let inner = build!(&params.inner, p, S => {
            let (seals, correction) = dealt::<S, _>(p, context, ring, correction_id, rng)?;
            sealed = seals;
            correction
        });
        let correction = MaskedSketch::new(Self::wrap(params, inner), correction_id, context);
        Ok((sealed, correction))
    }
}

#[cfg(test)]
mod tests {
    use masked_sum::masking::dealer::open_seed;
    use masked_sum::masking::pairwise::{MaskKeyPair, SessionId, pairwise_mask};
    use num_bigint::BigUint;
    use rand::SeedableRng;
    use rand_chacha::ChaCha20Rng;

    use super::*;
    use crate::Aggregator;
    use crate::sketch::any::params::every_scheme;

    /// The masks drawn in the concrete field are the masks of the
    /// canonical mask domain, bit for bit: the same frames either way.
    #[test]
    fn masks_drawn_in_the_field_are_the_canonical_masks() {
        let ctx = RoundContext {
            session: SessionId([3; 32]),
            round: 2,
        };
        let mut rng = ChaCha20Rng::seed_from_u64(7);
        for params in every_scheme() {
            let (domain, len) = (params.mask_domain(), params.num_elements());
            let s = AnySketch::encode(&params, [(7u32.into(), 3.into())]).unwrap();
            let seed = [9u8; 32];
            let canonical = seeded_mask(&domain, &seed, &ctx, 4, len).unwrap();
            assert_eq!(
                s.mask_seeded(&seed, 4, ctx).unwrap().to_frame(),
                s.mask(&canonical, 4, ctx).unwrap().to_frame(),
                "{params:?}"
            );
            let keys: Vec<MaskKeyPair> = (0..3).map(|_| MaskKeyPair::generate(&mut rng)).collect();
            let peers: Vec<_> = [2u64, 3]
                .iter()
                .zip(&keys[1..])
                .map(|(c, k)| (*c, k.public_key()))
                .collect();
            let canonical = pairwise_mask(&domain, len, &keys[0], 1, &peers, &ctx).unwrap();
            assert_eq!(
                s.mask_pairwise(&keys[0], 1, &peers, ctx)
                    .unwrap()
                    .to_frame(),
                s.mask(&canonical, 1, ctx).unwrap().to_frame(),
                "{params:?}"
            );
        }
    }

    /// The dealer's correction cancels the masks it sealed: the server's
    /// sum decodes to the clients' sum, for every scheme; a client named
    /// twice is refused.
    #[test]
    fn a_deal_cancels_for_every_scheme() {
        let ctx = RoundContext {
            session: SessionId([1; 32]),
            round: 0,
        };
        let keys: Vec<(u64, SealKey)> = (1..=3u8)
            .map(|c| (u64::from(c), SealKey::from_secret_bytes([c; 32])))
            .collect();
        let ring: Vec<(u64, &SealKey)> = keys.iter().map(|(c, k)| (*c, k)).collect();
        let ids: Vec<u64> = ring.iter().map(|(c, _)| *c).collect();
        let mut rng = ChaCha20Rng::seed_from_u64(11);
        for params in every_scheme() {
            let (sealed, correction) = AnySketch::deal(&params, ctx, &ring, 0, &mut rng).unwrap();
            let mut server = Aggregator::new(&params, ctx, 4);
            server.accept(&correction).unwrap();
            for ((client, key), (named, seal)) in keys.iter().zip(&sealed) {
                assert_eq!(client, named);
                let seed = open_seed(key, &ctx, *client, &ids, seal).unwrap();
                let s =
                    AnySketch::encode(&params, [(BigUint::from(*client * 10), 2.into())]).unwrap();
                server
                    .accept(&s.mask_seeded(&seed, *client, ctx).unwrap())
                    .unwrap();
            }
            let want: Vec<_> = (1..=3u64)
                .map(|c| (BigUint::from(c * 10), 2.into()))
                .collect();
            assert_eq!(server.decode().unwrap().into_entries(), want, "{params:?}");
            let twice = [ring[0], ring[0]];
            assert!(AnySketch::deal(&params, ctx, &twice, 0, &mut rng).is_err());
        }
    }
}
