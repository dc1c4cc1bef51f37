//! The map from the data's own coordinates to the model's, kept in the
//! store so that [`Store::predict`](super::Store::predict) takes points as
//! the user has them and [`Store::centroids`](super::Store::centroids)
//! gives centroids in the same units.

use serde::{Deserialize, Serialize};

use super::error::StoreError;

/// `y = (x - offset) * scale`, coordinate by coordinate: how the data was
/// mapped into the model's coordinates (the quantizer's box) before
/// training.
///
/// A common scale for every coordinate is [`Self::uniform`] (what
/// `seeding::quantizer::BoxTransform` does, and `mufc fit --scale`); a
/// scale per coordinate is [`Self::new`].
///
/// # Example
///
/// ```
/// use mufc::store::InputTransform;
///
/// let t = InputTransform::uniform(vec![10.0, -2.0], 0.05)?;
/// assert_eq!(t.apply(&[20.0, 8.0]), vec![0.5, 0.5]);
/// assert_eq!(t.invert(&[0.5, 0.5]), vec![20.0, 8.0]);
/// // A scale must be finite and positive, one per coordinate.
/// assert!(InputTransform::new(vec![0.0, 0.0], vec![1.0, 0.0]).is_err());
/// assert!(InputTransform::new(vec![0.0], vec![1.0, 1.0]).is_err());
/// # Ok::<(), mufc::store::StoreError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct InputTransform {
    offset: Vec<f64>,
    scale: Vec<f64>,
}

impl InputTransform {
    /// The map with a scale per coordinate.
    ///
    /// # Errors
    ///
    /// [`StoreError::InvalidTransform`] for no coordinate, lengths that
    /// differ, an offset that is not finite or a scale that is not finite
    /// and positive.
    pub fn new(offset: Vec<f64>, scale: Vec<f64>) -> Result<Self, StoreError> {
        let bad = |reason: String| Err(StoreError::InvalidTransform { reason });
        if offset.is_empty() {
            return bad("it has no coordinate".into());
        }
        if offset.len() != scale.len() {
            return bad(format!(
                "{} offsets for {} scales",
                offset.len(),
                scale.len()
            ));
        }
        if let Some(i) = offset.iter().position(|o| !o.is_finite()) {
            return bad(format!("the offset of coordinate {i} is not finite"));
        }
        if let Some(i) = scale.iter().position(|s| !(s.is_finite() && *s > 0.0)) {
            return bad(format!(
                "the scale of coordinate {i} is not finite and positive"
            ));
        }
        Ok(Self { offset, scale })
    }

    /// The map with one scale for every coordinate.
    ///
    /// # Errors
    ///
    /// As [`Self::new`].
    pub fn uniform(offset: Vec<f64>, scale: f64) -> Result<Self, StoreError> {
        let scales = vec![scale; offset.len()];
        Self::new(offset, scales)
    }

    /// The map checked again (a deserialized one comes from a file).
    pub(super) fn checked(self) -> Result<Self, StoreError> {
        Self::new(self.offset, self.scale)
    }

    /// The dimension.
    pub fn dim(&self) -> usize {
        self.offset.len()
    }

    /// The offsets.
    pub fn offset(&self) -> &[f64] {
        &self.offset
    }

    /// The scales.
    pub fn scale(&self) -> &[f64] {
        &self.scale
    }

    /// `x` in the model's coordinates (`x` has [`Self::dim`] coordinates:
    /// extra ones are ignored, missing ones are missing in the result).
    pub fn apply(&self, x: &[f64]) -> Vec<f64> {
        x.iter()
            .zip(self.offset.iter().zip(&self.scale))
            .map(|(x, (o, s))| (x - o) * s)
            .collect()
    }

    /// `y`, in the model's coordinates, back in the data's.
    pub fn invert(&self, y: &[f64]) -> Vec<f64> {
        y.iter()
            .zip(self.offset.iter().zip(&self.scale))
            .map(|(y, (o, s))| y / s + o)
            .collect()
    }
}
