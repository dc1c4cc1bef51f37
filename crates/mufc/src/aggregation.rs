//! The secure aggregation of the clients' histograms (Algorithm 2 of the
//! paper, SCMA), in its three flavours, and the masks that hide each
//! client's sketch: dealt zero-sum masks, pairwise masks, or a whole run of
//! the dropout-tolerant protocol ([`Masking::SecAgg`], in `secure`), which
//! masks inside the protocol and sums only the clients it includes.
//!
//! Every round is a fresh round of the protocol: every current client
//! encodes its histogram, masks it with the round's masks and sends it; the
//! server sums the masked messages (the masks cancel) and decodes. After
//! the first round the server decodes the *difference* between the new sum
//! and the previous one: a sparse signed vector with one entry per changed
//! count, which the decoders handle in time proportional to its size, not
//! to the capacity (Berlekamp-Massey stops at the locator's degree, root
//! finding works on that degree). Should the difference exceed the capacity
//! (a batch that reseeds many clients), the whole sum is decoded instead.
//!
//! A decoded difference is accepted only if the counts it leads to are
//! within the capacity and the count bound; then they are the aggregate,
//! certainly: both they and the true aggregate have at most `t` nonzero
//! bins and the same `2t + r` syndromes, and two such vectors are equal
//! (their difference, with at most `2t` nonzeros, would be a kernel vector
//! of a Vandermonde matrix of `2t + r` rows). Otherwise the whole sum is
//! decoded. This matters with dropouts ([`Masking::SecAgg`]): when the
//! included clients change between rounds, the difference holds whole
//! histograms and may well exceed the capacity.
//!
//! A round is computed without touching the aggregate
//! ([`Aggregation::round`]) and committed afterwards
//! ([`Aggregation::commit`]), so that a failure later in a request leaves
//! the aggregate as it was. The round *number* is consumed first, before
//! any mask exists: a failed round is never run again under its number.
//!
//! # Masks are never reused
//!
//! Every round is a fresh protocol session: its session id, the dealer's
//! masks, the clients' key pairs, and in [`Masking::SecAgg`] the self-mask
//! seeds, Shamir polynomials and SecAgg+ graph come from a 256-bit secret
//! drawn from the operating system's random source for that round alone
//! ([`RoundSecrets`]). So two rounds never share a mask, whatever happens
//! between them: a failed round retried, an older save reloaded, a cloned
//! federation. Only with
//! [`FederationConfig::insecure_deterministic_masks`](crate::FederationConfig::insecure_deterministic_masks)
//! do they derive from the federation seed and the round number (the
//! masks of earlier versions, for tests and reproduction).

pub(crate) mod secrets;
mod secure;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};
use syndrome_agg::{DecodeError, ParamsError};

use field::primes::{FieldChoice, cheapest_field};
use field::{BigPrime, Field, FiniteField, Mersenne61, Mersenne127};
use num_bigint::{BigInt, BigUint};
use num_traits::ToPrimitive;
use syndrome_agg::masking::pairwise::{MaskKeyPair, MaskPublicKey, RoundContext, pairwise_mask};
use syndrome_agg::masking::{MaskDomain, MaskVector, deal_zero_sum_masks};
use syndrome_agg::wide::{ValidWideKeyParams, WideKeyParams, WideSketch};
use syndrome_agg::{
    Aggregator, CountPolicy, IntegerParams, IntegerSketch, LinearParams, LinearSketch, Sketch,
    SketchError, SketchParams, ValidIntegerParams, ValidSketchParams,
};

use crate::ids::derive_bytes;
use crate::{ClientId, Masking, MufcError, MufcResult, Privacy, SecAggGraph, par};
pub(crate) use secrets::MaskedInputs;
use secrets::{RoundSecrets, SecretSource};
use secure::{SecAggSettings, SecureRound};
use syndrome_agg::secagg::Step;

/// One client's input to a round: its id and histogram.
pub(crate) struct Input<'a> {
    pub(crate) id: ClientId,
    pub(crate) histogram: &'a [(BigUint, u64)],
}

/// What the server decoded.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Decoded {
    /// The change of the aggregate since the last round: `(bin, change)`.
    Delta(Vec<(BigUint, i128)>),
    /// The whole aggregate.
    Full(Vec<(BigUint, u64)>),
}

/// The new aggregate, to keep once the request succeeds.
#[derive(Clone, Debug)]
pub(crate) enum Pending {
    Field61(Sketch<Mersenne61>),
    Field127(Sketch<Mersenne127>),
    FieldBig(Sketch<BigPrime>),
    Wide(WideSketch<Mersenne61>),
    /// The integer scheme keeps nothing: it always decodes the whole sum.
    Nothing,
}

/// A computed round, not yet committed.
#[derive(Debug)]
pub(crate) struct RoundOutput {
    pub(crate) decoded: Decoded,
    pub(crate) pending: Pending,
    /// Encode + mask time of each client, in input order (with SecAgg:
    /// encoding only, the masking is in the protocol).
    pub(crate) encode_mask: Vec<Duration>,
    /// SecAgg: per step the slowest client's time, added up.
    pub(crate) protocol_client_max: Duration,
    /// SecAgg: every client's protocol time.
    pub(crate) protocol_client_sum: Duration,
    /// SecAgg: the clients that dropped, with the first step they missed.
    pub(crate) dropped: Vec<(ClientId, Step)>,
    pub(crate) sum: Duration,
    pub(crate) decode: Duration,
    /// Time to deal the masks (offline work).
    pub(crate) offline: Duration,
    pub(crate) included: Vec<ClientId>,
    pub(crate) bytes_per_client: usize,
    pub(crate) messages: Option<Vec<(ClientId, Vec<u8>)>>,
}

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
/// let config = FederationConfig::new(2).gamma(0.1).channel(Channel::Scma(Scma::wide(Masks::Dealer))).min_clients(1).validate()?;
/// let info = Federation::new(vec![a], &config)?.fit_report().sketch.clone().unwrap();
/// assert_eq!(info.capacity, 2); // t = k L
/// assert_eq!(info.modulus_bits, 61); // wide keys decode in GF(2^61 - 1)
/// assert!(info.elements > 2 * info.capacity); // 2t + r locator syndromes and payload channels
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct SketchInfo {
    /// The capacity `t` (the most nonzero bins an aggregate may have).
    pub capacity: usize,
    /// The number of elements a client sends.
    pub elements: usize,
    /// The bits of the modulus the elements live in (the field's, or
    /// `k` of the integer ring `Z / 2^k`).
    pub modulus_bits: u64,
}

#[derive(Clone, Debug)]
struct FieldScheme<F: FiniteField> {
    params: ValidSketchParams<F>,
    delta: ValidSketchParams<F>,
    last: Option<Sketch<F>>,
}

#[derive(Clone, Debug)]
struct WideScheme {
    params: ValidWideKeyParams<Mersenne61>,
    delta: ValidWideKeyParams<Mersenne61>,
    last: Option<WideSketch<Mersenne61>>,
}

#[derive(Clone, Debug)]
enum Scheme {
    Field61(FieldScheme<Mersenne61>),
    Field127(FieldScheme<Mersenne127>),
    FieldBig(FieldScheme<BigPrime>),
    Integer(ValidIntegerParams),
    Wide(Box<WideScheme>),
}

/// Where the masks of a round come from.
#[derive(Clone, Debug)]
enum MaskSource {
    /// The offline dealer.
    Dealer,
    /// Pairwise masks; the simulation plays every client, drawing each
    /// client's key pair for the round.
    Pairwise,
    /// The dropout-tolerant protocol, run afresh every round.
    SecAgg(SecAggSettings),
}

/// The masks of one round.
enum RoundMasks<E> {
    Dealt(Vec<MaskVector<E>>),
    Pairwise {
        keys: BTreeMap<ClientId, MaskKeyPair>,
        directory: Vec<(u64, MaskPublicKey)>,
    },
}

impl<E: Clone> RoundMasks<E> {
    fn mask_of<D: MaskDomain<Elem = E>>(
        &self,
        domain: &D,
        pos: usize,
        id: ClientId,
        len: usize,
        ctx: &RoundContext,
    ) -> MufcResult<MaskVector<E>> {
        match self {
            Self::Dealt(masks) => masks.get(pos).cloned().ok_or(MufcError::UnknownClient(id)),
            Self::Pairwise { keys, directory } => {
                let own = keys.get(&id).ok_or(MufcError::UnknownClient(id))?;
                let peers: Vec<(u64, MaskPublicKey)> = directory
                    .iter()
                    .filter(|(p, _)| *p != id.0)
                    .copied()
                    .collect();
                Ok(pairwise_mask(domain, len, own, id.0, &peers, ctx)?)
            }
        }
    }
}

/// The aggregation state of a federation in an SCMA mode: the sketch
/// parameters, the last aggregate (for decoding differences), the mask
/// source and the round counter.
#[derive(Clone, Debug)]
pub(crate) struct Aggregation {
    scheme: Scheme,
    masking: MaskSource,
    secrets: SecretSource,
    /// The number of the next round: every round started so far, failed
    /// ones included.
    round: u64,
    /// The masked vectors of the last round started (failed or not), when
    /// recording; read by the tests.
    #[cfg_attr(not(all(test, feature = "serde")), allow(dead_code))]
    last_masked: Option<(u64, MaskedInputs)>,
    /// Makes the next round fail once its masked vectors exist (tests).
    #[cfg(test)]
    fail_after_masking: bool,
    min_clients: usize,
    max_points: u64,
    parallel: bool,
    record: bool,
}

/// The settings an aggregation is built from.
pub(crate) struct AggregationSpec<'a> {
    pub(crate) privacy: Privacy,
    pub(crate) masking: Masking,
    pub(crate) seed: u64,
    pub(crate) deterministic_masks: bool,
    pub(crate) capacity: usize,
    pub(crate) extra: usize,
    pub(crate) num_bins: &'a BigUint,
    pub(crate) max_points: u64,
    pub(crate) integer_max_capacity: usize,
    pub(crate) min_clients: usize,
    pub(crate) parallel: bool,
    pub(crate) record: bool,
    pub(crate) dropout: f64,
    pub(crate) colluding: f64,
    pub(crate) secagg_graph: SecAggGraph,
}

fn field_scheme<F: FiniteField>(
    f: F,
    capacity: usize,
    extra: usize,
    num_bins: &BigUint,
    max_points: u64,
) -> MufcResult<FieldScheme<F>> {
    let base = SketchParams::new(capacity, num_bins.clone()).with_extra(extra);
    let params = base
        .clone()
        .with_counts(CountPolicy::unsigned(max_points))
        .validate(f.clone())?;
    let delta = base
        .with_counts(CountPolicy::signed(max_points))
        .validate(f)?;
    Ok(FieldScheme {
        params,
        delta,
        last: None,
    })
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

impl Aggregation {
    /// Parameters and masks for `clients` (the ids of the first round).
    pub(crate) fn new(spec: &AggregationSpec<'_>, clients: &[ClientId]) -> MufcResult<Self> {
        let t = spec.capacity;
        let scheme = match spec.privacy {
            Privacy::Scma => {
                // p > max(B^d, 2n): keys are the bins, and signed
                // differences of totals up to n must not wrap.
                let bound = spec
                    .num_bins
                    .clone()
                    .max(BigUint::from(spec.max_points) * 2u32);
                match cheapest_field(&bound) {
                    FieldChoice::Mersenne61(f) => Scheme::Field61(field_scheme(
                        f,
                        t,
                        spec.extra,
                        spec.num_bins,
                        spec.max_points,
                    )?),
                    FieldChoice::Mersenne127(f) => Scheme::Field127(field_scheme(
                        f,
                        t,
                        spec.extra,
                        spec.num_bins,
                        spec.max_points,
                    )?),
                    FieldChoice::Big(f) => Scheme::FieldBig(field_scheme(
                        f,
                        t,
                        spec.extra,
                        spec.num_bins,
                        spec.max_points,
                    )?),
                }
            }
            Privacy::ScmaInteger => {
                if t > spec.integer_max_capacity {
                    let k = integer_modulus_bits(t, spec.extra, spec.num_bins, spec.max_points);
                    let m = (t as u64)
                        .saturating_mul(2)
                        .saturating_add(spec.extra as u64);
                    return Err(MufcError::IntegerDecoderTooLarge {
                        capacity: t,
                        max: spec.integer_max_capacity,
                        sketch_bits: m.saturating_mul(k),
                        syndrome_bits: k,
                    });
                }
                Scheme::Integer(
                    IntegerParams::new(t, spec.num_bins.clone(), spec.max_points)
                        .with_extra(spec.extra)
                        .validate()?,
                )
            }
            Privacy::ScmaWide => {
                let key_len = usize::try_from(spec.num_bins.bits().div_ceil(8)).map_err(|_| {
                    MufcError::Sketch(SketchError::Params(ParamsError::KeyTooLong {
                        len: usize::MAX,
                        max: syndrome_agg::wide::MAX_WIDE_KEY_LEN,
                    }))
                })?;
                let hash_key = derive_bytes(spec.seed, "wide-hash-key", 0);
                let base = WideKeyParams::new(t, key_len, hash_key).with_extra(spec.extra);
                let params = base
                    .clone()
                    .with_counts(CountPolicy::unsigned(spec.max_points))
                    .validate(Mersenne61)?;
                let delta = base
                    .with_counts(CountPolicy::signed(spec.max_points))
                    .validate(Mersenne61)?;
                Scheme::Wide(Box::new(WideScheme {
                    params,
                    delta,
                    last: None,
                }))
            }
            Privacy::Plain => {
                return Err(crate::error::config_error(
                    "privacy",
                    "the plain mode has no secure aggregation",
                ));
            }
        };
        let masking = match spec.masking {
            Masking::Dealer => MaskSource::Dealer,
            Masking::Pairwise => MaskSource::Pairwise,
            Masking::SecAgg => {
                if matches!(scheme, Scheme::Integer(_)) {
                    return Err(crate::error::config_error(
                        "masking",
                        "secagg needs a field; the integer scheme works in a ring",
                    ));
                }
                let settings = SecAggSettings {
                    seed: spec.seed,
                    dropout: spec.dropout,
                    colluding: spec.colluding,
                    graph: spec.secagg_graph,
                    min_clients: spec.min_clients,
                };
                // Refuse rates no parameters suit before any round runs.
                settings.params(clients.len())?;
                MaskSource::SecAgg(settings)
            }
        };
        let secrets = if spec.deterministic_masks {
            SecretSource::Derived { seed: spec.seed }
        } else {
            SecretSource::Fresh
        };
        Ok(Self {
            scheme,
            masking,
            secrets,
            round: 0,
            last_masked: None,
            #[cfg(test)]
            fail_after_masking: false,
            min_clients: spec.min_clients,
            max_points: spec.max_points,
            parallel: spec.parallel,
            record: spec.record,
        })
    }

    /// The number of rounds started so far (failed ones included).
    pub(crate) fn rounds(&self) -> u64 {
        self.round
    }

    /// The round number and masked vectors of the last round started,
    /// failed or not, when recording.
    #[cfg(all(test, feature = "serde"))]
    pub(crate) fn last_masked(&self) -> Option<&(u64, MaskedInputs)> {
        self.last_masked.as_ref()
    }

    /// Makes the next round fail right after its masked vectors exist.
    #[cfg(all(test, feature = "serde"))]
    pub(crate) fn fail_next_round_after_masking(&mut self) {
        self.fail_after_masking = true;
    }

    /// Sets the round counter (after loading a saved federation).
    #[cfg(feature = "serde")]
    pub(crate) fn set_rounds(&mut self, rounds: u64) {
        self.round = rounds;
    }

    /// The sketch parameters, for reports.
    pub(crate) fn info(&self) -> SketchInfo {
        match &self.scheme {
            Scheme::Field61(s) => field_info(&s.params),
            Scheme::Field127(s) => field_info(&s.params),
            Scheme::FieldBig(s) => field_info(&s.params),
            Scheme::Integer(p) => SketchInfo {
                capacity: p.capacity(),
                elements: p.num_syndromes(),
                modulus_bits: p.ring().bits(),
            },
            Scheme::Wide(w) => SketchInfo {
                capacity: w.params.sketch_params().capacity(),
                elements: w.params.num_elements(),
                modulus_bits: w.params.field().modulus_bits(),
            },
        }
    }

    fn masks<D: MaskDomain>(
        &self,
        round: &Round<'_>,
        domain: &D,
        inputs: &[Input<'_>],
        len: usize,
    ) -> (RoundMasks<D::Elem>, Duration) {
        match &self.masking {
            MaskSource::Dealer => {
                let start = Instant::now();
                let mut rng = round.secrets.rng("dealer", round.ctx.round);
                let masks = deal_zero_sum_masks(domain, inputs.len(), len, &mut rng);
                (RoundMasks::Dealt(masks), start.elapsed())
            }
            MaskSource::Pairwise => {
                // The simulation plays every client: each draws its key
                // pair for the round (a deployment draws it in the
                // client's own process).
                let keys: BTreeMap<ClientId, MaskKeyPair> = inputs
                    .iter()
                    .map(|i| {
                        let secret = round.secrets.secret("pairwise-key", i.id.0);
                        (i.id, MaskKeyPair::from_secret_bytes(secret))
                    })
                    .collect();
                let directory = keys.iter().map(|(c, k)| (c.0, k.public_key())).collect();
                (RoundMasks::Pairwise { keys, directory }, Duration::ZERO)
            }
            // The protocol masks inside its own run; no mask is dealt.
            MaskSource::SecAgg(_) => (RoundMasks::Dealt(Vec::new()), Duration::ZERO),
        }
    }

    /// Runs one round over `inputs` (every current client, in id order)
    /// without changing the aggregate; `last` are the counts the server
    /// decoded in the last round (against which a decoded difference is
    /// checked).
    ///
    /// The round number is consumed first, before any secret is drawn or
    /// any mask exists: should the round (or anything after it) fail, the
    /// next round runs under the next number, with other secrets.
    pub(crate) fn round(
        &mut self,
        inputs: &[Input<'_>],
        last: &BTreeMap<BigUint, u64>,
    ) -> MufcResult<RoundOutput> {
        let number = self.round;
        self.round = number.saturating_add(1);
        self.last_masked = None;
        let secrets = RoundSecrets::new(self.secrets)?;
        let round = Round {
            ctx: RoundContext {
                session: secrets.session(),
                round: number,
            },
            secrets: &secrets,
        };
        let check = DeltaCheck {
            last,
            capacity: self.info().capacity,
            max_points: self.max_points,
        };
        let mut masked = self.record.then(Vec::new);
        let out = match &self.scheme {
            Scheme::Field61(s) => {
                self.field_round(&round, s, inputs, &check, Pending::Field61, &mut masked)
            }
            Scheme::Field127(s) => {
                self.field_round(&round, s, inputs, &check, Pending::Field127, &mut masked)
            }
            Scheme::FieldBig(s) => {
                self.field_round(&round, s, inputs, &check, Pending::FieldBig, &mut masked)
            }
            Scheme::Integer(p) => self.integer_round(&round, p, inputs, &mut masked),
            Scheme::Wide(w) => self.wide_round(&round, w, inputs, &check, &mut masked),
        };
        self.last_masked = masked.map(|m| (number, m));
        #[cfg(test)]
        if std::mem::take(&mut self.fail_after_masking) {
            return Err(
                SketchError::Protocol(syndrome_agg::ProtocolError::MessageRejected {
                    reason: "injected failure after masking".into(),
                })
                .into(),
            );
        }
        out
    }

    /// A round through the protocol: every client encodes (in parallel,
    /// timed), then the protocol runs over the encodings.
    fn secure_round<F: FiniteField, S>(
        &self,
        round: &Round<'_>,
        field: &F,
        inputs: &[Input<'_>],
        encode: impl Fn(&Input<'_>) -> MufcResult<S> + Sync,
        elements: impl Fn(S) -> Vec<F::Elem>,
        masked: &mut Option<MaskedInputs>,
    ) -> MufcResult<Option<SecureRound<F::Elem>>>
    where
        S: Send,
    {
        let MaskSource::SecAgg(settings) = &self.masking else {
            return Ok(None);
        };
        let encoded = par::map(self.parallel, inputs, |_, input| {
            let start = Instant::now();
            let sketch = encode(input)?;
            Ok::<_, MufcError>((sketch, start.elapsed()))
        })?;
        let times = encoded.iter().map(|(_, t)| *t).collect();
        let vectors = inputs
            .iter()
            .zip(encoded)
            .map(|(i, (s, _))| (i.id, elements(s)))
            .collect();
        let run = settings.run(
            field.clone(),
            round.ctx,
            round.secrets,
            vectors,
            self.record,
            masked,
        )?;
        Ok(Some(SecureRound {
            encode: times,
            ..run
        }))
    }

    /// Keeps a round's aggregate (the round counter advanced when the
    /// round started).
    pub(crate) fn commit(&mut self, pending: Pending) {
        match (&mut self.scheme, pending) {
            (Scheme::Field61(s), Pending::Field61(p)) => s.last = Some(p),
            (Scheme::Field127(s), Pending::Field127(p)) => s.last = Some(p),
            (Scheme::FieldBig(s), Pending::FieldBig(p)) => s.last = Some(p),
            (Scheme::Wide(w), Pending::Wide(p)) => w.last = Some(p),
            _ => {}
        }
    }

    /// Sets the last aggregate to the sketch of `counts` (after loading:
    /// the sum of the masked messages of a round is exactly this sketch).
    #[cfg(feature = "serde")]
    pub(crate) fn restore_last(&mut self, counts: &BTreeMap<BigUint, u64>) -> MufcResult<()> {
        match &mut self.scheme {
            Scheme::Field61(s) => s.last = Some(encode_field(&s.params, counts.iter())?),
            Scheme::Field127(s) => s.last = Some(encode_field(&s.params, counts.iter())?),
            Scheme::FieldBig(s) => s.last = Some(encode_field(&s.params, counts.iter())?),
            Scheme::Wide(w) => w.last = Some(encode_wide(&w.params, counts.iter())?),
            Scheme::Integer(_) => {}
        }
        Ok(())
    }

    fn field_round<F: FiniteField>(
        &self,
        round: &Round<'_>,
        s: &FieldScheme<F>,
        inputs: &[Input<'_>],
        check: &DeltaCheck<'_>,
        wrap: fn(Sketch<F>) -> Pending,
        masked: &mut Option<MaskedInputs>,
    ) -> MufcResult<RoundOutput> {
        let f = s.params.field();
        let len = s.params.num_syndromes();
        let ctx = round.ctx;
        if let Some(run) = self.secure_round(
            round,
            f,
            inputs,
            |i| encode_field(&s.params, i.histogram.iter().map(|(b, c)| (b, c))),
            Sketch::into_elements,
            masked,
        )? {
            let sum = Sketch::from_elements(&s.params, run.sum.clone())?;
            let (decoded, decode) = timed(|| decode_field(s, &sum, check))?;
            return Ok(secure_output(run, decoded, wrap(sum), decode));
        }
        let (masks, offline) = self.masks(round, f, inputs, len);
        let msgs = par::map(self.parallel, inputs, |pos, input| {
            let start = Instant::now();
            let sketch = encode_field(&s.params, input.histogram.iter().map(|(b, c)| (b, c)))?;
            let mask = masks.mask_of(f, pos, input.id, len, &ctx)?;
            let masked = sketch.mask(&mask, input.id.0, ctx)?;
            Ok::<_, MufcError>((masked, start.elapsed()))
        })?;
        log_masked(masked, &msgs, inputs, |m| {
            m.elements().iter().map(|e| f.to_bytes(e)).collect()
        });
        let start = Instant::now();
        let mut agg = Aggregator::new(&s.params, ctx, self.min_clients);
        for (m, _) in &msgs {
            agg.accept(m)?;
        }
        let included: Vec<ClientId> = agg.clients().iter().map(|&c| ClientId(c)).collect();
        let sum = agg.finish()?;
        let sum_time = start.elapsed();
        let (decoded, decode) = timed(|| decode_field(s, &sum, check))?;
        self.finish(
            ServerSide {
                decoded,
                pending: wrap(sum),
                sum: sum_time,
                decode,
                offline,
                included,
            },
            msgs,
            inputs,
            |m, _| Ok(m.to_frame().to_bytes()?),
        )
    }

    fn wide_round(
        &self,
        round: &Round<'_>,
        w: &WideScheme,
        inputs: &[Input<'_>],
        check: &DeltaCheck<'_>,
        masked: &mut Option<MaskedInputs>,
    ) -> MufcResult<RoundOutput> {
        let f = w.params.field();
        let len = w.params.num_elements();
        let ctx = round.ctx;
        if let Some(run) = self.secure_round(
            round,
            f,
            inputs,
            |i| encode_wide(&w.params, i.histogram.iter().map(|(b, c)| (b, c))),
            WideSketch::into_elements,
            masked,
        )? {
            let sum = WideSketch::from_elements(&w.params, run.sum.clone())?;
            let (decoded, decode) = timed(|| decode_wide(w, &sum, check))?;
            return Ok(secure_output(run, decoded, Pending::Wide(sum), decode));
        }
        let (masks, offline) = self.masks(round, f, inputs, len);
        let msgs = par::map(self.parallel, inputs, |pos, input| {
            let start = Instant::now();
            let sketch = encode_wide(&w.params, input.histogram.iter().map(|(b, c)| (b, c)))?;
            let mask = masks.mask_of(f, pos, input.id, len, &ctx)?;
            let masked = sketch.mask(&mask, input.id.0, ctx)?;
            Ok::<_, MufcError>((masked, start.elapsed()))
        })?;
        log_masked(masked, &msgs, inputs, |m| {
            m.elements().iter().map(|e| f.to_bytes(e)).collect()
        });
        let start = Instant::now();
        let mut agg = Aggregator::new(&w.params, ctx, self.min_clients);
        for (m, _) in &msgs {
            agg.accept(m)?;
        }
        let sum: WideSketch<Mersenne61> = agg.finish()?;
        let included = inputs.iter().map(|i| i.id).collect();
        let sum_time = start.elapsed();
        let (decoded, decode) = timed(|| decode_wide(w, &sum, check))?;
        self.finish(
            ServerSide {
                decoded,
                pending: Pending::Wide(sum),
                sum: sum_time,
                decode,
                offline,
                included,
            },
            msgs,
            inputs,
            |m, _| Ok(m.to_frame().to_bytes()?),
        )
    }

    fn integer_round(
        &self,
        round: &Round<'_>,
        p: &ValidIntegerParams,
        inputs: &[Input<'_>],
        masked: &mut Option<MaskedInputs>,
    ) -> MufcResult<RoundOutput> {
        let ring = p.ring();
        let len = p.num_syndromes();
        let ctx = round.ctx;
        let (masks, offline) = self.masks(round, ring, inputs, len);
        let msgs = par::map(self.parallel, inputs, |pos, input| {
            let start = Instant::now();
            let sketch = IntegerSketch::from_unsigned(
                p,
                input.histogram.iter().map(|(b, c)| (b.clone(), *c)),
            )?;
            let mask = masks.mask_of(ring, pos, input.id, len, &ctx)?;
            let masked = sketch.mask(&mask, input.id.0, ctx)?;
            Ok::<_, MufcError>((masked, start.elapsed()))
        })?;
        log_masked(masked, &msgs, inputs, |m| {
            m.elements().iter().map(BigUint::to_bytes_le).collect()
        });
        let start = Instant::now();
        let mut agg = Aggregator::new(p, ctx, self.min_clients);
        for (m, _) in &msgs {
            agg.accept(m)?;
        }
        let sum: IntegerSketch = agg.finish()?;
        let included = inputs.iter().map(|i| i.id).collect();
        let sum_time = start.elapsed();
        let start = Instant::now();
        let decoded = Decoded::Full(
            sum.decode()?
                .into_entries()
                .into_iter()
                .map(|(k, c)| Ok((k, count_u64(&c)?)))
                .collect::<MufcResult<_>>()?,
        );
        let decode = start.elapsed();
        self.finish(
            ServerSide {
                decoded,
                pending: Pending::Nothing,
                sum: sum_time,
                decode,
                offline,
                included,
            },
            msgs,
            inputs,
            |m, _| Ok(m.to_frame().to_bytes()?),
        )
    }

    /// Gathers a round; the wire frames (transport, not timed) give the
    /// bytes a client sends, and are kept when recording.
    fn finish<M>(
        &self,
        server: ServerSide,
        msgs: Vec<(M, Duration)>,
        inputs: &[Input<'_>],
        frame: impl Fn(&M, ClientId) -> MufcResult<Vec<u8>>,
    ) -> MufcResult<RoundOutput> {
        let bytes_per_client = match (msgs.first(), inputs.first()) {
            (Some((m, _)), Some(i)) => frame(m, i.id)?.len(),
            _ => 0,
        };
        let messages = if self.record {
            Some(
                msgs.iter()
                    .zip(inputs)
                    .map(|((m, _), i)| Ok((i.id, frame(m, i.id)?)))
                    .collect::<MufcResult<_>>()?,
            )
        } else {
            None
        };
        Ok(RoundOutput {
            decoded: server.decoded,
            pending: server.pending,
            encode_mask: msgs.iter().map(|(_, t)| *t).collect(),
            protocol_client_max: Duration::ZERO,
            protocol_client_sum: Duration::ZERO,
            dropped: Vec::new(),
            sum: server.sum,
            decode: server.decode,
            offline: server.offline,
            included: server.included,
            bytes_per_client,
            messages,
        })
    }
}

/// The number, context and secrets of the round being run.
struct Round<'a> {
    ctx: RoundContext,
    secrets: &'a RoundSecrets,
}

/// Keeps the masked vectors of a round in `sink`, when recording.
fn log_masked<M>(
    sink: &mut Option<MaskedInputs>,
    msgs: &[(M, Duration)],
    inputs: &[Input<'_>],
    elements: impl Fn(&M) -> Vec<Vec<u8>>,
) {
    if let Some(sink) = sink {
        *sink = msgs
            .iter()
            .zip(inputs)
            .map(|((m, _), i)| (i.id, elements(m)))
            .collect();
    }
}

/// `f`'s result and how long it took.
fn timed<T, E>(f: impl FnOnce() -> Result<T, E>) -> Result<(T, Duration), E> {
    let start = Instant::now();
    f().map(|t| (t, start.elapsed()))
}

/// A round's output from a run of the protocol: its server time is the
/// sum stage (the server's whole protocol), nothing is offline (every step
/// needs the clients online in the same session).
fn secure_output<E>(
    run: SecureRound<E>,
    decoded: Decoded,
    pending: Pending,
    decode: Duration,
) -> RoundOutput {
    RoundOutput {
        decoded,
        pending,
        encode_mask: run.encode,
        protocol_client_max: run.client_max,
        protocol_client_sum: run.client_sum,
        dropped: run.dropped,
        sum: run.server,
        decode,
        offline: Duration::ZERO,
        included: run.included,
        bytes_per_client: run.bytes_per_client,
        messages: run.messages,
    }
}

/// What a decoded difference must lead to: counts within the capacity and
/// the bound (see the module docs).
struct DeltaCheck<'a> {
    last: &'a BTreeMap<BigUint, u64>,
    capacity: usize,
    max_points: u64,
}

impl DeltaCheck<'_> {
    /// Whether `last + delta` has at most `capacity` nonzero counts, each
    /// in `0..=max_points`.
    /// A bin named twice is refused (the server applies entries one by
    /// one).
    fn accepts(&self, delta: &[(BigUint, i128)]) -> bool {
        let mut nonzero = self.last.values().filter(|c| **c > 0).count();
        let mut seen = std::collections::BTreeSet::new();
        for (bin, change) in delta {
            if !seen.insert(bin) {
                return false;
            }
            let old = self.last.get(bin).copied().unwrap_or(0);
            let new = i128::from(old) + change;
            if new < 0 || new > i128::from(self.max_points) {
                return false;
            }
            match (old == 0, new == 0) {
                (true, false) => nonzero += 1,
                (false, true) => nonzero = nonzero.saturating_sub(1),
                _ => {}
            }
        }
        nonzero <= self.capacity
    }
}

/// The server's side of a round.
struct ServerSide {
    decoded: Decoded,
    pending: Pending,
    sum: Duration,
    decode: Duration,
    offline: Duration,
    included: Vec<ClientId>,
}

fn field_info<F: FiniteField>(p: &ValidSketchParams<F>) -> SketchInfo {
    SketchInfo {
        capacity: p.capacity(),
        elements: p.num_syndromes(),
        modulus_bits: p.field().modulus_bits(),
    }
}

fn count_u64(c: &BigUint) -> MufcResult<u64> {
    c.to_u64().ok_or_else(|| {
        SketchError::Decode(DecodeError::CountOutOfRange {
            key: "(aggregate)".into(),
            count: c.to_string(),
            reason: "a count does not fit in 64 bits",
        })
        .into()
    })
}

fn change_i128(key: &BigUint, c: &BigInt) -> MufcResult<i128> {
    c.to_i128().ok_or_else(|| {
        SketchError::Decode(DecodeError::CountOutOfRange {
            key: key.to_string(),
            count: c.to_string(),
            reason: "a change does not fit in 128 bits",
        })
        .into()
    })
}

fn encode_field<'a, F: FiniteField>(
    params: &ValidSketchParams<F>,
    hist: impl Iterator<Item = (&'a BigUint, &'a u64)>,
) -> MufcResult<Sketch<F>> {
    let mut s = Sketch::new(params);
    for (bin, &c) in hist {
        s.insert(bin, &params.unsigned_count(c)?)?;
    }
    Ok(s)
}

fn encode_wide<'a>(
    params: &ValidWideKeyParams<Mersenne61>,
    hist: impl Iterator<Item = (&'a BigUint, &'a u64)>,
) -> MufcResult<WideSketch<Mersenne61>> {
    let mut s = WideSketch::new(params);
    for (bin, &c) in hist {
        s.insert(
            &bin.to_bytes_le(),
            &params.sketch_params().unsigned_count(c)?,
        )?;
    }
    Ok(s)
}

fn decode_field<F: FiniteField>(
    s: &FieldScheme<F>,
    sum: &Sketch<F>,
    check: &DeltaCheck<'_>,
) -> MufcResult<Decoded> {
    if let Some(last) = &s.last {
        let mut diff = sum.clone();
        diff.subtract(last)?;
        if diff.is_zero() {
            return Ok(Decoded::Delta(Vec::new()));
        }
        let diff = Sketch::from_elements(&s.delta, diff.into_elements())?;
        // Over capacity (a batch that moved many bins, or clients that
        // dropped or came back) the difference is refused, or leads to
        // counts the check rejects; the whole sum is always within
        // capacity.
        if let Ok(v) = diff.decode() {
            let f = s.delta.field();
            let delta = v
                .entries()
                .iter()
                .map(|(k, c)| Ok((k.clone(), change_i128(k, &f.to_centered(c))?)))
                .collect::<MufcResult<Vec<_>>>();
            if let Ok(delta) = delta
                && check.accepts(&delta)
            {
                return Ok(Decoded::Delta(delta));
            }
        }
    }
    let f = s.params.field();
    Ok(Decoded::Full(
        sum.decode()?
            .to_unsigned(f)
            .into_iter()
            .map(|(k, c)| Ok((k, count_u64(&c)?)))
            .collect::<MufcResult<_>>()?,
    ))
}

fn decode_wide(
    w: &WideScheme,
    sum: &WideSketch<Mersenne61>,
    check: &DeltaCheck<'_>,
) -> MufcResult<Decoded> {
    let f = w.params.field();
    if let Some(last) = &w.last {
        let mut diff = sum.clone();
        diff.subtract(last)?;
        if diff.elements().iter().all(|x| f.is_zero(x)) {
            return Ok(Decoded::Delta(Vec::new()));
        }
        let diff = WideSketch::from_elements(&w.delta, diff.into_elements())?;
        if let Ok(v) = diff.decode() {
            let out = v
                .into_entries()
                .into_iter()
                .map(|(key, c)| {
                    let bin = BigUint::from_bytes_le(&key);
                    let change = change_i128(&bin, &f.to_centered(&c))?;
                    Ok((bin, change))
                })
                .collect::<MufcResult<Vec<_>>>();
            if let Ok(mut out) = out
                && check.accepts(&out)
            {
                out.sort_by(|a, b| a.0.cmp(&b.0));
                return Ok(Decoded::Delta(out));
            }
        }
    }
    let mut out = sum
        .decode()?
        .to_unsigned(f)
        .into_iter()
        .map(|(key, c)| Ok((BigUint::from_bytes_le(&key), count_u64(&c)?)))
        .collect::<MufcResult<Vec<_>>>()?;
    out.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(Decoded::Full(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_decoded_difference_must_lead_to_counts_within_capacity_and_bound() {
        let b = |x: u32| BigUint::from(x);
        let last: BTreeMap<BigUint, u64> = [(b(1), 3), (b(2), 5)].into();
        let check = DeltaCheck {
            last: &last,
            capacity: 3,
            max_points: 10,
        };
        assert!(check.accepts(&[]));
        assert!(check.accepts(&[(b(1), -3), (b(7), 2), (b(8), 1)]));
        assert!(check.accepts(&[(b(2), 5)]));
        // A negative count, a count above the bound, a fourth bin, a bin
        // named twice.
        assert!(!check.accepts(&[(b(1), -4)]));
        assert!(!check.accepts(&[(b(2), 6)]));
        assert!(!check.accepts(&[(b(7), 1), (b(8), 1)]));
        assert!(!check.accepts(&[(b(1), -1), (b(1), -1)]));
    }
}
