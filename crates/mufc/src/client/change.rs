//! A client's points changing: some forgotten (Algorithm 3 for seeding,
//! an exact update for full K-means) or some added (the insertion
//! counterpart), through the same steps in either direction.

use seeding::{Changes, Dataset, PointId, Quantizer};

use super::{Client, Local, sent_clusters};
use crate::MufcResult;

/// A change of a client's points: some forgotten, or some added.
#[derive(Clone, Copy)]
enum Change<'a> {
    Remove(&'a [PointId]),
    Add(&'a Dataset),
}

impl Change<'_> {
    /// The points after the change. A removal moves the last points into
    /// the freed slots, as [`Seeding::unlearn`] does; an addition appends.
    fn apply(self, data: &Dataset) -> MufcResult<Dataset> {
        let mut after = data.clone();
        match self {
            Self::Remove(ids) => after.remove(ids)?,
            Self::Add(records) => after.append(records)?,
        }
        Ok(after)
    }

    /// How many points `n` become.
    fn len_after(self, n: usize) -> usize {
        match self {
            Self::Remove(ids) => n.saturating_sub(ids.len()),
            Self::Add(records) => n.saturating_add(records.len()),
        }
    }

    /// The change as exact K-means names it.
    fn changes(self) -> Changes {
        match self {
            Self::Remove(ids) => Changes::removing(ids.to_vec()),
            Self::Add(records) => Changes::default().with_added(records.ids().to_vec()),
        }
    }
}

impl Client {
    /// A copy of this client with `ids` removed (Algorithm 3 for seeding,
    /// an exact update for full K-means) and its histogram recomputed;
    /// whether it reseeded. The ids must be present and distinct, and not
    /// all of the client's points (checked by the caller). A client whose
    /// number of clusters follows its size ([`LocalParams::k_for`]) and
    /// changes with the removal is fitted again: that is what training it
    /// on the remaining points does.
    pub(crate) fn unlearned(
        &self,
        ids: &[PointId],
        quantizer: Option<&Quantizer>,
    ) -> MufcResult<(Self, bool)> {
        self.changed(Change::Remove(ids), quantizer)
    }

    /// A copy of this client with the points of `records` added (the
    /// insertion counterpart of Algorithm 3 for seeding,
    /// [`Seeding::insert`]; an exact update for full K-means) and its
    /// histogram recomputed; whether it reseeded. The records' ids must be
    /// new to the client, and their coordinates in the grid's box when
    /// there is one (checked by the caller). As for a removal, a client
    /// whose number of clusters follows its size and changes is fitted
    /// again.
    pub(crate) fn learned(
        &self,
        records: &Dataset,
        quantizer: Option<&Quantizer>,
    ) -> MufcResult<(Self, bool)> {
        self.changed(Change::Add(records), quantizer)
    }

    /// [`Self::unlearned`] and [`Self::learned`]: the same steps, in either
    /// direction.
    fn changed(
        &self,
        change: Change<'_>,
        quantizer: Option<&Quantizer>,
    ) -> MufcResult<(Self, bool)> {
        // A stored client is checked first, whichever way it changes: what
        // it sent before is what the aggregate holds.
        let this = self.fitted(quantizer)?;
        if this.params.k_for(change.len_after(this.data().len())) != this.k() {
            let after = change.apply(this.data())?;
            let next = Self::fit(this.id, after, &this.params, this.seed, quantizer)?;
            return Ok((next, true));
        }
        let mut next = this.into_owned();
        let reseeded = match (&mut next.local, change) {
            (Local::Seeding(s), Change::Remove(ids)) => s.unlearn(ids)?.reseeded(),
            (Local::Seeding(s), Change::Add(records)) => s.insert(records)?.reseeded(),
            (Local::Full { data, model }, change) => {
                let after = change.apply(data)?;
                let report = model.update(&after, &change.changes())?;
                *data = after;
                report.seeding_changed()
            }
            (Local::Stored { .. }, _) => false,
        };
        next.sent = sent_clusters(&next.local, next.params.min_cluster_size)?;
        next.quantize(quantizer)?;
        Ok((next, reseeded))
    }
}
