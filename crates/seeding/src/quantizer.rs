//! The uniform grid quantizer of Appendix H of the paper, and an affine map
//! that brings data into its box.

use nalgebra::{DMatrix, DMatrixView};
use num_bigint::BigUint;
use num_traits::{One, ToPrimitive, Zero};
use rand::Rng;

use crate::{Dataset, PointId, SeedingError};

const TWO_POW_M53: f64 = 1.0 / 9_007_199_254_740_992.0;
const TWO_POW_53: f64 = 9_007_199_254_740_992.0;

/// A uniform grid of step `gamma` over the box `[-1/2, 1/2]^d` (the paper's
/// "unit hypercube centred at the origin", Appendix H), numbering its
/// `B^d` bins `1..=B^d`.
///
/// Along each axis the cells are `[o + c gamma, o + (c + 1) gamma)`,
/// `c = 0..B`, where the origin `o` is `-1/2` (or `-1/2 - s` with a shift
/// `s` in `[0, gamma)`, the random shift of Ginart et al. 2019). A bin is a
/// cell clipped to the box, the last one closed, so every point of the box
/// lies in exactly one bin and bin centres and samples stay in the box.
/// Without a shift `B = ceil(1/gamma)`; a shifted grid has one bin more per
/// axis, `B = ceil(1/gamma) + 1`, to cover the box whatever the shift
/// (the last cell of an axis may then miss the box: such a bin is never
/// produced by [`Quantizer::bin_of`] and has no centre).
///
/// Bin coordinates `(c_0, ..., c_{d-1})` map to the 1-based mixed-radix
/// index `1 + c_0 + c_1 B + ... + c_{d-1} B^{d-1}`, a [`BigUint`] because
/// `B^d` is usually far beyond 64 bits; the `*_u64` methods are a fast path
/// when it is not. (Index 0 is never used: the sketches of `syndrome-agg`
/// need non-zero keys.)
///
/// # Example
///
/// ```
/// use num_bigint::BigUint;
/// use seeding::Quantizer;
///
/// let q = Quantizer::new(2, 0.25)?; // 4 x 4 bins
/// assert_eq!(q.bins_per_axis(), 4);
/// let i = q.bin_of(&[-0.5, 0.3])?;
/// assert_eq!(q.bin_coords(&i)?, vec![0, 3]);
/// assert_eq!(i, BigUint::from(1u32 + 0 + 3 * 4));
/// assert_eq!(q.bin_center(&i)?, vec![-0.375, 0.375]);
/// let x = q.sample_in_bin(&i, &mut testkit::rng("doc-q"))?;
/// assert_eq!(q.bin_of(&x)?, i);
/// assert!(q.bin_of(&[0.0, 0.7]).is_err()); // outside the box
/// # Ok::<(), seeding::SeedingError>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Quantizer {
    dim: usize,
    gamma: f64,
    bins_per_axis: u64,
    shift: Option<Vec<f64>>,
    origin: Vec<f64>,
    num_bins: BigUint,
    num_bins_u64: Option<u64>,
}

impl Quantizer {
    /// An unshifted grid of step `gamma` in dimension `dim`.
    ///
    /// # Errors
    ///
    /// [`SeedingError::ZeroDimension`], or [`SeedingError::InvalidGamma`]
    /// unless `gamma` is finite, positive, and gives at most 2^53 bins per
    /// axis.
    pub fn new(dim: usize, gamma: f64) -> Result<Self, SeedingError> {
        Self::build(dim, gamma, None)
    }

    /// A grid shifted by `shift[a]` in `[0, gamma)` on axis `a` (the origin
    /// moves to `-1/2 - shift[a]`). Every party that must agree on bins must
    /// use the same shift.
    ///
    /// # Errors
    ///
    /// As [`Self::new`], plus [`SeedingError::LengthMismatch`] and
    /// [`SeedingError::InvalidParameter`] for a shift outside `[0, gamma)`.
    ///
    /// # Example
    ///
    /// ```
    /// use seeding::Quantizer;
    ///
    /// let q = Quantizer::with_shift(1, 0.5, vec![0.25])?;
    /// assert_eq!(q.bins_per_axis(), 3); // cells from -0.75 to 0.75
    /// assert_eq!(q.bin_coords(&q.bin_of(&[-0.3])?)?, vec![0]);
    /// assert_eq!(q.bin_coords(&q.bin_of(&[-0.2])?)?, vec![1]);
    /// # Ok::<(), seeding::SeedingError>(())
    /// ```
    pub fn with_shift(dim: usize, gamma: f64, shift: Vec<f64>) -> Result<Self, SeedingError> {
        Self::build(dim, gamma, Some(shift))
    }

    /// A grid with a shift drawn uniformly from `[0, gamma)` on each axis.
    ///
    /// # Errors
    ///
    /// As [`Self::new`].
    pub fn with_random_shift<R: Rng + ?Sized>(
        dim: usize,
        gamma: f64,
        rng: &mut R,
    ) -> Result<Self, SeedingError> {
        let shift = (0..dim)
            .map(|_| ((rng.next_u64() >> 11) as f64 * TWO_POW_M53) * gamma)
            .map(|s| if s < gamma { s } else { 0.0 })
            .collect();
        Self::build(dim, gamma, Some(shift))
    }

    fn build(dim: usize, gamma: f64, shift: Option<Vec<f64>>) -> Result<Self, SeedingError> {
        if dim == 0 {
            return Err(SeedingError::ZeroDimension);
        }
        let cells = (1.0 / gamma).ceil();
        if !(gamma > 0.0 && gamma.is_finite() && cells <= TWO_POW_53) {
            return Err(SeedingError::InvalidGamma { gamma });
        }
        // `cells` is an integer in [1, 2^53], exactly representable in u64.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let mut b = cells as u64;
        let origin = match &shift {
            None => vec![-0.5; dim],
            Some(s) => {
                if s.len() != dim {
                    return Err(SeedingError::LengthMismatch {
                        what: "shift per axis",
                        expected: dim,
                        found: s.len(),
                    });
                }
                if let Some(&bad) = s.iter().find(|&&x| !(0.0..gamma).contains(&x)) {
                    return Err(SeedingError::InvalidParameter {
                        name: "shift",
                        value: bad,
                    });
                }
                b += 1;
                s.iter().map(|&x| -0.5 - x).collect()
            }
        };
        let exp = u32::try_from(dim).map_err(|_| SeedingError::LengthMismatch {
            what: "dimension at most u32::MAX",
            expected: u32::MAX as usize,
            found: dim,
        })?;
        let num_bins = BigUint::from(b).pow(exp);
        let num_bins_u64 = num_bins.to_u64();
        Ok(Self {
            dim,
            gamma,
            bins_per_axis: b,
            shift,
            origin,
            num_bins,
            num_bins_u64,
        })
    }

    /// The dimension d.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// The step gamma.
    pub fn gamma(&self) -> f64 {
        self.gamma
    }

    /// B, the number of bins per axis.
    pub fn bins_per_axis(&self) -> u64 {
        self.bins_per_axis
    }

    /// The shift per axis, if the grid is shifted.
    pub fn shift(&self) -> Option<&[f64]> {
        self.shift.as_deref()
    }

    /// `B^d`, the number of bins (the largest index).
    pub fn num_bins(&self) -> &BigUint {
        &self.num_bins
    }

    /// `B^d` when it fits in a `u64`.
    pub fn num_bins_u64(&self) -> Option<u64> {
        self.num_bins_u64
    }

    /// The bin coordinate of `x` on `axis` (`x` in the box).
    fn axis_bin(&self, axis: usize, x: f64) -> u64 {
        let t = ((x - self.origin[axis]) / self.gamma).floor();
        let top = self.bins_per_axis - 1;
        if t <= 0.0 {
            0
        } else if t >= top as f64 {
            top
        } else {
            // 0 < t < B - 1 <= 2^53: an exact integer in range.
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            let c = t as u64;
            c
        }
    }

    /// The bin's extent on `axis`: the cell clipped to `[-1/2, 1/2]`.
    fn axis_extent(&self, axis: usize, c: u64) -> (f64, f64) {
        let o = self.origin[axis];
        let lo = (o + c as f64 * self.gamma).max(-0.5);
        let hi = (o + (c + 1) as f64 * self.gamma).min(0.5);
        (lo, hi)
    }

    /// The bin coordinates of a point of the box.
    ///
    /// # Errors
    ///
    /// [`SeedingError::LengthMismatch`], or [`SeedingError::OutsideBox`]
    /// (with `point: None`) for a coordinate outside `[-1/2, 1/2]`.
    pub fn coords_of(&self, point: &[f64]) -> Result<Vec<u64>, SeedingError> {
        self.check_point(point, None)?;
        Ok((0..self.dim).map(|a| self.axis_bin(a, point[a])).collect())
    }

    fn check_point(&self, point: &[f64], pos: Option<usize>) -> Result<(), SeedingError> {
        if point.len() != self.dim {
            return Err(SeedingError::LengthMismatch {
                what: "point dimension",
                expected: self.dim,
                found: point.len(),
            });
        }
        match point.iter().position(|x| !(-0.5..=0.5).contains(x)) {
            Some(axis) => Err(SeedingError::OutsideBox {
                point: pos,
                axis,
                value: point[axis],
            }),
            None => Ok(()),
        }
    }

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

    fn check_nonempty(&self, coords: &[u64]) -> Result<(), SeedingError> {
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

    fn sample_coords<R: Rng + ?Sized>(&self, coords: &[u64], rng: &mut R) -> Vec<f64> {
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

#[cfg(feature = "serde")]
mod serde_impl {
    use super::*;
    use serde::{Deserialize, Deserializer, Serialize, Serializer, de::Error as _};

    #[derive(Serialize, Deserialize)]
    struct Repr {
        dim: usize,
        gamma: f64,
        shift: Option<Vec<f64>>,
    }

    impl Serialize for Quantizer {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            Repr {
                dim: self.dim,
                gamma: self.gamma,
                shift: self.shift.clone(),
            }
            .serialize(s)
        }
    }

    impl<'de> Deserialize<'de> for Quantizer {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            let r = Repr::deserialize(d)?;
            Self::build(r.dim, r.gamma, r.shift).map_err(D::Error::custom)
        }
    }

    #[derive(Serialize, Deserialize)]
    struct BoxRepr {
        offset: Vec<f64>,
        scale: f64,
    }

    impl Serialize for BoxTransform {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            BoxRepr {
                offset: self.offset.clone(),
                scale: self.scale,
            }
            .serialize(s)
        }
    }

    impl<'de> Deserialize<'de> for BoxTransform {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            let r = BoxRepr::deserialize(d)?;
            Self::new(r.offset, r.scale).map_err(D::Error::custom)
        }
    }
}

/// The affine map `x -> (x - offset) * scale` that brings data into the
/// quantizer's box `[-1/2, 1/2]^d`: a translation per axis and *one* scale
/// for all axes, so that distances shrink uniformly and the K-means
/// problem keeps its solutions (a scale per axis would change them).
///
/// # Example
///
/// ```
/// use nalgebra::DMatrix;
/// use seeding::{BoxTransform, Dataset, Quantizer};
///
/// let data = Dataset::new(DMatrix::from_column_slice(2, 3, &[0.0, 10.0, 4.0, 12.0, 2.0, 11.0]))?;
/// let t = BoxTransform::fit(&data)?;
/// let inside = t.apply_dataset(&data)?;
/// let q = Quantizer::new(2, 0.1)?;
/// for p in 0..inside.len() {
///     q.bin_of(inside.point(p))?; // no point is outside the box
/// }
/// let back = t.invert(inside.point(1));
/// assert!((back[0] - 4.0).abs() < 1e-12 && (back[1] - 12.0).abs() < 1e-12);
/// # Ok::<(), seeding::SeedingError>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct BoxTransform {
    offset: Vec<f64>,
    scale: f64,
}

impl BoxTransform {
    /// The map `x -> (x - offset) * scale`.
    ///
    /// # Errors
    ///
    /// [`SeedingError::ZeroDimension`], or
    /// [`SeedingError::InvalidParameter`] for a non-finite offset or a scale
    /// that is not finite and positive.
    pub fn new(offset: Vec<f64>, scale: f64) -> Result<Self, SeedingError> {
        if offset.is_empty() {
            return Err(SeedingError::ZeroDimension);
        }
        if let Some(&bad) = offset.iter().find(|x| !x.is_finite()) {
            return Err(SeedingError::InvalidParameter {
                name: "offset",
                value: bad,
            });
        }
        if !(scale > 0.0 && scale.is_finite()) {
            return Err(SeedingError::InvalidParameter {
                name: "scale",
                value: scale,
            });
        }
        Ok(Self { offset, scale })
    }

    /// The map that centres the bounding box `[lo, hi]` and scales its
    /// longest side to just under 1 (a relative margin of 1e-9, so that
    /// rounding cannot push a point out of the box).
    ///
    /// # Errors
    ///
    /// As [`Self::new`], plus [`SeedingError::LengthMismatch`] and
    /// [`SeedingError::InvalidParameter`] when `lo > hi` somewhere.
    pub fn from_bounds(lo: &[f64], hi: &[f64]) -> Result<Self, SeedingError> {
        if lo.len() != hi.len() {
            return Err(SeedingError::LengthMismatch {
                what: "bounds",
                expected: lo.len(),
                found: hi.len(),
            });
        }
        let mut span: f64 = 0.0;
        for (&l, &h) in lo.iter().zip(hi) {
            if l.is_nan() || h.is_nan() || l > h {
                return Err(SeedingError::InvalidParameter {
                    name: "lower bound above upper bound",
                    value: l,
                });
            }
            span = span.max(h - l);
        }
        let offset = lo
            .iter()
            .zip(hi)
            .map(|(&l, &h)| 0.5 * l + 0.5 * h)
            .collect();
        let scale = if span > 0.0 { (1.0 - 1e-9) / span } else { 1.0 };
        Self::new(offset, scale)
    }

    /// The map for the bounding box of `data`.
    ///
    /// # Errors
    ///
    /// [`SeedingError::EmptyDataset`], or as [`Self::from_bounds`].
    pub fn fit(data: &Dataset) -> Result<Self, SeedingError> {
        if data.is_empty() {
            return Err(SeedingError::EmptyDataset);
        }
        let d = data.dim();
        let mut lo = vec![f64::INFINITY; d];
        let mut hi = vec![f64::NEG_INFINITY; d];
        for x in data.coords().chunks_exact(d) {
            for a in 0..d {
                lo[a] = lo[a].min(x[a]);
                hi[a] = hi[a].max(x[a]);
            }
        }
        Self::from_bounds(&lo, &hi)
    }

    /// The per-axis offset.
    pub fn offset(&self) -> &[f64] {
        &self.offset
    }

    /// The common scale.
    pub fn scale(&self) -> f64 {
        self.scale
    }

    /// Maps a point (of the same dimension) into the box's frame.
    pub fn apply(&self, x: &[f64]) -> Vec<f64> {
        x.iter()
            .zip(&self.offset)
            .map(|(&v, &o)| (v - o) * self.scale)
            .collect()
    }

    /// Maps a point back from the box's frame.
    pub fn invert(&self, y: &[f64]) -> Vec<f64> {
        y.iter()
            .zip(&self.offset)
            .map(|(&v, &o)| v / self.scale + o)
            .collect()
    }

    /// Maps a data set, keeping ids and weights. Squared distances, and so
    /// K-means objectives, are multiplied by `scale^2`.
    ///
    /// # Errors
    ///
    /// [`SeedingError::LengthMismatch`] for a dimension other than the
    /// map's.
    pub fn apply_dataset(&self, data: &Dataset) -> Result<Dataset, SeedingError> {
        if data.dim() != self.offset.len() {
            return Err(SeedingError::LengthMismatch {
                what: "data dimension",
                expected: self.offset.len(),
                found: data.dim(),
            });
        }
        let coords: Vec<f64> = data
            .coords()
            .chunks_exact(data.dim())
            .flat_map(|x| self.apply(x))
            .collect();
        let m = DMatrix::from_vec(data.dim(), data.len(), coords);
        if data.is_weighted() {
            Dataset::with_weights(m, data.ids().to_vec(), data.weights().to_vec())
        } else {
            Dataset::with_ids(m, data.ids().to_vec())
        }
    }
}
