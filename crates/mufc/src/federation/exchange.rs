//! The steps every request shares: a fit (Algorithm 1, lines 3-6) and a
//! removal (Algorithm 4, lines 7-13) both send the clients' messages (a
//! masked aggregation round, or the plain centroids that changed), let the
//! server plan and apply its update, then account for the round (times,
//! bytes, included and dropped clients) and commit it.

use std::time::{Duration, Instant};

use syndrome_agg::AnySketch;

use crate::aggregation::{Aggregation, Input, RoundOutput};
use crate::server::decode::Decoded;
use crate::server::{InputChange, PlainCentroids};
use crate::{
    Client, ClientId, DecodeKind, MufcResult, SecAggStep, Server, ServerUpdate, StageTimes,
};

/// The changes of a removal's clients, for a change round (the module
/// docs of `aggregation/change.rs`).
pub(super) struct Changes {
    /// The change of each client of the round (in its order), `(bin,
    /// change)`; empty for a client that did not change.
    pub(super) per_client: Vec<Vec<(num_bigint::BigUint, i128)>>,
    /// The most nonzero entries the sum of the changes may have.
    pub(super) bound: usize,
}

/// What one exchange of messages did, before it is committed.
pub(super) struct Exchanged {
    /// The server's update (applied: the server changed).
    update: ServerUpdate,
    /// How the server decoded.
    decode: DecodeKind,
    /// The aggregation round, if one ran (committed by [`Self::commit`]).
    round: Option<RoundOutput>,
    /// The server's time to plan and apply.
    server_time: Duration,
}

/// What the reports say of a committed exchange.
pub(super) struct Committed {
    /// The server's update.
    pub(super) update: ServerUpdate,
    /// How the server decoded.
    pub(super) decode: DecodeKind,
    /// The clients the round included (`None` when no round ran).
    pub(super) included: Option<Vec<ClientId>>,
    /// The clients that dropped out of the round, with the step.
    pub(super) dropped: Vec<(ClientId, SecAggStep)>,
    /// The unmasked sketch of every client of the round (in the order of
    /// `after`) whose sketch is new, for [`keep_encoded`].
    pub(super) encoded: Vec<Option<AnySketch>>,
}

/// Gives every client of a committed round (`clients`, in the round's
/// order) the new sketch of its message, if it has one.
pub(super) fn keep_encoded<'a>(
    clients: impl IntoIterator<Item = &'a mut Client>,
    encoded: Vec<Option<AnySketch>>,
) {
    for (c, e) in clients.into_iter().zip(encoded) {
        if let Some(e) = e {
            c.keep_encoded(e);
        }
    }
}

/// The clients' messages and the server's update (Algorithm 1, lines 3-6;
/// Algorithm 4, lines 7-13).
///
/// With an aggregation, every client of `after` sends its masked sketch in
/// a fresh round and the server decodes the sum, or its change against its
/// counts; with no client left the aggregate is empty. In the plain mode
/// the clients send their centroids in the clear, and `plain` gives the
/// (before, after) centroids of the clients that changed.
///
/// Nothing is committed: on an error the aggregation's last sketch and the
/// server are unchanged (a round still consumes its round number, before
/// any mask exists).
pub(super) fn exchange(
    aggregation: &mut Option<Aggregation>,
    server: &mut Server,
    after: &[&Client],
    plain: impl FnOnce() -> Vec<(PlainCentroids, PlainCentroids)>,
    changes: Option<&Changes>,
) -> MufcResult<Exchanged> {
    let (change, decode, round) = match aggregation {
        Some(agg) => match run_round(agg, server.counts(), after, changes)? {
            Some(round) => {
                let decode = DecodeKind::of(&round.decoded);
                (
                    InputChange::Counts(round.decoded.clone()),
                    decode,
                    Some(round),
                )
            }
            // Every client left: nothing to aggregate, the aggregate is
            // empty.
            None => (
                InputChange::Counts(Decoded::Full(Vec::new())),
                DecodeKind::Skipped,
                None,
            ),
        },
        None => (InputChange::Plain(plain()), DecodeKind::Plain, None),
    };
    let start = Instant::now();
    // The last fallible step: on error the server's model is untouched.
    let update = server.apply(server.plan(change)?)?;
    Ok(Exchanged {
        update,
        decode,
        round,
        server_time: start.elapsed(),
    })
}

/// One masked round over `after` (a change round when `changes` are
/// given and it applies, else a whole one), decoded against `last`, the
/// counts of the last committed round; `None` when no client is left.
/// Nothing is committed.
pub(super) fn run_round(
    agg: &mut Aggregation,
    last: &std::collections::BTreeMap<num_bigint::BigUint, u64>,
    after: &[&Client],
    changes: Option<&Changes>,
) -> MufcResult<Option<RoundOutput>> {
    if after.is_empty() {
        return Ok(None);
    }
    if let Some(ch) = changes {
        let inputs: Vec<Input<'_>> = after
            .iter()
            .zip(&ch.per_client)
            .map(|(c, change)| Input {
                id: c.id(),
                histogram: c.histogram(),
                last: c.encoded(),
                change: Some(change),
            })
            .collect();
        if let Some(round) = agg.change_round(&inputs, last, ch.bound)? {
            return Ok(Some(round));
        }
    }
    let inputs: Vec<Input<'_>> = after
        .iter()
        .map(|c| Input {
            id: c.id(),
            histogram: c.histogram(),
            last: c.encoded(),
            change: None,
        })
        .collect();
    agg.round(&inputs, last).map(Some)
}

impl Exchanged {
    /// The messages the clients sent in the round (none without one).
    pub(super) fn client_messages(&self) -> usize {
        self.round.as_ref().map_or(0, |r| r.client_messages)
    }

    /// Adds the round's times to `times` (with each client's own training
    /// or unlearning time `own`, in client order) and returns the bytes a
    /// client sent: the round's, else `no_round_bytes`.
    pub(super) fn account(
        &self,
        times: &mut StageTimes,
        own: &[Duration],
        no_round_bytes: usize,
    ) -> usize {
        times.server = self.server_time;
        match &self.round {
            Some(r) => {
                round_times(times, own, r);
                r.bytes_per_client
            }
            None => {
                client_times(times, own, &[]);
                no_round_bytes
            }
        }
    }

    /// Commits the round into the aggregation (its sketch becomes the one
    /// the next delta decodes against) and keeps its recorded frames in
    /// `messages` (without a round both stay as they are); returns what
    /// the reports say of the exchange, moved out of it.
    pub(super) fn commit(
        self,
        aggregation: &mut Option<Aggregation>,
        messages: &mut Option<Vec<(ClientId, Vec<u8>)>>,
    ) -> Committed {
        let (included, dropped, encoded) = match (aggregation, self.round) {
            (Some(agg), Some(r)) => {
                *messages = r.messages;
                agg.commit(r.pending);
                (Some(r.included), r.dropped, r.encoded)
            }
            (_, Some(r)) => (Some(r.included), r.dropped, r.encoded),
            (_, None) => (None, Vec::new(), Vec::new()),
        };
        Committed {
            update: self.update,
            decode: self.decode,
            included,
            dropped,
            encoded,
        }
    }
}

/// The bytes of a plain-mode message: `k` centroids of `d` f64 and `k`
/// sizes as u64.
pub(super) fn plain_bytes(k: usize, dim: usize) -> usize {
    k * (8 * dim + 8)
}

pub(crate) fn plain_of(c: &Client) -> PlainCentroids {
    let (centroids, sizes) = c.plain_message();
    PlainCentroids {
        client: c.id(),
        centroids,
        sizes,
    }
}

pub(super) fn empty_plain(id: ClientId, dim: usize) -> PlainCentroids {
    PlainCentroids {
        client: id,
        centroids: nalgebra::DMatrix::zeros(dim, 0),
        sizes: Vec::new(),
    }
}

/// Adds a round's times into `times`: the client side (in client order,
/// with each client's own training time), the protocol and the server's
/// sum and decoding.
pub(super) fn round_times(times: &mut StageTimes, own: &[Duration], r: &RoundOutput) {
    let m = &r.metrics;
    client_times(times, own, &m.encode_mask);
    times.protocol_client_max = m.protocol_client_max;
    times.protocol_client_sum = m.protocol_client_sum;
    times.sum = m.sum;
    times.decode = m.decode;
    times.offline = m.offline;
}

/// Adds a round's client-side times (in client order, with each client's
/// own training time) into `times`.
pub(crate) fn client_times(times: &mut StageTimes, own: &[Duration], encode: &[Duration]) {
    for (i, &e) in encode.iter().enumerate() {
        let o = own.get(i).copied().unwrap_or_default();
        times.encode_mask_max = times.encode_mask_max.max(e);
        times.encode_mask_sum += e;
        times.client_round_max = times.client_round_max.max(o + e);
    }
    for &o in own {
        times.client_max = times.client_max.max(o);
        times.client_sum += o;
        times.client_round_max = times.client_round_max.max(o);
    }
}

/// The times of a request that ran no round: the clients' own
/// unlearning (`own`) and the wall time since `wall`.
pub(crate) fn request_times(own: &[Duration], wall: Instant) -> StageTimes {
    let mut times = StageTimes {
        wall: wall.elapsed(),
        ..StageTimes::default()
    };
    client_times(&mut times, own, &[]);
    times
}
