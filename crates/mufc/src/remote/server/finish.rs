//! A finished round: the server decodes its sum (the whole one, or its
//! change against the last), updates the model of the round's group and
//! the nodes above it, and commits; the plain mode's round rebuilds the
//! server's points from the clients' centroids.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use num_bigint::BigUint;

use super::RemoteServer;
use super::round::Half;
use crate::aggregation::Aggregation;
use crate::remote::plain::PlainServer;
use crate::remote::{RoundReport, ServerRound};
use crate::server::InputChange;
use crate::server::decode::{Decoded, DeltaCheck};
use crate::state::tree::{FinishedRound, Tree};
use crate::{ClientId, DecodeKind, FitReport, MufcError, MufcResult, SecAggStep, ServerUpdate};

impl RemoteServer {
    /// Decodes a finished round, updates the model and commits. On an
    /// error nothing changed (the round number stays consumed).
    ///
    /// # Errors
    ///
    /// [`MufcError::Remote`] for a round that is not finished;
    /// [`MufcError::ChangeUndecoded`] for a change round whose sum did not
    /// decode; the decoders' errors (a sum beyond the capacity);
    /// [`MufcError::InvalidConfig`] for a sum of more points than the
    /// federation's `max_points` (records that arrived beyond it); the
    /// K-means errors.
    pub fn finish_round(&mut self, round: ServerRound) -> MufcResult<RoundReport> {
        let number = round.spec.round;
        let half = match round.half {
            Half::Masked(half) => half,
            Half::Plain(half) => return self.finish_plain(number, half, round.started),
        };
        let check = DeltaCheck {
            last: self.last_counts(round.group)?,
            capacity: self.setup.capacity(),
            max_points: self.setup.config.max_points().unwrap_or(0),
        };
        let out = half.conclude(&check)?;
        // Only a change round's sum may fail to decode: more bins changed
        // than announced. Nothing is committed, so the next round is whole
        // (`Aggregation::open_change_remote`).
        let decoded = out
            .decoded
            .ok_or(MufcError::ChangeUndecoded { round: number })?;
        // Records that arrived may not take an aggregate beyond the bound
        // its field was sized for at training (issue 29): that needs a new
        // aggregation. Refused before anything is committed.
        let max_points = self.setup.config.max_points().unwrap_or(u64::MAX);
        let total = decoded.total_after(self.last_counts(round.group)?);
        if total > i128::from(max_points) {
            return Err(crate::error::config_error(
                crate::ConfigParam::MaxPoints,
                format!(
                    "round {number}'s sum counts {total} points, beyond the bound {max_points} \
                     the federation was trained with: records that arrive beyond it need a new \
                     federation, trained with a larger max_points"
                ),
            ));
        }
        let decode = DecodeKind::of(&decoded);
        let start = Instant::now();
        let finished = FinishedRound {
            pending: out.pending,
            round: number,
            included: out.included.clone(),
        };
        let (update, training) = self.commit_decoded(round.group, decoded, finished)?;
        let server_time = start.elapsed();
        if training {
            let t = &mut self.training_times;
            t.sum += out.protocol;
            t.decode += out.decode;
            t.server += server_time;
            t.wall += round.started.elapsed();
        }
        self.note_model(&out.included, &out.dropped);
        Ok(RoundReport {
            round: number,
            group: round.group,
            training,
            included: out.included,
            dropped: out.dropped,
            decode,
            update,
            nonzero_bins: self.server.nonzero_bins(),
            total_count: self.server.total_count(),
            protocol: out.protocol,
            decode_time: out.decode,
            server_time,
            wall: round.started.elapsed(),
        })
    }

    /// Finishes plain round `number`: every answering client's change of
    /// centroids (against the points the server built from its last
    /// message) updates the model. Those that did not answer keep their
    /// points.
    fn finish_plain(
        &mut self,
        number: u64,
        half: PlainServer,
        started: Instant,
    ) -> MufcResult<RoundReport> {
        let start = Instant::now();
        let included: Vec<ClientId> = half.answered().into_iter().collect();
        let plan = self
            .server
            .plan(InputChange::Plain(half.changes(&self.server)))?;
        let update = self.server.apply(plan)?;
        let server_time = start.elapsed();
        let training = self.fit_report.is_none();
        if training {
            self.training_times.server += server_time;
            self.training_times.wall += started.elapsed();
        }
        // The model holds every client's centroids, sent in this round or
        // an earlier one.
        self.note_model(&self.setup.roster.clone(), &[]);
        Ok(RoundReport {
            round: number,
            group: None,
            training,
            included,
            dropped: Vec::new(),
            decode: DecodeKind::Plain,
            update,
            nonzero_bins: self.server.nonzero_bins(),
            total_count: self.server.total_count(),
            protocol: Duration::ZERO,
            decode_time: Duration::ZERO,
            server_time,
            wall: started.elapsed(),
        })
    }

    /// The counts a round's sum of `group` is decoded against: with
    /// groups, the group's last sum; flat, the model's.
    fn last_counts(&self, group: Option<usize>) -> MufcResult<&BTreeMap<BigUint, u64>> {
        match (&self.tree, group) {
            (Some(tree), Some(g)) => tree
                .group_counts(g)
                .ok_or_else(|| MufcError::Remote(format!("no group {g}"))),
            _ => Ok(self.server.counts()),
        }
    }

    /// Updates the model with a round's decoded sum and commits the
    /// round: the server's update, and whether the round trained (its
    /// group's first, or the flat aggregate's).
    fn commit_decoded(
        &mut self,
        group: Option<usize>,
        decoded: Decoded,
        finished: FinishedRound,
    ) -> MufcResult<(ServerUpdate, bool)> {
        match (&mut self.tree, group) {
            (Some(tree), Some(g)) => {
                let training = !tree.group_trained(g);
                let parallel = self.setup.config.run().is_parallel();
                let update = tree.commit_group(&mut self.server, g, decoded, finished, parallel)?;
                Ok((update, training))
            }
            _ => {
                let plan = self.server.plan(InputChange::Counts(decoded))?;
                let update = self.server.apply(plan)?;
                if let Some(a) = &mut self.aggregation {
                    a.commit_remote(finished.pending, finished.round);
                }
                Ok((update, self.fit_report.is_none()))
            }
        }
    }

    /// Keeps the fit report in step with a committed round that
    /// `included` and `dropped` clients. Across processes the report's
    /// clients are the model's: those of the last committed round (with
    /// groups, every group's), so that a client a round left out is seen
    /// as missing until a round includes it again (`Self::included`).
    /// The report is written once every group (or the one flat
    /// aggregate) trained, with every training round's times added up.
    fn note_model(&mut self, included: &[ClientId], dropped: &[(ClientId, SecAggStep)]) {
        let model = self
            .tree
            .as_ref()
            .map_or_else(|| included.to_vec(), Tree::included);
        if let Some(report) = &mut self.fit_report {
            report.included = model;
        } else if self.tree.as_ref().is_none_or(Tree::trained) {
            self.fit_report = Some(FitReport {
                times: self.training_times,
                bytes_per_client: 0,
                nonzero_bins: self.server.nonzero_bins(),
                sketch: self.aggregation.as_ref().map(Aggregation::info),
                server_points: self.server.data().len(),
                included: model,
                dropped: dropped.to_vec(),
            });
        }
    }
}
