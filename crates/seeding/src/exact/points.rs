//! The model's own copy of its data: coordinates on the fixed-point grid,
//! ids and weights, in an order of its own (positions follow swap-removals
//! and appends; nothing the model computes depends on them).

use std::collections::HashMap;

use super::fixed::{MAX_DIM, from_fixed, to_fixed};
use crate::{Dataset, PointId, SeedingError};

#[derive(Clone, Debug)]
pub(crate) struct Points {
    dim: usize,
    /// Rounded coordinates, point after point.
    coords: Vec<f64>,
    ids: Vec<PointId>,
    weights: Vec<u64>,
    index: HashMap<PointId, usize>,
}

/// Rounds the coordinates of the point at `pos` of `data` to the grid.
pub(crate) fn rounded_point(data: &Dataset, pos: usize) -> Result<Vec<f64>, SeedingError> {
    data.point(pos)
        .iter()
        .enumerate()
        .map(|(axis, &value)| {
            to_fixed(value)
                .map(from_fixed)
                .ok_or(SeedingError::OutOfFixedRange {
                    id: data.id(pos),
                    axis,
                    value,
                })
        })
        .collect()
}

impl Points {
    pub(crate) fn from_dataset(data: &Dataset) -> Result<Self, SeedingError> {
        if data.dim() > MAX_DIM {
            return Err(SeedingError::InvalidParameter {
                name: "dimension",
                value: data.dim() as f64,
            });
        }
        let mut coords = Vec::with_capacity(data.coords().len());
        for pos in 0..data.len() {
            coords.extend(rounded_point(data, pos)?);
        }
        let index = data
            .ids()
            .iter()
            .enumerate()
            .map(|(p, &id)| (id, p))
            .collect();
        Ok(Self {
            dim: data.dim(),
            coords,
            ids: data.ids().to_vec(),
            weights: data.weights().to_vec(),
            index,
        })
    }

    pub(crate) fn dim(&self) -> usize {
        self.dim
    }

    pub(crate) fn len(&self) -> usize {
        self.ids.len()
    }

    pub(crate) fn coords(&self) -> &[f64] {
        &self.coords
    }

    pub(crate) fn point(&self, pos: usize) -> &[f64] {
        &self.coords[pos * self.dim..(pos + 1) * self.dim]
    }

    pub(crate) fn ids(&self) -> &[PointId] {
        &self.ids
    }

    pub(crate) fn weights(&self) -> &[u64] {
        &self.weights
    }

    pub(crate) fn position(&self, id: PointId) -> Option<usize> {
        self.index.get(&id).copied()
    }

    pub(crate) fn set_weight(&mut self, pos: usize, w: u64) {
        self.weights[pos] = w;
    }

    /// Removes the point at `pos` by moving the last one into its slot.
    pub(crate) fn swap_remove(&mut self, pos: usize) {
        let d = self.dim;
        let last = self.ids.len() - 1;
        self.index.remove(&self.ids[pos]);
        if pos != last {
            self.coords.copy_within(last * d..(last + 1) * d, pos * d);
            self.index.insert(self.ids[last], pos);
        }
        self.coords.truncate(last * d);
        self.ids.swap_remove(pos);
        self.weights.swap_remove(pos);
    }

    /// Appends a point (already on the grid, id not present).
    pub(crate) fn push(&mut self, id: PointId, x: &[f64], w: u64) {
        self.index.insert(id, self.ids.len());
        self.ids.push(id);
        self.coords.extend_from_slice(x);
        self.weights.push(w);
    }

    /// The data as a [`Dataset`] (weighted), in the model's order.
    pub(crate) fn to_dataset(&self) -> Result<Dataset, SeedingError> {
        let m = nalgebra::DMatrix::from_column_slice(self.dim, self.len(), &self.coords);
        Dataset::with_weights(m, self.ids.clone(), self.weights.clone())
    }
}
