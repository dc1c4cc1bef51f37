//! Clients admitted to a trained federation (issue 29): the server's
//! roster grows, its aggregation is sized for it, and its round counter
//! and last sum go on.

use super::RemoteServer;
use crate::aggregation::Aggregation;
use crate::{ClientId, MufcError, MufcResult};

impl RemoteServer {
    /// The server with the clients `joining` on its roster
    /// ([`RemoteSetup::admitting`](crate::remote::RemoteSetup::admitting)):
    /// its aggregation sized for the new capacity, with the same round
    /// counter (no round's secrets are drawn twice) and its last sum the
    /// model's counts. Its model is unchanged until a round includes the
    /// new clients; that round is whole (no change round runs against a
    /// sum of another capacity), so every member sends its histogram.
    /// `self` is unchanged on an error.
    ///
    /// # Errors
    ///
    /// [`MufcError::NoServerModel`] before the model is trained or once
    /// it is withdrawn; those of
    /// [`RemoteSetup::admitting`](crate::remote::RemoteSetup::admitting);
    /// the aggregation's (the parameters for the new capacity).
    pub(crate) fn admitting(&self, joining: &[ClientId]) -> MufcResult<Self> {
        if self.fit_report.is_none() || self.withdrawn.is_some() {
            return Err(MufcError::NoServerModel);
        }
        let setup = self.setup.admitting(joining)?;
        let aggregation = match &self.aggregation {
            Some(before) => {
                let mut fresh = (setup.aggregation(&setup.parts()?)?).ok_or_else(|| {
                    MufcError::Remote("a masked setup with no aggregation".into())
                })?;
                fresh.continuing(before, self.server.counts());
                Some(fresh)
            }
            None => None,
        };
        let mut fit_report = self.fit_report.clone();
        if let Some(r) = &mut fit_report {
            r.sketch = aggregation.as_ref().map(Aggregation::info);
        }
        Ok(Self {
            setup,
            aggregation,
            fit_report,
            ..self.clone()
        })
    }
}
