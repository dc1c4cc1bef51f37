//! [`BoxTransform`], the affine map that brings data into the quantizer's
//! box `[-1/2, 1/2]^d` and back.

use nalgebra::DMatrix;

use crate::{Dataset, SeedingError};

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
    pub(super) offset: Vec<f64>,
    pub(super) scale: f64,
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
