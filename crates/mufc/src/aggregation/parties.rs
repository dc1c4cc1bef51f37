//! The parties of a round, opened and joined: the server's half
//! ([`ServerHalf`]) and a client's ([`ClientHalf`]) are built here, on the
//! concrete sketch and field the parameters chose, and handed out behind
//! byte-level traits, so that the code that carries the bytes (the
//! parties' drivers: `remote::InProcess` and `mufc-net`) never names a
//! field.
//! Each client checks the round it is asked to join against its own copy
//! of the configuration before it sends anything, in one process as
//! across processes.
//!
//! Every party draws its own randomness from the operating system (the
//! server its session id and the SecAgg+ ring, each client its key pairs
//! and self-mask seed, the dealer its seeds), or, under
//! `insecure_deterministic_masks` (which each party's operator must allow:
//! `RemoteClient::allowing_deterministic_masks`), derives it from the
//! federation seed and the round; a dealt round's keys are those each
//! client agreed with the dealer (`deal_remote`).

use std::collections::BTreeMap;

use syndrome_agg::ValidAnyParams;
use syndrome_agg::masking::dealer::SealKey;
use syndrome_agg::masking::pairwise::MaskKeyPair;

use super::Aggregation;
use super::framed::{DealerParty, FramedClient, FramedServer, Mode, PairKeys};
use super::halves::{DealerHalf, Joined, RoundProtocol, RoundSpec, Sends, ServerHalf, Sums};
use super::masks::MaskSource;
use super::round::{Input, Sent, histogram_change};
use super::run::Pending;
use super::secagg_halves::{JoinRound, OpenServer};
use super::secrets::RoundSecrets;
use super::secure::RoundFailure;
use crate::client::message::Encoded;
use crate::ids::in_order;
use crate::{ClientId, MufcError, MufcResult};

impl Aggregation {
    /// The fewest clients a round of dealt or pairwise masks may have: the
    /// minimum aggregate, and for pairwise masks two (a ring of one would
    /// send its sketch unmasked).
    fn least_ring(&self) -> usize {
        match self.masking {
            MaskSource::Pairwise => self.min_clients.max(2),
            _ => self.min_clients.max(1),
        }
    }

    /// The fewest clients of a ring of `n` that must answer for a round
    /// to commit: SecAgg's threshold (at least the minimum aggregate);
    /// with pairwise masks, every one (they tolerate no dropout).
    ///
    /// # Errors
    ///
    /// The SecAgg parameter errors for a ring of `n`.
    pub(crate) fn survivors_needed(&self, n: usize) -> MufcResult<usize> {
        match &self.masking {
            MaskSource::SecAgg(settings) => Ok(settings.params(n)?.threshold.max(self.min_clients)),
            _ => Ok(n),
        }
    }

    /// The parameters and last sum a round decodes against; `change`: the
    /// small signed parameters of a change round.
    fn sums(&self, change: Option<&ValidAnyParams>) -> Sums {
        Sums {
            params: self.scheme.params.clone(),
            delta: self.scheme.delta.clone(),
            last: self.scheme.last.clone(),
            change: change.cloned(),
        }
    }

    /// Opens the next round across processes for `clients`: draws its
    /// session (and SecAgg+ ring) from the operating system, and returns
    /// its public description and the server's half. The round number is
    /// consumed first, as in process.
    pub(crate) fn open_remote(
        &mut self,
        clients: &[ClientId],
    ) -> MufcResult<(RoundSpec, Box<dyn ServerHalf>)> {
        self.materialize_last()?;
        let number = self.round;
        self.round = number.saturating_add(1);
        let secrets = RoundSecrets::new(self.secrets, number)?;
        self.open_round(number, &secrets, clients, None)
    }

    /// Opens round `number` for `clients` with the round's `secrets`
    /// (which draw the session id and the SecAgg+ ring): the spec every
    /// client checks, and the server's half. `change`: a change round's
    /// small signed parameters (pairwise masks only: a SecAgg dropout
    /// would lose its change). Shared by whole rounds
    /// ([`Self::open_remote`]) and change rounds (`change.rs`).
    pub(super) fn open_round(
        &self,
        number: u64,
        secrets: &RoundSecrets,
        clients: &[ClientId],
        change: Option<&ValidAnyParams>,
    ) -> MufcResult<(RoundSpec, Box<dyn ServerHalf>)> {
        let sends = match change {
            None => Sends::Histograms,
            // In process the driver gives each client its change, and no
            // client checks the base.
            Some(p) => Sends::Changes {
                capacity: p.sketch_params().capacity() as u64,
                base: self.committed.unwrap_or_default(),
            },
        };
        let (settings, protocol) = match &self.masking {
            MaskSource::SecAgg(settings) => (Some(settings), None),
            MaskSource::Pairwise => (None, Some(RoundProtocol::Pairwise)),
            MaskSource::Dealer => (None, Some(RoundProtocol::Dealer)),
        };
        if change.is_some() && settings.is_some() {
            return Err(MufcError::Remote(
                "a change round needs every client: not with SecAgg".into(),
            ));
        }
        let Some(settings) = settings else {
            let least = self.least_ring();
            if clients.len() < least {
                return Err(MufcError::TooFewClients {
                    clients: clients.len(),
                    min_clients: least,
                });
            }
            let mut ring = clients.to_vec();
            ring.sort_unstable();
            let spec = RoundSpec {
                round: number,
                session: secrets.session().0,
                ring,
                protocol: protocol.unwrap_or(RoundProtocol::Pairwise),
                sends,
            };
            let half = FramedServer::open(spec.clone(), self.sums(change), self.min_clients)?;
            return Ok((spec, Box::new(half)));
        };
        let params = settings.params(clients.len())?;
        let mut rng = secrets.rng("secagg", number);
        let graph = params.graph_for(clients.iter().map(|c| c.0), &mut rng)?;
        let spec = RoundSpec {
            round: number,
            session: secrets.session().0,
            ring: graph.ring().iter().copied().map(ClientId).collect(),
            protocol: RoundProtocol::SecAgg(params),
            sends,
        };
        let open = OpenServer {
            spec: spec.clone(),
            sums: self.sums(None),
            failure: RoundFailure {
                round: number,
                clients: clients.len(),
                threshold: params.threshold,
                min_clients: self.min_clients,
            },
        };
        let half = open.open(&self.scheme.params)?;
        Ok((spec, half))
    }

    /// Checks that `spec` is a round client `me` may join: it is named in
    /// the ring ([`Self::check_protocol`] for the rest).
    pub(crate) fn check_round(&self, spec: &RoundSpec, me: ClientId) -> MufcResult<()> {
        self.check_protocol(spec)?;
        if !spec.ring.contains(&me) {
            return Err(MufcError::RoundRefused {
                round: spec.round,
                reason: format!("client {me} is not in the ring"),
            });
        }
        Ok(())
    }

    /// Checks that `spec` is a round a party may take part in: its ring
    /// names each client once, and the protocol is the one this party's
    /// own copy of the configuration gives for that many clients (a
    /// server cannot lower the threshold, change the graph, or ask for a
    /// pairwise or dealt round of fewer clients than the federation's
    /// minimum aggregate). The clients check it, and the dealer before it
    /// deals.
    pub(crate) fn check_protocol(&self, spec: &RoundSpec) -> MufcResult<()> {
        let refuse = |reason: String| MufcError::RoundRefused {
            round: spec.round,
            reason,
        };
        if in_order(&spec.ring).windows(2).any(|w| w[0] == w[1]) {
            return Err(refuse("the ring names a client twice".into()));
        }
        if let Sends::Changes { capacity, .. } = spec.sends {
            if matches!(self.masking, MaskSource::SecAgg(_)) {
                return Err(refuse(
                    "a change round with SecAgg: a dropout would lose its change".into(),
                ));
            }
            // Below the federation's capacity (else a whole round is as
            // small), and never a size a lying server picked to make the
            // parties allocate.
            let full = self.info().capacity as u64;
            if capacity == 0 || capacity >= full {
                return Err(refuse(format!(
                    "a change round of capacity {capacity}, not in 1..{full}"
                )));
            }
        }
        let expected = match &self.masking {
            MaskSource::SecAgg(settings) => {
                RoundProtocol::SecAgg(settings.params(spec.ring.len())?)
            }
            masking => {
                // A pairwise ring of one would send its sketch unmasked;
                // any ring of fewer than the minimum, an aggregate the
                // policy refuses.
                let least = self.least_ring();
                if spec.ring.len() < least {
                    return Err(refuse(format!(
                        "a round of {} clients, fewer than {least}",
                        spec.ring.len()
                    )));
                }
                match masking {
                    MaskSource::Dealer => RoundProtocol::Dealer,
                    _ => RoundProtocol::Pairwise,
                }
            }
        };
        if expected != spec.protocol {
            return Err(refuse(format!(
                "the server announced {:?} where the configuration gives {expected:?} \
                 for {} clients",
                spec.protocol,
                spec.ring.len()
            )));
        }
        Ok(())
    }

    /// Client `me` joins the round of `spec` with its `histogram` (and the
    /// sketch of its last message, which it updates), and in a dealt
    /// round the key `seal` it agreed with the dealer: the round is
    /// checked ([`Self::check_round`]), then the client's half, its first
    /// message and its new sketch (to keep once the round commits). A
    /// change round is joined only when its base is the round of `sent`,
    /// what the client sent in the last committed round that included
    /// it; the client then sends its change since.
    pub(crate) fn join_remote(
        &mut self,
        spec: &RoundSpec,
        me: ClientId,
        histogram: &[(num_bigint::BigUint, u64)],
        last: Option<&Encoded>,
        sent: Option<Sent<'_>>,
        seal: Option<SealKey>,
    ) -> MufcResult<Joined> {
        // Before a change's parameters are built from the spec (its
        // capacity is checked there).
        self.check_round(spec, me)?;
        let change = match spec.sends {
            Sends::Histograms => None,
            Sends::Changes { capacity, base } => {
                let sent =
                    sent.filter(|s| s.round == base)
                        .ok_or_else(|| MufcError::RoundRefused {
                            round: spec.round,
                            reason: format!(
                                "a change round against round {base}, and the last committed \
                             round that included this client is {}",
                                sent.map_or_else(
                                    || "unknown to it".into(),
                                    |s| s.round.to_string()
                                )
                            ),
                        })?;
                let t = usize::try_from(capacity).unwrap_or(usize::MAX);
                Some((
                    histogram_change(sent.histogram, histogram),
                    self.small_at(t)?,
                ))
            }
        };
        let change = change.map(|(c, at)| (c, &self.scheme.small[at].1));
        let input = Input {
            id: me,
            histogram,
            last,
            change: change.as_ref().map(|(c, _)| c.as_slice()),
        };
        self.join_checked(spec, input, change.as_ref().map(|(_, p)| *p), seal)
    }

    /// The dealer's half of the round of `spec` across processes, sealing
    /// with the `keys` it agreed with the clients: the round is checked
    /// as a client checks it ([`Self::check_protocol`]: a dealt round of
    /// at least the minimum aggregate), then the dealer draws the round's
    /// seeds from the operating system, for the whole sketch or, in a
    /// change round, for the change's (the clients check its base: the
    /// dealer keeps no round).
    pub(crate) fn deal_remote(
        &mut self,
        spec: &RoundSpec,
        keys: BTreeMap<ClientId, SealKey>,
    ) -> MufcResult<Box<dyn DealerHalf>> {
        self.check_protocol(spec)?;
        if spec.protocol != RoundProtocol::Dealer {
            return Err(MufcError::RoundRefused {
                round: spec.round,
                reason: format!(
                    "the dealer deals rounds under dealt masks, not {:?}",
                    spec.protocol
                ),
            });
        }
        let params = match spec.sends {
            Sends::Histograms => self.scheme.params.clone(),
            Sends::Changes { capacity, .. } => {
                let at = self.small_at(usize::try_from(capacity).unwrap_or(usize::MAX))?;
                self.scheme.small[at].1.clone()
            }
        };
        let secrets = RoundSecrets::new(self.secrets, spec.round)?;
        let rng = secrets.rng("dealer", spec.round);
        let party = DealerParty::new(spec.clone(), PairKeys::Agreed(keys), params, rng);
        Ok(Box::new(party))
    }

    /// The client of `input` joins the round of `spec`, once checked
    /// ([`Self::check_round`]), drawing its key pairs and seeds from the
    /// round's secrets (in a dealt round none: its mask comes from the
    /// seed the dealer seals under `seal`): the client's half, its first
    /// message and its new sketch; [`Self::join_remote`] after it checked
    /// the round against the client's last one.
    pub(super) fn join_checked(
        &self,
        spec: &RoundSpec,
        input: Input<'_>,
        change: Option<&ValidAnyParams>,
        seal: Option<SealKey>,
    ) -> MufcResult<Joined> {
        let agreed = match (spec.sends, change) {
            (Sends::Histograms, None) => input.change.is_none(),
            (Sends::Changes { capacity, .. }, Some(p)) => {
                p.sketch_params().capacity() as u64 == capacity && input.change.is_some()
            }
            _ => false,
        };
        if !agreed {
            let reason = match (spec.sends, change) {
                (Sends::Changes { .. }, None) => {
                    "a change round, and this client has no change to send".to_string()
                }
                _ => format!(
                    "the round asks for {:?}, not what this client makes",
                    spec.sends
                ),
            };
            return Err(MufcError::RoundRefused {
                round: spec.round,
                reason,
            });
        }
        let params = change.unwrap_or(&self.scheme.params);
        match (&spec.protocol, &self.masking) {
            (RoundProtocol::Pairwise, _) => {
                let secrets = RoundSecrets::of_session(self.secrets, &spec.session, spec.round)?;
                let secret = secrets.secret("pairwise-key", input.id.0);
                let mode = Mode::Pairwise(MaskKeyPair::from_secret_bytes(secret));
                return FramedClient::join(spec, input, params, mode);
            }
            (RoundProtocol::Dealer, _) => {
                let key = seal.ok_or_else(|| MufcError::RoundRefused {
                    round: spec.round,
                    reason: "a dealt round, and this client shares no key with a dealer \
                             (RemoteClient::pair_with_dealer)"
                        .into(),
                })?;
                return FramedClient::join(spec, input, params, Mode::Dealer(key));
            }
            _ => {}
        }
        let join = JoinRound {
            spec,
            input,
            secrets: &RoundSecrets::of_session(self.secrets, &spec.session, spec.round)?,
            params: &self.scheme.params,
        };
        join.join()
    }

    /// Keeps the aggregate of a round run across processes, and moves the
    /// round counter past it (a restarted server resumes after the
    /// rounds its store recorded).
    pub(crate) fn commit_remote(&mut self, pending: Pending, round: u64) {
        self.commit(pending);
        self.committed = Some(round);
        self.round = self.round.max(round.saturating_add(1));
    }
}
