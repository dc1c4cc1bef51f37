//! Points with stable ids and optional integer weights.

use std::collections::{HashMap, HashSet};

use nalgebra::{DMatrix, DMatrixView};

use crate::SeedingError;
use crate::point_id::PointId;

/// Points in R^d, one per column of a d x n matrix (column-major storage,
/// so each point is one contiguous slice), each with a unique [`PointId`]
/// and a positive integer weight (1 when the data set is unweighted).
///
/// A weighted point counts as `weight` copies of itself, as in Appendix I
/// of the paper: it is that many times as likely to be sampled and adds its
/// weight to the size of its cluster.
///
/// Removing points moves the last column into each freed slot, so
/// positions are not stable across removals; ids are.
///
/// # Example
///
/// ```
/// use nalgebra::DMatrix;
/// use seeding::{Dataset, PointId};
///
/// // Three points in R^2, as columns.
/// let m = DMatrix::from_column_slice(2, 3, &[0.0, 0.0, 1.0, 0.0, 5.0, 5.0]);
/// let mut data = Dataset::with_weights(m, vec![PointId(10), PointId(11), PointId(12)], vec![1, 2, 3])?;
/// assert_eq!(data.total_weight(), 6);
/// data.remove(&[PointId(11)])?;
/// assert_eq!(data.len(), 2);
/// assert!(data.remove(&[PointId(11)]).is_err()); // already gone: nothing changes
/// assert_eq!(data.point(data.position(PointId(12)).unwrap()), &[5.0, 5.0]);
/// # Ok::<(), seeding::SeedingError>(())
/// ```
#[derive(Clone, Debug)]
pub struct Dataset {
    points: DMatrix<f64>,
    ids: Vec<PointId>,
    weights: Vec<u64>,
    weighted: bool,
    index: HashMap<PointId, usize>,
    /// The sum of `weights`, kept so that appending checks it in O(1).
    total: u64,
}

impl PartialEq for Dataset {
    fn eq(&self, other: &Self) -> bool {
        // `index` is derived from `ids`.
        self.points == other.points
            && self.ids == other.ids
            && self.weights == other.weights
            && self.weighted == other.weighted
    }
}

impl Dataset {
    /// The largest coordinate magnitude accepted, 2^400. With it, every
    /// squared distance times every weight stays far below `f64::MAX` for
    /// any dimension up to 2^40, so costs never overflow.
    pub const MAX_ABS_COORD: f64 = 2.582_249_878_086_908_6e120;

    /// Unweighted points with ids `0..n`.
    ///
    /// # Errors
    ///
    /// [`SeedingError::ZeroDimension`] for a matrix with no rows and
    /// [`SeedingError::InvalidCoordinate`] for a coordinate that is not
    /// finite or exceeds [`Self::MAX_ABS_COORD`].
    ///
    /// # Example
    ///
    /// ```
    /// use nalgebra::DMatrix;
    /// use seeding::{Dataset, PointId};
    ///
    /// let data = Dataset::new(DMatrix::from_column_slice(1, 2, &[0.5, -0.5]))?;
    /// assert_eq!(data.ids(), &[PointId(0), PointId(1)]);
    /// assert!(Dataset::new(DMatrix::from_column_slice(1, 1, &[f64::NAN])).is_err());
    /// # Ok::<(), seeding::SeedingError>(())
    /// ```
    pub fn new(points: DMatrix<f64>) -> Result<Self, SeedingError> {
        let ids = (0..points.ncols() as u64).map(PointId).collect();
        Self::with_ids(points, ids)
    }

    /// Unweighted points with the given ids.
    ///
    /// # Errors
    ///
    /// As [`Self::new`], plus [`SeedingError::LengthMismatch`] when there is
    /// not one id per column and [`SeedingError::DuplicateId`].
    ///
    /// # Example
    ///
    /// ```
    /// use nalgebra::DMatrix;
    /// use seeding::{Dataset, PointId, SeedingError};
    ///
    /// let m = DMatrix::from_column_slice(1, 2, &[0.0, 1.0]);
    /// let err = Dataset::with_ids(m, vec![PointId(3), PointId(3)]).unwrap_err();
    /// assert_eq!(err, SeedingError::DuplicateId(PointId(3)));
    /// ```
    pub fn with_ids(points: DMatrix<f64>, ids: Vec<PointId>) -> Result<Self, SeedingError> {
        let n = ids.len();
        Self::build(points, ids, vec![1; n], false)
    }

    /// Weighted points: point `i` counts as `weights[i]` copies of itself.
    ///
    /// # Errors
    ///
    /// As [`Self::with_ids`], plus [`SeedingError::ZeroWeight`] and
    /// [`SeedingError::WeightOverflow`] when the total weight exceeds
    /// `u64::MAX`.
    ///
    /// # Example
    ///
    /// ```
    /// use nalgebra::DMatrix;
    /// use seeding::{Dataset, PointId};
    ///
    /// let m = DMatrix::from_column_slice(1, 2, &[0.0, 1.0]);
    /// let data = Dataset::with_weights(m, vec![PointId(0), PointId(1)], vec![4, 1])?;
    /// assert_eq!(data.weight(0), 4);
    /// assert!(data.is_weighted());
    /// # Ok::<(), seeding::SeedingError>(())
    /// ```
    pub fn with_weights(
        points: DMatrix<f64>,
        ids: Vec<PointId>,
        weights: Vec<u64>,
    ) -> Result<Self, SeedingError> {
        Self::build(points, ids, weights, true)
    }

    /// An empty data set of dimension `dim`.
    ///
    /// # Errors
    ///
    /// [`SeedingError::ZeroDimension`] when `dim` is 0.
    ///
    /// # Example
    ///
    /// ```
    /// let data = seeding::Dataset::empty(3)?;
    /// assert!(data.is_empty());
    /// assert_eq!(data.dim(), 3);
    /// # Ok::<(), seeding::SeedingError>(())
    /// ```
    pub fn empty(dim: usize) -> Result<Self, SeedingError> {
        Self::build(DMatrix::zeros(dim, 0), Vec::new(), Vec::new(), false)
    }

    fn build(
        points: DMatrix<f64>,
        ids: Vec<PointId>,
        weights: Vec<u64>,
        weighted: bool,
    ) -> Result<Self, SeedingError> {
        let (dim, n) = points.shape();
        if dim == 0 {
            return Err(SeedingError::ZeroDimension);
        }
        if ids.len() != n {
            return Err(SeedingError::LengthMismatch {
                what: "ids per column",
                expected: n,
                found: ids.len(),
            });
        }
        if weights.len() != n {
            return Err(SeedingError::LengthMismatch {
                what: "weights per column",
                expected: n,
                found: weights.len(),
            });
        }
        for (point, col) in points.as_slice().chunks_exact(dim).enumerate() {
            for (axis, &value) in col.iter().enumerate() {
                if value.is_nan() || value.abs() > Self::MAX_ABS_COORD {
                    return Err(SeedingError::InvalidCoordinate { point, axis, value });
                }
            }
        }
        let mut total: u64 = 0;
        for (point, &w) in weights.iter().enumerate() {
            if w == 0 {
                return Err(SeedingError::ZeroWeight { point });
            }
            total = total.checked_add(w).ok_or(SeedingError::WeightOverflow)?;
        }
        let mut index = HashMap::with_capacity(n);
        for (pos, &id) in ids.iter().enumerate() {
            if index.insert(id, pos).is_some() {
                return Err(SeedingError::DuplicateId(id));
            }
        }
        Ok(Self {
            points,
            ids,
            weights,
            weighted,
            index,
            total,
        })
    }

    /// The dimension d.
    pub fn dim(&self) -> usize {
        self.points.nrows()
    }

    /// The number of points n (not the total weight).
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Whether there are no points.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// The points as the columns of a d x n matrix.
    pub fn points(&self) -> &DMatrix<f64> {
        &self.points
    }

    /// The points as a view (for functions that take views of centres).
    pub fn view(&self) -> DMatrixView<'_, f64> {
        self.points.as_view()
    }

    /// Whether every point lies in the quantizer's box `[-1/2, 1/2]^d`
    /// (see [`Quantizer`](crate::Quantizer)), where the federation's data
    /// must be before it is binned.
    ///
    /// ```
    /// use nalgebra::DMatrix;
    /// use seeding::{Dataset, SeedingError};
    ///
    /// let inside = Dataset::new(DMatrix::from_column_slice(2, 2, &[0.5, -0.5, 0.1, 0.2]))?;
    /// inside.check_in_box()?;
    /// let outside = Dataset::new(DMatrix::from_column_slice(2, 2, &[0.1, 0.2, 0.3, 7.0]))?;
    /// assert!(matches!(
    ///     outside.check_in_box(),
    ///     Err(SeedingError::OutsideBox { point: Some(1), axis: 1, .. })
    /// ));
    /// # Ok::<(), SeedingError>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`SeedingError::OutsideBox`] naming the first point outside (its
    /// position), the axis and the coordinate.
    pub fn check_in_box(&self) -> Result<(), SeedingError> {
        for pos in 0..self.len() {
            if let Some((axis, &value)) =
                (self.point(pos).iter().enumerate()).find(|(_, x)| !(-0.5..=0.5).contains(*x))
            {
                return Err(SeedingError::OutsideBox {
                    point: Some(pos),
                    axis,
                    value,
                });
            }
        }
        Ok(())
    }

    /// The coordinates of the point at position `pos`.
    ///
    /// # Panics
    ///
    /// If `pos >= self.len()`.
    pub fn point(&self, pos: usize) -> &[f64] {
        let d = self.dim();
        &self.points.as_slice()[pos * d..(pos + 1) * d]
    }

    /// All coordinates, point after point (column-major).
    pub fn coords(&self) -> &[f64] {
        self.points.as_slice()
    }

    /// The ids, by position.
    pub fn ids(&self) -> &[PointId] {
        &self.ids
    }

    /// The id of the point at position `pos`.
    ///
    /// # Panics
    ///
    /// If `pos >= self.len()`.
    pub fn id(&self, pos: usize) -> PointId {
        self.ids[pos]
    }

    /// The weights, by position (all 1 for an unweighted data set).
    pub fn weights(&self) -> &[u64] {
        &self.weights
    }

    /// The weight of the point at position `pos`.
    ///
    /// # Panics
    ///
    /// If `pos >= self.len()`.
    pub fn weight(&self, pos: usize) -> u64 {
        self.weights[pos]
    }

    /// Whether the data set was built with explicit weights.
    pub fn is_weighted(&self) -> bool {
        self.weighted
    }

    /// The sum of the weights (fits in a `u64`, checked at construction).
    pub fn total_weight(&self) -> u64 {
        self.total
    }

    /// The current position of a point, if it is present.
    pub fn position(&self, id: PointId) -> Option<usize> {
        self.index.get(&id).copied()
    }

    /// Whether a point is present.
    pub fn contains(&self, id: PointId) -> bool {
        self.index.contains_key(&id)
    }

    /// The positions of `ids`, checking that each is present and named once.
    ///
    /// # Errors
    ///
    /// [`SeedingError::UnknownId`] or [`SeedingError::RepeatedId`].
    pub fn positions_of(&self, ids: &[PointId]) -> Result<Vec<usize>, SeedingError> {
        let mut seen = HashSet::with_capacity(ids.len());
        ids.iter()
            .map(|&id| {
                let pos = self.position(id).ok_or(SeedingError::UnknownId(id))?;
                if !seen.insert(id) {
                    return Err(SeedingError::RepeatedId(id));
                }
                Ok(pos)
            })
            .collect()
    }

    /// Removes the named points in O(|ids| d). On error nothing changes.
    ///
    /// # Errors
    ///
    /// [`SeedingError::UnknownId`] or [`SeedingError::RepeatedId`].
    pub fn remove(&mut self, ids: &[PointId]) -> Result<(), SeedingError> {
        let positions = self.positions_of(ids)?;
        self.swap_remove_positions(positions, |_, _| {});
        Ok(())
    }

    /// Appends the points of `other` after these, in its order, in
    /// O(|other| d) amortized. The result is weighted if either was. On
    /// error nothing changes.
    ///
    /// # Errors
    ///
    /// [`SeedingError::LengthMismatch`] when the dimensions differ,
    /// [`SeedingError::DuplicateId`] for an id already here, and
    /// [`SeedingError::WeightOverflow`] when the total weight would pass
    /// `u64::MAX`.
    ///
    /// # Example
    ///
    /// ```
    /// use nalgebra::DMatrix;
    /// use seeding::{Dataset, PointId};
    ///
    /// let mut data = Dataset::new(DMatrix::from_column_slice(1, 2, &[0.0, 1.0]))?;
    /// let more = Dataset::with_ids(DMatrix::from_column_slice(1, 1, &[2.0]), vec![PointId(7)])?;
    /// data.append(&more)?;
    /// assert_eq!(data.ids(), &[PointId(0), PointId(1), PointId(7)]);
    /// assert!(data.append(&more).is_err()); // id 7 is here already: nothing changes
    /// assert_eq!(data.len(), 3);
    /// # Ok::<(), seeding::SeedingError>(())
    /// ```
    pub fn append(&mut self, other: &Self) -> Result<(), SeedingError> {
        self.check_append(other)?;
        self.append_checked(other);
        Ok(())
    }

    /// [`Self::append`] once [`Self::check_append`] passed.
    pub(crate) fn append_checked(&mut self, other: &Self) {
        let d = self.dim();
        let points = core::mem::replace(&mut self.points, DMatrix::zeros(d, 0));
        let mut coords: Vec<f64> = points.data.into();
        coords.extend_from_slice(other.coords());
        for (i, &id) in other.ids.iter().enumerate() {
            self.index.insert(id, self.ids.len() + i);
        }
        self.ids.extend_from_slice(&other.ids);
        self.weights.extend_from_slice(&other.weights);
        // Checked above.
        self.total = self.total.saturating_add(other.total);
        self.weighted |= other.weighted;
        self.points = DMatrix::from_vec(d, self.ids.len(), coords);
    }

    /// The errors [`Self::append`] would give, without appending.
    pub(crate) fn check_append(&self, other: &Self) -> Result<(), SeedingError> {
        if other.dim() != self.dim() {
            return Err(SeedingError::LengthMismatch {
                what: "coordinates per appended point",
                expected: self.dim(),
                found: other.dim(),
            });
        }
        if let Some(&id) = other.ids.iter().find(|id| self.index.contains_key(id)) {
            return Err(SeedingError::DuplicateId(id));
        }
        self.total
            .checked_add(other.total)
            .ok_or(SeedingError::WeightOverflow)?;
        Ok(())
    }

    /// A new data set without the named points, the others kept in their
    /// order (unlike [`Self::remove`], this copies every point).
    ///
    /// # Errors
    ///
    /// [`SeedingError::UnknownId`] or [`SeedingError::RepeatedId`].
    pub fn without(&self, ids: &[PointId]) -> Result<Self, SeedingError> {
        let gone: HashSet<usize> = self.positions_of(ids)?.into_iter().collect();
        let keep: Vec<usize> = (0..self.len()).filter(|p| !gone.contains(p)).collect();
        self.at_positions(&keep)
    }

    /// A new data set of the named points alone, in this set's order (the
    /// counterpart of [`Self::without`]), for instance the records that
    /// arrive later.
    ///
    /// # Errors
    ///
    /// [`SeedingError::UnknownId`] or [`SeedingError::RepeatedId`].
    ///
    /// # Example
    ///
    /// ```
    /// use nalgebra::DMatrix;
    /// use seeding::{Dataset, PointId};
    ///
    /// let data = Dataset::new(DMatrix::from_column_slice(1, 4, &[0.0, 1.0, 2.0, 3.0]))?;
    /// let later = data.only(&[PointId(3), PointId(1)])?;
    /// assert_eq!(later.ids(), &[PointId(1), PointId(3)]);
    /// assert!(data.only(&[PointId(9)]).is_err());
    /// # Ok::<(), seeding::SeedingError>(())
    /// ```
    pub fn only(&self, ids: &[PointId]) -> Result<Self, SeedingError> {
        let mut keep = self.positions_of(ids)?;
        keep.sort_unstable();
        self.at_positions(&keep)
    }

    /// The points at `keep` (positions in range, ascending), a new set.
    fn at_positions(&self, keep: &[usize]) -> Result<Self, SeedingError> {
        let d = self.dim();
        let mut coords = Vec::with_capacity(keep.len() * d);
        for &p in keep {
            coords.extend_from_slice(self.point(p));
        }
        let points = DMatrix::from_vec(d, keep.len(), coords);
        let ids = keep.iter().map(|&p| self.ids[p]).collect();
        let weights = keep.iter().map(|&p| self.weights[p]).collect();
        Self::build(points, ids, weights, self.weighted)
    }

    /// Removes the points at `positions` (distinct and in range, checked by
    /// the caller) by moving the last point into each freed slot;
    /// `moved(from, to)` is called for every point that changes position,
    /// so that arrays kept alongside can follow.
    pub(crate) fn swap_remove_positions(
        &mut self,
        mut positions: Vec<usize>,
        mut moved: impl FnMut(usize, usize),
    ) {
        // Highest first: every slot above the current one that was to be
        // removed is gone already, so the last point is never one of them.
        positions.sort_unstable_by(|a, b| b.cmp(a));
        let d = self.dim();
        let points = core::mem::replace(&mut self.points, DMatrix::zeros(d, 0));
        let mut coords: Vec<f64> = points.data.into();
        for p in positions {
            let last = self.ids.len() - 1;
            self.index.remove(&self.ids[p]);
            if p != last {
                coords.copy_within(last * d..(last + 1) * d, p * d);
                self.index.insert(self.ids[last], p);
                moved(last, p);
            }
            coords.truncate(last * d);
            self.ids.swap_remove(p);
            self.total -= self.weights.swap_remove(p);
        }
        self.points = DMatrix::from_vec(d, self.ids.len(), coords);
    }
}

#[cfg(feature = "serde")]
mod serde_impl {
    use super::*;
    use serde::{Deserialize, Deserializer, Serialize, Serializer, de::Error as _};

    /// The wire form: coordinates point after point, validated on the way
    /// in exactly as the constructors validate.
    #[derive(Serialize, Deserialize)]
    struct Repr {
        dim: usize,
        coords: Vec<f64>,
        ids: Vec<PointId>,
        weights: Option<Vec<u64>>,
    }

    impl Serialize for Dataset {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            Repr {
                dim: self.dim(),
                coords: self.coords().to_vec(),
                ids: self.ids.clone(),
                weights: self.weighted.then(|| self.weights.clone()),
            }
            .serialize(s)
        }
    }

    impl<'de> Deserialize<'de> for Dataset {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            let r = Repr::deserialize(d)?;
            let n = r.ids.len();
            if r.dim == 0 {
                return Err(D::Error::custom(SeedingError::ZeroDimension));
            }
            if r.dim.checked_mul(n) != Some(r.coords.len()) {
                return Err(D::Error::custom(SeedingError::LengthMismatch {
                    what: "coordinates (dim * ids)",
                    expected: r.dim.saturating_mul(n),
                    found: r.coords.len(),
                }));
            }
            let points = DMatrix::from_vec(r.dim, n, r.coords);
            let res = match r.weights {
                Some(w) => Self::with_weights(points, r.ids, w),
                None => Self::with_ids(points, r.ids),
            };
            res.map_err(D::Error::custom)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(v: &[u64]) -> Vec<PointId> {
        v.iter().copied().map(PointId).collect()
    }

    #[test]
    fn constructors_validate() {
        let m = DMatrix::from_column_slice(2, 2, &[0.0, 1.0, 2.0, 3.0]);
        assert_eq!(
            Dataset::with_ids(m.clone(), ids(&[1])),
            Err(SeedingError::LengthMismatch {
                what: "ids per column",
                expected: 2,
                found: 1
            })
        );
        assert_eq!(
            Dataset::with_weights(m.clone(), ids(&[1, 2]), vec![1, 0]),
            Err(SeedingError::ZeroWeight { point: 1 })
        );
        assert_eq!(
            Dataset::with_weights(m, ids(&[1, 2]), vec![u64::MAX, 1]),
            Err(SeedingError::WeightOverflow)
        );
        let bad = DMatrix::from_column_slice(2, 2, &[0.0, 1.0, f64::INFINITY, 3.0]);
        assert!(matches!(
            Dataset::new(bad),
            Err(SeedingError::InvalidCoordinate {
                point: 1,
                axis: 0,
                ..
            })
        ));
        let huge = DMatrix::from_column_slice(1, 1, &[1e121]);
        assert!(Dataset::new(huge).is_err());
        assert_eq!(
            Dataset::new(DMatrix::zeros(0, 3)),
            Err(SeedingError::ZeroDimension)
        );
    }

    #[test]
    fn removal_is_all_or_nothing() {
        let m = DMatrix::from_fn(2, 5, |r, c| (10 * c + r) as f64);
        let mut data = Dataset::with_ids(m, ids(&[0, 1, 2, 3, 4])).unwrap();
        let before = data.clone();
        assert_eq!(
            data.remove(&ids(&[1, 9])),
            Err(SeedingError::UnknownId(PointId(9)))
        );
        assert_eq!(
            data.remove(&ids(&[1, 1])),
            Err(SeedingError::RepeatedId(PointId(1)))
        );
        assert_eq!(data, before);
        data.remove(&ids(&[4, 1, 3])).unwrap();
        assert_eq!(data.len(), 2);
        for id in [0, 2] {
            let p = data.position(PointId(id)).unwrap();
            assert_eq!(data.point(p), &[(10 * id) as f64, (10 * id + 1) as f64]);
        }
        assert!(!data.contains(PointId(1)));
        let fresh = before.without(&ids(&[4, 1, 3])).unwrap();
        assert_eq!(fresh.ids(), &ids(&[0, 2]));
    }

    #[test]
    fn the_total_weight_follows_removals_and_appends() {
        let m = DMatrix::from_fn(1, 4, |_, c| c as f64);
        let mut data = Dataset::with_weights(m, ids(&[0, 1, 2, 3]), vec![1, 2, 3, 4]).unwrap();
        data.remove(&ids(&[1, 3])).unwrap();
        assert_eq!(data.total_weight(), 4);
        let more = Dataset::with_weights(DMatrix::from_element(1, 1, 9.0), ids(&[7]), vec![5]);
        data.append(&more.unwrap()).unwrap();
        assert_eq!(data.total_weight(), 9);
        assert_eq!(data.total_weight(), data.weights().iter().sum::<u64>());
        let heavy =
            Dataset::with_weights(DMatrix::from_element(1, 1, 9.0), ids(&[8]), vec![u64::MAX]);
        assert_eq!(
            data.append(&heavy.unwrap()),
            Err(SeedingError::WeightOverflow)
        );
        assert_eq!(data.total_weight(), 9);
    }
}
