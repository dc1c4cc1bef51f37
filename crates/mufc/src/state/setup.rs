//! Everything a federation checks and derives before any client trains:
//! the clients in id order, the resolved configuration, the quantizer, and
//! the parts built from them (the clients' fits, the aggregation, the
//! server).

use std::collections::{BTreeMap, HashSet};
use std::time::{Duration, Instant};

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use seeding::{Dataset, ExactKMeans, PointId, Quantizer};

use crate::aggregation::{Aggregation, AggregationSpec};
use crate::client::LocalParams;
use crate::ids::{client_seed, sample_seed, server_seed, shift_seed};
use crate::{
    Channel, Client, ClientId, MufcError, MufcResult, Server, StoredClusters, ValidConfig, par,
};

/// Everything checked and derived before any client trains.
#[derive(Clone, Debug)]
pub(crate) struct Setup {
    pub(crate) config: ValidConfig,
    pub(crate) dim: usize,
    pub(crate) quantizer: Option<Quantizer>,
    pub(crate) clients: Vec<(ClientId, Dataset)>,
}

/// The number of distinct points of `data`, counting up to `cap`.
fn distinct_up_to(data: &Dataset, cap: usize) -> usize {
    let mut seen = HashSet::new();
    for pos in 0..data.len() {
        // -0.0 and 0.0 are the same point (distance zero).
        let key: Vec<u64> = data
            .point(pos)
            .iter()
            .map(|x| (x + 0.0).to_bits())
            .collect();
        seen.insert(key);
        if seen.len() >= cap {
            break;
        }
    }
    seen.len()
}

impl Setup {
    /// Checks the clients of a saved federation and resolves `gamma` and
    /// `max_points`, which may have no client
    /// left (every client removed).
    pub(crate) fn restore(
        clients: Vec<(ClientId, Dataset)>,
        config: &ValidConfig,
        dim: usize,
    ) -> MufcResult<Self> {
        Self::build(clients, config, Some(dim), true)
    }

    /// As [`Self::restore`] for a federation whose model was withdrawn
    /// ([`crate::Withdrawal`]): it holds fewer clients than the policy's
    /// minimum aggregate, and never aggregates again.
    pub(crate) fn withdrawn(
        clients: Vec<(ClientId, Dataset)>,
        config: &ValidConfig,
        dim: usize,
    ) -> MufcResult<Self> {
        Self::build(clients, config, Some(dim), false)
    }

    fn build(
        mut clients: Vec<(ClientId, Dataset)>,
        config: &ValidConfig,
        dim: Option<usize>,
        policy: bool,
    ) -> MufcResult<Self> {
        let dim = match (clients.first(), dim) {
            (Some((_, d)), _) => d.dim(),
            (None, Some(dim)) => dim,
            (None, None) => return Err(MufcError::NoClients),
        };
        clients.sort_by_key(|(id, _)| *id);
        for w in clients.windows(2) {
            if w[0].0 == w[1].0 {
                return Err(MufcError::DuplicateClient(w[0].0));
            }
        }
        let mut n: u64 = 0;
        for (id, data) in &clients {
            if data.is_empty() {
                return Err(MufcError::EmptyClient(*id));
            }
            if data.dim() != dim {
                return Err(MufcError::DimensionMismatch {
                    client: *id,
                    expected: dim,
                    found: data.dim(),
                });
            }
            n = n.saturating_add(data.len() as u64);
        }
        let config = resolve(config, n, dim, clients.len(), || {
            crate::config::median_scale_of(&clients)
        })?;
        let quantizer = quantizer(&config, dim)?;
        check_data(
            clients.iter().map(|(c, d)| (*c, d)),
            &config,
            quantizer.as_ref(),
        )?;
        // The policy last: data errors are named first (docs/threat-model.md
        // P4). A saved federation may have no client left.
        let min_clients = config.min_clients();
        if policy && !clients.is_empty() && clients.len() < min_clients {
            return Err(MufcError::TooFewClients {
                clients: clients.len(),
                min_clients,
            });
        }
        Ok(Self {
            config,
            dim,
            quantizer,
            clients,
        })
    }

    fn local_params(&self) -> LocalParams {
        self.config.local_params()
    }

    /// Fits every client, in parallel; each with its training time.
    pub(crate) fn fit_clients(&self) -> MufcResult<Vec<(Client, Duration)>> {
        let params = self.local_params();
        let seed = self.config.seed();
        par::map(
            self.config.run().is_parallel(),
            &self.clients,
            |_, (id, data)| {
                let start = Instant::now();
                let c = Client::fit(
                    *id,
                    data.clone(),
                    &params,
                    client_seed(seed, *id),
                    self.quantizer.as_ref(),
                )?;
                Ok((c, start.elapsed()))
            },
        )
    }

    /// The clients of a saved state: those with `stored` clusters built
    /// from them ([`Client::stored`], no fitting), the others fitted and
    /// checked to give their stored `seeds`; in parallel.
    pub(crate) fn load_clients(
        &self,
        seeds: &BTreeMap<ClientId, Vec<PointId>>,
        stored: BTreeMap<ClientId, StoredClusters>,
    ) -> MufcResult<Vec<Client>> {
        let params = self.local_params();
        let seed = self.config.seed();
        if let Some(id) = stored.keys().find(|c| {
            self.clients
                .binary_search_by_key(*c, |(id, _)| *id)
                .is_err()
        }) {
            return Err(MufcError::Persistence(format!(
                "clusters are stored for client {id}, which the state does not hold"
            )));
        }
        par::map(
            self.config.run().is_parallel(),
            &self.clients,
            |_, (id, data)| {
                let kept = seeds.get(id).cloned().unwrap_or_default();
                let q = self.quantizer.as_ref();
                let c = match stored.get(id) {
                    Some(cl) => Client::stored(
                        *id,
                        data.clone(),
                        kept,
                        cl.clone(),
                        &params,
                        client_seed(seed, *id),
                        q,
                    )?,
                    None => {
                        let c = Client::fit(*id, data.clone(), &params, client_seed(seed, *id), q)?;
                        if c.seed_ids() != kept.as_slice() {
                            return Err(MufcError::Persistence(format!(
                                "client {id} does not reproduce its stored seeds"
                            )));
                        }
                        c
                    }
                };
                Ok(c)
            },
        )
    }

    /// The aggregation, of capacity `client_k * L` unless given (a saved
    /// federation keeps its capacity).
    pub(crate) fn aggregation(&self, capacity: Option<usize>) -> MufcResult<Option<Aggregation>> {
        let ids: Vec<ClientId> = self.clients.iter().map(|(id, _)| *id).collect();
        self.aggregation_for(&ids, capacity)
    }

    /// The aggregation for the clients `ids` (the roster of a federation
    /// run across processes, whose points this setup does not hold).
    pub(crate) fn aggregation_for(
        &self,
        ids: &[ClientId],
        capacity: Option<usize>,
    ) -> MufcResult<Option<Aggregation>> {
        let c = &self.config;
        let (Some(q), Channel::Scma(scma)) = (&self.quantizer, c.channel()) else {
            return Ok(None);
        };
        let spec = AggregationSpec {
            scma,
            seed: c.seed(),
            deterministic_masks: c.insecure_deterministic_masks(),
            capacity: capacity.unwrap_or_else(|| c.client_k().saturating_mul(ids.len())),
            num_bins: q.num_bins(),
            max_points: c.max_points().unwrap_or(1),
            min_clients: c.min_clients(),
        };
        Aggregation::new(&spec, ids).map(Some)
    }

    pub(crate) fn server(&self) -> MufcResult<Server> {
        let c = &self.config;
        let s = c.server();
        let kmeans = ExactKMeans::new(s.kmeans().clone());
        let points = (c.channel() != &Channel::Plain).then_some(s.points());
        Server::new(
            points,
            self.quantizer.clone(),
            kmeans,
            server_seed(c.seed()),
            sample_seed(c.seed()),
            self.dim,
        )
    }
}

/// The checks of the clients' points under a resolved configuration: in
/// the box when there is a grid, and at least `client_k` distinct points
/// each unless allowed fewer.
pub(crate) fn check_data<'a>(
    clients: impl Iterator<Item = (ClientId, &'a Dataset)> + Clone,
    config: &ValidConfig,
    quantizer: Option<&Quantizer>,
) -> MufcResult<()> {
    if quantizer.is_some() {
        for (id, data) in clients.clone() {
            check_box(id, data)?;
        }
    }
    // An adaptive `k` follows each client's size: a client with fewer
    // distinct points finds fewer clusters.
    let adaptive = matches!(config.client().k(), crate::ClientK::Adaptive { .. });
    if !config.allow_fewer_distinct() && !adaptive {
        let k = config.client_k();
        for (id, data) in clients {
            let distinct = distinct_up_to(data, k);
            if distinct < k {
                return Err(MufcError::TooFewDistinctPoints {
                    client: id,
                    k,
                    distinct,
                });
            }
        }
    }
    Ok(())
}

/// `config` with `gamma`, `max_points` and the clients' `k` resolved for
/// `n` points of dimension `dim` over `clients` clients, `scale` the
/// median of their survey scales (asked for only when the adaptive rule
/// still has to resolve `k`; each kept when the config fixes it already:
/// a federation's own config rebuilds the same one on other data).
pub(crate) fn resolve(
    config: &ValidConfig,
    n: u64,
    dim: usize,
    clients: usize,
    scale: impl FnOnce() -> u32,
) -> MufcResult<ValidConfig> {
    let gamma = config
        .gamma()
        .unwrap_or_else(|| config.gamma_rule().gamma(n, dim));
    let max_points = config.max_points().unwrap_or(n);
    if n > max_points {
        return Err(crate::error::config_error(
            crate::ConfigParam::MaxPoints,
            format!("{n} points exceed the bound {max_points}"),
        ));
    }
    let rule = config.client().k();
    let k = if matches!(rule, crate::ClientK::Adaptive { .. }) && !config.client_k_resolved() {
        rule.federation_k(config.server().k(), n, clients, scale())
    } else {
        config.client_k()
    };
    Ok(config.resolved(gamma, max_points).with_client_k(k))
}

/// The grid of a resolved configuration (none in plain mode).
pub(crate) fn quantizer(config: &ValidConfig, dim: usize) -> MufcResult<Option<Quantizer>> {
    if config.channel() == &Channel::Plain {
        return Ok(None);
    }
    let gamma = config.gamma().unwrap_or(1.0);
    Ok(Some(if config.shift() {
        let mut rng = ChaCha8Rng::seed_from_u64(shift_seed(config.seed()));
        Quantizer::with_random_shift(dim, gamma, &mut rng)?
    } else {
        Quantizer::new(dim, gamma)?
    }))
}

/// Every coordinate in `[-1/2, 1/2]`, else the first offending one.
pub(crate) fn check_box(id: ClientId, data: &Dataset) -> MufcResult<()> {
    match data.check_in_box() {
        Err(seeding::SeedingError::OutsideBox {
            point: Some(pos),
            axis,
            value,
        }) => Err(MufcError::OutsideBox {
            client: id,
            id: data.id(pos),
            axis,
            value,
        }),
        other => Ok(other?),
    }
}
