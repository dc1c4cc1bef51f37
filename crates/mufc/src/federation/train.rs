//! Training (Algorithm 1): the parties train, one masked round over
//! every client (flat) or one per group, driven in this process.

use seeding::Dataset;

use super::Federation;
use crate::remote::InProcess;
use crate::state::Setup;
use crate::{Client, ClientId, Layout, MufcResult, ValidConfig};
#[cfg(doc)]
use crate::{MufcError, Topology};

impl Federation {
    /// Trains a federation (Algorithm 1) over `clients`, whose ids are
    /// their positions: `ClientId(0)`, `ClientId(1)`, ...
    ///
    /// # Errors
    ///
    /// As [`Self::with_ids`].
    pub fn new(clients: Vec<Dataset>, config: &ValidConfig) -> MufcResult<Self> {
        let clients = clients
            .into_iter()
            .enumerate()
            .map(|(i, d)| (ClientId(i as u64), d))
            .collect();
        Self::with_ids(clients, config)
    }

    /// Trains a federation (Algorithm 1) over named clients.
    ///
    /// # Errors
    ///
    /// [`MufcError::NoClients`], [`MufcError::DuplicateClient`],
    /// [`MufcError::EmptyClient`], [`MufcError::DimensionMismatch`],
    /// [`MufcError::OutsideBox`] (SCMA modes),
    /// [`MufcError::TooFewDistinctPoints`], [`MufcError::TooFewClients`]
    /// (fewer clients than
    /// [`FederationConfig::min_clients`](crate::FederationConfig::min_clients),
    /// default 3, in every privacy mode),
    /// [`MufcError::InvalidConfig`] when the points exceed `max_points`,
    /// [`MufcError::IntegerDecoderTooLarge`],
    /// [`MufcError::TooManyDropouts`] (with
    /// [`Masking::SecAgg`](crate::Masking::SecAgg)), and the errors of the lower
    /// crates (for instance coordinates beyond the fixed-point range of
    /// [`seeding::ExactKMeans`], 2^16, in the full and plain modes).
    ///
    /// # Example
    ///
    /// ```
    /// use mufc::{ClientId, Federation, FederationConfig, MufcError};
    /// use nalgebra::DMatrix;
    /// use seeding::Dataset;
    ///
    /// let inside = Dataset::new(DMatrix::from_fn(1, 10, |_, c| c as f64 / 20.0))?;
    /// let outside = Dataset::new(DMatrix::from_fn(1, 10, |_, c| c as f64))?;
    /// let config = FederationConfig::new(2).validate()?;
    /// let err = Federation::with_ids(vec![(ClientId(7), inside), (ClientId(9), outside)], &config).unwrap_err();
    /// assert!(matches!(err, MufcError::OutsideBox { client: ClientId(9), .. }));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn with_ids(clients: Vec<(ClientId, Dataset)>, config: &ValidConfig) -> MufcResult<Self> {
        Self::trained(InProcess::train(clients, config)?)
    }

    /// The federation of trained `parties`.
    fn trained(parties: InProcess) -> MufcResult<Self> {
        let fit_report = parties
            .fit_report()
            .ok_or(crate::MufcError::NoServerModel)?;
        Ok(Self::driving(parties, fit_report))
    }

    /// Fits every client as training does (Algorithm 1, lines 1-4), with
    /// no aggregation and no privacy policy: the clients, in id order,
    /// that a federation whose model was withdrawn
    /// ([`Self::withdrawal`]) must equal, bit for bit. None for no client.
    ///
    /// # Errors
    ///
    /// As [`Self::with_ids`], but for the policy's minimum.
    ///
    /// # Example
    ///
    /// ```
    /// use mufc::{ClientId, Federation, FederationConfig, RemovalRequest};
    /// use nalgebra::DMatrix;
    /// use seeding::Dataset;
    ///
    /// let clients: Vec<Dataset> = (0..3)
    ///     .map(|l| Dataset::new(DMatrix::from_fn(2, 30, |r, c| ((c * (3 + l) + r * 7) % 17) as f64 / 40.0 - 0.2)))
    ///     .collect::<Result<_, _>>()?;
    /// let mut fed = Federation::new(clients, &FederationConfig::new(2).gamma(0.1).validate()?)?;
    /// fed.remove(&RemovalRequest::clients(vec![ClientId(0)]))?;
    /// assert!(fed.withdrawal().is_some());
    /// let data = fed.clients().iter().map(|c| (c.id(), c.data().clone())).collect();
    /// let fitted = Federation::fit_clients(data, fed.config())?;
    /// assert_eq!(fitted.len(), 2);
    /// for (a, b) in fitted.iter().zip(fed.clients()) {
    ///     assert_eq!((a.id(), a.seed_ids(), a.histogram()), (b.id(), b.seed_ids(), b.histogram()));
    /// }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn fit_clients(
        clients: Vec<(ClientId, Dataset)>,
        config: &ValidConfig,
    ) -> MufcResult<Vec<Client>> {
        let Some(dim) = clients.first().map(|(_, d)| d.dim()) else {
            return Ok(Vec::new());
        };
        let setup = Setup::withdrawn(clients, config, dim)?;
        Ok(setup.fit_clients()?.into_iter().map(|(c, _)| c).collect())
    }

    /// Trains a federation with groups (Algorithm 1 inside every group)
    /// laid out as `layout` says, whatever the configuration's
    /// [`Topology`] (whose sizes only [`Self::with_ids`] reads): groups by
    /// region, say, or the layout of a trained federation without the
    /// clients it removed ([`Layout::without`]), to retrain it for
    /// comparison. The root's model is the flat federation's, bit for bit.
    ///
    /// # Errors
    ///
    /// As [`Self::with_ids`], and [`MufcError::InvalidLayout`] when the
    /// layout does not name each client exactly once,
    /// [`MufcError::GroupTooSmall`] for a group of fewer than
    /// [`FederationConfig::min_clients`](crate::FederationConfig::min_clients)
    /// clients but some, and [`MufcError::InvalidConfig`] in the plain
    /// mode.
    ///
    /// # Example
    ///
    /// ```
    /// use mufc::{ClientId, Federation, FederationConfig, Layout, NodeId, RemovalRequest};
    /// use nalgebra::DMatrix;
    /// use seeding::{Dataset, PointId};
    ///
    /// let clients: Vec<(ClientId, Dataset)> = (0..6)
    ///     .map(|l| Ok((ClientId(l), Dataset::new(DMatrix::from_fn(2, 20, |r, c| ((c * (3 + l as usize) + r * 7) % 17) as f64 / 40.0 - 0.2))?)))
    ///     .collect::<Result<_, seeding::SeedingError>>()?;
    /// let config = FederationConfig::new(2).gamma(0.1).validate()?;
    /// let layout = Layout::from_groups(vec![(0..3).map(ClientId).collect(), (3..6).map(ClientId).collect()], None)?;
    /// let mut fed = Federation::with_layout(clients.clone(), &config, layout)?;
    /// // The root's model is the flat federation's.
    /// let flat = Federation::with_ids(clients, &config)?;
    /// assert_eq!(fed.server().centroids(), flat.server().centroids());
    /// // Each group has its own model, of its own clients' data.
    /// assert_eq!(fed.node(NodeId(0)).unwrap().total_count(), 60);
    /// // A removal in group 1 involves its three clients only.
    /// fed.remove(&RemovalRequest::points(ClientId(3), vec![PointId(0)]).with_points(ClientId(4), vec![PointId(1)]))?;
    /// let who = fed.last_involvement().unwrap();
    /// assert_eq!(who.clients, 3);
    /// assert_eq!(who.groups, vec![1]);
    /// assert_eq!(fed.node(NodeId(0)).unwrap().total_count(), 60);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn with_layout(
        clients: Vec<(ClientId, Dataset)>,
        config: &ValidConfig,
        layout: Layout,
    ) -> MufcResult<Self> {
        Self::trained(InProcess::train_with_layout(clients, config, layout)?)
    }
}
