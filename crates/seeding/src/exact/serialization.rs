//! Serialization of [`ExactKMeans`] and [`ExactModel`] (feature `serde`).

use serde::{Deserialize, Deserializer, Serialize, Serializer, de::Error as _};

use super::config::ExactKMeans;
use super::model::ExactModel;
use crate::{Dataset, KMeansParams, SeedingError};

/// The stored shape of [`ExactKMeans`]: the flat fields of before the
/// parameters were shared with [`crate::KMeans`], so that saved states
/// still load. Loading validates.
#[derive(Serialize, Deserialize)]
pub(super) struct ParamsRepr {
    k: usize,
    tolerance: f64,
    max_iterations: usize,
    restarts: usize,
    accelerate: bool,
}

impl From<ExactKMeans> for ParamsRepr {
    fn from(e: ExactKMeans) -> Self {
        let p = e.params();
        Self {
            k: p.k(),
            tolerance: p.tolerance(),
            max_iterations: p.max_iterations(),
            restarts: p.restarts(),
            accelerate: e.accelerates(),
        }
    }
}

// Written here rather than derived on the type, so that the parameters'
// file does not name this one (no module circle).
impl Serialize for ExactKMeans {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        ParamsRepr::from(self.clone()).serialize(s)
    }
}

impl<'de> Deserialize<'de> for ExactKMeans {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Self::try_from(ParamsRepr::deserialize(d)?).map_err(D::Error::custom)
    }
}

impl TryFrom<ParamsRepr> for ExactKMeans {
    type Error = SeedingError;

    fn try_from(r: ParamsRepr) -> Result<Self, SeedingError> {
        let params = KMeansParams::new(r.k)
            .tolerance(r.tolerance)
            .max_iterations(r.max_iterations)
            .restarts(r.restarts)
            .validate()?;
        Ok(Self::new(params).accelerate(r.accelerate))
    }
}

/// Only the parameters, the seed and the (rounded) data are stored:
/// the traces would take 8 bytes per point and iteration. Loading
/// refits, which gives the same model bit for bit.
#[derive(Serialize)]
struct ReprRef<'a> {
    params: &'a ExactKMeans,
    seed: u64,
    initial: Option<&'a [f64]>,
    data: &'a Dataset,
}

#[derive(Deserialize)]
struct Repr {
    params: ExactKMeans,
    seed: u64,
    initial: Option<Vec<f64>>,
    data: Dataset,
}

impl Serialize for ExactModel {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let data = self.to_dataset().map_err(serde::ser::Error::custom)?;
        ReprRef {
            params: &self.params,
            seed: self.seed,
            initial: self.initial.as_deref(),
            data: &data,
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for ExactModel {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let r = Repr::deserialize(d)?;
        let res = match r.initial {
            None => r.params.fit(&r.data, r.seed),
            Some(c) => {
                let dim = r.data.dim();
                if c.len() % dim != 0 {
                    return Err(D::Error::custom(SeedingError::InvalidState(
                        "initial centroids do not match the dimension",
                    )));
                }
                let m = nalgebra::DMatrix::from_vec(dim, c.len() / dim, c);
                r.params.fit_from(&r.data, m.as_view(), r.seed)
            }
        };
        res.map_err(D::Error::custom)
    }
}
