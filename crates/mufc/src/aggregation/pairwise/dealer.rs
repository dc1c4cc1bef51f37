//! The dealer's half of a dealt round: the server's forwarded key
//! directory in, each client's sealed seed and the correction out
//! (`syndrome_agg::masking::dealer`). In one process the aggregation plays
//! the dealer with a static key of its own ([`DealerKey`]); the clients
//! hold its public key as they would hold a deployment's pinned one.

use std::collections::BTreeSet;

use rand_chacha::ChaCha20Rng;
use syndrome_agg::masking::dealer::deal_seeds;
use syndrome_agg::masking::pairwise::{MaskKeyPair, MaskPublicKey};
use syndrome_agg::{ConcreteSketch, LinearParams, SketchVisitor, ValidAnyParams};
use zeroize::Zeroizing;

use super::{CORRECTION, Dealt, Directory, SealedBytes, from_bytes, rejected, to_bytes};
use crate::aggregation::halves::{DealerHalf, RoundSpec};
use crate::aggregation::secrets::SecretSource;
use crate::client::message::{ClientMask, masked_frame};
use crate::ids::derive_bytes;
use crate::{ClientId, MufcResult};

/// The static key of the dealer a federation plays in process: drawn
/// from the operating system when the aggregation is built (derived from
/// the seed under `insecure_deterministic_masks`). Redacted in `Debug`.
#[derive(Clone)]
pub(crate) struct DealerKey(Zeroizing<[u8; 32]>);

impl core::fmt::Debug for DealerKey {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("DealerKey(..)")
    }
}

impl DealerKey {
    /// A key from `source`.
    ///
    /// # Errors
    ///
    /// The operating system's random source failed.
    pub(crate) fn new(source: SecretSource) -> MufcResult<Self> {
        let bytes = match source {
            SecretSource::Derived { seed } => derive_bytes(seed, "dealer-key", 0),
            SecretSource::Fresh => {
                let secrets = crate::aggregation::secrets::RoundSecrets::new(source, 0)?;
                secrets.secret("dealer-key", 0)
            }
        };
        Ok(Self(Zeroizing::new(bytes)))
    }

    fn pair(&self) -> MaskKeyPair {
        MaskKeyPair::from_secret_bytes(*self.0)
    }

    /// The public key every client of the federation holds.
    pub(crate) fn public_key(&self) -> MaskPublicKey {
        self.pair().public_key()
    }
}

/// The dealer's half of one round: it answers one request, the round's.
pub(crate) struct DealerParty {
    spec: RoundSpec,
    keys: MaskKeyPair,
    /// The parameters the clients' messages are made under (the round's
    /// mask domain and length).
    params: ValidAnyParams,
    rng: ChaCha20Rng,
    done: bool,
}

impl DealerParty {
    /// The dealer of round `spec`, with its static `key`, for messages
    /// under `params`, drawing the seeds from `rng` (a cryptographic
    /// generator seeded with a secret of this round alone).
    pub(crate) fn new(
        spec: RoundSpec,
        key: &DealerKey,
        params: ValidAnyParams,
        rng: ChaCha20Rng,
    ) -> Self {
        Self {
            spec,
            keys: key.pair(),
            params,
            rng,
            done: false,
        }
    }
}

impl DealerHalf for DealerParty {
    fn handle(&mut self, bytes: &[u8]) -> MufcResult<Vec<u8>> {
        if self.done {
            return Err(rejected(format!(
                "the dealer dealt round {} already",
                self.spec.round
            )));
        }
        let d: Directory = from_bytes(bytes, 64 << 20, "a deal request")?;
        if d.session != self.spec.session || d.round != self.spec.round {
            return Err(rejected("a deal request of another round".into()));
        }
        let named: BTreeSet<u64> = d.keys.iter().map(|(c, _)| *c).collect();
        let ring: BTreeSet<u64> = self.spec.ring.iter().map(|c| c.0).collect();
        if named.len() != d.keys.len() || named != ring {
            return Err(rejected(
                "a deal request that does not name the round's clients once each".into(),
            ));
        }
        let (sealed, correction) = self.params.visit(Deal {
            spec: &self.spec,
            keys: &self.keys,
            directory: &d.keys,
            rng: &mut self.rng,
        })?;
        self.done = true;
        to_bytes(&Dealt {
            session: self.spec.session,
            round: self.spec.round,
            sealed,
            correction,
        })
    }
}

/// The deal on the concrete sketch: the sealed seeds, and the correction
/// as the frame of an empty sketch masked with it.
struct Deal<'a> {
    spec: &'a RoundSpec,
    keys: &'a MaskKeyPair,
    directory: &'a [(u64, MaskPublicKey)],
    rng: &'a mut ChaCha20Rng,
}

/// The sealed seeds, by client, and the correction's frame.
type Dealing = (Vec<(u64, SealedBytes)>, Vec<u8>);

impl Deal<'_> {
    fn run<S: ConcreteSketch>(self, params: &S::Params) -> MufcResult<Dealing> {
        let ctx = self.spec.context();
        let deal = deal_seeds(
            &params.mask_domain(),
            &ctx,
            self.keys,
            self.directory,
            params.num_elements(),
            self.rng,
        )?;
        let mask = ClientMask::Dealt(&deal.correction);
        let frame = masked_frame::<S>(ClientId(CORRECTION), &S::new(params), &mask, ctx)?;
        let sealed = deal
            .sealed
            .into_iter()
            .map(|(c, s)| (c, SealedBytes(s)))
            .collect();
        Ok((sealed, frame))
    }
}

impl SketchVisitor for Deal<'_> {
    type Output = MufcResult<Dealing>;

    fn visit_field<S, F>(self, params: &S::Params, _: &F) -> Self::Output
    where
        S: ConcreteSketch,
        F: syndrome_agg::field::FiniteField<Elem = S::Elem>,
    {
        self.run::<S>(params)
    }

    fn visit_ring<S: ConcreteSketch>(self, params: &S::Params) -> Self::Output {
        self.run::<S>(params)
    }
}
