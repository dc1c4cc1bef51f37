//! [`ExactModel::min_size`]: the model's clusters with the small ones
//! dissolved, centres re-computed as exact means.

use super::fixed::Moments;
use super::model::ExactModel;
use crate::min_size::{Centres, MinSizeClusters, collect, dissolve, nearest_alive};
use crate::{Metric, SqEuclidean};

/// The centres of a model while clusters dissolve: the model's centroids,
/// and the exact moments of the current members for the ones that change.
struct Means<'a> {
    model: &'a ExactModel,
    centres: Vec<f64>,
    moments: Moments,
}

impl Centres for Means<'_> {
    fn nearest(&self, pos: usize, alive: &[bool]) -> usize {
        let x = self.model.points.point(pos);
        nearest_alive(x, &self.centres, alive, |a, b| SqEuclidean.cost(a, b))
    }

    fn moved(&mut self, pos: usize, from: usize, to: usize) {
        let x = self.model.points.point(pos);
        let w = self.model.points.weights()[pos];
        self.moments.add_point(from, w, x, false);
        self.moments.add_point(to, w, x, true);
    }

    fn settle(&mut self, touched: &[usize]) {
        let d = self.moments.dim();
        for &j in touched {
            // A cluster that received points is not empty.
            self.moments
                .centroid_into(j, &mut self.centres[j * d..(j + 1) * d]);
        }
    }
}

impl ExactModel {
    /// The model's clusters once every cluster weighing less than `min`
    /// is dissolved, smallest first (lowest index on ties): its points
    /// move to their nearest remaining centroid, and every centroid that
    /// received points becomes the mean of its members (exact moments, as
    /// in the fit). Empty clusters are dropped; the others keep their
    /// centroids. A function of the model alone, so an updated model and a
    /// fresh fit of the same data give the same clusters, bit for bit.
    ///
    /// Costs O(n) per dissolved cluster plus the distances of its points
    /// to the centroids left.
    ///
    /// # Example
    ///
    /// ```
    /// use nalgebra::DMatrix;
    /// use seeding::{Dataset, ExactKMeans, KMeansParams};
    ///
    /// let m = DMatrix::from_fn(2, 30, |r, c| ((c * 7 + r * 3) % 11) as f64);
    /// let model = ExactKMeans::new(KMeansParams::new(12).validate()?).fit(&Dataset::new(m)?, 3)?;
    /// let c = model.min_size(3);
    /// assert!(c.sizes().iter().all(|&s| s >= 3));
    /// assert_eq!(c.sizes().iter().sum::<u64>(), 30);
    /// // A minimum of 1 keeps every non-empty cluster as it is.
    /// assert_eq!(model.min_size(1).centroids(), model.centroids());
    /// # Ok::<(), seeding::SeedingError>(())
    /// ```
    pub fn min_size(&self, min: u64) -> MinSizeClusters {
        let d = self.dim();
        let mut labels = self.assignments().to_vec();
        let mut sizes = self.sizes().to_vec();
        let m = sizes.len();
        let mut moments = Moments::zeros(m, d);
        for (pos, &l) in labels.iter().enumerate() {
            moments.add_point(
                l as usize,
                self.points.weights()[pos],
                self.points.point(pos),
                true,
            );
        }
        let mut means = Means {
            model: self,
            centres: self.centroids().iter().copied().collect(),
            moments,
        };
        let alive = dissolve(
            &mut means,
            &mut labels,
            self.points.weights(),
            &mut sizes,
            min,
        );
        let centres = means.centres;
        collect(d, &alive, &sizes, &labels, self.points.ids(), min, |j| {
            &centres[j * d..(j + 1) * d]
        })
    }
}
