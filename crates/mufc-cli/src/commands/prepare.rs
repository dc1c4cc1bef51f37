//! The data of an experiment: options checked, data loaded or generated,
//! scaled, labelled and split over clients ([`prepare`] gives a
//! [`Prepared`]).

use nalgebra::DMatrix;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::central::{best_kmeans, kmeans_labels};
use crate::cli::{DataArgs, FedArgs, Labels, Split as SplitKind};
use crate::data::{Header, LoadOptions, load};
use crate::random::{derive_seed, tag};
use crate::split::Split;
use crate::synth::{GaussianMixture, fit_into_box};
use crate::{CliError, checks};

/// The data of an experiment, split over clients.
#[derive(Clone, Debug)]
pub struct Prepared {
    /// Where the data came from, for people.
    pub source: String,
    /// The points (scaled into the box when asked, or built in), one per
    /// column.
    pub points: DMatrix<f64>,
    /// The clients' points.
    pub split: Split,
    /// How the split was made, for people.
    pub split_desc: String,
    /// The number of clusters K.
    pub k: usize,
    /// The number of clusters the baselines' clients compute (a fixed
    /// `--client-k`, else K, as the paper's App. M.2).
    pub local_k: usize,
    /// The number of clusters MUFC's clients compute: a fixed
    /// `--client-k`, or its rule's for this data (the most a client finds).
    pub mufc_k: usize,
    /// K' of a non-i.i.d. split (K-FED's clients compute K' clusters, the
    /// number its one-shot server step is built for).
    pub k_prime: Option<usize>,
    /// The quantization step gamma (given, or 1/sqrt(n d)).
    pub gamma: f64,
    /// The map that scaled the points into the box (the built-in data,
    /// or `--scale`), if any.
    pub transform: Option<seeding::BoxTransform>,
    /// The clients' names as the data's client column writes them, by
    /// client index (`None` for a split made here: clients `0..L`).
    pub client_names: Option<Vec<String>>,
    /// What is weak about this data under these options, one sentence
    /// each: a client holding fewer points than its clusters, seeding-only
    /// clients on an i.i.d. split.
    pub warnings: Vec<String>,
    /// phi_c*, when the K-means labelling already computed it.
    phi_c_star: Option<f64>,
}

impl Prepared {
    /// The number of points n.
    pub fn n(&self) -> usize {
        self.points.ncols()
    }

    /// The dimension d.
    pub fn d(&self) -> usize {
        self.points.nrows()
    }

    /// phi_c*, the best objective of `restarts` centralized K-means runs
    /// (computed once; the same seed gives the same value).
    ///
    /// # Errors
    ///
    /// As [`best_kmeans`].
    pub fn phi_c_star(&mut self, restarts: usize, seed: u64) -> Result<f64, CliError> {
        if let Some(p) = self.phi_c_star {
            return Ok(p);
        }
        let all = seeding::Dataset::new(self.points.clone())?;
        let p = best_kmeans(&all, self.k, restarts, seed)?.phi();
        self.phi_c_star = Some(p);
        Ok(p)
    }

    /// The number of clusters K-FED's clients compute: K' for a non-i.i.d.
    /// split, else the clients' k.
    pub fn kfed_k(&self) -> usize {
        self.k_prime.unwrap_or(self.local_k)
    }

    /// One line describing the data and the split.
    pub fn summary(&self) -> String {
        format!(
            "{}: n = {}, d = {}, K = {}; {}, {}; MUFC's clients compute up to {}",
            self.source,
            self.n(),
            self.d(),
            self.k,
            crate::output::count(self.split.num_clients() as u64, "client"),
            self.split_desc,
            crate::output::count(self.mufc_k as u64, "cluster")
        )
    }
}

/// K' when not given: the paper's K' = 3 (K' ~ sqrt(K) for K = 10), or K
/// when K is smaller.
const DEFAULT_K_PRIME: usize = 3;

pub(super) fn invalid(name: &'static str, value: impl ToString, reason: &'static str) -> CliError {
    CliError::InvalidParameter {
        name,
        value: value.to_string(),
        reason,
    }
}

/// Loads or generates the data, scales it, and splits it over clients.
///
/// # Errors
///
/// [`CliError::InvalidParameter`] for out-of-range options, and the errors
/// of loading ([`load`]), generating ([`GaussianMixture::sample`]) and
/// splitting ([`Split`]).
pub fn prepare(data: &DataArgs, fed: &FedArgs, seed: u64) -> Result<Prepared, CliError> {
    prepare_with_ids(data, fed, seed, None, None).map(|(p, _)| p)
}

/// As [`prepare`], with column `id_column` (0-based, counted in the file)
/// of a data file read as each row's record id, verbatim, not a feature
/// (`mufc fit --id-column`); the ids are returned by data row. A `given`
/// table (records a caller holds in memory, the Python estimator's) takes
/// the place of `--data` and is read as a loaded file would be: scaled
/// with `--scale`, split by its clients, its ids kept.
///
/// # Errors
///
/// As [`prepare`], and the loader's errors for an id column that does not
/// exist, is the client column, or holds an id that is empty, too long,
/// or occurs twice (naming the lines).
pub(crate) fn prepare_with_ids(
    data: &DataArgs,
    fed: &FedArgs,
    seed: u64,
    id_column: Option<usize>,
    given: Option<crate::data::Table>,
) -> Result<(Prepared, Option<Vec<String>>), CliError> {
    check_args(data, fed)?;
    let settings = fed.settings()?;
    let loaded = match given {
        Some(table) => given_table(table, data.scale)?,
        None => source_table(data, seed, id_column)?,
    };
    let table = &loaded.table;
    let points = table.points().clone();
    let client_names = table
        .clients()
        .is_some()
        .then(|| table.client_names().to_vec());
    let n = points.ncols();
    checks::counts(data.k, table.clients().is_none().then_some(data.clients), n)?;
    // The preset's rule (min(1/sqrt(n d), 1/1024) by default, 1/sqrt(n)
    // for the paper's): see `FedArgs::gamma`.
    let gamma = fed
        .gamma
        .unwrap_or_else(|| settings.gamma_rule().gamma(n as u64, points.nrows()));
    if fed.privacy != crate::cli::Privacy::Plain {
        checks::gamma(&points, gamma, fed.gamma.is_none())?;
    }
    // The configuration, checked before the work below (the split's
    // centralized K-means, the survey of every client's points): a
    // topology, a group size or a privacy the federation refuses fails at
    // once. The caller checks it again with the k the survey gives.
    let clients = table
        .clients()
        .map_or(data.clients, |_| table.client_names().len());
    crate::federated::config(data.k, gamma, clients, fed, seed)?;
    let chosen = split_clients(data, &loaded, &points, seed)?;
    if fed.masking == mufc::Masking::SecAgg {
        checks::dropout(
            fed.dropout,
            chosen.split.num_clients(),
            fed.secagg_graph == mufc::SecAggGraph::Harary,
        )?;
    }
    let local_k = fed.fixed_client_k().unwrap_or(data.k);
    // The federation's own rule on the clients' data (the adaptive rule
    // surveys it), so that the k reported is the k the clients use.
    let clients: Vec<(mufc::ClientId, seeding::Dataset)> = (chosen.split)
        .client_datasets(&points)?
        .into_iter()
        .enumerate()
        .map(|(i, d)| (mufc::ClientId(i as u64), d))
        .collect();
    let mufc_k = settings.client().k().federation_k_for(data.k, &clients);
    let warnings = data_warnings(&chosen.split, &settings, data, fed.fixed_client_k());
    Ok((
        Prepared {
            source: loaded.source,
            points,
            split: chosen.split,
            split_desc: chosen.desc,
            k: data.k,
            local_k,
            mufc_k,
            k_prime: chosen.k_prime,
            gamma,
            transform: loaded.transform,
            client_names,
            warnings,
            phi_c_star: chosen.phi_c_star,
        },
        loaded.ids,
    ))
}

/// Refuses the options no run can take: counts of zero, a gamma that is
/// not finite and positive or too fine for the grid, a dropout rate
/// outside `[0, 1)`, a K' above K on a non-iid split.
fn check_args(data: &DataArgs, fed: &FedArgs) -> Result<(), CliError> {
    for (name, zero) in [
        ("K", data.k == 0),
        ("restarts", data.restarts == 0),
        ("K'", data.k_prime == Some(0)),
        ("client k", fed.fixed_client_k() == Some(0)),
        ("server restarts", fed.server_restarts == Some(0)),
    ] {
        if zero {
            return Err(invalid(name, 0, "must be at least 1"));
        }
    }
    if fed.min_cluster_size == Some(0) {
        return Err(invalid(
            "min cluster size",
            0,
            "must be at least 1 (1 sends every cluster)",
        ));
    }
    if let Some(g) = fed.gamma {
        if !(g > 0.0 && g.is_finite()) {
            return Err(invalid("gamma", g, "must be finite and positive"));
        }
        // The quantizer's grid has at most 2^53 bins per axis.
        if (1.0 / g).ceil() > 9_007_199_254_740_992.0 {
            return Err(invalid(
                "gamma",
                format!("{g:?}"),
                "is too small: the grid has at most 2^53 bins per axis (gamma >= 2^-53 ~ 1.1e-16)",
            ));
        }
    }
    if !(0.0..1.0).contains(&fed.dropout) {
        return Err(invalid(
            "dropout",
            fed.dropout,
            "must be a probability in [0, 1)",
        ));
    }
    if let Some(kp) = data.k_prime
        && data.split == SplitKind::NonIid
        && data.client_column.is_none()
        && kp > data.k
    {
        return Err(CliError::KPrimeExceedsK {
            k_prime: kp,
            defaulted: false,
            clusters: data.k,
            labelled: false,
        });
    }
    Ok(())
}

/// The data a run starts from: where it came from, the table (scaled
/// into the box unless told not to), the true labels of generated data,
/// the map into the box, and the record ids of a file's id column.
struct Loaded {
    source: String,
    table: crate::data::Table,
    true_labels: Option<Vec<usize>>,
    transform: Option<seeding::BoxTransform>,
    ids: Option<Vec<String>>,
}

/// Generates the built-in data or loads the file, and scales it.
fn source_table(data: &DataArgs, seed: u64, id_column: Option<usize>) -> Result<Loaded, CliError> {
    let Some(path) = &data.data else {
        let mix = GaussianMixture {
            variance: data.variance,
            ..GaussianMixture::paper()
        };
        let mut rng = ChaCha8Rng::seed_from_u64(derive_seed(seed, tag::DATA, 0));
        let s = mix.sample(&mut rng)?;
        let (scaled, t) = fit_into_box(&s.points)?;
        return Ok(Loaded {
            source: format!(
                "built-in Gaussian data (App. M.1, variance {}), scaled into the box",
                data.variance
            ),
            table: crate::data::Table::new(scaled)?,
            true_labels: Some(s.labels),
            transform: Some(t),
            ids: None,
        });
    };
    let opts = LoadOptions {
        header: Header::from_flag(data.header),
        client_column: data.client_column,
        id_column,
    };
    let table = load(path, &opts)?;
    scaled_table(table, data.scale, &path.display().to_string())
}

/// A table given in memory, read as [`source_table`] reads a file.
fn given_table(table: crate::data::Table, scale: bool) -> Result<Loaded, CliError> {
    scaled_table(table, scale, "records given in memory")
}

/// A loaded table, scaled into the box when asked.
fn scaled_table(table: crate::data::Table, scale: bool, source: &str) -> Result<Loaded, CliError> {
    let ids = table.ids().map(<[String]>::to_vec);
    let (table, transform, scaled) = if scale {
        let (scaled, t) = fit_into_box(table.points())?;
        (table.with_points(scaled)?, Some(t), ", scaled into the box")
    } else {
        (table, None, "")
    };
    Ok(Loaded {
        source: format!("{source}{scaled}"),
        table,
        true_labels: None,
        transform,
        ids,
    })
}

/// How the points were split over clients, and what the split needed:
/// the centralized K-means objective when it labelled the points, the K'
/// of a non-iid split.
struct Chosen {
    split: Split,
    desc: String,
    phi_c_star: Option<f64>,
    k_prime: Option<usize>,
}

/// Splits the points over clients: by the file's client column, or by
/// labels (the true ones of generated data, else centralized K-means'),
/// iid or non-iid.
fn split_clients(
    data: &DataArgs,
    loaded: &Loaded,
    points: &DMatrix<f64>,
    seed: u64,
) -> Result<Chosen, CliError> {
    if let Some(clients) = loaded.table.clients() {
        let col = data.client_column.unwrap_or(0);
        return Ok(Chosen {
            split: Split::by_client(clients)?,
            desc: format!("clients from column {col}"),
            phi_c_star: None,
            k_prime: None,
        });
    }
    let mut phi_c_star = None;
    let (labels, which) = match (&loaded.true_labels, data.labels) {
        (Some(l), Labels::True) => (l.clone(), "true labels"),
        _ => {
            let all = seeding::Dataset::new(points.clone())?;
            let (l, phi) = kmeans_labels(&all, data.k, data.restarts, seed)?;
            phi_c_star = Some(phi);
            (l, "centralized K-means labels")
        }
    };
    let mut rng = ChaCha8Rng::seed_from_u64(derive_seed(seed, tag::SPLIT, 0));
    Ok(match data.split {
        SplitKind::Iid => Chosen {
            split: Split::iid(&labels, data.clients, &mut rng)?,
            desc: format!("iid split of the {which}"),
            phi_c_star,
            k_prime: None,
        },
        SplitKind::NonIid => {
            // The paper's K' = 3 for K = 10; never above K.
            let kp = data.k_prime.unwrap_or(DEFAULT_K_PRIME.min(data.k));
            Chosen {
                split: Split::non_iid(&labels, data.clients, kp, &mut rng)?,
                desc: format!("non-iid split of the {which}, K' = {kp}"),
                phi_c_star,
                k_prime: Some(kp),
            }
        }
    })
}

/// The warnings of `prepare`: a client with fewer points than a fixed
/// client k finds fewer clusters (every point its own, merged below the
/// minimum cluster size); seeding-only clients on an i.i.d. split send a
/// few records of every cluster each, a weak model (docs/benchmarks.md,
/// "The defaults on the data suite").
fn data_warnings(
    split: &Split,
    settings: &mufc::ValidConfig,
    data: &DataArgs,
    fixed: Option<usize>,
) -> Vec<String> {
    let mut out = Vec::new();
    // An adaptive k never exceeds a client's points.
    let k = fixed.unwrap_or_else(|| match settings.client().k() {
        mufc::ClientK::Server => data.k,
        _ => 0,
    });
    if k > 0 {
        let small: Vec<(usize, usize)> = split
            .sizes()
            .into_iter()
            .enumerate()
            .filter(|&(_, n)| n < k)
            .collect();
        if let Some(&(c, n)) = small.first() {
            out.push(format!(
                "{} hold fewer points than the {k} clusters a client computes (client {c}: {n}): \
                 such a client finds at most one cluster a point, and with --min-cluster-size \
                 above 1 sends them merged; --client-k auto adapts k to each client's size",
                crate::output::count(small.len() as u64, "client")
            ));
        }
    }
    if settings.client_training() == mufc::ClientTraining::Seeding
        && data.client_column.is_none()
        && data.split == SplitKind::Iid
    {
        out.push(
            "clients run K-means++ seeding only on an i.i.d. split: each sends a few of its \
             records as the centroids of every cluster, and the model is weak (loss ratios of \
             1.2 to 4 on the data suite, docs/benchmarks.md); full K-means clients (the \
             default, --client-training full) do far better"
                .to_string(),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;
    use crate::cli::{Cli, Command};

    fn prepared(path: &std::path::Path, extra: &[&str]) -> Prepared {
        let p = path.to_str().unwrap();
        let mut args = vec!["mufc", "run", "--data", p, "--scale", "--k", "2"];
        args.extend_from_slice(&["--clients", "3", "--restarts", "1"]);
        args.extend_from_slice(extra);
        let Command::Run(a) = Cli::try_parse_from(args).unwrap().command else {
            panic!("not run")
        };
        prepare(&a.data, &a.fed, 1).unwrap()
    }

    #[test]
    fn the_default_gamma_is_the_fine_rule() {
        // 60 points of d = 3 in two groups.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pts.csv");
        let rows: Vec<String> = (0..60)
            .map(|i| {
                let (g, j) = (f64::from(i % 2), f64::from(i));
                format!("{},{},{}", 5.0 * g + 0.01 * j, 0.02 * j, -0.03 * j)
            })
            .collect();
        std::fs::write(&path, rows.join("\n")).unwrap();
        let p = prepared(&path, &[]);
        assert_eq!((p.n(), p.d()), (60, 3));
        // Exactly the formula, min(1/sqrt(n d), 1/1024) (bits), the
        // paper's 1/sqrt(n) with its preset, and a given step untouched.
        assert_eq!(p.gamma.to_bits(), (1.0 / 1024.0f64).to_bits());
        let paper = prepared(&path, &["--preset", "paper"]).gamma;
        assert_eq!(paper.to_bits(), (1.0 / 60f64.sqrt()).to_bits());
        let given = prepared(&path, &["--gamma", "0.1"]).gamma;
        assert_eq!(given.to_bits(), 0.1f64.to_bits());
    }
}
