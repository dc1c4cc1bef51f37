//! The figures of `mufc unlearn`'s rounds, which the command records
//! and its report sums.

use mufc::StageTimes;

/// What one removal round did and cost (a round applies the deferred
/// requests and the one that completed them).
#[derive(Clone, Debug)]
pub(super) struct Served {
    pub(super) removed: usize,
    pub(super) unlearn: StageTimes,
    pub(super) retrain: StageTimes,
    pub(super) reseeded: bool,
    pub(super) server: &'static str,
    pub(super) equal: Option<String>,
    pub(super) loss_ratio: f64,
    pub(super) dc_seconds: Option<f64>,
    /// The clients the round's aggregation included.
    pub(super) included: usize,
    /// The requests the round applied (deferred ones and the last).
    pub(super) requests: usize,
}

/// What the requests of a run left: its rounds, and whether the last one
/// was a `--flush`.
#[derive(Debug, Default)]
pub(super) struct Rounds {
    pub(super) served: Vec<Served>,
    pub(super) warnings: Vec<String>,
    pub(super) flushed: bool,
}
