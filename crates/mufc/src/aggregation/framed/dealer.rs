//! The dealer's half of a dealt round: the server's request (the ring)
//! in, each client's sealed seed and the correction out
//! (`syndrome_agg::masking::dealer`). The dealer is a party of its own
//! ([`RemoteDealer`](crate::remote::RemoteDealer)) whose key with each
//! client the two agreed once (`SealKey::agree`, [`PairKeys::Agreed`]).

use std::collections::{BTreeMap, BTreeSet};

use rand_chacha::ChaCha20Rng;
use syndrome_agg::masking::dealer::SealKey;
use syndrome_agg::{AnySketch, ValidAnyParams};

use super::{CORRECTION, DealRequest, Dealt, SealedBytes, from_bytes, rejected, to_bytes};
use crate::aggregation::halves::{DealerHalf, RoundSpec};
use crate::{ClientId, MufcResult};
#[cfg(test)]
use {
    crate::aggregation::secrets::{RoundSecrets, SecretSource},
    crate::ids::derive_bytes,
    zeroize::Zeroizing,
};

/// Keys a dealer shares with its clients, each pair's derived from one
/// secret (the tests' dealer, which plays every party). Redacted in
/// `Debug`.
#[cfg(test)]
#[derive(Clone)]
pub(crate) struct DealerKeys(Zeroizing<[u8; 32]>);

#[cfg(test)]
impl core::fmt::Debug for DealerKeys {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("DealerKeys(..)")
    }
}

#[cfg(test)]
impl DealerKeys {
    /// Keys from `source`.
    ///
    /// # Errors
    ///
    /// The operating system's random source failed.
    pub(crate) fn new(source: SecretSource) -> MufcResult<Self> {
        let bytes = match source {
            SecretSource::Derived { seed } => derive_bytes(seed, "dealer-pairs", 0),
            SecretSource::Fresh | SecretSource::Keyed { .. } => {
                RoundSecrets::new(source, 0)?.secret("dealer-pairs", 0)
            }
        };
        Ok(Self(Zeroizing::new(bytes)))
    }

    /// The key the dealer and client `client` share.
    pub(crate) fn pair(&self, client: ClientId) -> SealKey {
        use sha2::{Digest, Sha256};
        let mut h = Sha256::new();
        h.update(b"mufc/v1/dealer-pair/");
        h.update(*self.0);
        h.update(client.0.to_le_bytes());
        SealKey::from_secret_bytes(h.finalize().into())
    }
}

/// The keys a dealer seals with, one per client: drawn for a simulation
/// that plays every party ([`DealerKeys`]), or agreed with each client
/// (`SealKey::agree`, by the dealer a deployment runs:
/// [`RemoteDealer`](crate::remote::RemoteDealer)).
#[derive(Clone, Debug)]
pub(crate) enum PairKeys {
    /// Keys derived from one secret (tests).
    #[cfg(test)]
    Simulated(DealerKeys),
    /// The keys agreed with the clients, by client.
    Agreed(BTreeMap<ClientId, SealKey>),
}

impl PairKeys {
    /// The key the dealer shares with `client`.
    fn pair(&self, client: ClientId) -> MufcResult<SealKey> {
        match self {
            #[cfg(test)]
            Self::Simulated(keys) => Ok(keys.pair(client)),
            Self::Agreed(keys) => keys.get(&client).cloned().ok_or_else(|| {
                rejected(format!(
                    "a deal for client {client}, with whom the dealer shares no key"
                ))
            }),
        }
    }
}

/// The dealer's half of one round: it answers one request, the round's.
pub(crate) struct DealerParty {
    spec: RoundSpec,
    keys: PairKeys,
    /// The parameters the clients' messages are made under (the round's
    /// mask domain and length).
    params: ValidAnyParams,
    rng: ChaCha20Rng,
    done: bool,
}

impl DealerParty {
    /// The dealer of round `spec`, with the `keys` it shares with the
    /// clients, for messages under `params`, drawing the seeds from `rng`
    /// (a cryptographic generator seeded with a secret of this round
    /// alone).
    pub(crate) fn new(
        spec: RoundSpec,
        keys: PairKeys,
        params: ValidAnyParams,
        rng: ChaCha20Rng,
    ) -> Self {
        Self {
            spec,
            keys,
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
        let d: DealRequest = from_bytes(bytes, 64 << 20, "a deal request")?;
        if d.session != self.spec.session || d.round != self.spec.round {
            return Err(rejected("a deal request of another round".into()));
        }
        let named: BTreeSet<u64> = d.ring.iter().copied().collect();
        let ring: BTreeSet<u64> = self.spec.ring.iter().map(|c| c.0).collect();
        if named.len() != d.ring.len() || named != ring {
            return Err(rejected(
                "a deal request that does not name the round's clients once each".into(),
            ));
        }
        let keys: Vec<(u64, SealKey)> = d
            .ring
            .iter()
            .map(|c| Ok((*c, self.keys.pair(ClientId(*c))?)))
            .collect::<MufcResult<_>>()?;
        let (sealed, correction) = deal(&self.params, &self.spec, &keys, &mut self.rng)?;
        self.done = true;
        to_bytes(&Dealt {
            session: self.spec.session,
            round: self.spec.round,
            sealed,
            correction,
        })
    }
}

/// The sealed seeds, by client, and the correction's frame.
type Dealing = (Vec<(u64, SealedBytes)>, Vec<u8>);

/// The deal: the sealed seeds, by client, and the correction as the
/// frame of an empty sketch masked with it, drawn in the sketch's own
/// field.
fn deal(
    params: &ValidAnyParams,
    spec: &RoundSpec,
    keys: &[(u64, SealKey)],
    rng: &mut ChaCha20Rng,
) -> MufcResult<Dealing> {
    let ring: Vec<(u64, &SealKey)> = keys.iter().map(|(c, k)| (*c, k)).collect();
    let (sealed, correction) = AnySketch::deal(params, spec.context(), &ring, CORRECTION, rng)?;
    let sealed = sealed
        .into_iter()
        .map(|(c, s)| (c, SealedBytes(s)))
        .collect();
    Ok((sealed, correction.to_frame().to_bytes()?))
}
