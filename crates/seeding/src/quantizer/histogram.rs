//! Many points at once: the sparse bin histogram a client sends, and the
//! data sets a server rebuilds from a decoded histogram (bin centres or
//! samples inside the bins).

use nalgebra::{DMatrix, DMatrixView};
use num_bigint::BigUint;
use rand::Rng;

use super::grid::Quantizer;
use crate::{Dataset, PointId, SeedingError};

impl Quantizer {
    /// The sparse bin histogram of weighted points (columns of `points`),
    /// sorted by bin, equal bins merged: what a client of Algorithm 1 (lines
    /// 3-4) turns its seeds and cluster sizes into.
    ///
    /// # Errors
    ///
    /// [`SeedingError::LengthMismatch`], [`SeedingError::OutsideBox`] naming
    /// the offending column, or [`SeedingError::WeightOverflow`].
    ///
    /// # Example
    ///
    /// ```
    /// use nalgebra::DMatrix;
    /// use num_bigint::BigUint;
    /// use seeding::Quantizer;
    ///
    /// let q = Quantizer::new(1, 0.5)?;
    /// let seeds = DMatrix::from_column_slice(1, 3, &[0.3, -0.2, 0.1]);
    /// let h = q.histogram(seeds.as_view(), &[5, 2, 1])?;
    /// assert_eq!(h, vec![(BigUint::from(1u32), 2), (BigUint::from(2u32), 6)]);
    /// # Ok::<(), seeding::SeedingError>(())
    /// ```
    pub fn histogram(
        &self,
        points: DMatrixView<'_, f64>,
        counts: &[u64],
    ) -> Result<Vec<(BigUint, u64)>, SeedingError> {
        if points.nrows() != self.dim || points.ncols() != counts.len() {
            return Err(SeedingError::LengthMismatch {
                what: "one count per column of the right dimension",
                expected: points.ncols(),
                found: counts.len(),
            });
        }
        let mut out: Vec<(BigUint, u64)> = Vec::with_capacity(counts.len());
        for (j, &count) in counts.iter().enumerate() {
            let col: Vec<f64> = points.column(j).iter().copied().collect();
            self.check_point(&col, Some(j))?;
            let coords: Vec<u64> = (0..self.dim).map(|a| self.axis_bin(a, col[a])).collect();
            out.push((self.index_of(&coords)?, count));
        }
        out.sort_by(|a, b| a.0.cmp(&b.0));
        let mut merged: Vec<(BigUint, u64)> = Vec::with_capacity(out.len());
        for (bin, count) in out {
            match merged.last_mut() {
                Some((b, c)) if *b == bin => {
                    *c = c.checked_add(count).ok_or(SeedingError::WeightOverflow)?;
                }
                _ => merged.push((bin, count)),
            }
        }
        Ok(merged)
    }

    /// The server's data set from a decoded histogram, one weighted point
    /// per bin at the bin centre (Section 4 of the paper). Ids are `0..`,
    /// in the order of `hist`; zero counts are skipped.
    ///
    /// # Errors
    ///
    /// [`SeedingError::BinOutOfRange`], [`SeedingError::EmptyBin`] or
    /// [`SeedingError::WeightOverflow`].
    pub fn centers_dataset(&self, hist: &[(BigUint, u64)]) -> Result<Dataset, SeedingError> {
        let mut coords = Vec::new();
        let mut weights = Vec::new();
        for (bin, count) in hist.iter().filter(|(_, c)| *c > 0) {
            coords.extend(self.bin_center(bin)?);
            weights.push(*count);
        }
        let n = weights.len();
        let ids = (0..n as u64).map(PointId).collect();
        Dataset::with_weights(DMatrix::from_vec(self.dim, n, coords), ids, weights)
    }

    /// The server's data set from a decoded histogram, `count` points drawn
    /// uniformly inside each bin (Appendix H: the paper's default). Ids are
    /// `0..`, unweighted.
    ///
    /// # Errors
    ///
    /// [`SeedingError::BinOutOfRange`], [`SeedingError::EmptyBin`], or
    /// [`SeedingError::InvalidParameter`] when the counts add up to more
    /// than `max_points` (a guard against a corrupt histogram exhausting
    /// memory).
    pub fn samples_dataset<R: Rng + ?Sized>(
        &self,
        hist: &[(BigUint, u64)],
        max_points: u64,
        rng: &mut R,
    ) -> Result<Dataset, SeedingError> {
        let total = hist
            .iter()
            .try_fold(0u64, |acc, (_, c)| acc.checked_add(*c))
            .filter(|&t| t <= max_points)
            .ok_or(SeedingError::InvalidParameter {
                name: "total count",
                value: max_points as f64,
            })?;
        let n = usize::try_from(total).map_err(|_| SeedingError::WeightOverflow)?;
        let mut coords = Vec::with_capacity(n * self.dim);
        for (bin, count) in hist {
            let c = self.bin_coords(bin)?;
            self.check_nonempty(&c)?;
            for _ in 0..*count {
                coords.extend(self.sample_coords(&c, rng));
            }
        }
        Dataset::new(DMatrix::from_vec(self.dim, n, coords))
    }
}
