//! The federated (induced) objective of Definition 3.1 of the paper, and
//! the loss ratio that the paper's Table 1 reports.

use nalgebra::DMatrixView;

use crate::{Dataset, Metric, SeedingError};

/// One client's part of an induced clustering (Definition 3.1 of the
/// paper): its points, the local cluster of each point, and the server
/// centroid that each local cluster was assigned to.
///
/// A point of local cluster `j` takes server centroid `server[j]`, whatever
/// centroid is nearest to the point itself: that is the difference between
/// the federated objective and the centralized one (Appendix L).
///
/// # Example
///
/// ```
/// use nalgebra::DMatrix;
/// use seeding::{Dataset, InducedClient};
///
/// let data = Dataset::new(DMatrix::from_column_slice(1, 2, &[0.0, 1.0]))?;
/// let client = InducedClient { data: &data, local: &[0, 0], server: &[1] };
/// assert_eq!(client.local.len(), client.data.len());
/// # Ok::<(), seeding::SeedingError>(())
/// ```
#[derive(Clone, Copy, Debug)]
pub struct InducedClient<'a> {
    /// The client's points.
    pub data: &'a Dataset,
    /// The local cluster of each point, by position in `data`.
    pub local: &'a [u32],
    /// The server centroid of each local cluster, by local cluster index.
    pub server: &'a [u32],
}

/// The federated objective phi_f of Definition 3.1 (equation (2)) of the
/// paper: the sum over clients and their points of `weight * cost` from the
/// point to its *induced* server centroid, the column `server[local[p]]` of
/// `server_centroids`. With [`crate::SqEuclidean`] this is the K-means
/// objective of the induced global clustering; any [`Metric`] works.
///
/// Sums run client after client, point after point in position order, so
/// the result is the same bits on every run.
///
/// # Errors
///
/// [`SeedingError::LengthMismatch`] when a client's `local` does not have
/// one entry per point, when a local cluster index is not below
/// `server.len()`, when a server index is not below the number of server
/// centroids, or when dimensions differ.
///
/// # Example
///
/// ```
/// use nalgebra::DMatrix;
/// use seeding::{induced_phi, phi, Dataset, InducedClient, SqEuclidean};
///
/// // Server centroids at 0 and 10.
/// let server = DMatrix::from_column_slice(1, 2, &[0.0, 10.0]);
/// // Client A: one local cluster {1, 2} sent to centroid 0.
/// let a = Dataset::new(DMatrix::from_column_slice(1, 2, &[1.0, 2.0]))?;
/// // Client B: one local cluster {4, 9} whose centroid went to centroid 1,
/// // so the point 4 pays its distance to 10, not to 0.
/// let b = Dataset::new(DMatrix::from_column_slice(1, 2, &[4.0, 9.0]))?;
/// let clients = [
///     InducedClient { data: &a, local: &[0, 0], server: &[0] },
///     InducedClient { data: &b, local: &[0, 0], server: &[1] },
/// ];
/// let phi_f = induced_phi(&SqEuclidean, clients, server.as_view())?;
/// assert_eq!(phi_f, 1.0 + 4.0 + 36.0 + 1.0);
/// // The centralized objective lets 4 take its nearest centroid (0).
/// assert_eq!(phi(&SqEuclidean, &b, server.as_view())?, 16.0 + 1.0);
/// # Ok::<(), seeding::SeedingError>(())
/// ```
pub fn induced_phi<'a, M: Metric>(
    metric: &M,
    clients: impl IntoIterator<Item = InducedClient<'a>>,
    server_centroids: DMatrixView<'_, f64>,
) -> Result<f64, SeedingError> {
    let dim = server_centroids.nrows();
    let m = server_centroids.ncols();
    // Contiguous copies of the centroids, so that costs take slices.
    let centroids: Vec<f64> = server_centroids.iter().copied().collect();
    let mut total = 0.0;
    for client in clients {
        let data = client.data;
        if data.dim() != dim {
            return Err(SeedingError::LengthMismatch {
                what: "server centroid dimension",
                expected: data.dim(),
                found: dim,
            });
        }
        if client.local.len() != data.len() {
            return Err(SeedingError::LengthMismatch {
                what: "local cluster indices per point",
                expected: data.len(),
                found: client.local.len(),
            });
        }
        if let Some(&bad) = client.server.iter().find(|&&s| s as usize >= m) {
            return Err(SeedingError::LengthMismatch {
                what: "server centroid index below the number of centroids",
                expected: m,
                found: bad as usize,
            });
        }
        for (pos, &j) in client.local.iter().enumerate() {
            let s = *client
                .server
                .get(j as usize)
                .ok_or(SeedingError::LengthMismatch {
                    what: "local cluster index below the number of local clusters",
                    expected: client.server.len(),
                    found: j as usize,
                })? as usize;
            let c = &centroids[s * dim..(s + 1) * dim];
            total += data.weight(pos) as f64 * metric.cost(data.point(pos), c);
        }
    }
    Ok(total)
}

/// The loss ratio `phi_f / phi_c*` of the paper's Section 6 and Table 1:
/// a federated objective over the (estimated) optimal centralized one.
///
/// # Errors
///
/// [`SeedingError::InvalidParameter`] when `phi_f` is negative or not
/// finite, or when `phi_c_star` is not finite and positive (a ratio to 0
/// says nothing).
///
/// # Example
///
/// ```
/// use seeding::loss_ratio;
///
/// assert_eq!(loss_ratio(12.5, 10.0)?, 1.25);
/// assert!(loss_ratio(1.0, 0.0).is_err());
/// # Ok::<(), seeding::SeedingError>(())
/// ```
pub fn loss_ratio(phi_f: f64, phi_c_star: f64) -> Result<f64, SeedingError> {
    if !(phi_f >= 0.0 && phi_f.is_finite()) {
        return Err(SeedingError::InvalidParameter {
            name: "phi_f",
            value: phi_f,
        });
    }
    if !(phi_c_star > 0.0 && phi_c_star.is_finite()) {
        return Err(SeedingError::InvalidParameter {
            name: "phi_c_star",
            value: phi_c_star,
        });
    }
    Ok(phi_f / phi_c_star)
}

#[cfg(test)]
// Small integers and their sums are exact in f64.
#[allow(clippy::float_cmp)]
mod tests {
    use nalgebra::DMatrix;

    use super::*;
    use crate::{L1, PointId, SqEuclidean, phi};

    #[test]
    fn nearest_assignment_gives_the_centralized_objective() {
        // When every local cluster goes to the server centroid nearest to
        // all of its points, phi_f equals phi.
        let m = DMatrix::from_column_slice(2, 4, &[0.0, 0.0, 1.0, 0.0, 9.0, 9.0, 10.0, 9.0]);
        let data = Dataset::new(m).unwrap();
        let server = DMatrix::from_column_slice(2, 2, &[0.5, 0.0, 9.5, 9.0]);
        let client = InducedClient {
            data: &data,
            local: &[1, 1, 0, 0],
            server: &[1, 0],
        };
        let f = induced_phi(&SqEuclidean, [client], server.as_view()).unwrap();
        assert_eq!(f, phi(&SqEuclidean, &data, server.as_view()).unwrap());
        // Swapping the server indices makes every point pay the far one.
        let swapped = InducedClient {
            server: &[0, 1],
            ..client
        };
        let g = induced_phi(&SqEuclidean, [swapped], server.as_view()).unwrap();
        assert!(g > f);
    }

    #[test]
    fn weights_and_metric_enter() {
        let m = DMatrix::from_column_slice(1, 2, &[1.0, 3.0]);
        let data = Dataset::with_weights(m, vec![PointId(0), PointId(1)], vec![2, 5]).unwrap();
        let server = DMatrix::from_column_slice(1, 1, &[0.0]);
        let c = InducedClient {
            data: &data,
            local: &[0, 0],
            server: &[0],
        };
        assert_eq!(
            induced_phi(&SqEuclidean, [c], server.as_view()).unwrap(),
            2.0 + 45.0
        );
        assert_eq!(induced_phi(&L1, [c], server.as_view()).unwrap(), 2.0 + 15.0);
    }

    #[test]
    fn bad_indices_are_errors() {
        let data = Dataset::new(DMatrix::from_column_slice(1, 2, &[0.0, 1.0])).unwrap();
        let server = DMatrix::from_column_slice(1, 2, &[0.0, 1.0]);
        let cases = [
            (&[0u32][..], &[0u32][..]), // one local index for two points
            (&[0, 1], &[0]),            // local cluster 1 does not exist
            (&[0, 0], &[2]),            // server centroid 2 does not exist
        ];
        for (local, srv) in cases {
            let c = InducedClient {
                data: &data,
                local,
                server: srv,
            };
            assert!(matches!(
                induced_phi(&SqEuclidean, [c], server.as_view()),
                Err(SeedingError::LengthMismatch { .. })
            ));
        }
        let wrong_dim = DMatrix::from_column_slice(2, 1, &[0.0, 1.0]);
        let c = InducedClient {
            data: &data,
            local: &[0, 0],
            server: &[0],
        };
        assert!(induced_phi(&SqEuclidean, [c], wrong_dim.as_view()).is_err());
    }

    #[test]
    fn loss_ratio_checks_its_inputs() {
        assert_eq!(loss_ratio(3.0, 2.0).unwrap(), 1.5);
        assert!(loss_ratio(-1.0, 2.0).is_err());
        assert!(loss_ratio(f64::NAN, 2.0).is_err());
        assert!(loss_ratio(1.0, f64::INFINITY).is_err());
        assert!(loss_ratio(1.0, -2.0).is_err());
    }
}
