//! What the parties agreed on out of band, which no announcement may
//! change (issue 28, item 6).
//!
//! The grid step sets how finely the server sees the clients' centroids,
//! and centroids seeded by K-means++ are records: with a step of 1e-6
//! the aggregate is a list of records. Without an agreement the step
//! comes from the point counts the clients claim about themselves, so one
//! member claiming 10^12 points, or a server started with a tiny step,
//! chose it for everybody. With an [`Agreement`], the server refuses a
//! claim beyond it and never resolves a finer step than agreed
//! ([`Agreement::resolve`]), and every client refuses a setup outside it
//! ([`Agreement::check_setup`], run by [`RemoteClient::join`](super::RemoteClient::join)).

use serde::{Deserialize, Serialize};

use super::{Registration, RemoteSetup};
use crate::{ClientId, Masking, MufcError, MufcResult, Topology, ValidConfig};

/// The smallest grid step by default: 1/1024 of the box per axis, the
/// coarsest step the default rule ever picks
/// ([`GammaRule`](crate::GammaRule)); federations of more than about a
/// million coordinates get this step instead of a finer one.
pub const DEFAULT_MIN_GAMMA: f64 = 1.0 / 1024.0;

/// The most points one client may claim by default: ten million.
pub const DEFAULT_MAX_CLIENT_POINTS: u64 = 10_000_000;

/// What every party of a federation across processes agreed on out of
/// band: the number of clients, the dimension, the smallest grid step,
/// and the most points one client may claim.
///
/// # Example
///
/// ```
/// use mufc::remote::{Agreement, Registration, RemoteSetup};
/// use mufc::{Channel, ClientId, FederationConfig, Masks, SecAggOptions};
///
/// let agreed = Agreement::new(3).dim(2);
/// let config = FederationConfig::new(2)
///     .channel(Channel::scma(Masks::SecAgg(SecAggOptions::new())))
///     .validate()?;
/// // A member claims 10^12 points: refused before any setup.
/// let liar = Registration { id: ClientId(2), points: 1_000_000_000_000, dim: 2, scale: 1 };
/// assert!(agreed.check_registration(&liar).is_err());
/// // The honest registrations resolve to a step no finer than agreed.
/// let regs: Vec<Registration> =
///     (0..3).map(|i| Registration { id: ClientId(i), points: 900_000, dim: 2, scale: 1 }).collect();
/// let setup = agreed.resolve(&config, &regs)?;
/// assert_eq!(setup.config().gamma(), Some(mufc::remote::DEFAULT_MIN_GAMMA));
/// assert!(agreed.check_setup(&setup).is_ok());
/// // The same registrations without the agreement get a finer step,
/// // which a client holding the agreement refuses.
/// let unagreed = RemoteSetup::new(&config, &regs)?;
/// assert!(agreed.check_setup(&unagreed).is_err());
/// # Ok::<(), mufc::MufcError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Agreement {
    /// The number of clients on the roster.
    pub clients: usize,
    /// The dimension of the points (`None`: not agreed).
    pub dim: Option<usize>,
    /// The smallest grid step any setup may have.
    pub min_gamma: f64,
    /// The most points one client may claim.
    pub max_client_points: u64,
    /// The privacy policy every setup must keep (`None`: not agreed).
    pub policy: Option<Policy>,
    /// The topology every setup must have (`None`: not agreed).
    pub topology: Option<Topology>,
    /// The clients admitted after training that the party checked (issue
    /// 29): a setup's groups may place each of them in any group, and
    /// must otherwise be those the topology gives the other clients.
    #[serde(default)]
    pub admitted: Vec<ClientId>,
}

/// The privacy policy the parties agreed on (issue 28): how the clients
/// mask, and floors on the smallest aggregate and on the clients a
/// removal round must change (the lone-update policy). A server may
/// announce a stricter setup (larger minimums), never a weaker one.
///
/// # Example
///
/// ```
/// use mufc::remote::{Agreement, Policy, Registration, RemoteSetup};
/// use mufc::{Channel, ClientId, FederationConfig, Masking, Masks, SecAggOptions};
///
/// let policy = Policy { masking: Masking::SecAgg, min_clients: 3, min_updating_clients: 2 };
/// let agreed = Agreement::new(3).policy(policy);
/// let regs: Vec<Registration> =
///     (0..3).map(|i| Registration { id: ClientId(i), points: 100, dim: 2, scale: 1 }).collect();
/// let secagg = FederationConfig::new(2).channel(Channel::scma(Masks::SecAgg(SecAggOptions::new())));
/// let kept = secagg.clone().min_clients(3).min_updating_clients(2).validate()?;
/// assert!(agreed.check_setup(&RemoteSetup::new(&kept, &regs)?).is_ok());
/// // Every removal at once: a lone change reaches the server.
/// let weaker = secagg.min_clients(3).min_updating_clients(1).validate()?;
/// assert!(agreed.check_setup(&RemoteSetup::new(&weaker, &regs)?).is_err());
/// # Ok::<(), mufc::MufcError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Policy {
    /// How the clients mask their sketches.
    pub masking: Masking,
    /// The least [`ValidConfig::min_clients`] a setup may have.
    pub min_clients: usize,
    /// The least [`ValidConfig::min_updating_clients`] a setup may have.
    pub min_updating_clients: usize,
}

impl Policy {
    /// Why `config` keeps a weaker policy, if it does.
    ///
    /// # Errors
    ///
    /// The reason.
    pub fn check(&self, config: &ValidConfig) -> Result<(), String> {
        let masking = config.channel().as_scma().map(|s| s.masks().masking());
        if masking != Some(self.masking) {
            return Err(format!(
                "the setup masks with {}, the agreement with {}",
                masking.map_or("nothing", |m| m.name()),
                self.masking.name()
            ));
        }
        if config.min_clients() < self.min_clients {
            return Err(format!(
                "the setup's smallest aggregate is {} clients, the agreement's {}",
                config.min_clients(),
                self.min_clients
            ));
        }
        if config.min_updating_clients() < self.min_updating_clients {
            return Err(format!(
                "the setup runs a removal round once {} clients changed, the agreement once {} \
                 (the lone-update policy)",
                config.min_updating_clients(),
                self.min_updating_clients
            ));
        }
        Ok(())
    }
}

impl Agreement {
    /// An agreement on `clients` clients with the defaults
    /// ([`DEFAULT_MIN_GAMMA`], [`DEFAULT_MAX_CLIENT_POINTS`], no
    /// dimension).
    pub fn new(clients: usize) -> Self {
        Self {
            clients,
            dim: None,
            min_gamma: DEFAULT_MIN_GAMMA,
            max_client_points: DEFAULT_MAX_CLIENT_POINTS,
            policy: None,
            topology: None,
            admitted: Vec::new(),
        }
    }

    /// With the privacy policy `policy` agreed.
    #[must_use]
    pub fn policy(mut self, policy: Policy) -> Self {
        self.policy = Some(policy);
        self
    }

    /// With the topology `topology` agreed.
    #[must_use]
    pub fn topology(mut self, topology: Topology) -> Self {
        self.topology = Some(topology);
        self
    }

    /// Why `config` breaks the agreed policy or topology, if it does: a
    /// server checks its own configuration with it before it serves.
    ///
    /// # Errors
    ///
    /// The reason.
    pub fn check_config(&self, config: &ValidConfig) -> Result<(), String> {
        if let Some(p) = &self.policy {
            p.check(config)?;
        }
        match self.topology {
            Some(t) if t != config.topology() => Err(format!(
                "the setup's topology is {:?}, the agreement's {t:?}",
                config.topology()
            )),
            _ => Ok(()),
        }
    }

    /// With the dimension `dim` agreed.
    #[must_use]
    pub fn dim(mut self, dim: usize) -> Self {
        self.dim = Some(dim);
        self
    }

    /// Checks the agreement itself: at least one client, a step in
    /// `(0, 1]`, a positive bound on the points.
    ///
    /// # Errors
    ///
    /// [`MufcError::InvalidConfig`] naming the field.
    pub fn validate(&self) -> MufcResult<()> {
        let bad = |name, why: &str| Err(crate::error::config_error(name, why));
        if self.clients == 0 {
            return bad(crate::ConfigParam::Clients, "the agreement names no client");
        }
        if !(self.min_gamma > 0.0 && self.min_gamma <= 1.0) {
            return bad(
                crate::ConfigParam::MinGamma,
                "the smallest grid step must lie in (0, 1]",
            );
        }
        if self.max_client_points == 0 || self.dim == Some(0) {
            return bad(
                crate::ConfigParam::MaxClientPoints,
                "the bound on a client's points and the dimension must be positive",
            );
        }
        if let Some(p) = &self.policy
            && (p.min_clients == 0 || p.min_updating_clients == 0)
        {
            return bad(
                crate::ConfigParam::Policy,
                "the policy's minimums must be at least 1",
            );
        }
        Ok(())
    }

    /// Why the registration `r` lies outside the agreement, if it does.
    ///
    /// # Errors
    ///
    /// The reason, in words the client may be told.
    pub fn check_registration(&self, r: &Registration) -> Result<(), String> {
        if r.points > self.max_client_points {
            return Err(format!(
                "it claims {} points, the agreement allows a client {}",
                r.points, self.max_client_points
            ));
        }
        match self.dim {
            Some(d) if d != r.dim => Err(format!(
                "it registered points of dimension {}, the agreement's are of {d}",
                r.dim
            )),
            _ => Ok(()),
        }
    }

    /// Why the setup `s` lies outside the agreement, if it does: another
    /// number of clients or dimension, a finer grid step, a bound on the
    /// points beyond what the clients may claim together, or groups other
    /// than those the topology gives the roster (a layout of the server's
    /// choosing could place a client among parties it controls), but for
    /// the clients [`Self::admitted`] since training, each in one of
    /// those groups. A member that held the setup before also takes a new
    /// one only as its own with clients admitted
    /// ([`RemoteClient::adopt`](super::RemoteClient::adopt)): its group
    /// never changes but by joins, so a ring a new client shares with an
    /// honest member is that member's group.
    ///
    /// # Errors
    ///
    /// The reason.
    pub fn check_setup(&self, s: &RemoteSetup) -> Result<(), String> {
        if s.roster().len() != self.clients {
            return Err(format!(
                "the setup names {} clients, the agreement {}",
                s.roster().len(),
                self.clients
            ));
        }
        if let Some(d) = self.dim
            && d != s.dim()
        {
            return Err(format!(
                "the setup's points are of dimension {}, the agreement's of {d}",
                s.dim()
            ));
        }
        match s.config().gamma() {
            Some(g) if g >= self.min_gamma => {}
            g => {
                return Err(format!(
                    "the setup's grid step {} is finer than the agreed {}",
                    g.map_or_else(|| "(none)".into(), |g| g.to_string()),
                    self.min_gamma
                ));
            }
        }
        if s.capacity() != s.config().client_k().saturating_mul(s.roster().len()) {
            return Err(format!(
                "the setup's sketch capacity {} is not {} bins for each of its {} clients",
                s.capacity(),
                s.config().client_k(),
                s.roster().len()
            ));
        }
        if !s.has_topology_layout_admitting(&self.admitted) {
            let numbers = |ids: &[ClientId]| ids.iter().map(|c| c.0).collect::<Vec<_>>();
            let groups = s
                .layout()
                .map(|l| l.groups().iter().map(|g| numbers(g)).collect::<Vec<_>>());
            return Err(format!(
                "the setup's groups {:?} are not those its topology gives the roster (with the \
                 clients admitted since training {:?} in any group)",
                groups.unwrap_or_default(),
                numbers(&self.admitted)
            ));
        }
        let most = self.max_client_points.saturating_mul(self.clients as u64);
        if s.config().max_points().is_none_or(|m| m > most) {
            return Err(format!(
                "the setup allows more points than the agreement's {most}"
            ));
        }
        self.check_config(s.config())
    }

    /// [`RemoteSetup::new`] within the agreement: every registration is
    /// checked, and a step resolved finer than agreed becomes the agreed
    /// one.
    ///
    /// # Errors
    ///
    /// [`MufcError::InvalidConfig`] for a registration outside the
    /// agreement or a configuration with a finer step than agreed; as
    /// [`RemoteSetup::new`].
    pub fn resolve(
        &self,
        config: &ValidConfig,
        registrations: &[Registration],
    ) -> MufcResult<RemoteSetup> {
        self.validate()?;
        for r in registrations {
            self.check_registration(r).map_err(|why| {
                crate::error::config_error(
                    crate::ConfigParam::Registration,
                    format!("client {}: {why}", r.id),
                )
            })?;
        }
        let mut setup = RemoteSetup::new(config, registrations)?;
        if setup.config().gamma().is_some_and(|g| g < self.min_gamma) {
            if config.gamma().is_some() {
                return Err(crate::error::config_error(
                    crate::ConfigParam::Gamma,
                    format!(
                        "the configured grid step is finer than the agreed {}",
                        self.min_gamma
                    ),
                ));
            }
            let coarser = config
                .clone()
                .into_builder()
                .gamma(self.min_gamma)
                .validate()?;
            setup = RemoteSetup::new(&coarser, registrations)?;
        }
        self.check_setup(&setup).map_err(MufcError::Remote)?;
        Ok(setup)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::{Channel, ClientId, FederationConfig, Masks, SecAggOptions};

    fn config() -> FederationConfig {
        FederationConfig::new(2).channel(Channel::scma(Masks::SecAgg(SecAggOptions::new())))
    }

    fn regs(n: u64, points: u64, dim: usize) -> Vec<Registration> {
        (0..n)
            .map(|i| Registration {
                id: ClientId(i),
                points,
                dim,
                scale: 1,
            })
            .collect()
    }

    /// A lying server announces a sketch capacity other than `client_k`
    /// bins per client of the roster (a smaller one fails the decode of
    /// an honest sum; a larger one costs every client and the server),
    /// drawn at random: refused; the setup's own capacity passes.
    #[test]
    fn a_setup_of_another_sketch_capacity_is_refused() {
        let agreed = Agreement::new(3).dim(2);
        let ok = agreed
            .resolve(&config().validate().unwrap(), &regs(3, 100, 2))
            .unwrap();
        let own = ok.capacity();
        assert_eq!(own, ok.config().client_k() * 3);
        assert!(agreed.check_setup(&ok.clone().with_capacity(own)).is_ok());
        let mut rng = testdata::rng("agreement-capacity");
        for _ in 0..20 {
            let lie = rand::RngExt::random_range(&mut rng, 0..4 * own);
            if lie == own {
                continue;
            }
            let why = agreed
                .check_setup(&ok.clone().with_capacity(lie))
                .unwrap_err();
            assert!(why.contains("sketch capacity"), "{lie}: {why}");
        }
    }

    /// Every way a setup can lie outside the agreement is refused, each
    /// named; the agreed setup passes.
    #[test]
    fn a_setup_outside_the_agreement_is_refused_and_says_why() {
        let agreed = Agreement::new(3).dim(2);
        let ok = agreed
            .resolve(&config().validate().unwrap(), &regs(3, 100, 2))
            .unwrap();
        assert!(agreed.check_setup(&ok).is_ok());
        let cases = [
            (
                RemoteSetup::new(&config().validate().unwrap(), &regs(4, 100, 2)),
                "clients",
            ),
            (
                RemoteSetup::new(&config().validate().unwrap(), &regs(3, 100, 3)),
                "dimension",
            ),
            (
                RemoteSetup::new(&config().gamma(1e-6).validate().unwrap(), &regs(3, 100, 2)),
                "grid step",
            ),
            (
                RemoteSetup::new(
                    &config().max_points(u64::MAX / 2).validate().unwrap(),
                    &regs(3, 100, 2),
                ),
                "more points",
            ),
        ];
        for (setup, what) in cases {
            let why = agreed.check_setup(&setup.unwrap()).unwrap_err();
            assert!(why.contains(what), "{what}: {why}");
        }
    }

    /// A client with no history of the federation (it joined after
    /// training) checks the groups by the topology, with the clients
    /// admitted since placed anywhere and the clients of a group that
    /// merged all in one other group: a server that draws the groups at
    /// random gets a setup past it only when every group the topology
    /// gives the trained clients kept its clients, or moved some of them
    /// to one other group together.
    #[test]
    fn the_clients_admitted_since_training_sit_in_any_group_and_no_other_moves() {
        let config = config()
            .topology(Topology::Groups { size: 3 })
            .min_clients(2)
            .validate()
            .unwrap();
        let trained = Agreement::new(9)
            .resolve(&config, &regs(9, 100, 2))
            .unwrap();
        let topology = trained.layout().unwrap().groups().to_vec();
        // Client 1 left: the three new clients go to the first group. The
        // topology would give twelve clients four groups.
        let gone = std::collections::BTreeSet::from([ClientId(1)]);
        let joined = [9, 10, 11].map(ClientId);
        let grown = trained.admitting_with(&joined, &gone).unwrap();
        let mut agreed = Agreement::new(12);
        assert!(agreed.check_setup(&grown).unwrap_err().contains("groups"));
        agreed.admitted = joined.to_vec();
        assert!(agreed.check_setup(&grown).is_ok());
        // The rule, written out: each topology group's clients stay, or
        // go to one other group together, and a group that lost some
        // holds no other group's trained client.
        let lawful = |groups: &[Vec<ClientId>]| {
            topology.iter().enumerate().all(|(g, old)| {
                let to: std::collections::BTreeSet<usize> = (old.iter())
                    .map(|c| groups.iter().position(|n| n.contains(c)).unwrap())
                    .filter(|h| *h != g)
                    .collect();
                let foreign = groups[g].iter().any(|c| c.0 < 9 && !old.contains(c));
                to.len() <= 1 && (to.is_empty() || !foreign)
            })
        };
        let mut rng = testdata::rng("agreement-admitted-groups");
        let (mut passed, mut refused, mut split) = (0, 0, 0);
        for _ in 0..300 {
            // Half the layouts have a fourth group, as a split makes.
            let slots = rand::RngExt::random_range(&mut rng, 3..5usize);
            let mut groups = vec![Vec::new(); slots];
            for c in 0..12u64 {
                // Mostly the topology's group, sometimes anywhere; the
                // admitted client anywhere.
                let r = rand::RngExt::random_range(&mut rng, 0..4usize);
                let g = match c {
                    9.. => rand::RngExt::random_range(&mut rng, 0..slots),
                    _ if r == 0 => rand::RngExt::random_range(&mut rng, 0..slots),
                    _ => (c / 3) as usize,
                };
                groups[g].push(ClientId(c));
            }
            let Ok(setup) = crate::Layout::from_groups(groups.clone(), None)
                .and_then(|l| grown.clone().with_layout(l))
            else {
                continue;
            };
            let honest = lawful(&groups);
            assert_eq!(agreed.check_setup(&setup).is_ok(), honest, "{groups:?}");
            if honest {
                passed += 1;
                split += usize::from(slots == 4);
            } else {
                refused += 1;
            }
        }
        assert!(
            passed > 5 && refused > 5 && split > 2,
            "{passed} passed ({split} with a fourth group), {refused} refused"
        );
        // Two merges in turn: the first group into the second, then the
        // second (with the first's clients) into the third.
        let ids = |r: std::ops::Range<u64>| r.map(ClientId).collect::<Vec<_>>();
        let chained = vec![
            vec![ClientId(1)],
            vec![ClientId(4)],
            [ids(0..1), ids(2..4), ids(5..12)].concat(),
        ];
        let layout = crate::Layout::from_groups(chained, None).unwrap();
        let merged = grown.with_saved_groups(layout).unwrap();
        assert!(agreed.check_setup(&merged).is_ok());
    }

    /// The server's side: a configured step finer than agreed, a claim
    /// beyond the bound, another dimension are refused; an agreement out
    /// of range does not validate.
    #[test]
    fn resolving_refuses_what_the_agreement_forbids() {
        let agreed = Agreement::new(3).dim(2);
        let fine = config().gamma(1e-6).validate().unwrap();
        assert!(agreed.resolve(&fine, &regs(3, 100, 2)).is_err());
        let plain = config().validate().unwrap();
        let mut liar = regs(3, 100, 2);
        liar[2].points = DEFAULT_MAX_CLIENT_POINTS + 1;
        assert!(agreed.resolve(&plain, &liar).is_err());
        assert!(agreed.resolve(&plain, &regs(3, 100, 5)).is_err());
        for bad in [
            Agreement {
                clients: 0,
                ..Agreement::new(3)
            },
            Agreement {
                min_gamma: 0.0,
                ..Agreement::new(3)
            },
            Agreement {
                min_gamma: f64::NAN,
                ..Agreement::new(3)
            },
            Agreement {
                min_gamma: 2.0,
                ..Agreement::new(3)
            },
            Agreement {
                max_client_points: 0,
                ..Agreement::new(3)
            },
        ] {
            assert!(bad.validate().is_err(), "{bad:?}");
        }
    }
}
