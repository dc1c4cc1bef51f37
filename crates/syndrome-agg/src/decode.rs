//! Placeholder until the field algorithms land.
use field::FiniteField;

use crate::{Sketch, SketchResult, SparseVector};

impl<F: FiniteField> Sketch<F> {
    /// Decodes.
    ///
    /// # Errors
    ///
    /// Always, for now.
    pub fn decode(&self) -> SketchResult<SparseVector<F::Elem>> {
        Err(crate::error::invalid("not yet"))
    }
}
