//! The body of a saved federation, the postcard part of the file: what
//! is stored, written from references ([`ReprRef`]) and read into owned
//! values ([`Repr`]). The two must list the same fields, in the same order
//! and of the same types: that is the format.

use num_bigint::BigUint;
use seeding::{Dataset, PointId};
use serde::{Deserialize, Serialize};

use crate::{ClientId, FitReport, PendingRequest, RemovalReport, ValidConfig};

#[derive(Serialize)]
pub(super) struct ReprRef<'a> {
    pub(super) config: &'a ValidConfig,
    pub(super) dim: usize,
    pub(super) clients: Vec<(ClientId, &'a Dataset, &'a [PointId])>,
    pub(super) counts: Vec<(&'a BigUint, u64)>,
    pub(super) capacity: Option<usize>,
    pub(super) rounds: u64,
    pub(super) fit_report: &'a FitReport,
    pub(super) history: &'a [RemovalReport],
    pub(super) pending: &'a [PendingRequest],
}

#[derive(Deserialize)]
pub(crate) struct Repr {
    pub(crate) config: ValidConfig,
    pub(crate) dim: usize,
    pub(crate) clients: Vec<(ClientId, Dataset, Vec<PointId>)>,
    pub(crate) counts: Vec<(BigUint, u64)>,
    pub(crate) capacity: Option<usize>,
    pub(crate) rounds: u64,
    pub(crate) fit_report: FitReport,
    pub(crate) history: Vec<RemovalReport>,
    pub(crate) pending: Vec<PendingRequest>,
}
