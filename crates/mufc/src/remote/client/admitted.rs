//! A client's side of a join (issue 29): a new client trained in the
//! federation it joins, and a member taking the setup that admits new
//! clients.

use seeding::Dataset;

use super::trained::train;
use super::{RemoteClient, State};
use crate::remote::RemoteSetup;
use crate::{ClientId, MufcError, MufcResult};

impl RemoteClient {
    /// Client `id`, new to the federation of `setup` (which admitted it,
    /// [`RemoteSetup::admitting`]), trained on `data` there at once, as
    /// it would have been at training: its first round is a whole one.
    ///
    /// # Errors
    ///
    /// [`MufcError::UnknownClient`] when `setup`'s roster does not name
    /// it; [`MufcError::EmptyClient`]; as training
    /// ([`MufcError::DimensionMismatch`], [`MufcError::OutsideBox`],
    /// [`MufcError::TooFewDistinctPoints`]).
    pub(crate) fn joining(id: ClientId, data: Dataset, setup: &RemoteSetup) -> MufcResult<Self> {
        if setup.roster().binary_search(&id).is_err() {
            return Err(MufcError::UnknownClient(id));
        }
        if data.is_empty() {
            return Err(MufcError::EmptyClient(id));
        }
        let trained = train(id, data, setup.clone(), None)?;
        Ok(Self::in_state(
            id,
            State::Trained(Box::new(trained)),
            Default::default(),
        ))
    }

    /// Takes `setup`, the federation's setup with new clients admitted
    /// ([`RemoteSetup::admitting`]) and nothing else changed: the client
    /// sums at the new capacity from its next round on, which is whole
    /// (its kept sketch has the old parameters, so that round encodes its
    /// histogram afresh: `sketch_of`). Its points,
    /// seeding and last message are unchanged. The client is unchanged on
    /// an error.
    ///
    /// # Errors
    ///
    /// [`MufcError::RoundRefused`] (round 0: no round is named) for a
    /// client not trained yet, or a setup that is not its own with clients
    /// admitted ([`RemoteSetup::admitted_since`]); the aggregation's
    /// errors for the new capacity.
    pub(crate) fn adopt(&mut self, setup: &RemoteSetup) -> MufcResult<()> {
        let refuse = |reason: String| MufcError::RoundRefused { round: 0, reason };
        let State::Trained(t) = &mut self.state else {
            return Err(refuse(
                "the client is not trained: it takes any setup at its first round".into(),
            ));
        };
        setup.admitted_since(&t.setup).map_err(|why| {
            refuse(format!(
                "the new setup is not the federation's with clients admitted: {why}"
            ))
        })?;
        let aggregation = setup.aggregation(&setup.parts()?)?;
        t.setup = setup.clone();
        t.aggregation = aggregation;
        Ok(())
    }
}
