//! One round on the concrete sketch the public parameters chose: the
//! round is written once, generic over [`ConcreteSketch`], and
//! [`ValidAnyParams::visit`] runs it on the field's (or ring's) own
//! elements. The aggregation never names a field; the dispatch happens
//! once per round, in `syndrome_agg`, not once per element as it would
//! on [`AnySketch`]'s canonical integers.

use std::time::Instant;

use num_bigint::BigInt;

use syndrome_agg::field::FiniteField;
use syndrome_agg::secagg::Step;
use syndrome_agg::{
    AnySketch, ConcreteSketch, ParamsError, SketchError, SketchVisitor, ValidAnyParams,
};

use super::masks::{Job, MaskSource};
use super::round::{Input, MaskedInputs, Round, RoundMetrics};
use crate::server::decode::{Decoded, DeltaCheck, Previous, decode, decode_change};
use crate::{ClientId, MufcResult};

/// The new aggregate, to keep once the request succeeds (`None` for a
/// scheme that keeps nothing: the integer scheme always decodes the
/// whole sum).
#[derive(Clone, Debug)]
pub(crate) struct Pending(pub(super) Option<AnySketch>);

/// A computed round, not yet committed.
#[derive(Debug)]
pub(crate) struct RoundOutput {
    pub(crate) decoded: Decoded,
    pub(crate) pending: Pending,
    pub(crate) metrics: RoundMetrics,
    /// SecAgg: the clients that dropped, with the first step they missed.
    pub(crate) dropped: Vec<(ClientId, Step)>,
    pub(crate) included: Vec<ClientId>,
    pub(crate) bytes_per_client: usize,
    /// The messages the clients sent: one each, or every SecAgg step's.
    pub(crate) client_messages: usize,
    pub(crate) messages: Option<Vec<(ClientId, Vec<u8>)>>,
    /// Each client's unmasked sketch, in input order, when it is new: the
    /// clients keep them once the round commits.
    pub(crate) encoded: Vec<Option<AnySketch>>,
}

/// Everything a round needs but the concrete sketch, which the visit
/// brings.
pub(super) struct RoundRun<'a> {
    pub(super) round: &'a Round<'a>,
    /// The clients' parameters (unsigned counts).
    pub(super) params: &'a ValidAnyParams,
    /// The signed parameters differences decode under, and the last
    /// committed sum (`None`: the scheme decodes only whole sums, or this
    /// is the first round).
    pub(super) delta: Option<&'a ValidAnyParams>,
    pub(super) last: Option<&'a AnySketch>,
    pub(super) inputs: &'a [Input<'a>],
    pub(super) masking: &'a MaskSource,
    pub(super) check: DeltaCheck<'a>,
    pub(super) parallel: bool,
    pub(super) record: bool,
    pub(super) min_clients: usize,
    /// Where the masked vectors go when recording.
    pub(super) masked: &'a mut Option<MaskedInputs>,
}

impl SketchVisitor for RoundRun<'_> {
    type Output = MufcResult<RoundOutput>;

    fn visit_field<S, F>(self, params: &S::Params, _: &F) -> Self::Output
    where
        S: ConcreteSketch,
        F: FiniteField<Elem = S::Elem>,
    {
        self.run::<S>(params)
    }

    fn visit_ring<S: ConcreteSketch>(self, params: &S::Params) -> Self::Output {
        self.run::<S>(params)
    }
}

/// The last sum or the signed parameters were made for another sketch
/// than this round's: an internal inconsistency, refused rather than
/// decoded.
pub(super) fn inconsistent() -> SketchError {
    SketchError::Params(ParamsError::ParamsMismatch {
        what: "the last aggregate's sketch",
    })
}

impl RoundRun<'_> {
    /// The round on `S`: the mask source carries every client's sketch to
    /// the server's sum, and the server decodes it (its difference against
    /// the last sum, if that passes the check).
    fn run<S: ConcreteSketch>(self, params: &S::Params) -> MufcResult<RoundOutput> {
        let job = Job::<S> {
            round: self.round,
            params,
            max_frame: self.params.max_frame_len(),
            inputs: self.inputs,
            parallel: self.parallel,
            record: self.record,
            min_clients: self.min_clients,
        };
        let x = self.masking.exchange(&job, self.masked)?;
        let (decoded, pending, decode_time) =
            conclude(x.sum, self.params, self.delta, self.last, &self.check)?;
        let mut metrics = x.metrics;
        metrics.decode = decode_time;
        let encoded = x
            .encoded
            .into_iter()
            .map(|s| s.map(|s| s.into_any(self.params)).transpose())
            .collect::<Result<_, _>>()?;
        Ok(RoundOutput {
            decoded,
            pending,
            metrics,
            dropped: x.dropped,
            included: x.included,
            bytes_per_client: x.bytes_per_client,
            client_messages: x.client_messages,
            messages: x.messages,
            encoded,
        })
    }
}

/// Decodes a round's `sum` (of `params`): its difference against the
/// `last` committed sum under the signed `delta` parameters when it passes
/// the `check`, else the whole sum; with the aggregate to keep (only a
/// scheme that decodes differences keeps one) and the decoding time.
/// Shared by the rounds run in one process and those run across processes
/// (`aggregation/remote.rs`).
pub(super) fn conclude<S: ConcreteSketch>(
    sum: S,
    params: &ValidAnyParams,
    delta: Option<&ValidAnyParams>,
    last: Option<&AnySketch>,
    check: &DeltaCheck<'_>,
) -> MufcResult<(Decoded, Pending, std::time::Duration)> {
    let previous = match (last, delta) {
        (Some(last), Some(delta)) => Some(Previous {
            last: S::of_any(last).ok_or_else(inconsistent)?,
            delta: S::params_of(delta).ok_or_else(inconsistent)?,
        }),
        _ => None,
    };
    let start = Instant::now();
    let decoded = decode(&sum, previous, check)?;
    let time = start.elapsed();
    let pending = match delta {
        Some(_) => Pending(Some(sum.into_any(params)?)),
        None => Pending(None),
    };
    Ok((decoded, pending, time))
}

/// A change round (see `Aggregation::change_round`): every client sends
/// the sketch of its histogram's change under small signed parameters, and
/// the server decodes the sum of the changes directly.
pub(super) struct ChangeRun<'a> {
    pub(super) round: &'a Round<'a>,
    /// The clients' parameters (unsigned counts, full capacity): the
    /// aggregate kept for later rounds is of these.
    pub(super) full: &'a ValidAnyParams,
    /// The small signed parameters the changes are sent under.
    pub(super) small: &'a ValidAnyParams,
    /// The last committed sum (of the full parameters).
    pub(super) last: &'a AnySketch,
    pub(super) inputs: &'a [Input<'a>],
    pub(super) masking: &'a MaskSource,
    pub(super) check: DeltaCheck<'a>,
    pub(super) parallel: bool,
    pub(super) record: bool,
    pub(super) min_clients: usize,
    pub(super) masked: &'a mut Option<MaskedInputs>,
}

impl SketchVisitor for ChangeRun<'_> {
    type Output = MufcResult<Option<RoundOutput>>;

    fn visit_field<S, F>(self, params: &S::Params, _: &F) -> Self::Output
    where
        S: ConcreteSketch,
        F: FiniteField<Elem = S::Elem>,
    {
        // No protocol run: change rounds are for dealt and pairwise masks.
        self.run::<S>(params)
    }

    fn visit_ring<S: ConcreteSketch>(self, params: &S::Params) -> Self::Output {
        self.run::<S>(params)
    }
}

impl ChangeRun<'_> {
    /// The round on `S`; `None` when the sum of the changes does not
    /// decode to counts the check accepts (the caller then runs a whole
    /// round).
    fn run<S: ConcreteSketch>(self, params: &S::Params) -> MufcResult<Option<RoundOutput>> {
        let job = Job::<S> {
            round: self.round,
            params,
            max_frame: self.small.max_frame_len(),
            inputs: self.inputs,
            parallel: self.parallel,
            record: self.record,
            min_clients: self.min_clients,
        };
        let x = self.masking.exchange(&job, self.masked)?;
        let start = Instant::now();
        let Some((decoded, pending)) = conclude_change(&x.sum, self.full, self.last, &self.check)?
        else {
            return Ok(None);
        };
        let mut metrics = x.metrics;
        metrics.decode = start.elapsed();
        Ok(Some(RoundOutput {
            decoded,
            pending,
            metrics,
            dropped: x.dropped,
            included: x.included,
            bytes_per_client: x.bytes_per_client,
            client_messages: x.client_messages,
            messages: x.messages,
            // The clients keep their last sketches: a change is not one.
            encoded: vec![None; self.inputs.len()],
        }))
    }
}

/// Decodes the sum of a change round's messages (of the small signed
/// parameters) into the change of the aggregate, and moves the `last`
/// committed sum (of the `full` parameters) by it, for the rounds that
/// decode against it later; `None` when the sum does not decode to counts
/// the `check` accepts (the caller then runs a whole round). Shared by the
/// dealt change round and the parties' (`pairwise/server.rs`).
pub(super) fn conclude_change<S: ConcreteSketch>(
    sum: &S,
    full: &ValidAnyParams,
    last: &AnySketch,
    check: &DeltaCheck<'_>,
) -> MufcResult<Option<(Decoded, Pending)>> {
    let Some(decoded) = decode_change(sum, check) else {
        return Ok(None);
    };
    let mut moved = S::of_any(last).ok_or_else(inconsistent)?.clone();
    for (bin, change) in &decoded {
        let from = check.last.get(bin).copied().unwrap_or(0);
        let to = i128::from(from) + change;
        moved.change_integer(bin, &BigInt::from(from), &BigInt::from(to))?;
    }
    let pending = Pending(Some(moved.into_any(full)?));
    Ok(Some((Decoded::Delta(decoded), pending)))
}
