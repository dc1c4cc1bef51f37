//! The built-in data set: the Gaussian mixture of the paper's Appendix M.1
//! (n = 30000, d = 10, K = 10, 3000 points per cluster, centres uniform in
//! the unit hypercube, spherical clusters of variance 0.5).

use nalgebra::DMatrix;
use rand::Rng;
use seeding::{BoxTransform, Dataset};

use crate::CliError;
use crate::random::{normal_pair, unit};

/// A mixture of spherical Gaussians with centres drawn uniformly from the
/// unit hypercube `[0, 1]^d` and covariance `variance * I`.
///
/// The paper says "spherical with variance 0.5"; we read it as the
/// variance of every coordinate (covariance `0.5 I`), the usual meaning of
/// a spherical Gaussian's variance. It is a parameter, so other readings
/// can be tried.
///
/// # Example
///
/// ```
/// use mufc_cli::synth::GaussianMixture;
///
/// let g = GaussianMixture { clusters: 3, per_cluster: 5, dim: 2, variance: 0.01 };
/// let data = g.sample(&mut rand::rng())?;
/// assert_eq!(data.points.shape(), (2, 15));
/// assert_eq!(data.labels[14], 2);
/// assert_eq!(GaussianMixture::paper().clusters * GaussianMixture::paper().per_cluster, 30_000);
/// # Ok::<(), mufc_cli::CliError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GaussianMixture {
    /// The number of clusters K.
    pub clusters: usize,
    /// The points drawn from each cluster.
    pub per_cluster: usize,
    /// The dimension d.
    pub dim: usize,
    /// The variance of each coordinate.
    pub variance: f64,
}

impl Default for GaussianMixture {
    fn default() -> Self {
        Self::paper()
    }
}

/// Points with their true cluster labels (and, for this module's tests,
/// the cluster centres).
#[derive(Clone, Debug, PartialEq)]
pub struct Labelled {
    /// The points, one per column (cluster after cluster).
    pub points: DMatrix<f64>,
    /// The cluster of each point.
    pub labels: Vec<usize>,
    /// The cluster centres, one per column.
    #[cfg(test)]
    pub(crate) centers: DMatrix<f64>,
}

impl GaussianMixture {
    /// The paper's Gaussian data set (Appendix M.1).
    pub const fn paper() -> Self {
        Self {
            clusters: 10,
            per_cluster: 3000,
            dim: 10,
            variance: 0.5,
        }
    }

    /// The number of points.
    pub fn len(&self) -> usize {
        self.clusters.saturating_mul(self.per_cluster)
    }

    /// Whether the mixture has no points.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Draws the centres, then `per_cluster` points around each, cluster
    /// after cluster. The same generator state gives the same data on every
    /// machine (the normal variates come from a Box-Muller transform
    /// defined in this crate, not from a library whose algorithm may
    /// change).
    ///
    /// # Errors
    ///
    /// [`CliError::InvalidParameter`] for zero clusters, points or
    /// dimension, more than 2^32 points, or a variance that is not finite
    /// and non-negative.
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> Result<Labelled, CliError> {
        let bad = |name, value: String, reason| CliError::InvalidParameter {
            name,
            value,
            reason,
        };
        if self.clusters == 0 {
            return Err(bad("clusters", "0".into(), "must be at least 1"));
        }
        if self.per_cluster == 0 {
            return Err(bad("points per cluster", "0".into(), "must be at least 1"));
        }
        if self.dim == 0 {
            return Err(bad("dimension", "0".into(), "must be at least 1"));
        }
        let n = self.len();
        if n > 1 << 32 || n.saturating_mul(self.dim) > 1 << 34 {
            return Err(bad("points", n.to_string(), "too many for this command"));
        }
        if !(self.variance >= 0.0 && self.variance.is_finite()) {
            return Err(bad(
                "variance",
                self.variance.to_string(),
                "must be finite and non-negative",
            ));
        }
        let d = self.dim;
        let centers = DMatrix::from_fn(d, self.clusters, |_, _| unit(rng));
        let sd = self.variance.sqrt();
        let mut coords = Vec::with_capacity(n * d);
        let mut spare: Option<f64> = None;
        let mut labels = Vec::with_capacity(n);
        for c in 0..self.clusters {
            for _ in 0..self.per_cluster {
                for a in 0..d {
                    let z = match spare.take() {
                        Some(z) => z,
                        None => {
                            let (z0, z1) = normal_pair(rng);
                            spare = Some(z1);
                            z0
                        }
                    };
                    coords.push(centers[(a, c)] + sd * z);
                }
                labels.push(c);
            }
        }
        Ok(Labelled {
            points: DMatrix::from_vec(d, n, coords),
            labels,
            #[cfg(test)]
            centers,
        })
    }
}

/// Maps points into the quantizer's box `[-1/2, 1/2]^d` with
/// [`BoxTransform::fit`] (one translation per axis, one common scale, so
/// K-means solutions and loss ratios do not change).
///
/// # Errors
///
/// [`CliError::Seeding`] for an empty matrix or invalid coordinates.
///
/// # Example
///
/// ```
/// use nalgebra::DMatrix;
/// use mufc_cli::synth::scale_into_box;
///
/// let m = DMatrix::from_column_slice(1, 3, &[-4.0, 0.0, 6.0]);
/// let s = scale_into_box(&m)?;
/// assert!(s.iter().all(|x| x.abs() <= 0.5));
/// # Ok::<(), mufc_cli::CliError>(())
/// ```
pub fn scale_into_box(points: &DMatrix<f64>) -> Result<DMatrix<f64>, CliError> {
    Ok(fit_into_box(points)?.0)
}

/// As [`scale_into_box`], with the map it applied (which `mufc fit`
/// stores, so that `mufc predict` takes points as the data has them).
///
/// # Errors
///
/// As [`scale_into_box`].
///
/// # Example
///
/// ```
/// use nalgebra::DMatrix;
/// use mufc_cli::synth::fit_into_box;
///
/// let m = DMatrix::from_column_slice(1, 3, &[-4.0, 0.0, 6.0]);
/// let (s, t) = fit_into_box(&m)?;
/// assert_eq!(t.apply(&[6.0]), vec![s[(0, 2)]]);
/// # Ok::<(), mufc_cli::CliError>(())
/// ```
pub fn fit_into_box(points: &DMatrix<f64>) -> Result<(DMatrix<f64>, BoxTransform), CliError> {
    let data = Dataset::new(points.clone())?;
    let t = BoxTransform::fit(&data)?;
    Ok((t.apply_dataset(&data)?.points().clone(), t))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clusters_have_their_centre_and_variance() {
        let g = GaussianMixture {
            clusters: 3,
            per_cluster: 4000,
            dim: 4,
            variance: 0.5,
        };
        let s = g.sample(&mut testdata::rng("synth-moments")).unwrap();
        assert_eq!(s.points.shape(), (4, 12_000));
        assert!(s.centers.iter().all(|&c| (0.0..=1.0).contains(&c)));
        for c in 0..3 {
            let cols: Vec<usize> = (0..12_000).filter(|&i| s.labels[i] == c).collect();
            assert_eq!(cols.len(), 4000);
            for a in 0..4 {
                let xs: Vec<f64> = cols.iter().map(|&i| s.points[(a, i)]).collect();
                let mean = xs.iter().sum::<f64>() / 4000.0;
                let var = xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / 3999.0;
                // Standard error of the mean: sqrt(0.5 / 4000) ~ 0.011.
                assert!((mean - s.centers[(a, c)]).abs() < 0.05, "{mean}");
                // Standard error of the variance: 0.5 sqrt(2 / 4000) ~ 0.011.
                assert!((var - 0.5).abs() < 0.05, "{var}");
            }
        }
    }

    #[test]
    fn seeded_and_checked() {
        let g = GaussianMixture {
            clusters: 2,
            per_cluster: 10,
            dim: 3,
            variance: 0.1,
        };
        let a = g.sample(&mut testdata::rng("same")).unwrap();
        let b = g.sample(&mut testdata::rng("same")).unwrap();
        let c = g.sample(&mut testdata::rng("other")).unwrap();
        assert_eq!(a, b);
        assert_ne!(a.points, c.points);
        for bad in [
            GaussianMixture { clusters: 0, ..g },
            GaussianMixture {
                per_cluster: 0,
                ..g
            },
            GaussianMixture { dim: 0, ..g },
            GaussianMixture {
                variance: -1.0,
                ..g
            },
            GaussianMixture {
                variance: f64::NAN,
                ..g
            },
        ] {
            assert!(bad.sample(&mut testdata::rng("bad")).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn scaling_keeps_the_shape_inside_the_box() {
        let g = GaussianMixture::paper();
        let small = GaussianMixture {
            per_cluster: 50,
            ..g
        };
        let s = small.sample(&mut testdata::rng("scale")).unwrap();
        let boxed = scale_into_box(&s.points).unwrap();
        assert!(boxed.iter().all(|x| x.abs() <= 0.5));
        // One common scale: ratios of distances are kept.
        let d = |m: &DMatrix<f64>, i: usize, j: usize| (m.column(i) - m.column(j)).norm();
        let r0 = d(&s.points, 0, 1) / d(&s.points, 2, 3);
        let r1 = d(&boxed, 0, 1) / d(&boxed, 2, 3);
        assert!((r0 - r1).abs() < 1e-9 * r0.max(1.0));
    }
}
