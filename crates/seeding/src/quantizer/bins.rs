//! Points of one bin: its centre, and points drawn uniformly inside it.

use num_bigint::BigUint;
use rand::Rng;

use super::grid::{Quantizer, TWO_POW_M53};
use crate::SeedingError;

impl Quantizer {
    /// The centre of a bin (of the cell clipped to the box). Every point of
    /// the bin is within `sqrt(d) gamma / 2` of it (Appendix D, eq. 10).
    ///
    /// # Errors
    ///
    /// As [`Self::bin_coords`], plus [`SeedingError::EmptyBin`] for a bin of
    /// a shifted grid that lies outside the box.
    pub fn bin_center(&self, index: &BigUint) -> Result<Vec<f64>, SeedingError> {
        let coords = self.bin_coords(index)?;
        self.check_nonempty(&coords)?;
        Ok(self.center_of_coords(&coords))
    }

    pub(super) fn check_nonempty(&self, coords: &[u64]) -> Result<(), SeedingError> {
        for (axis, &c) in coords.iter().enumerate() {
            let (lo, hi) = self.axis_extent(axis, c);
            if lo > hi {
                return Err(SeedingError::EmptyBin { axis, value: c });
            }
        }
        Ok(())
    }

    fn center_of_coords(&self, coords: &[u64]) -> Vec<f64> {
        coords
            .iter()
            .enumerate()
            .map(|(a, &c)| {
                let (lo, hi) = self.axis_extent(a, c);
                0.5 * (lo + hi)
            })
            .collect()
    }

    /// A point drawn uniformly from a bin (from the cell clipped to the
    /// box); [`Self::bin_of`] maps it back to `index`.
    ///
    /// # Errors
    ///
    /// As [`Self::bin_center`].
    pub fn sample_in_bin<R: Rng + ?Sized>(
        &self,
        index: &BigUint,
        rng: &mut R,
    ) -> Result<Vec<f64>, SeedingError> {
        let coords = self.bin_coords(index)?;
        self.check_nonempty(&coords)?;
        Ok(self.sample_coords(&coords, rng))
    }

    pub(super) fn sample_coords<R: Rng + ?Sized>(&self, coords: &[u64], rng: &mut R) -> Vec<f64> {
        coords
            .iter()
            .enumerate()
            .map(|(a, &c)| {
                let (lo, hi) = self.axis_extent(a, c);
                // Rounding can put a draw next to a cell edge into the
                // neighbouring cell; such draws are redrawn, which keeps
                // the rest uniform. Sixty-four misses in a row would need a
                // cell a few ulps wide: its centre is then as good a point.
                for _ in 0..64 {
                    let u = (rng.next_u64() >> 11) as f64 * TWO_POW_M53;
                    let x = lo + u * (hi - lo);
                    if (-0.5..=0.5).contains(&x) && self.axis_bin(a, x) == c {
                        return x;
                    }
                }
                0.5 * (lo + hi)
            })
            .collect()
    }
}
