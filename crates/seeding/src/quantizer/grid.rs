//! The grid itself: the [`Quantizer`] type, its constructors (unshifted,
//! shifted, randomly shifted) and accessors, and the map from a point of
//! the box to its bin coordinates.

use num_bigint::BigUint;
use num_traits::ToPrimitive;
use rand::Rng;

use crate::SeedingError;

pub(super) const TWO_POW_M53: f64 = 1.0 / 9_007_199_254_740_992.0;
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
/// let x = q.sample_in_bin(&i, &mut rand::rng())?;
/// assert_eq!(q.bin_of(&x)?, i);
/// assert!(q.bin_of(&[0.0, 0.7]).is_err()); // outside the box
/// # Ok::<(), seeding::SeedingError>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Quantizer {
    pub(super) dim: usize,
    pub(super) gamma: f64,
    pub(super) bins_per_axis: u64,
    pub(super) shift: Option<Vec<f64>>,
    pub(super) origin: Vec<f64>,
    pub(super) num_bins: BigUint,
    pub(super) num_bins_u64: Option<u64>,
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

    pub(super) fn build(
        dim: usize,
        gamma: f64,
        shift: Option<Vec<f64>>,
    ) -> Result<Self, SeedingError> {
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
    pub(super) fn axis_bin(&self, axis: usize, x: f64) -> u64 {
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
    pub(super) fn axis_extent(&self, axis: usize, c: u64) -> (f64, f64) {
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

    pub(super) fn check_point(
        &self,
        point: &[f64],
        pos: Option<usize>,
    ) -> Result<(), SeedingError> {
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
}
