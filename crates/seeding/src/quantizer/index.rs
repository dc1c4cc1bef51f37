//! Bin indices: the 1-based mixed-radix numbering of bin coordinates, as a
//! [`BigUint`] or, when `B^d` fits, as a `u64`, both ways.

use num_bigint::BigUint;
use num_traits::{One, ToPrimitive, Zero};

use super::grid::Quantizer;
use crate::SeedingError;

impl Quantizer {
    /// The index of the bin holding `point`.
    ///
    /// # Errors
    ///
    /// As [`Self::coords_of`].
    pub fn bin_of(&self, point: &[f64]) -> Result<BigUint, SeedingError> {
        self.index_of(&self.coords_of(point)?)
    }

    /// The index of the bin holding `point`, as a `u64`.
    ///
    /// # Errors
    ///
    /// As [`Self::coords_of`], plus [`SeedingError::IndexTooLarge`] when
    /// `B^d` exceeds `u64::MAX`.
    pub fn bin_of_u64(&self, point: &[f64]) -> Result<u64, SeedingError> {
        if self.num_bins_u64.is_none() {
            return Err(self.too_large());
        }
        self.index_of_u64(&self.coords_of(point)?)
    }

    fn too_large(&self) -> SeedingError {
        SeedingError::IndexTooLarge {
            bins: self.num_bins.clone(),
        }
    }

    fn check_coords(&self, coords: &[u64]) -> Result<(), SeedingError> {
        if coords.len() != self.dim {
            return Err(SeedingError::LengthMismatch {
                what: "bin coordinates",
                expected: self.dim,
                found: coords.len(),
            });
        }
        match coords.iter().position(|&c| c >= self.bins_per_axis) {
            Some(axis) => Err(SeedingError::BinCoordinateOutOfRange {
                axis,
                value: coords[axis],
                bins_per_axis: self.bins_per_axis,
            }),
            None => Ok(()),
        }
    }

    /// The 1-based mixed-radix index of bin coordinates.
    ///
    /// # Errors
    ///
    /// [`SeedingError::LengthMismatch`] or
    /// [`SeedingError::BinCoordinateOutOfRange`].
    pub fn index_of(&self, coords: &[u64]) -> Result<BigUint, SeedingError> {
        self.check_coords(coords)?;
        let mut idx = BigUint::zero();
        for &c in coords.iter().rev() {
            idx = idx * self.bins_per_axis + c;
        }
        Ok(idx + 1u32)
    }

    /// As [`Self::index_of`], as a `u64`.
    ///
    /// # Errors
    ///
    /// As [`Self::index_of`], plus [`SeedingError::IndexTooLarge`].
    pub fn index_of_u64(&self, coords: &[u64]) -> Result<u64, SeedingError> {
        self.check_coords(coords)?;
        if self.num_bins_u64.is_none() {
            return Err(self.too_large());
        }
        // B^d <= u64::MAX, so every partial value fits.
        let mut idx: u64 = 0;
        for &c in coords.iter().rev() {
            idx = idx * self.bins_per_axis + c;
        }
        Ok(idx + 1)
    }

    /// The bin coordinates of a 1-based index.
    ///
    /// # Errors
    ///
    /// [`SeedingError::BinOutOfRange`] unless `1 <= index <= B^d`.
    pub fn bin_coords(&self, index: &BigUint) -> Result<Vec<u64>, SeedingError> {
        if index.is_zero() || index > &self.num_bins {
            return Err(SeedingError::BinOutOfRange {
                index: index.clone(),
                bins: self.num_bins.clone(),
            });
        }
        if let Some(i) = index.to_u64() {
            return self.bin_coords_u64(i);
        }
        let mut rest = index - BigUint::one();
        let b = BigUint::from(self.bins_per_axis);
        let mut coords = Vec::with_capacity(self.dim);
        for _ in 0..self.dim {
            let r = &rest % &b;
            // r < B <= 2^53 + 1.
            coords.push(r.to_u64().unwrap_or(0));
            rest /= &b;
        }
        Ok(coords)
    }

    /// As [`Self::bin_coords`], for a `u64` index.
    ///
    /// # Errors
    ///
    /// [`SeedingError::BinOutOfRange`] unless `1 <= index <= B^d`.
    pub fn bin_coords_u64(&self, index: u64) -> Result<Vec<u64>, SeedingError> {
        if index == 0 || self.num_bins_u64.is_some_and(|n| index > n) {
            return Err(SeedingError::BinOutOfRange {
                index: BigUint::from(index),
                bins: self.num_bins.clone(),
            });
        }
        let mut rest = index - 1;
        let b = self.bins_per_axis;
        Ok((0..self.dim)
            .map(|_| {
                let r = rest % b;
                rest /= b;
                r
            })
            .collect())
    }
}
