//! A client's side of the roster's changes (issue 29): a new client
//! trained in the federation it joins, a member taking the setup that
//! admits new clients, and a member taking a client that left off the
//! clients its rings must name.

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
    /// ([`RemoteSetup::admitting`]), or with groups one group split in
    /// two or one group's clients moved to another (in one process, as a
    /// group grows full or falls below the minimum), and nothing else
    /// changed: the client
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
    ///
    /// Across processes the client's operator decides whom it admits: a
    /// driver calls this only for a setup whose new clients it checked
    /// (`mufc-net` checks each new client's certificate against the
    /// federation's authority first), since [`Self::join`] refuses any
    /// setup but the client's own.
    ///
    /// # Example
    ///
    /// ```
    /// use mufc::remote::{InProcess, RemoteClient};
    /// use mufc::{ClientId, FederationConfig};
    /// use nalgebra::DMatrix;
    /// use seeding::Dataset;
    ///
    /// let data: Vec<(ClientId, Dataset)> = (0..3)
    ///     .map(|l| Dataset::new(DMatrix::from_fn(2, 30, |r, c| ((c * (3 + l) + r * 7) % 17) as f64 / 40.0 - 0.2)).map(|d| (ClientId(l as u64), d)))
    ///     .collect::<Result<_, _>>()?;
    /// let parties = InProcess::train(data, &FederationConfig::new(2).seed(5).validate()?)?;
    /// let mut client: RemoteClient = parties.clients()[0].clone();
    /// let own = client.setup().cloned().unwrap();
    /// client.adopt(&own.admitting(&[ClientId(7)])?)?;
    /// assert_eq!(client.setup().unwrap().roster().len(), 4);
    /// // Not the setup with a client dropped.
    /// assert!(client.adopt(&own).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn adopt(&mut self, setup: &RemoteSetup) -> MufcResult<()> {
        let refuse = |reason: String| MufcError::RoundRefused { round: 0, reason };
        let State::Trained(t) = &mut self.state else {
            return Err(refuse(
                "the client is not trained: it takes any setup at its first round".into(),
            ));
        };
        // After a split or a merge the clients that moved sum in their own
        // group: a ring of this client's group leaves them out, and the
        // ring check asks only for the last sum's clients of the client's
        // own group.
        setup.taken_since(&t.setup).map_err(|why| {
            refuse(format!(
                "the new setup is not the federation's with clients admitted, a group split or \
                 groups merged: {why}"
            ))
        })?;
        let aggregation = setup.aggregation(&setup.parts()?)?;
        t.setup = setup.clone();
        t.aggregation = aggregation;
        Ok(())
    }

    /// Takes client `id`, which left the federation, off the clients the
    /// client's later rings must name (its last sum's, issue 28, item 5):
    /// a ring without it is joined again. A driver calls it only once it
    /// checked that `id` itself said it left after its whole removal's
    /// round committed (`mufc-net` checks its signed leave statement), so
    /// that the last input of `id` in any sum was empty and a sum without
    /// it tells the server nothing more.
    ///
    /// # Example
    ///
    /// ```
    /// use mufc::ClientId;
    /// use mufc::remote::RemoteClient;
    /// use nalgebra::DMatrix;
    /// use seeding::Dataset;
    ///
    /// let data = Dataset::new(DMatrix::from_element(2, 4, 0.1))?;
    /// let mut client = RemoteClient::new(ClientId(0), data)?.with_last_sum(vec![ClientId(0), ClientId(1), ClientId(2)]);
    /// client.accept_leave(ClientId(2));
    /// assert_eq!(client.last_sum(), [ClientId(0), ClientId(1)]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn accept_leave(&mut self, id: ClientId) {
        self.last_sum.retain(|c| *c != id);
    }
}
