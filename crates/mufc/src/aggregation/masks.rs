//! Where the masks of a round come from. Rounds with pairwise masks or
//! SecAgg are the parties' own (`relay.rs` drives the halves the
//! deployment runs); what remains here, until the dealer is a party, is
//! [`MaskSource::exchange`] for dealt masks: each client builds its
//! masked frame and the server parses and sums the frames.

use std::time::{Duration, Instant};

use syndrome_agg::masking::{MaskVector, deal_zero_sum_masks};
use syndrome_agg::secagg::Step;
use syndrome_agg::wire::Frame;
use syndrome_agg::{ConcreteSketch, LinearParams};

use super::round::{Input, MaskedInputs, Round, RoundMetrics, split_elements};
use super::secure::SecAggSettings;
use crate::client::message::{ClientMask, masked_frame};
use crate::server::decode::{parse_messages, sum};
use crate::{ClientId, MufcError, MufcResult, par};

/// Where the masks of a round come from.
#[derive(Clone, Debug)]
pub(crate) enum MaskSource {
    /// The offline dealer.
    Dealer,
    /// Pairwise masks: a key directory the parties exchange
    /// (`pairwise/`).
    Pairwise,
    /// The dropout-tolerant protocol, run afresh every round.
    SecAgg(SecAggSettings),
}

/// One round's work for a mask source: the round, its parameters (of the
/// concrete sketch the public parameters chose, so every element is
/// native), the clients' inputs, and how it runs (from the aggregation's
/// settings).
pub(crate) struct Job<'a, S: ConcreteSketch> {
    pub(crate) round: &'a Round<'a>,
    pub(crate) params: &'a S::Params,
    /// The largest frame the server parses.
    pub(crate) max_frame: usize,
    /// Every current client, in id order.
    pub(crate) inputs: &'a [Input<'a>],
    pub(crate) parallel: bool,
    pub(crate) record: bool,
    pub(crate) min_clients: usize,
}

/// The clients' sketches summed at the server.
pub(crate) struct Exchange<S> {
    pub(crate) sum: S,
    pub(crate) included: Vec<ClientId>,
    /// SecAgg: the clients that dropped, with the first step they missed.
    pub(crate) dropped: Vec<(ClientId, Step)>,
    /// Every timing but the decoding.
    pub(crate) metrics: RoundMetrics,
    pub(crate) bytes_per_client: usize,
    /// The messages the clients sent: one each, or every SecAgg step's.
    pub(crate) client_messages: usize,
    /// The frames the server received, when recording.
    pub(crate) messages: Option<Vec<(ClientId, Vec<u8>)>>,
    /// Each client's unmasked sketch, in input order, when it is new (the
    /// clients keep them once the round commits).
    pub(crate) encoded: Vec<Option<S>>,
}

impl MaskSource {
    /// Carries the sketches of the job's clients to the server's sum
    /// under the job's parameters, with dealt masks. When
    /// recording, the masked vectors go to `masked` as soon as they
    /// exist, even if the round fails later.
    ///
    /// # Errors
    ///
    /// An encoding, masking, parsing or summing error; another source
    /// than the dealer (its rounds are the parties' run).
    pub(crate) fn exchange<S: ConcreteSketch>(
        &self,
        job: &Job<'_, S>,
        masked: &mut Option<MaskedInputs>,
    ) -> MufcResult<Exchange<S>> {
        let Job {
            round,
            params,
            inputs,
            ..
        } = *job;
        let Self::Dealer = self else {
            return Err(MufcError::Remote(
                "pairwise and SecAgg rounds are the parties' run (relay.rs), not an exchange"
                    .into(),
            ));
        };
        let (masks, offline) = deal::<S>(round, params, inputs.len());
        let sent = par::map(job.parallel, inputs, |pos, input| {
            let mask = masks.get(pos).ok_or(MufcError::UnknownClient(input.id))?;
            let mask = ClientMask::Dealt(mask);
            masked_frame::<S>(input.id, || input.sketch(params), &mask, round.ctx)
        })?;
        let encode_mask = sent.iter().map(|m| m.encode_mask).collect();
        let (frames, encoded): (Vec<_>, Vec<_>) = inputs
            .iter()
            .zip(sent)
            .map(|(i, m)| ((i.id, m.frame), m.encoded))
            .unzip();
        if let Some(sink) = masked {
            // Recording (tests): the elements as sent, before the server
            // parses anything.
            let width = |f: &Frame| f.elements.len() / params.num_elements().max(1);
            *sink = frames
                .iter()
                .filter_map(|(id, bytes)| {
                    let f = Frame::parse(bytes, job.max_frame).ok()?;
                    Some((*id, split_elements(&f.elements, width(&f))))
                })
                .collect();
        }
        let start = Instant::now();
        let messages = parse_messages::<S>(params, job.max_frame, &frames)?;
        let (total, included) = sum(params, round.ctx, job.min_clients, &messages)?;
        Ok(Exchange {
            sum: total,
            included,
            dropped: Vec::new(),
            metrics: RoundMetrics {
                encode_mask,
                sum: start.elapsed(),
                offline,
                ..RoundMetrics::default()
            },
            bytes_per_client: frames.first().map_or(0, |(_, f)| f.len()),
            client_messages: frames.len(),
            messages: job.record.then_some(frames),
            encoded,
        })
    }
}

/// The dealer's zero-sum masks for `clients` clients, and the time the
/// dealing took (offline work).
fn deal<S: ConcreteSketch>(
    round: &Round<'_>,
    params: &S::Params,
    clients: usize,
) -> (Vec<MaskVector<S::Elem>>, Duration) {
    let start = Instant::now();
    let mut rng = round.secrets.rng("dealer", round.ctx.round);
    let masks = deal_zero_sum_masks(
        &params.mask_domain(),
        clients,
        params.num_elements(),
        &mut rng,
    );
    (masks, start.elapsed())
}
