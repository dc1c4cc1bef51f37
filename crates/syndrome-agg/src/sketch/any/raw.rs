//! [`RawSketch`] for an [`AnySketch`]: its elements as canonical
//! integers (computed, never kept), and the frames and masks it reads and
//! adds on the concrete sketch's own elements.

use std::borrow::Cow;

use masked_sum::RoundContext;
use masked_sum::masking::MaskVector;
use num_bigint::BigUint;

use super::params::{ParamsInner, ValidAnyParams, canon, uncanon};
use super::{AnySketch, SketchInner};
use crate::error::SketchResult;
use crate::sketch::field::Sketch;
use crate::sketch::integer::IntegerSketch;
use crate::sketch::partitioned::PartitionedSketch;
use crate::sketch::wide::WideSketch;
use crate::sketch::{LinearSketch, RawSketch};
use crate::wire::Frame;

/// The field elements of a canonical mask, for a concrete field sketch.
fn native<F: field::FiniteField>(
    f: &F,
    mask: &MaskVector<BigUint>,
) -> SketchResult<MaskVector<F::Elem>> {
    Ok(MaskVector(uncanon(f, &mask.0)?))
}

impl RawSketch for AnySketch {
    /// The canonical elements, computed.
    fn elements(&self) -> Cow<'_, [BigUint]> {
        Cow::Owned(match &self.inner {
            SketchInner::Word(s) => canon(s.field(), &s.elements()),
            SketchInner::F127(s) => canon(s.field(), &s.elements()),
            SketchInner::Big(s) => canon(s.field(), &s.elements()),
            SketchInner::Wide(s) => canon(s.params().field(), &s.elements()),
            SketchInner::Integer(s) => s.elements().into_owned(),
            SketchInner::Partitioned(s) => canon(s.field(), &s.elements()),
        })
    }

    fn into_elements(self) -> Vec<BigUint> {
        self.elements().into_owned()
    }

    fn from_elements(params: &ValidAnyParams, elements: Vec<BigUint>) -> SketchResult<Self> {
        let inner = match &params.inner {
            ParamsInner::Word(p) => {
                SketchInner::Word(Sketch::from_elements(p, uncanon(p.field(), &elements)?)?)
            }
            ParamsInner::F127(p) => {
                SketchInner::F127(Sketch::from_elements(p, uncanon(p.field(), &elements)?)?)
            }
            ParamsInner::Big(p) => {
                SketchInner::Big(Sketch::from_elements(p, uncanon(p.field(), &elements)?)?)
            }
            ParamsInner::Wide(p) => SketchInner::Wide(WideSketch::from_elements(
                p,
                uncanon(p.field(), &elements)?,
            )?),
            ParamsInner::Integer(p) => {
                SketchInner::Integer(IntegerSketch::from_elements(p, elements)?)
            }
            ParamsInner::Partitioned(p) => SketchInner::Partitioned(
                PartitionedSketch::from_elements(p, uncanon(p.field(), &elements)?)?,
            ),
        };
        Ok(Self::wrap(params, inner))
    }

    /// The concrete sketch's frame, from its own elements.
    fn frame_as(&self, masked: bool, client_id: u64, ctx: &RoundContext) -> Frame {
        each!(&self.inner, s => s.frame_as(masked, client_id, ctx))
    }

    /// The concrete sketch a frame carries, read into its own elements.
    fn parse_as(params: &ValidAnyParams, masked: bool, frame: &Frame) -> SketchResult<Self> {
        let inner = build!(&params.inner, p, S => S::parse_as(p, masked, frame)?);
        Ok(Self::wrap(params, inner))
    }

    /// The mask's canonical residues as the concrete field's elements,
    /// added on the concrete sketch.
    fn add_mask(&mut self, mask: &MaskVector<BigUint>) -> SketchResult<()> {
        match &mut self.inner {
            SketchInner::Word(s) => s.add_mask(&native(s.field(), mask)?),
            SketchInner::F127(s) => s.add_mask(&native(s.field(), mask)?),
            SketchInner::Big(s) => s.add_mask(&native(s.field(), mask)?),
            SketchInner::Wide(s) => {
                let m = native(s.params().field(), mask)?;
                s.add_mask(&m)
            }
            SketchInner::Integer(s) => s.add_mask(mask),
            SketchInner::Partitioned(s) => s.add_mask(&native(s.field(), mask)?),
        }
    }
}
