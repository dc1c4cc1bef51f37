//! Clients that join a trained federation (issue 29): the setup with them
//! on its roster, and the check every party makes that a new setup is an
//! old one with clients admitted and nothing else changed.
//!
//! What a join may change, and what it may not: the grid, the field's
//! bound on the points (`max_points`), the clients' `k` and every other
//! resolved parameter stay those of training (a retraining on the same
//! records with the resolved configuration gives the same model); the
//! roster gains the new clients, and the sketch capacity `client_k` bins
//! for each, so the next sum is a whole one at the new capacity.

use super::RemoteSetup;
use crate::ids::in_order;
use crate::{ClientId, MufcError, MufcResult};

impl RemoteSetup {
    /// The setup with the clients `joining` on the roster and `client_k`
    /// more bins of sketch capacity for each; every other part unchanged.
    ///
    /// # Errors
    ///
    /// [`MufcError::NoClients`] for none; [`MufcError::DuplicateClient`]
    /// for a client already on the roster (across processes a client
    /// that left keeps its place there, so an id is never given twice) or
    /// named twice;
    /// [`MufcError::TopologyUnsupported`] with groups (a new client's
    /// group, and a full group's split, are not built yet).
    ///
    /// # Example
    ///
    /// ```
    /// use mufc::remote::{Registration, RemoteSetup};
    /// use mufc::{ClientId, FederationConfig, MufcError};
    ///
    /// let regs: Vec<Registration> = (0..3).map(|i| Registration { id: ClientId(i), points: 50, dim: 2, scale: 1 }).collect();
    /// let setup = RemoteSetup::new(&FederationConfig::new(2).validate()?, &regs)?;
    /// let grown = setup.admitting(&[ClientId(9)])?;
    /// assert_eq!(grown.roster(), [0, 1, 2, 9].map(ClientId));
    /// assert_eq!(grown.capacity(), setup.capacity() + setup.config().client_k());
    /// assert_eq!(grown.config(), setup.config());
    /// assert!(matches!(setup.admitting(&[ClientId(1)]), Err(MufcError::DuplicateClient(_))));
    /// # Ok::<(), MufcError>(())
    /// ```
    pub fn admitting(&self, joining: &[ClientId]) -> MufcResult<Self> {
        if joining.is_empty() {
            return Err(MufcError::NoClients);
        }
        if self.layout.is_some() {
            return Err(MufcError::TopologyUnsupported(
                "a client joining a trained federation",
            ));
        }
        let mut roster = self.roster.clone();
        for &c in joining {
            match roster.binary_search(&c) {
                Ok(_) => return Err(MufcError::DuplicateClient(c)),
                Err(at) => roster.insert(at, c),
            }
        }
        let more = self.config.client_k().saturating_mul(joining.len());
        Ok(Self {
            config: self.config.clone(),
            dim: self.dim,
            roster,
            layout: None,
            capacity: self.capacity.saturating_add(more),
        })
    }

    /// The clients this setup admitted into `before`, if it is `before`
    /// with clients joined and nothing else changed
    /// ([`Self::admitting`]): the check a client, or the dealer, makes
    /// before it takes a new setup. Empty for the same setup.
    ///
    /// # Errors
    ///
    /// Why it is not: another configuration, dimension or groups, a
    /// client of `before` missing, or a capacity other than `client_k`
    /// bins more for each new client.
    ///
    /// # Example
    ///
    /// ```
    /// use mufc::remote::{Registration, RemoteSetup};
    /// use mufc::{ClientId, FederationConfig};
    ///
    /// let regs: Vec<Registration> = (0..3).map(|i| Registration { id: ClientId(i), points: 50, dim: 2, scale: 1 }).collect();
    /// let setup = RemoteSetup::new(&FederationConfig::new(2).validate()?, &regs)?;
    /// let grown = setup.admitting(&[ClientId(3)])?;
    /// assert_eq!(grown.admitted_since(&setup), Ok(vec![ClientId(3)]));
    /// assert!(setup.admitted_since(&grown).is_err());
    /// # Ok::<(), mufc::MufcError>(())
    /// ```
    pub fn admitted_since(&self, before: &Self) -> Result<Vec<ClientId>, String> {
        if self.config != before.config || self.dim != before.dim {
            return Err("its configuration or dimension differs from the federation's".into());
        }
        if self.layout.is_some() || before.layout.is_some() {
            return Err("clients join only a federation without groups".into());
        }
        let ours = in_order(&self.roster);
        let theirs = in_order(&before.roster);
        if let Some(c) = crate::ids::first_missing(theirs.iter(), &ours) {
            return Err(format!("its roster leaves out client {c}"));
        }
        let joined: Vec<ClientId> = (ours.iter())
            .filter(|c| theirs.binary_search(c).is_err())
            .copied()
            .collect();
        let more = self.config.client_k().saturating_mul(joined.len());
        if self.capacity != before.capacity.saturating_add(more) {
            return Err(format!(
                "its sketch capacity {} is not {} plus {} bins for each of its {} new clients",
                self.capacity,
                before.capacity,
                self.config.client_k(),
                joined.len()
            ));
        }
        Ok(joined)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::FederationConfig;
    use crate::remote::Registration;

    fn setup(n: u64) -> RemoteSetup {
        let regs: Vec<Registration> = (0..n)
            .map(|i| Registration {
                id: ClientId(i),
                points: 40,
                dim: 2,
                scale: 1,
            })
            .collect();
        let config = FederationConfig::new(2).validate().expect("valid");
        RemoteSetup::new(&config, &regs).expect("setup")
    }

    #[test]
    fn a_setup_admits_new_clients_and_nothing_else() {
        let before = setup(3);
        let after = before
            .admitting(&[ClientId(7), ClientId(5)])
            .expect("admits");
        assert_eq!(after.roster(), [0, 1, 2, 5, 7].map(ClientId));
        assert_eq!(
            after.admitted_since(&before),
            Ok(vec![ClientId(5), ClientId(7)])
        );
        assert_eq!(before.admitted_since(&before), Ok(vec![]));
        // Twice the same new client, or an old one.
        assert!(before.admitting(&[ClientId(5), ClientId(5)]).is_err());
        assert!(before.admitting(&[]).is_err());
        // A setup that drops a client, or lies about its capacity.
        assert!(before.admitted_since(&after).is_err());
        let mut lying = after;
        lying.capacity += 1;
        assert!(lying.admitted_since(&before).is_err());
        let other = setup(4);
        let mut moved = other.clone();
        moved.dim = 3;
        assert!(moved.admitted_since(&other).is_err());
    }
}
