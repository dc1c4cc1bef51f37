//! Serialization of [`Quantizer`] and [`BoxTransform`] (feature `serde`):
//! only the defining parameters are stored, and loading validates them
//! through the constructors.

use serde::{Deserialize, Deserializer, Serialize, Serializer, de::Error as _};

use super::grid::Quantizer;
use super::transform::BoxTransform;

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
