//! The secure aggregation of the clients' histograms (Algorithm 2 of the
//! paper, SCMA), in its three flavours, and the masks that hide each
//! client's sketch: dealt zero-sum masks, pairwise masks, or a whole run of
//! the dropout-tolerant protocol ([`Masking::SecAgg`](crate::Masking::SecAgg),
//! `secagg_halves`), which masks inside the protocol and sums only the
//! clients it includes.
//!
//! Every round is a fresh round of the protocol: every current client
//! encodes its histogram (its last sketch, kept unmasked, updated by the
//! bins whose counts changed: `client/message.rs`), masks it with the
//! round's masks and sends it; the
//! server sums the masked messages (the masks cancel) and decodes. After
//! the first round the server decodes the *difference* between the new sum
//! and the previous one: a sparse signed vector with one entry per changed
//! count, which the decoders handle in time proportional to its size, not
//! to the capacity (Berlekamp-Massey stops at the locator's degree, root
//! finding works on that degree). Should the difference exceed the capacity
//! (a batch that reseeds many clients), the whole sum is decoded instead.
//!
//! How the server decodes (the whole sum, or its difference against the
//! last one, checked) is in `server/decode.rs`; what a client sends, in
//! `client/message.rs`. This module holds the aggregation's state (the
//! parameters, the round count, the last sum) and opens and joins the
//! parties' rounds, one for every sketch scheme, through [`AnySketch`]:
//! the halves of `halves.rs` (`framed/` for dealt and pairwise masks,
//! `secagg_halves.rs` for SecAgg), opened in `parties.rs` and
//! `change.rs`, which the parties' drivers carry (`remote::InProcess` in
//! memory, `mufc-net` across processes). The server's half concludes a
//! round's sum through `run.rs`.
//!
//! A round's sum is kept apart ([`Pending`]) and committed afterwards
//! ([`Aggregation::commit`]), so that a failure later in a request leaves
//! the aggregate as it was. The round *number* is consumed first, before
//! any mask exists: a failed round is never run again under its number.
//!
//! # Masks are never reused
//!
//! Every round is a fresh protocol session: its session id, the dealer's
//! masks, the clients' key pairs, and in [`Masking::SecAgg`](crate::Masking::SecAgg) the self-mask
//! seeds, Shamir polynomials and SecAgg+ graph come from a 256-bit secret
//! drawn from the operating system's random source for that round alone
//! ([`RoundSecrets`]). So two rounds never share a mask, whatever happens
//! between them: a failed round retried, an older save reloaded, a cloned
//! federation. Only with
//! [`FederationConfig::insecure_deterministic_masks`](crate::FederationConfig::insecure_deterministic_masks)
//! does the round's secret derive from the federation seed and the round
//! number (for tests and reproduction: a round number is still never
//! masked with twice by one federation).

mod change;
mod framed;
#[cfg(test)]
pub(crate) use framed::masked_elements;
pub(crate) use framed::masked_message;
mod halves;
mod masks;
mod parties;
mod round;
mod run;
mod secagg_halves;
mod secrets;
mod secure;

use std::collections::BTreeMap;

use num_bigint::BigUint;
use syndrome_agg::{
    AnyParams, AnySketch, CountPolicy, LinearParams, Scheme, SketchParams, ValidAnyParams,
    fastest_scheme,
};

use crate::ids::derive_bytes;
use crate::{ClientId, Masks, MufcError, MufcResult, Scma, SecAggStep};
use masks::MaskSource;
pub(crate) use secrets::{RoundSecrets, SecretSource};
use secure::SecAggSettings;

pub(crate) use halves::{Advanced, ClientHalf, ServerHalf};
pub use halves::{RoundProtocol, RoundSpec, Sends};
pub(crate) use round::{Sent, histogram_change};
pub(crate) use run::Pending;

/// The public description of the sketches, for reports.
///
/// # Example
///
/// ```
/// use mufc::{Channel, Federation, FederationConfig, Masks, Scma};
/// use nalgebra::DMatrix;
/// use seeding::Dataset;
///
/// let a = Dataset::new(DMatrix::from_fn(2, 30, |r, c| ((c * 7 + r) % 10) as f64 / 25.0 - 0.2))?;
/// // One client, for brevity: a lone aggregate needs `min_clients(1)`.
/// let config = FederationConfig::new(2).client_k(2).gamma(0.1).channel(Channel::Scma(Scma::wide(Masks::Dealer))).min_clients(1).validate()?;
/// let info = Federation::new(vec![a], &config)?.fit_report().sketch.clone().unwrap();
/// assert_eq!(info.capacity, 2); // t = k L
/// assert_eq!(info.modulus_bits, 64); // wide keys decode in GF(27 * 2^59 + 1)
/// assert!(info.elements > 2 * info.capacity); // 2t + r locator syndromes and payload channels
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SketchInfo {
    /// The capacity `t` (the most nonzero bins an aggregate may have).
    pub capacity: usize,
    /// The number of elements a client sends.
    pub elements: usize,
    /// The bits of the modulus the elements live in (the field's, or
    /// `k` of the integer ring `Z / 2^k`).
    pub modulus_bits: u64,
    /// The sketch in use: `"field keys"`, `"wide keys"` or `"integer"`
    /// (what [`Scma::Auto`] chose, or what the configuration named).
    pub scheme: String,
}

/// The sketch parameters and the last aggregate.
#[derive(Clone, Debug)]
struct SchemeState {
    /// The clients' sketches: unsigned counts up to the number of points.
    params: ValidAnyParams,
    /// The same sketches with signed counts, for differences between two
    /// rounds (`None`: the scheme decodes only whole sums).
    delta: Option<ValidAnyParams>,
    /// The last committed sum.
    last: Option<AnySketch>,
    /// Or its counts, not encoded yet (after loading, and after a change
    /// round on them): a change round moves the counts, and only a whole
    /// round, which decodes against the sketch, encodes them
    /// ([`Aggregation::materialize_last`]). Encoding every bin took a
    /// fifth of opening a store.
    restored: Option<BTreeMap<BigUint, u64>>,
    /// The bound the field must exceed (key domain, signed totals).
    bound: BigUint,
    /// The signed parameters of change rounds, by capacity (built once:
    /// validating may search a prime). A short list: a federation sees
    /// few capacities, and every client of a round builds one.
    small: Vec<(usize, ValidAnyParams)>,
}

/// The aggregation state of a federation in an SCMA mode: the sketch
/// parameters, the last aggregate (for decoding differences), the mask
/// source and the round counter.
#[derive(Clone, Debug)]
pub(crate) struct Aggregation {
    scheme: SchemeState,
    masking: MaskSource,
    secrets: SecretSource,
    /// The number of the next round: every round started so far, failed
    /// ones included.
    round: u64,
    /// The number of the last round committed, if one was since the
    /// aggregation was built or loaded: a change round across processes
    /// names it as its base, and opens only right after it (no round
    /// failed since, so that every client of the ring holds the same
    /// base).
    committed: Option<u64>,
    min_clients: usize,
    max_points: u64,
}

/// The settings an aggregation is built from.
pub(crate) struct AggregationSpec<'a> {
    /// The channel's sketch and masks (the plain mode has no aggregation:
    /// it cannot be written here).
    pub(crate) scma: &'a Scma,
    pub(crate) seed: u64,
    pub(crate) deterministic_masks: bool,
    pub(crate) capacity: usize,
    pub(crate) num_bins: &'a BigUint,
    pub(crate) max_points: u64,
    pub(crate) min_clients: usize,
}

/// Bits of `T N^(2t + r - 1)` (the integer scheme's modulus), computed from
/// bit lengths so that it cannot overflow; an upper bound within `2t + r`.
fn integer_modulus_bits(capacity: usize, extra: usize, num_bins: &BigUint, n: u64) -> u64 {
    let m = (capacity as u64)
        .saturating_mul(2)
        .saturating_add(extra as u64);
    m.saturating_sub(1)
        .saturating_mul(num_bins.bits())
        .saturating_add(u64::from(64 - n.leading_zeros()))
}

/// The unsigned and signed parameters of the field or wide scheme: both
/// in one field, which holds the key domain and signed differences of
/// totals up to `n` (`p > bound = max(B^d, 2n)`), so a difference of two
/// sums decodes under the signed ones.
fn paired(
    scheme: Scheme,
    sketch: SketchParams,
    bound: &BigUint,
    n: u64,
) -> MufcResult<(ValidAnyParams, Option<ValidAnyParams>)> {
    let with = |counts| {
        AnyParams::new(scheme.clone(), sketch.clone().with_counts(counts))
            .with_field_bound(bound.clone())
            .validate()
    };
    Ok((
        with(CountPolicy::unsigned(n))?,
        Some(with(CountPolicy::signed(n))?),
    ))
}

/// Where the masks of `spec`'s rounds come from, for `clients` (the ids
/// of the first round).
fn mask_source(
    spec: &AggregationSpec<'_>,
    _secrets: SecretSource,
    clients: &[ClientId],
) -> MufcResult<MaskSource> {
    // The integer ring's masks have no SecAgg variant: a SecAgg round
    // always has a field.
    Ok(match spec.scma.masks() {
        Masks::Dealer => MaskSource::Dealer,
        Masks::Pairwise => MaskSource::Pairwise,
        Masks::SecAgg(options) => {
            let settings = SecAggSettings {
                seed: spec.seed,
                dropout: options.dropout_rate(),
                colluding: options.colluding_fraction(),
                graph: options.neighbourhood(),
                min_clients: spec.min_clients,
            };
            // Refuse rates no parameters suit before any round runs.
            settings.params(clients.len())?;
            MaskSource::SecAgg(settings)
        }
    })
}

impl Aggregation {
    /// Parameters and masks for `clients` (the ids of the first round).
    pub(crate) fn new(spec: &AggregationSpec<'_>, clients: &[ClientId]) -> MufcResult<Self> {
        let t = spec.capacity;
        let n = spec.max_points;
        let extra = spec.scma.extra();
        let sketch = SketchParams::new(t, spec.num_bins.clone()).with_extra(extra);
        // One field holds the key domain and signed differences of totals
        // up to n; Auto asks the cost model for the fastest scheme.
        let bound = spec.num_bins.clone().max(BigUint::from(n) * 2u32);
        // The public hash key of wide keys and partitioned buckets.
        let hash_key = derive_bytes(spec.seed, "wide-hash-key", 0);
        let (params, delta) = match spec.scma {
            Scma::Auto { .. } => {
                let scheme = fastest_scheme(&sketch, &bound, hash_key)?;
                paired(scheme, sketch, &bound, n)?
            }
            Scma::Wide { .. } => paired(Scheme::WideKeys { hash_key }, sketch, &bound, n)?,
            Scma::Partitioned { .. } => {
                paired(Scheme::Partitioned { hash_key }, sketch, &bound, n)?
            }
            Scma::Field { .. } => paired(Scheme::FieldKeys, sketch, &bound, n)?,
            Scma::Integer { max_capacity, .. } => {
                if t > *max_capacity {
                    let k = integer_modulus_bits(t, extra, spec.num_bins, n);
                    let m = (t as u64).saturating_mul(2).saturating_add(extra as u64);
                    return Err(MufcError::IntegerDecoderTooLarge {
                        capacity: t,
                        max: *max_capacity,
                        sketch_bits: m.saturating_mul(k),
                        syndrome_bits: k,
                    });
                }
                let counts = CountPolicy::unsigned(n);
                let params = AnyParams::new(Scheme::Integer, sketch.with_counts(counts));
                (params.validate()?, None)
            }
        };
        let secrets = if spec.deterministic_masks {
            SecretSource::Derived { seed: spec.seed }
        } else {
            SecretSource::Fresh
        };
        let masking = mask_source(spec, secrets, clients)?;
        Ok(Self {
            scheme: SchemeState {
                params,
                delta,
                last: None,
                restored: None,
                bound,
                small: Vec::new(),
            },
            masking,
            secrets,
            round: 0,
            committed: None,
            min_clients: spec.min_clients,
            max_points: spec.max_points,
        })
    }

    /// This aggregation for group `group` of a federation with groups:
    /// the same sketch parameters (so that group sums add up), but
    /// derived round secrets of its own, so that no two groups share a
    /// mask even with
    /// [`FederationConfig::insecure_deterministic_masks`](crate::FederationConfig::insecure_deterministic_masks)
    /// (fresh secrets are drawn per round anyway).
    pub(crate) fn in_group(mut self, group: u64) -> Self {
        if let SecretSource::Derived { seed } = self.secrets {
            let bytes = derive_bytes(seed, "group-secrets", group);
            let mut first = [0u8; 8];
            first.copy_from_slice(&bytes[..8]);
            self.secrets = SecretSource::Derived {
                seed: u64::from_le_bytes(first),
            };
        }
        self
    }

    /// Draws a client's round secrets from `key`, which it keeps
    /// ([`SecretSource::Keyed`]; `RemoteClient::with_round_key`).
    pub(crate) fn keep_round_key(&mut self, key: [u8; 32]) {
        self.secrets = SecretSource::Keyed { key };
    }

    /// The number of rounds started so far (failed ones included).
    pub(crate) fn rounds(&self) -> u64 {
        self.round
    }

    /// Sets the round counter (after loading a saved federation), and
    /// takes the last round it counts for the last committed one: a
    /// store is written at a commit, so it is, unless (with groups)
    /// another group's commit saved this group's counter after a round
    /// of its own failed. A change round against a base that is not a
    /// client's own is refused by that client and the next round is
    /// whole, so the guess costs at most one round, never a wrong model.
    /// The number of the last round committed, if one was since the
    /// aggregation was set up or restored: a change round's base.
    pub(crate) fn committed(&self) -> Option<u64> {
        self.committed
    }

    pub(crate) fn set_rounds(&mut self, rounds: u64) {
        self.round = rounds;
        self.committed = rounds.checked_sub(1);
    }

    /// The clients' sketch parameters.
    #[cfg(test)]
    #[cfg(test)]
    pub(crate) fn params(&self) -> &ValidAnyParams {
        &self.scheme.params
    }

    /// The first SecAgg step client `c` misses in round `round` when the
    /// configuration's dropout rate is simulated (as [`Federation`]'s
    /// rounds and [`InProcess`](crate::remote::InProcess) do); `None`
    /// with other masks, which have no dropouts.
    ///
    /// [`Federation`]: crate::Federation
    pub(crate) fn simulated_dropout(&self, round: u64, c: ClientId) -> Option<SecAggStep> {
        match &self.masking {
            MaskSource::SecAgg(settings) => settings.dropped_from(round, c),
            MaskSource::Dealer | MaskSource::Pairwise => None,
        }
    }

    /// The sketch parameters, for reports.
    pub(crate) fn info(&self) -> SketchInfo {
        let p = &self.scheme.params;
        SketchInfo {
            capacity: p.sketch_params().capacity(),
            elements: p.num_elements(),
            modulus_bits: p.modulus_bits(),
            scheme: p.scheme().name().to_string(),
        }
    }

    /// Keeps a round's aggregate (the round counter advanced when the
    /// round started). In process the round committed is the last one
    /// started: rounds run one at a time.
    pub(crate) fn commit(&mut self, pending: Pending) {
        self.committed = self.round.checked_sub(1);
        match pending.0 {
            Some(run::Last::Sketch(sum)) => {
                self.scheme.last = Some(*sum);
                self.scheme.restored = None;
            }
            Some(run::Last::Counts(counts)) => {
                self.scheme.last = None;
                self.scheme.restored = Some(counts);
            }
            None => {}
        }
    }

    /// Encodes the last sum's counts, if they are not yet: a whole round
    /// decodes against the sketch.
    fn materialize_last(&mut self) -> MufcResult<()> {
        if let Some(counts) = self.scheme.restored.take() {
            use syndrome_agg::LinearSketch;
            let hist = counts
                .iter()
                .map(|(b, c)| (b.clone(), num_bigint::BigInt::from(*c)));
            self.scheme.last = Some(AnySketch::encode(&self.scheme.params, hist)?);
        }
        Ok(())
    }

    /// Takes over from `before`, the aggregation of the same federation
    /// before clients joined (this one is sized for the new roster): its
    /// round counter goes on, so no round's secrets are drawn twice, and
    /// its last sum is `counts`, kept as counts. No round is committed at
    /// this capacity yet: the next round is whole.
    pub(crate) fn continuing(&mut self, before: &Self, counts: &BTreeMap<BigUint, u64>) {
        self.round = before.round;
        self.committed = None;
        self.scheme.last = None;
        self.scheme.restored = self.scheme.delta.is_some().then(|| counts.clone());
    }

    /// Sets the last aggregate to the sketch of `counts` (after loading:
    /// the sum of the masked messages of a round is exactly this sketch).
    /// Kept as counts, encoded when a whole round needs the sketch.
    pub(crate) fn restore_last(&mut self, counts: &BTreeMap<BigUint, u64>) -> MufcResult<()> {
        if self.scheme.delta.is_some() {
            self.scheme.last = None;
            self.scheme.restored = Some(counts.clone());
        }
        Ok(())
    }
}
