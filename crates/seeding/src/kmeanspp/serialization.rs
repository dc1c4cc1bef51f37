//! Serialization of [`Seeding`] (feature `serde`).

use serde::{Deserialize, Deserializer, Serialize, Serializer, de::Error as _};

use super::fitted::Seeding;
use super::state::State;
use crate::{Dataset, Metric, PointId};

/// Only the data, the seeds and the sampler are stored; everything else
/// is recomputed (and checked) on loading.
#[derive(Serialize)]
struct ReprRef<'a, M, S> {
    metric: &'a M,
    k: usize,
    data: &'a Dataset,
    seeds: &'a [PointId],
    sampler: &'a S,
}

#[derive(Deserialize)]
struct Repr<M, S> {
    metric: M,
    k: usize,
    data: Dataset,
    seeds: Vec<PointId>,
    sampler: S,
}

impl<M: Metric + Serialize, S: Serialize> Serialize for Seeding<M, S> {
    fn serialize<Z: Serializer>(&self, s: Z) -> Result<Z::Ok, Z::Error> {
        ReprRef {
            metric: &self.state.metric,
            k: self.state.k,
            data: &self.state.data,
            seeds: &self.state.seed_ids,
            sampler: &self.sampler,
        }
        .serialize(s)
    }
}

impl<'de, M: Metric + Deserialize<'de>, S: Deserialize<'de>> Deserialize<'de> for Seeding<M, S> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let r = Repr::<M, S>::deserialize(d)?;
        let state = State::restore(r.metric, r.k, r.data, r.seeds).map_err(D::Error::custom)?;
        Ok(Self {
            state,
            sampler: r.sampler,
        })
    }
}
