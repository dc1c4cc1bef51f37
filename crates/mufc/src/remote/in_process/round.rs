//! One round driven in memory: the server announces, every member joins
//! from the announcement's bytes, each step's messages go to their
//! addressee (a deal request to the dealer), the server finishes, and the
//! members its sum included commit. Every party's time and bytes are
//! measured here ([`PartyCosts`]).

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use super::{DrivenRound, InProcess, PartyCosts};
use crate::ids::in_order;
use crate::remote::{Announcement, ClientRound, RemoteClient, RoundStep, ServerRound};
use crate::{ClientId, MufcError, MufcResult, SecAggStep, par};

/// A member's half of a round, its first message and the time it took.
type Joined = (ClientId, (ClientRound, Option<Vec<u8>>), Duration);

/// A round whose messages are all in, before the server finishes it.
struct Collected {
    round: ServerRound,
    halves: BTreeMap<ClientId, ClientRound>,
    costs: PartyCosts,
    received: Vec<(ClientId, Vec<u8>)>,
}

impl InProcess {
    /// One round of the clients `members` (a group's, or in the plain
    /// mode those that changed; a change round with `updated` where the
    /// server can run one): the server announces, every member joins from
    /// the announcement's bytes, each step's messages go to their
    /// addressee (the deal request to the dealer), the server finishes,
    /// and the members its sum included commit.
    pub(super) fn round(
        &mut self,
        members: &[ClientId],
        updated: Option<usize>,
    ) -> MufcResult<DrivenRound> {
        let collected = self.collect(members, updated)?;
        self.finish(collected)
    }

    /// The rounds of the groups `rings` (each its clients, whole rounds),
    /// every message of each collected before any finishes: the two
    /// halves of a split group commit together, so that a failure while
    /// collecting leaves every client in exactly one group's sum.
    pub(super) fn rounds_together(
        &mut self,
        rings: &[Vec<ClientId>],
    ) -> MufcResult<Vec<DrivenRound>> {
        let mut collected = Vec::with_capacity(rings.len());
        for ring in rings {
            collected.push(self.collect(ring, None)?);
        }
        collected.into_iter().map(|c| self.finish(c)).collect()
    }

    /// A round up to the unmasked sum: every message the server needs is
    /// in, nothing committed.
    fn collect(&mut self, members: &[ClientId], updated: Option<usize>) -> MufcResult<Collected> {
        let (announcement, mut round) = match updated {
            Some(u) => self.server.start_change_round(members, u)?,
            None => self.server.start_round(members)?,
        };
        let bytes = announcement.to_bytes()?;
        let number = round.spec().round;
        let dropped = self.dropped(members, number);
        let offline = |id: ClientId, step: Option<SecAggStep>| {
            step.is_some_and(|s| dropped.get(&id).is_some_and(|&from| s >= from))
        };
        let mut costs = PartyCosts::default();
        let recording = self.server.setup().config().run().records_messages();
        let mut received = Vec::new();
        let mut record = |from: ClientId, bytes: &[u8]| {
            if recording {
                received.push((from, bytes.to_vec()));
            }
        };
        let mut halves = BTreeMap::new();
        for (id, (half, first), took) in self.join(members, &bytes)? {
            costs.training.push((id, half.training()));
            costs.joins.push((id, took.saturating_sub(half.training())));
            if let Some(first) = first
                && !offline(id, round.step())
            {
                costs.sent(&first);
                record(id, &first);
                round.receive(id, &first)?;
            }
            halves.insert(id, half);
        }
        loop {
            match round.advance()? {
                RoundStep::Finished => break,
                RoundStep::Deal(request) => {
                    let start = Instant::now();
                    let answer = self.deal(&bytes, &request)?;
                    costs.dealer += start.elapsed();
                    record(ClientId(u64::MAX), &answer);
                    round.receive_deal(&answer)?;
                }
                RoundStep::Send(mut msgs) => {
                    msgs.retain(|(to, _)| !offline(*to, round.step()));
                    let answers = self.step(&mut halves, msgs)?;
                    let times = answers.iter().map(|(_, _, took)| *took);
                    costs.protocol_client_max += times.clone().max().unwrap_or_default();
                    costs.protocol_client_sum += times.sum::<Duration>();
                    for (to, reply, _) in answers {
                        costs.sent(&reply);
                        record(to, &reply);
                        round.receive(to, &reply)?;
                    }
                }
            }
        }
        #[cfg(test)]
        if self.injected.fail_next && self.injected.pass_first > 0 {
            self.injected.pass_first -= 1;
        } else if std::mem::take(&mut self.injected.fail_next) {
            self.injected.failed = Some((number, received));
            return Err(MufcError::Remote("injected failure after masking".into()));
        }
        Ok(Collected {
            round,
            halves,
            costs,
            received,
        })
    }

    /// Finishes a collected round: the server commits its sum, and the
    /// members it included commit their half.
    fn finish(&mut self, collected: Collected) -> MufcResult<DrivenRound> {
        let Collected {
            round,
            halves,
            costs,
            received,
        } = collected;
        let report = self.server.finish_round(round)?;
        self.commit_members(halves, &report.included)?;
        Ok(DrivenRound {
            report,
            costs,
            received,
        })
    }

    /// The members of round `number` offline from a step on: the
    /// configuration's simulated SecAgg dropouts (a client offline from a
    /// step neither hears nor answers it).
    fn dropped(&self, members: &[ClientId], number: u64) -> BTreeMap<ClientId, SecAggStep> {
        (members.iter())
            .filter_map(|&c| Some((c, self.server.simulated_dropout(number, c)?)))
            .collect()
    }

    /// Every member of a finished round took part; those the server's sum
    /// `included` commit their half (what they sent is the base of their
    /// next change round).
    fn commit_members(
        &mut self,
        halves: BTreeMap<ClientId, ClientRound>,
        included: &[ClientId],
    ) -> MufcResult<()> {
        let included = in_order(included);
        for (id, half) in halves {
            let at = self.at(id)?;
            if let Some(c) = self.clients.get_mut(at) {
                c.took_part(&half);
                if included.binary_search(&id).is_ok() {
                    c.commit(half);
                }
            }
        }
        Ok(())
    }

    /// Every member joins the round of the announcement's `bytes` (in
    /// parallel: a client's first round trains it): each one's half of
    /// the round, first message and time, in id order.
    fn join(&mut self, members: &[ClientId], bytes: &[u8]) -> MufcResult<Vec<Joined>> {
        let members = in_order(members);
        let parallel = self.parallel();
        let joining: Vec<&mut RemoteClient> = (self.clients.iter_mut())
            .filter(|c| members.binary_search(&c.id()).is_ok())
            .collect();
        par::map_owned(parallel, joining, |c| {
            let start = Instant::now();
            let announcement = Announcement::from_bytes(bytes)?;
            let joined = c.join(&announcement)?;
            Ok::<_, MufcError>((c.id(), joined, start.elapsed()))
        })
    }

    /// Gives each client's half its message of a step (in parallel, as
    /// the clients of a deployment answer side by side) and collects the
    /// answers with each one's time, in id order.
    fn step(
        &self,
        halves: &mut BTreeMap<ClientId, ClientRound>,
        msgs: Vec<(ClientId, Vec<u8>)>,
    ) -> MufcResult<Vec<(ClientId, Vec<u8>, Duration)>> {
        let mut msgs: BTreeMap<ClientId, Vec<u8>> = msgs.into_iter().collect();
        let work: Vec<(ClientId, &mut ClientRound, Vec<u8>)> = (halves.iter_mut())
            .filter_map(|(id, half)| msgs.remove(id).map(|m| (*id, half, m)))
            .collect();
        if let Some(to) = msgs.keys().next() {
            return Err(MufcError::UnknownClient(*to));
        }
        par::map_owned(self.parallel(), work, |(id, half, msg)| {
            let start = Instant::now();
            let answer = half.handle(&msg)?;
            Ok::<_, MufcError>((id, answer, start.elapsed()))
        })
    }

    /// Carries the deal `request` to the dealer: its answer, for the
    /// server.
    fn deal(&mut self, bytes: &[u8], request: &[u8]) -> MufcResult<Vec<u8>> {
        let dealer = self
            .dealer
            .as_mut()
            .ok_or_else(|| MufcError::Remote("a round with dealt masks and no dealer".into()))?;
        dealer.deal(&Announcement::from_bytes(bytes)?, request)
    }

    /// Whether the clients run side by side (the configuration's).
    fn parallel(&self) -> bool {
        self.server.setup().config().run().is_parallel()
    }
}
