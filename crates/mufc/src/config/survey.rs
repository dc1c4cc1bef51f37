//! The survey a client makes of its own data when a federation is built,
//! for the adaptive client `k` ([`ClientK::Adaptive`](crate::ClientK)):
//! about how many well-separated clusters its points form
//! ([`survey_scale`]). The federation doubles its clients' `k` when the
//! clients hold about as many clusters as the server looks for (an i.i.d.
//! split), and only then (docs/benchmarks.md, "The defaults on the data
//! suite").
//!
//! Why a survey and not a rule on counts: on an i.i.d. split every client
//! holds every one of the `K` clusters, and one K-means run with `K`
//! centres there now and then puts one centre between two clusters; the
//! server cannot split such a merged bin again, and with a few hundred
//! points a client the loss ratio went from 1.00 (2K clusters) to 1.8. A
//! non-i.i.d. split of the same sizes (the paper's, each client holding
//! three of the ten clusters) has spare centres already and gains nothing
//! from doubling but twice the bytes and decode time. The two cannot be
//! told apart from the number of points; they can from the data.

use nalgebra::DMatrix;
use seeding::{Dataset, KMeans, KMeansParams, derive_seed};

use crate::ClientId;

/// The most points a client surveys (a fixed stride through them): the
/// survey's K-means runs stay a few milliseconds whatever the client's
/// size.
pub(crate) const SURVEY_SAMPLE: usize = 1000;

/// The largest number of clusters the survey tries (powers of two up to
/// it): a federation asking for more than 127 clusters is not doubled.
pub(crate) const SURVEY_MAX_CLUSTERS: usize = 64;

/// The fewest surveyed points a cluster the survey tries: `p` clusters
/// are tried only on at least `20 p` points. K-means fits its own sample,
/// and on few points a cluster halving costs more than on the density
/// they come from: with ten points a cluster, some clients of uniform
/// data in 6 dimensions (500 points each) surveyed as 32, with twenty
/// none did (a check in Python with the same rule).
pub(crate) const SURVEY_POINTS_PER_CLUSTER: usize = 20;

/// How much more than smooth data a halving must cost to count as a
/// merge of separate clusters: `1.15` times `2^(2/d)`. On data with no
/// cluster structure at the scale of `p` clusters, `p/2` centres cost
/// about `2^(2/d)` times what `p` cost (quantisation theory: the cost of
/// `p` centres on a smooth density falls as `p^(-2/d)`); where `p`
/// clusters are separate, merging them costs far more. Measured in
/// Python (scikit-learn's K-means from non-greedy K-means++ seeds) on nine
/// of the suite's sets and an imitation of the built-in one, the cost of
/// `K/2` centres over that of `K`, divided by `2^(2/d)`, had a median over
/// clients of 0.90 to 1.07 where doubling did not help (non-i.i.d.,
/// overlapping, uniform, one Gaussian) and 1.26 to 2.66 where it did
/// (i.i.d. splits).
pub(crate) const SURVEY_THRESHOLD: f64 = 1.15;

/// About how many well-separated clusters `data` forms: the largest power
/// of two `p <= 64` for which `p / 2` K-means centres cost more than
/// `1.15 * 2^(2/d)` times what `p` centres cost (`d` the dimension; the
/// reason is at `SURVEY_THRESHOLD` in the source), on a fixed sample of at
/// most 1000 points, `p` tried only on `20 p` points or more (`1` when no
/// halving does, or the client holds too few points to tell).
///
/// A function of the data alone (its K-means runs have fixed seeds, so
/// that a client across processes, which learns its number and the
/// federation's seed only after it registers, finds the same value as the
/// same client in process). A client tells the server this value when it
/// registers, next to its number of points (docs/threat-model.md §6a).
///
/// `Registration::surveying` (`remote.rs`) gives it to a client.
pub(crate) fn survey_scale(data: &Dataset) -> u32 {
    let Some(sample) = sample(data) else {
        return 1;
    };
    let d = sample.dim().max(1);
    // `d` is at most a few thousand: exact in f64.
    #[allow(clippy::cast_precision_loss)]
    let smooth = 2f64.powf(2.0 / d as f64);
    let mut previous = match cost(&sample, 1) {
        Some(c) if c > 0.0 => c,
        _ => return 1,
    };
    let mut scale = 1;
    let mut p = 2;
    while p <= SURVEY_MAX_CLUSTERS && p * SURVEY_POINTS_PER_CLUSTER <= sample.len() {
        let Some(c) = cost(&sample, p) else { break };
        if c <= 0.0 {
            break;
        }
        if previous / c > SURVEY_THRESHOLD * smooth {
            scale = p;
        }
        previous = c;
        p *= 2;
    }
    u32::try_from(scale).unwrap_or(1)
}

/// The median of the clients' survey scales (the lower middle one for an
/// even count; `1` for none): what the adaptive rule compares with `K`.
pub(crate) fn median_scale(scales: impl IntoIterator<Item = u32>) -> u32 {
    let mut v: Vec<u32> = scales.into_iter().collect();
    if v.is_empty() {
        return 1;
    }
    v.sort_unstable();
    v[(v.len() - 1) / 2]
}

/// The median survey scale of `clients` (each surveyed in parallel).
pub(crate) fn median_scale_of(clients: &[(ClientId, Dataset)]) -> u32 {
    let scales: Result<Vec<u32>, std::convert::Infallible> =
        crate::par::map(true, clients, |_, (_, d)| Ok(survey_scale(d)));
    let Ok(scales) = scales;
    median_scale(scales)
}

/// At most [`SURVEY_SAMPLE`] points of `data` at a fixed stride (`None`
/// when too few to survey).
fn sample(data: &Dataset) -> Option<Dataset> {
    let n = data.len();
    if n < 2 * SURVEY_POINTS_PER_CLUSTER {
        return None;
    }
    if n <= SURVEY_SAMPLE {
        return Some(data.clone());
    }
    let d = data.dim();
    let mut coords = Vec::with_capacity(SURVEY_SAMPLE * d);
    for i in 0..SURVEY_SAMPLE {
        coords.extend_from_slice(data.point(i * n / SURVEY_SAMPLE));
    }
    Dataset::new(DMatrix::from_vec(d, SURVEY_SAMPLE, coords)).ok()
}

/// The objective of one K-means run with `k` centres (ten iterations at
/// most: the survey compares costs that differ by tens of percent).
fn cost(data: &Dataset, k: usize) -> Option<f64> {
    const TAG: u64 = 0x5355_5256_4559; // "SURVEY"
    let params = KMeansParams::new(k).max_iterations(10).validate().ok()?;
    let seed = derive_seed(TAG, 0, k as u64);
    KMeans::new(params)
        .fit_seeded(data, seed)
        .ok()
        .map(|m| m.phi())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gaussians(centres: usize, per: usize, dim: usize, spread: f64) -> Dataset {
        // A fixed xorshift: the test needs spread, not quality.
        let mut state = 0x9E37_79B9_7F4A_7C15_u64;
        let mut uniform = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f64 / (1u64 << 53) as f64
        };
        let mut c = vec![0.0; centres * dim];
        for x in &mut c {
            *x = uniform();
        }
        let mut coords = Vec::new();
        for i in 0..centres * per {
            let j = i % centres;
            for a in 0..dim {
                // A sum of uniforms: a bell of standard deviation ~ spread.
                let u: f64 = (0..4).map(|_| uniform() - 0.5).sum();
                coords.push(c[j * dim + a] + spread * u * 1.7);
            }
        }
        Dataset::new(DMatrix::from_vec(dim, centres * per, coords)).unwrap()
    }

    #[test]
    fn separate_clusters_are_seen_and_smooth_data_is_not() {
        // Ten tight clusters in 8 dimensions: the scale reaches 8 (the
        // largest power of two not above 10), as on an i.i.d. split.
        assert!(survey_scale(&gaussians(10, 40, 8, 0.02)) >= 8);
        assert!(
            survey_scale(&gaussians(10, 15, 8, 0.02)) < 8,
            "too few points to tell"
        );
        // Three clusters: spare centres, no doubling for K = 10.
        let three = survey_scale(&gaussians(3, 100, 8, 0.02));
        assert!((2..=4).contains(&three), "{three}");
        // One wide bell: no cluster structure at any scale.
        assert_eq!(survey_scale(&gaussians(1, 400, 8, 0.3)), 1);
    }

    #[test]
    fn small_clients_and_degenerate_data_survey_as_one() {
        assert_eq!(survey_scale(&gaussians(2, 5, 3, 0.1)), 1);
        let same = Dataset::new(DMatrix::from_element(2, 50, 0.25)).unwrap();
        assert_eq!(survey_scale(&same), 1);
    }

    #[test]
    fn the_survey_is_deterministic_and_samples_large_clients() {
        let big = gaussians(10, 300, 4, 0.01);
        assert_eq!(sample(&big).unwrap().len(), SURVEY_SAMPLE);
        assert_eq!(survey_scale(&big), survey_scale(&big));
    }

    #[test]
    fn the_median_is_the_lower_middle() {
        assert_eq!(median_scale([]), 1);
        assert_eq!(median_scale([8, 1, 16]), 8);
        assert_eq!(median_scale([8, 1, 16, 2]), 2);
    }
}
