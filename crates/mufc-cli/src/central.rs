//! Centralized K-means: the estimate of the optimal objective phi_c* that
//! loss ratios divide by (Section 6 of the paper: "approximated by running
//! K-means++ multiple times and selecting the smallest objective value"),
//! and the labelling that splits data without true labels (App. M.1).

use seeding::{Dataset, KMeans, KMeansModel, KMeansParams};

use crate::CliError;
use crate::random::{derive_seed, tag};

/// The best of `restarts` runs of K-means (weighted K-means++ and Lloyd,
/// [`seeding::KMeans`]) on `data`: the model of smallest objective, the
/// first on ties ([`KMeans::fit_best`]). Restart `r` samples with
/// `ExpRace::new(derive_seed(seed, CENTRAL, r))`, so the result is a
/// function of the seed. This is the paper's phi_c* estimate (the reference uses
/// scikit-learn's `KMeans(n_init = 10)`).
///
/// # Errors
///
/// [`CliError::InvalidParameter`] for zero restarts; [`CliError::Seeding`]
/// for `k = 0` or empty data.
///
/// # Example
///
/// ```
/// use nalgebra::DMatrix;
/// use seeding::Dataset;
/// use mufc_cli::central::best_kmeans;
///
/// let data = Dataset::new(DMatrix::from_column_slice(1, 4, &[0.0, 1.0, 10.0, 11.0]))?;
/// let model = best_kmeans(&data, 2, 5, 7)?;
/// assert_eq!(model.phi(), 1.0);
/// # Ok::<(), mufc_cli::CliError>(())
/// ```
pub fn best_kmeans(
    data: &Dataset,
    k: usize,
    restarts: usize,
    seed: u64,
) -> Result<KMeansModel, CliError> {
    if restarts == 0 {
        return Err(CliError::InvalidParameter {
            name: "restarts",
            value: "0".into(),
            reason: "must be at least 1",
        });
    }
    let km = KMeans::new(KMeansParams::new(k).restarts(restarts).validate()?);
    Ok(km.fit_best(data, |r| derive_seed(seed, tag::CENTRAL, r as u64))?)
}

/// The cluster of every point (by position) under [`best_kmeans`], and
/// that model's objective: the labelling the reference's `split_data`
/// splits real data by.
///
/// # Errors
///
/// As [`best_kmeans`].
///
/// # Example
///
/// ```
/// use nalgebra::DMatrix;
/// use seeding::Dataset;
/// use mufc_cli::central::kmeans_labels;
///
/// let data = Dataset::new(DMatrix::from_column_slice(1, 4, &[0.0, 10.0, 1.0, 11.0]))?;
/// let (labels, phi) = kmeans_labels(&data, 2, 3, 1)?;
/// assert_eq!(labels[0], labels[2]);
/// assert_ne!(labels[0], labels[1]);
/// assert_eq!(phi, 1.0);
/// # Ok::<(), mufc_cli::CliError>(())
/// ```
pub fn kmeans_labels(
    data: &Dataset,
    k: usize,
    restarts: usize,
    seed: u64,
) -> Result<(Vec<usize>, f64), CliError> {
    let model = best_kmeans(data, k, restarts, seed)?;
    let labels = model.assignment().iter().map(|&j| j as usize).collect();
    Ok((labels, model.phi()))
}
