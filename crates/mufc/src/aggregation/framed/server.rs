//! The server's half of a pairwise or dealt round: collects the keys and
//! relays the directory (or asks the dealer for the ring as the round
//! opens and relays each client's sealed seed), collects and sums the
//! masked frames (and the dealer's correction).

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use syndrome_agg::masking::dealer::SEALED_SEED_BYTES;
use syndrome_agg::masking::pairwise::MaskPublicKey;
use syndrome_agg::secagg::Step;
use syndrome_agg::wire::Frame;
use syndrome_agg::{Aggregator, AnySketch, MaskedSketch};

use super::{
    CORRECTION, DealRequest, Dealt, Directory, SealedSeed, ToServer, from_bytes, rejected, to_bytes,
};
use crate::aggregation::halves::{
    Advanced, RemoteOutcome, RoundProtocol, RoundSpec, ServerHalf, Sums,
};
use crate::aggregation::run::{Pending, conclude, conclude_change, conclude_change_counts};
use crate::server::decode::{Decoded, DeltaCheck};
use crate::{ClientId, MufcError, MufcResult};

/// The sum decoded (`None`: a change round's sum that does not decode),
/// the aggregate to keep and the time to decode.
type Concluded = (Option<Decoded>, Pending, Duration);

/// Decodes the round's sum: the change of a change round, or the sum
/// (or its difference against the last sum).
fn conclude_sum(total: AnySketch, sums: &Sums, check: &DeltaCheck<'_>) -> MufcResult<Concluded> {
    if sums.change.is_some() {
        let start = Instant::now();
        // No sketch: the last sum is kept as counts (`restored`).
        let concluded = match sums.last.as_ref() {
            Some(last) => conclude_change(&total, last, check)?,
            None => conclude_change_counts(&total, check),
        };
        let decode = start.elapsed();
        return Ok(match concluded {
            Some((change, pending)) => (Some(change), pending, decode),
            None => (None, Pending(None), decode),
        });
    }
    let (decoded, pending, decode) =
        conclude(total, sums.delta.as_ref(), sums.last.as_ref(), check)?;
    Ok((Some(decoded), pending, decode))
}

/// Where a dealt round stands with its dealer.
enum DealerStage {
    /// Pairwise masks: no dealer.
    None,
    /// The request is not sent yet (the round just opened).
    Waiting,
    /// The request went out; the answer has not come.
    Asked,
    /// The dealer answered: each client's sealed seed, to relay (its
    /// correction is in the sum).
    Dealt { sealed: BTreeMap<ClientId, Vec<u8>> },
    /// The sealed seeds went out: the clients' masked frames may come.
    Relayed,
}

impl DealerStage {
    /// Whether the clients have nothing to answer yet: a dealt round's
    /// clients wait for their sealed seeds.
    fn clients_wait(&self) -> bool {
        matches!(self, Self::Waiting | Self::Asked | Self::Dealt { .. })
    }
}

/// The server's half of a pairwise or dealt round.
pub(crate) struct FramedServer {
    spec: RoundSpec,
    sums: Sums,
    min_clients: usize,
    max_frame: usize,
    step: Option<Step>,
    keys: BTreeMap<ClientId, MaskPublicKey>,
    /// The running sum of the masked frames (and the dealer's
    /// correction), on the concrete sketch's own elements. A frame is
    /// parsed (its kind, shape and elements checked against the round's
    /// parameters) when it arrives and only then, so that one member's
    /// bad frame is refused at once and cannot fail everybody's round,
    /// and no frame is read twice; a refused frame leaves the sum as it
    /// was.
    sum: Aggregator<AnySketch>,
    dealer: DealerStage,
    time: Duration,
}

impl FramedServer {
    /// The server's half of the round `spec` over the aggregation's
    /// parameters and last sum.
    pub(crate) fn open(spec: RoundSpec, sums: Sums, min_clients: usize) -> MufcResult<Self> {
        // A dealt round has one step for the clients, their masked
        // inputs; the dealer is asked before it.
        let dealt = spec.protocol == RoundProtocol::Dealer;
        let max_frame = sums.sent().max_frame_len();
        // The minimum of clients is checked when the round finishes, with
        // the server's own error.
        let sum = Aggregator::new(sums.sent(), spec.context(), 0);
        Ok(Self {
            spec,
            sums,
            min_clients,
            max_frame,
            step: Some(match dealt {
                true => Step::MaskedInput,
                false => Step::AdvertiseKeys,
            }),
            keys: BTreeMap::new(),
            sum,
            dealer: match dealt {
                true => DealerStage::Waiting,
                false => DealerStage::None,
            },
            time: Duration::ZERO,
        })
    }

    /// Adds one masked frame to the running sum; a refused frame changes
    /// nothing.
    fn add(&mut self, frame: &Frame) -> MufcResult<()> {
        let masked = MaskedSketch::<AnySketch>::from_frame(frame, self.sums.sent())?;
        Ok(self.sum.accept(&masked)?)
    }

    /// The clients whose masked frames are in the sum (the sum also
    /// holds the dealer's correction).
    fn frames(&self) -> BTreeSet<ClientId> {
        (self.sum.clients().iter())
            .filter(|&&c| c != CORRECTION)
            .map(|&c| ClientId(c))
            .collect()
    }

    fn ring(&self) -> BTreeSet<ClientId> {
        self.spec.ring.iter().copied().collect()
    }

    /// Every client of the ring answered the current step, or the round
    /// fails: the masks of a missing client do not cancel.
    fn all_answered(&self, step: Step) -> MufcResult<()> {
        let answered = self.answered();
        let missing: Vec<ClientId> = (self.spec.ring.iter())
            .filter(|c| !answered.contains(c))
            .copied()
            .collect();
        if missing.is_empty() {
            return Ok(());
        }
        Err(MufcError::RingIncomplete {
            round: self.spec.round,
            clients: self.spec.ring.len(),
            missing,
            step,
        })
    }
}

impl ServerHalf for FramedServer {
    fn step(&self) -> Option<Step> {
        self.step
    }

    fn expected(&self) -> BTreeSet<ClientId> {
        match self.step {
            Some(_) if !self.dealer.clients_wait() => self.ring(),
            _ => BTreeSet::new(),
        }
    }

    fn answered(&self) -> BTreeSet<ClientId> {
        match self.step {
            Some(Step::AdvertiseKeys) => self.keys.keys().copied().collect(),
            Some(_) => self.frames(),
            None => BTreeSet::new(),
        }
    }

    fn receive(&mut self, from: ClientId, bytes: &[u8]) -> MufcResult<()> {
        let start = Instant::now();
        let result = self.accept(from, bytes);
        self.time += start.elapsed();
        result
    }

    fn advance(&mut self) -> MufcResult<Advanced> {
        let start = Instant::now();
        let out = match self.step {
            Some(Step::AdvertiseKeys) => {
                self.all_answered(Step::AdvertiseKeys)?;
                self.directory()?
            }
            Some(_) if self.dealer.clients_wait() => self.next_deal_step()?,
            Some(step) => {
                self.all_answered(step)?;
                self.step = None;
                Advanced::Finished
            }
            None => {
                return Err(MufcError::Remote(
                    "the round is over: nothing to advance".into(),
                ));
            }
        };
        self.time += start.elapsed();
        Ok(out)
    }

    fn receive_dealer(&mut self, bytes: &[u8]) -> MufcResult<()> {
        let start = Instant::now();
        let result = self.accept_deal(bytes);
        self.time += start.elapsed();
        result
    }

    fn conclude(self: Box<Self>, check: &DeltaCheck<'_>) -> MufcResult<RemoteOutcome> {
        if self.step.is_some() {
            return Err(MufcError::Remote(
                "the round is not over: nothing to decode".into(),
            ));
        }
        if self.dealer.clients_wait() {
            return Err(MufcError::Remote(
                "the dealer's seeds never reached the clients".into(),
            ));
        }
        // The aggregate of fewer clients than the minimum is refused, as
        // `syndrome_agg::Aggregator` refuses it.
        let frames = self.frames();
        if frames.len() < self.min_clients {
            return Err(rejected(format!(
                "only {} clients, at least {} required",
                frames.len(),
                self.min_clients
            )));
        }
        if frames.is_empty() {
            return Err(MufcError::Remote("no masked frame to decode".into()));
        }
        let sum = self.sum.finish()?;
        let (decoded, pending, decode) = conclude_sum(sum, &self.sums, check)?;
        Ok(RemoteOutcome {
            decoded,
            pending,
            included: frames.into_iter().collect(),
            dropped: Vec::new(),
            protocol: self.time,
            decode,
        })
    }
}

impl FramedServer {
    /// Every key is in (pairwise masks): the directory to every client.
    fn directory(&mut self) -> MufcResult<Advanced> {
        let d = to_bytes(&Directory {
            session: self.spec.session,
            round: self.spec.round,
            keys: self.keys.iter().map(|(c, k)| (c.0, *k)).collect(),
        })?;
        self.step = Some(Step::MaskedInput);
        Ok(Advanced::Clients(
            self.spec.ring.iter().map(|c| (*c, d.clone())).collect(),
        ))
    }

    /// A dealt round before its clients answer: the request to the dealer
    /// for the announced ring, then each client's sealed seed.
    fn next_deal_step(&mut self) -> MufcResult<Advanced> {
        let (session, round) = (self.spec.session, self.spec.round);
        // Made before the stage moves on: a message that fails to encode
        // leaves the round where it was.
        let (out, next) = match &self.dealer {
            DealerStage::Waiting => {
                let ring = self.spec.ring.iter().map(|c| c.0).collect();
                let request = DealRequest {
                    session,
                    round,
                    ring,
                };
                (Advanced::Dealer(to_bytes(&request)?), DealerStage::Asked)
            }
            DealerStage::Dealt { sealed } => {
                let seed = |(c, s): (&ClientId, &Vec<u8>)| {
                    let sealed = s.clone();
                    let msg = SealedSeed {
                        session,
                        round,
                        sealed,
                    };
                    Ok((*c, to_bytes(&msg)?))
                };
                let seeds = sealed.iter().map(seed).collect::<MufcResult<_>>()?;
                (Advanced::Clients(seeds), DealerStage::Relayed)
            }
            _ => return Err(MufcError::Remote("the dealer has not answered".into())),
        };
        self.dealer = next;
        Ok(out)
    }

    /// The dealer's answer, checked before it is kept: this round's, a
    /// sealed seed of the right size for every client of the ring once,
    /// and a correction frame of the round's parameters.
    fn accept_deal(&mut self, bytes: &[u8]) -> MufcResult<()> {
        if !matches!(self.dealer, DealerStage::Asked) {
            return Err(rejected("no deal was asked for".into()));
        }
        let d: Dealt = from_bytes(bytes, 64 << 20, "the dealer's answer")?;
        if d.session != self.spec.session || d.round != self.spec.round {
            return Err(rejected("the dealer answered for another round".into()));
        }
        let sealed: BTreeMap<ClientId, Vec<u8>> = d
            .sealed
            .into_iter()
            .map(|(c, s)| (ClientId(c), s.0))
            .collect();
        let names_ring = sealed.keys().copied().eq(self.ring())
            && self.spec.ring.len() == sealed.len()
            && sealed.values().all(|s| s.len() == SEALED_SEED_BYTES);
        if !names_ring {
            return Err(rejected(
                "the dealer's answer does not seal one seed to each client of the ring".into(),
            ));
        }
        let correction = Frame::parse(&d.correction, self.max_frame)?;
        if correction.client_id != CORRECTION || correction.context() != self.spec.context() {
            return Err(rejected(
                "the dealer's correction is not this round's".into(),
            ));
        }
        // Checked and summed now: a bad correction is refused before
        // anything changes.
        self.add(&correction)?;
        self.dealer = DealerStage::Dealt { sealed };
        Ok(())
    }

    /// One message from the authenticated client `from`, checked before
    /// it is kept; a refused message changes nothing.
    fn accept(&mut self, from: ClientId, bytes: &[u8]) -> MufcResult<()> {
        if !self.spec.ring.contains(&from) {
            return Err(rejected(format!("client {from} is not in the round")));
        }
        // Read as the step's message: a key, or a masked frame.
        match self.step {
            Some(Step::AdvertiseKeys) if matches!(self.dealer, DealerStage::None) => {
                let ToServer::Key {
                    client,
                    session,
                    round,
                    key,
                } = from_bytes(bytes, 4096, "a key")?;
                self.accept_key(from, client, (session, round), key)
            }
            Some(Step::MaskedInput) if self.dealer.clients_wait() => Err(rejected(format!(
                "client {from} sent a message before its sealed seed went out"
            ))),
            Some(Step::MaskedInput) => self.accept_frame(from, bytes),
            step => Err(rejected(format!(
                "client {from} sent a message the round does not take at {step:?}"
            ))),
        }
    }

    /// Checks that client `from`'s first message (`what` it did) is in its
    /// own name, `client`, and of this round, `(session, round)`.
    fn own_round(
        &self,
        from: ClientId,
        client: u64,
        (session, round): ([u8; 32], u64),
        what: &str,
    ) -> MufcResult<()> {
        if client != from.0 {
            return Err(rejected(format!(
                "client {from} {what} in the name of {client}"
            )));
        }
        if session != self.spec.session || round != self.spec.round {
            return Err(rejected(format!("client {from} {what} for another round")));
        }
        Ok(())
    }

    /// Client `from`'s key, sent as `client`'s for the round
    /// `(session, round)`: kept if it is its own, of this round, and its
    /// first.
    fn accept_key(
        &mut self,
        from: ClientId,
        client: u64,
        (session, round): ([u8; 32], u64),
        key: MaskPublicKey,
    ) -> MufcResult<()> {
        self.own_round(from, client, (session, round), "sent a key")?;
        if self.keys.contains_key(&from) {
            return Err(rejected(format!("client {from} sent a second key")));
        }
        self.keys.insert(from, key);
        Ok(())
    }

    /// Client `from`'s masked frame: added to the sum if it is its own,
    /// of this round, and its first.
    fn accept_frame(&mut self, from: ClientId, frame: &[u8]) -> MufcResult<()> {
        if self.sum.clients().contains(&from.0) {
            return Err(rejected(format!("client {from} sent a second frame")));
        }
        // The frame names its sender and round: checked now, so that a
        // bad frame is refused while the client may still send its own,
        // not when the sum fails.
        let f = Frame::parse(frame, self.max_frame)?;
        if f.client_id != from.0 || f.context() != self.spec.context() {
            return Err(rejected(format!(
                "client {from} sent a frame of another client or round"
            )));
        }
        self.add(&f)
    }
}
